"""What discovery answers mean: protected resource metadata (RFC 9728), authorization server
metadata (RFC 8414 and OpenID discovery), and the 2025-03-26 fallbacks.  Pure functions of
an answer; :class:`OAuthFlow` walks the candidates.

The rules, each a refusal before anything is sent to the authorization server:

- a server error (5xx, 429) stops discovery: falling back to other URLs on a server error
  would send the client to places the server never named;
- any 3xx or 4xx, or a body that is not a JSON object, moves to the next candidate
  (redirects are never followed; CDNs answer 401/403 for what they do not serve);
- the metadata's ``resource`` must be this server (:class:`ResourceMismatch`), and the
  authorization server metadata must name the issuer it was fetched for, by simple string
  comparison (:class:`IssuerMismatch`; no other candidate is tried after a mismatch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._auth_errors import DiscoveryError, IssuerMismatch, ResourceMismatch, UnsafeUrl
from ._challenge import Challenge
from ._exchange import AuthResponse
from ._steps import brief, safe_url, shown_urls, str_list
from ._urls import (
    MAX_SHOWN_URL,
    legacy_endpoint,
    origin_of,
    prm_candidates,
    resource_matches,
)

__all__ = [
    "ProtectedResource",
    "default_endpoints",
    "parse_as_metadata",
    "parse_prm",
    "pick_issuer",
    "prm_urls",
]


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """What the resource metadata said: its URL, ``resource`` (sent verbatim as RFC 8707's
    ``resource``), the authorization servers and the scopes it lists."""

    url: str
    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None


def prm_urls(server_url: str, server_origin: tuple[str, str, int],
             challenge: Challenge | None) -> list[str]:
    """The resource metadata candidates: the challenge's ``resource_metadata`` when it is on
    the server's own origin (R7: another origin is not followed), then the path-aware and
    the root well-known URLs."""
    header = None if challenge is None else challenge.get("resource_metadata")
    if header is not None:
        try:
            same = origin_of(header) == server_origin
        except (ValueError, UnsafeUrl):
            same = False
        if not same:
            header = None
    return prm_candidates(server_url, header)


def _server_error(what: str, url: str, response: AuthResponse) -> None:
    if response.status >= 500 or response.status == 429:
        raise DiscoveryError(f"{what} at {safe_url(url)}: HTTP {response.status}")


def parse_prm(response: AuthResponse, url: str, server_url: str) -> ProtectedResource | None:
    """The resource metadata of an answer, or None to try the next candidate.  Raises
    :class:`DiscoveryError` (a server error, or a document without ``resource`` or
    ``authorization_servers``) or :class:`ResourceMismatch`."""
    _server_error("protected resource metadata", url, response)
    doc = response.json_object() if response.status == 200 else None
    if doc is None:
        return None
    resource = doc.get("resource")
    servers = str_list(doc.get("authorization_servers"))
    if not isinstance(resource, str) or not servers:
        raise DiscoveryError(f"protected resource metadata at {safe_url(url)} has no "
                             "resource or no authorization_servers")
    if not resource_matches(resource, server_url):
        raise ResourceMismatch(f"protected resource metadata at {safe_url(url)} is for "
                               f"{safe_url(resource)}, not {safe_url(server_url)}; nothing "
                               "was sent to its authorization server")
    scopes = str_list(doc.get("scopes_supported"))
    return ProtectedResource(url, resource, tuple(servers),
                             None if scopes is None else tuple(scopes))


def pick_issuer(servers: tuple[str, ...], wanted: str | None,
                known: dict[str, Any]) -> str:
    """The authorization server to use: the configured one (it must be listed, else
    :class:`IssuerMismatch`: the credentials are not sent), else one this client already
    has credentials for, else the first."""
    if wanted is not None:
        if wanted not in servers:
            raise IssuerMismatch(f"the server names {shown_urls(servers)} as "
                                 f"its authorization server, not the configured "
                                 f"{safe_url(wanted)}; the credentials were not sent")
        return wanted
    for server in servers:
        sub = known.get(server)
        if isinstance(sub, dict) and sub.get("client"):
            return server
    return servers[0]


def parse_as_metadata(response: AuthResponse, url: str, issuer: str) -> dict[str, Any] | None:
    """The authorization server metadata of an answer, or None to try the next candidate.
    Raises :class:`DiscoveryError` for a server error, :class:`IssuerMismatch` for a document
    naming another issuer."""
    _server_error("authorization server metadata", url, response)
    doc = response.json_object() if response.status == 200 else None
    if doc is None:
        return None
    named = doc.get("issuer")
    if named != issuer:
        shown = brief(safe_url(named) if isinstance(named, str) else named, MAX_SHOWN_URL)
        raise IssuerMismatch(f"authorization server metadata at {safe_url(url)} names issuer "
                             f"{shown}, not {safe_url(issuer)!r}; none of its endpoints "
                             "was used")
    return doc


def default_endpoints(server_url: str, issuer: str) -> dict[str, Any]:
    """2025-03-26 without any metadata: ``/authorize``, ``/token`` and ``/register`` on the
    server's origin, PKCE with S256 as that revision requires."""
    return {
        "issuer": issuer,
        "authorization_endpoint": legacy_endpoint(server_url, "/authorize"),
        "token_endpoint": legacy_endpoint(server_url, "/token"),
        "registration_endpoint": legacy_endpoint(server_url, "/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic",
                                                  "client_secret_post"],
    }
