"""A Lambda invoke whose connection drops fails `Lambda.SdkClientException` and is retried.

Run by LocalStack's own interpreter in-process: the boto call behind a `lambda:invoke` Task is
replaced by one that loses its connection on the first attempt(s) and answers afterwards.
"""

import logging
import unittest
from typing import Any
from unittest import mock

import interpreter
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError

from docket_localstack import sfn_lambda_errors
from docket_localstack.sfn_lambda_errors import StateTaskServiceLambda

INVOKE = (
    "localstack.services.stepfunctions.asl.component.state.state_execution.state_task."
    "lambda_eval_utils._invoke_lambda_function"
)
URL = "http://localhost:4566/"


def definition(retried: list[str]) -> dict:
    return {
        "StartAt": "Call",
        "States": {
            "Call": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": "docket-unit", "Payload.$": "$"},
                "OutputPath": "$.Payload",
                "Retry": [{"ErrorEquals": retried, "IntervalSeconds": 1, "MaxAttempts": 2}],
                "End": True,
            }
        },
    }


def answers(*outcomes: Exception | dict):
    """A stand-in for the invoke: raises or returns each outcome in turn, counting the calls."""
    calls: list[dict] = []

    def invoke(parameters: dict, region: str, state_credentials: Any) -> dict:
        outcome = outcomes[len(calls)]
        calls.append(parameters)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return invoke, calls


ANSWER = {"StatusCode": 200, "Payload": {"status": "ocr-done"}}


class LambdaConnectionErrors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sfn_lambda_errors.install()
        logging.getLogger("localstack.services.stepfunctions").setLevel(logging.CRITICAL)

    def setUp(self):
        interpreter.fake_events(self)

    def run_with(self, retried: list[str], *outcomes: Exception | dict) -> tuple[Any, list]:
        invoke, calls = answers(*outcomes)
        with mock.patch(INVOKE, invoke):
            run = interpreter.execution("lambda-errors", definition(retried), {"doc": "d-1"})
            run.start()
            return interpreter.finished(self, run), calls

    def failure(self, retried: list[str], error: Exception) -> Any:
        done, calls = self.run_with(retried, error)
        self.assertEqual(len(calls), 1)
        return done

    def test_a_closed_connection_is_retried_as_an_sdk_client_exception(self):
        closed = ConnectionClosedError(endpoint_url=URL)

        done, calls = self.run_with([sfn_lambda_errors.SDK_CLIENT_EXCEPTION], closed, ANSWER)

        self.assertEqual(done["status"], "SUCCEEDED", done)
        self.assertEqual(len(calls), 2, "the lost call and its retry")
        self.assertEqual(done["output"], '{"status":"ocr-done"}')

    def test_a_refused_connection_fails_with_that_name_and_the_message_as_cause(self):
        refused = EndpointConnectionError(endpoint_url=URL)

        done = self.failure(["States.Timeout"], refused)

        self.assertEqual(done["status"], "FAILED")
        self.assertEqual(done["error"], "Lambda.SdkClientException")
        self.assertEqual(done["cause"], str(refused))

    def test_a_service_error_keeps_its_own_name(self):
        throttled = ClientError(
            {
                "Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"},
                "ResponseMetadata": {"HTTPStatusCode": 429, "RequestId": "r-1"},
            },
            "Invoke",
        )

        done = self.failure(["States.Timeout"], throttled)

        self.assertEqual(done["error"], "Lambda.TooManyRequestsException")

    def test_any_other_exception_is_still_a_runtime_error(self):
        done = self.failure(["States.Timeout"], ValueError("not a connection"))

        self.assertEqual(done["error"], "States.Runtime")

    def test_install_wraps_once(self):
        wrapped = StateTaskServiceLambda._from_error
        sfn_lambda_errors.install()
        self.assertIs(StateTaskServiceLambda._from_error, wrapped)


if __name__ == "__main__":
    unittest.main()
