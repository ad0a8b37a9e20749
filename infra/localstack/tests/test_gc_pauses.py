"""Unit tests of the garbage collector's pause log (no LocalStack running needed; run with the
project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_gc_pauses.py
"""

import gc
import unittest

from docket_localstack.gc_pauses import Pauses
from docket_localstack.settings_api import InvalidSetting


class GcPauses(unittest.TestCase):
    def test_a_full_collection_is_counted_and_a_long_one_listed_with_when(self):
        pauses = Pauses(long_ms=0)
        gc.callbacks.append(pauses)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(pauses)
        seen = pauses.view()
        self.assertEqual(seen["generations"]["2"]["count"], 1)
        self.assertGreater(seen["generations"]["2"]["totalMs"], 0)
        [long] = [p for p in seen["long"] if p["generation"] == 2]
        self.assertGreater(long["atMs"], 1_700_000_000_000)
        self.assertEqual(pauses.reset()["long"], [])

    def test_only_pauses_of_at_least_long_ms_are_listed(self):
        pauses = Pauses(long_ms=60_000)
        pauses("start", {"generation": 0})
        pauses("stop", {"generation": 0, "collected": 3})
        seen = pauses.view()
        self.assertEqual(seen["generations"]["0"]["count"], 1)
        self.assertEqual(seen["long"], [])

    def test_the_bound_is_changed_only_to_a_number(self):
        pauses = Pauses()
        self.assertEqual(pauses.configure({"longMs": 5})["longMs"], 5.0)
        for bad in ({"longMs": -1}, {"longMs": "5"}, {"other": 1}, None):
            with self.assertRaises(InvalidSetting):
                pauses.configure(bad)


if __name__ == "__main__":
    unittest.main()
