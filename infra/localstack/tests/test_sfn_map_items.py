"""A Distributed Map reads JSON Lines from S3, batches its items and writes its results to S3.

Run by LocalStack's own interpreter in-process; S3 is a dictionary behind the two S3 clients
LocalStack's item reader and result writer make.
"""

import io
import json
import logging
import unittest
from typing import Any
from unittest import mock

import interpreter
from localstack.services.stepfunctions.asl.parse.asl_parser import (
    AmazonStateLanguageParser,
    ASLParserException,
)

from docket_localstack import sfn_map_definition, sfn_map_results, sfn_map_run
from docket_localstack.sfn_map_items import batches, json_lines

BUCKET = "docket-reprocess"
STATE_MAP = "localstack.services.stepfunctions.asl.component.state.state_execution.state_map"


class FakeS3:
    def __init__(self, objects: dict[str, bytes]):
        self.objects = dict(objects)

    def get_object(self, Bucket: str, Key: str) -> dict:  # boto's parameter names
        return {"Body": io.BytesIO(self.objects[f"{Bucket}/{Key}"])}

    def put_object(self, Bucket: str, Key: str, Body: bytes) -> dict:
        self.objects[f"{Bucket}/{Key}"] = Body
        return {}

    def json(self, key: str) -> Any:
        return json.loads(self.objects[f"{BUCKET}/{key}"])


def fake_s3(test: unittest.TestCase, objects: dict[str, bytes]) -> FakeS3:
    s3 = FakeS3(objects)
    for module in ("item_reader", "result_writer"):
        patcher = mock.patch(
            f"{STATE_MAP}.{module}.resource_eval.resource_eval_s3.boto_client_for",
            return_value=s3,
        )
        patcher.start()
        test.addCleanup(patcher.stop)
    return s3


def reprocess_map(**fields: Any) -> dict:
    """A Distributed Map whose child fails on a document named "broken" and echoes others."""
    child = {
        "StartAt": "Check",
        "States": {
            "Check": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.doc", "StringEquals": "broken", "Next": "Broken"}],
                "Default": "Fine",
            },
            "Broken": {"Type": "Fail", "Error": "Doc.Broken", "Cause": "on purpose"},
            "Fine": {"Type": "Pass", "End": True},
        },
    }
    return {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"},
                    **child,
                },
                "ItemReader": {
                    "Resource": "arn:aws:states:::s3:getObject",
                    "ReaderConfig": {"InputType": "JSONL"},
                    "Parameters": {"Bucket": BUCKET, "Key": "manifest.jsonl"},
                },
                "ToleratedFailurePercentage": 50,
                "End": True,
                **fields,
            }
        },
    }


def jsonl(*docs: str) -> bytes:
    return "".join(json.dumps({"doc": d}) + "\n" for d in docs).encode()


class Definitions(unittest.TestCase):
    def setUp(self):
        sfn_map_definition.install()

    def test_fields_the_grammar_lacks_parse_and_are_kept_for_the_run(self):
        definition = reprocess_map(
            ItemBatcher={"MaxItemsPerBatch": 2},
            ResultWriter={
                "Resource": "arn:aws:states:::s3:putObject",
                "Parameters": {"Bucket": BUCKET, "Prefix": "out"},
                "WriterConfig": {"OutputType": "JSON", "Transformation": "NONE"},
            },
        )
        original = AmazonStateLanguageParser.parse.__wrapped__  # type: ignore[attr-defined]
        with self.assertRaises(ASLParserException):  # LocalStack alone refuses it
            original(json.dumps(definition))

        AmazonStateLanguageParser.parse(json.dumps(definition))

        kept = sfn_map_definition.rewrite(definition)
        self.assertEqual(
            kept,
            {
                "Each": {
                    "batcher": {"MaxItemsPerBatch": 2},
                    "writer_config": {"OutputType": "JSON", "Transformation": "NONE"},
                    "jsonl": True,
                }
            },
        )
        self.assertEqual(definition["States"]["Each"]["ToleratedFailurePercentage"], 50.0)

    def test_a_definition_without_them_is_parsed_unchanged(self):
        definition = json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}})
        with mock.patch("json.dumps") as dumps:
            AmazonStateLanguageParser.parse(definition)
        dumps.assert_not_called()


class Items(unittest.TestCase):
    def test_json_lines_skip_blank_lines_and_name_a_bad_one(self):
        self.assertEqual(json_lines('{"a": 1}\n\n[2]\n'), [{"a": 1}, [2]])
        with self.assertRaisesRegex(ValueError, "line 2"):
            json_lines('{"a": 1}\nnot json\n')

    def test_batches_keep_order_and_both_limits(self):
        items = [{"doc": f"d{i}"} for i in range(7)]
        cut = batches(items, {"MaxItemsPerBatch": 3, "BatchInput": {"job.$": "$.job"}}, {"job": 9})
        self.assertEqual([len(b["Items"]) for b in cut], [3, 3, 1])
        self.assertEqual([i for b in cut for i in b["Items"]], items)
        self.assertEqual(cut[0]["BatchInput"], {"job": 9})

        small = batches(items, {"MaxInputBytesPerBatch": 40}, {})
        self.assertTrue(all(len(json.dumps(b).encode()) <= 40 for b in small))
        self.assertNotIn("BatchInput", small[0])


class Runs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        logging.disable(logging.CRITICAL)  # each failed child logs its failure as an error

    @classmethod
    def tearDownClass(cls):
        logging.disable(logging.NOTSET)

    def setUp(self):
        sfn_map_definition.install()
        sfn_map_run.install()
        sfn_map_results.install()
        interpreter.fake_events(self)

    def run_map(self, definition: dict) -> dict:
        run = interpreter.execution("docket-unit", definition, {"job": "rp-1"})
        run.start()
        return interpreter.finished(self, run, seconds=30)

    def test_items_come_from_json_lines_in_s3(self):
        fake_s3(self, {f"{BUCKET}/manifest.jsonl": jsonl("a", "b", "c")})

        described = self.run_map(reprocess_map())

        self.assertEqual(described["status"], "SUCCEEDED")
        self.assertEqual(
            json.loads(described["output"]), [{"doc": "a"}, {"doc": "b"}, {"doc": "c"}]
        )

    def test_a_line_that_is_not_json_fails_the_reader(self):
        fake_s3(self, {f"{BUCKET}/manifest.jsonl": b'{"doc": "a"}\n{oops\n'})

        described = self.run_map(reprocess_map())

        self.assertEqual(described["status"], "FAILED")
        self.assertEqual(described["error"], "States.ItemReaderFailed")

    def test_batches_reach_the_children_with_their_batch_input(self):
        fake_s3(self, {f"{BUCKET}/manifest.jsonl": jsonl("a", "b", "c", "d", "e")})
        definition = reprocess_map(
            ItemBatcher={"MaxItemsPerBatch": 2, "BatchInput": {"job.$": "$.job"}}
        )
        child = definition["States"]["Each"]["ItemProcessor"]["States"]
        child["Check"]["Choices"][0]["Variable"] = "$.Items[0].doc"

        described = self.run_map(definition)

        self.assertEqual(described["status"], "SUCCEEDED")
        output = json.loads(described["output"])
        self.assertEqual([len(b["Items"]) for b in output], [2, 2, 1])
        self.assertEqual({json.dumps(b["BatchInput"]) for b in output}, {'{"job": "rp-1"}'})

    def test_results_are_written_to_s3_by_status_with_a_manifest(self):
        s3 = fake_s3(self, {f"{BUCKET}/manifest.jsonl": jsonl("a", "broken", "c")})
        definition = reprocess_map(
            ResultWriter={
                "Resource": "arn:aws:states:::s3:putObject",
                "Parameters": {"Bucket": BUCKET, "Prefix": "out"},
            }
        )

        described = self.run_map(definition)

        self.assertEqual(described["status"], "SUCCEEDED", "1 of 3 failed, 50% tolerated")
        details = json.loads(described["output"])["ResultWriterDetails"]
        manifest = s3.json(details["Key"])
        files = manifest["ResultFiles"]
        self.assertEqual(len(files["SUCCEEDED"]), 1)
        self.assertEqual(len(files["FAILED"]), 1)
        succeeded = s3.json(files["SUCCEEDED"][0]["Key"])
        failed = s3.json(files["FAILED"][0]["Key"])
        self.assertEqual([json.loads(r["Output"]) for r in succeeded], [{"doc": "a"}, {"doc": "c"}])
        self.assertEqual(
            [(json.loads(r["Input"]), r["Error"], r["Status"]) for r in failed],
            [({"doc": "broken"}, "Doc.Broken", "FAILED")],
        )
        size = len(s3.objects[f"{BUCKET}/{files['FAILED'][0]['Key']}"])
        self.assertEqual(files["FAILED"][0]["Size"], size)


if __name__ == "__main__":
    unittest.main()
