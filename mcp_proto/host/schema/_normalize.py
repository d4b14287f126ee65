"""Tool input schemas in the shape each model provider accepts: pure, bounded, never mutating.

:func:`normalize_schema` takes one MCP tool's ``inputSchema`` and a target and returns a
:class:`Normalized`: the schema to send, whether it is *strict* (OpenAI Structured Outputs),
and a :class:`Note` for every change that is not a pure rewrite (host-notes 4, 5).

Rules:

- The source schema is never changed: every output node is a new object.
- Every lossy step is a :class:`Note` whose ``path`` is a JSON pointer into the *source*
  schema; a constraint that a target cannot say is moved into the ``description`` where that
  helps the model ("minLength: 3").  Nothing is invented: a node with no type stays
  typeless unless its properties, items or enum/const values say one (``gemini-openapi``:
  ``{"enum": [1, 2]}`` is an integer, values of several types an ``anyOf`` of them), except
  the items of a ``gemini-openapi`` array (Gemini refuses an array whose items have no
  type: they are declared strings, which the source accepts, or the next type a ``not``
  leaves them, and said so; items that take no value make the array ``maxItems: 0``).
- Two schemas that both apply (``$ref`` and its siblings, ``allOf`` entries) are merged as
  their intersection: the larger minimum and the smaller maximum (lengths, counts, exclusive
  bounds alike), the common types and enum values, the union of ``required``; what one
  schema cannot say is kept from one side with the other said or noted, never dropped
  silently, and an intersection no value satisfies is an ``unsatisfiable`` note.
- Work is bounded whatever the input: the input's nesting is checked first, and the
  output's last (``max_depth`` bounds both); every output node costs one unit of
  ``budget``, a ``$ref`` conversion reused elsewhere costs all its nodes again, charged
  before it is copied (so a ``$ref`` fan-out trips the budget after converting each site
  once, instead of expanding exponentially); recursion through ``$ref`` is unfolded
  ``ref_unfold`` times and then described.  Over a bound is a :class:`SchemaError` for that
  one tool, never a hang (and never a RecursionError or OverflowError: those are turned
  into a SchemaError too).
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
    parameter is lost (a property in several ``allOf`` entries gets one flat ``allOf`` of its
    distinct schemas).  Everything else is kept.
``gemini``
    The ``parametersJsonSchema`` channel: minimal, like ``openai``.
``gemini-openapi``
    The ``parameters`` channel (an OpenAPI 3.0 subset): only Gemini ``Schema`` fields remain,
    ``$ref`` inlined, type arrays and ``null`` branches become ``nullable`` (a list of types
    becomes ``anyOf``, each type's keywords in its branch), non-string enums and unsupported
    formats move to the description (the node typed by their values), numbers that do not
    fit a double are removed, and every array has typed ``items``.

Layout: this module holds :func:`normalize_schema` (each target to its converter);
:mod:`._base` the limits, the public types and the shared machinery (with the root handling),
:mod:`._merge` two schemas as one (``$ref`` siblings, ``allOf``), :mod:`._minimal` the
``openai``, ``anthropic`` and ``gemini`` form, :mod:`._strict` the ``openai-strict`` target and
:mod:`._gemini` the ``gemini-openapi`` target.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ._base import (
    _ALIASES,
    DEFAULT_BUDGET,
    DEFAULT_MAX_DEPTH,
    DEFAULT_REF_UNFOLD,
    GEMINI_FORMATS,
    GEMINI_SCHEMA_FIELDS,
    MAX_DEPTH_LIMIT,
    MAX_DESCRIBED_CHARS,
    MAX_FIX_DEPTH,
    NOTE_KINDS,
    OPENAI_LARGE_ENUM,
    OPENAI_LARGE_ENUM_CHARS,
    OPENAI_MAX_ENUM_VALUES,
    OPENAI_MAX_NESTING,
    OPENAI_MAX_PROPERTIES,
    OPENAI_MAX_STRING_CHARS,
    OPENAI_STRICT_FORMATS,
    SCHEMA_ALIASES,
    SCHEMA_TARGETS,
    Normalized,
    Note,
    SchemaError,
    _check_input,
    _Ctx,
    _is_int,
    _OverBudget,
)
from ._gemini import _gemini_openapi
from ._minimal import _minimal
from ._strict import _openai_strict

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
    "SCHEMA_ALIASES",
    "SCHEMA_TARGETS",
    "Normalized",
    "Note",
    "SchemaError",
    "normalize_schema",
]


def _plain(schema: Mapping[str, Any], ctx: _Ctx) -> Normalized:
    return Normalized(_minimal(schema, ctx), False, ctx.made_notes(), ctx.target)


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
    of the input and of the output (containers, the root is level 1), ``budget`` the nodes
    the output may cost (with every inlined ``$ref`` counted in full), ``ref_unfold`` how
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
        result = _CONVERTERS[_ALIASES.get(target, target)](schema, ctx)
    except _OverBudget as exc:  # private (openai-strict's fallback signal): a plain one out
        raise SchemaError(exc.path, exc.reason, target) from None
    except RecursionError:  # a backstop: every walk is bounded, but never crash the host
        raise SchemaError("", "the schema is nested too deeply to convert", target) from None
    except OverflowError:   # a backstop: a number too large to compare or convert
        raise SchemaError("", "the schema holds a number too large to convert",
                          target) from None
    # the walks bound their own nesting, but merging and inlining may deepen the output: the
    # documented bound is checked on what is returned
    if ctx.nests_deeper(result.schema):
        raise SchemaError("", f"the converted schema nests deeper than {max_depth} levels",
                          target)
    return result
