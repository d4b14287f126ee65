"""Streamable HTTP as data (section 10.2 and 10.3): which HTTP requests to send, and what the
answers mean, over h11.  The binding opens connections and moves bytes; this module decides.

Every message the session sends becomes one POST exchange (H-01, X-20).  An answer is JSON
(one message), an SSE stream (notifications and server requests, then the response: H-04,
H-05, X-22), or ``202 Accepted`` for notifications and responses (H-03).  In the handshake era
the ``Mcp-Session-Id`` the server gives with the initialize result is echoed on every later
request (H-10) and ``MCP-Protocol-Version`` is sent once negotiated (V-04); a 404 on a session
means it expired (H-11).  In the stateless era every POST carries ``MCP-Protocol-Version``,
``Mcp-Method`` and ``Mcp-Name`` (X-21), and a request is cancelled by closing its stream
(C-04), never by a notification.  The era itself is chosen by the session's probe: an HTTP
error without a JSON-RPC body fails the probe the same way an error answer does on stdio.

In the handshake era the GET stream for server-initiated messages opens once the session is
ready (405 tolerated, H-07); the first other requests wait (at most :data:`OPENING_GATE`) for
its answer and for the 202 of ``notifications/initialized``.  A dropped SSE stream is resumed
by GET with ``Last-Event-ID`` after the server's ``retry`` delay (H-06), bounded times.

When ``initialize`` is refused with 400/404/405 too, the server is a 2024-11-05 HTTP+SSE one
(2.3, X-30): a GET stream announces, in an ``endpoint`` event, where to POST (same origin
only), and every answer arrives on that stream.

In the stateless era a dropped stream cannot be resumed: the request is sent again, once,
with a new id, unless it is a tool call (X-22: it may have run; it fails instead).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._auth_errors import (
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    InsufficientScope,
)
from .._errors import (
    ConnectionLost,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    SessionExpired,
)
from .._redact import Redactor, redact_url
from ..auth._states import KINDS
from ..session._modern import PROTOCOL_VERSION_KEY, header_value, mcp_header_params
from ..session._session import ClientSession
from ..session._state import State
from ..wire._json import loads
from ..wire._sse import SseEvent, SseOversize, SseParser
from ._status import TRANSPORT_NAMES, HttpError

# h11 and urllib.parse are imported where they are used, by the first HTTP client: the
# bindings import this module, and a program that speaks only stdio never needs them (they
# would be an eighth of ``import mcp_proto_io.asyncio``: benchmarks/bench_import.py).
if TYPE_CHECKING:
    import h11

    from ..auth._flow import OAuthFlow  # the binding makes the flow: plain HTTP never loads it

__all__ = ["AUTH_RETRY_LIMITS", "MAX_HEAD_SIZE", "HttpError", "HttpExchange", "HttpTarget",
           "StreamableHttp"]

#: Bytes of response head (status line and headers) accepted: far above any real server's,
#: small enough that a hostile one cannot make the client buffer without bound.
MAX_HEAD_SIZE = 64 * 1024

#: Times one request's dropped SSE stream is resumed (H-06) before the request fails: a
#: server that keeps closing without ever answering must not hold the call in a loop.
MAX_RESUMES = 5

#: Seconds the first requests of a handshake-era session wait for the GET stream's answer
#: and the 202 of ``notifications/initialized``.  A server may send a request that belongs to
#: no POST (an elicitation) only on an open GET stream, and may refuse requests that arrive
#: before ``initialized``; a server that never answers the GET must not stall the client.
OPENING_GATE = 2.0

#: Reconnection delay when the server sent no ``retry`` field (seconds), and the longest one
#: honoured: a hostile ``retry`` must not park a call for hours.
DEFAULT_RETRY = 1.0
MAX_RETRY = 30.0

_ACCEPT = "application/json, text/event-stream"

#: How often one request may wait on each kind of authorization procedure before it fails:
#: at most one refresh and one new authorization (a server refusing a token it was just
#: given fails the call with :class:`AuthorizationRejected`, it does not loop), a few
#: step-ups, two plain retries (a newer token was already in use) and one DPoP nonce.
AUTH_RETRY_LIMITS = {"retry": 2, "nonce": 1, "refresh": 1, "authorize": 1, "step_up": 3}

#: Characters of an HTTP reason phrase kept for an error message (real ones are a few words).
MAX_REASON = 100

#: Characters of a ``DPoP-Nonce`` kept: real nonces are a few dozen; it goes back in every
#: proof, so a hostile one must not grow each request.
MAX_DPOP_NONCE = 1024

#: Seconds beyond the authorization flow's own deadline that the requests waiting on it
#: keep: time for the replayed request to be answered.
AUTH_HOLD_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class HttpTarget:
    """Where the MCP endpoint is.  Built with :meth:`parse`."""

    scheme: str
    host: str
    port: int
    target: str
    """Path and query, what goes on the request line."""

    @property
    def authority(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @classmethod
    def parse(cls, url: str) -> HttpTarget:
        """Raises :class:`LocalProtocolError` for a URL that is not http(s) or that carries
        credentials (they would be logged and sent in the clear; use ``headers=``)."""
        from urllib.parse import urlsplit  # noqa: PLC0415 - see the imports

        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - validates the port and IPv6 brackets now
        except ValueError as exc:
            raise LocalProtocolError(f"bad URL {url!r}: {exc}") from None
        if parts.scheme not in ("http", "https"):
            raise LocalProtocolError(f"an MCP URL must be http:// or https://, got {url!r}")
        if parts.username is not None or parts.password is not None:
            raise LocalProtocolError("credentials in the URL are refused; pass them as headers "
                                     "(for example a bearer token)")
        if not parts.hostname:
            raise LocalProtocolError(f"the URL {url!r} has no host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise LocalProtocolError(f"bad port in {url!r}: {exc}") from None
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        host = parts.hostname
        return cls(parts.scheme, f"[{host}]" if ":" in host else host, port, target)


@dataclass(slots=True, eq=False)
class HttpExchange:
    """One HTTP request/response.  The binding sends :attr:`data` on a connection to
    :attr:`HttpTarget.origin`, feeds the answer to :meth:`StreamableHttp.receive_data`, and
    may reuse the connection once :attr:`reusable` after :attr:`done`."""

    id: int
    method: str
    rpc_method: str
    request_id: int | None
    data: bytes = field(repr=False)  # the request: it carries the Authorization header
    conn: h11.Connection = field(repr=False)
    status: int | None = None
    reason: str = ""
    target: str = ""  # the path and query it went to
    content_type: str = ""
    body: bytearray = field(default_factory=bytearray, repr=False)
    sse: SseParser | None = field(default=None, repr=False)
    done: bool = False
    aborted: bool = False
    resumes: int = 0
    payload: bytes = field(default=b"", repr=False)
    """The JSON body sent (kept to re-send ``initialize`` to a 2024-11-05 endpoint)."""
    message: dict[str, Any] | None = field(default=None, repr=False)
    """The JSON-RPC message sent (kept to send it again once authorized)."""
    auth_generation: int = 0
    """Which token the request carried (:attr:`OAuthFlow.generation`)."""
    auth_counts: dict[str, int] = field(default_factory=dict, repr=False)
    challenges: list[str] = field(default_factory=list, repr=False)
    dpop_nonce: str | None = None

    @property
    def reusable(self) -> bool:
        """Whether the connection may carry another exchange (keep-alive, clean end)."""
        import h11  # noqa: PLC0415 - see the imports

        return (self.done and not self.aborted
                and self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE)


@dataclass(slots=True, eq=False)
class _Parked:
    """A message held until the authorization flow is idle again."""

    message: dict[str, Any]
    body: bytes
    counts: dict[str, int]
    failures: int  # the flow's failure count when it was held
    now: bool = False  # send again at once (a newer token, a DPoP nonce)


class StreamableHttp:
    """A :class:`ClientSession` spoken over Streamable HTTP.

    Drive it like the session itself: call the session's operations, then
    :meth:`exchanges_to_start` (new HTTP requests to send), :meth:`exchanges_to_abort`
    (streams to close: cancellations in the stateless era), :meth:`receive_data` /
    :meth:`connection_lost` per exchange, and the session's ``next_event``,
    ``next_deadline`` and ``handle_timeout`` as on stdio.
    """

    def __init__(self, session: ClientSession, url: str, *,
                 headers: Mapping[str, str] | None = None,
                 bearer_token: str | None = None, auth: OAuthFlow | None = None) -> None:
        self.session = session
        session.check_mcp_headers = True  # T-06 matters on HTTP
        self.url = HttpTarget.parse(url)
        extra = dict(headers or {})
        if bearer_token is not None:
            extra["Authorization"] = f"Bearer {bearer_token}"
        for name, value in extra.items():
            if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
                raise LocalProtocolError(f"header {name!r} contains a line break")
        self._extra = list(extra.items())
        self._redactor = Redactor.of(headers=extra)
        self.trace: Callable[[str, object], None] | None = None
        """Told each JSON-RPC value sent (``"send"``) and received (``"recv"``: a message, a
        batch, what failed to parse), and each answer's head (``"http"``: method, status,
        headers), before redaction; None: no tracing."""
        self.session_id: str | None = None
        """``Mcp-Session-Id`` the server gave (handshake era, H-10)."""
        self._next = 1
        self._exchanges: dict[int, HttpExchange] = {}
        self._by_request: dict[int, HttpExchange] = {}
        self._to_abort: list[int] = []
        self._timers: list[tuple[float, int, str, str, int]] = []  # resumptions due
        self._ready: list[HttpExchange] = []  # exchanges created by timers
        self.get_stream = "closed"
        """The GET stream (H-07, handshake era): ``closed``, ``open``, ``refused`` (tolerated)."""
        self._get_reopen_at: float | None = None
        self._get_last_id = ""
        self.transport = "streamable"
        """``streamable``, or ``sse`` once the server proved a 2024-11-05 HTTP+SSE one (X-30)."""
        self._endpoint: str | None = None  # HTTP+SSE: where to POST, once announced
        self._pending_initialize: HttpExchange | None = None  # waiting for the endpoint
        self._gate: set[int] = set()  # exchanges the others wait for (OPENING_GATE)
        self._gate_until = 0.0
        self._held: list[HttpExchange] = []
        self.auth = auth
        """The authorization flow (None: no OAuth; a 401 fails with
        :class:`AuthorizationRequired`).  The binding runs its exchanges and events."""
        self._parked: list[_Parked] = []

    # -- what to send ---------------------------------------------------------------------

    def exchanges_to_start(self) -> list[HttpExchange]:
        """New exchanges for what the session wants to send (call after every operation and
        every receive, as with ``data_to_send`` on stdio)."""
        out, self._ready = self._ready, []
        modern = self.session.era == "modern"
        opening = False
        auth = self.auth
        now = self.session.latest_now
        if auth is not None:
            auth.protocol_version = self.session.protocol_version or auth.protocol_version
            auth.start_refresh(now)  # a token about to expire: refreshed before it is sent
        holding = auth is not None and auth.busy
        if self.get_stream == "closed" and self._get_reopen_at is None and not holding \
                and self.transport == "streamable" \
                and self.session.era == "legacy" and self.session.state is State.READY:
            get = self._open_get_stream()
            out.append(get)
            if not self._gate_until:  # the first opening only
                opening = True
                self._gate.add(get.id)
                self._gate_until = self.session.latest_now + OPENING_GATE
        for obj, body in self.session.messages_to_send():
            method = obj.get("method")
            if method == "notifications/cancelled":
                # The request is over on our side: close its stream, so nothing waits on it.
                # 2026 (C-04): that *is* the cancellation, nothing is posted.  Handshake era
                # (C-05): a disconnect is not a cancel, so the notification is posted too.
                rid = obj.get("params", {}).get("requestId")
                ex = self._by_request.pop(rid, None) if type(rid) is int else None
                if ex is not None and not ex.done:
                    ex.aborted = True
                    self._to_abort.append(ex.id)
                if modern:
                    continue
            if holding:
                assert auth is not None
                self._parked.append(_Parked(obj, body, {}, auth.failures))
                continue
            ex = self._exchange(obj, body)
            if opening and method == "notifications/initialized":
                self._gate.add(ex.id)
                out.append(ex)
            elif self._gate:
                self._held.append(ex)  # after the GET stream and initialized (OPENING_GATE)
            else:
                out.append(ex)
        if self._held and (not self._gate or self.session.latest_now >= self._gate_until):
            self._gate.clear()
            out += self._held
            self._held = []
        if self._parked:
            out += self._release_parked(now)
        self._reap()
        return out

    def _release_parked(self, now: float) -> list[HttpExchange]:
        """Send again what waited on the authorization flow once it is idle (or fail it with
        the flow's error); while it runs, keep the waiting requests' deadlines beyond it."""
        auth = self.auth
        assert auth is not None
        out = []
        keep = []
        for parked in self._parked:
            if auth.busy and not parked.now:
                keep.append(parked)
                continue
            rid = parked.message.get("id") if "method" in parked.message else None
            if type(rid) is int and not self.session.is_pending(rid):
                continue  # timed out or cancelled meanwhile
            if auth.failures > parked.failures and not parked.now:
                if type(rid) is int:
                    error = auth.error or AuthorizationError("authorization failed")
                    self.session.fail_request(rid, error, now=now)
                continue
            ex = self._exchange(parked.message, parked.body)
            ex.auth_counts = parked.counts
            out.append(ex)
        self._parked = keep
        if keep:
            deadline = auth.next_deadline()
            until = max(now, deadline if deadline is not None else now) + AUTH_HOLD_GRACE
            self.session.postpone([p.message["id"] for p in keep
                                   if type(p.message.get("id")) is int
                                   and "method" in p.message], until)
        return out

    def _reap(self) -> None:
        """Close the streams nothing waits on any more: a request that ended (answered while
        the server keeps the stream open, given up after the probe, timed out) and, once the
        session is closed, every stream.  A thread reading one must not read forever."""
        closed = self.session.state is State.CLOSED
        for ex in list(self._exchanges.values()):
            if ex.done:
                continue
            rid = ex.request_id
            if closed or (rid is not None and not self.session.is_pending(rid)
                          and self._by_request.get(rid) is ex):
                if rid is not None and self._by_request.get(rid) is ex:
                    del self._by_request[rid]
                ex.aborted = True
                self._to_abort.append(ex.id)

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` must next be called: the session's deadlines and the
        resumptions of dropped streams."""
        deadline = self.session.next_deadline()
        if self._timers:
            soonest = min(t[0] for t in self._timers)
            deadline = soonest if deadline is None else min(deadline, soonest)
        reopen = self._get_reopen_at
        if reopen is not None:
            deadline = reopen if deadline is None else min(deadline, reopen)
        if self._held:
            deadline = (self._gate_until if deadline is None
                        else min(deadline, self._gate_until))
        if self.auth is not None:
            auth_deadline = self.auth.next_deadline()
            if auth_deadline is not None:
                deadline = auth_deadline if deadline is None else min(deadline, auth_deadline)
        return deadline

    def handle_timeout(self, now: float) -> None:
        """Fire the session's deadlines and resume the streams whose ``retry`` delay passed
        (H-06: always by GET with ``Last-Event-ID``; the answer may come on it)."""
        if self.auth is not None:
            self.auth.handle_timeout(now)
        self.session.handle_timeout(now)
        if self._get_reopen_at is not None and self._get_reopen_at <= now:
            self._get_reopen_at = None  # exchanges_to_start opens it again
        if self._held and self._gate_until <= now:
            self._gate.clear()  # exchanges_to_start releases the held ones
        due = [t for t in self._timers if t[0] <= now]
        self._timers = [t for t in self._timers if t[0] > now]
        for _at, rid, last_id, rpc_method, resumes in due:
            if not self.session.is_pending(rid):
                continue
            headers = [*self._session_headers(), ("Last-Event-ID", last_id)]
            if self.session.protocol_version is not None:
                headers.append(("MCP-Protocol-Version", self.session.protocol_version))
            ex = self._start("GET", rpc_method, rid, b"", headers)
            ex.resumes = resumes
            self._by_request[rid] = ex
            self._ready.append(ex)

    def _open_get_stream(self) -> HttpExchange:
        headers = self._session_headers()
        if self.session.protocol_version is not None:
            headers.append(("MCP-Protocol-Version", self.session.protocol_version))
        if self._get_last_id:
            headers.append(("Last-Event-ID", self._get_last_id))
        self.get_stream = "open"
        return self._start("GET", "GET stream", None, b"", headers)

    def exchanges_to_abort(self) -> list[int]:
        """Exchanges whose connection the binding must close now (never reuse it)."""
        out, self._to_abort = self._to_abort, []
        for ex_id in out:
            self._exchanges.pop(ex_id, None)
        return out

    def close_exchange(self) -> HttpExchange | None:
        """The ``DELETE`` that ends a handshake-era HTTP session (L-11, H-12), or None."""
        if self.session_id is None:
            return None
        return self._start("DELETE", "", None, b"", self._session_headers())

    def _exchange(self, obj: dict[str, Any], body: bytes) -> HttpExchange:
        method = obj.get("method")
        rid = obj.get("id") if method is not None else None
        headers = self._session_headers()
        params = obj.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        if isinstance(version, str):  # a stateless-era request
            headers.append(("MCP-Protocol-Version", version))
            headers.append(("Mcp-Method", str(method)))
            name = _mcp_name(str(method), params if isinstance(params, dict) else {})
            if name is not None:
                headers.append(("Mcp-Name", name))
            if method == "tools/call" and isinstance(params, dict):
                headers += self._param_headers(params)
        elif self.session.protocol_version is not None and self.session.era == "legacy":
            headers.append(("MCP-Protocol-Version", self.session.protocol_version))  # V-04
        ex = self._start("POST", str(method or "(response)"),
                         rid if type(rid) is int else None, body, headers)
        ex.message = obj
        if ex.request_id is not None:
            self._by_request[ex.request_id] = ex
        if self.trace is not None:
            self.trace("send", obj)
        return ex

    def _param_headers(self, params: dict[str, Any]) -> list[tuple[str, str]]:
        """``Mcp-Param-{Name}`` for each argument the tool annotated (X-21)."""
        tool = self.session.tools.get(str(params.get("name")))
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return []
        try:
            mapping = mcp_header_params(tool.input_schema)
        except ValueError:
            return []
        out = []
        for path, header in mapping.items():
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            text = header_value(value)
            if text is not None:
                out.append((f"Mcp-Param-{header}", text))
        return out

    def _session_headers(self) -> list[tuple[str, str]]:
        headers = list(self._extra)
        if self.session_id is not None and self.session.era != "modern":
            headers.append(("Mcp-Session-Id", self.session_id))
        return headers

    def _start(self, verb: str, rpc_method: str, request_id: int | None, body: bytes,
               headers: list[tuple[str, str]], target: str | None = None,
               accept: str = _ACCEPT) -> HttpExchange:
        import h11  # noqa: PLC0415 - see the imports

        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_SIZE)
        head = [("Host", self.url.authority), ("Accept", accept), *headers]
        generation = 0
        if self.auth is not None:  # R1: only ever on the MCP endpoint's own requests
            generation = self.auth.generation
            head += self.auth.headers(verb, self.session.latest_now)
        if verb == "POST":
            head += [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            if target is None and self._endpoint is not None:
                target = self._endpoint  # every message to the announced endpoint
        data = conn.send(h11.Request(method=verb, target=target or self.url.target,
                                     headers=head))
        if body:
            data += conn.send(h11.Data(data=body))
        data += conn.send(h11.EndOfMessage())
        ex = HttpExchange(self._next, verb, rpc_method, request_id, data, conn, payload=body,
                          auth_generation=generation, target=target or self.url.target)
        self._next += 1
        self._exchanges[ex.id] = ex
        return ex

    # -- what came back -------------------------------------------------------------------

    def receive_data(self, exchange_id: int, data: bytes | bytearray | memoryview, *,
                     now: float) -> None:
        """Bytes of the answer to an exchange; ``b""`` when the server closed the
        connection.  Never raises for what the server sent."""
        import h11  # noqa: PLC0415 - see the imports

        ex = self._exchanges.get(exchange_id)
        if ex is None or ex.done:
            return
        try:
            # h11 appends the bytes to its own bytearray (its annotation says bytes; any
            # bytes-like does), so a binding may pass a view of a buffer it reads into again.
            ex.conn.receive_data(data)  # type: ignore[arg-type]
            while True:
                event = ex.conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, h11.Response):
                    self._on_head(ex, event)
                elif isinstance(event, h11.Data):
                    self._on_body(ex, event.data, now)  # h11's own copy: no other is needed
                elif isinstance(event, h11.EndOfMessage):
                    self._finish(ex, now)
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    self._finish(ex, now, closed=True)
                    break
        except h11.RemoteProtocolError as exc:
            self._fail(ex, RemoteProtocolError(f"{ex.rpc_method}: bad HTTP answer: {exc}"), now)
        except MCPError as exc:
            self._fail(ex, exc, now)

    def connection_lost(self, exchange_id: int, *, now: float) -> None:
        """The connection of an exchange broke before its answer ended."""
        ex = self._exchanges.get(exchange_id)
        if ex is not None and not ex.done:
            self._finish(ex, now, closed=True)

    def exchange_failed(self, ex: HttpExchange, error: MCPError, *, now: float) -> None:
        """An exchange could not be carried (no connection, a reset): its request fails with
        ``error`` (which says why), then the exchange ends as a lost connection would."""
        if ex.request_id is not None:  # the specific error first, then the bookkeeping
            self.session.fail_request(ex.request_id, error, now=now)
        self.connection_lost(ex.id, now=now)

    def _on_head(self, ex: HttpExchange, head: h11.Response) -> None:
        ex.status = head.status_code
        if self.trace is not None:  # for a transcript: the exchange, not a message
            self.trace("http", {"method": ex.method, "status": ex.status, "headers": head.headers})
        ex.reason = head.reason.decode("latin-1")[:MAX_REASON]
        if 300 <= head.status_code < 400:
            raise RemoteProtocolError(f"{ex.rpc_method}: the server redirected "
                                      f"(HTTP {head.status_code}); redirects are not followed")
        for name, value in head.headers:
            if name == b"content-type":
                ex.content_type = value.decode("latin-1").split(";")[0].strip().lower()
            elif name == b"www-authenticate" and head.status_code in (401, 403):
                if sum(map(len, ex.challenges)) < MAX_HEAD_SIZE:
                    ex.challenges.append(value.decode("latin-1"))
            elif name == b"dpop-nonce" and head.status_code == 401:
                ex.dpop_nonce = value.decode("latin-1")[:MAX_DPOP_NONCE]
            elif name == b"mcp-session-id" and ex.rpc_method == "initialize":
                sid = value.decode("latin-1")
                if sid and all(0x21 <= ord(c) <= 0x7E for c in sid):  # H-10
                    self.session_id = sid
                    if self.session.telemetry is not None:  # its digest, never the id
                        self.session.telemetry.set_session(sid)
        if ex.content_type == "text/event-stream":
            ex.sse = SseParser(self.session.limits.max_message_size)
        if ex.rpc_method == "GET stream":
            self._gate.discard(ex.id)  # open (or refused): the others may go

    def _on_body(self, ex: HttpExchange, data: bytes | bytearray, now: float) -> None:
        sse = ex.sse
        if sse is None:
            if len(ex.body) + len(data) > self.session.limits.max_message_size:
                raise RemoteProtocolError(f"{ex.rpc_method}: HTTP body over "
                                          f"{self.session.limits.max_message_size} bytes")
            ex.body += data
            return
        sse.feed(data)
        while (event := sse.next_event()) is not None:
            if isinstance(event, SseOversize):
                # On a request's stream, the oversize event is most likely its answer.
                raise MessageTooLarge(event.size, self.session.limits.max_message_size)
            self._on_sse(event, now)

    def _on_sse(self, event: SseEvent, now: float) -> None:
        if event.event == "endpoint" and self.transport == "sse":
            self._on_endpoint(event.data, now)
            return
        if event.event != "message" or not event.data:
            return  # priming events carry no message (H-06); other types are not MCP's
        try:
            obj = loads(event.data)
        except (ValueError, RecursionError):
            obj = event.data  # reported by the session as a bad message
        self._receive(obj, now)

    def _receive(self, obj: object, now: float) -> None:
        if self.trace is not None:
            self.trace("recv", obj)
        self.session.receive_message(obj, now=now)

    def _http_error(self, ex: HttpExchange, what: str) -> HttpError:
        """The one-line error of an exchange answered with an error status."""
        url = self.url
        shown = redact_url(f"{url.scheme}://{url.authority}{ex.target}",
                           self._redactor)
        tried = TRANSPORT_NAMES.get(self.transport, self.transport)
        if self.transport == "sse":
            tried = f"{TRANSPORT_NAMES['streamable']}, then {tried}"
        return HttpError(ex.status or 0, bytes(ex.body), what, reason=ex.reason, url=shown,
                         transport=tried, content_type=ex.content_type,
                         redactor=self._redactor)

    def _finish(self, ex: HttpExchange, now: float, closed: bool = False) -> None:
        self._gate.discard(ex.id)
        if ex.rpc_method == "SSE stream":  # HTTP+SSE: the stream is the connection
            ex.done = True
            self._exchanges.pop(ex.id, None)
            error: MCPError = ConnectionLost("the HTTP+SSE stream closed")
            if ex.status is not None and ex.status >= 300:
                error = self._http_error(ex, "HTTP+SSE stream")
            self.session.connection_lost(error)
            return
        if ex.rpc_method == "GET stream":
            self._get_stream_ended(ex, now)
            return
        ex.done = True
        if ex.request_id is not None:
            self._by_request.pop(ex.request_id, None)
        status = ex.status
        if status in (401, 403) and ex.method == "POST" and self._challenged(ex, status, now):
            self._exchanges.pop(ex.id, None)
            return
        if status is None:
            self._fail(ex, ConnectionLost(f"{ex.rpc_method}: the connection closed before "
                                          "an HTTP answer"), now)
            return
        if ex.sse is None and ex.body and not (self.transport == "sse" and ex.method == "POST"):
            try:
                obj = _json_body(ex.body)
            except (ValueError, RecursionError):
                if status < 300:
                    self._fail(ex, RemoteProtocolError(
                        f"{ex.rpc_method}: HTTP {status} body is not JSON"), now)
                    return
                obj = None
            if status < 300 or _is_jsonrpc_error(obj):  # an error answer in a 4xx body
                self._receive(obj, now)
        if status == 404 and self.session_id is not None and ex.method != "DELETE":
            # H-11: the session is gone.  Every call on it fails (none is replayed) and the
            # session ends, so the binding's next call initializes a new one.
            self._exchanges.pop(ex.id, None)
            self.session.connection_lost(SessionExpired(
                f"{ex.rpc_method}: the server no longer knows session {self.session_id} "
                "(HTTP 404); calls were not replayed, the next one starts a new session"))
            return
        if (ex.rpc_method == "initialize" and status in (400, 404, 405)
                and self.transport == "streamable" and ex.sse is None
                and not _is_jsonrpc_error(_json_or_none(ex.body))):
            # 2.3: Streamable HTTP refused too: a 2024-11-05 HTTP+SSE server.
            self._exchanges.pop(ex.id, None)
            self._start_sse_transport(ex)
            return
        if status >= 400:
            self._fail(ex, self._http_error(ex, ex.rpc_method), now)
        elif self.transport == "sse" and ex.method == "POST":
            pass  # HTTP+SSE: the answer comes on the GET stream, not on the POST
        elif ex.request_id is not None and self.session.is_pending(ex.request_id):
            # The stream ended without the response.
            sse = ex.sse
            if (sse is not None and sse.last_event_id and self.session.era != "modern"
                    and ex.resumes < MAX_RESUMES):
                delay = DEFAULT_RETRY if sse.retry_ms is None else sse.retry_ms / 1000
                self._timers.append((now + min(delay, MAX_RETRY), ex.request_id,
                                     sse.last_event_id, ex.rpc_method, ex.resumes + 1))
                if (tap := self.session.telemetry) is not None:  # H-06: the same request's span
                    tap.transport_event(ex.request_id, "mcp_proto.http.resume",
                                        {"mcp_proto.resume": ex.resumes + 1}, now)
                ex.aborted = ex.aborted or closed
                self._exchanges.pop(ex.id, None)
                return
            if self.session.era == "modern" and self.session.reissue(ex.request_id, now=now):
                # no resumption in 2026-07-28: the request is sent again, new id
                # (never a tool call: it may have run).
                self._exchanges.pop(ex.id, None)
                return
            self._fail(ex, ConnectionLost(
                f"{ex.rpc_method}: the answer ended without a response"
                + (" (connection closed)" if closed else "")), now)
        self._exchanges.pop(ex.id, None)

    def _challenged(self, ex: HttpExchange, status: int, now: float) -> bool:
        """A 401 or 403 on a POST: authorization, not an answer about the request or the era
        (a protected 2026-07-28 server is still found to be one).  The message waits for the
        flow and is sent again, same id and body; or it fails, typed.  False: an ordinary
        403 (not about scope)."""
        auth = self.auth
        rid = ex.request_id
        if auth is None:
            if status != 401:
                return False
            if rid is not None:
                self.session.fail_request(rid, AuthorizationRequired(
                    f"{ex.rpc_method}: the server requires authorization (HTTP 401); pass "
                    "auth=OAuth(...) or a bearer token"), now=now)
            return True
        counts = ex.auth_counts
        kind = auth.on_challenge(
            status, ex.challenges, ex.dpop_nonce, ex.auth_generation, now,
            allowed=lambda k: counts.get(k, 0) < AUTH_RETRY_LIMITS.get(k, 0))
        if kind == "ignore":
            return False
        error: AuthorizationError | None = auth.error if kind == "failed" else None
        counts[kind] = counts.get(kind, 0) + 1
        if error is None and counts[kind] > AUTH_RETRY_LIMITS.get(kind, 0):
            error = (InsufficientScope(f"{ex.rpc_method}: still 403 insufficient_scope after "
                                       f"{counts[kind] - 1} step-up authorizations")
                     if kind == "step_up" else
                     AuthorizationRejected(f"{ex.rpc_method}: the server refused the token "
                                           f"it was just given (HTTP {status}); not retrying"))
        if error is None and ex.message is None:
            error = AuthorizationRejected(f"{ex.rpc_method}: refused (HTTP {status})")
        if error is not None:
            if rid is not None:
                self.session.fail_request(rid, error, now=now)
            return True
        assert ex.message is not None
        self._parked.append(_Parked(ex.message, ex.payload, counts, auth.failures,
                                    now=kind in ("retry", "nonce")))
        if (tap := self.session.telemetry) is not None:  # sent again when authorized: same span
            tap.transport_event(rid, "mcp_proto.http.authorize", {"mcp_proto.auth.step": kind}, now)
        return True

    def _start_sse_transport(self, initialize: HttpExchange) -> None:
        self.transport = "sse"
        self._pending_initialize = initialize
        ex = self._start("GET", "SSE stream", None, b"", list(self._extra),
                         accept="text/event-stream")
        self._ready.append(ex)

    def _on_endpoint(self, data: str, now: float) -> None:
        """X-30: the ``endpoint`` event names where to POST; same origin only."""
        from urllib.parse import urljoin  # noqa: PLC0415 - see the imports

        if self._endpoint is not None:
            return
        try:
            resolved = urljoin(f"{self.url.scheme}://{self.url.authority}{self.url.target}",
                               data.strip())
        except ValueError:
            resolved = data.strip()  # refused just below
        try:
            target = HttpTarget.parse(resolved)
        except (LocalProtocolError, ValueError) as exc:
            target = None
            reason = str(exc)
        if target is None or target.origin != self.url.origin:
            self.session.connection_lost(RemoteProtocolError(
                f"the HTTP+SSE endpoint {data.strip()!r} is not on the server's origin"
                + ("" if target is not None else f" ({reason})")))
            return
        self._endpoint = target.target
        init = self._pending_initialize
        self._pending_initialize = None
        if init is not None and self.session.is_pending(init.request_id or -1):
            ex = self._start("POST", "initialize", init.request_id, init.payload,
                             list(self._extra))
            if ex.request_id is not None:
                self._by_request[ex.request_id] = ex
            self._ready.append(ex)

    def _get_stream_ended(self, ex: HttpExchange, now: float) -> None:
        ex.done = True
        self._exchanges.pop(ex.id, None)
        if ex.status in (401, 403) and self.auth is not None and self.auth.on_challenge(
                ex.status, ex.challenges, ex.dpop_nonce, ex.auth_generation, now) in KINDS:
            self.get_stream = "closed"  # opened again once authorized
            return
        if ex.status is None or ex.status >= 400 or ex.sse is None:
            self.get_stream = "refused"  # 405 (or any error): no server-initiated stream
            return
        # The server may close it at any time (H-06/H-07): reopen after its retry delay.
        sse = ex.sse
        self._get_last_id = sse.last_event_id
        delay = DEFAULT_RETRY if sse.retry_ms is None else sse.retry_ms / 1000
        self.get_stream = "closed"
        if self.session.state is State.READY:
            self._get_reopen_at = now + min(delay, MAX_RETRY)

    def _fail(self, ex: HttpExchange, error: MCPError, now: float) -> None:
        self._gate.discard(ex.id)
        if ex.rpc_method == "SSE stream":
            ex.done = True
            self._exchanges.pop(ex.id, None)
            self.session.connection_lost(error)
            return
        if ex.rpc_method == "GET stream":
            ex.done = True
            self._exchanges.pop(ex.id, None)
            self.get_stream = "refused"
            return
        import h11  # noqa: PLC0415 - see the imports

        ex.done = True
        self._exchanges.pop(ex.id, None)
        ex.aborted = ex.aborted or ex.conn.their_state is not h11.DONE
        if ex.request_id is not None:
            self._by_request.pop(ex.request_id, None)
            self.session.fail_request(ex.request_id, error, now=now)


def _json_body(body: bytearray) -> Any:
    """The JSON value of an HTTP body, as ``json.loads`` of its bytes gives it (UTF-8, 16 or
    32, told apart as ``json`` does), decoded once: ``json.loads`` would copy the bytes
    first.  Raises ``ValueError``/``RecursionError`` as :func:`json.loads`."""
    return loads(body.decode(json.detect_encoding(body), "surrogatepass"))


def _json_or_none(body: bytearray) -> object:
    try:
        return _json_body(body) if body else None
    except (ValueError, RecursionError):
        return None


def _is_jsonrpc_error(obj: object) -> bool:
    return isinstance(obj, dict) and "error" in obj and obj.get("id") is not None


def _mcp_name(method: str, params: dict[str, Any]) -> str | None:
    """``Mcp-Name`` (X-21): the tool or prompt name, or the resource URI, as header-safe."""
    if method in ("tools/call", "prompts/get"):
        value = params.get("name")
    elif method == "resources/read":
        value = params.get("uri")
    elif method.startswith("tasks/"):
        value = params.get("taskId")
    else:
        return None
    if not isinstance(value, str):
        return None
    return header_value(value)  # the same safe form as Mcp-Param-*
