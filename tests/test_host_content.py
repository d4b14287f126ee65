"""Tool results as provider content (``mcp_proto.host.content``).

Every case is a raw ``tools/call`` result as a server sends it, parsed with
``parse_call_tool_result``; each target's output is compared with the exact wire shape, and
every Gemini output is validated by ``google-genai``'s own types.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from google.genai import types as genai
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._errors import LocalProtocolError
from mcp_proto._types import (
    CallToolResult,
    ImageContent,
    TextContent,
    parse_call_tool_result,
)
from mcp_proto.host.content._convert import (
    ANTHROPIC_EMPTY_TEXT,
    ANTHROPIC_MAX_IMAGE_BASE64,
    ANTHROPIC_MAX_IMAGES,
    ANTHROPIC_MAX_REQUEST_BYTES,
    CONTENT_TARGETS,
    GEMINI_MAX_INLINE_BYTES,
    MAX_UNKNOWN_BLOCK_JSON,
    ProviderContent,
    base64_size,
    to_provider_content,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(17)).decode()
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)).decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n").decode()

VARIANTS = {"openai-strict": "openai", "openai-responses-strict": "openai-responses",
            "gemini-openapi": "gemini"}


def result(*content: dict[str, Any], **extra: Any) -> CallToolResult:
    return parse_call_tool_result({"content": list(content), **extra})


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def convert_all(res: CallToolResult) -> dict[str, ProviderContent]:
    return {t: to_provider_content(res, t, name="get_weather") for t in CONTENT_TARGETS}


def messages(res: CallToolResult, call_id: str = "call_1") -> dict[str, Any]:
    """Each base target's complete message, checked to be JSON, identical for the variants,
    and (Gemini) accepted by google-genai."""
    out: dict[str, Any] = {}
    for target, pc in convert_all(res).items():
        msg: Any = pc.message(call_id)
        json.dumps(msg)
        assert pc.raw is res.raw
        assert pc.is_error is res.is_error
        if target in VARIANTS:
            assert msg == out[VARIANTS[target]], target
        else:
            out[target] = msg
        if target.startswith("gemini"):
            check_gemini(msg)
    return out


def check_gemini(msg: dict[str, Any] | list[dict[str, Any]]) -> None:
    parts = msg if isinstance(msg, list) else [msg]
    assert "functionResponse" in parts[0]
    genai.FunctionResponse.model_validate(parts[0]["functionResponse"])
    for part in parts:
        genai.Part.model_validate(part)
    assert all("inlineData" in p for p in parts[1:])


def anthropic(content: list[dict[str, Any]], is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": "call_1", "content": content,
            "is_error": is_error}


def chat(content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "call_1", "content": content}


def responses(output: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": "call_1", "output": output}


def gemini(response: dict[str, Any], *inline: tuple[str, str]) -> Any:
    part = {"functionResponse": {"name": "get_weather", "response": response, "id": "call_1"}}
    if not inline:
        return part
    return [part, *({"inlineData": {"mimeType": m, "data": d}} for m, d in inline)]


def a_text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def r_text(t: str) -> dict[str, Any]:
    return {"type": "input_text", "text": t}


# -- text and structuredContent ---------------------------------------------------------------


def test_text_only() -> None:
    res = result(text("Sunny, 21 °C"), text("Wind 3 m/s"))
    assert messages(res) == {
        "anthropic": anthropic([a_text("Sunny, 21 °C"), a_text("Wind 3 m/s")]),
        "openai": chat("Sunny, 21 °C\nWind 3 m/s"),
        "openai-responses": responses("Sunny, 21 °C\nWind 3 m/s"),
        "gemini": gemini({"output": "Sunny, 21 °C\nWind 3 m/s"}),
    }
    assert all(not pc.notes and pc.extra_parts == () for pc in convert_all(res).values())


def test_structured_equal_to_a_text_block_is_included_once() -> None:
    """The server sent the JSON twice (as the spec recommends): once is enough.  Equality is
    on parsed JSON: key order and spacing differ here."""
    structured = {"temperature": 21.5, "conditions": ["sunny"], "alert": None}
    res = result(text('{"conditions": ["sunny"],\n "alert": null, "temperature": 21.5}'),
                 structuredContent=structured)
    body = '{"conditions": ["sunny"],\n "alert": null, "temperature": 21.5}'
    assert messages(res) == {
        "anthropic": anthropic([a_text(body)]),
        "openai": chat(body),
        "openai-responses": responses(body),
        "gemini": gemini({"output": structured}),
    }
    assert any("left out" in n for n in to_provider_content(res, "gemini", name="f").notes)


def test_structured_different_from_the_text_is_added_as_json() -> None:
    structured = {"temperature": 21.5}
    res = result(text("Sunny"), structuredContent=structured)
    assert messages(res) == {
        "anthropic": anthropic([a_text("Sunny"), a_text('{"temperature": 21.5}')]),
        "openai": chat('Sunny\n{"temperature": 21.5}'),
        "openai-responses": responses('Sunny\n{"temperature": 21.5}'),
        "gemini": gemini({"output": structured, "text": "Sunny"}),
    }
    assert "structuredContent added as JSON text" in \
        to_provider_content(res, "anthropic").notes


def test_structured_equality_keeps_json_types_apart() -> None:
    """``true`` and ``1`` are equal in Python, not in JSON: both are kept."""
    res = result(text('{"ok": 1}'), structuredContent={"ok": True})
    assert messages(res)["openai"] == chat('{"ok": 1}\n{"ok": true}')
    res = result(text('{"n": 1.0}'), structuredContent={"n": 1})
    assert messages(res)["openai"] == chat('{"n": 1.0}')


def test_structured_only() -> None:
    res = parse_call_tool_result({"structuredContent": {"rows": [1, 2]}})
    assert messages(res) == {
        "anthropic": anthropic([a_text('{"rows": [1, 2]}')]),
        "openai": chat('{"rows": [1, 2]}'),
        "openai-responses": responses('{"rows": [1, 2]}'),
        "gemini": gemini({"output": {"rows": [1, 2]}}),
    }


def test_structured_non_ascii_is_not_escaped() -> None:
    res = result(structuredContent={"city": "Zürich"})
    assert messages(res)["openai"] == chat('{"city": "Zürich"}')


# -- media ------------------------------------------------------------------------------------


def test_png_image() -> None:
    res = result(text("Radar:"), {"type": "image", "data": PNG, "mimeType": "image/png"})
    size = base64_size(PNG)
    assert messages(res) == {
        "anthropic": anthropic([a_text("Radar:"), {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": PNG}}]),
        "openai": chat(f"Radar:\n[image: image/png, {size} bytes]"),
        "openai-responses": responses([r_text("Radar:"), {
            "type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]),
        "gemini": gemini({"output": "Radar:"}, ("image/png", PNG)),
    }
    notes = to_provider_content(res, "openai").notes
    assert notes == ("block 1: image (image/png) sent as text: OpenAI Chat takes no image in a "
                     "tool result",)


def test_svg_image_is_text_where_refused() -> None:
    res = result({"type": "image", "data": SVG, "mimeType": "image/svg+xml"})
    placeholder = f"[image: image/svg+xml, {base64_size(SVG)} bytes]"
    assert messages(res) == {
        "anthropic": anthropic([a_text(placeholder)]),
        "openai": chat(placeholder),
        "openai-responses": responses(placeholder),
        "gemini": gemini({"output": placeholder}),
    }
    assert "not an image or document type Anthropic accepts" in \
        to_provider_content(res, "anthropic").notes[0]


def test_mime_parameters_and_case_are_normalised() -> None:
    res = result({"type": "image", "data": PNG, "mimeType": "Image/PNG; foo=bar"})
    assert messages(res)["anthropic"]["content"][0]["source"]["media_type"] == "image/png"


def test_audio() -> None:
    res = result({"type": "audio", "data": WAV, "mimeType": "audio/wav"})
    placeholder = f"[audio: audio/wav, {base64_size(WAV)} bytes]"
    assert messages(res) == {
        "anthropic": anthropic([a_text(placeholder)]),
        "openai": chat(placeholder),
        "openai-responses": responses(placeholder),
        "gemini": gemini({"output": ""}, ("audio/wav", WAV)),
    }


def test_bad_base64_is_a_text_note_never_an_error() -> None:
    bad = "not base64!"
    res = result({"type": "image", "data": bad, "mimeType": "image/png"},
                 {"type": "resource", "resource": {"uri": "file:///r.pdf", "blob": "QUJD\nREVG",
                                                   "mimeType": "application/pdf"}})
    img = "[image: image/png, not valid base64, 11 characters]"
    blob = "[resource: file:///r.pdf (application/pdf, not valid base64, 9 characters)]"
    assert messages(res) == {
        "anthropic": anthropic([a_text(img), a_text(blob)]),
        "openai": chat(f"{img}\n{blob}"),
        "openai-responses": responses(f"{img}\n{blob}"),
        "gemini": gemini({"output": f"{img}\n{blob}"}),
    }
    assert "not standard base64" in to_provider_content(res, "gemini", name="f").notes[0]


def test_empty_image_data_is_a_text_note() -> None:
    res = result({"type": "image", "data": "", "mimeType": "image/png"})
    assert messages(res)["anthropic"] == anthropic([a_text("[image: image/png, 0 bytes]")])


@pytest.mark.parametrize(("data", "size"), [
    ("", 0), ("QQ==", 1), ("QUI=", 2), ("QUJD", 3), ("QUJDRA==", 4), (PNG, 33),
    ("QQ=", None), ("Q===", None), ("QQ==QUJD", None), ("QUJD\n", None), ("QU-_", None),
    ("QUJD ", None), ("=QUJ", None),
])
def test_base64_size(data: str, size: int | None) -> None:
    assert base64_size(data) == size
    if size is not None:
        assert len(base64.b64decode(data, validate=True)) == size


# -- resources and unknown blocks -------------------------------------------------------------


def test_resource_link() -> None:
    res = result({"type": "resource_link", "uri": "file:///srv/report.csv", "name": "report",
                  "mimeType": "text/csv", "size": 2048, "description": "Daily totals"})
    t = "[resource link: file:///srv/report.csv (report, text/csv, 2048 bytes)]\nDaily totals"
    assert messages(res) == {
        "anthropic": anthropic([a_text(t)]),
        "openai": chat(t),
        "openai-responses": responses(t),
        "gemini": gemini({"output": t}),
    }


def test_resource_link_minimal() -> None:
    res = result({"type": "resource_link", "uri": "file:///x", "name": "x", "title": "The X"})
    assert messages(res)["openai"] == chat("[resource link: file:///x (x, The X)]")


def test_embedded_text_resource() -> None:
    res = result({"type": "resource", "resource": {
        "uri": "file:///etc/motd", "mimeType": "text/plain", "text": "Welcome"}})
    t = "[resource: file:///etc/motd (text/plain)]\nWelcome"
    assert messages(res) == {
        "anthropic": anthropic([a_text(t)]),
        "openai": chat(t),
        "openai-responses": responses(t),
        "gemini": gemini({"output": t}),
    }
    res = result({"type": "resource", "resource": {"uri": "mem://a", "text": "A"}})
    assert messages(res)["openai"] == chat("[resource: mem://a]\nA")


def test_embedded_pdf_blob() -> None:
    res = result(text("Invoice attached"), {"type": "resource", "resource": {
        "uri": "file:///invoices/2024-07.pdf", "mimeType": "application/pdf", "blob": PDF}})
    placeholder = f"[resource: file:///invoices/2024-07.pdf (application/pdf, " \
        f"{base64_size(PDF)} bytes)]"
    assert messages(res) == {
        "anthropic": anthropic([a_text("Invoice attached"), {
            "type": "document", "title": "file:///invoices/2024-07.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}]),
        "openai": chat(f"Invoice attached\n{placeholder}"),
        "openai-responses": responses([r_text("Invoice attached"), {
            "type": "input_file", "filename": "2024-07.pdf",
            "file_data": f"data:application/pdf;base64,{PDF}"}]),
        "gemini": gemini({"output": "Invoice attached"}, ("application/pdf", PDF)),
    }


def test_embedded_image_blob_goes_as_an_image() -> None:
    res = result({"type": "resource", "resource": {
        "uri": "file:///a.png", "mimeType": "image/png", "blob": PNG}})
    msgs = messages(res)
    assert msgs["anthropic"]["content"] == [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG}}]
    assert msgs["openai-responses"]["output"] == [
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]


def test_embedded_csv_blob_is_a_file_for_responses_only() -> None:
    csv = base64.b64encode(b"a,b\n1,2\n").decode()
    res = result({"type": "resource", "resource": {
        "uri": "mem://exports/latest?x=1", "mimeType": "text/csv", "blob": csv}})
    msgs = messages(res)
    assert msgs["openai-responses"]["output"] == [{
        "type": "input_file", "filename": "latest.csv", "file_data": f"data:text/csv;base64,{csv}"}]
    placeholder = "[resource: mem://exports/latest?x=1 (text/csv, 8 bytes)]"
    assert msgs["anthropic"]["content"] == [a_text(placeholder)]
    assert msgs["gemini"] == gemini({"output": placeholder})


def test_untyped_blob_is_a_placeholder_everywhere() -> None:
    res = result({"type": "resource", "resource": {"uri": "mem://b", "blob": "AAAA"}})
    placeholder = "[resource: mem://b (unknown type, 3 bytes)]"
    msgs = messages(res)
    assert msgs["openai-responses"] == responses(placeholder)
    assert msgs["anthropic"] == anthropic([a_text(placeholder)])
    assert msgs["gemini"] == gemini({"output": placeholder})


def test_unknown_block_type() -> None:
    block = {"type": "video", "uri": "https://example.com/v.mp4", "mimeType": "video/mp4"}
    res = result(block)
    t = "[video content]\n" + json.dumps(block)
    assert messages(res) == {
        "anthropic": anthropic([a_text(t)]),
        "openai": chat(t),
        "openai-responses": responses(t),
        "gemini": gemini({"output": t}),
    }
    assert to_provider_content(res, "openai").notes == (
        "block 0: unknown block type 'video' sent as text",)


def test_large_unknown_block_is_named_not_dumped() -> None:
    block = {"type": "hologram", "data": "A" * MAX_UNKNOWN_BLOCK_JSON}
    size = len(json.dumps(block))
    assert messages(result(block))["openai"] == chat(f"[hologram content, {size} characters "
                                                     "of JSON]")


# -- isError, empty, large --------------------------------------------------------------------


def test_is_error() -> None:
    res = result(text("City not found: Atlantis"), isError=True)
    assert messages(res) == {
        "anthropic": anthropic([a_text("City not found: Atlantis")], is_error=True),
        "openai": chat("City not found: Atlantis"),
        "openai-responses": responses("City not found: Atlantis"),
        "gemini": gemini({"error": "City not found: Atlantis"}),
    }
    assert all(pc.is_error for pc in convert_all(res).values())


def test_is_error_with_structured_content() -> None:
    res = result(text("bad input"), structuredContent={"code": 4}, isError=True)
    assert messages(res)["gemini"] == gemini({"error": {"code": 4}, "text": "bad input"})


def test_empty_result_is_explicit() -> None:
    res = result()
    assert messages(res) == {
        "anthropic": anthropic([a_text(ANTHROPIC_EMPTY_TEXT)]),
        "openai": chat(""),
        "openai-responses": responses(""),
        "gemini": gemini({"output": ""}),
    }


def test_empty_text_blocks_are_left_out_for_anthropic_only() -> None:
    res = result(text(""), text("x"), text(""))
    msgs = messages(res)
    assert msgs["anthropic"] == anthropic([a_text("x")])
    assert msgs["openai"] == chat("\nx\n")
    assert "2 empty text block(s) left out: Anthropic refuses them" in \
        to_provider_content(res, "anthropic").notes
    assert messages(result(text("")))["anthropic"] == anthropic([a_text(ANTHROPIC_EMPTY_TEXT)])


def test_empty_text_items_are_dropped_from_a_responses_list() -> None:
    res = result(text(""), {"type": "image", "data": PNG, "mimeType": "image/png"})
    assert messages(res)["openai-responses"]["output"] == [
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]


def test_large_text_result() -> None:
    big = "0123456789abcdef\n" * (6 * 1024 * 1024 // 17)  # about 6 MiB
    res = result(text(big), text("tail"))
    msgs = messages(res)
    assert msgs["openai"]["content"] == big + "\ntail"
    assert msgs["anthropic"]["content"] == [a_text(big), a_text("tail")]
    assert msgs["gemini"]["functionResponse"]["response"] == {"output": big + "\ntail"}


# -- limits -----------------------------------------------------------------------------------


def test_anthropic_image_over_5_mb_is_text() -> None:
    data = "AAAA" * (ANTHROPIC_MAX_IMAGE_BASE64 // 4 + 1)
    res = result({"type": "image", "data": data, "mimeType": "image/png"})
    pc = to_provider_content(res, "anthropic")
    assert pc.content == [a_text(f"[image: image/png, {len(data) // 4 * 3} bytes]")]
    assert "over Anthropic's 5 MB image limit" in pc.notes[0]
    ok = result({"type": "image", "data": data[:ANTHROPIC_MAX_IMAGE_BASE64],
                 "mimeType": "image/png"})
    assert to_provider_content(ok, "anthropic").content[0]["type"] == "image"


def test_media_budget_is_cumulative() -> None:
    """Images that fit one by one but not together: the ones past the budget become text."""
    data = "AAAA" * (ANTHROPIC_MAX_IMAGE_BASE64 // 4)       # 5 MiB of base64, shared
    fit = ANTHROPIC_MAX_REQUEST_BYTES // len(data)
    blocks = [{"type": "image", "data": data, "mimeType": "image/png"}] * (fit + 2)
    pc = to_provider_content(result(*blocks), "anthropic")
    assert [b["type"] for b in pc.content] == ["image"] * fit + ["text"] * 2
    assert sum("media size budget" in n for n in pc.notes) == 2
    g = to_provider_content(result(*blocks), "gemini", name="f")
    assert len(g.extra_parts) == GEMINI_MAX_INLINE_BYTES // len(data)


def test_anthropic_image_count_limit() -> None:
    blocks = [{"type": "image", "data": PNG, "mimeType": "image/png"}] * (ANTHROPIC_MAX_IMAGES + 1)
    pc = to_provider_content(result(*blocks), "anthropic")
    assert [b["type"] for b in pc.content] == ["image"] * ANTHROPIC_MAX_IMAGES + ["text"]
    assert "more media than one request may carry" in pc.notes[-1]


# -- API contract -----------------------------------------------------------------------------


def test_unknown_target() -> None:
    with pytest.raises(ValueError, match="unknown content target 'mistral'"):
        to_provider_content(result(), "mistral")
    with pytest.raises(ValueError, match="unknown content target"):
        ProviderContent(target="claude", content=[], is_error=False, raw={})


@pytest.mark.parametrize("target", ["gemini", "gemini-openapi"])
def test_gemini_needs_a_name(target: str) -> None:
    with pytest.raises(LocalProtocolError, match="needs name="):
        to_provider_content(result(text("x")), target)
    with pytest.raises(LocalProtocolError, match="name"):
        to_provider_content(result(text("x")), target, name="")
    pc = ProviderContent(target=target, content={"output": ""}, is_error=False, raw={})
    with pytest.raises(LocalProtocolError, match="function's name"):
        pc.message("c")


def test_gemini_without_call_id_has_no_id() -> None:
    pc = to_provider_content(result(text("x")), "gemini", name="f")
    assert pc.message("") == {"functionResponse": {"name": "f", "response": {"output": "x"}}}


def test_raw_is_kept_or_rebuilt() -> None:
    raw = {"content": [text("x")], "isError": False, "_meta": {"k": 1}, "futureField": 7}
    res = parse_call_tool_result(raw)
    assert to_provider_content(res, "openai").raw is raw
    source = {
        "content": [
            {"type": "text", "text": "t", "annotations": {"audience": ["user"]}},
            {"type": "image", "data": PNG, "mimeType": "image/png", "_meta": {"m": 1}},
            {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///x", "name": "x", "title": "X",
             "description": "d", "mimeType": "text/plain", "size": 3},
            {"type": "resource", "resource": {"uri": "mem://t", "text": "t",
                                              "mimeType": "text/plain", "_meta": {"a": 1}}},
            {"type": "resource", "resource": {"uri": "mem://b", "blob": PDF}},
            {"type": "future", "x": 1},
        ],
        "structuredContent": {"a": 1}, "isError": True, "_meta": {"z": 0},
    }
    parsed = parse_call_tool_result(source)
    by_hand = CallToolResult(content=parsed.content, structured_content={"a": 1},
                             is_error=True, meta={"z": 0})
    assert to_provider_content(by_hand, "openai").raw == source
    minimal = CallToolResult(content=(TextContent(text="x"),))
    assert to_provider_content(minimal, "openai").raw == {"content": [text("x")]}


def test_hand_built_result_converts_like_a_parsed_one() -> None:
    by_hand = CallToolResult(content=(ImageContent(data=PNG, mime_type="image/png"),))
    parsed = result({"type": "image", "data": PNG, "mimeType": "image/png"})
    for target in CONTENT_TARGETS:
        a = to_provider_content(by_hand, target, name="f")
        b = to_provider_content(parsed, target, name="f")
        assert (a.content, a.extra_parts, a.notes) == (b.content, b.extra_parts, b.notes)


# -- property: any sequence of blocks ---------------------------------------------------------

STRUCTURED = {"temp": 21, "ok": True, "tags": ["a", "b"]}
STRUCTURED_TEXT = json.dumps(STRUCTURED)

_b64 = st.binary(max_size=48).map(lambda b: base64.b64encode(b).decode())
_data = st.one_of(_b64, st.sampled_from(["", "%%%", "QQ=", "QUJD\n"]))
_mime = st.sampled_from(["image/png", "image/jpeg", "image/svg+xml", "image/gif", "audio/wav",
                         "audio/mpeg", "application/pdf", "text/csv", "application/zip",
                         "IMAGE/WEBP; q=1"])
_line = st.text(st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]),
                max_size=20)
_blocks = st.one_of(
    _line.map(text),
    st.just(text(STRUCTURED_TEXT)),
    st.builds(lambda d, m: {"type": "image", "data": d, "mimeType": m}, _data, _mime),
    st.builds(lambda d, m: {"type": "audio", "data": d, "mimeType": m}, _data, _mime),
    st.builds(lambda n, m: {"type": "resource_link", "uri": f"file:///{n}", "name": n,
                            **({"mimeType": m} if m else {})},
              _line, st.none() | _mime),
    st.builds(lambda t: {"type": "resource", "resource": {"uri": "mem://t", "text": "r:" + t}},
              _line),
    st.builds(lambda d, m: {"type": "resource", "resource": {"uri": "mem://dir/f", "blob": d,
                                                             "mimeType": m}}, _data, _mime),
    st.builds(lambda k: {"type": k, "payload": [1, "x"]},
              st.sampled_from(["video", "widget", "x-custom"])),
)


def _texts(target: str, msg: Any) -> list[str]:
    """Every line of text the model sees for a non-Gemini target."""
    if target == "anthropic":
        chunks = [b["text"] for b in msg["content"] if b["type"] == "text"]
    elif target == "openai":
        chunks = [msg["content"]]
    else:
        out = msg["output"]
        chunks = [out] if isinstance(out, str) else \
            [i["text"] for i in out if i["type"] == "input_text"]
    return [line for chunk in chunks for line in chunk.split("\n")]


def _equal_lines(lines: list[str]) -> int:
    count = 0
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        count += value == STRUCTURED and isinstance(value, dict)
    return count


@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(_blocks, max_size=8), structured=st.booleans(), is_error=st.booleans())
def test_any_blocks_convert_for_every_target(blocks: list[dict[str, Any]], structured: bool,
                                             is_error: bool) -> None:
    raw: dict[str, Any] = {"content": blocks, "isError": is_error}
    if structured:
        raw["structuredContent"] = STRUCTURED
    res = parse_call_tool_result(raw)
    in_text = sum(b == text(STRUCTURED_TEXT) for b in blocks)
    for target in CONTENT_TARGETS:
        pc = to_provider_content(res, target, name="tool")
        msg: Any = pc.message("id1")
        json.loads(json.dumps(msg))
        assert pc.is_error is is_error and pc.raw is raw
        if target.startswith("gemini"):
            check_gemini(msg)
            response = (msg[0] if isinstance(msg, list) else msg)["functionResponse"]["response"]
            key = "error" if is_error else "output"
            assert set(response) <= {key, "text"} and key in response
            if structured:
                assert response[key] == STRUCTURED
                lines = response.get("text", "").split("\n")
                assert _equal_lines(lines) == max(0, in_text - 1)
            continue
        if target == "anthropic":
            assert msg["is_error"] is is_error
            assert msg["content"] and all(b.get("text", "x") for b in msg["content"])
        expected = max(1, in_text) if structured else in_text
        assert _equal_lines(_texts(VARIANTS.get(target, target), msg)) == expected, target
