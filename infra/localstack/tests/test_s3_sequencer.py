"""S3 EventBridge events get a growing sequencer, as on AWS, not LocalStack's constant."""

import json
import threading
import unittest

from docket_localstack import s3_sequencer


def event(sequencer: str = s3_sequencer.CONSTANT) -> dict:
    detail = {"bucket": {"name": "raw"}, "object": {"key": "inbox/a/x.pdf", "sequencer": sequencer}}
    return {"Source": "aws.s3", "DetailType": "Object Created", "Detail": json.dumps(detail)}


def sequencer_of(entry: dict) -> str:
    return json.loads(entry["Detail"])["object"]["sequencer"]


class SequencerTest(unittest.TestCase):
    def test_two_events_in_a_row_are_ordered_and_not_the_constant(self):
        first = sequencer_of(s3_sequencer.with_sequencer(event()))
        second = sequencer_of(s3_sequencer.with_sequencer(event()))
        self.assertNotEqual(first, s3_sequencer.CONSTANT)
        self.assertEqual(len(first), 18)
        self.assertLess(int(first, 16), int(second, 16))
        # Ingest compares sequencers as strings of one length: the order must hold there too.
        self.assertLess(first, second)

    def test_concurrent_events_never_share_a_sequencer(self):
        seen: list[str] = []
        lock = threading.Lock()

        def send():
            for _ in range(200):
                s = sequencer_of(s3_sequencer.with_sequencer(event()))
                with lock:
                    seen.append(s)

        threads = [threading.Thread(target=send) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(seen), 800)
        self.assertEqual(len(set(seen)), 800)

    def test_an_event_without_a_sequencer_is_left_alone(self):
        entry = {"Detail": json.dumps({"object": {"key": "k"}})}
        self.assertEqual(s3_sequencer.with_sequencer(dict(entry)), entry)

    def test_install_wraps_localstacks_notifier_once(self):
        from localstack.services.s3.notifications import EventBridgeNotifier

        s3_sequencer.install()
        s3_sequencer.install()
        wrapped = EventBridgeNotifier._get_event_payload
        self.assertTrue(getattr(wrapped, "docket_sequencer", False))


if __name__ == "__main__":
    unittest.main()
