"""An SQS event source mapping's `ScalingConfig.MaximumConcurrency` batches run at once, as on AWS.

On AWS, Lambda polls an SQS queue with several pollers and invokes the function for up to
`MaximumConcurrency` batches at the same time (at least 2, at most 1,000); a batch whose
invocation waits does not hold back the next one. Community LocalStack 2026.3 runs one poller
thread per mapping (`EsmWorker.poller_loop`) that receives a batch, invokes the function, waits
for the answer, deletes the batch, and only then receives again: one batch at a time, whatever
the mapping says. Ingest waits in its invocation for an upload's turn at the pacer (up to a few
seconds), so locally every later upload waited behind it, and one due just before its booked
turn (`docket_core::admitted::starts`) came too late for it.

`install()` wraps two LocalStack functions:
- `EsmWorkerFactory.get_esm_worker`: the SQS poller of a mapping with a `MaximumConcurrency`
  above one is given that limit;
- `SqsPoller.handle_messages`: such a poller hands each batch to a thread of its own and
  returns, so the loop receives the next batch at once, while fewer than the limit are running;
  at the limit it waits for one to end before it receives again (a received message's
  visibility timeout runs from its receipt, so none is received that cannot be handled).

A mapping without `ScalingConfig` keeps LocalStack's one batch at a time. Differences from AWS:
the limit is reached at once (AWS scales its pollers up over minutes), and batches of one
mapping share one receive loop. No LocalStack file is changed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

LOG = logging.getLogger(__name__)

LIMIT = "_docket_max_concurrency"
SLOTS = "_docket_batch_slots"


def max_concurrency(esm_config: dict[str, Any]) -> int:
    """The batches a mapping runs at once: its `ScalingConfig.MaximumConcurrency`, else one."""
    scaling = esm_config.get("ScalingConfig") or {}
    limit = scaling.get("MaximumConcurrency")
    return int(limit) if isinstance(limit, int) and limit > 1 else 1


def concurrent(handle: Callable[[Any, list[dict]], None]) -> Callable[[Any, list[dict]], None]:
    """`handle` (a poller's batch handler) run on a thread of its own for a poller with a limit
    above one, at most that many at once; called in place otherwise."""

    def handle_messages(poller: Any, messages: list[dict]) -> None:
        limit = getattr(poller, LIMIT, 1)
        if limit <= 1:
            return handle(poller, messages)
        slots = poller.__dict__.setdefault(SLOTS, threading.BoundedSemaphore(limit))
        slots.acquire()

        def run() -> None:
            try:
                handle(poller, messages)
            except Exception as e:  # as the poll loop would: logged, the batch left to redeliver
                LOG.warning("batch of %d messages failed: %s", len(messages), e)
            finally:
                slots.release()

        threading.Thread(target=run, name="docket-esm-batch", daemon=True).start()
        return None

    return handle_messages


def install() -> None:
    from localstack.services.lambda_.event_source_mapping.esm_worker_factory import (
        EsmWorkerFactory,
    )
    from localstack.services.lambda_.event_source_mapping.pollers.sqs_poller import SqsPoller

    if getattr(SqsPoller.handle_messages, "_docket", False):
        return
    original_worker = EsmWorkerFactory.get_esm_worker

    def get_esm_worker(self: Any) -> Any:
        worker = original_worker(self)
        if isinstance(worker.poller, SqsPoller):
            setattr(worker.poller, LIMIT, max_concurrency(self.esm_config))
        return worker

    handle = concurrent(SqsPoller.handle_messages)
    handle._docket = True  # type: ignore[attr-defined]
    EsmWorkerFactory.get_esm_worker = get_esm_worker  # type: ignore[method-assign]
    SqsPoller.handle_messages = handle  # type: ignore[method-assign]
