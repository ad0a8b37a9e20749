"""CloudFormation resource providers for `AWS::StepFunctions::StateMachineVersion` and
`AWS::StepFunctions::StateMachineAlias`, which community LocalStack 2026.3.0 skips (their Ref
resolves to "unknown"). Both are thin layers over LocalStack's own Step Functions API
(PublishStateMachineVersion, CreateStateMachineAlias, ...), modelled on LocalStack's
`aws_stepfunctions_statemachine.py` provider.

Loaded through `docket_localstack.plugins` (entry-point group
`localstack.cloudformation.resource_providers`). plux indexes those plugins by `Plugin.name`, so the
plugin classes' names must be exactly the CloudFormation type names (case-sensitive).

The v2 engine reads two things from `SCHEMA`: `primaryIdentifier` (the physical resource id, which
is what `Ref` returns; here the ARN) and `createOnlyProperties` (a change to one of them means
replacement: create the new resource, then delete the old one at the end of the update).
`Fn::GetAtt` reads the returned resource model, so `Arn` is set on it.

Known limit: LocalStack's own `AWS::StepFunctions::StateMachine` provider does not return
`StateMachineRevisionId`, so `!GetAtt StateMachine.StateMachineRevisionId` resolves to "unknown"
there. The version provider then publishes without the revision guard, but that value cannot drive
a version's replacement when the definition changes (it stays "unknown"). A new version is
published when a version resource is created or replaced (a changed StateMachineArn /
StateMachineRevisionId, or a new logical id: the pattern the e2e test uses).
"""

from __future__ import annotations

from typing import TypedDict

import localstack.services.cloudformation.provider_utils as util
from localstack.services.cloudformation.engine.v2.change_set_model_preproc import MOCKED_REFERENCE
from localstack.services.cloudformation.resource_provider import (
    LOG,
    OperationStatus,
    ProgressEvent,
    ResourceProvider,
    ResourceRequest,
)

_ARN = {"type": "string", "minLength": 1, "maxLength": 2048}


def _succeeded[P](request: ResourceRequest[P], model: P) -> ProgressEvent[P]:
    """The answer of a create, update or delete: each is one API call, done when it returns."""
    return ProgressEvent(
        status=OperationStatus.SUCCESS,
        resource_model=model,
        custom_context=request.custom_context,
    )


# ---------------------------------------------------------------------------------------------
# AWS::StepFunctions::StateMachineVersion
# ---------------------------------------------------------------------------------------------

VERSION_SCHEMA = {
    "typeName": "AWS::StepFunctions::StateMachineVersion",
    "description": "Resource schema for StateMachineVersion",
    "additionalProperties": False,
    "properties": {
        "Arn": _ARN,
        "StateMachineArn": _ARN,
        "StateMachineRevisionId": _ARN,
        "Description": {"type": "string", "maxLength": 256},
    },
    "required": ["StateMachineArn"],
    "readOnlyProperties": ["/properties/Arn"],
    "createOnlyProperties": [
        "/properties/StateMachineArn",
        "/properties/StateMachineRevisionId",
        # As in AWS's schema: a new Description publishes a new version (deploy.sh passes the
        # definition's hash there, since StateMachineRevisionId does not resolve here).
        "/properties/Description",
    ],
    "primaryIdentifier": ["/properties/Arn"],
}


class StateMachineVersionProperties(TypedDict, total=False):
    Arn: str | None
    StateMachineArn: str | None
    StateMachineRevisionId: str | None
    Description: str | None


class StateMachineVersionProvider(ResourceProvider[StateMachineVersionProperties]):
    """A published version of a state machine.

    Create publishes a version of the state machine's current revision. As on AWS, publishing a
    revision that already has a version returns that version (no new number).
    `StateMachineRevisionId` guards the publish: it must name the current revision (`INITIAL` for a
    state machine never updated), else Step Functions answers ConflictException and the resource
    fails. Description changes are in-place (no API changes a version's description; the new value
    is kept in the model only). Delete deletes the version (DeleteStateMachineVersion is idempotent;
    it fails with ConflictException while an alias still routes to the version).
    """

    TYPE = "AWS::StepFunctions::StateMachineVersion"
    SCHEMA = VERSION_SCHEMA

    def create(
        self, request: ResourceRequest[StateMachineVersionProperties]
    ) -> ProgressEvent[StateMachineVersionProperties]:
        model = request.desired_state
        sfn = request.aws_client_factory.stepfunctions
        state_machine_arn = model["StateMachineArn"]

        params = {"stateMachineArn": state_machine_arn}
        revision_id = model.get("StateMachineRevisionId")
        if revision_id == MOCKED_REFERENCE:
            # `!GetAtt StateMachine.StateMachineRevisionId`: LocalStack's StateMachine provider does
            # not report it and the engine substitutes "unknown"; publish without the guard.
            LOG.warning(
                "%s: StateMachineRevisionId is unresolved (%r); publishing the current revision",
                request.logical_resource_id,
                revision_id,
            )
        elif revision_id == "INITIAL":
            # LocalStack reports no revisionId until the first update; AWS calls that one INITIAL.
            current = sfn.describe_state_machine(stateMachineArn=state_machine_arn).get(
                "revisionId"
            )
            if current:
                params["revisionId"] = revision_id  # let the API answer its ConflictException
        elif revision_id:
            params["revisionId"] = revision_id
        if model.get("Description"):
            params["description"] = model["Description"]

        response = sfn.publish_state_machine_version(**params)
        model["Arn"] = response["stateMachineVersionArn"]
        return _succeeded(request, model)

    def read(
        self, request: ResourceRequest[StateMachineVersionProperties]
    ) -> ProgressEvent[StateMachineVersionProperties]:
        model = request.desired_state
        described = request.aws_client_factory.stepfunctions.describe_state_machine(
            stateMachineArn=model["Arn"]
        )
        model["Description"] = described.get("description") or model.get("Description")
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)

    def update(
        self, request: ResourceRequest[StateMachineVersionProperties]
    ) -> ProgressEvent[StateMachineVersionProperties]:
        # Only Description can get here (everything else is create-only, i.e. replacement).
        model = request.desired_state
        model["Arn"] = (request.previous_state or {}).get("Arn") or model.get("Arn")
        return _succeeded(request, model)

    def delete(
        self, request: ResourceRequest[StateMachineVersionProperties]
    ) -> ProgressEvent[StateMachineVersionProperties]:
        model = request.desired_state
        if arn := model.get("Arn"):
            request.aws_client_factory.stepfunctions.delete_state_machine_version(
                stateMachineVersionArn=arn
            )
        return _succeeded(request, model)


# ---------------------------------------------------------------------------------------------
# AWS::StepFunctions::StateMachineAlias
# ---------------------------------------------------------------------------------------------

ALIAS_SCHEMA = {
    "typeName": "AWS::StepFunctions::StateMachineAlias",
    "description": "Resource schema for StateMachineAlias",
    "additionalProperties": False,
    "definitions": {
        "RoutingConfigurationVersion": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "StateMachineVersionArn": _ARN,
                "Weight": {"type": "integer", "minimum": 0, "maximum": 100},
            },
            "required": ["StateMachineVersionArn", "Weight"],
        },
        "DeploymentPreference": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "StateMachineVersionArn": _ARN,
                "Type": {"type": "string", "enum": ["LINEAR", "ALL_AT_ONCE", "CANARY"]},
                "Percentage": {"type": "integer"},
                "Interval": {"type": "integer"},
                "Alarms": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["StateMachineVersionArn", "Type"],
        },
    },
    "properties": {
        "Arn": _ARN,
        "Name": {"type": "string", "minLength": 1, "maxLength": 80},
        "Description": {"type": "string", "maxLength": 256},
        "RoutingConfiguration": {
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"$ref": "#/definitions/RoutingConfigurationVersion"},
        },
        "DeploymentPreference": {"$ref": "#/definitions/DeploymentPreference"},
    },
    "oneOf": [{"required": ["RoutingConfiguration"]}, {"required": ["DeploymentPreference"]}],
    "readOnlyProperties": ["/properties/Arn"],
    "createOnlyProperties": ["/properties/Name"],
    "writeOnlyProperties": ["/properties/DeploymentPreference"],
    "primaryIdentifier": ["/properties/Arn"],
}


class StateMachineAliasProperties(TypedDict, total=False):
    Arn: str | None
    Name: str | None
    Description: str | None
    RoutingConfiguration: list[dict] | None
    DeploymentPreference: dict | None


def _routing(model: StateMachineAliasProperties) -> list[dict]:
    """The API's routing configuration for the model.

    `DeploymentPreference` (mutually exclusive with `RoutingConfiguration`, as on AWS) is applied
    all at once: the alias routes 100% to `DeploymentPreference.StateMachineVersionArn` for every
    `Type`. LINEAR and CANARY (gradual shifting watched by CloudWatch alarms) are not emulated:
    they end where a successful gradual deployment would end, immediately.
    """
    routing = model.get("RoutingConfiguration")
    preference = model.get("DeploymentPreference")
    if routing and preference:
        raise ValueError(
            "StateMachineAlias: RoutingConfiguration and DeploymentPreference "
            "are mutually exclusive"
        )
    if preference:
        return [{"stateMachineVersionArn": preference["StateMachineVersionArn"], "weight": 100}]
    if not routing:
        raise ValueError(
            "StateMachineAlias: one of RoutingConfiguration or DeploymentPreference is required"
        )
    return [
        {"stateMachineVersionArn": r["StateMachineVersionArn"], "weight": int(r["Weight"])}
        for r in routing
    ]


class StateMachineAliasProvider(ResourceProvider[StateMachineAliasProperties]):
    """An alias routing executions to one or two state machine versions.

    Create: CreateStateMachineAlias (Name generated from stack and logical id when absent).
    Update: UpdateStateMachineAlias with the new routing / description (a new Name replaces the
    alias). Delete: DeleteStateMachineAlias. DeploymentPreference: see `_routing` (all at once).
    """

    TYPE = "AWS::StepFunctions::StateMachineAlias"
    SCHEMA = ALIAS_SCHEMA

    def create(
        self, request: ResourceRequest[StateMachineAliasProperties]
    ) -> ProgressEvent[StateMachineAliasProperties]:
        model = request.desired_state
        sfn = request.aws_client_factory.stepfunctions
        if not model.get("Name"):
            model["Name"] = util.generate_default_name(
                stack_name=request.stack_name, logical_resource_id=request.logical_resource_id
            )[:80]
        params = {"name": model["Name"], "routingConfiguration": _routing(model)}
        if model.get("Description"):
            params["description"] = model["Description"]
        response = sfn.create_state_machine_alias(**params)
        model["Arn"] = response["stateMachineAliasArn"]
        return _succeeded(request, model)

    def read(
        self, request: ResourceRequest[StateMachineAliasProperties]
    ) -> ProgressEvent[StateMachineAliasProperties]:
        model = request.desired_state
        described = request.aws_client_factory.stepfunctions.describe_state_machine_alias(
            stateMachineAliasArn=model["Arn"]
        )
        model["Name"] = described["name"]
        model["Description"] = described.get("description")
        model["RoutingConfiguration"] = [
            {"StateMachineVersionArn": r["stateMachineVersionArn"], "Weight": r["weight"]}
            for r in described.get("routingConfiguration", [])
        ]
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)

    def update(
        self, request: ResourceRequest[StateMachineAliasProperties]
    ) -> ProgressEvent[StateMachineAliasProperties]:
        model = request.desired_state
        previous = request.previous_state or {}
        model["Arn"] = previous.get("Arn") or model.get("Arn")
        model["Name"] = model.get("Name") or previous.get("Name")
        params = {
            "stateMachineAliasArn": model["Arn"],
            "routingConfiguration": _routing(model),
        }
        if model.get("Description") is not None:
            params["description"] = model["Description"]
        request.aws_client_factory.stepfunctions.update_state_machine_alias(**params)
        return _succeeded(request, model)

    def delete(
        self, request: ResourceRequest[StateMachineAliasProperties]
    ) -> ProgressEvent[StateMachineAliasProperties]:
        model = request.desired_state
        if arn := model.get("Arn"):
            request.aws_client_factory.stepfunctions.delete_state_machine_alias(
                stateMachineAliasArn=arn
            )
        return _succeeded(request, model)


# The providers by CloudFormation type, for the plugins (`docket_localstack.plugins`).
PROVIDERS: dict[str, type[ResourceProvider]] = {
    provider.TYPE: provider for provider in (StateMachineVersionProvider, StateMachineAliasProvider)
}
