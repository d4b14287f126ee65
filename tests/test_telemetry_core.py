"""The telemetry decisions of the core (issue 26), sans-IO: a session watched by
:class:`mcp_proto.Telemetry` with a recording sink, played by the fake server and clock.

Span names, kinds and attributes are checked against the MCP semantic conventions
(open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md``): ``{mcp.method.name}
{target}``, ``mcp.method.name`` always, ``error.type`` exactly when the operation failed (the
JSON-RPC code, or ``tool_error``), ``rpc.response.status_code`` with a code,
``jsonrpc.request.id``, ``mcp.resource.uri``, ``gen_ai.operation.name=execute_tool`` for tool
calls only, ``mcp.protocol.version``, ``network.transport``; the trace context goes in
``params._meta`` unprefixed (SEP-414).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import h11
import pytest
from fake_server import Pair, modern_pair
from hypothesis import given, settings
from hypothesis import strategies as st
from test_auth_flow import MCP, make_flow, standard_world
from test_auth_http import DISCOVER, NOW, ok, refuse, run_flow
from test_http_core import URL, Server, events, legacy_http, result

from mcp_proto import (
    CLIENT_OPERATION_DURATION,
    CLIENT_SESSION_DURATION,
    DURATION_BUCKETS,
    SERVER_OPERATION_DURATION,
    ClientSession,
    ConnectionClosed,
    Implementation,
    LocalProtocolError,
    Peer,
    Redactor,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    ServerExited,
    SessionEnd,
    SessionExpired,
    SpanEnd,
    SpanEvent,
    SpanStart,
    Telemetry,
    error_type,
    session_digest,
    span_name,
)
from mcp_proto._auth_errors import AuthorizationRequired
from mcp_proto.http._status import HttpError
from mcp_proto.http._streamable import StreamableHttp
from mcp_proto.session._modern import Discovered


class Recorder:
    """A :class:`mcp_proto.SpanSink` that keeps everything, and whose trace context names
    the span it was asked for (``00-<trace>-<key>-01``)."""

    def __init__(self) -> None:
        self.starts: list[SpanStart] = []
        self.events: list[SpanEvent] = []
        self.ends: list[SpanEnd] = []
        self.sessions: list[SessionEnd] = []

    def start(self, span: SpanStart) -> Mapping[str, str] | None:
        self.starts.append(span)
        if span.kind == "server":
            return None
        n = len(self.starts)
        return {"traceparent": f"00-{'a' * 32}-{n:016x}-01", "tracestate": "k=v"}

    def event(self, event: SpanEvent) -> None:
        self.events.append(event)

    def end(self, end: SpanEnd) -> None:
        self.ends.append(end)

    def session_ended(self, end: SessionEnd) -> None:
        self.sessions.append(end)

    # views
    def one_start(self, name: str) -> SpanStart:
        found = [s for s in self.starts if s.name == name]
        assert len(found) == 1, [s.name for s in self.starts]
        return found[0]

    def end_of(self, span: SpanStart) -> SpanEnd:
        found = [e for e in self.ends if e.key == span.key]
        assert len(found) == 1, found
        return found[0]

    def events_of(self, span: SpanStart) -> list[SpanEvent]:
        return [e for e in self.events if e.key == span.key]

    def open_keys(self) -> set[object]:
        return {s.key for s in self.starts} - {e.key for e in self.ends}


def watched(pair: Pair, **kwargs: Any) -> Recorder:
    rec = Recorder()
    pair.session.instrument(Telemetry(rec, peer=kwargs.pop("peer", Peer.stdio()), **kwargs))
    return rec


def handshaken(**kwargs: Any) -> tuple[Pair, Recorder]:
    pair = Pair(capabilities=kwargs.pop("capabilities", None))
    rec = watched(pair, **kwargs)
    pair.handshake()
    return pair, rec


TEXT = {"content": [{"type": "text", "text": "ok"}]}


# -- the opening and the session -------------------------------------------------------------


def test_initialize_is_a_client_span_with_the_protocol_version_learnt() -> None:
    pair, rec = handshaken()
    span = rec.one_start("initialize")
    assert span.kind == "client"
    assert span.attributes["mcp.method.name"] == "initialize"
    assert span.attributes["network.transport"] == "pipe"
    assert span.attributes["jsonrpc.request.id"] == "1"
    assert "gen_ai.operation.name" not in span.attributes  # tool calls only
    end = rec.end_of(span)
    assert end.error_type is None and end.metric == CLIENT_OPERATION_DURATION
    assert end.attributes["mcp.protocol.version"] == "2025-11-25"
    # the next request carries it from its start
    pair.session.list_prompts(now=pair.now)
    assert rec.one_start("prompts/list").attributes["mcp.protocol.version"] == "2025-11-25"


def test_the_probe_answered_by_a_handshake_is_one_span_named_initialize() -> None:
    """V-20: ``server/discover`` refused, ``initialize`` under the same handle: one opening
    span, named after what opened the session, the probe an event of it."""
    pair = Pair()
    rec = watched(pair)
    pair.session.start(now=pair.now)
    probe = pair.sent_one()
    assert probe["method"] == "server/discover"
    assert probe["params"]["_meta"]["traceparent"].startswith("00-")
    pair.reply_error(probe, -32601, "Method not found")
    init = pair.sent_one()
    assert init["method"] == "initialize"
    pair.reply(init, {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": {"name": "s", "version": "1"}})
    pair.sent()
    pair.events()
    [span] = rec.starts
    end = rec.end_of(span)
    assert end.name == "initialize" and end.attributes["mcp.method.name"] == "initialize"
    assert end.attributes["jsonrpc.request.id"] == str(init["id"])
    assert end.metric_attributes["mcp.method.name"] == "initialize"
    assert [e.name for e in rec.events_of(span)] == ["mcp_proto.request"]


def test_the_session_duration_is_recorded_when_it_ends_with_its_error() -> None:
    pair, rec = handshaken()
    pair.advance(12.5)  # the session's time: the latest a caller gave
    pair.session.connection_lost(ServerExited(3, ""))
    pair.events()
    [session] = rec.sessions
    assert session.duration == pytest.approx(12.5)
    assert session.attributes["error.type"] == "server_exited"
    assert session.attributes["network.transport"] == "pipe"
    assert session.attributes["mcp.protocol.version"] == "2025-11-25"


def test_a_clean_close_records_the_session_without_an_error() -> None:
    pair, rec = handshaken()
    pair.advance(2.0)
    pair.session.close()
    pair.events()
    [session] = rec.sessions
    assert "error.type" not in session.attributes and session.duration == pytest.approx(2.0)


# -- requests --------------------------------------------------------------------------------


def test_a_tool_call_span_and_its_trace_context_in_meta() -> None:
    pair, rec = handshaken()
    handle = pair.session.call_tool("echo", {"text": "hi"}, now=pair.now, progress=True)
    request = pair.sent_one()
    span = rec.one_start("tools/call echo")
    assert span.tool_span and span.kind == "client"
    attrs = span.attributes
    assert attrs["gen_ai.tool.name"] == "echo"
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["jsonrpc.request.id"] == str(request["id"]) == str(handle.id)
    assert "gen_ai.tool.call.arguments" not in attrs  # opt-in only
    meta = request["params"]["_meta"]
    assert meta["progressToken"] == request["id"]  # what was there stays
    assert meta["traceparent"] == f"00-{'a' * 32}-{2:016x}-01"  # unprefixed (SEP-414)
    assert meta["tracestate"] == "k=v"
    pair.now += 0.25
    pair.reply(request, TEXT)
    pair.events()
    end = rec.end_of(span)
    assert end.error_type is None and end.duration == pytest.approx(0.25)
    assert end.metric_attributes == {
        "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool", "network.transport": "pipe",
        "mcp.protocol.version": "2025-11-25"}


def test_is_error_is_tool_error() -> None:
    pair, rec = handshaken()
    pair.session.call_tool("boom", {}, now=pair.now)
    pair.reply(pair.sent_one(), {"content": [], "isError": True})
    pair.events()
    end = rec.end_of(rec.one_start("tools/call boom"))
    assert end.error_type == "tool_error" == end.attributes["error.type"]
    assert end.metric_attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in end.attributes


def test_a_jsonrpc_error_is_its_code_with_the_message_as_description() -> None:
    pair, rec = handshaken()
    pair.session.call_tool("bad", {}, now=pair.now)
    pair.reply_error(pair.sent_one(), -32602, "Unknown tool: bad")
    pair.events()
    end = rec.end_of(rec.one_start("tools/call bad"))
    assert end.error_type == "-32602"
    assert end.attributes["rpc.response.status_code"] == "-32602"
    assert end.description == "Unknown tool: bad"
    assert end.metric_attributes["rpc.response.status_code"] == "-32602"


def test_a_timeout_is_timeout_with_the_cancellation_an_event() -> None:
    pair, rec = handshaken()
    pair.session.call_tool("slow", {}, now=pair.now, timeout=5.0)
    request = pair.sent_one()
    pair.advance(5.0)
    pair.events()
    span = rec.one_start("tools/call slow")
    assert rec.end_of(span).error_type == "timeout"
    [cancel] = rec.events_of(span)
    assert cancel.name == "mcp_proto.cancel"
    assert cancel.attributes["jsonrpc.request.id"] == str(request["id"])


def test_a_cancellation_is_cancelled() -> None:
    pair, rec = handshaken()
    handle = pair.session.call_tool("slow", {}, now=pair.now)
    pair.sent()
    pair.session.cancel(handle, "the user stopped it")
    pair.events()
    span = rec.one_start("tools/call slow")
    end = rec.end_of(span)
    assert end.error_type == "cancelled"
    assert [e.attributes.get("mcp_proto.cancel.reason") for e in rec.events_of(span)] == [
        "the user stopped it"]


def test_pages_are_events_of_one_span_and_one_measurement() -> None:
    pair, rec = handshaken()
    pair.session.list_tools(now=pair.now)
    first = pair.sent_one()
    pair.reply(first, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}],
                       "nextCursor": "p2"})
    second = pair.sent_one()
    assert second["params"]["cursor"] == "p2"
    assert second["params"]["_meta"]["traceparent"] == first["params"]["_meta"]["traceparent"]
    pair.reply(second, {"tools": []})
    pair.events()
    span = rec.one_start("tools/list")
    [page] = rec.events_of(span)
    assert page.name == "mcp_proto.page"
    assert page.attributes["jsonrpc.request.id"] == str(second["id"])
    assert len([e for e in rec.ends if e.metric == CLIENT_OPERATION_DURATION
                and e.metric_attributes["mcp.method.name"] == "tools/list"]) == 1


def test_resource_uri_is_an_attribute_and_in_the_name_only_when_asked() -> None:
    for resource_target, name in ((False, "resources/read"),
                                  (True, "resources/read file:///a.txt")):
        pair, rec = handshaken(resource_target=resource_target)
        pair.session.read_resource("file:///a.txt", now=pair.now)
        span = rec.one_start(name)
        assert span.attributes["mcp.resource.uri"] == "file:///a.txt"
        assert "mcp.resource.uri" not in rec.starts[-1].attributes.keys() - span.attributes.keys()


def test_a_prompt_is_the_target() -> None:
    pair, rec = handshaken()
    pair.session.get_prompt("review", {"code": "x"}, now=pair.now)
    span = rec.one_start("prompts/get review")
    assert span.attributes["gen_ai.prompt.name"] == "review"
    assert "gen_ai.operation.name" not in span.attributes


@pytest.mark.parametrize(("method", "params", "name"), [
    ("tools/call", {"name": "t"}, "tools/call t"),
    ("tools/call", {"name": ""}, "tools/call"),
    ("tools/call", {"name": 7}, "tools/call"),
    ("prompts/get", {"name": "p"}, "prompts/get p"),
    ("resources/read", {"uri": "x://y"}, "resources/read"),
    ("server/discover", None, "server/discover"),
    ("subscriptions/listen", {}, "subscriptions/listen"),
    ("tasks/get", {"taskId": "t1"}, "tasks/get"),
    ("completion/complete", {"ref": {}}, "completion/complete"),
])
def test_span_names(method: str, params: dict[str, Any] | None, name: str) -> None:
    assert span_name(method, params) == name


def test_params_that_are_not_json_end_the_span_they_began() -> None:
    pair, rec = handshaken()
    with pytest.raises(LocalProtocolError):
        pair.session.call_tool("t", {"x": object()}, now=pair.now)
    span = rec.one_start("tools/call t")
    assert rec.end_of(span).error_type == "local_protocol_error"
    assert rec.open_keys() == set()


def test_capture_content_records_arguments_and_result_redacted_and_cut() -> None:
    pair, rec = handshaken(capture_content=True, redactor=Redactor(["hunter2-secret"]))
    pair.session.call_tool("login", {"user": "ann", "note": "pw is hunter2-secret",
                                     "api_key": "k-123456"}, now=pair.now)
    pair.reply(pair.sent_one(), {"content": [{"type": "text", "text": "x" * 100_000}]})
    pair.events()
    span = rec.one_start("tools/call login")
    args = json.loads(span.attributes["gen_ai.tool.call.arguments"])  # type: ignore[arg-type]
    assert args["user"] == "ann"
    assert "hunter2-secret" not in json.dumps(args) and "k-123456" not in json.dumps(args)
    captured = rec.end_of(span).attributes["gen_ai.tool.call.result"]
    assert isinstance(captured, str) and captured.endswith("...<cut>")
    assert len(captured) < 40_000


def test_no_result_is_captured_for_a_tool_error() -> None:
    pair, rec = handshaken(capture_content=True)
    pair.session.call_tool("boom", {}, now=pair.now)
    pair.reply(pair.sent_one(), {"content": [{"type": "text", "text": "trace"}],
                                 "isError": True})
    pair.events()
    assert "gen_ai.tool.call.result" not in rec.end_of(rec.one_start("tools/call boom")).attributes


def test_extra_attributes_go_on_every_span() -> None:
    pair, rec = handshaken(extra={"mcp_proto.server.name": "git"})
    pair.session.ping(now=pair.now)
    assert all(s.attributes["mcp_proto.server.name"] == "git" for s in rec.starts)
    pair.reply(pair.sent_one(), {})
    pair.events()
    assert rec.ends[-1].metric_attributes["mcp_proto.server.name"] == "git"


def test_the_end_of_the_session_ends_every_open_span_once() -> None:
    pair, rec = handshaken()
    for name in ("a", "b"):
        pair.session.call_tool(name, {}, now=pair.now)
    pair.sent()
    pair.session.connection_lost(ServerExited(1, "boom"))
    pair.events()
    for name in ("tools/call a", "tools/call b"):
        assert rec.end_of(rec.one_start(name)).error_type == "server_exited"
    assert rec.open_keys() == set()


def test_spans_open_at_once_are_bounded() -> None:
    pair = Pair()
    rec = Recorder()
    telemetry = Telemetry(rec, peer=Peer.stdio(), max_live=3)
    pair.session.instrument(telemetry)
    pair.handshake()
    for n in range(5):
        pair.session.call_tool(f"t{n}", {}, now=pair.now)
    sent = pair.sent()
    assert len([s for s in rec.starts if s.name.startswith("tools/call")]) == 3
    assert telemetry.dropped == 2
    assert all("traceparent" not in m["params"].get("_meta", {}) for m in sent[3:])


# -- requests from the server ----------------------------------------------------------------


def test_a_server_request_is_a_server_span_parented_on_its_meta() -> None:
    pair, rec = handshaken(capabilities={"sampling": {}})
    parent = f"00-{'b' * 32}-{'c' * 16}-01"
    pair.server_request(7, "sampling/createMessage", {
        "messages": [], "maxTokens": 5, "_meta": {"traceparent": parent, "other": 1}})
    pair.events()
    span = rec.one_start("sampling/createMessage")
    assert span.kind == "server" and span.carrier == {"traceparent": parent}
    assert span.attributes["jsonrpc.request.id"] == "7"
    pair.now += 1.5
    pair.session.respond(7, {"role": "assistant", "content": {"type": "text", "text": "x"},
                             "model": "m"}, now=pair.now)
    end = rec.end_of(span)
    assert end.metric == SERVER_OPERATION_DURATION and end.error_type is None
    assert end.duration == pytest.approx(1.5)


def test_a_server_request_without_context_is_a_child_of_the_only_call_in_flight() -> None:
    pair, rec = handshaken(capabilities={"sampling": {}})
    pair.session.call_tool("ask", {}, now=pair.now)
    pair.sent()
    pair.server_request("s1", "sampling/createMessage", {"messages": [], "maxTokens": 5})
    pair.events()
    call = rec.one_start("tools/call ask")
    asked = rec.one_start("sampling/createMessage")
    assert asked.parent == call.key and asked.carrier == {}
    pair.session.respond_error("s1", -1, "User rejected")
    end = rec.end_of(asked)
    assert end.error_type == "-1" and end.attributes["rpc.response.status_code"] == "-1"
    assert end.description == "User rejected"


def test_a_server_request_the_core_answers_is_a_span_too() -> None:
    pair, rec = handshaken()
    pair.server_request(3, "ping")
    pair.sent()
    span = rec.one_start("ping")
    assert span.kind == "server" and rec.end_of(span).error_type is None
    pair.server_request(4, "roots/list")  # not declared: refused by the core
    pair.sent()
    assert rec.end_of(rec.one_start("roots/list")).error_type == "-32601"


def test_a_withdrawn_server_request_ends_cancelled() -> None:
    pair, rec = handshaken(capabilities={"elicitation": {}})
    pair.server_request(9, "elicitation/create", {"message": "?", "requestedSchema": {
        "type": "object", "properties": {}}})
    pair.events()
    pair.notify("notifications/cancelled", {"requestId": 9, "reason": "gone"})
    pair.events()
    end = rec.end_of(rec.one_start("elicitation/create"))
    assert end.error_type == "cancelled" and end.description == "gone"


# -- the 2026-07-28 era -----------------------------------------------------------------------


def test_modern_opening_listen_and_input_rounds() -> None:
    pair = Pair(capabilities={"elicitation": {}})
    rec = watched(pair)
    pair.discover()
    discover = rec.one_start("server/discover")
    assert rec.end_of(discover).attributes["mcp.protocol.version"] == "2026-07-28"
    listen = rec.one_start("subscriptions/listen")
    assert listen.kind == "client"
    assert pair.listen is not None
    assert pair.listen["params"]["_meta"]["traceparent"].startswith("00-")
    # MRTR: an input request is an event, the round sent again is an event, one span
    pair.session.call_tool("ask", {}, now=pair.now)
    first = pair.sent_one()
    pair.reply(first, {"resultType": "input_required", "inputRequests": {
        "q": {"method": "elicitation/create", "params": {
            "message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}},
        "requestState": "s1"})
    [asked] = pair.events()
    pair.session.respond(asked.request_id, {"action": "accept", "content": {}}, now=pair.now)
    again = pair.sent_one()
    assert again["params"]["inputResponses"]
    assert again["params"]["_meta"]["traceparent"] == first["params"]["_meta"]["traceparent"]
    pair.reply(again, {"resultType": "complete", **TEXT})
    pair.events()
    call = rec.one_start("tools/call ask")
    assert [e.name for e in rec.events_of(call)] == ["mcp_proto.input_required",
                                                     "mcp_proto.input_round"]
    assert rec.end_of(call).error_type is None


def test_the_listen_stream_span_ends_with_its_answer() -> None:
    pair = modern_pair()
    rec = watched(pair)  # watched from now: the next listen is the one traced
    assert pair.listen is not None
    pair.session.close()
    pair.events()
    assert rec.open_keys() == set()
    # one begun before the opening ended gets the version at its end
    pair = Pair()
    rec = watched(pair)
    pair.discover(capabilities={"tools": {"listChanged": True}})
    listen = rec.one_start("subscriptions/listen")
    pair.session.close()
    pair.events()
    assert rec.end_of(listen).attributes["mcp.protocol.version"] == "2026-07-28"


# -- HTTP -------------------------------------------------------------------------------------


def test_http_peer_session_digest_and_a_resumed_stream_as_an_event() -> None:
    session = ClientSession(Implementation(name="t", version="1"))
    rec = Recorder()
    session.instrument(Telemetry(rec, peer=Peer.http("127.0.0.1", 8123)))
    http = StreamableHttp(session, URL)
    http.session.start(now=100.0, era="legacy")
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}}), headers=[("Mcp-Session-Id", "s-123")]),
        now=100.0)
    events(http)
    init = rec.one_start("initialize")
    assert init.attributes["server.address"] == "127.0.0.1"
    assert init.attributes["server.port"] == 8123
    assert init.attributes["network.transport"] == "tcp"
    assert init.attributes["network.protocol.name"] == "http"
    get, note = http.exchanges_to_start()  # H-07: the GET stream, then initialized
    http.receive_data(note.id, Server(note).answer(202), now=100.0)
    http.receive_data(get.id, Server(get).answer(405, b""), now=100.0)
    http.session.call_tool("slow", now=100.0)
    [ex] = http.exchanges_to_start()
    call = rec.one_start("tools/call slow")
    assert call.attributes["mcp.session.id"] == session_digest("s-123") != "s-123"
    srv = Server(ex)
    head = srv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    head += srv.conn.send(h11.Data(data=b"id: ev-7\nretry: 400\ndata:\n\n"))
    http.receive_data(ex.id, head, now=100.0)
    http.connection_lost(ex.id, now=100.0)
    [resume] = rec.events_of(call)
    assert resume.name == "mcp_proto.http.resume"


def test_http_401_answered_by_authorization_is_an_event_of_the_same_span() -> None:
    world, flow = standard_world(), make_flow()
    session = ClientSession(Implementation(name="t", version="1"))
    rec = Recorder()
    session.instrument(Telemetry(rec, peer=Peer.http("mcp.example", 443)))
    http = StreamableHttp(session, MCP, auth=flow)
    session.start(now=NOW)
    [probe] = http.exchanges_to_start()
    sent = Server(probe).body
    refuse(http, probe)
    [span] = rec.starts
    [authorize] = rec.events_of(span)
    assert authorize.name == "mcp_proto.http.authorize"
    assert authorize.attributes["mcp_proto.auth.step"]
    assert rec.open_keys() == {span.key}  # the same request waits, the span with it
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    assert Server(replay).body == sent  # the same message, the same trace context
    ok(http, replay, DISCOVER)
    events(http)
    assert rec.end_of(span).error_type is None and rec.open_keys() == set()


def test_legacy_http_session_id_digest_is_stable_and_hides_the_id() -> None:
    http = legacy_http()
    assert session_digest("s-123") == session_digest("s-123")
    assert session_digest("s-123") != session_digest("s-124")
    assert len(session_digest("s-123")) == 32 and "s-123" not in session_digest("s-123")
    assert http.session.telemetry is None  # not watched: nothing computed


# -- error.type ------------------------------------------------------------------------------


@pytest.mark.parametrize(("error", "expected"), [
    (RpcError(-32601, "nope"), "-32601"),
    (RequestTimeout("tools/call", 1.0, "total"), "timeout"),
    (RequestCancelled("tools/call", "x"), "cancelled"),
    (ServerExited(1, ""), "server_exited"),
    (SessionExpired("gone"), "session_expired"),
    (ConnectionClosed("closed"), "connection_closed"),
    (LocalProtocolError("bad"), "local_protocol_error"),
    (RemoteProtocolError("bad"), "protocol_error"),
    (AuthorizationRequired("401"), "authorization_error"),
    (HttpError(500, b"", "tools/call"), "http_error"),
    (ValueError("x"), "_OTHER"),
])
def test_error_types(error: BaseException, expected: str) -> None:
    assert error_type(error) == expected


def test_the_buckets_are_the_conventions() -> None:
    assert DURATION_BUCKETS == (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
    assert CLIENT_SESSION_DURATION == "mcp.client.session.duration"


# -- every span ends once, whatever happens --------------------------------------------------

_STEP = st.sampled_from(["call", "list", "reply", "error", "iserror", "cancel", "timeout",
                         "server", "answer", "ping"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=30), st.booleans())
def test_every_span_ends_exactly_once(steps: list[str], crash: bool) -> None:
    """Whatever the order of requests, answers, errors, cancellations, timeouts and server
    requests: every span the sink saw start ends exactly once by the session's end, never
    one that did not start, and the core holds nothing afterwards."""
    pair, rec = handshaken(capabilities={"sampling": {}})
    session = pair.session
    pending: list[dict[str, Any]] = []
    handles: list[Any] = []
    asked: list[object] = []
    sid = 0
    for step in steps:
        if step == "call":
            handles.append(session.call_tool("t", {}, now=pair.now, timeout=30.0))
        elif step == "list":
            handles.append(session.list_resources(now=pair.now, timeout=30.0))
        elif step == "ping":
            handles.append(session.ping(now=pair.now))
        elif step in ("reply", "error", "iserror") and pending:
            request = pending.pop(0)
            if step == "error":
                pair.reply_error(request, -32000, "no")
            elif request["method"] == "resources/list":
                pair.reply(request, {"resources": []})
            elif request["method"] == "ping":
                pair.reply(request, {})
            else:
                pair.reply(request, {"content": [], "isError": step == "iserror"})
        elif step == "cancel" and handles:
            session.cancel(handles.pop(0))
        elif step == "timeout":
            pair.advance(31.0)
        elif step == "server":
            sid += 1
            pair.server_request(f"s{sid}", "sampling/createMessage",
                                {"messages": [], "maxTokens": 1})
            asked.append(f"s{sid}")
        elif step == "answer" and asked:
            session.respond_error(asked.pop(0), -1, "no")
        pending += [m for m in pair.sent() if "id" in m and "method" in m]
        pair.events()
    if crash:
        session.connection_lost(ServerExited(1, ""))
    else:
        session.close()
    pair.events()
    started = [s.key for s in rec.starts]
    ended = [e.key for e in rec.ends]
    assert len(started) == len(set(started))
    assert sorted(map(str, ended)) == sorted(map(str, started))
    assert all(e.duration >= 0 for e in rec.ends)
    assert all((e.error_type is None) == ("error.type" not in e.attributes) for e in rec.ends)
    telemetry = session.telemetry
    assert telemetry is not None and not telemetry._live and not telemetry._by_rid
    assert len(rec.sessions) == 1


# -- after the review: internal requests, clean ends, resumed tasks, what is shown -----------


def test_a_renewed_listen_ends_the_old_span_and_a_clean_close_fails_nothing() -> None:
    pair = Pair()
    rec = watched(pair)
    pair.discover(capabilities={"tools": {"listChanged": True},
                                "resources": {"subscribe": True}})
    first = rec.one_start("subscriptions/listen")
    for n in range(3):
        pair.session.subscribe(f"file:///r{n}", now=pair.now)
        renewed = [m for m in pair.sent() if m.get("method") == "subscriptions/listen"]
        assert renewed
        pair.ack(renewed[-1])
        pair.events()
    listens = [s for s in rec.starts if s.name == "subscriptions/listen"]
    assert len(listens) == 4
    assert rec.end_of(first).error_type is None  # superseded, not failed
    assert {s.key for s in listens} - rec.open_keys() == {s.key for s in listens[:3]}
    pair.session.close()
    pair.events()
    assert rec.open_keys() == set()
    assert all(e.error_type is None for e in rec.ends), [e for e in rec.ends if e.error_type]


def test_a_listen_the_server_withdraws_ends_its_span() -> None:
    pair = Pair()
    rec = watched(pair)
    pair.discover(capabilities={"tools": {"listChanged": True}})
    assert pair.listen is not None
    listen = rec.one_start("subscriptions/listen")
    pair.notify("notifications/cancelled", {"requestId": pair.listen["id"]})
    pair.events()
    assert rec.end_of(listen).error_type is None


def test_a_resumed_task_is_one_tools_call_span_with_its_polls_as_events() -> None:
    pair = Pair()
    rec = watched(pair)
    pair.handshake(capabilities={"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}})
    pair.session.resume_task("task-1", now=pair.now)
    poll = pair.sent_one()
    assert poll["method"] == "tasks/get"
    pair.reply(poll, {"taskId": "task-1", "status": "completed", "ttl": 60000,
                      "createdAt": "2026-01-01T00:00:00Z",
                      "lastUpdatedAt": "2026-01-01T00:00:00Z"})
    fetch = pair.sent_one()
    assert fetch["method"] == "tasks/result"
    pair.reply(fetch, {"content": [], "isError": True})
    pair.events()
    span = rec.one_start("tools/call")
    assert span.attributes["mcp.method.name"] == "tools/call"
    assert [(e.name, e.attributes["mcp.method.name"]) for e in rec.events_of(span)] == [
        ("mcp_proto.request", "tasks/get"), ("mcp_proto.request", "tasks/result")]
    assert rec.end_of(span).error_type == "tool_error"


def test_a_stale_discovery_refresh_has_its_own_span() -> None:
    pair = Pair()
    rec = watched(pair)
    stale = Discovered(supported_versions=("2026-07-28",), capabilities={"tools": {}},
                       server_info={"name": "s", "version": "1"}, instructions=None,
                       expires_at=pair.now - 1)
    pair.session.start(now=pair.now, discovered=stale)
    refresh = pair.sent_one()
    assert refresh["method"] == "server/discover"
    pair.events()
    spans = [s for s in rec.starts if s.name == "server/discover"]
    assert len(spans) == 1 and rec.open_keys() == {spans[0].key}  # open until its answer
    pair.reply_error(refresh, -32601, "gone")
    pair.events()
    assert rec.end_of(spans[0]).error_type == "-32601"


def test_the_carrier_keeps_the_callers_own_keys_and_only_the_three() -> None:
    class Extra(Recorder):
        def start(self, span: SpanStart) -> Mapping[str, str] | None:
            super().start(span)
            return {"traceparent": f"00-{'a' * 32}-{'1' * 16}-01", "b3": "x", "baggage": "k=v"}

    pair = Pair()
    rec = Extra()
    pair.session.instrument(Telemetry(rec, peer=Peer.stdio()))
    pair.handshake()
    mine = f"00-{'c' * 32}-{'d' * 16}-01"
    pair.session.call_tool("t", {}, now=pair.now, meta={"traceparent": mine})
    meta = pair.sent_one()["params"]["_meta"]
    assert meta["traceparent"] == mine and meta["baggage"] == "k=v" and "b3" not in meta


def test_a_servers_error_message_is_redacted_in_the_description() -> None:
    pair, rec = handshaken(redactor=Redactor(["sk-live-123456"]))
    pair.session.call_tool("t", {}, now=pair.now)
    pair.reply_error(pair.sent_one(), -32000, "bad key sk-live-123456")
    pair.events()
    end = rec.end_of(rec.one_start("tools/call t"))
    assert end.description is not None and "sk-live-123456" not in end.description


def test_a_resource_uri_with_a_query_is_shown_without_its_values() -> None:
    pair, rec = handshaken(resource_target=True)
    pair.session.read_resource("https://x.example/doc?token=abc123", now=pair.now)
    [span] = [s for s in rec.starts if s.name.startswith("resources/read")]
    assert "abc123" not in span.name
    assert "abc123" not in str(span.attributes["mcp.resource.uri"])


def test_server_spans_carry_no_server_address() -> None:
    session = ClientSession(Implementation(name="t", version="1"), capabilities={"sampling": {}})
    rec = Recorder()
    telemetry = Telemetry(rec, peer=Peer.http("h.example", 443))
    session.instrument(telemetry)
    telemetry.server_request(5, "sampling/createMessage", {}, 1.0)
    [span] = rec.starts
    assert "server.address" not in span.attributes and "server.port" not in span.attributes
    assert span.attributes["network.transport"] == "tcp"
