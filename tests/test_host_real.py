"""The Host against real peers, in all three runtimes: server-everything (stdio and HTTP),
mcp-server-time, mcp-server-git and the official SDK's server (stdio and HTTP) in one
config file, as a user would write it (Claude Code ``.mcp.json``, with ``${VAR}``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run
from google.genai import types as genai_types

from mcp_proto.host import TOOL_TARGETS

pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.real_server]


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30,
                   capture_output=True)
    (repo / "untracked-file.txt").write_text("hello\n")
    return repo


@pytest.mark.parametrize("binding", BINDINGS)
def test_real_servers_in_one_config(binding: str, tmp_path: Path, everything_command: list[str],
                                    time_command: list[str], git_command: list[str],
                                    sdk_server_command: list[str], everything_url: str,
                                    sdk_url: str) -> None:
    repo = _git_repo(tmp_path)
    config = {"mcpServers": {
        "everything": {"command": everything_command[0], "args": everything_command[1:]},
        "time": {"type": "stdio", "command": time_command[0], "args": time_command[1:]},
        "git": {"command": git_command[0], "args": [*git_command[1:], "--repository",
                                                    "${REPO_DIR}"]},
        "sdk": {"command": sdk_server_command[0], "args": sdk_server_command[1:]},
        "everything-http": {"type": "http", "url": everything_url,
                            "headers": {"X-Test": "${TEST_HEADER:-plain}"}},
        "sdk-http": {"type": "http", "url": sdk_url},
    }}
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config, indent=2))
    env = {"REPO_DIR": str(repo)}

    async def scenario(b: Binding) -> None:
        async with b.connect_config(str(path), env=env) as host:
            status = host.servers()
            assert {n: s.state for n, s in status.items()} == dict.fromkeys(
                config["mcpServers"], "running"), status
            tools = {t.name: t for t in await host.list_tools()}
            for name in ("everything__echo", "time__get_current_time", "git__git_status",
                         "sdk__echo", "everything-http__echo", "sdk-http__echo"):
                assert name in tools, sorted(tools)
            assert tools["git__git_status"].input_schema["required"] == ["repo_path"]
            result = await host.call_tool("everything__echo", {"message": "hi"})
            assert result.content[0].text == "Echo: hi"
            result = await host.call_tool("everything-http__echo", {"message": "web"})
            assert result.content[0].text == "Echo: web"
            result = await host.call_tool("time__get_current_time", {"timezone": "Etc/UTC"})
            assert not result.is_error and "Etc/UTC" in result.content[0].text
            result = await host.call_tool("git__git_status", {"repo_path": str(repo)})
            assert "untracked-file.txt" in result.content[0].text
            result = await host.call_tool("sdk-http__echo", {"text": "over http"})
            assert result.content[0].text == "over http"
            # a real list_changed: the SDK server registers a tool at run time
            await host.call_tool("sdk__add_tool", {"name": "late_tool"})

            async def listed() -> Any:
                return [t.name for t in await host.list_tools()]

            names = await b.poll(listed, lambda n: "sdk__late_tool" in n, 20)
            assert "sdk__late_tool" in names
            result = await host.call_tool("sdk__late_tool", {})
            assert result.content[0].text == "I am late_tool"
            # one server's own client, for what the host does not aggregate
            resources = await host.server("everything").list_resources()
            assert resources
            # every real tool, for every provider: none refused, and the providers' own
            # libraries take them
            for target in TOOL_TARGETS:
                definitions = await host.tool_definitions(target)
                assert len(definitions) == len(await host.list_tools()), target
                if target == "gemini-openapi":
                    for d in definitions:
                        genai_types.FunctionDeclaration.model_validate(d)

    run(binding, scenario)
