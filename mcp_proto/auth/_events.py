"""What the authorization flow tells the binding and the host: frozen events, and the
status a host may show.  None of them ever holds a token."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AuthEvent", "AuthStatus", "Authorized", "RedirectRequired", "SaveRecord"]


@dataclass(frozen=True, slots=True)
class RedirectRequired:
    """The user must visit ``url`` (open a browser, print it).  Call
    ``OAuthFlow.receive_callback`` with the URL the browser was sent back to (on
    ``redirect_uri``), or ``OAuthFlow.callback_failed``, before ``deadline``."""

    url: str = field(repr=False)
    redirect_uri: str
    deadline: float
    attempt: int = 0
    """Which user step this is: pass it back with the answer, so a handler that outlived
    its attempt cannot answer the next one."""


@dataclass(frozen=True, slots=True)
class SaveRecord:
    """Store ``record`` under ``key`` (the server's canonical URL), replacing what was
    there.  It holds tokens: keep it where only this user can read it."""

    key: str
    record: dict[str, Any] = field(repr=False)
    serial: int = 0
    """Increases with every record the flow gives: a store written from several threads
    keeps the newest (an older snapshot arriving late is dropped)."""


@dataclass(frozen=True, slots=True)
class Authorized:
    """A new token is in use (for the log; the token itself is never in an event)."""

    issuer: str
    scope: str | None
    expires_at: float | None


AuthEvent = RedirectRequired | SaveRecord | Authorized


@dataclass(frozen=True, slots=True)
class AuthStatus:
    """What a host may show: never the token."""

    authorized: bool
    issuer: str | None
    scope: str | None
    expires_at: float | None
    error: str | None
