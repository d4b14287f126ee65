"""The authorization procedure: one server's authorization state, and what each state does.

:class:`AuthProcedure` holds the data of a server's authorization (the stored record, the
tokens in use, the discovery and the procedure in progress) and runs the procedure through the
states of :data:`~._states.TRANSITIONS`: each ``_enter_<state>`` starts that state's
exchange (or user step), each ``_on_<answer>`` classifies its answer into an outcome, and
:meth:`AuthProcedure._go` follows the table.  :class:`~._flow.OAuthFlow` is its face:
what the HTTP layer and the binding call.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from .._auth_errors import (
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    DiscoveryError,
    InsufficientScope,
    PkceUnsupported,
    RegistrationError,
    TokenError,
)
from ._challenge import Challenge
from ._config import (
    AuthConfig,
    Tokens,
)
from ._discovery import (
    ProtectedResource,
    default_endpoints,
    parse_as_metadata,
    parse_prm,
    pick_issuer,
    prm_urls,
)
from ._events import AuthEvent, Authorized, RedirectRequired, SaveRecord
from ._exchange import AuthExchange, AuthResponse
from ._grants import (
    JWT_BEARER,
    authorization_url,
    idp_client,
    scope_request,
    token_exchange_form,
    with_scope,
)
from ._jwt import b64url, dpop_proof, pkce_pair
from ._record import AuthRecord
from ._states import (
    AUTHORIZATION_WINDOW,
    IDP_EXCHANGE,
    JTI_BYTES,
    MAX_AUTHORIZATIONS_PER_WINDOW,
    MAX_STEP_UPS_PER_SCOPE,
    STATE_BYTES,
    TRANSITIONS,
    VERIFIER_BYTES,
)
from ._steps import (
    check_callback,
    client_authentication,
    oauth_error,
    parse_registration,
    parse_tokens,
    registration_body,
    safe_url,
    scope_tokens,
    scope_union,
    str_list,
)
from ._urls import (
    AuthUrl,
    as_metadata_candidates,
    canonical_resource,
    check_url,
    legacy_metadata_url,
    parse_auth_url,
)

__all__ = ["AuthProcedure"]


def _unexpected(exc: Exception, state: str) -> AuthorizationError:
    """A failure that is not the protocol's (the host's assertion callable, a signer): the
    waiting calls fail with it, named, and the flow is idle again."""
    error = AuthorizationError(f"authorization failed in {state}: {type(exc).__name__}: "
                               f"{str(exc)[:200]}")
    error.__cause__ = exc
    return error



class AuthProcedure:
    """The state of one MCP server's authorization and the procedure's steps (see
    :class:`~._flow.OAuthFlow` for the arguments)."""

    def __init__(self, config: AuthConfig, server_url: str, *,
                 random_bytes: Callable[[int], bytes], wall_offset: float = 0.0,
                 mcp_zone: str = "public", record: dict[str, Any] | None = None,
                 authorizations: list[float] | None = None,
                 serials: Callable[[], int] | None = None) -> None:
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
        self._record = AuthRecord(self.key, record)
        self.issuer: str | None = self._record.issuer
        self.tokens: Tokens | None = None
        if self.issuer is not None:
            self.tokens = self._record.tokens(self.issuer)
        if self.tokens is not None and config.issuer is not None \
                and self.issuer != config.issuer:
            self.tokens = None  # another authorization server's token: never sent
        self._events: list[AuthEvent] = []
        self._starting: list[AuthExchange] = []
        self._aborting: list[int] = []
        self._exchange: AuthExchange | None = None
        self._next_id = 1
        self._deadline: float | None = None  # the user step's
        self._attempt = 0  # numbers the user steps (RedirectRequired.attempt)
        # Numbers the records given (SaveRecord.serial); a binding shares one counter between
        # a client's flows, so a later connection's records are always newer.
        self._serials = serials if serials is not None else itertools.count(1).__next__
        self._client_retried = False  # invalid_client on a stored registration: once
        self._dpop_nonces: dict[tuple[str, str, int], str] = {}
        self._nonce_retried = False
        self._refresh_failed: int | None = None  # generation whose refresh was refused
        self._refreshed: int | None = None  # generation a refresh gave (refused: discover)
        self._proactive: int | None = None  # generation refreshed before expiry (once)
        self._ahead = False  # the procedure running is a refresh before expiry
        # When each interactive authorization started: a list the binding may share between
        # the flows of one client's connections, so reconnecting does not reset the bound.
        self._authorizations: list[float] = [] if authorizations is None else authorizations
        self._step_ups: dict[frozenset[str], int] = {}
        # discovery and the procedure in progress
        self._challenge: Challenge | None = None
        self._prm: ProtectedResource | None = None
        self._prm_candidates: list[str] = []
        self._as_candidates: list[str] = []
        self._as_meta: dict[str, Any] | None = None
        self._requested: list[str] = []
        self._verifier = ""
        self._state_value = ""
        self._redirect_uri = config.redirect_uri
        self._id_jag = ""
        self._code = ""
        self._last_token_purpose = ""

    # -- the procedure ------------------------------------------------------------------------

    def _begin(self, outcome: str, kind: str, now: float, *, ahead: bool = False) -> None:
        self._ahead = ahead
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
        if state in ("register", "authorize") and not self.config.interactive \
                and self.config.grant == "authorization_code":
            self._fail(AuthorizationRequired(
                f"{safe_url(self.server_url)} needs a new authorization and this client may "
                f"not ask the user (run: mcp-proto login --url {safe_url(self.server_url)})"))
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
        except Exception as exc:  # a host callable or a signer raised: never stuck busy
            self._fail(_unexpected(exc, state))

    def _done(self) -> None:
        refreshed = self.kind == "refresh" and self._last_token_purpose == "refresh"
        self._ahead = False
        self.state = "idle"
        self.kind = None
        self.generation += 1
        self._refreshed = self.generation if refreshed else None
        tokens = self.tokens
        assert tokens is not None and self.issuer is not None
        self._events.append(Authorized(self.issuer, tokens.scope, tokens.expires_at))

    def _fail(self, error: AuthorizationError) -> None:
        # A refresh before expiry that failed for a network reason leaves the token in use:
        # what waited for it goes out with that token, it does not fail.
        harmless = self._ahead and self.tokens is not None
        self._ahead = False
        self._starting.clear()  # at most one exchange per procedure: none is left to carry
        if self._exchange is not None:
            self._aborting.append(self._exchange.id)
            self._exchange = None
        self.state = "idle"
        self.kind = None
        self._deadline = None
        self.error = error
        if not harmless:
            self.failures += 1

    def _refuse(self, error: AuthorizationError) -> str:
        self.error = error
        return "failed"

    def _may_authorize(self, now: float) -> bool:
        self._authorizations[:] = [t for t in self._authorizations
                                   if t > now - AUTHORIZATION_WINDOW]
        return len(self._authorizations) < MAX_AUTHORIZATIONS_PER_WINDOW

    def _step_up(self, challenge: Challenge | None, now: float) -> str:
        challenged = scope_tokens(None if challenge is None else challenge.get("scope"))
        granted = scope_tokens(None if self.tokens is None else self.tokens.scope)
        wanted = frozenset(scope_union(self._requested, granted, challenged))
        count = self._step_ups.get(wanted, 0)
        if count >= MAX_STEP_UPS_PER_SCOPE or (
                self.config.grant == "authorization_code" and not self._may_authorize(now)):
            return self._refuse(InsufficientScope(
                f"{safe_url(self.server_url)} still answers 403 insufficient_scope after "
                f"{count} step-up authorizations for {' '.join(sorted(wanted)) or 'no scope'}",
                scope=None if challenge is None else challenge.get("scope")))
        self._step_ups[wanted] = count + 1
        self._requested = scope_union(self._requested, granted, challenged)
        self.kind = "step_up"
        self.error = None
        self._nonce_retried = False
        header = None if challenge is None else challenge.get("resource_metadata")
        if self._as_meta is None or (header is not None and self._prm is not None
                                     and header != self._prm.url):
            self._go("challenge", now)  # the 403 names other resource metadata: discover
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
        self._prm_candidates = prm_urls(self.server_url, self._server.origin, self._challenge)

    def _enter_prm(self, now: float) -> None:
        url = self._prm_candidates.pop(0)
        self._start("protected resource metadata", self._check(url, "resource metadata URL"),
                    now, headers=self._discovery_headers())

    def _on_prm(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        prm = parse_prm(response, ex.url.raw, self.server_url)
        if prm is None:
            self._go("next" if self._prm_candidates else "exhausted", now)
            return
        self._prm = prm
        issuer = pick_issuer(prm.authorization_servers, self.config.issuer,
                             self._record.issuers)
        self._use_issuer(issuer)
        self._as_candidates = as_metadata_candidates(issuer)
        self._go("found", now)

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
        assert self.issuer is not None
        doc = parse_as_metadata(response, ex.url.raw, self.issuer)
        if doc is None:
            if self._as_candidates:
                self._go("next", now)
                return
            raise DiscoveryError("no authorization server metadata for "
                                 f"{safe_url(self.issuer)} (RFC 8414 and OpenID discovery "
                                 "URLs all refused)")
        self._as_meta = doc
        self._go("found", now)

    def _enter_legacy_metadata(self, now: float) -> None:
        self._prm = None
        self._use_issuer(f"{self._server.scheme}://{self._server.authority}")
        self._start("authorization server metadata",
                    self._check(legacy_metadata_url(self.server_url),
                                "authorization server metadata URL"),
                    now, headers=self._discovery_headers())

    def _on_legacy_metadata(self, ex: AuthExchange, response: AuthResponse,
                            now: float) -> None:
        assert self.issuer is not None
        doc = parse_as_metadata(response, ex.url.raw, self.issuer)
        if doc is None:  # 2025-03-26: the default endpoints on the server's origin
            self._as_meta = default_endpoints(self.server_url, self.issuer)
            self._go("missing", now)
            return
        self._as_meta = doc
        self._go("found", now)

    # client identity ------------------------------------------------------------------------

    def _client(self, *, for_authorization: bool = False) -> dict[str, Any] | None:
        assert self.issuer is not None
        return self._record.client(self.issuer, self.config,
                                   for_authorization=for_authorization)

    def _enter_client(self, now: float) -> None:
        meta = self._as_meta or {}
        config = self.config
        grant = config.grant
        if grant == "authorization_code":
            methods = str_list(meta.get("code_challenge_methods_supported")) or []
            if "S256" not in methods:
                raise PkceUnsupported(f"{safe_url(self.issuer or '')} does not advertise PKCE "
                                      "with S256 (code_challenge_methods_supported); "
                                      "refusing to authorize without it")
            # Refuse an unusable endpoint now, not after the user went through the browser.
            self._check(meta.get("authorization_endpoint"), "the authorization endpoint")
        self._check(meta.get("token_endpoint"), "the token endpoint")
        assert self.issuer is not None
        usable = self._client(for_authorization=grant == "authorization_code")
        if usable is None and not self._record.adopt_client(self.issuer, self.config, meta):
            if grant == "jwt_bearer":
                self._go(grant, now)  # a workload assertion may stand alone
                return
            if grant != "authorization_code":
                raise RegistrationError("no client credentials for "
                                        f"{safe_url(self.issuer or '')}")
            if not isinstance(meta.get("registration_endpoint"), str):
                raise RegistrationError(
                    f"{safe_url(self.issuer or '')} offers no registration endpoint and no "
                    "client ID metadata documents, and no client_id is configured for it")
            self._go("register", now)
            return
        self._go("code" if grant == "authorization_code" else grant, now)

    def _enter_register(self, now: float) -> None:
        meta = self._as_meta or {}
        self._start("registration", self._check(meta.get("registration_endpoint"),
                                                "the registration endpoint"),
                    now, method="POST",
                    json_body=registration_body(self.config, meta, self._scope_request()))

    def _on_register(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        asked = registration_body(self.config, self._as_meta or {})
        client = parse_registration(response, ex.url.raw, self.config.redirect_uri,
                                    asked["token_endpoint_auth_method"])
        assert self.issuer is not None
        self._record.set_client(self.issuer, client)
        self._save()
        self._go("ok", now)

    # authorization code ---------------------------------------------------------------------

    def _resource(self) -> str:
        """RFC 8707 ``resource``: the resource metadata's, verbatim; else what an earlier run
        stored with the tokens; else (no metadata: 2025-03-26) the canonical server URL."""
        if self._prm is not None:
            return self._prm.resource
        stored = None if self.issuer is None else self._record.resource(self.issuer)
        return stored or self.key

    def _scope_request(self) -> list[str]:
        return scope_request(
            self.config, self._as_meta or {},
            None if self._challenge is None else self._challenge.get("scope"),
            None if self._prm is None else self._prm.scopes_supported, self._requested)

    def _enter_authorize(self, now: float) -> None:
        meta = self._as_meta or {}
        endpoint = self._check(meta.get("authorization_endpoint"),
                               "the authorization endpoint")
        if not self._may_authorize(now):  # also on the way from a refused refresh
            raise AuthorizationRejected(
                f"{safe_url(self.server_url)} needed {MAX_AUTHORIZATIONS_PER_WINDOW} "
                f"authorizations within {AUTHORIZATION_WINDOW:.0f} s; not asking the user "
                "again until reauthorize()")
        client = self._client(for_authorization=True)
        assert client is not None
        self._verifier, challenge = pkce_pair(self._random(VERIFIER_BYTES))
        self._state_value = b64url(self._random(STATE_BYTES))
        scope = self._scope_request()
        self._requested = scope
        self._redirect_uri = self.config.redirect_uri
        url = authorization_url(endpoint.raw, bool(endpoint.query),
                                client_id=client["client_id"],
                                redirect_uri=self._redirect_uri, challenge=challenge,
                                state=self._state_value, resource=self._resource(),
                                scope=scope)
        self._authorizations.append(now)
        self._deadline = now + self.config.authorization_timeout
        self._attempt += 1
        self._events.append(RedirectRequired(url, self._redirect_uri, self._deadline,
                                             self._attempt))

    def _check_callback(self, url: str) -> str:
        meta = self._as_meta or {}
        return check_callback(
            url, redirect_uri=self._redirect_uri, state=self._state_value, issuer=self.issuer,
            iss_advertised=meta.get("authorization_response_iss_parameter_supported") is True)

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
        client_authentication(client, form, headers, signer=self.config.signer,
                              audience=self.issuer or "", wall_now=now + self._wall,
                              jti=self._jti())

    def _on_token(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        error, description = oauth_error(response)
        nonce = response.header("dpop-nonce")
        if (error == "use_dpop_nonce" and nonce and self.config.dpop is not None
                and ex.purpose != IDP_EXCHANGE and not self._nonce_retried):
            self._dpop_nonces[ex.url.origin] = nonce
            self._nonce_retried = True
            self._go("nonce", now)
            return
        doc = response.json_object()
        if response.status != 200 or doc is None or error is not None:
            if ex.purpose == "refresh" and error == "invalid_client" and self.issuer is not None:
                client = self._client()
                if client is not None and client.get("via") == "dcr":
                    # The authorization server forgot this registration: the discovery the
                    # refused refresh leads to registers again.
                    self._record.sub(self.issuer).pop("client", None)
            if ex.purpose == "refresh" and (error in ("invalid_grant", "invalid_token",
                                                      "invalid_client")
                                            or response.status in (400, 401)):
                self._refresh_failed = self.generation
                self.tokens = None
                assert self.issuer is not None
                self._record.drop_tokens(self.issuer)
                self._save()
                if self.config.grant == "authorization_code" and (
                        not self.config.interactive or not self._may_authorize(now)):
                    raise TokenError("the refresh token was refused and authorizing again "
                                     "needs the user", error, description, response.status)
                self._go("invalid", now)
                return
            client = self._client() if self.issuer is not None else None
            if (error == "invalid_client" and ex.purpose == "token" and not self._client_retried
                    and client is not None and client.get("via") == "dcr"
                    and self.config.grant == "authorization_code"):
                # The authorization server forgot this registration: register again, once.
                self._client_retried = True
                assert self.issuer is not None
                self._record.sub(self.issuer).pop("client", None)
                self._save()
                raise TokenError("the authorization server no longer knows this client "
                                 "(invalid_client); it registers again at the next "
                                 "authorization", error, description, response.status)
            raise TokenError(f"{ex.purpose} request to {safe_url(ex.url.raw)} refused: HTTP "
                             f"{response.status}" + (f" {error}" if error else "")
                             + (f": {description}" if description else ""),
                             error, description, response.status)
        if ex.purpose == IDP_EXCHANGE:
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
        self.tokens = parse_tokens(
            doc, what=f"{ex.purpose} answer from {safe_url(ex.url.raw)}",
            dpop=self.config.dpop is not None, wall_now=now + self._wall,
            previous=self.tokens if ex.purpose == "refresh" else None,
            requested=self._requested)
        assert self.issuer is not None
        self._record.set_tokens(self.issuer, self.tokens)
        self._save()

    def _enter_refresh(self, now: float) -> None:
        tokens = self.tokens
        assert tokens is not None and tokens.refresh_token is not None
        assert self.issuer is not None
        if self._as_meta is None:  # what an earlier run learned (a stored record)
            self._as_meta = self._record.metadata(self.issuer)
        client = self._client()
        if self._as_meta is None or client is None:
            self._refresh_failed = self.generation  # nothing to refresh with: discover
            self._go("invalid", now)
            return
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token,
                "resource": self._record.resource(self.issuer) or self._resource()}
        self._token_request("refresh", form, client, now)

    # machine grants ---------------------------------------------------------------------------

    def _enter_client_grant(self, now: float) -> None:
        self._requested = self._scope_request()
        form = with_scope({"grant_type": "client_credentials", "resource": self._resource()},
                          self._requested)
        self._token_request("token", form, self._client(), now)

    def _enter_idp_exchange(self, now: float) -> None:
        assert self.config.idp_token_endpoint is not None
        form = token_exchange_form(self.config, audience=self.issuer or "",
                                   resource=self._resource(), scope=self._scope_request())
        self._token_request(IDP_EXCHANGE, form, idp_client(self.config), now,
                            url=self.config.idp_token_endpoint)

    def _enter_assertion_grant(self, now: float) -> None:
        if self.config.grant == "enterprise":
            assertion = self._id_jag
        else:
            source = self.config.assertion
            assertion = source(self.issuer or "") if callable(source) else str(source)
        self._requested = self._scope_request()
        form = with_scope({"grant_type": JWT_BEARER, "assertion": assertion,
                           "resource": self._resource()}, self._requested)
        self._token_request("token", form, self._client(), now)

    # answers ----------------------------------------------------------------------------------

    def _on_response(self, ex: AuthExchange, response: AuthResponse, now: float) -> None:
        handlers = {"protected resource metadata": self._on_prm,
                    "authorization server metadata": (self._on_legacy_metadata
                                                      if self.state == "legacy_metadata"
                                                      else self._on_as_metadata),
                    "registration": self._on_register}
        handler = handlers.get(ex.purpose, self._on_token)
        if 300 <= response.status < 400 and handler in (self._on_register, self._on_token):
            self._fail(TokenError(f"the {ex.purpose} endpoint {safe_url(ex.url.raw)} redirected "
                                  f"(HTTP {response.status}); redirects are not followed",
                                  status=response.status) if handler == self._on_token
                       else RegistrationError(f"the registration endpoint {safe_url(ex.url.raw)} "
                                              f"redirected (HTTP {response.status}); "
                                              "redirects are not followed"))
            return
        try:
            handler(ex, response, now)
        except AuthorizationError as exc:
            self._fail(exc)
        except Exception as exc:  # a host callable or a signer raised: never stuck busy
            self._fail(_unexpected(exc, self.state))

    def _exchange_error(self, ex: AuthExchange, reason: str, now: float) -> None:
        what = f"{ex.purpose} at {safe_url(ex.url.raw)}: {reason}"
        errors: dict[str, Callable[[str], AuthorizationError]] = {
            "protected resource metadata": DiscoveryError,
            "authorization server metadata": DiscoveryError,
            "registration": RegistrationError,
        }
        self._fail(errors.get(ex.purpose, TokenError)(what))

    # record -----------------------------------------------------------------------------------

    def _save(self) -> None:
        if self.issuer is not None and self._as_meta is not None:
            self._record.remember(self.issuer, self._as_meta, self._resource())
        self._events.append(SaveRecord(self.key, self._record.snapshot(), self._serials()))

    def _jti(self) -> str:
        return b64url(self._random(JTI_BYTES))
