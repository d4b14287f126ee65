"""Blocking MCP client: the sans-IO core driven by threads.

::

    from mcp_proto_io.threads import connect_stdio

    with connect_stdio(["mcp-server-time"]) as client:
        tools = client.list_tools()
        result = client.call_tool("get_current_time", {"timezone": "Etc/UTC"})

Every method is thread-safe; calls from many threads are pipelined on one connection.  Each
connection runs three threads: the stdout reader (feeds the core), the service thread (writes
what the reader and timers produced, fires the core's deadlines) and the stderr reader (keeps
the last 8 KiB).  Callers write their own requests.  No protocol decision is made here.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

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
)
from ._era import DEFAULT_ERA_MEMORY, EraMemory, ProbeKilledServer, stdio_key
from ._face_sync import ClientFace
from ._fds import wait_fd
from ._handlers import (
    Handler,
    Handlers,
    NotificationCallback,
    ProgressCallback,
    RootsSource,
    StatusCallback,
)
from ._lazy import lazy_names
from ._process import StderrTail, argv_of, spawn, stop_process_tree
from ._tuning import (
    BIG_READ_SIZE,
    CONNECT_TIMEOUT,
    DEFAULT_CLIENT_INFO,
    DELETE_TIMEOUT,
    MAX_HTTP_EXCHANGES,
    MAX_IDLE_CONNECTIONS,
    PROCESS_POLL_INTERVAL,
    READ_SIZE,
    STDERR_SETTLE,
    STDOUT_SETTLE,
)

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from mcp_proto import AuthEvent, AuthExchange, AuthResponse, AuthStatus
    from mcp_proto._http import HttpExchange, HttpTarget

    from ._host_threads import Host, connect_config
    from .auth import (
        ClientCredentials,
        EnterpriseManaged,
        FileTokenStore,
        HeadlessRedirect,
        JwtBearer,
        LoopbackRedirect,
        MemoryTokenStore,
        OAuth,
        PasteRedirect,
    )
else:  # the same names, imported when first used (PEP 562): a client-only program needs neither
    __getattr__, __dir__ = lazy_names(__name__, "._host_threads")

__all__ = [
    "Client",
    "ClientCredentials",
    "EnterpriseManaged",
    "FileTokenStore",
    "HeadlessRedirect",
    "Host",
    "HttpClient",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "PasteRedirect",
    "connect_config",
    "connect_http",
    "connect_stdio",
]

#: Threads that run the host's sampling / elicitation / roots handlers per connection: they
#: may block on a user, and must never block the reader.
HANDLER_WORKERS = 4

#: Longest wait for the server's stdin to accept bytes before deadlines are checked again.
WRITE_POLL = 0.05




_C = TypeVar("_C", bound="_ClientBase")
_V = TypeVar("_V")  # the value type of an operation (its handle says it)


class _Waiter:
    """A one-shot result slot a caller blocks on (cheaper than a Future)."""

    __slots__ = ("_lock", "error", "on_progress", "on_status", "value")

    def __init__(self, on_progress: ProgressCallback | None = None,
                 on_status: StatusCallback | None = None) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()
        self.value: Any = None
        self.error: MCPError | None = None
        self.on_progress = on_progress
        self.on_status = on_status

    def set(self, value: Any, error: MCPError | None) -> None:
        self.value = value
        self.error = error
        self._lock.release()

    def wait(self) -> Any:
        self._lock.acquire()
        if self.error is not None:
            raise self.error
        return self.value


class _Pump:
    """What every threads connection does: the session under one lock, a one-shot waiter per
    call, events dispatched outside the lock, host handlers on a small pool, deadlines fired.
    Subclasses move the bytes: :meth:`_queue_output_locked` collects what the session wants
    sent (under the lock), :meth:`_flush` sends it (outside)."""

    def __init__(self, client: _ClientBase) -> None:
        self.client = client
        self.session = ClientSession(client._client_info,
                                     capabilities=client._handlers.capabilities(),
                                     versions=client._versions, limits=client._limits)
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.waiters: dict[RequestHandle[Any], _Waiter] = {}
        self.closed = False
        self.armed: float | None = None  # the deadline the service thread sleeps towards
        self.exit_error: MCPError | None = None
        self.ready = False  # Ready was dispatched
        self._executor: ThreadPoolExecutor | None = None

    def _queue_output_locked(self) -> None:
        raise NotImplementedError

    def _flush(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """End the connection and its threads; pending calls fail.  Idempotent."""
        raise NotImplementedError

    def opening_over(self) -> None:
        """The opening ended (Ready or failed): what only the era choice needed can go."""

    def _service(self) -> None:
        """The service thread: fires deadlines (and whatever the subclass's loop does)."""
        try:
            self._service_loop()
        except BaseException as exc:
            self._crashed(exc)
            raise

    def _service_loop(self) -> None:
        raise NotImplementedError

    def _started(self, handle: RequestHandle[Any]) -> None:
        """Called under the lock with the handle of each call this thread starts."""

    def _on_callback_thread(self) -> bool:
        """Whether this thread runs callbacks that only it can complete (a call from it would
        wait for itself)."""
        return False

    def notify(self, send: Callable[[ClientSession], None]) -> None:
        """Send a notification built by ``send(session)``."""
        with self.lock:
            send(self.session)
            self._queue_output_locked()
        self._flush()

    def start(self, op: Callable[[float], RequestHandle[Any]],
              on_progress: ProgressCallback | None = None,
              on_status: StatusCallback | None = None) -> _Waiter:
        if self._on_callback_thread():
            raise LocalProtocolError(
                "a call from on_progress / on_notification would wait for the thread that runs "
                "that callback; make the call from another thread")
        waiter = _Waiter(on_progress, on_status)
        with self.lock:
            if self.closed:
                raise self._ended()
            handle = op(time.monotonic())
            self._started(handle)
            self.waiters[handle] = waiter
            self._queue_output_locked()
            deadline = self.session.next_deadline()
            if deadline is not None and (self.armed is None or deadline < self.armed):
                self.cond.notify()
            # Some operations end at once (a list for a capability the server lacks).
            events = self._drain_locked()
        if events:
            self._dispatch(events)
        self._flush()
        return waiter

    def call(self, op: Callable[[float], RequestHandle[_V]],
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        waiter = self.start(op, on_progress, on_status)
        try:
            value: _V = waiter.wait()  # the Completed value of a RequestHandle[_V]
            return value
        except KeyboardInterrupt:
            self._cancel_waiter(waiter, "interrupted")
            raise

    def _ended(self) -> MCPError:
        """What a call on this ended connection raises: nothing was sent.  For a Host's
        client after its handshake, :class:`NotSent` (the Host routes the call again); the
        opening itself fails with the error the run ended with."""
        error = self.exit_error or self.session.closed_error \
            or ConnectionClosed("the connection is closed")
        if self.client.single_run and self.ready:
            return NotSent("the server's run ended", error)
        return error

    def _cancel_waiter(self, waiter: _Waiter, reason: str) -> None:
        with self.lock:
            for handle, w in list(self.waiters.items()):
                if w is waiter:
                    try:
                        self.session.cancel(handle, reason)
                    except LocalProtocolError:  # the handshake cannot be cancelled
                        pass
                    self._drain_locked()
            self._queue_output_locked()
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
        self._dispatch(events)
        for waiter in stranded:
            waiter.set(None, error)

    def _drain_locked(self) -> list[tuple[Event, _Waiter | None]]:
        """Take the core's events, pairing each outcome with its waiter (under the lock)."""
        out: list[tuple[Event, _Waiter | None]] = []
        session = self.session
        waiters = self.waiters
        while (event := session.next_event()) is not None:
            t = type(event)
            if t is Completed or t is Failed or t is Ready:
                out.append((event, waiters.pop(event.handle, None)))  # type: ignore[union-attr]
            elif t is Progress or t is TaskStatus:
                out.append((event, waiters.get(event.handle)))  # type: ignore[union-attr]
            else:
                if t is Closed:
                    self.closed = True
                out.append((event, None))
        return out

    def _dispatch(self, events: list[tuple[Event, _Waiter | None]]) -> None:
        client = self.client
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
            elif client._on_notification is not None and (self.ready or t is not Closed):
                # A connection that never became Ready (a failed probe the client recovers
                # from, a handshake that failed and raised) ends without telling the host.
                self._callback(client._on_notification, event)

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
                # of this module's import, and most clients never get a server request.
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


class _Connection(_Pump):
    """One server process, one core session, three threads."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.client: Client = client
        self.queue: list[bytes] = []  # output waiting for the write lock, under self.lock
        self.wlock = threading.Lock()
        self.stderr = StderrTail()
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

    def _on_callback_thread(self) -> bool:
        return threading.current_thread() is self.threads[0]

    def _queue_output_locked(self) -> None:
        data = self.session.data_to_send()
        if data:
            self.queue.append(data)

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
        while True:
            view = self.partial
            if view is None:
                with self.lock:
                    if not self.queue:
                        return True
                    chunks = self.queue
                    self.queue = []
                view = memoryview(chunks[0] if len(chunks) == 1 else b"".join(chunks))
            try:
                while view:
                    n = os.write(self.stdin_fd, view)
                    self.written += n
                    view = view[n:]
            except BlockingIOError:
                self.partial = view
                return False
            except OSError:
                # The server closed its stdin (it is exiting): the reader sees EOF and fails
                # the pending requests with the exit code.
                with self.lock:
                    self.queue.clear()
            self.partial = None

    # -- reader thread ----------------------------------------------------------------------

    def _read_stdout(self) -> None:
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
        while True:
            try:
                data = read(fd, size)
            except OSError:
                data = b""
            if not data:
                break
            size = BIG_READ_SIZE if len(data) >= READ_SIZE else READ_SIZE
            with self.lock:
                session.receive_data(data, now=monotonic())
                out = session.data_to_send()
                if out:
                    self.queue.append(out)
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
        error = ServerExited(code, self.stderr.text())
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
                return
            if not data:
                return
            self.stderr.add(data)


class _ClientBase(ClientFace):
    """The blocking client API, whatever carries it (stdio or HTTP).  Thread-safe.  A dead
    connection is rebuilt on the next call (a call is never replayed).  The operations are
    :class:`ClientFace`'s (generated from the async face); this class connects and runs them."""

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
        self._conn: _Pump | None = None
        self._connecting: _Pump | None = None  # published so close() can abort it
        self._conn_lock = threading.Lock()
        self._closed = False
        self._ready: Ready | None = None
        #: True: the first connection is the only one; once it ends every call raises its
        #: error instead of starting the server again (the Host decides when to restart).
        self.single_run = False

    def _new_connection(self) -> _Pump:
        raise NotImplementedError

    # -- connection management --------------------------------------------------------------

    def _connection(self) -> _Pump:
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        with self._conn_lock:
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
            self._conn = None
            try:
                conn, ready = self._open(era, discovered, subscriptions)
            except ProbeKilledServer:
                # V-23: a handshake-era server that exits on any request before initialize.
                conn, ready = self._open("legacy", None, subscriptions)
            self._era_memory.opened(self._key, self._pinned_era, ready, conn.session)
            self._ready = ready
            self._conn = conn
            return conn

    def _open(self, era: str, discovered: Discovered | None,
              subscriptions: frozenset[str]) -> tuple[_Pump, Ready]:
        conn = self._new_connection()
        self._connecting = conn
        try:
            if self._closed:  # close() ran while the process started
                raise ConnectionClosed("the client is closed")
            ready: Ready = conn.call(lambda now: conn.session.start(
                now=now, timeout=self._timeout, era=era, discovered=discovered,
                subscriptions=subscriptions))
        except ConnectionClosed as exc:
            conn.close()
            if conn.session.probe_killed_server and era != "legacy":
                raise ProbeKilledServer(str(exc)) from exc
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

    def _live(self) -> _Pump:
        return self._connection()

    def _run(self, timeout: float | None,
             op: Callable[[ClientSession, float, float], RequestHandle[_V]],
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, timeout)`` on the live connection and wait for its value."""
        c = self._connection()
        total = self._timeout if timeout is None else timeout
        return c.call(lambda now: op(c.session, now, total), on_progress, on_status)


class Client(_ClientBase):
    """A blocking MCP client for one stdio server.  Create it with :func:`connect_stdio`.

    Thread-safe.  If the server dies, the calls in flight fail with :class:`ServerExited`
    (exit code and stderr tail) and the next call starts the server again and redoes the
    handshake; a call is never replayed.
    """

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

    def _new_connection(self) -> _Pump:
        return _Connection(self)


    @property
    def pid(self) -> int | None:
        """The server process id (None before the first connection)."""
        conn = self._conn
        return conn.proc.pid if isinstance(conn, _Connection) else None


def connect_stdio(command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                  cwd: str | os.PathLike[str] | None = None, timeout: float = 60.0,
                  client_info: Implementation | None = None, limits: Limits | None = None,
                  protocol_version: str | None = None,
                  on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                  roots: RootsSource | None = None,
                  on_notification: NotificationCallback | None = None,
                  era_memory: EraMemory | None = None) -> Client:
    """A client for the stdio server started by ``command``; use it in a ``with`` block.

    The server starts (and the handshake runs) when the ``with`` block is entered or at the
    first call.  ``timeout`` (seconds) bounds the handshake and is each call's default total
    deadline.  ``protocol_version`` pins one version instead of offering the newest and
    accepting any of :data:`mcp_proto.HANDSHAKE_VERSIONS` (``ValueError`` for an unknown one).
    Declaring ``on_sampling``, ``on_elicitation`` or ``roots`` declares the matching client
    capability.  See :class:`Client` for the errors.
    """
    return Client(command, env=env, cwd=cwd, timeout=timeout, client_info=client_info,
                  limits=limits, protocol_version=protocol_version,
                  on_sampling=on_sampling, on_elicitation=on_elicitation,
                  roots=roots, on_notification=on_notification, era_memory=era_memory)



# -- Streamable HTTP ----------------------------------------------------------------------------


class _Pool:
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


class _HttpConnection(_Pump):
    """One Streamable HTTP endpoint: the core's exchanges run on a small worker pool over
    keep-alive connections; a service thread fires the deadlines."""

    def __init__(self, client: HttpClient) -> None:
        super().__init__(client)
        setup = client._auth_setup
        self.auth = setup
        from mcp_proto._http import StreamableHttp  # noqa: PLC0415 - stdio clients never load it

        self.http = StreamableHttp(self.session, client._url, headers=client._headers,
                                   bearer_token=client._bearer_token,
                                   auth=None if setup is None else setup.new_flow())
        self.outgoing: list[HttpExchange] = []  # under self.lock
        self.auth_outgoing: list[AuthExchange] = []  # under self.lock
        self.auth_events: list[AuthEvent] = []  # under self.lock
        self.aborts: list[int] = []  # under self.lock
        self.sockets: dict[int, socket.socket] = {}  # running exchanges, under self.lock
        self.pool = _Pool(self.http.url, client._ssl_context)
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

    def start(self, op: Callable[[float], RequestHandle[Any]],
              on_progress: ProgressCallback | None = None,
              on_status: StatusCallback | None = None) -> _Waiter:
        # The caller runs its own exchange (it would only wait for a worker to do it): no
        # thread hand-off on the way out nor on the way back.
        self._local.mine = None
        try:
            return super().start(op, on_progress, on_status)
        finally:
            self._local.mine = None

    def _started(self, handle: RequestHandle[Any]) -> None:
        self._local.mine = handle.id

    def _flush(self) -> None:
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
                ax, flow.address_allowed, cast("HttpClient", self.client)._ssl_context)
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
        redirect = setup.redirect
        url: str | None = None
        error: AuthorizationError | str | None = None
        if redirect is None:
            error = AuthorizationRequired(NO_REDIRECT)
        elif is_async_redirect(redirect):
            error = AuthorizationError("the threads binding cannot await an async redirect "
                                       "handler; pass a plain function")
        else:
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


class HttpClient(_ClientBase):
    """A blocking MCP client for one Streamable HTTP endpoint.  Create it with
    :func:`connect_http`.  Same methods as the stdio :class:`Client`."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, auth: Any = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None,
                 ssl_context: ssl.SSLContext | None = None,
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
            ssl_context = ssl.create_default_context(cafile=os.fspath(ca_file))
        self._ssl_context = ssl_context  # None: the system's CAs, verification on

    def _new_connection(self) -> _Pump:
        return _HttpConnection(self)

    @property
    def auth_status(self) -> AuthStatus | None:
        """What authorization holds now (issuer, scopes, expiry; never the token), or None
        without ``auth=`` or before the first connection."""
        conn = self._conn
        if not isinstance(conn, _HttpConnection) or conn.http.auth is None:
            return None
        with conn.lock:
            return conn.http.auth.status()

    def reauthorize(self, scope: str | None = None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too); the next calls
        wait for it.  Raises :class:`LocalProtocolError` without ``auth=``."""
        if self._auth_setup is None:
            raise LocalProtocolError("reauthorize() needs a client created with auth=")
        conn = self._connection()
        assert isinstance(conn, _HttpConnection) and conn.http.auth is not None
        with conn.lock:
            conn.http.auth.reauthorize(time.monotonic(), scope)
            conn._queue_output_locked()
        conn._flush()


def connect_http(url: str, *, headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, auth: Any = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 ca_file: str | os.PathLike[str] | None = None) -> HttpClient:
    """A client for the Streamable HTTP endpoint ``url``; use it in a ``with`` block.

    The era is chosen per origin as on stdio (a modern POST first, then the handshake era).
    ``headers`` go on every request; ``bearer_token`` becomes ``Authorization: Bearer``.
    ``auth`` runs MCP authorization (:class:`OAuth`, :class:`ClientCredentials`,
    :class:`JwtBearer`, :class:`EnterpriseManaged`): a 401 holds the call, the flow gets a
    token, and the call is sent again; failures raise an :class:`AuthorizationError`
    subclass naming the step that failed.
    Credentials in the URL are refused (:class:`LocalProtocolError`); redirects are not
    followed.  TLS verifies certificates against the system's CAs, or ``ca_file``, or your
    ``ssl_context``.  Same methods and errors as :func:`connect_stdio`, plus
    :class:`SessionExpired` when the server forgot a handshake-era session (the call is not
    replayed; the next call starts a new session).
    """
    return HttpClient(url, headers=headers, bearer_token=bearer_token, auth=auth,
                      timeout=timeout,
                      client_info=client_info, limits=limits,
                      protocol_version=protocol_version, on_sampling=on_sampling,
                      on_elicitation=on_elicitation, roots=roots,
                      on_notification=on_notification, era_memory=era_memory,
                      ssl_context=ssl_context, ca_file=ca_file)
