"""A small, dependency-free MCP demo server speaking stdio (handshake era).

Started by ``mcp-proto demo`` as ``python -m mcp_proto_io.cli.demo_server``. It reads
newline-delimited JSON-RPC 2.0 messages on stdin and writes one compact JSON object per line
on stdout; stderr is used for diagnostics only. It uses nothing but the standard library, so it
can serve as a fixture for every binding and as a hands-on playground.

Protocol: answers ``initialize`` with the client's ``protocolVersion`` when it is one of
2024-11-05, 2025-03-26, 2025-06-18 or 2025-11-25, else with 2025-11-25. There is no
``server/discover`` (it answers -32601, so dual-era clients fall back to ``initialize``).

Features:

* tools (``tools/list`` is paginated, 3 tools per page): ``echo``, ``add`` (structured output),
  ``slow_count`` (progress notifications, honours ``notifications/cancelled``), ``fail``
  (``isError`` result) and ``weather`` (text, image and resource link content). Every
  ``tools/call`` runs in its own thread, so a slow call never blocks other requests.
* resources: ``demo://readme`` (text), ``demo://logo.png`` (blob), template
  ``demo://notes/{name}``; subscribe/unsubscribe are accepted; unknown URIs give -32002.
* prompts: ``greet`` (argument ``name``); completion of ``name`` from a fixed list.
* logging: after ``logging/setLevel`` with a level of ``info`` or lower, every ``tools/call``
  is logged with a ``notifications/message``.
* ``ping`` answers ``{}``; unknown methods give -32601; unknown tools give -32602.

The server exits with status 0 when stdin reaches end-of-file.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

JSONObject = dict[str, Any]

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
SERVER_INFO: JSONObject = {"name": "mcp-proto-demo", "version": "0.1.0"}
INSTRUCTIONS = (
    "mcp-proto demo server. Try the tools echo, add, slow_count (send a progressToken to see "
    "progress), fail and weather; read demo://readme; get the prompt greet."
)
TOOLS_PAGE_SIZE = 3

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# A 1x1 grey-and-alpha PNG (68 bytes).
TINY_PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)

README_TEXT = (
    "# mcp-proto demo\n\n"
    "This text is the resource demo://readme. The server also has a PNG blob at\n"
    "demo://logo.png and notes under the template demo://notes/{name}.\n"
)

NAMES = ("Ada", "Alan", "Alice", "Barbara", "Bob", "Carol", "Dave", "Edsger", "Eve", "Grace")

TOOLS: list[JSONObject] = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo back."}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "add",
        "title": "Add two numbers",
        "description": "Add a and b; the sum is returned as text and as structured content.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "First addend."},
                "b": {"type": "number", "description": "Second addend."},
            },
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "slow_count",
        "title": "Slow count",
        "description": (
            "Count from 1 to steps, waiting delay seconds per step. Sends progress notifications "
            "when the request carries a progressToken."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "steps": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 5},
                "delay": {"type": "number", "minimum": 0, "maximum": 10, "default": 0.2},
            },
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "fail",
        "title": "Always fail",
        "description": "Always returns a tool error (isError: true).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "weather",
        "title": "Weather (fake)",
        "description": "Made-up weather for a city: text, an image and a resource link.",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name."}},
            "required": ["city"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]

RESOURCES: list[JSONObject] = [
    {
        "uri": "demo://readme",
        "name": "readme",
        "title": "Demo README",
        "description": "A short text resource.",
        "mimeType": "text/markdown",
    },
    {
        "uri": "demo://logo.png",
        "name": "logo.png",
        "title": "Demo logo",
        "description": "A 1x1 PNG blob.",
        "mimeType": "image/png",
    },
]

RESOURCE_TEMPLATES: list[JSONObject] = [
    {
        "uriTemplate": "demo://notes/{name}",
        "name": "notes",
        "title": "Notes",
        "description": "Generated notes about a name.",
        "mimeType": "text/plain",
    }
]

PROMPTS: list[JSONObject] = [
    {
        "name": "greet",
        "title": "Greeting",
        "description": "Ask the model to greet someone.",
        "arguments": [
            {"name": "name", "title": "Name", "description": "Who to greet.", "required": True}
        ],
    }
]


class RpcError(Exception):
    """A JSON-RPC error to send back as the response to the current request."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> JSONObject:
        error: JSONObject = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def _log(message: str) -> None:
    try:
        sys.stderr.write(f"[mcp-proto-demo] {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _text(text: str) -> JSONObject:
    return {"type": "text", "text": text}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class DemoServer:
    """State of one stdio session."""

    def __init__(self, out_fd: int = 1) -> None:
        self._out_fd = out_fd
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._closed = False
        self._protocol_version = LATEST_VERSION
        self._log_level: str | None = None
        self._cancelled: set[str | int] = set()
        self._subscriptions: set[str] = set()
        self._handlers: dict[str, Callable[[JSONObject], JSONObject]] = {
            "initialize": self._initialize,
            "ping": lambda _params: {},
            "tools/list": self._tools_list,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
            "logging/setLevel": self._set_level,
        }

    # -- output -------------------------------------------------------------------------------

    def send(self, message: JSONObject | list[JSONObject]) -> None:
        """Write one message as one line; safe to call from any thread."""
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self._write_lock:
            if self._closed:
                return
            view = memoryview(data)
            try:
                while view:
                    written = os.write(self._out_fd, view)
                    view = view[written:]
            except OSError:
                self._closed = True  # the client went away; drop further output

    def _result(self, request_id: str | int, result: JSONObject) -> JSONObject:
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _error(self, request_id: str | int | None, error: RpcError) -> JSONObject:
        return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}

    def notify(self, method: str, params: JSONObject) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, level: str, data: str) -> None:
        """Send a notifications/message if the client asked for this level."""
        threshold = self._log_level
        if threshold is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        self.notify("notifications/message", {"level": level, "logger": "demo", "data": data})

    # -- dispatch ------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            self.send(self._error(None, RpcError(PARSE_ERROR, f"Parse error: {exc}")))
            return
        if isinstance(message, list):
            # JSON-RPC batch (2025-03-26): handled inline, answered as one array.
            if not message:
                self.send(self._error(None, RpcError(INVALID_REQUEST, "Empty batch")))
                return
            responses = [r for item in message if (r := self.handle_message(item, True))]
            if responses:
                self.send(responses)
            return
        response = self.handle_message(message, False)
        if response is not None:
            self.send(response)

    def handle_message(self, message: object, inline: bool) -> JSONObject | None:
        """Handle one message; return the response to send now, if any."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return self._error(None, RpcError(INVALID_REQUEST, "Invalid request"))
        method = message.get("method")
        if method is None:
            return None  # a response: this server never sends requests, so ignore it
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and (not isinstance(request_id, (str, int)) or isinstance(request_id, bool)):
            return self._error(None, RpcError(INVALID_REQUEST, "Invalid request id"))
        if not isinstance(method, str):
            if has_id:
                return self._error(request_id, RpcError(INVALID_REQUEST, "Invalid method"))
            return None
        params = message.get("params", {})
        if not isinstance(params, dict):
            if has_id:
                return self._error(request_id, RpcError(INVALID_PARAMS, "params must be object"))
            return None
        if not has_id:
            self._handle_notification(method, params)
            return None
        assert isinstance(request_id, (str, int))
        if method == "tools/call" and not inline:
            thread = threading.Thread(
                target=self._call_tool_thread, args=(request_id, params), daemon=True
            )
            thread.start()
            return None
        if method == "tools/call":
            return self._call_tool(request_id, params)
        handler = self._handlers.get(method)
        if handler is None:
            return self._error(
                request_id, RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            )
        try:
            return self._result(request_id, handler(params))
        except RpcError as exc:
            return self._error(request_id, exc)
        except Exception as exc:
            _log(f"internal error in {method}: {exc!r}")
            return self._error(request_id, RpcError(INTERNAL_ERROR, "Internal error"))

    def _handle_notification(self, method: str, params: JSONObject) -> None:
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
                with self._state_lock:
                    self._cancelled.add(request_id)
        # notifications/initialized, notifications/roots/list_changed, progress...: nothing to do

    def is_cancelled(self, request_id: str | int) -> bool:
        with self._state_lock:
            return request_id in self._cancelled

    # -- lifecycle -----------------------------------------------------------------------------

    def _initialize(self, params: JSONObject) -> JSONObject:
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        assert isinstance(version, str)
        self._protocol_version = version
        return {
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"subscribe": True},
                "prompts": {},
                "logging": {},
                "completions": {},
            },
            "serverInfo": dict(SERVER_INFO),
            "instructions": INSTRUCTIONS,
        }

    def _set_level(self, params: JSONObject) -> JSONObject:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"Invalid log level: {level!r}")
        assert isinstance(level, str)
        self._log_level = level
        return {}

    # -- pagination ----------------------------------------------------------------------------

    @staticmethod
    def _page(items: list[JSONObject], params: JSONObject, size: int) -> tuple[list[Any], Any]:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.startswith("offset-"):
                raise RpcError(INVALID_PARAMS, "Invalid cursor")
            try:
                start = int(cursor.removeprefix("offset-"))
            except ValueError:
                raise RpcError(INVALID_PARAMS, "Invalid cursor") from None
            if not 0 <= start <= len(items):
                raise RpcError(INVALID_PARAMS, "Invalid cursor")
        end = start + size
        next_cursor = f"offset-{end}" if end < len(items) else None
        return items[start:end], next_cursor

    def _tools_list(self, params: JSONObject) -> JSONObject:
        page, next_cursor = self._page(TOOLS, params, TOOLS_PAGE_SIZE)
        result: JSONObject = {"tools": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # -- tools ---------------------------------------------------------------------------------

    def _call_tool_thread(self, request_id: str | int, params: JSONObject) -> None:
        response = self._call_tool(request_id, params)
        if response is not None and not self.is_cancelled(request_id):
            self.send(response)

    def _call_tool(self, request_id: str | int, params: JSONObject) -> JSONObject | None:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            token = None
        tools: dict[str, Callable[[JSONObject], JSONObject]] = {
            "echo": self._tool_echo,
            "add": self._tool_add,
            "fail": self._tool_fail,
            "weather": self._tool_weather,
        }
        try:
            if not isinstance(name, str):
                raise RpcError(INVALID_PARAMS, "Tool name must be a string")
            if not isinstance(arguments, dict):
                raise RpcError(INVALID_PARAMS, "Tool arguments must be an object")
            self.log("info", f"tools/call {name}")
            if name == "slow_count":
                result = self._tool_slow_count(request_id, arguments, token)
                if result is None:
                    return None  # cancelled by the client: send nothing
            elif name in tools:
                result = tools[name](arguments)
            else:
                raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        except RpcError as exc:
            return self._error(request_id, exc)
        except Exception as exc:
            _log(f"internal error in tool {name!r}: {exc!r}")
            return self._error(request_id, RpcError(INTERNAL_ERROR, "Internal error"))
        return self._result(request_id, result)

    @staticmethod
    def _tool_error(message: str) -> JSONObject:
        return {"content": [_text(message)], "isError": True}

    def _tool_echo(self, arguments: JSONObject) -> JSONObject:
        text = arguments.get("text")
        if not isinstance(text, str):
            return self._tool_error("echo: argument 'text' must be a string")
        return {"content": [_text(text)]}

    def _tool_add(self, arguments: JSONObject) -> JSONObject:
        a, b = arguments.get("a"), arguments.get("b")
        if not (_is_number(a) and _is_number(b)):
            return self._tool_error("add: arguments 'a' and 'b' must be numbers")
        assert isinstance(a, (int, float)) and isinstance(b, (int, float))
        structured = {"sum": a + b}
        return {
            "content": [_text(json.dumps(structured))],
            "structuredContent": structured,
        }

    def _tool_slow_count(
        self, request_id: str | int, arguments: JSONObject, token: str | int | None
    ) -> JSONObject | None:
        steps = arguments.get("steps", 5)
        delay = arguments.get("delay", 0.2)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 1000:
            return self._tool_error("slow_count: 'steps' must be an integer in 0..1000")
        if not _is_number(delay) or not 0 <= delay <= 10:
            return self._tool_error("slow_count: 'delay' must be a number in 0..10")
        for step in range(1, steps + 1):
            time.sleep(delay)
            if self.is_cancelled(request_id):
                return None
            if token is not None:
                self.notify(
                    "notifications/progress",
                    {
                        "progressToken": token,
                        "progress": step,
                        "total": steps,
                        "message": f"step {step}/{steps}",
                    },
                )
        return {"content": [_text(f"counted to {steps}")]}

    def _tool_fail(self, arguments: JSONObject) -> JSONObject:
        return self._tool_error("This tool always fails.")

    def _tool_weather(self, arguments: JSONObject) -> JSONObject:
        city = arguments.get("city")
        if not isinstance(city, str) or not city:
            return self._tool_error("weather: argument 'city' must be a non-empty string")
        temperature = 10 + sum(city.encode("utf-8")) % 20
        content: list[JSONObject] = [
            _text(f"Weather in {city}: sunny, {temperature} °C (made up)."),
            {"type": "image", "data": TINY_PNG_B64, "mimeType": "image/png"},
        ]
        if self._protocol_version >= "2025-06-18":
            content.append(
                {
                    "type": "resource_link",
                    "uri": "demo://readme",
                    "name": "readme",
                    "title": "Demo README",
                    "mimeType": "text/markdown",
                }
            )
        else:  # resource_link does not exist before 2025-06-18: embed the resource instead
            content.append(
                {
                    "type": "resource",
                    "resource": {
                        "uri": "demo://readme",
                        "mimeType": "text/markdown",
                        "text": README_TEXT,
                    },
                }
            )
        return {"content": content}

    # -- resources -----------------------------------------------------------------------------

    def _resources_list(self, params: JSONObject) -> JSONObject:
        page, next_cursor = self._page(RESOURCES, params, 50)
        result: JSONObject = {"resources": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    def _templates_list(self, params: JSONObject) -> JSONObject:
        page, next_cursor = self._page(RESOURCE_TEMPLATES, params, 50)
        result: JSONObject = {"resourceTemplates": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    @staticmethod
    def _uri(params: JSONObject) -> str:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "'uri' must be a string")
        return uri

    def _resources_read(self, params: JSONObject) -> JSONObject:
        uri = self._uri(params)
        if uri == "demo://readme":
            contents: JSONObject = {"uri": uri, "mimeType": "text/markdown", "text": README_TEXT}
        elif uri == "demo://logo.png":
            contents = {"uri": uri, "mimeType": "image/png", "blob": TINY_PNG_B64}
        elif uri.startswith("demo://notes/") and len(uri) > len("demo://notes/"):
            name = uri.removeprefix("demo://notes/")
            contents = {"uri": uri, "mimeType": "text/plain", "text": f"Notes about {name}."}
        else:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})
        return {"contents": [contents]}

    def _subscribe(self, params: JSONObject) -> JSONObject:
        uri = self._uri(params)
        with self._state_lock:
            self._subscriptions.add(uri)
        return {}

    def _unsubscribe(self, params: JSONObject) -> JSONObject:
        uri = self._uri(params)
        with self._state_lock:
            self._subscriptions.discard(uri)
        return {}

    # -- prompts and completion ----------------------------------------------------------------

    def _prompts_list(self, params: JSONObject) -> JSONObject:
        page, next_cursor = self._page(PROMPTS, params, 50)
        result: JSONObject = {"prompts": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    def _prompts_get(self, params: JSONObject) -> JSONObject:
        name = params.get("name")
        if name != "greet":
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name!r}")
        arguments = params.get("arguments") or {}
        who = arguments.get("name") if isinstance(arguments, dict) else None
        if not isinstance(who, str) or not who:
            raise RpcError(INVALID_PARAMS, "Missing required argument: name")
        return {
            "description": f"Greet {who}",
            "messages": [
                {"role": "user", "content": _text(f"Please greet {who} warmly, in one sentence.")}
            ],
        }

    def _complete(self, params: JSONObject) -> JSONObject:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(INVALID_PARAMS, "'ref' and 'argument' must be objects")
        ref_type = ref.get("type")
        if ref_type == "ref/prompt":
            if ref.get("name") != "greet":
                raise RpcError(INVALID_PARAMS, f"Unknown prompt: {ref.get('name')!r}")
        elif ref_type == "ref/resource":
            if ref.get("uri") != "demo://notes/{name}":
                raise RpcError(INVALID_PARAMS, f"Unknown resource template: {ref.get('uri')!r}")
        else:
            raise RpcError(INVALID_PARAMS, f"Unknown reference type: {ref_type!r}")
        value = argument.get("value", "")
        if argument.get("name") != "name" or not isinstance(value, str):
            values: list[str] = []
        else:
            values = [n for n in NAMES if n.lower().startswith(value.lower())]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}


def main() -> None:
    """Serve one session on stdin/stdout until stdin is closed."""
    server = DemoServer()
    stdin = sys.stdin.buffer
    try:
        for line in iter(stdin.readline, b""):
            server.handle_line(line)
    except KeyboardInterrupt:
        pass
    _log("stdin closed, exiting")


if __name__ == "__main__":
    main()
