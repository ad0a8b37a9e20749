"""Step Functions `RedriveExecution` for Standard workflows, which community LocalStack 2026.3
answers "not included in your license".

A redrive restarts a FAILED, TIMED_OUT or ABORTED execution at the state that did not complete,
with the input that state was entered with, under the same execution ARN, name, start date and
`$$.Execution` context (plus `RedriveCount` and `RedriveTime`, as on AWS). The history goes on
where it stopped: an `ExecutionRedriven` event (with `redriveCount`), then the redriven states,
then a new terminal event. As on AWS, the state machine's `TimeoutSeconds` starts again at the
redrive, and the JSONata variables are those the execution had when it stopped.

Where to restart is read from the history: the last `...StateEntered` event of a top-level state
(state names are unique in a state machine, so a state inside a Map or Parallel cannot be taken
for a top-level one). If that state had already exited (an abort between two states), the
execution restarts at its `Next` with its output; a Choice is evaluated again.

`DescribeExecution` gains `redriveCount`, `redriveDate` (once redriven), `redriveStatus` and
`redriveStatusReason` (AWS's reason texts); `ListExecutions` items gain `redriveCount` and
`redriveDate`, and its `redriveFilter` (REDRIVEN / NOT_REDRIVEN) is applied before paging; the
"Step Functions Execution Status Change" event carries the same four fields, and a redrive sends
one with status RUNNING. `clientToken`: a token seen with a successful redrive of the execution in
the last 15 minutes (the last 10 tokens) answers that redrive's `redriveDate` again and redrives
nothing.

Refused with `ExecutionNotRedrivable` (message = the reason): RUNNING or SUCCEEDED executions, an
execution stopped more than 14 days ago, started more than a year ago, with 24,999 history events
or more, of a deleted state machine; and — unlike AWS — one whose unfinished top-level state is a
Map or Parallel state: AWS reruns only the failed iterations or branches, LocalStack's interpreter
can only rerun the whole state, which would repeat the effects of the iterations that succeeded.
An unknown ARN is `ExecutionDoesNotExist`; an Express execution is `InvalidArn`, as LocalStack's
DescribeExecution and StopExecution answer for it.

How it hooks in: `install()` sets `redrive_execution` and wraps `list_executions` /
`_list_execution_filter` on LocalStack's `StepFunctionsProvider` class and, because
EAGER_SERVICE_LOADING may have built the Step Functions dispatch table before our hook runs,
rebinds those two operations in an already loaded service. It wraps
`Execution.to_describe_output`, `to_execution_list_item` and `_get_events_client` (for the status
change event). The redrive itself is an `ExecutionWorker` whose environment continues the old one
(a copy of its history and id counter, its variables) and whose program starts at the redriven
state. No LocalStack file is changed.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import datetime
import functools
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from docket_localstack.sfn_dispatch import rebind_loaded_service

REDRIVABLE_DAYS = 14
MAX_OPEN_DAYS = 365
MAX_HISTORY_EVENTS = 24_999  # AWS needs room for ExecutionRedriven and one more event
TOKEN_TTL = datetime.timedelta(minutes=15)
TOKENS_KEPT = 10

REASON_RUNNING = "Execution is RUNNING and cannot be redriven"
REASON_SUCCEEDED = "Execution is SUCCEEDED and cannot be redriven"
REASON_PERIOD = "Execution redrivable period exceeded"
REASON_MAX_TIME = "Execution has exceeded the max execution time"
REASON_HISTORY = "Execution history event limit exceeded"
REASON_DELETED = "State machine is in DELETING status"
REASON_MAP_PARALLEL = (
    "Redriving a failure inside the {kind} state '{name}' is not emulated locally (AWS reruns only "
    "the failed iterations or branches; this interpreter could only rerun them all)"
)


@dataclasses.dataclass
class RedriveRecord:
    """What an execution remembers of its redrives (kept on LocalStack's Execution object)."""

    count: int = 0
    date: datetime.datetime | None = None
    # clientToken -> (first use, redriveDate answered), newest last.
    tokens: dict[str, tuple[datetime.datetime, datetime.datetime]] = dataclasses.field(
        default_factory=dict
    )


@dataclasses.dataclass(frozen=True)
class RestartPoint:
    state: str
    input: Any


def record_of(execution: Any) -> RedriveRecord:
    record = getattr(execution, "docket_redrive", None)
    if record is None:
        record = RedriveRecord()
        execution.docket_redrive = record
    return record


def refusal(
    status: str,
    start_date: datetime.datetime,
    stop_date: datetime.datetime | None,
    history_length: int,
    now: datetime.datetime,
) -> str | None:
    """Why AWS would refuse to redrive an execution in this state (its reason text), or None."""
    if status == "RUNNING":
        return REASON_RUNNING
    if status == "SUCCEEDED":
        return REASON_SUCCEEDED
    if now - start_date > datetime.timedelta(days=MAX_OPEN_DAYS):
        return REASON_MAX_TIME
    if stop_date is not None and now - stop_date > datetime.timedelta(days=REDRIVABLE_DAYS):
        return REASON_PERIOD
    if history_length >= MAX_HISTORY_EVENTS:
        return REASON_HISTORY
    return None


def restart_point(
    events: Sequence[Mapping[str, Any]],
    next_of: Callable[[str], str | None],
    start_at: str,
    execution_input: Any,
) -> RestartPoint:
    """Where a redrive starts: the unfinished top-level state and the input it was entered with.

    `next_of(name)` is the `Next` of a top-level state, None for a state that is not top-level,
    "" for an End state or a Choice (whose next state is evaluated, so it runs again).
    """
    for event in reversed(events):
        entered = event.get("stateEnteredEventDetails")
        if entered and next_of(entered["name"]) is not None:
            return RestartPoint(entered["name"], json.loads(entered.get("input") or "null"))
        exited = event.get("stateExitedEventDetails")
        if exited and next_of(exited["name"]):
            return RestartPoint(next_of(exited["name"]) or "", json.loads(exited["output"]))
        if exited and next_of(exited["name"]) == "":
            # An exited Choice or End state: run it again with the input it was entered with.
            return _entered(events, exited["name"]) or RestartPoint(start_at, execution_input)
    return RestartPoint(start_at, execution_input)


def _entered(events: Sequence[Mapping[str, Any]], name: str) -> RestartPoint | None:
    for event in reversed(events):
        entered = event.get("stateEnteredEventDetails")
        if entered and entered["name"] == name:
            return RestartPoint(name, json.loads(entered.get("input") or "null"))
    return None


def context_time(moment: datetime.datetime) -> str:
    """A time as the context object writes it (`StartTime`): UTC, milliseconds, a "Z"."""
    return f"{moment.astimezone(datetime.UTC).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z"


def accepted_token(
    record: RedriveRecord, token: str | None, now: datetime.datetime
) -> datetime.datetime | None:
    """The redriveDate to answer again for a client token already used, or None."""
    if not token or token not in record.tokens:
        return None
    first_use, answered = record.tokens[token]
    return answered if now - first_use <= TOKEN_TTL else None


def remember_token(record: RedriveRecord, token: str | None, now: datetime.datetime) -> None:
    if not token or record.date is None:
        return
    record.tokens[token] = (now, record.date)
    while len(record.tokens) > TOKENS_KEPT:
        record.tokens.pop(next(iter(record.tokens)))


# ---------------------------------------------------------------------------------------------
# LocalStack wiring
# ---------------------------------------------------------------------------------------------

_lock = threading.RLock()
_redrive_filter: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "docket_redrive_filter", default=None
)


def _now() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC)


def _events(execution: Any) -> list[dict]:
    worker = execution.exec_worker
    if worker is None or worker.env is None:
        return []
    return list(worker.env.event_manager.get_event_history())


@functools.lru_cache(maxsize=64)
def _shape(definition: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """(StartAt, {top-level state: (its Next or "" for End and Choice, its type)}) of a definition.

    Cached: DescribeExecution asks for every FAILED execution, and parsing ASL is not cheap.
    """
    from localstack.services.stepfunctions.asl.component.state.state_continue_with import (
        ContinueWithNext,
    )
    from localstack.services.stepfunctions.asl.component.state.state_type import StateType
    from localstack.services.stepfunctions.asl.parse.asl_parser import AmazonStateLanguageParser

    program: Any = AmazonStateLanguageParser.parse(definition)[0]
    states: dict[str, tuple[str, str]] = {}
    for name, state in program.states.states.items():
        follows = state.continue_with
        if state.state_type is not StateType.Choice and isinstance(follows, ContinueWithNext):
            states[name] = (str(follows.next_state.name), state.state_type.name)
        else:
            states[name] = ("", state.state_type.name)
    return str(program.start_at.start_at_name), states


def plan(execution: Any, now: datetime.datetime) -> tuple[str | None, RestartPoint | None]:
    """(refusal reason, restart point) for an execution as it is now."""
    events = _events(execution)
    reason = refusal(
        str(execution.exec_status), execution.start_date, execution.stop_date, len(events), now
    )
    if reason:
        return reason, None
    start_at, states = _shape(execution.state_machine.definition)

    def next_of(name: str) -> str | None:
        return states[name][0] if name in states else None

    point = restart_point(events, next_of, start_at, execution.input_data)
    kind = states[point.state][1]
    if kind in ("Map", "Parallel"):
        return REASON_MAP_PARALLEL.format(kind=kind, name=point.state), None
    return None, point


def _redrive_fields(execution: Any) -> dict[str, Any]:
    record = record_of(execution)
    reason, _ = plan(execution, _now())
    fields: dict[str, Any] = {
        "redriveCount": record.count,
        "redriveStatus": "NOT_REDRIVABLE" if reason else "REDRIVABLE",
    }
    if record.date is not None:
        fields["redriveDate"] = record.date
    if reason:
        fields["redriveStatusReason"] = reason
    return fields


def _redrive_worker_class() -> type:
    from localstack.aws.api.stepfunctions import HistoryEventType
    from localstack.services.stepfunctions.asl.component.eval_component import EvalComponent
    from localstack.services.stepfunctions.asl.eval.environment import Environment
    from localstack.services.stepfunctions.asl.eval.event.event_manager import (
        EventHistoryContext,
        EventManager,
    )
    from localstack.services.stepfunctions.backend.execution_worker import ExecutionWorker
    from localstack.utils.threads import TMP_THREADS

    class RedriveWorker(ExecutionWorker):
        """Runs the program from `point`, continuing `previous`'s history and variables."""

        def __init__(self, previous: Any, point: RestartPoint, record: RedriveRecord, **kwargs):
            super().__init__(**kwargs)
            self._previous = previous
            self._point = point
            self._record = record

        def _get_evaluation_environment(self) -> Environment:
            fresh = super()._get_evaluation_environment()
            context = fresh.states.context_object.context_object_data
            context["Execution"]["RedriveCount"] = self._record.count  # type: ignore[typeddict-unknown-key]
            context["Execution"]["RedriveTime"] = context_time(self._record.date)  # type: ignore[arg-type, typeddict-unknown-key]
            old = self._previous.event_manager
            # A copy, not the old manager: a state still running in the old program (a Task that
            # outlived TimeoutSeconds) must not append to the redriven history.
            manager = EventManager(cloud_watch_logging_session=self._cloud_watch_logging_session)
            manager._history_event_list.extend(old.get_event_history())
            manager._event_id_gen._next_id = old._event_id_gen._next_id
            env = Environment(
                aws_execution_details=fresh.aws_execution_details,
                execution_type=fresh.execution_type,
                context=fresh.states.context_object.context_object_data,
                event_history_context=EventHistoryContext(
                    previous_event_id=manager._event_id_gen._next_id - 1
                ),
                cloud_watch_logging_session=self._cloud_watch_logging_session,
                activity_store=self._activity_store,
                variable_store=copy.deepcopy(self._previous.variable_store),
                local_mock_test_case=self._local_mock_test_case,
            )
            env.event_manager = manager
            env.states.reset(input_value=self._point.input)
            return env

        def _execution_logic(self) -> None:
            program: Any = self._get_evaluation_entrypoint()  # a Program
            self.env = env = self._get_evaluation_environment()
            env.event_manager.add_event(
                context=env.event_history_context,
                event_type=HistoryEventType.ExecutionRedriven,
                event_details={  # type: ignore[arg-type]
                    "executionRedrivenEventDetails": {"redriveCount": self._record.count}
                },
            )
            # Program.eval, but starting at the redriven state (it always starts at StartAt).
            env.next_state_name = self._point.state
            timeout = program.timeout_seconds.timeout_seconds if program.timeout_seconds else None
            runner = threading.Thread(target=EvalComponent.eval, args=(program, env), daemon=True)
            TMP_THREADS.append(runner)  # type: ignore[arg-type]  # as Program.eval does
            runner.start()
            runner.join(timeout=timeout)
            if runner.is_alive():
                env.set_timed_out()
            self._execution_communication.terminated()

    return RedriveWorker


def redrive_execution(
    self: Any, context: Any, execution_arn: str, client_token: str | None = None, **kwargs: Any
) -> dict:
    """The RedriveExecution operation (installed on LocalStack's StepFunctionsProvider)."""
    from localstack.aws.api.stepfunctions import ExecutionNotRedrivable, ExecutionStatus
    from localstack.services.stepfunctions.asl.eval.evaluation_details import EvaluationDetails

    self._validate_state_machine_execution_arn(execution_arn)
    execution = self._get_execution(context=context, execution_arn=execution_arn)
    if execution.sm_type != "STANDARD":
        self._raise_resource_type_not_in_context(resource_type=execution.sm_type)
    with _lock:
        now = _now()
        record = record_of(execution)
        again = accepted_token(record, client_token, now)
        if again is not None:
            return {"redriveDate": again}
        reason, point = plan(execution, now)
        if (
            reason is None
            and execution.state_machine_arn not in self.get_store(context).state_machines
        ):
            reason = REASON_DELETED
        if reason or point is None:
            raise ExecutionNotRedrivable(reason)
        previous_env = execution.exec_worker.env
        record.count += 1
        record.date = now
        remember_token(record, client_token, now)
        worker = _redrive_worker_class()(
            previous=previous_env,
            point=point,
            record=record,
            evaluation_details=EvaluationDetails(
                aws_execution_details=execution._get_start_aws_execution_details(),
                execution_details=execution.get_start_execution_details(),
                state_machine_details=execution.get_start_state_machine_details(),
            ),
            exec_comm=execution._get_start_execution_worker_comm(),
            cloud_watch_logging_session=execution._cloud_watch_logging_session,
            activity_store=execution._activity_store,
            local_mock_test_case=execution.local_mock_test_case,
        )
        execution.exec_worker = worker
        execution.exec_status = ExecutionStatus.RUNNING
        execution.stop_date = None
        execution.output = None
        execution.error = None
        execution.cause = None
        execution.publish_execution_status_change_event()
        worker.start()
        return {"redriveDate": now}


def _wrap_list_executions(original: Callable) -> Callable:
    def list_executions(self: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
        token = _redrive_filter.set(kwargs.pop("redrive_filter", None))
        try:
            return original(self, context, *args, **kwargs)
        finally:
            _redrive_filter.reset(token)

    list_executions.docket_redrive = True  # type: ignore[attr-defined]
    return list_executions


def _wrap_list_filter(original: Callable) -> Callable:
    def _list_execution_filter(ex: Any, *args: Any, **kwargs: Any) -> bool:
        if not original(ex, *args, **kwargs):
            return False
        wanted = _redrive_filter.get()
        redriven = record_of(ex).count > 0
        return wanted is None or (wanted == "REDRIVEN") == redriven

    return staticmethod(_list_execution_filter)


def _with_fields(original: Callable, fields: Callable[[Any], dict]) -> Callable:
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        out.update(fields(self))
        return out

    wrapped.docket_redrive = True  # type: ignore[attr-defined]
    return wrapped


def _list_item_fields(execution: Any) -> dict[str, Any]:
    record = record_of(execution)
    fields: dict[str, Any] = {"redriveCount": record.count}
    if record.date is not None:
        fields["redriveDate"] = record.date
    return fields


class _EventsWithRedrive:
    """An EventBridge client whose PutEvents adds the execution's redrive fields to the detail of
    the status change event (LocalStack builds that detail inline in
    `publish_execution_status_change_event`)."""

    def __init__(self, client: Any, execution: Any):
        self._client = client
        self._execution = execution

    def put_events(self, Entries: list[dict], **kwargs: Any) -> Any:  # boto's parameter name
        for entry in Entries:
            fields = _redrive_fields(self._execution)
            if "redriveDate" in fields:  # the detail's dates are epoch milliseconds
                fields["redriveDate"] = int(fields["redriveDate"].timestamp() * 1000)
            detail = json.loads(entry["Detail"])
            detail.update({"redriveDate": None, "redriveStatusReason": None, **fields})
            entry["Detail"] = json.dumps(detail)
        return self._client.put_events(Entries=Entries, **kwargs)


def _events_client_with_redrive(original: Callable) -> Callable:
    def get_events_client(self: Any) -> Any:
        return _EventsWithRedrive(original(self), self)

    get_events_client.docket_redrive = True  # type: ignore[attr-defined]
    return get_events_client


def install() -> None:
    """Installs the operation and the wrappers (once; called at LocalStack start)."""
    from localstack.services.plugins import SERVICE_PLUGINS
    from localstack.services.stepfunctions.backend.execution import Execution
    from localstack.services.stepfunctions.provider import StepFunctionsProvider

    if getattr(StepFunctionsProvider.list_executions, "docket_redrive", False):
        return
    StepFunctionsProvider.redrive_execution = redrive_execution  # type: ignore[assignment]
    StepFunctionsProvider.list_executions = _wrap_list_executions(  # type: ignore[method-assign]
        StepFunctionsProvider.list_executions
    )
    StepFunctionsProvider._list_execution_filter = _wrap_list_filter(  # type: ignore[method-assign]
        StepFunctionsProvider._list_execution_filter
    )
    Execution.to_describe_output = _with_fields(  # type: ignore[method-assign]
        Execution.to_describe_output, _redrive_fields
    )
    Execution.to_execution_list_item = _with_fields(  # type: ignore[method-assign]
        Execution.to_execution_list_item, _list_item_fields
    )
    Execution._get_events_client = _events_client_with_redrive(  # type: ignore[method-assign]
        Execution._get_events_client
    )
    rebind_loaded_service(
        SERVICE_PLUGINS,
        {"RedriveExecution": "redrive_execution", "ListExecutions": "list_executions"},
    )
