"""Fuzz harness for :func:`mcp_proto.host.to_provider_content` (tool results as provider
content).

``check(data)`` builds a ``tools/call`` result and parses it with the core's own
``parse_call_tool_result`` (a result it refuses is skipped: the session never hands it to the
host).  The data is read two ways, chosen by its first byte:

- **raw** (``{``, ``[`` or whitespace first): the data is the result's JSON;
- **structured** (otherwise): the result is drawn from the data: text blocks (some holding
  JSON equal to ``structuredContent``, some empty), images, audio and embedded blobs with
  every MIME type the tables name and others, valid, invalid, empty and padded base64, many
  of them (past the providers' per-request counts), resource links, text resources, blocks
  of unknown types (small and over :data:`MAX_UNKNOWN_BLOCK_JSON`), annotations and
  ``_meta``; ``structuredContent`` of any JSON value, nested up to 3000 levels (built in
  Python: the core's decoder stops near 1000, a result built by hand need not); ``isError``.

Then, for every target of :data:`CONTENT_TARGETS` (with and without a function name):

Properties (any violation raises AssertionError):

- ``to_provider_content`` never raises for a valid result ("whatever a provider cannot take
  becomes text"); only ``LocalProtocolError`` for a Gemini target without ``name``;
  ``ProviderContent.message`` raises nothing (with a name);
- the output is JSON (``json.dumps`` of the message works) whenever the result's nesting is
  at most :data:`JSON_SAFE_DEPTH`; ``raw`` is the result as received, ``is_error`` its flag;
- shapes: Anthropic a non-empty list of ``text`` (never empty), ``image`` and ``document``
  blocks; OpenAI Chat a string; Responses a string or ``input_text`` / ``input_image`` /
  ``input_file`` items; Gemini ``{"output"|"error": ...}`` (by ``isError``), inline parts
  beside it;
- bounds: native media are standard base64 of accepted types, at most the provider's count
  (Anthropic 100, Responses 500) and bytes (32 MiB, 50 MiB, 20 MiB), Anthropic images at most
  5 MiB each; every media block that did not go natively is named in a note;
- ``structuredContent`` is in the output once: as the Gemini value, else as a JSON text
  unless a text block already holds it.

Run: ``python fuzz/fuzz_content.py /tmp/fz/content fuzz/corpus/content
-dict=fuzz/jsonrpc.dict``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto import LocalProtocolError, RemoteProtocolError
from mcp_proto._types import CallToolResult, TextContent, parse_call_tool_result
from mcp_proto.host import CONTENT_TARGETS, ProviderContent, to_provider_content
from mcp_proto.host.content._convert import (
    ANTHROPIC_IMAGE_TYPES,
    ANTHROPIC_MAX_IMAGE_BASE64,
    ANTHROPIC_MAX_IMAGES,
    ANTHROPIC_MAX_REQUEST_BYTES,
    GEMINI_INLINE_TYPES,
    GEMINI_MAX_INLINE_BYTES,
    MAX_UNKNOWN_BLOCK_JSON,
    OPENAI_IMAGE_TYPES,
    OPENAI_MAX_IMAGES,
    OPENAI_MAX_REQUEST_BYTES,
    base64_size,
)

#: Nesting (containers) up to which the output must be encodable by ``json.dumps``: the
#: message wraps the result a few levels deeper, and ``json`` stops near 1000.
JSON_SAFE_DEPTH = 900
NESTING = (3, 60, 300, 990, 1000, 1200, 3000)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

# -- drawing a result -------------------------------------------------------------------------

MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml",
              "image/heic", "IMAGE/PNG; charset=x", "audio/wav", "audio/mpeg", "audio/x-odd",
              "application/pdf", "application/json", "text/plain", "text/csv",
              "application/octet-stream", "", " ", "\u00e9/x")
DATA = ("iVBORw0KGgo=", "AAAA", "", "AA==", "A===", "not base64!", "AA\nAA", "-_-_",
        "QUJD", "a" * 4096, "\ud800AAA")
URIS = ("file:///tmp/x.png", "https://h.example/a/b?q=1#f", "", "x", "file:///dir/",
        "\u00e9")
TEXTS = ("hello", "", "{}", '{"a": 1}', "[1, 2]", "true", "1", '"s"', "null",
         '{"a": 1.0}', "\ud800", "x" * 300)
SCALARS: tuple[Any, ...] = (None, True, False, 0, 1, 1.0, -2.5, 10**30, "s", "", "\u00e9",
                            "\ud800")


def draw_json(ch: Choices, depth: int = 0) -> Any:
    k = ch.below(10)
    if k <= 3 or depth > 3:
        return ch.pick(SCALARS)
    if k <= 6:
        return [draw_json(ch, depth + 1) for _ in range(ch.below(4))]
    return {ch.pick(("a", "b", "type", "")): draw_json(ch, depth + 1) for _ in range(ch.below(4))}


def nested(ch: Choices, levels: int) -> Any:
    value: Any = draw_json(ch, 3)
    for _ in range(levels):
        value = [value] if ch.below(2) else {"k": value}
    return value


def _annotate(ch: Choices, block: dict[str, Any]) -> dict[str, Any]:
    if ch.chance(6):
        block["annotations"] = ch.pick(({"audience": ["user"]}, {"priority": 0.5}, []))
    if ch.chance(6):
        block["_meta"] = ch.pick(({"k": "v"}, {}, 5))
    return block


def draw_block(ch: Choices, structured: Any) -> dict[str, Any]:
    k = ch.below(12)
    if k <= 2:
        text = ch.pick(TEXTS)
        if k == 0 and structured is not None:
            try:
                text = json.dumps(structured, indent=ch.pick((None, 2)))
            except (ValueError, RecursionError):
                pass
        return _annotate(ch, {"type": "text", "text": text})
    if k <= 5:
        kind = ch.pick(("image", "audio"))
        return _annotate(ch, {"type": kind, "data": ch.pick(DATA),
                              "mimeType": ch.pick(MIME_TYPES)})
    if k == 6:
        link: dict[str, Any] = {"type": "resource_link", "uri": ch.pick(URIS),
                                "name": ch.pick(("n", "", "x.png"))}
        for key, values in (("title", ("t", "n")), ("description", ("d", "")),
                            ("mimeType", MIME_TYPES), ("size", (0, 12345, -1))):
            if ch.chance(2):
                link[key] = ch.pick(values)
        return _annotate(ch, link)
    if k <= 8:
        res: dict[str, Any] = {"uri": ch.pick(URIS)}
        if ch.chance(2):
            res["mimeType"] = ch.pick(MIME_TYPES)
        if k == 7:
            res["text"] = ch.pick(TEXTS)
        else:
            res["blob"] = ch.pick(DATA)
        return _annotate(ch, {"type": "resource", "resource": res})
    if k == 9:
        return {"type": ch.pick(("video", "x-custom", "")), "payload": ch.pick(
            ("p", "y" * (MAX_UNKNOWN_BLOCK_JSON + 10)))}
    if k == 10 and ch.chance(3):  # malformed: refused (the result is skipped) or kept
        return ch.pick(({"type": "image"}, {"type": "text", "text": 5}, {"type": 5}, {},
                        {"type": "resource", "resource": {"uri": "u"}}))
    return _annotate(ch, {"type": "text", "text": ""})


def draw_result(ch: Choices) -> tuple[dict[str, Any], int]:
    """A result and its nesting (containers)."""
    result: dict[str, Any] = {}
    depth = 0
    k = ch.below(8)
    if k == 0:
        levels = ch.pick(NESTING)
        result["structuredContent"] = nested(ch, levels)
        depth = levels
    elif k <= 3:
        result["structuredContent"] = draw_json(ch)
    blocks = [draw_block(ch, result.get("structuredContent")) for _ in range(ch.below(6))]
    if ch.chance(32):  # many media blocks: past the per-request counts
        many = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": ch.pick(
            ("image/png", "application/pdf"))}
        blocks.extend([many] * ch.pick((ANTHROPIC_MAX_IMAGES + 1, OPENAI_MAX_IMAGES + 1)))
    if blocks or not ch.chance(4):
        result["content"] = blocks
    if ch.chance(3):
        result["isError"] = ch.pick((True, False, "yes"))
    if ch.chance(6):
        result["_meta"] = {"progressToken": 1}
    return result, depth + 4


# -- the properties ---------------------------------------------------------------------------


def _depth(value: Any) -> int:
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, d = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in item)
    return deepest


def _valid_media(data: Any, what: str) -> int:
    assert isinstance(data, str) and base64_size(data), f"{what}: data is not base64"
    return len(data)


def _json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, ``true`` is not ``1``."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
            if x is not y:
                return False
        elif (isinstance(x, int | float) and isinstance(y, int | float)) or (
                isinstance(x, str) and isinstance(y, str)):
            if x != y:
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def _json_equal_text(text: str, value: Any) -> bool:
    try:
        return _json_equal(json.loads(text), value)
    except (ValueError, RecursionError):
        return False


def check_anthropic(pc: ProviderContent) -> None:
    content = pc.content
    assert isinstance(content, list) and content, "Anthropic content is a non-empty list"
    images = size = 0
    for block in content:
        kind = block.get("type")
        assert kind in ("text", "image", "document"), f"Anthropic block {kind!r}"
        if kind == "text":
            assert isinstance(block["text"], str) and block["text"], "an empty text block"
            continue
        source = block["source"]
        assert source["type"] == "base64"
        n = _valid_media(source["data"], "Anthropic")
        size += n
        if kind == "image":
            images += 1
            assert source["media_type"] in ANTHROPIC_IMAGE_TYPES, source["media_type"]
            assert n <= ANTHROPIC_MAX_IMAGE_BASE64
        else:
            assert source["media_type"] == "application/pdf", source["media_type"]
    assert images <= ANTHROPIC_MAX_IMAGES, f"{images} images"
    assert size <= ANTHROPIC_MAX_REQUEST_BYTES


def check_responses(pc: ProviderContent) -> None:
    content = pc.content
    if isinstance(content, str):
        return
    assert isinstance(content, list), "Responses output is a string or a list"
    media = size = 0
    for item in content:
        kind = item.get("type")
        assert kind in ("input_text", "input_image", "input_file"), f"Responses item {kind!r}"
        if kind == "input_text":
            assert isinstance(item["text"], str)
            continue
        url = item["image_url"] if kind == "input_image" else item["file_data"]
        head, _, data = url.partition(";base64,")
        assert head.startswith("data:"), url[:60]
        if kind == "input_image":
            assert head[5:] in OPENAI_IMAGE_TYPES, head
        else:
            assert isinstance(item["filename"], str) and item["filename"]
        media += 1
        size += _valid_media(data, "Responses")
    assert media <= OPENAI_MAX_IMAGES, f"{media} media items"
    assert size <= OPENAI_MAX_REQUEST_BYTES


def check_gemini(pc: ProviderContent, result: CallToolResult) -> None:
    content = pc.content
    key = "error" if result.is_error else "output"
    assert isinstance(content, dict) and key in content, f"Gemini response keys {list(content)}"
    assert set(content) <= {key, "text"}, f"Gemini response keys {list(content)}"
    if result.structured_content is not None:
        # the value itself, or its JSON text when it is too deep to send as a value
        assert content[key] is result.structured_content or isinstance(content[key], str), (
            "structuredContent is not the value")
    size = 0
    for part in pc.extra_parts:
        inline = part["inlineData"]
        assert inline["mimeType"] in GEMINI_INLINE_TYPES, inline["mimeType"]
        size += _valid_media(inline["data"], "Gemini")
    assert size <= GEMINI_MAX_INLINE_BYTES


def _texts(pc: ProviderContent, base: str) -> list[str]:
    content = pc.content
    if isinstance(content, str):
        return [content]
    if base == "anthropic":
        return [b["text"] for b in content if b.get("type") == "text"]
    if base == "openai-responses":
        return [i["text"] for i in content if i.get("type") == "input_text"]
    return [content.get("text", "")]


def check_structured(pc: ProviderContent, result: CallToolResult, base: str,
                     depth: int) -> None:
    sc = result.structured_content
    if sc is None or base == "gemini" or depth > JSON_SAFE_DEPTH:
        return
    try:
        dumped = json.dumps(sc, ensure_ascii=False)
    except (ValueError, RecursionError):
        return
    held = any(isinstance(b, TextContent) and _json_equal_text(b.text, sc)
               for b in result.content)
    texts = "\n".join(_texts(pc, base))
    if not held:
        assert dumped in texts, "structuredContent is not in the output"


def convert(result: CallToolResult, target: str, name: str | None) -> ProviderContent | None:
    try:
        return to_provider_content(result, target, name=name)
    except LocalProtocolError:
        assert target.startswith("gemini") and not name, f"LocalProtocolError for {target}"
        return None
    except Exception as exc:
        escaped(f"to_provider_content({target!r})", exc)


def check_result(result: CallToolResult, depth: int) -> None:
    for target in CONTENT_TARGETS:
        base = {"openai-strict": "openai", "openai-responses-strict": "openai-responses",
                "gemini-openapi": "gemini"}.get(target, target)
        convert(result, target, None)
        pc = convert(result, target, "fn")
        assert pc is not None
        assert pc.target == target and pc.is_error == result.is_error, "target or is_error"
        assert pc.raw is result.raw or pc.raw == result.raw, "raw is not the result received"
        assert all(isinstance(n, str) for n in pc.notes)
        try:
            message = pc.message("call-1")
        except Exception as exc:
            escaped(f"ProviderContent.message ({target})", exc)
        if depth <= JSON_SAFE_DEPTH:
            try:
                json.dumps(message, ensure_ascii=False)
            except (ValueError, RecursionError, TypeError) as exc:
                raise AssertionError(f"{target} message is not JSON: {exc}"[:300]) from exc
        if base == "anthropic":
            check_anthropic(pc)
        elif base == "openai":
            assert isinstance(pc.content, str), "OpenAI Chat content is a string"
        elif base == "openai-responses":
            check_responses(pc)
        else:
            check_gemini(pc, result)
        check_structured(pc, result, base, depth)


def check(data: bytes) -> None:
    if data[:1] in (b"{", b"[", b" ", b"\n", b"\t"):
        try:
            wire = json.loads(data)
        except (ValueError, RecursionError):
            return
        depth = _depth(wire)
    else:
        wire, depth = draw_result(Choices(data[1:]))
    if not isinstance(wire, dict):
        return
    try:
        result = parse_call_tool_result(wire)
    except RemoteProtocolError:
        return
    except Exception as exc:
        escaped("parse_call_tool_result", exc)
    check_result(result, depth)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
