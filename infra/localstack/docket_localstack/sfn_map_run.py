"""A Distributed Map run that scales to thousands of items and fails past its tolerated failures.

Two gaps of community LocalStack 2026.3's Distributed Map (`ProcessorConfig.Mode: DISTRIBUTED`):

- **Thousands of items hang.** A worker takes its next item by calling itself
  (`DistributedItemProcessorWorker._eval_pool`), one Python frame per item. Past about 990 items
  per worker the thread dies of `RecursionError` holding an item it never closed, and the Map
  waits for it for ever (the execution stays RUNNING). With the default `MaxConcurrency` (0) it
  also starts one thread per item.
- **Failed items are ignored.** A child that failed becomes `null` in the Map's output and the
  Map succeeds, whatever `ToleratedFailureCount`/`ToleratedFailurePercentage` say. On AWS a
  Map Run fails with `States.ExceedToleratedFailureThreshold` when its failed (or timed-out)
  items exceed a declared threshold, or any item failed when none is declared (both default to
  0); the error reaches the Map state's Retry and Catch.

`install()` replaces `DistributedItemProcessorWorker._eval_pool` with a loop that always closes
the item it holds (an exception becomes the item's output, which ends the run as LocalStack's own
worker errors do), replaces `DistributedIterationComponent._map_run` to start at most
`MAX_WORKERS` workers when `MaxConcurrency` is 0 and to check the thresholds once every item
ended, and wraps `StateMap.from_state_props` to note which thresholds the definition declared
(LocalStack fills in 0 for a missing one). Differences from AWS: the threshold is checked when
every item has ended, not as soon as it is exceeded; a tolerated failed item is still `null` in
the output. No LocalStack file is changed.
"""

from __future__ import annotations

import os
from typing import Any

from localstack.aws.api.stepfunctions import HistoryEventType, MapRunFailedEventDetails
from localstack.services.stepfunctions.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from localstack.services.stepfunctions.asl.component.common.error_name.states_error_name import (
    StatesErrorName,
)
from localstack.services.stepfunctions.asl.component.common.error_name.states_error_name_type import (  # noqa: E501
    StatesErrorNameType,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.iteration.distributed_iteration_component import (  # noqa: E501
    DistributedIterationComponent,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.iteration.itemprocessor.distributed_item_processor_worker import (  # noqa: E501
    DistributedItemProcessorWorker,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.iteration.job import (  # noqa: E501
    JobPool,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.state_map import (  # noqa: E501
    StateMap,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.tolerated_failure import (  # noqa: E501
    ToleratedFailureCountDecl,
    ToleratedFailurePercentageDecl,
)
from localstack.services.stepfunctions.asl.eval.event.event_detail import EventDetails

_INSTALLED = "_docket_map_run"

# Workers of one Map run when MaxConcurrency is 0 (AWS runs up to 10,000 children at once; a
# local machine runs each child in threads of its own).
MAX_WORKERS = int(os.environ.get("DOCKET_SFN_MAP_WORKERS", "16"))

THRESHOLD_ERROR = StatesErrorNameType.StatesExceedToleratedFailureThreshold


def exceeded(failed: int, total: int, count: int | None, percentage: float | None) -> str | None:
    """Why `failed` of `total` items fail the Map Run, or None. A threshold is None when the
    definition does not declare it; with neither declared, one failure is too many."""
    if count is None and percentage is None:
        return f"{failed} items failed; none may" if failed > 0 else None
    if count is not None and failed > count:
        return f"{failed} items failed; ToleratedFailureCount is {count}"
    if percentage is not None and total and failed * 100 / total > percentage:
        return (
            f"{failed} of {total} items failed ({failed * 100 / total:.1f}%); "
            f"ToleratedFailurePercentage is {percentage:g}"
        )
    return None


def _eval_pool(self: DistributedItemProcessorWorker, job: Any, worker_frame: Any) -> None:
    """The worker's loop: each item in a frame of its own, until none is left, one failed
    beyond repair, or the worker was stopped."""
    try:
        while job is not None:
            job_frame = worker_frame.open_inner_frame()
            self._eval_job(env=job_frame, job=job)
            worker_frame.delete_frame(job_frame)
            if isinstance(job.job_output, Exception) or self.stopped():
                break
            following = self._job_pool.next_job()
            if following is None:
                break
            self._job_pool.close_job(job)
            job = following
    except Exception as error:  # never leave an item open: the run would wait for it for ever
        if job is not None:
            job.job_output = error
    finally:
        # As LocalStack's: the frame is deleted before the last job closes, so the Map state
        # finds its environment updated when the pool says every job ended.
        self._env.delete_frame(worker_frame)
        if job is not None:
            self._job_pool.close_job(job)


def _map_run(self: DistributedIterationComponent, env: Any, eval_input: Any) -> None:
    items: list = env.stack.pop()
    record = eval_input.map_run_record
    pool = JobPool(job_program=self._get_iteration_program(), job_inputs=items)
    concurrency = record.max_concurrency
    workers = min(len(items), concurrency if concurrency else MAX_WORKERS)
    for _ in range(max(workers, 1) if items else 0):
        self._launch_worker(env=env, eval_input=eval_input, job_pool=pool)
    pool.await_jobs()
    error = pool.get_worker_exception()
    if error is not None:
        raise error

    failed = record.item_counter.failed.get() + record.item_counter.timed_out.get()
    count_declared, percentage_declared = getattr(self, "docket_declared", (False, False))
    why = exceeded(
        failed,
        len(items),
        record.tolerated_failure_count if count_declared else None,
        record.tolerated_failure_percentage if percentage_declared else None,
    )
    if why is not None:
        name = StatesErrorName(typ=THRESHOLD_ERROR)
        raise FailureEventException(
            failure_event=FailureEvent(
                env=env,
                error_name=name,
                event_type=HistoryEventType.MapRunFailed,
                event_details=EventDetails(
                    mapRunFailedEventDetails=MapRunFailedEventDetails(
                        error=name.error_name, cause=why
                    )
                ),
            )
        )
    env.stack.append([closed.job_output for closed in pool.get_closed_jobs()])


def _from_state_props(original):
    def from_state_props(self: StateMap, state_props: Any) -> None:
        original(self, state_props)
        if isinstance(self.iteration_component, DistributedIterationComponent):
            self.iteration_component.docket_declared = (  # type: ignore[attr-defined]
                state_props.get(ToleratedFailureCountDecl) is not None,
                state_props.get(ToleratedFailurePercentageDecl) is not None,
            )

    setattr(from_state_props, _INSTALLED, True)
    return from_state_props


def install() -> None:
    """Replaces the worker loop and the run, and wraps the Map's construction, once."""
    if getattr(StateMap.from_state_props, _INSTALLED, False):
        return
    DistributedItemProcessorWorker._eval_pool = _eval_pool  # type: ignore[method-assign]
    DistributedIterationComponent._map_run = _map_run  # type: ignore[method-assign]
    StateMap.from_state_props = _from_state_props(StateMap.from_state_props)  # type: ignore[method-assign]
