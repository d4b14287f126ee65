"""URL-mode elicitation (2025-11-25, F-03..F-05; an MRTR input request in 2026-07-28).

A server that needs the user somewhere the client must not see (an OAuth consent, a payment,
a credential form) sends ``elicitation/create {mode: "url", message, url, elicitationId}``,
or answers a request with ``-32042`` naming such elicitations.  This module holds what every
room shares of it, and no I/O: :class:`UrlElicitation` (the URL checked before anyone shows
it, its origin and host apart, F-04), :class:`UrlElicitationRequired` (the -32042 error),
the three answers, and :class:`ElicitationTracker` (the ids the session knows are pending,
so a ``notifications/elicitation/complete`` for an unknown or finished one is ignored, F-05).
The library never opens a URL: showing it, and the user opening it, is the host's.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from ._errors import RemoteProtocolError, RpcError

__all__ = [
    "ELICITATION_ACTIONS",
    "MAX_ELICITATION_ID",
    "MAX_ELICITATION_URL",
    "MAX_PENDING_ELICITATIONS",
    "MAX_URL_ELICITATIONS_PER_ERROR",
    "URL_ELICITATION_REQUIRED",
    "ElicitationTracker",
    "InvalidUrlElicitation",
    "UrlElicitation",
    "UrlElicitationRequired",
    "parse_url_elicitation",
    "url_elicitation_error",
    "url_elicitation_result",
]

#: The JSON-RPC code of ``URLElicitationRequiredError`` (2025-11-25 only).
URL_ELICITATION_REQUIRED = -32042
#: The answers to a URL elicitation; ``accept`` is consent only (no content, F-05).
ELICITATION_ACTIONS = ("accept", "decline", "cancel")
#: The longest URL shown: a URL is for a person to read and check, and browsers cut longer.
MAX_ELICITATION_URL = 8192
#: The longest ``elicitationId`` kept: ids are opaque but echoed in events and logs.
MAX_ELICITATION_ID = 256
#: Pending ids remembered per session: a server naming thousands must not grow memory.
MAX_PENDING_ELICITATIONS = 256
#: URL elicitations read from one -32042 (the rest are counted as invalid, never shown): each
#: is a question to the user, and a server naming dozens must not make the client ask them
#: one after another; real flows name one or two (a sign-in, a payment).
MAX_URL_ELICITATIONS_PER_ERROR = 8
#: What a user may be sent to: the web, never ``javascript:``, ``file:`` or ``data:``.
_SCHEMES = frozenset({"https", "http"})
#: The bidirectional controls: in a URL shown to a person they reorder what is read.
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class InvalidUrlElicitation(RemoteProtocolError):
    """A URL-mode elicitation the client cannot show safely (names why): the request is
    answered -32602 (or the entry left out of a -32042's list); nothing reaches the user."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlElicitation:
    """A URL the server asks the user to open, checked (F-04): show :attr:`server`, the
    :attr:`message` and the whole :attr:`url`, with :attr:`host` apart (highlighted) and a
    warning when :attr:`punycode`; never prefetch or open it without the user's consent."""

    message: str
    url: str
    """Exactly as sent."""
    elicitation_id: str | None
    """None in an MRTR round (2026-07-28: the outcome is learned by the retry)."""
    origin: str
    """``scheme://authority``, case-folded."""
    host: str
    """The host as a person reads it (IDNA labels decoded)."""
    punycode: bool
    """The host is internationalized (an ``xn--`` label, or not ASCII): it can imitate
    another name, so the UI should warn."""
    server: str | None = None
    """The host's name for the server that asks (set by the binding)."""

    def with_server(self, name: str) -> UrlElicitation:
        """This elicitation, named as asked by ``name``."""
        return replace(self, server=name)


def _name_chars(host: str) -> bool:
    """Whether ``host`` is only what a domain name holds as a browser reads it: letters,
    digits (of any script), combining marks, ``-`` and ``.``.  Anything else (``%``, which a
    browser decodes, ``\\``, which it reads as ``/``, ``_``, a fraction slash or an
    ideographic full stop that renders as a dot) would make the name shown differ from
    the one visited."""
    return all(c in "-." or (c.isascii() and c.isalnum())
               or (not c.isascii() and unicodedata.category(c)[0] in "LMN") for c in host)


def _host(hostname: str, bracketed: bool) -> tuple[str, bool]:
    """The host as a person reads it (IDNA labels decoded), and whether it is
    internationalized: an ``xn--`` label or a character outside ASCII (either can imitate
    another name, so the UI warns).  Raises :class:`InvalidUrlElicitation` for a host a
    browser would read as another: one with a character no domain name has (after IDNA
    decoding), or a bracketed literal that is not an IPv6 address."""
    if bracketed:
        try:
            ipaddress.IPv6Address(hostname if "%" not in hostname else "")
        except ValueError:
            raise InvalidUrlElicitation("the URL's host is a bracketed literal that is not "
                                        "an IPv6 address") from None
        return hostname, False
    shown, puny = hostname, not hostname.isascii()
    if not puny and any(label.startswith("xn--") for label in hostname.split(".")):
        puny = True
        try:
            shown = hostname.encode("ascii").decode("idna")
        except (UnicodeError, ValueError):
            shown = hostname
    if not _name_chars(shown):
        raise InvalidUrlElicitation("the URL's host has a character no domain name has (a "
                                    "'%', a backslash...): a browser would visit another "
                                    "host than the one shown")
    return shown, puny


def parse_url_elicitation(params: dict[str, Any], *, require_id: bool) -> UrlElicitation:
    """The URL elicitation ``params`` describe (an ``elicitation/create`` in URL mode, an
    entry of a -32042's ``data.elicitations``, or an MRTR input request's params).

    Raises :class:`InvalidUrlElicitation` naming the problem: a message that is not a
    string; a URL that is not a string, longer than :data:`MAX_ELICITATION_URL`, has spaces
    or control characters (bidirectional ones included), cannot be parsed (a bad port), is
    not ``https``/``http`` with a host, carries user information (``user@host`` disguises
    the host), or has a host a browser would read as another (a ``%`` escape, a backslash,
    any character but letters, digits, ``-`` and ``.`` once IDNA-decoded; a bracketed one
    that is no IPv6 address); an
    ``elicitationId`` missing where ``require_id`` (2025-11-25), empty, not a string or
    longer than :data:`MAX_ELICITATION_ID`."""
    message = params.get("message")
    if type(message) is not str:
        raise InvalidUrlElicitation("a URL elicitation's message must be a string")
    url = params.get("url")
    if type(url) is not str or not url:
        raise InvalidUrlElicitation("a URL elicitation must have a url string")
    if len(url) > MAX_ELICITATION_URL:
        raise InvalidUrlElicitation(f"the URL is longer than {MAX_ELICITATION_URL} characters")
    if any(c.isspace() or ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c in _BIDI for c in url):
        raise InvalidUrlElicitation("the URL has spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidUrlElicitation(f"the URL cannot be parsed: {exc}") from None
    if parts.scheme.lower() not in _SCHEMES:
        raise InvalidUrlElicitation(f"the URL's scheme must be https or http, not "
                                    f"{parts.scheme[:20]!r}")
    if not parts.hostname:
        raise InvalidUrlElicitation("the URL must be absolute, with a host")
    if "@" in parts.netloc:
        raise InvalidUrlElicitation("the URL carries user information (user@host), which "
                                    "can disguise its host")
    host, puny = _host(parts.hostname, parts.netloc.startswith("["))
    origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
    del port  # read only to refuse a bad one (urlsplit raises then)
    eid = params.get("elicitationId")
    if eid is None:
        if require_id:
            raise InvalidUrlElicitation("a URL elicitation must have an elicitationId")
    elif type(eid) is not str or not eid or len(eid) > MAX_ELICITATION_ID:
        raise InvalidUrlElicitation(f"elicitationId must be a string of 1..{MAX_ELICITATION_ID} "
                                    "characters")
    return UrlElicitation(message=message, url=url, elicitation_id=eid, origin=origin,
                          host=host, punycode=puny)


class UrlElicitationRequired(RpcError):
    """-32042 (2025-11-25): the request needs the user to complete URL elicitations first.

    :attr:`elicitations` are the entries of ``data.elicitations`` that parse, the first
    :data:`MAX_URL_ELICITATIONS_PER_ERROR` (the others, and those past it, are counted in
    :attr:`invalid`, never shown); :attr:`actions` holds the user's answers once
    the client offered each to the host's handler.  The call was not carried out: retry it
    once the server completed them (the client does with ``retry_url_elicitation``)."""

    def __init__(self, code: int, message: str, data: Any = None, *,
                 method: str = "") -> None:
        super().__init__(code, message, data, method=method)
        found: list[UrlElicitation] = []
        invalid = 0
        items = data.get("elicitations") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else ():
            try:
                if type(item) is not dict:
                    raise InvalidUrlElicitation("not an object")
                if len(found) >= MAX_URL_ELICITATIONS_PER_ERROR:
                    raise InvalidUrlElicitation("one too many")
                found.append(parse_url_elicitation(item, require_id=True))
            except InvalidUrlElicitation:
                invalid += 1
        self.elicitations: tuple[UrlElicitation, ...] = tuple(found)
        self.invalid = invalid
        self.actions: dict[str, str] = {}


def url_elicitation_error(code: int, message: str, data: Any = None, *,
                          method: str = "") -> RpcError:
    """The error of a handshake-era JSON-RPC error answer: :class:`UrlElicitationRequired`
    for -32042, else a plain :class:`RpcError`."""
    if code == URL_ELICITATION_REQUIRED:
        return UrlElicitationRequired(code, message, data, method=method)
    return RpcError(code, message, data, method=method)


def url_elicitation_result(action: object) -> dict[str, Any]:
    """The ``ElicitResult`` of a host's answer to a URL elicitation (``{"action": ...}``, no
    content).  Raises ``TypeError`` / ``ValueError`` for anything but one of
    :data:`ELICITATION_ACTIONS` (the binding answers the server with an error instead)."""
    if type(action) is not str:
        raise TypeError(f"a URL elicitation's answer must be a string, not "
                        f"{type(action).__name__}")
    if action not in ELICITATION_ACTIONS:
        raise ValueError(f"a URL elicitation's answer must be one of "
                         f"{', '.join(ELICITATION_ACTIONS)}, not {action[:40]!r}")
    return {"action": action}


@dataclass(slots=True)
class ElicitationTracker:
    """The URL elicitations a session knows are pending, oldest first, bounded by
    :data:`MAX_PENDING_ELICITATIONS` (the oldest forgotten first)."""

    _pending: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def offered(self, elicitation_id: str) -> None:
        """A URL-mode request arrived for it, or a -32042 named it."""
        pending = self._pending
        pending[elicitation_id] = None
        pending.move_to_end(elicitation_id)
        while len(pending) > MAX_PENDING_ELICITATIONS:
            pending.popitem(last=False)

    def answered(self, elicitation_id: str, action: str) -> None:
        """The user answered: only an ``accept`` stays pending (the flow goes on out of
        band); a decline or a cancel is forgotten."""
        if action != "accept":
            self._pending.pop(elicitation_id, None)

    def completed(self, elicitation_id: str) -> bool:
        """The server said ``elicitation_id`` is complete: True (once) when it was pending;
        False for an unknown or finished id, which the caller ignores (F-05)."""
        if elicitation_id not in self._pending:
            return False
        del self._pending[elicitation_id]
        return True
