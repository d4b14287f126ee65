"""Tasks (section 9) through every binding, against ``tests/servers/task_scripted.py``: the
hard cases a real server may produce in either era (a task purged mid-poll, a cancel that
loses the race, missing or zero poll intervals, repeated input keys, status notifications
that lie, an illegal transition).  What the client sent is read back with the server's
``received`` tool.  No timing is asserted; every wait is bounded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, T, run

from mcp_proto import (
    TASKS_EXTENSION,
    CallToolResult,
    RemoteProtocolError,
    RpcError,
    Task,
    TaskNotFound,
    TaskStateError,
    TaskStatus,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

SERVER = Path(__file__).resolve().parent / "servers" / "task_scripted.py"
ERAS = ("legacy", "modern")
#: (binding, callback kind): sync callbacks everywhere, async ones for the async bindings.
CALLBACK_CASES = [pytest.param(b, k, id=f"{b}-{k}")
                  for b in BINDINGS for k in ("sync", "async") if b != "threads" or k == "sync"]
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"


def command(era: str, scenario: str) -> list[str]:
    return [sys.executable, str(SERVER), "--era", era, scenario]


def callback(b: Binding, kind: str, fn: Callable[[Any], Any]) -> Any:
    if kind == "sync":
        return fn

    async def coro(arg: Any) -> Any:
        await b.sleep(0)
        return fn(arg)
    return coro


class Statuses:
    """An ``on_task_status`` callback keeping what it saw."""

    def __init__(self) -> None:
        self.seen: list[Task] = []

    def __call__(self, event: TaskStatus) -> None:
        assert isinstance(event, TaskStatus)
        self.seen.append(event.task)

    @property
    def ids(self) -> set[str]:
        return {t.task_id for t in self.seen}

    @property
    def statuses(self) -> list[str]:
        return [t.status for t in self.seen]


async def received(c: Any) -> list[dict[str, Any]]:
    result = await c.call_tool("received", timeout=T)
    messages: list[dict[str, Any]] = json.loads(result.text)
    return messages


def methods(messages: list[dict[str, Any]]) -> list[str]:
    return [m.get("method", "") for m in messages if isinstance(m, dict)]


def of(messages: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m, dict) and m.get("method") == method]


def bare(message: dict[str, Any]) -> dict[str, Any]:
    """A request's params without the 2026 ``_meta`` envelope."""
    return {k: v for k, v in message.get("params", {}).items() if k != "_meta"}


def summary(result: CallToolResult) -> dict[str, Any]:
    """The JSON the server's ``job`` result carries: taskId, polls, updates."""
    assert not result.is_error, result
    data: dict[str, Any] = json.loads(result.text)
    return data


async def until(b: Binding, predicate: Callable[[], Any]) -> None:
    assert await b.wait_until(predicate, T), "not reached in time"


# -- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_task_is_polled_to_its_result(binding: str, era: str) -> None:
    """TK-01 (a ``required`` tool is sent with ``task``, after listing the tools), TK-02,
    TK-04, TK-06 (tasks/get and tasks/result carry only ``taskId``); TX-01 (the extension
    declared per request), TX-02, TX-04 (the result inline in tasks/get)."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command(era, "default")) as c:
            result = await c.call_tool("job", {"n": 1}, task_ttl=60.0, on_task_status=status)
            messages = await received(c)
        await until(b, lambda: "completed" in status.statuses)
        [task_id] = status.ids
        assert summary(result) == {"taskId": task_id, "polls": 2, "updates": []}
        assert status.statuses == ["working", "completed"]
        [call] = [m for m in of(messages, "tools/call") if m["params"]["name"] == "job"]
        gets = of(messages, "tasks/get")
        assert len(gets) == 2 and all(bare(m) == {"taskId": task_id} for m in gets)
        if era == "legacy":
            assert methods(messages).index("tools/list") < messages.index(call)
            assert call["params"]["task"] == {"ttl": 60000}
            [fetch] = of(messages, "tasks/result")
            assert fetch["params"] == {"taskId": task_id}
            assert messages.index(fetch) > messages.index(gets[-1])
        else:
            assert "task" not in call["params"]
            caps = call["params"]["_meta"][CLIENT_CAPABILITIES_KEY]
            assert TASKS_EXTENSION in caps["extensions"]
            assert of(messages, "tasks/result") == []
        assert of(messages, "notifications/cancelled") == of(messages, "tasks/cancel") == []

    run(binding, scenario)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_task_purged_mid_poll_is_task_not_found(binding: str, era: str) -> None:
    """TK-05 / TX-08: an unknown or expired task is -32602 on tasks/get; the call fails with
    :class:`TaskNotFound` (an :class:`RpcError`), nothing is cancelled, and the client goes
    on.  A later get_task / resume_task (TX-09) of that id fails the same way."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command(era, "purged")) as c:
            with pytest.raises(TaskNotFound) as caught:
                await c.call_tool("job", on_task_status=status)
            [task_id] = status.ids
            assert caught.value.code == -32602 and task_id in str(caught.value)
            with pytest.raises(RpcError) as direct:
                await c.get_task(task_id)
            assert direct.value.code == -32602
            with pytest.raises(TaskNotFound):
                await c.resume_task(task_id)
            assert (await c.call_tool("echo", {"text": "still here"})).text == "still here"
            messages = await received(c)
        assert len(of(messages, "tasks/get")) == 5  # 3 for the call, get_task, resume_task
        assert of(messages, "tasks/cancel") == of(messages, "notifications/cancelled") == []
        assert of(messages, "tasks/result") == []

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_cancelling_a_terminal_task_is_an_rpc_error(binding: str) -> None:
    """TK-05: tasks/cancel of a terminal task is -32602 (an :class:`RpcError`, the client
    goes on); tasks/get and tasks/list still show it completed; resume_task (TX-09) fetches
    the same result again with tasks/result (TK-04).  Never ``notifications/cancelled``."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command("legacy", "cancel-terminal")) as c:
            first = await c.call_tool("job", on_task_status=status)
            [task_id] = status.ids
            with pytest.raises(RpcError) as caught:
                await c.cancel_task(task_id)
            assert caught.value.code == -32602
            task = await c.get_task(task_id)
            assert isinstance(task, Task) and (task.task_id, task.status) == (task_id,
                                                                            "completed")
            listed = await c.list_tasks()
            assert [(t.task_id, t.status) for t in listed] == [(task_id, "completed")]
            again = await c.resume_task(task_id)
            messages = await received(c)
        assert summary(first)["taskId"] == summary(again)["taskId"] == task_id
        [cancel] = of(messages, "tasks/cancel")
        assert cancel["params"] == {"taskId": task_id}
        assert [m["params"] for m in of(messages, "tasks/result")] == [{"taskId": task_id}] * 2
        assert of(messages, "notifications/cancelled") == []

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_cancelled_task_may_still_complete(binding: str) -> None:
    """TX-06: tasks/cancel is only acknowledged (cancel_task returns None); the call keeps
    polling, and a task that ends ``completed`` anyway gives its result."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command("modern", "completed-after-cancel")) as c:
            async with b.tasks() as tg:
                job = tg.spawn(c.call_tool, "job", on_task_status=status, name="job")
                await until(b, lambda: status.ids)
                [task_id] = status.ids
                assert await c.cancel_task(task_id) is None
                result = await job.result()
            messages = await received(c)
        assert summary(result)["taskId"] == task_id
        await until(b, lambda: "completed" in status.statuses)
        assert "cancelled" not in status.statuses
        [cancel] = of(messages, "tasks/cancel")
        assert bare(cancel) == {"taskId": task_id}
        after = of(messages[messages.index(cancel):], "tasks/get")
        assert len(after) >= 2  # the server ends it 2 polls after the cancel

    run(binding, scenario)


@pytest.mark.parametrize("scenario_name", ["no-poll-interval", "zero-poll-interval"])
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("binding", BINDINGS)
def test_missing_or_zero_poll_interval_still_polls_without_spinning(
        binding: str, era: str, scenario_name: str) -> None:
    """TK-03 / TK-04 / TX-03: ``pollInterval`` is optional (and may be 0): the client still
    polls the ~1.5 s task to its end, without spinning (a sane bound on tasks/get)."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command(era, scenario_name)) as c:
            result = await c.call_tool("job", on_task_status=status)
            messages = await received(c)
        polls = summary(result)["polls"]
        assert 1 <= polls < 50, f"{polls} polls for a 1.5 s task"
        assert len(of(messages, "tasks/get")) == polls
        [task] = [t for t in status.seen if t.status == "working"][:1]
        expected = None if scenario_name == "no-poll-interval" else 0.0
        assert task.poll_interval == expected

    run(binding, scenario)


@pytest.mark.parametrize(("binding", "kind"), CALLBACK_CASES)
def test_repeated_input_keys_are_answered_once(binding: str, kind: str) -> None:
    """TX-05: ``input_required`` repeats the same ``inputRequests`` key over several polls
    (before and after the answer: the server is eventually consistent); the client asks
    the host once per key and sends exactly one tasks/update per key; TX-04: then the
    result."""
    asked: list[str] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"answer": f"a{len(asked)}"}}

    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command("modern", "repeat-keys"),
                                   on_elicitation=callback(b, kind, on_elicitation)) as c:
            result = await c.call_tool("job", on_task_status=status)
            messages = await received(c)
        done = summary(result)
        assert asked == ["Answer q1?", "Answer q2?"]
        assert done["updates"] == [{"q1": {"action": "accept", "content": {"answer": "a1"}}},
                                   {"q2": {"action": "accept", "content": {"answer": "a2"}}}]
        updates = of(messages, "tasks/update")
        assert [bare(m) for m in updates] == [{"taskId": done["taskId"], "inputResponses": u}
                                              for u in done["updates"]]
        assert done["polls"] >= 7  # each key was seen again on at least 2 polls
        await until(b, lambda: "completed" in status.statuses)
        assert "input_required" in status.statuses

    run(binding, scenario)


@pytest.mark.parametrize(("binding", "kind"), CALLBACK_CASES)
def test_status_notifications_that_contradict_the_polls_are_not_believed(
        binding: str, kind: str) -> None:
    """TK-04: ``notifications/tasks/status`` is optional and the client MUST NOT rely on it:
    one saying ``completed`` while polls say ``working`` fetches no result, and ones saying
    ``cancelled`` after the polls said ``completed`` do not cancel the call; the real result
    comes from tasks/result, asked once."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command("legacy", "contradicting-notifications")) as c:
            result = await c.call_tool("job", on_task_status=callback(b, kind, status))
            messages = await received(c)
        await until(b, lambda: "completed" in status.statuses)
        done = summary(result)
        assert done["polls"] == 3
        assert status.statuses == ["working", "completed"]
        gets = of(messages, "tasks/get")
        [fetch] = of(messages, "tasks/result")
        assert len(gets) == 3 and messages.index(fetch) > messages.index(gets[-1])
        assert of(messages, "tasks/cancel") == of(messages, "notifications/cancelled") == []

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_illegal_transition_fails_that_call_and_the_client_goes_on(binding: str) -> None:
    """TX-04 and the state table: a task created ``completed`` then polled ``working`` fails
    the call with :class:`TaskStateError`; a poll saying ``completed`` without its result is
    a protocol error at once (the later ``working`` is never polled).  A task the server calls
    completed is not cancelled; the client stays usable."""
    async def scenario(b: Binding) -> None:
        status = Statuses()
        async with b.connect_stdio(command("modern", "illegal-transition")) as c:
            with pytest.raises(TaskStateError, match="working"):
                await c.call_tool("job", {"variant": "seed-completed"}, on_task_status=status)
            with pytest.raises(RemoteProtocolError) as caught:
                await c.call_tool("job", {"variant": "no-result"}, on_task_status=status)
            assert (await c.call_tool("echo", {"text": "ok"})).text == "ok"
            messages = await received(c)
        assert "without a valid result" in str(caught.value)
        seeded, no_result = sorted(status.ids, key=lambda i: int(i.split("-")[1]))
        gets = [bare(m)["taskId"] for m in of(messages, "tasks/get")]
        assert gets == [seeded, no_result]
        assert of(messages, "tasks/cancel") == of(messages, "notifications/cancelled") == []

    run(binding, scenario)


def test_task_scripted_refuses_a_scenario_its_era_lacks() -> None:
    done = subprocess.run(command("modern", "cancel-terminal"), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=T, check=False)
    assert done.returncode == 2 and b"usage" in done.stderr

