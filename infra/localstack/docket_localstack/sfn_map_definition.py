"""Distributed Map fields that LocalStack's parser rejects are accepted, and kept for the run.

Community LocalStack 2026.3 parses a definition with a generated ANTLR grammar that has no rule
for several fields AWS accepts in a Distributed Map:

- `"ExecutionType": "EXPRESS"` in `ProcessorConfig` (only `STANDARD` parses);
- an integer `ToleratedFailurePercentage` such as `5` (only `5.0` parses);
- `ItemBatcher` (`MaxItemsPerBatch`, `MaxInputBytesPerBatch`, `BatchInput`);
- `ResultWriter.WriterConfig`;
- `ItemReader.ReaderConfig.InputType: "JSONL"` parses, but LocalStack knows only CSV and JSON.

Regenerating the grammar is not practical, so `install()` wraps `AmazonStateLanguageParser.parse`
(every caller goes through it: definition validation, executions, redrive): a definition that
names one of these is rewritten before it is parsed (`rewrite`), and what the rewrite took out is
kept per state name (state names are unique in a state machine) for `sfn_map_run`, which applies
it when the Map state is built (`pending`). A definition without them is parsed as it is.
DescribeStateMachine still returns the definition as written. LocalStack never reads
`ExecutionType` at run time, so a child of an EXPRESS Map runs as a STANDARD one (no difference
for a child's semantics that our tests rely on). No LocalStack file is changed.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from localstack.services.stepfunctions.asl.parse.asl_parser import AmazonStateLanguageParser

_INSTALLED = "_docket_map_definition"

# A definition names one of these, or it is parsed unchanged.
TRIGGERS = ('"ItemBatcher"', '"EXPRESS"', '"WriterConfig"', '"ToleratedFailurePercentage"', "JSONL")

_pending = threading.local()


def rewrite(definition: dict) -> dict[str, dict]:
    """Rewrites `definition` in place into what LocalStack parses; returns, per Map state name,
    what was taken out: `batcher` (the ItemBatcher), `writer_config`, `jsonl` (True)."""
    kept: dict[str, dict] = {}
    _walk(definition.get("States") or {}, kept)
    return kept


def _walk(states: dict, kept: dict[str, dict]) -> None:
    for name, state in states.items():
        if not isinstance(state, dict):
            continue
        for branch in state.get("Branches") or []:
            _walk(branch.get("States") or {}, kept)
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if isinstance(processor, dict):
            _walk(processor.get("States") or {}, kept)
        if state.get("Type") != "Map":
            continue
        taken: dict[str, Any] = {}
        config = (processor or {}).get("ProcessorConfig") or {}
        if config.get("ExecutionType") == "EXPRESS":
            config["ExecutionType"] = "STANDARD"
        percentage = state.get("ToleratedFailurePercentage")
        if isinstance(percentage, int) and not isinstance(percentage, bool):
            state["ToleratedFailurePercentage"] = float(percentage)
        if "ItemBatcher" in state:
            taken["batcher"] = state.pop("ItemBatcher")
        writer = state.get("ResultWriter")
        if isinstance(writer, dict) and "WriterConfig" in writer:
            taken["writer_config"] = writer.pop("WriterConfig")
            if "Resource" not in writer:
                state.pop("ResultWriter")
        reader_config = (state.get("ItemReader") or {}).get("ReaderConfig") or {}
        if reader_config.get("InputType") == "JSONL":
            reader_config["InputType"] = "JSON"
            taken["jsonl"] = True
        if taken:
            kept[name] = taken


def pending(state_name: str) -> dict:
    """What the rewrite of the definition being parsed took out of Map state `state_name`."""
    return (getattr(_pending, "kept", None) or {}).get(state_name, {})


def _parse(original):
    def parse(definition: str) -> Any:
        if not any(trigger in definition for trigger in TRIGGERS):
            return original(definition)
        try:
            document = json.loads(definition)
        except ValueError:
            return original(definition)  # LocalStack's own error for it
        _pending.kept = rewrite(document)
        try:
            return original(json.dumps(document))
        finally:
            _pending.kept = None

    setattr(parse, _INSTALLED, True)
    parse.__wrapped__ = original  # type: ignore[attr-defined]
    return parse


def install() -> None:
    """Wraps `AmazonStateLanguageParser.parse` once."""
    current = AmazonStateLanguageParser.parse
    if getattr(current, _INSTALLED, False):
        return
    AmazonStateLanguageParser.parse = staticmethod(_parse(current))  # type: ignore[method-assign]
