"""URL-mode elicitation's records (``mcp_proto._elicitation``): what a URL elicitation must
be before a host shows it (F-04), the -32042 error (F-05), the answers, and the tracker of
pending ids."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_proto_io._elicit import CompletedElicitations
from mcp_proto_io._sync._face import ClientFace

from mcp_proto import (
    URL_ELICITATION_REQUIRED,
    InvalidUrlElicitation,
    RpcError,
    UrlElicitation,
    UrlElicitationRequired,
    parse_url_elicitation,
    url_elicitation_result,
)
from mcp_proto._elicitation import (
    MAX_ELICITATION_ID,
    MAX_ELICITATION_URL,
    MAX_PENDING_ELICITATIONS,
    MAX_URL_ELICITATIONS_PER_ERROR,
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


# -- the host shown is the host a browser visits (review findings) -----------------------------


@pytest.mark.parametrize("url", [
    "https://good.com%2eevil.com/", "https://evil.com\\good.com/", "https://%65vil.com/",
    "https://good.com%2fevil.com/", "https://a_b.example/", "https://good.com\u3002evil.com/",
    "https://good.com\u2044evil.com/", "https://\u0435vil.com\uff0fx/", "https://[::1%25lo]/",
    "https://[not-ipv6]/", "https://xn--ls8h.example\\x/",
])
def test_f04_a_host_a_browser_would_read_as_another_is_refused(url: str) -> None:
    with pytest.raises(InvalidUrlElicitation, match=r"host|parsed"):
        parse_url_elicitation(params(url), require_id=True)


@pytest.mark.parametrize(("url", "host", "puny"), [
    ("https://[2001:db8::1]:8443/x", "2001:db8::1", False),
    ("https://[::1]/", "::1", False),
    ("https://127.0.0.1:8080/", "127.0.0.1", False),
    ("https://sub-domain.example.com./", "sub-domain.example.com.", False),
    ("https://xn--80ak6aa92e.com/", "\u0430\u0440\u0440\u04cf\u0435.com", True),
    ("https://b\u00fccher.example/", "b\u00fccher.example", True),
    ("https://good.example/path%2e%2e\\x?q=%41", "good.example", False),
])
def test_f04_ip_literals_and_international_names_are_still_shown(url: str, host: str,
                                                                 puny: bool) -> None:
    e = parse_url_elicitation(params(url), require_id=True)
    assert (e.host, e.punycode, e.url) == (host, puny, url)


@pytest.mark.parametrize("mark", ["\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069"])
def test_f04_a_url_with_a_bidirectional_control_is_refused(mark: str) -> None:
    with pytest.raises(InvalidUrlElicitation, match="control"):
        parse_url_elicitation(params(f"https://a.example/{mark}gpj.exe"), require_id=True)


def test_minus_32042_reads_at_most_the_cap_and_counts_the_rest_invalid() -> None:
    count = MAX_URL_ELICITATIONS_PER_ERROR + 5
    data = {"elicitations": ["bad"] + [params(f"https://a.example/{i}", elicitationId=f"e{i}")
                                       for i in range(count)]}
    error = UrlElicitationRequired(URL_ELICITATION_REQUIRED, "needs sign-in", data)
    assert [e.elicitation_id for e in error.elicitations] == [
        f"e{i}" for i in range(MAX_URL_ELICITATIONS_PER_ERROR)]
    assert error.invalid == 1 + 5


# -- the bindings' record of completions, and the offering (review findings) -------------------


class _Probe(OrderedDict[str, None]):
    """A ``_done`` table that runs ``then`` right after the first membership test: the
    reader thread reporting a completion at the worst moment for a watch."""

    def __init__(self, then: Any) -> None:
        super().__init__()
        self.then: Any = then

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        then, self.then = self.then, None
        if then is not None:
            then()
        return found


def test_a_completion_while_a_watch_begins_is_never_lost() -> None:
    records = CompletedElicitations()
    event = threading.Event()

    def reader_reports() -> None:  # on its own thread, as the threads binding's reader
        reader = threading.Thread(target=records.done, args=("e-1",))
        reader.start()
        reader.join(0.5)  # done() may wait for the watch to let go of the table
        finished.append(reader)

    finished: list[threading.Thread] = []
    records._done = _Probe(reader_reports)  # type: ignore[assignment]
    records.watch(["e-1"], event)
    finished[0].join()
    assert event.is_set() and records.is_done("e-1")
    records.unwatch(["e-1"], event)
    assert not records._waiting


def test_a_new_offer_forgets_an_old_completion_and_a_watch_sees_a_new_one() -> None:
    records = CompletedElicitations()
    records.done("e-1")
    records.offered("e-1")
    assert not records.is_done("e-1")
    event = threading.Event()
    records.watch(["e-1"], event)
    assert not event.is_set()
    records.done("e-1")
    assert event.is_set() and records.is_done("e-1")
    records.offered("never-done")  # nothing to forget: no error


def _elicitation(eid: str) -> Any:
    return parse_url_elicitation(params(f"https://a.example/{eid}", elicitationId=eid),
                                 require_id=True)


def test_the_threads_client_forgets_a_stale_completion_when_an_id_is_offered_again() -> None:
    from mcp_proto_io.threads import Client  # noqa: PLC0415 - the binding under test

    client = Client([sys.executable, "-c", "pass"], on_url_elicitation=lambda e: "accept",
                    label="probe")
    client._elicitations.done("e-1")  # a completion of an earlier round
    assert client._offer_url(_elicitation("e-1")) == "accept"
    assert not client._elicitations.is_done("e-1")
    assert client._elicitations_done(["e-1"], 0.0) is False  # the new round is not complete


def test_the_asyncio_client_forgets_a_stale_completion_when_an_id_is_offered_again() -> None:
    from mcp_proto_io.asyncio import Client  # noqa: PLC0415 - the binding under test

    async def scenario() -> None:
        client = Client([sys.executable, "-c", "pass"], on_url_elicitation=lambda e: "accept",
                        label="probe")
        client._elicitations.done("e-1")
        assert await client._offer_url(_elicitation("e-1")) == "accept"
        assert not client._elicitations.is_done("e-1")

    asyncio.run(scenario())


class _Offering(ClientFace):
    """The face alone: answers from a list, every completion already in."""

    def __init__(self, answers: list[str | None]) -> None:
        self._conn = None
        self._retry_url_elicitation = True
        self._timeout = 1.0
        self.answers = answers
        self.offered: list[str | None] = []

    def _offer_url(self, elicitation: UrlElicitation) -> str | None:
        self.offered.append(elicitation.elicitation_id)
        return self.answers.pop(0)

    def _elicitations_done(self, ids: list[str], timeout: float) -> bool:
        return True


def _required(count: int) -> UrlElicitationRequired:
    return UrlElicitationRequired(URL_ELICITATION_REQUIRED, "needs", {"elicitations": [
        params(f"https://a.example/{i}", elicitationId=f"e{i}") for i in range(count)]})


@pytest.mark.parametrize("refusal", ["decline", "cancel"])
def test_offering_stops_at_the_first_answer_that_is_not_accept(refusal: str) -> None:
    face = _Offering(["accept", refusal, "accept", "accept"])
    exc = _required(4)
    assert face._url_required(exc, 1, None) is False
    assert face.offered == ["e0", "e1"]
    assert exc.actions == {"e0": "accept", "e1": refusal}
    every = _Offering(["accept"] * 3)
    assert every._url_required(_required(3), 1, None) is True
    assert every.offered == ["e0", "e1", "e2"]
    assert _Offering([])._url_required(_required(0), 1, None) is False
