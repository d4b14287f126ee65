"""The YAML frontmatter of a ``SKILL.md`` (Agent Skills), parsed without a YAML library.

A ``SKILL.md`` starts with a ``---`` line and its frontmatter ends at the next ``---``
line.  What lies between is read as a strict subset of YAML 1.2, the part skill authors
write:

- block mappings nested by indentation, block sequences (``- x``, ``- key: v``, and a
  sequence at its key's own indentation), comments;
- plain, single-quoted (``''``) and double-quoted scalars (every YAML escape), over several
  lines with YAML's line folding;
- flow sequences and flow mappings (``[a, b]``, ``{a: 1}``), nested;
- literal and folded block scalars (``|``, ``>``, chomping ``-`` / ``+``, an indentation
  digit);
- the YAML 1.2 core schema for plain scalars: ``null`` / ``~`` / empty, ``true`` /
  ``false`` (each in lower, Title or UPPER case), integers (``0x``, ``0o``), floats
  (``.inf``, ``.nan``); everything else is a string (``2.1.0``, ``yes`` and ``2024-01-01``
  stay strings, unlike YAML 1.1).

Anything else (anchors, aliases, tags, directives, several documents, complex or non-string
keys, tabs as indentation, duplicate keys, control characters) is a
:class:`FrontmatterError` naming the line, never a guess.  The frontmatter is bounded
(:data:`MAX_FRONTMATTER_BYTES`, :data:`MAX_FRONTMATTER_DEPTH`), so a hostile file costs
linear time and no deep recursion.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_FRONTMATTER_DEPTH",
    "FrontmatterError",
    "parse_frontmatter",
    "split_frontmatter",
]

#: Longest frontmatter read (its UTF-8 bytes between the ``---`` lines): a name, a
#: description (at most 1,024 characters by the Agent Skills format) and some metadata fit
#: many times over; a bigger one is a document, not a header.
MAX_FRONTMATTER_BYTES = 64 * 1024
#: Deepest nesting of mappings and sequences: real frontmatter is two or three levels deep,
#: and the parser recurses once per level.
MAX_FRONTMATTER_DEPTH = 32
#: Most digits of a decimal integer: Python's own default bound on ``int(str)``, which grows
#: quadratically past it.
MAX_INT_DIGITS = 4300

#: Characters YAML allows in a stream (c-printable); anything else is refused.
_NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd"
                            "\U00010000-\U0010ffff]")
_FENCE = re.compile(r"---[ \t]*\Z")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_BOOL = {"true": True, "True": True, "TRUE": True,
         "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")
#: The first characters no plain scalar may start with (c-indicator, less ``-?:``).
_NOT_PLAIN_START = frozenset(",[]{}#&*!|>'\"%@`")
_FLOW_INDICATORS = frozenset(",[]{}")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
            "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
#: A comment inside a row (``#`` after whitespace) and a value indicator (``:`` before
#: whitespace or the row's end).
_COMMENT = re.compile(r"[ \t]#")
_VALUE = re.compile(r":(?=[ \t]|\Z)")
_HEADER = re.compile(r"([|>])([-+]?)([1-9]?)([-+]?)(?:[ \t]+#.*|[ \t]*)\Z")


class FrontmatterError(ValueError):
    """The frontmatter is missing, too large, or not in the YAML subset skills use.
    ``line`` is the 1-based line of the ``SKILL.md`` (None when the problem is the whole
    text).  A skill whose ``SKILL.md`` raises this is not loaded."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(frontmatter, body)``: the text between the opening and closing ``---`` lines
    (every line end, ``\\r\\n``, ``\\r`` or ``\\n``, as ``\\n``) and everything after the
    closing line.  Raises :class:`FrontmatterError` when the text does not start with a
    ``---`` line, has no closing one, or the frontmatter is over
    :data:`MAX_FRONTMATTER_BYTES` (the text past that is not read)."""
    lines: list[str] = []
    size = 0
    pos = 0
    for number, brk in enumerate(_LINE_BREAK.finditer(text), 1):
        line = text[pos:brk.start()]
        pos = brk.end()
        if number == 1:
            if not _FENCE.match(line):
                raise FrontmatterError("a SKILL.md must start with a '---' line", 1)
            continue
        if _FENCE.match(line):
            return "".join(part + "\n" for part in lines), text[pos:]
        size += len(line.encode("utf-8", "surrogatepass")) + 1
        if size > MAX_FRONTMATTER_BYTES:
            raise FrontmatterError(f"the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
        lines.append(line)
    last = text[pos:]  # the last line, with no line end
    if pos == 0 and not _FENCE.match(last):
        raise FrontmatterError("a SKILL.md must start with a '---' line", 1)
    if pos > 0 and _FENCE.match(last):
        return "".join(part + "\n" for part in lines), ""
    if size + len(last) > MAX_FRONTMATTER_BYTES:  # characters: no more bytes than these
        raise FrontmatterError(f"the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
    raise FrontmatterError("the frontmatter has no closing '---' line")


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of ``text`` (a whole ``SKILL.md``) as a JSON-like mapping: str keys,
    values None, bool, int, float, str, list or dict.  An empty frontmatter is ``{}``.
    Raises :class:`FrontmatterError` (naming the line) for anything outside the subset this
    module describes; the caller refuses the skill (it cannot be checked against its
    entry)."""
    block, _ = split_frontmatter(text)
    bad = _NON_PRINTABLE.search(block)
    if bad is not None:
        line = block.count("\n", 0, bad.start()) + 2
        raise FrontmatterError(f"character {bad.group()!r} is not allowed in YAML", line)
    parser = _Parser(block.split("\n")[:-1])
    value = parser.document()
    if value is None:
        return {}
    if type(value) is not dict:
        raise FrontmatterError("the frontmatter must be a mapping of fields")
    return value


def _resolve(text: str, line: int) -> Any:
    """A plain scalar by the YAML 1.2 core schema."""
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        if len(text) > MAX_INT_DIGITS:
            raise FrontmatterError(f"an integer of more than {MAX_INT_DIGITS} digits", line)
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _INF.match(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if _NAN.match(text):
        return float("nan")
    if _FLOAT.match(text):
        return float(text)
    return text


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip(" "))


def _blank(row: str) -> bool:
    """A row with nothing but whitespace or a comment."""
    rest = row.lstrip(" \t")
    return not rest or rest[0] == "#"


class _Parser:
    """One frontmatter: its rows and a cursor ``(r, c)``.  Block structure is read row by
    row; flow scalars and collections character by character across rows.  A block sequence
    entry ``- x`` is read by overwriting its ``-`` with a space, so the entry's content sits
    at its own indentation like any other node (``- a: 1`` is a mapping at column 2)."""

    __slots__ = ("c", "depth", "flows", "r", "rows")

    def __init__(self, rows: list[str]) -> None:
        self.rows = rows
        self.r = 0
        self.c = 0
        self.depth = 0
        self.flows = 0  # flow collections open at the cursor

    def fail(self, message: str, row: int | None = None) -> FrontmatterError:
        return FrontmatterError(message, (self.r if row is None else row) + 2)

    def at(self, i: int) -> str:
        """The character at column ``i`` of the current row ("" past its end)."""
        return self.rows[self.r][i:i + 1]

    # -- block structure ------------------------------------------------------------------

    def row_start(self) -> tuple[int, str] | None:
        """The next row with content (blank and comment rows skipped): its indentation and
        its text from there.  Tabs as indentation and document markers are refused."""
        rows = self.rows
        while self.r < len(rows) and _blank(rows[self.r]):
            self.r += 1
        self.c = 0
        if self.r >= len(rows):
            return None
        row = rows[self.r]
        n = _indent(row)
        if row[n] == "\t":
            raise self.fail("a tab is not allowed as indentation")
        if n == 0 and row[:3] in ("---", "...") and row[3:4] in ("", " ", "\t"):
            raise self.fail("a frontmatter is a single YAML document")
        return n, row[n:]

    def document(self) -> Any:
        if self.row_start() is None:
            return None
        value = self.node(-1)
        if self.row_start() is not None:
            raise self.fail("unexpected text after the frontmatter's mapping")
        return value

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_FRONTMATTER_DEPTH:
            raise self.fail(f"nested deeper than {MAX_FRONTMATTER_DEPTH} levels")

    def node(self, parent: int) -> Any:
        """The block node at the next content row (indented more than ``parent``, or a
        sequence at ``parent`` itself under a key)."""
        start = self.row_start()
        assert start is not None
        n, text = start
        if _is_entry(text):
            return self.sequence(n)
        if self.key_end(text) is not None:
            return self.mapping(n)
        self.c = n
        return self.inline(parent)

    def sequence(self, n: int) -> list[Any]:
        self.enter()
        out: list[Any] = []
        while True:
            start = self.row_start()
            if start is None or start[0] < n or (start[0] == n and not _is_entry(start[1])):
                break  # a row at n that is no entry ends a sequence under a key
            if start[0] > n:
                raise self.fail("expected a '- ' entry of the sequence here")
            out.append(self.after_indicator(n, n + 1, entry=True))
        self.depth -= 1
        return out

    def mapping(self, n: int) -> dict[str, Any]:
        self.enter()
        out: dict[str, Any] = {}
        while True:
            start = self.row_start()
            if start is None or start[0] < n:
                break
            text = start[1]
            end = self.key_end(text) if start[0] == n else None
            if end is None:
                raise self.fail("expected a 'key: value' entry of the mapping here")
            key = self.key(text[:end].rstrip(" \t"))
            if key in out:
                raise self.fail(f"duplicate key {key[:80]!r}")
            out[key] = self.after_indicator(n, n + end + 1, entry=False)
        self.depth -= 1
        return out

    def after_indicator(self, n: int, col: int, *, entry: bool) -> Any:
        """The value after a ``key:`` or (``entry``) a ``-`` that ends at column ``col`` of
        the current row, in a collection at indentation ``n``."""
        row = self.rows[self.r]
        rest = row[col:]
        stripped = rest.lstrip(" \t")
        self.c = len(row) - len(stripped)
        if not stripped or stripped[0] == "#":  # the value is on the next rows, or null
            self.r += 1
            start = self.row_start()
            if start is not None and (start[0] > n or (
                    not entry and start[0] == n and _is_entry(start[1]))):
                return self.node(n)
            return None
        if entry and (_is_entry(stripped) or self.key_end(stripped) is not None):
            if "\t" in rest[:self.c - col]:
                raise self.fail("a tab is not allowed as indentation")
            self.rows[self.r] = " " * self.c + stripped  # the entry's content, in place
            return self.node(n)
        if not entry and _is_entry(stripped):
            raise self.fail("a block sequence cannot start on its key's line")
        return self.inline(n)

    def inline(self, parent: int) -> Any:
        """A flow node or block scalar at the cursor; then the rest of its last row must be
        blank or a comment."""
        if self.at(self.c) in ("|", ">"):
            return self.block_scalar(parent)
        value = self.flow_node(parent, flow=False)
        rest = self.rows[self.r][self.c:]
        tail = rest.lstrip(" \t")
        if tail and (tail[0] != "#" or len(tail) == len(rest)):
            if tail[0] == ":":
                raise self.fail("a mapping value is not allowed here (a key is a "
                                "single-line string)")
            raise self.fail(f"unexpected {tail[:20]!r} after a value")
        self.r += 1
        self.c = 0
        return value

    def key(self, text: str) -> str:
        if text[:1] in ("'", '"'):  # closed on this row (key_end checked)
            one = _Parser([text])
            try:
                return one.quoted(-1)
            except FrontmatterError as exc:
                message = str(exc).split(": ", 1)[1]
                raise self.fail(message) from None
        value = _resolve(text, self.r + 2)
        if type(value) is not str:
            raise self.fail(f"key {text[:80]!r} is not a string")
        return value

    def key_end(self, text: str) -> int | None:
        """Where the ``:`` of a ``key: value`` entry is in ``text`` (a row from its
        indentation), or None when the row is not such an entry."""
        ch = text[:1]
        if not ch:
            return None
        if ch in ("'", '"'):
            end = _quoted_end(text)
            if end is None:
                return None
            rest = text[end:].lstrip(" \t")
            i = len(text) - len(rest)
            return i if rest[:1] == ":" and rest[1:2] in ("", " ", "\t") else None
        if ch == "?" and text[1:2] in ("", " ", "\t"):
            raise self.fail("complex keys ('? ') are not supported")
        if ch in _NOT_PLAIN_START or (ch in "-:" and text[1:2] in ("", " ", "\t")):
            return None
        comment = _COMMENT.search(text)
        found = _VALUE.search(text, 0, len(text) if comment is None else comment.start())
        return None if found is None else found.start()

    def block_scalar(self, parent: int) -> str:
        header = self.rows[self.r][self.c:]
        m = _HEADER.match(header)
        if m is None or (m.group(2) and m.group(4)):
            raise self.fail(f"bad block scalar header {header[:20]!r}")
        folded = m.group(1) == ">"
        chomp = m.group(2) or m.group(4)
        self.r += 1
        rows = self.rows
        base = max(parent + 1, 1)
        if m.group(3):
            indent = base + int(m.group(3)) - 1
        else:  # the first non-empty row's indentation
            i, longest = self.r, 0
            while i < len(rows) and not rows[i].strip(" "):
                longest = max(longest, len(rows[i]))
                i += 1
            if i < len(rows) and _indent(rows[i]) >= base:
                indent = _indent(rows[i])
                if longest > indent:
                    raise self.fail("a leading blank line is indented more than the text",
                                    i - 1)
            else:
                indent = max(base, longest)
        chunks: list[str] = []
        breaks: list[str] = []
        line_break = ""
        prev_plain = False
        while self.r < len(rows):
            text = rows[self.r]
            if len(text) <= indent and not text.strip(" "):
                breaks.append("\n")
                self.r += 1
                continue
            if _indent(text) < indent:
                break
            content = text[indent:]
            plain_line = content[:1] not in (" ", "\t")
            if line_break:  # between two rows: folded, or kept
                if not (folded and prev_plain and plain_line):
                    chunks.append(line_break)
                elif not breaks:
                    chunks.append(" ")
            chunks.extend(breaks)
            breaks = []
            chunks.append(content)
            line_break = "\n"
            prev_plain = plain_line
            self.r += 1
        if chomp != "-":
            chunks.append(line_break)
        if chomp == "+":
            chunks.extend(breaks)
        self.c = 0
        return "".join(chunks)

    # -- flow nodes -----------------------------------------------------------------------

    def next_row(self, parent: int, what: str) -> bool:
        """Move to the next row of a node over several rows: True when there is one and it
        is blank or indented more than ``parent`` (inside a flow collection: any row)."""
        self.r += 1
        self.c = 0
        if self.r >= len(self.rows):
            return False
        row = self.rows[self.r]
        # a flow collection may go on at any indentation (its brackets delimit it: a
        # closing ``]`` under its key is common, and PyYAML reads it); a scalar may not
        if not self.flows and row.strip(" \t") and _indent(row) <= parent:
            return False
        if row[:3] in ("---", "...") and row[3:4] in ("", " ", "\t"):
            raise self.fail(f"a document marker inside {what}")
        return True

    def flow_node(self, parent: int, *, flow: bool) -> Any:
        ch = self.at(self.c)
        after = self.at(self.c + 1)
        if ch in ("&", "*", "!"):
            raise self.fail("anchors, aliases and tags are not supported")
        if ch in ("[", "{"):
            return self.flow_collection(parent)
        if ch in ("'", '"'):
            return self.quoted(parent)
        if not ch or ch in _NOT_PLAIN_START or (ch in "-?:" and (
                after in ("", " ", "\t") or (flow and after in _FLOW_INDICATORS))):
            raise self.fail(f"{ch!r} cannot start a value")
        line = self.r + 2
        return _resolve(self.plain(parent, flow=flow), line)

    def skip_space(self, parent: int, what: str) -> None:
        """Skip whitespace, comments and row ends inside a flow collection."""
        while True:
            row = self.rows[self.r]
            while self.c < len(row) and row[self.c] in " \t":
                self.c += 1
            if row[self.c:self.c + 1] == "#" and (self.c == 0 or row[self.c - 1] in " \t"):
                self.c = len(row)
            if self.c < len(row):
                return
            if not self.next_row(parent, f"a {what}"):  # only at the end
                raise self.fail(f"unterminated {what}", self.r - 1)

    def flow_collection(self, parent: int) -> Any:
        self.enter()
        opening = self.at(self.c)
        closing = "]" if opening == "[" else "}"
        what = "flow sequence" if opening == "[" else "flow mapping"
        self.c += 1
        self.flows += 1
        items: list[Any] = []
        mapping: dict[str, Any] = {}
        while True:
            self.skip_space(parent, what)
            ch = self.at(self.c)
            if ch == closing:
                self.c += 1
                break
            if ch in (",", "]", "}"):
                raise self.fail(f"unexpected {ch!r} in a {what}")
            if ch == "?" and self.at(self.c + 1) in ("", " ", "\t"):
                raise self.fail("complex keys ('? ') are not supported")
            key_row = self.r
            json_like = ch in ("'", '"', "[", "{")
            key = self.flow_node(parent, flow=True)
            self.skip_space(parent, what)
            value: Any = None
            pair = self.at(self.c) == ":" and (json_like or self.at(self.c + 1) in (
                "", " ", "\t", ",", "]", "}"))
            if pair:
                if self.r != key_row:
                    raise self.fail("a key and its ':' must be on one line")
                self.c += 1
                self.skip_space(parent, what)
                if self.at(self.c) not in (",", "]", "}"):
                    value = self.flow_node(parent, flow=True)
                    self.skip_space(parent, what)
            if pair or opening == "{":
                if type(key) is not str:
                    raise self.fail("a key must be a string")
                if opening == "[":
                    items.append({key: value})
                elif key in mapping:
                    raise self.fail(f"duplicate key {key[:80]!r}")
                else:
                    mapping[key] = value
            else:
                items.append(key)
            ch = self.at(self.c)
            if ch == ",":
                self.c += 1
            elif ch != closing:
                raise self.fail(f"expected ',' or {closing!r} in a {what}")
        self.depth -= 1
        self.flows -= 1
        return items if opening == "[" else mapping

    def plain(self, parent: int, *, flow: bool) -> str:
        """A plain scalar from the cursor.  It ends at ``: ``, `` #``, a flow indicator (in
        a flow), or before a row that does not go on with it (not indented more than
        ``parent``, a comment, an indicator); its rows are folded (one row end a space,
        each blank row a line feed)."""
        parts: list[str] = []
        newlines = 0
        while True:
            row = self.rows[self.r]
            start = i = self.c
            while i < len(row):
                ch = row[i]
                if ch == ":" and (i + 1 == len(row) or row[i + 1] in " \t" or (
                        flow and row[i + 1] in _FLOW_INDICATORS)):
                    break
                if ch == "#" and i > start and row[i - 1] in " \t":
                    break
                if flow and ch in _FLOW_INDICATORS:
                    break
                i += 1
            piece = row[start:i].rstrip(" \t")
            if parts:
                parts.append("\n" * newlines if newlines else " ")
            parts.append(piece)
            self.c = start + len(piece)
            if i < len(row):
                return "".join(parts)
            saved = self.r, self.c  # the row is used up: does the scalar go on?
            newlines = 0
            while True:
                if not self.next_row(parent, "a plain scalar"):
                    self.r, self.c = saved
                    return "".join(parts)
                stripped = self.rows[self.r].lstrip(" \t")
                if stripped:
                    break
                newlines += 1
            if stripped[0] == "#" or (stripped[0] == ":" and (
                    stripped[1:2] in ("", " ", "\t")
                    or (flow and stripped[1:2] in _FLOW_INDICATORS))) or (
                    flow and stripped[0] in _FLOW_INDICATORS):
                self.r, self.c = saved
                return "".join(parts)
            self.c = len(self.rows[self.r]) - len(stripped)

    def quoted(self, parent: int) -> str:
        quote = self.at(self.c)
        self.c += 1
        out: list[str] = []
        while True:
            row = self.rows[self.r]
            pending = ""  # literal whitespace: kept inside a row, dropped at its end
            joined = False
            while self.c < len(row):
                ch = row[self.c]
                if ch == quote:
                    if quote == "'" and row[self.c + 1:self.c + 2] == "'":
                        out.append(pending + "'")
                        pending = ""
                        self.c += 2
                        continue
                    self.c += 1
                    out.append(pending)
                    return "".join(out)
                if quote == '"' and ch == "\\":
                    out.append(pending)
                    pending = ""
                    if self.c + 1 == len(row):  # an escaped row end: joined, no space
                        joined = True
                        break
                    out.append(self.escape(row))
                    continue
                if ch in " \t":
                    pending += ch
                else:
                    out.append(pending + ch)
                    pending = ""
                self.c += 1
            newlines = 0
            while True:  # a row end inside the scalar: folded
                if not self.next_row(parent, "a quoted scalar"):
                    raise self.fail("unterminated quoted scalar", self.r - 1)
                nxt = self.rows[self.r]
                stripped = nxt.lstrip(" \t")
                self.c = len(nxt) - len(stripped)
                if stripped:
                    break
                newlines += 1
            out.append("\n" * newlines if newlines or joined else " ")

    def escape(self, row: str) -> str:
        code = row[self.c + 1]
        if code in _ESCAPES:
            self.c += 2
            return _ESCAPES[code]
        width = _HEX_ESCAPES.get(code, 0)
        digits = row[self.c + 2:self.c + 2 + width]
        if not width or len(digits) != width or not all(d in _HEX_DIGITS for d in digits):
            raise self.fail(f"bad escape {row[self.c:self.c + 2 + width]!r}")
        value = int(digits, 16)
        if value > 0x10FFFF:
            raise self.fail(f"escape \\{code}{digits} is past Unicode")
        self.c += 2 + width
        return chr(value)


def _is_entry(text: str) -> bool:
    return text[:1] == "-" and text[1:2] in ("", " ", "\t")


def _quoted_end(text: str) -> int | None:
    """The index after the closing quote of the quoted scalar ``text`` starts with, when it
    closes on this row."""
    quote = text[0]
    i = 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and text[i + 1:i + 2] == "'":
                i += 2
                continue
            return i + 1
        i += 1
    return None
