"""The threads Streamable HTTP connection: the core's exchanges on keep-alive connections.

The caller runs its own request's exchange (no thread hand-off on the way out nor back); the
others run on a small worker pool, the authorization flow's requests and the user step on
daemon threads of their own, and a service thread fires the deadlines.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_proto import (
    AuthorizationError,
    ConnectionLost,
    MCPError,
    RedirectRequired,
    RequestHandle,
    SaveRecord,
)

from .._client import HttpOptions, Operation, user_step
from .._fds import wait_fd
from .._handlers import ProgressCallback, StatusCallback
from .._tuning import (
    BIG_READ_SIZE,
    CONNECT_TIMEOUT,
    DELETE_TIMEOUT,
    MAX_HTTP_EXCHANGES,
    MAX_IDLE_CONNECTIONS,
    READ_SIZE,
)
from ..auth._deferred import deliver_callback, redirect_failure, run_auth_exchange
from ._pump import Pump, Waiter

if TYPE_CHECKING:
    from mcp_proto import AuthEvent, AuthExchange, AuthResponse, AuthStatus
    from mcp_proto.http._streamable import HttpExchange, HttpTarget

__all__ = ["HttpConnection", "Pool"]


class Pool:
    """Keep-alive TCP/TLS connections to one origin (bounded)."""

    def __init__(self, target: HttpTarget, ssl_context: ssl.SSLContext | None) -> None:
        self.target = target
        self.ssl_context = ssl_context
        self.idle: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        self.observer: Callable[[str], None] | None = None
        """Told the peer address of each new connection (the authorization flow's rules
        depend on where the server really is)."""

    def acquire(self) -> socket.socket:
        """An idle connection still open, or a new one.  Raises ``OSError``."""
        while True:
            with self.lock:
                sock = self.idle.pop() if self.idle else None
            if sock is None:
                break
            try:  # a keep-alive connection the server closed reads as EOF at once
                readable = wait_fd(sock.fileno(), "read", 0)
            except (OSError, ValueError):
                readable = True
            if not readable:
                return sock
            sock.close()
        host = self.target.host.strip("[]")
        sock = socket.create_connection((host, self.target.port), timeout=CONNECT_TIMEOUT)
        try:
            if self.observer is not None:
                self.observer(str(sock.getpeername()[0]))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.target.scheme == "https":
                context = self.ssl_context or ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=host)
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return sock

    def release(self, sock: socket.socket) -> None:
        with self.lock:
            if not self.closed and len(self.idle) < MAX_IDLE_CONNECTIONS:
                self.idle.append(sock)
                return
        sock.close()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for sock in idle:
            sock.close()


class HttpConnection(Pump):
    """One Streamable HTTP endpoint: the core's exchanges run on a small worker pool over
    keep-alive connections; a service thread fires the deadlines."""

    def __init__(self, client: HttpOptions) -> None:
        super().__init__(client)
        self.client: HttpOptions = client
        setup = client._auth_setup
        self.auth = setup
        self.http = client._streamable_http(self.session, self.tracer)
        self.outgoing: list[HttpExchange] = []  # under self.lock
        self.auth_outgoing: list[AuthExchange] = []  # under self.lock
        self.auth_events: list[AuthEvent] = []  # under self.lock
        self.aborts: list[int] = []  # under self.lock
        self.sockets: dict[int, socket.socket] = {}  # running exchanges, under self.lock
        self.pool = Pool(self.http.url, client._ssl_context)
        if setup is not None:
            self.pool.observer = setup.observe_peer
        self._redirect_thread: threading.Thread | None = None
        self._local = threading.local()
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - HTTP only

        self.workers = ThreadPoolExecutor(MAX_HTTP_EXCHANGES, thread_name_prefix="mcp-proto-http")
        self._closing = False
        self.service = threading.Thread(target=self._service, name="mcp-proto-service",
                                        daemon=True)
        self.service.start()

    def _queue_output_locked(self) -> None:
        self.outgoing += self.http.exchanges_to_start()
        self.aborts += self.http.exchanges_to_abort()
        flow = self.http.auth
        if flow is not None:
            self.auth_outgoing += flow.exchanges_to_start()
            flow.exchanges_to_abort()  # each exchange ends by its own deadline
            while (event := flow.next_event()) is not None:
                self.auth_events.append(event)

    def start(self, op: Operation[Any], total: float,
              on_progress: ProgressCallback | None = None,
              on_status: StatusCallback | None = None, *, lead: bool = False) -> Waiter:
        # The caller runs its own exchange (it would only wait for a worker to do it): no
        # thread hand-off on the way out nor on the way back.
        self._local.mine = None
        try:
            return super().start(op, total, on_progress, on_status, lead=lead)
        finally:
            self._local.mine = None

    def _started(self, handle: RequestHandle[Any]) -> None:
        self._local.mine = handle.id

    def _flush(self, claimed: object = None) -> None:
        # (Nothing is claimed over HTTP: each exchange is a request of its own.)
        with self.lock:
            outgoing, self.outgoing = self.outgoing, []
            aborts, self.aborts = self.aborts, []
            doomed = [self.sockets.get(ex_id) for ex_id in aborts]
            auth_outgoing, self.auth_outgoing = self.auth_outgoing, []
            auth_events, self.auth_events = self.auth_events, []
        if auth_outgoing or auth_events:
            self._auth_work(auth_outgoing, auth_events)
        for sock in doomed:  # C-04: closing the stream is the cancellation
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        inline = None
        mine = getattr(self._local, "mine", None)
        if mine is not None:  # only the exchange of the call this thread started
            for ex in outgoing:
                if ex.method == "POST" and ex.request_id == mine:
                    inline = ex
                    outgoing.remove(ex)
                    break
        for ex in outgoing:
            try:
                self.workers.submit(self._run_on_worker, ex)
            except RuntimeError:  # closing: the session already failed the request
                pass
        if inline is not None:
            self._local.mine = None  # callbacks it runs start their exchanges on workers
            self._run(inline)

    def _auth_work(self, exchanges: list[AuthExchange], events: list[AuthEvent]) -> None:
        """The authorization flow's requests and events: its exchanges and the user step
        run on the workers, records are saved here (the store is quick and local)."""
        setup = self.auth
        assert setup is not None
        for event in events:
            if isinstance(event, SaveRecord):
                try:
                    setup.save(event.key, event.record, event.serial)
                except AuthorizationError as exc:
                    self._auth_note(f"tokens not saved: {exc}")
            elif isinstance(event, RedirectRequired):
                stale = self._redirect_thread
                if stale is not None and stale.is_alive():
                    setup.close()  # an earlier step's handler still waits: let it go
                # Its own daemon thread: the user may take minutes, and close() must not
                # wait for them (the flow's deadline fails the waiting calls anyway).
                thread = threading.Thread(target=self._redirect, args=(event,), daemon=True,
                                          name="mcp-proto-redirect")
                self._redirect_thread = thread
                thread.start()
        for ax in exchanges:
            # A daemon thread, not a worker: close() must not wait for a slow authorization
            # server, and a refresh answered after close() is still saved (_run_auth).
            threading.Thread(target=self._run_auth, args=(ax,), daemon=True,
                             name="mcp-proto-auth").start()

    def _auth_note(self, text: str) -> None:
        print(f"mcp-proto: {text}", file=sys.stderr)

    def _run_auth(self, ax: AuthExchange) -> None:
        flow = self.http.auth
        assert flow is not None
        setup = self.auth
        assert setup is not None
        with self.lock:
            withdrawn = setup.reload_for_refresh(flow)
            if withdrawn:
                self._queue_output_locked()
                events = self._drain_locked()
        if withdrawn:  # another process refreshed already: its tokens are in use
            self._dispatch(events)
            self._flush()
            return
        try:
            result: AuthResponse | str = run_auth_exchange(
                ax, flow.address_allowed, self.client._ssl_context)
        except Exception as exc:  # a bug must fail the waiting calls, not strand them
            result = f"the exchange failed: {exc!r}"
        with self.lock:
            flow.receive_exchange_result(ax.id, result, now=time.monotonic())
            self._queue_output_locked()
            events = self._drain_locked()
            self.cond.notify()  # the deadlines moved
        self._dispatch(events)
        self._flush()

    def _redirect(self, event: RedirectRequired) -> None:
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        redirect, error = user_step(setup, can_await=False)
        url: str | None = None
        if redirect is not None:
            try:
                url = str(redirect(event.url))
            except Exception as exc:  # the host's handler: its failure fails the waiters
                error = redirect_failure(exc)
        with self.lock:
            deliver_callback(flow, url, error, time.monotonic(), event.attempt)
            self._queue_output_locked()
            events = self._drain_locked()
            self.cond.notify()
        self._dispatch(events)
        self._flush()

    def _run_on_worker(self, ex: HttpExchange) -> None:
        self._local.worker = True
        self._run(ex)

    def _run(self, ex: HttpExchange) -> None:
        try:
            sock = self.pool.acquire()
        except Exception as exc:  # OSError, TLS, a bad host name: the call fails, typed
            self._lost(ex, ConnectionLost(f"{ex.rpc_method}: cannot connect to "
                                          f"{self.http.url.authority}: {exc!r}"))
            return
        with self.lock:
            if self._closing:  # close() ran while this connection was being opened
                sock.close()
                return
            self.sockets[ex.id] = sock
        # Reads go into a buffer used again and again (this thread's; a larger one for this
        # exchange once a large answer streams in): a 10 MiB answer then costs one buffer,
        # not a new allocation and its page faults per read.  The core copies what it keeps
        # (h11 buffers the bytes), so the next read may overwrite them.
        buf = getattr(self._local, "read_buffer", None)  # this thread's, from its last read
        if buf is None:
            buf = self._local.read_buffer = memoryview(bytearray(READ_SIZE))
        try:
            sock.sendall(ex.data)
            while not ex.done:
                n = sock.recv_into(buf)
                data = buf[:n]
                if n == len(buf) == READ_SIZE:
                    # A large answer streaming in: read in bigger pieces (as on stdio).
                    buf = memoryview(bytearray(BIG_READ_SIZE))
                with self.lock:
                    self.http.receive_data(ex.id, data, now=time.monotonic())
                    self._queue_output_locked()
                    events = self._drain_locked()
                    deadline = self.http.next_deadline()  # a resumption may be due soon
                    if deadline is not None and (self.armed is None or deadline < self.armed):
                        self.cond.notify()
                if events:
                    self._dispatch(events)
                self._flush()
                if not data:
                    break
        except OSError as exc:
            if not ex.done:
                self._lost(ex, ConnectionLost(f"{ex.rpc_method}: connection lost: {exc}"))
        finally:
            with self.lock:
                self.sockets.pop(ex.id, None)
            if ex.reusable and not ex.aborted:
                self.pool.release(sock)
            else:
                sock.close()

    def _lost(self, ex: HttpExchange, error: MCPError) -> None:
        with self.lock:
            self.http.exchange_failed(ex, error, now=time.monotonic())
            self._queue_output_locked()
            events = self._drain_locked()
        self._dispatch(events)
        self._flush()

    def _service_loop(self) -> None:
        http = self.http
        while True:
            with self.lock:
                if self.closed:
                    return
                deadline = http.next_deadline()
                now = time.monotonic()
                if deadline is None or deadline > now:
                    self.armed = deadline
                    self.cond.wait(None if deadline is None else deadline - now)
                    self.armed = None
                http.handle_timeout(time.monotonic())
                self._queue_output_locked()
                events = self._drain_locked()
            if events:
                self._dispatch(events)
            self._flush()

    def close(self) -> None:
        with self.lock:
            if self._closing:
                return
            self._closing = True
            delete = self.http.close_exchange()
            self.session.close()
            events = self._drain_locked()
            self.closed = True
            self.cond.notify_all()
            sockets = list(self.sockets.values())
        self._dispatch(events)
        if delete is not None:  # L-11: end the session politely, briefly
            with contextlib.suppress(OSError):
                sock = self.pool.acquire()
                sock.settimeout(DELETE_TIMEOUT)
                try:
                    sock.sendall(delete.data)
                    sock.recv(READ_SIZE)
                finally:
                    sock.close()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        # From one of the workers (a callback called close()), do not wait for itself.
        self.workers.shutdown(wait=not getattr(self._local, "worker", False),
                              cancel_futures=True)
        self.pool.close()
        if self.auth is not None:
            self.auth.close()  # the loopback listener, if one waits
        if self.service is not threading.current_thread():
            self.service.join(5.0)
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def auth_status(self) -> AuthStatus | None:
        """What the authorization flow holds now (None without ``auth=``)."""
        flow = self.http.auth
        if flow is None:
            return None
        with self.lock:
            return flow.status()

    def reauthorize(self, scope: str | None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too)."""
        flow = self.http.auth
        assert flow is not None  # the client has auth=
        with self.lock:
            flow.reauthorize(time.monotonic(), scope)
            self._queue_output_locked()
        self._flush()
