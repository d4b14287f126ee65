"""The errors of authorization (OAuth 2.1, section 11 of the checklist).

Every one is an :class:`AuthorizationError`, so a host catches them all at once.  Messages
name what was wrong (which URL, which field, which check) and never carry a token, a client
secret, an authorization code or a refresh token: those are never put into an error at all.
"""

from __future__ import annotations

from ._errors import MCPError

__all__ = [
    "AuthorizationDenied",
    "AuthorizationError",
    "AuthorizationRejected",
    "AuthorizationRequired",
    "CallbackRejected",
    "DiscoveryError",
    "InsufficientScope",
    "IssuerMismatch",
    "PkceUnsupported",
    "RegistrationError",
    "ResourceMismatch",
    "TokenError",
    "UnsafeUrl",
]


class AuthorizationError(MCPError):
    """Authorization could not be completed; the requests waiting on it fail with this.

    What to do next depends on the subclass: most mean the server or its authorization server
    is misconfigured (tell the user, do not retry in a loop); :class:`AuthorizationDenied`
    means the user said no; :class:`TokenError` with ``invalid_grant`` means the stored
    tokens are no longer good (log in again).
    """


class AuthorizationRequired(AuthorizationError):
    """The server answered 401 (or 403) and the client has no authorization configured.
    Pass ``auth=OAuth(...)`` (or a bearer token) to ``connect_http``."""

    def __init__(self, message: str, status: int = 401) -> None:
        self.status = status
        super().__init__(message)


class UnsafeUrl(AuthorizationError):
    """A URL the flow was told to use breaks the URL policy: not https (http is allowed for
    loopback only), a scheme other than http(s), credentials or a fragment in it, or an
    address that is private, link-local or a cloud metadata address while the MCP server's
    own host is public (server-side request forgery)."""


class DiscoveryError(AuthorizationError):
    """Neither protected resource metadata nor authorization server metadata could be found
    or used (every candidate URL refused, a server error, a body that is not a JSON object,
    too large, or a redirect)."""


class ResourceMismatch(AuthorizationError):
    """The protected resource metadata names a ``resource`` that is not this MCP server
    (RFC 9728 section 3.3).  Nothing was sent to any authorization server."""


class IssuerMismatch(AuthorizationError):
    """Authorization server metadata names another ``issuer`` than the one it was fetched for
    (RFC 8414 section 3.3), or the configured issuer is not the one the server names.  Nothing
    was sent to its endpoints."""


class PkceUnsupported(AuthorizationError):
    """The authorization server does not advertise PKCE with ``S256``
    (``code_challenge_methods_supported``); the flow refuses to run without it."""


class RegistrationError(AuthorizationError):
    """The client could not get an identity at the authorization server: no credentials
    configured, no client ID metadata document support and no registration endpoint, or the
    registration endpoint refused (``error``, ``description``) or answered unusably."""

    def __init__(self, message: str, error: str | None = None,
                 description: str | None = None) -> None:
        self.error = error
        self.description = description
        super().__init__(message)


class CallbackRejected(AuthorizationError):
    """The authorization response (the callback URL) was refused before anything was sent:
    a missing or wrong ``state``, a missing or wrong ``iss`` (RFC 9207), a callback for
    another redirect URI, or a malformed one.  No token request was made."""


class AuthorizationDenied(AuthorizationError):
    """The authorization server answered the authorization request with an error (the user
    declined, or the request was refused): ``error`` and ``description`` say which."""

    def __init__(self, message: str, error: str | None = None,
                 description: str | None = None) -> None:
        self.error = error
        self.description = description
        super().__init__(message)


class TokenError(AuthorizationError):
    """The token endpoint refused (``error``: ``invalid_grant``, ``invalid_client``...) or
    answered with something that is not a usable token."""

    def __init__(self, message: str, error: str | None = None,
                 description: str | None = None, status: int | None = None) -> None:
        self.error = error
        self.description = description
        self.status = status
        super().__init__(message)


class InsufficientScope(AuthorizationError):
    """The server keeps answering 403 ``insufficient_scope`` after step-up authorizations for
    the scopes it asked for: the user cannot be granted them.  ``scope`` is what it asked."""

    def __init__(self, message: str, scope: str | None = None) -> None:
        self.scope = scope
        super().__init__(message)


class AuthorizationRejected(AuthorizationError):
    """The server refused a token that was just obtained (401 again after a refresh and a
    new authorization): the request fails rather than looping."""
