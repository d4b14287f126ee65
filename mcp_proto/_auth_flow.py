"""The authorization flow (OAuth 2.1 for MCP, section 11 of the checklist) as a machine.

:class:`OAuthFlow` takes HTTP answers, the callback URL and the time, and gives HTTP requests
to make (:class:`AuthExchange`), the headers each MCP request carries, and events
(:class:`RedirectRequired`, :class:`SaveRecord`, :class:`Authorized`).  It never opens a
socket, reads a clock or draws randomness itself: the binding passes ``now``, a
``random_bytes`` function, and the signer of a private key when one is configured.

A procedure runs at most one at a time (concurrent 401s join it: one browser, one
registration, one token request) and goes through the states of :data:`TRANSITIONS`::

    prm -> as_metadata -> client -> [register ->] client -> authorize -> code_token -> done
        \\-> legacy_metadata (2025-03-26: no resource metadata anywhere)
    refresh -> done  (or, refused, prm again)
    client -> client_grant | assertion_grant | idp_exchange -> assertion_grant -> done

Each state's answer is classified into an outcome, and the table says where it leads; a
state with no entry for an outcome fails the procedure with that state's error.
"""

from __future__ import annotations

import hmac
import math
import re
from base64 import b64encode
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from ._auth_challenge import Challenge, oauth_challenge, parse_www_authenticate
from ._auth_config import (
    MAX_TOKEN_LIFETIME,
    MIN_TOKEN_LIFETIME,
    RECORD_VERSION,
    AuthConfig,
    Tokens,
)
from ._auth_errors import (
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
from ._auth_exchange import AuthExchange, AuthResponse
from ._auth_jwt import b64url, client_assertion, dpop_proof, pkce_pair
from ._auth_urls import (
    AuthUrl,
    address_allowed,
    as_metadata_candidates,
    canonical_resource,
    check_url,
    legacy_endpoint,
    legacy_metadata_url,
    origin_of,
    parse_auth_url,
    prm_candidates,
    resource_matches,
)

__all__ = [
    "AUTHORIZATION_WINDOW",
    "MAX_AUTHORIZATIONS_PER_WINDOW",
    "MAX_STEP_UPS_PER_SCOPE",
    "REFRESH_SKEW",
    "TRANSITIONS",
    "AuthEvent",
    "AuthStatus",
    "Authorized",
    "OAuthFlow",
    "RedirectRequired",
    "SaveRecord",
]

#: Seconds before expiry at which a token is refreshed instead of sent: a request must not
#: arrive with a token that expires on the way (clocks differ by a few seconds).
REFRESH_SKEW = 60.0

#: Step-up authorizations for one set of scopes.  The spec says to retry "no more than a few
#: times": a server that keeps answering 403 for scopes the user was just granted fails the
#: call with :class:`InsufficientScope` instead of opening the browser forever.
MAX_STEP_UPS_PER_SCOPE = 2

#: Interactive authorizations per :data:`AUTHORIZATION_WINDOW` seconds on one connection: a
#: server that refuses every fresh token must not open a browser on every call (the official
#: SDKs bound retries only per request).  Beyond it, calls fail fast until ``reauthorize``.
MAX_AUTHORIZATIONS_PER_WINDOW = 3
AUTHORIZATION_WINDOW = 600.0

#: Random bytes in ``state`` (RFC 9700 section 4.7: at least 128 bits) and in the PKCE
#: verifier (RFC 7636 section 7.1: 256 bits gives a 43-character verifier).
STATE_BYTES = 16
VERIFIER_BYTES = 32
JTI_BYTES = 16

_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
#: What an access token may hold to go in an ``Authorization`` header: visible ASCII (RFC 6750
#: b64token is narrower; real tokens are JWTs or opaque base64url).  Anything else would break
#: every request it is put on.
_HEADER_SAFE = re.compile(r"[\x21-\x7e]{1,16384}")
_SCOPE_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F)) - {'"', "\\"}

#: (state, outcome) -> next state.  ``done`` ends the procedure with a new token.
TRANSITIONS: dict[tuple[str, str], str] = {
    ("idle", "challenge"): "prm",
    ("idle", "step_up"): "client",
    ("idle", "refresh"): "refresh",
    ("prm", "found"): "as_metadata",
    ("prm", "next"): "prm",
    ("prm", "exhausted"): "legacy_metadata",
    ("as_metadata", "found"): "client",
    ("as_metadata", "next"): "as_metadata",
    ("legacy_metadata", "found"): "client",
    ("legacy_metadata", "missing"): "client",
    ("client", "register"): "register",
    ("client", "code"): "authorize",
    ("client", "client_credentials"): "client_grant",
    ("client", "jwt_bearer"): "assertion_grant",
    ("client", "enterprise"): "idp_exchange",
    ("register", "ok"): "client",
    ("authorize", "callback"): "code_token",
    ("code_token", "ok"): "done",
    ("code_token", "nonce"): "code_token",
    ("refresh", "ok"): "done",
    ("refresh", "nonce"): "refresh",
    ("refresh", "invalid"): "prm",
    ("client_grant", "ok"): "done",
    ("client_grant", "nonce"): "client_grant",
    ("idp_exchange", "ok"): "assertion_grant",
    ("assertion_grant", "ok"): "done",
    ("assertion_grant", "nonce"): "assertion_grant",
}

#: What a request that met a challenge waits for: the kind of procedure it joined.
KINDS = ("retry", "nonce", "refresh", "authorize", "step_up")


@dataclass(frozen=True, slots=True)
class RedirectRequired:
    """The user must visit ``url`` (open a browser, print it).  Call
    :meth:`OAuthFlow.receive_callback` with the URL the browser was sent back to (on
    ``redirect_uri``), or :meth:`OAuthFlow.callback_failed`, before ``deadline``."""

    url: str = field(repr=False)
    redirect_uri: str
    deadline: float


@dataclass(frozen=True, slots=True)
class SaveRecord:
    """Store ``record`` under ``key`` (the server's canonical URL), replacing what was
    there.  It holds tokens: keep it where only this user can read it."""

    key: str
    record: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class Authorized:
    """A new token is in use (for the log; the token itself is never in an event)."""

    issuer: str
    scope: str | None
    expires_at: float | None


AuthEvent = RedirectRequired | SaveRecord | Authorized


@dataclass(frozen=True, slots=True)
class AuthStatus:
    """What a host may show: never the token."""

    authorized: bool
    issuer: str | None
    scope: str | None
    expires_at: float | None
    error: str | None


@dataclass(slots=True)
class _Prm:
    url: str
    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None


def _scopes(text: str | None) -> list[str]:
    """Scope tokens (RFC 6749 section 3.3), in order, without repeats or bad characters."""
    out: list[str] = []
    for token in (text or "").split(" "):
        if token and all(c in _SCOPE_CHARS for c in token) and token not in out:
            out.append(token)
    return out


def _union(*groups: Sequence[str]) -> list[str]:
    out: list[str] = []
    for group in groups:
        for token in group:
            if token not in out:
                out.append(token)
    return out


def _str_list(value: object) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _safe(url: str) -> str:
    """A URL for a message: without its query (it may carry a secret)."""
    try:
        parts = urlsplit(url)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    except ValueError:
        return "(malformed URL)"


def _oauth_error(response: AuthResponse) -> tuple[str | None, str | None]:
    body = response.json_object() or {}
    error = body.get("error")
    description = body.get("error_description")
    return (error[:200] if isinstance(error, str) else None,
            description[:300] if isinstance(description, str) else None)


class OAuthFlow:
    """The authorization state of one MCP server connection.

    ``config`` says how to get tokens, ``server_url`` is the MCP endpoint, ``record`` what a
    store kept from earlier runs (None: nothing).  ``random_bytes(n)`` must return ``n``
    bytes from a cryptographic source.  ``wall_offset`` is added to ``now`` (the binding's
    monotonic clock) to get wall-clock seconds for token expiry and JWTs.  ``mcp_zone`` is the
    address zone of the MCP server's host (see :func:`address_zone`): discovery requests may
    go to private addresses only when the server itself is on one.
    """

    def __init__(self, config: AuthConfig, server_url: str, *,
                 random_bytes: Callable[[int], bytes], wall_offset: float = 0.0,
                 mcp_zone: str = "public", record: dict[str, Any] | None = None) -> None:
        self.config = config
        self.server_url = server_url
        self.key = canonical_resource(server_url)
        self._server = parse_auth_url(server_url, what="the MCP server URL")
        self._random = random_bytes
        self._wall = wall_offset
        self.mcp_zone = mcp_zone
        self.protocol_version: str | None = None
        """Sent as ``MCP-Protocol-Version`` on discovery requests (2025-03-26 SHOULD)."""
        self.generation = 0
        """Counts tokens put in use; a request sent with an older one is simply retried."""
        self.failures = 0
        """Counts failed procedures; requests waiting on one fail with :attr:`error`."""
        self.error: AuthorizationError | None = None
        self.kind: str | None = None
        """The kind of the procedure running (``refresh``, ``authorize``, ``step_up``)."""
        self.state = "idle"
        self._record = self._load(record)
        self.issuer: str | None = self._record.get("issuer")
        self.tokens: Tokens | None = None
        if self.issuer is not None:
            self.tokens = Tokens.from_json(self._sub(self.issuer).get("tokens"))
        if self.tokens is not None and config.issuer is not None \
                and self.issuer != config.issuer:
            self.tokens = None  # another authorization server's token: never sent
        self._events: list[AuthEvent] = []
        self._starting: list[AuthExchange] = []
        self._aborting: list[int] = []
        self._exchange: AuthExchange | None = None
        self._next_id = 1
        self._deadline: float | None = None  # the user step's
        self.user_wait_until: float | None = None
        """While the user is asked to authorize: until when (requests waiting on it keep
        their deadlines beyond it)."""
        self._dpop_nonces: dict[tuple[str, str, int], str] = {}
        self._nonce_retried = False
        self._refresh_failed: int | None = None  # generation whose refresh was refused
        self._refreshed: int | None = None  # generation a refresh gave (refused: discover)
        self._authorizations: list[float] = []  # when each interactive one started
        self._step_ups: dict[frozenset[str], int] = {}
        # discovery and the procedure in progress
        self._challenge: Challenge | None = None
        self._prm: _Prm | None = None
        self._prm_candidates: list[str] = []
        self._as_candidates: list[str] = []
        self._as_meta: dict[str, Any] | None = None
        self._legacy = False
        self._requested: list[str] = []
        self._verifier = ""
        self._state_value = ""
        self._redirect_uri = config.redirect_uri
        self._id_jag = ""
        self._code = ""
        self._last_token_purpose = ""

    # -- what the HTTP layer asks -------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a procedure runs: new requests wait for it instead of being sent."""
        return self.state != "idle"

    def headers(self, method: str, now: float) -> list[tuple[str, str]]:
        """The ``Authorization`` (and ``DPoP``) headers of an MCP request, or none.  Only ever
        for the MCP server's own origin: the HTTP layer sends nothing else."""
        tokens = self.tokens
        if tokens is None:
            return []
        if tokens.token_type.lower() == "dpop" and self.config.dpop is not None:
            proof = dpop_proof(self.config.dpop, method=method, url=self._server.without_query,
                               now=now + self._wall, jti=self._jti(),
                               nonce=self._dpop_nonces.get(self._server.origin),
                               access_token=tokens.access_token)
            return [("Authorization", f"DPoP {tokens.access_token}"), ("DPoP", proof)]
        return [("Authorization", f"Bearer {tokens.access_token}")]

    def needs_refresh(self, now: float) -> bool:
        """Whether the token expires within :data:`REFRESH_SKEW` and can be refreshed: the
        HTTP layer then holds new requests and calls :meth:`start_refresh`."""
        tokens = self.tokens
        return (not self.busy and tokens is not None and tokens.refresh_token is not None
                and tokens.expires_at is not None and self._refresh_failed != self.generation
                and tokens.expires_at - REFRESH_SKEW <= now + self._wall)

    def start_refresh(self, now: float) -> None:
        """Refresh the token before it expires (requests sent meanwhile wait)."""
        if self.needs_refresh(now):
            self._begin("refresh", "refresh", now)

    def on_challenge(self, status: int, www_authenticate: Sequence[str],
                     dpop_nonce: str | None, generation: int, now: float) -> str:
        """An MCP request sent with token ``generation`` was answered ``status`` (401 or 403)
        with these ``WWW-Authenticate`` values.  Returns what the request waits for, one of
        :data:`KINDS` (the HTTP layer counts them per request and holds the request until the
        flow is idle again), ``ignore`` (a 403 that is not about scope: an ordinary error),
        or ``failed`` (the request fails now with :attr:`error`)."""
        challenges = parse_www_authenticate(www_authenticate)
        challenge = oauth_challenge(challenges, dpop=self.config.dpop is not None)
        error = challenge.get("error") if challenge is not None else None
        if status == 403 and error != "insufficient_scope":
            return "ignore"
        if (error == "use_dpop_nonce" and dpop_nonce and self.config.dpop is not None
                and challenge is not None and challenge.scheme == "dpop"):
            self._dpop_nonces[self._server.origin] = dpop_nonce
            return "nonce"
        if self.busy:
            return self.kind or "authorize"  # join the procedure in progress
        if generation < self.generation:
            return "retry"  # sent with an older token; a newer one is in use
        self._challenge = challenge
        self.error = None
        if status == 403:
            return self._step_up(challenge, now)
        tokens = self.tokens
        if tokens is not None and tokens.refresh_token is not None \
                and self.generation not in (self._refresh_failed, self._refreshed):
            self._begin("refresh", "refresh", now)
            return "refresh"
        self.tokens = None  # refused: never sent again
        if not self.config.interactive and self.config.grant == "authorization_code":
            return self._refuse(AuthorizationRequired(
                f"{_safe(self.server_url)} needs authorization and no usable token is stored "
                f"(run: mcp-proto login --url {_safe(self.server_url)})"))
        if self.config.grant == "authorization_code" and not self._may_authorize(now):
            return self._refuse(AuthorizationRejected(
                f"{_safe(self.server_url)} refused {MAX_AUTHORIZATIONS_PER_WINDOW} fresh "
                f"authorizations within {AUTHORIZATION_WINDOW:.0f} s; not asking the user "
                "again until reauthorize()"))
        self._begin("challenge", "authorize", now)
        return "authorize"

    def reauthorize(self, now: float, scope: str | None = None) -> None:
        """Forget the token and authorize again (the host's "log in again"), asking for
        ``scope`` beside the usual scopes.  The window of :data:`MAX_AUTHORIZATIONS_PER_WINDOW`
        starts over."""
        if self.busy:
            return
        self._authorizations.clear()
        self._step_ups.clear()
        self.tokens = None
        self._challenge = Challenge("bearer", {"scope": scope} if scope else {})
        self._begin("challenge", "authorize", now)

    def status(self) -> AuthStatus:
        tokens = self.tokens
        return AuthStatus(tokens is not None, self.issuer,
                          None if tokens is None else tokens.scope,
                          None if tokens is None else tokens.expires_at,
                          None if self.error is None else str(self.error))

    # -- what the binding does for it ---------------------------------------------------------

    def exchanges_to_start(self) -> list[AuthExchange]:
        out, self._starting = self._starting, []
        return out

    def exchanges_to_abort(self) -> list[int]:
        out, self._aborting = self._aborting, []
        return out

    def next_event(self) -> AuthEvent | None:
        return self._events.pop(0) if self._events else None

    def address_allowed(self, address: str) -> bool:
        """Whether an auth exchange may connect to ``address`` (a resolved IP): private,
        link-local and metadata addresses only when the MCP server's own host is loopback or
        private (server-side request forgery, R7)."""
        return address_allowed(address, self.mcp_zone)

    def receive_exchange_data(self, exchange_id: int, data: bytes, *, now: float) -> None:
        """Bytes of an auth exchange's answer (``b""``: the server closed)."""
        ex = self._exchange
        if ex is None or ex.id != exchange_id or ex.done:
            return
        result = ex.feed(data)
        if result is not None:
            self.receive_exchange_result(exchange_id, result, now=now)

    def receive_exchange_result(self, exchange_id: int, result: AuthResponse | str, *,
                                now: float) -> None:
        """The outcome of an auth exchange whose bytes the binding fed to
        :meth:`AuthExchange.feed` itself (in the thread that read them): the complete answer,
        or why there is none.  A result for an exchange the flow gave up on is ignored."""
        ex = self._exchange
        if ex is None or ex.id != exchange_id:
            return
        ex.done = True
        self._exchange = None
        if isinstance(result, str):
            self._aborting.append(ex.id)
            self._exchange_error(ex, result, now)
        else:
            self._on_response(ex, result, now)

    def exchange_failed(self, exchange_id: int, reason: str, *, now: float) -> None:
        """An auth exchange could not be carried (no connection, a refused address, TLS):
        ``reason`` says why, for the error."""
        ex = self._exchange
        if ex is None or ex.id != exchange_id or ex.done:
            return
        ex.done = True
        self._exchange = None
        self._exchange_error(ex, reason, now)

    def receive_callback(self, url: str, *, now: float) -> None:
        """The URL the browser was sent back to after the authorization request."""
        if self.state != "authorize":
            return
        self._deadline = self.user_wait_until = None
        try:
            code = self._check_callback(url)
        except AuthorizationError as exc:
            self._fail(exc)
            return
        self._code = code
        self._go("callback", now)

    def callback_failed(self, error: AuthorizationError | str, *, now: float) -> None:
        """The redirect handler could not deliver a callback (it raised, the user gave up)."""
        if self.state != "authorize":
            return
        self._deadline = self.user_wait_until = None
        self._fail(error if isinstance(error, AuthorizationError)
                   else AuthorizationError(f"authorization did not complete: {error}"))

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (self._deadline,
                                 None if self._exchange is None else self._exchange.deadline)
                     if d is not None]
        return min(deadlines) if deadlines else None

    def handle_timeout(self, now: float) -> None:
        ex = self._exchange
        if ex is not None and ex.deadline <= now:
            ex.done = True
            self._exchange = None
            self._aborting.append(ex.id)
            self._exchange_error(ex, f"no answer within {self.config.exchange_timeout:g} s",
                                 now)
        if self._deadline is not None and self._deadline <= now and self.state == "authorize":
            self._deadline = self.user_wait_until = None
            self._fail(AuthorizationError(
                f"no authorization within {self.config.authorization_timeout:g} s (the user "
                "did not complete it)"))

    # -- the procedure ------------------------------------------------------------------------

    def _begin(self, outcome: str, kind: str, now: float) -> None:
        self.kind = kind
        self.error = None
        self._nonce_retried = False
        self._go(outcome, now)

    def _go(self, outcome: str, now: float) -> None:
        state = TRANSITIONS.get((self.state, outcome))
        if state is None:  # a bug: every outcome a state produces is in the table
            self._fail(AuthorizationError(f"authorization: no way from {self.state} on "
                                          f"{outcome}"))
            return
        if state != self.state:
            self._nonce_retried = False
            if state == "prm":
                self._new_discovery()
        self.state = state
        if state == "done":
            self._done()
            return
        try:
            getattr(self, f"_enter_{state}")(now)
        except AuthorizationError as exc:
            self._fail(exc)

    def _done(self) -> None:
        refreshed = self.kind == "refresh" and self._only_refreshed()
        self.state = "idle"
        self.kind = None
        self.generation += 1
        self._refreshed = self.generation if refreshed else None
        tokens = self.tokens
        assert tokens is not None and self.issuer is not None
        self._events.append(Authorized(self.issuer, tokens.scope, tokens.expires_at))

    def _only_refreshed(self) -> bool:
        """Whether the procedure ending now was a refresh and nothing more (a refused refresh
        goes on to discovery and a new grant)."""
        return self._last_token_purpose == "refresh"

    def _fail(self, error: AuthorizationError) -> None:
        self._starting.clear()  # at most one exchange per procedure: none is left to carry
        if self._exchange is not None:
            self._aborting.append(self._exchange.id)
            self._exchange = None
        self.state = "idle"
        self.kind = None
        self._deadline = self.user_wait_until = None
        self.error = error
        self.failures += 1

    def _refuse(self, error: AuthorizationError) -> str:
        self.error = error
        return "failed"

    def _may_authorize(self, now: float) -> bool:
        recent = [t for t in self._authorizations if t > now - AUTHORIZATION_WINDOW]
        self._authorizations = recent
        return len(recent) < MAX_AUTHORIZATIONS_PER_WINDOW

    def _step_up(self, challenge: Challenge | None, now: float) -> str:
        challenged = _scopes(None if challenge is None else challenge.get("scope"))
        granted = _scopes(None if self.tokens is None else self.tokens.scope)
        wanted = frozenset(_union(self._requested, granted, challenged))
        count = self._step_ups.get(wanted, 0)
        if count >= MAX_STEP_UPS_PER_SCOPE or (
                self.config.grant == "authorization_code" and not self._may_authorize(now)):
            return self._refuse(InsufficientScope(
                f"{_safe(self.server_url)} still answers 403 insufficient_scope after "
                f"{count} step-up authorizations for {' '.join(sorted(wanted)) or 'no scope'}",
                scope=None if challenge is None else challenge.get("scope")))
        self._step_ups[wanted] = count + 1
        self._requested = _union(self._requested, granted, challenged)
        self.kind = "step_up"
        self.error = None
        self._nonce_retried = False
        if self._as_meta is None:
            self._go("challenge", now)
        else:
            self._go("step_up", now)
        return "step_up"

    # -- states -------------------------------------------------------------------------------

    def _start(self, purpose: str, url: AuthUrl, now: float, *, method: str = "GET",
               headers: list[tuple[str, str]] | None = None,
               form: dict[str, str] | None = None,
               json_body: dict[str, Any] | None = None) -> None:
        ex = AuthExchange.build(self._next_id, purpose, url, method=method,
                                deadline=now + self.config.exchange_timeout,
                                headers=headers, form=form, json_body=json_body)
        self._next_id += 1
        self._exchange = ex
        self._starting.append(ex)

    def _check(self, url: object, what: str) -> AuthUrl:
        if not isinstance(url, str):
            raise DiscoveryError(f"{what} is missing or not a string")
        return check_url(url, what=what, mcp_zone=self.mcp_zone,
                         allow_http=self.config.allow_http)

    def _discovery_headers(self) -> list[tuple[str, str]]:
        return ([("MCP-Protocol-Version", self.protocol_version)]
                if self.protocol_version else [])

    def _new_discovery(self) -> None:
        """Every 401 discovers again from the resource metadata: the server may have moved
        to another authorization server since (SEP-2352)."""
        self._prm = None
        self._as_meta = None
        self._legacy = False
        header = None if self._challenge is None else self._challenge.get("resource_metadata")
        if header is not None:
            try:
                same = origin_of(header) == self._server.origin
            except (ValueError, UnsafeUrl):
                same = False
            if not same:
                header = None  # R7: resource metadata on another origin is not followed
        self._prm_candidates = prm_candidates(self.server_url, header)

    def _enter_prm(self, now: float) -> None:
        url = self._prm_candidates.pop(0)
        self._start("protected resource metadata", self._check(url, "resource metadata URL"),
                    now, headers=self._discovery_headers())

    def _on_prm(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        status = response.status
        if status >= 500 or status == 429:
            raise DiscoveryError(f"protected resource metadata at {_safe(str(ex.url.raw))}: "
                                 f"HTTP {status}")
        doc = response.json_object() if status == 200 else None
        if doc is None:  # any 3xx/4xx, or not a JSON object: the next candidate
            self._go("next" if self._prm_candidates else "exhausted", now)
            return
        resource = doc.get("resource")
        servers = _str_list(doc.get("authorization_servers"))
        if not isinstance(resource, str) or not servers:
            raise DiscoveryError(f"protected resource metadata at {_safe(ex.url.raw)} has no "
                                 "resource or no authorization_servers")
        if not resource_matches(resource, self.server_url):
            raise ResourceMismatch(f"protected resource metadata at {_safe(ex.url.raw)} is "
                                   f"for {_safe(resource)}, not {_safe(self.server_url)}; "
                                   "nothing was sent to its authorization server")
        self._prm = _Prm(ex.url.raw, resource, servers,
                         _str_list(doc.get("scopes_supported")))
        issuer = self._pick_issuer(servers)
        self._use_issuer(issuer)
        self._as_candidates = as_metadata_candidates(issuer)
        self._go("found", now)

    def _pick_issuer(self, servers: list[str]) -> str:
        wanted = self.config.issuer
        if wanted is not None:
            if wanted not in servers:
                raise IssuerMismatch(f"the server names {', '.join(map(_safe, servers))} as "
                                     f"its authorization server, not the configured "
                                     f"{_safe(wanted)}; the credentials were not sent")
            return wanted
        known = self._record.get("issuers", {})
        for server in servers:
            if isinstance(known.get(server), dict) and known[server].get("client"):
                return server
        return servers[0]

    def _use_issuer(self, issuer: str) -> None:
        if issuer != self.issuer:
            self.tokens = None  # tokens of another authorization server are never sent
            self._requested = []
        self.issuer = issuer

    def _enter_as_metadata(self, now: float) -> None:
        url = self._as_candidates.pop(0)
        self._start("authorization server metadata",
                    self._check(url, "authorization server metadata URL"), now)

    def _on_as_metadata(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        status = response.status
        if status >= 500 or status == 429:
            raise DiscoveryError(f"authorization server metadata at {_safe(ex.url.raw)}: "
                                 f"HTTP {status}")
        doc = response.json_object() if status == 200 else None
        if doc is None:
            if self._as_candidates:
                self._go("next", now)
                return
            raise DiscoveryError(f"no authorization server metadata for {_safe(self.issuer or '')}"
                                 " (RFC 8414 and OpenID discovery URLs all refused)")
        if doc.get("issuer") != self.issuer:
            raise IssuerMismatch(f"authorization server metadata at {_safe(ex.url.raw)} names "
                                 f"issuer {str(doc.get('issuer'))[:200]!r}, not "
                                 f"{self.issuer!r}; none of its endpoints was used")
        self._as_meta = doc
        self._go("found", now)

    def _enter_legacy_metadata(self, now: float) -> None:
        self._legacy = True
        self._prm = None
        self._use_issuer(f"{self._server.scheme}://{self._server.authority}")
        self._start("authorization server metadata",
                    self._check(legacy_metadata_url(self.server_url),
                                "authorization server metadata URL"),
                    now, headers=self._discovery_headers())

    def _on_legacy_metadata(self, ex: AuthExchange, response: AuthResponse,
                            now: float) -> None:
        status = response.status
        if status >= 500 or status == 429:
            raise DiscoveryError(f"authorization server metadata at {_safe(ex.url.raw)}: "
                                 f"HTTP {status}")
        doc = response.json_object() if status == 200 else None
        if doc is None:  # 2025-03-26: the default endpoints on the server's origin
            self._as_meta = {
                "issuer": self.issuer,
                "authorization_endpoint": legacy_endpoint(self.server_url, "/authorize"),
                "token_endpoint": legacy_endpoint(self.server_url, "/token"),
                "registration_endpoint": legacy_endpoint(self.server_url, "/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic",
                                                          "client_secret_post"],
            }
            self._go("missing", now)
            return
        if doc.get("issuer") != self.issuer:
            raise IssuerMismatch(f"authorization server metadata at {_safe(ex.url.raw)} names "
                                 f"issuer {str(doc.get('issuer'))[:200]!r}, not "
                                 f"{self.issuer!r}; none of its endpoints was used")
        self._as_meta = doc
        self._go("found", now)

    # client identity ------------------------------------------------------------------------

    def _sub(self, issuer: str) -> dict[str, Any]:
        issuers = self._record.setdefault("issuers", {})
        sub = issuers.get(issuer)
        if not isinstance(sub, dict):
            sub = issuers[issuer] = {}
        out: dict[str, Any] = sub
        return out

    def _client(self) -> dict[str, Any] | None:
        assert self.issuer is not None
        client = self._sub(self.issuer).get("client")
        if not isinstance(client, dict) or not isinstance(client.get("client_id"), str):
            return None
        if client.get("via") == "preregistered":
            client = {**client, "client_secret": self.config.client_secret}
        elif (client.get("via") == "dcr" and self.config.grant == "authorization_code"
              and client.get("redirect_uri") != self.config.redirect_uri):
            # Registered for another redirect URI (an earlier run's loopback port): many
            # authorization servers match redirect URIs exactly, so register again.
            return None
        return client

    def _enter_client(self, now: float) -> None:
        meta = self._as_meta or {}
        config = self.config
        grant = config.grant
        if grant == "authorization_code":
            methods = _str_list(meta.get("code_challenge_methods_supported")) or []
            if "S256" not in methods:
                raise PkceUnsupported(f"{_safe(self.issuer or '')} does not advertise PKCE "
                                      "with S256 (code_challenge_methods_supported); "
                                      "refusing to authorize without it")
        if self._client() is None and not self._adopt_client(meta):
            if grant == "jwt_bearer":
                self._go(grant, now)  # a workload assertion may stand alone
                return
            if grant != "authorization_code":
                raise RegistrationError("no client credentials for "
                                        f"{_safe(self.issuer or '')}")
            if not isinstance(meta.get("registration_endpoint"), str):
                raise RegistrationError(
                    f"{_safe(self.issuer or '')} offers no registration endpoint and no "
                    "client ID metadata documents, and no client_id is configured for it")
            self._go("register", now)
            return
        self._go("code" if grant == "authorization_code" else grant, now)

    def _adopt_client(self, meta: dict[str, Any]) -> bool:
        """Configured credentials or a client ID metadata document, if usable here."""
        config = self.config
        assert self.issuer is not None
        sub = self._sub(self.issuer)
        if config.client_id is not None:
            bound = [iss for iss, s in self._record.get("issuers", {}).items()
                     if isinstance(s, dict) and isinstance(s.get("client"), dict)
                     and s["client"].get("via") == "preregistered"]
            if config.issuer is None and bound and self.issuer not in bound:
                return False  # bound to the issuer it was first used with (SEP-2352)
            sub["client"] = {"client_id": config.client_id, "via": "preregistered",
                             "method": self._method(meta, bool(config.client_secret))}
            return True
        url = config.client_metadata_url
        if url is not None and meta.get("client_id_metadata_document_supported") is True:
            sub["client"] = {"client_id": url, "via": "cimd", "method": "none"}
            return True
        return False

    def _method(self, meta: dict[str, Any], secret: bool) -> str:
        if self.config.token_endpoint_auth_method is not None:
            return self.config.token_endpoint_auth_method
        if self.config.signer is not None:
            return "private_key_jwt"
        supported = _str_list(meta.get("token_endpoint_auth_methods_supported"))
        if not secret:
            return "none"
        if supported is None:
            return "client_secret_basic"  # RFC 8414 section 2: the default
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "client_secret_basic"

    def _enter_register(self, now: float) -> None:
        meta = self._as_meta or {}
        supported = _str_list(meta.get("token_endpoint_auth_methods_supported"))
        method = "none"
        if supported is not None and "none" not in supported:
            method = next((m for m in ("client_secret_basic", "client_secret_post")
                           if m in supported), "client_secret_basic")
        redirect = self.config.redirect_uri
        app = self.config.application_type or (
            "native" if urlsplit(redirect).hostname in ("127.0.0.1", "::1", "localhost")
            else "web")
        body = {"client_name": self.config.client_name, "redirect_uris": [redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"], "token_endpoint_auth_method": method,
                "application_type": app}
        self._start("registration", self._check(meta.get("registration_endpoint"),
                                                "the registration endpoint"),
                    now, method="POST", json_body=body)

    def _on_register(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        doc = response.json_object()
        if response.status not in (200, 201) or doc is None:
            error, description = _oauth_error(response)
            raise RegistrationError(f"registration at {_safe(ex.url.raw)} refused: HTTP "
                                    f"{response.status}" + (f" {error}" if error else "")
                                    + (f": {description}" if description else ""),
                                    error, description)
        client_id = doc.get("client_id")
        method = doc.get("token_endpoint_auth_method", "none")
        secret = doc.get("client_secret")
        if not isinstance(client_id, str) or not client_id:
            raise RegistrationError(f"registration at {_safe(ex.url.raw)} gave no client_id")
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            raise RegistrationError(f"registration at {_safe(ex.url.raw)} assigned the "
                                    f"unsupported token_endpoint_auth_method {str(method)[:60]!r}")
        if method != "none" and not (isinstance(secret, str) and secret):
            raise RegistrationError(f"registration at {_safe(ex.url.raw)} assigned {method} "
                                    "but no client_secret")
        assert self.issuer is not None
        self._sub(self.issuer)["client"] = {
            "client_id": client_id, "client_secret": secret if method != "none" else None,
            "method": method, "via": "dcr", "redirect_uri": self.config.redirect_uri}
        self._save()
        self._go("ok", now)

    # authorization code ---------------------------------------------------------------------

    def _resource(self) -> str:
        return self._prm.resource if self._prm is not None else self.key

    def _scope_request(self) -> list[str]:
        meta = self._as_meta or {}
        challenged = _scopes(None if self._challenge is None else self._challenge.get("scope"))
        if challenged:
            base = challenged
        elif self._prm is not None and self._prm.scopes_supported:
            base = _scopes(" ".join(self._prm.scopes_supported))
        else:
            base = []
        wanted = _union(self._requested, base, _scopes(self.config.scope))
        offered = _str_list(meta.get("scopes_supported")) or []
        grants = _str_list(meta.get("grant_types_supported"))
        if (self.config.offline_access and self.config.grant == "authorization_code"
                and "offline_access" in offered
                and (grants is None or "refresh_token" in grants)):
            wanted = _union(wanted, ["offline_access"])
        elif "offline_access" not in offered:
            wanted = [s for s in wanted if s != "offline_access"]
        return wanted

    def _enter_authorize(self, now: float) -> None:
        meta = self._as_meta or {}
        endpoint = self._check(meta.get("authorization_endpoint"),
                               "the authorization endpoint")
        client = self._client()
        assert client is not None
        self._verifier, challenge = pkce_pair(self._random(VERIFIER_BYTES))
        self._state_value = b64url(self._random(STATE_BYTES))
        scope = self._scope_request()
        self._requested = scope
        self._redirect_uri = self.config.redirect_uri
        params = [("response_type", "code"), ("client_id", client["client_id"]),
                  ("redirect_uri", self._redirect_uri), ("code_challenge", challenge),
                  ("code_challenge_method", "S256"), ("state", self._state_value),
                  ("resource", self._resource())]
        if scope:
            params.append(("scope", " ".join(scope)))
            if "offline_access" in scope:
                params.append(("prompt", "consent"))  # OpenID Connect needs it for refresh
        query = urlencode(params)
        url = endpoint.raw + ("&" if endpoint.query else "?") + query
        self._authorizations.append(now)
        self._deadline = self.user_wait_until = now + self.config.authorization_timeout
        self._events.append(RedirectRequired(url, self._redirect_uri, self._deadline))

    def _check_callback(self, url: str) -> str:
        """The code in a callback URL, after the RFC 9207 ``iss`` and ``state`` checks."""
        if not isinstance(url, str) or len(url) > 8192:
            raise CallbackRejected("the callback URL is not a string of at most 8 KiB")
        try:
            got = urlsplit(url.strip())
            want = urlsplit(self._redirect_uri)
            got_port, want_port = got.port, want.port
        except ValueError:
            raise CallbackRejected("the callback URL is malformed") from None
        same = ((got.scheme.lower(), (got.hostname or "").lower(), got.path or "/")
                == (want.scheme.lower(), (want.hostname or "").lower(), want.path or "/")
                # RFC 8252 section 7.3: a loopback redirect URI registered without a port
                # accepts any port.
                and (want_port is None or got_port == want_port))
        if not same:
            raise CallbackRejected(f"the callback is for {_safe(url)}, not the redirect URI "
                                   f"{_safe(self._redirect_uri)}")
        if got.fragment:
            raise CallbackRejected("the authorization response came in a fragment; only "
                                   "the query is accepted")
        pairs = parse_qsl(got.query, keep_blank_values=True)
        names = [k for k, _ in pairs]
        if len(set(names)) != len(names):
            raise CallbackRejected("the callback repeats a parameter")
        query = dict(pairs)
        meta = self._as_meta or {}
        iss = query.get("iss")
        if iss is not None and iss != self.issuer:
            raise CallbackRejected("the callback's iss is not the authorization server's "
                                   f"issuer {self.issuer!r} (RFC 9207 mix-up check); no token "
                                   "was requested")
        if iss is None and meta.get("authorization_response_iss_parameter_supported") is True:
            raise CallbackRejected("the authorization server promises iss in its responses "
                                   "(RFC 9207) and this callback has none; no token was "
                                   "requested")
        state = query.get("state")
        if state is None or not hmac.compare_digest(state.encode(), self._state_value.encode()):
            raise CallbackRejected("the callback's state is missing or not the one sent; no "
                                   "token was requested")
        if "error" in query:
            error = query["error"][:200]
            description = query.get("error_description", "")[:300]
            raise AuthorizationDenied(f"the authorization server answered {error}"
                                      + (f": {description}" if description else ""),
                                      error, description or None)
        code = query.get("code")
        if not code:
            raise CallbackRejected("the callback has no code")
        return code

    def _enter_code_token(self, now: float) -> None:
        client = self._client()
        assert client is not None
        form = {"grant_type": "authorization_code", "code": self._code,
                "redirect_uri": self._redirect_uri, "code_verifier": self._verifier,
                "resource": self._resource()}
        self._token_request("token", form, client, now)

    def _token_request(self, purpose: str, form: dict[str, str], client: dict[str, Any] | None,
                       now: float, url: str | None = None) -> None:
        meta = self._as_meta or {}
        endpoint = self._check(url or meta.get("token_endpoint"), "the token endpoint")
        headers: list[tuple[str, str]] = []
        if client is not None:
            self._client_auth(client, form, headers, now)
        if self.config.dpop is not None and url is None:
            headers.append(("DPoP", dpop_proof(
                self.config.dpop, method="POST", url=endpoint.without_query,
                now=now + self._wall, jti=self._jti(),
                nonce=self._dpop_nonces.get(endpoint.origin))))
        self._start(purpose, endpoint, now, method="POST", headers=headers, form=form)

    def _client_auth(self, client: dict[str, Any], form: dict[str, str],
                     headers: list[tuple[str, str]], now: float) -> None:
        method = client.get("method", "none")
        client_id = client["client_id"]
        secret = client.get("client_secret")
        if method == "client_secret_basic" and secret:
            pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
            headers.append(("Authorization", "Basic " + b64encode(pair.encode()).decode()))
        elif method == "client_secret_post" and secret:
            form["client_id"] = client_id
            form["client_secret"] = secret
        elif method == "private_key_jwt" and self.config.signer is not None:
            form["client_id"] = client_id
            form["client_assertion_type"] = _ASSERTION_TYPE
            form["client_assertion"] = client_assertion(
                self.config.signer, client_id=client_id, audience=self.issuer or "",
                now=now + self._wall, jti=self._jti())
        else:
            form["client_id"] = client_id

    def _on_token(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        error, description = _oauth_error(response)
        nonce = response.header("dpop-nonce")
        if (error == "use_dpop_nonce" and nonce and self.config.dpop is not None
                and not self._nonce_retried):
            self._dpop_nonces[ex.url.origin] = nonce
            self._nonce_retried = True
            self._go("nonce", now)
            return
        doc = response.json_object()
        if response.status != 200 or doc is None or error is not None:
            if ex.purpose == "refresh" and (error in ("invalid_grant", "invalid_token")
                                            or response.status in (400, 401)):
                self._refresh_failed = self.generation
                self.tokens = None
                assert self.issuer is not None
                self._sub(self.issuer).pop("tokens", None)
                self._save()
                if self.config.grant == "authorization_code" and (
                        not self.config.interactive or not self._may_authorize(now)):
                    raise TokenError("the refresh token was refused and authorizing again "
                                     "needs the user", error, description, response.status)
                self._go("invalid", now)
                return
            raise TokenError(f"{ex.purpose} request to {_safe(ex.url.raw)} refused: HTTP "
                             f"{response.status}" + (f" {error}" if error else "")
                             + (f": {description}" if description else ""),
                             error, description, response.status)
        if ex.purpose == "identity provider token exchange":
            jag = doc.get("access_token")
            if not isinstance(jag, str) or not jag:
                raise TokenError("the identity provider's token exchange gave no assertion")
            self._id_jag = jag
            self._go("ok", now)
            return
        self._install(doc, ex, now)
        self._last_token_purpose = ex.purpose
        self._go("ok", now)

    def _install(self, doc: dict[str, Any], ex: AuthExchange, now: float) -> None:
        access = doc.get("access_token")
        kind = doc.get("token_type")
        if not isinstance(access, str) or not _HEADER_SAFE.fullmatch(access):
            raise TokenError(f"the {ex.purpose} answer from {_safe(ex.url.raw)} has no usable "
                             "access_token")
        if not isinstance(kind, str) or kind.lower() not in (
                ("bearer", "dpop") if self.config.dpop is not None else ("bearer",)):
            raise TokenError(f"the {ex.purpose} answer from {_safe(ex.url.raw)} has token "
                             f"type {str(kind)[:40]!r}; only Bearer"
                             + (" or DPoP" if self.config.dpop is not None else "")
                             + " is used")
        expires_in = doc.get("expires_in")
        if isinstance(expires_in, str):
            try:
                expires_in = float(expires_in)
            except ValueError:
                expires_in = None
        expires_at = None
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            try:
                seconds = float(expires_in)
            except OverflowError:  # a 400-digit integer: "a very long time"
                seconds = MAX_TOKEN_LIFETIME
            if math.isfinite(seconds):
                lifetime = min(max(seconds, MIN_TOKEN_LIFETIME), MAX_TOKEN_LIFETIME)
                expires_at = now + self._wall + lifetime
        refresh = doc.get("refresh_token")
        if not (isinstance(refresh, str) and refresh):
            refresh = self.tokens.refresh_token if (
                ex.purpose == "refresh" and self.tokens is not None) else None
        scope = doc.get("scope")
        if not isinstance(scope, str):
            scope = (self.tokens.scope if ex.purpose == "refresh" and self.tokens is not None
                     else " ".join(self._requested) or None)
        self.tokens = Tokens(access, "DPoP" if kind.lower() == "dpop" else "Bearer",
                             expires_at, refresh, scope)
        assert self.issuer is not None
        self._record["issuer"] = self.issuer
        self._sub(self.issuer)["tokens"] = self.tokens.to_json()
        self._save()

    def _enter_refresh(self, now: float) -> None:
        tokens = self.tokens
        assert tokens is not None and tokens.refresh_token is not None
        assert self.issuer is not None
        sub = self._sub(self.issuer)
        stored = sub.get("meta")
        if self._as_meta is None and isinstance(stored, dict):
            self._as_meta = dict(stored)  # what an earlier run learned (a stored record)
        client = self._client()
        if self._as_meta is None or client is None:
            self._refresh_failed = self.generation  # nothing to refresh with: discover
            self._go("invalid", now)
            return
        resource = sub.get("resource")
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token,
                "resource": resource if isinstance(resource, str) else self._resource()}
        self._token_request("refresh", form, client, now)

    # machine grants ---------------------------------------------------------------------------

    def _enter_client_grant(self, now: float) -> None:
        form = {"grant_type": "client_credentials", "resource": self._resource()}
        scope = self._scope_request()
        self._requested = scope
        if scope:
            form["scope"] = " ".join(scope)
        self._token_request("token", form, self._client(), now)

    def _enter_idp_exchange(self, now: float) -> None:
        config = self.config
        assert config.idp_token_endpoint is not None and config.idp_id_token is not None
        form = {"grant_type": _TOKEN_EXCHANGE, "requested_token_type": _ID_JAG,
                "audience": self.issuer or "", "resource": self._resource(),
                "subject_token": config.idp_id_token, "subject_token_type": _ID_TOKEN}
        scope = self._scope_request()
        if scope:
            form["scope"] = " ".join(scope)
        idp_client = None
        if config.idp_client_id is not None:
            idp_client = {"client_id": config.idp_client_id,
                          "client_secret": config.idp_client_secret,
                          "method": "client_secret_basic" if config.idp_client_secret
                          else "none"}
        self._token_request("identity provider token exchange", form, idp_client, now,
                            url=config.idp_token_endpoint)

    def _enter_assertion_grant(self, now: float) -> None:
        if self.config.grant == "enterprise":
            assertion = self._id_jag
        else:
            source = self.config.assertion
            assertion = source(self.issuer or "") if callable(source) else str(source)
        form = {"grant_type": _JWT_BEARER, "assertion": assertion,
                "resource": self._resource()}
        scope = self._scope_request()
        self._requested = scope
        if scope:
            form["scope"] = " ".join(scope)
        client = self._client()
        self._token_request("token", form, client, now)

    # answers ----------------------------------------------------------------------------------

    def _on_response(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        handlers = {"protected resource metadata": self._on_prm,
                    "authorization server metadata": (self._on_legacy_metadata
                                                      if self.state == "legacy_metadata"
                                                      else self._on_as_metadata),
                    "registration": self._on_register}
        handler = handlers.get(ex.purpose, self._on_token)
        if 300 <= response.status < 400 and handler in (self._on_register, self._on_token):
            self._fail(TokenError(f"the {ex.purpose} endpoint {_safe(ex.url.raw)} redirected "
                                  f"(HTTP {response.status}); redirects are not followed",
                                  status=response.status) if handler == self._on_token
                       else RegistrationError(f"the registration endpoint {_safe(ex.url.raw)} "
                                              f"redirected (HTTP {response.status}); "
                                              "redirects are not followed"))
            return
        try:
            handler(ex, response, now)
        except AuthorizationError as exc:
            self._fail(exc)

    def _exchange_error(self, ex: AuthExchange, reason: str, now: float) -> None:
        what = f"{ex.purpose} at {_safe(ex.url.raw)}: {reason}"
        errors: dict[str, Callable[[str], AuthorizationError]] = {
            "protected resource metadata": DiscoveryError,
            "authorization server metadata": DiscoveryError,
            "registration": RegistrationError,
        }
        self._fail(errors.get(ex.purpose, TokenError)(what))

    # record -----------------------------------------------------------------------------------

    def _load(self, record: dict[str, Any] | None) -> dict[str, Any]:
        if not isinstance(record, dict) or record.get("version") != RECORD_VERSION \
                or record.get("resource") != self.key \
                or not isinstance(record.get("issuers"), dict):
            return {"version": RECORD_VERSION, "resource": self.key, "issuer": None,
                    "issuers": {}}
        issuer = record.get("issuer")
        return {"version": RECORD_VERSION, "resource": self.key,
                "issuer": issuer if isinstance(issuer, str) else None,
                "issuers": {k: dict(v) for k, v in record["issuers"].items()
                            if isinstance(k, str) and isinstance(v, dict)}}

    def _save(self) -> None:
        if self.issuer is not None and self._as_meta is not None:
            sub = self._sub(self.issuer)
            sub["meta"] = {k: v for k, v in self._as_meta.items()
                           if k in ("issuer", "token_endpoint", "authorization_endpoint",
                                    "registration_endpoint",
                                    "token_endpoint_auth_methods_supported",
                                    "authorization_response_iss_parameter_supported",
                                    "code_challenge_methods_supported", "scopes_supported",
                                    "grant_types_supported")}
            sub["resource"] = self._resource()
        record = {"version": RECORD_VERSION, "resource": self.key,
                  "issuer": self._record.get("issuer"),
                  "issuers": {k: dict(v) for k, v in self._record["issuers"].items()}}
        self._events.append(SaveRecord(self.key, record))

    def forget(self) -> None:
        """Drop every token and registration (``logout``); a :class:`SaveRecord` with an empty
        record follows."""
        self.tokens = None
        self.issuer = None
        self._record = self._load(None)
        self._events.append(SaveRecord(self.key, dict(self._record)))

    def _jti(self) -> str:
        return b64url(self._random(JTI_BYTES))
