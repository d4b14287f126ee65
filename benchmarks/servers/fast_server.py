"""A minimal, as-fast-as-possible stdio MCP server (handshake era) for round-trip benchmarks.

Standard library only. Reads newline-delimited JSON-RPC 2.0 from stdin in a single-threaded
``readline`` loop and answers every request immediately, in arrival order, with one compact JSON
line written straight to fd 1 (no Python-level buffering, so each line is flushed at once).
Many requests may be in flight; responses are built from pre-encoded byte templates.

Methods:

* ``initialize``: echoes the client's ``protocolVersion`` if it is one of 2024-11-05,
  2025-03-26, 2025-06-18, 2025-11-25, else answers 2025-11-25; capabilities ``{"tools": {}}``;
  ``serverInfo`` ``{"name": "fast-server", "version": "1.0.0"}``.
* ``ping`` -> ``{}``.
* ``tools/list`` -> tools ``echo`` and ``blob`` (one page).
* ``tools/call`` ``echo {text}`` -> one text block holding ``text``; ``blob {size}`` -> one text
  block of ``size`` bytes of ``x``. Unknown tool or bad arguments -> -32602.
* ``server/discover`` (2026-07-28 probe) and every other method -> -32601, so dual-era clients
  treat the server as handshake-only.  With ``--modern`` the server speaks 2026-07-28 instead:
  ``server/discover`` answers, results carry ``"resultType":"complete"``, ``initialize`` and
  ``ping`` are -32601 (for the era-vs-era round-trip benchmark).
* ``--startup-delay S`` sleeps S seconds before reading stdin (a slow start).
* Notifications and responses are ignored; a line that is not JSON gets -32700 with id null;
  JSON-RPC batches (arrays) are not supported and get -32600.

Exits with status 0 on stdin EOF.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

SUPPORTED_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
LATEST_VERSION = "2025-11-25"
MAX_BLOB_SIZE = 1 << 30


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


HEAD = b'{"jsonrpc":"2.0","id":'
TEXT_RESULT = b',"result":{"content":[{"type":"text","text":'
TEXT_RESULT_END = b"}]}}\n"
MODERN_TEXT_RESULT_END = b'}],"resultType":"complete"}}\n'
BLOB_RESULT = b',"result":{"content":[{"type":"text","text":"'
BLOB_RESULT_END = b'"}]}}\n'
EMPTY_RESULT = b',"result":{}}\n'
TOOLS_LIST_RESULT = (
    b',"result":'
    + _compact(
        {
            "tools": [
                {
                    "name": "echo",
                    "description": "Echo the text back.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"],
                    },
                },
                {
                    "name": "blob",
                    "description": "Return one text block of `size` bytes.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"size": {"type": "integer", "minimum": 0}},
                        "required": ["size"],
                    },
                },
            ]
        }
    )
    + b"}\n"
)
INIT_RESULT_HEAD = b',"result":{"protocolVersion":'
INIT_RESULT_TAIL = (
    b',"capabilities":{"tools":{}},"serverInfo":{"name":"fast-server","version":"1.0.0"}}}\n'
)
PARSE_ERROR = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'


def _error(code: int, message: str) -> bytes:
    return b',"error":' + _compact({"code": code, "message": message}) + b"}\n"


METHOD_NOT_FOUND = _error(-32601, "Method not found")
UNKNOWN_TOOL = _error(-32602, "Unknown tool")
BAD_ARGUMENTS = _error(-32602, "Invalid arguments")
INVALID_REQUEST = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}\n'
)


DISCOVER_RESULT = b',"result":' + _compact({
    "resultType": "complete", "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}}, "ttlMs": 0,
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fast-server", "version": "1.0.0"}},
}) + b"}\n"
MODERN = "--modern" in sys.argv[1:]


def _startup_delay() -> float:
    """``--startup-delay S``: sleep S seconds before reading stdin (a server as slow to start
    as ``npx`` fetching a package; for the host's concurrent-start benchmark)."""
    args = sys.argv[1:]
    if "--startup-delay" in args:
        return float(args[args.index("--startup-delay") + 1])
    return 0.0


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def _answer(message: Any) -> bytes | None:
    """The response line for one decoded message (None for notifications and responses)."""
    if not isinstance(message, dict):
        return INVALID_REQUEST
    method = message.get("method")
    if method is None or "id" not in message:
        return None
    request_id = message["id"]
    if isinstance(request_id, str):
        head = HEAD + _compact(request_id)
    elif isinstance(request_id, int) and not isinstance(request_id, bool):
        head = HEAD + str(request_id).encode()
    else:
        return INVALID_REQUEST
    params = message.get("params") or {}
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                return head + BAD_ARGUMENTS
            return head + TEXT_RESULT + _compact(text) + (
                MODERN_TEXT_RESULT_END if MODERN else TEXT_RESULT_END)
        if name == "blob":
            size = arguments.get("size")
            if (
                isinstance(size, bool)
                or not isinstance(size, int)
                or not 0 <= size <= MAX_BLOB_SIZE
            ):
                return head + BAD_ARGUMENTS
            return b"".join((head, BLOB_RESULT, b"x" * size, BLOB_RESULT_END))
        return head + UNKNOWN_TOOL
    if MODERN:
        if method == "server/discover":
            return head + DISCOVER_RESULT
        if method in ("initialize", "ping"):
            return head + METHOD_NOT_FOUND
    if method == "ping":
        return head + EMPTY_RESULT
    if method == "tools/list":
        return head + TOOLS_LIST_RESULT
    if method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        return head + INIT_RESULT_HEAD + _compact(version) + INIT_RESULT_TAIL
    return head + METHOD_NOT_FOUND


def main() -> None:
    """Serve stdin/stdout until stdin is closed."""
    delay = _startup_delay()
    if delay:
        time.sleep(delay)
    readline = sys.stdin.buffer.readline
    loads = json.loads
    write = _write_all
    answer = _answer
    while True:
        line = readline()
        if not line:
            return
        try:
            message = loads(line)
        except ValueError:
            if line.strip():
                write(PARSE_ERROR)
            continue
        try:
            response = answer(message)
        except (AttributeError, TypeError):  # params or arguments of the wrong type
            request_id = message.get("id") if isinstance(message, dict) else None
            response = HEAD + _compact(request_id) + _error(-32602, "Invalid params")
        if response is not None:
            try:
                write(response)
            except BrokenPipeError:  # the client is gone
                return


if __name__ == "__main__":
    main()
