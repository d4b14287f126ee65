"""Transcripts of a session: what a client and its server said, as JSON lines (format 1).

A transcript is UTF-8 text, one compact JSON object per ``\\n``-terminated line:

- line 1, the header: ``{"mcp_proto_transcript": 1, "transport": "stdio"|"http",
  "target": str, "client": {"name": .., "version": ..}}`` (``target``: the command joined
  by spaces or the URL, already redacted by whoever wrote it);
- then one entry a line, each with ``t``, the seconds since the transcript started (a float
  rounded to 6 decimals), and one kind:

  ============  ============================================================================
  message       ``{"t", "dir": "send"|"recv", "msg": <JSON-RPC object or batch list>}``
                (``send``: client to server)
  http          ``{"t", "http": {"method": "POST"|"GET"|"DELETE", "status": int|null,
                "headers": {lower-cased name: value}}}`` (credential headers redacted)
  ready         ``{"t", "ready": {"era": "legacy"|"modern", "protocol_version": str}}``
  stderr        ``{"t", "stderr": str}`` (a line the server wrote to its stderr)
  exit          ``{"t", "exit": {"code": int|null, "stderr_tail": str}}`` (the server ended)
  closed        ``{"t", "closed": true}`` (the client closed)
  truncated     ``{"t", "truncated": {"bytes": int}}``: the size bound was hit when the
                transcript held ``bytes`` bytes; nothing follows it
  ============  ============================================================================

:class:`TranscriptWriter` makes the lines (the caller appends them where it likes: the
recorder sits in the bindings' pump, where the bytes already pass) with secrets redacted;
:func:`read_transcript` / :func:`load_transcript` read them back into a :class:`Transcript`
of :class:`Entry` records, refusing anything this version did not write with a
:class:`TranscriptError` naming the line.  Pure: no I/O, no clock (``now`` is a parameter).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._errors import LocalProtocolError, MCPError
from .._limits import MAX_MESSAGE_SIZE
from .._redact import REDACTED, Redactor, is_credential_key
from ..wire._json import dumps

__all__ = [
    "CREDENTIAL_HEADERS",
    "ENTRY_KINDS",
    "MAX_TRANSCRIPT_BYTES",
    "MAX_TRANSCRIPT_ENTRIES",
    "MAX_TRANSCRIPT_LINE",
    "TRANSCRIPT_VERSION",
    "Entry",
    "Transcript",
    "TranscriptError",
    "TranscriptWriter",
    "load_transcript",
    "read_transcript",
]

#: The format this module writes and the only one it reads.  A change that an older reader
#: would misread gets a new number; an older reader then says a newer mcp-proto wrote it.
TRANSCRIPT_VERSION = 1
#: Bytes one transcript may grow to by default (64 MiB): a long session with big results is
#: kept whole, a recorder left on forever cannot fill the disk.  Past it: a ``truncated``
#: entry, then nothing.
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
#: Bytes of one line: a message at the wire's default limit plus its envelope (``t``,
#: ``dir``) and room.  A longer line is refused by the reader and never written.
MAX_TRANSCRIPT_LINE = MAX_MESSAGE_SIZE + 4096
#: Entries one transcript may hold when read: a million is hours of a busy session; more is
#: not a recording this library made, and reading it would hold that many records.
MAX_TRANSCRIPT_ENTRIES = 1_000_000
#: Room kept under the size bound for the ``truncated`` line, so the whole transcript stays
#: within it (the line is under 70 bytes).
_TRUNCATED_ROOM = 96
#: The smallest size bound: the header, the truncated line and room for a few entries.
_MIN_TRANSCRIPT_BYTES = 1024

#: The kinds of :class:`Entry`, in the order the format lists them.
ENTRY_KINDS = ("send", "recv", "http", "ready", "stderr", "exit", "closed", "truncated")
#: Header names whose values are credentials whatever they hold (besides any name
#: :func:`mcp_proto._redact.is_credential_key` flags).  ``mcp-session-id`` is kept: it names
#: the session a replay must echo, and it authorizes nothing by itself.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "set-cookie", "proxy-authorization",
                                "x-api-key"})
_TRANSPORTS = ("stdio", "http")
_HTTP_METHODS = ("POST", "GET", "DELETE")
_ERAS = ("legacy", "modern")
#: The keys of each kind's line besides ``t`` (a line is of a kind when its keys are these).
_KIND_KEYS: dict[frozenset[str], str] = {
    frozenset({"dir", "msg"}): "message", frozenset({"http"}): "http",
    frozenset({"ready"}): "ready", frozenset({"stderr"}): "stderr",
    frozenset({"exit"}): "exit", frozenset({"closed"}): "closed",
    frozenset({"truncated"}): "truncated",
}


class TranscriptError(MCPError):
    """A transcript this version cannot read: not JSON, not an object, a missing or unknown
    version, an unknown kind of entry, a field of the wrong type, a line over
    :data:`MAX_TRANSCRIPT_LINE`, more than :data:`MAX_TRANSCRIPT_ENTRIES` entries.

    :attr:`line` is the 1-based number of the line at fault.  Nothing is read of a transcript
    that raised: record it again (or, for a newer version, upgrade mcp-proto)."""

    def __init__(self, message: str, line: int) -> None:
        self.line = line
        super().__init__(f"transcript line {line}: {message}")


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a transcript."""

    kind: str
    """One of :data:`ENTRY_KINDS`."""
    t: float
    """Seconds since the transcript started."""
    data: Any
    """The message (``send``/``recv``: a JSON-RPC object or a batch list), the ``http`` dict,
    the ``ready`` dict, the ``stderr`` line, the ``exit`` dict, the ``truncated`` dict, or
    None (``closed``)."""
    line: int
    """The 1-based number of its line."""


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript read back: its header's fields and its entries, in order."""

    transport: str
    target: str
    client: dict[str, Any]
    entries: tuple[Entry, ...]

    def _first(self, kind: str) -> Any:
        return next((e.data for e in self.entries if e.kind == kind), None)

    @property
    def era(self) -> str | None:
        """``"legacy"`` or ``"modern"``, from the first ``ready`` entry (None: none)."""
        ready = self._first("ready")
        return None if ready is None else str(ready["era"])

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the first ``ready`` entry (None: none)."""
        ready = self._first("ready")
        return None if ready is None else str(ready["protocol_version"])

    @property
    def exit(self) -> dict[str, Any] | None:
        """The first ``exit`` entry's dict (``code``, ``stderr_tail``), None if the server
        did not end while recorded."""
        found: dict[str, Any] | None = self._first("exit")
        return found

    @property
    def offered_version(self) -> str | None:
        """The version a replay pins to open as the recording did: the one the recorded
        ``initialize`` offered, when the recorded client went straight to the handshake (it
        remembered the era); None when it probed first (a new client does too)."""
        for entry in self.entries:
            if entry.kind == "send" and isinstance(entry.data, dict):
                if entry.data.get("method") != "initialize":
                    return None
                params = entry.data.get("params")
                offered = params.get("protocolVersion") if isinstance(params, dict) else None
                return offered if isinstance(offered, str) else None
        return None

    def runs(self) -> list[Transcript]:
        """This transcript cut after each ``exit`` entry: one transcript a connection (a
        client that reconnected after its server exited recorded one run after the other)."""
        runs: list[Transcript] = []
        start = 0
        entries = self.entries
        for i, entry in enumerate(entries):
            if entry.kind == "exit" and i + 1 < len(entries):
                runs.append(replace(self, entries=entries[start:i + 1]))
                start = i + 1
        runs.append(replace(self, entries=entries[start:]))
        return runs


def _shown_headers(headers: Mapping[str, object],
                   show: Callable[[object], str]) -> dict[str, str]:
    """``headers`` as a transcript shows them: names lower-cased, the value of a credential
    header (:data:`CREDENTIAL_HEADERS`, or a name that looks like one) :data:`REDACTED`, any
    other value as ``show`` makes it."""
    shown: dict[str, str] = {}
    for name, value in headers.items():
        key = str(name).lower()
        credential = key in CREDENTIAL_HEADERS or is_credential_key(key)
        shown[key] = REDACTED if credential else show(value)
    return shown


# -- writing ----------------------------------------------------------------------------------


def _line(obj: dict[str, Any]) -> bytes:
    """``obj`` as one compact line.  A non-finite number (a server may send ``NaN``; the
    wire reads it as ``json`` does) is written as ``json`` writes it, which the reader reads
    back; anything else JSON cannot carry raises :class:`LocalProtocolError`."""
    try:
        return dumps(obj) + b"\n"
    except ValueError:
        pass
    except (TypeError, RecursionError) as exc:
        raise LocalProtocolError(f"not a JSON value: {type(exc).__name__}: {exc}"[:300]) from None
    try:
        return json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"
    except (ValueError, TypeError, RecursionError) as exc:
        raise LocalProtocolError(f"not a JSON value: {type(exc).__name__}: {exc}"[:300]) from None


class TranscriptWriter:
    """Makes the lines of one transcript.  Each method returns the bytes to append (``b""``
    once :attr:`truncated`), never more than ``max_bytes`` in all.

    ``start`` is the caller's clock when the transcript starts; each ``now`` is the same
    clock (one before ``start``, or not finite, counts as ``start``).  Every message,
    stderr line, stderr tail and header value goes through ``redactor`` (its
    :meth:`~mcp_proto.Redactor.message` or :meth:`~mcp_proto.Redactor.text`), and credential
    headers (:data:`CREDENTIAL_HEADERS` and any name that looks like a credential) are
    replaced whole.  Raises :class:`LocalProtocolError` for an argument outside the format
    (a direction, era, method or transport it does not have, a message that is not a JSON
    object or list) and ``ValueError`` from the constructor for a ``max_bytes`` under 1024.
    """

    __slots__ = ("_max", "_redactor", "_start", "client", "target", "transport", "truncated",
                 "written")

    def __init__(self, *, transport: str, target: str, client: Mapping[str, Any],
                 start: float, redactor: Redactor | None = None,
                 max_bytes: int = MAX_TRANSCRIPT_BYTES) -> None:
        if transport not in _TRANSPORTS:
            raise LocalProtocolError(f"transport must be one of {_TRANSPORTS}, not {transport!r}")
        if max_bytes < _MIN_TRANSCRIPT_BYTES:
            raise ValueError(f"max_bytes must be at least {_MIN_TRANSCRIPT_BYTES}")
        self.transport = transport
        self.target = target
        self.client = dict(client)
        self._start = start
        self._redactor = redactor if redactor else None
        self._max = max_bytes
        self.written = 0
        """Bytes returned so far."""
        self.truncated = False
        """Whether the size bound was hit (the ``truncated`` line was returned)."""

    def _t(self, now: float) -> float:
        t = now - self._start
        return round(t, 6) if math.isfinite(t) and t > 0 else 0.0

    def _text(self, s: str) -> str:
        return s if self._redactor is None else self._redactor.text(s)

    def _emit(self, obj: dict[str, Any], now: float | None) -> bytes:
        if self.truncated:
            return b""
        if now is not None:
            obj = {"t": self._t(now), **obj}
        data = _line(obj)
        if len(data) <= MAX_TRANSCRIPT_LINE \
                and self.written + len(data) <= self._max - _TRUNCATED_ROOM:
            self.written += len(data)
            return data
        self.truncated = True
        t = obj.get("t", 0.0)
        marker = _line({"t": t, "truncated": {"bytes": self.written}})
        self.written += len(marker)
        return marker

    def header(self) -> bytes:
        """The header line (write it first, once)."""
        return self._emit({"mcp_proto_transcript": TRANSCRIPT_VERSION,
                           "transport": self.transport, "target": self.target,
                           "client": self.client}, None)

    def message(self, direction: str, obj: Any, now: float) -> bytes:
        """A message: ``direction`` ``"send"`` (client to server) or ``"recv"``; ``obj`` a
        JSON-RPC object or a batch list (as parsed), redacted."""
        if direction not in ("send", "recv"):
            raise LocalProtocolError(f"direction must be 'send' or 'recv', not {direction!r}")
        if not isinstance(obj, (dict, list)):
            raise LocalProtocolError(f"a message is a JSON object or list, not "
                                     f"{type(obj).__name__}")
        msg = obj if self._redactor is None else self._redactor.message(obj)
        return self._emit({"dir": direction, "msg": msg}, now)

    def http(self, method: str, status: int | None, headers: Mapping[str, str],
             now: float) -> bytes:
        """An HTTP exchange: its method, the status of its answer (None: none came) and its
        headers (names lower-cased; credentials replaced by ``<redacted>``)."""
        if method not in _HTTP_METHODS:
            raise LocalProtocolError(f"method must be one of {_HTTP_METHODS}, not {method!r}")
        if status is not None and (type(status) is not int):
            raise LocalProtocolError(f"status must be an int or None, not {status!r}")
        shown = _shown_headers(headers, lambda value: self._text(str(value)))
        return self._emit({"http": {"method": method, "status": status, "headers": shown}},
                          now)

    def ready(self, era: str, version: str, now: float) -> bytes:
        """The session became ready in ``era`` (``"legacy"``/``"modern"``) at ``version``."""
        if era not in _ERAS:
            raise LocalProtocolError(f"era must be one of {_ERAS}, not {era!r}")
        return self._emit({"ready": {"era": era, "protocol_version": str(version)}}, now)

    def stderr(self, line: str, now: float) -> bytes:
        """A line the server wrote to its stderr (without its newline), redacted."""
        return self._emit({"stderr": self._text(str(line))}, now)

    def exit(self, code: int | None, stderr_tail: str, now: float) -> bytes:
        """The server ended with ``code`` (None: unknown); ``stderr_tail`` redacted."""
        if code is not None and type(code) is not int:
            raise LocalProtocolError(f"code must be an int or None, not {code!r}")
        return self._emit({"exit": {"code": code, "stderr_tail": self._text(str(stderr_tail))}},
                          now)

    def closed(self, now: float) -> bytes:
        """The client closed."""
        return self._emit({"closed": True}, now)


# -- reading ----------------------------------------------------------------------------------


def _parse(raw: bytes | bytearray | memoryview | str, number: int) -> dict[str, Any] | None:
    """The object on line ``number`` (None for a blank line); raises TranscriptError."""
    if isinstance(raw, str):
        text = raw
        if len(text) > MAX_TRANSCRIPT_LINE:  # characters <= bytes: a cheap first check
            raise TranscriptError(f"a line of more than {MAX_TRANSCRIPT_LINE} bytes", number)
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise TranscriptError("not UTF-8 (a lone surrogate)", number) from None
    else:
        size = len(raw)
        if size <= MAX_TRANSCRIPT_LINE:
            try:
                text = bytes(raw).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TranscriptError(f"not UTF-8: {exc}"[:300], number) from None
    if size > MAX_TRANSCRIPT_LINE:
        raise TranscriptError(f"a line of {size} bytes, over the limit of "
                              f"{MAX_TRANSCRIPT_LINE}", number)
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except RecursionError:
        raise TranscriptError("not JSON: nested too deep", number) from None
    except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
        raise TranscriptError(f"not JSON: {exc}"[:300], number) from None
    if type(obj) is not dict:
        raise TranscriptError(f"not a JSON object but {type(obj).__name__}", number)
    return obj


def _field(obj: dict[str, Any], key: str, kinds: tuple[type, ...], number: int,
           what: str) -> Any:
    """``obj[key]``, which must be of exactly one of ``kinds`` (``type(None)`` for null; a
    bool is never an int)."""
    if key not in obj:
        raise TranscriptError(f"{what} has no {key!r}", number)
    value = obj[key]
    if type(value) not in kinds:
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise TranscriptError(f"{what}.{key} must be {names}, not {type(value).__name__}",
                              number)
    return value


def _exact_keys(obj: dict[str, Any], keys: tuple[str, ...], number: int, what: str) -> None:
    extra = sorted(set(obj) - set(keys))
    if extra:
        raise TranscriptError(f"{what} has unknown fields {extra}"[:300], number)


def _header(obj: dict[str, Any], number: int) -> tuple[str, str, dict[str, Any]]:
    if "mcp_proto_transcript" not in obj:
        raise TranscriptError("not a transcript: the first line has no "
                              "'mcp_proto_transcript' version", number)
    version = obj["mcp_proto_transcript"]
    if type(version) is int and version > TRANSCRIPT_VERSION:
        raise TranscriptError(f"format version {version} was written by a newer mcp-proto "
                              f"(this one reads version {TRANSCRIPT_VERSION})", number)
    if type(version) is not int or version != TRANSCRIPT_VERSION:
        raise TranscriptError(f"unknown format version {version!r}"[:200], number)
    transport = _field(obj, "transport", (str,), number, "the header")
    if transport not in _TRANSPORTS:
        raise TranscriptError(f"unknown transport {transport!r}"[:200], number)
    target = _field(obj, "target", (str,), number, "the header")
    client = _field(obj, "client", (dict,), number, "the header")
    return transport, target, client


def _entry(obj: dict[str, Any], number: int) -> Entry:
    t = _field(obj, "t", (int, float), number, "an entry")
    if not math.isfinite(t):
        raise TranscriptError(f"an entry's t must be finite, not {t!r}", number)
    kind = _KIND_KEYS.get(frozenset(obj) - {"t"})
    if kind is None:
        keys = sorted(set(obj) - {"t"})
        raise TranscriptError(f"unknown kind of entry (fields {keys})"[:300], number)
    data: Any
    if kind == "message":
        kind = _field(obj, "dir", (str,), number, "a message")
        if kind not in ("send", "recv"):
            raise TranscriptError(f"unknown direction {kind!r}"[:200], number)
        data = _field(obj, "msg", (dict, list), number, "a message")
    elif kind == "http":
        data = _field(obj, "http", (dict,), number, "an entry")
        _exact_keys(data, ("method", "status", "headers"), number, "http")
        if _field(data, "method", (str,), number, "http") not in _HTTP_METHODS:
            raise TranscriptError(f"unknown HTTP method {data['method']!r}"[:200], number)
        _field(data, "status", (int, type(None)), number, "http")
        headers = _field(data, "headers", (dict,), number, "http")
        for value in headers.values():
            if type(value) is not str:
                raise TranscriptError(f"http.headers values must be str, not "
                                      f"{type(value).__name__}", number)
        # As the writer shows them (a file may be written by hand): what is read, written
        # again, reads back the same, and no credential a file holds comes out of it.
        data = {**data, "headers": _shown_headers(headers, str)}
    elif kind == "ready":
        data = _field(obj, "ready", (dict,), number, "an entry")
        _exact_keys(data, ("era", "protocol_version"), number, "ready")
        if _field(data, "era", (str,), number, "ready") not in _ERAS:
            raise TranscriptError(f"unknown era {data['era']!r}"[:200], number)
        _field(data, "protocol_version", (str,), number, "ready")
    elif kind == "stderr":
        data = _field(obj, "stderr", (str,), number, "an entry")
    elif kind == "exit":
        data = _field(obj, "exit", (dict,), number, "an entry")
        _exact_keys(data, ("code", "stderr_tail"), number, "exit")
        _field(data, "code", (int, type(None)), number, "exit")
        _field(data, "stderr_tail", (str,), number, "exit")
    elif kind == "closed":
        if obj["closed"] is not True:
            raise TranscriptError(f"closed must be true, not {obj['closed']!r}"[:200], number)
        data = None
    else:
        data = _field(obj, "truncated", (dict,), number, "an entry")
        _exact_keys(data, ("bytes",), number, "truncated")
        if _field(data, "bytes", (int,), number, "truncated") < 0:
            raise TranscriptError("truncated.bytes must not be negative", number)
    return Entry(kind, float(t), data, number)


def load_transcript(lines: Iterable[bytes | bytearray | memoryview | str]) -> Transcript:
    """The transcript of ``lines`` (each one line, its ``\\n`` or ``\\r\\n`` optional: a
    binary file iterates so; blank lines are skipped).  Raises :class:`TranscriptError`
    naming the first line at fault.  Each line is checked against
    :data:`MAX_TRANSCRIPT_LINE` as it comes; bounding a line before it is read whole is the
    reader's (a binary file's ``readline(limit)``)."""
    header: tuple[str, str, dict[str, Any]] | None = None
    entries: list[Entry] = []
    cut: Entry | None = None
    number = 0
    for number, raw in enumerate(lines, start=1):
        obj = _parse(raw, number)
        if obj is None:
            continue
        if header is None:
            header = _header(obj, number)
            continue
        if cut is not None:
            raise TranscriptError(f"an entry after the truncated one (line {cut.line})", number)
        if len(entries) >= MAX_TRANSCRIPT_ENTRIES:
            raise TranscriptError(f"more than {MAX_TRANSCRIPT_ENTRIES} entries", number)
        entry = _entry(obj, number)
        if entry.kind == "truncated":
            cut = entry
        entries.append(entry)
    if header is None:
        raise TranscriptError("empty: no header", 1)
    transport, target, client = header
    return Transcript(transport, target, client, tuple(entries))


def read_transcript(data: bytes | bytearray | memoryview | str) -> Transcript:
    """The transcript in ``data`` (the whole text).  Raises :class:`TranscriptError` naming
    the first line at fault."""
    parts: list[Any] = data.split("\n") if isinstance(data, str) else bytes(data).split(b"\n")
    if len(parts) > 1 and not parts[-1]:
        parts.pop()  # what follows the last newline
    return load_transcript(parts)
