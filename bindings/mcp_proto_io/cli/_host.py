"""The host side of the ``mcp-proto`` command: ``--config FILE servers|tools|call`` and
``config check|convert``.

::

    mcp-proto --config FILE servers [--check] [--json]     # nothing starts without --check
    mcp-proto --config FILE tools [--server S] [--json]
    mcp-proto --config FILE call PUBLIC_NAME --args JSON
    mcp-proto config check FILE [--dialect D]
    mcp-proto config convert FILE --to DIALECT [--output OUT]

``--config`` takes a path or one of the names of :data:`LOCATION_NAMES` (the host's standard
file).  ``--input ID=VALUE`` answers VS Code's ``${input:ID}``.  No environment value, header
value or input is ever printed.  Exit 1 when a server asked for failed (stderr names it).
"""

from __future__ import annotations

import argparse
import difflib
import json
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TextIO

from mcp_proto import Implementation
from mcp_proto.host import (
    DIALECTS,
    TOOL_TARGETS,
    HostConfig,
    ServerSpec,
    ServerStatus,
    dump_config_with_warnings,
    normalize_schema,
    redact_url,
    tool_definitions,
)

from ..host._config_files import LOCATION_NAMES, load_config, resolve_location, save_config
from ..threads import connect_config

__all__ = ["HostUsageError", "add_config_arguments", "add_config_command", "key_values",
           "run_config_command", "run_host"]

CLIENT_INFO = Implementation(name="mcp-proto-cli", version="0.1.0")


class HostUsageError(Exception):
    """A usage error of the host commands (exit 2)."""


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """The options every host command shares (given before the subcommand)."""
    p.add_argument("--config", metavar="FILE",
                   help="an mcpServers config file, or one of: " + ", ".join(LOCATION_NAMES))
    p.add_argument("--dialect", choices=DIALECTS, help="the config's dialect (default: "
                   "from the file name, then its keys)")
    p.add_argument("--input", action="append", default=[], metavar="ID=VALUE",
                   help="a value for ${input:ID} (VS Code configs; repeatable)")


def add_config_command(sub: Any) -> None:
    """``mcp-proto config check|convert`` and ``mcp-proto servers``."""
    config = sub.add_parser("config", help="check or convert a config file")
    what = config.add_subparsers(dest="config_cmd", required=True, metavar="ACTION")
    check = what.add_parser("check", help="parse, expand and validate (values not shown)")
    check.add_argument("file")
    convert = what.add_parser("convert", help="write the config in another dialect")
    convert.add_argument("file")
    convert.add_argument("--to", required=True, choices=DIALECTS)
    convert.add_argument("--output", "-o", help="write here (atomically) instead of stdout")
    schema = sub.add_parser("schema", help="one tool's input schema as a provider takes it, "
                            "with what was changed and why (needs --config)")
    schema.add_argument("name", help="the tool's public name")
    schema.add_argument("--provider", required=True, choices=TOOL_TARGETS)
    schema.add_argument("--json", action="store_true")
    schema.add_argument("--server", action="append", default=[], metavar="NAME",
                        help="start only this server (repeatable)")
    schema.add_argument("--timeout", type=float, default=60.0,
                        help="seconds per handshake (default 60)")
    servers = sub.add_parser("servers", help="the servers of --config (with --check: start "
                             "each, count its tools, stop it)")
    servers.add_argument("--check", action="store_true")
    servers.add_argument("--json", action="store_true")
    servers.add_argument("--server", action="append", default=[], metavar="NAME",
                         help="only this server (repeatable)")
    servers.add_argument("--timeout", type=float, default=60.0,
                         help="seconds per handshake (default 60)")


def key_values(pairs: list[str], flag: str, form: str = "KEY=VALUE") -> dict[str, str]:
    """``KEY=VALUE`` options (``--env``, ``--input``) as a dict; :class:`HostUsageError`
    naming the option for a malformed one (the value is not echoed: it may be a secret)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise HostUsageError(f"{flag} takes {form}, got {pair.partition('=')[0]!r}")
        out[key] = value
    return out


def _load(args: argparse.Namespace, source: str) -> HostConfig:
    return load_config(resolve_location(source), dialect=args.dialect,
                       inputs=key_values(args.input, "--input", "ID=VALUE"))


def _only(config: HostConfig, names: list[str]) -> HostConfig:
    if not names:
        return config
    unknown = [n for n in names if n not in config.servers]
    if unknown:
        raise HostUsageError(f"no server named {', '.join(map(repr, unknown))} in the config "
                             f"(it has {', '.join(config.servers) or 'none'})")
    return replace(config, servers={n: config.servers[n] for n in names})


def _shown(spec: ServerSpec) -> str:
    """Where a server is, as the file wrote it (templates, never expanded values)."""
    if spec.transport == "stdio":
        command = spec.templates.get("command", spec.command)
        argv = command if isinstance(command, list | tuple) else [command]
        return " ".join(shlex.quote(str(a)) for a in argv)
    return redact_url(str(spec.templates.get("url", spec.url)))  # a key may be in the query


def _failed(status: Mapping[str, ServerStatus], asked: list[str]) -> list[str]:
    return [n for n, s in status.items() if s.state == "failed" and (not asked or n in asked)]


def _report_failed(status: Mapping[str, ServerStatus], failed: list[str]) -> None:
    for name in failed:
        error = status[name].error or "failed"
        sys.stderr.write(f"mcp-proto: server {name!r} failed: {error}\n")


def run_config_command(args: argparse.Namespace, out: TextIO) -> int:
    """``mcp-proto config check|convert``."""
    config = _load(args, args.file)
    if args.config_cmd == "check":
        out.write(f"{config.path or args.file}: {config.dialect}, "
                  f"{len(config.servers)} server{'s' if len(config.servers) != 1 else ''}\n")
        for name, spec in config.servers.items():
            flags = "" if spec.enabled else " (disabled)"
            out.write(f"  {name:24} {spec.transport:5} {_shown(spec)}{flags}\n")
            if spec.env:
                out.write(f"  {'':24} env: {', '.join(spec.env)}\n")
            if spec.headers:
                out.write(f"  {'':24} headers: {', '.join(spec.headers)}\n")
        for warning in config.warnings:
            out.write(f"warning: {warning}\n")
        return 0
    text, warnings = dump_config_with_warnings(config, args.to)
    for warning in (*config.warnings, *warnings):  # what reading it said, then writing it
        sys.stderr.write(f"mcp-proto: warning: {warning}\n")
    if args.output:
        save_config(config, args.output, dialect=args.to)
    else:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


def run_host(args: argparse.Namespace, out: TextIO,
             call: Callable[[Any, argparse.Namespace, TextIO], int]) -> int:
    """``--config FILE servers|tools|call``; ``call(host, args, out)`` runs and prints a
    tool call the way the single-server command does."""
    config = _load(args, args.config)
    asked: list[str] = list(getattr(args, "server", []) or [])
    config = _only(config, asked)
    if args.cmd == "servers" and not args.check:
        rows = [{"name": n, "transport": s.transport, "enabled": s.enabled,
                 "target": _shown(s), "env": sorted(s.env), "headers": sorted(s.headers)}
                for n, s in config.servers.items()]
        if args.json:
            out.write(json.dumps(rows, indent=2) + "\n")
        else:
            for r in rows:
                flag = "" if r["enabled"] else " (disabled)"
                out.write(f"{r['name']:24} {r['transport']:5} {r['target']}{flag}\n")
        return 0
    with connect_config(config, timeout=args.timeout, restart=None,
                        client_info=CLIENT_INFO) as host:
        status = host.servers()
        failed = _failed(status, asked)
        if args.cmd == "servers":
            rows = [{"name": n, "state": s.state, "tools": s.tools, "error": s.error}
                    for n, s in status.items()]
            if args.json:
                out.write(json.dumps(rows, indent=2) + "\n")
            else:
                for r in rows:
                    extra = f"  {r['error']}" if r["error"] else ""
                    out.write(f"{r['name']:24} {r['state']:9} {r['tools']:4} tools{extra}\n")
        elif args.cmd == "schema":
            return _schema(host, args, out)
        elif args.cmd == "tools" and getattr(args, "provider", None):
            definitions, refused = tool_definitions(host.list_tools(), args.provider)
            for name, error in refused:
                sys.stderr.write(f"mcp-proto: {name}: left out for {args.provider}: "
                                 f"{error}\n")
            if args.json:
                out.write(json.dumps(definitions, indent=2, ensure_ascii=False) + "\n")
            else:
                for d in definitions:
                    out.write(f"{definition_name(d):40} strict={definition_strict(d)}\n")
        elif args.cmd == "tools":
            tools = host.list_tools()
            if args.json:
                out.write(json.dumps([{"name": t.name, "server": t.server, "tool": t.tool,
                                       "description": t.description,
                                       "inputSchema": t.input_schema} for t in tools],
                                     indent=2, ensure_ascii=False) + "\n")
            else:
                for t in tools:
                    desc = (t.description or "").strip().splitlines()
                    out.write(f"{t.name:40} {desc[0] if desc else ''}\n")
        else:
            return call(host, args, out)
    _report_failed(status, failed)
    return 1 if failed else 0


def definition_name(definition: dict[str, Any]) -> str:
    """A provider tool definition's name, whatever its shape."""
    inner = definition.get("function")
    return str((inner if isinstance(inner, dict) else definition).get("name"))


def definition_strict(definition: dict[str, Any]) -> str:
    inner = definition.get("function")
    value = (inner if isinstance(inner, dict) else definition).get("strict")
    return "-" if value is None else str(value).lower()


def _schema(host: Any, args: argparse.Namespace, out: TextIO) -> int:
    """``schema NAME --provider TARGET``: one tool's schema for that provider, with notes."""
    tools = {t.name: t for t in host.list_tools()}
    tool = tools.get(args.name)
    if tool is None:
        close = difflib.get_close_matches(args.name, list(tools), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        sys.stderr.write(f"mcp-proto: no tool is named {args.name!r}{hint}\n")
        return 1
    normalized = normalize_schema(tool.input_schema, args.provider)
    notes = [{"path": n.path, "kind": n.kind, "detail": n.detail} for n in normalized.notes]
    if args.json:
        out.write(json.dumps({"name": tool.name, "target": args.provider,
                              "strict": normalized.strict, "schema": normalized.schema,
                              "notes": notes}, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(json.dumps(normalized.schema, indent=2, ensure_ascii=False) + "\n")
        out.write(f"# {tool.name} for {args.provider}: strict={normalized.strict}, "
                  f"{len(notes)} note{'s' if len(notes) != 1 else ''}\n")
        for n in notes:
            out.write(f"# {n['path'] or '/'}: {n['kind']}: {n['detail']}\n")
    return 0
