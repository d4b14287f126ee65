"""Authorization: the OAuth 2.1 machine beside the HTTP transport, pure.

Owns the flow and its state table (``_flow``, ``_procedure``, ``_states``), discovery
(``_discovery``, ``_challenge``), the grants and their steps (``_grants``, ``_steps``), the
stored record (``_record``), JOSE (``_jwt``: base64url, JWS, PKCE, DPoP), the URL policy and
address zones (``_urls``), the bounded exchange (``_exchange``), its configuration and events.
Randomness, signing, the browser and token storage come in from the bindings.  May import the
shared records (its errors are ``mcp_proto._auth_errors``, raised without a flow too) and
nothing else of the package; :mod:`mcp_proto.http` and the bindings import it.

The names below are imported on first use (PEP 562), so importing one module of this room (the
HTTP transport needs the state table) never loads the whole machine.  They are the same objects
:mod:`mcp_proto` exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._auth_errors import (
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

if TYPE_CHECKING:
    from ._config import AuthConfig, Tokens
    from ._events import AuthEvent, Authorized, AuthStatus, RedirectRequired, SaveRecord
    from ._exchange import AuthExchange, AuthResponse
    from ._flow import OAuthFlow
    from ._jwt import Signer
    from ._urls import address_zone

#: Each lazy name and the module of this room that defines it.
_LAZY = {
    "AuthConfig": "._config",
    "Tokens": "._config",
    "AuthEvent": "._events",
    "AuthStatus": "._events",
    "Authorized": "._events",
    "RedirectRequired": "._events",
    "SaveRecord": "._events",
    "AuthExchange": "._exchange",
    "AuthResponse": "._exchange",
    "OAuthFlow": "._flow",
    "Signer": "._jwt",
    "address_zone": "._urls",
}

__all__ = [
    "AuthConfig",
    "AuthEvent",
    "AuthExchange",
    "AuthResponse",
    "AuthStatus",
    "Authorized",
    "AuthorizationDenied",
    "AuthorizationError",
    "AuthorizationRejected",
    "AuthorizationRequired",
    "CallbackRejected",
    "DiscoveryError",
    "InsufficientScope",
    "IssuerMismatch",
    "OAuthFlow",
    "PkceUnsupported",
    "RedirectRequired",
    "RegistrationError",
    "ResourceMismatch",
    "SaveRecord",
    "Signer",
    "TokenError",
    "Tokens",
    "UnsafeUrl",
    "address_zone",
]

if not TYPE_CHECKING:  # (a __getattr__ mypy saw would make every unknown name an Any)

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module  # noqa: PLC0415 - only on a first use

        value = getattr(import_module(module, __name__), name)
        globals()[name] = value  # the next lookup is an ordinary one
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
