"""The authorization machine (mcp_proto.auth._flow.OAuthFlow) without I/O.

A small fake world (:class:`World`) plays the protected resource's metadata and an
authorization server: it parses every :class:`AuthExchange` the flow asks for with h11,
answers it by URL, and approves the authorization request the way a browser and a user would.
The tests read as scenarios against it: discovery order, issuer checks, PKCE, scope and
resource parameters, registration, callback validation, token parsing, client
authentication, token confidentiality (R1), per-issuer records, refresh, limits, URL policy,
and two hypothesis checks (garbage answers, and a rule-based machine over every input).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

import h11
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import mcp_proto.auth._flow as auth_flow_module
import mcp_proto.auth._procedure as auth_procedure_module
from mcp_proto._auth_errors import (
    AuthorizationDenied,
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    CallbackRejected,
    DiscoveryError,
    InsufficientScope,
    IssuerMismatch,
    PkceUnsupported,
    RegistrationError,
    ResourceMismatch,
    TokenError,
    UnsafeUrl,
)
from mcp_proto.auth._config import MAX_TOKEN_LIFETIME, MIN_TOKEN_LIFETIME, AuthConfig, Tokens
from mcp_proto.auth._exchange import MAX_AUTH_BODY, AuthExchange
from mcp_proto.auth._flow import (
    AUTHORIZATION_WINDOW,
    MAX_AUTHORIZATIONS_PER_WINDOW,
    MAX_STEP_UPS_PER_SCOPE,
    REFRESH_SKEW,
    TRANSITIONS,
    AuthEvent,
    Authorized,
    OAuthFlow,
    RedirectRequired,
    SaveRecord,
)
from mcp_proto.auth._jwt import b64url, b64url_decode, decode_unverified
from mcp_proto.auth._steps import check_callback

MCP = "http://127.0.0.1:8000/mcp"
MCP_ORIGIN = "http://127.0.0.1:8000"
PRM_HEADER = f"{MCP_ORIGIN}/.well-known/custom-prm"
PRM_PATH = f"{MCP_ORIGIN}/.well-known/oauth-protected-resource/mcp"
PRM_ROOT = f"{MCP_ORIGIN}/.well-known/oauth-protected-resource"
AS = "http://127.0.0.1:9000"
AS_B = "http://127.0.0.1:9100"
WALL = 1_700_000_000.0
T0 = 1000.0
CHALLENGE = f'Bearer resource_metadata="{PRM_HEADER}"'
SECRET = "S3cr3t-client-secret"

# -- a deterministic world ---------------------------------------------------------------------


class Rand:
    """Deterministic ``random_bytes``: distinct, reproducible bytes on every call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, n: int) -> bytes:
        self.calls += 1
        seed = hashlib.sha256(f"rand-{self.calls}".encode()).digest()
        return (seed * (n // 32 + 1))[:n]


@dataclass
class Req:
    """One auth exchange's request, as a server reads it."""

    exchange: AuthExchange
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def url(self) -> str:
        return self.exchange.url.origin_url + self.target.partition("?")[0]

    @property
    def origin(self) -> str:
        return self.exchange.url.origin_url

    @property
    def purpose(self) -> str:
        return self.exchange.purpose

    @property
    def form(self) -> dict[str, str]:
        pairs = parse_qsl(self.body.decode("ascii"), keep_blank_values=True, strict_parsing=True)
        assert len({k for k, _ in pairs}) == len(pairs), "a form parameter is repeated"
        assert self.headers["content-type"] == "application/x-www-form-urlencoded"
        return dict(pairs)

    @property
    def json(self) -> Any:
        assert self.headers["content-type"] == "application/json"
        return json.loads(self.body)


def parse_request(ex: AuthExchange) -> Req:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(ex.data)
    request = conn.next_event()
    assert isinstance(request, h11.Request)
    headers: dict[str, str] = {}
    for k, v in request.headers:
        name = k.decode().lower()
        assert name not in headers or name == "accept", f"header {name} repeated"
        headers[name] = v.decode()
    body = b""
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
        else:  # pragma: no cover - the request is always complete
            raise AssertionError(f"unexpected {event!r}")
    assert headers["host"] == ex.url.authority
    return Req(ex, request.method.decode(), request.target.decode(), headers, body)


def response(status: int, body: object = None, headers: tuple[tuple[str, str], ...] = ()
             ) -> bytes:
    """Raw HTTP/1.1 response bytes; ``body`` JSON-encoded unless bytes or str."""
    if body is None:
        payload = b""
    elif isinstance(body, bytes):
        payload = body
    elif isinstance(body, str):
        payload = body.encode()
    else:
        payload = json.dumps(body).encode()
    head = [f"HTTP/1.1 {status} Whatever", "Content-Type: application/json",
            f"Content-Length: {len(payload)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload


Handler = Callable[[Req], bytes]


def fixed(status: int, body: object = None) -> Handler:
    return lambda _req: response(status, body)


def as_meta(issuer: str, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer.rstrip('/')}/authorize",
        "token_endpoint": f"{issuer.rstrip('/')}/token",
        "registration_endpoint": f"{issuer.rstrip('/')}/register",
        "code_challenge_methods_supported": ["S256"],
        "response_types_supported": ["code"],
    }
    doc.update(extra)
    return {k: v for k, v in doc.items() if v is not None}


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str | None
    scope: str | None


@dataclass
class World:
    """A protected resource and its authorization server(s), answering by URL."""

    routes: dict[str, Handler] = field(default_factory=dict)
    log: list[Req] = field(default_factory=list)
    grants: dict[str, Grant] = field(default_factory=dict)
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    access_tokens: list[str] = field(default_factory=list)
    refresh_tokens: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    registration: dict[str, Any] = field(default_factory=dict)
    """Extra members of every registration answer (``token_endpoint_auth_method``...)."""
    token_extra: dict[str, Any] = field(default_factory=lambda: {"expires_in": 3600})
    issue_refresh: bool = True
    iss_in_callback: str | None = None
    counter: int = 0

    # setup ---------------------------------------------------------------------------------

    def add_prm(self, url: str = PRM_PATH, resource: str = MCP,
                servers: tuple[str, ...] = (AS,), **extra: Any) -> None:
        doc: dict[str, Any] = {"resource": resource, "authorization_servers": list(servers)}
        doc.update(extra)
        self.routes[url] = fixed(200, doc)

    def add_as(self, issuer: str = AS, **extra: Any) -> dict[str, Any]:
        doc = as_meta(issuer, **extra)
        parts = urlsplit(issuer)
        path = parts.path.rstrip("/")
        origin = f"{parts.scheme}://{parts.netloc}"
        self.routes[f"{origin}/.well-known/oauth-authorization-server{path}"] = fixed(200, doc)
        base = issuer.rstrip("/")
        self.routes[f"{base}/register"] = self.register
        self.routes[f"{base}/token"] = self.token
        return doc

    # endpoints -----------------------------------------------------------------------------

    def register(self, req: Req) -> bytes:
        body = req.json
        self.counter += 1
        client_id = f"client-{self.counter}@{req.exchange.url.port}"
        doc = {"client_id": client_id, "redirect_uris": body["redirect_uris"],
               "token_endpoint_auth_method": body["token_endpoint_auth_method"],
               **self.registration}
        if doc["token_endpoint_auth_method"] in ("client_secret_basic",
                                                 "client_secret_post") \
                and "client_secret" not in doc:
            doc["client_secret"] = f"{SECRET}-{self.counter}"
        if isinstance(doc.get("client_secret"), str):
            self.secrets.append(doc["client_secret"])
        self.clients[client_id] = doc
        return response(201, doc)

    def issue(self, scope: str | None) -> bytes:
        self.counter += 1
        access = f"AT-{self.counter}-zzaccess"
        self.access_tokens.append(access)
        doc: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                               **self.token_extra}
        if self.issue_refresh:
            refresh = f"RT-{self.counter}-zzrefresh"
            self.refresh_tokens.append(refresh)
            doc["refresh_token"] = refresh
        if scope is not None and "scope" not in doc:
            doc["scope"] = scope
        return response(200, doc)

    def token(self, req: Req) -> bytes:
        form = req.form
        if form["grant_type"] == "authorization_code":
            grant = self.grants.pop(form["code"], None)
            if grant is None:
                return response(400, {"error": "invalid_grant"})
            verifier = form["code_verifier"]
            assert b64url(hashlib.sha256(verifier.encode()).digest()) == grant.challenge
            assert form["redirect_uri"] == grant.redirect_uri
            assert form.get("resource") == grant.resource
            return self.issue(grant.scope)
        if form["grant_type"] == "refresh_token":
            if form["refresh_token"] not in self.refresh_tokens:
                return response(400, {"error": "invalid_grant"})
            return self.issue(None)
        return self.issue(form.get("scope"))

    # driving -------------------------------------------------------------------------------

    def answer(self, req: Req) -> bytes:
        handler = self.routes.get(req.url)
        return handler(req) if handler is not None else response(404, {"error": "nope"})

    def serve(self, flow: OAuthFlow, now: float) -> list[Req]:
        """Answer every exchange the flow starts until it starts none."""
        served: list[Req] = []
        while exchanges := flow.exchanges_to_start():
            assert len(exchanges) == 1, "one exchange at a time"
            [ex] = exchanges
            req = parse_request(ex)
            self.log.append(req)
            served.append(req)
            flow.receive_exchange_data(ex.id, self.answer(req), now=now)
        return served

    def approve(self, redirect: RedirectRequired, **override: str | None) -> str:
        """What the browser comes back with after the user approves."""
        parts = urlsplit(redirect.url)
        pairs = parse_qsl(parts.query)
        query = dict(pairs)
        assert len(query) == len(pairs)
        self.counter += 1
        code = f"code-{self.counter}"
        self.grants[code] = Grant(query["client_id"], query["redirect_uri"],
                                  query["code_challenge"], query.get("resource"),
                                  query.get("scope"))
        out: dict[str, str | None] = {"code": code, "state": query["state"],
                                      "iss": self.iss_in_callback}
        out.update(override)
        return redirect.redirect_uri + "?" + urlencode(
            {k: v for k, v in out.items() if v is not None})

    def urls(self) -> list[str]:
        return [r.url for r in self.log]


def standard_world(**prm_extra: Any) -> World:
    world = World()
    prm_extra.setdefault("url", PRM_HEADER)
    world.add_prm(**prm_extra)
    world.add_as()
    return world


def make_flow(config: AuthConfig | None = None, *, url: str = MCP, zone: str = "loopback",
              record: dict[str, Any] | None = None) -> OAuthFlow:
    return OAuthFlow(config or AuthConfig(), url, random_bytes=Rand(), wall_offset=WALL,
                     mcp_zone=zone, record=record)


def drain(flow: OAuthFlow) -> list[AuthEvent]:
    out: list[AuthEvent] = []
    while (event := flow.next_event()) is not None:
        out.append(event)
    return out


def redirect_of(events: list[AuthEvent]) -> RedirectRequired:
    [redirect] = [e for e in events if isinstance(e, RedirectRequired)]
    return redirect


def challenge(flow: OAuthFlow, world: World, now: float = T0, www: str = CHALLENGE,
              status: int = 401) -> str:
    kind = flow.on_challenge(status, [www], None, flow.generation, now)
    world.serve(flow, now)
    return kind


def until_redirect(flow: OAuthFlow, world: World, now: float = T0, www: str = CHALLENGE
                   ) -> RedirectRequired:
    challenge(flow, world, now, www)
    assert flow.error is None, flow.error
    assert flow.state == "authorize"
    return redirect_of(drain(flow))


def authorize(flow: OAuthFlow, world: World, now: float = T0, www: str = CHALLENGE,
              **callback: str | None) -> list[AuthEvent]:
    """A whole interactive authorization; returns the events after the callback."""
    redirect = until_redirect(flow, world, now, www)
    flow.receive_callback(world.approve(redirect, **callback), now=now + 5)
    world.serve(flow, now + 5)
    return drain(flow)


def query_of(url: str) -> dict[str, str]:
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    query = dict(pairs)
    assert len(query) == len(pairs)
    return query


def token_requests(world: World) -> list[Req]:
    return [r for r in world.log if r.url.endswith("/token")]


def bearer(flow: OAuthFlow, now: float = T0) -> str | None:
    headers = dict(flow.headers("POST", now))
    value = headers.get("Authorization")
    return None if value is None else value.removeprefix("Bearer ")


def assert_no_token_sent(world: World) -> None:
    """R1: no access token on any auth exchange, in any place; refresh tokens only in a
    refresh request's body."""
    for req in world.log:
        raw = req.exchange.data
        for token in world.access_tokens:
            assert token.encode() not in raw, f"access token sent to {req.url}"
        for token in world.refresh_tokens:
            head = raw[:len(raw) - len(req.body)]
            assert token.encode() not in head, f"refresh token in the head to {req.url}"
            if token.encode() in req.body:
                assert req.form["grant_type"] == "refresh_token"


# -- the happy path -----------------------------------------------------------------------------


def test_full_authorization_code_flow_with_registration() -> None:
    world = standard_world()
    flow = make_flow()
    assert not flow.busy and flow.state == "idle" and flow.headers("POST", T0) == []
    events = authorize(flow, world)
    assert world.urls() == [PRM_HEADER, f"{AS}/.well-known/oauth-authorization-server",
                            f"{AS}/register", f"{AS}/token"]
    assert flow.error is None and not flow.busy and flow.generation == 1
    assert bearer(flow) == world.access_tokens[-1]
    authorized = [e for e in events if isinstance(e, Authorized)]
    assert authorized == [Authorized(AS, None, T0 + 5 + WALL + 3600)]
    saves = [e for e in events if isinstance(e, SaveRecord)]
    assert saves and saves[-1].key == MCP
    record = saves[-1].record
    assert record["issuer"] == AS
    assert record["issuers"][AS]["tokens"]["access_token"] == world.access_tokens[-1]
    assert record["issuers"][AS]["client"]["client_id"] == "client-1@9000"
    assert_no_token_sent(world)
    # the discovery requests: GET, JSON, no body, no credentials
    for req in world.log[:2]:
        assert req.method == "GET" and req.body == b""
        assert req.headers["accept"] == "application/json"
        assert "authorization" not in req.headers


def test_protocol_version_is_sent_on_discovery_requests() -> None:
    world = standard_world()
    flow = make_flow()
    flow.protocol_version = "2025-06-18"
    until_redirect(flow, world)
    assert world.log[0].headers["mcp-protocol-version"] == "2025-06-18"


# -- protected resource metadata discovery ------------------------------------------------------


def test_header_resource_metadata_is_fetched_first() -> None:
    world = standard_world(url=PRM_HEADER)
    world.add_prm(PRM_PATH, resource="http://127.0.0.1:8000/other")  # never reached
    flow = make_flow()
    until_redirect(flow, world)
    assert world.urls()[0] == PRM_HEADER


def test_cross_origin_header_url_is_not_fetched() -> None:
    world = standard_world(url=PRM_PATH)
    flow = make_flow()
    evil = "http://127.0.0.1:8001/.well-known/oauth-protected-resource/mcp"
    until_redirect(flow, world, www=f'Bearer resource_metadata="{evil}"')
    assert evil not in world.urls()
    assert all(not u.startswith("http://127.0.0.1:8001") for u in world.urls())
    assert world.urls()[0] == PRM_PATH


def test_prm_order_header_then_path_then_root_on_4xx() -> None:
    world = World()
    world.routes[PRM_HEADER] = fixed(401, {"error": "unauthorized"})
    world.routes[PRM_PATH] = fixed(400, b"bad")
    world.add_prm(PRM_ROOT)
    world.add_as()
    flow = make_flow()
    until_redirect(flow, world)
    assert world.urls()[:3] == [PRM_HEADER, PRM_PATH, PRM_ROOT]


def test_prm_path_then_root_without_header() -> None:
    world = World()
    world.add_prm(PRM_ROOT)
    world.add_as()
    flow = make_flow()
    until_redirect(flow, world, www="Bearer")
    assert world.urls()[:2] == [PRM_PATH, PRM_ROOT]


def test_prm_root_server_path_has_a_single_candidate() -> None:
    world = World()
    world.add_prm(PRM_ROOT, resource=MCP_ORIGIN)
    world.add_as()
    flow = make_flow(url=MCP_ORIGIN + "/")
    until_redirect(flow, world, www="Bearer")
    assert world.urls()[0] == PRM_ROOT


def test_prm_non_json_200_and_redirect_are_skipped() -> None:
    world = World()
    world.routes[PRM_HEADER] = fixed(200, b"<html>hi</html>")
    world.routes[PRM_PATH] = fixed(302)
    world.add_prm(PRM_ROOT)
    world.add_as()
    flow = make_flow()
    until_redirect(flow, world)
    assert world.urls()[:3] == [PRM_HEADER, PRM_PATH, PRM_ROOT]


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_prm_server_error_fails_without_further_candidates_or_legacy(status: int) -> None:
    world = standard_world(url=PRM_ROOT)
    world.routes[PRM_HEADER] = fixed(status, {"error": "later"})
    flow = make_flow()
    challenge(flow, world)
    assert world.urls() == [PRM_HEADER]
    assert isinstance(flow.error, DiscoveryError) and str(status) in str(flow.error)
    assert not flow.busy and flow.failures == 1 and flow.generation == 0
    assert drain(flow) == []


def test_prm_server_error_on_a_later_candidate_stops_too() -> None:
    world = standard_world(url=PRM_ROOT)
    world.routes[PRM_PATH] = fixed(503)
    flow = make_flow()
    challenge(flow, world)
    assert world.urls() == [PRM_HEADER, PRM_PATH]
    assert isinstance(flow.error, DiscoveryError)


def test_all_prm_4xx_falls_back_to_legacy_metadata_then_default_endpoints() -> None:
    world = World()
    world.routes[f"{MCP_ORIGIN}/register"] = world.register
    world.routes[f"{MCP_ORIGIN}/token"] = world.token
    flow = make_flow()
    redirect = until_redirect(flow, world)
    assert world.urls() == [PRM_HEADER, PRM_PATH, PRM_ROOT,
                            f"{MCP_ORIGIN}/.well-known/oauth-authorization-server",
                            f"{MCP_ORIGIN}/register"]
    assert redirect.url.startswith(f"{MCP_ORIGIN}/authorize?")
    assert query_of(redirect.url)["code_challenge_method"] == "S256"
    flow.receive_callback(world.approve(redirect), now=T0)
    world.serve(flow, T0)
    assert world.urls()[-1] == f"{MCP_ORIGIN}/token"
    assert flow.error is None and flow.issuer == MCP_ORIGIN and bearer(flow)


def test_legacy_metadata_document_is_used_when_its_issuer_is_the_origin() -> None:
    world = World()
    world.routes[f"{MCP_ORIGIN}/.well-known/oauth-authorization-server"] = fixed(
        200, as_meta(MCP_ORIGIN, authorization_endpoint=f"{MCP_ORIGIN}/oauth/authz"))
    world.routes[f"{MCP_ORIGIN}/register"] = world.register
    flow = make_flow()
    redirect = until_redirect(flow, world)
    assert redirect.url.startswith(f"{MCP_ORIGIN}/oauth/authz?")


def test_legacy_metadata_with_another_issuer_is_refused() -> None:
    world = World()
    world.routes[f"{MCP_ORIGIN}/.well-known/oauth-authorization-server"] = fixed(
        200, as_meta(AS))
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, IssuerMismatch)
    assert world.urls()[-1].endswith("/.well-known/oauth-authorization-server")


def test_legacy_metadata_server_error_fails() -> None:
    world = World()
    world.routes[f"{MCP_ORIGIN}/.well-known/oauth-authorization-server"] = fixed(500)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, DiscoveryError)
    assert not any(u.endswith("/register") for u in world.urls())


def test_prm_resource_mismatch_fails_before_any_authorization_server_request() -> None:
    world = standard_world(url=PRM_HEADER, resource="http://127.0.0.1:8000/mcpx")
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, ResourceMismatch)
    assert world.urls() == [PRM_HEADER]


def test_prm_without_authorization_servers_fails() -> None:
    world = World()
    world.routes[PRM_HEADER] = fixed(200, {"resource": MCP})
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, DiscoveryError) and world.urls() == [PRM_HEADER]


# -- authorization server metadata --------------------------------------------------------------


def test_as_metadata_candidates_for_a_path_issuer() -> None:
    issuer = "http://127.0.0.1:9000/tenant/a"
    world = standard_world(url=PRM_HEADER, servers=(issuer,))
    world.routes.clear()
    world.add_prm(PRM_HEADER, servers=(issuer,))
    doc = as_meta(issuer)
    world.routes[f"{AS}/tenant/a/.well-known/openid-configuration"] = fixed(200, doc)
    world.routes[f"{issuer}/register"] = world.register
    flow = make_flow()
    until_redirect(flow, world)
    assert world.urls()[1:4] == [
        f"{AS}/.well-known/oauth-authorization-server/tenant/a",
        f"{AS}/.well-known/openid-configuration/tenant/a",
        f"{AS}/tenant/a/.well-known/openid-configuration",
    ]


def test_as_metadata_candidates_for_a_root_issuer() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.routes[f"{AS}/.well-known/openid-configuration"] = fixed(200, as_meta(AS))
    world.routes[f"{AS}/register"] = world.register
    flow = make_flow()
    until_redirect(flow, world)
    assert world.urls()[1:3] == [f"{AS}/.well-known/oauth-authorization-server",
                                 f"{AS}/.well-known/openid-configuration"]


def test_as_metadata_all_refused_is_a_discovery_error() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, DiscoveryError)
    assert world.urls()[1:] == [f"{AS}/.well-known/oauth-authorization-server",
                                f"{AS}/.well-known/openid-configuration"]


def test_as_metadata_server_error_stops() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.routes[f"{AS}/.well-known/oauth-authorization-server"] = fixed(503)
    world.routes[f"{AS}/.well-known/openid-configuration"] = fixed(200, as_meta(AS))
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, DiscoveryError) and len(world.log) == 2


@pytest.mark.parametrize("named", [AS + "/", "http://127.0.0.1:9001", "HTTP://127.0.0.1:9000",
                                   None, 7])
def test_issuer_mismatch_is_fatal_and_nothing_else_is_fetched(named: object) -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    doc = as_meta(AS)
    doc["issuer"] = named
    world.routes[f"{AS}/.well-known/oauth-authorization-server"] = fixed(200, doc)
    world.routes[f"{AS}/.well-known/openid-configuration"] = fixed(200, as_meta(AS))
    world.routes[f"{AS}/register"] = world.register
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, IssuerMismatch)
    assert world.urls() == [PRM_HEADER, f"{AS}/.well-known/oauth-authorization-server"]
    assert drain(flow) == []


# -- PKCE and state -----------------------------------------------------------------------------


@pytest.mark.parametrize("methods", [None, [], ["plain"], "S256"])
def test_pkce_unsupported_stops_before_registration(methods: object) -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as()
    doc = as_meta(AS)
    if methods is None:
        del doc["code_challenge_methods_supported"]
    else:
        doc["code_challenge_methods_supported"] = methods
    world.routes[f"{AS}/.well-known/oauth-authorization-server"] = fixed(200, doc)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, PkceUnsupported)
    assert not any(u.endswith("/register") for u in world.urls())
    assert drain(flow) == []


def test_authorization_url_carries_s256_challenge_of_the_token_requests_verifier() -> None:
    world = standard_world()
    flow = make_flow()
    redirect = until_redirect(flow, world)
    query = query_of(redirect.url)
    assert query["response_type"] == "code"
    assert query["code_challenge_method"] == "S256"
    assert query["client_id"] == "client-1@9000"
    assert query["redirect_uri"] == redirect.redirect_uri == "http://127.0.0.1/callback"
    state_bytes = b64url_decode(query["state"])
    assert len(state_bytes) * 8 >= 128
    flow.receive_callback(world.approve(redirect), now=T0)
    world.serve(flow, T0)
    [tok] = token_requests(world)
    form = tok.form
    verifier = form["code_verifier"]
    assert 43 <= len(verifier) <= 128 and re.fullmatch(r"[A-Za-z0-9._~-]+", verifier)
    assert query["code_challenge"] == b64url(hashlib.sha256(verifier.encode()).digest())
    assert form["grant_type"] == "authorization_code"
    assert form["redirect_uri"] == redirect.redirect_uri
    assert verifier not in redirect.url


def test_each_authorization_has_a_fresh_state_and_verifier() -> None:
    world = standard_world()
    flow = make_flow()
    first = until_redirect(flow, world)
    flow.callback_failed("closed the window", now=T0)
    assert isinstance(flow.error, AuthorizationError) and "closed the window" in str(flow.error)
    second = until_redirect(flow, world, now=T0 + 1)
    q1, q2 = query_of(first.url), query_of(second.url)
    assert q1["state"] != q2["state"] and q1["code_challenge"] != q2["code_challenge"]


def test_authorization_deadline_is_the_user_steps() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(authorization_timeout=120.0))
    redirect = until_redirect(flow, world)
    assert redirect.deadline == T0 + 120.0
    assert flow.next_deadline() == T0 + 120.0
    assert "AT-" not in repr(redirect) and redirect.url not in repr(redirect)


# -- resource -----------------------------------------------------------------------------------


@pytest.mark.parametrize("resource", ["http://127.0.0.1:8000", "http://127.0.0.1:8000/",
                                      "http://127.0.0.1:8000/mcp/", MCP])
def test_resource_is_the_prm_string_verbatim(resource: str) -> None:
    world = standard_world(url=PRM_HEADER, resource=resource)
    flow = make_flow()
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["resource"] == resource
    flow.receive_callback(world.approve(redirect), now=T0)
    world.serve(flow, T0)
    [tok] = token_requests(world)
    assert tok.form["resource"] == resource
    assert bearer(flow) is not None


def test_refresh_carries_the_same_resource() -> None:
    world = standard_world(url=PRM_HEADER, resource=MCP_ORIGIN)
    flow = make_flow()
    authorize(flow, world)
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    refresh = token_requests(world)[-1]
    assert refresh.form["grant_type"] == "refresh_token"
    assert refresh.form["resource"] == MCP_ORIGIN


# -- scope --------------------------------------------------------------------------------------


def scope_of(flow: OAuthFlow, world: World, www: str = CHALLENGE) -> str | None:
    redirect = until_redirect(flow, world, www=www)
    return query_of(redirect.url).get("scope")


def test_scope_from_the_challenge_wins() -> None:
    world = standard_world(url=PRM_HEADER, scopes_supported=["a", "b"])
    flow = make_flow()
    assert scope_of(flow, world, www=CHALLENGE + ', scope="files:read files:write"') == \
        "files:read files:write"


def test_scope_from_prm_scopes_supported_otherwise() -> None:
    world = standard_world(url=PRM_HEADER, scopes_supported=["a", "b"])
    assert scope_of(make_flow(), world) == "a b"


def test_scope_omitted_without_challenge_or_prm_scopes() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(scopes_supported=["x", "y"])  # the AS's list is never used as a fallback
    assert scope_of(make_flow(), world) is None


def test_offline_access_only_when_the_as_lists_it() -> None:
    world = World()
    world.add_prm(PRM_HEADER, scopes_supported=["a"])
    world.add_as(scopes_supported=["a", "offline_access"])
    flow = make_flow()
    redirect = until_redirect(flow, world)
    query = query_of(redirect.url)
    assert query["scope"] == "a offline_access"
    assert query.get("prompt") == "consent"


def test_offline_access_from_the_challenge_is_dropped_when_the_as_does_not_list_it() -> None:
    world = standard_world(url=PRM_HEADER)
    flow = make_flow()
    assert scope_of(flow, world, www=CHALLENGE + ', scope="a offline_access"') == "a"


def test_offline_access_disabled_by_config() -> None:
    world = World()
    world.add_prm(PRM_HEADER, scopes_supported=["a"])
    world.add_as(scopes_supported=["a", "offline_access"])
    assert scope_of(make_flow(AuthConfig(offline_access=False)), world) == "a"


def test_bad_scope_tokens_are_dropped() -> None:
    world = standard_world(url=PRM_HEADER)
    flow = make_flow()
    assert scope_of(flow, world, www=CHALLENGE + r', scope="a b\"c a  d"') == "a d"


def test_step_up_on_403_insufficient_scope_asks_for_the_union() -> None:
    world = standard_world(url=PRM_HEADER)
    flow = make_flow()
    authorize(flow, world, www=CHALLENGE + ', scope="read"')
    assert flow.tokens is not None and flow.tokens.scope == "read"
    before = len(world.log)
    kind = flow.on_challenge(403, ['Bearer error="insufficient_scope", scope="write"'], None,
                             flow.generation, T0 + 20)
    assert kind == "step_up" and flow.busy
    world.serve(flow, T0 + 20)
    assert len(world.log) == before  # metadata and client reused: straight to the browser
    redirect = redirect_of(drain(flow))
    assert query_of(redirect.url)["scope"] == "read write"
    flow.receive_callback(world.approve(redirect), now=T0 + 21)
    world.serve(flow, T0 + 21)
    assert flow.error is None and flow.generation == 2
    assert flow.tokens is not None and flow.tokens.scope == "read write"


def test_403_without_insufficient_scope_is_ignored() -> None:
    flow = make_flow()
    assert flow.on_challenge(403, ['Bearer error="invalid_token"'], None, 0, T0) == "ignore"
    assert flow.on_challenge(403, [], None, 0, T0) == "ignore"
    assert not flow.busy and flow.exchanges_to_start() == []


def test_step_ups_are_bounded_per_scope_set() -> None:
    world = standard_world(url=PRM_HEADER)
    world.token_extra = {"expires_in": 3600, "scope": "read"}  # the AS never grants write
    flow = make_flow()
    authorize(flow, world, www=CHALLENGE + ', scope="read"')
    now = T0 + 10
    www = ['Bearer error="insufficient_scope", scope="write"']
    for _ in range(MAX_STEP_UPS_PER_SCOPE):
        assert flow.on_challenge(403, www, None, flow.generation, now) == "step_up"
        world.serve(flow, now)
        redirect = redirect_of(drain(flow))
        flow.receive_callback(world.approve(redirect), now=now)
        world.serve(flow, now)
        assert flow.error is None
        now += AUTHORIZATION_WINDOW  # not the authorization window's limit
    drain(flow)
    starts = len(world.log)
    assert flow.on_challenge(403, www, None, flow.generation, now) == "failed"
    assert isinstance(flow.error, InsufficientScope) and flow.error.scope == "write"
    assert not flow.busy and len(world.log) == starts and drain(flow) == []


# -- registration -------------------------------------------------------------------------------


def registration_request(world: World) -> Req:
    [req] = [r for r in world.log if r.url.endswith("/register")]
    return req


def test_registration_body_for_a_loopback_redirect() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(client_name="my host"))
    until_redirect(flow, world)
    req = registration_request(world)
    assert req.method == "POST"
    body = req.json
    assert body["client_name"] == "my host"
    assert body["redirect_uris"] == ["http://127.0.0.1/callback"]
    assert body["application_type"] == "native"
    assert set(body["grant_types"]) >= {"authorization_code", "refresh_token"}
    assert body["response_types"] == ["code"]
    assert body["token_endpoint_auth_method"] == "none"
    assert "authorization" not in req.headers


def test_registration_web_application_and_secret_method_when_none_is_not_offered() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(token_endpoint_auth_methods_supported=["client_secret_post"])
    flow = make_flow(AuthConfig(redirect_uri="https://app.example.com/cb"))
    until_redirect(flow, world)
    body = registration_request(world).json
    assert body["application_type"] == "web"
    assert body["token_endpoint_auth_method"] == "client_secret_post"


@pytest.mark.parametrize(("answer", "status"), [
    ({"client_secret": "x"}, 201),  # no client_id
    ({"client_id": ""}, 201),
    ({"client_id": "c", "token_endpoint_auth_method": "client_secret_basic"}, 201),
    ({"client_id": "c", "token_endpoint_auth_method": "client_secret_post",
      "client_secret": ""}, 201),
    ({"client_id": "c", "token_endpoint_auth_method": "private_key_jwt"}, 201),
    ({"client_id": "c", "token_endpoint_auth_method": "tls_client_auth"}, 201),
    ({"client_id": "c", "token_endpoint_auth_method": ["none"]}, 201),
    ({"error": "invalid_client_metadata", "error_description": "no"}, 400),
    ({"client_id": "c"}, 302),
    ([1, 2], 201),
])
def test_registration_answer_is_validated_before_any_browser(answer: object,
                                                              status: int) -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(status, answer)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError)
    assert not flow.busy and not any(isinstance(e, RedirectRequired) for e in drain(flow))


def test_registration_error_keeps_the_servers_error_code() -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(400, {"error": "invalid_redirect_uri",
                                                 "error_description": "bad uri"})
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError)
    assert "invalid_redirect_uri" in str(flow.error) and "bad uri" in str(flow.error)


def test_no_registration_endpoint_and_no_client_is_an_error() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(registration_endpoint=None)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError)


def test_client_id_metadata_document_is_used_when_supported() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(client_id_metadata_document_supported=True)
    cimd = "https://app.example.com/client.json"
    flow = make_flow(AuthConfig(client_metadata_url=cimd))
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["client_id"] == cimd
    assert not any(u.endswith("/register") for u in world.urls())
    assert cimd not in world.urls()  # never fetched by the client


def test_a_registered_secret_client_authenticates_with_it() -> None:
    world = standard_world()
    world.registration = {"token_endpoint_auth_method": "client_secret_basic",
                          "client_secret": "reg+secret/="}
    flow = make_flow()
    authorize(flow, world)
    tok = token_requests(world)[-1]
    assert tok.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in tok.form


# -- callback validation -------------------------------------------------------------------------


def callback_case(flow_config: AuthConfig | None = None, *, iss_supported: bool = False
                  ) -> tuple[OAuthFlow, World, RedirectRequired]:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(authorization_response_iss_parameter_supported=True if iss_supported
                 else None)
    flow = make_flow(flow_config)
    return flow, world, until_redirect(flow, world)


def assert_rejected(flow: OAuthFlow, world: World, url: str,
                    error: type[AuthorizationError] = CallbackRejected) -> None:
    before = len(world.log)
    flow.receive_callback(url, now=T0 + 1)
    assert type(flow.error) is error, flow.error
    assert not flow.busy and flow.exchanges_to_start() == []
    world.serve(flow, T0 + 1)
    assert len(world.log) == before  # no token exchange started
    assert flow.tokens is None and not any(isinstance(e, Authorized) for e in drain(flow))


def replace_query(url: str, query: str) -> str:
    return url.partition("?")[0] + "?" + query


def test_callback_wrong_state_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect, state="forged"))


def test_callback_missing_state_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect, state=None))


def test_callback_wrong_iss_is_rejected() -> None:
    flow, world, redirect = callback_case(iss_supported=True)
    assert_rejected(flow, world, world.approve(redirect, iss="http://127.0.0.1:9999"))


def test_callback_iss_with_a_trailing_slash_is_not_the_issuer() -> None:
    flow, world, redirect = callback_case(iss_supported=True)
    assert_rejected(flow, world, world.approve(redirect, iss=AS + "/"))


def test_callback_iss_missing_when_advertised_is_rejected() -> None:
    flow, world, redirect = callback_case(iss_supported=True)
    assert_rejected(flow, world, world.approve(redirect))


def test_callback_wrong_iss_when_not_advertised_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect, iss="http://127.0.0.1:9999"))


def test_callback_right_iss_is_accepted_advertised_or_not() -> None:
    for supported in (True, False):
        flow, world, redirect = callback_case(iss_supported=supported)
        flow.receive_callback(world.approve(redirect, iss=AS), now=T0 + 1)
        world.serve(flow, T0 + 1)
        assert flow.error is None and bearer(flow) is not None


@pytest.mark.parametrize("extra", ["&state=again", "&code=other", "&iss=" + AS])
def test_callback_duplicate_parameters_are_rejected(extra: str) -> None:
    flow, world, redirect = callback_case()
    url = world.approve(redirect, iss=AS) + extra
    assert_rejected(flow, world, url)


def test_callback_fragment_response_is_rejected() -> None:
    flow, world, redirect = callback_case()
    url = world.approve(redirect)
    base, _, query = url.partition("?")
    assert_rejected(flow, world, f"{base}#{query}")


def test_callback_with_query_and_fragment_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect) + "#x=1")


@pytest.mark.parametrize("other", [
    "http://127.0.0.1/other", "http://127.0.0.1/callback/", "http://localhost/callback",
    "https://127.0.0.1/callback", "http://127.0.0.2/callback", "http://evil.example/callback",
])
def test_callback_on_another_redirect_uri_is_rejected(other: str) -> None:
    flow, world, redirect = callback_case()
    url = world.approve(redirect)
    assert_rejected(flow, world, other + "?" + url.partition("?")[2])


def test_callback_port_must_match_a_registered_port() -> None:
    flow, world, redirect = callback_case(AuthConfig(
        redirect_uri="http://127.0.0.1:53682/callback"))
    url = world.approve(redirect)
    assert_rejected(flow, world, url.replace(":53682", ":53683"))


def test_callback_any_port_for_a_portless_loopback_redirect_uri() -> None:
    flow, world, redirect = callback_case()
    url = world.approve(redirect).replace("127.0.0.1/", "127.0.0.1:49152/")
    flow.receive_callback(url, now=T0 + 1)
    world.serve(flow, T0 + 1)
    assert flow.error is None and bearer(flow) is not None


def test_callback_malformed_or_huge_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, "http://[::1/callback?x")
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect) + "&pad=" + "a" * 9000)


def test_callback_without_code_is_rejected() -> None:
    flow, world, redirect = callback_case()
    assert_rejected(flow, world, world.approve(redirect, code=None))


def test_callback_access_denied_is_authorization_denied_after_the_iss_check() -> None:
    flow, world, redirect = callback_case(iss_supported=True)
    state = query_of(redirect.url)["state"]
    url = replace_query(world.approve(redirect), urlencode(
        {"error": "access_denied", "error_description": "user said no", "state": state,
         "iss": AS}))
    assert_rejected(flow, world, url, AuthorizationDenied)
    assert isinstance(flow.error, AuthorizationDenied)
    assert flow.error.error == "access_denied" and "user said no" in str(flow.error)


def test_callback_error_with_a_wrong_iss_is_not_shown() -> None:
    flow, world, redirect = callback_case(iss_supported=True)
    state = query_of(redirect.url)["state"]
    url = replace_query(world.approve(redirect), urlencode(
        {"error": "access_denied", "error_description": "phish here", "state": state,
         "iss": "http://127.0.0.1:9999"}))
    assert_rejected(flow, world, url)
    assert "phish" not in str(flow.error)


def test_callback_error_with_a_wrong_state_is_rejected_not_denied() -> None:
    flow, world, redirect = callback_case()
    url = replace_query(world.approve(redirect), urlencode(
        {"error": "access_denied", "state": "forged"}))
    assert_rejected(flow, world, url)


def test_callback_is_single_use() -> None:
    flow, world, redirect = callback_case()
    url = world.approve(redirect)
    flow.receive_callback(url, now=T0 + 1)
    world.serve(flow, T0 + 1)
    assert flow.generation == 1
    flow.receive_callback(url, now=T0 + 2)
    assert flow.exchanges_to_start() == [] and flow.generation == 1 and not flow.busy


def test_callback_failed_fails_the_procedure() -> None:
    flow, _world, _redirect = callback_case()
    flow.callback_failed("the browser did not open", now=T0 + 1)
    assert isinstance(flow.error, AuthorizationError) and not flow.busy
    assert not isinstance(flow.error, CallbackRejected)
    assert "the browser did not open" in str(flow.error)
    assert flow.next_deadline() is None


# -- the token response ----------------------------------------------------------------------


def token_case(answer: Handler, config: AuthConfig | None = None) -> tuple[OAuthFlow, World]:
    world = standard_world()
    flow = make_flow(config)
    redirect = until_redirect(flow, world)
    world.routes[f"{AS}/token"] = answer
    flow.receive_callback(world.approve(redirect), now=T0 + 1)
    world.serve(flow, T0 + 1)
    return flow, world


@pytest.mark.parametrize("kind", ["mac", "", None, 3, "Bearerx", "DPoP"])
def test_token_type_other_than_bearer_is_refused(kind: object) -> None:
    flow, _world = token_case(fixed(200, {"access_token": "AT-x-zzaccess", "token_type": kind}))
    assert isinstance(flow.error, TokenError) and flow.tokens is None
    assert "AT-x" not in str(flow.error)


@pytest.mark.parametrize("kind", ["bearer", "BEARER", "Bearer"])
def test_token_type_bearer_is_case_insensitive(kind: str) -> None:
    flow, _world = token_case(fixed(200, {"access_token": "AT-x", "token_type": kind}))
    assert flow.error is None and bearer(flow) == "AT-x"


@pytest.mark.parametrize("access", [None, "", 5, "has space", "line\r\nbreak"])
def test_unusable_access_token_is_refused(access: object) -> None:
    flow, _world = token_case(fixed(200, {"access_token": access, "token_type": "Bearer"}))
    assert isinstance(flow.error, TokenError) and flow.tokens is None


def test_200_with_error_is_a_token_error() -> None:
    flow, _world = token_case(fixed(200, {"error": "bad_verification_code",
                                          "error_description": "The code is wrong"}))
    assert isinstance(flow.error, TokenError)
    assert flow.error.error == "bad_verification_code" and flow.tokens is None


def test_200_with_error_and_a_token_is_still_an_error() -> None:
    flow, _world = token_case(fixed(200, {"access_token": "AT-x", "token_type": "Bearer",
                                          "error": "odd"}))
    assert isinstance(flow.error, TokenError) and flow.tokens is None


@pytest.mark.parametrize("body", [b"not json", b"[1]", b'"AT"'])
def test_non_object_token_body_is_an_error(body: bytes) -> None:
    flow, _world = token_case(fixed(200, body))
    assert isinstance(flow.error, TokenError)


def test_token_endpoint_400_is_a_token_error_with_its_code() -> None:
    flow, _world = token_case(fixed(400, {"error": "invalid_grant"}))
    assert isinstance(flow.error, TokenError) and flow.error.error == "invalid_grant"


def test_token_endpoint_redirect_is_an_error_and_not_followed() -> None:
    flow, world = token_case(lambda _r: response(307, None, (("Location", "http://x/"),)))
    assert isinstance(flow.error, AuthorizationError) and "redirect" in str(flow.error)
    assert world.urls()[-1] == f"{AS}/token" and flow.tokens is None


def test_token_endpoint_redirect_is_a_token_error() -> None:
    flow, _world = token_case(lambda _r: response(307, None, (("Location", "http://x/"),)))
    assert isinstance(flow.error, TokenError)
    assert "registration" not in str(flow.error)


def test_registration_endpoint_redirect_is_a_registration_error() -> None:
    world = standard_world()
    world.routes[f"{AS}/register"] = fixed(301)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, RegistrationError) and "redirect" in str(flow.error)


@pytest.mark.parametrize(("expires_in", "lifetime"), [
    (3600, 3600.0), ("3600", 3600.0), ("12.5", 12.5), (0, MIN_TOKEN_LIFETIME),
    (-5, MIN_TOKEN_LIFETIME), (10**12, MAX_TOKEN_LIFETIME), ("1e400", None), ("soon", None),
    (None, None), (True, None), ([1], None),
])
def test_expires_in_is_read_and_clamped(expires_in: object, lifetime: float | None) -> None:
    doc: dict[str, Any] = {"access_token": "AT-x", "token_type": "Bearer"}
    if expires_in is not None:
        doc["expires_in"] = expires_in
    flow, _world = token_case(fixed(200, doc))
    assert flow.error is None and flow.tokens is not None
    expected = None if lifetime is None else T0 + 1 + WALL + lifetime
    assert flow.tokens.expires_at == expected


def test_expires_in_huge_integer_is_clamped_not_a_crash() -> None:
    body = b'{"access_token": "AT-x", "token_type": "Bearer", "expires_in": 1' + b"0" * 400 + b"}"
    flow, _world = token_case(fixed(200, body))
    assert flow.error is None and flow.tokens is not None
    assert flow.tokens.expires_at == T0 + 1 + WALL + MAX_TOKEN_LIFETIME


def test_scope_absent_in_the_token_answer_is_the_requested_one() -> None:
    world = standard_world(url=PRM_HEADER, scopes_supported=["a", "b"])
    flow = make_flow()
    world.token_extra = {}
    authorize(flow, world)
    assert flow.tokens is not None and flow.tokens.scope == "a b"


@pytest.mark.parametrize("access", ["caf\u00e9", "tab\there", "nul\x00x", "del\x7f"])
def test_access_token_must_be_header_safe(access: str) -> None:
    flow, _world = token_case(fixed(200, {"access_token": access, "token_type": "Bearer"}))
    assert isinstance(flow.error, TokenError) and flow.tokens is None


# -- DPoP ---------------------------------------------------------------------------------


class EcSigner:
    """ES256 with ``cryptography``: the :class:`Signer` protocol."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())

    @property
    def alg(self) -> str:
        return "ES256"

    def public_jwk(self) -> dict[str, str]:
        numbers = self.key.public_key().public_numbers()
        return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}

    def sign(self, data: bytes) -> bytes:
        der = self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def verify(self, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
        head, claims = decode_unverified(token)
        signing_input, _, signature = token.rpartition(".")
        raw = b64url_decode(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"),
                                   int.from_bytes(raw[32:], "big"))
        self.key.public_key().verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        return head, claims


SIGNER = EcSigner()


def test_dpop_token_type_accepted_only_with_dpop_configured() -> None:
    doc = {"access_token": "AT-d", "token_type": "DPoP"}
    flow, world = token_case(fixed(200, doc), AuthConfig(dpop=SIGNER))
    assert flow.error is None and flow.tokens is not None and flow.tokens.token_type == "DPoP"
    headers = dict(flow.headers("POST", T0 + 2))
    assert headers["Authorization"] == "DPoP AT-d"
    head, claims = SIGNER.verify(headers["DPoP"])
    assert head["typ"] == "dpop+jwt" and "d" not in head["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == MCP
    assert claims["ath"] == b64url(hashlib.sha256(b"AT-d").digest())
    [tok] = token_requests(world)
    _h, proof = SIGNER.verify(tok.headers["dpop"])
    assert proof["htu"] == f"{AS}/token" and "ath" not in proof


def test_dpop_nonce_on_the_token_endpoint_is_retried_once() -> None:
    calls: list[Req] = []

    def token(req: Req) -> bytes:
        calls.append(req)
        return response(400, {"error": "use_dpop_nonce"}, (("DPoP-Nonce", f"n{len(calls)}"),))

    flow, _world = token_case(token, AuthConfig(dpop=SIGNER))
    assert len(calls) == 2
    _h, second = SIGNER.verify(calls[1].headers["dpop"])
    assert second["nonce"] == "n1"
    assert isinstance(flow.error, TokenError)


# -- client authentication -------------------------------------------------------------------


TRICKY_ID = "id:with/odd+chars&=%~ é"
TRICKY_SECRET = "p@ss:w/o+rd&=%~ ü"


def machine_flow(method: str | None, *, secret: str | None = TRICKY_SECRET,
                 client_id: str = TRICKY_ID, signer: EcSigner | None = None,
                 auth_methods: list[str] | None = None) -> tuple[OAuthFlow, World, Req]:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(token_endpoint_auth_methods_supported=auth_methods,
                 grant_types_supported=["client_credentials"])
    config = AuthConfig(grant="client_credentials", client_id=client_id, client_secret=secret,
                        token_endpoint_auth_method=method, issuer=AS, signer=signer)
    flow = make_flow(config)
    challenge(flow, world)
    assert flow.error is None, flow.error
    [tok] = token_requests(world)
    assert bearer(flow) == world.access_tokens[-1]
    return flow, world, tok


def test_client_secret_basic_is_form_urlencoded_then_base64_and_not_in_the_body() -> None:
    _flow, _world, tok = machine_flow("client_secret_basic")
    scheme, _, value = tok.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    user, colon, password = base64.b64decode(value, validate=True).decode("ascii").partition(":")
    assert colon and ":" not in user  # the id's colon is encoded
    assert unquote_plus(user) == TRICKY_ID and unquote_plus(password) == TRICKY_SECRET
    form = tok.form
    assert "client_secret" not in form and TRICKY_SECRET not in tok.body.decode()
    assert form["grant_type"] == "client_credentials" and form["resource"] == MCP


def test_client_secret_basic_is_the_default_when_the_as_lists_nothing() -> None:
    _flow, _world, tok = machine_flow(None)
    assert tok.headers["authorization"].startswith("Basic ")


def test_client_secret_post_when_it_is_all_the_as_offers() -> None:
    _flow, _world, tok = machine_flow(None, auth_methods=["client_secret_post"])
    assert "authorization" not in tok.headers
    assert tok.form["client_secret"] == TRICKY_SECRET and tok.form["client_id"] == TRICKY_ID


def test_client_secret_post_puts_both_in_the_form() -> None:
    _flow, _world, tok = machine_flow("client_secret_post")
    assert "authorization" not in tok.headers
    form = tok.form
    assert form["client_id"] == TRICKY_ID and form["client_secret"] == TRICKY_SECRET


def test_none_puts_only_the_client_id() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as()
    flow = make_flow(AuthConfig(client_id="public-client", issuer=AS))
    authorize(flow, world)
    assert not any(u.endswith("/register") for u in world.urls())
    [tok] = token_requests(world)
    assert "authorization" not in tok.headers
    form = tok.form
    assert form["client_id"] == "public-client"
    assert not {"client_secret", "client_assertion"} & set(form)


def test_private_key_jwt_assertion_has_the_issuer_as_audience() -> None:
    signer = EcSigner()
    flow, _world, tok = machine_flow(None, secret=None, client_id="machine-1", signer=signer)
    assert "authorization" not in tok.headers
    form = tok.form
    assert form["client_id"] == "machine-1"
    assert form["client_assertion_type"] == \
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    head, claims = signer.verify(form["client_assertion"])
    assert head["alg"] == "ES256"
    assert claims["iss"] == claims["sub"] == "machine-1"
    assert claims["aud"] == AS
    assert 0 < claims["exp"] - claims["iat"] <= 300
    assert claims["iat"] == int(T0 + WALL)
    assert claims["jti"]
    assert "client_secret" not in form
    # a second assertion has another jti
    flow.tokens = None
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 5)
    _world.serve(flow, T0 + 5)
    second = token_requests(_world)[-1].form["client_assertion"]
    assert signer.verify(second)[1]["jti"] != claims["jti"]


def test_preregistered_credentials_for_another_issuer_are_not_sent() -> None:
    world = World()
    world.add_prm(PRM_HEADER, servers=(AS_B,))
    world.add_as(AS_B)
    flow = make_flow(AuthConfig(client_id="pre", client_secret=SECRET, issuer=AS))
    challenge(flow, world)
    assert isinstance(flow.error, IssuerMismatch)
    assert world.urls() == [PRM_HEADER]


# -- tokens never leak -------------------------------------------------------------------------


def test_tokens_never_in_reprs_messages_or_auth_exchanges() -> None:
    world = standard_world()
    world.registration = {"token_endpoint_auth_method": "client_secret_post"}
    flow = make_flow(AuthConfig(client_secret="cfg-secret-zz", idp_client_secret="idp-zz"))
    redirect = until_redirect(flow, world)
    flow.receive_callback(world.approve(redirect), now=T0)
    world.serve(flow, T0)
    events: list[AuthEvent] = [redirect, *drain(flow)]
    access, refresh = world.access_tokens[-1], world.refresh_tokens[-1]
    # refresh: before expiry
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    later = flow.tokens.expires_at - WALL - REFRESH_SKEW
    flow.start_refresh(later)
    [ex] = flow.exchanges_to_start()
    req = parse_request(ex)
    world.log.append(req)
    assert req.form["refresh_token"] == refresh
    texts = [repr(ex), repr(flow.tokens), repr(flow.config), repr(flow.status()),
             *map(repr, events)]
    flow.receive_exchange_data(ex.id, response(500, {"error": "server_error"}), now=later)
    assert isinstance(flow.error, TokenError)
    texts += [str(flow.error), repr(flow.error)]
    events += drain(flow)
    texts += map(repr, events)
    secrets = [access, refresh, *world.secrets, "cfg-secret-zz", "idp-zz"]
    for text in texts:
        for secret in secrets:
            assert secret not in text, (secret, text)
    assert_no_token_sent(world)
    assert any(isinstance(e, RedirectRequired) for e in events)
    assert any(isinstance(e, SaveRecord) for e in events)


def test_tokens_repr_hides_the_tokens() -> None:
    tokens = Tokens("AT-secret", "Bearer", 1.0, "RT-secret", "s")
    assert "AT-secret" not in repr(tokens) and "RT-secret" not in repr(tokens)
    config = AuthConfig(grant="client_credentials", client_id="c", client_secret="CS-secret",
                        dpop=SIGNER, assertion="JWT-secret")
    assert "CS-secret" not in repr(config) and "JWT-secret" not in repr(config)


def test_token_error_messages_never_quote_tokens() -> None:
    for doc in ({"access_token": "AT-leak-1", "token_type": "mac"},
                {"access_token": "AT-leak-2 x", "token_type": "Bearer"},
                {"access_token": "AT-leak-3", "refresh_token": "RT-leak", "error": "x"}):
        flow, _world = token_case(fixed(200, doc))
        assert isinstance(flow.error, TokenError)
        assert "leak" not in str(flow.error) and "leak" not in repr(flow.error.args)


# -- per-issuer records ------------------------------------------------------------------------


def record_for(issuer: str, *, client_id: str, access: str = "AT-old",
               refresh: str | None = "RT-old", meta: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    sub: dict[str, Any] = {
        "client": {"client_id": client_id, "client_secret": None, "method": "none",
                   "via": "dcr", "redirect_uri": "http://127.0.0.1/callback"},
        "tokens": {"access_token": access, "token_type": "Bearer",
                   "expires_at": WALL + T0 + 3600, "refresh_token": refresh, "scope": None},
    }
    if meta is not None:
        sub["meta"] = meta
    return {"version": 1, "resource": MCP, "issuer": issuer, "issuers": {issuer: sub}}


def test_a_loaded_token_is_sent_until_refused() -> None:
    flow = make_flow(record=record_for(AS, client_id="old-client"))
    assert bearer(flow) == "AT-old" and not flow.busy


def test_a_record_for_issuer_a_is_not_used_when_the_prm_names_issuer_b() -> None:
    world = World()
    world.add_prm(PRM_HEADER, servers=(AS_B,))
    world.add_as(AS_B)
    flow = make_flow(record=record_for(AS, client_id="client-of-A", refresh=None))
    events = authorize(flow, world)
    assert flow.error is None and flow.issuer == AS_B
    assert [u for u in world.urls() if u.endswith("/register")] == [f"{AS_B}/register"]
    for req in world.log:
        assert b"client-of-A" not in req.exchange.data and b"AT-old" not in req.exchange.data
    record = [e for e in events if isinstance(e, SaveRecord)][-1].record
    assert set(record["issuers"]) == {AS, AS_B}
    assert record["issuer"] == AS_B
    assert record["issuers"][AS]["client"]["client_id"] == "client-of-A"
    assert bearer(flow) == world.access_tokens[-1]


def test_a_stored_registration_for_the_named_issuer_is_reused() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as()
    flow = make_flow(record=record_for(AS, client_id="known-client", refresh=None))
    redirect = until_redirect(flow, world)
    assert query_of(redirect.url)["client_id"] == "known-client"
    assert not any(u.endswith("/register") for u in world.urls())


def test_an_issuer_with_a_stored_client_is_preferred_among_several() -> None:
    world = World()
    world.add_prm(PRM_HEADER, servers=(AS, AS_B))
    world.add_as(AS)
    world.add_as(AS_B)
    flow = make_flow(record=record_for(AS_B, client_id="b-client", refresh=None))
    redirect = until_redirect(flow, world)
    assert redirect.url.startswith(AS_B) and query_of(redirect.url)["client_id"] == "b-client"


def test_a_record_for_another_resource_is_ignored() -> None:
    record = record_for(AS, client_id="x")
    record["resource"] = "http://127.0.0.1:8000/elsewhere"
    flow = make_flow(record=record)
    assert bearer(flow) is None


# -- refresh --------------------------------------------------------------------------------


def authorized_flow(**world_kw: Any) -> tuple[OAuthFlow, World]:
    world = standard_world()
    for k, v in world_kw.items():
        setattr(world, k, v)
    flow = make_flow()
    authorize(flow, world)
    assert flow.error is None and flow.generation == 1
    return flow, world


def test_needs_refresh_within_the_skew_only() -> None:
    flow, world = authorized_flow()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    refresh_at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    assert not flow.needs_refresh(refresh_at - 1)
    flow.start_refresh(refresh_at - 1)
    assert not flow.busy and flow.exchanges_to_start() == []
    assert flow.needs_refresh(refresh_at)
    flow.start_refresh(refresh_at)
    assert flow.busy and flow.kind == "refresh"
    [req] = world.serve(flow, refresh_at)
    assert req.form["grant_type"] == "refresh_token"
    assert req.form["refresh_token"] == world.refresh_tokens[0]
    assert req.form["client_id"] == "client-1@9000"
    assert flow.generation == 2 and bearer(flow) == world.access_tokens[-1]
    assert_no_token_sent(world)


def test_no_refresh_without_a_refresh_token_or_expiry() -> None:
    flow, _world = authorized_flow(issue_refresh=False)
    assert not flow.needs_refresh(T0 + 10**6)
    flow2, _world2 = authorized_flow(token_extra={})
    assert not flow2.needs_refresh(T0 + 10**6)


def test_401_refreshes_first_when_there_is_a_refresh_token() -> None:
    flow, world = authorized_flow()
    before = len(world.log)
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10) == "refresh"
    served = world.serve(flow, T0 + 10)
    assert [r.url for r in served] == [f"{AS}/token"]
    assert len(world.log) == before + 1 and flow.generation == 2 and flow.error is None
    assert drain(flow)[-1] == Authorized(AS, None, T0 + 10 + WALL + 3600)


def test_refresh_without_a_new_refresh_token_keeps_the_old_one() -> None:
    flow, world = authorized_flow()
    old = world.refresh_tokens[-1]
    world.issue_refresh = False
    world.token_extra = {"expires_in": 60}
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    assert flow.tokens is not None and flow.tokens.refresh_token == old
    assert flow.tokens.access_token == world.access_tokens[-1]


def test_refresh_rotation_uses_the_new_refresh_token() -> None:
    flow, world = authorized_flow()
    for _ in range(2):
        assert flow.tokens is not None and flow.tokens.expires_at is not None
        at = flow.tokens.expires_at - WALL - REFRESH_SKEW
        flow.start_refresh(at)
        world.serve(flow, at)
        assert flow.error is None
    forms = [r.form for r in token_requests(world)[1:]]
    assert [f["refresh_token"] for f in forms] == world.refresh_tokens[:2]


def test_invalid_grant_on_refresh_runs_full_discovery() -> None:
    flow, world = authorized_flow()
    world.refresh_tokens.clear()  # the AS forgot them: invalid_grant
    before = len(world.log)
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    urls = world.urls()[before:]
    assert urls[:3] == [f"{AS}/token", PRM_HEADER,
                        f"{AS}/.well-known/oauth-authorization-server"]
    assert flow.tokens is None and flow.state == "authorize" and flow.busy
    events = drain(flow)
    saved = [e for e in events if isinstance(e, SaveRecord)][-1].record
    assert "tokens" not in saved["issuers"][AS]  # the refused tokens are deleted
    flow.receive_callback(world.approve(redirect_of(events)), now=T0 + 11)
    world.serve(flow, T0 + 11)
    assert flow.error is None and flow.generation == 2


def test_invalid_grant_when_not_interactive_fails() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(interactive=False),
                     record=record_for(AS, client_id="c", meta=as_meta(AS)))
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    world.serve(flow, T0)
    assert isinstance(flow.error, TokenError) and flow.tokens is None
    assert world.urls() == [f"{AS}/token"]


def test_refresh_server_error_keeps_the_tokens() -> None:
    flow, world = authorized_flow()
    world.routes[f"{AS}/token"] = fixed(503)
    tokens = flow.tokens
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    assert isinstance(flow.error, TokenError) and flow.tokens == tokens


def test_loaded_record_refreshes_with_its_stored_metadata() -> None:
    world = standard_world()
    world.refresh_tokens.append("RT-old")
    flow = make_flow(record=record_for(AS, client_id="c", meta=as_meta(AS)))
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    [req] = world.serve(flow, T0)
    assert req.url == f"{AS}/token" and req.form["refresh_token"] == "RT-old"
    assert flow.error is None and flow.generation == 1


@pytest.mark.parametrize("lifetime", [1, 30, 60])
def test_a_short_lived_token_is_refreshed_once_not_in_a_loop(lifetime: int) -> None:
    # A token that lives less than REFRESH_SKEW is refreshed once half its life is gone,
    # and the token the refresh gives is not refreshed again at once (review B1).
    flow, world = authorized_flow(token_extra={"expires_in": lifetime})
    assert flow.tokens is not None and flow.tokens.issued_at is not None
    issued = flow.tokens.issued_at - WALL
    assert not flow.needs_refresh(issued)  # fresh: sent as it is
    half = issued + lifetime / 2
    assert flow.needs_refresh(half)
    flow.start_refresh(half)
    world.serve(flow, half)
    assert flow.generation == 2 and flow.error is None
    for _ in range(5):  # what the HTTP layer does after every answer
        flow.start_refresh(half)
        assert world.serve(flow, half) == []
    assert len(token_requests(world)) == 2  # the code, then one refresh


def test_a_refresh_that_failed_on_the_network_is_not_retried_at_once() -> None:
    # Review B2: a refresh before expiry that cannot reach the AS is not tried again on
    # every step; the still-valid token stays in use and what waited is not failed.
    flow, world = authorized_flow()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    failures = flow.failures
    flow.start_refresh(at)
    [ex] = flow.exchanges_to_start()
    flow.exchange_failed(ex.id, "connection refused", now=at)
    assert not flow.busy and flow.failures == failures
    assert bearer(flow) == world.access_tokens[0]
    for _ in range(5):
        flow.start_refresh(at)
        assert flow.exchanges_to_start() == []
    # the server refusing the old token is what tries again, once
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, at + 1) == "refresh"


def test_a_refresh_does_not_need_the_redirect_uri_it_was_registered_with() -> None:
    # Review B3: `mcp-proto login` registers a loopback port, later runs have another
    # redirect URI (or none): the refresh token is still used, nothing registers again.
    world = standard_world()
    world.refresh_tokens.append("RT-old")
    config = AuthConfig(interactive=False, redirect_uri="http://127.0.0.1:5555/other")
    flow = make_flow(config, record=record_for(AS, client_id="c", meta=as_meta(AS)))
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    [req] = world.serve(flow, T0)
    assert req.url == f"{AS}/token" and req.form["grant_type"] == "refresh_token"
    assert flow.error is None and flow.generation == 1


def test_a_refused_refresh_never_registers_nor_authorizes_without_a_user() -> None:
    world = standard_world()  # the AS does not know RT-old: invalid_grant
    config = AuthConfig(interactive=False)
    flow = make_flow(config, record=record_for(AS, client_id="c"))  # no stored metadata
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    world.serve(flow, T0)
    assert isinstance(flow.error, AuthorizationRequired) and not flow.busy
    assert not any(url.endswith("/register") for url in world.urls())
    assert not any(isinstance(e, RedirectRequired) for e in drain(flow))


def test_a_failing_host_assertion_leaves_the_flow_idle_with_an_error() -> None:
    # Review B4: anything a host callable raises fails the procedure; never stuck busy.
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(grant_types_supported=["urn:ietf:params:oauth:grant-type:jwt-bearer"])

    def assertion(audience: str) -> str:
        raise RuntimeError("workload identity endpoint down")

    flow = make_flow(AuthConfig(grant="jwt_bearer", assertion=assertion, client_id="wl"))
    challenge(flow, world)
    assert not flow.busy and flow.next_deadline() is None
    assert isinstance(flow.error, AuthorizationError)
    assert "workload identity endpoint down" in str(flow.error)
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 1) == "authorize"


def test_loaded_record_without_metadata_discovers_before_refreshing() -> None:
    world = standard_world()
    flow = make_flow(record=record_for(AS, client_id="c"))
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)
    world.serve(flow, T0)
    assert world.urls()[0] == PRM_HEADER
    assert flow.state == "authorize"


def test_a_refreshed_token_refused_again_leads_to_discovery() -> None:
    flow, world = authorized_flow()
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    assert flow.generation == 2
    # the server refuses the refreshed token too (it moved to another AS, say)
    before = len(world.log)
    kind = flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 11)
    world.serve(flow, T0 + 11)
    assert kind == "authorize"
    assert world.urls()[before] == PRM_HEADER


def test_single_flight_concurrent_challenges_join() -> None:
    world = standard_world()
    flow = make_flow()
    assert flow.on_challenge(401, [CHALLENGE], None, 0, T0) == "authorize"
    [first] = flow.exchanges_to_start()
    for _ in range(5):
        assert flow.on_challenge(401, [CHALLENGE], None, 0, T0) == "authorize"
        assert flow.on_challenge(403, ['Bearer error="insufficient_scope", scope="x"'], None,
                                 0, T0) == "authorize"
    assert flow.exchanges_to_start() == []
    req = parse_request(first)
    world.log.append(req)
    flow.receive_exchange_data(first.id, world.answer(req), now=T0)
    world.serve(flow, T0)
    redirect_of(drain(flow))
    assert flow.on_challenge(401, [CHALLENGE], None, 0, T0) == "authorize"
    assert flow.exchanges_to_start() == [] and drain(flow) == []


def test_single_flight_refresh_joins_as_refresh() -> None:
    flow, _world = authorized_flow()
    assert flow.on_challenge(401, [CHALLENGE], None, 1, T0 + 10) == "refresh"
    assert len(flow.exchanges_to_start()) == 1
    assert flow.on_challenge(401, [CHALLENGE], None, 1, T0 + 10) == "refresh"
    assert flow.exchanges_to_start() == []


def test_a_challenge_with_an_older_generation_is_a_retry() -> None:
    flow, world = authorized_flow()
    flow.on_challenge(401, [CHALLENGE], None, 1, T0 + 10)
    world.serve(flow, T0 + 10)
    assert flow.generation == 2
    assert flow.on_challenge(401, [CHALLENGE], None, 1, T0 + 11) == "retry"
    assert not flow.busy and flow.exchanges_to_start() == []


def test_non_interactive_without_token_is_authorization_required() -> None:
    flow = make_flow(AuthConfig(interactive=False))
    assert flow.on_challenge(401, [CHALLENGE], None, 0, T0) == "failed"
    assert isinstance(flow.error, AuthorizationRequired)
    assert flow.exchanges_to_start() == [] and not flow.busy


# -- limits ---------------------------------------------------------------------------------


def test_body_over_max_auth_body_fails() -> None:
    world = World()
    world.routes[PRM_HEADER] = lambda _r: response(200, b" " * (MAX_AUTH_BODY + 1))
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, DiscoveryError) and str(MAX_AUTH_BODY) in str(flow.error)
    assert world.urls() == [PRM_HEADER]


def test_body_over_max_auth_body_in_pieces_fails() -> None:
    flow = make_flow()
    flow.on_challenge(401, [CHALLENGE], None, 0, T0)
    [ex] = flow.exchanges_to_start()
    flow.receive_exchange_data(ex.id, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                               now=T0)
    chunk = b"%x\r\n%s\r\n" % (8192, b"x" * 8192)
    for _ in range(MAX_AUTH_BODY // 8192 + 1):
        flow.receive_exchange_data(ex.id, chunk, now=T0)
    assert isinstance(flow.error, DiscoveryError)
    assert ex.id in flow.exchanges_to_abort()


def test_exchange_deadline_fails_it() -> None:
    flow = make_flow(AuthConfig(exchange_timeout=10.0))
    flow.on_challenge(401, [CHALLENGE], None, 0, T0)
    [ex] = flow.exchanges_to_start()
    assert flow.next_deadline() == T0 + 10.0
    flow.handle_timeout(T0 + 9.9)
    assert flow.busy
    flow.handle_timeout(T0 + 10.0)
    assert isinstance(flow.error, DiscoveryError) and not flow.busy
    assert flow.exchanges_to_abort() == [ex.id]
    flow.receive_exchange_data(ex.id, response(200, {}), now=T0 + 11)  # late: ignored
    assert flow.failures == 1 and flow.next_deadline() is None


def test_connection_closed_early_fails_the_exchange() -> None:
    flow = make_flow()
    flow.on_challenge(401, [CHALLENGE], None, 0, T0)
    [ex] = flow.exchanges_to_start()
    flow.receive_exchange_data(ex.id, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", now=T0)
    flow.receive_exchange_data(ex.id, b"", now=T0)
    assert isinstance(flow.error, DiscoveryError)


def test_exchange_failed_fails_the_procedure() -> None:
    flow = make_flow()
    flow.on_challenge(401, [CHALLENGE], None, 0, T0)
    [ex] = flow.exchanges_to_start()
    flow.exchange_failed(ex.id, "address refused", now=T0)
    assert isinstance(flow.error, DiscoveryError) and "address refused" in str(flow.error)


def test_authorization_timeout_is_authorization_denied() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(authorization_timeout=60.0))
    redirect = until_redirect(flow, world)
    flow.handle_timeout(T0 + 59)
    assert flow.busy
    flow.handle_timeout(T0 + 60)
    # 46d966f: a timeout is not the user's refusal, so the base AuthorizationError
    assert isinstance(flow.error, AuthorizationError) and not flow.busy
    assert "60 s" in str(flow.error)
    assert flow.next_deadline() is None
    flow.receive_callback(world.approve(redirect), now=T0 + 61)  # too late: ignored
    assert flow.exchanges_to_start() == [] and flow.tokens is None


def test_authorizations_per_window_are_bounded() -> None:
    world = standard_world()
    world.issue_refresh = False
    flow = make_flow()
    now = T0
    for _ in range(MAX_AUTHORIZATIONS_PER_WINDOW):
        authorize(flow, world, now=now)
        assert flow.error is None
        now += 1
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, now) == "failed"
    assert isinstance(flow.error, AuthorizationRejected)
    assert flow.exchanges_to_start() == []
    # the window slides
    later = T0 + AUTHORIZATION_WINDOW + 1
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, later) == "authorize"
    # and reauthorize() starts over
    flow2 = make_flow()
    for i in range(MAX_AUTHORIZATIONS_PER_WINDOW):
        authorize(flow2, world, now=T0 + i)
    flow2.reauthorize(T0 + 5)
    assert flow2.busy and len(flow2.exchanges_to_start()) == 1


# -- URL policy ------------------------------------------------------------------------------


def test_http_token_endpoint_on_a_public_host_is_unsafe() -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(token_endpoint="http://example.com/token")
    flow = make_flow()
    challenge(flow, world)
    # Refused when the metadata is accepted: the user is never sent to the browser for a
    # token endpoint that cannot be used.
    assert isinstance(flow.error, UnsafeUrl)
    assert not any(isinstance(e, RedirectRequired) for e in drain(flow))
    assert flow.exchanges_to_start() == []
    assert "example.com" not in " ".join(world.urls())


@pytest.mark.parametrize("field_name", ["authorization_endpoint", "registration_endpoint"])
def test_http_endpoints_on_a_public_host_are_unsafe(field_name: str) -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(**{field_name: "http://example.com/x"})
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, UnsafeUrl)
    assert not any(isinstance(e, RedirectRequired) for e in drain(flow))
    assert "example.com" not in " ".join(world.urls())


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "file:///etc/passwd",
                                 "https://user:pw@as.example/authorize",
                                 "https://as.example/authorize#frag"])
def test_odd_authorization_endpoints_never_reach_the_browser(bad: str) -> None:
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(authorization_endpoint=bad)
    flow = make_flow()
    challenge(flow, world)
    assert isinstance(flow.error, UnsafeUrl)
    assert not any(isinstance(e, RedirectRequired) for e in drain(flow))


PUBLIC_MCP = "https://mcp.example.com/mcp"
PUBLIC_PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize("issuer", ["https://10.0.0.1", "https://169.254.169.254",
                                    "https://127.0.0.1", "https://[::1]",
                                    "https://192.168.1.1/tenant", "http://localhost:9000",
                                    "https://[::ffff:10.0.0.1]"])
def test_public_server_naming_a_private_as_is_unsafe(issuer: str) -> None:
    world = World()
    world.add_prm(PUBLIC_PRM, resource=PUBLIC_MCP, servers=(issuer,))
    world.add_as(issuer)
    flow = make_flow(url=PUBLIC_MCP, zone="public")
    challenge(flow, world, www="Bearer")
    assert isinstance(flow.error, UnsafeUrl), flow.error
    assert world.urls() == [PUBLIC_PRM]


def test_public_server_with_public_as_works_over_https() -> None:
    issuer = "https://auth.example.com"
    world = World()
    world.add_prm(PUBLIC_PRM, resource=PUBLIC_MCP, servers=(issuer,))
    world.add_as(issuer)
    flow = make_flow(url=PUBLIC_MCP, zone="public")
    redirect = until_redirect(flow, world, www="Bearer")
    assert redirect.url.startswith("https://auth.example.com/authorize?")
    assert flow.address_allowed("93.184.216.34")
    assert not flow.address_allowed("10.0.0.1") and not flow.address_allowed("169.254.169.254")


def test_public_server_metadata_with_private_endpoints_is_unsafe() -> None:
    issuer = "https://auth.example.com"
    world = World()
    world.add_prm(PUBLIC_PRM, resource=PUBLIC_MCP, servers=(issuer,))
    world.add_as(issuer, registration_endpoint="https://169.254.169.254/register")
    flow = make_flow(url=PUBLIC_MCP, zone="public")
    challenge(flow, world, www="Bearer")
    assert isinstance(flow.error, UnsafeUrl)
    assert all("169.254" not in u for u in world.urls())


def test_public_server_http_prm_is_never_fetched_in_plain_text() -> None:
    flow = make_flow(url="http://mcp.example.com/mcp", zone="public")
    flow.on_challenge(401, ["Bearer"], None, 0, T0)
    assert isinstance(flow.error, UnsafeUrl) and flow.exchanges_to_start() == []


# -- hypothesis: garbage answers ---------------------------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                      st.text(max_size=12),
                      st.sampled_from([AS, AS + "/", MCP, MCP_ORIGIN, "S256", "Bearer", "none",
                                       "client_secret_basic", f"{AS}/token", "https://10.0.0.1",
                                       "http://example.com/x", "javascript:x"]))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)
KEYS = ["resource", "authorization_servers", "scopes_supported", "issuer",
        "authorization_endpoint", "token_endpoint", "registration_endpoint",
        "code_challenge_methods_supported", "token_endpoint_auth_methods_supported",
        "authorization_response_iss_parameter_supported", "client_id", "client_secret",
        "token_endpoint_auth_method", "access_token", "token_type", "expires_in",
        "refresh_token", "scope", "error", "error_description"]


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A metadata, registration or token answer: plausible, mutated, or garbage."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.binary(max_size=40))
    if choice == 1:
        return json.dumps(draw(json_value)).encode()
    base: dict[str, Any] = {
        "resource": MCP, "authorization_servers": [AS], **as_meta(AS),
        "client_id": "cid", "access_token": "AT-fuzz-zzaccess", "token_type": "Bearer",
        "expires_in": 60, "refresh_token": "RT-fuzz-zzrefresh",
    }
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        if draw(st.booleans()):
            base.pop(key, None)
        else:
            base[key] = draw(json_value)
    return json.dumps(base).encode()


answers = st.tuples(st.sampled_from([200, 200, 200, 201, 302, 400, 401, 404, 429, 500]),
                    documents())
www_values = st.one_of(
    st.just(CHALLENGE), st.text(max_size=60),
    st.builds(lambda rm, sc, err: f'Bearer resource_metadata="{rm}", scope="{sc}", '
              f'error="{err}"',
              st.sampled_from([PRM_HEADER, PRM_PATH, "http://evil.example/prm", "x"]),
              st.text(alphabet="abc :_", max_size=10),
              st.sampled_from(["invalid_token", "insufficient_scope", ""])))

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def take_one(flow: OAuthFlow, log: list[AuthExchange]) -> AuthExchange | None:
    exchanges = flow.exchanges_to_start()
    assert len(exchanges) <= 1
    log += exchanges
    return exchanges[0] if exchanges else None


@FUZZ
@given(www=www_values, replies=st.lists(answers, max_size=8),
       callback=st.sampled_from(["approve", "garbage", "none"]),
       status=st.sampled_from([401, 403]), dpop=st.booleans())
def test_fuzz_garbage_answers_never_raise_or_leak(www: str, replies: list[tuple[int, bytes]],
                                                   callback: str, status: int,
                                                   dpop: bool) -> None:
    flow = make_flow(AuthConfig(dpop=SIGNER if dpop else None))
    log: list[AuthExchange] = []
    issued: list[str] = []
    now = T0
    for _round in range(2):
        flow.on_challenge(status, [www], None, flow.generation, now)
        for reply_status, body in replies:
            ex = take_one(flow, log)
            if ex is None:
                break
            failures = flow.failures
            flow.receive_exchange_data(ex.id, response(reply_status, body), now=now)
            if flow.failures > failures:  # every failure sets error
                assert flow.error is not None and not flow.busy
            for event in drain(flow):
                if isinstance(event, RedirectRequired) and callback != "none":
                    url = ("http://127.0.0.1/callback?code=c&state="
                           + query_of(event.url).get("state", "x")
                           if callback == "approve" else "x:/\x00?state=&state=")
                    failures = flow.failures
                    flow.receive_callback(url, now=now)
                    if flow.failures > failures:
                        assert flow.error is not None
        if flow.tokens is not None:
            issued.append(flow.tokens.access_token)
            flow.headers("POST", now)  # header-safe tokens only: never raises
        # ends idle, waiting for an answer, or waiting for the user
        assert flow.state in {"idle", "authorize"} or flow._exchange is not None
        assert flow.busy == (flow.state != "idle")
        flow.handle_timeout(now + 10**6)
        assert not flow.busy
        take_one(flow, log)
        now += 1
    # R1: no access token ever goes out on an auth exchange (they are all non-MCP requests)
    for ex in log:
        for token in issued:
            assert token.encode() not in ex.data


def test_a_failed_procedure_hands_out_no_dead_exchange() -> None:
    flow = make_flow()
    flow.on_challenge(401, [CHALLENGE], None, 0, T0)
    flow.handle_timeout(T0 + 10**6)  # the binding had not polled yet
    assert isinstance(flow.error, DiscoveryError)
    assert all(not ex.done for ex in flow.exchanges_to_start())


# -- hypothesis: a rule-based machine over every input ------------------------------------------


class FlowMachine(RuleBasedStateMachine):
    """Challenges, answers (right or wrong), callbacks and timeouts in any order."""

    def __init__(self) -> None:
        super().__init__()
        self.world = standard_world()
        self.flow = make_flow(AuthConfig(authorization_timeout=50.0, exchange_timeout=5.0))
        self.now = T0
        self.in_flight: list[AuthExchange] = []
        self.redirect: RedirectRequired | None = None
        self.generation = 0
        self.failures = 0
        self.sent: list[AuthExchange] = []

    def take(self) -> None:
        new = self.flow.exchanges_to_start()
        self.sent += new
        self.in_flight += new
        for ex in self.flow.exchanges_to_abort():
            self.in_flight = [e for e in self.in_flight if e.id != ex]
        self.in_flight = [e for e in self.in_flight if not e.done]
        for event in drain(self.flow):
            if isinstance(event, RedirectRequired):
                self.redirect = event

    @rule(status=st.sampled_from([401, 401, 403]),
          www=st.sampled_from([CHALLENGE, "Bearer", 'Bearer error="insufficient_scope", '
                               'scope="more"', "Basic realm=x"]),
          stale=st.booleans())
    def challenge(self, status: int, www: str, stale: bool) -> None:
        generation = max(0, self.flow.generation - 1) if stale else self.flow.generation
        was_busy = self.flow.busy
        kind = self.flow.on_challenge(status, [www], None, generation, self.now)
        assert kind in ("retry", "nonce", "refresh", "authorize", "step_up", "ignore",
                        "failed")
        if was_busy:
            # a challenge that is not OAuth's (Basic) fails at once: R19
            assert kind not in ("ignore", "failed") or status == 403 \
                or www.startswith("Basic")
            assert self.flow.exchanges_to_start() == []
        if kind == "failed":
            assert self.flow.error is not None
        self.take()

    @precondition(lambda self: bool(self.in_flight))
    @rule(good=st.sampled_from([True, True, True, False]),
          status=st.sampled_from([200, 404, 500]))
    def answer(self, good: bool, status: int) -> None:
        ex = self.in_flight.pop(0)
        req = parse_request(ex)
        data = self.world.answer(req) if good else response(status, b"{}")
        self.flow.receive_exchange_data(ex.id, data, now=self.now)
        self.take()

    @rule()
    def cooperate(self) -> None:
        """Everything answered right and the user approves: reaches an authorized flow."""
        while self.in_flight:
            ex = self.in_flight.pop(0)
            self.flow.receive_exchange_data(ex.id, self.world.answer(parse_request(ex)),
                                            now=self.now)
            self.take()
            if self.redirect is not None and self.flow.state == "authorize":
                redirect, self.redirect = self.redirect, None
                self.flow.receive_callback(self.world.approve(redirect), now=self.now)
                self.take()

    @precondition(lambda self: self.redirect is not None)
    @rule(how=st.sampled_from(["approve", "approve", "wrong_state", "denied", "fragment"]))
    def callback(self, how: str) -> None:
        assert self.redirect is not None
        redirect, self.redirect = self.redirect, None
        if how == "approve":
            url = self.world.approve(redirect)
        elif how == "wrong_state":
            url = self.world.approve(redirect, state="nope")
        elif how == "denied":
            url = replace_query(self.world.approve(redirect), urlencode(
                {"error": "access_denied", "state": query_of(redirect.url)["state"]}))
        else:
            url = self.world.approve(redirect).replace("?", "#")
        self.flow.receive_callback(url, now=self.now)
        self.take()

    @rule(seconds=st.sampled_from([1.0, 1.0, 6.0, 60.0]))
    def wait(self, seconds: float) -> None:
        self.now += seconds
        deadline = self.flow.next_deadline()
        self.flow.handle_timeout(self.now)
        if deadline is not None and deadline <= self.now:
            assert self.flow.next_deadline() != deadline or self.flow.busy
        self.take()

    @rule()
    def refresh(self) -> None:
        self.flow.start_refresh(self.now + 10**5)
        self.take()

    @invariant()
    def at_most_one_exchange_in_flight(self) -> None:
        assert len(self.in_flight) <= 1
        if self.in_flight:
            assert self.flow.busy

    @invariant()
    def busy_iff_not_idle(self) -> None:
        assert self.flow.busy == (self.flow.state != "idle")
        assert (self.flow.kind is None) == (not self.flow.busy)

    @invariant()
    def generation_never_decreases(self) -> None:
        assert self.flow.generation >= self.generation
        self.generation = self.flow.generation

    @invariant()
    def no_exchange_while_waiting_for_the_callback(self) -> None:
        if self.flow.state == "authorize":
            assert not self.in_flight and self.flow.exchanges_to_start() == []
            assert self.flow.next_deadline() is not None

    @invariant()
    def every_failure_sets_error(self) -> None:
        if self.flow.failures > self.failures:
            assert self.flow.error is not None
        self.failures = self.flow.failures

    @invariant()
    def tokens_only_from_this_world(self) -> None:
        if self.flow.tokens is not None:
            assert self.flow.tokens.access_token in self.world.access_tokens
        for ex in self.sent:
            for token in self.world.access_tokens:
                assert token.encode() not in ex.data


TestFlowMachine = FlowMachine.TestCase
TestFlowMachine.settings = settings(max_examples=40, stateful_step_count=30, deadline=None,
                                    suppress_health_check=[HealthCheck.too_slow])


def test_a_basic_challenge_does_not_start_oauth() -> None:
    # Review P2 (R19): a proxy asking for Basic is not an OAuth server: nothing is
    # discovered, registered or opened in a browser.
    world = standard_world()
    flow = make_flow()
    assert flow.on_challenge(401, ['Basic realm="proxy"'], None, 0, T0) == "failed"
    assert isinstance(flow.error, AuthorizationRequired) and "basic" in str(flow.error)
    assert flow.exchanges_to_start() == [] and world.log == []
    assert flow.on_challenge(403, ['Basic realm="proxy"'], None, 0, T0) == "ignore"


def test_an_answer_to_an_earlier_user_step_is_ignored() -> None:
    # Review B5: a handler that outlived its attempt cannot answer (or fail) the next one.
    world = standard_world()
    flow = make_flow(AuthConfig(authorization_timeout=10))
    first = until_redirect(flow, world)
    flow.handle_timeout(T0 + 11)
    assert not flow.busy
    second = until_redirect(flow, world, now=T0 + 12)
    assert second.attempt == first.attempt + 1
    flow.callback_failed("no callback within 300 s", now=T0 + 13, attempt=first.attempt)
    flow.receive_callback(world.approve(first), now=T0 + 13, attempt=first.attempt)
    assert flow.state == "authorize" and flow.exchanges_to_start() == []
    flow.receive_callback(world.approve(second), now=T0 + 14, attempt=second.attempt)
    world.serve(flow, T0 + 14)
    assert flow.error is None and flow.generation == 1


def test_a_refresh_keeps_the_stored_resource_of_an_earlier_run() -> None:
    # Review B7: a later run (no resource metadata fetched) refreshes with the resource the
    # tokens were issued for, and keeps it for the next refresh.
    world = standard_world()
    world.refresh_tokens.append("RT-old")
    record = record_for(AS, client_id="c", meta=as_meta(AS))
    record["issuers"][AS]["resource"] = MCP_ORIGIN  # an origin-only PRM resource
    flow = make_flow(record=record)
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0)  # refresh on a 401
    world.serve(flow, T0)
    assert flow.error is None and flow.tokens is not None
    assert flow.tokens.expires_at is not None
    at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    flow.start_refresh(at)  # then one before expiry
    world.serve(flow, at)
    assert flow.error is None and flow.generation == 2
    refreshes = [r.form["resource"] for r in token_requests(world)]
    assert refreshes == [MCP_ORIGIN, MCP_ORIGIN]


def test_a_refresh_already_done_by_another_process_is_taken_not_repeated() -> None:
    # Review P1: the store holds a newer refresh token than the one about to be used.
    flow, world = authorized_flow()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    flow.start_refresh(at)
    other = record_for(AS, client_id="client-1@9000", access="AT-other", refresh="RT-other")
    other["issuers"][AS]["tokens"]["expires_at"] = WALL + at + 3600
    assert flow.offer_record(other, now=at)
    assert not flow.busy and bearer(flow, at) == "AT-other"
    assert flow.exchanges_to_start() == [] and len(token_requests(world)) == 1
    # the same refresh token (nobody refreshed): the refresh goes out as planned
    flow2, _world2 = authorized_flow()
    assert flow2.tokens is not None and flow2.tokens.expires_at is not None
    at2 = flow2.tokens.expires_at - WALL - REFRESH_SKEW
    flow2.start_refresh(at2)
    assert not flow2.offer_record(None, now=at2) and flow2.busy


def test_a_changed_preregistered_client_id_is_used_not_the_stored_one() -> None:
    # Review P3: a new app registration in the configuration wins over the record.
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as(token_endpoint_auth_methods_supported=["client_secret_post"])
    first = make_flow(AuthConfig(client_id="old-id", client_secret="old"))
    authorize(first, world)
    record = [e for e in drain(first) if isinstance(e, SaveRecord)]
    stored = record[-1].record if record else None
    second = make_flow(AuthConfig(client_id="new-id", client_secret="new"), record=stored)
    authorize(second, world, now=T0 + 100)
    assert token_requests(world)[-1].form["client_id"] == "new-id"


def test_a_registration_answer_without_a_method_keeps_the_secret() -> None:
    # Review P4: RFC 7591 section 2: no method named and a secret given: client_secret_basic
    world = World()
    world.add_prm(PRM_HEADER)
    world.add_as()
    world.registration = {"client_secret": "from-registration"}

    def register(req: Req) -> bytes:
        return response(201, {"client_id": "c-nomethod", "client_secret": "from-registration"})

    world.routes[f"{AS}/register"] = register
    flow = make_flow()
    authorize(flow, world)
    [token] = token_requests(world)
    assert token.headers.get("authorization", "").startswith("Basic ")


@pytest.mark.parametrize("url", ["http://x.example/client.json", "https://x.example",
                                 "https://x.example/", "https://x.example/c#f", "garbage"])
def test_a_client_metadata_url_must_be_https_with_a_path(url: str) -> None:
    with pytest.raises(ValueError, match="client_metadata_url"):
        AuthConfig(client_metadata_url=url)


def test_the_port_wildcard_is_for_loopback_redirect_uris_only() -> None:
    assert check_callback("http://127.0.0.1:5555/cb?state=s&code=c",
                          redirect_uri="http://127.0.0.1/cb", state="s", issuer=AS,
                          iss_advertised=False) == "c"
    with pytest.raises(CallbackRejected):
        check_callback("https://app.example:8443/cb?state=s&code=c",
                       redirect_uri="https://app.example/cb", state="s", issuer=AS,
                       iss_advertised=False)


def test_the_transition_table_is_whole() -> None:
    # Every state the table leads to has an entry function (or ends the procedure), and
    # every outcome the code produces is in the table for some state.
    targets = set(TRANSITIONS.values())
    for state in targets - {"done"}:
        assert hasattr(OAuthFlow, f"_enter_{state}"), state
    produced = {node.args[0].value
                for module in (auth_flow_module, auth_procedure_module)  # the face, the states
                for node in ast.walk(ast.parse(inspect.getsource(module)))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "_go" and node.args
                and isinstance(node.args[0], ast.Constant)}
    outcomes = {outcome for _state, outcome in TRANSITIONS}
    assert produced <= outcomes, produced - outcomes
    assert produced, "no outcome found: the test reads the wrong source"


def test_a_procedure_that_fails_at_once_fails_the_request_at_once() -> None:
    # Second review N3: nothing was sent, so the request must not wait (and be sent again).
    world = standard_world()
    flow = make_flow(zone="public")  # the URL's loopback discovery address is refused
    assert flow.on_challenge(401, [CHALLENGE], None, 0, T0) == "failed"
    assert isinstance(flow.error, UnsafeUrl) and not flow.busy and world.log == []


def test_a_401_joining_a_refresh_before_expiry_makes_its_failure_count() -> None:
    # Second review N6: once the server refused the token, a refresh that cannot reach the
    # AS fails the waiting requests instead of sending the refused token again.
    flow, _world = authorized_flow()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    flow.start_refresh(at)
    [ex] = flow.exchanges_to_start()
    failures = flow.failures
    assert flow.on_challenge(401, [CHALLENGE], None, flow.generation, at) == "refresh"
    flow.exchange_failed(ex.id, "connection refused", now=at)
    assert flow.failures == failures + 1 and isinstance(flow.error, TokenError)


def test_an_older_stored_token_is_not_taken_for_a_newer_one() -> None:
    # Second review N7.
    flow, _world = authorized_flow()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    at = flow.tokens.expires_at - WALL - REFRESH_SKEW
    flow.start_refresh(at)
    older = record_for(AS, client_id="client-1@9000", access="AT-older", refresh="RT-older")
    older["issuers"][AS]["tokens"]["expires_at"] = flow.tokens.expires_at - 100
    older["issuers"][AS]["tokens"]["issued_at"] = flow.tokens.expires_at - 200 - 3600
    assert not flow.offer_record(older, now=at) and flow.busy


def test_invalid_client_on_a_refresh_registers_again() -> None:
    # Second review N4: the AS forgot the registration: the next authorization registers
    # anew instead of presenting the dead client id.
    flow, world = authorized_flow()
    world.routes[f"{AS}/token"] = fixed(401, {"error": "invalid_client"})
    flow.on_challenge(401, [CHALLENGE], None, flow.generation, T0 + 10)
    world.serve(flow, T0 + 10)
    assert sum(url.endswith("/register") for url in world.urls()) == 2
    assert flow.state == "authorize"
