"""What every runtime's Host shares: how a :class:`ServerSpec` becomes a client's arguments,
how a failure is summarized for a status, how a change of state is logged, and the host's
callback types.  No I/O here, and no decision about states or names: those are
:class:`mcp_proto.host.HostCore`'s.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from mcp_proto import (
    LOG_LEVELS,
    CallToolResult,
    Event,
    Implementation,
    Limits,
    NotSent,
    Redactor,
    ServerExited,
    Tool,
)
from mcp_proto.host import (
    DEFAULT_MAX_SERVERS,
    DEFAULT_RESTART,
    META_TOOLS,
    ApprovalPolicy,
    ApprovalRequest,
    Budget,
    HostConfig,
    HostCore,
    InvalidArguments,
    InvalidOutput,
    MetaToolError,
    NamePolicy,
    OAuthSettings,
    RestartPolicy,
    ResultStore,
    ServerEvent,
    ServerSpec,
    StartMode,
    ToolDenied,
    Validation,
    as_policy,
    as_validation,
    denied_result,
    invalid_result,
    meta_result,
    oauth_settings,
    redact_url,
)

from .._handlers import RootsSource, UrlElicitationHandler
from .._logs import LIFECYCLE
from ..auth import OAuth
from ..auth._store import TokenStore
from ._config_files import AskInput, load_config

if TYPE_CHECKING:
    from .._otel import Instrumentation

__all__ = [
    "MEMORY_PREFIX",
    "REROUTE_PAUSE",
    "SERVER_NAME_ATTRIBUTE",
    "TRIAL",
    "ApprovalCallback",
    "ConnectConfig",
    "HostHandler",
    "HostNotificationCallback",
    "HostStderrCallback",
    "HostTraceCallback",
    "HostOptions",
    "LIFECYCLE",
    "Run",
    "ServerEventCallback",
    "client_arguments",
    "failure",
    "host_instrumentation",
    "with_memory",
    "log_refused_level",
    "memory_server",
    "host_connector",
    "coerce_arguments",
    "log_event",
    "load_source",
    "server_auth",
    "spec_redactor",
    "meta_message",
    "meta_raw",
    "meta_servers",
    "meta_tools_listing",
    "meta_policy",
    "meta_public_name",
    "refused_result",
]

ApprovalCallback = Callable[[ApprovalRequest], Any]
"""The ask step of an approval: takes the request, answers ``"allow"`` / ``"deny"`` or
True / False (or an awaitable of that, in the async bindings)."""
HostHandler = Callable[[str, dict[str, Any]], Any]
"""A host-wide server-request handler: takes the server's name and the request's params;
returns the result object (or an awaitable of it, in the async bindings)."""
HostNotificationCallback = Callable[[str, Event], Any]
"""Takes the server's name and the event (``ListChanged``, ``LogMessage``, ``Closed`` ...)."""
ServerEventCallback = Callable[[ServerEvent], Any]
HostStderrCallback = Callable[[str, str], Any]
"""Takes the server's name and one line of its stderr (redacted by the client)."""
HostTraceCallback = Callable[[str, str, dict[str, Any]], Any]
"""Takes the server's name, ``"send"`` or ``"recv"`` and the JSON-RPC message (redacted)."""
_H = TypeVar("_H")
_C = TypeVar("_C")

#: The attribute naming the server on every span of a Host's client (the conventions have
#: none: this library's namespace).
SERVER_NAME_ATTRIBUTE = "mcp_proto.server.name"

#: The incarnation of a run the core does not know yet (update_server's trial).
TRIAL = -1

#: Seconds a caller or the supervisor waits at least before looking again (a start due now
#: but not begun, a turn that failed): never a busy loop.
REROUTE_PAUSE = 0.01

# LIFECYCLE (from ``_logs``, which puts the NullHandler on ``mcp_proto_io``: the Host is
# silent by default even before its first client is built) is where the Host says a server
# changed state (INFO; ``backoff`` and ``failed`` WARNING with the error); each record
# carries ``mcp_server`` (the server's name).


def log_event(event: ServerEvent, instrumentation: Instrumentation | None = None) -> None:
    """Log one change of a server's state on :data:`LIFECYCLE` (and, instrumented, record
    it as a span event: :func:`mcp_proto_io._otel.server_event`)."""
    if instrumentation is not None:
        from .._otel import server_event  # noqa: PLC0415 - loaded with the instrumentation

        server_event(instrumentation, event)
    trouble = event.state in ("backoff", "failed")
    level = logging.WARNING if trouble else logging.INFO
    if not LIFECYCLE.isEnabledFor(level):
        return
    text = f"server {event.server!r}: {event.previous} -> {event.state}"
    if trouble and event.error:
        text += f" ({event.error})"
    if event.state == "backoff" and event.next_start_at is not None:
        text += f"; next start in {max(0.0, event.next_start_at - event.at):.2f} s"
    LIFECYCLE.log(level, text, extra={"mcp_server": event.server})


def log_refused_level(server: str, level: str, exc: BaseException,
                      redactor: Redactor | None = None) -> None:
    """Log on :data:`LIFECYCLE` that ``server`` refused ``logging/setLevel`` to ``level``
    (the error redacted as :func:`failure` does)."""
    LIFECYCLE.warning("server %r refused log level %r: %s", server, level,
                      failure(exc, redactor)[0], extra={"mcp_server": server})


def spec_redactor(spec: ServerSpec) -> Redactor:
    """The secrets of ``spec`` (its env and header values): what its client redacts, known
    also when no client could be built (a bad URL)."""
    return Redactor.of(env=spec.env, headers=spec.headers)


class Run(Generic[_C]):
    """One run of one server: its client and the core's incarnation number for it (what the
    client reports is about this run only, however late it arrives)."""

    __slots__ = ("changed", "client", "ended", "incarnation", "name")

    def __init__(self, name: str, incarnation: int = TRIAL) -> None:
        self.name = name
        self.incarnation = incarnation
        self.client: _C | None = None
        # what a trial run (update_server, before it takes the old run's place) reported:
        # the core knows nothing of it yet, so it is kept here and replayed at the swap
        self.changed = False
        self.ended: BaseException | None = None
_H_co = TypeVar("_H_co", covariant=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class HostOptions:
    """Everything ``connect_config`` was given besides the config."""

    names: NamePolicy
    restart: RestartPolicy | None
    timeout: float
    max_servers: int
    start: StartMode = "eager"
    on_server_event: ServerEventCallback | None = None
    on_sampling: HostHandler | None = None
    on_elicitation: HostHandler | None = None
    roots: RootsSource | None = None
    on_notification: HostNotificationCallback | None = None
    client_info: Implementation | None = None
    limits: Limits | None = None
    auth_redirect: Any = None
    """The redirect handler for servers that need a user's authorization (None: only
    stored tokens, from ``mcp-proto login``; without one such a server fails to start with
    ``AuthorizationRequired``)."""
    auth_store: TokenStore | None = None
    """Where tokens are kept (None: the file store under the user's config directory)."""
    on_stderr: HostStderrCallback | None = None
    on_trace: HostTraceCallback | None = None
    log_level: str | None = None
    """The ``logging/setLevel`` each server with the logging capability is sent as it
    starts (None: each keeps its own)."""
    approval: ApprovalPolicy | None = None
    """Who may call what (None: every call is allowed, as without a policy)."""
    validation: Validation | None = None
    """What is checked against the tools' schemas (None: nothing)."""
    budget: Budget | None = None
    """The size a result may take on the model's paths (``provider=``, meta-tools) when the
    call names none (None: no budget)."""
    result_store: ResultStore | None = None
    """Where cut results are kept for ``mcp_read_result`` (None: a default store)."""
    on_url_elicitation: UrlElicitationHandler | None = None
    """URL-mode elicitations of every server (each names its server); None: not declared."""
    retry_url_elicitation: bool = False
    """Send a call again after -32042 once the user accepted and the server completed."""
    task_receiver: bool = False
    """Each server's client runs the server's task-augmented requests as tasks."""
    instrumentation: Instrumentation | None = None
    """OpenTelemetry for every server's client (each span names its server) and the
    servers' changes of state (None: off, nothing imported)."""
    memory: Mapping[str, Any] | None = None
    """In-memory servers by name (``connect_config(memory=...)``): their clients are
    ``connect_memory`` ones."""
    record: str | None = None
    """A folder: each server's transcript is written to ``<folder>/<name>.jsonl`` (a run
    after a restart to ``<name>-2.jsonl``, ``-3`` ...: a run never overwrites another)."""
    recorded: dict[str, int] = field(default_factory=dict, compare=False)
    """The runs recorded per server so far (under ``record``)."""


def server_auth(spec: ServerSpec, options: HostOptions) -> OAuth | None:
    """The ``auth=`` of an HTTP server: OAuth with the host's store and redirect handler,
    and the entry's own OAuth block (client id, secret, scopes, issuer); None for stdio, for
    an entry that sends its own ``Authorization`` header, or one that turned OAuth off."""
    if spec.transport == "stdio" or any(k.lower() == "authorization" for k in spec.headers):
        return None
    settings = oauth_settings(spec) or OAuthSettings()
    if not settings.enabled:
        return None
    secret = settings.client_secret
    if secret is None and settings.client_secret_env_var:
        secret = os.environ.get(settings.client_secret_env_var) or None
    name = options.client_info.name if options.client_info is not None else "mcp-proto"
    return OAuth(client_name=name, redirect=options.auth_redirect,
                 interactive=options.auth_redirect is not None, store=options.auth_store,
                 client_id=settings.client_id, client_secret=secret, scope=settings.scope,
                 issuer=settings.issuer, client_metadata_url=settings.client_metadata_url)


def load_source(source: object, *, dialect: str | None, env: Mapping[str, str] | None,
                inputs: Mapping[str, str] | None, ask: AskInput | None = None) -> HostConfig:
    """A :class:`HostConfig` from a path, JSON text, a mapping or a HostConfig.  Raises
    :class:`ConfigError` (every problem at once, also for an unreadable file)."""
    if isinstance(source, HostConfig):
        return source
    return load_config(source, dialect=dialect, env=env, inputs=inputs,  # type: ignore[arg-type]
                       ask=ask)


def client_arguments(spec: ServerSpec, options: HostOptions,
                     on_notification: Callable[[Event], Any]) -> dict[str, Any]:
    """Keyword arguments for ``connect_stdio(spec.command, ...)`` or ``connect_http(spec.url,
    ...)``: the handshake is bounded by the startup timeout, each call passes its own."""
    startup = spec.startup_timeout if spec.startup_timeout is not None else options.timeout
    kwargs: dict[str, Any] = {
        "timeout": startup,
        "client_info": options.client_info,
        "limits": options.limits,
        "roots": options.roots,
        "on_notification": on_notification,
        "label": spec.name,
    }
    if options.on_stderr is not None and spec.transport == "stdio":
        kwargs["on_stderr"] = functools.partial(options.on_stderr, spec.name)
    if options.on_trace is not None:
        kwargs["on_trace"] = functools.partial(options.on_trace, spec.name)
    if options.on_sampling is not None:
        kwargs["on_sampling"] = functools.partial(options.on_sampling, spec.name)
    if options.on_elicitation is not None:
        kwargs["on_elicitation"] = functools.partial(options.on_elicitation, spec.name)
    if options.on_url_elicitation is not None:
        kwargs["on_url_elicitation"] = options.on_url_elicitation
        kwargs["retry_url_elicitation"] = options.retry_url_elicitation
    if options.task_receiver:
        kwargs["task_receiver"] = True
    if options.instrumentation is not None:
        kwargs["instrument"] = options.instrumentation.with_attributes(
            **{SERVER_NAME_ATTRIBUTE: spec.name})
    if options.record is not None:
        runs = options.recorded[spec.name] = options.recorded.get(spec.name, 0) + 1
        suffix = "" if runs == 1 else f"-{runs}"
        kwargs["record"] = os.path.join(options.record, f"{spec.name}{suffix}.jsonl")
    if spec.transport == "stdio":
        kwargs["env"] = dict(spec.env) or None
        kwargs["cwd"] = spec.cwd
    else:
        kwargs["headers"] = dict(spec.headers) or None
        kwargs["auth"] = server_auth(spec, options)
    return kwargs


#: The command of a config entry served in memory: ``memory:NAME`` (``connect_config(memory=)``).
MEMORY_PREFIX = "memory:"


def with_memory(config: HostConfig, memory: Mapping[str, Any] | None) -> HostConfig:
    """``config`` with the in-memory servers: an entry whose command is ``memory:NAME``
    keeps its options, a server the config lacks is added.  Raises ``ValueError`` for a
    ``memory:NAME`` entry whose server was not given."""
    memory = memory or {}
    servers = dict(config.servers)
    for name, spec in servers.items():
        wanted = spec.command[0][len(MEMORY_PREFIX):] if spec.command and \
            spec.command[0].startswith(MEMORY_PREFIX) else None
        if wanted is not None and wanted not in memory:
            raise ValueError(f"server {name!r} names {spec.command[0]!r}, but no such "
                             "in-memory server was given (connect_config(memory=...))")
    for name in memory:
        known = servers.get(name)
        command = (f"{MEMORY_PREFIX}{name}",)
        servers[name] = ServerSpec(name=name, command=command) if known is None \
            else known.edited(transport="stdio", command=command)
    return replace(config, servers=servers) if memory else config


def memory_server(spec: ServerSpec, options: HostOptions) -> Any:
    """The in-memory server ``spec``'s ``memory:NAME`` command names (None: not one)."""
    command = spec.command[0] if spec.command else ""
    if options.memory and command.startswith(MEMORY_PREFIX):
        return options.memory.get(command[len(MEMORY_PREFIX):])
    return None


def host_instrumentation(instrument: object, tracer_provider: Any, meter_provider: Any,
                         capture_content: bool) -> Instrumentation | None:
    """``connect_config``'s telemetry options as one :class:`Instrumentation` (None: off,
    and ``opentelemetry`` never imported).  Raises as
    :func:`mcp_proto_io._otel.instrumentation_of`."""
    if instrument is False and tracer_provider is None and meter_provider is None \
            and not capture_content:
        return None
    from .._otel import instrumentation_of  # noqa: PLC0415 - only when instrumented

    return instrumentation_of(instrument, tracer_provider, meter_provider, capture_content)


def failure(exc: BaseException, redactor: Redactor | None = None) -> tuple[str, str]:
    """``(error, stderr_tail)`` for a status or a log record: the error's type and message,
    with URL query values and user-info redacted and ``redactor``'s secrets (the server's
    env and header values: a server's error may echo one), and the server's stderr (its
    client redacted it).  A :class:`NotSent` says what ended the run."""
    if isinstance(exc, NotSent) and exc.reason is not None:
        exc = exc.reason
    tail = exc.stderr_tail if isinstance(exc, ServerExited) else ""
    if redactor is not None:
        tail = redactor.text(tail)
    return redact_url(f"{type(exc).__name__}: {exc}", redactor), tail


class ConnectConfig(Protocol[_H_co]):
    """The type of each runtime's ``connect_config`` (so a type checker sees its
    parameters; the implementation is :func:`host_connector`'s)."""

    def __call__(self, source: object, *, dialect: str | None = None,
                 env: Mapping[str, str] | None = None,
                 inputs: Mapping[str, str] | None = None, names: NamePolicy | None = None,
                 restart: RestartPolicy | None = DEFAULT_RESTART, timeout: float = 60.0,
                 on_server_event: ServerEventCallback | None = None,
                 on_sampling: HostHandler | None = None,
                 on_elicitation: HostHandler | None = None, roots: RootsSource | None = None,
                 on_notification: HostNotificationCallback | None = None,
                 max_servers: int = DEFAULT_MAX_SERVERS,
                 client_info: Implementation | None = None,
                 limits: Limits | None = None, auth_redirect: Any = None,
                 auth_store: TokenStore | None = None, start: StartMode = "eager",
                 on_stderr: HostStderrCallback | None = None,
                 on_trace: HostTraceCallback | None = None,
                 ask: AskInput | None = None,
                 log_level: str | None = None,
                 approval: ApprovalPolicy | ApprovalCallback | None = None,
                 validate: Validation | bool | None = None,
                 budget: Budget | None = None,
                 result_store: ResultStore | None = None,
                 on_url_elicitation: UrlElicitationHandler | None = None,
                 retry_url_elicitation: bool = False,
                 task_receiver: bool = False,
                 instrument: bool | Instrumentation = False,
                 tracer_provider: Any = None, meter_provider: Any = None,
                 capture_content: bool = False,
                 memory: Mapping[str, Any] | None = None,
                 record: str | os.PathLike[str] | None = None) -> _H_co: ...


def host_connector(cls: Callable[[HostConfig, HostOptions], _H]) -> ConnectConfig[_H]:
    """The ``connect_config`` of the runtime whose Host class is ``cls`` (one docstring
    for all three)."""

    def connect_config(source: object, *, dialect: str | None = None,
                       env: Mapping[str, str] | None = None,
                       inputs: Mapping[str, str] | None = None,
                       names: NamePolicy | None = None,
                       restart: RestartPolicy | None = DEFAULT_RESTART, timeout: float = 60.0,
                       on_server_event: ServerEventCallback | None = None,
                       on_sampling: HostHandler | None = None,
                       on_elicitation: HostHandler | None = None,
                       roots: RootsSource | None = None,
                       on_notification: HostNotificationCallback | None = None,
                       max_servers: int = DEFAULT_MAX_SERVERS,
                       client_info: Implementation | None = None,
                       limits: Limits | None = None, auth_redirect: Any = None,
                       auth_store: TokenStore | None = None, start: StartMode = "eager",
                       on_stderr: HostStderrCallback | None = None,
                       on_trace: HostTraceCallback | None = None,
                       ask: AskInput | None = None,
                       log_level: str | None = None,
                       approval: ApprovalPolicy | ApprovalCallback | None = None,
                       validate: Validation | bool | None = None,
                       budget: Budget | None = None,
                       result_store: ResultStore | None = None,
                       on_url_elicitation: UrlElicitationHandler | None = None,
                       retry_url_elicitation: bool = False,
                       task_receiver: bool = False,
                       instrument: bool | Instrumentation = False,
                       tracer_provider: Any = None, meter_provider: Any = None,
                       capture_content: bool = False,
                       memory: Mapping[str, Any] | None = None,
                       record: str | os.PathLike[str] | None = None) -> _H:
        """A Host for every server of a config; use it in a ``with`` block (``async with``
        on asyncio and trio).

        ``source`` is a path, JSON text, a mapping or a :class:`~mcp_proto.host.HostConfig`
        (``dialect``, ``env`` (default ``os.environ``) and ``inputs`` as for
        :func:`mcp_proto.host.parse_config`).  ``names`` is the public naming policy,
        ``restart`` the policy for servers that exit (None: never restart automatically),
        ``timeout`` the default seconds of a handshake and of a call, and the bound of the
        whole open (servers still starting then keep starting; calls wait for them).
        ``start="eager"`` starts every enabled server as the host opens; ``"lazy"`` starts
        none: a server starts at its first use (a call to one of its tools, a read of its
        resource, a prompt, :meth:`use_server`), a call to a name no listing has starts only
        the servers that may own it, and listing tools, resources or prompts starts them all
        (concurrently) and waits for them.  Handlers take the
        server's name first: ``on_sampling(server, params)``, ``on_notification(server,
        event)`` (plain or async functions on asyncio and trio), ``on_stderr(server, line)``
        (each stderr line of a stdio server), ``on_trace(server, direction, message)`` (each
        JSON-RPC message, ``"send"`` or ``"recv"``, credentials redacted); ``on_server_event
        (ServerEvent)`` sees every change of state (also logged on
        ``mcp_proto_io.lifecycle``).  HTTP servers that answer 401 are
        authorized with the tokens in ``auth_store`` (default: what ``mcp-proto login``
        stored) and, given an ``auth_redirect`` handler, by asking the user; an entry's
        OAuth block (Gemini ``oauth``, Cursor ``auth``...) gives the client id and scopes.
        Raises
        :class:`~mcp_proto.host.ConfigError` for a bad config (every problem at once) and
        ``ValueError`` for an unknown ``start``.  ``ask(InputSpec)`` gives the value of a
        VS Code input that neither ``inputs`` nor its ``MCP_PROTO_INPUT_<ID>`` variable gave
        (None: its default, else a :class:`~mcp_proto.host.ConfigError` naming it).
        ``log_level`` (an RFC 5424 name: ``debug`` ... ``emergency``) is sent to each server
        with the logging capability as it starts, before its first call (its
        ``notifications/message`` then reach ``on_notification`` and the
        ``mcp_proto_io.server_log`` logger); a server that refuses it keeps its own
        (logged on ``mcp_proto_io.lifecycle``); ``ValueError`` for another name.

        Between the host and the model: ``approval`` (an
        :class:`~mcp_proto.host.ApprovalPolicy`, or a plain callable that is its ``ask``
        step alone: it gets an :class:`~mcp_proto.host.ApprovalRequest` and answers
        ``"allow"`` / ``"deny"`` or True / False, plain or async on asyncio and trio)
        decides each tool call before anything is sent (None: all allowed); ``validate``
        (True, or a :class:`~mcp_proto.host.Validation`) checks arguments against each
        tool's ``inputSchema`` before the request and ``structuredContent`` against its
        ``outputSchema`` after (needs ``pip install 'mcp-proto[validate]'`` for the default
        validator); ``budget`` (a :class:`~mcp_proto.host.Budget`) bounds each result on
        the model's paths (``call_tool(provider=...)``, :meth:`call_meta_tool`), the whole
        result kept in ``result_store`` for ``mcp_read_result``.

        Protocol currency: ``on_url_elicitation(UrlElicitation)`` (its ``server`` is the
        server's name) answers URL-mode elicitations of every server with ``"accept"`` /
        ``"decline"`` / ``"cancel"`` (the library never opens a URL); with
        ``retry_url_elicitation`` a call that got -32042 is sent again once the user accepted
        and the server completed.  ``task_receiver=True`` lets 2025-11-25 servers run their
        sampling and elicitation requests as tasks the client keeps (section 9.1).

        Telemetry: ``instrument=True`` (or an
        :class:`~mcp_proto_io._otel.Instrumentation`, or a ``tracer_provider`` /
        ``meter_provider``) records every server's requests as OpenTelemetry spans and
        histograms by the MCP conventions, each span with ``mcp_proto.server.name``, and
        each server's changes of state (start, exit, restart) as span events;
        ``capture_content=True`` adds tool arguments and results (redacted).  Needs
        ``pip install 'mcp-proto[otel]'`` (``ImportError`` without it).

        Testing: ``memory={"name": MemoryServer(...)}`` serves those servers in this
        process (an entry of the config whose command is ``memory:NAME`` takes its options
        from the config; one the config lacks is added); ``record`` (a folder, made if
        needed) writes each server's transcript to ``<record>/<name>.jsonl`` for
        ``connect_replay``.  ``ValueError`` for a ``memory:NAME`` command with no such
        server given.
        """
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}; use one of "
                             f"{', '.join(LOG_LEVELS)}")
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget or None, not {type(budget).__name__}")
        if result_store is not None and not isinstance(result_store, ResultStore):
            raise TypeError("result_store must be a ResultStore or None")
        config = with_memory(load_source(source, dialect=dialect, env=env, inputs=inputs,
                                         ask=ask), memory)
        if record is not None:
            os.makedirs(record, exist_ok=True)
        options = HostOptions(names=meta_policy(names or NamePolicy()), restart=restart,
                              timeout=timeout,
                              max_servers=max_servers, on_server_event=on_server_event,
                              on_sampling=on_sampling, on_elicitation=on_elicitation,
                              roots=roots, on_notification=on_notification,
                              client_info=client_info, limits=limits,
                              auth_redirect=auth_redirect, auth_store=auth_store,
                              start=start, on_stderr=on_stderr, on_trace=on_trace,
                              log_level=log_level, approval=as_policy(approval),
                              validation=as_validation(validate), budget=budget,
                              result_store=result_store,
                              on_url_elicitation=on_url_elicitation,
                              retry_url_elicitation=retry_url_elicitation,
                              task_receiver=bool(task_receiver),
                              instrumentation=host_instrumentation(
                                  instrument, tracer_provider, meter_provider,
                                  capture_content),
                              memory=dict(memory) if memory else None,
                              record=None if record is None else os.fspath(record))
        return cls(config, options)

    return connect_config


def meta_public_name(core: HostCore, server: str, tool: str) -> str:
    """The public name of ``server``'s ``tool`` for ``mcp_call``; :class:`MetaToolError`
    naming close matches among that server's tools when it has none by that name (or the
    filter hides it)."""
    names = core.tool_names()
    try:
        return names.public(server, tool)
    except KeyError:
        own = [t.name for t in core.server_tools(server)] if server in core.names() else []
        close = difflib.get_close_matches(tool, own, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise MetaToolError(f"server {server!r} has no tool {tool!r}{hint}") from None


def meta_message(exc: BaseException, redactor: Redactor | None = None) -> str:
    """What a model is told when a meta-tool failed: the error, URL values and
    ``redactor``'s secrets redacted, and no stderr (a server's stderr is for its operator,
    not for the model)."""
    if isinstance(exc, NotSent) and exc.reason is not None:
        exc = exc.reason  # its message would carry the reason's stderr lines
    if isinstance(exc, ServerExited):
        return f"ServerExited: the server exited with code {exc.exit_code}"
    return redact_url(f"{type(exc).__name__}: {exc}", redactor)


def coerce_arguments(arguments: object) -> dict[str, Any] | None:
    """A tool call's arguments as an object: a mapping, None, or JSON text of an object
    (what OpenAI hands over).  ``ValueError`` for text that is not a JSON object, and
    ``TypeError`` for anything else: nothing is sent then."""
    if arguments is None or isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str | bytes):
        try:
            value = json.loads(arguments)
        except ValueError:
            raise ValueError("the tool call's arguments are not valid JSON") from None
        if not isinstance(value, dict):
            raise ValueError("the tool call's arguments must be a JSON object")
        return value
    raise TypeError(f"the tool call's arguments must be an object, not "
                    f"{type(arguments).__name__}")


def meta_policy(names: NamePolicy) -> NamePolicy:
    """``names`` with the meta-tools' names reserved, so no server's tool can take one."""
    return replace(names, reserved=frozenset(names.reserved) | frozenset(META_TOOLS))


# -- the meta-tools' answers, the same in every runtime ------------------------------------------


def meta_servers(core: HostCore, now: float) -> CallToolResult:
    """``mcp_list`` without a server: every configured server, nothing started."""
    return meta_result({"servers": [
        {"server": n, "transport": st.transport, "state": st.state,
         "enabled": core.spec(n).enabled} for n, st in core.status(now).items()]})


def meta_tools_listing(core: HostCore, server: str, tools: list[Tool]) -> CallToolResult:
    """``mcp_list`` with a server: the tools its filter lets through, as listed just now."""
    return meta_result({"server": server, "tools": [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for t in tools if core.allows(server, t.name)]})


def meta_raw(core: HostCore, server: str, method: str, raw: dict[str, Any]) -> CallToolResult:
    """``mcp_request``'s answer; a ``tools/list`` keeps hidden what the filters hide."""
    if method == "tools/list" and isinstance(raw.get("tools"), list):
        raw = {**raw, "tools": [t for t in raw["tools"] if isinstance(t, dict)
                                and core.allows(server, str(t.get("name")))]}
    return meta_result(raw)


def refused_result(exc: ToolDenied | InvalidArguments | InvalidOutput) -> CallToolResult:
    """What the model reads when the host's policy stopped a call (a denial, arguments that
    fail the tool's schema: nothing was sent) or refused its output."""
    if isinstance(exc, ToolDenied):
        return denied_result(exc)
    return invalid_result(exc)
