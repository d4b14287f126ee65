"""Reading a byte stream into JSON values: NDJSON lines, decoded, bounded.

:class:`LineReader` is the grammar half of the stdio session (as h11 keeps its readers apart
from its state table): it owns the framer, decodes each line as UTF-8 JSON, and turns a line
too large to keep into :class:`Unreadable` naming the request it answered when its head or
tail says so, so that one request fails instead of none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .._errors import MCPError, MessageTooLarge, RemoteProtocolError
from ._json import loads, scan_once
from ._ndjson import NdjsonFramer, Oversize

__all__ = ["END", "LineReader", "Unreadable"]

# Where an oversize *response* names its id: among its first keys, before ``result`` or
# ``error`` (most servers), or as its last key when ``result``/``error`` comes first (JavaScript
# servers).  Anchored at the ends and requiring a response's shape, so neither an "id" nested in
# the result nor a server request with a colliding id ever matches.  Our ids are integers.
_JSONRPC_KEY = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
_HEAD_ID = re.compile(rb'^\s*\{\s*' + _JSONRPC_KEY + rb'"id"\s*:\s*(-?\d{1,18})\s*,\s*'
                      + _JSONRPC_KEY + rb'"(?:result|error)"\s*:')
_RESPONSE_START = re.compile(rb'^\s*\{\s*' + _JSONRPC_KEY + rb'"(?:result|error)"\s*:')
_TAIL_ID = re.compile(
    rb'"id"\s*:\s*(-?\d{1,18})\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)

END: Any = object()
"""What :meth:`LineReader.next` returns when no complete line is buffered."""


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line that is not a JSON value: ``error`` says why; ``request_id`` is the id of our
    request it answered, when an oversize response names one."""

    error: MCPError
    request_id: int | None = None


class LineReader:
    """NDJSON in, JSON values out; every line bounded by ``max_size`` bytes."""

    __slots__ = ("framer", "max_size")

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.framer = NdjsonFramer(max_size)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self.framer.feed(data)

    def whole(self, data: bytes | bytearray | memoryview) -> Any:
        """The value of ``data`` when it is one whole line and nothing is buffered (as
        :meth:`next` would give it after :meth:`feed`), else :data:`END` and nothing was
        taken: :meth:`feed` it."""
        line = self.framer.whole(data)
        if line is None:
            return END
        try:
            text = line.decode("utf-8")
            # loads(text), inlined (every answer read alone): the C scanner, then json's
            # own call for what it does not take whole (whitespace around it, an error).
            try:
                value, end = scan_once(text, 0)
            except StopIteration:
                end = -1
            return value if end == len(text) else loads(text)
        except (ValueError, RecursionError) as exc:
            return _unreadable(exc)

    def feed_eof(self) -> None:
        """The stream ended: a final unterminated line becomes readable."""
        self.framer.feed_eof()

    def items(self) -> Iterator[Any]:
        """Each complete line's value in turn, as :meth:`next` gives them, until none is
        left (lines that came together are split in one pass, and each is decoded only
        when its turn comes)."""
        framer = self.framer
        while lines := framer.lines():
            lines.reverse()
            while lines:
                line = lines.pop()
                if type(line) is Oversize:
                    yield self._oversize(line)
                    continue
                # self._take, inlined (every line): the bytes go before the parse, the text
                # after it, so a big message is alive once at a time while its value is used.
                try:
                    text = line.decode("utf-8")  # type: ignore[union-attr]
                    del line
                    try:  # loads(text), inlined: see whole()
                        value, end = scan_once(text, 0)
                    except StopIteration:
                        end = -1
                    if end != len(text):
                        value = loads(text)
                    del text
                except (ValueError, RecursionError) as exc:
                    line, text = b"", ""
                    value = _unreadable(exc)
                yield value

    def next(self) -> Any:
        """The next line's JSON value (any type: the caller checks it is a message), an
        :class:`Unreadable`, or :data:`END`."""
        line = self.framer.next_line()
        if line is None:
            return END
        lines: list[bytes | bytearray | Oversize] = [line]
        del line
        return self._take(lines)

    def _take(self, lines: list[bytes | bytearray | Oversize]) -> Any:
        """The value of the last line of ``lines``, taken out of it.  Its bytes are dropped
        before parsing (this frame holds the only reference): a 10 MiB message then peaks at
        two copies (text and result), not three."""
        line = lines.pop()
        if type(line) is Oversize:
            return self._oversize(line)
        try:
            text = line.decode("utf-8")  # type: ignore[union-attr]
            del line
            return loads(text)
        except (ValueError, RecursionError) as exc:
            return _unreadable(exc)

    def _oversize(self, record: Oversize) -> Unreadable:
        error = MessageTooLarge(record.size, self.max_size)
        match = _HEAD_ID.match(record.head)
        if match is None and _RESPONSE_START.match(record.head):
            match = _TAIL_ID.search(record.tail)
        return Unreadable(error, None if match is None else int(match.group(1)))


def _unreadable(exc: Exception) -> Unreadable:
    return Unreadable(RemoteProtocolError(f"server wrote a line that is not UTF-8 JSON: "
                                          f"{type(exc).__name__}: {exc}"[:300]))
