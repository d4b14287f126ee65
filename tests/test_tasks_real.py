"""Tasks against servers nobody here wrote, in every binding (threads, asyncio, trio).

* 2025-11-25 (TK-*): server-everything's ``simulate-research-query`` (``taskSupport:
  required``; about 4 s of status messages; ``ambiguous`` asks for an elicitation that the
  server only sends once ``tasks/result`` is waiting).
* 2026-07-28 (TX-*): fastmcp with fastmcp-tasks (``tests/servers/fastmcp_task_server.py``).
* Both: ``tests/servers/sdk_task_server.py``, the official Python SDK (``mcp`` 2.3.0) with a
  small task layer on its public hooks: the SDK ships task types but no task runtime.

Resuming after a restart (TX-09) runs over HTTP, where the server outlives the client: the
second client is the ``mcp-proto resume`` command in a new process.  server-everything binds
its tasks to the HTTP session that created them, so there the new process gets a clear
:class:`TaskNotFound`; the SDK server keeps them per process and the resume succeeds.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, T, run
from conftest import free_port, serving

from mcp_proto import (
    RequestTimeout,
    RpcError,
    TaskStatus,
)

pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.real_server]

RESEARCH = "simulate-research-query"
#: server-everything's research task takes about 4 s; the bound leaves room for a slow CI.
RESEARCH_TIMEOUT = 60.0


def fill(schema: dict[str, Any]) -> dict[str, Any]:
    """An answer to any flat elicitation form: the first enum value, else a plain value of
    the property's type."""
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if prop.get("enum"):
            out[name] = prop["enum"][0]
        else:
            out[name] = {"boolean": True, "number": 1, "integer": 1}.get(prop.get("type"), "x")
    return out


def statuses(seen: list[TaskStatus]) -> list[str]:
    out: list[str] = []
    for event in seen:
        if not out or out[-1] != event.task.status:
            out.append(event.task.status)
    return out


# -- 2025-11-25: server-everything --------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_tk_everything_research_task_runs_to_its_report(binding: str,
                                                        everything_command: list[str]) -> None:
    """TK-01 (a required tool is called as a task without being asked), TK-02..TK-04 (polls,
    status messages, tasks/result), TK-05 (the finished task in tasks/list)."""
    seen: list[TaskStatus] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T) as c:
            result = await c.call_tool(RESEARCH, {"topic": "rust"}, timeout=RESEARCH_TIMEOUT,
                                       on_task_status=seen.append)
            assert not result.is_error and "Research Report" in result.text
            assert statuses(seen) == ["working", "completed"]
            messages = {e.task.status_message for e in seen}
            assert len(messages) >= 3  # "Gathering sources...", "Analyzing content...", ...
            task_id = seen[0].task.task_id
            assert {e.task.task_id for e in seen} == {task_id}
            listed = {t.task_id: t.status for t in await c.list_tasks()}
            assert listed[task_id] == "completed"
            assert (await c.get_task(task_id)).status == "completed"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_tk05_everything_timeout_cancels_the_task_on_the_server(
        binding: str, everything_command: list[str]) -> None:
    """A local timeout sends tasks/cancel (never notifications/cancelled): the server then
    reports the task cancelled, and a cancel of that terminal task is -32602."""
    seen: list[TaskStatus] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool(RESEARCH, {"topic": "go"}, timeout=1.5,
                                  on_task_status=seen.append)
            task_id = seen[0].task.task_id
            task = await b.poll(lambda: c.get_task(task_id),
                                lambda t: t.status == "cancelled", T)
            assert task.status == "cancelled"
            with pytest.raises(RpcError) as info:
                await c.cancel_task(task_id)
            assert info.value.code == -32602

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_tk04_everything_input_required_is_served_through_tasks_result(
        binding: str, everything_command: list[str]) -> None:
    """``input_required``: the client asks for tasks/result at once; the elicitation that
    server-everything queues behind it reaches the host's handler; the task completes."""
    asked: list[dict[str, Any]] = []
    seen: list[TaskStatus] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": fill(params.get("requestedSchema", {}))}

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T,
                                   on_elicitation=on_elicitation) as c:
            result = await c.call_tool(RESEARCH, {"topic": "python", "ambiguous": True},
                                       timeout=RESEARCH_TIMEOUT, on_task_status=seen.append)
            assert not result.is_error and "Research Report" in result.text
            assert len(asked) == 1
            assert "input_required" in statuses(seen)
            assert statuses(seen)[-1] == "completed"

    run(binding, scenario)


# -- 2026-07-28: fastmcp-tasks ------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_tx_fastmcp_tasks_in_the_2026_era(binding: str,
                                          fastmcp_task_command: list[str]) -> None:
    """TX-01 (declared per request), TX-02 (the server decides: a task, or a plain answer
    for a tool without task support), TX-04 (result / isError / error inline), TX-05 (an
    elicitation inside a task answered with tasks/update)."""
    seen: list[TaskStatus] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        assert params["message"] == "Name?"
        return {"action": "accept", "content": {"name": "Ada"}}

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(fastmcp_task_command, timeout=T,
                                   on_elicitation=on_elicitation) as c:
            assert (c.era, c.protocol_version) == ("modern", "2026-07-28")
            slow = await c.call_tool("slow", {"steps": 3, "delay": 0.1},
                                     on_task_status=seen.append)
            assert slow.text == "slept 3 steps"
            assert statuses(seen) == ["working", "completed"]
            assert (await c.call_tool("must_task", {"x": 21})).text == "42"
            assert (await c.call_tool("ask", {})).text == "hi Ada"
            failed = await c.call_tool("fail", {})
            assert failed.is_error and "deliberate" in failed.text
            with pytest.raises(RpcError) as info:
                await c.call_tool("proto_fail", {})
            assert info.value.code == -32603 and info.value.data == {"why": "test"}
            assert (await c.call_tool("echo", {"text": "plain"})).text == "plain"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_tx06_fastmcp_timeout_cancels_the_task(binding: str,
                                               fastmcp_task_command: list[str]) -> None:
    seen: list[TaskStatus] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(fastmcp_task_command, timeout=T) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("slow", {"steps": 50, "delay": 0.2}, timeout=1.0,
                                  on_task_status=seen.append)
            task_id = seen[0].task.task_id
            task = await b.poll(lambda: c.get_task(task_id),
                                lambda t: t.status == "cancelled", T)
            assert task.status == "cancelled"

    run(binding, scenario)


# -- TX-09: a task id handed to a new process ---------------------------------------------------


@pytest.fixture
def fastmcp_url(fastmcp_task_command: list[str]) -> Iterator[str]:
    port = free_port()
    with serving([*fastmcp_task_command, "--http", str(port)], port) as url:
        yield url


@pytest.fixture
def sdk_task_url(sdk_task_command: list[str]) -> Iterator[str]:
    port = free_port()
    with serving([*sdk_task_command, "--http", str(port)], port) as url:
        yield url


async def start_and_leave(b: Binding, url: str, tool: str, arguments: dict[str, Any],
                          version: str | None) -> str:
    """Start a task call, then close the client while it runs; return the task id."""
    ids: list[str] = []
    c = await b.connect_http(url, timeout=T, protocol_version=version).__aenter__()
    try:
        async with b.tasks() as tg:
            job = tg.spawn(c.call_tool, tool, arguments, timeout=RESEARCH_TIMEOUT, task=True,
                           on_task_status=lambda e: ids.append(e.task.task_id), name="started")
            assert await b.wait_until(lambda: bool(ids), T)
            await c.aclose()
            await job.wait()
    finally:
        await c.aclose()
    return ids[0]


def resume_in_a_new_process(url: str, task_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcp_proto_io", "resume", task_id,
                           "--url", url, "--timeout", str(RESEARCH_TIMEOUT)],
                          capture_output=True, text=True, timeout=RESEARCH_TIMEOUT + 30,
                          check=False)


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_tx09_a_task_outlives_its_client_and_is_resumed_by_another_process(
        binding: str, era: str, request: pytest.FixtureRequest) -> None:
    """The first client starts the task and goes away without cancelling it (closing is not
    cancelling); ``mcp-proto resume TASK_ID`` in a new process polls it to its result."""
    legacy = era == "2025-11-25"
    url = request.getfixturevalue("sdk_task_url" if legacy else "fastmcp_url")
    tool = "slow"
    arguments = {"steps": 4} if legacy else {"steps": 8, "delay": 0.2}
    box: list[str] = []

    async def scenario(b: Binding) -> None:
        box.append(await start_and_leave(b, url, tool, arguments, era))

    run(binding, scenario)
    done = resume_in_a_new_process(url, box[0])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("done 4 steps" if legacy else "slept 8 steps"), done.stdout
    assert f"task {box[0]}: completed" in done.stderr


def test_tx09_a_task_bound_to_its_session_is_a_clear_error_elsewhere(everything_url: str) -> None:
    """server-everything keeps a task in the HTTP session that made it: a new process sees
    TaskNotFound naming the task, not a hang nor a crash."""
    box: list[str] = []

    async def scenario(b: Binding) -> None:
        box.append(await start_and_leave(b, everything_url, RESEARCH, {"topic": "zig"}, None))

    run("threads", scenario)
    done = resume_in_a_new_process(everything_url, box[0])
    assert done.returncode == 1
    assert "TaskNotFound" in done.stderr and box[0] in done.stderr, done.stderr


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_sdk_task_server_in_both_eras(binding: str, era: str,
                                      sdk_task_command: list[str]) -> None:
    """The same calls in both forms against the SDK-built server: an optional tool asked as
    a task, a required one needing the user's input (a server request tagged with the task
    in 2025-11-25, ``inputRequests`` + ``tasks/update`` in 2026), isError, a task error."""
    seen: list[TaskStatus] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": fill(params.get("requestedSchema", {}))}

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(sdk_task_command, timeout=T, protocol_version=era,
                                   on_elicitation=on_elicitation) as c:
            slow = await c.call_tool("slow", {"steps": 2}, task=True,
                                     on_task_status=seen.append)
            assert slow.text == "done 2 steps" and statuses(seen) == ["working", "completed"]
            colour = await c.call_tool("ask_color", {})
            assert colour.text.startswith("colour is")
            assert (await c.call_tool("slow", {"steps": 1, "fail": True}, task=True)).is_error
            with pytest.raises(RpcError) as info:
                await c.call_tool("boom", {}, task=True)
            assert "boom" in info.value.message
            assert (await c.call_tool("echo", {"text": "plain"})).text == "plain"

    run(binding, scenario)
