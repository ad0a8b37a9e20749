"""RedriveExecution: the pure rules, and a redrive run in-process by LocalStack's own interpreter.

The in-process state machine fails at its second state on the first attempt only: `Gate` reads
`$$.Execution.RedriveTime`, which the context object has only in a redrive. No network: the
status change events go to a fake EventBridge client.
"""

import datetime
import json
import logging
import time
import unittest
from typing import Any

import interpreter

from docket_localstack import sfn_redrive
from docket_localstack.sfn_redrive import RedriveRecord, RestartPoint

NOW = datetime.datetime(2026, 12, 1, 3, 0, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)
MACHINE = "redrive-unit"
MACHINE_ARN = interpreter.machine_arn(MACHINE)


def entered(name: str, value: Any) -> dict:
    return {
        "type": "TaskStateEntered",
        "stateEnteredEventDetails": {"name": name, "input": json.dumps(value)},
    }


def exited(name: str, value: Any) -> dict:
    return {
        "type": "TaskStateExited",
        "stateExitedEventDetails": {"name": name, "output": json.dumps(value)},
    }


NEXT = {"First": "Second", "Second": "", "Choose": ""}.get


class RefusalTest(unittest.TestCase):
    def test_what_aws_refuses_and_what_it_redrives(self):
        cases = [
            ("RUNNING", NOW, None, 5, sfn_redrive.REASON_RUNNING),
            ("SUCCEEDED", NOW, NOW, 5, sfn_redrive.REASON_SUCCEEDED),
            (
                "FAILED",
                NOW - 15 * DAY,
                NOW - 14 * DAY - datetime.timedelta(seconds=1),
                5,
                sfn_redrive.REASON_PERIOD,
            ),
            ("FAILED", NOW - 366 * DAY, NOW, 5, sfn_redrive.REASON_MAX_TIME),
            ("FAILED", NOW, NOW, 24_999, sfn_redrive.REASON_HISTORY),
            ("FAILED", NOW - 14 * DAY, NOW - 14 * DAY, 24_998, None),
            ("TIMED_OUT", NOW, NOW, 5, None),
            ("ABORTED", NOW, NOW, 5, None),
        ]
        for status, start, stop, events, expected in cases:
            with self.subTest(status=status, start=start, events=events):
                self.assertEqual(sfn_redrive.refusal(status, start, stop, events, NOW), expected)


class RestartPointTest(unittest.TestCase):
    def test_the_unfinished_top_level_state_with_the_input_it_was_entered_with(self):
        events = [
            entered("First", {"a": 1}),
            exited("First", {"b": 2}),
            entered("Second", {"b": 2}),
        ]
        self.assertEqual(
            sfn_redrive.restart_point(events, NEXT, "First", {"a": 1}),
            RestartPoint("Second", {"b": 2}),
        )

    def test_states_inside_a_map_or_parallel_are_not_taken_for_top_level_ones(self):
        events = [entered("First", {"a": 1}), entered("Inner", {"i": 0})]
        self.assertEqual(
            sfn_redrive.restart_point(events, NEXT, "First", {"a": 1}),
            RestartPoint("First", {"a": 1}),
        )

    def test_an_abort_between_two_states_restarts_at_the_next_with_the_output(self):
        events = [entered("First", {"a": 1}), exited("First", {"b": 2})]
        self.assertEqual(
            sfn_redrive.restart_point(events, NEXT, "First", {"a": 1}),
            RestartPoint("Second", {"b": 2}),
        )

    def test_an_exited_choice_is_evaluated_again(self):
        events = [entered("Choose", {"c": 3}), exited("Choose", {"c": 3})]
        self.assertEqual(
            sfn_redrive.restart_point(events, NEXT, "First", {}), RestartPoint("Choose", {"c": 3})
        )

    def test_no_state_entered_restarts_at_start_at_with_the_execution_input(self):
        self.assertEqual(
            sfn_redrive.restart_point([], NEXT, "First", {"x": 1}), RestartPoint("First", {"x": 1})
        )


class ClientTokenTest(unittest.TestCase):
    def test_a_token_answers_its_redrive_again_for_fifteen_minutes(self):
        record = RedriveRecord(count=1, date=NOW)
        sfn_redrive.remember_token(record, "t1", NOW)
        self.assertEqual(
            sfn_redrive.accepted_token(record, "t1", NOW + datetime.timedelta(minutes=15)), NOW
        )
        self.assertIsNone(
            sfn_redrive.accepted_token(record, "t1", NOW + datetime.timedelta(minutes=16))
        )
        self.assertIsNone(sfn_redrive.accepted_token(record, "t2", NOW))
        self.assertIsNone(sfn_redrive.accepted_token(record, None, NOW))

    def test_only_the_last_ten_tokens_are_kept(self):
        record = RedriveRecord(count=1, date=NOW)
        for i in range(11):
            sfn_redrive.remember_token(record, f"t{i}", NOW)
        self.assertIsNone(sfn_redrive.accepted_token(record, "t0", NOW))
        self.assertEqual(sfn_redrive.accepted_token(record, "t10", NOW), NOW)


DEFINITION = {
    "StartAt": "First",
    "States": {
        "First": {"Type": "Pass", "Result": {"doc": "d-1"}, "Next": "Gate"},
        # $$.Execution.RedriveTime exists only once redriven: before, the path fails the state.
        "Gate": {
            "Type": "Pass",
            "Parameters": {
                "doc.$": "$.doc",
                "at.$": "$$.Execution.RedriveTime",
                "redrives.$": "$$.Execution.RedriveCount",
            },
            "Next": "Done",
        },
        "Done": {"Type": "Succeed"},
    },
}


class FakeStore:
    def __init__(self, executions):
        self.executions = executions
        self.state_machines = {MACHINE_ARN: object()}


class InterpreterTest(unittest.TestCase):
    """A redrive through the patched provider and LocalStack's interpreter, without a server."""

    @classmethod
    def setUpClass(cls):
        sfn_redrive.install()
        # The interpreter logs the intended failure with its whole parse tree.
        logging.getLogger("localstack.services.stepfunctions").setLevel(logging.CRITICAL)

    def setUp(self):
        self.events = interpreter.fake_events(self)
        self.make(DEFINITION)

    def make(self, definition: dict) -> None:
        """An execution (not started) of `definition`, in the fake store."""
        from localstack.services.stepfunctions.provider import StepFunctionsProvider

        self.execution = interpreter.execution(MACHINE, definition, {"start": True})
        # The provider's class (with our operation), on a fake store; nothing else of it is used.
        provider: Any = StepFunctionsProvider.__new__(StepFunctionsProvider)
        store = FakeStore({self.execution.exec_arn: self.execution})
        provider.get_store = lambda _context: store
        self.provider = provider
        self.store = store

    def wait(self) -> Any:
        return interpreter.finished(self, self.execution)

    def redrive(self, token: str | None = None) -> Any:
        return self.provider.redrive_execution(None, self.execution.exec_arn, client_token=token)

    def history(self) -> Any:
        return interpreter.history(self.execution)

    def entered_names(self) -> list[str]:
        return [
            e["stateEnteredEventDetails"]["name"]
            for e in self.history()
            if "stateEnteredEventDetails" in e
        ]

    def test_a_failed_execution_is_redriven_from_the_failed_state_and_succeeds(self):
        self.execution.start()
        failed = self.wait()
        self.assertEqual((failed["status"], failed["error"]), ("FAILED", "States.Runtime"))
        self.assertEqual((failed["redriveCount"], failed["redriveStatus"]), (0, "REDRIVABLE"))
        self.assertNotIn("redriveDate", failed)

        answer = self.redrive()
        done = self.wait()

        self.assertEqual(done["status"], "SUCCEEDED", self.history())
        self.assertEqual(done["redriveCount"], 1)
        self.assertEqual(done["redriveDate"], answer["redriveDate"])
        self.assertEqual(done["redriveStatus"], "NOT_REDRIVABLE")
        self.assertEqual(done["redriveStatusReason"], sfn_redrive.REASON_SUCCEEDED)
        self.assertNotIn("error", done)
        self.assertEqual(
            json.loads(done["output"]),
            {"doc": "d-1", "at": sfn_redrive.context_time(answer["redriveDate"]), "redrives": 1},
        )
        self.assertEqual(json.loads(done["input"]), {"start": True})
        names = self.entered_names()
        self.assertEqual(names, ["First", "Gate", "Gate", "Done"])
        gate_inputs = [
            json.loads(e["stateEnteredEventDetails"]["input"])
            for e in self.history()
            if e.get("stateEnteredEventDetails", {}).get("name") == "Gate"
        ]
        self.assertEqual(gate_inputs, [{"doc": "d-1"}, {"doc": "d-1"}])
        types = [e["type"] for e in self.history()]
        self.assertEqual(types.count("ExecutionRedriven"), 1)
        self.assertEqual([e["id"] for e in self.history()], list(range(1, len(types) + 1)))
        self.assertEqual(
            [d["status"] for d in self.events.details],
            ["RUNNING", "FAILED", "RUNNING", "SUCCEEDED"],
        )
        self.assertEqual([d["redriveCount"] for d in self.events.details], [0, 0, 1, 1])

    def test_succeeded_running_and_unknown_executions_are_refused(self):
        from localstack.aws.api.stepfunctions import ExecutionDoesNotExist, ExecutionNotRedrivable

        self.execution.start()
        self.wait()
        self.redrive()
        self.wait()
        with self.assertRaises(ExecutionNotRedrivable) as refused:
            self.redrive()
        self.assertEqual(refused.exception.message, sfn_redrive.REASON_SUCCEEDED)
        with self.assertRaises(ExecutionDoesNotExist):
            self.provider.redrive_execution(None, self.execution.exec_arn + "-unknown")
        self.assertEqual([e["type"] for e in self.history()].count("ExecutionRedriven"), 1)

    def test_a_client_token_already_used_redrives_nothing(self):
        self.execution.start()
        self.wait()
        first = self.redrive(token="tok")
        self.wait()
        again = self.redrive(token="tok")
        self.assertEqual(again, first)
        self.assertEqual(self.execution.to_describe_output()["redriveCount"], 1)

    def test_list_executions_filters_on_redriven(self):
        self.execution.start()
        self.wait()
        item = self.execution.to_execution_list_item()
        self.assertEqual(item["redriveCount"], 0)
        keep = self.provider._list_execution_filter
        token = sfn_redrive._redrive_filter.set("REDRIVEN")
        try:
            self.assertFalse(
                keep(self.execution, state_machine_arn=MACHINE_ARN, status_filter=None)
            )
            self.redrive()
            self.wait()
            self.assertTrue(keep(self.execution, state_machine_arn=MACHINE_ARN, status_filter=None))
        finally:
            sfn_redrive._redrive_filter.reset(token)

    def test_an_aborted_execution_restarts_in_the_state_it_was_stopped_in(self):
        self.make(
            {
                "StartAt": "First",
                "States": {
                    "First": {"Type": "Pass", "Result": {"doc": "d-2"}, "Next": "Hold"},
                    "Hold": {"Type": "Wait", "Seconds": 1, "Next": "Done"},
                    "Done": {"Type": "Succeed"},
                },
            }
        )
        self.execution.start()
        time.sleep(0.3)
        self.execution.stop(datetime.datetime.now(tz=datetime.UTC), None, None)
        self.assertEqual(self.wait()["status"], "ABORTED")

        self.redrive()

        self.assertEqual(self.wait()["status"], "SUCCEEDED", self.history())
        self.assertEqual(self.entered_names(), ["First", "Hold", "Hold", "Done"])

    def test_a_failure_inside_a_parallel_state_is_refused_with_the_reason(self):
        from localstack.aws.api.stepfunctions import ExecutionNotRedrivable

        inner = {
            "Type": "Pass",
            "Parameters": {"at.$": "$$.Execution.RedriveTime"},  # fails: not redriven yet
            "End": True,
        }
        branch = {"StartAt": "Inner", "States": {"Inner": inner}}
        self.make(
            {
                "StartAt": "First",
                "States": {
                    "First": {"Type": "Pass", "Result": {"doc": "d-3"}, "Next": "Fan"},
                    "Fan": {"Type": "Parallel", "Branches": [branch], "End": True},
                },
            }
        )
        self.execution.start()
        failed = self.wait()
        self.assertEqual(failed["status"], "FAILED")
        self.assertEqual(failed["redriveStatus"], "NOT_REDRIVABLE")
        self.assertIn("inside the Parallel state 'Fan'", failed["redriveStatusReason"])
        with self.assertRaises(ExecutionNotRedrivable) as refused:
            self.redrive()
        self.assertEqual(refused.exception.message, failed["redriveStatusReason"])

    def test_express_executions_and_deleted_state_machines_are_refused(self):
        from localstack.aws.api.stepfunctions import ExecutionNotRedrivable, InvalidArn

        self.execution.start()
        self.wait()
        self.store.state_machines = {}
        with self.assertRaises(ExecutionNotRedrivable) as refused:
            self.redrive()
        self.assertEqual(refused.exception.message, sfn_redrive.REASON_DELETED)
        from localstack.aws.api.stepfunctions import StateMachineType

        self.execution.sm_type = StateMachineType.EXPRESS
        with self.assertRaises(InvalidArn):
            self.redrive()
        self.assertEqual(self.execution.to_describe_output()["redriveCount"], 0)


if __name__ == "__main__":
    unittest.main()
