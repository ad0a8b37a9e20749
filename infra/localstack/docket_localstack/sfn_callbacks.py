"""A task token's callback that arrives while its Task is still being invoked is kept, as on AWS.

A `.waitForTaskToken` Task with a heartbeat (`HeartbeatSeconds` / `HeartbeatSecondsPath`) in
community LocalStack 2026.3 waits on a heartbeat endpoint that it creates only after the invoked
function has returned (`StateTaskServiceCallback._eval_integration_pattern` calls
`CallbackEndpoint.setup_heartbeat_endpoint`). A `SendTaskSuccess` / `SendTaskFailure` made
before that — by the invoked function itself, or by anyone it handed the token to while it still
ran — sets the endpoint's outcome but notifies no heartbeat endpoint (there is none yet); the new
one then waits for a heartbeat that never comes, and the Task ends `States.HeartbeatTimeout`
although its outcome was delivered. AWS accepts a callback as soon as the token exists.

`install()` wraps `CallbackEndpoint.setup_heartbeat_endpoint`: a heartbeat endpoint created for a
callback endpoint that already has its outcome starts notified, so the wait returns that outcome
at once. (If the outcome comes after the wrap's check, `notify` finds the new heartbeat endpoint
and notifies it, as before.) No LocalStack file is changed.
"""

from __future__ import annotations

from localstack.services.stepfunctions.asl.eval.callback.callback import (
    CallbackEndpoint,
    HeartbeatEndpoint,
)

_INSTALLED = "_docket_early_callbacks"


def _setup_heartbeat_endpoint(original):
    def setup_heartbeat_endpoint(
        self: CallbackEndpoint, heartbeat_seconds: int
    ) -> HeartbeatEndpoint:
        endpoint = original(self, heartbeat_seconds)
        if self.get_outcome() is not None:
            endpoint.notify()
        return endpoint

    setattr(setup_heartbeat_endpoint, _INSTALLED, True)
    return setup_heartbeat_endpoint


def install() -> None:
    """Wraps `CallbackEndpoint.setup_heartbeat_endpoint` once."""
    current = CallbackEndpoint.setup_heartbeat_endpoint
    if getattr(current, _INSTALLED, False):
        return
    CallbackEndpoint.setup_heartbeat_endpoint = _setup_heartbeat_endpoint(current)  # type: ignore[method-assign]
