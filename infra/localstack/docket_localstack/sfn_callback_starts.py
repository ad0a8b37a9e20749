"""A task-token callback sent while another execution is starting is answered, not failed.

Community LocalStack 2026.3 starts an execution's worker thread, and that thread first parses the
definition and only then creates the worker's `env`. In between (tens to hundreds of
milliseconds under load, for a definition of our size) the execution is stored and RUNNING, but
`exec_worker.env` is None. `SendTaskSuccess`, `SendTaskFailure` and `SendTaskHeartbeat` walk the
region's executions and read `exec_worker.env.callback_pool_manager` of each, so a callback sent
while any other execution starts fails `500 InternalError` ("'NoneType' object has no attribute
'callback_pool_manager'"). On AWS a callback to a valid token succeeds whatever other executions
are doing.

`install()` wraps those three operations: when one fails that way while an execution of the
store is starting, it waits for the start (bounded) and runs again. Running again is safe: each
walk stops at the first execution that takes the token, so a walk that met a starting execution
delivered nothing. No LocalStack file is changed.
"""

from __future__ import annotations

import time
from typing import Any

from localstack.services.stepfunctions.provider import StepFunctionsProvider

from docket_localstack.sfn_dispatch import rebind_loaded_service

_INSTALLED = "_docket_callbacks_wait_for_starts"

# The callbacks that walk the executions: operation -> provider method.
CALLBACKS = {
    "SendTaskSuccess": "send_task_success",
    "SendTaskFailure": "send_task_failure",
    "SendTaskHeartbeat": "send_task_heartbeat",
}

# How long a callback waits for starting executions to get their environment.
WAIT_SECONDS = 10.0


def starting(provider: StepFunctionsProvider, context: Any) -> bool:
    """Whether an execution of the context's store has no environment yet."""
    for execution in list(provider.get_store(context).executions.values()):
        worker = execution.exec_worker
        if worker is not None and worker.env is None:
            return True
    return False


def _wait_for_starts(original):
    def callback(self: StepFunctionsProvider, context: Any, *args: Any, **kwargs: Any) -> Any:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                return original(self, context, *args, **kwargs)
            except AttributeError:
                if time.monotonic() >= deadline or not starting(self, context):
                    raise
                time.sleep(0.01)

    setattr(callback, _INSTALLED, True)
    callback.__wrapped__ = original  # type: ignore[attr-defined]
    return callback


def install() -> None:
    """Wraps each callback operation of `StepFunctionsProvider` once."""
    from localstack.services.plugins import SERVICE_PLUGINS

    for name in CALLBACKS.values():
        current = getattr(StepFunctionsProvider, name)
        if not getattr(current, _INSTALLED, False):
            setattr(StepFunctionsProvider, name, _wait_for_starts(current))
    rebind_loaded_service(SERVICE_PLUGINS, CALLBACKS)
