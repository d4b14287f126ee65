"""Fuzz harness for :class:`mcp_proto.http._status.HttpError` (the one-line error an HTTP
error status becomes) and :func:`body_message` behind it.

``check(data)`` builds an error answer two ways, chosen by the first byte:

- **raw** (a first byte < 0x80): the first byte picks the content type (``0``..``3``: none),
  the status and the transport, the rest is the body;
- **structured** (a first byte >= 0x80): every part is drawn: the status (0, 1xx..5xx, odd
  numbers), the reason phrase (what h11 lets through: tab, space, visible ASCII and latin-1
  ``obs-text``, cut at :data:`MAX_REASON` as the client does), the URL (user-info, query
  values with markers, fragments; shown through :func:`redact_url` as the client does),
  the transport names, the ``Content-Type`` (parameters, case, none), secrets, and a body
  from pieces: HTML pages (with a BOM, leading spaces or text, a doctype, upper case),
  XML, JSON errors (``message``, ``error_description``, ``detail``, ``error``, ``title``,
  nested, non-strings, holding HTML or new lines or secrets, deep, cut at the peek),
  plain text (long, several lines, control characters, invalid UTF-8, a character cut at
  the 4096-byte peek), binary.

Properties (any violation raises AssertionError):

- ``HttpError(...)`` and ``body_message`` never raise (``body_message`` for any content
  type, not only the client's lower-cased ones);
- the message is one line: no ``\\n`` or ``\\r``; the body's part (what follows the
  transport) has no line break of any kind (``str.splitlines``) and is at most
  :data:`MAX_ERROR_TEXT` characters; the message is exactly ``method: HTTP status
  [reason] [from url] [(transport)][: body message]`` with the redactor's secrets replaced;
- an HTML page is never shown: the body's part never contains ``<html`` or ``<!doctype``
  (any case);
- no query value or user-info of the URL, and no secret, shows in the message;
- the attributes are what was given.

Run: ``python fuzz/fuzz_http_error.py /tmp/fz/http_error fuzz/corpus/http_error
-dict=fuzz/http_error.dict``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._redact import REDACTED, Redactor, redact_url
from mcp_proto.http._status import MAX_ERROR_TEXT, TRANSPORT_NAMES, HttpError, body_message
from mcp_proto.http._streamable import MAX_REASON

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {
    # body_message: a body starting with a BOM ("\ufeff<!DOCTYPE html>...") and a content
    # type that is not html/xml: strip() keeps U+FEFF, so the text does not start with "<"
    # and the page is shown as plain text (a BOM before JSON: the JSON shown as text)
    "html-behind-bom": (AssertionError, "behind a BOM"),
    # a plain-text body with a page after some text ("502 Bad Gateway\n<html>..."): only
    # a body that starts with "<" counts as markup
    "html-after-text": (AssertionError, "after text"),
    # a JSON error whose message is an HTML page ({"message": "<html>..."}): shown
    "html-in-json-message": (AssertionError, "in a JSON message"),
}
known_bug = bug_matcher(KNOWN_BUGS)

PEEK = 4096  # the bytes body_message looks at (_status._BODY_PEEK)
MARK = "SeCrEt"
HTML_MARKERS = ("<html", "<!doctype")

CONTENT_TYPES = ("", "text/plain", "text/html", "application/json", "application/problem+json",
                 "application/xml", "text/xml", "application/octet-stream", "text/event-stream",
                 "TEXT/HTML; charset=utf-8", "application/json; charset=utf-8", "text/plain;x",
                 "application/xhtml+xml", "json", " text/html ")
STATUSES = (0, 100, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415, 429, 500, 502, 503, 504,
            599, 999, -1, 10**20)
METHODS = ("initialize", "tools/call", "GET stream", "SSE stream", "", "ping")
TRANSPORTS = ("", *TRANSPORT_NAMES.values(),
              f"{TRANSPORT_NAMES['streamable']}, then {TRANSPORT_NAMES['sse']}")
SECRETS = ("sk-live-0123456789", "Bearer tok-abcdef", "hunter22", "abc")

PAGES = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>\n<body>x</body></html>",
    b"<html>\r\n<body><h1>500</h1></body>\r\n</html>\n",
    b"\xef\xbb\xbf<!doctype html>\n<html lang=en><body>oops</body></html>",
    b"   \n\t<HTML><BODY>Error</BODY></HTML>",
    b"<?xml version='1.0'?><error><message>m</message></error>",
    b"Error: <!DOCTYPE html><html><body>upstream</body></html>",
    b"502 Bad Gateway\n<html><body>nginx</body></html>",
    b"\x00<html>",
    b"\xef\xbb\xbf\xef\xbb\xbf<html>",
)
TEXTS = (b"upstream connect error", b"Unauthorized", b"rate limited: try again in 5s\n",
         b"line one\nline two\r\nline three", b"\x1b[31mred\x1b[0m", b"\xff\xfe\x00x",
         b"caf\xc3\xa9", b"\xe2\x80\xa8sep\xc2\x85nel\x0bvt\x0cff\x1cfs", b"",
         b" \t\n ", b"{", b"[1, 2", b"null", b'"just a string"', b"0")


def _json_body(c: Choices) -> bytes:
    key = c.pick(("message", "error_description", "detail", "error", "title", "msg", "x"))
    value: object = c.pick((
        "bad request", "", "a\nb\r\nc", "<html><body>x</body></html>",
        "<!DOCTYPE html><html>", "  <HTML>", "x" * 300, f"{SECRETS[0]} was refused",
        "\u2028\u0085\x00", 5, None, True, ["m"], {"message": "inner"},
        {"error": {"message": "deep"}}, {"detail": {"title": {"message": "too deep"}}}))
    obj: object = {key: value}
    if c.chance(4):
        obj = {"error": obj, "status": 500}
    if c.chance(6):
        obj = [obj]
    text = json.dumps(obj)
    if c.chance(8):  # deep: written as text (json.dumps stops near 1000 levels)
        levels = c.pick((10, 999, 1100))
        text = '{"error":' * levels + text + "}" * levels
    if c.chance(5):
        text = " " * c.below(PEEK) + text  # cut at the peek
    return text.encode()


def draw_body(c: Choices) -> bytes:
    parts = []
    for _ in range(1 + c.below(3)):
        k = c.below(6)
        if k == 0:
            parts.append(c.pick(PAGES))
        elif k == 1:
            parts.append(_json_body(c))
        elif k == 2:
            parts.append(c.pick(TEXTS))
        elif k == 3:
            parts.append(c.take(c.below(64)))  # binary, from the data
        elif k == 4:  # long text, a multi-byte character across the peek
            parts.append(b"a" * (PEEK - 1 - c.below(3)) + "\u00e9\u20ac".encode() * 3)
        else:
            parts.append(c.pick((b" ", b"\n", b"\xef\xbb\xbf", b"\t", SECRETS[0].encode())))
    return b"".join(parts)


def draw_reason(c: Choices) -> str:
    """What h11 accepts as a reason phrase (tab, space, VCHAR, obs-text), decoded and cut as
    the client does."""
    k = c.below(4)
    if k == 0:
        return c.pick(("", "OK", "Internal Server Error", "Bad Gateway", "Not Found"))
    if k == 1:
        raw = bytes(c.byte() for _ in range(c.below(40)))
        raw = bytes(b for b in raw if b in (9, 32) or 0x21 <= b <= 0x7E or b >= 0x80)
        return raw.decode("latin-1")[:MAX_REASON]
    if k == 2:
        return ("x" * (MAX_REASON + 20))[:MAX_REASON]
    return c.pick(("<html>", "\x85 NEL", "caf\u00e9", "\tTab", f"{SECRETS[0]}"))


def draw_url(c: Choices) -> tuple[str, list[str]]:
    values: list[str] = []
    scheme = c.pick(("https", "http"))
    user = ""
    if c.chance(4):
        values.append(f"{MARK}U{len(values)}")
        user = c.pick(("u:", "")) + values[-1] + "@"
    host = c.pick(("h.example", "127.0.0.1:8080", "[::1]:3000"))
    target = c.pick(("/mcp", "/", "/sse", "/messages"))
    if c.below(3):
        query = []
        for i in range(1 + c.below(3)):
            values.append(f"{MARK}Q{i}" + c.pick(("", "-._~", "%2F", "+x", "/p?q=")))
            query.append(c.pick(("api_key", "k", "sessionId", "token", "")) + "=" + values[-1])
        target += "?" + "&".join(query)
    if c.chance(4):
        target += "#frag"
    return f"{scheme}://{user}{host}{target}", values


def check_error(status: int, body: bytes, method: str, reason: str, url: str,
                transport: str, content_type: str, secrets: list[str],
                values: list[str]) -> None:
    redactor = Redactor(secrets) if secrets else None
    shown_url = redact_url(url, redactor) if url else ""
    try:
        error = HttpError(status, body, method, reason=reason, url=shown_url,
                          transport=transport, content_type=content_type, redactor=redactor)
    except Exception as exc:
        escaped("HttpError()", exc)
    try:
        text = body_message(body, content_type)
    except Exception as exc:
        escaped("body_message()", exc)
    message = str(error)
    assert error.status == status and error.body == body and error.reason == reason
    assert error.url == shown_url and error.transport == transport
    head = f"{method}: HTTP {status}" + (f" {reason}" if reason else "")
    head += f" from {shown_url}" if shown_url else ""
    head += f" ({transport})" if transport else ""
    line = head + (f": {text}" if text else "")
    want = redactor.text(line) if redactor is not None else line
    assert message == want, f"message {message!r}, expected {want!r}"[:400]
    assert "\n" not in message and "\r" not in message, f"two lines: {message!r}"[:400]
    assert len(text) <= MAX_ERROR_TEXT, f"{len(text)} characters of body: {text!r}"[:400]
    assert len(text.splitlines()) <= 1, f"the body's message breaks lines: {text!r}"[:400]
    assert text == text.strip(), f"the body's message is not trimmed: {text!r}"[:300]
    lowered = text.lower()
    if any(marker in lowered for marker in HTML_MARKERS):
        seen = body[:PEEK].decode("utf-8", "replace").strip()
        where = ("behind a BOM" if seen.startswith("\ufeff") else
                 "in a JSON message" if content_type.endswith("json") or seen[:1] in "{["
                 else "after text")
        raise AssertionError(f"an HTML page {where} shows: {text!r} from {body[:80]!r} "
                             f"({content_type!r})"[:400])
    for value in values:
        assert value not in message, f"the URL's {value!r} shows in {message!r}"[:400]
    for piece in message.split(REDACTED):
        for secret in secrets:
            if len(secret.strip()) >= 4 and not secret.lower().startswith("bearer"):
                assert secret.strip() not in piece, f"secret shows in {message!r}"[:400]


def check(data: bytes) -> None:
    if data and data[0] >= 0x80:
        c = Choices(data[1:])
        status = c.pick(STATUSES) if c.below(4) else 100 + c.below(500)
        body = draw_body(c)
        method = c.pick(METHODS)
        reason = draw_reason(c)
        url, values = draw_url(c) if c.below(6) else ("", [])
        transport = c.pick(TRANSPORTS)
        header = c.pick(CONTENT_TYPES)
        # as the client reads it: the media type, lower case, no parameters
        content_type = header.split(";")[0].strip().lower() if c.below(4) else header
        secrets = [c.pick(SECRETS) for _ in range(c.below(3))]
    else:
        b0 = data[0] if data else 0
        status = STATUSES[b0 % len(STATUSES)]
        body = data[1:]
        method = "initialize"
        reason = "Internal Server Error" if b0 % 2 else ""
        url, values = f"https://h.example/mcp?api_key={MARK}Q0", [f"{MARK}Q0"]
        transport = TRANSPORTS[b0 % len(TRANSPORTS)]
        content_type = CONTENT_TYPES[(b0 >> 2) % len(CONTENT_TYPES)].split(";")[0].strip()
        secrets = [SECRETS[0]]
    check_error(status, body, method, reason, url, transport, content_type, secrets, values)
    # body_message for any content type, the raw header value too
    for kind in (content_type.upper(), " ", "text/html; charset=utf-8"):
        try:
            body_message(body, kind)
        except Exception as exc:
            escaped(f"body_message(..., {kind!r})", exc)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
