"""``mcp-proto --config FILE servers|tools|call`` and ``mcp-proto config check|convert``:
what they print, their exit status, and that no secret is ever printed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib
from conftest import TESTS
from mcp_proto_io.__main__ import main

from mcp_proto.host import parse_config

pytestmark = pytest.mark.usefixtures("no_leaks")

HOST_SERVER = str(TESTS / "servers" / "host_server.py")
SECRET = "sekrit-7b1f0c"


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    captured = capsys.readouterr()
    return code, out.getvalue(), captured.err + captured.out


def write_config(tmp_path: Path, log: Path | None = None) -> Path:
    """A Claude Code ``.mcp.json`` with two good servers, a missing executable, and
    secrets in env, args and headers (all from ``${SECRET_TOKEN}``)."""
    good = ["--log", str(log)] if log else []
    config = {"mcpServers": {
        "alpha": {"command": sys.executable, "args": [HOST_SERVER, "--name", "alpha", *good],
                  "env": {"TOKEN": "${SECRET_TOKEN}"}},
        "beta": {"type": "stdio", "command": sys.executable,
                 "args": [HOST_SERVER, "--name", "beta", "--tools", "echo"]},
        "broken": {"command": "/nonexistent/mcp-nope", "args": ["--key=${SECRET_TOKEN}"]},
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"}},
    }}
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", SECRET)


@pytest.mark.usefixtures("secret_env")
def test_servers_without_check_starts_nothing(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "alpha.log"
    path = write_config(tmp_path, log)
    code, out, err = run_cli("--config", str(path), "servers", capsys=capsys)
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["alpha", "beta", "broken", "web"]
    assert "--key=${SECRET_TOKEN}" in out  # the template, as written
    assert SECRET not in out + err
    assert not log.exists()  # nothing started
    code, out, _ = run_cli("--config", str(path), "servers", "--json", capsys=capsys)
    rows = json.loads(out)
    assert rows[0]["env"] == ["TOKEN"] and rows[3]["headers"] == ["Authorization"]
    assert SECRET not in out


@pytest.mark.usefixtures("secret_env")
def test_servers_check_names_the_failed_ones(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    code, out, err = run_cli("--config", str(path), "servers", "--check", "--json",
                             capsys=capsys)
    assert code == 1
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["alpha"]["state"] == "running" and rows["alpha"]["tools"] == 3
    assert rows["beta"]["tools"] == 1
    assert rows["broken"]["state"] == rows["web"]["state"] == "failed"
    assert "server 'broken' failed" in err and "server 'web' failed" in err
    assert SECRET not in out + err
    # only the servers asked for: all good, exit 0
    code, out, err = run_cli("--config", str(path), "servers", "--check", "--server", "alpha",
                             "--server", "beta", capsys=capsys)
    assert code == 0, err
    assert [line.split()[:2] for line in out.splitlines()] == [["NAME", "STATE"],
                                                              ["alpha", "running"],
                                                              ["beta", "running"]]


@pytest.mark.usefixtures("secret_env")
def test_tools_and_call_through_the_config(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    code, out, _ = run_cli("--config", str(path), "tools", "--server", "alpha",
                           "--server", "beta", "--json", capsys=capsys)
    assert code == 0
    tools = json.loads(out)
    assert [(t["name"], t["server"], t["tool"]) for t in tools] == [
        ("alpha__add_tool", "alpha", "add_tool"), ("alpha__echo", "alpha", "echo"),
        ("alpha__whoami", "alpha", "whoami"), ("beta__echo", "beta", "echo")]
    code, out, err = run_cli("--config", str(path), "call", "beta__echo", "--args",
                             '{"text": "hi"}', "--server", "beta", capsys=capsys)
    assert (code, out) == (0, "beta:hi\n"), err
    code, out, err = run_cli("--config", str(path), "call", "beta__ecko", "--server", "beta",
                             capsys=capsys)
    assert code == 1 and "did you mean beta__echo" in err
    code, _, err = run_cli("--config", str(path), "tools", "--server", "nope", capsys=capsys)
    assert code == 2 and "no server named 'nope'" in err
    # resources go across the host now (issue 23 item 3); a flag where it does not apply
    # is refused (item 2)
    code, out, err = run_cli("--config", str(path), "resources", "--server", "beta",
                             capsys=capsys)
    assert (code, out) == (0, ""), err
    code, _, err = run_cli("--config", str(path), "resources", "--provider", "openai",
                           capsys=capsys)
    assert code == 2 and "--provider applies to call, schema, tools" in err


def test_config_check_reports_every_problem_without_values(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SECRET_TOKEN", raising=False)
    path = write_config(tmp_path)
    code, _, err = run_cli("config", "check", str(path), capsys=capsys)
    assert code == 1
    assert "3 problems" in err and "SECRET_TOKEN is not set" in err
    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    code, out, err = run_cli("config", "check", str(path), capsys=capsys)
    assert code == 0 and "claude-code, 4 servers" in out
    assert "env: TOKEN" in out and "headers: Authorization" in out
    assert SECRET not in out + err


@pytest.mark.usefixtures("secret_env")
@pytest.mark.parametrize("dialect", ["vscode", "codex", "cursor", "gemini", "windsurf", "zed"])
def test_config_convert_keeps_templates_and_never_values(
        dialect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    code, out, err = run_cli("config", "convert", str(path), "--to", dialect, capsys=capsys)
    assert code == 0, err
    assert SECRET not in out + err
    assert "SECRET_TOKEN" in out  # the variable survives, in the target's own syntax
    if dialect == "codex":
        tomllib.loads(out)
    else:
        json.loads(out)
    target = tmp_path / f"converted-{dialect}"
    code, _, err = run_cli("config", "convert", str(path), "--to", dialect, "--output",
                           str(target), capsys=capsys)
    assert code == 0 and target.read_text() == out
    again = parse_config(tomllib.loads(out) if dialect == "codex" else out, dialect=dialect,
                         env={"SECRET_TOKEN": SECRET})
    original = parse_config(path.read_text(), path=str(path), env={"SECRET_TOKEN": SECRET})
    for name in ("alpha", "beta"):
        assert again.servers[name].command == original.servers[name].command
    if dialect in ("codex", "zed"):  # no ${VAR} syntax: the template is kept, and said so
        assert "cannot say variable SECRET_TOKEN" in err
        assert again.servers["alpha"].env == {"TOKEN": "${SECRET_TOKEN}"}
    else:
        assert again.servers["alpha"].env == {"TOKEN": SECRET}


def test_vscode_inputs_and_standard_locations(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``--config cursor`` finds ``~/.cursor/mcp.json``; ``--input`` answers VS Code's
    ``${input:ID}`` (and the value is never printed)."""
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    cursor = {"mcpServers": {"c": {"command": sys.executable, "args": [HOST_SERVER, "--name",
                                                                      "c", "--tools", "echo"]}}}
    (home / ".cursor" / "mcp.json").write_text(json.dumps(cursor))
    monkeypatch.setenv("HOME", str(home))
    code, out, err = run_cli("--config", "cursor", "tools", capsys=capsys)
    assert (code, out.split()[0]) == (0, "c__echo"), err
    vscode = tmp_path / "proj" / ".vscode"
    vscode.mkdir(parents=True)
    (vscode / "mcp.json").write_text(json.dumps({
        "inputs": [{"type": "promptString", "id": "api-key", "password": True}],
        "servers": {"v": {"type": "stdio", "command": sys.executable,
                          "args": [HOST_SERVER, "--name", "v", "--tools", "echo"],
                          "env": {"API_KEY": "${input:api-key}"}}}}))
    code, _, err = run_cli("--config", str(vscode / "mcp.json"), "tools", capsys=capsys)
    assert code == 1 and "api-key" in err
    code, out, err = run_cli("--input", f"api-key={SECRET}", "--config",
                             str(vscode / "mcp.json"), "call", "v__echo", "--args",
                             '{"text": "ok"}', capsys=capsys)
    assert (code, out) == (0, "v:ok\n"), err
    assert SECRET not in out + err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    cases: list[tuple[Any, ...]] = [
        ("servers",),                                               # servers needs --config
        ("--config", str(path), "tools", "--", "cmd"),              # both
        ("--input", "no-equals", "--config", str(path), "servers"),
    ]
    for argv in cases:
        code, _, _ = run_cli(*argv, capsys=capsys)
        assert code == 2, argv


def test_resume_takes_a_task_id_that_starts_with_a_dash(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Task ids are opaque (fastmcp's are random base64url, so one in 64 starts with '-'):
    ``resume -abc`` and ``resume --id=-abc`` reach the server (here: none, exit 1), and no
    id at all is a usage error (exit 2)."""
    for argv in (["resume", "-lIHFuLe3", "--url", "http://127.0.0.1:9/mcp"],
                 ["resume", "--id=-abc", "--url", "http://127.0.0.1:9/mcp"]):
        code, _, err = run_cli(*argv, "--timeout", "2", capsys=capsys)
        assert code == 1 and "cannot connect" in err, err
    code, _, err = run_cli("resume", "--url", "http://127.0.0.1:9/mcp", capsys=capsys)
    assert code == 2 and "TASK_ID" in err


@pytest.mark.usefixtures("secret_env")
def test_tools_as_provider_definitions_and_one_schema(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    code, out, err = run_cli("--config", str(path), "tools", "--server", "beta", "--provider",
                             "openai-strict", "--json", capsys=capsys)
    assert code == 0, err
    definitions = json.loads(out)
    assert [d["function"]["name"] for d in definitions] == ["beta__echo"]
    assert definitions[0]["function"]["strict"] is True
    code, out, err = run_cli("--config", str(path), "tools", "--server", "beta", "--provider",
                             "gemini-openapi", "--json", capsys=capsys)
    assert code == 0 and json.loads(out)[0]["name"] == "beta__echo"
    code, out, err = run_cli("--config", str(path), "schema", "beta__echo", "--server", "beta",
                             "--provider", "openai-strict", "--json", capsys=capsys)
    assert code == 0, err
    shown = json.loads(out)
    assert shown["strict"] is True and shown["schema"]["required"] == ["text"]
    assert any(n["kind"] == "made-nullable" for n in shown["notes"])
    code, out, _ = run_cli("--config", str(path), "schema", "beta__echo", "--server", "beta",
                           "--provider", "anthropic", capsys=capsys)
    assert code == 0 and "# beta__echo for anthropic: strict=" in out
    code, _, err = run_cli("--config", str(path), "schema", "beta__ecko", "--server", "beta",
                           "--provider", "anthropic", capsys=capsys)
    assert code == 1 and "did you mean beta__echo" in err
    code, _, err = run_cli("schema", "x", "--provider", "anthropic", capsys=capsys)
    assert code == 2 and "needs a server" in err and "--config FILE" in err
