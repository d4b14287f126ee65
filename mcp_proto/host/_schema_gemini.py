"""The ``gemini-openapi`` target of :func:`~._schema.normalize_schema` (Gemini's
``parameters`` channel, an OpenAPI 3.0 subset): the keyword tables and :class:`_Gemini`
(one conversion, every ``$ref`` inlined, only ``Schema`` fields kept)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from . import _schema_base  # _prepare_root: looked up there at call time
from ._schema_base import (
    _ADJACENT_GROUPS,
    _ANNOTATIONS,
    _DESCRIBE,
    _HANDLED,
    _KEEP,
    GEMINI_FORMATS,
    MAX_DESCRIBED_CHARS,
    Normalized,
    SchemaError,
    _Ctx,
    _deref_entry,
    _describe_value,
    _is_float,
    _is_int,
    _json_equal,
    _merge_pair,
    _Path,
    _resolve,
    _types_of,
    _value_type,
    _with_description,
)

__all__ = [
    "_gemini_openapi",
]


# -- gemini-openapi ----------------------------------------------------------------------------

# What gemini-openapi does with each source keyword (the rest: removed, with a note).
_GEMINI_ACTIONS: Final[Mapping[str, str]] = {
    "type": _HANDLED, "nullable": _HANDLED, "properties": _HANDLED, "required": _HANDLED,
    "items": _HANDLED, "prefixItems": _HANDLED, "anyOf": _HANDLED, "oneOf": _HANDLED,
    "enum": _HANDLED, "const": _HANDLED, "format": _HANDLED, "examples": _HANDLED,
    "propertyOrdering": _HANDLED, "$defs": _HANDLED, "definitions": _HANDLED,
    "title": "string", "description": "string", "pattern": "string",
    "minimum": "number", "maximum": "number",
    "minLength": "count", "maxLength": "count", "minItems": "count", "maxItems": "count",
    "minProperties": "count", "maxProperties": "count",
    "default": _KEEP, "example": _KEEP,
    "exclusiveMinimum": _DESCRIBE, "exclusiveMaximum": _DESCRIBE, "multipleOf": _DESCRIBE,
    "uniqueItems": _DESCRIBE, "minContains": _DESCRIBE, "maxContains": _DESCRIBE,
    "dependentRequired": _DESCRIBE,
}
_GEMINI_CHECKS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_float,
    "count": lambda v: _is_int(v) and v >= 0,
}


#: The keywords that apply to one type only, with that type (where a list of types becomes
#: ``anyOf`` branches, each goes into its type's branch).
_GEMINI_TYPE_KEYWORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "properties": ("object",), "required": ("object",), "propertyOrdering": ("object",),
    "minProperties": ("object",), "maxProperties": ("object",),
    "items": ("array",), "minItems": ("array",), "maxItems": ("array",),
    "minLength": ("string",), "maxLength": ("string",), "pattern": ("string",),
    "enum": ("string",), "minimum": ("integer", "number"), "maximum": ("integer", "number"),
    "format": ("string", "integer", "number"),
}


class _Gemini:
    """One gemini-openapi conversion: every ``$ref`` inlined, only Schema fields kept."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx

    def run(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        root = _schema_base._prepare_root(schema, self.ctx)
        for container in ("$defs", "definitions"):
            if container in root:
                self.ctx.note((container,), "removed", "definitions removed (every $ref is "
                              "inlined)")
        out = self.node(root, (), 0, ())
        if out is None:
            raise SchemaError("", "the root schema accepts no value", self.ctx.target)
        if "type" not in out:  # the root was typed object; a referent without type lost it
            out = {"type": "object", **out}
        elif out["type"] != "object":
            raise SchemaError("", "the root schema is not of type object", self.ctx.target)
        return out

    def node(self, s: Any, path: _Path, depth: int, stack: tuple[str, ...]
             ) -> dict[str, Any] | None:
        """The Gemini form of ``s``; None for a ``false`` schema (no value: the caller drops
        the property or branch)."""
        ctx = self.ctx
        ctx.spend(path)
        ctx.deeper(path, depth)
        if s is False:
            return None
        if s is True:
            ctx.note(path, "untyped", "true (any value) left typeless")
            return {}
        if not isinstance(s, Mapping):
            ctx.note(path, "invalid-schema", "not a schema object; replaced by {} (any value)")
            return {}
        if "$ref" in s:
            return self.ref(s, path, depth, stack)
        if "allOf" in s:
            s = self.merge_all_of(s, path, stack)

        out: dict[str, Any] = {}
        described: list[str] = []
        types = self.types(s, out, path)

        for key, value in s.items():
            action = _GEMINI_ACTIONS.get(key)
            kpath = (*path, key)
            if action is None:
                ctx.note(kpath, "removed", f"{key} removed (not a Gemini Schema field)")
            elif action in _GEMINI_CHECKS:
                if _GEMINI_CHECKS[action](value):
                    out[key] = value
                else:
                    ctx.note(kpath, "removed", f"{key} removed (a value Gemini cannot take)")
            elif action == _KEEP:
                out[key] = ctx.copy(value, kpath)
            elif action == _DESCRIBE:
                described.append(f"{key}: {_describe_value(value)}")
                ctx.note(kpath, "moved-to-description", f"{key} said in the description")
            elif key == "nullable":
                if isinstance(value, bool):
                    out["nullable"] = out.get("nullable", False) or value
            elif key == "examples":
                if isinstance(value, list) and value and "example" not in s:
                    out["example"] = ctx.copy(value[0], kpath)
                    ctx.note(kpath, "examples-to-example", "examples: the first kept as example")
                else:
                    ctx.note(kpath, "removed", "examples removed")
            elif key == "format":
                allowed: set[str] = set()
                for t in types:
                    allowed |= GEMINI_FORMATS.get(t, frozenset())
                if isinstance(value, str) and value in allowed:
                    out["format"] = value
                else:
                    described.append(f"format: {_describe_value(value)}")
                    ctx.note(kpath, "moved-to-description", "format Gemini does not accept; "
                             "said in the description")
            elif key in ("$defs", "definitions") and path:
                ctx.note(kpath, "removed", "definitions removed (every $ref is inlined)")

        self.values(s, out, types, path, described)
        if "object" in types:
            self.object(s, out, path, depth, stack)
        else:
            for key in ("properties", "required", "propertyOrdering"):
                if key in s:
                    ctx.note((*path, key), "removed", f"{key} on a non-object removed")
        if "array" in types:
            self.array(s, out, path, depth, stack)
        elif "items" in s or "prefixItems" in s:
            ctx.note((*path, "items"), "removed", "items on a non-array removed")
        self.union(s, out, path, depth, stack)
        if isinstance(s.get("type"), list) and "anyOf" in out and "type" not in out:
            self.to_branches(out, path)
        _with_description(out, described)
        if "type" not in out and "anyOf" not in out and path:
            ctx.note(path, "untyped", "no type and none to infer; left typeless (Gemini may "
                     "refuse a typeless value)")
        if "type" in out:
            out = {"type": out.pop("type"), **out}
        return out

    # ---- pieces

    def types(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path) -> list[str]:
        ctx = self.ctx
        tpath = (*path, "type")
        types = _types_of(s)
        if "type" in s and types is None:
            ctx.note(tpath, "removed", "type removed (not a JSON Schema type)")
        if types is None:
            if isinstance(s.get("properties"), Mapping):
                types = ["object"]
            elif "items" in s or "prefixItems" in s:
                types = ["array"]
            else:
                values = s["enum"] if isinstance(s.get("enum"), list) else \
                    [s["const"]] if "const" in s else []
                kinds = {_value_type(v) for v in values}
                types = ["string"] if values and kinds <= {"string", "null"} \
                    and "string" in kinds else []
            if types:
                ctx.note(path, "added-type", f"type {types[0]} inferred")
        non_null = [t for t in types if t != "null"]
        if len(non_null) == 1:
            out["type"] = non_null[0]
            if "null" in types:
                out["nullable"] = True
                ctx.note(tpath, "type-array-to-nullable", "type [T, null] written as T with "
                         "nullable: true")
        elif not non_null and types:
            out["type"] = "null"
        elif len(non_null) > 1:
            out["anyOf"] = [{"type": t} for t in non_null]
            if "null" in types:
                out["nullable"] = True
            ctx.note(tpath, "type-array-to-any-of", "a list of types written as anyOf")
        return non_null

    def to_branches(self, out: dict[str, Any], path: _Path) -> None:
        """A list of types became ``anyOf`` of bare types: each type's keywords (properties
        for the object, items for the array ...) go into that type's branch, since Gemini
        reads them only beside their type."""
        branches = {b.get("type"): b for b in out["anyOf"] if set(b) == {"type"}}
        for key in [k for k in out if k in _GEMINI_TYPE_KEYWORDS]:
            value = out.pop(key)
            homes = [branches[t] for t in _GEMINI_TYPE_KEYWORDS[key] if t in branches]
            if key == "format":
                homes = [b for b in homes if value in GEMINI_FORMATS.get(str(b["type"]), ())]
            for home in homes:
                home[key] = value
            if not homes:
                self.ctx.note((*path, key), "removed", f"{key} removed (it applies to none of "
                              "the types)")

    def values(self, s: Mapping[str, Any], out: dict[str, Any], types: list[str], path: _Path,
               described: list[str]) -> None:
        """``enum`` and ``const``: Gemini enums hold strings only."""
        ctx = self.ctx
        if "const" in s:
            value = s["const"]
            if isinstance(value, str) and types in ([], ["string"]):
                out["enum"] = [value]
                ctx.note((*path, "const"), "const-to-enum", "const written as a one-value enum")
            elif value is None and "object" not in types:
                out["type"] = "null"
                ctx.note((*path, "const"), "removed", "const null written as type null")
            else:
                described.append(f"Must be: {_describe_value(value)}")
                ctx.note((*path, "const"), "moved-to-description", "const said in the "
                         "description (Gemini enums hold strings only)")
            return
        enum = s.get("enum")
        if "enum" not in s:
            return
        epath = (*path, "enum")
        if not isinstance(enum, list) or not enum:
            ctx.note(epath, "removed", "enum removed (not a non-empty list)")
            return
        strings = [v for v in enum if isinstance(v, str)]
        others = [v for v in enum if not isinstance(v, str) and v is not None]
        if strings and not others and types in ([], ["string"]):
            out["enum"] = strings
            if None in enum:
                out["nullable"] = True
                ctx.note(epath, "null-branch-to-nullable", "null in enum written as nullable")
            return
        shown = ", ".join(_describe_value(v) for v in enum[:50])
        described.append(f"Allowed values: {shown}" + (", …" if len(enum) > 50 else ""))
        ctx.note(epath, "enum-to-description", "an enum of non-strings said in the description "
                 "(Gemini enums hold strings only)")

    def object(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path, depth: int,
               stack: tuple[str, ...]) -> None:
        ctx = self.ctx
        props = s.get("properties")
        out_props: dict[str, Any] = {}
        if isinstance(props, Mapping):
            for name, sub in props.items():
                ppath = (*path, "properties", name)
                p_out = self.node(sub, ppath, depth + 2, stack)
                if p_out is None:
                    ctx.note(ppath, "removed", "a property whose schema is false removed")
                    continue
                out_props[str(name)] = p_out
        elif "properties" in s:
            ctx.note((*path, "properties"), "removed", "properties is not an object")
        if out_props:
            out["properties"] = out_props
        elif "properties" in s:
            ctx.note((*path, "properties"), "removed", "empty properties omitted (Gemini "
                     "refuses empty properties on an object)")
        required = s.get("required")
        if "required" in s:
            names = list(required) if isinstance(required, list) else []
            kept = list(dict.fromkeys(r for r in names if isinstance(r, str) and r in out_props))
            if kept != names:
                ctx.note((*path, "required"), "removed", "required names that are not "
                         "properties removed")
            if kept:
                out["required"] = kept
        order = s.get("propertyOrdering")
        if "propertyOrdering" in s:
            names = [r for r in order if isinstance(r, str) and r in out_props] \
                if isinstance(order, list) else []
            if names:
                out["propertyOrdering"] = list(dict.fromkeys(names))
            else:
                ctx.note((*path, "propertyOrdering"), "removed", "propertyOrdering removed")

    def array(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path, depth: int,
              stack: tuple[str, ...]) -> None:
        ctx = self.ctx
        items = s.get("items")
        key = "items"
        if items is None and "prefixItems" in s:
            items, key = s["prefixItems"], "prefixItems"
        ipath = (*path, key)
        if items is None:
            ctx.note(path, "untyped", "an array without items: items left unspecified")
            return
        if isinstance(items, list):
            alts = [self.node(x, (*ipath, str(i)), depth + 2, stack)
                    for i, x in enumerate(items)]
            kept = [a for a in alts if a is not None]
            ctx.note(ipath, "type-array-to-any-of", "tuple items written as one items schema "
                     "(anyOf of the positions)")
            if len(kept) == 1:
                out["items"] = kept[0]
            elif kept:
                out["items"] = {"anyOf": kept}
            else:
                out["maxItems"] = 0
            return
        i_out = self.node(items, ipath, depth + 1, stack)
        if i_out is None:
            out["maxItems"] = 0
            ctx.note(ipath, "removed", "items: false written as maxItems: 0")
        else:
            out["items"] = i_out

    def union(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path, depth: int,
              stack: tuple[str, ...]) -> None:
        ctx = self.ctx
        key = "anyOf" if "anyOf" in s else "oneOf" if "oneOf" in s else None
        if key is None:
            return
        if key == "anyOf" and "oneOf" in s:
            ctx.note((*path, "oneOf"), "removed", "oneOf beside anyOf removed")
        alts = s[key]
        upath = (*path, key)
        if key == "oneOf":
            ctx.note(upath, "one-of-to-any-of", "oneOf written as anyOf")
        if not isinstance(alts, list) or not alts:
            ctx.note(upath, "removed", f"{key} removed (not a non-empty list)")
            return
        branches: list[dict[str, Any]] = []
        nullable = False
        for i, alt in enumerate(alts):
            b = self.node(alt, (*upath, str(i)), depth + 2, stack)
            if b is None:
                continue
            if b.get("type") == "null" and set(b) <= {"type", "title", "description"}:
                nullable = True
                ctx.note((*upath, str(i)), "null-branch-to-nullable",
                         "a null branch written as nullable: true")
                continue
            if b.pop("nullable", False):
                nullable = True
            branches.append(b)
        if "anyOf" in out:  # from a type list: an intersection; keep the branches only
            ctx.note(upath, "removed", f"{key} beside a list of types removed")
            return
        if nullable:
            out["nullable"] = True
        if not branches:
            if nullable:
                out["type"] = "null"
                out.pop("nullable")
            return
        if len(branches) == 1:
            only = branches[0]
            clash = [k for k in only if k in out and k not in ("title", "description")
                     and not _json_equal(only[k], out[k])]
            if not clash:
                for k, v in only.items():
                    out.setdefault(k, v)
                return
        out["anyOf"] = branches

    def ref(self, s: Mapping[str, Any], path: _Path, depth: int, stack: tuple[str, ...]
            ) -> dict[str, Any] | None:
        ctx = self.ctx
        ref = s["$ref"]
        rpath = (*path, "$ref")
        found = _resolve(ctx.root, ref)
        siblings = {k: v for k, v in s.items() if k not in ("$ref", "$defs", "definitions")}
        if found is None or not isinstance(found[0], (Mapping, bool)):
            ctx.note(rpath, "bad-ref", "a $ref that resolves nowhere replaced by {} (any value)")
            return self.node(siblings, path, depth + 1, stack) if siblings else {}
        target, tpath = found
        name = tpath[-1] if tpath else "root"
        if stack.count(ref) > ctx.ref_unfold:
            kind = _types_of(target) if isinstance(target, Mapping) else None
            ctx.note(rpath, "recursion-cut", f"recursive $ref cut after {ctx.ref_unfold} "
                     "levels and described")
            return {"type": kind[0] if kind and len(kind) == 1 and kind[0] != "null"
                    else "object",
                    "description": f"{name[:MAX_DESCRIBED_CHARS]} (recursive; structure "
                    "omitted)"}
        ctx.note(rpath, "inlined-ref", "$ref inlined (Gemini parameters take no $ref)")
        if not siblings:
            return self.node(target, tpath, depth + 1, (*stack, ref))
        if not isinstance(target, Mapping):
            return self.node(target, tpath, depth + 1, (*stack, ref))
        merged = _merge_pair(target, siblings)
        if merged is None:
            # lossy target: keep the referent, say the siblings (never "parent wins")
            merged = dict(target)
            said: list[str] = []
            for k, v in siblings.items():
                clashing = k in target or any(
                    k in group and any(g in target for g in group) for group in _ADJACENT_GROUPS)
                if k in _ANNOTATIONS or not clashing:
                    merged[k] = v
                else:
                    said.append(f"also {k}: {_describe_value(v)}")
                    ctx.note((*path, k), "moved-to-description", f"{k} beside $ref conflicts "
                             "with the referent; said in the description")
            _with_description(merged, said)
        return self.node(merged, tpath, depth + 1, (*stack, ref))

    def deref(self, entry: Any, path: _Path, stack: tuple[str, ...]) -> Any:
        """An allOf entry with its ``$ref`` chain resolved and merged (a sibling that cannot
        be merged is dropped with a note, never "parent wins")."""
        return _deref_entry(entry, self.ctx, path, set(stack), drop_unresolved=True)

    def merge_all_of(self, s: Mapping[str, Any], path: _Path, stack: tuple[str, ...]
                     ) -> dict[str, Any]:
        """allOf folded into the node: entries' keys added, ``properties`` and ``required``
        united; a conflicting constraint keeps the first value and is noted."""
        ctx = self.ctx
        node = {k: v for k, v in s.items() if k != "allOf"}
        entries = s["allOf"]
        if not isinstance(entries, list):
            ctx.note((*path, "allOf"), "removed", "allOf is not a list")
            return node
        for i, raw in enumerate(entries):
            epath = (*path, "allOf", str(i))
            entry = self.deref(raw, epath, stack)
            if not isinstance(entry, Mapping):
                ctx.note(epath, "removed", "allOf entry that is not a schema removed")
                continue
            for key, value in entry.items():
                if key == "allOf":
                    ctx.note((*epath, key), "removed", "nested allOf removed")
                elif key not in node:
                    node[key] = value
                elif key == "properties" and isinstance(value, Mapping) \
                        and isinstance(node[key], Mapping):
                    node[key] = {**value, **node[key]}
                elif key == "required" and isinstance(value, list) \
                        and isinstance(node[key], list):
                    node[key] = list(dict.fromkeys([*node[key], *value]))
                elif not _json_equal(node[key], value) and key not in _ANNOTATIONS:
                    ctx.note((*epath, key), "removed", f"{key} conflicting in allOf removed")
        ctx.note((*path, "allOf"), "merged", "allOf merged into one schema")
        return node


def _gemini_openapi(schema: Mapping[str, Any], ctx: _Ctx) -> Normalized:
    out = _Gemini(ctx).run(schema)
    return Normalized(out, False, tuple(ctx.notes), ctx.target)
