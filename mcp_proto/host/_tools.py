"""A tool in each provider's wire shape: the definition a host puts in a model request.

``tool_definition(tool, target)`` normalizes the tool's input schema for the target
(:func:`normalize_schema`) and wraps it the way the provider's API takes function tools:

================================  ===========================================================
``openai``, ``openai-strict``     Chat Completions: ``{"type": "function", "function": {name,
                                  description, parameters, strict}}``
``openai-responses[-strict]``     Responses: ``{"type": "function", name, description,
                                  parameters, strict}``
``anthropic``                     Messages: ``{name, description, input_schema}``
``gemini``                        ``FunctionDeclaration`` with ``parametersJsonSchema``
``gemini-openapi``                ``FunctionDeclaration`` with ``parameters`` (OpenAPI subset)
================================  ===========================================================

``strict`` is True only when the schema really is strict (per tool: one map-typed argument
makes that tool non-strict, not the server's others).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._types import Tool
from .schema._normalize import Normalized, SchemaError, normalize_schema

if TYPE_CHECKING:  # (_listing, which defines it, imports no host module: no cycle)
    from ._listing import HostTool

__all__ = ["TOOL_TARGETS", "tool_definition", "tool_definitions"]


def _chat(name: str, description: str | None, n: Normalized) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "parameters": n.schema}
    if description:
        function["description"] = description
    if n.target.endswith("strict"):
        function["strict"] = n.strict
    return {"type": "function", "function": function}


def _responses(name: str, description: str | None, n: Normalized) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "name": name, "parameters": n.schema,
                           "strict": n.strict}
    if description:
        out["description"] = description
    return out


def _anthropic(name: str, description: str | None, n: Normalized) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "input_schema": n.schema}
    if description:
        out["description"] = description
    return out


def _gemini(key: str) -> Callable[[str, str | None, Normalized], dict[str, Any]]:
    def build(name: str, description: str | None, n: Normalized) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name, key: n.schema}
        if description:
            out["description"] = description
        return out
    return build


#: target -> the wrapper of its wire shape.
_SHAPES: dict[str, Callable[[str, str | None, Normalized], dict[str, Any]]] = {
    "openai": _chat,
    "openai-strict": _chat,
    "openai-responses": _responses,
    "openai-responses-strict": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini("parametersJsonSchema"),
    "gemini-openapi": _gemini("parameters"),
}

#: Every target ``tool_definition`` takes.
TOOL_TARGETS: tuple[str, ...] = tuple(_SHAPES)


def tool_definition(tool: Tool | HostTool, target: str, *, name: str | None = None,
                    normalized: Normalized | None = None) -> dict[str, Any]:
    """``tool`` (a server's :class:`~mcp_proto.Tool`, or a :class:`HostTool` under its public
    name) as a function tool of ``target``.  ``name`` overrides the name; ``normalized``
    reuses a schema already normalized for that target.

    Raises ``ValueError`` for an unknown target and :class:`SchemaError` when the tool's
    schema cannot be given to that target (leave that tool out, or use another target)."""
    try:
        shape = _SHAPES[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}: one of {', '.join(TOOL_TARGETS)}") \
            from None
    definition = tool if isinstance(tool, Tool) else tool.definition
    public = name or tool.name
    n = normalized if normalized is not None else normalize_schema(definition.input_schema,
                                                                   target)
    description = definition.description or definition.title
    return shape(public, description, n)


def tool_definitions(tools: Iterable[Tool | HostTool], target: str
                     ) -> tuple[list[dict[str, Any]], list[tuple[str, SchemaError]]]:
    """Definitions of every tool that ``target`` can take, and ``(name, error)`` for each it
    cannot (to log: one bad schema must not cost the model every other tool)."""
    out: list[dict[str, Any]] = []
    refused: list[tuple[str, SchemaError]] = []
    for tool in tools:
        try:
            out.append(tool_definition(tool, target))
        except SchemaError as exc:
            refused.append((tool.name, exc))
    return out, refused
