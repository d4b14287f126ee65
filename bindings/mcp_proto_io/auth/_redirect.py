"""The user step of authorization: from the authorization URL to the callback URL.

A *redirect* is any callable ``redirect(authorization_url) -> callback_url``: it gets the
user (or, in tests, a script) through the authorization server's pages and returns the full
URL the authorization server redirected the browser to, query included.  The core then
checks that URL (redirect URI, ``state``, ``iss``) before anything is sent.

- It may be ``async def``: the asyncio and trio bindings await it; the threads binding
  refuses one (:func:`is_async_redirect` tells them apart).
- It may say its redirect URI before the client registers, with a ``prepare() -> str``
  method (called first; it may bind a socket) or a ``redirect_uri`` attribute; a plain
  callable gets :data:`DEFAULT_REDIRECT_URI` (:func:`redirect_uri_of`).

Built-ins: :class:`LoopbackRedirect` (browser plus a one-shot listener on 127.0.0.1),
:class:`PasteRedirect` (print the URL, read the pasted callback: SSH sessions) and
:class:`HeadlessRedirect` (GET the URL, return its ``Location``: tests and the conformance
suite).  Each refuses an authorization URL that is not https (or http to a loopback host)
before doing anything with it, so a ``javascript:`` or ``file:`` URL never reaches a browser.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import ipaddress
import math
import os
import selectors
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TextIO
from urllib.parse import urljoin, urlsplit

from mcp_proto._auth_errors import AuthorizationError, UnsafeUrl
from mcp_proto.auth._config import DEFAULT_REDIRECT_URI
from mcp_proto.auth._steps import MAX_CALLBACK_URL

__all__ = [
    "CALLBACK_CONNECTION_TIMEOUT",
    "DEFAULT_REDIRECT_URI",
    "HEADLESS_TIMEOUT",
    "MAX_AUTHORIZATION_URL",
    "MAX_CALLBACK_CONNECTIONS",
    "MAX_CALLBACK_REQUEST",
    "MAX_CALLBACK_URL",
    "HeadlessRedirect",
    "LoopbackRedirect",
    "PasteRedirect",
    "Redirect",
    "check_authorization_url",
    "is_async_redirect",
    "redirect_uri_of",
]

#: 8 KiB for the authorization URL (rule R12).  The core builds it from a few parameters of
#: bounded size; one longer than this was not built by it and is not opened.
MAX_AUTHORIZATION_URL = 8 * 1024

#: 8 KiB for the head of one request to the loopback listener.  A browser's callback request
#: (request line with the query, a dozen headers) is 1-3 KiB; a longer head is refused, so
#: nothing on the machine can make the listener buffer without bound.
MAX_CALLBACK_REQUEST = 8 * 1024

#: Seconds one connection to the loopback listener may take to send its request head.  A
#: browser sends it at once; a connection opened speculatively (browsers preconnect) or by a
#: stray local program is dropped after this, without delaying the others.
CALLBACK_CONNECTION_TIMEOUT = 5.0

#: Connections the loopback listener holds open at once (and its listen backlog).  A browser
#: opens a handful per host; more are closed on arrival, so a local flood costs no memory.
MAX_CALLBACK_CONNECTIONS = 16

#: Seconds per network operation of :class:`HeadlessRedirect` (rule R13: 30 s per exchange).
HEADLESS_TIMEOUT = 30.0

#: What any redirect is: sync or async, from the authorization URL to the callback URL.
Redirect = Callable[[str], str] | Callable[[str], Awaitable[str]]

_LOOPBACK_BIND = {"127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1", "::1": "::1"}

_PAGE = (b"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>mcp-proto</title></head>"
         b"<body><p>The authorization response was received. You can close this window.</p>"
         b"</body></html>\n")
_OK_RESPONSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/html; charset=utf-8\r\n"
    b"Content-Length: " + str(len(_PAGE)).encode() + b"\r\n"
    b"Cache-Control: no-store\r\n"
    b"Referrer-Policy: no-referrer\r\n"
    b"Content-Security-Policy: default-src 'none'\r\n"
    b"X-Content-Type-Options: nosniff\r\n"
    b"Connection: close\r\n\r\n" + _PAGE)
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
              b"Connection: close\r\n\r\n")

#: Seconds to hand a response to the kernel before closing (a few hundred bytes, to a
#: local peer): it never takes long unless the peer stops reading.
_SEND_TIMEOUT = 2.0


def _printable_ascii(text: str) -> bool:
    return all("\x21" <= ch <= "\x7e" for ch in text)


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_authorization_url(url: str) -> None:
    """Refuse an authorization URL nothing should open or fetch.  It must be at most
    :data:`MAX_AUTHORIZATION_URL` characters of printable ASCII, ``https``, or ``http`` to a
    loopback host (``localhost``, 127.0.0.0/8, ``::1``), with a host and no user
    information.  Raises :class:`~mcp_proto._auth_errors.UnsafeUrl` (an
    ``AuthorizationError``) naming the scheme and host, never the query; the caller fails
    the authorization (the authorization server metadata is wrong or hostile)."""
    if not isinstance(url, str):
        raise UnsafeUrl(f"the authorization URL is a {type(url).__name__}, not a string")
    if len(url) > MAX_AUTHORIZATION_URL:
        raise UnsafeUrl(f"the authorization URL is {len(url)} characters long, more than "
                        f"{MAX_AUTHORIZATION_URL}")
    if not _printable_ascii(url):
        raise UnsafeUrl("the authorization URL has spaces, control or non-ASCII characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise UnsafeUrl("the authorization URL cannot be parsed") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise UnsafeUrl(f"refusing an authorization URL with the scheme {scheme or '(none)'!r}: "
                        "only https (or http to a loopback host) is opened")
    if not host:
        raise UnsafeUrl("the authorization URL has no host")
    if "@" in parts.netloc:
        raise UnsafeUrl(f"the authorization URL for {host} carries user information")
    if scheme == "http" and not _is_loopback(host):
        raise UnsafeUrl(f"refusing http://{host}: an authorization URL is https, or http to "
                        "a loopback host only")


def is_async_redirect(fn: object) -> bool:
    """Whether calling ``fn`` gives an awaitable to await: an ``async def`` function, a
    ``functools.partial`` of one, or an object whose ``__call__`` is ``async def``.  The
    threads binding refuses such a redirect; the async bindings await it.  Raises nothing."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the method, not callable()
    return call is not None and inspect.iscoroutinefunction(call)


def redirect_uri_of(redirect: object) -> str:
    """The redirect URI ``redirect`` receives callbacks at, to register and to send:
    ``redirect.prepare()`` if it has that method (called now: it may bind a socket),
    else its ``redirect_uri`` attribute, else :data:`DEFAULT_REDIRECT_URI`.  Raises what
    ``prepare()`` raises (:class:`~mcp_proto._auth_errors.AuthorizationError` for the
    built-ins), and ``TypeError`` when the answer is not a non-empty string."""
    prepare = getattr(redirect, "prepare", None)
    uri: object
    if callable(prepare):
        uri = prepare()
    else:
        uri = getattr(redirect, "redirect_uri", DEFAULT_REDIRECT_URI)
    if not isinstance(uri, str) or not uri:
        raise TypeError(f"a redirect's URI must be a non-empty string, not {uri!r:.40}")
    return uri


# -- LoopbackRedirect ---------------------------------------------------------------------------

@dataclass
class _Pending:
    """One connection to the listener, until its request head is in."""

    deadline: float
    head: bytearray = field(default_factory=bytearray)


class LoopbackRedirect:
    """Open the authorization URL in a browser and take the callback on a loopback listener
    (RFC 8252 section 7.3), for a host running on the user's machine.

    ``host`` is ``127.0.0.1`` (the default, and RFC 8252's preference), ``::1``, or
    ``localhost`` (for authorization servers that only accept that name: the listener binds
    127.0.0.1 and the URI says ``localhost``); ``port`` 0 takes an ephemeral port.
    :meth:`prepare` binds the listener and returns the redirect URI
    ``http://<host>:<port><path>``; a call opens the URL (with ``browser(url)`` when given,
    which may also just print it, else ``webbrowser.open`` when ``open_browser``) and waits
    at most ``timeout`` seconds for one ``GET`` of exactly ``path`` whose ``Host`` is the
    URI's authority.  Anything else that connects gets a 404 and is ignored.  The callback
    is answered with a static page that reflects nothing of the request, and the listener is
    closed; a later call (a step-up authorization) listens again on the same port.

    Raises ``ValueError`` at construction for a host other than those three, a port out of
    range, a path that is not ``/...`` without ``?`` or ``#``, or a non-positive timeout.
    One authorization at a time (a second call waits for the first); :meth:`close`, from any
    thread, ends a waiting call and releases the port.  Use it as a context manager (or call
    :meth:`close`) when the flow ends early.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, path: str = "/callback",
                 open_browser: bool = True, timeout: float = 300.0,
                 browser: Callable[[str], object] | None = None) -> None:
        if host not in _LOOPBACK_BIND:
            raise ValueError(f"the callback listener binds a loopback address: host must be "
                             f"'127.0.0.1', '::1' or 'localhost', not {host!r}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an integer in 0..65535, not {port!r}")
        if (not isinstance(path, str) or not path.startswith("/") or "?" in path
                or "#" in path or not _printable_ascii(path)):
            raise ValueError(f"path must start with '/' and have no query or fragment, not "
                             f"{path!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self._bind_host = _LOOPBACK_BIND[host]
        self._family = socket.AF_INET6 if host == "::1" else socket.AF_INET
        self._uri_host = "[::1]" if host == "::1" else host
        self._port = port
        self._path = path
        self._open_browser = open_browser
        self._timeout = float(timeout)
        self._browser = browser
        self._listener: socket.socket | None = None
        self._redirect_uri: str | None = None
        self._calls = threading.Lock()  # one authorization at a time
        self._wakers: set[socket.socket] = set()  # to end the waiting call from close()

    def __repr__(self) -> str:
        where = self._redirect_uri or f"http://{self._uri_host}:{self._port or '*'}{self._path}"
        state = "listening" if self._listener is not None else "closed"
        return f"<LoopbackRedirect {where} {state}>"

    @property
    def _authority(self) -> str:
        return f"{self._uri_host}:{self._port}"

    def prepare(self) -> str:
        """Bind the listener (if not bound yet) and return the redirect URI.  Idempotent: a
        second call returns the same URI and keeps the same socket; after the listener was
        closed it binds again on the same port, so the registered URI stays right.  Raises
        :class:`~mcp_proto._auth_errors.AuthorizationError` when the port cannot be bound
        (in use: choose another ``port``, or 0)."""
        if self._listener is not None and self._redirect_uri is not None:
            return self._redirect_uri
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        try:
            if os.name == "posix":  # rebinding a port in TIME_WAIT (a fixed --callback-port)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            elif hasattr(socket, "SO_EXCLUSIVEADDRUSE"):  # Windows: no one may share it
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
            sock.bind((self._bind_host, self._port))
            sock.listen(MAX_CALLBACK_CONNECTIONS)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise AuthorizationError(
                f"cannot listen for the authorization callback on {self._bind_host} port "
                f"{self._port}: {exc.strerror or exc}") from None
        self._port = sock.getsockname()[1]
        self._listener = sock
        self._redirect_uri = f"http://{self._authority}{self._path}"
        return self._redirect_uri

    def close(self) -> None:
        """Close the listener (the URI and port are kept for a later :meth:`prepare`), and
        end a call waiting on it (it raises :class:`AuthorizationError`).  From any thread;
        idempotent; raises nothing."""
        listener, self._listener = self._listener, None
        for waker in list(self._wakers):
            with contextlib.suppress(OSError):
                waker.send(b"x")
        if listener is not None:
            listener.close()

    def __enter__(self) -> LoopbackRedirect:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __call__(self, authorization_url: str) -> str:
        """Open ``authorization_url`` and return the callback URL
        (``http://<host>:<port>`` plus the request target the browser sent).  Raises
        :class:`~mcp_proto._auth_errors.UnsafeUrl` for a URL that is not https or
        loopback http (nothing opened), and
        :class:`~mcp_proto._auth_errors.AuthorizationError` when no callback came within
        ``timeout`` seconds (tell the user; calling again starts a new wait) or the port
        cannot be bound.  The listener is closed when this returns or raises."""
        check_authorization_url(authorization_url)
        with self._calls:  # an earlier call ends at once when the binding closes it
            self.prepare()
            listener = self._listener
            assert listener is not None
            wake, waker = socket.socketpair()
            self._wakers.add(waker)
            try:
                if self._browser is not None:
                    self._browser(authorization_url)
                elif self._open_browser:
                    import webbrowser  # noqa: PLC0415 - only when used: keeps imports light

                    webbrowser.open(authorization_url)
                target = self._wait(listener, wake, time.monotonic() + self._timeout)
            finally:
                self._wakers.discard(waker)
                waker.close()
                wake.close()
                if self._listener is listener:  # never a listener a later call bound
                    self.close()
                else:
                    listener.close()
        return f"http://{self._authority}{target}"

    def _wait(self, listener: socket.socket, wake: socket.socket, deadline: float) -> str:
        """Serve connections until the callback request; its request target.  Raises
        :class:`AuthorizationError` at ``deadline``, or when :meth:`close` wakes it."""
        selector = selectors.DefaultSelector()
        pending: dict[socket.socket, _Pending] = {}
        selector.register(listener, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)

        def drop(conn: socket.socket, answer: bytes | None) -> None:
            selector.unregister(conn)
            del pending[conn]
            if answer is not None:
                _answer(conn, answer)
            conn.close()

        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    raise AuthorizationError(
                        f"no callback within {self._timeout:g} s at {self._redirect_uri}")
                for conn in [c for c, p in pending.items() if p.deadline <= now]:
                    drop(conn, None)
                soonest = min([deadline, *(p.deadline for p in pending.values())])
                for key, _ in selector.select(max(0.0, soonest - now)):
                    ready = key.fileobj
                    if ready is wake:
                        raise AuthorizationError("the callback listener was closed (the "
                                                 "authorization was abandoned)")
                    if ready is listener:
                        self._accept(listener, selector, pending)
                        continue
                    if not isinstance(ready, socket.socket) or ready not in pending:
                        continue  # dropped earlier in this round
                    conn = ready
                    try:
                        data = conn.recv(4096)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        drop(conn, None)
                        continue
                    if not data:
                        drop(conn, None)
                        continue
                    head = pending[conn].head
                    head += data
                    end = head.find(b"\r\n\r\n")
                    if (end < 0 and len(head) > MAX_CALLBACK_REQUEST) or end > MAX_CALLBACK_REQUEST:
                        drop(conn, _TOO_LARGE)
                        continue
                    if end < 0:
                        continue
                    target = self._callback_target(bytes(head[:end]))
                    if target is None:
                        drop(conn, _NOT_FOUND)
                        continue
                    drop(conn, _OK_RESPONSE)
                    return target
        finally:
            for conn in list(pending):
                conn.close()
            selector.close()

    @staticmethod
    def _accept(listener: socket.socket, selector: selectors.BaseSelector,
                pending: dict[socket.socket, _Pending]) -> None:
        for _ in range(MAX_CALLBACK_CONNECTIONS):  # what the backlog holds, no more per wake
            try:
                conn, _address = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the peer gave up before we took it (ECONNABORTED, ...)
                continue
            if len(pending) >= MAX_CALLBACK_CONNECTIONS:
                conn.close()
                continue
            conn.setblocking(False)
            selector.register(conn, selectors.EVENT_READ)
            pending[conn] = _Pending(time.monotonic() + CALLBACK_CONNECTION_TIMEOUT)

    def _callback_target(self, head: bytes) -> str | None:
        """The request target when ``head`` is the callback (``GET`` of exactly our path,
        ``Host`` our authority), else ``None``."""
        try:
            text = head.decode("ascii")
        except UnicodeDecodeError:
            return None
        request_line, *header_lines = text.split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3:
            return None
        method, target, version = parts
        if method != "GET" or not version.startswith("HTTP/1."):
            return None
        if not target.startswith("/") or not _printable_ascii(target) or "#" in target:
            return None
        if target.partition("?")[0] != self._path:
            return None
        hosts = [value.strip() for name, sep, value in
                 (line.partition(":") for line in header_lines) if sep and name.lower() == "host"]
        accepted = {self._authority.lower()}
        if self._port == 80:  # a browser leaves the default port out of Host
            accepted.add(self._uri_host.lower())
        if len(hosts) != 1 or hosts[0].lower() not in accepted:
            return None
        if len(target) + len(self._authority) + len("http://") > MAX_CALLBACK_URL:
            return None
        return target


def _answer(conn: socket.socket, response: bytes) -> None:
    """Hand ``response`` to a local peer, best effort (it may be gone).  What the peer sent
    beyond the head and is already here is read and dropped, without waiting: closing with
    unread data sends a reset, which can make the peer lose the response."""
    try:
        conn.settimeout(_SEND_TIMEOUT)
        conn.sendall(response)
        conn.shutdown(socket.SHUT_WR)
        conn.setblocking(False)
        conn.recv(MAX_CALLBACK_REQUEST)
    except OSError:
        pass


# -- PasteRedirect ------------------------------------------------------------------------------

class PasteRedirect:
    """Print the authorization URL and read the callback URL the user pastes: for a host
    the browser cannot reach (an SSH session).  The user opens the URL anywhere, logs in,
    and copies the address the browser ends on (it fails to load: nothing listens at
    ``redirect_uri`` on that machine, which is expected).

    ``redirect_uri`` is what is registered and sent (default :data:`DEFAULT_REDIRECT_URI`);
    ``input`` reads one line (default :func:`input`); ``output`` receives the instructions
    (default ``sys.stderr`` at the time of the call)."""

    def __init__(self, redirect_uri: str = DEFAULT_REDIRECT_URI,
                 input: Callable[[str], str] = builtins.input,
                 output: TextIO | None = None) -> None:
        if not isinstance(redirect_uri, str) or not redirect_uri:
            raise ValueError("redirect_uri must be a non-empty string")
        self.redirect_uri = redirect_uri
        self._input = input
        self._output = output

    def __repr__(self) -> str:
        return f"<PasteRedirect {self.redirect_uri}>"

    def __call__(self, authorization_url: str) -> str:
        """Show ``authorization_url`` with an instruction and return the pasted line,
        stripped.  Raises :class:`~mcp_proto._auth_errors.UnsafeUrl` for a URL that is not
        https or loopback http (nothing printed), and
        :class:`~mcp_proto._auth_errors.AuthorizationError` when nothing (or more than
        :data:`MAX_CALLBACK_URL` characters) was pasted or the input ended; the caller
        fails the authorization, and the user may try again."""
        check_authorization_url(authorization_url)
        out = self._output if self._output is not None else sys.stderr
        print("Open this URL in a browser to authorize:", file=out)
        print(f"    {authorization_url}", file=out)
        print(f"Then paste here the address the browser was sent to (it starts with "
              f"{self.redirect_uri}).", file=out)
        out.flush()
        try:
            line = self._input("Callback URL: ")
        except EOFError:
            raise AuthorizationError("no callback URL was pasted (end of input)") from None
        pasted = line.strip() if isinstance(line, str) else ""
        if not pasted:
            raise AuthorizationError("no callback URL was pasted")
        if len(pasted) > MAX_CALLBACK_URL:
            raise AuthorizationError(f"the pasted callback URL is {len(pasted)} characters "
                                     f"long, more than {MAX_CALLBACK_URL}")
        return pasted


# -- HeadlessRedirect ---------------------------------------------------------------------------

class HeadlessRedirect:
    """Fetch the authorization URL and return where it redirects: no user, no browser.  For
    tests and the conformance suite, whose authorization servers approve at once and answer
    the authorization request with a redirect to the callback.

    One ``GET`` with :mod:`http.client` (certificates verified against the default trust
    store), no redirect followed, :data:`HEADLESS_TIMEOUT` seconds per network operation,
    the response body never read.  It plays the user's browser, which also goes wherever
    the authorization URL says: the flow's address rules are not applied to it, so use it
    only with authorization servers you trust (a test's, the suite's)."""

    def __repr__(self) -> str:
        return "<HeadlessRedirect>"

    def __call__(self, authorization_url: str) -> str:
        """The ``Location`` of the answer to ``authorization_url``, resolved against it.
        Raises :class:`~mcp_proto._auth_errors.UnsafeUrl` for a URL that is not https or
        loopback http (nothing sent), and
        :class:`~mcp_proto._auth_errors.AuthorizationError` when the endpoint cannot be
        reached or does not answer with a 3xx carrying one ``Location`` (the message has the
        status and the endpoint, never the query)."""
        check_authorization_url(authorization_url)
        import http.client  # noqa: PLC0415 - tests and the conformance client only
        import ssl  # noqa: PLC0415

        parts = urlsplit(authorization_url)
        host = parts.hostname
        assert host is not None
        endpoint = f"{parts.scheme.lower()}://{parts.netloc}{parts.path}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn: http.client.HTTPConnection
        if parts.scheme.lower() == "https":
            conn = http.client.HTTPSConnection(host, parts.port, timeout=HEADLESS_TIMEOUT,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(host, parts.port, timeout=HEADLESS_TIMEOUT)
        try:
            conn.request("GET", target, headers={"Accept": "text/html", "Connection": "close"})
            response = conn.getresponse()
            status = response.status
            locations = response.msg.get_all("Location") or []
        except (OSError, http.client.HTTPException) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else ""
            raise AuthorizationError(f"cannot fetch the authorization endpoint {endpoint}: "
                                     f"{type(exc).__name__}{': ' + detail if detail else ''}"
                                     ) from None
        finally:
            conn.close()
        if not 300 <= status < 400:
            raise AuthorizationError(f"the authorization endpoint {endpoint} answered {status}, "
                                     "not a redirect")
        if len(locations) != 1 or not locations[0].strip():
            raise AuthorizationError(f"the authorization endpoint {endpoint} answered {status} "
                                     f"with {len(locations)} Location headers, not one")
        location = locations[0].strip()
        if len(location) > MAX_CALLBACK_URL:
            raise AuthorizationError(f"the authorization endpoint {endpoint} redirected to a "
                                     f"URL of {len(location)} characters, more than "
                                     f"{MAX_CALLBACK_URL}")
        return urljoin(authorization_url, location)
