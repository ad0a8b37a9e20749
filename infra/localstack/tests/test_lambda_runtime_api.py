"""The Runtime API server on its own, with a scripted backend in place of the executor."""

import http.client
import json
import threading
import unittest

from docket_localstack.lambda_runtime_api import API_PREFIX, Invocation, RuntimeApiServer


class ScriptedBackend:
    """Hands out the invocations it is given and records what the server passes on."""

    id = "env-test"

    def __init__(self, *invocations: Invocation | None) -> None:
        self.invocations = list(invocations)
        self.completed: list[tuple[str, bytes, bool]] = []
        self.requeued: list[Invocation] = []
        self.init_errors: list[bytes] = []

    def next_invocation(self) -> Invocation | None:
        return self.invocations.pop(0)

    def requeue(self, inv: Invocation) -> None:
        self.requeued.append(inv)

    def complete(self, request_id: str, body: bytes, is_error: bool) -> bool:
        if request_id != "req-1":
            return False
        self.completed.append((request_id, body, is_error))
        return True

    def init_failed(self, payload: bytes) -> None:
        self.init_errors.append(payload)


def invocation(body: str = '{"n": 1}') -> Invocation:
    inv = Invocation(
        {
            "invoke-id": "req-1",
            "invoked-function-arn": "arn:aws:lambda:us-east-1:000000000000:function:f",
            "payload": body,
            "trace-id": "Root=1-abc",
        }
    )
    inv.deadline_ms = 1234
    return inv


class RuntimeApiTest(unittest.TestCase):
    def serve(self, backend: ScriptedBackend) -> http.client.HTTPConnection:
        server = RuntimeApiServer(backend)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        self.addCleanup(connection.close)
        return connection

    def request(self, connection, method, path, body=None, headers=None):
        connection.request(method, API_PREFIX + path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response, response.read()


class Next(RuntimeApiTest):
    def test_next_hands_out_the_invocation_with_its_headers(self):
        connection = self.serve(ScriptedBackend(invocation()))
        response, body = self.request(connection, "GET", "/invocation/next")
        self.assertEqual(response.status, 200)
        self.assertEqual(json.loads(body), {"n": 1})
        self.assertEqual(response.getheader("Lambda-Runtime-Aws-Request-Id"), "req-1")
        self.assertEqual(response.getheader("Lambda-Runtime-Deadline-Ms"), "1234")
        self.assertEqual(
            response.getheader("Lambda-Runtime-Invoked-Function-Arn"),
            "arn:aws:lambda:us-east-1:000000000000:function:f",
        )
        self.assertEqual(response.getheader("Lambda-Runtime-Trace-Id"), "Root=1-abc")

    def test_one_connection_serves_successive_polls(self):
        connection = self.serve(ScriptedBackend(invocation('{"n": 1}'), invocation('{"n": 2}')))
        for n in (1, 2):
            _, body = self.request(connection, "GET", "/invocation/next")
            self.assertEqual(json.loads(body), {"n": n})

    def test_next_of_a_stopping_environment_is_gone(self):
        connection = self.serve(ScriptedBackend(None))
        response, body = self.request(connection, "GET", "/invocation/next")
        self.assertEqual((response.status, json.loads(body)), (410, {"errorType": "Gone"}))

    def test_unknown_paths_are_not_found(self):
        connection = self.serve(ScriptedBackend())
        for method, path in [("GET", "/invocation/other"), ("POST", "/something")]:
            with self.subTest(path=path):
                response, _ = self.request(connection, method, path, body=b"")
                self.assertEqual(response.status, 404)


class Answers(RuntimeApiTest):
    def test_a_response_completes_the_invocation(self):
        backend = ScriptedBackend()
        connection = self.serve(backend)
        response, _ = self.request(connection, "POST", "/invocation/req-1/response", b'{"ok":1}')
        self.assertEqual(response.status, 202)
        self.assertEqual(backend.completed, [("req-1", b'{"ok":1}', False)])

    def test_a_chunked_response_is_read_whole(self):
        backend = ScriptedBackend()
        connection = self.serve(backend)
        chunks = iter([b'{"ok"', b":", b"1}"])
        connection.request(
            "POST", f"{API_PREFIX}/invocation/req-1/response", body=chunks, encode_chunked=True
        )
        self.assertEqual(connection.getresponse().status, 202)
        self.assertEqual(backend.completed, [("req-1", b'{"ok":1}', False)])

    def test_an_error_keeps_its_error_type(self):
        backend = ScriptedBackend()
        connection = self.serve(backend)
        error = {"errorType": "Business.DocumentInvalid", "errorMessage": "bad"}
        self.request(
            connection,
            "POST",
            "/invocation/req-1/error",
            json.dumps(error),
            {"Lambda-Runtime-Function-Error-Type": "Runtime.Other"},
        )
        [(_, body, is_error)] = backend.completed
        self.assertTrue(is_error)
        self.assertEqual(json.loads(body), error)

    def test_an_error_without_a_type_takes_the_header_or_unhandled(self):
        for headers, body, expected in [
            ({"Lambda-Runtime-Function-Error-Type": "Runtime.Panic"}, b"{}", "Runtime.Panic"),
            ({}, b"not json", "Unhandled"),
        ]:
            with self.subTest(expected=expected):
                backend = ScriptedBackend()
                connection = self.serve(backend)
                self.request(connection, "POST", "/invocation/req-1/error", body, headers)
                [(_, posted, _)] = backend.completed
                self.assertEqual(json.loads(posted)["errorType"], expected)

    def test_an_answer_for_another_request_id_is_refused(self):
        backend = ScriptedBackend()
        connection = self.serve(backend)
        response, body = self.request(connection, "POST", "/invocation/req-9/response", b"{}")
        self.assertEqual(response.status, 400)
        self.assertEqual(json.loads(body), {"errorType": "InvalidRequestID"})
        self.assertEqual(backend.completed, [])

    def test_an_init_error_is_reported_to_the_backend(self):
        backend = ScriptedBackend()
        connection = self.serve(backend)
        response, _ = self.request(
            connection,
            "POST",
            "/init/error",
            b'{"errorMessage": "no config"}',
            {"Lambda-Runtime-Function-Error-Type": "Runtime.ConfigError"},
        )
        self.assertEqual(response.status, 202)
        self.assertEqual(
            [json.loads(e) for e in backend.init_errors],
            [{"errorMessage": "no config", "errorType": "Runtime.ConfigError"}],
        )


if __name__ == "__main__":
    unittest.main()
