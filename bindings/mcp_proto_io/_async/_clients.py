"""The async clients, whichever runtime runs them: the connection a call needs (made, or made
again after a death; closed from any task or thread), and the two transports' client bases.

Each runtime module (``_asyncio``, ``_trio``) derives its ``Client`` and ``HttpClient`` from
:class:`AsyncStdioClientBase` and :class:`AsyncHttpClientBase`, naming its :class:`Runtime`
and its connection classes.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from mcp_proto import (
    ConnectionClosed,
    LocalProtocolError,
    Ready,
    UrlElicitation,
    url_elicitation_result,
)

from .._client import (
    ClientOptions,
    HttpOptions,
    Operation,
    Plan,
    StdioOptions,
    legacy_plan,
    opening,
    probe_killed,
)
from .._era import ProbeKilledServer
from .._handlers import ProgressCallback, StatusCallback
from ._face import AsyncClientFace
from ._http import HttpPump
from ._pump import AsyncPump, Runtime
from ._stdio import StdioPump

if TYPE_CHECKING:
    from mcp_proto import AuthStatus

__all__ = [
    "HTTP_CLIENT_DOC",
    "HTTP_DOC",
    "STDIO_CLIENT_DOC",
    "STDIO_DOC",
    "AsyncClientBase",
    "AsyncHttpClientBase",
    "AsyncStdioClientBase",
]

_C = TypeVar("_C", bound="AsyncClientBase")
_V = TypeVar("_V")  # the value type of an operation (its handle says it)

STDIO_DOC = """A client for the stdio server started by ``command``; use it in ``async with``.

    Same parameters as :func:`mcp_proto_io.threads.connect_stdio`: ``env`` is merged over the
    environment, ``timeout`` (seconds) bounds the handshake and is each call's default total
    deadline, ``protocol_version`` pins one version (``ValueError`` for an unknown one), and
    declaring ``on_sampling``, ``on_elicitation`` or ``roots`` (plain or async functions)
    declares the matching client capability; ``label``, ``on_stderr(line)`` and
    ``on_trace(direction, message)`` (plain functions, run on the loop) as there.  The
    server starts (and the handshake runs) when
    the block is entered or at the first call; leaving the block (also by cancellation) stops
    the server's whole process group.  See the client class for the errors.
    """

HTTP_DOC = """A client for the Streamable HTTP endpoint ``url``; use it in ``async with``.

    Same parameters and errors as :func:`mcp_proto_io.threads.connect_http`: the era is
    chosen per origin, ``headers`` go on every request, ``bearer_token`` becomes
    ``Authorization: Bearer``, ``auth`` runs MCP authorization (``OAuth``,
    ``ClientCredentials``...; an async ``redirect`` is awaited, a plain one runs in a
    thread), TLS verifies against the system's CAs (or ``ca_file`` / ``ssl_context``),
    ``label`` and ``on_trace`` as on stdio.
    Cancelling a call closes its stream (2026) or posts
    ``notifications/cancelled`` (handshake era).  Raises :class:`LocalProtocolError` for a
    bad URL.
    """

#: The docstrings of each runtime's client classes, ``{a}`` its name with its article.
STDIO_CLIENT_DOC = """{a} MCP client for one stdio server.  Create it with :func:`connect_stdio`.

    Any task may call it; calls are pipelined.  If the server dies, the calls in flight fail
    with :class:`ServerExited` (exit code and stderr tail) and the next call starts the
    server again and redoes the handshake; a call is never replayed.
    """
HTTP_CLIENT_DOC = """{a} MCP client for one Streamable HTTP endpoint.  Create it with
    :func:`connect_http`.  Same methods as the stdio :class:`Client`."""


class AsyncClientBase(AsyncClientFace, ClientOptions):
    """The async client API, whatever carries it and whichever runtime runs it.  A dead
    connection is rebuilt on the next call (a call is never replayed).  The operations are
    :class:`AsyncClientFace`'s; this class connects and runs them."""

    _rt: ClassVar[Runtime]
    _conn: AsyncPump | None

    def _runtime_state(self) -> None:
        self._conn = None
        self._connecting: AsyncPump | None = None  # published so close() can abort it
        self._lock: Any = None  # created on the loop that first uses the client
        self._token: Any = None  # that loop, for close() from another thread
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
            conn = self._conn
            if conn is not None and not conn.closed and not self._closed:
                return conn
            plan = self._plan(conn)
            if conn is not None:
                await conn.wait_closed()
            self._conn = None
            try:
                conn, ready = await self._open(plan)
            except ProbeKilledServer:
                # V-23: a handshake-era server that exits on any request before initialize.
                conn, ready = await self._open(legacy_plan(plan))
            self._opened(conn.session, ready)
            self._conn = conn
            return conn

    async def _open(self, plan: Plan) -> tuple[AsyncPump, Ready]:
        conn = self._new_connection()
        self._connecting = conn
        try:
            await conn.open()
            if self._closed:  # close() ran while the process started
                raise ConnectionClosed("the client is closed")
            ready: Ready = await conn.call(opening(plan), self._timeout)
        except ConnectionClosed as exc:
            conn.close()
            await conn.wait_closed()
            retry = probe_killed(conn, plan, exc)
            if retry is not None:
                raise retry from exc
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
        self._closing()
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
        self._closing()
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

    async def _offer_url(self, elicitation: UrlElicitation) -> str | None:
        if elicitation.elicitation_id is not None:  # asked again: an old completion is stale
            self._elicitations.offered(elicitation.elicitation_id)
        handler = self._handlers.url_elicitation
        if handler is None:
            return None
        action = handler(elicitation.with_server(self.label))
        if inspect.isawaitable(action):
            action = await action
        return str(url_elicitation_result(action)["action"])

    async def _elicitations_done(self, ids: list[str], timeout: float) -> bool:
        done = self._elicitations
        deadline = time.monotonic() + timeout
        for elicitation_id in ids:
            while not done.is_done(elicitation_id):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                event = self._rt.event()
                done.watch([elicitation_id], event)
                try:
                    await self._rt.wait_event(event, left)
                finally:
                    done.unwatch([elicitation_id], event)
        return True



class AsyncStdioClientBase(StdioOptions, AsyncClientBase):
    """An async MCP client for one stdio server.  If the server dies, the calls in flight
    fail with :class:`ServerExited` (exit code and stderr tail) and the next call starts the
    server again and redoes the handshake; a call is never replayed."""

    _pump: ClassVar[type[StdioPump]]  # the runtime's stdio connection

    def _new_connection(self) -> AsyncPump:
        return self._pump(self, self._rt)

    @property
    def pid(self) -> int | None:
        """The server process id (None before the first connection)."""
        conn = self._conn
        return conn.proc.pid if isinstance(conn, StdioPump) else None


class AsyncHttpClientBase(HttpOptions, AsyncClientBase):
    """An async MCP client for one Streamable HTTP endpoint.  Same methods as the stdio
    client, plus :class:`SessionExpired` when the server forgot a handshake-era session."""

    _pump: ClassVar[type[HttpPump]]  # the runtime's HTTP connection

    def _new_connection(self) -> AsyncPump:
        return self._pump(self, self._rt)

    def _auth_status(self) -> AuthStatus | None:
        conn = self._conn
        return conn.auth_status() if isinstance(conn, HttpPump) else None

    async def reauthorize(self, scope: str | None = None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too); the next calls
        wait for it.  Raises :class:`LocalProtocolError` without ``auth=``."""
        self._need_auth()
        conn = await self._connection()
        assert isinstance(conn, HttpPump)
        conn.reauthorize(scope)
