"""A small stdio MCP server (handshake era) for the host tests.  Standard library only.

Usage: ``python host_server.py [--name NAME] [--die-on-call N] [--log FILE] [--slow-start S]
[--fail-start] [--tools a,b,c] ...`` (every option below)

* ``tools/list``: ``echo {text}``, ``whoami`` and ``add_tool``, or the names given by
  ``--tools`` (each an echo), plus ``extra`` once ``add_tool`` was called.
* ``echo {text}`` -> text ``"<NAME>:<text>"``; ``whoami`` -> text ``"<NAME> <pid>"``;
  ``add_tool`` adds ``extra`` and sends ``notifications/tools/list_changed``, then answers.
* ``--die-on-call N``: on every N-th ``tools/call`` of this process (N, 2N ...; with a fresh
  process the count starts again) it exits with status 7 without answering, after writing
  ``dying on call <k>`` to stderr.
* ``--log FILE``: each request is appended to FILE as one JSON line ``{"pid", "id",
  "method", "arguments"}`` *before* it is handled, so the log shows every request the server
  ever received, including the one it died on.
* ``--slow-start S``: sleep S seconds before reading stdin (a slow handshake).
* ``--fail-start``: write ``cannot start: missing token`` to stderr and exit 2 at once.
* ``--announce-after-list``: right after answering the first ``tools/list``, add the tool
  ``late`` and send ``notifications/tools/list_changed`` (a change the client sees while
  its start is still finishing).
* ``--fail-relist``: every ``tools/list`` after the first answers -32603.
* ``--call-delay S``: wait S seconds between logging a ``tools/call`` and answering it (a
  kill then often lands after the log line: a replay would show in the log).
* ``--logging``: declare the ``logging`` capability and answer ``logging/setLevel``
  (``--refuse-level``: answer it -32602 instead).
* ``--fail-list-echo VAR``: every ``tools/list`` answers -32603 with a message holding the
  value of the environment variable VAR (a server that echoes a secret in an error).
* ``--resources``: declare ``resources`` and ``prompts``: one resource
  ``host://<NAME>/readme``, one template ``host://<NAME>/item/{id}`` (each read answers
  ``"<NAME>:<uri>"``) and one prompt ``greet``.  ``--hang-lists``: never answer
  ``resources/list``, ``resources/templates/list`` nor ``prompts/list`` (keep reading).
* ``--instructions TEXT``: the handshake's ``instructions``.
* ``--model-tools``: add the tools of the model-facing tests: ``read_note`` (annotated
  ``readOnlyHint``), ``delete_note`` (``destructiveHint``), ``weather {city}`` (an
  ``outputSchema`` of ``{"temp": number}``; answers ``{"temp": 21.5}``), ``bad_weather``
  (the same schema; answers ``{"temp": "hot"}``), ``big {size}`` (a text of ``size``
  characters: lines ``line <n>`` numbered from 0, then ``END``) and ``add {a, b}``
  (integers, both required; answers their sum as text).
* Unknown methods (``server/discover`` too) -> -32601.  Exit 0 on stdin EOF.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

_WEATHER = {"inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}},
                             "required": ["temp"]}}
MODEL_TOOLS: dict[str, dict[str, Any]] = {
    "read_note": {"inputSchema": {"type": "object", "properties": {}},
                  "annotations": {"readOnlyHint": True}},
    "delete_note": {"inputSchema": {"type": "object", "properties": {}},
                    "annotations": {"readOnlyHint": False, "destructiveHint": True}},
    "weather": _WEATHER,
    "bad_weather": _WEATHER,
    "big": {"inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    "add": {"inputSchema": {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}}},
}


def _big(size: int) -> str:
    parts: list[str] = []
    length = 0
    n = 0
    while length < size:
        line = f"line {n}\n"
        parts.append(line)
        length += len(line)
        n += 1
    return ("".join(parts))[:max(0, size - 3)] + "END"


def model_answer(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The result of one of :data:`MODEL_TOOLS`."""
    if name == "weather":
        value: dict[str, Any] = {"temp": 21.5}
        return {"content": [{"type": "text", "text": json.dumps(value)}],
                "structuredContent": value}
    if name == "bad_weather":
        value = {"temp": "hot"}
        return {"content": [{"type": "text", "text": json.dumps(value)}],
                "structuredContent": value}
    if name == "big":
        return {"content": [{"type": "text", "text": _big(int(arguments.get("size", 0)))}]}
    if name == "add":
        return {"content": [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]}
    return {"content": [{"type": "text", "text": f"{name} done"}]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="host-server")
    parser.add_argument("--die-on-call", type=int, default=0)
    parser.add_argument("--log", default=None)
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--tools", default="echo,whoami,add_tool")
    parser.add_argument("--announce-after-list", action="store_true")
    parser.add_argument("--fail-relist", action="store_true")
    parser.add_argument("--call-delay", type=float, default=0.0)
    parser.add_argument("--logging", action="store_true")
    parser.add_argument("--refuse-level", action="store_true")
    parser.add_argument("--fail-list-echo", default=None)
    parser.add_argument("--resources", action="store_true")
    parser.add_argument("--hang-lists", action="store_true")
    parser.add_argument("--instructions", default=None)
    parser.add_argument("--model-tools", action="store_true")
    args = parser.parse_args()
    if args.fail_start:
        sys.stderr.write("cannot start: missing token\n")
        sys.stderr.flush()
        sys.exit(2)
    if args.slow_start:
        time.sleep(args.slow_start)
    tools = [t for t in args.tools.split(",") if t]
    if args.model_tools:
        tools += list(MODEL_TOOLS)
    calls = 0
    listings = 0
    out = sys.stdout.buffer

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        out.flush()

    def tool(name: str) -> dict[str, Any]:
        if name in MODEL_TOOLS:
            return {"name": name, "description": f"{name} of {args.name}", **MODEL_TOOLS[name]}
        props = {"text": {"type": "string"}} if name not in ("whoami", "add_tool") else {}
        return {"name": name, "description": f"{name} of {args.name}",
                "inputSchema": {"type": "object", "properties": props}}

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if args.log and method is not None:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"pid": os.getpid(), "id": rid, "method": method,
                                      "arguments": params.get("arguments")}) + "\n")
        if rid is None:
            continue  # a notification
        if method == "initialize":
            capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
            if args.logging:
                capabilities["logging"] = {}
            if args.resources:
                capabilities["resources"] = {}
                capabilities["prompts"] = {}
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": capabilities,
                "serverInfo": {"name": args.name, "version": "1.0.0"},
                **({"instructions": args.instructions} if args.instructions else {})}})
        elif method == "logging/setLevel" and args.logging:
            if args.refuse_level:
                send({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32602, "message": "no such level here"}})
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method in ("resources/list", "resources/templates/list", "prompts/list") \
                and args.resources and args.hang_lists:
            continue  # never answered
        elif method == "resources/list" and args.resources:
            send({"jsonrpc": "2.0", "id": rid, "result": {"resources": [
                {"uri": f"host://{args.name}/readme", "name": "readme"}]}})
        elif method == "resources/templates/list" and args.resources:
            send({"jsonrpc": "2.0", "id": rid, "result": {"resourceTemplates": [
                {"uriTemplate": f"host://{args.name}/item/{{id}}", "name": "item"}]}})
        elif method == "resources/read" and args.resources:
            uri = params.get("uri")
            send({"jsonrpc": "2.0", "id": rid, "result": {"contents": [
                {"uri": uri, "text": f"{args.name}:{uri}"}]}})
        elif method == "prompts/list" and args.resources:
            send({"jsonrpc": "2.0", "id": rid, "result": {"prompts": [{"name": "greet"}]}})
        elif method == "prompts/get" and args.resources:
            send({"jsonrpc": "2.0", "id": rid, "result": {"messages": [{
                "role": "user", "content": {"type": "text", "text": f"hello from {args.name}"}}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":
            listings += 1
            if args.fail_list_echo:
                send({"jsonrpc": "2.0", "id": rid, "error": {
                    "code": -32603,
                    "message": f"cannot list: {os.environ.get(args.fail_list_echo)}"}})
                continue
            if args.fail_relist and listings > 1:
                send({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32603, "message": "index rebuilding"}})
                continue
            send({"jsonrpc": "2.0", "id": rid,
                  "result": {"tools": [tool(t) for t in tools]}})
            if args.announce_after_list and listings == 1:
                tools.append("late")
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        elif method == "tools/call":
            calls += 1
            if args.die_on_call and calls % args.die_on_call == 0:
                sys.stderr.write(f"dying on call {calls}\n")
                sys.stderr.flush()
                os._exit(7)
            name = params.get("name")
            arguments = params.get("arguments") or {}
            if args.call_delay:
                time.sleep(args.call_delay)
            if name == "add_tool" and "add_tool" in tools:
                if "extra" not in tools:
                    tools.append("extra")
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                text = "added"
            elif name == "whoami" and "whoami" in tools:
                text = f"{args.name} {os.getpid()}"
            elif name in MODEL_TOOLS and name in tools:
                send({"jsonrpc": "2.0", "id": rid, "result": model_answer(name, arguments)})
                continue
            elif name in tools:
                text = f"{args.name}:{arguments.get('text', '')}"
            else:
                send({"jsonrpc": "2.0", "id": rid,
                      "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
                continue
            send({"jsonrpc": "2.0", "id": rid,
                  "result": {"content": [{"type": "text", "text": text}]}})
        else:
            send({"jsonrpc": "2.0", "id": rid,
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
