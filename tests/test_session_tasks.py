"""Tasks in the core (section 9, TK-01..TK-06 and TX-01..TX-09), against the in-memory fake
server and a fake clock: a tool call that becomes a task is polled to its end and the host sees
one call.  Every message the client writes is checked against the schema of its era (the
2026 tasks requests against the extension's schema)."""

from __future__ import annotations

from typing import Any

import pytest
from fake_server import JSONObj, Pair, modern_pair, ready_pair
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import (
    RELATED_TASK_KEY,
    TASKS_EXTENSION,
    CallToolResult,
    Completed,
    ConnectionClosed,
    Failed,
    LocalProtocolError,
    Progress,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    ServerRequest,
    ServerRequestCancelled,
    Task,
    TaskCancelled,
    TaskNotFound,
    TaskStateError,
    TaskStatus,
)
from mcp_proto._tasks import (
    DEFAULT_POLL_INTERVAL,
    MAX_POLL_FAILURES,
    MAX_POLL_INTERVAL,
    MIN_POLL_INTERVAL,
    legal_transition,
    parse_task,
)
from mcp_proto.session._task_runner import TIMER_SLACK

TASK_CAPS: JSONObj = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
LEGACY_CAPS: JSONObj = {"tools": {}, "tasks": TASK_CAPS}
MODERN_CAPS: JSONObj = {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}
TOOLS = [
    {"name": "build", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "required"}},
    {"name": "maybe", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "optional"}},
    {"name": "quick", "inputSchema": {"type": "object"},
     "execution": {"taskSupport": "forbidden"}},
    {"name": "plain", "inputSchema": {"type": "object"}},
]
DONE: JSONObj = {"content": [{"type": "text", "text": "built"}], "isError": False}


def task(status: str = "working", *, task_id: str = "t1", modern: bool = False,
         poll_ms: int | None = 500, message: str | None = None, **extra: Any) -> JSONObj:
    """A task's wire fields in either form."""
    obj: JSONObj = {"taskId": task_id, "status": status,
                    "createdAt": "2026-11-29T10:00:00Z", "lastUpdatedAt": "2026-11-29T10:00:01Z",
                    ("ttlMs" if modern else "ttl"): 60000}
    if poll_ms is not None:
        obj["pollIntervalMs" if modern else "pollInterval"] = poll_ms
    if message is not None:
        obj["statusMessage"] = message
    obj.update(extra)
    return obj


def legacy_pair(caps: JSONObj | None = None, **kwargs: Any) -> Pair:
    pair = ready_pair(version="2025-11-25", server_caps=LEGACY_CAPS if caps is None else caps,
                      **kwargs)
    pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), {"tools": TOOLS})
    [listed] = pair.events()
    assert isinstance(listed, Completed)
    return pair


def events_of(pair: Pair, kind: type) -> list[Any]:
    return [e for e in pair.events() if isinstance(e, kind)]


def start_legacy_task(pair: Pair, name: str = "build", **kwargs: Any) -> Any:
    """Call ``name``, answer with a CreateTaskResult; return the handle."""
    handle = pair.session.call_tool(name, {"x": 1}, now=pair.now, **kwargs)
    call = pair.sent_one()
    assert call["params"]["task"] == ({"ttl": int(kwargs["task_ttl"] * 1000)}
                                      if "task_ttl" in kwargs else {})
    pair.reply(call, {"task": task()})
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.handle == handle
    assert status.task == Task(task_id="t1", status="working",
                               created_at="2026-11-29T10:00:00Z",
                               last_updated_at="2026-11-29T10:00:01Z", ttl=60.0,
                               poll_interval=0.5)
    return handle


def params(message: JSONObj) -> JSONObj:
    """A request's params without the 2026 ``_meta`` envelope."""
    return {k: v for k, v in message.get("params", {}).items() if k != "_meta"}


def poll(pair: Pair, task_id: str = "t1") -> JSONObj:
    """Let the clock reach the next poll; return the tasks/get it sent."""
    pair.advance_to_deadline()
    request = pair.sent_one()
    assert request["method"] == "tasks/get" and params(request) == {"taskId": task_id}, request
    return request


# -- the shared pieces --------------------------------------------------------------------------


def test_transition_table_terminal_states_never_change() -> None:
    statuses = ["working", "input_required", "completed", "failed", "cancelled"]
    for new in statuses:
        assert legal_transition(None, new)  # a creation may report any status
        assert legal_transition("working", new) and legal_transition("input_required", new)
    for terminal in ("completed", "failed", "cancelled"):
        assert [s for s in statuses if legal_transition(terminal, s)] == [terminal]


@pytest.mark.parametrize(("obj", "modern", "error"), [
    ({"status": "working"}, False, RemoteProtocolError),
    ({"taskId": "", "status": "working"}, False, RemoteProtocolError),
    ({"taskId": "t", "status": "sleeping"}, False, TaskStateError),
    ({"taskId": "t", "status": "working", "pollInterval": -5}, False, RemoteProtocolError),
    ({"taskId": "t", "status": "working", "ttlMs": "soon"}, True, RemoteProtocolError),
    ("t1", True, RemoteProtocolError),
])
def test_a_malformed_task_is_a_typed_error(obj: Any, modern: bool, error: type) -> None:
    with pytest.raises(error):
        parse_task(obj, modern=modern)


# -- 2025-11-25 (TK-01..TK-06) ------------------------------------------------------------------


def test_tk01_tk04_a_required_tool_runs_as_a_task_polled_to_its_result() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair, task_ttl=90.0)
    assert pair.session.next_deadline() == pair.now + 0.5  # the server's pollInterval
    pair.reply(poll(pair), task(message="half way"))
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.task.status_message == "half way"
    pair.reply(poll(pair), task(message="half way"))
    assert pair.events() == []  # no change, no event
    pair.reply(poll(pair), task("completed"))
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.task.status == "completed"
    fetch = pair.sent_one()
    assert fetch["method"] == "tasks/result" and fetch["params"] == {"taskId": "t1"}
    pair.reply(fetch, {**DONE, "_meta": {RELATED_TASK_KEY: {"taskId": "t1"}}})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle
    assert isinstance(done.value, CallToolResult) and done.value.text == "built"
    assert pair.session.next_deadline() is None
    assert "notifications/cancelled" not in [m.get("method") for m in pair.log]


def test_tk01_task_support_decides_which_calls_are_tasks() -> None:
    pair = legacy_pair()
    for name, task_flag, expected in [("maybe", True, True), ("maybe", None, False),
                                      ("quick", True, False), ("plain", True, False),
                                      ("unknown", True, False), ("build", False, True)]:
        pair.session.call_tool(name, now=pair.now, task=task_flag)
        assert ("task" in pair.sent_one()["params"]) is expected, (name, task_flag)


@pytest.mark.parametrize("caps", [{"tools": {}}, {"tools": {}, "tasks": {"list": {}}}])
def test_tk01_no_task_without_the_server_capability(caps: JSONObj) -> None:
    pair = legacy_pair(caps)
    pair.session.call_tool("build", now=pair.now, task=True)
    assert "task" not in pair.sent_one()["params"]


def test_tk01_no_task_before_2025_11_25() -> None:
    pair = ready_pair(version="2025-06-18", server_caps=LEGACY_CAPS)
    pair.session.call_tool("build", now=pair.now, task=True)
    assert "task" not in pair.sent_one()["params"]


def test_a_server_that_answers_plainly_after_all_gives_the_result() -> None:
    pair = legacy_pair()
    handle = pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), DONE)
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle


def test_progress_tokens_stay_live_until_the_task_is_terminal() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair, progress=True)
    token = pair.log[-1]["params"]["_meta"]["progressToken"]
    pair.notify("notifications/progress", {"progressToken": token, "progress": 3, "total": 10})
    [progress] = pair.events()
    assert isinstance(progress, Progress) and progress.handle == handle
    assert (progress.progress, progress.total) == (3, 10)
    pair.notify("notifications/progress", {"progressToken": token, "progress": 2})
    assert pair.events() == []  # never backwards
    pair.reply(poll(pair), task("completed"))
    pair.reply(pair.sent_one(), DONE)
    assert isinstance(pair.events()[-1], Completed)
    pair.notify("notifications/progress", {"progressToken": token, "progress": 9})
    assert pair.events() == []  # terminal: the token is dead


def test_tk04_input_required_asks_for_the_result_at_once_and_serves_the_request() -> None:
    """The server's requests for a task travel with ``tasks/result`` (server-everything only
    sends them once it is asked), so the client asks at ``input_required`` and keeps polling."""
    pair = legacy_pair(capabilities={"elicitation": {"form": {}}})
    handle = start_legacy_task(pair)
    pair.reply(poll(pair), task("input_required"))
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.task.status == "input_required"
    fetch = pair.sent_one()
    assert fetch["method"] == "tasks/result"
    pair.server_request(7, "elicitation/create", {
        "message": "Colour?", "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {RELATED_TASK_KEY: {"taskId": "t1"}}})
    [asked] = pair.events()
    assert isinstance(asked, ServerRequest) and asked.method == "elicitation/create"
    pair.session.respond(7, {"action": "accept", "content": {}})
    assert pair.sent_one() == {"jsonrpc": "2.0", "id": 7,
                               "result": {"action": "accept", "content": {}}}
    pair.reply(poll(pair), task("working"))
    pair.reply(poll(pair), task("completed"))
    assert [type(e) for e in pair.events()] == [TaskStatus, TaskStatus]
    assert pair.sent() == []  # tasks/result was asked once; no more polls
    pair.reply(fetch, DONE)
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle


def test_tk04_a_failed_task_gives_the_error_of_tasks_result() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    pair.reply(poll(pair), task("failed", message="boom"))
    pair.events()
    pair.reply_error(pair.sent_one(), -32603, "boom exploded")
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError) and failed.error.code == -32603


def test_a_cancelled_task_fails_the_call_with_task_cancelled() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    pair.reply(poll(pair), task("cancelled", message="by the operator"))
    events = pair.events()
    assert isinstance(events[-1], Failed) and events[-1].handle == handle
    assert isinstance(events[-1].error, TaskCancelled)
    assert "by the operator" in str(events[-1].error)
    assert pair.sent() == []  # no tasks/result, no tasks/cancel for a terminal task


def test_tk05_a_timeout_sends_tasks_cancel_never_notifications_cancelled() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair, timeout=2.0)
    for _ in range(3):
        pair.reply(poll(pair), task())
    pair.events()
    pair.advance(2.0)
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout)
    sent = pair.sent()
    assert [m["method"] for m in sent] == ["tasks/cancel"], sent
    assert sent[0]["params"] == {"taskId": "t1"}
    pair.reply(sent[0], task("cancelled"))  # its answer is dropped quietly
    assert pair.events() == [] and pair.session.next_deadline() is None


def test_tk05_host_cancellation_sends_tasks_cancel_and_drops_the_poll_in_flight() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    get = poll(pair)
    assert pair.session.cancel(handle, "no longer needed")
    [failed] = pair.events()
    assert isinstance(failed, Failed) and isinstance(failed.error, RequestCancelled)
    assert [m["method"] for m in pair.sent()] == ["tasks/cancel"]
    pair.reply(get, task("completed"))
    assert pair.events() == [] and pair.sent() == []


def test_tk05_without_tasks_cancel_nothing_is_sent_on_cancellation() -> None:
    pair = legacy_pair({"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}})
    handle = start_legacy_task(pair)
    pair.session.cancel(handle)
    assert isinstance(pair.events()[0], Failed)
    assert pair.sent() == []


def test_a_task_purged_after_its_ttl_is_task_not_found() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    pair.reply_error(poll(pair), -32602, "Task not found: t1")
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, TaskNotFound) and failed.error.code == -32602
    assert "t1" in str(failed.error)
    assert pair.sent() == []  # nothing to cancel


@pytest.mark.parametrize(("interval", "expected"), [
    (None, DEFAULT_POLL_INTERVAL), (0, MIN_POLL_INTERVAL), (1, MIN_POLL_INTERVAL),
    (86_400_000, MAX_POLL_INTERVAL), (2500, 2.5)])
def test_missing_zero_or_absurd_poll_intervals_are_clamped(interval: int | None,
                                                           expected: float) -> None:
    pair = legacy_pair()
    pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"task": task(poll_ms=interval)})
    pair.events()
    assert pair.session.next_deadline() == pytest.approx(pair.now + expected)


def test_status_notifications_hasten_polls_but_only_polls_decide() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    pair.reply(poll(pair), task(poll_ms=30_000))
    pair.events()
    assert pair.session.next_deadline() == pair.now + 30
    # A notification saying "completed": the client polls now, and believes the poll.
    pair.notify("notifications/tasks/status", task("completed"))
    assert pair.events() == [] and pair.session.next_deadline() == pair.now
    pair.reply(poll(pair), task("working", poll_ms=30_000, message="still going"))
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.task.status == "working"
    assert pair.sent() == []  # no tasks/result on the notification's word
    # One saying "cancelled" when it is not: polled again, then the real end.
    pair.notify("notifications/tasks/status", task("cancelled"))
    pair.reply(poll(pair), task("completed"))
    pair.events()
    pair.reply(pair.sent_one(), DONE)
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle


def test_a_status_notification_for_a_task_not_polled_is_passed_on() -> None:
    pair = legacy_pair()
    pair.notify("notifications/tasks/status", task(task_id="other"))
    [event] = pair.events()
    assert type(event).__name__ == "OtherNotification"


def test_tk05_list_tasks_follows_every_page() -> None:
    pair = legacy_pair()
    handle = pair.session.list_tasks(now=pair.now)
    pair.reply(pair.sent_one(), {"tasks": [task(task_id="a")], "nextCursor": "c2"})
    page2 = pair.sent_one()
    assert page2["params"] == {"cursor": "c2"}
    pair.reply(page2, {"tasks": [task("completed", task_id="b")]})
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle
    assert [(t.task_id, t.status) for t in done.value] == [("a", "working"), ("b", "completed")]


def test_tk05_list_tasks_needs_the_capability() -> None:
    pair = legacy_pair({"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}})
    with pytest.raises(LocalProtocolError, match=r"tasks\.list"):
        pair.session.list_tasks(now=pair.now)


def test_tk05_cancel_of_a_terminal_task_is_an_rpc_error() -> None:
    pair = legacy_pair()
    handle = pair.session.cancel_task("done-1", now=pair.now)
    request = pair.sent_one()
    assert request["method"] == "tasks/cancel"
    pair.reply_error(request, -32602, "Cannot cancel task in terminal status: completed")
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError) and failed.error.code == -32602


def test_tk05_cancel_task_of_a_polled_task_ends_its_call() -> None:
    pair = legacy_pair()
    call = start_legacy_task(pair)
    cancel = pair.session.cancel_task("t1", now=pair.now)
    pair.reply(pair.sent_one(), task("cancelled"))
    events = pair.events()
    ended = {e.handle: e for e in events if isinstance(e, (Completed, Failed))}
    assert isinstance(ended[call], Failed) and isinstance(ended[call].error, TaskCancelled)
    assert isinstance(ended[cancel], Completed) and ended[cancel].value.status == "cancelled"


def test_tx09_resume_polls_a_task_created_by_another_session() -> None:
    pair = legacy_pair()
    handle = pair.session.resume_task("t1", now=pair.now)
    get = pair.sent_one()
    assert get["method"] == "tasks/get" and get["params"] == {"taskId": "t1"}
    pair.reply(get, task("completed"))
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.handle == handle
    pair.reply(pair.sent_one(), DONE)
    [done] = pair.events()
    assert isinstance(done, Completed) and done.value.text == "built"


def test_resume_needs_tasks_support() -> None:
    pair = ready_pair(version="2025-11-25", server_caps={"tools": {}})
    with pytest.raises(LocalProtocolError, match="tasks"):
        pair.session.resume_task("t1", now=pair.now)


def test_the_transport_ending_fails_each_task_call_once() -> None:
    pair = legacy_pair()
    first = start_legacy_task(pair)
    pair.advance(0.3)
    pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"task": task(task_id="t2")})
    second = events_of(pair, TaskStatus)[0].handle
    poll(pair)  # t1's poll in flight, t2 waiting for its interval
    pair.session.receive_eof()
    failed = events_of(pair, Failed)
    assert sorted(e.handle.id for e in failed) == sorted([first.id, second.id])
    assert pair.session.next_deadline() is None


def test_a_reused_task_id_fails_the_second_call() -> None:
    pair = legacy_pair()
    start_legacy_task(pair)
    handle = pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"task": task()})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, TaskStateError)


# -- 2026 extension (TX-01..TX-09) --------------------------------------------------------------


def modern_task_pair(**kwargs: Any) -> Pair:
    return modern_pair(server_caps=MODERN_CAPS, **kwargs)


def start_modern_task(pair: Pair, **fields: Any) -> Any:
    handle = pair.session.call_tool("build", {"x": 1}, now=pair.now)
    call = pair.sent_one()
    assert call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"][
        "extensions"] == {TASKS_EXTENSION: {}}  # TX-01
    assert "task" not in call["params"]  # the server decides (TX-02)
    pair.reply(call, {"resultType": "task", **task(modern=True, poll_ms=200, **fields)})
    status = events_of(pair, TaskStatus)[0]
    assert status.handle == handle and status.task.poll_interval == 0.2
    return handle


def test_tx02_tx04_a_task_answer_is_polled_to_its_inline_result() -> None:
    pair = modern_task_pair()
    handle = start_modern_task(pair)
    pair.reply(poll(pair), {"resultType": "complete", **task(modern=True, message="2/4")})
    assert events_of(pair, TaskStatus)[0].task.status_message == "2/4"
    pair.reply(poll(pair), {"resultType": "complete",
                            **task("completed", modern=True, result=DONE)})
    events = pair.events()
    assert isinstance(events[-1], Completed) and events[-1].handle == handle
    assert events[-1].value.text == "built"
    assert pair.sent() == [] and pair.session.next_deadline() is None


def test_tx04_a_failed_task_raises_its_error() -> None:
    pair = modern_task_pair()
    handle = start_modern_task(pair)
    pair.reply(poll(pair), {"resultType": "complete", **task(
        "failed", modern=True, error={"code": -32603, "message": "boom", "data": {"why": 1}})})
    failed = pair.events()[-1]
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError)
    assert (failed.error.code, failed.error.data) == (-32603, {"why": 1})


def test_tx04_a_terminal_task_without_its_outcome_is_a_protocol_error() -> None:
    pair = modern_task_pair()
    start_modern_task(pair)
    pair.reply(poll(pair), {"resultType": "complete", **task("completed", modern=True)})
    failed = pair.events()[-1]
    assert isinstance(failed, Failed) and isinstance(failed.error, RemoteProtocolError)


def test_a_task_created_terminal_is_polled_for_its_outcome() -> None:
    pair = modern_task_pair()
    handle = pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"resultType": "task", **task("completed", modern=True)})
    pair.events()
    assert pair.session.next_deadline() == pair.now  # at once: the creation has no result
    get = poll(pair)
    pair.reply(get, {"resultType": "complete", **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle


def test_an_illegal_transition_fails_that_task_only() -> None:
    pair = modern_task_pair()
    bad = pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"resultType": "task", **task("completed", modern=True)})
    pair.events()
    get = poll(pair)
    good = start_modern_task(pair, task_id="t2")
    pair.reply(get, {"resultType": "complete", **task("working", modern=True)})
    failed = events_of(pair, Failed)
    assert [f.handle for f in failed] == [bad]
    assert isinstance(failed[0].error, TaskStateError)
    assert "completed" in str(failed[0].error) and "working" in str(failed[0].error)
    assert pair.sent() == []  # a task the server calls completed is not cancelled
    pair.advance_to_deadline()
    get2 = pair.sent_one()
    assert params(get2) == {"taskId": "t2"}
    pair.reply(get2, {"resultType": "complete",
                      **task("completed", task_id="t2", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == good


def test_tx05_input_requests_are_asked_once_and_answered_by_tasks_update() -> None:
    pair = modern_task_pair(capabilities={"elicitation": {"form": {}}})
    handle = start_modern_task(pair)
    question = {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    waiting = {"resultType": "complete", **task("input_required", modern=True,
                                                inputRequests={"q1": question})}
    pair.reply(poll(pair), waiting)
    asked = events_of(pair, ServerRequest)
    assert [a.method for a in asked] == ["elicitation/create"]
    pair.reply(poll(pair), waiting)  # the same key again before the host answered
    assert events_of(pair, ServerRequest) == []
    pair.session.respond(asked[0].request_id, {"action": "accept", "content": {"name": "Ada"}})
    update = pair.sent_one()
    assert update["method"] == "tasks/update"
    assert params(update) == {"taskId": "t1", "inputResponses": {
        "q1": {"action": "accept", "content": {"name": "Ada"}}}}
    pair.reply(update, {"resultType": "complete"})
    pair.reply(poll(pair), waiting)  # not processed yet: still not asked again (TX-05)
    assert events_of(pair, ServerRequest) == [] and pair.sent() == []
    pair.reply(poll(pair), {"resultType": "complete",
                            **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle


def test_an_input_the_client_cannot_give_cancels_the_task() -> None:
    pair = modern_task_pair()  # no sampling declared
    handle = start_modern_task(pair)
    pair.reply(poll(pair), {"resultType": "complete", **task(
        "input_required", modern=True,
        inputRequests={"s": {"method": "sampling/createMessage", "params": {}}})})
    failed = pair.events()[-1]
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert [m["method"] for m in pair.sent()] == ["tasks/cancel"]


def test_a_task_ending_withdraws_its_open_questions() -> None:
    pair = modern_task_pair(capabilities={"elicitation": {"form": {}}})
    handle = start_modern_task(pair, timeout=None)
    pair.reply(poll(pair), {"resultType": "complete", **task(
        "input_required", modern=True, inputRequests={"q": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "?", "requestedSchema": {
                "type": "object", "properties": {}}}}})})
    [asked] = events_of(pair, ServerRequest)
    pair.session.cancel(handle)
    events = pair.events()
    assert any(isinstance(e, ServerRequestCancelled) and e.request_id == asked.request_id
               for e in events)
    assert not pair.session.respond(asked.request_id, {"action": "accept"})


def test_tx06_a_cancel_acknowledged_may_still_end_completed() -> None:
    pair = modern_task_pair()
    handle = start_modern_task(pair)
    cancel = pair.session.cancel_task("t1", now=pair.now)
    ack = pair.sent_one()
    assert ack["method"] == "tasks/cancel"
    pair.reply(ack, {"resultType": "complete"})
    [acked] = pair.events()
    assert isinstance(acked, Completed) and acked.handle == cancel and acked.value is None
    pair.reply(poll(pair), {"resultType": "complete",
                            **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle  # cooperative: it won


def test_tx06_host_cancellation_sends_tasks_cancel() -> None:
    pair = modern_task_pair()
    handle = start_modern_task(pair)
    pair.session.cancel(handle)
    assert isinstance(pair.events()[0], Failed)
    [cancel] = pair.sent()
    assert cancel["method"] == "tasks/cancel" and params(cancel) == {"taskId": "t1"}


def test_tx02_a_task_answer_without_the_extension_is_invalid() -> None:
    pair = modern_pair(server_caps=MODERN_CAPS)
    pair.session.accept_tasks = False
    handle = pair.session.call_tool("build", now=pair.now)
    pair.reply(pair.sent_one(), {"resultType": "task", **task(modern=True)})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError) and "M-07" in str(failed.error)


def test_tx02_a_task_answer_to_another_method_is_invalid() -> None:
    pair = modern_pair(server_caps={**MODERN_CAPS, "resources": {}})
    handle = pair.session.read_resource("demo://a", now=pair.now)
    pair.reply(pair.sent_one(), {"resultType": "task", **task(modern=True)})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)


def test_tx01_list_tasks_does_not_exist_in_2026() -> None:
    pair = modern_task_pair()
    with pytest.raises(LocalProtocolError, match="no tasks/list"):
        pair.session.list_tasks(now=pair.now)


def test_tx09_resume_in_2026() -> None:
    pair = modern_task_pair()
    handle = pair.session.resume_task("t1", now=pair.now)
    get = pair.sent_one()
    assert get["method"] == "tasks/get"
    pair.reply(get, {"resultType": "complete", **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle


# -- any sequence of answers (hypothesis) -------------------------------------------------------

ANSWER_STATUSES = ["working", "input_required", "completed", "failed", "cancelled", "bogus"]


def expected_end(modern: bool, statuses: list[str]) -> tuple[str, int]:
    """What the call must end with, and after how many of ``statuses`` (creation first):
    ``"ok"`` (the result), ``"error"`` (the task's error), ``"cancelled"``, ``"state"``
    (TaskStateError), or ``"open"`` (still running when the answers ran out)."""
    for i, status in enumerate(statuses):
        if status == "bogus":
            return "state", i + 1
        if status in ("completed", "failed", "cancelled"):
            if status == "cancelled":
                return "cancelled", i + 1
            if modern and i == 0:  # a terminal creation: the next poll must agree
                if len(statuses) < 2:
                    return "open", 1
                after = statuses[1]
                if after == "bogus" or after != status:
                    return "state", 2
                return ("ok" if status == "completed" else "error"), 2
            return ("ok" if status == "completed" else "error"), i + 1
    return "open", len(statuses)


@settings(max_examples=300, deadline=None)
@given(modern=st.booleans(),
       statuses=st.lists(st.sampled_from(ANSWER_STATUSES), min_size=1, max_size=8),
       intervals=st.lists(st.sampled_from([None, 0, 7, 500, 10**9]), min_size=8, max_size=8),
       notify=st.lists(st.sampled_from(ANSWER_STATUSES[:5]), min_size=8, max_size=8))
def test_any_sequence_of_task_answers_ends_the_call_once(
        modern: bool, statuses: list[str], intervals: list[int | None],
        notify: list[str]) -> None:
    """Whatever the server answers (status changes, illegal ones, unknown statuses, odd
    intervals, status notifications that contradict the polls), the call ends exactly once,
    as the transition table says; nothing is polled after the end; no notifications/cancelled."""
    pair = modern_task_pair() if modern else legacy_pair()
    pair.validate = pair.validate_modern = False  # bogus statuses are the point here
    handle = pair.session.call_tool("build", now=pair.now)
    call = pair.sent_one()

    def fields(i: int, status: str) -> JSONObj:
        obj = task(status, modern=modern, poll_ms=intervals[i])
        if modern and status == "completed":
            obj["result"] = DONE
        if modern and status == "failed":
            obj["error"] = {"code": -32000, "message": "it failed"}
        return obj

    first = fields(0, statuses[0])
    pair.reply(call, {"resultType": "task", **first} if modern else {"task": first})
    outcome, _used = expected_end(modern, statuses)
    fetch: JSONObj | None = None
    for i, status in enumerate(statuses[1:], start=1):
        run = pair.session._tasks.runs.get(handle.id)
        if run is None or run.poll_at is None:  # ended, or waiting for tasks/result only
            break
        pair.notify("notifications/tasks/status" if not modern else "notifications/tasks",
                    task(notify[i], modern=modern))
        pair.advance_to_deadline()
        polls = [m for m in pair.sent() if m.get("method") == "tasks/get"]
        assert len(polls) == 1, polls
        body = fields(i, status)
        pair.reply(polls[0], {"resultType": "complete", **body} if modern else body)
    pair.sent()  # whatever is still queued (a tasks/result after the last answer)
    fetches = [m for m in pair.log if m.get("method") == "tasks/result"]
    assert len(fetches) <= 1  # asked once at most
    if fetches:  # 2025-11-25: the outcome comes with tasks/result
        fetch = fetches[0]
        if outcome == "error":
            pair.reply_error(fetch, -32000, "it failed")
        else:
            pair.reply(fetch, DONE)
    ends = [e for e in pair.events() if isinstance(e, (Completed, Failed)) and e.handle == handle]
    if outcome == "open" and fetch is None:
        assert ends == []
        return
    assert len(ends) == 1, ends
    end = ends[0]
    if outcome in ("ok", "open"):
        assert isinstance(end, Completed), end
    elif outcome == "error":
        assert isinstance(end, Failed) and isinstance(end.error, RpcError), end
    elif outcome == "cancelled":
        assert isinstance(end, Failed) and isinstance(end.error, TaskCancelled), end
    else:
        assert isinstance(end, Failed) and isinstance(end.error, TaskStateError), end
    assert "notifications/cancelled" not in [m.get("method") for m in pair.log]
    later = [m for m in pair.sent() if m.get("method") == "tasks/get"]
    pair.now += 100
    pair.session.handle_timeout(pair.now)
    later += [m for m in pair.sent() if m.get("method") == "tasks/get"]
    assert later == []  # nothing polled after the end


def test_a_retried_call_may_still_become_a_task() -> None:
    """V-11 (-32022 retried with a mutual version) and MR (an input_required round retried):
    the new request of the same call is still answered with a task (TX-02)."""
    pair = modern_task_pair(capabilities={"elicitation": {"form": {}}})
    handle = pair.session.call_tool("build", now=pair.now)
    first = pair.sent_one()
    pair.reply_error(first, -32022, "unsupported",
                     {"supported": ["2026-07-28"], "requested": "2026-07-28"})
    retry = pair.sent_one()
    assert retry["id"] != first["id"]
    pair.reply(retry, {"resultType": "input_required", "inputRequests": {"q": {
        "method": "elicitation/create", "params": {
            "mode": "form", "message": "?",
            "requestedSchema": {"type": "object", "properties": {}}}}}})
    [asked] = events_of(pair, ServerRequest)
    pair.session.respond(asked.request_id, {"action": "accept", "content": {}})
    round2 = pair.sent_one()
    pair.reply(round2, {"resultType": "task", **task(modern=True)})
    [status] = pair.events()
    assert isinstance(status, TaskStatus) and status.handle == handle
    pair.reply(poll(pair), {"resultType": "complete",
                            **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle


# -- what a review found ------------------------------------------------------------------------


def test_a_lost_poll_is_repeated_not_fatal_and_bounded() -> None:
    """A poll's stream dropping (an HTTP transport reports it with fail_request) costs one
    interval: the task still runs on the server.  MAX_POLL_FAILURES in a row end the call,
    without cancelling a task the client merely could not reach."""
    pair = modern_task_pair()
    handle = start_modern_task(pair)
    for _ in range(MAX_POLL_FAILURES):
        get = poll(pair)
        pair.session.fail_request(get["id"], ConnectionClosed("tasks/get: connection lost"),
                                  now=pair.now)
        assert events_of(pair, Failed) == []
    pair.reply(poll(pair), {"resultType": "complete", **task(modern=True)})  # resets the count
    for _ in range(MAX_POLL_FAILURES + 1):
        get = poll(pair)
        pair.session.fail_request(get["id"], ConnectionClosed("tasks/get: connection lost"),
                                  now=pair.now)
    failed = events_of(pair, Failed)
    assert [f.handle for f in failed] == [handle]
    assert isinstance(failed[0].error, ConnectionClosed)
    assert pair.sent() == []  # no tasks/cancel: the server was unreachable, not the task bad


def test_a_dropped_tasks_result_is_asked_again() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    pair.reply(poll(pair), task("input_required"))
    pair.events()
    fetch = pair.sent_one()
    pair.session.fail_request(fetch["id"], ConnectionClosed("tasks/result: connection lost"),
                              now=pair.now)
    assert events_of(pair, Failed) == []
    pair.reply(poll(pair), task("completed"))
    pair.events()
    again = pair.sent_one()
    assert again["method"] == "tasks/result" and again["id"] != fetch["id"]
    pair.reply(again, DONE)
    [done] = pair.events()
    assert isinstance(done, Completed) and done.handle == handle


def test_tx05_a_refused_update_keeps_the_task_and_asks_again() -> None:
    pair = modern_task_pair(capabilities={"elicitation": {"form": {}}})
    handle = start_modern_task(pair)
    question = {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Name?", "requestedSchema": {"type": "object",
                                                             "properties": {}}}}
    waiting = {"resultType": "complete", **task("input_required", modern=True,
                                                inputRequests={"q1": question})}
    pair.reply(poll(pair), waiting)
    [asked] = events_of(pair, ServerRequest)
    pair.session.respond(asked.request_id, {"action": "accept", "content": {}})
    update = pair.sent_one()
    pair.reply_error(update, -32602, "stale update")
    assert events_of(pair, Failed) == []  # not the task's outcome (TX-05)
    pair.reply(poll(pair), waiting)
    [again] = events_of(pair, ServerRequest)  # the refused key may be asked again
    assert again.method == "elicitation/create"
    pair.session.respond(again.request_id, {"action": "accept", "content": {}})
    pair.reply(pair.sent_one(), {"resultType": "complete"})
    pair.reply(poll(pair), {"resultType": "complete",
                            **task("completed", modern=True, result=DONE)})
    done = pair.events()[-1]
    assert isinstance(done, Completed) and done.handle == handle


def test_cancelling_an_ended_task_call_again_returns_false() -> None:
    pair = legacy_pair()
    handle = start_legacy_task(pair)
    assert pair.session.cancel(handle) is True
    assert pair.session.cancel(handle) is False
    assert [m["method"] for m in pair.sent()] == ["tasks/cancel"]


def test_answering_a_task_input_with_an_error_does_not_withdraw_it() -> None:
    pair = modern_task_pair(capabilities={"elicitation": {"form": {}}})
    start_modern_task(pair)
    pair.reply(poll(pair), {"resultType": "complete", **task(
        "input_required", modern=True, inputRequests={"q": {
            "method": "elicitation/create", "params": {
                "mode": "form", "message": "?",
                "requestedSchema": {"type": "object", "properties": {}}}}})})
    [asked] = events_of(pair, ServerRequest)
    pair.session.respond_error(asked.request_id, -1, "user declined")
    events = pair.events()
    assert not any(isinstance(e, ServerRequestCancelled) for e in events)
    assert isinstance(events[-1], Failed) and events[-1].error.code == -1


def test_long_polling_keeps_the_timer_heaps_bounded() -> None:
    """Thousands of polls under a long explicit timeout (tasks/result waiting all along), and
    thousands of short tasks beside one long one: the heaps stay proportional to what is
    live."""
    pair = legacy_pair()
    start_legacy_task(pair, timeout=86_400)
    pair.reply(poll(pair), task("input_required", poll_ms=50))
    pair.events()
    pair.sent_one()  # tasks/result, waiting
    for _ in range(2000):
        pair.reply(poll(pair), task("input_required", poll_ms=50))
    assert len(pair.session._wire.timers) < 200
    for i in range(1000):
        pair.session.call_tool("build", now=pair.now)
        call = next(m for m in pair.sent() if m.get("method") == "tools/call")
        pair.reply(call, {"task": task("cancelled", task_id=f"short-{i}")})
    pair.events()
    assert len(pair.session._tasks.timers) <= 2 + TIMER_SLACK + 2  # not 2,000 ended entries
