"""The entry points load what they name (LocalStack finds the CloudFormation ones by name)."""

import inspect
import tomllib
import unittest
from pathlib import Path

from docket_localstack import plugins
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


class InfraStartHooks(unittest.TestCase):
    """A hook that pyproject.toml does not name is never called: LocalStack finds hooks only
    through the installed entry points (two patches once sat unregistered, tested in-process
    but absent from the running LocalStack)."""

    def test_every_register_function_is_an_entry_point(self):
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        points = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
        named = set(points["localstack.hooks.on_infra_start"].values())
        defined = {
            f"docket_localstack.plugins:{name}"
            for name, _ in inspect.getmembers(plugins, inspect.isfunction)
            if name.startswith("register_")
        }
        self.assertGreaterEqual(len(defined), 10)
        self.assertEqual(defined - named, set(), "hooks defined but not registered")
        self.assertEqual(named - defined, set(), "entry points naming no hook")


if __name__ == "__main__":
    unittest.main()
