"""A CloudFormation resource provider for `AWS::CloudWatch::Dashboard`, which community
LocalStack 2026.3.0 deploys as a no-op (no provider; the stack says CREATE_COMPLETE and nothing
exists). LocalStack's CloudWatch API does store dashboards (PutDashboard, GetDashboard,
DeleteDashboard), so this provider is a thin layer over it, as AWS's is: create and update put the
body, delete deletes it, `Ref` is the dashboard's name. A changed `DashboardName` replaces it.

Loaded through `docket_localstack.plugins` (entry-point group
`localstack.cloudformation.resource_providers`, plugin named by the type).
"""

from __future__ import annotations

from typing import TypedDict

from localstack.services.cloudformation.resource_provider import (
    OperationStatus,
    ProgressEvent,
    ResourceProvider,
    ResourceRequest,
)

SCHEMA = {
    "typeName": "AWS::CloudWatch::Dashboard",
    "description": "Resource schema for AWS::CloudWatch::Dashboard",
    "additionalProperties": False,
    "properties": {
        "DashboardName": {"type": "string"},
        "DashboardBody": {"type": "string"},
    },
    "required": ["DashboardBody"],
    "createOnlyProperties": ["/properties/DashboardName"],
    "primaryIdentifier": ["/properties/DashboardName"],
}


class DashboardProperties(TypedDict, total=False):
    DashboardName: str | None
    DashboardBody: str | None


def dashboard_name(request: ResourceRequest[DashboardProperties]) -> str:
    """The name given, else one made from the stack and logical id (as AWS generates one)."""
    model = request.desired_state
    if name := model.get("DashboardName"):
        return name
    return f"{request.stack_name}-{request.logical_resource_id}"


class DashboardProvider(ResourceProvider[DashboardProperties]):
    """PutDashboard on create and update (the API validates the body), DeleteDashboards on
    delete (a dashboard already gone is not an error)."""

    TYPE = "AWS::CloudWatch::Dashboard"
    SCHEMA = SCHEMA

    def _put(self, request: ResourceRequest[DashboardProperties]) -> ProgressEvent:
        model = request.desired_state
        model["DashboardName"] = dashboard_name(request)
        request.aws_client_factory.cloudwatch.put_dashboard(
            DashboardName=model["DashboardName"], DashboardBody=model["DashboardBody"]
        )
        return ProgressEvent(
            status=OperationStatus.SUCCESS,
            resource_model=model,
            custom_context=request.custom_context,
        )

    def create(self, request: ResourceRequest[DashboardProperties]) -> ProgressEvent:
        return self._put(request)

    def update(self, request: ResourceRequest[DashboardProperties]) -> ProgressEvent:
        return self._put(request)

    def read(self, request: ResourceRequest[DashboardProperties]) -> ProgressEvent:
        model = request.desired_state
        got = request.aws_client_factory.cloudwatch.get_dashboard(
            DashboardName=model["DashboardName"]
        )
        model["DashboardBody"] = got["DashboardBody"]
        return ProgressEvent(status=OperationStatus.SUCCESS, resource_model=model)

    def delete(self, request: ResourceRequest[DashboardProperties]) -> ProgressEvent:
        model = request.desired_state
        if name := model.get("DashboardName"):
            request.aws_client_factory.cloudwatch.delete_dashboards(DashboardNames=[name])
        return ProgressEvent(
            status=OperationStatus.SUCCESS,
            resource_model=model,
            custom_context=request.custom_context,
        )
