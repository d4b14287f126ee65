"""What an HTTP error status becomes: one line a user can act on.

:class:`HttpError` names the status and its reason, the URL (secrets replaced:
:func:`~mcp_proto.redact_url`) and the transport that was tried, and appends at most a short
message from the body: a plain-text line, or the ``message`` of a JSON error.  An HTML page
(a proxy's or a framework's error page) is never shown: it is dozens of lines of markup.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import RemoteProtocolError
from .._redact import Redactor

__all__ = ["MAX_ERROR_TEXT", "TRANSPORT_NAMES", "HttpError", "body_message"]

#: Characters of a body's message kept in an error: a line a user reads, not a page.
MAX_ERROR_TEXT = 200

#: Bytes of a body looked at for its message (a JSON error object is a few hundred bytes).
_BODY_PEEK = 4096

#: How each transport is named in an error (:attr:`StreamableHttp.transport` -> the name).
TRANSPORT_NAMES = {"streamable": "Streamable HTTP", "sse": "HTTP+SSE"}

#: Keys of a JSON error body whose string value is its message, in order of preference.
_MESSAGE_KEYS = ("message", "error_description", "detail", "error", "title")


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_ERROR_TEXT else line[:MAX_ERROR_TEXT - 3] + "..."


def _json_message(obj: Any, depth: int = 0) -> str:
    if isinstance(obj, str):
        return obj
    if isinstance(obj, dict) and depth < 3:
        for key in _MESSAGE_KEYS:
            found = _json_message(obj.get(key), depth + 1)
            if found:
                return found
    return ""


def body_message(body: bytes, content_type: str) -> str:
    """The short message of an error body, one line of at most :data:`MAX_ERROR_TEXT`
    characters, or "" (an HTML page, markup, binary, or a JSON body without a message)."""
    head = body[:_BODY_PEEK]
    text = head.decode("utf-8", "replace")
    if len(body) > _BODY_PEEK:
        text = text.rstrip("\ufffd")  # a character cut by the peek
    text = text.strip()
    if not text or "html" in content_type or "xml" in content_type or text.startswith("<"):
        return ""
    if content_type.endswith("json") or text[0] in "{[":
        try:
            return _one_line(_json_message(json.loads(text)))
        except (ValueError, RecursionError):  # cut at the peek, or not JSON after all
            return ""
    if "\ufffd" in text or any(ord(c) < 0x20 and c not in "\t\r\n" for c in text):
        return ""  # binary
    return _one_line(text)


class HttpError(RemoteProtocolError):
    """The server answered an exchange with an HTTP error and no JSON-RPC error to go with it.
    ``status`` is the HTTP status, ``reason`` its reason phrase, ``url`` the endpoint (shown
    without secrets), ``transport`` the one tried; ``body`` the first bytes of the body.  The
    message is one line: ``initialize: HTTP 500 Internal Server Error from
    http://host/mcp (Streamable HTTP)``, plus a short plain-text or JSON message from the body
    (never an HTML page), with the ``redactor``'s secrets replaced (a server may echo a
    header)."""

    def __init__(self, status: int, body: bytes, method: str, *, reason: str = "",
                 url: str = "", transport: str = "", content_type: str = "",
                 redactor: Redactor | None = None) -> None:
        self.status = status
        self.body = body
        self.reason = reason
        self.url = url
        self.transport = transport
        line = f"{method}: HTTP {status}" + (f" {reason}" if reason else "")
        if url:
            line += f" from {url}"
        if transport:
            line += f" ({transport})"
        text = body_message(body, content_type)
        line += f": {text}" if text else ""
        super().__init__(redactor.text(line) if redactor is not None else line)
