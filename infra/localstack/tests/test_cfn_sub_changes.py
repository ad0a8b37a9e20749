"""A changed parameter or resource behind an Fn::Sub makes the Sub changed at modelling."""

import unittest
from types import SimpleNamespace
from typing import Any

from localstack.services.cloudformation.engine.v2.change_set_model import (
    ChangeSetModel,
    ChangeType,
    NodeArray,
    Nothing,
    Scope,
    TerminalValueUnchanged,
)

from docket_localstack import cfn_sub_changes
from docket_localstack.cfn_sub_changes import fn_sub_change, referenced


class Model:
    """What the rule reads of a change set model: parameters and resources by change type."""

    def __init__(self, parameters: dict, resources: dict):
        self.parameters = parameters
        self.resources = resources
        self._before_template: dict = {"Resources": {n: {} for n in resources}}
        self._after_template: dict = {"Resources": {n: {} for n in resources}}

    def _retrieve_parameter_if_exists(self, parameter_name):
        change = self.parameters.get(parameter_name)
        return Nothing if change is None else SimpleNamespace(change_type=change)

    def _retrieve_or_visit_resource(self, resource_name):
        return SimpleNamespace(change_type=self.resources[resource_name])


def text(value: str):
    return TerminalValueUnchanged(scope=Scope(), value=value)


MODEL: Any = Model(
    parameters={"CodeKeyPrefix": ChangeType.MODIFIED, "Stage": ChangeType.UNCHANGED},
    resources={"OcrFunction": ChangeType.UNCHANGED, "RawBucket": ChangeType.MODIFIED},
)


class SubChanges(unittest.TestCase):
    def test_the_names_a_template_references(self):
        self.assertEqual(
            referenced("${CodeKeyPrefix}/a ${RawBucket.Arn} ${!Literal} ${AWS::Region} ${Stage}"),
            ["CodeKeyPrefix", "RawBucket", "Stage"],
        )

    def test_as_shipped_a_changed_parameter_behind_a_sub_is_unchanged(self):
        self.assertEqual(
            cfn_sub_changes._ORIGINAL(MODEL, text("${CodeKeyPrefix}/ocr.zip")),
            ChangeType.UNCHANGED,
        )

    def test_a_changed_parameter_or_resource_makes_the_sub_modified(self):
        self.assertEqual(
            fn_sub_change(MODEL, text("${CodeKeyPrefix}/ocr.zip")), ChangeType.MODIFIED
        )
        self.assertEqual(
            fn_sub_change(MODEL, text("${RawBucket.Arn}/inbox/*")), ChangeType.MODIFIED
        )

    def test_unchanged_references_pseudo_parameters_and_literals_leave_it_unchanged(self):
        for template in ["docket ${Stage}", "${AWS::StackName}-ocr", "${!CodeKeyPrefix}", "x"]:
            self.assertEqual(fn_sub_change(MODEL, text(template)), ChangeType.UNCHANGED, template)

    def test_a_name_the_subs_own_map_binds_is_not_looked_up(self):
        variables: Any = SimpleNamespace(bindings={"CodeKeyPrefix": text("fixed")})
        arguments = NodeArray(
            scope=Scope(),
            change_type=ChangeType.UNCHANGED,
            array=[text("${CodeKeyPrefix}/ocr.zip"), variables],
        )
        self.assertEqual(fn_sub_change(MODEL, arguments), ChangeType.UNCHANGED)

    def test_install_replaces_the_models_rule(self):
        before = ChangeSetModel._resolve_intrinsic_function_fn_sub
        self.addCleanup(setattr, ChangeSetModel, "_resolve_intrinsic_function_fn_sub", before)
        cfn_sub_changes.install()
        cfn_sub_changes.install()
        self.assertIs(ChangeSetModel._resolve_intrinsic_function_fn_sub, fn_sub_change)


if __name__ == "__main__":
    unittest.main()
