"""The authorization helpers the clients call, imported by the first call.

The client code (``_client``, ``_sync``, ``_async``) names these in its authorization
paths only, which run for a client made with ``auth=``.  Each one forwards to
:mod:`._io` or :mod:`._redirect`, imported on that first call, so a client without
``auth=`` never loads the OAuth machinery (``mcp_proto.auth._flow`` with its steps, discovery
and JOSE, the token stores, the redirect listeners): ``benchmarks/bench_import.py`` measures
what that saves, ``tests/test_imports.py`` checks that it stays unloaded.
"""

# ruff: noqa: PLC0415 - importing on the first call is what this module is for
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import ssl

    from mcp_proto import AuthExchange, AuthorizationError, AuthResponse, OAuthFlow

    from . import _io as _auth_io

__all__ = [
    "NO_REDIRECT",
    "AuthSetup",
    "Running",
    "deliver_callback",
    "is_async_redirect",
    "redirect_failure",
    "run_auth_exchange",
    "run_in_daemon_thread",
]

#: :data:`._auth_io.NO_REDIRECT`, repeated so that naming it loads nothing (a test checks
#: that the two agree).
NO_REDIRECT = "authorization needs a user and no redirect handler is configured"


class Running(Protocol):
    """Work started by :func:`run_in_daemon_thread` (a thread, named without importing
    ``threading``: the async bindings must not load it)."""

    def is_alive(self) -> bool:
        """Whether the work is still running."""
        ...


def AuthSetup(auth: Any, url: str) -> _auth_io.AuthSetup:
    """A new :class:`._auth_io.AuthSetup`: the first one loads the machinery."""
    from ._io import AuthSetup

    return AuthSetup(auth, url)


def run_auth_exchange(ex: AuthExchange, allowed: Callable[[str], bool],
                      ssl_context: ssl.SSLContext | None) -> AuthResponse | str:
    """:func:`._auth_io.run_auth_exchange`."""
    from ._io import run_auth_exchange

    return run_auth_exchange(ex, allowed, ssl_context)


def run_in_daemon_thread(fn: Callable[[], Any],
                         done: Callable[[Any, BaseException | None], None], *,
                         daemon: bool = True) -> Running:
    """:func:`._auth_io.run_in_daemon_thread`."""
    from ._io import run_in_daemon_thread

    return run_in_daemon_thread(fn, done, daemon=daemon)


def redirect_failure(exc: Exception) -> AuthorizationError | str:
    """:func:`._auth_io.redirect_failure`."""
    from ._io import redirect_failure

    return redirect_failure(exc)


def deliver_callback(flow: OAuthFlow, url: str | None, error: AuthorizationError | str | None,
                     now: float, attempt: int) -> None:
    """:func:`._auth_io.deliver_callback`."""
    from ._io import deliver_callback

    deliver_callback(flow, url, error, now, attempt)


def is_async_redirect(fn: object) -> bool:
    """:func:`._auth_redirect.is_async_redirect`."""
    from ._redirect import is_async_redirect

    return is_async_redirect(fn)
