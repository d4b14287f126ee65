"""The event-stream parser (X-40, H-06): WHATWG rules, chunking, limits, linear scanning."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._errors import LocalProtocolError
from mcp_proto._limits import MAX_MESSAGE_SIZE
from mcp_proto.wire._sse import LINE_OVERHEAD, MAX_RETRY_MS, SseEvent, SseOversize, SseParser

Record = SseEvent | SseOversize
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Outcome:
    records: list[Record]
    last_event_id: str
    retry_ms: int | None
    comments: int


def drain(parser: SseParser) -> list[Record]:
    out: list[Record] = []
    while (record := parser.next_event()) is not None:
        out.append(record)
    return out


def parse(chunks: list[bytes] | bytes, max_size: int = MAX_MESSAGE_SIZE, *,
          drain_each: bool = True, eof: bool = True) -> Outcome:
    parser = SseParser(max_size)
    out: list[Record] = []
    for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
        parser.feed(chunk)
        if drain_each:
            out += drain(parser)
            assert parser.buffered <= 2 * max_size + LINE_OVERHEAD + 1
    out += drain(parser)
    if eof:
        parser.feed_eof()
        out += drain(parser)
        assert parser.buffered == 0
    return Outcome(out, parser.last_event_id, parser.retry_ms, parser.comments)


def events(stream: bytes, max_size: int = MAX_MESSAGE_SIZE) -> list[Record]:
    return parse(stream, max_size).records


def ev(data: str, event: str = "message", id: str = "") -> SseEvent:
    return SseEvent(event=event, data=data, id=id)


# -- the spec's examples -------------------------------------------------------------------


def test_spec_stock_ticker() -> None:
    assert events(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [ev("YHOO\n+2\n10")]


def test_spec_test_stream() -> None:
    stream = (b": test stream\n\ndata: first event\nid: 1\n\n"
              b"data:second event\nid\n\ndata:  third event\n")
    outcome = parse(stream)
    # The third event lacks its blank line: the end of the stream does not dispatch it.
    assert outcome.records == [ev("first event", id="1"), ev("second event", id="")]
    assert outcome.comments == 1
    assert outcome.last_event_id == ""
    assert events(stream + b"\n")[-1] == ev(" third event")


def test_spec_empty_data_lines() -> None:
    # "data" alone is a data field with an empty value; the final "data:" is never finished.
    assert events(b"data\n\ndata\ndata\n\ndata:") == [ev(""), ev("\n")]


def test_spec_space_after_colon_is_optional() -> None:
    assert events(b"data:test\n\ndata: test\n\n") == [ev("test"), ev("test")]


def test_spec_event_types() -> None:
    stream = (b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n"
              b"event: add\ndata: 113411\n\n")
    assert events(stream) == [ev("73857293", "add"), ev("2153", "remove"), ev("113411", "add")]


# -- lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_each_line_end(eol: bytes) -> None:
    stream = b"data: a" + eol + b"data: b" + eol + eol + b"id: 7" + eol + eol
    outcome = parse(stream)
    assert outcome.records == [ev("a\nb")]
    assert outcome.last_event_id == "7"


def test_mixed_line_ends() -> None:
    stream = b"data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r: x\n\n\rdata: e\n\r"
    assert events(stream) == [ev("a\nb\nc"), ev("d"), ev("e")]


def test_cr_lf_split_across_chunks_is_one_line_end() -> None:
    parser = SseParser()
    parser.feed(b"data: a\r")
    parser.feed(b"\ndata: b\r")
    assert drain(parser) == []
    parser.feed(b"\n\r")  # the blank line's CR dispatches at once, without waiting for more
    assert drain(parser) == [ev("a\nb")]
    parser.feed(b"\n")  # the LF of that CRLF: not a second blank line
    parser.feed(b"data: c\r")
    parser.feed(b"\r")  # CR CR: two line ends
    assert drain(parser) == [ev("c")]


def test_cr_then_lf_after_drain_of_other_events() -> None:
    parser = SseParser()
    parser.feed(b"data: a\n\ndata: b\r\r")
    assert drain(parser) == [ev("a"), ev("b")]
    parser.feed(b"\ndata: c\n\n")
    assert drain(parser) == [ev("c")]


def test_field_parsing() -> None:
    stream = (b"data:  two spaces\ndata:a:b\ndata\ndata:\nDATA: case\nfoo: bar\nfoo\n"
              b"data \n\n")
    # "data " (trailing space, no colon) is an unknown field name.
    assert events(stream) == [ev(" two spaces\na:b\n\n")]


def test_event_type_resets_after_each_dispatch() -> None:
    stream = b"event: a\ndata: 1\n\ndata: 2\n\nevent: b\n\ndata: 3\n\nevent:\ndata: 4\n\n"
    assert events(stream) == [ev("1", "a"), ev("2"), ev("3"), ev("4")]


def test_comments_are_counted_not_yielded() -> None:
    parser = SseParser()
    parser.feed(b":\n: keep-alive\r\n:ping\r")
    assert drain(parser) == []
    assert parser.comments == 3
    parser.feed(b"data: x\n:in the middle\ndata: y\n\n")
    assert drain(parser) == [ev("x\ny")]
    assert parser.comments == 4


# -- decoding ------------------------------------------------------------------------------


def test_bom_stripped_at_start_only() -> None:
    assert events(BOM + b"data: 1\n\n" + BOM + b"data: 2\n\ndata: 3\n\n") == [ev("1"), ev("3")]


def test_only_one_bom_stripped() -> None:
    assert events(BOM + BOM + b"data: 1\n\ndata: 2\n\n") == [ev("2")]


def test_bom_split_across_chunks() -> None:
    assert parse([b"\xef", b"", b"\xbb", b"\xbfdata: 1\n\n"]).records == [ev("1")]
    assert parse([b"\xef\xbb", b"data: 1\n\n"]).records == []  # U+FFFD + "data" is unknown
    assert parse([b"\xef\xbb"]).records == []
    assert parse([b"\xef\xbb\n", b"data: 1\n\n"]).records == [ev("1")]


def test_bom_inside_value_is_kept() -> None:
    assert events(b"data: \xef\xbb\xbfx\n\n") == [ev("\ufeffx")]


def test_invalid_utf8_is_replaced() -> None:
    stream = b"data: a\xffb\xe2\x82\n\xc3\ndata: \xe2\x82\xac\n\n"
    assert events(stream) == [ev("a\ufffdb\ufffd\n\u20ac")]


def test_multibyte_character_split_across_chunks() -> None:
    chunks = [b"data: \xf0", b"\x9f", b"\x98", b"\x80!\n", b"\n"]
    assert parse(chunks).records == [ev("\U0001f600!")]


# -- id and retry --------------------------------------------------------------------------


def test_id_persists_and_updates_at_dispatch() -> None:
    parser = SseParser()
    parser.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\n")
    assert drain(parser) == [ev("a", id="1"), ev("b", id="1")]
    assert parser.last_event_id == "1"  # "id: 2" belongs to an unfinished event
    parser.feed(b"data: c\n\nid\n\n")
    assert drain(parser) == [ev("c", id="2")]
    assert parser.last_event_id == ""  # an empty id resets it


def test_id_with_nul_is_ignored() -> None:
    outcome = parse(b"id: 1\n\nid: a\x00b\ndata: x\n\n")
    assert outcome.records == [ev("x", id="1")]
    assert outcome.last_event_id == "1"


def test_priming_event_yields_nothing_but_sets_id_and_retry() -> None:
    parser = SseParser()
    parser.feed(b"id: stream-1:0\nretry: 2500\n\n")
    assert drain(parser) == []
    assert parser.last_event_id == "stream-1:0"
    assert parser.retry_ms == 2500
    # The form with an empty data line is an event with empty data (the caller skips it).
    parser.feed(b"id: stream-1:1\ndata:\n\n")
    assert drain(parser) == [ev("", id="stream-1:1")]


def test_priming_event_type_is_reset() -> None:
    assert events(b"event: x\nid: 1\n\ndata: y\n\n") == [ev("y", id="1")]


@pytest.mark.parametrize(("value", "expected"), [
    (b"0", 0), (b"3000", 3000), (b"007", 7), (b"0" * 5000 + b"9", 9),
    (str(MAX_RETRY_MS).encode(), MAX_RETRY_MS),
    (b"", None), (b"1a", None), (b"-1", None), (b"+1", None), (b"1.5", None),
    (b" 10", None), (b"10 ", None), ("\u0661\u0662".encode(), None), (b"1e3", None),
    (str(MAX_RETRY_MS + 1).encode(), None), (b"9" * 5000, None),
])
def test_retry(value: bytes, expected: int | None) -> None:
    assert parse(b"retry: " + value + b"\n").retry_ms == expected
    assert parse(b"retry: 1\nretry: " + value + b"\n").retry_ms == (
        1 if expected is None else expected)


def test_retry_takes_effect_without_a_blank_line_but_needs_its_line_end() -> None:
    assert parse(b"retry: 5\ndata: x\n").retry_ms == 5
    assert parse(b"retry: 5").retry_ms is None


# -- end of stream -------------------------------------------------------------------------


def test_eof_discards_the_unfinished_event_only() -> None:
    parser = SseParser()
    parser.feed(b"data: a\n\ndata: b\nid: 9\n")
    parser.feed_eof()
    parser.feed_eof()
    assert drain(parser) == [ev("a")]
    assert parser.last_event_id == ""
    assert parser.buffered == 0
    assert parser.next_event() is None


def test_unterminated_last_line_is_discarded() -> None:
    assert parse(b"data: a\n\ndata: b\n\nid: 3").last_event_id == ""
    assert parse(b"data: a\n\n\n\r\n:x").comments == 0


def test_feed_after_eof_is_a_local_error() -> None:
    parser = SseParser()
    parser.feed_eof()
    with pytest.raises(LocalProtocolError):
        parser.feed(b"data: x\n\n")


def test_constructor_rejects_non_positive_limit() -> None:
    with pytest.raises(ValueError, match="positive"):
        SseParser(0)


def test_bytearray_and_memoryview_input() -> None:
    chunks: list[bytes | bytearray | memoryview] = [
        bytearray(b"data: a\r"), memoryview(b"\ndata: b"), memoryview(b"\n\n")]
    parser = SseParser()
    out: list[Record] = []
    for chunk in chunks:
        parser.feed(chunk)
        out += drain(parser)
    assert out == [ev("a\nb")]


def test_records_are_frozen_slotted() -> None:
    for record in (ev("x"), SseOversize(size=1, event="message", id="")):
        assert not hasattr(record, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.id = "y"  # type: ignore[misc]


# -- limits --------------------------------------------------------------------------------


def test_data_at_the_limit_is_kept() -> None:
    value = b"x" * 100
    assert events(b"data: " + value + b"\n\n", 100) == [ev(value.decode())]
    assert events(b"data: " + value[:50] + b"\ndata: " + value[:49] + b"\n\n", 100) == [
        ev("x" * 50 + "\n" + "x" * 49)]


def test_data_over_the_limit_in_many_lines() -> None:
    stream = b"event: big\nid: 5\n" + b"data: 0123456789\n" * 20 + b"\ndata: next\n\n"
    outcome = parse(stream, 100)
    assert outcome.records == [SseOversize(size=20 * 11 - 1, event="big", id="5"),
                               ev("next", id="5")]
    assert outcome.last_event_id == "5"


@pytest.mark.parametrize("drain_each", [True, False])
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_over_long_lines(chunk: int, drain_each: bool) -> None:
    long = b"y" * 300
    stream = (b"id: 1\ndata:" + long + b"\ndata: z\n\n"  # over-long data line
              b":" + long + b"\r\n"                    # over-long comment: ignored
              b"foo: " + long + b"\rdata: ok\n\n"      # over-long unknown field: ignored
              b"retry: " + b"1" * 300 + b"\ndata: ok2\n\n"  # over-long retry: ignored
              b"event: " + long + b"\ndata: a\n\n"     # over-long event line: dropped
              b"id: " + long + b"\ndata: b\n\n"        # over-long id line: dropped
              b"data: after\n\n")
    chunks = [stream[i:i + chunk] for i in range(0, len(stream), chunk)]
    outcome = parse(chunks, 100, drain_each=drain_each)
    assert outcome.records == [
        SseOversize(size=300 + 1 + 1, event="message", id="1"),
        ev("ok", id="1"),
        ev("ok2", id="1"),
        SseOversize(size=307, event="message", id="1"),
        SseOversize(size=304, event="message", id="1"),
        ev("after", id="1"),
    ]
    assert outcome.comments == 1
    assert outcome.retry_ms is None


def test_oversize_reports_the_longest_line() -> None:
    stream = b"event: " + b"e" * 300 + b"\nid: " + b"i" * 200 + b"\ndata: x\n\n"
    assert events(stream, 100) == [SseOversize(size=307, event="message", id="")]


def test_over_long_line_at_eof_is_dropped() -> None:
    parser = SseParser(10)
    parser.feed(b"data: a\n\ndata: " + b"x" * 200)
    assert drain(parser) == [ev("a")]
    parser.feed(b"x" * 200)
    parser.feed_eof()
    assert drain(parser) == []
    assert parser.buffered == 0


@pytest.mark.parametrize("line_size", [1000, 17 * 1024 * 1024])
def test_oversize_is_not_buffered(line_size: int) -> None:
    """17 MiB of data in 64 KiB chunks, as one line or many, with a 4 KiB limit."""
    limit, chunk = 4096, 64 * 1024
    line = b"data: " + b"x" * (line_size - 6) + b"\n"
    body = line * max(1, 17 * 1024 * 1024 // len(line))
    stream = b"id: big\n" + body + b"\n" + b"data: small\n\n"
    parser = SseParser(limit)
    out: list[Record] = []
    high = 0
    for start in range(0, len(stream), chunk):
        parser.feed(memoryview(stream)[start:start + chunk])
        high = max(high, parser.buffered)
        out += drain(parser)
        high = max(high, parser.buffered)
    parser.feed_eof()
    out += drain(parser)
    assert high <= limit + LINE_OVERHEAD + chunk
    data_size = len(body) - len(body) // len(line) * 6 - 1
    assert out == [SseOversize(size=data_size, event="message", id="big"),
                   ev("small", id="big")]


def test_default_limit_is_the_message_limit() -> None:
    value = b"x" * MAX_MESSAGE_SIZE
    assert events(b"data: " + value + b"\n\n") == [ev(value.decode())]
    assert events(b"data: " + value + b"x\n\n") == [
        SseOversize(size=MAX_MESSAGE_SIZE + 1, event="message", id="")]


# -- linear time ---------------------------------------------------------------------------


class CountingBuffer(bytearray):
    """A parser buffer that counts the bytes its line-end searches examine."""

    examined = 0

    def find(self, sub: bytes, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        stop = len(self) if end is None else min(end, len(self))
        found = super().find(sub, start, stop)
        if sub in (b"\r", b"\n"):  # the field name's colon is searched within the line
            self.examined += max(0, (found + 1 if found >= 0 else stop) - start)
        return found


def counting_parser(max_size: int = MAX_MESSAGE_SIZE) -> tuple[SseParser, CountingBuffer]:
    parser = SseParser(max_size)
    buf = CountingBuffer()
    parser._buf = buf
    return parser, buf


def test_small_chunks_are_not_rescanned() -> None:
    """A 1 MB line in 10,000 chunks: each byte is searched once for CR and once for LF."""
    parser, buf = counting_parser()
    parser.feed(b"data: ")
    for _ in range(10_000):
        parser.feed(b"x" * 100)
        assert parser.next_event() is None
    parser.feed(b"\n\n")
    record = parser.next_event()
    assert isinstance(record, SseEvent) and len(record.data) == 1_000_000
    assert buf.examined <= 2 * 1_000_010


@pytest.mark.parametrize("tail", [b"", b"data: y\n\n", b"data: y\r\r"])
@pytest.mark.parametrize("eol", [b"\r", b"\n", b"\r\n"])
def test_lines_in_one_buffer_are_not_rescanned(eol: bytes, tail: bytes) -> None:
    """Many lines in one chunk, with a far LF or CR or none: no search restarts per line."""
    parser, buf = counting_parser()
    stream = (b"data: x" + eol + eol) * 10_000 + tail
    parser.feed(stream)
    assert len(drain(parser)) == 10_000 + bool(tail)
    assert buf.examined <= 2 * len(stream)


# -- properties ----------------------------------------------------------------------------

TOKENS = [b"data", b"event", b"id", b"retry", b"foo", b":", b": ", b" ", b"\r", b"\n", b"\r\n",
          b"x", b"yz", b"12", b"0", b"\x00", BOM, b"\xe2\x82", b"\xac", b"\xff", b"message"]

streams = st.lists(st.one_of(st.sampled_from(TOKENS), st.binary(max_size=3)),
                   max_size=60).map(b"".join)

eols = st.sampled_from([b"\n", b"\r", b"\r\n"])
values = st.one_of(st.integers(0, 3).map(lambda n: b"v" * n),
                   st.integers(0, 200).map(lambda n: b"v" * n),
                   st.integers(0, 10**6).map(lambda n: str(n).encode()),
                   st.sampled_from(TOKENS), st.binary(max_size=3))
field_lines = st.tuples(st.sampled_from([b"data:", b"data: ", b"data: ", b"id: ", b"event: ",
                                         b"retry: ", b":", b"foo: ", b"", b"data"]),
                        values, eols).map(b"".join)
blocks_of_lines = st.tuples(st.lists(field_lines, max_size=6).map(b"".join), eols).map(b"".join)
# Mostly whole events, with some junk that joins the next line.
line_streams = st.lists(st.one_of(blocks_of_lines, blocks_of_lines, values),
                        max_size=8).map(b"".join)


def spec_reference(stream: bytes) -> Outcome:
    """The WHATWG algorithm, literally: decode everything, then split into lines."""
    text = stream.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    data = event = id_buf = last = ""
    retry: int | None = None
    comments = 0
    records: list[Record] = []
    for line in re.split(r"\r\n|\r|\n", text)[:-1]:  # the last piece has no line end
        if not line:
            last = id_buf
            if data:
                records.append(ev(data.removesuffix("\n"), event or "message", id_buf))
            data = event = ""
        elif line.startswith(":"):
            comments += 1
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data += value + "\n"
            elif name == "event":
                event = value
            elif name == "id" and "\0" not in value:
                id_buf = value
            elif (name == "retry" and value and all(c in "0123456789" for c in value)
                  and int(value) <= MAX_RETRY_MS):
                retry = int(value)
    return Outcome(records, last, retry, comments)


def limited_reference(stream: bytes, limit: int) -> Outcome:
    """The same on whole byte lines, with the documented bounds."""
    stream = stream.removeprefix(BOM)
    data: list[bytes] | None = []  # None: the event is dropped
    data_size = long_line = 0
    event = id_buf = last = b""
    retry: int | None = None
    comments = 0
    records: list[Record] = []
    for line in re.split(rb"\r\n|\r|\n", stream)[:-1]:
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if not line:
            last = id_buf
            if data is None:
                records.append(SseOversize(size=max(data_size - 1, long_line),
                                           event=event.decode(errors="replace") or "message",
                                           id=id_buf.decode(errors="replace")))
            elif data_size:
                records.append(ev(b"\n".join(data).decode(errors="replace"),
                                  event.decode(errors="replace") or "message",
                                  id_buf.decode(errors="replace")))
            data, data_size, long_line, event = [], 0, 0, b""
        elif line.startswith(b":"):
            comments += 1
        elif len(line) > limit + LINE_OVERHEAD:
            if name == b"data":
                data_size += len(value) + 1
                data = None
            elif name in (b"event", b"id"):
                long_line = max(long_line, len(line))
                data = None
        elif name == b"data":
            data_size += len(value) + 1
            if data is not None:
                data = None if data_size - 1 > limit else [*data, value]
        elif name == b"event":
            event = value
        elif name == b"id" and b"\0" not in value:
            id_buf = value
        elif name == b"retry" and value.isdigit() and int(value) <= MAX_RETRY_MS:
            retry = int(value)
    return Outcome(records, last.decode(errors="replace"), retry, comments)


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


@settings(max_examples=300, deadline=None)
@given(stream=st.one_of(streams, line_streams),
       cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_matches_the_spec_whatever_the_chunking(stream: bytes, cuts: list[int]) -> None:
    expected = spec_reference(stream)
    assert parse(stream) == expected
    assert parse([stream[i:i + 1] for i in range(len(stream))]) == expected
    assert parse(split(stream, cuts)) == expected
    assert parse(split(stream, cuts), drain_each=False) == expected


@settings(max_examples=300, deadline=None)
@given(stream=line_streams, limit=st.integers(1, 120),
       cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_limits_whatever_the_chunking(stream: bytes, limit: int, cuts: list[int]) -> None:
    # LINE_OVERHEAD is 64: values up to 200 bytes make lines over limit + 64 now and then.
    expected = limited_reference(stream, limit)
    assert parse(stream, limit) == expected
    assert parse([stream[i:i + 1] for i in range(len(stream))], limit) == expected
    assert parse(split(stream, cuts), limit) == expected
    assert parse(split(stream, cuts), limit, drain_each=False) == expected


@settings(max_examples=100, deadline=None)
@given(stream=st.one_of(streams, line_streams))
def test_limited_reference_agrees_with_the_spec_when_nothing_is_long(stream: bytes) -> None:
    assert limited_reference(stream, 10_000) == spec_reference(stream)


# -- round trip of events a server would write ---------------------------------------------

line_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]),
                    max_size=8)


@dataclass(frozen=True)
class Block:
    event: str | None
    data: list[str]  # no lines: a priming block
    id: str | None
    retry: int | None
    comment: str | None


blocks = st.builds(Block, st.none() | line_text, st.lists(line_text, max_size=3),
                   st.none() | line_text.filter(lambda t: "\0" not in t),
                   st.none() | st.integers(0, 10**6), st.none() | line_text)


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(blocks, max_size=8), bom=st.booleans(), draw=st.data())
def test_round_trip(blocks: list[Block], bom: bool, draw: st.DataObject) -> None:
    lines: list[str] = []

    def field(name: str, value: str) -> None:
        if value == "" and draw.draw(st.booleans()):
            lines.append(name)
        elif value.startswith(" ") or draw.draw(st.booleans()):
            lines.append(f"{name}: {value}")
        else:
            lines.append(f"{name}:{value}")

    expected: list[Record] = []
    last_id = ""
    retry = None
    for block in blocks:
        fields = [("event", block.event), ("id", block.id), ("retry", block.retry)]
        for name, value in draw.draw(st.permutations(fields)):
            if value is not None:
                field(name, str(value))
        for value in block.data:
            if block.comment is not None:
                lines.append(":" + block.comment)
            field("data", value)
        lines.append("")
        last_id = block.id if block.id is not None else last_id
        retry = block.retry if block.retry is not None else retry
        if block.data:
            expected.append(ev("\n".join(block.data), block.event or "message", last_id))
    ends = draw.draw(st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=len(lines),
                              max_size=len(lines)))
    for i in range(1, len(lines)):  # a CR then a blank line's LF would be one CRLF
        if ends[i - 1] == "\r" and not lines[i] and ends[i] != "\r":
            ends[i] = "\r"
    stream = (BOM if bom else b"") + "".join(
        line + end for line, end in zip(lines, ends, strict=True)).encode()
    comments = sum(len(b.data) for b in blocks if b.comment is not None)
    cuts = draw.draw(st.lists(st.integers(min_value=0), max_size=10))
    assert parse(split(stream, cuts)) == Outcome(expected, last_id, retry, comments)
