"""Fuzz harness for :func:`mcp_proto.host.normalize_schema` (tool schemas per provider).

``check(data)`` reads a tool's ``inputSchema`` from the data two ways, chosen by its first
byte:

- **raw** (``{``, ``[`` or whitespace first): the data is the schema's JSON;
- **structured** (otherwise): the schema is drawn from the data, keyword by keyword: types
  (lists of them, ``null``), properties, required, additionalProperties, items (lists too),
  anyOf / oneOf / allOf, ``$ref`` (local, recursive, missing, escaped, remote) and ``$defs`` /
  ``definitions``, enum and const (large, mixed, holding a marker), formats, numeric and
  length constraints (huge numbers, wrong types), not / if / patternProperties / prefixItems
  and other keywords a target refuses, annotations; schemas that are ``true``, a number or a
  list; and shapes that stress the bounds: property chains nested around ``max_depth``, an
  ``allOf`` of hundreds of entries, an exponential ``$ref`` fan-out, recursive definitions.

The limits (``max_depth``, ``budget``, ``ref_unfold``) are drawn too; the schema goes to every
target of :data:`SCHEMA_TARGETS`.

Properties (any violation raises AssertionError):

- only :class:`SchemaError` escapes (``ValueError`` only for a bad target or limit, which the
  harness never passes); its message quotes no schema value nor property name;
- bounded output: nesting (containers) at most ``max_depth``, containers at most ``budget``,
  ``json.dumps`` works (no NaN, no infinity) and, for ``gemini-openapi``, every number fits a
  double;
- the input is never changed and no container of the output is one of the input's;
- the same call gives the same result; notes have a kind of :data:`NOTE_KINDS`, a JSON
  pointer path, and no repeats; ``strict`` only for ``openai-strict`` (and its alias);
- the root is ``type: object``; ``anthropic``: no root ``anyOf`` / ``oneOf`` / ``allOf``;
  ``gemini-openapi``: only ``Schema`` fields (:data:`GEMINI_SCHEMA_FIELDS`), no ``$ref``;
  a strict result: every object closed (``additionalProperties: false``) with every property
  required, no ``oneOf``, at most :data:`OPENAI_MAX_PROPERTIES` properties and
  :data:`OPENAI_MAX_ENUM_VALUES` enum values;
- :meth:`Normalized.fix_arguments` never raises, returns a dict, never mutates the arguments.

Run: ``python fuzz/fuzz_schema.py /tmp/fz/schema fuzz/corpus/schema -dict=fuzz/schema.dict``.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto.host import SCHEMA_TARGETS, Normalized, SchemaError, normalize_schema
from mcp_proto.host.schema._normalize import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_DEPTH,
    DEFAULT_REF_UNFOLD,
    GEMINI_SCHEMA_FIELDS,
    NOTE_KINDS,
    OPENAI_MAX_ENUM_VALUES,
    OPENAI_MAX_PROPERTIES,
)

#: A schema value and a property name that no SchemaError message may quote.
SECRET = "S3CRET-m4rker"
SECRET_NAME = "s3cret_prop_m4rker"
STRICT_TARGETS = ("openai-strict", "openai-responses-strict")
#: Inputs nested deeper are not copied to check they are left unchanged (the copy recurses).
MAX_COMPARED_DEPTH = 300
_FLOAT_MAX = sys.float_info.max

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

# -- drawing a schema ---------------------------------------------------------------------

TYPES: tuple[Any, ...] = ("object", "string", "integer", "number", "boolean", "array",
                          "null", ["string", "null"], ["object", "null"],
                          ["integer", "string"], ["array", "object", "null"], "bogus", 5, [])
NAMES = ("a", "b", "c", "$ref", "properties", "", "~/x", "\u00e9", SECRET_NAME, "type")
REFS: tuple[Any, ...] = ("#/$defs/A", "#/$defs/B", "#", "#/properties/a", "#/definitions/A",
                         "#/$defs/missing", "https://example.com/s.json", "#/$defs/A~1B",
                         "#/$defs/%41", "#/$defs/A/properties/x", 5, "")
FORMATS: tuple[Any, ...] = ("date-time", "email", "uri", "uuid", "int32", "int64", "float",
                            "double", "enum", "bogus", 5)
NUMBERS: tuple[Any, ...] = (0, 3, -1, 1.5, 10**400, -(10**400), 1e308, 2**53 + 1, True, "3")
SCALARS: tuple[Any, ...] = (None, True, 0, 1.5, "x", "", SECRET, 10**30, [], {})
ANNOTATION_KEYS = ("description", "title", "default", "examples", "example", "$comment",
                   "deprecated", "readOnly", "$id", "$schema", "nullable", "discriminator")
REFUSED_KEYS = ("not", "if", "then", "else", "patternProperties", "prefixItems", "contains",
                "unevaluatedProperties", "dependentSchemas", "propertyNames",
                "additionalItems", "$dynamicRef")
CONSTRAINT_KEYS = ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
                   "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "minProperties",
                   "maxProperties", "uniqueItems", "minContains", "pattern")


def draw_schema(ch: Choices, depth: int) -> Any:
    if depth > 6 or ch.chance(8):
        return ch.pick((True, False, 5, [], "x", None, {}))
    node: dict[str, Any] = {}
    for _ in range(ch.below(5 if depth else 7)):
        k = ch.below(16)
        if k <= 1:
            node["type"] = ch.pick(TYPES)
        elif k <= 3:
            node["properties"] = {ch.pick(NAMES): draw_schema(ch, depth + 1)
                                  for _ in range(ch.below(4))}
            if ch.chance(2):
                node["required"] = [ch.pick(NAMES) for _ in range(ch.below(3))]
        elif k == 4:
            node["required"] = ch.pick((["a"], [], "a", [1], ["a", "a"], [SECRET_NAME]))
        elif k == 5:
            node["additionalProperties"] = ch.pick((True, False, "x")) if ch.chance(2) \
                else draw_schema(ch, depth + 1)
        elif k == 6:
            node["items"] = draw_schema(ch, depth + 1) if ch.chance(2) \
                else [draw_schema(ch, depth + 1) for _ in range(ch.below(3))]
        elif k <= 8:
            node[ch.pick(("anyOf", "oneOf", "allOf"))] = (
                [draw_schema(ch, depth + 1) for _ in range(ch.below(4))]
                if not ch.chance(8) else ch.pick(({}, [5], "x")))
        elif k == 9:
            node["$ref"] = ch.pick(REFS)
        elif k == 10:
            node[ch.pick(("$defs", "definitions"))] = {
                ch.pick(("A", "B", "A/B", "C")): draw_schema(ch, depth + 1)
                for _ in range(1 + ch.below(3))}
        elif k == 11:
            node["enum"] = ch.pick((["a", "b"], [1, "a", None], [], "x", [[1]], [SECRET],
                                    [f"v{i}" for i in range(300)], [True, 1], [1.5, 10**400]))
        elif k == 12:
            node["const"] = ch.pick(SCALARS)
        elif k == 13:
            key = ch.pick(CONSTRAINT_KEYS)
            node[key] = ch.pick(("^a+$", "(", SECRET)) if key == "pattern" \
                else ch.pick(NUMBERS)
            if ch.chance(3):
                node["format"] = ch.pick(FORMATS)
        elif k == 14:
            key = ch.pick(ANNOTATION_KEYS)
            node[key] = ch.pick((SECRET, "d", "", 5, [SECRET], {"propertyName": "a"},
                                 "x" * 500, True))
        else:
            key = ch.pick(REFUSED_KEYS)
            node[key] = draw_schema(ch, depth + 1) if key != "patternProperties" else {
                "^x": draw_schema(ch, depth + 1)}
    return node


def special_schema(ch: Choices) -> dict[str, Any]:
    """Shapes at the bounds: deep chains, a wide allOf, a $ref fan-out, recursion."""
    k = ch.below(5)
    if k == 0:
        levels = ch.pick((8, 30, 31, 32, 33, 62, 63, 64, 65, 100, 127, 128, 129, 300))
        leaf: Any = {"type": "string", "description": SECRET}
        for _ in range(levels):
            leaf = {"type": "object", "properties": {ch.pick(NAMES): leaf},
                    "required": [] if ch.chance(2) else ["a"]}
        return leaf if isinstance(leaf, dict) else {}
    if k == 1:
        types = ch.pick((["string", "integer"], ["string"], ["object", "array"]))
        n = ch.pick((2, 20, 50, 150, 300))
        key = ch.pick(("allOf", "anyOf", "oneOf"))
        return {key: [{"properties": {"p": {"type": t}}} for t in types * n]}
    if k == 2:
        width = ch.pick((2, 3, 8))
        defs = {f"A{i}": {"type": "object", "properties": {
            f"x{j}": {"$ref": f"#/$defs/A{i + 1}"} for j in range(width)}}
            for i in range(ch.pick((5, 12, 25)))}
        return {"$defs": defs, "type": "object", "properties": {"root": {"$ref": "#/$defs/A0"}}}
    if k == 3:
        return {"$defs": {"T": {"type": "object", "properties": {
            "child": {"$ref": "#/$defs/T"}, "kids": {"type": "array", "items": {
                "$ref": "#/$defs/T"}}, "v": {"anyOf": [{"$ref": "#/$defs/T"},
                                                       {"type": "null"}]}}}},
            "$ref": "#/$defs/T"}
    items: Any = {"type": "integer"}
    for _ in range(ch.pick((10, 60, 70, 250))):
        items = {"type": "array", "items": items} if ch.chance(2) else {"anyOf": [items]}
    return {"type": "object", "properties": {"a": items}}


def draw_arguments(ch: Choices) -> Any:
    args: dict[str, Any] = {}
    for _ in range(ch.below(4)):
        args[ch.pick(NAMES)] = ch.pick((None, "x", 1, [None, {"a": None}], {"a": None},
                                        {"b": [None]}))
    return ch.pick((args, args, None, [1], "x"))


# -- the properties -----------------------------------------------------------------------


def _containers(value: Any) -> tuple[int, int, list[int]]:
    """(deepest nesting with the root at 1, number of containers, their ids)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    deepest = count = 0
    ids: list[int] = []
    while stack:
        item, d = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, d)
        count += 1
        ids.append(id(item))
        stack.extend((v, d + 1) for v in children)
    return deepest, count, ids


def _numbers(value: Any) -> list[Any]:
    out: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            out.append(item)
    return out


def _subschemas(node: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        value = node.get(key)
        if isinstance(value, dict):
            out.extend(value.values())
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        value = node.get(key)
        if isinstance(value, list):
            out.extend(value)
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        value = node.get(key)
        if isinstance(value, dict):
            out.append(value)
        elif key == "items" and isinstance(value, list):
            out.extend(value)
    return out


def _schema_nodes(schema: dict[str, Any]) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            nodes.append(node)
            stack.extend(_subschemas(node))
    return nodes


def check_strict(schema: dict[str, Any]) -> None:
    properties = enums = 0
    for node in _schema_nodes(schema):
        assert "oneOf" not in node, "oneOf in a strict schema"
        props = node.get("properties")
        types = node.get("type")
        is_object = types == "object" or (isinstance(types, list) and "object" in types)
        if isinstance(props, dict):
            properties += len(props)
        if is_object or isinstance(props, dict):
            assert node.get("additionalProperties") is False, (
                f"a strict object is not closed: {sorted(node)}"[:300])
            required = node.get("required", [])
            assert isinstance(required, list) and set(required) == set(props or {}), (
                f"a strict object does not require all its properties: {required!r}"[:300])
        if isinstance(node.get("enum"), list):
            enums += len(node["enum"])
    assert properties <= OPENAI_MAX_PROPERTIES, f"{properties} properties in a strict schema"
    assert enums <= OPENAI_MAX_ENUM_VALUES, f"{enums} enum values in a strict schema"


def check_gemini_openapi(schema: dict[str, Any]) -> None:
    for node in _schema_nodes(schema):
        extra = set(node) - GEMINI_SCHEMA_FIELDS
        assert not extra, f"gemini-openapi node has {sorted(extra)}"[:300]
    for number in _numbers(schema):
        assert isinstance(number, float) or abs(number) <= _FLOAT_MAX, (
            "gemini-openapi kept a number that does not fit a double")


def _normalize(schema: Any, target: str, limits: dict[str, int]) -> Normalized | None:
    try:
        return normalize_schema(schema, target, **limits)
    except SchemaError as exc:
        text = str(exc)
        assert SECRET not in text and SECRET_NAME not in text, (
            f"the SchemaError message quotes the schema: {text[:300]!r}")
        assert isinstance(exc.path, str) and isinstance(exc.reason, str)
        return None
    except Exception as exc:
        escaped(f"normalize_schema({target!r})", exc)


def check_target(schema: Any, target: str, limits: dict[str, int], args: Any,
                 input_ids: set[int]) -> None:
    out = _normalize(schema, target, limits)
    if out is None:
        return
    assert isinstance(out, Normalized) and out.target == target
    result = out.schema
    assert type(result) is dict, f"the schema is a {type(result).__name__}"
    try:
        json.dumps(result, allow_nan=False)
    except (ValueError, RecursionError, TypeError) as exc:
        raise AssertionError(f"{target}: the output is not JSON: "
                             f"{type(exc).__name__}: {exc}"[:300]) from exc
    depth, count, ids = _containers(result)
    max_depth = limits.get("max_depth", DEFAULT_MAX_DEPTH)
    budget = limits.get("budget", DEFAULT_BUDGET)
    assert depth <= max_depth, f"{target}: output nests {depth} > max_depth {max_depth}"
    assert count <= budget, f"{target}: {count} output containers > budget {budget}"
    assert not input_ids.intersection(ids), f"{target}: the output shares the input's objects"
    assert out.strict is False or target in STRICT_TARGETS, f"{target} said strict"
    assert len(set(out.notes)) == len(out.notes), f"{target}: repeated notes"
    for note in out.notes:
        assert note.kind in NOTE_KINDS, f"note kind {note.kind!r}"
        assert note.path == "" or note.path.startswith("/"), f"note path {note.path!r}"
    assert result.get("type") == "object", f"{target}: root type {result.get('type')!r}"
    if target == "anthropic":
        assert not {"anyOf", "oneOf", "allOf"} & set(result), "anthropic root combinator"
    elif target == "gemini-openapi":
        check_gemini_openapi(result)
    if out.strict:
        check_strict(result)
    again = _normalize(schema, target, limits)
    assert again is not None and again.schema == result and again.strict == out.strict \
        and again.notes == out.notes, f"{target}: a second call differs"
    before = copy.deepcopy(args)
    try:
        fixed = out.fix_arguments(args)
    except Exception as exc:
        escaped("fix_arguments", exc)
    assert type(fixed) is dict, f"fix_arguments returned {type(fixed).__name__}"
    assert args == before, "fix_arguments mutated the arguments"
    if not out.strict and isinstance(args, dict):
        assert fixed == args, "fix_arguments changed the arguments of a non-strict result"


def _limits(ch: Choices) -> dict[str, int]:
    limits: dict[str, int] = {}
    if ch.chance(3):
        limits["max_depth"] = ch.pick((2, 3, 5, 10, 32, 64, 128, 256))
    if ch.chance(4):
        limits["budget"] = ch.pick((1, 5, 40, 1000, 10_000))
    if ch.chance(4):
        limits["ref_unfold"] = ch.pick((0, 1, 2, DEFAULT_REF_UNFOLD, 6))
    return limits


def check(data: bytes) -> None:
    if data[:1] in (b"{", b"[", b" ", b"\n", b"\t"):
        try:
            schema = json.loads(data)
        except (ValueError, RecursionError):
            return
        if any(isinstance(n, float) and not math.isfinite(n) for n in _numbers(schema)):
            return  # NaN / Infinity are not JSON: a session never hands them over
        ch = Choices(data[-4:])
    else:
        ch = Choices(data[1:])
        schema = special_schema(ch) if ch.chance(4) else draw_schema(ch, 0)
    limits = _limits(ch)
    args = draw_arguments(ch)
    depth, _, ids = _containers(schema)
    # (copy and == recurse: a schema that deep is refused before anything reads it)
    snapshot = copy.deepcopy(schema) if depth <= MAX_COMPARED_DEPTH else None
    input_ids = set(ids)
    for target in SCHEMA_TARGETS:
        check_target(schema, target, limits, args, input_ids)
    assert snapshot is None or schema == snapshot, "normalize_schema changed its input"


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
