"""Unit tests of the parse-once cache of state machine definitions (the AWS side, executions
that run, is tested from Rust against LocalStack)."""

import json
import types
import unittest

from localstack.services.stepfunctions.asl.parse.asl_parser import AmazonStateLanguageParser

from docket_localstack.sfn_program_cache import Programs, components, fix_heap_keys, install

# A Task with a Retry and a Catch: its retrier counts attempts under its components' heap keys.
DEFINITION = json.dumps(
    {
        "StartAt": "Work",
        "States": {
            "Work": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": "f", "Payload.$": "$"},
                "Retry": [{"ErrorEquals": ["Transient.Dependency"], "MaxAttempts": 3}],
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}],
                "End": True,
            },
            "Failed": {"Type": "Fail", "Error": "Failed"},
        },
    }
)


def parse(definition):
    return AmazonStateLanguageParser.parse(definition)[0]


class ParsedOnce(unittest.TestCase):
    def test_one_definition_is_parsed_once_and_another_apart(self):
        programs = Programs(parse)
        first = programs.program(DEFINITION)
        self.assertIs(programs.program(DEFINITION), first)
        self.assertEqual(programs.parses, 1)
        other = DEFINITION.replace('"MaxAttempts": 3', '"MaxAttempts": 4')
        self.assertIsNot(programs.program(other), first)
        self.assertEqual(programs.parses, 2)

    def test_every_component_has_its_heap_key_before_it_is_shared(self):
        fresh = list(components(parse(DEFINITION)))
        unset = [c for c in fresh if c._EvalComponent__heap_key is None]
        self.assertGreater(len(unset), 5, "a fresh program draws its keys lazily")
        shared = Programs(parse).program(DEFINITION)
        found = list(components(shared))
        self.assertEqual(len(found), len(fresh))
        self.assertEqual([c for c in found if c._EvalComponent__heap_key is None], [])
        self.assertEqual(fix_heap_keys(shared), len(found))

    def test_the_least_recently_used_definition_goes_first(self):
        programs = Programs(lambda definition: object(), size=2)
        a = programs.program("a")
        programs.program("b")
        programs.program("a")
        programs.program("c")
        self.assertIs(programs.program("a"), a)
        self.assertEqual(programs.parses, 3)
        programs.program("b")
        self.assertEqual(programs.parses, 4, "b went out when c came in")

    def test_every_execution_worker_gets_the_one_program(self):
        from localstack.services.stepfunctions.backend.execution_worker import ExecutionWorker

        install()
        install()  # a second install keeps the first cache
        worker = types.SimpleNamespace(
            _evaluation_details=types.SimpleNamespace(
                state_machine_details=types.SimpleNamespace(definition=DEFINITION)
            )
        )
        first = ExecutionWorker._get_evaluation_entrypoint(worker)  # type: ignore[arg-type]
        again = ExecutionWorker._get_evaluation_entrypoint(worker)  # type: ignore[arg-type]
        self.assertIs(again, first)


if __name__ == "__main__":
    unittest.main()
