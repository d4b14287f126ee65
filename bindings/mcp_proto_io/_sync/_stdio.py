"""The threads stdio connection: one server process, one core session, three threads.

The stdout reader feeds the core; the service thread writes what the reader and the timers
produced, fires the core's deadlines and notices a server gone without EOF; the stderr
reader keeps the last 8 KiB.  Callers write their own requests.
"""

from __future__ import annotations

import _thread
import os
import subprocess
import threading
import time

from mcp_proto import ConnectionLost

from .._client import StdioOptions
from .._fds import wait_fd
from .._process import StderrTail, argv_of, spawn, stop_process_tree
from .._tuning import (
    BIG_READ_SIZE,
    PROCESS_POLL_INTERVAL,
    READ_SIZE,
    STDERR_SETTLE,
    STDOUT_SETTLE,
)
from ._pump import Pump

__all__ = ["WRITE_POLL", "StdioConnection"]

#: Longest wait for the server's stdin to accept bytes before deadlines are checked again.
WRITE_POLL = 0.05


class StdioConnection(Pump):
    """One server process, one core session, three threads."""

    def __init__(self, client: StdioOptions) -> None:
        super().__init__(client)
        self.client: StdioOptions = client
        self.queue: list[bytes] = []  # output waiting for the write lock, under self.lock
        self.wlock = threading.Lock()
        self.stderr = StderrTail(client._observer.stderr_lines(), client._observer.redactor)
        self.partial: memoryview | None = None  # output the pipe did not take yet (wlock)
        self.write_blocked = False  # the server's stdin is full (under self.lock)
        self._stop_lock = threading.Lock()
        self._stopped = False
        self._closing = False
        self._gone = False  # the server's end was handled (by the reader or the service)
        self.written = 0  # bytes the pipe took (under wlock): did the server read them?
        try:
            self.proc, self.witness = spawn(client._command, env=client._env, cwd=client._cwd)
        except OSError as exc:
            raise ConnectionLost(
                f"cannot start the server {argv_of(client._command)[0]!r}: {exc}") from exc
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin_fd = self.proc.stdin.fileno()
        # Never block in write(): a server that stops reading must not stall a caller past its
        # deadline, nor the service thread that fires deadlines.
        os.set_blocking(self.stdin_fd, False)
        self.threads = [
            threading.Thread(target=self._read_stdout, name="mcp-proto-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name="mcp-proto-stderr", daemon=True),
            threading.Thread(target=self._service, name="mcp-proto-service", daemon=True),
        ]
        # Each thread starts after the ones it joins: the stdout reader and the service
        # thread join the stderr reader when the server is gone (it may be gone at once),
        # the service thread also the stdout reader.
        try:
            for t in (self.threads[1], self.threads[0], self.threads[2]):
                t.start()
        except BaseException:  # no thread to be had: nothing may be left running
            self.closed = True
            self._stop_tree()
            self.opening_over()
            raise

    def opening_over(self) -> None:
        if self.witness is not None:
            self.witness.close()

    # -- output -----------------------------------------------------------------------------

    def _queue_output_locked(self) -> None:
        data = self.session.data_to_send()
        if data:
            self.queue.append(data)  # queued first: the drained bytes are never lost
            if self.tracer is not None:
                self.tracer.sent(data)  # never raises

    def _flush(self) -> None:
        """Write queued output, unless another thread is writing (it takes ours too).  If the
        server's stdin is full, the service thread finishes the job: no caller waits on it."""
        while self.wlock.acquire(blocking=False):
            try:
                done = self._pump_out()
            finally:
                self.wlock.release()
            with self.lock:
                if not done:
                    self.write_blocked = True
                    self.cond.notify()
                    return
                if not self.queue:
                    return

    def _pump_out(self) -> bool:
        """Write as much as the pipe takes (hold ``wlock``).  False if the pipe is full."""
        fd = self.stdin_fd
        while True:
            view = self.partial
            if view is None:
                with self.lock:
                    if not self.queue:
                        return True
                    chunks = self.queue
                    self.queue = []
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                try:
                    n = os.write(fd, data)  # the pipe takes it all: the usual case
                except BlockingIOError:
                    n = 0
                except OSError:
                    self._stdin_closed()
                    continue
                self.written += n
                if n == len(data):
                    continue
                view = memoryview(data)[n:]
            try:
                while view:
                    n = os.write(fd, view)
                    self.written += n
                    view = view[n:]
            except BlockingIOError:
                self.partial = view
                return False
            except OSError:
                self._stdin_closed()
            self.partial = None

    def _stdin_closed(self) -> None:
        # The server closed its stdin (it is exiting): the reader sees EOF and fails the
        # pending requests with the exit code.
        with self.lock:
            self.queue.clear()

    # -- reader thread ----------------------------------------------------------------------

    def _read_stdout(self) -> None:
        self.callback_ident = _thread.get_ident()  # this thread runs on_progress & co.
        try:
            self._read_stdout_loop()
        except BaseException as exc:  # a bug must fail the calls, not strand them
            self._crashed(exc)
            raise
        self._server_gone()

    def _read_stdout_loop(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        session = self.session
        read = os.read
        monotonic = time.monotonic
        size = READ_SIZE
        tracer = self.tracer
        while True:
            try:
                data = read(fd, size)
            except OSError:
                data = b""
            if not data:
                break
            size = BIG_READ_SIZE if len(data) >= READ_SIZE else READ_SIZE
            with self.lock:
                if tracer is not None:
                    tracer.received(data)  # never raises: showing cannot crash the reader
                session.receive_data(data, now=monotonic())
                out = session.data_to_send()
                if out:
                    self.queue.append(out)  # queued first: the drained bytes are never lost
                    if tracer is not None:
                        tracer.sent(out)
                    self.cond.notify()  # the service thread writes: the reader never blocks
                else:
                    # An answer may bring a deadline nearer (a task's next poll): wake the
                    # service thread if it sleeps towards a later one.
                    deadline = session.next_deadline()
                    if deadline is not None and (self.armed is None or deadline < self.armed):
                        self.cond.notify()
                events = self._drain_locked()
            if events:
                self._dispatch(events)

    def _server_gone(self) -> None:
        """End the session with the server's exit: once, from the stdout reader at EOF or from
        the service thread (a grandchild may hold stdout open)."""
        with self.lock:
            if self._gone:
                return
            self._gone = True
        code: int | None
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        self.threads[1].join(STDERR_SETTLE)
        error = self.client._exited(code, self.stderr.text(), closed=self.closed)
        # Under the write lock (taken first, as writers do): no byte is counted mid-write.
        with self.wlock, self.lock:
            unread = self.witness is not None and self.witness.read_nothing(self.written)
            if not self.closed:
                self.exit_error = error
            self.session.receive_eof(error, input_unread=unread)
            events = self._drain_locked()
            self.cond.notify()
        self._dispatch(events)
        # Stop what is left of the group now, while its id cannot have been reused.
        self._stop_tree()

    # -- service thread ---------------------------------------------------------------------

    def _service_loop(self) -> None:
        session = self.session
        while True:
            with self.lock:
                if self.closed:
                    return
                deadline = session.next_deadline()
                now = time.monotonic()
                if (deadline is None or deadline > now) and not self.queue \
                        and not self.write_blocked:
                    wait = PROCESS_POLL_INTERVAL if deadline is None else min(
                        deadline - now, PROCESS_POLL_INTERVAL)
                    self.armed = deadline
                    self.cond.wait(wait)
                    self.armed = None
                session.handle_timeout(time.monotonic())
                self._queue_output_locked()
                events = self._drain_locked()
                blocked = self.write_blocked
            if events:
                self._dispatch(events)
            fd = self.stdin_fd
            if blocked and fd >= 0:
                try:
                    wait_fd(fd, "write", WRITE_POLL)
                except (OSError, ValueError):  # closed meanwhile
                    pass
            with self.wlock:  # holders never block: the pipe is non-blocking
                done = self._pump_out()
            with self.lock:
                self.write_blocked = not done
            if self.proc.poll() is not None:
                # The server is gone.  Let the reader take what it wrote first (it calls
                # _server_gone at EOF); if a grandchild keeps the pipe open no EOF comes,
                # so end the session from here.
                self._settle_stdout()
                self._server_gone()
                return

    def _settle_stdout(self) -> None:
        """Wait while the reader still has bytes (or the EOF) to take from stdout."""
        reader = self.threads[0]
        assert self.proc.stdout is not None
        end = time.monotonic() + STDOUT_SETTLE
        while reader.is_alive() and time.monotonic() < end:
            try:
                readable = wait_fd(self.proc.stdout.fileno(), "read", 0.1)
            except (OSError, ValueError):
                return
            if not readable:
                return  # nothing left and no EOF coming: a grandchild holds the pipe
            reader.join(0.05)

    # -- shutdown ---------------------------------------------------------------------------

    def _close_stdin(self) -> None:
        # Under the write lock, so no writer uses the descriptor after it is closed (and
        # possibly reused by another file); later writes get EBADF and are dropped.
        with self.wlock:
            if self.stdin_fd >= 0:
                self.stdin_fd = -1
                if self.proc.stdin is not None:
                    try:
                        self.proc.stdin.close()
                    except OSError:
                        pass

    def _stop_tree(self) -> None:
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._close_stdin()
        stop_process_tree(self.proc, close_stdin=False)

    def close(self) -> None:
        """Idempotent; any thread (also a handler or a callback)."""
        with self.lock:
            if self._closing:
                return
            self._closing = True
            self.session.close()
            events = self._drain_locked()
            self.closed = True
            self.cond.notify_all()
        self._dispatch(events)
        self._stop_tree()
        current = threading.current_thread()
        for t in self.threads:
            if t is not current:
                t.join(5.0)
        # Close a pipe only once its reader is gone: a live reader would read whatever file
        # reuses the descriptor.  A reader still blocked (a setsid grandchild holds the pipe)
        # closes nothing and ends with that process.
        for f, t in ((self.proc.stdout, self.threads[0]), (self.proc.stderr, self.threads[1])):
            if f is not None and not t.is_alive():
                f.close()
        self.opening_over()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while True:
            try:
                data = os.read(fd, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                self.stderr.end()
                return
            self.stderr.add(data)
