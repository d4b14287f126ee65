"""A hypothesis state machine drives a ready ClientSession with arbitrary interleavings of
client calls and server behaviour, against a model of what must happen.

Invariants: every handle ends with exactly one Completed/Failed and never twice;
``pending_count`` and ``next_deadline()`` match the model; request ids strictly increase;
every byte the client writes is NDJSON of JSON-RPC objects; the client answers each server
request at most once and never one the server withdrew; nothing raises but the documented
exceptions.

Hostile inputs included: malformed and oversize server requests whose id equals one of ours,
unhashable ``type``/``mode`` values, deeply nested JSON, answers the host cannot encode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_proto import (
    TASKS_EXTENSION,
    BadMessage,
    CallToolResult,
    Closed,
    Completed,
    ConnectionClosed,
    Failed,
    GetPromptResult,
    HeaderMismatch,
    Limits,
    ListChanged,
    LocalProtocolError,
    LogMessage,
    MessageTooLarge,
    MissingClientCapability,
    OtherNotification,
    Progress,
    ReadResourceResult,
    RemoteProtocolError,
    RequestCancelled,
    RequestHandle,
    RequestId,
    RequestTimeout,
    ResourceUpdated,
    RpcError,
    ServerExited,
    ServerRequest,
    ServerRequestCancelled,
    State,
    SubscriptionEnded,
    UnsupportedProtocolVersion,
)
from mcp_proto.session._modern import (
    CAPABILITIES_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SUBSCRIPTION_ID_KEY,
)
from mcp_proto.wire._jsonrpc import dumps
from tests.fake_server import JSONObj, modern_pair, parse_ndjson, ready_pair

IDLE = 10.0
TOTAL = 30.0
MAX_PAGES = 3
LIMIT = 2048
BIG = "y" * (LIMIT + 500)
OVERSIZE_NOTE = b"<an oversize notification>"
DEEP = b"<deeply nested JSON>"


@dataclass
class Op:
    """The model of one pending operation."""

    handle: RequestHandle
    kind: str  # "call", "ping" or "list"
    wire_id: int
    progress: bool
    total: float
    total_deadline: float
    deadline: float
    idle: float = IDLE
    """Longest silence: IDLE, or the explicit total when that is longer (no idle cut-off
    behind the back of a caller who asked for a long total)."""
    last_progress: float | None = None
    pages: int = 0
    cursors: set[str] = field(default_factory=set)


@dataclass
class Pumped:
    requests: list[JSONObj]
    notes: list[JSONObj]
    responses: list[JSONObj]
    ended: dict[RequestHandle, Completed | Failed]
    others: list[Any]


class SessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.pair = ready_pair(
            capabilities={"sampling": {}, "roots": {"listChanged": True},
                          "elicitation": {"form": {}}},
            limits=Limits(idle_timeout=IDLE, request_timeout=TOTAL, max_pages=MAX_PAGES,
                          max_message_size=LIMIT),
            validate=False,
        )
        self.session = self.pair.session
        self.ops: dict[RequestHandle, Op] = {}
        self.ended: set[RequestHandle] = set()
        self.finished_ids: list[int] = [1]  # the initialize request
        self.max_id = 1
        self.host_requests: set[RequestId] = set()  # ServerRequests the host may answer
        self.withdrawn: set[RequestId] = set()
        self.expect_answers: set[RequestId] = set()  # server ids the client may answer
        self.next_server_id = 0
        self.closed = False
        self.chunk: int | None = None
        self.steps = 0
        self.dropped = 0

    # -- plumbing ----------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.pair.now

    def feed(self, data: bytes) -> None:
        if self.chunk is None:
            self.session.receive_data(data, now=self.now)
        else:
            for i in range(0, len(data), self.chunk):
                self.session.receive_data(data[i:i + self.chunk], now=self.now)

    def send(self, *messages: object) -> None:
        self.feed(b"".join(dumps(m) + b"\n" for m in messages))

    def fresh_server_id(self) -> RequestId:
        self.next_server_id += 1
        n = self.next_server_id
        return n if n % 2 else f"srv-{n}"

    def pump(self) -> Pumped:
        """Collect output and events, checking the generic invariants on each."""
        self.steps += 1
        result = Pumped([], [], [], {}, [])
        for m in parse_ndjson(self.session.data_to_send()):
            if "method" in m and "id" in m:
                assert type(m["id"]) is int and m["id"] > self.max_id, "request id reused"
                self.max_id = m["id"]
                result.requests.append(m)
            elif "method" in m:
                result.notes.append(m)
            else:
                rid = m["id"]
                assert rid in self.expect_answers, f"answered {rid!r} unasked or twice"
                assert rid not in self.withdrawn
                self.expect_answers.discard(rid)
                assert ("result" in m) != ("error" in m)
                result.responses.append(m)
        for event in self.pair.events():
            assert not self.closed or not result.others or \
                not isinstance(result.others[-1], Closed), "event after Closed"
            if isinstance(event, Completed | Failed):
                handle = event.handle
                assert handle not in self.ended, f"{handle} ended twice"
                assert handle in self.ops, f"{handle} ended but was not pending"
                self.ended.add(handle)
                result.ended[handle] = event
                self.finished_ids.append(self.ops.pop(handle).wire_id)
            else:
                result.others.append(event)
        assert self.session.stats.responses_dropped == self.dropped
        return result

    def start(self, handle: RequestHandle, kind: str, progress: bool,
              total: float | None) -> None:
        out = self.pump()
        assert [r["id"] for r in out.requests] == [handle.id]
        assert not (out.notes or out.responses or out.ended or out.others)
        meta = out.requests[0].get("params", {}).get("_meta", {})
        assert (meta.get("progressToken") == handle.id) == progress
        idle = IDLE if total is None else max(IDLE, total)
        total = TOTAL if total is None else total
        self.ops[handle] = Op(handle, kind, handle.id, progress, total, self.now + total,
                              self.now + min(idle, total), idle)

    def pick_op(self, data: st.DataObject) -> Op:
        handles = sorted(self.ops, key=lambda h: h.id)
        return self.ops[data.draw(st.sampled_from(handles), label="op")]

    # -- client operations -------------------------------------------------------------------

    @rule(progress=st.booleans(), total=st.sampled_from([None, 5.0, 20.0]))
    def call_tool(self, progress: bool, total: float | None) -> None:
        if self.closed:
            with pytest.raises(ConnectionClosed):
                self.session.call_tool("t", now=self.now)
            return
        handle = self.session.call_tool("t", {"n": 1}, now=self.now, timeout=total,
                                        progress=progress)
        self.start(handle, "call", progress, total)

    @rule()
    def ping(self) -> None:
        if self.closed:
            with pytest.raises(ConnectionClosed):
                self.session.ping(now=self.now)
            return
        self.start(self.session.ping(now=self.now), "ping", False, None)

    @rule()
    def list_tools(self) -> None:
        if self.closed:
            with pytest.raises(ConnectionClosed):
                self.session.list_tools(now=self.now)
            return
        self.start(self.session.list_tools(now=self.now), "list", False, None)

    @rule(data=st.data(), reason=st.sampled_from([None, "stop"]))
    def cancel(self, data: st.DataObject, reason: str | None) -> None:
        candidates = sorted(set(self.ops) | self.ended, key=lambda h: h.id)
        if not candidates:
            return
        handle = data.draw(st.sampled_from(candidates), label="handle")
        op = self.ops.get(handle)
        assert self.session.cancel(handle, reason) is (op is not None)
        out = self.pump()
        assert not (out.requests or out.responses or out.others)
        if op is None:
            assert not out.notes and not out.ended
            return
        params: JSONObj = {"requestId": op.wire_id}
        if reason:
            params["reason"] = reason
        assert out.notes == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": params}]
        event = out.ended[handle]
        assert isinstance(event, Failed) and isinstance(event.error, RequestCancelled)

    @rule(dt=st.sampled_from([0.5, 2.0, 4.5, 9.5, 10.0, 25.0]))
    def advance(self, dt: float) -> None:
        self.pair.advance(dt)
        due = {h: op for h, op in self.ops.items() if op.deadline <= self.now}
        out = self.pump()
        assert set(out.ended) == set(due)
        for handle, op in due.items():
            event = out.ended[handle]
            assert isinstance(event, Failed) and isinstance(event.error, RequestTimeout)
            if op.deadline >= op.total_deadline:
                assert (event.error.kind, event.error.timeout) == ("total", op.total)
            else:
                assert (event.error.kind, event.error.timeout) == ("idle", op.idle)
        assert sorted(n["params"]["requestId"] for n in out.notes) == \
            sorted(op.wire_id for op in due.values())
        assert all(n["method"] == "notifications/cancelled" for n in out.notes)
        assert not (out.requests or out.responses or out.others)

    # -- server answers ----------------------------------------------------------------------

    @precondition(lambda self: bool(self.ops))
    @rule(data=st.data(),
          variant=st.sampled_from(["ok", "ok", "ok", "error", "malformed", "oversize first",
                                   "oversize last"]))
    def answer(self, data: st.DataObject, variant: str) -> None:
        op = self.pick_op(data)
        rid = op.wire_id
        expect: type[Any] | None = None  # the error type of the Failed, or None: Completed
        next_page: str | None = None
        if variant == "ok":
            if op.kind == "list":
                choices = ["end", "new"] + (["repeat"] if op.cursors else [])
                how = data.draw(st.sampled_from(choices), label="cursor")
                result: JSONObj = {"tools": [{"name": f"t{rid}", "inputSchema": {}}]}
                if how == "new":
                    next_page = f"c{rid}"
                    result["nextCursor"] = next_page
                    if op.pages + 1 >= MAX_PAGES:
                        expect, next_page = RemoteProtocolError, None
                elif how == "repeat":
                    result["nextCursor"] = sorted(op.cursors)[0]
                    expect = RemoteProtocolError
            elif op.kind == "call":
                result = {"content": [{"type": "text", "text": "ok"}]}
            else:
                result = {}
            self.send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif variant == "error":
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "no"}})
            expect = RpcError
        elif variant == "malformed":
            shapes: list[JSONObj] = [
                {"result": []}, {"result": {}, "error": {"code": 1, "message": "m"}},
                {"error": {"code": "x"}}, {"result": {"a": 1}, "jsonrpc": "1.0"},
            ]
            if op.kind == "call":
                shapes += [{"result": {"content": 5}},
                           {"result": {"content": [{"type": ["text"]}]}},
                           {"result": {"content": [{"type": {"x": 1}}]}}]
            if op.kind == "list":
                shapes.append({"result": {"tools": {}}})
            shape = data.draw(st.sampled_from(shapes), label="shape")
            self.send({"jsonrpc": "2.0", "id": rid, **shape})
            expect = RemoteProtocolError
        else:
            result = {"content": [{"type": "text", "text": BIG}]}
            if variant == "oversize first":
                self.send({"jsonrpc": "2.0", "id": rid, "result": result})
            else:
                self.send({"jsonrpc": "2.0", "result": result, "id": rid})
            expect = MessageTooLarge
        out = self.pump()
        assert not (out.notes or out.responses or out.others)
        if next_page is not None:
            assert not out.ended
            [page] = out.requests
            assert page["method"] == "tools/list" and page["params"] == {"cursor": next_page}
            self.finished_ids.append(op.wire_id)
            op.wire_id = page["id"]
            op.pages += 1
            op.cursors.add(next_page)
            op.deadline = min(self.now + op.idle, op.total_deadline)
            return
        assert not out.requests
        event = out.ended[op.handle]
        assert list(out.ended) == [op.handle]
        if expect is None:
            assert isinstance(event, Completed), event
            if op.kind == "call":
                assert isinstance(event.value, CallToolResult)
            elif op.kind == "ping":
                assert event.value is None
            else:
                assert [t.name for t in event.value][-1] == f"t{rid}"
        else:
            assert isinstance(event, Failed) and type(event.error) is expect, event

    @rule(data=st.data(), variant=st.sampled_from(["ok", "error", "string id", "malformed"]))
    def stray_response(self, data: st.DataObject, variant: str) -> None:
        """Edge cases 2 and 3: unknown, finished, timed-out or cancelled ids are dropped."""
        rid: RequestId = data.draw(st.sampled_from([*self.finished_ids, self.max_id + 100]),
                                   label="stray id")
        bad = 0
        if variant == "ok":
            self.send({"jsonrpc": "2.0", "id": rid, "result": {"content": []}})
        elif variant == "error":
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": "late"}})
        elif variant == "string id":
            self.send({"jsonrpc": "2.0", "id": str(rid), "result": {}})
        else:
            self.send({"jsonrpc": "2.0", "id": rid, "result": [1]})
            bad = 1
        if not self.closed:
            self.dropped += 1 - bad
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        assert len(out.others) == (0 if self.closed else bad)
        assert all(isinstance(e, BadMessage) for e in out.others)

    @rule(data=st.data(), value=st.sampled_from([0, 1, 2.5, 3, 10]))
    def progress(self, data: st.DataObject, value: float) -> None:
        live = sorted(h.id for h, op in self.ops.items() if op.progress)
        stale: list[object] = [self.max_id + 7, "1", *self.finished_ids[-3:]]
        use_live = bool(live) and data.draw(st.booleans(), label="live token")
        tokens: list[object] = list(live) if use_live else stale
        token = data.draw(st.sampled_from(tokens), label="token")
        dropped_before = self.session.stats.progress_dropped
        self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": value}})
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        op = next((o for o in self.ops.values() if o.progress and o.handle.id == token), None)
        if op is None or self.closed:
            assert out.others == []
            assert self.session.stats.progress_dropped == dropped_before + (not self.closed)
            return
        op.deadline = min(self.now + op.idle, op.total_deadline)
        if op.last_progress is None or value > op.last_progress:
            op.last_progress = value
            assert out.others == [Progress(handle=op.handle, progress=value)]
        else:
            assert out.others == []
            assert self.session.stats.progress_dropped == dropped_before + 1

    # -- server requests and notifications ---------------------------------------------------

    @rule()
    def server_ping(self) -> None:
        rid = self.fresh_server_id()
        if not self.closed:
            self.expect_answers.add(rid)
        self.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        out = self.pump()
        assert not (out.requests or out.notes or out.ended or out.others)
        assert out.responses == ([] if self.closed else
                                 [{"jsonrpc": "2.0", "id": rid, "result": {}}])

    @rule(method=st.sampled_from(["sampling/createMessage", "roots/list", "elicitation/create",
                                  "elicitation/create bad mode", "elicitation/create url",
                                  "sampling/createMessage tools", "tools/list", "x/y"]))
    def server_request(self, method: str) -> None:
        rid = self.fresh_server_id()
        code = 0  # 0: reaches the host
        params: JSONObj = {}
        if method.startswith("sampling"):
            params = {"messages": [], "maxTokens": 5}
            if method.endswith("tools"):  # sampling.tools was not declared (F-02)
                params["tools"] = []
                code = -32602
        elif method.startswith("elicitation"):
            if method.endswith("bad mode"):
                params["mode"] = ["url"]
                code = -32602
            elif method.endswith("url"):  # only form was declared (F-03)
                params["mode"] = "url"
                code = -32602
        elif method != "roots/list":
            code = -32601
        method = method.split(maxsplit=1)[0]
        if not self.closed:
            self.expect_answers.add(rid)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        out = self.pump()
        assert not (out.requests or out.notes or out.ended)
        if self.closed:
            assert not (out.responses or out.others)
        elif code == 0:
            assert out.others == [ServerRequest(request_id=rid, method=method, params=params)]
            assert not out.responses
            self.host_requests.add(rid)
        else:
            assert not out.others
            [answer] = out.responses
            assert answer["id"] == rid and answer["error"]["code"] == code

    @rule(data=st.data(), how=st.sampled_from(["bad method", "bad params", "oversize first",
                                               "oversize last"]))
    def colliding_bad_server_request(self, data: st.DataObject, how: str) -> None:
        """A broken server request whose id equals one of our pending ids never touches our
        request: it is a BadMessage, nothing else."""
        ids = sorted(op.wire_id for op in self.ops.values()) or [self.max_id]
        rid = data.draw(st.sampled_from(ids), label="colliding id")
        message: JSONObj
        if how == "bad method":
            message = {"jsonrpc": "2.0", "id": rid, "method": 5}
        elif how == "bad params":
            message = {"jsonrpc": "2.0", "id": rid, "method": "roots/list", "params": [1]}
        elif how == "oversize first":
            message = {"jsonrpc": "2.0", "id": rid, "method": "sampling/createMessage",
                       "params": {"systemPrompt": BIG}}
        else:
            message = {"jsonrpc": "2.0", "method": "sampling/createMessage",
                       "params": {"systemPrompt": BIG}, "id": rid}
        self.send(message)
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        assert [type(e) for e in out.others] == ([] if self.closed else [BadMessage])

    @rule(data=st.data(), how=st.sampled_from(["result", "error", "not JSON"]))
    def host_answers(self, data: st.DataObject, how: str) -> None:
        candidates = sorted(self.host_requests | self.withdrawn, key=str)
        if not candidates:
            return
        rid = data.draw(st.sampled_from(candidates), label="server request")
        outstanding = rid in self.host_requests
        if how == "not JSON":
            if outstanding:  # a local error; the request stays open
                with pytest.raises(LocalProtocolError):
                    self.session.respond(rid, {"roots": [float("nan")]})
            else:
                assert self.session.respond(rid, {"roots": [float("nan")]}) is False
            out = self.pump()
            assert not (out.requests or out.notes or out.responses or out.ended or out.others)
            return
        if how == "error":
            done = self.session.respond_error(rid, -1, "refused")
        else:
            done = self.session.respond(rid, {"roots": []})
        assert done is outstanding
        self.host_requests.discard(rid)
        out = self.pump()
        assert not (out.requests or out.notes or out.ended or out.others)
        assert [m["id"] for m in out.responses] == ([rid] if outstanding else [])

    @rule(data=st.data())
    def server_cancels(self, data: st.DataObject) -> None:
        candidates = [*sorted(self.host_requests, key=str), "never-sent"]
        rid = data.draw(st.sampled_from(candidates), label="cancelled")
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": rid, "reason": "changed my mind"}})
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        if rid in self.host_requests and not self.closed:
            assert out.others == [ServerRequestCancelled(request_id=rid,
                                                         reason="changed my mind")]
            self.host_requests.discard(rid)
            self.withdrawn.add(rid)
            self.expect_answers.discard(rid)
        else:
            assert out.others == []

    @rule(method=st.sampled_from(["notifications/message", "notifications/tools/list_changed",
                                  "notifications/unknown"]))
    def notification(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method,
                   "params": {"level": "info", "data": "d"}})
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        expected = {"notifications/message": LogMessage,
                    "notifications/tools/list_changed": ListChanged,
                    "notifications/unknown": OtherNotification}[method]
        assert [type(e) for e in out.others] == ([] if self.closed else [expected])

    @rule(line=st.one_of(
        st.sampled_from([
            b"not json", b"\xff\xfe", b"[1,2]", b"{}", b'{"jsonrpc":"2.0"}', b'"s"', b"42",
            b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}',
            b'{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}',
            b'{"jsonrpc":"2.0","method":"x","params":[]}',
            b'{"jsonrpc":"2.0","id":"s","method":5}',
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
            OVERSIZE_NOTE, DEEP,
        ]),
        st.binary(min_size=1, max_size=30).map(
            lambda b: b.replace(b"\n", b"").replace(b"{", b"").replace(b"[", b"") + b"!"),
    ))
    def garbage(self, line: bytes) -> None:
        """Edge case 11 and J-05 (no batches in 2025-11-25): reported, nothing else."""
        bad_before = self.session.stats.bad_messages
        if line == OVERSIZE_NOTE:
            line = (b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
                    + BIG.encode() + b'"}}')
        elif line == DEEP:
            line = b"[" * 50_000 + b"]" * 50_000
        self.feed(line + b"\n")
        out = self.pump()
        assert not (out.requests or out.notes or out.responses or out.ended)
        assert [type(e) for e in out.others] == ([] if self.closed else [BadMessage])
        assert self.session.stats.bad_messages == bad_before + (not self.closed)

    @rule(chunk=st.sampled_from([None, None, 1, 7, 256]))
    def set_chunking(self, chunk: int | None) -> None:
        self.chunk = chunk

    @precondition(lambda self: self.steps > 25 and not self.closed)
    @rule(how=st.sampled_from(["lost", "close", "eof"]))
    def end_connection(self, how: str) -> None:
        error: Any
        if how == "lost":
            error = ServerExited(1, "bye")
            self.session.connection_lost(error)
        elif how == "close":
            error = None
            self.session.close()
        else:
            error = "eof"
            self.session.receive_eof()
        pending = set(self.ops)
        out = self.pump()
        assert set(out.ended) == pending
        for event in out.ended.values():
            assert isinstance(event, Failed)
            if how == "lost":
                assert event.error is error
            else:
                assert isinstance(event.error, ConnectionClosed)
        [closed] = out.others
        assert isinstance(closed, Closed)
        assert (closed.error is None) == (how == "close")
        self.closed = True
        self.host_requests.clear()
        self.expect_answers.clear()
        assert self.session.state is State.CLOSED

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def model_matches(self) -> None:
        assert self.session.pending_count == len(self.ops)
        deadline = min((op.deadline for op in self.ops.values()), default=None)
        assert self.session.next_deadline() == deadline
        assert self.session.state is (State.CLOSED if self.closed else State.READY)


SessionMachine.TestCase.settings = settings(
    max_examples=200, stateful_step_count=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_session_state_machine = SessionMachine.TestCase


# -- the 2026-07-28 era ------------------------------------------------------------------------
#
# A second machine drives a ready *modern* session (server/discover answered, the listen stream
# acknowledged): tools/call, prompts/get and resources/read answered complete, input_required
# (MRTR) or with an unknown resultType; the host answering, refusing or failing to encode the
# inputs; cancels while gathering or while a retry is in flight; -32022/-32021/-32020 errors;
# clock advances; late answers to replaced ids; notifications on the listen stream with the
# right or a wrong subscriptionId; ttl caching of resources/read.
#
# Invariants: every handle ends exactly once (all by EOF, at teardown); request ids strictly
# increase, so MRTR and -32022 retries use fresh ids never reused; each retry carries the
# original params, this round's inputResponses and exactly the requestState given (never one
# that was not given); rounds are bounded by Limits.max_input_rounds; every request carries the
# _meta protocol version, client capabilities and current log level; the client never writes
# a response; pending_count and next_deadline() match the model.

M_IDLE = 10.0
M_TOTAL = 30.0
M_ROUNDS = 3
M_CLIENT_CAPS: JSONObj = {"sampling": {}, "elicitation": {"form": {}}, "roots": {}}
M_SERVER_CAPS: JSONObj = {"tools": {"listChanged": True}, "prompts": {}, "resources": {}}
M_URI = "file:///r"
INPUTS: dict[str, tuple[JSONObj, JSONObj]] = {  # method -> (params, the host's answer)
    "elicitation/create": (
        {"message": "name?", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string"}}}},
        {"action": "accept", "content": {"name": "octocat"}}),
    "sampling/createMessage": (
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
         "maxTokens": 5},
        {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}),
    "roots/list": ({}, {"roots": []}),
}
UNSERVED_INPUT: JSONObj = {"method": "elicitation/create", "params": {  # url: not declared
    "mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}}
STATES = [None, "s", "", ' {"not": "json"} \u00e9\n== ']
FINAL: dict[str, JSONObj] = {
    "tools/call": {"content": [{"type": "text", "text": "ok"}]},
    "prompts/get": {"messages": []},
    "resources/read": {"contents": [{"uri": M_URI, "text": "x"}]},
}
VALUE_TYPES: dict[str, type[Any]] = {"tools/call": CallToolResult, "prompts/get": GetPromptResult,
                                     "resources/read": ReadResourceResult}


@dataclass
class MOp:
    """The model of one modern operation."""

    handle: RequestHandle
    params: JSONObj  # as the caller gave them (what every retry starts from)
    progress: bool
    wire_id: int | None  # None while its inputs are gathered (nothing on the wire)
    last_params: JSONObj  # what the request on the wire carried, _meta aside
    deadline: float = math.inf
    total_deadline: float = math.inf
    rounds: int = 0
    retried: bool = False  # the request on the wire is already a -32022 retry
    state: str | None = None  # this round's requestState
    inputs: dict[RequestId, tuple[str, str]] = field(default_factory=dict)
    """The open inputs: synthetic request id -> (inputRequests key, method)."""
    answers: JSONObj = field(default_factory=dict)
    last_progress: float | None = None

    @property
    def method(self) -> str:
        return self.handle.method


class ModernSessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.pair = modern_pair(
            capabilities=M_CLIENT_CAPS, server_caps=M_SERVER_CAPS,
            limits=Limits(idle_timeout=M_IDLE, request_timeout=M_TOTAL,
                          max_input_rounds=M_ROUNDS),
            validate=False)
        self.session = self.pair.session
        assert self.pair.listen is not None  # tools.listChanged: one acknowledged stream
        self.listen_id: int = self.pair.listen["id"]
        self.listening = True  # until the server ends the stream (SB-04)
        self.max_id = self.listen_id
        self.ops: dict[RequestHandle, MOp] = {}
        self.ended: set[RequestHandle] = set()
        self.old_ids: list[int] = [1]  # ids whose answers must now be dropped
        self.stale_inputs: list[RequestId] = ["input-999-1-a"]  # answered, withdrawn, unknown
        self.log_level: str | None = None
        self.cache_until = -math.inf  # resources/read of M_URI is cached until then
        self.dropped = 0
        self.notes_dropped = 0
        self.calls = 0

    @property
    def now(self) -> float:
        return self.pair.now

    # -- plumbing ----------------------------------------------------------------------------

    def send(self, *messages: object) -> None:
        self.pair.feed(b"".join(dumps(m) + b"\n" for m in messages))

    def pump(self) -> Pumped:
        result = Pumped([], [], [], {}, [])
        for m in parse_ndjson(self.session.data_to_send()):
            assert "result" not in m and "error" not in m, f"a modern client answered: {m}"
            if "id" in m:
                assert type(m["id"]) is int and m["id"] > self.max_id, "request id reused"
                self.max_id = m["id"]
                meta = m["params"]["_meta"]
                assert meta[PROTOCOL_VERSION_KEY] == "2026-07-28", meta
                assert meta[CAPABILITIES_KEY] == {**M_CLIENT_CAPS,  # TX-01, declared always
                                                  "extensions": {TASKS_EXTENSION: {}}}, meta
                assert meta.get(LOG_LEVEL_KEY) == self.log_level, meta
                result.requests.append(m)
            else:
                result.notes.append(m)
        for event in self.pair.events():
            if isinstance(event, Completed | Failed):
                handle = event.handle
                assert handle not in self.ended, f"{handle} ended twice"
                assert handle in self.ops, f"{handle} ended but was not open"
                self.ended.add(handle)
                result.ended[handle] = event
                op = self.ops.pop(handle)
                if op.wire_id is not None:
                    self.old_ids.append(op.wire_id)
                self.stale_inputs.extend(op.inputs)
            else:
                result.others.append(event)
        assert self.session.stats.responses_dropped == self.dropped
        assert self.session.stats.notifications_dropped == self.notes_dropped
        return result

    def sent_request(self, op: MOp, out: Pumped, params: JSONObj, first: bool = False) -> None:
        """``out`` holds exactly one request: ``op``'s next one, carrying ``params``.  A retry
        (MRTR or -32022) keeps the operation's total deadline and gets a new idle one."""
        [request] = out.requests
        assert request["method"] == op.method
        body = {k: v for k, v in request["params"].items() if k != "_meta"}
        assert body == params, (body, params)
        token = request["params"]["_meta"].get("progressToken")
        assert token == (request["id"] if op.progress else None)
        if op.wire_id is not None:
            self.old_ids.append(op.wire_id)
        op.wire_id = request["id"]
        op.last_params = params
        if first:
            op.total_deadline = self.now + M_TOTAL
        op.deadline = min(self.now + M_IDLE, op.total_deadline)
        if first:  # progress never goes backwards for a handle, across its re-sends
            op.last_progress = None

    def retry_params(self, op: MOp) -> JSONObj:
        """MR-01: the caller's params, this round's answers, the exact requestState."""
        params = dict(op.params)
        if op.answers:
            params["inputResponses"] = op.answers
        if op.state is not None:
            params["requestState"] = op.state
        return params

    def on_wire(self) -> list[MOp]:
        return sorted((op for op in self.ops.values() if op.wire_id is not None),
                      key=lambda op: op.handle.id)

    def gathering(self) -> list[MOp]:
        return sorted((op for op in self.ops.values() if op.wire_id is None),
                      key=lambda op: op.handle.id)

    def reply(self, op: MOp, result: JSONObj) -> None:
        self.send({"jsonrpc": "2.0", "id": op.wire_id, "result": result})

    # -- client operations -------------------------------------------------------------------

    @rule(kind=st.sampled_from(["tools/call", "prompts/get", "resources/read"]))
    def start(self, kind: str) -> None:
        self.calls += 1
        s = self.session
        params: JSONObj
        if kind == "tools/call":
            params = {"name": "t", "arguments": {"n": self.calls}}
            handle = s.call_tool("t", {"n": self.calls}, now=self.now)
        elif kind == "prompts/get":
            params = {"name": "p", "arguments": {"a": str(self.calls)}}
            handle = s.get_prompt("p", {"a": str(self.calls)}, now=self.now)
        else:
            params = {"uri": M_URI}
            handle = s.read_resource(M_URI, now=self.now)
        op = MOp(handle, params, kind == "tools/call", None, params)
        self.ops[handle] = op
        out = self.pump()
        assert not (out.notes or out.others)
        if kind == "resources/read" and self.now < self.cache_until:  # S-02: no round trip
            assert not out.requests
            event = out.ended[handle]
            assert isinstance(event, Completed) and isinstance(event.value, ReadResourceResult)
            return
        assert not out.ended
        self.sent_request(op, out, params, first=True)
        assert op.wire_id == handle.id

    @rule(level=st.sampled_from(["debug", "info", "error"]))
    def set_level(self, level: str) -> None:
        """G-11: the level rides on every later request (retries included), nothing is sent."""
        handle = self.session.set_logging_level(level, now=self.now)
        self.log_level = level
        assert self.pair.events() == [Completed(handle=handle, value=None)]
        assert self.session.data_to_send() == b""

    @rule(data=st.data(), reason=st.sampled_from([None, "stop"]))
    def cancel(self, data: st.DataObject, reason: str | None) -> None:
        candidates = sorted(set(self.ops) | self.ended, key=lambda h: h.id)
        if not candidates:
            return
        handle = data.draw(st.sampled_from(candidates), label="handle")
        op = self.ops.get(handle)
        assert self.session.cancel(handle, reason) is (op is not None)
        out = self.pump()
        assert not out.requests
        if op is None:
            assert not (out.notes or out.ended or out.others)
            return
        event = out.ended[handle]
        assert isinstance(event, Failed) and isinstance(event.error, RequestCancelled)
        if op.wire_id is None:  # gathering: the open inputs are withdrawn, nothing is sent
            assert not out.notes
            assert {e.request_id for e in out.others if isinstance(e, ServerRequestCancelled)} \
                == set(op.inputs)
            assert len(out.others) == len(op.inputs)
            return
        assert not out.others
        params: JSONObj = {"requestId": op.wire_id}
        if reason:
            params["reason"] = reason
        assert out.notes == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": params}]

    @rule(dt=st.sampled_from([0.5, 4.5, 9.5, 10.0, 25.0]))
    def advance(self, dt: float) -> None:
        """Requests on the wire time out (idle or total) with a cancellation; a call whose
        inputs are still gathered keeps its total deadline and times out without one, its
        open inputs withdrawn."""
        self.pair.advance(dt)
        due = {op.handle: op for op in self.on_wire() if op.deadline <= self.now}
        gathering = {op.handle: op for op in self.gathering()
                     if op.total_deadline <= self.now}
        out = self.pump()
        assert set(out.ended) == set(due) | set(gathering)
        for handle, event in out.ended.items():
            assert isinstance(event, Failed) and isinstance(event.error, RequestTimeout)
            assert handle not in gathering or event.error.kind == "total"
        assert sorted(n["params"]["requestId"] for n in out.notes) == \
            sorted(op.wire_id for op in due.values() if op.wire_id is not None)
        withdrawn = [e.request_id for e in out.others if isinstance(e, ServerRequestCancelled)]
        assert len(withdrawn) == len(out.others)
        assert sorted(withdrawn, key=str) == sorted(
            (rid for op in gathering.values() for rid in op.inputs), key=str)
        assert not out.requests

    # -- server answers ----------------------------------------------------------------------

    @precondition(lambda self: bool(self.on_wire()))
    @rule(data=st.data(), result_type=st.sampled_from(["complete", None]),
          ttl=st.sampled_from([None, 0, 5000]))
    def answer_complete(self, data: st.DataObject, result_type: str | None,
                        ttl: int | None) -> None:
        op = data.draw(st.sampled_from(self.on_wire()), label="op")
        result = dict(FINAL[op.method])
        if result_type is not None:
            result["resultType"] = result_type
        if ttl is not None:
            result["ttlMs"] = ttl
        self.reply(op, result)
        out = self.pump()
        assert not (out.requests or out.notes or out.others)
        event = out.ended[op.handle]
        assert isinstance(event, Completed) and type(event.value) is VALUE_TYPES[op.method]
        if op.method == "resources/read" and ttl and op.rounds == 0:  # MR-02
            self.cache_until = self.now + ttl / 1000

    @precondition(lambda self: bool(self.on_wire()))
    @rule(data=st.data(), count=st.sampled_from([0, 1, 1, 2, 2]),
          state=st.sampled_from(STATES), unserved=st.sampled_from([False] * 7 + [True]))
    def answer_input_required(self, data: st.DataObject, count: int, state: str | None,
                              unserved: bool) -> None:
        op = data.draw(st.sampled_from(self.on_wire()), label="op")
        methods = data.draw(st.lists(st.sampled_from(sorted(INPUTS)), min_size=count,
                                     max_size=count), label="input methods")
        requests: JSONObj = {f"k{i}": {"method": m, "params": INPUTS[m][0]}
                             for i, m in enumerate(methods)}
        if unserved:
            requests["url"] = UNSERVED_INPUT
        result: JSONObj = {"resultType": "input_required"}
        if requests:
            result["inputRequests"] = requests
        if state is not None:
            result["requestState"] = state
        self.reply(op, result)
        out = self.pump()
        assert not out.notes
        if op.rounds >= M_ROUNDS or unserved or not (requests or state is not None):
            # Past the bound, input the client cannot give, or nothing to retry with.
            assert not (out.requests or out.others)
            event = out.ended[op.handle]
            assert isinstance(event, Failed) and type(event.error) is RemoteProtocolError
            return
        assert not out.ended
        op.rounds += 1
        op.state, op.answers, op.retried = state, {}, False
        if not requests:  # load shedding: retried at once with the state
            assert not out.others
            self.sent_request(op, out, self.retry_params(op))
            return
        assert not out.requests
        assert op.wire_id is not None
        self.old_ids.append(op.wire_id)
        op.wire_id = None
        op.inputs = {}
        assert len(out.others) == len(requests)
        for event, (key, entry) in zip(out.others, requests.items(), strict=True):
            assert isinstance(event, ServerRequest)
            assert type(event.request_id) is str and event.request_id not in self.stale_inputs
            assert (event.method, event.params) == (entry["method"], entry["params"])
            assert event.request_id not in op.inputs
            op.inputs[event.request_id] = (key, event.method)

    @precondition(lambda self: bool(self.on_wire()))
    @rule(data=st.data(), kind=st.sampled_from(["task", "", 7, "Complete", {"a": 1}]))
    def answer_unknown_result_type(self, data: st.DataObject, kind: object) -> None:
        """M-07: an unknown resultType fails that request only."""
        op = data.draw(st.sampled_from(self.on_wire()), label="op")
        self.reply(op, {"resultType": kind, **FINAL[op.method]})
        out = self.pump()
        assert not (out.requests or out.notes or out.others)
        event = out.ended[op.handle]
        assert isinstance(event, Failed) and type(event.error) is RemoteProtocolError

    @precondition(lambda self: bool(self.on_wire()))
    @rule(data=st.data(), code=st.sampled_from([-32022, -32022, -32021, -32020, -32000]),
          mutual=st.booleans())
    def answer_error(self, data: st.DataObject, code: int, mutual: bool) -> None:
        op = data.draw(st.sampled_from(self.on_wire()), label="op")
        error: JSONObj = {"code": code, "message": "no"}
        if code == -32022:
            error["data"] = {"supported": ["2026-07-28" if mutual else "2025-11-25"],
                             "requested": "2026-07-28"}
        elif code == -32021:
            error["data"] = {"requiredCapabilities": {"sampling": {"tools": {}}}}
        self.send({"jsonrpc": "2.0", "id": op.wire_id, "error": error})
        out = self.pump()
        assert not (out.notes or out.others)
        if code == -32022 and mutual and not op.retried:  # V-11: once, with a new id
            assert not out.ended  # the same request: an MRTR retry keeps its state and answers
            self.sent_request(op, out, op.last_params)
            op.retried = True
            return
        assert not out.requests
        event = out.ended[op.handle]
        assert isinstance(event, Failed)
        expected = {-32022: UnsupportedProtocolVersion, -32021: MissingClientCapability,
                    -32020: HeaderMismatch}.get(code, RpcError)
        assert type(event.error) is expected and event.error.code == code

    @precondition(lambda self: bool(self.gathering()))
    @rule(data=st.data(), how=st.sampled_from(["respond", "respond", "respond_with",
                                               "error", "rpc error", "not JSON"]),
          stale=st.sampled_from([False, False, False, True]))
    def host_answers(self, data: st.DataObject, how: str, stale: bool) -> None:
        """The host answers an input (or one answered, withdrawn or never asked)."""
        open_inputs = {rid: op for op in self.gathering() for rid in op.inputs}
        candidates = self.stale_inputs[-3:] if stale else sorted(open_inputs, key=str)
        rid = data.draw(st.sampled_from(candidates), label="input")
        op = open_inputs.get(rid)
        s = self.session
        if how == "not JSON":  # refused locally; the input stays open
            if op is not None:
                with pytest.raises(LocalProtocolError):
                    s.respond(rid, {"x": float("nan")})
            else:
                assert s.respond(rid, {"x": float("nan")}) is False
            out = self.pump()
            assert not (out.requests or out.notes or out.ended or out.others)
            return
        answer = INPUTS[op.inputs[rid][1] if op is not None else "roots/list"][1]
        if how == "respond":
            done = s.respond(rid, answer, now=self.now)
        elif how == "respond_with":
            done = s.respond_with(rid, answer, now=self.now)
        elif how == "error":
            done = s.respond_error(rid, -1, "User rejected", {"why": 1})
        else:
            done = s.respond_with(rid, RpcError(-2, "handler said no"))
        assert done is (op is not None)
        out = self.pump()
        assert not out.notes
        if op is None:
            assert not (out.requests or out.ended or out.others)
            return
        key, _method = op.inputs.pop(rid)
        self.stale_inputs.append(rid)
        if how in ("error", "rpc error"):  # MRTR has no error answer: the operation fails
            assert not out.requests
            event = out.ended[op.handle]
            assert isinstance(event, Failed) and isinstance(event.error, RpcError)
            assert event.error.code == (-1 if how == "error" else -2)
            withdrawn = [e.request_id for e in out.others]
            assert all(isinstance(e, ServerRequestCancelled) for e in out.others)
            assert sorted(withdrawn, key=str) == sorted(op.inputs, key=str)
            return
        assert not (out.ended or out.others)
        op.answers[key] = answer
        if op.inputs:
            assert not out.requests  # not until every input is answered
            return
        self.sent_request(op, out, self.retry_params(op))

    @rule(data=st.data(), variant=st.sampled_from(["complete", "input_required", "error"]))
    def stale_answer(self, data: st.DataObject, variant: str) -> None:
        """A late answer to a replaced (MRTR / -32022 retried), finished or cancelled id is
        dropped: it never reaches the operation now using another id."""
        rid = data.draw(st.sampled_from(self.old_ids[-6:]), label="old id")
        if variant == "error":
            self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "x"}})
        else:
            result: JSONObj = ({"resultType": "input_required", "requestState": "late"}
                               if variant == "input_required" else {"content": []})
            self.send({"jsonrpc": "2.0", "id": rid, "result": result})
        self.dropped += 1
        out = self.pump()
        assert not (out.requests or out.notes or out.ended or out.others)

    @rule(data=st.data(), value=st.sampled_from([1, 2, 2.5, 5]))
    def progress(self, data: st.DataObject, value: float) -> None:
        live = [op for op in self.on_wire() if op.progress]
        tokens: list[int] = [op.wire_id for op in live if op.wire_id is not None]
        token = data.draw(st.sampled_from(tokens + self.old_ids[-3:]), label="token")
        before = self.session.stats.progress_dropped
        self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": value}})
        out = self.pump()
        assert not (out.requests or out.notes or out.ended)
        op = next((o for o in live if o.wire_id == token), None)
        if op is None:
            assert out.others == []
            assert self.session.stats.progress_dropped == before + 1
            return
        op.deadline = min(self.now + M_IDLE, op.total_deadline)
        if op.last_progress is None or value > op.last_progress:
            op.last_progress = value
            assert out.others == [Progress(handle=op.handle, progress=value)]
        else:
            assert out.others == []

    @rule(method=st.sampled_from(["notifications/tools/list_changed",
                                  "notifications/prompts/list_changed",
                                  "notifications/resources/updated", "notifications/x"]),
          sid=st.sampled_from(["ours", "ours", "old", "string", "none"]))
    def stream_notification(self, method: str, sid: str) -> None:
        """SB-03: only notifications naming our listen stream are delivered."""
        params: JSONObj = {"uri": M_URI} if method.endswith("updated") else {}
        if sid == "ours":
            params["_meta"] = {SUBSCRIPTION_ID_KEY: self.listen_id}
        elif sid == "old":
            params["_meta"] = {SUBSCRIPTION_ID_KEY: self.listen_id - 1}
        elif sid == "string":
            params["_meta"] = {SUBSCRIPTION_ID_KEY: str(self.listen_id)}
        self.send({"jsonrpc": "2.0", "method": method, "params": params})
        delivered = sid == "ours" and self.listening
        if not delivered:
            self.notes_dropped += 1
        out = self.pump()
        assert not (out.requests or out.notes or out.ended)
        if not delivered:
            assert out.others == []
            return
        [event] = out.others
        if method == "notifications/resources/updated":
            assert event == ResourceUpdated(uri=M_URI)
            self.cache_until = -math.inf  # S-02: the cached read is dropped
        elif method == "notifications/x":
            assert isinstance(event, OtherNotification)
        else:
            assert event == ListChanged(kind=method.split("/")[1])

    @precondition(lambda self: self.listening)
    @rule(how=st.sampled_from(["cancelled", "result", "error"]))
    def server_ends_listen(self, how: str) -> None:
        """SB-04: the server tears the stream down; the host is told, nothing is sent, and
        notifications naming it are dropped from now on."""
        if how == "cancelled":
            self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": self.listen_id}})
        elif how == "result":
            self.send({"jsonrpc": "2.0", "id": self.listen_id,
                       "result": {"resultType": "complete"}})
        else:
            self.send({"jsonrpc": "2.0", "id": self.listen_id,
                       "error": {"code": -32603, "message": "bye"}})
        self.listening = False
        out = self.pump()
        assert not (out.requests or out.notes or out.ended)
        [ended] = out.others
        assert isinstance(ended, SubscriptionEnded)
        assert (ended.error is None) == (how != "error")

    # -- invariants and the end ----------------------------------------------------------------

    @invariant()
    def model_matches(self) -> None:
        s = self.session
        on_wire = self.on_wire()
        assert s.pending_count == len(on_wire) + self.listening  # + the acknowledged listen
        deadlines = [op.deadline for op in on_wire]
        deadlines += [op.total_deadline for op in self.gathering()]
        assert s.next_deadline() == min(deadlines, default=None)
        assert all(op.rounds <= M_ROUNDS for op in self.ops.values())
        assert s.state is State.READY

    def teardown(self) -> None:
        """EOF ends every operation, gathering ones included, exactly once."""
        open_ops = set(self.ops)
        self.session.receive_eof()
        out = self.pump()
        assert set(out.ended) == open_ops and not out.requests
        assert all(isinstance(e, Failed) and isinstance(e.error, ConnectionClosed)
                   for e in out.ended.values())
        assert isinstance(out.others[-1], Closed)
        assert self.session.pending_count == 0 and self.session.next_deadline() is None


ModernSessionMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_modern_session_state_machine = ModernSessionMachine.TestCase
