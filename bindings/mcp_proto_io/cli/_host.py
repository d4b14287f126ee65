"""The host side of the ``mcp-proto`` command: every server command with ``--config FILE``, and
``config check|convert``.

::

    mcp-proto --config FILE servers [--check] [--json]     # nothing starts without --check
    mcp-proto --config FILE tools [--server S] [--provider P] [--json]
    mcp-proto --config FILE call PUBLIC_NAME --args JSON   # starts only the tool's server
    mcp-proto --config FILE resources | templates | prompts [--json]
    mcp-proto --config FILE read URI [--server S] | prompt NAME [--args JSON]
    mcp-proto --config FILE schema NAME [--provider P]
    mcp-proto config check FILE [--dialect D] | config convert FILE --to DIALECT [-o OUT]

``--config`` takes a path or one of the names of :data:`LOCATION_NAMES` (the host's standard
file: the project's first, in ``--workspace`` or the current directory or the nearest parent
folder that has one).  VS Code inputs come from ``--input ID=VALUE``, ``MCP_PROTO_INPUT_<ID>``,
else a prompt on a terminal; once the config is loaded the ``MCP_PROTO_INPUT_*`` variables are
removed from the command's environment, so no server inherits them.  ``servers`` (without
``--check``) and ``config check|convert`` need no input nor variable: nothing starts.  The
config's warnings show on stderr (``mcp-proto: warning: ...``).  No environment value, header
value or input is ever printed.  Exit 1 when a server asked for failed (stderr names it).
"""

from __future__ import annotations

import argparse
import difflib
import getpass
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TextIO, TypeVar

from mcp_proto.host import (
    DIALECTS,
    INPUT_ENV_PREFIX,
    ConfigError,
    ConfigProblem,
    HostConfig,
    InputSpec,
    ServerSpec,
    ServerStatus,
    dump_config_with_warnings,
    input_env_name,
    redact_url,
)

from ..host._config_files import find_config, load_config, save_config
from ..threads import Host, connect_config
from ._args import CLIENT_INFO, UsageError, key_values
from ._elicit import TerminalUrlElicitation
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
from ._watch import ProgressBar, StatusLine, TaskStatusLine, WaitingLine

__all__ = ["CHECK_COLUMNS", "LAZY", "VERBOSE_LOG_LEVEL", "add_config_command",
           "config_error_text", "load", "plain_call_note", "run_config_command", "run_host"]

_T = TypeVar("_T")

#: The commands that start only what they need (``start="lazy"``): the Host starts the
#: server that owns the name (or the URI) at first use.  The others list, so start all.
LAZY = frozenset({"call", "read", "prompt"})
#: The least severe log message ``-v`` asks a server for (``debug`` would be every detail of
#: some servers' work; ``info`` is what they say happened).
VERBOSE_LOG_LEVEL = "info"
#: The header of the ``servers --check`` table.
CHECK_COLUMNS = ("NAME", "STATE", "SERVER", "PROTOCOL", "ERA", "TOOLS", "ERROR")


def add_config_command(add: Any) -> None:
    """``mcp-proto config check|convert`` (``add`` as :func:`._args.build_parser` gives)."""
    config = add("config")
    what = config.add_subparsers(dest="config_cmd", required=True, metavar="ACTION")
    check = add("check", what, "config check")
    check.add_argument("file", help="a config file, or a standard name (vscode, cursor ...)")
    convert = add("convert", what, "config convert")
    convert.add_argument("file", help="a config file, or a standard name (vscode, cursor ...)")
    convert.add_argument("--to", required=True, choices=DIALECTS, metavar="DIALECT",
                         help="the dialect to write: " + ", ".join(DIALECTS))
    convert.add_argument("--output", "-o", metavar="OUT",
                         help="write here (atomically) instead of stdout")


def _ask(spec: InputSpec) -> str | None:
    """A VS Code input asked on the terminal (not echoed when it is a password); None
    when stdin is not a terminal (the load then says how to give it)."""
    if not sys.stdin.isatty():
        return None
    what = spec.description or spec.id
    prompt = f"{what} (${{input:{spec.id}}}): "
    try:
        if spec.password:
            answer = getpass.getpass(prompt, stream=sys.stderr)
        else:
            sys.stderr.write(prompt)
            sys.stderr.flush()
            answer = sys.stdin.readline().rstrip("\r\n")
    except EOFError:
        return None
    return answer or None


def load(args: argparse.Namespace, source: str, *, keep: bool = False) -> HostConfig:
    """The config ``source`` names (a path or a standard name: the project file of
    ``--workspace`` or the current directory or its nearest parent, then the user's), with
    ``--dialect`` and ``--input``; VS Code inputs still missing are asked on a terminal.
    ``keep``: unset variables and missing inputs stay templates (``servers`` without
    ``--check``, ``config check|convert``: nothing starts, nothing is asked).  Then the
    ``MCP_PROTO_INPUT_*`` variables leave this process's environment (no server inherits
    them).  Raises :class:`~mcp_proto.host.ConfigError` (exit 1)."""
    workspace = args.workspace
    try:
        return load_config(find_config(source, workspace=workspace), dialect=args.dialect,
                           inputs=key_values(args.input, "--input", "ID=VALUE"),
                           workspace=workspace, on_missing="keep" if keep else "error",
                           ask=None if keep else _ask)
    finally:
        for name in [n for n in os.environ if n.startswith(INPUT_ENV_PREFIX)]:
            del os.environ[name]


def _input_advice(ident: str) -> str:
    return f"--input {ident}=VALUE or {input_env_name(ident)}"


def config_error_text(exc: ConfigError) -> str:
    """A :class:`ConfigError` as the CLI says it: a missing VS Code input with the CLI's
    ways to give it (``--input ID=VALUE``, ``MCP_PROTO_INPUT_<ID>``, or asked on a
    terminal), not the library's (``inputs=``, ``ask=``)."""
    if not any(p.input for p in exc.problems):
        return str(exc)
    problems = [ConfigProblem(p.server, p.field, f"input {p.input!r} was not given: "
                              f"{_input_advice(p.input)} (asked when stdin is a terminal)")
                if p.input else p for p in exc.problems]
    return str(ConfigError(problems, exc.path))


def _only(config: HostConfig, names: list[str]) -> HostConfig:
    if not names:
        return config
    unknown = [n for n in names if n not in config.servers]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(config.servers), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"no server named {', '.join(map(repr, unknown))} in the config "
                         f"(it has {', '.join(config.servers) or 'none'}){hint}")
    return replace(config, servers={n: config.servers[n] for n in names})


def _shown(spec: ServerSpec) -> str:
    """Where a server is, as the file wrote it (templates, never expanded values)."""
    if spec.transport == "stdio":
        command = spec.templates.get("command", spec.command)
        argv = command if isinstance(command, list | tuple) else [command]
        return " ".join(shlex.quote(str(a)) for a in argv)
    return redact_url(str(spec.templates.get("url", spec.url)))  # a key may be in the query


def _failed(status: Mapping[str, ServerStatus], asked: list[str]) -> list[str]:
    """The servers asked for (all when none was) that failed or are still starting."""
    return [n for n, s in status.items()
            if s.state in ("failed", "starting") and (not asked or n in asked)]


def _report_failed(status: Mapping[str, ServerStatus], failed: list[str],
                   timeout: float) -> None:
    for name in failed:
        if status[name].state == "starting":
            sys.stderr.write(f"mcp-proto: server {name!r} was still starting after "
                             f"{timeout:g} s (--timeout)\n")
        else:
            error = status[name].error or "failed"
            sys.stderr.write(f"mcp-proto: server {name!r} failed: {error}\n")


def _kept_lines(config: HostConfig) -> tuple[list[str], list[ConfigProblem]]:
    """What ``config check`` says of each template kept as written: the inputs not given
    (warnings, each once: they are asked, or read from the environment, when a command
    runs) and the other values missing (problems: a command would fail)."""
    inputs: list[str] = []
    missing: list[ConfigProblem] = []
    for p in config.kept:
        if p.input:
            line = f"input {p.input!r} not given ({input_env_name(p.input)} or --input " \
                   f"{p.input}=VALUE)"
            if line not in inputs:
                inputs.append(line)
        else:
            missing.append(p)
    return inputs, missing


def run_config_command(args: argparse.Namespace, out: TextIO) -> int:
    """``mcp-proto config check|convert``: both load with the templates kept (no secret
    needed).  ``check`` exits 1 when a variable a server needs is not set."""
    config = load(args, args.file, keep=True)
    if args.config_cmd == "check":
        out.write(f"{config.path or args.file}: {config.dialect}, "
                  f"{len(config.servers)} server{'s' if len(config.servers) != 1 else ''}\n")
        rows: list[tuple[str, ...]] = []
        for name, spec in config.servers.items():
            flags = "" if spec.enabled else " (disabled)"
            rows.append((f"  {name}", spec.transport, _shown(spec) + flags))
            if spec.env:
                rows.append(("", f"env: {', '.join(spec.env)}"))
            if spec.headers:
                rows.append(("", f"headers: {', '.join(spec.headers)}"))
        table(rows, out)
        inputs, missing = _kept_lines(config)
        for warning in (*config.other_warnings, *inputs):
            out.write(f"warning: {warning}\n")
        if missing:  # as a command would say it (it would fail)
            sys.stderr.write(f"mcp-proto: {ConfigError(missing, config.path)}\n")
            return 1
        return 0
    text, warnings = dump_config_with_warnings(config, args.to)
    # what reading it said, then writing it; not the templates kept: that is the point
    for warning in (*config.other_warnings, *warnings):
        sys.stderr.write(f"mcp-proto: warning: {warning}\n")
    if args.output:
        try:
            save_config(config, args.output, dialect=args.to)
        except OSError as exc:
            sys.stderr.write(f"mcp-proto: cannot write {args.output}: "
                             f"{exc.strerror or type(exc).__name__}\n")
            return 1
    else:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


def _list_servers(config: HostConfig, as_json: bool, out: TextIO) -> int:
    rows = [{"name": n, "transport": s.transport, "enabled": s.enabled,
             "target": _shown(s), "env": sorted(s.env), "headers": sorted(s.headers)}
            for n, s in config.servers.items()]
    if as_json:
        print_json(rows, out)
    else:
        table([(r["name"], r["transport"], str(r["target"]) + ("" if r["enabled"]
                                                                else " (disabled)"))
               for r in rows], out)
    return 0


def run_host(args: argparse.Namespace, out: TextIO, status: StatusLine) -> int:
    """Every server command with ``--config``.  ``status`` is the stderr line the waiting
    line, the progress bar and the log records share."""
    listing = args.cmd == "servers" and not args.check  # nothing starts: nothing needed
    config = _only(load(args, args.config, keep=listing), list(args.server))
    for warning in config.other_warnings:
        sys.stderr.write(f"mcp-proto: warning: {warning}\n")
    if listing:
        return _list_servers(config, args.json, out)
    disabled = [n for n in args.server if not config.servers[n].enabled]
    if disabled and args.cmd != "servers":
        for name in disabled:
            sys.stderr.write(f"mcp-proto: server {name!r} is disabled\n")
        return 1
    host = connect_config(config, timeout=args.timeout, restart=None,
                          client_info=CLIENT_INFO,
                          start="lazy" if args.cmd in LAZY else "eager",
                          log_level=VERBOSE_LOG_LEVEL if args.verbose else None,
                          on_url_elicitation=TerminalUrlElicitation(sys.stderr, sys.stdin),
                          record=args.record)
    try:
        with WaitingLine(host.servers, status):
            host.open()
        code = _run(host, args, out, status)
        if code or args.cmd in LAZY:
            return code
        states = host.servers()
    finally:
        host.close()
    failed = _failed(states, list(args.server))
    _report_failed(states, failed, args.timeout)
    return 1 if failed else 0


def _run(host: Host, args: argparse.Namespace, out: TextIO, status: StatusLine) -> int:
    """One command through the host.  Only the host's calls run inside the waiting line;
    what they return is printed after it is erased (never on the waiting line's row)."""
    cmd = args.cmd

    def wait(call: Callable[[], _T]) -> _T:
        with WaitingLine(host.servers, status):
            return call()

    if cmd == "servers":
        _check_table(wait(host.servers), args.json, out)
        return 0
    if cmd == "call":
        return _call(host, args, out, status)
    timeout = args.timeout  # each listing waits at most this long for servers starting
    if cmd == "schema":
        return _schema(wait(lambda: host.list_tools(timeout=timeout)), args, out)
    if cmd == "tools":
        tools = wait(lambda: host.list_tools(timeout=timeout))
        if args.provider:
            print_definitions(tools, args.provider, args.json, out, sys.stderr)
        elif args.json:  # the tool as its server defined it, under its public name
            print_json([{**t.definition.raw, "name": t.name, "server": t.server,
                         "tool": t.tool} for t in tools], out)
        else:
            table([(t.name, t.server, first_line(t.description)) for t in tools], out)
    elif cmd == "resources":
        resources = wait(lambda: host.list_resources(timeout=timeout))
        if args.json:
            print_json([{**r.definition.raw, "server": r.server} for r in resources], out)
        else:
            table([(r.uri, r.server, r.name) for r in resources], out)
    elif cmd == "templates":
        templates = wait(lambda: host.list_resource_templates(timeout=timeout))
        if args.json:
            print_json([{**t.definition.raw, "server": t.server} for t in templates], out)
        else:
            table([(t.uri_template, t.server, t.name) for t in templates], out)
    elif cmd == "prompts":
        prompts = wait(lambda: host.list_prompts(timeout=timeout))
        if args.json:
            print_json([{**p.definition.raw, "name": p.name, "server": p.server,
                         "prompt": p.prompt} for p in prompts], out)
        else:
            table([(p.name, p.server, first_line(p.definition.description))
                   for p in prompts], out)
    elif cmd == "read":
        server = args.server[0] if len(args.server) == 1 else None
        print_read(wait(lambda: host.read_resource(args.uri, server=server,
                                                   timeout=timeout)), args.json, out)
    else:
        assert cmd == "prompt"
        print_prompt(wait(lambda: host.get_prompt(args.name, args.arguments,
                                                  timeout=timeout)), args.json, out)
    return 0


def _check_table(states: Mapping[str, ServerStatus], as_json: bool, out: TextIO) -> None:
    """``servers --check``: name, state, the server's name and version, protocol version,
    era (``handshake``/``stateless``, as the one-server heading says; JSON: the library's
    ``legacy``/``modern``), tool count, and the error of a failed one."""
    rows = []
    for name, s in states.items():
        info = s.server_info
        rows.append({"name": name, "state": s.state, "tools": s.tools, "error": s.error,
                     "server": None if info is None else {"name": info.name,
                                                          "version": info.version},
                     "protocolVersion": s.protocol_version, "era": s.era})
    if as_json:
        print_json(rows, out)
        return
    table([(r["name"], r["state"],
            "-" if s.server_info is None else f"{s.server_info.name} {s.server_info.version}",
            s.protocol_version or "-", era_word(s.era), s.tools, s.error or "")
           for r, s in zip(rows, states.values(), strict=True)], out, headers=CHECK_COLUMNS)


def plain_call_note(name: str, task: bool, task_line: TaskStatusLine) -> None:
    """``call --task`` that ran plainly (no task status came: the tool, or its server,
    does not run calls as tasks): one note on stderr, so the flag is not silently moot."""
    if task and not task_line.seen:
        sys.stderr.write(f"mcp-proto: {name!r} does not run as a task; called it plainly\n")


def _call(host: Host, args: argparse.Namespace, out: TextIO, status: StatusLine) -> int:
    """``--config FILE call NAME``: one call through the host, printed as a plain call; the
    waiting line while the tool's server starts."""
    bar = ProgressBar(status, force=args.progress)
    task_line = TaskStatusLine(status)
    try:
        with WaitingLine(host.servers, status):
            result = host.call_tool(args.tool, args.arguments, on_progress=bar,
                                    timeout=args.timeout, provider=args.provider,
                                    task=args.task or None, on_task_status=task_line)
    finally:
        bar.done()
    plain_call_note(args.tool, args.task, task_line)
    print_call_result(result, args.json, out)
    if result.is_error:
        sys.stderr.write(f"mcp-proto: {args.tool!r} reported an error\n")
        return 1
    return 0


def _schema(tools_listed: list[Any], args: argparse.Namespace, out: TextIO) -> int:
    """``schema NAME [--provider TARGET]``: one tool's schema, its own or for that provider."""
    tools = {t.name: t for t in tools_listed}
    tool = tools.get(args.name)
    if tool is None:
        close = difflib.get_close_matches(args.name, list(tools), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        sys.stderr.write(f"mcp-proto: no tool is named {args.name!r}{hint}\n")
        return 1
    print_schema(tool.name, dict(tool.input_schema), args.provider, args.json, out)
    return 0
