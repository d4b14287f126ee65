"""Result budgets (``mcp_proto.host.content._budget``): a tool result cut to a budget, the rest
kept in a bounded store and paged.

The properties are checked by Hypothesis over results (text, text resources, links, unknown
blocks, images, audio, blobs, ``structuredContent`` with and without a text block holding it)
and budgets (characters, estimated tokens, a word counter, a character counter, media
limits): the kept text is a head and a tail of the document; the marker's numbers are true
(the store's read at its offset returns exactly the omitted text); no budget is exceeded, in
the budgeted document and in every target's converted content.
"""

from __future__ import annotations

import base64
import json
import re
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_proto._errors import MCPError
from mcp_proto._types import (
    CallToolResult,
    ImageContent,
    TextContent,
    parse_call_tool_result,
)
from mcp_proto.host.content import _budget
from mcp_proto.host.content._budget import (
    BUDGET_NOTE_KINDS,
    CHARS_PER_TOKEN,
    MAX_READ_LENGTH,
    MIN_BUDGET_CHARS,
    MIN_BUDGET_TOKENS,
    Budget,
    Budgeted,
    ResultStore,
    UnknownResult,
    _document,
    _json_chunks,
    base64_size,
    budget_result,
)
from mcp_proto.host.content._convert import (
    CONTENT_TARGETS,
    DEFAULT_BUDGETS,
    DEFAULT_MAX_RESULT_TOKENS,
    ProviderContent,
    default_budget,
    to_provider_content,
)
from mcp_proto.host.content._structured import _duplicate_index, _json_text

MARKER = re.compile(r"\[\.\.\. ([0-9,]+) characters omitted(?:; read more with mcp_read_result "
                    r"handle=([A-Za-z0-9_-]+) offset=([0-9]+))?\]")
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def document_text(res: CallToolResult) -> str:
    doc = _document(res, 0)
    return doc.text(0, doc.total)


def words(text: str) -> int:
    return len(text.split())


def b64(n: int) -> str:
    return base64.b64encode(bytes(range(256)) * (n // 256) + bytes(n % 256)).decode()


def result(*content: dict[str, Any], **extra: Any) -> CallToolResult:
    return parse_call_tool_result({"content": list(content), **extra})


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def image(n: int, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": b64(n), "mimeType": mime}


# -- strategies -------------------------------------------------------------------------------

_chars = st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("\n [].")
_short = st.text(_chars, max_size=40)
_long = st.builds(lambda c, n: c * n, st.text(_chars, min_size=1, max_size=5),
                  st.integers(0, 4000))
_texts = _short | _long
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
    | _short,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_short, inner, max_size=6),
    max_leaves=20)
_big_json = st.builds(lambda n, s: {"rows": [{"id": i, "s": s} for i in range(n)]},
                      st.integers(0, 400), _short)
_blocks = st.one_of(
    _texts.map(text),
    _texts.map(text),
    st.builds(lambda u, t, m: {"type": "resource", "resource": {"uri": u, "text": t,
                                                                **({"mimeType": m} if m else {})}},
              st.sampled_from(["file:///a.txt", "mem://x"]), _texts,
              st.sampled_from(["", "text/plain"])),
    st.builds(image, st.integers(0, 3000),
              st.sampled_from(["image/png", "image/svg+xml"])),
    st.builds(lambda n: {"type": "audio", "data": b64(n), "mimeType": "audio/wav"},
              st.integers(1, 2000)),
    st.builds(lambda n: {"type": "resource", "resource": {"uri": "file:///b.pdf", "blob": b64(n),
                                                          "mimeType": "application/pdf"}},
              st.integers(1, 2000)),
    st.just({"type": "image", "data": "not base64!", "mimeType": "image/png"}),
    st.builds(lambda d: {"type": "resource_link", "uri": "file:///c", "name": "c",
                         **({"description": d} if d else {})}, _short),
    st.builds(lambda p: {"type": "x-custom", "payload": p}, _texts),
)


@st.composite
def results(draw: st.DrawFn) -> CallToolResult:
    blocks = draw(st.lists(_blocks, max_size=7))
    wire: dict[str, Any] = {"content": blocks}
    kind = draw(st.integers(0, 4))
    if kind >= 2:
        value = draw(_json if kind == 2 else _big_json)
        wire["structuredContent"] = value
        if kind == 4 or draw(st.booleans()):  # a text block holding it, as FastMCP sends
            at = draw(st.integers(0, len(blocks)))
            blocks.insert(at, text(json.dumps(value, indent=draw(st.sampled_from([None, 2])))))
    if draw(st.booleans()):
        wire["isError"] = True
    return parse_call_tool_result(wire)


COUNTERS: dict[str, Callable[[str], int] | None] = {"estimate": None, "words": words,
                                                    "len": len}


@st.composite
def budgets(draw: st.DrawFn) -> Budget:
    counter = COUNTERS[draw(st.sampled_from(sorted(COUNTERS)))]
    least = MIN_BUDGET_CHARS if counter is len else MIN_BUDGET_TOKENS
    return Budget(
        max_chars=draw(st.none() | st.integers(MIN_BUDGET_CHARS, 6000)),
        max_tokens=draw(st.none() | st.integers(least, 1500)),
        max_image_bytes=draw(st.none() | st.integers(0, 3000)),
        max_binary_bytes=draw(st.none() | st.integers(0, 6000)),
        count_tokens=counter)


# -- helpers ----------------------------------------------------------------------------------


def within(budget: Budget, seen: str) -> None:
    if budget.max_chars is not None:
        assert len(seen) <= budget.max_chars
    if budget.max_tokens is not None:
        assert budget.tokens(seen) <= budget.max_tokens


def read_all(store: ResultStore, handle: str, offset: int, count: int, page: int) -> str:
    out: list[str] = []
    got = 0
    while got < count:
        p = store.read(handle, offset + got, min(page, count - got))
        assert p.text, "a page short of the end is never empty"
        out.append(p.text)
        got += len(p.text)
    return "".join(out)


def check_budgeted(original: CallToolResult, budget: Budget, got: Budgeted,
                   store: ResultStore | None = None, handle: str | None = None) -> None:
    doc = document_text(original)
    seen = document_text(got.result)
    within(budget, seen)
    if not got.cut:
        assert got.result is original and not got.notes and got.omitted == 0
        return
    assert got.notes and all(n.kind in BUDGET_NOTE_KINDS for n in got.notes)
    assert got.result.raw is original.raw
    assert got.result.is_error is original.is_error
    if got.omitted == 0:  # only media turned into notes: the document is the same
        assert seen == doc
        return
    found = list(MARKER.finditer(seen))
    assert found, "a cut result has a marker"
    m = found[0] if handle is None else next(x for x in found if x.group(2) == handle)
    omitted = int(m.group(1).replace(",", ""))
    assert omitted == got.omitted
    head = m.start()
    tail = len(seen) - m.end()
    assert seen[:head] == doc[:head], "the kept text starts with the document's head"
    assert seen[m.end():] == doc[len(doc) - tail:], "... and ends with its tail"
    assert head + omitted + tail == len(doc), "the marker counts what is left out"
    if handle is not None:
        assert m.group(2) == handle and int(m.group(3)) == head
        assert store is not None
        assert read_all(store, handle, head, omitted, 997) == doc[head:head + omitted]


def visible(pc: ProviderContent, budgeted: CallToolResult) -> str:
    """The text a model sees of a converted result, pieces joined like the document."""
    content = pc.content
    if pc.target.startswith("gemini"):
        response = dict(content)
        value = response.pop("output", response.pop("error", None))
        rest = response.get("text", "")
        if budgeted.structured_content is None:
            return str(value)
        dup = _duplicate_index(budgeted)
        # the value stands for the text block that holds it, or for its JSON text
        held = budgeted.content[dup].text if dup is not None else (  # type: ignore[union-attr]
            value if isinstance(value, str) else _json_text(value))
        return "\n".join(x for x in (rest, held) if x)
    if isinstance(content, str):
        return content
    return "\n".join(item["text"] for item in content if item.get("type") in ("text",
                                                                                 "input_text"))


# -- properties -------------------------------------------------------------------------------


@SETTINGS
@given(results(), budgets(), st.booleans())
def test_budget_properties(res: CallToolResult, budget: Budget, with_handle: bool) -> None:
    store = ResultStore()
    handle = store.put(res) if with_handle else None
    got = budget_result(res, budget, handle=handle)
    check_budgeted(res, budget, got, store, handle)
    # media limits
    left = budget.max_binary_bytes
    for block in got.result.content:
        data = getattr(block, "data", None) or getattr(getattr(block, "resource", None),
                                                       "blob", None)
        size = base64_size(data) if isinstance(data, str) else None
        if size:
            if isinstance(block, ImageContent) and budget.max_image_bytes is not None:
                assert size <= budget.max_image_bytes
            if left is not None:
                assert size <= left
                left -= size
    # structuredContent: kept as the same value, or gone with a note saying so; kept
    # whenever its JSON (after the other text: no block holds it) fits beside the marker
    if res.structured_content is not None:
        kept = got.result.structured_content
        assert kept is None or kept is res.structured_content
        if kept is None:
            assert any(n.kind == "structured-as-text" for n in got.notes)
            bound = budget._text_bound()
            total = _document(res, 0).total
            if _duplicate_index(res) is None and budget.count_tokens is None and bound:
                room = bound - len(_budget._marker(total, total, handle))
                assert len(_json_text(res.structured_content)) + 1 > room


@SETTINGS
@given(results(), budgets())
def test_every_target_within_budget(res: CallToolResult, budget: Budget) -> None:
    got = budget_result(res, budget, handle="r9")
    for target in CONTENT_TARGETS:
        pc = to_provider_content(res, target, name="f", budget=budget, handle="r9")
        json.dumps(pc.message("c1"))
        within(budget, visible(pc, got.result))
        assert pc.raw is res.raw or (not res.raw and pc.raw)
        assert pc.budget_notes == got.notes
        assert pc.handle == ("r9" if got.omitted else None)
        assert set(n.detail for n in got.notes) <= set(pc.notes)


@settings(max_examples=150, deadline=None)
@given(results())
def test_document_is_the_openai_text(res: CallToolResult) -> None:
    """OpenAI Chat takes only text: its content is the document, piece for piece, so the
    document counts exactly what a converter writes."""
    assert to_provider_content(res, "openai").content == document_text(res)


@SETTINGS
@given(results(), st.integers(1, 3000), st.integers(0, 50))
def test_paging_reassembles_the_document(res: CallToolResult, length: int, skip: int) -> None:
    store = ResultStore()
    handle = store.put(res)
    assert handle is not None
    doc = document_text(res)
    offset, pages = min(skip, len(doc)), []
    while True:
        page = store.read(handle, offset, length)
        assert page.total == len(doc) and page.offset == offset and page.handle == handle
        assert len(page.text) == min(length, len(doc) - offset)
        pages.append(page.text)
        if page.next_offset is None:
            break
        assert page.next_offset == offset + len(page.text)
        offset = page.next_offset
    assert "".join(pages) == doc[min(skip, len(doc)):]


_deep = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _short,
    lambda inner: st.lists(inner, max_size=8) | st.tuples(inner, inner)
    | st.dictionaries(_short | st.integers() | st.booleans() | st.floats(), inner, max_size=8),
    max_leaves=60)


@settings(max_examples=200, deadline=None)
@given(_deep)
def test_json_chunks_are_the_json_text(value: Any) -> None:
    """The streamed JSON is ``_json_text``'s exactly, with batches small enough to take
    every path (batches, walked containers, sliced strings)."""
    saved = _budget._JSON_BATCH, _budget._JSON_STR_SLICE
    _budget._JSON_BATCH, _budget._JSON_STR_SLICE = 24, 5
    try:
        try:
            streamed = "".join(_json_chunks(value))
        except Exception:  # the caller then writes _json_text: nothing to compare
            return
        assert streamed == _json_text(value)
        view = _budget._measure_json(value, 7)
        assert view.length == len(streamed) and view.head == streamed[:7]
        assert view.tail == streamed[len(streamed) - min(7, len(streamed)):]
    finally:
        _budget._JSON_BATCH, _budget._JSON_STR_SLICE = saved


def test_json_chunks_deep_circular_and_odd_keys() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = [deep, {"k": "v" * 10}]
    big = [deep] * 3
    assert "".join(_json_chunks(big)) == _json_text(big)
    loop: list[Any] = ["x" * 10000]
    loop.append(loop)
    with pytest.raises(ValueError):
        "".join(_json_chunks([loop] * 2))
    assert _budget._measure_json(loop, 10).length == len(_json_text(loop))
    odd = {(1, 2): "tuple key"}
    assert _budget._measure_json(odd, 100).text == _json_text(odd)


# -- examples ---------------------------------------------------------------------------------


def test_under_budget_is_the_same_object() -> None:
    res = result(text("hello"), image(100), structuredContent={"a": 1})
    for budget in (Budget(), Budget(max_chars=1000), Budget(max_tokens=100, count_tokens=words),
                   Budget(max_image_bytes=100, max_binary_bytes=100)):
        got = budget_result(res, budget)
        assert got == Budgeted(result=res) and got.result is res
        pc = to_provider_content(res, "anthropic", budget=budget, handle="r1")
        assert pc == to_provider_content(res, "anthropic") and pc.handle is None


def test_marker_tells_the_truth() -> None:
    body = "".join(f"line {i}\n" for i in range(100_000))
    res = result(text(body))
    got = budget_result(res, Budget(max_chars=1000), handle="r7")
    (block,) = got.result.content
    assert isinstance(block, TextContent)
    m = MARKER.search(block.text)
    assert m is not None and m.group(2) == "r7"
    assert block.text == body[:m.start()] + m.group(0) + body[len(body) - (len(block.text)
                                                                          - m.end()):]
    assert int(m.group(3)) == m.start() and got.omitted == int(m.group(1).replace(",", ""))
    assert "," in m.group(1) and len(block.text) <= 1000
    assert got.notes[0].path == "/content/0/text" and got.notes[0].kind == "cut"
    assert "handle=r7 offset=" in got.notes[0].detail
    plain = budget_result(res, Budget(max_chars=1000))
    text_ = plain.result.content[0].text  # type: ignore[union-attr]
    assert "read more" not in text_ and f"[... {plain.omitted:,} characters omitted]" in text_
    assert plain.omitted < got.omitted  # the shorter marker leaves more room


def test_head_share_and_token_estimate() -> None:
    res = result(text("x" * 100_000))
    got = budget_result(res, Budget(max_tokens=1000))
    seen = document_text(got.result)
    assert len(seen) <= 1000 * CHARS_PER_TOKEN
    m = MARKER.search(seen)
    assert m is not None
    assert abs(m.start() - (len(seen) - m.end())) <= 1  # HEAD_SHARE = 0.5


def test_blocks_wholly_kept_are_the_same_objects() -> None:
    res = result(text("first"), text("y" * 50_000), {"type": "resource_link", "uri": "u",
                                                     "name": "n"}, text("z" * 50_000),
                 text("last"))
    got = budget_result(res, Budget(max_chars=2000))
    assert got.result.content[0] is res.content[0]
    assert got.result.content[-1] is res.content[-1]
    assert len(got.result.content) == 3  # first, the cut text with the marker, last
    assert "content blocks 2 left out" in got.notes[0].detail


def test_structured_content_kept_whole_when_it_fits() -> None:
    value = {"city": "Paris", "hours": [{"h": h, "temperature": 21.5 + h} for h in range(18)]}
    assert 500 < len(_json_text(value)) < 700  # more than half the room: the cut must move
    res = result(text("log " * 20_000), structuredContent=value)
    got = budget_result(res, Budget(max_chars=1000))
    assert got.result.structured_content is value
    assert document_text(got.result).endswith(_json_text(value))
    pc = to_provider_content(res, "gemini", name="f", budget=Budget(max_chars=1000))
    assert pc.content["output"] == value
    # a text block holding it (FastMCP): kept whole, the cut moves around it
    dup = result(text(json.dumps(value)), text("log " * 20_000), structuredContent=value)
    got = budget_result(dup, Budget(max_chars=1000))
    assert got.result.structured_content is value and got.result.content[0] is dup.content[0]
    tail_dup = result(text("log " * 20_000), text(json.dumps(value)), structuredContent=value)
    got = budget_result(tail_dup, Budget(max_chars=1000))
    assert got.result.structured_content is value
    assert got.result.content[-1] is tail_dup.content[-1]


def test_structured_content_cut_into_text_with_a_note() -> None:
    value = {"rows": [{"id": i, "name": f"item {i}"} for i in range(5000)]}
    res = result(text("summary"), structuredContent=value)
    got = budget_result(res, Budget(max_chars=2000), handle="r2")
    assert got.result.structured_content is None
    (note,) = [n for n in got.notes if n.kind == "structured-as-text"]
    assert note.path == "/structuredContent"
    last = got.result.content[-1]
    assert isinstance(last, TextContent) and last.text.endswith("]}")
    full = _json_text(value)
    m = MARKER.search(last.text)
    assert m is not None and full.endswith(last.text[m.end():])
    for target in CONTENT_TARGETS:  # no target gets the value any more
        pc = to_provider_content(res, target, name="f", budget=Budget(max_chars=2000))
        if target.startswith("gemini"):
            assert isinstance(pc.content["output"], str) and "rows" in pc.content["output"]
        assert "structuredContent did not fit" in " ".join(pc.notes)
        assert len(json.dumps(pc.message("c"))) < 3000
    dup = result(text(json.dumps(value)), structuredContent=value)
    got = budget_result(dup, Budget(max_chars=2000))
    assert got.result.structured_content is None
    assert any(n.kind == "structured-as-text" for n in got.notes)


def test_images_over_the_limit_become_notes() -> None:
    res = result(text("see"), image(5000), image(100), image(3000, "image/jpeg"))
    got = budget_result(res, Budget(max_image_bytes=4000, max_binary_bytes=3050))
    kinds = [(n.path, n.kind) for n in got.notes]
    assert kinds == [("/content/1", "image-too-large"), ("/content/3", "binary-over-budget")]
    assert got.omitted == 0 and got.cut
    one, two, three = got.result.content[1:]
    assert isinstance(one, TextContent) and one.text == "[image: image/png, 5000 bytes]"
    assert two is res.content[2]
    assert isinstance(three, TextContent) and "image/jpeg, 3000 bytes" in three.text
    assert document_text(got.result) == document_text(res)
    pc = to_provider_content(res, "anthropic", budget=Budget(max_image_bytes=4000))
    assert [b["type"] for b in pc.content] == ["text", "text", "image", "image"]
    assert any("image budget" in n for n in pc.notes)


def test_custom_counters() -> None:
    res = result(text(" ".join(f"w{i}" for i in range(20_000))))
    for counter, limit in ((words, 300), (len, 600), (lambda s: len(s.encode()) * 2, 1200)):
        budget = Budget(max_tokens=limit, count_tokens=counter)
        got = budget_result(res, budget)
        seen = document_text(got.result)
        assert counter(seen) <= limit
        assert counter(seen) > limit * 0.8, "the counter's room is used, not wasted"
    with pytest.raises(ValueError, match="marker alone"):
        budget_result(res, Budget(max_tokens=64, count_tokens=lambda s: 10 * len(s)))


def test_budget_validation() -> None:
    with pytest.raises(ValueError, match="at least 256"):
        Budget(max_chars=MIN_BUDGET_CHARS - 1)
    with pytest.raises(ValueError, match="at least 64"):
        Budget(max_tokens=MIN_BUDGET_TOKENS - 1)
    with pytest.raises(ValueError):
        Budget(max_image_bytes=-1)
    with pytest.raises(TypeError):
        Budget(max_chars=True)
    with pytest.raises(TypeError):
        Budget(count_tokens=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        budget_result(result(), {"max_chars": 300})  # type: ignore[arg-type]
    for bad in ("", "r 1", "x" * 65, "r1]", 7):
        with pytest.raises(ValueError, match="handle"):
            budget_result(result(text("x")), Budget(max_chars=300), handle=bad)  # type: ignore[arg-type]


def test_default_budgets() -> None:
    assert set(DEFAULT_BUDGETS) == set(CONTENT_TARGETS)
    for target in CONTENT_TARGETS:
        budget = default_budget(target)
        assert budget.max_tokens == DEFAULT_MAX_RESULT_TOKENS
        res = result(text("x" * 200_000), image(4_500_000))
        pc = to_provider_content(res, target, name="f", budget=budget)
        within(budget, visible(pc, budget_result(res, budget).result))
    assert default_budget("anthropic").max_image_bytes == 5 * 1024 * 1024 // 4 * 3
    with pytest.raises(ValueError, match="unknown content target"):
        default_budget("cohere")


def test_large_results_are_budgeted_in_memory_proportional_to_what_is_kept() -> None:
    big = "0123456789abcdef" * (10 * 1024 * 1024 // 16)  # 10 MiB
    res = result(text(big), text(big))
    value = {"rows": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(10_000)]}
    structured = result(structuredContent=value)
    for r in (res, structured):
        tracemalloc.start()
        got = budget_result(r, Budget(max_chars=4000), handle="r1")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert got.cut and len(document_text(got.result)) <= 4000
        assert peak < 512 * 1024, f"{peak} bytes to keep 4,000 characters"
    got = budget_result(res, Budget(max_chars=4000))
    seen = document_text(got.result)
    m = MARKER.search(seen)
    assert m is not None and seen[:m.start()] == big[:m.start()]
    assert got.omitted == 2 * len(big) + 1 - (len(seen) - len(m.group(0)))


# -- the store --------------------------------------------------------------------------------


def test_store_evicts_by_count_then_by_size() -> None:
    store = ResultStore(max_results=3, max_chars=1000)
    handles = [store.put(result(text(str(i)))) for i in range(5)]
    assert handles == ["r1", "r2", "r3", "r4", "r5"] and len(store) == 3
    with pytest.raises(UnknownResult):
        store.read("r2")
    assert store.read("r5").text == "4"
    assert store.put(result(text("x" * 600))) == "r6"  # r3 evicted: three at most
    assert [store.read(h).text[:1] for h in ("r4", "r5", "r6")] == ["3", "4", "x"]
    assert store.put(result(text("y" * 500))) == "r7"  # r4, r5 and r6 evicted for room
    assert len(store) == 1 and store.read("r7").total == 500
    for gone in ("r4", "r5", "r6"):
        with pytest.raises(UnknownResult):
            store.read(gone)
    assert store.put(result(text("z" * 400))) == "r8"  # fits beside r7
    assert len(store) == 2
    assert store.put(result(text("z" * 1001))) is None  # bigger than the whole store
    assert len(store) == 2
    assert store.discard("r7") and not store.discard("r7")
    store.clear()
    assert len(store) == 0 and store.put(result(text("again"))) == "r9"


def test_unknown_handle_error() -> None:
    store = ResultStore(max_results=2)
    store.put(result(text("a")))
    with pytest.raises(UnknownResult) as info:
        store.read("r99", 0)
    err = info.value
    assert isinstance(err, KeyError) and isinstance(err, MCPError)
    assert str(err) == ("no stored result 'r99': it was evicted or never existed (the store "
                        "keeps the last 2 results; 1 held now)")
    with pytest.raises(KeyError):
        store.read(None)  # type: ignore[arg-type]


def test_read_arguments() -> None:
    store = ResultStore()
    handle = store.put(result(text("x" * (MAX_READ_LENGTH + 10))))
    assert handle is not None
    assert len(store.read(handle, 0, 10**9).text) == MAX_READ_LENGTH  # capped
    assert store.read(handle, MAX_READ_LENGTH + 10).text == ""
    for offset, length in ((-1, 10), (MAX_READ_LENGTH + 11, 10), (0, 0), (0, -5), ("0", 1),
                           (0, True)):
        with pytest.raises(ValueError):
            store.read(handle, offset, length)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1"):
        ResultStore(max_results=0)


def test_store_keeps_no_binary_data() -> None:
    res = result(image(3_000_000), text("t"))
    store = ResultStore(max_chars=100)
    handle = store.put(res)
    assert handle is not None
    assert store.read(handle).text == "[image: image/png, 3000000 bytes]\nt"
    doc = _document(res, 0)
    assert all(len(p) < 100 for parts in doc.parts if parts for p in parts)
