"""The stored record of one MCP server's authorization, as a part that owns it.

One record per server (keyed by its canonical URL), holding a sub-record per authorization
server (issuer): the client's identity there, its tokens, and what its metadata said (so a
later run can refresh without discovering again).  Credentials never cross issuers (SEP-2352):
a sub-record is only read for the issuer it belongs to.  The format is in
:mod:`mcp_proto.auth._config`.
"""

from __future__ import annotations

import copy
from typing import Any

from ._config import RECORD_VERSION, AuthConfig, Tokens, sendable
from ._steps import redirect_uri_registered, str_list

__all__ = ["KEPT_METADATA", "AuthRecord", "auth_method"]

#: The authorization server metadata fields kept in the record: what a refresh needs, and
#: what the checks of a later authorization read.  The rest is discovered again.
KEPT_METADATA = ("issuer", "token_endpoint", "authorization_endpoint",
                 "registration_endpoint", "token_endpoint_auth_methods_supported",
                 "authorization_response_iss_parameter_supported",
                 "code_challenge_methods_supported", "scopes_supported",
                 "grant_types_supported")


def auth_method(config: AuthConfig, meta: dict[str, Any], secret: bool) -> str:
    """How a configured client authenticates at the token endpoint: the configured method,
    ``private_key_jwt`` with a key, ``none`` without a secret, else ``client_secret_basic``
    unless the server lists only ``client_secret_post`` (RFC 8414 section 2: basic is the
    default when it lists nothing)."""
    if config.token_endpoint_auth_method is not None:
        return config.token_endpoint_auth_method
    if config.signer is not None:
        return "private_key_jwt"
    if not secret:
        return "none"
    supported = str_list(meta.get("token_endpoint_auth_methods_supported"))
    if supported is None or "client_secret_basic" in supported:
        return "client_secret_basic"
    return "client_secret_post" if "client_secret_post" in supported else "client_secret_basic"


def _registered(client: dict[str, Any]) -> list[str]:
    """The redirect URIs a stored registration holds: what the server answered, else (a
    record of an older version, or an answer without them) the one it was made for."""
    uris = str_list(client.get("redirect_uris"))
    if uris is not None:
        return uris
    uri = client.get("redirect_uri")
    return [uri] if isinstance(uri, str) else []


class AuthRecord:
    """The record of server ``key``, from what a store kept (anything malformed, or for
    another server, is ignored: the flow starts empty)."""

    def __init__(self, key: str, record: object = None) -> None:
        self.key = key
        self.issuer: str | None = None
        """The issuer of the tokens last put in use."""
        self.issuers: dict[str, dict[str, Any]] = {}
        if isinstance(record, dict) and record.get("version") == RECORD_VERSION \
                and record.get("resource") == key and isinstance(record.get("issuers"), dict):
            issuer = record.get("issuer")
            self.issuer = issuer if isinstance(issuer, str) else None
            self.issuers = {k: copy.deepcopy(v) for k, v in record["issuers"].items()
                            if isinstance(k, str) and isinstance(v, dict)}

    def sub(self, issuer: str) -> dict[str, Any]:
        """The sub-record of ``issuer`` (created empty)."""
        return self.issuers.setdefault(issuer, {})

    def tokens(self, issuer: str) -> Tokens | None:
        return Tokens.from_json(self.issuers.get(issuer, {}).get("tokens"))

    def set_tokens(self, issuer: str, tokens: Tokens) -> None:
        self.issuer = issuer
        self.sub(issuer)["tokens"] = tokens.to_json()

    def drop_tokens(self, issuer: str) -> None:
        self.sub(issuer).pop("tokens", None)

    def client(self, issuer: str, config: AuthConfig, *,
               for_authorization: bool = False) -> dict[str, Any] | None:
        """The client identity at ``issuer``, usable with ``config`` (a pre-registered one
        gets its secret from the configuration, never from the record), or None.
        ``for_authorization``: for a new authorization request, where the redirect URI it was
        registered with matters (a token or refresh request sends none)."""
        client = self.issuers.get(issuer, {}).get("client")
        if not isinstance(client, dict) or not sendable(client.get("client_id")):
            return None
        secret = client.get("client_secret")
        if secret is not None and not sendable(secret):
            return None  # a record edited by hand, or corrupt: register again
        if client.get("via") == "preregistered":
            if client["client_id"] != config.client_id:
                return None  # the configuration changed: adopt_client binds the new one
            return {**client, "client_secret": config.client_secret}
        if client.get("via") == "cimd" and client["client_id"] != config.client_metadata_url:
            return None
        if (for_authorization and client.get("via") == "dcr"
                and config.grant == "authorization_code"
                and not redirect_uri_registered(config.redirect_uri, _registered(client))):
            # Registered for another redirect URI (an earlier run's loopback port):
            # authorization servers match redirect URIs exactly, and one that is not
            # registered leaves the user on the server's error page, so register again.
            return None
        return dict(client)

    def set_client(self, issuer: str, client: dict[str, Any]) -> None:
        self.sub(issuer)["client"] = client

    def adopt_client(self, issuer: str, config: AuthConfig, meta: dict[str, Any]) -> bool:
        """Use the configured credentials at ``issuer`` (unless they are already bound to
        another issuer: the one they were first used with, or the configured ``issuer``), or
        the client ID metadata document when the server supports them.  False: neither."""
        if config.client_id is not None:
            bound = [iss for iss, s in self.issuers.items()
                     if isinstance(s.get("client"), dict)
                     and s["client"].get("via") == "preregistered"]
            if config.issuer is None and bound and issuer not in bound:
                return False
            self.set_client(issuer, {"client_id": config.client_id, "via": "preregistered",
                                     "method": auth_method(config, meta,
                                                           bool(config.client_secret))})
            return True
        url = config.client_metadata_url
        if url is not None and meta.get("client_id_metadata_document_supported") is True:
            self.set_client(issuer, {"client_id": url, "via": "cimd", "method": "none"})
            return True
        return False

    def remember(self, issuer: str, meta: dict[str, Any], resource: str) -> None:
        """Keep what a later run's refresh needs: the metadata's endpoints and the
        ``resource`` the tokens are for."""
        sub = self.sub(issuer)
        sub["meta"] = {k: v for k, v in meta.items() if k in KEPT_METADATA}
        sub["resource"] = resource

    def metadata(self, issuer: str) -> dict[str, Any] | None:
        meta = self.issuers.get(issuer, {}).get("meta")
        return dict(meta) if isinstance(meta, dict) else None

    def resource(self, issuer: str) -> str | None:
        value = self.issuers.get(issuer, {}).get("resource")
        return value if isinstance(value, str) else None

    def snapshot(self) -> dict[str, Any]:
        """The record as JSON, for the store (a copy: later changes do not show in it)."""
        return {"version": RECORD_VERSION, "resource": self.key, "issuer": self.issuer,
                "issuers": copy.deepcopy(self.issuers)}

    def forget(self) -> None:
        self.issuer = None
        self.issuers = {}
