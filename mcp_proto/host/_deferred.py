"""Deferred tool loading: most tools kept out of the model's context until it searches for
them (pure).

178 tools take 62% of a context window before the user speaks (deepagents#5528); the
answer the providers give is to send the definitions marked *deferred* together with a
search tool, so the model loads only what a search returns.  Where a provider has that:

==============================  ==========================================================
``anthropic``                   ``"defer_loading": true`` on each deferred tool, and
                                Anthropic's server-side BM25 tool search tool
                                (:data:`ANTHROPIC_TOOL_SEARCH`), itself never deferred
``openai-responses[-strict]``   ``"defer_loading": true`` on each deferred function, and
                                the hosted ``{"type": "tool_search"}`` tool
==============================  ==========================================================

Every other target (OpenAI Chat, Gemini) has no deferred loading: the deferred tools are
left out and the meta-tools ``mcp_search`` and ``mcp_call`` take their place (the host
runs the search over every server's tools, and the call by server and tool name), so the
model still reaches each of them.

``deferred`` says which tools: False or None none (every definition as it is), True all,
or glob patterns (``fnmatch``, case-sensitive) over the public names.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._meta import META_TOOLS
from ._tools import tool_definition

__all__ = [
    "ANTHROPIC_TOOL_SEARCH",
    "DEFERRED_TARGETS",
    "OPENAI_TOOL_SEARCH",
    "Deferred",
    "deferred_definitions",
    "deferred_key",
]

#: Anthropic's BM25 tool search tool (Messages API, server tool; it searches the request's
#: deferred tools' names, descriptions and argument names).
ANTHROPIC_TOOL_SEARCH: Mapping[str, Any] = {
    "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
#: OpenAI Responses' hosted tool search over the request's deferred functions.
OPENAI_TOOL_SEARCH: Mapping[str, Any] = {"type": "tool_search"}

#: target -> the provider's own search tool, for the targets that defer natively.
DEFERRED_TARGETS: Mapping[str, Mapping[str, Any]] = {
    "anthropic": ANTHROPIC_TOOL_SEARCH,
    "openai-responses": OPENAI_TOOL_SEARCH,
    "openai-responses-strict": OPENAI_TOOL_SEARCH,
}

#: The meta-tools a target without deferred loading gets instead of the deferred tools.
_STAND_INS = ("mcp_search", "mcp_call")

Deferred = bool | str | Collection[str] | None
"""Which tools are deferred: none (False, None), all (True), or glob patterns."""


def deferred_key(deferred: Deferred) -> tuple[str, ...] | bool:
    """A hashable, canonical form of ``deferred`` (for a cache key): a bool, or the sorted
    patterns.  ``TypeError`` for anything else."""
    if deferred is None or isinstance(deferred, bool):
        return bool(deferred)
    if isinstance(deferred, str):
        return (deferred,)
    patterns = tuple(sorted(set(deferred)))
    if not all(isinstance(p, str) for p in patterns):
        raise TypeError("deferred patterns must be strings")
    return patterns


def _matcher(key: tuple[str, ...] | bool) -> re.Pattern[str] | bool:
    if isinstance(key, bool):
        return key
    if not key:
        return False
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in key))


def _name(definition: Mapping[str, Any]) -> str:
    function = definition.get("function")
    if isinstance(function, Mapping):  # OpenAI Chat nests it
        return str(function.get("name"))
    return str(definition.get("name"))


def deferred_definitions(definitions: Sequence[dict[str, Any]], target: str,
                         deferred: Deferred) -> list[dict[str, Any]]:
    """``definitions`` (one target's, as :func:`tool_definition` writes them) with the tools
    ``deferred`` names marked for the provider's deferred loading and its search tool added,
    or, for a target without deferred loading, left out with ``mcp_search`` and ``mcp_call``
    added (when any was deferred).  The definitions given are not changed (a marked one is a
    copy).  ``ValueError`` for an unknown target; ``TypeError`` for bad patterns."""
    key = deferred_key(deferred)
    match = _matcher(key)
    if match is False:
        return list(definitions)
    # the definitions of the stand-ins are the target's: also checks the target
    stand_ins = [tool_definition(META_TOOLS[n], target) for n in _STAND_INS]

    def is_deferred(definition: Mapping[str, Any]) -> bool:
        return match is True or (not isinstance(match, bool)
                                 and match.fullmatch(_name(definition)) is not None)

    search_tool = DEFERRED_TARGETS.get(target)
    if search_tool is not None:
        out = [{**d, "defer_loading": True} if is_deferred(d) else d for d in definitions]
        if any(o is not d for o, d in zip(out, definitions, strict=True)):
            out.append(dict(search_tool))
        return out
    kept = [d for d in definitions if not is_deferred(d)]
    if len(kept) == len(definitions):
        return kept
    present = {_name(d) for d in kept}
    return kept + [s for s in stand_ins if _name(s) not in present]
