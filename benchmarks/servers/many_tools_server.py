"""A stdlib stdio MCP server (handshake era) that lists many tools, for the host's benchmarks of
hundreds to thousands of tools (``benchmarks/bench_host_tools.py``).

    python many_tools_server.py [--tools N] [--page P] [--seed S]

* ``initialize``: echoes a known ``protocolVersion`` (else 2025-11-25); capabilities
  ``{"tools": {"listChanged": true}}``; ``serverInfo`` ``many-tools``.
* ``ping`` -> ``{}``.
* ``tools/list`` -> ``N`` tools (default 10,000) from :func:`make_tools`, ``P`` a page (default
  0: all in one page, which the official SDK's ``ClientSessionGroup`` needs: it reads the
  first page only), the cursor being the index of the next tool.
* ``tools/call`` of any listed tool -> one text block ``"ok"``; an unknown tool -> -32602.
* ``prompts/list``, ``resources/list`` -> empty lists (the SDK's group asks for them).
* Every other method -> -32601.  Notifications and responses are ignored.  Exits at stdin EOF.

The tools are deterministic for a seed and look like real ones: a verb and a noun of a domain,
a sentence of description, 3 to 8 parameters of the kinds real servers use (strings with
formats and lengths, bounded integers and numbers, booleans, enums, arrays of strings, a nested
object now and then), with descriptions and a ``required`` subset.
"""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any

SUPPORTED_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
LATEST_VERSION = "2025-11-25"
DEFAULT_TOOLS = 10_000
DEFAULT_SEED = 24

_VERBS = ("get", "list", "create", "update", "delete", "search", "archive", "sync", "export",
          "import", "approve", "assign")
_NOUNS = ("issue", "pull_request", "file", "folder", "user", "team", "invoice", "customer",
          "order", "ticket", "event", "calendar", "message", "channel", "repository", "branch",
          "deployment", "metric", "alert", "dashboard", "record", "report", "document", "task")
_DOMAINS = ("github", "jira", "slack", "drive", "stripe", "shop", "crm", "ops", "docs", "hr")


def _param(rng: random.Random, name: str) -> dict[str, Any]:
    kind = rng.randrange(9)
    described = {"description": f"The {name.replace('_', ' ')} to use."}
    if kind == 0:
        return {"type": "string", "minLength": 1, "maxLength": 200, **described}
    if kind == 1:
        return {"type": "string", "format": rng.choice(["date-time", "email", "uri"]),
                **described}
    if kind == 2:
        return {"type": "integer", "minimum": 0, "maximum": 1000, "default": 10, **described}
    if kind == 3:
        return {"type": "number", "minimum": 0, **described}
    if kind == 4:
        return {"type": "boolean", "default": False, **described}
    if kind == 5:
        return {"type": "string", "enum": ["open", "closed", "all"], "default": "open",
                **described}
    if kind == 6:
        return {"type": "array", "items": {"type": "string"}, "maxItems": 50, **described}
    if kind == 7:
        return {"type": "object", "properties": {
            "key": {"type": "string", "description": "The field."},
            "value": {"type": "string", "description": "Its value."}},
            "required": ["key"], **described}
    return {"type": "string", **described}


_PARAMS = ("owner", "repo", "title", "body", "labels", "assignee", "state", "since", "until",
           "page", "per_page", "query", "sort", "direction", "path", "ref", "email", "limit",
           "filter", "include_archived", "amount", "currency", "note", "url")


def make_tools(count: int = DEFAULT_TOOLS, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """``count`` tools in their wire form (``tools/list`` entries), the same for a seed."""
    rng = random.Random(seed)
    tools = []
    for i in range(count):
        domain, verb, noun = rng.choice(_DOMAINS), rng.choice(_VERBS), rng.choice(_NOUNS)
        names = rng.sample(_PARAMS, rng.randint(3, 8))
        properties = {name: _param(rng, name) for name in names}
        tools.append({
            "name": f"{domain}_{verb}_{noun}_{i}",
            "description": f"{verb.capitalize()} a {noun.replace('_', ' ')} in {domain} "
                           f"(variant {i}): returns it as JSON.",
            "inputSchema": {"type": "object", "properties": properties,
                            "required": names[:rng.randint(1, len(names))]},
        })
    return tools


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _option(name: str, default: int) -> int:
    args = sys.argv[1:]
    return int(args[args.index(name) + 1]) if name in args else default


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def _result(request_id: object, result: object) -> bytes:
    return _compact({"jsonrpc": "2.0", "id": request_id, "result": result}) + b"\n"


def _error(request_id: object, code: int, message: str) -> bytes:
    return _compact({"jsonrpc": "2.0", "id": request_id,
                     "error": {"code": code, "message": message}}) + b"\n"


def main() -> None:
    """Serve stdin/stdout until stdin is closed."""
    tools = make_tools(_option("--tools", DEFAULT_TOOLS), _option("--seed", DEFAULT_SEED))
    page = _option("--page", 0) or len(tools) or 1
    names = {t["name"] for t in tools}
    pages: dict[int, bytes] = {}  # start index -> the encoded result (a listing is asked again)
    readline = sys.stdin.buffer.readline
    while True:
        line = readline()
        if not line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        rid, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            requested = params.get("protocolVersion")
            out = _result(rid, {
                "protocolVersion": requested if requested in SUPPORTED_VERSIONS
                else LATEST_VERSION,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "many-tools", "version": "1.0.0"}})
        elif method == "ping":
            out = _result(rid, {})
        elif method == "tools/list":
            cursor = params.get("cursor")
            start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
            if start not in pages:
                end = start + page
                body: dict[str, Any] = {"tools": tools[start:end]}
                if end < len(tools):
                    body["nextCursor"] = str(end)
                pages[start] = _compact(body)
            out = (b'{"jsonrpc":"2.0","id":' + _compact(rid) + b',"result":' + pages[start]
                   + b"}\n")
        elif method == "tools/call":
            if params.get("name") in names:
                out = _result(rid, {"content": [{"type": "text", "text": "ok"}]})
            else:
                out = _error(rid, -32602, "Unknown tool")
        elif method == "prompts/list":
            out = _result(rid, {"prompts": []})
        elif method == "resources/list":
            out = _result(rid, {"resources": []})
        else:
            out = _error(rid, -32601, "Method not found")
        try:
            _write_all(out)
        except BrokenPipeError:
            return


if __name__ == "__main__":
    main()
