"""URL-mode elicitation's records (``mcp_proto._elicitation``): what a URL elicitation must
be before a host shows it (F-04), the -32042 error (F-05), the answers, and the tracker of
pending ids."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import (
    URL_ELICITATION_REQUIRED,
    InvalidUrlElicitation,
    RpcError,
    UrlElicitationRequired,
    parse_url_elicitation,
    url_elicitation_result,
)
from mcp_proto._elicitation import (
    MAX_ELICITATION_ID,
    MAX_ELICITATION_URL,
    MAX_PENDING_ELICITATIONS,
    ElicitationTracker,
    url_elicitation_error,
)


def params(url: str, **more: Any) -> dict[str, Any]:
    return {"mode": "url", "message": "Sign in", "url": url, "elicitationId": "e-1", **more}


def test_a_url_is_kept_as_sent_with_its_origin_and_host_apart() -> None:
    e = parse_url_elicitation(params("https://Auth.Example:8443/consent?next=%2Fa#x"),
                              require_id=True)
    assert e.url == "https://Auth.Example:8443/consent?next=%2Fa#x"
    assert (e.origin, e.host, e.punycode) == ("https://auth.example:8443", "auth.example",
                                              False)
    assert e.elicitation_id == "e-1" and e.server is None
    assert e.with_server("docs").server == "docs"


@pytest.mark.parametrize(("url", "host"), [
    ("https://xn--80ak6aa92e.com/login", "\u0430\u0440\u0440\u04cf\u0435.com"),
    ("https://b\u00fccher.example/", "b\u00fccher.example"),
])
def test_f04_an_internationalized_host_is_shown_decoded_and_flagged(url: str,
                                                                    host: str) -> None:
    e = parse_url_elicitation(params(url), require_id=True)
    assert e.punycode and e.host == host and e.url == url


@pytest.mark.parametrize(("url", "why"), [
    ("javascript:alert(1)", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("/relative/path", "scheme"),
    ("https:///nohost", "host"),
    ("https://user:pw@evil.example/", "user information"),
    ("https://good.example@evil.example/", "user information"),
    ("https://a.example/a b", "spaces"),
    ("https://a.example/\x07", "control"),
    ("https://a.example:99999/", "parsed"),
    ("https://a.example/" + "x" * MAX_ELICITATION_URL, "longer"),
])
def test_f04_a_url_that_cannot_be_shown_safely_is_refused_naming_why(url: str,
                                                                     why: str) -> None:
    with pytest.raises(InvalidUrlElicitation, match=why):
        parse_url_elicitation(params(url), require_id=True)


@pytest.mark.parametrize(("changes", "why"), [
    ({"message": 5}, "message"),
    ({"url": None}, "url"),
    ({"elicitationId": ""}, "elicitationId"),
    ({"elicitationId": 7}, "elicitationId"),
    ({"elicitationId": "x" * (MAX_ELICITATION_ID + 1)}, "elicitationId"),
])
def test_bad_fields_are_named(changes: dict[str, Any], why: str) -> None:
    with pytest.raises(InvalidUrlElicitation, match=why):
        parse_url_elicitation({**params("https://a.example/"), **changes}, require_id=True)


def test_the_id_is_required_in_2025_11_25_only() -> None:
    bare = {"mode": "url", "message": "Pay", "url": "https://pay.example/"}
    with pytest.raises(InvalidUrlElicitation, match="elicitationId"):
        parse_url_elicitation(bare, require_id=True)
    assert parse_url_elicitation(bare, require_id=False).elicitation_id is None  # MRTR


def test_minus_32042_lists_what_parses_and_counts_the_rest() -> None:
    data = {"elicitations": [params("https://a.example/1"), params("ftp://b.example/"),
                             "not an object", params("https://c.example/", elicitationId="c")]}
    error = url_elicitation_error(URL_ELICITATION_REQUIRED, "needs sign-in", data,
                                  method="tools/call")
    assert isinstance(error, UrlElicitationRequired) and isinstance(error, RpcError)
    assert error.code == -32042 and error.method == "tools/call"
    assert [e.elicitation_id for e in error.elicitations] == ["e-1", "c"]
    assert error.invalid == 2 and error.actions == {}
    for data in (None, "x", {"elicitations": "x"}, {}):
        assert UrlElicitationRequired(-32042, "m", data).elicitations == ()
    plain = url_elicitation_error(-32602, "bad", None)
    assert type(plain) is RpcError


def test_answers_are_the_three_actions_only() -> None:
    assert [url_elicitation_result(a) for a in ("accept", "decline", "cancel")] == [
        {"action": "accept"}, {"action": "decline"}, {"action": "cancel"}]
    with pytest.raises(ValueError, match="accept"):
        url_elicitation_result("yes")
    with pytest.raises(TypeError):
        url_elicitation_result(True)


_URLS = st.builds(
    lambda scheme, user, host, port, path: f"{scheme}://{user}{host}{port}{path}",
    st.sampled_from(["https", "http", "HTTP", "javascript", "ftp", ""]),
    st.sampled_from(["", "", "u@", "u:p@"]),
    st.sampled_from(["a.example", "xn--80ak6aa92e.com", "[::1]", "127.0.0.1", "", "\u00e9.fr"]),
    st.sampled_from(["", ":1", ":65535", ":65536", ":x"]),
    st.text(max_size=30))


@settings(max_examples=400, deadline=None)
@given(_URLS)
def test_parse_raises_only_its_own_error_and_keeps_what_it_accepts(url: str) -> None:
    try:
        e = parse_url_elicitation(params(url), require_id=True)
    except InvalidUrlElicitation:
        return
    assert e.url == url and url.lower().startswith(("https://", "http://"))
    assert e.origin == url[:len(e.origin)].lower()
    assert not any(c.isspace() or ord(c) < 0x20 for c in url)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["offer", "accept", "decline", "complete"]),
                          st.integers(0, MAX_PENDING_ELICITATIONS + 20)), max_size=400))
def test_the_tracker_matches_a_model(ops: list[tuple[str, int]]) -> None:
    tracker = ElicitationTracker()
    model: OrderedDict[str, None] = OrderedDict()
    for op, n in ops:
        eid = f"e{n}"
        if op == "offer":
            tracker.offered(eid)
            model[eid] = None
            model.move_to_end(eid)
            while len(model) > MAX_PENDING_ELICITATIONS:
                model.popitem(last=False)
        elif op == "accept":
            tracker.answered(eid, "accept")
        elif op == "decline":
            tracker.answered(eid, "decline")
            model.pop(eid, None)
        else:
            assert tracker.completed(eid) is (model.pop(eid, 0) is None)
            assert tracker.completed(eid) is False
