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
state with no entry for an outcome fails the procedure with that state's error.  What each
state does is in :mod:`._procedure` (the base of :class:`OAuthFlow`); this module is the
face: what the HTTP layer asks and what the binding does for the flow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._auth_errors import (
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
)
from ._challenge import Challenge, oauth_challenge, parse_www_authenticate
from ._events import AuthEvent, Authorized, AuthStatus, RedirectRequired, SaveRecord
from ._exchange import AuthExchange, AuthResponse
from ._jwt import dpop_proof
from ._procedure import AuthProcedure
from ._record import AuthRecord
from ._states import (
    AUTHORIZATION_WINDOW,
    KINDS,
    MAX_AUTHORIZATIONS_PER_WINDOW,
    MAX_STEP_UPS_PER_SCOPE,
    REFRESH_SKEW,
    TRANSITIONS,
)
from ._steps import (
    safe_url,
)
from ._urls import (
    address_allowed,
)

__all__ = [
    "AUTHORIZATION_WINDOW",
    "KINDS",
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


class OAuthFlow(AuthProcedure):
    """The authorization state of one MCP server connection.

    ``config`` says how to get tokens, ``server_url`` is the MCP endpoint, ``record`` what a
    store kept from earlier runs (None: nothing).  ``random_bytes(n)`` must return ``n``
    bytes from a cryptographic source.  ``wall_offset`` is added to ``now`` (the binding's
    monotonic clock) to get wall-clock seconds for token expiry and JWTs.  ``mcp_zone`` is the
    address zone of the MCP server's host (see :func:`address_zone`): discovery requests may
    go to private addresses only when the server itself is on one.
    """

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
        """Whether the token expires within :data:`REFRESH_SKEW` (or half its lifetime, for a
        short-lived one) and can be refreshed: the HTTP layer then holds new requests and
        calls :meth:`start_refresh`.  At most once per token: a refresh that failed for a
        network reason is tried again only when the server refuses the old token."""
        tokens = self.tokens
        if (self.busy or tokens is None or tokens.refresh_token is None
                or tokens.expires_at is None
                or self.generation in (self._refresh_failed, self._proactive)):
            return False
        skew = REFRESH_SKEW
        if tokens.issued_at is not None:
            skew = min(skew, (tokens.expires_at - tokens.issued_at) / 2)
        return tokens.expires_at - skew <= now + self._wall

    def start_refresh(self, now: float) -> None:
        """Refresh the token before it expires (requests sent meanwhile wait)."""
        if self.needs_refresh(now):
            self._proactive = self.generation
            self._begin("refresh", "refresh", now, ahead=True)

    def on_challenge(self, status: int, www_authenticate: Sequence[str],
                     dpop_nonce: str | None, generation: int, now: float,
                     allowed: Callable[[str], bool] | None = None) -> str:
        """An MCP request sent with token ``generation`` was answered ``status`` (401 or 403)
        with these ``WWW-Authenticate`` values.  Returns what the request waits for, one of
        :data:`KINDS` (the HTTP layer counts them per request and holds the request until the
        flow is idle again), ``ignore`` (a 403 that is not about scope: an ordinary error),
        or ``failed`` (the request fails now with :attr:`error`).  ``allowed(kind)`` says
        whether the request may still wait for a procedure of that kind (its retry budget);
        when it may not, nothing is started for it."""
        kind = self._on_challenge(status, www_authenticate, dpop_nonce, generation, now,
                                  allowed)
        if kind in ("refresh", "authorize", "step_up") and not self.busy \
                and self.error is not None:
            return "failed"  # the procedure failed before it sent anything
        return kind

    def _on_challenge(self, status: int, www_authenticate: Sequence[str],
                      dpop_nonce: str | None, generation: int, now: float,
                      allowed: Callable[[str], bool] | None) -> str:
        """The decision of :meth:`on_challenge`."""
        challenges = parse_www_authenticate(www_authenticate)
        challenge = oauth_challenge(challenges, dpop=self.config.dpop is not None)
        if challenge is None and challenges:  # R19: only Bearer and DPoP drive OAuth
            if status == 403:
                return "ignore"
            schemes = ", ".join(sorted({c.scheme for c in challenges}))[:100]
            return self._refuse(AuthorizationRequired(
                f"{safe_url(self.server_url)} asks for {schemes} authentication, not OAuth "
                "(pass the credentials it wants as headers)"))
        error = challenge.get("error") if challenge is not None else None
        if status == 403 and error != "insufficient_scope":
            return "ignore"
        if (error == "use_dpop_nonce" and dpop_nonce and self.config.dpop is not None
                and challenge is not None and challenge.scheme == "dpop"):
            self._dpop_nonces[self._server.origin] = dpop_nonce
            return "nonce"
        if self.busy:
            if status == 401 and generation == self.generation:
                self._ahead = False  # the token is refused: the refresh is no longer optional
            return self.kind or "authorize"  # join the procedure in progress
        if generation < self.generation:
            return "retry"  # sent with an older token; a newer one is in use
        tokens = self.tokens
        refresh = (status == 401 and tokens is not None and tokens.refresh_token is not None
                   and self.generation not in (self._refresh_failed, self._refreshed))
        kind = "step_up" if status == 403 else "refresh" if refresh else "authorize"
        permitted = allowed is None or allowed(kind)
        if status == 401 and (kind == "authorize" or not permitted):
            self._drop_refused_token()
        if not permitted:
            return self._refuse(AuthorizationRejected(
                f"{safe_url(self.server_url)} refused the token it was just given (HTTP "
                f"{status}); not retrying"))
        self._challenge = challenge
        self.error = None
        if status == 403:
            return self._step_up(challenge, now)
        if refresh:
            self._begin("refresh", "refresh", now)
            return "refresh"
        self._drop_refused_token()
        if not self.config.interactive and self.config.grant == "authorization_code":
            return self._refuse(AuthorizationRequired(
                f"{safe_url(self.server_url)} needs authorization and no usable token is stored "
                f"(run: mcp-proto login --url {safe_url(self.server_url)})"))
        if self.config.grant == "authorization_code" and not self._may_authorize(now):
            return self._refuse(AuthorizationRejected(
                f"{safe_url(self.server_url)} refused {MAX_AUTHORIZATIONS_PER_WINDOW} fresh "
                f"authorizations within {AUTHORIZATION_WINDOW:.0f} s; not asking the user "
                "again until reauthorize()"))
        self._begin("challenge", "authorize", now)
        return "authorize"

    def _drop_refused_token(self) -> None:
        """The server refused the token in use: it is never sent again, nor kept."""
        if self.tokens is not None and self.issuer is not None:
            self._record.drop_tokens(self.issuer)
            self._save()
        self.tokens = None

    @property
    def refreshing(self) -> bool:
        """Whether the exchange in flight is a refresh: the binding then offers what the
        store holds (:meth:`offer_record`) before carrying it."""
        return self.state == "refresh"

    def offer_record(self, record: object, *, now: float) -> bool:
        """What the store holds now, just before a refresh request goes out: if another
        process already refreshed (the stored refresh token is not the one about to be
        used), its tokens are taken instead and the refresh is not sent (a rotated refresh
        token is good only once).  True: the refresh exchange was withdrawn; the binding
        must not carry it."""
        if not self.refreshing or self.issuer is None or self.tokens is None:
            return False
        stored = AuthRecord(self.key, record).tokens(self.issuer)
        if stored is None or stored.refresh_token in (None, self.tokens.refresh_token) \
                or stored.access_token == self.tokens.access_token:
            return False
        if stored.expires_at is not None and stored.expires_at <= now + self._wall:
            return False
        mine = self.tokens.issued_at or self.tokens.expires_at
        theirs = stored.issued_at or stored.expires_at
        if mine is not None and (theirs is None or theirs <= mine):
            return False  # not newer than what this flow holds
        self._starting.clear()
        self._exchange = None
        self.tokens = stored
        self._record.set_tokens(self.issuer, stored)
        self._last_token_purpose = "stored"
        self._done()
        return True

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

    def receive_callback(self, url: str, *, now: float, attempt: int | None = None) -> None:
        """The URL the browser was sent back to after the authorization request.  With
        ``attempt`` (:attr:`RedirectRequired.attempt`), an answer to an earlier attempt (a
        handler that outlived it) is ignored."""
        if self.state != "authorize" or attempt not in (None, self._attempt):
            return
        self._deadline = None
        try:
            code = self._check_callback(url)
        except AuthorizationError as exc:
            self._fail(exc)
            return
        self._code = code
        self._go("callback", now)

    def callback_failed(self, error: AuthorizationError | str, *, now: float,
                        attempt: int | None = None) -> None:
        """The redirect handler could not deliver a callback (it raised, the user gave up);
        ``attempt`` as for :meth:`receive_callback`."""
        if self.state != "authorize" or attempt not in (None, self._attempt):
            return
        self._deadline = None
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
            self._deadline = None
            self._fail(AuthorizationError(
                f"no authorization within {self.config.authorization_timeout:g} s (the user "
                "did not complete it)"))

    def forget(self) -> None:
        """Drop every token and registration (``logout``); a :class:`SaveRecord` with an empty
        record follows."""
        self.tokens = None
        self.issuer = None
        self._record.forget()
        self._events.append(SaveRecord(self.key, self._record.snapshot(), self._serials()))
