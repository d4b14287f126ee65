"""A bounded newline-delimited framer for the stdio transport (X-01).

One JSON-RPC message per line, ``\\n``-terminated; a ``\\r`` before the ``\\n`` is tolerated and
dropped; empty lines are skipped.  The framer never rescans bytes it already searched (it
remembers where its last search stopped, as h11's receive buffer does), so a message that
arrives in many small chunks costs time linear in its size.

A line longer than the limit is not buffered: as soon as the partial line passes the limit the
framer drops it and keeps dropping until the next newline, remembering only its first and last
few bytes (so the session can tell which request it answered).  The line then comes out of
:meth:`NdjsonFramer.next_line` as an :class:`Oversize` record instead of bytes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .._limits import MAX_MESSAGE_SIZE

__all__ = ["BULK_MIN_AVERAGE_LINE", "BULK_SPLIT_MAX", "EDGE_BYTES", "SHORT_LINES_PER_CALL",
           "NdjsonFramer", "Oversize"]

#: Bytes kept from each end of an oversize line: enough to find the ``"id"`` of a response
#: whose id comes first (most servers) or last (JavaScript servers that put ``result`` first).
EDGE_BYTES = 256
#: A buffer up to this size is split into all its lines in one pass (the many small answers
#: one read brings under load); a larger one goes line by line, so that a big message is
#: handed over without a copy and only one decoded message is alive at a time.
BULK_SPLIT_MAX = 1 << 18
#: ... and only when its lines are this long on average: a split makes an object per line,
#: empty ones too, so a read of bare newlines would otherwise cost many times its size.
#: Real messages are longer (``{"jsonrpc":"2.0","id":1,"result":{}}`` is 36 bytes); a buffer
#: of shorter lines goes line by line, :data:`SHORT_LINES_PER_CALL` at a time.
BULK_MIN_AVERAGE_LINE = 32
#: Lines :meth:`NdjsonFramer.lines` gives at a time from a buffer of short lines (bounded, so
#: that their objects stay few; the buffer is judged once per :meth:`~NdjsonFramer.feed`).
SHORT_LINES_PER_CALL = 64


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line that exceeded the limit and was discarded."""

    size: int
    """Length of the whole line in bytes, without its newline."""
    head: bytes
    """Its first :data:`EDGE_BYTES` bytes."""
    tail: bytes
    """Its last :data:`EDGE_BYTES` bytes."""


class NdjsonFramer:
    """Splits a byte stream into lines, each at most ``max_message_size`` bytes.

    Use: :meth:`feed` what arrived, then call :meth:`next_line` until it returns ``None``
    (or :meth:`lines` until it returns an empty list: the same lines, many at a time).  At
    end of stream, :meth:`feed_eof` turns a final unterminated line into a line.
    """

    __slots__ = ("_buf", "_discarding", "_head", "_max", "_ready", "_scan", "_short", "_size",
                 "_tail")

    def __init__(self, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        if max_message_size <= 0:
            raise ValueError("max_message_size must be positive")
        self._max = max_message_size
        self._buf = bytearray()
        self._scan = 0
        self._short: bool | None = None  # the buffer holds short lines (None: not judged yet)
        self._ready: deque[Oversize] = deque()
        # Discard state: set while the rest of an oversize line is being dropped.
        self._discarding = False
        self._size = 0
        self._head = b""
        self._tail = b""

    @property
    def buffered(self) -> int:
        """Bytes held, waiting for their newline (never more than the limit plus one chunk)."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Take bytes from the stream."""
        self._short = None
        if self._discarding:
            self._discard(data)
        else:
            self._buf += data

    def whole(self, data: bytes | bytearray | memoryview) -> bytes | None:
        """``data`` as a line (without ``\\r\\n``) when it is exactly one complete line of at
        most the limit and nothing is buffered: the common read of one answer, taken without
        a copy into the buffer.  Otherwise None, and nothing was taken: :meth:`feed` it."""
        if type(data) is not bytes or self._buf or self._ready or self._discarding:
            return None
        nl = len(data) - 1
        if nl < 1 or data.find(b"\n") != nl:
            return None
        end = nl - 1 if data[nl - 1] == 13 else nl  # 13 == "\r"
        if end > self._max or not end:  # (an empty line: the framer skips it)
            return None
        return data[:end]

    def feed_eof(self) -> None:
        """The stream ended: a final line without a newline is still delivered."""
        if self._discarding:
            self._finish_discard()
        elif self._buf and not self._buf.endswith(b"\n"):
            self._buf += b"\n"

    def next_line(self) -> bytearray | Oversize | None:
        """The next complete line (without ``\\r\\n``), an :class:`Oversize`, or ``None``.

        The returned bytearray is the caller's to keep or mutate.
        """
        if self._ready:
            return self._ready.popleft()
        buf = self._buf
        while True:
            nl = buf.find(b"\n", self._scan)
            if nl < 0:
                if len(buf) > self._max + 1:  # +1: a trailing \r does not count
                    self._start_discard()
                    return self._ready.popleft() if self._ready else None
                self._scan = len(buf)
                return None
            self._scan = 0
            end = nl - 1 if nl and buf[nl - 1] == 13 else nl  # 13 == "\r"
            if end > self._max:
                head = bytes(buf[:min(EDGE_BYTES, nl)])
                record = Oversize(nl, head, bytes(buf[max(0, nl - EDGE_BYTES):nl]))
                del buf[: nl + 1]
                return record
            if nl == len(buf) - 1:
                # The line is the whole buffer (typical of large messages): hand it over
                # without copying.
                self._buf = bytearray()
                if end != nl:
                    del buf[end:]
                else:
                    del buf[nl]
                line = buf
            else:
                line = buf[:end]
                del buf[: nl + 1]
            if line:
                return line
            buf = self._buf

    def lines(self) -> list[bytes | bytearray | Oversize]:
        """The next complete lines, in order, as :meth:`next_line` gives them (all of them
        when the buffer is small, else the next one); empty when no line is complete."""
        buf = self._buf
        size = len(buf)
        if self._ready or self._discarding or size > BULK_SPLIT_MAX \
                or buf.find(b"\n", self._scan) < 0:
            line = self.next_line()
            return [] if line is None else [line]
        if self._short is None:  # once per feed: a count per call would make this quadratic
            self._short = buf.count(b"\n") * BULK_MIN_AVERAGE_LINE > size
        if self._short:
            lines: list[bytes | bytearray | Oversize] = []
            while len(lines) < SHORT_LINES_PER_CALL and (line := self.next_line()) is not None:
                lines.append(line)
            return lines
        parts = buf.split(b"\n")
        self._buf = parts.pop()  # what follows the last newline
        self._scan = len(self._buf)  # it holds no newline
        limit = self._max
        if size <= limit and buf.find(b"\r") < 0:
            # (the usual read) No line can be over the limit, none ends in "\r": the lines as
            # they are, the empty ones skipped, without a look at each one's end.
            return [line for line in parts if line]
        out: list[bytes | bytearray | Oversize] = []
        for line in parts:
            size = len(line)
            end = size - 1 if size and line[-1] == 13 else size  # 13 == "\r"
            if end > limit:
                out.append(Oversize(size, bytes(line[:EDGE_BYTES]),
                                    bytes(line[max(0, size - EDGE_BYTES):])))
            elif end:
                if end != size:
                    del line[end:]
                out.append(line)
        if len(self._buf) > limit + 1:
            line = self.next_line()  # starts dropping the partial line, as next_line does
            if line is not None:
                out.append(line)
        return out

    # -- discard mode ---------------------------------------------------------------------

    def _start_discard(self) -> None:
        buf = self._buf
        self._discarding = True
        self._size = len(buf)
        self._head = bytes(buf[:EDGE_BYTES])
        self._tail = bytes(buf[-EDGE_BYTES:])
        self._buf = bytearray()
        self._scan = 0

    def _discard(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        nl = bytes(view).find(b"\n") if isinstance(data, memoryview) else data.find(b"\n")
        missing = EDGE_BYTES - len(self._head)
        if missing > 0:  # only when the limit is below EDGE_BYTES
            self._head += bytes(view[:min(missing, len(view) if nl < 0 else nl)])
        if nl < 0:
            self._size += len(view)
            self._tail = (self._tail + bytes(view[-EDGE_BYTES:]))[-EDGE_BYTES:]
            return
        self._size += nl
        self._tail = (self._tail + bytes(view[max(0, nl - EDGE_BYTES):nl]))[-EDGE_BYTES:]
        self._finish_discard()
        self._buf += view[nl + 1:]

    def _finish_discard(self) -> None:
        self._discarding = False
        self._ready.append(Oversize(self._size, self._head, self._tail))
        self._head = self._tail = b""
        self._size = 0
