"""LocalStack's garbage-collector pauses: timed, and kept short.

A collection of the oldest generation walks every container object the process holds (Step
Functions' executions, moto's tables, the service models), with the interpreter lock held: no
request is read and no provider runs until it ends. In a `make bench-scale` burst of 1,000
documents one came about once a minute and took 1.1 to 1.3 s, and a read sent at its slot
reached LocalStack that much later, next to the following read, which our local Textract's
quota refused. AWS has no such pause. So after each full collection everything it left alive is
frozen (``gc.freeze``: moved to a generation no later collection walks), and the next full
collection walks only what was made since. Objects frozen still die as usual when their last
reference goes; only a reference cycle among objects that had lived through a full collection
is never freed: a leak that grows with the run, which an emulator living as long as a test run
can afford (``maxRssMb`` below says how much; `make bench-scale` prints it).
``{"freeze": false}`` turns that off.

A bench that sees a call reach LocalStack late can set it against the pauses logged here.
``/_docket/gc``: GET answers, since the last reset, the collections per generation (count, total
and longest ms), each collection that took at least ``longMs`` (default 100) with when it began
(``atMs``, unix ms), how long it took and what it freed (the newest ``MAX_LONG``), how many
objects are frozen and the process's peak resident memory (``maxRssMb``); POST ``{"longMs": n,
"freeze": bool}`` (either) changes those settings; DELETE resets the counts.
"""

from __future__ import annotations

import gc
import resource
import threading
import time

from docket_localstack import settings_api
from docket_localstack.settings_api import InvalidSetting

MAX_LONG = 10_000


class Pauses:
    """A ``gc.callbacks`` entry that times each collection."""

    def __init__(self, long_ms: float = 100.0, freeze: bool = True):
        self._lock = threading.Lock()
        self.long_ms = long_ms
        self.freeze = freeze
        self._began: tuple[float, int] | None = None
        # Set after a full collection: the freezer thread freezes what it left alive (not from
        # the callback, which runs inside the collector).
        self.full_collection = threading.Event()
        self._reset()

    def _reset(self) -> None:
        self.by_generation = {g: {"count": 0, "totalMs": 0.0, "maxMs": 0.0} for g in range(3)}
        self.long: list[dict] = []

    def __call__(self, phase: str, info: dict) -> None:
        # Collections do not nest, and the one that runs holds the interpreter lock.
        if phase == "start":
            self._began = (time.perf_counter(), int(time.time() * 1000))
            return
        if self._began is None:
            return
        (began, at_ms), self._began = self._began, None
        ms = (time.perf_counter() - began) * 1000
        generation = info.get("generation", 2)
        with self._lock:
            seen = self.by_generation[generation]
            seen["count"] += 1
            seen["totalMs"] += ms
            seen["maxMs"] = max(seen["maxMs"], ms)
            if ms >= self.long_ms and len(self.long) < MAX_LONG:
                entry = {"atMs": at_ms, "ms": round(ms, 1), "generation": generation}
                self.long.append({**entry, "collected": info.get("collected", 0)})
        if generation == 2 and self.freeze:
            self.full_collection.set()

    def freezer(self) -> None:
        """Freezes what each full collection left alive (a daemon thread's loop)."""
        while True:
            self.full_collection.wait()
            self.full_collection.clear()
            if self.freeze:
                gc.freeze()

    def view(self) -> dict:
        with self._lock:
            return {
                "longMs": self.long_ms,
                "generations": {
                    str(g): {**s, "totalMs": round(s["totalMs"], 1), "maxMs": round(s["maxMs"], 1)}
                    for g, s in self.by_generation.items()
                },
                "long": list(self.long),
                "freeze": self.freeze,
                "frozen": gc.get_freeze_count(),
                # The process's peak resident memory (Linux: KiB), what freezing may cost.
                "maxRssMb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }

    def configure(self, change: object) -> dict:
        if not isinstance(change, dict) or not change or not set(change) <= {"longMs", "freeze"}:
            raise InvalidSetting('expected {"longMs": n, "freeze": bool} (either)')
        long_ms = change.get("longMs", self.long_ms)
        if not isinstance(long_ms, (int, float)) or isinstance(long_ms, bool) or long_ms < 0:
            raise InvalidSetting(f"longMs must be a non-negative number, got {long_ms!r}")
        freeze = change.get("freeze", self.freeze)
        if not isinstance(freeze, bool):
            raise InvalidSetting(f"freeze must be true or false, got {freeze!r}")
        with self._lock:
            self.long_ms, self.freeze = float(long_ms), freeze
        return self.view()

    def reset(self) -> dict:
        with self._lock:
            self._reset()
        return self.view()


PAUSES = Pauses()


def install() -> None:
    """Times every collection from now on, freezes what each full one leaves alive, and adds
    ``/_docket/gc`` (once, at LocalStack start)."""
    if PAUSES in gc.callbacks:
        return
    gc.callbacks.append(PAUSES)
    threading.Thread(target=PAUSES.freezer, name="docket-gc-freezer", daemon=True).start()
    settings_api.install("/_docket/gc", PAUSES.view, PAUSES.configure, PAUSES.reset)
