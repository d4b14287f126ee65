"""What every client is, whatever runtime runs it (threads, asyncio or trio).

The options a client's constructor takes and checks (:class:`ClientOptions`, with
:class:`StdioOptions` and :class:`HttpOptions` for the two transports), the plan of each opening
(the era to start in, what to renew, what to remember once ready), what every connection holds
and what a call on an ended one raises (:class:`Connection`), the authorization user step's
outcome, and :func:`connector`.  Runtime-neutral: it imports the core, the shared helpers beside
it and ``auth._deferred``, never ``threading``, ``asyncio`` or ``trio``; the rooms ``_sync``
(threads) and ``_async`` (asyncio, trio) build their clients on it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from mcp_proto import (
    AuthorizationError,
    AuthorizationRequired,
    ClientSession,
    ConnectionClosed,
    Implementation,
    Limits,
    LocalProtocolError,
    MCPError,
    NotSent,
    Ready,
    Redactor,
    RequestHandle,
    ServerExited,
    TaskStore,
    accepted_versions,
    era_of,
)
from mcp_proto.session._modern import Discovered

from ._elicit import CompletedElicitations, receiver_store
from ._era import DEFAULT_ERA_MEMORY, EraMemory, ProbeKilledServer, stdio_key
from ._handlers import (
    Handler,
    Handlers,
    NotificationCallback,
    RootsSource,
    StderrCallback,
    TraceCallback,
    UrlElicitationHandler,
)
from ._process import argv_of
from ._tuning import DEFAULT_CLIENT_INFO
from .auth._deferred import NO_REDIRECT, AuthSetup, is_async_redirect

if TYPE_CHECKING:
    import ssl

    from mcp_proto import AuthStatus, Peer
    from mcp_proto.http._streamable import StreamableHttp

    from ._logs import Tracer
    from ._otel import Instrumentation
    from .auth._io import AuthSetup as Setup

__all__ = [
    "ClientOptions",
    "Connection",
    "HttpOptions",
    "Operation",
    "Plan",
    "StdioOptions",
    "connector",
    "legacy_plan",
    "opening",
    "probe_killed",
    "user_step",
]

_V = TypeVar("_V")  # the value type of an operation (its handle says it)
_P = ParamSpec("_P")
_K = TypeVar("_K")

LOG_INFO = 20  # logging.INFO and WARNING, without importing logging here
LOG_WARNING = 30

#: What every operation gives the core: the session, the time and the total timeout.
Operation = Callable[[ClientSession, float, float], RequestHandle[_V]]

#: How to open a connection: the era to start in, the remembered DiscoverResult and the
#: subscriptions to renew (:meth:`EraMemory.plan`).
Plan = tuple[str, Discovered | None, frozenset[str]]


class ClientOptions:
    """What every client is made of, checked when it is made: the versions it offers (or the
    one it pins), its era memory, the default timeout, the host's handlers and callback, and
    what it lets the host see (its ``label``, ``on_stderr``, ``on_trace`` and the loggers,
    with the ``secrets`` redacted: ``_logs.Observer``).

    Raises ``ValueError`` for an unknown ``protocol_version`` or an empty ``label``, and
    ``TypeError`` for an ``on_stderr`` / ``on_trace`` that is not callable.  The runtime's
    client class adds how it connects (:meth:`_runtime_state`) and the transport's class
    what it connects to (:class:`StdioOptions`, :class:`HttpOptions`)."""

    def __init__(self, key: Hashable, *, timeout: float, client_info: Implementation | None,
                 limits: Limits | None, protocol_version: str | None,
                 on_sampling: Handler | None, on_elicitation: Handler | None,
                 roots: RootsSource | None, on_notification: NotificationCallback | None,
                 era_memory: EraMemory | None, label: str,
                 on_stderr: StderrCallback | None = None,
                 on_trace: TraceCallback | None = None,
                 secrets: Redactor | None = None,
                 on_url_elicitation: UrlElicitationHandler | None = None,
                 retry_url_elicitation: bool = False,
                 task_receiver: bool | TaskStore = False,
                 instrument: bool | Instrumentation = False, tracer_provider: Any = None,
                 meter_provider: Any = None, capture_content: bool = False) -> None:
        from ._logs import Observer  # noqa: PLC0415 - logging loads with the first client

        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string")
        for name, fn in (("on_stderr", on_stderr), ("on_trace", on_trace),
                         ("on_url_elicitation", on_url_elicitation)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable")
        self._observer = Observer(label, secrets or Redactor(), on_stderr, on_trace)
        self._versions = accepted_versions(protocol_version)
        self._pinned_era = None if protocol_version is None else era_of(protocol_version)
        self._era_memory = era_memory if era_memory is not None else DEFAULT_ERA_MEMORY
        self._key = key
        self._timeout = timeout
        self._client_info = client_info or DEFAULT_CLIENT_INFO
        self._limits = limits
        self._handlers = Handlers(on_sampling, on_elicitation, roots, on_url_elicitation,
                                  self._observer.label)
        self._retry_url_elicitation = bool(retry_url_elicitation)
        self._elicitations = CompletedElicitations()
        self._task_store = receiver_store(task_receiver)
        self._on_notification = on_notification
        self._instrumentation: Instrumentation | None = None
        if instrument is not False or tracer_provider is not None \
                or meter_provider is not None or capture_content:
            from ._otel import instrumentation_of  # noqa: PLC0415 - only when instrumented

            self._instrumentation = instrumentation_of(instrument, tracer_provider,
                                                       meter_provider, capture_content)
        self._closed = False
        self._ready: Ready | None = None
        #: True: the first connection is the only one; once it ends every call raises its
        #: error instead of starting the server again (the Host decides when to restart).
        self.single_run = False
        self._runtime_state()

    def _runtime_state(self) -> None:
        """Set what the runtime's client keeps of its own (its connection, its lock)."""

    def _record(self, path: str | os.PathLike[str], transport: str, target: str) -> None:
        """``record=PATH``: every message of every connection, written as a transcript."""
        from ._record import Recording  # noqa: PLC0415 - recording clients only

        self._observer.recording = Recording(path, transport=transport, target=target,
                                             client_info=self._client_info,
                                             redactor=self._observer.redactor)

    def _new_session(self) -> ClientSession:
        """The core's session for a new connection, with this client's options (watched
        for OpenTelemetry when instrumented)."""
        session = ClientSession(self._client_info, capabilities=self._handlers.capabilities(),
                                versions=self._versions, limits=self._limits,
                                task_receiver=self._task_store)
        instrumentation = self._instrumentation
        if instrumentation is not None:
            session.instrument(instrumentation.telemetry(self._peer(),
                                                         self._observer.redactor))
        return session

    def _peer(self) -> Peer:
        """What the conventions record of the connection (the transport's class says)."""
        raise NotImplementedError

    @property
    def instrumentation(self) -> Instrumentation | None:
        """What this client records with OpenTelemetry (``instrument=``), or None."""
        return self._instrumentation

    def _plan(self, ended: Connection | None) -> Plan:
        """How to open the next connection after ``ended`` (None for the first), which is
        closed now (an async caller then awaits its end).  Called under the client's connect
        lock.  Raises :class:`ConnectionClosed` once the client is closed (:class:`NotSent`
        for a Host's), and what the run ended with for a single-run client."""
        if self._closed:
            raise NotSent("the client is closed") if self.single_run \
                else ConnectionClosed("the client is closed")
        if ended is not None and self.single_run:
            # A host that supervises restarts itself: this client's one run is over.
            raise ended._ended()
        plan = self._era_memory.plan(self._key, self._pinned_era,
                                     None if ended is None else ended.session)
        if ended is not None:
            ended.close()
        return plan

    @property
    def label(self) -> str:
        """The name this client's log records, traces and errors carry (``label=``, by
        default the command's program name or the URL's host)."""
        return self._observer.label

    @property
    def task_store(self) -> TaskStore | None:
        """The tasks this client runs for the server (``task_receiver=``), or None."""
        return self._task_store

    def _opened(self, session: ClientSession, ready: Ready) -> None:
        """A connection became ready: remember what the server speaks, and what it said."""
        self._era_memory.opened(self._key, self._pinned_era, ready, session)
        self._ready = ready
        if self._observer.recording is not None:
            self._observer.recording.ready(ready.era, ready.protocol_version)
        info = ready.server_info
        self._observer.lifecycle(LOG_INFO, f"connected to {info.name} {info.version} "
                                           f"(protocol {ready.protocol_version}, {ready.era})")

    def _exited(self, exit_code: int | None, stderr_tail: str, *,
                closed: bool = False) -> ServerExited:
        """The error of this client's server's exit (its name given), logged on
        ``mcp_proto_io.lifecycle`` unless the connection was ``closed`` (the client stopped
        it).  ``stderr_tail`` is redacted already (``StderrTail.text``: redacted before it
        was cut, so no secret crossing the cut shows in part)."""
        observer = self._observer
        diverged = replay_failure(self)
        error: ServerExited = diverged if isinstance(diverged, ServerExited) \
            else ServerExited(exit_code, stderr_tail, server=observer.label)
        if observer.recording is not None and not closed:
            observer.recording.exit(exit_code, stderr_tail)
        if not closed:
            observer.lifecycle(LOG_WARNING, str(error))
        return error

    def _closing(self) -> None:
        """The host closed the client (logged once)."""
        if not self._closed:
            self._observer.lifecycle(LOG_INFO, "closed")
            if self._observer.recording is not None:
                self._observer.recording.close()


def replay_failure(client: ClientOptions) -> BaseException | None:
    """Why ``client``'s in-memory server ended, when it is not an ordinary exit: a replay
    that diverged (:meth:`~mcp_proto_io._memory.MemoryCommand.failure`); None otherwise."""
    failure = getattr(getattr(client, "_command", None), "failure", None)
    return failure() if failure is not None else None


def opening(plan: Plan) -> Operation[Ready]:
    """The operation that opens a session as ``plan`` says (the probe, or the handshake)."""
    era, discovered, subscriptions = plan
    return lambda s, now, total: s.start(now=now, timeout=total, era=era,
                                         discovered=discovered, subscriptions=subscriptions)


def probe_killed(conn: Connection, plan: Plan, exc: ConnectionClosed) -> ProbeKilledServer | None:
    """What to raise when an opening as ``plan`` ended with ``exc``: V-23's
    :class:`ProbeKilledServer` (start again in the handshake era) when the server exited on
    the era probe, else None (``exc`` itself)."""
    if replay_failure(conn.client) is not None:
        return None  # a replay that diverged: its error, never a second opening
    if conn.session.probe_killed_server and plan[0] != "legacy":
        return ProbeKilledServer(str(exc))
    return None


def legacy_plan(plan: Plan) -> Plan:
    """``plan`` in the handshake era (the server exited on the probe: V-23)."""
    return "legacy", None, plan[2]


class StdioOptions(ClientOptions):
    """What a stdio client adds: the command that starts its server, the extra environment
    and the working directory (together, the key its era is remembered by).  Raises
    ``ValueError`` for an empty command."""

    def __init__(self, command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None, label: str | None = None,
                 on_stderr: StderrCallback | None = None,
                 on_trace: TraceCallback | None = None,
                 on_url_elicitation: UrlElicitationHandler | None = None,
                 retry_url_elicitation: bool = False,
                 task_receiver: bool | TaskStore = False,
                 instrument: bool | Instrumentation = False, tracer_provider: Any = None,
                 meter_provider: Any = None, capture_content: bool = False,
                 record: str | os.PathLike[str] | None = None) -> None:
        argv = argv_of(command)
        super().__init__(stdio_key(argv, cwd, env), timeout=timeout,
                         client_info=client_info, limits=limits,
                         protocol_version=protocol_version, on_sampling=on_sampling,
                         on_elicitation=on_elicitation, roots=roots,
                         on_notification=on_notification, era_memory=era_memory,
                         label=(os.path.basename(argv[0]) or argv[0]) if label is None else label,
                         on_stderr=on_stderr, on_trace=on_trace,
                         secrets=Redactor.of(env=env), on_url_elicitation=on_url_elicitation,
                         retry_url_elicitation=retry_url_elicitation,
                         task_receiver=task_receiver, instrument=instrument,
                         tracer_provider=tracer_provider, meter_provider=meter_provider,
                         capture_content=capture_content)
        if record is not None:
            self._record(record, "stdio", " ".join(argv))
        self._command = command
        self._env = env
        self._cwd = cwd

    def _peer(self) -> Peer:
        from mcp_proto import Peer  # noqa: PLC0415 - instrumented clients only

        return Peer.stdio()


class HttpOptions(ClientOptions):
    """What an HTTP client adds: its endpoint, the headers of every request, a bearer token
    or an authorization setup (not both), and TLS.  Raises :class:`LocalProtocolError` for a
    bad URL, credentials in it, or both ``auth`` and ``bearer_token``."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, auth: Any = None, timeout: float = 60.0,
                 client_info: Implementation | None = None, limits: Limits | None = None,
                 protocol_version: str | None = None,
                 on_sampling: Handler | None = None, on_elicitation: Handler | None = None,
                 roots: RootsSource | None = None,
                 on_notification: NotificationCallback | None = None,
                 era_memory: EraMemory | None = None,
                 ssl_context: ssl.SSLContext | None = None,
                 ca_file: str | os.PathLike[str] | None = None, label: str | None = None,
                 on_trace: TraceCallback | None = None,
                 on_url_elicitation: UrlElicitationHandler | None = None,
                 retry_url_elicitation: bool = False,
                 task_receiver: bool | TaskStore = False,
                 instrument: bool | Instrumentation = False, tracer_provider: Any = None,
                 meter_provider: Any = None, capture_content: bool = False,
                 record: str | os.PathLike[str] | None = None) -> None:
        from mcp_proto.http._streamable import HttpTarget  # noqa: PLC0415 - stdio clients never load it

        target = HttpTarget.parse(url)  # raises LocalProtocolError for a bad URL
        super().__init__(("http", target.origin, target.target), timeout=timeout,
                         client_info=client_info, limits=limits,
                         protocol_version=protocol_version, on_sampling=on_sampling,
                         on_elicitation=on_elicitation, roots=roots,
                         on_notification=on_notification, era_memory=era_memory,
                         label=target.authority if label is None else label,
                         on_trace=on_trace,
                         secrets=Redactor.of(headers=headers, extra=[bearer_token]),
                         on_url_elicitation=on_url_elicitation,
                         retry_url_elicitation=retry_url_elicitation,
                         task_receiver=task_receiver, instrument=instrument,
                         tracer_provider=tracer_provider, meter_provider=meter_provider,
                         capture_content=capture_content)
        if record is not None:
            from mcp_proto import redact_url  # noqa: PLC0415 - recording clients only

            self._record(record, "http", redact_url(url))
        self._target = target
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

    def _peer(self) -> Peer:
        from mcp_proto import Peer  # noqa: PLC0415 - instrumented clients only

        return Peer.http(self._target.host, self._target.port)

    def _streamable_http(self, session: ClientSession, tracer: Tracer | None) -> StreamableHttp:
        """The core's Streamable HTTP machine for a new connection's ``session`` (with a new
        authorization flow when the client has ``auth=``), traced by the connection's
        ``tracer`` (None: not traced)."""
        from mcp_proto.http._streamable import StreamableHttp  # noqa: PLC0415 - stdio clients never load it

        setup = self._auth_setup
        http = StreamableHttp(session, self._url, headers=self._headers,
                              bearer_token=self._bearer_token,
                              auth=None if setup is None else setup.new_flow())
        if tracer is not None:  # decided at connect: untraced, no work per message
            http.trace = tracer.message
        return http

    @property
    def auth_status(self) -> AuthStatus | None:
        """What authorization holds now (issuer, scopes, expiry; never the token), or None
        without ``auth=`` or before the first connection."""
        return self._auth_status()

    def _auth_status(self) -> AuthStatus | None:
        raise NotImplementedError

    def _need_auth(self) -> None:
        """Raises :class:`LocalProtocolError` for a client made without ``auth=``."""
        if self._auth_setup is None:
            raise LocalProtocolError("reauthorize() needs a client created with auth=")


class Connection:
    """What every connection holds, whatever moves its bytes: the core's session for its
    client's options, whether it ended, and why."""

    def __init__(self, client: ClientOptions) -> None:
        self.client = client
        self.session = client._new_session()
        self.closed = False  # no new calls (the session ended, or close() ran)
        self.exit_error: MCPError | None = None
        self.ready = False  # Ready was dispatched
        self.tracer = client._observer.tracer()  # None: not traced (one check per message)

    def _ended(self) -> MCPError:
        """What a call on this ended connection raises: nothing was sent.  For a Host's
        client after its handshake, :class:`NotSent` (the Host routes the call again); the
        opening itself fails with the error the run ended with."""
        error = self.exit_error or self.session.closed_error \
            or ConnectionClosed("the connection is closed")
        if self.client.single_run and self.ready:
            return NotSent("the server's run ended", error)
        return error

    def close(self) -> None:
        """End the connection now; pending calls fail.  Idempotent."""
        raise NotImplementedError

    def opening_over(self) -> None:
        """The opening ended (Ready or failed): what only the era choice needed can go."""


def user_step(setup: Setup, *, can_await: bool) -> tuple[Callable[[str], Any] | None,
                                                          AuthorizationError | str | None]:
    """The host's redirect handler for the authorization's user step, or the error the step
    fails with: none configured, or an async one where nothing can await it (the handler's
    own failure is the caller's to add: :func:`redirect_failure`)."""
    redirect = setup.redirect
    if redirect is None:
        return None, AuthorizationRequired(NO_REDIRECT)
    if not can_await and is_async_redirect(redirect):
        return None, AuthorizationError("the threads binding cannot await an async redirect "
                                        "handler; pass a plain function")
    return redirect, None


def connector(cls: Callable[_P, _K], name: str, doc: str, module: str) -> Callable[_P, _K]:
    """``connect_stdio`` / ``connect_http`` of a runtime module: the client class's
    constructor under the name users know, with its exact signature, in its public
    ``module``."""

    def connect(*args: _P.args, **kwargs: _P.kwargs) -> _K:
        return cls(*args, **kwargs)

    connect.__name__ = connect.__qualname__ = name
    connect.__doc__ = doc
    connect.__module__ = module
    connect.__signature__ = inspect.signature(cls).replace(  # type: ignore[attr-defined]
        return_annotation=getattr(cls, "__name__", None))
    return connect
