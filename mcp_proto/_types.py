"""Typed protocol objects: what the server describes and returns, parsed and validated.

Parsing is strict about what the schema requires (a tool without a name is refused with a
:class:`RemoteProtocolError` naming the field) and lenient about the rest: unknown keys are
ignored, and every object keeps its wire form in ``raw`` so that fields added by newer protocol
versions are never lost.  An unknown content block type becomes :class:`UnknownContent` rather
than an error (T-07).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._build import builder
from ._errors import RemoteProtocolError

#: A JSON-RPC request id: a string or an integer (never null, bool or float: J-01).
RequestId = str | int

__all__ = [
    "RequestId",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "CompleteResult",
    "ContentBlock",
    "EmbeddedResource",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "UnknownContent",
    "parse_call_tool_result",
    "parse_complete_result",
    "parse_content_block",
    "parse_get_prompt_result",
    "parse_implementation",
    "parse_prompt",
    "parse_read_resource_result",
    "parse_resource",
    "parse_resource_template",
    "parse_tool",
]

JSON = Any


def _fail(where: str, what: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"invalid {where} from server: {what}")


def _req_str(d: dict[str, Any], key: str, where: str) -> str:
    value = d.get(key)
    if type(value) is not str:
        raise _fail(where, f"{key!r} must be a string, got {value!r}"[:200])
    return value


def _opt_str(d: dict[str, Any], key: str, where: str) -> str | None:
    value = d.get(key)
    if value is None or type(value) is str:
        return value
    raise _fail(where, f"{key!r} must be a string if present, got {value!r}"[:200])


def _opt_dict(d: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = d.get(key)
    if value is None or type(value) is dict:
        return value
    raise _fail(where, f"{key!r} must be an object if present, got {value!r}"[:200])


def _obj(value: object, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _fail(where, f"expected an object, got {value!r}"[:200])
    return value


def _list(d: dict[str, Any], key: str, where: str, *, required: bool = True) -> list[Any]:
    value = d.get(key)
    if type(value) is list:
        return value
    if value is None and not required:
        return []
    raise _fail(where, f"{key!r} must be an array, got {value!r}"[:200])


# -- implementation info ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Implementation:
    """Who a client or server says it is (L-02).  Self-reported: display only (SEC-10)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.website_url is not None:
            out["websiteUrl"] = self.website_url
        return out


def parse_implementation(value: object, where: str = "serverInfo") -> Implementation:
    d = _obj(value, where)
    return Implementation(
        name=_req_str(d, "name", where),
        version=_req_str(d, "version", where) if "version" in d else "",
        title=_opt_str(d, "title", where),
        description=_opt_str(d, "description", where),
        website_url=_opt_str(d, "websiteUrl", where),
    )


@dataclass(frozen=True, slots=True)
class Root:
    """A filesystem root the host exposes to the server (F-01: ``file://`` URIs only)."""

    uri: str
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.uri.startswith("file://"):
            raise ValueError(f"a root must be a file:// URI, got {self.uri!r}")

    def to_wire(self) -> dict[str, Any]:
        return {"uri": self.uri} if self.name is None else {"uri": self.uri, "name": self.name}


# -- tools ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def display_name(self) -> str:
        """``title``, else ``annotations.title``, else ``name`` (T-01)."""
        if self.title:
            return self.title
        if self.annotations and isinstance(self.annotations.get("title"), str):
            return str(self.annotations["title"])
        return self.name

    @property
    def task_support(self) -> str:
        """``execution.taskSupport`` (2025-11-25): ``forbidden`` (default), ``optional``,
        ``required``."""
        if self.execution is not None:
            value = self.execution.get("taskSupport")
            if value in ("optional", "required"):
                return str(value)
        return "forbidden"


def parse_tool(value: object) -> Tool:
    d = _obj(value, "tool")
    name = _req_str(d, "name", "tool")
    where = f"tool {name!r}"
    schema = d.get("inputSchema")
    if type(schema) is not dict:
        raise _fail(where, f"inputSchema must be an object, got {schema!r}"[:200])
    return Tool(
        name=name,
        input_schema=schema,
        description=_opt_str(d, "description", where),
        title=_opt_str(d, "title", where),
        output_schema=_opt_dict(d, "outputSchema", where),
        annotations=_opt_dict(d, "annotations", where),
        execution=_opt_dict(d, "execution", where),
        raw=d,
    )


# -- content blocks ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TextContent:
    text: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = "text"


_text_content = builder(TextContent)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageContent:
    data: str
    """Base64 as sent; decode with ``base64.b64decode`` when needed."""
    mime_type: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioContent:
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = "audio"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceLink:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = "resource_link"


@dataclass(frozen=True, slots=True, kw_only=True)
class TextResourceContents:
    uri: str
    text: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BlobResourceContents:
    uri: str
    blob: str
    """Base64 as sent."""
    mime_type: str | None = None
    meta: dict[str, Any] | None = None


ResourceContents = TextResourceContents | BlobResourceContents


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddedResource:
    resource: ResourceContents
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    type: str = "resource"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownContent:
    """A content block of a type this version of mcp-proto does not know; kept, not dropped."""

    type: str
    raw: dict[str, Any]


ContentBlock = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
    | UnknownContent
)


def parse_resource_contents(value: object) -> ResourceContents:
    d = _obj(value, "resource contents")
    uri = _req_str(d, "uri", "resource contents")
    where = f"resource contents {uri!r}"
    mime = _opt_str(d, "mimeType", where)
    meta = _opt_dict(d, "_meta", where)
    if "text" in d:
        return TextResourceContents(uri=uri, text=_req_str(d, "text", where), mime_type=mime,
                                    meta=meta)
    if "blob" in d:
        return BlobResourceContents(uri=uri, blob=_req_str(d, "blob", where), mime_type=mime,
                                    meta=meta)
    raise _fail(where, "has neither text nor blob")


def parse_content_block(value: object) -> ContentBlock:
    d = _obj(value, "content block")
    kind = d.get("type")
    if type(kind) is not str:
        raise _fail("content block", f"'type' must be a string, got {kind!r}"[:200])
    if kind == "text":
        text = d.get("text")
        if type(text) is not str:
            raise _fail("text content", f"'text' must be a string, got {text!r}"[:200])
        return _text_content(text, d.get("annotations"), d.get("_meta"), "text")
    if kind in {"image", "audio"}:
        where = f"{kind} content"
        cls = ImageContent if kind == "image" else AudioContent
        return cls(data=_req_str(d, "data", where), mime_type=_req_str(d, "mimeType", where),
                   annotations=_opt_dict(d, "annotations", where),
                   meta=_opt_dict(d, "_meta", where))
    if kind == "resource_link":
        where = "resource_link content"
        size = d.get("size")
        return ResourceLink(
            uri=_req_str(d, "uri", where), name=_req_str(d, "name", where),
            title=_opt_str(d, "title", where), description=_opt_str(d, "description", where),
            mime_type=_opt_str(d, "mimeType", where),
            size=size if type(size) is int else None,
            annotations=_opt_dict(d, "annotations", where), meta=_opt_dict(d, "_meta", where),
        )
    if kind == "resource":
        return EmbeddedResource(resource=parse_resource_contents(d.get("resource")),
                                annotations=_opt_dict(d, "annotations", "resource content"),
                                meta=_opt_dict(d, "_meta", "resource content"))
    return UnknownContent(type=kind, raw=d)


# -- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CallToolResult:
    """The result of ``tools/call`` (T-02).

    ``is_error`` True means the tool ran and failed (T-03): pass it to the model like any
    result; it is not an exception.
    """

    content: tuple[ContentBlock, ...]
    structured_content: JSON = None
    is_error: bool = False
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (the common case of a one-block text result)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


_call_tool_result = builder(CallToolResult)


def parse_call_tool_result(result: dict[str, Any]) -> CallToolResult:
    raw_content = result.get("content")
    if type(raw_content) is not list:
        if raw_content is None and "structuredContent" in result:
            raw_content = []
        else:
            raise _fail("tools/call result", f"'content' must be an array, got "
                        f"{raw_content!r}"[:200])
    is_error = result.get("isError", False)
    if type(is_error) is not bool:
        raise _fail("tools/call result", f"'isError' must be a boolean, got {is_error!r}")
    # The common block, a plain text one, without the general parser's calls; the common
    # result, one such block, without a list to build the tuple from.
    if len(raw_content) == 1 and type(b := raw_content[0]) is dict \
            and b.get("type") == "text" and type(text := b.get("text")) is str:
        content: tuple[ContentBlock, ...] = (
            _text_content(text, b.get("annotations"), b.get("_meta"), "text"),)
    else:
        blocks: list[ContentBlock] = []
        for b in raw_content:
            if type(b) is dict and b.get("type") == "text" \
                    and type(text := b.get("text")) is str:
                blocks.append(_text_content(text, b.get("annotations"), b.get("_meta"), "text"))
            else:
                blocks.append(parse_content_block(b))
        content = tuple(blocks)
    return _call_tool_result(content, result.get("structuredContent"), is_error,
                             result.get("_meta"), result)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_resource(value: object) -> Resource:
    d = _obj(value, "resource")
    uri = _req_str(d, "uri", "resource")
    where = f"resource {uri!r}"
    size = d.get("size")
    return Resource(uri=uri, name=_req_str(d, "name", where) if "name" in d else uri,
                    title=_opt_str(d, "title", where),
                    description=_opt_str(d, "description", where),
                    mime_type=_opt_str(d, "mimeType", where),
                    size=size if type(size) is int else None,
                    annotations=_opt_dict(d, "annotations", where), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_resource_template(value: object) -> ResourceTemplate:
    d = _obj(value, "resource template")
    tmpl = _req_str(d, "uriTemplate", "resource template")
    where = f"resource template {tmpl!r}"
    return ResourceTemplate(uri_template=tmpl,
                            name=_req_str(d, "name", where) if "name" in d else tmpl,
                            title=_opt_str(d, "title", where),
                            description=_opt_str(d, "description", where),
                            mime_type=_opt_str(d, "mimeType", where),
                            annotations=_opt_dict(d, "annotations", where), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadResourceResult:
    contents: tuple[ResourceContents, ...]
    meta: dict[str, Any] | None = None


def parse_read_resource_result(result: dict[str, Any]) -> ReadResourceResult:
    return ReadResourceResult(
        contents=tuple(parse_resource_contents(c)
                       for c in _list(result, "contents", "resources/read result")),
        meta=result.get("_meta"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_prompt(value: object) -> Prompt:
    d = _obj(value, "prompt")
    name = _req_str(d, "name", "prompt")
    where = f"prompt {name!r}"
    args = []
    for a in _list(d, "arguments", where, required=False):
        ad = _obj(a, f"argument of {where}")
        args.append(PromptArgument(name=_req_str(ad, "name", where),
                                   description=_opt_str(ad, "description", where),
                                   required=ad.get("required") is True,
                                   title=_opt_str(ad, "title", where)))
    return Prompt(name=name, title=_opt_str(d, "title", where),
                  description=_opt_str(d, "description", where), arguments=tuple(args), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptMessage:
    role: str
    content: ContentBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class GetPromptResult:
    messages: tuple[PromptMessage, ...]
    description: str | None = None
    meta: dict[str, Any] | None = None


def parse_get_prompt_result(result: dict[str, Any]) -> GetPromptResult:
    where = "prompts/get result"
    messages = []
    for m in _list(result, "messages", where):
        md = _obj(m, "prompt message")
        role = _req_str(md, "role", "prompt message")
        messages.append(PromptMessage(role=role, content=parse_content_block(md.get("content"))))
    return GetPromptResult(messages=tuple(messages),
                           description=_opt_str(result, "description", where),
                           meta=result.get("_meta"))


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteResult:
    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False


def parse_complete_result(result: dict[str, Any]) -> CompleteResult:
    where = "completion/complete result"
    completion = _obj(result.get("completion"), where)
    values = _list(completion, "values", where)
    if not all(type(v) is str for v in values):
        raise _fail(where, "completion values must be strings")
    total = completion.get("total")
    return CompleteResult(values=tuple(values), total=total if type(total) is int else None,
                          has_more=completion.get("hasMore") is True)
