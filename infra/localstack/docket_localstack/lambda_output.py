"""A bootstrap's stdout/stderr, split by invocation and framed as AWS frames it in CloudWatch Logs.

Each invocation's output is returned framed by ``START`` / ``END`` / ``REPORT`` lines (with
``Init Duration`` on the first invocation after a (re)start and ``Max Memory Used`` from the
process's VmHWM); output written before an invocation started (init) precedes its ``START``.
LocalStack forwards the result to ``/aws/lambda/<name>``.
"""

import os
import select
import threading

MAX_KEPT_LOGS = 1_000_000  # characters of framed logs `text()` keeps (oldest dropped first)


class OutputCapture:
    """The output of an environment's processes, one pipe at a time, read as it comes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pending = bytearray()  # output since the last invocation's end
        self._framed: list[str] = []
        self._framed_size = 0

    def attach(self, fd: int, thread_name: str) -> None:
        """Reads the new process's pipe from now on (its read end; closed here at EOF)."""
        os.set_blocking(fd, False)
        with self._lock:
            self._fd = fd
        threading.Thread(target=self._pump, args=(fd,), name=thread_name, daemon=True).start()

    def _pump(self, fd: int) -> None:
        """Move the child's output into the buffer as it comes (the lock is held while reading,
        so a drain under the same lock sees everything written before it)."""
        while True:
            select.select([fd], [], [])
            with self._lock:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if data:
                    self._pending += data
                    continue
                # EOF: every writer is gone. This thread alone closes the fd, so its number
                # cannot be reused while anyone still reads it.
                if self._fd == fd:
                    self._fd = None
                os.close(fd)
                return

    def drain(self) -> str:
        """Everything the child wrote so far and not yet attributed to an invocation."""
        with self._lock:
            fd = self._fd
            if fd is not None:
                while True:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:  # BlockingIOError: nothing more for now
                        break
                    if not data:
                        break
                    self._pending += data
            text = self._pending.decode("utf-8", "replace")
            self._pending.clear()
            return text

    def keep(self, framed: str) -> None:
        """Remembers an invocation's framed logs for `text()`."""
        with self._lock:
            self._framed.append(framed)
            self._framed_size += len(framed)
            while self._framed_size > MAX_KEPT_LOGS and len(self._framed) > 1:
                self._framed_size -= len(self._framed.pop(0))

    def text(self) -> str:
        """The framed logs kept, then the output not yet attributed to an invocation."""
        with self._lock:
            return "".join(self._framed) + self._pending.decode("utf-8", "replace")


def frame(
    request_id: str,
    version: str,
    before: str,
    output: str,
    *,
    duration_ms: float,
    memory_mb: int,
    used_mb: int | None,
    init_ms: float | None,
    status: str | None,
) -> str:
    """One invocation's logs: ``before`` (init output), START, ``output``, END and REPORT."""
    if output and not output.endswith("\n"):
        output += "\n"
    if before and not before.endswith("\n"):
        before += "\n"
    report = (
        f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
        f"Billed Duration: {max(1, int(duration_ms + 0.999))} ms\tMemory Size: {memory_mb} MB\t"
        f"Max Memory Used: {used_mb if used_mb is not None else '-'} MB"
    )
    if init_ms is not None:
        report += f"\tInit Duration: {init_ms:.2f} ms"
    if status:
        report += f"\tStatus: {status}"
    return (
        f"{before}START RequestId: {request_id} Version: {version}\n{output}"
        f"END RequestId: {request_id}\n{report}\n"
    )
