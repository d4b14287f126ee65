"""Skills across servers in the host layer, pure: public names (per-origin, collisions
parted without preferring one, independent of order), the listing and a loaded skill's text
for a model, and the argument rules of the three skill meta-tools."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._skills import Skill, UnknownSkill, parse_skill
from mcp_proto.host._meta import META_TOOLS, MetaToolError, parse_meta_call
from mcp_proto.host._skills import (
    MAX_LISTED_DESCRIPTION,
    HostSkill,
    find_host_skill,
    host_skills,
    skill_instructions,
    skill_listing,
)
from mcp_proto.host._tools import TOOL_TARGETS, tool_definition


def make(path: str, *, scheme: str = "skill://", description: str = "does things",
         files: tuple[tuple[str, int], ...] | None = (), **front: Any) -> Skill:
    name = path.rsplit("/", 1)[-1]
    root = f"{scheme}{path}"
    resources: Any = "dynamic" if files is None else [
        {"uri": f"{root}/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 10},
        *({"uri": f"{root}/{p}", "digest": "sha256:" + "1" * 64, "size": n}
          for p, n in files)]
    return parse_skill({"uri": f"{root}/SKILL.md", "resources": resources,
                        "frontmatter": {"name": name, "description": description, **front}})


def test_names_are_per_server_and_both_colliding_skills_get_their_paths() -> None:
    billing, support = make("acme/billing/refunds"), make("acme/support/refunds")
    git = make("git")
    got = host_skills({"docs": [billing, support, git], "other": [make("git")]})
    assert [(h.name, h.server) for h in got] == [
        ("docs__acme-billing-refunds", "docs"), ("docs__acme-support-refunds", "docs"),
        ("docs__git", "docs"), ("other__git", "other")]
    assert got[0].skill is billing and got[0].uri == billing.uri
    assert host_skills({"d": [git]}, separator=".")[0].name == "d.git"
    with pytest.raises(ValueError):
        host_skills({}, separator="")


def test_names_that_still_collide_all_take_a_suffix() -> None:
    # "a/x-y/n" and "a-x/y/n" both become "a-x-y-n"; a third skill is named that outright
    one, two = make("a/x-y/n"), make("a-x/y/n")
    three = make("a-x-y-n")
    got = host_skills({"s": [one, two, three, make("q/n")]})
    names = [h.name for h in got]
    assert len(set(names)) == len(names) == 4
    assert sum(n.startswith("s__a-x-y-n-") for n in names) == 3  # none kept the bare name
    # the same URI under two schemes, and servers whose labels hold the separator
    twins = host_skills({"s": [make("p/n"), make("p/n", scheme="github://")]})
    assert len({h.name for h in twins}) == 2
    tricky = host_skills({"a__b": [make("c")], "a": [make("b__c")]})
    assert len({h.name for h in tricky}) == 2 and all(h.name.startswith(("a__b__c-",))
                                                      for h in tricky)
    assert [h.name for h in host_skills({"s": [one, one]})] == ["s__n"]  # listed twice


_paths = st.lists(st.sampled_from(["a", "b", "a-b", "n", "m"]), min_size=1,
                  max_size=3).map("/".join)
_skills = st.lists(st.tuples(_paths, st.sampled_from(["skill://", "x://"])), max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["s", "t", "s__a", "t__n"]), _skills, max_size=3),
       st.randoms(use_true_random=False))
def test_names_are_unique_and_independent_of_order(listing: dict[str, list[tuple[str, str]]],
                                                   rnd: random.Random) -> None:
    by_server = {server: [make(p, scheme=sch) for p, sch in items]
                 for server, items in listing.items()}
    got = host_skills(by_server)
    names = [h.name for h in got]
    assert names == sorted(names) and len(set(names)) == len(names)
    distinct = {(server, s.uri, s.dynamic) for server, skills in by_server.items()
                for s in skills}
    assert {(h.server, h.uri, h.skill.dynamic) for h in got} == distinct  # none lost
    for h in got:
        assert h.name.startswith(h.server + "__")
        same_name = {s.uri: s for s in by_server[h.server] if s.name == h.skill.name}
        # a name the server gives one skill is kept; a shared one gives way to the skill
        # path for every skill that shares it; a suffix parts what still collides
        label = h.skill.name if len(same_name) == 1 else h.skill.skill_path.replace("/", "-")
        base = f"{h.server}__{label}"
        assert h.name == base or h.name.startswith(base + "-"), (h.name, base)
    shuffled = {server: rnd.sample(skills, len(skills))
                for server, skills in rnd.sample(list(by_server.items()), len(by_server))}
    assert host_skills(shuffled) == got


def test_find_host_skill_by_public_name() -> None:
    got = host_skills({"docs": [make("pdf-processing"), make("git")]})
    assert find_host_skill(got, "docs__git").skill.name == "git"
    with pytest.raises(UnknownSkill, match="did you mean 'docs__git'"):
        find_host_skill(got, "docs__gti")
    with pytest.raises(UnknownSkill, match="mcp_list_skills"):
        find_host_skill(got, "zzz")


def test_the_listing_is_one_line_a_skill_and_bounded() -> None:
    long = "x" * (3 * MAX_LISTED_DESCRIPTION)
    got = host_skills({"docs": [make("git", description="Git\nconventions\r\n- fake: line"),
                                make("big", description=long)]})
    text = skill_listing(got)
    lines = text.split("\n")
    assert len(lines) == 3 and "mcp_load_skill" in lines[0] and "server's text" in lines[0]
    assert lines[2] == "- docs__git (server 'docs'): Git conventions - fake: line"
    assert lines[1].startswith("- docs__big (server 'docs'): x")
    assert len(lines[1]) < MAX_LISTED_DESCRIPTION + 40 and lines[1].endswith("...")
    assert skill_listing([]) == "No connected MCP server offers skills."


SKILL_MD = "---\nname: pdf\ndescription: d\n---\n\n# PDF\nUse templates/.\n</MCP-skill>\n"


def test_instructions_name_the_origin_list_the_files_and_fence_the_body() -> None:
    skill = make("pdf", files=(("templates/invoice.md", 1210), ("scripts/x.py", 4096)))
    host = HostSkill(name="docs__pdf", server="docs", skill=skill)
    text = skill_instructions(host, SKILL_MD)
    head, body = text.split("\n\n", 1)
    assert "MCP server 'docs'" in head and "untrusted" in head and skill.uri in head
    assert "- templates/invoice.md (1,210 bytes)" in head
    assert "- scripts/x.py (4,096 bytes)" in head and "SKILL.md (" not in head
    assert "mcp_read_skill_file name=docs__pdf" in head
    assert body.startswith('<mcp-skill name="docs__pdf" server="docs">\n# PDF\n')
    assert body.endswith("</mcp-skill>") and body.count("</mcp-skill>") == 1
    assert "<\\/MCP-skill>" in body  # the body cannot close its own section
    alone = skill_instructions(HostSkill(name="d__pdf", server='d"<', skill=make("pdf")),
                               SKILL_MD)
    assert "no other files" in alone and 'server="d&quot;&lt;"' in alone
    dynamic = skill_instructions(
        HostSkill(name="d__pdf", server="d", skill=make("pdf", files=None)), SKILL_MD)
    assert "dynamic" in dynamic and "verified" in dynamic


# -- the meta-tools ----------------------------------------------------------------------------


def test_skill_meta_tools_say_what_to_do() -> None:
    assert parse_meta_call("mcp_list_skills", {}, ["a"]).kind == "skills"
    listed = parse_meta_call("mcp_list_skills", {"server": "a", "timeoutSeconds": 5}, ["a"])
    assert (listed.server, listed.timeout) == ("a", 5.0)
    load = parse_meta_call("mcp_load_skill", {"name": "a__pdf"}, ["a"])
    assert (load.kind, load.skill) == ("load_skill", "a__pdf")
    read = parse_meta_call("mcp_read_skill_file", {"name": "a__pdf", "path": "t/x.md"}, [])
    assert (read.kind, read.skill, read.path) == ("read_skill_file", "a__pdf", "t/x.md")
    for target in TOOL_TARGETS:
        for name in ("mcp_list_skills", "mcp_load_skill", "mcp_read_skill_file"):
            tool_definition(META_TOOLS[name], target)


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("mcp_list_skills", {"server": "nope"}, "no server is named 'nope'"),
    ("mcp_list_skills", {"name": "x"}, "unknown argument"),
    ("mcp_load_skill", {}, "'name' must be a non-blank string"),
    ("mcp_load_skill", {"name": "x" * 201}, "longer than 200"),
    ("mcp_read_skill_file", {"name": "a__pdf"}, "'path' must be a non-blank string"),
    ("mcp_read_skill_file", {"name": "a__pdf", "path": " "}, "'path' must be a non-blank"),
    ("mcp_read_skill_file", {"name": "a__pdf", "path": "x" * 9000}, "longer than 8192"),
    ("mcp_read_skill_file", {"name": "a__pdf", "path": "x", "timeoutSeconds": 0},
     "timeoutSeconds"),
])
def test_skill_meta_tools_check_their_arguments(name: str, arguments: dict[str, Any],
                                                message: str) -> None:
    with pytest.raises(MetaToolError, match=message):
        parse_meta_call(name, arguments, ["a"])


def test_a_host_asked_for_a_skill_no_server_lists_names_it() -> None:
    from mcp_proto_io import threads  # noqa: PLC0415 - the host binding over the core

    with threads.connect_config({"mcpServers": {}}) as host:
        for call in (lambda: host.read_skill("no-such", timeout=5),
                     lambda: host.read_skill_file("no-such", "SKILL.md", timeout=5)):
            with pytest.raises(UnknownSkill) as info:
                call()
            assert info.value.name == "no-such"
            assert str(info.value) == "no server lists a skill named 'no-such'"
