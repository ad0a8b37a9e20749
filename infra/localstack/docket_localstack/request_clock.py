"""When LocalStack received each request (``received``): the instant its request line reached
the HTTP server (Twisted's reactor parses it and makes its request object), or, for a request
that came another way, when its request context was made.

AWS counts a call against a rate quota at its front door. LocalStack is one Python process
whose threads share one interpreter: under load a request can wait between reaching the server
and reaching its provider. A quota that counted calls when the provider ran would refuse a call
for LocalStack's own delay, which AWS does not: our local Textract counts each call at this
instant instead (``textract_quota``), and logs how long it waited after it (``queuedMs``).
"""

from __future__ import annotations

import functools
import time

from localstack.aws.api import RequestContext
from rolo.serving import twisted as rolo_twisted

# Where the instant is kept, (monotonic s, unix ms): the attribute of Twisted's request and of
# the request context, the key of the WSGI environment.
RECEIVED = "docket_received"
ENVIRON_KEY = "docket.received"

_installed = False


def now() -> tuple[float, int]:
    return time.monotonic(), int(time.time() * 1000)


def received(context: RequestContext) -> tuple[float, int] | None:
    """When LocalStack received the request of `context` (monotonic s, unix ms), if known."""
    request = getattr(context, "request", None)
    environ = getattr(request, "environ", None) or {}
    return environ.get(ENVIRON_KEY) or getattr(context, RECEIVED, None)


def install() -> None:
    """Stamps every request as its request line arrives and every request context as it is made
    (once, at LocalStack start, before the server serves)."""
    global _installed
    if _installed:
        return
    _installed = True

    stamp_when_made(RequestContext)
    stamp_when_made(rolo_twisted.TwistedRequestAdapter)

    to_environ = rolo_twisted.update_wsgi_environment

    @functools.wraps(to_environ)
    def environ_stamped(environ, request):
        to_environ(environ, request)
        stamp_environ(environ, request)

    rolo_twisted.update_wsgi_environment = environ_stamped


def stamp_when_made(cls: type) -> None:
    """Makes each new instance of `cls` carry the instant it was made (``RECEIVED``)."""
    made = cls.__init__  # type: ignore[misc]

    def stamped(self, *args, **kwargs):
        setattr(self, RECEIVED, now())
        made(self, *args, **kwargs)

    cls.__init__ = stamped  # type: ignore[misc]


def stamp_environ(environ: dict, request: object) -> None:
    """Copies the stamp of Twisted's `request` to the WSGI `environ` made from it."""
    stamp = getattr(request, RECEIVED, None)
    if stamp is not None:
        environ[ENVIRON_KEY] = stamp
