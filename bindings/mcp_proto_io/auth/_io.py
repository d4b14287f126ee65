"""Carrying the authorization flow's own HTTP requests, and setting the flow up.

An auth exchange goes on a fresh connection (they are rare: discovery, registration and a
token request per login, a refresh an hour): the host name is resolved once, *every*
address is checked against the flow's policy (private, link-local and metadata addresses
only when the MCP server itself is on one), and the connection goes to the checked address,
so a second resolution cannot swap in another one (DNS rebinding).  TLS verifies the name.
The whole exchange runs under the flow's deadline; the answer is fed to the exchange as it
arrives and bounded there.

The async bindings run this in a worker thread: the requests are few, and the thread gives
one implementation with the same checks on every runtime.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from mcp_proto import (
    AuthConfig,
    AuthExchange,
    AuthorizationError,
    AuthorizationRequired,
    AuthResponse,
    OAuthFlow,
    address_zone,
)
from mcp_proto.auth._urls import canonical_resource

from ._redirect import redirect_uri_of
from ._store import TokenStore

__all__ = [
    "NO_REDIRECT",
    "READ_SIZE",
    "AuthSetup",
    "deliver_callback",
    "redirect_failure",
    "run_auth_exchange",
    "run_in_daemon_thread",
]

#: Why a flow that needs the user fails when the client has no redirect handler.
NO_REDIRECT = "authorization needs a user and no redirect handler is configured"

READ_SIZE = 16 * 1024


def _resolve(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (an IP literal is its own; names, ``localhost`` included,
    are resolved, so the address connected to is the address checked)."""
    with contextlib.suppress(ValueError):
        return [str(ipaddress.ip_address(host))]
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def run_auth_exchange(ex: AuthExchange, allowed: Callable[[str], bool],
                      ssl_context: ssl.SSLContext | None) -> AuthResponse | str:
    """Carry ``ex`` and return its answer, or a string saying why there is none (the flow
    turns it into a typed error).  Never raises for a network problem."""
    url = ex.url
    deadline = ex.deadline
    try:
        addresses = _resolve(url.host, url.port)
    except OSError as exc:
        return f"cannot resolve {url.host}: {exc.strerror or exc}"
    except (UnicodeError, ValueError) as exc:  # a name the resolver refuses outright
        return f"cannot resolve {url.host}: {exc}"
    refused = [a for a in addresses if not allowed(a)]
    usable = [a for a in addresses if allowed(a)]
    if refused:  # one bad address is enough to distrust the name (rebinding)
        return (f"refused address {refused[0]} of {url.host}: private, link-local or "
                "metadata addresses are only reached from an MCP server on one")
    if not usable:
        return f"{url.host} has no address"
    sock: socket.socket | None = None
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "no time left"
        sock = socket.create_connection((usable[0], url.port), timeout=remaining)
        if url.scheme == "https":
            context = ssl_context or ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=url.host)
        sock.sendall(ex.data)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "no answer in time"
            sock.settimeout(remaining)
            data = sock.recv(READ_SIZE)
            result = ex.feed(data)
            if result is not None:
                return result
            if not data:
                return "the connection closed before the answer ended"
    except TimeoutError:
        return "no answer in time"
    except (OSError, ssl.SSLError) as exc:
        return f"cannot reach {url.authority}: {exc}"
    finally:
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


def run_in_daemon_thread(fn: Callable[[], Any],
                         done: Callable[[Any, BaseException | None], None], *,
                         daemon: bool = True) -> threading.Thread:
    """Run the blocking ``fn`` in a daemon thread, then ``done(value, error)`` in it; the
    thread, started (whoever must see the work over joins or polls it).  For the
    async bindings' blocking auth parts (an exchange, a plain redirect handler): a daemon
    thread, not a loop's executor, since ``asyncio.run`` waits for its executor's threads at
    exit and a user step may take minutes."""

    def run() -> None:
        try:
            value, error = fn(), None
        except BaseException as exc:  # delivered to the waiting task
            value, error = None, exc
        done(value, error)

    thread = threading.Thread(target=run, name="mcp-proto-auth", daemon=daemon)
    thread.start()
    return thread


def redirect_failure(exc: Exception) -> AuthorizationError | str:
    """What the waiting calls fail with when the host's redirect handler raised."""
    if isinstance(exc, AuthorizationError):
        return exc
    return f"the redirect handler raised {type(exc).__name__}: {exc}"


def deliver_callback(flow: OAuthFlow, url: str | None, error: AuthorizationError | str | None,
                     now: float, attempt: int) -> None:
    """Give the flow the handler's callback URL for user step ``attempt``, or why there is
    none (an answer to an earlier step is ignored by the flow)."""
    if url is not None:
        flow.receive_callback(url, now=now, attempt=attempt)
    else:
        flow.callback_failed(error or AuthorizationRequired(NO_REDIRECT), now=now,
                             attempt=attempt)


#: How strict each zone's rule is (lower: stricter).  When the MCP server was reached at
#: addresses of several zones, the strictest one applies.
_STRICTNESS = {"public": 0, "metadata": 0, "unspecified": 0, "multicast": 0, "name": 0,
               "link-local": 1, "private": 2, "loopback": 3}


class AuthSetup:
    """What one client keeps across its connections: the auth object, its store, and the
    redirect URI once known.  :meth:`new_flow` makes each connection's flow from the stored
    record."""

    def __init__(self, auth: Any, url: str) -> None:
        self.auth = auth
        self.url = url
        self.store: TokenStore = auth.token_store()
        self._redirect_uri: str | None = None
        self._zone: str | None = None  # of the addresses the MCP connections really used
        self._authorizations: list[float] = []  # shared by this client's flows
        self._save_lock = threading.Lock()
        self._serials = itertools.count(1)  # numbers the records of every flow of this client
        self._saved = 0  # the newest serial written
        self._flow: OAuthFlow | None = None  # the current connection's

    @property
    def redirect(self) -> Any:
        return getattr(self.auth, "redirect", None)

    def config(self) -> AuthConfig:
        if self._redirect_uri is None:
            redirect = self.redirect
            self._redirect_uri = redirect_uri_of(redirect) if redirect is not None else ""
        config: AuthConfig = self.auth.auth_config(self._redirect_uri or None)
        return config

    def observe_peer(self, address: str) -> None:
        """An MCP connection reached the server at ``address``.  The zone of the addresses
        actually used decides what the auth exchanges may reach (never a second DNS answer,
        which a rebinding server controls); it only ever gets stricter."""
        zone = address_zone(address)
        if zone == "name":
            return
        if self._zone is None or _STRICTNESS[zone] < _STRICTNESS[self._zone]:
            self._zone = zone
            flow = self._flow
            if flow is not None:
                flow.mcp_zone = zone  # the flow decides with it from now on

    def quick_zone(self) -> str:
        """The MCP server's address zone: the strictest of the addresses its connections
        used, else that of an IP literal or ``localhost`` URL host, else ``public``."""
        if self._zone is not None:
            return self._zone
        zone = address_zone(urlsplit(self.url).hostname or "")
        return "public" if zone == "name" else zone

    def new_flow(self) -> OAuthFlow:
        """Raises :class:`TokenStoreError` when the store is unsafe to read.  Never blocks on
        the network (the async bindings call it on their loop)."""
        config = self.config()
        key = canonical_resource(self.url)
        self._flow = OAuthFlow(config, self.url, random_bytes=secrets.token_bytes,
                               wall_offset=time.time() - time.monotonic(),
                               mcp_zone=self.quick_zone(), record=self.store.load(key),
                               authorizations=self._authorizations,
                               serials=self._serials.__next__)
        return self._flow

    def save(self, key: str, record: dict[str, Any], serial: int = 0) -> None:
        """Write a record of this client's flows; from any thread.  A snapshot older than
        one already written is dropped (two threads may deliver them out of order; the
        flows of one client number theirs from one counter).  Raises
        :class:`TokenStoreError` when the store cannot be written safely."""
        with self._save_lock:
            if serial and serial <= self._saved:
                return
            self.store.save(key, record)
            self._saved = max(self._saved, serial)

    def reload_for_refresh(self, flow: OAuthFlow) -> bool:
        """Before a refresh request goes out: give the flow what the store holds now (another
        process may have refreshed already: a rotated refresh token is good once).  True:
        the flow took those tokens and the exchange must not be carried."""
        if not flow.refreshing:  # the store is read only when it can matter
            return False
        try:
            record = self.store.load(flow.key)
        except AuthorizationError:
            return False
        return flow.offer_record(record, now=time.monotonic())

    def close(self) -> None:
        """The client closed: a redirect handler holding a resource (the loopback listener)
        lets it go."""
        close = getattr(self.redirect, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()

