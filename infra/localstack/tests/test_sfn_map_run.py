"""A Distributed Map of thousands of items ends, and one whose failures exceed its tolerance fails.

Run by LocalStack's own interpreter in-process.
"""

import json
import logging
import unittest
from typing import Any

import interpreter

from docket_localstack import sfn_map_run
from docket_localstack.sfn_map_run import exceeded

FAIL_ON = "fail"


def distributed_map(**fields: Any) -> dict:
    """A Distributed Map over the input whose child fails on the item "fail" and passes others."""
    return {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": "Check",
                    "States": {
                        "Check": {
                            "Type": "Choice",
                            "Choices": [
                                {"Variable": "$", "StringEquals": FAIL_ON, "Next": "Broken"}
                            ],
                            "Default": "Fine",
                        },
                        "Broken": {"Type": "Fail", "Error": "Item.Broken", "Cause": "on purpose"},
                        "Fine": {"Type": "Pass", "End": True},
                    },
                },
                "End": True,
                **fields,
            }
        },
    }


class MapRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        logging.disable(logging.CRITICAL)  # each failed child logs its failure as an error

    @classmethod
    def tearDownClass(cls):
        logging.disable(logging.NOTSET)

    def setUp(self):
        sfn_map_run.install()
        interpreter.fake_events(self)

    def run_map(self, definition: dict, items: list, seconds: float = 30) -> dict:
        run = interpreter.execution("docket-unit", definition, items)
        run.start()
        return interpreter.finished(self, run, seconds=seconds)

    def test_more_items_than_a_worker_could_recurse_through_all_end(self):
        items = list(range(1200))

        described = self.run_map(distributed_map(MaxConcurrency=1), items, seconds=60)

        self.assertEqual(described["status"], "SUCCEEDED")
        self.assertEqual(json.loads(described["output"]), items)

    def test_without_max_concurrency_every_item_is_processed(self):
        items = [f"doc-{i}" for i in range(300)]

        described = self.run_map(distributed_map(), items)

        self.assertEqual(json.loads(described["output"]), items)

    def test_one_failed_item_fails_a_map_that_declares_no_tolerance(self):
        described = self.run_map(distributed_map(MaxConcurrency=2), ["a", FAIL_ON, "c"])

        self.assertEqual(described["status"], "FAILED")
        self.assertEqual(described["error"], "States.ExceedToleratedFailureThreshold")

    def test_failures_within_the_tolerated_count_succeed_and_beyond_it_fail(self):
        tolerant = distributed_map(ToleratedFailureCount=1)

        within = self.run_map(tolerant, ["a", FAIL_ON, "c"])
        beyond = self.run_map(tolerant, [FAIL_ON, "b", FAIL_ON])

        self.assertEqual(within["status"], "SUCCEEDED")
        self.assertEqual(json.loads(within["output"]), ["a", None, "c"])
        self.assertEqual(beyond["status"], "FAILED")
        self.assertIn("ToleratedFailureCount is 1", beyond["cause"])

    def test_a_catch_on_the_map_state_takes_the_threshold_error(self):
        definition = distributed_map(
            Catch=[{"ErrorEquals": ["States.ExceedToleratedFailureThreshold"], "Next": "Caught"}]
        )
        definition["States"]["Caught"] = {"Type": "Pass", "End": True}

        described = self.run_map(definition, [FAIL_ON])

        self.assertEqual(described["status"], "SUCCEEDED")
        self.assertEqual(
            json.loads(described["output"])["Error"], "States.ExceedToleratedFailureThreshold"
        )


class Thresholds(unittest.TestCase):
    def test_none_declared_tolerates_no_failure(self):
        self.assertIsNone(exceeded(0, 10, None, None))
        self.assertIsNotNone(exceeded(1, 10, None, None))

    def test_a_declared_count_or_percentage_is_exceeded_strictly(self):
        self.assertIsNone(exceeded(2, 10, 2, None))
        self.assertIsNotNone(exceeded(3, 10, 2, None))
        self.assertIsNone(exceeded(2, 10, None, 20))
        self.assertIsNotNone(exceeded(3, 10, None, 20))

    def test_with_both_declared_exceeding_either_fails(self):
        self.assertIsNotNone(exceeded(3, 100, 2, 50))
        self.assertIsNotNone(exceeded(6, 10, 100, 50))
        self.assertIsNone(exceeded(2, 10, 2, 50))


if __name__ == "__main__":
    unittest.main()
