"""MemoryServer's tasks (mcp_proto/testing/_tasks.py) against the real ClientSession, in both
eras: a ``call_tool(..., task=True)`` polled to its end, cancelled, failed, given input, and
the ``tasks/*`` methods answered as the checklist's TK- and TX- rules say.  A fake clock: the
session's poll timers are fired by moving it to their deadline.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import (
    Completed,
    Event,
    Failed,
    RpcError,
    ServerRequest,
    TaskCancelled,
    TaskStatus,
)
from mcp_proto._tasks import RELATED_TASK_KEY, TASKS_EXTENSION
from mcp_proto.testing import _tasks
from mcp_proto.testing._server import MemoryServer
from tests.test_memory_server_core import ERAS, Link, envelope, raw

JSONObj = dict[str, Any]


def task_server(**kwargs: Any) -> MemoryServer:
    server = MemoryServer("tasks", **kwargs)

    @server.tool(task_support="optional")
    def slow(steps: int = 1) -> str:
        return f"done {steps} steps"

    @server.tool(task_support="required")
    def job() -> str:
        return "job done"

    @server.tool(task_support="optional")
    def refuse() -> None:
        raise RpcError(-32099, "refused", {"why": "test"})

    @server.tool(task_support="optional")
    def broken() -> None:
        raise ValueError("no luck")

    @server.tool
    def plain(text: str) -> str:
        return text

    return server


def open_link(era: str, **kwargs: Any) -> Link:
    link = Link(task_server(), **kwargs)
    link.open(era)
    if era == "legacy":  # the session learns each tool's taskSupport from tools/list
        link.session.list_tools(now=link.now)
        link.pump()
    return link


def tick(link: Link) -> list[Event]:
    """Move the clock to the session's next deadline (a poll) and pump."""
    deadline = link.session.next_deadline()
    assert deadline is not None
    link.now = max(link.now, deadline)
    link.session.handle_timeout(link.now)
    return link.pump()


def sent(link: Link, method: str) -> list[JSONObj]:
    return [m for m in link.server.received if m.get("method") == method]


def until_done(link: Link, handle: Any, events: list[Event]) -> Completed | Failed:
    for _ in range(20):
        done = [e for e in events if isinstance(e, (Completed, Failed)) and e.handle == handle]
        if done:
            return done[0]
        events = tick(link)
    raise AssertionError("the task never ended")


@pytest.mark.parametrize("era", ERAS)
def test_a_task_to_completion(era: str) -> None:
    link = open_link(era)
    handle = link.session.call_tool("slow", {"steps": 2}, now=link.now, task=True)
    events = link.pump()
    [created] = [e for e in events if isinstance(e, TaskStatus)]
    assert created.task.status == "working" and created.task.task_id == "task-1"
    assert created.task.poll_interval == _tasks.POLL_INTERVAL_MS / 1000
    assert created.task.ttl == _tasks.DEFAULT_TTL_MS / 1000
    call = link.server.next_call()
    assert call is not None and call.name == "slow"
    # the poll before the end: still working
    events = tick(link)
    assert sent(link, "tasks/get") and not any(isinstance(e, Completed) for e in events)
    link.server.finish(call.call_id, call.run(), link.now)
    done = until_done(link, handle, link.pump())
    assert isinstance(done, Completed), done
    assert done.value.content[0].text == "done 2 steps"
    if era == "legacy":
        [result] = sent(link, "tasks/result")
        [answer] = [m for m in link.sent if m.get("id") == result["id"]]
        assert answer["result"]["_meta"][RELATED_TASK_KEY] == {"taskId": "task-1"}
        assert any(m.get("method") == "notifications/tasks/status" for m in link.sent)
    else:
        assert not sent(link, "tasks/result")
        [call_answer] = [m for m in link.sent if m.get("id") == handle.id]
        assert call_answer["result"]["resultType"] == "task"
    assert link.server.internal_errors == 0


@pytest.mark.parametrize("era", ERAS)
def test_a_task_is_cancelled(era: str) -> None:
    link = open_link(era)
    handle = link.session.call_tool("slow", {}, now=link.now, task=True)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    assert link.session.cancel(handle, "changed my mind")
    events = link.pump()
    assert any(isinstance(e, Failed) and e.handle == handle for e in events)
    [cancel] = sent(link, "tasks/cancel")
    assert cancel["params"]["taskId"] == "task-1"
    assert not sent(link, "notifications/cancelled")  # TK-05: never for a task
    assert link.server.is_cancelled(call.call_id)
    link.server.finish(call.call_id, call.run(), link.now)  # its outcome is dropped
    link.pump()
    task = link.server._tasks.get("task-1")
    assert task is not None and task.status == "cancelled"


@pytest.mark.parametrize("era", ERAS)
def test_a_poll_with_tasks_get(era: str) -> None:
    link = open_link(era)
    handle = link.session.call_tool("job", {}, now=link.now)  # required: a task anyway
    link.pump()
    got = link.complete(link.session.get_task("task-1", now=link.now))
    assert isinstance(got, Completed) and got.value.status == "working"
    call = link.server.next_call()
    assert call is not None
    link.server.finish(call.call_id, call.run(), link.now)
    got = link.complete(link.session.get_task("task-1", now=link.now))
    assert isinstance(got, Completed) and got.value.status == "completed"
    done = until_done(link, handle, link.pump())
    assert isinstance(done, Completed) and done.value.content[0].text == "job done"


@pytest.mark.parametrize("era", ERAS)
def test_an_rpc_error_fails_the_task_and_is_the_calls_error(era: str) -> None:
    link = open_link(era)
    handle = link.session.call_tool("refuse", {}, now=link.now, task=True)
    link.pump()
    link.run_calls()
    done = until_done(link, handle, link.pump())
    assert isinstance(done, Failed) and isinstance(done.error, RpcError)
    assert done.error.code == -32099 and done.error.message == "refused"
    task = link.server._tasks.get("task-1")
    assert task is not None and task.status == "failed"


@pytest.mark.parametrize("era", ERAS)
def test_an_is_error_result(era: str) -> None:
    link = open_link(era)
    handle = link.session.call_tool("broken", {}, now=link.now, task=True)
    link.pump()
    link.run_calls()
    done = until_done(link, handle, link.pump())
    assert isinstance(done, Completed) and done.value.is_error
    task = link.server._tasks.get("task-1")
    assert task is not None  # 2025-11-25 maps isError to failed; 2026 keeps it completed
    assert task.status == ("failed" if era == "legacy" else "completed")


def test_capabilities_and_tool_execution_per_era() -> None:
    legacy = open_link("legacy")
    assert legacy.session.server_capabilities["tasks"] == {
        "list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    tools = legacy.session.tools
    assert tools["slow"].task_support == "optional" and tools["job"].task_support == "required"
    assert tools["plain"].task_support == "forbidden"
    modern = open_link("modern")
    assert modern.session.server_capabilities["extensions"] == {TASKS_EXTENSION: {}}
    assert "tasks" not in modern.session.server_capabilities
    listed = [m for m in modern.sent if "tools" in m.get("result", {})]
    assert all("execution" not in t for m in listed for t in m["result"]["tools"])
    # no task tool: nothing declared
    bare = MemoryServer("bare")
    bare.add_tool("plain", lambda: "x")
    assert "tasks" not in bare.capabilities("legacy")
    assert "extensions" not in bare.capabilities("modern")


def test_handshake_era_task_rules() -> None:
    server = task_server()
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}}
    raw(server, init)

    def call(rid: int, name: str, **extra: Any) -> JSONObj:
        [out] = raw(server, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                             "params": {"name": name, "arguments": {}, **extra}}, now=5.0)
        return out

    assert call(1, "plain", task={})["error"]["code"] == -32601  # TK-01 forbidden
    assert call(2, "job")["error"]["code"] == -32601  # TK-01 required
    assert call(3, "slow", task=[])["error"]["code"] == -32602
    created = call(4, "slow", task={"ttl": 5000})["result"]["task"]
    assert created["status"] == "working" and created["ttl"] == 5000
    assert created["createdAt"].startswith("1970-01-01T00:00:05")
    # tasks/result is held until the task ends, and the same id is in flight meanwhile
    assert raw(server, {"jsonrpc": "2.0", "id": 6, "method": "tasks/result",
                        "params": {"taskId": created["taskId"]}}) == []
    [busy] = raw(server, {"jsonrpc": "2.0", "id": 6, "method": "ping"})
    assert busy["error"]["code"] == -32600
    [listed] = raw(server, {"jsonrpc": "2.0", "id": 7, "method": "tasks/list"})
    assert [t["taskId"] for t in listed["result"]["tasks"]] == [created["taskId"]]
    [unknown] = raw(server, {"jsonrpc": "2.0", "id": 8, "method": "tasks/get",
                             "params": {"taskId": "nope"}})
    assert unknown["error"]["code"] == -32602
    [update] = raw(server, {"jsonrpc": "2.0", "id": 9, "method": "tasks/update",
                            "params": {"taskId": created["taskId"], "inputResponses": {}}})
    assert update["error"]["code"] == -32602  # 2026 only: served there, so its envelope lacks
    while (c := server.next_call()) is not None:
        server.finish(c.call_id, c.run(), 6.0)
    out = [m for m in raw(server) if "id" in m]
    [result] = [m for m in out if m["id"] == 6]
    assert result["result"]["_meta"][RELATED_TASK_KEY] == {"taskId": created["taskId"]}
    [cancel] = raw(server, {"jsonrpc": "2.0", "id": 10, "method": "tasks/cancel",
                            "params": {"taskId": created["taskId"]}})
    assert cancel["error"]["code"] == -32602  # TK-05: terminal
    # purged once its TTL passed
    [gone] = raw(server, {"jsonrpc": "2.0", "id": 11, "method": "tasks/get",
                          "params": {"taskId": created["taskId"]}}, now=11.0)
    assert gone["error"]["code"] == -32602


def test_2026_task_rules() -> None:
    server = task_server()
    declared = {**envelope(), "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {TASKS_EXTENSION: {}}}}

    def request(rid: int, method: str, params: JSONObj, meta: JSONObj) -> JSONObj:
        [out] = raw(server, {"jsonrpc": "2.0", "id": rid, "method": method,
                             "params": {**params, "_meta": meta}})
        return out

    call = {"name": "job", "arguments": {}}
    assert request(1, "tools/call", call, envelope())["error"]["code"] == -32021
    # optional without the extension: a plain call (queued, answered when it finishes)
    assert raw(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "slow", "arguments": {}, "_meta": envelope()}}) == []
    plain = server.next_call()
    assert plain is not None and server._running[plain.call_id].task_id is None
    server.finish(plain.call_id, plain.run(), 0.0)
    assert raw(server)[0]["result"]["resultType"] == "complete"
    created = request(3, "tools/call", call, declared)["result"]
    assert created["resultType"] == "task" and created["ttlMs"] == _tasks.DEFAULT_TTL_MS
    task_id = created["taskId"]
    assert request(4, "tasks/get", {"taskId": task_id}, envelope())["error"]["code"] == -32021
    for method in ("tasks/result", "tasks/list"):
        assert request(5, method, {"taskId": task_id}, declared)["error"]["code"] == -32601
    got = request(6, "tasks/get", {"taskId": task_id}, declared)["result"]
    assert got["resultType"] == "complete" and got["status"] == "working"
    while (c := server.next_call()) is not None:
        server.finish(c.call_id, c.run(), 1.0)
    raw(server)
    got = request(7, "tasks/get", {"taskId": task_id}, declared)["result"]
    assert got["status"] == "completed"
    assert got["result"]["content"] == [{"type": "text", "text": "job done"}]
    assert request(8, "tasks/cancel", {"taskId": task_id}, declared)["result"] == {
        "resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo":
                                            server.server_info}}  # TX-06: an ack


@pytest.mark.parametrize("era", ERAS)
def test_input_during_a_task(era: str) -> None:
    link = open_link(era, capabilities={"elicitation": {}})
    handle = link.session.call_tool("slow", {}, now=link.now, task=True)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    params = {"mode": "form", "message": "Colour?",
              "requestedSchema": {"type": "object",
                                  "properties": {"colour": {"type": "string"}}}}
    rid = link.server.call_request(call.call_id, "elicitation/create", params)
    task = link.server._tasks.get("task-1")
    assert task is not None and task.status == "input_required"
    asked: list[ServerRequest] = []
    for _ in range(5):
        asked = [e for e in tick(link) if isinstance(e, ServerRequest)]
        if asked:
            break
    assert asked and asked[0].method == "elicitation/create"
    link.session.respond(asked[0].request_id, {"action": "accept",
                                               "content": {"colour": "blue"}})
    link.pump()
    answer = link.server.next_answer()
    for _ in range(5):
        if answer is not None:
            break
        tick(link)
        answer = link.server.next_answer()
    assert answer == (rid, {"action": "accept", "content": {"colour": "blue"}})
    assert task.status == "working"
    if era == "legacy":
        [elicit] = [m for m in link.sent if m.get("method") == "elicitation/create"]
        assert elicit["params"]["_meta"][RELATED_TASK_KEY] == {"taskId": "task-1"}
    else:
        assert sent(link, "tasks/update")
    link.server.finish(call.call_id, "blue it is", link.now)
    done = until_done(link, handle, link.pump())
    assert isinstance(done, Completed) and done.value.content[0].text == "blue it is"


def test_a_cancelled_task_ends_the_call_with_task_cancelled() -> None:
    link = open_link("legacy")
    handle = link.session.call_tool("slow", {}, now=link.now, task=True)
    link.pump()
    # another client (here: a raw request) cancels the task; the poll sees it
    link.server.receive_data(b'{"jsonrpc":"2.0","id":"x","method":"tasks/cancel",'
                             b'"params":{"taskId":"task-1"}}\n', link.now)
    link.server.data_to_send()
    done = until_done(link, handle, [])
    assert isinstance(done, Failed) and isinstance(done.error, TaskCancelled)


def test_the_table_is_bounded() -> None:
    server = task_server()
    raw(server, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "c", "version": "1"}}})
    for i in range(_tasks.MAX_TASKS + 3):
        [out] = raw(server, {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                             "params": {"name": "slow", "task": {}}})
        assert "result" in out, out
        while (c := server.next_call()) is not None:
            server.finish(c.call_id, c.run(), 0.0)
        raw(server)
    assert len(server._tasks) == _tasks.MAX_TASKS
    assert server._tasks.get("task-1") is None  # the oldest ended ones went first
    assert server.internal_errors == 0
