"""``structuredContent`` (and any other value) as JSON: the text of a value at any depth,
and whether a text block of the result already holds it.

:func:`_json_text` writes whatever a result holds as JSON text and never raises (``json.dumps``
when it can, the same text written without recursion when it cannot: the core decodes values
nested nearly to Python's recursion limit).  :func:`_duplicate_index` finds the first text
block that is JSON equal to ``structuredContent`` (compared by value and JSON type, without
recursion, so ``true`` is not ``1``): that block and the value are one item, given once.
"""

from __future__ import annotations

import json
from typing import Any

from ..._types import CallToolResult, TextContent

__all__ = [
    "_duplicate_index",
    "_json_equal",
    "_json_text",
    "_json_text_iterative",
]


def _json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value, but ``true`` is not ``1``.  Iterative, so a
    deeply nested value cannot exhaust the stack."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
            if x is not y:
                return False
        elif ((isinstance(x, int | float) and isinstance(y, int | float))
              or (isinstance(x, str) and isinstance(y, str))):
            if x != y:
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def _holds(text: str, value: Any) -> bool:
    """Whether ``text`` is JSON equal to ``value``."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return _json_equal(parsed, value)


def _duplicate_index(result: CallToolResult) -> int | None:
    """The index of the first text block holding ``structuredContent``, if any."""
    if result.structured_content is None:
        return None
    for i, block in enumerate(result.content):
        if isinstance(block, TextContent) and _holds(block.text, result.structured_content):
            return i
    return None


#: What :func:`_json_text` writes for a value it cannot write as itself: a container met
#: again inside itself (a structure built by hand), an object whose ``str()`` fails, an
#: integer too long for ``int``'s string conversion limit.
_CIRCULAR = "[circular reference]"
_UNPRINTABLE = "[value that cannot be written]"


def _json_text(value: Any) -> str:
    """``value`` as JSON text, whatever it holds; never raises.

    ``json.dumps`` (``ensure_ascii=False``, anything else as its ``str()``) when it can;
    when it cannot (nesting deeper than the interpreter's recursion limit, which the core's
    decoder nearly reaches; a circular structure; a key that is not a string or a scalar),
    the same text written without recursion (:func:`_json_text_iterative`)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except Exception:  # RecursionError; ValueError (circular); TypeError (a key); or
        return _json_text_iterative(value)  # anything an object's own __str__ raises


def _scalar_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError):  # an int over the conversion limit, an odd subclass
        return json.dumps(_UNPRINTABLE)


def _str_text(value: Any) -> str:
    try:
        text = str(value)
    except Exception:  # an object's own __str__ may raise anything
        text = _UNPRINTABLE
    return json.dumps(text, ensure_ascii=False)


def _key_text(key: Any) -> str:
    """A key the way ``json.dumps`` writes it (scalars as their JSON text), others by
    ``str()``."""
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if key is None or isinstance(key, (bool, int, float)):
        text = _scalar_text(key)
        return text if text.startswith('"') else json.dumps(text)
    return _str_text(key)


def _json_text_iterative(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)`` written with an explicit stack:
    any depth, linear in the size; a container inside itself is written as the string
    ``"[circular reference]"``."""
    out: list[str] = []
    inside: set[int] = set()  # the containers being written (the current path)
    # (0, text): write text; (1, value): write value; (2, id): leave that container
    todo: list[tuple[int, Any]] = [(1, value)]
    while todo:
        op, item = todo.pop()
        if op == 0:
            out.append(item)
        elif op == 2:
            inside.discard(item)
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in inside:
                out.append(json.dumps(_CIRCULAR))
                continue
            inside.add(id(item))
            todo.append((2, id(item)))
            if isinstance(item, dict):
                todo.append((0, "}"))
                pairs = list(item.items())
                for i in range(len(pairs) - 1, -1, -1):
                    todo.append((1, pairs[i][1]))
                    todo.append((0, _key_text(pairs[i][0]) + ": "))
                    if i:
                        todo.append((0, ", "))
                todo.append((0, "{"))
            else:
                todo.append((0, "]"))
                for i in range(len(item) - 1, -1, -1):
                    todo.append((1, item[i]))
                    if i:
                        todo.append((0, ", "))
                todo.append((0, "["))
        elif item is None or isinstance(item, (str, bool, int, float)):
            out.append(_scalar_text(item))
        else:
            out.append(_str_text(item))
    return "".join(out)
