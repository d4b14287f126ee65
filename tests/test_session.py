"""ClientSession against the in-memory fake server.  Each test names the rule it checks
(spec-checklist ids: L-, V-, G-, J-, C-, P-, S-, T-, R-, F-, X-; "edge N" is section 13)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import pytest

from mcp_proto import (
    LATEST_HANDSHAKE_VERSION,
    AudioContent,
    BadMessage,
    BlobResourceContents,
    CallToolResult,
    Closed,
    Completed,
    CompleteResult,
    ConnectionClosed,
    EmbeddedResource,
    Failed,
    GetPromptResult,
    ImageContent,
    Implementation,
    Limits,
    ListChanged,
    LocalProtocolError,
    LogMessage,
    MessageTooLarge,
    OtherNotification,
    Progress,
    Prompt,
    ReadResourceResult,
    Ready,
    RemoteProtocolError,
    RequestCancelled,
    RequestHandle,
    RequestTimeout,
    Resource,
    ResourceLink,
    ResourceTemplate,
    ResourceUpdated,
    RpcError,
    ServerExited,
    ServerRequest,
    ServerRequestCancelled,
    State,
    TextContent,
    TextResourceContents,
    Tool,
    UnknownContent,
    UnsupportedVersion,
    client_capabilities,
)
from mcp_proto.wire._jsonrpc import dumps
from tests.fake_server import (
    SERVER_INFO,
    JSONObj,
    Pair,
    assert_valid_client_message,
    ready_pair,
    schema_available,
    schema_errors,
)

_NO_SCHEMA = ("the 2025-11-25 schema.json (tests/spec/2025-11-25/, $MCP_SPEC_DIR or "
              "/work/shared/spec/) or jsonschema is missing")


def needs_schema(test: Callable[[], None]) -> Callable[[], None]:
    """Skip without the schema locally; fail under CI, where it must be present."""
    @functools.wraps(test)
    def wrapper() -> None:
        if not schema_available():
            if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
                pytest.fail(_NO_SCHEMA, pytrace=False)
            pytest.skip(_NO_SCHEMA)
        test()
    return wrapper


def call(pair: Pair, name: str = "t", arguments: JSONObj | None = None,
         **kwargs: Any) -> tuple[RequestHandle, JSONObj]:
    handle = pair.session.call_tool(name, arguments, now=pair.now, **kwargs)
    request = pair.sent_one()
    assert request["id"] == handle.id and request["method"] == "tools/call"
    return handle, request


def text_result(text: str = "ok") -> JSONObj:
    return {"content": [{"type": "text", "text": text}]}


def one_event(pair: Pair) -> Any:
    events = pair.events()
    assert len(events) == 1, events
    return events[0]


# -- handshake ------------------------------------------------------------------------------


def test_l01_initialize_offers_newest_version() -> None:
    pair = Pair(capabilities={"roots": {"listChanged": True}})
    handle = pair.session.initialize(now=pair.now)
    assert pair.session.state is State.INITIALIZING
    init = pair.sent_one()
    assert init == {
        "jsonrpc": "2.0", "id": handle.id, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
                   "capabilities": {"roots": {"listChanged": True}},
                   "clientInfo": {"name": "test-client", "version": "0.0.1"}},
    }
    assert LATEST_HANDSHAKE_VERSION == "2025-11-25"


def test_v01_offers_first_configured_version() -> None:
    pair = Pair(versions=("2025-03-26", "2024-11-05"))
    pair.session.initialize(now=pair.now)
    assert pair.sent_one()["params"]["protocolVersion"] == "2025-03-26"


def test_unknown_configured_version_is_refused() -> None:
    with pytest.raises(ValueError):
        Pair(versions=("2099-01-01",))
    with pytest.raises(ValueError):
        Pair(versions=())


def test_l03_l04_initialized_sent_only_after_result() -> None:
    pair = Pair()
    handle = pair.session.initialize(now=pair.now)
    init = pair.sent_one()
    assert pair.sent() == [] and pair.events() == []
    pair.reply(init, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {**SERVER_INFO, "title": "Fake"},
                      "instructions": "be nice"})
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    ready = one_event(pair)
    assert ready == Ready(handle=handle, protocol_version="2025-11-25",
                          server_info=Implementation(name="fake-server", version="1.0.0",
                                                     title="Fake"),
                          capabilities={"tools": {}}, instructions="be nice")
    session = pair.session
    assert session.state is State.READY
    assert session.protocol_version == "2025-11-25"
    assert session.server_capabilities == {"tools": {}}
    assert session.instructions == "be nice"
    assert session.pending_count == 0 and session.next_deadline() is None


def test_v02_server_may_answer_an_older_supported_version() -> None:
    pair = Pair()
    ready = pair.handshake(version="2024-11-05")
    assert ready.protocol_version == pair.session.protocol_version == "2024-11-05"


def test_l05_no_request_but_ping_before_ready() -> None:
    pair = Pair()
    with pytest.raises(LocalProtocolError):
        pair.session.list_tools(now=pair.now)
    pair.session.initialize(now=pair.now)
    pair.sent()
    with pytest.raises(LocalProtocolError):
        pair.session.call_tool("t", now=pair.now)
    with pytest.raises(LocalProtocolError):
        pair.session.notify_roots_list_changed()
    ping = pair.session.ping(now=pair.now)
    assert pair.sent_one() == {"jsonrpc": "2.0", "id": ping.id, "method": "ping"}
    with pytest.raises(LocalProtocolError):
        pair.session.initialize(now=pair.now)


def test_v03_unsupported_version_fails_and_closes_sending_nothing() -> None:
    pair = Pair()
    handle = pair.session.initialize(now=pair.now)
    init = pair.sent_one()
    ping = pair.session.ping(now=pair.now)
    pair.sent()
    pair.reply(init, {"protocolVersion": "2099-01-01", "capabilities": {},
                      "serverInfo": SERVER_INFO})
    assert pair.sent() == []
    events = pair.events()
    assert [type(e) for e in events] == [Failed, Failed, Closed]
    assert events[0].handle == handle  # type: ignore[union-attr]
    error = events[0].error  # type: ignore[union-attr]
    assert isinstance(error, UnsupportedVersion) and error.received == "2099-01-01"
    assert events[1].handle == ping  # type: ignore[union-attr]
    assert events[2] == Closed(error=error)
    assert pair.session.state is State.CLOSED
    with pytest.raises(ConnectionClosed):
        pair.session.ping(now=pair.now)
    pair.server_request(1, "ping")  # ignored once closed
    assert pair.sent() == [] and pair.events() == []


@pytest.mark.parametrize("result", [
    {"protocolVersion": "2025-11-25", "capabilities": {}},
    {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"version": "1"}},
    {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": "fake"},
])
def test_l03_bad_server_info_fails_the_handshake(result: JSONObj) -> None:
    pair = Pair()
    handle = pair.session.initialize(now=pair.now)
    pair.reply(pair.sent_one(), result)
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert closed == Closed(error=failed.error)
    assert pair.sent() == []


def test_v05_initialize_error_answer_fails_and_closes() -> None:
    pair = Pair()
    pair.session.initialize(now=pair.now)
    pair.reply_error(pair.sent_one(), -32602, "Unsupported protocol version",
                     {"supported": ["2024-11-05"], "requested": "2025-11-25"})
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and isinstance(failed.error, RpcError)
    assert (failed.error.code, failed.error.method) == (-32602, "initialize")
    assert failed.error.data == {"supported": ["2024-11-05"], "requested": "2025-11-25"}
    assert isinstance(closed, Closed) and closed.error is failed.error
    assert pair.sent() == []


def test_c02_initialize_timeout_closes_without_cancelling() -> None:
    pair = Pair()
    handle = pair.session.initialize(now=pair.now, timeout=5.0)
    pair.sent()
    assert pair.session.next_deadline() == pair.now + 5.0
    pair.advance(4.9)
    assert pair.events() == []
    pair.advance(0.1)
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout)
    assert isinstance(closed, Closed)
    assert pair.sent() == []  # no notifications/cancelled for initialize
    assert pair.session.state is State.CLOSED


def test_c02_initialize_cannot_be_cancelled() -> None:
    pair = Pair()
    handle = pair.session.initialize(now=pair.now)
    with pytest.raises(LocalProtocolError):
        pair.session.cancel(handle)
    pair.sent()
    assert pair.sent() == [] and pair.session.pending_count == 1


@pytest.mark.parametrize("kind", ["non-object result", "oversize"])
def test_l03_malformed_initialize_answer_fails_and_closes(kind: str) -> None:
    pair = Pair(limits=Limits(max_message_size=1024))
    handle = pair.session.initialize(now=pair.now)
    init = pair.sent_one()
    if kind == "oversize":
        pair.reply(init, {"protocolVersion": "2025-11-25", "capabilities": {},
                          "serverInfo": SERVER_INFO, "instructions": "x" * 5000})
    else:
        pair.send({"jsonrpc": "2.0", "id": init["id"], "result": []})
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(closed, Closed)
    assert pair.session.state is State.CLOSED


# -- ping and early messages (G-01, L-06, edge 1) --------------------------------------------


def test_g01_l06_edge1_ping_and_log_mid_handshake() -> None:
    pair = Pair()
    pair.session.initialize(now=pair.now)
    init = pair.sent_one()
    pair.server_request("srv-1", "ping")
    assert pair.sent() == [{"jsonrpc": "2.0", "id": "srv-1", "result": {}}]
    pair.notify("notifications/message", {"level": "info", "logger": "boot", "data": "hi"})
    assert pair.events() == [LogMessage(level="info", data="hi", logger="boot")]
    pair.reply(init, {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": SERVER_INFO})
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    assert isinstance(one_event(pair), Ready)


def test_g01_ping_answered_before_initialize_and_when_ready() -> None:
    pair = Pair()
    pair.server_request(0, "ping", {})
    assert pair.sent() == [{"jsonrpc": "2.0", "id": 0, "result": {}}]
    pair.handshake()
    pair.server_request(7, "ping")
    assert pair.sent() == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    assert pair.events() == []


def test_g01_client_ping_completes_with_none() -> None:
    pair = ready_pair()
    handle = pair.session.ping(now=pair.now)
    request = pair.sent_one()
    assert request == {"jsonrpc": "2.0", "id": handle.id, "method": "ping"}
    pair.reply(request, {})
    assert one_event(pair) == Completed(handle=handle, value=None)


def _three_outcomes(pair: Pair) -> None:
    """A ping answered, a tool call failed, a log line: three events queued, in that order."""
    ping = pair.session.ping(now=pair.now)
    call = pair.session.call_tool("t", now=pair.now)
    sent = pair.sent()
    pair.reply(sent[0], {})
    pair.reply_error(sent[1], -32602, "no such tool")
    pair.notify("notifications/message", {"level": "info", "data": "hi"})
    assert [ping.id, call.id] == [m["id"] for m in sent]


def test_take_events_gives_what_next_event_gives_in_one_call() -> None:
    one, batch = ready_pair(server_caps={"tools": {}}), ready_pair(server_caps={"tools": {}})
    seen: list[Any] = []

    class Tap:  # a telemetry stand-in: what it is told of events (every other hook a no-op)
        def on_event(self, event: Any, now: float) -> None:
            seen.append(event)

        def __getattr__(self, name: str) -> Any:
            return lambda *args, **kwargs: None

    _three_outcomes(one)
    _three_outcomes(batch)
    expected = one.events()
    assert [type(e) for e in expected] == [Completed, Failed, LogMessage]
    batch.session.instrument(Tap())  # type: ignore[arg-type]
    taken = batch.session.take_events()
    # The same events (errors compare by their text), each told to the telemetry once.
    assert [repr(e) for e in taken] == [repr(e) for e in expected]
    assert [repr(e) for e in seen] == [repr(e) for e in expected] and seen == list(taken)
    assert batch.session.take_events() == () and batch.session.next_event() is None


# -- ids and stray responses (J-02, edge 2, edge 3) --------------------------------------------


def test_j02_ids_strictly_increase_and_are_never_reused() -> None:
    pair = ready_pair(server_caps={"tools": {}})
    handles = [pair.session.call_tool("t", now=pair.now),
               pair.session.list_prompts(now=pair.now),  # no capability: not sent
               pair.session.ping(now=pair.now)]
    with pytest.raises(LocalProtocolError):
        pair.session.call_tool("t", {"x": {1, 2}}, now=pair.now)
    handles.append(pair.session.list_tools(now=pair.now))
    sent = pair.sent()
    listing = sent[-1]
    pair.reply(listing, {"tools": [], "nextCursor": "c"})
    page2 = pair.sent_one()
    handles.append(pair.session.ping(now=pair.now))
    pair.sent()
    all_ids = [h.id for h in handles] + [page2["id"]]
    assert len(set(all_ids)) == len(all_ids)
    wire_ids = [m["id"] for m in pair.requests_sent()]
    assert wire_ids == sorted(wire_ids) and len(set(wire_ids)) == len(wire_ids)
    assert [h.id for h in handles] == sorted(h.id for h in handles)


def test_edge2_unknown_response_dropped_and_counted() -> None:
    pair = ready_pair()
    handle, _ = call(pair)
    pair.send({"jsonrpc": "2.0", "id": 999, "result": {}},
              {"jsonrpc": "2.0", "id": str(handle.id), "result": text_result()},
              {"jsonrpc": "2.0", "id": 998, "error": {"code": 1, "message": "m"}})
    assert pair.events() == []
    assert pair.session.stats.responses_dropped == 3
    assert pair.session.pending_count == 1


def test_edge3_duplicate_response_first_wins() -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.reply(request, text_result("first"))
    pair.reply(request, text_result("second"))
    pair.reply_error(request, -1, "third")
    [done] = pair.events()
    assert isinstance(done, Completed) and done.value.text == "first"
    assert pair.session.stats.responses_dropped == 2


def test_edge2_late_response_never_reaches_another_request() -> None:
    pair = ready_pair()
    first, req1 = call(pair, timeout=10.0)
    pair.advance(5.0)
    second, req2 = call(pair, timeout=10.0)
    pair.advance(5.0)
    [timed_out] = pair.events()
    assert isinstance(timed_out, Failed) and timed_out.handle == first
    pair.sent()
    pair.reply(req1, text_result("late"))
    assert pair.events() == [] and pair.session.stats.responses_dropped == 1
    pair.reply(req2, text_result("mine"))
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == second and done.value.text == "mine"


# -- timeouts (L-09) -------------------------------------------------------------------------


def test_l09_idle_timeout_fails_and_sends_cancelled() -> None:
    pair = ready_pair(limits=Limits(idle_timeout=30.0, request_timeout=100.0))
    handle, request = call(pair)
    assert pair.session.next_deadline() == pair.now + 30.0
    pair.advance(29.0)
    assert pair.events() == [] and pair.sent() == []
    pair.advance(1.0)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout)
    assert (failed.error.kind, failed.error.timeout, failed.error.method) == \
        ("idle", 30.0, "tools/call")
    cancelled = pair.sent_one()
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == request["id"]
    assert isinstance(cancelled["params"]["reason"], str)
    assert pair.session.pending_count == 0 and pair.session.next_deadline() is None


def test_l09_progress_resets_idle_but_not_total() -> None:
    pair = ready_pair()
    start = pair.now
    handle, request = call(pair, timeout=25.0, idle_timeout=10.0)
    token = request["params"]["_meta"]["progressToken"]
    assert pair.session.next_deadline() == start + 10.0
    for step, at in enumerate([8.0, 16.0, 24.0], start=1):
        pair.now = start + at
        pair.session.handle_timeout(pair.now)
        pair.notify("notifications/progress", {"progressToken": token, "progress": step})
        assert isinstance(one_event(pair), Progress)
    assert pair.session.next_deadline() == start + 25.0  # capped by the total deadline
    pair.advance(0.5)
    assert pair.events() == []
    pair.now = start + 25.0
    pair.session.handle_timeout(pair.now)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout) and failed.error.kind == "total"
    assert failed.error.timeout == 25.0
    assert pair.sent_one()["params"]["requestId"] == request["id"]


def test_l09_idle_deadline_without_progress() -> None:
    pair = ready_pair()
    start = pair.now
    _handle, request = call(pair, timeout=25.0, idle_timeout=10.0)
    pair.notify("notifications/progress",
                {"progressToken": request["params"]["_meta"]["progressToken"], "progress": 1})
    pair.events()
    pair.now = start + 9.0
    pair.session.handle_timeout(pair.now)
    assert pair.events() == []
    pair.now = start + 10.0
    pair.session.handle_timeout(pair.now)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.error.kind == "idle"  # type: ignore[attr-defined]


def test_l09_total_shorter_than_idle() -> None:
    pair = ready_pair()
    pair.session.ping(now=pair.now, timeout=2.0)
    pair.sent()
    assert pair.session.next_deadline() == pair.now + 2.0
    pair.advance(2.0)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.error.kind == "total"  # type: ignore[attr-defined]


def test_l09_each_request_has_its_own_deadline() -> None:
    pair = ready_pair()
    slow = pair.session.ping(now=pair.now, timeout=20.0)
    fast = pair.session.ping(now=pair.now, timeout=5.0)
    pair.sent()
    assert pair.session.next_deadline() == pair.now + 5.0
    pair.advance(5.0)
    assert [e.handle for e in pair.events()] == [fast]  # type: ignore[union-attr]
    assert pair.session.next_deadline() == pair.now + 15.0
    pair.advance(15.0)
    assert [e.handle for e in pair.events()] == [slow]  # type: ignore[union-attr]


def test_nonpositive_timeouts_are_refused() -> None:
    pair = ready_pair()
    with pytest.raises(ValueError):
        pair.session.ping(now=pair.now, timeout=0)
    with pytest.raises(ValueError):
        pair.session.call_tool("t", now=pair.now, idle_timeout=-1)
    assert pair.sent() == [] and pair.session.pending_count == 0
    with pytest.raises(ValueError):
        Limits(max_message_size=0)


# -- cancellation (C-01, C-03) ---------------------------------------------------------------


def test_c01_cancel_fails_the_handle_and_notifies_the_server() -> None:
    pair = ready_pair()
    handle, request = call(pair)
    assert pair.session.cancel(handle, "user pressed stop") is True
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestCancelled)
    assert failed.error.reason == "user pressed stop"
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": request["id"],
                                       "reason": "user pressed stop"}}]
    assert pair.session.cancel(handle) is False
    assert pair.sent() == [] and pair.session.next_deadline() is None


def test_c03_late_response_after_cancel_is_dropped() -> None:
    pair = ready_pair()
    handle, request = call(pair)
    pair.session.cancel(handle)
    assert pair.sent_one()["params"] == {"requestId": request["id"]}
    pair.events()
    pair.reply(request, text_result())
    assert pair.events() == []
    assert pair.session.stats.responses_dropped == 1


def test_c01_cancel_of_finished_operation_returns_false() -> None:
    pair = ready_pair()
    handle, request = call(pair)
    pair.reply(request, text_result())
    pair.events()
    assert pair.session.cancel(handle) is False
    assert pair.sent() == []


def test_c01_cancel_of_a_list_cancels_its_current_page() -> None:
    pair = ready_pair()
    handle = pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), {"tools": [], "nextCursor": "p2"})
    page2 = pair.sent_one()
    assert pair.session.cancel(handle) is True
    assert pair.sent_one()["params"] == {"requestId": page2["id"]}
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert pair.session.pending_count == 0


# -- progress (P-01..P-03, edge 4) -----------------------------------------------------------


def test_p01_progress_token_is_sent_only_when_asked() -> None:
    pair = ready_pair()
    handle, request = call(pair, meta={"trace": "x"})
    assert request["params"]["_meta"] == {"trace": "x", "progressToken": handle.id}
    _, quiet = call(pair, progress=False)
    assert "_meta" not in quiet["params"]


def test_p02_progress_events_in_order() -> None:
    pair = ready_pair()
    handle, request = call(pair)
    token = request["params"]["_meta"]["progressToken"]
    pair.notify("notifications/progress", {"progressToken": token, "progress": 1})
    pair.notify("notifications/progress",
                {"progressToken": token, "progress": 2.5, "total": 10, "message": "half"})
    assert pair.events() == [
        Progress(handle=handle, progress=1),
        Progress(handle=handle, progress=2.5, total=10, message="half"),
    ]


def test_p02_non_increasing_progress_is_dropped() -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    token = request["params"]["_meta"]["progressToken"]
    for value in (5, 5, 3, 6):
        pair.notify("notifications/progress", {"progressToken": token, "progress": value})
    assert [e.progress for e in pair.events()] == [5, 6]  # type: ignore[union-attr]
    assert pair.session.stats.progress_dropped == 2


@pytest.mark.parametrize("params", [
    {"progressToken": 12345, "progress": 1},            # unknown token
    {"progressToken": "2", "progress": 1},              # string, never ours
    {"progressToken": 2, "progress": "1"},              # progress not a number
    {"progressToken": 2, "progress": True},
    {"progressToken": 2},
])
def test_p03_bad_or_unknown_progress_is_dropped(params: JSONObj) -> None:
    pair = ready_pair()
    handle, _ = call(pair)
    assert handle.id == 2
    pair.notify("notifications/progress", params)
    assert pair.events() == []
    assert pair.session.stats.progress_dropped == 1


def test_p02_non_finite_progress_is_dropped() -> None:
    pair = ready_pair()
    handle, request = call(pair)
    token = request["params"]["_meta"]["progressToken"]
    for value in (b"5", b"NaN", b"3", b"Infinity", b"-Infinity", b"6"):
        pair.feed(b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
                  b'{"progressToken":%d,"progress":%s}}\n' % (token, value))
    events = pair.events()
    assert all(isinstance(e, Progress) and e.handle == handle for e in events)
    assert [e.progress for e in events if isinstance(e, Progress)] == [5, 6]


def test_p03_edge4_progress_after_completion_is_dropped() -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.reply(request, text_result())
    pair.notify("notifications/progress",
                {"progressToken": request["params"]["_meta"]["progressToken"], "progress": 1})
    assert [type(e) for e in pair.events()] == [Completed]
    assert pair.session.stats.progress_dropped == 1


def test_p03_progress_for_request_that_asked_none_is_dropped() -> None:
    pair = ready_pair()
    handle, _ = call(pair, progress=False)
    pair.notify("notifications/progress", {"progressToken": handle.id, "progress": 1})
    assert pair.events() == [] and pair.session.stats.progress_dropped == 1


# -- pagination (S-01) -----------------------------------------------------------------------


def _tool(name: str) -> JSONObj:
    return {"name": name, "inputSchema": {"type": "object"}}


def test_s01_list_follows_next_cursor() -> None:
    pair = ready_pair()
    handle = pair.session.list_tools(now=pair.now)
    first = pair.sent_one()
    assert first == {"jsonrpc": "2.0", "id": handle.id, "method": "tools/list"}
    pair.reply(first, {"tools": [_tool("a")], "nextCursor": "c1"})
    second = pair.sent_one()
    assert second["params"] == {"cursor": "c1"} and second["id"] > first["id"]
    assert pair.events() == []
    pair.reply(second, {"tools": [_tool("b"), _tool("c")], "nextCursor": "c2"})
    third = pair.sent_one()
    assert third["params"] == {"cursor": "c2"}
    pair.reply(third, {"tools": []})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle
    assert [t.name for t in done.value] == ["a", "b", "c"]
    assert all(isinstance(t, Tool) for t in done.value)
    assert pair.sent() == []


def test_s01_repeated_cursor_is_refused() -> None:
    pair = ready_pair()
    handle = pair.session.list_prompts(now=pair.now)
    pair.reply(pair.sent_one(), {"prompts": [], "nextCursor": "a"})
    pair.reply(pair.sent_one(), {"prompts": [], "nextCursor": "b"})
    pair.reply(pair.sent_one(), {"prompts": [], "nextCursor": "a"})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError) and "repeated" in str(failed.error)
    assert pair.sent() == [] and pair.session.pending_count == 0


def test_s01_max_pages() -> None:
    pair = ready_pair(limits=Limits(max_pages=3))
    handle = pair.session.list_resources(now=pair.now)
    for n in range(3):
        pair.reply(pair.sent_one(), {"resources": [], "nextCursor": f"c{n}"})
    assert len([m for m in pair.log if m.get("method") == "resources/list"]) == 3
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert "pages" in str(failed.error)
    assert pair.sent() == []


def test_s01_max_pages_last_page_without_cursor_completes() -> None:
    pair = ready_pair(limits=Limits(max_pages=2))
    pair.session.list_resources(now=pair.now)
    pair.reply(pair.sent_one(), {"resources": [], "nextCursor": "c"})
    pair.reply(pair.sent_one(), {"resources": [{"uri": "file:///a", "name": "a"}]})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.value[0].uri == "file:///a"


def test_s01_max_items() -> None:
    pair = ready_pair(limits=Limits(max_list_items=3))
    handle = pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), {"tools": [_tool("a"), _tool("b")], "nextCursor": "c"})
    pair.reply(pair.sent_one(), {"tools": [_tool("c"), _tool("d")]})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert "items" in str(failed.error)


@pytest.mark.parametrize(("method", "result"), [
    ("list_tools", {"tools": {}}),
    ("list_tools", {}),
    ("list_tools", {"tools": [{"name": "no schema"}]}),
    ("list_tools", {"tools": [], "nextCursor": 5}),
    ("list_resources", {"resources": [{"name": "no uri"}]}),
    ("list_prompts", {"prompts": [{"name": 1}]}),
])
def test_s01_malformed_page_fails_the_list(method: str, result: JSONObj) -> None:
    pair = ready_pair()
    handle = getattr(pair.session, method)(now=pair.now)
    pair.reply(pair.sent_one(), result)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.session.state is State.READY


@pytest.mark.parametrize(("method", "capability"), [
    ("list_tools", "tools"), ("list_resources", "resources"),
    ("list_resource_templates", "resources"), ("list_prompts", "prompts"),
])
def test_s01_list_without_capability_completes_empty_without_sending(
        method: str, capability: str) -> None:
    caps: JSONObj = {k: {} for k in ("tools", "resources", "prompts") if k != capability}
    pair = ready_pair(server_caps=caps)
    handle = getattr(pair.session, method)(now=pair.now)
    assert pair.sent() == []
    assert pair.events() == [Completed(handle=handle, value=[])]
    assert pair.session.pending_count == 0


def test_list_each_kind_parses_its_items() -> None:
    pair = ready_pair()
    resources = pair.session.list_resources(now=pair.now)
    pair.reply(pair.sent_one(), {"resources": [
        {"uri": "file:///x", "name": "x", "mimeType": "text/plain", "size": 3}]})
    templates = pair.session.list_resource_templates(now=pair.now)
    request = pair.sent_one()
    assert request["method"] == "resources/templates/list"
    pair.reply(request, {"resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "p"}]})
    prompts = pair.session.list_prompts(now=pair.now)
    pair.reply(pair.sent_one(), {"prompts": [
        {"name": "p", "arguments": [{"name": "a", "required": True}]}]})
    values = {e.handle: e.value for e in pair.events()}  # type: ignore[union-attr]
    [res] = values[resources]
    assert isinstance(res, Resource) and (res.mime_type, res.size) == ("text/plain", 3)
    [tmpl] = values[templates]
    assert isinstance(tmpl, ResourceTemplate) and tmpl.uri_template == "file:///{p}"
    [prompt] = values[prompts]
    assert isinstance(prompt, Prompt) and prompt.arguments[0].required is True


# -- tools/call (T-02, T-03, T-07) -----------------------------------------------------------


def test_t02_t07_call_tool_typed_content() -> None:
    pair = ready_pair()
    handle, request = call(pair, "echo", {"text": "hi"})
    assert request["params"]["name"] == "echo"
    assert request["params"]["arguments"] == {"text": "hi"}
    future = {"type": "hologram", "payload": [1, 2]}
    pair.reply(request, {
        "content": [
            {"type": "text", "text": "line 1"},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///r", "name": "r", "size": 9},
            {"type": "resource", "resource": {"uri": "file:///t", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAE=",
                                              "mimeType": "application/x"}},
            future,
            {"type": "text", "text": "line 2"},
        ],
        "structuredContent": {"answer": 42},
    })
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle
    result = done.value
    assert isinstance(result, CallToolResult) and result.is_error is False
    text, image, audio, link, embedded_text, embedded_blob, unknown, _ = result.content
    assert text == TextContent(text="line 1")
    assert image == ImageContent(data="aGk=", mime_type="image/png")
    assert audio == AudioContent(data="aGk=", mime_type="audio/wav")
    assert link == ResourceLink(uri="file:///r", name="r", size=9)
    assert embedded_text == EmbeddedResource(
        resource=TextResourceContents(uri="file:///t", text="body"))
    assert isinstance(embedded_blob, EmbeddedResource)
    assert embedded_blob.resource == BlobResourceContents(uri="file:///b", blob="AAE=",
                                                         mime_type="application/x")
    assert unknown == UnknownContent(type="hologram", raw=future)
    assert result.structured_content == {"answer": 42}
    assert result.text == "line 1\nline 2"


def test_t03_is_error_result_is_completed_not_failed() -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.reply(request, {"content": [{"type": "text", "text": "bad input"}], "isError": True})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.value.is_error is True
    assert done.value.text == "bad input"


def test_t03_rpc_error_is_failed() -> None:
    pair = ready_pair()
    _handle, request = call(pair, "nope")
    pair.reply_error(request, -32602, "Unknown tool: nope")
    [failed] = pair.events()
    assert isinstance(failed, Failed) and isinstance(failed.error, RpcError)
    assert (failed.error.code, failed.error.message, failed.error.method) == \
        (-32602, "Unknown tool: nope", "tools/call")


def test_call_tool_structured_content_only() -> None:
    pair = ready_pair()
    _, request = call(pair)
    pair.reply(request, {"structuredContent": {"x": 1}})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.value.content == ()


def test_call_tool_requires_tools_capability_and_json_arguments() -> None:
    pair = ready_pair(server_caps={"resources": {}})
    with pytest.raises(LocalProtocolError):
        pair.session.call_tool("t", now=pair.now)
    pair2 = ready_pair()
    with pytest.raises(LocalProtocolError):
        pair2.session.call_tool("t", {"x": float("nan")}, now=pair2.now)
    assert pair.sent() == [] and pair2.sent() == []
    assert pair2.session.pending_count == 0


# -- other operations: wire shapes against the schema (R-02, R-03, R-11, R-20, G-10) ----------


def test_r02_read_resource() -> None:
    pair = ready_pair()
    handle = pair.session.read_resource("file:///a.txt", now=pair.now)
    request = pair.sent_one()
    assert request == {"jsonrpc": "2.0", "id": handle.id, "method": "resources/read",
                       "params": {"uri": "file:///a.txt"}}
    pair.reply(request, {"contents": [{"uri": "file:///a.txt", "text": "A"},
                                      {"uri": "file:///b", "blob": "AA=="}]})
    [done] = pair.events()
    assert isinstance(done, Completed) and isinstance(done.value, ReadResourceResult)
    assert done.value.contents == (TextResourceContents(uri="file:///a.txt", text="A"),
                                   BlobResourceContents(uri="file:///b", blob="AA=="))


def test_r11_get_prompt() -> None:
    pair = ready_pair()
    pair.session.get_prompt("greet", {"who": "you"}, now=pair.now)
    request = pair.sent_one()
    assert request["params"] == {"name": "greet", "arguments": {"who": "you"}}
    pair.reply(request, {"description": "d", "messages": [
        {"role": "user", "content": {"type": "text", "text": "hello you"}}]})
    [done] = pair.events()
    assert isinstance(done, Completed) and isinstance(done.value, GetPromptResult)
    assert done.value.description == "d"
    assert done.value.messages[0].role == "user"
    assert done.value.messages[0].content == TextContent(text="hello you")


def test_r20_complete() -> None:
    pair = ready_pair()
    handle = pair.session.complete({"type": "ref/prompt", "name": "greet"}, "who", "y",
                                   context_arguments={"lang": "en"}, now=pair.now)
    request = pair.sent_one()
    assert request["params"] == {"ref": {"type": "ref/prompt", "name": "greet"},
                                 "argument": {"name": "who", "value": "y"},
                                 "context": {"arguments": {"lang": "en"}}}
    pair.reply(request, {"completion": {"values": ["you", "yak"], "total": 2,
                                        "hasMore": False}})
    [done] = pair.events()
    assert done == Completed(handle=handle, value=CompleteResult(values=("you", "yak"),
                                                                 total=2))


def test_r20_complete_needs_completions_capability_except_2024() -> None:
    pair = ready_pair(server_caps={"prompts": {}})
    with pytest.raises(LocalProtocolError):
        pair.session.complete({"type": "ref/prompt", "name": "p"}, "a", "", now=pair.now)
    old = ready_pair(version="2024-11-05", server_caps={"prompts": {}})
    old.session.complete({"type": "ref/prompt", "name": "p"}, "a", "", now=old.now)
    assert old.sent_one()["method"] == "completion/complete"


def test_r03_subscribe_and_unsubscribe() -> None:
    pair = ready_pair()
    sub = pair.session.subscribe("file:///a", now=pair.now)
    unsub = pair.session.unsubscribe("file:///a", now=pair.now)
    s, u = pair.sent()
    assert (s["method"], s["params"]) == ("resources/subscribe", {"uri": "file:///a"})
    assert (u["method"], u["params"]) == ("resources/unsubscribe", {"uri": "file:///a"})
    pair.reply(s, {})
    pair.reply(u, {})
    assert pair.events() == [Completed(handle=sub, value=None),
                             Completed(handle=unsub, value=None)]
    pair.notify("notifications/resources/updated", {"uri": "file:///a"})
    assert pair.events() == [ResourceUpdated(uri="file:///a")]


def test_r03_subscribe_needs_resources_subscribe() -> None:
    pair = ready_pair(server_caps={"resources": {}})
    with pytest.raises(LocalProtocolError):
        pair.session.subscribe("file:///a", now=pair.now)
    with pytest.raises(LocalProtocolError):
        pair.session.unsubscribe("file:///a", now=pair.now)
    assert pair.sent() == []


def test_g10_set_logging_level() -> None:
    pair = ready_pair()
    handle = pair.session.set_logging_level("warning", now=pair.now)
    assert pair.sent_one() == {"jsonrpc": "2.0", "id": handle.id, "method": "logging/setLevel",
                               "params": {"level": "warning"}}
    with pytest.raises(ValueError):
        pair.session.set_logging_level("loud", now=pair.now)
    no_logging = ready_pair(server_caps={"tools": {}})
    with pytest.raises(LocalProtocolError):
        no_logging.session.set_logging_level("info", now=no_logging.now)


def _every_operation(pair: Pair) -> None:
    s, now = pair.session, pair.now
    s.list_tools(now=now)
    s.list_resources(now=now)
    s.list_resource_templates(now=now)
    s.list_prompts(now=now)
    s.call_tool("t", {"a": [1, {"b": None}]}, now=now, meta={"k": "v"})
    s.call_tool("t", now=now, progress=False)
    s.read_resource("file:///x", now=now)
    s.get_prompt("p", now=now)
    s.get_prompt("p", {"a": "b"}, now=now)
    s.complete({"type": "ref/resource", "uri": "file:///{x}"}, "x", "v", now=now)
    s.complete({"type": "ref/prompt", "name": "p"}, "x", "v", context_arguments={"y": "z"},
               now=now)
    s.subscribe("file:///x", now=now)
    s.unsubscribe("file:///x", now=now)
    s.set_logging_level("debug", now=now)
    s.ping(now=now)
    s.notify_roots_list_changed()
    handle = s.call_tool("t", now=now)
    s.cancel(handle, "why")
    s.cancel(s.ping(now=now))
    pair.server_request(1, "ping")
    pair.server_request(2, "unknown/method")
    pair.server_request(3, "roots/list")
    pair.session.respond(3, {"roots": [{"uri": "file:///home", "name": "home"}]})


@needs_schema
def test_x01_every_emitted_message_matches_the_2025_11_25_schema() -> None:
    pair = Pair(capabilities={"roots": {"listChanged": True}, "sampling": {},
                              "elicitation": {"form": {}}}, validate=False)
    pair.handshake()
    _every_operation(pair)
    pair.advance(10_000.0)  # every remaining request times out: notifications/cancelled
    pair.sent()
    methods = {m.get("method") for m in pair.log}
    assert {"initialize", "notifications/initialized", "tools/list", "resources/list",
            "resources/templates/list", "prompts/list", "tools/call", "resources/read",
            "prompts/get", "completion/complete", "resources/subscribe",
            "resources/unsubscribe", "logging/setLevel", "ping",
            "notifications/roots/list_changed", "notifications/cancelled", None} <= methods
    for message in pair.log:
        assert_valid_client_message(message)


@needs_schema
def test_schema_helper_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_valid_client_message({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {}})
    with pytest.raises(AssertionError):
        assert_valid_client_message({"jsonrpc": "2.0", "id": None, "method": "ping"})
    with pytest.raises(AssertionError):
        assert_valid_client_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 1.5}})
    assert schema_errors({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "PingRequest") == []


# -- server requests (F-01..F-03, G-01) ------------------------------------------------------


SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10}


def test_f02_sampling_reaches_the_host_when_declared() -> None:
    pair = ready_pair(capabilities={"sampling": {}})
    pair.server_request("s-1", "sampling/createMessage", SAMPLING)
    assert pair.sent() == []
    assert one_event(pair) == ServerRequest(request_id="s-1", method="sampling/createMessage",
                                            params=SAMPLING)
    answer = {"role": "assistant", "content": {"type": "text", "text": "yo"},
              "model": "m", "stopReason": "endTurn"}
    assert pair.session.respond("s-1", answer) is True
    assert pair.sent() == [{"jsonrpc": "2.0", "id": "s-1", "result": answer}]
    assert pair.session.respond("s-1", answer) is False
    assert pair.sent() == []


@pytest.mark.parametrize(("method", "params"), [
    ("sampling/createMessage", SAMPLING),
    ("elicitation/create", {"message": "m", "requestedSchema": {"type": "object"}}),
    ("roots/list", None),
    ("tools/list", None),
    ("does/not/exist", {}),
])
def test_undeclared_or_unknown_server_request_answered_32601(
        method: str, params: JSONObj | None) -> None:
    pair = ready_pair()
    pair.server_request(9, method, params)
    assert pair.events() == []
    [answer] = pair.sent()
    assert answer["id"] == 9 and answer["error"]["code"] == -32601
    assert pair.session.respond(9, {}) is False


def test_f02_sampling_with_tools_needs_sampling_tools() -> None:
    pair = ready_pair(capabilities={"sampling": {}})
    pair.server_request(1, "sampling/createMessage", {**SAMPLING, "tools": []})
    pair.server_request(2, "sampling/createMessage", {**SAMPLING, "toolChoice": {}})
    assert pair.events() == []
    assert [(m["id"], m["error"]["code"]) for m in pair.sent()] == [(1, -32602), (2, -32602)]
    ok = ready_pair(capabilities={"sampling": {"tools": {}}})
    ok.server_request(1, "sampling/createMessage", {**SAMPLING, "tools": []})
    assert isinstance(one_event(ok), ServerRequest) and ok.sent() == []


@pytest.mark.parametrize(("declared", "mode", "reaches_host"), [
    ({}, None, True),
    ({}, "form", True),
    ({}, "url", False),
    ({"form": {}}, "url", False),
    ({"url": {}}, None, False),
    ({"url": {}}, "url", True),
    ({"form": {}, "url": {}}, "url", True),
    ({"form": {}, "url": {}}, "telepathy", False),
])
def test_f03_elicitation_mode_must_be_declared(declared: JSONObj, mode: str | None,
                                               reaches_host: bool) -> None:
    pair = ready_pair(capabilities={"elicitation": declared})
    params: JSONObj = {"message": "m"}
    if mode is not None:
        params["mode"] = mode
    if mode == "url":  # a well-formed URL request (F-04's checks are tested apart)
        params.update(url="https://auth.example/consent", elicitationId="el-1")
    pair.server_request("e-1", "elicitation/create", params)
    if reaches_host:
        assert isinstance(one_event(pair), ServerRequest) and pair.sent() == []
    else:
        assert pair.events() == []
        [answer] = pair.sent()
        assert answer["error"]["code"] == -32602


def test_f03_unhashable_elicitation_mode_is_refused_not_raised() -> None:
    pair = ready_pair(capabilities={"elicitation": {}})
    pair.server_request("e-1", "elicitation/create", {"message": "m", "mode": ["url"]})
    [answer] = pair.sent()
    assert answer["error"]["code"] == -32602


def test_f01_roots_list_when_declared() -> None:
    pair = ready_pair(capabilities={"roots": {"listChanged": True}})
    pair.server_request("r-1", "roots/list")
    assert one_event(pair) == ServerRequest(request_id="r-1", method="roots/list", params={})
    assert pair.session.respond_error("r-1", -1, "user said no") is True
    assert pair.sent() == [{"jsonrpc": "2.0", "id": "r-1",
                            "error": {"code": -1, "message": "user said no"}}]
    assert pair.session.respond_error("r-1", -1, "again") is False


def test_c03_server_cancels_its_request() -> None:
    pair = ready_pair(capabilities={"sampling": {}})
    pair.server_request(4, "sampling/createMessage", SAMPLING)
    pair.events()
    pair.notify("notifications/cancelled", {"requestId": 4, "reason": "too slow"})
    assert pair.events() == [ServerRequestCancelled(request_id=4, reason="too slow")]
    assert pair.session.respond(4, {"model": "m"}) is False
    assert pair.session.respond_error(4, -1, "x") is False
    assert pair.sent() == []
    pair.notify("notifications/cancelled", {"requestId": 4})  # again: unknown now
    pair.notify("notifications/cancelled", {"requestId": "nobody"})
    assert pair.events() == []


def test_duplicate_server_request_id_is_refused() -> None:
    pair = ready_pair(capabilities={"roots": {}})
    pair.server_request(1, "roots/list")
    pair.server_request(1, "roots/list")
    assert len(pair.events()) == 1
    [answer] = pair.sent()
    assert answer["id"] == 1 and answer["error"]["code"] == -32602
    assert pair.session.respond(1, {"roots": []}) is True


def test_respond_with_non_json_result_is_a_local_error_and_retryable() -> None:
    pair = ready_pair(capabilities={"roots": {}})
    pair.server_request(1, "roots/list")
    pair.events()
    with pytest.raises(LocalProtocolError):
        pair.session.respond(1, {"roots": [float("nan")]})
    assert pair.session.respond(1, {"roots": []}) is True


@pytest.mark.parametrize(("outcome", "code", "text"), [
    (RpcError(-1, "User rejected sampling request", {"why": "no"}), -1, "User rejected"),
    (RpcError(-1, "rejected", {float("nan")}), -1, "rejected"),
    (ValueError("boom"), -32603, "ValueError: boom"),
    (None, -32603, "returned NoneType"),
    ({"roots": [float("nan")]}, -32603, "no JSON"),
], ids=["rpc-error", "rpc-error-bad-data", "exception", "none", "not-json"])
def test_f02_respond_with_turns_a_handler_failure_into_an_error_answer(
        outcome: object, code: int, text: str) -> None:
    """F-02: the handler's exception or bad value becomes one error answer, never an
    exception in the binding and never silence."""
    pair = ready_pair(capabilities={"roots": {}})
    pair.server_request("s-1", "roots/list")
    pair.events()
    assert pair.session.respond_with("s-1", outcome) is True
    [answer] = pair.sent()
    assert answer["id"] == "s-1" and answer["error"]["code"] == code
    assert text in answer["error"]["message"]
    if code == -1 and isinstance(outcome, RpcError) and outcome.data == {"why": "no"}:
        assert answer["error"]["data"] == {"why": "no"}
    assert pair.session.respond_with("s-1", {}) is False  # answered once only


def test_respond_with_a_result_object() -> None:
    pair = ready_pair(capabilities={"roots": {}})
    pair.server_request(7, "roots/list")
    pair.events()
    assert pair.session.respond_with(7, {"roots": []}) is True
    assert pair.sent() == [{"jsonrpc": "2.0", "id": 7, "result": {"roots": []}}]


def test_client_capabilities_declare_what_the_host_answers() -> None:
    assert client_capabilities() == {}
    assert client_capabilities(sampling=True, elicitation=True, roots=True) == {
        "sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": True}}


# -- notifications ---------------------------------------------------------------------------


def test_g10_notifications_become_events() -> None:
    pair = ready_pair()
    pair.notify("notifications/tools/list_changed")
    pair.notify("notifications/resources/list_changed")
    pair.notify("notifications/prompts/list_changed", {})
    pair.notify("notifications/message", {"level": 3, "data": {"k": 1}})
    pair.notify("notifications/whatever", {"a": 1})
    pair.notify("notifications/resources/updated", {})
    events = pair.events()
    assert events[:5] == [ListChanged(kind="tools"), ListChanged(kind="resources"),
                          ListChanged(kind="prompts"),
                          LogMessage(level="info", data={"k": 1}),
                          OtherNotification(method="notifications/whatever", params={"a": 1})]
    assert isinstance(events[5], BadMessage)
    assert pair.sent() == []  # J-04: notifications are never answered


# -- batches (J-05) --------------------------------------------------------------------------


def test_j05_batch_accepted_when_2025_03_26_negotiated() -> None:
    pair = ready_pair(version="2025-03-26")
    _handle, request = call(pair)
    pair.send([
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
                                                                          "data": "x"}},
        {"jsonrpc": "2.0", "id": request["id"], "result": text_result()},
        {"jsonrpc": "2.0", "id": "srv", "method": "ping"},
        7,
    ])
    events = pair.events()
    assert [type(e) for e in events] == [LogMessage, Completed, BadMessage]
    assert pair.sent() == [{"jsonrpc": "2.0", "id": "srv", "result": {}}]
    pair.send([])
    assert isinstance(one_event(pair), BadMessage)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
def test_j05_batch_refused_otherwise(version: str) -> None:
    pair = ready_pair(version=version)
    _handle, request = call(pair)
    pair.send([{"jsonrpc": "2.0", "id": request["id"], "result": text_result()},
               {"jsonrpc": "2.0", "id": "srv", "method": "ping"}])
    [bad] = pair.events()
    assert isinstance(bad, BadMessage) and "J-05" in str(bad.error)
    assert pair.sent() == [] and pair.session.pending_count == 1


# -- garbage and errors not tied to a request (X-02, edge 5, edge 11) -------------------------


@pytest.mark.parametrize("line", [
    b"this is not json", b"\xff\xfe{}", b"42", b'"text"', b"null", b"{}",
    b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","method":"x","params":[1]}',
])
def test_edge11_garbage_line_is_bad_message_and_session_goes_on(line: bytes) -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.feed(line + b"\n")
    [bad] = pair.events()
    assert isinstance(bad, BadMessage) and isinstance(bad.error, RemoteProtocolError)
    assert pair.session.stats.bad_messages == 1
    assert pair.session.pending_count == 1
    pair.reply(request, text_result())
    assert isinstance(one_event(pair), Completed)


def test_edge11_deeply_nested_json_is_bad_message() -> None:
    pair = ready_pair()
    pair.feed(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    [bad] = pair.events()
    assert isinstance(bad, BadMessage)


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}},
])
def test_edge5_error_without_id_is_bad_message(message: JSONObj) -> None:
    pair = ready_pair()
    call(pair)
    pair.send(message)
    [bad] = pair.events()
    assert isinstance(bad, BadMessage) and isinstance(bad.error, RpcError)
    assert bad.error.code == -32700
    assert pair.session.pending_count == 1 and pair.session.state is State.READY


# -- oversize messages -----------------------------------------------------------------------

LIMIT = 4096


def _big_text() -> str:
    return "x" * (LIMIT * 3)


@pytest.mark.parametrize("order", ["id first", "id last", "id first, CRLF"])
def test_oversize_response_fails_exactly_its_request(order: str) -> None:
    pair = ready_pair(limits=Limits(max_message_size=LIMIT))
    before, req_before = call(pair)
    target, req_target = call(pair)
    after, req_after = call(pair)
    result = text_result(_big_text())
    if order == "id last":
        big = {"jsonrpc": "2.0", "result": result, "id": req_target["id"]}
    else:
        big = {"jsonrpc": "2.0", "id": req_target["id"], "result": result}
    line = dumps(big) + (b"\r\n" if "CRLF" in order else b"\n")
    for i in range(0, len(line), 1000):  # arrives in pieces: dropped while partial
        pair.feed(line[i:i + 1000])
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == target
    assert isinstance(failed.error, MessageTooLarge) and failed.error.limit == LIMIT
    pair.reply(req_after, text_result("after"))
    pair.reply(req_before, text_result("before"))
    done = [e for e in pair.events() if isinstance(e, Completed)]
    assert [(e.handle, e.value.text) for e in done] == [(after, "after"), (before, "before")]
    assert pair.session.state is State.READY


def test_oversize_without_top_level_id_is_bad_message() -> None:
    pair = ready_pair(limits=Limits(max_message_size=LIMIT))
    _handle, request = call(pair)
    nested = {"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"data": {"id": request["id"], "text": _big_text()}, "level": "info",
                         "id": request["id"]}}
    pair.send(nested)
    [bad] = pair.events()
    assert isinstance(bad, BadMessage) and isinstance(bad.error, MessageTooLarge)
    assert pair.session.pending_count == 1


@pytest.mark.parametrize("order", ["id first", "id last"])
def test_oversize_server_request_does_not_fail_our_request(order: str) -> None:
    pair = ready_pair(capabilities={"sampling": {}}, limits=Limits(max_message_size=LIMIT))
    _handle, request = call(pair)
    params = {**SAMPLING, "systemPrompt": _big_text()}
    if order == "id first":
        big = {"jsonrpc": "2.0", "id": request["id"], "method": "sampling/createMessage",
               "params": params}
    else:
        big = {"jsonrpc": "2.0", "method": "sampling/createMessage", "params": params,
               "id": request["id"]}
    pair.send(big)
    [bad] = pair.events()
    assert isinstance(bad, BadMessage)
    assert pair.session.pending_count == 1


@pytest.mark.parametrize("order", ["id first", "id last"])
def test_oversize_response_with_method_key_in_result_fails_its_request(order: str) -> None:
    pair = ready_pair(limits=Limits(max_message_size=LIMIT))
    handle, request = call(pair)
    result = {"structuredContent": {"method": "GET", "body": _big_text(), "then": {"method": 1}}}
    if order == "id first":
        big = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    else:
        big = {"jsonrpc": "2.0", "result": result, "id": request["id"]}
    pair.send(big)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, MessageTooLarge)


# -- malformed answers to known requests -----------------------------------------------------


@pytest.mark.parametrize("answer", [
    {"result": {"content": "not a list"}},
    {"result": {"content": [{"type": "text"}]}},
    {"result": {"content": [], "isError": "yes"}},
    {"result": []},
    {"result": {}, "error": {"code": 1, "message": "both"}},
    {"error": {"code": "1", "message": "string code"}},
    {"error": "flat"},
])
def test_malformed_answer_fails_only_its_request(answer: JSONObj) -> None:
    pair = ready_pair()
    bad_handle, bad_request = call(pair)
    good_handle, good_request = call(pair)
    pair.send({"jsonrpc": "2.0", "id": bad_request["id"], **answer})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == bad_handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.session.state is State.READY and pair.session.pending_count == 1
    pair.reply(good_request, text_result())
    assert one_event(pair) == Completed(handle=good_handle,
                                        value=CallToolResult(content=(TextContent(text="ok"),)))


@pytest.mark.parametrize("message_tail", [{"method": 5}, {"method": "x", "params": [1]}])
def test_malformed_server_request_with_colliding_id_keeps_our_request(
        message_tail: JSONObj) -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.send({"jsonrpc": "2.0", "id": request["id"], **message_tail})
    assert all(isinstance(e, BadMessage) for e in pair.events())
    assert pair.session.pending_count == 1
    pair.reply(request, text_result())
    assert isinstance(one_event(pair), Completed)


@pytest.mark.parametrize("block_type", [[], {}])
def test_t07_unhashable_content_type_fails_the_request_not_the_session(
        block_type: Any) -> None:
    pair = ready_pair()
    _handle, request = call(pair)
    pair.reply(request, {"content": [{"type": block_type}]})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and isinstance(failed.error, RemoteProtocolError)


# -- the end of the connection ---------------------------------------------------------------


def test_connection_lost_fails_every_pending_then_closes() -> None:
    pair = ready_pair(capabilities={"roots": {}})
    h1, _ = call(pair)
    h2 = pair.session.list_tools(now=pair.now)
    pair.sent()
    pair.server_request("r", "roots/list")
    pair.events()
    error = ServerExited(3, "dying\n")
    pair.session.connection_lost(error)
    events = pair.events()
    assert {e.handle for e in events[:2]} == {h1, h2}  # type: ignore[union-attr]
    assert all(isinstance(e, Failed) and e.error is error for e in events[:2])
    assert events[2:] == [Closed(error=error)]
    assert pair.session.state is State.CLOSED and pair.session.pending_count == 0
    assert pair.session.closed_error is error
    assert pair.session.respond("r", {"roots": []}) is False
    pair.session.connection_lost(ConnectionClosed("again"))
    pair.session.close()
    assert pair.events() == [] and pair.sent() == []
    assert pair.session.next_deadline() is None


def test_receive_eof_processes_the_final_line_then_closes() -> None:
    pair = ready_pair()
    done_handle, done_request = call(pair)
    lost_handle, _ = call(pair)
    pair.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}' % done_request["id"])
    assert pair.events() == []
    pair.session.receive_eof()
    completed, failed, closed = pair.events()
    assert isinstance(completed, Completed) and completed.handle == done_handle
    assert isinstance(failed, Failed) and failed.handle == lost_handle
    assert isinstance(failed.error, ConnectionClosed)
    assert isinstance(closed, Closed) and isinstance(closed.error, ConnectionClosed)


def test_receive_eof_mid_list_fails_the_list() -> None:
    pair = ready_pair()
    handle = pair.session.list_tools(now=pair.now)
    request = pair.sent_one()
    pair.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[],"nextCursor":"c"}}'
              % request["id"])
    pair.session.receive_eof()
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ConnectionClosed)
    assert isinstance(closed, Closed)


def test_close_fails_pending_with_connection_closed() -> None:
    pair = ready_pair()
    handle, _ = call(pair)
    pair.session.close()
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ConnectionClosed)
    assert closed == Closed(error=None)


OPERATIONS = {
    "list_tools": lambda s, now: s.list_tools(now=now),
    "list_resources": lambda s, now: s.list_resources(now=now),
    "list_resource_templates": lambda s, now: s.list_resource_templates(now=now),
    "list_prompts": lambda s, now: s.list_prompts(now=now),
    "call_tool": lambda s, now: s.call_tool("t", now=now),
    "read_resource": lambda s, now: s.read_resource("file:///a", now=now),
    "get_prompt": lambda s, now: s.get_prompt("p", now=now),
    "complete": lambda s, now: s.complete({"type": "ref/prompt", "name": "p"}, "a", "b",
                                          now=now),
    "subscribe": lambda s, now: s.subscribe("file:///a", now=now),
    "unsubscribe": lambda s, now: s.unsubscribe("file:///a", now=now),
    "set_logging_level": lambda s, now: s.set_logging_level("info", now=now),
    "ping": lambda s, now: s.ping(now=now),
    "send_request": lambda s, now: s.send_request("x/y", now=now),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
@pytest.mark.parametrize("how", ["close", "connection_lost", "eof"])
def test_operations_after_close_raise_connection_closed(name: str, how: str) -> None:
    pair = ready_pair()
    if how == "close":
        pair.session.close()
    elif how == "eof":
        pair.session.receive_eof()
    else:
        pair.session.connection_lost(ServerExited(1))
    with pytest.raises(ConnectionClosed):
        OPERATIONS[name](pair.session, pair.now)
    assert pair.sent() == []


def test_notify_after_close_raises_connection_closed() -> None:
    pair = ready_pair()
    pair.session.close()
    with pytest.raises(ConnectionClosed):
        pair.session.notify_roots_list_changed()


# -- review findings ------------------------------------------------------------------------


def test_l08_initialize_cannot_be_sent_again_as_a_plain_request() -> None:
    """L-01/L-08: the handshake is ClientSession.initialize(), once; a second ``initialize``
    through send_request is refused before anything is sent (it used to break the lifecycle
    table from inside receive_data)."""
    pair = ready_pair()
    with pytest.raises(LocalProtocolError):
        pair.session.send_request("initialize", {}, now=pair.now)
    assert pair.sent() == []


def test_l09_explicit_long_total_is_not_cut_by_default_idle() -> None:
    """L-09: a caller who asks for a 300 s total without an idle timeout gets 300 s, not the
    60 s default silence."""
    pair = ready_pair(limits=Limits(idle_timeout=60.0, request_timeout=600.0))
    handle = pair.session.read_resource("demo://x", now=pair.now, timeout=300.0)
    pair.sent()
    assert pair.session.next_deadline() == pair.now + 300.0
    pair.advance(299.0)
    assert all(getattr(e, "handle", None) != handle for e in pair.events())


def test_receive_eof_fails_pending_with_the_binding_error() -> None:
    """A binding that knows the exit code passes ServerExited to receive_eof; a final line
    without a newline is still processed first."""
    pair = ready_pair()
    handle, request = call(pair)
    pending, _ = call(pair)
    pair.session.receive_data(dumps({"jsonrpc": "2.0", "id": request["id"],
                                     "result": {"content": []}}), now=pair.now)
    pair.session.receive_eof(ServerExited(3, "bye"))
    events = pair.events()
    assert any(isinstance(e, Completed) and e.handle == handle for e in events)
    failed = [e for e in events if isinstance(e, Failed) and e.handle == pending]
    assert len(failed) == 1 and isinstance(failed[0].error, ServerExited)
    assert failed[0].error.exit_code == 3
