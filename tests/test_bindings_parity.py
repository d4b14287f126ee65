"""The same scenarios for every binding: threads, asyncio and trio.

Each scenario is written once as ``async def scenario(b)`` and run by ``_bindings.run`` for
each binding (threads under trio through worker threads, see ``tests/_bindings.py``).  Every
run is bounded, and fails if a task, a child process or a binding thread outlives it; the
leak checks are themselves tested at the end of this file with deliberate leaks.

Servers: server-everything and mcp-server-time (real, stdio), the official SDK over HTTP
(``tests/servers/sdk_server.py --http``), server-everything over HTTP, and the scripted ones
(``scripted_server.py`` handshake era, ``modern_scripted.py`` 2026-07-28), whose ``received``
tool shows what the server read (how cancellations are checked).
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from _bindings import (
    ASYNC_BINDINGS,
    BINDINGS,
    Binding,
    LeakError,
    ScenarioTimeout,
    T,
    run,
)
from _bindings import _to_thread as to_thread
from conftest import modern_command, proc_state, scripted_command
from mcp_proto_io._async import _pump as _async_base
from mcp_proto_io._async._pump import CALLBACK_HIGH_WATER

from mcp_proto import (
    ConnectionClosed,
    ConnectionLost,
    Progress,
    RequestTimeout,
    Root,
    RpcError,
    ServerExited,
    TextResourceContents,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

#: (binding, handler kind): sync handlers everywhere, async ones for the async bindings.
HANDLER_CASES = [pytest.param(b, k, id=f"{b}-{k}")
                 for b in BINDINGS for k in ("sync", "async") if b != "threads" or k == "sync"]
MODERN = "2026-07-28"
ACCEPT_ADA = {"action": "accept", "content": {"name": "Ada"}}


# -- helpers --------------------------------------------------------------------------------------


def handler(b: Binding, kind: str, fn: Callable[..., Any], where: list[str]) -> Any:
    """``fn`` as a plain function or as an ``async def`` that really suspends first; either
    way it records the thread it ran on in ``where``."""
    if kind == "sync":
        def sync(*args: Any) -> Any:
            where.append(threading.current_thread().name)
            return fn(*args)
        return sync

    async def coro(*args: Any) -> Any:
        await b.sleep(0)
        where.append(threading.current_thread().name)
        return fn(*args)
    return coro


def check_callback_threads(b: Binding, where: list[str]) -> None:
    """async: callbacks run on the loop's thread; threads: never on the host's event loop
    thread (on the binding's threads, or on the calling thread for an HTTP exchange)."""
    assert where, "no callback ran"
    if b.is_async:
        assert set(where) == {b.loop_thread.name}, where
    else:
        assert b.loop_thread.name not in where, where


async def check_progress(b: Binding, seen: list[Progress], expected: list[int]) -> None:
    """Called as soon as the call returned: every progress that came before the result was
    delivered, in order, before the call returned (as the threads binding does).  A callback
    that only runs later is told apart from one that never runs."""
    at_return = [p.progress for p in seen]
    await b.wait_until(lambda: len(seen) >= len(expected), 5.0)
    eventually = [p.progress for p in seen]
    assert eventually == expected, f"progress callbacks saw {eventually}, not {expected}"
    assert at_return == expected, (
        f"the call returned when its progress callbacks had seen only {at_return} (all of "
        f"{expected} ran later): a callback still pending when the result is delivered")


async def received(c: Any) -> list[dict[str, Any]]:
    """Every message a scripted server has read so far (this call included)."""
    result = await c.call_tool("received", timeout=T)
    assert not result.is_error
    messages: list[dict[str, Any]] = json.loads(result.text)
    return messages


def tool_calls(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"
            and m.get("params", {}).get("name") == name]


def cancels(messages: list[dict[str, Any]]) -> list[Any]:
    return [m["params"].get("requestId") for m in messages
            if isinstance(m, dict) and m.get("method") == "notifications/cancelled"]


async def wait_for_calls(b: Binding, c: Any, name: str, count: int) -> list[dict[str, Any]]:
    """Poll ``received`` until the server has read ``count`` tools/call of ``name``."""
    messages = await b.poll(lambda: received(c),
                            lambda m: len(tool_calls(m, name)) >= count, T)
    calls = tool_calls(messages, name)
    assert len(calls) >= count, f"the server read {len(calls)} {name} calls, not {count}"
    return calls


def gone(pid: int | None) -> bool:
    assert pid is not None
    return proc_state(pid) is None


def not_running(pid: int) -> bool:
    """Gone, or a zombie waiting for PID 1 (an orphaned grandchild)."""
    return proc_state(pid) in (None, "Z", "X")


def text_of(result: Any) -> str:
    [content] = result.contents
    assert isinstance(content, TextResourceContents)
    return content.text


# -- real servers over stdio ----------------------------------------------------------------------


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_everything_list_call_read(binding: str, everything_command: list[str]) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command) as c:
            assert c.server_info.name == "mcp-servers/everything"
            assert c.era == "legacy"
            b.check_no_threads()
            names = {t.name for t in await c.list_tools()}
            assert {"echo", "get-sum"} <= names
            echo = await c.call_tool("echo", {"message": "héllo ✓"})
            assert (echo.text, echo.is_error) == ("Echo: héllo ✓", False)
            assert "3.75" in (await c.call_tool("get-sum", {"a": 1.5, "b": 2.25})).text
            static = "demo://resource/static/document/features.md"
            assert static in [r.uri for r in await c.list_resources()]
            assert "Features" in text_of(await c.read_resource(static))
            with pytest.raises(RpcError) as info:
                await c.read_resource("demo://no/such/resource")
            assert info.value.method == "resources/read"
            await c.ping()
            pid = c.pid
        assert gone(pid)

    run(binding, scenario)


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_time_server_handshake(binding: str, time_command: list[str]) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(time_command) as c:
            assert c.server_info.name == "mcp-time"
            assert (c.era, c.protocol_version) == ("modern", MODERN)
            assert {"get_current_time", "convert_time"} <= {t.name for t in await c.list_tools()}
            now = await c.call_tool("get_current_time", {"timezone": "Etc/UTC"})
            assert not now.is_error and now.structured_content["timezone"] == "Etc/UTC"
            pid = c.pid
        assert gone(pid)

    run(binding, scenario)


@pytest.mark.real_server
@pytest.mark.parametrize(("binding", "kind"), HANDLER_CASES)
def test_everything_progress(binding: str, kind: str, everything_command: list[str]) -> None:
    seen: list[Progress] = []
    where: list[str] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command) as c:
            [name] = [t.name for t in await c.list_tools() if "long-running" in t.name]
            result = await c.call_tool(name, {"duration": 0.6, "steps": 3},
                                       on_progress=handler(b, kind, seen.append, where))
            assert not result.is_error and "completed" in result.text.lower()
            await check_progress(b, seen, [1, 2, 3])
            assert all(p.total == 3 for p in seen)
        check_callback_threads(b, where)

    run(binding, scenario)


@pytest.mark.real_server
@pytest.mark.parametrize(("binding", "kind"), HANDLER_CASES)
def test_everything_sampling_elicitation_roots(binding: str, kind: str,
                                               everything_command: list[str]) -> None:
    sampled: list[dict[str, Any]] = []
    elicited: list[dict[str, Any]] = []
    where: list[str] = []

    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        sampled.append(params)
        return {"role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": "sampled-answer-42"}}

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        elicited.append(params)
        return {"action": "decline"}

    def roots() -> list[Root]:
        return [Root("file:///tmp/mcp-proto-root", "proto-root")]

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command,
                                   on_sampling=handler(b, kind, on_sampling, where),
                                   on_elicitation=handler(b, kind, on_elicitation, where),
                                   roots=handler(b, kind, roots, where)) as c:
            listed = await c.call_tool("get-roots-list", {})
            assert "proto-root" in listed.text and "file:///tmp/mcp-proto-root" in listed.text
            result = await c.call_tool("trigger-sampling-request", {"prompt": "ping-prompt"})
            assert not result.is_error and "sampled-answer-42" in result.text
            assert "ping-prompt" in json.dumps(sampled[0]["messages"])
            elicit = await c.call_tool("trigger-elicitation-request", {})
            assert len(elicited) == 1 and "requestedSchema" in elicited[0]
            assert "decline" in elicit.text.lower()
            # The three at once: each handler is served while the others' calls are pending.
            texts = [r.text for r in await b.gather(
                lambda: c.call_tool("get-roots-list", {}),
                lambda: c.call_tool("trigger-sampling-request", {"prompt": "p2"}),
                lambda: c.call_tool("trigger-elicitation-request", {}))]
            assert "proto-root" in texts[0] and "sampled-answer-42" in texts[1]
            assert "decline" in texts[2].lower()
        check_callback_threads(b, where)

    run(binding, scenario)


# -- HTTP -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "legacy"])
def test_sdk_server_over_http(binding: str, version: str | None, sdk_url: str) -> None:
    asked: list[dict[str, Any]] = []
    where: list[str] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return ACCEPT_ADA

    expected = ("legacy", version) if version else ("modern", MODERN)

    async def scenario(b: Binding) -> None:
        kinds = ["sync", "async"] if b.is_async else ["sync"]
        for kind in kinds:
            async with b.connect_http(sdk_url, protocol_version=version,
                                      on_elicitation=handler(b, kind, on_elicitation,
                                                             where)) as c:
                assert (c.era, c.protocol_version) == expected
                assert c.server_info.name == "sdk-server"
                b.check_no_threads()
                assert {"echo", "ask_name"} <= {t.name for t in await c.list_tools()}
                assert (await c.call_tool("echo", {"text": "hi"})).text == "hi"
                assert text_of(await c.read_resource("demo://a")) == "content of a"
                assert (await c.call_tool("ask_name", {})).text == "hello Ada"
                texts = [r.text for r in await b.gather(*[
                    (lambda i=i: c.call_tool("echo", {"text": f"h{i}"})) for i in range(20)])]
                assert texts == [f"h{i}" for i in range(20)]
        assert len(asked) == len(kinds) and "requestedSchema" in asked[0]
        check_callback_threads(b, where)

    run(binding, scenario)


@pytest.mark.real_server
@pytest.mark.parametrize(("binding", "kind"), HANDLER_CASES)
def test_everything_over_http_progress(binding: str, kind: str, everything_url: str) -> None:
    seen: list[Progress] = []
    where: list[str] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_http(everything_url) as c:
            assert (c.era, c.protocol_version) == ("legacy", "2025-11-25")
            [name] = [t.name for t in await c.list_tools() if "long-running" in t.name]
            done = await c.call_tool(name, {"duration": 0.3, "steps": 3},
                                     on_progress=handler(b, kind, seen.append, where))
            assert "completed" in done.text.lower()
            await check_progress(b, seen, [1, 2, 3])  # over the POST's SSE answer
            assert (await c.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
        check_callback_threads(b, where)

    run(binding, scenario)


# -- scripted misbehaviour ------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_server_death_mid_call_then_next_call_works(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command("die-mid-call")) as c:
            first = c.pid
            with pytest.raises(ServerExited) as info:
                await c.call_tool("echo", {"text": "doomed"})
            assert info.value.exit_code == 3 and "dying" in info.value.stderr_tail
            messages = await received(c)  # a new process, a new handshake
            assert c.pid is not None and c.pid != first
            assert gone(first)  # reaped
            assert tool_calls(messages, "echo") == []  # the failed call was not replayed
            second = c.pid
        assert gone(second)

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_timeout_then_client_still_usable(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command()) as c:
            with pytest.raises(RequestTimeout) as info:
                await c.call_tool("sleep", {"seconds": 2}, timeout=0.3)
            assert (info.value.method, info.value.kind) == ("tools/call", "total")
            assert (await c.call_tool("echo", {"text": "after"})).text == "after"
            messages = await received(c)
            [call] = tool_calls(messages, "sleep")
            assert cancels(messages) == [call["id"]]

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_20_pipelined_concurrent_calls(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command()) as c:
            results = await b.gather(*[
                (lambda i=i: c.call_tool("echo", {"text": f"m{i}"})) for i in range(20)])
            assert [r.text for r in results] == [f"m{i}" for i in range(20)]
            ids = [m["id"] for m in tool_calls(await received(c), "echo")]
            assert len(ids) == len(set(ids)) == 20

    run(binding, scenario)


@pytest.mark.parametrize(("binding", "kind"), HANDLER_CASES)
def test_modern_era_over_stdio(binding: str, kind: str) -> None:
    asked: list[dict[str, Any]] = []
    where: list[str] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return ACCEPT_ADA

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(modern_command(), on_elicitation=handler(
                b, kind, on_elicitation, where)) as c:
            assert (c.era, c.protocol_version) == ("modern", MODERN)
            assert c.server_info.name == "modern-scripted"
            assert [t.name for t in await c.list_tools()] == [
                "echo", "received", "ask", "touch", "change_tools", "hang"]
            assert (await c.call_tool("echo", {"text": "x"})).text == "x"
            assert text_of(await c.read_resource("demo://a")) == "content of a"
            assert (await c.call_tool("ask", {"lang": "en"})).text == "hi Ada"  # MRTR
            messages = await received(c)
            pid = c.pid
        assert gone(pid)
        methods = [m.get("method") for m in messages]
        assert "initialize" not in methods and methods[0] == "server/discover"
        assert len(tool_calls(messages, "ask")) == 2 and len(asked) == 1
        check_callback_threads(b, where)

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_handler_calls_back_into_the_client(binding: str) -> None:
    """A sampling handler makes a call on the same client while the call that caused the
    request is pending (threads: blocking, on a handler thread; async: awaited)."""
    box: list[Any] = []

    async def scenario(b: Binding) -> None:
        if b.is_async:
            async def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
                inner = await box[0].call_tool("received", timeout=T)
                return {"role": "assistant", "model": "m",
                        "content": {"type": "text", "text": f"inner-{len(json.loads(inner.text))}"}}
        else:
            def on_sampling(params: dict[str, Any]) -> dict[str, Any]:  # type: ignore[misc]
                inner = box[0].raw.call_tool("received", timeout=T)
                return {"role": "assistant", "model": "m",
                        "content": {"type": "text", "text": f"inner-{len(json.loads(inner.text))}"}}

        async with b.connect_stdio(scripted_command("sampling"), on_sampling=on_sampling) as c:
            box.append(c)
            result = await c.call_tool("echo", {"prompt": "hi"})
            assert result.text.startswith("inner-") and not result.is_error

    run(binding, scenario)


# -- closing and cancelling -----------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_close_from_another_task_fails_pending_calls(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        c = b.stdio_client(scripted_command())
        await c.connect()
        pid = c.pid
        async with b.tasks() as tg:
            pending = [tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name=f"sleep-{i}")
                       for i in range(3)]
            await wait_for_calls(b, c, "sleep", 3)
            await tg.spawn(c.aclose, name="closer").result()
            assert gone(pid)
            for job in pending:
                await job.wait()
                assert type(job.error) is ConnectionClosed, (job.error, job.cancelled)
        with pytest.raises(ConnectionClosed):
            await c.call_tool("echo", {"text": "after close"})
        await c.aclose()  # idempotent

    run(binding, scenario)


@pytest.mark.parametrize("binding", ASYNC_BINDINGS)
def test_a_bug_in_the_deferred_flush_fails_the_calls_and_the_client_still_closes(
        binding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls started together are flushed at the end of the loop's turn (AsyncPump.start);
    a bug there fails every call with ConnectionClosed, and aclose() still ends (on trio the
    flush runs in a task of the connection, which close() must not leave behind)."""
    original = _async_base.AsyncPump._after_soon
    bugs = [RuntimeError("a bug in the deferred flush")]

    def after_soon(self: Any) -> None:
        if bugs:
            monkeypatch.setattr(self, "_after", lambda: (_ for _ in ()).throw(bugs.pop()))
        original(self)

    monkeypatch.setattr(_async_base.AsyncPump, "_after_soon", after_soon)

    async def scenario(b: Binding) -> None:
        c = b.stdio_client(scripted_command())
        await c.connect()
        pid = c.pid
        async with b.tasks() as tg:
            # Slow calls: none is answered before the flush fails (the first is sent at once).
            calls = [tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name=f"sleep-{i}")
                     for i in range(3)]
            for job in calls:
                await job.wait()
                assert type(job.error) is ConnectionLost, (job.error, job.value)  # not closed by us
                assert "a bug in the deferred flush" in str(job.error)
        await c.aclose()  # bounded by run(): a task left parked would hang it
        assert gone(pid) and not bugs

    run(binding, scenario)


@pytest.mark.parametrize("binding", ASYNC_BINDINGS)
def test_cancelling_the_awaiting_task_sends_cancelled(binding: str) -> None:
    """The cancellation is sent when the task is cancelled: it is on the wire before the next
    request the client writes (an ordering, not a timing: the per-call deadline would send a
    notifications/cancelled too, but only ``T`` seconds later)."""

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command()) as c, b.tasks() as tg:
            job = tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name="slow")
            [call] = await wait_for_calls(b, c, "sleep", 1)
            job.cancel()
            await job.wait()
            assert job.cancelled and job.error is None, job.error
            assert (await c.call_tool("echo", {"text": "next"})).text == "next"
            messages = await received(c)
            assert cancels(messages) == [call["id"]], (
                "no notifications/cancelled for the cancelled call before the next request")
            # Cancelled before or just after it was written: never left uncancelled.
            job = tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name="slow-2")
            await b.sleep(0)
            job.cancel()
            await job.wait()
            assert job.cancelled and job.error is None, job.error
            assert (await c.call_tool("echo", {"text": "again"})).text == "again"
            messages = await received(c)
            assert sorted(map(str, cancels(messages))) == sorted(
                str(call["id"]) for call in tool_calls(messages, "sleep"))

    run(binding, scenario)


@pytest.mark.parametrize("binding", ASYNC_BINDINGS)
def test_slow_async_callbacks_hold_the_reader_back(binding: str) -> None:
    """A flood of notifications for an async on_notification slower than the server: the
    connection stops reading while the queue is long (memory stays bounded, as the threads
    binding's reader-thread callbacks bound it) and every notification is still delivered,
    in order, before the call's answer is read."""
    n = 60_000  # ~4 MiB: several reads' worth
    seen: list[int] = []
    queued: list[int] = []
    box: list[Any] = []

    async def scenario(b: Binding) -> None:
        async def on_notification(event: Any) -> None:
            await b.sleep(0)
            conn = box[0]._conn
            if type(event).__name__ == "LogMessage" and conn is not None:
                seen.append(1)
                queued.append(len(conn.notifications.queue))

        async with b.connect_stdio(scripted_command(), on_notification=on_notification) as c:
            box.append(c)
            result = await c.call_tool("notify_flood", {"n": n}, timeout=T)
            assert result.text == f"sent {n}"
            assert await b.wait_until(lambda: len(seen) >= n, T)

    run(binding, scenario)
    assert len(seen) == n
    # Reading stops once the queue passes the high-water mark, so it exceeds it by at most
    # what one read brought (up to 1 MiB of small messages, ~15,000 here), never by the flood.
    assert max(queued) <= CALLBACK_HIGH_WATER + 20_000 < n, max(queued)


@pytest.mark.parametrize("binding", ASYNC_BINDINGS)
def test_cancelling_a_call_in_the_stateless_era_over_stdio(binding: str) -> None:
    """2026-07-28 on stdio: the cancelled request gets ``notifications/cancelled`` (C-01)
    before the next request, and the client goes on."""

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(modern_command()) as c, b.tasks() as tg:
            assert c.protocol_version == MODERN
            job = tg.spawn(c.call_tool, "hang", {}, name="hang")
            [call] = await wait_for_calls(b, c, "hang", 1)
            job.cancel()
            await job.wait()
            assert job.cancelled and job.error is None, job.error
            assert (await c.call_tool("echo", {"text": "next"})).text == "next"
            assert cancels(await received(c)) == [call["id"]]

    run(binding, scenario)


@pytest.mark.parametrize("binding", ASYNC_BINDINGS)
@pytest.mark.parametrize("version", [None, "2025-11-25"], ids=["modern", "legacy"])
def test_cancelling_a_call_over_http_reaches_the_sdk_server(binding: str, version: str | None,
                                                           sdk_url: str) -> None:
    """Over HTTP the official SDK server sees the cancellation and stops the tool: by the
    closed stream in 2026 (C-04), by ``notifications/cancelled`` in the handshake era (C-05);
    the next call on the same client works."""

    async def outcomes(c: Any) -> list[str]:
        result = await c.call_tool("sleeps", {}, timeout=T)
        return list(result.structured_content["result"])

    async def scenario(b: Binding) -> None:
        async with b.connect_http(sdk_url, timeout=T, protocol_version=version) as c, \
                b.tasks() as tg:
            job = tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name="sleep")
            await b.poll(lambda: outcomes(c), lambda o: o == ["started"], T)
            job.cancel()
            await job.wait()
            assert job.cancelled and job.error is None, job.error
            assert (await c.call_tool("echo", {"text": "next"})).text == "next"
            seen = await b.poll(lambda: outcomes(c), lambda o: len(o) > 1, T)
            assert seen == ["started", "cancelled"]

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_cancelling_the_async_with_body_stops_the_process_group(binding: str,
                                                                tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    pids: list[int] = []

    async def scenario(b: Binding) -> None:
        inside = b.event()
        box: list[Any] = []

        async def body() -> None:
            async with b.connect_stdio(scripted_command("grandchild"),
                                       env={"SCRIPTED_GRANDCHILD_PIDFILE": str(pidfile)}) as c:
                box.append(c)
                pids.append(c.pid)
                inside.set()
                await c.call_tool("sleep", {"seconds": 30})

        async with b.tasks() as tg:
            job = tg.spawn(body, name="body")
            await inside.wait()
            await wait_for_calls(b, box[0], "sleep", 1)
            assert await b.wait_until(pidfile.exists, T)
            job.cancel()
            await job.wait()
            assert job.cancelled and job.error is None, job.error
            assert gone(pids[0])  # stopped and reaped before the body's exit returned
            grandchild = int(pidfile.read_text())
            assert await b.wait_until(lambda: not_running(grandchild), T), (
                proc_state(grandchild))

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_five_clients_closed_in_random_order_by_another_task(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        clients: list[Any] = []

        async def opener(i: int) -> None:
            c = b.stdio_client(scripted_command())
            await c.connect()
            assert (await c.call_tool("echo", {"text": f"o{i}"})).text == f"o{i}"
            clients.append(c)

        async with b.tasks() as tg:
            for job in [tg.spawn(opener, i, name=f"opener-{i}") for i in range(5)]:
                await job.result()
        # A third task uses them (neither the opener nor the closer).
        for i, c in enumerate(clients):
            assert (await c.call_tool("echo", {"text": f"u{i}"})).text == f"u{i}"
        order = list(clients)
        random.Random(20260728).shuffle(order)

        async def closer() -> None:
            for c in order:
                pid = c.pid
                await c.aclose()
                assert gone(pid)

        async with b.tasks() as tg:
            await tg.spawn(closer, name="closer").result()

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_close_from_another_task_while_the_opener_is_inside_async_with(binding: str) -> None:
    """trio: no "cancel scope in a different task" error when the opener's ``async with`` is
    still open; the opener's exit then closes again (idempotent)."""

    async def scenario(b: Binding) -> None:
        inside = b.event()
        closed = b.event()
        box: list[Any] = []

        async def opener() -> str:
            async with b.connect_stdio(scripted_command()) as c:
                box.append(c)
                inside.set()
                await closed.wait()
                with pytest.raises(ConnectionClosed):
                    await c.call_tool("echo", {"text": "after close"})
            return "exited"

        async with b.tasks() as tg:
            job = tg.spawn(opener, name="opener")
            await inside.wait()
            c = box[0]
            pid = c.pid
            assert (await c.call_tool("echo", {"text": "x"})).text == "x"
            await tg.spawn(c.aclose, name="closer").result()
            assert gone(pid)
            closed.set()
            assert await job.result() == "exited"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_close_called_from_a_plain_thread(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command()) as c, b.tasks() as tg:
            pid = c.pid
            job = tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name="slow")
            await wait_for_calls(b, c, "sleep", 1)
            closer = threading.Thread(target=c.close, name="test-plain-closer", daemon=True)
            closer.start()
            assert await b.wait_until(lambda: not closer.is_alive(), T)
            await job.wait()
            assert type(job.error) is ConnectionClosed, (job.error, job.cancelled)
            await c.aclose()  # waits for the close the thread started
            assert gone(pid)
            with pytest.raises(ConnectionClosed):
                await c.call_tool("echo", {"text": "after close"})

    run(binding, scenario)


# -- the leak checks and the bound themselves -----------------------------------------------------


@pytest.mark.parametrize("runtime", ["asyncio", "trio"])
@pytest.mark.parametrize("name", ["mcp-proto-fake-leak", "some-other-task"])
def test_leak_check_catches_a_leftover_task(runtime: str, name: str) -> None:
    keep: list[Any] = []

    async def scenario(b: Binding) -> None:
        if b.runtime == "asyncio":
            keep.append(asyncio.get_running_loop().create_task(asyncio.Event().wait(),
                                                               name=name))
        else:
            trio.lowlevel.spawn_system_task(trio.sleep_forever, name=name)

    with pytest.raises(LeakError, match=f"tasks still running: {name}"):
        run(runtime, scenario, load=False, grace=0.2)


def test_leak_check_catches_an_unretrieved_asyncio_error() -> None:
    async def boom() -> None:
        raise RuntimeError("nobody looks at me")

    async def scenario(b: Binding) -> None:
        asyncio.get_running_loop().create_task(boom())
        for _ in range(3):
            await asyncio.sleep(0)
        gc.collect()

    with pytest.raises(LeakError, match="never retrieved"):
        run("asyncio", scenario, load=False, grace=0.2)


@pytest.mark.parametrize("runtime", ["asyncio", "trio"])
def test_leak_check_catches_a_child_process(runtime: str) -> None:
    procs: list[subprocess.Popen[bytes]] = []

    async def scenario(b: Binding) -> None:
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))

    with pytest.raises(LeakError, match="child processes") as info:
        run(runtime, scenario, load=False, grace=0.2)
    assert str(procs[0].pid) in str(info.value)
    assert proc_state(procs[0].pid) is None  # the check killed and reaped it
    procs[0].returncode = -9  # reaped behind Popen's back


@pytest.mark.parametrize("runtime", ["asyncio", "trio"])
def test_leak_check_catches_a_binding_thread(runtime: str) -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(30,), name="mcp-proto-fake-leak",
                              daemon=True)

    async def scenario(b: Binding) -> None:
        thread.start()

    try:
        with pytest.raises(LeakError, match="threads: mcp-proto-fake-leak"):
            run(runtime, scenario, load=False, grace=0.2)
    finally:
        release.set()
        thread.join(5)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize("runtime", ["asyncio", "trio"])
def test_error_check_catches_a_printed_traceback_and_a_resource_warning(runtime: str,
                                                                        tmp_path: Path) -> None:
    def crash() -> None:
        raise RuntimeError("a background thread crashed")

    async def scenario(b: Binding) -> None:
        thread = threading.Thread(target=crash, name="test-crasher")
        thread.start()
        thread.join(5)
        open(tmp_path / "f", "w")  # noqa: SIM115 - never closed, on purpose

    with pytest.raises(LeakError) as info:
        run(runtime, scenario, load=False, grace=0.2)
    assert "a background thread crashed" in str(info.value)
    assert "ResourceWarning: unclosed file" in str(info.value)


@pytest.mark.parametrize("binding", BINDINGS)
def test_every_run_is_bounded(binding: str) -> None:
    """Even a blocking call that never returns (threads) ends the run at the bound."""
    release = threading.Event()

    async def scenario(b: Binding) -> None:
        if b.is_async:
            await b.sleep(60)
        else:
            await to_thread(lambda: release.wait(30))

    try:
        with pytest.raises(ScenarioTimeout):
            run(binding, scenario, bound=0.3, load=False, grace=0.2)
    finally:
        release.set()


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_failing_scenario_fails_the_test(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        async with b.tasks() as tg:
            tg.spawn(b.sleep, 0)
            raise KeyError("from the scenario")

    with pytest.raises(KeyError, match="from the scenario"):
        run(binding, scenario, load=False, grace=0.2)
