"""The asyncio runtime of the async clients: the sans-IO core driven by the event loop's own
callbacks.

Bytes move through asyncio transports and protocols (no reader task: a read is a callback that
feeds the core and resolves the waiting futures), and the core's deadlines are one
``loop.call_at`` timer.  This is the native pump the design asks for when anyio costs more than
10% (``benchmarks/bench_pump.py`` measures it).  :mod:`mcp_proto_io.asyncio` offers its
clients; the asyncio Host takes :data:`RUNTIME` and the ``connect_*`` functions from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcp_proto import ConnectionLost, MCPError

from .._client import HttpOptions, connector
from .._handlers import ProgressCallback, StatusCallback
from .._tuning import CONNECT_TIMEOUT, DELETE_TIMEOUT, MAX_IDLE_CONNECTIONS
from ..auth._deferred import run_in_daemon_thread
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

#: Where the clients are offered (their ``__module__``).
HOME = "mcp_proto_io.asyncio"


class _Waiter:
    """A call's result: a future of the running loop.  ``done`` means a result or error was
    delivered (a future cancelled with its awaiting task is not done in this sense: the call
    must still be cancelled on the server)."""

    __slots__ = ("done", "fut", "on_progress", "on_status")

    def __init__(self, on_progress: ProgressCallback | None,
                 on_status: StatusCallback | None) -> None:
        # (a future of the running loop, as loop.create_future() makes one, without its frame)
        self.fut: asyncio.Future[Any] = asyncio.Future()
        self.on_progress = on_progress
        self.on_status = on_status
        self.done = False

    def set(self, value: Any, error: MCPError | None) -> None:
        if not self.done:
            self.done = True
            fut = self.fut
            if fut.done():  # its caller was cancelled: nobody reads it
                return
            if error is None:
                fut.set_result(value)
            else:
                fut.set_exception(error)

    def wait(self) -> asyncio.Future[Any]:
        return self.fut


def _task_ended(task: asyncio.Task[None]) -> None:
    exc = None if task.cancelled() else task.exception()
    if exc is not None:  # a background task must never fail silently
        traceback.print_exception(type(exc), exc, exc.__traceback__)


class _Runtime(RuntimeBase):
    """asyncio's primitives for the shared code."""

    waiter = _Waiter  # the class itself (as the others): one call less for every use
    lock = asyncio.Lock
    event = asyncio.Event
    sleep = staticmethod(asyncio.sleep)
    cancelled = asyncio.CancelledError
    ended = RuntimeError  # call_soon_threadsafe on a closed loop

    @staticmethod
    def spawn(name: str, fn: Callable[[], Coroutine[Any, Any, None]],
              done: Callable[[Any], None]) -> TaskHandle:
        task = asyncio.get_running_loop().create_task(fn(), name=name)
        task.add_done_callback(done)
        task.add_done_callback(_task_ended)
        return task

    @staticmethod
    def is_current(task: TaskHandle) -> bool:
        return asyncio.current_task() is task

    @staticmethod
    async def wait_event(event: asyncio.Event, timeout: float | None) -> None:
        if timeout is None:
            await event.wait()
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(event.wait(), max(0.0, timeout))

    #: The running loop, or None: asyncio's own C function (``asyncio.events`` exports it),
    #: asked on every call (a Python wrapper around ``get_running_loop`` cost a frame).
    token: Callable[[], asyncio.AbstractEventLoop | None] = \
        staticmethod(asyncio.events._get_running_loop)

    @staticmethod
    def schedule(token: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
        token.call_soon_threadsafe(fn)

    @staticmethod
    async def to_thread(fn: Callable[[], Any]) -> Any:
        # A daemon thread, not the loop's executor: asyncio.run() waits for the executor's
        # threads at exit, and a user step may take minutes.
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()

        def settle(value: Any, error: BaseException | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        def done(value: Any, error: BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                loop.call_soon_threadsafe(settle, value, error)

        run_in_daemon_thread(fn, done)
        return await future


RUNTIME = _Runtime()


class _Timer(AsyncPump):
    """The core's deadlines on one ``loop.call_at`` handle, moved only when a deadline comes
    earlier than the armed one (a later one is found when the timer fires)."""

    loop: asyncio.AbstractEventLoop
    timer: asyncio.TimerHandle | None = None

    def _soon(self, fn: Callable[[], None]) -> None:
        asyncio.get_running_loop().call_soon(fn)

    def _rearm(self) -> None:
        deadline = self._deadline()
        if deadline is None or self.closed:
            return
        armed = self.armed
        if armed is not None and armed <= deadline:
            return
        if self.timer is not None:
            self.timer.cancel()
        self.armed = deadline
        loop = self.loop
        self.timer = loop.call_at(loop.time() + (deadline - time.monotonic()), self._fire)

    def _fire(self) -> None:
        self.timer = None
        self.armed = None
        if not self.closed:
            try:
                self._on_timer()
            except Exception as exc:
                self.crashed(exc)

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _hold(transport: asyncio.ReadTransport | None, hold: bool) -> None:
    """Pause (True) or resume (False) reading from ``transport``, unless it is closing."""
    if transport is not None and not transport.is_closing():
        if hold:
            transport.pause_reading()
        else:
            transport.resume_reading()


class _PipeReader(asyncio.Protocol):
    def __init__(self, pump: AsyncPump, on_data: Callable[[bytes], None],
                 on_end: Callable[[], None]) -> None:
        self.pump = pump
        self.on_data = on_data
        self.on_end = on_end

    def data_received(self, data: bytes) -> None:
        try:
            self.on_data(data)
        except Exception as exc:  # a bug must fail the calls, not strand them
            self.pump.crashed(exc)

    def connection_lost(self, exc: Exception | None) -> None:  # EOF, error or our close
        self.on_end()


class _PipeWriter(asyncio.Protocol):
    lost = False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


class _StdioConnection(_Timer, StdioPump):
    """One server process; its pipes are asyncio pipe transports."""

    out: asyncio.ReadTransport | None = None
    err: asyncio.ReadTransport | None = None
    into: asyncio.WriteTransport | None = None
    given = 0  # bytes handed to ``into`` (what it still buffers was not written yet)
    writer: _PipeWriter

    async def open(self) -> None:
        self.loop = loop = asyncio.get_running_loop()
        proc = self.proc
        self.err, _ = await loop.connect_read_pipe(
            lambda: _PipeReader(self, self._on_stderr, self._on_stderr_eof), proc.stderr)
        self.into, self.writer = await loop.connect_write_pipe(_PipeWriter, proc.stdin)
        self.out, _ = await loop.connect_read_pipe(
            lambda: _PipeReader(self, self._on_stdout, self._on_stdout_eof), proc.stdout)
        self._rearm()

    def hold_input(self, hold: bool) -> None:
        _hold(self.out, hold)

    def _write(self, data: bytes) -> None:
        # Calls started together are flushed together (AsyncPump.start): one write, one
        # wake-up of the server, per loop iteration.
        into = self.into
        if into is not None and not into.is_closing():
            self.given += len(data)
            into.write(data)  # writes now what the pipe takes, buffers the rest

    def _written(self) -> int:
        into = self.into
        return self.given - (into.get_write_buffer_size() if into is not None else 0)

    def _close_transport(self) -> None:
        self._stop_timer()
        if self.into is not None:
            self.into.close()  # EOF on the server's stdin: the polite way to stop (L-10)
        elif self.proc.stdin is not None:
            self.proc.stdin.close()

    def _close_pipes_once(self) -> None:
        into = self.into
        # Abort drops what the server never read; a transport already closing with nothing
        # buffered has its end scheduled (a second one would run its teardown twice).
        if into is not None and not self.writer.lost and (
                not into.is_closing() or into.get_write_buffer_size()):
            into.abort()
        for transport, f in ((self.out, self.proc.stdout), (self.err, self.proc.stderr)):
            if transport is not None:
                transport.close()
            elif f is not None:
                f.close()


class Client(AsyncStdioClientBase):
    __doc__, __module__ = STDIO_CLIENT_DOC.format(a="An asyncio"), HOME
    _rt, _pump = RUNTIME, _StdioConnection


connect_stdio = connector(Client, "connect_stdio", STDIO_DOC, HOME)


# -- Streamable HTTP ----------------------------------------------------------------------------


class _HttpStream(asyncio.Protocol):
    """One keep-alive TCP (TLS) connection; carries one exchange at a time."""

    def __init__(self, pump: _HttpConnection) -> None:
        self.pump = pump
        self.transport: asyncio.Transport | None = None
        self.ex: HttpExchange | None = None
        self.dead = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        ex = self.ex
        if ex is None:
            return
        pump = self.pump
        try:
            pump._on_http_data(ex, data)
            if ex.done and self.ex is ex:
                pump._exchange_done(self, ex)
        except Exception as exc:  # a bug must fail the calls, not strand them
            pump.crashed(exc)

    def eof_received(self) -> bool:
        return False  # close; connection_lost tells the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = True
        ex, self.ex = self.ex, None
        if ex is None:
            return
        pump = self.pump
        pump.streams.pop(ex.id, None)
        if exc is None:
            pump._on_http_data(ex, b"")  # the server closed: the answer may be complete
        elif not ex.done:
            pump._lost(ex, ConnectionLost(f"{ex.rpc_method}: connection lost: {exc}"))
        pump._exchange_ended()


class _DeleteAnswer(asyncio.Protocol):
    def __init__(self, answered: asyncio.Future[None]) -> None:
        self.answered = answered

    def data_received(self, data: bytes) -> None:
        if not self.answered.done():
            self.answered.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.answered.done():
            self.answered.set_result(None)


class _HttpConnection(_Timer, HttpPump):
    """One Streamable HTTP endpoint: exchanges run on keep-alive connections, each as an
    asyncio protocol that feeds the core as bytes arrive."""

    def __init__(self, client: HttpOptions, rt: Runtime) -> None:
        super().__init__(client, rt)
        self.streams: dict[int, _HttpStream] = {}  # exchange id -> its connection
        self.idle: list[_HttpStream] = []
        self.holding = False  # slow async callbacks: reading paused
        self.loop = asyncio.get_running_loop()

    async def _connect(self, protocol: Callable[[], asyncio.Protocol]) -> asyncio.BaseTransport:
        target = self.target
        host = target.host.strip("[]")
        context: ssl.SSLContext | None = None
        if target.scheme == "https":
            context = self.client._ssl_context or ssl.create_default_context()
        transport, _ = await asyncio.wait_for(self.loop.create_connection(
            protocol, host, target.port, ssl=context,
            server_hostname=host if context is not None else None), CONNECT_TIMEOUT)
        if self.auth is not None:  # where the server really is decides the auth rules
            peer = transport.get_extra_info("peername")
            if peer:
                self.auth.observe_peer(str(peer[0]))
        return transport

    def _start_exchange(self, ex: HttpExchange) -> None:
        while self.idle:
            stream = self.idle.pop()
            if not stream.dead and stream.transport is not None \
                    and not stream.transport.is_closing():
                self._send(stream, ex)
                return
        self.spawn("mcp-proto-connect", lambda: self._connect_and_send(ex))

    async def _connect_and_send(self, ex: HttpExchange) -> None:
        stream = _HttpStream(self)
        try:
            await self._connect(lambda: stream)
        except Exception as exc:  # OSError, a timeout, a bad host name: the call fails now
            self._lost(ex, ConnectionLost(f"{ex.rpc_method}: cannot connect to "
                                          f"{self.target.authority}: {exc!r}"))
            self._exchange_ended()
            return
        if self.closing or ex.aborted:  # closed, or cancelled while connecting
            if stream.transport is not None:
                stream.transport.abort()
            if not self.closing:
                self._exchange_ended()
            return
        self._send(stream, ex)

    def _send(self, stream: _HttpStream, ex: HttpExchange) -> None:
        assert stream.transport is not None
        stream.ex = ex
        self.streams[ex.id] = stream
        stream.transport.write(ex.data)
        if self.holding:
            stream.transport.pause_reading()

    def hold_input(self, hold: bool) -> None:
        self.holding = hold
        for stream in self.streams.values():
            _hold(stream.transport, hold)

    def _exchange_done(self, stream: _HttpStream, ex: HttpExchange) -> None:
        stream.ex = None
        self.streams.pop(ex.id, None)
        self._exchange_ended()
        if ex.reusable and not self.closing and len(self.idle) < MAX_IDLE_CONNECTIONS:
            if self.holding and stream.transport is not None:
                stream.transport.resume_reading()  # idle: only its close can arrive
            self.idle.append(stream)
        elif stream.transport is not None:
            stream.transport.close()

    def _abort_exchange(self, exchange_id: int) -> None:
        stream = self.streams.pop(exchange_id, None)
        if stream is not None:
            stream.ex = None
            if stream.transport is not None:
                stream.transport.abort()
            self._exchange_ended()

    def _close_transport(self) -> None:
        self._stop_timer()
        self.queued.clear()
        streams = list(self.streams.values()) + self.idle
        self.streams.clear()
        self.idle = []
        for stream in streams:
            stream.ex = None
            if stream.transport is not None:
                stream.transport.abort()

    async def _finish(self) -> None:
        delete = self.delete
        if delete is None:
            return
        answered: asyncio.Future[None] = self.loop.create_future()
        transport = None
        try:
            transport = await self._connect(lambda: _DeleteAnswer(answered))
            transport.write(delete.data)  # type: ignore[attr-defined]
            await asyncio.wait_for(answered, DELETE_TIMEOUT)
        except (OSError, asyncio.TimeoutError):
            pass  # best effort: the server expires the session itself
        finally:
            if transport is not None:
                transport.abort()  # type: ignore[attr-defined]


class HttpClient(AsyncHttpClientBase):
    __doc__, __module__ = HTTP_CLIENT_DOC.format(a="An asyncio"), HOME
    _rt, _pump = RUNTIME, _HttpConnection


connect_http = connector(HttpClient, "connect_http", HTTP_DOC, HOME)
