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
"""

import threading

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.forwarder import ForwardingFallbackDispatcher
from localstack.services.moto import _proxy_moto
from localstack.services.plugins import Service

_moto_lock = threading.Lock()


def serialized_moto(context, request):
    """Calls moto for one request while no other DynamoDB request is in moto."""
    with _moto_lock:
        return _proxy_moto(context, request)


class MotoDynamoDBProvider(DynamodbApi):
    """Every operation dispatched to moto's DynamoDB backend."""


def create_service() -> Service:
    return Service.for_provider(
        MotoDynamoDBProvider(),
        dispatch_table_factory=lambda provider: ForwardingFallbackDispatcher(
            provider, serialized_moto
        ),
    )
