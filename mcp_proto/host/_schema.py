"""Tool input schemas in the shape each model provider accepts: pure, bounded, never mutating.

:func:`normalize_schema` takes one MCP tool's ``inputSchema`` and a target and returns a
:class:`Normalized`: the schema to send, whether it is *strict* (OpenAI Structured Outputs),
and a :class:`Note` for every change that is not a pure rewrite (host-notes 4, 5).

Rules:

- The source schema is never changed: every output node is a new object.
- Every lossy step is a :class:`Note` whose ``path`` is a JSON pointer into the *source*
  schema; a constraint that a target cannot say is moved into the ``description`` where that
  helps the model ("minLength: 3").  Nothing is invented: a node with no type stays typeless.
- Work is bounded whatever the input: the input's nesting is checked first (``max_depth``),
  every output node costs one unit of ``budget`` (so a ``$ref`` fan-out cannot expand
  exponentially), recursion through ``$ref`` is unfolded ``ref_unfold`` times and then
  described.  Over a bound is a :class:`SchemaError` for that one tool, never a hang (and
  never a RecursionError or OverflowError: those are turned into a SchemaError too).
- Transformations are tables (keyword -> action, per target); the code does what the table
  says.  A keyword no table knows is removed (with a note) where the target has a whitelist.

Targets (:data:`SCHEMA_TARGETS`):

``openai`` / ``openai-responses``
    Minimal: the root is ``type: object``, ``$schema`` dropped.  Never strict.
``openai-strict`` / ``openai-responses-strict``
    Structured Outputs: every object closed and fully required, optional properties made
    nullable (and :meth:`Normalized.fix_arguments` removes the ``null`` a model sends for
    them), ``oneOf`` -> ``anyOf``, refused keywords removed or described, ``$ref``/``$defs``
    kept (a described ``$ref`` becomes ``{"description": ..., "anyOf": [{"$ref": ...}]}``,
    never inlined, so the size stays linear).  When the schema cannot be strict without
    changing what it accepts (a map, an untyped value, ``not``, ``patternProperties``, an
    object with ``anyOf`` branches, ...) or the strict conversion is over ``budget``, the
    result is the ``openai`` form with ``strict=False`` and a ``not-strict`` note saying
    why: the decision is per tool.  Keyword values are checked: a bad one is removed.
``anthropic``
    The root must be an object; top-level ``anyOf``/``oneOf``/``allOf`` (which the Messages
    API refuses) are folded into the root: an ``allOf`` merged, the alternatives' properties
    hoisted as optional properties and the alternatives said in the description, so no
    parameter is lost.  Everything else is kept.
``gemini``
    The ``parametersJsonSchema`` channel: minimal, like ``openai``.
``gemini-openapi``
    The ``parameters`` channel (an OpenAPI 3.0 subset): only Gemini ``Schema`` fields remain,
    ``$ref`` inlined, type arrays and ``null`` branches become ``nullable`` (a list of types
    becomes ``anyOf``, each type's keywords in its branch), non-string enums and unsupported
    formats move to the description, numbers that do not fit a double are removed.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

from .._errors import MCPError

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_REF_UNFOLD",
    "MAX_DEPTH_LIMIT",
    "GEMINI_FORMATS",
    "GEMINI_SCHEMA_FIELDS",
    "MAX_DESCRIBED_CHARS",
    "MAX_FIX_DEPTH",
    "NOTE_KINDS",
    "OPENAI_LARGE_ENUM",
    "OPENAI_LARGE_ENUM_CHARS",
    "OPENAI_MAX_ENUM_VALUES",
    "OPENAI_MAX_NESTING",
    "OPENAI_MAX_PROPERTIES",
    "OPENAI_MAX_STRING_CHARS",
    "OPENAI_STRICT_FORMATS",
    "SCHEMA_TARGETS",
    "Normalized",
    "Note",
    "SchemaError",
    "normalize_schema",
]

# -- targets and limits ------------------------------------------------------------------------

#: Every target :func:`normalize_schema` knows; the ``-responses`` names are aliases (the
#: Responses API takes the same schema subset as Chat Completions).
SCHEMA_TARGETS: tuple[str, ...] = (
    "openai", "openai-strict", "anthropic", "gemini", "gemini-openapi",
    "openai-responses", "openai-responses-strict",
)
_ALIASES: Final = {"openai-responses": "openai", "openai-responses-strict": "openai-strict"}

#: Containers (objects and lists) nested in the input or the output.  Real tool schemas stay
#: under 30 (ten nested models); 64 leaves room and keeps the recursive walk far below
#: Python's recursion limit (a few frames per level).
DEFAULT_MAX_DEPTH = 64
#: The largest ``max_depth`` accepted: the walk recurses a few frames per level, and 256
#: levels stay well inside Python's default recursion limit (1000), so a caller's setting can
#: never turn into a RecursionError.
MAX_DEPTH_LIMIT = 256
#: Output nodes (objects and lists) one schema may cost, the bound openai-agents uses: a real
#: schema costs a few hundred, an exponential ``$ref`` fan-out hits it within milliseconds.
DEFAULT_BUDGET = 100_000
#: Times a recursive ``$ref`` is inlined on one path before it is described instead
#: (host-notes 4.5): three levels of a tree show the model its shape.
DEFAULT_REF_UNFOLD = 3

#: OpenAI Structured Outputs: levels of object/array nesting (host-notes 4.2).
OPENAI_MAX_NESTING = 10
#: OpenAI Structured Outputs: object properties in the whole schema.
OPENAI_MAX_PROPERTIES = 5000
#: OpenAI Structured Outputs: enum values in the whole schema.
OPENAI_MAX_ENUM_VALUES = 1000
#: OpenAI Structured Outputs: characters of property names, definition names, enum and const
#: values together.
OPENAI_MAX_STRING_CHARS = 120_000
#: OpenAI Structured Outputs: an enum with more values than this ...
OPENAI_LARGE_ENUM = 250
#: ... may have at most this many characters of string values.
OPENAI_LARGE_ENUM_CHARS = 15_000
#: String formats OpenAI strict mode accepts (others are refused; host-notes 4.2).
OPENAI_STRICT_FORMATS: frozenset[str] = frozenset({
    "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
})

#: The fields of Gemini's ``Schema`` (generativelanguage v1beta, host-notes 4.4), by their
#: JSON names; anything else is "Unknown name" to the API.  ``additionalProperties`` and
#: ``$ref``/``$defs`` exist only on Vertex, so they are not here.
GEMINI_SCHEMA_FIELDS: frozenset[str] = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "items", "minItems",
    "maxItems", "properties", "required", "minProperties", "maxProperties", "minLength",
    "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "minimum",
    "maximum",
})
#: ``format`` values the Gemini Developer API accepts, per type (host-notes 4.4).
GEMINI_FORMATS: Mapping[str, frozenset[str]] = {
    "string": frozenset({"enum", "date-time"}),
    "integer": frozenset({"int32", "int64"}),
    "number": frozenset({"float", "double"}),
}

#: A value said in a description ("minLength: 3") is cut to this many characters: the
#: description is for the model, and a hostile schema must not blow it up.
MAX_DESCRIBED_CHARS = 200
#: Nesting :meth:`Normalized.fix_arguments` follows in the arguments; deeper values are left
#: as they are (arguments come from a model and may be arbitrarily deep).
MAX_FIX_DEPTH = 256

#: The stable codes of :attr:`Note.kind`.
NOTE_KINDS: tuple[str, ...] = (
    "removed",                # a keyword the target refuses, dropped
    "moved-to-description",   # a constraint dropped and said in the description
    "enum-to-description",    # an enum the target cannot hold, said in the description
    "const-to-enum",          # const -> one-value enum (same accepted set)
    "made-nullable",          # an optional property made required and nullable
    "closed",                 # additionalProperties: false added to an object
    "inlined-ref",            # a $ref replaced by its target
    "recursion-cut",          # a recursive $ref replaced by a described placeholder
    "bad-ref",                # a $ref that resolves nowhere, replaced by {}
    "not-strict",             # why the schema could not be strict
    "one-of-to-any-of",       # oneOf -> anyOf
    "type-array-to-nullable", # ["T", "null"] -> T + nullable
    "type-array-to-any-of",   # ["T", "U"] -> anyOf
    "null-branch-to-nullable", # anyOf [.., {"type": "null"}] -> nullable
    "merged",                 # allOf entries or $ref siblings merged into one schema
    "added-type",             # a type set at the root, or inferred from properties/items/enum
    "untyped",                # a value with no type, left typeless
    "invalid-schema",         # a node that is not a schema (a list, a number ...), replaced
    "examples-to-example",    # examples -> its first item as example
)

# -- public types ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Note:
    """One change :func:`normalize_schema` made.

    ``path`` is a JSON pointer into the *source* schema (``""`` is the root), ``kind`` one of
    :data:`NOTE_KINDS`, ``detail`` a sentence for a log or a CLI.
    """

    path: str
    kind: str
    detail: str


class SchemaError(MCPError, ValueError):
    """This tool's schema cannot be given to that target at all: the root is not an object
    schema, it is nested deeper than ``max_depth``, or converting it costs more than
    ``budget`` nodes.  ``path`` (a JSON pointer into the source) and ``reason`` say where and
    why; the message quotes no schema values.  The caller skips the tool for that target (or
    offers it under another target) and logs the reason."""

    def __init__(self, path: str, reason: str, target: str = "") -> None:
        self.path = path
        self.reason = reason
        self.target = target
        # the message is ours alone: no schema text (property names are in .path)
        super().__init__(f"tool schema unusable for {target or 'this target'}: {reason}")


class _OverBudget(SchemaError):
    """Over ``budget`` while converting: openai-strict then sends the plain form instead."""


@dataclass(frozen=True, slots=True)
class _Fix:
    """What :meth:`Normalized.fix_arguments` does to one argument value (openai-strict)."""

    strip: frozenset[str] = frozenset()          # keys whose ``null`` the model was made to send
    properties: Mapping[str, _Fix] = field(default_factory=dict)
    keys: frozenset[str] | None = None           # the object's property names (branch matching)
    consts: Mapping[str, Any] = field(default_factory=dict)  # one-value enums (branch matching)
    items: _Fix | None = None
    branches: tuple[_Fix, ...] = ()
    ref: str | None = None                       # the value is described by this definition


@dataclass(frozen=True, slots=True)
class Normalized:
    """A schema ready for one target.

    ``schema``: send it as the tool's parameters.  ``strict``: send the tool with
    ``strict: true`` (only ever True for ``openai-strict``).  ``notes``: every change, in
    order, without repeats.  ``target``: the target asked for (an alias stays an alias).
    """

    schema: dict[str, Any]
    strict: bool
    notes: tuple[Note, ...]
    target: str
    _fix: _Fix | None = field(default=None, repr=False, compare=False)
    _defs: Mapping[str, _Fix] = field(default_factory=dict, repr=False, compare=False)

    def fix_arguments(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments a model produced for this schema, made right for the *source* schema.

        For a strict ``openai-strict`` result: a ``null`` the model sent for a property that
        was optional in the source (and that the source did not allow to be ``null``) is
        removed, in nested objects and arrays of objects too.  For every other result: a
        shallow copy.  Never raises: a value of an unexpected shape is left as it is, and the
        arguments are never mutated (changed containers are new)."""
        if not isinstance(arguments, Mapping):
            return {}
        if self._fix is None:
            return dict(arguments)
        fixed = _apply_fix(self._fix, arguments, self._defs, 0)
        return dict(fixed) if isinstance(fixed, Mapping) else dict(arguments)


def _deref_fix(fix: _Fix, defs: Mapping[str, _Fix]) -> _Fix | None:
    """``fix`` with its chain of definitions followed; None for a cycle or a missing one."""
    seen: set[str] = set()
    while fix.ref is not None:
        if fix.ref in seen or fix.ref not in defs:
            return None
        seen.add(fix.ref)
        fix = defs[fix.ref]
    return fix


def _apply_fix(fix: _Fix, value: Any, defs: Mapping[str, _Fix], depth: int) -> Any:
    resolved = _deref_fix(fix, defs)
    if resolved is None or depth > MAX_FIX_DEPTH:
        return value
    fix = resolved
    # the branch is chosen on the value as the model sent it (every property present)
    chosen = _choose_branch(fix.branches, value, defs) if fix.branches else None
    if isinstance(value, Mapping) and fix.keys is not None:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None and key in fix.strip:
                continue
            child = fix.properties.get(key)
            out[key] = item if child is None else _apply_fix(child, item, defs, depth + 1)
        value = out
    elif isinstance(value, list) and fix.items is not None:
        value = [_apply_fix(fix.items, item, defs, depth + 1) for item in value]
    return value if chosen is None else _apply_fix(chosen, value, defs, depth + 1)


def _choose_branch(branches: Sequence[_Fix], value: Any, defs: Mapping[str, _Fix]) -> _Fix | None:
    """What to do for the ``anyOf`` branches an object value can be: strict mode sends every
    property, so its keys are exactly the branch's, and each one-value property (a
    discriminator) is that value or, when it was optional, ``null``.  With one such branch,
    its fix; with several, what all of them would do (a key is stripped when every one
    strips it); None when none fits."""
    if not isinstance(value, Mapping):
        return None
    found: list[_Fix] = []
    for branch in branches:
        resolved = _deref_fix(branch, defs)
        if resolved is None or resolved.keys is None or resolved.keys != set(value):
            continue
        if all(_json_equal(value.get(k), v) or (value.get(k) is None and k in resolved.strip)
               for k, v in resolved.consts.items()):
            found.append(resolved)
    if len(found) <= 1:
        return found[0] if found else None
    first = found[0]
    strip = frozenset.intersection(*(f.strip for f in found))
    props = {k: v for k, v in first.properties.items()
             if all(f.properties.get(k) == v for f in found[1:])}
    items = first.items if all(f.items == first.items for f in found[1:]) else None
    return _Fix(strip, props, first.keys, {}, items)


# -- shared machinery --------------------------------------------------------------------------

_Path = tuple[str, ...]
_JSON_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array",
                                "null"})
_PRIMITIVES: Final = frozenset({"string", "number", "integer", "boolean", "null"})
_ANNOTATIONS: Final = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated",
    "readOnly", "writeOnly",
})
# Keywords whose meaning depends on a sibling keyword: two schemas that both use one group
# cannot be merged into one object without changing what they accept (2020-12 "adjacent").
_ADJACENT_GROUPS: Final = (
    frozenset({"properties", "patternProperties", "additionalProperties",
               "unevaluatedProperties"}),
    frozenset({"items", "prefixItems", "additionalItems", "unevaluatedItems"}),
    frozenset({"contains", "minContains", "maxContains"}),
    frozenset({"if", "then", "else"}),
)


_FLOAT_MAX: Final = int(sys.float_info.max)


def _pointer(path: _Path) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _describe_value(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        text = "…"
    return text if len(text) <= MAX_DESCRIBED_CHARS else text[:MAX_DESCRIBED_CHARS - 1] + "…"


def _with_description(node: dict[str, Any], parts: Sequence[str]) -> None:
    if not parts:
        return
    extra = "; ".join(parts)
    base = node.get("description")
    node["description"] = f"{base} ({extra})" if isinstance(base, str) and base else extra


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A JSON number: any int (json.loads makes ints of any size: they are finite, and
    ``math.isfinite`` would overflow on them) or a finite float (never NaN or Infinity)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_float(value: Any) -> bool:
    """A number that fits a double (Gemini's ``Schema`` numbers are floats)."""
    return _is_number(value) and (isinstance(value, float) or abs(value) <= _FLOAT_MAX)


def _is_finite_json(value: Any, budget: int = 10_000) -> bool:
    """No NaN or Infinity anywhere in ``value`` (they are not JSON); looked at without
    recursion, giving up (False) after ``budget`` values."""
    stack = [value]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=False))
    return bool(a == b) and (type(a) is type(b) or (_is_number(a) and _is_number(b)))


def _types_of(node: Mapping[str, Any]) -> list[str] | None:
    """The node's ``type`` as a list, None when absent or not a valid type."""
    t = node.get("type")
    if isinstance(t, str):
        return [t] if t in _JSON_TYPES else None
    if isinstance(t, list) and t and all(isinstance(x, str) and x in _JSON_TYPES for x in t):
        return list(dict.fromkeys(t))
    return None


def _value_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _resolve(root: Mapping[str, Any], ref: Any) -> tuple[Any, _Path] | None:
    """A local JSON-pointer ``$ref`` (``#``, ``#/$defs/X``, any ``#/…``), resolved in the
    source; None when it is not local, points nowhere, or crosses a nested ``$id``."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    fragment = unquote(ref[1:])
    if fragment == "":
        return root, ()
    if not fragment.startswith("/"):
        return None  # a plain-name anchor: not resolvable without an $anchor index
    node: Any = root
    path: list[str] = []
    for raw in fragment[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
        path.append(key)
        if isinstance(node, Mapping) and isinstance(node.get("$id"), str):
            return None
    return node, tuple(path)


class _Ctx:
    """State of one :func:`normalize_schema` call: notes, budget, limits."""

    def __init__(self, root: Mapping[str, Any], target: str, max_depth: int, budget: int,
                 ref_unfold: int) -> None:
        self.root = root
        self.target = target
        self.max_depth = max_depth
        self.budget = budget
        self.ref_unfold = ref_unfold
        self.initial_budget = budget
        self.notes: dict[Note, None] = {}

    def note(self, path: _Path, kind: str, detail: str) -> None:
        self.notes[Note(_pointer(path), kind, detail)] = None

    def spend(self, path: _Path, n: int = 1) -> None:
        self.budget -= n
        if self.budget < 0:
            raise _OverBudget(_pointer(path), "converting the schema costs more nodes than the "
                              "budget allows (a $ref fan-out or a very large schema)",
                              self.target)

    def deeper(self, path: _Path, depth: int) -> None:
        if depth > self.max_depth:
            raise SchemaError(_pointer(path), f"the schema nests deeper than {self.max_depth} "
                              "levels", self.target)

    def copy(self, value: Any, path: _Path, depth: int = 0) -> Any:
        """A deep copy of a JSON value, each container paid from the budget."""
        if isinstance(value, Mapping):
            self.spend(path)
            self.deeper(path, depth)
            return {k: self.copy(v, path, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            self.spend(path)
            self.deeper(path, depth)
            return [self.copy(v, path, depth + 1) for v in value]
        return value


def _check_input(schema: Any, ctx: _Ctx) -> None:
    """Depth and size of the source, checked without recursion before anything else."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > ctx.budget:
            raise SchemaError("", "the schema has more nodes than the budget allows",
                              ctx.target)
        if depth > ctx.max_depth:
            raise SchemaError("", f"the schema nests deeper than {ctx.max_depth} levels",
                              ctx.target)
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values()
                         if isinstance(v, (Mapping, list, tuple)))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value if isinstance(v, (Mapping, list, tuple)))


# -- the root (every target) -------------------------------------------------------------------

_ROOT_COMBINATORS: Final = ("anyOf", "oneOf", "allOf")


def _prepare_root(schema: Mapping[str, Any], ctx: _Ctx) -> dict[str, Any]:
    """A shallow copy of the root with ``$schema`` dropped and ``type: object`` made sure.

    Raises :class:`SchemaError` when the root's type excludes objects (a tool's arguments are
    always an object)."""
    root = dict(schema)
    if "$schema" in root:
        del root["$schema"]
        ctx.note(("$schema",), "removed", "$schema removed (providers take the schema body)")
    t = root.get("type")
    if t is None and "type" not in root:
        root = {"type": "object", **root}
        why = "properties" if "properties" in root else "a tool's arguments are an object"
        ctx.note(("type",), "added-type", f"type: object added at the root ({why})")
    elif t == "object":
        pass
    elif isinstance(t, list) and "object" in t:
        root["type"] = "object"
        ctx.note(("type",), "removed", "root type narrowed to object (arguments are an object)")
    else:
        raise SchemaError("/type", "the root schema is not of type object", ctx.target)
    return root


def _minimal(schema: Mapping[str, Any], ctx: _Ctx) -> dict[str, Any]:
    """The openai / gemini form: the root made an object, the rest copied."""
    root = _prepare_root(schema, ctx)
    out: dict[str, Any] = ctx.copy(root, ())
    if ctx.target == "anthropic":
        # the Messages API refuses these in input_schema: their parameters are moved to the
        # root (the server still validates the arguments against the source)
        if "allOf" in out:
            _merge_root_all_of(out, ctx)
        for key in ("anyOf", "oneOf"):
            if key in out:
                _hoist_alternatives(out, key, ctx)
    return out


#: Root ``anyOf``/``oneOf`` alternatives said in the description (anthropic); the rest are
#: counted ("…"): the description is for the model.
_MAX_ALTERNATIVES_DESCRIBED = 20


def _deref_entry(entry: Any, ctx: _Ctx, path: _Path, seen: set[str] | None = None,
                 *, drop_unresolved: bool = False) -> Any:
    """An entry (of a root combinator, or of a gemini ``allOf``) with its local ``$ref``
    chain followed: siblings merged when they can be (intersection rules), else the referent
    kept and the siblings noted, never "parent wins".  A ref that resolves nowhere or in a
    circle is removed with a note; with ``drop_unresolved`` the whole entry goes (``{}``)."""
    seen = set() if seen is None else seen
    while isinstance(entry, Mapping) and "$ref" in entry:
        ref = entry["$ref"]
        found = _resolve(ctx.root, ref) if isinstance(ref, str) and ref not in seen else None
        if found is None or not isinstance(found[0], Mapping):
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
        merged = _merge_pair(found[0], rest)
        if merged is None:
            ctx.note(path, "removed", "siblings of $ref that conflict with it removed")
            merged = dict(found[0])
        entry = merged
    return entry


def _merge_root_all_of(out: dict[str, Any], ctx: _Ctx) -> None:
    """A root ``allOf`` merged into the root: properties united (a property in two places
    gets both schemas in an ``allOf``, the intersection), required names united, other
    keywords added when the root lacks them; what cannot be merged is removed with a note."""
    entries = out.pop("allOf")
    if not isinstance(entries, list):
        ctx.note(("allOf",), "removed", "top-level allOf removed (not a list)")
        return
    for i, raw in enumerate(entries):
        epath: _Path = ("allOf", str(i))
        entry = _deref_entry(raw, ctx, epath)
        if not isinstance(entry, Mapping):
            ctx.note(epath, "removed", "allOf entry that is not a schema removed")
            continue
        for key, value in entry.items():
            kpath = (*epath, key)
            if key == "properties" and isinstance(value, Mapping) \
                    and isinstance(out.setdefault("properties", {}), dict):
                props = out["properties"]
                for name, sub in value.items():
                    if name not in props:
                        props[name] = ctx.copy(sub, (*kpath, str(name)))
                    elif not _json_equal(props[name], sub):
                        props[name] = {"allOf": [props[name], ctx.copy(sub, (*kpath, str(name)))]}
            elif key == "required" and isinstance(value, list) \
                    and isinstance(out.get("required", []), list):
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            elif key == "type" and (value == "object"
                                    or (isinstance(value, list) and "object" in value)):
                continue
            elif key in ("anyOf", "oneOf") and key not in out:
                out[key] = ctx.copy(value, kpath)  # hoisted below, like the root's own
            elif key in _ANNOTATIONS and key in out:
                continue  # the root's own annotation wins
            elif key not in out and key not in ("allOf", "type", "$defs", "definitions") \
                    and key not in _ADJACENT_GROUPS[0]:
                # (additionalProperties & co. in an entry speak of that entry's properties
                # only: at the root they would speak of all of them, so they are not moved)
                out[key] = ctx.copy(value, kpath)
            elif key not in out or not _json_equal(out[key], value):
                ctx.note(kpath, "removed", f"{key} in a top-level allOf entry removed (it "
                         "cannot be merged into the root; the server still validates it)")
    ctx.note(("allOf",), "merged", "top-level allOf merged into the root (the Messages API "
             "refuses it in input_schema)")


def _hoist_alternatives(out: dict[str, Any], key: str, ctx: _Ctx) -> None:
    """A root ``anyOf``/``oneOf``: every alternative's properties become optional properties
    of the root (one that differs between alternatives takes their ``anyOf``), names required
    by every alternative are required, and the alternatives are said in the description."""
    alts = out.pop(key)
    upath: _Path = (key,)
    if not isinstance(alts, list) or not alts or not isinstance(out.get("properties", {}),
                                                                  dict):
        ctx.note(upath, "removed", f"top-level {key} removed (the Messages API refuses it)")
        return
    props: dict[str, Any] = out.setdefault("properties", {})
    collected: dict[str, list[Any]] = {}
    required_sets: list[set[str]] = []
    texts: list[str] = []
    for i, raw in enumerate(alts):
        apath = (*upath, str(i))
        alt = _deref_entry(raw, ctx, apath)
        if not isinstance(alt, Mapping):
            required_sets.append(set())
            texts.append("any arguments")
            continue
        aprops = alt.get("properties")
        names = [str(n) for n in aprops] if isinstance(aprops, Mapping) else []
        if isinstance(aprops, Mapping):
            for name, sub in aprops.items():
                collected.setdefault(str(name), []).append(sub)
        req = alt.get("required")
        wanted = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
        required_sets.append(set(wanted))
        text = ", ".join(names)
        if wanted:
            text += f" (required: {', '.join(wanted)})" if text else \
                f"required: {', '.join(wanted)}"
        text = text or "any arguments"
        texts.append(text if len(text) <= MAX_DESCRIBED_CHARS
                     else text[:MAX_DESCRIBED_CHARS - 1] + "…")
    for name, subs in collected.items():
        if name in props:
            continue  # the root's own schema for it applies to every alternative
        unique: list[Any] = []
        for sub in subs:
            if not any(_json_equal(sub, u) for u in unique):
                unique.append(sub)
        copies = [ctx.copy(u, upath) for u in unique]
        props[name] = copies[0] if len(copies) == 1 else {"anyOf": copies}
    common = set.intersection(*required_sets)
    if common:
        order = [n for n in dict.fromkeys(r for s in required_sets for r in sorted(s))
                 if n in common]
        have = out.get("required")
        out["required"] = list(dict.fromkeys([*(have if isinstance(have, list) else []),
                                              *order]))
    shown = texts[:_MAX_ALTERNATIVES_DESCRIBED]
    more = " | …" if len(texts) > _MAX_ALTERNATIVES_DESCRIBED else ""
    _with_description(out, [f"give the arguments of one of these alternatives: "
                            f"{' | '.join(shown)}{more}"])
    ctx.note(upath, "moved-to-description", f"top-level {key} (refused by the Messages API): "
             "its properties moved to the root as optional, the alternatives said in the "
             "description")


# -- openai-strict -----------------------------------------------------------------------------


class _NotStrict(Exception):
    def __init__(self, path: _Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


# What openai-strict does with each keyword; "handled" keywords have code in _Strict.node.
_KEEP, _DESCRIBE, _DROP, _REFUSE, _HANDLED = "keep", "describe", "drop", "refuse", "handled"
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


class _Strict:
    """One openai-strict conversion.  Raises :class:`_NotStrict` (caught by the caller) when the
    schema cannot be strict; :class:`SchemaError` when over a bound."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.queue: list[str] = []            # definitions referenced, to convert
        self.def_out: dict[str, dict[str, Any]] = {}
        self.def_fix: dict[str, _Fix] = {}
        self.null_memo: dict[str, bool] = {}  # allows_null of each $ref's target

    # ---- entry

    def run(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], _Fix | None,
                                                      dict[str, _Fix]]:
        ctx = self.ctx
        root = _prepare_root(schema, ctx)
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
            if not isinstance(defs, Mapping):
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
        _check_openai_limits(out)
        return out, fix, self.def_fix

    # ---- one node

    def node(self, s: Any, path: _Path, depth: int, *, is_root: bool = False
             ) -> tuple[dict[str, Any], _Fix | None]:
        ctx = self.ctx
        ctx.spend(path)
        ctx.deeper(path, depth)
        if not isinstance(s, Mapping):
            what = "true/{} (any value)" if s is True else "false (no value)" \
                if s is False else "not a schema object"
            raise _NotStrict(path, f"a subschema is {what}")
        if "$ref" in s:
            return self.ref(s, path, depth, is_root)
        if "allOf" in s:
            return self.node(self.merge_all_of(s, path), path, depth + 1, is_root=is_root)

        for key in s:
            action = _STRICT_ACTIONS.get(key, _DROP)
            if action == _REFUSE:
                raise _NotStrict((*path, key), f"{key} cannot be expressed in strict mode")
        if "anyOf" in s and "oneOf" in s:
            raise _NotStrict(path, "anyOf and oneOf together (an intersection)")

        types = _types_of(s)
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
        fix_props: dict[str, _Fix] = {}
        strip: set[str] = set()
        consts: dict[str, Any] = {}
        keys: frozenset[str] | None = None
        items_fix: _Fix | None = None
        branches: tuple[_Fix, ...] = ()

        for key, value in s.items():
            action = _STRICT_ACTIONS.get(key, _DROP)
            kpath = (*path, key)
            if action == _KEEP:
                if _VALUE_CHECKS[_STRICT_VALUES[key]](value):
                    out[key] = ctx.copy(value, kpath)
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
            keys, consts = self.object(s, out, path, depth, is_root, fix_props, strip)
        if is_array:
            items = s.get("items")
            ipath = (*path, "items")
            if items is None or items is True or (isinstance(items, Mapping) and not items):
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
            if any(f != _Fix() for f in fixes):
                branches = tuple(fixes)

        _with_description(out, described)
        if keys is not None or items_fix is not None or branches:
            return out, _Fix(frozenset(strip), fix_props, keys, consts, items_fix, branches)
        return out, None

    def object(self, s: Mapping[str, Any], out: dict[str, Any], path: _Path, depth: int,
               is_root: bool, fix_props: dict[str, _Fix], strip: set[str]
               ) -> tuple[frozenset[str], dict[str, Any]]:
        ctx = self.ctx
        props = s.get("properties", {})
        if not isinstance(props, Mapping):
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
        for name in sorted(wanted - set(props)):
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
            merged, where = self.merge(s, path)
            return self.node(merged, where, depth + 1, is_root=is_root)
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
            if not isinstance(target, Mapping):
                raise _NotStrict((*path, "$ref"), "$ref resolves to a non-schema")
            merged = _merge_pair(target, node)
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
            if not isinstance(raw, Mapping):
                raise _NotStrict((*path, "allOf", str(i)), "allOf entry is not a schema")
            entry = self.merge(raw, (*path, "allOf", str(i)))[0] if "$ref" in raw else raw
            if "allOf" in entry:
                raise _NotStrict((*path, "allOf", str(i)), "nested allOf")
            merged = _merge_pair(entry, node)
            if merged is None:
                raise _NotStrict((*path, "allOf"), "allOf entries that cannot be merged "
                                 "without changing what the schema accepts")
            node = merged
        ctx.note((*path, "allOf"), "merged", "allOf merged into one schema")
        return node

    # ---- helpers

    def infer_types(self, s: Mapping[str, Any]) -> list[str] | None:
        if isinstance(s.get("properties"), Mapping):
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
        self.ctx.spend(path)
        if level > _MAX_NULL_LEVELS:
            return False
        if isinstance(s, bool):
            return s
        if not isinstance(s, Mapping):
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


def _merge_pair(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any] | None:
    """``base`` and ``over`` as one schema accepting their intersection, or None.

    Keywords act independently except the adjacent groups (``properties`` with
    ``additionalProperties`` ...), so keys are merged when they are disjoint, equal, or
    annotations (``over``'s annotation wins: it is the more specific one); a group used on both
    sides, or a differing constraint, cannot be merged.  ``required`` lists are united."""
    merged = dict(base)
    for key, value in over.items():
        if key not in merged:
            for group in _ADJACENT_GROUPS:
                if key in group and any(k in base for k in group):
                    return None
            merged[key] = value
        elif key in _ANNOTATIONS:
            merged[key] = value
        elif _json_equal(merged[key], value):
            continue
        elif key == "required" and isinstance(value, list) and isinstance(merged[key], list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        else:
            return None
    return merged


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` accepting ``null`` too: a type union for primitive types, else an anyOf."""
    types = _types_of(out)
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
    """OpenAI's documented size limits, on the output (refs counted once)."""
    props = enums = chars = 0
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for container in ("$defs", "definitions"):
            defs = node.get(container)
            if isinstance(defs, dict):
                chars += sum(len(str(name)) for name in defs)
                stack.extend(defs.values())
        p = node.get("properties")
        if isinstance(p, dict):
            props += len(p)
            chars += sum(len(str(name)) for name in p)
            stack.extend(p.values())
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
                stack.append(node[key])
    if props > OPENAI_MAX_PROPERTIES:
        raise _NotStrict((), f"{props} properties (OpenAI's limit is {OPENAI_MAX_PROPERTIES})")
    if enums > OPENAI_MAX_ENUM_VALUES:
        raise _NotStrict((), f"{enums} enum values (OpenAI's limit is "
                         f"{OPENAI_MAX_ENUM_VALUES})")
    if chars > OPENAI_MAX_STRING_CHARS:
        raise _NotStrict((), f"{chars} characters of names and enum values (OpenAI's limit is "
                         f"{OPENAI_MAX_STRING_CHARS})")
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
        children.extend(v if isinstance(v, list) else [v])
    below = 0
    for child in children:
        below = max(below, _nesting(child, root, stack, memo, hops + 1))
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
        return Normalized(plain, False, tuple(fallback.notes), ctx.target)
    return Normalized(out, True, tuple(ctx.notes), ctx.target, fix, defs)


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
        root = _prepare_root(schema, self.ctx)
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


def _plain(schema: Mapping[str, Any], ctx: _Ctx) -> Normalized:
    return Normalized(_minimal(schema, ctx), False, tuple(ctx.notes), ctx.target)


_CONVERTERS: Final[Mapping[str, Callable[[Mapping[str, Any], _Ctx], Normalized]]] = {
    "openai": _plain,
    "openai-strict": _openai_strict,
    "anthropic": _plain,
    "gemini": _plain,
    "gemini-openapi": _gemini_openapi,
}


# The accepted range of each limit parameter (None: no upper bound).
_PARAMETER_RANGES: Final[Mapping[str, tuple[int, int | None]]] = {
    "max_depth": (2, MAX_DEPTH_LIMIT), "budget": (1, None), "ref_unfold": (0, None),
}


def normalize_schema(schema: Mapping[str, Any], target: str, *,
                     max_depth: int = DEFAULT_MAX_DEPTH, budget: int = DEFAULT_BUDGET,
                     ref_unfold: int = DEFAULT_REF_UNFOLD) -> Normalized:
    """``schema`` (a tool's ``inputSchema``) in the shape ``target`` accepts.

    ``target`` is one of :data:`SCHEMA_TARGETS` (``ValueError`` otherwise; a bad limit is a
    ``ValueError`` too).  ``max_depth`` (at most :data:`MAX_DEPTH_LIMIT`) bounds the nesting
    of the input and the output, ``budget`` the nodes the output may cost, ``ref_unfold`` how
    often a recursive ``$ref`` is inlined again on one path (``gemini-openapi``; after the
    first use, so 0 inlines a recursive definition once and then describes it).

    Raises :class:`SchemaError` when this schema cannot be given to ``target`` at all (not an
    object, a root type that excludes objects, too deep, over budget): skip the tool for that
    target, or send it under another one.  A schema that merely cannot be *strict* is not an
    error: the result has ``strict=False`` and a ``not-strict`` note.  The input is never
    changed."""
    if target not in SCHEMA_TARGETS:
        raise ValueError(f"target must be one of {', '.join(SCHEMA_TARGETS)}, not {target!r}")
    given = {"max_depth": max_depth, "budget": budget, "ref_unfold": ref_unfold}
    for name, (low, high) in _PARAMETER_RANGES.items():
        value = given[name]
        if not _is_int(value) or value < low or (high is not None and value > high):
            raise ValueError(f"{name} must be an integer in {low}..{high or ''}, "
                             f"not {value!r}")
    if not isinstance(schema, Mapping):
        raise SchemaError("", "the schema is not a JSON object", target)
    ctx = _Ctx(schema, target, max_depth, budget, ref_unfold)
    _check_input(schema, ctx)
    try:
        return _CONVERTERS[_ALIASES.get(target, target)](schema, ctx)
    except RecursionError:  # a backstop: every walk is bounded, but never crash the host
        raise SchemaError("", "the schema is nested too deeply to convert", target) from None
    except OverflowError:   # a backstop: a number too large to compare or convert
        raise SchemaError("", "the schema holds a number too large to convert",
                          target) from None
