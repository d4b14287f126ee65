"""The ``openai-strict`` target of :func:`~._normalize.normalize_schema` (OpenAI Structured
Outputs): the keyword table, :class:`_Strict` (one conversion), the ``null`` helpers and
OpenAI's size limits; a schema that cannot be strict falls back to the minimal form.

The budget counts the strict form's nodes like any other output's: the ``properties`` and
``required`` it adds to every object are charged as they are made, and the whole output is
counted exactly at the end (nullable wrappers, ``anyOf`` lists), so a strict form over
``budget`` falls back to the minimal form (``normalize_schema({}, "openai-strict",
budget=1)`` is ``{"type": "object"}``, not strict)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import _base as _schema_base  # _prepare_root: looked up there at call time
from ._base import (
    _ANNOTATIONS,
    _DESCRIBE,
    _DROP,
    _HANDLED,
    _JSON_TYPES,
    _KEEP,
    _PRIMITIVES,
    _REFUSE,
    _ROOT_COMBINATORS,
    _SCALAR_TYPES,
    OPENAI_LARGE_ENUM,
    OPENAI_LARGE_ENUM_CHARS,
    OPENAI_MAX_ENUM_VALUES,
    OPENAI_MAX_NESTING,
    OPENAI_MAX_PROPERTIES,
    OPENAI_MAX_STRING_CHARS,
    OPENAI_STRICT_FORMATS,
    Normalized,
    _clone,
    _Ctx,
    _describe_value,
    _Fix,
    _is_finite_json,
    _is_int,
    _is_map,
    _is_number,
    _json_equal,
    _OverBudget,
    _Path,
    _resolve,
    _types_of,
    _value_type,
    _with_description,
)
from ._merge import _intersect
from ._minimal import _minimal

__all__ = [
    "_openai_strict",
]


# -- openai-strict -----------------------------------------------------------------------------


class _NotStrict(Exception):
    def __init__(self, path: _Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


# What openai-strict does with each keyword; "handled" keywords have code in _Strict.node.
_STRICT_ACTIONS: Final[Mapping[str, str]] = {
    # structure, handled by code
    "type": _HANDLED, "properties": _HANDLED, "required": _HANDLED,
    "additionalProperties": _HANDLED, "items": _HANDLED, "anyOf": _HANDLED, "oneOf": _HANDLED,
    "enum": _HANDLED, "const": _HANDLED, "format": _HANDLED, "$defs": _HANDLED,
    "definitions": _HANDLED, "unevaluatedProperties": _HANDLED, "exclusiveMinimum": _HANDLED,
    "exclusiveMaximum": _HANDLED,
    # supported as they are
    "description": _KEEP, "title": _KEEP, "pattern": _KEEP, "multipleOf": _KEEP,
    "minimum": _KEEP, "maximum": _KEEP, "minItems": _KEEP, "maxItems": _KEEP,
    # refused: dropped and said in the description (the server still checks them)
    "minLength": _DESCRIBE, "maxLength": _DESCRIBE, "minProperties": _DESCRIBE,
    "maxProperties": _DESCRIBE, "uniqueItems": _DESCRIBE, "minContains": _DESCRIBE,
    "maxContains": _DESCRIBE, "dependentRequired": _DESCRIBE,
    # refused annotations: dropped
    "default": _DROP, "examples": _DROP, "example": _DROP, "$comment": _DROP,
    "deprecated": _DROP, "readOnly": _DROP, "writeOnly": _DROP, "discriminator": _DROP,
    "$schema": _DROP, "$anchor": _DROP, "$dynamicAnchor": _DROP, "contentEncoding": _DROP,
    "contentMediaType": _DROP, "contentSchema": _DROP, "nullable": _DROP,
    "propertyNames": _DROP, "$id": _DROP,
    # cannot be said in strict mode without changing what the schema accepts
    "not": _REFUSE, "patternProperties": _REFUSE, "if": _REFUSE, "then": _REFUSE,
    "else": _REFUSE, "dependentSchemas": _REFUSE, "dependencies": _REFUSE,
    "prefixItems": _REFUSE, "additionalItems": _REFUSE, "unevaluatedItems": _REFUSE,
    "contains": _REFUSE, "$dynamicRef": _REFUSE, "$recursiveRef": _REFUSE,
}
#: The keywords strict mode refuses outright (the schema is then sent without strict).
_STRICT_REFUSED: Final = frozenset(k for k, a in _STRICT_ACTIONS.items() if a == _REFUSE)
#: The handled keywords :meth:`_Strict.node` reads after its walk over the keywords (which
#: skips them: nothing to do there).
_STRICT_STRUCTURE: Final = frozenset({"type", "properties", "required", "additionalProperties",
                                      "items", "anyOf", "oneOf"})
_STRICT_REF_FORMS: Final = ("#/$defs/", "#/definitions/")
#: Keywords whose subschemas evaluate properties, so that ``unevaluatedProperties: false``
#: beside them is not ``additionalProperties: false`` (``allOf`` and ``$ref`` are merged
#: first; ``if``/``dependentSchemas`` are refused anyway).
_EVALUATING: Final = ("anyOf", "oneOf", "allOf", "$ref", "if", "then", "else",
                      "dependentSchemas")
#: What a kept keyword's value must be in strict mode (the rest of the table is checked by
#: code); a value that is not is removed with a note, never copied into a strict schema.
_VALUE_CHECKS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "positive": lambda v: _is_number(v) and v > 0,
    "count": lambda v: _is_int(v) and v >= 0,
}
_STRICT_VALUES: Final[Mapping[str, str]] = {
    "description": "string", "title": "string", "pattern": "string", "multipleOf": "positive",
    "minimum": "number", "maximum": "number", "minItems": "count", "maxItems": "count",
}
#: Levels (``$ref`` hops and combinator branches) :meth:`_Strict.allows_null` follows before
#: answering "no" (always safe, see there): real schemas need a handful, and it keeps a chain
#: of a thousand ``$ref`` aliases far from Python's recursion limit.
_MAX_NULL_LEVELS = 64
#: A fix that changes nothing (what a branch without one is compared to).
_NO_FIX: Final = _Fix()


@dataclass(frozen=True, slots=True)
class _Done:
    """One inlined ``$ref`` (with constraining siblings) remembered by :meth:`_Strict.ref`:
    the strict form of a source node depends on that node and its place only, so the same
    site reached again along another path reuses it."""

    source: Mapping[str, Any]     # kept alive, so that its id() names it for the whole call
    out: dict[str, Any]
    fix: _Fix | None
    cost: int                     # the budget the conversion spent: charged again on reuse
    height: int                   # levels below the node the conversion reached


class _Strict:
    """One openai-strict conversion.  Raises :class:`_NotStrict` (caught by the caller) when the
    schema cannot be strict; :class:`SchemaError` when over a bound.

    ``$ref``s are kept, except beside constraining siblings, where the referent is merged in:
    a fan-out of those reaches each site along many paths, so a site's conversion is
    remembered and reused, its whole cost charged to the budget first (so the budget counts
    the expanded output and trips without expanding it node by node)."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.queue: list[str] = []            # definitions referenced, to convert
        self.def_out: dict[str, dict[str, Any]] = {}
        self.def_fix: dict[str, _Fix] = {}
        self.null_memo: dict[str, bool] = {}  # allows_null of each $ref's target
        self.done: dict[tuple[int, _Path], _Done] = {}
        self.reached = 0                      # the deepest level converted so far
        self.shared = False                   # whether the output shares remembered nodes

    # ---- entry

    def run(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], _Fix | None,
                                                      dict[str, _Fix]]:
        ctx = self.ctx
        root = _schema_base._prepare_root(schema, ctx)
        for key in _ROOT_COMBINATORS:
            if key in root:
                raise _NotStrict((key,), f"the root uses {key} (strict mode needs a plain "
                                 "object at the root)")
        out, fix = self.node(root, (), 0, is_root=True)
        if "$ref" in out or "anyOf" in out or out.get("type") != "object":
            raise _NotStrict((), "the root is not a plain object schema")
        # definitions referenced (directly or through each other), each converted once
        done: set[str] = set()
        for ref in self.queue:  # grows while it is walked: definitions refer to others
            if ref in done:
                continue
            done.add(ref)
            found = _resolve(ctx.root, ref)
            assert found is not None  # checked when queued
            target, path = found
            d_out, d_fix = self.node(target, path, 2)
            self.def_out[ref] = d_out
            self.def_fix[ref] = d_fix if d_fix is not None else _Fix()
        ends: set[str] = set()  # aliases known to end in a real schema (linear, not n**2)
        for ref, first in self.def_out.items():
            chain, d_out = {ref}, first
            while set(d_out) == {"$ref"}:  # an alias: it must end in a real schema
                nxt = d_out["$ref"]
                if nxt in ends:
                    break
                if nxt in chain or nxt == "#":
                    found = _resolve(ctx.root, ref)
                    raise _NotStrict(found[1] if found else (), "a circular chain of $ref "
                                     "aliases")
                chain.add(nxt)
                d_out = self.def_out[nxt]
            ends |= chain
        self.def_fix["#"] = fix if fix is not None else _Fix()
        for container in ("$defs", "definitions"):
            defs = root.get(container)
            if not _is_map(defs):
                continue
            kept: dict[str, Any] = {}
            for name in defs:
                ref = f"#/{container}/" + str(name).replace("~", "~0").replace("/", "~1")
                if ref in self.def_out:
                    kept[name] = self.def_out[ref]
                else:
                    ctx.note((container, str(name)), "removed", "unused definition removed")
            if kept:
                out[container] = kept
        if self.shared:  # remembered conversions are shared: every output node a new one
            out = _clone(out)
        ctx.check_output(out)  # exact: nullable wrappers and anyOf lists are nodes too
        if ctx.nests_deeper(out):
            raise _NotStrict((), f"the strict form nests deeper than {ctx.max_depth} levels")
        _check_openai_limits(out)
        return out, fix, self.def_fix

    # ---- one node

    def node(self, s: Any, path: _Path, depth: int, *, is_root: bool = False
             ) -> tuple[dict[str, Any], _Fix | None]:
        ctx = self.ctx
        ctx.budget -= 1  # ctx.spend(path), inline: once per node
        if ctx.budget < 0:
            raise ctx.over_budget(path)
        if depth > ctx.max_depth:  # the plain form (the input's depth) may still fit
            raise _NotStrict(path, f"the strict form nests deeper than {ctx.max_depth} levels")
        if depth > self.reached:  # noqa: PLR1730 - no call of max() on every node
            self.reached = depth
        if not _is_map(s):
            what = "true/{} (any value)" if s is True else "false (no value)" \
                if s is False else "not a schema object"
            raise _NotStrict(path, f"a subschema is {what}")
        if "$ref" in s:
            return self.ref(s, path, depth, is_root)
        if "allOf" in s:
            return self.node(self.merge_all_of(s, path), path, depth + 1, is_root=is_root)

        if not _STRICT_REFUSED.isdisjoint(s):
            key = next(k for k in s if k in _STRICT_REFUSED)  # the first, as written
            raise _NotStrict((*path, key), f"{key} cannot be expressed in strict mode")
        if "anyOf" in s and "oneOf" in s:
            raise _NotStrict(path, "anyOf and oneOf together (an intersection)")

        t = s.get("type")
        types = [t] if type(t) is str and t in _JSON_TYPES else _types_of(s)
        if "type" in s and types is None:
            raise _NotStrict((*path, "type"), "type is not a JSON Schema type")
        if types is None:
            types = self.infer_types(s)
            if types is None and "anyOf" not in s and "oneOf" not in s:
                raise _NotStrict(path, "a value with no type (strict mode needs one)")
            if types is not None:
                ctx.note(path, "added-type", f"type {'/'.join(types)} inferred")

        out: dict[str, Any] = {}
        if types is not None:
            out["type"] = types[0] if len(types) == 1 else types
        described: list[str] = []
        fix_props: dict[str, _Fix] = {}  # (filled for an object only)
        strip: set[str] | frozenset[str] = frozenset()
        consts: dict[str, Any] = {}
        keys: frozenset[str] | None = None
        items_fix: _Fix | None = None
        branches: tuple[_Fix, ...] = ()

        for key, value in s.items():
            if key in _STRICT_STRUCTURE:
                continue  # read below
            action = _STRICT_ACTIONS.get(key, _DROP)
            kpath = (*path, key)
            if action == _KEEP:
                if _VALUE_CHECKS[_STRICT_VALUES[key]](value):
                    out[key] = value if type(value) in _SCALAR_TYPES else ctx.copy(value, kpath)
                else:
                    ctx.note(kpath, "removed", f"{key} removed (not a valid value)")
            elif action == _DESCRIBE:
                described.append(f"{key}: {_describe_value(value)}")
                ctx.note(kpath, "moved-to-description",
                         f"{key} is refused by strict mode; said in the description")
            elif action == _DROP:
                ctx.note(kpath, "removed", f"{key} removed (not accepted by strict mode)")
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                if _is_number(value):
                    out[key] = value
                else:
                    described.append(f"{key}: {_describe_value(value)}")
                    ctx.note(kpath, "moved-to-description", f"{key} (boolean form) described")
            elif key == "format":
                if isinstance(value, str) and value in OPENAI_STRICT_FORMATS:
                    out[key] = value
                else:
                    described.append(f"format: {_describe_value(value)}")
                    ctx.note(kpath, "moved-to-description",
                             "format not accepted by strict mode; said in the description")
            elif key in ("$defs", "definitions") and not is_root:
                ctx.note(kpath, "removed", "definitions below the root removed")
            elif key == "unevaluatedProperties":
                if value is not False:
                    raise _NotStrict(kpath, "unevaluatedProperties other than false")
                evaluating = [k for k in _EVALUATING if k in s]
                if evaluating:
                    # the properties evaluated by the branches would be closed out
                    raise _NotStrict(kpath, "unevaluatedProperties: false over "
                                     f"{evaluating[0]} (closing each part accepts less)")
                ctx.note(kpath, "removed", "unevaluatedProperties: false removed (the object "
                         "is closed with additionalProperties: false)")
            elif key == "const":
                if not _is_finite_json(value):
                    raise _NotStrict(kpath, "const is not a JSON value (NaN or Infinity)")
                if "enum" in s:
                    continue
                out["enum"] = [ctx.copy(value, kpath)]
                ctx.note(kpath, "const-to-enum", "const written as a one-value enum")
            elif key == "enum":
                if not isinstance(value, list) or not value:
                    raise _NotStrict(kpath, "enum is not a non-empty list")
                if not _is_finite_json(value):
                    raise _NotStrict(kpath, "enum holds a value that is not JSON (NaN or "
                                     "Infinity)")
                values = value
                if "const" in s:
                    if not any(_json_equal(v, s["const"]) for v in value):
                        raise _NotStrict(kpath, "const is not one of the enum values")
                    values = [s["const"]]
                    ctx.note(kpath, "const-to-enum", "const and enum written as one enum")
                out["enum"] = ctx.copy(values, kpath)

        is_object = types is not None and "object" in types
        is_array = types is not None and "array" in types

        if "properties" in s and not is_object:
            ctx.note((*path, "properties"), "removed", "properties on a non-object removed")
        if "items" in s and not is_array:
            ctx.note((*path, "items"), "removed", "items on a non-array removed")

        union_key = "anyOf" if "anyOf" in s else "oneOf" if "oneOf" in s else None
        if is_object and union_key is not None:
            # the object and each branch would be closed separately: together they accept
            # only objects with exactly the properties of both, usually none at all
            raise _NotStrict((*path, union_key), f"an object with {union_key} branches (each "
                             "part closed separately would accept no value)")
        if is_object:
            stripped: set[str] = set()
            keys, consts = self.object(s, out, path, depth, is_root, fix_props, stripped)
            strip = stripped
        if is_array:
            items = s.get("items")
            ipath = (*path, "items")
            if items is None or items is True or (_is_map(items) and not items):
                raise _NotStrict(ipath, "an array with untyped items")
            if isinstance(items, list):
                raise _NotStrict(ipath, "tuple items (a list of schemas)")
            out["items"], items_fix = self.node(items, ipath, depth + 1)

        if union_key is not None:
            alts = s[union_key]
            upath = (*path, union_key)
            if not isinstance(alts, list) or not alts:
                raise _NotStrict(upath, f"{union_key} is not a non-empty list")
            if union_key == "oneOf":
                ctx.note(upath, "one-of-to-any-of", "oneOf written as anyOf (strict mode has no "
                         "oneOf; the branches are still checked by the server)")
            outs: list[dict[str, Any]] = []
            fixes: list[_Fix] = []
            for i, alt in enumerate(alts):
                a_out, a_fix = self.node(alt, (*upath, str(i)), depth + 2)
                outs.append(a_out)
                fixes.append(a_fix if a_fix is not None else _Fix())
            out["anyOf"] = outs
            if any(f != _NO_FIX for f in fixes):
                branches = tuple(fixes)

        if described:
            _with_description(out, described)
        if keys is not None or items_fix is not None or branches:
            return out, _Fix(frozenset(strip), fix_props, keys, consts, items_fix, branches)
        return out, None

    def object(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path, depth: int,
               is_root: bool, fix_props: dict[str, _Fix], strip: set[str]
               ) -> tuple[frozenset[str], dict[str, Any]]:
        ctx = self.ctx
        props = s.get("properties", {})
        if not _is_map(props):
            raise _NotStrict((*path, "properties"), "properties is not an object")
        extra = s.get("additionalProperties", None)
        closed = extra is False or s.get("unevaluatedProperties") is False
        if "additionalProperties" in s and extra is not False:
            raise _NotStrict((*path, "additionalProperties"), "an object that takes "
                             "undeclared properties (a map) cannot be strict")
        if not closed:
            if not props and not is_root:
                raise _NotStrict(path, "an object with no declared properties (a free-form "
                                 "map) cannot be strict")
            ctx.note(path, "closed", "additionalProperties: false added (strict mode closes "
                     "every object)")
        required = s.get("required", [])
        if not isinstance(required, list):
            required = []
        wanted = {r for r in required if isinstance(r, str)}
        for name in sorted(wanted.difference(props)):
            ctx.note((*path, "required"), "removed",
                     f"required name {_describe_value(name)[:60]} is not a declared property")
        out_props: dict[str, Any] = {}
        consts: dict[str, Any] = {}
        for name, sub in props.items():
            ppath = (*path, "properties", name)
            p_out, p_fix = self.node(sub, ppath, depth + 2)
            enum = p_out.get("enum")
            if isinstance(enum, list) and len(enum) == 1:  # sent by strict mode, or null
                consts[name] = enum[0]
            if name not in wanted and not self.allows_null(sub, ppath):
                p_out = _nullable(p_out)
                strip.add(name)
                ctx.note(ppath, "made-nullable", "optional property made required and "
                         "nullable; fix_arguments removes the null")
            if p_fix is not None:
                fix_props[name] = p_fix
            out_props[name] = p_out
        ctx.spend((*path, "properties"), 2)  # "properties" and "required": output nodes too
        out["properties"] = out_props
        out["required"] = list(out_props)
        out["additionalProperties"] = False
        return frozenset(out_props), consts

    # ---- references

    def ref(self, s: Mapping[str, Any], path: _Path, depth: int, is_root: bool
            ) -> tuple[dict[str, Any], _Fix | None]:
        ctx = self.ctx
        ref = s["$ref"]
        rpath = (*path, "$ref")
        if not isinstance(ref, str):
            raise _NotStrict(rpath, "$ref is not a string")
        found = _resolve(ctx.root, ref)
        if found is None:
            raise _NotStrict(rpath, "$ref does not resolve to a local definition")
        siblings = {k: v for k, v in s.items() if k != "$ref"}
        constraining = {k for k in siblings
                        if k not in _ANNOTATIONS and k not in {"$defs", "definitions"}}
        if constraining or is_root:
            site = (id(s), path)
            done = self.done.get(site)
            if done is not None and done.source is s and not is_root \
                    and depth + done.height <= ctx.max_depth:
                ctx.spend(path, done.cost)  # before anything is copied: a fan-out trips here
                self.reached = max(self.reached, depth + done.height)
                self.shared = True
                return done.out, done.fix
            outer_reached, self.reached = self.reached, depth
            before = ctx.budget
            merged, where = self.merge(s, path)
            out, fix = self.node(merged, where, depth + 1, is_root=is_root)
            height = self.reached - depth
            self.reached = max(outer_reached, self.reached)
            if not is_root:
                self.done[site] = _Done(s, out, fix, before - ctx.budget, height)
            return out, fix
        if ref != "#" and not (ref.startswith(_STRICT_REF_FORMS) and ref.count("/") == 2):
            raise _NotStrict(rpath, "$ref to a location other than #, #/$defs/<name> or "
                             "#/definitions/<name>")
        shown: dict[str, Any] = {}
        for key, value in siblings.items():
            if key not in ("title", "description"):
                ctx.note((*path, key), "removed", f"{key} beside $ref removed")
            elif isinstance(value, str):
                shown[key] = value
            else:
                ctx.note((*path, key), "removed", f"{key} removed (not a valid value)")
        if ref != "#":
            self.queue.append(ref)
        if not shown:
            return {"$ref": ref}, _Fix(ref=ref)
        # a described reference (pydantic's shape for a described model field): $ref may
        # have no siblings, so it goes in a one-branch anyOf.  Never inlined: inlining a DAG
        # of described fields costs 2**depth nodes, the wrapper one.
        return {**shown, "anyOf": [{"$ref": ref}]}, _Fix(ref=ref)

    def merge(self, s: Mapping[str, Any], path: _Path) -> tuple[dict[str, Any], _Path]:
        """``{$ref: X, <constraints>}`` as one schema (2020-12: the intersection), when the two
        can be merged without changing what they accept; else :class:`_NotStrict`."""
        ctx = self.ctx
        seen: set[str] = set()
        node = dict(s)
        where = path
        while "$ref" in node:
            ref = node.pop("$ref")
            if not isinstance(ref, str) or ref in seen:
                raise _NotStrict((*path, "$ref"), "circular $ref chain with constraints")
            seen.add(ref)
            ctx.spend(path)
            found = _resolve(ctx.root, ref)
            if found is None:
                raise _NotStrict((*path, "$ref"), "$ref does not resolve to a local definition")
            target, where = found
            if not _is_map(target):
                raise _NotStrict((*path, "$ref"), "$ref resolves to a non-schema")
            result = _intersect(target, node)
            if result.empty:
                raise _NotStrict(path, "a $ref and its siblings accept no value together ("
                                 f"{'; '.join(result.empty)})")
            merged = None if result.conflicts else result.merged
            if merged is None:
                raise _NotStrict(path, "$ref with constraining siblings that cannot be merged "
                                 "without changing what the schema accepts")
            node = merged
        ctx.note(path, "merged", "$ref and its constraining siblings merged into one schema")
        return node, where

    def merge_all_of(self, s: Mapping[str, Any], path: _Path) -> dict[str, Any]:
        ctx = self.ctx
        entries = s["allOf"]
        if not isinstance(entries, list) or not entries:
            raise _NotStrict((*path, "allOf"), "allOf is not a non-empty list")
        node: dict[str, Any] = {k: v for k, v in s.items() if k != "allOf"}
        for i, raw in enumerate(entries):
            if not _is_map(raw):
                raise _NotStrict((*path, "allOf", str(i)), "allOf entry is not a schema")
            entry = self.merge(raw, (*path, "allOf", str(i)))[0] if "$ref" in raw else raw
            if "allOf" in entry:
                raise _NotStrict((*path, "allOf", str(i)), "nested allOf")
            result = _intersect(entry, node)
            if result.empty:
                raise _NotStrict((*path, "allOf"), "allOf entries that accept no value "
                                 f"together ({'; '.join(result.empty)})")
            merged = None if result.conflicts else result.merged
            if merged is None:
                raise _NotStrict((*path, "allOf"), "allOf entries that cannot be merged "
                                 "without changing what the schema accepts")
            node = merged
        ctx.note((*path, "allOf"), "merged", "allOf merged into one schema")
        return node

    # ---- helpers

    def infer_types(self, s: Mapping[str, Any]) -> list[str] | None:
        if _is_map(s.get("properties")):
            return ["object"]
        if "items" in s:
            return ["array"]
        values = s["enum"] if isinstance(s.get("enum"), list) and s["enum"] else \
            [s["const"]] if "const" in s else None
        if values is None:
            return None
        found = [_value_type(v) for v in values]
        if any(t is None for t in found):
            return None
        names = list(dict.fromkeys(t for t in found if t is not None))
        if "integer" in names and "number" in names:
            names.remove("integer")
        return names

    def allows_null(self, s: Any, path: _Path, seen: frozenset[str] = frozenset(),
                    level: int = 0) -> bool:
        """Whether the source schema ``s`` accepts ``null`` (so a ``null`` is kept).

        Only asked for optional properties, where False is always safe (the property is made
        nullable and :meth:`Normalized.fix_arguments` removes the ``null``): so a walk deeper
        than :data:`_MAX_NULL_LEVELS` answers False, and each ``$ref`` is answered once."""
        ctx = self.ctx
        ctx.budget -= 1  # ctx.spend(path), inline: once per optional property at least
        if ctx.budget < 0:
            raise ctx.over_budget(path)
        if level > _MAX_NULL_LEVELS:
            return False
        if isinstance(s, bool):
            return s
        if not _is_map(s):
            return True
        if "type" in s:
            t = s["type"]
            if not (t == "null" or (isinstance(t, list) and "null" in t)):
                return False
        if isinstance(s.get("enum"), list) and None not in s["enum"]:
            return False
        if "const" in s and s["const"] is not None:
            return False
        ref = s.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return False
            if ref not in self.null_memo:
                found = _resolve(self.ctx.root, ref)
                self.null_memo[ref] = found is not None and self.allows_null(
                    found[0], path, seen | {ref}, level + 1)
            if not self.null_memo[ref]:
                return False
        for key, need_all in (("allOf", True), ("anyOf", False), ("oneOf", False)):
            alts = s.get(key)
            if isinstance(alts, list) and alts:
                results = [self.allows_null(a, path, seen, level + 1) for a in alts]
                if not (all(results) if need_all else any(results)):
                    return False
        # ``not`` is refused in strict mode, so the answer under it never matters
        return not ("not" in s and self.allows_null(s["not"], path, seen, level + 1))


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` accepting ``null`` too: a type union for primitive types, else an anyOf."""
    t = out.get("type")
    types = [t] if type(t) is str and t in _JSON_TYPES else _types_of(out)
    if types is not None and "$ref" not in out and "anyOf" not in out \
            and set(types) <= _PRIMITIVES:
        new = dict(out)
        new["type"] = types if "null" in types else [*types, "null"]
        enum = out.get("enum")
        if isinstance(enum, list) and None not in enum:
            new["enum"] = [*enum, None]
        return new
    if "anyOf" in out and set(out) <= {"anyOf", "title", "description"}:
        return {**out, "anyOf": [*out["anyOf"], {"type": "null"}]}
    shown: dict[str, Any] = {k: out[k] for k in ("title", "description") if k in out}
    inner = {k: v for k, v in out.items() if k not in shown}
    return {"anyOf": [inner, {"type": "null"}], **shown}


def _check_openai_limits(root: dict[str, Any]) -> None:
    """OpenAI's documented size limits, on the output (refs counted once).

    One walk counts the properties, enum values and characters, and the nesting as
    :func:`_nesting` measures it (levels of objects and arrays on the deepest path through
    properties, items and anyOf): top-down, each node the levels above it plus its own.
    Only an output with a ``$ref`` on such a path takes :func:`_nesting` itself (a ``$ref``
    is followed there once, recursion cut)."""
    props = enums = chars = 0
    nesting = 0
    refs = False  # a $ref on a path _nesting follows
    # (value, the levels above it, its hops from the root, whether _nesting reaches it as a
    # node: a list's flag says whether its elements are reached)
    stack: list[tuple[Any, int, int, bool]] = [(root, 0, 0, True)]
    push = stack.append
    while stack:
        node, above, hops, reached = stack.pop()
        if isinstance(node, list):
            for v in node:  # (a list in a list: _nesting reaches neither it nor its items)
                push((v, above, hops, reached and not isinstance(v, list)))
            continue
        if not isinstance(node, dict):
            continue
        below = above
        reach = False  # whether _nesting reaches this node's children
        if reached:
            ref = node.get("$ref")
            if hops > _MAX_NESTING_HOPS:
                nesting = max(nesting, above + OPENAI_MAX_NESTING + 1)
            elif isinstance(ref, str):
                refs = True
            else:
                t = node.get("type")
                if type(t) is str:
                    own = 1 if t in {"object", "array"} else 0
                else:
                    own = 1 if {"object", "array"} & set(_types_of(node) or []) else 0
                below = above + own
                nesting = below if below > nesting else nesting
                reach = True
        hop = hops + 1
        for container in ("$defs", "definitions"):
            defs = node.get(container)
            if isinstance(defs, dict):
                chars += sum(map(len, map(str, defs)))
                for v in defs.values():
                    push((v, 0, 0, False))
        p = node.get("properties")
        if isinstance(p, dict):
            props += len(p)
            chars += sum(map(len, map(str, p)))
            for v in p.values():  # (a list there is no node of _nesting, nor its items)
                push((v, below, hop, reach and not isinstance(v, list)))
        enum = node.get("enum")
        if isinstance(enum, list):
            enums += len(enum)
            size = sum(len(v) for v in enum if isinstance(v, str))
            chars += size
            if len(enum) > OPENAI_LARGE_ENUM and size > OPENAI_LARGE_ENUM_CHARS:
                raise _NotStrict((), f"an enum of more than {OPENAI_LARGE_ENUM} values has more "
                                 f"than {OPENAI_LARGE_ENUM_CHARS} characters")
        for key in ("items", "anyOf"):
            if key in node:
                push((node[key], below, hop, reach))
    if props > OPENAI_MAX_PROPERTIES:
        raise _NotStrict((), f"{props} properties (OpenAI's limit is {OPENAI_MAX_PROPERTIES})")
    if enums > OPENAI_MAX_ENUM_VALUES:
        raise _NotStrict((), f"{enums} enum values (OpenAI's limit is "
                         f"{OPENAI_MAX_ENUM_VALUES})")
    if chars > OPENAI_MAX_STRING_CHARS:
        raise _NotStrict((), f"{chars} characters of names and enum values (OpenAI's limit is "
                         f"{OPENAI_MAX_STRING_CHARS})")
    if refs:
        nesting = _nesting(root, root, (), {}, 0)
    if nesting > OPENAI_MAX_NESTING:
        raise _NotStrict((), f"{nesting} levels of nesting (OpenAI's limit is "
                         f"{OPENAI_MAX_NESTING})")


#: Schema nodes (through properties, items, anyOf and $ref) :func:`_nesting` follows on one
#: path: far more than ten levels of nesting can use, and it bounds the recursion.
_MAX_NESTING_HOPS = 120


def _nesting(node: Any, root: dict[str, Any], stack: tuple[str, ...],
             memo: dict[str, int], hops: int) -> int:
    """Object/array levels on the deepest path; a recursive ``$ref`` counts once.  A path
    longer than :data:`_MAX_NESTING_HOPS` nodes counts as too deep."""
    if not isinstance(node, dict):
        return 0
    if hops > _MAX_NESTING_HOPS:
        return OPENAI_MAX_NESTING + 1
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in stack:
            return 0
        if ref not in memo:
            found = _resolve(root, ref)
            memo[ref] = _nesting(found[0], root, (*stack, ref), memo, hops + 1) \
                if found else 0
        return memo[ref]
    children: list[Any] = []
    p = node.get("properties")
    if isinstance(p, dict):
        children.extend(p.values())
    for key in ("items", "anyOf"):
        v = node.get(key)
        if isinstance(v, list):
            children.extend(v)
        elif v is not None:
            children.append(v)
    below = 0
    for child in children:  # (what is no dict counts 0 levels: not called for)
        if isinstance(child, dict):
            n = _nesting(child, root, stack, memo, hops + 1)
            below = n if n > below else below
    t = node.get("type")
    if type(t) is str:  # the usual case of _types_of, without the list
        return below + (1 if t in {"object", "array"} else 0)
    types = _types_of(node) or []
    return below + (1 if {"object", "array"} & set(types) else 0)


def _openai_strict(schema: Mapping[str, Any], ctx: _Ctx) -> Normalized:
    strict = _Strict(ctx)
    try:
        out, fix, defs = strict.run(schema)
    except (_NotStrict, _OverBudget) as exc:
        # the plain form costs one copy of the source, which _check_input has measured
        fallback = _Ctx(ctx.root, ctx.target, ctx.max_depth, ctx.initial_budget,
                        ctx.ref_unfold)
        plain = _minimal(schema, fallback)
        where = exc.path if isinstance(exc, _NotStrict) else ()
        reason = exc.reason if isinstance(exc, _NotStrict) else \
            "the strict conversion costs more nodes than the budget allows"
        fallback.note(where, "not-strict", f"sent without strict: {reason}")
        ctx.fitting = fallback.fitting  # what _minimal knows of its output's nesting
        return Normalized(plain, False, fallback.made_notes(), ctx.target)
    return Normalized(out, True, ctx.made_notes(), ctx.target, fix, defs)
