"""Unit tests of the wire log (the HTTP and AWS side is tested from Rust against LocalStack)."""

import hashlib
import time
import unittest

from docket_localstack.textract_quota import THROUGHPUT_EXCEEDED
from docket_localstack.wire_log import WireLog, dynamodb_items, dynamodb_tables, subject_of


class Subjects(unittest.TestCase):
    def test_a_task_token_is_kept_only_as_its_hash(self):
        subject = subject_of("stepfunctions", "SendTaskSuccess", {"taskToken": "secret"})
        self.assertEqual(subject, hashlib.sha256(b"secret").hexdigest())
        self.assertNotIn("secret", subject or "")

    def test_a_put_events_is_named_by_its_first_entrys_detail_type_and_event_id(self):
        entry = {"DetailType": "document.recorded", "Detail": '{"eventId": "ev-1", "x": 1}'}
        subject = subject_of("events", "PutEvents", {"Entries": [entry, {"Detail": "{}"}]})
        expected = hashlib.sha256(b"document.recorded\nev-1").hexdigest()
        self.assertEqual(subject, expected)
        for entries in ([], [{"DetailType": "d", "Detail": "not json"}], [{"Detail": "{}"}]):
            self.assertIsNone(subject_of("events", "PutEvents", {"Entries": entries}))

    def test_a_lambda_invoke_is_named_by_the_function_as_called(self):
        arn = "arn:aws:lambda:us-east-1:000000000000:function:docket-dev-ingest"
        subject = subject_of("lambda", "Invoke", {"FunctionName": arn, "Payload": b"{}"})
        self.assertEqual(subject, hashlib.sha256(arn.encode()).hexdigest())

    def test_a_text_detection_start_is_named_by_its_client_request_token(self):
        params = {"ClientRequestToken": "op-1", "DocumentLocation": {}}
        subject = subject_of("textract", "StartDocumentTextDetection", params)
        self.assertEqual(subject, hashlib.sha256(b"op-1").hexdigest())

    def test_an_execution_start_is_named_by_the_execution_it_names(self):
        params = {"stateMachineArn": "arn:sm", "name": "run-1", "input": "{}"}
        subject = subject_of("stepfunctions", "StartExecution", params)
        self.assertEqual(subject, hashlib.sha256(b"run-1").hexdigest())

    def test_a_synchronous_read_is_named_by_the_key_it_reads(self):
        params = {"Document": {"S3Object": {"Bucket": "raw", "Name": "inbox/a/x.pdf"}}}
        subject = subject_of("textract", "DetectDocumentText", params)
        self.assertEqual(subject, hashlib.sha256(b"inbox/a/x.pdf").hexdigest())
        bytes_only = {"Document": {"Bytes": b"x"}}
        self.assertIsNone(subject_of("textract", "DetectDocumentText", bytes_only))

    def test_a_dynamodb_single_item_request_is_named_by_its_table(self):
        for operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
            subject = subject_of("dynamodb", operation, {"TableName": "t-1", "Key": {}})
            self.assertEqual(subject, hashlib.sha256(b"t-1").hexdigest())
        self.assertIsNone(subject_of("dynamodb", "TransactWriteItems", {"TransactItems": []}))

    def test_an_operation_without_a_subject_has_none(self):
        self.assertIsNone(subject_of("s3", "PutObject", {"Key": "a"}))
        self.assertIsNone(subject_of("stepfunctions", "SendTaskFailure", {}))


class Items(unittest.TestCase):
    def test_a_dynamodb_request_counts_the_items_it_names(self):
        two: list[dict] = [{"Put": {}}, {"Update": {}}]
        self.assertEqual(dynamodb_items("TransactWriteItems", {"TransactItems": two}), 2)
        self.assertEqual(dynamodb_items("TransactGetItems", {"TransactItems": two[:1]}), 1)
        batch: dict = {"RequestItems": {"a": [{}, {}], "b": [{}]}}
        self.assertEqual(dynamodb_items("BatchWriteItem", batch), 3)
        keys: dict = {"RequestItems": {"a": {"Keys": [{}, {}]}, "b": {"Keys": [{}]}}}
        self.assertEqual(dynamodb_items("BatchGetItem", keys), 3)
        for operation in ("PutItem", "UpdateItem", "GetItem", "Query"):
            self.assertEqual(dynamodb_items(operation, {"TableName": "t"}), 1)

    def test_a_dynamodb_request_names_the_table_of_each_item_it_counts(self):
        two = [{"Put": {"TableName": "runs"}}, {"Update": {"TableName": "audit"}}]
        for operation in ("TransactWriteItems", "TransactGetItems"):
            params = {"TransactItems": two}
            tables = dynamodb_tables(operation, params)
            self.assertEqual(tables, ["runs", "audit"])
            self.assertEqual(len(tables), dynamodb_items(operation, params))
        batch: dict = {"RequestItems": {"a": [{}, {}], "b": [{}]}}
        self.assertEqual(dynamodb_tables("BatchWriteItem", batch), ["a", "a", "b"])
        keys: dict = {"RequestItems": {"a": {"Keys": [{}, {}]}}}
        self.assertEqual(dynamodb_tables("BatchGetItem", keys), ["a", "a"])
        self.assertEqual(dynamodb_tables("UpdateItem", {"TableName": "t"}), ["t"])
        self.assertEqual(dynamodb_tables("TransactWriteItems", {"TransactItems": [{}]}), ["?"])

    def test_only_dynamodb_entries_carry_items(self):
        log = WireLog()
        log.record("dynamodb", "TransactWriteItems", {"TransactItems": [{}, {}, {}]}, 200)
        log.record("s3", "PutObject", {"Key": "a"}, 200)
        self.assertEqual(log.find(service="dynamodb")[0]["items"], 3)
        self.assertEqual(log.find(service="dynamodb")[0]["tables"], ["?", "?", "?"])
        self.assertNotIn("items", log.find(service="s3")[0])
        self.assertNotIn("tables", log.find(service="s3")[0])


class Finding(unittest.TestCase):
    def test_a_refused_request_keeps_its_error_code_and_a_served_one_has_none(self):
        log = WireLog()
        refusal = "ConditionalCheckFailedException"
        log.record("dynamodb", "UpdateItem", {"TableName": "t"}, 400, refusal)
        log.record("dynamodb", "UpdateItem", {"TableName": "t"}, 200, None)
        refused, served = log.find(service="dynamodb")
        self.assertEqual(refused["error"], refusal)
        self.assertNotIn("error", served)

    def test_each_entry_has_when_it_was_logged(self):
        log = WireLog()
        before = int(time.time() * 1000)
        log.record("textract", "DetectDocumentText", None, 200)
        after = int(time.time() * 1000)
        self.assertTrue(before <= log.find(service="textract")[0]["atMs"] <= after)

    def test_a_call_a_quota_judged_keeps_when_and_others_have_no_such_time(self):
        log = WireLog()
        log.record("textract", "DetectDocumentText", None, 200, None, {"admittedMs": 1_123})
        judged = {"refusedMs": 1_900, "windowMs": [1_123]}
        log.record("textract", "DetectDocumentText", None, 400, THROUGHPUT_EXCEEDED, judged)
        log.record("textract", "DetectDocumentText", None, 500, "ThrottlingException")
        admitted, refused, failed = log.find(service="textract")
        self.assertEqual(admitted["admittedMs"], 1_123)
        self.assertNotIn("refusedMs", admitted)
        self.assertEqual((refused["refusedMs"], refused["windowMs"]), (1_900, [1_123]))
        self.assertNotIn("admittedMs", refused)
        self.assertFalse({"admittedMs", "refusedMs", "windowMs"} & set(failed))

    def test_every_given_field_must_match_and_empty_ones_match_anything(self):
        log = WireLog()
        log.record("stepfunctions", "SendTaskSuccess", {"taskToken": "a"}, 200)
        log.record("stepfunctions", "SendTaskSuccess", {"taskToken": "b"}, 400)
        log.record("stepfunctions", "SendTaskFailure", {"taskToken": "a"}, 200)
        log.record("s3", "PutObject", None, 200)
        a = hashlib.sha256(b"a").hexdigest()
        self.assertEqual(len(log.find(subject=a)), 2)
        self.assertEqual(len(log.find(operation="SendTaskSuccess", subject=a)), 1)
        self.assertEqual(len(log.find(service="stepfunctions", operation="", subject="")), 3)
        self.assertEqual(log.find(operation="SendTaskSuccess", subject=a)[0]["status"], 200)

    def test_the_log_keeps_the_newest_entries_and_clears(self):
        log = WireLog(max_entries=2)
        for key in ["1", "2", "3"]:
            log.record("s3", "PutObject", {"Key": key}, 200)
        self.assertEqual(len(log.find(service="s3")), 2)
        log.clear()
        self.assertEqual(log.find(), [])


if __name__ == "__main__":
    unittest.main()
