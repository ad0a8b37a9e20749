"""An execution of a state machine by LocalStack's own interpreter, in-process, without a server.

Status-change events go to `FakeEvents`; a test patches whatever its Tasks would call.
"""

import datetime
import json
import time
import unittest
from typing import Any
from unittest import mock

REGION, ACCOUNT = "us-east-1", "000000000000"


def machine_arn(name: str) -> str:
    return f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}"


class FakeEvents:
    def __init__(self):
        self.details: list[dict] = []

    def put_events(self, Entries):  # boto's parameter name
        self.details.extend(json.loads(e["Detail"]) for e in Entries)


def fake_events(test: unittest.TestCase) -> FakeEvents:
    """Routes the executions' status-change events to a fake, for the test's duration."""
    events = FakeEvents()
    patcher = mock.patch(
        "localstack.services.stepfunctions.backend.execution.connect_to",
        return_value=mock.Mock(events=events),
    )
    patcher.start()
    test.addCleanup(patcher.stop)
    return events


def execution(machine: str, definition: dict, input_data: Any) -> Any:
    """An execution named `run-1` (not started) of `definition`."""
    from localstack.services.stepfunctions.backend.execution import Execution
    from localstack.services.stepfunctions.backend.state_machine import StateMachineRevision

    revision = StateMachineRevision(
        name=machine,
        arn=machine_arn(machine),
        definition=json.dumps(definition),
        role_arn=f"arn:aws:iam::{ACCOUNT}:role/sfn",
        logging_config={},
        cloud_watch_logging_configuration=None,
    )
    return Execution(
        name="run-1",
        sm_type=revision.sm_type,
        role_arn=revision.role_arn,
        exec_arn=f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{machine}:run-1",
        account_id=ACCOUNT,
        region_name=REGION,
        state_machine=revision,
        start_date=datetime.datetime.now(tz=datetime.UTC),
        cloud_watch_logging_session=None,
        activity_store={},
        input_data=input_data,
    )


def finished(test: unittest.TestCase, run: Any, seconds: float = 4) -> Any:
    """The execution's description once it is no longer RUNNING."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        described = run.to_describe_output()
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.02)
    test.fail(f"execution still RUNNING after {seconds} s")


def history(run: Any) -> list[dict]:
    return run.to_history_output()["events"]
