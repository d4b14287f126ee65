"""The session's side of issue 25, against the in-memory scripted server and a fake clock:
the skills requests (SEP-2640), URL-mode elicitation (F-03..F-05, -32042, completions) and
the capabilities each declares."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fake_server import DEFAULT_SERVER_CAPS, Pair, modern_pair

from mcp_proto import (
    BadMessage,
    Completed,
    ElicitationComplete,
    Failed,
    LocalProtocolError,
    RemoteProtocolError,
    ServerRequest,
    Skill,
    UrlElicitationRequired,
    client_capabilities,
)

SKILLS = "io.modelcontextprotocol/skills"
BODY = b"---\nname: pdf\ndescription: PDFs\n---\nBody.\n"


def entry(name: str = "pdf", body: bytes = BODY, **changes: Any) -> dict[str, Any]:
    uri = f"skill://{name}/SKILL.md"
    skill: dict[str, Any] = {
        "uri": uri, "frontmatter": {"name": name, "description": "PDFs"},
        "resources": [{"uri": uri, "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                       "size": len(body)}]}
    skill.update(changes)
    return skill


def skills_pair(settings: dict[str, Any] | None = None) -> Pair:
    pair = Pair(validate=False)
    pair.handshake(capabilities={**DEFAULT_SERVER_CAPS,
                                 "extensions": {SKILLS: settings or {}}})
    return pair


def completed(pair: Pair) -> Any:
    [event] = [e for e in pair.events() if isinstance(e, Completed | Failed)]
    return event


# -- capabilities ------------------------------------------------------------------------------


def test_f03_each_elicitation_mode_is_declared_apart() -> None:
    assert client_capabilities(elicitation=True) == {"elicitation": {"form": {}}}
    assert client_capabilities(url_elicitation=True) == {"elicitation": {"url": {}}}
    assert client_capabilities(elicitation=True, url_elicitation=True) == {
        "elicitation": {"form": {}, "url": {}}}


# -- skills --------------------------------------------------------------------------------------


def test_skills_list_follows_pages_and_leaves_an_invalid_entry_out() -> None:
    pair = skills_pair()
    handle = pair.session.list_skills(now=pair.now)
    first = pair.sent_one()
    assert first["method"] == "skills/list"
    bad = entry("broken", resources="all of them")
    pair.reply(first, {"skills": [entry("pdf"), bad], "nextCursor": "c2"})
    second = pair.sent_one()
    assert second["params"] == {"cursor": "c2"}
    pair.reply(second, {"skills": [entry("git")]})
    events = pair.events()
    [done] = [e for e in events if isinstance(e, Completed)]
    assert done.handle == handle
    assert [s.name for s in done.value] == ["pdf", "git"]
    assert all(isinstance(s, Skill) for s in done.value)
    [report] = [e for e in events if isinstance(e, BadMessage)]
    assert "resources" in str(report.error)


def test_skills_list_without_the_extension_asks_nothing() -> None:
    pair = Pair(validate=False)
    pair.handshake()
    pair.session.list_skills(now=pair.now)
    assert pair.sent() == []
    assert completed(pair).value == []
    with pytest.raises(LocalProtocolError, match="skills extension"):
        pair.session.get_skill("skill://pdf/SKILL.md", now=pair.now)


def test_skills_get_must_echo_the_uri() -> None:
    pair = skills_pair()
    pair.session.get_skill("skill://pdf/SKILL.md", now=pair.now)
    request = pair.sent_one()
    assert request["params"] == {"uri": "skill://pdf/SKILL.md"}
    pair.reply(request, {"skill": entry("pdf")})
    assert completed(pair).value.uri == "skill://pdf/SKILL.md"
    pair.session.get_skill("skill://pdf/SKILL.md", now=pair.now)
    pair.reply(pair.sent_one(), {"skill": entry("other")})
    failed = completed(pair)
    assert isinstance(failed, Failed) and isinstance(failed.error, RemoteProtocolError)


def test_directory_read_needs_directory_read_and_keeps_the_uri_on_every_page() -> None:
    pair = skills_pair()
    with pytest.raises(LocalProtocolError, match="directoryRead"):
        pair.session.read_directory("skill://pdf/templates", now=pair.now)
    pair = skills_pair({"directoryRead": True})
    pair.session.read_directory("skill://pdf/templates", now=pair.now)
    first = pair.sent_one()
    assert first["method"] == "resources/directory/read"
    assert first["params"] == {"uri": "skill://pdf/templates"}
    file = {"uri": "skill://pdf/templates/a.md", "name": "a.md", "mimeType": "text/markdown"}
    pair.reply(first, {"resources": [file], "nextCursor": "n"})
    second = pair.sent_one()
    assert second["params"] == {"uri": "skill://pdf/templates", "cursor": "n"}
    sub = {"uri": "skill://pdf/templates/eu", "name": "eu", "mimeType": "inode/directory"}
    pair.reply(second, {"resources": [sub]})
    assert [r.name for r in completed(pair).value] == ["a.md", "eu"]


# -- URL-mode elicitation ---------------------------------------------------------------------


URL_PARAMS = {"mode": "url", "message": "Sign in", "url": "https://auth.example/x?y=1",
              "elicitationId": "e-1"}


def url_pair(*, form: bool = False) -> Pair:
    pair = Pair(capabilities=client_capabilities(elicitation=form, url_elicitation=True),
                validate=False)
    pair.handshake()
    return pair


def test_f05_an_accepted_url_elicitation_completes_once() -> None:
    pair = url_pair()
    pair.server_request("s-1", "elicitation/create", URL_PARAMS)
    [asked] = pair.events()
    assert isinstance(asked, ServerRequest) and asked.params["url"] == URL_PARAMS["url"]
    assert pair.session.respond("s-1", {"action": "accept"})
    assert pair.sent_one()["result"] == {"action": "accept"}
    pair.notify("notifications/elicitation/complete", {"elicitationId": "e-1"})
    assert pair.events() == [ElicitationComplete(elicitation_id="e-1")]
    pair.notify("notifications/elicitation/complete", {"elicitationId": "e-1"})
    pair.notify("notifications/elicitation/complete", {"elicitationId": "never"})
    pair.notify("notifications/elicitation/complete", {"elicitationId": 7})
    assert pair.events() == []  # finished, unknown and malformed ids are ignored (F-05)


def test_f05_a_declined_url_elicitation_is_forgotten() -> None:
    pair = url_pair()
    pair.server_request("s-1", "elicitation/create", URL_PARAMS)
    pair.events()
    pair.session.respond("s-1", {"action": "decline"})
    pair.sent()
    pair.notify("notifications/elicitation/complete", {"elicitationId": "e-1"})
    assert pair.events() == []


@pytest.mark.parametrize("url", ["javascript:alert(1)", "https://user:pw@evil.example/",
                                 "/relative", "https://a.example/ x"])
def test_f04_a_url_that_cannot_be_shown_safely_is_refused(url: str) -> None:
    pair = url_pair()
    pair.server_request("s-1", "elicitation/create", {**URL_PARAMS, "url": url})
    assert pair.events() == []
    answer = pair.sent_one()
    assert answer["id"] == "s-1" and answer["error"]["code"] == -32602


def test_f03_url_mode_not_declared_and_form_mode_not_declared_are_refused() -> None:
    pair = Pair(capabilities=client_capabilities(elicitation=True), validate=False)
    pair.handshake()
    pair.server_request("s-1", "elicitation/create", URL_PARAMS)
    assert pair.sent_one()["error"]["code"] == -32602
    pair = url_pair()
    pair.server_request("s-2", "elicitation/create", {"message": "Name?",
                                                      "requestedSchema": {"type": "object"}})
    assert pair.sent_one()["error"]["code"] == -32602  # no mode: form, not declared
    assert pair.events() == []


def test_f05_minus_32042_fails_the_call_with_the_elicitations_and_tracks_them() -> None:
    pair = url_pair()
    handle = pair.session.call_tool("pay", {}, now=pair.now)
    call = pair.sent_one()
    pair.reply_error(call, -32042, "authorization needed", {"elicitations": [
        URL_PARAMS, {**URL_PARAMS, "elicitationId": "e-2", "url": "ftp://nope"}]})
    [failed] = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    error = failed.error
    assert isinstance(error, UrlElicitationRequired) and error.code == -32042
    assert [e.elicitation_id for e in error.elicitations] == ["e-1"]  # the ftp one left out
    pair.notify("notifications/elicitation/complete", {"elicitationId": "e-1"})
    assert pair.events() == [ElicitationComplete(elicitation_id="e-1")]


def test_minus_32042_in_the_stateless_era_is_a_plain_error() -> None:
    pair = modern_pair()
    pair.session.call_tool("pay", {}, now=pair.now)
    call = next(m for m in pair.sent() if m.get("method") == "tools/call")
    pair.reply_error(call, -32042, "x", {"elicitations": [URL_PARAMS]})
    [failed] = [e for e in pair.events() if isinstance(e, Failed)]
    assert not isinstance(failed.error, UrlElicitationRequired)


def test_mrtr_url_input_requests_reach_the_host_when_url_mode_is_declared() -> None:
    pair = modern_pair(capabilities=client_capabilities(url_elicitation=True))
    pair.session.call_tool("pay", {}, now=pair.now)
    call = next(m for m in pair.sent() if m.get("method") == "tools/call")
    params = {"mode": "url", "message": "Pay", "url": "https://pay.example/1"}
    pair.reply(call, {"resultType": "input_required",
                      "inputRequests": {"pay": {"method": "elicitation/create",
                                                "params": params}}})
    [asked] = [e for e in pair.events() if isinstance(e, ServerRequest)]
    assert asked.params["url"] == "https://pay.example/1"
    pair.session.respond(asked.request_id, {"action": "accept"}, now=pair.now)
    [retry] = [m for m in pair.sent() if m.get("method") == "tools/call"]
    assert retry["params"]["inputResponses"] == {"pay": {"action": "accept"}}
