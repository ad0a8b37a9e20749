"""A JSONPath is parsed once, not at every evaluation.

Community LocalStack 2026.3 parses a JSONPath every time it evaluates one: Step Functions for
each `InputPath`, `Parameters` `.$` field, `TimeoutSecondsPath`, `HeartbeatSecondsPath`
(`asl.utils.json_path.extract_json`, through `jsonpath_ng.ext.parse`) and `ResultPath`
(`asl.component.common.path.result_path`, through `jsonpath_ng.parse`), and EventBridge for
each input transformer's path (`localstack.utils.json.extract_jsonpath`, through
`jsonpath_rw.parse`). Each parse builds a new parser, and ply's `yacc` generates its LALR
tables again: about 35 % of LocalStack's CPU samples in a 300-document burst (`make
bench-scale`, profiled on 2026-12-06), which held LocalStack's one Python process at a full
core and the pipeline to about half a document a second. AWS's engines do not pay this.

`install()` replaces those `parse` functions with memoized ones: the same path string gives the
same parsed expression. An expression is only read once built (`find` and `update_or_create`
change the data they are given, never the expression), so sharing it between executions and
threads is safe. The paths come from deployed definitions and rules, so the caches stay small;
they are bounded all the same. No LocalStack file is changed.
"""

from __future__ import annotations

import functools
from types import ModuleType

_INSTALLED = "_docket_parsed_once"
# Far more than the distinct paths of every definition and rule deployed at once.
_PATHS = 4096


def _memoize(module: ModuleType) -> None:
    current = module.parse
    if getattr(current, _INSTALLED, False):
        return
    cached = functools.lru_cache(maxsize=_PATHS)(current)
    setattr(cached, _INSTALLED, True)
    module.parse = cached  # type: ignore[attr-defined]


def modules() -> list[ModuleType]:
    """The modules whose `parse` is looked up at each evaluation."""
    import jsonpath_rw
    from localstack.services.stepfunctions.asl.component.common.path import result_path
    from localstack.services.stepfunctions.asl.utils import json_path

    # (`localstack.utils.json.extract_jsonpath` imports `jsonpath_rw.parse` when it is called.)
    return [json_path, result_path, jsonpath_rw]


def install() -> None:
    """Memoizes each module's `parse` once."""
    for module in modules():
        _memoize(module)
