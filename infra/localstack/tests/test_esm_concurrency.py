"""A mapping's MaximumConcurrency batches run at once; without it, one at a time (LocalStack's).

The batch handler is a stand-in that blocks until the test lets it end, so each test counts the
batches running at once and whether the poll loop was handed back.
"""

import threading
import time
import unittest
from typing import Any

from docket_localstack.esm_concurrency import LIMIT, concurrent, max_concurrency


class Gate:
    """A batch handler that records each batch and blocks until released."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.seen: list[list[dict]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    def __call__(self, poller: Any, messages: list[dict]) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.seen.append(messages)
        self.release.wait(5)
        with self.lock:
            self.running -= 1


class Poller:
    pass


def wait_for(condition: Any) -> None:
    for _ in range(200):
        if condition():
            return
        time.sleep(0.01)


class MaxConcurrencyTest(unittest.TestCase):
    def test_the_limit_comes_from_scaling_config_and_defaults_to_one(self) -> None:
        self.assertEqual(max_concurrency({"ScalingConfig": {"MaximumConcurrency": 5}}), 5)
        self.assertEqual(max_concurrency({"ScalingConfig": {}}), 1)
        self.assertEqual(max_concurrency({}), 1)
        self.assertEqual(max_concurrency({"ScalingConfig": None}), 1)


class ConcurrentTest(unittest.TestCase):
    def test_batches_run_at_once_up_to_the_limit_and_the_loop_waits_at_it(self) -> None:
        gate, poller = Gate(), Poller()
        setattr(poller, LIMIT, 2)
        handle = concurrent(gate)
        handle(poller, [{"MessageId": "1"}])
        handle(poller, [{"MessageId": "2"}])  # returned at once: the first still runs
        wait_for(lambda: gate.running == 2)
        self.assertEqual(gate.running, 2)

        third = threading.Thread(target=handle, args=(poller, [{"MessageId": "3"}]))
        third.start()
        third.join(0.3)
        self.assertTrue(third.is_alive(), "at the limit, the loop waits")
        self.assertEqual(len(gate.seen), 2)

        gate.release.set()
        third.join(5)
        wait_for(lambda: gate.running == 0)
        self.assertEqual([m[0]["MessageId"] for m in gate.seen], ["1", "2", "3"])
        self.assertEqual(gate.most, 2)

    def test_a_poller_without_a_limit_handles_a_batch_in_place(self) -> None:
        gate, poller = Gate(), Poller()
        gate.release.set()
        caller = threading.current_thread()
        ran_on: list[threading.Thread] = []

        def handler(p: Any, messages: list[dict]) -> None:
            ran_on.append(threading.current_thread())
            gate(p, messages)

        concurrent(handler)(poller, [{"MessageId": "1"}])
        self.assertEqual(ran_on, [caller])

    def test_a_failed_batch_frees_its_slot(self) -> None:
        poller = Poller()
        setattr(poller, LIMIT, 2)
        calls: list[str] = []

        def failing(p: Any, messages: list[dict]) -> None:
            calls.append(messages[0]["MessageId"])
            raise RuntimeError("invoke failed")

        handle = concurrent(failing)
        for n in range(5):
            handle(poller, [{"MessageId": str(n)}])
        wait_for(lambda: len(calls) == 5)
        self.assertEqual(sorted(calls), ["0", "1", "2", "3", "4"])


if __name__ == "__main__":
    unittest.main()
