"""Tool search over 10,000 tools: building the index, rebuilding it, searching it; beside a
naive scan (the floor) and ``rank_bm25`` when it is installed, in one run.

    python benchmarks/bench_search.py [--quick] [--json PATH]

* **the tools**: 10,000 synthetic but realistic tools of 40 servers (the services MCP
  servers wrap: GitHub, Slack, Kubernetes, Postgres, a filesystem ...), each server with its
  own naming style (``snake_case``, ``camelCase``, ``kebab-case``, ``dotted.names``), names
  made of a verb, a resource and sometimes a qualifier, descriptions of one to four
  sentences, 1 to 6 parameters with descriptions; the same seed every run.
* **build**: ``ToolIndex(tools)`` from scratch (wall time, and this process's CPU time
  beside it); **rebuild**: ``ToolIndex(tools,
  previous=index)`` after one server's listing changed (its 250 tools are new objects, the
  rest reused), what a host does on ``list_changed``.
* **search**: the median time per query over a mix of queries (a verb and a resource,
  sentences, exact tool names, single words, words no tool has): **cold** on a fresh index
  (the first search of a term computes its postings' weights) and **warm** (the same
  queries again).
* **naive scan (floor)**: each tool's text lower-cased once beforehand; per query, for
  every tool, the number of times each query word occurs in its text (``str.count``), then
  the 10 best (``heapq.nlargest``): no index, no library, every tool read per query.
* **rank_bm25** (``BM25Okapi`` over the same terms, one field): if it is importable; it is
  not a dependency of mcp-proto and is not installed for this run.
* **quality** (information): for queries made of a verb and a resource, how often the top
  hit is a tool named with both; for exact-name queries, how often the named tool is first.

Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - rank_bm25 is imported only where it is measured
from __future__ import annotations

import heapq
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

TOOLS = 10_000
SEED = 24
#: server -> (naming style, resources); verbs are shared.
SERVERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "github": ("snake", ("issue", "pull request", "branch", "commit", "repository", "release",
                         "workflow run", "gist", "label", "review comment")),
    "gitlab": ("snake", ("merge request", "pipeline", "project", "issue", "tag", "runner")),
    "jira": ("camel", ("issue", "sprint", "board", "epic", "comment", "worklog", "filter")),
    "linear": ("camel", ("issue", "cycle", "team", "project", "label", "attachment")),
    "slack": ("snake", ("message", "channel", "thread", "reaction", "user", "reminder",
                        "file", "emoji")),
    "discord": ("snake", ("message", "guild", "channel", "role", "member", "webhook")),
    "notion": ("kebab", ("page", "database", "block", "comment", "user")),
    "confluence": ("camel", ("page", "space", "attachment", "comment", "label")),
    "filesystem": ("snake", ("file", "directory", "file info", "symlink", "archive")),
    "gdrive": ("camel", ("file", "folder", "permission", "revision", "shared drive")),
    "s3": ("kebab", ("bucket", "object", "object version", "multipart upload", "policy")),
    "postgres": ("snake", ("table", "row", "query", "index", "schema", "view", "extension")),
    "mysql": ("snake", ("table", "row", "query", "database", "user")),
    "mongodb": ("camel", ("collection", "document", "index", "aggregation", "database")),
    "redis": ("dotted", ("key", "hash", "list", "stream", "channel")),
    "kubernetes": ("kebab", ("pod", "deployment", "service", "namespace", "config map",
                             "secret", "node", "job", "log")),
    "docker": ("snake", ("container", "image", "volume", "network", "compose project")),
    "aws": ("dotted", ("instance", "lambda function", "log group", "alarm", "stack",
                       "security group")),
    "gcp": ("dotted", ("instance", "cloud function", "bucket", "service account")),
    "azure": ("camel", ("resource group", "virtual machine", "storage account", "key vault")),
    "stripe": ("snake", ("customer", "invoice", "payment intent", "subscription", "refund",
                         "product", "price")),
    "shopify": ("camel", ("order", "product", "customer", "inventory item", "fulfillment")),
    "salesforce": ("camel", ("account", "contact", "opportunity", "lead", "case")),
    "hubspot": ("snake", ("contact", "company", "deal", "ticket", "email campaign")),
    "gmail": ("snake", ("email", "draft", "label", "thread", "attachment")),
    "calendar": ("camel", ("event", "calendar", "attendee", "free busy slot", "reminder")),
    "zoom": ("snake", ("meeting", "recording", "webinar", "participant")),
    "weather": ("snake", ("forecast", "weather alert", "current condition", "air quality")),
    "time": ("snake", ("current time", "time zone", "time conversion")),
    "maps": ("camel", ("place", "route", "geocode", "distance matrix", "elevation")),
    "browser": ("snake", ("page", "screenshot", "tab", "cookie", "console log", "element")),
    "fetch": ("snake", ("url", "web page", "feed")),
    "search": ("kebab", ("web result", "news article", "image result", "video result")),
    "sentry": ("snake", ("issue", "event", "release", "project", "alert rule")),
    "datadog": ("snake", ("metric", "monitor", "dashboard", "log", "incident", "trace")),
    "pagerduty": ("camel", ("incident", "service", "schedule", "escalation policy")),
    "figma": ("kebab", ("file", "component", "comment", "frame", "style")),
    "spotify": ("camel", ("track", "playlist", "album", "artist", "queue")),
    "memory": ("snake", ("entity", "relation", "observation", "knowledge graph")),
    "sqlite": ("snake", ("table", "query", "insight", "schema")),
}
VERBS = ("get", "list", "create", "update", "delete", "search", "add", "remove", "archive",
         "restore", "export", "import", "sync", "move", "copy", "start", "stop", "restart",
         "approve", "close", "reopen", "assign", "merge", "publish", "download", "upload")
QUALIFIERS = ("", "", "", "by id", "for user", "in bulk", "details", "history", "status",
              "summary", "by name", "batch", "v2")
OPENERS = ("{Verb}s {a} {res} in {Server}.", "{Verb} {a} {res} on {Server}.",
           "Use this tool to {verb} {a} {res}.", "{Verb}s one or more {res}s.",
           "Tool that can {verb} {res}s for the authenticated user.")
EXTRAS = ("Returns the {res} as JSON with its id, name and timestamps.",
          "Requires the {res} id; use the list tool first to find it.",
          "Supports pagination with page and per_page parameters.",
          "Results are sorted by creation date, newest first.",
          "Fails if the {res} does not exist or the token lacks permission.",
          "Only works within the allowed workspace.",
          "The operation is asynchronous; poll the status tool to see when it is done.",
          "Do not use this for {other}s; use the dedicated tool instead.",
          "Rate limited to 100 requests per minute.",
          "Deleted items can be restored within 30 days.")
PARAMS = (("id", "The {res} id"), ("name", "Name of the {res}"), ("query", "Search query"),
          ("limit", "Maximum number of results"), ("page", "Page number"),
          ("cursor", "Pagination cursor from a previous call"),
          ("owner", "Account or organization that owns the {res}"),
          ("path", "Path to the {res}"), ("state", "Filter by state: open, closed or all"),
          ("labels", "Labels to filter by"), ("since", "Only items updated after this date"),
          ("body", "Text content of the {res}"), ("dry_run", "Preview without changing"),
          ("region", "Region where the {res} lives"), ("tags", "Tags to attach"))
NO_MATCH = ("xyzzy", "plugh frobnicate", "zzqx")


def _style(words: list[str], style: str) -> str:
    parts = [w for word in words for w in word.split()]
    if style == "camel":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    return {"snake": "_", "kebab": "-", "dotted": "."}[style].join(parts)


def make_tools(n: int = TOOLS, seed: int = SEED) -> list[tuple[str, str, Any]]:
    """(public name, server, Tool) x ``n``: ``n / 40`` tools per server, names unique."""
    C.setup_path()
    from mcp_proto._types import Tool
    rng = random.Random(seed)
    per_server = n // len(SERVERS)
    tools: list[tuple[str, str, Any]] = []
    for server, (style, resources) in SERVERS.items():
        seen: set[str] = set()
        while len(seen) < per_server:
            verb, res = rng.choice(VERBS), rng.choice(resources)
            qualifier = rng.choice(QUALIFIERS)
            name = _style([verb, res, *([qualifier] if qualifier else [])], style)
            if name in seen:
                name = f"{name}{'_' if style == 'snake' else ''}{len(seen)}"
            seen.add(name)
            fmt = {"verb": verb, "Verb": verb.capitalize(), "res": res,
                   "a": "an" if res[0] in "aeiou" else "a", "Server": server.capitalize(),
                   "other": rng.choice(resources)}
            sentences = [rng.choice(OPENERS), *rng.sample(EXTRAS, rng.randint(0, 3))]
            params = rng.sample(PARAMS, rng.randint(1, 6))
            schema = {"type": "object", "properties": {
                _style([res.split()[-1], key] if key in ("id", "name") else [key], style):
                    {"type": "string", "description": text.format(**fmt)}
                for key, text in params}}
            tools.append((f"{server}__{name}", server, Tool(
                name=name, description=" ".join(s.format(**fmt) for s in sentences),
                input_schema=schema)))
    return tools


def make_queries(tools: list[tuple[str, str, Any]], n: int, seed: int = SEED
                 ) -> list[tuple[str, str, Any]]:
    """(kind, query, expected) x ``n``: kinds ``pair`` (a verb and a resource: expected the
    pair), ``sentence``, ``exact`` (a tool's own name: expected the tools of that name),
    ``word``, ``none``."""
    rng = random.Random(seed + 1)
    out: list[tuple[str, str, Any]] = []
    for i in range(n):
        kind = ("pair", "pair", "sentence", "exact", "word", "none")[i % 6]
        verb = rng.choice(VERBS)
        res = rng.choice(rng.choice(list(SERVERS.values()))[1])
        if kind == "pair":
            out.append((kind, f"{verb} {res}", (verb, res)))
        elif kind == "sentence":
            out.append((kind, f"how do I {verb} {'an' if res[0] in 'aeiou' else 'a'} {res} "
                              f"in {rng.choice(list(SERVERS))}", None))
        elif kind == "exact":
            own = rng.choice(tools)[2].name  # several servers may have a tool of that name
            out.append((kind, own, {p for p, _, t in tools if t.name == own}))
        elif kind == "word":
            out.append((kind, rng.choice((verb, res.split()[-1])), None))
        else:
            out.append((kind, rng.choice(NO_MATCH), None))
    return out


def tool_text(tool: Any) -> str:
    props = tool.input_schema.get("properties", {})
    return " ".join([tool.name, tool.description or "", *props,
                     *(p.get("description", "") for p in props.values())]).lower()


def naive_search(texts: list[str], query: str, limit: int = 10) -> list[int]:
    """The floor: every tool read per query, no index."""
    words = query.lower().split()
    scores = [(sum(text.count(w) for w in words), -i) for i, text in enumerate(texts)]
    return [-i for score, i in heapq.nlargest(limit, scores) if score]


def _per_query(fn: Any, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append(time.perf_counter() - t0)
    return out


def collect(*, quick: bool) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto._types import Tool
    from mcp_proto.host._search import ToolIndex, tokenize
    repeats, n_queries = (2, 60) if quick else (5, 300)
    t0 = time.perf_counter()
    tools = make_tools()
    out: dict[str, Any] = {"tools": len(tools), "servers": len(SERVERS), "repeats": repeats,
                           "queries": n_queries, "generate_s": time.perf_counter() - t0}
    queries = make_queries(tools, n_queries)
    texts = [q for _, q, _ in queries]
    build: list[float] = []
    build_cpu: list[float] = []
    index = ToolIndex(tools)
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        index = ToolIndex(tools)
        build.append(time.perf_counter() - t0)
        build_cpu.append(time.process_time() - c0)
    out["build_s"] = build
    out["build_cpu_s"] = build_cpu
    out["terms"] = repr(index)
    # one server's listing changes: new objects for its tools, the rest reused
    changed = [(p, s, Tool(name=t.name, description=t.description,
                           input_schema=t.input_schema)) if s == "slack" else (p, s, t)
               for p, s, t in tools]
    rebuild: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        again = ToolIndex(changed, previous=index)
        rebuild.append(time.perf_counter() - t0)
    out["rebuild_s"] = rebuild
    out["rebuild_reused"] = again.reused
    fresh = ToolIndex(tools)
    out["search_cold_s"] = _per_query(fresh.search, texts)
    out["search_warm_s"] = _per_query(fresh.search, texts)
    out["search_limit50_s"] = _per_query(lambda q: fresh.search(q, limit=50), texts)
    t0 = time.perf_counter()
    lowered = [tool_text(t) for _, _, t in tools]
    out["naive_prepare_s"] = time.perf_counter() - t0
    out["naive_s"] = _per_query(lambda q: naive_search(lowered, q), texts)
    # quality (information)
    names = [p for p, _, _ in tools]
    quality: dict[str, list[int]] = {"ours_pair": [], "naive_pair": [], "ours_exact": [],
                                     "naive_exact": []}
    for kind, query, expected in queries:
        ours = [h.name for h in fresh.search(query, limit=1)]
        naive = [names[i] for i in naive_search(lowered, query, 1)]
        if kind == "pair":
            verb, res = expected
            want = set(tokenize(f"{verb} {res}"))
            quality["ours_pair"].append(bool(ours) and want <= set(tokenize(ours[0])))
            quality["naive_pair"].append(bool(naive) and want <= set(tokenize(naive[0])))
        elif kind == "exact":
            quality["ours_exact"].append(bool(ours) and ours[0] in expected)
            quality["naive_exact"].append(bool(naive) and naive[0] in expected)
    out["quality"] = {k: sum(v) / len(v) if v else None for k, v in quality.items()}
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        out["rank_bm25"] = ("rank_bm25 not installed (not a dependency of mcp-proto; "
                            "pip install rank-bm25 to compare)")
    else:
        corpus = [tokenize(text) for text in lowered]
        t0 = time.perf_counter()
        bm25 = BM25Okapi(corpus)
        out["rank_bm25_build_s"] = time.perf_counter() - t0

        def peer(q: str) -> list[int]:
            scores = bm25.get_scores(tokenize(q))
            return heapq.nlargest(10, range(len(scores)), key=scores.__getitem__)

        out["rank_bm25"] = _per_query(peer, texts)
    return out


def print_report(out: dict[str, Any]) -> None:
    med = statistics.median
    build, rebuild = med(out["build_s"]), med(out["rebuild_s"])
    cold, warm = med(out["search_cold_s"]), med(out["search_warm_s"])
    naive = med(out["naive_s"])
    peer = out["rank_bm25"]
    rows = [
        C.Row(f"build ToolIndex({out['tools']} tools) vs naive prepare (lower-case texts)",
              build, out["naive_prepare_s"], "s", target="< 1 s", ok=build < 1.0),
        C.Row(f"rebuild, one server changed ({out['rebuild_reused']} reused) vs build",
              rebuild, build, "s", target="(compare)"),
        C.Row("search, cold (first use of its terms) vs naive scan (floor)", cold, naive, "s",
              target="a few ms", ok=cold < 0.005),
        C.Row("search, warm vs naive scan (floor)", warm, naive, "s", target="a few ms",
              ok=warm < 0.005),
        C.Row("search limit=50, warm vs naive scan (floor)",
              med(out["search_limit50_s"]), naive, "s", target="(compare)"),
    ]
    if isinstance(peer, list):
        rows.append(C.Row("search, warm vs rank_bm25 BM25Okapi get_scores + top 10", warm,
                          med(peer), "s", target="(compare)"))
        rows.append(C.Row("build vs rank_bm25 BM25Okapi(corpus)", build,
                          out["rank_bm25_build_s"], "s", target="(compare)"))
    C.print_table(f"search: {out['tools']} tools of {out['servers']} servers, median of "
                  f"{out['repeats']} builds and over {out['queries']} queries; 'SDK' column "
                  f"= the comparison named in the row", rows)
    if not isinstance(peer, list):
        print(f"rank_bm25: {peer}")
    print(f"build CPU time (this process only; wall time above includes waiting for the "
          f"CPU on a busy machine): median {med(out['build_cpu_s']) * 1000:.0f} ms, best "
          f"{min(out['build_cpu_s']) * 1000:.0f} ms")
    p95 = sorted(out["search_warm_s"])[int(0.95 * (len(out["search_warm_s"]) - 1))]
    print(f"search warm p95: {p95 * 1000:.2f} ms; slowest: "
          f"{max(out['search_cold_s']) * 1000:.2f} ms cold; index: {out['terms']}")
    q = out["quality"]
    print(f"quality: top hit named with the query's verb and resource: ours "
          f"{q['ours_pair']:.0%}, naive {q['naive_pair']:.0%}; exact name first: ours "
          f"{q['ours_exact']:.0%}, naive {q['naive_exact']:.0%}\n")


def main(argv: list[str] | None = None) -> int:
    return C.quick_main(__doc__, collect, print_report, argv)


if __name__ == "__main__":
    sys.exit(main())
