"""Between the Host and the model, in every runtime: approvals on every path a call can take
(direct, provider, meta-tool) with nothing sent for a denial, checked arguments and outputs,
result budgets with the whole result paged back, tool search, deferred definitions, the
servers' instructions, and the meta-tools for resources and prompts (issue 24)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run
from conftest import TESTS

from mcp_proto.host import (
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalRule,
    Budget,
    HostConfig,
    InvalidArguments,
    InvalidOutput,
    NamePolicy,
    ServerSpec,
    ToolDenied,
    UnknownResult,
    Validation,
)

HOST_SERVER = str(TESTS / "servers" / "host_server.py")


def server(name: str, *args: str, **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=(sys.executable, HOST_SERVER, "--name", name,
                                          "--model-tools", *args), **fields)


def connect(b: Binding, config: HostConfig, **kwargs: Any) -> Any:
    """A Host whose public names are the tools' own unless two servers share one."""
    kwargs.setdefault("names", NamePolicy(mode="collisions"))
    return b.connect_config(config, **kwargs)


def calls_in(path: Path) -> list[tuple[str, Any]]:
    """The ``tools/call`` requests the server received: ``(tool, arguments)``."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry["method"] == "tools/call":
            out.append(entry["arguments"])
    return out


def _text(content: Any) -> str:
    """The text of an Anthropic tool_result content."""
    return "\n".join(b["text"] for b in content.content if b.get("type") == "text")


def _result_text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


# -- approvals --------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_denial_sends_nothing_on_every_path(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    policy = ApprovalPolicy(rules=(ApprovalRule("deny", tool="delete_note"),))

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(log))})
        async with connect(b, cfg, approval=policy) as host:
            with pytest.raises(ToolDenied) as denied:
                await host.call_tool("delete_note", {})
            assert (denied.value.server, denied.value.tool) == ("alpha", "delete_note")
            on_provider = await host.call_tool("delete_note", {}, provider="anthropic")
            assert on_provider.is_error and "denied" in _result_text(on_provider).lower()
            on_meta = await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "delete_note"}, provider="anthropic")
            assert on_meta.is_error and "delete_note" in _text(on_meta)
            allowed = await host.call_tool("echo", {"text": "hi"})
            assert _result_text(allowed) == "alpha:hi"

    run(binding, scenario)
    assert calls_in(log) == [{"text": "hi"}]  # the denied calls never reached the server


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_ask_step_sees_the_call_and_its_answer_decides(binding: str,
                                                            tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    asked: list[ApprovalRequest] = []

    def ask(request: ApprovalRequest) -> Any:
        asked.append(request)
        return request.tool != "delete_note"

    async def scenario(b: Binding) -> None:
        spec = server("alpha", "--log", str(log), auto_approve=("read_note",))
        async with connect(b, HostConfig(servers={"alpha": spec}), approval=ask) as host:
            await host.call_tool("read_note", {})  # the config approves it: not asked
            assert asked == []
            await host.call_tool("echo", {"text": "yes"})
            with pytest.raises(ToolDenied):
                await host.call_tool("delete_note", {})

    run(binding, scenario)
    assert [(r.server, r.tool, r.arguments) for r in asked] == [
        ("alpha", "echo", {"text": "yes"}), ("alpha", "delete_note", {})]
    assert asked[1].annotations is not None and asked[1].annotations["destructiveHint"]
    assert calls_in(log) == [{}, {"text": "yes"}]


@pytest.mark.parametrize("binding", ["asyncio", "trio"])
def test_an_async_ask_callback_is_awaited(binding: str) -> None:
    asked: list[str] = []

    async def ask(request: ApprovalRequest) -> str:
        asked.append(request.tool)
        return "deny" if request.tool == "echo" else "allow"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg, approval=ask) as host:
            with pytest.raises(ToolDenied):
                await host.call_tool("echo", {"text": "x"})
            assert _result_text(await host.call_tool("read_note", {})) == "read_note done"

    run(binding, scenario)
    assert asked == ["echo", "read_note"]


def test_an_async_ask_callback_on_threads_denies_with_a_reason(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def ask(request: ApprovalRequest) -> bool:
        return True

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(log))})
        async with connect(b, cfg, approval=ask) as host:
            with pytest.raises(ToolDenied, match="TypeError"):
                await host.call_tool("echo", {"text": "x"})

    run("threads", scenario)
    assert calls_in(log) == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_annotations_count_only_for_trusted_servers(binding: str) -> None:
    policy = ApprovalPolicy(default="deny", trusted=("good",), read_only="allow")

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"good": server("good"), "bad": server("bad")})
        async with connect(b, cfg, approval=policy) as host:
            assert _result_text(await host.call_tool("good__read_note", {})) \
                == "read_note done"
            with pytest.raises(ToolDenied):  # the same hint from an untrusted server
                await host.call_tool("bad__read_note", {})
            with pytest.raises(ToolDenied):
                await host.call_tool("good__delete_note", {})

    run(binding, scenario)


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_arguments_and_output_are_checked(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(log))})
        async with connect(b, cfg, validate=True) as host:
            with pytest.raises(InvalidArguments, match="/a"):
                await host.call_tool("add", {"a": "one", "b": 2})
            for_model = await host.call_tool("add", {"b": 2}, provider="openai")
            assert for_model.is_error and "a" in _result_text(for_model)
            assert _result_text(await host.call_tool("add", {"a": 1, "b": 2})) == "3"
            good = await host.call_tool("weather", {"city": "Oslo"})
            assert good.structured_content == {"temp": 21.5}
            with pytest.raises(InvalidOutput, match="/temp"):
                await host.call_tool("bad_weather", {})

    run(binding, scenario)
    assert calls_in(log) == [{"a": 1, "b": 2}, {"city": "Oslo"}, {}]


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_output_mismatch_can_be_a_result(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg, validate=Validation(on_output_error="result")
                                    ) as host:
            bad = await host.call_tool("bad_weather", {})
            assert bad.is_error and "/temp" in _result_text(bad)
            meta = await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "bad_weather"}, provider="anthropic")
            assert meta.is_error

    run(binding, scenario)


# -- budgets --------------------------------------------------------------------------------------


_MARKER = re.compile(r"mcp_read_result handle=(\w+) offset=(\d+)")


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_result_over_budget_is_cut_and_read_back_whole(binding: str) -> None:
    size = 200_000
    budget = Budget(max_chars=4000)

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg) as host:
            whole = _result_text(await host.call_tool("big", {"size": size}))
            assert len(whole) == size and whole.endswith("END")
            cut = await host.call_tool("big", {"size": size}, provider="anthropic",
                                       budget=budget)
            text = _result_text(cut)
            assert len(text) <= 4000 and text.startswith("line 0\n") and text.endswith("END")
            found = _MARKER.search(text)
            assert found is not None
            handle, offset = found.group(1), int(found.group(2))
            assert whole.startswith(text[:offset])
            page = host.read_result(handle, offset=offset, length=1000)
            assert page.text == whole[offset:offset + 1000] and page.total == size
            meta = await host.call_meta_tool("mcp_read_result", {
                "handle": handle, "offset": offset, "length": 500}, provider="anthropic")
            assert _text(meta).startswith(whole[offset:offset + 500])
            with pytest.raises(UnknownResult):
                host.read_result("r999999")
            gone = await host.call_meta_tool("mcp_read_result", {"handle": "r999999"},
                                             provider="anthropic")
            assert gone.is_error
            via_meta = await host.call_meta_tool("mcp_call", {
                "server": "alpha", "tool": "big", "arguments": {"size": size}},
                provider="openai", budget=budget)
            assert len(via_meta.content) <= 4000 and via_meta.handle is not None
            assert via_meta.budget_notes
            small = await host.call_tool("big", {"size": 100}, provider="anthropic",
                                         budget=budget)
            assert _result_text(small) == whole[:97] + "END"  # under budget: untouched

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_hosts_budget_applies_on_the_models_paths_only(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg, budget=Budget(max_chars=1000)) as host:
            direct = await host.call_tool("big", {"size": 50_000})
            assert len(_result_text(direct)) == 50_000
            model = await host.call_tool("big", {"size": 50_000}, provider="openai")
            assert len(_result_text(model)) <= 1000
            default = await host.call_tool("big", {"size": 500_000}, provider="anthropic",
                                           budget="default")
            assert len(_result_text(default)) < 500_000
            with pytest.raises(ValueError, match="needs provider"):
                await host.call_tool("big", {"size": 1}, budget="default")

    run(binding, scenario)


# -- search and deferred definitions ---------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_search_ranks_every_servers_tools_and_starts_lazy_ones(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha"), "beta": server("beta")})
        async with connect(b, cfg, start="lazy") as host:
            assert {s.state for s in host.servers().values()} == {"stopped"}
            hits = await host.search_tools("weather", limit=3)
            assert hits and {h.tool for h in hits} <= {"weather", "bad_weather"}
            assert {h.server for h in hits} <= {"alpha", "beta"}
            await host.stop_server("beta")  # its last listing is still searched
            assert "beta" in {h.server for h in await host.search_tools("delete note")}
            meta = await host.call_meta_tool("mcp_search", {"query": "add integers",
                                                            "limit": 2},
                                             provider="anthropic")
            tools = json.loads(_text(meta))["tools"]
            assert tools[0]["tool"] == "add" and "inputSchema" in tools[0]
            assert await host.search_tools("zzzqqq") == []

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_deferred_definitions_per_target(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg) as host:
            plain = await host.tool_definitions("anthropic")
            assert all("defer_loading" not in d for d in plain)
            deferred = await host.tool_definitions("anthropic", deferred=True)
            assert [d.get("defer_loading") for d in deferred[:-1]] == [True] * len(plain)
            assert deferred[-1]["type"].startswith("tool_search_tool_bm25")
            responses = await host.tool_definitions("openai-responses", deferred=["*note"])
            marked = {d["name"] for d in responses if d.get("defer_loading")}
            assert marked == {"read_note", "delete_note"}
            assert responses[-1] == {"type": "tool_search"}
            chat = await host.tool_definitions("openai", deferred=["*note"])
            names = [d["function"]["name"] for d in chat]
            assert "read_note" not in names and names[-2:] == ["mcp_search", "mcp_call"]
            again = await host.tool_definitions("openai", deferred=["*note"])
            assert again == chat and again is not chat  # kept, handed out as a copy
            await host.call_tool("add_tool", {})  # list_changed: the definitions follow
            for _ in range(200):
                names = [d["function"]["name"] for d in await host.tool_definitions("openai")]
                if "extra" in names:
                    break
                await b.sleep(0.02)
            assert "extra" in names

    run(binding, scenario)


# -- instructions, resources and prompts ----------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_instructions_resources_and_prompts_reach_the_model(binding: str) -> None:
    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={
            "alpha": server("alpha", "--resources", "--instructions",
                            "Call echo before anything else."),
            "beta": server("beta")})
        async with connect(b, cfg) as host:
            text = host.instructions()
            assert '<server-instructions server="alpha">' in text
            assert "Call echo before anything else." in text and 'server="beta"' not in text
            listed = json.loads(_text(await host.call_meta_tool(
                "mcp_list_resources", {}, provider="anthropic")))
            assert [r["uri"] for r in listed["resources"]] == ["host://alpha/readme"]
            assert listed["templates"][0]["uriTemplate"] == "host://alpha/item/{id}"
            read = await host.call_meta_tool("mcp_read_resource",
                                             {"uri": "host://alpha/item/7"},
                                             provider="anthropic")
            assert "alpha:host://alpha/item/7" in _text(read)
            prompt = await host.call_meta_tool("mcp_get_prompt", {"name": "greet"},
                                               provider="anthropic")
            assert "[user] hello from alpha" in _text(prompt)
            missing = await host.call_meta_tool("mcp_get_prompt", {"name": "nope"},
                                                 provider="anthropic")
            assert missing.is_error

    run(binding, scenario)


# -- found in review ---------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_route_that_changed_during_the_ask_is_asked_again(binding: str,
                                                            tmp_path: Path) -> None:
    """The server is replaced while its call waits for approval: the new server's call is
    what gets asked about (here: denied), and neither server is sent anything."""
    old_log, new_log = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    asked: list[str] = []
    replacement = server("alpha", "--log", str(new_log), "--instructions", "new")

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(old_log))})
        host: Any = None

        def decide() -> str:
            asked.append("ask")
            return "allow" if len(asked) == 1 else "deny"

        if b.is_async:
            async def ask(request: ApprovalRequest) -> str:
                if not asked:
                    await host.update_server("alpha", replacement)
                return decide()
        else:
            def ask(request: ApprovalRequest) -> str:  # type: ignore[misc]
                if not asked:
                    host.raw.update_server("alpha", replacement)
                return decide()

        async with connect(b, cfg, approval=ask) as opened:
            host = opened
            with pytest.raises(ToolDenied):
                await host.call_tool("echo", {"text": "hi"})
            assert "new" in host.instructions()  # the call was checked against the new run

    run(binding, scenario)
    assert asked == ["ask", "ask"]
    assert calls_in(old_log) == [] and calls_in(new_log) == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_bad_budgets_and_providers_send_nothing(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(log))})
        async with connect(b, cfg) as host:
            with pytest.raises(ValueError, match="needs provider"):
                await host.call_tool("echo", {"text": "x"}, budget="default")
            with pytest.raises(ValueError):
                await host.call_tool("echo", {"text": "x"}, provider="openai", budget="big")
            with pytest.raises(ValueError, match="unknown provider"):
                await host.call_meta_tool("mcp_call", {"server": "alpha", "tool": "echo"},
                                          provider="nope")
            with pytest.raises(ValueError):
                await host.search_tools("echo", limit=0)
        with pytest.raises(TypeError):
            b.connect_config(cfg, budget=1000)

    run(binding, scenario)
    assert calls_in(log) == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_pages_fit_the_budget_whole_and_definitions_are_the_callers(binding: str) -> None:
    budget = Budget(max_chars=3000)

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha")})
        async with connect(b, cfg, budget=budget) as host:
            cut = await host.call_tool("big", {"size": 100_000}, provider="anthropic")
            found = _MARKER.search(_result_text(cut))
            assert found is not None
            handle, offset = found.group(1), int(found.group(2))
            whole = host.read_result(handle, length=100_000)
            text = whole.text
            while whole.next_offset is not None:
                whole = host.read_result(handle, offset=whole.next_offset, length=100_000)
                text += whole.text
            page = await host.call_meta_tool("mcp_read_result", {
                "handle": handle, "offset": offset}, provider="anthropic")
            got = _text(page)
            assert "omitted" not in got  # the page came whole, shorter than asked
            body, trailer = got.rsplit("\n", 1)
            assert text[offset:].startswith(body)
            next_offset = int(re.search(r"offset=(\d+)", trailer).group(1))  # type: ignore
            assert next_offset == offset + len(body)
            defs = await host.tool_definitions("anthropic")
            defs[0]["cache_control"] = {"type": "ephemeral"}
            defs.append({"name": "mine"})
            again = await host.tool_definitions("anthropic")
            assert "cache_control" not in again[0] and again[-1]["name"] != "mine"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_ask_denial_on_the_provider_path_is_a_result(binding: str, tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"

    async def scenario(b: Binding) -> None:
        cfg = HostConfig(servers={"alpha": server("alpha", "--log", str(log))})
        async with connect(b, cfg, approval=lambda request: "deny", start="lazy") as host:
            result = await host.call_tool("echo", {"text": "x"}, provider="gemini")
            assert result.is_error and "deny" in _result_text(result)

    run(binding, scenario)
    assert calls_in(log) == []
