"""Two schemas as one: the intersection behind a ``$ref``'s siblings and an ``allOf``.

:func:`_intersect` says two schemas as one schema accepting what both accept, as far as one
schema can (the tighter bound, the common types and enum values, the union of ``required``
...), with what it could not say beside the other side and why no value may satisfy the
result; :func:`_deref_entry` follows an entry's local ``$ref`` chain, merging each referent
with the entry's siblings that way; :func:`_note_merge` turns a merge into notes.  Used by the
minimal form (``anthropic``'s root, :mod:`._minimal`), ``gemini-openapi`` and
``openai-strict``.  Imports only :mod:`._base`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._base import (
    _ADJACENT_GROUPS,
    _ANNOTATIONS,
    _FLOAT_MAX,
    _Ctx,
    _describe_value,
    _is_int,
    _is_map,
    _is_number,
    _json_equal,
    _Path,
    _resolve,
    _types_of,
    _value_type,
)

__all__ = [
    "_Merge",
    "_deref_entry",
    "_intersect",
    "_note_merge",
    "_unite",
]


#: Bounds whose intersection is the larger value (lower bounds) or the smaller (upper
#: bounds): two schemas' bounds together are the tighter one of each (2020-12: the keywords
#: of an ``allOf`` or of ``$ref`` siblings all apply).  ``minContains``/``maxContains`` are
#: not here: they speak of their own ``contains``.
_LOWER_BOUNDS: Final = frozenset({"minimum", "exclusiveMinimum", "minLength", "minItems",
                                  "minProperties"})
_UPPER_BOUNDS: Final = frozenset({"maximum", "exclusiveMaximum", "maxLength", "maxItems",
                                  "maxProperties"})
_COUNT_BOUNDS: Final = frozenset({"minLength", "maxLength", "minItems", "maxItems",
                                  "minProperties", "maxProperties"})
#: (lower, upper, exclusive): no value satisfies a schema whose lower bound is above its upper
#: bound (or equal to it, when either is exclusive).
_BOUND_PAIRS: Final = (
    ("minimum", "maximum", False), ("exclusiveMinimum", "maximum", True),
    ("minimum", "exclusiveMaximum", True), ("exclusiveMinimum", "exclusiveMaximum", True),
    ("minLength", "maxLength", False), ("minItems", "maxItems", False),
    ("minProperties", "maxProperties", False),
)
#: Draft 4's bounds (value key, flag key, lower?): ``exclusiveMinimum: true`` makes
#: ``minimum`` exclusive, so when either side of an intersection holds such a boolean the
#: pair is one bound and is intersected as one (:func:`_meet_draft4`).
_DRAFT4_BOUNDS: Final = (("minimum", "exclusiveMinimum", True),
                         ("maximum", "exclusiveMaximum", False))
#: Two enums are intersected by comparing every pair of values when one holds a container
#: (scalars are hashed); past this many comparisons the enums are a conflict instead (a
#: hostile pair of large enums must not cost n*m).
_MAX_ENUM_COMPARISONS: Final = 10_000


@dataclass(slots=True)
class _Merge:
    """Two schemas as one (:func:`_intersect`): ``merged``; ``tightened``, the keywords whose
    value is the intersection of both sides' (the larger minimum ...); ``conflicts``, the
    keywords of ``over`` that could not be said beside ``base``'s (``base``'s value kept);
    ``empty``, why no value satisfies the merged schema (said by the caller)."""

    merged: dict[str, Any]
    tightened: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)


def _bound_value(key: str, value: Any) -> bool:
    return _is_int(value) and value >= 0 if key in _COUNT_BOUNDS else _is_number(value)


def _meet_types(a: Any, b: Any) -> list[str] | None:
    """The types both ``type`` values allow (an integer is a number); None when either is not
    a valid ``type``."""
    ta, tb = _types_of({"type": a}), _types_of({"type": b})
    if ta is None or tb is None:
        return None
    out = [t if t in tb else "integer" for t in ta
           if t in tb or (t == "number" and "integer" in tb)
           or (t == "integer" and "number" in tb)]
    return list(dict.fromkeys(out))


def _scalar_key(value: Any) -> tuple[str, Any] | None:
    """A hashable key equal for JSON-equal scalars (numbers by value, ``true`` is not ``1``);
    None for a container."""
    if value is None or isinstance(value, (bool, str)):
        return (type(value).__name__, value)
    if _is_number(value):
        return ("number", value)
    return None


def _meet_enums(a: list[Any], b: list[Any]) -> list[Any] | None:
    """The values in both enums, in ``a``'s order; None when comparing them costs too much."""
    keys_b = [_scalar_key(v) for v in b]
    if all(k is not None for k in keys_b) and all(_scalar_key(v) is not None for v in a):
        wanted = set(keys_b)
        return [v for v in a if _scalar_key(v) in wanted]
    if len(a) * len(b) > _MAX_ENUM_COMPARISONS:
        return None
    return [v for v in a if any(_json_equal(v, w) for w in b)]


def _unite(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
    """Two ``required`` lists as one: names once each, in order; an entry that is not a name
    (junk) is kept as it is, for the target's own check to remove with a note."""
    out: list[Any] = []
    names: set[str] = set()
    for entry in (*a, *b):
        if isinstance(entry, str):
            if entry in names:
                continue
            names.add(entry)
        out.append(entry)
    return out


def _meet(key: str, a: Any, b: Any, base: Mapping[str, Any], over: Mapping[str, Any]
          ) -> tuple[bool, Any]:
    """(True, value) when keyword ``key``'s values ``a`` (of ``base``) and ``b`` (of ``over``)
    can be said as one value accepting what both accept; (False, None) otherwise."""
    if key in _LOWER_BOUNDS or key in _UPPER_BOUNDS:
        # (a draft-4 boolean flag and its bound never get here: _meet_draft4 takes them)
        if not (_bound_value(key, a) and _bound_value(key, b)):
            return False, None  # junk
        return True, max(a, b) if key in _LOWER_BOUNDS else min(a, b)
    if key == "type":
        types = _meet_types(a, b)
        if types is None:
            return False, None
        return True, types[0] if len(types) == 1 else types
    if key == "enum" and isinstance(a, list) and isinstance(b, list):
        values = _meet_enums(a, b)
        return (values is not None), values
    if key == "required" and isinstance(a, list) and isinstance(b, list):
        return True, _unite(a, b)
    if key == "uniqueItems" and isinstance(a, bool) and isinstance(b, bool):
        return True, a or b
    if key == "multipleOf" and _is_int(a) and _is_int(b) and a > 0 and b > 0:
        both = math.lcm(a, b)  # kept to what a double holds: it is written out as JSON
        return (both <= _FLOAT_MAX), (both if both <= _FLOAT_MAX else None)
    return False, None


def _side_bounds(node: Mapping[str, Any], value_key: str, flag_key: str
                 ) -> list[tuple[Any, bool]] | None:
    """One schema's bounds of one side as ``(value, exclusive)``: draft 4's ``minimum`` with
    its boolean flag, a later draft's number ``exclusiveMinimum`` (a flag without its value
    bounds nothing); None when a value is no number (junk: not merged)."""
    bounds: list[tuple[Any, bool]] = []
    flag = node.get(flag_key)
    if value_key in node:
        if not _is_number(node[value_key]):
            return None
        bounds.append((node[value_key], flag is True))
    if flag_key in node and not isinstance(flag, bool):
        if not _is_number(flag):
            return None
        bounds.append((flag, True))
    return bounds


def _meet_draft4(merged: dict[str, Any], base: Mapping[str, Any], over: Mapping[str, Any],
                 value_key: str, flag_key: str, lower: bool, result: _Merge) -> None:
    """Intersect one side's bound when a draft-4 boolean flag is in play: the tighter of all
    the bounds (the larger lower bound, the smaller upper; at a tie, the exclusive one),
    written in draft 4's form (the value, and ``flag: true`` when exclusive).  Adding the
    flag of one side beside the other side's value made ``x >= 5`` and ``x > 3`` into
    ``x > 5``.  A value that is no number is a conflict (``base``'s kept)."""
    mine, theirs = _side_bounds(base, value_key, flag_key), _side_bounds(over, value_key,
                                                                         flag_key)
    if mine is None or theirs is None:
        result.conflicts.extend(k for k in (value_key, flag_key) if k in over)
        return
    bounds = mine + theirs
    if not bounds:  # flags without values: they bound nothing
        return
    if lower:
        value, exclusive = max(bounds, key=lambda b: (b[0], b[1]))
    else:
        value, exclusive = min(bounds, key=lambda b: (b[0], not b[1]))
    merged.pop(flag_key, None)
    merged[value_key] = value
    if exclusive:
        merged[flag_key] = True
    if mine and theirs and sorted(mine) != sorted(theirs):
        result.tightened.append(value_key)


def _fits(value: Any, types: Sequence[str]) -> bool:
    kind = _value_type(value) if not isinstance(value, (Mapping, list)) else \
        "object" if _is_map(value) else "array"
    return kind in types or (kind == "integer" and "number" in types) or (
        kind == "number" and "integer" in types and isinstance(value, float)
        and value.is_integer())


def _empty_reasons(node: Mapping[str, Any]) -> list[str]:
    """Why no value satisfies ``node`` on its own keywords (bounds crossed, a const outside
    the enum or the type ...); [] when nothing says so."""
    out: list[str] = []
    draft4 = node.get("exclusiveMinimum") is True or node.get("exclusiveMaximum") is True
    for low, high, strict in _BOUND_PAIRS:
        lo: Any = node.get(low)
        hi: Any = node.get(high)
        exclusive = strict or (draft4 and (low, high) == ("minimum", "maximum"))
        if _bound_value(low, lo) and _bound_value(high, hi) \
                and (lo > hi or (exclusive and lo == hi)):
            out.append(f"{low} {_describe_value(lo)} > {high} {_describe_value(hi)}"
                       if lo > hi else f"{low} {_describe_value(lo)} = {high} "
                       f"{_describe_value(hi)}")
    types = _types_of(node)
    enum = node.get("enum")
    if "const" in node:
        if isinstance(enum, list) and not any(_json_equal(node["const"], v) for v in enum):
            out.append("const is not one of the enum values")
        if types is not None and not _fits(node["const"], types):
            out.append("const is not of the type")
    if isinstance(enum, list):
        if not enum:
            out.append("enum has no value")
        elif types is not None and not any(_fits(v, types) for v in enum):
            out.append("no enum value is of the type")
    return out


def _intersect(base: Mapping[str, Any], over: Mapping[str, Any]) -> _Merge:
    """``base`` and ``over`` as one schema accepting what both accept (their ``allOf``), as
    far as one schema can say it.

    Keywords act independently except the adjacent groups (``properties`` with
    ``additionalProperties`` ...) and draft 4's bounds (``minimum`` with a boolean
    ``exclusiveMinimum`` is one bound: :func:`_meet_draft4`).  A keyword on one side only
    is added (unless its group is used by the other side: a conflict); on both sides, equal
    values stay, annotations take ``over``'s (the more specific), bounds take the tighter
    one, ``type`` and ``enum`` their common values, ``required`` the union, ``uniqueItems``
    either, integer ``multipleOf`` the least common multiple; anything else differing is a
    conflict, ``base``'s value kept.  When the result accepts no value (``minimum`` 5
    beside ``maximum`` 3, types or enums without a common value, two different ``const``
    values), ``empty`` says why: the schema is still the intersection (``base``'s const
    kept), and the caller says so."""
    merged = dict(base)
    result = _Merge(merged)
    grouped: set[str] = set()
    for value_key, flag_key, lower in _DRAFT4_BOUNDS:
        if isinstance(base.get(flag_key), bool) or isinstance(over.get(flag_key), bool):
            grouped |= {value_key, flag_key}
            _meet_draft4(merged, base, over, value_key, flag_key, lower, result)
    for key, value in over.items():
        if key in grouped:
            continue
        if key not in merged:
            if any(key in group and any(k in base for k in group)
                   for group in _ADJACENT_GROUPS):
                result.conflicts.append(key)
            else:
                merged[key] = value
        elif key in _ANNOTATIONS:
            merged[key] = value
        elif _json_equal(merged[key], value):
            continue
        elif key == "const":  # two different values: no value is both (base's kept)
            result.empty.append("the two const values differ")
        else:
            ok, met = _meet(key, merged[key], value, base, over)
            if not ok:
                result.conflicts.append(key)
                continue
            merged[key] = met
            if key not in ("required",):
                result.tightened.append(key)
            if key == "type" and not met:
                merged[key] = base[key]  # no common type: said in ``empty``
                result.empty.append(f"type {_describe_value(base[key])} and "
                                    f"{_describe_value(value)} have no value in common")
            elif key == "enum" and not met:
                merged[key] = base[key]
                result.empty.append("the two enums have no value in common")
    if result.tightened or len(merged) > len(base):
        before = set(_empty_reasons(base)) | set(_empty_reasons(over))
        result.empty.extend(r for r in _empty_reasons(merged)
                            if r not in before and r not in result.empty)
    return result


def _deref_entry(entry: Any, ctx: _Ctx, path: _Path, seen: set[str] | None = None,
                 *, drop_unresolved: bool = False, looked: set[str] | None = None) -> Any:
    """An entry (of a root combinator, or of a gemini ``allOf``) with its local ``$ref``
    chain followed: siblings merged with the referent as their intersection
    (:func:`_intersect`: a sibling that cannot be said beside the referent is removed with a
    note, an empty intersection is noted), never "parent wins".  A ref that resolves nowhere
    or in a circle is removed with a note; with ``drop_unresolved`` the whole entry goes
    (``{}``).  Every ``$ref`` looked at is added to ``looked``."""
    seen = set() if seen is None else seen
    while _is_map(entry) and "$ref" in entry:
        ref = entry["$ref"]
        if looked is not None and isinstance(ref, str):
            looked.add(ref)
        found = _resolve(ctx.root, ref) if isinstance(ref, str) and ref not in seen else None
        if found is None or not _is_map(found[0]):
            if drop_unresolved:
                ctx.note(path, "removed", "allOf entry with an unusable or recursive $ref "
                         "removed")
                return {}
            ctx.note((*path, "$ref"), "removed", "a $ref that resolves nowhere (or in a circle) "
                     "removed")
            return {k: v for k, v in entry.items() if k != "$ref"}
        seen.add(ref)
        ctx.spend(path)
        rest = {k: v for k, v in entry.items() if k != "$ref"}
        result = _intersect(found[0], rest)
        _note_merge(ctx, path, result, "removed")
        entry = result.merged
    return entry


def _note_merge(ctx: _Ctx, path: _Path, result: _Merge, conflict_kind: str, *,
                all_of: bool = False) -> None:
    """The notes of two schemas merged by :func:`_intersect`: a ``$ref``'s siblings and its
    referent, or (``all_of``) two allOf entries' schemas for one property.
    ``conflict_kind`` is what the caller does with a keyword it could not merge
    (``removed``, or ``moved-to-description``)."""
    what = "removed (the server still checks it)" if conflict_kind == "removed" else \
        "said in the description"
    for key in result.conflicts:
        where = "in an allOf entry conflicts with the first" if all_of else \
            "beside $ref conflicts with the referent's"
        ctx.note((*path, key), conflict_kind, f"{key} {where}; {what}")
    both = "allOf entries" if all_of else "$ref siblings and the referent"
    if result.tightened:
        ctx.note(path, "merged", f"{both} merged as their intersection "
                 f"({', '.join(result.tightened)})")
    if result.empty:
        ctx.note(path, "unsatisfiable", f"no value satisfies the {both} together: "
                 f"{'; '.join(result.empty)}")
