"""The ``mcp-proto`` command: talk to an MCP server from the shell.

::

    mcp-proto demo                                   # the bundled demo server, end to end
    mcp-proto tools [--json] -- COMMAND [ARGS...]    # list a stdio server's tools
    mcp-proto tools --url http://host/mcp            # ... or a Streamable HTTP server's
    mcp-proto call TOOL [--args JSON|@FILE|-] [--json] -- COMMAND [ARGS...]
    mcp-proto resources | templates | prompts [--json] -- COMMAND [ARGS...]
    mcp-proto read URI [--json] -- COMMAND [ARGS...]
    mcp-proto prompt NAME [--args JSON] [--json] -- COMMAND [ARGS...]
    mcp-proto schema NAME [--provider P] -- COMMAND [ARGS...]
    mcp-proto --config FILE servers [--check] [--json]   # many servers from a config file
    mcp-proto --config FILE tools | resources | templates | prompts [--json]
    mcp-proto --config FILE call NAME --args JSON        # starts only NAME's server
    mcp-proto --config FILE read URI | prompt NAME
    mcp-proto config check FILE | config convert FILE --to DIALECT
    mcp-proto login --url URL                # authorize (browser, loopback callback), keep tokens
    mcp-proto logout --url URL | auth status # forget them | what is stored (never the tokens)
    mcp-proto --version

Global options (``--config``, ``--dialect``, ``--input``, ``--workspace``, ``--server``,
``-v``, ``--trace``) go before or after the subcommand; a flag where it does not apply is a
usage error (:data:`._args.FLAGS` says where each applies).  ``-v`` shows each server's stderr
and log messages on stderr (``[name] ...``), ``--trace`` every JSON-RPC message; warnings of
the library show without them, one line each.

Every flag goes before or after the subcommand (``mcp-proto --timeout 5 --config F call X``).
A single server's heading (``# name version - MCP 2025-06-18 (handshake)``) is printed only
when stdout is a terminal: a pipe gets the table alone.  A stdio server started through a
launcher (``python``, ``node``, ``npx``, ``uvx`` ...) is named after its script or package in
messages (``server 'dying' exited with code 5``).

Every ``--url`` command uses the tokens ``login`` stored (and refreshes them); without any, a
server that answers 401 fails with a line saying to log in.

Exit status: 0 on success, 1 when the server or the call failed (one line on stderr says why),
2 for a usage error.  A tool result with ``isError`` prints the result and exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from mcp_proto import (
    MCPError,
    Progress,
    RpcError,
    ServerExited,
    TextResourceContents,
    UrlElicitationRequired,
)
from mcp_proto.host import ConfigError, SchemaError, normalize_schema, redact_url

from ..threads import _ClientBase, connect_http, connect_stdio
from ._args import (
    CLIENT_INFO,
    UsageError,
    build_parser,
    check_flags,
    key_values,
    load_args,
    mode_of,
    parse,
    version_text,
)
from ._auth import add_auth_commands, run_auth_command, stored_auth
from ._elicit import TerminalUrlElicitation
from ._host import (
    VERBOSE_LOG_LEVEL,
    add_config_command,
    config_error_text,
    plain_call_note,
    run_config_command,
    run_host,
)
from ._show import (
    era_word,
    first_line,
    print_call_result,
    print_definitions,
    print_json,
    print_prompt,
    print_read,
    print_schema,
    table,
)
from ._watch import ProgressBar, StatusLine, TaskStatusLine, isatty, stderr_logging

__all__ = ["LAUNCHERS", "main", "stdio_label"]


#: Programs that run a server given as their argument (beside ``python*``): a server they
#: start is named after that script or package, not after them (``server 'python' exited``
#: says nothing).
LAUNCHERS = frozenset({"node", "npx", "uvx", "uv", "deno", "bun", "bunx", "pipx"})
#: Launchers whose argument is a package (``@scope/name@1.2``, ``name==1.0``).
_PACKAGE_RUNNERS = frozenset({"npx", "uvx", "bunx", "pipx"})
#: A launcher's options that take a value: that value is not the script.
_VALUE_OPTIONS = frozenset({"-X", "-W", "--with", "--from", "--python", "-p", "--package",
                            "--directory", "--project", "--spec", "--index-url", "--config"})
#: Launcher subcommands before the script (``uv run x.py``, ``pipx run pkg``, ``bun x pkg``).
_LAUNCHER_VERBS = frozenset({"run", "tool", "x", "exec"})


def stdio_label(argv: Sequence[str]) -> str | None:
    """The name a one-server stdio command's messages give it: for a launcher (a
    ``python*`` or one of :data:`LAUNCHERS`) its script's name without extension, the
    module of ``-m MOD``, or the package of ``npx``/``uvx`` without scope and version
    (``@modelcontextprotocol/server-everything@1`` -> ``server-everything``); None (the
    client's default, argv[0]'s basename) for any other program or when none is found."""
    if not argv:
        return None
    program = os.path.basename(argv[0]).lower().removesuffix(".exe")
    if not (program.startswith("python") or program in LAUNCHERS):
        return None
    rest = list(argv[1:])
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "-m" and i + 1 < len(rest):
            return rest[i + 1]
        if arg.startswith("-m") and len(arg) > 2 and program.startswith("python"):
            return arg[2:]
        if arg == "-c":
            return None
        if arg in _VALUE_OPTIONS:
            i += 2
            continue
        if arg.startswith("-") or (arg in _LAUNCHER_VERBS and not program.startswith("py")):
            i += 1
            continue
        if program in _PACKAGE_RUNNERS or (arg.startswith("@") and "/" in arg):
            name = arg.rsplit("/", 1)[-1] if arg.startswith("@") else arg
            for mark in "@=<>![ ":
                name = name.partition(mark)[0]
            return name or None
        return os.path.splitext(os.path.basename(arg.rstrip("/\\")))[0] or None
    return None


def _split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _parser() -> argparse.ArgumentParser:
    def others(add: Any) -> None:
        add_config_command(add)
        add_auth_commands(add)

    return build_parser(others)


def _connect(args: argparse.Namespace, command: list[str]) -> _ClientBase:
    """The one server of a ``--url`` or ``-- COMMAND`` invocation (not yet connected)."""
    if args.url:
        headers = {}
        for item in args.header:
            name, sep, value = item.partition(":")
            if not sep or not name.strip():
                raise UsageError(f"--header takes NAME:VALUE, got {item!r}")
            headers[name.strip()] = value.strip()
        return connect_http(args.url, headers=headers, timeout=args.timeout,
                            client_info=CLIENT_INFO, auth=stored_auth(args),
                            on_url_elicitation=TerminalUrlElicitation(sys.stderr, sys.stdin),
                            record=args.record)
    return connect_stdio(command, env=key_values(args.env, "--env") or None, cwd=args.cwd,
                         timeout=args.timeout, client_info=CLIENT_INFO,
                         label=stdio_label(command),
                         on_url_elicitation=TerminalUrlElicitation(sys.stderr, sys.stdin),
                         record=args.record)


def _heading(client: _ClientBase, out: TextIO) -> None:
    """``# name version - MCP 2025-06-18 (handshake)``, on a terminal only: a pipe gets
    the table alone (``tools -- CMD | cut -d' ' -f1``)."""
    if not isatty(out):
        return
    info = client.server_info
    out.write(f"# {info.title or info.name} {info.version} - MCP {client.protocol_version}"
              f" ({era_word(client.era)})\n")


def _unknown_tool(client: _ClientBase, name: str, exc: RpcError) -> str | None:
    """A refused call of a tool the server does not list: the error with "did you mean"
    (its tools listed after the failure; nothing is sent again).  None when the server
    lists the tool (the refusal is about something else) or listing fails."""
    try:
        names = [t.name for t in client.list_tools()]
    except MCPError:
        return None
    if name in names:
        return None
    close = difflib.get_close_matches(name, names, n=3)
    hint = f"; did you mean {' or '.join(close)}?" if close else \
        f" (the server has no tool {name!r})"
    return f"{type(exc).__name__}: {exc}{hint}"


def _fixed(client: _ClientBase, name: str, provider: str,
           arguments: dict[str, Any] | None) -> dict[str, Any] | None:
    """``call --provider P`` with one server: the arguments with P's fixes undone (as the
    Host does), by the tool's own schema; as given when the server has no such tool."""
    tool = next((t for t in client.list_tools() if t.name == name), None)
    if tool is None:
        return arguments
    try:
        return normalize_schema(tool.input_schema, provider).fix_arguments(arguments)
    except SchemaError:  # the provider cannot take it: nothing was changed to undo
        return arguments


def _run(args: argparse.Namespace, command: list[str], out: TextIO,
         status: StatusLine) -> int:
    """A server command with one server (``--url`` or ``-- COMMAND``)."""
    cmd = args.cmd
    arguments = args.arguments
    with _connect(args, command) as client:
        if args.verbose and "logging" in client.capabilities:
            client.set_logging_level(VERBOSE_LOG_LEVEL)  # its log messages, as [name] lines
        if cmd == "tools":
            tools = client.list_tools()
            if args.provider:
                print_definitions(tools, args.provider, args.json, out, sys.stderr)
            elif args.json:
                print_json([t.raw for t in tools], out)
            else:
                _heading(client, out)
                table([(t.name, first_line(t.description)) for t in tools], out)
            return 0
        if cmd == "schema":
            tool = next((t for t in client.list_tools() if t.name == args.name), None)
            if tool is None:
                sys.stderr.write(f"mcp-proto: the server has no tool {args.name!r}\n")
                return 1
            print_schema(tool.name, dict(tool.input_schema), args.provider, args.json, out)
            return 0
        if cmd in ("call", "resume"):
            bar = ProgressBar(status, force=args.progress)
            task_line = TaskStatusLine(status)
            try:
                if cmd == "call":
                    if args.provider:
                        arguments = _fixed(client, args.tool, args.provider, arguments)
                    try:
                        result = client.call_tool(args.tool, arguments, on_progress=bar,
                                                  task=args.task or None,
                                                  on_task_status=task_line)
                    except RpcError as exc:
                        text = _unknown_tool(client, args.tool, exc)
                        if text is None:
                            raise
                        sys.stderr.write(f"mcp-proto: {redact_url(text)}\n")
                        return 1
                    plain_call_note(args.tool, args.task, task_line)
                else:
                    result = client.resume_task(args.task_id, on_task_status=task_line)
            finally:
                bar.done()
            print_call_result(result, args.json, out)
            if result.is_error:
                what = args.tool if cmd == "call" else f"task {args.task_id}"
                sys.stderr.write(f"mcp-proto: {what!r} reported an error\n")
                return 1
            return 0
        if cmd in ("resources", "templates", "prompts"):
            items: list[Any]
            if cmd == "resources":
                items = client.list_resources()
                rows = [(r.uri, r.name) for r in items]
            elif cmd == "templates":
                items = client.list_resource_templates()
                rows = [(r.uri_template, r.name) for r in items]
            else:
                items = client.list_prompts()
                rows = [(p.name, first_line(p.description)) for p in items]
            if args.json:
                print_json([i.raw for i in items], out)
            else:
                _heading(client, out)
                table(rows, out)
            return 0
        if cmd == "read":
            print_read(client.read_resource(args.uri), args.json, out)
            return 0
        assert cmd == "prompt"
        print_prompt(client.get_prompt(args.name, arguments), args.json, out)
        return 0


def _dispatch(args: argparse.Namespace, command: list[str], out: TextIO,
              status: StatusLine) -> int:
    if args.cmd == "demo":
        return _demo(args, out, status)
    if args.cmd == "config":
        return run_config_command(args, out)
    if args.cmd in ("login", "logout", "auth"):
        return run_auth_command(args, out, CLIENT_INFO)
    if args.config is not None:
        return run_host(args, out, status)
    return _run(args, command, out, status)


def _demo(args: argparse.Namespace, out: TextIO, status: StatusLine) -> int:
    """A guided tour against the bundled demo server."""
    # the folder holding the mcp_proto_io package (this file is mcp_proto_io/cli/_main.py)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {"PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "mcp_proto_io.cli.demo_server"]
    out.write(f"$ {' '.join(command)}   (the bundled demo server, over stdio)\n\n")
    bar = ProgressBar(status)
    started = time.monotonic()
    with connect_stdio(command, env=env, timeout=args.timeout, client_info=CLIENT_INFO) as c:
        took = (time.monotonic() - started) * 1000
        info = c.server_info
        out.write(f"handshake: {info.name} {info.version}, protocol {c.protocol_version}, "
                  f"{took:.0f} ms\n")
        out.write(f"capabilities: {', '.join(sorted(c.capabilities))}\n\n")
        tools = c.list_tools()
        out.write(f"tools ({len(tools)}, across pages):\n")
        for t in tools:
            out.write(f"  {t.name:12} {t.description or ''}\n")
        out.write("\ncall add {a: 2, b: 40}:\n")
        added = c.call_tool("add", {"a": 2, "b": 40})
        out.write(f"  structured: {json.dumps(added.structured_content)}\n")
        out.write("\ncall slow_count {steps: 5} with progress:\n")
        events: list[Progress] = []

        def on_progress(p: Progress) -> None:
            events.append(p)
            bar(p)

        try:
            counted = c.call_tool("slow_count", {"steps": 5, "delay": 0.15},
                                  on_progress=on_progress)
        finally:
            bar.done()
        for p in events:
            out.write(f"  progress {p.progress:g}/{p.total:g} {p.message or ''}\n")
        out.write(f"  result: {counted.text}\n")
        failed = c.call_tool("fail")
        out.write(f"\ncall fail: is_error={failed.is_error} text={failed.text!r}\n")
        resources = c.list_resources()
        out.write(f"\nresources: {', '.join(r.uri for r in resources)}\n")
        readme = c.read_resource(resources[0].uri)
        first = readme.contents[0]
        if isinstance(first, TextResourceContents):
            out.write(f"  {first.uri}: {first.text.splitlines()[0]}\n")
    out.write("\nclosed: server stopped, no process left behind\n")
    return 0


def _task_id_first(own: list[str]) -> list[str]:
    """``resume ID`` where the server's id starts with ``-`` (ids are opaque: fastmcp's are
    random base64url): as ``--id=ID``, which argparse cannot mistake for an option."""
    i = own.index("resume") if "resume" in own else -1
    if 0 <= i < len(own) - 1:
        token = own[i + 1]
        if token.startswith("-") and token != "-" and not token.startswith("--") \
                and token not in ("-h", "-v"):
            return [*own[:i + 1], f"--id={token}", *own[i + 2:]]
    return own


def _exited(exc: ServerExited) -> str:
    """``server 'dying' exited with code 5: <its last stderr line>``."""
    who = f"server {exc.server!r}" if exc.server else "the server"
    tail = exc.stderr_tail.strip().splitlines()
    return f"{who} exited with code {exc.exit_code}" + (f": {tail[-1]}" if tail else "")


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command; returns the exit status (the console script exits with it)."""
    out = out or sys.stdout
    own, command = _split_command(sys.argv[1:] if argv is None else argv)
    own = _task_id_first(own)
    try:
        parsed = parse(_parser(), own)
    except SystemExit as exc:
        return int(exc.code or 0)
    if isinstance(parsed, str):
        out.write(version_text())
        return 0
    args = parsed
    status = StatusLine()
    try:
        mode = mode_of(args, command)
        check_flags(args, mode)
        if args.cmd == "resume":
            args.task_id = args.task_id_option or args.task_id
            if not args.task_id:
                raise UsageError("resume needs a TASK_ID")
        # before anything starts: a file that is not there is a usage error
        args.arguments = load_args(args.args) if args.cmd in ("call", "prompt") else None
        with stderr_logging(status, verbose=args.verbose, trace=args.trace):
            return _dispatch(args, command, out, status)
    except UsageError as exc:
        sys.stderr.write(f"mcp-proto: {exc}\n")
        return 2
    except ServerExited as exc:
        sys.stderr.write(f"mcp-proto: {_exited(exc)}\n")
        return 1
    except ConfigError as exc:
        sys.stderr.write(f"mcp-proto: {config_error_text(exc)}\n")
        return 1
    except UrlElicitationRequired as exc:  # each URL was shown (and asked about) already
        urls = ", ".join(e.url for e in exc.elicitations) or "none valid"
        sys.stderr.write(redact_url(f"mcp-proto: the server needs you to open a URL first "
                                    f"({urls}); run the command again once done") + "\n")
        return 1
    except MCPError as exc:  # a URL's query values redacted here too (a key may be there)
        sys.stderr.write(f"mcp-proto: {redact_url(f'{type(exc).__name__}: {exc}')}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("mcp-proto: interrupted\n")
        return 130
    except BrokenPipeError:  # `mcp-proto tools ... | head`: the reader has what it wanted
        with contextlib.suppress(OSError, ValueError):  # (no flush at exit to fail again)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
