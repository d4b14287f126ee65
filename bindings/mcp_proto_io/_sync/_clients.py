"""The blocking clients: the connection a call needs (made, or made again after a death), and
the two transports' client classes with their ``connect_*`` functions.

They are defined here and offered by :mod:`mcp_proto_io.threads` (their public home, which
their ``__module__`` names).
"""

from __future__ import annotations

import inspect
import threading
import time
from typing import TYPE_CHECKING, TypeVar

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
    connector,
    legacy_plan,
    opening,
    probe_killed,
)
from .._era import ProbeKilledServer
from .._handlers import ProgressCallback, StatusCallback
from ._face import ClientFace
from ._http import HttpConnection
from ._pump import Pump
from ._stdio import StdioConnection

if TYPE_CHECKING:
    from mcp_proto import AuthStatus

__all__ = ["ClientBase", "Client", "HttpClient", "connect_http", "connect_stdio"]

#: Where the clients are offered (their ``__module__``).
HOME = "mcp_proto_io.threads"

_C = TypeVar("_C", bound="ClientBase")
_V = TypeVar("_V")  # the value type of an operation (its handle says it)


class ClientBase(ClientFace, ClientOptions):
    """The blocking client API, whatever carries it (stdio or HTTP).  Thread-safe.  A dead
    connection is rebuilt on the next call (a call is never replayed).  The operations are
    :class:`ClientFace`'s (generated from the async face); this class connects and runs them."""

    _conn: Pump | None

    def _runtime_state(self) -> None:
        self._conn = None
        self._connecting: Pump | None = None  # published so close() can abort it
        # Reentrant: a close() from a signal handler may run on the thread that holds it
        # (opening the connection); the handshake it aborts then fails on its own.
        self._conn_lock = threading.RLock()

    def _new_connection(self) -> Pump:
        raise NotImplementedError

    # -- connection management --------------------------------------------------------------

    def _connection(self) -> Pump:
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        with self._conn_lock:
            conn = self._conn
            if conn is not None and not conn.closed and not self._closed:
                return conn
            plan = self._plan(conn)
            self._conn = None
            try:
                conn, ready = self._open(plan)
            except ProbeKilledServer:
                # V-23: a handshake-era server that exits on any request before initialize.
                conn, ready = self._open(legacy_plan(plan))
            self._opened(conn.session, ready)
            self._conn = conn
            return conn

    def _open(self, plan: Plan) -> tuple[Pump, Ready]:
        conn = self._new_connection()
        self._connecting = conn
        try:
            if self._closed:  # close() ran while the process started
                raise ConnectionClosed("the client is closed")
            ready: Ready = conn.call(opening(plan), self._timeout)
        except ConnectionClosed as exc:
            conn.close()
            retry = probe_killed(conn, plan, exc)
            if retry is not None:
                raise retry from exc
            raise
        except BaseException:
            conn.close()
            raise
        finally:
            self._connecting = None
            conn.opening_over()
        return conn, ready

    def connect(self: _C) -> _C:
        """Start the server and do the handshake now (otherwise the first call does).

        Raises :class:`ServerExited`, :class:`UnsupportedVersion`, :class:`RequestTimeout`,
        :class:`RpcError` or :class:`ConnectionClosed` (the command could not start).
        """
        self._connection()
        return self

    def close(self) -> None:
        """End the connection: stdio stops the server (close stdin, SIGTERM, SIGKILL on its
        process group); HTTP ends the session (DELETE) and closes the sockets.  Threads end
        too.  Pending calls fail with :class:`ConnectionClosed`.  Idempotent."""
        self._closing()
        self._closed = True
        connecting = self._connecting
        if connecting is not None:  # abort a handshake in progress: its caller gets an error
            connecting.close()
        with self._conn_lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self: _C) -> _C:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the handshake said ------------------------------------------------------------

    @property
    def _info(self) -> Ready:
        if self._ready is None:
            self._connection()
        assert self._ready is not None
        return self._ready

    # -- operations -------------------------------------------------------------------------

    def _live(self) -> Pump:
        return self._connection()

    def _run(self, timeout: float | None, op: Operation[_V],
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, timeout)`` on the live connection and wait for its value."""
        conn = self._conn  # :meth:`_connection`'s first look, inlined (one frame less a call)
        if conn is None or conn.closed:
            conn = self._connection()
        return conn.call(op, self._timeout if timeout is None else timeout, on_progress,
                         on_status)

    def _offer_url(self, elicitation: UrlElicitation) -> str | None:
        if elicitation.elicitation_id is not None:  # asked again: an old completion is stale
            self._elicitations.offered(elicitation.elicitation_id)
        handler = self._handlers.url_elicitation
        if handler is None:
            return None
        action = handler(elicitation.with_server(self.label))
        if inspect.isawaitable(action):
            close = getattr(action, "close", None)
            if close is not None:
                close()  # never awaited: no "coroutine was never awaited" warning
            raise LocalProtocolError("the threads binding cannot await an async "
                                     "on_url_elicitation handler; pass a plain function")
        return str(url_elicitation_result(action)["action"])

    def _elicitations_done(self, ids: list[str], timeout: float) -> bool:
        done = self._elicitations
        deadline = time.monotonic() + timeout
        for elicitation_id in ids:
            while not done.is_done(elicitation_id):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                event = threading.Event()
                done.watch([elicitation_id], event)
                try:
                    event.wait(left)
                finally:
                    done.unwatch([elicitation_id], event)
        return True


class Client(StdioOptions, ClientBase):
    """A blocking MCP client for one stdio server.  Create it with :func:`connect_stdio`.

    Thread-safe.  If the server dies, the calls in flight fail with :class:`ServerExited`
    (exit code and stderr tail) and the next call starts the server again and redoes the
    handshake; a call is never replayed.
    """

    __module__ = HOME

    def _new_connection(self) -> Pump:
        return StdioConnection(self)

    @property
    def pid(self) -> int | None:
        """The server process id (None before the first connection)."""
        conn = self._conn
        return conn.proc.pid if isinstance(conn, StdioConnection) else None


class HttpClient(HttpOptions, ClientBase):
    """A blocking MCP client for one Streamable HTTP endpoint.  Create it with
    :func:`connect_http`.  Same methods as the stdio :class:`Client`."""

    __module__ = HOME

    def _new_connection(self) -> Pump:
        return HttpConnection(self)

    def _auth_status(self) -> AuthStatus | None:
        conn = self._conn
        return conn.auth_status() if isinstance(conn, HttpConnection) else None

    def reauthorize(self, scope: str | None = None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too); the next calls
        wait for it.  Raises :class:`LocalProtocolError` without ``auth=``."""
        self._need_auth()
        conn = self._connection()
        assert isinstance(conn, HttpConnection)
        conn.reauthorize(scope)


STDIO_DOC = """A client for the stdio server started by ``command``; use it in a ``with`` block.

    The server starts (and the handshake runs) when the ``with`` block is entered or at the
    first call.  ``timeout`` (seconds) bounds the handshake and is each call's default total
    deadline.  ``protocol_version`` pins one version instead of offering the newest and
    accepting any of :data:`mcp_proto.HANDSHAKE_VERSIONS` (``ValueError`` for an unknown one).
    Declaring ``on_sampling``, ``on_elicitation`` or ``roots`` declares the matching client
    capability.  ``label`` names the server in log records, traces and errors (default: the
    program's name); ``on_stderr(line)`` gets each line the server writes to its stderr and
    ``on_trace(direction, message)`` each JSON-RPC message (``"send"`` / ``"recv"``), both
    with the ``env`` values redacted; the same go to the ``logging`` loggers
    ``mcp_proto_io.stderr`` and ``mcp_proto_io.wire`` (with ``.server_log`` and
    ``.lifecycle``: silent until configured).  See :class:`Client` for the errors.
    """

HTTP_DOC = """A client for the Streamable HTTP endpoint ``url``; use it in a ``with`` block.

    The era is chosen per origin as on stdio (a modern POST first, then the handshake era).
    ``headers`` go on every request; ``bearer_token`` becomes ``Authorization: Bearer``.
    ``auth`` runs MCP authorization (:class:`OAuth`, :class:`ClientCredentials`,
    :class:`JwtBearer`, :class:`EnterpriseManaged`): a 401 holds the call, the flow gets a
    token, and the call is sent again; failures raise an :class:`AuthorizationError`
    subclass naming the step that failed.
    Credentials in the URL are refused (:class:`LocalProtocolError`); redirects are not
    followed.  TLS verifies certificates against the system's CAs, or ``ca_file``, or your
    ``ssl_context``.  ``label`` (default: the URL's host and port) and ``on_trace`` as for
    :func:`connect_stdio`, with the header values and the token redacted.  An HTTP error
    status fails with one line (status, reason, the URL without secrets, the transport
    tried).  Same methods and errors as :func:`connect_stdio`, plus
    :class:`SessionExpired` when the server forgot a handshake-era session (the call is not
    replayed; the next call starts a new session).
    """

connect_stdio = connector(Client, "connect_stdio", STDIO_DOC, HOME)
connect_http = connector(HttpClient, "connect_http", HTTP_DOC, HOME)
