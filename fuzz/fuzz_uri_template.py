"""Fuzz harness for the RFC 6570 template matching of :mod:`mcp_proto.host._catalog`
(:func:`template_pattern` and :meth:`HostCatalog.resource_server`, which routes a read of a
URI nobody listed to the one server whose template matches it).

``check(data)`` reads a template and a URI two ways, chosen by the first byte:

- **raw** (a first byte < 0x80): the data as UTF-8 (U+FFFD for invalid bytes) is
  ``template``, a newline, ``uri``;
- **structured** (a first byte >= 0x80): the template is drawn from pieces (literals with
  the characters the operators care about, expressions of every operator ``+ # . / ; ? &``,
  variable lists with ``:n`` and ``*`` modifiers, empty and broken braces), the URI is the
  template expanded with drawn simple values, then perhaps mutated, or an adversarial run
  (the literals up to an expression, then one unit repeated) up to 10 KB.

Properties (any violation raises AssertionError):

- ``template_pattern`` never raises; ``resource_server`` raises only ``UnknownResource``;
- the pattern's full match agrees with a reference matcher written from the module's rules
  (literal parts exactly; ``{var}`` any run without ``/ ? #``; ``{+var}`` without ``#``;
  ``{#var}`` nothing or ``#`` and anything; ``{.var}``, ``{/var}``, ``{;var}`` repeated
  ``.``/``/``/``;`` segments; ``{?var}``, ``{&var}`` nothing or ``?``/``&`` and no ``#``),
  which runs in O(len(uri) * expressions);
- a URI made by expanding the template (RFC 6570 levels 1 to 4) with simple values
  (unreserved characters only) matches it;
- routing: a URI one server listed goes to it; several listing it, or several templates
  matching, raise ``UnknownResource`` naming exactly those servers; none: no servers;
- **bounded time**: the built pattern cannot backtrack super-linearly.  Checked on the
  regex itself, not by a clock: the number of ways the pattern can consume a prefix of
  short probe inputs (the template's literals up to an expression, then a unit repeated 6
  and 12 times) is counted from the parsed regex; for a pattern a backtracking engine runs
  in linear time that number stays bounded (1 for an unambiguous pattern), for one whose
  failing match is polynomial or exponential it grows with the input.  The regex is run
  only on patterns that pass (on long adversarial inputs too, up to 10 KB) or on short
  URIs, so the check itself never hangs.

Run: ``python fuzz/fuzz_uri_template.py /tmp/fz/uri_template fuzz/corpus/uri_template
-dict=fuzz/uri_template.dict``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:  # the regex parser the re module uses (re._parser from 3.11)
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    from re._constants import MAXREPEAT  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    from sre_constants import MAXREPEAT  # type: ignore[no-redef]

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._types import Resource, ResourceTemplate
from mcp_proto.host import UnknownResource
from mcp_proto.host._catalog import HostCatalog, template_pattern
from mcp_proto.host._names import NamePolicy

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {
    # {.var} and {;var} become (?:\.[^/?#]*)* / (?:;[^/?#]*)*: the inner class holds the
    # segment's own lead character, so a failing match of "." * n tries 2**n splits
    "template-exponential": (AssertionError, "exponential backtracking"),
    # two expressions whose patterns share characters, with nothing between them that only
    # one can take ({a}{b}, {a}.{b}, {a}-{b}, {?a}{?b}...): a failing match tries every split,
    # O(n**k) for k such expressions
    "template-polynomial": (AssertionError, "polynomial backtracking"),
}
known_bug = bug_matcher(KNOWN_BUGS)

#: URIs up to this long are matched with the regex even when its pattern is ambiguous.
SHORT = 10
#: The adversarial URI's length (characters) for a pattern that passes the analysis.
ADVERSARIAL = 10_000
#: Probe sizes (repetitions of the unit): the count of ways must not grow between them.
PROBES = (6, 12)
#: Literals before an expression longer than this are not probed (the count is quadratic).
MAX_PREFIX = 64
#: Counts saturate here (an exponential pattern's count is 2**n).
CAP = 1 << 40

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")  # how the module reads a template
_OPERATORS = "+#./;?&"
UNRESERVED = "abcXYZ019-._~"

# -- the reference matcher (the module's rules, not its regex) -----------------------------


def tokens(template: str) -> list[tuple[str, str]]:
    """``("lit", text)`` and ``("op", operator)`` in order (``"op", ""`` for ``{var}``)."""
    out: list[tuple[str, str]] = []
    end = 0
    for m in _EXPRESSION.finditer(template):
        out.append(("lit", template[end:m.start()]))
        out.append(("op", m.group(1)))
        end = m.end()
    out.append(("lit", template[end:]))
    return [t for t in out if t != ("lit", "")]


def model_match(template: str, uri: str) -> bool:
    """Whether ``uri`` is an expansion of ``template`` by the module's lenient rules."""
    n = len(uri)
    reach = [False] * (n + 1)
    reach[0] = True
    for kind, text in tokens(template):
        if kind == "lit":
            new = [False] * (n + 1)
            size = len(text)
            for p in range(n + 1 - size):
                if reach[p] and uri.startswith(text, p):
                    new[p + size] = True
            reach = new
        elif text == "":
            reach = _sweep(uri, reach, None, "/?#", repeat=False)
        elif text == "+":
            reach = _sweep(uri, reach, None, "#", repeat=False)
        elif text == "#":
            reach = _sweep(uri, reach, "#", "", repeat=False)
        elif text in "./;":
            reach = _sweep(uri, reach, text, "/?#", repeat=True)
        else:  # ? &
            reach = _sweep(uri, reach, text, "#", repeat=False)
        if not any(reach):
            return False
    return reach[n]


def _sweep(uri: str, reach: list[bool], lead: str | None, stops: str, *,
           repeat: bool) -> list[bool]:
    """Positions reachable from ``reach`` by ``(lead [^stops]*)`` zero or once (``repeat``:
    any number of times), or ``[^stops]*`` when ``lead`` is None."""
    n = len(uri)
    out = list(reach)
    inside = False  # within a segment (or a run) that started at a reachable position
    for q in range(n):
        c = uri[q]
        if lead is None:
            if reach[q]:
                inside = True
            if inside and c not in stops:
                out[q + 1] = True
            else:
                inside = False
            continue
        if c == lead and (reach[q] or (repeat and out[q])):
            inside = True  # a segment starts here (a repeat may start one where one ended)
        elif inside and c not in stops:
            pass
        else:
            inside = False
        if inside:
            out[q + 1] = True
    return out


# -- RFC 6570 expansion with simple values ---------------------------------------------------

_FIRST = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}
_SEP = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}
_NAMED = frozenset(";?&")
_VARSPEC = re.compile(r"([^:*]*)(?::(\d{1,4})|(\*))?$")
#: RFC 6570's varname (its characters: a named expansion writes the name into the URI).
_VARNAME = re.compile(r"[A-Za-z0-9_.%]+")


def expand(template: str, values: dict[str, str]) -> str:
    """``template`` expanded (RFC 6570 section 3.2) with string ``values`` of unreserved
    characters (so no encoding); undefined variables, and those whose name is not an RFC
    6570 varname, are left out."""
    out: list[str] = []
    end = 0
    for m in _EXPRESSION.finditer(template):
        out.append(template[end:m.start()])
        end = m.end()
        op, body = m.group(1), m.group(2)
        parts = []
        for spec in body.split(","):
            vm = _VARSPEC.match(spec)
            name, prefix = (vm.group(1), vm.group(2)) if vm else (spec, None)
            if name not in values or not _VARNAME.fullmatch(name):
                continue
            value = values[name]
            if prefix is not None:
                value = value[:int(prefix)]
            if op in _NAMED:
                parts.append(name if op == ";" and not value else f"{name}={value}")
            else:
                parts.append(value)
        if parts:
            out.append(_FIRST[op] + _SEP[op].join(parts))
    out.append(template[end:])
    return "".join(out)


# -- counting the ways the regex can go: does it backtrack super-linearly? ------------------


class _Unsupported(Exception):
    pass


def _char_test(op: Any, arg: Any) -> Any:
    name = str(op)
    if name == "LITERAL":
        return lambda c: ord(c) == arg
    if name == "NOT_LITERAL":
        return lambda c: ord(c) != arg
    if name == "ANY":
        return lambda c: True  # DOTALL
    if name == "IN":
        negate = False
        tests = []
        for sub_op, sub_arg in arg:
            sub = str(sub_op)
            if sub == "NEGATE":
                negate = True
            elif sub == "LITERAL":
                tests.append(lambda c, a=sub_arg: ord(c) == a)
            elif sub == "RANGE":
                tests.append(lambda c, a=sub_arg: a[0] <= ord(c) <= a[1])
            else:
                raise _Unsupported(sub)
        return lambda c: any(t(c) for t in tests) != negate
    return None


def _ways_seq(seq: Any, text: str, start: int, peak: list[int]) -> dict[int, int]:
    cur = {start: 1}
    for op, arg in seq:
        nxt: dict[int, int] = {}
        for p, count in cur.items():
            for q, w in _ways_item(op, arg, text, p, peak).items():
                nxt[q] = min(CAP, nxt.get(q, 0) + count * w)
        cur = nxt
        if cur:
            peak[0] = max(peak[0], *cur.values())
        else:
            break
    return cur


def _ways_item(op: Any, arg: Any, text: str, p: int, peak: list[int]) -> dict[int, int]:
    test = _char_test(op, arg)
    if test is not None:
        return {p + 1: 1} if p < len(text) and test(text[p]) else {}
    name = str(op)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, high, body = arg
        total: dict[int, int] = {}
        level = {p: 1}
        k = 0
        while level and (high == MAXREPEAT or k <= high):
            if k >= low:
                for q, w in level.items():
                    total[q] = min(CAP, total.get(q, 0) + w)
            nxt: dict[int, int] = {}
            for r, count in level.items():
                for q, w in _ways_seq(body, text, r, peak).items():
                    if q > r:  # an iteration that consumes nothing ends the loop
                        nxt[q] = min(CAP, nxt.get(q, 0) + count * w)
            level = nxt
            k += 1
        return total
    if name == "SUBPATTERN":
        return _ways_seq(arg[-1], text, p, peak)
    if name == "BRANCH":
        total = {}
        for alt in arg[1]:
            for q, w in _ways_seq(alt, text, p, peak).items():
                total[q] = min(CAP, total.get(q, 0) + w)
        return total
    raise _Unsupported(name)


def _peak(seq: Any, text: str) -> int:
    """The most ways the pattern (a parsed sequence) reaches one (item, position) pair while
    consuming prefixes of ``text``: what a backtracking engine retries on a failing match."""
    peak = [1]
    _ways_seq(seq, text, 0, peak)
    return peak[0]


def probes(template: str) -> list[tuple[str, str]]:
    """``(prefix, unit)`` pairs: the literals before an expression (every expression may
    expand to nothing, so the prefix reaches it), perhaps that expression's operator, and a
    unit to repeat there: a character some later piece starts with or holds, or a literal."""
    toks = tokens(template)
    units = {"a"}
    for kind, text in toks:
        if kind == "lit":
            units.update({text[:3], text[0]})
        elif text not in ("", "+"):
            units.add(text)
    ordered = sorted(units)[:10]
    out: list[tuple[str, str]] = []
    prefix = ""
    sites = 0
    for kind, text in toks:
        if kind == "lit":
            prefix += text
            continue
        sites += 1
        if sites > 6 or len(prefix) > MAX_PREFIX:
            break
        for start in dict.fromkeys((prefix, prefix + (text if text != "+" else ""))):
            out.extend((start, unit) for unit in ordered)
    return out


def backtracking(template: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """None if the pattern runs in linear time on every probe; else ``(kind, probe)``:
    ``exponential`` when one expression's own pattern is ambiguous, else ``polynomial``."""
    try:
        seq = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception as exc:
        escaped(f"re's parser on the pattern of {template!r}"[:200], exc)
    try:
        for prefix, unit in probes(template):
            low, high = (_peak(seq, prefix + unit * k) for k in PROBES)
            if high > low:
                # the pattern of one item alone: exponential if that already grows
                for op, arg in seq:
                    alone = [(op, arg)]
                    if _peak(alone, unit * PROBES[1]) > _peak(alone, unit * PROBES[0]):
                        return "exponential", prefix + unit * PROBES[1]
                return "polynomial", prefix + unit * PROBES[1]
    except _Unsupported:
        return None  # a construct template_pattern does not build: not analysed
    return None


# -- drawing a template -----------------------------------------------------------------------

LITERALS = ("file:///", "db://", "https://h.example/", "/", ".", "-", ";", "?", "&", "#",
            ",", "=", "x", "ab", "{", "}", "%20", "\u00e9", "\x00", "\n", "::", "**")
NAMES = ("a", "b", "c", "id", "path", "q", "x.y", "", "a_b", "%41")


def draw_template(c: Choices) -> str:
    out = []
    for _ in range(c.below(7)):
        if c.chance(3):
            out.append(c.pick(LITERALS))
            continue
        op = c.pick(("", "", "+", "#", ".", "/", ";", "?", "&", "=", "!"))
        specs = []
        for _ in range(1 + c.below(3)):
            spec = c.pick(NAMES)
            mod = c.below(6)
            spec += ":3" if mod == 1 else "*" if mod == 2 else ":0" if mod == 3 else ""
            specs.append(spec)
        body = op + ",".join(specs)
        shape = c.below(12)
        out.append("{" + body + ("}" if shape else "") if shape != 1 else "{{" + body + "}}")
        if c.chance(2):
            out.append(c.pick(LITERALS))
    return "".join(out)


def draw_values(c: Choices, template: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for m in _EXPRESSION.finditer(template):
        for spec in m.group(2).split(","):
            vm = _VARSPEC.match(spec)
            name = vm.group(1) if vm else spec
            if c.below(5) == 0:
                continue  # undefined
            size = c.below(8)
            values[name] = "".join(UNRESERVED[c.below(len(UNRESERVED))] for _ in range(size))
    return values


def mutate(c: Choices, uri: str) -> str:
    for _ in range(c.below(3)):
        at = c.below(len(uri) + 1)
        uri = uri[:at] + c.pick(("", "/", "?", "#", ".", "x", ";", "&")) + uri[at + 1:]
    return uri


# -- the check -----------------------------------------------------------------------------------


def _regex_match(pattern: re.Pattern[str], uri: str) -> bool:
    try:
        return pattern.fullmatch(uri) is not None
    except Exception as exc:
        escaped("pattern.fullmatch()", exc)


def check_pair(template: str, uri: str, problem: tuple[str, str] | None,
               pattern: re.Pattern[str], *, expanded: bool = False) -> None:
    want = model_match(template, uri)
    if expanded:
        assert want, f"the expansion {uri!r} does not match {template!r} (model)"[:300]
    if problem is None or len(uri) <= SHORT:
        got = _regex_match(pattern, uri)
        assert got == want, (f"template_pattern({template!r}) {'matches' if got else 'misses'}"
                             f" {uri!r}; the rules say {want}")[:400]


def check_routing(c: Choices, templates: list[str], uri: str) -> None:
    servers = ["s0", "s1", "s2"][:1 + c.below(3)]
    catalog = HostCatalog(NamePolicy())
    listed: list[str] = []
    matching: list[str] = []
    for i, server in enumerate(servers):
        mine = [t for j, t in enumerate(templates) if j % len(servers) == i]
        catalog.templates_listed(server, [ResourceTemplate(uri_template=t, name=t)
                                          for t in mine])
        resources = [Resource(uri="file:///other", name="o")]
        if c.chance(4):
            resources.append(Resource(uri=uri, name="r"))
            listed.append(server)
        catalog.resources_listed(server, resources)
        if any(model_match(t, uri) for t in mine):
            matching.append(server)
    want = listed if listed else matching
    try:
        got = catalog.resource_server(uri, servers)
    except UnknownResource as exc:
        assert len(want) != 1, f"UnknownResource for {uri!r}, {want[0]} has it"[:300]
        assert list(exc.servers) == want, f"UnknownResource names {exc.servers}, not {want}"
        assert exc.uri == uri
    except Exception as exc:
        escaped("resource_server()", exc)
    else:
        assert [got] == want, f"resource_server({uri!r}) -> {got}, expected {want}"[:300]


def check(data: bytes) -> None:
    c = Choices(data[1:])
    if data and data[0] >= 0x80:
        template = draw_template(c)
        values = draw_values(c, template)
        uri = expand(template, values)
        extra = [draw_template(c) for _ in range(c.below(3))]
    else:
        template, _, uri = data.decode("utf-8", "replace").partition("\n")
        values = {m.group(2).split(",")[0].split(":")[0].rstrip("*"): "v1"
                  for m in _EXPRESSION.finditer(template)}
        extra = []
    try:
        pattern = template_pattern(template)
    except Exception as exc:
        escaped(f"template_pattern({template!r})"[:200], exc)
    assert isinstance(pattern, re.Pattern), pattern
    problem = backtracking(template, pattern)

    expansion = expand(template, values)
    check_pair(template, expansion, problem, pattern, expanded=True)
    check_pair(template, uri, problem, pattern)
    mutated = mutate(c, uri)
    check_pair(template, mutated, problem, pattern)
    if problem is None:  # a long adversarial URI for each probe: linear, so it returns
        for prefix, unit in probes(template)[:4]:
            long = prefix + unit * (ADVERSARIAL // len(unit)) + c.pick(("", "/", "#", "\x00"))
            check_pair(template, long, problem, pattern)
    templates = [template, *extra]
    try:
        safe = all(backtracking(t, template_pattern(t)) is None for t in extra)
    except Exception as exc:
        escaped(f"template_pattern() of {extra!r}"[:200], exc)
    if (problem is None and safe) or len(mutated) <= SHORT:
        check_routing(c, templates, mutated)
    if problem is not None:
        kind, probe = problem
        raise AssertionError(f"template_pattern({template!r}) builds {pattern.pattern!r}: "
                             f"{kind} backtracking (the ways to match prefixes of "
                             f"{probe!r} grow with its length)"[:400])


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
