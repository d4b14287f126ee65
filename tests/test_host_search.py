"""Tool search (``mcp_proto.host._search``): terms, ranking, bounds, hostile tools."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.fuzz_search import reference_scores
from mcp_proto._types import Tool
from mcp_proto.host import _search
from mcp_proto.host._search import (
    DEFAULT_SEARCH_LIMIT,
    MAX_INDEXED_CHARS,
    MAX_PARAM_DEPTH,
    MAX_PARAMS,
    MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
    MAX_SEARCH_LIMIT,
    MAX_TOKEN_CHARS,
    STOP_WORDS,
    SearchHit,
    ToolIndex,
    stem,
    tokenize,
)
from mcp_proto.host._state import HostTool


def _tool(name: str, description: str | None = None, params: dict[str, str] | None = None,
          title: str | None = None) -> Tool:
    properties = {key: {"type": "string", **({"description": text} if text else {})}
                  for key, text in (params or {}).items()}
    return Tool(name=name, description=description, title=title,
                input_schema={"type": "object", "properties": properties})


#: server -> [(tool, description, {param: description})], written after the real servers
#: (mcp-server-git, the filesystem server, the weather quickstart, mcp-server-time).
CATALOG: dict[str, list[tuple[str, str, dict[str, str]]]] = {
    "git": [
        ("git_status", "Shows the working tree status", {"repo_path": ""}),
        ("git_diff_unstaged", "Shows changes in the working directory that are not yet "
         "staged", {"repo_path": "", "context_lines": "Number of context lines"}),
        ("git_diff_staged", "Shows changes that are staged for commit",
         {"repo_path": "", "context_lines": "Number of context lines"}),
        ("git_diff", "Shows differences between branches or commits",
         {"repo_path": "", "target": "The branch or commit to compare with"}),
        ("git_commit", "Records changes to the repository",
         {"repo_path": "", "message": "The commit message"}),
        ("git_add", "Adds file contents to the staging area",
         {"repo_path": "", "files": "The files to stage"}),
        ("git_reset", "Unstages all staged changes", {"repo_path": ""}),
        ("git_log", "Shows the commit logs", {"repo_path": "", "max_count": "How many"}),
        ("git_create_branch", "Creates a new branch from an optional base branch",
         {"repo_path": "", "branch_name": "Name of the new branch",
          "base_branch": "Branch to start from"}),
        ("git_checkout", "Switches branches", {"repo_path": "", "branch_name": ""}),
        ("git_show", "Shows the contents of a commit", {"repo_path": "", "revision": ""}),
    ],
    "filesystem": [
        ("read_file", "Read the complete contents of a file as text. Deprecated: use "
         "read_text_file.", {"path": "Path of the file"}),
        ("read_text_file", "Read the complete contents of a file from the file system as "
         "text, with optional head or tail lines.", {"path": "", "head": "", "tail": ""}),
        ("read_media_file", "Read an image or audio file and return its base64 data and "
         "MIME type.", {"path": ""}),
        ("read_multiple_files", "Read the contents of multiple files at once.",
         {"paths": "Paths of the files to read"}),
        ("write_file", "Create a new file or overwrite an existing file with new content.",
         {"path": "", "content": "The text to write"}),
        ("edit_file", "Make line-based edits to a text file and return a git-style diff.",
         {"path": "", "edits": "The edits", "dryRun": "Preview only"}),
        ("create_directory", "Create a new directory or make sure a directory exists.",
         {"path": ""}),
        ("list_directory", "Get a detailed listing of all files and directories in a path.",
         {"path": ""}),
        ("move_file", "Move or rename files and directories.",
         {"source": "", "destination": ""}),
        ("search_files", "Recursively search for files and directories matching a pattern.",
         {"path": "", "pattern": "Glob pattern", "excludePatterns": ""}),
        ("get_file_info", "Retrieve detailed metadata about a file or directory: size, "
         "creation time, last modified time, permissions.", {"path": ""}),
    ],
    "weather": [
        ("get_forecast", "Get the weather forecast for a location.",
         {"latitude": "Latitude of the location", "longitude": "Longitude of the location"}),
        ("get_alerts", "Get weather alerts for a US state.",
         {"state": "Two-letter US state code"}),
    ],
    "time": [
        ("get_current_time", "Get the current time in a specific timezone.",
         {"timezone": "IANA timezone name"}),
        ("convert_time", "Convert a time between timezones.",
         {"source_timezone": "", "time": "Time in 24-hour format",
          "target_timezone": ""}),
    ],
    "github": [
        ("createIssue", "Open a new issue in a GitHub repository.",
         {"owner": "Repository owner", "repo": "Repository name", "title": "Issue title"}),
        ("listPullRequests", "List pull requests in a GitHub repository.",
         {"owner": "", "repo": "", "state": "open, closed or all"}),
        ("get-weather-report", "Unrelated tool in kebab case.", {}),
    ],
}


def catalog(prefix: bool = False) -> list[HostTool]:
    return [HostTool(name=f"{server}__{tool}" if prefix else tool, server=server, tool=tool,
                     definition=_tool(tool, description, params))
            for server, tools in CATALOG.items() for tool, description, params in tools]


INDEX = ToolIndex(catalog())


def names(hits: list[SearchHit]) -> list[str]:
    return [h.name for h in hits]


# -- terms --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "terms"), [
    ("getWeatherForecast", ["get", "weather", "forecast"]),
    ("get_weather_forecast", ["get", "weather", "forecast"]),
    ("get-weather-forecast", ["get", "weather", "forecast"]),
    ("weather.forecast.get", ["weather", "forecast", "get"]),
    ("GetWeatherForecast", ["get", "weather", "forecast"]),
    ("HTTPServer", ["http", "server"]),
    ("XMLHttpRequest", ["xml", "http", "request"]),
    ("getHTTPResponse", ["get", "http", "respons"]),
    ("URLs", ["url"]),
    ("base64Encode", ["base64", "encod"]),
    ("getV2Data", ["get", "v2", "data"]),
    ("GET /repos", ["get", "repo"]),
    ("read the file", ["read", "fil"]),
    ("naïveBayes", ["naïve", "bay"]),
    ("\uff46\uff49\uff4c\uff45", ["fil"]),  # full-width letters: NFKC
    ("\ufb01le", ["fil"]),  # the fi ligature
    ("STRASSE straße", ["strass", "strass"]),
    ("读取文件", ["读取文件"]),
    ("", []),
    ("  ...  ", []),
])
def test_tokenize(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


@pytest.mark.parametrize(("words", "same"), [
    (["file", "files"], True),
    (["commit", "commits", "committed", "committing"], True),
    (["list", "lists", "listed", "listing"], True),
    (["update", "updates", "updated", "updating"], True),
    (["query", "queries"], True),
    (["branch", "branches"], True),
    (["address", "addresses"], True),
    (["run", "running"], True),
    (["change", "changes", "changed", "changing"], True),
    (["status", "statu"], False),  # -us is not a plural
    (["string", "str"], False),  # no vowel would stay
    (["access", "acces"], False),
    (["fill", "filled"], True),  # l is not undoubled
])
def test_stem_meets_the_forms_of_a_word(words: list[str], same: bool) -> None:
    stems = {stem(w) for w in words}
    assert (len(stems) == 1) is same, stems


def test_stem_leaves_short_and_non_ascii_words() -> None:
    for word in ("is", "bus", "use", "café", "ids", "v2s", "x1ing"):
        assert stem(word) == word


def test_tokenize_drops_stop_words_and_cuts_long_runs() -> None:
    assert not set(tokenize(" ".join(sorted(STOP_WORDS))))
    assert tokenize("a" * 500) == ["a" * MAX_TOKEN_CHARS]
    assert tokenize(5) == []  # type: ignore[arg-type]


# -- ranking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "first"), [
    ("read file", "read_file"),
    ("commit changes", "git_commit"),
    ("weather forecast", "get_forecast"),
    ("current time", "get_current_time"),
    ("convert timezone", "convert_time"),
    ("create a new branch", "git_create_branch"),
    ("unstaged changes", "git_diff_unstaged"),
    ("search for files matching a pattern", "search_files"),
    ("make a directory", "create_directory"),
    ("rename a file", "move_file"),
    ("file permissions and size", "get_file_info"),
    ("open an issue on github", "createIssue"),
    ("pull requests", "listPullRequests"),
    ("alerts", "get_alerts"),
    ("commit log history", "git_log"),
])
def test_ranking_on_real_tools(query: str, first: str) -> None:
    hits = INDEX.search(query)
    assert hits and hits[0].name == first, names(hits)


def test_committing_finds_the_commit_tools() -> None:
    assert INDEX.search("committing")[0].name == "git_commit"
    assert {"git_commit", "git_log", "git_show"} <= set(names(INDEX.search("commits")))


def test_camel_case_tools_are_found_by_plain_words() -> None:
    assert INDEX.search("create issue")[0].name == "createIssue"
    assert INDEX.search("list_pull_requests")[0].name == "listPullRequests"
    assert "get-weather-report" in names(INDEX.search("weather report"))


def test_exact_name_first() -> None:
    # git_diff's words are in three other tools' names; its own name puts it first
    assert INDEX.search("git_diff")[0].name == "git_diff"
    assert INDEX.search("  GIT_DIFF \n")[0].name == "git_diff"
    assert INDEX.search("createissue")[0].name == "createIssue"


def test_exact_name_beats_a_stronger_text_match() -> None:
    tools = [("search", "a", _tool("search", "Does a thing.")),
             ("search_everything", "a", _tool("search_everything",
                                              "Search, search and search: search.",
                                              {"search": "search terms"}))]
    index = ToolIndex(tools)
    assert names(index.search("search")) == ["search", "search_everything"]
    assert names(index.search("search everything"))[0] == "search_everything"


def test_the_server_s_own_name_is_an_exact_match_too() -> None:
    index = ToolIndex(catalog(prefix=True))
    assert index.search("git_status")[0].name == "git__git_status"
    assert index.search("git__git_status")[0].name == "git__git_status"
    hit = index.search("read file")[0]
    assert (hit.name, hit.server, hit.tool) == ("filesystem__read_file", "filesystem",
                                                "read_file")


def test_hit_fields() -> None:
    tool = _tool("get_forecast", "Get the weather forecast.", title="Forecast")
    hit = ToolIndex([("weather__get_forecast", "weather", tool)]).search("forecast")[0]
    assert (hit.name, hit.server, hit.tool, hit.title) == (
        "weather__get_forecast", "weather", "get_forecast", "Forecast")
    assert hit.description == "Get the weather forecast." and hit.definition is tool
    assert hit.score > 0


def test_title_from_annotations_is_searched() -> None:
    tool = Tool(name="t1", input_schema={}, annotations={"title": "Kubernetes pods"})
    hits = ToolIndex([("t1", "k", tool)]).search("kubernetes")
    assert names(hits) == ["t1"] and hits[0].title == "Kubernetes pods"


def test_parameters_are_searched() -> None:
    assert INDEX.search("latitude longitude")[0].name == "get_forecast"
    assert INDEX.search("glob")[0].name == "search_files"
    assert INDEX.search("dry run")[0].name == "edit_file"  # camelCase parameter name


def test_nested_parameters_and_defs_are_searched() -> None:
    schema = {"type": "object", "properties": {
        "person": {"$ref": "#/$defs/Person"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"description": "stock keeping unit"}}}}},
        "$defs": {"Person": {"properties": {"birthday": {"description": "date of birth"}}}}}
    index = ToolIndex([("t", "s", Tool(name="t", input_schema=schema))])
    for query in ("birthday", "stock keeping", "sku", "person"):
        assert names(index.search(query)) == ["t"], query


def test_ties_are_broken_by_name_whatever_the_order() -> None:
    tool = _tool("same", "Fetch a web page.")
    tools = [(f"fetch_{c}", "s", tool) for c in "dbeac"]
    expected = [f"fetch_{c}" for c in "abcde"]
    for seed in range(5):
        random.Random(seed).shuffle(tools)
        hits = ToolIndex(tools).search("web page")
        assert names(hits) == expected
        assert len({h.score for h in hits}) == 1


def test_the_order_of_the_tools_does_not_change_the_results() -> None:
    tools = catalog()
    index = ToolIndex(tools)
    random.Random(1).shuffle(tools)
    other = ToolIndex(tools)
    for query in ("read file", "commit", "time zone", "git", "weather"):
        assert index.search(query, limit=50) == other.search(query, limit=50)


def test_scores_are_the_documented_bm25f() -> None:
    tools = [(t.name, t.server, t.definition) for t in catalog()]
    for query in ("read file", "commit changes", "git", "weather forecast", "git_diff"):
        model = reference_scores(tools, query)
        hits = INDEX.search(query, limit=MAX_SEARCH_LIMIT)
        assert {h.name: h.score for h in hits} == pytest.approx(
            {name: score for (name, _, _), score in model.items()}, rel=1e-9)


# -- the servers filter ---------------------------------------------------------------------


def test_servers_filter() -> None:
    hits = INDEX.search("file", servers=["git"], limit=50)
    assert hits and {h.server for h in hits} == {"git"}
    everything = INDEX.search("file", limit=50)
    assert hits == [h for h in everything if h.server == "git"]
    assert INDEX.search("file", servers=["nope"]) == []
    assert INDEX.search("file", servers=[]) == []
    assert INDEX.search("git_status", servers=("filesystem", "git"))[0].name == "git_status"
    with pytest.raises(ValueError, match="not a string"):
        INDEX.search("file", servers="git")


# -- bounds -------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "the of a", "...", "xyzzy plugh"])
def test_no_terms_or_no_match_gives_nothing(query: str) -> None:
    assert INDEX.search(query) == []


@pytest.mark.parametrize("limit", [0, -1, MAX_SEARCH_LIMIT + 1, True, 2.0, "3", None])
def test_bad_limits(limit: object) -> None:
    with pytest.raises(ValueError, match="limit"):
        INDEX.search("file", limit=limit)  # type: ignore[arg-type]


def test_limits() -> None:
    assert len(INDEX.search("file", limit=1)) == 1
    assert len(INDEX.search("file")) == DEFAULT_SEARCH_LIMIT
    many = INDEX.search("file", limit=MAX_SEARCH_LIMIT)
    assert DEFAULT_SEARCH_LIMIT < len(many) <= MAX_SEARCH_LIMIT
    assert many[:3] == INDEX.search("file", limit=3)


@pytest.mark.parametrize("query", [None, 5, b"file", ["file"]])
def test_a_query_that_is_not_a_string(query: object) -> None:
    with pytest.raises(ValueError, match="query"):
        INDEX.search(query)  # type: ignore[arg-type]


def test_a_long_query_is_cut() -> None:
    assert names(INDEX.search("x " * MAX_QUERY_CHARS + "commit")) == []
    assert INDEX.search("commit " + "x" * 10**6)[0].name in {"git_commit", "git_log",
                                                             "git_show"}


def test_only_the_first_query_terms_count() -> None:
    tools = [(f"t{i}", "s", _tool(f"t{i}", f"word{i}")) for i in range(MAX_QUERY_TERMS + 5)]
    index = ToolIndex(tools)
    query = " ".join(f"word{i}" for i in range(MAX_QUERY_TERMS + 5))
    found = set(names(index.search(query, limit=MAX_SEARCH_LIMIT)))
    assert found == {f"t{i}" for i in range(MAX_QUERY_TERMS)}


def test_a_huge_description_is_indexed_up_to_the_bound() -> None:
    description = "alpha " + "filler " * (MAX_INDEXED_CHARS // 7) + "omega " * 10**6
    index = ToolIndex([("big", "s", _tool("big", description))])
    assert names(index.search("alpha")) == ["big"]
    assert index.search("omega") == []
    assert index.search("alpha")[0].description is description


def test_wide_and_deep_schemas_are_read_within_bounds() -> None:
    wide = {"type": "object", "properties": {f"p{i}": {"description": f"d{i}"}
                                             for i in range(100_000)}}
    leaf: dict[str, object] = {"type": "string"}
    for i in range(10_000):
        leaf = {"type": "object", "properties": {f"level{i}": leaf}}
    branches = {"anyOf": [{"properties": {f"b{i}": {}}} for i in range(100_000)]}
    index = ToolIndex([("wide", "s", Tool(name="wide", input_schema=wide)),
                       ("deep", "s", Tool(name="deep", input_schema=leaf)),
                       ("branches", "s", Tool(name="branches", input_schema=branches))])
    assert names(index.search("p0")) == ["wide"]
    assert index.search(f"p{MAX_PARAMS}") == []  # past the parameter bound
    assert names(index.search("level9999")) == ["deep"]  # the top level
    assert index.search(f"level{9999 - MAX_PARAM_DEPTH}") == []  # past the depth bound
    assert names(index.search("b0")) == ["branches"]
    assert index.search("b99999") == []


def test_hostile_definitions_do_not_raise() -> None:
    odd = [
        Tool(name="a", input_schema="schema", description=5),  # type: ignore[arg-type]
        Tool(name="b", input_schema={"properties": [1]}, title=["x"]),  # type: ignore[arg-type]
        Tool(name="c", input_schema={"properties": {5: {}, "ok": "no", "x": {"anyOf": 3}}},
             annotations={"title": 7}),
        Tool(name="d\ud800", input_schema={}, description="lone \udc00 surrogate \ud800x"),
        Tool(name=7, input_schema={}),  # type: ignore[arg-type]
    ]
    index = ToolIndex([(t.name, "s", t) for t in odd[:4]]  # type: ignore[misc]
                      + [(None, 5, odd[4])])  # type: ignore[list-item]
    assert len(index) == 5
    assert names(index.search("ok")) == ["c"]
    assert names(index.search("surrogate")) == ["d\ud800"]
    assert index.search("lone \udc00 \ud800")
    hit = index.search("a")
    assert hit and hit[0].description is None


def test_items_that_are_not_tools() -> None:
    with pytest.raises(TypeError, match="triple"):
        ToolIndex([("a", "b")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="HostTool"):
        ToolIndex([object()])  # type: ignore[list-item]


def test_past_the_tool_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_search, "MAX_INDEXED_TOOLS", 3)
    index = ToolIndex([(f"t{i}", "s", _tool(f"t{i}", "same")) for i in range(5)])
    assert len(index) == 3 and index.omitted == 2
    assert names(index.search("same")) == ["t0", "t1", "t2"]


def test_empty_index() -> None:
    index = ToolIndex()
    assert len(index) == 0 and index.search("anything") == [] and index.servers == frozenset()


# -- rebuilding ---------------------------------------------------------------------------------


def test_previous_reuses_unchanged_tools() -> None:
    tools = catalog()
    first = ToolIndex(tools)
    changed = [t for t in tools if t.server != "weather"] + [
        HostTool(name="get_forecast", server="weather", tool="get_forecast",
                 definition=_tool("get_forecast", "Seven day marine forecast."))]
    second = ToolIndex(changed, previous=first)
    assert second.reused == len(changed) - 1
    fresh = ToolIndex(changed)
    for query in ("marine", "weather forecast", "read file", "git"):
        assert second.search(query, limit=50) == fresh.search(query, limit=50)
    assert second.search("marine")[0].name == "get_forecast"
    assert first.search("marine") == []  # the old index is unchanged


def test_an_index_is_searched_the_same_way_twice() -> None:
    index = ToolIndex(catalog())
    assert index.search("read file") == index.search("read file")  # weights kept


# -- any input ----------------------------------------------------------------------------------

WORDS = st.sampled_from(["read", "file", "files", "git", "commit", "Weather", "HTTP", "the",
                         "getWeather", "x_y", "café", "ß", "文件", "\ud800", "", "42"])
texts = st.lists(WORDS | st.text(max_size=8), max_size=8).map(" ".join)
names_ = st.lists(WORDS, min_size=1, max_size=3).flatmap(
    lambda ws: st.sampled_from(["_", "-", ".", ""]).map(lambda sep: sep.join(ws)))
params = st.dictionaries(names_, st.one_of(st.none(), texts), max_size=4)
tools_ = st.lists(st.tuples(names_, st.sampled_from(["git", "fs", "w"]),
                            st.one_of(st.none(), texts), params, st.booleans()), max_size=12)


def _build(specs: list[tuple[str, str, str | None, dict[str, str | None], bool]]
           ) -> tuple[ToolIndex, set[tuple[str, str, str]], list[tuple[str, str, Tool]]]:
    tools: list[tuple[str, str, Tool]] = []
    items: list[HostTool | tuple[str, str, Tool]] = []
    for i, (name, server, description, parameters, host) in enumerate(specs):
        public = f"{name}_{i}"
        tool = Tool(name=name, description=description, input_schema={
            "type": "object", "properties": {k: {"description": v} if v else {}
                                             for k, v in parameters.items()}})
        tools.append((public, server, tool))
        items.append(HostTool(name=public, server=server, tool=name, definition=tool)
                     if host else (public, server, tool))
    return ToolIndex(items), {(p, s, t.name) for p, s, t in tools}, tools


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools_, texts | st.text(max_size=30), st.integers(1, MAX_SEARCH_LIMIT),
       st.none() | st.lists(st.sampled_from(["git", "fs", "w", "other"]), max_size=2))
def test_any_query_and_tools(specs: list[tuple[str, str, str | None, dict[str, str | None],
                                               bool]],
                             query: str, limit: int, servers: list[str] | None) -> None:
    index, indexed, tools = _build(specs)
    hits = index.search(query, limit=limit, servers=servers)
    assert len(hits) <= limit
    assert all((h.name, h.server, h.tool) in indexed for h in hits)
    assert all(math.isfinite(h.score) and h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.name for h in hits}) == len(hits)
    if servers is not None:
        assert all(h.server in servers for h in hits)
    if servers is None:
        model = reference_scores(tools, query)
        best = sorted(model.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        assert {h.name: h.score for h in hits} == pytest.approx(
            {name: score for (name, _, _), score in best}, rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("aAbBzZ09_- .HTTPServer"), max_size=40))
def test_the_ascii_fast_path_gives_the_regex_words(text: str) -> None:
    """ASCII text without a case cut is split by bytes.translate, not the regex: the same
    words, lower-cased."""
    assert [w.lower() for w in _search._ASCII_WORD.findall(text)] == [
        w.lower() for w in _search._words(text)]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_tokenize_any_text(text: str) -> None:
    terms = tokenize(text)
    assert all(t and len(t) <= MAX_TOKEN_CHARS and not any(c.isspace() for c in t)
               for t in terms)
    assert terms == tokenize(text)


def _synthetic(n: int) -> list[tuple[str, str, Tool]]:
    rng = random.Random(n)
    verbs = ["get", "list", "create", "update", "delete", "search", "read", "write", "send"]
    nouns = ["file", "issue", "branch", "commit", "message", "event", "invoice", "pod",
             "bucket", "ticket", "user", "record"]
    out = []
    for i in range(n):
        verb, noun = rng.choice(verbs), rng.choice(nouns)
        name = f"{verb}_{noun}_{i}"
        out.append((name, f"server{i % 50}", _tool(
            name, f"{verb.capitalize()} a {noun} in the {rng.choice(nouns)} system.",
            {f"{noun}_id": f"The {noun} id", "limit": "How many"})))
    return out


def test_ten_thousand_tools() -> None:
    tools = _synthetic(10_000)
    index = ToolIndex(tools)
    assert len(index) == 10_000
    hits = index.search("create invoice", limit=MAX_SEARCH_LIMIT)
    assert len(hits) == MAX_SEARCH_LIMIT
    assert all(h.name.startswith("create_invoice_") for h in hits[:5])
    for public, _, _ in random.Random(0).sample(tools, 20):
        assert index.search(public)[0].name == public
    assert {h.server for h in index.search("file", servers=["server7"], limit=50)} == {
        "server7"}
    again = ToolIndex(tools, previous=index)
    assert again.reused == 10_000
    assert again.search("delete pod", limit=20) == index.search("delete pod", limit=20)
