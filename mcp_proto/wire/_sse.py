"""An incremental, bounded ``text/event-stream`` parser for the HTTP transport (X-40, H-06).

It follows the WHATWG event-stream interpretation rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):

- the stream is UTF-8, invalid sequences become U+FFFD, and one leading BOM is dropped, only at
  the very start of the stream (a second BOM is part of the first line, as the web platform
  tests require);
- lines end with CRLF, LF or CR; a CR that ends one chunk and an LF that starts the next are
  one line end;
- ``field: value`` (one space after the colon dropped), ``field`` alone (empty value) and
  ``:comment`` lines; ``data`` lines are joined with ``\\n``; ``event`` sets the type (default
  ``message``); ``id`` sets the last event id unless it contains NUL; ``retry`` of ASCII digits
  sets the reconnection time; other fields are ignored;
- a blank line dispatches the event.  Like a browser, the parser always records the event's id
  as :attr:`SseParser.last_event_id` at that point, but yields nothing when no ``data`` line
  came: that is how MCP's priming events (an ``id``, perhaps a ``retry``, no data) are seen.
  A priming event written with an empty ``data:`` line *is* an event, with ``data == ""``;
  the caller skips those (they carry no JSON-RPC message);
- at end of stream an unfinished event is discarded.

Lines are split on the bytes (CR and LF never occur inside a UTF-8 sequence, and the decoder
never lets an invalid sequence swallow an ASCII byte), then each value is decoded on its own;
this gives the same text as decoding the whole stream first.  Comments are not events; their
number is :attr:`SseParser.comments`, so a binding can notice keep-alives.

Bounds: an event's data (its ``data`` values joined by ``\\n``, counted in bytes as received)
may be at most ``max_event_size`` bytes, and a line at most that plus :data:`LINE_OVERHEAD`.
Past either bound the event is dropped: nothing more of it is buffered (the rest of an
over-long line is counted and thrown away as it arrives, as the NDJSON framer does), and at its
blank line the parser yields an :class:`SseOversize` instead of an :class:`SseEvent`.  That
holds for an over-long ``data``, ``event`` or ``id`` line (the last two are a deliberate
departure: the spec would apply them, but neither could be used).  An over-long comment,
``retry`` or unknown-field line is ignored without dropping the event, as the spec ignores
comments and unknown fields (a ``retry`` line that long is hostile).  The parser never rescans
bytes it already searched, so an event arriving in many small chunks costs time linear in its
size.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import LocalProtocolError
from .._limits import MAX_MESSAGE_SIZE

__all__ = ["LINE_OVERHEAD", "MAX_RETRY_MS", "SseEvent", "SseOversize", "SseParser"]

#: Bytes a line may have beyond the data limit: room for the field name, the colon and the
#: space of ``data: <value>`` (6 bytes) with margin, so a data line whose value is exactly at
#: the limit is still read whole.
LINE_OVERHEAD = 64

#: Largest ``retry`` value kept, in milliseconds: the largest signed 64-bit integer, the widest
#: any peer implementation holds.  Larger values are ignored (like a value with a non-digit)
#: rather than parsed, which also keeps ``int()`` away from its digit limit on a hostile line.
#: Bindings should still clamp the wait to something sensible.
MAX_RETRY_MS = 2**63 - 1

_BOM = b"\xef\xbb\xbf"
_LF = 0x0A
_CR = 0x0D
_COLON = 0x3A
_SPACE = 0x20
_MAX_RETRY_DIGITS = len(str(MAX_RETRY_MS))

# What an over-long line was, judged from its first bytes.
_IGNORED, _COMMENT, _DATA, _OTHER = 0, 1, 2, 3


@dataclass(frozen=True, slots=True, kw_only=True)
class SseEvent:
    """One dispatched event."""

    event: str
    """Its type: the last ``event`` field's value, ``"message"`` if none or empty."""
    data: str
    """Its ``data`` values joined by ``\\n``.  May be empty (an empty ``data:`` line)."""
    id: str
    """The last event id in effect when it was dispatched (ids carry over to later events)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SseOversize:
    """An event dropped because it went over the limit; none of its data is kept."""

    size: int
    """Bytes that went over the limit: its data size (all of it, counted as it was thrown
    away), or the length of an over-long ``event`` or ``id`` line if that is larger."""
    event: str
    """Its type as far as known (an over-long ``event`` line did not take effect)."""
    id: str
    """The last event id in effect at its blank line (an over-long ``id`` line did not take
    effect).  :attr:`SseParser.last_event_id` moved to it, as for any event."""


class SseParser:
    """Turns a ``text/event-stream`` body into :class:`SseEvent` and :class:`SseOversize`.

    Use: :meth:`feed` what arrived, then call :meth:`next_event` until it returns ``None``
    (bytes fed are parsed only there, so feeding without draining buffers without bound).
    At end of stream call :meth:`feed_eof`, then drain again.  One parser per HTTP response.

    Raises ``ValueError`` from the constructor if ``max_event_size`` is not positive.
    """

    __slots__ = (
        "_after_cr", "_bom_done", "_buf", "_comments", "_cr_scan", "_data", "_data_size",
        "_discard", "_discard_prefix", "_discard_size", "_eof", "_id", "_last_id", "_lf",
        "_lf_scan", "_max", "_max_line", "_oversize", "_oversize_line", "_retry", "_type",
    )

    def __init__(self, max_event_size: int = MAX_MESSAGE_SIZE) -> None:
        if max_event_size <= 0:
            raise ValueError("max_event_size must be positive")
        self._max = max_event_size
        self._max_line = max_event_size + LINE_OVERHEAD
        # Input: bytes from the start of the current line on.  Searches are remembered:
        # no CR in _buf[:_cr_scan], no LF in _buf[:_lf_scan], and _lf, when not -1, is the
        # first LF.  Consumed lines are deleted from the front (cheap for a bytearray).
        self._buf = bytearray()
        self._cr_scan = 0
        self._lf = -1
        self._lf_scan = 0
        self._bom_done = False
        self._after_cr = False  # the last line ended with a CR that ended the buffer
        self._eof = False
        # Set while the rest of an over-long line is thrown away as it arrives.
        self._discard: int | None = None
        self._discard_size = 0
        self._discard_prefix = 0  # of an over-long data line: "data:" and its space
        # The event being read.
        self._data: list[str] = []
        self._data_size = 0  # bytes of the data buffer, i.e. each value plus one "\n"
        self._oversize = False
        self._oversize_line = 0
        self._type = ""
        self._id = ""  # the spec's "last event ID buffer"
        # Stream state the caller reads.
        self._last_id = ""
        self._retry: int | None = None
        self._comments = 0

    # -- what the caller reads -------------------------------------------------------------

    @property
    def last_event_id(self) -> str:
        """The id to send as ``Last-Event-ID`` when resuming: the id in effect at the last
        blank line, whether or not an event was yielded there (``""`` until then, or after an
        empty ``id`` field).  An ``id`` line of an unfinished event does not count yet."""
        return self._last_id

    @property
    def retry_ms(self) -> int | None:
        """The last valid ``retry`` value in milliseconds (it takes effect at once, even if its
        event is never finished), or ``None`` if the server sent none."""
        return self._retry

    @property
    def comments(self) -> int:
        """Comment lines read so far (servers send them as keep-alives)."""
        return self._comments

    @property
    def buffered(self) -> int:
        """Bytes held: the unfinished line plus the unfinished event's data.  After draining,
        at most ``2 * max_event_size + LINE_OVERHEAD + 1``; bytes fed since count in full."""
        return len(self._buf) + (0 if self._oversize else self._data_size)

    # -- input -----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Take bytes from the stream, split anywhere.

        Raises :class:`LocalProtocolError` after :meth:`feed_eof`.
        """
        if self._eof:
            raise LocalProtocolError("SseParser.feed() called after feed_eof()")
        if not data:
            return
        if self._after_cr:
            self._after_cr = False
            if data[0] == _LF:
                data = data[1:]
        if self._discard is not None:
            data = self._discard_bytes(data.tobytes() if isinstance(data, memoryview) else data)
        buf = self._buf
        buf += data
        if not self._bom_done and (len(buf) >= len(_BOM) or not _BOM.startswith(buf)):
            self._bom_done = True
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]

    def feed_eof(self) -> None:
        """The stream ended.  Events already complete still come out of :meth:`next_event`; an
        unfinished one is discarded, as the spec requires.  Calling it again does nothing."""
        self._eof = True

    def next_event(self) -> SseEvent | SseOversize | None:
        """The next dispatched event, an :class:`SseOversize` for a dropped one, or ``None``
        when more bytes are needed (or the stream ended).  Raises nothing."""
        buf = self._buf
        while True:
            if not self._bom_done:  # one or two bytes that may yet become a BOM
                if self._eof:
                    self._end_of_stream()
                return None
            eol = self._find_eol()
            if eol < 0:
                if self._eof:  # what is left is an unfinished line
                    self._end_of_stream()
                elif len(buf) > self._max_line:
                    self._start_discard()
                return None
            if eol > self._max_line:  # a whole over-long line arrived at once
                self._discard = self._classify(buf)
                self._discard_size = eol
                self._end_discard()
                record = None
            else:
                record = self._line(buf, eol)
            self._consume(eol)
            if record is not None:
                return record

    # -- lines -----------------------------------------------------------------------------

    def _find_eol(self) -> int:
        """Index of the first CR or LF in the buffer, or -1; each byte is searched once."""
        buf = self._buf
        lf = self._lf
        if lf < 0:
            lf = buf.find(b"\n", self._lf_scan)
            if lf < 0:
                self._lf_scan = len(buf)
            else:
                self._lf = lf
        cr = buf.find(b"\r", self._cr_scan, lf if lf >= 0 else len(buf))
        if cr >= 0:
            return cr
        if lf < 0:
            self._cr_scan = len(buf)
        return lf

    def _consume(self, eol: int) -> None:
        """Drop the line ending at ``eol`` and its line end."""
        buf = self._buf
        n = eol + 1
        if buf[eol] == _CR:
            if n == len(buf):
                self._after_cr = True
            elif buf[n] == _LF:
                n += 1
        del buf[:n]
        self._cr_scan = 0  # the CR search never went past the line end
        if self._lf >= 0:
            self._lf -= n
            if self._lf < 0:  # it was this line's LF
                self._lf = -1
                self._lf_scan = 0
        else:
            self._lf_scan -= n  # no LF in the line: the search had passed its end

    def _line(self, buf: bytearray, end: int) -> SseEvent | SseOversize | None:
        """Interpret the line ``buf[:end]``; a blank line dispatches."""
        if end == 0:
            return self._dispatch()
        if buf[0] == _COLON:
            self._comments += 1
            return None
        colon = buf.find(b":", 0, end)
        if colon < 0:
            name_end = start = end
        else:
            name_end, start = colon, colon + 1
            if start < end and buf[start] == _SPACE:
                start += 1
        if name_end > 5:  # longer than any field name: an unknown field
            return None
        name = bytes(buf[:name_end])
        if name == b"data":
            self._data_size += end - start + 1
            if not self._oversize:
                if self._data_size - 1 > self._max:
                    self._drop_event()
                else:
                    # Decode straight from the buffer: a 10 MiB line then costs the text,
                    # not a bytes copy as well (peak memory).
                    with memoryview(buf) as view, view[start:end] as part:
                        self._data.append(str(part, "utf-8", "replace"))
        elif name == b"event":
            self._type = buf[start:end].decode("utf-8", "replace")
        elif name == b"id":
            value = buf[start:end]
            if 0 not in value:
                self._id = value.decode("utf-8", "replace")
        elif name == b"retry":
            value = buf[start:end]
            if value.isdigit():  # ASCII digits only, and at least one
                digits = value.lstrip(b"0") or b"0"
                if len(digits) <= _MAX_RETRY_DIGITS and int(digits) <= MAX_RETRY_MS:
                    self._retry = int(digits)
        return None

    def _dispatch(self) -> SseEvent | SseOversize | None:
        self._last_id = self._id
        record: SseEvent | SseOversize | None
        if self._oversize:
            record = SseOversize(size=max(self._data_size - 1, self._oversize_line),
                                 event=self._type or "message", id=self._id)
        elif self._data_size:
            data = self._data
            record = SseEvent(event=self._type or "message",
                              data=data[0] if len(data) == 1 else "\n".join(data),
                              id=self._id)
        else:  # no data line: nothing to yield (an MCP priming event)
            record = None
        self._reset_event()
        return record

    def _reset_event(self) -> None:
        self._data = []
        self._data_size = 0
        self._oversize = False
        self._oversize_line = 0
        self._type = ""

    def _drop_event(self) -> None:
        self._oversize = True
        self._data = []

    def _end_of_stream(self) -> None:
        self._buf.clear()
        self._discard = None  # an over-long last line without its line end
        self._discard_size = 0
        self._reset_scan()
        self._reset_event()

    def _reset_scan(self) -> None:
        self._cr_scan = self._lf_scan = 0
        self._lf = -1

    # -- over-long lines -------------------------------------------------------------------

    def _classify(self, buf: bytearray) -> int:
        """What the over-long line starting ``buf`` is (it has more than 6 bytes)."""
        if buf[0] == _COLON:
            return _COMMENT
        colon = buf.find(b":", 0, 6)
        name = bytes(buf[:colon]) if colon >= 0 else b""
        if name == b"data":
            # Count the value only, as for a line that fits.
            self._discard_prefix = colon + 2 if buf[colon + 1] == _SPACE else colon + 1
            return _DATA
        if name in (b"event", b"id"):
            return _OTHER
        return _IGNORED  # retry, unknown fields, a line without colon (never a field name)

    def _start_discard(self) -> None:
        buf = self._buf
        self._discard = self._classify(buf)
        self._discard_size = len(buf)
        buf.clear()
        self._reset_scan()

    def _discard_bytes(self, data: bytes | bytearray) -> bytes | bytearray:
        """Throw away ``data`` up to the over-long line's end; return what follows it."""
        lf = data.find(b"\n")
        cr = data.find(b"\r", 0, lf if lf >= 0 else len(data))
        eol = cr if cr >= 0 else lf
        if eol < 0:
            self._discard_size += len(data)
            return b""
        self._discard_size += eol
        self._end_discard()
        n = eol + 1
        if cr >= 0:
            if n == len(data):
                self._after_cr = True
            elif data[n] == _LF:
                n += 1
        return data[n:]

    def _end_discard(self) -> None:
        """The over-long line ended: apply what is known of it."""
        kind, size = self._discard, self._discard_size
        self._discard = None
        self._discard_size = 0
        if kind == _COMMENT:
            self._comments += 1
        elif kind == _DATA:
            self._data_size += size - self._discard_prefix + 1
            self._drop_event()
        elif kind == _OTHER:
            self._oversize_line = max(self._oversize_line, size)
            self._drop_event()
