"""Testing without servers (issue 27), in the three runtimes: ``connect_memory`` to an
in-memory server, ``record=PATH`` and ``connect_replay(PATH)`` against real servers
(server-everything over stdio and HTTP, mcp-server-time, mcp-server-git, the official SDK's
server in both eras, an OAuth-protected server), divergences, a replayed crash and a replayed
slow answer, the Host with in-memory entries, ``mcp-proto --record`` and the pytest plugin.

Each real session is recorded once with the threads client, then replayed offline in every
runtime, and the results must be the ones the real server gave.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, T, run
from conftest import REPO, demo_command, demo_env, scripted_command, wait_until
from mcp_proto_io.threads import (
    connect_config,
    connect_http,
    connect_memory,
    connect_replay,
    connect_stdio,
)
from servers.auth_server import AuthServer
from test_auth_bindings import oauth

from mcp_proto import (
    ConnectionClosed,
    ListChanged,
    LogMessage,
    Progress,
    RequestTimeout,
    RpcError,
    ServerExited,
    TextContent,
)
from mcp_proto.host import RestartPolicy
from mcp_proto.testing import MemoryServer, ReplayDivergence, read_transcript

pytest_plugins = ["pytester"]


def texts(result: Any) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


def entries(path: Path, kind: str) -> list[Any]:
    return [e.data for e in read_transcript(path.read_bytes()).entries if e.kind == kind]


def replay_everywhere(path: Path, scenario: Any, **options: Any) -> list[Any]:
    """Run ``scenario(client)`` against the replay of ``path`` in every runtime; its results."""
    out: list[Any] = []

    async def play(b: Binding) -> None:
        async with b.connect_replay(path, **options) as c:
            out.append(await scenario(c))

    for binding in BINDINGS:
        run(binding, play)
    return out


# -- record real sessions, replay them offline --------------------------------------------------


async def everything_session(c: Any) -> Any:
    tools = sorted(t.name for t in await c.list_tools())
    echo = texts(await c.call_tool("echo", {"message": "hi"}))
    summed = texts(await c.call_tool("get-sum", {"a": 2, "b": 3}))
    seen: list[Progress] = []
    slow = texts(await c.call_tool("trigger-long-running-operation",
                                   {"duration": 0.3, "steps": 3}, on_progress=seen.append))
    doc = (await c.read_resource("demo://resource/static/document/features.md")).contents[0]
    prompt = await c.get_prompt("simple-prompt")
    return (tools, echo, summed, slow, [p.progress for p in seen], getattr(doc, "text", ""),
            [m.role for m in prompt.messages])


@pytest.mark.real_server
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_everything_recorded_then_replayed_in_every_runtime(
        transport: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    path = tmp_path / "everything.jsonl"
    target = request.getfixturevalue("everything_command" if transport == "stdio"
                                     else "everything_url")  # started outside the run

    async def record(b: Binding) -> None:
        client = b.connect_stdio(target, record=path) if transport == "stdio" \
            else b.connect_http(target, record=path)
        async with client as c:
            recorded.append(await everything_session(c))

    recorded: list[Any] = []
    run("threads", record)
    transcript = read_transcript(path.read_bytes())
    assert transcript.transport == transport and transcript.era == "legacy"
    if transport == "http":
        assert entries(path, "http"), "the exchanges' heads are recorded"
    assert replay_everywhere(path, everything_session) == recorded * len(BINDINGS)


@pytest.mark.real_server
def test_time_and_git_servers_recorded_then_replayed(time_command: list[str],
                                                     git_command: list[str],
                                                     tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    cases = [
        (time_command, "get_current_time", {"timezone": "Etc/UTC"}),
        (git_command, "git_status", {"repo_path": str(repo)}),
    ]
    for n, (command, tool, arguments) in enumerate(cases):
        path = tmp_path / f"s{n}.jsonl"
        with connect_stdio(command, record=path, timeout=T) as c:
            names = sorted(t.name for t in c.list_tools())
            first = texts(c.call_tool(tool, arguments))

        async def again(c: Any, tool: str = tool, arguments: dict[str, Any] = arguments
                        ) -> Any:
            return sorted(t.name for t in await c.list_tools()), texts(
                await c.call_tool(tool, arguments))

        assert replay_everywhere(path, again) == [(names, first)] * len(BINDINGS)


@pytest.mark.real_server
@pytest.mark.parametrize("era", ["2025-11-25", None])
def test_the_official_sdk_server_in_both_eras(era: str | None, sdk_server_command: list[str],
                                              tmp_path: Path) -> None:
    path = tmp_path / "sdk.jsonl"
    options = {} if era is None else {"protocol_version": era}
    with connect_stdio(sdk_server_command, record=path, timeout=T, **options) as c:
        recorded = (texts(c.call_tool("echo", {"text": "hi"})),
                    texts(c.call_tool("nope", {})),
                    c.read_resource("demo://a").contents[0])
    assert read_transcript(path.read_bytes()).era == ("legacy" if era else "modern")

    async def again(c: Any) -> Any:
        return (texts(await c.call_tool("echo", {"text": "hi"})),
                texts(await c.call_tool("nope", {})),
                (await c.read_resource("demo://a")).contents[0])

    assert replay_everywhere(path, again, **options) == [recorded] * len(BINDINGS)


def test_an_oauth_session_is_recorded_without_its_token_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "oauth.jsonl"
    with AuthServer() as srv:
        with connect_http(srv.mcp_url, auth=oauth(), timeout=T, record=path) as c:
            recorded = texts(c.call_tool("echo", {"text": "secret-free"}))
        tokens = list(srv.tokens)
    raw = path.read_text()
    assert tokens and not any(token in raw for token in tokens)
    assert [h["status"] for h in entries(path, "http")].count(401) >= 1
    assert all(h["headers"].get("authorization") in (None, "<redacted>")
               for h in entries(path, "http"))

    async def again(c: Any) -> Any:
        return texts(await c.call_tool("echo", {"text": "secret-free"}))

    assert replay_everywhere(path, again) == [recorded] * len(BINDINGS)


def test_the_clients_secrets_never_reach_the_transcript(tmp_path: Path) -> None:
    secret = "sk-test-abcdef123456"
    path = tmp_path / "demo.jsonl"
    with connect_stdio(demo_command(), env={**demo_env(), "DEMO_TOKEN": secret}, timeout=T,
                       record=path) as c:
        c.call_tool("echo", {"text": f"the token is {secret}"})
        assert path.read_text().count("\n") >= 4  # flushed as it goes: readable while open
    assert secret not in path.read_text()


# -- divergences ----------------------------------------------------------------------------


@pytest.fixture
def demo_transcript(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    with connect_stdio(demo_command(), env=demo_env(), timeout=T, record=path) as c:
        c.call_tool("add", {"a": 1, "b": 2})
        c.call_tool("echo", {"text": "x"})
    return path


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_changed_argument_fails_at_once_with_both_messages(binding: str,
                                                             demo_transcript: Path) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_replay(demo_transcript) as c:
            await c.call_tool("add", {"a": 1, "b": 2})
            with pytest.raises(ReplayDivergence) as info:
                await c.call_tool("echo", {"text": "y"})
            text = str(info.value)
            assert '"text":"x"' in text and '"text":"y"' in text
            assert "expected" in text and "actual" in text
            assert info.value.expected and info.value.actual["params"]["arguments"] == {
                "text": "y"}
            with pytest.raises(ServerExited):  # the played-back server is over
                await c.call_tool("add", {"a": 1, "b": 2})

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_extra_call_and_a_missing_one_are_divergences(binding: str,
                                                         demo_transcript: Path) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_replay(demo_transcript) as c:
            await c.call_tool("add", {"a": 1, "b": 2})
            await c.call_tool("echo", {"text": "x"})
            with pytest.raises(ReplayDivergence, match=r"expected: \(nothing\)|recording"):
                await c.call_tool("add", {"a": 9, "b": 9})  # nothing more was recorded
        async with b.connect_replay(demo_transcript) as c:
            await c.call_tool("add", {"a": 1, "b": 2})
            replay = (c.raw if hasattr(c, "raw") else c)._command.last
            [missing] = [e for e in replay.unmatched if e.data.get("method") == "tools/call"]
            assert missing.data["params"]["name"] == "echo"
            with pytest.raises(ReplayDivergence, match="echo"):
                replay.check_complete()

    run(binding, scenario)


# -- a replayed crash, a replayed slow answer ------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_recorded_crash_is_replayed_as_server_exited(binding: str, tmp_path: Path) -> None:
    path = tmp_path / "dying.jsonl"
    with connect_stdio(scripted_command("die-mid-call"), timeout=T, record=path) as c, \
            pytest.raises(ServerExited) as original:
        c.call_tool("echo", {"text": "x"})
    assert entries(path, "exit")[0]["code"] == original.value.exit_code == 3

    async def scenario(b: Binding) -> None:
        async with b.connect_replay(path) as c:
            with pytest.raises(ServerExited) as info:
                await c.call_tool("echo", {"text": "x"})
            assert not isinstance(info.value, ReplayDivergence)
            assert info.value.exit_code == 3 and "dying" in info.value.stderr_tail

    run(binding, scenario)


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_slow_answer_replayed_faithfully_times_out_as_it_would(
        binding: str, everything_command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "slow.jsonl"
    with connect_stdio(everything_command, timeout=T, record=path) as c:
        c.call_tool("trigger-long-running-operation", {"duration": 1.5, "steps": 1})

    async def scenario(b: Binding) -> None:
        async with b.connect_replay(path, speed=1.0) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("trigger-long-running-operation",
                                  {"duration": 1.5, "steps": 1}, timeout=0.5)
        async with b.connect_replay(path) as c:  # compressed: answered at once
            result = await c.call_tool("trigger-long-running-operation",
                                       {"duration": 1.5, "steps": 1}, timeout=0.5)
            assert "completed" in " ".join(texts(result))

    run(binding, scenario)


# -- the in-memory server ----------------------------------------------------------------------


def calculator() -> MemoryServer:
    server = MemoryServer("calc", instructions="adds things")

    @server.tool(description="Add two numbers")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Counts, reporting progress")
    def count(n: int, ctx: Any) -> str:
        for i in range(n):
            ctx.progress(i + 1, n)
        return f"counted {n}"

    @server.tool(description="Asks the client's model")
    def ask(question: str, ctx: Any) -> str:
        answer = ctx.sample({"messages": [{"role": "user", "content": {
            "type": "text", "text": question}}], "maxTokens": 5})
        return str(answer["content"]["text"])

    @server.tool(description="Fails")
    def boom() -> str:
        raise ValueError("it broke")

    @server.tool(description="An async handler")
    async def later(text: str) -> str:
        return text.upper()

    server.add_resource("memo://a", text="content of a", name="a")
    server.add_prompt("greet", lambda name: f"Hello {name}", description="Greets",
                      arguments=[{"name": "name", "required": True}])
    return server


def sampled(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "forty-two"},
            "model": "m", "stopReason": "endTurn"}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("era", [None, "2025-11-25"])
def test_an_in_memory_server_in_every_runtime(binding: str, era: str | None) -> None:
    server = calculator()
    options = {} if era is None else {"protocol_version": era}

    async def scenario(b: Binding) -> None:
        async with b.connect_memory(server, on_sampling=sampled, **options) as c:
            assert {"add", "count", "ask", "boom", "later"} <= {
                t.name for t in await c.list_tools()}
            assert texts(await c.call_tool("add", {"a": 2, "b": 3})) == ["5"]
            seen: list[Progress] = []
            assert texts(await c.call_tool("count", {"n": 3}, on_progress=seen.append)) == [
                "counted 3"]
            assert [p.progress for p in seen] == [1, 2, 3]
            failed = await c.call_tool("boom", {})
            assert failed.is_error and "it broke" in " ".join(texts(failed))
            assert texts(await c.call_tool("later", {"text": "hi"})) == ["HI"]
            assert (await c.read_resource("memo://a")).contents[0].text == "content of a"
            prompt = await c.get_prompt("greet", {"name": "Ann"})
            assert "Hello Ann" in prompt.messages[0].content.text
            asked = await c.call_tool("ask", {"question": "?"})
            if era is not None:  # the handshake era: the server asks, the host answers
                assert texts(asked) == ["forty-two"]
            else:  # 2026-07-28 has no server requests: the handler's refusal, named
                assert asked.is_error and "sampling" in " ".join(texts(asked))
            with pytest.raises(RpcError):
                await c.get_prompt("nope")

    run(binding, scenario)
    assert server.internal_errors == 0


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_host_config_names_an_in_memory_server(binding: str) -> None:
    config = {"mcpServers": {"calc": {"command": "memory:calc"},
                             "demo": {"command": demo_command()[0],
                                      "args": demo_command()[1:], "env": demo_env()}}}

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config, memory={"calc": calculator(),
                                                    "extra": calculator()}) as host:
            assert texts(await host.call_tool("calc__add", {"a": 1, "b": 1})) == ["2"]
            assert texts(await host.call_tool("extra__add", {"a": 2, "b": 2})) == ["4"]
            assert texts(await host.call_tool("demo__add", {"a": 3, "b": 3}))

    run(binding, scenario)


def test_a_memory_command_without_its_server_is_refused() -> None:
    with pytest.raises(ValueError, match="memory:calc"):
        connect_config({"mcpServers": {"calc": {"command": "memory:calc"}}})


def test_connect_memory_refuses_what_is_not_a_server() -> None:
    with pytest.raises(TypeError, match="MemoryServer"):
        connect_memory(object())


# -- the command and the pytest plugin -----------------------------------------------------


def test_mcp_proto_record_writes_a_transcript_the_replay_plays(tmp_path: Path) -> None:
    path = tmp_path / "cli.jsonl"
    done = subprocess.run([sys.executable, "-m", "mcp_proto_io", "call", "add", "--args",
                           '{"a": 20, "b": 22}', "--record", str(path), "--",
                           *demo_command()], env={**os.environ, **demo_env()}, cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    # replayed by a client made as the command makes its own (it declares URL elicitation)
    with connect_replay(path, timeout=T, on_url_elicitation=lambda e: "decline") as c:
        assert "42" in " ".join(texts(c.call_tool("add", {"a": 20, "b": 22})))


PLUGIN_TEST = '''
import sys
import pytest

DEMO = {demo!r}

def test_recorded(mcp_replay):
    client = mcp_replay("demo", command=DEMO, env={env!r})
    assert "5" in client.call_tool("add", {{"a": 2, "b": 3}}).content[0].text

def test_memory(mcp_memory):
    from mcp_proto.testing import MemoryServer
    server = MemoryServer("m")
    server.add_tool("hi", lambda: "hello")
    assert mcp_memory(server).call_tool("hi", {{}}).content[0].text == "hello"
'''


def test_the_pytest_plugin_records_then_replays(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plugin=PLUGIN_TEST.format(demo=demo_command(), env=demo_env()))
    recorded = pytester.runpytest_subprocess("--mcp-record", "-p", "no:cacheprovider")
    recorded.assert_outcomes(passed=2)
    transcript = pytester.path / "tests" / "transcripts" / "demo.jsonl"
    assert json.loads(transcript.read_text().splitlines()[0])["mcp_proto_transcript"] == 1
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=2)
    transcript.unlink()
    missing = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    missing.assert_outcomes(passed=1, failed=1)
    assert "--mcp-record" in missing.stdout.str()


# -- the in-memory server passes what the scripted server's client tests check ------------------


def scripted_twin() -> MemoryServer:
    """The scripted test server's default tools, in memory: ``echo``, a ``sleep`` that stops
    when cancelled, ``die`` (the server exits with code 3 and "dying" on stderr)."""
    server = MemoryServer("twin", protocol_versions=["2025-11-25"])

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def sleep(seconds: float, ctx: Any) -> str:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not ctx.cancelled:
            time.sleep(0.01)
        return "slept"

    @server.tool()
    def die() -> str:
        server.exit(3, "dying")
        return "never seen"

    return server


def calls_of(server: MemoryServer, name: str) -> list[dict[str, Any]]:
    return [m for m in server.received if isinstance(m, dict) and m.get("method") ==
            "tools/call" and m["params"]["name"] == name]


@pytest.mark.parametrize("binding", BINDINGS)
def test_memory_server_death_mid_call_then_next_call_works(binding: str) -> None:
    server = scripted_twin()

    async def scenario(b: Binding) -> None:
        async with b.connect_memory(server) as c:
            with pytest.raises(ServerExited) as info:
                await c.call_tool("die", {})
            assert info.value.exit_code == 3 and "dying" in info.value.stderr_tail
            assert (await c.call_tool("echo", {"text": "again"})).text == "again"

    run(binding, scenario)
    assert len(calls_of(server, "die")) == 1 and calls_of(server, "echo") == []  # a new one


@pytest.mark.parametrize("binding", BINDINGS)
def test_memory_server_timeout_then_client_still_usable(binding: str) -> None:
    server = scripted_twin()

    async def scenario(b: Binding) -> None:
        async with b.connect_memory(server) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("sleep", {"seconds": 5}, timeout=0.3)
            assert (await c.call_tool("echo", {"text": "after"})).text == "after"

    run(binding, scenario)
    [call] = calls_of(server, "sleep")
    cancels = [m["params"]["requestId"] for m in server.received
               if isinstance(m, dict) and m.get("method") == "notifications/cancelled"]
    assert cancels == [call["id"]]


@pytest.mark.parametrize("binding", BINDINGS)
def test_memory_server_20_pipelined_concurrent_calls(binding: str) -> None:
    server = scripted_twin()

    async def scenario(b: Binding) -> None:
        async with b.connect_memory(server) as c:
            results = await b.gather(*[
                (lambda i=i: c.call_tool("echo", {"text": f"m{i}"})) for i in range(20)])
            assert [r.text for r in results] == [f"m{i}" for i in range(20)]

    run(binding, scenario)
    ids = [m["id"] for m in calls_of(server, "echo")]
    assert len(ids) == len(set(ids)) == 20


@pytest.mark.parametrize("binding", BINDINGS)
def test_memory_server_close_from_another_task_fails_pending_calls(binding: str) -> None:
    server = scripted_twin()

    async def scenario(b: Binding) -> None:
        c = b.connect_memory(server)
        await c.connect()
        async with b.tasks() as tg:
            pending = [tg.spawn(c.call_tool, "sleep", {"seconds": 30}, name=f"sleep-{i}")
                       for i in range(3)]
            await b.wait_until(lambda: len(calls_of(server, "sleep")) == 3, 5.0)
            await tg.spawn(c.aclose, name="closer").result()
            for job in pending:
                await job.wait()
                assert isinstance(job.error, ConnectionClosed), (job.error, job.cancelled)
        with pytest.raises(ConnectionClosed):
            await c.call_tool("echo", {"text": "after close"})

    run(binding, scenario)


# -- after the review -----------------------------------------------------------------------------


def test_a_memory_server_serves_one_client_after_another() -> None:
    server = scripted_twin()
    for _ in range(3):
        with connect_memory(server, timeout=T) as c:
            assert c.call_tool("echo", {"text": "again"}).text == "again"


def test_a_config_entry_may_name_another_in_memory_server() -> None:
    with connect_config({"mcpServers": {"a": {"command": "memory:calc"}}},
                        memory={"calc": calculator()}, timeout=T) as host:
        assert texts(host.call_tool("a__add", {"a": 1, "b": 2})) == ["3"]


def test_secrets_redacted_in_the_recording_still_replay(tmp_path: Path) -> None:
    """What the recording hid (a credential-looking argument) matches whatever the
    replaying client sends there: the test runs again without the secret in the file."""
    path = tmp_path / "secret.jsonl"
    with connect_stdio(demo_command(), env=demo_env(), timeout=T, record=path) as c:
        c.call_tool("echo", {"text": "x", "api_key": "real-key-123456"})
    assert "real-key-123456" not in path.read_text()
    with connect_replay(path, timeout=T) as c:
        assert c.call_tool("echo", {"text": "x", "api_key": "other-key-654321"}).text


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_reconnection_is_recorded_and_replayed_run_after_run(binding: str,
                                                               tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    with connect_stdio(scripted_command("die-mid-call"), timeout=T, record=path) as c:
        with pytest.raises(ServerExited):
            c.call_tool("echo", {"text": "one"})
        with pytest.raises(ServerExited):
            c.call_tool("echo", {"text": "two"})
    assert len(entries(path, "exit")) == 2

    async def scenario(b: Binding) -> None:
        async with b.connect_replay(path) as c:
            for text in ("one", "two"):
                with pytest.raises(ServerExited) as info:
                    await c.call_tool("echo", {"text": text})
                assert not isinstance(info.value, ReplayDivergence), info.value

    run(binding, scenario)


def test_a_host_restart_records_a_file_of_its_own(tmp_path: Path) -> None:
    server = scripted_twin()
    with connect_config({"mcpServers": {}}, memory={"twin": server}, timeout=T,
                        record=tmp_path, restart=RestartPolicy(initial_delay=0.01)) as host:
        with pytest.raises(ServerExited):
            host.call_tool("twin__die", {})
        for _ in range(200):  # bounded: the restart is due in 10 ms
            try:
                assert host.call_tool("twin__echo", {"text": "back"}).text == "back"
                break
            except Exception:
                time.sleep(0.02)
    assert (tmp_path / "twin.jsonl").is_file() and (tmp_path / "twin-2.jsonl").is_file()
    assert entries(tmp_path / "twin.jsonl", "exit")[0]["code"] == 3


STUCK = """
import sys, threading
from mcp_proto.testing import MemoryServer
from mcp_proto_io.threads import connect_memory
server = MemoryServer("stuck")
def wait(ctx):
    threading.Event().wait()
server.add_tool("wait", wait)
client = connect_memory(server, timeout=0.5)
try:
    client.call_tool("wait", {})
except Exception as exc:
    print(type(exc).__name__)
client.close()
"""


def test_a_stuck_handler_does_not_hold_the_interpreters_exit() -> None:
    done = subprocess.run([sys.executable, "-c", STUCK], env={**os.environ, **demo_env()},
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and "RequestTimeout" in done.stdout, done.stderr[-2000:]


def test_descriptors_past_1024_are_watched() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:  # room for 1100 more descriptors, within what the system allows
        if hard != resource.RLIM_INFINITY and hard < 1200:
            pytest.skip(f"this machine allows {hard} open files; the test needs 1200")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with connect_memory(scripted_twin(), timeout=T) as c:
            assert c.call_tool("echo", {"text": "high"}).text == "high"
    finally:
        for fd in held:
            os.close(fd)


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("era", [None, "2025-11-25"])
def test_an_in_memory_task_in_every_runtime(binding: str, era: str | None) -> None:
    """A tool with task support runs as a task through the bindings (2026 extension, or
    2025-11-25 ``tasks/*``): the call polls it and ends with the handler's result."""
    server = MemoryServer("tasks")

    @server.tool(task_support="optional")
    def slow(steps: int, ctx: Any) -> str:
        for _ in range(steps):
            time.sleep(0.05)
        return f"done {steps} steps"

    @server.tool(task_support="required")
    def fails() -> None:
        raise RpcError(-32099, "refused")

    options = {} if era is None else {"protocol_version": era}
    seen: list[Any] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_memory(server, timeout=T, **options) as c:
            result = await c.call_tool("slow", {"steps": 3}, task=True,
                                       on_task_status=seen.append)
            assert texts(result) == ["done 3 steps"]
            with pytest.raises(RpcError) as info:
                await c.call_tool("fails", {})
            assert info.value.code == -32099

    run(binding, scenario)
    statuses = [e.task.status for e in seen]
    assert statuses[0] == "working" and statuses[-1] == "completed", statuses
    methods = {m.get("method") for m in server.received if isinstance(m, dict)}
    assert "tasks/get" in methods
    assert ("tasks/result" in methods) is (era is not None)
    assert server.internal_errors == 0


def test_what_a_test_tells_the_server_reaches_the_client_at_once() -> None:
    """``notify_tools_changed()`` and ``log()`` called from the test's own thread go out at
    once (the driver is woken), not with the client's next message."""
    server = scripted_twin()
    seen: list[Any] = []
    with connect_memory(server, timeout=T, on_notification=seen.append) as c:
        c.call_tool("echo", {"text": "ready"})
        server.notify_tools_changed()
        assert wait_until(lambda: any(isinstance(e, ListChanged) for e in seen), 5.0), seen
        server.log("info", "from the test")
        assert wait_until(lambda: any(isinstance(e, LogMessage) for e in seen), 5.0), seen
