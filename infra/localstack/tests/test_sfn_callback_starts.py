"""A callback sent while another execution is still parsing its definition is answered.

LocalStack's own provider operations run in-process against an execution of its own interpreter
whose parse is slowed down (as under load), so the callback lands inside the window where that
execution has no environment.
"""

import threading
import time
import unittest
from typing import Any
from unittest import mock

import interpreter
from localstack.aws.api import RequestContext
from localstack.aws.api.stepfunctions import InvalidToken
from localstack.services.stepfunctions.backend.execution_worker import ExecutionWorker
from localstack.services.stepfunctions.backend.models import sfn_stores
from localstack.services.stepfunctions.provider import StepFunctionsProvider

from docket_localstack import sfn_callback_starts

DEFINITION = {
    "StartAt": "Hold",
    "States": {"Hold": {"Type": "Wait", "Seconds": 1, "Next": "Done"}, "Done": {"Type": "Succeed"}},
}


def slow_parse(test: unittest.TestCase, seconds: float) -> threading.Event:
    """Delays every parse of a definition by `seconds`; the event is set when one has begun."""
    begun = threading.Event()
    parse = ExecutionWorker._get_evaluation_entrypoint

    def slow(self: Any):
        begun.set()
        time.sleep(seconds)
        return parse(self)

    patcher = mock.patch.object(ExecutionWorker, "_get_evaluation_entrypoint", slow)
    patcher.start()
    test.addCleanup(patcher.stop)
    return begun


class CallbacksDuringAStart(unittest.TestCase):
    def setUp(self):
        sfn_callback_starts.install()
        interpreter.fake_events(self)
        no_request: Any = None  # the operations read only the account and region
        self.context = RequestContext(no_request)
        self.context.account_id = interpreter.ACCOUNT
        self.context.region = interpreter.REGION
        self.store = sfn_stores[interpreter.ACCOUNT][interpreter.REGION]
        self.addCleanup(self.store.executions.clear)
        self.provider = StepFunctionsProvider()

    def start_slowly(self, seconds: float) -> Any:
        begun = slow_parse(self, seconds)
        run = interpreter.execution("docket-unit", DEFINITION, {})
        self.store.executions[run.exec_arn] = run
        run.start()
        self.assertTrue(begun.wait(2))
        self.assertIsNone(run.exec_worker.env, "the callback lands inside the window")
        return run

    def test_each_callback_waits_for_the_start_and_is_answered(self):
        calls = [
            lambda: self.provider.send_task_success(self.context, "unknown", "{}"),
            lambda: self.provider.send_task_failure(self.context, "unknown"),
            lambda: self.provider.send_task_heartbeat(self.context, "unknown"),
        ]
        for call in calls:
            with self.subTest(call=call):
                run = self.start_slowly(0.3)
                with self.assertRaises(InvalidToken):  # AWS's answer to a token nobody holds
                    call()
                self.assertIsNotNone(run.exec_worker.env)
                self.assertEqual(interpreter.finished(self, run)["status"], "SUCCEEDED")

    def test_without_the_patch_the_callback_fails_on_the_starting_execution(self):
        run = self.start_slowly(0.3)
        unpatched = StepFunctionsProvider.send_task_success.__wrapped__  # type: ignore[attr-defined]

        with self.assertRaisesRegex(AttributeError, "callback_pool_manager"):
            unpatched(self.provider, self.context, "unknown", "{}")
        interpreter.finished(self, run)

    def test_install_wraps_once(self):
        wrapped = StepFunctionsProvider.send_task_success
        sfn_callback_starts.install()
        self.assertIs(StepFunctionsProvider.send_task_success, wrapped)


if __name__ == "__main__":
    unittest.main()
