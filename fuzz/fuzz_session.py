"""Fuzz harness for :class:`mcp_proto.ClientSession` fed arbitrary server bytes.

``check(data)`` builds a session (client capabilities sampling, elicitation and roots, a
size limit, timeouts, probe fallback and MRTR round bound chosen from the data, fake time) and
opens it the way the data says: half the inputs in the handshake era (``initialize`` answered
with a canned result), half through ``start()``: the ``server/discover`` probe answered with a
DiscoverResult (era auto or modern, possibly after a -32022 retry, possibly with subscriptions
to renew), a remembered discovery (Ready at once), or the probe answered with an error or not
at all and the ``initialize`` fallback taken.  One opening in four is answered only after part
of the data arrived.  Then ``tools/call``, ``tools/list`` and ``ping`` are issued and ``data``
is fed in chunks.  Between chunks, decisions read from the data (from its end backwards)
inject JSON-RPC lines aimed at the ids the client really used (results, errors, progress,
oversize answers, batches, server requests, notifications, with odd values) and, mostly in a
modern session, 2026-07-28 lines: results with ``resultType`` complete / input_required (with
inputRequests the client can or cannot serve, requestState or not) / unknown, ``ttlMs`` values,
DiscoverResults, -32022 / -32021 / -32020 errors, acknowledgements and notifications on the
listen stream with the right or a wrong subscriptionId; they also advance the clock and call
``handle_timeout``, issue more operations, cancel some, answer server requests and MRTR inputs
(``respond``, ``respond_error``, ``respond_with``, answers that are not JSON).  Finally
``receive_eof``.

Properties (any violation raises AssertionError):

- nothing escapes ``receive_data``, ``receive_eof``, ``handle_timeout`` or ``respond_with``;
  ``respond``/``respond_error`` raise only LocalProtocolError, for an answer that is not JSON
  to an open request (which then stays open);
- every handle gets at most one outcome (Ready/Completed/Failed), all get exactly one by the
  end; ``pending_count`` equals the handles still open (handshake era; in the modern era the
  listen stream may add one and MRTR / subscribe waits may subtract); a failed opening is
  followed by ``Closed``; exactly one ``Closed``, and no outcome after it;
- Completed values have the documented type; Progress only for open handles, strictly
  increasing, finite; Ready names the opening handle and the session's era;
- ServerRequest ids are unique while open (synthetic strings in the modern era);
  ServerRequestCancelled and ``respond`` agree with the set of open server requests;
  ``cancel`` returns True iff the handle was open;
- ``data_to_send()`` is always UTF-8 NDJSON of JSON-RPC 2.0 objects; request ids are ints,
  never reused (MRTR and -32022 retries included); a cancellation names a request that was
  sent; every ``server/discover``, and every request of a modern session, carries the
  ``_meta`` protocol version and client capabilities; a handshake-era session never does; a
  modern session never sends a response; an MRTR retry carries a string requestState if any,
  and one operation is retried at most ``Limits.max_input_rounds`` times;
- the framer never holds more than max_message_size + 1 bytes after a receive; after
  ``handle_timeout(now)`` the next deadline is later than ``now``;
- watched by :class:`mcp_proto.Telemetry` (every other input): a span starts once, its
  events and end come while it is open, every span has ended by the end, durations are
  finite and not negative, ``error.type`` exactly when the span failed, one session duration.

Known core bugs are listed in KNOWN_BUGS; set MCP_PROTO_FUZZ_SKIP_KNOWN=1 to let atheris go
on past them.  Run: ``python fuzz/fuzz_session.py -dict=fuzz/jsonrpc.dict -max_total_time=60``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_proto import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    BadMessage,
    CallToolResult,
    ClientSession,
    Closed,
    Completed,
    CompleteResult,
    Failed,
    GetPromptResult,
    Implementation,
    Limits,
    LocalProtocolError,
    MCPError,
    Peer,
    Progress,
    ReadResourceResult,
    Ready,
    RequestHandle,
    RpcError,
    ServerRequest,
    ServerRequestCancelled,
    SessionEnd,
    SpanEnd,
    SpanEvent,
    SpanStart,
    State,
    SubscriptionEnded,
    TaskStore,
    Telemetry,
)
from mcp_proto._tasks import TASKS_EXTENSION
from mcp_proto.session._modern import CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, Discovered
from mcp_proto.wire._jsonrpc import ErrorResponse, Notification, Request, Response, decode

CLIENT_CAPS: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
#: What a modern request declares: the host's capabilities and the tasks extension (TX-01).
MODERN_CLIENT_CAPS: dict[str, Any] = {**CLIENT_CAPS, "extensions": {TASKS_EXTENSION: {}}}
SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "prompts": {},
    "logging": {},
    "completions": {},
}
# A modern server: list changes everywhere, so the session opens subscriptions/listen.
MODERN_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "completions": {},
}
LIMITS = (300, 1024, 4096)
MAX_STEPS = 400
MAX_HANDLES = 24

# How the session is opened (``_Run.opening``): the first choice the data makes, so that the
# last byte of a seed picks it (byte % 8).  Half the inputs open in the handshake era.
OPENINGS = ("legacy", "legacy", "legacy", "legacy", "discover", "discover-variant",
            "probe-error", "probe-silent")
URI = "file:///x"

_LIST_METHODS = {"tools/list": b"tools", "resources/list": b"resources",
                 "resources/templates/list": b"resourceTemplates", "prompts/list": b"prompts"}
_VALUE_CHECK: dict[str, Callable[[object], bool]] = {
    "tools/call": lambda v: isinstance(v, CallToolResult),
    "resources/read": lambda v: isinstance(v, ReadResourceResult),
    "prompts/get": lambda v: isinstance(v, GetPromptResult),
    "completion/complete": lambda v: isinstance(v, CompleteResult),
    "ping": lambda v: v is None,
    "server/discover": lambda v: v is None,  # ping in the modern era
    "resources/subscribe": lambda v: v is None,
    "resources/unsubscribe": lambda v: v is None,
    "logging/setLevel": lambda v: v is None,
    "x/custom": lambda v: type(v) is dict,
    **{m: (lambda v: type(v) is list) for m in _LIST_METHODS},
}

# Odd JSON values (raw, so that NaN, lone surrogates and deep nesting can be written).  The
# nasty ones come one time in sixteen, so that a run rarely stops at its first known bug.
WEIRD: tuple[bytes, ...] = (
    b"null", b"true", b"false", b"0", b"-1", b"1.5", b'"x"', b'""', b'"\\u0000\\n"', b"[]",
    b"{}", b"[{}]", b'{"a":[1,{"b":null}]}', b"123456789012345678901234567890",
    b'"file:///tmp/x"', b'{"type":"text","text":"t"}',
)
NASTY: tuple[bytes, ...] = (b'"\\ud800"', b'"\\udc00x"', b"NaN", b"-Infinity", b"1e400",
                            b"9" * 400, b"-" + b"1" * 320)
NESTING = (3, 200, 1200)
SERVER_METHODS = (b'"ping"', b'"sampling/createMessage"', b'"elicitation/create"',
                  b'"roots/list"', b'"tools/call"', b'"no/such"', b"7", b'"tasks/get"',
                  b'"tasks/result"', b'"tasks/list"', b'"tasks/cancel"')
NOTIFY_METHODS = (b'"notifications/message"', b'"notifications/tools/list_changed"',
                  b'"notifications/resources/updated"', b'"notifications/cancelled"',
                  b'"notifications/other"', b'"notifications/progress"',
                  b'"notifications/elicitation/complete"')
#: Task ids the client as a receiver makes (``_Run.task_id``), and one it never made.
TASK_IDS = (b'"t1"', b'"t2"', b'"t3"', b'"nope"', b"7")
#: A URL-mode elicitation (2025-11-25), as a request and as a -32042 error's data.
URL_ELICITATION = (b'{"mode":"url","url":"https://a.example/x","message":"m",'
                   b'"elicitationId":"e1"}')
SERVER_IDS = (b"1", b"2", b'"s-1"', b'"s-2"', b"null", b"1.5", b"true", b'""')

# -- 2026-07-28 pieces --------------------------------------------------------------------------

_SID = b'"io.modelcontextprotocol/subscriptionId"'
_SERVER_INFO = b'"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}'
RESULT_TYPES = (b'"complete"', b'"complete"', b'"input_required"', b'"task"', b'""', b"7",
                b"null", b'"Complete"')
TTLS = (b"0", b"-5", b"1000", b"60000", b"1.5e3", b'"5000"', b"null", b"1e300")
# inputRequests entries: the client can serve the first five, not the rest; the last three
# are malformed (the operation fails without asking the host).
INPUT_ENTRIES = (
    b'{"method":"elicitation/create","params":{"message":"m","requestedSchema":'
    b'{"type":"object","properties":{}}}}',
    b'{"method":"elicitation/create","params":{"mode":"url","message":"m",'
    b'"url":"https://example.com","elicitationId":"e"}}',
    b'{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}',
    b'{"method":"roots/list"}',
    b'{"method":"roots/list","params":{}}',
    b'{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"tools":[]}}',
    b'{"method":"elicitation/create","params":{"mode":"push"}}',
    b'{"method":"no/such"}',
    b'{"params":{}}',
    b'{"method":"roots/list","params":5}',
    b"7",
)
INPUT_KEYS = (b'"a"', b'"b"', b'"k-1"', b'""', b'"\\u00e9"', b'"a"')
REQUEST_STATES = (b'"s"', b'""', b'" {\\"not\\": \\"json\\"} \\u00e9\\n== "', b'"s2"', b"5",
                  b"null")
STREAM_METHODS = (b'"notifications/tools/list_changed"', b'"notifications/prompts/list_changed"',
                  b'"notifications/resources/list_changed"',
                  b'"notifications/resources/updated"', b'"notifications/message"',
                  b'"notifications/other"', b'"notifications/subscriptions/acknowledged"')
MODERN_ERRORS = (
    b'{"code":-32022,"message":"v","data":{"supported":["2026-07-28"],'
    b'"requested":"2026-07-28"}}',
    b'{"code":-32022,"message":"v","data":{"supported":["2025-11-25"]}}',
    b'{"code":-32022,"message":"v","data":{"supported":[]}}',
    b'{"code":-32022,"message":"v","data":{"supported":"2026-07-28"}}',
    b'{"code":-32022,"message":"v"}',
    b'{"code":-32021,"message":"c","data":{"requiredCapabilities":{"sampling":{}}}}',
    b'{"code":-32021,"message":"c","data":[1]}',
    b'{"code":-32020,"message":"h"}',
    b'{"code":-32602,"message":"invalid cursor"}',
    b'{"code":-32601,"message":"no"}',
)
# Answers to the probe that mean "handshake-era server" (any other error, V-22 pre-GA codes).
PROBE_ERRORS = (b"-32601", b"-32602", b"-32603", b"-32000", b"-32001", b"-32004", b"1")
# What respond_with may be given: a result, an error, an exception, a non-object, a non-JSON.
OUTCOMES: tuple[object, ...] = (
    {"action": "accept", "content": {}}, {"roots": []}, RpcError(-1, "User rejected", {"x": 1}),
    RpcError(-2, "no", {"x": float("nan")}), ValueError("boom"), 5, {"x": float("nan")},
)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Each is
# pinned by an xfail(strict=True) test in tests/test_fuzz.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}


def known_bug(exc: BaseException) -> str | None:
    """The KNOWN_BUGS tag of an AssertionError raised by :func:`check`, or None."""
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    for tag, (kind, text) in KNOWN_BUGS.items():
        if isinstance(cause, kind) and text in str(cause):
            return tag
    return None


class Escaped(AssertionError):
    """An exception escaped a session method that must not raise for server input."""


class _Choices:
    """Decisions read from the data, last byte first, cyclically (0 for empty data)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._i = 0

    def byte(self) -> int:
        data = self._data
        if not data:
            return 0
        self._i += 1
        return data[-1 - (self._i - 1) % len(data)]

    def below(self, n: int) -> int:
        return (self.byte() << 8 | self.byte()) % n if n > 256 else self.byte() % n

    def pick(self, seq: tuple[bytes, ...] | list[bytes]) -> bytes:
        return seq[self.below(len(seq))]


class _Run:
    def __init__(self, data: bytes) -> None:
        ch = self.ch = _Choices(data)
        self.opening = OPENINGS[ch.below(len(OPENINGS))]
        self.deferred = ch.below(4) == 0
        self.limit = LIMITS[ch.below(len(LIMITS))]
        self.version = HANDSHAKE_VERSIONS[ch.below(len(HANDSHAKE_VERSIONS))]
        limits = Limits(max_message_size=self.limit, idle_timeout=float(1 + ch.below(30)),
                        request_timeout=float(5 + ch.below(100)), max_pages=1 + ch.below(4),
                        max_list_items=1 + ch.below(8), probe_fallback=(0.5, 2.0)[ch.below(2)],
                        max_input_rounds=1 + ch.below(4))
        # The client as a task receiver, in half the handshake-era runs (2025-11-25).
        self.receiver = self.opening == "legacy" and ch.below(2) == 0
        store = TaskStore(max_tasks=1 + ch.below(4), new_id=self.task_id,
                          wall_offset=0.0) if self.receiver else None
        self.session = ClientSession(Implementation(name="fuzz", version="0"),
                                     capabilities=CLIENT_CAPS, limits=limits,
                                     task_receiver=store)
        # OpenTelemetry's view (issue 26) on every other input, decided without a choice
        # (the corpus keeps its paths): its sink checks each span's life as it goes.
        self.spans: _SpanCheck | None = _SpanCheck() if len(data) % 2 else None
        if self.spans is not None:
            self.session.instrument(Telemetry(self.spans, peer=Peer.stdio(),
                                              capture_content=True))
        self.now = 0.0
        self.outcomes: dict[RequestHandle, int] = {}
        self.first: dict[RequestHandle, str] = {}  # the kind of each handle's outcome
        self.init: RequestHandle | None = None
        self.closed = 0
        self.sent: dict[int, str] = {}  # request id -> method, from data_to_send()
        self.listen_asked: dict[int, bytes] = {}  # listen request id -> its notifications
        self.was_modern = False  # the session's era was modern when the last step began
        self.retry_probe = False  # answer the probe -32022 first (a discover variant)
        self.renewing = False  # started with subscriptions to renew
        self.fallback_at: float | None = None  # when start() would send initialize as well
        self.open_server: set[object] = set()
        self.early_server: set[object] = set()  # ServerRequests seen before the era was modern
        self.last_progress: dict[RequestHandle, float] = {}
        self.retried: set[RequestHandle] = set()  # operations retried in this step
        self.initial_ops_done = False
        self.tasks_made = 0

    def task_id(self) -> str:
        """The receiver's ids: predictable here, so the server's lines can name them."""
        self.tasks_made += 1
        return f"t{self.tasks_made}"

    # -- driving ------------------------------------------------------------------------------

    def step(self, what: str, fn: Callable[[], object]) -> object:
        try:
            result = fn()
        except AssertionError:
            raise
        except Exception as exc:
            raise Escaped(f"{what} raised {type(exc).__name__}: {exc}"[:400]) from exc
        self.observe()
        return result

    def feed(self, data: bytes) -> None:
        self.step("receive_data", lambda: self.session.receive_data(data, now=self.now))
        if self.session.state is not State.CLOSED:
            held = self.session._inbox.reader.framer.buffered
            assert held <= self.limit + 1, f"framer holds {held} bytes, limit {self.limit}"

    def tick(self, dt: float) -> None:
        self.now += dt
        now = self.now
        self.step("handle_timeout", lambda: self.session.handle_timeout(now))
        deadline = self.session.next_deadline()
        assert deadline is None or deadline > now, f"deadline {deadline} <= now {now}"

    def start(self) -> None:
        session = self.session
        ch = self.ch
        if self.opening == "legacy":
            self.init = session.initialize(now=self.now)
        else:
            variant = ch.below(4) if self.opening == "discover-variant" else -1
            era = "modern" if variant == 1 or (variant == -1 and ch.below(4) == 0) else "auto"
            discovered = None
            if variant == 2:  # a remembered modern server: Ready at once (if stale, with a
                # server/discover refresh in the background)
                discovered = Discovered(supported_versions=MODERN_VERSIONS,
                                        capabilities=MODERN_CAPS,
                                        server_info=Implementation(name="s", version="1"),
                                        expires_at=(0.0, 1e9)[ch.below(2)])
            subscriptions = (URI,) if ch.below(4) == 0 else ()
            self.renewing = bool(subscriptions)
            self.init = session.start(now=self.now, era=era, discovered=discovered,
                                      subscriptions=subscriptions)
            self.fallback_at = self.now + session.limits.probe_fallback
            self.retry_probe = variant == 3  # the probe is first answered -32022
        self.outcomes[self.init] = 0
        self.observe()
        remembered = session.state is State.READY
        if remembered:
            assert session.era == "modern", "a remembered discovery did not make it modern"
            refresh = self.last_sent("server/discover")
            if refresh is not None and ch.below(2):  # a stale one: answer its refresh
                self.feed(self.discover_line(str(refresh).encode()) + b"\n")
        if not self.deferred or remembered:
            self.handshake()

    def last_sent(self, method: str) -> int | None:
        ids = [rid for rid, m in self.sent.items() if m == method]
        return max(ids) if ids else None

    def handshake(self) -> None:
        """The canned answer to the opening, once (a no-op unless it is still open): an
        ``initialize`` result, or for ``start()`` what the opening says: a DiscoverResult
        (after a -32022 for one variant), an error, or silence until the fallback."""
        s = self.session
        if s.state not in (State.PROBING, State.INITIALIZING) or self.init is None \
                or self.outcomes[self.init]:
            self.initial_ops()
            return
        if s.state is State.PROBING:
            probe = self.last_sent("server/discover")
            assert probe is not None, "probing without a probe"
            if self.opening in ("discover", "discover-variant"):
                if self.retry_probe and probe == self.init.id:
                    self.retry_probe = False
                    self.feed(b'\n{"jsonrpc":"2.0","id":%d,"error":%s}\n'
                              % (probe, MODERN_ERRORS[0]))
                    retry = self.last_sent("server/discover")
                    assert retry is not None and retry != probe, "-32022 probe not retried"
                    probe = retry
                self.feed(b"\n" + self.discover_line(str(probe).encode()) + b"\n")
                state = _state(s)
                assert state is State.READY and s.era == "modern", f"discovery ended {state}"
                self.initial_ops()
                return
            if self.opening == "probe-error":
                code = self.ch.pick(PROBE_ERRORS)
                self.feed(b'{"jsonrpc":"2.0","id":%d,"error":{"code":%s,"message":"m"}}\n'
                          % (probe, code))
            else:  # silence: the fallback timer sends initialize
                deadline = s.next_deadline()
                assert deadline is not None, "probing without a deadline"
                self.tick(max(0.0, deadline - self.now))
            if s.state is State.PROBING and self.last_sent("initialize") is None:
                return  # the probe's own deadline came first: it is retried below, later
        init = self.last_sent("initialize") if s.era is None else None
        if init is None or init not in s._wire.pending:  # not sent yet, or timed out meanwhile
            self.initial_ops()
            return
        result = {"protocolVersion": self.version, "capabilities": SERVER_CAPS,
                  "serverInfo": {"name": "fuzz-server", "version": "1"}}
        line = json.dumps({"jsonrpc": "2.0", "id": init, "result": result},
                          separators=(",", ":"))
        self.feed(b"\n" + line.encode() + b"\n")
        state = _state(s)
        assert state is State.READY, f"canned handshake ended {state}"
        self.initial_ops()

    def discover_line(self, rid: bytes) -> bytes:
        """A DiscoverResult (no resultType: absent means complete), under 300 bytes."""
        caps = json.dumps(MODERN_CAPS, separators=(",", ":")).encode()
        return (b'{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],'
                b'"capabilities":%s,"_meta":{%s}}}' % (rid, caps, _SERVER_INFO))

    def initial_ops(self) -> None:
        if self.initial_ops_done or self.session.state is not State.READY:
            return
        self.initial_ops_done = True
        now = self.now
        s = self.session
        if "tools" in s.server_capabilities:
            self.track(s.call_tool("echo", {"text": "hi"}, now=now, timeout=50.0))
        self.track(s.list_tools(now=now))
        self.track(s.ping(now=now))

    def track(self, handle: RequestHandle) -> None:
        assert handle not in self.outcomes, f"handle {handle} reused"
        self.outcomes[handle] = 0
        self.observe()

    def issue(self) -> None:
        s = self.session
        if len(self.outcomes) >= MAX_HANDLES:
            return
        now = self.now
        if s.state is State.INITIALIZING:
            self.track(s.ping(now=now))
            return
        if s.state is not State.READY:
            return
        ops: tuple[Callable[[], RequestHandle], ...] = (
            lambda: s.call_tool("t", {"n": 1}, now=now, idle_timeout=2.0, timeout=9.0),
            lambda: s.call_tool("t", None, now=now, progress=False),
            lambda: s.list_tools(now=now),
            lambda: s.list_resources(now=now),
            lambda: s.list_resource_templates(now=now),
            lambda: s.list_prompts(now=now),
            lambda: s.ping(now=now, timeout=3.0),
            lambda: s.read_resource(URI, now=now),
            lambda: s.get_prompt("p", {"a": "b"}, now=now),
            lambda: s.complete({"type": "ref/prompt", "name": "p"}, "a", "b", now=now),
            lambda: s.subscribe(URI, now=now),
            lambda: s.set_logging_level("info", now=now),
            lambda: s.send_request("x/custom", {"k": [1]}, now=now, progress=True),
            lambda: s.call_tool("t", {"n": 2}, now=now, meta={"k": "v"}),
            lambda: s.unsubscribe(URI, now=now),
        )
        if s.server_capabilities not in (SERVER_CAPS, MODERN_CAPS):
            ops = ops[2:7]  # Ready came from a generated line: lists and ping, always allowed
        self.track(ops[self.ch.below(len(ops))]())

    def cancel(self) -> None:
        handles = [h for h in self.outcomes if h != self.init]
        if not handles:
            return
        handle = handles[self.ch.below(len(handles))]
        was_open = self.outcomes[handle] == 0
        done = self.step("cancel", lambda: self.session.cancel(handle, "fuzz"))
        assert done == was_open, f"cancel({handle}) returned {done}, open: {was_open}"

    def respond(self) -> None:
        candidates: list[object] = sorted(self.open_server, key=repr)
        if not candidates or self.ch.below(4) == 0:
            candidates += ["s-1", 1, 99, "input-2-1-a"]
        rid = candidates[self.ch.below(len(candidates))]
        assert type(rid) is str or type(rid) is int
        s = self.session
        was_open = rid in self.open_server and s.state is not State.CLOSED
        how = self.ch.below(8)
        if how == 0:  # an answer that is not JSON: refused, the request stays open
            try:
                ok = self.step("respond", lambda: s.respond(rid, {"x": float("nan")}))
            except Escaped as exc:
                assert was_open and isinstance(exc.__cause__, LocalProtocolError), str(exc)
                return
            assert ok is False and not was_open, f"respond(NaN) to {rid!r} returned {ok}"
            return
        if how <= 2:
            ok = self.step("respond", lambda: s.respond(rid, {"roots": []}, now=self.now))
        elif how <= 4:
            ok = self.step("respond_error", lambda: s.respond_error(rid, -1, "no", {"why": 1}))
        else:
            outcome = OUTCOMES[self.ch.below(len(OUTCOMES))]
            ok = self.step("respond_with", lambda: s.respond_with(rid, outcome, now=self.now))
        assert ok == was_open, f"respond({rid!r}) returned {ok}, open: {was_open}"
        self.open_server.discard(rid)

    # -- generated server lines -------------------------------------------------------------

    def client_id(self) -> bytes:
        ids = sorted(self.sent)
        if not ids or self.ch.below(8) == 0:
            return self.ch.pick((b"0", b"999", b'"2"', b"null", b"2.0", b"-1"))
        return str(ids[-1 - self.ch.below(min(len(ids), 6))]).encode()

    def weird(self) -> bytes:
        if self.ch.below(16) == 0:
            k = self.ch.below(len(NASTY) + len(NESTING))
            if k < len(NASTY):
                return NASTY[k]
            n = NESTING[k - len(NASTY)]
            return b"[" * n + b"]" * n
        return self.ch.pick(WEIRD)

    def odd(self, usual: tuple[bytes, ...]) -> bytes:
        """One of ``usual``, or (one time in sixteen) any odd value."""
        return self.weird() if self.ch.below(16) == 0 else self.ch.pick(usual)

    def result_for(self, rid: bytes) -> bytes:
        method = self.sent.get(int(rid)) if rid.lstrip(b"-").isdigit() else None
        ch = self.ch
        if ch.below(5) == 0:
            return self.weird()
        if method == "initialize":
            version = ch.pick([v.encode() for v in (*HANDSHAKE_VERSIONS, "1999-01-01")])
            info = ch.pick((b'{"name":"s","version":"1"}', b'{"name":1}', b"null"))
            return b'{"protocolVersion":"%s","serverInfo":%s,"capabilities":%s}' % (
                version, info, ch.pick((b"{}", b'{"tools":{}}', b"[]")))
        if method in _LIST_METHODS:
            key = _LIST_METHODS[method]
            item = ch.pick((b'{"name":"n","inputSchema":{},"uri":"u","uriTemplate":"t"}',
                            b'{"name":5}', b"{}", self.weird()))
            cursor = ch.pick((b"", b',"nextCursor":"c1"', b',"nextCursor":"c2"',
                              b',"nextCursor":7', b',"nextCursor":null'))
            return b'{"%s":[%s]%s}' % (key, b",".join([item] * ch.below(4)), cursor)
        if method in ("tools/call", "x/custom"):
            return ch.pick((b'{"content":[{"type":"text","text":"ok"}]}',
                            b'{"content":[],"isError":true}', b'{"structuredContent":{"a":1}}',
                            b'{"content":[{"type":"image"}]}', b'{"content":[%s],"isError":%s}'
                            % (self.weird(), self.weird())))
        if method == "resources/read":
            return b'{"contents":[{"uri":"u","text":%s}]}' % self.weird()
        if method == "prompts/get":
            return b'{"messages":[{"role":"user","content":%s}]}' % self.weird()
        if method == "completion/complete":
            return b'{"completion":{"values":%s}}' % self.weird()
        return ch.pick((b"{}", b'{"_meta":{}}'))

    def message(self, depth: int = 0) -> bytes:
        ch = self.ch
        kind = ch.below(16)
        if kind == 13 and depth > 1:
            kind = 0
        rid = self.client_id()
        if kind <= 3:
            return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (rid, self.result_for(rid))
        if kind == 4:  # id last, as JavaScript servers write it
            return b'{"result":%s,"jsonrpc":"2.0","id":%s}' % (self.result_for(rid), rid)
        if kind == 5:
            code = ch.pick((b"-32601", b"-32603", b"1", b"1.5", b"null", b"true", b"-32042"))
            ident = rid if ch.byte() & 1 else b"null"
            data = ch.pick((self.weird(), b'{"elicitations":[%s,%s]}' % (URL_ELICITATION,
                                                                         self.weird())))
            return b'{"jsonrpc":"2.0","id":%s,"error":{"code":%s,"message":%s,"data":%s}}' % (
                ident, code, self.weird(), data)
        if kind <= 8:
            value = self.odd((b"1", b"2", b"0.5", b"3", b"-1", b"2.5", b"4", b'"5"',
                              b"99999999999999999999999", b"true"))
            return (b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
                    b'{"progressToken":%s,"progress":%s,"total":%s,"message":%s}}'
                    % (rid, value, self.weird(), self.weird()))
        if kind <= 10:
            method = self.odd(SERVER_METHODS)
            params = ch.pick((b"{}", b'{"mode":%s}' % self.weird(), b'{"mode":"url"}',
                              b'{"tools":[]}', self.weird(), URL_ELICITATION,
                              b'{"taskId":%s}' % ch.pick(TASK_IDS),
                              b'{"task":{"ttl":%s},"messages":[],"maxTokens":1}'
                              % ch.pick(TTLS),
                              b'{"task":%s,"message":"m","requestedSchema":{}}'
                              % self.weird(), b'{"cursor":%s}' % self.weird()))
            # Servers number their requests too: their ids often equal ours.
            sid = rid if ch.byte() & 1 else self.odd(SERVER_IDS)
            return b'{"jsonrpc":"2.0","id":%s,"method":%s,"params":%s}' % (sid, method, params)
        if kind == 11:
            params = ch.pick((b'{"requestId":%s,"reason":%s}' % (self.odd(SERVER_IDS),
                                                                  self.weird()),
                              b'{"level":%s,"data":%s,"logger":%s}' % (
                                  self.weird(), self.weird(), self.weird()),
                              b'{"uri":%s}' % self.weird(), self.weird(),
                              b'{"elicitationId":%s}' % ch.pick((b'"e1"', b'"e2"',
                                                                 self.weird()))))
            return b'{"jsonrpc":"2.0","method":%s,"params":%s}' % (ch.pick(NOTIFY_METHODS),
                                                                    params)
        if kind == 12:  # larger than the limit, id at the head or the tail
            pad = b"x" * (self.limit + ch.below(600))
            if ch.byte() & 1:
                return b'{"jsonrpc":"2.0","id":%s,"result":{"p":"%s"}}' % (rid, pad)
            return b'{"result":{"p":"%s"},"id":%s,"jsonrpc":"2.0"}' % (pad, rid)
        if kind == 13:  # a batch
            members = [self.message(depth + 1) if ch.byte() & 3 else self.weird()
                       for _ in range(ch.below(4))]
            return b"[" + b",".join(members) + b"]"
        if kind == 14:  # a near miss
            return ch.pick((b'{"jsonrpc":"1.0","id":%s,"result":{}}' % rid,
                            b'{"jsonrpc":"2.0","id":%s}' % rid,
                            b'{"jsonrpc":"2.0","id":%s,"result":{},"error":{"code":1}}' % rid,
                            b'{"jsonrpc":"2.0","id":%s,"method":null,"result":{}}' % rid,
                            b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (rid, self.weird())))
        return self.weird()

    # -- generated 2026-07-28 lines ----------------------------------------------------------

    def listen_id(self) -> bytes:
        """A subscriptionId: mostly the current listen stream's id, else an older or unknown
        one, or an odd value."""
        ids = sorted(self.listen_asked)
        k = self.ch.below(8)
        if ids and k < 5:
            return str(ids[-1]).encode()
        if ids and k == 5:
            return str(ids[0] if len(ids) > 1 else ids[-1] + 1).encode()
        if ids and k == 6:
            return b'"%d"' % ids[-1]
        return self.odd((b"null", b"999", b"1.5", b'"x"'))

    def accepted(self) -> bytes:
        """The ``notifications`` of an acknowledgement: what was asked, less, or odd."""
        ids = sorted(self.listen_asked)
        asked = self.listen_asked[ids[-1]] if ids else b"{}"
        return self.odd((asked, asked, b"{}", b'{"resourceSubscriptions":["file:///x"]}',
                         b'{"toolsListChanged":true}', b'{"resourceSubscriptions":[1]}'))

    def input_entry(self) -> bytes:
        ch = self.ch
        return INPUT_ENTRIES[ch.below(5)] if ch.below(4) else ch.pick(INPUT_ENTRIES)

    def pending_id(self) -> bytes:
        """Mostly the id of a request still awaiting its answer."""
        pending = sorted(self.session._wire.pending)
        if not pending or self.ch.below(4) == 0:
            return self.client_id()
        return str(pending[self.ch.below(len(pending))]).encode()

    def modern_result(self, rid: bytes) -> bytes:
        """A result with a ``resultType`` (and ``ttlMs``), or an input_required one."""
        ch = self.ch
        method = self.sent.get(int(rid)) if rid.isdigit() else None
        mrtr = method in ("tools/call", "prompts/get", "resources/read")
        kind = b'"input_required"' if mrtr and ch.below(2) else self.odd(RESULT_TYPES)
        if kind == b'"input_required"':
            entries = [b"%s:%s" % (ch.pick(INPUT_KEYS), self.input_entry())
                       for _ in range(ch.below(4))]
            parts = [b'"resultType":"input_required"']
            if entries or ch.below(4) == 0:
                parts.append(b'"inputRequests":{%s}' % b",".join(entries))
            if ch.below(3):
                parts.append(b'"requestState":%s' % self.odd(REQUEST_STATES))
            if ch.below(8) == 0:
                parts.append(b'"ttlMs":%s' % self.odd(TTLS))
            return b"{" + b",".join(parts) + b"}"
        body = self.result_for(rid)
        extra = b'"resultType":%s' % kind
        if ch.below(2):
            extra += b',"ttlMs":%s' % self.odd(TTLS)
        if body == b"{}":
            return b"{%s}" % extra
        return b"{%s,%s" % (extra, body[1:]) if body.startswith(b"{") else body

    def modern_message(self) -> bytes:
        ch = self.ch
        kind = ch.below(12)
        if kind <= 4:
            rid = self.pending_id()
            return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (rid, self.modern_result(rid))
        if kind == 5:
            return b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (self.pending_id(),
                                                             self.odd(MODERN_ERRORS))
        if kind <= 7:  # on the listen stream, or on another one, or on none
            method = ch.pick(STREAM_METHODS)
            if method == b'"notifications/subscriptions/acknowledged"':
                params = b'"notifications":%s' % self.accepted()
            else:
                params = ch.pick((b'"uri":"file:///x"', b'"uri":%s' % self.weird(),
                                  b'"level":"info","data":1', b'"x":1'))
            meta = (b'"_meta":{%s:%s}' % (_SID, self.listen_id()) if ch.below(8)
                    else ch.pick((b'"_meta":{}', b'"_meta":null', b'"_meta":5', b'"y":0')))
            return b'{"jsonrpc":"2.0","method":%s,"params":{%s,%s}}' % (method, params, meta)
        if kind == 8:
            return (b'{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",'
                    b'"params":{"_meta":{%s:%s},"notifications":%s}}'
                    % (_SID, self.listen_id(), self.accepted()))
        if kind == 9:  # the server ends a listen stream (SB-04)
            lid = self.listen_id()
            return ch.pick((
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}'
                % lid,
                b'{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete"}}' % lid,
                b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"gone"}}' % lid))
        if kind == 10:
            return self.discover_line(self.client_id())
        rid = self.client_id()
        return ch.pick((  # request-scoped notifications on the stream; a server request (M-04)
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,'
            b'"progress":%s,"_meta":{%s:%s}}}' % (rid, self.odd((b"1", b"2", b"3")), _SID,
                                                 self.listen_id()),
            b'{"jsonrpc":"2.0","id":"s-%s","method":"elicitation/create","params":{}}' % rid,
            b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % rid))

    def inject(self) -> None:
        modern = self.session.era == "modern" or self.opening != "legacy"
        message = self.modern_message if self.ch.below(2 if modern else 8) == 0 else self.message
        line = b"\n" + message() + self.ch.pick((b"\n", b"\r\n"))
        cut = self.ch.below(len(line) + 1) if self.ch.byte() & 1 else len(line)
        self.feed(line[:cut])
        if cut < len(line):
            self.feed(line[cut:])

    # -- checking -----------------------------------------------------------------------------

    def observe(self) -> None:
        """Check every byte queued for the server and every queued event."""
        s = self.session
        self.retried = set()  # operations retried in this step
        self.check_output(s.data_to_send())  # first: it registers subscription renewals
        init_failed = False
        while (event := s.next_event()) is not None:
            if isinstance(event, Ready | Completed | Failed):
                handle = event.handle
                assert self.closed == 0, f"{event!r} after Closed"[:300]
                assert handle in self.outcomes, f"outcome for unknown handle {handle}"
                assert self.outcomes[handle] == 0, (
                    f"second outcome for {handle} after {self.first[handle]}: {event!r}"[:300])
                self.outcomes[handle] = 1
                self.first[handle] = type(event).__name__
                if isinstance(event, Ready):
                    assert handle == self.init, f"Ready for {handle}"
                    assert event.era == s.era and event.era in ("modern", "legacy"), (
                        f"Ready in era {event.era!r}, session {s.era!r}")
                elif isinstance(event, Failed):
                    assert isinstance(event.error, MCPError), f"Failed with {event.error!r}"
                    init_failed = init_failed or handle == self.init
                else:
                    ok = _VALUE_CHECK.get(handle.method)
                    assert ok is not None and ok(event.value), (
                        f"{handle.method} completed with {event.value!r}"[:300])
            elif isinstance(event, Progress):
                handle = event.handle
                assert self.outcomes.get(handle) == 0, f"Progress for a finished {handle}"
                value = event.progress
                # A retry (MRTR, -32022) has a new progress token: its values start afresh.
                last = None if handle in self.retried else self.last_progress.get(handle)
                assert (type(value) is int or math.isfinite(value)) and (
                    last is None or value > last), (
                    f"progress not finite and increasing: {last!r} then {value!r}")
                self.last_progress[handle] = value
            elif isinstance(event, ServerRequest):
                rid = event.request_id
                assert type(rid) in (str, int), f"ServerRequest id {rid!r}"
                assert rid not in self.open_server, f"ServerRequest id {rid!r} already open"
                assert event.method in ("sampling/createMessage", "elicitation/create",
                                        "roots/list"), f"ServerRequest {event.method!r}"
                if self.was_modern:  # an MRTR input: a synthetic string id (M-04)
                    assert type(rid) is str and rid.startswith("input-"), (
                        f"modern ServerRequest id {rid!r}")
                else:
                    self.early_server.add(rid)
                self.open_server.add(rid)
            elif isinstance(event, ServerRequestCancelled):
                assert event.request_id in self.open_server, f"{event!r} for no open request"
                self.open_server.discard(event.request_id)
            elif isinstance(event, Closed):
                self.closed += 1
                assert self.closed == 1, "a second Closed"
                self.open_server.clear()
            elif isinstance(event, BadMessage):
                assert isinstance(event.error, MCPError)
            elif isinstance(event, SubscriptionEnded):
                assert s.era == "modern", f"{event!r} in era {s.era}"
        if init_failed:
            assert self.closed == 1 and s.state is State.CLOSED, (
                "initialize failed without Closed")
        still_open = sum(1 for n in self.outcomes.values() if n == 0)
        if self.opening == "legacy":
            assert s.pending_count == still_open, (
                f"pending_count {s.pending_count} but {still_open} handles open")
        else:  # the listen stream, a discovery refresh, probe + initialize: not 1:1
            for p in s._wire.pending.values():
                if p.answer.hosted:  # the host's operations and the opening
                    assert self.outcomes.get(p.handle) == 0, (
                        f"{p.method} request {p.handle.id} pending for a handle "
                        f"that is not open: {p.handle}")
        self.was_modern = s.era == "modern"
        for handle in self.retried:  # the retry's progress starts afresh
            self.last_progress.pop(handle, None)

    def check_output(self, out: bytes) -> None:
        if not out:
            return
        assert out.endswith(b"\n"), f"output does not end with a newline: {out[-80:]!r}"
        for raw in out.split(b"\n")[:-1]:
            text = raw.decode("utf-8")  # must be UTF-8
            obj = json.loads(text, parse_constant=_no_constant)
            assert type(obj) is dict and obj.get("jsonrpc") == "2.0", f"sent {raw[:120]!r}"
            msg = decode(obj)  # our own output must be valid JSON-RPC
            if isinstance(msg, Request):
                assert type(msg.id) is int and msg.id not in self.sent, f"request id {msg.id}"
                self.sent[msg.id] = msg.method
                self.check_request(msg)
            elif isinstance(msg, Notification) and msg.method == "notifications/cancelled":
                assert msg.params.get("requestId") in self.sent, f"cancelled {msg.params}"
            elif isinstance(msg, Response | ErrorResponse):
                # A modern session answers nothing (M-04), but a request the server sent while
                # the era was undecided reached the host, who may answer it later.
                assert not self.was_modern or msg.id in self.early_server, (
                    f"a modern session sent a response: {raw[:200]!r}")

    def check_request(self, msg: Request) -> None:
        s = self.session
        rid = msg.id
        assert type(rid) is int
        meta = msg.params.get("_meta")
        version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
        if msg.method == "server/discover" or (s.era == "modern" and msg.method != "initialize"):
            assert type(meta) is dict and version in MODERN_VERSIONS and \
                meta.get(CAPABILITIES_KEY) == MODERN_CLIENT_CAPS, \
                f"{msg.method} _meta {meta!r}"[:300]
        else:
            assert version is None, f"handshake-era {msg.method} with _meta {meta!r}"[:300]
        pending = s._wire.pending.get(rid)
        if pending is not None and pending.handle.id != rid:
            self.retried.add(pending.handle)
        if msg.method == "resources/subscribe" and self.renewing and s.era == "legacy":
            # start(subscriptions=...) renews them with requests of its own, whose handles
            # the host never got but whose outcomes it sees.
            renewal = RequestHandle(rid, msg.method)
            self.outcomes.setdefault(renewal, 0)
        if msg.method == "subscriptions/listen":
            self.listen_asked[rid] = json.dumps(msg.params.get("notifications"),
                                                   separators=(",", ":")).encode()
        if "requestState" in msg.params or "inputResponses" in msg.params:  # an MRTR retry
            assert s.era == "modern", f"MRTR retry in era {s.era}"
            state = msg.params.get("requestState")
            assert state is None or type(state) is str, f"requestState {state!r}"
            if pending is not None:
                assert 0 < pending.rounds <= s.limits.max_input_rounds, (
                    f"MRTR round {pending.rounds} > {s.limits.max_input_rounds}")

    # -- end ----------------------------------------------------------------------------------

    def finish(self) -> None:
        s = self.session
        deadline = s.next_deadline()
        if deadline is not None and self.ch.byte() & 1:
            self.tick(deadline - self.now + 0.001)
        self.step("receive_eof", s.receive_eof)
        assert s.state is State.CLOSED and self.closed == 1, "receive_eof did not close"
        open_handles = [h for h, n in self.outcomes.items() if n != 1]
        assert not open_handles, f"handles without an outcome: {open_handles}"
        assert s.pending_count == 0, f"pending_count {s.pending_count} after EOF"
        deadline = s.next_deadline()
        assert deadline is None, f"next_deadline {deadline} after EOF" + (
            " (the probe fallback timer)" if deadline == self.fallback_at else "")
        s.receive_data(b'{"jsonrpc":"2.0","method":"x"}\n', now=self.now)
        s.handle_timeout(self.now + 1e9)
        assert s.next_event() is None, "an event after EOF"
        assert s.data_to_send() == b"", "output after EOF"
        if self.spans is not None:
            assert not self.spans.live, f"spans never ended: {sorted(map(str, self.spans.live))}"
            assert self.spans.sessions <= 1, "two session durations"
            telemetry = s.telemetry
            assert telemetry is not None and not telemetry._live and not telemetry._by_rid


class _SpanCheck:
    """A span sink that checks what the session's :class:`Telemetry` decides: a span starts
    once, events and its end come only while it is open, durations are not negative, and
    ``error.type`` is set exactly when the status says so."""

    def __init__(self) -> None:
        self.live: set[object] = set()
        self.sessions = 0

    def start(self, span: SpanStart) -> dict[str, str] | None:
        assert span.key not in self.live, f"span {span.key} started twice"
        assert span.attributes.get("mcp.method.name"), span
        assert span.name.split(" ", 1)[0] == span.attributes["mcp.method.name"], span
        self.live.add(span.key)
        return {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"}

    def event(self, event: SpanEvent) -> None:
        assert event.key in self.live, f"event {event.name} of a span not open"

    def end(self, end: SpanEnd) -> None:
        assert end.key in self.live, f"end of a span not open: {end.key}"
        self.live.discard(end.key)
        assert end.duration >= 0 and math.isfinite(end.duration), end
        assert (end.error_type is None) == ("error.type" not in end.attributes), end

    def session_ended(self, end: SessionEnd) -> None:
        self.sessions += 1
        assert end.duration >= 0, end


def _state(session: ClientSession) -> State:
    return session.state  # read afresh (mypy would keep an earlier narrowing)


def _no_constant(name: str) -> object:
    raise AssertionError(f"the client wrote {name}, which is not JSON")


def check(data: bytes) -> None:
    run = _Run(data)
    ch = run.ch
    run.start()
    init_at = ch.below(8)
    pos = 0
    steps = 0
    while pos < len(data) and steps < MAX_STEPS:
        c = ch.byte()
        size = 1 + c % 64 if c < 192 else (c - 191) * 97
        run.feed(data[pos:pos + size])
        pos += size
        steps += 1
        if steps >= init_at:
            run.handshake()
        action = ch.below(12)
        if action <= 3:
            run.inject()
        elif action == 4:
            run.tick(ch.below(20) / 4)
        elif action == 5:
            deadline = run.session.next_deadline()
            if deadline is not None:
                run.tick(max(0.0, deadline - run.now))
        elif action <= 7:
            run.issue()
        elif action == 8:
            run.cancel()
        elif action <= 10:
            run.respond()
    run.handshake()
    run.initial_ops()
    for _ in range(2 + ch.below(10)):
        run.inject()
        k = ch.below(8)
        if k == 0:
            run.tick(ch.below(8))
        elif k <= 2 and run.open_server:
            run.respond()
    run.finish()


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
