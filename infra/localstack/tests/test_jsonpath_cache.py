"""A JSONPath is parsed once, and reads and writes what it did before."""

import unittest
from typing import cast
from unittest import mock

from jsonpath_ng.ext.parser import ExtentedJsonPathParser
from jsonpath_ng.parser import JsonPathParser
from localstack.services.stepfunctions.asl.component.common.path.result_path import ResultPath
from localstack.services.stepfunctions.asl.eval import environment
from localstack.services.stepfunctions.asl.utils import json_path
from localstack.services.stepfunctions.asl.utils.json_path import (
    NoSuchJsonPathError,
    extract_json,
)
from localstack.utils.json import extract_jsonpath

from docket_localstack import jsonpath_cache

DATA = {"run": {"runId": "r-1", "pages": [{"n": 1}, {"n": 2}]}, "timeout": 45}


def built(parser_class, work):
    """How many parsers of `parser_class` `work` builds."""
    made = []
    original = parser_class.__init__

    def counting(parser, *args, **kwargs):
        made.append(parser)
        original(parser, *args, **kwargs)

    with mock.patch.object(parser_class, "__init__", counting):
        work()
    return len(made)


class Environment:
    """What `ResultPath` reads of a Step Functions environment."""

    def __init__(self, state_input, result):
        self.states = mock.Mock()
        self.states.get_input.return_value = state_input
        self.stack = [result]


class ParsedOnce(unittest.TestCase):
    def setUp(self):
        jsonpath_cache.install()

    def test_a_step_functions_path_builds_its_parser_once(self):
        def evaluate():
            for _ in range(20):
                self.assertEqual(extract_json("$.run.pages[0].n", DATA), 1)
                self.assertEqual(extract_json("$.run.runId", DATA), "r-1")

        # Unpatched, each of the forty evaluations builds a parser (and ply's tables) again.
        self.assertLessEqual(built(ExtentedJsonPathParser, evaluate), 2)

    def test_a_result_path_builds_its_parser_once_and_writes_as_before(self):
        outputs = []

        def evaluate():
            for i in range(20):
                env = Environment({"run": {"runId": "r-1"}}, {"pages": i})
                ResultPath("$.ocr.result")._eval_body(cast(environment.Environment, env))
                outputs.append(env.stack[-1])

        self.assertLessEqual(built(JsonPathParser, evaluate), 1)
        self.assertEqual(outputs[3], {"run": {"runId": "r-1"}, "ocr": {"result": {"pages": 3}}})

    def test_an_event_rules_path_builds_its_parser_once(self):
        import jsonpath_rw.parser

        def evaluate():
            for _ in range(20):
                self.assertEqual(extract_jsonpath(DATA, "$.run.runId"), "r-1")

        self.assertLessEqual(built(jsonpath_rw.parser.JsonPathParser, evaluate), 1)

    def test_values_are_read_as_before(self):
        self.assertEqual(extract_json("$.timeout", DATA), 45)
        self.assertEqual(extract_json("$.run.pages[1].n", DATA), 2)
        self.assertEqual(extract_json("$.run.pages[*].n", DATA), [1, 2])
        self.assertEqual(extract_json("$.run.pages[0]", DATA), {"n": 1})
        with self.assertRaises(NoSuchJsonPathError):
            extract_json("$.run.missing", DATA)

    def test_install_wraps_once(self):
        wrapped = json_path.parse
        jsonpath_cache.install()
        self.assertIs(json_path.parse, wrapped)
