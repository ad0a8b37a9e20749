"""Query on moto's backend with docket_localstack.dynamodb's partition query: a Query of a table
reads its partition alone and answers as moto did (order, limits, pages); a Query of an index
still finds its items across partitions; the serializing lock serves its waiters in order."""

import threading
import time
import unittest
from unittest import mock

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table

from docket_localstack.dynamodb import FairLock, install_partition_query

install_partition_query()


def s(value: str) -> dict:
    return {"S": value}


def n(value: int) -> dict:
    return {"N": str(value)}


class PartitionQuery(unittest.TestCase):
    def setUp(self):
        self.backend = DynamoDBBackend("us-east-1", "000000000000")
        self.backend.create_table(
            "chain",
            schema=[
                {"AttributeName": "doc", "KeyType": "HASH"},
                {"AttributeName": "seq", "KeyType": "RANGE"},
            ],
            throughput=None,
            attr=[
                {"AttributeName": "doc", "AttributeType": "S"},
                {"AttributeName": "seq", "AttributeType": "N"},
                {"AttributeName": "owner", "AttributeType": "S"},
            ],
            global_indexes=[
                {
                    "IndexName": "by-owner",
                    "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
            indexes=None,
            streams=None,
            billing_mode="PAY_PER_REQUEST",
            sse_specification=None,
            tags=[],
            deletion_protection_enabled=False,
            warm_throughput=None,
        )
        # Inserted out of order, across partitions, so that an answer in order is moto's sort.
        for doc, seq in [("b", 2), ("a", 3), ("b", 1), ("a", 1), ("c", 1), ("a", 2)]:
            owner = "ops" if seq == 1 else "nobody"
            item = {"doc": s(doc), "seq": n(seq), "owner": s(owner)}
            self.backend.put_item("chain", item)

    def query(self, doc, **kwargs):
        items, _, last = self.backend.query(
            "chain",
            s(doc),
            kwargs.pop("range_comparison", None),
            kwargs.pop("range_values", []),
            kwargs.pop("limit", None),
            kwargs.pop("exclusive_start_key", None),
            kwargs.pop("scan_index_forward", True),
            None,
            index_name=kwargs.pop("index_name", None),
            expr_names={},
            expr_values={},
            filter_expression=None,
        )
        return [(i.attrs["doc"].value, int(i.attrs["seq"].value)) for i in items], last

    def test_a_table_query_answers_its_partition_in_order_without_reading_the_table(self):
        def no_whole_table(_table):
            raise AssertionError("the query read the whole table")

        with mock.patch.object(Table, "all_items", no_whole_table):
            forward, _ = self.query("a")
            backward, _ = self.query("a", scan_index_forward=False)
            missing, _ = self.query("zz")

        self.assertEqual(forward, [("a", 1), ("a", 2), ("a", 3)])
        self.assertEqual(backward, [("a", 3), ("a", 2), ("a", 1)])
        self.assertEqual(missing, [])
        self.assertNotIn(
            "zz", [k.value for k in self.backend.tables["chain"].items], "no partition made"
        )

    def test_a_table_query_pages_as_moto_does(self):
        first, last = self.query("a", scan_index_forward=False, limit=1)
        self.assertEqual(first, [("a", 3)])
        rest, end = self.query("a", scan_index_forward=False, exclusive_start_key=last)
        self.assertEqual(rest, [("a", 2), ("a", 1)])
        self.assertIsNone(end)

    def test_an_index_query_finds_its_items_in_every_partition(self):
        found, _ = self.query("ops", index_name="by-owner")
        self.assertEqual(sorted(found), [("a", 1), ("b", 1), ("c", 1)])

    def test_the_table_is_read_as_before_once_the_query_returned(self):
        self.query("a")
        self.assertNotIn("all_items", vars(self.backend.tables["chain"]))
        self.assertEqual(len(self.backend.tables["chain"].all_items()), 6)


class FairLockOrder(unittest.TestCase):
    def test_waiters_are_served_in_the_order_they_asked(self):
        lock, served, threads = FairLock(), [], []

        def serve(i: int) -> None:
            with lock:
                served.append(i)

        lock.__enter__()  # held, so that every waiter queues
        for i in range(8):
            t = threading.Thread(target=serve, args=(i,))
            t.start()
            threads.append(t)
            while lock._next_ticket != i + 2:  # the waiter took its ticket
                time.sleep(0.001)
        lock.__exit__()
        for t in threads:
            t.join(5)
        self.assertEqual(served, list(range(8)))


if __name__ == "__main__":
    unittest.main()
