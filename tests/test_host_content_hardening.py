"""Hardening of tool results as provider content (``mcp_proto.host.content``), found by
fuzzing: a valid ``CallToolResult`` never makes :func:`to_provider_content` (or the message it
builds) raise.  A ``structuredContent`` nested about 1,000 levels raised ``RecursionError``
(``json.dumps`` failed, and its fallback ``repr`` failed again); Gemini got such a value as is,
so the host's own ``json.dumps`` of the request failed instead.  Values built by hand
(circular, odd keys, objects whose ``str()`` raises) must not raise either."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_host_content import check_gemini, messages

from mcp_proto._types import CallToolResult, TextContent, UnknownContent, parse_call_tool_result
from mcp_proto.host.content._convert import (
    CONTENT_TARGETS,
    GEMINI_MAX_VALUE_DEPTH,
    MAX_UNKNOWN_BLOCK_JSON,
    to_provider_content,
)
from mcp_proto.host.content._structured import _json_text, _json_text_iterative
from mcp_proto.wire._json import loads


def nested_text(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def nested_value(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def deepest_decodable() -> int:
    """The deepest nesting the core's decoder accepts here (about 975 at the top of a
    program: the interpreter's recursion limit, less the frames already in use)."""
    levels = 1_000
    while True:
        try:
            loads(f'{{"content": [], "structuredContent": {{"a": {nested_text(levels)}}}}}')
        except RecursionError:
            levels -= 5
        else:
            return levels


def wire(structured: str, content: str = "[]") -> CallToolResult:
    """A result as the core decodes it from a server's bytes."""
    return parse_call_tool_result(loads(f'{{"content": {content}, '
                                        f'"structuredContent": {{"a": {structured}}}}}'))


def text_of(target: str, content: Any) -> str:
    """The one text a text-only result becomes for ``target``."""
    if target == "anthropic":
        (block,) = content
        return str(block["text"])
    if target.startswith("gemini"):
        return str(content["output"])
    assert isinstance(content, str)
    return content


def test_decoded_deep_structured_content_every_target() -> None:
    levels = deepest_decodable()
    assert levels > 500
    result = wire(nested_text(levels))
    out = messages(result)  # each message is JSON, and google-genai takes Gemini's
    expected = '{"a": ' + nested_text(levels) + "}"
    assert out["openai"]["content"] == expected
    assert out["anthropic"]["content"] == [{"type": "text", "text": expected}]
    pc = to_provider_content(result, "gemini", name="f")
    assert pc.content == {"output": expected}
    assert any(f"deeper than {GEMINI_MAX_VALUE_DEPTH}" in n for n in pc.notes)


@pytest.mark.parametrize("target", CONTENT_TARGETS)
@pytest.mark.parametrize("levels", [1_000, 5_000])
def test_deeper_than_the_decoder_built_by_hand(target: str, levels: int) -> None:
    """Deeper than json.dumps can go: written without recursion, complete."""
    result = CallToolResult(content=(), structured_content={"a": nested_value(levels)})
    pc = to_provider_content(result, target, name="f")
    assert text_of(target, pc.content) == '{"a": ' + nested_text(levels) + "}"
    json.dumps(pc.message("call_1"))


def test_gemini_value_depth_limit() -> None:
    """Up to GEMINI_MAX_VALUE_DEPTH levels the response holds the value; one more, its
    JSON text (protobuf parsers stop at 100 nested messages)."""
    inside = wire(nested_text(GEMINI_MAX_VALUE_DEPTH - 1))  # plus the {"a": ...} level
    pc = to_provider_content(inside, "gemini", name="f")
    assert pc.content == {"output": {"a": nested_value(GEMINI_MAX_VALUE_DEPTH - 1)}}
    check_gemini(pc.message("call_1"))
    beyond = wire(nested_text(GEMINI_MAX_VALUE_DEPTH))
    pc = to_provider_content(beyond, "gemini", name="f")
    assert pc.content == {"output": '{"a": ' + nested_text(GEMINI_MAX_VALUE_DEPTH) + "}"}
    check_gemini(pc.message("call_1"))


def test_gemini_deep_value_keeps_the_other_text() -> None:
    result = wire(nested_text(100), content='[{"type": "text", "text": "done"}]')
    pc = to_provider_content(result, "gemini-openapi", name="f")
    assert pc.content == {"output": '{"a": ' + nested_text(100) + "}", "text": "done"}


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def circular() -> dict[str, Any]:
    loop: dict[str, Any] = {"name": "loop"}
    loop["self"] = loop
    loop["list"] = [loop, 1]
    return loop


HAND_BUILT: dict[str, Any] = {
    "circular": circular(),
    "odd keys": {(1, 2): "tuple", 3: "int", None: "none", 1.5: "float", True: "bool"},
    "unprintable": {"x": Unprintable()},
    "too many digits": {"n": 10 ** 5000},
    "a set": {"s": {1, 2}},
}


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
@pytest.mark.parametrize("target", CONTENT_TARGETS)
def test_hand_built_structured_content_never_raises(name: str, target: str) -> None:
    """Text targets get JSON text; Gemini, which took the value as it was (so the host's own
    json.dumps of the request raised), gets that JSON text too: every message is JSON."""
    result = CallToolResult(content=(), structured_content=HAND_BUILT[name])
    pc = to_provider_content(result, target, name="f")
    json.loads(text_of(target, pc.content))  # JSON text
    json.dumps(pc.message("call_1"), allow_nan=False)
    if target.startswith("gemini"):
        check_gemini(pc.message("call_1"))
        assert any("not plain JSON" in n for n in pc.notes)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_gemini_non_finite_numbers_from_the_wire(number: str) -> None:
    """The core's decoder takes NaN and Infinity (as json.loads does): Gemini's Struct cannot
    hold them, so the value goes as text (which says NaN) instead of a request that is not
    JSON."""
    result = wire(f"[1, {number}]")
    pc = to_provider_content(result, "gemini", name="f")
    assert isinstance(pc.content["output"], str)
    json.dumps(pc.message("call_1"), allow_nan=False)
    assert to_provider_content(wire("[1, 2.5]"), "gemini", name="f").content == {
        "output": {"a": [1, 2.5]}}


def test_hand_built_renderings() -> None:
    assert _json_text(circular()) == ('{"name": "loop", "self": "[circular reference]", '
                                      '"list": ["[circular reference]", 1]}')
    assert _json_text(HAND_BUILT["odd keys"]) == (
        '{"(1, 2)": "tuple", "3": "int", "null": "none", "1.5": "float", "true": "bool"}')
    assert _json_text(HAND_BUILT["unprintable"]) == '{"x": "[value that cannot be written]"}'
    assert _json_text(HAND_BUILT["too many digits"]) == '{"n": "[value that cannot be written]"}'
    shared = [1]
    assert _json_text({"a": shared, "b": shared}) == '{"a": [1], "b": [1]}'  # not a cycle


@pytest.mark.parametrize("raw", [
    {"type": "widget", "data": nested_value(2_000)},
    {"type": "widget", "loop": circular()},
    {"type": "widget", (1, 2): "tuple key"},
], ids=["deep", "circular", "tuple-key"])
@pytest.mark.parametrize("target", CONTENT_TARGETS)
def test_unknown_block_never_raises(raw: dict[str, Any], target: str) -> None:
    block = UnknownContent(type="widget", raw=raw)
    pc = to_provider_content(CallToolResult(content=(block,)), target, name="f")
    text = text_of(target, pc.content)
    assert text.startswith("[widget content")
    if len(_json_text(raw)) > MAX_UNKNOWN_BLOCK_JSON:
        assert "characters of JSON" in text


@pytest.mark.parametrize("target", CONTENT_TARGETS)
def test_deep_json_text_block_never_raises(target: str) -> None:
    """A text block holding JSON deeper than the decoder is compared (for the duplicate of
    structuredContent) without raising."""
    deep = nested_text(3_000)
    result = CallToolResult(content=(TextContent(text=deep),), structured_content={"a": 1})
    pc = to_provider_content(result, target, name="f")
    assert deep in json.dumps(pc.content)


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
              st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=5), children, max_size=4)),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_iterative_text_is_json_dumps(value: Any) -> None:
    assert _json_text_iterative(value) == json.dumps(value, ensure_ascii=False, default=str)
