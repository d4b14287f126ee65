"""The blocking binding against the scripted, misbehaving server: one test per scenario.

Every blocking call has a timeout; the ``no_leaks`` fixture checks that no server process or
binding thread survives a test.  ``received`` (a tool of the scripted server) shows what the
server actually read, which is how answers to server requests and cancellations are checked.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Background, proc_state, scripted_command, wait_until
from mcp_proto_io.threads import Client, connect_stdio

from mcp_proto import (
    LATEST_HANDSHAKE_VERSION,
    BadMessage,
    Closed,
    ConnectionClosed,
    Implementation,
    Limits,
    ListChanged,
    LocalProtocolError,
    LogMessage,
    MessageTooLarge,
    OtherNotification,
    Progress,
    RemoteProtocolError,
    RequestTimeout,
    ResourceUpdated,
    Root,
    RpcError,
    ServerExited,
    ServerRequestCancelled,
    UnsupportedVersion,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

T = 10.0  # default per-call deadline of these tests, seconds


def client_for(scenario: str = "default", **kwargs: Any) -> Client:
    kwargs.setdefault("timeout", T)
    return connect_stdio(scripted_command(scenario), **kwargs)


def received(client: Client) -> list[Any]:
    """Every message the server has read so far (the ``received`` call included)."""
    result = client.call_tool("received", timeout=T)
    assert not result.is_error
    messages: list[Any] = json.loads(result.text)
    return messages


def initialize_of(messages: list[Any]) -> dict[str, Any]:
    """The one initialize the server read (after the era probe)."""
    [init] = [m for m in messages if m.get("method") == "initialize"]
    return dict(init)


def responses_to(messages: list[Any], request_id: str) -> list[dict[str, Any]]:
    return [m for m in messages
            if isinstance(m, dict) and m.get("id") == request_id and "method" not in m]


def tool_calls(messages: list[Any], name: str) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m, dict) and m.get("method") == "tools/call"
            and m.get("params", {}).get("name") == name]


def wait_for_call(client: Client, name: str, timeout: float = 5.0) -> dict[str, Any]:
    """Poll ``received`` until the server has read a tools/call of ``name``."""
    found: list[dict[str, Any]] = []

    def seen() -> bool:
        found[:] = tool_calls(received(client), name)
        return bool(found)

    assert wait_until(seen, timeout, 0.05), f"the server never received the {name} call"
    return found[0]


# -- default -----------------------------------------------------------------------------------


def test_default_handshake_and_tools() -> None:
    with client_for() as client:
        assert client.server_info == Implementation(name="scripted-server", version="1.0.0")
        assert client.protocol_version == LATEST_HANDSHAKE_VERSION
        assert client.capabilities == {"tools": {}}
        assert client.instructions == "scenario: default"
        assert [t.name for t in client.list_tools()] == ["echo", "sleep", "received"]
        result = client.call_tool("echo", {"text": "héllo ✓"})
        assert (result.text, result.is_error) == ("héllo ✓", False)
        bad = client.call_tool("echo", {})
        assert bad.is_error and bad.text == "'text' must be a string"
        with pytest.raises(RpcError) as info:
            client.call_tool("nope")
        assert (info.value.code, info.value.message) == (-32602, "Unknown tool: nope")
        assert info.value.method == "tools/call"
        client.ping(timeout=T)
        messages = received(client)
    # Section 2.3: the era probe first; this handshake-era server refuses it (-32601), so the
    # client falls back to initialize at once.
    probe, init = messages[0], messages[1]
    assert probe["method"] == "server/discover" and probe["id"] == 1
    assert probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert init["method"] == "initialize" and init["id"] == 2
    assert init["params"] == {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                              "clientInfo": {"name": "mcp-proto", "version": "0.1.0"}}
    assert messages[2] == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert [m["method"] for m in messages[3:]] == ["tools/list"] + ["tools/call"] * 3 + [
        "ping", "tools/call"]


def test_undeclared_capabilities_are_refused_locally() -> None:
    with client_for(client_info=Implementation(name="host", version="9")) as client:
        with pytest.raises(LocalProtocolError):
            client.read_resource("demo://x")
        with pytest.raises(LocalProtocolError):
            client.get_prompt("p")
        with pytest.raises(LocalProtocolError):
            client.set_logging_level("info")
        messages = received(client)
    assert initialize_of(messages)["params"]["clientInfo"] == {"name": "host", "version": "9"}
    assert [m.get("method") for m in messages] == [
        "server/discover", "initialize", "notifications/initialized", "tools/call"]


def test_list_of_undeclared_capability_returns_at_once() -> None:
    with client_for() as client:
        pending = Background(client.list_resources)
        done = wait_until(lambda: not pending.thread.is_alive(), 2.0)
        if not done:
            client.ping()  # unrelated traffic unblocks the waiter, so the thread ends
        value, error = pending.outcome()
        assert error is None and value == []
        assert done, "list_resources() blocked until unrelated traffic arrived"
        assert client.list_prompts() == []
        assert client.list_resource_templates() == []
        messages = received(client)
    assert not any(m.get("method", "").endswith("/list") for m in messages)


def test_total_timeout_sends_cancellation() -> None:
    with client_for() as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("sleep", {"seconds": 1.0}, timeout=0.5)
        elapsed = time.monotonic() - t0
        assert 0.45 <= elapsed < 1.5
        assert (info.value.method, info.value.kind, info.value.timeout) == (
            "tools/call", "total", 0.5)
        # A second sleep returns after the first one's late answer was read and dropped.
        assert client.call_tool("sleep", {"seconds": 1.0}).text == "slept"
        assert client._conn is not None
        assert client._conn.session.stats.responses_dropped == 1
        messages = received(client)
    call = tool_calls(messages, "sleep")[0]
    cancels = [m for m in messages if m.get("method") == "notifications/cancelled"]
    assert len(cancels) == 1
    assert cancels[0]["params"]["requestId"] == call["id"]
    assert isinstance(cancels[0]["params"].get("reason"), str)


def test_idle_timeout() -> None:
    with client_for() as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("sleep", {"seconds": 2}, timeout=T, idle_timeout=0.3)
        assert time.monotonic() - t0 < 1.5
        assert (info.value.kind, info.value.timeout) == ("idle", 0.3)
        messages = received(client)
    call = tool_calls(messages, "sleep")[0]
    assert {"requestId": call["id"]}.items() <= next(
        m["params"] for m in messages if m.get("method") == "notifications/cancelled").items()


def test_pipelined_calls_from_32_threads() -> None:
    with client_for() as client:
        barrier = threading.Barrier(32, timeout=T)

        def work(i: int) -> list[str]:
            barrier.wait()
            return [client.call_tool("echo", {"text": f"t{i}-{k}"}).text for k in range(5)]

        jobs = [Background(functools.partial(work, i)) for i in range(32)]
        for i, job in enumerate(jobs):
            value, error = job.outcome()
            assert error is None
            assert value == [f"t{i}-{k}" for k in range(5)]
        ids = [m["id"] for m in tool_calls(received(client), "echo")]
    assert len(ids) == 160 and len(set(ids)) == 160


def test_close_fails_pending_call_with_connection_closed() -> None:
    client = client_for()
    client.connect()
    pending = Background(lambda: client.call_tool("sleep", {"seconds": 30}))
    wait_for_call(client, "sleep")
    t0 = time.monotonic()
    client.close()
    assert time.monotonic() - t0 < 5.0
    _, error = pending.outcome()
    assert type(error) is ConnectionClosed
    with pytest.raises(ConnectionClosed):
        client.call_tool("echo", {"text": "after close"})
    client.close()  # idempotent


def test_command_not_found() -> None:
    client = connect_stdio(["/nonexistent/mcp-server-nope"], timeout=T)
    with pytest.raises(ConnectionClosed, match="cannot start the server"):
        client.connect()
    client.close()


def test_server_exits_before_handshake() -> None:
    client = client_for("no-such-scenario")
    with pytest.raises(ServerExited) as info:
        client.connect()
    client.close()
    assert info.value.exit_code == 2
    assert "unknown scenario 'no-such-scenario'" in info.value.stderr_tail


def test_handshake_timeout() -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]
    client = connect_stdio(silent, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        client.connect()
    assert time.monotonic() - t0 < 5.0
    assert info.value.method == "initialize"
    client.close()


# -- ping-mid-call, garbage-line, huge-line ------------------------------------------------


def test_ping_mid_call() -> None:
    with client_for("ping-mid-call") as client:
        assert client.call_tool("echo", {"text": "x"}).text == "pong-ok"
        messages = received(client)
    assert responses_to(messages, "srv-1") == [{"jsonrpc": "2.0", "id": "srv-1", "result": {}}]


def test_garbage_line() -> None:
    events: list[Any] = []
    with client_for("garbage-line", on_notification=events.append) as client:
        assert client.call_tool("echo", {"text": "one"}).text == "one"
        assert client.call_tool("echo", {"text": "two"}).text == "two"
        # One BadMessage per "this is not json" line; the empty line is not a message.
        bad = [e for e in events if isinstance(e, BadMessage)]
        assert len(bad) == 2
        assert all(type(e.error) is RemoteProtocolError for e in bad)
        assert "not UTF-8 JSON" in str(bad[0].error)


def test_huge_line_fails_only_that_call() -> None:
    with client_for("huge-line") as client:
        with pytest.raises(MessageTooLarge) as info:
            client.call_tool("huge")
        assert info.value.limit == 16 * 1024 * 1024
        assert info.value.size > info.value.limit
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"


def test_huge_line_accepted_with_raised_limit() -> None:
    limits = Limits(max_message_size=32 * 1024 * 1024)
    with client_for("huge-line", limits=limits) as client:
        result = client.call_tool("huge")
        text = result.text
        assert len(text) == 17 * 1024 * 1024
        assert text.count("x") == len(text)
        assert client.call_tool("echo", {"text": "ok"}).text == "ok"


# -- process deaths and stopping ------------------------------------------------------------


def test_die_mid_call_then_fresh_process_without_replay() -> None:
    with client_for("die-mid-call") as client:
        first_pid = client.pid
        with pytest.raises(ServerExited) as info:
            client.call_tool("echo", {"text": "doomed"})
        assert info.value.exit_code == 3
        assert "dying" in info.value.stderr_tail
        messages = received(client)  # runs on a new process, new handshake
        assert client.pid is not None and client.pid != first_pid
        assert proc_state(first_pid or 0) is None  # reaped
    # V-20: the era is remembered for this command, so the new process gets no probe.
    assert [m.get("method") for m in messages] == [
        "initialize", "notifications/initialized", "tools/call"]
    assert tool_calls(messages, "echo") == []  # the failed call was not replayed


def test_stderr_flood_is_drained_and_tail_bounded() -> None:
    with client_for("stderr-flood") as client:
        assert client.call_tool("flood_done", timeout=30).text == "flood-done"
        pid = client.pid
        assert pid is not None
        pending = Background(lambda: client.call_tool("sleep", {"seconds": 30}))
        wait_for_call(client, "sleep")
        os.kill(pid, signal.SIGKILL)
        _, error = pending.outcome()
    assert isinstance(error, ServerExited)
    assert error.exit_code == -signal.SIGKILL
    tail = error.stderr_tail
    assert 0 < len(tail.encode()) <= 8 * 1024
    assert tail.rstrip("\n").endswith("LAST-STDERR-LINE")


def _read_pid(path: Path, timeout: float = 5.0) -> int:
    assert wait_until(path.exists, timeout), "the grandchild pid file was never written"
    return int(path.read_text().strip())


def _not_running(pid: int) -> bool:
    """Gone, or a zombie waiting for PID 1 to reap it."""
    return proc_state(pid) in (None, "Z", "X")


def test_grandchild_stopped_on_close(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    client = client_for("grandchild", env={"SCRIPTED_GRANDCHILD_PIDFILE": str(pidfile)})
    try:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        grandchild = _read_pid(pidfile)
        assert proc_state(grandchild) in ("R", "S")
    finally:
        t0 = time.monotonic()
        client.close()
    assert time.monotonic() - t0 < 8.0
    assert wait_until(lambda: _not_running(grandchild), 5.0), proc_state(grandchild)


def test_server_death_detected_while_grandchild_holds_stdout(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    client = client_for("grandchild", env={"SCRIPTED_GRANDCHILD_PIDFILE": str(pidfile)})
    try:
        client.connect()
        grandchild = _read_pid(pidfile)
        pid = client.pid
        assert pid is not None
        pending = Background(lambda: client.call_tool("sleep", {"seconds": 30}, timeout=4.0))
        wait_for_call(client, "sleep")
        os.kill(pid, signal.SIGKILL)
        _, error = pending.outcome()
        assert isinstance(error, ServerExited), repr(error)
        assert error.exit_code == -signal.SIGKILL
        assert pending.elapsed < 3.0
        assert client.call_tool("echo", {"text": "again"}, timeout=4.0).text == "again"
    finally:
        client.close()
        assert wait_until(lambda: _not_running(grandchild), 5.0)


def test_ignore_term_is_killed_on_close() -> None:
    client = client_for("ignore-term")
    try:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        conn = client._conn
        assert conn is not None
        proc = conn.proc
    finally:
        t0 = time.monotonic()
        client.close()
    elapsed = time.monotonic() - t0
    assert elapsed < 8.0
    assert proc.returncode == -signal.SIGKILL
    assert proc_state(proc.pid) is None


# -- server -> client requests ------------------------------------------------------------


def test_sampling_handler_answer_reaches_server() -> None:
    calls: list[tuple[dict[str, Any], str]] = []

    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        calls.append((params, threading.current_thread().name))
        text = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": f"sampled: {text}"}}

    with client_for("sampling", on_sampling=on_sampling) as client:
        result = client.call_tool("echo", {"prompt": "Hi there"})
        assert (result.text, result.is_error) == ("sampled: Hi there", False)
        messages = received(client)
    assert len(calls) == 1
    params, thread_name = calls[0]
    assert params["maxTokens"] == 100
    assert params["messages"] == [{"role": "user",
                                   "content": {"type": "text", "text": "Hi there"}}]
    assert thread_name.startswith("mcp-proto-handler")
    assert initialize_of(messages)["params"]["capabilities"] == {"sampling": {}}
    assert responses_to(messages, "s-1") == [{"jsonrpc": "2.0", "id": "s-1", "result": {
        "role": "assistant", "model": "test-model",
        "content": {"type": "text", "text": "sampled: Hi there"}}}]


def test_sampling_handler_rejects() -> None:
    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcError(-1, "User rejected")

    with client_for("sampling", on_sampling=on_sampling) as client:
        result = client.call_tool("echo", {})
        assert (result.is_error, result.text) == (True, "User rejected")
        messages = received(client)
    assert responses_to(messages, "s-1") == [
        {"jsonrpc": "2.0", "id": "s-1", "error": {"code": -1, "message": "User rejected"}}]


def test_sampling_handler_crash_becomes_internal_error() -> None:
    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("boom")

    with client_for("sampling", on_sampling=on_sampling) as client:
        result = client.call_tool("echo", {})
        assert result.is_error
        assert result.text == "client handler failed: ValueError: boom"
        messages = received(client)
    assert responses_to(messages, "s-1")[0]["error"]["code"] == -32603


def test_sampling_without_handler_is_method_not_found() -> None:
    with client_for("sampling") as client:
        result = client.call_tool("echo", {})
        assert (result.is_error, result.text) == (True, "method not found: "
                                                        "sampling/createMessage")
        messages = received(client)
    assert initialize_of(messages)["params"]["capabilities"] == {}
    assert responses_to(messages, "s-1")[0]["error"]["code"] == -32601


def test_elicitation_handler() -> None:
    seen: list[dict[str, Any]] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    with client_for("elicitation", on_elicitation=on_elicitation) as client:
        result = client.call_tool("echo", {})
        assert result.text == '{"action": "accept", "content": {"name": "Ada"}}'
        messages = received(client)
    assert seen[0]["message"] == "What is your name?"
    assert seen[0]["requestedSchema"]["required"] == ["name"]
    assert initialize_of(messages)["params"]["capabilities"] == {"elicitation": {"form": {}}}
    assert responses_to(messages, "e-1")[0]["result"] == {"action": "accept",
                                                           "content": {"name": "Ada"}}


def test_elicitation_without_handler() -> None:
    with client_for("elicitation") as client:
        result = client.call_tool("echo", {})
        assert result.is_error and result.text == "method not found: elicitation/create"
        assert responses_to(received(client), "e-1")[0]["error"]["code"] == -32601


def test_blocking_handler_does_not_block_the_reader() -> None:
    release = threading.Event()
    entered = threading.Event()

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        release.wait(T)
        return {"action": "decline"}

    with client_for("elicitation", on_elicitation=on_elicitation) as client:
        pending = Background(lambda: client.call_tool("echo", {}))
        assert entered.wait(T)
        # The handler is blocked: other calls (and their responses) still flow.
        assert client.call_tool("received").text.startswith("[")
        assert pending.thread.is_alive()
        release.set()
        value, error = pending.outcome()
    assert error is None and value.text == '{"action": "decline"}'


def test_roots() -> None:
    roots = [Root("file:///tmp/project", "project")]
    with client_for("roots", roots=roots) as client:
        result = client.call_tool("echo", {})
        assert json.loads(result.text) == {"roots": [{"uri": "file:///tmp/project",
                                                      "name": "project"}]}
        messages = received(client)
    assert initialize_of(messages)["params"]["capabilities"] == {"roots": {"listChanged": True}}


def test_roots_callable_and_list_changed() -> None:
    current = [Root("file:///a")]
    with client_for("roots", roots=lambda: list(current)) as client:
        assert json.loads(client.call_tool("echo", {}).text) == {"roots": [{"uri": "file:///a"}]}
        current.append(Root("file:///b", "b"))
        client.notify_roots_changed()
        assert json.loads(client.call_tool("echo", {}).text) == {
            "roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}
        messages = received(client)
    assert {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"} in messages


def test_roots_without_roots_is_method_not_found() -> None:
    with client_for("roots") as client:
        result = client.call_tool("echo", {})
        assert result.is_error and result.text == "method not found: roots/list"


def test_unknown_server_request_is_method_not_found() -> None:
    with client_for("unknown-server-request", on_sampling=lambda p: {}) as client:
        assert client.call_tool("echo", {}).text == "-32601"
        messages = received(client)
    assert responses_to(messages, "u-1")[0]["error"]["code"] == -32601


def test_server_cancels_its_request() -> None:
    events: list[Any] = []
    release = threading.Event()

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        release.wait(T)
        return {"action": "accept", "content": {"name": "late"}}

    with client_for("server-cancel", on_elicitation=on_elicitation,
                    on_notification=events.append) as client:
        assert client.call_tool("echo", {}).text == "cancelled e-1"
        cancelled = [e for e in events if isinstance(e, ServerRequestCancelled)]
        assert cancelled == [ServerRequestCancelled(request_id="e-1",
                                                    reason="server changed its mind")]
        conn = client._conn
        assert conn is not None
        respond = conn.session.respond
        answered: list[bool] = []

        def spy(request_id: Any, result: dict[str, Any], **kwargs: Any) -> bool:
            sent = respond(request_id, result, **kwargs)
            answered.append(sent)
            return sent

        conn.session.respond = spy  # type: ignore[method-assign]
        release.set()
        assert wait_until(lambda: bool(answered), T), "the handler's answer never came back"
        assert answered == [False]  # nothing to send: the server withdrew the request
        messages = received(client)
    assert responses_to(messages, "e-1") == []  # no answer to a withdrawn request (C-03)


# -- notifications and progress -----------------------------------------------------------


def test_progress() -> None:
    seen: list[Progress] = []
    with client_for("progress") as client:
        result = client.call_tool("echo", {}, on_progress=seen.append)
        assert result.text == "progress-done"
        assert [(p.progress, p.total, p.message) for p in seen] == [
            (1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert len({p.handle for p in seen}) == 1
        # The late progress (4, after the result) is read before this answer, and dropped.
        assert client.call_tool("echo", {}).text == "progress-done"
        assert len(seen) == 3
        messages = received(client)
    calls = tool_calls(messages, "echo")
    assert calls[0]["params"]["_meta"] == {"progressToken": calls[0]["id"]}
    assert "_meta" not in calls[1]["params"]  # no callback: no token


def test_progress_callback_error_does_not_break_the_call() -> None:
    def boom(progress: Progress) -> None:
        raise RuntimeError("callback failed")

    with client_for("progress") as client:
        assert client.call_tool("echo", {}, on_progress=boom).text == "progress-done"
        assert client.call_tool("echo", {"text": "x"}).text == "progress-done"


def test_log_before_init() -> None:
    events: list[Any] = []
    with client_for("log-before-init", on_notification=events.append) as client:
        assert client.instructions == "scenario: log-before-init"
        assert LogMessage(level="info", data="log before initialize",
                          logger="scripted") in events
        messages = received(client)
    assert responses_to(messages, "srv-1") == [{"jsonrpc": "2.0", "id": "srv-1", "result": {}}]


def test_stray_notifications() -> None:
    events: list[Any] = []
    with client_for("stray-notifications", on_notification=events.append) as client:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert events == [
            ListChanged(kind="tools"),
            ResourceUpdated(uri="demo://never-subscribed"),
            # the completion of an elicitation never offered is ignored (F-05)
            OtherNotification(method="x/custom", params={"hello": "world"}),
        ]
        assert client._conn is not None
        assert client._conn.session.stats.progress_dropped == 1
        assert client._conn.session.stats.notifications_dropped == 1


def test_notification_callback_error_does_not_kill_the_reader() -> None:
    def boom(event: Any) -> None:
        raise RuntimeError("callback failed")

    with client_for("stray-notifications", on_notification=boom) as client:
        assert client.call_tool("echo", {"text": "one"}).text == "one"
        assert client.call_tool("echo", {"text": "two"}).text == "two"


def test_null_id_errors_are_bad_messages() -> None:
    events: list[Any] = []
    with client_for("null-id-error", on_notification=events.append) as client:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
    bad = [e for e in events if isinstance(e, BadMessage)]
    assert len(bad) == 2
    assert all(isinstance(e.error, RpcError) and e.error.code == -32700 for e in bad)
    assert [e for e in events if not isinstance(e, (BadMessage, Closed))] == []


def test_unknown_and_duplicate_responses_are_dropped() -> None:
    with client_for("unknown-response") as client:
        assert client.call_tool("echo", {"text": "a"}).text == "a"
        assert client.call_tool("echo", {"text": "b"}).text == "b"
        received(client)  # answered after both calls' extra responses
        assert client._conn is not None
        assert client._conn.session.stats.responses_dropped == 4


def test_batch_responses_in_2025_03_26() -> None:
    events: list[Any] = []
    with client_for("batch", on_notification=events.append) as client:
        assert client.protocol_version == "2025-03-26"
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert LogMessage(level="info", data="batched", logger="scripted") in events
        assert not any(isinstance(e, BadMessage) for e in events)


def test_infinite_pages_are_cut_off() -> None:
    with client_for("infinite-pages") as client:
        with pytest.raises(RemoteProtocolError, match="repeated the cursor"):
            client.list_tools()
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        messages = received(client)
    lists = [m for m in messages if m.get("method") == "tools/list"]
    assert [m.get("params") for m in lists] == [None, {"cursor": "same"}]


# -- handshake failures -------------------------------------------------------------------


def test_bad_version() -> None:
    client = client_for("bad-version")
    with pytest.raises(UnsupportedVersion) as info:
        client.connect()
    client.close()
    assert info.value.received == "1999-01-01"
    assert info.value.offered[0] == LATEST_HANDSHAKE_VERSION


def test_no_server_info() -> None:
    client = client_for("no-server-info")
    with pytest.raises(RemoteProtocolError, match="serverInfo"):
        client.connect()
    client.close()


def test_pinned_protocol_version_is_offered() -> None:
    with client_for(protocol_version="2025-06-18") as client:
        assert client.protocol_version == "2025-06-18"
        messages = received(client)
    assert messages[0]["params"]["protocolVersion"] == "2025-06-18"


def test_pinned_protocol_version_refuses_another() -> None:
    client = client_for("batch", protocol_version="2025-06-18")  # batch answers 2025-03-26
    with pytest.raises(UnsupportedVersion) as info:
        client.connect()
    client.close()
    assert (info.value.offered, info.value.received) == (("2025-06-18",), "2025-03-26")


def test_unknown_pinned_protocol_version() -> None:
    with pytest.raises(ValueError, match="1999-01-01"):
        client_for(protocol_version="1999-01-01")


def test_exit_on_probe_server_gets_initialize_first() -> None:
    with client_for("exit-on-probe") as client:
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        messages = received(client)
    assert messages[0]["method"] == "initialize"
