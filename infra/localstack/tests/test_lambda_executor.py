"""The process executor end to end, without LocalStack running: a fake ``bootstrap`` (a Python
script doing the Runtime API loop with urllib, in place of a Rust Lambda) is started, invoked and
stopped through the executor's LocalStack interface, with stand-ins for LocalStack's function
version (only the fields the executor reads)."""

import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast
from unittest import mock

from localstack.aws.api.lambda_ import PackageType
from localstack.services.lambda_.invocation.executor_endpoint import StatusErrorException
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import LambdaRuntimeException

from docket_localstack import lambda_process
from docket_localstack.lambda_executor import ProcessRuntimeExecutor

ARN = "arn:aws:lambda:us-east-1:000000000000:function:fake"

# Driven by its environment (init behaviour) and by each event (what the invocation does).
FAKE_BOOTSTRAP = """#!{python}
import json, os, subprocess, sys, time, urllib.request

API = "http://" + os.environ["AWS_LAMBDA_RUNTIME_API"] + "/2018-06-01/runtime"


def post(path, body, error_type=None):
    headers = {{"Lambda-Runtime-Function-Error-Type": error_type}} if error_type else {{}}
    request = urllib.request.Request(API + path, json.dumps(body).encode(), headers, method="POST")
    urllib.request.urlopen(request).read()


if os.environ.get("FAKE_INIT_ERROR"):
    with open("bootstrap.pid", "w") as f:
        f.write(str(os.getpid()))
    post("/init/error", {{"errorMessage": "no config"}}, "Runtime.ConfigError")
    time.sleep(300)  # AWS ends the runtime after an init error; so must the executor
if os.environ.get("FAKE_GRANDCHILD"):
    child = subprocess.Popen(["sleep", "300"])
    with open("grandchild.pid", "w") as f:
        f.write(str(child.pid))
print("init done", flush=True)
while True:
    with urllib.request.urlopen(API + "/invocation/next") as r:
        request_id = r.headers["Lambda-Runtime-Aws-Request-Id"]
        headers = dict(r.headers)
        event = json.loads(r.read())
    print("handling", request_id, flush=True)
    time.sleep(event.get("sleep", 0))
    if "exit" in event:
        sys.exit(event["exit"])
    if "fail" in event:
        error = {{"errorType": event["fail"], "errorMessage": "no"}}
        post(f"/invocation/{{request_id}}/error", error)
    else:
        post(f"/invocation/{{request_id}}/response", {{"pid": os.getpid(), "headers": headers}})
"""


class FakeCode:
    def __init__(self, path: str) -> None:
        self.path = path

    def get_unzipped_code_location(self) -> Path:
        return Path(self.path)

    def prepare_for_execution(self) -> None:
        pass


def function_version(code_dir: str, timeout: int) -> FunctionVersion:
    config = SimpleNamespace(
        package_type=PackageType.Zip,
        runtime="provided.al2023",
        code=FakeCode(code_dir),
        memory_size=128,
        timeout=timeout,
    )
    version = SimpleNamespace(
        config=config, qualified_arn=f"{ARN}:$LATEST", id=SimpleNamespace(qualifier="$LATEST")
    )
    return cast(FunctionVersion, version)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class ExecutorTest(unittest.TestCase):
    def setUp(self) -> None:
        self.code_dir = tempfile.mkdtemp(prefix="docket-fake-lambda-")
        self.addCleanup(shutil.rmtree, self.code_dir, ignore_errors=True)
        bootstrap = Path(self.code_dir, "bootstrap")
        bootstrap.write_text(FAKE_BOOTSTRAP.format(python=sys.executable))
        bootstrap.chmod(0o755)
        self.count = 0

    def executor(self, timeout: int = 3, **env: str) -> ProcessRuntimeExecutor:
        """A started execution environment (stopped at the end of the test)."""
        executor = ProcessRuntimeExecutor(
            f"env-{self.count}", function_version(self.code_dir, timeout)
        )
        self.count += 1
        self.addCleanup(executor.stop)
        executor.start({"AWS_REGION": "us-east-1", **env})
        return executor

    def invoke(self, executor: ProcessRuntimeExecutor, request_id: str, **event: Any):
        result = executor.invoke(
            {
                "invoke-id": request_id,
                "invoked-function-arn": ARN,
                "payload": json.dumps(event),
                "trace-id": "Root=1-00000000-000000000000000000000000",
            }
        )
        return result, json.loads(result.payload or b"null")


class Invocations(ExecutorTest):
    def test_a_response_is_answered_with_the_runtime_api_headers(self):
        executor = self.executor()
        result, body = self.invoke(executor, "req-1")
        self.assertFalse(result.is_error)
        self.assertEqual(result.request_id, "req-1")
        headers = body["headers"]
        self.assertEqual(headers["Lambda-Runtime-Aws-Request-Id"], "req-1")
        self.assertEqual(headers["Lambda-Runtime-Invoked-Function-Arn"], ARN)
        self.assertEqual(
            headers["Lambda-Runtime-Trace-Id"], "Root=1-00000000-000000000000000000000000"
        )
        deadline_s = int(headers["Lambda-Runtime-Deadline-Ms"]) / 1000
        self.assertTrue(time.time() < deadline_s <= time.time() + 3, deadline_s)

    def test_the_process_stays_warm_between_invocations(self):
        executor = self.executor()
        _, first = self.invoke(executor, "req-1")
        _, second = self.invoke(executor, "req-2")
        self.assertEqual(first["pid"], second["pid"])

    def test_a_function_error_is_forwarded_with_its_error_type(self):
        executor = self.executor()
        result, body = self.invoke(executor, "req-1", fail="Business.DocumentInvalid")
        self.assertTrue(result.is_error)
        self.assertEqual(body, {"errorType": "Business.DocumentInvalid", "errorMessage": "no"})
        _, after = self.invoke(executor, "req-2")  # an error does not end the process
        self.assertTrue(alive(after["pid"]))

    def test_an_init_error_fails_the_start_and_ends_the_process(self):
        with (
            self.assertRaises(StatusErrorException) as raised,
            self.assertLogs("docket_localstack.lambda_executor", "WARNING"),
        ):
            self.executor(FAKE_INIT_ERROR="1")
        payload = json.loads(raised.exception.payload)
        self.assertEqual(payload, {"errorType": "Runtime.ConfigError", "errorMessage": "no config"})
        self.assertTrue(wait_dead(int(Path(self.code_dir, "bootstrap.pid").read_text())))

    def test_a_missing_bootstrap_fails_the_start(self):
        os.remove(Path(self.code_dir, "bootstrap"))
        with self.assertRaises(StatusErrorException) as raised:
            self.executor()
        self.assertEqual(
            json.loads(raised.exception.payload)["errorType"], "Runtime.InvalidEntrypoint"
        )

    def test_a_timeout_kills_the_process_and_the_next_invocation_starts_a_new_one(self):
        executor = self.executor(timeout=1)
        _, before = self.invoke(executor, "req-1")
        started = time.monotonic()
        result, body = self.invoke(executor, "req-2", sleep=30)
        self.assertLess(time.monotonic() - started, 10)
        self.assertTrue(result.is_error)
        self.assertEqual(body["errorType"], "Sandbox.Timedout")
        self.assertEqual(
            body["errorMessage"], "RequestId: req-2 Error: Task timed out after 1.00 seconds"
        )
        self.assertTrue(wait_dead(before["pid"]))
        self.assertIn("Status: timeout", result.logs or "")
        result, after = self.invoke(executor, "req-3")
        self.assertFalse(result.is_error)
        self.assertNotEqual(after["pid"], before["pid"])

    def test_a_crash_answers_exit_error_and_the_next_invocation_starts_a_new_one(self):
        executor = self.executor()
        _, before = self.invoke(executor, "req-1")
        result, body = self.invoke(executor, "req-2", exit=3)
        self.assertTrue(result.is_error)
        self.assertEqual(body["errorType"], "Runtime.ExitError")
        self.assertIn("exit status 3", body["errorMessage"])
        result, after = self.invoke(executor, "req-3")
        self.assertFalse(result.is_error)
        self.assertNotEqual(after["pid"], before["pid"])
        self.assertIn("Init Duration", result.logs or "")

    def test_concurrent_invocations_run_in_their_own_environments(self):
        executors = [self.executor() for _ in range(3)]
        results: dict[str, tuple[InvocationResult, Any]] = {}

        def invoke(i: int) -> None:
            results[f"req-{i}"] = self.invoke(executors[i], f"req-{i}", sleep=1)

        started = time.monotonic()
        threads = [threading.Thread(target=invoke, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        self.assertLess(time.monotonic() - started, 2.5)  # not one after the other (3 s)
        self.assertEqual(sorted(results), ["req-0", "req-1", "req-2"])
        for request_id, (result, body) in results.items():
            self.assertFalse(result.is_error)
            self.assertEqual(body["headers"]["Lambda-Runtime-Aws-Request-Id"], request_id)
        self.assertEqual(len({body["pid"] for _, body in results.values()}), 3)


class Logs(ExecutorTest):
    def test_each_invocation_is_framed_and_the_first_reports_the_init(self):
        executor = self.executor()
        first, _ = self.invoke(executor, "req-1")
        second, _ = self.invoke(executor, "req-2")
        logs = first.logs or ""
        self.assertLess(
            logs.index("init done"), logs.index("START RequestId: req-1 Version: $LATEST")
        )
        self.assertLess(logs.index("START RequestId: req-1"), logs.index("handling req-1"))
        self.assertLess(logs.index("handling req-1"), logs.index("END RequestId: req-1"))
        self.assertRegex(logs, r"REPORT RequestId: req-1\tDuration: [\d.]+ ms\t.*Init Duration")
        self.assertIn("Memory Size: 128 MB", logs)
        self.assertIn("handling req-2", second.logs or "")
        self.assertNotIn("Init Duration", second.logs or "")
        self.assertNotIn("handling req-1", second.logs or "")
        self.assertIn("END RequestId: req-2", executor.get_logs())


class Cleanup(ExecutorTest):
    def test_stop_ends_the_bootstrap_and_what_it_spawned(self):
        executor = self.executor(FAKE_GRANDCHILD="1")
        _, body = self.invoke(executor, "req-1")
        grandchild = int(Path(self.code_dir, "grandchild.pid").read_text())
        self.assertTrue(alive(body["pid"]) and alive(grandchild))
        executor.stop()
        self.assertTrue(wait_dead(body["pid"]))
        self.assertTrue(wait_dead(grandchild))

    def test_stop_during_an_invocation_ends_it_as_a_failure(self):
        executor = self.executor()
        outcome: list[Any] = []

        def invoke() -> None:
            try:
                outcome.append(self.invoke(executor, "req-1", sleep=30)[0])
            except LambdaRuntimeException as e:
                outcome.append(e)

        thread = threading.Thread(target=invoke)
        thread.start()
        time.sleep(0.3)
        executor.stop()
        thread.join(10)
        self.assertFalse(thread.is_alive())
        # Whichever sees the end first answers: the exit watcher (an error result) or stop().
        [ended] = outcome
        if isinstance(ended, InvocationResult):
            self.assertTrue(ended.is_error)
            self.assertEqual(json.loads(ended.payload or b"")["errorType"], "Runtime.ExitError")


def data_limit(pid: int) -> str:
    """The soft "Max data size" of a process, as /proc shows it."""
    with open(f"/proc/{pid}/limits") as f:
        return next(line.split()[3] for line in f if line.startswith("Max data size"))


class Spawning(ExecutorTest):
    def test_both_ways_of_spawning_cap_the_data_segment(self):
        limit = str((128 + 256) * 1024 * 1024)  # memory size + the default headroom
        for setpriv in (lambda_process.setpriv(), None):
            with (
                self.subTest(setpriv=setpriv),
                mock.patch.object(lambda_process, "setpriv", return_value=setpriv),
            ):
                executor = self.executor()
                _, body = self.invoke(executor, "req-1")
                self.assertEqual(data_limit(body["pid"]), limit)
                executor.stop()

    def test_the_headroom_can_be_switched_off(self):
        with mock.patch.dict(os.environ, {"DOCKET_LAMBDA_MEMORY_HEADROOM_MB": "off"}):
            self.assertIsNone(lambda_process.memory_limit_bytes(128))
        with mock.patch.dict(os.environ, {"DOCKET_LAMBDA_MEMORY_HEADROOM_MB": "64"}):
            self.assertEqual(lambda_process.memory_limit_bytes(128), 192 * 1024 * 1024)

    def test_exit_status_is_worded_as_lambda_words_it(self):
        self.assertEqual(lambda_process.exit_status(3), "exit status 3")
        self.assertEqual(lambda_process.exit_status(-9), "signal: SIGKILL")


if __name__ == "__main__":
    unittest.main()
