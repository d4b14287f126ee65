"""Provider schemas (``mcp_proto.host.schema``): each target's output checked against that
provider's documented rules (checkers written from host-notes 4) *and* against the providers'
own libraries: ``google.genai.types.Schema`` for ``gemini-openapi`` and openai-agents'
``ensure_strict_json_schema`` (which leaves a really strict schema unchanged) for
``openai-strict``.  The corpus is real: schemas captured from server-everything,
mcp-server-git and mcp-server-time with our own client, and schemas pydantic, the official
SDK and fastmcp generate (saved, and regenerated once to prove the fixtures are current)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema  # type: ignore[import-untyped]
import pytest
from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema
from fastmcp import FastMCP
from google.genai import types as genai_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from mcp_proto.host.schema import _base as schema_module
from mcp_proto.host.schema._normalize import (
    GEMINI_FORMATS,
    GEMINI_SCHEMA_FIELDS,
    MAX_DEPTH_LIMIT,
    NOTE_KINDS,
    OPENAI_MAX_ENUM_VALUES,
    OPENAI_MAX_NESTING,
    OPENAI_MAX_PROPERTIES,
    OPENAI_STRICT_FORMATS,
    SCHEMA_TARGETS,
    Normalized,
    Note,
    SchemaError,
    normalize_schema,
)

SCHEMAS = Path(__file__).parent / "schemas"
CAPTURED = ("server_everything", "mcp_server_git", "mcp_server_time")

# -- the corpus --------------------------------------------------------------------------------


class Colour(str, Enum):
    RED = "red"
    GREEN = "green"


class Priority(int, Enum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str
    city: str = Field(description="City name", min_length=2)
    zip: str | None = None


class Person(BaseModel):
    name: str = Field(max_length=40)
    age: int | None = Field(default=None, ge=0, lt=150)
    address: Address
    previous: list[Address] = []
    tags: list[str] = Field(default_factory=list, description="Free tags")
    colour: Colour = Colour.RED
    priority: Priority = Priority.LOW
    mode: Literal["fast", "slow"] = "fast"
    scores: dict[str, int] = {}


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    bark: str | None = None


class Adopt(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    note: str | None = None
    owner: Person | None = None


def adopt(pet: Annotated[Cat | Dog, Field(discriminator="kind")], tree: Tree,
          note: str | None = None, when: str = Field("now", description="When")) -> str:
    """Adopt a pet."""
    return ""


def tag(names: list[str], counts: dict[str, int] | None = None, colour: Colour = Colour.RED,
        limit: int = 10) -> str:
    """Tag things."""
    return ""


def generate() -> dict[str, dict[str, Any]]:
    """Schemas as pydantic, the official SDK (MCPServer) and fastmcp generate them."""
    out: dict[str, dict[str, Any]] = {
        f"pydantic/{m.__name__}": m.model_json_schema() for m in (Person, Tree, Adopt)}

    async def listed() -> None:
        sdk = MCPServer("sdk")
        fast = FastMCP("fast")
        for fn in (adopt, tag):
            sdk.tool()(fn)
            fast.tool(fn)
        for tool in await sdk.list_tools():
            out[f"mcp-sdk/{tool.name}"] = dict(tool.input_schema)
        for ftool in await fast.list_tools():
            out[f"fastmcp/{ftool.name}"] = dict(ftool.parameters)

    asyncio.run(listed())
    regenerated: dict[str, dict[str, Any]] = json.loads(json.dumps(out))
    return regenerated


def load_corpus() -> dict[str, dict[str, Any]]:
    corpus: dict[str, dict[str, Any]] = {}
    for name in CAPTURED:
        for tool, schema in json.loads((SCHEMAS / f"{name}.json").read_text("utf-8")).items():
            corpus[f"{name}/{tool}"] = schema
    corpus.update(json.loads((SCHEMAS / "generated.json").read_text("utf-8")))
    return corpus


def fan_out(levels: int) -> dict[str, Any]:
    """A -> B, B; B -> C, C; ... : inlining it naively costs 2**levels nodes."""
    defs = {f"d{i}": {"type": "object", "properties": {
        "l": {"$ref": f"#/$defs/d{i + 1}"}, "r": {"$ref": f"#/$defs/d{i + 1}"}}}
        for i in range(levels)}
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"a": node}, "required": ["a"]}
    return node


def hostile() -> dict[str, dict[str, Any]]:
    big_props = {f"p{i}": {"type": "string", "description": "x" * 40} for i in range(20_000)}
    return {
        "self-recursive": {"type": "object", "properties": {
            "name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#"}}}},
        "fan-out-30": fan_out(30),
        "10k-nodes": {"type": "object", "properties": {
            f"p{i}": {"type": "integer", "minimum": i} for i in range(10_000)}},
        "1MiB": {"type": "object", "properties": big_props},
        "nested-beyond-limit": nested(100),
        "nested-11": nested(11),
        "ref-to-nowhere": {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"},
                                                            "b": {"$ref": "http://x/y"}}},
        "ref-cycle": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                      "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/C"},
                                "C": {"$ref": "#/$defs/A"}}},
        "ref-cycle-objects": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                              "$defs": {
                                  "A": {"type": "object", "properties": {
                                      "b": {"$ref": "#/$defs/B", "description": "to B"}}},
                                  "B": {"type": "object", "properties": {
                                      "a": {"$ref": "#/$defs/A", "description": "to A"}}}}},
        "non-dict-nodes": {"type": "object", "properties": {
            "t": True, "f": False, "l": [1, 2], "n": 3, "s": "x",
            "arr": {"type": "array", "items": [True, {"type": "string"}]},
            "any": {"anyOf": [False, {"type": "integer"}, "junk"]}}},
        "junk-keywords": {"type": "object", "properties": {
            "a": {"type": 7, "enum": "x", "required": "y", "properties": [1],
                  "items": 5, "format": 9, "minLength": "3"}},
            "required": ["a", 5, None, "zz"]},
    }


CORPUS = load_corpus()
HOSTILE = hostile()

# -- checkers written from the providers' documents --------------------------------------------


def walk(schema: Any) -> Iterator[Any]:
    """Every schema node of an output (properties, items, anyOf, $defs), without resolving."""
    stack = [schema]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, dict):
            continue
        for key in ("properties", "$defs", "definitions"):
            if isinstance(node.get(key), dict):
                stack.extend(node[key].values())
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                stack.append(node[key])
        if isinstance(node.get("anyOf"), list):
            stack.extend(node["anyOf"])


STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
    "$ref", "$defs", "definitions", "description", "title", "pattern", "format",
    "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems",
    "maxItems",
})


def check_openai_strict(schema: dict[str, Any]) -> None:
    """host-notes 4.2: the Structured Outputs subset and limits."""
    assert schema.get("type") == "object" and "anyOf" not in schema
    props_total = enum_total = 0
    for node in walk(schema):
        assert isinstance(node, dict), node
        assert set(node) <= STRICT_KEYWORDS, set(node) - STRICT_KEYWORDS
        if "$ref" in node:
            assert set(node) == {"$ref"}, node  # no siblings beside $ref
            ref = node["$ref"]
            assert ref == "#" or (ref.startswith(("#/$defs/", "#/definitions/"))
                                  and ref.count("/") == 2)
            continue
        assert "type" in node or "anyOf" in node, node
        types = node.get("type", [])
        types = [types] if isinstance(types, str) else types
        if "object" in types:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
            props_total += len(node["properties"])
        if "array" in types:
            assert isinstance(node["items"], dict) and node["items"]
        if "format" in node:
            assert node["format"] in OPENAI_STRICT_FORMATS
        if "enum" in node:
            enum_total += len(node["enum"])
    defs = schema.get("$defs", {})
    for first in defs:  # an alias chain ends in a real schema
        seen, node = {first}, defs[first]
        while set(node) == {"$ref"}:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            assert name not in seen, "circular $ref aliases"
            seen.add(name)
            node = defs[name]
    assert props_total <= OPENAI_MAX_PROPERTIES
    assert enum_total <= OPENAI_MAX_ENUM_VALUES


GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def check_gemini_openapi(schema: dict[str, Any]) -> None:
    """host-notes 4.4: only Schema fields, one type, string enums, non-empty properties on
    objects only, required a subset of properties, formats Gemini accepts."""
    assert schema.get("type") == "object"
    for node in walk(schema):
        assert isinstance(node, dict), node
        assert set(node) <= GEMINI_SCHEMA_FIELDS, set(node) - GEMINI_SCHEMA_FIELDS
        t = node.get("type")
        assert t is None or t in GEMINI_TYPES, t
        if "enum" in node:
            assert node["enum"] and all(isinstance(v, str) for v in node["enum"])
        if "properties" in node:
            assert t == "object" and node["properties"]
        if "required" in node:
            assert t == "object" and set(node["required"]) <= set(node.get("properties", {}))
        if "items" in node:
            assert t == "array"
        if "format" in node:
            assert node["format"] in GEMINI_FORMATS.get(str(t), ()), (t, node["format"])
        if "nullable" in node:
            assert isinstance(node["nullable"], bool)
        if "anyOf" in node:
            assert node["anyOf"]


def check_root_object(schema: dict[str, Any]) -> None:
    assert schema.get("type") == "object" and "$schema" not in schema


def check_anthropic(schema: dict[str, Any]) -> None:
    check_root_object(schema)
    assert not {"anyOf", "oneOf", "allOf"} & set(schema)


CHECKERS = {
    "openai": check_root_object, "openai-responses": check_root_object,
    "gemini": check_root_object, "anthropic": check_anthropic,
    "gemini-openapi": check_gemini_openapi,
}


def check(result: Normalized, target: str) -> None:
    """The target's documented rules, then the provider's own library."""
    assert result.target == target
    assert all(isinstance(n, Note) and n.kind in NOTE_KINDS for n in result.notes)
    assert all(n.path == "" or n.path.startswith("/") for n in result.notes)
    assert len(set(result.notes)) == len(result.notes)
    json.dumps(result.schema, allow_nan=False)
    if target in ("openai-strict", "openai-responses-strict"):
        if result.strict:
            check_openai_strict(result.schema)
            mine = copy.deepcopy(result.schema)
            assert ensure_strict_json_schema(mine) == result.schema
        else:
            check_root_object(result.schema)
            assert sum(n.kind == "not-strict" for n in result.notes) == 1
        return
    assert not result.strict
    CHECKERS[target](result.schema)
    if target == "gemini-openapi":
        parsed = genai_types.Schema.model_validate(result.schema)
        genai_types.FunctionDeclaration(name="t", parameters=parsed)
    if target == "gemini":
        genai_types.FunctionDeclaration(name="t", parameters_json_schema=result.schema)


# -- the corpus through every target -----------------------------------------------------------


def test_generated_fixtures_are_current() -> None:
    """pydantic / the SDK / fastmcp still generate what tests/schemas/generated.json holds."""
    assert generate() == json.loads((SCHEMAS / "generated.json").read_text("utf-8"))


def test_corpus_has_what_it_claims() -> None:
    text = json.dumps(CORPUS)
    for feature in ('"$defs"', '"anyOf"', '"oneOf"', '"discriminator"', '"const"',
                    '"enum"', '"additionalProperties": {"type": "integer"}', '"#/$defs/Tree"'):
        assert feature in text, feature
    assert {k.split("/")[0] for k in CORPUS} == {*CAPTURED, "pydantic", "mcp-sdk", "fastmcp"}
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_corpus_every_target(target: str) -> None:
    strict = 0
    for name, schema in CORPUS.items():
        before = copy.deepcopy(schema)
        result = normalize_schema(schema, target)
        assert schema == before, name
        check(result, target)
        strict += result.strict
    if target.endswith("strict"):
        assert strict >= len(CORPUS) - 6  # only the map-typed tools fall back


def test_corpus_strict_decisions() -> None:
    """Which real tools are strict, and the stated reason for the others."""
    not_strict = {}
    for name, schema in CORPUS.items():
        result = normalize_schema(schema, "openai-strict")
        if not result.strict:
            (why,) = [n for n in result.notes if n.kind == "not-strict"]
            not_strict[name] = why
    assert set(not_strict) == {"pydantic/Person", "pydantic/Adopt", "mcp-sdk/tag",
                               "fastmcp/tag"}
    for why in not_strict.values():
        assert why.path.endswith("/additionalProperties")
        assert "map" in why.detail


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_hostile_bounded(name: str, target: str) -> None:
    schema = HOSTILE[name]
    before = copy.deepcopy(schema)
    try:
        result = normalize_schema(schema, target)
    except SchemaError as exc:
        assert name in ("nested-beyond-limit", "fan-out-30"), (name, exc.reason)
        assert exc.reason and exc.target == target
    else:
        assert name != "nested-beyond-limit"
        check(result, target)
    assert schema == before


def test_hostile_outcomes() -> None:
    with pytest.raises(SchemaError, match="deeper"):
        normalize_schema(HOSTILE["nested-beyond-limit"], "openai")
    with pytest.raises(SchemaError, match=r"deeper|budget"):
        normalize_schema(HOSTILE["fan-out-30"], "gemini-openapi")
    with pytest.raises(SchemaError, match="budget") as info:
        normalize_schema(HOSTILE["fan-out-30"], "gemini-openapi", max_depth=200)
    assert "#" not in str(info.value) and "d29" not in str(info.value)
    deep_dag = normalize_schema(HOSTILE["fan-out-30"], "openai-strict")  # refs kept: cheap
    assert not deep_dag.strict and "31 levels of nesting" in deep_dag.notes[-1].detail
    assert normalize_schema(fan_out(OPENAI_MAX_NESTING - 2), "openai-strict").strict
    assert normalize_schema(fan_out(6), "gemini-openapi").schema["properties"]["x"]["type"] \
        == "object"
    nest = normalize_schema(HOSTILE["nested-11"], "openai-strict")
    assert not nest.strict and "nesting" in nest.notes[-1].detail
    assert normalize_schema(nested(OPENAI_MAX_NESTING - 1), "openai-strict").strict
    assert not normalize_schema(HOSTILE["1MiB"], "openai-strict").strict  # > 5000 properties
    assert len(normalize_schema(HOSTILE["1MiB"], "gemini-openapi").schema["properties"]) \
        == 20_000
    nowhere = normalize_schema(HOSTILE["ref-to-nowhere"], "gemini-openapi")
    assert nowhere.schema["properties"] == {"a": {}, "b": {}}
    assert {n.path for n in nowhere.notes if n.kind == "bad-ref"} == {
        "/properties/a/$ref", "/properties/b/$ref"}
    cycle = normalize_schema(HOSTILE["ref-cycle"], "gemini-openapi")
    assert any(n.kind == "recursion-cut" for n in cycle.notes)
    assert not normalize_schema(HOSTILE["ref-cycle"], "openai-strict").strict
    objects = normalize_schema(HOSTILE["ref-cycle-objects"], "openai-strict")
    assert objects.strict
    # a described ref is never inlined: the reference stays, alone in a one-branch anyOf
    assert objects.schema["$defs"]["A"]["properties"]["b"] == {
        "description": "to B", "anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]}
    assert objects.schema["$defs"]["B"]["properties"]["a"] == {
        "description": "to A", "anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}
    junk = normalize_schema(HOSTILE["non-dict-nodes"], "gemini-openapi")
    props = junk.schema["properties"]
    assert "f" not in props and props["t"] == props["l"] == props["n"] == {}
    assert props["any"] == {"anyOf": [{"type": "integer"}, {}]}
    # open items get a type Gemini takes (issue 21: an untyped branch is a 400)
    assert props["arr"]["items"] == {"type": "string"}
    assert {n.path for n in junk.notes if n.kind == "invalid-schema"} == {
        "/properties/l", "/properties/n", "/properties/s", "/properties/any/anyOf/2"}


def test_budget_and_depth_are_parameters() -> None:
    with pytest.raises(SchemaError):
        normalize_schema(HOSTILE["10k-nodes"], "openai", budget=5_000)
    with pytest.raises(SchemaError):
        normalize_schema(nested(10), "gemini", max_depth=10)
    assert normalize_schema(nested(10), "gemini", max_depth=40).schema == nested(10)
    bad: dict[str, Any]
    for bad in ({"budget": 0}, {"max_depth": True}, {"ref_unfold": -1},
                {"max_depth": MAX_DEPTH_LIMIT + 1}):
        with pytest.raises(ValueError):
            normalize_schema({}, "openai", **bad)
    with pytest.raises(ValueError, match="target"):
        normalize_schema({}, "claude")


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_deepest_allowed_nesting_never_recursion_error(target: str) -> None:
    """At the largest max_depth, a schema just inside it converts and one beyond is a
    SchemaError: the walk never reaches Python's recursion limit."""
    inside = {"type": "object", "properties": {"a": nested(MAX_DEPTH_LIMIT // 2 - 2)}}
    check(normalize_schema(inside, target, max_depth=MAX_DEPTH_LIMIT), target)
    with pytest.raises(SchemaError):
        normalize_schema(nested(MAX_DEPTH_LIMIT), target, max_depth=MAX_DEPTH_LIMIT)
    chain = {f"d{i}": {"type": "object", "properties": {"n": {"$ref": f"#/$defs/d{i + 1}"}}}
             for i in range(200)}
    chain["d200"] = {"type": "string"}
    linked = {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": chain}
    try:  # inlined (gemini-openapi) it nests 200 levels: too deep, never a RecursionError
        check(normalize_schema(linked, target, max_depth=MAX_DEPTH_LIMIT), target)
    except SchemaError as exc:
        assert target == "gemini-openapi" and "deeper" in exc.reason


# -- roots ---------------------------------------------------------------------------------


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_root_must_be_an_object(target: str) -> None:
    for bad in ({"type": "string"}, {"type": ["string", "null"]}, {"type": 3}):
        with pytest.raises(SchemaError) as info:
            normalize_schema(bad, target)
        assert info.value.path == "/type" and isinstance(info.value, ValueError)
    with pytest.raises(SchemaError, match="not a JSON object"):
        normalize_schema([1], target)  # type: ignore[arg-type]
    typed = normalize_schema({"properties": {"a": {"type": "string"}}}, target)
    assert typed.schema["type"] == "object"
    assert Note("/type", "added-type", "type: object added at the root (properties)") in \
        typed.notes
    narrowed = normalize_schema({"type": ["object", "null"], "properties": {}}, target)
    assert narrowed.schema["type"] == "object"


def test_minimal_targets_change_only_the_root() -> None:
    schema = CORPUS["pydantic/Person"]
    for target in ("openai", "openai-responses", "gemini", "anthropic"):
        out = normalize_schema(schema, target)
        assert out.schema == schema and out.notes == () and out.fix_arguments({"a": None}) == \
            {"a": None}
    echo = CORPUS["server_everything/echo"]
    out = normalize_schema(echo, "gemini")
    assert out.schema == {k: v for k, v in echo.items() if k != "$schema"}
    assert out.notes == (Note("/$schema", "removed",
                              "$schema removed (providers take the schema body)"),)


def test_anthropic_removes_top_level_combinators() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}},
              "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
              "allOf": [{"properties": {"n": {"oneOf": [{"type": "string"}]}}}]}
    out = normalize_schema(schema, "anthropic")
    assert out.schema == {"type": "object", "properties": {
        "a": {"type": "string"}, "n": {"oneOf": [{"type": "string"}]}},  # below: kept
        "description": "give the arguments of one of these alternatives: required: a "
                       "| required: b"}
    assert {n.path for n in out.notes} == {"/anyOf", "/allOf"}
    assert normalize_schema({}, "anthropic").schema == {"type": "object"}


# -- openai-strict -----------------------------------------------------------------------------


def strict(schema: dict[str, Any]) -> Normalized:
    result = normalize_schema(schema, "openai-strict")
    check(result, "openai-strict")
    return result


def test_strict_closes_completes_and_nulls() -> None:
    out = strict({"type": "object", "properties": {
        "q": {"type": "string", "minLength": 3, "description": "Query"},
        "n": {"type": "integer", "default": 5},
        "mode": {"enum": ["a", "b"]},
        "when": {"type": "string", "format": "uri"},
        "nested": {"type": "object", "properties": {"x": {"type": "number"}}},
        "keep": {"type": ["string", "null"]},
        "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    }, "required": ["q"]})
    assert out.strict
    props = out.schema["properties"]
    assert props["q"] == {"type": "string", "description": "Query (minLength: 3)"}
    assert props["n"] == {"type": ["integer", "null"]}
    assert props["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert props["when"] == {"type": ["string", "null"], "description": 'format: "uri"'}
    assert props["nested"] == {"anyOf": [{
        "type": "object", "properties": {"x": {"type": ["number", "null"]}},
        "required": ["x"], "additionalProperties": False}, {"type": "null"}]}
    assert props["keep"] == {"type": ["string", "null"]}
    assert props["pick"] == {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    kinds = {(n.path, n.kind) for n in out.notes}
    assert {("/properties/q/minLength", "moved-to-description"),
            ("/properties/n/default", "removed"), ("/properties/n", "made-nullable"),
            ("/properties/pick/oneOf", "one-of-to-any-of"),
            ("/properties/when/format", "moved-to-description")} <= kinds
    assert ("/properties/keep", "made-nullable") not in kinds


@pytest.mark.parametrize(("schema", "where", "why"), [
    ({"type": "object", "properties": {"m": {"type": "object",
                                            "additionalProperties": {"type": "integer"}}}},
     "/properties/m/additionalProperties", "map"),
    ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": True}}},
     "/properties/m/additionalProperties", "map"),
    ({"type": "object", "properties": {"m": {"type": "object"}}}, "/properties/m", "map"),
    ({"type": "object", "additionalProperties": {}}, "/additionalProperties", "map"),
    ({"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}}]}, "/anyOf",
     "root"),
    ({"type": "object", "properties": {"a": {"type": "array"}}}, "/properties/a/items",
     "untyped items"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {}}}},
     "/properties/a/items", "untyped items"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": True}}},
     "/properties/a/items", "untyped items"),
    ({"type": "object", "properties": {"a": {"description": "anything"}}}, "/properties/a",
     "no type"),
    ({"type": "object", "properties": {"a": True}}, "/properties/a", "any value"),
    ({"type": "object", "patternProperties": {"^x": {"type": "string"}}},
     "/patternProperties", "patternProperties"),
    ({"type": "object", "properties": {"a": {"type": "string", "not": {"enum": ["x"]}}}},
     "/properties/a/not", "not"),
    ({"type": "object", "properties": {"a": {"allOf": [
        {"type": "object", "properties": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"y": {"type": "string"}}}]}}},
     "/properties/a/allOf", "cannot be merged"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/S", "pattern": "^b"}},
      "$defs": {"S": {"type": "string", "pattern": "^a"}}}, "/properties/a", "cannot be merged"),
    ({"type": "object", "properties": {"a": {"$ref": "#/properties/b"},
                                       "b": {"type": "string"}}},
     "/properties/a/$ref", "location"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}, "/properties/a/$ref",
     "resolve"),
    ({"type": "object", "properties": {
        "e": {"enum": [f"v{i}" for i in range(OPENAI_MAX_ENUM_VALUES + 1)]}},
      "required": ["e"]}, "", "enum values"),
])
def test_strict_falls_back_with_a_reason(schema: dict[str, Any], where: str, why: str) -> None:
    out = strict(schema)
    assert not out.strict
    (note,) = [n for n in out.notes if n.kind == "not-strict"]
    assert note.path == where and why in note.detail, note
    assert out.schema == normalize_schema(schema, "openai").schema  # the shape kept
    assert out.fix_arguments({"a": None}) == {"a": None}


def test_strict_zero_argument_tool_is_closed() -> None:
    out = strict(CORPUS["server_everything/get-env"])
    assert out.schema == {"type": "object", "properties": {}, "required": [],
                          "additionalProperties": False}
    assert strict({}).schema == out.schema


def test_strict_refs_kept_and_siblings_handled() -> None:
    schema = {"type": "object", "properties": {
        "plain": {"$ref": "#/$defs/P"},
        "described": {"$ref": "#/$defs/P", "description": "the point"},
        "bounded": {"$ref": "#/$defs/N", "maximum": 9},
        "alias": {"$ref": "#/$defs/Alias", "description": "via alias"},
    }, "required": ["plain", "described", "bounded", "alias"],
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}},
                        "required": ["x"]},
                  "N": {"type": "integer", "minimum": 1},
                  "Alias": {"$ref": "#/$defs/P"},
                  "Unused": {"type": "object"}}}
    out = strict(schema)
    assert out.strict
    props = out.schema["properties"]
    assert props["plain"] == {"$ref": "#/$defs/P"}
    point = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"],
             "additionalProperties": False}
    assert point == out.schema["$defs"]["P"]
    assert props["described"] == {"description": "the point", "anyOf": [{"$ref": "#/$defs/P"}]}
    assert props["bounded"] == {"type": "integer", "minimum": 1, "maximum": 9}
    assert props["alias"] == {"description": "via alias", "anyOf": [{"$ref": "#/$defs/Alias"}]}
    assert set(out.schema["$defs"]) == {"P", "Alias"}  # Unused (a map) dropped, noted
    assert Note("/$defs/Unused", "removed", "unused definition removed") in out.notes


def test_strict_recursive_models() -> None:
    tree = strict(CORPUS["pydantic/Tree"])
    assert tree.strict
    defs = tree.schema["$defs"]["Tree"]
    assert defs["properties"]["children"] == {
        "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Tree"}}, {"type": "null"}],
        "title": "Children"}
    root = strict(HOSTILE["self-recursive"])
    assert root.strict
    assert root.schema["properties"]["kids"]["anyOf"][0]["items"] == {"$ref": "#"}


def test_strict_discriminated_union_and_const() -> None:
    out = strict(CORPUS["mcp-sdk/adopt"])
    assert out.strict
    assert out.schema["$defs"]["Cat"]["properties"]["kind"] == {
        "type": "string", "enum": ["cat"], "title": "Kind"}
    assert out.schema["properties"]["pet"]["anyOf"] == [
        {"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    assert ("/properties/pet/discriminator", "removed") in {(n.path, n.kind)
                                                            for n in out.notes}


def test_strict_agents_rejects_what_we_refuse() -> None:
    """The library check can fail: openai-agents raises on the maps we send non-strict."""
    for name in ("pydantic/Person", "fastmcp/tag"):
        out = normalize_schema(CORPUS[name], "openai-strict")
        assert not out.strict
        with pytest.raises(UserError):
            ensure_strict_json_schema(copy.deepcopy(out.schema))


# -- fix_arguments -----------------------------------------------------------------------------


def test_fix_arguments_strips_only_our_nulls() -> None:
    out = strict(CORPUS["mcp-sdk/adopt"])
    args = {"pet": {"kind": "dog", "bark": None}, "tree": {
        "name": "root", "children": [{"name": "leaf", "children": None}]},
        "note": None, "when": None}
    before = copy.deepcopy(args)
    assert out.fix_arguments(args) == {
        "pet": {"kind": "dog", "bark": None},     # Dog.bark: str | None: the source allows null
        "tree": {"name": "root", "children": [{"name": "leaf"}]},  # through $ref and arrays
        "note": None}                             # note: str | None
    assert args == before
    cat = out.fix_arguments({"pet": {"kind": "cat", "lives": None}, "tree": {"name": "t"}})
    assert cat == {"pet": {"kind": "cat"}, "tree": {"name": "t"}}  # branch chosen by keys


def test_fix_arguments_nested_objects_and_shapes() -> None:
    out = strict({"type": "object", "properties": {
        "a": {"type": "object", "properties": {"b": {"type": "string"},
                                               "c": {"type": "string"}}, "required": ["c"]},
        "list": {"type": "array", "items": {"type": "object", "properties": {
            "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x"]}}},
        "required": ["a", "list"]})
    assert out.fix_arguments({"a": {"b": None, "c": None}, "list": [
        {"x": None, "y": None}, 7, None, {"y": 1}]}) == {
        "a": {"c": None}, "list": [{"x": None}, 7, None, {"y": 1}]}
    assert out.fix_arguments({"a": "odd", "list": {"x": None}, "z": None}) == {
        "a": "odd", "list": {"x": None}, "z": None}
    assert out.fix_arguments(None) == {}
    assert out.fix_arguments([1, 2]) == {}  # type: ignore[arg-type]
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    assert out.fix_arguments(deep) == deep


def test_fix_arguments_other_targets_copy() -> None:
    args = {"a": None}
    for target in ("openai", "gemini-openapi", "anthropic"):
        result = normalize_schema({"type": "object", "properties": {"a": {"type": "string"}}},
                                  target).fix_arguments(args)
        assert result == args and result is not args


# -- gemini-openapi ----------------------------------------------------------------------------


def gemini(schema: dict[str, Any], **kw: Any) -> Normalized:
    result = normalize_schema(schema, "gemini-openapi", **kw)
    check(result, "gemini-openapi")
    return result


def test_gemini_types_nulls_and_unions() -> None:
    out = gemini({"type": "object", "properties": {
        "a": {"type": ["string", "null"]},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "B"},
        "c": {"type": ["string", "integer"]},
        "d": {"oneOf": [{"type": "string"}, {"type": "object", "properties": {
            "x": {"type": "string"}}}]},
        "e": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
    }})
    p = out.schema["properties"]
    assert p["a"] == {"type": "string", "nullable": True}
    assert p["b"] == {"type": "integer", "description": "B", "nullable": True}
    assert p["c"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert p["d"] == {"anyOf": [{"type": "string"}, {"type": "object",
                                                    "properties": {"x": {"type": "string"}}}]}
    assert p["e"] == {"nullable": True, "anyOf": [{"type": "string"}, {"type": "integer"}]}
    kinds = {n.kind for n in out.notes}
    assert {"type-array-to-nullable", "null-branch-to-nullable", "type-array-to-any-of",
            "one-of-to-any-of"} <= kinds


def test_gemini_keywords() -> None:
    out = gemini({"type": "object", "properties": {
        "n": {"type": "integer", "enum": [1, 2, 3], "exclusiveMinimum": 0},
        "s": {"type": "string", "const": "x", "format": "uri", "examples": ["a", "b"]},
        "c": {"const": 3},
        "t": {"type": "string", "format": "date-time", "pattern": "^2", "minLength": 1},
        "i": {"type": "integer", "format": "int64", "minimum": 0, "default": 3},
        "m": {"type": "object", "additionalProperties": {"type": "integer"},
              "propertyNames": {"pattern": "^a"}},
        "o": {"type": "object", "properties": {}},
        "x": {"type": "string", "if": {}, "then": {}, "not": {}, "x-custom": 1,
              "title": "X"},
        "u": {"description": "anything"},
    }, "required": ["n", "ghost"], "additionalProperties": False})
    p = out.schema["properties"]
    assert p["n"] == {"type": "integer", "description":
                      "exclusiveMinimum: 0; Allowed values: 1, 2, 3"}
    assert p["s"] == {"type": "string", "enum": ["x"], "example": "a",
                      "description": 'format: "uri"'}
    assert p["c"] == {"type": "integer", "description": "Must be: 3"}  # typed by its value
    assert p["t"] == {"type": "string", "format": "date-time", "pattern": "^2", "minLength": 1}
    assert p["i"] == {"type": "integer", "format": "int64", "minimum": 0, "default": 3}
    assert p["m"] == {"type": "object"}
    assert p["o"] == {"type": "object"}
    assert p["x"] == {"type": "string", "title": "X"}
    assert p["u"] == {"description": "anything"}
    assert out.schema["required"] == ["n"]
    assert "additionalProperties" not in out.schema
    removed = {n.path for n in out.notes if n.kind == "removed"}
    assert {"/properties/m/additionalProperties", "/properties/m/propertyNames",
            "/properties/x/if", "/properties/x/not", "/properties/x/x-custom",
            "/required", "/additionalProperties", "/properties/o/properties"} <= removed
    assert Note("/properties/u", "untyped", "no type and none to infer; left typeless "
                "(Gemini may refuse a typeless value)") in out.notes


def test_gemini_zero_argument_tool() -> None:
    assert gemini(CORPUS["server_everything/get-env"]).schema == {"type": "object"}


def test_gemini_inlines_and_cuts_recursion() -> None:
    for unfold in (0, 1, 3):
        out = gemini(CORPUS["pydantic/Tree"], ref_unfold=unfold)
        node = out.schema
        levels = 0
        while "properties" in node:
            node = node["properties"]["children"]["items"]
            levels += 1
        assert node == {"type": "object", "description": "Tree (recursive; structure omitted)"}
        assert levels == unfold + 1  # the first use, then `unfold` recursions
        assert any(n.kind == "recursion-cut" and n.path.startswith("/$defs/Tree")
                   for n in out.notes)
    adopt_schema = gemini(CORPUS["fastmcp/adopt"]).schema
    assert "$ref" not in json.dumps(adopt_schema) and "$defs" not in adopt_schema


def test_gemini_ref_siblings_are_an_intersection() -> None:
    out = gemini({"type": "object", "properties": {
        "a": {"$ref": "#/$defs/S", "maxLength": 3, "description": "A"},
        "b": {"$ref": "#/$defs/S", "minLength": 2}},
        "$defs": {"S": {"type": "string", "maxLength": 5, "description": "S"}}})
    p = out.schema["properties"]
    # both apply: the tighter maxLength (issue 21: never one side's alone)
    assert p["a"] == {"type": "string", "maxLength": 3, "description": "A"}
    assert p["b"] == {"type": "string", "maxLength": 5, "description": "S", "minLength": 2}


def test_gemini_all_of_merged() -> None:
    out = gemini({"type": "object", "properties": {"a": {"allOf": [
        {"$ref": "#/$defs/Base"},
        {"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"]}]}},
        "$defs": {"Base": {"type": "object", "properties": {"x": {"type": "string"}},
                           "required": ["x"]}}})
    assert out.schema["properties"]["a"] == {
        "type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}},
        "required": ["x", "y"]}


def test_gemini_library_rejects_what_we_remove() -> None:
    """The library check can fail: google-genai refuses the keys gemini-openapi removes."""
    bad: dict[str, Any]
    for bad in ({"type": "integer", "enum": [1, 2]}, {"type": ["string", "null"]},
                {"$schema": "x"}, {"const": "a"}, {"$ref": "#"}, {"$defs": {}},
                {"exclusiveMinimum": 1}, {"oneOf": [{"type": "string"}]}):
        with pytest.raises((ValueError, AttributeError)):  # AttributeError: a type list
            genai_types.Schema.model_validate(bad)


# -- properties --------------------------------------------------------------------------------

KEYWORDS = st.sampled_from([
    "type", "properties", "required", "items", "anyOf", "oneOf", "allOf", "enum", "const",
    "additionalProperties", "default", "description", "minLength", "format", "$ref", "not",
    "nullable", "examples", "patternProperties", "title", "minimum", "exclusiveMaximum",
])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])
REFS = st.sampled_from(["#", "#/$defs/A", "#/$defs/B", "#/$defs/Missing", "#/properties/a",
                        "x.json"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))


def schema_like(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    value_for = {
        "type": st.one_of(TYPES, st.lists(TYPES, max_size=3), SCALARS),
        "properties": st.dictionaries(st.sampled_from(["a", "b", "c/d", "~e"]), children,
                                      max_size=3),
        "required": st.lists(st.sampled_from(["a", "b", "z", 1]), max_size=3),
        "items": st.one_of(children, st.lists(children, max_size=2)),
        "anyOf": st.lists(children, max_size=3), "oneOf": st.lists(children, max_size=3),
        "allOf": st.lists(children, max_size=2), "not": children,
        "enum": st.lists(SCALARS, max_size=3), "const": SCALARS,
        "additionalProperties": st.one_of(st.booleans(), children),
        "patternProperties": st.dictionaries(st.just("^x"), children, max_size=1),
        "$ref": REFS, "format": st.sampled_from(["uri", "date-time", "int32", "email"]),
    }
    pairs = KEYWORDS.flatmap(lambda k: st.tuples(st.just(k), value_for.get(k, SCALARS)))
    return st.one_of(st.booleans(), st.lists(pairs, max_size=5).map(dict))


SCHEMA_LIKE: st.SearchStrategy[Any] = st.recursive(st.builds(dict), schema_like, max_leaves=12)
ROOTS = st.tuples(SCHEMA_LIKE, st.dictionaries(st.sampled_from(["A", "B"]), SCHEMA_LIKE,
                                               max_size=2)).map(
    lambda p: {**p[0], "$defs": p[1]} if isinstance(p[0], dict) else {"$defs": p[1]})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROOTS, st.sampled_from(SCHEMA_TARGETS))
def test_random_schemas(schema: dict[str, Any], target: str) -> None:
    before = copy.deepcopy(schema)
    try:
        result = normalize_schema(schema, target)
    except SchemaError:
        assert schema == before
        return
    assert schema == before
    check(result, target)
    result.fix_arguments({"a": None, "b": [None, {"a": None}]})


def _all_notes(result: Normalized) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for note in result.notes:
        counts[note.kind] = counts.get(note.kind, 0) + 1
    return counts


def test_notes_point_into_the_source() -> None:
    """Every note's path resolves in the source schema, up to the keyword it names (which
    may be absent: the type a note says was added, a sibling of $ref merged into a
    definition)."""
    for name, schema in CORPUS.items():
        for target in SCHEMA_TARGETS:
            for note in normalize_schema(schema, target).notes:
                node: Any = schema
                parts = [p.replace("~1", "/").replace("~0", "~")
                         for p in note.path.split("/")[1:]]
                for i, part in enumerate(parts):
                    if isinstance(node, list):
                        node = node[int(part)]
                    elif part in node:
                        node = node[part]
                    else:
                        assert i == len(parts) - 1, (name, note)
        assert _all_notes(normalize_schema(schema, "openai")).keys() <= {"removed",
                                                                         "added-type"}


# -- review regressions ------------------------------------------------------------------------


def valid(schema: Mapping[str, Any], instance: Any) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(instance))


def alias_chain(length: int, through_any_of: bool = False) -> dict[str, Any]:
    """An optional property pointing at ``A0 -> A1 -> ... -> A<length>`` (aliases, or anyOf
    branches of the next one): small, and one recursion per hop for a naive walk."""
    defs: dict[str, Any] = {
        f"A{i}": {"anyOf": [{"$ref": f"#/$defs/A{i + 1}"}, {"type": "integer"}]}
        if through_any_of else {"$ref": f"#/$defs/A{i + 1}"} for i in range(length)}
    defs[f"A{length}"] = {"type": "string"}
    return {"type": "object", "properties": {"p": {"$ref": "#/$defs/A0"}}, "$defs": defs}


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
@pytest.mark.parametrize("through_any_of", [False, True])
def test_long_ref_chains_never_recursion_error(target: str, through_any_of: bool) -> None:
    schema = alias_chain(1200, through_any_of)
    before = copy.deepcopy(schema)
    try:
        check(normalize_schema(schema, target), target)
    except SchemaError as exc:
        assert exc.target == target and exc.reason
    assert schema == before
    short = normalize_schema(alias_chain(3, through_any_of), "openai-strict")
    assert short.strict  # a short chain still converts


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
@pytest.mark.parametrize("error", [RecursionError, OverflowError])
def test_internal_recursion_and_overflow_become_schema_errors(
        monkeypatch: pytest.MonkeyPatch, target: str, error: type[Exception]) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise error("deep inside")
    monkeypatch.setattr(schema_module, "_prepare_root", boom)
    with pytest.raises(SchemaError) as info:
        normalize_schema({"type": "object"}, target)
    assert info.value.target == target and "deep inside" not in str(info.value)


def test_huge_ints_and_non_finite_numbers() -> None:
    huge = json.loads('{"type": "object", "properties": {"a": {"type": "integer", '
                      '"exclusiveMinimum": 1' + "0" * 400 + ', "minimum": 1' + "0" * 400
                      + "}}, \"required\": [\"a\"]}")
    out = strict(huge)
    assert out.strict and out.schema["properties"]["a"]["minimum"] == 10 ** 400
    assert out.schema["properties"]["a"]["exclusiveMinimum"] == 10 ** 400
    gem = gemini(huge)  # Gemini's numbers are floats: 10**400 does not fit, so removed
    assert "minimum" not in gem.schema["properties"]["a"]
    assert any(n.path == "/properties/a/minimum" and n.kind == "removed" for n in gem.notes)
    nan = strict({"type": "object", "properties": {"a": {
        "type": "number", "minimum": float("nan"), "maximum": float("inf"),
        "default": float("nan")}}, "required": ["a"]})
    assert nan.strict and nan.schema["properties"]["a"] == {"type": "number"}
    assert {"/properties/a/minimum", "/properties/a/maximum"} <= {
        n.path for n in nan.notes if n.kind == "removed"}
    for bad in ({"enum": [1.0, float("nan")]}, {"const": float("-inf")}):
        schema = {"type": "object", "properties": {"a": {"type": "number", **bad}},
                  "required": ["a"]}
        result = normalize_schema(schema, "openai-strict")
        assert not result.strict
        assert any(n.kind == "not-strict" and n.path.startswith("/properties/a")
                   for n in result.notes)


def test_strict_refuses_objects_whose_branches_would_accept_nothing() -> None:
    properties_and_branches = {"type": "object", "properties": {"q": {
        "type": "object", "properties": {"x": {"type": "string"}},
        "anyOf": [{"type": "object", "properties": {"y": {"type": "integer"}}},
                  {"type": "object", "properties": {"z": {"type": "integer"}}}]}},
        "required": ["q"]}
    unevaluated_over_branches = {"type": "object", "properties": {"q": {
        "type": "object", "anyOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]}],
        "unevaluatedProperties": False}}, "required": ["q"]}
    untyped_unevaluated = {"type": "object", "properties": {"q": {
        "anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}],
        "unevaluatedProperties": False}}, "required": ["q"]}
    for schema, args in ((properties_and_branches, {"q": {"x": "a", "y": 1}}),
                         (unevaluated_over_branches, {"q": {"a": "x"}}),
                         (untyped_unevaluated, {"q": {"a": "x"}})):
        assert valid(schema, args)
        out = strict(schema)
        assert not out.strict, out.schema
        (why,) = [n for n in out.notes if n.kind == "not-strict"]
        assert why.path.startswith("/properties/q")
        assert out.schema == normalize_schema(schema, "openai").schema
    alone = strict({"type": "object", "properties": {"a": {"type": "string"}},
                    "required": ["a"], "unevaluatedProperties": False})
    assert alone.strict and alone.schema["additionalProperties"] is False


def test_fix_arguments_applies_the_parents_fix_beside_branches() -> None:
    item = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"]}
    schema = {"type": "object", "properties": {"xs": {
        "type": "array", "items": item,
        "anyOf": [{"type": "array", "items": item, "maxItems": 2},
                  {"type": "array", "items": item, "minItems": 5}]}}, "required": ["xs"]}
    out = strict(schema)
    assert out.strict
    args = {"xs": [{"a": "x", "b": None}]}
    assert valid(out.schema, args) and not valid(schema, args)
    assert out.fix_arguments(args) == {"xs": [{"a": "x"}]}


def described_dag(levels: int) -> dict[str, Any]:
    """pydantic's shape for a model with two described fields of the next model."""
    defs: dict[str, Any] = {f"M{levels - 1}": {"type": "object", "properties": {
        "v": {"type": "string"}}, "required": ["v"]}}
    for i in range(levels - 1):
        defs[f"M{i}"] = {"type": "object", "properties": {
            "l": {"$ref": f"#/$defs/M{i + 1}", "description": "left"},
            "r": {"$ref": f"#/$defs/M{i + 1}", "description": "right"}}, "required": ["l", "r"]}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/M0",
                                                      "description": "root"}},
            "required": ["root"], "$defs": defs}


def test_strict_described_refs_stay_linear() -> None:
    dag = strict(described_dag(18))  # inlined, 2**18 copies: over the budget
    assert not dag.strict  # (deeper than OpenAI's ten levels) but never dropped
    assert len(json.dumps(dag.schema)) < 2 * len(json.dumps(described_dag(18)))
    small = strict(described_dag(4))
    assert small.strict
    assert small.schema["$defs"]["M0"]["properties"]["l"] == {
        "description": "left", "anyOf": [{"$ref": "#/$defs/M1"}]}
    assert small.schema["properties"]["root"] == {"description": "root",
                                                  "anyOf": [{"$ref": "#/$defs/M0"}]}
    optional = strict({"type": "object", "properties": {"n": {
        "$ref": "#/$defs/N", "description": "d"}}, "$defs": {"N": {
            "type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}}})
    assert optional.strict
    assert optional.schema["properties"]["n"] == {
        "description": "d", "anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
    assert set(optional.schema["$defs"]) == {"N"}  # used, so kept
    assert optional.fix_arguments({"n": None}) == {}


def test_strict_over_budget_falls_back_to_the_plain_form() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {
        "anyOf": [{"type": "integer"}, {"type": "string"}]} for i in range(200)}}
    budget = 1_200  # the source (~600 nodes) fits; the strict conversion does not
    out = normalize_schema(schema, "openai-strict", budget=budget)
    assert not out.strict and out.schema == normalize_schema(schema, "openai").schema
    (why,) = [n for n in out.notes if n.kind == "not-strict"]
    assert "budget" in why.detail


class OptionalCat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int | None = None
    name: str = "x"


class OptionalDog(BaseModel):
    kind: Literal["dog"] = "dog"
    lives: int | None = None
    name: str = "x"


class Home(BaseModel):
    pet: OptionalCat | OptionalDog


def test_fix_arguments_optional_discriminators() -> None:
    def pet(name: str) -> dict[str, Any]:
        return {"type": "object", "properties": {"kind": {"const": name},
                                                 "lives": {"type": "integer"}}}
    schema = {"type": "object", "properties": {"pet": {"anyOf": [
        {"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}}, "required": ["pet"],
        "$defs": {"Cat": pet("cat"), "Dog": pet("dog")}}
    out = strict(schema)
    assert out.fix_arguments({"pet": {"kind": "dog", "lives": None}}) == {"pet": {"kind": "dog"}}
    # the kind sent as null: both branches match, and both strip lives and kind
    assert out.fix_arguments({"pet": {"kind": None, "lives": None}}) == {"pet": {}}
    home = Home.model_json_schema()
    h_out = strict(home)
    assert h_out.strict
    for args in ({"pet": {"kind": "dog", "lives": None, "name": None}},
                 {"pet": {"kind": "cat", "lives": 3, "name": None}}):
        assert valid(h_out.schema, args)
        fixed = h_out.fix_arguments(args)
        assert valid(home, fixed), fixed
        assert "name" not in fixed["pet"]
    twins = {"type": "object", "properties": {"u": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
         "required": ["b"]},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
         "required": ["b"]}]}}, "required": ["u"]}
    t_out = strict(twins)
    assert t_out.fix_arguments({"u": {"a": None, "b": 1}}) == {"u": {"b": 1}}


def test_gemini_type_list_keywords_go_to_their_branch() -> None:
    out = gemini({"type": "object", "properties": {
        "v": {"type": ["object", "array"], "properties": {"a": {"type": "string"}},
              "required": ["a"], "items": {"type": "string"}, "minItems": 1},
        "w": {"type": ["string", "object", "null"], "properties": {"a": {"type": "string"}},
              "maxLength": 3}}})
    p = out.schema["properties"]
    assert p["v"] == {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "array", "items": {"type": "string"}, "minItems": 1}]}
    assert p["w"] == {"nullable": True, "anyOf": [
        {"type": "string", "maxLength": 3},
        {"type": "object", "properties": {"a": {"type": "string"}}}]}


def test_anthropic_root_combinators_keep_every_parameter() -> None:
    merged = normalize_schema({
        "type": "object", "allOf": [
            {"$ref": "#/$defs/Base"},
            {"properties": {"q": {"type": "string"}}, "required": ["q"]}],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}},
                           "required": ["id"]}}}, "anthropic")
    check(merged, "anthropic")
    assert merged.schema["properties"] == {"id": {"type": "integer"}, "q": {"type": "string"}}
    assert merged.schema["required"] == ["id", "q"]
    assert any(n.path == "/allOf" and n.kind == "merged" for n in merged.notes)
    union = normalize_schema({"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string"}, "c": {"type": "integer"}},
         "required": ["a", "c"]},
        {"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "string"}},
         "required": ["b", "c"]}]}, "anthropic")
    check(union, "anthropic")
    props = union.schema["properties"]
    assert set(props) == {"a", "b", "c"} and props["a"] == {"type": "string"}
    assert props["c"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert union.schema["required"] == ["c"]  # required in every alternative
    assert "a" in union.schema["description"] and "b" in union.schema["description"]
    assert any(n.path == "/anyOf" and n.kind == "moved-to-description" for n in union.notes)


def test_strict_keyword_values_are_checked() -> None:
    schema = {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": "x", "maximum": True, "multipleOf": 0},
        "xs": {"type": "array", "items": {"type": "string", "pattern": {}},
               "minItems": True, "maxItems": -1},
        "s": {"type": "string", "description": 5, "title": ["t"]},
        "r": {"$ref": "#/$defs/S", "description": {"x": 1}}},
        "required": ["n", "xs", "s", "r"], "$defs": {"S": {"type": "string"}}}
    out = strict(schema)
    assert out.strict
    p = out.schema["properties"]
    assert p["n"] == {"type": "integer"}
    assert p["xs"] == {"type": "array", "items": {"type": "string"}}
    assert p["s"] == {"type": "string"}
    assert p["r"] == {"$ref": "#/$defs/S"}
    removed = {n.path for n in out.notes if n.kind == "removed"}
    assert {"/properties/n/minimum", "/properties/n/maximum", "/properties/n/multipleOf",
            "/properties/xs/items/pattern", "/properties/xs/minItems",
            "/properties/xs/maxItems", "/properties/s/description", "/properties/s/title",
            "/properties/r/description"} <= removed
