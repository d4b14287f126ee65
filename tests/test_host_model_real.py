"""Between the Host and the model, against real peers in all three runtimes:
server-everything's large, binary and structured tools and mcp-server-git's long diffs
under budgets, its ``outputSchema`` checked, search and approvals over real listings."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run

from mcp_proto.host import (
    ApprovalPolicy,
    ApprovalRule,
    Budget,
    HostConfig,
    ServerSpec,
    ToolDenied,
)

pytestmark = [pytest.mark.usefixtures("no_leaks"), pytest.mark.real_server]

_MARKER = re.compile(r"mcp_read_result handle=(\w+) offset=(\d+)")


def _repo_with_a_long_diff(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30,
                   capture_output=True)
    big = repo / "big.txt"
    big.write_text("".join(f"old line {i}\n" for i in range(20_000)))
    subprocess.run([*git, "add", "big.txt"], check=True, timeout=30, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True, timeout=30,
                   capture_output=True)
    big.write_text("".join(f"new line {i}\n" for i in range(20_000)))
    return repo


def _text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.parametrize("binding", BINDINGS)
def test_budgets_validation_search_and_approval_on_real_servers(
        binding: str, tmp_path: Path, everything_command: list[str],
        git_command: list[str]) -> None:
    repo = _repo_with_a_long_diff(tmp_path)
    config = HostConfig(servers={
        # get-env returns the whole environment: three 100,000-character variables make it
        # large (one string of the environment is at most 128 KiB on Linux)
        "everything": ServerSpec(name="everything", command=tuple(everything_command),
                                 env={f"BIG_VALUE_{i}": "v" * 100_000 for i in range(3)}),
        "git": ServerSpec(name="git", command=(*git_command, "--repository", str(repo)))})
    policy = ApprovalPolicy(rules=(ApprovalRule("deny", server="git", tool="git_commit"),))
    budget = Budget(max_chars=6000, max_image_bytes=10)

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config, approval=policy, validate=True) as host:
            diff = await host.call_tool("git__git_diff_unstaged", {"repo_path": str(repo)})
            whole = _text(diff)
            assert len(whole) > 100_000 and "new line 19999" in whole
            cut = await host.call_tool("git__git_diff_unstaged", {"repo_path": str(repo)},
                                       provider="anthropic", budget=budget)
            text = _text(cut)
            assert len(text) <= 6000 and "new line 19999" in text[-200:]
            found = _MARKER.search(text)
            assert found is not None
            page = host.read_result(found.group(1), offset=int(found.group(2)),
                                    length=2000)
            assert page.text == whole[int(found.group(2)):int(found.group(2)) + 2000]
            env = await host.call_meta_tool("mcp_call", {"server": "everything",
                                                         "tool": "get-env"},
                                            provider="openai", budget=budget)
            assert len(env.content) <= 6000 and env.handle is not None
            image = await host.call_tool("everything__get-tiny-image", {},
                                         provider="anthropic", budget=budget)
            assert not any(getattr(b, "type", "") == "image" for b in image.content)
            assert "image" in _text(image).lower()
            structured = await host.call_tool("everything__get-structured-content",
                                              {"location": "New York"})
            assert not structured.is_error and structured.structured_content is not None
            hits = await host.search_tools("show the changes not yet staged")
            assert "git__git_diff_unstaged" in [h.name for h in hits[:3]]
            with pytest.raises(ToolDenied):
                await host.call_tool("git__git_commit", {"repo_path": str(repo),
                                                         "message": "nope"})
            denied = await host.call_meta_tool("mcp_call", {
                "server": "git", "tool": "git_commit",
                "arguments": {"repo_path": str(repo), "message": "nope"}},
                provider="anthropic")
            assert denied.is_error
        log = subprocess.run(["git", "-C", str(repo), "log", "--oneline"], check=True,
                             timeout=30, capture_output=True, text=True).stdout
        assert len(log.splitlines()) == 1  # the denied commit never ran

    run(binding, scenario)
