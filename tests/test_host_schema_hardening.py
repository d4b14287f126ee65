"""Hardening of the schema normalizer (``mcp_proto.host.schema``), each case found by fuzzing:

1. ``gemini-openapi`` arrays whose items the source leaves open (none, ``{}``, ``true``,
   typeless, ``false``, a recursive array cut) get typed items: Gemini answers 400
   ("items: missing field") to an array without them.  The type is one the source accepts
   values of (typeless items take the type of their enum/const values; a ``not`` excluding
   strings gets another type), checked with jsonschema over generated items schemas.
2. A ``$ref`` beside constraints (and ``allOf`` entries) is merged as the *intersection*:
   the larger minimum, the smaller maximum ..., never one side's value silently (draft 4's
   ``minimum`` with a boolean ``exclusiveMinimum`` as one bound); an intersection no value
   satisfies (two different ``const`` values too) is said.
3. ``anthropic``: a property repeated by many root ``allOf`` entries gets one flat ``allOf``
   (it nested one level per entry), and ``max_depth`` bounds every target's *output*.
4. A ``$ref`` fan-out is stopped by the budget after converting each site once (it expanded
   ``budget`` nodes one by one first, over a second): counted in conversions, not timed.
5. (Tool results: ``tests/test_host_content_hardening.py``.)
6. Hypothesis over generated schemas: every target returns or raises ``SchemaError`` only,
   the output nests at most ``max_depth``, is JSON, and google-genai's ``Schema`` takes the
   ``gemini-openapi`` form.
7. ``gemini-openapi`` removes a count beyond int64 and a ``default``/``example`` holding a
   number beyond a double (a count of 10**400 was kept); ``budget`` bounds every container
   of the output (the strict form's added ``properties``/``required`` were unpaid, so
   ``{}`` with ``budget=1`` came back with three).

The providers' rules and libraries are checked by :func:`test_host_schema.check`."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google.genai import types as genai_types
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_host_schema import check

from mcp_proto.host.schema import _gemini as _schema_gemini
from mcp_proto.host.schema import _strict as _schema_strict
from mcp_proto.host.schema._normalize import (
    DEFAULT_MAX_DEPTH,
    SCHEMA_TARGETS,
    Normalized,
    SchemaError,
    normalize_schema,
)


def depth(value: Any) -> int:
    """Containers nested in ``value`` (the root is level 1, as ``max_depth`` counts)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def gemini_nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema node of a gemini-openapi output (properties, items, anyOf)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield node
        stack.extend(node.get("properties", {}).values())
        stack.append(node.get("items"))
        stack.extend(node.get("anyOf", []))


def typed(node: dict[str, Any]) -> bool:
    return "type" in node or (bool(node.get("anyOf"))
                              and all(typed(b) for b in node["anyOf"]))


def check_gemini_arrays(schema: dict[str, Any]) -> None:
    """Gemini refuses an array without typed items ("items: missing field")."""
    for node in gemini_nodes(schema):
        if node.get("type") == "array":
            assert isinstance(node.get("items"), dict) and typed(node["items"]), node


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def prop(result: Normalized, name: str = "a") -> Any:
    return result.schema["properties"][name]


def kinds(result: Normalized) -> set[tuple[str, str]]:
    return {(n.path, n.kind) for n in result.notes}


# -- 1. gemini-openapi: every array has typed items --------------------------------------------

OPEN_ARRAYS = {
    "no items": {"type": "array"},
    "empty items": {"type": "array", "items": {}},
    "true items": {"type": "array", "items": True},
    "typeless items": {"type": "array", "items": {"description": "a tag", "minLength": 1}},
    "false items": {"type": "array", "items": False},
    "nullable array": {"type": ["array", "null"]},
    "type list": {"type": ["string", "array"]},
    "open tuple position": {"type": "array", "prefixItems": [True, {"type": "integer"}]},
    "inferred array": {"items": {}},
}


@pytest.mark.parametrize("name", sorted(OPEN_ARRAYS))
def test_gemini_open_array_items_get_a_type(name: str) -> None:
    out = normalize_schema(obj(a=OPEN_ARRAYS[name]), "gemini-openapi")
    check(out, "gemini-openapi")
    check_gemini_arrays(out.schema)
    assert ("/properties/a/items" if "prefixItems" not in OPEN_ARRAYS[name]
            else "/properties/a/prefixItems", "assumed-type") in kinds(out)
    # the loosening is said to the model too (what is true: items: false takes none), and
    # no note claims the items stay typeless
    said = json.dumps(prop(out))
    if name == "false items":
        assert "items: none" in said and "any value" not in said
    else:
        assert "items: any value" in said
    assert ("/properties/a/items", "untyped") not in kinds(out)


def test_gemini_open_items_keep_what_a_string_can_say() -> None:
    out = normalize_schema(obj(a=OPEN_ARRAYS["typeless items"]), "gemini-openapi")
    assert prop(out)["items"] == {"type": "string", "description": "a tag", "minLength": 1}
    assert prop(out)["type"] == "array"
    falsy = prop(normalize_schema(obj(a=OPEN_ARRAYS["false items"]), "gemini-openapi"))
    assert falsy == {
        "type": "array", "maxItems": 0, "items": {"type": "string"},
        "description": "items: none (the tool's schema takes no items: the array must be "
                       "empty; items declared as string only because Gemini needs a type)"}


def items_of(items: Any, **defs: Any) -> dict[str, Any]:
    schema = obj(a={"type": "array", "items": items})
    if defs:
        schema["$defs"] = defs
    out = normalize_schema(schema, "gemini-openapi")
    check(out, "gemini-openapi")
    check_gemini_arrays(out.schema)
    result: dict[str, Any] = prop(out)
    return result


@pytest.mark.parametrize(("items", "expected"), [
    ({"enum": [1, 2, 3]}, {"type": "integer", "description": "Allowed values: 1, 2, 3"}),
    ({"const": 5}, {"type": "integer", "description": "Must be: 5"}),
    ({"enum": [True, False]}, {"type": "boolean", "description": "Allowed values: true, false"}),
    ({"enum": [1, 2.5]}, {"type": "number", "description": "Allowed values: 1, 2.5"}),
    ({"enum": [1, "a", None]}, {"anyOf": [{"type": "integer"}, {"type": "string"}],
                                "nullable": True,
                                "description": 'Allowed values: 1, "a", null'}),
    ({"enum": [1, "a"], "not": {"type": "string"}},
     {"type": "integer", "description": 'Allowed values: 1, "a"'}),
    ({"$ref": "#/$defs/N"}, {"type": "integer", "description": "Allowed values: 1, 2"}),
    ({"enum": ["a", "b"]}, {"type": "string", "enum": ["a", "b"]}),  # as before
])
def test_gemini_typeless_items_take_the_type_of_their_values(items: Any,
                                                             expected: Any) -> None:
    """``items: {"enum": [1, 2, 3]}`` became ``{"type": "string", ...}``: the type was
    inferred from string enums only, so open items were declared strings, which the source
    refuses.  The type now comes from enum/const values of every scalar kind (several: an
    anyOf of them, each typed)."""
    assert items_of(items, N={"enum": [1, 2]})["items"] == expected


def test_gemini_open_items_avoid_a_type_the_source_excludes() -> None:
    """``not: {"type": "string"}`` made strings the only thing the model could send and the
    only thing the source refused: the next type it allows is declared, and said."""
    a = items_of({"not": {"type": "string"}, "minimum": 1})
    assert a["items"] == {"type": "number", "minimum": 1}
    assert a["description"].startswith("items: any value not of type string (")
    assert items_of({"not": {"type": ["string", "number"]}})["items"] == {"type": "boolean"}
    # a not that refuses every value: like items: false
    empty = items_of({"not": {}})
    assert empty["maxItems"] == 0 and "items: none" in empty["description"]
    # only containers in the enum: object, whose enum stays in the description
    assert items_of({"enum": [{"k": 1}]})["items"] == {
        "type": "object", "description": 'Allowed values: {"k": 1}'}
    # a not that refuses some strings only: string stays, and the note says what may go wrong
    out = normalize_schema(obj(a={"type": "array", "items": {"not": {"enum": ["a"]}}}),
                           "gemini-openapi")
    assert prop(out)["items"] == {"type": "string"}
    assert any(n.kind == "assumed-type" and "a string it refuses may be sent" in n.detail
               for n in out.notes)
    # no type Gemini can declare fits (only arrays): the least wrong, said so
    out = normalize_schema(obj(a={"type": "array", "items": {"enum": [[1]]}}), "gemini-openapi")
    assert prop(out)["items"]["type"] == "string"
    assert any(n.kind == "assumed-type" and "least wrong" in n.detail for n in out.notes)


def test_gemini_recursive_array_cut_has_items() -> None:
    schema = {**obj(a={"$ref": "#/$defs/L"}),
              "$defs": {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}}}
    for unfold in (0, 2):
        out = normalize_schema(schema, "gemini-openapi", ref_unfold=unfold)
        check(out, "gemini-openapi")
        check_gemini_arrays(out.schema)
        assert any(n.kind == "recursion-cut" for n in out.notes)
        # its items are arrays (of arrays ...), not "any value" and not strings: the cut
        # array is written empty, which the source accepts, and said so
        assert "any value" not in json.dumps(out.schema)
        cut = prop(out)
        while cut.get("maxItems") != 0:
            cut = cut["items"]
        assert cut["type"] == "array" and "cut here: written as an empty array" in \
            cut["description"]


def test_gemini_recursive_array_cut_keeps_the_items_type() -> None:
    """A cut array of trees declares its items as the trees' type (object), an array of
    "string or the array again" as string: a type the items take, not "any value"."""
    trees = {**obj(a={"$ref": "#/$defs/F"}), "$defs": {
        "F": {"type": "array", "items": {"$ref": "#/$defs/T"}},
        "T": {"type": "object", "properties": {"kids": {"$ref": "#/$defs/F"}}}}}
    nested = {**obj(a={"$ref": "#/$defs/S"}), "$defs": {
        "S": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "string"}]}}}}
    for schema, kind in ((trees, "object"), (nested, "string")):
        out = normalize_schema(schema, "gemini-openapi", ref_unfold=0)
        check(out, "gemini-openapi")
        check_gemini_arrays(out.schema)
        assert "any value" not in json.dumps(out.schema)
        cuts = [n for n in out.notes if n.kind == "assumed-type"]
        assert cuts and all(f"items declared as {kind}, a type its items take" in n.detail
                            for n in cuts)


# -- the property: open items are declared a type whose values the source accepts ----------------

#: Sample values of every type, covering the bounds the strategy draws (lengths 0-3,
#: numbers -3..8, up to two properties).
_POOL: list[Any] = ["", "a", "ab", "abc", *range(-3, 9), 1.5, -0.5, True, False, None, [],
                    [1], {}, {"k": 1}, {"k": 1, "j": 2}]
_DECLARABLE = ("string", "number", "integer", "boolean", "object")
_ENFORCED = frozenset({"enum", "minLength", "maxLength", "pattern", "minimum", "maximum",
                       "minItems", "maxItems", "minProperties", "maxProperties"})
_scalars = (st.integers(-3, 3) | st.sampled_from([1.5, -0.5]) | st.booleans()
            | st.sampled_from(["", "a", "abc"]) | st.none())
typeless_items = st.fixed_dictionaries({}, optional={
    "enum": st.lists(_scalars | st.sampled_from([{"k": 1}, [1]]), min_size=1, max_size=4),
    "const": _scalars,
    "not": st.sampled_from([{}, {"type": "string"}, {"type": "number"}, {"type": "integer"},
                            {"type": ["string", "boolean"]}, {"enum": ["a"]},
                            {"type": ["string", "number", "boolean", "object"]},
                            {"type": "string", "minLength": 2}, {"description": "d"}]),
    "minLength": st.integers(0, 3), "maxLength": st.integers(0, 3),
    "minimum": st.integers(-2, 2), "maximum": st.integers(-2, 8),
    "minProperties": st.integers(0, 2), "description": st.just("d"),
})


def as_json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A gemini-openapi node as the JSON Schema of what Gemini enforces (descriptions are
    for the model only)."""
    out: dict[str, Any] = {k: v for k, v in node.items() if k in _ENFORCED}
    null = [{"type": "null"}] if node.get("nullable") else []
    if "type" in node:
        out["type"] = [node["type"], "null"] if null else node["type"]
    if "anyOf" in node:
        out["anyOf"] = [as_json_schema(b) for b in node["anyOf"]] + null
    if "items" in node:
        out["items"] = as_json_schema(node["items"])
    return out


def _not_worked_out(source: dict[str, Any]) -> bool:
    """Whether ``source``'s ``not`` refuses some values of a type, not whole types: the
    conversion does not work those out (it says so in the note)."""
    return not set(source.get("not", {})) <= {"type", "description"}


def _type_level(source: dict[str, Any]) -> bool:
    """Whether what ``source`` refuses is a matter of types and of keywords Gemini keeps
    (no enum/const, a ``not`` of types only): then every value of the declared type that
    the output accepts must be one the source accepts."""
    return "enum" not in source and "const" not in source and not _not_worked_out(source)


@settings(max_examples=400, deadline=None)
@given(typeless_items)
@example({"enum": [1, 2, 3]})
@example({"const": 5})
@example({"enum": [True, False]})
@example({"not": {"type": "string"}})
@example({"enum": [{"k": 1}, 1]})
def test_gemini_open_items_type_is_one_the_source_accepts(source: dict[str, Any]) -> None:
    """For a typeless items schema: whenever the source accepts a value of a type Gemini
    can declare, some value of a declared type that the output accepts is accepted by the
    source too; for a source that refuses by type only, every such value is.  An array
    written empty is one whose items the source refuses all.  (A ``not`` refusing some
    values of a type is not worked out: the least wrong type is declared, said in the
    note, and the first claim is not made for it.)"""
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    array = prop(normalize_schema(obj(a={"type": "array", "items": source}), "gemini-openapi"))
    src = Draft202012Validator(source)
    out = Draft202012Validator(as_json_schema(array["items"]))
    is_type = Draft202012Validator.TYPE_CHECKER.is_type
    values = [*_POOL, *source.get("enum", ()), *([source["const"]] if "const" in source else [])]
    accepted = [v for v in values if src.is_valid(v)]
    if array.get("maxItems") == 0:
        assert not accepted, (source, array)
        return
    items = array["items"]
    declared = [b["type"] for b in items.get("anyOf", [items])]
    samples = {t: [v for v in values if is_type(v, t) and out.is_valid(v)] for t in declared}
    if any(is_type(v, t) for v in accepted for t in _DECLARABLE) \
            and not _not_worked_out(source):
        assert any(src.is_valid(v) for t in declared for v in samples[t]), (source, items)
    if _type_level(source):
        for t in declared:
            if any(is_type(v, t) for v in accepted):  # the source accepts values of t
                assert all(src.is_valid(v) for v in samples[t]), (source, items, t)


def test_gemini_typed_items_unchanged() -> None:
    out = normalize_schema(obj(a={"type": "array", "items": {"type": "integer"}}),
                           "gemini-openapi")
    assert prop(out) == {"type": "array", "items": {"type": "integer"}}
    assert not any(n.kind == "assumed-type" for n in out.notes)


# -- 2. $ref siblings and allOf entries: the intersection ---------------------------------------

LIM = {"type": "integer", "minimum": 0, "maximum": 100}


def with_def(node: dict[str, Any], definition: dict[str, Any]) -> dict[str, Any]:
    return {**obj(a=node), "$defs": {"D": definition}}


def test_gemini_ref_sibling_bounds_are_intersected() -> None:
    schema = with_def({"$ref": "#/$defs/D", "minimum": 5, "maximum": 1000}, LIM)
    out = normalize_schema(schema, "gemini-openapi")
    assert prop(out) == {"type": "integer", "minimum": 5, "maximum": 100}
    assert ("/properties/a", "merged") in kinds(out)
    check(out, "gemini-openapi")


@pytest.mark.parametrize(("definition", "siblings", "expected"), [
    ({"type": "string", "minLength": 2, "maxLength": 9}, {"minLength": 4, "maxLength": 20},
     {"type": "string", "minLength": 4, "maxLength": 9}),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
     {"maxItems": 3}, {"type": "array", "items": {"type": "string"}, "minItems": 1,
                       "maxItems": 3}),
    ({"type": "object", "properties": {"x": {"type": "string"}}, "maxProperties": 4},
     {"maxProperties": 2, "minProperties": 1},
     {"type": "object", "properties": {"x": {"type": "string"}}, "maxProperties": 2,
      "minProperties": 1}),
    ({"type": "number"}, {"type": "integer"}, {"type": "integer"}),
    ({"type": "string", "enum": ["a", "b", "c"]}, {"enum": ["c", "b", "z"]},
     {"type": "string", "enum": ["b", "c"]}),
    # sibling annotations are the more specific
    ({"type": "string", "description": "D"}, {"description": "mine"},
     {"type": "string", "description": "mine"}),
])
def test_gemini_ref_sibling_keywords_are_intersected(
        definition: dict[str, Any], siblings: dict[str, Any], expected: dict[str, Any]) -> None:
    out = normalize_schema(with_def({"$ref": "#/$defs/D", **siblings}, definition),
                           "gemini-openapi")
    assert prop(out) == expected
    check(out, "gemini-openapi")


def test_gemini_exclusive_bounds_and_multiple_of_are_intersected() -> None:
    """Gemini takes neither: the intersected values are what the description says."""
    out = normalize_schema(with_def(
        {"$ref": "#/$defs/D", "exclusiveMinimum": 3, "exclusiveMaximum": 50, "multipleOf": 4},
        {"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 90, "multipleOf": 6}),
        "gemini-openapi")
    text = prop(out)["description"]
    assert "exclusiveMinimum: 3" in text and "exclusiveMaximum: 50" in text
    assert "multipleOf: 12" in text
    assert "exclusiveMinimum: 1" not in text and "90" not in text


@pytest.mark.parametrize(("siblings", "why"), [
    ({"minimum": 200}, "minimum 200 > maximum 100"),
    ({"maximum": -1}, "minimum 0 > maximum -1"),
    ({"type": "string"}, "no value in common"),
    ({"exclusiveMinimum": 100}, "exclusiveMinimum 100 = maximum 100"),
])
def test_gemini_empty_intersection_is_said(siblings: dict[str, Any], why: str) -> None:
    out = normalize_schema(with_def({"$ref": "#/$defs/D", **siblings}, LIM), "gemini-openapi")
    check(out, "gemini-openapi")
    (note,) = [n for n in out.notes if n.kind == "unsatisfiable"]
    assert note.path == "/properties/a" and why in note.detail
    assert "no value satisfies" in prop(out)["description"] and why in prop(out)["description"]
    if "minimum" in siblings:  # the bounds said are both sides' (the truth), not one side's
        assert prop(out)["minimum"] == 200 and prop(out)["maximum"] == 100


def test_gemini_unmergeable_siblings_are_said_not_dropped() -> None:
    out = normalize_schema(with_def({"$ref": "#/$defs/D", "pattern": "^b", "maxLength": 3},
                                    {"type": "string", "pattern": "^a", "maxLength": 8}),
                           "gemini-openapi")
    a = prop(out)
    assert a["pattern"] == "^a" and a["maxLength"] == 3
    assert 'also pattern: "^b"' in a["description"]
    assert ("/properties/a/pattern", "moved-to-description") in kinds(out)


def test_gemini_all_of_is_intersected() -> None:
    out = normalize_schema(obj(
        a={"allOf": [LIM, {"minimum": 5, "maximum": 1000}]},
        b={"allOf": [{"properties": {"p": {"type": "string", "maxLength": 9}}},
                     {"properties": {"p": {"maxLength": 3, "minLength": 1}}}]},
        c={"description": "own", "allOf": [{"type": "string", "description": "entry"}]}),
        "gemini-openapi")
    assert prop(out, "a") == {"type": "integer", "minimum": 5, "maximum": 100}
    # a property in two entries: both schemas apply (the first one no longer wins silently)
    assert prop(out, "b")["properties"]["p"] == {"type": "string", "maxLength": 3,
                                                 "minLength": 1}
    assert prop(out, "c") == {"type": "string", "description": "own"}
    empty = normalize_schema(obj(a={"allOf": [{"type": "integer", "maximum": 1},
                                              {"minimum": 2}]}), "gemini-openapi")
    assert any(n.kind == "unsatisfiable" for n in empty.notes)
    assert "no value satisfies" in prop(empty)["description"]


def test_strict_ref_siblings_intersected_stay_strict() -> None:
    schema = {**obj(a={"$ref": "#/$defs/D", "maximum": 5, "minimum": -3}), "required": ["a"],
              "$defs": {"D": {"type": "integer", "minimum": 1, "maximum": 10}}}
    out = normalize_schema(schema, "openai-strict")
    assert out.strict
    assert prop(out) == {"type": "integer", "minimum": 1, "maximum": 5}
    check(out, "openai-strict")
    empty = {**schema, "properties": {"a": {"$ref": "#/$defs/D", "minimum": 11}}}
    out = normalize_schema(empty, "openai-strict")
    assert not out.strict
    (note,) = [n for n in out.notes if n.kind == "not-strict"]
    assert "accept no value together" in note.detail and "minimum 11 > maximum 10" in note.detail


def test_anthropic_root_entry_ref_siblings_are_intersected() -> None:
    schema = {"allOf": [{"$ref": "#/$defs/D", "maxProperties": 2}],
              "$defs": {"D": {"properties": {"x": {"type": "string"}}, "maxProperties": 5}}}
    out = normalize_schema(schema, "anthropic")
    assert out.schema["maxProperties"] == 2
    assert out.schema["properties"] == {"x": {"type": "string"}}
    check(out, "anthropic")


@pytest.mark.parametrize(("base", "over", "expected"), [
    # x >= 5 and x > 3: x >= 5 (the flag of one side beside the other's value made it x > 5)
    ({"minimum": 5}, {"minimum": 3, "exclusiveMinimum": True}, {"minimum": 5}),
    ({"minimum": 3, "exclusiveMinimum": True}, {"minimum": 5}, {"minimum": 5}),
    # at a tie the exclusive bound is the tighter
    ({"minimum": 5}, {"minimum": 5, "exclusiveMinimum": True},
     {"minimum": 5, "exclusiveMinimum": True}),
    ({"maximum": 9, "exclusiveMaximum": True}, {"maximum": 7}, {"maximum": 7}),
    ({"maximum": 5, "exclusiveMaximum": True}, {"maximum": 7},
     {"maximum": 5, "exclusiveMaximum": True}),
    # a later draft's number beside a draft-4 flag: still the tighter one, in draft 4's form
    ({"maximum": 5, "exclusiveMaximum": True}, {"exclusiveMaximum": 4},
     {"maximum": 4, "exclusiveMaximum": True}),
    ({"minimum": 2, "exclusiveMinimum": False}, {"minimum": 1}, {"minimum": 2}),
])
def test_draft4_exclusive_bounds_are_one_bound(base: dict[str, Any], over: dict[str, Any],
                                               expected: dict[str, Any]) -> None:
    from mcp_proto.host.schema._merge import _intersect  # noqa: PLC0415

    result = _intersect(base, over)
    assert result.merged == expected and not result.conflicts and not result.empty
    # through a $ref and its siblings too
    out = normalize_schema(with_def({"$ref": "#/$defs/D", **over}, {"type": "number", **base}),
                           "anthropic")
    check(out, "anthropic")


def test_draft4_bounds_that_cross_are_unsatisfiable() -> None:
    from mcp_proto.host.schema._merge import _intersect  # noqa: PLC0415

    result = _intersect({"minimum": 5, "exclusiveMinimum": True}, {"maximum": 5})
    assert result.empty == ["minimum 5 = maximum 5"]
    assert _intersect({"minimum": "x", "exclusiveMinimum": True}, {"minimum": 3}).conflicts \
        == ["minimum"]


def test_two_different_consts_are_unsatisfiable_not_a_conflict() -> None:
    from mcp_proto.host.schema._merge import _intersect  # noqa: PLC0415

    result = _intersect({"const": 1}, {"const": 2})
    assert result.merged == {"const": 1} and not result.conflicts
    assert result.empty == ["the two const values differ"]
    out = normalize_schema(obj(a={"allOf": [{"const": "a"}, {"const": "b"}]}), "gemini-openapi")
    assert any(n.kind == "unsatisfiable" and "const values differ" in n.detail
               for n in out.notes)
    assert not any(n.kind == "removed" and "const" in n.path for n in out.notes)
    assert "no value satisfies" in prop(out)["description"]


def test_over_budget_is_a_plain_schema_error() -> None:
    """The private ``_OverBudget`` (openai-strict's signal to fall back) escaped with its
    name in the repr and the traceback."""
    schema = {**obj(**{f"p{i}": {"$ref": "#/$defs/D"} for i in range(5)}),
              "$defs": {"D": obj(**{f"q{i}": {"type": "string"} for i in range(20)})}}
    with pytest.raises(SchemaError) as info:
        normalize_schema(schema, "gemini-openapi", budget=40)
    assert type(info.value) is SchemaError and "budget" in info.value.reason
    assert "_OverBudget" not in repr(info.value) and "_OverBudget" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


# -- 3. anthropic: repeated allOf properties stay flat; max_depth bounds the output ------------


@pytest.mark.parametrize("repeats", [40, 300])
def test_anthropic_repeated_all_of_property_stays_flat(repeats: int) -> None:
    schema = {"allOf": [{"properties": {"p": {"type": t}}}
                        for t in ["string", "integer"] * repeats]}
    out = normalize_schema(schema, "anthropic")
    json.dumps(out.schema)
    assert depth(out.schema) <= depth(schema) == 5
    assert out.schema["properties"]["p"] == {"allOf": [{"type": "string"}, {"type": "integer"}]}
    check(out, "anthropic")


def test_anthropic_distinct_repeats_make_one_list() -> None:
    schema = {"properties": {"p": {"type": "string"}},
              "allOf": [{"properties": {"p": {"maxLength": i}}} for i in range(300)]}
    out = normalize_schema(schema, "anthropic")
    assert out.schema["properties"]["p"] == {
        "allOf": [{"type": "string"}, *({"maxLength": i} for i in range(300))]}
    assert depth(out.schema) <= depth(schema)


def nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


def test_max_depth_bounds_the_output() -> None:
    """The root's own property moves two levels down into the allOf: at the limit, that is a
    SchemaError, never an output deeper than max_depth."""
    inner = nested(3)  # 7 levels below the root's properties
    schema = {"type": "object", "properties": {"p": inner},
              "allOf": [{"properties": {"p": {"description": "x"}}}]}
    limit = depth(schema)
    with pytest.raises(SchemaError, match="converted schema nests deeper"):
        normalize_schema(schema, "anthropic", max_depth=limit)
    out = normalize_schema(schema, "anthropic", max_depth=limit + 2)
    assert depth(out.schema) <= limit + 2


@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_inlined_refs_respect_max_depth(target: str) -> None:
    chain = {f"d{i}": {"type": "object", "properties": {"n": {"$ref": f"#/$defs/d{i + 1}"}}}
             for i in range(12)}
    chain["d12"] = {"type": "array", "items": {"type": "string"}}
    schema = {**obj(x={"$ref": "#/$defs/d0"}), "$defs": chain}
    for limit in range(6, 30):
        try:
            out = normalize_schema(schema, target, max_depth=limit)
        except SchemaError as exc:
            assert "deeper" in exc.reason
        else:
            assert depth(out.schema) <= limit, (limit, depth(out.schema))


# -- 4. a $ref fan-out: each site converted once, the budget charged in full -------------------


def ref_fan_out(levels: int, siblings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each level a oneOf of three refs to the next: inlined, 3**levels leaves."""
    def ref(i: int) -> dict[str, Any]:
        return {"$ref": f"#/$defs/L{i}", **(siblings or {})}
    defs: dict[str, Any] = {f"L{i}": {"oneOf": [ref(i + 1) for _ in range(3)]}
                            for i in range(levels)}
    defs[f"L{levels}"] = {"type": "integer"}
    return {**obj(x=ref(0)), "$defs": defs}


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many schema nodes the strict and gemini-openapi walks convert (the work done)."""
    count = {"nodes": 0}
    for cls in (_schema_gemini._Gemini, _schema_strict._Strict):
        original: Callable[..., Any] = cls.node

        def counted(self: Any, *args: Any, _original: Callable[..., Any] = original,
                    **kwargs: Any) -> Any:
            count["nodes"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "node", counted)
    return count


@pytest.mark.parametrize("siblings", [None, {"description": "d"}, {"minimum": 1}],
                         ids=["plain", "described", "constrained"])
@pytest.mark.parametrize("target", SCHEMA_TARGETS)
def test_ref_fan_out_is_stopped_early(target: str, siblings: dict[str, Any] | None,
                                      conversions: dict[str, int]) -> None:
    """Before: gemini-openapi converted 100,001 nodes (one by one up to the budget, over a
    second), openai-strict with constraining siblings 66,668; now each site once."""
    schema = ref_fan_out(14, siblings)
    try:
        out = normalize_schema(schema, target)
    except SchemaError as exc:
        assert target == "gemini-openapi" and "budget" in exc.reason
    else:
        assert target != "gemini-openapi"
        check(out, target)
        if target.endswith("-strict"):
            assert out.strict is (siblings is None or "minimum" not in siblings)
            if not out.strict:
                assert "budget" in out.notes[-1].detail
    assert conversions["nodes"] < 1_000


def expanded(levels: int) -> dict[str, Any]:
    """The gemini-openapi form of ref_fan_out(levels), written out."""
    node: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        node = {"anyOf": [copy.deepcopy(node) for _ in range(3)]}
    return node


def test_ref_fan_out_output_is_the_full_expansion() -> None:
    out = normalize_schema(ref_fan_out(6), "gemini-openapi")
    assert prop(out, "x") == expanded(6)
    # every output node is a new object: nothing is shared between the copies
    nodes = list(gemini_nodes(out.schema))
    assert len({id(n) for n in nodes}) == len(nodes)
    prop(out, "x")["anyOf"][0]["anyOf"][0]["description"] = "mine"
    assert "description" not in prop(out, "x")["anyOf"][1]["anyOf"][0]


def test_reused_conversions_are_charged_in_full() -> None:
    """3**8 leaves: about 10,000 output nodes from about 40 conversions.  A budget that the
    conversions alone fit in, but the expansion does not, is still over budget."""
    schema = ref_fan_out(8)
    with pytest.raises(SchemaError, match="budget"):
        normalize_schema(schema, "gemini-openapi", budget=5_000)
    assert prop(normalize_schema(schema, "gemini-openapi", budget=20_000), "x") == expanded(8)
    constrained = ref_fan_out(8, {"minimum": 1})
    assert not normalize_schema(constrained, "openai-strict", budget=5_000).strict
    assert normalize_schema(constrained, "openai-strict", budget=100_000).strict


def test_reuse_never_crosses_a_recursion() -> None:
    """A conversion made below a recursive $ref depends on its path (the cut): it is not
    reused on another path."""
    schema = {**obj(a={"$ref": "#/$defs/T"}, b={"$ref": "#/$defs/T"}),
              "$defs": {"T": {"type": "object", "properties": {
                  "kids": {"type": "array", "items": {"$ref": "#/$defs/T"}},
                  "again": {"$ref": "#/$defs/T"}}}}}
    for unfold in (0, 1, 2):
        out = normalize_schema(schema, "gemini-openapi", ref_unfold=unfold)
        assert prop(out, "a") == prop(out, "b")
        node, levels = prop(out, "a"), 0
        while "properties" in node:
            node, levels = node["properties"]["again"], levels + 1
        assert levels == unfold + 1 and "recursive" in node["description"]


class Forgetful(dict[Any, Any]):
    """A memo that remembers nothing: the conversion without reuse, for comparison."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def without_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    for cls in (_schema_gemini._Gemini, _schema_strict._Strict):
        original: Callable[..., None] = cls.__init__

        def init(self: Any, *args: Any, _original: Callable[..., None] = original,
                 **kwargs: Any) -> None:
            _original(self, *args, **kwargs)
            self.done = Forgetful()

        monkeypatch.setattr(cls, "__init__", init)


def outcome(schema: dict[str, Any], target: str, limits: dict[str, Any]) -> Any:
    try:
        out = normalize_schema(schema, target, **limits)
    except SchemaError as exc:
        return ("SchemaError", exc.reason)
    return out.schema, out.strict, out.notes, out.fix_arguments({"a": None, "b": {"c": None}})


# -- 6. properties -----------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c"])
DEF_REFS = st.sampled_from(["#/$defs/A", "#/$defs/B", "#/$defs/C", "#", "#/$defs/Nope"])
NUMBERS = st.integers(-3, 12)
COUNTS = st.integers(0, 6)
CONSTRAINTS: dict[str, st.SearchStrategy[Any]] = {
    "minimum": NUMBERS, "maximum": NUMBERS, "exclusiveMinimum": NUMBERS,
    "exclusiveMaximum": NUMBERS, "multipleOf": st.integers(1, 4),
    "minLength": COUNTS, "maxLength": COUNTS, "minItems": COUNTS, "maxItems": COUNTS,
    "minProperties": COUNTS, "maxProperties": COUNTS, "pattern": st.sampled_from(["^a", "b$"]),
    "format": st.sampled_from(["date-time", "uri", "int32", "enum"]),
    "enum": st.lists(st.one_of(st.sampled_from(["x", "y", "z"]), st.integers(0, 2),
                               st.none()), min_size=1, max_size=3),
    "const": st.one_of(st.sampled_from(["x", "y"]), st.integers(0, 2)),
    "type": st.one_of(st.sampled_from(["string", "integer", "number", "boolean", "object",
                                       "array", "null"]),
                      st.lists(st.sampled_from(["string", "integer", "null", "array"]),
                               min_size=1, max_size=3, unique=True)),
    "description": st.sampled_from(["d", "e"]), "nullable": st.booleans(),
    "uniqueItems": st.booleans(), "default": st.integers(0, 1),
}


def constraints() -> st.SearchStrategy[dict[str, Any]]:
    keys = st.lists(st.sampled_from(sorted(CONSTRAINTS)), max_size=4, unique=True)
    return keys.flatmap(lambda ks: st.fixed_dictionaries({k: CONSTRAINTS[k] for k in ks}))


def schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """One level of a schema: a structure over ``children`` plus constraints."""
    shapes = st.one_of(
        st.fixed_dictionaries({"type": st.just("object"),
                               "properties": st.dictionaries(NAMES, children, max_size=3)},
                              optional={"required": st.lists(
                                  st.one_of(NAMES, st.just(["junk"])), max_size=3),
                                        "additionalProperties": st.booleans()}),
        st.fixed_dictionaries({}, optional={"type": st.just("array"), "items": children,
                                            "prefixItems": st.lists(children, max_size=2)}),
        st.fixed_dictionaries({"$ref": DEF_REFS}),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
    )
    return st.one_of(st.booleans(), st.tuples(shapes, constraints()).map(
        lambda pair: {**pair[1], **pair[0]}))


LEAVES = st.one_of(constraints(), st.fixed_dictionaries({"$ref": DEF_REFS}))
SCHEMAS: st.SearchStrategy[Any] = st.recursive(LEAVES, schemas, max_leaves=10)
ROOTS = st.tuples(
    st.dictionaries(NAMES, SCHEMAS, max_size=3),
    st.fixed_dictionaries({}, optional={k: SCHEMAS for k in ("A", "B", "C")}),
    st.sampled_from([{}, {"required": ["a"]}, {"allOf": [{"$ref": "#/$defs/A"}]},
                     {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}]),
).map(lambda p: {"type": "object", "properties": p[0], "$defs": p[1], **p[2]})
LIMITS = st.fixed_dictionaries({}, optional={
    "max_depth": st.sampled_from([4, 8, 16, DEFAULT_MAX_DEPTH]),
    "budget": st.sampled_from([40, 400, 100_000]), "ref_unfold": st.integers(0, 3)})


def check_properties(schema: dict[str, Any], target: str, limits: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    try:
        out = normalize_schema(schema, target, **limits)
    except SchemaError as exc:
        assert exc.reason and exc.target == target
        return
    finally:
        assert schema == before
    assert depth(out.schema) <= limits.get("max_depth", DEFAULT_MAX_DEPTH)
    json.dumps(out.schema, allow_nan=False)
    check(out, target)  # the target's documented rules and the providers' libraries
    if target == "gemini-openapi":
        genai_types.Schema.model_validate(out.schema)
        check_gemini_arrays(out.schema)
    out.fix_arguments({"a": None, "b": [None, {"a": None}], "c": {"x": None}})


# Escaping exceptions found while exploring, kept as explicit examples.
FOUND: list[tuple[dict[str, Any], str, dict[str, Any]]] = [
    # anthropic: 600 allOf entries nested 1201 levels -> RecursionError in json.dumps
    ({"allOf": [{"properties": {"p": {"type": t}}} for t in ["string", "integer"] * 300]},
     "anthropic", {}),
    # gemini-openapi: items false left an array without items (Gemini 400)
    ({"type": "object", "properties": {"a": {"type": "array", "items": False}}},
     "gemini-openapi", {}),
    # a recursive array cut to a placeholder without items
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
      "$defs": {"A": {"type": "array", "items": {"$ref": "#/$defs/A"}}}},
     "gemini-openapi", {"ref_unfold": 0}),
    # an untyped branch in a tuple's anyOf of positions ({} in anyOf: an empty Schema)
    ({"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{}, True]}}},
     "gemini-openapi", {}),
    # an allOf of a ref beside a ref fan-out, under a small budget
    (ref_fan_out(6), "gemini-openapi", {"budget": 400}),
    # gemini-openapi: const null beside items (an inferred array) kept items on type null
    ({"type": "object", "properties": {"a": {"items": {}, "const": None}}},
     "gemini-openapi", {}),
    # required lists holding junk (a list, an object) merged: TypeError (unhashable)
    ({"allOf": [{"required": [["x"]]}, {"required": [{"a": 1}]}]}, "anthropic", {}),
    ({"type": "object", "properties": {"a": {"allOf": [{"required": [["x"]]},
                                                       {"required": ["y", ["z"]]}]}}},
     "gemini-openapi", {}),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "required": [[1]]}},
      "$defs": {"A": {"type": "object", "properties": {"x": {"type": "string"}},
                      "required": [["u"]]}}}, "openai-strict", {}),
    # strict: inlined constrained refs nest past a small max_depth (was a SchemaError for
    # the whole tool although the plain form fits)
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "minimum": 1}},
      "$defs": {"A": {"$ref": "#/$defs/B", "maximum": 9},
                "B": {"type": "integer"}}}, "openai-strict", {"max_depth": 4}),
]


def found_examples(test: Callable[..., None]) -> Callable[..., None]:
    """``test`` with every case of :data:`FOUND` as an explicit hypothesis example."""
    for case in reversed(FOUND):
        test = example(*case)(test)
    return test


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ROOTS, st.sampled_from(SCHEMA_TARGETS), LIMITS)
@found_examples
def test_generated_schemas_every_target(schema: dict[str, Any], target: str,
                                        limits: dict[str, Any]) -> None:
    check_properties(schema, target, limits)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ROOTS)
def test_generated_schemas_gemini_openapi(schema: dict[str, Any]) -> None:
    """gemini-openapi does the most (inlining, merging, typing items): a run of its own."""
    check_properties(schema, "gemini-openapi", {})


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(ROOTS, st.sampled_from(["gemini-openapi", "openai-strict"]), LIMITS)
@example(ref_fan_out(5), "gemini-openapi", {})
@example(ref_fan_out(5, {"minimum": 1, "description": "d"}), "openai-strict", {})
@example(ref_fan_out(8), "gemini-openapi", {"budget": 5_000})
def test_reuse_changes_nothing_but_the_work(schema: dict[str, Any], target: str,
                                            limits: dict[str, Any]) -> None:
    """Reusing a $ref site's conversion gives exactly what converting it again gives: the
    same schema, notes and decisions (over budget included)."""
    reused = outcome(schema, target, limits)
    with pytest.MonkeyPatch.context() as patch:
        without_reuse(patch)
        assert outcome(schema, target, limits) == reused


# -- 7. numbers Gemini cannot hold; the budget bounds every output container ------------------


def containers(value: Any) -> int:
    """Objects and lists in ``value`` (what ``budget`` bounds)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            count += 1
            stack.extend(item)
    return count


@pytest.mark.parametrize(("key", "kind"), [
    ("minLength", "string"), ("maxLength", "string"), ("minItems", "array"),
    ("maxItems", "array"), ("minProperties", "object"), ("maxProperties", "object")])
def test_gemini_counts_beyond_int64_are_removed(key: str, kind: str) -> None:
    """A count of 10**400 was kept (a maximum of 10**400 was removed): Gemini's counts are
    int64, so a count beyond 2**63 - 1 is removed with a note; 2**63 - 1 itself is kept."""
    for huge in (2**63, 10**400):
        out = normalize_schema(obj(a={"type": kind, key: huge}), "gemini-openapi")
        assert key not in prop(out)
        assert ("/properties/a/" + key, "removed") in kinds(out)
        genai_types.Schema.model_validate(out.schema)
    kept = normalize_schema(obj(a={"type": kind, key: 2**63 - 1}), "gemini-openapi")
    assert prop(kept)[key] == 2**63 - 1
    # merged from allOf, or in a type list's branch: checked all the same
    merged = normalize_schema(obj(a={"allOf": [{"type": kind, key: 10**400}, {key: 1}]}),
                              "gemini-openapi")
    assert prop(merged).get(key) == (1 if key.startswith("max") else None)  # min: the larger
    branches = normalize_schema(obj(a={"type": [kind, "integer"], key: 10**400}),
                                "gemini-openapi")
    assert all(key not in b for b in prop(branches)["anyOf"])


@pytest.mark.parametrize("key", ["default", "example", "examples"])
def test_gemini_annotations_beyond_a_double_are_removed(key: str) -> None:
    """A default (or example) holding 10**400 was copied as it was: every number of the
    gemini-openapi form fits a double."""
    value: Any = {"default": 10**400, "example": [1, {"n": -(10**400)}],
                  "examples": [10**400, 2]}[key]
    out = normalize_schema(obj(a={"type": "integer", key: value}), "gemini-openapi")
    assert "default" not in prop(out) and "example" not in prop(out)
    assert ("/properties/a/" + key, "removed") in kinds(out)
    fine = normalize_schema(obj(a={"type": "integer", key: [1.5, 2**60]}), "gemini-openapi")
    if key == "examples":  # the first one becomes the example
        assert prop(fine)["example"] == 1.5
    else:
        assert prop(fine)[key] == [1.5, 2**60]


@pytest.mark.parametrize("target", ["openai-strict", "openai-responses-strict"])
def test_strict_pays_for_the_properties_and_required_it_adds(target: str) -> None:
    """{} with budget=1 was strict with 3 containers ("properties": {}, "required": []
    unpaid): over budget, the strict form falls back to the plain one."""
    for budget in (1, 2):
        out = normalize_schema({}, target, budget=budget)
        assert not out.strict and out.schema == {"type": "object"}
        (why,) = [n for n in out.notes if n.kind == "not-strict"]
        assert "budget" in why.detail
    out = normalize_schema({}, target, budget=3)
    assert out.strict and containers(out.schema) == 3
    optional = obj(a={"type": "string"})  # strict: a nullable type list, required, ...
    assert not normalize_schema(optional, target, budget=4).strict
    assert normalize_schema(optional, target, budget=5).strict


def test_gemini_output_nodes_are_counted_exactly() -> None:
    """A list of types becomes anyOf branches: more output nodes than input ones.  The
    output is counted exactly, so it never holds more than ``budget`` containers."""
    schema = obj(a={"type": ["string", "integer"]})  # 4 containers in, 6 out
    with pytest.raises(SchemaError, match="budget"):
        normalize_schema(schema, "gemini-openapi", budget=5)
    assert containers(normalize_schema(schema, "gemini-openapi", budget=6).schema) == 6


SMALL_BUDGETS = st.integers(1, 60)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(ROOTS, st.sampled_from(SCHEMA_TARGETS), SMALL_BUDGETS)
@example({}, "openai-strict", 1)
@example(obj(a={"type": ["string", "integer"]}), "gemini-openapi", 5)
@example({"anyOf": [obj(a={"type": "string"}), obj(b={"type": "integer"})]}, "anthropic", 7)
def test_output_holds_at_most_budget_containers(schema: dict[str, Any], target: str,
                                                budget: int) -> None:
    """``budget`` bounds the output's objects and lists, whatever a target adds (strict
    ``properties``/``required``/nullable wrappers, gemini ``anyOf`` branches, anthropic's
    hoisted alternatives)."""
    try:
        out = normalize_schema(schema, target, budget=budget)
    except SchemaError as exc:
        assert "budget" in exc.reason or "deeper" in exc.reason or "object" in exc.reason
        return
    assert containers(out.schema) <= budget, (containers(out.schema), out.schema)
