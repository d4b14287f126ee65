"""What the authorization flow is told, and what it keeps: :class:`AuthConfig`, the tokens,
and the stored record (one per MCP server, keyed inside by issuer).

The record is plain JSON so any store can keep it::

    {"version": 1, "resource": "https://mcp.example.com/mcp", "issuer": "https://as.example",
     "issuers": {"https://as.example": {
         "client": {"client_id": "...", "client_secret": "...", "method": "none",
                    "via": "dcr", "redirect_uri": "http://127.0.0.1:53682/callback"},
         "tokens": {"access_token": "...", "token_type": "Bearer", "expires_at": 1767229200,
                    "refresh_token": "...", "scope": "files:read"}}}}

Credentials and tokens live under the issuer that gave them (SEP-2352): when the server
names another authorization server, its sub-record is used (or created) and the old one is
never read for it.  A pre-registered client secret is never written to the record; it comes
from the configuration each time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ._jwt import Signer

__all__ = [
    "DEFAULT_REDIRECT_URI",
    "GRANTS",
    "HEADER_SAFE",
    "MAX_CREDENTIAL_LENGTH",
    "MAX_TOKEN_LIFETIME",
    "MIN_TOKEN_LIFETIME",
    "RECORD_VERSION",
    "AuthConfig",
    "Tokens",
    "sendable",
]

#: The redirect URI of a redirect handler that does not say its own (RFC 8252 section 7.3:
#: loopback, any port; a handler that listens says its real one).
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"

#: The grants the flow runs: the authorization code with PKCE (a user), client credentials
#: (a secret or ``private_key_jwt``), a JWT bearer assertion (workload identity), and
#: enterprise-managed authorization (token exchange at the identity provider, then JWT bearer).
GRANTS = ("authorization_code", "client_credentials", "jwt_bearer", "enterprise")

#: An ``expires_in`` is clamped to [1 s, 1 year]: zero or negative would refresh on every
#: request, a huge value would overflow or keep a stale token forever.
MIN_TOKEN_LIFETIME = 1.0
MAX_TOKEN_LIFETIME = 365 * 24 * 3600.0

#: The format of the stored record; a record of another version is ignored (the flow starts
#: empty rather than misreading it).
RECORD_VERSION = 1

#: What an access token may hold to go in an ``Authorization`` header: visible ASCII (RFC 6750
#: b64token is narrower; real tokens are JWTs or opaque base64url).  Anything else would break
#: every request it is put on: refused from a token endpoint, ignored in a stored record.
HEADER_SAFE = re.compile(r"[\x21-\x7e]{1,16384}")

#: Characters of a client ID, a client secret or a refresh token kept, at most: 16 KiB,
#: like an access token (real ones are well under 1 KiB; the answer is 64 KiB at most).
MAX_CREDENTIAL_LENGTH = 16 * 1024


def sendable(value: object) -> bool:
    """Whether ``value`` can be sent as a client ID, client secret or refresh token: a
    non-empty string of at most :data:`MAX_CREDENTIAL_LENGTH` printable characters (RFC 6749
    appendix A wants printable ASCII; non-ASCII is form-encoded as UTF-8).  A control
    character or a lone surrogate (JSON allows ``"\\ud800"``) could not be encoded into the
    form or the Basic header, so every request carrying it would fail the same way.  Raises
    nothing."""
    return (isinstance(value, str) and 0 < len(value) <= MAX_CREDENTIAL_LENGTH
            and value.isprintable())


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """How to get tokens for one MCP server.  The bindings' ``OAuth`` and
    ``ClientCredentials`` build it; hosts rarely need it directly.  Secrets and signers never
    appear in its repr."""

    grant: str = "authorization_code"
    client_name: str = "mcp-proto"
    redirect_uri: str = DEFAULT_REDIRECT_URI
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    issuer: str | None = None
    """The authorization server the credentials belong to: the server's metadata must name
    it, else the flow stops (:class:`IssuerMismatch`) before sending them anywhere."""
    client_metadata_url: str | None = None
    scope: str | None = None
    """Scopes always asked for, beside what the server's challenge or metadata asks."""
    offline_access: bool = True
    """Ask for ``offline_access`` (a refresh token) when the authorization server lists it."""
    application_type: str | None = None
    """``native`` or ``web`` in dynamic registration; None: ``native`` for a loopback
    redirect URI, ``web`` otherwise."""
    token_endpoint_auth_method: str | None = None
    signer: Signer | None = field(default=None, repr=False)
    """``private_key_jwt``: signs the client assertion (ES256)."""
    assertion: str | Callable[[str], str] | None = field(default=None, repr=False)
    """``jwt_bearer``: the workload's JWT, or a function of the audience (the issuer)."""
    idp_token_endpoint: str | None = None
    idp_id_token: str | None = field(default=None, repr=False)
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    dpop: Signer | None = field(default=None, repr=False)
    """Bind tokens to this key with DPoP (RFC 9449)."""
    allow_http: bool = False
    """Allow plain http to hosts that are not loopback (never do this outside a lab)."""
    interactive: bool = True
    """False: never ask the user (a 401 with no usable token fails with
    :class:`AuthorizationRequired`); what ``mcp-proto tools --url`` uses."""
    authorization_timeout: float = 300.0
    exchange_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(GRANTS)}, got {self.grant!r}")
        if self.grant == "client_credentials" and not self.client_id:
            raise ValueError("client credentials need a client_id")
        if self.grant == "client_credentials" and not (self.client_secret or self.signer):
            raise ValueError("client credentials need a client_secret or a private key")
        if self.grant == "jwt_bearer" and self.assertion is None:
            raise ValueError("the jwt_bearer grant needs an assertion")
        if self.grant == "enterprise" and not (self.idp_token_endpoint and self.idp_id_token):
            raise ValueError("enterprise-managed authorization needs the identity provider's "
                             "token endpoint and an ID token")
        if not (self.authorization_timeout > 0 and self.exchange_timeout > 0):
            raise ValueError("timeouts must be positive")
        url = self.client_metadata_url
        if url is not None:  # R18: the client ID of a metadata document is such a URL
            parts = urlsplit(url) if isinstance(url, str) else None
            if parts is None or parts.scheme != "https" or not parts.hostname \
                    or parts.path in ("", "/") or parts.fragment or parts.username:
                raise ValueError("client_metadata_url must be an https URL with a path (and "
                                 f"no fragment or credentials), got {str(url)[:100]!r}")


@dataclass(frozen=True, slots=True)
class Tokens:
    """An access token and what came with it.  ``expires_at`` is wall-clock seconds (None:
    the server did not say; refreshed only when refused)."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None
    issued_at: float | None = None
    """Wall-clock seconds when it was issued (None: not known, a record of an older run)."""

    def to_json(self) -> dict[str, Any]:
        return {"access_token": self.access_token, "token_type": self.token_type,
                "expires_at": self.expires_at, "refresh_token": self.refresh_token,
                "scope": self.scope, "issued_at": self.issued_at}

    @classmethod
    def from_json(cls, obj: object) -> Tokens | None:
        """The tokens of a stored record, or None if it holds none usable."""
        if not isinstance(obj, Mapping):
            return None
        access = obj.get("access_token")
        kind = obj.get("token_type", "Bearer")
        expires = obj.get("expires_at")
        refresh = obj.get("refresh_token")
        scope = obj.get("scope")
        if not isinstance(access, str) or not HEADER_SAFE.fullmatch(access) \
                or not isinstance(kind, str):
            return None
        if isinstance(expires, bool) or not isinstance(expires, (int, float)):
            expires = None
        else:
            try:
                expires = float(expires)
            except OverflowError:
                expires = None
            if expires is not None and not math.isfinite(expires):
                expires = None
        issued = obj.get("issued_at")
        if isinstance(issued, bool) or not isinstance(issued, (int, float)) \
                or not (expires is not None and -1e12 < issued <= expires):
            issued = None
        return cls(access, kind, None if expires is None else float(expires),
                   refresh if sendable(refresh) else None,
                   scope if isinstance(scope, str) else None,
                   None if issued is None else float(issued))
