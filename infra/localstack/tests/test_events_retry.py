"""A rule target's failed delivery is retried within its RetryPolicy, then dead-lettered.

LocalStack's own `TargetSender.process_event` runs (input handling, then `send_event`); only the
target's `send_event`, the timer and the dead-letter send are stand-ins, so each test counts the
calls that reached the target and what reached the queue.
"""

import unittest
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError, EndpointConnectionError

from docket_localstack import events_retry
from docket_localstack.events_retry import Delivery, TargetSender

ACCOUNT = "000000000000"
RULE = f"arn:aws:events:us-east-1:{ACCOUNT}:rule/docket-ingest"
FUNCTION = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:docket-ingest"
DLQ = f"arn:aws:sqs:us-east-1:{ACCOUNT}:docket-IngestDLQ"
EVENT: Any = {"id": "e-1", "detail-type": "Object Created", "detail": {"key": "inbox/t/a.pdf"}}


def event() -> Any:
    """A fresh copy of the event, as the provider hands each delivery its own."""
    return dict(EVENT)


def client_error(status: int, code: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "Invoke",
    )


# The events provider passes a trace header; the targets here ignore it.
TRACE: Any = None
THROTTLED = client_error(429, "TooManyRequestsException")


class FakeTarget(TargetSender):
    """A target whose calls fail with each of `failures` in turn, then succeed."""

    def __init__(self, failures: list[Exception], **target):
        super().__init__(
            target=dict(Id="ingest", Arn=FUNCTION, **target),  # type: ignore[typeddict-item]
            rule_arn=RULE,
            rule_name="docket-ingest",
            service="lambda",
            region="us-east-1",
            account_id=ACCOUNT,
        )
        self.failures = list(failures)
        self.calls: list[dict] = []

    def send_event(self, event, trace_header):
        self.calls.append(event)
        if self.failures:
            raise self.failures.pop(0)


class Retries(unittest.TestCase):
    def setUp(self):
        events_retry.install()
        self.now = 0.0
        self.delays: list[float] = []
        self.dead: list[tuple[str, str, dict]] = []

        def schedule(delay: float, call: Callable[[], None]) -> None:
            self.delays.append(delay)
            self.now += delay
            call()

        saved = (Delivery.schedule, Delivery.clock, events_retry.dead_letter)
        Delivery.schedule = staticmethod(schedule)
        Delivery.clock = staticmethod(lambda: self.now)
        events_retry.dead_letter = lambda arn, sender, body, attrs: self.dead.append(
            (arn, body, attrs)
        )

        def restore():
            Delivery.schedule, Delivery.clock, events_retry.dead_letter = saved

        self.addCleanup(restore)

    def test_a_throttled_delivery_is_retried_until_it_is_delivered_once(self):
        target = FakeTarget([THROTTLED, THROTTLED], RetryPolicy={"MaximumRetryAttempts": 8})

        target.process_event(event(), trace_header=TRACE)

        self.assertEqual(len(target.calls), 3)
        self.assertEqual(target.calls[-1]["detail"], EVENT["detail"])
        self.assertEqual(len(self.delays), 2)
        self.assertLess(self.delays[0], self.delays[1] * 2, "backoff grows (within its jitter)")
        self.assertEqual(self.dead, [])

    def test_a_delivery_that_stays_throttled_goes_to_the_dead_letter_queue_with_its_reason(self):
        target = FakeTarget(
            [THROTTLED] * 5,
            RetryPolicy={"MaximumRetryAttempts": 2},
            DeadLetterConfig={"Arn": DLQ},
        )

        target.process_event(event(), trace_header=TRACE)

        self.assertEqual(len(target.calls), 3, "the first attempt and two retries")
        [(arn, body, attributes)] = self.dead
        self.assertEqual(arn, DLQ)
        self.assertIn('"id": "e-1"', body)
        self.assertEqual(
            attributes,
            {
                "RULE_ARN": RULE,
                "TARGET_ARN": FUNCTION,
                "ERROR_CODE": "THROTTLING",
                "ERROR_MESSAGE": str(THROTTLED),
                "EXHAUSTED_RETRY_CONDITION": "MaximumRetryAttempts",
                "RETRY_ATTEMPTS": "2",
            },
        )

    def test_retries_stop_at_the_maximum_event_age(self):
        target = FakeTarget(
            [EndpointConnectionError(endpoint_url="http://localhost:4566/")] * 50,
            RetryPolicy={"MaximumRetryAttempts": 185, "MaximumEventAgeInSeconds": 60},
            DeadLetterConfig={"Arn": DLQ},
        )

        target.process_event(event(), trace_header=TRACE)

        [(_, _, attributes)] = self.dead
        self.assertEqual(attributes["ERROR_CODE"], "CONNECTION_FAILURE")
        self.assertEqual(attributes["EXHAUSTED_RETRY_CONDITION"], "MaximumEventAgeInSeconds")
        self.assertLessEqual(self.now, 60)
        self.assertGreater(len(target.calls), 2)
        self.assertLess(len(target.calls), 50)

    def test_a_target_that_does_not_exist_is_dead_lettered_without_a_retry(self):
        target = FakeTarget(
            [client_error(404, "ResourceNotFoundException")], DeadLetterConfig={"Arn": DLQ}
        )

        target.process_event(event(), trace_header=TRACE)

        self.assertEqual(len(target.calls), 1)
        [(_, _, attributes)] = self.dead
        self.assertEqual(attributes["ERROR_CODE"], "NO_RESOURCE")
        self.assertNotIn("EXHAUSTED_RETRY_CONDITION", attributes)

    def test_without_a_policy_aws_defaults_apply(self):
        target = FakeTarget([client_error(503, "ServiceException")] * 3)

        target.process_event(event(), trace_header=TRACE)

        self.assertEqual(len(target.calls), 4)
        self.assertEqual(self.dead, [])

    def test_install_wraps_once(self):
        wrapped = TargetSender.process_event
        events_retry.install()
        self.assertIs(TargetSender.process_event, wrapped)


class Unpatched(unittest.TestCase):
    """What LocalStack does alone: one call, the failure surfaces, the event is gone."""

    def test_a_throttled_delivery_is_tried_once(self):
        original = getattr(TargetSender.process_event, "__wrapped__", TargetSender.process_event)
        target = FakeTarget([THROTTLED], RetryPolicy={"MaximumRetryAttempts": 8})

        with self.assertRaises(ClientError):
            original(target, event(), trace_header=TRACE)
        self.assertEqual(len(target.calls), 1)


class Classify(unittest.TestCase):
    def test_codes(self):
        cases = [
            (THROTTLED, "THROTTLING", True),
            (client_error(400, "ThrottlingException"), "THROTTLING", True),
            (client_error(500, "ServiceException"), "INTERNAL_ERROR", True),
            (EndpointConnectionError(endpoint_url="x"), "CONNECTION_FAILURE", True),
            (client_error(404, "ResourceNotFoundException"), "NO_RESOURCE", False),
            (client_error(403, "AccessDeniedException"), "NO_PERMISSIONS", False),
            (client_error(400, "InvalidParameterValueException"), "SDK_CLIENT_ERROR", False),
            (ValueError("boom"), "UNKNOWN", False),
        ]
        for error, code, retryable in cases:
            with self.subTest(error=type(error).__name__, code=code):
                failure = events_retry.classify(error)
                self.assertEqual((failure.code, failure.retryable), (code, retryable))


if __name__ == "__main__":
    unittest.main()
