"""The Streamable HTTP machine (mcp_proto.http) against an in-memory h11 server: what it asks
the binding to send, and what it makes of the answers (section 10.2, 10.3, 2.3)."""

from __future__ import annotations

import json
from typing import Any

import h11
import pytest

from mcp_proto import (
    BadMessage,
    ClientSession,
    Closed,
    Completed,
    ConnectionClosed,
    Failed,
    Implementation,
    LocalProtocolError,
    Ready,
    SessionExpired,
)
from mcp_proto.http._streamable import (
    MAX_RESUMES,
    OPENING_GATE,
    HttpError,
    HttpExchange,
    HttpTarget,
    StreamableHttp,
)

INFO = Implementation(name="t", version="1")
URL = "http://127.0.0.1:8123/mcp"
NOW = 100.0


class Server:
    """Reads one exchange's request with h11 and writes its answer."""

    def __init__(self, ex: HttpExchange) -> None:
        self.ex = ex
        self.conn = h11.Connection(h11.SERVER)
        self.conn.receive_data(ex.data)
        request = self.conn.next_event()
        assert isinstance(request, h11.Request)
        self.method = request.method.decode()
        self.headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        body = b""
        while True:
            event = self.conn.next_event()
            if isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
        self.body: Any = json.loads(body) if body else None

    def answer(self, status: int, body: bytes = b"", content_type: str = "application/json",
               headers: list[tuple[str, str]] | None = None) -> bytes:
        head = [("Content-Type", content_type), ("Content-Length", str(len(body))),
                *(headers or [])]
        out = self.conn.send(h11.Response(status_code=status, headers=head))
        if body:
            out += self.conn.send(h11.Data(data=body))
        return out + self.conn.send(h11.EndOfMessage())

    def sse(self, *events: str) -> bytes:
        body = "".join(events).encode()
        out = self.conn.send(h11.Response(status_code=200, headers=[
            ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
        out += self.conn.send(h11.Data(data=body))
        return out + self.conn.send(h11.EndOfMessage())


def result(rid: int, res: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": res}).encode()


def events(http: StreamableHttp) -> list[Any]:
    out = []
    while (e := http.session.next_event()) is not None:
        out.append(e)
    return out


def legacy_http(session_id: str | None = "s-123") -> StreamableHttp:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW, era="legacy")
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    assert srv.body["method"] == "initialize" and "mcp-session-id" not in srv.headers
    headers = [("Mcp-Session-Id", session_id)] if session_id else []
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}}), headers=headers), now=NOW)
    assert ex.done and ex.reusable
    [ready] = events(http)
    assert isinstance(ready, Ready) and ready.era == "legacy"
    get, note = http.exchanges_to_start()  # H-07: the GET stream opens once ready
    assert Server(get).method == "GET" and http.get_stream == "open"
    srv = Server(note)
    assert srv.body["method"] == "notifications/initialized"
    http.receive_data(note.id, srv.answer(202), now=NOW)
    http.receive_data(get.id, Server(get).answer(405, b""), now=NOW)  # tolerated
    assert http.get_stream == "refused" and events(http) == []
    return http


def test_target_refuses_credentials_and_other_schemes() -> None:
    with pytest.raises(LocalProtocolError, match="credentials"):
        HttpTarget.parse("http://user:pw@host/mcp")
    with pytest.raises(LocalProtocolError):
        HttpTarget.parse("ftp://host/mcp")
    t = HttpTarget.parse("https://example.org/mcp?x=1")
    assert (t.origin, t.target, t.authority) == (("https", "example.org", 443), "/mcp?x=1",
                                                 "example.org")


def test_h01_post_headers_and_h10_session_id_echoed() -> None:
    http = legacy_http()
    http.session.call_tool("echo", {"text": "hi"}, now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    assert srv.method == "POST"
    assert srv.headers["accept"] == "application/json, text/event-stream"  # H-01
    assert srv.headers["content-type"] == "application/json"
    assert srv.headers["mcp-session-id"] == "s-123"  # H-10
    assert srv.headers["mcp-protocol-version"] == "2025-11-25"  # V-04
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "content": [{"type": "text", "text": "hi"}]})), now=NOW)
    [done] = events(http)
    assert isinstance(done, Completed) and done.value.text == "hi"


def test_h04_h05_sse_answer_with_a_notification_then_the_response() -> None:
    http = legacy_http()
    http.session.call_tool("echo", {"text": "hi"}, now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    rid = srv.body["id"]
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": rid, "progress": 1, "total": 2}}
    wire = srv.sse("id: e1\ndata:\n\n",  # a priming event (H-06): no message
                   f"data: {json.dumps(progress)}\n\n",
                   ": keep-alive\n\n",
                   f"id: e2\ndata: {result(rid, {'content': []}).decode()}\n\n")
    for i in range(0, len(wire), 7):  # any chunking
        http.receive_data(ex.id, wire[i:i + 7], now=NOW)
    kinds = [type(e).__name__ for e in events(http)]
    assert kinds == ["Progress", "Completed"]
    assert ex.done and ex.reusable


def test_h03_notification_gets_202_and_no_event() -> None:
    http = legacy_http()
    http.session.notify_roots_list_changed()
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    assert srv.body["method"] == "notifications/roots/list_changed"
    http.receive_data(ex.id, srv.answer(202), now=NOW)
    assert events(http) == [] and ex.done


def test_h11_404_on_a_session_is_session_expired() -> None:
    http = legacy_http()
    handle = http.session.call_tool("echo", {"text": "x"}, now=NOW)
    [ex] = http.exchanges_to_start()
    other = http.session.call_tool("echo", {"text": "y"}, now=NOW)
    http.exchanges_to_start()
    http.receive_data(ex.id, Server(ex).answer(404, b"gone", "text/plain"), now=NOW)
    failed_1, failed_2, closed = events(http)  # the session is gone: every call on it fails
    assert {failed_1.handle, failed_2.handle} == {handle, other}
    assert isinstance(failed_1.error, SessionExpired) and isinstance(closed, Closed)
    assert http.exchanges_to_start() == []  # nothing replayed


def test_http_error_without_jsonrpc_body_fails_that_request_only() -> None:
    http = legacy_http()
    bad = http.session.call_tool("echo", {"text": "x"}, now=NOW)
    good = http.session.call_tool("echo", {"text": "y"}, now=NOW)
    ex_bad, ex_good = http.exchanges_to_start()
    http.receive_data(ex_bad.id, Server(ex_bad).answer(500, b"boom", "text/plain"), now=NOW)
    srv = Server(ex_good)
    http.receive_data(ex_good.id, srv.answer(200, result(srv.body["id"], {"content": []})),
                      now=NOW)
    failed, done = events(http)
    assert isinstance(failed, Failed) and failed.handle == bad
    assert isinstance(failed.error, HttpError) and failed.error.status == 500
    assert isinstance(done, Completed) and done.handle == good


def test_jsonrpc_error_in_a_4xx_body_is_the_answer() -> None:
    http = legacy_http()
    handle = http.session.call_tool("nope", now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    body = json.dumps({"jsonrpc": "2.0", "id": srv.body["id"],
                       "error": {"code": -32602, "message": "Unknown tool"}}).encode()
    http.receive_data(ex.id, srv.answer(400, body), now=NOW)
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert getattr(failed.error, "code", None) == -32602


def test_redirect_is_not_followed() -> None:
    http = legacy_http()
    handle = http.session.call_tool("echo", {"text": "x"}, now=NOW)
    [ex] = http.exchanges_to_start()
    http.receive_data(ex.id, Server(ex).answer(307, b"", headers=[
        ("Location", "http://elsewhere/")]), now=NOW)
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert "redirect" in str(failed.error)


def test_connection_dropped_mid_answer_fails_the_request() -> None:
    http = legacy_http()
    handle = http.session.call_tool("echo", {"text": "x"}, now=NOW)
    [ex] = http.exchanges_to_start()
    wire = Server(ex).sse("data: {\"jsonrpc\": \"2.0\", \"method\": \"x/y\"}\n\n")
    http.receive_data(ex.id, wire[:-5], now=NOW)
    http.connection_lost(ex.id, now=NOW)
    kinds = [type(e).__name__ for e in events(http)]
    assert kinds == ["OtherNotification", "Failed"] and not ex.reusable
    assert handle.method == "tools/call"


def test_l11_delete_ends_the_session() -> None:
    http = legacy_http()
    ex = http.close_exchange()
    assert ex is not None
    srv = Server(ex)
    assert srv.method == "DELETE" and srv.headers["mcp-session-id"] == "s-123"
    assert StreamableHttp(ClientSession(INFO), URL).close_exchange() is None


def test_x21_modern_headers_and_c04_cancel_closes_the_stream() -> None:
    http = StreamableHttp(ClientSession(INFO), URL, bearer_token="tok")
    http.session.start(now=NOW, era="modern")
    [probe] = http.exchanges_to_start()
    srv = Server(probe)
    assert srv.headers["mcp-method"] == "server/discover"
    assert srv.headers["mcp-protocol-version"] == "2026-07-28"
    assert srv.headers["authorization"] == "Bearer tok"
    http.receive_data(probe.id, srv.answer(200, result(srv.body["id"], {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}}})), now=NOW)
    [ready] = events(http)
    assert isinstance(ready, Ready) and ready.era == "modern"
    handle = http.session.call_tool("weather", {"city": "Oslo"}, now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    assert (srv.headers["mcp-method"], srv.headers["mcp-name"]) == ("tools/call", "weather")
    assert "mcp-session-id" not in srv.headers
    assert http.session.cancel(handle) is True
    assert http.exchanges_to_start() == []  # no notifications/cancelled on HTTP (C-04)
    assert http.exchanges_to_abort() == [ex.id]


def test_2_3_http_error_on_the_probe_falls_back_to_initialize() -> None:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW)
    [probe] = http.exchanges_to_start()
    http.receive_data(probe.id, Server(probe).answer(400, b"Bad Request: no session",
                                                     "text/plain"), now=NOW)
    [init] = http.exchanges_to_start()
    srv = Server(init)
    assert srv.body["method"] == "initialize"
    http.receive_data(init.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}), headers=[("Mcp-Session-Id", "abc")]),
        now=NOW)
    [ready] = events(http)
    assert isinstance(ready, Ready) and ready.era == "legacy"
    assert http.session_id == "abc"


def test_h06_dropped_stream_is_resumed_by_get_with_last_event_id_after_retry() -> None:
    http = legacy_http()
    handle = http.session.call_tool("slow", now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    rid = srv.body["id"]
    head = srv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    head += srv.conn.send(h11.Data(data=b"id: ev-7\nretry: 400\ndata:\n\n"))
    http.receive_data(ex.id, head, now=NOW)
    http.connection_lost(ex.id, now=NOW)  # the server closed it: no response yet
    assert events(http) == []
    assert http.next_deadline() == NOW + 0.4  # the server's retry
    http.handle_timeout(NOW + 0.39)
    assert http.exchanges_to_start() == []
    http.handle_timeout(NOW + 0.4)
    [resume] = http.exchanges_to_start()
    again = Server(resume)
    assert again.method == "GET" and again.headers["last-event-id"] == "ev-7"
    assert again.headers["mcp-session-id"] == "s-123"
    http.receive_data(resume.id, again.sse(
        f"id: ev-8\ndata: {result(rid, {'content': []}).decode()}\n\n"), now=NOW + 0.5)
    [done] = events(http)
    assert isinstance(done, Completed) and done.handle == handle


def test_h06_resumption_is_bounded() -> None:
    """A server that keeps dropping the stream without answering: MAX_RESUMES resumptions,
    then the call fails (no endless loop)."""
    http = legacy_http()
    handle = http.session.call_tool("slow", now=NOW, timeout=1000.0)
    [ex] = http.exchanges_to_start()
    now = NOW
    streams = 0
    while True:
        streams += 1
        srv = Server(ex)
        head = srv.conn.send(h11.Response(status_code=200, headers=[
            ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
        head += srv.conn.send(h11.Data(data=b"id: e\nretry: 10\ndata:\n\n"))
        http.receive_data(ex.id, head, now=now)
        http.connection_lost(ex.id, now=now)
        ended = events(http)
        if ended:
            break
        assert streams <= MAX_RESUMES
        now += 0.01
        http.handle_timeout(now)
        [ex] = http.exchanges_to_start()
    assert streams == MAX_RESUMES + 1
    [failed] = ended
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ConnectionClosed)


TOOL_WITH_HEADERS = {
    "name": "weather", "inputSchema": {"type": "object", "properties": {
        "city": {"type": "string", "x-mcp-header": "City"},
        "days": {"type": "integer", "x-mcp-header": "Days"},
        "metric": {"type": "boolean", "x-mcp-header": "Metric"},
        "opts": {"type": "object", "properties": {
            "lang": {"type": "string", "x-mcp-header": "Lang"}}},
        "note": {"type": "string"}}}}


def modern_http_with_tools(tools: list[dict[str, Any]]) -> StreamableHttp:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW, era="modern")
    [probe] = http.exchanges_to_start()
    srv = Server(probe)
    http.receive_data(probe.id, srv.answer(200, result(srv.body["id"], {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}}})), now=NOW)
    events(http)
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "resultType": "complete", "tools": tools})), now=NOW)
    return http


def test_x21_mcp_param_headers_mirror_annotated_arguments() -> None:
    http = modern_http_with_tools([TOOL_WITH_HEADERS])
    [listed] = events(http)
    assert [t.name for t in listed.value] == ["weather"]
    http.session.call_tool("weather", {"city": "Zürich", "days": 3, "metric": False,
                                       "opts": {"lang": "fr"}, "note": "x"}, now=NOW)
    [ex] = http.exchanges_to_start()
    headers = Server(ex).headers
    assert headers["mcp-param-city"] == "=?base64?WsO8cmljaA==?="  # not plain ASCII
    assert (headers["mcp-param-days"], headers["mcp-param-metric"]) == ("3", "false")
    assert headers["mcp-param-lang"] == "fr"
    assert "mcp-param-note" not in headers
    http.session.call_tool("weather", {"city": " padded", "days": None}, now=NOW)
    [ex] = http.exchanges_to_start()
    headers = Server(ex).headers
    assert headers["mcp-param-city"].startswith("=?base64?")  # leading space
    assert "mcp-param-days" not in headers  # null: omitted


@pytest.mark.parametrize("bad", [
    {"type": "number", "x-mcp-header": "N"},
    {"type": "string", "x-mcp-header": "has space"},
    {"type": "string", "x-mcp-header": ""},
    {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
], ids=["number", "not-a-token", "empty", "under-items"])
def test_t06_tool_with_an_invalid_header_annotation_is_left_out(bad: dict[str, Any]) -> None:
    bad_tool = {"name": "bad", "inputSchema": {"type": "object", "properties": {"x": bad}}}
    http = modern_http_with_tools([TOOL_WITH_HEADERS, bad_tool])
    dropped, listed = events(http)
    assert isinstance(dropped, BadMessage) and "'bad' left out" in str(dropped.error)
    assert [t.name for t in listed.value] == ["weather"]


def test_t06_duplicate_header_names_are_invalid() -> None:
    dup = {"name": "dup", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "Same"},
        "b": {"type": "string", "x-mcp-header": "same"}}}}
    http = modern_http_with_tools([dup])
    dropped, listed = events(http)
    assert isinstance(dropped, BadMessage) and listed.value == []


def test_h07_get_stream_carries_server_requests_and_reopens_after_retry() -> None:
    http = StreamableHttp(ClientSession(INFO, capabilities={"roots": {}}), URL)
    http.session.start(now=NOW, era="legacy")
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}), headers=[("Mcp-Session-Id", "s9")]),
        now=NOW)
    events(http)
    get, note = http.exchanges_to_start()
    http.receive_data(note.id, Server(note).answer(202), now=NOW)
    gsrv = Server(get)
    assert gsrv.headers["mcp-session-id"] == "s9"
    assert gsrv.headers["accept"] == "application/json, text/event-stream"
    ask = json.dumps({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
    http.receive_data(get.id, gsrv.sse(f"id: g1\nretry: 250\ndata: {ask}\n\n"), now=NOW)
    [request] = events(http)
    assert request.method == "roots/list"  # a server request on the GET stream (F-06)
    http.session.respond(request.request_id, {"roots": []})
    [answer] = http.exchanges_to_start()  # answered by a new POST
    asrv = Server(answer)
    assert asrv.method == "POST" and asrv.body["id"] == "r1"
    assert http.get_stream == "closed" and http.next_deadline() == NOW + 0.25
    http.handle_timeout(NOW + 0.25)
    [again] = http.exchanges_to_start()
    rsrv = Server(again)
    assert rsrv.method == "GET" and rsrv.headers["last-event-id"] == "g1"


def test_opening_gate_holds_requests_until_the_get_stream_and_initialized_answer() -> None:
    """A server may send an unrelated request only on an open GET stream, and may refuse
    requests before initialized: the first requests wait for both (bounded)."""
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW, era="legacy")
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}})), now=NOW)
    events(http)
    http.session.list_tools(now=NOW)
    get, note = http.exchanges_to_start()  # the tools/list POST is held back
    assert (get.method, note.rpc_method) == ("GET", "notifications/initialized")
    http.receive_data(note.id, Server(note).answer(202), now=NOW)
    assert http.exchanges_to_start() == []  # still waiting for the GET's answer
    gsrv = Server(get)
    head = gsrv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    http.receive_data(get.id, head, now=NOW)
    [listing] = http.exchanges_to_start()
    assert Server(listing).body["method"] == "tools/list"


def test_opening_gate_is_bounded() -> None:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW, era="legacy")
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}})), now=NOW)
    events(http)
    http.session.list_tools(now=NOW)
    assert len(http.exchanges_to_start()) == 2  # GET and initialized; nobody answers
    assert http.next_deadline() == NOW + OPENING_GATE
    http.handle_timeout(NOW + OPENING_GATE)
    [listing] = http.exchanges_to_start()
    assert Server(listing).body["method"] == "tools/list"


def _sse_ladder(endpoint: str) -> tuple[StreamableHttp, HttpExchange, Server]:
    """Probe and Streamable initialize both refused (405): the GET of HTTP+SSE (2.3, X-30)."""
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW)
    [probe] = http.exchanges_to_start()
    http.receive_data(probe.id, Server(probe).answer(405, b""), now=NOW)
    [init] = http.exchanges_to_start()
    isrv = Server(init)
    assert isrv.body["method"] == "initialize"
    http.receive_data(init.id, isrv.answer(405, b"Method Not Allowed", "text/plain"), now=NOW)
    [get] = http.exchanges_to_start()
    gsrv = Server(get)
    assert gsrv.method == "GET" and gsrv.headers["accept"] == "text/event-stream"
    assert http.transport == "sse" and events(http) == []
    head = gsrv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    head += gsrv.conn.send(h11.Data(data=f"event: endpoint\ndata: {endpoint}\n\n".encode()))
    http.receive_data(get.id, head, now=NOW)
    return http, get, gsrv


def test_x30_http_sse_posts_to_the_endpoint_and_reads_answers_on_the_stream() -> None:
    http, get, gsrv = _sse_ladder("/messages?session_id=abc")
    [init] = http.exchanges_to_start()
    isrv = Server(init)
    assert isrv.method == "POST" and isrv.body["method"] == "initialize"
    assert init.data.split(b" ")[1] == b"/messages?session_id=abc"  # relative to the SSE URL
    http.receive_data(init.id, isrv.answer(202, b"Accepted", "text/plain"), now=NOW)
    assert events(http) == []  # the answer comes on the stream
    answer = result(isrv.body["id"], {"protocolVersion": "2024-11-05", "capabilities": {},
                                      "serverInfo": {"name": "old", "version": "1"}})
    http.receive_data(get.id, gsrv.conn.send(h11.Data(
        data=b"event: message\ndata: " + answer + b"\n\n")), now=NOW)
    [ready] = events(http)
    assert isinstance(ready, Ready) and ready.protocol_version == "2024-11-05"
    [note] = http.exchanges_to_start()
    assert Server(note).body["method"] == "notifications/initialized"
    assert note.data.split(b" ")[1] == b"/messages?session_id=abc"


def test_x30_endpoint_on_another_origin_is_refused() -> None:
    http, _get, _gsrv = _sse_ladder("http://evil.example/steal")
    failed, closed = events(http)
    assert isinstance(failed, Failed) and isinstance(closed, Closed)
    assert "origin" in str(closed.error)
    assert http.exchanges_to_start() == []


def _modern_ready() -> StreamableHttp:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW, era="modern")
    [probe] = http.exchanges_to_start()
    srv = Server(probe)
    http.receive_data(probe.id, srv.answer(200, result(srv.body["id"], {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "resources": {}}})), now=NOW)
    events(http)
    return http


def _drop(http: StreamableHttp, ex: HttpExchange) -> None:
    srv = Server(ex)
    head = srv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    http.receive_data(ex.id, head, now=NOW)
    http.connection_lost(ex.id, now=NOW)


def test_x22_dropped_modern_stream_reissues_a_read_once_with_a_new_id() -> None:
    http = _modern_ready()
    handle = http.session.read_resource("demo://a", now=NOW)
    [first] = http.exchanges_to_start()
    first_id = Server(first).body["id"]
    _drop(http, first)
    [again] = http.exchanges_to_start()
    body = Server(again).body
    assert body["method"] == "resources/read" and body["id"] != first_id
    assert body["params"]["uri"] == "demo://a"
    _drop(http, again)  # a second drop: no endless re-issuing
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle


def test_x22_a_dropped_tool_call_is_never_reissued() -> None:
    http = _modern_ready()
    handle = http.session.call_tool("deploy", now=NOW)
    [ex] = http.exchanges_to_start()
    _drop(http, ex)
    assert http.exchanges_to_start() == []
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ConnectionClosed)


def test_x24_modern_404_with_32601_is_an_unknown_method_not_a_legacy_server() -> None:
    """X-24: in 2026-07-28 an unknown method is HTTP 404 + -32601: an ordinary error for that
    request; the session stays modern and usable."""
    http = _modern_ready()
    handle = http.session.send_request("x/unknown", {}, now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    body = json.dumps({"jsonrpc": "2.0", "id": srv.body["id"],
                       "error": {"code": -32601, "message": "Method not found"}}).encode()
    http.receive_data(ex.id, srv.answer(404, body), now=NOW)
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert getattr(failed.error, "code", None) == -32601
    assert http.session.era == "modern" and http.session.state.value == "ready"


def test_c05_legacy_cancel_posts_the_notification_and_closes_the_stream() -> None:
    """A timed-out or cancelled handshake-era request: notifications/cancelled is POSTed
    (a disconnect is not a cancel, C-05) and its own stream is closed too, so no thread
    stays blocked reading an answer nobody waits for."""
    http = legacy_http()
    handle = http.session.call_tool("slow", now=NOW)
    [ex] = http.exchanges_to_start()
    assert http.session.cancel(handle, "user") is True
    [note] = http.exchanges_to_start()
    body = Server(note).body
    assert body["method"] == "notifications/cancelled"
    assert body["params"]["requestId"] == Server(ex).body["id"]
    assert http.exchanges_to_abort() == [ex.id]


def test_a_stream_kept_open_after_its_answer_is_closed_by_the_client() -> None:
    """H-05 says the server SHOULD end the stream after the response; if it does not, the
    client closes it (nothing waits on it any more)."""
    http = legacy_http()
    http.session.call_tool("echo", {"text": "x"}, now=NOW)
    [ex] = http.exchanges_to_start()
    srv = Server(ex)
    head = srv.conn.send(h11.Response(status_code=200, headers=[
        ("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")]))
    head += srv.conn.send(h11.Data(
        data=b"data: " + result(srv.body["id"], {"content": []}) + b"\n\n: ping\n\n"))
    http.receive_data(ex.id, head, now=NOW)  # answered, the stream stays open
    assert [type(e).__name__ for e in events(http)] == ["Completed"]
    assert http.exchanges_to_start() == []
    assert http.exchanges_to_abort() == [ex.id]


def test_the_losing_probe_stream_is_closed_when_the_handshake_wins() -> None:
    http = StreamableHttp(ClientSession(INFO), URL)
    http.session.start(now=NOW)
    [probe] = http.exchanges_to_start()  # never answered
    http.handle_timeout(NOW + 0.5)  # the fallback: initialize too
    [init] = http.exchanges_to_start()
    srv = Server(init)
    http.receive_data(init.id, srv.answer(200, result(srv.body["id"], {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}})), now=NOW + 0.6)
    http.exchanges_to_start()
    assert probe.id in http.exchanges_to_abort()


def test_x21_mcp_name_uses_the_safe_header_form() -> None:
    http = _modern_ready()
    http.session.read_resource("file:///naïve ", now=NOW)
    [ex] = http.exchanges_to_start()
    assert Server(ex).headers["mcp-name"] == "=?base64?ZmlsZTovLy9uYcOvdmUg?="


def test_a_closed_session_closes_every_stream() -> None:
    http = legacy_http()
    http.session.call_tool("slow", now=NOW)
    [ex] = http.exchanges_to_start()
    http.session.close()
    http.exchanges_to_start()
    assert ex.id in http.exchanges_to_abort()
