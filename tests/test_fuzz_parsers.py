"""The parser fuzz harnesses (fuzz/fuzz_{config,schema,content,challenge,discovery,jwt,sse,
uri_template,redact,http_error}.py) run under hypothesis, over their seed corpora, and the
inputs that found bugs.

Each harness's ``check`` gets random bytes in its structured mode (a first byte >= 0x80:
the input is drawn from the bytes) and inputs in its raw mode built by strategies (config
files, schemas, tool results, challenge headers, tokens, event streams).  Every seed in
fuzz/corpus/<harness>/ is checked too.  The inputs that once found a parser bug are kept as
explicit examples, and each bug also has a direct test of the API.  A bug still present is
listed in its harness's KNOWN_BUGS and pinned by a strict xfail test at the end: the broad
tests tolerate it (``known_bug``) so that they keep looking for others; when it is fixed its
xfail test passes, fails as strict, and the entry goes.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fuzz import (
    fuzz_budget,
    fuzz_challenge,
    fuzz_config,
    fuzz_content,
    fuzz_discovery,
    fuzz_elicitation,
    fuzz_frontmatter,
    fuzz_http_error,
    fuzz_jwt,
    fuzz_memory_server,
    fuzz_redact,
    fuzz_schema,
    fuzz_search,
    fuzz_skills,
    fuzz_sse,
    fuzz_transcript,
    fuzz_uri_template,
)
from mcp_proto import Redactor, redact_url
from mcp_proto._types import parse_call_tool_result
from mcp_proto.auth._jwt import b64url, decode_unverified, encode_jwt
from mcp_proto.host import (
    ConfigError,
    dump_config_with_warnings,
    normalize_schema,
    parse_config,
    to_provider_content,
)
from mcp_proto.host._catalog import template_pattern
from mcp_proto.host.content._convert import CONTENT_TARGETS
from mcp_proto.http._status import body_message
from tests.test_fuzz import CORPUS, _check

HARNESSES: dict[str, ModuleType] = {
    "config": fuzz_config,
    "schema": fuzz_schema,
    "content": fuzz_content,
    "challenge": fuzz_challenge,
    "discovery": fuzz_discovery,
    "jwt": fuzz_jwt,
    "sse": fuzz_sse,
    "uri_template": fuzz_uri_template,
    "redact": fuzz_redact,
    "http_error": fuzz_http_error,
    "budget": fuzz_budget,
    "search": fuzz_search,
    "frontmatter": fuzz_frontmatter,
    "skills": fuzz_skills,
    "elicitation": fuzz_elicitation,
    "memory_server": fuzz_memory_server,
    "transcript": fuzz_transcript,
}

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: The slower harnesses (several targets or dialects per input).
FUZZ_SLOW = settings(FUZZ, max_examples=120)


def structured(max_size: int) -> st.SearchStrategy[bytes]:
    """Bytes for a harness's structured mode: a first byte >= 0x80, then the choices."""
    return st.tuples(st.integers(0x80, 0xFF), st.binary(max_size=max_size)).map(
        lambda t: bytes([t[0]]) + t[1])


_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10))
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=10,
)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


# -- the bugs the harnesses are for (found by hand and by them) ----------------------------

#: parse_config: a list as rpi ``exposure`` raised TypeError (unhashable), not ConfigError.
EXPOSURE_LIST = b'{"mcpServers":{"a":{"command":"x","exposure":[]}}}'
#: parse_config: an integer past float range in env or headers raised OverflowError.
ENV_NUMBER_OVERFLOW = (b'{"mcpServers":{"a":{"command":"x","env":{"A":1' + b"0" * 400
                       + b"}}}}")
HEADER_NUMBER_OVERFLOW = (b'{"mcpServers":{"a":{"url":"https://h.example/","headers":'
                          b'{"X-A":1' + b"0" * 400 + b"}}}}")
#: dump_config cursor -> codex of a raw integer past TOML's 64 bits raised ValueError (the
#: last byte, \r, makes the raw-mode harness force the cursor dialect).
TOML_BIG_INT = b'{"mcpServers":{"a":{"command":"x","settings":9223372036854775808}}}\r'
#: A URL server with "args" lost them silently on dump (the round trip changed it).
URL_WITH_ARGS = b'{"mcpServers":{"a":{"url":"https://h.example/","args":["x"]}}}'
#: A lone surrogate in a value made the dumped text unencodable as UTF-8.
LONE_SURROGATE = b'{"mcpServers":{"a":{"command":"x","args":["\\ud800"]}}}'
LONE_SURROGATE_ENV = (b'{"mcpServers":{"a":{"command":"x","env":{"K":"\\ud800"}},'
                      b'"b":{"url":"https://h.example/","headers":{"X":"\\udc00"}}}}')
#: to_provider_content: structuredContent nested ~1000 levels raised RecursionError (the
#: structured-mode bytes that draw 1000 and 3000 levels).
DEEP_STRUCTURED_1000 = bytes([0x80, 0, 4])
DEEP_STRUCTURED_3000 = bytes([0x80, 0, 6])
#: decode_unverified: a header of 1000 '[' raised RecursionError, not ValueError.
DEEP_JWT_HEADER = f"{b64url(b'[' * 1000)}.{b64url(b'{}')}.".encode()
#: normalize_schema anthropic: an allOf of 600 entries merged into an output so deep that
#: json.dumps raised RecursionError.
WIDE_ALL_OF = _json_bytes({"allOf": [{"properties": {"p": {"type": t}}}
                                     for t in ["string", "integer"] * 300]})


@pytest.mark.parametrize("text", [EXPOSURE_LIST, ENV_NUMBER_OVERFLOW, HEADER_NUMBER_OVERFLOW],
                         ids=["exposure-list", "env-overflow", "header-overflow"])
def test_fixed_parse_config_raises_only_config_error(text: bytes) -> None:
    try:
        parse_config(text)
    except ConfigError as exc:
        assert exc.problems
    _check(fuzz_config, text)


def test_fixed_toml_big_int_is_a_warning() -> None:
    config = parse_config(TOML_BIG_INT, dialect="cursor")
    _, warnings = dump_config_with_warnings(config, "codex")
    assert warnings and "settings" in " ".join(warnings)
    _check(fuzz_config, TOML_BIG_INT)


def test_fixed_url_server_args_are_not_lost_silently() -> None:
    try:
        config = parse_config(URL_WITH_ARGS)
    except ConfigError:
        pass  # refused: fine
    else:
        text, warnings = dump_config_with_warnings(config)
        again = parse_config(text)
        assert warnings or again == config
    _check(fuzz_config, URL_WITH_ARGS)


@pytest.mark.parametrize("text", [LONE_SURROGATE, LONE_SURROGATE_ENV], ids=["args", "env"])
def test_fixed_lone_surrogate_never_makes_an_unencodable_dump(text: bytes) -> None:
    try:
        config = parse_config(text)
    except ConfigError:
        pass
    else:
        for dialect in ("generic", "codex", "zed"):
            dump_config_with_warnings(config, dialect)[0].encode("utf-8")
    _check(fuzz_config, text)


@pytest.mark.parametrize("levels", [1000, 3000])
@pytest.mark.parametrize("target", CONTENT_TARGETS)
def test_fixed_deep_structured_content(levels: int, target: str) -> None:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    result = parse_call_tool_result({"content": [], "structuredContent": value})
    pc = to_provider_content(result, target, name="f")
    json.dumps(pc.message("call-1"))


def test_fixed_deep_jwt_header_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        decode_unverified(DEEP_JWT_HEADER.decode())
    _check(fuzz_jwt, DEEP_JWT_HEADER)


def test_fixed_encode_jwt_of_deep_claims_raises_value_error() -> None:
    """Found by fuzz_jwt: encode_jwt documents ValueError for values JSON cannot hold; claims
    nested ~1000 levels made json.dumps raise RecursionError, which escaped."""
    claims: dict[str, Any] = {"a": []}
    for _ in range(1200):
        claims = {"a": claims}
    with pytest.raises(ValueError):
        encode_jwt({}, claims, fuzz_jwt.FakeSigner())


def test_fixed_wide_all_of_output_is_json() -> None:
    schema = json.loads(WIDE_ALL_OF)
    try:
        out = normalize_schema(schema, "anthropic")
    except ValueError:  # a SchemaError: fine
        return
    json.dumps(out.schema)
    _check(fuzz_schema, WIDE_ALL_OF)


# -- the harnesses under hypothesis ------------------------------------------------------

_env_values = st.sampled_from(["plain", "${TOKEN}", "${env:TOKEN}", "$TOKEN", "${MISSING}",
                               "\ud800", "a\nb"]) | st.integers(-(10**30), 10**400) \
    | st.floats(allow_nan=False) | json_values
_entries = st.fixed_dictionaries({}, optional={
    "command": st.sampled_from(["node", "", "${A}", "x\x00"]) | st.lists(st.text(max_size=4)),
    "args": st.lists(st.sampled_from(["-y", "${TOKEN}", "\ud800"]) | st.text(max_size=4),
                     max_size=3) | json_values,
    "env": st.dictionaries(st.sampled_from(["K", "A=B", ""]), _env_values, max_size=3),
    "headers": st.dictionaries(st.sampled_from(["X-K", "Bad Name"]), _env_values, max_size=2),
    "url": st.sampled_from(["https://h.example/mcp", "https://u:p@h/", "ftp://x", "",
                            "https://h.example/sse?k=v"]),
    "type": st.sampled_from(["stdio", "http", "sse", "x"]) | json_values,
    "timeout": st.integers(-5, 10**400) | st.floats() | json_values,
    "disabled": st.booleans() | json_values, "exposure": json_values,
    "restartPolicy": st.dictionaries(st.sampled_from(["initialDelayMs", "maxDelayMs",
                                                      "maxRestartAttempts", "x"]),
                                     st.integers(-1, 10**30) | st.floats(), max_size=3),
    "settings": json_values | st.integers(2**62, 2**70),
})
config_files = st.fixed_dictionaries(
    {},
    optional={key: st.dictionaries(st.sampled_from(["a", "b", " "]), _entries | json_values,
                                   max_size=3)
              for key in ("mcpServers", "servers", "context_servers", "mcp_servers")},
).map(lambda root: json.dumps(root).encode() + b"\n")


@FUZZ_SLOW
@given(structured(400))
def test_config_structured(data: bytes) -> None:
    _check(fuzz_config, data)


@FUZZ_SLOW
@given(config_files)
@example(EXPOSURE_LIST)
@example(ENV_NUMBER_OVERFLOW)
@example(HEADER_NUMBER_OVERFLOW)
@example(TOML_BIG_INT)
@example(URL_WITH_ARGS)
@example(LONE_SURROGATE)
@example(LONE_SURROGATE_ENV)
def test_config_files(data: bytes) -> None:
    _check(fuzz_config, data)


_schemas = st.recursive(
    st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["object", "string", "integer", "null", "array"])
        | st.lists(st.sampled_from(["string", "null", "object"]), max_size=2),
        "enum": st.lists(_scalars, max_size=3), "format": st.sampled_from(["date-time", "x"]),
        "minLength": st.integers(-1, 10**30), "$ref": st.sampled_from(["#", "#/$defs/A", "x"]),
        "description": st.text(max_size=5)}),
    lambda inner: st.fixed_dictionaries({}, optional={
        "type": st.just("object"),
        "properties": st.dictionaries(st.sampled_from(["a", "b", "$ref"]), inner, max_size=3),
        "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
        "items": inner, "anyOf": st.lists(inner, max_size=3),
        "oneOf": st.lists(inner, max_size=3), "allOf": st.lists(inner, max_size=3),
        "$defs": st.dictionaries(st.sampled_from(["A", "B"]), inner, max_size=2),
        "additionalProperties": st.booleans() | inner, "not": inner}),
    max_leaves=12,
)


@FUZZ_SLOW
@given(structured(300))
def test_schema_structured(data: bytes) -> None:
    _check(fuzz_schema, data)


@FUZZ_SLOW
@given(_schemas.map(_json_bytes))
@example(WIDE_ALL_OF)
def test_schema_json(data: bytes) -> None:
    _check(fuzz_schema, data)


_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)
                           | json_values.map(json.dumps)}),
    st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]),
                           "data": st.sampled_from(["iVBORw0KGgo=", "AAAA", "", "!"])
                           | st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
                           "mimeType": st.sampled_from(["image/png", "image/svg+xml",
                                                        "audio/wav", "application/pdf", ""])}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries(
        {"uri": st.text(max_size=8)},
        optional={"text": st.text(max_size=8), "blob": st.sampled_from(["JVBERi0=", "x"]),
                  "mimeType": st.sampled_from(["application/pdf", "text/plain"])})}),
    st.fixed_dictionaries({"type": st.just("resource_link"), "uri": st.text(max_size=8),
                           "name": st.text(max_size=4)}),
    st.fixed_dictionaries({"type": st.text(max_size=6)}, optional={"x": json_values}),
)
tool_results = st.fixed_dictionaries({}, optional={
    "content": st.lists(_blocks, max_size=5), "structuredContent": json_values,
    "isError": st.booleans(), "_meta": st.dictionaries(st.text(max_size=3), json_values,
                                                       max_size=2)})


@FUZZ
@given(structured(200))
@example(DEEP_STRUCTURED_1000)
@example(DEEP_STRUCTURED_3000)
def test_content_structured(data: bytes) -> None:
    _check(fuzz_content, data)


@FUZZ
@given(tool_results.map(_json_bytes))
def test_content_results(data: bytes) -> None:
    _check(fuzz_content, data)


_challenge_piece = st.sampled_from([
    "Bearer", "DPoP", "Basic abc==", "Negotiate", ' realm="mcp"', " error=invalid_token",
    ' scope="a b"', ' resource_metadata="https://rs.example/.well-known/x"', ", ", ",", " ",
    "=", '"', '\\"', "\t", '"a, b=c"', "\u00e9", "\x01",
]) | st.text(max_size=4)
challenge_headers = st.lists(st.lists(_challenge_piece, max_size=10).map("".join),
                             max_size=3).map(lambda vs: "\n".join(vs).encode("latin-1",
                                                                               "replace"))


@FUZZ
@given(structured(200))
def test_challenge_structured(data: bytes) -> None:
    _check(fuzz_challenge, data)


@FUZZ
@given(challenge_headers.filter(lambda b: not b or b[0] < 0x80))
def test_challenge_headers(data: bytes) -> None:
    _check(fuzz_challenge, data)


_urls = st.sampled_from(["https://rs.example/mcp", "http://127.0.0.1:3000/mcp", "https://",
                         "https://u:p@rs.example/", "https://rs.example/mcp?k=v",
                         "https://[::1]/x", "https://as.example", "//rs.example/x"]) \
    | st.text(max_size=12)
discovery_lines = st.tuples(
    _urls, challenge_headers.map(lambda b: b.decode("latin-1").replace("\n", " ")),
    st.fixed_dictionaries({}, optional={"resource": _urls | json_values,
                                        "authorization_servers": st.lists(_urls, max_size=2)
                                        | json_values}).map(json.dumps),
    st.fixed_dictionaries({}, optional={"issuer": _urls | json_values,
                                        "token_endpoint": _urls}).map(json.dumps),
    st.lists(_urls, max_size=3),
).map(lambda t: "\n".join([t[0], t[1], t[2], t[3], *t[4]]).encode("latin-1", "replace"))


@FUZZ
@given(structured(200))
def test_discovery_structured(data: bytes) -> None:
    _check(fuzz_discovery, data)


@FUZZ
@given(discovery_lines.filter(lambda b: not b or b[0] < 0x80))
def test_discovery_lines(data: bytes) -> None:
    _check(fuzz_discovery, data)


jwt_tokens = st.tuples(
    json_values.map(lambda v: b64url(json.dumps(v).encode())) | st.text(max_size=6),
    st.dictionaries(st.text(max_size=4), json_values, max_size=3).map(
        lambda v: b64url(json.dumps(v).encode())),
    st.binary(max_size=8).map(b64url) | st.sampled_from(["", "a=", "+/"]),
).map(lambda t: ".".join(t).encode())


@FUZZ
@given(structured(200))
def test_jwt_structured(data: bytes) -> None:
    _check(fuzz_jwt, data)


@FUZZ
@given(jwt_tokens.filter(lambda b: not b or b[0] < 0x80))
@example(DEEP_JWT_HEADER)
def test_jwt_tokens(data: bytes) -> None:
    _check(fuzz_jwt, data)


_sse_line = st.one_of(
    st.tuples(st.sampled_from([b"data", b"event", b"id", b"retry", b"", b":", b"x"]),
              st.sampled_from([b":", b": ", b""]),
              st.binary(max_size=12) | st.sampled_from([b"123", b"\x00", b"\xff",
                                                        b"9" * 25])).map(b"".join),
    st.integers(1, 400).map(lambda n: b"data: " + b"x" * n),
)
sse_streams = st.tuples(
    st.binary(min_size=2, max_size=2),
    st.lists(st.tuples(_sse_line, st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n"])),
             max_size=12).map(lambda ls: b"".join(a + b for a, b in ls)),
    st.sampled_from([b"", b"\n", b"data: tail"]),
).map(lambda t: t[0] + (b"\xef\xbb\xbf" if t[0][0] % 5 == 0 else b"") + t[1] + t[2])


@FUZZ
@given(st.binary(max_size=600))
def test_sse_bytes(data: bytes) -> None:
    _check(fuzz_sse, data)


@FUZZ
@given(sse_streams)
def test_sse_streams(data: bytes) -> None:
    _check(fuzz_sse, data)


_template_piece = st.sampled_from([
    "{a}", "{+path}", "{#frag}", "{.ext}", "{/seg,id}", "{;m}", "{?q,page}", "{&x}", "{a:3}",
    "{list*}", "{}", "{", "}", "file:///", "db://", "/", ".", "-", "?", "#", "x"])
uri_templates = st.tuples(
    st.lists(_template_piece, max_size=5).map("".join),
    st.text(st.sampled_from("ab/.?#&;=-,x\u00e9"), max_size=24),
).map(lambda t: f"{t[0]}\n{t[1]}".encode())


@FUZZ
@given(structured(200))
def test_uri_template_structured(data: bytes) -> None:
    _check(fuzz_uri_template, data)


@FUZZ
@given(uri_templates)
def test_uri_template_pairs(data: bytes) -> None:
    _check(fuzz_uri_template, data)


_redact_text = st.lists(st.sampled_from(["abcd", "efgh", "ab", "Bearer ", "\n", " ", "<redacted>",
                                         "\ud800", "?k=", "&", "x"]), max_size=12).map("".join)
redact_inputs = st.tuples(
    st.lists(_redact_text, max_size=3).map("\x1f".join),
    st.tuples(st.integers(-2, 40), st.integers(-2, 40)).map(lambda t: f"{t[0]} {t[1]}"),
    _redact_text | json_values.map(json.dumps),
).map(lambda t: "\n".join(t).encode("utf-8", "surrogatepass"))


@FUZZ
@given(structured(300))
def test_redact_structured(data: bytes) -> None:
    _check(fuzz_redact, data)


@FUZZ
@given(redact_inputs.filter(lambda b: not b or b[0] < 0x80))
def test_redact_raw(data: bytes) -> None:
    _check(fuzz_redact, data)


_body_piece = st.sampled_from([
    b"<!DOCTYPE html>", b"<html>", b"\xef\xbb\xbf", b'{"message": "m"}', b'{"error": ',
    b'"x"}', b"\n", b"text", b"\x00", b"\xff", b" "]) | st.binary(max_size=8)
error_bodies = st.tuples(st.integers(0, 0x7F), st.lists(_body_piece, max_size=6)).map(
    lambda t: bytes([t[0]]) + b"".join(t[1]))


@FUZZ
@given(structured(200))
def test_http_error_structured(data: bytes) -> None:
    _check(fuzz_http_error, data)


@FUZZ
@given(error_bodies)
def test_http_error_bodies(data: bytes) -> None:
    _check(fuzz_http_error, data)


# -- the corpora ----------------------------------------------------------------------------


# Every corpus, these harnesses' too, is run by tests/test_fuzz.py (test_corpus).


def test_every_harness_has_a_test_here_or_in_test_fuzz() -> None:
    """A new fuzz/fuzz_*.py harness is registered in one of the two fuzz test files."""
    on_disk = {p.stem.removeprefix("fuzz_") for p in (CORPUS.parent).glob("fuzz_*.py")}
    assert on_disk <= set(HARNESSES) | {"ndjson", "jsonrpc", "session"}, on_disk


# -- bugs the harnesses found (pinned as KNOWN_BUGS until fixed) ---------------------------


def test_fixed_gemini_openapi_drops_counts_past_int64() -> None:
    """Found by fuzz_schema ('gemini-huge-count'): gemini-openapi removed a maximum of
    10**400 (no double holds it) but kept a minLength (or maxItems ...) of 10**400; Gemini's
    counts are int64, so a count beyond 2**63 - 1 is removed too, with a note."""
    for key, kind in (("minLength", "string"), ("maxItems", "array"),
                      ("maxProperties", "object")):
        schema = {"type": "object", "properties": {"a": {"type": kind, key: 10**400}}}
        out = normalize_schema(schema, "gemini-openapi")
        assert key not in out.schema["properties"]["a"]
        assert any(n.path == f"/properties/a/{key}" and n.kind == "removed"
                   for n in out.notes)
    fits = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 2**63 - 1,
                                                   "minLength": 2**63}}}
    a = normalize_schema(fits, "gemini-openapi").schema["properties"]["a"]
    assert a == {"type": "string", "maxLength": 2**63 - 1}
    fuzz_schema.check_target(schema, "gemini-openapi", {}, None, set())


@pytest.mark.parametrize("target", ["openai-strict", "openai-responses-strict"])
def test_fixed_strict_output_stays_within_budget(target: str) -> None:
    """Found by fuzz_schema ('strict-unpaid-containers'): "budget bounds the nodes the
    output may cost", but the strict form added "properties": {} and "required": [] to an
    object without paying for them (3 containers for budget=1).  Now they are charged, and
    a strict form over budget falls back to the plain form."""
    out = normalize_schema({}, target, budget=1)
    assert fuzz_schema._containers(out.schema)[1] <= 1, out.schema
    assert out.schema == {"type": "object"} and not out.strict
    assert normalize_schema({}, target, budget=3).strict
    fuzz_schema.check_target({}, target, {"budget": 1}, None, set())


def test_fixed_raw_key_the_target_writes_is_not_dropped_silently() -> None:
    """Found by fuzz_config ('raw-key-shadowed'): a raw key of the source that the target
    writes itself (Zed's "source", "type" ...) was dropped on dump without a warning, so
    generic -> zed -> generic lost it.  Now the dump says so."""
    config = parse_config('{"mcpServers":{"a":{"command":"node","source":"marketplace"}}}')
    assert config.servers["a"].raw == {"source": "marketplace"}
    text, warnings = dump_config_with_warnings(config, "zed")
    assert warnings == ("a.source: not written: zed writes its own source",)
    assert parse_config(text, dialect="zed").servers["a"].raw == {}
    windsurf = parse_config('{"mcpServers":{"a":{"command":"node","type":"local"}}}',
                            dialect="windsurf")
    _, warnings = dump_config_with_warnings(windsurf, "claude-code")
    assert warnings == ("a.type: not written: claude-code writes its own type",)


def test_fixed_raw_key_of_the_target_is_not_carried_unchecked() -> None:
    """Found by fuzz_config ('raw-key-reinterpreted'): a raw key of the source that the
    target reads (windsurf keeps an unknown "exposure"; rpi reads it) was written to the
    target unchecked and without a warning, so the dump did not parse back.  Now it is left
    out with a warning; rpi's own (checked) exposure is still written."""
    config = parse_config('{"mcpServers":{"a":{"command":"x","exposure":[]}}}',
                          dialect="windsurf")
    text, warnings = dump_config_with_warnings(config, "rpi")
    assert warnings == ("a.exposure: rpi reads this key, windsurf did not (its value was "
                        "never checked): not written",)
    assert parse_config(text, dialect="rpi").servers["a"].raw == {}
    rpi = parse_config('{"mcpServers":{"a":{"command":"x","exposure":"hidden"}}}',
                       dialect="rpi")
    text, warnings = dump_config_with_warnings(rpi)
    assert not warnings and parse_config(text, dialect="rpi") == rpi


# -- known bugs: found by the harnesses, not fixed yet ----------------------------------------


def _linear(template: str) -> bool:
    return fuzz_uri_template.backtracking(template, template_pattern(template)) is None


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'template-exponential' (fuzz_uri_template)")
def test_known_template_dot_and_semicolon_backtrack_exponentially() -> None:
    """template_pattern turns {.var} into (?:\\.[^/?#]*)* (and {;var} alike): the class holds
    the segment's lead character, so a failing match of "." * n tries 2**n splits (about
    a second for 25 dots: a server's template can hang a read of an unlisted URI)."""
    assert _linear("x{.a}y") and _linear("m://x{;a}") and _linear("{a}/{b}{.ext}")
    fuzz_uri_template.check(b"x{.a}y\nx" + b"." * 10 + b"z")


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'template-polynomial' (fuzz_uri_template)")
def test_known_template_expressions_sharing_characters_backtrack_polynomially() -> None:
    """Two expressions with nothing only one of them can take between them ({a}{b},
    {a}.{b}, {a}-{b}, {?q}{&page}): a failing full match tries every split, O(n**k) for k
    of them (db://{a}.{b}.{c} takes about 2 s on 1000 dots)."""
    assert _linear("{a}{b}") and _linear("db://{a}.{b}") and _linear("q://x{?q}{&page}")


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'empty-cut-shows-marker' (fuzz_redact)")
def test_known_redactor_text_of_an_empty_cut_is_empty() -> None:
    """text(s, start, end) is documented as s[start:end] redacted: an empty cut inside a
    secret gives REDACTED instead of ""."""
    redactor = Redactor(["abcdefgh"])
    assert redactor.text("xxabcdefghyy", 4, 4) == ""
    assert redactor.text("xxabcdefghyy", 6, 3) == ""


def test_redact_url_hides_a_password_with_ampersand() -> None:
    """A password with "&" and "=" in it (RFC 3986 allows both in user-info): the user-info
    is redacted before the query values (fuzz_redact found the other order showing it)."""
    shown = redact_url("https://u:pa&ss=word@h.example/mcp")
    assert "pa" not in shown and "h.example" in shown, shown


def test_redact_url_hides_a_query_value_with_an_at_sign() -> None:
    """An "@" in a query value is no user-info (the authority ends at "?"): the whole value
    is redacted, the host still shows."""
    shown = redact_url("https://h.example?key=sec@ret&x=1")
    assert "sec" not in shown and "ret" not in shown and "h.example" in shown, shown


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'html-behind-bom' (fuzz_http_error)")
def test_known_html_page_behind_a_bom_is_not_shown() -> None:
    """A page with a UTF-8 BOM and no html content type: strip() keeps U+FEFF, the text
    does not start with "<", and the page is shown."""
    assert body_message(b"\xef\xbb\xbf<!DOCTYPE html><html><body>x</body></html>", "") == ""


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'html-after-text' (fuzz_http_error)")
def test_known_html_page_after_a_line_of_text_is_not_shown() -> None:
    """A text/plain body with a page after a first line: only a body that starts with "<"
    counts as markup."""
    assert "<html" not in body_message(b"502 Bad Gateway\n<html><body>nginx</body></html>",
                                       "text/plain")


@pytest.mark.xfail(strict=True, reason="KNOWN_BUGS 'html-in-json-message' (fuzz_http_error)")
def test_known_html_page_as_a_json_message_is_not_shown() -> None:
    """A JSON error whose message is an HTML page is shown as the message."""
    assert "<html" not in body_message(b'{"message": "<html><body>x</body></html>"}',
                                       "application/json")


def test_known_bugs_are_pinned() -> None:
    """Every KNOWN_BUGS tag of these harnesses names its xfail test above."""
    source = Path(__file__).read_text("utf-8")
    for name, module in HARNESSES.items():
        for tag in module.KNOWN_BUGS:
            assert f"KNOWN_BUGS '{tag}' (fuzz_{name})" in source, (name, tag)


@FUZZ_SLOW
@given(structured(300))
def test_budget_structured(data: bytes) -> None:
    _check(fuzz_budget, data)


@FUZZ_SLOW
@given(structured(300))
def test_search_structured(data: bytes) -> None:
    _check(fuzz_search, data)


@FUZZ
@given(structured(600))
def test_frontmatter_structured(data: bytes) -> None:
    _check(fuzz_frontmatter, data)


@FUZZ
@given(st.text(st.sampled_from("ab :-#'\"[]{},|>\n\t \\0x.e?&*!~1"), max_size=200)
       .map(lambda s: b"\x00" + s.encode()))
def test_frontmatter_raw(data: bytes) -> None:
    _check(fuzz_frontmatter, data)


@FUZZ
@given(structured(500))
def test_skills_structured(data: bytes) -> None:
    _check(fuzz_skills, data)


@FUZZ
@given(json_values.map(lambda v: b"\x00" + _json_bytes(v)))
def test_skills_raw(data: bytes) -> None:
    _check(fuzz_skills, data)


@FUZZ
@given(structured(400))
def test_elicitation_structured(data: bytes) -> None:
    _check(fuzz_elicitation, data)


@FUZZ
@given(st.binary(max_size=300))
def test_elicitation_raw(data: bytes) -> None:
    _check(fuzz_elicitation, data)


@FUZZ
@given(structured(600))
def test_memory_server_structured(data: bytes) -> None:
    _check(fuzz_memory_server, data)


@FUZZ
@given(st.binary(max_size=400).map(lambda b: b"\x00" + b))
def test_memory_server_raw(data: bytes) -> None:
    _check(fuzz_memory_server, data)


@FUZZ_SLOW
@given(structured(600))
def test_transcript_structured(data: bytes) -> None:
    _check(fuzz_transcript, data)


_transcript_lines = st.lists(st.sampled_from([
    b'{"mcp_proto_transcript":1,"transport":"stdio","target":"s","client":{}}',
    b'{"t":0.1,"dir":"send","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"t":0.2,"dir":"recv","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"t":0.3,"stderr":"x"}', b'{"t":0.4,"exit":{"code":1,"stderr_tail":""}}',
    b'{"t":0.5,"closed":true}', b'{"t":0.6,"truncated":{"bytes":9}}', b'{"t":0.7}', b"[]",
    b'{"mcp_proto_transcript":2}', b"", b"\xff"]), max_size=8)


@FUZZ
@given(_transcript_lines, st.lists(st.sampled_from([
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}', b'{"jsonrpc":"2.0","id":1,"result":{}}',
    b"x", b"[1]"]), max_size=4))
def test_transcript_raw(lines: list[bytes], client: list[bytes]) -> None:
    _check(fuzz_transcript, b"\x00" + b"\n".join(lines) + b"\x00" + b"\n".join(client))
