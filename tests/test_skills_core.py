"""Skills (SEP-2640) in the core: the SKILL.md frontmatter parser, entries, paths, checks.

The frontmatter parser is held to PyYAML: random JSON-like values dumped by
``yaml.safe_dump`` (in its styles: block, flow, wide and narrow lines, ASCII-only or not)
must parse as ``yaml.safe_load`` reads them, left aside only the strings YAML 1.1 (PyYAML)
and YAML 1.2 (this parser) resolve differently; block scalars and hand-written YAML are
compared the same way.  ``parse_skill`` gets generated entries, valid and broken one field
at a time; path resolution never leaves a skill's root.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import urllib.parse
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from mcp_proto_io._sync._face import ClientFace

from mcp_proto._errors import LocalProtocolError, MCPError, RemoteProtocolError
from mcp_proto._frontmatter import (
    MAX_FRONTMATTER_BYTES,
    MAX_FRONTMATTER_DEPTH,
    FrontmatterError,
    _resolve,
    parse_frontmatter,
    split_frontmatter,
)
from mcp_proto._skills import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    AmbiguousSkill,
    InvalidSkillEntry,
    InvalidSkillPath,
    Skill,
    SkillDigestMismatch,
    SkillFileError,
    SkillFileNotListed,
    SkillFrontmatterInvalid,
    SkillFrontmatterMismatch,
    SkillSizeMismatch,
    SkillTooLarge,
    SkillVerificationError,
    UnknownSkill,
    check_skill_md,
    check_skill_size,
    find_skill,
    parse_skill,
    resolve_skill_path,
    skill_body,
    skill_contents_bytes,
    skill_file,
    verify_skill_file,
)
from mcp_proto._types import parse_read_resource_result

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
_RESOLVER = yaml.resolver.Resolver()
STR_TAG = "tag:yaml.org,2002:str"


def _fm(block: str) -> str:
    return f"---\n{block}---\n# Body\n"


def same(a: Any, b: Any) -> bool:
    """Equality that tells bool from int and takes NaN as itself."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# -- the frontmatter parser against PyYAML --------------------------------------------------


def _agreed(s: str) -> bool:
    """A string PyYAML (1.1) would write plain where this parser (1.2 core) reads no
    string (``0o17``, ``1e5``): the two YAMLs disagree, so such strings are left out."""
    return not (_RESOLVER.resolve(yaml.ScalarNode, s, (True, False)) == STR_TAG
                and type(_resolve(s, 1)) is not str)


#: YAML 1.1 breaks lines at NEL, LS and PS too (1.2 does not; PyYAML's own round trip
#: loses them): left out here, pinned by hand below.
_ONE_ONE_BREAKS = "\x85\u2028\u2029"
_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"],
                              exclude_characters=_ONE_ONE_BREAKS), max_size=30)
_strings = _text.filter(_agreed) | st.sampled_from([
    "2.1.0", "yes", "no", "on", "null", "~", "true", "False", "1_000", "0x1F", "0o17",
    "1:20", "2024-01-01", ".inf", "-.5", "a: b", "- x", "# no", "'q'", '"dq"', "a #b",
    "multi\nline\n\ntext ", " lead", "trail ", "tab\there", "\u00e9\u00ff", "[x]",
    "{y}", "&anchor", "*alias", "!tag", "|", ">", "@at", "`tick", "%pct", "", " ", "?",
]).filter(_agreed)
_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=False) | _strings)
#: Keys PyYAML writes as simple keys (an empty or multi-line one it writes as a complex
#: ``? `` key, which this parser refuses).
_keys = _strings.filter(lambda k: 0 < len(k) < 100 and not re.search(
    "[\r\n\x85\u2028\u2029]", k))
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=16)
frontmatters = st.dictionaries(_keys, json_values, max_size=6)


@SETTINGS
@given(frontmatters, st.sampled_from([None, False, True]), st.booleans(),
       st.sampled_from([80, 20, 1000]), st.sampled_from([2, 4]))
@example({"name": "pdf", "metadata": {"version": "2.1.0"}}, False, False, 80, 2)
@example({"a": ["x", {"b": [1, {"c": None}]}]}, False, True, 80, 2)
@example({"s": "x" * 30 + " " + "y" * 30 + "\n\n z  "}, None, False, 20, 2)
def test_frontmatter_agrees_with_pyyaml(value: dict[str, Any], flow: bool | None,
                                        unicode: bool, width: int, indent: int) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=unicode, width=width,
                          indent=indent, sort_keys=False)
    assume(len(text.encode()) <= MAX_FRONTMATTER_BYTES)
    expected = yaml.safe_load(text)
    # only where PyYAML reads back what it wrote (its emitter folds some escapes wrongly:
    # '0\x7f 0' at width 20 comes back with a backslash)
    assume(same(expected, value))
    got = parse_frontmatter(_fm(text))
    assert same(got, expected), text


_block_line = st.text(st.sampled_from("ab #:-'\" \t"), max_size=8)


@SETTINGS
@given(st.sampled_from("|>"), st.sampled_from(["", "-", "+"]),
       st.lists(st.tuples(st.integers(0, 3), _block_line), max_size=8),
       st.sampled_from(["", "\nnext: 1"]))
@example(">", "", [(0, "a"), (0, ""), (1, "b"), (0, "c")], "")
@example("|", "+", [(0, "a"), (0, ""), (0, "")], "\nnext: 1")
def test_block_scalars_agree_with_pyyaml(style: str, chomp: str,
                                         lines: list[tuple[int, str]], after: str) -> None:
    body = "".join("  " + " " * extra + line + "\n" if line.strip() else " " * extra + "\n"
                   for extra, line in lines)
    text = f"key: {style}{chomp}\n{body}{after.lstrip(chr(10))}\n"
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        expected = None
    try:
        got: Any = parse_frontmatter(_fm(text))
    except FrontmatterError:
        got = None
    if expected is None or got is None:
        return  # one refused: the hand cases below pin what is refused and why
    assert same(got, expected), text


HAND = [
    "name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
    "metadata:\n  version: 2.1.0\n  author: acme\nlicense: Apache-2.0\n",
    "a:\n- x\n- y: 1\n  z: [1, 2]\nb: {c: d, 'e': \"f\"}\n",
    "a: |\n  line1\n   more\n\n  end\nb: >-\n  fold\n  this\n\n  para\nc: |+\n  keep\n\nd: 1\n",
    "a: 'it''s\n  folded\n\n  x'\nb: \"esc \\t \\u00e9 \\x41\\U0001F600 \\\n   joined\"\n",
    "a: plain\n  continued\n\n  para # comment\nb: c # comment\n# full line\n",
    "list:\n  - - a\n    - b\n  - c\n  -\n  - d: 1\n    e: 2\n",
    "a: 0x1F\nb: -12\nc: .inf\nd: -.Inf\ne: ~\nf: TRUE\ng: 1.5e+3\nh: null\ni: ''\n",
    "url: http://x.example/a#b\nk:v: 1\n\"quoted key\": 2\n'single': [a: 1, b]\n",
    "a: [1, [2, [3]], {x: [y]}]\nb: {}\nc: []\nd: [\n  1,\n  2,\n]\n",
    "a: >\n  one\n    indented\n  two\n",
    "a: |2\n    two more\n  base\n",
]


@pytest.mark.parametrize("block", HAND)
def test_hand_written_frontmatter_agrees_with_pyyaml(block: str) -> None:
    assert same(parse_frontmatter(_fm(block)), yaml.safe_load(block))


def test_yaml_12_core_schema_where_it_differs_from_pyyaml() -> None:
    got = parse_frontmatter(_fm("v: 2.1.0\na: yes\nb: no\nc: on\nd: 2024-01-01\ne: 0o17\n"
                                "f: 1e5\ng: 1_000\nh: 017\ni: True\nj: .NaN\nk: 0x_1\n"))
    assert got["v"] == "2.1.0" and got["a"] == "yes" and got["b"] == "no"
    assert got["c"] == "on" and got["d"] == "2024-01-01" and got["e"] == 15
    assert got["f"] == 1e5 and type(got["f"]) is float and got["g"] == "1_000"
    assert got["h"] == 17 and got["i"] is True and math.isnan(got["j"]) and got["k"] == "0x_1"
    # NEL, LS and PS are characters in YAML 1.2, not line breaks
    assert parse_frontmatter(_fm("a: x\x85y\u2028z\n")) == {"a": "x\x85y\u2028z"}


@pytest.mark.parametrize(("block", "message"), [
    ("a: &x 1\n", "anchors"),
    ("a: *x\n", "anchors"),
    ("a: !!str 1\n", "anchors, aliases and tags"),
    ("a: 1\na: 2\n", "line 3: duplicate key 'a'"),
    ("a: {b: 1, b: 2}\n", "duplicate key"),
    ("? a\n: b\n", "complex keys"),
    ("[a]: b\n", "mapping value is not allowed"),
    ("a:\n\t- x\n", "line 3: a tab is not allowed as indentation"),
    ("a: b: c\n", "mapping value is not allowed"),
    ("a: [1, 2\n", "unterminated flow sequence"),
    ("a: 'open\n", "unterminated quoted scalar"),
    ("a: \"bad \\q\"\n", "bad escape"),
    ("1: one\n", "key '1' is not a string"),
    ("null: x\n", "is not a string"),
    ("- a\n- b\n", "must be a mapping"),
    ("just text\n", "must be a mapping"),
    ("a: 1\n...\nb: 2\n", "single YAML document"),
    ("a: 1\n  b: 2\n", "mapping value is not allowed"),
    ("a:\n  b: 1\n c: 2\n", "line 4: expected a 'key: value'"),
    ("a: |x\n  y\n", "bad block scalar header"),
    ("a: |\n\n   \n  x\n", "leading blank line is indented more"),
    ("a: - x\n", "cannot start on its key's line"),
    ("a: \x01\n", "is not allowed in YAML"),
    ("a: " + "9" * 5000 + "\n", "more than 4300 digits"),
    ("%YAML 1.2\na: 1\n", "'%' cannot start a value"),
])
def test_refused_frontmatter_names_the_problem(block: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=re.escape(message)):
        parse_frontmatter(_fm(block))


def test_the_frontmatter_block_is_delimited_and_bounded() -> None:
    assert split_frontmatter("---\na: 1\n---\nbody\n---\nmore") == ("a: 1\n",
                                                                  "body\n---\nmore")
    assert split_frontmatter("---\r\na: 1\r\n---  \r\n") == ("a: 1\n", "")
    assert parse_frontmatter("---\n---\n") == {} == parse_frontmatter("---\n---")
    assert split_frontmatter("---\ra: 1\rb: x\r\n  y\r---\rbody") == ("a: 1\nb: x\n  y\n",
                                                                      "body")
    assert parse_frontmatter("---\na: x\r  y\n---\n") == yaml.safe_load("a: x\r  y\n")
    for text, line in (("a: 1\n", 1), ("---\na: 1\n", None), ("", 1), ("--- x\n---\n", 1)):
        with pytest.raises(FrontmatterError) as info:
            parse_frontmatter(text)
        assert info.value.line == line
    big = "---\n" + "a: " + "x" * MAX_FRONTMATTER_BYTES + "\n---\n"
    with pytest.raises(FrontmatterError, match="over 65536 bytes"):
        parse_frontmatter(big)
    endless = "---\n" + "x" * (10 * MAX_FRONTMATTER_BYTES)  # refused without reading it all
    with pytest.raises(FrontmatterError, match="over"):
        split_frontmatter(endless)


@pytest.mark.parametrize("opening", ["[", "{a: ", "- ", "a:\n  " ])
def test_depth_is_bounded_without_recursion_errors(opening: str) -> None:
    def nest(depth: int) -> str:
        if opening == "[":
            return "a: " + "[" * depth + "]" * depth + "\n"
        if opening == "{a: ":
            return "a: " + "{a: " * depth + "1" + "}" * depth + "\n"
        if opening == "- ":
            return "a:\n" + "".join("  " * (i + 1) + "-\n" for i in range(depth)) + \
                "  " * (depth + 1) + "x\n"
        return "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "a: 1\n"
    parse_frontmatter(_fm(nest(MAX_FRONTMATTER_DEPTH - 2)))
    for depth in (MAX_FRONTMATTER_DEPTH + 1, 200):
        with pytest.raises(FrontmatterError, match="nested deeper"):
            parse_frontmatter(_fm(nest(depth)))


# -- entries ---------------------------------------------------------------------------------


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


SKILL_MD = b"---\nname: refunds\ndescription: Process refunds\nlicense: Apache-2.0\n---\n# Go\n"
EMAIL = b"Dear customer,\n"


def entry(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "Process refunds",
                        "license": "Apache-2.0"},
        "resources": [
            {"uri": "skill://acme/billing/refunds/SKILL.md", "digest": _digest(SKILL_MD),
             "size": len(SKILL_MD)},
            {"uri": "skill://acme/billing/refunds/examples/email.md",
             "digest": _digest(EMAIL), "size": len(EMAIL)},
        ],
    }
    base.update(changes)
    return base


def test_an_entry_parses_to_a_skill() -> None:
    skill = parse_skill(entry())
    assert (skill.name, skill.description, skill.dynamic) == ("refunds", "Process refunds",
                                                              False)
    assert skill.root == "skill://acme/billing/refunds"
    assert skill.skill_path == "acme/billing/refunds"
    assert skill.main is not None and skill.main.path == "SKILL.md"
    assert skill.files is not None
    assert [f.path for f in skill.files] == ["SKILL.md", "examples/email.md"]
    assert skill.total_size == len(SKILL_MD) + len(EMAIL) and skill.too_large is None
    assert skill.manifest == frozenset((f.uri, f.digest) for f in skill.files)
    dynamic = parse_skill({"uri": "github://o/r/skills/daily/SKILL.md", "resources": "dynamic",
                           "frontmatter": {"name": "daily", "description": "d"}})
    assert dynamic.dynamic and dynamic.files is None and dynamic.main is None
    assert dynamic.total_size == 0 and dynamic.manifest is None
    assert dynamic.skill_path == "o/r/skills/daily"
    assert parse_skill(entry(uri="file:///srv/refunds/SKILL.md", resources=[
        {"uri": "file:///srv/refunds/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 0}
    ])).skill_path == "/srv/refunds"


_GOOD_FILE = {"uri": "skill://acme/billing/refunds/SKILL.md", "digest": "sha256:" + "a" * 64,
              "size": 1}


@pytest.mark.parametrize(("changes", "message"), [
    ({"uri": 5}, "uri must be a string"),
    ({"uri": "skill://acme/billing/refunds/skill.md"}, "must end with /SKILL.md"),
    ({"uri": "acme/refunds/SKILL.md"}, "has no scheme"),
    ({"uri": "skill://acme/../refunds/SKILL.md"}, "'..' segments"),
    ({"uri": "skill://acme//refunds/SKILL.md"}, "empty"),
    ({"uri": "skill://acme/re funds/SKILL.md"}, "space or a control"),
    ({"uri": "skill://acme/other/SKILL.md"}, "must be the skill's name"),
    ({"frontmatter": []}, "frontmatter must be an object"),
    ({"frontmatter": {"description": "d"}}, "frontmatter.name must be a non-empty string"),
    ({"frontmatter": {"name": "refunds", "description": " "}}, "frontmatter.description"),
    ({"resources": None}, "resources must be a list"),
    ({"resources": "static"}, "resources must be a list"),
    ({"resources": []}, "no entry for SKILL.md"),
    ({"resources": [{"digest": "sha256:" + "a" * 64, "size": 1}]}, "uri must be a string"),
    ({"resources": [{**_GOOD_FILE, "digest": "sha256:" + "A" * 64}]}, "lowercase hex"),
    ({"resources": [{**_GOOD_FILE, "digest": "md5:" + "a" * 32}]}, "digest must be"),
    ({"resources": [{**_GOOD_FILE, "size": -1}]}, "size must be a non-negative integer"),
    ({"resources": [{**_GOOD_FILE, "size": True}]}, "size must be"),
    ({"resources": [{**_GOOD_FILE, "size": 1.0}]}, "size must be"),
    ({"resources": [_GOOD_FILE, _GOOD_FILE]}, "listed twice"),
    ({"resources": [_GOOD_FILE, {**_GOOD_FILE, "uri": "skill://acme/billing/other.md"}]},
     "not within the skill's directory"),
    ({"resources": [_GOOD_FILE, {**_GOOD_FILE, "uri": "skill://acme/billing/refundsx/a"}]},
     "not within"),
    ({"resources": [_GOOD_FILE, {**_GOOD_FILE,
                                 "uri": "skill://acme/billing/refunds/../x/a.md"}]},
     "not within"),
    ({"resources": [_GOOD_FILE, {**_GOOD_FILE,
                                 "uri": "other://acme/billing/refunds/a.md"}]}, "not within"),
])
def test_an_invalid_entry_names_what_is_wrong(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSkillEntry, match=re.escape(message)) as info:
        parse_skill(entry(**changes), where="skills/list[3]")
    assert isinstance(info.value, RemoteProtocolError)
    assert str(info.value).startswith("skills/list[3]")
    assert len(str(info.value)) < 600


def test_an_entry_that_is_not_an_object_and_huge_values_are_clipped() -> None:
    with pytest.raises(InvalidSkillEntry, match="must be an object"):
        parse_skill(["x"])
    with pytest.raises(InvalidSkillEntry) as info:
        parse_skill(entry(frontmatter={"name": "x" * 100_000, "description": "d"}))
    assert len(str(info.value)) < 600


def test_over_limit_skills_still_parse_and_say_why() -> None:
    many = [{"uri": f"skill://s/big/f{i}", "digest": "sha256:" + "b" * 64, "size": 1}
            for i in range(MAX_SKILL_FILES)]
    main = {"uri": "skill://s/big/SKILL.md", "digest": "sha256:" + "b" * 64, "size": 1}
    front = {"name": "big", "description": "d"}
    wide = parse_skill({"uri": main["uri"], "frontmatter": front, "resources": [main, *many]})
    assert wide.too_large and "513 files" in wide.too_large
    at_limit = parse_skill({"uri": main["uri"], "frontmatter": front,
                            "resources": [main, *many[:-1]]})
    assert at_limit.too_large is None
    check_skill_size(at_limit)
    heavy = parse_skill({"uri": main["uri"], "frontmatter": front,
                         "resources": [{**main, "size": MAX_SKILL_BYTES + 1}]})
    assert heavy.too_large and str(MAX_SKILL_BYTES + 1) in heavy.too_large
    with pytest.raises(SkillTooLarge, match="not loaded") as info:
        check_skill_size(heavy)
    assert info.value.reason == heavy.too_large
    dynamic = parse_skill({"uri": main["uri"], "frontmatter": front, "resources": "dynamic"})
    check_skill_size(dynamic, MAX_SKILL_BYTES)
    with pytest.raises(SkillTooLarge, match="were read"):
        check_skill_size(dynamic, MAX_SKILL_BYTES + 1)


_segment = st.text(st.sampled_from("ab-._%~"), min_size=1, max_size=4)
_file_paths = st.lists(_segment, min_size=1, max_size=3).map("/".join)


@st.composite
def generated_entries(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """An entry and whether it is valid: a valid one, or one with a field broken."""
    scheme = draw(st.sampled_from(["skill://", "github://", "file:///", "x-y.z+w:"]))
    name = draw(st.text(st.sampled_from("abc-1"), min_size=1, max_size=6))
    prefix = draw(st.lists(_segment, max_size=2))
    root = scheme + "/".join([*prefix, name])
    uri = root + "/SKILL.md"
    paths = draw(st.lists(_file_paths, max_size=5, unique=True))
    files = [{"uri": uri, "digest": "sha256:" + draw(st.sampled_from("0f")) * 64,
              "size": draw(st.integers(0, 10))}]
    files += [{"uri": f"{root}/{p}", "digest": "sha256:" + "1" * 64, "size": 3}
              for p in paths if p != "SKILL.md"]
    obj: dict[str, Any] = {"uri": uri, "frontmatter": {"name": name, "description": "d",
                                                      **draw(st.dictionaries(
                                                          st.text(max_size=3),
                                                          st.integers(), max_size=2))},
                           "resources": files if draw(st.booleans()) else "dynamic"}
    valid = all(p not in (".", "..") for p in [*prefix, name])
    if obj["resources"] != "dynamic":
        valid = valid and all(seg not in (".", "..") for p in paths for seg in p.split("/"))
    breakage = draw(st.sampled_from(["none", "none", "uri", "name", "resources", "file",
                                     "dup", "main"]))
    if breakage == "uri":
        obj["uri"] = draw(st.sampled_from([None, root, uri + "x", "SKILL.md", 3]))
    elif breakage == "name":
        obj["frontmatter"] = {**obj["frontmatter"],
                              "name": draw(st.sampled_from(["", None, name + "x", 1]))}
    elif breakage == "resources":
        obj["resources"] = draw(st.sampled_from([None, {}, "Dynamic", [None]]))
    elif breakage == "file" and isinstance(obj["resources"], list):
        obj["resources"] = [*files, {**files[0], "uri": draw(st.sampled_from(
            [root + "x/a", root + "/../a", "zz://" + name + "/a", root + "/a b"]))}]
    elif breakage == "dup" and isinstance(obj["resources"], list):
        obj["resources"] = [*files, files[-1]]
    elif breakage == "main" and isinstance(obj["resources"], list):
        obj["resources"] = files[1:]
    else:
        breakage = "none"
    return obj, valid and breakage == "none"


@SETTINGS
@given(generated_entries())
def test_parse_skill_on_generated_entries(case: tuple[dict[str, Any], bool]) -> None:
    obj, valid = case
    try:
        skill = parse_skill(obj)
    except InvalidSkillEntry:
        assert not valid, obj
        return
    assert valid, obj
    assert skill.uri == obj["uri"] and skill.uri.endswith("/SKILL.md")
    assert skill.skill_path.rsplit("/", 1)[-1] == skill.name == obj["frontmatter"]["name"]
    assert skill.frontmatter == obj["frontmatter"]
    if skill.files is None:
        assert obj["resources"] == "dynamic" and skill.dynamic
        return
    assert [f.uri for f in skill.files] == [f["uri"] for f in obj["resources"]]
    for f in skill.files:
        assert f.uri == skill.uri if f.path == "SKILL.md" and f.uri == skill.uri else \
            f.uri == skill.root + "/" + f.path
        assert skill_file(skill, f.path) is f and skill_file(skill, f.uri) is f
    assert skill.main is not None and skill.main.uri == skill.uri


# -- paths ------------------------------------------------------------------------------------

REFUNDS = parse_skill(entry())
_path_parts = st.sampled_from(["..", ".", "", "a", "examples", "email.md", "SKILL.md", "%2e%2e",
                               "b c", "\\..", "~", "refunds"])


@SETTINGS
@given(st.lists(_path_parts, max_size=6).map("/".join), st.booleans())
@example("examples/../../x", False)
@example("../refunds/SKILL.md", False)
@example("./examples//email.md", False)
def test_resolution_never_escapes_the_root(path: str, absolute: bool) -> None:
    asked = (REFUNDS.root + "/" + path) if absolute else path
    try:
        uri = resolve_skill_path(REFUNDS, asked)
    except InvalidSkillPath:
        return
    assert uri == REFUNDS.uri or uri.startswith(REFUNDS.root + "/")
    rest = uri[len(REFUNDS.root) + 1:]
    assert ".." not in rest.split("/") and "." not in rest.split("/")
    assert "" not in rest.split("/")
    try:
        found = skill_file(REFUNDS, asked)
    except SkillFileNotListed as exc:
        assert exc.uri == uri and exc.skill_uri == REFUNDS.uri
        assert isinstance(exc, SkillVerificationError)
        return
    assert REFUNDS.files is not None and found in REFUNDS.files and found.uri == uri


@pytest.mark.parametrize("path", ["", "/etc/passwd", "..", "../x", "examples/../../x",
                                  "other://acme/billing/refunds/SKILL.md",
                                  "skill://acme/billing/refundsx/a", "skill://acme/billing/a",
                                  "skill://acme/billing/refunds/../x", "a b", ".", "./"])
def test_paths_outside_the_skill_are_refused(path: str) -> None:
    with pytest.raises(InvalidSkillPath):
        skill_file(REFUNDS, path)


def test_listed_files_resolve_and_unlisted_ones_are_verification_failures() -> None:
    assert skill_file(REFUNDS, "examples/email.md").path == "examples/email.md"
    assert skill_file(REFUNDS, "./examples/../SKILL.md") is REFUNDS.main
    assert skill_file(REFUNDS, REFUNDS.uri) is REFUNDS.main
    with pytest.raises(SkillFileNotListed, match="refresh the skill"):
        skill_file(REFUNDS, "examples/credit-note.md")
    dynamic = parse_skill(entry(resources="dynamic"))
    assert resolve_skill_path(dynamic, "a/b.md") == "skill://acme/billing/refunds/a/b.md"
    with pytest.raises(LocalProtocolError, match="dynamic"):
        skill_file(dynamic, "a/b.md")


# -- reading and verifying ---------------------------------------------------------------------


def test_contents_bytes_of_text_and_blob() -> None:
    uri = "skill://acme/billing/refunds/examples/email.md"
    text = parse_read_resource_result({"contents": [{"uri": uri, "text": "h\u00e9"}]})
    assert skill_contents_bytes(text, uri) == "h\u00e9".encode()
    blob = parse_read_resource_result({"contents": [
        {"uri": "other", "text": "x"}, {"uri": uri, "blob": base64.b64encode(b"\0\xff").decode()}]})
    assert skill_contents_bytes(blob, uri) == b"\0\xff"
    for contents, message in (([], "no content for it"),
                              ([{"uri": uri, "text": "a"}, {"uri": uri, "text": "b"}],
                               "2 contents"),
                              ([{"uri": uri, "blob": "not base64!"}], "not valid base64"),
                              ([{"uri": uri, "text": "\ud800"}], "not valid Unicode")):
        with pytest.raises(SkillFileError, match=message):
            skill_contents_bytes(parse_read_resource_result({"contents": contents}), uri)


def test_verification_checks_size_then_digest() -> None:
    email = skill_file(REFUNDS, "examples/email.md")
    verify_skill_file(REFUNDS, email, EMAIL)
    with pytest.raises(SkillSizeMismatch) as size:
        verify_skill_file(REFUNDS, email, EMAIL + b"!")
    assert (size.value.expected, size.value.actual) == (len(EMAIL), len(EMAIL) + 1)
    tampered = EMAIL.replace(b"D", b"d")
    with pytest.raises(SkillDigestMismatch) as digest:
        verify_skill_file(REFUNDS, email, tampered)
    assert digest.value.actual == _digest(tampered) and digest.value.uri == email.uri
    other = parse_skill(entry(resources=[{**entry()["resources"][0], "size": 1}]))
    with pytest.raises(SkillFileNotListed):
        verify_skill_file(other, email, EMAIL)
    with pytest.raises(LocalProtocolError):
        verify_skill_file(parse_skill(entry(resources="dynamic")), email, EMAIL)


def test_skill_md_frontmatter_is_compared_both_ways() -> None:
    assert check_skill_md(REFUNDS, SKILL_MD.decode()) == REFUNDS.frontmatter
    assert skill_body(SKILL_MD.decode()) == "# Go\n"
    cases = [
        ("name: refunds\ndescription: Process refunds\n", "license", "the file has none"),
        ("name: refunds\ndescription: Process refunds\nlicense: Apache-2.0\nx: 1\n", "x",
         "the entry has none"),
        ("name: refunds\ndescription: Other\nlicense: Apache-2.0\n", "description",
         "'Other'"),
    ]
    for block, field, said in cases:
        with pytest.raises(SkillFrontmatterMismatch) as info:
            check_skill_md(REFUNDS, _fm(block))
        assert info.value.field == field and said in str(info.value)
    nested = parse_skill(entry(frontmatter={
        "name": "refunds", "description": "d", "metadata": {"version": "2.1.0", "n": 1,
                                                            "flag": True, "l": [1.0]}}))
    check_skill_md(nested, _fm("name: refunds\ndescription: d\nmetadata:\n  version: 2.1.0\n"
                               "  n: 1.0\n  flag: true\n  l: [1]\n"))
    for bad, field in (("  version: 2.1\n  n: 1\n  flag: true\n  l: [1]\n", "metadata.version"),
                       ("  version: 2.1.0\n  n: 1\n  flag: 1\n  l: [1]\n", "metadata.flag"),
                       ("  version: 2.1.0\n  n: 1\n  flag: true\n  l: [1, 2]\n",
                        "metadata.l")):
        with pytest.raises(SkillFrontmatterMismatch) as info:
            check_skill_md(nested, _fm("name: refunds\ndescription: d\nmetadata:\n" + bad))
        assert info.value.field == field
    with pytest.raises(SkillFrontmatterInvalid) as broken:
        check_skill_md(REFUNDS, "# no frontmatter\n")
    assert isinstance(broken.value.__cause__, FrontmatterError)
    assert isinstance(broken.value, SkillVerificationError)
    long = parse_skill(entry(frontmatter={"name": "refunds", "description": "y" * 5000}))
    with pytest.raises(SkillFrontmatterMismatch) as clipped:
        check_skill_md(long, _fm("name: refunds\ndescription: " + "z" * 5000 + "\n"))
    assert len(str(clipped.value)) < 500


# -- finding a skill ---------------------------------------------------------------------------


def _named(path: str, scheme: str = "skill://") -> Skill:
    name = path.rsplit("/", 1)[-1]
    return parse_skill({"uri": f"{scheme}{path}/SKILL.md", "resources": "dynamic",
                        "frontmatter": {"name": name, "description": "d"}})


def test_find_skill_by_uri_path_or_unique_name() -> None:
    a, b, c = _named("acme/billing/refunds"), _named("acme/support/refunds"), _named("git")
    skills = [a, b, c]
    assert find_skill(skills, "git") is c
    assert find_skill(skills, b.uri) is b and find_skill(skills, b.root) is b
    assert find_skill(skills, "acme/billing/refunds") is a
    with pytest.raises(AmbiguousSkill) as info:
        find_skill(skills, "refunds")
    assert info.value.uris == (a.uri, b.uri) and isinstance(info.value, LookupError)
    with pytest.raises(UnknownSkill) as unknown:
        find_skill(skills, "nope")
    assert isinstance(unknown.value, LookupError) and isinstance(unknown.value, MCPError)
    twin = _named("acme/billing/refunds", "github://")
    with pytest.raises(AmbiguousSkill):
        find_skill([a, twin], "acme/billing/refunds")
    assert find_skill([a, twin], twin.uri) is twin


# -- paths a server could decode into another (review findings) -------------------------------

DYNAMIC = parse_skill({"uri": "skill://acme/demo/SKILL.md", "resources": "dynamic",
                       "frontmatter": {"name": "demo", "description": "d"}})


@pytest.mark.parametrize("path", [
    "%2e%2e/%2e%2e/secret", "%2E%2E/%2E%2E/secret", "a/%2e%2E/../../x", "%2e/x", ".%2e/x",
    "%252e%252e/x", "..%2f..%2fsecret", "..%2F..%2Fsecret", "a%5csecret", "a%5Csecret",
    "..\\..\\secret", "a\\b", "skill://acme/demo/%2E%2E/other/SKILL.md",
    "skill://acme/demo/%2e%2e/%2e%2e/secret", "skill://acme/demo/a%2fb",
    "skill://acme/demo/..%5C..%5Csecret", "skill://acme/demo/a\\b",
])
def test_encoded_dot_segments_and_hidden_separators_are_refused(path: str) -> None:
    with pytest.raises(InvalidSkillPath):
        resolve_skill_path(DYNAMIC, path)
    with pytest.raises(InvalidSkillPath):
        skill_file(REFUNDS, path)


def test_plain_percent_escapes_still_resolve() -> None:
    assert resolve_skill_path(DYNAMIC, "a%20b.md") == "skill://acme/demo/a%20b.md"
    assert resolve_skill_path(DYNAMIC, "100%25/x.md") == "skill://acme/demo/100%25/x.md"
    assert resolve_skill_path(DYNAMIC, "skill://acme/demo/%C3%A9.md") == \
        "skill://acme/demo/%C3%A9.md"


@pytest.mark.parametrize("uri", [
    "skill://acme/billing/refunds/%2e%2e/refunds/x.md",
    "skill://acme/billing/refunds/%2E%2E%2fother/x.md",
    "skill://acme/billing/refunds/a\\..\\..\\x.md",
    "skill://acme/billing/refunds/a%5cx.md",
])
def test_an_entry_listing_a_file_through_an_encoded_segment_is_invalid(uri: str) -> None:
    listed = entry()["resources"] + [{"uri": uri, "digest": _digest(b""), "size": 0}]
    with pytest.raises(InvalidSkillEntry, match="not within"):
        parse_skill(entry(resources=listed))


@pytest.mark.parametrize("uri", ["skill://acme/%2e%2e/refunds/SKILL.md",
                                 "skill://acme%2fbilling/refunds/SKILL.md",
                                 "skill://acme\\billing/refunds/SKILL.md"])
def test_a_skill_path_with_an_encoded_segment_is_invalid(uri: str) -> None:
    with pytest.raises(InvalidSkillEntry, match="segments"):
        parse_skill(entry(uri=uri, resources="dynamic"))


@SETTINGS
@given(st.lists(st.sampled_from(["..", ".", "a", "%2e", "%2E", "%2e%2e", "%252e", "%2f",
                                 "%5C", "\\", "%25", "b"]), min_size=1, max_size=8)
       .map("".join), st.booleans())
def test_no_resolved_path_decodes_to_an_escape(segment: str, absolute: bool) -> None:
    asked = f"x/{segment}/../{segment}/y"
    asked = DYNAMIC.root + "/" + asked if absolute else asked
    try:
        uri = resolve_skill_path(DYNAMIC, asked)
    except InvalidSkillPath:
        return
    rest = uri[len(DYNAMIC.root) + 1:]
    for _ in range(3):
        rest = urllib.parse.unquote(rest)
    assert "\\" not in rest
    assert not {"", ".", ".."} & set(rest.split("/")), (asked, uri)


# -- a blob longer than its listed size --------------------------------------------------------


def test_a_blob_longer_than_the_listed_size_is_refused_before_decoding() -> None:
    uri = "skill://acme/billing/refunds/examples/email.md"
    for size in (0, 1, 2, 3, 4, 15, 16, 100):
        exact = base64.b64encode(b"x" * size).decode()
        result = parse_read_resource_result({"contents": [{"uri": uri, "blob": exact}]})
        assert skill_contents_bytes(result, uri, expected_size=size) == b"x" * size
        longer = base64.b64encode(b"x" * (size + 6)).decode()
        big = parse_read_resource_result({"contents": [{"uri": uri, "blob": longer}]})
        with pytest.raises(SkillFileError, match="base64 characters"):
            skill_contents_bytes(big, uri, expected_size=size)
        assert skill_contents_bytes(big, uri) == b"x" * (size + 6)  # no size known: decoded


# -- check_skill_md raises only its own errors ------------------------------------------------


def test_a_huge_integer_against_a_nan_or_a_float_is_a_typed_mismatch() -> None:
    huge = "0x" + "f" * 4000  # past a float's range, and past Python's int-to-text limit
    for value in (math.nan, 1.0, 1, "x"):
        skill = parse_skill(entry(resources="dynamic", frontmatter={
            "name": "refunds", "description": "d", "v": value}))
        with pytest.raises(SkillFrontmatterMismatch) as info:
            check_skill_md(skill, _fm(f"name: refunds\ndescription: d\nv: {huge}\n"))
        assert info.value.field == "v" and "too long to show" in str(info.value)
    big = parse_skill(entry(resources="dynamic", frontmatter={
        "name": "refunds", "description": "d", "v": 16 ** 4000 - 1}))
    check_skill_md(big, _fm(f"name: refunds\ndescription: d\nv: {huge}\n"))
    with pytest.raises(SkillFrontmatterMismatch):
        check_skill_md(big, _fm("name: refunds\ndescription: d\nv: .nan\n"))


_yaml_scalars = st.sampled_from([
    "0x" + "f" * 300, "0x" + "f" * 4000, "-" + "9" * 400, ".nan", ".inf", "-.inf", "1e308",
    "1e309", "0", "1", "1.0", "true", "null", "~", "x", "'0x1'", "[1, .nan]", "{a: 0x1}", "",
])
_entry_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(-(2 ** 2000), 2 ** 2000)
    | st.sampled_from([3900, 4000]).map(lambda n: 16 ** n - 1) | st.floats()
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abv"), inner,
                                                                 max_size=3),
    max_leaves=8)


@SETTINGS
@given(_entry_values, _yaml_scalars)
def test_check_skill_md_raises_only_skill_errors(expected: Any, written: str) -> None:
    skill = parse_skill(entry(resources="dynamic", frontmatter={
        "name": "refunds", "description": "d", "v": expected}))
    try:
        check_skill_md(skill, _fm(f"name: refunds\ndescription: d\nv: {written}\n"))
    except SkillVerificationError as exc:
        assert isinstance(exc, (SkillFrontmatterMismatch, SkillFrontmatterInvalid))
        str(exc)


# -- the clients' face: nothing read of a skill over the limits (review findings) -------------


class _Reading(ClientFace):
    """The face alone, its reads answered from ``files`` (uri -> content object)."""

    def __init__(self, files: dict[str, dict[str, Any]]) -> None:
        self._conn = None
        self.files = files
        self.reads: list[str] = []

    def read_resource(self, uri: str, *, timeout: float | None = None) -> Any:
        self.reads.append(uri)
        return parse_read_resource_result({"contents": [{"uri": uri, **self.files[uri]}]})


def test_the_face_reads_no_file_of_a_skill_over_the_limits() -> None:
    listed = entry()["resources"] + [
        {"uri": f"skill://acme/billing/refunds/f{i}.md", "digest": _digest(b""), "size": 0}
        for i in range(MAX_SKILL_FILES)]
    many = parse_skill(entry(resources=listed))
    assert many.too_large is not None
    face = _Reading({f["uri"]: {"text": ""} for f in listed})
    for path in ("f0.md", "examples/email.md", many.uri):
        with pytest.raises(SkillTooLarge, match="files"):
            face.read_skill_file(many, path)
    with pytest.raises(SkillTooLarge):
        face.read_skill(many)
    assert face.reads == []


def test_the_face_refuses_a_blob_longer_than_the_listed_file_before_decoding() -> None:
    email_uri = "skill://acme/billing/refunds/examples/email.md"
    blob = base64.b64encode(EMAIL * 1000).decode()
    face = _Reading({email_uri: {"blob": blob}})
    with pytest.raises(SkillFileError, match="base64 characters"):
        face.read_skill_file(REFUNDS, "examples/email.md")
    good = _Reading({email_uri: {"blob": base64.b64encode(EMAIL).decode()}})
    content = good.read_skill_file(REFUNDS, "examples/email.md")
    assert content.data == EMAIL and content.verified
