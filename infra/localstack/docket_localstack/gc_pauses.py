"""How long LocalStack's one Python process stood still for its garbage collector.

A collection of the oldest generation walks every container object the process holds (Step
Functions' executions, moto's tables, the service models), with the interpreter lock held: no
request is read, no provider runs, until it ends. A bench that sees a call reach LocalStack late
can set it against these pauses.

``/_docket/gc``: GET answers, since the last reset, the collections per generation (count, total
and longest ms) and each collection that took at least ``longMs`` (default 100) with when it
began (``atMs``, unix ms), how long it took and what it freed (the newest ``MAX_LONG``); POST
``{"longMs": n}`` changes that bound; DELETE resets.
"""

from __future__ import annotations

import gc
import threading
import time

from docket_localstack import settings_api
from docket_localstack.settings_api import InvalidSetting

MAX_LONG = 10_000


class Pauses:
    """A ``gc.callbacks`` entry that times each collection."""

    def __init__(self, long_ms: float = 100.0):
        self._lock = threading.Lock()
        self.long_ms = long_ms
        self._began: tuple[float, int] | None = None
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

    def view(self) -> dict:
        with self._lock:
            return {
                "longMs": self.long_ms,
                "generations": {
                    str(g): {**s, "totalMs": round(s["totalMs"], 1), "maxMs": round(s["maxMs"], 1)}
                    for g, s in self.by_generation.items()
                },
                "long": list(self.long),
            }

    def configure(self, change: object) -> dict:
        if not isinstance(change, dict) or set(change) != {"longMs"}:
            raise InvalidSetting('expected {"longMs": n}')
        long_ms = change["longMs"]
        if not isinstance(long_ms, (int, float)) or isinstance(long_ms, bool) or long_ms < 0:
            raise InvalidSetting(f"longMs must be a non-negative number, got {long_ms!r}")
        with self._lock:
            self.long_ms = float(long_ms)
        return self.view()

    def reset(self) -> dict:
        with self._lock:
            self._reset()
        return self.view()


PAUSES = Pauses()


def install() -> None:
    """Times every collection from now on and adds ``/_docket/gc`` (once, at LocalStack start)."""
    if PAUSES not in gc.callbacks:
        gc.callbacks.append(PAUSES)
    settings_api.install("/_docket/gc", PAUSES.view, PAUSES.configure, PAUSES.reset)
