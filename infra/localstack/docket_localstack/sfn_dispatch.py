"""Points LocalStack's Step Functions dispatch table at provider methods our patches replaced.

LocalStack builds a service's dispatch table from the provider's bound methods when the service
loads. With `EAGER_SERVICE_LOADING` that happens before the `on_infra_start` hooks run, so a
patch of a `StepFunctionsProvider` method (`sfn_redrive`, `sfn_callback_starts`) must also
rebind the operations it changed in a table that is already built.
"""

from __future__ import annotations

from typing import Any


def rebind_loaded_service(plugins: Any, operations: dict[str, str]) -> None:
    """Points an already built dispatch table's `operations` (operation name -> provider method)
    at the patched methods; a service not loaded yet builds its table from the patched class."""
    from localstack.aws.skeleton import ServiceRequestDispatcher

    container = plugins._services.get("stepfunctions")
    service = container.service if container else None
    provider = getattr(service, "_provider", None)
    skeleton = getattr(service, "skeleton", None)
    if provider is None or skeleton is None:
        return  # not loaded yet: its table will be built from the patched class
    for operation, name in operations.items():
        skeleton.dispatch_table[operation] = ServiceRequestDispatcher(
            getattr(provider, name), operation=operation, pass_context=True, expand_parameters=True
        )
