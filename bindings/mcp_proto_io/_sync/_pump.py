"""What every threads connection does, whatever carries its bytes.

The session under one lock, a one-shot waiter per call, the core's events taken under the
lock and dispatched outside it, the host's handlers on a small pool, deadlines fired by a
service thread.  The stdio and HTTP connections (``_stdio``, ``_http``) move the bytes.
"""

from __future__ import annotations

import _thread
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_proto import (
    ClientSession,
    Closed,
    Completed,
    ConnectionLost,
    ElicitationComplete,
    Event,
    Failed,
    LocalProtocolError,
    LogMessage,
    MCPError,
    Progress,
    Ready,
    RequestHandle,
    ServerRequest,
    TaskStatus,
)

from .._client import ClientOptions, Connection, Operation
from .._handlers import ProgressCallback, StatusCallback

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["CALL_FROM_CALLBACK", "HANDLER_WORKERS", "Pump", "Waiter", "new_waiter"]

#: Threads that run the host's sampling / elicitation / roots handlers per connection: they
#: may block on a user, and must never block the reader.
HANDLER_WORKERS = 4

#: Why a call from a callback's thread is refused.
CALL_FROM_CALLBACK = ("a call from on_progress / on_notification would wait for the thread that "
                      "runs that callback; make the call from another thread")

_V = TypeVar("_V")  # the value type of an operation (its handle says it)


class Waiter:
    """A one-shot result slot a caller blocks on (cheaper than a Future); made by
    :func:`new_waiter`."""

    __slots__ = ("_lock", "deadline", "error", "handle", "leading", "on_progress", "on_status",
                 "value")
    _lock: _thread.LockType  # held until the outcome is set
    value: Any
    error: MCPError | None
    on_progress: ProgressCallback | None
    on_status: StatusCallback | None
    handle: RequestHandle[Any] | None  # the call's, once started
    leading: bool  # its caller took the read role when it started (stdio)
    deadline: float | None  # the session's next one, then (when leading)

    def set(self, value: Any, error: MCPError | None) -> None:
        self.value = value
        self.error = error
        self._lock.release()

    def wait(self) -> Any:
        """The value; raises the call's error."""
        self._lock.acquire()
        if self.error is not None:
            raise self.error
        return self.value


def new_waiter(on_progress: ProgressCallback | None = None,
               on_status: StatusCallback | None = None,
               lock: _thread.LockType | None = None) -> Waiter:
    """A waiter with no outcome yet; ``lock``: a held lock of a waiter that is done with
    (:attr:`Pump.spare_lock`), else a new one.  (A function, not ``Waiter.__init__``: a
    class's own ``__init__`` costs about 0.15 us more on every call.)"""
    waiter = Waiter()
    if lock is None:
        lock = _thread.allocate_lock()
        lock.acquire()
    waiter._lock = lock
    waiter.value = None
    waiter.error = None
    waiter.on_progress = on_progress
    waiter.on_status = on_status
    waiter.handle = None
    waiter.leading = False
    waiter.deadline = None
    return waiter


class Pump(Connection):
    """What every threads connection does: the session under one lock, a one-shot waiter per
    call, events dispatched outside the lock, host handlers on a small pool, deadlines fired.
    Subclasses move the bytes: :meth:`_queue_output_locked` collects what the session wants
    sent (under the lock), :meth:`_flush` sends it (outside)."""

    def __init__(self, client: ClientOptions) -> None:
        super().__init__(client)
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiters: dict[int, Waiter] = {}  # by the id of the call's handle
        # The lock of the last waiter whose caller took its outcome: held (its wait acquired
        # it) and nobody else's to release (a waiter's outcome is set once), so the next
        # waiter takes it (under the lock) instead of making and acquiring one.
        self.spare_lock: _thread.LockType | None = None
        # The read role (stdio: see _stdio), under the lock: a thread that holds it reads the
        # server's output for everyone; handoff: it was left while calls wait.
        self.reading = False
        self.handoff = False
        self.armed: float | None = None  # the deadline the service thread sleeps towards
        self._executor: ThreadPoolExecutor | None = None

    def _queue_output_locked(self) -> None:
        raise NotImplementedError

    def _flush(self, claimed: Any = None) -> None:
        """Send what is queued (outside the lock); ``claimed``: what
        :meth:`_claim_output_locked` took, to be sent first."""
        raise NotImplementedError

    def _claim_output_locked(self) -> Any:
        """Under the lock, once what the session wants sent is queued: what :meth:`_flush` is
        to be given when the lock is let go (a transport may take its queue here, saving the
        flush a lock round of its own); None by default."""
        return None

    def _service(self) -> None:
        """The service thread: fires deadlines (and whatever the subclass's loop does)."""
        try:
            self._service_loop()
        except BaseException as exc:
            self._crashed(exc)
            raise

    def _service_loop(self) -> None:
        raise NotImplementedError

    #: Called under the lock with the handle of each call this thread starts, or None.
    _started: Callable[[RequestHandle[Any]], None] | None = None
    #: The ident of the thread that runs callbacks only it can complete (a call from it
    #: would wait for itself), once it runs; None when there is no such thread.
    callback_ident: int | None = None

    def notify(self, send: Callable[[ClientSession], None]) -> None:
        """Send a notification built by ``send(session)``."""
        with self.lock:
            send(self.session)
            self._queue_output_locked()
        self._flush()

    def start(self, op: Operation[Any], total: float,
              on_progress: ProgressCallback | None = None,
              on_status: StatusCallback | None = None, *, lead: bool = False) -> Waiter:
        """``op(session, now, total)``, its waiter entered and its bytes sent; raises what
        ``op`` raises, :class:`LocalProtocolError` from a callback thread, and what the
        connection ended with once it is closed.  ``lead``: take the read role if nobody
        holds it (``waiter.leading`` says; the caller must then read, and give it up)."""
        me = _thread.get_ident()
        if me == self.callback_ident:
            raise LocalProtocolError(CALL_FROM_CALLBACK)
        with self.lock:
            if self.closed:
                raise self._ended()
            waiter = new_waiter(on_progress, on_status, self.spare_lock)
            self.spare_lock = None
            handle = op(self.session, time.monotonic(), total)
            if self._started is not None:
                self._started(handle)
            waiter.handle = handle
            self.waiters[handle.id] = waiter
            self._queue_output_locked()
            deadline = self.session.next_deadline()
            if deadline is not None and (self.armed is None or deadline < self.armed):
                self.cond.notify()
            # Some operations end at once (a list for a capability the server lacks).
            taken = self.session.take_events()  # (_drain_locked, but rarely any to pair)
            events = self._paired_locked(taken) if taken else None
            # Before the request is written (its answer is this caller's to read), and only
            # as the one call in flight: with others in flight the reader thread reads (a
            # caller reading for many would hand the role on at each return).
            if lead and not self.reading and len(self.waiters) == 1:
                self.reading = True
                self.handoff = False
                self.callback_ident = me  # this thread runs on_progress & co. meanwhile
                waiter.leading = True
                waiter.deadline = deadline
            claimed = self._claim_output_locked()  # last: a transport may now hold its writing
        try:
            self._flush(claimed)  # at once (before any callback of the events runs)
        finally:  # (an HTTP flush runs an exchange: a Ctrl-C there must not strand others)
            if events:
                self._dispatch(events)
        return waiter

    def call(self, op: Operation[_V], total: float,
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, total)`` and wait for its value (raises its error)."""
        waiter = self.start(op, total, on_progress, on_status)
        try:
            value: _V = waiter.wait()  # the Completed value of a RequestHandle[_V]
            self.spare_lock = waiter._lock
            return value
        except KeyboardInterrupt:
            self._cancel_waiter(waiter, "interrupted")
            raise

    def _cancel_waiter(self, waiter: Waiter, reason: str) -> None:
        with self.lock:
            handle = waiter.handle
            if handle is not None and self.waiters.get(handle.id) is waiter:
                try:
                    self.session.cancel(handle, reason)
                except LocalProtocolError:  # the handshake cannot be cancelled
                    pass
            events = self._drain_locked()  # this call's Failed, and whatever else was due
            self._queue_output_locked()
        self._dispatch(events)
        self._flush()

    def _crashed(self, exc: BaseException) -> None:
        error = ConnectionLost(f"mcp-proto internal error in "
                               f"{threading.current_thread().name}: {exc!r}")
        with self.lock:
            self.exit_error = self.exit_error or error
            self.session.connection_lost(error)
            events = self._drain_locked()
            # A request the crash interrupted may no longer be in the core's table: every
            # caller still waiting gets the error too.
            stranded = list(self.waiters.values())
            self.waiters.clear()
            self.closed = True
            self.cond.notify_all()
        for waiter in stranded:  # first: a callback's exception in the dispatch stops it
            waiter.set(None, error)
        self._dispatch(events)

    def _drain_locked(self) -> list[tuple[Event, Waiter | None]]:
        """Take the core's events, pairing each outcome with its waiter (under the lock)."""
        return self._paired_locked(self.session.take_events())

    def _paired_locked(self, taken: tuple[Event, ...]) -> list[tuple[Event, Waiter | None]]:
        """The core's events ``taken``, each outcome paired with its waiter (under the lock);
        the waiters of outcomes leave the table."""
        out: list[tuple[Event, Waiter | None]] = []
        waiters = self.waiters
        for event in taken:
            t = type(event)
            if t is Completed or t is Failed or t is Ready:
                out.append((event, waiters.pop(event.handle.id, None)))  # type: ignore[union-attr]
            elif t is Progress or t is TaskStatus:
                out.append((event, waiters.get(event.handle.id)))  # type: ignore[union-attr]
            else:
                if t is Closed:
                    self.closed = True
                out.append((event, None))
        return out

    def _dispatch(self, events: list[tuple[Event, Waiter | None]]) -> None:
        client = self.client
        handled = 0  # events dispatched whole (a callback's BaseException stops the loop)
        try:
            for event, waiter in events:
                t = type(event)
                if t is Completed:
                    if waiter is not None:
                        waiter.set(event.value, None)  # type: ignore[union-attr]
                elif t is Failed:
                    if waiter is not None:
                        waiter.set(None, event.error)  # type: ignore[union-attr]
                elif t is Ready:
                    self.ready = True
                    if waiter is not None:
                        waiter.set(event, None)
                elif t is Progress:
                    if waiter is not None and waiter.on_progress is not None:
                        self._callback(waiter.on_progress, event)
                elif t is TaskStatus and waiter is not None and waiter.on_status is not None:
                    self._callback(waiter.on_status, event)
                elif t is ServerRequest:
                    assert isinstance(event, ServerRequest)
                    self._serve(event)
                else:
                    if t is LogMessage:
                        client._observer.server_log(event)  # type: ignore[arg-type]
                    elif t is ElicitationComplete:  # a call waiting to retry after -32042
                        client._elicitations.done(
                            event.elicitation_id)  # type: ignore[union-attr]
                    if client._on_notification is not None and (self.ready or t is not Closed):
                        # A connection that never became Ready (a failed probe the client
                        # recovers from, a handshake that failed and raised) ends without
                        # telling the host.
                        self._callback(client._on_notification, event)
                handled += 1
        except BaseException:
            # A callback's BaseException (SystemExit, say) stops the batch: the calls whose
            # outcomes the rest holds still get them, the server requests in it an answer
            # (the core forgot them: nothing else would).
            self._settle(events[handled + 1:])
            raise

    def _settle(self, events: list[tuple[Event, Waiter | None]]) -> None:
        for event, waiter in events:
            t = type(event)
            if t is ServerRequest:
                self._serve(event)  # type: ignore[arg-type]
            elif waiter is None:
                continue
            elif t is Completed:
                waiter.set(event.value, None)  # type: ignore[union-attr]
            elif t is Failed:
                waiter.set(None, event.error)  # type: ignore[union-attr]
            elif t is Ready:
                waiter.set(event, None)

    @staticmethod
    def _callback(fn: Callable[[Any], object], event: Event) -> None:
        try:
            fn(event)
        except Exception:  # a host callback must not kill the reader
            traceback.print_exc()

    def _serve(self, request: ServerRequest) -> None:
        with self.lock:
            if self._executor is None:
                # Imported here: concurrent.futures (and its logging) costs about a fifth
                # of the client's import, and most clients never get a server request.
                from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

                self._executor = ThreadPoolExecutor(HANDLER_WORKERS,
                                                     thread_name_prefix="mcp-proto-handler")
            executor = self._executor
        try:
            executor.submit(self._answer, request)
        except RuntimeError:  # shutting down
            pass

    def _answer(self, request: ServerRequest) -> None:
        try:
            outcome: object = self.client._handlers.call(request)
        except Exception as exc:
            outcome = exc
        with self.lock:
            self.session.respond_with(request.request_id, outcome, now=time.monotonic())
            self._queue_output_locked()
        self._flush()
