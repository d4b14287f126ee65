"""The blocking binding in the 2026-07-28 (stateless) era, and the choice of era per server.

Servers: ``mcp-server-time`` and ``mcp-server-git`` (real, modern), ``server-everything``
(real, handshake era), ``tests/servers/sdk_server.py`` (the official SDK, both eras) and
``tests/servers/modern_scripted.py`` (scripted misbehaviour; its ``received`` tool shows every
message it read).  Rule ids refer to the spec checklist: 2.3 (V-xx), 3.3 (M-xx), 5.1 (S-02),
7 (MR-xx) and 8 (SB-xx).

Every blocking call has a deadline; the ``no_leaks`` fixture checks that no server process or
binding thread survives a test; an autouse fixture clears the era memory before each test.
"""

from __future__ import annotations

import io
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_proto_io._sync._stdio as threads_module
import pytest
from conftest import modern_command, proc_state, wait_until
from mcp_proto_io._era import DEFAULT_ERA_MEMORY, EraMemory, stdio_key
from mcp_proto_io._process import spawn as real_spawn
from mcp_proto_io.threads import Client, connect_stdio

from mcp_proto import (
    LATEST_HANDSHAKE_VERSION,
    TASKS_EXTENSION,
    BadMessage,
    Closed,
    Event,
    Implementation,
    Limits,
    ListChanged,
    MissingClientCapability,
    ReadResourceResult,
    RemoteProtocolError,
    ResourceUpdated,
    TextContent,
    TextResourceContents,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

T = 10.0  # default per-call deadline of these tests, seconds
MODERN = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
ELICIT_PARAMS = {"mode": "form", "message": "Name?",
                 "requestedSchema": {"type": "object",
                                     "properties": {"name": {"type": "string"}}}}


def modern_client(scenario: str = "default", **kwargs: Any) -> Client:
    kwargs.setdefault("timeout", T)
    return connect_stdio(modern_command(scenario), **kwargs)


def received(client: Client) -> list[dict[str, Any]]:
    """Every message the scripted server has read so far (this ``received`` call included)."""
    result = client.call_tool("received", timeout=T)
    assert not result.is_error
    messages: list[dict[str, Any]] = json.loads(result.text)
    return messages


def methods(messages: list[dict[str, Any]]) -> list[str | None]:
    return [m.get("method") for m in messages]


def requests(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if "method" in m and "id" in m]


def tool_calls(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("method") == "tools/call"
            and m.get("params", {}).get("name") == name]


def listens(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("method") == "subscriptions/listen"]


def resource_text(result: ReadResourceResult) -> str:
    [content] = result.contents
    assert isinstance(content, TextResourceContents)
    return content.text


class Answers:
    """An elicitation handler that gives the next canned answer and records what it was asked
    (it runs on a handler thread; list.append is atomic)."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return self.answers[min(len(self.asked), len(self.answers)) - 1]


ACCEPT_ADA = {"action": "accept", "content": {"name": "Ada"}}


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every server process the binding starts during the test, in order."""
    procs: list[subprocess.Popen[bytes]] = []

    def recording(*args: Any, **kwargs: Any) -> tuple[subprocess.Popen[bytes], Any]:
        proc, witness = real_spawn(*args, **kwargs)
        procs.append(proc)
        return proc, witness

    monkeypatch.setattr(threads_module, "spawn", recording)
    yield procs


# -- real servers ------------------------------------------------------------------------------


@pytest.mark.real_server
def test_time_server_is_modern(time_command: list[str]) -> None:
    # 2.3: the probe is answered with a DiscoverResult, so the session is stateless.
    with connect_stdio(time_command, timeout=T) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info.name == "mcp-time"
        assert {"get_current_time", "convert_time"} <= {t.name for t in client.list_tools()}
        now = client.call_tool("get_current_time", {"timezone": "Etc/UTC"})
        assert not now.is_error
        assert json.loads(now.text)["timezone"] == "Etc/UTC"
        converted = client.call_tool("convert_time", {
            "source_timezone": "Etc/UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
        assert not converted.is_error
        assert json.loads(converted.text)["target"]["datetime"][11:16] == "21:00"


@pytest.mark.real_server
def test_git_server_is_modern(git_command: list[str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30,
                   capture_output=True)
    (repo / "untracked-file.txt").write_text("hello\n")
    with connect_stdio([*git_command, "--repository", str(repo)], timeout=T) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info.name == "mcp-git"
        tools = {t.name: t for t in client.list_tools()}
        assert {"git_status", "git_log", "git_diff_unstaged"} <= tools.keys()
        assert tools["git_status"].input_schema["required"] == ["repo_path"]
        status = client.call_tool("git_status", {"repo_path": str(repo)})
        assert not status.is_error
        assert "untracked-file.txt" in status.text


@pytest.mark.real_server
def test_everything_falls_back_to_handshake(everything_command: list[str],
                                           spawned: list[Any]) -> None:
    # 2.3: a handshake-era server answers the probe with an error: initialize on the same
    # process (it did not die: one process only).
    with connect_stdio(everything_command, timeout=20.0) as client:
        assert client.era == "legacy"
        assert client.protocol_version == LATEST_HANDSHAKE_VERSION
        assert client.server_info.name == "mcp-servers/everything"
        assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        client.ping()
    assert len(spawned) == 1


# -- the official SDK server (both eras) ----------------------------------------------------------


def test_sdk_server_modern(sdk_server_command: list[str]) -> None:
    with connect_stdio(sdk_server_command, timeout=T) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info == Implementation(name="sdk-server", version="1.0.0")
        assert client.capabilities["tools"] == {"listChanged": True}
        assert client.call_tool("echo", {"text": "héllo ✓"}).text == "héllo ✓"
        assert resource_text(client.read_resource("demo://a")) == "content of a"
        [message] = client.get_prompt("greet", {"name": "Ada"}).messages
        assert isinstance(message.content, TextContent)
        assert (message.role, message.content.text) == ("user", "Please greet Ada.")
        # M-03: no elicitation handler, so the capability was not declared.
        with pytest.raises(MissingClientCapability) as info:
            client.call_tool("ask_name")
        assert info.value.code == -32021
        assert info.value.required_capabilities == {"elicitation": {"form": {}}}
        assert client.call_tool("echo", {"text": "after"}).text == "after"


@pytest.mark.parametrize(("pin", "era", "version"), [
    (None, "modern", MODERN),
    ("2025-11-25", "legacy", "2025-11-25"),
])
def test_sdk_server_elicitation_parity(sdk_server_command: list[str], pin: str | None,
                                       era: str, version: str) -> None:
    # Section 7 / 6: the same handler answers an MRTR input request (stateless era) and an
    # elicitation/create server request (handshake era), with the same results.
    handler = Answers(ACCEPT_ADA, {"action": "decline"}, {"action": "cancel"})
    with connect_stdio(sdk_server_command, timeout=T, protocol_version=pin,
                       on_elicitation=handler) as client:
        assert (client.era, client.protocol_version) == (era, version)
        got = [client.call_tool("ask_name") for _ in range(3)]
    assert [(r.text, r.is_error) for r in got] == [
        ("hello Ada", False), ("declined", False), ("cancelled", False)]
    assert len(handler.asked) == 3
    for params in handler.asked:
        assert params["message"] == "What is your name?"
        assert params.get("mode", "form") == "form"
        assert params["requestedSchema"]["properties"]["name"]["type"] == "string"


def test_sdk_server_subscription_and_list_changed(sdk_server_command: list[str]) -> None:
    # SB-01..03: one listen carries both kinds; the events are the handshake era's.
    # S-02: tools/list has ttlMs 60000 here, so only the list_changed can make the new tool
    # appear in the second listing.
    events: list[Event] = []
    with connect_stdio(sdk_server_command, timeout=T, on_notification=events.append) as client:
        assert client.era == "modern"
        client.subscribe("demo://a")
        assert client.call_tool("touch", {"uri": "demo://a"}).text == "touched"
        assert wait_until(lambda: ResourceUpdated(uri="demo://a") in events, 5.0)
        before = [t.name for t in client.list_tools()]
        assert [t.name for t in client.list_tools()] == before
        assert "newt" not in before
        assert client.call_tool("add_tool", {"name": "newt"}).text == "added newt"
        assert wait_until(lambda: ListChanged(kind="tools") in events, 5.0)
        assert [t.name for t in client.list_tools()] == [*before, "newt"]
        assert client.call_tool("newt").text == "I am newt"
        assert events == [ResourceUpdated(uri="demo://a"), ListChanged(kind="tools")]


# -- the scripted modern server ----------------------------------------------------------------


def test_modern_envelope_on_every_request() -> None:
    info = Implementation(name="host", version="9")
    with modern_client(client_info=info) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info == Implementation(name="modern-scripted", version="1.0.0")
        assert client.capabilities["resources"] == {"subscribe": True, "listChanged": True}
        assert [t.name for t in client.list_tools()] == [
            "echo", "received", "ask", "touch", "change_tools", "hang"]
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert resource_text(client.read_resource("demo://a")) == "content of a"
        client.ping()  # 4.5: no ping in 2026-07-28; a server/discover stands in for it
        messages = received(client)
    # V-12 / 2.3: the probe first, no initialize at all.
    assert messages[0]["method"] == "server/discover" and messages[0]["id"] == 1
    assert "initialize" not in methods(messages) and "ping" not in methods(messages)
    assert methods(requests(messages)) == [
        "server/discover", "subscriptions/listen", "tools/list", "tools/call", "resources/read",
        "server/discover", "tools/call"]
    # M-01: every request carries the envelope, clientInfo included.
    for m in requests(messages):
        meta = m["params"]["_meta"]
        assert meta[PV] == MODERN, m
        assert meta[CAPS] == {"extensions": {TASKS_EXTENSION: {}}}, m  # TX-01
        assert meta[INFO] == {"name": "host", "version": "9"}, m
    # SB-01: the listen asks for what the server can announce.
    [listen] = listens(messages)
    assert listen["params"]["notifications"] == {"toolsListChanged": True,
                                                 "resourcesListChanged": True}


def test_mrtr_round_trip() -> None:
    # Section 7: retry with a new id, the same params, inputResponses and the exact state.
    handler = Answers(ACCEPT_ADA)
    with modern_client(on_elicitation=handler) as client:
        assert client.call_tool("ask", {"lang": "en"}).text == "hi Ada"
        messages = received(client)
    assert handler.asked == [ELICIT_PARAMS]
    first, retry = tool_calls(messages, "ask")
    assert "requestState" not in first["params"] and "inputResponses" not in first["params"]
    assert retry["id"] != first["id"]
    assert retry["params"]["requestState"] == "opaque-state-1"  # MR-01: untouched
    assert retry["params"]["inputResponses"] == {"q1": ACCEPT_ADA}
    own = ("_meta", "requestState", "inputResponses")
    assert {k: v for k, v in retry["params"].items() if k not in own} == {
        k: v for k, v in first["params"].items() if k != "_meta"}
    assert first["params"]["arguments"] == {"lang": "en"}
    assert retry["params"]["_meta"][PV] == MODERN
    assert retry["params"]["_meta"][CAPS] == {"elicitation": {"form": {}},
                                                "extensions": {TASKS_EXTENSION: {}}}


def test_silent_server_falls_back_fast() -> None:
    # 2.3: no reply to the probe within Limits.probe_fallback (0.5 s): initialize as well.
    t0 = time.monotonic()
    with modern_client("silent") as client:
        elapsed = time.monotonic() - t0
        print(f"connect to a silent handshake-era server: {elapsed:.3f} s")
        assert (client.era, client.protocol_version) == ("legacy", LATEST_HANDSHAKE_VERSION)
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        messages = received(client)
    assert elapsed < 3.0  # target < 1 s
    assert methods(messages)[:3] == ["server/discover", "initialize", "notifications/initialized"]


def test_pre_ga_error_code_falls_back_at_once() -> None:
    # V-22: -32004 is the pre-GA UnsupportedVersion code: unrecognised, so initialize follows
    # (no -32022 retry).  The fallback timer is set far away: only the error can trigger it.
    with modern_client("rc-codes", timeout=5.0,
                       limits=Limits(probe_fallback=60.0)) as client:
        assert (client.era, client.protocol_version) == ("legacy", LATEST_HANDSHAKE_VERSION)
        messages = received(client)
    assert methods(messages)[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert methods(messages).count("server/discover") == 1


def test_probe_death_restarts_in_handshake_era(spawned: list[subprocess.Popen[bytes]]) -> None:
    # V-23: the first process exits on the probe; a new one is started with initialize.
    with modern_client("die-on-probe") as client:
        assert (client.era, client.protocol_version) == ("legacy", LATEST_HANDSHAKE_VERSION)
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        messages = received(client)
        assert len(spawned) == 2
        assert client.pid == spawned[1].pid
        first = spawned[0]
        assert wait_until(lambda: first.returncode is not None, 5.0)
        assert first.returncode == 1
        assert wait_until(lambda: proc_state(first.pid) is None, 5.0), "not reaped"
    assert methods(messages) == ["initialize", "notifications/initialized", "tools/call",
                                 "tools/call"]


def test_probe_death_is_not_reported_to_the_host() -> None:
    events: list[Event] = []
    with modern_client("die-on-probe", on_notification=events.append) as client:
        assert client.era == "legacy"
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        assert [e for e in events if isinstance(e, Closed)] == []


def test_unsupported_version_is_retried_not_downgraded() -> None:
    # V-11 / 2.3: -32022 is a modern error: retry with a new id, never initialize.
    with modern_client("unsupported-first") as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        messages = received(client)
    discovers = [m for m in messages if m.get("method") == "server/discover"]
    assert len(discovers) == 2
    assert discovers[0]["id"] != discovers[1]["id"]
    assert discovers[1]["params"]["_meta"][PV] == MODERN
    assert "initialize" not in methods(messages)


def test_unknown_result_type_fails_that_call_only() -> None:
    # M-07: an unrecognised resultType makes the response invalid.
    with modern_client("unknown-result-type") as client:
        with pytest.raises(RemoteProtocolError, match="weird"):
            client.call_tool("echo", {"text": "x"})
        assert "echo" in {t.name for t in client.list_tools()}
        messages = received(client)
    assert len(tool_calls(messages, "echo")) == 1  # not retried


@pytest.mark.parametrize(("limits", "rounds"), [(None, 8), (Limits(max_input_rounds=3), 3)])
def test_mrtr_loop_is_bounded(limits: Limits | None, rounds: int) -> None:
    # Section 7: "client SHOULD bound loops" (Limits.max_input_rounds, default 8).
    handler = Answers(ACCEPT_ADA)
    with modern_client("mrtr-forever", on_elicitation=handler, limits=limits) as client:
        with pytest.raises(RemoteProtocolError, match=f"after {rounds} rounds"):
            client.call_tool("ask")
        assert client.call_tool("echo", {"text": "next"}).text == "next"
        messages = received(client)
    assert len(handler.asked) == rounds
    calls = tool_calls(messages, "ask")
    assert len(calls) == rounds + 1
    assert len({c["id"] for c in calls}) == len(calls)
    for n, retry in enumerate(calls[1:], start=1):
        assert retry["params"]["requestState"] == f"forever-{n}"
        assert list(retry["params"]["inputResponses"]) == [f"q{n}"]


def test_mrtr_without_input_requests_retries_at_once() -> None:
    # Section 7: input_required without inputRequests (load shedding): retry with the state.
    handler = Answers(ACCEPT_ADA)
    with modern_client("mrtr-no-requests", on_elicitation=handler) as client:
        assert client.call_tool("ask").text == "ok"
        messages = received(client)
    assert handler.asked == []
    first, retry = tool_calls(messages, "ask")
    assert retry["id"] != first["id"]
    assert retry["params"]["requestState"] == "s1"
    assert "inputResponses" not in retry["params"]


def test_narrow_ack_fails_subscribe() -> None:
    # SB-02: the acknowledgement did not include the resource.
    with modern_client("narrow-ack") as client:
        with pytest.raises(RemoteProtocolError, match=r"demo://a"):
            client.subscribe("demo://a")
        assert client.call_tool("echo", {"text": "x"}).text == "x"


def test_interleaved_notifications_are_demultiplexed() -> None:
    # SB-03: a notification for another subscription (sent before our ack) is dropped.
    events: list[Event] = []
    with modern_client("interleaved", on_notification=events.append) as client:
        assert wait_until(lambda: bool(events), 5.0)
        time.sleep(0.3)  # room for a wrongly delivered second event to show up
        assert events == [ListChanged(kind="tools")]
        assert client._conn is not None
        assert client._conn.session.stats.notifications_dropped == 1


def test_server_teardown_of_listen() -> None:
    # SB-04: the server ends the listen with notifications/cancelled: no crash, no cancel of
    # our own for it, later calls (and a new listen) work.
    events: list[Event] = []
    with modern_client("server-teardown", on_notification=events.append) as client:
        time.sleep(0.4)  # the server tears the listen down 0.1 s after its ack
        assert client.call_tool("echo", {"text": "x"}).text == "x"
        client.subscribe("demo://a")
        assert client.call_tool("echo", {"text": "y"}).text == "y"
        messages = received(client)
    assert len(listens(messages)) == 2
    assert "notifications/cancelled" not in methods(messages)
    assert [e for e in events if isinstance(e, BadMessage)] == []


def test_list_ttl_is_honoured_and_invalidated() -> None:
    # S-02: a fresh list is served from the cache; list_changed drops it.
    events: list[Event] = []
    with modern_client("list-ttl", on_notification=events.append) as client:
        first = client.list_tools()
        assert client.list_tools() == first
        assert methods(received(client)).count("tools/list") == 1
        assert client.call_tool("change_tools").text == "changed"
        assert wait_until(lambda: ListChanged(kind="tools") in events, 5.0)
        assert client.list_tools() == first
        assert methods(received(client)).count("tools/list") == 2


def test_resource_updated_and_resubscription() -> None:
    # SB-01/SB-04: subscribe re-opens the listen with the resource (the old one is
    # cancelled); the update arrives as ResourceUpdated; unsubscribe re-opens without it.
    events: list[Event] = []
    with modern_client("resource-updated", on_notification=events.append) as client:
        client.subscribe("demo://a")
        assert wait_until(lambda: ResourceUpdated(uri="demo://a") in events, 5.0)
        client.unsubscribe("demo://a")
        messages = received(client)
        assert events == [ResourceUpdated(uri="demo://a")]
    opened = listens(messages)
    assert [m["params"]["notifications"].get("resourceSubscriptions") for m in opened] == [
        None, ["demo://a"], None]
    cancelled = [m["params"]["requestId"] for m in messages
                 if m.get("method") == "notifications/cancelled"]
    assert cancelled == [opened[0]["id"], opened[1]["id"]]


# -- era memory (V-20) -------------------------------------------------------------------------


def test_era_memory_skips_the_probe(tmp_path: Path) -> None:
    with modern_client() as client:
        assert client.era == "modern"
    with modern_client() as client:  # the same command: the DiscoverResult is reused
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        assert client.server_info.name == "modern-scripted"
        again = received(client)
    # No probe before use; its DiscoverResult said ttlMs 0, so it is refreshed in the
    # background (S-02), after the listen, not waited for.
    assert methods(again)[:2] == ["subscriptions/listen", "server/discover"]
    assert methods(again).count("server/discover") == 1
    with modern_client(env={"MCP_PROTO_TEST_ERA": "1"}) as client:  # another env: probe
        assert methods(received(client))[0] == "server/discover"
    with modern_client(cwd=tmp_path) as client:  # another cwd: probe
        assert methods(received(client))[0] == "server/discover"


def test_era_memory_with_a_fresh_discovery_sends_nothing() -> None:
    """V-20 + S-02: a remembered DiscoverResult still within its ttlMs needs no request."""
    with modern_client("list-ttl") as client:
        assert client.era == "modern"
    with modern_client("list-ttl") as client:
        assert client.era == "modern"
        again = received(client)
    assert "server/discover" not in methods(again)


def test_era_memory_for_handshake_servers(spawned: list[Any]) -> None:
    with modern_client("silent") as client:
        assert client.era == "legacy"
    t0 = time.monotonic()
    with modern_client("silent") as client:  # straight to initialize, no 0.5 s wait
        print(f"second connect to a silent server: {time.monotonic() - t0:.3f} s")
        assert client.era == "legacy"
        assert methods(received(client))[0] == "initialize"
    with modern_client("die-on-probe") as client:
        assert client.era == "legacy"
    with modern_client("die-on-probe") as client:  # no probe, so no death and no restart
        assert client.era == "legacy"
        assert methods(received(client))[0] == "initialize"
    assert len(spawned) == 2 + 2 + 1


def test_private_era_memory() -> None:
    memory = EraMemory()
    with modern_client(era_memory=memory) as client:
        assert client.era == "modern"
    assert DEFAULT_ERA_MEMORY.recall(stdio_key(modern_command(), None, None)) == ("auto", None)
    with modern_client() as client:  # the default memory knows nothing of it: probe
        assert methods(received(client))[0] == "server/discover"
    memory.clear()
    with modern_client(era_memory=memory) as client:
        assert methods(received(client))[0] == "server/discover"
    with modern_client(era_memory=memory) as client:
        assert methods(received(client))[0] != "server/discover"  # no probe first


def test_pinned_connection_does_not_decide_the_era_of_others(
        sdk_server_command: list[str]) -> None:
    with connect_stdio(sdk_server_command, timeout=T, protocol_version="2025-11-25") as client:
        assert client.era == "legacy"
    with connect_stdio(sdk_server_command, timeout=T) as client:
        assert client.era == "modern"


def test_pinned_handshake_version_sends_no_probe() -> None:
    t0 = time.monotonic()
    with modern_client("silent", protocol_version="2025-06-18") as client:
        elapsed = time.monotonic() - t0
        assert (client.era, client.protocol_version) == ("legacy", "2025-06-18")
        messages = received(client)
    assert methods(messages)[0] == "initialize"
    assert messages[0]["params"]["protocolVersion"] == "2025-06-18"
    assert "server/discover" not in methods(messages)
    assert elapsed < 3.0


# -- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize(("scenario", "heading"), [
    ("default", "# modern-scripted 1.0.0 - MCP 2026-07-28 (stateless)"),
    ("rc-codes", "# modern-scripted 1.0.0 - MCP 2025-11-25 (handshake)"),
])
def test_cli_heading_shows_the_era(scenario: str, heading: str) -> None:
    """The one-server table's heading names the era; it is printed for a terminal only
    (issue 23: a pipe gets the rows alone), so stdout here says it is one."""
    from mcp_proto_io.cli import main  # noqa: PLC0415 - the command, in this process

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    code = main(["tools", "--timeout", str(T), "--", *modern_command(scenario)], out=out)
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == heading
    assert [line.split()[0] for line in lines[1:3]] == ["echo", "received"]
