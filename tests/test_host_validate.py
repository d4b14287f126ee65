"""Checked inputs and outputs (``mcp_proto.host._validate``): arguments against ``inputSchema``,
``structuredContent`` against ``outputSchema``, compiled once per tool definition, bounded on
hostile schemas and values, and in agreement with ``jsonschema`` itself where the bounds let
it run.

The schemas are real ones: mcp-server-git's and server-everything's input schemas from
``tests/schemas/``, and server-everything's ``get-structured-content`` output schema (a hand
copy of what its zod definition lists).  No timing is asserted: a hostile case that would run
for ever if its bound were missing is sized so that it fails (an issue the check must not
report, a reason it must record) instead of hanging."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_proto._types import CallToolResult, TextContent, Tool, parse_call_tool_result
from mcp_proto.host import _validate as V
from mcp_proto.host._patterns import LEFT_OUT, REGEX_WORK, PatternVerdict, judge_pattern
from mcp_proto.host._validate import (
    INSTALL_HINT,
    MAX_ISSUE_CHARS,
    MAX_ISSUES,
    CompiledSchema,
    InvalidArguments,
    InvalidOutput,
    JsonSchemaValidator,
    SkippedCheck,
    UncheckedValue,
    UnusableSchema,
    Validation,
    ValidationIssue,
    ValidatorCache,
    ValidatorUnavailable,
    as_validation,
    invalid_result,
)

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = Path(__file__).resolve().parent / "schemas"
GIT = json.loads((SCHEMAS / "mcp_server_git.json").read_text())
EVERYTHING = json.loads((SCHEMAS / "server_everything.json").read_text())

#: server-everything's get-structured-content output schema (zod-to-json-schema, draft-07).
WEATHER_OUTPUT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "temperature": {"type": "number", "description": "Temperature in celsius"},
        "conditions": {"type": "string", "description": "Weather conditions description"},
        "humidity": {"type": "number", "description": "Humidity percentage"},
    },
    "required": ["temperature", "conditions", "humidity"],
    "additionalProperties": False,
}
WEATHER = Tool(name="get-structured-content", input_schema=EVERYTHING["get-structured-content"],
               output_schema=WEATHER_OUTPUT)


def tool(schema: Mapping[str, Any], name: str = "t", output: Any = None) -> Tool:
    return Tool(name=name, input_schema=dict(schema), output_schema=output)


def issues_of(schema: Mapping[str, Any], value: Any,
              cache: ValidatorCache | None = None) -> tuple[ValidationIssue, ...]:
    """The issues ``check_arguments`` raises for ``value`` (empty when it passes)."""
    cache = ValidatorCache() if cache is None else cache
    try:
        cache.check_arguments("s", tool(schema), value)
    except InvalidArguments as exc:
        return exc.issues
    return ()


def result(structured: Any, *, is_error: bool = False) -> CallToolResult:
    raw: dict[str, Any] = {"content": [], "isError": is_error}
    if structured is not None:
        raw["structuredContent"] = structured
    return parse_call_tool_result(raw)


def valid_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments with every required property of a flat schema, of its type."""
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True,
               "array": ["x"], "object": {}}
    out: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = schema["properties"][name]
        if "enum" in prop:
            out[name] = prop["enum"][0]
        else:
            kind = prop.get("type") or prop["anyOf"][0]["type"]
            out[name] = samples[kind]
    return out


# -- real schemas: arguments -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GIT) + sorted(EVERYTHING))
def test_real_tools_accept_valid_arguments(name: str) -> None:
    schema = GIT.get(name) or EVERYTHING[name]
    cache = ValidatorCache()
    cache.check_arguments("s", tool(schema, name), valid_arguments(schema))
    assert cache.skipped() == ()


def test_a_wrong_type_names_the_field() -> None:
    git_log = tool(GIT["git_log"], "git_log")
    with pytest.raises(InvalidArguments) as info:
        ValidatorCache().check_arguments("git", git_log, {"repo_path": "/r", "max_count": "ten"})
    assert str(info.value) == "arguments of git_log: /max_count: 'ten' is not of type 'integer'"
    assert info.value.issues == (ValidationIssue(path="/max_count",
                                                 message="'ten' is not of type 'integer'"),)
    assert (info.value.server, info.value.tool, info.value.name) == ("git", "git_log", "git_log")
    assert isinstance(info.value, ValueError)


def test_a_missing_property_and_the_public_name() -> None:
    with pytest.raises(InvalidArguments) as info:
        ValidatorCache().check_arguments("git", tool(GIT["git_log"], "git_log"), {},
                                         name="git__git_log")
    assert str(info.value) == "arguments of git__git_log: 'repo_path' is a required property"
    assert info.value.issues[0].path == ""


def test_a_nullable_field_says_which_types_it_takes() -> None:
    issues = issues_of(GIT["git_log"], {"repo_path": "/r", "start_timestamp": 5})
    assert issues == (ValidationIssue(path="/start_timestamp",
                                      message="5 is not of type 'string', 'null'"),)


def test_everything_get_sum_and_enum() -> None:
    assert [i.path for i in issues_of(EVERYTHING["get-sum"], {"a": "1", "b": 2})] == ["/a"]
    issues = issues_of(EVERYTHING["get-structured-content"], {"location": "Paris"})
    assert [i.path for i in issues] == ["/location"]
    assert "is not one of" in issues[0].message


def test_missing_arguments_are_an_empty_object() -> None:
    assert issues_of(GIT["git_log"], None)[0].message == "'repo_path' is a required property"
    assert issues_of(EVERYTHING["get-env"], None) == ()


def test_arguments_that_are_not_an_object() -> None:
    issues = issues_of(GIT["git_status"], ["/r"])
    assert [i.path for i in issues] == [""]
    assert "is not of type 'object'" in issues[0].message


def test_invalid_result_for_arguments() -> None:
    try:
        ValidatorCache().check_arguments("git", tool(GIT["git_log"], "git_log"),
                                         {"repo_path": 1, "max_count": "ten"})
    except InvalidArguments as exc:
        out = invalid_result(exc)
    assert out.is_error
    assert isinstance(out.content[0], TextContent)
    text = out.content[0].text
    assert "call was not made" in text
    assert "- /repo_path: 1 is not of type 'string'" in text
    assert "- /max_count: 'ten' is not of type 'integer'" in text
    assert out.raw == {"content": [{"type": "text", "text": text}], "isError": True}


# -- drafts and formats ------------------------------------------------------------------------


def test_draft_07_when_declared() -> None:
    tuple_schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                    "items": [{"type": "integer"}], "additionalItems": False}
    assert [i.path for i in issues_of(tuple_schema, [1, 2])] == [""]
    assert issues_of(tuple_schema, [1]) == ()


def test_2020_12_by_default() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    assert issues_of(schema, [1]) == ()
    assert [i.path for i in issues_of(schema, [1, "x"])] == [""]
    # prefixItems is unknown to draft-07: anything goes there
    prefix = {"type": "array", "prefixItems": [{"type": "integer"}]}
    assert [i.path for i in issues_of(prefix, ["x"])] == ["/0"]
    assert issues_of({"$schema": "http://json-schema.org/draft-07/schema#", **prefix},
                     ["x"]) == ()


def test_a_draft_07_tuple_without_schema_is_invalid_2020_12_and_not_checked() -> None:
    cache = ValidatorCache()
    schema = {"type": "array", "items": [{"type": "integer"}]}
    assert issues_of(schema, ["x"], cache) == ()
    [skip] = cache.skipped()
    assert "invalid for its draft" in skip.reason


def test_formats_are_annotations() -> None:
    schema = {"type": "object", "properties": {"email": {"type": "string", "format": "email"},
                                               "when": {"type": "string",
                                                        "format": "date-time"}}}
    assert issues_of(schema, {"email": "not an email", "when": "yesterday"}) == ()


# -- output ------------------------------------------------------------------------------------


def test_output_that_matches() -> None:
    ValidatorCache().check_output("everything", WEATHER, result(
        {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}))


def test_output_mismatch() -> None:
    with pytest.raises(InvalidOutput) as info:
        ValidatorCache().check_output("everything", WEATHER, result(
            {"temperature": "hot", "conditions": "Sunny", "humidity": 65, "wind": 3}),
            name="everything__get-structured-content")
    exc = info.value
    assert [i.path for i in exc.issues] == ["/temperature", ""]
    assert exc.issues[1].message == "Additional properties are not allowed ('wind' was " \
                                    "unexpected)"
    assert str(exc).startswith("output of everything__get-structured-content: /temperature: "
                               "'hot' is not of type 'number'")
    out = invalid_result(exc)
    assert out.is_error and "does not match its output schema" in out.text
    assert "- /temperature: 'hot' is not of type 'number'" in out.text


def test_missing_structured_content_is_an_issue() -> None:
    with pytest.raises(InvalidOutput) as info:
        ValidatorCache().check_output("everything", WEATHER, parse_call_tool_result(
            {"content": [{"type": "text", "text": "22.5 C"}]}))
    assert info.value.issues[0].path == ""
    assert "structuredContent is missing" in info.value.issues[0].message


def test_error_results_and_tools_without_output_schema_are_not_checked() -> None:
    cache = ValidatorCache()
    cache.check_output("everything", WEATHER, result(None, is_error=True))
    cache.check_output("everything", WEATHER, result({"temperature": "hot"}, is_error=True))
    plain = tool(EVERYTHING["echo"], "echo")
    cache.check_output("everything", plain, result({"anything": [1, 2]}))
    cache.check_output("everything", plain, result(None))
    assert len(cache) == 0


# -- issues: bounded -------------------------------------------------------------------------


def test_a_huge_value_is_not_echoed() -> None:
    huge = "x" * 1_000_000
    with pytest.raises(InvalidArguments) as info:
        ValidatorCache().check_arguments("git", tool(GIT["git_log"], "git_log"),
                                         {"repo_path": "/r", "max_count": huge})
    [issue] = info.value.issues
    assert len(issue.message) <= MAX_ISSUE_CHARS
    assert issue.message.endswith("is not of type 'integer'")
    assert len(str(info.value)) < 3 * MAX_ISSUE_CHARS


def test_issues_are_capped() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    with pytest.raises(InvalidArguments) as info:
        ValidatorCache().check_arguments("s", tool(schema), {f"p{i}": "x" for i in range(500)})
    assert len(info.value.issues) == MAX_ISSUES
    assert f"(and at least {MAX_ISSUES - V.MAX_MESSAGE_ISSUES} more)" in str(info.value)
    few = issues_of(schema, {f"p{i}": "x" for i in range(5)})
    assert len(few) == 5


# -- the cache ---------------------------------------------------------------------------------


class Counting:
    """A validator that counts its compiles (and compiles with the default one)."""

    def __init__(self) -> None:
        self.inner = JsonSchemaValidator()
        self.compiled: list[Mapping[str, Any]] = []

    def compile(self, schema: Mapping[str, Any]) -> V.Check:
        self.compiled.append(schema)
        return self.inner.compile(schema)


def test_compiled_once_per_definition() -> None:
    counting = Counting()
    cache = ValidatorCache(counting)
    git_log = tool(GIT["git_log"], "git_log")
    for _ in range(5):
        cache.check_arguments("git", git_log, {"repo_path": "/r"})
        with pytest.raises(InvalidArguments):
            cache.check_arguments("git", git_log, {"repo_path": 1})
    assert len(counting.compiled) == 1
    for _ in range(3):
        cache.check_output("everything", WEATHER, result(
            {"temperature": 1, "conditions": "c", "humidity": 2}))
    assert len(counting.compiled) == 2
    # another server with the same definition, and a new listing's (equal) definition
    cache.check_arguments("git2", git_log, {"repo_path": "/r"})
    relisted = tool(GIT["git_log"], "git_log")
    cache.check_arguments("git", relisted, {"repo_path": "/r"})
    assert len(counting.compiled) == 4
    assert len(cache) == 4


def test_the_cache_is_bounded_and_keeps_definitions_alive() -> None:
    counting = Counting()
    cache = ValidatorCache(counting, max_entries=2)
    tools = [tool({"type": "object"}, f"t{i}") for i in range(3)]
    for t in tools:
        cache.check_arguments("s", t, {})
    assert len(cache) == 2
    cache.check_arguments("s", tools[2], {})   # still cached
    assert len(counting.compiled) == 3
    cache.check_arguments("s", tools[0], {})   # evicted: compiled again
    assert len(counting.compiled) == 4
    # an entry keeps its definition, so no other object can take its id while it is cached
    assert all(entry.definition in tools for entry in cache._entries.values())


def test_clear() -> None:
    counting = Counting()
    cache = ValidatorCache(counting)
    git_log = tool(GIT["git_log"], "git_log")
    cache.check_arguments("a", git_log, {"repo_path": "/r"})
    cache.check_arguments("b", git_log, {"repo_path": "/r"})
    cache.clear("a")
    assert len(cache) == 1
    cache.check_arguments("b", git_log, {"repo_path": "/r"})
    assert len(counting.compiled) == 2
    cache.clear()
    assert len(cache) == 0


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="on_output_error"):
        Validation(on_output_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Validation(validator=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ValidatorCache(max_entries=0)
    with pytest.raises(ValueError):
        JsonSchemaValidator(max_steps=0)
    assert Validation().on_output_error == "raise"
    assert Validation(on_output_error="result").new_cache(3).max_entries == 3


def test_as_validation() -> None:
    assert as_validation(True) == Validation()
    assert as_validation(False) is None
    assert as_validation(None) is None
    own = Validation(output=False)
    assert as_validation(own) is own
    with pytest.raises(TypeError):
        as_validation("yes")  # type: ignore[arg-type]


class Scripted:
    """A validator whose check answers what it is told."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def compile(self, schema: Mapping[str, Any]) -> V.Check:
        def check(value: object) -> Sequence[ValidationIssue]:
            if isinstance(self.answer, Exception):
                raise self.answer
            return list(self.answer)
        return CompiledSchema(check=check, skipped=("told to skip x",))


def test_an_injected_validator() -> None:
    issue = ValidationIssue(path="/q", message="no")
    cache = ValidatorCache(Scripted([issue] * (MAX_ISSUES + 5)))
    with pytest.raises(InvalidArguments) as info:
        cache.check_arguments("s", tool({}), {"q": 1})
    assert info.value.issues == (issue,) * MAX_ISSUES
    assert cache.skipped() == (SkippedCheck(server="s", tool="t", which="arguments",
                                            reason="told to skip x"),)


def test_a_value_that_cannot_be_checked_passes_and_is_said_once() -> None:
    cache = ValidatorCache(Scripted(UncheckedValue("too big")))
    t = tool({})
    for _ in range(3):
        cache.check_arguments("s", t, {})
    assert [s.reason for s in cache.skipped()] == ["told to skip x", "too big"]


def test_a_schema_failing_at_run_time_is_no_longer_checked() -> None:
    scripted = Scripted(UnusableSchema("broken"))
    cache = ValidatorCache(scripted)
    t = tool({})
    cache.check_arguments("s", t, {})
    scripted.answer = [ValidationIssue(path="", message="would fail")]
    cache.check_arguments("s", t, {})  # not checked any more
    assert [s.reason for s in cache.skipped()] == ["told to skip x", "broken"]


# -- schemas that cannot be checked ------------------------------------------------------------


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "object", "properties": {"a": {"type": "nope"}}}, "invalid for its draft"),
    ({"type": "object", "required": "name"}, "invalid for its draft"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not resolve"),
    ({"$ref": "https://example.com/schemas/args.json"}, "does not resolve"),
])
def test_unusable_schemas_never_block_the_call(schema: dict[str, Any], reason: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fetched: list[Any] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: fetched.append(a))
    cache = ValidatorCache()
    cache.check_arguments("s", tool(schema), {"a": 1})
    cache.check_arguments("s", tool(schema), {"a": 1})  # a new definition: again not checked
    assert fetched == []
    assert len(cache.skipped()) == 2
    assert all(reason in s.reason for s in cache.skipped())


def test_a_schema_nested_ten_thousand_levels() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(10_000):
        schema = {"type": "object", "properties": {"a": schema}}
    cache = ValidatorCache()
    cache.check_arguments("s", tool(schema), {"a": {"a": 1}})
    [skip] = cache.skipped()
    assert "nests deeper than 64 levels" in skip.reason


def test_a_schema_with_a_hundred_thousand_properties() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"}
                                               for i in range(100_000)}}
    cache = ValidatorCache()
    cache.check_arguments("s", tool(schema), {"p1": "x"})
    [skip] = cache.skipped()
    assert "more than 10,000 values" in skip.reason


def test_jsonschema_is_imported_only_when_compiling() -> None:
    code = ("import sys\nimport mcp_proto.host._validate as v\n"
            "assert 'jsonschema' not in sys.modules\n"
            "v.ValidatorCache(); v.Validation()\n"
            "assert 'jsonschema' not in sys.modules\n"
            "v.JsonSchemaValidator().compile({'type': 'object'})\n"
            "assert 'jsonschema' in sys.modules\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "bindings")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_without_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("jsonschema", "jsonschema.exceptions", "jsonschema.validators"):
        monkeypatch.setitem(sys.modules, name, None)
    cache = ValidatorCache()
    with pytest.raises(ValidatorUnavailable) as info:
        cache.check_arguments("s", tool({"type": "object"}), {})
    assert isinstance(info.value, ImportError)
    assert INSTALL_HINT in str(info.value)
    assert len(cache) == 0


# -- regular expressions -----------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [
    r"^(a+)+$", r"(a*)*", r"(a|a)*", r"(a|ab)+", r"(\w|\d)+", r"(\w+\s?)*$", r"(\d+,?)+$",
    r"^(\s*\w+\s*)+$", r"^([a-zA-Z0-9]+\s?)*$", r"(x+x+)+y", r"((a|b)+c?)+$", r"(?=(a+)+b)",
    r"(.*a){12}", r"[", r"(?x) a+ b",
])
def test_patterns_left_out(pattern: str) -> None:
    assert judge_pattern(pattern).limit == LEFT_OUT


@pytest.mark.parametrize("pattern", [
    r"^[a-zA-Z0-9_-]+$", r"^\d{4}-\d{2}-\d{2}$", r"^([a-z]+,)*[a-z]+$", r"^(-[a-z0-9]+)*$",
    r"^(\d{1,3}\.){3}\d{1,3}$", r"^https?://.+$", r"[0-9]+", r"^(a|b)*$", r"(foo|bar)*",
    r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$", r"^[A-Z][a-z]+( [A-Z][a-z]+)*$",
    r"^(?=.*[A-Z])(?=.*\d).{8,}$", r"^[\u4e00-\u9fff]+$", r"^x-",
])
def test_patterns_always_applied(pattern: str) -> None:
    assert judge_pattern(pattern) == PatternVerdict(None)


@pytest.mark.parametrize(("pattern", "degree"), [
    (r"^[a-z]+[a-z0-9]*$", 2), (r"^\d*\.?\d*$", 2), (r"\s*$", 2), (r"[a-z]+[a-z0-9]*$", 3),
])
def test_polynomial_patterns_have_a_length_limit(pattern: str, degree: int) -> None:
    verdict = judge_pattern(pattern)
    assert verdict.limit == int(REGEX_WORK ** (1 / degree))
    assert f"degree {degree}" in verdict.reason


@pytest.mark.filterwarnings("ignore::FutureWarning")  # re's own ("Possible nested set" ...)
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab()[]|*+?{}12,^$\\.-dwsS:=!<>P#xi", max_size=24))
def test_any_pattern_gets_a_verdict(pattern: str) -> None:
    """The analysis never raises, whatever the text: a pattern Python refuses is left out,
    any other is left out, limited or always applied."""
    verdict = judge_pattern(pattern)
    assert verdict.limit is None or verdict.limit == LEFT_OUT or verdict.limit > 0
    assert (verdict.limit is None) == (verdict.reason == "")
    try:
        re.compile(pattern)
    except re.error:
        assert verdict.limit == LEFT_OUT


def test_a_catastrophic_pattern_is_left_out_and_the_rest_checked() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"},
                                               "b": {"type": "integer"}}}
    cache = ValidatorCache()
    # Were the pattern applied, "a" * 22 + "!" would take seconds and be an issue at /a.
    with pytest.raises(InvalidArguments) as info:
        cache.check_arguments("s", tool(schema), {"a": "a" * 22 + "!", "b": "x"})
    assert [i.path for i in info.value.issues] == ["/b"]
    [skip] = cache.skipped()
    assert skip.reason.startswith("pattern at /properties/a/pattern left out: it may "
                                  "backtrack exponentially")


def test_a_property_named_pattern_is_not_a_pattern() -> None:
    """mcp-server-filesystem's search_files has a ``pattern`` argument; data keywords
    (``default``, ``examples``, ``enum``) may hold a ``pattern`` key too."""
    schema = {"type": "object", "properties": {"pattern": {
        "type": "string", "default": {"pattern": "(a+)+"}, "examples": [{"pattern": "(a|a)*"}],
        "enum": ["(a+)+", "x"]}}}
    cache = ValidatorCache()
    cache.check_arguments("fs", tool(schema), {"pattern": "(a+)+"})
    assert cache.skipped() == ()


def test_a_polynomial_pattern_applies_to_short_strings_only() -> None:
    schema = {"type": "object", "properties": {"id": {"pattern": "^[a-z]+[a-z0-9]*$"}}}
    cache = ValidatorCache()
    assert [i.path for i in issues_of(schema, {"id": "a" * 100 + "!"}, cache)] == ["/id"]
    # 100,000 characters would cost 10^10 steps: past the limit, not applied
    assert issues_of(schema, {"id": "a" * 100_000 + "!"}, cache) == ()
    assert "at most 2,000 characters" in cache.skipped()[0].reason


def test_pattern_properties_with_a_catastrophic_name() -> None:
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"},
                                                      "^x-": {"type": "string"}},
              "additionalProperties": False}
    cache = ValidatorCache()
    # "aaa" would match the left-out expression: neither checked against it nor additional
    assert issues_of(schema, {"aaa": "not an integer", "x-y": "s"}, cache) == ()
    issues = issues_of(schema, {"x-y": 1}, cache)
    assert [i.path for i in issues] == ["/x-y"]
    assert "patternProperties name at /patternProperties/^(a+)+$ left out" in \
        cache.skipped()[0].reason


def test_unevaluated_properties_with_a_catastrophic_name_is_not_checked() -> None:
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {}},
              "unevaluatedProperties": False}
    cache = ValidatorCache()
    assert issues_of(schema, {"a" * 22 + "!": 1}, cache) == ()
    assert "unevaluatedProperties" in cache.skipped()[0].reason


# -- values and work: bounded ------------------------------------------------------------------


def test_a_ref_fan_out_stops_at_the_step_budget() -> None:
    defs: dict[str, Any] = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2}
                            for i in range(40)}
    defs["d40"] = {"type": "integer"}
    schema = {"$defs": defs, "type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}}
    cache = ValidatorCache(JsonSchemaValidator(max_steps=20_000))
    t = tool(schema)
    cache.check_arguments("s", t, {"x": 1})  # 2^40 evaluations
    [skip] = cache.skipped()
    assert "more than 20,000 steps" in skip.reason
    # a value found wrong before the budget ran out: what was found (once, not 2^40 times)
    with pytest.raises(InvalidArguments) as info:
        cache.check_arguments("s", t, {"x": "not an integer"})
    assert info.value.issues == (ValidationIssue(
        path="/x", message="'not an integer' is not of type 'integer'"),)


def test_unique_items_is_linear_and_right() -> None:
    schema = {"type": "array", "uniqueItems": True}
    items = [{"a": i, "b": [i, str(i)]} for i in range(3_000)]  # 15,000 values
    assert issues_of(schema, items) == ()
    assert [i.path for i in issues_of(schema, [*items, {"b": [7, "7"], "a": 7}])] == [""]
    assert issues_of(schema, [1, True, "1", [1], {"1": 1}, 0, False, None]) == ()
    assert issues_of(schema, [1, 1.0]) != ()
    assert issues_of(schema, [[1, 2], [1, 2.0]]) != ()


def test_a_value_too_large_or_deep_passes_with_a_reason() -> None:
    cache = ValidatorCache(JsonSchemaValidator(max_instance_nodes=1_000,
                                               max_instance_depth=10))
    schema = {"type": "object", "properties": {"x": {"type": "array",
                                                     "items": {"type": "integer"}}}}
    cache.check_arguments("s", tool(schema), {"x": ["no"] * 1_000})
    deep: Any = 1
    for _ in range(20):
        deep = [deep]
    cache.check_arguments("s2", tool(schema), {"x": deep})
    reasons = [s.reason for s in cache.skipped()]
    assert any("more than 1,000 values" in r for r in reasons)
    assert any("nests deeper than 10 levels" in r for r in reasons)
    # within the bounds the same schema is checked
    assert issues_of(schema, {"x": ["no"]}, cache) != ()


def test_a_recursive_schema_follows_a_deep_value() -> None:
    tree = {"$defs": {"node": {"type": "object", "properties": {
        "name": {"type": "string"}, "children": {"type": "array",
                                                 "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node"}
    value: dict[str, Any] = {"name": "leaf"}
    for _ in range(30):   # 61 levels of containers
        value = {"name": "n", "children": [value]}
    assert issues_of(tree, value) == ()
    leaf = value
    while leaf.get("children"):
        leaf = leaf["children"][0]
    leaf["name"] = 5
    [issue] = issues_of(tree, value)
    assert issue.path == "/children/0" * 30 + "/name"


# -- agreement with jsonschema -----------------------------------------------------------------

SAFE_PATTERNS = ("^a", "b$", "^[a-z]+$", "\\d", "^x-")
KEYS = st.sampled_from(["a", "b", "c", "x-y", "1"])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["", "a", "ab", "b", "x-1", "1", "zzz", "A"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12)


def schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    kinds = st.sampled_from(["string", "integer", "number", "boolean", "null", "array",
                             "object"])
    simple = st.fixed_dictionaries({}, optional={
        "type": kinds | st.lists(kinds, min_size=1, max_size=3, unique=True),
        "minimum": st.integers(-3, 3), "maxLength": st.integers(0, 3),
        "pattern": st.sampled_from(SAFE_PATTERNS),
        "enum": st.lists(json_values, min_size=1, max_size=3),
        "uniqueItems": st.booleans(), "minItems": st.integers(0, 2),
        "required": st.lists(KEYS, max_size=2, unique=True),
    })
    nested = st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(KEYS, inner, max_size=3),
        "patternProperties": st.dictionaries(st.sampled_from(SAFE_PATTERNS), inner,
                                             max_size=2),
        "additionalProperties": st.booleans() | inner,
        "items": inner, "anyOf": st.lists(inner, min_size=1, max_size=2),
        "not": inner,
    })
    return st.builds(lambda a, b: {**a, **b}, simple, nested)


json_schemas = st.recursive(schemas(st.just({})), schemas, max_leaves=6)
SHARED = JsonSchemaValidator()  # its draft classes are built once (about 20 ms each)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=json_schemas, value=json_values)
def test_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    """Where every pattern is safe and the value small, the same value is wrong at the same
    places as jsonschema's own Draft202012Validator says (our uniqueItems, pattern,
    patternProperties and additionalProperties included)."""
    expected = sorted({"".join(f"/{p}" for p in e.absolute_path)
                       for e in Draft202012Validator(schema).iter_errors(value)})
    ours = SHARED.compile(schema)
    assert ours.skipped == ()
    got = sorted({i.path for i in ours(value)})
    assert got == expected


# -- the module's surface ----------------------------------------------------------------------


def test_all_is_sorted() -> None:
    names = V.__all__
    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1, name)
    assert list(names) == sorted(names, key=key)
    assert all(hasattr(V, name) for name in names)


def test_records_are_frozen_slotted_keyword_only() -> None:
    issue = ValidationIssue(path="", message="m")
    with pytest.raises(AttributeError):
        issue.path = "/x"  # type: ignore[misc]
    assert not hasattr(issue, "__dict__")
    with pytest.raises(TypeError):
        ValidationIssue("", "m")  # type: ignore[misc]
    assert not hasattr(SkippedCheck(server="s", tool="t", which="output", reason="r"),
                       "__dict__")
