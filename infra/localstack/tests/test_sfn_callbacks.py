"""An early callback (before the heartbeat endpoint exists) ends the wait at once."""

import unittest

from localstack.services.stepfunctions.asl.eval.callback.callback import (
    CallbackEndpoint,
    CallbackOutcomeSuccess,
)

from docket_localstack import sfn_callbacks


class EarlyCallbacks(unittest.TestCase):
    def setUp(self):
        sfn_callbacks.install()

    def test_an_outcome_delivered_before_the_heartbeat_endpoint_ends_the_wait(self):
        endpoint = CallbackEndpoint(callback_id="token")
        outcome = CallbackOutcomeSuccess(callback_id="token", output='{"status":"recorded"}')
        endpoint.notify(outcome)

        heartbeat = endpoint.setup_heartbeat_endpoint(heartbeat_seconds=30)

        # Unpatched, this waits the full 30 s and answers False (a heartbeat timeout).
        self.assertTrue(heartbeat.clear_and_wait())
        self.assertIs(endpoint.get_outcome(), outcome)

    def test_without_an_outcome_the_heartbeat_endpoint_waits(self):
        endpoint = CallbackEndpoint(callback_id="token")

        heartbeat = endpoint.setup_heartbeat_endpoint(heartbeat_seconds=1)

        self.assertFalse(heartbeat.clear_and_wait())

    def test_install_wraps_once(self):
        wrapped = CallbackEndpoint.setup_heartbeat_endpoint
        sfn_callbacks.install()
        self.assertIs(CallbackEndpoint.setup_heartbeat_endpoint, wrapped)


if __name__ == "__main__":
    unittest.main()
