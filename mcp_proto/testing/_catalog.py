"""What :class:`~._server.MemoryServer` answers, as pure functions of its catalogue.

The records of what a test registered (:class:`ToolEntry`, :class:`ResourceEntry`,
:class:`TemplateEntry`, :class:`PromptEntry`), the :class:`Catalogue` methods a test
registers them with, and how each becomes wire JSON; the opaque
cursors of the paginated lists; the 2026-07-28 envelope check; and the results a handler's
outcome turns into (a tool's ``CallToolResult``, a template's ``contents``, a prompt's
``messages``).  A request the server must refuse is an :class:`~mcp_proto.RpcError` raised
here: the server answers it with that code, message and data.  No I/O, and no state but
the catalogue.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload
from urllib.parse import unquote

from .._errors import RpcError
from .._events import LOG_LEVELS
from .._types import RequestId
from ..wire._json import dumps

__all__ = [
    "CAPABILITIES_KEY",
    "Catalogue",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LEGACY_ONLY",
    "LIST_FLAGS",
    "LOG_LEVEL_KEY",
    "METHOD_NOT_FOUND",
    "MODERN_ONLY",
    "PARSE_ERROR",
    "PROTOCOL_VERSION_KEY",
    "REQUEST_CAPABILITY",
    "RESOURCE_NOT_FOUND",
    "SERVER_CAPABILITIES",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Envelope",
    "HandlerCall",
    "Running",
    "PromptEntry",
    "ResourceEntry",
    "TemplateEntry",
    "ToolEntry",
    "accept_listen",
    "check_envelope",
    "level_rank",
    "list_page",
    "listed",
    "not_found",
    "progress_token",
    "prompt_arguments",
    "prompt_result",
    "resource_result",
    "schema_of",
    "take",
    "template_pattern",
    "tool_result",
]

# The 2026-07-28 ``_meta`` keys (M-01, M-02, SB-02), spelled as the session spells them
# (this room may not import the session; a test checks they agree).
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

# JSON-RPC error codes (spec-checklist section 4.2).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: Resource not found in the handshake era (2026-07-28 uses -32602 instead).
RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: The longest text of an error message the server writes (an exception's text may be huge).
MAX_ERROR_TEXT = 500

#: What a server request needs the client to have declared (legacy capabilities).
REQUEST_CAPABILITY: dict[str, str | None] = {
    "sampling/createMessage": "sampling", "elicitation/create": "elicitation",
    "roots/list": "roots", "ping": None}
#: The listen flag of each list's change notification (SB-01).
LIST_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged",
              "resources": "resourcesListChanged"}
#: What the server declares, in both eras (tasks are added when a tool has them: ``_tasks``).
SERVER_CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}
#: Methods only the handshake era has (2026-07-28 removed them) and only the stateless one.
LEGACY_ONLY = frozenset({"ping", "logging/setLevel", "resources/subscribe",
                         "resources/unsubscribe", "initialize", "tasks/result", "tasks/list"})
MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen", "tasks/update"})

_RANK = {level: i for i, level in enumerate(LOG_LEVELS)}

#: Python annotations -> JSON Schema types, for a tool's default ``inputSchema``.
_JSON_TYPES = {"int": "integer", "float": "number", "str": "string", "bool": "boolean",
               "list": "array", "dict": "object", int: "integer", float: "number",
               str: "string", bool: "boolean", list: "array", dict: "object"}


def _text(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT - 3] + "..."


def take(buffer: bytearray) -> bytes:
    """What ``buffer`` holds, emptied: an endpoint's ``data_to_send`` / ``stderr_to_send``."""
    out = bytes(buffer)
    buffer.clear()
    return out


def level_rank(level: str) -> int:
    """The RFC 5424 severity order of ``level`` (``debug`` lowest).  Raises ``ValueError``
    naming the levels for an unknown one."""
    try:
        return _RANK[level]
    except (KeyError, TypeError):
        raise ValueError(f"unknown log level {level!r}; use one of {list(LOG_LEVELS)}") from None


# -- calls ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandlerCall:
    """A handler the driver must run: ``fn(**arguments)``, then
    :meth:`~._server.MemoryServer.finish` with its return value or the exception it raised."""

    call_id: int
    kind: str
    """``"tool"``, ``"resource"`` (a template's variables are the arguments) or ``"prompt"``."""
    name: str
    """The tool's or prompt's name, or the resource's URI."""
    fn: Callable[..., Any] = field(repr=False)
    arguments: dict[str, Any]
    request_id: RequestId
    progress_token: str | int | None = None

    def run(self) -> object:
        """``fn(**arguments)``: its return value, or the ``Exception`` it raised (returned,
        not raised), ready for :meth:`~._server.MemoryServer.finish`."""
        try:
            return self.fn(**self.arguments)
        except Exception as exc:
            return exc


class Running:
    """A call in flight: what its answer needs."""

    __slots__ = ("call", "cancelled", "log_level", "modern", "output_schema", "task_id", "what")

    def __init__(self, call: HandlerCall, modern: bool, log_level: str | None,
                 output_schema: dict[str, Any] | None, what: str | None) -> None:
        self.call = call
        self.modern = modern
        self.log_level = log_level
        self.output_schema = output_schema
        self.what = what  # a template's MIME type, a prompt's description
        self.cancelled = False
        self.task_id: str | None = None  # the call runs as this task (its request answered)


# -- the catalogue --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolEntry:
    name: str
    fn: Callable[..., Any]
    input_schema: dict[str, Any]
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    title: str | None = None
    task_support: str = "forbidden"

    def wire(self, tasks: bool = False) -> dict[str, Any]:
        """The Tool object; with ``tasks`` (2025-11-25), its ``execution.taskSupport``."""
        out: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations is not None:
            out["annotations"] = self.annotations
        if tasks and self.task_support != "forbidden":
            out["execution"] = {"taskSupport": self.task_support}
        return out


@dataclass(frozen=True, slots=True)
class ResourceEntry:
    uri: str
    name: str
    text: str | None = None
    blob: str | None = None
    """Base64, as sent."""
    mime_type: str | None = None
    description: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        return out

    def contents(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.blob is not None:
            out["blob"] = self.blob
        else:
            out["text"] = self.text or ""
        return out


@dataclass(frozen=True, slots=True)
class TemplateEntry:
    uri_template: str
    name: str
    fn: Callable[..., Any]
    pattern: re.Pattern[str]
    mime_type: str | None = None
    description: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        return out

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables in ``uri`` (percent-decoded), or None if it does not
        match."""
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        return {k: unquote(v) for k, v in found.groupdict().items()}


_EXPRESSION = re.compile(r"\{([+#]?)([A-Za-z0-9_]+)\}")


def template_pattern(uri_template: str) -> re.Pattern[str]:
    """The regular expression of an RFC 6570 template of simple expressions: ``{var}``
    matches one path segment, ``{+var}`` and ``{#var}`` anything.  Raises ``ValueError`` for
    an expression it does not read (operators ``./;?&``, lists, modifiers) or a variable
    named twice."""
    parts: list[str] = []
    seen: set[str] = set()
    at = 0
    for found in _EXPRESSION.finditer(uri_template):
        literal = uri_template[at:found.start()]
        if "{" in literal or "}" in literal:
            raise ValueError(f"unsupported expression in URI template {uri_template!r}")
        parts.append(re.escape(literal))
        op, name = found.groups()
        if name in seen:
            raise ValueError(f"variable {name!r} named twice in {uri_template!r}")
        seen.add(name)
        parts.append(f"(?P<{name}>.+?)" if op else f"(?P<{name}>[^/?#]+)")
        at = found.end()
    rest = uri_template[at:]
    if "{" in rest or "}" in rest:
        raise ValueError(f"unsupported expression in URI template {uri_template!r}")
    parts.append(re.escape(rest))
    return re.compile("".join(parts))


@dataclass(frozen=True, slots=True)
class PromptEntry:
    name: str
    fn: Callable[..., Any]
    arguments: tuple[dict[str, Any], ...]
    description: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.arguments:
            out["arguments"] = list(self.arguments)
        return out


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: nothing is known
        return []
    return [p for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def schema_of(fn: Callable[..., Any]) -> dict[str, Any]:
    """A tool's default ``inputSchema``: an object with a property per parameter of ``fn``
    (typed when its annotation is ``int``, ``float``, ``str``, ``bool``, ``list`` or
    ``dict``), those without a default required."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in _parameters(fn):
        kind = _JSON_TYPES.get(p.annotation) if isinstance(p.annotation, (str, type)) else None
        properties[p.name] = {"type": kind} if kind is not None else {}
        if p.default is p.empty:
            required.append(p.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def prompt_arguments(fn: Callable[..., Any], arguments: Sequence[str | dict[str, Any]] | None
                     ) -> tuple[dict[str, Any], ...]:
    """A prompt's ``arguments``: as given (a name alone is a required argument), or from the
    parameters of ``fn`` (required when without a default).  Raises ``ValueError`` for an
    entry without a string ``name``."""
    if arguments is None:
        return tuple({"name": p.name, "required": p.default is p.empty}
                     for p in _parameters(fn))
    out: list[dict[str, Any]] = []
    for entry in arguments:
        item = {"name": entry, "required": True} if isinstance(entry, str) else dict(entry)
        if not isinstance(item.get("name"), str):
            raise ValueError(f"a prompt argument needs a string name: {entry!r}")
        out.append(item)
    return tuple(out)


# -- what a test registers ------------------------------------------------------------------

_F = TypeVar("_F", bound=Callable[..., Any])


class Catalogue:
    """What a test registers on a :class:`~._server.MemoryServer` (its tools, resources,
    resource templates and prompts), and how."""

    _tools: dict[str, ToolEntry]
    _resources: dict[str, ResourceEntry]
    _templates: list[TemplateEntry]
    _prompts: dict[str, PromptEntry]

    @overload
    def tool(self, fn: _F, /) -> _F: ...
    @overload
    def tool(self, fn: None = None, /, *, name: str | None = None,
             description: str | None = None, input_schema: dict[str, Any] | None = None,
             output_schema: dict[str, Any] | None = None,
             annotations: dict[str, Any] | None = None, title: str | None = None,
             task_support: str = "forbidden") -> Callable[[_F], _F]: ...

    def tool(self, fn: _F | None = None, /, *, name: str | None = None,
             description: str | None = None, input_schema: dict[str, Any] | None = None,
             output_schema: dict[str, Any] | None = None,
             annotations: dict[str, Any] | None = None, title: str | None = None,
             task_support: str = "forbidden") -> Any:
        """Register ``fn`` as a tool (``@server.tool`` or ``@server.tool(...)``); returns
        ``fn``.  See :meth:`add_tool`."""
        def register(fn: _F) -> _F:
            self.add_tool(name or fn.__name__, fn, description=description,
                          input_schema=input_schema, output_schema=output_schema,
                          annotations=annotations, title=title, task_support=task_support)
            return fn
        return register if fn is None else register(fn)

    def add_tool(self, name: str, fn: Callable[..., Any], *, description: str | None = None,
                 input_schema: dict[str, Any] | None = None,
                 output_schema: dict[str, Any] | None = None,
                 annotations: dict[str, Any] | None = None, title: str | None = None,
                 task_support: str = "forbidden") -> None:
        """Add (or replace) a tool.  ``input_schema`` defaults to one made from ``fn``'s
        parameters; the description to ``fn``'s docstring's first line.  ``task_support``:
        whether a call may (``"optional"``), must (``"required"``) or may not
        (``"forbidden"``) run as a task (see :mod:`._tasks`); ``ValueError`` for another.
        Announce a change to a connected client with ``notify_tools_changed()``."""
        if task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"task_support must be 'forbidden', 'optional' or 'required', "
                             f"got {task_support!r}")
        if description is None and fn.__doc__:
            description = fn.__doc__.strip().splitlines()[0]
        self._tools[name] = ToolEntry(name, fn, input_schema or schema_of(fn), description,
                                      output_schema, annotations, title, task_support)

    def remove_tool(self, name: str) -> None:
        """Drop a tool (KeyError if there is none of that name)."""
        del self._tools[name]

    def add_resource(self, uri: str, *, text: str | None = None, blob: bytes | str | None = None,
                     name: str | None = None, mime_type: str | None = None,
                     description: str | None = None) -> None:
        """Add a static resource: ``text``, or ``blob`` (bytes, or base64 text).  Raises
        ``ValueError`` unless exactly one of them is given."""
        if (text is None) == (blob is None):
            raise ValueError("a resource has either text or blob")
        if isinstance(blob, (bytes, bytearray)):
            blob = base64.b64encode(blob).decode("ascii")
        shown = name or uri.rstrip("/").rsplit("/", 1)[-1] or uri
        self._resources[uri] = ResourceEntry(uri, shown, text, blob, mime_type, description)

    def add_resource_template(self, uri_template: str, fn: Callable[..., Any], *,
                              name: str | None = None, mime_type: str | None = None,
                              description: str | None = None) -> None:
        """Add a resource template; reading a URI it matches calls ``fn(**variables)``
        (through ``next_call()``), whose ``str`` is the text, ``bytes`` the blob.  Raises
        ``ValueError`` for a template of expressions other than ``{var}``, ``{+var}``."""
        pattern = template_pattern(uri_template)
        self._templates.append(TemplateEntry(uri_template, name or fn.__name__, fn, pattern,
                                             mime_type, description))

    def add_prompt(self, name: str, fn: Callable[..., Any], *, description: str | None = None,
                   arguments: Sequence[str | dict[str, Any]] | None = None) -> None:
        """Add a prompt; ``prompts/get`` calls ``fn(**arguments)`` (through
        ``next_call()``), whose ``str`` is one user message, a list the messages.
        ``arguments`` default to ``fn``'s parameters (a name alone: a required one)."""
        self._prompts[name] = PromptEntry(name, fn, prompt_arguments(fn, arguments),
                                          description)


# -- requests -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a 2026-07-28 request's ``_meta`` says (M-01)."""

    version: str
    capabilities: dict[str, Any]
    log_level: str | None


def check_envelope(params: dict[str, Any], versions: Sequence[str]) -> Envelope:
    """The envelope of a 2026-07-28 request.  Raises :class:`RpcError`: -32602 when
    ``_meta`` lacks the protocol version or the client capabilities (M-01), -32022 with
    ``data.supported`` for a version not in ``versions`` (V-11)."""
    meta = params.get("_meta")
    if type(meta) is not dict:
        raise RpcError(INVALID_PARAMS, f"the request has no _meta with {PROTOCOL_VERSION_KEY} "
                       f"and {CAPABILITIES_KEY} (2026-07-28 requires them on every request; "
                       "a handshake-era client sends initialize first)")
    version = meta.get(PROTOCOL_VERSION_KEY)
    if type(version) is not str:
        raise RpcError(INVALID_PARAMS, f"_meta lacks the string {PROTOCOL_VERSION_KEY}")
    capabilities = meta.get(CAPABILITIES_KEY)
    if type(capabilities) is not dict:
        raise RpcError(INVALID_PARAMS, f"_meta lacks the object {CAPABILITIES_KEY}")
    if version not in versions:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION,
                       f"unsupported protocol version {_text(version)!r}",
                       {"supported": list(versions), "requested": version})
    level = meta.get(LOG_LEVEL_KEY)
    return Envelope(version, capabilities, level if level in _RANK else None)


def progress_token(params: dict[str, Any]) -> str | int | None:
    """``_meta.progressToken`` when it is a string or an integer (P-01)."""
    meta = params.get("_meta")
    token = meta.get("progressToken") if type(meta) is dict else None
    return token if type(token) is str or type(token) is int else None


def not_found(uri: str, modern: bool) -> RpcError:
    """The error for a resource nobody has: -32602 in 2026-07-28, -32002 before (R-02)."""
    return RpcError(INVALID_PARAMS if modern else RESOURCE_NOT_FOUND,
                    f"resource not found: {_text(uri)}", {"uri": uri})


def accept_listen(asked: dict[str, Any], max_uris: int) -> dict[str, Any]:
    """What a ``subscriptions/listen`` is acknowledged with (SB-02): the list changes it asked
    for, and its first ``max_uris`` resource URIs (strings, once each); never ``taskIds``
    (task notifications are not sent on listen streams: the client polls)."""
    accepted: dict[str, Any] = {flag: True for flag in LIST_FLAGS.values()
                                if asked.get(flag) is True}
    uris = asked.get("resourceSubscriptions")
    if type(uris) is list:
        kept = [u for u in uris if type(u) is str][:max_uris]
        accepted["resourceSubscriptions"] = list(dict.fromkeys(kept))
    return accepted


def _encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def list_page(items: Sequence[dict[str, Any]], cursor: object, size: int,
         kind: str) -> tuple[list[dict[str, Any]], str | None]:
    """One page of a list and the cursor of the next (None at the end, S-01).  Cursors are
    opaque to the client: base64 of the list's kind and an offset.  Raises
    :class:`RpcError` -32602 for a cursor this server did not give for this list."""
    offset = 0
    if cursor is not None:
        try:
            if type(cursor) is not str:
                raise ValueError
            name, _, number = base64.urlsafe_b64decode(cursor.encode("ascii")).decode(
                "ascii").partition(":")
            offset = int(number)
            if name != kind or not 0 <= offset <= len(items) or not number.isdigit():
                raise ValueError
        except (ValueError, UnicodeError, binascii.Error):
            raise RpcError(INVALID_PARAMS, f"invalid cursor {_text(cursor)!r} for {kind}",
                           ) from None
    end = offset + size
    return list(items[offset:end]), _encode_cursor(kind, end) if end < len(items) else None


def listed(key: str, items: list[dict[str, Any]], cursor: str | None) -> dict[str, Any]:
    """A list's result: its items under ``key``, and ``nextCursor`` unless it is the last."""
    result: dict[str, Any] = {key: items}
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


# -- results --------------------------------------------------------------------------------


def _is_json(value: object) -> bool:
    try:
        dumps(value)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _failure(exc: BaseException) -> str:
    text = str(exc)
    return _text(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def tool_result(outcome: object, output_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The ``CallToolResult`` of a tool's outcome (T-02, T-03): a ``str`` is one text block;
    a dict with ``content`` is the result itself; None is no content; other JSON is one text
    block of its JSON, and also ``structuredContent`` when the tool has an
    ``output_schema``; an exception (and a value that is not JSON) is an ``isError`` result
    naming it.  Raises :class:`RpcError` when ``outcome`` is one (the call is answered with
    that JSON-RPC error)."""
    if isinstance(outcome, RpcError):
        raise outcome
    if isinstance(outcome, BaseException):
        return {"content": [{"type": "text", "text": _failure(outcome)}], "isError": True}
    if not _is_json(outcome):
        return {"content": [{"type": "text", "text": f"the tool returned a value that is not "
                             f"JSON: {type(outcome).__name__}"}], "isError": True}
    if isinstance(outcome, str):
        return {"content": [{"type": "text", "text": outcome}]}
    if outcome is None:
        return {"content": []}
    if isinstance(outcome, dict) and "content" in outcome:
        return dict(outcome)
    result: dict[str, Any] = {"content": [{"type": "text", "text": dumps(outcome).decode()}]}
    if output_schema is not None:
        result["structuredContent"] = outcome
    return result


def _handler_error(outcome: object, what: str) -> RpcError | None:
    if isinstance(outcome, RpcError):
        return outcome
    if isinstance(outcome, BaseException):
        return RpcError(INTERNAL_ERROR, f"{what} failed: {_failure(outcome)}")
    if not _is_json(outcome) and not isinstance(outcome, (bytes, bytearray)):
        return RpcError(INTERNAL_ERROR, f"{what} returned a value that is not JSON: "
                        f"{type(outcome).__name__}")
    return None


def resource_result(uri: str, outcome: object, mime_type: str | None) -> dict[str, Any]:
    """The ``resources/read`` result of a template handler's outcome (R-02): a ``str`` is the
    text, ``bytes`` the blob (base64), a dict with ``contents`` the result itself.  Raises
    :class:`RpcError`: the outcome's own, -32603 for an exception or anything else."""
    error = _handler_error(outcome, f"reading {uri}")
    if error is not None:
        raise error
    if isinstance(outcome, dict) and "contents" in outcome:
        return dict(outcome)
    entry: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        entry["mimeType"] = mime_type
    if isinstance(outcome, (bytes, bytearray)):
        entry["blob"] = base64.b64encode(outcome).decode("ascii")
    elif isinstance(outcome, str):
        entry["text"] = outcome
    else:
        raise RpcError(INTERNAL_ERROR, f"reading {uri} returned {type(outcome).__name__}, "
                       "not text, bytes or a result with contents")
    return {"contents": [entry]}


def _message(item: object) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, dict):
        return item
    raise RpcError(INTERNAL_ERROR, f"a prompt message must be a str or a message object, "
                   f"not {type(item).__name__}")


def prompt_result(name: str, outcome: object, description: str | None) -> dict[str, Any]:
    """The ``prompts/get`` result of a prompt handler's outcome (R-11): a ``str`` is one user
    message, a list is the messages (each a ``str`` or a message object), a dict with
    ``messages`` the result itself.  Raises :class:`RpcError` as :func:`resource_result`."""
    error = _handler_error(outcome, f"prompt {name}")
    if error is not None or isinstance(outcome, (bytes, bytearray)):
        raise error or RpcError(INTERNAL_ERROR, f"prompt {name} returned bytes")
    if isinstance(outcome, dict) and "messages" in outcome:
        return dict(outcome)
    if isinstance(outcome, str):
        messages = [_message(outcome)]
    elif isinstance(outcome, list):
        messages = [_message(item) for item in outcome]
    else:
        raise RpcError(INTERNAL_ERROR, f"prompt {name} returned {type(outcome).__name__}, "
                       "not a str, a list of messages or a result with messages")
    result: dict[str, Any] = {"messages": messages}
    if description is not None:
        result["description"] = description
    return result
