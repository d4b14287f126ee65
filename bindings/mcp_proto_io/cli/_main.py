"""The ``mcp-proto`` command: talk to an MCP server from the shell.

::

    mcp-proto demo                                   # the bundled demo server, end to end
    mcp-proto tools [--json] -- COMMAND [ARGS...]    # list a stdio server's tools
    mcp-proto tools --url http://host/mcp            # ... or a Streamable HTTP server's
    mcp-proto call TOOL [--args JSON] [--json] -- COMMAND [ARGS...]
    mcp-proto resources | templates | prompts [--json] -- COMMAND [ARGS...]
    mcp-proto read URI [--json] -- COMMAND [ARGS...]
    mcp-proto prompt NAME [--args JSON] [--json] -- COMMAND [ARGS...]
    mcp-proto --config FILE servers [--check] [--json]   # many servers from a config file
    mcp-proto --config FILE tools [--json]               # their tools, by public name
    mcp-proto --config FILE call NAME --args JSON
    mcp-proto --config FILE tools --provider openai-strict --json   # as a provider's tools
    mcp-proto --config FILE schema NAME --provider gemini-openapi  # one schema + its notes
    mcp-proto config check FILE | config convert FILE --to DIALECT
    mcp-proto login --url URL                # authorize (browser, loopback callback), keep tokens
    mcp-proto logout --url URL | auth status # forget them | what is stored (never the tokens)

Every ``--url`` command uses the tokens ``login`` stored (and refreshes them); without any, a
server that answers 401 fails with a line saying to log in.

Exit status: 0 on success, 1 when the server or the call failed (one line on stderr says why),
2 for a usage error.  A tool result with ``isError`` prints the result and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from mcp_proto import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    Implementation,
    MCPError,
    Progress,
    ResourceLink,
    ServerExited,
    TaskStatus,
    TextContent,
    TextResourceContents,
)
from mcp_proto.host import TOOL_TARGETS, ConfigError, tool_definitions

from ..threads import Host, _ClientBase, connect_http, connect_stdio
from ._auth import add_auth_commands, run_auth_command, stored_auth
from ._host import (
    HostUsageError,
    add_config_arguments,
    add_config_command,
    key_values,
    run_config_command,
    run_host,
)

__all__ = ["main"]

CLIENT_INFO = Implementation(name="mcp-proto-cli", version="0.1.0")

#: Width of the progress bar drawn on a terminal.
BAR_WIDTH = 30


_UsageError = HostUsageError  # one usage error (exit 2) for every command


class ProgressBar:
    """Draws ``notifications/progress`` on a terminal's stderr; silent when not a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        stream = sys.stderr if stream is None else stream  # the stderr of now, not of the import
        self.stream = stream
        self.active = stream.isatty()
        self.drawn = False

    def __call__(self, event: Progress) -> None:
        if not self.active:
            return
        if event.total:
            frac = max(0.0, min(1.0, event.progress / event.total))
            filled = int(frac * BAR_WIDTH)
            bar = "#" * filled + "." * (BAR_WIDTH - filled)
            text = f"[{bar}] {event.progress:g}/{event.total:g}"
        else:
            text = f"[{event.progress:g}]"
        if event.message:
            text += f" {event.message}"
        self.stream.write("\r\x1b[2K" + text[:200])
        self.stream.flush()
        self.drawn = True

    def done(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False


class TaskStatusLine:
    """Prints a task's status changes on stderr (one line each: they matter after the run
    too, for the task id to resume with)."""

    def __init__(self, bar: ProgressBar, stream: TextIO | None = None) -> None:
        self.bar = bar
        self.stream = sys.stderr if stream is None else stream

    def __call__(self, event: TaskStatus) -> None:
        self.bar.done()
        task = event.task
        text = f"task {task.task_id}: {task.status}"
        if task.status_message:
            text += f" - {task.status_message}"
        self.stream.write(text[:300] + "\n")
        self.stream.flush()


def _split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _json_arg(text: str | None, what: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise _UsageError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _UsageError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _parse_env(pairs: list[str]) -> dict[str, str] | None:
    return key_values(pairs, "--env") or None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-proto",
        description="Talk to an MCP server. The server command follows `--`.",
        epilog="example: mcp-proto tools -- npx -y @modelcontextprotocol/server-everything",
    )
    add_config_arguments(p)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--json", action="store_true", help="print JSON instead of text")
        sp.add_argument("--timeout", type=float, default=60.0,
                        help="seconds per request (default 60)")
        sp.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="extra environment variable for the server (repeatable)")
        sp.add_argument("--cwd", help="working directory of the server")
        sp.add_argument("--url", help="a Streamable HTTP endpoint instead of a command")
        sp.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                        help="extra HTTP header (repeatable; with --url)")
        sp.add_argument("--server", action="append", default=[], metavar="NAME",
                        help="with --config: start only this server (repeatable)")
        sp.add_argument("--provider", choices=TOOL_TARGETS,
                        help="tools: print them as that provider's tool definitions")
        sp.add_argument("--store", metavar="DIR",
                        help="with --url: the token store `mcp-proto login` wrote")
        sp.add_argument("--allow-http", action="store_true",
                        help="with --url: allow plain http to a non-loopback "
                             "authorization server")

    demo = sub.add_parser("demo", help="run the bundled demo server and show a session")
    demo.add_argument("--timeout", type=float, default=60.0, help=argparse.SUPPRESS)
    for name, text in [("tools", "list the tools"), ("resources", "list the resources"),
                       ("templates", "list the resource templates"),
                       ("prompts", "list the prompts")]:
        common(sub.add_parser(name, help=text))
    call = sub.add_parser("call", help="call a tool")
    call.add_argument("tool")
    call.add_argument("--args", help="arguments as a JSON object")
    call.add_argument("--task", action="store_true",
                      help="run it as a task where the tool allows (status on stderr)")
    common(call)
    resume = sub.add_parser("resume", help="wait for a task another run started")
    resume.add_argument("task_id", nargs="?")
    resume.add_argument("--id", dest="task_id_option", metavar="TASK_ID",
                        help="the task id (for an id that starts with '-': --id=-abc)")
    common(resume)
    read = sub.add_parser("read", help="read a resource")
    read.add_argument("uri")
    common(read)
    prompt = sub.add_parser("prompt", help="get a prompt")
    prompt.add_argument("name")
    prompt.add_argument("--args", help="arguments as a JSON object of strings")
    common(prompt)
    add_config_command(sub)
    add_auth_commands(sub)
    return p


# -- printing ---------------------------------------------------------------------------------


def _block_text(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource link {block.uri} ({block.name})]"
    if isinstance(block, EmbeddedResource):
        res = block.resource
        if isinstance(res, TextResourceContents):
            return f"[resource {res.uri}]\n{res.text}"
        return f"[resource {res.uri}, {len(res.blob) * 3 // 4} bytes]"
    return f"[{block.type} content]"


def _print_call_result(result: CallToolResult, as_json: bool, out: TextIO) -> None:
    if as_json:
        out.write(json.dumps(result.raw, indent=2, ensure_ascii=False) + "\n")
        return
    for block in result.content:
        out.write(_block_text(block) + "\n")
    if result.structured_content is not None and not result.content:
        out.write(json.dumps(result.structured_content, indent=2) + "\n")


def _heading(client: _ClientBase, out: TextIO) -> None:
    info = client.server_info
    era = "stateless era" if client.era == "modern" else "handshake era"
    out.write(f"# {info.title or info.name} {info.version} - MCP {client.protocol_version}"
              f" ({era})\n")


def _run(args: argparse.Namespace, command: list[str], out: TextIO) -> int:
    bar = ProgressBar()
    client: _ClientBase
    if args.url:
        if command:
            raise _UsageError("give either --url or a command after `--`, not both")
        headers = {}
        for item in args.header:
            name, sep, value = item.partition(":")
            if not sep or not name.strip():
                raise _UsageError(f"--header takes NAME:VALUE, got {item!r}")
            headers[name.strip()] = value.strip()
        client = connect_http(args.url, headers=headers, timeout=args.timeout,
                              client_info=CLIENT_INFO, auth=stored_auth(args))
    else:
        if not command:
            raise _UsageError("give the server command after `--` (e.g. "
                              "`mcp-proto tools -- mcp-server-time`) or --url")
        client = connect_stdio(command, env=_parse_env(args.env), cwd=args.cwd,
                               timeout=args.timeout, client_info=CLIENT_INFO)
    with client:
        if args.cmd == "tools" and args.provider:
            definitions, refused = tool_definitions(client.list_tools(), args.provider)
            for name, error in refused:
                sys.stderr.write(f"mcp-proto: {name}: left out for {args.provider}: {error}\n")
            out.write(json.dumps(definitions, indent=2, ensure_ascii=False) + "\n")
            return 0
        if args.cmd == "tools":
            tools = client.list_tools()
            if args.json:
                out.write(json.dumps([t.raw for t in tools], indent=2, ensure_ascii=False)
                          + "\n")
            else:
                _heading(client, out)
                for t in tools:
                    desc = (t.description or "").strip().splitlines()
                    out.write(f"{t.name:30} {desc[0] if desc else ''}\n")
            return 0
        if args.cmd in ("call", "resume"):
            status = TaskStatusLine(bar)
            try:
                if args.cmd == "call":
                    result = client.call_tool(args.tool, _json_arg(args.args, "--args"),
                                              on_progress=bar, task=args.task or None,
                                              on_task_status=status)
                else:
                    result = client.resume_task(args.task_id, on_task_status=status)
            finally:
                bar.done()
            _print_call_result(result, args.json, out)
            if result.is_error:
                what = args.tool if args.cmd == "call" else f"task {args.task_id}"
                sys.stderr.write(f"mcp-proto: {what!r} reported an error\n")
                return 1
            return 0
        if args.cmd in ("resources", "templates", "prompts"):
            items: list[Any]
            if args.cmd == "resources":
                items = client.list_resources()
                rows = [(r.uri, r.name) for r in items]
            elif args.cmd == "templates":
                items = client.list_resource_templates()
                rows = [(r.uri_template, r.name) for r in items]
            else:
                items = client.list_prompts()
                rows = [(p.name, p.description or "") for p in items]
            if args.json:
                out.write(json.dumps([i.raw for i in items], indent=2, ensure_ascii=False)
                          + "\n")
            else:
                _heading(client, out)
                for a, b in rows:
                    out.write(f"{a:40} {b}\n")
            return 0
        if args.cmd == "read":
            res = client.read_resource(args.uri)
            for c in res.contents:
                if args.json:
                    out.write(json.dumps({"uri": c.uri, "mimeType": c.mime_type,
                                          **({"text": c.text}
                                             if isinstance(c, TextResourceContents)
                                             else {"blob": c.blob})}) + "\n")
                elif isinstance(c, TextResourceContents):
                    out.write(c.text + "\n")
                else:
                    out.write(f"[{c.uri}: {len(c.blob) * 3 // 4} bytes of "
                              f"{c.mime_type or 'binary'}]\n")
            return 0
        assert args.cmd == "prompt"
        prompt_args = _json_arg(args.args, "--args")
        got = client.get_prompt(args.name, prompt_args)
        if args.json:
            out.write(json.dumps([{"role": m.role, "text": _block_text(m.content)}
                                  for m in got.messages], indent=2) + "\n")
        else:
            for m in got.messages:
                out.write(f"{m.role}: {_block_text(m.content)}\n")
        return 0


def _host_call(host: Host, args: argparse.Namespace, out: TextIO) -> int:
    """``--config FILE call NAME``: one call through the host, printed as a plain call."""
    bar = ProgressBar()
    try:
        result = host.call_tool(args.tool, _json_arg(args.args, "--args"), on_progress=bar,
                                timeout=args.timeout)
    finally:
        bar.done()
    _print_call_result(result, args.json, out)
    if result.is_error:
        sys.stderr.write(f"mcp-proto: {args.tool!r} reported an error\n")
        return 1
    return 0


def _dispatch(args: argparse.Namespace, command: list[str], out: TextIO) -> int:
    if args.cmd == "demo":
        return _demo(args, out)
    if args.cmd == "config":
        return run_config_command(args, out)
    if args.cmd in ("login", "logout", "auth"):
        return run_auth_command(args, out, CLIENT_INFO)
    if args.config is not None or args.cmd in ("servers", "schema"):
        if args.config is None:
            raise _UsageError(f"`{args.cmd}` needs --config FILE")
        if args.cmd not in ("servers", "tools", "call", "schema"):
            raise _UsageError(f"`{args.cmd}` takes one server (`-- COMMAND` or --url); with "
                              "--config use servers, tools or call")
        if command or getattr(args, "url", None):
            raise _UsageError("give either --config or a server (`-- COMMAND` / --url)")
        return run_host(args, out, _host_call)
    return _run(args, command, out)


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    """A guided tour against the bundled demo server."""
    # the folder holding the mcp_proto_io package (this file is mcp_proto_io/cli/_main.py)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {"PYTHONPATH": here + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-m", "mcp_proto_io.cli.demo_server"]
    out.write(f"$ {' '.join(command)}   (the bundled demo server, over stdio)\n\n")
    bar = ProgressBar()
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
                and token not in ("-h",):
            return [*own[:i + 1], f"--id={token}", *own[i + 2:]]
    return own


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command; returns the exit status (the console script exits with it)."""
    out = out or sys.stdout
    own, command = _split_command(sys.argv[1:] if argv is None else argv)
    own = _task_id_first(own)
    try:
        args = _parser().parse_args(own)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.cmd == "resume":
        args.task_id = args.task_id_option or args.task_id
        if not args.task_id:
            sys.stderr.write("mcp-proto: resume needs a TASK_ID\n")
            return 2
    try:
        return _dispatch(args, command, out)
    except HostUsageError as exc:
        sys.stderr.write(f"mcp-proto: {exc}\n")
        return 2
    except ServerExited as exc:
        sys.stderr.write(f"mcp-proto: the server exited (code {exc.exit_code})"
                         + (f": {exc.stderr_tail.strip().splitlines()[-1]}"
                            if exc.stderr_tail.strip() else "") + "\n")
        return 1
    except ConfigError as exc:
        sys.stderr.write(f"mcp-proto: {exc}\n")
        return 1
    except MCPError as exc:
        sys.stderr.write(f"mcp-proto: {type(exc).__name__}: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("mcp-proto: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
