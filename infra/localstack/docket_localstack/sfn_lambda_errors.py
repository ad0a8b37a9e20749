"""A Lambda invoke from Step Functions that loses its connection fails retryably, as on AWS.

Community LocalStack 2026.3 invokes a `arn:aws:states:::lambda:invoke` Task's function through its
own boto client. `StateTaskServiceLambda._from_error` names a function error by its `errorType` and
a `ClientError` as `Lambda.<Code>`; anything else falls to the generic mapping, `States.Runtime`.
Under load that client's connection to LocalStack itself can drop (botocore's
`ConnectionClosedError`: "Connection was closed before we received a valid response from endpoint
URL"), and the Task then fails `States.Runtime`, which no Retry may name as transient: a run fails
on a fault of the local emulator. On AWS the same client-side failure of the Lambda call is
`Lambda.SdkClientException`, which every Task of ours retries with backoff (and every function is
safe to run twice, so a call that did reach the function is harmless to repeat).

`install()` wraps `StateTaskServiceLambda._from_error`: a botocore connection or HTTP-client error
(`botocore.exceptions.ConnectionError`, `HTTPClientError` and their subclasses) becomes a
`TaskFailed` named `Lambda.SdkClientException`, its cause the exception's message. Every other error
keeps LocalStack's mapping. No LocalStack file is changed.
"""

from __future__ import annotations

from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.exceptions import HTTPClientError
from localstack.aws.api.stepfunctions import HistoryEventType, TaskFailedEventDetails
from localstack.services.stepfunctions.asl.component.common.error_name.custom_error_name import (
    CustomErrorName,
)
from localstack.services.stepfunctions.asl.component.common.error_name.failure_event import (
    FailureEvent,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service.state_task_service_lambda import (  # noqa: E501
    StateTaskServiceLambda,
)
from localstack.services.stepfunctions.asl.eval.event.event_detail import EventDetails

_INSTALLED = "_docket_lambda_connection_errors"

# The name AWS gives a Lambda call that failed in the client (no answer from the service).
SDK_CLIENT_EXCEPTION = "Lambda.SdkClientException"

# What a lost or refused connection raises in botocore.
CONNECTION_ERRORS = (BotoConnectionError, HTTPClientError)


def _from_error(original):
    def from_error(self: StateTaskServiceLambda, env, ex: Exception) -> FailureEvent:
        if not isinstance(ex, CONNECTION_ERRORS):
            return original(self, env, ex)
        return FailureEvent(
            env=env,
            error_name=CustomErrorName(SDK_CLIENT_EXCEPTION),
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=SDK_CLIENT_EXCEPTION,
                    cause=str(ex),
                    resource=self._get_sfn_resource(),
                    resourceType=self._get_sfn_resource_type(),
                )
            ),
        )

    setattr(from_error, _INSTALLED, True)
    return from_error


def install() -> None:
    """Wraps `StateTaskServiceLambda._from_error` once."""
    current = StateTaskServiceLambda._from_error
    if getattr(current, _INSTALLED, False):
        return
    StateTaskServiceLambda._from_error = _from_error(current)  # type: ignore[method-assign]
