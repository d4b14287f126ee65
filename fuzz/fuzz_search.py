"""Fuzz harness for :class:`ToolIndex` and :func:`tokenize` (``host/_search.py``): tool
definitions come from servers and queries from models, so both are untrusted text.

``check(data)`` reads a tool set, a query, a limit and a server filter two ways, chosen by
the first byte:

- **raw** (a first byte < 0x80): the data as UTF-8 (U+FFFD for invalid bytes); its first
  line is the query, the second the limit (digits, else the default), each further line a
  tool: ``server<TAB>public name<TAB>description<TAB>param=description;param=...`` (missing
  fields empty; the tool's own name is the public name after its last ``__``);
- **structured** (a first byte >= 0x80): tools drawn from a vocabulary of words in every
  naming style (snake, camel, kebab, dotted, spaced), plurals and verb forms, acronyms,
  stop words, non-ASCII letters (NFKC-equivalent forms, case-folding that grows, scripts
  without spaces, lone surrogates), 70-letter runs; descriptions and titles of those words,
  huge (200 KB), or not strings (numbers, lists, None); input schemas flat, nested (chains
  of 2 to 500 levels, arrays of objects, ``anyOf``, ``$defs``), wide (up to 100,000
  properties, 5,000 ``anyOf`` branches), with non-string keys and non-dict values;
  duplicate and colliding names, many identical tools (ties), HostTools and triples mixed;
  queries drawn from the tools' own names (exact, other case, padded), their words, stop
  words, huge, random text; limits valid and not; server filters of known and unknown
  names, or a lone string.

Properties (any violation raises AssertionError):

- building never raises; ``search`` raises only ValueError, and exactly for a query that is
  not a string, a limit that is not an int from 1 to MAX_SEARCH_LIMIT, or servers given
  as a string;
- hits: at most ``limit``, distinct (unless a tool was given twice), each an indexed
  ``(name, server, tool)`` of an allowed server, scores finite and > 0, sorted by score
  (highest first), equal scores by ``(name, server, tool)``;
- exact names: when the stripped, case-folded query is an allowed tool's public or own name
  (of at most MAX_QUERY_CHARS), the first hit is such a tool;
- the servers filter keeps exactly the allowed servers' hits of the unfiltered ranking;
- the same index built from the tools in reverse order (when no ``(name, server, tool)`` is
  given twice), or with ``previous=`` the first (reusing every tool), gives the same hits
  with the same scores;
- the reference model: when every tool is plain (flat schema, short texts, at most
  MAX_SEARCH_LIMIT tools), the hits are exactly the tools that share a term with the
  query (or are named exactly by it) and their scores are those of a brute-force BM25F
  computed here (:func:`reference_scores`) from :func:`tokenize` and the formula in the
  module's docstring;
- ``tokenize``: terms are non-empty, at most MAX_TOKEN_CHARS long, without whitespace;
  lowercase letters and digits for ASCII text; the same text gives the same terms.

Run: ``python fuzz/fuzz_search.py /tmp/fz/search fuzz/corpus/search``.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._types import Tool
from mcp_proto.host import HostTool
from mcp_proto.host._search import (
    BM25_B,
    BM25_K1,
    DEFAULT_SEARCH_LIMIT,
    EXACT_MATCH_BONUS,
    FIELD_WEIGHTS,
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
    MAX_SEARCH_LIMIT,
    MAX_TOKEN_CHARS,
    SearchHit,
    ToolIndex,
    tokenize,
)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

#: Texts at most this long, at most this many parameters (and flat schemas) are "plain": no
#: bound of the index cuts them (6 x 3 x 200 < MAX_PARAM_TEXT_CHARS), so the model applies.
PLAIN_CHARS = 200
PLAIN_PARAMS = 6

WORDS = ("read", "file", "files", "reading", "git", "commit", "committed", "changes",
         "weather", "forecast", "get", "list", "listing", "the", "a", "of", "HTTP", "Server",
         "URLs", "IDs", "issue", "issues", "base64", "v2", "café", "ﬁle", "文件", "读取文件",
         "\uff46\uff49\uff4c\uff45", "ß", "İstanbul", "\ud800", "naïveBayes", "x" * 70, "42",
         "")
SEPARATORS = ("_", "-", ".", " ", "", "__", "/", "\t", ", ")
SERVERS = ("git", "fs", "weather", "time", "", "GitHub", "服务")
STOP = ("the", "a", "of", "to", "and")
BAD_LIMITS: tuple[Any, ...] = (0, -1, MAX_SEARCH_LIMIT + 1, True, 2.0, "3", None, 10**20)
_SCHEMA_KEYS = frozenset({"type", "title", "description"})


# -- drawing ----------------------------------------------------------------------------------


def draw_name(ch: Choices, plain: bool = False) -> str:
    words = [ch.pick(WORDS) for _ in range(1 + ch.below(3))]
    if ch.chance(3):  # camelCase
        words = [words[0]] + [w[:1].upper() + w[1:] for w in words[1:]]
    return ch.pick(SEPARATORS).join(words) if plain or not ch.chance(16) else "x" * 5000


def draw_text(ch: Choices, plain: bool = False) -> Any:
    k = 2 if plain else ch.below(12)
    if k == 0:
        return ch.pick((None, 5, ["read", "file"], {"a": 1}, b"file", 1.5))
    if k == 1:
        return ch.pick(WORDS) * ch.pick((1000, 40_000))
    words = [ch.pick(WORDS) for _ in range(ch.below(12))]
    return " ".join(words) if not ch.chance(4) else ch.pick(SEPARATORS).join(words)


def draw_property(ch: Choices, depth: int) -> Any:
    k = ch.below(8)
    if k == 0:
        return ch.pick((None, "string", 5, [], True))
    node: dict[str, Any] = {"type": ch.pick(("string", "integer", "object", "array"))}
    if ch.chance(2):
        node["description"] = draw_text(ch)
    if ch.chance(4):
        node["title"] = draw_text(ch)
    if depth < 6 and k == 1:
        node["properties"] = {draw_name(ch): draw_property(ch, depth + 1)
                              for _ in range(ch.below(4))}
    elif depth < 6 and k == 2:
        node["items"] = draw_property(ch, depth + 1)
    elif depth < 6 and k == 3:
        node[ch.pick(("anyOf", "oneOf", "allOf"))] = [draw_property(ch, depth + 1)
                                                     for _ in range(ch.below(3))]
    return node


def special_schema(ch: Choices) -> Any:
    k = ch.below(6)
    if k == 0:  # a chain of nested objects
        leaf: Any = {"type": "string", "description": "deep leaf"}
        for i in range(ch.pick((2, 5, 50, 500))):
            leaf = {"type": "object", "properties": {f"level{i}": leaf}}
        return leaf
    if k == 1:  # wide
        n = ch.pick((10, 200, 5000, 100_000)) if not ch.chance(2) else 300
        return {"type": "object", "properties": {
            f"p{i}": {"type": "string", "description": f"param {i}"} for i in range(n)}}
    if k == 2:
        return {"anyOf": [{"properties": {f"a{i}": {}}} for i in range(ch.pick((3, 5000)))]}
    if k == 3:
        return {"$defs": {"M": {"properties": {"street": {"description": "Street name"}}}},
                "properties": {"home": {"$ref": "#/$defs/M"}}}
    if k == 4:
        return {"properties": {5: {"description": "int key"}, "ok": "not a dict",
                               "list": [1, 2]}, "items": [{"properties": {"x": {}}}],
                "$defs": ["no"], "anyOf": "no"}
    return ch.pick(([], "schema", None, {"properties": []}, {"type": "object"}))


def draw_schema(ch: Choices) -> Any:
    if ch.chance(6):
        return special_schema(ch)
    return {"type": "object",
            "properties": {draw_name(ch): draw_property(ch, 0) for _ in range(ch.below(5))}}


def plain_schema(ch: Choices) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for _ in range(ch.below(5)):
        prop: dict[str, Any] = {"type": "string"}
        if ch.chance(2):
            prop["description"] = draw_text(ch, True)
        if ch.chance(4):
            prop["title"] = draw_text(ch, True)
        properties[draw_name(ch, True)] = prop
    return {"type": "object", "properties": properties}


def draw_tools(ch: Choices) -> list[Any]:
    """Tools; one set in three "plain" (for the reference model)."""
    tools: list[Any] = []
    plain = ch.chance(3)
    for _ in range(ch.below(10)):
        server = ch.pick(SERVERS)
        own = draw_name(ch, plain)
        public = ch.pick((own, f"{server}__{own}", own.upper(), draw_name(ch, plain)))
        title = draw_text(ch, plain) if ch.chance(3) else None
        annotations = {"title": draw_text(ch, plain)} if ch.chance(5) else None
        schema = plain_schema(ch) if plain else draw_schema(ch)
        tool = Tool(name=own, input_schema=schema, description=draw_text(ch, plain),
                    title=title, annotations=annotations)
        if ch.chance(2):
            tools.append(HostTool(name=public, server=server, tool=own, definition=tool))
        else:
            tools.append((public, server, tool))
    if tools and ch.chance(6):  # many identical tools: ties, and more than a limit
        _, server, tool = _triple(tools[0])
        tools.extend((f"same_{i:03d}", server, tool) for i in range(ch.pick((3, 60))))
    if tools and ch.chance(8):  # the same tool twice
        tools.append(tools[0])
    return tools


def draw_query(ch: Choices, tools: Sequence[Any]) -> Any:
    k = ch.below(10)
    if tools and k <= 2:
        public, _, tool = _triple(ch.pick(tools))
        name = ch.pick((public, tool.name if isinstance(tool.name, str) else ""))
        return ch.pick((name, name.upper(), f"  {name}\n", name.casefold()))
    if k <= 5:
        return " ".join(ch.pick(WORDS) for _ in range(ch.below(5)))
    if k == 6:
        return " ".join(ch.pick(STOP) for _ in range(ch.below(4)))
    if k == 7:
        return ch.pick(WORDS) * ch.pick((300, 5000)) + " file"
    if k == 8:
        return ch.take(ch.below(40)).decode("utf-8", "replace")
    return ch.pick(("", "   ", None, 5, "read file", "__", "\uff46\uff49\uff4c\uff45"))


def draw(ch: Choices) -> tuple[list[Any], Any, Any, Any]:
    tools = draw_tools(ch)
    query = draw_query(ch, tools)
    limit: Any = ch.pick((1, 2, 3, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT))
    if ch.chance(8):
        limit = ch.pick(BAD_LIMITS)
    servers: Any = None
    if ch.chance(3):
        servers = [ch.pick((*SERVERS, "unknown")) for _ in range(ch.below(3))]
        if ch.chance(8):
            servers = ch.pick(SERVERS)
    return tools, query, limit, servers


def read_raw(data: bytes) -> tuple[list[Any], Any, Any, Any]:
    lines = data.decode("utf-8", "replace").split("\n")
    query = lines[0]
    limit = int(lines[1]) if len(lines) > 1 and lines[1].isdigit() and len(lines[1]) < 6 \
        else DEFAULT_SEARCH_LIMIT
    tools: list[Any] = []
    for line in lines[2:]:
        parts = [*line.split("\t"), "", "", "", ""][:4]
        server, public, description, params = parts
        properties: dict[str, Any] = {}
        for item in params.split(";") if params else ():
            key, _, text = item.partition("=")
            properties[key] = {"type": "string", "description": text} if text else {}
        own = public.rsplit("__", 1)[-1]
        tools.append((public, server, Tool(name=own, description=description or None,
                                           input_schema={"type": "object",
                                                         "properties": properties})))
    return tools, query, limit, None


# -- the reference model ----------------------------------------------------------------------


def _triple(item: Any) -> tuple[str, str, Tool]:
    if isinstance(item, tuple):
        return item[0], item[1], item[2]
    return item.name, item.server, item.definition


def _identity(item: Any) -> tuple[str, str, str]:
    public, server, tool = _triple(item)
    own = item.tool if isinstance(item, HostTool) else tool.name
    return public, server, own if isinstance(own, str) else ""


def _title(tool: Tool) -> str | None:
    if isinstance(tool.title, str) and tool.title:
        return tool.title
    if isinstance(tool.annotations, dict):
        title = tool.annotations.get("title")
        if isinstance(title, str) and title:
            return title
    return None


def is_plain(tools: Sequence[Any]) -> bool:
    """Every tool's texts short and its schema flat: nothing the index bounds is cut."""
    if len(tools) > MAX_SEARCH_LIMIT:
        return False
    for item in tools:
        public, server, own = _identity(item)
        tool = _triple(item)[2]
        texts = [public, server, own, _title(tool) or "",
                 tool.description if isinstance(tool.description, str) else ""]
        schema = tool.input_schema
        if not isinstance(schema, dict) or set(schema) - {"type", "properties"}:
            return False
        props = schema.get("properties", {})
        if not isinstance(props, dict) or len(props) > PLAIN_PARAMS:
            return False
        for key, sub in props.items():
            if not isinstance(key, str) or not isinstance(sub, dict) or set(sub) - _SCHEMA_KEYS:
                return False
            texts.append(key)
            texts.extend(v for k, v in sub.items() if k != "type" and isinstance(v, str))
        if any(len(t) > PLAIN_CHARS for t in texts):
            return False
    return True


def _fields(item: Any) -> list[list[str]]:
    """A plain tool's fields' terms, in :data:`FIELD_WEIGHTS` order, as documented."""
    public, server, own = _identity(item)
    tool = _triple(item)[2]
    names = tokenize(public[:MAX_NAME_CHARS])
    own_terms = tokenize(own[:MAX_NAME_CHARS])
    if not set(own_terms) <= set(names):
        names += own_terms
    props = tool.input_schema.get("properties", {})
    texts = [sub[k] for sub in props.values() for k in ("title", "description")
             if isinstance(sub.get(k), str) and sub[k]]
    description = tool.description if isinstance(tool.description, str) else ""
    return [names, tokenize(_title(tool) or ""), tokenize(description),
            tokenize(" ".join(props)), tokenize(" ".join(texts)), tokenize(server)]


def reference_scores(tools: Sequence[Any], query: str) -> dict[tuple[str, str, str], float]:
    """Brute-force BM25F of plain ``tools`` for ``query`` (every tool with a score > 0)."""
    docs = [(_identity(item), _fields(item)) for item in tools]
    n = len(docs)
    weights = list(FIELD_WEIGHTS.values())
    avg = []
    for f in range(len(weights)):
        lengths = [len(fields[f]) for _, fields in docs if fields[f]]
        avg.append(sum(lengths) / len(lengths) if lengths else 1.0)
    text = query[:MAX_QUERY_CHARS]
    known = {t for _, fields in docs for bag in fields for t in bag}
    terms = list(dict.fromkeys(t for t in tokenize(text) if t in known))[:MAX_QUERY_TERMS]
    key = text.strip().casefold()
    scores: dict[tuple[str, str, str], float] = {}
    idf_sum = 0.0
    for t in terms:
        df = sum(1 for _, fields in docs if any(t in bag for bag in fields))
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        idf_sum += idf
        for ident, fields in docs:
            x = sum(weights[f] * fields[f].count(t)
                    / (1 - BM25_B + BM25_B * len(fields[f]) / avg[f])
                    for f in range(len(weights)) if fields[f])
            if x:
                scores[ident] = scores.get(ident, 0.0) + idf * x * (BM25_K1 + 1) / (BM25_K1 + x)
    for ident, _ in docs:
        names = {ident[0].strip().casefold(), ident[2].strip().casefold()} - {""}
        if key and key in names and len(ident[0]) <= MAX_QUERY_CHARS:
            scores[ident] = (scores.get(ident, 0.0) + (BM25_K1 + 1) * idf_sum
                             + EXACT_MATCH_BONUS)
    return scores


# -- the properties ---------------------------------------------------------------------------


def check_tokenize(text: str) -> None:
    try:
        terms = tokenize(text)
    except Exception as exc:
        escaped("tokenize", exc)
    assert terms == tokenize(text), "tokenize is not deterministic"
    for term in terms:
        assert term and len(term) <= MAX_TOKEN_CHARS, f"bad term {term[:80]!r}"
        assert not any(c.isspace() for c in term), f"whitespace in term {term[:80]!r}"
        if term.isascii():
            assert all(c.islower() or c.isdigit() for c in term), f"term {term!r}"


def _search(index: ToolIndex, query: Any, limit: Any, servers: Any) -> list[SearchHit] | None:
    bad = (not isinstance(query, str) or type(limit) is not int
           or not 1 <= limit <= MAX_SEARCH_LIMIT or isinstance(servers, str))
    try:
        hits = index.search(query, limit=limit, servers=servers)
    except ValueError:
        assert bad, "ValueError for a valid query, limit and servers"
        return None
    except Exception as exc:
        escaped("ToolIndex.search", exc)
    assert not bad, f"no ValueError for query {type(query).__name__}, limit {limit!r}, " \
                    f"servers {type(servers).__name__}"
    return hits


def check_hits(hits: list[SearchHit], indexed: set[tuple[str, str, str]], limit: int,
               allowed: set[str] | None, unique: bool) -> None:
    assert len(hits) <= limit, f"{len(hits)} hits > limit {limit}"
    for h in hits:
        assert (h.name, h.server, h.tool) in indexed, "a hit that is not an indexed tool"
        assert allowed is None or h.server in allowed, "a hit of a server not asked for"
        assert math.isfinite(h.score) and h.score > 0, f"score {h.score!r}"
    if unique:
        assert len({(h.name, h.server, h.tool) for h in hits}) == len(hits), "repeated hits"
    for a, b in itertools.pairwise(hits):
        assert a.score >= b.score, "hits not sorted by score"
        if a.score == b.score:
            assert (a.name, a.server, a.tool) <= (b.name, b.server, b.tool), "tie order"


def check_exact(hits: list[SearchHit], tools: Sequence[Any], query: str,
                allowed: set[str] | None) -> None:
    key = query[:MAX_QUERY_CHARS].strip().casefold()
    if not key:
        return
    named = {ident for ident in map(_identity, tools)
             if (allowed is None or ident[1] in allowed)
             and any(len(n) <= MAX_QUERY_CHARS and n.strip().casefold() == key
                     for n in (ident[0], ident[2]))}
    if named:
        assert hits and (hits[0].name, hits[0].server, hits[0].tool) in named, (
            "an exact name match is not first")


def check_model(index: ToolIndex, tools: Sequence[Any], query: str) -> None:
    model = reference_scores(tools, query)
    hits = index.search(query, limit=MAX_SEARCH_LIMIT)
    got = {(h.name, h.server, h.tool): h.score for h in hits}
    assert set(got) == set(model), (
        f"hits differ from the model: {sorted(set(got) ^ set(model))[:3]!r}"[:300])
    for ident, score in got.items():
        assert math.isclose(score, model[ident], rel_tol=1e-9), (
            f"score {score!r} != model {model[ident]!r} for {ident!r}"[:300])


def check(data: bytes) -> None:
    if data[:1] and data[0] >= 0x80:
        tools, query, limit, servers = draw(Choices(data[1:]))
    else:
        tools, query, limit, servers = read_raw(data)
    if isinstance(query, str):
        check_tokenize(query)
    try:
        index = ToolIndex(tools)
        again = ToolIndex(list(reversed(tools)))
        reused = ToolIndex(tools, previous=index)
    except Exception as exc:
        escaped("ToolIndex", exc)
    assert reused.reused == len(index) == len(tools), "previous= did not reuse every tool"
    hits = _search(index, query, limit, servers)
    if hits is None:
        return
    indexed = set(map(_identity, tools))
    # a (name, server, tool) given twice is indexed twice, in the order given (HostCore
    # never gives one twice): only then may the order of the tools change the hits
    unique = len(indexed) == len(tools)
    if unique:
        assert hits == again.search(query, limit=limit, servers=servers), "order changed hits"
    assert hits == reused.search(query, limit=limit, servers=servers), "previous= changed hits"
    allowed = None if servers is None else set(servers)
    check_hits(hits, indexed, limit, allowed, unique)
    check_exact(hits, tools, query, allowed)
    if allowed is not None:
        everything = index.search(query, limit=MAX_SEARCH_LIMIT)
        if len(everything) < MAX_SEARCH_LIMIT:
            kept = [h for h in everything if h.server in allowed][:limit]
            assert hits == kept, "the servers filter is not the ranking's allowed hits"
    if unique and is_plain(tools):
        check_model(index, tools, query)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
