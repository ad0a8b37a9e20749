"""The dashboard provider puts the body on create and update and deletes it on delete."""

import unittest
from types import SimpleNamespace

from docket_localstack.cfn_cloudwatch_dashboard import DashboardProvider


class FakeCloudWatch:
    def __init__(self):
        self.dashboards: dict[str, str] = {}

    def put_dashboard(self, DashboardName, DashboardBody):
        self.dashboards[DashboardName] = DashboardBody

    def get_dashboard(self, DashboardName):
        return {"DashboardName": DashboardName, "DashboardBody": self.dashboards[DashboardName]}

    def delete_dashboards(self, DashboardNames):
        for name in DashboardNames:
            self.dashboards.pop(name, None)


def request(cloudwatch, model):
    return SimpleNamespace(
        desired_state=dict(model),
        aws_client_factory=SimpleNamespace(cloudwatch=cloudwatch),
        stack_name="docket-dev",
        logical_resource_id="Dashboard",
        custom_context={},
    )


class Dashboard(unittest.TestCase):
    def test_create_update_and_delete_go_to_the_cloudwatch_api(self):
        cw = FakeCloudWatch()
        provider = DashboardProvider()
        first = {"DashboardName": "docket-dev", "DashboardBody": '{"widgets": []}'}
        second = {**first, "DashboardBody": '{"widgets": [{"type": "text"}]}'}

        created = provider.create(request(cw, first))
        self.assertEqual(cw.dashboards, {"docket-dev": first["DashboardBody"]})
        provider.update(request(cw, second))
        self.assertEqual(cw.dashboards["docket-dev"], second["DashboardBody"])
        provider.delete(request(cw, created.resource_model))

        assert created.resource_model is not None
        self.assertEqual(created.resource_model["DashboardName"], "docket-dev")
        self.assertEqual(cw.dashboards, {})

    def test_a_dashboard_without_a_name_gets_one_from_the_stack(self):
        cw = FakeCloudWatch()

        made = DashboardProvider().create(request(cw, {"DashboardBody": "{}"}))

        assert made.resource_model is not None
        self.assertEqual(made.resource_model["DashboardName"], "docket-dev-Dashboard")
        self.assertIn("docket-dev-Dashboard", cw.dashboards)
