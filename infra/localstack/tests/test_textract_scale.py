"""Unit tests of the scale runs' OCR cache and simulated duration (no LocalStack running needed;
the modules import LocalStack: run with the project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_textract_scale.py
"""

import contextlib
import hashlib
import json
import tempfile
import threading
import time
import unittest
from collections.abc import Iterator
from unittest import mock

from docket_localstack import textract
from docket_localstack.textract_ocr import Line, Page, Word
from docket_localstack.textract_scale import InvalidSetting, Scale, pages_from_json, pages_to_json

PAGES = [
    Page(
        width=1000,
        height=2000,
        lines=[Line(words=[Word("INVOICE", 96.5, (100, 100, 200, 50))])],
    )
]


class Cache(unittest.TestCase):
    def test_pages_survive_their_json(self):
        self.assertEqual(pages_from_json(pages_to_json(PAGES)), PAGES)

    def test_off_by_default_nothing_is_kept_or_counted(self):
        scale = Scale()
        scale.store(b"doc", PAGES)
        self.assertIsNone(scale.cached(b"doc"))
        self.assertEqual((scale.hits, scale.misses), (0, 0))

    def test_on_the_same_bytes_hit_other_bytes_miss(self):
        scale = Scale()
        scale.configure({"cache": True})
        self.assertIsNone(scale.cached(b"doc"))
        scale.store(b"doc", PAGES)
        self.assertEqual(scale.cached(b"doc"), PAGES)
        self.assertIsNone(scale.cached(b"doc2"))
        self.assertEqual(scale.view()["hits"], 1)
        self.assertEqual(scale.view()["misses"], 2)

    def test_a_cache_dir_serves_a_later_process(self):
        with tempfile.TemporaryDirectory() as tmp:
            first = Scale(tmp)
            first.configure({"cache": True})
            first.store(b"doc", PAGES)
            later = Scale(tmp)
            later.configure({"cache": True})
            self.assertEqual(later.cached(b"doc"), PAGES)

    def test_pages_stored_for_a_hash_are_served_for_those_bytes(self):
        scale = Scale()
        sha = hashlib.sha256(b"doc").hexdigest()
        stored = json.loads(pages_to_json(PAGES))
        scale.configure({"cache": True, "store": {"sha256": sha, "pages": stored}})
        self.assertEqual(scale.cached(b"doc"), PAGES)
        self.assertIsNone(scale.cached(b"doc2"))
        bad_stores = [
            {"sha256": "x", "pages": stored},
            {"sha256": sha},
            {"sha256": sha, "pages": [1]},
        ]
        for bad in bad_stores:
            with self.assertRaises(InvalidSetting, msg=repr(bad)):
                scale.configure({"store": bad})

    def test_a_change_of_another_shape_is_refused(self):
        scale = Scale()
        bad: list[object] = [[], {"cache": 1}, {"secondsPerPage": -1}, {"x": 1}]
        for change in bad:
            with self.subTest(change=change), self.assertRaises(InvalidSetting):
                scale.configure(change)
        self.assertEqual(scale.configure({"secondsPerPage": 1.5})["secondsPerPage"], 1.5)
        self.assertEqual(scale.duration(2), 3.0)


def cached_scale(seconds_per_page: float) -> Scale:
    """A scale run's settings with PAGES cached for the document read by `reading_a_pdf`."""
    scale = Scale()
    scale.configure({"cache": True, "secondsPerPage": seconds_per_page})
    scale.store(b"%PDF-doc", PAGES)
    return scale


@contextlib.contextmanager
def reading_a_pdf(scale: Scale, **patched: mock.MagicMock) -> Iterator[None]:
    """The provider's job runner with `scale`'s settings, reading a one-page PDF from S3, and
    each of `patched` (a textract module attribute's name: its stand-in) in place."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(textract, "SCALE", scale))
        stack.enter_context(mock.patch.object(textract, "s3_read", return_value=b"%PDF-doc"))
        stack.enter_context(mock.patch.object(textract, "check_document", return_value="PDF"))
        for name, stand_in in patched.items():
            stack.enter_context(mock.patch.object(textract, name, stand_in))
        yield


class SimulatedDuration(unittest.TestCase):
    def job(self) -> textract.Job:
        return textract.Job(
            job_id="j1",
            account_id="000000000000",
            region="us-east-1",
            s3_object={"Bucket": "b", "Name": "k"},
            job_tag=None,
            notification_channel={},
        )

    def test_a_cached_job_ends_after_its_simulated_duration_without_holding_the_worker(self):
        job = self.job()
        ended = threading.Event()
        real_end = textract.end_job

        def end(*args):
            real_end(*args)
            ended.set()

        ocr = mock.MagicMock()
        with reading_a_pdf(
            cached_scale(0.3), ocr_document=ocr, end_job=mock.MagicMock(side_effect=end)
        ):
            started = time.monotonic()
            textract.run_job(job)
            returned = time.monotonic() - started
            self.assertEqual(job.status, "IN_PROGRESS")
            self.assertTrue(ended.wait(5))
            took = time.monotonic() - started
        ocr.assert_not_called()
        self.assertLess(returned, 0.2, "the worker is free before the job ends")
        self.assertGreaterEqual(took, 0.3)
        self.assertEqual((job.status, job.pages), ("SUCCEEDED", 1))

    def test_a_held_job_ends_soon_after_its_duration_is_lowered(self):
        scale = cached_scale(3600)
        job = self.job()
        ended = threading.Event()
        with reading_a_pdf(scale, end_job=mock.MagicMock(side_effect=lambda *a: ended.set())):
            textract.run_job(job)
            self.assertFalse(ended.wait(1.5), "held by the hour a page")
            released = time.monotonic()
            scale.configure({"secondsPerPage": None})
            self.assertTrue(ended.wait(5), "let go when the duration is lowered")
        self.assertLess(time.monotonic() - released, 1.5)

    def test_a_synchronous_read_waits_out_a_duration_lowered_meanwhile(self):
        scale = Scale()
        scale.configure({"secondsPerPage": 3600})
        threading.Timer(0.3, scale.configure, ({"secondsPerPage": 0.1},)).start()
        started = time.monotonic()
        scale.wait_read(2, started)
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertLess(time.monotonic() - started, 1.5)

    def test_without_a_simulated_duration_the_job_ends_on_the_worker(self):
        job = self.job()
        with reading_a_pdf(Scale(), ocr_document=mock.MagicMock(return_value=PAGES)):
            textract.run_job(job)
        self.assertEqual((job.status, job.pages), ("SUCCEEDED", 1))


if __name__ == "__main__":
    unittest.main()
