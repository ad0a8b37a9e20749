"""A change behind an ``Fn::Sub`` is a change when CloudFormation plans an update, as on AWS.

Community LocalStack 2026.3's v2 engine decides a resource's change type, and whether the change
replaces it, while it models the change set, before it resolves any value. There, an
``Fn::Sub`` is changed only if its own text or variable map changed
(``ChangeSetModel._resolve_intrinsic_function_fn_sub``: "changes referenced by Fn::Sub templates
are only picked up during preprocessing; not at modelling"). A ``${Parameter}`` whose value
changed, or a ``${Resource}`` that changes, leaves it "unchanged". The update itself then applies
the new values, but what hangs on the plan does not happen:

- docket's functions name their code ``S3Key: !Sub "${CodeKeyPrefix}/ocr.zip"``. A deploy of new
  code changes only that parameter: the function is updated, but the plan calls it unchanged, so
  its ``AWS::Lambda::Version`` (``FunctionName: !Ref OcrFunction``, ``Description: !Sub
  "... code ${CodeKeyPrefix} ..."``) is not replaced and no version is published; the state
  machine goes on naming the old versions (``cfn_lambda_version`` makes a changed Description
  replace a version, which needs the Description to be seen as changed).

``install()`` wraps the model's ``Fn::Sub`` rule: when the Sub itself is unchanged, it is as
changed as the most changed of the names its template references (``${Name}`` or
``${Name.Attribute}``; ``${!Literal}`` and ``AWS::`` pseudo parameters reference nothing),
decided as ``Ref`` decides them (a variable of the Sub's own map, a parameter, a resource). No
LocalStack file is changed.
"""

from __future__ import annotations

import re
from typing import Any

from localstack.services.cloudformation.engine.v2 import change_set_model
from localstack.services.cloudformation.engine.v2.change_set_model import (
    ChangeSetModel,
    ChangeType,
    NodeArray,
    TerminalValue,
)

# ${Name} or ${Name.Attribute}; ${!Literal} is written as is, not a reference.
REFERENCE = re.compile(r"\$\{(?!!)([^}.]+)(?:\.[^}]+)?\}")

_ORIGINAL = ChangeSetModel._resolve_intrinsic_function_fn_sub


def referenced(template: str) -> list[str]:
    """The names `template` references, in order, each once (no pseudo parameters)."""
    names: list[str] = []
    for name in REFERENCE.findall(template):
        name = name.strip()
        if not name.startswith("AWS::") and name not in names:
            names.append(name)
    return names


def _template_and_variables(arguments: Any) -> tuple[Any, set[str]]:
    """The Sub's template text (a TerminalValue's value) and the names its own map binds."""
    if isinstance(arguments, NodeArray) and arguments.array:
        template = arguments.array[0]
        bound: set[str] = set()
        if len(arguments.array) > 1:
            bound = set(getattr(arguments.array[1], "bindings", None) or {})
        return template, bound
    return arguments, set()


def fn_sub_change(self: Any, arguments: Any) -> ChangeType:
    """The Sub's change type: its own, else the most changed of what it references."""
    own = _ORIGINAL(self, arguments)
    if own != ChangeType.UNCHANGED:
        return own
    template, bound = _template_and_variables(arguments)
    if not isinstance(template, TerminalValue) or not isinstance(template.value, str):
        return own
    resources = {
        *(self._before_template or {}).get("Resources", {}),
        *(self._after_template or {}).get("Resources", {}),
    }
    for name in referenced(template.value):
        if name in bound:
            continue  # the map's own value: its change is in the Sub's arguments already
        parameter = self._retrieve_parameter_if_exists(parameter_name=name)
        if not change_set_model.is_nothing(parameter):
            change = parameter.change_type
        elif name in resources:
            change = self._retrieve_or_visit_resource(resource_name=name).change_type
        else:
            continue  # not a name of this template: CloudFormation refuses it elsewhere
        if change != ChangeType.UNCHANGED:
            return ChangeType.MODIFIED
    return own


def install() -> None:
    """Replaces the model's Fn::Sub rule; doing it twice changes nothing."""
    ChangeSetModel._resolve_intrinsic_function_fn_sub = fn_sub_change  # type: ignore[method-assign]
