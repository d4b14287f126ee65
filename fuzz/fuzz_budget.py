"""Fuzz harness for :func:`mcp_proto.host.content._budget.budget_result` and
:class:`~mcp_proto.host.content._budget.ResultStore` (result budgets), and
``to_provider_content(..., budget=)``.

``check(data)`` builds a ``tools/call`` result and parses it with the core's own
``parse_call_tool_result`` (a result it refuses is skipped), then a budget.  The data is read
two ways, chosen by its first byte:

- **raw** (``{``, ``[`` or whitespace first): the data is the result's JSON, and the budget is
  one of :data:`RAW_BUDGETS`, picked by the data's length;
- **structured** (otherwise): the result is :mod:`fuzz_content`'s drawing (every block kind,
  good and bad base64, ``structuredContent`` nested up to 3000 levels, hundreds of images),
  plus long text blocks (cut inside, on and around their ``"\\n"`` joins), a text block
  holding the ``structuredContent`` (as FastMCP sends it) and large ``structuredContent``
  rows; the budget is drawn: characters and tokens at and near their minimums, a word
  counter, a character counter, a UTF-8 byte counter, image and binary limits; a handle or
  none.

Properties (any violation raises AssertionError):

- ``budget_result`` never raises for a valid result and budget; within the budget the very
  same result comes back, uncut and without notes;
- the budgeted document (the text a model sees, marker and placeholders included) is within
  ``max_chars`` and ``max_tokens``;
- over budget, the document kept is a head and a tail of the original with one marker
  between; the marker's count of omitted characters is true, its offset is the head's
  length, and the store's pages read from it return exactly the omitted text;
- ``structuredContent`` stays the same value or goes with a ``structured-as-text`` note;
  images kept are within ``max_image_bytes``, binaries within ``max_binary_bytes``;
- paging the store from 0 until ``next_offset`` is None returns the whole document;
- ``to_provider_content(..., budget=)`` for every target never raises, is within the budget
  (its text, pieces joined like the document) and carries the budget's notes; its message is
  JSON when the result's nesting allows.

Run: ``python fuzz/fuzz_budget.py /tmp/fz/budget fuzz/corpus/budget -dict=fuzz/jsonrpc.dict``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from fuzz.fuzz_content import JSON_SAFE_DEPTH, _depth, draw_result
from mcp_proto import RemoteProtocolError
from mcp_proto._types import CallToolResult, ImageContent, TextContent, parse_call_tool_result
from mcp_proto.host.content._budget import (
    BUDGET_NOTE_KINDS,
    MIN_BUDGET_CHARS,
    MIN_BUDGET_TOKENS,
    Budget,
    Budgeted,
    ResultStore,
    _document,
    base64_size,
    budget_result,
)
from mcp_proto.host.content._convert import CONTENT_TARGETS, ProviderContent, to_provider_content
from mcp_proto.host.content._structured import _duplicate_index, _json_text

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

MARKER = re.compile(r"\[\.\.\. ([0-9,]+) characters omitted(?:; read more with mcp_read_result "
                    r"handle=([A-Za-z0-9_-]+) offset=([0-9]+))?\]")
#: The page length the store is read with (a small one: many pages per document).
PAGE = 1499


def words(text: str) -> int:
    return len(text.split())


def utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


#: Counters a budget may have, with the least ``max_tokens`` for which the marker fits.
COUNTERS: tuple[tuple[Callable[[str], int] | None, int], ...] = (
    (None, MIN_BUDGET_TOKENS), (words, MIN_BUDGET_TOKENS), (len, MIN_BUDGET_CHARS),
    (utf8, MIN_BUDGET_CHARS))
RAW_BUDGETS = (
    Budget(max_chars=MIN_BUDGET_CHARS), Budget(max_tokens=MIN_BUDGET_TOKENS),
    Budget(max_chars=1000, max_image_bytes=8, max_binary_bytes=8),
    Budget(max_tokens=300, count_tokens=len), Budget(max_tokens=100, count_tokens=words),
    Budget(max_image_bytes=0), Budget(),
)
LONG = ("a" * 5000, "line\n" * 900, "\u00e9\U0001f600" * 1500, "\n" * 700, "x y " * 1200)


# -- drawing ----------------------------------------------------------------------------------


def draw_budget(ch: Choices) -> Budget:
    counter, least = ch.pick(COUNTERS)
    def limit(low: int, choices: tuple[int, ...]) -> int | None:
        k = ch.below(len(choices) + 2)
        return None if k == 0 else low + (ch.below(64) if k == 1 else choices[k - 2])
    return Budget(max_chars=limit(MIN_BUDGET_CHARS, (0, 1, 500, 3000)),
                  max_tokens=limit(least, (0, 1, 200, 900)),
                  max_image_bytes=limit(0, (0, 8, 5000)),
                  max_binary_bytes=limit(0, (0, 9, 20000)), count_tokens=counter)


def draw(ch: Choices) -> tuple[dict[str, Any], int]:
    wire, depth = draw_result(ch)
    blocks = wire.setdefault("content", [])
    if not isinstance(blocks, list):
        return wire, depth
    for _ in range(ch.below(4)):
        text = ch.pick(LONG)
        blocks.insert(ch.below(len(blocks) + 1), {"type": "text",
                                                  "text": text[:len(text) - ch.below(64)]})
    if ch.chance(4):
        wire["structuredContent"] = {"rows": [{"id": i, "v": ch.pick(LONG)[:ch.below(200)]}
                                              for i in range(ch.below(300))]}
    if "structuredContent" in wire and depth < JSON_SAFE_DEPTH and ch.chance(2):
        blocks.insert(ch.below(len(blocks) + 1),
                      {"type": "text", "text": json.dumps(wire["structuredContent"])})
    return wire, depth


# -- the properties ---------------------------------------------------------------------------


def document(result: CallToolResult) -> str:
    doc = _document(result, 0)
    return doc.text(0, doc.total)


def within(budget: Budget, seen: str, what: str) -> None:
    if budget.max_chars is not None:
        assert len(seen) <= budget.max_chars, f"{what}: {len(seen)} characters over budget"
    if budget.max_tokens is not None:
        assert budget.tokens(seen) <= budget.max_tokens, f"{what}: tokens over budget"


def read(store: ResultStore, handle: str, offset: int, count: int) -> str:
    out, got = [], 0
    while got < count:
        page = store.read(handle, offset + got, min(PAGE, count - got))
        assert page.text, "a page before the end is empty"
        out.append(page.text)
        got += len(page.text)
    return "".join(out)


def check_budgeted(result: CallToolResult, budget: Budget, got: Budgeted, store: ResultStore,
                   handle: str | None) -> None:
    doc = document(result)
    seen = document(got.result)
    within(budget, seen, "budget_result")
    if not got.cut:
        assert got.result is result and not got.notes and not got.omitted, "uncut but changed"
        return
    assert got.notes and all(n.kind in BUDGET_NOTE_KINDS for n in got.notes), "notes"
    assert got.result.raw is result.raw and got.result.is_error is result.is_error
    if result.structured_content is not None:
        kept = got.result.structured_content
        assert kept is None or kept is result.structured_content, "structuredContent changed"
        assert kept is not None or any(n.kind == "structured-as-text" for n in got.notes), (
            "structuredContent dropped without a note")
    left = budget.max_binary_bytes
    for block in got.result.content:
        data = getattr(block, "data", None) or getattr(getattr(block, "resource", None),
                                                       "blob", None)
        size = base64_size(data) if isinstance(data, str) else None
        if size:
            if isinstance(block, ImageContent) and budget.max_image_bytes is not None:
                assert size <= budget.max_image_bytes, "an image over max_image_bytes"
            if left is not None:
                assert size <= left, "binaries over max_binary_bytes"
                left -= size
    if not got.omitted:
        assert seen == doc, "only media turned into notes, yet the document changed"
        return
    marks = [m for m in MARKER.finditer(seen) if handle is None or m.group(2) == handle]
    assert marks, "no marker in a cut result"
    m = marks[0]
    head, tail = m.start(), len(seen) - m.end()
    omitted = int(m.group(1).replace(",", ""))
    assert omitted == got.omitted and head + omitted + tail == len(doc), "marker's count"
    assert seen[:head] == doc[:head] and seen[m.end():] == doc[len(doc) - tail:], "head, tail"
    if handle is not None:
        assert int(m.group(3)) == head, "the marker's offset is not the head's length"
        assert read(store, handle, head, omitted) == doc[head:head + omitted], "omitted text"


def visible(pc: ProviderContent, budgeted: CallToolResult) -> str:
    content = pc.content
    if pc.target.startswith("gemini"):
        response = dict(content)
        value = response.pop("output", response.pop("error", None))
        if budgeted.structured_content is None:
            return str(value)
        dup = _duplicate_index(budgeted)
        block = budgeted.content[dup] if dup is not None else None
        held = block.text if isinstance(block, TextContent) else (
            value if isinstance(value, str) else _json_text(value))
        return "\n".join(x for x in (response.get("text", ""), held) if x)
    if isinstance(content, str):
        return content
    return "\n".join(item["text"] for item in content
                     if item.get("type") in ("text", "input_text"))


def check_result(result: CallToolResult, budget: Budget, with_handle: bool, depth: int) -> None:
    store = ResultStore()
    try:
        handle = store.put(result) if with_handle else None
        got = budget_result(result, budget, handle=handle)
    except Exception as exc:
        escaped("budget_result", exc)
    check_budgeted(result, budget, got, store, handle)
    if handle is not None:
        whole, offset = [], 0
        while True:
            page = store.read(handle, offset, PAGE * 7)
            whole.append(page.text)
            if page.next_offset is None:
                break
            offset = page.next_offset
        assert "".join(whole) == document(result), "pages do not make the document"
    for target in CONTENT_TARGETS:
        try:
            pc = to_provider_content(result, target, name="f", budget=budget, handle=handle)
            message = pc.message("c1")
        except Exception as exc:
            escaped(f"to_provider_content({target!r}, budget=)", exc)
        within(budget, visible(pc, got.result), target)
        assert pc.budget_notes == got.notes, f"{target}: budget notes"
        assert pc.handle == (handle if got.omitted else None), f"{target}: handle"
        if depth <= JSON_SAFE_DEPTH:
            json.dumps(message)


def check(data: bytes) -> None:
    if data[:1] in (b"{", b"[", b" ", b"\n", b"\t"):
        try:
            wire = json.loads(data)
        except (ValueError, RecursionError):
            return
        depth = _depth(wire)
        budget, with_handle = RAW_BUDGETS[len(data) % len(RAW_BUDGETS)], len(data) % 2 == 0
    else:
        ch = Choices(data[1:])
        budget, with_handle = draw_budget(ch), ch.chance(2)
        wire, depth = draw(ch)
    if not isinstance(wire, dict):
        return
    try:
        result = parse_call_tool_result(wire)
    except RemoteProtocolError:
        return
    except Exception as exc:
        escaped("parse_call_tool_result", exc)
    check_result(result, budget, with_handle, depth)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
