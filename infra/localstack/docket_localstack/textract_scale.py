"""Scale runs of our local Textract: OCR served from a content-hash cache, with a simulated job
duration per page, so that a burst of documents measures the orchestration and the quotas, not
Tesseract on two cores.

Off by default. ``/_docket/textract/scale``: GET reads the settings and the cache's hits and
misses; POST changes them (``{"cache": true, "secondsPerPage": 2.0}``; ``null`` seconds: no
simulated duration) or stores a document's pages under the SHA-256 of its bytes (``{"store":
{"sha256": "<hex>", "pages": [...]}}``, the pages as the disk cache writes them: a bench reads
a long document of known words without OCR); DELETE resets the counters. With the cache on,
a document's pages are kept under the SHA-256 of its bytes, in memory and, when
``DOCKET_TEXTRACT_CACHE_DIR`` is set, on disk (one JSON file a document), so a later
LocalStack reads them without OCR. With
``secondsPerPage``, an asynchronous job ends no sooner than that many seconds a page after its
start (a cached one without holding an OCR worker), and a synchronous call answers no sooner.
The setting is read again at each check of a read that waits (at most ``RECHECK_SECONDS``
apart), so lowering it ends the waiting reads sooner: a test holds every job with a long
duration and lets them all go at the moment it chooses.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from docket_localstack import settings_api
from docket_localstack.settings_api import InvalidSetting
from docket_localstack.textract_ocr import Line, Page, Word

RECHECK_SECONDS = 1.0
"""How often a read that waits out its simulated duration reads the setting again."""


def pages_to_json(pages: list[Page]) -> str:
    return json.dumps([asdict(p) for p in pages])


def pages_from_json(text: str) -> list[Page]:
    return [
        Page(
            width=p["width"],
            height=p["height"],
            lines=[
                Line(
                    words=[Word(w["text"], w["confidence"], tuple(w["box"])) for w in line["words"]]
                )
                for line in p["lines"]
            ],
        )
        for p in json.loads(text)
    ]


class Scale:
    """The settings and the cache, shared by the provider and the HTTP resource."""

    def __init__(self, cache_dir: str | None = None):
        self._lock = threading.Lock()
        self.cache = False
        self.seconds_per_page: float | None = None
        self._memory: dict[str, list[Page]] = {}
        self._dir = Path(cache_dir) if cache_dir else None
        self.hits = 0
        self.misses = 0

    def configure(self, change: object) -> dict:
        if not isinstance(change, dict) or not set(change) <= {"cache", "secondsPerPage", "store"}:
            raise InvalidSetting(
                'expected {"cache": bool, "secondsPerPage": number|null, '
                '"store": {"sha256": hex, "pages": [...]}}'
            )
        if "store" in change:
            self._store_given(change["store"])
        cache = change.get("cache", self.cache)
        seconds = change.get("secondsPerPage", self.seconds_per_page)
        if not isinstance(cache, bool):
            raise InvalidSetting("cache must be true or false")
        valid_number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
        if seconds is not None and not (valid_number and seconds >= 0):
            raise InvalidSetting("secondsPerPage must be a non-negative number or null")
        with self._lock:
            self.cache, self.seconds_per_page = cache, seconds
        return self.view()

    def _store_given(self, stored: object) -> None:
        """Keeps the pages of a `store` change under its SHA-256."""
        if not isinstance(stored, dict):
            raise InvalidSetting('store must be {"sha256": hex, "pages": [...]}')
        key = stored.get("sha256")
        if not isinstance(key, str) or len(key) != 64 or not set(key) <= set("0123456789abcdef"):
            raise InvalidSetting("store.sha256 must be a SHA-256 in lower-case hex")
        try:
            pages = pages_from_json(json.dumps(stored["pages"]))
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidSetting(f"store.pages: {e!r}") from e
        with self._lock:
            self._memory[key] = pages

    def reset(self) -> dict:
        with self._lock:
            self.hits = self.misses = 0
        return self.view()

    def view(self) -> dict:
        with self._lock:
            return {
                "cache": self.cache,
                "secondsPerPage": self.seconds_per_page,
                "hits": self.hits,
                "misses": self.misses,
                "cacheDir": str(self._dir) if self._dir else None,
            }

    def cached(self, data: bytes) -> list[Page] | None:
        """The pages stored for these bytes, if the cache is on and has them (counted)."""
        if not self.cache:
            return None
        key = hashlib.sha256(data).hexdigest()
        with self._lock:
            pages = self._memory.get(key)
        if pages is None and self._dir is not None:
            path = self._dir / f"{key}.json"
            if path.exists():
                pages = pages_from_json(path.read_text())
                with self._lock:
                    self._memory[key] = pages
        with self._lock:
            if pages is None:
                self.misses += 1
            else:
                self.hits += 1
        return pages

    def store(self, data: bytes, pages: list[Page]) -> None:
        """Keeps the pages read from these bytes, if the cache is on."""
        if not self.cache:
            return
        key = hashlib.sha256(data).hexdigest()
        with self._lock:
            self._memory[key] = pages
        if self._dir is not None:
            self._dir.mkdir(parents=True, exist_ok=True)
            tmp = self._dir / f".{key}.{threading.get_ident()}"
            tmp.write_text(pages_to_json(pages))
            tmp.replace(self._dir / f"{key}.json")

    def duration(self, pages: int) -> float:
        """The simulated duration of reading `pages` pages (0 without one)."""
        return (self.seconds_per_page or 0.0) * pages

    def remaining(self, pages: int, started: float) -> float:
        """What is left (s) of the simulated duration of reading `pages` pages begun at `started`
        (``time.monotonic()``), as the setting is now."""
        return self.duration(pages) - (time.monotonic() - started)

    def when_read(self, pages: int, started: float, then: Callable[[], None]) -> None:
        """Calls `then` once the simulated duration of `pages` pages begun at `started` has
        passed: at once on this thread if it has, else on a timer thread, not a worker."""
        left = self.remaining(pages, started)
        if left <= 0:
            then()
            return
        timer = threading.Timer(min(left, RECHECK_SECONDS), self.when_read, (pages, started, then))
        timer.daemon = True
        timer.start()

    def wait_read(self, pages: int, started: float) -> None:
        """Blocks until the simulated duration of `pages` pages begun at `started` has passed."""
        while (left := self.remaining(pages, started)) > 0:
            time.sleep(min(left, RECHECK_SECONDS))


SCALE = Scale(os.environ.get("DOCKET_TEXTRACT_CACHE_DIR"))


def install() -> None:
    """Adds ``/_docket/textract/scale`` (called once, at LocalStack start)."""
    settings_api.install("/_docket/textract/scale", SCALE.view, SCALE.configure, SCALE.reset)
