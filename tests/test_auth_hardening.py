"""Hardening of the authorization core: a registration that cannot be used is refused before
the browser, URLs in messages never carry credentials, and every parser of what a server
(or a store, or a redirect handler) hands the flow raises only what it documents.

1. Dynamic registration (RFC 7591): an answer whose ``redirect_uris`` do not hold the redirect
   URI the client sends would make the authorization server refuse the authorization (it
   compares exactly and never redirects back), leaving the user on its error page.  It is a
   :class:`RegistrationError` before any :class:`RedirectRequired` (so before the binding
   calls the redirect handler), and a stored registration is reused only for a redirect URI
   it holds.
2. :func:`safe_url` removes the userinfo of every URL anywhere in a string, and the query and
   fragment, whatever the URL looks like.
3. :func:`decode_unverified`, the ``WWW-Authenticate`` parser, the discovery parsers, the token
   and registration parsers and the callback check: arbitrary input gives a result or the
   documented error, never ``RecursionError``, ``UnicodeEncodeError``, ``TypeError``...,
   and no secret of the input in the message.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from _bindings import run
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp_proto_io.auth import MemoryTokenStore, OAuth
from servers import auth_server
from servers.auth_server import AuthServer, loopback_redirect_follow
from test_auth_flow import (
    AS,
    CHALLENGE,
    MCP,
    PRM_HEADER,
    T0,
    World,
    as_meta,
    authorize,
    bearer,
    challenge,
    drain,
    fixed,
    make_flow,
    query_of,
    record_for,
    registration_request,
    standard_world,
    until_redirect,
)

from mcp_proto._auth_errors import (
    AuthorizationDenied,
    CallbackRejected,
    DiscoveryError,
    IssuerMismatch,
    RegistrationError,
    ResourceMismatch,
    TokenError,
    UnsafeUrl,
)
from mcp_proto.auth._challenge import oauth_challenge, parse_www_authenticate
from mcp_proto.auth._config import AuthConfig, Tokens
from mcp_proto.auth._discovery import parse_as_metadata, parse_prm
from mcp_proto.auth._exchange import AuthResponse
from mcp_proto.auth._flow import RedirectRequired
from mcp_proto.auth._jwt import b64url, decode_unverified, encode_jwt
from mcp_proto.auth._steps import (
    check_callback,
    parse_registration,
    parse_tokens,
    redirect_uri_registered,
    safe_url,
)
from mcp_proto.auth._urls import MAX_SHOWN_URL, parse_auth_url

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Nesting deeper than the interpreter's parser stack (json raises RecursionError).
DEEP = 100_000

REDIRECT = "http://127.0.0.1/callback"
PORTED = "http://127.0.0.1:53682/callback"
CLIENT_SECRET = "Zq7-registration-secret"


def redirects(events: list[Any]) -> list[RedirectRequired]:
    return [e for e in events if isinstance(e, RedirectRequired)]


# -- 1. the registration answer's redirect_uris ---------------------------------------------------


def registration_world(**answer: Any) -> World:
    """The standard world whose registration answers also carry ``answer``, and a secret."""
    world = standard_world()
    world.registration = {"token_endpoint_auth_method": "client_secret_basic",
                          "client_secret": CLIENT_SECRET, **answer}
    return world


@pytest.mark.parametrize(("ours", "answered"), [
    pytest.param(REDIRECT, ["https://app.example/cb"], id="another-uri"),
    pytest.param(REDIRECT, [], id="empty-list"),
    pytest.param(REDIRECT, [REDIRECT + "/"], id="trailing-slash"),
    pytest.param(REDIRECT, ["HTTP://127.0.0.1/callback"], id="case"),
    pytest.param(REDIRECT, ["http://127.0.0.1:80/callback"], id="default-port-added"),
    pytest.param(REDIRECT, ["http://localhost/callback"], id="localhost-for-the-ip"),
    pytest.param(REDIRECT, ["http://127.0.0.1/callback?x=1"], id="query-added"),
    pytest.param(PORTED, ["http://127.0.0.1:9999/callback"], id="another-port"),
    pytest.param(PORTED, ["http://127.0.0.1/other"], id="portless-other-path"),
    pytest.param("https://app.example/cb", ["https://app.example/cb:443"], id="https-mangled"),
    pytest.param("https://app.example:8443/cb", ["https://app.example/cb"],
                 id="https-port-is-never-a-wildcard"),
    pytest.param(REDIRECT, REDIRECT, id="a-string-not-a-list"),
    pytest.param(REDIRECT, None, id="null"),
    pytest.param(REDIRECT, [1, REDIRECT], id="not-all-strings"),
])
def test_a_registration_without_our_redirect_uri_fails_before_any_redirect(
        ours: str, answered: object) -> None:
    world = registration_world(redirect_uris=answered)
    flow = make_flow(AuthConfig(redirect_uri=ours))
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError), flow.error
    message = str(flow.error)
    assert "redirect_uris" in message or "redirect URIs" in message
    assert CLIENT_SECRET not in message and CLIENT_SECRET not in repr(flow.error.args)
    assert not flow.busy and redirects(drain(flow)) == []  # the browser is never opened
    assert not any(r.url.endswith("/token") for r in world.log)


def test_the_refusal_names_what_was_registered_and_what_is_sent() -> None:
    world = registration_world(redirect_uris=["https://u:pw@elsewhere.example/cb?k=v"])
    flow = make_flow()
    challenge(flow, world)
    message = str(flow.error)
    assert "https://***@elsewhere.example/cb" in message and REDIRECT in message
    assert "pw" not in message.replace("pw@", "") and "k=v" not in message


def test_a_long_list_of_redirect_uris_is_shown_shortened() -> None:
    world = registration_world(redirect_uris=[f"https://x{i}.example/cb" for i in range(500)])
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError)
    assert "and 497 more" in str(flow.error) and len(str(flow.error)) < 1500


def test_a_registration_answer_without_redirect_uris_registered_what_was_asked() -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(201, {"client_id": "silent-client",
                                                 "token_endpoint_auth_method": "none"})
    flow = make_flow()
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["client_id"] == "silent-client"


def test_our_redirect_uri_among_others_is_accepted_and_only_it_is_kept() -> None:
    world = registration_world(redirect_uris=["https://app.example/cb", REDIRECT]
                               + [f"https://x{i}.example/cb" for i in range(2000)])
    flow = make_flow()
    events = authorize(flow, world)
    assert flow.error is None and bearer(flow) == world.access_tokens[-1]
    record = [e for e in events if hasattr(e, "record")][-1].record
    assert record["issuers"][AS]["client"]["redirect_uris"] == [REDIRECT]


def test_a_portless_loopback_registration_accepts_the_port_we_send() -> None:
    # RFC 8252 section 7.3: a loopback redirect URI registered without a port matches any.
    world = registration_world(redirect_uris=[REDIRECT])
    flow = make_flow(AuthConfig(redirect_uri=PORTED))
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["redirect_uri"] == PORTED


@pytest.mark.parametrize(("ours", "registered", "matches"), [
    (REDIRECT, [REDIRECT], True),
    (PORTED, [REDIRECT], True),
    ("http://[::1]:4000/cb", ["http://[::1]/cb"], True),
    ("http://localhost:4000/cb", ["http://localhost/cb"], True),
    ("http://127.0.0.1:4000/cb?a=1", ["http://127.0.0.1/cb?a=1"], True),
    ("http://127.0.0.1:4000", ["http://127.0.0.1"], True),
    (REDIRECT, [PORTED], False),
    (PORTED, ["http://127.0.0.1:9/callback"], False),
    ("http://127.0.0.1:4000/cb", ["http://127.0.0.1/cb/"], False),
    ("http://127.0.0.2:4000/cb", ["http://127.0.0.2/cb"], False),
    ("https://127.0.0.1:4000/cb", ["https://127.0.0.1/cb"], False),
    ("http://example.com:4000/cb", ["http://example.com/cb"], False),
    ("http://127.0.0.1:4000x/cb", ["http://127.0.0.1x/cb"], False),
    (REDIRECT, [], False),
])
def test_redirect_uri_registered(ours: str, registered: list[str], matches: bool) -> None:
    assert redirect_uri_registered(ours, registered) is matches


def stored_dcr(redirect_uri: str, redirect_uris: list[str] | None = None) -> dict[str, Any]:
    """A record holding a registration made for ``redirect_uri`` (and what the server
    registered), no tokens: the next challenge needs a new authorization."""
    record = record_for(AS, client_id="stored-client")
    sub = record["issuers"][AS]
    del sub["tokens"]
    sub["client"]["redirect_uri"] = redirect_uri
    if redirect_uris is not None:
        sub["client"]["redirect_uris"] = redirect_uris
    return record


def test_a_stored_registration_for_another_redirect_uri_registers_again() -> None:
    # An earlier run registered its loopback port; this run listens on another.  Reusing
    # the registration would send a redirect URI the server never registered.
    world = standard_world()
    flow = make_flow(AuthConfig(redirect_uri="http://127.0.0.1:40000/callback"),
                     record=stored_dcr("http://127.0.0.1:53682/callback"))
    redirect = until_redirect(flow, world)
    assert registration_request(world).json["redirect_uris"] == [
        "http://127.0.0.1:40000/callback"]
    assert query_of(redirect.url)["client_id"] != "stored-client"


def test_a_stored_registration_for_our_redirect_uri_is_reused() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(redirect_uri=PORTED), record=stored_dcr(PORTED))
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["client_id"] == "stored-client"
    assert not any(u.endswith("/register") for u in world.urls())


def test_a_stored_portless_registration_is_reused_on_another_port() -> None:
    # The server registered the portless loopback URI: any port fits, no new registration.
    world = registration_world(redirect_uris=[REDIRECT])
    first = make_flow(AuthConfig(redirect_uri=PORTED))
    events = authorize(first, world)
    assert first.error is None
    record = [e for e in events if hasattr(e, "record")][-1].record
    assert record["issuers"][AS]["client"]["redirect_uris"] == [REDIRECT]
    del record["issuers"][AS]["tokens"]
    registrations = len([u for u in world.urls() if u.endswith("/register")])
    later = make_flow(AuthConfig(redirect_uri="http://127.0.0.1:40000/callback"),
                      record=record)
    redirect = until_redirect(later, world)
    assert query_of(redirect.url)["redirect_uri"] == "http://127.0.0.1:40000/callback"
    assert len([u for u in world.urls() if u.endswith("/register")]) == registrations


def test_a_new_registration_is_used_at_once_not_registered_again() -> None:
    # What was just registered must pass the same check the authorization applies, else
    # register -> client -> register would loop.
    world = registration_world(redirect_uris=["https://app.example/cb", REDIRECT])
    flow = make_flow(AuthConfig(redirect_uri=PORTED))
    until_redirect(flow, world)
    assert len([u for u in world.urls() if u.endswith("/register")]) == 1


def test_a_refresh_never_needs_the_redirect_uri() -> None:
    world = standard_world()
    world.refresh_tokens.append("RT-old")
    record = record_for(AS, client_id="c", meta=as_meta(AS))
    record["issuers"][AS]["client"]["redirect_uris"] = ["https://elsewhere.example/cb"]
    flow = make_flow(AuthConfig(interactive=False), record=record)
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    [req] = world.serve(flow, T0)
    assert req.form["grant_type"] == "refresh_token" and flow.error is None


@pytest.mark.parametrize("secret", [5, ["x"], "bad\x00secret", "\ud800"])
def test_a_stored_registration_with_an_unusable_secret_registers_again(secret: object
                                                                       ) -> None:
    record = stored_dcr(REDIRECT)
    client = record["issuers"][AS]["client"]
    client.update(client_secret=secret, method="client_secret_basic")
    world = standard_world()
    flow = make_flow(record=record)
    until_redirect(flow, world)
    assert flow.error is None
    assert any(u.endswith("/register") for u in world.urls())


@pytest.mark.parametrize("client_id", ["\ud800", "id\nwith-newline", "x" * 20_000])
def test_a_registered_client_id_that_cannot_be_sent_is_refused(client_id: str) -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(201, {"client_id": client_id,
                                                 "token_endpoint_auth_method": "none"})
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError), flow.error
    assert redirects(drain(flow)) == []


def test_a_registered_secret_that_cannot_be_sent_is_refused_unquoted() -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(201, {
        "client_id": "c", "token_endpoint_auth_method": "client_secret_basic",
        "client_secret": "Zq7\ud800secret"})
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError), flow.error
    assert "Zq7" not in str(flow.error)


# -- 2. safe_url --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "shown"), [
    ("@https://user:pw@h.com/x", "@https://***@h.com/x"),
    ("https://user:pw@h.com/x", "https://***@h.com/x"),
    ("HTTPS://user:pw@H.com/x", "HTTPS://***@H.com/x"),
    ("hTtP://user@h.com", "hTtP://***@h.com"),
    ("//user:pw@h/x", "//***@h/x"),
    ("https:user:pw@h.com/x", "https:***@h.com/x"),
    ("https:/user:pw@h.com/x", "https:/***@h.com/x"),
    ("https:\\\\user:pw@h.com/x", "https:\\\\***@h.com/x"),
    ("https:///user:pw@h.com/x", "https:///***@h.com/x"),
    ("wss://user:pw@h.com/x", "wss://***@h.com/x"),
    ("git+ssh://user:pw@h.com/x", "git+ssh://***@h.com/x"),
    ("x://user:pw@[::1]:8080/x", "x://***@[::1]:8080/x"),
    ("http://user:pw@[fe80::1%25eth0]/", "http://***@[fe80::1%25eth0]/"),
    ("https://us%65r:p%40ss@h.com/", "https://***@h.com/"),
    ("https://user:p@ss@h.com/", "https://***@h.com/"),
    ("https://user:pa/ss@h.com/x", "https://***@h.com/x"),
    ("https://user:pa?ss@h.com/x", "https://***@h.com/x"),
    ("https://user:pa#ss@h.com/x", "https://***@h.com/x"),
    ("https://user:12/34@h.com/x", "https://***@h.com/x"),
    ("https://user:p\nw@h.com/x", "https://***@h.com/x"),
    ("https://user:p w@h.com/x", "https://***@h.com/x"),
    ("https://good.example\\@evil.example/", "https://***@evil.example/"),
    ("see https://a:b@one.example/ and https://c:d@two.example/x ok",
     "see https://***@one.example/ and https://***@two.example/x ok"),
    ("prefix(https://a:b@one.example)", "prefix(https://***@one.example)"),
    ("https://h.com/x?access_token=SECRET", "https://h.com/x"),
    ("https://h.com/cb#code=SECRET&state=s", "https://h.com/cb"),
    ("https://h.com?next=https://a:b@c.example", "https://h.com"),
    ("https://h.com/a?x=1 then https://u:p@o.example", "https://h.com/a"),
    ("https://h.com/x\x00y\x7f", "https://h.com/x\\x00y\\x7f"),
    ("", ""),
    ("https://h.com/\u00e9", "https://h.com/\u00e9"),
])
def test_safe_url_examples(text: str, shown: str) -> None:
    assert safe_url(text) == shown


@pytest.mark.parametrize("text", [
    "https://server.smithery.ai/@owner/name/mcp",  # an @ in the path is not userinfo
    "https://h.com/a/@b/c",
    "http://[::1]/x",
    "http://127.0.0.1:8000/mcp",
    "https://h.com, mail admin at example.org",
    "https://a.example and https://b.example/x",
    "mailto:someone@example.org",
    "not a url at all",
    "https://h.com/" + "a" * (MAX_SHOWN_URL - 20),
])
def test_safe_url_leaves_what_has_no_userinfo(text: str) -> None:
    assert safe_url(text) == text


def test_safe_url_shortens_and_names_non_strings() -> None:
    long = "https://h.com/" + "a" * 1000
    shown = safe_url(long)
    assert len(shown) == MAX_SHOWN_URL and shown.endswith("...")
    assert safe_url(None) == "(a NoneType, not a URL)"  # type: ignore[arg-type]


def test_safe_url_is_linear() -> None:
    # A hostile string with an authority start every few characters and no "@": each one
    # must not rescan the rest of the string.
    for text in ("//a:" * 50_000, "https:a:" * 30_000, "//a:" * 50_000 + "@h",
                 "/" * 200_000, "@" * 200_000, "//" + "@" * 200_000,
                 "//h:1/" * 50_000 + "?@", "//h:1/" * 50_000 + "@",
                 "https://h:8443/" * 20_000 + "#@"):
        started = time.perf_counter()
        safe_url(text)
        assert time.perf_counter() - started < 2.0


USERINFO_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                  "-._~!$&'()*+,;=:%@")
#: The filler between URLs: anything but the letters that make a secret recognisable.
FILLER = st.text(alphabet=st.characters(blacklist_characters="QZ",
                                        blacklist_categories=["Cs"]), max_size=12)


@st.composite
def secret_part(draw: st.DrawFn, n: int, password: bool) -> str:
    """A user name or password: recognisable (``QZ<n>``: never in the filler or the rest of
    the URL) and otherwise any userinfo characters, raw ``@`` and percent-encoding included;
    sometimes a raw character a careless writer leaves in (``/``, space...; in a password
    also ``?`` and ``#``: in a user name they end the authority for every parser and for
    :func:`safe_url` too, which shows what precedes them as the host it is read as)."""
    body = draw(st.text(alphabet=USERINFO_CHARS, max_size=8))
    odd = draw(st.sampled_from(["", "", "", "/", " ", "\t", "\n", "\\"]
                               + (["?", "#"] if password else [])))
    cut = draw(st.integers(0, len(body)))
    return f"QZ{n}" + body[:cut] + odd + body[cut:] + "QZ"


@st.composite
def credential_url(draw: st.DrawFn, n: int) -> tuple[str, list[str]]:
    scheme = draw(st.sampled_from(["https://", "HTTP://", "hTtPs:", "https:/", "//", "ws://",
                                   "git+ssh://", "https:\\\\", "ftp:///", "x-y.z://"]))
    user = draw(secret_part(2 * n, password=False))
    password = draw(st.none() | secret_part(2 * n + 1, password=True))
    host = draw(st.sampled_from(["h.example", "[::1]", "[2001:db8::1]", "127.0.0.1",
                                 "xn--bcher-kva.example", "h"]))
    port = draw(st.sampled_from(["", ":8080", ":"]))
    rest = draw(st.sampled_from(["", "/", "/path", "/@team/x", "?q=1", "#f", "/a?b#c"]))
    userinfo = user if password is None else f"{user}:{password}"
    secrets = [user] if password is None else [user, password]
    # a user name alone with a raw "/" is a host and a path for every parser, and for
    # safe_url: with a password (a ":" before the "@") it is hidden
    if "/" in user and password is None:
        userinfo = f"{user}:x"
    return f"{scheme}{userinfo}@{host}{port}{rest}", secrets


@st.composite
def text_with_credentials(draw: st.DrawFn) -> tuple[str, list[str]]:
    pieces: list[str] = [draw(FILLER)]
    secrets: list[str] = []
    for n in range(draw(st.integers(1, 3))):
        url, found = draw(credential_url(n))
        pieces += [url, draw(st.sampled_from(["", " ", ", ", "\n", "(", ")", " and "]))
                   + draw(FILLER)]
        secrets += found
    return "".join(pieces), secrets


@FUZZ
@given(text_with_credentials())
@example(("@https://user:QZ0pwQZ@h.com/x", ["QZ0pwQZ"]))
@example(("https://QZ0a/bQZ:QZ1c?dQZ@h/x", ["QZ0a/bQZ", "QZ1c?dQZ"]))
@example(("https://QZ0QZ@h.example:8080/https://QZ2@QZ:QZ30?QZ@h.example",
          ["QZ0QZ", "QZ2@QZ", "QZ30?QZ"]))
def test_safe_url_never_shows_a_credential(case: tuple[str, list[str]]) -> None:
    text, secrets = case
    shown = safe_url(text)
    for secret in secrets:
        core = secret.translate(str.maketrans("", "", "\t\n\r"))
        assert core not in shown, (text, shown)
        # nor a piece of it long enough to matter: the marker and what follows it
        assert core[:4] not in shown or len(core) <= 4, (text, shown)
    try:  # the URL policy's own messages too
        parse_auth_url(text, what="the endpoint")
    except UnsafeUrl as exc:
        for secret in secrets:
            assert secret[:4] not in str(exc), (text, str(exc))


@FUZZ
@given(st.text(alphabet=st.characters(blacklist_characters="@?#",
                                      blacklist_categories=["Cc", "Cs", "Zl", "Zp"]),
               max_size=MAX_SHOWN_URL))
def test_safe_url_leaves_text_without_userinfo_query_or_controls_unchanged(text: str) -> None:
    assert safe_url(text) == text


@FUZZ
@given(st.sampled_from(["https://", "http://", "//", "HTTPS://"]),
       st.sampled_from(["h.example", "[::1]", "127.0.0.1", "server.smithery.ai"]),
       st.lists(st.text(alphabet="abc@!$&'()*+,;=-._~%", min_size=1, max_size=6),
                max_size=4))
def test_safe_url_leaves_an_at_sign_in_a_path_alone(scheme: str, host: str,
                                                    segments: list[str]) -> None:
    # no ":" in the path: "https://h/a:b@c" is taken for a password with a raw "/"
    url = f"{scheme}{host}" + "".join(f"/{s}" for s in segments)
    if len(url) <= MAX_SHOWN_URL:
        assert safe_url(url) == url


@FUZZ
@given(st.sampled_from(["access_token", "code", "state", "refresh_token", "id_token",
                        "client_secret"]),
       st.sampled_from(["?", "#", "/x?", "/cb#", "?a=1&"]), FILLER)
def test_query_and_fragment_secrets_never_survive(name: str, mark: str, after: str) -> None:
    text = f"https://h.example{mark}{name}=QZsecretQZ{after}"
    assert "QZsecretQZ" not in safe_url(text)
    assert safe_url(text).startswith("https://h.example")



# An "@" in the query or fragment of a URL with a plain host and a port is not a userinfo end:
# the message names the real host, never one chosen by whoever wrote the query.
@pytest.mark.parametrize(("text", "shown"), [
    ("https://mcp.example.com:8443/mcp?email=a@b.com", "https://mcp.example.com:8443/mcp"),
    ("http://localhost:3000/cb?u=x@evil.example", "http://localhost:3000/cb"),
    ("https://real.example:8443/x#https://u@phish.example/login",
     "https://real.example:8443/x"),
    ("http://127.0.0.1:53682/callback?code=c&state=s&iss=https://a@evil.example",
     "http://127.0.0.1:53682/callback"),
    ("http://[::1]:3000/cb?u=x@evil.example", "http://[::1]:3000/cb"),
    ("//h.example:8080/?u=x@evil.example", "//h.example:8080/"),
    ("HTTPS://H.example:65535/a/b#x@evil", "HTTPS://H.example:65535/a/b"),
    ("https://u@h.example:8443/x?a@evil.example", "https://***@h.example:8443/x"),
    ("see http://localhost:3000/cb?u=x@evil.example", "see http://localhost:3000/cb"),
])
def test_an_at_sign_in_the_query_after_a_port_does_not_hide_the_host(text: str,
                                                                    shown: str) -> None:
    assert safe_url(text) == shown


# What still reads as a userinfo after "host:port" (a password that starts with digits and
# holds a raw "/", "?", "#" or whitespace reads as a port): the credential is hidden.
@pytest.mark.parametrize(("text", "shown"), [
    ("https://user:12/34@h.com/x", "https://***@h.com/x"),
    ("https://user:12/34@h.com/x?q=a@b.example", "https://***@h.com/x"),
    ("https://user:12/34/56@h.com/x", "https://***@h.com/x"),
    ("https://admin:2024#Spring@h.example/", "https://***@h.example/"),
    ("https://admin:2024?Spring@h.example/", "https://***@h.example/"),
    ("https://user:12 34@h.com/x", "https://***@h.com/x"),
    ("https://user:12\\34@h.com/x", "https://***@h.com/x"),
    ("https://user:99999/34?x@h.com/x", "https://***@h.com/x"),  # no port is over 65535
    ("https://user:123456/x?y@h.com/x", "https://***@h.com/x"),
    ("https://h:8443/@team", "https://***@team"),  # the same shape as user:12/34@h.com
    # an "@" of the path that is inside the userinfo of a URL starting in the path
    ("https://u@h.example:8080/https://v@w:pw?x@h.example", "https://***@h.example"),
    ("https://h.example:8080/x/https://v@w:pw?x@h.example", "https://***@h.example"),
])
def test_a_password_that_reads_as_a_port_is_still_hidden(text: str, shown: str) -> None:
    assert safe_url(text) == shown


def test_a_callback_for_another_path_names_the_real_host() -> None:
    with pytest.raises(CallbackRejected) as caught:
        check_callback("http://127.0.0.1:53682/other?u=x@evil.example&state=s&code=c",
                       redirect_uri=PORTED, state="s", issuer=AS, iss_advertised=False)
    assert "the callback is for http://127.0.0.1:53682/other, not" in str(caught.value)
    assert "evil" not in str(caught.value) and "***" not in str(caught.value)


def test_a_resource_mismatch_names_the_real_host() -> None:
    resource = "https://other.example:8443/mcp?contact=a@evil.example"
    body = json.dumps({"resource": resource, "authorization_servers": [AS]}).encode()
    with pytest.raises(ResourceMismatch) as caught:
        parse_prm(answer(200, body), PRM_HEADER, MCP)
    assert "is for https://other.example:8443/mcp, not" in str(caught.value)
    assert "evil" not in str(caught.value)


PATH_CHARS = "abcXYZ019-._~!$&'()*+,;=%"


@FUZZ
@given(st.sampled_from(["https://", "http://", "HTTPS://", "//", "ws://"]),
       st.sampled_from(["mcp.example.com", "localhost", "127.0.0.1", "[::1]",
                        "[2001:db8::1]", "xn--bcher-kva.example", "h", "a-b.c_d~e"]),
       st.none() | st.integers(0, 65535).map(str) | st.sampled_from(["080", "00443"]),
       st.lists(st.text(alphabet=PATH_CHARS, max_size=8), min_size=1, max_size=4),
       st.sampled_from(["?", "#"]),
       st.text(max_size=20), st.text(max_size=20))
@example("https://", "mcp.example.com", "8443", ["mcp"], "?", "email=a", "b.com")
@example("http://", "localhost", "3000", ["cb"], "?", "u=x", "evil.example")
@example("https://", "real.example", "8443", ["x"], "#", "https://u", "phish.example/login")
def test_the_host_shown_is_the_real_one_whatever_the_query_holds(
        scheme: str, host: str, port: str | None, segments: list[str], mark: str,
        before: str, after: str) -> None:
    # a plain host[:port], a path without "@" (or ":", which after a portless host may be a
    # user name with a raw "/"), then a query or fragment with an "@" in it
    authority = host if port is None else f"{host}:{port}"
    prefix = f"{scheme}{authority}" + "".join(f"/{s}" for s in segments)
    shown = safe_url(f"{prefix}{mark}{before}@{after}")
    assert shown.startswith(f"{scheme}{authority}/"), shown
    assert shown == prefix  # nothing hidden, nothing invented (and too short to be cut)


@st.composite
def digit_password_url(draw: st.DrawFn) -> str:
    """A URL whose password starts with a number that could be a port, then one raw
    character that ends an authority (or none), and whose user name is a plain host: all
    but the one shape ``user:digits/...?...@h`` that every parser reads as host:port."""
    digits = draw(st.integers(0, 999_999).map(str) | st.sampled_from(["0", "8443", "65535"]))
    odd = draw(st.sampled_from(["", "/", "?", "#", " ", "\\", "@", "/x/"]))
    body = draw(st.text(alphabet=USERINFO_CHARS, max_size=8))
    host = draw(st.sampled_from(["h.example", "[::1]", "127.0.0.1:8080", "h"]))
    rest = draw(st.sampled_from(["", "/", "/path", "/@team/x", "?q=a@b.example", "#f@g",
                                 "/a?b@c#d@e"]))
    scheme = draw(st.sampled_from(["https://", "http://", "//"]))
    return f"{scheme}QZ0user:{digits}{odd}QZ1{body}QZ@{host}{rest}"


@FUZZ
@given(digit_password_url(), FILLER)
@example("https://QZ0user:12/QZ1QZ@h.example/", "")
@example("https://QZ0user:2024#QZ1QZ@h.example/?a@b", "")
def test_a_password_that_starts_like_a_port_is_never_shown(url: str, after: str) -> None:
    shown = safe_url(url + after)
    assert "QZ0" not in shown and "QZ1" not in shown, (url, shown)


# -- 3. parsers raise only what they document --------------------------------------------------


def b64json(text: str | bytes) -> str:
    return b64url(text.encode() if isinstance(text, str) else text)


@pytest.mark.parametrize("header", ["[" * 1000, "[" * DEEP, '{"a":' * 1000 + "1" + "}" * 1000,
                                    "[" * DEEP + "]" * DEEP])
@pytest.mark.parametrize("where", ["header", "claims"])
def test_decode_unverified_deep_nesting_is_a_value_error(header: str, where: str) -> None:
    part = b64json(header)
    token = f"{part}.e30.sig" if where == "header" else f"e30.{part}.sig"
    with pytest.raises(ValueError, match=where) as info:
        decode_unverified(token)
    assert type(info.value) is ValueError


@pytest.mark.parametrize(("header", "claims"), [
    ({"alg": "nested"}, {"x": "nested"}), ({"x": "nested"}, {}), ({"alg": "nested"}, {}),
    ({}, {"x": float("nan")}), ({}, {"x": "\ud800"}), ({}, {"x": object()}),
])
def test_encode_jwt_raises_only_value_error(header: dict[str, Any],
                                            claims: dict[str, Any]) -> None:
    class Signer:
        alg = "ES256"

        def public_jwk(self) -> dict[str, str]:
            return {}

        def sign(self, data: bytes) -> bytes:
            return b"signature"

    deep: Any = "QZsecretQZ"
    for _ in range(DEEP // 20):
        deep = [deep]
    for part in (header, claims):
        for key, value in list(part.items()):
            if value == "nested":
                part[key] = deep
    with pytest.raises(ValueError) as info:
        encode_jwt(header, claims, Signer())
    assert type(info.value) is ValueError and "QZsecretQZ" not in str(info.value)


@pytest.mark.parametrize("part", [
    b64json(b"\xff\xfe{}"),  # not UTF-8
    b64json('{"a": ' + "9" * 5000 + "}"),  # an integer Python refuses to convert
    b64json("[]"), b64json("1"), b64json("null"),  # JSON, not an object
    "a", "ab=", "a+b", "\u00e9",  # not unpadded base64url
])
def test_decode_unverified_other_garbage_is_a_value_error(part: str) -> None:
    with pytest.raises(ValueError) as info:
        decode_unverified(f"{part}.e30.sig")
    assert type(info.value) is ValueError


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@st.composite
def nested(draw: st.DrawFn) -> bytes:
    """JSON nested deeper than any parser stack, or almost as deep, or unclosed."""
    depth = draw(st.sampled_from([900, 990, 1000, 5000, DEEP]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    closed = draw(st.booleans())
    return (opener * depth + "1" + (closer * depth if closed else "")).encode()


raw_parts = st.one_of(
    st.binary(max_size=40).map(b64url),
    json_values.map(lambda v: b64json(json.dumps(v))),
    nested().map(b64json),
    st.text(max_size=20),
)


@FUZZ
@given(st.lists(raw_parts, min_size=1, max_size=4).map(".".join) | st.text(max_size=80))
@example("." .join([b64json("[" * 1000), "e30", "sig"]))
def test_decode_unverified_raises_only_value_error(token: str) -> None:
    secret = "QZtokenQZ"
    try:
        header, claims = decode_unverified(token)
    except ValueError as exc:
        assert type(exc) is ValueError
        assert token[:200] not in str(exc) or len(token) < 8
        assert secret not in str(exc)
    else:
        assert isinstance(header, dict) and isinstance(claims, dict)


@FUZZ
@given(st.lists(st.one_of(st.text(max_size=300), st.integers(), st.none(), st.binary(max_size=9),
                          st.just('Bearer error="x", resource_metadata="' + "\\" * 20 + '"'),
                          st.just("Bearer " + "a=b, " * 3000)), max_size=5),
       st.booleans())
def test_the_challenge_parser_never_raises(values: list[Any], dpop: bool) -> None:
    challenges = parse_www_authenticate(values)
    picked = oauth_challenge(challenges, dpop=dpop)
    assert picked is None or picked in challenges
    for c in challenges:
        assert isinstance(c.scheme, str) and all(isinstance(v, str) for v in c.params.values())


@st.composite
def bodies(draw: st.DrawFn, fields: dict[str, Any]) -> bytes:
    """A body: ``fields`` with some members replaced by any JSON (or removed), garbage
    bytes, non-objects, deep nesting, or nesting inside one member."""
    kind = draw(st.sampled_from(["doc", "doc", "doc", "bytes", "value", "deep", "deep-member",
                                 "utf16", "bigint"]))
    if kind == "bytes":
        return draw(st.binary(max_size=60))
    if kind == "value":
        return json.dumps(draw(json_values)).encode()
    if kind == "deep":
        return draw(nested())
    doc = dict(fields)
    for key in draw(st.lists(st.sampled_from(sorted(fields)), max_size=3)):
        if draw(st.booleans()):
            doc.pop(key, None)
        else:
            doc[key] = draw(json_values)
    text = json.dumps(doc)
    if kind == "deep-member":
        key = draw(st.sampled_from(sorted(fields)))
        depth = draw(st.sampled_from([800, 950, 990]))
        text = text[:-1] + f', "{key}x": 0, "{key}": ' + "[" * depth + "]" * depth + "}"
        text = text.replace("{,", "{")
    if kind == "bigint":
        text = text[:-1] + ', "n": ' + "7" * 5000 + "}"
    return text.encode("utf-16" if kind == "utf16" else "utf-8")


def answer(status: int, body: bytes) -> AuthResponse:
    return AuthResponse(status, (("content-type", "application/json"),), body)


statuses = st.sampled_from([200, 200, 200, 201, 301, 400, 401, 404, 429, 500, 503])


@FUZZ
@given(statuses, bodies({"resource": MCP, "authorization_servers": [AS],
                         "scopes_supported": ["a"]}))
def test_parse_prm_raises_only_its_errors(status: int, body: bytes) -> None:
    try:
        prm = parse_prm(answer(status, body), PRM_HEADER, MCP)
    except (DiscoveryError, ResourceMismatch) as exc:
        assert len(str(exc)) < 2000
    else:
        assert prm is None or (prm.resource and prm.authorization_servers)


@FUZZ
@given(statuses, bodies(as_meta(AS)))
def test_parse_as_metadata_raises_only_its_errors(status: int, body: bytes) -> None:
    try:
        doc = parse_as_metadata(answer(status, body), f"{AS}/.well-known/x", AS)
    except (DiscoveryError, IssuerMismatch) as exc:
        assert len(str(exc)) < 2000
    else:
        assert doc is None or doc["issuer"] == AS


def test_an_issuer_that_is_not_a_string_is_named_by_its_type() -> None:
    for depth in (500, 900, 990):
        body = ('{"issuer": ' + "[" * depth + "]" * depth + "}").encode()
        try:
            parse_as_metadata(answer(200, body), f"{AS}/.well-known/x", AS)
        except IssuerMismatch as exc:
            assert "JSON array" in str(exc)


REGISTRATION = {"client_id": "c", "client_secret": CLIENT_SECRET,
                "token_endpoint_auth_method": "client_secret_basic",
                "redirect_uris": [REDIRECT], "grant_types": ["authorization_code"]}


@FUZZ
@given(st.sampled_from([200, 201, 201, 400, 500]), bodies(REGISTRATION),
       st.sampled_from(["none", "client_secret_basic", "client_secret_post"]))
def test_parse_registration_raises_only_registration_error(status: int, body: bytes,
                                                           requested: str) -> None:
    try:
        client = parse_registration(answer(status, body), f"{AS}/register", REDIRECT,
                                    requested)
    except RegistrationError as exc:
        assert CLIENT_SECRET not in str(exc) and CLIENT_SECRET not in repr(exc.args)
        assert len(str(exc)) < 2000
    else:
        assert isinstance(client["client_id"], str)
        assert redirect_uri_registered(REDIRECT, client["redirect_uris"])
        # what the record keeps can be sent: form-encoded and Basic-encoded
        for value in (client["client_id"], client["client_secret"] or "x"):
            value.encode("utf-8")


ACCESS = "QZaccess-tokenQZ"
REFRESH = "QZrefresh-tokenQZ"


@st.composite
def token_docs(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = {"access_token": ACCESS, "token_type": "Bearer", "expires_in": 60,
                           "refresh_token": REFRESH, "scope": "a b"}
    for key in draw(st.lists(st.sampled_from([*sorted(doc), "extra"]), max_size=3)):
        if draw(st.booleans()):
            doc.pop(key, None)
        else:
            doc[key] = draw(json_values | st.sampled_from(
                ["\ud800", "x\x00y", "7" * 400, "1e999", "nan", "-5", "DPoP", "bearer"]))
    return doc


@FUZZ
@given(token_docs(), st.booleans(), st.booleans())
@example({"access_token": ACCESS, "token_type": "Bearer", "refresh_token": "\ud800"},
         False, False)
def test_parse_tokens_raises_only_token_error(doc: dict[str, Any], dpop: bool,
                                              refreshing: bool) -> None:
    previous = Tokens("old", refresh_token="old-refresh") if refreshing else None
    try:
        tokens = parse_tokens(doc, what="token answer", dpop=dpop, wall_now=1e9,
                              previous=previous, requested=["a"])
    except TokenError as exc:
        for secret in (ACCESS, REFRESH):
            assert secret not in str(exc) and secret not in repr(exc.args)
    else:
        assert tokens.access_token == doc["access_token"]
        if tokens.refresh_token is not None:  # it goes back in a form: it must encode
            tokens.refresh_token.encode("utf-8")
        if tokens.expires_at is not None:
            assert tokens.expires_at > 1e9


@FUZZ
@given(st.one_of(
    st.text(max_size=120),
    st.builds(lambda q: f"{REDIRECT}?{q}", st.text(max_size=80)),
    st.builds(lambda state, code, extra: f"{REDIRECT}?state={state}&code={code}{extra}",
              st.sampled_from(["s", "t", "\ud800", "s\x00"]),
              st.sampled_from(["c", "", "\ud800", "c\x00", "%FF", "c%0A"]),
              st.sampled_from(["", "&iss=" + AS, "&iss=x", "&error=access_denied", "&code=2",
                               "#frag"])),
), st.booleans())
def test_check_callback_raises_only_its_errors(url: str, advertised: bool) -> None:
    try:
        code = check_callback(url, redirect_uri=REDIRECT, state="s", issuer=AS,
                              iss_advertised=advertised)
    except (CallbackRejected, AuthorizationDenied):
        pass
    else:
        code.encode("utf-8")


# -- the flow stays usable whatever a server answered ------------------------------------------


def test_a_refresh_token_that_cannot_be_sent_is_not_kept() -> None:
    # Kept, it would make every later refresh fail with UnicodeEncodeError (and the flow
    # report an unexpected failure on every 401) instead of authorizing again.
    world = standard_world()
    world.issue_refresh = False
    world.token_extra = {"expires_in": 3600, "refresh_token": "\ud800"}
    flow = make_flow()
    authorize(flow, world)
    assert flow.error is None and flow.tokens is not None
    assert flow.tokens.refresh_token is None
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 100) == "authorize"
    world.serve(flow, T0 + 100)
    assert flow.error is None and redirects(drain(flow))


def test_a_stored_refresh_token_that_cannot_be_sent_is_ignored() -> None:
    record = record_for(AS, client_id="c", refresh="\ud800", meta=as_meta(AS))
    flow = make_flow(record=record)
    assert flow.tokens is not None and flow.tokens.refresh_token is None


def test_a_callback_code_that_cannot_be_sent_is_rejected_before_the_token_request() -> None:
    world = standard_world()
    flow = make_flow()
    redirect = until_redirect(flow, world)
    state = query_of(redirect.url)["state"]
    before = len(world.log)
    flow.receive_callback(f"{REDIRECT}?code=\ud800&state={state}", now=T0 + 1)
    assert isinstance(flow.error, CallbackRejected), flow.error
    world.serve(flow, T0 + 1)
    assert len(world.log) == before


def test_a_callback_state_with_a_lone_surrogate_is_rejected_not_raised() -> None:
    world = standard_world()
    flow = make_flow()
    until_redirect(flow, world)
    flow.receive_callback(f"{REDIRECT}?code=c&state=\ud800", now=T0 + 1)
    assert isinstance(flow.error, CallbackRejected), flow.error


# -- the binding never calls the redirect for a registration it cannot use ---------------------


class WrongRedirectUris(AuthServer):
    """Registers ``https://elsewhere.example/cb`` whatever the client asks for, and refuses
    any other redirect URI at the authorization endpoint, as a real server does."""

    def _register(self, server: str, seen: Any) -> Any:
        reply = super()._register(server, seen)
        if reply.status != 201:
            return reply
        doc = json.loads(reply.body)
        doc["redirect_uris"] = ["https://elsewhere.example/cb"]
        self.clients[doc["client_id"]].redirect_uris = doc["redirect_uris"]
        return auth_server._json_reply(201, doc)


@pytest.mark.usefixtures("no_leaks")
def test_the_redirect_handler_is_not_called_for_an_unusable_registration() -> None:
    calls: list[str] = []

    def redirect(url: str) -> str:
        calls.append(url)
        return loopback_redirect_follow(url)

    with WrongRedirectUris() as srv:
        async def scenario(b: Any) -> None:
            auth = OAuth(client_name="t", redirect=redirect, store=MemoryTokenStore(),
                         exchange_timeout=3.0)
            c = b.connect_http(srv.mcp_url, auth=auth, timeout=10.0)
            try:
                with pytest.raises(RegistrationError, match="redirect"):
                    await c.call_tool("echo", {"text": "hi"})
            finally:
                await c.aclose()

        run("threads", scenario)
        assert calls == [] and srv.count("as", "/authorize") == 0
        assert srv.violations == []
