"""Tool search, pure: which of a host's tools fit a query, ranked (BM25F over an inverted index).

A host with hundreds or thousands of tools cannot put every definition in front of a model;
it offers a search instead (``host.search_tools``, the ``mcp_search`` meta-tool).
:class:`ToolIndex` is that search: built once per listing (the host builds a new one when a
listing changes, handing it the old one as ``previous`` so that only the tools that changed
are read again), then queried any number of times.  It holds no lock and reads no clock:
what an index answers never changes once it is built (it only keeps, at a term's first
search, that term's postings' weights), so any number of threads may search one while the
host builds the next.

**What a tool is, to the search.**  Six fields, each a bag of terms, each with a weight:

=========================  ======  ==========================================================
field                      weight  text
=========================  ======  ==========================================================
``name``                   3       the public name, and the server's own name for the tool
                                   when its words are not all in the public name already
``title``                  2       ``title``, else ``annotations.title``
``description``            1       ``description`` (its first :data:`MAX_INDEXED_CHARS`)
``parameter_names``        2       the names of the input schema's properties
``parameter_descriptions`` 1       their ``title`` and ``description``
``server``                 1       the server's name
=========================  ======  ==========================================================

Parameters are read breadth first (the top-level arguments before nested ones) through
``properties``, ``items``, ``additionalProperties``, ``prefixItems``, ``anyOf`` / ``oneOf``
/ ``allOf`` and ``$defs`` / ``definitions`` (where generated schemas keep their nested
models), at most :data:`MAX_PARAM_DEPTH` levels down, :data:`MAX_PARAMS` properties and
:data:`MAX_SCHEMA_NODES` schema nodes per tool, :data:`MAX_PARAM_TEXT_CHARS` characters of
names and descriptions in all.  Anything that is not the type the field expects (a
description that is a number, properties that are a list) is not read.

**Terms** (:func:`tokenize`, the same for tools and queries): the text is cut into runs of
letters and digits; each run is cut again where its case says a word starts (``camelCase``,
``getHTTPResponse`` -> get, http, response; ``IDs`` stays one word; digits stay with the
letters before them: ``base64``, ``v2``); so ``snake_case``, ``kebab-case``, ``dotted.names``
and ``camelCase`` all give the same words.  Each word is case-folded, cut to
:data:`MAX_TOKEN_CHARS`, dropped when it is one of :data:`STOP_WORDS` (before stemming),
and stemmed (:func:`stem`).  Non-ASCII text is NFKC-normalized first (full-width letters
are letters); a run of a script without spaces (Chinese, Japanese) stays one term.

**Ranking** (BM25F, Robertson & Zaragoza 2009, "simple BM25F": one saturation over the
weighted sum of the fields' normalized frequencies)::

    tf~(t, d) = sum over fields f of  w_f * tf(t, f, d) / (1 - b + b * len(f, d) / avglen(f))
    idf(t)    = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    score(q, d) = sum over the distinct terms t of q of  idf(t) * tf~ * (k1 + 1) / (k1 + tf~)

with ``k1 = 1.2``, ``b = 0.75`` (:data:`BM25_K1`, :data:`BM25_B`, Okapi's defaults), ``N``
the tools indexed, ``n(t)`` the tools with ``t`` in any field, ``len(f, d)`` the terms of
field ``f`` of tool ``d`` and ``avglen(f)`` their mean over the tools that have the field
(as Lucene does: a field most tools lack, such as ``title``, is not penalised for it).  One
saturation over the sum (rather than a BM25 score per field, summed) is the choice because a
word in both the name and the description is then still one word found, not two: a tool
whose every field repeats "file" does not outrank the tool named ``read_file`` for "read
file".  A build reads each tool once and files it under each of its distinct terms (an
inverted index); the first search of a term computes ``tf~ * (k1 + 1) / (k1 + tf~)`` for
that term's postings and keeps it, and a search adds ``idf(t)`` times those of its own terms
only: its cost is the number of tools that have one of the query's words, not the number of
tools.

**Exact names first.**  A query that is, once stripped and case-folded, a tool's public name
or the server's own name for it (names of at most :data:`MAX_QUERY_CHARS`), puts that tool
first: its score is its BM25 score plus ``(k1 + 1) * sum of idf(t)`` over the query's terms
(more than any tool can score for that query) plus :data:`EXACT_MATCH_BONUS`.  Equal
scores are ordered by public name, then server, then the tool's own name, so the same index
and query always give the same list, whatever order the tools came in.
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from array import array
from collections import defaultdict, deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple, Protocol

from .._types import Tool

__all__ = [
    "BM25_B",
    "BM25_K1",
    "DEFAULT_SEARCH_LIMIT",
    "EXACT_MATCH_BONUS",
    "FIELD_WEIGHTS",
    "MAX_INDEXED_CHARS",
    "MAX_INDEXED_TOOLS",
    "MAX_NAME_CHARS",
    "MAX_PARAMS",
    "MAX_PARAM_DEPTH",
    "MAX_PARAM_TEXT_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_SCHEMA_NODES",
    "MAX_SEARCH_LIMIT",
    "MAX_TOKEN_CHARS",
    "STOP_WORDS",
    "SearchHit",
    "ToolIndex",
    "stem",
    "tokenize",
]

#: Okapi BM25's term-frequency saturation: the usual default (Robertson & Zaragoza 2009).
BM25_K1 = 1.2
#: Okapi BM25's length normalisation: the usual default (a long description's words count
#: less each, but not in proportion).
BM25_B = 0.75
#: Field -> weight (BM25F).  What a tool is called says most about what it does; its
#: parameters' names say almost as much (``path``, ``query``, ``repo``); descriptions are
#: long and say it again with filler.
FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "title": 2.0,
    "description": 1.0,
    "parameter_names": 2.0,
    "parameter_descriptions": 1.0,
    "server": 1.0,
}
_FIELDS = tuple(FIELD_WEIGHTS)
_WEIGHTS = tuple(FIELD_WEIGHTS.values())

#: Hits a search gives when the caller does not say.
DEFAULT_SEARCH_LIMIT = 10
#: Hits a search gives at most: each is a tool summary in a model's context; past a few
#: dozen the model should ask a narrower question, not read the catalogue.
MAX_SEARCH_LIMIT = 50
#: Characters of a query read: a model's query is a phrase; past this it pasted a text,
#: and reading it all would make one search cost as much as indexing a tool.
MAX_QUERY_CHARS = 1024
#: Distinct terms of a query used (the first ones): each costs a walk of its postings, so
#: this bounds a search at this many postings lists whatever the text.
MAX_QUERY_TERMS = 32
#: Characters of a description indexed per tool: the first paragraphs say what a tool does;
#: the rest (examples, caveats, pasted manuals of 100 KB) adds noise and build time.
MAX_INDEXED_CHARS = 4096
#: Characters of a name, title or server name indexed: provider tool names are at most 64
#: characters and a title is a line.
MAX_NAME_CHARS = 256
#: Levels of nested schemas read for parameters (the root's properties are level 0): the
#: arguments, the fields of an object argument, of an array of objects, of a ``$defs``
#: model; deeper fields rarely name what a tool does.
MAX_PARAM_DEPTH = 4
#: Properties read per tool: a hand-written tool has a handful; a schema with thousands is
#: generated, and its first ones describe it as well as all of them.
MAX_PARAMS = 128
#: Schema nodes visited (and queued) per tool: bounds the walk of a hostile schema (10**5
#: ``anyOf`` branches, deep chains) whatever its shape.
MAX_SCHEMA_NODES = 1024
#: Characters of parameter names and descriptions indexed per tool, in all.
MAX_PARAM_TEXT_CHARS = 4096
#: Characters of one term: a longer run of letters is a hash, base64 or glued words, not a
#: word anyone searches for; cut (not dropped) so the same text still finds it.
MAX_TOKEN_CHARS = 64
#: Tools one index holds (the first ones in ``(name, server, tool)`` order): 64 servers of a
#: few hundred tools each is a big host; an index costs about a kilobyte per tool.
MAX_INDEXED_TOOLS = 100_000
#: Added to an exact name match's score, over the query's ceiling, so that it is always > 0
#: and first even for a query whose words are all stop words.
EXACT_MATCH_BONUS = 1.0
#: English words too common in tool descriptions (and in queries) to tell tools apart: a
#: search for "read the file" should not find every tool that says "the".
STOP_WORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "has", "have",
    "if", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "then", "this",
    "to", "was", "when", "which", "will", "with", "you", "your",
})

_RUN = re.compile(r"[^\W_]+")
# ASCII words in a run of letters and digits: an upper-case run before a capitalised word
# (HTTP|Server), a word with its capital (Server, get, v2, base64), an upper-case run (GET).
# (The first alternative only makes the common case, a lower-case word, quicker.)
_ASCII_WORD = re.compile(r"[a-z0-9]+|[A-Z]+(?=[A-Z][a-z]{2})|[A-Z]*[a-z0-9]+|[A-Z]+[0-9]*")
# Where _ASCII_WORD would cut a run of letters: a capital after a lower-case letter or a
# digit, or a capital before a capitalised word (written to start with [A-Z], so that the
# regex engine skips to capitals: four times cheaper than the pattern written plainly).
_CASE_CUT = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?=[A-Z][a-z]))")
# ASCII text without a case cut: letters lower-cased, every other byte a space, so that
# bytes.split() gives _ASCII_WORD's words (six times cheaper than findall).
_FOLD_ASCII = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122
                    else 32 for c in range(256))
_DOUBLE_KEEP = frozenset("lsz")
_VOWELS = frozenset("aeiouy")


class _ToolLike(Protocol):
    """What :class:`ToolIndex` reads of a :class:`~mcp_proto.host.HostTool`."""

    @property
    def name(self) -> str: ...
    @property
    def server(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def definition(self) -> Tool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One tool a search found: ``name`` is the public name (what a model calls), ``server``
    and ``tool`` where it goes, ``score`` how well it fits (> 0; higher is better; comparable
    only within one search), ``description`` and ``title`` the tool's own (uncut: a caller
    showing them to a model bounds them), ``definition`` the whole :class:`Tool`."""

    name: str
    server: str
    tool: str
    score: float
    description: str | None
    title: str | None
    definition: Tool = field(repr=False, compare=False)


# -- terms ------------------------------------------------------------------------------------


def stem(word: str) -> str:
    """A light English stemmer for one case-folded word, so that a word's common forms meet.

    Only ASCII words of letters longer than three are touched, in three steps:

    1. plurals: ``-ies`` -> ``-y`` (queries, entries); ``-sses`` -> ``-ss``; ``-es`` after
       ``s``, ``x``, ``z``, ``ch``, ``sh`` goes (boxes, branches); else a final ``-s`` goes
       unless the word ends in ``ss``, ``us`` or ``is`` (files, tools; not access, status,
       analysis);
    2. ``-ing`` and ``-ed`` go when at least three letters with a vowel stay (listing,
       listed -> list; not string, need); a doubled final consonant left behind is undoubled
       unless it is ``l``, ``s`` or ``z`` or fewer than three letters would stay (running ->
       run, committed -> commit; filled -> fill, added -> add);
    3. a final ``-e`` goes (file -> fil; update, updated, updating -> updat), so the forms
       of a verb ending in e meet.

    The stems need not be words; the same rules run on queries, which is all that matters.
    Never raises.
    """
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix):
            rest = w[:-len(suffix)]
            if len(rest) >= 3 and not _VOWELS.isdisjoint(rest):
                w = rest
                if (len(w) > 3 and w[-1] == w[-2] and w[-1] not in _DOUBLE_KEEP
                        and w[-1] not in _VOWELS):
                    w = w[:-1]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def _split_case(run: str) -> list[str]:
    """A non-ASCII run cut where its case says a word starts (as :data:`_ASCII_WORD`)."""
    pieces: list[str] = []
    start = 0
    for i in range(1, len(run)):
        c, p = run[i], run[i - 1]
        if not c.isupper():
            continue
        after = run[i + 1:i + 3]
        if p.islower() or p.isdigit() or (p.isupper() and len(after) == 2 and after.islower()):
            pieces.append(run[start:i])
            start = i
    pieces.append(run[start:])
    return pieces


def _words(text: str) -> list[str]:
    """The words of ``text``, case not yet folded (or folded already: ASCII text without a
    case cut)."""
    if text.isascii():
        if _CASE_CUT.search(text) is None:
            return text.encode("ascii").translate(_FOLD_ASCII).decode("ascii").split()
        return _ASCII_WORD.findall(text)
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for run in _RUN.findall(text):
        if run.isascii():
            out.extend(_ASCII_WORD.findall(run))
        elif run.islower() or run.isupper() or run == run.lower():
            out.append(run)
        else:
            out.extend(_split_case(run))
    return out


def _term(word: str) -> str:
    """The term of one word ("" for a stop word)."""
    folded = word.casefold()[:MAX_TOKEN_CHARS]
    return "" if folded in STOP_WORDS else stem(folded)


def _terms(text: str, cache: dict[str, str]) -> list[str]:
    """The terms of ``text`` in order (each distinct word made a term once per ``cache``)."""
    if not text:
        return []
    words = _words(text)
    for word in set(words).difference(cache):
        cache[word] = _term(word)
    return list(filter(None, map(cache.__getitem__, words)))


def tokenize(text: str) -> list[str]:
    """The terms of ``text`` as the index sees them, in order (repeats kept): words cut at
    non-alphanumerics and case changes, case-folded, cut to :data:`MAX_TOKEN_CHARS`, stop
    words dropped, stemmed (see the module's docstring).  ``tokenize("getWeatherForecast")``
    is ``["get", "weather", "forecast"]``.  A non-string gives ``[]``; never raises."""
    if not isinstance(text, str):
        return []
    return _terms(text, {})


# -- reading a tool ---------------------------------------------------------------------------


def _str(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


#: The keywords under which a schema holds more schemas (where parameters can be).
_NESTED = ("properties", "items", "additionalProperties", "prefixItems", "anyOf", "oneOf",
           "allOf", "$defs", "definitions")
_NESTED_SET = frozenset(_NESTED)
#: A property schema with at most this many keys and none of :data:`_NESTED` is a leaf and
#: is not queued (most are: ``{"type": ..., "description": ...}``); a bigger one is queued
#: without looking (so the test costs at most this many lookups; the walk's bounds apply).
_LEAF_KEYS = 8
_TEXT_KEYS = ("title", "description")


def _parameters(schema: object) -> tuple[list[str], list[str]]:
    """(parameter names, their titles and descriptions) of an input schema, read breadth
    first within :data:`MAX_PARAM_DEPTH`, :data:`MAX_PARAMS`, :data:`MAX_SCHEMA_NODES` and
    :data:`MAX_PARAM_TEXT_CHARS`."""
    names: list[str] = []
    texts: list[str] = []
    if not isinstance(schema, dict):
        return names, texts
    room = MAX_PARAM_TEXT_CHARS
    params = 0
    queue: deque[tuple[dict[object, object], int]] = deque([(schema, 0)])
    queued = 1
    while queue and room > 0 and params < MAX_PARAMS:
        node, depth = queue.popleft()
        deeper = depth + 1 < MAX_PARAM_DEPTH
        for keyword in _NESTED:
            value = node.get(keyword)
            if value is None:
                continue
            if keyword == "properties":
                if not isinstance(value, dict):
                    continue
                for key, sub in islice(value.items(), MAX_PARAMS - params):
                    params += 1
                    if isinstance(key, str) and room > 0:
                        cut = key[:min(room, MAX_NAME_CHARS)]
                        names.append(cut)
                        room -= len(cut)
                    if not isinstance(sub, dict):
                        continue
                    for text_key in _TEXT_KEYS:
                        text = sub.get(text_key)
                        if isinstance(text, str) and text and room > 0:
                            text = text[:room]
                            texts.append(text)
                            room -= len(text)
                    if deeper and queued < MAX_SCHEMA_NODES and (
                            len(sub) > _LEAF_KEYS or not _NESTED_SET.isdisjoint(sub)):
                        queue.append((sub, depth + 1))
                        queued += 1
                continue
            if not deeper:
                continue
            children: Iterable[object]
            if isinstance(value, dict):
                children = value.values() if keyword in ("$defs", "definitions") else (value,)
            elif isinstance(value, list):
                children = value
            else:
                continue
            for child in islice(children, MAX_SCHEMA_NODES - queued):
                if isinstance(child, dict):
                    queue.append((child, depth + 1))
                    queued += 1
    return names, texts


def _title(definition: object) -> str | None:
    title = getattr(definition, "title", None)
    if isinstance(title, str) and title:
        return title
    annotations = getattr(definition, "annotations", None)
    if isinstance(annotations, dict):
        title = annotations.get("title")
        if isinstance(title, str) and title:
            return title
    return None


class _Doc(NamedTuple):
    """One tool as read: its identity, what a hit shows, each field's terms (in
    :data:`FIELD_WEIGHTS` order, repeats kept: a term's frequency is counted when a search
    first needs it) and its distinct terms.  A tuple: ten thousand are made per index."""

    name: str
    server: str
    tool: str
    definition: Tool
    title: str | None
    description: str | None
    fields: tuple[list[str], ...]  # shared between tools with the same text: never changed
    terms: frozenset[str]


def _read(name: str, server: str, tool: str, definition: Tool, cache: dict[str, str],
          texts: dict[str, list[str]]) -> _Doc:
    """``cache``: word -> term and ``texts``: text -> its terms, for one build (a server's
    name, and its tools' parameters, repeat from tool to tool)."""
    description = getattr(definition, "description", None)
    description = description if isinstance(description, str) else None
    title = _title(definition)
    names = _terms(name[:MAX_NAME_CHARS], cache)
    if tool != name:
        own = _terms(tool[:MAX_NAME_CHARS], cache)
        if not set(own) <= set(names):
            names = names + own
    param_names, param_texts = _parameters(getattr(definition, "input_schema", None))
    fields = [names,
              _terms(title[:MAX_NAME_CHARS], cache) if title else [],
              _terms(description[:MAX_INDEXED_CHARS], cache) if description else []]
    for text in (" ".join(param_names), " ".join(param_texts), server[:MAX_NAME_CHARS]):
        terms = texts.get(text)
        if terms is None:
            terms = texts[text] = _terms(text, cache)
        fields.append(terms)
    return _Doc(name, server, tool, definition, title, description, tuple(fields),
                frozenset().union(*fields))


def _entry(item: object) -> tuple[str, str, str, Tool]:
    """(public name, server, tool name, definition) of a HostTool or a triple; TypeError for
    anything else.  A name that is not a string is indexed as ""."""
    if isinstance(item, tuple):
        if len(item) != 3:
            raise TypeError(f"a tool to index is a HostTool or a (public name, server, Tool) "
                            f"triple, not a tuple of {len(item)}")
        public, server, definition = item
        tool = getattr(definition, "name", None)
    else:
        try:
            public, server = item.name, item.server  # type: ignore[attr-defined]
            tool, definition = item.tool, item.definition  # type: ignore[attr-defined]
        except AttributeError:
            raise TypeError(f"a tool to index is a HostTool or a (public name, server, Tool) "
                            f"triple, not {type(item).__name__}") from None
    return (public if isinstance(public, str) else "", server if isinstance(server, str)
            else "", tool if isinstance(tool, str) else "", definition)


def _exact_key(name: str) -> str:
    """What a query must be (stripped, case-folded) to name ``name`` exactly; "" (never) for
    a name longer than :data:`MAX_QUERY_CHARS`, which no query can spell out."""
    return name.strip().casefold() if len(name) <= MAX_QUERY_CHARS else ""


# -- the index --------------------------------------------------------------------------------


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


class ToolIndex:
    """A search over tools: built from :class:`~mcp_proto.host.HostTool` s (what
    ``HostCore.all_tools()`` gives) or ``(public name, server, Tool)`` triples, in any order;
    :meth:`search` ranks them for a query (BM25F, see the module's docstring).

    ``previous``: an index of an earlier listing; the tools whose ``(name, server, tool)``
    and definition object are the same as there are not read again (a host rebuilds its
    index when one server's listing changes: the other servers' tools cost a lookup).  A
    definition changed in place (its schema dict edited) is not seen; listings are new
    objects.

    What an index answers never changes once it is built.  The postings' weights of a term
    are computed the first time a search uses the term and kept (a build touches each
    posting once, a search only its own terms'); two threads searching at once may both
    compute them, with the same result, so an index needs no lock.

    Only the first :data:`MAX_INDEXED_TOOLS` tools in ``(name, server, tool)`` order are
    indexed (:attr:`omitted` says how many were not).  Raises TypeError for an item that is
    neither a HostTool nor a triple (a caller's bug); any content of a tool is accepted
    (strings are cut, other types ignored).
    """

    __slots__ = ("_docs", "_exact", "_factors", "_idf", "_omitted", "_postings", "_reused",
                 "_weights")

    def __init__(self, tools: Iterable[_ToolLike | tuple[str, str, Tool]] = (), *,
                 previous: ToolIndex | None = None) -> None:
        entries = [_entry(item) for item in tools]
        entries.sort(key=lambda e: e[:3])
        self._omitted = max(0, len(entries) - MAX_INDEXED_TOOLS)
        del entries[MAX_INDEXED_TOOLS:]
        old = {} if previous is None else {
            (d.name, d.server, d.tool, id(d.definition)): d for d in previous._docs}
        cache: dict[str, str] = {}
        texts: dict[str, list[str]] = {}
        docs: list[_Doc] = []
        reused = 0
        for name, server, tool, definition in entries:
            doc = old.get((name, server, tool, id(definition)))
            if doc is not None and doc.definition is definition:
                reused += 1
            else:
                doc = _read(name, server, tool, definition, cache, texts)
            docs.append(doc)
        self._docs: tuple[_Doc, ...] = tuple(docs)
        self._reused = reused
        self._build()

    def _build(self) -> None:
        docs = self._docs
        n = len(docs)
        exact: dict[str, list[int]] = {}
        postings: defaultdict[str, list[int]] = defaultdict(list)
        totals = [0] * len(_FIELDS)
        having = [0] * len(_FIELDS)
        for i, doc in enumerate(docs):
            for key in {_exact_key(doc.name), _exact_key(doc.tool)}:
                if key:
                    exact.setdefault(key, []).append(i)
            for term in doc.terms:
                postings[term].append(i)
            for f, terms in enumerate(doc.fields):
                if terms:
                    totals[f] += len(terms)
                    having[f] += 1
        avg = [t / h if h else 1.0 for t, h in zip(totals, having, strict=True)]
        b = BM25_B
        # per tool: (terms, w_f / (1 - b + b * len / avglen)) of each field it has
        self._factors: list[list[tuple[list[str], float]]] = [
            [(terms, w / (1.0 - b + b * len(terms) / mean))
             for w, terms, mean in zip(_WEIGHTS, doc.fields, avg, strict=True) if terms]
            for doc in docs]
        self._postings: dict[str, list[int]] = dict(postings)
        self._idf: dict[str, float] = {t: _idf(n, len(ids)) for t, ids in postings.items()}
        self._exact = exact
        self._weights: dict[str, array[float]] = {}

    def _term_weights(self, term: str) -> array[float]:
        """``tf~ * (k1 + 1) / (k1 + tf~)`` of each posting of ``term`` (a search multiplies
        by its idf), computed at its first search."""
        known = self._weights.get(term)
        if known is not None:
            return known
        k1 = BM25_K1
        k1p = k1 + 1.0
        factors = self._factors
        weights: array[float] = array("d")
        for i in self._postings[term]:
            x = 0.0  # tf~, the fields summed in FIELD_WEIGHTS order
            for terms, factor in factors[i]:
                tf = terms.count(term)
                if tf:
                    x += tf * factor
            weights.append(x * k1p / (k1 + x))
        self._weights[term] = weights
        return weights

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def omitted(self) -> int:
        """Tools left out past :data:`MAX_INDEXED_TOOLS`."""
        return self._omitted

    @property
    def reused(self) -> int:
        """Tools taken from ``previous`` as read there (not read again)."""
        return self._reused

    @property
    def servers(self) -> frozenset[str]:
        """The servers that have a tool in the index."""
        return frozenset(d.server for d in self._docs)

    def search(self, query: str, *, limit: int = DEFAULT_SEARCH_LIMIT,
               servers: Collection[str] | None = None) -> list[SearchHit]:
        """The tools that fit ``query`` best, best first: at most ``limit``, each sharing at
        least one term with the query (or named exactly by it); ``[]`` for a query with no
        terms (empty, spaces, only stop words) or no tool that has one.  ``servers``: only
        these servers' tools (a collection of server names; unknown names find nothing).

        Only the first :data:`MAX_QUERY_CHARS` characters and :data:`MAX_QUERY_TERMS`
        distinct terms of the query are used.  Raises ValueError for a ``query`` that is not
        a string, a ``limit`` that is not an int from 1 to :data:`MAX_SEARCH_LIMIT`, or
        ``servers`` given as one string (the caller passes a list: ``["git"]``); a meta-tool
        answers such a call with an error result the model can read.
        """
        if not isinstance(query, str):
            raise ValueError(f"query must be a string, not {type(query).__name__}")
        if type(limit) is not int or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ValueError(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}, "
                             f"got {limit!r}"[:200])
        if isinstance(servers, str):
            raise ValueError("servers must be a collection of server names, not a string")
        text = query[:MAX_QUERY_CHARS]
        idf = self._idf
        terms = list(islice(dict.fromkeys(t for t in tokenize(text) if t in idf),
                            MAX_QUERY_TERMS))
        scores: dict[int, float] = {}
        for term in terms:
            weight = idf[term]
            get = scores.get
            for i, value in zip(self._postings[term], self._term_weights(term),
                                strict=True):
                scores[i] = get(i, 0.0) + weight * value
        exact = self._exact.get(text.strip().casefold(), ())
        if exact:
            ceiling = (BM25_K1 + 1.0) * sum(idf[t] for t in terms) + EXACT_MATCH_BONUS
            for i in exact:
                scores[i] = scores.get(i, 0.0) + ceiling
        if servers is not None:
            wanted = frozenset(s for s in servers if isinstance(s, str))
            docs = self._docs
            scores = {i: s for i, s in scores.items() if docs[i].server in wanted}
        return [self._hit(i, s) for i, s in self._top(scores, limit)]

    @staticmethod
    def _top(scores: dict[int, float], limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (doc, score) pairs, best first, ties in doc order (docs are in
        ``(name, server, tool)`` order)."""
        if len(scores) > limit:
            floor = heapq.nlargest(limit, scores.values())[-1]
            scores = {i: s for i, s in scores.items() if s >= floor}
        ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:limit]

    def _hit(self, i: int, score: float) -> SearchHit:
        doc = self._docs[i]
        return SearchHit(name=doc.name, server=doc.server, tool=doc.tool, score=score,
                         description=doc.description, title=doc.title,
                         definition=doc.definition)

    def __repr__(self) -> str:
        return (f"ToolIndex({len(self._docs)} tools, {len(self._postings)} terms, "
                f"{len(self.servers)} servers)")
