"""Lambda functions as local processes: a LocalStack runtime executor that needs no Docker.

Selected with ``LAMBDA_RUNTIME_EXECUTOR=docket-process`` (entry point in pyproject.toml). LocalStack
creates one ``ProcessRuntimeExecutor`` per execution environment; each one

* runs the function's ``bootstrap`` (zip package, runtime ``provided.al2023`` / ``provided.al2`` /
  ``provided``) as a child process, cwd and ``LAMBDA_TASK_ROOT`` = the unzipped code directory,
  with LocalStack's environment variables (credentials, ``AWS_ENDPOINT_URL``, function name,
  memory, timeout, log group/stream, user variables) plus ``AWS_LAMBDA_RUNTIME_API``;
* serves that process the Lambda Runtime API on its own loopback port (a small threaded HTTP
  server): ``GET /2018-06-01/runtime/invocation/next`` (long poll; request id, deadline, function
  ARN and trace id headers), ``POST .../invocation/{id}/response``,
  ``POST .../invocation/{id}/error`` and ``POST /2018-06-01/runtime/init/error``;
* keeps the process warm between invocations (LocalStack reuses the environment, and runs several
  environments, each with its own port and process, for concurrent invocations);
* enforces the function timeout: past it the whole process group is killed and the invocation
  answers ``{"errorType": "Sandbox.Timedout", "errorMessage": "RequestId: ... Error: Task timed out
  after N.00 seconds"}``. A crash mid-invocation answers ``Runtime.ExitError``. In both cases the
  environment stays registered with LocalStack (its status machine only knows READY/INVOKING) and
  the bootstrap is started again (a fresh init, as AWS does) on the environment's next invocation;
* forwards errors posted by the function unchanged (``errorType`` is what Step Functions' Retry and
  Catch match on; LocalStack's provider adds ``FunctionError: Unhandled``);
* captures the child's stdout/stderr and returns it per invocation framed by AWS-style ``START`` /
  ``END`` / ``REPORT`` lines (with ``Init Duration`` on the first invocation after a (re)start and
  ``Max Memory Used`` from the process's VmHWM), which LocalStack forwards to CloudWatch Logs
  ``/aws/lambda/<name>``;
* memory: passes ``AWS_LAMBDA_FUNCTION_MEMORY_SIZE``; enforces it loosely with ``RLIMIT_DATA`` =
  memory size + ``DOCKET_LAMBDA_MEMORY_HEADROOM_MB`` (default 256; ``off`` disables). Not
  ``RLIMIT_AS``: Rust/tokio and glibc reserve far more address space (thread stacks, 64 MiB malloc
  arenas) than they use, so an address-space limit at the memory size kills healthy functions.
  ``RLIMIT_DATA`` still counts thread stacks, hence the headroom: it catches runaway allocations,
  it is not AWS's exact cgroup limit;
* cleanup: children run in their own session (``kill`` of the process group reaches anything they
  spawn), are started from one long-lived thread with ``PR_SET_PDEATHSIG=SIGKILL`` (the signal
  fires when the *thread* that forked the child ends, so it must not be a request thread), and
  carry ``DOCKET_LOCALSTACK_PID`` / ``DOCKET_LOCALSTACK_PORT`` in their environment so a sweep can
  find leftovers. ``stop()`` sends SIGTERM to the group, SIGKILL after 2 s, and closes the server.
  The death signal is set by util-linux ``setpriv --pdeathsig KILL`` when present (Popen can then
  vfork: ~0.5 ms instead of ~25 ms for forking LocalStack's ~400 MB; ``RLIMIT_DATA`` is then set
  with ``prlimit`` right after the spawn), else by a ``preexec_fn`` calling ``prctl`` via ctypes.
  (If LocalStack died within the first millisecond of a spawn, before ``setpriv`` ran, that child
  would survive: the sweep in scripts/localstack.sh covers it.)

Not emulated: other runtimes (python, node, java, ...) and image packages (start fails with a
message naming the runtime), layers (``/opt``), extensions API, response streaming, X-Ray,
SnapStart, the 10 s init limit (LocalStack's ``LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT`` applies
instead), client context / Cognito identity headers, payload size limits, the read-only file system
and the ``/tmp`` sandbox (the function runs as LocalStack's user on the host), architecture
emulation (the bootstrap must be built for the host).

The spawn -> first ``next`` time (cold start) is logged at DEBUG and reported as ``Init Duration``.
"""

import contextlib
import ctypes
import json
import logging
import os
import queue
import resource
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from localstack import config
from localstack.aws.api.lambda_ import PackageType
from localstack.services.lambda_.invocation.executor_endpoint import StatusErrorException
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

LOG = logging.getLogger(__name__)

SUPPORTED_RUNTIMES = ("provided.al2023", "provided.al2", "provided")
API_PREFIX = "/2018-06-01/runtime"
STOP_GRACE_SECONDS = 2.0
PR_SET_PDEATHSIG = 1


# --- process spawning -------------------------------------------------------------------------


class _Spawner:
    """Starts every child from one long-lived daemon thread.

    PR_SET_PDEATHSIG is tied to the thread that forked the child: a child forked from a request
    thread would be killed as soon as that thread ends. This thread lives as long as LocalStack."""

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, *args, **kwargs) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="docket-lambda-spawner", daemon=True
                )
                self._thread.start()
        future: Future = Future()
        self._jobs.put((future, args, kwargs))
        return future.result()

    def _run(self) -> None:
        while True:
            future, args, kwargs = self._jobs.get()
            try:
                future.set_result(subprocess.Popen(*args, **kwargs))
            except BaseException as e:  # handed to the caller
                future.set_exception(e)


_SPAWNER = _Spawner()


def _child_setup(parent_pid: int, data_limit: int | None):
    """preexec_fn: die with LocalStack, and cap the data segment."""
    libc = ctypes.CDLL(None, use_errno=True)

    def setup() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # parent died between fork and prctl
            os._exit(1)
        if data_limit is not None:
            resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))

    return setup


_SETPRIV: list[str | None] = []


def _setpriv() -> str | None:
    """util-linux `setpriv`, if it supports --pdeathsig (checked once)."""
    if not _SETPRIV:
        path = shutil.which("setpriv")
        try:
            ok = (
                path is not None
                and subprocess.run(
                    [path, "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=5
                ).returncode
                == 0
            )
        except (OSError, subprocess.SubprocessError):
            ok = False
        _SETPRIV.append(path if ok else None)
    return _SETPRIV[0]


def _memory_limit_bytes(memory_mb: int) -> int | None:
    headroom = os.environ.get("DOCKET_LAMBDA_MEMORY_HEADROOM_MB", "256").strip().lower()
    if headroom in ("off", "none", "false", "no", ""):
        return None
    return (int(memory_mb) + int(headroom)) * 1024 * 1024


def _max_memory_used_mb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return max(1, int(line.split()[1]) // 1024)
    except OSError:
        pass
    return None


def _loopback_host() -> str:
    host = config.GATEWAY_LISTEN[0].host
    return "127.0.0.1" if host in ("0.0.0.0", "::", "", "localhost") else host


# --- one invocation ---------------------------------------------------------------------------


class _Invocation:
    def __init__(self, payload: dict) -> None:
        self.request_id: str = payload.get("invoke-id") or str(uuid.uuid4())
        self.arn: str = payload.get("invoked-function-arn", "")
        self.trace_id: str = payload.get("trace-id") or ""
        body = payload.get("payload")
        self.body: bytes = body.encode() if isinstance(body, str) else (body or b"")
        self.deadline_ms: int = 0
        self.result: Future = Future()  # (payload bytes, is_error, error type)


# --- the Runtime API server -------------------------------------------------------------------


class _RuntimeApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_RuntimeApiServer"

    def setup(self) -> None:
        super().setup()
        # The runtime keeps one connection; avoid Nagle + delayed-ACK stalls on small writes.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args) -> None:  # the base class's signature
        LOG.debug("runtime api %s: " + format, self.server.executor.id, *args)

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
        inv = self.server.executor._next_invocation()
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
            self.server.executor._requeue(inv)
            raise

    def do_POST(self) -> None:
        body = self._body()
        parts = self.path.rstrip("/").split("/")
        executor = self.server.executor
        # /2018-06-01/runtime/invocation/{id}/{response|error}
        if len(parts) == 6 and parts[3] == "invocation" and parts[5] in ("response", "error"):
            if parts[5] == "response":
                ok = executor._complete(parts[4], body, is_error=False)
            else:
                header = self.headers.get("Lambda-Runtime-Function-Error-Type")
                ok = executor._complete(parts[4], _error_payload(body, header), is_error=True)
            if ok:
                return self._send(202, b'{"status":"OK"}')
            return self._send(400, b'{"errorType":"InvalidRequestID"}')
        if self.path.rstrip("/") == f"{API_PREFIX}/init/error":
            header = self.headers.get("Lambda-Runtime-Function-Error-Type")
            executor._init_failed(_error_payload(body, header))
            return self._send(202, b'{"status":"OK"}')
        return self._send(404, b'{"errorType":"NotFound"}')


class _RuntimeApiServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, executor: "ProcessRuntimeExecutor") -> None:
        self.executor = executor
        super().__init__(("127.0.0.1", 0), _RuntimeApiHandler)

    def handle_error(self, request, client_address) -> None:
        # A killed runtime resets its connection: expected, not worth a traceback on stderr.
        LOG.debug("runtime api %s: connection from %s failed", self.executor.id, client_address)


def _error_payload(body: bytes, error_type_header: str | None) -> bytes:
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


def _error(error_type: str, message: str) -> bytes:
    return json.dumps({"errorType": error_type, "errorMessage": message}).encode()


# --- the executor -----------------------------------------------------------------------------


class ProcessRuntimeExecutor(RuntimeExecutor):
    """One execution environment: one bootstrap process and its Runtime API server."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id, function_version)
        self._cond = threading.Condition()
        self._server: _RuntimeApiServer | None = None
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
        self._pending: _Invocation | None = None  # waiting for `next`
        self._inflight: _Invocation | None = None  # handed out, waiting for response/error
        # output
        self._out_lock = threading.Lock()
        self._out_fd: int | None = None
        self._out_pending = bytearray()  # output since the last invocation's end
        self._all_logs: list[str] = []
        self._all_logs_size = 0

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
        self._server = _RuntimeApiServer(self)
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
        inv = _Invocation(payload)
        timeout = float(self.function_version.config.timeout or 3)
        preface = ""
        before = self._drain_output()  # init output: precedes START, as on AWS
        if not self._process_alive():
            # The last invocation timed out or crashed: start a fresh runtime (AWS re-inits too).
            try:
                self._start_process(timeout=float(config.LAMBDA_RUNTIME_ENVIRONMENT_TIMEOUT))
            except StatusErrorException as e:
                before += self._drain_output()
                logs = self._frame(inv.request_id, before, "", 0.0, "error")
                return InvocationResult(inv.request_id, e.payload, is_error=True, logs=logs)
            before += self._drain_output()
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
            body = _error(
                "Sandbox.Timedout",
                f"RequestId: {inv.request_id} Error: Task timed out after {timeout:.2f} seconds",
            )
            is_error, status = True, "timeout"
        duration_ms = (time.monotonic() - started) * 1000
        if status is None and is_error and not self._process_alive():
            status = "error"
        logs = self._frame(
            inv.request_id, before, self._drain_output() + preface, duration_ms, status
        )
        return InvocationResult(inv.request_id, body, is_error=is_error, logs=logs)

    def get_logs(self) -> str:
        with self._out_lock:
            return "".join(self._all_logs) + self._out_pending.decode("utf-8", "replace")

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
                payload=_error(
                    "Runtime.InvalidEntrypoint",
                    f"Couldn't find valid bootstrap(s): [{bootstrap}]",
                ),
            )
        memory_mb = int(self.function_version.config.memory_size or 128)
        data_limit = _memory_limit_bytes(memory_mb)
        # Fast path: `setpriv --pdeathsig KILL` sets the death signal in the child, so Popen can use
        # vfork (~0.5 ms) instead of fork + preexec_fn (~25 ms: LocalStack's ~400 MB are copied
        # page table by page table), and the data limit is set right after the spawn.
        setpriv = _setpriv()
        if setpriv:
            argv, preexec = [setpriv, "--pdeathsig", "KILL", "--", bootstrap], None
        else:
            argv, preexec = [bootstrap], _child_setup(os.getpid(), data_limit)
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
            proc = _SPAWNER.popen(
                argv,
                cwd=self._code_dir,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                preexec_fn=preexec,
                close_fds=True,
            )
            if setpriv and data_limit is not None:
                # OSError: already gone, the exit watcher reports it.
                with contextlib.suppress(OSError):
                    resource.prlimit(proc.pid, resource.RLIMIT_DATA, (data_limit, data_limit))
        except OSError as e:
            os.close(read_fd)
            os.close(write_fd)
            raise StatusErrorException(
                "Environment startup failed",
                payload=_error("Runtime.InvalidEntrypoint", f"{bootstrap}: {e}"),
            ) from e
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        with self._out_lock:
            self._out_fd = read_fd
        with self._cond:
            self._proc = proc
        threading.Thread(
            target=self._pump_output, args=(read_fd,), name=f"lambda-out-{self.id}", daemon=True
        ).start()
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
            payload = _error(
                "Runtime.ExitError", f"Runtime exited during init: {_status(exit_code)}"
            )
        else:
            payload = _error("Runtime.InitTimeout", f"Runtime did not initialise in {timeout} s")
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
                    _error(
                        "Runtime.ExitError",
                        f"RequestId: {inv.request_id} Error: Runtime exited with error: "
                        f"{_status(code)}",
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
        used = _max_memory_used_mb(proc.pid)
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

    # -- Runtime API callbacks (server threads) --------------------------------------------

    def _next_invocation(self) -> _Invocation | None:
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

    def _requeue(self, inv: _Invocation) -> None:
        with self._cond:
            if self._inflight is inv and not inv.result.done():
                self._inflight, self._pending = None, inv
                self._cond.notify_all()

    def _complete(self, request_id: str, body: bytes, is_error: bool) -> bool:
        with self._cond:
            inv = self._inflight
            if inv is None or inv.request_id != request_id or inv.result.done():
                return False
            self._inflight = None
        inv.result.set_result((body, is_error))
        return True

    def _init_failed(self, payload: bytes) -> None:
        with self._cond:
            if self._init_error is None:
                self._init_error = payload
            self._cond.notify_all()

    # -- output ----------------------------------------------------------------------------

    def _pump_output(self, fd: int) -> None:
        """Move the child's output into the buffer as it comes (the lock is held while reading,
        so a drain under the same lock sees everything written before it)."""
        while True:
            select.select([fd], [], [])
            with self._out_lock:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if data:
                    self._out_pending += data
                    continue
                # EOF: every writer is gone. This thread alone closes the fd, so its number
                # cannot be reused while anyone still reads it.
                if self._out_fd == fd:
                    self._out_fd = None
                os.close(fd)
                return

    def _drain_output(self) -> str:
        """Everything the child wrote so far and not yet attributed to an invocation."""
        with self._out_lock:
            fd = self._out_fd
            if fd is not None:
                while True:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:  # BlockingIOError: nothing more for now
                        break
                    if not data:
                        break
                    self._out_pending += data
            text = self._out_pending.decode("utf-8", "replace")
            self._out_pending.clear()
            return text

    def _frame(
        self, request_id: str, before: str, output: str, duration_ms: float, status: str | None
    ) -> str:
        cfg = self.function_version.config
        version = self.function_version.id.qualifier
        memory = int(cfg.memory_size or 128)
        with self._cond:
            proc = self._proc
            init_ms = self.cold_start_ms if self._report_init else None
            self._report_init = False
        used = _max_memory_used_mb(proc.pid) if proc is not None else None
        if used is None:
            used = self._last_hwm_mb
        else:
            self._last_hwm_mb = used
        if output and not output.endswith("\n"):
            output += "\n"
        if before and not before.endswith("\n"):
            before += "\n"
        report = (
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Billed Duration: {max(1, int(duration_ms + 0.999))} ms\tMemory Size: {memory} MB\t"
            f"Max Memory Used: {used if used is not None else '-'} MB"
        )
        if init_ms is not None:
            report += f"\tInit Duration: {init_ms:.2f} ms"
        if status:
            report += f"\tStatus: {status}"
        logs = (
            f"{before}START RequestId: {request_id} Version: {version}\n{output}"
            f"END RequestId: {request_id}\n{report}\n"
        )
        with self._out_lock:
            self._all_logs.append(logs)
            self._all_logs_size += len(logs)
            while self._all_logs_size > 1_000_000 and len(self._all_logs) > 1:
                self._all_logs_size -= len(self._all_logs.pop(0))
        return logs


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"signal: {signal.Signals(-code).name}"
        except ValueError:
            return f"signal: {-code}"
    return f"exit status {code}"


__all__ = ["ProcessRuntimeExecutor"]
