"""The Lambda Runtime API, served to one bootstrap process on its own loopback port.

A small threaded HTTP server: ``GET /2018-06-01/runtime/invocation/next`` (long poll; request id,
deadline, function ARN and trace id headers), ``POST .../invocation/{id}/response``,
``POST .../invocation/{id}/error`` and ``POST /2018-06-01/runtime/init/error``. It holds no state
of its own: every request is handed to a :class:`RuntimeApiBackend` (the executor of
:mod:`.lambda_executor`), which decides what ``next`` gets and what a response completes.

Errors posted by the function are forwarded unchanged: ``errorType`` is what Step Functions' Retry
and Catch match on (LocalStack's provider adds ``FunctionError: Unhandled``).
"""

import json
import logging
import socket
import uuid
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

LOG = logging.getLogger(__name__)

API_PREFIX = "/2018-06-01/runtime"
ERROR_TYPE_HEADER = "Lambda-Runtime-Function-Error-Type"


class Invocation:
    """One invocation, from LocalStack's invoke payload to the function's answer."""

    def __init__(self, payload: dict) -> None:
        self.request_id: str = payload.get("invoke-id") or str(uuid.uuid4())
        self.arn: str = payload.get("invoked-function-arn", "")
        self.trace_id: str = payload.get("trace-id") or ""
        body = payload.get("payload")
        self.body: bytes = body.encode() if isinstance(body, str) else (body or b"")
        self.deadline_ms: int = 0
        self.result: Future = Future()  # (payload bytes, is_error)


class RuntimeApiBackend(Protocol):
    """What the server asks of the execution environment (called from request threads)."""

    id: str

    def next_invocation(self) -> Invocation | None:
        """Blocks until there is an invocation for the runtime; None when it must give up."""
        ...

    def requeue(self, inv: Invocation) -> None:
        """An invocation handed out by ``next`` did not reach the runtime: hand it out again."""
        ...

    def complete(self, request_id: str, body: bytes, is_error: bool) -> bool:
        """The runtime's answer to the invocation in flight; False if the id is not that one."""
        ...

    def init_failed(self, payload: bytes) -> None:
        """The runtime reported that its init failed."""
        ...


def error_body(error_type: str, message: str) -> bytes:
    """A Lambda error document, as the caller sees it."""
    return json.dumps({"errorType": error_type, "errorMessage": message}).encode()


def function_error(body: bytes, error_type_header: str | None) -> bytes:
    """The function's error as the caller sees it: its JSON with errorType kept as posted."""
    try:
        doc = json.loads(body) if body else {}
    except ValueError:
        doc = {"errorMessage": body.decode("utf-8", "replace")}
    if not isinstance(doc, dict):
        doc = {"errorMessage": json.dumps(doc)}
    if not doc.get("errorType"):
        doc["errorType"] = error_type_header or "Unhandled"
    doc.setdefault("errorMessage", "")
    return json.dumps(doc).encode()


class _RuntimeApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "RuntimeApiServer"

    def setup(self) -> None:
        super().setup()
        # The runtime keeps one connection; avoid Nagle + delayed-ACK stalls on small writes.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args) -> None:  # the base class's signature
        LOG.debug("runtime api %s: " + format, self.server.backend.id, *args)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        lines = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {len(body)}")
        if not headers or "Content-Type" not in headers:
            lines.append("Content-Type: application/json")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        self.wfile.write(data)  # one write: headers and body in one segment
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/") != f"{API_PREFIX}/invocation/next":
            return self._send(404, b'{"errorType":"NotFound"}')
        inv = self.server.backend.next_invocation()
        if inv is None:  # environment shutting down
            return self._send(410, b'{"errorType":"Gone"}')
        headers = {
            "Lambda-Runtime-Aws-Request-Id": inv.request_id,
            "Lambda-Runtime-Deadline-Ms": str(inv.deadline_ms),
            "Lambda-Runtime-Invoked-Function-Arn": inv.arn,
            "Lambda-Runtime-Trace-Id": inv.trace_id,
            "Content-Type": "application/json",
        }
        try:
            self._send(200, inv.body, headers)
        except OSError:
            # The connection died (e.g. a killed runtime's): hand the invocation to the next poll.
            self.server.backend.requeue(inv)
            raise

    def do_POST(self) -> None:
        body = self._body()
        parts = self.path.rstrip("/").split("/")
        backend = self.server.backend
        # /2018-06-01/runtime/invocation/{id}/{response|error}
        if len(parts) == 6 and parts[3] == "invocation" and parts[5] in ("response", "error"):
            if parts[5] == "response":
                ok = backend.complete(parts[4], body, is_error=False)
            else:
                header = self.headers.get(ERROR_TYPE_HEADER)
                ok = backend.complete(parts[4], function_error(body, header), is_error=True)
            if ok:
                return self._send(202, b'{"status":"OK"}')
            return self._send(400, b'{"errorType":"InvalidRequestID"}')
        if self.path.rstrip("/") == f"{API_PREFIX}/init/error":
            backend.init_failed(function_error(body, self.headers.get(ERROR_TYPE_HEADER)))
            return self._send(202, b'{"status":"OK"}')
        return self._send(404, b'{"errorType":"NotFound"}')


class RuntimeApiServer(ThreadingHTTPServer):
    """The Runtime API of one execution environment, on an ephemeral 127.0.0.1 port."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, backend: RuntimeApiBackend) -> None:
        self.backend = backend
        super().__init__(("127.0.0.1", 0), _RuntimeApiHandler)

    def handle_error(self, request, client_address) -> None:
        # A killed runtime resets its connection: expected, not worth a traceback on stderr.
        LOG.debug("runtime api %s: connection from %s failed", self.backend.id, client_address)
