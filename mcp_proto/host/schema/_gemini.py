"""The ``gemini-openapi`` target of :func:`~._normalize.normalize_schema` (Gemini's
``parameters`` channel, an OpenAPI 3.0 subset): the keyword tables and :class:`_Gemini`
(one conversion, every ``$ref`` inlined, only ``Schema`` fields kept)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import _base as _schema_base  # _prepare_root: looked up there at call time
from ._base import (
    _ANNOTATIONS,
    _DESCRIBE,
    _HANDLED,
    _JSON_TYPES,
    _KEEP,
    GEMINI_FORMATS,
    GEMINI_MAX_COUNT,
    MAX_DESCRIBED_CHARS,
    Normalized,
    SchemaError,
    _clone,
    _Ctx,
    _describe_value,
    _is_float,
    _is_int,
    _is_map,
    _is_number,
    _json_equal,
    _Path,
    _resolve,
    _types_of,
    _value_type,
    _with_description,
)
from ._merge import _deref_entry, _intersect, _note_merge

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
#: The handled keywords :meth:`_Gemini.node` reads after its walk over the keywords (which
#: skips them: nothing to do there).
_GEMINI_STRUCTURE: Final = frozenset({"type", "properties", "required", "items", "prefixItems",
                                      "anyOf", "oneOf", "enum", "const", "propertyOrdering"})
#: What a kept keyword's value must be: a number that fits a double (Gemini's numbers are
#: doubles), a count that fits an int64 (:data:`GEMINI_MAX_COUNT`); another is removed.
_GEMINI_CHECKS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_float,
    "count": lambda v: _is_int(v) and 0 <= v <= GEMINI_MAX_COUNT,
}


def _doubles_only(value: Any) -> bool:
    """Whether every number in the JSON value ``value`` fits a double (a ``default`` or an
    ``example`` is copied whole: an integer of 400 digits in it is one Gemini cannot read).
    Iterative; the value's size is bounded by the input check."""
    stack = [value]
    while stack:
        item = stack.pop()
        if _is_map(item):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif _is_int(item) and not _is_float(item):
            return False
    return True


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


#: The types given to array items the source leaves open (no ``items``, ``{}``, ``true``, a
#: typeless schema), the first the source does not exclude: Gemini refuses an array whose
#: items have no type (400 "items: missing field") and has no "any value" type.  Every
#: string is a value open items accept, so the model's arguments stay valid (Google ADK
#: makes the same choice); a ``not`` that excludes strings chooses the next type it allows
#: (enum/const values give the type themselves: :meth:`_Gemini.types`).  ``array`` is none
#: of them (its own items would need a type again).  Said in the array's description and
#: in an ``assumed-type`` note.
_OPEN_ITEMS_TYPES: Final = ("string", "number", "integer", "boolean", "object")
#: The type declared when the source allows none of :data:`_OPEN_ITEMS_TYPES` (only arrays
#: or null): the least wrong, said so in the note.
_OPEN_ITEMS_TYPE: Final = "string"
#: Keywords of a typeless items schema kept on the type declared for them: those that mean
#: something on a value of that type (the rest are removed with a note).
_OPEN_ITEMS_COMMON: Final = frozenset({"title", "description", "nullable", "default",
                                       "example"})
_OPEN_ITEMS_KEEP: Final[Mapping[str, frozenset[str]]] = {
    "string": _OPEN_ITEMS_COMMON | {"minLength", "maxLength", "pattern", "enum", "format"},
    "number": _OPEN_ITEMS_COMMON | {"minimum", "maximum", "format"},
    "integer": _OPEN_ITEMS_COMMON | {"minimum", "maximum", "format"},
    "boolean": _OPEN_ITEMS_COMMON,
    "object": _OPEN_ITEMS_COMMON | {"minProperties", "maxProperties"},
}
#: What the description of an array whose items take no value says (``items: false``, no
#: tuple position taking one, a ``not`` excluding every type): ``maxItems: 0`` says it to
#: Gemini, the items' declared type means nothing.
_NO_ITEMS_TEXT: Final = ("items: none (the tool's schema takes no items: the array must be "
                         f"empty; items declared as {_OPEN_ITEMS_TYPE} only because Gemini "
                         "needs a type)")
#: What the description of a recursive array cut where its items would recurse says.
_CUT_EMPTY_TEXT: Final = ("cut here: written as an empty array; items declared as "
                          f"{_OPEN_ITEMS_TYPE} only because Gemini needs a type")
#: How often a recursion cut follows a ``$ref`` chain to find the type of the items.
_CUT_REF_HOPS: Final = 8


_TRUE_UNTYPED: Final = "true (any value) left typeless"
_NO_TYPE_UNTYPED: Final = ("no type and none to infer; left typeless (Gemini may refuse a "
                           "typeless value)")


def _kind(value: Any) -> str:
    """The JSON type of an enum or const value (containers too)."""
    if _is_map(value):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return _value_type(value) or "object"


def _value_kinds(s: Mapping[str, Any]) -> list[str] | None:
    """The JSON types of ``s``'s enum or const values, in order, an integer among numbers
    being a number; None when ``s`` has neither (or an enum that is no non-empty list)."""
    if "const" in s:
        values = [s["const"]]
    elif isinstance(s.get("enum"), list) and s["enum"]:
        values = s["enum"]
    else:
        return None
    kinds = list(dict.fromkeys(_kind(v) for v in values))
    if "number" in kinds and "integer" in kinds:
        kinds.remove("integer")
    return kinds


#: The bounds of one type's values (lower, upper, the types they apply to): a lower bound
#: above the upper leaves no value of those types.
_TYPE_BOUNDS: Final = (("minLength", "maxLength", ("string",)),
                       ("minimum", "maximum", ("number", "integer")),
                       ("minItems", "maxItems", ("array",)),
                       ("minProperties", "maxProperties", ("object",)))


def _refused_types(s: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types of which typeless ``s`` accepts no value: those whose bounds cross
    (``minLength`` 2 beside ``maxLength`` 1 ...) and those its ``not`` refuses whole (all
    of them for ``not: {}`` or ``true``, its types for a ``not`` that says only a type, an
    integer being a number; none for any other ``not``: it refuses some values, not a
    type, and is not worked out)."""
    types: set[str] = set()
    for low, high, kinds in _TYPE_BOUNDS:
        lo: Any = s.get(low)
        hi: Any = s.get(high)
        if _is_number(lo) and _is_number(hi) and lo > hi:
            types.update(kinds)
    negated = s.get("not")
    if negated is True or (_is_map(negated) and set(negated) <= _ANNOTATIONS):
        return frozenset(_JSON_TYPES)
    if _is_map(negated) and set(negated) <= _ANNOTATIONS | {"type"}:
        types.update(_types_of(negated) or ())
    if "number" in types:
        types.add("integer")
    return frozenset(types)


def _typed(node: Mapping[str, Any]) -> bool:
    """Whether a Gemini output node says a type (itself, or every ``anyOf`` branch)."""
    if "type" in node:
        return True
    branches = node.get("anyOf")
    return isinstance(branches, list) and bool(branches) and all(
        _is_map(b) and _typed(b) for b in branches)


@dataclass(frozen=True, slots=True)
class _Done:
    """One ``$ref`` conversion remembered (:meth:`_Gemini.ref`): converting the same source
    node at the same place again gives the same output, unless a ``$ref`` it looked at is on
    the new path (recursion is cut by the path) or it would nest too deep there."""

    source: Mapping[str, Any]     # kept alive, so that its id() names it for the whole call
    out: dict[str, Any] | None
    cost: int                     # the budget the conversion spent: charged again on reuse
    height: int                   # levels below the node the conversion reached
    looked: frozenset[str]        # every $ref it resolved or checked


class _Gemini:
    """One gemini-openapi conversion: every ``$ref`` inlined, only Schema fields kept.

    A ``$ref`` site reached again (a fan-out reaches the same site along many paths) reuses
    its first conversion when nothing on the new path can change it: the reuse charges the
    whole cost of the first conversion to the budget *before* anything is copied, so the
    budget still counts every node of the expanded output, and a fan-out trips it after
    converting each site once instead of after expanding ``budget`` nodes one by one."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.done: dict[tuple[int, _Path], _Done] = {}
        self.looked: set[str] = set()  # the $refs the current conversion looked at
        self.reached = 0               # the deepest level the current conversion reached
        self.shared = False            # whether the output shares remembered nodes

    def run(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        root = _schema_base._prepare_root(schema, self.ctx)
        for container in ("$defs", "definitions"):
            if container in root:
                self.ctx.note((container,), "removed", "definitions removed (every $ref is "
                              "inlined)")
        out = self.node(root, (), 0, ())
        if out is None:
            raise SchemaError("", "the root schema accepts no value", self.ctx.target)
        if self.shared:  # remembered conversions are shared: every output node a new one
            out = _clone(out)
        if "type" not in out:  # the root was typed object; a referent without type lost it
            out = {"type": "object", **out}
        elif out["type"] != "object":
            raise SchemaError("", "the root schema is not of type object", self.ctx.target)
        self.ctx.check_output(out)  # exact: properties, anyOf, enum lists are nodes too
        return out

    def node(self, s: Any, path: _Path, depth: int, stack: tuple[str, ...]
             ) -> dict[str, Any] | None:
        """The Gemini form of ``s``; None for a ``false`` schema (no value: the caller drops
        the property or branch)."""
        ctx = self.ctx
        ctx.budget -= 1  # ctx.spend(path), inline: once per node
        if ctx.budget < 0:
            raise ctx.over_budget(path)
        if depth > ctx.max_depth:
            ctx.deeper(path, depth)
        if depth > self.reached:  # noqa: PLR1730 - no call of max() on every node
            self.reached = depth
        if s is False:
            return None
        if s is True:
            ctx.note(path, "untyped", _TRUE_UNTYPED)
            return {}
        if not _is_map(s):
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
            if key in _GEMINI_STRUCTURE:
                continue  # read below
            action = _GEMINI_ACTIONS.get(key)
            kpath = (*path, key)
            if action is None:
                ctx.note(kpath, "removed", f"{key} removed (not a Gemini Schema field)")
            elif action in _GEMINI_CHECKS:
                if _GEMINI_CHECKS[action](value):
                    out[key] = value
                else:
                    huge = _is_int(value) and (action == "number" or value > 0)
                    why = ("too large for Gemini: its counts are int64" if action == "count"
                           else "a number that does not fit a double") if huge \
                        else "a value Gemini cannot take"
                    ctx.note(kpath, "removed", f"{key} removed ({why})")
            elif action == _KEEP:
                if _doubles_only(value):
                    out[key] = ctx.copy(value, kpath)
                else:
                    ctx.note(kpath, "removed", f"{key} removed (it holds a number that does "
                             "not fit a double)")
            elif action == _DESCRIBE:
                described.append(f"{key}: {_describe_value(value)}")
                ctx.note(kpath, "moved-to-description", f"{key} said in the description")
            elif key == "nullable":
                if isinstance(value, bool):
                    out["nullable"] = out.get("nullable", False) or value
            elif key == "examples":
                if isinstance(value, list) and value and "example" not in s \
                        and _doubles_only(value[0]):
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

        if "const" in s or "enum" in s:
            self.values(s, out, types, path, described)
        if out.get("type") == "null":  # const null: nothing of another type remains
            types = []
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
        if "anyOf" in s or "oneOf" in s:
            self.union(s, out, path, depth, stack)
        if isinstance(s.get("type"), list) and "anyOf" in out and "type" not in out:
            self.to_branches(out, path)
        if described:
            _with_description(out, described)
        if "type" not in out and "anyOf" not in out and path:
            ctx.note(path, "untyped", _NO_TYPE_UNTYPED)
        if "type" in out and next(iter(out)) != "type":  # (as good as always first already)
            out = {"type": out.pop("type"), **out}
        return out

    # ---- pieces

    def types(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path) -> list[str]:
        t = s.get("type")
        if type(t) is str and t in _JSON_TYPES and t != "null":  # the usual case, at once
            out["type"] = t
            return [t]
        ctx = self.ctx
        tpath = (*path, "type")
        types = _types_of(s)
        if "type" in s and types is None:
            ctx.note(tpath, "removed", "type removed (not a JSON Schema type)")
        inferred = types is None
        if types is None:
            if _is_map(s.get("properties")):
                types = ["object"]
            elif "items" in s or "prefixItems" in s:
                types = ["array"]
            else:
                # from enum/const values: the types of those that are no array (an array
                # type needs its items typed: only arrays, and the node stays typeless),
                # less the types a ``not`` refuses (unless it refuses all of them)
                kinds = [k for k in _value_kinds(s) or () if k != "array"]
                excluded = _refused_types(s)
                types = [k for k in kinds if k not in excluded] or kinds
            if types:
                how = "" if len(types) == 1 else " (each type a branch of anyOf, or " \
                    "nullable)"
                ctx.note(path, "added-type", f"type {' or '.join(types)} inferred{how}")
        non_null = [t for t in types if t != "null"]
        if len(non_null) == 1:
            out["type"] = non_null[0]
            if "null" in types:
                out["nullable"] = True
                if not inferred:
                    ctx.note(tpath, "type-array-to-nullable", "type [T, null] written as T "
                             "with nullable: true")
        elif not non_null and types:
            out["type"] = "null"
        elif len(non_null) > 1:
            out["anyOf"] = [{"type": t} for t in non_null]
            if "null" in types:
                out["nullable"] = True
            if not inferred:
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
        if _is_map(props):
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
        """``items`` (or tuple ``prefixItems``) of an array; Gemini needs typed items, so
        items the source leaves open get a type it allows (:meth:`open_items`), and items
        that take no value a ``maxItems: 0`` (:meth:`no_items`)."""
        ctx = self.ctx
        items = s.get("items")
        key = "items"
        if items is None and "prefixItems" in s:
            items, key = s["prefixItems"], "prefixItems"
        ipath = (*path, key)
        if items is None:
            out["items"] = self.open_items({}, out, ipath, "an array without items")
            return
        if isinstance(items, list):
            alts = [self.node(x, (*ipath, str(i)), depth + 2, stack)
                    for i, x in enumerate(items)]
            kept = [a for a in alts if a is not None]
            ctx.note(ipath, "type-array-to-any-of", "tuple items written as one items schema "
                     "(anyOf of the positions)")
            if not kept:
                out["items"] = self.no_items(out, ipath, "no position takes a value")
            elif not all(_typed(a) for a in kept):
                out["items"] = self.open_items({}, out, ipath, "a position takes any value")
            else:
                out["items"] = kept[0] if len(kept) == 1 else {"anyOf": kept}
            return
        i_out = self.node(items, ipath, depth + 1, stack)
        if i_out is None:
            ctx.note(ipath, "removed", "items: false written as maxItems: 0")
            out["items"] = self.no_items(out, ipath, "items: false")
        elif not _typed(i_out):
            source = items if _is_map(items) else {}
            out["items"] = self.open_items(i_out, out, ipath, "items without a type", source)
        else:
            out["items"] = i_out

    def open_items(self, given: Mapping[str, Any], out: dict[str, Any], ipath: _Path,
                   why: str, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Items the source leaves open (``given``: their typeless conversion, ``source``:
        the items schema, when there is one) typed the first of :data:`_OPEN_ITEMS_TYPES`
        the source allows (a ``not`` may exclude a type, enum/const values allow theirs),
        with that said in ``out``'s description and a note; when it allows no value at
        all, :meth:`no_items`."""
        src: Mapping[str, Any] = source or {}
        excluded = _refused_types(src)
        if excluded >= _JSON_TYPES:
            return self.no_items(out, ipath, f"{why} that refuse every value")
        allowed = _value_kinds(src)
        fitting = [t for t in _OPEN_ITEMS_TYPES if t not in excluded
                   and not (t == "number" and "integer" in excluded)  # integers are numbers
                   and (allowed is None or t in allowed)]
        kind = fitting[0] if fitting else _OPEN_ITEMS_TYPE
        self.ctx.spend(ipath)  # an output node like any other
        items: dict[str, Any] = {"type": kind}
        for k, v in given.items():
            if k in _OPEN_ITEMS_KEEP[kind]:
                items[k] = v
            else:
                self.ctx.note(ipath, "removed", f"{k} of typeless items removed (the items "
                              f"are declared as {kind})")
        shown = " or ".join(sorted(excluded - {"integer"} if "number" in excluded
                                   else excluded))
        if allowed is not None:
            told = "items: one of the allowed values"
            sound = f"the source takes only its enum/const values, and {kind} is the type " \
                    "of some of them" if fitting else f"no type Gemini can declare holds its " \
                    f"enum/const values: {kind} is the least wrong"
        elif not fitting:
            told = f"items: any value not of type {shown}"
            sound = f"the source refuses every other type Gemini can declare: {kind} is the " \
                    "least wrong"
        elif excluded:
            told = f"items: any value not of type {shown}"
            sound = f"the source takes any value not of type {shown}, so every {kind} is valid"
        elif "not" in src:
            told = "items: any value its schema allows"
            sound = f"the source's not is removed: a {kind} it refuses may be sent"
        else:
            told = "items: any value"
            sound = f"the source takes any value, so every {kind} is valid"
        _with_description(out, [f"{told} (the tool's schema gives them no type; declared as "
                                f"{kind} because Gemini needs one)"])
        for detail in (_TRUE_UNTYPED, _NO_TYPE_UNTYPED):  # no longer true: they have a type
            self.ctx.unnote(ipath, "untyped", detail)
        self.ctx.note(ipath, "assumed-type", f"{why}: items declared as {kind} (Gemini "
                      f"refuses an array without typed items; {sound}) and said in the "
                      "description")
        return items

    def no_items(self, out: dict[str, Any], ipath: _Path, why: str,
                 told: str = _NO_ITEMS_TEXT) -> dict[str, Any]:
        """The items of an array that takes none (``out`` gets ``maxItems: 0``): typed
        :data:`_OPEN_ITEMS_TYPE` only because Gemini needs a type, said so (``told``)."""
        self.ctx.spend(ipath)
        out["maxItems"] = 0
        _with_description(out, [told])
        for detail in (_TRUE_UNTYPED, _NO_TYPE_UNTYPED):
            self.ctx.unnote(ipath, "untyped", detail)
        self.ctx.note(ipath, "assumed-type", f"{why}: the array must be empty (maxItems: 0); "
                      f"items declared as {_OPEN_ITEMS_TYPE} because Gemini refuses an array "
                      "without typed items, and said in the description")
        return {"type": _OPEN_ITEMS_TYPE}

    def cut_items(self, target: Mapping[str, Any], placeholder: dict[str, Any],
                  rpath: _Path) -> dict[str, Any]:
        """The items of a recursive array cut at ``rpath`` (``target``: the array's
        definition): the type of the definition's items (its ``$ref`` chain followed, the
        first ``anyOf``/``oneOf`` branch that is no array), structure omitted; open items
        as :meth:`open_items`; items that are arrays again (the recursion itself) cannot be
        typed without recursing, so the cut array is written empty (``maxItems: 0``)."""
        items: Any = target.get("items")
        for _ in range(_CUT_REF_HOPS):
            if not (_is_map(items) and "$ref" in items):
                break
            found = _resolve(self.ctx.root, items["$ref"])
            items = found[0] if found is not None else {}
        if items is None or items is True or (_is_map(items) and not items):
            return self.open_items({}, placeholder, rpath, "a recursive array cut")
        kinds: list[str] = []
        if _is_map(items):
            kinds = _types_of(items) or _value_kinds(items) or []
            branches = items.get("anyOf", items.get("oneOf"))
            if not kinds and isinstance(branches, list):
                for branch in branches:
                    one = branch
                    if _is_map(one) and "$ref" in one:
                        found = _resolve(self.ctx.root, one["$ref"])
                        one = found[0] if found is not None else None
                    if _is_map(one):
                        kinds.extend(_types_of(one) or ())
        kind = next((k for k in kinds if k not in ("null", "array")), None)
        if kind is None:
            return self.no_items(placeholder, rpath, "a recursive array cut whose items "
                                 "are arrays or of no type Gemini can declare",
                                 _CUT_EMPTY_TEXT)
        self.ctx.spend(rpath)
        self.ctx.note(rpath, "assumed-type", f"a recursive array cut: items declared as "
                      f"{kind}, a type its items take (their structure omitted)")
        return {"type": kind}

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
        """The node ``{"$ref": ...}`` inlined (:meth:`inline`), or its first conversion at
        this place reused (see the class): the reuse costs what the conversion cost."""
        ctx = self.ctx
        key = (id(s), path)
        on_path = set(stack)
        done = self.done.get(key)
        if done is not None and done.source is s and not done.looked & on_path \
                and depth + done.height <= ctx.max_depth:
            ctx.spend(path, done.cost)  # before copying: a fan-out trips here, cheaply
            self.looked |= done.looked
            self.reached = max(self.reached, depth + done.height)
            self.shared = True
            return None if done.out is None else dict(done.out)
        outer_looked, outer_reached = self.looked, self.reached
        self.looked, self.reached = set(), depth
        before = ctx.budget
        out = self.inline(s, path, depth, stack)
        looked, height = self.looked, self.reached - depth
        self.looked = outer_looked | looked
        self.reached = max(outer_reached, self.reached)
        if not looked & on_path:  # the path changed nothing: the same anywhere else
            # a shallow copy: callers change only the top of what they get
            self.done[key] = _Done(s, None if out is None else dict(out), before - ctx.budget,
                                   height, frozenset(looked))
        return out

    def inline(self, s: Mapping[str, Any], path: _Path, depth: int, stack: tuple[str, ...]
               ) -> dict[str, Any] | None:
        ctx = self.ctx
        ref = s["$ref"]
        if isinstance(ref, str):
            self.looked.add(ref)
        rpath = (*path, "$ref")
        found = _resolve(ctx.root, ref)
        siblings = {k: v for k, v in s.items() if k not in ("$ref", "$defs", "definitions")}
        if found is None or not isinstance(found[0], (Mapping, bool)):
            ctx.note(rpath, "bad-ref", "a $ref that resolves nowhere replaced by {} (any value)")
            return self.node(siblings, path, depth + 1, stack) if siblings else {}
        target, tpath = found
        name = tpath[-1] if tpath else "root"
        if stack.count(ref) > ctx.ref_unfold:
            kind = _types_of(target) if _is_map(target) else None
            ctx.note(rpath, "recursion-cut", f"recursive $ref cut after {ctx.ref_unfold} "
                     "levels and described")
            placeholder: dict[str, Any] = {
                "type": kind[0] if kind and len(kind) == 1 and kind[0] != "null" else "object",
                "description": f"{name[:MAX_DESCRIBED_CHARS]} (recursive; structure omitted)"}
            if placeholder["type"] == "array":
                placeholder["items"] = self.cut_items(
                    target if _is_map(target) else {}, placeholder, rpath)
            return placeholder
        ctx.note(rpath, "inlined-ref", "$ref inlined (Gemini parameters take no $ref)")
        if not siblings or target is False:
            return self.node(target, tpath, depth + 1, (*stack, ref))
        if target is True:
            return self.node(siblings, path, depth + 1, (*stack, ref))
        assert _is_map(target)
        # 2020-12: the siblings and the referent both apply: their intersection, with what
        # one schema cannot say (two patterns ...) kept from the referent and the sibling
        # said in the description (never "parent wins", never one side silently)
        result = _intersect(target, siblings)
        _note_merge(ctx, path, result, "moved-to-description")
        said = [f"also {k}: {_describe_value(siblings[k])}" for k in result.conflicts]
        if result.empty:
            said.append(f"no value satisfies this schema ({'; '.join(result.empty)})")
        merged = result.merged
        _with_description(merged, said)
        return self.node(merged, tpath, depth + 1, (*stack, ref))

    def deref(self, entry: Any, path: _Path, stack: tuple[str, ...]) -> Any:
        """An allOf entry with its ``$ref`` chain resolved and merged (a sibling that cannot
        be merged is dropped with a note, never "parent wins")."""
        return _deref_entry(entry, self.ctx, path, set(stack), drop_unresolved=True,
                            looked=self.looked)

    def merge_all_of(self, s: Mapping[str, Any], path: _Path, stack: tuple[str, ...]
                     ) -> dict[str, Any]:
        """allOf folded into the node as the intersection of its entries
        (:func:`~._merge._intersect`: the tighter bound, the common types ...):
        ``properties`` united (a property in two entries gets their intersection),
        ``required`` united, the node's own annotations kept; a constraint that cannot be
        merged keeps the first value and is noted, an empty intersection is said."""
        ctx = self.ctx
        node = {k: v for k, v in s.items() if k != "allOf"}
        own = {k: node[k] for k in _ANNOTATIONS if k in node}
        entries = s["allOf"]
        if not isinstance(entries, list):
            ctx.note((*path, "allOf"), "removed", "allOf is not a list")
            return node
        said: list[str] = []
        for i, raw in enumerate(entries):
            epath = (*path, "allOf", str(i))
            entry = self.deref(raw, epath, stack)
            if not _is_map(entry):
                ctx.note(epath, "removed", "allOf entry that is not a schema removed")
                continue
            rest = dict(entry)
            if "allOf" in rest:
                del rest["allOf"]
                ctx.note((*epath, "allOf"), "removed", "nested allOf removed")
            props = rest.get("properties")
            if _is_map(props) and _is_map(node.get("properties", {})):
                del rest["properties"]
                node["properties"] = self.merge_properties(node.get("properties", {}), props,
                                                           epath)
            result = _intersect(node, rest)
            for key in result.conflicts:
                ctx.note((*epath, key), "removed", f"{key} conflicting in allOf removed (the "
                         "first value kept; the server still checks it)")
            if result.empty:
                said.append(f"no value satisfies every allOf entry "
                            f"({'; '.join(result.empty)})")
                ctx.note(epath, "unsatisfiable", "no value satisfies the allOf entries "
                         f"together: {'; '.join(result.empty)}")
            node = result.merged
        node.update(own)  # the node's own annotations win over its entries'
        ctx.note((*path, "allOf"), "merged", "allOf merged into one schema")
        _with_description(node, said)
        return node

    def merge_properties(self, have: Mapping[str, Any], more: Mapping[str, Any],
                         epath: _Path) -> dict[str, Any]:
        """Two ``properties`` of one allOf: a name in both takes the intersection of its two
        schemas, or (when they are not both schemas) the first, with a note."""
        merged = dict(have)
        for name, sub in more.items():
            if name not in merged or _json_equal(merged[name], sub):
                merged.setdefault(name, sub)
                continue
            ppath = (*epath, "properties", str(name))
            first = merged[name]
            if _is_map(first) and _is_map(sub):
                result = _intersect(first, sub)
                _note_merge(self.ctx, ppath, result, "removed", all_of=True)
                if result.empty:
                    _with_description(result.merged, [
                        f"no value satisfies this property's allOf entries "
                        f"({'; '.join(result.empty)})"])
                merged[name] = result.merged
            elif sub is True or first is False:
                continue
            else:
                merged[name] = sub if first is True else first
                if first is not True:
                    self.ctx.note(ppath, "removed", "a property schema in allOf that cannot "
                                  "be merged with the first removed")
        return merged


def _gemini_openapi(schema: Mapping[str, Any], ctx: _Ctx) -> Normalized:
    out = _Gemini(ctx).run(schema)
    return Normalized(out, False, ctx.made_notes(), ctx.target)
