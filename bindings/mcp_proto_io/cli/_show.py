"""How the ``mcp-proto`` command prints: tables sized to their content, tool results, resource
contents, prompt messages, provider tool definitions, and the JSON forms of each.

A table's column is as wide as its longest cell.  The first column (the name a user types
next: a tool, a server, a URI) and the last are never cut; a middle column (a server, a
description) is at most :data:`MAX_COLUMN` characters, a longer cell cut with ``…``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from mcp_proto import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_proto.host import normalize_schema, tool_definitions

__all__ = [
    "ELLIPSIS",
    "MAX_COLUMN",
    "block_text",
    "definition_name",
    "definition_strict",
    "era_word",
    "first_line",
    "print_call_result",
    "print_definitions",
    "print_json",
    "print_prompt",
    "print_read",
    "print_schema",
    "table",
]

#: The widest a middle table column gets (a longer cell is cut with :data:`ELLIPSIS`): wide
#: enough for a server name or a description's start, narrow enough that the last column
#: still starts on a terminal line most of the time.  The first column is never cut: it is
#: what the user copies into the next command.
MAX_COLUMN = 60
ELLIPSIS = "…"


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.splitlines())


def table(rows: Sequence[Sequence[object]], out: TextIO,
          headers: Sequence[str] | None = None) -> None:
    """Print ``rows`` as columns two spaces apart, each as wide as its longest cell; the
    first column and each row's last cell as they are, a middle column at most
    :data:`MAX_COLUMN` (longer cells cut with ``…``)."""
    cells = [[_cell(v) for v in row] for row in rows]
    if headers is not None:
        cells.insert(0, list(headers))
    if not cells:
        return
    n = max(len(r) for r in cells)
    widths = [max((len(r[i]) for r in cells if i < len(r) - 1), default=0)
              for i in range(n)]  # a row's last cell is not padded: it sizes nothing
    widths = [w if i == 0 else min(MAX_COLUMN, w) for i, w in enumerate(widths)]
    for row in cells:
        parts = []
        for i, text in enumerate(row):
            if i == len(row) - 1:
                parts.append(text)
            else:
                cut = text if len(text) <= widths[i] else text[:widths[i] - 1] + ELLIPSIS
                parts.append(cut.ljust(widths[i]))
        out.write("  ".join(parts).rstrip() + "\n")


def era_word(era: str | None) -> str:
    """A client's era as the CLI says it everywhere: ``handshake`` (``initialize`` first:
    2024-11-05 to 2025-11-25) or ``stateless`` (2026-07-28 on); ``-`` when unknown."""
    return {"legacy": "handshake", "modern": "stateless"}.get(era or "", era or "-")


def first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def print_json(value: object, out: TextIO) -> None:
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def block_text(block: ContentBlock) -> str:
    """A content block as text: text as is, others as one bracketed line."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource link {block.uri} ({block.name})]"
    if isinstance(block, EmbeddedResource):
        res = block.resource
        if isinstance(res, TextResourceContents):
            return f"[resource {res.uri}]\n{res.text}"
        return f"[resource {res.uri}, {len(res.blob) * 3 // 4} bytes]"
    return f"[{block.type} content]"


def print_call_result(result: CallToolResult, as_json: bool, out: TextIO) -> None:
    """A tool's result: its content blocks as text (the structured content when there are
    none), or with ``as_json`` the result as the server sent it."""
    if as_json:
        print_json(result.raw, out)
        return
    for block in result.content:
        out.write(block_text(block) + "\n")
    if result.structured_content is not None and not result.content:
        print_json(result.structured_content, out)


def print_read(result: ReadResourceResult, as_json: bool, out: TextIO) -> None:
    """A resource's contents: text as is, a blob as one line saying its size; with
    ``as_json`` one JSON object a line (uri, mimeType, text or blob)."""
    for c in result.contents:
        if as_json:
            body = {"text": c.text} if isinstance(c, TextResourceContents) else {"blob": c.blob}
            out.write(json.dumps({"uri": c.uri, "mimeType": c.mime_type, **body},
                                 ensure_ascii=False) + "\n")
        elif isinstance(c, TextResourceContents):
            out.write(c.text + "\n")
        else:
            out.write(f"[{c.uri}: {len(c.blob) * 3 // 4} bytes of "
                      f"{c.mime_type or 'binary'}]\n")


def print_prompt(result: GetPromptResult, as_json: bool, out: TextIO) -> None:
    """A prompt's messages, ``role: text`` each (``as_json``: a list of {role, text})."""
    if as_json:
        print_json([{"role": m.role, "text": block_text(m.content)} for m in result.messages],
                   out)
        return
    for m in result.messages:
        out.write(f"{m.role}: {block_text(m.content)}\n")


def _function(definition: dict[str, Any]) -> dict[str, Any]:
    """The part of a provider tool definition that names the function: its ``function``
    object (OpenAI Chat) or the definition itself (the others)."""
    inner = definition.get("function")
    return inner if isinstance(inner, dict) else definition


def definition_name(definition: dict[str, Any]) -> str:
    """A provider tool definition's name, whatever its shape."""
    return str(_function(definition).get("name"))


def definition_strict(definition: dict[str, Any]) -> str:
    value = _function(definition).get("strict")
    return "-" if value is None else str(value).lower()


def _definition_description(definition: dict[str, Any]) -> str:
    value = _function(definition).get("description")
    return first_line(value if isinstance(value, str) else None)


def print_definitions(tools: Sequence[Any], provider: str, as_json: bool, out: TextIO,
                      err: TextIO) -> None:
    """``tools --provider X``, the same with one server and with ``--config``: the tools
    (``Tool`` or ``HostTool``: the public name) as that provider's tool definitions; with
    ``as_json`` the definitions as a JSON list (what the provider's API takes), else a table
    (name, strict, description).  A tool the provider cannot take is left out with one
    line on ``err`` saying why."""
    definitions, refused = tool_definitions(list(tools), provider)
    for name, error in refused:
        err.write(f"mcp-proto: {name}: left out for {provider}: {error}\n")
    if as_json:
        print_json(definitions, out)
        return
    table([(definition_name(d), f"strict={definition_strict(d)}", _definition_description(d))
           for d in definitions], out)


def print_schema(name: str, schema: dict[str, Any], provider: str | None, as_json: bool,
                 out: TextIO) -> None:
    """``schema NAME``: the tool's own input schema, or with ``provider`` as that provider
    takes it, then what was changed and why (``as_json``: one object with both)."""
    if provider is None:
        if as_json:
            print_json({"name": name, "schema": schema}, out)
        else:
            print_json(schema, out)
        return
    normalized = normalize_schema(schema, provider)
    notes = [{"path": n.path, "kind": n.kind, "detail": n.detail} for n in normalized.notes]
    if as_json:
        print_json({"name": name, "target": provider, "strict": normalized.strict,
                    "schema": normalized.schema, "notes": notes}, out)
        return
    print_json(normalized.schema, out)
    strict = "-" if normalized.strict is None else str(normalized.strict).lower()
    out.write(f"# {name} for {provider}: strict={strict}, "
              f"{len(notes)} note{'s' if len(notes) != 1 else ''}\n")
    for n in notes:
        out.write(f"# {n['path'] or '/'}: {n['kind']}: {n['detail']}\n")
