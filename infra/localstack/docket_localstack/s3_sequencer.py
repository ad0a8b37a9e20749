"""S3's EventBridge notifications with a real `sequencer`.

AWS gives every event of an object key a `sequencer`: a hex string that grows with each change of
that key, so that two versions uploaded within the same second (the event `time` has whole
seconds) can still be ordered. LocalStack 2026.3 writes the constant "0062E99A88DC407460" into
every "Object Created" event (`EventBridgeNotifier._get_event_payload`), which makes two versions
of a document uploaded in the same second tie: ingest orders versions by (time, sequencer), and a
tie cannot say which is newer. This replaces the constant with a value that grows for every event
this LocalStack sends (a superset of AWS's per-key guarantee), 18 upper-case hex digits like
AWS's.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

_lock = threading.Lock()
_last = 0
CONSTANT = "0062E99A88DC407460"


def next_sequencer() -> str:
    """A sequencer greater than every one handed out before by this process."""
    global _last
    with _lock:
        _last = max(_last + 1, time.time_ns())
        return f"{_last:018X}"


def with_sequencer(entry: Any) -> Any:
    """`entry` (a PutEvents entry of an S3 event) with a fresh sequencer, if it has one."""
    detail = json.loads(entry.get("Detail") or "{}")
    obj = detail.get("object")
    if isinstance(obj, dict) and "sequencer" in obj:
        obj["sequencer"] = next_sequencer()
        entry["Detail"] = json.dumps(detail)
    return entry


def install() -> None:
    """Wraps LocalStack's EventBridge notifier so that every event carries a fresh sequencer."""
    from localstack.services.s3.notifications import EventBridgeNotifier

    original = EventBridgeNotifier._get_event_payload
    if getattr(original, "docket_sequencer", False):
        return

    def payload(*args: Any, **kwargs: Any) -> Any:
        return with_sequencer(original(*args, **kwargs))

    payload.docket_sequencer = True  # type: ignore[attr-defined]
    EventBridgeNotifier._get_event_payload = staticmethod(payload)  # type: ignore[method-assign]
