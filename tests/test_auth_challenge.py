"""``WWW-Authenticate`` parsing (RFC 9110 section 11.6.1, rule R19)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto.auth._challenge import (
    MAX_CHALLENGE_SIZE,
    Challenge,
    oauth_challenge,
    parse_www_authenticate,
)


def one(value: str) -> list[Challenge]:
    return parse_www_authenticate([value])


def test_bearer_with_params() -> None:
    [c] = one('Bearer realm="example", error="invalid_token", '
              'resource_metadata="https://rs.example/.well-known/oauth-protected-resource"')
    assert c.scheme == "bearer"
    assert c.params == {
        "realm": "example", "error": "invalid_token",
        "resource_metadata": "https://rs.example/.well-known/oauth-protected-resource",
    }
    assert c.token68 is None
    assert c.get("Resource_Metadata") == c.params["resource_metadata"]
    assert c.get("scope") is None


def test_several_challenges_in_one_value() -> None:
    cs = one('Bearer realm="a", error="x", DPoP algs="ES256 PS256"')
    assert [c.scheme for c in cs] == ["bearer", "dpop"]
    assert cs[0].params == {"realm": "a", "error": "x"}
    assert cs[1].params == {"algs": "ES256 PS256"}


def test_several_values() -> None:
    cs = parse_www_authenticate(['Basic realm="x"', "Bearer scope=read", "Negotiate"])
    assert [c.scheme for c in cs] == ["basic", "bearer", "negotiate"]
    assert cs[1].params == {"scope": "read"}
    assert cs[2] == Challenge("negotiate", {})


def test_bare_string_is_one_value() -> None:
    assert parse_www_authenticate('Bearer realm="a"') == [Challenge("bearer", {"realm": "a"})]


def test_token68() -> None:
    cs = one("Basic abc==, Bearer x=y, Negotiate a+b/c=")
    assert cs == [Challenge("basic", {}, "abc=="), Challenge("bearer", {"x": "y"}),
                  Challenge("negotiate", {}, "a+b/c=")]


def test_case_and_whitespace() -> None:
    cs = one('  BEARER   Realm = "a" ,  ERROR=Invalid_Token  ,,  dpop  ,')
    assert cs == [Challenge("bearer", {"realm": "a", "error": "Invalid_Token"}),
                  Challenge("dpop", {})]


def test_quoted_escapes() -> None:
    [c] = one(r'Bearer error_description="say \"hi\", a\\b, c=d"')
    assert c.params == {"error_description": 'say "hi", a\\b, c=d'}


def test_duplicates_keep_first() -> None:
    [c] = one('Bearer scope="a", Scope="b", scope=c')
    assert c.params == {"scope": "a"}


def test_not_fooled_by_quoted_resource_metadata() -> None:
    [c] = one('Bearer error_description="see resource_metadata=\\"https://evil\\", ok", '
              'realm="r"')
    assert c.get("resource_metadata") is None
    assert c.params["realm"] == "r"
    [c] = one('Bearer error_description="x, resource_metadata=https://evil"')
    assert c.get("resource_metadata") is None


def test_broken_quote_does_not_leak_into_params() -> None:
    # an unbalanced quote: the value closes early and the grammar breaks right after it
    [c] = one('Bearer error_description="foo resource_metadata="https://evil"')
    assert c.params == {"error_description": "foo resource_metadata="}


def test_garbage_keeps_what_parsed() -> None:
    assert one('Bearer realm="a", DPoP algs="x" junk here') == [
        Challenge("bearer", {"realm": "a"}), Challenge("dpop", {"algs": "x"})]
    assert one('Bearer realm="unterminated') == [Challenge("bearer", {})]
    assert one('realm="no scheme"') == []
    assert one("") == []
    assert one(",,, ,") == []
    assert one('Bearer realm="a"x, b=c') == [Challenge("bearer", {"realm": "a"})]
    assert one("Bearer\x00 realm=a") == []
    # a later garbage value does not stop the next one
    assert parse_www_authenticate(["@@@", "Bearer a=b"]) == [Challenge("bearer", {"a": "b"})]


def test_control_character_in_quoted_string_is_refused() -> None:
    assert one('Bearer a="x\ny", b=c') == [Challenge("bearer", {})]
    assert one('Bearer a="x\ty"') == [Challenge("bearer", {"a": "x\ty"})]


def test_non_strings_are_skipped() -> None:
    assert parse_www_authenticate([None, b"x", "Bearer"]) == [  # type: ignore[list-item]
        Challenge("bearer", {})]


def test_size_limit() -> None:
    pad = "x" * (MAX_CHALLENGE_SIZE - 20)
    cs = parse_www_authenticate([f'Basic realm="{pad}"', 'Bearer realm="late"'])
    assert [c.scheme for c in cs] == ["basic"]  # the Bearer challenge was cut: dropped
    big = "Bearer a=b, " + "Basic realm=x, " * 1000
    cs = parse_www_authenticate([big, "DPoP"])
    assert cs[0] == Challenge("bearer", {"a": "b"})
    assert all(c.scheme in ("bearer", "basic") for c in cs)
    assert len(cs) < 1000


def test_oauth_challenge() -> None:
    basic, bearer, dpop = Challenge("basic", {}), Challenge("bearer", {"a": "1"}), \
        Challenge("dpop", {"algs": "ES256"})
    bearer2 = Challenge("bearer", {"a": "2"})
    assert oauth_challenge([basic, dpop, bearer, bearer2]) is bearer
    assert oauth_challenge([basic, dpop, bearer], dpop=True) is dpop
    assert oauth_challenge([basic, dpop]) is dpop
    assert oauth_challenge([basic, bearer], dpop=True) is bearer
    assert oauth_challenge([basic]) is None
    assert oauth_challenge([]) is None


# -- property tests --------------------------------------------------------------------------

TCHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"
TOKEN68 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/"
tokens = st.text(alphabet=TCHARS, min_size=1, max_size=12)
quotable = st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from(
    ['"', "\\", ",", "=", "\t", " ", "é", "\xff"])
values = st.text(alphabet=quotable, max_size=20)


@st.composite
def challenges(draw: st.DrawFn) -> Challenge:
    scheme = draw(tokens).lower()
    if draw(st.booleans()) and draw(st.booleans()):
        t68 = draw(st.text(alphabet=TOKEN68, min_size=1, max_size=12)) + "=" * draw(
            st.integers(0, 2))
        return Challenge(scheme, {}, t68)
    names = draw(st.lists(tokens.map(str.lower), unique=True, max_size=5))
    return Challenge(scheme, {n: draw(values) for n in names})


Draw = Callable[[st.SearchStrategy[Any]], Any]


def random_case(draw: Draw, text: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c for c in text)


def serialize_param(draw: Draw, name: str, value: str) -> str:
    ows = draw(st.sampled_from(["", " ", "\t", "  "]))
    if value and all(c in TCHARS for c in value) and draw(st.booleans()):
        rendered = value
    else:
        rendered = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{random_case(draw, name)}{ows}={ows}{rendered}"


def serialize(draw: Draw, challenge: Challenge) -> str:
    scheme = random_case(draw, challenge.scheme)
    if challenge.token68 is not None:
        return f"{scheme} {challenge.token68}"
    if not challenge.params:
        return scheme
    sep: str = draw(st.sampled_from([", ", ",", " , ", ",\t"]))
    return scheme + " " + sep.join(
        serialize_param(draw, n, v) for n, v in challenge.params.items())


@settings(max_examples=300)
@given(st.lists(st.lists(challenges(), min_size=1, max_size=4), max_size=3), st.data())
def test_round_trip(fields: list[list[Challenge]], data: st.DataObject) -> None:
    header_values = [", ".join(serialize(data.draw, c) for c in field) for field in fields]
    assert parse_www_authenticate(header_values) == [c for field in fields for c in field]


@settings(max_examples=500)
@given(st.lists(st.text(max_size=200), max_size=4))
def test_never_raises(header_values: list[str]) -> None:
    for c in parse_www_authenticate(header_values):
        assert c.scheme == c.scheme.lower()
        assert all(k == k.lower() for k in c.params)


@settings(max_examples=300)
@given(st.lists(st.text(alphabet='Bearer DPoP realm="\\,= \tx', max_size=80), max_size=3))
def test_never_raises_grammar_alphabet(header_values: list[str]) -> None:
    parse_www_authenticate(header_values)


@pytest.mark.parametrize("value", ["Bearer realm=", "Bearer realm =", "Bearer ,", "Bearer =x",
                                   'Bearer a="\\', "Bearer a=b,", "Bearer a=b, c"])
def test_edges_do_not_raise(value: str) -> None:
    one(value)
