"""What the asyncio and trio bindings share: the pump around the core, the stdio process and
HTTP bookkeeping, and the client API.  Each runtime module supplies only the primitives
(:class:`Runtime`: futures, tasks, sleep, locks, a thread-safe wake-up) and the byte movers
(pipes, sockets, timers).

Everything here runs on the event loop's thread, so there are no locks: a call starts its
request, flushes the bytes and awaits its own waiter; whatever arrives is fed to the core and
resolved at once.  Background work (the host's handlers, async callbacks, stopping a server)
runs in free-standing tasks the connection owns, never in the caller's task group or cancel
scope, so a client may be closed from any task, in any order, or from another thread.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, cast

from mcp_proto import (
    AuthorizationError,
    AuthorizationRequired,
    ClientSession,
    Closed,
    Completed,
    ConnectionClosed,
    ConnectionLost,
    Event,
    Failed,
    Implementation,
    Limits,
    LocalProtocolError,
    MCPError,
    NotSent,
    Progress,
    Ready,
    RedirectRequired,
    RequestHandle,
    SaveRecord,
    ServerExited,
    ServerRequest,
    ServerRequestCancelled,
    TaskStatus,
    accepted_versions,
    era_of,
)
from mcp_proto._modern import Discovered

from ._auth_lazy import (
    NO_REDIRECT,
    AuthSetup,
    deliver_callback,
    is_async_redirect,
    redirect_failure,
    run_auth_exchange,
    run_in_daemon_thread,
)
from ._era import DEFAULT_ERA_MEMORY, EraMemory, ProbeKilledServer, stdio_key
from ._face_async import AsyncClientFace, Operation
from ._handlers import (
    Handler,
    Handlers,
    NotificationCallback,
    ProgressCallback,
    RootsSource,
    StatusCallback,
)
from ._process import StderrTail, argv_of, kill_process_tree, spawn, stop_process_tree_async
from ._tuning import (
    DEFAULT_CLIENT_INFO,
    MAX_HTTP_EXCHANGES,
    PROCESS_POLL_INTERVAL,
    STDERR_SETTLE,
    STDOUT_SETTLE,
)

if TYPE_CHECKING:
    from mcp_proto import AuthExchange, AuthResponse, AuthStatus
    from mcp_proto._http import HttpExchange

__all__ = [
    "HTTP_DOC",
    "STDIO_DOC",
    "AsyncClientBase",
    "AsyncHttpClientBase",
    "AsyncPump",
    "AsyncStdioClientBase",
    "HttpPump",
    "Runtime",
    "StdioPump",
    "TaskHandle",
    "Waiter",
    "connector",
]

#: Seconds to wait for a server that closed its stdout to be reaped, for its exit code.
EXIT_CODE_WAIT = 1.0

#: Granularity of the short polls above (exit code, settling), in seconds.
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


_C = TypeVar("_C", bound="AsyncClientBase")
_V = TypeVar("_V")  # the value type of an operation (its handle says it)
_P = ParamSpec("_P")
_K = TypeVar("_K")

STDIO_DOC = """A client for the stdio server started by ``command``; use it in ``async with``.

    Same parameters as :func:`mcp_proto_io.threads.connect_stdio`: ``env`` is merged over the
    environment, ``timeout`` (seconds) bounds the handshake and is each call's default total
    deadline, ``protocol_version`` pins one version (``ValueError`` for an unknown one), and
    declaring ``on_sampling``, ``on_elicitation`` or ``roots`` (plain or async functions)
    declares the matching client capability.  The server starts (and the handshake runs) when
    the block is entered or at the first call; leaving the block (also by cancellation) stops
    the server's whole process group.  See the client class for the errors.
    """

HTTP_DOC = """A client for the Streamable HTTP endpoint ``url``; use it in ``async with``.

    Same parameters and errors as :func:`mcp_proto_io.threads.connect_http`: the era is
    chosen per origin, ``headers`` go on every request, ``bearer_token`` becomes
    ``Authorization: Bearer``, ``auth`` runs MCP authorization (``OAuth``,
    ``ClientCredentials``...; an async ``redirect`` is awaited, a plain one runs in a
    thread), TLS verifies against the system's CAs (or ``ca_file`` / ``ssl_context``).
    Cancelling a call closes its stream (2026) or posts
    ``notifications/cancelled`` (handshake era).  Raises :class:`LocalProtocolError` for a
    bad URL.
    """


def connector(cls: Callable[_P, _K], name: str, doc: str) -> Callable[_P, _K]:
    """``connect_stdio`` / ``connect_http`` of a runtime module: the client class's
    constructor under the name users know, with its exact signature."""

    def connect(*args: _P.args, **kwargs: _P.kwargs) -> _K:
        return cls(*args, **kwargs)

    connect.__name__ = connect.__qualname__ = name
    connect.__doc__ = doc
    connect.__signature__ = inspect.signature(cls).replace(  # type: ignore[attr-defined]
        return_annotation=getattr(cls, "__name__", None))
    return connect


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


class AsyncPump:
    """One connection: the session, a waiter per call, events resolved as they come, the
    host's handlers in background tasks, deadlines fired by the runtime's timer.

    Subclasses move bytes with :meth:`_flush` (send what the session produced, without
    awaiting), keep the timer armed with :meth:`_rearm`, and end with :meth:`_close_transport`
    (synchronous) and :meth:`_finish` (the awaitable rest).
    """

    def __init__(self, client: AsyncClientBase) -> None:
        self.client = client
        self.rt = client._rt
        self.session = ClientSession(client._client_info,
                                     capabilities=client._handlers.capabilities(),
                                     versions=client._versions, limits=client._limits)
        self.waiters: dict[int, Waiter] = {}  # by RequestHandle.id
        self.after_soon = False  # an _after is scheduled for the end of this iteration
        self.closed = False  # no new calls (the session ended, or close() ran)
        self.closing = False  # close() ran
        self.exit_error: MCPError | None = None
        self.ready = False  # Ready was dispatched
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

    def opening_over(self) -> None:
        """The opening ended (Ready or failed): what only the era choice needed can go."""

    # -- calls ------------------------------------------------------------------------------

    def start(self, op: Operation[Any], total: float,
              on_progress: ProgressCallback | None = None,
              on_status: StatusCallback | None = None) -> tuple[RequestHandle[Any], Waiter]:
        """``op(session, now, total)``, its waiter entered; raises what ``op`` raises, and
        :class:`ConnectionClosed` (or the error the connection ended with) once closed.

        A call that starts alone is sent at once.  Calls that start while others are in
        flight are sent together at the end of this turn of the loop (one write, one wake-up
        of the server, one look at the events and the timer for all of them)."""
        if self.closed:
            raise self._ended()
        session = self.session
        handle = op(session, time.monotonic(), total)
        waiter = self.rt.waiter(on_progress, on_status)
        self.waiters[handle.id] = waiter
        if session.pending_count <= 1:
            self._after()  # send it; some operations end at once (a capability the server lacks)
        elif not self.after_soon:
            self.after_soon = True
            self._soon(self._after_soon)
        return handle, waiter

    def _ended(self) -> MCPError:
        """What a call on this ended connection raises: nothing was sent.  For a Host's
        client after its handshake, :class:`NotSent` (the Host routes the call again); the
        opening itself fails with the error the run ended with."""
        error = self.exit_error or self.session.closed_error \
            or ConnectionClosed("the connection is closed")
        if self.client.single_run and self.ready:
            return NotSent("the server's run ended", error)
        return error

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
        """Start ``op(session, now, total)`` and await its value.  Cancelled while waiting
        (the runtime's cancellation), the operation is cancelled in the core, which tells the
        server (legacy: ``notifications/cancelled``; 2026 HTTP: the request's stream is
        closed).  Async progress callbacks of the call have all finished when it returns or
        raises."""
        handle, waiter = self.start(op, total, on_progress, on_status)
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
                self._serve(cast("ServerRequest", event))
            else:
                if t is Closed:
                    self.closed = True
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


class StdioPump(AsyncPump):
    """A server process: spawning, exit detection and stopping.  The runtime attaches the
    pipes (:meth:`open`), calls :meth:`_on_stdout` / :meth:`_on_stdout_eof` /
    :meth:`_on_stderr`, and writes with :meth:`_write`."""

    def __init__(self, client: AsyncStdioClientBase) -> None:
        super().__init__(client)
        self.stderr = StderrTail()
        self.stderr_done = False
        self.eof = False  # the end of the server was handled (EOF or exit without EOF)
        self.bytes_in = 0
        self.pipes_closed = False
        self.next_poll = time.monotonic() + PROCESS_POLL_INTERVAL
        try:
            self.proc, self.witness = spawn(client._command, env=client._env, cwd=client._cwd)
        except OSError as exc:
            raise ConnectionLost(
                f"cannot start the server {argv_of(client._command)[0]!r}: {exc}") from exc

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _written(self) -> int:
        """Bytes the server's stdin pipe took so far (for :class:`InputWitness`)."""
        raise NotImplementedError

    def _flush(self) -> None:
        data = self.session.data_to_send()
        if data:
            self._write(data)

    def _deadline(self) -> float:
        deadline = self.session.next_deadline()
        poll = self.next_poll
        return poll if deadline is None or poll < deadline else deadline

    def _on_timer(self) -> None:
        now = time.monotonic()
        self.session.handle_timeout(now)
        if now >= self.next_poll:
            self.next_poll = now + PROCESS_POLL_INTERVAL
            if not self.eof and self.proc.poll() is not None:
                # The server is gone.  Let the reader take what it wrote first; if a
                # grandchild keeps the pipe open no EOF comes, so end the session from here.
                self.spawn("mcp-proto-exit", self._exited_without_eof)
        self._after()

    def _on_stdout(self, data: bytes) -> None:
        self.bytes_in += len(data)
        self.session.receive_data(data, now=time.monotonic())
        self._after()

    def _on_stdout_eof(self) -> None:
        if not self.eof and not self.closing:
            self.eof = True
            self.spawn("mcp-proto-exit", self._server_gone)

    def _on_stderr(self, data: bytes) -> None:
        self.stderr.add(data)

    async def _exited_without_eof(self) -> None:
        end = time.monotonic() + STDOUT_SETTLE
        while not self.eof and time.monotonic() < end:
            before = self.bytes_in
            await self.rt.sleep(0.1)
            if self.bytes_in == before:
                break
        if not self.eof:
            self.eof = True
            await self._server_gone()

    async def _server_gone(self) -> None:
        end = time.monotonic() + EXIT_CODE_WAIT
        while self.proc.poll() is None and time.monotonic() < end:
            await self.rt.sleep(SETTLE_POLL)
        end = time.monotonic() + STDERR_SETTLE
        while not self.stderr_done and time.monotonic() < end:
            await self.rt.sleep(SETTLE_POLL)
        if not self.closing:
            self.exit_error = ServerExited(self.proc.returncode, self.stderr.text())
            unread = self.witness is not None and self.witness.read_nothing(self._written())
            self.session.receive_eof(self.exit_error, input_unread=unread)
            self._after()
            # Stop what is left of the group now, while its id cannot have been reused.
            self.close()

    async def _finish(self) -> None:
        await stop_process_tree_async(self.proc, self.rt.sleep)
        self._close_pipes()

    def _force_finish(self) -> None:
        kill_process_tree(self.proc)
        self._close_pipes()

    def abandon(self) -> None:
        kill_process_tree(self.proc)
        self.opening_over()
        self.pipes_closed = True
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                with contextlib.suppress(Exception):  # whatever the dead loop left
                    f.close()

    def _close_pipes(self) -> None:
        """Close the pipes (the server is gone, or killed).  Idempotent."""
        self.opening_over()
        if not self.pipes_closed:
            self.pipes_closed = True
            self._close_pipes_once()

    def opening_over(self) -> None:
        if self.witness is not None:
            self.witness.close()

    def _close_pipes_once(self) -> None:
        raise NotImplementedError


class HttpPump(AsyncPump):
    """A Streamable HTTP endpoint: the core's exchanges, started and aborted as it says.  The
    runtime runs each exchange (:meth:`_start_exchange`), feeding :meth:`_on_http_data`."""

    def __init__(self, client: AsyncHttpClientBase) -> None:
        super().__init__(client)
        self.auth = client._auth_setup
        from mcp_proto._http import StreamableHttp  # noqa: PLC0415 - stdio clients never load it

        self.http = StreamableHttp(self.session, client._url, headers=client._headers,
                                   bearer_token=client._bearer_token,
                                   auth=None if self.auth is None else self.auth.new_flow())
        self.target = self.http.url
        self.queued: list[HttpExchange] = []  # over MAX_HTTP_EXCHANGES, waiting their turn
        self.running = 0
        self.redirect_task: TaskHandle | None = None  # the user step's handler

    def _deadline(self) -> float | None:
        return self.http.next_deadline()

    def _on_timer(self) -> None:
        self.http.handle_timeout(time.monotonic())
        self._after()

    def _flush(self) -> None:
        http = self.http
        # Starting first: that is what turns a cancellation or a timeout into aborts.
        starting = http.exchanges_to_start()
        aborted = http.exchanges_to_abort()
        if http.auth is not None:
            self._auth_work()
        if aborted:  # C-04: closing the stream is the cancellation
            if self.queued:
                gone = set(aborted)
                self.queued = [ex for ex in self.queued if ex.id not in gone]
            for ex_id in aborted:
                self._abort_exchange(ex_id)
        for ex in starting:
            if ex.aborted:
                continue  # over before it was sent
            if self.running < MAX_HTTP_EXCHANGES:
                self.running += 1
                self._start_exchange(ex)
            else:
                self.queued.append(ex)

    def _auth_work(self) -> None:
        """The authorization flow's requests and events: each exchange and the user step run
        as tasks (the blocking parts in a thread); records are saved at once."""
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        flow.exchanges_to_abort()  # each exchange ends by its own deadline
        for ax in flow.exchanges_to_start():
            self._start_auth(ax)
        while (event := flow.next_event()) is not None:
            if isinstance(event, SaveRecord):
                self._save(event)
            elif isinstance(event, RedirectRequired):
                stale = self.redirect_task
                if stale is not None:
                    stale.cancel()
                    setup.close()  # an earlier step's handler still waits: let it go
                self.redirect_task = self.spawn(
                    "mcp-proto-redirect", lambda ev=event: self._redirect(ev))  # type: ignore[misc]

    def _save(self, event: SaveRecord) -> None:
        """Save a record off the loop (the file store fsyncs, and may wait for another
        process's lock); the setup keeps the newest if two land out of order."""
        setup = self.auth
        assert setup is not None

        def done(_value: Any, error: BaseException | None) -> None:
            if error is not None:
                print(f"mcp-proto: tokens not saved: {error}", file=sys.stderr)

        if self.closing:  # at close the process may be about to exit: write it now
            try:
                setup.save(event.key, event.record, event.serial)
            except AuthorizationError as exc:
                done(None, exc)
            return
        # Not a daemon: an exiting process still finishes writing the tokens it was given.
        run_in_daemon_thread(lambda: setup.save(event.key, event.record, event.serial), done,
                             daemon=False)

    def _start_auth(self, ax: AuthExchange) -> None:
        """Carry an auth exchange in a daemon thread; its answer comes back on this loop
        (:meth:`_auth_result`) even after a close, with no task to cancel in between: a
        refresh the authorization server already answered must still be saved."""
        setup = self.auth
        flow = self.http.auth
        assert setup is not None and flow is not None
        if setup.reload_for_refresh(flow):  # another process refreshed already
            self._after()
            return
        context = cast("AsyncHttpClientBase", self.client)._ssl_context
        token = self.rt.token()

        def done(value: Any, error: BaseException | None) -> None:
            result = value if error is None else f"the exchange failed: {error!r}"
            self.rt.run_soon_threadsafe(token, lambda: self._auth_result(ax, result))

        run_in_daemon_thread(lambda: run_auth_exchange(ax, flow.address_allowed, context),
                             done)

    def _auth_result(self, ax: AuthExchange, result: AuthResponse | str) -> None:
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        flow.receive_exchange_result(ax.id, result, now=time.monotonic())
        if self.closing:
            # Closed meanwhile: nothing waits for the tokens, but a refresh the authorization
            # server already rotated must still be saved (the old refresh token is dead).
            while (event := flow.next_event()) is not None:
                if isinstance(event, SaveRecord):
                    self._save(event)
            return
        try:
            self._after()
        except Exception as exc:  # a bug must fail the calls, not strand them
            self.crashed(exc)

    async def _redirect(self, event: RedirectRequired) -> None:
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        redirect = setup.redirect
        url: str | None = None
        error: AuthorizationError | str | None = None
        if redirect is None:
            error = AuthorizationRequired(NO_REDIRECT)
        else:
            try:
                if is_async_redirect(redirect):
                    url = str(await redirect(event.url))
                else:
                    url = str(await self.rt.to_thread(lambda: redirect(event.url)))
            except Exception as exc:  # the host's handler: its failure fails the waiters
                error = redirect_failure(exc)
        if self.redirect_task is not None and self.rt.is_current(self.redirect_task):
            self.redirect_task = None
        if self.closing:
            return
        deliver_callback(flow, url, error, time.monotonic(), event.attempt)
        self._after()

    def _exchange_ended(self) -> None:
        """An exchange gave its slot back: the next one waiting (and not aborted) starts."""
        self.running -= 1
        while self.queued and not self.closing:
            ex = self.queued.pop(0)
            if not ex.aborted:
                self.running += 1
                self._start_exchange(ex)
                return

    def _on_http_data(self, ex: HttpExchange, data: bytes) -> None:
        """Bytes of an exchange's answer (``b""``: the server closed the connection)."""
        self.http.receive_data(ex.id, data, now=time.monotonic())
        self._after()

    def _lost(self, ex: HttpExchange, error: MCPError) -> None:
        """An exchange's connection failed (could not connect, reset)."""
        self.http.exchange_failed(ex, error, now=time.monotonic())
        self._after()

    def _start_exchange(self, ex: HttpExchange) -> None:
        raise NotImplementedError

    def _abort_exchange(self, exchange_id: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if not self.closing:
            self.delete = self.http.close_exchange()  # L-11: end the session politely
            if self.auth is not None:
                self.auth.close()  # the loopback listener, if one waits
        super().close()


class AsyncClientBase(AsyncClientFace):
    """The async client API, whatever carries it and whichever runtime runs it.  A dead
    connection is rebuilt on the next call (a call is never replayed).  The operations are
    :class:`AsyncClientFace`'s; this class connects and runs them."""

    _rt: Runtime

    def __init__(self, key: Hashable, *, timeout: float, client_info: Implementation | None,
                 limits: Limits | None, protocol_version: str | None,
                 on_sampling: Handler | None, on_elicitation: Handler | None,
                 roots: RootsSource | None, on_notification: NotificationCallback | None,
                 era_memory: EraMemory | None) -> None:
        self._versions = accepted_versions(protocol_version)
        self._pinned_era = None if protocol_version is None else era_of(protocol_version)
        self._era_memory = era_memory if era_memory is not None else DEFAULT_ERA_MEMORY
        self._key = key
        self._timeout = timeout
        self._client_info = client_info or DEFAULT_CLIENT_INFO
        self._limits = limits
        self._handlers = Handlers(on_sampling, on_elicitation, roots)
        self._on_notification = on_notification
        self._conn: AsyncPump | None = None
        self._connecting: AsyncPump | None = None  # published so close() can abort it
        self._lock: Any = None  # created on the loop that first uses the client
        self._token: Any = None  # that loop, for close() from another thread
        self._closed = False
        self._ready: Ready | None = None
        #: True: the first connection is the only one; once it ends every call raises its
        #: error instead of starting the server again (the Host decides when to restart).
        self.single_run = False
        self._ending: list[AsyncPump] = []  # closed, maybe still stopping (aclose awaits)

    def _new_connection(self) -> AsyncPump:
        raise NotImplementedError

    # -- connection management --------------------------------------------------------------

    def _check_loop(self) -> None:
        if self._token is not None and self._rt.token() is not self._token:
            raise LocalProtocolError("this client belongs to another event loop (or one that "
                                     "ended); create a new client in this one")

    async def _connection(self) -> AsyncPump:
        self._check_loop()
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        if self._lock is None:
            self._lock = self._rt.lock()
            self._token = self._rt.token()
        async with self._lock:
            if self._closed:
                raise NotSent("the client is closed") if self.single_run \
                    else ConnectionClosed("the client is closed")
            conn = self._conn
            if conn is not None and not conn.closed:
                return conn
            if conn is not None and self.single_run:
                # A host that supervises restarts itself: this client's one run is over.
                raise conn._ended()
            era, discovered, subscriptions = self._era_memory.plan(
                self._key, self._pinned_era, None if conn is None else conn.session)
            if conn is not None:
                conn.close()
                await conn.wait_closed()
            self._conn = None
            try:
                conn, ready = await self._open(era, discovered, subscriptions)
            except ProbeKilledServer:
                # V-23: a handshake-era server that exits on any request before initialize.
                conn, ready = await self._open("legacy", None, subscriptions)
            self._era_memory.opened(self._key, self._pinned_era, ready, conn.session)
            self._ready = ready
            self._conn = conn
            return conn

    async def _open(self, era: str, discovered: Discovered | None,
                    subscriptions: frozenset[str]) -> tuple[AsyncPump, Ready]:
        conn = self._new_connection()
        self._connecting = conn
        try:
            await conn.open()
            if self._closed:  # close() ran while the process started
                raise ConnectionClosed("the client is closed")
            ready: Ready = await conn.call(lambda s, now, t: s.start(
                now=now, timeout=t, era=era, discovered=discovered,
                subscriptions=subscriptions), self._timeout)
        except ConnectionClosed as exc:
            conn.close()
            await conn.wait_closed()
            if conn.session.probe_killed_server and era != "legacy":
                raise ProbeKilledServer(str(exc)) from exc
            raise
        except BaseException as exc:
            conn.close()
            if self._rt.is_cancellation(exc):
                conn._force_finish()  # cancelled: the process group is killed, not waited on
            await conn.wait_closed()
            raise
        finally:
            self._connecting = None
            conn.opening_over()
        return conn, ready

    async def connect(self: _C) -> _C:
        """Start the server (or reach the endpoint) and do the handshake now; otherwise the
        first call does.

        Raises :class:`ServerExited`, :class:`UnsupportedVersion`, :class:`RequestTimeout`,
        :class:`RpcError` or :class:`ConnectionClosed` (the command could not start).
        """
        await self._connection()
        return self

    def close(self) -> None:
        """Start closing, without waiting: from any task, a synchronous callback, or another
        thread.  Pending calls fail with :class:`ConnectionClosed` at once; the server is
        stopped in the background (:meth:`aclose` waits for it).  Idempotent."""
        self._closed = True
        if self._token is not None and not self._rt.run_soon_threadsafe(self._token,
                                                                          self._close_now):
            # Its event loop has ended: nothing will run there; stop the server from here.
            for conn in (self._connecting, self._conn, *self._ending):
                if conn is not None:
                    conn.abandon()

    def _close_now(self) -> None:
        conns = [c for c in (self._connecting, self._conn) if c is not None]
        self._conn = None
        for conn in conns:
            conn.close()
            if conn not in self._ending:
                self._ending.append(conn)

    async def aclose(self) -> None:
        """End the connection and wait until it is over: stdio stops the server (close stdin,
        SIGTERM, SIGKILL on its process group); HTTP ends the session (DELETE) and closes the
        sockets.  Pending calls fail with :class:`ConnectionClosed`.  From any task, also
        after :meth:`close`; idempotent.  Cancelled while waiting, it kills the process
        group at once."""
        self._closed = True
        if self._token is not None and self._rt.token() is not self._token:
            self.close()  # from another loop: its own loop closes it, or nothing is left
            return
        self._close_now()
        for conn in list(self._ending):  # another task may be closing too
            await conn.wait_closed()
            if conn in self._ending:
                self._ending.remove(conn)

    async def __aenter__(self: _C) -> _C:
        return await self.connect()

    async def __aexit__(self, exc_type: object, exc: BaseException | None,
                        tb: object) -> None:
        if self._rt.is_cancellation(exc):
            # The block was cancelled: stop the server now rather than wait out the polite
            # stop (a trio aclose would be cancelled at its first await anyway).
            self._close_now()
            for conn in self._ending:
                conn._force_finish()
        await self.aclose()

    # -- what the handshake said ------------------------------------------------------------

    @property
    def _info(self) -> Ready:
        if self._ready is None:
            raise LocalProtocolError("not connected yet: use `async with` or "
                                     "`await client.connect()` first")
        return self._ready

    # -- operations -------------------------------------------------------------------------

    async def _live(self) -> AsyncPump:
        """The live connection (the fast path of :meth:`_connection`)."""
        c = self._conn
        if c is None or c.closed or self._rt.token() is not self._token:
            c = await self._connection()
        return c

    def _run(self, timeout: float | None, op: Operation[_V],
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> Coroutine[Any, Any, _V]:
        """Start ``op(session, now, total)`` on the live connection; its value, awaited.  Not
        a coroutine itself: on a live connection the call's own coroutine is returned (one
        frame less on every call)."""
        c = self._conn  # :meth:`_live`, inlined
        total = self._timeout if timeout is None else timeout
        if c is None or c.closed or self._rt.token() is not self._token:
            return self._run_connecting(op, total, on_progress, on_status)
        return c.call(op, total, on_progress, on_status)

    async def _run_connecting(self, op: Operation[_V], total: float,
                              on_progress: ProgressCallback | None,
                              on_status: StatusCallback | None) -> _V:
        conn = await self._connection()
        return await conn.call(op, total, on_progress, on_status)


class AsyncStdioClientBase(AsyncClientBase):
    """An async MCP client for one stdio server.  If the server dies, the calls in flight
    fail with :class:`ServerExited` (exit code and stderr tail) and the next call starts the
    server again and redoes the handshake; a call is never replayed."""

    def __init__(self, command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None) -> None:
        super().__init__(stdio_key(argv_of(command), cwd, env), timeout=timeout,
                         client_info=client_info, limits=limits,
                         protocol_version=protocol_version, on_sampling=on_sampling,
                         on_elicitation=on_elicitation, roots=roots,
                         on_notification=on_notification, era_memory=era_memory)
        self._command = command
        self._env = env
        self._cwd = cwd

    @property
    def pid(self) -> int | None:
        """The server process id (None before the first connection)."""
        conn = self._conn
        return conn.proc.pid if isinstance(conn, StdioPump) else None


class AsyncHttpClientBase(AsyncClientBase):
    """An async MCP client for one Streamable HTTP endpoint.  Same methods as the stdio
    client, plus :class:`SessionExpired` when the server forgot a handshake-era session."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, auth: Any = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None,
                 ssl_context: Any = None,
                 ca_file: str | os.PathLike[str] | None = None) -> None:
        from mcp_proto._http import HttpTarget  # noqa: PLC0415 - stdio clients never load it

        target = HttpTarget.parse(url)  # raises LocalProtocolError for a bad URL
        super().__init__(("http", target.origin, target.target), timeout=timeout,
                         client_info=client_info, limits=limits,
                         protocol_version=protocol_version, on_sampling=on_sampling,
                         on_elicitation=on_elicitation, roots=roots,
                         on_notification=on_notification, era_memory=era_memory)
        self._url = url
        self._headers = dict(headers or {})
        self._bearer_token = bearer_token
        if auth is not None and bearer_token is not None:
            raise LocalProtocolError("pass either auth= or bearer_token=, not both")
        self._auth_setup = None if auth is None else AuthSetup(auth, url)
        if ssl_context is None and ca_file is not None:
            import ssl  # noqa: PLC0415 - only for TLS: keeps the import of the bindings light

            ssl_context = ssl.create_default_context(cafile=os.fspath(ca_file))
        self._ssl_context = ssl_context  # None: the system's CAs, verification on


    @property
    def auth_status(self) -> AuthStatus | None:
        """What authorization holds now (issuer, scopes, expiry; never the token), or None
        without ``auth=`` or before the first connection."""
        conn = self._conn
        if not isinstance(conn, HttpPump) or conn.http.auth is None:
            return None
        return conn.http.auth.status()

    async def reauthorize(self, scope: str | None = None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too); the next calls
        wait for it.  Raises :class:`LocalProtocolError` without ``auth=``."""
        if self._auth_setup is None:
            raise LocalProtocolError("reauthorize() needs a client created with auth=")
        conn = await self._connection()
        assert isinstance(conn, HttpPump) and conn.http.auth is not None
        conn.http.auth.reauthorize(time.monotonic(), scope)
        conn._after()
