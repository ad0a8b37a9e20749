"""TransactWriteItems on moto's backend with the item-level rollback of docket_localstack.dynamodb:
a failed transaction leaves every item as it was, and no table is copied."""

import unittest

from moto.dynamodb.exceptions import TransactionCanceledException
from moto.dynamodb.models import DynamoDBBackend

from docket_localstack.dynamodb import install_item_rollback

install_item_rollback()


def s(value: str) -> dict:
    return {"S": value}


class ItemRollback(unittest.TestCase):
    def setUp(self):
        self.backend = DynamoDBBackend("us-east-1", "000000000000")
        for name in ("a", "b"):
            self.backend.create_table(
                name,
                schema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                throughput=None,
                attr=[{"AttributeName": "pk", "AttributeType": "S"}],
                global_indexes=None,
                indexes=None,
                streams=None,
                billing_mode="PAY_PER_REQUEST",
                sse_specification=None,
                tags=[],
                deletion_protection_enabled=False,
                warm_throughput=None,
            )
        self.backend.put_item("a", {"pk": s("kept"), "v": s("before")})
        self.backend.put_item("b", {"pk": s("held"), "v": s("old")})

    def value(self, table: str, key: str):
        item = self.backend.get_item(table, {"pk": s(key)})
        return None if item is None else item.to_json()["Attributes"]["v"]["S"]

    def test_a_failed_transaction_puts_back_what_its_earlier_items_wrote(self):
        tables = dict(self.backend.tables)
        items = [
            {"Put": {"TableName": "a", "Item": {"pk": s("kept"), "v": s("after")}}},
            {"Put": {"TableName": "a", "Item": {"pk": s("new"), "v": s("x")}}},
            {
                "Update": {
                    "TableName": "b",
                    "Key": {"pk": s("held")},
                    "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": s("changed")},
                }
            },
            {
                "ConditionCheck": {
                    "TableName": "b",
                    "Key": {"pk": s("missing")},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        ]

        with self.assertRaises(TransactionCanceledException):
            self.backend.transact_write_items(items)

        self.assertEqual(self.value("a", "kept"), "before")
        self.assertIsNone(self.value("a", "new"))
        self.assertEqual(self.value("b", "held"), "old")
        for name, table in tables.items():
            self.assertIs(self.backend.tables[name], table, "the table was not replaced by a copy")

    def test_a_transaction_that_succeeds_writes_every_item(self):
        items = [
            {"Put": {"TableName": "a", "Item": {"pk": s("kept"), "v": s("after")}}},
            {"Delete": {"TableName": "b", "Key": {"pk": s("held")}}},
        ]

        self.backend.transact_write_items(items)

        self.assertEqual(self.value("a", "kept"), "after")
        self.assertIsNone(self.value("b", "held"))


if __name__ == "__main__":
    unittest.main()
