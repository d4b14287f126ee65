"""The requests of each grant, as pure functions: scope selection, the authorization URL,
and the token request forms (authorization code, refresh, client credentials, RFC 8693
token exchange, RFC 7523 JWT bearer).  :class:`OAuthFlow` sends what they build.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from ._config import AuthConfig
from ._steps import scope_tokens, scope_union, str_list

__all__ = [
    "ID_JAG",
    "ID_TOKEN",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "authorization_url",
    "idp_client",
    "scope_request",
    "token_exchange_form",
    "with_scope",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def scope_request(config: AuthConfig, meta: dict[str, Any], challenged: str | None,
                  prm_scopes: Sequence[str] | None, requested: Sequence[str]) -> list[str]:
    """The scopes to ask for (2026 index, scope selection): the challenge's, else every scope
    the resource metadata lists, else none; beside what was asked before (step-up: the
    union) and the configured ones.  ``offline_access`` only when the authorization server
    lists it (and refresh tokens), never only because the server asked for it."""
    base = scope_tokens(challenged)
    if not base and prm_scopes:
        base = scope_tokens(" ".join(prm_scopes))
    wanted = scope_union(requested, base, scope_tokens(config.scope))
    offered = str_list(meta.get("scopes_supported")) or []
    grants = str_list(meta.get("grant_types_supported"))
    if (config.offline_access and config.grant == "authorization_code"
            and "offline_access" in offered
            and (grants is None or "refresh_token" in grants)):
        return scope_union(wanted, ["offline_access"])
    if "offline_access" not in offered:
        return [s for s in wanted if s != "offline_access"]
    return wanted


def with_scope(form: dict[str, str], scope: Sequence[str]) -> dict[str, str]:
    if scope:
        form["scope"] = " ".join(scope)
    return form


def authorization_url(endpoint: str, has_query: bool, *, client_id: str, redirect_uri: str,
                      challenge: str, state: str, resource: str,
                      scope: Sequence[str]) -> str:
    """The authorization request (OAuth 2.1 section 4.1.1 with PKCE S256, RFC 8707
    ``resource``), appended to the endpoint's own query if it has one."""
    params = [("response_type", "code"), ("client_id", client_id),
              ("redirect_uri", redirect_uri), ("code_challenge", challenge),
              ("code_challenge_method", "S256"), ("state", state), ("resource", resource)]
    if scope:
        params.append(("scope", " ".join(scope)))
        if "offline_access" in scope:
            params.append(("prompt", "consent"))  # OpenID Connect needs it for refresh
    return endpoint + ("&" if has_query else "?") + urlencode(params)


def token_exchange_form(config: AuthConfig, *, audience: str, resource: str,
                        scope: Sequence[str]) -> dict[str, str]:
    """RFC 8693 at the identity provider: its ID token for an ID-JAG naming the MCP
    server's authorization server (SEP-990)."""
    assert config.idp_id_token is not None
    return with_scope({"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG,
                       "audience": audience, "resource": resource,
                       "subject_token": config.idp_id_token,
                       "subject_token_type": ID_TOKEN}, scope)


def idp_client(config: AuthConfig) -> dict[str, Any] | None:
    """How the client authenticates at the identity provider, if it has an id there."""
    if config.idp_client_id is None:
        return None
    return {"client_id": config.idp_client_id, "client_secret": config.idp_client_secret,
            "method": "client_secret_basic" if config.idp_client_secret else "none"}
