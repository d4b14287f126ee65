"""Fuzz harness for the SKILL.md frontmatter parser (``mcp_proto._frontmatter``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the rest decoded as UTF-8 (bad bytes replaced) is a
  whole ``SKILL.md`` when it starts with ``---``, else the frontmatter between ``---``
  lines;
- **structured** (otherwise): a JSON-like value drawn from the data, written as YAML in
  styles drawn too (block mappings and sequences at several indentations, sequences under
  their key, compact ``- k: v`` entries, flow collections, plain / single / double-quoted
  scalars, escapes, a double-quoted scalar broken over rows with ``\\``, literal block
  scalars, comments, blank rows, ``\\r\\n`` line ends).

Properties (any violation raises AssertionError):

- :func:`parse_frontmatter` and :func:`split_frontmatter` raise nothing but
  :class:`FrontmatterError` (no RecursionError, no IndexError, nothing from ``int``);
- a result is a dict of JSON-like values (str keys) nested at most
  :data:`MAX_FRONTMATTER_DEPTH` deep;
- round trip: a result written back (by the writer below, in a style drawn from the data)
  parses to the same value; a value written in any style parses back to itself;
- the body :func:`split_frontmatter` returns is the text after the closing line.

Run: ``python fuzz/fuzz_frontmatter.py /tmp/fz/frontmatter fuzz/corpus/frontmatter``.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._frontmatter import (
    MAX_FRONTMATTER_DEPTH,
    FrontmatterError,
    _resolve,
    parse_frontmatter,
    split_frontmatter,
)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

#: Characters of a raw input read (the parser's own bound is 64 KiB; fuzzing wants speed).
MAX_RAW = 16_384

WORDS = ("name", "description", "metadata", "version", "2.1.0", "a b", "x", "", " ", "null",
         "true", "False", "~", "0x1F", "0o17", "1e5", ".inf", "-.5", "yes", "a: b", "- x",
         "# c", "#", "'", '"', "\\", "\t", "\n", "\n\n", "\u00e9", "\U0001F600", "\x85",
         "\u2028", "[", "]", "{", "}", ",", "&a", "*a", "!t", "|", ">", "?", "%", "@", "`",
         "k:v", "http://x/y#z", "...", "---", "\x7f", "\x00", "\ufeff")
_PLAIN = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9_ .()/-]*\Z")


def draw_value(ch: Choices, depth: int = 0) -> Any:
    k = ch.below(10 if depth < 6 else 6)
    if k == 0:
        return ch.pick((None, True, False))
    if k == 1:
        return ch.pick((0, -1, 7, 2**64, -(2**31), 10**30))
    if k == 2:
        return ch.pick((0.5, -1.25, 1e16, 1e-7, float("inf"), float("-inf"), -0.0))
    if k in (3, 4, 5):
        return "".join(ch.pick(WORDS) for _ in range(ch.below(4)))
    if k in (6, 7):
        return [draw_value(ch, depth + 1) for _ in range(ch.below(4))]
    out: dict[str, Any] = {}
    for _ in range(ch.below(4)):
        out["".join(ch.pick(WORDS) for _ in range(1 + ch.below(2)))] = draw_value(ch, depth + 1)
    return out


# -- a YAML writer (the oracle's other half) -----------------------------------------------


def _escape(s: str) -> str:
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        elif ord(c) <= 0xFF:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _plain_ok(s: str, flow: bool) -> bool:
    return bool(_PLAIN.match(s)) and s == s.strip() and ": " not in s and " #" not in s \
        and _resolve(s, 1) == s and not (flow and "," in s)


def scalar(value: Any, ch: Choices, *, flow: bool, key: bool = False) -> str:
    if value is None:
        return ch.pick(("null", "~", "Null", "NULL"))
    if value is True or value is False:
        return ch.pick(("true", "True", "TRUE") if value else ("false", "False", "FALSE"))
    if type(value) is int:
        return hex(value) if value >= 0 and ch.chance(3) else str(value)
    if type(value) is float:
        if math.isinf(value):
            return ".inf" if value > 0 else ch.pick(("-.inf", "-.Inf", "-.INF"))
        if math.isnan(value):
            return ".nan"
        return repr(value)
    assert type(value) is str
    k = ch.below(4)
    if k == 0 and _plain_ok(value, flow):
        return value
    printable = all(" " <= c <= "~" or "\u00a0" <= c <= "\ud7ff" for c in value)
    if k == 1 and printable:
        return "'" + value.replace("'", "''") + "'"
    text = _escape(value)
    if k == 2 and not key and len(text) > 4:  # broken over two rows with an escaped row end
        cut = 1 + ch.below(len(text) - 2)
        if text[cut] not in " \t" and not _mid_escape(text, cut):
            return text[:cut] + "\\\n" + " " * 40 + text[cut:]
    return text


def _mid_escape(text: str, cut: int) -> bool:
    """Whether ``cut`` falls inside an escape sequence of the double-quoted ``text``."""
    i = 1
    while i < len(text) - 1:
        if text[i] == "\\":
            width = {"x": 2, "u": 4, "U": 8}.get(text[i + 1], 0) + 2
            if i < cut < i + width:
                return True
            i += width
        else:
            i += 1
    return False


def flow_node(value: Any, ch: Choices) -> str:
    if type(value) is list:
        return "[" + ", ".join(flow_node(v, ch) for v in value) + "]"
    if type(value) is dict:
        return "{" + ", ".join(f"{scalar(k, ch, flow=True, key=True)}: {flow_node(v, ch)}"
                               for k, v in value.items()) + "}"
    return scalar(value, ch, flow=True).replace("\n" + " " * 40, "\n" + " " * 60)


def _literal(value: str, indent: int) -> str | None:
    """``value`` as a ``|`` block scalar at ``indent``, when it can be one."""
    if not value or not all(" " <= c <= "~" or c in "\t\n" or (c >= "\u00a0" and
                            c not in "\x85\u2028\u2029\ufeff") for c in value):
        return None
    body = value.rstrip("\n")
    trailing = len(value) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    if any(line and line.strip(" ") == "" for line in body.split("\n")) or not body:
        return None
    lines = "".join((" " * indent + line if line else "") + "\n" for line in body.split("\n"))
    # the indentation indicator: the rows are 2 in from the collection the key is in
    return f"|2{chomp}\n" + lines + "\n" * max(0, trailing - 1)


def block(value: Any, ch: Choices, indent: int, out: list[str]) -> bool:
    """``value`` (a non-empty dict or list) as block rows at ``indent``; whether its last
    row ends a ``|+`` block (then no blank row may follow: it would be that block's)."""
    pad = " " * indent
    items = value.items() if type(value) is dict else ((None, v) for v in value)
    kept = False  # the row before ends a |+ block: a blank line would be its content
    for key, item in items:
        if ch.chance(6):
            out.append(pad + "# a comment" if kept or ch.chance(2) else "")
        kept = False
        head = pad + (f"{scalar(key, ch, flow=False, key=True)}:" if type(value) is dict
                      else "-")
        nested = type(item) in (dict, list) and item
        if nested and type(value) is list and type(item) is dict and ch.chance(2):
            inner: list[str] = []  # compact: "- k: v" and the rest at the key's column
            kept = block(item, ch, indent + 2, inner)
            first = next(i for i, row in enumerate(inner) if row.strip()
                         and not row.lstrip().startswith("#"))
            inner[first] = pad + "- " + inner[first][indent + 2:]
            out.extend(inner)
            continue
        if nested:
            step = ch.pick((1, 2, 4))
            if type(value) is dict and type(item) is list and ch.chance(2):
                step = 0  # a sequence under its key, at the key's indentation
            out.append(head + (" # c" if ch.chance(5) else ""))
            kept = block(item, ch, indent + step if step else indent, out)
            continue
        if type(item) is str and "\n" in item and ch.chance(2):
            literal = _literal(item, indent + 2)
            if literal is not None:
                header, *rest = literal.split("\n")
                out.append(head + " " + header)
                out.extend(rest[:-1])
                kept = header.endswith("+")
                continue
        text = flow_node(item, ch) if type(item) in (dict, list) else \
            scalar(item, ch, flow=False)
        text = text.replace("\n" + " " * 40, "\n" + pad + "  ")
        out.append(head + " " + text + (" # trailing" if ch.chance(5) else ""))
    return kept


def dump(value: dict[str, Any], ch: Choices) -> str:
    if not value or ch.chance(5):
        rows = [flow_node(value, ch).replace("\n" + " " * 60, "\n  ")]
    else:
        rows = []
        block(value, ch, 0, rows)
    end = "\r\n" if ch.chance(8) else "\n"
    return "---" + end + "".join(r + end for r in rows) + "---" + end + "body"


# -- the properties ----------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is float and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def check_shape(value: Any, depth: int = 0) -> None:
    if type(value) in (dict, list):
        assert depth < MAX_FRONTMATTER_DEPTH, "nested past MAX_FRONTMATTER_DEPTH"
        items = value.items() if type(value) is dict else enumerate(value)
        for k, v in items:
            assert type(value) is list or type(k) is str, f"key {k!r}"
            check_shape(v, depth + 1)
    else:
        assert value is None or type(value) in (bool, int, float, str), repr(value)[:200]


def _parse(text: str, what: str) -> dict[str, Any] | None:
    try:
        return parse_frontmatter(text)
    except FrontmatterError:
        return None
    except Exception as exc:
        escaped(f"parse_frontmatter ({what})", exc)


def check_round_trip(value: dict[str, Any], ch: Choices, what: str) -> None:
    text = dump(value, ch)
    got = _parse(text, what)
    assert got is not None, f"{what}: a written value was refused: {text[:300]!r}"
    assert same(got, value), f"{what}: {value!r} came back as {got!r} from {text[:300]!r}"[:900]


def check_text(text: str, ch: Choices) -> None:
    try:
        _, body = split_frontmatter(text)
    except FrontmatterError:
        body = None
    except Exception as exc:
        escaped("split_frontmatter", exc)
    got = _parse(text, "raw")
    if got is None:
        return
    assert body is not None and text.endswith(body), "the body is not the text's end"
    check_shape(got)
    check_round_trip(got, ch, "written back")


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        text = data[1:MAX_RAW].decode("utf-8", "replace")
        if not text.startswith("---"):
            text = "---\n" + text + "\n---\n"
        check_text(text, Choices(data[::-1]))
        return
    ch = Choices(data[1:])
    value = draw_value(ch)
    if type(value) is not dict:
        value = {"name": value}
    check_shape(value)
    check_round_trip(value, ch, "structured")


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
