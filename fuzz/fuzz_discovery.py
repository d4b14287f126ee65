"""Fuzz harness for OAuth discovery: protected resource metadata (RFC 9728), authorization
server metadata (RFC 8414 / OpenID) and the URL policy behind them
(``mcp_proto.auth._discovery``, ``mcp_proto.auth._urls``).

``check(data)`` builds one discovery the way :class:`OAuthFlow` walks it, from the data read
two ways (chosen by the first byte):

- **raw** (a first byte below 0x80): the data decoded as latin-1 and split on ``\\n``: the
  MCP server URL, a ``WWW-Authenticate`` value, the resource metadata body, the
  authorization server metadata body, then more URLs;
- **structured** (otherwise): the same pieces drawn from the data: server URLs (paths,
  ports, loopback, private and IPv6 hosts, a query carrying a key, user-info), challenges
  naming a ``resource_metadata`` on the same or another origin, metadata documents whose
  ``resource`` is the server, a parent path, a sibling (``/mcpx``), another origin, or not a
  string, ``authorization_servers`` lists, issuers that match or not, endpoints that break
  the URL policy; HTTP statuses 200, 3xx, 4xx, 429, 5xx; bodies that are not JSON objects.

Then: ``prm_urls`` -> ``check_url`` of each candidate -> ``parse_prm`` -> ``pick_issuer`` ->
``as_metadata_candidates`` -> ``parse_as_metadata`` -> ``check_url`` of the endpoints ->
``default_endpoints``; and on every URL seen, ``parse_auth_url``, ``resource_matches``,
``canonical_resource``, ``address_zone`` and ``safe_url``.

Properties (any violation raises AssertionError):

- each function raises only what its docstring says: ``parse_prm`` DiscoveryError /
  ResourceMismatch (DiscoveryError for a 5xx or 429, None for another non-200 or a body that
  is not an object); ``parse_as_metadata`` DiscoveryError / IssuerMismatch; ``pick_issuer``
  IssuerMismatch; ``prm_urls``, ``prm_candidates``, ``as_metadata_candidates``,
  ``canonical_resource``, ``default_endpoints``, ``parse_auth_url`` UnsafeUrl;
  ``check_url`` UnsafeUrl (ValueError for an unknown zone); ``resource_matches``,
  ``address_zone`` and ``safe_url`` nothing;
- what they return is consistent: a ProtectedResource's ``resource`` matches the server and
  is what the document said; the issuer picked is one the server listed (the configured one
  when given); every metadata candidate is on the issuer's origin; ``prm_urls`` follows a
  ``resource_metadata`` only on the server's own origin, puts it first, has no repeats; a
  metadata document returned names the issuer it was fetched for; ``resource_matches`` is
  never true across origins; ``canonical_resource`` is idempotent; an ``AuthUrl`` has a
  lowercase host, a port in range, and its ``origin_url`` parses to the same origin;
- no secret leaks: a marker put into the user-info, the query or the fragment of every URL
  (server URL, ``resource_metadata``, ``resource``, ``authorization_servers``, issuers,
  endpoints) never appears in an exception message nor in ``safe_url``'s output, which is at
  most ``MAX_SHOWN_URL`` characters and holds no control character.

Run: ``python fuzz/fuzz_discovery.py /tmp/fz/discovery fuzz/corpus/discovery
-dict=fuzz/discovery.dict``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._auth_errors import DiscoveryError, IssuerMismatch, ResourceMismatch, UnsafeUrl
from mcp_proto.auth import _steps as _auth_steps
from mcp_proto.auth._challenge import Challenge, oauth_challenge, parse_www_authenticate
from mcp_proto.auth._discovery import (
    ProtectedResource,
    default_endpoints,
    parse_as_metadata,
    parse_prm,
    pick_issuer,
    prm_urls,
)
from mcp_proto.auth._exchange import AuthResponse
from mcp_proto.auth._urls import (
    AuthUrl,
    address_zone,
    as_metadata_candidates,
    canonical_resource,
    check_url,
    origin_of,
    parse_auth_url,
    prm_candidates,
    resource_matches,
)

T = TypeVar("T")

SECRET = "S3CRET-m4rker"
ZONES = ("loopback", "private", "link-local", "metadata", "unspecified", "multicast", "public",
         "name")
MAX_SHOWN_URL: int = getattr(_auth_steps, "MAX_SHOWN_URL", 200)
safe_url: Callable[[str], str] = _auth_steps.safe_url

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

# -- vocabulary -------------------------------------------------------------------------------

HOSTS = ("rs.example", "RS.Example", "127.0.0.1", "localhost", "[::1]", "10.0.0.5",
         "169.254.169.254", "as.example", "evil.example", "[fe80::1%25eth0]", "127.1",
         "0x7f.1", "h_x.example", "a..b", "\u00e9.example", "[::ffff:10.0.0.1]", "")
PORTS = ("", ":443", ":8443", ":80", ":0", ":99999", ":", ":x")
PATHS = ("/mcp", "/mcp/", "", "/", "/mcp/x", "/mcpx", "/a/b", "/%2e%2e/", "/\u00e9",
         "/.well-known/oauth-protected-resource/mcp")
SCHEMES = ("https", "http", "HTTPS", "ftp", "")
USERINFO = ("", "", "", f"u:{SECRET}@", f"{SECRET}@", f"u:p@{SECRET}@")
QUERIES = ("", "", f"?api_key={SECRET}", "?a=b", "?", f"#{SECRET}", "#", f"?x=1#{SECRET}")
ODD_URLS = (f"https:u:{SECRET}@rs.example/", f"//u:{SECRET}@rs.example/x",
            f"https:\\\\u:{SECRET}@rs.example/", f"HTTPS://u:{SECRET}@rs.example:8443/",
            f"https://u:{SECRET}/x@rs.example/", f"https://rs.example/\tx?{SECRET}",
            f"https://u:{SECRET}@[::1]:8443/mcp", "https://rs.example/\x01", "not a url",
            f"https://rs.example:8443/@team?k={SECRET}", "\ud800", "https://" + "a" * 9000)
STATUSES = (200, 200, 200, 200, 404, 301, 302, 401, 403, 429, 500, 503, 0, 199)


def draw_url(ch: Choices) -> str:
    if ch.chance(8):
        return ch.pick(ODD_URLS)
    scheme = ch.pick(SCHEMES)
    # without a scheme: scheme-relative (``//userinfo@host``), or no authority at all
    head = f"{scheme}://" if scheme else ch.pick(("//", ""))
    userinfo = ch.pick(USERINFO) if head else ""
    return head + userinfo + ch.pick(HOSTS) + ch.pick(PORTS) + ch.pick(PATHS) + ch.pick(QUERIES)


def related_url(ch: Choices, server: str) -> str:
    """A URL like ``server``: the same, with a path changed, a query, or another origin."""
    try:
        parsed = parse_auth_url(server, what="x")
    except UnsafeUrl:
        return draw_url(ch)
    k = ch.below(6)
    if k == 0:
        return server
    if k == 1:
        return parsed.origin_url + ch.pick(PATHS) + ch.pick(QUERIES)
    if k == 2:
        return parsed.origin_url + parsed.path.rstrip("/") + ch.pick(("", "/", "x", "/sub"))
    if k == 3:
        return f"{parsed.scheme}://{ch.pick(USERINFO)}{parsed.authority}{parsed.path}"
    return draw_url(ch)


def draw_challenge(ch: Choices, server: str) -> str:
    rm = related_url(ch, server)
    if ch.chance(3):
        rm = rm.rstrip("/") + "/.well-known/oauth-protected-resource" + ch.pick(PATHS)
    parts = [f'Bearer resource_metadata="{rm}"', 'scope="a b"', 'error="invalid_token"']
    k = ch.below(5)
    if k == 0:
        return ""
    if k == 1:
        return f'DPoP algs="ES256", Bearer resource_metadata={rm}'
    return ", ".join(parts[:1 + ch.below(3)])


def draw_value(ch: Choices) -> Any:
    return ch.pick((None, 5, True, [], {}, "", ["a", 5], ["a"], "x" * 300))


def draw_prm(ch: Choices, server: str) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if not ch.chance(8):
        doc["resource"] = related_url(ch, server) if not ch.chance(8) else draw_value(ch)
    if not ch.chance(8):
        servers = [related_url(ch, "https://as.example/") for _ in range(1 + ch.below(3))]
        doc["authorization_servers"] = servers if not ch.chance(8) else draw_value(ch)
    if ch.chance(2):
        doc["scopes_supported"] = ch.pick((["a", "b"], [], "a", [1], None))
    return doc


def draw_as(ch: Choices, issuer: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"issuer": issuer if not ch.chance(4) else related_url(ch, issuer)}
    if ch.chance(8):
        doc["issuer"] = draw_value(ch)
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        if not ch.chance(4):
            doc[key] = related_url(ch, issuer) if not ch.chance(8) else draw_value(ch)
    doc["code_challenge_methods_supported"] = ch.pick((["S256"], ["plain"], [], "S256"))
    return doc


def body_of(ch: Choices, doc: Any) -> bytes:
    k = ch.below(16)
    if k == 0:
        return b"not json"
    if k == 1:
        return b"[" * 5000
    if k == 2:
        return b"[1]"
    if k == 3:
        return b'{"resource": NaN}'
    return json.dumps(doc, ensure_ascii=ch.chance(2)).encode("utf-8", "surrogatepass")


# -- checking ---------------------------------------------------------------------------------


def _no_secret(text: str, what: str) -> None:
    assert SECRET not in text, f"{what} shows a secret: {text[:300]!r}"


def call(what: str, fn: Callable[[], T], allowed: tuple[type[BaseException], ...],
         secrets: bool = True) -> T | None:
    """``fn()``, or None when it raised one of ``allowed`` (whose message must not hold the
    marker when ``secrets``: it was only put into user-info, queries and fragments)."""
    try:
        return fn()
    except allowed as exc:
        if secrets:
            _no_secret(str(exc), f"{what}: the {type(exc).__name__} message")
        return None
    except Exception as exc:
        escaped(what, exc)


def check_safe_url(url: Any, secrets: bool) -> None:
    try:
        shown = safe_url(url)
    except Exception as exc:
        escaped("safe_url", exc)
    assert isinstance(shown, str), f"safe_url returned {shown!r}"[:200]
    assert len(shown) <= MAX_SHOWN_URL, f"safe_url gave {len(shown)} characters"
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in shown), (
        f"safe_url let a control character through: {shown!r}"[:300])
    if secrets:
        _no_secret(shown, "safe_url")


def check_url_functions(url: str, server: str, secrets: bool) -> None:
    def c(what: str, fn: Callable[[], T], allowed: tuple[type[BaseException], ...] = ()
          ) -> T | None:
        return call(what, fn, allowed, secrets)

    check_safe_url(url, secrets)
    parsed = c("parse_auth_url", lambda: parse_auth_url(url, what="the URL"), (UnsafeUrl,))
    if parsed is not None:
        assert isinstance(parsed, AuthUrl) and parsed.raw == url
        assert parsed.host == parsed.host.lower() and 1 <= parsed.port <= 65535, parsed
        again = c("parse_auth_url of origin_url",
                  lambda: parse_auth_url(parsed.origin_url, what="x"), (UnsafeUrl,))
        assert again is not None and again.origin == parsed.origin, (
            f"origin_url {parsed.origin_url!r} does not parse back to {parsed.origin}")
        zone = c("address_zone", lambda: address_zone(parsed.host))
        assert zone in ZONES, zone
        for mcp_zone in ("public", "loopback", "bogus"):
            c("check_url", functools.partial(check_url, url, what="the URL", mcp_zone=mcp_zone,
                                             allow_http=mcp_zone == "public"),
              (UnsafeUrl, ValueError) if mcp_zone == "bogus" else (UnsafeUrl,))
    assert c("address_zone", lambda: address_zone(url)) in ZONES
    if c("resource_matches", lambda: resource_matches(url, server)):
        # (the server URL's fragment is dropped first: it is never sent)
        assert _origin(url) == _origin(server.partition("#")[0]) is not None, (
            "resource_matches across origins")
    canonical = c("canonical_resource", lambda: canonical_resource(url), (UnsafeUrl,))
    if canonical is not None:
        assert c("canonical_resource", lambda: canonical_resource(canonical),
                 (UnsafeUrl,)) == canonical, "canonical_resource is not idempotent"
    c("prm_candidates", lambda: prm_candidates(url, None), (UnsafeUrl,))
    c("as_metadata_candidates", lambda: as_metadata_candidates(url), (UnsafeUrl,))


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        return origin_of(url)
    except UnsafeUrl:  # a candidate made longer than MAX_URL_LENGTH: the flow refuses it
        return None


class Scenario:
    """One discovery: the server URL, a challenge, two answers and more URLs."""

    def __init__(self, server: str, header: str, prm: tuple[int, bytes],
                 as_meta: tuple[int, bytes] | None, wanted: str | None,
                 urls: list[str], *, secrets: bool) -> None:
        self.server = server
        self.header = header
        self.prm = prm
        self.as_meta = as_meta
        self.wanted = wanted
        self.urls = urls
        self.seen: list[str] = [server, *urls]
        self.secrets = secrets

    def call(self, what: str, fn: Callable[[], T],
             allowed: tuple[type[BaseException], ...] = ()) -> T | None:
        return call(what, fn, allowed, self.secrets)

    def run(self, ch: Choices | None) -> None:
        server = self.server
        origin = self.call("origin_of", lambda: origin_of(server), (UnsafeUrl,))
        challenges = self.call("parse_www_authenticate",
                          lambda: parse_www_authenticate([self.header]), ())
        challenge: Challenge | None = oauth_challenge(challenges or [])
        if origin is not None:
            self.discover(origin, challenge, ch)
        for url in self.seen:
            check_url_functions(url, server, self.secrets)

    def discover(self, origin: tuple[str, str, int], challenge: Challenge | None,
                 ch: Choices | None) -> None:
        server = self.server
        zone = address_zone(origin[1])
        candidates = self.call("prm_urls", lambda: prm_urls(server, origin, challenge),
                               (UnsafeUrl,))
        if candidates is None:
            return
        assert len(set(candidates)) == len(candidates), f"repeated candidates {candidates}"
        header = challenge.get("resource_metadata") if challenge is not None else None
        for i, url in enumerate(candidates):
            if header is not None and url == header:
                assert i == 0, "resource_metadata is not the first candidate"
            # the challenge's resource_metadata is followed on the server's origin only (R7)
            assert _origin(url) in (origin, None), f"candidate {url!r} on another origin"
            self.call("check_url", functools.partial(check_url, url,
                                                     what="resource metadata URL",
                                                     mcp_zone=zone), (UnsafeUrl,))
        self.seen.extend(candidates)
        status, body = self.prm
        response = AuthResponse(status, (("content-type", "application/json"),), body)
        prm = self.call("parse_prm", lambda: parse_prm(response, candidates[0], server),
                   (DiscoveryError, ResourceMismatch))
        doc = response.json_object()
        if status >= 500 or status == 429:
            assert prm is None, "parse_prm accepted a server error"
        if prm is None:
            if status == 200 and doc is not None and isinstance(doc.get("resource"), str):
                self.seen.append(doc["resource"])
            return
        assert isinstance(prm, ProtectedResource) and status == 200 and doc is not None
        assert prm.resource == doc["resource"] and resource_matches(prm.resource, server)
        assert prm.authorization_servers and all(isinstance(s, str)
                                                 for s in prm.authorization_servers)
        self.seen.extend([prm.resource, *prm.authorization_servers])
        issuer = self.call("pick_issuer", lambda: pick_issuer(prm.authorization_servers,
                                                         self.wanted, {}), (IssuerMismatch,))
        if issuer is None:
            assert self.wanted is not None and self.wanted not in prm.authorization_servers
            return
        assert issuer in prm.authorization_servers
        assert self.wanted is None or issuer == self.wanted
        metadata_urls = self.call("as_metadata_candidates", lambda: as_metadata_candidates(issuer),
                             (UnsafeUrl,))
        if metadata_urls is None:
            return
        issuer_origin = origin_of(issuer)
        for url in metadata_urls:
            assert _origin(url) in (issuer_origin, None), f"metadata URL {url!r} off the issuer"
        self.seen.extend(metadata_urls)
        self.authorization_server(issuer, metadata_urls[0], zone, ch)

    def authorization_server(self, issuer: str, url: str, zone: str,
                             ch: Choices | None) -> None:
        if self.as_meta is None:
            assert ch is not None
            self.as_meta = (ch.pick(STATUSES), body_of(ch, draw_as(ch, issuer)))
        status, body = self.as_meta
        response = AuthResponse(status, (), body)
        doc = self.call("parse_as_metadata", lambda: parse_as_metadata(response, url, issuer),
                   (DiscoveryError, IssuerMismatch))
        if doc is None:
            self.call("default_endpoints", lambda: default_endpoints(self.server, issuer),
                 (UnsafeUrl,))
            return
        assert doc.get("issuer") == issuer, "metadata of another issuer accepted"
        for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            endpoint = doc.get(key)
            if isinstance(endpoint, str):
                self.seen.append(endpoint)
                self.call("check_url", functools.partial(check_url, endpoint, what=key,
                                                         mcp_zone=zone), (UnsafeUrl,))


def scenario_raw(data: bytes) -> Scenario:
    lines = data.decode("latin-1").split("\n")
    lines += [""] * (4 - len(lines))
    return Scenario(lines[0], lines[1], (200, lines[2].encode("latin-1")),
                    (200, lines[3].encode("latin-1")), None, lines[4:12], secrets=False)


def scenario_drawn(ch: Choices) -> Scenario:
    server = draw_url(ch) if ch.chance(3) else ch.pick((
        "https://rs.example/mcp", f"https://rs.example/mcp?api_key={SECRET}",
        "http://127.0.0.1:3000/mcp", "https://rs.example", "http://localhost:8080/a/b/"))
    header = draw_challenge(ch, server)
    prm = (ch.pick(STATUSES), body_of(ch, draw_prm(ch, server)))
    wanted = None if not ch.chance(4) else related_url(ch, "https://as.example/")
    urls = [draw_url(ch) for _ in range(ch.below(3))]
    return Scenario(server, header, prm, None, wanted, urls, secrets=True)


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        scenario_raw(data).run(None)
        return
    ch = Choices(data[1:])
    scenario_drawn(ch).run(ch)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
