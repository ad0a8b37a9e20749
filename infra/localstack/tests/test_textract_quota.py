"""Unit tests of the local Textract's quotas (no LocalStack running needed; the module imports
LocalStack: run with the project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_textract_quota.py
"""

import threading
import unittest

from localstack.aws.api import CommonServiceException

from docket_localstack.textract_quota import (
    DEFAULT_MAX_JOBS,
    DEFAULT_TPS,
    InvalidQuota,
    Quotas,
    ThroughputExceeded,
)

START = "StartDocumentTextDetection"
GET = "GetDocumentTextDetection"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class TransactionsPerSecond(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.quotas = Quotas(clock=self.clock)

    def refusal(self, operation: str) -> CommonServiceException:
        with self.assertRaises(CommonServiceException) as caught:
            self.quotas.admit("000000000000", "us-east-1", operation)
        return caught.exception

    def test_defaults_are_aws_us_east_1_quotas(self):
        self.assertEqual(DEFAULT_TPS[START], 15)
        self.assertEqual(DEFAULT_TPS[GET], 25)
        self.assertEqual(DEFAULT_TPS["DetectDocumentText"], 25)
        self.assertEqual(DEFAULT_MAX_JOBS, 600)

    def test_the_call_past_the_quota_in_one_second_is_refused_as_aws_does(self):
        for _ in range(15):
            self.quotas.admit("000000000000", "us-east-1", START)
        error = self.refusal(START)
        self.assertEqual(error.code, "ProvisionedThroughputExceededException")
        self.assertEqual(error.status_code, 400)
        seen = self.quotas.view()["seen"]["us-east-1"]
        self.assertEqual(seen["admitted"][START], 15)
        self.assertEqual(seen["refused"][START], {"ProvisionedThroughputExceededException": 1})

    def test_a_refusal_says_when_and_which_calls_filled_its_second(self):
        quotas = Quotas(clock=self.clock, wall=lambda: self.clock.now + 1_700_000_000)
        quotas.configure({"tps": {START: 2}, "region": "eu-west-3"})
        admitted = []
        for step in (0.0, 0.4, 0.7):
            self.clock.now += step
            admitted.append(quotas.admit("000000000000", "eu-west-3", START))
        self.assertEqual(admitted[1] - admitted[0], 400)
        self.clock.now += 0.2
        with self.assertRaises(ThroughputExceeded) as caught:
            quotas.admit("000000000000", "eu-west-3", START)
        # The first call had left the window when the third came; the second and third fill it.
        self.assertEqual(caught.exception.window_ms, admitted[1:])
        self.assertEqual(caught.exception.refused_ms - admitted[2], 200)

    def test_a_call_counts_when_it_was_received_not_when_it_is_judged(self):
        quotas = Quotas(clock=self.clock, wall=lambda: self.clock.now)
        quotas.configure({"tps": {START: 1}, "region": "eu-west-3"})
        received = (self.clock.now, 5_000)
        self.clock.now += 1.0
        quotas.admit("000000000000", "eu-west-3", START)
        # Judged 1.3 s after it came, but it came 1.0 s before the call above: admitted.
        self.clock.now += 0.3
        self.assertEqual(quotas.admit("000000000000", "eu-west-3", START, received), 5_000)

    def test_a_call_judged_late_is_refused_by_the_calls_on_either_side_of_it(self):
        quotas = Quotas(clock=self.clock, wall=lambda: self.clock.now * 1000)
        quotas.configure({"tps": {START: 2}, "region": "eu-west-3"})
        t0 = self.clock.now
        for at in (0.0, 0.9):
            self.clock.now = t0 + at
            quotas.admit("000000000000", "eu-west-3", START)
        self.clock.now = t0 + 3.0
        late = (t0 + 0.5, 7)
        with self.assertRaises(ThroughputExceeded) as caught:
            quotas.admit("000000000000", "eu-west-3", START, late)
        # 0.0, 0.5 and 0.9 lie within one second: the calls before and after it are named.
        self.assertEqual(caught.exception.refused_ms, 7)
        self.assertEqual(len(caught.exception.window_ms), 2)
        # Received 1.0 s after the first and 0.1 s after the second: it and the second fill
        # (0.9, 1.9] alone, within the quota.
        self.assertEqual(quotas.admit("000000000000", "eu-west-3", START, (t0 + 1.0, 8)), 8)
        # A call the history has forgotten is set against none.
        self.clock.now = t0 + 100.0
        self.assertEqual(quotas.admit("000000000000", "eu-west-3", START, (t0 + 0.95, 9)), 9)

    def test_the_window_slides_a_call_is_admitted_once_the_oldest_is_a_second_old(self):
        for i in range(15):
            self.clock.now = 1000.0 + i * 0.05
            self.quotas.admit("000000000000", "us-east-1", START)
        self.clock.now = 1000.99
        self.refusal(START)
        self.clock.now = 1001.0  # the first call is now a second old
        self.quotas.admit("000000000000", "us-east-1", START)
        self.refusal(START)  # the second is not

    def test_operations_accounts_and_regions_have_quotas_of_their_own(self):
        self.quotas.configure({"tps": {START: 1}})
        self.quotas.admit("000000000000", "us-east-1", START)
        self.quotas.admit("000000000000", "us-east-1", GET)
        self.quotas.admit("111111111111", "us-east-1", START)
        self.quotas.admit("000000000000", "eu-west-1", START)
        self.refusal(START)

    def test_a_quota_of_zero_or_null_turns_the_check_off(self):
        self.quotas.configure({"tps": {START: 0, GET: None}})
        for _ in range(100):
            self.quotas.admit("000000000000", "us-east-1", START)
            self.quotas.admit("000000000000", "us-east-1", GET)

    def test_concurrent_callers_are_never_admitted_past_the_quota(self):
        self.quotas.configure({"tps": {START: 7}})
        admitted = []

        def call():
            try:
                self.quotas.admit("000000000000", "us-east-1", START)
                admitted.append(1)
            except CommonServiceException:
                pass

        threads = [threading.Thread(target=call) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(admitted), 7)
        refused = self.quotas.view()["seen"]["us-east-1"]["refused"][START]
        self.assertEqual(refused["ProvisionedThroughputExceededException"], 33)


class ConcurrentJobs(unittest.TestCase):
    def setUp(self):
        self.quotas = Quotas()
        self.quotas.configure({"maxJobs": 2})

    def test_a_start_past_the_running_jobs_limit_is_refused_until_one_ends(self):
        self.quotas.start_job("000000000000", "us-east-1", START)
        self.quotas.start_job("000000000000", "us-east-1", START)
        with self.assertRaises(CommonServiceException) as caught:
            self.quotas.start_job("000000000000", "us-east-1", START)
        self.assertEqual(caught.exception.code, "LimitExceededException")
        self.assertEqual(caught.exception.status_code, 400)
        self.quotas.end_job("000000000000", "us-east-1")
        self.quotas.start_job("000000000000", "us-east-1", START)
        seen = self.quotas.view()["seen"]["us-east-1"]
        self.assertEqual(seen["jobsRunning"], 2)
        self.assertEqual(seen["peakJobs"], 2)
        self.assertEqual(seen["refused"][START], {"LimitExceededException": 1})

    def test_reset_clears_the_counters_not_the_quotas_nor_the_running_jobs(self):
        self.quotas.start_job("000000000000", "us-east-1", START)
        self.quotas.admit("000000000000", "us-east-1", GET)
        view = self.quotas.reset()
        self.assertEqual(view["maxJobs"], 2)
        seen = view["seen"]["us-east-1"]
        self.assertEqual(seen["admitted"], {})
        self.assertEqual(seen["jobsRunning"], 1)
        self.assertEqual(seen["peakJobs"], 1)


class Regions(unittest.TestCase):
    def test_a_region_of_its_own_has_its_quotas_and_its_counters(self):
        quotas = Quotas()
        quotas.configure({"region": "eu-west-3", "tps": {START: 1}, "maxJobs": 1})
        quotas.admit("000000000000", "eu-west-3", START)
        with self.assertRaises(CommonServiceException):
            quotas.admit("000000000000", "eu-west-3", START)
        quotas.start_job("000000000000", "eu-west-3", START)
        with self.assertRaises(CommonServiceException):
            quotas.start_job("000000000000", "eu-west-3", START)
        for _ in range(2):  # the defaults elsewhere
            quotas.admit("000000000000", "us-east-1", START)
            quotas.start_job("000000000000", "us-east-1", START)
        view = quotas.view()
        self.assertEqual(view["tps"][START], 15)
        self.assertEqual(view["regions"]["eu-west-3"], {"tps": {START: 1}, "maxJobs": 1})
        self.assertEqual(
            view["seen"]["eu-west-3"]["refused"][START],
            {"ProvisionedThroughputExceededException": 1, "LimitExceededException": 1},
        )
        self.assertEqual(view["seen"]["us-east-1"]["refused"], {})
        self.assertEqual(view["seen"]["us-east-1"]["peakJobs"], 2)


class Configure(unittest.TestCase):
    def test_a_change_of_another_shape_is_refused_and_changes_nothing(self):
        quotas = Quotas()
        changes: list[object] = [
            [],
            {"tps": {"AnalyzeExpense": 1}},
            {"tps": {START: -1}},
            {"tps": {START: 1.5}},
            {"maxJobs": True},
            {"jobs": 3},
            {"region": 3, "maxJobs": 1},
        ]
        for change in changes:
            with self.subTest(change=change), self.assertRaises(InvalidQuota):
                quotas.configure(change)
        self.assertEqual(quotas.view()["tps"], DEFAULT_TPS)
        self.assertEqual(quotas.view()["maxJobs"], DEFAULT_MAX_JOBS)


if __name__ == "__main__":
    unittest.main()
