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
import threading
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
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.iteration.distributed_iteration_component import (  # noqa: E501  # noqa: E501
    DistributedIterationComponent,
    DistributedIterationComponentEvalInput,
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
from localstack.services.stepfunctions.asl.eval.program_state import ProgramError, ProgramTimedOut
from localstack.services.stepfunctions.asl.eval.states import ItemData, MapData

from docket_localstack import sfn_map_definition
from docket_localstack.sfn_map_items import ResourceOutputTransformerJsonl, batches

_INSTALLED = "_docket_map_run"

# Workers of one Map run when MaxConcurrency is 0 (AWS runs up to 10,000 children at once; a
# local machine runs each child in threads of its own).
MAX_WORKERS = int(os.environ.get("DOCKET_SFN_MAP_WORKERS", "16"))

THRESHOLD_ERROR = StatesErrorNameType.StatesExceedToleratedFailureThreshold

# Guards each run record's outcomes (workers of a run record theirs concurrently).
_outcomes_lock = threading.Lock()


def _record_outcome(record: Any, index: int, outcome: dict) -> None:
    with _outcomes_lock:
        if not hasattr(record, "docket_outcomes"):
            record.docket_outcomes = {}
        record.docket_outcomes[index] = outcome


def outcomes(record: Any) -> dict[int, dict]:
    """Each ended child of a run by its index: `status` (SUCCEEDED, FAILED), `input`, and
    `output` or `error` and `cause` (a copy); `sfn_map_results` writes them."""
    with _outcomes_lock:
        return dict(getattr(record, "docket_outcomes", {}))


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


def _eval_job(original):
    def eval_job(self: DistributedItemProcessorWorker, env: Any, job: Any) -> None:
        original(self, env, job)
        state = env.program_state()
        outcome: dict[str, Any] = {"input": job.job_input}
        if isinstance(state, ProgramError):
            details = state.error or {}
            outcome.update(status="FAILED", error=details.get("error"), cause=details.get("cause"))
        elif isinstance(state, ProgramTimedOut):
            outcome.update(status="FAILED", error="States.Timeout", cause=None)
        else:
            outcome.update(status="SUCCEEDED", output=job.job_output)
        _record_outcome(self._map_run_record, job.job_index, outcome)

    setattr(eval_job, _INSTALLED, True)
    return eval_job


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


def _selected(env: Any, eval_input: Any, items: list) -> list:
    """Each item through the Map's ItemSelector (or Parameters), as a worker would apply it."""
    selector = eval_input.item_selector or eval_input.parameters
    if selector is None:
        return items
    state_input = env.stack[-1] if env.stack else env.states.get_input()
    out = []
    for index, item in enumerate(items):
        frame = env.open_inner_frame()
        try:
            frame.states.context_object.context_object_data["Map"] = MapData(
                Item=ItemData(Index=index, Value=item)
            )
            frame.states.reset(input_value=state_input)
            frame.stack.append(state_input)
            selector.eval(frame)
            out.append(frame.stack.pop())
        finally:
            env.delete_frame(frame)
    return out


def _batched(self: Any, env: Any, eval_input: Any, items: list) -> tuple[list, Any]:
    """The jobs of the run and the input its workers get: batches of the selected items, whose
    workers select nothing more, when the Map declares an ItemBatcher."""
    batcher = getattr(self, "docket_batcher", None)
    if batcher is None:
        return items, eval_input
    state_input = env.stack[-1] if env.stack else env.states.get_input()
    jobs = batches(_selected(env, eval_input, items), batcher, state_input)
    plain = DistributedIterationComponentEvalInput(
        state_name=eval_input.state_name,
        max_concurrency=eval_input.max_concurrency,
        input_items=eval_input.input_items,
        parameters=None,
        item_selector=None,
        item_reader=eval_input.item_reader,
        tolerated_failure_count=eval_input.tolerated_failure_count,
        tolerated_failure_percentage=eval_input.tolerated_failure_percentage,
        label=eval_input.label,
        map_run_record=eval_input.map_run_record,
    )
    return jobs, plain


def _failed_items(record: Any) -> int:
    """Failed items: a failed batch counts each of its items."""
    failed = 0
    for outcome in outcomes(record).values():
        if outcome["status"] != "FAILED":
            continue
        given = outcome["input"]
        is_batch = isinstance(given, dict) and isinstance(given.get("Items"), list)
        failed += len(given["Items"]) if is_batch else 1
    return failed


def _map_run(self: DistributedIterationComponent, env: Any, eval_input: Any) -> None:
    items: list = env.stack.pop()
    record = eval_input.map_run_record
    jobs, eval_input = _batched(self, env, eval_input, items)
    pool = JobPool(job_program=self._get_iteration_program(), job_inputs=jobs)
    concurrency = record.max_concurrency
    workers = min(len(jobs), concurrency if concurrency else MAX_WORKERS)
    for _ in range(workers):
        self._launch_worker(env=env, eval_input=eval_input, job_pool=pool)
    pool.await_jobs()
    error = pool.get_worker_exception()
    if error is not None:
        raise error

    failed = _failed_items(record)
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
        component = self.iteration_component
        if not isinstance(component, DistributedIterationComponent):
            return
        component.docket_declared = (  # type: ignore[attr-defined]
            state_props.get(ToleratedFailureCountDecl) is not None,
            state_props.get(ToleratedFailurePercentageDecl) is not None,
        )
        taken = sfn_map_definition.pending(self.name)
        component.docket_batcher = taken.get("batcher")  # type: ignore[attr-defined]
        if taken.get("jsonl") and self.item_reader is not None:
            self.item_reader.resource_output_transformer = ResourceOutputTransformerJsonl()

    setattr(from_state_props, _INSTALLED, True)
    return from_state_props


def install() -> None:
    """Replaces the worker loop and the run, and wraps the Map's construction, once."""
    if getattr(StateMap.from_state_props, _INSTALLED, False):
        return
    DistributedItemProcessorWorker._eval_job = _eval_job(  # type: ignore[method-assign]
        DistributedItemProcessorWorker._eval_job
    )
    DistributedItemProcessorWorker._eval_pool = _eval_pool  # type: ignore[method-assign]
    DistributedIterationComponent._map_run = _map_run  # type: ignore[method-assign]
    StateMap.from_state_props = _from_state_props(StateMap.from_state_props)  # type: ignore[method-assign]
