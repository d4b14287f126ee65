"""A minimal, as-fast-as-possible Streamable HTTP MCP server (handshake era) for benchmarks.

Standard library only. ``python fast_http_server.py PORT`` serves ``http://127.0.0.1:PORT/mcp``
(PORT 0 picks a free port) and prints one line ``listening on http://127.0.0.1:PORT/mcp``
to stdout once it accepts connections. One thread per TCP connection; HTTP/1.1 keep-alive
with ``Content-Length`` on every answer (requests may be pipelined; they are answered in
order). The request parser is hand-rolled: request line, headers, a ``Content-Length`` or
chunked body; ``http.server`` parses headers with ``email`` and would cap the clients'
round-trip rates well below what they can do.

* ``POST /mcp``, one JSON-RPC message:

  * ``initialize``: echoes the client's ``protocolVersion`` if it is one of 2024-11-05,
    2025-03-26, 2025-06-18, 2025-11-25, else 2025-11-25; capabilities ``{"tools": {}}``;
    a fresh ``Mcp-Session-Id`` header.
  * notifications and responses -> ``202 Accepted``, empty body.
  * ``ping`` -> ``{}``; ``tools/list`` -> tools ``echo`` and ``blob``.
  * ``tools/call echo {text}`` -> ``application/json``: one text block holding ``text``.
  * ``tools/call blob {size}`` -> ``text/event-stream``: one SSE ``message`` event whose
    ``data:`` is the JSON-RPC response, one text block of ``size`` bytes of ``x`` (the
    payload bytes are built once per size and sent without copying).
  * ``server/discover`` (the 2026-07-28 probe) -> ``400`` with a plain-text body, as a
    handshake-only server would answer it, so dual-era clients settle on the handshake era.
  * other methods -> JSON-RPC -32601; bad arguments -> -32602; not JSON -> 400.

* ``GET /mcp`` -> ``405`` (no server-initiated stream); ``DELETE /mcp`` -> ``200``.
* Other paths -> ``404``; other methods -> ``405``.

Session ids are handed out but not checked.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
import uuid
from typing import Any

SUPPORTED_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
LATEST_VERSION = "2025-11-25"
MAX_BLOB_SIZE = 1 << 30
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024
PATH = b"/mcp"


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


HEAD = b'{"jsonrpc":"2.0","id":'
TEXT_RESULT = b',"result":{"content":[{"type":"text","text":'
TEXT_RESULT_END = b"}]}}"
BLOB_RESULT = b',"result":{"content":[{"type":"text","text":"'
BLOB_RESULT_END = b'"}]}}\n\n'
EMPTY_RESULT = b',"result":{}}'
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
    + b"}"
)
INIT_RESULT_HEAD = b',"result":{"protocolVersion":'
INIT_RESULT_TAIL = (
    b',"capabilities":{"tools":{}},"serverInfo":{"name":"fast-http-server","version":"1.0.0"}}}'
)


def _error(code: int, message: str) -> bytes:
    return b',"error":' + _compact({"code": code, "message": message}) + b"}"


METHOD_NOT_FOUND = _error(-32601, "Method not found")
UNKNOWN_TOOL = _error(-32602, "Unknown tool")
BAD_ARGUMENTS = _error(-32602, "Invalid arguments")
INVALID_PARAMS = _error(-32602, "Invalid params")

REASONS = {
    200: b"OK",
    202: b"Accepted",
    400: b"Bad Request",
    404: b"Not Found",
    405: b"Method Not Allowed",
    411: b"Length Required",
    413: b"Payload Too Large",
}
JSON_TYPE = b"application/json"
SSE_TYPE = b"text/event-stream"
SSE_PREFIX = b"event: message\ndata: "


def _head(status: int, length: int, ctype: bytes | None = None, extra: bytes = b"") -> bytes:
    out = b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n" % (status, REASONS[status], length)
    if ctype is not None:
        out += b"Content-Type: " + ctype + b"\r\n"
    if status == 200 and ctype == SSE_TYPE:
        out += b"Cache-Control: no-cache\r\n"
    return out + extra + b"\r\n"


ACCEPTED = _head(202, 0)
DELETED = _head(200, 0)
GET_REFUSED = _head(405, 0, None, b"Allow: POST, DELETE\r\n")
DISCOVER_BODY = b"Bad Request: unsupported method server/discover\n"
DISCOVER_REFUSED = _head(400, len(DISCOVER_BODY), b"text/plain; charset=utf-8") + DISCOVER_BODY
NOT_JSON_BODY = b"Bad Request: body is not a JSON-RPC message\n"
NOT_JSON = _head(400, len(NOT_JSON_BODY), b"text/plain; charset=utf-8") + NOT_JSON_BODY
NOT_FOUND = _head(404, 0)
BAD_METHOD = _head(405, 0, None, b"Allow: POST, GET, DELETE\r\n")

_blobs: dict[int, bytes] = {}
_blobs_lock = threading.Lock()


def _blob(size: int) -> bytes:
    """``size`` bytes of ``x``, built once (the largest few are kept)."""
    data = _blobs.get(size)
    if data is None:
        data = b"x" * size
        with _blobs_lock:
            if len(_blobs) > 8:
                _blobs.clear()
            _blobs[size] = data
    return data


def _answer(message: Any) -> tuple[bytes, ...]:
    """The wire pieces (head and body) answering one decoded POST body."""
    if not isinstance(message, dict):
        return (NOT_JSON,)
    method = message.get("method")
    if method is None or "id" not in message:  # notification or response
        return (ACCEPTED,)
    request_id = message["id"]
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        head = HEAD + str(request_id).encode()
    elif isinstance(request_id, str):
        head = HEAD + _compact(request_id)
    else:
        return (NOT_JSON,)
    params = message.get("params") or {}
    extra = b""
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == "echo":
            text = arguments.get("text")
            body = head + (
                TEXT_RESULT + _compact(text) + TEXT_RESULT_END
                if isinstance(text, str)
                else BAD_ARGUMENTS
            )
        elif name == "blob":
            size = arguments.get("size")
            if (
                isinstance(size, bool)
                or not isinstance(size, int)
                or not 0 <= size <= MAX_BLOB_SIZE
            ):
                body = head + BAD_ARGUMENTS
            else:
                start = SSE_PREFIX + head + BLOB_RESULT
                length = len(start) + size + len(BLOB_RESULT_END)
                return (_head(200, length, SSE_TYPE) + start, _blob(size), BLOB_RESULT_END)
        else:
            body = head + UNKNOWN_TOOL
    elif method == "ping":
        body = head + EMPTY_RESULT
    elif method == "tools/list":
        body = head + TOOLS_LIST_RESULT
    elif method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        body = head + INIT_RESULT_HEAD + _compact(version) + INIT_RESULT_TAIL
        extra = b"Mcp-Session-Id: " + uuid.uuid4().hex.encode() + b"\r\n"
    elif method == "server/discover":
        return (DISCOVER_REFUSED,)
    else:
        body = head + METHOD_NOT_FOUND
    return (_head(200, len(body), JSON_TYPE, extra) + body,)


class Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rfile = sock.makefile("rb", buffering=65536)
        send = sock.sendall
        loads = json.loads
        try:
            while True:
                line = rfile.readline(MAX_HEAD)
                if not line:
                    return
                if line in (b"\r\n", b"\n"):  # tolerated between pipelined requests
                    continue
                parts = line.split()
                if len(parts) != 3:
                    return
                verb, target, _version = parts
                length = 0
                chunked = close = False
                while True:
                    h = rfile.readline(MAX_HEAD)
                    if h in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = h.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"transfer-encoding":
                        chunked = b"chunked" in value.lower()
                    elif name == b"connection":
                        close = b"close" in value.lower()
                if chunked:
                    body = _read_chunked(rfile)
                elif length > MAX_BODY:
                    send(_head(413, 0, None, b"Connection: close\r\n"))
                    return
                else:
                    body = rfile.read(length) if length else b""
                if target.split(b"?", 1)[0] != PATH:
                    send(NOT_FOUND)
                elif verb == b"POST":
                    try:
                        message = loads(body)
                    except ValueError:
                        send(NOT_JSON)
                    else:
                        try:
                            pieces = _answer(message)
                        except (AttributeError, TypeError):  # params of the wrong type
                            rid = message.get("id") if isinstance(message, dict) else None
                            b = HEAD + _compact(rid) + INVALID_PARAMS
                            pieces = (_head(200, len(b), JSON_TYPE) + b,)
                        for piece in pieces:
                            send(piece)
                elif verb == b"GET":
                    send(GET_REFUSED)
                elif verb == b"DELETE":
                    send(DELETED)
                else:
                    send(BAD_METHOD)
                if close:
                    return
        except (OSError, ValueError):
            return
        finally:
            rfile.close()


def _read_chunked(rfile: Any) -> bytes:
    out: list[bytes] = []
    while True:
        size = int(rfile.readline(MAX_HEAD).split(b";")[0], 16)
        if size == 0:
            while rfile.readline(MAX_HEAD) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(out)
        out.append(rfile.read(size))
        rfile.readline(MAX_HEAD)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


def main(argv: list[str]) -> None:
    port = int(argv[1]) if len(argv) > 1 else 0
    with Server(("127.0.0.1", port), Handler) as server:
        print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
        try:
            server.serve_forever(poll_interval=0.5)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main(sys.argv)
