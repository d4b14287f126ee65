"""Fuzz harness for :class:`mcp_proto.ClientSession` fed arbitrary server bytes.

``check(data)`` builds a session (client capabilities sampling, elicitation and roots, a
size limit and timeouts chosen from the data, fake time), does the handshake with a canned
``initialize`` result (or, for one input in four, only after part of the data arrived), issues
``tools/call``, ``tools/list`` and ``ping``, then feeds ``data`` in chunks.  Between chunks,
decisions read from the data (from its end backwards) inject JSON-RPC lines aimed at the ids
the client really used (results, errors, progress, oversize answers, batches, server requests,
notifications, with odd values), advance the clock and call ``handle_timeout``, issue more
operations, cancel some, answer server requests.  Finally ``receive_eof``.

Properties (any violation raises AssertionError):

- nothing escapes ``receive_data``, ``receive_eof`` or ``handle_timeout``;
- every handle gets at most one outcome (Ready/Completed/Failed), all get exactly one by the
  end; ``pending_count`` equals the handles still open; a failed ``initialize`` is followed
  by ``Closed``; exactly one ``Closed``, and no outcome after it;
- Completed values have the documented type; Progress only for open handles, strictly
  increasing, finite;
- ServerRequest ids are unique while open; ServerRequestCancelled and ``respond`` agree with
  the set of open server requests; ``cancel`` returns True iff the handle was open;
- ``data_to_send()`` is always UTF-8 NDJSON of JSON-RPC 2.0 objects; request ids are ints,
  never reused; a cancellation names a request that was sent;
- the framer never holds more than max_message_size + 1 bytes after a receive; after
  ``handle_timeout(now)`` the next deadline is later than ``now``.

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
    MCPError,
    Progress,
    ReadResourceResult,
    Ready,
    RequestHandle,
    ServerRequest,
    ServerRequestCancelled,
    State,
)
from mcp_proto._jsonrpc import Notification, Request, decode

CLIENT_CAPS: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True},
    "prompts": {},
    "logging": {},
    "completions": {},
}
LIMITS = (300, 1024, 4096)
MAX_STEPS = 400
MAX_HANDLES = 24

_LIST_METHODS = {"tools/list": b"tools", "resources/list": b"resources",
                 "resources/templates/list": b"resourceTemplates", "prompts/list": b"prompts"}
_VALUE_CHECK: dict[str, Callable[[object], bool]] = {
    "tools/call": lambda v: isinstance(v, CallToolResult),
    "resources/read": lambda v: isinstance(v, ReadResourceResult),
    "prompts/get": lambda v: isinstance(v, GetPromptResult),
    "completion/complete": lambda v: isinstance(v, CompleteResult),
    "ping": lambda v: v is None,
    "resources/subscribe": lambda v: v is None,
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
                  b'"roots/list"', b'"tools/call"', b'"no/such"', b"7")
NOTIFY_METHODS = (b'"notifications/message"', b'"notifications/tools/list_changed"',
                  b'"notifications/resources/updated"', b'"notifications/cancelled"',
                  b'"notifications/other"', b'"notifications/progress"')
SERVER_IDS = (b"1", b"2", b'"s-1"', b'"s-2"', b"null", b"1.5", b"true", b'""')

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
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
        self.deferred = ch.below(4) == 0
        self.limit = LIMITS[ch.below(len(LIMITS))]
        self.version = HANDSHAKE_VERSIONS[ch.below(len(HANDSHAKE_VERSIONS))]
        limits = Limits(max_message_size=self.limit, idle_timeout=float(1 + ch.below(30)),
                        request_timeout=float(5 + ch.below(100)), max_pages=1 + ch.below(4),
                        max_list_items=1 + ch.below(8))
        self.session = ClientSession(Implementation(name="fuzz", version="0"),
                                     capabilities=CLIENT_CAPS, limits=limits)
        self.now = 0.0
        self.outcomes: dict[RequestHandle, int] = {}
        self.init: RequestHandle | None = None
        self.closed = 0
        self.sent: dict[int, str] = {}  # request id -> method, from data_to_send()
        self.open_server: set[object] = set()
        self.last_progress: dict[RequestHandle, float] = {}
        self.initial_ops_done = False

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
            held = self.session._framer.buffered
            assert held <= self.limit + 1, f"framer holds {held} bytes, limit {self.limit}"

    def tick(self, dt: float) -> None:
        self.now += dt
        now = self.now
        self.step("handle_timeout", lambda: self.session.handle_timeout(now))
        deadline = self.session.next_deadline()
        assert deadline is None or deadline > now, f"deadline {deadline} <= now {now}"

    def start(self) -> None:
        session = self.session
        self.init = session.initialize(now=self.now)
        self.outcomes[self.init] = 0
        self.observe()
        if not self.deferred:
            self.handshake()

    def handshake(self) -> None:
        """The canned initialize result, once (a no-op unless initialize is still open)."""
        if self.session.state is not State.INITIALIZING or self.init is None \
                or self.outcomes[self.init]:
            return
        result = {"protocolVersion": self.version, "capabilities": SERVER_CAPS,
                  "serverInfo": {"name": "fuzz-server", "version": "1"}}
        line = json.dumps({"jsonrpc": "2.0", "id": self.init.id, "result": result},
                          separators=(",", ":"))
        self.feed(b"\n" + line.encode() + b"\n")
        state = _state(self.session)
        assert state is State.READY, f"canned handshake ended {state}"
        self.initial_ops()

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
            lambda: s.read_resource("file:///x", now=now),
            lambda: s.get_prompt("p", {"a": "b"}, now=now),
            lambda: s.complete({"type": "ref/prompt", "name": "p"}, "a", "b", now=now),
            lambda: s.subscribe("file:///x", now=now),
            lambda: s.set_logging_level("info", now=now),
            lambda: s.send_request("x/custom", {"k": [1]}, now=now, progress=True),
        )
        if s.server_capabilities != SERVER_CAPS:  # Ready came from a generated line
            ops = ops[2:7]  # lists and ping: allowed whatever the server declared
        self.track(ops[self.ch.below(len(ops))]())

    def cancel(self) -> None:
        handles = [h for h in self.outcomes if h.method != "initialize"]
        if not handles:
            return
        handle = handles[self.ch.below(len(handles))]
        was_open = self.outcomes[handle] == 0
        done = self.step("cancel", lambda: self.session.cancel(handle, "fuzz"))
        assert done == was_open, f"cancel({handle}) returned {done}, open: {was_open}"

    def respond(self) -> None:
        candidates: list[object] = [*sorted(self.open_server, key=repr), "s-1", 1, 99]
        rid = candidates[self.ch.below(len(candidates))]
        assert type(rid) is str or type(rid) is int
        was_open = rid in self.open_server and self.session.state is not State.CLOSED
        if self.ch.byte() & 1:
            ok = self.step("respond", lambda: self.session.respond(rid, {"roots": []}))
        else:
            ok = self.step("respond_error",
                           lambda: self.session.respond_error(rid, -1, "no", {"why": 1}))
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
            code = ch.pick((b"-32601", b"-32603", b"1", b"1.5", b"null", b"true"))
            ident = rid if ch.byte() & 1 else b"null"
            return b'{"jsonrpc":"2.0","id":%s,"error":{"code":%s,"message":%s,"data":%s}}' % (
                ident, code, self.weird(), self.weird())
        if kind <= 8:
            value = self.odd((b"1", b"2", b"0.5", b"3", b"-1", b"2.5", b"4", b'"5"',
                              b"99999999999999999999999", b"true"))
            return (b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
                    b'{"progressToken":%s,"progress":%s,"total":%s,"message":%s}}'
                    % (rid, value, self.weird(), self.weird()))
        if kind <= 10:
            method = self.odd(SERVER_METHODS)
            params = ch.pick((b"{}", b'{"mode":%s}' % self.weird(), b'{"mode":"url"}',
                              b'{"tools":[]}', self.weird()))
            # Servers number their requests too: their ids often equal ours.
            sid = rid if ch.byte() & 1 else self.odd(SERVER_IDS)
            return b'{"jsonrpc":"2.0","id":%s,"method":%s,"params":%s}' % (sid, method, params)
        if kind == 11:
            params = ch.pick((b'{"requestId":%s,"reason":%s}' % (self.odd(SERVER_IDS),
                                                                  self.weird()),
                              b'{"level":%s,"data":%s,"logger":%s}' % (
                                  self.weird(), self.weird(), self.weird()),
                              b'{"uri":%s}' % self.weird(), self.weird()))
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

    def inject(self) -> None:
        line = b"\n" + self.message() + self.ch.pick((b"\n", b"\r\n"))
        cut = self.ch.below(len(line) + 1) if self.ch.byte() & 1 else len(line)
        self.feed(line[:cut])
        if cut < len(line):
            self.feed(line[cut:])

    # -- checking -----------------------------------------------------------------------------

    def observe(self) -> None:
        """Check every queued event and every byte queued for the server."""
        s = self.session
        init_failed = False
        while (event := s.next_event()) is not None:
            if isinstance(event, Ready | Completed | Failed):
                handle = event.handle
                assert self.closed == 0, f"{event!r} after Closed"[:300]
                assert handle in self.outcomes, f"outcome for unknown handle {handle}"
                assert self.outcomes[handle] == 0, f"second outcome for {handle}: {event!r}"[:300]
                self.outcomes[handle] = 1
                if isinstance(event, Ready):
                    assert handle == self.init, f"Ready for {handle}"
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
                last = self.last_progress.get(handle)
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
        if init_failed:
            assert self.closed == 1 and s.state is State.CLOSED, (
                "initialize failed without Closed")
        still_open = sum(1 for n in self.outcomes.values() if n == 0)
        assert s.pending_count == still_open, (
            f"pending_count {s.pending_count} but {still_open} handles open")
        self.check_output(s.data_to_send())

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
            elif isinstance(msg, Notification) and msg.method == "notifications/cancelled":
                assert msg.params.get("requestId") in self.sent, f"cancelled {msg.params}"

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
        assert s.pending_count == 0 and s.next_deadline() is None
        s.receive_data(b'{"jsonrpc":"2.0","method":"x"}\n', now=self.now)
        s.handle_timeout(self.now + 1e9)
        assert s.next_event() is None, "an event after EOF"
        assert s.data_to_send() == b"", "output after EOF"


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
        elif action == 9:
            run.respond()
    run.handshake()
    run.initial_ops()
    for _ in range(2 + ch.below(10)):
        run.inject()
        if ch.below(4) == 0:
            run.tick(ch.below(8))
    run.finish()


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
