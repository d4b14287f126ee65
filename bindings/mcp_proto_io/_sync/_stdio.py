"""The threads stdio connection: one server process, one core session, three threads.

Whoever holds the read role reads the server's stdout and feeds the core (leader/follower):
a caller that starts its call with no other in flight takes the role (before its request is
written) and reads its own answer, no thread switch on the way (the sequential case),
handing on the answers of calls started meanwhile; callers that start beside others wait for
their answer.  The stdout reader thread takes the role when a caller leaves it while calls
still wait, and reads for them; after :data:`READER_GRACE` with nobody reading it watches
stdout without the role and reads what comes while nobody calls (notifications, server
requests), then lets go.  The service thread writes what the pipe did not take, fires the
core's deadlines and notices a server gone without EOF; the stderr reader keeps the last
8 KiB.  Callers write their own requests.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal.signal converts to enums: 4x the cost
import _thread
import os
import select
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

from mcp_proto import Completed, ConnectionLost, LocalProtocolError

from .._client import Operation, StdioOptions
from .._fds import wait_fd
from .._handlers import ProgressCallback, StatusCallback
from .._process import StderrTail, argv_of, spawn, stop_process_tree
from .._tuning import (
    BIG_READ_SIZE,
    PROCESS_POLL_INTERVAL,
    READ_SIZE,
    STDERR_SETTLE,
    STDOUT_SETTLE,
)
from ._pump import CALL_FROM_CALLBACK, Pump, Waiter

__all__ = ["CLOSE_JOIN", "LEAD_POLL", "READER_GRACE", "READER_NAP", "WRITE_POLL",
           "StdioConnection"]

#: Longest wait for the server's stdin to accept bytes before deadlines are checked again.
WRITE_POLL = 0.05
#: Seconds the reader thread leaves the read role to the callers after one gave it up with no
#: call waiting: a caller that calls again within it reads its own answer.  Short, because
#: what arrives while nobody calls (a notification, a server request) waits this long at most.
READER_GRACE = 0.02
#: Longest a reading caller waits in ``poll`` before it looks at its call again: an outcome
#: another thread gave it without a byte on stdout (a close while the server lingers after
#: its stdin closed, a crash, a server gone without EOF) is seen this late at most.  Its own
#: deadline wakes it on time (the wait is the shorter of the two), and a close of a server
#: that exits at once brings EOF at once.  Not shorter, because each look costs a wake-up
#: (about 0.1 ms of CPU on a small VM: at 50 ms a call waiting 5 s spent 20 ms of CPU on
#: them); not longer, because a close from another thread may wait this long.
LEAD_POLL = 0.2
#: Longest the reader thread naps while one caller holds the read role for long (a long
#: call): the caller wakes it when it lets go, so this only bounds a look at a server gone
#: without EOF.  Short naps (READER_GRACE) are for callers that come and go.
READER_NAP = 0.5
#: Longest ``close()`` waits for each thread of the connection to end (and for a reading
#: caller to let go of stdout) before it leaves it to end with the server process.
CLOSE_JOIN = 5.0

_V = TypeVar("_V")  # the value type of an operation
_MAIN_IDENT = threading.main_thread().ident
_SIGINT = int(_signal.SIGINT)


class _Held:
    """What a call on the main thread holds back (see :meth:`StdioConnection._on_sigint`)."""

    __slots__ = ("close", "critical", "handler", "installed", "pending", "previous")

    def __init__(self, handler: Callable[[int, FrameType | None], None]) -> None:
        self.handler = handler  # the connection's _on_sigint (one bound method, kept)
        self.previous: Any = None  # the caller's SIGINT handler
        self.installed = False  # _on_sigint stands in for it now
        self.critical = False  # the main thread is inside the session's work
        self.pending: tuple[int, FrameType | None] | None = None  # a SIGINT held back
        self.close = False  # a close() from a signal handler inside that work


class _Reader:
    """The read side: stdout and the read role's bookkeeping (beside ``Pump.reading``)."""

    __slots__ = ("cond", "eof", "fd", "freed_at", "napping", "poller", "size")

    def __init__(self, fd: int, lock: threading.Lock) -> None:
        self.fd = fd
        self.poller = select.poll()  # the role's holder's alone
        self.poller.register(fd, select.POLLIN)
        self.size = READ_SIZE  # of the next read (BIG_READ_SIZE while a large message comes)
        self.freed_at = 0.0  # when the role was last given up
        self.napping = False  # the reader thread naps till the role's holder lets go (wake it)
        self.eof = False  # stdout ended (whoever read it); the reader thread ends the session
        self.cond = threading.Condition(lock)  # the reader thread (and a close) wait here


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
        self._stop_once = threading.Lock()  # taken by the one stop of the process tree
        self._closing = False
        self._gone = False  # the server's end was handled (by the reader or the service)
        self.written = 0  # bytes the pipe took (under wlock): did the server read them?
        # (Cold state lives in two slotted records: past 30 attributes CPython 3.11 gives an
        # object a dict of its own, and every attribute read on the hot paths costs more.)
        self.held = _Held(self._on_sigint)
        try:
            self.proc, self.witness = spawn(client._command, env=client._env, cwd=client._cwd)
        except OSError as exc:
            raise ConnectionLost(
                f"cannot start the server {argv_of(client._command)[0]!r}: {exc}") from exc
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin_fd = self.proc.stdin.fileno()
        self.rd = _Reader(self.proc.stdout.fileno(), self.lock)
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

    def _claim_output_locked(self) -> bytes | None:
        """Take the queue to write it, with ``wlock``, when no other thread writes: the flush
        that follows needs no lock round to take it.  None: nothing queued, another writer
        (it takes these too), or bytes the pipe left (older: the flush's to write first)."""
        queue = self.queue
        if not queue or not self.wlock.acquire(False):  # not blocking (by keyword: 0.35 us more)
            return None
        if self.partial is not None:  # (read under wlock)
            self.wlock.release()
            return None
        self.queue = []
        return queue[0] if len(queue) == 1 else b"".join(queue)

    def _flush(self, claimed: bytes | None = None) -> None:
        """Write queued output, unless another thread is writing (it takes ours too).  If the
        server's stdin is full, the service thread finishes the job: no caller waits on it.
        ``claimed``: output :meth:`_claim_output_locked` took, with ``wlock``, to write first."""
        while claimed is not None or self.wlock.acquire(False):
            try:
                done = self._pump_out(claimed)
                claimed = None
                if not done:  # said under wlock: the service thread's word cannot overtake it
                    with self.lock:
                        self.write_blocked = True
                        self.cond.notify()
            finally:
                self.wlock.release()
            # Read without the lock (the usual case, one lock round less): output queued while
            # this thread held wlock was queued before its writer's own try for wlock failed,
            # so before the release above; this read sees it.  Output queued later has a
            # writer of its own.
            if not done or not self.queue:
                return

    def _pump_out(self, data: bytes | None = None) -> bool:
        """Write ``data`` (taken from the queue) then what is queued (hold ``wlock``): True
        once it is all written (what is queued meanwhile is the caller's to look for, under
        the lock), False if the pipe is full."""
        fd = self.stdin_fd
        while True:
            view = self.partial
            if view is None:
                if data is None:
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
                    data = None
                    self._stdin_closed()
                    continue
                self.written += n
                if n == len(data):
                    return True  # what was queued meanwhile: the caller looks (_flush, service)
                view = memoryview(data)[n:]
                data = None
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

    # -- the read role ----------------------------------------------------------------------

    def call(self, op: Operation[_V], total: float,
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, total)`` and wait for its value (raises its error), reading
        the answers meanwhile if nobody else does (the module's text).  On the main thread
        SIGINT is held back inside the session's work (:meth:`_on_sigint`)."""
        me = _thread.get_ident()
        main = me == _MAIN_IDENT  # only the main thread writes `critical`
        if me == self.callback_ident:  # before anything is touched: the caller is the reader
            if not (main and not self.held.critical):
                raise LocalProtocolError(CALL_FROM_CALLBACK)
            # Not in a callback: a signal handler's exception (not SIGINT's: that one is
            # held) broke out of an earlier call of this thread as it let go of the role.
            self._release_role()
        waiter = None
        try:
            if main:
                self._hold_signals()
            waiter = self.start(op, total, on_progress, on_status, lead=True)
            if waiter.leading:
                self._lead(waiter, main)
            if main:  # a follower's wait (or none): Ctrl-C interrupts it at once
                held = self.held
                held.critical = False
                if held.close or held.pending is not None:
                    self._run_held()  # what came in start() or in the last of the reading
            value: _V = waiter.wait()  # the Completed value of a RequestHandle[_V]
            self.spare_lock = waiter._lock  # held again, and set once: the next call's
            return value
        except KeyboardInterrupt:
            if waiter is not None:
                if main:
                    self.held.critical = True
                self._cancel_waiter(waiter, "interrupted")
            raise
        finally:
            if main:
                self.held.critical = True
            if self.callback_ident == me:  # this call took the role (only it sets this ident)
                self._release_role()
            if main:
                self._release_signals()

    def _lead(self, waiter: Waiter, main: bool) -> None:
        """Read until ``waiter`` has its outcome (the role's holder).  Raises
        ``KeyboardInterrupt`` from the wait.  An exception inside the session's work is a bug,
        which fails every call with :class:`ConnectionLost` (``_crashed``, as on the reader
        thread) rather than strand them; a ``BaseException`` there (a signal handler's
        ``SystemExit``, say: only SIGINT is held back) does so too, and is raised on."""
        wait_lock = waiter._lock
        deadline = waiter.deadline
        poll = self.rd.poller.poll
        monotonic = time.monotonic
        held = self.held
        while wait_lock.locked():
            timeout = LEAD_POLL  # or sooner, for the deadline (min() costs 0.1 us more)
            if deadline is not None and (left := deadline - monotonic()) < timeout:
                timeout = left
            if main:
                held.critical = False
                if held.close or held.pending is not None:
                    # What came inside the session's work (in start() or the last read) runs
                    # now, before a poll that may last LEAD_POLL.
                    self._run_held()
                    held.critical = True
                    continue
            ready = poll(timeout * 1000.0 if timeout > 0 else 0)
            if main:
                held.critical = True
            try:
                if not ready:
                    deadline = self._fire(monotonic())
                elif (data := self._read()) is None:
                    return  # EOF: the reader thread ends the session (and this call)
                else:
                    deadline = self._take(data, waiter)
            except BaseException as exc:  # a bug, or a signal handler's exception: see above
                self._crashed(exc)
                if not isinstance(exc, Exception):
                    raise  # (SystemExit, an alarm's exception) the caller's, as it came
                traceback.print_exc()
                return  # this call too ends with the ConnectionLost the others get

    # -- SIGINT (and close) on the main thread ------------------------------------------------

    def _hold_signals(self) -> None:
        """Stand in for the SIGINT handler for this call (when there is a Python one)."""
        held = self.held
        held.critical = True  # first: a signal that comes as the handler changes is held
        previous = _signal.getsignal(_SIGINT)
        if previous is held.handler:  # left by a call another signal's exception broke
            previous = held.previous
        if callable(previous):
            held.previous = previous
            _signal.signal(_SIGINT, held.handler)
            held.installed = True

    def _release_signals(self) -> None:
        """Put the caller's handler back, then run what was held back (it raises what it
        raises: ``KeyboardInterrupt``).  A held ``close()`` runs whatever happens."""
        held = self.held
        try:
            if held.installed:
                held.installed = False
                _signal.signal(_SIGINT, held.previous)  # a signal now: the caller's
        finally:
            held.critical = False
            if held.close:
                held.close = False
                self.close()
        if held.pending is not None:
            self._run_held()

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        """SIGINT while the main thread calls: held back while it is inside the session's work
        (a read and what it feeds, a dispatch and its callbacks, the role's hand-over), where
        a ``KeyboardInterrupt`` would lose bytes, leave another caller's answer undelivered or
        the role held; the caller's handler runs once that work is done, so the call is
        interrupted (and cancelled) as before.  In ``poll`` or a wait it runs at once."""
        if self.held.critical:
            self.held.pending = (signum, frame)
        else:
            self.held.previous(signum, frame)

    def _run_held(self) -> None:
        """A ``close()`` and a SIGINT held back while the main thread was inside the session's
        work, now that it is out of it."""
        self.held.critical = False
        if self.held.close:
            self.held.close = False
            self.close()
        pending = self.held.pending
        if pending is not None:
            self.held.pending = None
            self.held.previous(*pending)

    def _release_role(self) -> None:
        """Give up the read role (its holder, as its call ends), waking the reader thread when
        calls still wait for answers.  A lone caller whose read ended its call and nothing else
        gives it up in that read's lock round instead (:meth:`_take`)."""
        with self.lock:
            self._let_go_locked(time.monotonic())
            if not (self.handoff or self.rd.eof or self.closed or self.rd.napping):
                return
            self.rd.cond.notify_all()
        if self.closed:  # by one of this holder's callbacks, say: stdout is its to close
            self._close_stdout()

    def _let_go_locked(self, now: float) -> None:
        """The read role is given up at ``now`` (under the lock): ``handoff`` says whether calls
        still wait for answers, which then need a reader."""
        self.reading = False
        self.callback_ident = None
        self.rd.freed_at = now
        self.handoff = bool(self.waiters)

    def _read(self) -> bytes | None:
        """What stdout has (the role's holder, after poll said so); None at EOF."""
        rd = self.rd
        try:
            data = os.read(rd.fd, rd.size)
        except OSError:
            data = b""
        if not data:
            with self.lock:
                rd.eof = True
                rd.cond.notify_all()  # the reader thread ends the session: now, not after a nap
            return None
        rd.size = BIG_READ_SIZE if len(data) >= READ_SIZE else READ_SIZE
        return data

    def _take(self, data: bytes, leader: Waiter | None = None) -> float | None:
        """Feed ``data`` to the core, send and dispatch what it gives; its next deadline.
        ``leader``: the waiter of the caller that holds the role and reads, which gives it up
        here when ``data`` ended its call and nothing else (see :meth:`_release_role`)."""
        session = self.session
        tracer = self.tracer
        with self.lock:
            if tracer is not None:
                tracer.received(data)  # never raises: showing cannot crash the reader
            now = time.monotonic()
            session.receive_data(data, now=now)
            out = session.data_to_send()
            if out:
                self.queue.append(out)  # queued first: the drained bytes are never lost
                if tracer is not None:
                    tracer.sent(out)
            events = self._drain_locked()
            alone = leader is not None and not self.waiters and len(events) == 1 \
                and events[0][1] is leader \
                and not (out or self.rd.eof or self.closed or self.rd.napping)
            if alone:
                # The lone caller's own outcome, and nothing else: no callback to run and
                # nothing to write on this thread (where a call from a signal handler must
                # still be refused), so the role is given up in this lock round, not one
                # more.  (``freed_at`` from before the parse: the reader thread's grace may
                # end sooner after a large answer, which only makes it look sooner.)  No
                # deadline came nearer: nothing was sent, no call waits, and the reading ends.
                self._let_go_locked(now)
                deadline = None
            else:
                # An answer may bring a deadline nearer (a task's next poll): wake the
                # service thread if it sleeps towards a later one.
                deadline = session.next_deadline()
                if deadline is not None and (self.armed is None or deadline < self.armed):
                    self.cond.notify()
        if alone and type(event := events[0][0]) is Completed:
            leader.set(event.value, None)  # type: ignore[union-attr]  # (_dispatch's work)
        elif events:
            self._dispatch(events)
        if out:
            self._flush()  # never blocks: a full pipe is the service thread's to finish
        return deadline

    def _fire(self, now: float) -> float | None:
        """A reading caller's poll ran out: fire what is due (the service thread may have
        already); the next deadline."""
        with self.lock:
            self.session.handle_timeout(now)
            self._queue_output_locked()
            events = self._drain_locked()
            deadline = self.session.next_deadline()
        if events:
            self._dispatch(events)
        self._flush()
        return deadline

    # -- reader thread ----------------------------------------------------------------------

    def _read_stdout(self) -> None:
        try:
            self._read_stdout_loop()
        except BaseException as exc:  # a bug must fail the calls, not strand them
            self._crashed(exc)
            raise
        self._server_gone()

    def _read_stdout_loop(self) -> None:
        me = _thread.get_ident()
        watch = select.poll()  # its own: it looks while a caller may hold the role
        watch.register(self.rd.fd, select.POLLIN)
        poll = watch.poll
        idle_ms = PROCESS_POLL_INTERVAL * 1000.0
        while (handoff := self._turn()) is not None:
            if not handoff and not poll(idle_ms):
                continue  # nothing came while nobody called
            with self.lock:
                if self.reading or self.closed:
                    continue  # a caller took the role meanwhile: what came is its to read
                self.reading = True
                self.handoff = False
                self.callback_ident = me
            try:
                # Calls wait: read for them.  Else (what came while nobody called) read what
                # is there, and let go.
                timeout = idle_ms if handoff else 0.0
                while True:
                    if not poll(timeout):
                        with self.lock:
                            if self.closed or self._gone or not self.waiters:
                                break
                        timeout = idle_ms
                        continue
                    data = self._read()
                    if data is None:
                        return
                    self._take(data)
                    with self.lock:
                        if not self.waiters:
                            break  # the next caller reads its own answer
                    timeout = idle_ms
            finally:
                self._release_role()

    def _turn(self) -> bool | None:
        """Wait until the reader thread is to read: True when calls wait and nobody reads,
        False when nobody read for READER_GRACE (then it looks at stdout without the role, so
        a caller that comes still reads its own answer); None once nothing is left to read."""
        rd = self.rd
        with self.lock:
            held = None  # rd.freed_at when a caller was last seen holding the role
            while True:
                if rd.eof or self._gone or self.closed:
                    return None
                idle = READER_GRACE
                if not self.reading:
                    held = None
                    if self.handoff or self.waiters:
                        return True
                    idle = time.monotonic() - rd.freed_at
                    if idle >= READER_GRACE:
                        return False
                elif held == rd.freed_at:
                    # Nobody let go since the last look: one caller holds the role (a long
                    # call).  Nap till it lets go (it wakes a napping reader), not every
                    # READER_GRACE.
                    rd.napping = True
                    try:
                        rd.cond.wait(READER_NAP)
                    finally:
                        rd.napping = False
                    continue
                else:
                    held = rd.freed_at
                # A caller reads (or just left): look again after the grace, or when told.
                rd.cond.wait(READER_GRACE - idle if idle < READER_GRACE else READER_GRACE)

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
                # Under wlock: a caller whose write filled the pipe after this pump says so
                # after this line, not before it (its True must not be overwritten).
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
        if not self._stop_once.acquire(blocking=False):
            return
        self._close_stdin()
        stop_process_tree(self.proc, close_stdin=False)

    def close(self) -> None:
        """Idempotent; any thread (also a handler or a callback, and a signal handler)."""
        if self.held.critical and _thread.get_ident() == _MAIN_IDENT:
            # From a signal handler (or a callback) while the main thread is inside the
            # session's work, which may hold the locks: done as soon as that work is.
            self.held.close = True
            return
        with self.lock:
            if self._closing:
                return
            self._closing = True
            self.session.close()
            events = self._drain_locked()
            self.closed = True
            self.cond.notify_all()
            self.rd.cond.notify_all()
        self._dispatch(events)
        self._stop_tree()
        current = threading.current_thread()
        for t in self.threads:
            if t is not current:
                t.join(CLOSE_JOIN)
        # Close a pipe only once its reader is gone: a live reader would read whatever file
        # reuses the descriptor.  A reader still blocked (a setsid grandchild holds the pipe)
        # closes nothing and ends with that process.
        # Nor while a caller holds the read role: it sees the close within LEAD_POLL (or, if
        # this close comes from one of its callbacks, closes stdout itself when it lets go).
        with self.lock:
            end = time.monotonic() + CLOSE_JOIN
            while self.reading and self.callback_ident != _thread.get_ident() \
                    and time.monotonic() < end:
                self.rd.cond.wait(LEAD_POLL)
        self._close_stdout()
        if self.proc.stderr is not None and not self.threads[1].is_alive():
            self.proc.stderr.close()
        self.opening_over()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def _close_stdout(self) -> None:
        """Close stdout once nothing reads it: the reader thread ended and no caller holds the
        read role (none takes it after a close)."""
        f = self.proc.stdout
        with self.lock:
            if f is None or not self.closed or self.reading or self.threads[0].is_alive():
                return
        f.close()

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
