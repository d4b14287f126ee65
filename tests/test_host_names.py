"""Public tool names and tool filters of the host layer (``mcp_proto.host._names``)."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.host import _names
from mcp_proto.host._names import (
    DEFAULT_MAX_LENGTH,
    NAME_MODES,
    NamePolicy,
    ToolFilter,
    ToolNames,
    assign_names,
    clean_name,
)

PORTABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,62}")


def h8(server: str, tool: str) -> str:
    """The documented suffix, computed here independently of the module."""
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]


def hashed(base: str, server: str, tool: str, max_length: int = DEFAULT_MAX_LENGTH) -> str:
    return f"{base[:max_length - 9]}_{h8(server, tool)}"


def as_dict(names: ToolNames) -> dict[str, tuple[str, str]]:
    return dict(names.items())


# -- plain names, sanitising, length ----------------------------------------------------------

def test_plain_names_and_the_map() -> None:
    names = assign_names({"github": ["create_issue", "list_repos"], "fs": ["read_file"]})
    assert as_dict(names) == {
        "fs__read_file": ("fs", "read_file"),
        "github__create_issue": ("github", "create_issue"),
        "github__list_repos": ("github", "list_repos"),
    }
    assert names.public("github", "create_issue") == "github__create_issue"
    assert names.resolve("fs__read_file") == ("fs", "read_file")
    assert list(names) == ["fs__read_file", "github__create_issue", "github__list_repos"]
    assert len(names) == 3
    assert "fs__read_file" in names
    assert "read_file" not in names
    assert 42 not in names
    assert names.of_server("github") == {"create_issue": "github__create_issue",
                                         "list_repos": "github__list_repos"}
    with pytest.raises(KeyError):
        names.public("github", "nope")
    with pytest.raises(KeyError):
        names.public("fs", "create_issue")
    with pytest.raises(KeyError):
        names.resolve("github__nope")


def test_names_do_not_depend_on_declaration_order() -> None:
    one = assign_names({"b": ["x", "y"], "a": ["y", "x"]})
    two = assign_names({"a": ["x", "y"], "b": ["y", "x"]})
    assert one == two
    assert as_dict(one) == as_dict(two)


def test_of_server_for_an_empty_or_unknown_server() -> None:
    names = assign_names({"empty": [], "s": ["t"]})
    assert names.of_server("empty") == {}
    assert names.of_server("missing") == {}
    names.of_server("s")["t"] = "changed"  # a copy
    assert names.public("s", "t") == "s__t"


@pytest.mark.parametrize(("server", "tool", "expected"), [
    ("my server.v2", "x", "my_server_v2__x"),
    ("github", "issue.create", "github__issue_create"),
    ("github", "issue create/now", "github__issue_create_now"),
    ("ünï", "t", "_n___t"),                     # ü -> _, then a leading _ is fine as is
    ("café", "thé", "caf___th_"),
    ("srv", "🙂x", "srv___x"),                   # one code point outside the BMP: one _
    ("1password", "get", "_1password__get"),    # leading digit
    ("-dash", "get", "_-dash__get"),            # leading -
    ("", "t", "__t"),
    ("a-b", "c-d", "a-b__c-d"),                 # - is valid inside
])
def test_sanitising(server: str, tool: str, expected: str) -> None:
    names = assign_names({server: [tool]})
    assert names.public(server, tool) == expected
    assert names.resolve(expected) == (server, tool)


@pytest.mark.parametrize(("text", "expected"), [
    ("ok_name-1", "ok_name-1"), ("3d", "_3d"), ("-x", "_-x"), ("", "_"), ("a.b c", "a_b_c"),
    ("Ω", "_"), ("_x", "_x"),
])
def test_clean_name(text: str, expected: str) -> None:
    assert clean_name(text) == expected


def test_bare_names_are_sanitised_too() -> None:
    names = assign_names({"s": ["3d", "", "a.b"]}, NamePolicy(mode="never"))
    assert as_dict(names) == {"_3d": ("s", "3d"), "_": ("s", ""), "a_b": ("s", "a.b")}


def test_a_name_exactly_at_the_limit_is_kept() -> None:
    tool = "t" * (DEFAULT_MAX_LENGTH - len("srv__"))
    name = assign_names({"srv": [tool]}).public("srv", tool)
    assert name == "srv__" + tool
    assert len(name) == 63


def test_a_name_one_over_the_limit_is_cut_and_hashed() -> None:
    tool = "t" * (DEFAULT_MAX_LENGTH - len("srv__") + 1)
    name = assign_names({"srv": [tool]}).public("srv", tool)
    assert len("srv__" + tool) == 64
    assert name == "srv__" + "t" * (54 - 5) + "_" + h8("srv", tool)
    assert len(name) == 63
    assert PORTABLE.fullmatch(name)


def test_a_very_long_name_and_a_long_server() -> None:
    server, tool = "S" * 300, "T" * 300
    name = assign_names({server: [tool]}).public(server, tool)
    assert name == "S" * 54 + "_" + h8(server, tool)


def test_max_length_64_and_the_minimum() -> None:
    tool = "t" * 59
    assert assign_names({"srv": [tool]}, NamePolicy(max_length=64)).public("srv", tool) \
        == "srv__" + tool
    policy = NamePolicy(max_length=10)
    assert assign_names({"srv": ["tools"]}, policy).public("srv", "tools") == "srv__tools"
    name = assign_names({"srv": ["tools2"]}, policy).public("srv", "tools2")
    assert name == "s_" + h8("srv", "tools2")
    assert len(name) == 10


def test_a_leading_underscore_added_by_sanitising_counts_in_the_length() -> None:
    server = "9" + "x" * 57  # "_9xxx...__t" is 58 + 1 + 3 + 1 = 63 + 1 = 64 > 63
    name = assign_names({server: ["tt"]}).public(server, "tt")
    assert len("_" + server + "__tt") == 63
    assert name == "_" + server + "__tt"
    name = assign_names({server: ["ttt"]}).public(server, "ttt")
    assert name == hashed("_" + server + "__ttt", server, "ttt")


# -- collisions ---------------------------------------------------------------------------------

def test_cleaning_collision_on_one_server_hashes_both() -> None:
    names = assign_names({"s": ["a.b", "a_b", "other"]})
    assert as_dict(names) == {
        f"s__a_b_{h8('s', 'a.b')}": ("s", "a.b"),
        f"s__a_b_{h8('s', 'a_b')}": ("s", "a_b"),  # the literal a_b does not win
        "s__other": ("s", "other"),
    }


def test_separator_collision_is_routed_by_the_map_never_by_splitting() -> None:
    listing = {"x": ["y__z"], "x__y": ["z"]}
    names = assign_names(listing)
    one, two = names.public("x", "y__z"), names.public("x__y", "z")
    assert one == f"x__y__z_{h8('x', 'y__z')}"
    assert two == f"x__y__z_{h8('x__y', 'z')}"
    assert names.resolve(one) == ("x", "y__z")
    assert names.resolve(two) == ("x__y", "z")


def test_a_tool_named_with_the_separator_alone_is_not_split() -> None:
    names = assign_names({"s": ["a__b"], "t": ["b"]})
    assert names.resolve("s__a__b") == ("s", "a__b")
    with pytest.raises(KeyError):
        names.resolve("s__a")
    names = assign_names({"s": ["a__b"], "s__a": ["b"]})
    assert len(set(names)) == 2
    assert names.resolve(names.public("s", "a__b")) == ("s", "a__b")
    assert names.resolve(names.public("s__a", "b")) == ("s__a", "b")
    assert "s__a__b" not in names  # both hashed: neither owns the plain name


def test_a_hashed_name_colliding_with_a_literal_one_moves_both() -> None:
    """Second order: ``a.b`` and ``a_b`` collide and take hashed names; a third tool is
    literally named like one of those hashed names.  All three end up distinct, and the
    literal tool does not keep its clean name just because it was there first."""
    literal = f"a_b_{h8('s', 'a.b')}"
    listing = {"s": ["a.b", "a_b", literal]}
    names = assign_names(listing)
    assert len(set(names)) == 3
    assert names.public("s", "a_b") == f"s__a_b_{h8('s', 'a_b')}"
    # the literal's clean name was the hashed name of a.b: both moved on
    assert names.public("s", literal) == hashed(f"s__{literal}", "s", literal)
    assert names.public("s", "a.b") not in {f"s__{literal}", f"s__a_b_{h8('s', 'a.b')}"}
    assert names.public("s", "a.b").startswith("s__a_b_")
    for tool in listing["s"]:
        assert names.resolve(names.public("s", tool)) == ("s", tool)
    # and the result is the same in any order
    for order in ([literal, "a_b", "a.b"], ["a_b", literal, "a.b"]):
        assert assign_names({"s": order}) == names


def test_a_cut_name_colliding_with_a_literal_one() -> None:
    long_tool = "x" * 80
    cut = hashed("s__" + long_tool, "s", long_tool)
    literal = cut[len("s__"):]
    names = assign_names({"s": [long_tool, literal]})
    assert len(set(names)) == 2
    assert cut not in names  # neither keeps it
    assert names.resolve(names.public("s", long_tool)) == ("s", long_tool)
    assert names.resolve(names.public("s", literal)) == ("s", literal)


def test_long_names_sharing_their_start_stay_distinct() -> None:
    common = "get_" + "very_long_" * 7
    tools = [common + "alpha", common + "beta"]
    names = assign_names({"srv": tools})
    assert as_dict(names) == {hashed("srv__" + t, "srv", t): ("srv", t) for t in tools}


# Two long tools whose cut prefixes are equal and whose 8-digit hashes coincide (found by a
# birthday search): the salt-0 forms are one name, so both need the next form.
COLLIDING = ("a" * 60 + "4a70", "a" * 60 + "26307")


def test_the_colliding_pair_really_collides() -> None:
    assert h8("s", COLLIDING[0]) == h8("s", COLLIDING[1]) == "632900d8"


def test_a_real_hash_collision_moves_both_to_a_salted_hash() -> None:
    names = assign_names({"s": list(COLLIDING)})
    plain = "s__" + "a" * 51 + "_632900d8"
    assert plain not in names
    assert len(set(names)) == 2
    for tool in COLLIDING:
        public = names.public("s", tool)
        assert public.startswith("s__" + "a" * 51 + "_") and len(public) == 63
        assert names.resolve(public) == ("s", tool)


def test_exhausted_forms_fall_back_to_a_free_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one hash attempt the pair above has no form left: the fallback probes hash + 1,
    hash + 2 ... in sorted (server, tool) order."""
    monkeypatch.setattr(_names, "_HASH_ATTEMPTS", 1)
    first, second = sorted(COLLIDING)
    names = assign_names({"s": list(COLLIDING), "t": ["x"]})
    cut = "s__" + "a" * 51
    assert names.public("s", first) == f"{cut}_{0x632900d8 + 1:08x}"
    assert names.public("s", second) == f"{cut}_{0x632900d8 + 2:08x}"
    assert names.public("t", "x") == "t__x"
    assert assign_names({"t": ["x"], "s": list(reversed(COLLIDING))}) == names


def test_the_probe_skips_taken_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_names, "_HASH_ATTEMPTS", 1)
    cut = "s__" + "a" * 51
    squatter = f"{cut}_{0x632900d8 + 1:08x}"[len("s__"):]  # takes the first probe's name
    names = assign_names({"s": [*COLLIDING, squatter]})
    assert names.public("s", squatter) == "s__" + squatter
    first, second = sorted(COLLIDING)
    assert names.public("s", first) == f"{cut}_{0x632900d8 + 2:08x}"
    assert names.public("s", second) == f"{cut}_{0x632900d8 + 3:08x}"


def test_a_tool_listed_twice_gets_one_name() -> None:
    names = assign_names({"s": ["x", "y", "x"]})
    assert as_dict(names) == {"s__x": ("s", "x"), "s__y": ("s", "y")}
    names = assign_names({"s": iter(["x", "x"])}, NamePolicy(mode="never"))
    assert as_dict(names) == {"x": ("s", "x")}  # no self-collision, no hash


# -- modes --------------------------------------------------------------------------------------

def test_collisions_mode_prefixes_only_the_colliding_tools() -> None:
    policy = NamePolicy(mode="collisions")
    before = assign_names({"s1": ["search", "fetch"]}, policy)
    assert as_dict(before) == {"fetch": ("s1", "fetch"), "search": ("s1", "search")}
    after = assign_names({"s1": ["search", "fetch"], "s2": ["search", "other"]}, policy)
    assert as_dict(after) == {
        "fetch": ("s1", "fetch"),          # unchanged
        "other": ("s2", "other"),
        "s1__search": ("s1", "search"),    # renamed: this is what "collisions" costs
        "s2__search": ("s2", "search"),
    }
    assert [n for n in before if n not in after] == ["search"]


def test_collisions_mode_after_cleaning_and_on_one_server() -> None:
    policy = NamePolicy(mode="collisions")
    names = assign_names({"a": ["x.y"], "b": ["x_y"]}, policy)
    assert as_dict(names) == {"a__x_y": ("a", "x.y"), "b__x_y": ("b", "x_y")}
    # On one server the prefix does not separate them: then the hash does.
    names = assign_names({"s": ["x.y", "x_y"]}, policy)
    assert as_dict(names) == {f"s__x_y_{h8('s', 'x.y')}": ("s", "x.y"),
                              f"s__x_y_{h8('s', 'x_y')}": ("s", "x_y")}


def test_collisions_mode_second_order() -> None:
    """Two ``x`` collide and become ``s1__x`` / ``s2__x``; a third server has a tool
    literally named ``s1__x``: that bare name and the prefixed one collide, and both move."""
    policy = NamePolicy(mode="collisions")
    names = assign_names({"s1": ["x"], "s2": ["x"], "s3": ["s1__x"]}, policy)
    assert as_dict(names) == {
        f"s1__x_{h8('s1', 'x')}": ("s1", "x"),
        "s2__x": ("s2", "x"),
        "s3__s1__x": ("s3", "s1__x"),
    }


def test_never_mode_uses_bare_names_and_hashes_collisions() -> None:
    policy = NamePolicy(mode="never")
    names = assign_names({"s1": ["search", "fetch"], "s2": ["search"]}, policy)
    assert as_dict(names) == {
        "fetch": ("s1", "fetch"),
        f"search_{h8('s1', 'search')}": ("s1", "search"),
        f"search_{h8('s2', 'search')}": ("s2", "search"),
    }
    assert "search" not in names  # never shadowed


def test_a_custom_separator() -> None:
    names = assign_names({"gh": ["x"]}, NamePolicy(separator="-"))
    assert names.public("gh", "x") == "gh-x"


# -- reserved names -----------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "listing", "reserved", "expected"), [
    ("always", {"mcp": ["call"]}, {"mcp__call"}, {f"mcp__call_{h8('mcp', 'call')}"}),
    ("collisions", {"s": ["mcp_call", "x"]}, {"mcp_call"}, {"s__mcp_call", "x"}),
    ("never", {"s": ["mcp_call"]}, {"mcp_call"}, {f"mcp_call_{h8('s', 'mcp_call')}"}),
])
def test_reserved_names_are_never_public(mode: str, listing: dict[str, list[str]],
                                         reserved: set[str], expected: set[str]) -> None:
    policy = NamePolicy(mode=mode, reserved=reserved)  # type: ignore[arg-type]
    names = assign_names(listing, policy)
    assert set(names) == expected
    assert not set(names) & reserved


def test_a_reserved_name_in_collisions_mode_that_the_prefix_also_hits() -> None:
    policy = NamePolicy(mode="collisions", reserved=("x", "s__x"))
    names = assign_names({"s": ["x"]}, policy)
    assert list(names) == [f"s__x_{h8('s', 'x')}"]


# -- ToolNames ----------------------------------------------------------------------------------

def test_close_matches() -> None:
    names = assign_names({"github": ["create_issue", "list_issues"], "fs": ["read_file"]})
    assert names.close_matches("create_issue")[0] == "github__create_issue"  # the bare tool
    assert names.close_matches("github__create_isue")[0] == "github__create_issue"
    assert names.close_matches("GitHub__Create_Issue")[0] == "github__create_issue"
    assert names.close_matches("zzzzzzzz") == ()
    assert len(names.close_matches("github__", n=1)) <= 1
    with pytest.raises(ValueError, match="n must be"):
        names.close_matches("x", n=0)


def test_tool_names_equality_repr_and_hash() -> None:
    one = assign_names({"s": ["b", "a"]})
    assert one == assign_names({"s": ["a", "b"]})
    assert one != assign_names({"s": ["a"]})
    assert one != {"s__a": ("s", "a")}
    assert repr(one) == "ToolNames({'s__a': ('s', 'a'), 's__b': ('s', 'b')})"
    with pytest.raises(TypeError):
        hash(one)


def test_tool_names_built_by_hand_are_checked() -> None:
    policy = NamePolicy(reserved={"r"})
    names = ToolNames({"ok": ("s", "t")}, policy)
    assert names.resolve("ok") == ("s", "t")
    assert names.public("s", "t") == "ok"
    for bad in ({"9x": ("s", "t")}, {"r": ("s", "t")}, {"a.b": ("s", "t")},
                {"a" * 64: ("s", "t")}, {"a": ("s", "t"), "b": ("s", "t")}):
        with pytest.raises(ValueError):
            ToolNames(bad, policy)


# -- input checks and policy validation ---------------------------------------------------------

def test_bad_listings_raise_type_error() -> None:
    with pytest.raises(TypeError, match="one string"):
        assign_names({"s": "tool"})
    with pytest.raises(TypeError, match="tool names must be strings"):
        assign_names({"s": [1]})  # type: ignore[list-item]
    with pytest.raises(TypeError, match="server names must be strings"):
        assign_names({1: ["t"]})  # type: ignore[dict-item]


@pytest.mark.parametrize("kwargs", [
    {"mode": "sometimes"}, {"max_length": 9}, {"max_length": 65}, {"max_length": True},
    {"max_length": 63.0}, {"separator": ""}, {"separator": "."}, {"separator": "_" * 9},
])
def test_bad_policies_raise_value_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        NamePolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_reserved_is_a_frozenset_and_the_policy_frozen() -> None:
    policy = NamePolicy(reserved=["a", "b", "a"])
    assert policy.reserved == frozenset({"a", "b"})
    assert isinstance(policy.reserved, frozenset)
    assert hash(policy) == hash(NamePolicy(reserved={"b", "a"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.mode = "never"  # type: ignore[misc]
    with pytest.raises(TypeError):
        NamePolicy(reserved="mcp_call")
    with pytest.raises(TypeError):
        NamePolicy(reserved=[1])  # type: ignore[list-item]
    assert NamePolicy("never").mode == "never"
    assert NamePolicy().mode == "always"


def test_forms_are_finite_and_distinct() -> None:
    for mode in NAME_MODES:
        forms = list(NamePolicy(mode=mode).forms("s", "t"))
        assert len(forms) == len(set(forms)) <= 2 + _names._HASH_ATTEMPTS
    assert list(NamePolicy(mode="collisions").forms("s", "t"))[:2] == ["t", "s__t"]


# -- filters ------------------------------------------------------------------------------------

def test_filter_defaults_allow_everything() -> None:
    f = ToolFilter()
    assert f.allows("anything") and f.allows("")


def test_filter_include_globs_and_exclude_wins() -> None:
    f = ToolFilter(include=["read_*", "list_?", "exact"], exclude=["*_secret", "list_x"])
    assert f.allows("read_file")
    assert f.allows("list_a")
    assert f.allows("exact")
    assert not f.allows("exactly")
    assert not f.allows("list_ab")
    assert not f.allows("read_secret")  # included by read_*, excluded by *_secret
    assert not f.allows("list_x")
    assert not f.allows("write_file")


def test_filter_is_case_sensitive_and_supports_sets() -> None:
    f = ToolFilter(include=["Read*", "v[0-9]", "[!a-z]*"])
    assert f.allows("ReadFile")
    assert not f.allows("readfile")
    assert f.allows("v1") and not f.allows("vx")
    assert f.allows("_private")
    assert not f.allows("zeta")


def test_filter_exclude_only_and_empty_include() -> None:
    f = ToolFilter(exclude=["delete_*"])
    assert f.allows("read") and not f.allows("delete_repo")
    assert not ToolFilter(include=[]).allows("read")


def test_filter_special_characters_are_literal_outside_globs() -> None:
    f = ToolFilter(include=["a.b", "x+y", "(p)"])
    assert f.allows("a.b") and not f.allows("axb")
    assert f.allows("x+y") and f.allows("(p)")


def test_filter_unknown_patterns() -> None:
    f = ToolFilter(include=["read_*", "raed_file", "read_*"], exclude=["nope", "*_x"])
    assert f.unknown(["read_file", "write_x"]) == ("raed_file", "nope")
    assert f.unknown([]) == ("read_*", "raed_file", "nope", "*_x")
    assert ToolFilter().unknown(["a"]) == ()


def test_filter_from_spec_normalises_and_is_frozen() -> None:
    f = ToolFilter.from_spec(["a*"], None)
    assert f == ToolFilter(("a*",), ())
    assert f.include == ("a*",) and f.exclude == ()
    assert ToolFilter.from_spec(None, ["b"]) == ToolFilter(exclude=["b"])
    assert hash(ToolFilter(["a"])) == hash(ToolFilter(("a",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.include = None  # type: ignore[misc]
    with pytest.raises(TypeError, match="one string"):
        ToolFilter(include="read_*")
    with pytest.raises(TypeError, match="one string"):
        ToolFilter(exclude="x")
    with pytest.raises(TypeError, match="strings"):
        ToolFilter(include=[None])  # type: ignore[list-item]


def test_a_filtered_tool_is_not_named() -> None:
    """The host filters before naming: a filtered tool neither takes a name nor pushes a
    listed one into a collision."""
    f = ToolFilter(exclude=["a_b"])
    tools = ["a.b", "a_b"]
    names = assign_names({"s": [t for t in tools if f.allows(t)]})
    assert as_dict(names) == {"s__a_b": ("s", "a.b")}


# -- properties ---------------------------------------------------------------------------------

# Names from a broad alphabet that collides a lot after cleaning: _ . - digits, separators,
# non-ASCII (accents, CJK, an emoji, a lone surrogate as JSON can produce) and long strings.
_ALPHABET = st.sampled_from([*"ab_.-1 Z", "é", "漢", "🙂", "\ud800", "__", "\0"])
_SHORT = st.lists(_ALPHABET, max_size=6).map("".join)
_NAME = st.one_of(
    _SHORT,
    # long names sharing their start, so that cut names collide
    st.builds(lambda a, n, b: a + "x" * n + b, _SHORT, st.integers(45, 80), _SHORT),
    st.text(max_size=70),
)
_LISTING = st.dictionaries(_NAME, st.lists(_NAME, max_size=8), max_size=6)
_POLICY = st.builds(
    NamePolicy,
    mode=st.sampled_from(NAME_MODES),
    max_length=st.sampled_from([10, 16, 63, 64]),
    reserved=st.frozensets(st.sampled_from(["a", "_", "a_b", "b__a", "mcp_call", "_1"]),
                           max_size=3),
)


@settings(max_examples=120, deadline=None)
@given(listing=_LISTING, policy=_POLICY, seed=st.integers(0, 2**16))
def test_names_are_valid_unique_invertible_and_order_free(
        listing: dict[str, list[str]], policy: NamePolicy, seed: int) -> None:
    names = assign_names(listing, policy)
    pairs = {(s, t) for s, tools in listing.items() for t in tools}
    assert len(names) == len(pairs)
    valid = re.compile(rf"[A-Za-z_][A-Za-z0-9_-]{{0,{policy.max_length - 1}}}")
    for server, tool in pairs:
        public = names.public(server, tool)
        assert valid.fullmatch(public), public
        assert public not in policy.reserved
        assert names.resolve(public) == (server, tool)
        assert names.of_server(server)[tool] == public
    assert sorted(names) == list(names)
    # shuffled server order and tool order (and duplicated tools) give the same map
    rng = random.Random(seed)
    servers = list(listing)
    rng.shuffle(servers)
    shuffled = {}
    for server in servers:
        tools = list(listing[server]) * rng.randint(1, 2)
        rng.shuffle(tools)
        shuffled[server] = tools
    assert assign_names(shuffled, policy).items() == names.items()


@settings(max_examples=80, deadline=None)
@given(listing=_LISTING, policy=_POLICY)
def test_no_pair_keeps_a_first_form_it_shares(listing: dict[str, list[str]],
                                              policy: NamePolicy) -> None:
    """Fairness: when two pairs want the same first name, neither gets it; and every name is
    one of the pair's own forms (or, never in practice, the probe)."""
    names = assign_names(listing, policy)
    first: dict[str, int] = {}
    for server, tools in listing.items():
        for tool in set(tools):
            name = next(policy.forms(server, tool))
            first[name] = first.get(name, 0) + 1
    for public, (server, tool) in names.items():
        assert first.get(public, 0) <= 1 or next(policy.forms(server, tool)) != public
        assert public in set(policy.forms(server, tool))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", "x__y", "y__x", "_", "x_y", "x.y"]),
                min_size=1, max_size=4),
       st.lists(st.sampled_from(["x", "y", "x__y", "y__x", "_", "x_y", "x.y"]),
                min_size=1, max_size=4))
def test_separator_games_always_route_back(servers: list[str], tools: list[str]) -> None:
    listing = {s: tools for s in servers}
    for mode in NAME_MODES:
        names = assign_names(listing, NamePolicy(mode=mode))
        assert {names.resolve(n) for n in names} == {(s, t) for s in servers for t in tools}


# -- the worst case --------------------------------------------------------------------------

@pytest.mark.parametrize("mode", NAME_MODES)
def test_sixty_four_servers_of_the_same_two_hundred_tools(mode: str) -> None:
    """The worst case for the collision rounds: every server lists the same 200 tools, so in
    ``collisions`` and ``never`` mode every name collides; all 12 800 still get unique,
    valid names (its cost is measured in benchmarks/bench_host.py, not asserted here)."""
    listing = {f"server{i}": [f"tool_{j}" for j in range(200)] for i in range(64)}
    names = assign_names(listing, NamePolicy(mode=mode))  # type: ignore[arg-type]
    assert len(names) == 64 * 200
    assert all(PORTABLE.fullmatch(n) for n in names)
