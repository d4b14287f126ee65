"""The shared ground of the tool-schema normalizer (:mod:`._normalize`): the targets and
limits, the public types (:class:`Note`, :class:`SchemaError`, :class:`Normalized` and the
argument fixing behind :meth:`Normalized.fix_arguments`), the helpers every target uses (JSON
values, pointers, local ``$ref`` resolution, the keyword vocabulary), :class:`_Ctx` (one
call's state and bounds) and the root every target starts from (:func:`_prepare_root`).

It imports nothing else of the normalizer: :mod:`._merge` (two schemas as one),
:mod:`._minimal` (the minimal form) and the targets (:mod:`._strict`, :mod:`._gemini`) import
it, and look :func:`_prepare_root` up here at call time."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard
from urllib.parse import unquote

from ..._errors import MCPError
from ..._notes import Note

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_REF_UNFOLD",
    "MAX_DEPTH_LIMIT",
    "GEMINI_FORMATS",
    "GEMINI_MAX_COUNT",
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
    "SCHEMA_ALIASES",
    "SCHEMA_TARGETS",
    "Normalized",
    "Note",
    "SchemaError",
    "_ADJACENT_GROUPS",
    "_ALIASES",
    "_ANNOTATIONS",
    "_Ctx",
    "_DESCRIBE",
    "_DROP",
    "_Fix",
    "_HANDLED",
    "_KEEP",
    "_OverBudget",
    "_PRIMITIVES",
    "_Path",
    "_REFUSE",
    "_ROOT_COMBINATORS",
    "_canonical",
    "_check_input",
    "_clone",
    "_describe_value",
    "_is_finite_json",
    "_is_float",
    "_is_int",
    "_is_map",
    "_is_number",
    "_json_equal",
    "_nests_deeper",
    "_prepare_root",
    "_resolve",
    "_types_of",
    "_value_type",
    "_with_description",
    "_FLOAT_MAX",
    "_JSON_TYPES",
    "_pointer",
]

# -- targets and limits ------------------------------------------------------------------------

#: Every target :func:`normalize_schema` knows; the ``-responses`` names are aliases (the
#: Responses API takes the same schema subset as Chat Completions).
SCHEMA_TARGETS: tuple[str, ...] = (
    "openai", "openai-strict", "anthropic", "gemini", "gemini-openapi",
    "openai-responses", "openai-responses-strict",
)
#: Each alias of :data:`SCHEMA_TARGETS` and the target it is: the very same conversion, only
#: :attr:`Normalized.target` differs (a cache may convert once for both).
SCHEMA_ALIASES: Mapping[str, str] = {"openai-responses": "openai",
                                     "openai-responses-strict": "openai-strict"}
_ALIASES: Final = SCHEMA_ALIASES

#: Containers (objects and lists) nested in the input or the output.  Real tool schemas stay
#: under 30 (ten nested models); 64 leaves room and keeps the recursive walk far below
#: Python's recursion limit (a few frames per level).
DEFAULT_MAX_DEPTH = 64
#: The largest ``max_depth`` accepted: the walk recurses a few frames per level, and 256
#: levels stay well inside Python's default recursion limit (1000), so a caller's setting can
#: never turn into a RecursionError.
MAX_DEPTH_LIMIT = 256
#: Nodes (objects and lists) one schema may cost, the bound openai-agents uses: the input
#: may hold at most this many, so may the output (counted exactly, every inlined ``$ref`` in
#: full), and the conversion's work is charged to it as it goes (each node converted, a
#: reused ``$ref`` conversion in full), so it may stop before the output reaches it.  A real
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
#: The largest count (``minLength``, ``maxItems``, ``minProperties`` ...) Gemini's ``Schema``
#: takes: those fields are int64, so the API refuses a larger one.  Such a count is removed
#: with a note, as a ``minimum``/``maximum`` that does not fit a double is (for a maximum
#: it bounds nothing a request can hold; the server still checks a minimum).
GEMINI_MAX_COUNT: Final = 2**63 - 1

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
    "assumed-type",           # a type Gemini requires where the source has none (array items)
    "unsatisfiable",          # merged constraints that no value satisfies (min > max ...)
)

# -- public types ------------------------------------------------------------------------------


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

# The actions of the keyword tables (openai-strict, gemini-openapi).
_KEEP, _DESCRIBE, _DROP, _REFUSE, _HANDLED = "keep", "describe", "drop", "refuse", "handled"


_FLOAT_MAX: Final = int(sys.float_info.max)
#: The exact types ``json.loads`` makes JSON scalars of: a value of one of them is no
#: container, so the walks (run on every node of every schema) skip it with one set lookup
#: instead of ``isinstance`` against the ``Mapping`` ABC, which is several times slower.  A
#: subclass (or any other type) takes the full check, so what each walk does is unchanged.
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})


def _pointer(path: _Path) -> str:
    if not path:
        return ""
    # one join when no part needs escaping (as good as always: one "/" per part, no "~")
    text = "/" + "/".join(map(str, path))
    if "~" not in text and text.count("/") == len(path):
        return text
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


def _is_map(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC for the types JSON makes
    (the check through ``Mapping`` runs Python code; this one, a type comparison)."""
    t = type(value)
    return t is dict or (t is not list and t not in _SCALAR_TYPES
                         and isinstance(value, Mapping))


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
        if _is_map(item):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_map(a) and _is_map(b):
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


def _canonical(value: Any) -> str | None:
    """A text equal for equal JSON values (keys sorted), for deduplicating schemas in linear
    time; None when ``value`` is not plain JSON (then nothing is deduplicated)."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        return None


def _clone(value: Any) -> Any:
    """A deep copy of an output value (dicts and lists; the output's nesting is bounded)."""
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` containers (the root is level 1, as
    :func:`_check_input` counts); looked at without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    push = stack.append
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        t = type(item)
        children: Iterable[Any] = item.values() \
            if t is dict or (t is not list and isinstance(item, Mapping)) else item
        below = depth + 1
        for v in children:
            tv = type(v)
            if tv is dict or tv is list or (tv not in _SCALAR_TYPES
                                           and isinstance(v, (Mapping, list, tuple))):
                push((v, below))
    return False


def _measure(value: Any, limit: int) -> int | None:
    """The deepest nesting of ``value`` (the root is level 1, as :func:`_nests_deeper` counts),
    or None when it holds more than ``limit`` containers (objects and lists, the root one of
    them; a node shared twice counts twice, as it is written twice): one walk for both
    bounds on an output (:meth:`_Ctx.check_output`), without recursion, stopping at
    ``limit + 1`` containers."""
    count = deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    push = stack.append
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > limit:
            return None
        deepest = depth if depth > deepest else deepest
        t = type(item)
        children: Iterable[Any] = item.values() \
            if t is dict or (t is not list and isinstance(item, Mapping)) else item
        below = depth + 1
        for v in children:
            tv = type(v)
            if tv is dict or tv is list or (tv not in _SCALAR_TYPES
                                           and isinstance(v, (Mapping, list, tuple))):
                push((v, below))
    return deepest


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
        #: ``(path, kind, detail)`` of each note, in order, without repeats (the notes are
        #: made at the end, :meth:`made_notes`: a tuple hashes in C, a dataclass does not).
        self.notes: dict[tuple[str, str, str], None] = {}
        #: An output known to nest no deeper than ``max_depth`` (measured by
        #: :meth:`check_output`, or a copy of the checked input: :meth:`fits`), so that the
        #: final bound of :func:`normalize_schema` does not walk it again.
        self.fitting: object = None

    def note(self, path: _Path, kind: str, detail: str) -> None:
        self.notes[(_pointer(path), kind, detail)] = None

    def unnote(self, path: _Path, kind: str, detail: str) -> None:
        """Take back a note that a later step made untrue."""
        self.notes.pop((_pointer(path), kind, detail), None)

    def made_notes(self) -> tuple[Note, ...]:
        """The notes so far, in order, without repeats."""
        return tuple([Note(*key) for key in self.notes])

    def spend(self, path: _Path, n: int = 1) -> None:
        self.budget -= n
        if self.budget < 0:
            raise self.over_budget(path)

    def over_budget(self, path: _Path) -> _OverBudget:
        """The error :meth:`spend` raises (for a walk that spends inline)."""
        return _OverBudget(_pointer(path), "converting the schema costs more nodes than the "
                           "budget allows (a $ref fan-out or a very large schema)", self.target)

    def check_output(self, out: Mapping[str, Any]) -> None:
        """The budget's bound on the output, exact: :meth:`spend` charges the work as it goes
        (a node converted, a container copied), and a container a walk adds beside a node
        (an ``anyOf`` of a type list, a nullable wrapper ...) is counted here.  The same walk
        measures the output's nesting (:meth:`nests_deeper` then needs no walk of its own).

        Raises :class:`_OverBudget` when ``out`` holds more than ``budget`` objects and
        lists."""
        deepest = _measure(out, self.initial_budget)
        if deepest is None:
            raise _OverBudget("", "the converted schema has more nodes (objects and lists) "
                              "than the budget allows", self.target)
        self.fitting = out if deepest <= self.max_depth else None

    def fits(self, out: object) -> None:
        """``out`` is known to nest no deeper than ``max_depth`` without a walk: a copy of
        the input (which :func:`_check_input` bounded) that adds no container."""
        self.fitting = out

    def nests_deeper(self, out: Any) -> bool:
        """Whether ``out`` nests deeper than ``max_depth`` (:func:`_nests_deeper`), from what
        :meth:`check_output` or :meth:`fits` said of this very object when they did (the
        walks call them last: nothing changes it after)."""
        return out is not self.fitting and _nests_deeper(out, self.max_depth)

    def deeper(self, path: _Path, depth: int) -> None:
        if depth > self.max_depth:
            raise SchemaError(_pointer(path), f"the schema nests deeper than {self.max_depth} "
                              "levels", self.target)

    def copy(self, value: Any, path: _Path, depth: int = 0) -> Any:
        """A deep copy of a JSON value, each container paid from the budget (a scalar is
        returned as it is without a call: most of a schema's values are)."""
        t = type(value)
        if t in _SCALAR_TYPES:
            return value
        if t is dict or (t is not list and isinstance(value, Mapping)):
            self.budget -= 1  # spend(path), inline: this runs once per container
            if self.budget < 0:
                raise self.over_budget(path)
            if depth > self.max_depth:
                self.deeper(path, depth)
            below = depth + 1
            return {k: v if type(v) in _SCALAR_TYPES else self.copy(v, path, below)
                    for k, v in value.items()}
        if t is list or isinstance(value, (list, tuple)):
            self.budget -= 1
            if self.budget < 0:
                raise self.over_budget(path)
            if depth > self.max_depth:
                self.deeper(path, depth)
            below = depth + 1
            return [v if type(v) in _SCALAR_TYPES else self.copy(v, path, below)
                    for v in value]
        return value


def _check_input(schema: Any, ctx: _Ctx) -> None:
    """Depth and size of the source, checked without recursion before anything else."""
    budget, max_depth = ctx.budget, ctx.max_depth
    stack: list[tuple[Any, int]] = [(schema, 1)]
    push = stack.append
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > budget:
            raise SchemaError("", "the schema has more nodes than the budget allows",
                              ctx.target)
        if depth > max_depth:
            raise SchemaError("", f"the schema nests deeper than {ctx.max_depth} levels",
                              ctx.target)
        t = type(value)
        if t is dict or (t is not list and isinstance(value, Mapping)):
            children: Iterable[Any] = value.values()
        elif t is list or isinstance(value, (list, tuple)):
            children = value
        else:
            continue
        below = depth + 1
        # containers only, in order: the order decides which bound a schema over both is
        # reported as being over
        for v in children:
            tv = type(v)
            if tv is dict or tv is list or (tv not in _SCALAR_TYPES
                                           and isinstance(v, (Mapping, list, tuple))):
                push((v, below))


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
