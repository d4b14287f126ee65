"""The Host in every runtime (threads, asyncio, trio): one scenario text each, run by
``_bindings.run`` with its leak checks (no task, thread or process outlives a run).

Servers: ``tests/servers/host_server.py`` (a small scripted server whose log shows every
request it ever received, one that dies on every N-th call, one that cannot start) for the
misbehaviour real servers don't produce on demand; server-everything, mcp-server-time,
mcp-server-git and the official SDK's server for the real-peer config.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run
from conftest import TESTS
from mcp_proto_io.host._threads import THREAD_JOIN
from mcp_proto_io.threads import connect_config

from mcp_proto import ConnectionClosed, ListChanged, LocalProtocolError, MCPError, ServerExited
from mcp_proto.host import (
    ConfigError,
    HostConfig,
    NamePolicy,
    RestartPolicy,
    ServerEvent,
    ServerSpec,
    ServerUnavailable,
    UnknownTool,
    parse_config,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

HOST_SERVER = str(TESTS / "servers" / "host_server.py")
#: A fast policy so the tests see several restarts in well under a second.
FAST = RestartPolicy(initial_delay=0.05, multiplier=2.0, max_delay=1.0, max_attempts=4,
                     stable_after=60.0)


def server(name: str, *args: str, **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=(sys.executable, HOST_SERVER, "--name", name, *args),
                      **fields)


def config(*specs: ServerSpec) -> HostConfig:
    return HostConfig(servers={s.name: s for s in specs})


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def text(result: Any) -> str:
    return str(result.content[0].text)


# -- restarts and no replay ---------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_crashing_server_restarts_by_policy_and_no_call_is_replayed(
        binding: str, tmp_path: Path) -> None:
    """A server that dies on every third call: the call in flight fails with ServerExited,
    the server is started again after 0.05, 0.1, 0.2 s (the policy; the counter is not reset
    by the handshakes), and at the fourth consecutive failure it is ``failed``.  Its own log
    shows every call's argument at most once (no replay) and one ``initialize`` per run."""
    log = tmp_path / "calls.jsonl"
    events: list[ServerEvent] = []

    async def scenario(b: Binding) -> None:
        cfg = config(server("crashy", "--die-on-call", "3", "--log", str(log)),
                     server("steady"))
        async with b.connect_config(cfg, restart=FAST, on_server_event=events.append) as host:
            outcomes: list[str] = []
            for i in range(20):
                try:
                    result = await host.call_tool("crashy__echo", {"text": f"call-{i}"},
                                                  timeout=10)
                    outcomes.append(text(result))
                except ServerExited as exc:
                    assert "dying on call 3" in exc.stderr_tail
                    outcomes.append("exited")
                except ServerUnavailable as exc:
                    assert exc.server == "crashy" and exc.state == "failed"
                    assert exc.retry_at is None and "code 7" in (exc.error or "")
                    outcomes.append("unavailable")
                    break
            assert outcomes == ["crashy:call-0", "crashy:call-1", "exited",
                                "crashy:call-3", "crashy:call-4", "exited",
                                "crashy:call-6", "crashy:call-7", "exited",
                                "crashy:call-9", "crashy:call-10", "exited", "unavailable"]
            status = host.servers()
            assert status["crashy"].state == "failed"
            assert status["crashy"].attempts == 4
            assert "dying on call 3" in status["crashy"].stderr_tail
            assert status["steady"].state == "running"  # one dead server fails nothing else
            assert text(await host.call_tool("steady__echo", {"text": "x"})) == "steady:x"
            # failed: not listed any more, and not restarted behind the host's back
            assert not any(t.server == "crashy" for t in await host.list_tools())
            # a restart by hand gives it a fresh schedule
            status_after = await host.restart_server("crashy")
            assert status_after.state == "running" and status_after.attempts == 0
            assert text(await host.call_tool("crashy__echo", {"text": "again"})) \
                == "crashy:again"

    run(binding, scenario)
    entries = read_log(log)
    calls = [e for e in entries if e["method"] == "tools/call"]
    texts = Counter(e["arguments"]["text"] for e in calls)
    assert max(texts.values()) == 1, texts  # no call ever reached the server twice
    assert len(calls) == 13  # 12 calls of the loop + "again": the unavailable one sent nothing
    per_process = Counter((e["pid"], e["id"]) for e in entries if e["id"] is not None)
    assert max(per_process.values()) == 1  # request ids never reused within a session
    inits = [e for e in entries if e["method"] == "initialize"]
    assert len(inits) == 5 == len({e["pid"] for e in entries})  # 4 runs + the manual restart
    crashy = [e for e in events if e.server == "crashy"]
    backoffs = [e for e in crashy if e.state == "backoff"]
    delays = [round(e.next_start_at - e.at, 3) for e in backoffs if e.next_start_at]
    assert delays == [0.05, 0.1, 0.2]
    assert [e.attempts for e in backoffs] == [1, 2, 3]
    failed = [e for e in crashy if e.state == "failed"]
    assert len(failed) == 1 and failed[0].attempts == 4


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_server_that_cannot_start_leaves_the_rest_usable(binding: str) -> None:
    """A missing executable and a server that exits at start, beside two good ones: both
    bad ones are ``failed`` with the error and stderr tail, the good ones work."""

    async def scenario(b: Binding) -> None:
        cfg = config(server("one"),
                     ServerSpec(name="missing", command=("/nonexistent/mcp-server-nope",)),
                     server("broken", "--fail-start"),
                     server("two"))
        async with b.connect_config(cfg, restart=FAST) as host:
            status = host.servers()
            assert status["missing"].state == "failed"
            assert "/nonexistent/mcp-server-nope" in (status["missing"].error or "")
            assert status["broken"].state == "failed"
            assert "missing token" in status["broken"].stderr_tail
            assert status["one"].state == status["two"].state == "running"
            names = [t.name for t in await host.list_tools()]
            assert names == ["one__add_tool", "one__echo", "one__whoami",
                             "two__add_tool", "two__echo", "two__whoami"]
            assert text(await host.call_tool("two__echo", {"text": "hi"})) == "two:hi"
            with pytest.raises(ServerUnavailable) as info:
                host.server("missing")
            assert info.value.state == "failed"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_backoff_call_waits_for_the_restart_or_says_when(binding: str,
                                                         tmp_path: Path) -> None:
    """A call to a server in backoff waits when the restart falls within its timeout and
    raises ServerUnavailable (with retry_at) when it does not; nothing is sent meanwhile."""
    log = tmp_path / "calls.jsonl"
    slow = RestartPolicy(initial_delay=0.3, max_attempts=5)

    async def scenario(b: Binding) -> None:
        cfg = config(server("s", "--die-on-call", "1", "--log", str(log)))
        async with b.connect_config(cfg, restart=slow) as host:
            with pytest.raises(ServerExited):
                await host.call_tool("s__echo", {"text": "dies"})
            assert host.servers()["s"].state == "backoff"
            with pytest.raises(ServerUnavailable) as info:
                await host.call_tool("s__echo", {"text": "too-soon"}, timeout=0.05)
            assert info.value.state == "backoff" and info.value.retry_at is not None
            # within the timeout: waits for the restart (and dies again: die-on-call 1)
            with pytest.raises(ServerExited):
                await host.call_tool("s__echo", {"text": "waited"}, timeout=10)

    run(binding, scenario)
    sent = [e["arguments"]["text"] for e in read_log(log) if e["method"] == "tools/call"]
    assert sent == ["dies", "waited"]


# -- names, filters, unknown tools ------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_names_do_not_depend_on_declaration_order(binding: str) -> None:
    """The same config in both orders: the same public names, routed to the same servers."""
    seen: list[list[tuple[str, str, str]]] = []

    async def scenario(b: Binding) -> None:
        specs = [server("alpha", "--tools", "echo,read"), server("beta", "--tools", "read,echo")]
        for order in (specs, specs[::-1]):
            async with b.connect_config(config(*order)) as host:
                tools = await host.list_tools()
                seen.append([(t.name, t.server, t.tool) for t in tools])
                assert text(await host.call_tool("beta__read", {"text": "q"})) == "beta:q"

    run(binding, scenario)
    assert seen[0] == seen[1]
    assert [n for n, _, _ in seen[0]] == ["alpha__echo", "alpha__read", "beta__echo",
                                          "beta__read"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_filters_and_unknown_names_send_nothing(binding: str, tmp_path: Path) -> None:
    """Excluded tools are neither listed nor callable; an unknown name raises UnknownTool
    with close matches; neither sends a tools/call."""
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = config(server("s", "--log", str(log), "--tools", "echo,delete_all,read",
                            exclude_tools=("delete_*",)))
        async with b.connect_config(cfg, names=NamePolicy(mode="collisions")) as host:
            assert [t.name for t in await host.list_tools()] == ["echo", "read"]
            with pytest.raises(UnknownTool):
                await host.call_tool("delete_all", {})
            with pytest.raises(UnknownTool) as info:
                await host.call_tool("ecko", {})
            assert "echo" in info.value.close_matches
            assert text(await host.call_tool("echo", {"text": "ok"})) == "s:ok"

    run(binding, scenario)
    calls = [e for e in read_log(log) if e["method"] == "tools/call"]
    assert [c["arguments"] for c in calls] == [{"text": "ok"}]
    # the unknown names were listed again once each, never called
    assert sum(1 for e in read_log(log) if e["method"] == "tools/list") >= 3


@pytest.mark.parametrize("binding", BINDINGS)
def test_list_changed_adds_a_tool(binding: str) -> None:
    """After ``tools/list_changed`` the host lists the server again: the new tool is public
    and callable; the host's on_notification sees the event with the server's name."""
    notes: list[tuple[str, str]] = []

    async def scenario(b: Binding) -> None:
        def on_notification(name: str, event: Any) -> None:
            if isinstance(event, ListChanged):
                notes.append((name, event.kind))

        async with b.connect_config(config(server("s")),
                                    on_notification=on_notification) as host:
            assert "s__extra" not in [t.name for t in await host.list_tools()]
            assert text(await host.call_tool("s__add_tool")) == "added"
            await b.wait_until(lambda: notes, 10)
            assert "s__extra" in [t.name for t in await host.list_tools()]
            assert text(await host.call_tool("s__extra", {"text": "new"})) == "s:new"

    run(binding, scenario)
    assert notes == [("s", "tools")]


@pytest.mark.parametrize("binding", BINDINGS)
def test_servers_start_concurrently(binding: str) -> None:
    """Ten slow servers: every start begins before the first finishes (the order of events,
    not a stopwatch: timing is for benchmarks/bench_host.py)."""
    events: list[ServerEvent] = []

    async def scenario(b: Binding) -> None:
        cfg = config(*(server(f"s{i}", "--slow-start", "0.3") for i in range(10)))
        async with b.connect_config(cfg, on_server_event=events.append) as host:
            assert all(s.state == "running" for s in host.servers().values())

    run(binding, scenario)
    states = [e.state for e in events]
    assert states[:10] == ["starting"] * 10
    assert states[10:20] == ["running"] * 10


# -- editing the set of servers -----------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_add_update_disable_enable_remove(binding: str) -> None:
    """add_server starts it; update_server swaps a running server for a new spec, and a new
    spec that fails to start leaves the old run in place; disable stops it and hides its
    tools; enable starts it again; remove forgets it."""

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config(server("base"))) as host:
            status = await host.add_server("extra", server("extra", "--tools", "echo"))
            assert status.state == "running"
            assert text(await host.call_tool("extra__echo", {"text": "1"})) == "extra:1"
            pid_before = text(await host.call_tool("base__whoami")).split()[1]
            # a failing update: the old spec and its process stay
            with pytest.raises(ServerExited):
                await host.update_server("base", server("base", "--fail-start"))
            assert host.servers()["base"].state == "running"
            assert text(await host.call_tool("base__whoami")).split()[1] == pid_before
            assert "--fail-start" not in host.config.servers["base"].command
            # a good update: a new process with the new spec
            await host.update_server("base", server("renamed-inside", "--tools", "whoami,ping"))
            who = text(await host.call_tool("base__whoami"))
            assert who.split()[0] == "renamed-inside" and who.split()[1] != pid_before
            assert "base__echo" not in [t.name for t in await host.list_tools()]
            assert host.config.servers["base"].name == "base"
            # disable / enable
            status = await host.disable_server("extra")
            assert status.state == "disabled"
            assert not host.config.servers["extra"].enabled
            with pytest.raises(ServerUnavailable) as unavailable:  # issue 23 item 7
                await host.call_tool("extra__echo", {"text": "2"})
            assert unavailable.value.state == "disabled"
            status = await host.enable_server("extra")
            assert status.state == "running"
            assert text(await host.call_tool("extra__echo", {"text": "3"})) == "extra:3"
            # remove
            removed = await host.remove_server("extra")
            assert removed.name == "extra"
            assert "extra" not in host.servers()
            with pytest.raises(ConfigError):
                await host.add_server("base", server("base"))

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_disabled_servers_start_nothing(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = config(server("on"), server("off", "--log", str(log), enabled=False))
        async with b.connect_config(cfg) as host:
            assert host.servers()["off"].state == "disabled"
            assert {t.server for t in await host.list_tools()} == {"on"}

    run(binding, scenario)
    assert not log.exists()


@pytest.mark.parametrize("binding", BINDINGS)
def test_server_handles_reach_one_server(binding: str) -> None:
    """``server(name)`` is the client of the current run; a stopped run's client is not
    reused after a restart (the host hands out the new one)."""

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config(server("s"))) as host:
            client = host.server("s")
            assert client.server_info.name == "s"
            await client.ping()
            await host.restart_server("s")
            assert host.server("s").raw is not client.raw if binding == "threads" \
                else host.server("s") is not client

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_save_config_round_trip_keeps_templates_and_unknown_keys(binding: str,
                                                                 tmp_path: Path) -> None:
    """Edit a running host's config (add, disable) and save it: written atomically in the
    file's own dialect, unknown keys and ``${VAR}`` templates kept, no expanded secret; read
    back it equals the host's config."""
    secret = "s3cr3t-value-91"
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({
        "mcpServers": {
            "one": {"command": sys.executable, "args": [HOST_SERVER, "--name", "one"],
                    "env": {"TOKEN": "${ONE_TOKEN}"}, "x-unknown": {"kept": True}},
        },
        "otherHostSetting": 42,
    }, indent=2))
    env = {"ONE_TOKEN": secret}
    saved: list[Any] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_config(str(path), env=env) as host:
            assert host.config.servers["one"].env == {"TOKEN": secret}
            await host.add_server("two", server("two", "--tools", "echo"))
            await host.disable_server("one")
            warnings = await host.save_config()
            assert warnings == ()
            saved.append(host.config)

    run(binding, scenario)
    text = path.read_text()
    assert secret not in text
    data = json.loads(text)
    assert data["otherHostSetting"] == 42
    assert data["mcpServers"]["one"]["env"] == {"TOKEN": "${ONE_TOKEN}"}
    assert data["mcpServers"]["one"]["x-unknown"] == {"kept": True}
    assert data["mcpServers"]["one"]["disabled"] is True
    assert list(data["mcpServers"]) == ["one", "two"]
    assert parse_config(text, path=str(path), env=env) == saved[0]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- found in review: each a regression test ------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_spec_the_client_refuses_fails_that_server_only(binding: str) -> None:
    """A URL the client refuses (a bad port) makes that server ``failed`` with a redacted
    message; the supervisor goes on and the other server runs.  A spec that cannot work at
    all (no command, an ftp URL) is a ConfigError before anything starts."""
    secret = "q-secret-4411"

    async def scenario(b: Binding) -> None:
        bad = ServerSpec(name="bad", transport="http",
                         url=f"http://127.0.0.1:99999/mcp?key={secret}")
        async with b.connect_config(config(bad, server("good"))) as host:
            status = host.servers()
            assert status["bad"].state == "failed"
            error = status["bad"].error or ""
            assert "bad URL" in error and "key=<redacted>" in error and secret not in error
            assert status["good"].state == "running"
            with pytest.raises(ConfigError) as info:
                await host.add_server("ftp", ServerSpec(name="ftp", transport="http",
                                                        url=f"ftp://h/?k={secret}"))
            assert "http:// or https://" in str(info.value) and secret not in str(info.value)
            assert "ftp" not in host.servers()
            with pytest.raises(ConfigError):
                await host.update_server("good", ServerSpec(name="good", command=()))
            assert text(await host.call_tool("good__echo", {"text": "still"})) == "good:still"
        with pytest.raises(ConfigError, match="needs a command"):
            b.connect_config(config(ServerSpec(name="empty")))

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_list_changed_during_the_start_is_not_lost(binding: str) -> None:
    """A server that changes its tools right after the first listing (while the host is
    still finishing the start, and while update_server's new run is on trial): the host
    lists it again and the new tool is public."""

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config(server("s", "--announce-after-list"))) as host:
            names = await b.poll(host.list_tools, lambda ts: "s__late" in [t.name for t in ts],
                                 10)
            assert "s__late" in [t.name for t in names]
            await host.update_server("s", server("s", "--announce-after-list", "--tools",
                                                 "echo"))
            names = await b.poll(host.list_tools, lambda ts: "s__late" in [t.name for t in ts],
                                 10)
            assert sorted(t.name for t in names) == ["s__echo", "s__late"]

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_failing_relisting_is_not_retried_in_a_loop(binding: str, tmp_path: Path) -> None:
    """After tools/list_changed, a server whose tools/list now fails keeps its last listing;
    the host does not ask again until the next change."""
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config(server("s", "--fail-relist", "--log",
                                                  str(log)))) as host:
            await host.call_tool("s__add_tool")  # sends list_changed; the relisting fails
            await b.sleep(0.5)
            assert [t.name for t in await host.list_tools()] == ["s__add_tool", "s__echo",
                                                                 "s__whoami"]

    run(binding, scenario)
    listings = sum(1 for e in read_log(log) if e["method"] == "tools/list")
    assert 2 <= listings <= 3, listings  # the start's, the failed one (and at most one more)


@pytest.mark.parametrize("binding", BINDINGS)
def test_close_and_remove_during_an_update_leave_nothing_behind(binding: str) -> None:
    """update_server's new run is still starting when the server is removed (the update
    fails, nothing is left running) or when the host closes (the leak checks of the run
    prove no process or thread stays)."""

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config(server("s"), server("t"))) as host:
            async with b.tasks() as tasks:
                job = tasks.spawn(host.update_server, "s",
                                  server("s", "--slow-start", "1.0"))
                await b.sleep(0.3)
                await host.remove_server("s")
                await job.wait()
            assert job.error is not None and "removed" in str(job.error)
            assert "s" not in host.servers()
            async with b.tasks() as tasks:
                job = tasks.spawn(host.update_server, "t",
                                  server("t", "--slow-start", "2.0"), name="update")
                await b.sleep(0.3)
                host.close()  # from another task (threads: from the loop's thread)
                await job.wait()
            assert isinstance(job.error, ConnectionClosed | LocalProtocolError), job.error

    run(binding, scenario)


def test_threads_host_closed_from_its_event_callback_does_not_wait_on_itself() -> None:
    """``close()`` from ``on_server_event`` returns at once: the host's threads wait to deliver
    their events until the callback returns, so joining them there could only run into the
    join bound (10 s a thread before this was fixed)."""
    closed = threading.Event()
    holder: dict[str, Any] = {}

    def on_event(event: Any) -> None:
        if event.state == "running" and "host" in holder and not closed.is_set():
            closed.set()
            began = time.monotonic()
            holder["host"].close()
            holder["took"] = time.monotonic() - began

    host = connect_config(config(*(server(f"s{i}") for i in range(4))),
                          on_server_event=on_event)
    holder["host"] = host
    try:
        with contextlib.suppress(MCPError):  # closed from the callback while it opened
            host.open()
        assert closed.is_set()
        # not a timing target: a join from the callback could only end by the join bound
        assert holder["took"] < THREAD_JOIN, "close() from the callback waited on its threads"
    finally:
        host.close()
