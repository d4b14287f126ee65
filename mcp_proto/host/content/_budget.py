"""Result budgets: a tool result cut to what a model may read, the rest kept to be paged.

:func:`budget_result` fits a :class:`~mcp_proto.CallToolResult` into a :class:`Budget`;
:class:`ResultStore` keeps whole results and pages them (what ``mcp_read_result`` answers).
Pure: no clock, no lock, no I/O.  Rules (issue 24):

- The **document** of a result is the text a model sees of it, piece by piece, joined by
  ``"\\n"``: each text block's text; each embedded text resource as ``[resource: URI (type)]``,
  a line break and its text; each resource link, unknown block and binary block as the text
  :mod:`._convert` writes for it when a provider cannot take it (a native image is counted as
  its placeholder: a budget never undercounts); then ``structuredContent`` as JSON text,
  unless a text block already holds it (:func:`._structured._duplicate_index`).  The pieces
  are written by the functions :mod:`._convert` uses, so every target's text is this text or
  less; the marker's offsets and the store's pages are offsets into it.
- Over budget, the kept text is a head and a tail of the document (:data:`HEAD_SHARE` of the
  room to the head) with one marker between them that tells the truth: ``[... 1,204,311
  characters omitted; read more with mcp_read_result handle=r7 offset=4000]`` (no handle, no
  "read more"); ``offset`` is where the first omitted character is.  Blocks wholly kept stay
  (the same objects); the text around the marker becomes one text block; blocks wholly in the
  omitted middle are left out (said in a :class:`Note`).  The text the model sees, marker and
  placeholders included, is at most ``max_chars`` and counts at most ``max_tokens``.
- ``structuredContent`` is kept whole when a head or tail within the budget can hold its
  piece (the cut moves to keep it); else the piece is cut like text: the budgeted result holds
  the cut JSON as text and ``structured_content=None``, with a note; never half a value.
- Media: an image over ``max_image_bytes`` (decoded), and each binary block that no longer
  fits in what is left of ``max_binary_bytes``, becomes its placeholder text, with a note
  (the document does not change: a binary's piece is its placeholder either way).
- Under budget the very same result comes back (``cut=False``); ``raw`` stays the original.
- Work is proportional to what is kept: the document is lengths and references to the
  result's strings, never joined or copied whole; ``structuredContent``'s JSON is counted in
  one streaming pass that holds only the head and tail it may keep (:func:`_json_chunks`).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..._errors import MCPError
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
from ._structured import _duplicate_index, _json_text

__all__ = [
    "BUDGET_NOTE_KINDS",
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_STORED_CHARS",
    "DEFAULT_MAX_STORED_RESULTS",
    "DEFAULT_READ_LENGTH",
    "HEAD_SHARE",
    "MAX_CHARS_PER_TOKEN",
    "MAX_FIT_ROUNDS",
    "MAX_HANDLE_CHARS",
    "MAX_READ_LENGTH",
    "MAX_UNKNOWN_BLOCK_JSON",
    "MIN_BUDGET_CHARS",
    "MIN_BUDGET_TOKENS",
    "READ_TOOL",
    "Budget",
    "Budgeted",
    "ResultPage",
    "ResultStore",
    "UnknownResult",
    "base64_size",
    "budget_result",
]

# -- limits ---------------------------------------------------------------------------------

#: The token estimate when a budget has no counter: ``ceil(characters / 4)``, the usual rule
#: of thumb for English text and code under the providers' tokenizers.
CHARS_PER_TOKEN = 4
#: The most characters one token is taken to hold under a budget's own ``count_tokens`` (real
#: tokenizers' longest tokens are a few dozen): a longer document is cut uncounted, so the
#: counter never gets more than ``max_tokens * MAX_CHARS_PER_TOKEN`` characters.
MAX_CHARS_PER_TOKEN = 32
#: The smallest ``max_chars``: the marker (at most about 190 characters with the longest
#: handle and a document of a trillion characters) must always fit, with room to spare.
MIN_BUDGET_CHARS = 256
#: The smallest ``max_tokens``: :data:`MIN_BUDGET_CHARS` under the estimate.
MIN_BUDGET_TOKENS = MIN_BUDGET_CHARS // CHARS_PER_TOKEN
#: The share of the kept characters given to the head; the tail gets the rest.  Neither end
#: wins by default: a listing's summary is at its start, a command's error at its end.
HEAD_SHARE = 0.5
#: Rounds of counting with a budget's own ``count_tokens`` to find how much text fits (each
#: round counts the kept text once, so the work stays proportional to what is kept).
MAX_FIT_ROUNDS = 12
#: The longest handle a marker names; handles are ``[A-Za-z0-9_-]`` only, because the model
#: copies them back into a call.
MAX_HANDLE_CHARS = 64
#: The meta-tool a marker names for reading the rest (the host layer's ``mcp_read_result``).
READ_TOOL = "mcp_read_result"
#: A block of a type mcp-proto does not know is shown as its JSON up to this many characters;
#: beyond, it likely carries base64 data: only its type and size are named.
MAX_UNKNOWN_BLOCK_JSON = 16 * 1024

#: A store keeps this many results by default: a model rarely reads back past a few dozen.
DEFAULT_MAX_STORED_RESULTS = 64
#: ... and at most this many document characters in all (the text it pages; binary data is
#: not kept): room for one 100 MiB result, oldest evicted first.
DEFAULT_MAX_STORED_CHARS = 128 * 1024 * 1024
#: A page's default length: a fifth of the default 25,000-token result budget.
DEFAULT_READ_LENGTH = 20_000
#: The longest page (a longer ``length`` is capped): well under the default 25,000-token
#: result budget (100,000 characters under the estimate), so a page is never cut itself.
MAX_READ_LENGTH = 64_000

#: What budget notes say (:attr:`Note.kind`).
BUDGET_NOTE_KINDS: tuple[str, ...] = (
    "cut",                 # characters of the document omitted between a head and a tail
    "structured-as-text",  # structuredContent cut or omitted: sent as text, not as a value
    "image-too-large",     # an image over max_image_bytes, sent as its placeholder text
    "binary-over-budget",  # a binary block past max_binary_bytes, sent as its placeholder
)

_HANDLE = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_HANDLE_CHARS}}}")
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


# -- the budget -----------------------------------------------------------------------------


def _limit(name: str, value: object, least: int) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Budget.{name} must be an int or None, got {type(value).__name__}")
    if value < least:
        raise ValueError(f"Budget.{name} must be at least {least}, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """How much of one tool result a model gets.

    ``max_chars`` / ``max_tokens``: the size of the whole result's text as the model sees it
    (characters; tokens by ``count_tokens``, or ``ceil(len / CHARS_PER_TOKEN)`` without one).
    ``max_image_bytes``: decoded bytes of one image; ``max_binary_bytes``: decoded bytes of all
    binary blocks together.  None: no limit of that kind.

    ``ValueError`` for a limit below its minimum (:data:`MIN_BUDGET_CHARS`,
    :data:`MIN_BUDGET_TOKENS`, 0 for bytes); ``TypeError`` for a limit that is not an int or
    a ``count_tokens`` that is not callable.
    """

    max_chars: int | None = None
    max_tokens: int | None = None
    max_image_bytes: int | None = None
    max_binary_bytes: int | None = None
    count_tokens: Callable[[str], int] | None = None

    def __post_init__(self) -> None:
        _limit("max_chars", self.max_chars, MIN_BUDGET_CHARS)
        _limit("max_tokens", self.max_tokens, MIN_BUDGET_TOKENS)
        _limit("max_image_bytes", self.max_image_bytes, 0)
        _limit("max_binary_bytes", self.max_binary_bytes, 0)
        if self.count_tokens is not None and not callable(self.count_tokens):
            raise TypeError("Budget.count_tokens must be a callable (str -> int) or None")

    def tokens(self, text: str) -> int:
        """``text``'s tokens: ``count_tokens(text)``, or the estimate."""
        if self.count_tokens is not None:
            return self.count_tokens(text)
        return -(-len(text) // CHARS_PER_TOKEN)

    def _text_bound(self) -> int | None:
        """The most characters of a document that can be within this budget (None: no text
        limit)."""
        bounds = [] if self.max_chars is None else [self.max_chars]
        if self.max_tokens is not None:
            per = CHARS_PER_TOKEN if self.count_tokens is None else MAX_CHARS_PER_TOKEN
            bounds.append(self.max_tokens * per)
        return min(bounds) if bounds else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Budgeted:
    """What :func:`budget_result` made: ``result`` (the same object when nothing was cut),
    ``notes`` (what was cut or turned into text, paths into the original result), ``omitted``
    (characters of the document left out), ``cut`` (anything changed)."""

    result: CallToolResult
    notes: tuple[Note, ...] = ()
    omitted: int = 0
    cut: bool = False


# -- the text of each block (shared with ._convert, so both write the same text) -------------


def base64_size(data: str) -> int | None:
    """The decoded size of standard, padded base64 ``data``, or None if it is not that.

    One regex pass and no decoding: linear and allocation-free.  Whitespace (MIME line breaks)
    and the URL-safe alphabet are refused, because the providers refuse them too.
    """
    if len(data) % 4 or _BASE64.fullmatch(data) is None:
        return None
    padding = 2 if data[-2:] == "==" else 1 if data[-1:] == "=" else 0
    return len(data) // 4 * 3 - padding


def _essence(mime: str | None) -> str:
    return "" if mime is None else mime.split(";", 1)[0].strip().lower()


@dataclass(frozen=True, slots=True)
class _Binary:
    """A base64 payload of a block, whatever its kind."""

    label: str            # "image", "audio" or "resource"
    data: str
    mime: str             # lower-case essence, "" when the server gave none
    uri: str | None       # embedded resources only
    size: int | None      # decoded bytes; None when ``data`` is not base64

    def placeholder(self) -> str:
        mime = self.mime or "unknown type"
        amount = (f"{self.size} bytes" if self.size is not None
                  else f"not valid base64, {len(self.data)} characters")
        if self.uri is not None:
            return f"[resource: {self.uri} ({mime}, {amount})]"
        return f"[{self.label}: {mime}, {amount}]"


def _binary(block: ContentBlock) -> _Binary:
    if isinstance(block, EmbeddedResource):
        res = block.resource
        assert isinstance(res, BlobResourceContents)
        return _Binary("resource", res.blob, _essence(res.mime_type), res.uri,
                       base64_size(res.blob))
    assert isinstance(block, ImageContent | AudioContent)
    return _Binary(block.type, block.data, _essence(block.mime_type), None,
                   base64_size(block.data))


def _is_binary(block: ContentBlock) -> bool:
    return isinstance(block, ImageContent | AudioContent) or isinstance(
        getattr(block, "resource", None), BlobResourceContents)


def _resource_head(res: TextResourceContents) -> str:
    """What goes before an embedded text resource's text: its URI and type, a line break."""
    if res.mime_type:
        return f"[resource: {res.uri} ({res.mime_type})]\n"
    return f"[resource: {res.uri}]\n"


def _link_text(block: ResourceLink) -> str:
    facts = [block.name]
    if block.title and block.title != block.name:
        facts.append(block.title)
    if block.mime_type:
        facts.append(block.mime_type)
    if block.size is not None:
        facts.append(f"{block.size} bytes")
    text = f"[resource link: {block.uri} ({', '.join(facts)})]"
    return f"{text}\n{block.description}" if block.description else text


def _unknown_text(block: UnknownContent) -> str:
    """An unknown block as its JSON when short, else its type and JSON size (streamed)."""
    view = _measure_json(block.raw, MAX_UNKNOWN_BLOCK_JSON)
    if view.length <= MAX_UNKNOWN_BLOCK_JSON:
        return f"[{block.type} content]\n{view.head}"
    return f"[{block.type} content, {view.length} characters of JSON]"


def _parts(block: ContentBlock) -> tuple[str, ...]:
    """A block's piece of the document, as parts that are the result's own strings."""
    if isinstance(block, TextContent):
        return (block.text,)
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
        return (_resource_head(block.resource), block.resource.text)
    if isinstance(block, ResourceLink):
        return (_link_text(block),)
    if isinstance(block, UnknownContent):
        return (_unknown_text(block),)
    return (_binary(block).placeholder(),)


def _pointer(block: ContentBlock | None, index: int) -> str:
    """A JSON pointer into the result to a piece's text (None: structuredContent)."""
    if block is None:
        return "/structuredContent"
    if isinstance(block, TextContent):
        return f"/content/{index}/text"
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
        return f"/content/{index}/resource/text"
    return f"/content/{index}"


# -- structuredContent as JSON, streamed ----------------------------------------------------

#: Estimated JSON characters up to which values are written by one ``json.dumps`` call (C
#: speed); larger ones are walked, so no more than about this much (a few times over, for
#: escapes) is ever written at once.
_JSON_BATCH = 8192
#: Containers a value may nest and still be written by one call (a row and its small lists):
#: deeper ones are walked, so each value is looked at a few times at most, at any depth.
_JSON_NEST = 2
#: A longer string is written in slices of this many characters (escaping is per character).
_JSON_STR_SLICE = 65536


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # json.dumps(..., these) each
_dumps = _ENCODER.encode
_FLAT = frozenset({int, float, bool, type(None)})


def _estimate(value: Any, limit: int, nest: int = _JSON_NEST) -> int:
    """About the JSON size of ``value`` (a small factor either way) when it is at most
    ``limit`` and nests at most ``nest`` containers, else ``limit + 1``; looks at no more than
    that much of it (and never recurses more than ``nest`` levels)."""
    if isinstance(value, str):
        return len(value) + 2 if len(value) + 2 <= limit else limit + 1
    is_dict = isinstance(value, dict)
    if not is_dict and not isinstance(value, list | tuple):
        return 8
    if nest == 0 or 2 * len(value) > limit:
        return limit + 1
    size = 2
    for key, item in value.items() if is_dict else enumerate(value):
        kind = type(item)
        size += (8 if kind in _FLAT else len(item) + 4 if kind is str
                 else _estimate(item, limit - size, nest - 1) + 2)
        if is_dict:
            size += len(key) + 2 if type(key) is str else 8
        if size > limit:
            return limit + 1
    return size


def _str_chunks(text: str) -> Iterator[str]:
    yield '"'
    for i in range(0, len(text), _JSON_STR_SLICE):
        yield _dumps(text[i:i + _JSON_STR_SLICE])[1:-1]
    yield '"'


def _key_json(key: Any) -> str:
    if isinstance(key, str):
        return _dumps(key)
    return _dumps({key: 0})[1:-4]  # as json.dumps writes a non-string key (or its TypeError)


def _json_chunks(value: Any) -> Iterator[str]:
    """The text of ``json.dumps(value, ensure_ascii=False, default=str)`` in pieces of at most
    about :data:`_JSON_BATCH` characters, at C speed for the small values within; written
    without recursion (any depth).  Raises whatever ``json.dumps`` would, and ``ValueError``
    for a container inside itself: the caller then writes :func:`_json_text` instead."""
    if isinstance(value, str):
        yield from _str_chunks(value) if len(value) > _JSON_STR_SLICE else (_dumps(value),)
        return
    if not isinstance(value, dict | list | tuple) or _estimate(value, _JSON_BATCH) <= _JSON_BATCH:
        yield _dumps(value)
        return
    inside = {id(value)}
    stack: list[list[Any]] = []  # frames: [items, is_dict, first, id, closer]

    def open_frame(item: Any) -> str:
        is_dict = isinstance(item, dict)
        stack.append([iter(item.items() if is_dict else item), is_dict, True, id(item),
                      "}" if is_dict else "]"])
        return "{" if is_dict else "["

    def lead(frame: list[Any]) -> str:
        first, frame[2] = frame[2], False
        return "" if first else ", "

    def flush(frame: list[Any], batch: list[Any]) -> str:  # the batch's items, as dumps writes
        return lead(frame) + _dumps(dict(batch) if frame[1] else batch)[1:-1]

    yield open_frame(value)
    while stack:
        frame = stack[-1]
        batch: list[Any] = []
        size = 0
        for child in frame[0]:
            item = child[1] if frame[1] else child
            est = _estimate(item, _JSON_BATCH)
            if batch and (est > _JSON_BATCH or size + est > _JSON_BATCH):
                yield flush(frame, batch)
                batch, size = [], 0
            if est <= _JSON_BATCH:
                batch.append(child)
                size += est
                continue
            yield lead(frame) + (_key_json(child[0]) + ": " if frame[1] else "")
            if isinstance(item, str):
                yield from _str_chunks(item)
                continue
            if id(item) in inside:
                raise ValueError("Circular reference detected")
            inside.add(id(item))
            yield open_frame(item)
            break
        else:
            if batch:
                yield flush(frame, batch)
            stack.pop()
            inside.discard(frame[3])
            yield frame[4]


@dataclass(slots=True)
class _Json:
    """A value's JSON text as far as it is known: its length, its first and last characters,
    and (once needed, or when short) all of it."""

    value: Any
    length: int
    head: str
    tail: str
    text: str | None

    def slice(self, start: int, stop: int) -> str:
        if self.text is not None:
            return self.text[start:stop]
        if stop <= len(self.head):
            return self.head[start:stop]
        tail_at = self.length - len(self.tail)
        if start >= tail_at:
            return self.tail[start - tail_at:stop - tail_at]
        self.text = _json_text(self.value)  # a read in the middle (a store's page): once
        return self.text[start:stop]


def _measure_json(value: Any, keep: int) -> _Json:
    """``value``'s JSON length in one streaming pass, holding its first and last ``keep``
    characters only; a value ``json.dumps`` cannot write is written by :func:`_json_text`."""
    head: list[str] = []
    tail: deque[str] = deque()
    length = held = tail_held = 0
    try:
        for chunk in _json_chunks(value):
            length += len(chunk)
            if held < keep:
                head.append(chunk)
                held += len(chunk)
            if keep:
                tail.append(chunk)
                tail_held += len(chunk)
                while tail_held - len(tail[0]) >= keep:
                    tail_held -= len(tail.popleft())
    except Exception:  # RecursionError, circular, a key or an object json cannot write
        text = _json_text(value)
        return _Json(value, len(text), text[:keep], text[max(0, len(text) - keep):], text)
    first = "".join(head)[:keep]
    last = "".join(tail)
    last = last[len(last) - min(keep, len(last)):]
    return _Json(value, length, first, last, first if length <= keep else None)


# -- the document ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Document:
    """A result's document: each piece's parts (None: the structuredContent JSON), where it
    starts, its length; pieces are joined by one ``"\\n"``."""

    parts: list[tuple[str, ...] | None]
    starts: list[int]
    lengths: list[int]
    json: _Json | None = None
    dup: int | None = None
    total: int = 0

    def holder(self) -> int | None:
        """The piece that holds structuredContent, if any."""
        return len(self.parts) - 1 if self.json is not None else self.dup

    def piece(self, i: int, start: int, stop: int) -> str:
        parts = self.parts[i]
        if parts is None:
            assert self.json is not None
            return self.json.slice(start, stop)
        if len(parts) == 1:
            return parts[0][start:stop]
        out, at = [], 0
        for part in parts:
            a, b = max(start - at, 0), min(stop - at, len(part))
            if a < b:
                out.append(part[a:b])
            at += len(part)
        return "".join(out)

    def text(self, start: int, stop: int) -> str:
        """The document's characters ``[start, stop)``: only those are read."""
        stop = min(stop, self.total)
        if start >= stop:
            return ""
        out: list[str] = []
        i = bisect_right(self.starts, start) - 1
        pos = start
        while pos < stop:
            end = self.starts[i] + self.lengths[i]
            if pos < end:
                upto = min(stop, end)
                out.append(self.piece(i, pos - self.starts[i], upto - self.starts[i]))
                pos = upto
            else:  # the "\n" after piece i
                out.append("\n")
                pos += 1
                i += 1
        return "".join(out)


def _document(result: CallToolResult, keep: int) -> _Document:
    """``result``'s document; ``keep``: how much of the JSON's head and tail to hold."""
    doc = _Document([], [], [])
    at = 0
    for block in result.content:
        parts = _parts(block)
        doc.parts.append(parts)
        doc.starts.append(at)
        length = sum(map(len, parts))
        doc.lengths.append(length)
        at += length + 1
    if result.structured_content is not None:
        doc.dup = _duplicate_index(result)
        if doc.dup is None:
            doc.json = _measure_json(result.structured_content, keep)
            doc.parts.append(None)
            doc.starts.append(at)
            doc.lengths.append(doc.json.length)
            at += doc.json.length + 1
    doc.total = max(at - 1, 0)
    return doc


# -- budgeting ------------------------------------------------------------------------------


def _marker(omitted: int, offset: int, handle: str | None) -> str:
    if handle is None:
        return f"[... {omitted:,} characters omitted]"
    return (f"[... {omitted:,} characters omitted; read more with {READ_TOOL} "
            f"handle={handle} offset={offset}]")


def _check_handle(handle: str | None) -> None:
    if handle is not None and (not isinstance(handle, str) or not _HANDLE.fullmatch(handle)):
        raise ValueError(f"a result handle is 1 to {MAX_HANDLE_CHARS} characters of "
                         "A-Z, a-z, 0-9, '_' and '-'")


def _split(keep: int, total: int, span: tuple[int, int] | None) -> tuple[int, int]:
    """(head, tail) characters for ``keep`` kept, the piece at ``span`` whole if it can be:
    a piece is whole when the head reaches past it, or the tail starts before it (the
    ``"\\n"`` that joins it included).  Of the two, the one that moves the cut less."""
    head = int(keep * HEAD_SHARE)
    if span is None:
        return head, keep - head
    need_head, need_tail = span[1] + 1, total - span[0] + 1
    if head >= need_head or keep - head >= need_tail:
        return head, keep - head
    ways = [(need, way) for need, way in ((need_head, "head"), (need_tail, "tail"))
            if need <= keep]
    if not ways:
        return head, keep - head
    need, way = min(ways)
    return (need, keep - need) if way == "head" else (keep - need, need)


def _fit(doc: _Document, budget: Budget, handle: str | None) -> tuple[int, int]:
    """(head, tail) characters kept: as many as the budget allows with the marker."""
    total = doc.total
    bound = budget._text_bound()
    assert bound is not None
    cap = max(0, min(bound - len(_marker(total, total, handle)), total - 1))
    i = doc.holder()
    span = None if i is None else (doc.starts[i], doc.starts[i] + doc.lengths[i])
    if budget.max_tokens is None or budget.count_tokens is None:
        return _split(cap, total, span)  # the estimate is in the bound already

    def count(keep: int) -> tuple[int, tuple[int, int]]:
        head, tail = _split(keep, total, span)
        text = (doc.text(0, head) + _marker(total - head - tail, head, handle)
                + doc.text(total - tail, total))
        return budget.tokens(text), (head, tail)

    limit = budget.max_tokens
    lo, hi, best = -1, cap + 1, None
    keep = min(cap, limit * CHARS_PER_TOKEN)
    for _ in range(MAX_FIT_ROUNDS):
        used, cut = count(keep)
        if used <= limit:
            lo, best = keep, cut
        else:
            hi = keep
        if hi - lo <= max(1, lo // 64):
            break
        guess = keep * limit // max(used, 1)
        keep = min(max(guess, lo + 1), hi - 1)
    if best is None:
        used, best = count(0)
        if used > limit:
            raise ValueError(f"count_tokens says the omission marker alone is {used} tokens, "
                             f"over max_tokens={limit}: raise the budget")
    return best


def _over(doc: _Document, budget: Budget) -> bool:
    bound = budget._text_bound()
    if bound is None or doc.total == 0:
        return False
    if doc.total > bound:
        return True
    return budget.count_tokens is not None and budget.max_tokens is not None and (
        budget.tokens(doc.text(0, doc.total)) > budget.max_tokens)


def _cut(result: CallToolResult, doc: _Document, budget: Budget, handle: str | None
         ) -> tuple[list[tuple[int, ContentBlock]], bool, list[Note], int]:
    """The kept blocks (with their index in ``result``), whether structuredContent stays, the
    notes and the characters omitted."""
    head, tail = _fit(doc, budget, handle)
    total = doc.total
    start = total - tail
    k = bisect_right(doc.starts, head) - 1
    j = bisect_right(doc.starts, start) - 1
    a, b = head - doc.starts[k], start - doc.starts[j]
    text = (doc.piece(k, 0, a) + _marker(start - head, head, handle)
            + doc.piece(j, b, doc.lengths[j]))
    blocks = result.content
    kept = [*((i, blocks[i]) for i in range(k)), (-1, TextContent(text=text)),
            *((i, blocks[i]) for i in range(j + 1, len(blocks)))]
    gone = range(k, min(j + 1, len(blocks)))
    whole = [i for i in gone if i not in (k, j)]
    where = blocks[k] if k < len(blocks) else None
    detail = (f"{start - head:,} of {total:,} characters omitted (kept the first {head:,} and "
              f"the last {tail:,}); ")
    detail += (f"read more with {READ_TOOL} handle={handle} offset={head}" if handle
               else "the rest is not kept")
    if whole:
        span = f"{whole[0]}-{whole[-1]}" if len(whole) > 1 else f"{whole[0]}"
        detail += f"; content blocks {span} left out"
    if any(_is_binary(blocks[i]) for i in gone):
        detail += "; media blocks in the omitted part left out"
    notes = [Note(_pointer(where, k), "cut", detail)]
    structured = True
    if result.structured_content is not None:
        holder = doc.holder()
        structured = holder is not None and (holder < k or holder > j)
        if not structured:
            notes.append(Note("/structuredContent", "structured-as-text",
                              "structuredContent did not fit the budget whole: sent as cut "
                              "JSON text, not as a value"))
    return kept, structured, notes, start - head


def _limit_media(kept: list[tuple[int, ContentBlock]], budget: Budget
                 ) -> tuple[list[tuple[int, ContentBlock]], list[Note]]:
    """Images over ``max_image_bytes`` and binaries past ``max_binary_bytes`` as text."""
    if budget.max_image_bytes is None and budget.max_binary_bytes is None:
        return kept, []
    out: list[tuple[int, ContentBlock]] = []
    notes: list[Note] = []
    left = budget.max_binary_bytes
    for i, block in kept:
        if not _is_binary(block):
            out.append((i, block))
            continue
        binary = _binary(block)
        size = binary.size or 0  # not base64, or empty: the converter makes it a note
        image = binary.label == "image" or binary.mime.startswith("image/")
        kind = why = ""
        if image and budget.max_image_bytes is not None and size > budget.max_image_bytes:
            kind = "image-too-large"
            why = f"over the {budget.max_image_bytes:,}-byte image budget"
        elif left is not None and size > left:
            kind = "binary-over-budget"
            why = f"past the {budget.max_binary_bytes:,}-byte budget for media"
        elif left is not None:
            left -= size
        if kind:
            out.append((i, TextContent(text=binary.placeholder())))
            mime = binary.mime or "no type"
            notes.append(Note(_pointer(block, i), kind,
                              f"{binary.label} ({mime}, {size:,} bytes) sent as text: {why}"))
        else:
            out.append((i, block))
    return out, notes


def budget_result(result: CallToolResult, budget: Budget, *,
                  handle: str | None = None) -> Budgeted:
    """``result`` within ``budget`` (see the module's rules); pure.

    ``handle`` is the :class:`ResultStore` handle of the whole result, named in the marker so
    the model can read the rest (None: the marker says only what was omitted).  The same
    ``result`` comes back when it is within the budget.

    ``TypeError`` for a ``budget`` that is not a :class:`Budget`; ``ValueError`` for a handle
    that is not 1 to :data:`MAX_HANDLE_CHARS` of ``[A-Za-z0-9_-]``, or when the budget's own
    ``count_tokens`` counts the marker alone over ``max_tokens`` (raise the budget).
    Whatever ``count_tokens`` raises is not caught.
    """
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, got {type(budget).__name__}")
    _check_handle(handle)
    bound = budget._text_bound()
    kept: list[tuple[int, ContentBlock]] = list(enumerate(result.content))
    notes: list[Note] = []
    structured, omitted, cut = True, 0, False
    if bound is not None:
        doc = _document(result, bound)
        if _over(doc, budget):
            kept, structured, notes, omitted = _cut(result, doc, budget, handle)
            cut = True
    kept, media = _limit_media(kept, budget)
    if not cut and not media:
        return Budgeted(result=result)
    budgeted = CallToolResult(
        content=tuple(block for _, block in kept),
        structured_content=result.structured_content if structured else None,
        is_error=result.is_error, meta=result.meta, raw=result.raw)
    return Budgeted(result=budgeted, notes=(*notes, *media), omitted=omitted, cut=True)


# -- the store ------------------------------------------------------------------------------


class UnknownResult(MCPError, KeyError):
    """No stored result has this handle: it was evicted (the store is bounded) or never
    existed.  The model gets the message; the host need do nothing."""

    def __init__(self, handle: object, kept: int, held: int) -> None:
        self.handle = handle
        super().__init__(f"no stored result {str(handle)[:80]!r}: it was evicted or never "
                         f"existed (the store keeps the last {kept} results; {held} held now)")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultPage:
    """Characters ``[offset, offset + len(text))`` of a stored result's document (``total``
    long); ``next_offset`` is where the next page starts, None at the end."""

    handle: str
    offset: int
    text: str
    total: int
    next_offset: int | None


def _count(name: str, value: object, least: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, got {value}")
    return value


@dataclass(slots=True, eq=False)
class ResultStore:
    """Whole results, kept to be paged: at most ``max_results`` and ``max_chars`` document
    characters, the oldest evicted first.  Holds each result's document (references to its
    strings and its ``structuredContent``; no binary data).  Pure: no clock, no lock (the
    binding guards it).  ``ValueError`` for a limit below 1."""

    max_results: int = DEFAULT_MAX_STORED_RESULTS
    max_chars: int = DEFAULT_MAX_STORED_CHARS
    _entries: dict[str, _Document] = field(default_factory=dict, init=False, repr=False)
    _chars: int = field(default=0, init=False, repr=False)
    _next: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        _count("max_results", self.max_results, 1)
        _count("max_chars", self.max_chars, 1)

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, result: CallToolResult) -> str | None:
        """Keep ``result``; its handle (``"r1"``, ``"r2"`` ...: never reused), or None when
        its document alone is longer than ``max_chars`` (then budget it without a handle)."""
        doc = _document(result, 0)
        if doc.total > self.max_chars:
            return None
        while self._entries and (len(self._entries) >= self.max_results
                                 or self._chars + doc.total > self.max_chars):
            self._chars -= self._entries.pop(next(iter(self._entries))).total
        self._next += 1
        handle = f"r{self._next}"
        self._entries[handle] = doc
        self._chars += doc.total
        return handle

    def discard(self, handle: str) -> bool:
        """Forget ``handle`` (put before budgeting, not cut); whether it was held."""
        doc = self._entries.pop(handle, None)
        if doc is not None:
            self._chars -= doc.total
        return doc is not None

    def clear(self) -> None:
        """Forget every result (handles are still never reused)."""
        self._entries.clear()
        self._chars = 0

    def read(self, handle: str, offset: int = 0,
             length: int = DEFAULT_READ_LENGTH) -> ResultPage:
        """Characters ``[offset, offset + length)`` of the stored result's document (the
        offsets :func:`budget_result`'s marker names); ``length`` is capped at
        :data:`MAX_READ_LENGTH`.  Read on from ``next_offset`` until it is None.

        :class:`UnknownResult` for a handle evicted or never given; ``ValueError`` for an
        offset below 0 or past the end, or a length below 1.
        """
        doc = self._entries.get(handle) if isinstance(handle, str) else None
        if doc is None:
            raise UnknownResult(handle, self.max_results, len(self._entries))
        _count("offset", offset, 0)
        length = min(_count("length", length, 1), MAX_READ_LENGTH)
        if offset > doc.total:
            raise ValueError(f"offset {offset} is past the end of the result "
                             f"({doc.total} characters)")
        text = doc.text(offset, offset + length)
        end = offset + len(text)
        return ResultPage(handle=handle, offset=offset, text=text, total=doc.total,
                          next_offset=end if end < doc.total else None)
