"""The items of a Distributed Map run: JSON Lines from the ItemReader, and batches of them.

Two AWS features that community LocalStack 2026.3 lacks (its parser rejects them; see
`sfn_map_definition`, which takes them out of the definition for `sfn_map_run` to apply):

- **`ReaderConfig.InputType: "JSONL"`**: each non-blank line of the S3 object is one item, at
  most `MaxItems` of them; a line that is not JSON fails the run with `States.ItemReaderFailed`.
- **`ItemBatcher`**: the items (after `ItemSelector`) are cut, in order, into batches of at most
  `MaxItemsPerBatch` items and `MaxInputBytesPerBatch` bytes; each child gets
  `{"Items": [...], "BatchInput": ...}` (`BatchInput` only when declared, its `.$` keys
  resolved against the Map state's input).
"""

from __future__ import annotations

import json
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
from localstack.services.stepfunctions.asl.component.state.state_execution.state_map.item_reader.resource_eval.resource_output_transformer.resource_output_transformer import (  # noqa: E501
    ResourceOutputTransformer,
)
from localstack.services.stepfunctions.asl.eval.environment import Environment
from localstack.services.stepfunctions.asl.eval.event.event_detail import EventDetails
from localstack.services.stepfunctions.asl.utils.json_path import extract_json

# AWS's bound on a batch's bytes.
MAX_BATCH_BYTES = 256 * 1024


def _reader_failed(env: Environment, cause: str) -> FailureEventException:
    name = StatesErrorName(typ=StatesErrorNameType.StatesItemReaderFailed)
    return FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=name,
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(
                mapRunFailedEventDetails=MapRunFailedEventDetails(
                    error=name.error_name, cause=cause
                )
            ),
        )
    )


def json_lines(text: str) -> list[Any]:
    """The JSON value of each non-blank line; ValueError names the first line that is not one."""
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except ValueError as e:
            raise ValueError(f"line {number} is not JSON: {e}") from None
    return items


class ResourceOutputTransformerJsonl(ResourceOutputTransformer):
    """An S3 object of JSON Lines as the run's items (`InputType: JSONL`)."""

    def _eval_body(self, env: Environment) -> None:
        reader_config = env.stack.pop()
        text: str = env.stack.pop()
        try:
            items = json_lines(text)
        except ValueError as e:
            raise _reader_failed(env, f"Attempting to read JSON Lines: {e}") from None
        env.stack.append(items[: reader_config["MaxItemsValue"]])


def _resolved(template: Any, state_input: Any) -> Any:
    """A JSONPath payload template: keys ending in `.$` take the value at their path."""
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            if key.endswith(".$") and isinstance(value, str):
                out[key[:-2]] = extract_json(value, state_input)
            else:
                out[key] = _resolved(value, state_input)
        return out
    if isinstance(template, list):
        return [_resolved(v, state_input) for v in template]
    return template


def _limit(batcher: dict, field: str, state_input: Any) -> int | None:
    if field in batcher:
        return int(batcher[field])
    path = batcher.get(f"{field}Path")
    return int(extract_json(path, state_input)) if path else None


def batches(items: list[Any], batcher: dict, state_input: Any) -> list[dict]:
    """`items` cut into the children's inputs that `batcher` (an ItemBatcher) asks for."""
    max_items = _limit(batcher, "MaxItemsPerBatch", state_input)
    max_bytes = _limit(batcher, "MaxInputBytesPerBatch", state_input) or MAX_BATCH_BYTES
    if "BatchInput" in batcher:
        shared = {"BatchInput": _resolved(batcher["BatchInput"], state_input)}
    else:
        shared = {}
    out: list[dict] = []
    current: list[Any] = []
    for item in items:
        candidate = {"Items": [*current, item], **shared}
        too_many = max_items is not None and len(candidate["Items"]) > max_items
        too_big = len(json.dumps(candidate).encode()) > max_bytes
        if current and (too_many or too_big):
            out.append({"Items": current, **shared})
            current = [item]
        else:
            current = candidate["Items"]
    if current:
        out.append({"Items": current, **shared})
    return out
