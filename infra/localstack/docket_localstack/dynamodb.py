"""DynamoDB without DynamoDB Local.

Community LocalStack forwards DynamoDB to DynamoDB Local, a Java program it downloads on first use;
offline that fails. moto (bundled with LocalStack) implements the DynamoDB API in-process: conditional
writes, TransactWriteItems with CancellationReasons, GSIs/LSIs, Query/Scan and the TTL settings. This
provider declares no operation of its own, so every request falls through to moto.

What moto does not do, and AWS does: delete items whose TTL has passed (AWS does it lazily, within
days, so code must filter expired items anyway), and enforce provisioned throughput (throttling is
injected with the chaos rules instead).
"""

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.services.moto import MotoFallbackDispatcher
from localstack.services.plugins import Service


class MotoDynamoDBProvider(DynamodbApi):
    """Every operation dispatched to moto's DynamoDB backend."""


def create_service() -> Service:
    return Service.for_provider(MotoDynamoDBProvider(), dispatch_table_factory=MotoFallbackDispatcher)
