"""The authorization flow's states and limits, as data: the transition table every
procedure follows (and the diagram in docs is drawn from), and each bound with its reason.
"""

from __future__ import annotations

__all__ = [
    "AUTHORIZATION_WINDOW",
    "IDP_EXCHANGE",
    "JTI_BYTES",
    "KINDS",
    "MAX_AUTHORIZATIONS_PER_WINDOW",
    "MAX_STEP_UPS_PER_SCOPE",
    "REFRESH_SKEW",
    "STATE_BYTES",
    "TRANSITIONS",
    "VERIFIER_BYTES",
]

#: Seconds before expiry at which a token is refreshed instead of sent: a request must not
#: arrive with a token that expires on the way (clocks differ by a few seconds).
REFRESH_SKEW = 60.0

#: Step-up authorizations for one set of scopes.  The spec says to retry "no more than a few
#: times": a server that keeps answering 403 for scopes the user was just granted fails the
#: call with :class:`InsufficientScope` instead of opening the browser forever.
MAX_STEP_UPS_PER_SCOPE = 2

#: Interactive authorizations per :data:`AUTHORIZATION_WINDOW` seconds per client (shared by its
#: connections): a
#: server that refuses every fresh token must not open a browser on every call (the official
#: SDKs bound retries only per request).  Beyond it, calls fail fast until ``reauthorize``.
MAX_AUTHORIZATIONS_PER_WINDOW = 3
AUTHORIZATION_WINDOW = 600.0

#: Random bytes in ``state`` (RFC 9700 section 4.7: at least 128 bits), in the PKCE
#: verifier (RFC 7636 section 7.1: 256 bits gives a 43-character verifier) and in each
#: JWT ``jti`` (unique per assertion and DPoP proof: 128 bits never collide).
STATE_BYTES = 16
VERIFIER_BYTES = 32
JTI_BYTES = 16

#: The purpose of the enterprise flow's first request (it carries no DPoP proof).
IDP_EXCHANGE = "identity provider token exchange"

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
