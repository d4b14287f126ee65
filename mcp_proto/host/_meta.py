"""Meta-tools: three fixed tools a model uses to reach every server, after rpi-mcp-adapter
(host-notes 2.1), for hosts that do not put every server's tools in the model's context.

- ``mcp_list``: without ``server``, the configured servers (transport, enabled, state;
  nothing is started); with ``server``, its tools (every page); ``action: "close"`` stops
  that server's run until it is next used.
- ``mcp_call``: ``server``, ``tool``, ``arguments`` (an object), ``timeoutSeconds`` (an
  integer from 1 to 300), all checked before any request is made.
- ``mcp_request``: one raw JSON-RPC ``method`` + ``params`` to a server through its session
  (diagnostics).
- ``mcp_search``: ``query`` (words), ``limit`` (1 to :data:`MAX_META_LIMIT`): the tools of
  every server ranked for the query (the host's tool search), for a model that was not given
  every tool.
- ``mcp_read_result``: ``handle``, ``offset``, ``length``: more of a tool result that was cut
  to the model's budget (the marker in the cut result names the handle and the offset).
- ``mcp_list_resources``: the resources of every server (or of ``server``).
- ``mcp_read_resource``: ``uri`` (and ``server`` when two servers have it): its contents.
- ``mcp_get_prompt``: ``name`` (a prompt's public name) and ``arguments`` (strings): its
  messages.
- ``mcp_list_skills``: the skills of every server (or of ``server``): public names, origins
  and descriptions (``skill_listing``).
- ``mcp_load_skill``: ``name`` (a skill's public name): its ``SKILL.md``, verified against
  its entry, as ``skill_instructions``.
- ``mcp_read_skill_file``: ``name`` and ``path`` (relative to the skill's root, as its
  instructions list them): one file of a loaded skill, verified, from the skill's own
  server only.

This module is pure: :func:`parse_meta_call` checks a call and says what to do
(:class:`MetaRequest`); the binding's Host does it and renders the outcome with
:func:`meta_result` / :func:`meta_error` and ``to_provider_content``.  A model's mistake is
a :class:`MetaToolError`, which the Host returns to the model as an ``isError`` result (the
model can correct itself), never as an exception of the host's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import MCPError
from .._types import CallToolResult, TextContent, Tool

__all__ = [
    "MAX_META_LIMIT",
    "MAX_META_PATH",
    "MAX_META_READ_LENGTH",
    "MAX_META_TIMEOUT",
    "META_TOOLS",
    "MIN_META_TIMEOUT",
    "MetaRequest",
    "MetaToolError",
    "meta_error",
    "meta_result",
    "text_result",
    "parse_meta_call",
]

#: ``timeoutSeconds`` bounds (rpi-mcp-adapter's): a model asking for an hour-long call is a
#: mistake a host should not honour silently.
MIN_META_TIMEOUT = 1
MAX_META_TIMEOUT = 300
#: Longest tool or method name a model may pass (rpi's bound): real names are short.
MAX_META_NAME = 200
#: Most tools one ``mcp_search`` returns: more is a listing, not a search, and costs the
#: context the search is there to save.
MAX_META_LIMIT = 50
#: Default number of tools ``mcp_search`` returns.
DEFAULT_META_LIMIT = 10
#: Longest search query a model may pass: a query is a few words; a pasted document is not.
MAX_META_QUERY = 1000
#: Longest resource URI a model may pass (the common URL limit of browsers and proxies).
MAX_META_URI = 8192
#: Most characters one ``mcp_read_result`` returns: a page, so a model reading a huge result
#: is still bounded per turn by what it asked for.
MAX_META_READ_LENGTH = 100_000
#: Characters ``mcp_read_result`` returns when ``length`` is not given.
DEFAULT_META_READ_LENGTH = 20_000
#: Most arguments one ``mcp_get_prompt`` takes (prompts declare a handful).
MAX_PROMPT_ARGUMENTS = 64
#: Longest skill file path a model may pass (as long as a URI: it may be one).
MAX_META_PATH = MAX_META_URI

_TIMEOUT = {"type": "integer", "minimum": MIN_META_TIMEOUT, "maximum": MAX_META_TIMEOUT,
            "description": "seconds before the call is abandoned (default: the host's)"}
_SERVER = {"type": "string", "description": "the name of a configured server (see mcp_list)"}

#: The meta-tools, as MCP tool definitions (``tool_definition`` turns them into any
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
    "mcp_search": Tool(
        name="mcp_search",
        description="Search the tools of every configured MCP server by what they do. "
                    "Returns the best matches with their server, tool name, description and "
                    "input schema; call one with mcp_call.",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["query"], "properties": {
                          "query": {"type": "string", "minLength": 1,
                                    "maxLength": MAX_META_QUERY,
                                    "description": "words describing the tool wanted"},
                          "limit": {"type": "integer", "minimum": 1,
                                    "maximum": MAX_META_LIMIT,
                                    "description": f"most tools returned (default "
                                                   f"{DEFAULT_META_LIMIT})"},
                          "timeoutSeconds": _TIMEOUT}}),
    "mcp_read_result": Tool(
        name="mcp_read_result",
        description="Read more of a tool result that was cut to fit: pass the handle and "
                    "the offset its marker names.",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["handle"], "properties": {
                          "handle": {"type": "string", "minLength": 1,
                                     "maxLength": MAX_META_NAME,
                                     "description": "the handle in the marker, e.g. r7"},
                          "offset": {"type": "integer", "minimum": 0,
                                     "description": "the first character to read "
                                                    "(default 0)"},
                          "length": {"type": "integer", "minimum": 1,
                                     "maximum": MAX_META_READ_LENGTH,
                                     "description": f"characters to read (default "
                                                    f"{DEFAULT_META_READ_LENGTH})"}}}),
    "mcp_list_resources": Tool(
        name="mcp_list_resources",
        description="List the resources (files, documents, data) the MCP servers offer, "
                    "of every server or of one.",
        input_schema={"type": "object", "additionalProperties": False, "properties": {
            "server": _SERVER, "timeoutSeconds": _TIMEOUT}}),
    "mcp_read_resource": Tool(
        name="mcp_read_resource",
        description="Read one resource of an MCP server by its URI (see "
                    "mcp_list_resources).",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["uri"], "properties": {
                          "uri": {"type": "string", "minLength": 1, "maxLength": MAX_META_URI,
                                  "description": "the resource's URI"},
                          "server": _SERVER, "timeoutSeconds": _TIMEOUT}}),
    "mcp_get_prompt": Tool(
        name="mcp_get_prompt",
        description="Get one prompt (a template of messages) of an MCP server, filled "
                    "with its arguments.",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["name"], "properties": {
                          "name": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_META_NAME,
                                   "description": "the prompt's name"},
                          "arguments": {"type": "object",
                                        "additionalProperties": {"type": "string"},
                                        "description": "the prompt's arguments (strings)"},
                          "timeoutSeconds": _TIMEOUT}}),
    "mcp_list_skills": Tool(
        name="mcp_list_skills",
        description="List the skills (instructions for tasks, with their files) the MCP "
                    "servers offer, of every server or of one: name, server, description.",
        input_schema={"type": "object", "additionalProperties": False, "properties": {
            "server": _SERVER, "timeoutSeconds": _TIMEOUT}}),
    "mcp_load_skill": Tool(
        name="mcp_load_skill",
        description="Load one skill of an MCP server by its name (see mcp_list_skills): "
                    "its instructions and the files it may read.",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["name"], "properties": {
                          "name": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_META_NAME,
                                   "description": "the skill's name, as mcp_list_skills "
                                                  "gives it"},
                          "timeoutSeconds": _TIMEOUT}}),
    "mcp_read_skill_file": Tool(
        name="mcp_read_skill_file",
        description="Read one file of a loaded skill, by its path relative to the skill "
                    "(as mcp_load_skill lists them).",
        input_schema={"type": "object", "additionalProperties": False,
                      "required": ["name", "path"], "properties": {
                          "name": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_META_NAME,
                                   "description": "the skill's name"},
                          "path": {"type": "string", "minLength": 1,
                                   "maxLength": MAX_META_PATH,
                                   "description": "the file's path in the skill, e.g. "
                                                  "references/GUIDE.md"},
                          "timeoutSeconds": _TIMEOUT}}),
}


class MetaToolError(MCPError, ValueError):
    """A meta-tool call the model got wrong (a missing or bad argument, an unknown server or
    tool): returned to the model as an ``isError`` result so it can try again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MetaRequest:
    """What a checked meta-tool call asks the host to do.  ``kind`` is ``"servers"``
    (list the servers), ``"tools"`` (list ``server``'s tools), ``"close"``, ``"call"``
    (``tool`` with ``arguments``), ``"request"`` (``method`` with ``params`` in
    ``arguments``), ``"search"`` (``query``, ``limit``), ``"read_result"`` (``handle``,
    ``offset``, ``length``), ``"resources"`` (of ``server``, or of all), ``"read_resource"``
    (``uri``, on ``server`` if given), ``"prompt"`` (the prompt ``tool`` with string
    ``arguments``), ``"skills"`` (of ``server``, or of all), ``"load_skill"`` (the skill
    public name ``skill``) or ``"read_skill_file"`` (``path`` in the skill ``skill``)."""

    kind: str
    server: str | None = None
    tool: str | None = None
    method: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    query: str | None = None
    limit: int = DEFAULT_META_LIMIT
    handle: str | None = None
    offset: int = 0
    length: int = DEFAULT_META_READ_LENGTH
    uri: str | None = None
    skill: str | None = None
    path: str | None = None


def _name(args: Mapping[str, Any], key: str, longest: int = MAX_META_NAME) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise MetaToolError(f"{key!r} must be a non-blank string")
    if len(value) > longest:
        raise MetaToolError(f"{key!r} is longer than {longest} characters")
    return value


def _integer(args: Mapping[str, Any], key: str, default: int, low: int,
             high: int | None) -> int:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < low \
            or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of {low} or more"
        raise MetaToolError(f"{key!r} must be an integer {span}")
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


def _maybe_server(args: Mapping[str, Any], servers: Collection[str]) -> str | None:
    return None if args.get("server") is None else _server(args, servers)


def _list(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
          ) -> MetaRequest:
    action = args.get("action", "list")
    if action not in ("list", "close"):
        raise MetaToolError("'action' must be \"list\" or \"close\"")
    if args.get("server") is None:
        if action == "close":
            raise MetaToolError("action=close needs 'server'")
        return MetaRequest(kind="servers")
    return MetaRequest(kind="tools" if action == "list" else "close",
                       server=_server(args, servers), timeout=timeout)


def _call(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
          ) -> MetaRequest:
    return MetaRequest(kind="call", server=_server(args, servers), tool=_name(args, "tool"),
                       arguments=_object(args, "arguments"), timeout=timeout)


def _request(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
             ) -> MetaRequest:
    server = _server(args, servers)
    method = _name(args, "method")
    refused = _REFUSED_METHODS.get(method) or (
        _REFUSED_METHODS["notifications/"] if method.startswith("notifications/") else None)
    if refused:
        raise MetaToolError(f"mcp_request does not send {method!r}: {refused}")
    return MetaRequest(kind="request", server=server, method=method,
                       arguments=_object(args, "params"), timeout=timeout)


def _search(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
            ) -> MetaRequest:
    return MetaRequest(kind="search", query=_name(args, "query", MAX_META_QUERY),
                       limit=_integer(args, "limit", DEFAULT_META_LIMIT, 1, MAX_META_LIMIT),
                       timeout=timeout)


def _read_result(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
                 ) -> MetaRequest:
    return MetaRequest(kind="read_result", handle=_name(args, "handle"),
                       offset=_integer(args, "offset", 0, 0, None),
                       length=_integer(args, "length", DEFAULT_META_READ_LENGTH, 1,
                                       MAX_META_READ_LENGTH))


def _resources(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
               ) -> MetaRequest:
    return MetaRequest(kind="resources", server=_maybe_server(args, servers), timeout=timeout)


def _read_resource(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
                   ) -> MetaRequest:
    return MetaRequest(kind="read_resource", uri=_name(args, "uri", MAX_META_URI),
                       server=_maybe_server(args, servers), timeout=timeout)


def _prompt(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
            ) -> MetaRequest:
    arguments = _object(args, "arguments")
    if len(arguments) > MAX_PROMPT_ARGUMENTS:
        raise MetaToolError(f"'arguments' has more than {MAX_PROMPT_ARGUMENTS} entries")
    bad = sorted(k for k, v in arguments.items() if not isinstance(v, str))
    if bad:
        raise MetaToolError(f"prompt arguments are strings; not {', '.join(map(repr, bad))}")
    return MetaRequest(kind="prompt", tool=_name(args, "name"), arguments=arguments,
                       timeout=timeout)


def _skills(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
            ) -> MetaRequest:
    return MetaRequest(kind="skills", server=_maybe_server(args, servers), timeout=timeout)


def _load_skill(args: Mapping[str, Any], servers: Collection[str], timeout: float | None
                ) -> MetaRequest:
    return MetaRequest(kind="load_skill", skill=_name(args, "name"), timeout=timeout)


def _read_skill_file(args: Mapping[str, Any], servers: Collection[str],
                     timeout: float | None) -> MetaRequest:
    return MetaRequest(kind="read_skill_file", skill=_name(args, "name"),
                       path=_name(args, "path", MAX_META_PATH), timeout=timeout)


_Parser = Callable[[Mapping[str, Any], Collection[str], "float | None"], MetaRequest]
#: meta-tool -> its argument checker (each returns what to do, or raises MetaToolError).
_PARSERS: Mapping[str, _Parser] = {
    "mcp_list": _list,
    "mcp_call": _call,
    "mcp_request": _request,
    "mcp_search": _search,
    "mcp_read_result": _read_result,
    "mcp_list_resources": _resources,
    "mcp_read_resource": _read_resource,
    "mcp_get_prompt": _prompt,
    "mcp_list_skills": _skills,
    "mcp_load_skill": _load_skill,
    "mcp_read_skill_file": _read_skill_file,
}


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
    return _PARSERS[name](args, servers, _timeout(args))


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


def text_result(text: str) -> CallToolResult:
    """A meta-tool's answer that is text for the model (a skill's instructions, a file)."""
    raw = {"content": [{"type": "text", "text": text}]}
    return CallToolResult(content=(TextContent(text=text),), raw=raw)


def meta_error(message: str) -> CallToolResult:
    """A meta-tool's failure as an ``isError`` tool result (the model reads it)."""
    raw = {"content": [{"type": "text", "text": message}], "isError": True}
    return CallToolResult(content=(TextContent(text=message),), is_error=True, raw=raw)
