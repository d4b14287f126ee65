"""URL elicitation (-32042, completions in any order, the automatic retry and its bound) and
the client as a task receiver (a server polling, cancelling, fetching results, asking about
unknown tasks, a TTL that ends a task), against ``servers/currency_scripted.py``, in the three
runtimes (issue 25)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run

from mcp_proto import ElicitationComplete, Event, UrlElicitation, UrlElicitationRequired

SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "currency_scripted.py")]
T = 10.0
RELATED = "io.modelcontextprotocol/related-task"


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}


def slow_sampler(b: Binding, seconds: float, started: threading.Event | None = None) -> Any:
    """A sampling handler that takes ``seconds`` (awaiting in the async runtimes)."""
    if b.is_async:
        async def handler(params: dict[str, Any]) -> dict[str, Any]:
            if started is not None:
                started.set()
            await b.sleep(seconds)
            return sample(params)
        return handler

    def blocking(params: dict[str, Any]) -> dict[str, Any]:
        if started is not None:
            started.set()
        time.sleep(seconds)
        return sample(params)
    return blocking


async def task_transcript(c: Any, script: list[str], *, method: str = "sampling",
                          ttl: int | None = 60000) -> dict[str, Any]:
    result = await c.call_tool("ask_task", {"method": method, "ttl": ttl, "script": script},
                               timeout=T)
    assert not result.is_error, result.text
    return json.loads(result.text)  # type: ignore[no-any-return]


# -- URL-mode elicitation ----------------------------------------------------------------------


@pytest.mark.parametrize("order", ["forward", "reverse", "noisy"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_f05_retry_after_every_completion_in_any_order(binding: str, order: str) -> None:
    """With ``retry_url_elicitation`` the call is sent again once the user accepted each
    elicitation and the server completed each, in whatever order; an unknown id and a
    repeated completion are ignored (one ElicitationComplete per id)."""
    offered: list[UrlElicitation] = []
    events: list[Event] = []

    def on_url(elicitation: UrlElicitation) -> str:
        offered.append(elicitation)
        return "accept"

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_url_elicitation=on_url,
                                   retry_url_elicitation=True, label="scripted",
                                   on_notification=events.append) as c:
            result = await c.call_tool("needs_url", {"count": 2, "order": order, "key": order})
            assert result.text == f"done {order}"

    run(binding, scenario)
    assert [e.elicitation_id for e in offered] == [f"{order}-0", f"{order}-1"]
    assert {e.server for e in offered} == {"scripted"}
    completed = sorted(e.elicitation_id for e in events if isinstance(e, ElicitationComplete))
    assert completed == [f"{order}-0", f"{order}-1"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_f05_no_completion_raises_at_the_deadline(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_url_elicitation=lambda e: "accept",
                                   retry_url_elicitation=True) as c:
            started = time.monotonic()
            with pytest.raises(UrlElicitationRequired) as caught:
                await c.call_tool("needs_url", {"order": "none", "key": "n"}, timeout=1.0)
            assert time.monotonic() - started < 5.0
            assert caught.value.actions == {"n-0": "accept"}

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_f05_a_server_that_always_asks_is_retried_a_bounded_number_of_times(
        binding: str) -> None:
    offered: list[str] = []

    def on_url(elicitation: UrlElicitation) -> str:
        offered.append(elicitation.elicitation_id or "")
        return "accept"

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_url_elicitation=on_url,
                                   retry_url_elicitation=True) as c:
            with pytest.raises(UrlElicitationRequired):
                await c.call_tool("needs_url", {"always": True, "key": "a"})

    run(binding, scenario)
    assert offered == [f"a-r{i}-0" for i in range(4)]  # 3 retries, then the error


@pytest.mark.parametrize("binding", BINDINGS)
def test_f05_a_decline_is_not_retried_and_no_handler_raises_at_once(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_url_elicitation=lambda e: "decline",
                                   retry_url_elicitation=True) as c:
            with pytest.raises(UrlElicitationRequired) as caught:
                await c.call_tool("needs_url", {"key": "d"})
            assert caught.value.actions == {"d-0": "decline"}
        async with b.connect_stdio(SERVER, timeout=T) as plain:
            with pytest.raises(UrlElicitationRequired) as caught:
                await plain.call_tool("needs_url", {"key": "p"})
            assert caught.value.actions == {}
            [needed] = caught.value.elicitations
            assert (needed.url, needed.elicitation_id) == ("https://auth.example/p/0", "p-0")

    run(binding, scenario)


# -- the client as a task receiver -------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_receiver_serves_get_result_list_and_refuses_unknown_tasks(binding: str) -> None:
    script = ["get-until-done", "result", "list", "get-unknown", "result-unknown", "cancel",
              "cancel-unknown"]

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_sampling=sample,
                                   task_receiver=True) as c:
            out = await task_transcript(c, script)
            created, done, result, listed, *unknown = out["answers"]
            task = created["result"]["task"]
            assert task["status"] == "working" and task["ttl"] == 60000
            assert isinstance(task["taskId"], str) and len(task["taskId"]) >= 16
            assert task["createdAt"] == task["lastUpdatedAt"]
            assert done["result"]["status"] == "completed"
            assert result["result"]["model"] == "m"
            assert result["result"]["_meta"][RELATED] == {"taskId": task["taskId"]}
            assert [t["taskId"] for t in listed["result"]["tasks"]] == [task["taskId"]]
            assert [a["error"]["code"] for a in unknown] == [-32602] * 4  # unknown x3, terminal
            assert any(s.get("status") == "completed" and s.get("taskId") == task["taskId"]
                       for s in out["statuses"])
            [kept] = c.task_store.tasks()
            assert kept.task_id == task["taskId"] and kept.status == "completed"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_receiver_result_blocks_until_the_work_is_done(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_sampling=slow_sampler(b, 0.5),
                                   task_receiver=True) as c:
            started = time.monotonic()
            out = await task_transcript(c, ["result"])
            assert time.monotonic() - started >= 0.4
            created, result = out["answers"]
            assert created["result"]["task"]["status"] == "working"
            assert result["result"]["content"] == {"type": "text", "text": "ok"}

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_receiver_cancel_while_working_ends_the_task_cancelled(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_sampling=slow_sampler(b, 2.0),
                                   task_receiver=True) as c:
            out = await task_transcript(c, ["sleep:0.2", "cancel", "get", "result"])
            _, cancelled, got, result = out["answers"]
            assert cancelled["result"]["status"] == "cancelled"
            assert got["result"]["status"] == "cancelled"
            assert "error" in result
            [kept] = c.task_store.tasks()
            assert kept.status == "cancelled"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_receiver_a_failing_handler_fails_the_task_with_its_message(binding: str) -> None:
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("the model is offline")

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_sampling=broken,
                                   task_receiver=True) as c:
            out = await task_transcript(c, ["get-until-done", "result"])
            _, done, result = out["answers"]
            assert done["result"]["status"] == "failed"
            assert "the model is offline" in done["result"]["statusMessage"]
            assert "the model is offline" in result["error"]["message"]

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_receiver_ttl_ends_the_task_and_elicitation_runs_as_a_task(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(SERVER, timeout=T, on_sampling=sample,
                                   on_elicitation=lambda p: {"action": "accept",
                                                             "content": {"name": "Ada"}},
                                   task_receiver=True) as c:
            out = await task_transcript(c, ["sleep:1.3", "get"], ttl=200)
            assert out["answers"][0]["result"]["task"]["ttl"] == 1000  # the store's floor
            assert out["answers"][1]["error"]["code"] == -32602  # purged after its TTL
            out = await task_transcript(c, ["result"], method="elicitation", ttl=None)
            created, result = out["answers"]
            assert created["result"]["task"]["ttl"] is not None  # the store's default
            assert result["result"]["content"] == {"name": "Ada"}

    run(binding, scenario)


# -- through the Host ----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_host_passes_url_elicitations_and_task_receiving_to_each_server(binding: str) -> None:
    """The Host's ``on_url_elicitation`` gets every server's URL elicitations named by the
    server's config name; ``retry_url_elicitation`` and ``task_receiver`` reach each client."""
    offered: list[UrlElicitation] = []

    def on_url(elicitation: UrlElicitation) -> str:
        offered.append(elicitation)
        return "accept"

    config = {"mcpServers": {"pay": {"command": SERVER[0], "args": SERVER[1:]}}}

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config, on_url_elicitation=on_url,
                                    retry_url_elicitation=True, task_receiver=True,
                                    on_sampling=lambda server, p: sample(p)) as host:
            result = await host.call_tool("pay__needs_url", {"key": "h"})
            assert result.text == "done h"
            out = await host.call_tool("pay__ask_task", {"script": ["result"]}, timeout=T)
            created, answer = json.loads(out.text)["answers"]
            assert created["result"]["task"]["status"] == "working"
            assert answer["result"]["model"] == "m"

    run(binding, scenario)
    assert [(e.server, e.elicitation_id) for e in offered] == [("pay", "h-0")]


@pytest.mark.parametrize("binding", ["asyncio", "trio"])
def test_an_async_url_handler_is_awaited_on_both_paths(binding: str) -> None:
    """In the async runtimes the handler may be a coroutine function: awaited for each
    elicitation a -32042 names, before the retry."""
    seen: list[str] = []

    async def scenario(b: Binding) -> None:
        async def on_url(elicitation: UrlElicitation) -> str:
            await b.sleep(0.01)
            seen.append(elicitation.url)
            return "accept"

        async with b.connect_stdio(SERVER, timeout=T, on_url_elicitation=on_url,
                                   retry_url_elicitation=True) as c:
            assert (await c.call_tool("needs_url", {"key": "async"})).text == "done async"

    run(binding, scenario)
    assert seen == ["https://auth.example/async/0"]
