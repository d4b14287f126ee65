"""A tool's result in each model provider's wire format: pure.

:func:`to_provider_content` turns one :class:`~mcp_proto.CallToolResult` into what a provider
takes back after a tool call; :meth:`ProviderContent.message` wraps it in the complete item to
append to the conversation.  Rules (host-notes 2.1, 2.2, 9.1; issue 11):

- Each provider has a table, block kind -> converter (:data:`_TABLES`); a kind a provider cannot
  take is turned into a text that names it (``[audio: audio/wav, 12345 bytes]``, ``[resource
  link: file:///x (name, text/plain)]``), never dropped silently: every such step is in
  :attr:`ProviderContent.notes`.
- Native media: Anthropic ``image`` (JPEG, PNG, GIF, WebP) and ``document`` (PDF) blocks with
  a base64 source; OpenAI Responses ``input_image`` (a data URL) and ``input_file`` (a data URL
  and a filename); Gemini ``inlineData`` parts beside the ``functionResponse``.  OpenAI Chat
  tool messages are text only.  Binary data is passed as the server gave it; it is checked to
  be standard base64 (one linear regex pass, no decoding) and a block that is not becomes a
  text note, never an exception.  Every size or type limit is a named constant below.
- An embedded resource is its URI and text when it is text; when it is a blob, it goes as the
  matching native media if the provider takes that type, else as a named placeholder.
- ``structuredContent`` is included once: as a JSON text item after the content (for Gemini,
  as the JSON value of the response), and not at all as text when a text block already holds
  JSON equal to it (parsed and compared by value and JSON type, so ``true`` is not ``1``).
  Its JSON text is complete at any depth (written without recursion when ``json.dumps``
  cannot: the core decodes values nested nearly to Python's recursion limit); Gemini gets it
  as a value only when it is plain JSON nested at most :data:`GEMINI_MAX_VALUE_DEPTH`
  levels, else as its JSON text, so every message is JSON.
- ``isError``: Anthropic ``is_error``; Gemini puts the result under ``"error"`` instead of
  ``"output"`` (the ``FunctionResponse.response`` convention).  OpenAI Chat and Responses have
  no error flag: the text is left exactly as the server sent it, nothing is prefixed, and the
  host reads :attr:`ProviderContent.is_error` if it wants to say more.
- An empty result is an explicit empty text (``""``), except for Anthropic, whose API refuses
  an empty text block ("text content blocks must be non-empty"): it gets
  :data:`ANTHROPIC_EMPTY_TEXT` instead, and empty text blocks of a non-empty result are left
  out (with a note).
- The MCP result is kept as received in :attr:`ProviderContent.raw`.
- Work is linear in the size of the result: each block is visited once, texts are joined once,
  the size budget is a running count.
- ``budget=`` (a :class:`~mcp_proto.host.content._budget.Budget`): the result is first cut
  to it by :func:`~mcp_proto.host.content._budget.budget_result` (a head, a marker, a tail;
  media over its limits as notes), then converted; the text each target gets is the
  budgeted document or less (the block texts above are ``_budget``'s, so both count the
  same).  :data:`DEFAULT_BUDGETS` per target.  ``budget=None`` is the conversion alone.

Targets: :data:`CONTENT_TARGETS`.  The ``-strict`` and ``-openapi`` variants only change how
tool *schemas* are written; results are formatted exactly like their base provider's.
``structuredContent``'s JSON text and the search for a text block that holds it are
:mod:`._structured`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._errors import LocalProtocolError
from ..._notes import Note
from ..._types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    UnknownContent,
)
from ._budget import (
    MAX_UNKNOWN_BLOCK_JSON,
    Budget,
    _Binary,
    _binary,
    _link_text,
    _resource_head,
    _unknown_text,
    base64_size,
    budget_result,
)
from ._structured import _duplicate_index, _json_text

__all__ = [
    "ANTHROPIC_DOCUMENT_TYPES",
    "ANTHROPIC_EMPTY_TEXT",
    "ANTHROPIC_IMAGE_TYPES",
    "ANTHROPIC_MAX_IMAGES",
    "ANTHROPIC_MAX_IMAGE_BASE64",
    "ANTHROPIC_MAX_REQUEST_BYTES",
    "CONTENT_TARGETS",
    "DEFAULT_BUDGETS",
    "DEFAULT_MAX_RESULT_TOKENS",
    "GEMINI_INLINE_TYPES",
    "GEMINI_MAX_INLINE_BYTES",
    "GEMINI_MAX_VALUE_DEPTH",
    "MAX_UNKNOWN_BLOCK_JSON",
    "OPENAI_FILE_TYPES",
    "OPENAI_IMAGE_TYPES",
    "OPENAI_MAX_IMAGES",
    "OPENAI_MAX_REQUEST_BYTES",
    "ProviderContent",
    "base64_size",
    "default_budget",
    "to_provider_content",
]

#: The targets :func:`to_provider_content` formats for (same names as the schema targets).
CONTENT_TARGETS: tuple[str, ...] = (
    "openai", "openai-strict", "openai-responses", "openai-responses-strict", "anthropic",
    "gemini", "gemini-openapi",
)
#: Each target's result format: the variants differ in schemas only.
_BASE_TARGET: Mapping[str, str] = {
    "openai": "openai", "openai-strict": "openai",
    "openai-responses": "openai-responses", "openai-responses-strict": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini", "gemini-openapi": "gemini",
}

#: Provider names for notes.
_DISPLAY: Mapping[str, str] = {
    "openai": "OpenAI Chat", "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic", "gemini": "Gemini",
}

_MiB = 1024 * 1024

# -- Anthropic Messages -----------------------------------------------------------------------

#: The ``media_type`` values Anthropic's base64 image source accepts (vision guide: JPEG, PNG,
#: GIF, WebP); any other image type (SVG, BMP, TIFF ...) is refused with a 400, so it is text.
ANTHROPIC_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: The base64 document source takes PDFs only; other files have no native block in a result.
ANTHROPIC_DOCUMENT_TYPES = frozenset({"application/pdf"})
#: The API refuses a base64 image over 5 MB ("image exceeds 5 MB maximum: N bytes > 5242880
#: bytes"), counted on the base64 text, so the check is on ``len(data)``.
ANTHROPIC_MAX_IMAGE_BASE64 = 5 * _MiB
#: A standard Messages request is at most 32 MB: the media of one result never get more than
#: that, counted as base64 text (what is sent).  Past it, the rest become text notes.
ANTHROPIC_MAX_REQUEST_BYTES = 32 * _MiB
#: At most 100 images per API request (vision guide); more in one result become text notes.
ANTHROPIC_MAX_IMAGES = 100
#: What an empty result says to Claude: the API rejects an empty text block, and an empty
#: ``content`` list is not documented as accepted, so the result says it is empty in words.
ANTHROPIC_EMPTY_TEXT = "(empty result)"

# -- OpenAI -----------------------------------------------------------------------------------

#: Image types OpenAI's vision input accepts (images guide: PNG, JPEG, WEBP, non-animated GIF).
OPENAI_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
#: ``input_file`` types of the Responses API (file-inputs guide: PDF, text and code, rich
#: documents, spreadsheets); ``text/*`` is accepted as well.  Other files (audio, video,
#: archives, ``application/octet-stream``) would be refused, so they become text notes.
OPENAI_FILE_TYPES = frozenset({
    "application/pdf", "application/json", "application/xml", "application/rtf",
    "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.oasis.opendocument.text",
})
#: Images guide: "up to 50 MB total payload size per request"; counted as base64 text.
OPENAI_MAX_REQUEST_BYTES = 50 * _MiB
#: Images guide: up to 500 image inputs per request.
OPENAI_MAX_IMAGES = 500

# -- Gemini -----------------------------------------------------------------------------------

#: MIME types Gemini takes as inline data that a tool result can carry (image, audio and
#: document understanding guides).  ``audio/mpeg`` is the registered name of MP3, which the
#: guide lists as ``audio/mp3``; both are sent.  Others (SVG, GIF, BMP ...) become text notes.
GEMINI_INLINE_TYPES = frozenset({
    "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif",
    "audio/wav", "audio/mp3", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg",
    "audio/flac",
    "application/pdf",
})
#: Inline data must keep the whole request under 20 MB (larger media go through the Files
#: API, which is I/O and the host's business); counted as base64 text.
GEMINI_MAX_INLINE_BYTES = 20 * _MiB
#: Containers nested in a ``structuredContent`` that Gemini gets as a JSON value; a deeper one
#: goes as its JSON text instead (a string has no nesting), with a note.  Google's protobuf
#: JSON parsers stop at 100 nested messages by default, each JSON level of a ``Struct`` value
#: costs two (a ``Value``, then a ``Struct`` or ``ListValue``) and the response sits four
#: messages deep in the request, so about 48 levels fit; 40 leaves a margin (not measured
#: against the API).  It also keeps the host's own ``json.dumps`` of the request far from
#: Python's recursion limit, which the core's decoder nearly reaches (about 975 levels).
GEMINI_MAX_VALUE_DEPTH = 40

# -- all --------------------------------------------------------------------------------------

# MAX_UNKNOWN_BLOCK_JSON and base64_size are ._budget's: the document counts the same text.

#: File name extensions for ``input_file`` names whose URI has none (OpenAI reads the type
#: from the name).  A pure table: :mod:`mimetypes` reads system files.
_EXTENSIONS: Mapping[str, str] = {
    "application/pdf": ".pdf", "application/json": ".json", "application/xml": ".xml",
    "application/rtf": ".rtf", "application/msword": ".doc",
    "application/vnd.ms-excel": ".xls", "application/vnd.ms-powerpoint": ".ppt",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
    "application/vnd.oasis.opendocument.text": ".odt",
    "text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv", "text/html": ".html",
    "text/tab-separated-values": ".tsv", "text/xml": ".xml",
}


# -- the result -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderContent:
    """One tool result in a provider's wire format.

    ``content`` is the provider's value for the tool's output: Anthropic a list of
    ``tool_result`` content blocks; OpenAI Chat a string; OpenAI Responses a string when the
    result is text only, else a list of ``input_text`` / ``input_image`` / ``input_file``
    items; Gemini the ``FunctionResponse.response`` object.  ``extra_parts`` is what goes
    beside it (Gemini ``inlineData`` parts; nothing for the others).  ``notes`` says what was
    turned into text or left out, for logs.  ``raw`` is the MCP result as received.
    ``name`` is the function name a Gemini ``functionResponse`` needs.  Under a budget,
    ``budget_notes`` says what the budget cut (each one's detail is in ``notes`` too) and
    ``handle`` is the store handle the marker names (None when nothing was omitted).

    ``ValueError`` for a target not in :data:`CONTENT_TARGETS`.
    """

    target: str
    content: Any
    is_error: bool
    raw: dict[str, Any]
    extra_parts: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    name: str | None = None
    budget_notes: tuple[Note, ...] = ()
    handle: str | None = None

    def __post_init__(self) -> None:
        if self.target not in _BASE_TARGET:
            raise ValueError(f"unknown content target {self.target!r}; expected one of "
                             f"{', '.join(CONTENT_TARGETS)}")

    def message(self, call_id: str) -> dict[str, Any] | list[dict[str, Any]]:
        """The complete item to append to the conversation, answering the call ``call_id``.

        - Anthropic: ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``, one
          block of the next ``user`` message.
        - OpenAI Chat: ``{"role": "tool", "tool_call_id", "content"}``, a message.
        - OpenAI Responses: ``{"type": "function_call_output", "call_id", "output"}``, an
          input item.
        - Gemini: the part ``{"functionResponse": {"name", "response"[, "id"]}}``; ``id`` is
          ``call_id`` when it is not empty (pass ``""`` when the model's ``functionCall`` had
          no id).  With inline data, a list: that part, then the ``inlineData`` parts, all
          for the ``parts`` of one ``Content``.

        ``LocalProtocolError`` for a Gemini target without :attr:`name`.
        """
        return _MESSAGES[_BASE_TARGET[self.target]](self, call_id)


def _anthropic_message(pc: ProviderContent, call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": pc.content,
            "is_error": pc.is_error}


def _openai_message(pc: ProviderContent, call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": pc.content}


def _responses_message(pc: ProviderContent, call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": pc.content}


def _gemini_message(pc: ProviderContent, call_id: str) -> dict[str, Any] | list[dict[str, Any]]:
    if not pc.name:
        raise LocalProtocolError(f"a {pc.target} functionResponse needs the function's name")
    response: dict[str, Any] = {"name": pc.name, "response": pc.content}
    if call_id:
        response["id"] = call_id
    part = {"functionResponse": response}
    return [part, *pc.extra_parts] if pc.extra_parts else part


_MESSAGES: Mapping[str, Callable[[ProviderContent, str],
                                 dict[str, Any] | list[dict[str, Any]]]] = {
    "anthropic": _anthropic_message,
    "openai": _openai_message,
    "openai-responses": _responses_message,
    "gemini": _gemini_message,
}


# -- conversion state -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Limits:
    """How much media one result may carry natively for a provider."""

    max_bytes: int
    max_items: int


_LIMITS: Mapping[str, _Limits] = {
    "anthropic": _Limits(ANTHROPIC_MAX_REQUEST_BYTES, ANTHROPIC_MAX_IMAGES),
    "openai": _Limits(0, 0),
    "openai-responses": _Limits(OPENAI_MAX_REQUEST_BYTES, OPENAI_MAX_IMAGES),
    # Gemini documents no per-request count of inline parts; the byte budget bounds them.
    "gemini": _Limits(GEMINI_MAX_INLINE_BYTES, 1 << 30),
}


# -- default budgets --------------------------------------------------------------------------

#: A result's tokens by default, for every target: Claude Code's cap on an MCP tool's output
#: (``MAX_MCP_OUTPUT_TOKENS``, 25,000 by default); a result that size is already a large share
#: of a context window.
DEFAULT_MAX_RESULT_TOKENS = 25_000


def _decoded(base64_chars: int) -> int:
    return base64_chars // 4 * 3


#: Media limits of the default budgets: the providers' own (decoded bytes of their base64
#: limits above), so what a provider would refuse is a note counted in the budget.  OpenAI
#: Chat takes no media in a result (each block is a placeholder already).
_MEDIA_BUDGETS: Mapping[str, tuple[int | None, int | None]] = {
    "anthropic": (_decoded(ANTHROPIC_MAX_IMAGE_BASE64), _decoded(ANTHROPIC_MAX_REQUEST_BYTES)),
    "openai": (None, None),
    "openai-responses": (None, _decoded(OPENAI_MAX_REQUEST_BYTES)),
    "gemini": (None, _decoded(GEMINI_MAX_INLINE_BYTES)),
}
#: Each target's default :class:`~mcp_proto.host.content._budget.Budget`.
DEFAULT_BUDGETS: Mapping[str, Budget] = {
    target: Budget(max_tokens=DEFAULT_MAX_RESULT_TOKENS,
                   max_image_bytes=_MEDIA_BUDGETS[_BASE_TARGET[target]][0],
                   max_binary_bytes=_MEDIA_BUDGETS[_BASE_TARGET[target]][1])
    for target in CONTENT_TARGETS
}


def default_budget(target: str) -> Budget:
    """``target``'s default budget (:data:`DEFAULT_BUDGETS`); ``ValueError`` for a target not
    in :data:`CONTENT_TARGETS`."""
    budget = DEFAULT_BUDGETS.get(target)
    if budget is None:
        raise ValueError(f"unknown content target {target!r}; expected one of "
                         f"{', '.join(CONTENT_TARGETS)}")
    return budget


@dataclass(slots=True)
class _Builder:
    """What one conversion has produced so far (private and mutable; one per call)."""

    provider: str
    bytes_left: int
    items_left: int
    index: int = 0
    pieces: list[str | dict[str, Any]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self, text: str) -> None:
        self.pieces.append(text)

    def note(self, what: str) -> None:
        self.notes.append(f"block {self.index}: {what}")

    def take(self, size: int) -> str | None:
        """Reserve ``size`` bytes of the media budget, or say why not."""
        if self.items_left <= 0:
            return "more media than one request may carry"
        if size > self.bytes_left:
            return "over the request's media size budget"
        self.bytes_left -= size
        self.items_left -= 1
        return None


def _filename(binary: _Binary) -> str:
    """A file name for ``input_file``: the URI's last segment, with an extension."""
    tail = (binary.uri or "").split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    name = tail or "file"
    if "." not in name:
        name += _EXTENSIONS.get(binary.mime, "")
    return name


def _refuse(b: _Builder, binary: _Binary, why: str) -> None:
    b.text(binary.placeholder())
    b.note(f"{binary.label} ({binary.mime or 'no type'}) sent as text: {why}")


def _usable(b: _Builder, binary: _Binary) -> bool:
    """False (and a text note in the output) when the payload cannot be sent at all."""
    if binary.size is None:
        _refuse(b, binary, "its data is not standard base64")
        return False
    if binary.size == 0:
        _refuse(b, binary, "its data is empty")
        return False
    return True


def _reserve(b: _Builder, binary: _Binary) -> bool:
    why = b.take(len(binary.data))
    if why is not None:
        _refuse(b, binary, why)
        return False
    return True


# -- converters shared by every provider: text renderings -------------------------------------

Converter = Callable[[ContentBlock, _Builder], None]


def _as_text(block: ContentBlock, b: _Builder) -> None:
    assert isinstance(block, TextContent)
    b.text(block.text)


def _link_as_text(block: ContentBlock, b: _Builder) -> None:
    assert isinstance(block, ResourceLink)
    b.text(_link_text(block))
    b.note("resource link sent as text")


def _resource_as_text(block: ContentBlock, b: _Builder) -> None:
    assert isinstance(block, EmbeddedResource)
    res = block.resource
    assert isinstance(res, TextResourceContents)
    b.text(_resource_head(res) + res.text)
    b.note("embedded text resource sent as its URI and text")


def _as_placeholder(block: ContentBlock, b: _Builder) -> None:
    """A binary block the provider never takes: named, with its type and size."""
    binary = _binary(block)
    _refuse(b, binary, f"{_DISPLAY[b.provider]} takes no {binary.label} in a tool result")


def _unknown_as_text(block: ContentBlock, b: _Builder) -> None:
    assert isinstance(block, UnknownContent)
    b.text(_unknown_text(block))
    b.note(f"unknown block type {block.type!r} sent as text")


# -- per-provider converters for binary data --------------------------------------------------


def _anthropic_media(block: ContentBlock, b: _Builder) -> None:
    binary = _binary(block)
    if not _usable(b, binary):
        return
    if binary.mime in ANTHROPIC_IMAGE_TYPES:
        if len(binary.data) > ANTHROPIC_MAX_IMAGE_BASE64:
            _refuse(b, binary, "over Anthropic's 5 MB image limit")
        elif _reserve(b, binary):
            b.pieces.append({"type": "image", "source": {
                "type": "base64", "media_type": binary.mime, "data": binary.data}})
    elif binary.mime in ANTHROPIC_DOCUMENT_TYPES:
        if _reserve(b, binary):
            doc: dict[str, Any] = {"type": "document", "source": {
                "type": "base64", "media_type": binary.mime, "data": binary.data}}
            if binary.uri:
                doc["title"] = binary.uri
            b.pieces.append(doc)
    else:
        _refuse(b, binary, "not an image or document type Anthropic accepts")


def _responses_media(block: ContentBlock, b: _Builder) -> None:
    binary = _binary(block)
    if not _usable(b, binary):
        return
    url = f"data:{binary.mime};base64,{binary.data}"
    if binary.mime in OPENAI_IMAGE_TYPES:
        if _reserve(b, binary):
            b.pieces.append({"type": "input_image", "image_url": url})
    elif binary.mime in OPENAI_FILE_TYPES or binary.mime.startswith("text/"):
        if _reserve(b, binary):
            b.pieces.append({"type": "input_file", "filename": _filename(binary),
                             "file_data": url})
    else:
        _refuse(b, binary, "not an image or file type OpenAI accepts")


def _gemini_media(block: ContentBlock, b: _Builder) -> None:
    binary = _binary(block)
    if not _usable(b, binary):
        return
    if binary.mime not in GEMINI_INLINE_TYPES:
        _refuse(b, binary, "not a type Gemini takes as inline data")
    elif _reserve(b, binary):
        b.extra.append({"inlineData": {"mimeType": binary.mime, "data": binary.data}})
        b.note(f"{binary.label} ({binary.mime}) sent as inline part {len(b.extra)}")


#: Block kind -> converter, per provider.  The kinds are :func:`_kind`'s.
_TABLES: Mapping[str, Mapping[str, Converter]] = {
    "anthropic": {
        "text": _as_text, "image": _anthropic_media, "audio": _as_placeholder,
        "resource_link": _link_as_text, "resource_text": _resource_as_text,
        "resource_blob": _anthropic_media, "unknown": _unknown_as_text,
    },
    "openai": {
        "text": _as_text, "image": _as_placeholder, "audio": _as_placeholder,
        "resource_link": _link_as_text, "resource_text": _resource_as_text,
        "resource_blob": _as_placeholder, "unknown": _unknown_as_text,
    },
    "openai-responses": {
        "text": _as_text, "image": _responses_media, "audio": _as_placeholder,
        "resource_link": _link_as_text, "resource_text": _resource_as_text,
        "resource_blob": _responses_media, "unknown": _unknown_as_text,
    },
    "gemini": {
        "text": _as_text, "image": _gemini_media, "audio": _gemini_media,
        "resource_link": _link_as_text, "resource_text": _resource_as_text,
        "resource_blob": _gemini_media, "unknown": _unknown_as_text,
    },
}

_KIND_OF_CLASS: Mapping[type, str] = {
    TextContent: "text", ImageContent: "image", AudioContent: "audio",
    ResourceLink: "resource_link", UnknownContent: "unknown",
}
_KIND_OF_RESOURCE: Mapping[type, str] = {
    TextResourceContents: "resource_text", BlobResourceContents: "resource_blob",
}


def _kind(block: ContentBlock) -> str:
    if isinstance(block, EmbeddedResource):
        return _KIND_OF_RESOURCE[type(block.resource)]
    return _KIND_OF_CLASS[type(block)]


# -- structuredContent as a Gemini value ------------------------------------------------------

#: The largest magnitude a JSON number in a Gemini ``Struct`` can have: its numbers are
#: doubles.
_DOUBLE_LIMIT = 2 ** 1024


def _gemini_value(value: Any) -> bool:
    """Whether ``value`` can go to Gemini as a JSON value: nested at most
    :data:`GEMINI_MAX_VALUE_DEPTH` containers (a circular structure never is), string keys,
    finite numbers that fit a double, nothing but JSON.  Looked at without recursion."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            if depth >= GEMINI_MAX_VALUE_DEPTH or not all(isinstance(k, str) for k in item):
                return False
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth >= GEMINI_MAX_VALUE_DEPTH:
                return False
            todo.extend((v, depth + 1) for v in item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, int) and not isinstance(item, bool):
            if not -_DOUBLE_LIMIT < item < _DOUBLE_LIMIT:
                return False
        elif not (item is None or isinstance(item, (str, bool))):
            return False
    return True


# -- finishing: pieces -> the provider's value ------------------------------------------------


def _finish_anthropic(b: _Builder, result: CallToolResult) -> Any:
    blocks: list[dict[str, Any]] = []
    empty = 0
    for piece in b.pieces:
        if isinstance(piece, str):
            if piece:
                blocks.append({"type": "text", "text": piece})
            else:
                empty += 1
        else:
            blocks.append(piece)
    if empty and blocks:
        b.notes.append(f"{empty} empty text block(s) left out: Anthropic refuses them")
    if not blocks:
        blocks.append({"type": "text", "text": ANTHROPIC_EMPTY_TEXT})
        b.notes.append(f"empty result sent as {ANTHROPIC_EMPTY_TEXT!r}")
    return blocks


def _finish_openai(b: _Builder, result: CallToolResult) -> Any:
    return "\n".join(p for p in b.pieces if isinstance(p, str))


def _finish_responses(b: _Builder, result: CallToolResult) -> Any:
    if all(isinstance(p, str) for p in b.pieces):
        return "\n".join(p for p in b.pieces if isinstance(p, str))
    return [{"type": "input_text", "text": p} if isinstance(p, str) else p
            for p in b.pieces if p != ""]


def _finish_gemini(b: _Builder, result: CallToolResult) -> Any:
    key = "error" if result.is_error else "output"
    text = "\n".join(p for p in b.pieces if isinstance(p, str))
    value = result.structured_content
    if value is None:
        return {key: text}
    if not _gemini_value(value):
        value = _json_text(value)
        b.notes.append(f"structuredContent nested deeper than {GEMINI_MAX_VALUE_DEPTH} levels, "
                       "or not plain JSON, sent as its JSON text")
    response: dict[str, Any] = {key: value}
    if text:
        response["text"] = text
    return response


_Finisher = Callable[[_Builder, CallToolResult], Any]
_FINISH: Mapping[str, _Finisher] = {
    "anthropic": _finish_anthropic,
    "openai": _finish_openai,
    "openai-responses": _finish_responses,
    "gemini": _finish_gemini,
}

#: Providers that take ``structuredContent`` as a JSON value rather than as a text item.
_STRUCTURED_AS_VALUE = frozenset({"gemini"})


# -- the raw result ---------------------------------------------------------------------------


def _annotated(out: dict[str, Any], annotations: dict[str, Any] | None,
               meta: dict[str, Any] | None) -> dict[str, Any]:
    if annotations is not None:
        out["annotations"] = annotations
    if meta is not None:
        out["_meta"] = meta
    return out


def _resource_wire(res: TextResourceContents | BlobResourceContents) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": res.uri}
    if res.mime_type is not None:
        out["mimeType"] = res.mime_type
    if isinstance(res, TextResourceContents):
        out["text"] = res.text
    else:
        out["blob"] = res.blob
    return _annotated(out, None, res.meta)


def _block_wire(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, UnknownContent):
        return block.raw
    if isinstance(block, TextContent):
        out: dict[str, Any] = {"type": "text", "text": block.text}
    elif isinstance(block, ImageContent | AudioContent):
        out = {"type": block.type, "data": block.data, "mimeType": block.mime_type}
    elif isinstance(block, ResourceLink):
        out = {"type": "resource_link", "uri": block.uri, "name": block.name}
        for key, value in (("title", block.title), ("description", block.description),
                           ("mimeType", block.mime_type), ("size", block.size)):
            if value is not None:
                out[key] = value
    else:
        out = {"type": "resource", "resource": _resource_wire(block.resource)}
    return _annotated(out, block.annotations, block.meta)


def _raw(result: CallToolResult) -> dict[str, Any]:
    """The result as received, or rebuilt in MCP wire form when it was built by hand."""
    if result.raw:
        return result.raw
    out: dict[str, Any] = {"content": [_block_wire(b) for b in result.content]}
    if result.structured_content is not None:
        out["structuredContent"] = result.structured_content
    if result.is_error:
        out["isError"] = True
    if result.meta is not None:
        out["_meta"] = result.meta
    return out


# -- entry point ------------------------------------------------------------------------------


def to_provider_content(result: CallToolResult, target: str, *, name: str | None = None,
                        budget: Budget | None = None,
                        handle: str | None = None) -> ProviderContent:
    """``result`` in ``target``'s wire format (see the module's rules).

    ``name`` is the function name the model called, as declared to it (the host's public
    name, not the server's tool name); Gemini targets need it for the ``functionResponse``.
    ``budget``: first :func:`~mcp_proto.host.content._budget.budget_result` (``handle``, the
    whole result's store handle, is named in its marker), then the conversion; None: no
    budget (``handle`` unused).  Never raises for a valid :class:`~mcp_proto.CallToolResult`:
    whatever a provider cannot take becomes text, listed in ``notes``.

    ``ValueError`` for a target not in :data:`CONTENT_TARGETS`, or what ``budget_result``
    refuses (a bad handle; a budget whose own ``count_tokens`` counts the marker alone over
    ``max_tokens``); ``LocalProtocolError`` for a Gemini target without ``name``.  Then
    append :meth:`ProviderContent.message` to the conversation.
    """
    provider = _BASE_TARGET.get(target)
    if provider is None:
        raise ValueError(f"unknown content target {target!r}; expected one of "
                         f"{', '.join(CONTENT_TARGETS)}")
    if provider == "gemini" and not name:
        raise LocalProtocolError(f"target {target!r} needs name=: a Gemini functionResponse "
                                 "carries the name of the function it answers")
    if budget is None:
        return _convert(result, target, provider, name, _raw(result))
    budgeted = budget_result(result, budget, handle=handle)
    pc = _convert(budgeted.result, target, provider, name, _raw(result))
    if not budgeted.cut:
        return pc
    return ProviderContent(
        target=target, content=pc.content, is_error=pc.is_error, raw=pc.raw,
        extra_parts=pc.extra_parts, name=name, budget_notes=budgeted.notes,
        notes=(*pc.notes, *(note.detail for note in budgeted.notes)),
        handle=handle if budgeted.omitted else None)


def _convert(result: CallToolResult, target: str, provider: str, name: str | None,
             raw: dict[str, Any]) -> ProviderContent:
    limits = _LIMITS[provider]
    b = _Builder(provider, limits.max_bytes, limits.max_items)
    table = _TABLES[provider]
    dup = _duplicate_index(result)
    as_value = provider in _STRUCTURED_AS_VALUE
    for i, block in enumerate(result.content):
        b.index = i
        if i == dup and as_value:
            b.note("text equal to structuredContent left out: the response holds the value")
            continue
        table[_kind(block)](block, b)
    if result.structured_content is not None and dup is None and not as_value:
        b.text(_json_text(result.structured_content))
        b.notes.append("structuredContent added as JSON text")
    return ProviderContent(
        target=target,
        content=_FINISH[provider](b, result),
        is_error=result.is_error,
        raw=raw,
        extra_parts=tuple(b.extra),
        notes=tuple(b.notes),
        name=name,
    )
