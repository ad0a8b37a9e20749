"""Amazon Textract's service quotas, enforced by our local Textract as AWS enforces them.

Two kinds, per account and region (AWS general reference, "Amazon Textract endpoints and
quotas", https://docs.aws.amazon.com/general/latest/gr/textract.html, us-east-1 defaults, read
2026-12-03):

- transactions per second per operation: DetectDocumentText 25, StartDocumentTextDetection 15,
  GetDocumentTextDetection 25 (AnalyzeDocument 10, not emulated). A call beyond the quota is
  refused with ``ProvisionedThroughputExceededException`` (HTTP 400), as the Textract developer
  guide's "Handling connection errors" says AWS does. We count calls in a sliding one-second
  window: no second ever holds more admitted calls than the quota. A call counts at the instant
  LocalStack received it (``request_clock``), as AWS counts it at its front door, not when
  LocalStack's busy interpreter came to judge it.
- asynchronous jobs that exist at once: 600. A start while that many jobs are IN_PROGRESS is
  refused with ``LimitExceededException`` (HTTP 400) "until the number of concurrently running
  jobs is below the Amazon Textract service limit" (the exception's documentation).

AWS also answers ``ThrottlingException`` (HTTP 500) when *it* is "temporarily unable to process
the request", which no quota of the caller's decides; inject it with the chaos API
(``/_localstack/chaos/faults``) to test that path.

``/_docket/textract/quotas``: GET reads the quotas and what the provider saw, per region (calls
admitted and refused per operation and exception, jobs running, the most jobs that ran at once,
under ``seen``); POST
changes quotas (``{"tps": {"StartDocumentTextDetection": 2}, "maxJobs": 5}``; a quota of 0 or
null turns that check off), for every region or, with ``"region": "eu-west-3"``, for one (as
AWS's quotas differ by region; a test that lowers them keeps to a region of its own); DELETE
resets the counters (not the quotas).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from localstack.aws.api import CommonServiceException

from docket_localstack import request_clock, settings_api
from docket_localstack.settings_api import InvalidSetting

DEFAULT_TPS = {
    "DetectDocumentText": 25,
    "StartDocumentTextDetection": 15,
    "GetDocumentTextDetection": 25,
}
DEFAULT_MAX_JOBS = 600
WINDOW_SECONDS = 1.0
# How long a call is kept after it was received: longer than any request waits in LocalStack
# before its provider judges it, so that a late one is still set against the calls around it.
HISTORY_SECONDS = 60.0

THROUGHPUT_EXCEEDED = "ProvisionedThroughputExceededException"
LIMIT_EXCEEDED = "LimitExceededException"


class InvalidQuota(InvalidSetting):
    """A quota change that does not have the documented shape."""


class ThroughputExceeded(CommonServiceException):
    """AWS's refusal of a call past an operation's quota, carrying (for the wire log, not the
    caller) when it was judged and when the calls that filled its second were admitted (unix
    ms), so that a bench can tell which call came too soon after which."""

    def __init__(self, refused_ms: int, window_ms: list[int]):
        super().__init__(
            THROUGHPUT_EXCEEDED,
            "The number of requests exceeded your throughput limit. If you want to increase "
            "this limit, contact Amazon Textract.",
            status_code=400,
        )
        self.refused_ms = refused_ms
        self.window_ms = window_ms


def limit_exceeded() -> CommonServiceException:
    return CommonServiceException(
        LIMIT_EXCEEDED, "Open jobs exceed maximum concurrent job limit", status_code=400
    )


@dataclass
class Seen:
    """What the provider saw in one region since the last reset."""

    admitted: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    refused: dict[str, dict[str, int]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(int))
    )
    peak_jobs: int = 0

    def view(self, running: int) -> dict:
        return {
            "admitted": dict(self.admitted),
            "refused": {op: dict(by_code) for op, by_code in self.refused.items()},
            "jobsRunning": running,
            "peakJobs": self.peak_jobs,
        }


class Quotas:
    """The quotas and their counters, shared by the provider and the HTTP resource."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ):
        self._clock = clock
        self._wall = wall
        self._lock = threading.Lock()
        self.tps: dict[str, int | None] = dict(DEFAULT_TPS)
        self.max_jobs: int | None = DEFAULT_MAX_JOBS
        self.regions: dict[str, dict] = {}  # region -> {"tps": {...}[, "maxJobs": n]}
        # (account, region, operation) -> the calls admitted within ``HISTORY_SECONDS``, in
        # the order they were received: (monotonic s, unix ms).
        self._calls: dict[tuple[str, str, str], deque[tuple[float, int]]] = defaultdict(deque)
        self._running: dict[tuple[str, str], int] = defaultdict(int)
        self._seen: dict[str, Seen] = defaultdict(Seen)

    def admit(
        self,
        account: str,
        region: str,
        operation: str,
        received: tuple[float, int] | None = None,
    ) -> int:
        """Counts a call of `operation` at the instant it was `received` (monotonic s, unix ms;
        default: now) and answers that instant (unix ms), or raises ``ThroughputExceeded``
        (ProvisionedThroughputExceededException) when some one-second window holding it would
        hold more calls than the quota. Calls may be judged out of the order they were received
        in (LocalStack's handler threads), so the windows on both sides of it are checked."""
        now = self._clock()
        at, at_ms = received or (now, int(self._wall() * 1000))
        with self._lock:
            limit = self._tps(region, operation)
            calls = self._calls[(account, region, operation)]
            while calls and calls[0][0] <= now - HISTORY_SECONDS:
                calls.popleft()
            i = bisect.bisect_right([t for t, _ in calls], at)
            held = [*list(calls)[:i], (at, at_ms), *list(calls)[i:]]
            if limit:
                # Any window holding this call and `limit` others holds `limit + 1` calls in a row.
                for j in range(max(0, i - limit), i + 1):
                    if j + limit < len(held) and held[j + limit][0] - held[j][0] < WINDOW_SECONDS:
                        self._seen[region].refused[operation][THROUGHPUT_EXCEEDED] += 1
                        others = held[j:i] + held[i + 1 : j + limit + 1]
                        raise ThroughputExceeded(at_ms, [ms for _, ms in others])
            calls.insert(i, (at, at_ms))
            self._seen[region].admitted[operation] += 1
            return at_ms

    def start_job(self, account: str, region: str, operation: str) -> None:
        """Takes a job slot, or raises LimitExceededException (counted against `operation`)."""
        with self._lock:
            running = self._running[(account, region)]
            max_jobs = self.regions.get(region, {}).get("maxJobs", self.max_jobs)
            seen = self._seen[region]
            if max_jobs and running >= max_jobs:
                seen.refused[operation][LIMIT_EXCEEDED] += 1
                raise limit_exceeded()
            self._running[(account, region)] = running + 1
            seen.peak_jobs = max(seen.peak_jobs, self._running_in(region))

    def end_job(self, account: str, region: str) -> None:
        """Gives a job's slot back (the job SUCCEEDED or FAILED)."""
        with self._lock:
            self._running[(account, region)] = max(0, self._running[(account, region)] - 1)

    def _tps(self, region: str, operation: str) -> int | None:
        own = self.regions.get(region, {}).get("tps", {})
        return own[operation] if operation in own else self.tps.get(operation)

    def _running_in(self, region: str) -> int:
        return sum(n for (_, r), n in self._running.items() if r == region)

    def configure(self, change: object) -> dict:
        """Applies a change like ``{"tps": {...}, "maxJobs": n}``; returns the new view."""
        if not isinstance(change, dict) or not set(change) <= {"tps", "maxJobs", "region"}:
            raise InvalidQuota('expected {"tps": {operation: n}, "maxJobs": n[, "region": r]}')
        region = change.get("region")
        if region is not None and not isinstance(region, str):
            raise InvalidQuota("region must be a region name")
        tps = change.get("tps", {})
        if not isinstance(tps, dict):
            raise InvalidQuota("tps must be an object of operation -> calls per second")
        for operation, limit in tps.items():
            if operation not in DEFAULT_TPS:
                raise InvalidQuota(f"no such operation: {operation}")
            check_limit(limit, f"tps.{operation}")
        if "maxJobs" in change:
            check_limit(change["maxJobs"], "maxJobs")
        with self._lock:
            if region is None:
                self.tps.update(tps)
                if "maxJobs" in change:
                    self.max_jobs = change["maxJobs"]
            else:
                own = self.regions.setdefault(region, {"tps": {}})
                own["tps"].update(tps)
                if "maxJobs" in change:
                    own["maxJobs"] = change["maxJobs"]
        return self.view()

    def reset(self) -> dict:
        """Clears what was seen (the quotas and the jobs still running stay)."""
        with self._lock:
            self._seen = defaultdict(Seen)
            for region in {r for (_, r) in self._running}:
                self._seen[region].peak_jobs = self._running_in(region)
        return self.view()

    def view(self) -> dict:
        with self._lock:
            return {
                "tps": dict(self.tps),
                "maxJobs": self.max_jobs,
                "regions": {r: {**q, "tps": dict(q["tps"])} for r, q in self.regions.items()},
                "seen": {r: s.view(self._running_in(r)) for r, s in self._seen.items()},
            }


def check_limit(limit, name: str) -> None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise InvalidQuota(f"{name} must be a non-negative integer or null, got {limit!r}")


QUOTAS = Quotas()


def install() -> None:
    """Adds ``/_docket/textract/quotas`` and the receipt stamp the quotas count by (called once,
    at LocalStack start)."""
    request_clock.install()
    settings_api.install("/_docket/textract/quotas", QUOTAS.view, QUOTAS.configure, QUOTAS.reset)
