"""Authorization I/O: what ``connect_http(url, auth=...)`` takes, and what carries it out.

Owns the authorization objects every runtime shares (``_config``: :class:`OAuth`,
:class:`ClientCredentials`, :class:`JwtBearer`, :class:`EnterpriseManaged`), the user step
(``_redirect``: loopback listener, paste, headless), the token stores (``_store``), the ES256
signer (``_signer``), the flow's own HTTP requests (``_io``) and the helpers the clients call
on their authorization paths only (``_deferred``).  Every decision is the core's
:class:`mcp_proto.OAuthFlow`'s.  May import the core; the runtime faces and the Host import it.

The public names are imported on first use (PEP 562): a client made without ``auth=`` imports
``_deferred`` alone and never loads the stores, the listeners or the OAuth machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_proto import AuthConfig as AuthConfig  # (_ALSO: importable, not in __all__)
    from mcp_proto import Signer as Signer

    from ._config import (
        ClientCredentials,
        EnterpriseManaged,
        JwtBearer,
        OAuth,
        load_private_key,
    )
    from ._redirect import HeadlessRedirect, LoopbackRedirect, PasteRedirect
    from ._signer import EcSigner as EcSigner
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

#: Names this module has always had beside ``__all__`` (the core's types the classes take).
_ALSO = ("AuthConfig", "EcSigner", "Signer")

if not TYPE_CHECKING:  # (a __getattr__ mypy saw would make every unknown name an Any)

    def __getattr__(name: str) -> Any:
        if name not in __all__ and name not in _ALSO:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import _config  # noqa: PLC0415 - only on a first use

        for public in (*__all__, *_ALSO):  # one import binds them all
            globals()[public] = getattr(_config, public)
        return globals()[name]

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
