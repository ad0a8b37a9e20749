"""Starting a bootstrap process so that it cannot outlive LocalStack, and reading what it used.

Children run in their own session (``kill`` of the process group reaches anything they spawn),
are started from one long-lived thread with ``PR_SET_PDEATHSIG=SIGKILL`` (the signal fires when the
*thread* that forked the child ends, so it must not be a request thread), and carry
``DOCKET_LOCALSTACK_PID`` / ``DOCKET_LOCALSTACK_PORT`` in their environment (set by the executor)
so a sweep can find leftovers.

The death signal is set by util-linux ``setpriv --pdeathsig KILL`` when present (Popen can then
vfork: ~0.5 ms instead of ~25 ms for forking LocalStack's ~400 MB; ``RLIMIT_DATA`` is then set with
``prlimit`` right after the spawn), else by a ``preexec_fn`` calling ``prctl`` via ctypes. (If
LocalStack died within the first millisecond of a spawn, before ``setpriv`` ran, that child would
survive: the sweep in scripts/localstack.sh covers it.)

Memory: ``RLIMIT_DATA`` = memory size + ``DOCKET_LAMBDA_MEMORY_HEADROOM_MB`` (default 256; ``off``
disables). Not ``RLIMIT_AS``: Rust/tokio and glibc reserve far more address space (thread stacks,
64 MiB malloc arenas) than they use, so an address-space limit at the memory size kills healthy
functions. ``RLIMIT_DATA`` still counts thread stacks, hence the headroom: it catches runaway
allocations, it is not AWS's exact cgroup limit.
"""

import contextlib
import ctypes
import os
import queue
import resource
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future

PR_SET_PDEATHSIG = 1


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


def _child_setup(parent_pid: int, data_limit: int | None) -> Callable[[], None]:
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


def setpriv() -> str | None:
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


class BootstrapCommand:
    """How one bootstrap is started: with the death signal set, the data segment capped."""

    def __init__(self, bootstrap: str, data_limit: int | None) -> None:
        self._data_limit = data_limit
        # Fast path: `setpriv --pdeathsig KILL` sets the death signal in the child, so Popen can
        # use vfork (~0.5 ms) instead of fork + preexec_fn (~25 ms: LocalStack's ~400 MB are
        # copied page table by page table), and the data limit is set right after the spawn.
        self._setpriv = setpriv()
        self._preexec: Callable[[], None] | None
        if self._setpriv:
            self.argv = [self._setpriv, "--pdeathsig", "KILL", "--", bootstrap]
            self._preexec = None
        else:
            self.argv = [bootstrap]
            self._preexec = _child_setup(os.getpid(), data_limit)

    def spawn(self, cwd: str, env: dict[str, str], output_fd: int) -> subprocess.Popen:
        """The running child, its stdout and stderr on ``output_fd``, in a session of its own."""
        proc = _SPAWNER.popen(
            self.argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output_fd,
            stderr=output_fd,
            start_new_session=True,
            preexec_fn=self._preexec,
            close_fds=True,
        )
        if self._setpriv and self._data_limit is not None:
            # OSError: already gone, the exit watcher reports it.
            with contextlib.suppress(OSError):
                limit = (self._data_limit, self._data_limit)
                resource.prlimit(proc.pid, resource.RLIMIT_DATA, limit)
        return proc


def memory_limit_bytes(memory_mb: int) -> int | None:
    """The data segment limit for a function of ``memory_mb`` (None: no limit)."""
    headroom = os.environ.get("DOCKET_LAMBDA_MEMORY_HEADROOM_MB", "256").strip().lower()
    if headroom in ("off", "none", "false", "no", ""):
        return None
    return (int(memory_mb) + int(headroom)) * 1024 * 1024


def max_memory_used_mb(pid: int) -> int | None:
    """The process's peak resident memory (VmHWM), None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return max(1, int(line.split()[1]) // 1024)
    except OSError:
        pass
    return None


def exit_status(code: int) -> str:
    """A Popen return code as Lambda words it (``exit status 3``, ``signal: SIGKILL``)."""
    if code < 0:
        try:
            return f"signal: {signal.Signals(-code).name}"
        except ValueError:
            return f"signal: {-code}"
    return f"exit status {code}"
