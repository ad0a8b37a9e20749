"""A state machine's definition is parsed once, not at every execution's start.

Community LocalStack 2026.3 starts each execution on a thread of its own that first parses the
whole definition (`ExecutionWorker._get_evaluation_entrypoint`: ANTLR's Python runtime, then a
preprocessor into evaluation components) and only then records `ExecutionStarted` and runs the
first state. For our pipeline's definition that parse is the slowest part of a start: in a
burst (`make bench-scale`, 2026-12-07), 12 of 300 executions began about 0.9 s after their
StartExecution had been answered, on LocalStack's one Python process at most of a core, and
missed the read slot their start had booked a second ahead. AWS's engine does not pay this.

`install()` memoizes the parse by the definition's text: the same definition gives the same
program. A program is read, not written, by its evaluation: an execution's state lives in its
own `Environment` (its heap keyed by each component's `heap_key`). The one exception is that
key itself, a uid each component draws the first time it is asked (`EvalComponent.heap_key`):
two executions asking at once could draw two, and one would then miss what it stored under the
other. So a program is given every key before it is shared (`fix_heap_keys`). Definitions
come from deployed state machines, so the cache stays small; it is bounded all the same. No
LocalStack file is changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

_INSTALLED = "_docket_parsed_once"
# Far more than the definitions deployed at once (each version of each machine is one).
_DEFINITIONS = 256


class Programs:
    """Parsed programs by definition text, least recently used out first."""

    def __init__(self, parse, size: int = _DEFINITIONS):
        self._parse = parse
        self._size = size
        self._lock = threading.Lock()
        self._programs: OrderedDict[str, Any] = OrderedDict()
        self.parses = 0

    def program(self, definition: str) -> Any:
        """The program of `definition`, parsed (and its heap keys fixed) the first time."""
        with self._lock:
            found = self._programs.get(definition)
            if found is not None:
                self._programs.move_to_end(definition)
                return found
        # Parsed outside the lock (it is slow); two first starts at once may both parse, and
        # the first kept is the one every later start gets.
        program = self._parse(definition)
        fix_heap_keys(program)
        with self._lock:
            self.parses += 1
            kept = self._programs.setdefault(definition, program)
            self._programs.move_to_end(definition)
            while len(self._programs) > self._size:
                self._programs.popitem(last=False)
            return kept


def components(root: Any) -> Iterator[Any]:
    """Every evaluation component reachable from `root` (a program, or any component), once."""
    from localstack.services.stepfunctions.asl.component.component import Component
    from localstack.services.stepfunctions.asl.component.eval_component import EvalComponent

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, EvalComponent):
            yield node
        if isinstance(node, Component):
            stack.extend(vars(node).values())
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple | set | frozenset):
            stack.extend(node)


def fix_heap_keys(root: Any) -> int:
    """Asks every evaluation component reachable from `root` for its `heap_key`, so that each
    draws its uid now, on one thread, and never again; returns how many it asked."""
    asked = 0
    for component in components(root):
        _ = component.heap_key
        asked += 1
    return asked


def install() -> None:
    """Memoizes `ExecutionWorker`'s parse of its definition once."""
    from localstack.services.stepfunctions.asl.parse.asl_parser import (
        AmazonStateLanguageParser,
    )
    from localstack.services.stepfunctions.backend.execution_worker import ExecutionWorker

    current = ExecutionWorker._get_evaluation_entrypoint
    if getattr(current, _INSTALLED, False):
        return
    programs = Programs(lambda definition: AmazonStateLanguageParser.parse(definition)[0])

    def entrypoint(self):
        return programs.program(self._evaluation_details.state_machine_details.definition)

    setattr(entrypoint, _INSTALLED, True)
    ExecutionWorker._get_evaluation_entrypoint = entrypoint  # type: ignore[method-assign]
