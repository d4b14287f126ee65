"""Authorization settings of an HTTP server entry: the OAuth blocks of the config dialects.

Dialects write them differently, and none is modelled by a field of :class:`ServerSpec`
(they stay in ``raw``, written back as they were): Gemini CLI ``oauth: {enabled, clientId,
clientSecret, scopes}``, Cursor ``auth: {CLIENT_ID, CLIENT_SECRET, scopes}``, fastmcp
``auth: "oauth"``, and any dialect's ``oauth`` block in snake case (``client_id``,
``client_secret``, ``client_secret_env_var``, ``scope``/``scopes``, ``issuer``,
``client_metadata_url``).  Codex's ``bearer_token_env_var`` is not here: it becomes an
``Authorization`` header when the config is read.

A value still holding a ``${...}`` variable is not used (the config layer expands the fields
it models, not these blocks): name the secret's environment variable with
``client_secret_env_var`` instead, which the binding reads when it connects.  Nor is a value
holding a lone surrogate (``"\\ud83d"`` in JSON, kept as written in ``raw``): it is no
Unicode text, so it could not be sent to the authorization server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._spec import ServerSpec

__all__ = ["OAuthSettings", "oauth_settings"]

_KEYS = {
    "client_id": ("client_id", "clientId", "CLIENT_ID"),
    "client_secret": ("client_secret", "clientSecret", "CLIENT_SECRET"),
    "client_secret_env_var": ("client_secret_env_var", "clientSecretEnvVar"),
    "scope": ("scope", "scopes"),
    "issuer": ("issuer", "authorizationServer"),
    "client_metadata_url": ("client_metadata_url", "clientMetadataUrl"),
}


#: A UTF-16 surrogate code point: a Python string holds it, an HTTP request cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """What an entry says about authorizing with its server.  ``enabled=False``: the entry
    turned OAuth off (a 401 fails the server's start with ``AuthorizationRequired``)."""

    enabled: bool = True
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_secret_env_var: str | None = None
    scope: str | None = None
    issuer: str | None = None
    client_metadata_url: str | None = None


def _text(value: object) -> str | None:
    if isinstance(value, str) and value and "${" not in value and not _SURROGATE.search(value):
        return value
    return None


def oauth_settings(spec: ServerSpec) -> OAuthSettings | None:
    """The entry's OAuth settings, or None when it has no OAuth block (then the host's own
    defaults apply: stored tokens, and the host's redirect handler if it has one)."""
    if spec.transport == "stdio":
        return None
    block: object = spec.raw.get("oauth", spec.raw.get("auth"))
    if block == "oauth":  # fastmcp: auth: "oauth"
        return OAuthSettings()
    if not isinstance(block, Mapping):
        return None
    values: dict[str, Any] = {}
    for name, keys in _KEYS.items():
        for key in keys:
            if key in block:
                raw = block[key]
                if name == "scope" and isinstance(raw, list):
                    raw = " ".join(s for s in raw if isinstance(s, str))
                values[name] = _text(raw)
                break
    enabled = block.get("enabled", True)
    return OAuthSettings(enabled=enabled is not False, **values)
