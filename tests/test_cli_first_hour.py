"""The first hour with ``mcp-proto`` (issue 23): each item of the issue, as a user tries it.

Against real servers where the behaviour involves them (mcp-server-time, mcp-server-git,
server-everything, the bundled demo server) from config files in several dialects, and small
scripts in the test's folder for hangs, exits and stderr.  What needs a terminal (the waiting
line, the VS Code input prompt) runs the console script on a pseudo-terminal, read with
``select`` against a deadline.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, TESTS, demo_command, demo_env
from mcp_proto_io.__main__ import main
from mcp_proto_io.cli._args import COMMANDS
from mcp_proto_io.cli._main import stdio_label
from mcp_proto_io.cli._show import ELLIPSIS, MAX_COLUMN, table

from mcp_proto import ALL_VERSIONS

pytestmark = pytest.mark.usefixtures("no_leaks")

HOST_SERVER = str(TESTS / "servers" / "host_server.py")
TASK_SERVER = str(TESTS / "servers" / "sdk_task_server.py")
CONSOLE = Path(sys.executable).parent / "mcp-proto"
SECRET = "sekrit-4c2e91"
#: Seconds a pseudo-terminal run may take in all (servers start in about a second).
PTY_DEADLINE = 60.0


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    captured = capsys.readouterr()
    return code, out.getvalue(), captured.err + captured.out


def write_json(path: Path, value: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return str(path)


def host_server(name: str, *extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [HOST_SERVER, "--name", name, *extra]}


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


def hang_script(tmp_path: Path, marker: Path) -> str:
    """A server that never answers (and says, in ``marker``, that it was started)."""
    return script(tmp_path, "hang.py", f"import time\nopen({str(marker)!r}, 'w').close()\n"
                                       "time.sleep(300)\n")


def console_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_PROTO_INPUT_")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(REPO / "bindings"), str(REPO)]),
            **extra}


def read_until_exit(fd: int, proc_done: Any, deadline: float,
                    answers: list[tuple[bytes, bytes]] | None = None) -> bytes:
    """Everything the pseudo-terminal ``fd`` shows until the child is done (EOF or EIO),
    answering each ``(prompt, reply)`` once the prompt shows; bounded by ``deadline``."""
    buf = b""
    pending = list(answers or [])
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            buf += data
            while pending and pending[0][0] in buf:
                os.write(fd, pending.pop(0)[1])
        elif proc_done():
            break
    while not proc_done() and time.monotonic() < deadline:  # EIO can come before the exit
        time.sleep(0.02)  # (bounded: the deadline)
    return buf


# -- 1. start what is needed ---------------------------------------------------------------------


def test_call_starts_only_the_server_that_owns_the_tool(
        tmp_path: Path, time_command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 1: with {a server that never answers, time}, ``call
    time__get_current_time`` answers, and the hanging server was never started."""
    marker = tmp_path / "hang-started"
    path = write_json(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "hang": {"command": sys.executable, "args": [hang_script(tmp_path, marker)]},
        "time": {"command": time_command[0]}}})
    code, out, err = run_cli("--config", path, "call", "time__get_current_time", "--args",
                             '{"timezone": "UTC"}', capsys=capsys)
    assert code == 0, err
    assert json.loads(out)["timezone"] == "UTC"
    assert not marker.exists()
    assert "waiting for" not in err  # stderr is not a terminal: no status line


def test_listing_starts_all_and_timeout_bounds_the_open(
        tmp_path: Path, time_command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 1: ``servers --check`` starts every server; ``--timeout`` bounds the
    open, and a server not up by then is named (exit 1) while the others are shown."""
    marker = tmp_path / "hang-started"
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "hang": {"command": sys.executable, "args": [hang_script(tmp_path, marker)]},
        "time": {"command": time_command[0]}}})
    code, out, err = run_cli("--config", path, "servers", "--check", "--json", "--timeout",
                             "20", "--server", "time", capsys=capsys)
    assert code == 0, err
    assert [r["state"] for r in json.loads(out)] == ["running"]
    assert not marker.exists()  # --server: only that one
    code, out, err = run_cli("--config", path, "servers", "--check", "--json", "--timeout",
                             "1", capsys=capsys)
    assert code == 1
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["hang"]["state"] in ("starting", "failed")  # started: not "stopped"
    assert "server 'hang'" in err


def test_waiting_line_on_a_terminal(tmp_path: Path) -> None:
    """Issue 23 item 1: on a terminal the CLI says what it waits for ("waiting for slow
    (starting, 0.3 s)"), redrawn and erased when done; stdout has the result only."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "slow": host_server("slow", "--slow-start", "2")}})
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([str(CONSOLE), "--config", path, "call", "slow__echo",
                                 "--args", '{"text": "hi"}'], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave, env=console_env())
        os.close(slave)
        shown = read_until_exit(master, lambda: proc.poll() is not None,
                                time.monotonic() + PTY_DEADLINE)
        stdout, _ = proc.communicate(timeout=PTY_DEADLINE)
    finally:
        os.close(master)
    assert proc.returncode == 0, shown
    assert stdout == b"slow:hi\n"
    text = shown.decode()
    assert re.search(r"waiting for slow \(starting, \d+\.\d s\)", text), text
    assert text.endswith("\r\x1b[2K")  # erased when done


# -- 2. every flag honoured or refused -----------------------------------------------------------


@pytest.mark.parametrize(("argv", "flag", "where"), [
    (["--server", "x", "tools", "--", "cmd"], "--server", "--config"),
    (["tools", "--header", "A: b", "--", "cmd"], "--header", "--url"),
    (["tools", "--store", "d", "--", "cmd"], "--store", "--url"),
    (["tools", "--allow-http", "--", "cmd"], "--allow-http", "--url"),
    (["tools", "--env", "A=b", "--url", "http://127.0.0.1:9/mcp"], "--env", "after `--`"),
    (["CONFIG", "tools", "--cwd", "/"], "--cwd", "after `--`"),
    (["CONFIG", "resources", "--provider", "openai"], "--provider", "call, schema, tools"),
    (["CONFIG", "tools", "--task"], "--task", "call"),
    (["tools", "--args", "{}", "--", "cmd"], "--args", "call, prompt"),
    (["CONFIG", "tools", "--check"], "--check", "servers"),
    (["resume", "t1", "CONFIG"], "--config", "not to `resume`"),
    (["tools", "--dialect", "vscode", "--", "cmd"], "--dialect", "--config"),
    (["config", "check", "CONFIG_FILE", "--server", "a"], "--server", "not to `config check`"),
    (["demo", "CONFIG"], "--config", "not to `demo`"),
    (["call", "x", "--progress", "--json", "--trace"], None, "needs a server"),
])
def test_a_flag_that_does_not_apply_is_a_usage_error(
        argv: list[str], flag: str | None, where: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 2: a flag where it does not apply exits 2 naming it and where it
    applies (nothing starts: the command is not run)."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    expanded: list[str] = []
    for a in argv:
        expanded += ["--config", path] if a == "CONFIG" else [path if a == "CONFIG_FILE" else a]
    code, out, err = run_cli(*expanded, capsys=capsys)
    assert (code, out) == (2, ""), err
    assert where in err, err
    if flag is not None:
        assert f"{flag} applies to" in err, err


def test_task_and_provider_with_config(tmp_path: Path, git_command: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 2: ``--task`` prints status lines with --config as with one server, and
    ``--provider openai-strict`` undoes the null a strict model sends for an optional field
    (without it, the git server refuses the null)."""
    pytest.importorskip("mcp")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a",
                    "commit", "-q", "--allow-empty", "-m", "first commit"], check=True)
    path = write_json(tmp_path / ".vscode" / "mcp.json", {"servers": {
        "git": {"type": "stdio", "command": git_command[0],
                "args": ["--repository", str(repo)]},
        "tasks": {"type": "stdio", "command": sys.executable, "args": [TASK_SERVER]}}})
    code, out, err = run_cli("--config", path, "call", "tasks__slow", "--args",
                             '{"steps": 1}', "--task", capsys=capsys)
    assert code == 0, err
    assert re.search(r"^task \S+: working", err, re.M) and ": completed" in err
    arguments = json.dumps({"repo_path": str(repo), "max_count": None})
    code, out, err = run_cli("--config", path, "call", "git__git_log", "--args", arguments,
                             capsys=capsys)
    assert code == 1 and "reported an error" in err
    code, out, err = run_cli("--config", path, "call", "git__git_log", "--args", arguments,
                             "--provider", "openai-strict", capsys=capsys)
    assert code == 0, err
    assert "first commit" in out
    # and the same with one server, given as a command
    code, out, err = run_cli("call", "git_log", "--args", arguments, "--provider",
                             "openai-strict", "--", *git_command, "--repository", str(repo),
                             capsys=capsys)
    assert code == 0 and "first commit" in out, err


# -- 3. resources and prompts across the host ----------------------------------------------------


def test_resources_templates_prompts_read_prompt_across_the_host(
        tmp_path: Path, everything_command: list[str], time_command: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 3: ``--config F resources | templates | prompts | read URI | prompt
    NAME`` over server-everything beside mcp-server-time (which has none of them)."""
    path = write_json(tmp_path / "servers.json", {"servers": {
        "everything": {"command": everything_command[0], "args": everything_command[1:]},
        "time": {"command": time_command[0]}}})
    code, out, err = run_cli("--config", path, "resources", capsys=capsys)
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()]
    assert rows and all(r[1] == "everything" for r in rows)
    uri = rows[0][0]
    code, out, err = run_cli("--config", path, "resources", "--json", capsys=capsys)
    listed = json.loads(out)
    assert listed[0]["uri"] == uri and listed[0]["server"] == "everything"
    code, out, err = run_cli("--config", path, "templates", "--json", capsys=capsys)
    assert code == 0 and all(t["server"] == "everything" and "uriTemplate" in t
                             for t in json.loads(out)), err
    code, out, err = run_cli("--config", path, "read", uri, capsys=capsys)
    assert code == 0 and out.strip(), err
    code, out, err = run_cli("--config", path, "prompts", "--json", capsys=capsys)
    prompts = {p["name"]: p for p in json.loads(out)}
    assert prompts["everything__args-prompt"]["server"] == "everything"
    assert prompts["everything__args-prompt"]["prompt"] == "args-prompt"
    code, out, err = run_cli("--config", path, "prompt", "everything__args-prompt", "--args",
                             '{"city": "Lyon"}', capsys=capsys)
    assert code == 0 and out.startswith("user:") and "Lyon" in out, err
    code, out, err = run_cli("--config", path, "prompt", "everything__args-prompd",
                             capsys=capsys)
    assert code == 1 and "did you mean everything__args-prompt" in err


# -- 4. see what happens -------------------------------------------------------------------------


def test_verbose_shows_stderr_and_log_messages_by_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 items 4 and 7: ``-v`` shows each server's stderr lines prefixed with its
    name (the env value it was given redacted) and its ``notifications/message`` lines;
    without ``-v`` neither shows."""
    loud = script(tmp_path, "loud.py", "import os, sys\n"
                  "sys.stderr.write('loud: token is ' + os.environ['TOKEN'] + '\\n')\n"
                  "sys.stderr.flush()\n"
                  f"os.execv(sys.executable, [sys.executable, {HOST_SERVER!r}, '--name', "
                  "'loud'])\n")
    path = write_json(tmp_path / ".mcp.json", {"mcpServers": {
        "loud": {"command": sys.executable, "args": [loud], "env": {"TOKEN": SECRET}}}})
    code, out, err = run_cli("--config", path, "call", "loud__echo", "--args",
                             '{"text": "x"}', "-v", capsys=capsys)
    assert (code, out) == (0, "loud:x\n"), err
    assert "[loud] loud: token is <redacted>" in err
    assert SECRET not in err
    code, out, err = run_cli("--config", path, "call", "loud__echo", "--args",
                             '{"text": "x"}', capsys=capsys)
    assert code == 0 and "token is" not in err
    # the demo server logs each call once asked (logging/setLevel): -v asks
    demo = ["--env", f"PYTHONPATH={demo_env()['PYTHONPATH']}", "--", *demo_command()]
    code, out, err = run_cli("call", "add", "--args", '{"a": 1, "b": 2}', "-v", *demo,
                             capsys=capsys)
    assert code == 0, err
    assert re.search(r"^\[[^\]]+\] demo: tools/call add$", err, re.M), err
    code, out, err = run_cli("call", "add", "--args", '{"a": 1, "b": 2}', *demo,
                             capsys=capsys)
    assert code == 0 and "tools/call add" not in err


def test_trace_prints_every_message_redacted(tmp_path: Path, everything_command: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 4: ``--trace`` prints each JSON-RPC message both ways with its time
    and server; a value the host passed the server (here its env, which ``get-env``
    returns) shows as ``<redacted>``."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"everything": {
        "command": everything_command[0], "args": everything_command[1:],
        "env": {"EVERYTHING_TOKEN": SECRET}}}})
    code, out, err = run_cli("--config", path, "call", "everything__get-env", "--trace",
                             capsys=capsys)
    assert code == 0, err
    sends = re.findall(r"^\[\d\d:\d\d:\d\d\.\d{3}\] \[everything\] send (\{.*\})$", err, re.M)
    recvs = re.findall(r"^\[\d\d:\d\d:\d\d\.\d{3}\] \[everything\] recv (\{.*\})$", err, re.M)
    assert any(json.loads(m).get("method") == "tools/call" for m in sends), err
    assert any("<redacted>" in m for m in recvs)
    assert SECRET not in err
    assert SECRET in out  # the tool's result is the user's to see


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 4: ``--version`` says the version, the protocol versions and Python."""
    code, out, _ = run_cli("--version", capsys=capsys)
    assert code == 0 and out.startswith("mcp-proto 0.1.0\n")
    assert all(v in out for v in ALL_VERSIONS) and "python 3." in out


# -- 5. options where users type them ------------------------------------------------------------


def test_global_options_before_and_after_the_command(
        tmp_path: Path, time_command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 5: ``--config F --server time tools`` (the issue's example) and
    ``tools --config F --server time`` both work."""
    marker = tmp_path / "hang-started"
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "hang": {"command": sys.executable, "args": [hang_script(tmp_path, marker)]},
        "time": {"command": time_command[0]}}})
    for argv in (["--config", path, "--server", "time", "tools"],
                 ["tools", "--config", path, "--server", "time"],
                 ["--config", path, "tools", "--server", "time", "-v"]):
        code, out, err = run_cli(*argv, capsys=capsys)
        assert code == 0, (argv, err)
        assert [line.split()[0] for line in out.splitlines()] == [
            "time__convert_time", "time__get_current_time"]
    assert not marker.exists()


@pytest.mark.parametrize("argv", [[name] for name in COMMANDS] + [
    ["demo"], ["config"], ["config", "check"], ["config", "convert"], ["login"], ["logout"],
    ["auth", "status"]])
def test_every_command_has_help_with_an_example(argv: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 5: each subcommand's ``--help`` has a description and an example."""
    code, _, out = run_cli(*argv, "--help", capsys=capsys)  # argparse prints on stdout
    assert code == 0
    usage, _, rest = out.partition("\n\n")
    assert usage.startswith("usage: mcp-proto")
    assert rest.split("\n")[0].strip()  # a description
    assert "example:\n  mcp-proto " in out


def test_did_you_mean_and_true_help_texts(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 5: a near-miss command gets "did you mean" (exit 2); ``--provider``
    says what it does in each command, and is not offered where it does not apply."""
    code, _, err = run_cli("tool", "--", "x", capsys=capsys)
    assert code == 2 and "did you mean tools?" in err
    code, _, err = run_cli("config", "chek", "f", capsys=capsys)
    assert code == 2 and "did you mean check?" in err
    helps = {}
    for name in ("tools", "call", "schema", "resources"):
        _, _, helps[name] = run_cli(name, "--help", capsys=capsys)
    assert "tool definitions" in helps["tools"]
    assert "argument fixes" in helps["call"]
    assert "normalize the schema" in helps["schema"]
    assert "--provider" not in helps["resources"]


# -- 6. config files that behave predictably -----------------------------------------------------


def test_workspace_reads_the_project_file_first(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 6: ``--config vscode --workspace DIR`` reads DIR/.vscode/mcp.json (and
    so does ``--config vscode`` run inside the project)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    write_json(project / ".vscode" / "mcp.json", {"servers": {
        "proj": {"type": "stdio", **host_server("proj", "--tools", "echo")}}})
    code, out, err = run_cli("--config", "vscode", "--workspace", str(project), "tools",
                             capsys=capsys)
    assert (code, out.split()[:1]) == (0, ["proj__echo"]), err
    monkeypatch.chdir(project)
    code, out, err = run_cli("tools", "--config", "vscode", capsys=capsys)
    assert (code, out.split()[:1]) == (0, ["proj__echo"]), err


def _inputs_config(tmp_path: Path) -> str:
    return write_json(tmp_path / ".vscode" / "mcp.json", {
        "inputs": [{"type": "promptString", "id": "who", "description": "Server name"},
                   {"type": "promptString", "id": "token", "description": "API token",
                    "password": True}],
        "servers": {"v": {"type": "stdio", "command": sys.executable,
                          "args": [HOST_SERVER, "--name", "${input:who}", "--tools", "echo"],
                          "env": {"TOKEN": "${input:token}"}}}})


def test_vscode_inputs_are_asked_on_a_terminal(tmp_path: Path) -> None:
    """Issue 23 item 6: VS Code ``promptString`` inputs are asked on the terminal; a
    ``password`` one is not echoed."""
    path = _inputs_config(tmp_path)
    code, text = run_on_pty(["--config", path, "call", "v__echo", "--args", '{"text": "hi"}'],
                            [(b"Server name", b"alice\n"),
                             (b"API token", b"pw-" + SECRET.encode() + b"\n")])
    assert code == 0, text
    assert "alice:hi" in text
    assert SECRET not in text  # the password was not echoed


def test_vscode_inputs_without_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 6: without a terminal the error says how to give an input, and the
    environment gives it (no secret on the command line)."""
    path = _inputs_config(tmp_path)
    code, _, err = run_cli("--config", path, "tools", capsys=capsys)
    assert code == 1 and "--input" in err and "MCP_PROTO_INPUT_" in err, err
    monkeypatch.setenv("MCP_PROTO_INPUT_WHO", "bob")
    monkeypatch.setenv("MCP_PROTO_INPUT_TOKEN", SECRET)
    code, out, err = run_cli("--config", path, "call", "v__echo", "--args", '{"text": "hi"}',
                             capsys=capsys)
    assert (code, out) == (0, "bob:hi\n"), err
    assert SECRET not in err


def test_config_check_warns_and_convert_needs_no_secret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 6: ``config check`` warns for a ``${...}`` a dialect leaves literal;
    ``config convert`` writes the templates back without their values."""
    monkeypatch.delenv("EVERYTHING_KEY", raising=False)
    desktop = write_json(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "e": {"command": "npx", "args": ["x"], "env": {"KEY": "${EVERYTHING_KEY}"}}}})
    code, out, err = run_cli("config", "check", desktop, capsys=capsys)
    assert code == 0, err
    assert re.search(r"^warning: .*EVERYTHING_KEY", out, re.M), out
    generic = write_json(tmp_path / ".mcp.json", {"mcpServers": {
        "e": {"command": "npx", "args": ["x"], "env": {"KEY": "${EVERYTHING_KEY}"}}}})
    code, out, err = run_cli("config", "check", generic, capsys=capsys)
    assert code == 1 and "EVERYTHING_KEY" in err  # claude-code expands it: it must be set
    code, out, err = run_cli("config", "convert", generic, "--to", "vscode", capsys=capsys)
    assert code == 0, err
    assert json.loads(out)["servers"]["e"]["env"]["KEY"] == "${env:EVERYTHING_KEY}"


# -- 7. messages a user can act on ---------------------------------------------------------------


def test_an_exit_names_the_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 7: ``server 'dying' exited with code 7: <its last stderr line>``."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "dying": host_server("dying", "--die-on-call", "1")}})
    code, _, err = run_cli("--config", path, "call", "dying__echo", "--args",
                           '{"text": "x"}', capsys=capsys)
    assert code == 1
    assert "mcp-proto: server 'dying' exited with code 7: dying on call 1\n" in err


def test_disabled_and_failed_servers_say_so(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 7: a call to a disabled or failed server prints ServerUnavailable with
    its state (and error), not "no tool"."""
    path = write_json(tmp_path / ".mcp.json", {"mcpServers": {
        "off": {**host_server("off"), "disabled": True},
        "broken": {"command": str(tmp_path / "no-such-server")}}})
    code, _, err = run_cli("--config", path, "call", "off__echo", capsys=capsys)
    assert code == 1 and "ServerUnavailable" in err and "disabled" in err, err
    code, _, err = run_cli("--config", path, "call", "broken__echo", capsys=capsys)
    assert code == 1 and "ServerUnavailable" in err and "failed" in err, err
    assert "no-such-server" in err  # the error says why


@pytest.fixture
def html_error_url() -> Iterator[str]:
    """An HTTP endpoint that answers every request 502 with an HTML page."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = b"<html><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>\n"
            self.send_response(502)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="test-html-502", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp?key={SECRET}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_an_http_error_is_one_line(html_error_url: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 7: an HTTP error is one line: the status, the URL without its secret,
    never the HTML page."""
    code, _, err = run_cli("tools", "--url", html_error_url, "--store", str(tmp_path / "s"),
                           "--timeout", "10", capsys=capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "502" in lines[0] and "<html" not in err and SECRET not in err


# -- 8. small things users reach for -------------------------------------------------------------


def test_args_from_a_file_and_from_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 8: ``--args @file.json`` and ``--args -``; a missing or bad file is a
    usage error naming it."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"b": host_server("b")}})
    args_file = tmp_path / "args.json"
    args_file.write_text('{"text": "from a file"}')
    code, out, err = run_cli("--config", path, "call", "b__echo", "--args", f"@{args_file}",
                             capsys=capsys)
    assert (code, out) == (0, "b:from a file\n"), err
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"text": "piped"}'))
    code, out, err = run_cli("--config", path, "call", "b__echo", "--args", "-",
                             capsys=capsys)
    assert (code, out) == (0, "b:piped\n"), err
    missing = tmp_path / "nope.json"
    code, _, err = run_cli("--config", path, "call", "b__echo", "--args", f"@{missing}",
                           capsys=capsys)
    assert code == 2 and str(missing) in err
    args_file.write_text("[1, 2]")
    code, _, err = run_cli("--config", path, "call", "b__echo", "--args", f"@{args_file}",
                           capsys=capsys)
    assert code == 2 and str(args_file) in err and "JSON object" in err


def test_schema_without_provider_is_the_tools_own(tmp_path: Path, time_command: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 8: ``schema NAME`` without ``--provider`` prints the tool's own input
    schema (with --config and with a command alike)."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "time": {"command": time_command[0]}}})
    code, out, err = run_cli("--config", path, "tools", "--json", capsys=capsys)
    own = {t["name"]: t["inputSchema"] for t in json.loads(out)}["time__get_current_time"]
    code, out, err = run_cli("--config", path, "schema", "time__get_current_time",
                             capsys=capsys)
    assert code == 0, err
    assert json.loads(out) == own
    code, out, err = run_cli("schema", "get_current_time", "--", *time_command, capsys=capsys)
    assert code == 0 and json.loads(out) == own, err


def test_servers_check_shows_what_each_server_is(
        tmp_path: Path, time_command: list[str], git_command: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 8: ``servers --check``: name, state, server name and version, protocol
    version, era, tools."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "time": {"command": time_command[0]},
        "git": {"command": git_command[0], "args": ["--repository", str(repo)]}}})
    code, out, err = run_cli("--config", path, "servers", "--check", "--json", capsys=capsys)
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    for name, server in (("time", "mcp-time"), ("git", "mcp-git")):
        row = rows[name]
        assert row["state"] == "running" and row["tools"] > 0
        assert row["server"]["name"] == server and row["server"]["version"]
        assert row["protocolVersion"] in ALL_VERSIONS
        assert row["era"] in ("legacy", "modern")
    code, out, err = run_cli("--config", path, "servers", "--check", capsys=capsys)
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "SERVER", "PROTOCOL", "ERA", "TOOLS", "ERROR"]
    time_row = next(line for line in lines if line.startswith("time "))
    assert "mcp-time " in time_row and rows["time"]["protocolVersion"] in time_row


def test_long_names_do_not_break_the_tables(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 8 (and the review's P1-2): the first column (the name typed next) is
    never cut, so it can be copied; a middle column (server, description) is cut at
    MAX_COLUMN with '…'; the columns stay aligned; the last cell is never cut."""
    buf = io.StringIO()
    table([("short", "a"), ("x" * 100, "b"), ("mid-size-name", "c")], buf)
    lines = buf.getvalue().splitlines()
    assert lines[1] == "x" * 100 + "  b"  # whole
    assert [line[102:] for line in lines] == ["a", "b", "c"]  # aligned
    buf = io.StringIO()
    table([("n1", "y" * 100, "last"), ("n2", "short", "z")], buf)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "n1  " + "y" * (MAX_COLUMN - 1) + ELLIPSIS + "  last"
    assert lines[1] == "n2  " + "short".ljust(MAX_COLUMN) + "  z"
    buf = io.StringIO()
    table([("ab", "1", "last cell is never cut " * 5), ("abcd", "22", "z")], buf)
    assert buf.getvalue().splitlines()[1] == "abcd  22  z"
    long = "a-server-with-a-very-long-name-that-somebody-thought-was-descriptive"
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        long: host_server("l", "--tools", "echo,whoami")}})
    code, out, err = run_cli("--config", path, "tools", capsys=capsys)
    assert code == 0, err
    names = [line.split()[0] for line in out.splitlines()]
    code, listed, err = run_cli("--config", path, "tools", "--json", capsys=capsys)
    assert names == [t["name"] for t in json.loads(listed)]  # whole: copy and call
    assert all(len(n) > MAX_COLUMN for n in names)
    echo = next(t["name"] for t in json.loads(listed) if t["tool"] == "echo")
    code, out, err = run_cli("--config", path, "call", echo, "--args", '{"text": "t"}',
                             capsys=capsys)
    assert (code, out) == (0, "l:t\n"), err
    code, out, err = run_cli("--config", path, "servers", "--check", capsys=capsys)
    lines = out.splitlines()
    assert lines[1].startswith(long + "  ")  # the name column is not cut either
    assert len({line.index("STATE") if i == 0 else line.index("running")
                for i, line in enumerate(lines)}) == 1  # aligned


def test_progress_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 8: ``--progress`` prints plain progress lines on stderr even when it
    is not a terminal; without it, nothing."""
    demo = ["--env", f"PYTHONPATH={demo_env()['PYTHONPATH']}", "--", *demo_command()]
    argv = ["call", "slow_count", "--args", '{"steps": 3, "delay": 0.01}']
    code, _, err = run_cli(*argv, "--progress", *demo, capsys=capsys)
    assert code == 0, err
    assert re.findall(r"^progress (\d)/3\b", err, re.M) == ["1", "2", "3"], err
    code, _out, err = run_cli(*argv, *demo, capsys=capsys)
    assert code == 0 and "progress" not in err


def test_tools_provider_prints_the_same_with_config_and_a_command(
        tmp_path: Path, time_command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 8: ``tools --provider X`` has one shape: a table (name, strict=,
    description) or with --json the definitions, with --config and with a command."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "time": {"command": time_command[0]}}})
    shown = {}
    for json_flag in ([], ["--json"]):
        code, one, err = run_cli("tools", "--provider", "openai-strict", *json_flag, "--",
                                 *time_command, capsys=capsys)
        assert code == 0, err
        code, many, err = run_cli("--config", path, "tools", "--provider", "openai-strict",
                                  *json_flag, capsys=capsys)
        assert code == 0, err
        shown[bool(json_flag)] = (one, many)
    text_one, text_many = shown[False]
    assert [line.split()[0] for line in text_many.splitlines()] == [
        "time__convert_time", "time__get_current_time"]
    assert sorted(line.split()[1:] for line in text_many.splitlines()) == \
        sorted(line.split()[1:] for line in text_one.splitlines())
    assert [line.split()[1] for line in text_one.splitlines()] == ["strict=true"] * 2
    json_one, json_many = (json.loads(t) for t in shown[True])
    json_one.sort(key=lambda d: d["function"]["name"])
    for a, b in zip(json_one, json_many, strict=True):
        assert b["function"]["name"] == "time__" + a["function"]["name"]
        assert {**b["function"], "name": ""} == {**a["function"], "name": ""}


WARNING_SERVER = '''\
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method, mid = m.get("method"), m.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}, "logging": {}},
              "serverInfo": {"name": "warner", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "go",
              "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        for level in ("info", "warning"):
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                  "level": level, "data": level + " one\\n" + level + " two"}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text",
              "text": "went"}]}})
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": method}})
'''


def test_warnings_show_without_verbose_one_line_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 item 4: without ``-v`` a server's warning still shows, on one line and
    prefixed with its name; its info messages only with ``-v``."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"warner": {
        "command": sys.executable, "args": [script(tmp_path, "warner.py", WARNING_SERVER)]}}})
    code, out, err = run_cli("--config", path, "call", "warner__go", capsys=capsys)
    assert (code, out) == (0, "went\n"), err
    assert [line for line in err.splitlines() if "one" in line] == [
        "[warner] warning: warning one warning two"]
    code, out, err = run_cli("--config", path, "call", "warner__go", "-v", capsys=capsys)
    assert code == 0, err
    assert "[warner] info one info two" in err.splitlines()


# -- the review of the first hour (issue 23, a new user's second try) ---------------------------


def run_on_pty(argv: list[str], answers: list[tuple[bytes, bytes]] | None = None,
               **env: str) -> tuple[int, str]:
    """The console script run with a pseudo-terminal as its stdin, stdout and stderr: its
    exit status and everything the terminal showed."""
    argv = [str(CONSOLE), *argv]
    pid, fd = pty.fork()
    if pid == 0:  # the child
        try:
            os.execve(argv[0], argv, console_env(**env))
        finally:
            os._exit(127)
    status: list[int] = []

    def done() -> bool:
        if not status:
            waited, code = os.waitpid(pid, os.WNOHANG)
            if waited:
                status.append(code)
        return bool(status)

    try:
        shown = read_until_exit(fd, done, time.monotonic() + PTY_DEADLINE, answers)
    finally:
        os.close(fd)
        if not done():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert status, shown
    return os.waitstatus_to_exitcode(status[0]), shown.decode(errors="replace")


@pytest.mark.parametrize("argv", [
    ["--header", "x:y", "tools", "--", "CMD"],
    ["--url", "http://127.0.0.1:9/mcp", "--env", "A=b", "tools"],
    ["--json", "--cwd", "/", "--config", "CONFIG", "tools"],
    ["--json", "demo"],
    ["--timeout", "5", "config", "check", "CONFIG"],
])
def test_server_flags_before_the_command_are_checked_the_same(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review P1-1: a server flag typed before the command is parsed (not taken for the
    command: "unknown command 'x:y'") and refused where it does not apply, as after it."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    argv = [path if a == "CONFIG" else a for a in argv]
    code, out, err = run_cli(*argv, capsys=capsys)
    assert (code, out) == (2, ""), err
    assert " applies to " in err and "unknown command" not in err, err


def test_server_flags_before_the_command_work(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Review P1-1: ``--timeout 5 --config F call X``, ``--config F --timeout 5 servers
    --check`` and ``--json tools -- CMD`` work; lists add up, a value after the command
    wins."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    code, out, err = run_cli("--timeout", "5", "--config", path, "call", "x__echo",
                             "--args", '{"text": "a"}', capsys=capsys)
    assert (code, out) == (0, "x:a\n"), err
    code, out, err = run_cli("--config", path, "--timeout", "5", "servers", "--check",
                             capsys=capsys)
    assert code == 0 and "running" in out, err
    code, out, err = run_cli("--json", "tools", "--", sys.executable, HOST_SERVER, "--name",
                             "x", "--tools", "echo", capsys=capsys)
    assert code == 0 and [t["name"] for t in json.loads(out)] == ["echo"], err
    code, out, err = run_cli("--args", '{"text": "early"}', "call", "echo", "--args",
                             '{"text": "late"}', "--", sys.executable, HOST_SERVER,
                             "--name", "x", capsys=capsys)
    assert (code, out) == (0, "x:late\n"), err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_must_be_seconds_above_zero(value: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Review P1-4: ``--timeout 0|-1|nan`` was a ValueError traceback: now a usage error."""
    for argv in (["tools", "--timeout", value, "--", "cmd"], ["--timeout", value, "demo"]):
        code, out, err = run_cli(*argv, capsys=capsys)
        assert (code, out) == (2, ""), err
        assert "--timeout" in err and "above 0" in err and "Traceback" not in err


def test_convert_to_a_folder_that_is_not_there(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Review P1-4: ``config convert F -o /nonexistent/dir/x.json`` says it cannot write
    there (exit 1), not a traceback."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    target = tmp_path / "no-such-dir" / "x.json"
    code, out, err = run_cli("config", "convert", path, "--to", "vscode", "-o", str(target),
                             capsys=capsys)
    assert code == 1 and out == ""
    assert err.strip() == f"mcp-proto: cannot write {target}: No such file or directory"


def test_output_is_not_glued_to_the_waiting_line(tmp_path: Path) -> None:
    """Review P1-3: on a terminal the waiting line is erased before anything is printed
    (it read ``waiting for hang (starting, 3.8 s)time__convert_time ...``); a single
    server's heading shows on a terminal."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "slow": host_server("slow", "--slow-start", "1.5", "--tools", "echo,ping")}})
    code, text = run_on_pty(["--config", path, "tools"])
    assert code == 0, text
    assert re.search(r"waiting for slow \(starting, \d+\.\d s\)", text), text
    for name in ("slow__echo", "slow__ping"):
        at = text.index(name)
        assert text[:at].endswith(("\n", "\x1b[2K")), text  # at the start of a line
        assert "waiting for" not in text[at:]  # nothing drawn after the output began
    code, text = run_on_pty(["tools", "--", sys.executable, HOST_SERVER, "--name", "one",
                             "--tools", "echo"])
    assert code == 0 and re.search(r"^# one \S+ - MCP \S+ \(handshake\)\r?$", text, re.M), text


def test_a_pipe_gets_the_table_without_the_heading(capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: ``tools -- CMD | cut ...``: no ``# name version`` heading on a pipe."""
    code, out, err = run_cli("tools", "--", sys.executable, HOST_SERVER, "--name", "one",
                             "--tools", "echo,ping", capsys=capsys)
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines()] == ["echo", "ping"]


VSCODE_INPUTS = {
    "inputs": [{"type": "promptString", "id": "api-key", "description": "API key",
                "password": True}],
    "servers": {"v": {"type": "stdio", "command": sys.executable,
                      "args": [HOST_SERVER, "--name", "v", "--tools", "echo"],
                      "env": {"API_KEY": "${input:api-key}"}}}}


def test_vscode_inputs_are_not_needed_to_list_or_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review P2-7: ``servers`` (nothing starts) and ``config check`` load without the
    secrets; check lists each missing input; the error of a command that needs one says
    how to give it on the command line, not the Python API's ``inputs=`` / ``ask=``."""
    path = write_json(tmp_path / ".vscode" / "mcp.json", VSCODE_INPUTS)
    code, out, err = run_cli("--config", path, "servers", capsys=capsys)
    assert code == 0 and out.split()[:2] == ["v", "stdio"], err
    code, out, err = run_cli("config", "check", path, capsys=capsys)
    assert code == 0, err
    assert "warning: input 'api-key' not given (MCP_PROTO_INPUT_API_KEY or --input " \
           "api-key=VALUE)" in out.splitlines()
    code, out, err = run_cli("--config", path, "tools", capsys=capsys)
    assert code == 1 and out == ""
    assert "--input api-key=VALUE or MCP_PROTO_INPUT_API_KEY" in err, err
    assert "inputs=" not in err and "ask=" not in err


def test_config_warnings_show_for_host_commands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review P2-8: a config's warnings showed only in ``config check``; every host
    command writes them on stderr, one line each."""
    monkeypatch.delenv("EVERYTHING_KEY", raising=False)
    path = write_json(tmp_path / "claude_desktop_config.json", {"mcpServers": {
        "x": {**host_server("x"), "env": {"KEY": "${EVERYTHING_KEY}"}}}})
    for argv in (["tools"], ["servers"], ["call", "x__echo", "--args", '{"text": "w"}']):
        code, _, err = run_cli("--config", path, *argv, capsys=capsys)
        assert code == 0, err
        warnings = [line for line in err.splitlines() if "EVERYTHING_KEY" in line]
        assert len(warnings) == 1 and warnings[0].startswith("mcp-proto: warning: x.env.KEY:")


def test_a_launched_server_is_named_after_its_script(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review P2-9: ``tools -- python dying.py`` said "server 'python' exited"; now the
    script's name (and ``-m MOD``'s module)."""
    dying = script(tmp_path, "dying.py", "import sys\nsys.stderr.write('no luck\\n')\n"
                                         "sys.exit(5)\n")
    code, _, err = run_cli("tools", "--", sys.executable, "-u", dying, capsys=capsys)
    assert code == 1
    assert "mcp-proto: server 'dying' exited with code 5: no luck" in err, err
    code, _, err = run_cli("tools", "--cwd", str(tmp_path), "--", sys.executable, "-m",
                           "dying", capsys=capsys)
    assert code == 1 and "server 'dying' exited with code 5" in err, err
    assert stdio_label(["npx", "-y", "@modelcontextprotocol/server-everything@2.0"]) == \
        "server-everything"
    assert stdio_label(["uvx", "mcp-server-time==1.0"]) == "mcp-server-time"
    assert stdio_label(["uv", "run", "--with", "mcp", "server.py"]) == "server"
    assert stdio_label(["node", "build/main.js"]) == "main"
    assert stdio_label(["mcp-server-time"]) is None  # its own name says it


def test_a_disabled_server_asked_for_says_so(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: ``--config F --server time tools`` with time disabled printed nothing and
    exited 0; near-miss server names get "did you mean"."""
    path = write_json(tmp_path / ".mcp.json", {"mcpServers": {
        "time": {**host_server("time"), "disabled": True}, "other": host_server("other")}})
    code, out, err = run_cli("--config", path, "--server", "time", "tools", capsys=capsys)
    assert (code, out) == (1, "") and "server 'time' is disabled" in err, err
    code, out, err = run_cli("--config", path, "--server", "tim", "tools", capsys=capsys)
    assert code == 2 and "did you mean time?" in err, err


def test_a_project_file_is_found_from_a_subdirectory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review P3: ``--config vscode`` in ``project/src`` reads ``project/.vscode/mcp.json``
    (the nearest parent with one, not above the home directory); none anywhere: the error
    lists every place looked at."""
    home = tmp_path / "home"
    project = home / "project"
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(deep)
    code, _, err = run_cli("--config", "claude-code", "servers", capsys=capsys)
    assert code == 1
    for place in (deep / ".mcp.json", project / ".mcp.json", home / ".claude.json"):
        assert str(place) in err, err
    assert str(tmp_path / ".mcp.json") not in err  # not above the home directory
    write_json(project / ".vscode" / "mcp.json", {"servers": {
        "proj": {"type": "stdio", **host_server("proj", "--tools", "echo")}}})
    code, out, err = run_cli("--config", "vscode", "tools", capsys=capsys)
    assert (code, out.split()[:1]) == (0, ["proj__echo"]), err


@pytest.mark.parametrize("flag", [["-v"], ["--trace"], ["--timeout", "3"]])
def test_servers_flags_that_need_check(flag: list[str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: ``servers -v/--trace/--timeout`` without ``--check`` did nothing."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    code, out, err = run_cli("--config", path, "servers", *flag, capsys=capsys)
    assert (code, out) == (2, "") and "needs --check" in err, err


def test_task_on_a_tool_without_task_support_says_it_ran_plainly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: ``call --task`` on a tool that does not run as a task: one note (no task
    status came: ``Client.call_tool(task=True)`` then calls it plainly)."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    code, out, err = run_cli("--config", path, "call", "x__echo", "--args", '{"text": "p"}',
                             "--task", capsys=capsys)
    assert (code, out) == (0, "x:p\n"), err
    assert "mcp-proto: 'x__echo' does not run as a task; called it plainly" in err
    code, out, err = run_cli("call", "echo", "--args", '{"text": "p"}', "--task", "--",
                             sys.executable, HOST_SERVER, "--name", "x", capsys=capsys)
    assert code == 0 and "'echo' does not run as a task" in err, err


def test_one_way_of_saying_things(tmp_path: Path, time_command: list[str],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: the era words of ``servers --check`` are the heading's (handshake /
    stateless); ``strict=`` is lower-case in ``schema``; ``--config F tools --json`` is each
    tool's own definition under its public name, with server and tool."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "time": {"command": time_command[0]}}})
    code, out, err = run_cli("--config", path, "servers", "--check", capsys=capsys)
    assert code == 0, err
    row = out.splitlines()[1].split()
    assert row[0] == "time" and row[row.index("running") + 4] in ("handshake", "stateless")
    code, out, err = run_cli("--config", path, "schema", "time__get_current_time",
                             "--provider", "openai-strict", capsys=capsys)
    assert code == 0 and re.search(r"^# time__get_current_time for openai-strict: "
                                   r"strict=(true|false|-),", out, re.M), out
    code, out, err = run_cli("--config", path, "tools", "--json", capsys=capsys)
    _, one, _ = run_cli("tools", "--json", "--", *time_command, capsys=capsys)
    own = {t["name"]: t for t in json.loads(one)}
    for tool in json.loads(out):
        assert tool["server"] == "time" and tool["name"] == "time__" + tool["tool"]
        assert {**tool, "name": tool["tool"]} == {**own[tool["tool"]], "server": "time",
                                                  "tool": tool["tool"]}


def test_near_misses_get_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: an unknown flag (``--jsn``), a tool a single server does not have
    (``get_current_tme``: its tools listed after the refusal), ``--url`` without a
    scheme; ``call --help`` shows where the command goes."""
    code, _, err = run_cli("tools", "--jsn", "--", "cmd", capsys=capsys)
    assert code == 2 and "did you mean --json?" in err, err
    server = ["--", sys.executable, HOST_SERVER, "--name", "x", "--tools",
              "get_current_time"]
    code, _, err = run_cli("call", "get_current_tme", *server, capsys=capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "did you mean get_current_time?" in err, err
    code, _, err = run_cli("tools", "--url", "127.0.0.1:3000/mcp", capsys=capsys)
    assert code == 2 and "did you mean http://127.0.0.1:3000/mcp?" in err, err
    code, _, shown = run_cli("call", "--help", capsys=capsys)  # argparse prints on stdout
    assert code == 0 and "[-- COMMAND ...]" in shown.partition("\n\n")[0]


def test_convert_does_not_warn_for_the_templates_it_keeps(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review P3: ``config convert`` warned "variable X is not set: kept as written" for
    every template: keeping them is what it is for.  ``config check`` still says it."""
    monkeypatch.delenv("UNSET_KEY", raising=False)
    path = write_json(tmp_path / ".mcp.json", {"mcpServers": {
        "e": {"command": "npx", "args": ["x"], "env": {"KEY": "${UNSET_KEY}"}}}})
    code, out, err = run_cli("config", "convert", path, "--to", "vscode", capsys=capsys)
    assert code == 0 and "UNSET_KEY" not in err, err
    assert json.loads(out)["servers"]["e"]["env"]["KEY"] == "${env:UNSET_KEY}"
    code, out, err = run_cli("config", "check", path, capsys=capsys)
    assert code == 1 and "e.env.KEY: variable UNSET_KEY is not set" in err, err


def test_verbose_says_an_exit_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: with ``-v`` an exit was reported by the client and again in the state
    change, and lifecycle lines repeated the name of their ``[name]`` prefix."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {
        "dying": host_server("dying", "--die-on-call", "1")}})
    code, _, err = run_cli("--config", path, "call", "dying__echo", "--args",
                           '{"text": "x"}', "-v", capsys=capsys)
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("[dying]")]
    assert not any("server 'dying'" in line for line in lines), err
    assert sum("exited with code 7" in line for line in lines) == 1, err
    assert "[dying] warning: running -> failed" in lines, err


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_stops_is_not_an_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Review P3: ``tools ... | head``: the reader stopped: exit 0, nothing said."""
    path = write_json(tmp_path / "servers.json", {"mcpServers": {"x": host_server("x")}})
    code = main(["--config", path, "tools"], out=_ClosedPipe())
    assert code == 0
    assert capsys.readouterr().err == ""


def test_input_variables_do_not_reach_the_servers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review P3: the ``MCP_PROTO_INPUT_*`` variables are the command's, not the servers'
    (each server's environment inherits the command's): removed once the config is
    loaded."""
    tell = script(tmp_path, "tell.py", "import os, sys\n"
                  "sys.stderr.write('inherited: %r\\n' % os.environ.get('MCP_PROTO_INPUT_WHO'))\n"
                  "sys.stderr.flush()\n"
                  f"os.execv(sys.executable, [sys.executable, {HOST_SERVER!r}, '--name', "
                  "os.environ['WHO']])\n")
    path = write_json(tmp_path / ".vscode" / "mcp.json", {
        "inputs": [{"type": "promptString", "id": "who"}],
        "servers": {"t": {"type": "stdio", "command": sys.executable, "args": [tell],
                          "env": {"WHO": "${input:who}"}}}})
    monkeypatch.setenv("MCP_PROTO_INPUT_WHO", "carol")
    code, out, err = run_cli("--config", path, "call", "t__echo", "--args", '{"text": "e"}',
                             "-v", capsys=capsys)
    assert (code, out) == (0, "carol:e\n"), err
    assert "[t] inherited: None" in err, err
