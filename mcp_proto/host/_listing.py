"""What :class:`~mcp_proto.host._state.HostCore` answers about its listing, kept: the tools as
the host shows them (:class:`HostTool`), the answers of one generation (:class:`Listing`:
``tools()``, ``all_tools()``, and per target the definitions and the refused tools), and the
normalized schemas kept per server across generations (:func:`normalized_schema`).

HostCore owns one :class:`Listing` per generation (a listing, a name or a server's state
changed: a new one is made when next asked for) and one :data:`SchemaCache` per server
(pruned to the listed tools at each listing, so it is bounded by the listing: at most one
entry per listed tool and target).  Nothing here decides anything about servers: a route
entry says which server record owns a tool, and the host says which records are callable.

The module sits below the host's others: it imports no host module but the schema package,
and it is handed the wrapper of each target's wire shape (``tool_definition``, which itself
names :class:`HostTool` in its types), so no import goes in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

from .._types import Tool
from .schema._normalize import SCHEMA_ALIASES, Normalized, SchemaError, normalize_schema

__all__ = [
    "HostTool",
    "Listing",
    "SchemaCache",
    "SchemaOwner",
    "normalized_schema",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class HostTool:
    """A tool as the host shows it: ``name`` is the public name (what a model calls),
    ``server`` and ``tool`` say where it goes, ``definition`` is the server's own."""

    name: str
    server: str
    tool: str
    definition: Tool

    @property
    def description(self) -> str | None:
        return self.definition.description

    @property
    def input_schema(self) -> dict[str, object]:
        return self.definition.input_schema

    @property
    def annotations(self) -> dict[str, Any] | None:
        """The server's ``annotations`` (hints: trust them only from a trusted server)."""
        return self.definition.annotations


#: A normalized schema as kept: the input schema it came from, and the outcome for the target
#: (the error is kept too, so a schema a target refuses is not converted again each turn).
_Schema = tuple[dict[str, Any], "Normalized | SchemaError"]
#: One server's normalized schemas: ``(tool name, target) -> _Schema``.
SchemaCache = dict[tuple[str, str], _Schema]


def _family() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for alias, same in SCHEMA_ALIASES.items():
        out[alias] = (*out.get(alias, ()), same)
        out[same] = (*out.get(same, ()), alias)
    return out


#: target -> the targets whose normalized schema is the very same (``openai-responses`` and
#: ``openai``: the Responses API takes the Chat Completions subset): one conversion serves
#: both, only :attr:`Normalized.target` differs.
_SAME_SCHEMA: Mapping[str, tuple[str, ...]] = _family()


def _equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """``a == b``, and False when they nest too deeply to compare (then convert again: the
    conversion says what is wrong with such a schema)."""
    try:
        return a == b
    except RecursionError:
        return False


def _kept(schemas: SchemaCache, key: tuple[str, str], schema: dict[str, Any]
          ) -> _Schema | None:
    """The entry of ``key`` when it was made from ``schema`` or an equal one (a listing
    again makes new objects of the same schemas: compared once, then kept as this one)."""
    hit = schemas.get(key)
    if hit is not None and hit[0] is not schema:
        if not _equal(hit[0], schema):
            return None
        schemas[key] = hit = (schema, hit[1])
    return hit


def normalized_schema(schemas: SchemaCache, tool_name: str, definition: Tool, target: str
                      ) -> Normalized:
    """``definition``'s input schema for ``target``, from ``schemas`` (one server's) when it
    was made from this schema or an equal one, or from a target whose schema is the same
    (:data:`_SAME_SCHEMA`), else converted now and kept.

    Raises ``ValueError`` for an unknown target (not kept) and :class:`SchemaError` when the
    target cannot take the schema (kept: a fresh error is raised each time, since a raised
    exception keeps its traceback; leave the tool out for that target)."""
    key = (tool_name, target)
    schema = definition.input_schema
    hit = _kept(schemas, key, schema)
    if hit is None:
        outcome: Normalized | SchemaError | None = None
        for other in _SAME_SCHEMA.get(target, ()):
            shared = _kept(schemas, (tool_name, other), schema)
            if shared is not None:
                outcome = shared[1]
                if isinstance(outcome, Normalized):
                    outcome = replace(outcome, target=target)  # the same schema, shared
                break
        if outcome is None:
            try:
                outcome = normalize_schema(schema, target)
            except SchemaError as exc:  # ValueError (an unknown target) is not kept
                outcome = exc
        schemas[key] = hit = (schema, outcome)
    outcome = hit[1]
    if isinstance(outcome, SchemaError):
        raise SchemaError(outcome.path, outcome.reason, target)
    return outcome


class SchemaOwner(Protocol):
    """What a route entry names first: the record of the server that owns the tool, with
    that server's :data:`SchemaCache`."""

    schemas: SchemaCache


_Owner = TypeVar("_Owner", bound=SchemaOwner)
#: What a public name routes to: (owner record, server name, tool name, definition).
_Entry = tuple[_Owner, str, str, Tool]
#: The wrapper of a target's wire shape: ``tool_definition(tool, target, normalized=...)``.
_Define = Callable[..., dict[str, Any]]


class Listing(Generic[_Owner]):
    """The answers of one generation, each computed once when first asked for: the routes
    (``public name -> entry``, sorted by public name) and which owners are callable are
    fixed for its lifetime (the host makes a new one when either changes).  ``define``
    wraps a tool and its normalized schema in the wire shape of one of ``targets``.

    The lists returned are the kept ones: the host copies them for its callers."""

    __slots__ = ("_callable", "_define", "_definitions", "_everything", "_listed", "_routes",
                 "_targets")

    def __init__(self, routes: Mapping[str, _Entry[_Owner]], callable_: Callable[[_Owner], bool],
                 define: _Define, targets: Sequence[str]) -> None:
        self._routes = routes
        self._callable = callable_
        self._define = define
        self._targets = targets
        self._listed: list[HostTool] | None = None
        self._everything: list[HostTool] | None = None
        self._definitions: dict[str, tuple[list[dict[str, Any]],
                                           list[tuple[str, SchemaError]]]] = {}

    def tools(self) -> list[HostTool]:
        """The tools of callable owners, sorted by public name."""
        listed = self._listed
        if listed is None:
            callable_ = self._callable
            listed = self._listed = [
                HostTool(name=public, server=server_name, tool=tool_name, definition=t)
                for public, (owner, server_name, tool_name, t) in self._routes.items()
                if callable_(owner)]
        return listed

    def all_tools(self) -> list[HostTool]:
        """Every routed tool, sorted by public name."""
        everything = self._everything
        if everything is None:
            everything = self._everything = [
                HostTool(name=public, server=server_name, tool=tool_name, definition=t)
                for public, (_, server_name, tool_name, t) in self._routes.items()]
        return everything

    def defined(self, target: str) -> tuple[list[dict[str, Any]],
                                            list[tuple[str, SchemaError]]]:
        """``(definitions, refused)`` of :meth:`tools` for ``target``.  ``ValueError`` for an
        unknown target (nothing kept)."""
        hit = self._definitions.get(target)
        if hit is not None:
            return hit
        if target not in self._targets:
            raise ValueError(f"unknown target {target!r}: one of {', '.join(self._targets)}")
        out: list[dict[str, Any]] = []
        refused: list[tuple[str, SchemaError]] = []
        routes, define = self._routes, self._define
        for tool in self.tools():
            try:
                n = normalized_schema(routes[tool.name][0].schemas, tool.tool, tool.definition,
                                      target)
            except SchemaError as exc:
                refused.append((tool.name, exc))
                continue
            out.append(define(tool, target, normalized=n))
        hit = self._definitions[target] = (out, refused)
        return hit
