"""What every asyncio or trio connection does, whatever carries its bytes.

Everything here runs on the event loop's thread, so there are no locks: a call starts its
request, flushes the bytes and awaits its own waiter; whatever arrives is fed to the core and
resolved at once.  Background work (the host's handlers, async callbacks, stopping a server)
runs in free-standing tasks the connection owns, never in the caller's task group or cancel
scope, so a client may be closed from any task, in any order, or from another thread.  Each
runtime supplies only the primitives (:class:`Runtime`: futures, tasks, sleep, locks, a
thread-safe wake-up) and the byte movers (pipes, sockets, timers).
"""

from __future__ import annotations

import inspect
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from mcp_proto import (
    ClientSession,
    Closed,
    Completed,
    ConnectionClosed,
    ConnectionLost,
    ElicitationComplete,
    Event,
    Failed,
    LocalProtocolError,
    LogMessage,
    MCPError,
    Progress,
    Ready,
    ServerRequest,
    ServerRequestCancelled,
    TaskStatus,
)

from .._client import ClientOptions, Connection, Operation
from .._handlers import ProgressCallback, StatusCallback

if TYPE_CHECKING:
    from mcp_proto.http._streamable import HttpExchange

__all__ = [
    "CALLBACK_GRACE",
    "CALLBACK_HIGH_WATER",
    "CALLBACK_LOW_WATER",
    "SETTLE_POLL",
    "AsyncPump",
    "Runtime",
    "RuntimeBase",
    "TaskHandle",
    "Waiter",
]

#: Granularity of the short polls of a connection's end (exit code, settling), in seconds.
SETTLE_POLL = 0.01

#: Async callbacks queued (per call's progress, or for notifications) before the connection
#: stops reading until they catch up, and the length at which it reads again.  A slow async
#: callback must not make the client buffer a fast server's output without bound (the
#: threads binding gets the same back-pressure by running callbacks on the reader).
CALLBACK_HIGH_WATER = 1024
CALLBACK_LOW_WATER = 256

#: Seconds an async ``on_notification`` still gets, after the connection closed, to take what
#: was queued (``Closed`` last) before it is cancelled: ``aclose()`` must not wait on a
#: callback that never returns.
CALLBACK_GRACE = 2.0


_V = TypeVar("_V")  # the value type of an operation (its handle says it)


class Waiter(Protocol):
    """A one-shot result slot one task awaits."""

    on_progress: ProgressCallback | None
    on_status: StatusCallback | None

    @property
    def done(self) -> bool: ...

    def set(self, value: Any, error: MCPError | None) -> None: ...

    def wait(self) -> Awaitable[Any]:
        """The value, or the error raised."""


class TaskHandle(Protocol):
    """A background task: it can be cancelled (it ends at its next await)."""

    def cancel(self) -> object: ...


class Runtime(Protocol):
    """The event loop primitives a binding gives the shared code."""

    def waiter(self, on_progress: ProgressCallback | None,
               on_status: StatusCallback | None) -> Waiter: ...

    def spawn(self, name: str, fn: Callable[[], Coroutine[Any, Any, None]],
              done: Callable[[Any], None]) -> TaskHandle:
        """Start ``fn()`` as a free-standing task; ``done(handle)`` when it ended (whatever
        way: exceptions other than cancellation are printed, never raised)."""

    def is_current(self, task: TaskHandle) -> bool: ...

    async def sleep(self, seconds: float) -> None: ...

    def lock(self) -> Any:
        """A new lock usable as ``async with``."""

    def event(self) -> Any:
        """A new one-shot event (``set()``, ``await wait()``)."""

    async def wait_event(self, event: Any, timeout: float | None) -> None:
        """Wait until ``event`` is set or ``timeout`` seconds passed (None: no bound)."""

    def token(self) -> Any:
        """The running loop, for :meth:`run_soon_threadsafe` (None outside any loop)."""

    def run_soon_threadsafe(self, token: Any, fn: Callable[[], None]) -> bool:
        """Run ``fn`` on the loop ``token`` names, from any thread (or at once when that loop
        is the caller's).  False when that loop has ended (``fn`` will never run)."""

    def is_cancellation(self, exc: BaseException | None) -> bool:
        """Whether ``exc`` is the runtime's cancellation."""

    async def to_thread(self, fn: Callable[[], Any]) -> Any:
        """Run the blocking ``fn`` in a daemon thread and return (or raise) what it did;
        cancelling the caller abandons the thread (it ends by its own deadline)."""


class RuntimeBase:
    """What the runtimes' primitives do alike, written once over their own: a run on a loop
    from any thread, and telling the runtime's cancellation."""

    #: The runtime's cancellation exception.
    cancelled: ClassVar[type[BaseException]]
    #: What :meth:`schedule` raises once the loop it names has ended.
    ended: ClassVar[type[Exception]]

    def token(self) -> Any:
        """The running loop (None outside any loop)."""
        raise NotImplementedError

    def schedule(self, token: Any, fn: Callable[[], None]) -> None:
        """Run ``fn`` soon on the loop ``token`` names, from any thread; raises
        :attr:`ended` once that loop has ended."""
        raise NotImplementedError

    def run_soon_threadsafe(self, token: Any, fn: Callable[[], None]) -> bool:
        """Run ``fn`` on the loop ``token`` names, from any thread (or at once when that loop
        is the caller's).  False when that loop has ended (``fn`` will never run)."""
        if self.token() is token:
            fn()
            return True
        try:
            self.schedule(token, fn)
        except self.ended:
            return False
        return True

    def is_cancellation(self, exc: BaseException | None) -> bool:
        """Whether ``exc`` is the runtime's cancellation."""
        return isinstance(exc, self.cancelled)


class AsyncPump(Connection):
    """One connection: the session, a waiter per call, events resolved as they come, the
    host's handlers in background tasks, deadlines fired by the runtime's timer.

    Subclasses move bytes with :meth:`_flush` (send what the session produced, without
    awaiting), keep the timer armed with :meth:`_rearm`, and end with :meth:`_close_transport`
    (synchronous) and :meth:`_finish` (the awaitable rest).
    """

    def __init__(self, client: ClientOptions, rt: Runtime) -> None:
        super().__init__(client)
        self.rt = rt
        self.waiters: dict[int, Waiter] = {}  # by RequestHandle.id
        self.after_soon = False  # an _after is scheduled for the end of this iteration
        self.closing = False  # close() ran
        self.tasks: set[TaskHandle] = set()
        self.watchers: list[Any] = []  # events set when a task ends (wait_closed)
        self.serving: dict[object, TaskHandle] = {}  # server request id -> handler task
        self.armed: float | None = None  # the deadline the timer is set for
        self.delete: HttpExchange | None = None  # HTTP: the DELETE to send on close
        self.notifications = _Serial(self, "mcp-proto-notification")
        self.progress: dict[Waiter, _Serial] = {}  # calls whose async progress callbacks run
        self.finished: TaskHandle | None = None  # the task that finishes the close

    # -- what subclasses provide ------------------------------------------------------------

    async def open(self) -> None:
        """Attach the transport (pipes, first connection); before the first call."""

    def _flush(self) -> None:
        raise NotImplementedError

    def _deadline(self) -> float | None:
        return self.session.next_deadline()

    def _rearm(self) -> None:
        raise NotImplementedError

    def _soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` (which never raises) in this loop after what is ready now: the end of
        this turn of the loop."""
        raise NotImplementedError

    def _on_timer(self) -> None:
        """The timer fired: fire the core's deadlines."""
        self.session.handle_timeout(time.monotonic())
        self._after()

    def _close_transport(self) -> None:
        """Stop moving bytes now (synchronous part of close)."""
        raise NotImplementedError

    async def _finish(self) -> None:
        """The awaitable part of close (stop a process, send DELETE), in its own task."""

    def _force_finish(self) -> None:
        """Close was cancelled or the loop is ending: make :meth:`_finish`'s outcome true now
        (kill the process group), without awaiting."""

    def abandon(self) -> None:
        """The event loop is gone (a close from another thread after it ended): stop what
        outlives it, without the loop (kill the process group, close the pipes)."""

    def hold_input(self, hold: bool) -> None:
        """Stop (True) or resume (False) reading from the server (back-pressure)."""

    # -- calls ------------------------------------------------------------------------------

    def _after_soon(self) -> None:
        self.after_soon = False
        if not self.closing:
            try:
                self._after()
            except Exception as exc:  # a bug must fail the calls, not strand them
                self.crashed(exc)

    async def call(self, op: Operation[_V], total: float,
                   on_progress: ProgressCallback | None = None,
                   on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, total)`` and await its value; raises what ``op`` raises,
        the call's error, and :class:`ConnectionClosed` (or the error the connection ended
        with) once closed.  Cancelled while waiting (the runtime's cancellation), the
        operation is cancelled in the core, which tells the server (legacy:
        ``notifications/cancelled``; 2026 HTTP: the request's stream is closed).  Async
        progress callbacks of the call have all finished when it returns or raises.

        A call that starts alone is sent at once.  Calls that start while others are in
        flight are sent together at the end of this turn of the loop (one write, one wake-up
        of the server, one look at the events and the timer for all of them)."""
        if self.closed:
            raise self._ended()
        handle = op(self.session, time.monotonic(), total)
        waiter = self.rt.waiter(on_progress, on_status)
        waiters = self.waiters
        waiters[handle.id] = waiter
        if len(waiters) <= 1:  # no other call of this connection in flight
            self._after()  # send it; some operations end at once (a capability the server lacks)
        elif not self.after_soon:
            self.after_soon = True
            self._soon(self._after_soon)
        try:
            value: _V = await waiter.wait()  # the Completed value of a RequestHandle[_V]
        except MCPError:
            if self.progress:
                await self._progress_done(waiter)
            raise
        except BaseException:
            if not waiter.done and not self.closed:
                self.waiters.pop(handle.id, None)
                try:
                    self.session.cancel(handle, "cancelled by the client")
                except LocalProtocolError:  # the handshake: the caller closes the connection
                    pass
                self._after()
            self.progress.pop(waiter, None)
            raise
        if self.progress:
            await self._progress_done(waiter)
        return value

    async def _progress_done(self, waiter: Waiter) -> None:
        serial = self.progress.pop(waiter, None)
        if serial is not None:
            await serial.drained()

    def notify(self, send: Callable[[ClientSession], None]) -> None:
        if self.closed:
            raise self._ended()
        send(self.session)
        self._after()

    # -- events -----------------------------------------------------------------------------

    def _after(self) -> None:
        """After anything touched the session: send, resolve, re-arm."""
        self._flush()
        self._events()
        self._rearm()

    def _events(self) -> None:
        session = self.session
        waiters = self.waiters
        client = self.client
        while (event := session.next_event()) is not None:
            t = type(event)
            if t is Completed:
                waiter = waiters.pop(event.handle.id, None)  # type: ignore[union-attr]
                if waiter is not None:
                    waiter.set(event.value, None)  # type: ignore[union-attr]
            elif t is Failed:
                waiter = waiters.pop(event.handle.id, None)  # type: ignore[union-attr]
                if waiter is not None:
                    waiter.set(None, event.error)  # type: ignore[union-attr]
            elif t is Progress or t is TaskStatus:
                waiter = waiters.get(event.handle.id)  # type: ignore[union-attr]
                fn = None if waiter is None else (
                    waiter.on_progress if t is Progress else waiter.on_status)
                if waiter is not None and fn is not None:
                    serial = self.progress.get(waiter)
                    if serial is None:
                        serial = self.progress[waiter] = _Serial(self, "mcp-proto-progress")
                    self._callback(fn, event, serial)
                elif t is TaskStatus and client._on_notification is not None:
                    self._callback(client._on_notification, event, self.notifications)
            elif t is Ready:
                self.ready = True
                waiter = waiters.pop(event.handle.id, None)  # type: ignore[union-attr]
                if waiter is not None:
                    waiter.set(event, None)
            elif t is ServerRequest:
                assert isinstance(event, ServerRequest)
                self._serve(event)
            else:
                if t is Closed:
                    self.closed = True
                elif t is ElicitationComplete:  # a call waiting to retry after -32042
                    client._elicitations.done(event.elicitation_id)  # type: ignore[union-attr]
                elif t is LogMessage:
                    client._observer.server_log(event)  # type: ignore[arg-type]
                elif t is ServerRequestCancelled:  # stop asking the user
                    task = self.serving.pop(event.request_id, None)  # type: ignore[union-attr]
                    if task is not None:
                        task.cancel()
                # A connection that never became Ready (a failed probe the client recovers
                # from, a handshake that failed and raised) ends without telling the host.
                if client._on_notification is not None and (self.ready or t is not Closed):
                    self._callback(client._on_notification, event, self.notifications)

    @staticmethod
    def _callback(fn: Callable[[Any], object], event: Event, serial: _Serial) -> None:
        """Call a host callback; an async one is awaited in ``serial`` (in arrival order)."""
        try:
            outcome = fn(event)
        except Exception:  # a host callback must not break the connection
            traceback.print_exc()
            return
        if inspect.isawaitable(outcome):
            serial.add(outcome)

    def spawn(self, name: str, fn: Callable[[], Coroutine[Any, Any, None]]) -> TaskHandle:
        """A background task of this connection (cancelled and awaited by close)."""
        task = self.rt.spawn(name, fn, self._task_ended)
        self.tasks.add(task)
        return task

    def _task_ended(self, task: TaskHandle) -> None:
        self.tasks.discard(task)
        watchers, self.watchers = self.watchers, []
        for event in watchers:
            event.set()

    def _serve(self, request: ServerRequest) -> None:
        if self.closing:
            return

        async def answer() -> None:
            try:
                outcome: object = self.client._handlers.call(request)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
            except Exception as exc:
                outcome = exc
            finally:
                self.serving.pop(request.request_id, None)
            if not self.closing:
                self.session.respond_with(request.request_id, outcome, now=time.monotonic())
                self._after()

        self.serving[request.request_id] = self.spawn("mcp-proto-handler", answer)

    # -- ending -----------------------------------------------------------------------------

    def crashed(self, exc: BaseException) -> None:
        """A bug of ours in a transport callback: fail the calls, never strand them."""
        error = ConnectionLost(f"mcp-proto internal error: {exc!r}")
        if not self.closing:
            self.exit_error = self.exit_error or error
            self.session.connection_lost(error)
            self._events()
        self.close()

    def close(self) -> None:
        """End the connection now (synchronous, idempotent, from any task or a callback):
        pending calls fail with :class:`ConnectionClosed`, handler tasks are cancelled, the
        transport stops; what must be awaited (a process to stop, a DELETE) continues in a
        task :meth:`wait_closed` awaits."""
        if self.closing:
            return
        self.closing = True
        self.closed = True
        self.session.close()
        self._events()
        stranded = list(self.waiters.values())  # anything the core no longer tracks
        self.waiters.clear()
        for waiter in stranded:
            waiter.set(None, ConnectionClosed("the connection is closed"))
        for serial in self.progress.values():
            serial.discard()
        self.progress.clear()
        keep = self.notifications.task  # delivers what is queued, Closed last, then ends
        for task in list(self.tasks):
            if task is not keep and not self.rt.is_current(task):
                task.cancel()
        self._close_transport()
        self.finished = self.spawn("mcp-proto-close", self._finish_guarded)

    async def _finish_guarded(self) -> None:
        try:
            await self._finish()
            # The host's async on_notification gets to see what was queued (Closed last),
            # but a callback that never returns must not hold aclose() forever.
            serial = self.notifications
            end = time.monotonic() + CALLBACK_GRACE
            while serial.task is not None and time.monotonic() < end:
                await self.rt.sleep(SETTLE_POLL)
            if serial.task is not None:
                serial.task.cancel()
        except BaseException:
            self._force_finish()
            raise

    async def wait_closed(self) -> None:
        """Await the end of :meth:`close`: the process group stopped, every task of this
        connection ended.  Cancelled meanwhile, it kills what is left at once and re-raises."""
        try:
            while any(not self.rt.is_current(t) for t in self.tasks):
                event = self.rt.event()
                self.watchers.append(event)
                await event.wait()
        except BaseException:
            # Cancelled: make the outcome true now (the group killed, pipes closed) and stop
            # the tasks still working towards it; they end at their next checkpoint.
            self._force_finish()
            for task in list(self.tasks):
                if not self.rt.is_current(task):
                    task.cancel()
            raise


class _Serial:
    """Awaitables run one after another in one task of the connection, in arrival order (the
    async callbacks of one call's progress, or of notifications)."""

    def __init__(self, pump: AsyncPump, name: str) -> None:
        self.pump = pump
        self.name = name
        self.queue: deque[Awaitable[object]] = deque()
        self.task: TaskHandle | None = None
        self.idle: list[Any] = []  # events set when the queue is drained
        self.holding = False  # input paused until the queue shrinks

    def add(self, awaitable: Awaitable[object]) -> None:
        queue = self.queue
        queue.append(awaitable)
        if self.task is None:
            self.task = self.pump.spawn(self.name, self._run)
        if len(queue) > CALLBACK_HIGH_WATER and not self.holding:
            self.holding = True  # slow callbacks: stop reading until they catch up
            self.pump.hold_input(True)

    def discard(self) -> None:
        """Drop what was not run (the connection closed): never awaited, never warned."""
        for awaitable in self.queue:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
        self.queue.clear()

    async def _run(self) -> None:
        queue = self.queue
        try:
            while queue:
                try:
                    await queue.popleft()
                except Exception:  # a host callback must not break the connection
                    traceback.print_exc()
                if self.holding and len(queue) < CALLBACK_LOW_WATER:
                    self.holding = False
                    self.pump.hold_input(False)
        finally:
            self.task = None
            self.discard()  # cancelled by close: never awaited, never warned about
            if self.holding:
                self.holding = False
                self.pump.hold_input(False)
            idle, self.idle = self.idle, []
            for event in idle:
                event.set()

    async def drained(self) -> None:
        """Return once every awaitable added so far has run."""
        if self.task is not None:
            event = self.pump.rt.event()
            self.idle.append(event)
            await event.wait()
