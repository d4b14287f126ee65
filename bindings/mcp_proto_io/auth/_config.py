"""Authorization for ``connect_http(url, auth=...)``: the same objects in every runtime.

    from mcp_proto_io.threads import connect_http, OAuth      # or .asyncio, .trio

    with connect_http("https://mcp.example.com/mcp",
                      auth=OAuth(client_name="my-host")) as client:
        client.list_tools()      # a 401 runs discovery, registration and the browser step

- :class:`OAuth`: a user authorizes in the browser (authorization code with PKCE).  The
  redirect is a callable taking the authorization URL and returning the callback URL;
  :class:`LoopbackRedirect` (the default: a one-shot listener on 127.0.0.1 and the system
  browser), :class:`PasteRedirect` (print the URL, paste the callback: over SSH) or your own.
- :class:`ClientCredentials`: a machine with a secret or a private key (``private_key_jwt``).
- :class:`JwtBearer`: a workload identity token; :class:`EnterpriseManaged`: the enterprise
  identity provider's token exchanged for an ID-JAG, then for an access token.
- ``bearer_token="..."`` on ``connect_http`` still sends a fixed token.

Tokens go to the store (``store=None``: :class:`FileTokenStore` under the user's config
directory, files 0600 in a 0700 directory) and are refreshed before they expire.  The
decisions (what to fetch, which URL is safe, what a callback must carry) are the core's
:class:`mcp_proto.OAuthFlow`; this module only holds configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_proto import AuthConfig, Signer

from ._redirect import HeadlessRedirect, LoopbackRedirect, PasteRedirect
from ._signer import EcSigner
from ._store import FileTokenStore, MemoryTokenStore, TokenStore, TokenStoreError

__all__ = [
    "ClientCredentials",
    "EnterpriseManaged",
    "FileTokenStore",
    "HeadlessRedirect",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "PasteRedirect",
    "TokenStore",
    "TokenStoreError",
    "load_private_key",
]


def load_private_key(key: str | bytes | Signer) -> Signer:
    """A signer for a PEM private key (EC P-256, ES256), or the signer given.  Needs the
    ``cryptography`` package (``pip install 'mcp-proto[auth]'``)."""
    if isinstance(key, (str, bytes)):
        return EcSigner.from_pem(key)
    return key


def _dpop_signer(dpop: bool | Signer | None) -> Signer | None:
    if dpop is None or dpop is False:
        return None
    if dpop is True:
        return EcSigner.generate()
    return dpop


@dataclass(eq=False)
class OAuth:
    """A user's authorization (OAuth 2.1 authorization code with PKCE) for one server.

    ``redirect`` takes the authorization URL and returns the callback URL (it may be ``async``
    on asyncio and trio); it may say its redirect URI before registration (``redirect_uri``
    or ``prepare()``).  ``client_id``/``client_secret`` are pre-registered credentials
    (bound to ``issuer`` if given, else to the first authorization server they are used
    with); ``client_metadata_url`` a client ID metadata document (an https URL with a path),
    used when the authorization server supports them; otherwise the client registers itself.
    ``scope`` is asked for beside what the server asks.  ``dpop=True`` binds tokens to a
    fresh key (RFC 9449).  ``interactive=False`` never asks the user: without a usable
    stored token a call fails with :class:`mcp_proto.AuthorizationRequired`.
    """

    client_name: str = "mcp-proto"
    redirect: Any = None
    store: TokenStore | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None
    scope: str | None = None
    issuer: str | None = None
    offline_access: bool = True
    application_type: str | None = None
    dpop: bool | Signer | None = field(default=None, repr=False)
    allow_http: bool = False
    interactive: bool = True
    authorization_timeout: float = 300.0
    exchange_timeout: float = 30.0

    def __post_init__(self) -> None:
        if self.redirect is None and self.interactive:
            self.redirect = LoopbackRedirect()
        self._dpop_signer = _dpop_signer(self.dpop)

    def token_store(self) -> TokenStore:
        if self.store is None:
            self.store = FileTokenStore()
        return self.store

    def auth_config(self, redirect_uri: str | None) -> AuthConfig:
        kwargs: dict[str, Any] = {} if not redirect_uri else {"redirect_uri": redirect_uri}
        return AuthConfig(
            grant="authorization_code", client_name=self.client_name,
            client_id=self.client_id, client_secret=self.client_secret, issuer=self.issuer,
            client_metadata_url=self.client_metadata_url, scope=self.scope,
            offline_access=self.offline_access, application_type=self.application_type,
            dpop=self._dpop_signer, allow_http=self.allow_http, interactive=self.interactive,
            authorization_timeout=self.authorization_timeout,
            exchange_timeout=self.exchange_timeout, **kwargs)


class _MachineAuth:
    """What the machine grants share: tokens kept in memory unless a store is given (they
    are cheap to get again, and a machine's tokens need not outlive the process)."""

    store: TokenStore | None

    def token_store(self) -> TokenStore:
        if self.store is None:
            self.store = MemoryTokenStore()
        return self.store


@dataclass(eq=False)
class ClientCredentials(_MachineAuth):
    """A machine's own credentials (the client credentials grant): ``client_secret``
    (``client_secret_basic``, or ``method="client_secret_post"``) or ``private_key`` (a PEM
    EC P-256 key or a signer: ``private_key_jwt`` with ES256).  With ``issuer`` the server's
    metadata must name that authorization server, else nothing is sent.  Tokens are kept in
    memory unless a ``store`` is given (they are cheap to get again)."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | bytes | Signer | None = field(default=None, repr=False)
    issuer: str | None = None
    scope: str | None = None
    method: str | None = None
    store: TokenStore | None = None
    dpop: bool | Signer | None = field(default=None, repr=False)
    allow_http: bool = False
    exchange_timeout: float = 30.0

    def __post_init__(self) -> None:
        self._signer = None if self.private_key is None else load_private_key(self.private_key)
        self._dpop_signer = _dpop_signer(self.dpop)
        AuthConfig(grant="client_credentials", client_id=self.client_id,
                   client_secret=self.client_secret, signer=self._signer)  # checks now

    def auth_config(self, redirect_uri: str | None) -> AuthConfig:
        return AuthConfig(grant="client_credentials", client_id=self.client_id,
                          client_secret=self.client_secret, signer=self._signer,
                          issuer=self.issuer, scope=self.scope,
                          token_endpoint_auth_method=self.method, dpop=self._dpop_signer,
                          allow_http=self.allow_http, exchange_timeout=self.exchange_timeout,
                          offline_access=False)


@dataclass(eq=False)
class JwtBearer(_MachineAuth):
    """A workload identity (RFC 7523 JWT bearer grant): ``assertion`` is the workload's JWT,
    or a function of the audience (the authorization server's issuer) returning one.  One
    attempt: a refused assertion fails the call, with no fallback to another grant."""

    assertion: str | Callable[[str], str] = field(repr=False)
    client_id: str | None = None
    issuer: str | None = None
    scope: str | None = None
    store: TokenStore | None = None
    allow_http: bool = False
    exchange_timeout: float = 30.0

    def auth_config(self, redirect_uri: str | None) -> AuthConfig:
        return AuthConfig(grant="jwt_bearer", assertion=self.assertion,
                          client_id=self.client_id, issuer=self.issuer, scope=self.scope,
                          allow_http=self.allow_http, exchange_timeout=self.exchange_timeout,
                          offline_access=False)


@dataclass(eq=False)
class EnterpriseManaged(_MachineAuth):
    """Enterprise-managed authorization (SEP-990): the identity provider's ``id_token`` is
    exchanged at ``idp_token_endpoint`` (RFC 8693) for an ID-JAG naming the MCP server's
    authorization server, which then gives the access token (RFC 7523, authenticated with
    ``client_id``/``client_secret``)."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    idp_token_endpoint: str = ""
    id_token: str = field(default="", repr=False)
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    issuer: str | None = None
    scope: str | None = None
    store: TokenStore | None = None
    allow_http: bool = False
    exchange_timeout: float = 30.0

    def auth_config(self, redirect_uri: str | None) -> AuthConfig:
        return AuthConfig(grant="enterprise", client_id=self.client_id,
                          client_secret=self.client_secret,
                          idp_token_endpoint=self.idp_token_endpoint,
                          idp_id_token=self.id_token, idp_client_id=self.idp_client_id,
                          idp_client_secret=self.idp_client_secret, issuer=self.issuer,
                          scope=self.scope, allow_http=self.allow_http,
                          exchange_timeout=self.exchange_timeout, offline_access=False)


# Their public home, as before the room (help(), reprs of the classes, pickling): the package
# imports them from here when first used.
for _public in (OAuth, ClientCredentials, JwtBearer, EnterpriseManaged, load_private_key):
    _public.__module__ = "mcp_proto_io.auth"
