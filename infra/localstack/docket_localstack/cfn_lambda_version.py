"""A changed `AWS::Lambda::Version` publishes a new version on update, as on AWS.

On AWS every property of `AWS::Lambda::Version` but `ProvisionedConcurrencyConfig` and
`RuntimePolicy` requires replacement: a stack update that changes its `Description` or `CodeSha256`
creates a new resource (PublishVersion) and deletes the old one, unless `UpdateReplacePolicy:
Retain` keeps it. Community LocalStack 2026.3's provider declares only `FunctionName` create-only,
so the v2 engine takes such a change for an in-place update, and the provider's `update` raises
`NotImplementedError`: the deploy fails, or, where the engine skips it, no version is published.
docket's template names each step function's version in the state machine's definition, and a
deploy must publish new ones while keeping the old (executions that started before it still
invoke them).

`install()` adds `CodeSha256` and `Description` to the provider's `createOnlyProperties` (the
schema the engine reads to decide on replacement). The engine already honours
`UpdateReplacePolicy: Retain`. No LocalStack file is changed.
"""

from __future__ import annotations

from localstack.services.lambda_.resource_providers.aws_lambda_version import (
    LambdaVersionProvider,
)

# Properties whose change replaces the resource on AWS (besides FunctionName, already listed).
REPLACING = ("/properties/CodeSha256", "/properties/Description")


def install() -> None:
    """Completes the provider's create-only properties; doing it twice changes nothing."""
    create_only: list[str] = LambdaVersionProvider.SCHEMA.setdefault("createOnlyProperties", [])
    create_only.extend(p for p in REPLACING if p not in create_only)
