"""The template's lifecycle rules and deletion protection as LocalStack's API calls take them."""

import unittest

from docket_localstack.cfn_data_protection import deletion_protected, lifecycle_rules


class LifecycleRules(unittest.TestCase):
    def test_each_rule_becomes_the_api_shape_with_integer_days(self):
        rules = lifecycle_rules(
            {
                "Rules": [
                    {
                        "Id": "expire-replaced-inbox-versions",
                        "Status": "Enabled",
                        "Prefix": "inbox/",
                        "NoncurrentVersionExpiration": {"NoncurrentDays": "365"},
                    },
                    {
                        "Id": "expire-quarantine-copies",
                        "Status": "Enabled",
                        "Prefix": "quarantine/",
                        "ExpirationInDays": 90,
                    },
                    {
                        "Status": "Enabled",
                        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
                    },
                ]
            }
        )
        self.assertEqual(
            rules,
            [
                {
                    "ID": "expire-replaced-inbox-versions",
                    "Status": "Enabled",
                    "Filter": {"Prefix": "inbox/"},
                    "NoncurrentVersionExpiration": {"NoncurrentDays": 365},
                },
                {
                    "ID": "expire-quarantine-copies",
                    "Status": "Enabled",
                    "Filter": {"Prefix": "quarantine/"},
                    "Expiration": {"Days": 90},
                },
                {
                    "Status": "Enabled",
                    "Filter": {"Prefix": ""},
                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
                },
            ],
        )

    def test_a_key_it_does_not_translate_is_refused_not_dropped(self):
        with self.assertRaisesRegex(ValueError, "Transitions"):
            lifecycle_rules({"Rules": [{"Status": "Enabled", "Transitions": []}]})


class DeletionProtection(unittest.TestCase):
    def test_true_as_bool_or_string(self):
        self.assertTrue(deletion_protected({"DeletionProtectionEnabled": True}))
        self.assertTrue(deletion_protected({"DeletionProtectionEnabled": "true"}))
        self.assertFalse(deletion_protected({"DeletionProtectionEnabled": "false"}))
        self.assertFalse(deletion_protected({}))


if __name__ == "__main__":
    unittest.main()
