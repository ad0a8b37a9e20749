"""The entry points load what they name (LocalStack finds the CloudFormation ones by name)."""

import unittest

from docket_localstack.plugins import (
    StateMachineAliasProviderPlugin,
    StateMachineVersionProviderPlugin,
)


class CloudFormationPlugins(unittest.TestCase):
    def test_each_loads_the_provider_of_its_resource_type(self):
        for plugin_class in (StateMachineVersionProviderPlugin, StateMachineAliasProviderPlugin):
            with self.subTest(plugin=plugin_class.name):
                plugin = plugin_class()
                plugin.load()
                self.assertEqual(getattr(plugin.factory, "TYPE", None), plugin_class.name)


if __name__ == "__main__":
    unittest.main()
