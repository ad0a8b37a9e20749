"""A Distributed Map's `ResultWriter` writes its children's results to S3, as on AWS.

Community LocalStack 2026.3 throws the results away and writes a `manifest.json` whose
`ResultFiles` are always empty. On AWS the run writes, under `<Prefix>/<map run id>/`, one
`SUCCEEDED_0.json` and one `FAILED_0.json` (JSON arrays, one record per child execution, for
the statuses that have any) and a `manifest.json` naming each file with its size.

`install()` replaces the result writer's `ResourceEvalS3._handle_put_object`; the records come
from the run's outcomes that `sfn_map_run` keeps (`outcomes`). Each record has the fields of
AWS's default (`Transformation: NONE`) form: `ExecutionArn`, `Name`, `StateMachineArn`,
`Status`, `Input` (a JSON string), `InputDetails`, and `Output`/`OutputDetails` for a success or
`Error`/`Cause` for a failure. Differences: no dates or redrive fields; `Input` is the item (or
batch) before `ItemSelector`; files are not split at 5 GB; `WriterConfig` is not applied.
No LocalStack file is changed.
"""

from __future__ import annotations

import json
from typing import Any

from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.result_writer.resource_eval.resource_eval_s3 import (  # noqa: E501
    ResourceEvalS3,
)

from docket_localstack.sfn_map_run import outcomes

_INSTALLED = "_docket_map_results"


def records(map_run_arn: str, map_state_machine_arn: str, ended: dict[int, dict]) -> dict:
    """The result records by status (SUCCEEDED, FAILED), in item order."""
    execution_prefix = map_state_machine_arn.replace(":stateMachine:", ":execution:")
    by_status: dict[str, list[dict]] = {"SUCCEEDED": [], "FAILED": []}
    run_id = map_run_arn.rsplit(":", 1)[-1]
    for index in sorted(ended):
        outcome = ended[index]
        name = f"{run_id}-{index}"
        record: dict[str, Any] = {
            "ExecutionArn": f"{execution_prefix}:{name}",
            "Name": name,
            "StateMachineArn": map_state_machine_arn,
            "Status": outcome["status"],
            "Input": json.dumps(outcome["input"]),
            "InputDetails": {"Included": True},
        }
        if outcome["status"] == "SUCCEEDED":
            record["Output"] = json.dumps(outcome.get("output"))
            record["OutputDetails"] = {"Included": True}
        else:
            record["Error"] = outcome.get("error")
            record["Cause"] = outcome.get("cause")
        by_status[outcome["status"]].append(record)
    return by_status


def _put_object(env: Any, resource_runtime_part: Any, state_credentials: Any) -> None:
    parameters = env.stack.pop()
    env.stack.pop()  # the Map's output, which the files replace
    s3 = ResourceEvalS3._get_s3_client(
        resource_runtime_part=resource_runtime_part, state_credentials=state_credentials
    )
    run = env.map_run_record_pool_manager.get_all().pop()  # as LocalStack picks it
    bucket = parameters["Bucket"]
    prefix = parameters.get("Prefix", "")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    folder = f"{prefix}{run.map_run_arn.split(':')[-1]}/"
    ended = outcomes(run)
    files: dict[str, list[dict]] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    for status, written in records(run.map_run_arn, run.map_state_machine_arn, ended).items():
        if not written:
            continue
        body = json.dumps(written).encode()
        key = f"{folder}{status}_0.json"
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        files[status].append({"Key": key, "Size": len(body)})
    manifest = {"DestinationBucket": bucket, "MapRunArn": run.map_run_arn, "ResultFiles": files}
    key = f"{folder}manifest.json"
    s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(manifest, indent=2).encode())
    env.stack.append(
        {"MapRunArn": run.map_run_arn, "ResultWriterDetails": {"Bucket": bucket, "Key": key}}
    )


def install() -> None:
    """Replaces the result writer's PutObject handler once."""
    if getattr(ResourceEvalS3._handle_put_object, _INSTALLED, False):
        return
    setattr(_put_object, _INSTALLED, True)
    ResourceEvalS3._handle_put_object = staticmethod(_put_object)  # type: ignore[method-assign]
