"""Public tool names for many servers as one, and the include/exclude filters: pure.

Rules (host-notes 4.1, 8 #2 and #3, 9.2):

- A public name is a function of the *set* of ``(server, tool)`` pairs and the policy, never of
  the order servers were declared or added in, nor of the order a server listed its tools.
- Every public name matches ``^[A-Za-z_][A-Za-z0-9_-]{0,L-1}$`` (``L`` = ``max_length``, 63 by
  default: the intersection of OpenAI, Anthropic, Gemini, Vertex and Firebase), is unique in the
  map and never equals a reserved name (the host's own tools).
- Cleaning: a character outside ``[A-Za-z0-9_-]`` becomes ``_`` (each code point, so a dot, a
  space or an accented letter is one ``_``); a name starting with a digit or ``-`` gets a ``_``
  in front; an empty name is ``_``.  Server names are cleaned the same way in the prefix.
- A name too long is cut and ends in ``_`` + 8 hex digits of ``sha256(server + "\\0" + tool)``.
- Names that collide (after cleaning or cutting, or with a reserved name) all move on to their
  next form together, so no member of a colliding group keeps the name because of order; see
  :func:`assign_names` for the forms and why the loop ends.
- A call is routed only through the reverse map (:meth:`ToolNames.resolve`), never by splitting
  a name on the separator: ``s`` / ``a__b`` and ``s__a`` / ``b`` are different tools.

Filters: :class:`ToolFilter` holds case-sensitive ``fnmatch`` globs; exclude wins; a filtered
tool is neither listed nor callable (the host filters before it assigns names, so a filtered
tool never takes a name from another).
"""

from __future__ import annotations

import bisect
import difflib
import fnmatch
import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "FUZZY_NEIGHBOURS",
    "FUZZY_SCAN_LIMIT",
    "HASH_DIGITS",
    "MAX_NAME_LENGTH",
    "MAX_SEPARATOR_LENGTH",
    "MIN_MAX_LENGTH",
    "NAME_MODES",
    "NamePolicy",
    "NameMode",
    "ToolFilter",
    "ToolNames",
    "assign_names",
    "clean_name",
    "not_listed",
    "owner_candidates",
]

NameMode = Literal["always", "collisions", "never"]
#: ``always``: ``{server}__{tool}``; ``collisions``: the bare tool name unless it collides;
#: ``never``: bare names, a collision resolved by the hash suffix.
NAME_MODES: tuple[NameMode, ...] = ("always", "collisions", "never")

#: OpenAI and Anthropic accept 64 characters; nothing portable accepts more.
MAX_NAME_LENGTH = 64
#: Firebase AI Logic (Gemini) accepts 63, so 63 is valid everywhere (host-notes 4.1).
DEFAULT_MAX_LENGTH = 63
#: Hex digits of the hash suffix: 32 bits, so two hashed names coincide with odds of 1 in 4e9
#: per pair of names that share their cut prefix.
HASH_DIGITS = 8
#: A hashed name keeps at least one character of the name, then ``_`` and the digits.
MIN_MAX_LENGTH = 1 + 1 + HASH_DIGITS
#: The separator is in every prefixed name; a longer one would eat the tool name's budget.
MAX_SEPARATOR_LENGTH = 8

#: Names up to which :meth:`ToolNames.close_matches` gives every name to ``difflib``: it costs
#: tens of microseconds a name (10 ms at this many), and 10,000 would cost half a second on
#: every mistyped call.
FUZZY_SCAN_LIMIT = 256
#: Past :data:`FUZZY_SCAN_LIMIT`, ``difflib`` sees only the names that sort next to the name
#: asked for, this many on each side, once compared from the front and once from the back
#: (case-folded): the names sharing its longest prefix or its longest suffix.  A slip that
#: leaves either end whole keeps its tool among them, unless more than this many names share
#: that end as far as the slip; the cost is at most 4 x this many comparisons (a few ms).
FUZZY_NEIGHBOURS = 16

#: Salted hashes each pair may try after its plain forms before the fallback probe.  A salted
#: form collides only if 32 bits of sha256 and the cut prefix both coincide, so needing a
#: second salt is rare and a fifth never happens in practice; the cap exists to bound the loop.
_HASH_ATTEMPTS = 4
_HASH_MODULUS = 16 ** HASH_DIGITS

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_CLEAN = re.compile(r"[A-Za-z0-9_-]*")
_VALID_SEPARATOR = re.compile(r"[A-Za-z0-9_-]+")
_VALID_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")

_Pair = tuple[str, str]


def clean_name(text: str) -> str:
    """``text`` as a portable name, uncut: each character outside ``[A-Za-z0-9_-]`` becomes
    ``_``, a leading digit or ``-`` gets a ``_`` in front, an empty string is ``_``."""
    return _start(_INVALID.sub("_", text))


def _start(name: str) -> str:
    return name if name and name[0] in _VALID_START else "_" + name


@dataclass(frozen=True, slots=True)
class NamePolicy:
    """How :func:`assign_names` names tools.

    ``mode``: ``"always"`` (default) names every tool ``{server}{separator}{tool}``, so adding a
    server renames nothing; ``"collisions"`` uses the bare tool name unless another pair (or a
    reserved name) wants the same one, then every one of them is prefixed (adding a server can
    rename the tools it collides with, and only those); ``"never"`` uses bare names and resolves
    a collision with the hash suffix, never by shadowing.  ``separator`` joins server and tool
    (1..8 characters of ``[A-Za-z0-9_-]``).  ``max_length`` bounds every name (10..64; 63 is
    portable).  ``reserved``: the names of the host's own tools (meta-tools ...), which no
    public name will equal (taken as a collision).  ``ValueError`` / ``TypeError`` for a bad
    value.
    """

    mode: NameMode = "always"
    separator: str = "__"
    max_length: int = DEFAULT_MAX_LENGTH
    reserved: Collection[str] = frozenset()

    def __post_init__(self) -> None:
        if self.mode not in NAME_MODES:
            raise ValueError(f"mode must be one of {', '.join(NAME_MODES)}, not {self.mode!r}")
        if not isinstance(self.separator, str) or len(self.separator) > MAX_SEPARATOR_LENGTH \
                or not _VALID_SEPARATOR.fullmatch(self.separator):
            raise ValueError(f"separator must be 1..{MAX_SEPARATOR_LENGTH} characters of "
                             f"[A-Za-z0-9_-], not {self.separator!r}")
        if isinstance(self.max_length, bool) or not isinstance(self.max_length, int) \
                or not MIN_MAX_LENGTH <= self.max_length <= MAX_NAME_LENGTH:
            raise ValueError(f"max_length must be an integer in {MIN_MAX_LENGTH}.."
                             f"{MAX_NAME_LENGTH}, not {self.max_length!r}")
        if isinstance(self.reserved, str):
            raise TypeError("reserved must be a collection of names, not one string")
        reserved = frozenset(self.reserved)
        for name in reserved:
            if not isinstance(name, str):
                raise TypeError(f"reserved names must be strings, not {name!r}")
        object.__setattr__(self, "reserved", reserved)

    # -- the forms of one pair ---------------------------------------------------------------

    def _base(self, server: str, tool: str) -> str:
        """The mode's name, cleaned and uncut: bare for ``never``, prefixed otherwise."""
        return self._join(_INVALID.sub("_", server), _INVALID.sub("_", tool))

    def _join(self, server_part: str, tool_part: str) -> str:
        """The mode's name from the substituted parts (before the leading-character rule)."""
        if self.mode == "never":
            return _start(tool_part)
        return _start(server_part + self.separator + tool_part)

    def _hashed(self, base: str, server: str, tool: str, salt: int) -> str:
        return base[:self.max_length - 1 - HASH_DIGITS] + "_" + _digest(server, tool, salt)

    def forms(self, server: str, tool: str) -> Iterator[str]:
        """Every name the pair may take, best first, without repeats (a finite, lazy
        sequence):

        - ``collisions`` only: the bare tool name, cleaned (hashed if too long);
        - the mode's name (``always`` / ``collisions``: prefixed; ``never``: bare), cleaned;
          hashed with salt 0 (the plain ``sha256(server + "\\0" + tool)``) if too long;
        - the same name hashed with salts 0, 1, ... (``_HASH_ATTEMPTS`` in all).
        """
        return self._forms(server, tool, _INVALID.sub("_", server), _INVALID.sub("_", tool))

    def _forms(self, server: str, tool: str, server_part: str, tool_part: str
               ) -> Iterator[str]:
        limit = self.max_length
        seen: set[str] = set()
        if self.mode == "collisions":
            bare = _start(tool_part)
            first = bare if len(bare) <= limit else self._hashed(bare, server, tool, 0)
            seen.add(first)
            yield first
        base = self._join(server_part, tool_part)
        fitted = base if len(base) <= limit else self._hashed(base, server, tool, 0)
        if fitted not in seen:
            seen.add(fitted)
            yield fitted
        for salt in range(_HASH_ATTEMPTS):
            name = self._hashed(base, server, tool, salt)
            if name not in seen:
                seen.add(name)
                yield name

    def _probe(self, server: str, tool: str, taken: Collection[str]) -> str:
        """The fallback when every form collided: the cut name + ``_`` + (hash + i) mod 16^8
        for i = 1, 2 ...  These are distinct for distinct i, so at most ``len(taken) + 1``
        tries find a free one (pigeonhole)."""
        cut = self._base(server, tool)[:self.max_length - 1 - HASH_DIGITS]
        start = int(_digest(server, tool, 0), 16)
        for i in range(1, len(taken) + 2):
            name = f"{cut}_{(start + i) % _HASH_MODULUS:0{HASH_DIGITS}x}"
            if name not in taken:
                return name
        raise AssertionError("unreachable: more names taken than candidates tried")


def _digest(server: str, tool: str, salt: int) -> str:
    """``HASH_DIGITS`` hex digits naming the pair.  Salt 0 is the documented form,
    ``sha256(server + "\\0" + tool)``; higher salts also encode the server's length, so two
    pairs that differ only in where a ``\\0`` sits get different salted digests."""
    text = f"{server}\0{tool}" if salt == 0 else f"{len(server)}:{server}\0{tool}\0{salt}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]


class ToolNames:
    """The public name of every ``(server, tool)`` pair and the reverse map.  Immutable;
    built by :func:`assign_names` (build a new one when a listing changes).

    :meth:`resolve` is the only way a call is routed: ``KeyError`` for an unknown name (the
    host raises ``UnknownTool`` with :meth:`close_matches`).  Iteration, :meth:`items` and
    ``repr`` are sorted by public name.
    """

    __slots__ = ("_by_pair", "_by_public", "_by_server", "_lookup", "_servers", "_sorted",
                 "policy")

    def __init__(self, names: Mapping[str, tuple[str, str]], policy: NamePolicy,
                 servers: Iterable[str] = ()) -> None:
        """A map as given: public name -> ``(server, tool)``; ``ValueError`` if two names
        share a pair or a name breaks ``policy`` (use :func:`assign_names` to make one)."""
        pattern = re.compile(rf"[A-Za-z_][A-Za-z0-9_-]{{0,{policy.max_length - 1}}}")
        for name in names:
            if not pattern.fullmatch(name) or name in policy.reserved:
                raise ValueError(f"{name!r} is not a valid public name under {policy!r}")
        self._init(dict(names), policy, servers)
        if len(self._pairs()) != len(self._by_public):
            raise ValueError("two public names map to the same (server, tool)")

    @classmethod
    def _make(cls, names: dict[str, _Pair], policy: NamePolicy,
              servers: Iterable[str]) -> ToolNames:
        self = cls.__new__(cls)
        self._init(names, policy, servers)
        return self

    def _init(self, names: dict[str, _Pair], policy: NamePolicy,
              servers: Iterable[str]) -> None:
        self.policy = policy
        self._by_public = names
        self._servers = tuple(servers)
        self._by_pair: dict[_Pair, str] | None = None
        self._by_server: dict[str, dict[str, str]] | None = None
        self._sorted: tuple[str, ...] | None = None
        self._lookup: _Lookup | None = None

    def _pairs(self) -> dict[_Pair, str]:
        if self._by_pair is None:
            self._by_pair = {pair: name for name, pair in self._by_public.items()}
        return self._by_pair

    def _server_map(self) -> dict[str, dict[str, str]]:
        if self._by_server is None:
            self._by_server = {server: {} for server in self._servers}
            for name, (server, tool) in self._by_public.items():
                self._by_server.setdefault(server, {})[tool] = name
        return self._by_server

    def _names(self) -> tuple[str, ...]:
        if self._sorted is None:
            self._sorted = tuple(sorted(self._by_public))
        return self._sorted

    def public(self, server: str, tool: str) -> str:
        """The public name of ``tool`` on ``server``; ``KeyError`` if the listing had no such
        pair (a filtered tool is not in it)."""
        return self._pairs()[(server, tool)]

    def resolve(self, public: str) -> tuple[str, str]:
        """``(server, tool)`` for a public name; ``KeyError`` if no tool has it (list tools
        again once, then report ``UnknownTool`` with :meth:`close_matches`)."""
        return self._by_public[public]

    def close_matches(self, public: str, n: int = 3) -> tuple[str, ...]:
        """Up to ``n`` public names that look like ``public``, best first, for an error
        message: first names whose tool is exactly ``public`` or that equal it ignoring case
        (a model calling the bare tool name), then ``difflib`` matches: among every name up
        to :data:`FUZZY_SCAN_LIMIT` names, past it among the neighbours of ``public`` in
        sorted order (:data:`FUZZY_NEIGHBOURS`), so an unknown name costs milliseconds
        whatever the number of tools.  ``ValueError`` if ``n < 1``."""
        if n < 1:
            raise ValueError(f"n must be >= 1, not {n!r}")
        names = self._names()
        if len(names) <= FUZZY_SCAN_LIMIT:
            folded = public.casefold()
            exact = [name for name in names
                     if self._by_public[name][1] == public or name.casefold() == folded]
            fuzzy = difflib.get_close_matches(public, names, n)
        else:  # bounded: a few lookups and difflib over the neighbours (FUZZY_NEIGHBOURS)
            lookup = self._lookup
            if lookup is None:
                lookup = self._lookup = _Lookup(names)
            same, candidates = lookup.candidates(public)
            exact = sorted({*same, *(tools[public] for tools in self._server_map().values()
                                     if public in tools)})
            fuzzy = difflib.get_close_matches(public, candidates, n)
        out: list[str] = []
        for name in (*exact, *fuzzy):
            if name not in out and name != public:
                out.append(name)
        return tuple(out[:n])

    def of_server(self, server: str) -> dict[str, str]:
        """Tool name -> public name for one server (a copy; empty for a server with no listed
        tools or not in the listing)."""
        return dict(self._server_map().get(server, {}))

    def items(self) -> tuple[tuple[str, tuple[str, str]], ...]:
        """``(public, (server, tool))`` for every tool, sorted by public name."""
        return tuple((name, self._by_public[name]) for name in self._names())

    def __contains__(self, public: object) -> bool:
        return public in self._by_public

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._by_public)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolNames):
            return NotImplemented
        return self._by_public == other._by_public

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{name!r}: {pair!r}" for name, pair in self.items())
        return f"ToolNames({{{shown}}})"


class _Lookup:
    """What :meth:`ToolNames.close_matches` looks names up in past :data:`FUZZY_SCAN_LIMIT`
    names: the case-folded names sorted from the front and from the back (built at the first
    mistyped name of a listing; sorting indices, not pairs, keeps the collector out of it)."""

    __slots__ = ("_backward", "_backward_names", "_forward", "_forward_names")

    def __init__(self, names: Sequence[str]) -> None:
        folded = [name.casefold() for name in names]
        reversed_ = [key[::-1] for key in folded]
        forward = sorted(range(len(names)), key=folded.__getitem__)
        backward = sorted(range(len(names)), key=reversed_.__getitem__)
        self._forward = [folded[i] for i in forward]
        self._forward_names = [names[i] for i in forward]
        self._backward = [reversed_[i] for i in backward]
        self._backward_names = [names[i] for i in backward]

    def candidates(self, public: str) -> tuple[list[str], list[str]]:
        """The names equal to ``public`` ignoring case, and its neighbours for ``difflib``
        (:data:`FUZZY_NEIGHBOURS` on each side, from the front and from the back)."""
        folded = public.casefold()
        k = FUZZY_NEIGHBOURS
        at = bisect.bisect_left(self._forward, folded)
        same = self._forward_names[at:bisect.bisect_right(self._forward, folded, at)]
        near = dict.fromkeys(self._forward_names[max(0, at - k):at + k])
        back = bisect.bisect_left(self._backward, folded[::-1])
        near.update(dict.fromkeys(self._backward_names[max(0, back - k):back + k]))
        return same, list(near)


def assign_names(listing: Mapping[str, Iterable[str]],
                 policy: NamePolicy = NamePolicy()) -> ToolNames:
    """Name every tool of ``listing`` (server -> its tool names, already filtered).

    A tool a server lists twice is one pair and gets one name (which of the duplicate
    definitions to keep is the host's choice: the first listed).  ``TypeError`` for a name that
    is not a string, or tools given as one string.

    The algorithm, in synchronous rounds: every pair starts at its first form
    (:meth:`NamePolicy.forms`).  Each round, every pair whose name is shared with another pair
    or is reserved moves to its next form, all at once (a move depends only on the pair, so the
    order within a round is irrelevant, and no member of a group keeps a name by order).  A
    pair with no forms left is set aside.  Rounds stop when no name is shared.  Each round moves
    at least one pair one step along a finite list (at most ``2 + _HASH_ATTEMPTS`` forms), so
    there are at most ``pairs * (2 + _HASH_ATTEMPTS)`` rounds, and a round costs only the pairs
    it moves (linear overall).  The pairs set aside (a 32-bit hash coincidence at every salt:
    never seen in practice) then each take, in sorted ``(server, tool)`` order, the first free
    name of :meth:`NamePolicy._probe`, which pigeonhole bounds.
    """
    reserved = frozenset(policy.reserved)  # already one: the same object back
    limit = policy.max_length
    clean = _CLEAN.fullmatch
    owner: dict[str, _Pair] = {}  # name -> the first pair that took it
    shared: dict[str, list[_Pair]] = {}  # name -> the other pairs that took it (collisions)
    for server, tools in listing.items():
        if not isinstance(server, str):
            raise TypeError(f"server names must be strings, not {server!r}")
        if isinstance(tools, str):
            raise TypeError(f"server {server!r}: tools must be a collection of names, "
                            f"not one string")
        # The first form of NamePolicy.forms, inlined: this loop is the hot path.
        prefix = ""
        if policy.mode == "always":
            prefix = (server if clean(server) else _INVALID.sub("_", server)) + policy.separator
        for tool in set(tools):
            if not isinstance(tool, str):
                raise TypeError(f"server {server!r}: tool names must be strings, not {tool!r}")
            name = prefix + (tool if clean(tool) else _INVALID.sub("_", tool))
            if not name or name[0] not in _VALID_START:
                name = "_" + name
            if len(name) > limit:
                name = policy._hashed(name, server, tool, 0)
            pair = (server, tool)
            if owner.setdefault(name, pair) is not pair:
                shared.setdefault(name, []).append(pair)
    crowded = set(shared) | (reserved & owner.keys())
    forms: dict[_Pair, Iterator[str]] = {}  # made for a pair when it first moves
    stranded: list[_Pair] = []
    while crowded:
        movers = [pair for name in crowded for pair in (owner.pop(name), *shared.pop(name, ()))]
        touched: set[str] = set()
        for pair in movers:
            it = forms.get(pair)
            if it is None:
                forms[pair] = it = policy.forms(*pair)
                next(it, None)  # the first form, the one it had
            moved = next(it, None)
            if moved is None:
                stranded.append(pair)
                continue
            if owner.setdefault(moved, pair) is not pair:
                shared.setdefault(moved, []).append(pair)
            touched.add(moved)
        crowded = {name for name in touched if name in shared or name in reserved}
    if stranded:
        taken = set(owner) | reserved
        for pair in sorted(stranded):
            name = policy._probe(*pair, taken)
            taken.add(name)
            owner[name] = pair
    return ToolNames._make(owner, policy, listing.keys())


def owner_candidates(public: str, servers: Iterable[str], policy: NamePolicy
                     ) -> tuple[list[str], list[str]]:
    """Which of ``servers`` may have a tool (or prompt) named ``public`` before any of them
    is listed: ``(first, rest)``, each in the order given, together every server.

    ``first`` are the servers whose prefix (cleaned name + separator, cut where a hashed
    name is cut) begins ``public``: under ``always`` only they can own it, and under
    ``collisions`` they own every prefixed name.  ``rest`` may still own it under
    ``collisions`` (a bare name) and ``never`` (every name is bare: ``first`` is then every
    server).  Never a way to route a call (that is :meth:`ToolNames.resolve`, after listing):
    only which servers to start first, so a call does not wait for servers that cannot have
    its tool.
    """
    names = list(servers)
    if policy.mode == "never":
        return names, []
    # a cut name keeps ``max_length - 1 - HASH_DIGITS`` characters of the prefixed name
    keep = policy.max_length - 1 - HASH_DIGITS
    first: list[str] = []
    rest: list[str] = []
    for server in names:
        prefix = clean_name(server + policy.separator)[:keep]
        (first if public.startswith(prefix) else rest).append(server)
    return first, rest


def not_listed(public: str, servers: Iterable[str], policy: NamePolicy,
               listed: Callable[[str], bool]) -> tuple[str | None, list[str]]:
    """Who was not asked about ``public`` (a name no listing has): ``(sole, unasked)``.

    ``unasked`` are the servers of ``servers`` that could have the name (those whose
    prefix begins it; when none does, every server: the name may be mistyped) and for
    which ``listed(server)`` is false, in the order given: what an unknown name's error
    names.  ``sole`` is the one server that could own it by the naming policy and did not
    list (under ``always`` only one whose prefix begins it; under ``collisions`` a bare name
    may be anyone's; under ``never`` every name is): the name is then that server's to
    give, and the error is that it is unavailable.  None when none or several could.
    """
    first, rest = owner_candidates(public, servers, policy)
    sure = first if policy.mode == "always" else first or rest
    missing = [server for server in sure if not listed(server)]
    unasked = missing if sure else [server for server in rest if not listed(server)]
    return (missing[0] if len(missing) == 1 else None), unasked


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """Which tools of a server are public: ``include`` (None: all) and ``exclude`` are
    case-sensitive ``fnmatch`` globs (``*``, ``?``, ``[seq]``, ``[!seq]``) or exact names;
    exclude wins.  An empty ``include`` allows nothing.  ``TypeError`` for a pattern that is not
    a string, or patterns given as one string."""

    include: Sequence[str] | None = None
    exclude: Sequence[str] = ()
    _include: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _exclude: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        include = None if self.include is None else _patterns("include", self.include)
        exclude = _patterns("exclude", self.exclude)
        object.__setattr__(self, "include", include)
        object.__setattr__(self, "exclude", exclude)
        object.__setattr__(self, "_include", _compile(include or ()))
        object.__setattr__(self, "_exclude", _compile(exclude))

    @classmethod
    def from_spec(cls, include_tools: Sequence[str] | None = None,
                  exclude_tools: Sequence[str] | None = None) -> ToolFilter:
        """The filter of a server spec's ``include_tools`` / ``exclude_tools`` (None: no
        include filter / nothing excluded)."""
        return cls(include_tools, () if exclude_tools is None else exclude_tools)

    def allows(self, name: str) -> bool:
        """True if the tool ``name`` is public: not excluded, and included (or no include)."""
        if self._exclude is not None and self._exclude.match(name):
            return False
        if self.include is None:
            return True
        return self._include is not None and self._include.match(name) is not None

    def unknown(self, names: Iterable[str]) -> tuple[str, ...]:
        """The patterns (include first, then exclude, each once) that match none of ``names``
        (a server's tool names), for a warning: a pattern without glob characters that matches
        nothing is most likely a typo or a tool the server no longer has."""
        listed = list(names)
        out: list[str] = []
        for pattern in (*(self.include or ()), *self.exclude):
            if pattern not in out and not any(fnmatch.fnmatchcase(n, pattern) for n in listed):
                out.append(pattern)
        return tuple(out)


def _patterns(what: str, patterns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(patterns, str):
        raise TypeError(f"{what} must be a sequence of patterns, not one string")
    out = tuple(patterns)
    for pattern in out:
        if not isinstance(pattern, str):
            raise TypeError(f"{what} patterns must be strings, not {pattern!r}")
    return out


def _compile(patterns: Sequence[str]) -> re.Pattern[str] | None:
    """One regex matching any of ``patterns`` (None for no patterns)."""
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))
