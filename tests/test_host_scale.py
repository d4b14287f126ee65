"""HostCore at scale, pure: what it keeps between calls (tools, every tool, definitions per
target, normalized schemas, the lookup behind close matches) always equals what computing it
again gives, and is dropped whenever a listing, a name or a server's state changes."""

from __future__ import annotations

import difflib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mcp_proto import Tool
from mcp_proto.host import (
    TOOL_TARGETS,
    HostConfig,
    HostCore,
    HostTool,
    NamePolicy,
    RestartPolicy,
    SchemaError,
    ServerSpec,
    UnknownTool,
    _listing,
    _state,
)
from mcp_proto.host._names import FUZZY_SCAN_LIMIT, ToolNames, assign_names
from mcp_proto.host._tools import tool_definitions
from mcp_proto.host.schema._normalize import normalize_schema

POLICY = RestartPolicy(initial_delay=1.0, multiplier=2.0, max_delay=8.0, max_attempts=3,
                       stable_after=10.0)
#: A schema every target refuses (the root is not an object).
REFUSED: dict[str, Any] = {"type": "string"}


def schema(*params: str) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string", "description": p}
                                             for p in params}, "required": list(params[:1])}


def tool(name: str, *params: str, description: str | None = None,
         input_schema: dict[str, Any] | None = None) -> Tool:
    return Tool(name=name, description=description or f"{name} does things",
                input_schema=schema(*params) if input_schema is None else input_schema)


def spec(name: str, **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=("srv", name), **fields)


def core(*specs: ServerSpec, **kwargs: Any) -> HostCore:
    kwargs.setdefault("restart", POLICY)
    return HostCore(HostConfig(servers={s.name: s for s in specs}), **kwargs)


def run(c: HostCore, name: str, now: float, tools: list[Tool]) -> int:
    incarnation = c.begin_start(name, now)
    c.start_succeeded(name, incarnation, now, tools)
    return incarnation


# -- the uncached computations: what the caches must equal ----------------------------------


def offered(c: HostCore, server: str) -> bool:
    return c.state(server) in ("running", "backoff", "starting") or c.is_held(server)


def first_definition(c: HostCore, server: str, name: str) -> Tool:
    return next(t for t in c.server_tools(server) if t.name == name)


def every_tool(c: HostCore) -> list[HostTool]:
    out = []
    for public in c.tool_names():  # sorted by public name
        server, name = c.tool_names().resolve(public)
        out.append(HostTool(name=public, server=server, tool=name,
                            definition=first_definition(c, server, name)))
    return out


def callable_tools(c: HostCore) -> list[HostTool]:
    return [t for t in every_tool(c) if offered(c, t.server)]


def uncached(c: HostCore, target: str) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    definitions, refused = tool_definitions(callable_tools(c), target)
    return definitions, [(name, str(exc)) for name, exc in refused]


def check(c: HostCore, targets: tuple[str, ...] = TOOL_TARGETS) -> None:
    """Everything HostCore keeps equals its computation from scratch."""
    expected = callable_tools(c)
    assert c.tools() == expected
    assert c.all_tools() == every_tool(c)
    for t in expected:
        assert c.tool(t.name) == t
    for t in every_tool(c):
        if t not in expected:
            with pytest.raises(UnknownTool):
                c.tool(t.name)
    for target in targets:
        definitions, refused = uncached(c, target)
        assert c.definitions(target) == definitions
        assert [(name, str(exc)) for name, exc in c.refused(target)] == refused


# -- one listing at a time ------------------------------------------------------------------


def test_tool_agrees_with_tools_and_unknown_names_get_close_matches() -> None:
    c = core(spec("git"), spec("web"))
    run(c, "git", 0.0, [tool("status"), tool("log", "n"), tool("status", "dup")])
    run(c, "web", 0.0, [tool("fetch", "url"), tool("bad", input_schema=REFUSED)])
    check(c)
    assert c.tool("git__status").definition == tool("status")  # the first of a name listed twice
    assert c.tool("git__status").annotations is None
    with pytest.raises(UnknownTool) as info:
        c.tool("git__statu")
    assert info.value.close_matches[0] == "git__status"
    with pytest.raises(UnknownTool) as bare:
        c.tool("fetch")
    assert bare.value.close_matches == ("web__fetch",)


def test_the_lists_returned_are_the_callers() -> None:
    c = core(spec("s"))
    run(c, "s", 0.0, [tool("a"), tool("b"), tool("bad", input_schema=REFUSED)])
    for get in (c.tools, c.all_tools, lambda: c.definitions("anthropic"),
                lambda: c.refused("anthropic")):
        first = get()
        expected = list(first)
        assert expected
        first.clear()  # a caller's change to its copy leaves what is kept whole
        assert get() == expected


def test_definitions_leave_out_and_report_refused_schemas() -> None:
    c = core(spec("s"))
    run(c, "s", 0.0, [tool("good", "q"), tool("bad", input_schema=REFUSED)])
    for target in TOOL_TARGETS:
        assert [_name(d) for d in c.definitions(target)] == ["s__good"]
        [(name, error)] = c.refused(target)
        assert name == "s__bad" and isinstance(error, SchemaError) and error.target == target
    # a refused schema raises a fresh error each time (tracebacks never pile up on one)
    errors = []
    for _ in range(2):
        with pytest.raises(SchemaError) as info:
            c.normalized("s__bad", "openai")
        errors.append(info.value)
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1])


def test_an_unknown_target_is_refused_and_not_kept() -> None:
    c = core(spec("s"))
    run(c, "s", 0.0, [tool("a")])
    for ask in (c.definitions, c.refused):
        with pytest.raises(ValueError, match="unknown target"):
            ask("openai-typo")
    with pytest.raises(ValueError):
        c.normalized("s__a", "openai-typo")
    with pytest.raises(ValueError):  # not kept as an error either
        c.normalized("s__a", "openai-typo")


def _name(definition: dict[str, Any]) -> str:
    return str(definition.get("function", definition)["name"])


def test_a_new_listing_replaces_what_was_kept() -> None:
    c = core(spec("s"))
    i = run(c, "s", 0.0, [tool("a", "x"), tool("b")])
    before = c.generation
    old = c.definitions("openai")
    kept = c.normalized("s__a", "openai")
    c.tools_changed("s", i)
    assert c.generation == before  # nothing changed yet: the listing comes next
    c.tools_listed("s", i, [tool("a", "x", description="new words"), tool("c", "y")])
    assert c.generation > before
    check(c)
    new = c.definitions("openai")
    assert new != old and [_name(d) for d in new] == ["s__a", "s__c"]
    assert new[0]["function"]["description"] == "new words"
    # an equal schema listed again is not converted again; a changed one is
    assert c.normalized("s__a", "openai") is kept
    c.tools_listed("s", i, [tool("a", "x", "z")])
    assert c.normalized("s__a", "openai") is not kept
    assert "z" in c.definitions("openai")[0]["function"]["parameters"]["properties"]
    check(c)


def test_schemas_of_tools_no_longer_listed_are_dropped() -> None:
    c = core(spec("s"))
    i = run(c, "s", 0.0, [tool(f"t{n}") for n in range(20)])
    for target in TOOL_TARGETS:
        c.definitions(target)
    c.tools_listed("s", i, [tool("only")])
    c.definitions("openai")
    # the private cache: bounded by what is listed now (one entry a tool and target)
    kept = c._servers["s"].schemas
    assert {name for name, _ in kept} <= {"only"} and len(kept) <= len(TOOL_TARGETS)


@pytest.mark.parametrize(("first", "then"), [
    ("openai", "openai-responses"), ("openai-responses", "openai"),
    ("openai-strict", "openai-responses-strict"), ("openai-responses-strict", "openai-strict"),
])
def test_targets_of_one_schema_share_one_conversion(first: str, then: str) -> None:
    """The Responses targets take the Chat Completions schema: whichever is asked for first
    is converted, the other reuses it under its own name (and a changed schema is not
    reused)."""
    optional = tool("a", "x", "y")  # y is optional: strict makes it nullable
    c = core(spec("s"))
    i = run(c, "s", 0.0, [optional])
    one = c.normalized("s__a", first)
    two = c.normalized("s__a", then)
    assert (one.target, two.target) == (first, then)
    assert two.schema is one.schema and (two.strict, two.notes) == (one.strict, one.notes)
    assert two == normalize_schema(optional.input_schema, then)  # what converting gives
    assert two.fix_arguments({"x": "1", "y": None}) == one.fix_arguments({"x": "1", "y": None})
    assert c.normalized("s__a", then) is two  # kept under its own name too
    c.tools_listed("s", i, [tool("a", "x", "z")])  # a new schema: converted again
    assert "z" in c.normalized("s__a", then).schema["properties"]
    check(c, targets=(first, then))


def test_a_refused_schema_is_refused_under_each_target_of_it() -> None:
    c = core(spec("s"))
    run(c, "s", 0.0, [tool("bad", input_schema=REFUSED)])
    for target in ("openai", "openai-responses", "openai-responses-strict", "openai-strict"):
        with pytest.raises(SchemaError) as info:
            c.normalized("s__bad", target)
        assert info.value.target == target
        assert str(info.value) == str(_error(REFUSED, target))


def _error(schema: dict[str, Any], target: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        normalize_schema(schema, target)
    return info.value


def test_host_tool_is_one_class_wherever_it_is_imported_from() -> None:
    assert HostTool is _listing.HostTool is _state.HostTool


@pytest.mark.parametrize("change", ["stop", "hold", "disable", "remove", "replace", "exit",
                                    "give_up"])
def test_every_change_of_a_server_drops_what_was_kept(change: str) -> None:
    c = core(spec("a"), spec("b"), restart=None if change == "give_up" else POLICY)
    run(c, "a", 0.0, [tool("x", "p")])
    i = run(c, "b", 0.0, [tool("y", "q"), tool("z", input_schema=REFUSED)])
    check(c)
    before = c.generation
    if change == "stop":
        c.stop("b", 1.0)
    elif change == "hold":
        c.stop("b", 1.0, hold=True)  # its tools stay listed until next used
    elif change == "disable":
        c.disable("b", 1.0)
    elif change == "remove":
        c.remove("b")
    elif change == "replace":
        c.replace(spec("b", exclude_tools=("y",)), 1.0)
    else:
        c.exited("b", i, 1.0, "gone")
    assert c.generation > before
    check(c)
    names = [t.name for t in c.tools()]
    assert ("b__y" in names) == (change in ("hold", "exit"))
    assert ("b__y" in [t.name for t in c.all_tools()]) == (change in ("hold", "exit", "give_up"))


def test_a_failed_server_keeps_its_listing_for_search_and_comes_back() -> None:
    c = core(spec("s"), restart=None)
    i = run(c, "s", 0.0, [tool("a")])
    check(c)
    c.exited("s", i, 1.0, "crashed")
    assert c.state("s") == "failed"
    assert c.tools() == [] and c.definitions("openai") == []
    assert [t.name for t in c.all_tools()] == ["s__a"]
    before = c.generation
    c.begin_start("s", 2.0)  # a restart by hand: no new listing yet, the last one is offered
    assert c.generation > before
    check(c)
    assert [t.name for t in c.tools()] == ["s__a"]


def test_lazy_servers_and_filters() -> None:
    c = core(spec("lazy", include_tools=("keep*",)), spec("eager"), start="lazy")
    assert c.tools() == c.all_tools() == [] and c.definitions("gemini") == []
    run(c, "lazy", 0.0, [tool("keep_1"), tool("drop_1"), tool("keep_2")])
    check(c)
    assert [t.tool for t in c.tools()] == ["keep_1", "keep_2"]
    assert c.status(0.0)["lazy"].tools == 2


def test_renames_follow_a_new_server_under_collisions() -> None:
    c = core(spec("a"), spec("b"), names=NamePolicy(mode="collisions"))
    run(c, "a", 0.0, [tool("echo"), tool("only_a")])
    assert [_name(d) for d in c.definitions("anthropic")] == ["echo", "only_a"]
    run(c, "b", 0.0, [tool("echo")])
    assert [_name(d) for d in c.definitions("anthropic")] == ["a__echo", "b__echo", "only_a"]
    check(c)


# -- any sequence of listings and changes ----------------------------------------------------

SERVERS = ("a", "b", "c.d")
POOL = [tool("echo", "text"), tool("echo", "other"), tool("x__y"), tool("read.file", "path"),
        tool("bad", input_schema=REFUSED), tool("Echo", description="case"),
        tool("nested", input_schema={"type": "object", "properties": {
            "o": {"type": "object", "properties": {"k": {"type": "integer"}}}}})]


class CacheMachine(RuleBasedStateMachine):
    """Drives HostCore through listings, list changes, exits, edits and restarts; after
    every step what it keeps equals the computation from scratch, and an unchanged
    generation means unchanged answers."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.core = core(*(spec(n, exclude_tools=("x__y",) if n == "b" else ())
                           for n in SERVERS), names=NamePolicy(mode="collisions"))
        self.runs: dict[str, int] = {}
        self.seen: tuple[int, list[HostTool], list[dict[str, Any]]] | None = None

    def _tick(self) -> None:
        self.now += 1.0

    def _known(self, name: str) -> bool:
        return name in self.core.names()

    @rule(name=st.sampled_from(SERVERS))
    def start(self, name: str) -> None:
        self._tick()
        if self._known(name) and self.core.state(name) in ("stopped", "backoff", "failed"):
            self.runs[name] = self.core.begin_start(name, self.now)

    @rule(name=st.sampled_from(SERVERS), tools=st.lists(st.sampled_from(POOL), max_size=5))
    def succeed(self, name: str, tools: list[Tool]) -> None:
        if name in self.runs:
            self.core.start_succeeded(name, self.runs[name], self.now, tools)

    @rule(name=st.sampled_from(SERVERS), tools=st.lists(st.sampled_from(POOL), max_size=5),
          fresh=st.booleans())
    def relist(self, name: str, tools: list[Tool], fresh: bool) -> None:
        if name in self.runs:
            if fresh:  # new objects of equal schemas, as a listing again makes them
                tools = [tool(t.name, description=t.description,
                              input_schema=dict(t.input_schema)) for t in tools]
            self.core.tools_changed(name, self.runs[name])
            self.core.tools_listed(name, self.runs[name], tools)

    @rule(name=st.sampled_from(SERVERS))
    def exit(self, name: str) -> None:
        self._tick()
        if name in self.runs:
            self.core.exited(name, self.runs[name], self.now, "gone")

    @rule(name=st.sampled_from(SERVERS), hold=st.booleans())
    def stop(self, name: str, hold: bool) -> None:
        self._tick()
        if self._known(name) and (not hold or self.core.state(name) in ("running", "stopped")):
            self.core.stop(name, self.now, hold=hold)

    @rule(name=st.sampled_from(SERVERS), enable=st.booleans())
    def toggle(self, name: str, enable: bool) -> None:
        self._tick()
        if self._known(name):
            (self.core.enable if enable else self.core.disable)(name, self.now)

    @precondition(lambda self: "c.d" in self.core.names())
    @rule()
    def remove(self) -> None:
        self.core.remove("c.d")
        self.runs.pop("c.d", None)

    @precondition(lambda self: "c.d" not in self.core.names())
    @rule()
    def add(self) -> None:
        self.core.add(spec("c.d"), self.now)

    @rule(name=st.sampled_from(SERVERS[:2]), exclude=st.sampled_from([(), ("echo",)]))
    def replace(self, name: str, exclude: tuple[str, ...]) -> None:
        self._tick()
        self.core.replace(spec(name, exclude_tools=exclude), self.now)
        self.runs.pop(name, None)

    @invariant()
    def kept_equals_computed(self) -> None:
        c = self.core
        check(c, targets=("openai-strict", "gemini-openapi"))
        now = (c.generation, c.tools(), c.definitions("anthropic"))
        if self.seen is not None and self.seen[0] == now[0]:
            assert self.seen[1:] == now[1:]  # same generation: same answers
        assert self.seen is None or self.seen[0] <= now[0]
        self.seen = now


TestCacheMachine = CacheMachine.TestCase
TestCacheMachine.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


# -- close matches among many names ----------------------------------------------------------


def _old_close_matches(names: ToolNames, public: str, n: int = 3) -> tuple[str, ...]:
    """close_matches as it was before the bounded lookup: every name to difflib."""
    folded = public.casefold()
    exact = [name for name in names
             if names.resolve(name)[1] == public or name.casefold() == folded]
    out: list[str] = []
    for name in (*exact, *difflib.get_close_matches(public, list(names), n)):
        if name not in out and name != public:
            out.append(name)
    return tuple(out[:n])


_WORDS = st.text("abcdefgh_", min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(listing=st.dictionaries(st.sampled_from(["s", "t", "u.v"]),
                               st.lists(_WORDS, max_size=30), max_size=3),
       public=_WORDS, n=st.integers(1, 4))
def test_close_matches_of_a_few_names_are_unchanged(listing: dict[str, list[str]],
                                                    public: str, n: int) -> None:
    names = assign_names(listing, NamePolicy(mode="collisions"))
    assert len(names) <= FUZZY_SCAN_LIMIT
    assert names.close_matches(public, n) == _old_close_matches(names, public, n)


def _many(count: int) -> ToolNames:
    verbs = ("get", "list", "create", "delete", "update")
    listing = {f"srv{s}": [f"{verbs[i % 5]}_item_{i:04d}" for i in range(s, count, 4)]
               for s in range(4)}
    return assign_names(listing, NamePolicy())


@settings(max_examples=40, deadline=None)
@given(public=st.one_of(_WORDS, st.sampled_from(["get_item_0012", "SRV0__GET_ITEM_0000"])),
       n=st.integers(1, 5))
def test_close_matches_of_many_names_are_names_best_first(public: str, n: int) -> None:
    names = _many(2 * FUZZY_SCAN_LIMIT)
    matches = names.close_matches(public, n)
    assert len(matches) <= n and len(set(matches)) == len(matches)
    assert public not in matches and all(m in names for m in matches)
    # the bare tool name and a name in another case come first, as before
    exact = [m for m in _old_close_matches(names, public, n)
             if names.resolve(m)[1] == public or m.casefold() == public.casefold()]
    assert list(matches[:len(exact)]) == exact


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, b, a).ratio()  # as get_close_matches computes it


def test_close_matches_of_many_names_find_a_slip_anywhere_but_both_ends() -> None:
    names = _many(1000)
    assert "srv1__get_item_0025" in names and "srv0__get_item_0020" in names
    assert names.close_matches("get_item_0020")[0] == "srv0__get_item_0020"  # the bare tool
    assert names.close_matches("SRV0__GET_ITEM_0020")[0] == "srv0__get_item_0020"
    for slip in ("srv1__get_itm_0025", "srv1__gte_item_0025", "srv1_get_item_0025",
                 "srv1__get_item_0025x", "xsrv1__get_item_0025", "srv1__get_item_25",
                 "srv1__get_item_0052", "srv1__getitem_0025"):
        # as good a best match as difflib finds among every name (names with equal ratios
        # are as good), from the few neighbours it sees now
        matches, every = names.close_matches(slip), _old_close_matches(names, slip)
        assert _ratio(slip, matches[0]) == _ratio(slip, every[0]), slip
        assert ("srv1__get_item_0025" in matches) >= ("srv1__get_item_0025" in every), slip
    assert names.close_matches("zzzzzzzz") == ()


def _deep(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object"}
    node = root
    for _ in range(levels):  # built in a loop: no recursion to make it
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"p": child}
        node = child
    return root


def test_a_schema_too_deep_to_compare_is_converted_again_not_crashed_on() -> None:
    c = core(spec("s"))
    i = run(c, "s", 0.0, [tool("deep", input_schema=_deep(50_000)), tool("ok")])
    assert [name for name, _ in c.refused("openai")] == ["s__deep"]
    c.tools_listed("s", i, [tool("deep", input_schema=_deep(50_000)), tool("ok")])
    assert [name for name, _ in c.refused("openai")] == ["s__deep"]
    assert [_name(d) for d in c.definitions("openai")] == ["s__ok"]
