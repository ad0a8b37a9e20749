"""A changed Description or CodeSha256 of an AWS::Lambda::Version replaces it (a new version)."""

import unittest
from types import SimpleNamespace

from localstack.services.cloudformation.engine.v2.change_set_model import (
    ChangeSetModel,
    ChangeType,
)

from docket_localstack import cfn_lambda_version
from docket_localstack.cfn_lambda_version import LambdaVersionProvider


def replaces(changed: str) -> bool:
    """The v2 engine's decision for an update of a Lambda version that changes `changed` only."""
    properties = SimpleNamespace(
        properties=[
            SimpleNamespace(name="FunctionName", change_type=ChangeType.UNCHANGED),
            SimpleNamespace(name=changed, change_type=ChangeType.MODIFIED),
        ]
    )
    kind = SimpleNamespace(value="AWS::Lambda::Version")
    return ChangeSetModel._resolve_requires_replacement(None, properties, kind)  # type: ignore[arg-type]


class Replacement(unittest.TestCase):
    def setUp(self):
        self.schema = LambdaVersionProvider.SCHEMA
        self.before = list(self.schema["createOnlyProperties"])
        self.addCleanup(self.schema.__setitem__, "createOnlyProperties", self.before)
        # As LocalStack ships it, whatever another test installed.
        unpatched = [p for p in self.before if p not in cfn_lambda_version.REPLACING]
        self.schema["createOnlyProperties"] = unpatched

    def test_unpatched_a_new_description_is_an_in_place_update(self):
        self.assertFalse(replaces("Description"))

    def test_a_new_description_or_code_replaces_the_version(self):
        cfn_lambda_version.install()

        self.assertTrue(replaces("Description"))
        self.assertTrue(replaces("CodeSha256"))
        self.assertFalse(replaces("ProvisionedConcurrencyConfig"))

    def test_install_twice_lists_each_property_once(self):
        cfn_lambda_version.install()
        cfn_lambda_version.install()

        listed = self.schema["createOnlyProperties"]
        self.assertEqual(sorted(listed), sorted(set(listed)))
        self.assertIn("/properties/FunctionName", listed)


if __name__ == "__main__":
    unittest.main()
