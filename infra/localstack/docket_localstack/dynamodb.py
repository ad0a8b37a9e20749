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

moto answers every Query, of a table or of an index, from ``Table.all_items()``, which sorts every
item of the table (by Python-level key comparisons) and is then filtered down to the one partition
asked for; the sort is done again on the partition afterwards. The audit head that every append
reads is such a Query, on the table that holds every entry of every document, so each append cost
more the longer LocalStack ran: after the end-to-end suite, the soak's route calls queued behind
one another's Queries under the lock and ran past their 30 s timeout. Installed here instead
(``install_partition_query``): a Query of a table reads only its partition, and a Query of an
index reads the items unsorted (moto sorts what matches by the index's keys anyway).

The lock is fair (first come, first served: no request waits while later ones are served) and a
request that took longer than ``SLOW_REQUEST_SECONDS`` (waiting included) is logged, so that the
next such slowdown shows in the LocalStack log rather than as a Lambda timeout.
"""

import copy
import logging
import threading
import time
from typing import Any

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.services.moto import _proxy_moto
from localstack.services.plugins import Service

LOG = logging.getLogger(__name__)

SLOW_REQUEST_SECONDS = 1.0


class FairLock:
    """A lock that its waiters get in the order they asked for it (a ticket lock)."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    def __enter__(self) -> None:
        with self._turn:
            ticket = self._next_ticket
            self._next_ticket += 1
            while ticket != self._serving:
                self._turn.wait()

    def __exit__(self, *exc: object) -> None:
        with self._turn:
            self._serving += 1
            self._turn.notify_all()


_moto_lock = FairLock()


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


def _partition(table: Any, hash_key: Any) -> list:
    """The items of ``table`` under ``hash_key``, without looking at any other."""
    stored = table.items.get(hash_key)  # a defaultdict: .get() adds no empty partition
    if stored is None:
        return []
    return list(stored.values()) if table.range_key_attr else [stored]


def _unsorted(table: Any) -> list:
    """Every item of ``table``, in no particular order."""
    if table.range_key_attr:
        return [item for stored in table.items.values() for item in stored.values()]
    return list(table.items.values())


def install_partition_query() -> None:
    """Replaces the sort of the whole table that moto's Query starts with: a Query of the table
    reads its partition only; a Query of an index reads the items unsorted. The answer is the
    same (moto sorts and filters what it read), its cost no longer grows with the table."""
    from moto.dynamodb.models.table import Table

    if getattr(Table.query, "_docket_partition_query", False):
        return
    original = Table.query

    def query(
        self: Any,
        hash_key: Any,
        range_comparison: Any,
        range_objs: Any,
        limit: Any,
        exclusive_start_key: Any,
        scan_index_forward: Any,
        projection_expressions: Any,
        index_name: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        # moto's query reads self.all_items(); shadowed on the instance for this call only
        # (every request holds _moto_lock, so no other request sees the shadow).
        if index_name:
            self.all_items = lambda: _unsorted(self)
        else:
            self.all_items = lambda: _partition(self, hash_key)
        try:
            return original(
                self,
                hash_key,
                range_comparison,
                range_objs,
                limit,
                exclusive_start_key,
                scan_index_forward,
                projection_expressions,
                index_name,
                *args,
                **kwargs,
            )
        finally:
            del self.all_items

    query._docket_partition_query = True  # type: ignore[attr-defined]
    Table.query = query  # type: ignore[method-assign]


def serialized_moto(context, request):
    """Calls moto for one request while no other DynamoDB request is in moto; logs a slow one."""
    asked = time.monotonic()
    with _moto_lock:
        entered = time.monotonic()
        try:
            return _proxy_moto(context, request)
        finally:
            done = time.monotonic()
            if done - asked > SLOW_REQUEST_SECONDS:
                LOG.warning(
                    "dynamodb: slow request %s: %.2f s (%.2f s waiting for the lock)",
                    context.operation.name if context.operation else "?",
                    done - asked,
                    entered - asked,
                )


class MotoDynamoDBProvider(DynamodbApi):
    """Every operation dispatched to moto's DynamoDB backend."""


def create_service() -> Service:
    install_item_rollback()
    install_partition_query()
    return Service.for_provider(
        MotoDynamoDBProvider(),
        dispatch_table_factory=lambda provider: ForwardingFallbackDispatcher(
            provider, serialized_moto
        ),
    )
