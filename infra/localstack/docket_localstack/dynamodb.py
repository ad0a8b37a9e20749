"""DynamoDB without DynamoDB Local.

Community LocalStack forwards DynamoDB to DynamoDB Local, a Java program it downloads on first use;
offline that fails. moto (bundled with LocalStack) implements the DynamoDB API in-process:
conditional writes, TransactWriteItems with CancellationReasons, GSIs/LSIs, Query/Scan and the TTL
settings. This provider declares no operation of its own, so every request falls through to moto.

What moto does not do, and AWS does: delete items whose TTL has passed (AWS does it lazily, within
days, so code must filter expired items anyway), and enforce provisioned throughput (throttling is
injected with the chaos rules instead).

moto is not safe under concurrency: LocalStack serves requests on several threads, and moto checks a
ConditionExpression and applies the write without holding a lock, so two concurrent conditional
writes on one missing item both succeeded (found by the ledger's concurrent-claim test). DynamoDB
serializes the writes of an item; here every request goes to moto under one lock, which is
stricter and costs nothing that matters offline.

moto's TransactWriteItems backs up every table it names with ``copy.deepcopy`` before it writes, to
restore them if an item fails: its cost grows with everything stored in those tables (the audit
table holds every entry of every document), and it is paid under the lock above by every
transaction, so a long test run slowed every DynamoDB request until Lambdas timed out. Installed
here instead: the transaction keeps the tables and backs up only the items it names, and puts
those back when it fails (``install_item_rollback``).
"""

import copy
import threading
from typing import Any

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.services.moto import _proxy_moto
from localstack.services.plugins import Service

_moto_lock = threading.Lock()


class _KeepTables:
    """Stands in for the ``copy`` module inside moto's DynamoDB models: a deep copy of a table
    is the table itself (its items are backed up one by one instead); anything else is copied."""

    def __init__(self, table_type: type) -> None:
        self._table_type = table_type

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        if isinstance(value, self._table_type):
            return value
        return copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def _named_items(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple]:
    """(table, key, attributes or None) of every item a transaction names, as stored now."""
    saved = []
    for entry in transact_items:
        for op in entry.values():
            table_name = op.get("TableName") if isinstance(op, dict) else None
            if table_name not in backend.tables:
                continue
            table = backend.tables[table_name]
            try:
                if "Key" in op:
                    key = op["Key"]
                else:
                    attrs = op["Item"]
                    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                    if table.range_key_attr is not None:
                        key[table.range_key_attr] = attrs[table.range_key_attr]
                current = backend.get_item(table_name, key)
            except Exception:  # a malformed item: moto refuses the transaction before writing
                continue
            saved.append((table_name, key, current.to_json()["Attributes"] if current else None))
    return saved


def _restore(backend: Any, saved: list[tuple]) -> None:
    for table_name, key, attributes in reversed(saved):
        if attributes is not None:
            backend.put_item(table_name, attributes)
        elif backend.get_item(table_name, key) is not None:
            backend.delete_item(table_name, key)


def install_item_rollback() -> None:
    """Replaces moto's table-wide backup in TransactWriteItems by a backup of the named items."""
    from moto.dynamodb import models

    backend_type = models.DynamoDBBackend
    if getattr(backend_type.transact_write_items, "_docket_item_rollback", False):
        return
    models.copy = _KeepTables(models.Table)  # type: ignore[assignment]
    original = backend_type.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        saved = _named_items(self, transact_items)
        try:
            return original(self, transact_items)
        except Exception:
            _restore(self, saved)
            raise

    transact_write_items._docket_item_rollback = True  # type: ignore[attr-defined]
    backend_type.transact_write_items = transact_write_items  # type: ignore[method-assign]


def serialized_moto(context, request):
    """Calls moto for one request while no other DynamoDB request is in moto."""
    with _moto_lock:
        return _proxy_moto(context, request)


class MotoDynamoDBProvider(DynamodbApi):
    """Every operation dispatched to moto's DynamoDB backend."""


def create_service() -> Service:
    install_item_rollback()
    return Service.for_provider(
        MotoDynamoDBProvider(),
        dispatch_table_factory=lambda provider: ForwardingFallbackDispatcher(
            provider, serialized_moto
        ),
    )
