"""Unit tests of the chaos rules (the HTTP and AWS side is tested from Rust against LocalStack)."""

import random
import unittest

from docket_localstack.chaos import Chaos, InvalidRule, matches, validate_rules


class RuleMatching(unittest.TestCase):
    def test_missing_fields_match_anything(self):
        self.assertTrue(matches({}, "dynamodb", "PutItem", "us-east-1"))

    def test_every_named_field_must_equal(self):
        rule = {"service": "DynamoDB", "operation": "PutItem", "region": "eu-west-3"}
        self.assertTrue(matches(rule, "dynamodb", "PutItem", "eu-west-3"))
        self.assertFalse(matches(rule, "dynamodb", "GetItem", "eu-west-3"))
        self.assertFalse(matches(rule, "dynamodb", "PutItem", "us-east-1"))
        self.assertFalse(matches(rule, "s3", "PutItem", "eu-west-3"))

    def test_first_matching_rule_wins_even_when_its_dice_say_no(self):
        chaos = Chaos(rng=random.Random(7))
        chaos.replace(
            [
                {"service": "dynamodb", "probability": 0},
                {"service": "dynamodb", "error": {"statusCode": 400, "code": "Later"}},
            ]
        )
        self.assertIsNone(chaos.fault_for("dynamodb", "PutItem", "us-east-1"))

    def test_default_error_is_503_service_unavailable(self):
        chaos = Chaos()
        chaos.replace([{"service": "s3"}])
        self.assertEqual(
            chaos.fault_for("s3", "PutObject", "us-east-1"),
            {"statusCode": 503, "code": "ServiceUnavailable"},
        )

    def test_probability_is_honoured_over_many_calls(self):
        chaos = Chaos(rng=random.Random(42))
        chaos.replace([{"probability": 0.3}])
        failed = sum(
            chaos.fault_for("sqs", "SendMessage", "us-east-1") is not None for _ in range(2000)
        )
        self.assertTrue(500 <= failed <= 700, failed)

    def test_patch_appends_and_delete_removes_equal_rules(self):
        chaos = Chaos()
        a, b = {"service": "s3"}, {"service": "sqs"}
        chaos.replace([a])
        self.assertEqual(chaos.add([b]), [a, b])
        self.assertEqual(chaos.remove([a]), [b])
        self.assertEqual(chaos.replace([]), [])


class RuleValidation(unittest.TestCase):
    def test_rejects_bad_shapes_with_a_reason(self):
        for bad in (
            {"service": "s3"},
            [1],
            [{"probability": 2}],
            [{"nope": 1}],
            [{"error": {"statusCode": 200}}],
            [{"error": "x"}],
        ):
            with self.subTest(bad=bad), self.assertRaises(InvalidRule):
                validate_rules(bad)

    def test_accepts_the_documented_shape(self):
        rules = [
            {
                "service": "dynamodb",
                "operation": "PutItem",
                "region": "us-east-1",
                "probability": 0.5,
                "error": {"statusCode": 400, "code": "ThrottlingException"},
            }
        ]
        self.assertEqual(validate_rules(rules), rules)

    def test_latency_must_be_non_negative_ms(self):
        with self.assertRaises(InvalidRule):
            Chaos().set_effects({"latency": -1})
        self.assertEqual(Chaos().set_effects({"latency": 25}), {"latency": 25})


if __name__ == "__main__":
    unittest.main()
