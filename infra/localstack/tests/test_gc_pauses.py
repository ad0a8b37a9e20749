"""Unit tests of the garbage collector's pause log (no LocalStack running needed; run with the
project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_gc_pauses.py
"""

import gc
import threading
import time
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

    def test_the_settings_change_only_to_their_kind(self):
        pauses = Pauses()
        self.assertEqual(pauses.configure({"longMs": 5})["longMs"], 5.0)
        self.assertIs(pauses.configure({"freeze": False})["freeze"], False)
        self.assertEqual(pauses.view()["longMs"], 5.0)
        for bad in ({"longMs": -1}, {"longMs": "5"}, {"freeze": 1}, {"other": 1}, {}, None):
            with self.assertRaises(InvalidSetting):
                pauses.configure(bad)

    def test_what_a_full_collection_leaves_alive_is_frozen_and_walked_no_more(self):
        pauses = Pauses(long_ms=60_000)
        kept = [[i] for i in range(10_000)]  # containers the collector tracks
        gc.callbacks.append(pauses)
        freezer = threading.Thread(target=pauses.freezer, daemon=True)
        freezer.start()
        try:
            gc.collect(1)
            self.assertFalse(pauses.full_collection.is_set())
            before = gc.get_freeze_count()
            gc.collect()
            deadline = time.monotonic() + 5
            while gc.get_freeze_count() < before + len(kept) and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertGreaterEqual(gc.get_freeze_count(), before + len(kept))
            # A frozen object is in no generation a collection walks.
            self.assertFalse(any(o is kept[0] for o in gc.get_objects(generation=2)))
        finally:
            gc.callbacks.remove(pauses)
            pauses.freeze = False
            gc.unfreeze()


if __name__ == "__main__":
    unittest.main()
