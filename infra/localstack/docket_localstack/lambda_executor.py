"""Lambda functions as local processes: a LocalStack runtime executor that needs no Docker.

Selected with ``LAMBDA_RUNTIME_EXECUTOR=docket-process`` (entry point in pyproject.toml). LocalStack
creates one ``ProcessRuntimeExecutor`` per execution environment; each one

* runs the function's ``bootstrap`` (zip package, runtime ``provided.al2023`` / ``provided.al2`` /
  ``provided``) as a child process (started by :mod:`.lambda_process`: it dies with LocalStack,
  its data segment is capped), cwd and ``LAMBDA_TASK_ROOT`` = the unzipped code directory, with
  LocalStack's environment variables (credentials, ``AWS_ENDPOINT_URL``, function name, memory,
  timeout, log group/stream, user variables) plus ``AWS_LAMBDA_RUNTIME_API``;
* serves that process the Lambda Runtime API on its own loopback port
  (:mod:`.lambda_runtime_api`), and is the server's backend: it hands ``next`` the pending
  invocation and completes it with the posted response or error;
* keeps the process warm between invocations (LocalStack reuses the environment, and runs several
  environments, each with its own port and process, for concurrent invocations);
* enforces the function timeout: past it the whole process group is killed and the invocation
  answers ``{"errorType": "Sandbox.Timedout", "errorMessage": "RequestId: ... Error: Task timed out
  after N.00 seconds"}``. A crash mid-invocation answers ``Runtime.ExitError``. In both cases the
  environment stays registered with LocalStack (its status machine only knows READY/INVOKING) and
  the bootstrap is started again (a fresh init, as AWS does) on the environment's next invocation;
* returns the child's stdout/stderr per invocation, framed as on AWS (:mod:`.lambda_output`);
* memory: passes ``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``; enforces it loosely (see
  :mod:`.lambda_process`);
* cleanup: ``stop()`` sends SIGTERM to the process group, SIGKILL after 2 s, and closes the server.

Not emulated: other runtimes (python, node, java, ...) and image packages (start fails with a
message naming the runtime), layers (``/opt``), extensions API, response streaming, X-Ray,
SnapStart, the 10 s init limit (LocalStack's ``LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT`` applies
instead), client context / Cognito identity headers, payload size limits, the read-only file system
and the ``/tmp`` sandbox (the function runs as LocalStack's user on the host), architecture
emulation (the bootstrap must be built for the host).

The spawn -> first ``next`` time (cold start) is logged at DEBUG and reported as ``Init Duration``.
"""

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout

from localstack import config
from localstack.aws.api.lambda_ import PackageType
from localstack.services.lambda_.invocation.executor_endpoint import StatusErrorException
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

from docket_localstack.lambda_output import OutputCapture, frame
from docket_localstack.lambda_process import (
    BootstrapCommand,
    exit_status,
    max_memory_used_mb,
    memory_limit_bytes,
)
from docket_localstack.lambda_runtime_api import (
    Invocation,
    RuntimeApiServer,
    error_body,
)

LOG = logging.getLogger(__name__)

SUPPORTED_RUNTIMES = ("provided.al2023", "provided.al2", "provided")
STOP_GRACE_SECONDS = 2.0


def _loopback_host() -> str:
    host = config.GATEWAY_LISTEN[0].host
    return "127.0.0.1" if host in ("0.0.0.0", "::", "", "localhost") else host


class ProcessRuntimeExecutor(RuntimeExecutor):
    """One execution environment: one bootstrap process and its Runtime API server."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id, function_version)
        self._cond = threading.Condition()
        self._server: RuntimeApiServer | None = None
        self._server_thread: threading.Thread | None = None
        self._proc: subprocess.Popen | None = None
        self._env: dict[str, str] = {}
        self._stopping = False
        # init state of the current process
        self._spawned_at = 0.0
        self._initialized = False
        self._init_error: bytes | None = None
        self._exit_code: int | None = None
        self._generation = 0  # bumped on every kill: polls of a killed runtime give up
        self._last_hwm_mb: int | None = None
        self.cold_start_ms: float | None = None  # spawn -> first `next` of the current process
        self._report_init = False  # next REPORT carries Init Duration
        # invocation state
        self._pending: Invocation | None = None  # waiting for `next`
        self._inflight: Invocation | None = None  # handed out, waiting for response/error
        self._output = OutputCapture()

    # -- RuntimeExecutor API ---------------------------------------------------------------

    def start(self, env_vars: dict[str, str]) -> None:
        cfg = self.function_version.config
        if cfg.package_type != PackageType.Zip or cfg.runtime not in SUPPORTED_RUNTIMES:
            kind = "image package" if cfg.package_type == PackageType.Image else cfg.runtime
            raise LambdaRuntimeException(
                f"docket-process executor cannot run {self.function_version.qualified_arn}: "
                f"unsupported runtime '{kind}' (only zip packages with runtime "
                f"{', '.join(SUPPORTED_RUNTIMES)} and an executable 'bootstrap' run locally)"
            )
        if cfg.code is None:  # a zip package always has code; LocalStack's type allows none
            raise LambdaRuntimeException(f"{self.function_version.qualified_arn} has no code")
        code_dir = str(cfg.code.get_unzipped_code_location())
        cfg.code.prepare_for_execution()
        self._server = RuntimeApiServer(self)
        self._server_thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name=f"lambda-runtime-api-{self.id}",
            daemon=True,
        )
        self._server_thread.start()
        port = self._server.server_address[1]
        env = {k: str(v) for k, v in env_vars.items() if v is not None}
        env.update(
            {
                "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
                "LAMBDA_TASK_ROOT": code_dir,
                "LAMBDA_RUNTIME_DIR": code_dir,
                "DOCKET_LOCALSTACK_PID": str(os.getpid()),
                "DOCKET_LOCALSTACK_PORT": str(config.GATEWAY_LISTEN[0].port),
            }
        )
        for name, default in (("PATH", "/usr/local/bin:/usr/bin:/bin"), ("LANG", "C.UTF-8")):
            env.setdefault(name, os.environ.get(name, default))
        self._env = env
        self._code_dir = code_dir
        self._start_process(timeout=None)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._kill_process(graceful=True)
        with self._cond:
            for inv in (self._pending, self._inflight):
                if inv is not None and not inv.result.done():
                    inv.result.set_exception(
                        LambdaRuntimeException(f"Execution environment {self.id} stopped")
                    )
            self._pending = self._inflight = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return _loopback_host()

    def get_runtime_endpoint(self) -> str:
        # LocalStack's own executor endpoint (used by its Go init); unused by local processes.
        return (
            f"http://{_loopback_host()}:{config.GATEWAY_LISTEN[0].port}"
            f"/_localstack_lambda/{self.id}"
        )

    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        inv = Invocation(payload)
        timeout = float(self.function_version.config.timeout or 3)
        preface = ""
        before = self._output.drain()  # init output: precedes START, as on AWS
        if not self._process_alive():
            # The last invocation timed out or crashed: start a fresh runtime (AWS re-inits too).
            try:
                self._start_process(timeout=float(config.LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT))
            except StatusErrorException as e:
                before += self._output.drain()
                logs = self._frame(inv.request_id, before, "", 0.0, "error")
                return InvocationResult(inv.request_id, e.payload, is_error=True, logs=logs)
            before += self._output.drain()
        started = time.monotonic()
        inv.deadline_ms = int((time.time() + timeout) * 1000)
        with self._cond:
            self._pending = inv
            self._cond.notify_all()
        status = None
        try:
            body, is_error = inv.result.result(timeout=timeout)
        except FutureTimeout:
            self._kill_process(graceful=False)
            with self._cond:
                self._pending = self._inflight = None
            preface = (
                f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime())}Z {inv.request_id} "
                f"Task timed out after {timeout:.2f} seconds\n"
            )
            body = error_body(
                "Sandbox.Timedout",
                f"RequestId: {inv.request_id} Error: Task timed out after {timeout:.2f} seconds",
            )
            is_error, status = True, "timeout"
        duration_ms = (time.monotonic() - started) * 1000
        if status is None and is_error and not self._process_alive():
            status = "error"
        logs = self._frame(
            inv.request_id, before, self._output.drain() + preface, duration_ms, status
        )
        return InvocationResult(inv.request_id, body, is_error=is_error, logs=logs)

    def get_logs(self) -> str:
        return self._output.text()

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        if function_version.config.package_type == PackageType.Zip and function_version.config.code:
            function_version.config.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass  # the unzipped code belongs to LocalStack's code cache

    @classmethod
    def validate_environment(cls) -> bool:
        return True

    # -- process lifecycle -----------------------------------------------------------------

    def _process_alive(self) -> bool:
        with self._cond:
            return self._proc is not None and self._exit_code is None

    def _start_process(self, timeout: float | None) -> None:
        """Spawn the bootstrap and wait until it polls `next` (init done)."""
        bootstrap = os.path.join(self._code_dir, "bootstrap")
        if not os.path.isfile(bootstrap) or not os.access(bootstrap, os.X_OK):
            raise StatusErrorException(
                "Environment startup failed",
                payload=error_body(
                    "Runtime.InvalidEntrypoint",
                    f"Couldn't find valid bootstrap(s): [{bootstrap}]",
                ),
            )
        memory_mb = int(self.function_version.config.memory_size or 128)
        command = BootstrapCommand(bootstrap, memory_limit_bytes(memory_mb))
        read_fd, write_fd = os.pipe()
        with self._cond:
            if self._stopping:
                raise LambdaRuntimeException(f"Execution environment {self.id} is stopping")
            self._proc = None
            self._initialized = False
            self._init_error = None
            self._exit_code = None
            self._spawned_at = time.monotonic()
        try:
            proc = command.spawn(self._code_dir, self._env, write_fd)
        except OSError as e:
            os.close(read_fd)
            os.close(write_fd)
            raise StatusErrorException(
                "Environment startup failed",
                payload=error_body("Runtime.InvalidEntrypoint", f"{bootstrap}: {e}"),
            ) from e
        os.close(write_fd)
        self._output.attach(read_fd, thread_name=f"lambda-out-{self.id}")
        with self._cond:
            self._proc = proc
        threading.Thread(
            target=self._watch, args=(proc,), name=f"lambda-wait-{self.id}", daemon=True
        ).start()
        LOG.debug(
            "Started bootstrap pid %s for %s (environment %s, runtime api %s)",
            proc.pid,
            self.function_version.qualified_arn,
            self.id,
            self._env["AWS_LAMBDA_RUNTIME_API"],
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._initialized and self._init_error is None and not self._stopping:
                if self._exit_code is not None:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(remaining)
            ok = self._initialized and self._init_error is None and not self._stopping
            init_error, exit_code, stopping = self._init_error, self._exit_code, self._stopping
        if ok:
            return
        self._kill_process(graceful=False)
        if stopping:
            raise LambdaRuntimeException(f"Execution environment {self.id} stopped during init")
        if init_error is not None:
            payload = init_error
        elif exit_code is not None:
            payload = error_body(
                "Runtime.ExitError", f"Runtime exited during init: {exit_status(exit_code)}"
            )
        else:
            payload = error_body(
                "Runtime.InitTimeout", f"Runtime did not initialise in {timeout} s"
            )
        LOG.warning(
            "Bootstrap of %s failed to initialise: %s\n%s",
            self.function_version.qualified_arn,
            payload.decode(),
            self.get_logs()[-4000:],
        )
        raise StatusErrorException("Environment startup failed", payload=payload)

    def _watch(self, proc: subprocess.Popen) -> None:
        code = proc.wait()
        with self._cond:
            if self._proc is not proc:
                return
            self._exit_code = code
            self._generation += 1
            inv = self._inflight or self._pending
            self._inflight = self._pending = None
            self._cond.notify_all()
        if inv is not None and not inv.result.done():
            inv.result.set_result(
                (
                    error_body(
                        "Runtime.ExitError",
                        f"RequestId: {inv.request_id} Error: Runtime exited with error: "
                        f"{exit_status(code)}",
                    ),
                    True,
                )
            )
        LOG.debug("Bootstrap pid %s of environment %s exited: %s", proc.pid, self.id, code)

    def _kill_process(self, graceful: bool) -> None:
        with self._cond:
            proc = self._proc
        if proc is None:
            return
        used = max_memory_used_mb(proc.pid)
        with self._cond:
            self._generation += 1
            self._last_hwm_mb = used or self._last_hwm_mb
            self._cond.notify_all()
        sig = signal.SIGTERM if graceful else signal.SIGKILL
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_GRACE_SECONDS if graceful else 5)
        # SIGKILL the group even when the leader is gone: its children may still run.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            LOG.warning("Bootstrap pid %s of environment %s did not die", proc.pid, self.id)
        with self._cond:
            if self._exit_code is None:
                self._exit_code = proc.returncode if proc.returncode is not None else -9
            self._cond.notify_all()

    # -- RuntimeApiBackend: called by the Runtime API server's request threads ------------

    def next_invocation(self) -> Invocation | None:
        with self._cond:
            if not self._initialized and self._exit_code is None:
                self._initialized = True
                self.cold_start_ms = (time.monotonic() - self._spawned_at) * 1000
                self._report_init = True
                LOG.debug(
                    "Cold start of %s (environment %s): %.1f ms from spawn to first next",
                    self.function_version.qualified_arn,
                    self.id,
                    self.cold_start_ms,
                )
                self._cond.notify_all()
            # The poll of a runtime that has since been killed must not take an invocation.
            generation = self._generation
            while self._pending is None and not self._stopping:
                if self._generation != generation:
                    return None
                self._cond.wait()
            if self._stopping or self._pending is None or self._generation != generation:
                return None
            inv, self._pending = self._pending, None
            self._inflight = inv
            return inv

    def requeue(self, inv: Invocation) -> None:
        with self._cond:
            if self._inflight is inv and not inv.result.done():
                self._inflight, self._pending = None, inv
                self._cond.notify_all()

    def complete(self, request_id: str, body: bytes, is_error: bool) -> bool:
        with self._cond:
            inv = self._inflight
            if inv is None or inv.request_id != request_id or inv.result.done():
                return False
            self._inflight = None
        inv.result.set_result((body, is_error))
        return True

    def init_failed(self, payload: bytes) -> None:
        with self._cond:
            if self._init_error is None:
                self._init_error = payload
            self._cond.notify_all()

    def _frame(
        self, request_id: str, before: str, output: str, duration_ms: float, status: str | None
    ) -> str:
        with self._cond:
            proc = self._proc
            init_ms = self.cold_start_ms if self._report_init else None
            self._report_init = False
        used = max_memory_used_mb(proc.pid) if proc is not None else None
        if used is None:
            used = self._last_hwm_mb
        else:
            self._last_hwm_mb = used
        logs = frame(
            request_id,
            self.function_version.id.qualifier,
            before,
            output,
            duration_ms=duration_ms,
            memory_mb=int(self.function_version.config.memory_size or 128),
            used_mb=used,
            init_ms=init_ms,
            status=status,
        )
        self._output.keep(logs)
        return logs


__all__ = ["ProcessRuntimeExecutor"]
