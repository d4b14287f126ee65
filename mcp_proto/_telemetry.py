"""What OpenTelemetry sees of a session, by the MCP semantic conventions (status Development,
open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md``): decided here, pure.

A :class:`Telemetry` sits in a session (:meth:`ClientSession.instrument`) and watches what
passes: every request the session sends (the first request of an operation starts a CLIENT
span; its pages, retries, input rounds and task polls are events of that span), every
request the server sends (a SERVER span until the answer goes out), every event the session
emits (an operation's :class:`Completed` / :class:`Failed` / :class:`Ready` ends its span),
and what the HTTP transport does behind a request (a 401 answered by authorization, a
dropped stream resumed: events of the request's span).  It decides each span's name and
attributes, the outcome (``error.type``, ``rpc.response.status_code``, the status
description), the duration the two histograms take, and gives them to a :class:`SpanSink`,
which the bindings implement with ``opentelemetry-api``; the sink returns the trace context
(``traceparent``, ``tracestate``, ``baggage``) that goes into the request's ``params._meta``
unprefixed (SEP-414).  No OpenTelemetry import here: the core stays h11 only.

``error.type`` values this library reports (the convention asks for the list):

==========================  =====================================================
``-32602`` (any code)       the server answered with that JSON-RPC error code
``tool_error``              ``tools/call`` answered with ``isError: true``
``timeout``                 :class:`RequestTimeout` (total or idle deadline)
``cancelled``               :class:`RequestCancelled`, or the server withdrew its request
``server_exited``           :class:`ServerExited` (the stdio server's process ended)
``session_expired``         :class:`SessionExpired` (HTTP 404 on the session)
``connection_closed``       :class:`ConnectionClosed` / :class:`ConnectionLost`
``authorization_error``     an :class:`AuthorizationError` (OAuth failed or refused)
``http_error``              :class:`HttpError` (an HTTP status with no JSON-RPC error)
``protocol_error``          :class:`RemoteProtocolError` (the server broke the protocol)
``local_protocol_error``    :class:`LocalProtocolError` (the call itself was invalid)
``_OTHER``                  anything else
==========================  =====================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ._errors import (
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    ServerExited,
    SessionExpired,
)
from ._events import (
    Closed,
    Completed,
    Event,
    Failed,
    Ready,
    RequestHandle,
    ServerRequest,
    ServerRequestCancelled,
)
from ._redact import Redactor, redact_url

if TYPE_CHECKING:
    from ._types import RequestId

__all__ = [
    "CLIENT_OPERATION_DURATION",
    "CLIENT_SESSION_DURATION",
    "DURATION_BUCKETS",
    "ERROR_TYPES",
    "MAX_CAPTURED_CHARS",
    "MAX_LIVE_SPANS",
    "SERVER_OPERATION_DURATION",
    "TRACE_CONTEXT_KEYS",
    "Peer",
    "SessionEnd",
    "SpanEnd",
    "SpanEvent",
    "SpanSink",
    "SpanStart",
    "Telemetry",
    "error_type",
    "session_digest",
    "span_name",
]

#: The three metrics (histograms, seconds) the conventions give a client.
CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
CLIENT_SESSION_DURATION = "mcp.client.session.duration"
#: A request the server sends is received by the client: its duration as the receiver saw it.
SERVER_OPERATION_DURATION = "mcp.server.operation.duration"

#: The histograms' explicit bucket boundaries, widened to 300 s (semantic-conventions#2083:
#: tool calls take minutes).
DURATION_BUCKETS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60,
                                       120, 300)

#: The ``params._meta`` keys of trace context, written unprefixed (SEP-414).
TRACE_CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")

#: Characters of captured arguments or results (``capture_content``) kept per attribute:
#: exporters cap attribute sizes, and one 16 MiB result must not become a 16 MiB span.
MAX_CAPTURED_CHARS = 32 * 1024

#: Spans open at once in one session: past this, a new operation gets no span (counted in
#: :attr:`Telemetry.dropped`).  Well above any real number in flight; a bound so that an
#: operation whose end is never seen cannot grow memory without end.
MAX_LIVE_SPANS = 4096

#: The error classes' ``error.type`` values, most specific first (see the module's table).
ERROR_TYPES: tuple[tuple[type[MCPError], str], ...] = (
    (RequestTimeout, "timeout"),
    (RequestCancelled, "cancelled"),
    (ServerExited, "server_exited"),
    (SessionExpired, "session_expired"),
    (ConnectionClosed, "connection_closed"),
    (LocalProtocolError, "local_protocol_error"),
)

#: Methods whose span name carries a target, and the attribute naming it.
_TARGETS = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
#: Methods with a resource URI parameter (``mcp.resource.uri``).
_RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe",
                               "resources/unsubscribe"})

AttributeValue = str | bool | int | float
Attributes = dict[str, AttributeValue]
SpanKey = tuple[str, object]  # ("client", handle id) or ("server", the server's request id)


@dataclass(frozen=True, slots=True)
class Peer:
    """What the conventions record of the connection: ``network.transport`` (``pipe`` for
    stdio, ``tcp`` for HTTP), ``server.address`` / ``server.port`` and
    ``network.protocol.name`` / ``.version`` when there is a network."""

    transport: str
    address: str | None = None
    port: int | None = None
    protocol_name: str | None = None
    protocol_version: str | None = None

    @classmethod
    def stdio(cls) -> Peer:
        return cls("pipe")

    @classmethod
    def http(cls, host: str, port: int) -> Peer:
        return cls("tcp", host, port, "http", "1.1")

    def attributes(self) -> Attributes:
        attrs: Attributes = {"network.transport": self.transport}
        if self.address is not None:
            attrs["server.address"] = self.address
            if self.port is not None:
                attrs["server.port"] = self.port
        if self.protocol_name is not None:
            attrs["network.protocol.name"] = self.protocol_name
            if self.protocol_version is not None:
                attrs["network.protocol.version"] = self.protocol_version
        return attrs


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanStart:
    """A span begins.  ``kind`` is ``"client"`` (a request the session sent) or ``"server"``
    (one the server sent); ``carrier`` is the trace context found in a server request's
    ``params._meta`` (the remote parent), empty otherwise; without one, ``parent`` names
    the span of the only operation in flight (the call the server's request belongs to,
    as far as one can tell), None for a root; ``tool_span`` says the span may be a GenAI
    ``execute_tool`` span already open (the sink adds the attributes to it)."""

    key: SpanKey
    name: str
    kind: str
    attributes: Attributes
    now: float
    carrier: Mapping[str, str]
    parent: SpanKey | None = None
    tool_span: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanEvent:
    """Something happened within a span: another request of the operation
    (``mcp_proto.page``, ``mcp_proto.retry``, ``mcp_proto.input_round``, ``mcp_proto.request``
    for a task poll), a cancellation sent, an authorization retry or a stream resumed by the
    transport.  Named in this library's namespace: the conventions define no events."""

    key: SpanKey
    name: str
    attributes: Attributes
    now: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanEnd:
    """A span ends.  ``attributes`` are added at the end (the outcome's, the protocol
    version learnt from the handshake, a captured result); ``error_type`` set means status
    ERROR with ``description``; ``metric`` is the histogram ``duration`` (seconds) goes to,
    with ``metric_attributes``; ``name``, when set, is the span's name now (an opening
    that began with the era probe and ended with ``initialize`` is named ``initialize``)."""

    key: SpanKey
    attributes: Attributes
    error_type: str | None
    description: str | None
    now: float
    duration: float
    metric: str
    metric_attributes: Attributes
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEnd:
    """The session ended after ``duration`` seconds (from its opening request to its end):
    for ``mcp.client.session.duration``."""

    duration: float
    attributes: Attributes
    now: float


class SpanSink(Protocol):
    """What carries the decisions out (the bindings, with ``opentelemetry-api``).  Each
    method must return quickly and must not call the session; whatever it raises is the
    binding's bug (the session does not catch it)."""

    def start(self, span: SpanStart) -> Mapping[str, str] | None:
        """Begin a span; return the trace context to put in the request's ``_meta``."""

    def event(self, event: SpanEvent) -> None:
        """Add an event to an open span."""

    def end(self, end: SpanEnd) -> None:
        """End a span and record its duration."""

    def session_ended(self, end: SessionEnd) -> None:
        """Record the session's duration."""


class _Live:
    """One open span: its method, when it began, the attributes its metric takes, the
    carrier of its context (every later request of the operation sends it too) and the
    request ids sent under it."""

    __slots__ = ("carrier", "method", "metric_attributes", "rids", "start")

    def __init__(self, method: str, start: float, metric_attributes: Attributes,
                 carrier: Mapping[str, str] | None) -> None:
        self.method = method
        self.start = start
        self.metric_attributes = metric_attributes
        self.carrier = carrier
        self.rids: list[object] = []


def span_name(method: str, params: Mapping[str, Any] | None, *,
              resource_target: bool = False) -> str:
    """``{mcp.method.name} {target}``: the target is the tool's or the prompt's name (the
    resource URI only with ``resource_target``: it is high-cardinality); the method alone
    when there is none."""
    if params:
        if method in _TARGETS:
            target = params.get("name")
            if type(target) is str and target:
                return f"{method} {target}"
        elif resource_target and method in _RESOURCE_METHODS:
            uri = params.get("uri")
            if type(uri) is str and uri:
                return f"{method} {redact_url(uri) if '?' in uri or '@' in uri else uri}"
    return method


def session_digest(session_id: str) -> str:
    """``mcp.session.id`` for an HTTP ``Mcp-Session-Id``: the first 32 hex digits of its
    SHA-256.  Not the id itself: on most servers the id alone lets whoever holds it act in
    the session, and a trace store is not a credential store; the digest still tells the
    sessions apart and joins a session's spans (a server can record the same digest)."""
    import hashlib  # noqa: PLC0415 - only instrumented HTTP sessions need it

    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def error_type(error: BaseException) -> str:
    """``error.type`` for an operation that failed with ``error`` (the module's table)."""
    if isinstance(error, RpcError):
        return str(error.code)
    for cls, value in ERROR_TYPES:
        if isinstance(error, cls):
            return value
    name = type(error).__name__
    if name == "HttpError":  # mcp_proto.http's (not imported: stdio sessions never load it)
        return "http_error"
    if any(c.__name__ == "AuthorizationError" for c in type(error).__mro__):
        return "authorization_error"
    if isinstance(error, RemoteProtocolError):
        return "protocol_error"
    return "_OTHER"


class Telemetry:
    """The conventions applied to one session (see the module's docs).  Made by a binding
    with its :class:`SpanSink`, the connection's :class:`Peer`, and what to record:
    ``capture_content`` adds ``gen_ai.tool.call.arguments`` / ``.result`` (JSON, redacted
    by ``redactor`` first, cut at :data:`MAX_CAPTURED_CHARS`); ``resource_target`` puts a
    resource's URI in its span's name; ``extra`` attributes go on every span (the Host's
    server name).  ``session_id`` is set by the HTTP transport when the server gives one;
    ``protocol_version`` is learnt from the opening.

    A binding never calls it: the session does (:meth:`ClientSession.instrument`)."""

    def __init__(self, sink: SpanSink, *, peer: Peer, capture_content: bool = False,
                 redactor: Redactor | None = None, resource_target: bool = False,
                 extra: Mapping[str, AttributeValue] | None = None,
                 max_live: int = MAX_LIVE_SPANS) -> None:
        self.sink = sink
        self.peer = peer
        self.capture_content = capture_content
        self.redactor = redactor or Redactor()
        self.resource_target = resource_target
        self.max_live = max_live
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.dropped = 0  # operations that got no span (MAX_LIVE_SPANS open already)
        self._base: Attributes = {**peer.attributes(), **(extra or {})}
        self._live: dict[SpanKey, _Live] = {}
        self._by_rid: dict[object, SpanKey] = {}
        self._opened_at: float | None = None
        self._statics: dict[tuple[str, object, str | None, str | None],
                            tuple[str, Attributes, Attributes]] = {}

    def set_session(self, session_id: str) -> None:
        """The HTTP server gave ``Mcp-Session-Id``: ``mcp.session.id`` is its digest
        (:func:`session_digest`) from now on."""
        self.session_id = session_digest(session_id)

    # -- what the session calls ----------------------------------------------------------

    def request(self, rid: int, handle: RequestHandle[Any], method: str,
                params: Mapping[str, Any] | None, now: float, *,
                hosted: bool = True) -> Mapping[str, str] | None:
        """The session sends request ``rid`` of operation ``handle``: a new span for the
        operation's first request, an event of its span for the others.  An internal
        request (``hosted`` False: the listen stream, a discovery refresh) gets a span of
        its own too, which its answer ends (:meth:`internal_span`).  Returns the trace
        context to add to ``params._meta`` (None: nothing)."""
        key: SpanKey = ("client", handle.id)
        live = self._live.get(key)
        if live is not None:
            live.rids.append(rid)
            self._by_rid[rid] = key
            self.sink.event(SpanEvent(key=key, name=_event_name(live.method, method, params),
                                      attributes={"mcp.method.name": method,
                                                  "jsonrpc.request.id": str(rid)},
                                      now=now))
            return live.carrier
        if len(self._live) >= self.max_live:
            self.dropped += 1
            return None
        first = method
        if handle.method != method:  # a resumed task: tools/call, polled by tasks/get
            method, params = handle.method, None
        name, base, metric_attrs = self._static(method, params)
        attrs = {**base, "jsonrpc.request.id": str(rid)}
        if self.capture_content and method == "tools/call" and params:
            arguments = params.get("arguments")
            if arguments is not None:
                attrs["gen_ai.tool.call.arguments"] = self._captured(arguments)
        given = self.sink.start(SpanStart(key=key, name=name, kind="client",
                                          attributes=attrs, now=now, carrier={},
                                          tool_span=method == "tools/call"))
        carrier = None
        if given:  # the three keys SEP-414 reserves; a propagator's others are not MCP's
            carrier = {k: v for k in TRACE_CONTEXT_KEYS if type(v := given.get(k)) is str}
        live = self._live[key] = _Live(method, now, metric_attrs, carrier)
        live.rids.append(rid)
        self._by_rid[rid] = key
        if first != method:
            self.sink.event(SpanEvent(key=key, name="mcp_proto.request", attributes={
                "mcp.method.name": first, "jsonrpc.request.id": str(rid)}, now=now))
        return carrier

    def forget(self, rid: int, now: float) -> None:
        """Request ``rid`` (an internal one with its own span) was dropped without an
        answer: a listen stream superseded by a new one, or withdrawn by the server.  Its
        span ends, not failed."""
        key = self._by_rid.get(rid)
        live = None if key is None else self._live.get(key)
        if key is not None and live is not None and live.rids[-1] == rid:
            del self._live[key]
            self._end(key, live, {}, None, None, now, CLIENT_OPERATION_DURATION)

    def internal_span(self, rid: int) -> bool:
        """Whether request ``rid`` (an internal one: ``hosted`` False) began a span of its
        own just now; its answer then ends it (:meth:`internal_done`)."""
        key = self._by_rid.get(rid)
        if key is None:
            return False
        live = self._live.get(key)
        return live is not None and live.rids == [rid]

    def internal_done(self, handle: RequestHandle[Any], error: MCPError | None,
                      rid: int, now: float) -> None:
        """An internal request with a span of its own was answered (``error`` None) or
        failed; a retry under the same handle keeps the span open (its own answer ends it).
        """
        key: SpanKey = ("client", handle.id)
        live = self._live.get(key)
        if live is None or live.rids[-1] != rid:
            return
        del self._live[key]
        if error is None:
            self._end(key, live, {}, None, None, now, CLIENT_OPERATION_DURATION)
        else:
            self._failed(key, live, error, now)

    def unsent(self, rid: int, handle: RequestHandle[Any], error: MCPError,
               now: float) -> None:
        """Request ``rid`` could not be sent (its params are not JSON): the operation's span
        ends with ``error`` if this was its first request (the caller gets the error)."""
        key: SpanKey = ("client", handle.id)
        live = self._live.get(key)
        if live is not None and live.rids == [rid]:
            del self._live[key]
            self._failed(key, live, error, now)

    def cancel_sent(self, rid: int, reason: str | None, now: float) -> None:
        """``notifications/cancelled`` went out for request ``rid``."""
        key = self._by_rid.get(rid)
        if key is not None:
            attrs: Attributes = {"jsonrpc.request.id": str(rid)}
            if reason:
                attrs["mcp_proto.cancel.reason"] = reason[:200]
            self.sink.event(SpanEvent(key=key, name="mcp_proto.cancel", attributes=attrs, now=now))

    def transport_event(self, rid: int | None, name: str, attributes: Attributes,
                        now: float) -> None:
        """The transport did something for request ``rid`` (``mcp_proto.http.authorize``: a 401
        or 403 answered by authorization, the request to be sent again; ``mcp_proto.http.resume``:
        a dropped stream resumed)."""
        key = None if rid is None else self._by_rid.get(rid)
        if key is not None:
            self.sink.event(SpanEvent(key=key, name=name, attributes=attributes, now=now))

    def server_request(self, request_id: RequestId, method: str, params: Mapping[str, Any],
                       now: float) -> None:
        """The server sent request ``request_id``: a SERVER span until it is answered,
        parented on the context in its ``_meta`` if it has one."""
        key: SpanKey = ("server", request_id)
        if key in self._live or len(self._live) >= self.max_live:
            return
        attrs = {k: v for k, v in self._attributes(method, params).items()
                 if k not in _CLIENT_SIDE_ONLY}
        if type(request_id) in (int, str):
            attrs["jsonrpc.request.id"] = str(request_id)
        meta = params.get("_meta")
        carrier = {k: v for k in TRACE_CONTEXT_KEYS
                   if type(meta) is dict and type(v := meta.get(k)) is str}
        metric_attrs = {k: v for k, v in attrs.items() if k in _METRIC_KEYS}
        parent = None
        if not carrier:
            calls = [k for k in self._live if k[0] == "client"]
            parent = calls[0] if len(calls) == 1 else None
        self.sink.start(SpanStart(key=key, name=span_name(method, params), kind="server",
                                  attributes=attrs, now=now, carrier=carrier, parent=parent))
        self._live[key] = _Live(method, now, metric_attrs, None)

    def response_sent(self, message: Mapping[str, Any], now: float) -> None:
        """The session answered a server request (``message`` is the response)."""
        key: SpanKey = ("server", message.get("id"))
        live = self._live.pop(key, None)
        if live is None:
            return
        error = message.get("error")
        if type(error) is dict:
            code = str(error.get("code"))
            text = error.get("message")
            self._end(key, live, {"rpc.response.status_code": code}, code,
                      text if type(text) is str else None, now, SERVER_OPERATION_DURATION)
        else:
            self._end(key, live, {}, None, None, now, SERVER_OPERATION_DURATION)

    def on_event(self, event: Event, now: float) -> None:
        """The session emits ``event``: an operation's end ends its span; an input request
        (MRTR) is an event of its operation's span; the end of the session ends every span
        still open and records the session's duration."""
        react = _REACTIONS.get(type(event))
        if react is not None:
            react(self, event, now)

    def _on_completed(self, event: Completed, now: float) -> None:
        key: SpanKey = ("client", event.handle.id)
        live = self._live.pop(key, None)
        if live is not None:
            attrs, etype = self._completed(live.method, event.value)
            self._end(key, live, attrs, etype, None, now, CLIENT_OPERATION_DURATION)

    def _on_failed(self, event: Failed, now: float) -> None:
        key: SpanKey = ("client", event.handle.id)
        live = self._live.pop(key, None)
        if live is not None:
            self._failed(key, live, event.error, now)

    def _failed(self, key: SpanKey, live: _Live, error: MCPError, now: float) -> None:
        """End an operation's span with ``error``: a JSON-RPC error's code and message (the
        description the convention asks for), else the error's type and text."""
        attrs: Attributes = {}
        description = str(error)
        if isinstance(error, RpcError):
            attrs["rpc.response.status_code"] = str(error.code)
            description = str(error.message)
        self._end(key, live, attrs, error_type(error), description, now,
                  CLIENT_OPERATION_DURATION)

    def _on_ready(self, event: Ready, now: float) -> None:
        key: SpanKey = ("client", event.handle.id)
        self.protocol_version = event.protocol_version
        live = self._live.pop(key, None)
        if live is not None:
            self._opened_at = live.start
            method = "initialize" if event.era == "legacy" else "server/discover"
            if method != live.method:  # the probe, answered by the handshake (V-20)
                live.method = method
                live.metric_attributes = {**live.metric_attributes, "mcp.method.name": method}
            self._end(key, live, {"mcp.protocol.version": event.protocol_version,
                                  "mcp.method.name": method,
                                  "jsonrpc.request.id": str(live.rids[-1])}, None, None, now,
                      CLIENT_OPERATION_DURATION, name=method)
        elif self._opened_at is None:
            self._opened_at = now

    def _on_input(self, event: ServerRequest, now: float) -> None:
        rid = event.request_id
        if type(rid) is str and rid.startswith("input-"):  # MRTR: "input-{handle}-{round}-"
            hid = rid.split("-", 2)[1]
            if hid.isdigit():
                key: SpanKey = ("client", int(hid))
                if key in self._live:
                    self.sink.event(SpanEvent(key=key, name="mcp_proto.input_required", attributes={
                        "mcp.method.name": event.method}, now=now))

    def _on_withdrawn(self, event: ServerRequestCancelled, now: float) -> None:
        key: SpanKey = ("server", event.request_id)
        live = self._live.pop(key, None)
        if live is not None:
            self._end(key, live, {}, "cancelled", event.reason, now, SERVER_OPERATION_DURATION)

    def _on_closed(self, event: Closed, now: float) -> None:
        self._closed(event.error, now)

    # -- decisions -------------------------------------------------------------------------

    def _static(self, method: str, params: Mapping[str, Any] | None
                ) -> tuple[str, Attributes, Attributes]:
        """A request's span name, its attributes but the id, and its metric's attributes:
        the same for every call of one tool (or prompt, or method), so kept (up to
        :data:`_MAX_STATIC` of them, and afresh once the protocol version or session id
        changes); a resource's, whose URI differs each time, made anew."""
        target = params.get("name") if params and method in _TARGETS else None
        if method in _RESOURCE_METHODS or (target is not None and type(target) is not str):
            attrs = self._attributes(method, params)
            return (span_name(method, params, resource_target=self.resource_target), attrs,
                    {k: v for k, v in attrs.items() if k in _METRIC_KEYS})
        known = (method, target, self.protocol_version, self.session_id)
        found = self._statics.get(known)
        if found is None:
            if len(self._statics) >= _MAX_STATIC:
                self._statics.clear()
            attrs = self._attributes(method, params)
            found = self._statics[known] = (
                span_name(method, params), attrs,
                {k: v for k, v in attrs.items() if k in _METRIC_KEYS})
        return found

    def _attributes(self, method: str, params: Mapping[str, Any] | None) -> Attributes:
        attrs: Attributes = {"mcp.method.name": method, **self._base}
        if self.protocol_version is not None:
            attrs["mcp.protocol.version"] = self.protocol_version
        if self.session_id is not None:
            attrs["mcp.session.id"] = self.session_id
        if params:
            target_key = _TARGETS.get(method)
            if target_key is not None:
                target = params.get("name")
                if type(target) is str:
                    attrs[target_key] = target
            elif method in _RESOURCE_METHODS:
                uri = params.get("uri")
                if type(uri) is str:  # a query value or user-info may be a credential
                    attrs["mcp.resource.uri"] = redact_url(uri) if "?" in uri or "@" in uri \
                        else uri
        if method == "tools/call":
            attrs["gen_ai.operation.name"] = "execute_tool"
        return attrs

    def _completed(self, method: str, value: object) -> tuple[Attributes, str | None]:
        attrs: Attributes = {}
        if method != "tools/call":
            return attrs, None
        failed = getattr(value, "is_error", False) is True
        if self.capture_content and not failed:
            raw = getattr(value, "raw", None)
            if raw:
                attrs["gen_ai.tool.call.result"] = self._captured(raw)
        return attrs, "tool_error" if failed else None

    def _captured(self, value: object) -> str:
        try:
            text = json.dumps(self.redactor.message(value), ensure_ascii=False,
                              separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            text = "<not JSON>"
        if len(text) > MAX_CAPTURED_CHARS:
            text = text[:MAX_CAPTURED_CHARS] + "...<cut>"
        return text

    def _end(self, key: SpanKey, live: _Live, attrs: Attributes, etype: str | None,
             description: str | None, now: float, metric: str, *,
             name: str | None = None) -> None:
        for rid in live.rids:
            self._by_rid.pop(rid, None)
        if description is not None:  # a server's message may echo what it was given
            description = self.redactor.text(str(description)[:_MAX_DESCRIPTION])
        if self.session_id is not None and key[0] == "client":  # known from its answer
            attrs.setdefault("mcp.session.id", self.session_id)
        metric_attrs = live.metric_attributes
        if etype is not None:
            attrs["error.type"] = etype
            metric_attrs = {**metric_attrs, "error.type": etype}
            if "rpc.response.status_code" in attrs:
                metric_attrs["rpc.response.status_code"] = attrs["rpc.response.status_code"]
        if self.protocol_version is not None:  # a span begun before the opening ended
            attrs.setdefault("mcp.protocol.version", self.protocol_version)
            if "mcp.protocol.version" not in metric_attrs:
                metric_attrs = {**metric_attrs, "mcp.protocol.version": self.protocol_version}
        self.sink.end(SpanEnd(key=key, attributes=attrs, error_type=etype,
                              description=description, now=now,
                              duration=max(0.0, now - live.start), metric=metric,
                              metric_attributes=metric_attrs, name=name))

    def _closed(self, error: MCPError | None, now: float) -> None:
        etype = None if error is None else error_type(error)
        for key, live in list(self._live.items()):
            # Still open: the host's operations failed before this (their Failed events);
            # what is left is internal (the listen stream) or a server's request, ended
            # with the session: failed only if the session failed.
            del self._live[key]
            metric = CLIENT_OPERATION_DURATION if key[0] == "client" \
                else SERVER_OPERATION_DURATION
            self._end(key, live, {}, etype, None if error is None else str(error), now,
                      metric)
        opened = self._opened_at
        if opened is not None:
            self._opened_at = None
            attrs = {k: v for k, v in self._base.items() if k in _METRIC_KEYS}
            if self.protocol_version is not None:
                attrs["mcp.protocol.version"] = self.protocol_version
            if etype is not None:
                attrs["error.type"] = etype
            self.sink.session_ended(SessionEnd(duration=max(0.0, now - opened),
                                               attributes=attrs, now=now))


#: The attributes the operation histograms take (low cardinality: no ids, no URIs).
_METRIC_KEYS = frozenset({"mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name",
                          "gen_ai.operation.name", "mcp.protocol.version",
                          "network.transport", "network.protocol.name",
                          "network.protocol.version", "server.address", "server.port",
                          "mcp_proto.server.name"})


#: What each event the session emits does to the spans (the others do nothing).
_REACTIONS: dict[type[Any], Callable[[Telemetry, Any, float], None]] = {
    Completed: Telemetry._on_completed,
    Failed: Telemetry._on_failed,
    Ready: Telemetry._on_ready,
    ServerRequest: Telemetry._on_input,
    ServerRequestCancelled: Telemetry._on_withdrawn,
    Closed: Telemetry._on_closed,
}


#: Characters of a span's status description kept (a server's error message).
_MAX_DESCRIPTION = 500

#: The attributes of the client's side of a connection, not on a SERVER span's table.
_CLIENT_SIDE_ONLY = frozenset({"server.address", "server.port"})

#: Span names and attributes kept per (method, target): a bound on what a server that
#: names a new tool on every call could make the cache hold.
_MAX_STATIC = 512


def _event_name(first: str, method: str, params: Mapping[str, Any] | None) -> str:
    """What another request of an operation is: a page, an input round (MRTR), a retry of
    the same method, or a request of its own (a task's poll)."""
    if method != first:
        return "mcp_proto.request"
    if params:
        if "cursor" in params:
            return "mcp_proto.page"
        if "inputResponses" in params:
            return "mcp_proto.input_round"
    return "mcp_proto.retry"
