"""Unit tests of the receipt stamp our local Textract's quotas count by (no LocalStack running
needed; run with the project venv from infra/localstack:

    ../../.venv/bin/python -m unittest tests/test_request_clock.py
"""

import time
import unittest
from unittest import mock

from localstack.aws.api import RequestContext
from localstack.http import Request
from rolo.serving import twisted as rolo_twisted

from docket_localstack import request_clock


class Received(unittest.TestCase):
    def setUp(self):
        request_clock.install()
        request_clock.install()  # twice is once

    def test_a_context_made_after_install_says_when_and_keeps_its_request(self):
        before = request_clock.now()
        request = Request("POST", "/")
        context = RequestContext(request)
        stamp = request_clock.received(context)
        assert stamp is not None
        self.assertGreaterEqual(stamp[0], before[0])
        self.assertGreaterEqual(stamp[1], before[1])
        self.assertLess(stamp[0] - before[0], 1.0)
        self.assertIs(context.request, request)

    def test_the_request_line_s_arrival_wins_over_the_context_s_making(self):
        # Twisted makes its request object when the request line arrives.
        arrived = rolo_twisted.TwistedRequestAdapter(mock.MagicMock())
        stamp = getattr(arrived, request_clock.RECEIVED)
        # The WSGI environment made from it carries the stamp on.
        self.assertTrue(hasattr(rolo_twisted.update_wsgi_environment, "__wrapped__"))
        environ: dict = {}
        request_clock.stamp_environ(environ, arrived)
        time.sleep(0.01)
        request = Request("POST", "/")
        request.environ.update(environ)
        context = RequestContext(request)
        self.assertEqual(request_clock.received(context), stamp)
        self.assertLess(stamp[0], getattr(context, request_clock.RECEIVED)[0])


if __name__ == "__main__":
    unittest.main()
