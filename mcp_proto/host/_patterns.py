"""Regular expressions in JSON Schemas (``pattern``, ``patternProperties``): which ones may
backtrack for ever in Python's ``re`` (what ``jsonschema`` runs), and where a schema holds
them (pure).  :mod:`._validate` applies each ``pattern`` by its :func:`judge_pattern` verdict.

**The regular-expression heuristic.**  The pattern is parsed (Python ``re`` syntax, which is
what ``jsonschema`` runs) into characters, groups, alternations and repeats; character sets
are compared on a probe alphabet (ASCII, every character the pattern spells, and a few
non-ASCII letters, digits and spaces), so "overlap" means "some probe is in both".

- *Exponential* (left out: :data:`LEFT_OUT`): a repeat that can run twice or more (``*``,
  ``+``, ``{n,}``, ``{n,m}`` with m >= 2) whose body is ambiguous: the body holds a variable repeat
  (``+ * ? {n,m}``) whose characters overlap what may follow it inside the body (what follows
  the body's end is the body's start: the next round), as in ``(a+)+``, ``(\\w+\\s?)*``,
  ``(a*)*``, ``(\\d+,?)+``; or it holds an alternation two of whose branches may begin with a
  common character (an empty branch begins with what follows it), as in ``(a|a)*``,
  ``(a|ab)+``, ``(\\w|\\d)+``.  ``([a-z]+,)*``, ``(-[a-z0-9]+)*`` and ``(\\d{1,3}\\.){3}`` are
  accepted: a character the inner repeat cannot take ends each round.  Backreferences count as
  a repeat of any character.  The test is conservative: it refuses some safe patterns (such as
  ``(ab|ac)*``), never the listed shapes.
- *Polynomial* (applied to strings up to a length): the degree is the longest chain of
  variable repeats that may trade characters (each may end with what the next one
  begins with; only optional parts, or characters both may take, between them) followed by
  something that can fail (a character, ``$``, a lookaround); an unanchored pattern
  (``re.search`` tries every start) begins with an implicit repeat of any character.
  ``^[a-z]+[a-z0-9]*$`` has degree 2, ``[a-z]+[a-z0-9]*$`` degree 3.  A pattern of degree d
  is applied to strings of at most ``REGEX_WORK ** (1 / d)`` characters (:data:`REGEX_WORK`),
  and left out past :data:`MAX_REGEX_DEGREE`.  Longer strings are not checked against it
  (said once, at compile).
- A pattern Python cannot compile, longer than :data:`MAX_PATTERN_CHARS`, nested deeper than
  :data:`MAX_PATTERN_NESTING` groups or using verbose mode is left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

__all__ = [
    "LEFT_OUT",
    "MAX_PATTERN_CHARS",
    "MAX_PATTERN_NESTING",
    "MAX_REGEX_DEGREE",
    "REGEX_WORK",
    "PatternVerdict",
    "judge_pattern",
    "schema_patterns",
    "uses_keyword",
]

#: A pattern longer than this is not analysed, so not applied (real ones are under 200).
MAX_PATTERN_CHARS = 1000
#: Groups nested in one pattern, the parser's recursion bound.
MAX_PATTERN_NESTING = 32
#: Backtracking steps a polynomial pattern may cost on one string (about 20 ms in ``re``):
#: a pattern of degree d applies to strings of at most ``REGEX_WORK ** (1/d)`` characters.
REGEX_WORK = 4_000_000
#: Patterns of a higher degree are left out (degree 4 already stops at 44 characters).
MAX_REGEX_DEGREE = 4
#: :attr:`PatternVerdict.limit` of a pattern left out: shorter than any string, so it never runs.
LEFT_OUT: Final = -1


def _pointer(parts: Sequence[str]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# -- parsing -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Chars:
    """One character out of a set (``mask``: bits over the probe alphabet)."""

    mask: int


@dataclass(frozen=True, slots=True)
class _Zero:
    """A zero-width assertion: ``^``/``\\A`` (``start``), ``$``/``\\Z`` (``end``), a word
    boundary or a lookaround (``other``, its content in ``inner``)."""

    kind: str
    inner: _Alt | None = None


@dataclass(frozen=True, slots=True)
class _Alt:
    """A group: its alternatives, each a sequence."""

    options: tuple[tuple[_Node, ...], ...]


@dataclass(frozen=True, slots=True)
class _Rep:
    """``body`` repeated from ``low`` to ``high`` times (None: no bound)."""

    body: _Node
    low: int
    high: int | None

    @property
    def variable(self) -> bool:
        return self.high != self.low

    @property
    def loops(self) -> bool:
        return self.high is None or self.high >= 2


_Node = _Chars | _Zero | _Alt | _Rep

#: Non-ASCII probes: letters (Latin, Greek, Cyrillic, CJK, a dotted capital), a non-ASCII
#: digit, spaces (no-break, line separator), a combining mark and an astral character.
_UNICODE_PROBES: Final = "éßΩж中İ٣\u00a0\u2028\u0301\U0001f600"
_ESCAPED_CHAR: Final = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))")
_BRACES: Final = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS: Final = re.compile(r"\(\?([aiLmsux]*)(?:-[imsx]+)?[:)]")
_CLASS_ESCAPES: Final = frozenset("dDwWsS")
_ONE_ESCAPE: Final = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|"
                                r"N\{[^}]*\}|0[0-7]{0,2}|.)", re.DOTALL)


class _Unanalysable(Exception):
    """The pattern is not analysed (its reason in ``args[0]``)."""


class _Masks:
    """Character sets as bit masks over the probe alphabet of one pattern."""

    def __init__(self, pattern: str, flags: int) -> None:
        decoded = [chr(int(next(g for g in m.groups() if g), 16))
                   for m in _ESCAPED_CHAR.finditer(pattern)]
        probes = list(dict.fromkeys([*map(chr, range(128)), *pattern, *decoded,
                                     *_UNICODE_PROBES]))
        self.probes = probes
        self.index = {ch: i for i, ch in enumerate(probes)}
        self.flags = flags
        self.all = (1 << len(probes)) - 1
        self.memo: dict[str, int] = {}

    def literal(self, ch: str) -> int:
        if self.flags & re.IGNORECASE or ch not in self.index:
            return self.source(re.escape(ch))
        return 1 << self.index[ch]

    def source(self, src: str) -> int:
        """The mask of a one-character regex (a class, an escape); every probe when it does not
        compile alone (conservative: it then overlaps everything)."""
        mask = self.memo.get(src)
        if mask is None:
            try:
                rx = re.compile(src, self.flags | re.DOTALL)
            except re.error:
                mask = self.all
            else:
                mask = sum(1 << i for i, ch in enumerate(self.probes) if rx.fullmatch(ch))
            self.memo[src] = mask
        return mask


class _Parser:
    """Python ``re`` syntax (the pattern already compiled, so the parser may be lenient)."""

    def __init__(self, text: str, masks: _Masks) -> None:
        self.s = text
        self.i = 0
        self.masks = masks
        self.depth = 0
        self.multiline = bool(masks.flags & re.MULTILINE)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def parse(self) -> _Alt:
        alt = self.alt()
        if self.i < len(self.s):  # a stray ")": cannot happen after re.compile
            raise _Unanalysable("the pattern could not be parsed")
        return alt

    def alt(self) -> _Alt:
        options = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            options.append(self.seq())
        return _Alt(tuple(options))

    def seq(self) -> tuple[_Node, ...]:
        items: list[_Node] = []
        while self.i < len(self.s) and self.s[self.i] not in "|)":
            atom = self.atom()
            if atom is not None:
                items.append(self.quantified(atom))
        return tuple(items)

    def quantified(self, atom: _Node) -> _Node:
        c = self.peek()
        bounds: tuple[int, int | None] | None = None
        if c in "*+?" and c:
            bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            self.i += 1
        elif c == "{":
            m = _BRACES.match(self.s, self.i)
            if m and (m[1] or m[2]):
                low = int(m[1] or 0)
                high = int(m[3]) if m[3] else (None if m[2] else low)
                bounds = (low, high)
                self.i = m.end()
        if bounds is None:
            return atom
        if self.peek() in ("?", "+") and self.peek():  # lazy or possessive: same analysis
            self.i += 1
        return _Rep(atom, *bounds)

    def atom(self) -> _Node | None:
        c = self.s[self.i]
        if c == "(":
            return self.group()
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.escape()
        self.i += 1
        if c == ".":
            return _Chars(self.masks.all)
        if c == "^":
            return _Zero("other" if self.multiline else "start")
        if c == "$":
            return _Zero("end")
        return _Chars(self.masks.literal(c))

    def group(self) -> _Node | None:
        self.depth += 1
        if self.depth > MAX_PATTERN_NESTING:
            raise _Unanalysable(f"it nests more than {MAX_PATTERN_NESTING} groups")
        self.i += 1
        node = self.alt() if self.peek() != "?" else self.extension()
        if self.peek() == ")":
            self.i += 1
        self.depth -= 1
        return node

    def extension(self) -> _Node | None:
        """``(?...``: after ``(``, at ``?``; leaves the closing ``)`` to :meth:`group`."""
        rest = self.s[self.i:self.i + 4]
        if rest.startswith(("?:", "?>")):
            self.i += 2
            return self.alt()
        if rest.startswith("?P<"):
            self.i = self.s.index(">", self.i) + 1
            return self.alt()
        if rest.startswith("?P="):
            self.i = self.s.index(")", self.i)
            return _Rep(_Chars(self.masks.all), 0, None)  # a backreference: any text
        if rest.startswith("?#"):
            self.i = self.s.index(")", self.i)
            return None
        if rest.startswith(("?=", "?!", "?<=", "?<!")):
            self.i += 3 if rest.startswith("?<") else 2
            return _Zero("other", self.alt())
        if rest.startswith("?("):
            self.i = self.s.index(")", self.i) + 1
            return self.alt()
        m = _FLAGS.match(self.s, self.i - 1)
        if m is None:
            raise _Unanalysable("an unknown group construct")
        self.i = m.end() - 1
        if self.s[self.i] == ":":
            self.i += 1
            return self.alt()
        return None  # global flags, read before parsing

    def char_class(self) -> _Node:
        start = self.i
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "]":
                self.i += 1
                break
            else:
                self.i += 1
        return _Chars(self.masks.source(self.s[start:self.i]))

    def escape(self) -> _Node:
        c = self.peek(1)
        if c in _CLASS_ESCAPES and c:
            self.i += 2
            return _Chars(self.masks.source("\\" + c))
        if c in ("A", "b", "B", "Z") and c:
            self.i += 2
            return _Zero({"A": "start", "Z": "end"}.get(c, "other"))
        if c.isdigit() and c != "0":
            self.i += 2
            if self.peek().isdigit():
                self.i += 1
            return _Rep(_Chars(self.masks.all), 0, None)  # a backreference: any text
        m = _ONE_ESCAPE.match(self.s, self.i)
        end = m.end() if m else self.i + 2
        src = self.s[self.i:end]
        self.i = end
        return _Chars(self.masks.source(src))


def _nodes(node: _Node) -> Iterator[_Node]:
    """Every node under ``node`` (``node`` first), lookaround contents included."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, _Alt):
            for option in item.options:
                stack.extend(option)
        elif isinstance(item, _Rep):
            stack.append(item.body)
        elif isinstance(item, _Zero) and item.inner is not None:
            stack.append(item.inner)


class _Fact(NamedTuple):
    """What a node may match: its ``first`` and ``last`` characters, all its ``chars``, and
    whether it may match the empty string."""

    first: int
    nullable: bool
    chars: int
    last: int


class _Facts:
    """The :class:`_Fact` of each node of one pattern, memoized by identity."""

    def __init__(self) -> None:
        self.memo: dict[int, _Fact] = {}

    def of(self, node: _Node) -> _Fact:
        key = id(node)
        got = self.memo.get(key)
        if got is None:
            got = self._compute(node)
            self.memo[key] = got
        return got

    def _compute(self, node: _Node) -> _Fact:
        if isinstance(node, _Chars):
            return _Fact(node.mask, False, node.mask, node.mask)
        if isinstance(node, _Zero):
            return _Fact(0, True, 0, 0)
        if isinstance(node, _Rep):
            body = self.of(node.body)
            return body._replace(nullable=body.nullable or node.low == 0)
        first, nullable, chars, last = 0, False, 0, 0
        for option in node.options:
            fact = self.seq(option)
            first |= fact.first
            nullable = nullable or fact.nullable
            chars |= fact.chars
            last |= fact.last
        return _Fact(first, nullable, chars, last)

    def seq(self, items: Sequence[_Node]) -> _Fact:
        facts = [self.of(item) for item in items]
        first, last, chars = 0, 0, 0
        for fact in facts:
            chars |= fact.chars
            first |= fact.first
            if not fact.nullable:
                break
        for fact in reversed(facts):
            last |= fact.last
            if not fact.nullable:
                break
        return _Fact(first, all(f.nullable for f in facts), chars, last)


def _ambiguous(node: _Node, after: int, facts: _Facts) -> str | None:
    """Why the body of a loop is ambiguous (see the module docstring), or None.  ``after``:
    the characters that may follow ``node`` inside the loop's body."""
    if isinstance(node, _Alt):
        leads = []
        for option in node.options:
            why = _ambiguous_seq(option, after, facts)
            if why:
                return why
            fact = facts.seq(option)
            leads.append(fact.first | (after if fact.nullable else 0))
        for i, lead in enumerate(leads):
            if any(lead & other for other in leads[i + 1:]):
                return "two alternatives may begin alike under a repeat, as in (a|a)*"
        return None
    if isinstance(node, _Rep):
        body = facts.of(node.body)
        if node.variable and body.chars & after:
            return "a repeat inside a repeat may take the same characters, as in (a+)+"
        inner_after = after | (body.first if node.loops else 0)
        return _ambiguous(node.body, inner_after, facts)
    return None


def _ambiguous_seq(items: Sequence[_Node], after: int, facts: _Facts) -> str | None:
    follow = after
    for item in reversed(items):
        why = _ambiguous(item, follow, facts)
        if why:
            return why
        fact = facts.of(item)
        follow = fact.first | (follow if fact.nullable else 0)
    return None


def _merge(into: dict[int, int], other: Mapping[int, int]) -> None:
    for mask, length in other.items():
        if length > into.get(mask, 0):
            into[mask] = length


class _Degree:
    """The polynomial degree of the module docstring: chains of variable repeats that trade
    characters (``chains``: the characters the chain's last repeat may end with -> the
    chain's length), counted when something that can fail comes after them."""

    def __init__(self, facts: _Facts, any_char: int) -> None:
        self.facts = facts
        self.any = any_char
        self.best = 1

    def realize(self, chains: Mapping[int, int]) -> None:
        if chains:
            self.best = max(self.best, *chains.values())

    def node(self, node: _Node, chains: dict[int, int]) -> dict[int, int]:
        if isinstance(node, _Chars):
            self.realize(chains)
            out: dict[int, int] = {}
            _merge(out, {mask & node.mask: n for mask, n in chains.items() if mask & node.mask})
            return out
        if isinstance(node, _Zero):
            if node.inner is not None:
                self.node(node.inner, {})
            if node.kind == "start":
                return {}  # only the first position: no chain goes through it
            self.realize(chains)  # $, \b, a lookaround: each can fail
            return chains
        if isinstance(node, _Alt):
            out = {}
            for option in node.options:
                current = dict(chains)
                for item in option:
                    current = self.node(item, current)
                _merge(out, current)
            return out
        if not node.variable:  # {n}: the body n times (twice shows every chain through it)
            current = chains
            for _ in range(min(node.low, 2)):
                current = self.node(node.body, current)
            return current
        body = self.facts.of(node.body)
        if node.low >= 1:
            self.realize(chains)  # it can fail on its first character
        self.node(node.body, dict(chains))  # chains inside the body
        # it trades characters with a chain whose last repeat may end with what it begins with
        length = 1 + max((n for mask, n in chains.items() if mask & body.first), default=0)
        out = {body.last: length}
        if node.low == 0:
            _merge(out, chains)
        return out


@dataclass(frozen=True, slots=True, kw_only=False)
class PatternVerdict:
    """How one pattern is applied: ``limit`` None (always), :data:`LEFT_OUT` (never) or the
    longest string it is applied to; ``reason`` (a phrase for a log: "left out: ...",
    "applied only to ...") says why it is not always applied."""

    limit: int | None
    reason: str = ""


_ALWAYS: Final = PatternVerdict(None)


def judge_pattern(pattern: str) -> PatternVerdict:
    """The verdict of the heuristic in the module docstring for ``pattern``; never raises."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return PatternVerdict(LEFT_OUT, f"left out: longer than {MAX_PATTERN_CHARS:,} characters")
    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        detail = _clip(str(exc), 80)
        return PatternVerdict(LEFT_OUT, f"left out: Python cannot compile it ({detail})")
    flags = compiled.flags
    if flags & re.VERBOSE or any("x" in m[1] for m in _FLAGS.finditer(pattern)):
        return PatternVerdict(LEFT_OUT, "left out: verbose mode is not analysed")
    if any("i" in m[1] for m in _FLAGS.finditer(pattern)):
        flags |= re.IGNORECASE  # a scoped (?i:...) widens every set: conservative
    try:
        masks = _Masks(pattern, flags & (re.IGNORECASE | re.MULTILINE | re.ASCII | re.UNICODE))
        tree = _Parser(pattern, masks).parse()
    except _Unanalysable as exc:
        return PatternVerdict(LEFT_OUT, f"left out: {exc.args[0]}")
    except (ValueError, IndexError):
        return PatternVerdict(LEFT_OUT, "left out: the pattern could not be parsed")
    facts = _Facts()
    for node in _nodes(tree):
        if isinstance(node, _Rep) and node.loops:
            why = _ambiguous(node.body, facts.of(node.body).first, facts)
            if why:
                return PatternVerdict(LEFT_OUT, f"left out: it may backtrack exponentially ({why})")
    degree = _Degree(facts, masks.all)
    degree.node(tree, {masks.all: 1})  # re.search: an implicit repeat of any character first
    d = degree.best
    if d <= 1:
        return _ALWAYS
    if d > MAX_REGEX_DEGREE:
        return PatternVerdict(LEFT_OUT, f"left out: it may backtrack polynomially (degree {d})")
    limit = math.floor(REGEX_WORK ** (1 / d))
    return PatternVerdict(limit, f"applied only to strings of at most {limit:,} characters (it may "
                           f"backtrack polynomially, degree {d})")


# -- the schema walk: patterns and their places ------------------------------------------------

#: Keywords whose value maps names to schemas.
_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions",
                                 "dependentSchemas", "dependencies"})
#: Keywords whose value is data, never a schema.
_DATA: Final = frozenset({"enum", "const", "default", "examples", "example"})


def schema_patterns(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, bool]]:
    """(pointer, pattern, is a ``patternProperties`` key) for every pattern of ``schema``, the
    walk knowing which keywords hold schemas (a property *named* ``pattern`` is not one)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*path, str(i))) for i, item in enumerate(node))
            continue
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            if key in _DATA:
                continue
            here = (*path, str(key))
            if key == "pattern" and isinstance(value, str):
                yield _pointer(here), value, False
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                if key == "patternProperties":
                    for name in value:
                        yield _pointer((*here, str(name))), str(name), True
                stack.extend((sub, (*here, str(name))) for name, sub in value.items())
            elif isinstance(value, (Mapping, list)):
                stack.append((value, here))


def uses_keyword(schema: Mapping[str, Any], keyword: str) -> bool:
    """Whether ``keyword`` appears as a key anywhere in ``schema`` (a superset: names too)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if keyword in node:
                return True
            stack.extend(v for v in node.values() if isinstance(v, (Mapping, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (Mapping, list)))
    return False


