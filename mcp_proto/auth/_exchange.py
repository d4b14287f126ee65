"""One HTTP request of the authorization flow (metadata, registration, token), as data.

The flow builds the request bytes with h11 and parses the answer, bounded; the binding only
resolves the host, checks each address against the URL policy, connects, moves the bytes and
closes.  No redirect is ever followed: a 3xx is an answer like any other, and the flow
decides what it means (a metadata candidate that moved is skipped; a token endpoint that
redirects fails).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import h11

from ._urls import AuthUrl

__all__ = ["MAX_AUTH_BODY", "MAX_AUTH_HEAD", "AuthExchange", "AuthResponse"]

#: Bytes of body accepted from a metadata, registration or token endpoint.  Real documents
#: are a few KiB; 64 KiB is plenty, and a hostile or broken server cannot make the client
#: buffer more (the official SDKs read these bodies without a bound).
MAX_AUTH_BODY = 64 * 1024

#: Bytes of response head accepted from those endpoints (status line and headers).
MAX_AUTH_HEAD = 16 * 1024

_USER_AGENT = "mcp-proto"


@dataclass(frozen=True, slots=True)
class AuthResponse:
    """A complete answer: ``status``, ``headers`` (names lowercased, in order) and the
    ``body`` (at most :data:`MAX_AUTH_BODY` bytes)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def json_object(self) -> dict[str, Any] | None:
        """The body as a JSON object, or None if it is not one."""
        try:
            obj = json.loads(self.body)
        except (ValueError, RecursionError):
            return None
        return obj if isinstance(obj, dict) else None


@dataclass(slots=True, eq=False)
class AuthExchange:
    """An HTTP request the binding must carry to :attr:`url`'s origin.

    Send :attr:`data` on a new connection to ``url.host``/``url.port`` (TLS for https, with
    the host as the server name), after checking every resolved address with the flow's
    ``address_allowed``; feed the answer to ``OAuthFlow.receive_exchange_data``; close the
    connection when :attr:`done` (or when the flow lists the exchange in
    ``exchanges_to_abort``).  The repr never shows the request (it may carry a secret).
    """

    id: int
    purpose: str
    """What the request is for, for messages: ``protected resource metadata``,
    ``authorization server metadata``, ``registration``, ``token``, ``refresh``..."""
    url: AuthUrl
    data: bytes = field(repr=False)
    deadline: float
    conn: h11.Connection = field(repr=False)
    status: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list, repr=False)
    body: bytearray = field(default_factory=bytearray, repr=False)
    done: bool = False

    @classmethod
    def build(cls, exchange_id: int, purpose: str, url: AuthUrl, *, method: str,
              deadline: float, headers: list[tuple[str, str]] | None = None,
              form: dict[str, str] | None = None,
              json_body: dict[str, Any] | None = None) -> AuthExchange:
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_AUTH_HEAD)
        head = [("Host", url.authority), ("User-Agent", _USER_AGENT),
                ("Accept", "application/json"), ("Connection", "close"), *(headers or [])]
        body = b""
        if form is not None:
            body = urlencode(form).encode("ascii")
            head.append(("Content-Type", "application/x-www-form-urlencoded"))
        elif json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode()
            head.append(("Content-Type", "application/json"))
        if method == "POST":
            head.append(("Content-Length", str(len(body))))
        data = conn.send(h11.Request(method=method, target=url.target, headers=head))
        if body:
            data += conn.send(h11.Data(data=body))
        data += conn.send(h11.EndOfMessage())
        return cls(exchange_id, purpose, url, data, deadline, conn)

    def feed(self, data: bytes) -> AuthResponse | str | None:
        """Take bytes of the answer (``b""``: the server closed).  Returns the complete
        :class:`AuthResponse`, a string saying why the answer is unusable (malformed, too
        large, closed early), or None while more bytes are needed."""
        try:
            self.conn.receive_data(data)
            while True:
                event = self.conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return None
                if isinstance(event, h11.Response):
                    self.status = event.status_code
                    self.headers = [(k.decode("latin-1").lower(), v.decode("latin-1"))
                                    for k, v in event.headers]
                elif isinstance(event, h11.Data):
                    if len(self.body) + len(event.data) > MAX_AUTH_BODY:
                        return f"the answer is over {MAX_AUTH_BODY} bytes"
                    self.body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    assert self.status is not None
                    return AuthResponse(self.status, tuple(self.headers), bytes(self.body))
                elif isinstance(event, h11.ConnectionClosed):
                    return "the connection closed before the answer ended"
        except h11.RemoteProtocolError as exc:
            return f"bad HTTP answer: {exc}"
