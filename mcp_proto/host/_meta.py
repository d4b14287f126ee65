"""Meta-tools: three fixed tools a model uses to reach every server, after rpi-mcp-adapter
(host-notes 2.1), for hosts that do not put every server's tools in the model's context.

- ``mcp_list``: without ``server``, the configured servers (transport, enabled, state;
  nothing is started); with ``server``, its tools (every page); ``action: "close"`` stops
  that server's run until it is next used.
- ``mcp_call``: ``server``, ``tool``, ``arguments`` (an object), ``timeoutSeconds`` (an
  integer from 1 to 300), all checked before any request is made.
- ``mcp_request``: one raw JSON-RPC ``method`` + ``params`` to a server through its session
  (diagnostics).

This module is pure: :func:`parse_meta_call` checks a call and says what to do
(:class:`MetaRequest`); the binding's Host does it and renders the outcome with
:func:`meta_result` / :func:`meta_error` and ``to_provider_content``.  A model's mistake is
a :class:`MetaToolError`, which the Host returns to the model as an ``isError`` result (the
model can correct itself), never as an exception of the host's.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import MCPError
from .._types import CallToolResult, TextContent, Tool

__all__ = [
    "MAX_META_TIMEOUT",
    "META_TOOLS",
    "MIN_META_TIMEOUT",
    "MetaRequest",
    "MetaToolError",
    "meta_error",
    "meta_result",
    "parse_meta_call",
]

#: ``timeoutSeconds`` bounds (rpi-mcp-adapter's): a model asking for an hour-long call is a
#: mistake a host should not honour silently.
MIN_META_TIMEOUT = 1
MAX_META_TIMEOUT = 300
#: Longest tool or method name a model may pass (rpi's bound): real names are short.
MAX_META_NAME = 200

_TIMEOUT = {"type": "integer", "minimum": MIN_META_TIMEOUT, "maximum": MAX_META_TIMEOUT,
            "description": "seconds before the call is abandoned (default: the host's)"}
_SERVER = {"type": "string", "description": "the name of a configured server (see mcp_list)"}

#: The three tools, as MCP tool definitions (``tool_definition`` turns them into any
#: provider's shape, like any other tool).
META_TOOLS: dict[str, Tool] = {
    "mcp_list": Tool(
        name="mcp_list",
        description="List the configured MCP servers (without server), or one server's "
                    "tools (with server). action=close stops that server until next used.",
        input_schema={"type": "object", "additionalProperties": False, "properties": {
            "server": _SERVER,
            "action": {"type": "string", "enum": ["list", "close"],
                       "description": "list (default) or close"},
            "timeoutSeconds": _TIMEOUT}}),
    "mcp_call": Tool(
        name="mcp_call",
        description="Call one tool of one configured MCP server.",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["server", "tool"], "properties": {
                          "server": _SERVER,
                          "tool": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_META_NAME,
                                   "description": "the tool's name on that server"},
                          "arguments": {"type": "object", "additionalProperties": True,
                                        "description": "the tool's arguments"},
                          "timeoutSeconds": _TIMEOUT}}),
    "mcp_request": Tool(
        name="mcp_request",
        description="Send one raw JSON-RPC request to a configured MCP server "
                    "(diagnostics).",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["server", "method"], "properties": {
                          "server": _SERVER,
                          "method": {"type": "string", "minLength": 1,
                                     "maxLength": MAX_META_NAME},
                          "params": {"type": "object", "additionalProperties": True},
                          "timeoutSeconds": _TIMEOUT}}),
}


class MetaToolError(MCPError, ValueError):
    """A meta-tool call the model got wrong (a missing or bad argument, an unknown server or
    tool): returned to the model as an ``isError`` result so it can try again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MetaRequest:
    """What a checked meta-tool call asks the host to do.  ``kind`` is ``"servers"``
    (list the servers), ``"tools"`` (list ``server``'s tools), ``"close"``, ``"call"``
    (``tool`` with ``arguments``) or ``"request"`` (``method`` with ``params``)."""

    kind: str
    server: str | None = None
    tool: str | None = None
    method: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None


def _name(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise MetaToolError(f"{key!r} must be a non-blank string")
    if len(value) > MAX_META_NAME:
        raise MetaToolError(f"{key!r} is longer than {MAX_META_NAME} characters")
    return value


def _timeout(args: Mapping[str, Any]) -> float | None:
    value = args.get("timeoutSeconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) \
            or not MIN_META_TIMEOUT <= value <= MAX_META_TIMEOUT:
        raise MetaToolError(f"'timeoutSeconds' must be an integer from {MIN_META_TIMEOUT} "
                            f"to {MAX_META_TIMEOUT}")
    return float(value)


def _object(args: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = args.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MetaToolError(f"{key!r} must be an object, not {type(value).__name__}")
    return value


def _server(args: Mapping[str, Any], servers: Collection[str]) -> str:
    server = _name(args, "server")
    if server not in servers:
        known = ", ".join(sorted(servers)) or "none"
        raise MetaToolError(f"no server is named {server!r} (configured: {known})")
    return server


def parse_meta_call(name: str, arguments: Mapping[str, Any] | None,
                    servers: Collection[str]) -> MetaRequest:
    """Check a call of meta-tool ``name`` against its rules and the configured ``servers``.

    Raises ``KeyError`` for a name that is not a meta-tool (a host routing bug), and
    :class:`MetaToolError` for a model's mistake (give it back as :func:`meta_error`)."""
    if name not in META_TOOLS:
        raise KeyError(name)
    if arguments is not None and not isinstance(arguments, Mapping):
        raise MetaToolError("the arguments must be an object")
    args = dict(arguments or {})
    allowed = set(META_TOOLS[name].input_schema["properties"])
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise MetaToolError(f"unknown argument{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(map(repr, unknown))} (takes {', '.join(sorted(allowed))})")
    timeout = _timeout(args)
    if name == "mcp_list":
        action = args.get("action", "list")
        if action not in ("list", "close"):
            raise MetaToolError("'action' must be \"list\" or \"close\"")
        if args.get("server") is None:
            if action == "close":
                raise MetaToolError("action=close needs 'server'")
            return MetaRequest(kind="servers")
        server = _server(args, servers)
        return MetaRequest(kind="tools" if action == "list" else "close", server=server,
                           timeout=timeout)
    if name == "mcp_call":
        server = _server(args, servers)
        return MetaRequest(kind="call", server=server, tool=_name(args, "tool"),
                           arguments=_object(args, "arguments"), timeout=timeout)
    server = _server(args, servers)
    method = _name(args, "method")
    refused = _REFUSED_METHODS.get(method) or (
        _REFUSED_METHODS["notifications/"] if method.startswith("notifications/") else None)
    if refused:
        raise MetaToolError(f"mcp_request does not send {method!r}: {refused}")
    return MetaRequest(kind="request", server=server, method=method,
                       arguments=_object(args, "params"), timeout=timeout)


#: Methods ``mcp_request`` refuses, with why: it is for diagnostics and must not go around
#: the host (its tool filters, its handshake) nor break the session.
_REFUSED_METHODS = {
    "tools/call": "call tools with mcp_call (the host's tool filters apply there)",
    "initialize": "the host did the handshake; a second one would break the session",
    "notifications/": "notifications get no answer; mcp_request sends requests",
}


def meta_result(value: Any) -> CallToolResult:
    """A meta-tool's JSON answer as a tool result: the JSON as text and as structured
    content (``to_provider_content`` keeps one of the two)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    structured = value if isinstance(value, dict) else {"result": value}
    raw = {"content": [{"type": "text", "text": text}], "structuredContent": structured}
    return CallToolResult(content=(TextContent(text=text),), structured_content=structured,
                          raw=raw)


def meta_error(message: str) -> CallToolResult:
    """A meta-tool's failure as an ``isError`` tool result (the model reads it)."""
    raw = {"content": [{"type": "text", "text": message}], "isError": True}
    return CallToolResult(content=(TextContent(text=message),), is_error=True, raw=raw)
