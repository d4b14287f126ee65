"""What the servers say that a model should read besides their tools: pure.

- :func:`format_instructions`: every server's ``instructions`` (from its handshake or
  ``server/discover``) as one text for a system prompt, each in its own labelled section,
  each bounded (a server must not fill the context window before the user speaks), and the
  whole bounded.  A server's text is untrusted (spec SEC-01): it is fenced in a
  ``<server-instructions server="...">`` element whose closing tag the text cannot forge (a
  ``</server-instructions`` inside it is defused), so the host's own prompt around it stays
  the host's.
- :func:`resource_listing`, :func:`resource_result` and :func:`prompt_result`: the answers of
  the meta-tools ``mcp_list_resources``, ``mcp_read_resource`` and ``mcp_get_prompt`` as tool
  results, which then pass the same budget and provider conversion as any tool's result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._types import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ReadResourceResult,
    TextContent,
)
from ._catalog import HostResource, HostResourceTemplate
from ._meta import meta_result

if TYPE_CHECKING:
    from ._search import SearchHit
    from .content._budget import ResultPage

__all__ = [
    "DEFAULT_INSTRUCTIONS_CHARS",
    "DEFAULT_INSTRUCTIONS_TOTAL",
    "MIN_INSTRUCTIONS_CHARS",
    "format_instructions",
    "page_result",
    "prompt_result",
    "resource_listing",
    "resource_result",
    "search_result",
]

#: Characters of one server's instructions kept (about 1,000 tokens): the spec means them as
#: a paragraph of hints ("use tool X before Y"), not a manual; past it they are cut, marked.
DEFAULT_INSTRUCTIONS_CHARS = 4000
#: Characters of all servers' instructions together (about 8,000 tokens at 64 servers' worst):
#: a system prompt also holds the host's own words.
DEFAULT_INSTRUCTIONS_TOTAL = 32_000
#: Characters kept for the last line that names the servers left out (their names are cut
#: to fit it).
TRAILER_CHARS = 160
#: The least ``max_chars`` and ``max_total`` make sense at: room for a section beside the
#: trailer (the cut marker alone is about 50 characters).
MIN_INSTRUCTIONS_CHARS = 2 * TRAILER_CHARS

_TAG = "server-instructions"
#: A closing tag inside a server's text, in any case and spacing (``</ Server-Instructions``):
#: defused to ``<\/...``, so the section cannot be ended by the text it fences.
_CLOSE = re.compile(rf"<\s*/(\s*{_TAG})", re.IGNORECASE)


def _attribute(value: str) -> str:
    return (value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, the marker included: its number is at most
    ``len(text)``, so a marker sized for that always fits."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - len(_marker(len(text))))
    return text[:keep] + _marker(len(text) - keep)


def _marker(omitted: int) -> str:
    return f"\n[... {omitted:,} characters of instructions omitted]"


def _trailer(left_out: list[str]) -> str:
    names = ", ".join(left_out)
    head = f"[instructions of {len(left_out)} more server(s) left out to keep this short: "
    room = TRAILER_CHARS - len(head) - 1
    if len(names) > room:
        names = names[:max(0, room - 3)] + "..."
    return head + names + "]"


def format_instructions(instructions: Mapping[str, str | None] | Iterable[tuple[str, str | None]],
                        *, max_chars: int = DEFAULT_INSTRUCTIONS_CHARS,
                        max_total: int = DEFAULT_INSTRUCTIONS_TOTAL) -> str:
    """Each server's instructions (``server -> text``; None or blank: left out) in a
    ``<server-instructions server="NAME">`` section, in the order given, each cut to
    ``max_chars`` characters of its text (a marker says how much was left out), and the
    sections after the total passed ``max_total`` left out (a last line names those
    servers).  ``""`` when no server gave any.  ``ValueError`` for a bound under
    :data:`MIN_INSTRUCTIONS_CHARS`.  Put the text in the system prompt as it is."""
    if max_chars < MIN_INSTRUCTIONS_CHARS or max_total < MIN_INSTRUCTIONS_CHARS:
        raise ValueError(f"max_chars and max_total must be at least {MIN_INSTRUCTIONS_CHARS}")
    pairs = instructions.items() if isinstance(instructions, Mapping) else instructions
    sections: list[str] = []
    left_out: list[str] = []
    used = 0
    room = max_total - TRAILER_CHARS  # the line naming who was left out always fits
    for server, text in pairs:
        if text is None or not text.strip():
            continue
        # defused first, then cut: the bound holds for the text as sent
        body = _cut(_CLOSE.sub(r"<\\/\1", text.strip()), max_chars)
        section = f'<{_TAG} server="{_attribute(server)}">\n{body}\n</{_TAG}>'
        if used + len(section) > room:
            left_out.append(server)
            continue
        sections.append(section)
        used += len(section) + 2
    if left_out:
        sections.append(_trailer(left_out))
    return "\n\n".join(sections)


def resource_listing(resources: Iterable[HostResource],
                     templates: Iterable[HostResourceTemplate] = ()) -> CallToolResult:
    """``mcp_list_resources``'s answer: each resource's server, URI, name and what its
    server says of it, and the URI templates a read may fill in."""
    out: list[dict[str, Any]] = []
    for r in resources:
        d = r.definition
        item: dict[str, Any] = {"server": r.server, "uri": r.uri, "name": r.name}
        for key, value in (("title", d.title), ("description", d.description),
                           ("mimeType", d.mime_type), ("size", d.size)):
            if value is not None:
                item[key] = value
        out.append(item)
    answer: dict[str, Any] = {"resources": out}
    shaped = [{"server": t.server, "uriTemplate": t.uri_template, "name": t.name,
               **({"description": t.definition.description}
                  if t.definition.description else {})} for t in templates]
    if shaped:
        answer["templates"] = shaped
    return meta_result(answer)


def resource_result(result: ReadResourceResult) -> CallToolResult:
    """``mcp_read_resource``'s answer: each of the resource's contents as an embedded
    resource (its URI and text, or its blob), as a tool result would carry them."""
    blocks: tuple[ContentBlock, ...] = tuple(EmbeddedResource(resource=c)
                                             for c in result.contents)
    if not blocks:
        blocks = (TextContent(text="(the resource has no contents)"),)
    return CallToolResult(content=blocks)


def prompt_result(result: GetPromptResult) -> CallToolResult:
    """``mcp_get_prompt``'s answer: its description, then each message as a line naming
    its role followed by the message's content block."""
    blocks: list[Any] = []
    if result.description:
        blocks.append(TextContent(text=f"prompt: {result.description}"))
    for message in result.messages:
        content = message.content
        if isinstance(content, TextContent):
            blocks.append(TextContent(text=f"[{message.role}] {content.text}"))
        else:
            blocks.append(TextContent(text=f"[{message.role}]"))
            blocks.append(content)
    if not blocks:
        blocks.append(TextContent(text="(the prompt has no messages)"))
    return CallToolResult(content=tuple(blocks))


def search_result(hits: Iterable[SearchHit]) -> CallToolResult:
    """``mcp_search``'s answer: each hit's server, tool name (what ``mcp_call`` takes),
    public name, title, description and input schema, best first."""
    out: list[dict[str, Any]] = []
    for hit in hits:
        tool = hit.definition
        item: dict[str, Any] = {"server": hit.server, "tool": hit.tool, "name": hit.name}
        if tool.title:
            item["title"] = tool.title
        if tool.description:
            item["description"] = tool.description
        item["inputSchema"] = tool.input_schema
        out.append(item)
    return meta_result({"tools": out})


def page_result(page: ResultPage) -> CallToolResult:
    """``mcp_read_result``'s answer: the page's text, then a line saying which characters
    of how many it holds and how to read on (or that it is the end)."""
    end = page.offset + len(page.text)
    if page.next_offset is None:
        trailer = f"[characters {page.offset:,}-{end:,} of {page.total:,}: the end]"
    else:
        trailer = (f"[characters {page.offset:,}-{end:,} of {page.total:,}; read more with "
                   f"mcp_read_result handle={page.handle} offset={page.next_offset}]")
    return CallToolResult(content=(TextContent(text=page.text), TextContent(text=trailer)))
