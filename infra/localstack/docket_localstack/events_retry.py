"""A rule target that EventBridge could not reach is retried, then dead-lettered, as on AWS.

On AWS, an event that a rule fails to deliver to its target because of a retryable error
(throttling, a 5xx answer, a lost connection) is retried with exponential backoff and jitter
until the target's `RetryPolicy` runs out (`MaximumRetryAttempts`, default 185;
`MaximumEventAgeInSeconds`, default 86,400). A non-retryable error (the target is gone, no
permission) is not retried. Either way, an event that was not delivered goes to the target's
`DeadLetterConfig` queue with the attributes `RULE_ARN`, `TARGET_ARN`, `ERROR_CODE`,
`ERROR_MESSAGE` (and `EXHAUSTED_RETRY_CONDITION`, `RETRY_ATTEMPTS` after retries).

Community LocalStack 2026.3 calls each target once (`TargetSender.process_event`) and only logs a
failure ("TargetDeliveryFailure"): its boto client's own retries aside, an upload whose
`lambda:Invoke` of ingest is throttled is lost, and no dead-letter queue ever sees it.

`install()` wraps `TargetSender.process_event` (rules and schedules both go through it). A failed
delivery is classified (`classify`); a retryable one is tried again on a timer, after
`min(MAX_DELAY, BASE_DELAY * 2**n)` seconds with equal jitter, within the target's policy; when
that runs out, or for a non-retryable error, the event goes to the dead-letter queue if the target
has one. Differences from AWS: the delays are seconds, not AWS's undocumented schedule (they are
settings here, for tests that must end in minutes), and pending retries live in memory, so a
restart of LocalStack drops them. No LocalStack file is changed.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from botocore.exceptions import ClientError, HTTPClientError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from localstack.aws.connect import connect_to
from localstack.services.events.target import TargetSender
from localstack.utils.aws.arns import sqs_queue_url_for_arn

LOG = logging.getLogger(__name__)

_INSTALLED = "_docket_events_retry"

# AWS's defaults for a rule target without a RetryPolicy.
DEFAULT_MAX_RETRIES = 185
DEFAULT_MAX_AGE_SECONDS = 86_400

# The local backoff: the first retry after about BASE_DELAY seconds, doubling up to MAX_DELAY.
BASE_DELAY = float(os.environ.get("DOCKET_EVENTS_RETRY_BASE_SECONDS", "1"))
MAX_DELAY = float(os.environ.get("DOCKET_EVENTS_RETRY_MAX_SECONDS", "30"))

# `ERROR_CODE` values, from AWS's list of the codes a rule's dead-letter queue can carry.
THROTTLING = "THROTTLING"
INTERNAL_ERROR = "INTERNAL_ERROR"
CONNECTION_FAILURE = "CONNECTION_FAILURE"
TIMEOUT = "TIMEOUT"
NO_RESOURCE = "NO_RESOURCE"
NO_PERMISSIONS = "NO_PERMISSIONS"
SDK_CLIENT_ERROR = "SDK_CLIENT_ERROR"
UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class Failure:
    """Why one delivery failed, as a dead-letter queue names it, and whether to try again."""

    code: str
    message: str
    retryable: bool


def classify(error: Exception) -> Failure:
    """Sorts a delivery's exception: throttling, 5xx and lost connections are retryable."""
    message = str(error)
    if isinstance(error, ReadTimeoutError):
        return Failure(TIMEOUT, message, True)
    if isinstance(error, (BotoConnectionError, HTTPClientError)):
        return Failure(CONNECTION_FAILURE, message, True)
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if status == 429 or "Throttl" in code or code == "TooManyRequestsException":
            return Failure(THROTTLING, message, True)
        if status >= 500:
            return Failure(INTERNAL_ERROR, message, True)
        if code.endswith("NotFoundException") or code.startswith("NonExistent"):
            return Failure(NO_RESOURCE, message, False)
        if code.startswith("AccessDenied") or status == 403:
            return Failure(NO_PERMISSIONS, message, False)
        return Failure(SDK_CLIENT_ERROR, message, False)
    return Failure(UNKNOWN, message, False)


def backoff(retry: int, rng: random.Random) -> float:
    """The delay before retry `retry` (1-based): exponential, capped, half of it random."""
    ceiling = min(MAX_DELAY, BASE_DELAY * 2 ** (retry - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def _policy(target: Mapping) -> tuple[int, float]:
    policy: Mapping = target.get("RetryPolicy") or {}
    return (
        int(policy.get("MaximumRetryAttempts", DEFAULT_MAX_RETRIES)),
        float(policy.get("MaximumEventAgeInSeconds", DEFAULT_MAX_AGE_SECONDS)),
    )


def _timer(delay: float, call: Callable[[], None]) -> None:
    timer = threading.Timer(delay, call)
    timer.daemon = True
    timer.start()


class Delivery:
    """One event's delivery to one target: attempts, retries on a timer, the dead letter."""

    # Seams for tests: when to run a retry, the clock, the jitter and the dead-letter send.
    schedule: Callable[[float, Callable[[], None]], None] = staticmethod(_timer)
    clock: Callable[[], float] = staticmethod(time.monotonic)
    rng = random.Random()

    def __init__(self, sender: TargetSender, send: Callable, event, trace_header):
        self.sender = sender
        self.send = send
        self.event = event
        self.trace_header = trace_header
        self.started = self.clock()
        self.retries = 0
        self.max_retries, self.max_age = _policy(sender.target)

    def attempt(self) -> None:
        try:
            # `process_event` changes the event it is given (it pops the bus name).
            self.send(self.sender, copy.deepcopy(self.event), self.trace_header)
        except Exception as error:  # every failure is classified, none escapes the timer
            self._failed(classify(error))

    def _failed(self, failure: Failure) -> None:
        target = self.sender.target.get("Id")
        if not failure.retryable:
            LOG.info("events: delivery to %s failed (%s), not retryable", target, failure.code)
            self._dead_letter(failure, exhausted=None)
            return
        if self.retries >= self.max_retries:
            self._dead_letter(failure, exhausted="MaximumRetryAttempts")
            return
        delay = backoff(self.retries + 1, self.rng)
        if self.clock() - self.started + delay > self.max_age:
            self._dead_letter(failure, exhausted="MaximumEventAgeInSeconds")
            return
        self.retries += 1
        LOG.info(
            "events: delivery to %s failed (%s); retry %d of %d in %.1fs",
            target,
            failure.code,
            self.retries,
            self.max_retries,
            delay,
        )
        self.schedule(delay, self.attempt)

    def _dead_letter(self, failure: Failure, exhausted: str | None) -> None:
        dlq = (self.sender.target.get("DeadLetterConfig") or {}).get("Arn")
        LOG.info(
            "events: event %s to target %s not delivered after %d retries (%s%s); %s",
            self.event.get("id") if isinstance(self.event, dict) else None,
            self.sender.target.get("Id"),
            self.retries,
            failure.code,
            f", {exhausted}" if exhausted else "",
            f"sent to {dlq}" if dlq else "dropped (no dead-letter queue)",
        )
        if dlq:
            attributes = {
                "RULE_ARN": self.sender.rule_arn,
                "TARGET_ARN": self.sender.target["Arn"],
                "ERROR_CODE": failure.code,
                "ERROR_MESSAGE": failure.message[:1000],
            }
            if exhausted:
                attributes["EXHAUSTED_RETRY_CONDITION"] = exhausted
                attributes["RETRY_ATTEMPTS"] = str(self.retries)
            try:
                dead_letter(dlq, self.sender, json.dumps(self.event), attributes)
            except Exception:
                LOG.exception("events: the dead-letter queue %s refused the event", dlq)


def _send_to_queue(dlq_arn: str, sender: TargetSender, body: str, attributes: dict) -> None:
    region = dlq_arn.split(":")[3]
    sqs = connect_to(aws_access_key_id=sender.account_id, region_name=region).sqs
    sqs.request_metadata(service_principal="events", source_arn=sender.rule_arn).send_message(
        QueueUrl=sqs_queue_url_for_arn(dlq_arn),
        MessageBody=body,
        MessageAttributes={
            name: {"DataType": "String", "StringValue": value} for name, value in attributes.items()
        },
    )


# The dead-letter send (a seam for tests).
dead_letter: Callable[[str, TargetSender, str, dict], None] = _send_to_queue


def _process_event(original):
    def process_event(self: TargetSender, event, trace_header) -> None:
        Delivery(self, original, event, trace_header).attempt()

    setattr(process_event, _INSTALLED, True)
    process_event.__wrapped__ = original  # type: ignore[attr-defined]
    return process_event


def install() -> None:
    """Wraps `TargetSender.process_event` once."""
    current = TargetSender.process_event
    if getattr(current, _INSTALLED, False):
        return
    TargetSender.process_event = _process_event(current)  # type: ignore[method-assign]
