"""The model-facing side of the Host: provider tool definitions, argument fixes, and the
meta-tools (``mcp_list``, ``mcp_call``, ``mcp_request``), pure and in every runtime."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run
from conftest import TESTS

from mcp_proto import LocalProtocolError, Tool
from mcp_proto.host import (
    META_TOOLS,
    TOOL_TARGETS,
    HostConfig,
    HostCore,
    MetaToolError,
    NamePolicy,
    ServerSpec,
    normalize_schema,
    parse_meta_call,
    tool_definition,
)

HOST_SERVER = str(TESTS / "servers" / "host_server.py")
SERVERS = ("alpha", "beta")


def server(name: str, *args: str, **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=(sys.executable, HOST_SERVER, "--name", name, *args),
                      **fields)


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- tool definitions, pure ------------------------------------------------------------------

TOOL = Tool(name="search", description="Search things.", input_schema={
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["q"]})


def test_each_target_has_its_wire_shape() -> None:
    shapes = {target: tool_definition(TOOL, target, name="srv__search")
              for target in TOOL_TARGETS}
    chat = shapes["openai-strict"]
    assert chat["type"] == "function" and chat["function"]["name"] == "srv__search"
    assert chat["function"]["strict"] is True
    assert chat["function"]["parameters"]["additionalProperties"] is False
    assert "strict" not in shapes["openai"]["function"]
    responses = shapes["openai-responses-strict"]
    assert (responses["type"], responses["name"], responses["strict"]) == (
        "function", "srv__search", True)
    assert set(shapes["anthropic"]) == {"name", "description", "input_schema"}
    assert "parametersJsonSchema" in shapes["gemini"]
    assert "parameters" in shapes["gemini-openapi"]
    for target in TOOL_TARGETS:
        json.dumps(shapes[target])
    with pytest.raises(ValueError, match="unknown target"):
        tool_definition(TOOL, "mistral")


def test_meta_tool_definitions_pass_every_target() -> None:
    for target in TOOL_TARGETS:
        for tool in META_TOOLS.values():
            definition = tool_definition(tool, target)
            json.dumps(definition)
    strict = {name: normalize_schema(t.input_schema, "openai-strict")
              for name, t in META_TOOLS.items()}
    assert strict["mcp_list"].strict and strict["mcp_request"].strict is False
    assert strict["mcp_call"].strict is False  # its arguments are an open object
    assert any(n.kind == "not-strict" for n in strict["mcp_call"].notes)


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("mcp_call", {"tool": "x"}, "'server' must be a non-blank string"),
    ("mcp_call", {"server": "nope", "tool": "x"}, "no server is named 'nope'"),
    ("mcp_call", {"server": "alpha", "tool": " "}, "'tool' must be a non-blank string"),
    ("mcp_call", {"server": "alpha", "tool": "x" * 201}, "longer than 200"),
    ("mcp_call", {"server": "alpha", "tool": "x", "arguments": [1]}, "must be an object"),
    ("mcp_call", {"server": "alpha", "tool": "x", "timeoutSeconds": 0}, "from 1 to 300"),
    ("mcp_call", {"server": "alpha", "tool": "x", "timeoutSeconds": 301}, "from 1 to 300"),
    ("mcp_call", {"server": "alpha", "tool": "x", "timeoutSeconds": 2.5}, "from 1 to 300"),
    ("mcp_call", {"server": "alpha", "tool": "x", "timeoutSeconds": True}, "from 1 to 300"),
    ("mcp_call", {"server": "alpha", "tool": "x", "extra": 1}, "unknown argument 'extra'"),
    ("mcp_list", {"action": "close"}, "needs 'server'"),
    ("mcp_list", {"action": "drop", "server": "alpha"}, "'action' must be"),
    ("mcp_request", {"server": "alpha"}, "'method' must be a non-blank string"),
])
def test_meta_calls_are_checked_before_any_request(name: str, arguments: dict[str, Any],
                                                   message: str) -> None:
    with pytest.raises(MetaToolError, match=message):
        parse_meta_call(name, arguments, SERVERS)


def test_meta_calls_say_what_to_do() -> None:
    assert parse_meta_call("mcp_list", None, SERVERS).kind == "servers"
    listed = parse_meta_call("mcp_list", {"server": "beta", "timeoutSeconds": 5}, SERVERS)
    assert (listed.kind, listed.server, listed.timeout) == ("tools", "beta", 5.0)
    assert parse_meta_call("mcp_list", {"server": "beta", "action": "close"},
                           SERVERS).kind == "close"
    call = parse_meta_call("mcp_call", {"server": "alpha", "tool": "echo",
                                        "arguments": {"text": "x"}}, SERVERS)
    assert (call.kind, call.tool, call.arguments, call.timeout) == (
        "call", "echo", {"text": "x"}, None)
    request = parse_meta_call("mcp_request", {"server": "alpha", "method": "tools/list"},
                              SERVERS)
    assert (request.kind, request.method, request.arguments) == ("request", "tools/list", {})
    with pytest.raises(KeyError):
        parse_meta_call("mcp_delete", {}, SERVERS)


# -- through the Host, in every runtime ---------------------------------------------------------


def _text(content: Any) -> str:
    """The text of an Anthropic-shaped provider content (a list of blocks)."""
    return "".join(b.get("text", "") for b in content.content if isinstance(b, dict))


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_definitions_and_argument_fixes_through_the_host(binding: str, tmp_path: Path) -> None:
    """``tool_definitions(target)`` lists every tool under its public name;
    ``call_tool(..., provider="openai-strict")`` removes the null a model sends for a
    field that was optional (the server never sees it), and keeps the arguments otherwise."""
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"s": server("s", "--log", str(log), "--tools", "echo")})
        async with b.connect_config(cfg) as host:
            for target in TOOL_TARGETS:
                definitions = await host.tool_definitions(target)
                names = [d.get("name") or d["function"]["name"] for d in definitions]
                assert names == ["s__echo"], target
            strict = (await host.tool_definitions("openai-strict"))[0]["function"]
            assert strict["strict"] is True
            assert strict["parameters"]["required"] == ["text"]
            result = await host.call_tool("s__echo", {"text": None}, provider="openai-strict")
            assert result.content[0].text == "s:"
            result = await host.call_tool("s__echo", {"text": "kept"},
                                          provider="openai-strict")
            assert result.content[0].text == "s:kept"

    run(binding, scenario)
    sent = [e["arguments"] for e in read_log(log) if e["method"] == "tools/call"]
    assert sent == [{}, {"text": "kept"}]


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_meta_tools_through_the_host(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={
            "alpha": server("alpha", "--log", str(log)),
            "off": server("off", enabled=False)})
        async with b.connect_config(cfg) as host:
            defs = host.meta_tools("anthropic")
            assert [d["name"] for d in defs] == list(META_TOOLS)
            assert [d["name"] for d in host.meta_tools("anthropic", include=[
                "mcp_call", "mcp_list"])] == ["mcp_call", "mcp_list"]
            listed = await host.call_meta_tool("mcp_list", {}, provider="anthropic")
            servers = json.loads(_text(listed))["servers"]
            assert servers == [
                {"server": "alpha", "transport": "stdio", "state": "running", "enabled": True},
                {"server": "off", "transport": "stdio", "state": "disabled",
                 "enabled": False}]
            tools = json.loads(_text(await host.call_meta_tool(
                "mcp_list", {"server": "alpha"}, provider="anthropic")))["tools"]
            assert [t["name"] for t in tools] == ["echo", "whoami", "add_tool"]
            called = await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "echo", "arguments": {"text": "hi"}},
                provider="anthropic")
            assert (_text(called), called.is_error) == ("alpha:hi", False)
            wrong = await host.call_meta_tool("mcp_call", {"server": "alpha", "tool": "ecko"},
                                              provider="anthropic")
            assert wrong.is_error and "did you mean echo" in _text(wrong)
            bad = await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "echo", "timeoutSeconds": 900},
                provider="anthropic")
            assert bad.is_error and "from 1 to 300" in _text(bad)
            raw = await host.call_meta_tool("mcp_request", {
                "server": "alpha", "method": "tools/list"}, provider="anthropic")
            assert [t["name"] for t in json.loads(_text(raw))["tools"]] == [
                "echo", "whoami", "add_tool"]
            pid = _text(await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "whoami"}, provider="anthropic")).split()[1]
            closed = await host.call_meta_tool("mcp_list", {"server": "alpha",
                                                            "action": "close"},
                                               provider="anthropic")
            assert json.loads(_text(closed)) == {"server": "alpha", "closed": True}
            assert host.servers()["alpha"].state == "stopped"
            assert "alpha__echo" in [t.name for t in await host.list_tools()]  # still listed
            again = _text(await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "whoami"}, provider="anthropic")).split()[1]
            assert again != pid  # started again by the call that needed it
            openai = await host.call_meta_tool("mcp_list", {}, provider="openai")
            assert isinstance(openai.content, str)
            with pytest.raises(KeyError):
                await host.call_meta_tool("mcp_nope", {}, provider="anthropic")

    run(binding, scenario)
    calls = [e for e in read_log(log) if e["method"] == "tools/call"]
    assert [c["arguments"] for c in calls] == [{"text": "hi"}, {}, {}]  # nothing else sent


# -- found in review ------------------------------------------------------------------------


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_review_fixes_through_the_host(binding: str, tmp_path: Path) -> None:
    """Arguments as JSON text (what OpenAI hands over) are sent as the object they hold, and
    bad ones send nothing; mcp_request cannot go around the filters; a held server starts
    again for mcp_list and mcp_request too; a failed server cannot be closed; a server's
    stderr never reaches the model; no server tool can take a meta-tool's name."""
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={
            "alpha": server("alpha", "--log", str(log), "--tools", "echo,whoami,mcp_call",
                            exclude_tools=("whoami",)),
            "dies": server("dies", "--die-on-call", "1")})
        async with b.connect_config(cfg, names=NamePolicy(mode="collisions")) as host:
            names = [t.name for t in await host.list_tools()]
            assert "mcp_call" not in names and "alpha__mcp_call" in names  # reserved
            result = await host.call_tool("alpha__echo", '{"text": "from json"}',
                                          provider="openai-strict")
            assert result.content[0].text == "alpha:from json"
            with pytest.raises(ValueError, match="JSON object"):
                await host.call_tool("alpha__echo", "[1, 2]")
            with pytest.raises(TypeError):
                await host.call_tool("alpha__echo", [1, 2])
            refused = await host.call_meta_tool("mcp_request", {
                "server": "alpha", "method": "tools/call", "params": {"name": "whoami"}},
                provider="anthropic")
            assert refused.is_error and "use mcp_call" in _text(refused).replace(
                "call tools with mcp_call", "use mcp_call")
            raw = json.loads(_text(await host.call_meta_tool(
                "mcp_request", {"server": "alpha", "method": "tools/list"},
                provider="anthropic")))
            assert "whoami" not in [t["name"] for t in raw["tools"]]
            listed = json.loads(_text(await host.call_meta_tool(
                "mcp_list", {"server": "alpha"}, provider="anthropic")))
            assert "whoami" not in [t["name"] for t in listed["tools"]]
            await host.call_meta_tool("mcp_list", {"server": "alpha", "action": "close"},
                                      provider="anthropic")
            again = await host.call_meta_tool("mcp_list", {"server": "alpha"},
                                              provider="anthropic")
            assert not again.is_error and host.servers()["alpha"].state == "running"
            gone = await host.call_meta_tool("mcp_call", {"server": "dies", "tool": "echo"},
                                             provider="anthropic")
            assert gone.is_error and "exited with code 7" in _text(gone)
            assert "dying" not in _text(gone)  # the stderr tail stays with the operator
            failed = await b.poll(lambda: _state(host, "dies"), lambda s: s == "backoff", 5)
            assert failed == "backoff"

    run(binding, scenario)
    calls = [e["arguments"] for e in read_log(log) if e["method"] == "tools/call"]
    assert calls == [{"text": "from json"}]


async def _state(host: Any, name: str) -> str:
    return str(host.servers()[name].state)


def test_held_servers_are_not_stranded_and_only_running_ones_close() -> None:
    spec = ServerSpec(name="s", command=("srv",))
    core = HostCore(HostConfig(servers={"s": spec}))
    i = core.begin_start("s", 0.0)
    with pytest.raises(LocalProtocolError, match="only a running server"):
        core.stop("s", 0.0, hold=True)  # still starting: nothing is listed yet
    core.start_succeeded("s", i, 0.0, [Tool(name="t", input_schema={"type": "object"})])
    core.stop("s", 1.0, hold=True)
    assert core.is_held("s") and core.due(1.0) == []
    core.disable("s", 2.0)
    core.enable("s", 3.0)
    assert not core.is_held("s") and core.due(3.0) == ["s"]  # enable starts it again
