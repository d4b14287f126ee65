"""The NDJSON framer (X-01): lines, CRLF, limits, discarding, EOF, linear scanning."""

from __future__ import annotations

import sys
import tracemalloc
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import NdjsonFramer, Oversize
from mcp_proto.wire._ndjson import EDGE_BYTES, SHORT_LINES_PER_CALL

Output = bytes | tuple[int, bytes, bytes]


def _output(item: bytes | bytearray | Oversize) -> Output:
    if isinstance(item, Oversize):
        return (item.size, item.head, item.tail)
    return bytes(item)


def drain(framer: NdjsonFramer, bulk: bool = False) -> list[Output]:
    """Every line the framer holds, by next_line() or (bulk) by lines()."""
    out: list[Output] = []
    if bulk:
        while lines := framer.lines():
            out += [_output(item) for item in lines]
        return out
    while (item := framer.next_line()) is not None:
        out.append(_output(item))
    return out


def frame(chunks: list[bytes], max_size: int, *, drain_each: bool = True,
          eof: bool = True, bulk: bool = False, whole: bool = False) -> list[Output]:
    """The lines of ``chunks`` fed in turn; ``whole``: each chunk offered to
    :meth:`NdjsonFramer.whole` first (the session's read of one answer), fed when refused."""
    framer = NdjsonFramer(max_size)
    out: list[Output] = []
    for chunk in chunks:
        if whole and (line := framer.whole(chunk)) is not None:
            out.append(_output(line))
            continue
        framer.feed(chunk)
        if drain_each:
            out += drain(framer, bulk)
    out += drain(framer, bulk)
    if eof:
        framer.feed_eof()
        out += drain(framer, bulk)
    return out


def test_lines_split_on_newline() -> None:
    assert frame([b'{"a":1}\n{"b":2}\n'], 100) == [b'{"a":1}', b'{"b":2}']


def test_crlf_is_stripped_once() -> None:
    assert frame([b"one\r\ntwo\r\r\nthree\n"], 100) == [b"one", b"two\r", b"three"]


def test_empty_lines_are_skipped() -> None:
    assert frame([b"\n\r\n\nx\n\n\r\ny\n"], 100) == [b"x", b"y"]


def test_partial_line_waits_for_its_newline() -> None:
    framer = NdjsonFramer(100)
    framer.feed(b"abc")
    assert framer.next_line() is None
    assert framer.buffered == 3
    framer.feed(b"def\nxy")
    assert drain(framer) == [b"abcdef"]
    assert framer.buffered == 2


def test_returned_line_is_the_callers() -> None:
    framer = NdjsonFramer(100)
    framer.feed(b"abc\ndef\n")
    line = framer.next_line()
    assert isinstance(line, bytearray)
    line[:] = b"zzz"
    assert drain(framer) == [b"def"]


def test_memoryview_input() -> None:
    framer = NdjsonFramer(4)
    framer.feed(memoryview(b"ab\ncdefghij"))  # second line goes over the limit
    assert drain(framer) == [b"ab"]
    framer.feed(memoryview(b"kl\nmn\n"))
    assert drain(framer) == [(10, b"cdefghijkl", b"cdefghijkl"), b"mn"]


def test_limit_is_inclusive_and_cr_does_not_count() -> None:
    assert frame([b"x" * 10 + b"\n"], 10) == [b"x" * 10]
    assert frame([b"x" * 10 + b"\r\n"], 10) == [b"x" * 10]
    # Byte by byte too: the partial line may reach limit + 1 bytes when the last one is \r.
    assert frame([bytes([b]) for b in b"x" * 10 + b"\r\n"], 10) == [b"x" * 10]
    assert frame([b"x" * 11 + b"\n"], 10) == [(11, b"x" * 11, b"x" * 11)]


def test_oversize_complete_line_is_reported_with_its_edges() -> None:
    line = b"H" * EDGE_BYTES + b"m" * 5000 + b"T" * EDGE_BYTES
    out = frame([b"before\n" + line + b"\nafter\n"], 1000)
    assert out == [b"before", (len(line), b"H" * EDGE_BYTES, b"T" * EDGE_BYTES), b"after"]


def test_oversize_partial_line_is_dropped_without_buffering() -> None:
    """A 17 MiB line fed in 64 KiB chunks with a 4 KiB limit never holds more than the
    limit plus one chunk, and the stream resynchronises at the next newline."""
    limit = 4096
    chunk = 64 * 1024
    total = 17 * 1024 * 1024
    body = b"{" + b"x" * (chunk - 1)
    framer = NdjsonFramer(limit)
    out: list[Output] = []
    high_water = 0
    sent = 0
    while sent < total:
        framer.feed(body)
        sent += len(body)
        high_water = max(high_water, framer.buffered)
        out += drain(framer)
        high_water = max(high_water, framer.buffered)
        assert framer.buffered <= limit + 1, "the partial oversize line is being buffered"
    framer.feed(b"}\n" + b'{"next":1}\n')
    out += drain(framer)
    assert high_water <= limit + chunk + 1
    assert len(out) == 2
    size, head, tail = out[0]
    assert size == total + 1
    assert head == body[:EDGE_BYTES]
    assert tail == (b"x" * EDGE_BYTES + b"}")[-EDGE_BYTES:]
    assert out[1] == b'{"next":1}'


def test_feed_eof_delivers_final_unterminated_line() -> None:
    assert frame([b"a\nlast"], 100) == [b"a", b"last"]
    assert frame([b"a\nlast\r"], 100) == [b"a", b"last"]
    assert frame([b"a\n"], 100) == [b"a"]
    assert frame([b""], 100) == []


def test_feed_eof_while_discarding_reports_oversize() -> None:
    framer = NdjsonFramer(EDGE_BYTES)
    line = b"y" * 300 + b"z" * 300
    framer.feed(b"ok\n" + line[:300])
    assert drain(framer) == [b"ok"]
    assert framer.buffered == 0  # already discarding
    framer.feed(line[300:])
    assert drain(framer) == []
    framer.feed_eof()
    assert drain(framer) == [(600, line[:EDGE_BYTES], line[-EDGE_BYTES:])]
    assert framer.next_line() is None


def test_nonpositive_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        NdjsonFramer(0)


class _CountingBuffer(bytearray):
    """Counts the bytes ``find`` is asked to search."""

    searched = 0

    def find(self, sub: Any, start: Any = None, *args: Any) -> int:
        begin = 0 if start is None else start
        _CountingBuffer.searched += max(0, len(self) - begin)
        return super().find(sub, begin, *args)


def test_long_line_fed_one_byte_at_a_time_is_scanned_once() -> None:
    """No rescanning: searching a line fed byte by byte costs its length, not its square."""
    n = 20_000
    framer = NdjsonFramer(n + 10)
    framer._buf = _CountingBuffer()
    _CountingBuffer.searched = 0
    for _ in range(n):
        framer.feed(b"a")
        assert framer.next_line() is None
        assert framer._scan == framer.buffered  # the next search starts at the end
    assert type(framer._buf) is _CountingBuffer  # the counter saw every search
    framer.feed(b"\n")
    assert drain(framer) == [b"a" * n]
    assert _CountingBuffer.searched <= 2 * n + 10


def test_oversize_head_of_partial_line_below_edge_limit() -> None:
    """``Oversize.head`` is documented as the line's first EDGE_BYTES bytes; a line dropped
    while still partial must report the same head as the same line arriving whole."""
    line = bytes(range(48, 88)) * 10  # 400 bytes
    expected = [(400, line[:EDGE_BYTES], line[-EDGE_BYTES:])]
    assert frame([bytes([b]) for b in line + b"\n"], 20) == expected


def test_oversize_head_of_short_complete_line_stops_at_its_newline() -> None:
    out = frame([b"x" * 11 + b"\nnext\n"], 10)
    assert out == [(11, b"x" * 11, b"x" * 11), b"next"]


# -- hypothesis: any split of any stream gives the same lines ----------------------------------

MAX = 300  # above EDGE_BYTES
SMALL_MAX = 20  # below EDGE_BYTES: the head of a line dropped early is completed while dropping


def _long_line(args: tuple[int, bytes]) -> bytes:
    length, pattern = args
    return (pattern * (length // len(pattern) + 1))[:length]


_short = st.binary(max_size=24).map(lambda b: b.replace(b"\n", b""))
_pattern = st.binary(min_size=1, max_size=6).map(lambda b: b.replace(b"\n", b"."))
_long = st.tuples(st.integers(MAX - 2, MAX + 600), _pattern).map(_long_line)
_near_small = st.tuples(st.integers(SMALL_MAX - 2, SMALL_MAX + 300), _pattern).map(_long_line)
_ending = st.sampled_from([b"\n", b"\r\n", b"\n\n"])
_line = st.one_of(_short, _short, _long, _near_small)
_stream = st.tuples(
    st.lists(st.tuples(_line, _ending), max_size=8),
    st.one_of(st.just(b""), _line),  # a final line without newline (EOF)
).map(lambda t: b"".join(a + b for a, b in t[0]) + t[1])


def model(stream: bytes, max_size: int) -> list[Output]:
    """What the framer must output for a whole stream followed by EOF."""
    out: list[Output] = []
    for segment in stream.split(b"\n"):
        content = segment[:-1] if segment.endswith(b"\r") else segment
        if len(content) > max_size:
            out.append((len(segment), segment[:EDGE_BYTES], segment[-EDGE_BYTES:]))
        elif content:
            out.append(content)
    return out


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


@settings(max_examples=200, deadline=None)
@given(stream=_stream, cuts=st.lists(st.integers(0, 10_000), max_size=20),
       limit=st.sampled_from([MAX, SMALL_MAX]))
def test_any_split_gives_the_same_lines(stream: bytes, cuts: list[int], limit: int) -> None:
    expected = model(stream, limit)
    assert frame([stream], limit, drain_each=False) == expected
    assert frame([stream], limit) == expected
    assert frame([stream[i:i + 1] for i in range(len(stream))], limit) == expected
    assert frame(_split(stream, cuts), limit) == expected
    assert frame(_split(stream, cuts), limit, drain_each=False) == expected
    # The one-whole-line shortcut takes some chunks: the same lines, in the same order.
    assert frame([stream], limit, whole=True) == expected
    assert frame(_split(stream, cuts), limit, whole=True) == expected
    assert frame(_split(stream, cuts), limit, drain_each=False, whole=True) == expected
    assert frame([line + b"\n" for line in stream.split(b"\n")], limit, whole=True) \
        == model(stream.replace(b"\n", b"\n\n"), limit)


def test_whole_takes_one_complete_line_only() -> None:
    framer = NdjsonFramer(10)
    assert framer.whole(b'{"a":1}\n') == b'{"a":1}'
    assert framer.whole(b'{"a":1}\r\n') == b'{"a":1}'
    assert framer.whole(b"0123456789\r\n") == b"0123456789"  # the limit, inclusive
    for refused in (b"01234567890\n", b"a\nb\n", b"ab", b"\n", b"\r\n", bytearray(b"ab\n"),
                    memoryview(b"ab\n")):
        assert framer.whole(refused) is None, refused
    assert framer.buffered == 0  # a refusal takes nothing
    framer.feed(b"par")  # something held: the next chunk belongs to it
    assert framer.whole(b"tial\n") is None
    framer.feed(b"tial\n")
    assert framer.next_line() == b"partial"


@settings(max_examples=200, deadline=None)
@given(stream=_stream, cuts=st.lists(st.integers(0, 10_000), max_size=20),
       limit=st.sampled_from([MAX, SMALL_MAX]), bulk_max=st.sampled_from([1 << 18, 64]),
       average=st.sampled_from([0, 32]))
def test_lines_in_bulk_are_the_lines_one_by_one(stream: bytes, cuts: list[int], limit: int,
                                                bulk_max: int, average: int) -> None:
    """lines() splits a small buffer of long enough lines in one pass and the others line
    by line (BULK_SPLIT_MAX and BULK_MIN_AVERAGE_LINE, changed here so that both happen):
    the same lines either way."""
    expected = model(stream, limit)
    with mock.patch("mcp_proto.wire._ndjson.BULK_SPLIT_MAX", bulk_max), \
            mock.patch("mcp_proto.wire._ndjson.BULK_MIN_AVERAGE_LINE", average):
        assert frame([stream], limit, drain_each=False, bulk=True) == expected
        assert frame(_split(stream, cuts), limit, bulk=True) == expected
        assert frame(_split(stream, cuts), limit, drain_each=False, bulk=True) == expected


@pytest.mark.parametrize("limit, gap, pad", [(100, b"\r\n", 0), (1000, b"\n\n", 40)])
def test_bulk_lines_are_the_callers(limit: int, gap: bytes, pad: int) -> None:
    """A read split in one pass gives the caller's lines, as bytearrays, the partial one kept:
    a "\r" before its newline dropped (each line's end looked at), or, in the usual read (no
    line can be over the limit or end in "\r", so no end is looked at), blank lines skipped."""
    framer = NdjsonFramer(limit)
    first = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * pad + b'"}}'
    second = first.replace(b'"id":1', b'"id":2')
    framer.feed(first + gap + second + b'\n{"c"')
    lines = framer.lines()
    assert lines == [first, second]
    assert all(isinstance(line, bytearray) for line in lines)
    assert framer.lines() == []
    framer.feed(b":3}\n")
    assert framer.lines() == [b'{"c":3}']


@pytest.mark.parametrize("line", [b"", b"1", b"{}"])
def test_a_read_of_short_lines_is_not_split_into_objects(line: bytes) -> None:
    """A split makes an object per line, empty ones too: a buffer of short lines goes line
    by line, SHORT_LINES_PER_CALL at a time, so memory stays near the buffer's size."""
    count = (1 << 17) // (len(line) + 1)
    framer = NdjsonFramer(100)
    framer.feed(line + b"\n" + (line + b"\n") * (count - 1) + b'{"a":1}\n')
    got: list[bytes] = []
    tracemalloc.start()
    try:
        while lines := framer.lines():
            assert len(lines) <= SHORT_LINES_PER_CALL
            got += [bytes(x) for x in lines]  # type: ignore[arg-type]
            del lines
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == [line] * (count if line else 0) + [b'{"a":1}']
    # A split would have made every line an object at once (7 MiB for bare newlines); what
    # is kept here (the lines collected as bytes) is counted apart.
    assert peak - sum(map(sys.getsizeof, got)) - sys.getsizeof(got) < 1 << 18
