"""The trio runtime of the async clients: the sans-IO core driven by a few system tasks.

A stdio connection runs a stdout reader, a stderr reader, a stdin writer (only used when the
pipe is full: callers write their own requests) and a timer for the core's deadlines; an HTTP
exchange runs in a task of its own.  They are system tasks owned by the connection, not by the
caller's nursery, so a client holds no cancel scope across ``async with``.
:mod:`mcp_proto_io.trio` offers its clients; the trio Host takes :data:`RUNTIME` and the
``connect_*`` functions from here.
"""

from __future__ import annotations

import contextlib
import os
import ssl
import time
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

try:
    import outcome
    import trio
except ModuleNotFoundError as exc:  # the optional dependency (outcome comes with trio)
    if exc.name not in ("outcome", "trio"):
        raise
    raise ModuleNotFoundError(f"mcp_proto_io.trio needs trio (no module named {exc.name!r}): "
                              "pip install 'mcp-proto[trio]'", name=exc.name) from exc

from mcp_proto import ConnectionLost, MCPError

from .._client import HttpOptions, StdioOptions, connector
from .._fds import wait_fd
from .._handlers import ProgressCallback, StatusCallback
from .._tuning import (
    BIG_READ_SIZE,
    CONNECT_TIMEOUT,
    DELETE_TIMEOUT,
    MAX_IDLE_CONNECTIONS,
    READ_SIZE,
)
from ._clients import (
    HTTP_CLIENT_DOC,
    HTTP_DOC,
    STDIO_CLIENT_DOC,
    STDIO_DOC,
    AsyncHttpClientBase,
    AsyncStdioClientBase,
)
from ._http import HttpPump
from ._pump import AsyncPump, Runtime, RuntimeBase, TaskHandle
from ._stdio import StdioPump

if TYPE_CHECKING:
    from mcp_proto.http._streamable import HttpExchange

__all__ = ["RUNTIME", "Client", "HttpClient", "connect_http", "connect_stdio"]

# trio's low-level calls that every call's wait and wake makes, looked up once here rather
# than through two attribute loads each time
_reschedule = trio.lowlevel.reschedule
_current_task = trio.lowlevel.current_task
_wait_task_rescheduled = trio.lowlevel.wait_task_rescheduled
_current_trio_token = trio.lowlevel.current_trio_token

#: Where the clients are offered (their ``__module__``).
HOME = "mcp_proto_io.trio"


class _Waiter(outcome.Outcome[Any]):
    """A call's result: a slot and the task parked on it (trio's lowest-level wait, lighter
    than an Event for a wait that happens once per call).

    The waiter is itself the :class:`outcome.Outcome` the parked task is rescheduled with:
    trio resumes the task with it and ``wait_task_rescheduled`` unwraps it, so a result
    costs no object of its own on the way (one ``outcome.Value`` per call was about a tenth
    of the binding's time per call)."""

    __slots__ = ("done", "error", "on_progress", "on_status", "task", "value")

    # A waiter is one call's: equal only to itself, and a key of the pump's tables (an
    # Outcome compares by value, and so is not hashable).
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:  # type: ignore[override]  # attrs types Outcome's as None
        return id(self)

    def __reduce__(self) -> Any:  # Outcome's attrs state would name a slot never set
        raise TypeError("a call's waiter cannot be copied or pickled")

    def __init__(self, on_progress: ProgressCallback | None,
                 on_status: StatusCallback | None) -> None:
        self.done = False
        self.value: Any = None
        self.error: MCPError | None = None
        self.task: trio.lowlevel.Task | None = None
        self.on_progress = on_progress
        self.on_status = on_status

    def set(self, value: Any, error: MCPError | None) -> None:
        if not self.done:
            self.done = True
            self.value = value
            self.error = error
            task, self.task = self.task, None
            if task is not None:
                _reschedule(task, self)

    def _abort(self, _: Any) -> trio.lowlevel.Abort:
        self.task = None  # cancelled: set() will not wake it (trio resumes it with Cancelled)
        return trio.lowlevel.Abort.SUCCEEDED

    def wait(self) -> Awaitable[Any]:
        """The value (or the error raised), to be awaited at once."""
        if self.done:
            return self._ready()
        self.task = _current_task()
        return _wait_task_rescheduled(self._abort)

    async def _ready(self) -> Any:
        await trio.lowlevel.checkpoint()
        return self.unwrap()

    # -- the Outcome the task is resumed with (each waiter resumes its task once) ----------

    def unwrap(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value

    def send(self, gen: Any) -> Any:
        if self.error is not None:
            return gen.throw(self.error)
        return gen.send(self.value)

    async def asend(self, agen: Any) -> Any:
        if self.error is not None:
            return await agen.athrow(self.error)
        return await agen.asend(self.value)


class _Soon:
    """Functions to run after what is ready now, run by one task of the connection (spawned
    with the first, cancelled with the others at close).  ``TrioToken.run_sync_soon`` would
    do it too, but it is made for other threads: a lock and a write to the run's wake-up
    socket on every call."""

    __slots__ = ("ended", "queue", "task")

    def __init__(self, ended: Callable[[], bool]) -> None:
        self.queue: list[Callable[[], None]] = []
        self.task: trio.lowlevel.Task | None = None  # parked, waiting for work
        self.ended = ended  # the connection closed: stop (close() spares the task it runs in)

    def add(self, fn: Callable[[], None]) -> None:
        self.queue.append(fn)
        task, self.task = self.task, None
        if task is not None:
            _reschedule(task)

    async def run(self) -> None:
        while not self.ended():
            if not self.queue:
                self.task = _current_task()
                await _wait_task_rescheduled(self._abort)
            batch, self.queue = self.queue, []
            for fn in batch:
                fn()  # AsyncPump._after_soon: never raises

    def _abort(self, _: Any) -> trio.lowlevel.Abort:
        self.task = None  # the connection is closing
        return trio.lowlevel.Abort.SUCCEEDED


class _Task:
    """A system task in a cancel scope of its own."""

    __slots__ = ("scope", "task")

    def __init__(self) -> None:
        self.scope = trio.CancelScope()
        self.task: trio.lowlevel.Task | None = None

    def cancel(self) -> None:
        self.scope.cancel()


class _Runtime(RuntimeBase):
    """trio's primitives for the shared code."""

    waiter = _Waiter  # the class itself (as the others): one call less for every use
    lock = trio.Lock
    event = trio.Event
    sleep = staticmethod(trio.sleep)
    cancelled = trio.Cancelled
    ended = trio.RunFinishedError  # run_sync_soon once that run ended

    @staticmethod
    def spawn(name: str, fn: Callable[[], Coroutine[Any, Any, None]],
              done: Callable[[Any], None]) -> TaskHandle:
        handle = _Task()

        async def run() -> None:
            try:
                with handle.scope:
                    await fn()
            except Exception:  # a system task must never raise (it would crash trio.run)
                traceback.print_exc()
            finally:
                done(handle)

        handle.task = trio.lowlevel.spawn_system_task(run, name=name)
        return handle

    @staticmethod
    def is_current(task: TaskHandle) -> bool:
        return isinstance(task, _Task) and task.task is _current_task()

    @staticmethod
    async def wait_event(event: trio.Event, timeout: float | None) -> None:
        with trio.move_on_after(float("inf") if timeout is None else max(0.0, timeout)):
            await event.wait()

    @staticmethod
    def token() -> trio.lowlevel.TrioToken | None:
        try:
            return _current_trio_token()
        except RuntimeError:
            return None

    @staticmethod
    def schedule(token: trio.lowlevel.TrioToken, fn: Callable[[], None]) -> None:
        token.run_sync_soon(fn)

    @staticmethod
    async def to_thread(fn: Callable[[], Any]) -> Any:
        return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)


RUNTIME = _Runtime()


def _close_fd(f: Any) -> None:
    """Close a pipe file another task may be waiting on (trio must be told first)."""
    if f is not None and not f.closed:
        with contextlib.suppress(OSError, ValueError):
            trio.lowlevel.notify_closing(f.fileno())
        f.close()


class _Timer(AsyncPump):
    """The core's deadlines: one task sleeping in a cancel scope whose deadline moves when
    a deadline comes earlier than the armed one."""

    timer_scope: trio.CancelScope | None = None
    gate: trio.Event | None = None  # while set, reading waits (slow async callbacks)
    soon_runner: _Soon | None = None

    def _soon(self, fn: Callable[[], None]) -> None:
        runner = self.soon_runner
        if runner is None:
            runner = self.soon_runner = _Soon(lambda: self.closing)
            self.spawn("mcp-proto-soon", runner.run)
        runner.add(fn)

    def hold_input(self, hold: bool) -> None:
        if hold:
            self.gate = trio.Event()
        elif self.gate is not None:
            self.gate.set()
            self.gate = None

    def _trio_deadline(self, deadline: float) -> float:
        return trio.current_time() + (deadline - time.monotonic())

    def _rearm(self) -> None:
        deadline = self._deadline()
        scope = self.timer_scope
        if deadline is None or scope is None:
            return
        if self.armed is None or deadline < self.armed:
            self.armed = deadline
            scope.deadline = self._trio_deadline(deadline)

    def _start_timer(self) -> None:
        self.spawn("mcp-proto-timer", self._timer)

    async def _timer(self) -> None:
        while not self.closed:
            deadline = self._deadline()
            with trio.CancelScope() as scope:
                self.armed = deadline
                if deadline is not None:
                    scope.deadline = self._trio_deadline(deadline)
                self.timer_scope = scope
                await trio.sleep_forever()
            self.timer_scope = None
            self.armed = None
            if not self.closed:
                self._on_timer()


class _StdioConnection(_Timer, StdioPump):
    """One server process; its non-blocking pipes are read and written directly."""

    def __init__(self, client: StdioOptions, rt: Runtime) -> None:
        super().__init__(client, rt)
        self.backlog: list[bytes | memoryview] = []  # for the writer task to send
        self.writing = False  # the writer task holds bytes not fully written yet
        self.written = 0  # bytes the stdin pipe took (for the InputWitness)
        self.wake = trio.Event()

    async def open(self) -> None:
        proc = self.proc
        for f in (proc.stdin, proc.stdout, proc.stderr):
            assert f is not None
            os.set_blocking(f.fileno(), False)
        self.spawn("mcp-proto-stdout", self._read_stdout)
        self.spawn("mcp-proto-stderr", self._read_stderr)
        self.spawn("mcp-proto-stdin", self._writer)
        self._start_timer()
        await trio.lowlevel.checkpoint()

    async def _read(self, f: Any, on_data: Callable[[bytes], None]) -> None:
        """Read ``f`` until EOF.  A busy server has the next bytes ready by the time the last
        ones are handled, so the pipe is read first and waited on only when it is empty: a
        plain checkpoint between reads costs less than trio's registration with epoll on
        every ``wait_readable``."""
        fd = f.fileno()
        size = READ_SIZE
        while True:
            gate = self.gate
            if gate is not None and on_data == self._on_stdout:
                await gate.wait()  # slow async callbacks: let them catch up first
            if f.closed:  # closed while this task was parked (the fd may be reused by now)
                return
            try:
                data = os.read(fd, size)
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_readable(fd)
                except trio.ClosedResourceError:
                    return
                continue
            except OSError:
                data = b""
            if not data:
                return
            size = BIG_READ_SIZE if len(data) >= READ_SIZE else READ_SIZE
            on_data(data)
            await trio.lowlevel.checkpoint()  # let the callers on_data woke run (and send)

    async def _read_stdout(self) -> None:
        try:
            await self._read(self.proc.stdout, self._on_stdout)
        except Exception as exc:  # a bug must fail the calls, not strand them
            self.crashed(exc)
            return
        self._on_stdout_eof()

    async def _read_stderr(self) -> None:
        try:
            await self._read(self.proc.stderr, self._on_stderr)
        finally:
            self._on_stderr_eof()

    def _write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        if self.backlog or self.writing:  # the writer holds bytes: these go after them
            self.backlog.append(data)
            self.wake.set()
            return
        # Calls started together are flushed together (AsyncPump.start), so this is one
        # write per batch: written now, the writer does any rest.
        view = memoryview(data)
        try:
            n = os.write(stdin.fileno(), view)
            self.written += n
            view = view[n:]
        except BlockingIOError:
            pass
        except OSError:  # the server closed its stdin (it is exiting): EOF follows
            return
        if view:
            self.backlog.append(view)
            self.wake.set()

    async def _writer(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        backlog = self.backlog
        while True:
            await self.wake.wait()
            self.wake = trio.Event()
            await trio.lowlevel.cancel_shielded_checkpoint()  # let this batch's callers add
            self.writing = True
            try:
                while backlog:
                    view = memoryview(backlog[0] if len(backlog) == 1 else b"".join(backlog))
                    backlog.clear()
                    while view:
                        try:
                            n = os.write(stdin.fileno(), view)
                            self.written += n
                            view = view[n:]
                        except BlockingIOError:
                            await trio.lowlevel.wait_writable(stdin.fileno())
            except (OSError, ValueError, trio.ClosedResourceError):
                backlog.clear()  # closed, or the server is exiting
            finally:
                self.writing = False

    def _written(self) -> int:
        return self.written

    def _close_transport(self) -> None:
        self.backlog.clear()
        _close_fd(self.proc.stdin)  # EOF on the server's stdin: the polite way (L-10)

    def _close_pipes_once(self) -> None:
        _close_fd(self.proc.stdin)
        _close_fd(self.proc.stdout)
        _close_fd(self.proc.stderr)


class Client(AsyncStdioClientBase):
    __doc__, __module__ = STDIO_CLIENT_DOC.format(a="A trio"), HOME
    _rt, _pump = RUNTIME, _StdioConnection


connect_stdio = connector(Client, "connect_stdio", STDIO_DOC, HOME)


# -- Streamable HTTP ----------------------------------------------------------------------------


def _reason(exc: BaseException) -> str:
    """What went wrong, for the error message: trio's BrokenResourceError carries the real
    cause (an ``ssl.SSLCertVerificationError``, a reset) in ``__cause__``."""
    parts = [str(exc) or type(exc).__name__]
    if exc.__cause__ is not None:
        parts.append(str(exc.__cause__) or type(exc.__cause__).__name__)
    return ": ".join(parts)


def _socket_of(stream: trio.abc.Stream) -> Any:
    inner: Any = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    return inner.socket


def _close_stream_now(stream: trio.abc.Stream) -> None:
    with contextlib.suppress(OSError):
        _socket_of(stream).close()  # trio's socket tells waiters first


def _stale(stream: trio.abc.Stream) -> bool:
    """A kept-alive connection the server closed reads as EOF at once."""
    try:
        return wait_fd(_socket_of(stream).fileno(), "read", 0)
    except (OSError, ValueError):
        return True


class _HttpConnection(_Timer, HttpPump):
    """One Streamable HTTP endpoint: each exchange is a task on a keep-alive connection."""

    def __init__(self, client: HttpOptions, rt: Runtime) -> None:
        super().__init__(client, rt)
        self.running_tasks: dict[int, TaskHandle] = {}  # exchange id -> its task
        self.streams: dict[int, trio.abc.Stream] = {}  # exchange id -> its connection
        self.idle: list[trio.abc.Stream] = []

    async def open(self) -> None:
        self._start_timer()
        await trio.lowlevel.checkpoint()

    async def _connect(self) -> trio.abc.Stream:
        target = self.target
        host = target.host.strip("[]")
        with trio.fail_after(CONNECT_TIMEOUT):
            stream: trio.abc.Stream = await trio.open_tcp_stream(host, target.port)
            if self.auth is not None:  # where the server really is decides the auth rules
                with contextlib.suppress(OSError):
                    if isinstance(stream, trio.SocketStream):
                        self.auth.observe_peer(str(stream.socket.getpeername()[0]))
            if target.scheme == "https":
                context = self.client._ssl_context or ssl.create_default_context()
                tls = trio.SSLStream(stream, context, server_hostname=host,
                                     https_compatible=True)
                try:
                    await tls.do_handshake()
                except BaseException:
                    _close_stream_now(stream)
                    raise
                stream = tls
        return stream

    def _start_exchange(self, ex: HttpExchange) -> None:
        self.running_tasks[ex.id] = self.spawn("mcp-proto-http", lambda: self._run(ex))

    async def _run(self, ex: HttpExchange) -> None:
        stream = None
        while self.idle and stream is None:
            stream = self.idle.pop()
            if _stale(stream):
                _close_stream_now(stream)
                stream = None
        try:
            if stream is None:
                stream = await self._connect()
        except Exception as exc:  # OSError, a timeout, TLS, a bad host name: the call fails
            if self.running_tasks.pop(ex.id, None) is not None:  # not aborted meanwhile
                self._lost(ex, ConnectionLost(f"{ex.rpc_method}: cannot connect to "
                                              f"{self.target.authority}: {_reason(exc)}"))
                self._exchange_ended()
            return
        self.streams[ex.id] = stream
        try:
            await stream.send_all(ex.data)
            size = READ_SIZE
            while not ex.done:
                gate = self.gate
                if gate is not None:
                    await gate.wait()  # slow async callbacks: let them catch up first
                # bytes from a socket; h11 takes a bytearray (TLS) just as well
                data = await stream.receive_some(size)
                size = BIG_READ_SIZE if len(data) >= READ_SIZE else READ_SIZE
                self._on_http_data(ex, data)
                if not data:
                    break
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            if not ex.done and not self.closing:
                self._lost(ex, ConnectionLost(f"{ex.rpc_method}: connection lost: "
                                              f"{_reason(exc)}"))
        finally:
            self.streams.pop(ex.id, None)
            if self.running_tasks.pop(ex.id, None) is not None:
                self._exchange_ended()
            if ex.reusable and not self.closing and len(self.idle) < MAX_IDLE_CONNECTIONS:
                self.idle.append(stream)
            else:
                _close_stream_now(stream)

    def _abort_exchange(self, exchange_id: int) -> None:
        task = self.running_tasks.pop(exchange_id, None)
        if task is not None:
            task.cancel()  # its task closes the connection
            self._exchange_ended()

    def _close_transport(self) -> None:
        self.queued.clear()
        # Every connection closes now, also the one of a task that called close() from a
        # callback (it is not cancelled): its next read ends at once.
        streams = [*self.streams.values(), *self.idle]
        self.streams.clear()
        self.idle = []
        for stream in streams:
            _close_stream_now(stream)

    async def _finish(self) -> None:
        delete = self.delete
        if delete is None:
            return
        with trio.move_on_after(DELETE_TIMEOUT):
            try:
                stream = await self._connect()
            except (OSError, trio.TooSlowError, trio.BrokenResourceError, ssl.SSLError):
                return  # best effort: the server expires the session itself
            try:
                await stream.send_all(delete.data)
                await stream.receive_some(READ_SIZE)
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                _close_stream_now(stream)


class HttpClient(AsyncHttpClientBase):
    __doc__, __module__ = HTTP_CLIENT_DOC.format(a="A trio"), HOME
    _rt, _pump = RUNTIME, _HttpConnection


connect_http = connector(HttpClient, "connect_http", HTTP_DOC, HOME)
