"""The Streamable HTTP machine (mcp_proto._http) against an in-memory h11 server: what it asks
the binding to send, and what it makes of the answers (section 10.2, 10.3, 2.3)."""

from __future__ import annotations

import json
from typing import Any

import h11
import pytest

from mcp_proto import (
    ClientSession,
    Completed,
    Failed,
    Implementation,
    LocalProtocolError,
    Ready,
    SessionExpired,
)
from mcp_proto._http import HttpError, HttpExchange, HttpTarget, StreamableHttp

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
    [note] = http.exchanges_to_start()
    srv = Server(note)
    assert srv.body["method"] == "notifications/initialized"
    http.receive_data(note.id, srv.answer(202), now=NOW)
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
    http.receive_data(ex.id, Server(ex).answer(404, b"gone", "text/plain"), now=NOW)
    [failed] = events(http)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, SessionExpired)


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
