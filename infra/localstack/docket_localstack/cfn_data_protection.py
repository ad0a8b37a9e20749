"""Data-protection properties that LocalStack's CloudFormation resource providers drop.

LocalStack 2026.3's ``AWS::S3::Bucket`` provider creates the bucket with its versioning, CORS,
object lock, tags and website, and ignores ``LifecycleConfiguration``; its ``AWS::DynamoDB::Table``
provider ignores ``DeletionProtectionEnabled``. Deployed as they are, a local stack would not have
what the template says, and what ``tests/pipeline/infra.rs`` reads back from the deployed
resources. ``install`` wraps both providers' ``create``: once LocalStack reports the resource
created, the property is applied with the call CloudFormation makes on AWS
(``PutBucketLifecycleConfiguration``, ``UpdateTable``).

Updates are left alone: LocalStack implements neither provider's ``update`` (it logs a warning and
keeps the previous state), so a changed property reaches a local stack when the stack is created
anew (``make localstack-up`` starts with no state). LocalStack stores lifecycle rules but never
runs them: nothing expires locally.
"""

import logging
from collections.abc import Callable
from typing import Any

LOG = logging.getLogger(__name__)

# The keys of a CloudFormation lifecycle rule this module translates. Any other key (transitions,
# tag filters, dates, ...) is refused rather than silently dropped, as LocalStack would.
_RULE_KEYS = {
    "Id",
    "Status",
    "Prefix",
    "ExpirationInDays",
    "NoncurrentVersionExpiration",
    "AbortIncompleteMultipartUpload",
}


def lifecycle_rules(configuration: dict[str, Any]) -> list[dict[str, Any]]:
    """The S3 API's rules for a CloudFormation ``LifecycleConfiguration``.

    Numbers may arrive as strings (resolved parameters); the API wants integers.
    """
    rules = []
    for rule in configuration.get("Rules", []):
        unknown = set(rule) - _RULE_KEYS
        if unknown:
            raise ValueError(f"lifecycle rule keys not emulated locally: {sorted(unknown)}")
        out: dict[str, Any] = {
            "Status": rule["Status"],
            "Filter": {"Prefix": rule.get("Prefix", "")},
        }
        if "Id" in rule:
            out["ID"] = rule["Id"]
        if "ExpirationInDays" in rule:
            out["Expiration"] = {"Days": int(rule["ExpirationInDays"])}
        if noncurrent := rule.get("NoncurrentVersionExpiration"):
            out["NoncurrentVersionExpiration"] = {
                "NoncurrentDays": int(noncurrent["NoncurrentDays"])
            }
        if abort := rule.get("AbortIncompleteMultipartUpload"):
            out["AbortIncompleteMultipartUpload"] = {
                "DaysAfterInitiation": int(abort["DaysAfterInitiation"])
            }
        rules.append(out)
    return rules


def deletion_protected(model: dict[str, Any]) -> bool:
    """Whether a table's model asks for deletion protection (booleans may arrive as strings)."""
    return str(model.get("DeletionProtectionEnabled", False)).lower() == "true"


def _apply_bucket(request: Any, model: dict[str, Any]) -> None:
    if configuration := model.get("LifecycleConfiguration"):
        request.aws_client_factory.s3.put_bucket_lifecycle_configuration(
            Bucket=model["BucketName"],
            LifecycleConfiguration={"Rules": lifecycle_rules(configuration)},
        )


def _apply_table(request: Any, model: dict[str, Any]) -> None:
    if deletion_protected(model):
        request.aws_client_factory.dynamodb.update_table(
            TableName=model["TableName"], DeletionProtectionEnabled=True
        )


def after_create(
    create: Callable[[Any, Any], Any], apply: Callable[[Any, dict[str, Any]], None]
) -> Callable[[Any, Any], Any]:
    """``create`` followed by ``apply(request, model)`` once it reports SUCCESS."""
    from localstack.services.cloudformation.resource_provider import OperationStatus

    def wrapped(self: Any, request: Any) -> Any:
        event = create(self, request)
        if event.status == OperationStatus.SUCCESS:
            apply(request, event.resource_model or request.desired_state)
        return event

    wrapped.__wrapped__ = create  # type: ignore[attr-defined]
    return wrapped


def install() -> None:
    """Wraps the two providers' ``create`` (called once, at LocalStack start)."""
    from localstack.services.dynamodb.resource_providers.aws_dynamodb_table import (
        DynamoDBTableProvider,
    )
    from localstack.services.s3.resource_providers.aws_s3_bucket import S3BucketProvider

    providers: list[tuple[Any, Callable[[Any, dict[str, Any]], None]]] = [
        (S3BucketProvider, _apply_bucket),
        (DynamoDBTableProvider, _apply_table),
    ]
    for provider, apply in providers:
        if not hasattr(provider.create, "__wrapped__"):
            provider.create = after_create(provider.create, apply)
    LOG.info("docket: S3 lifecycle rules and DynamoDB deletion protection applied on create")
