"""Fuzz harness for :class:`mcp_proto.wire._sse.SseParser` (the ``text/event-stream`` parser).

``check(data)``: ``data[0]``/``data[1]`` choose ``max_event_size`` (tiny, around
:data:`LINE_OVERHEAD`, or large), ``data[2:]`` is the stream.  It is parsed

1. fed whole, in one call;
2. fed in chunks whose sizes (and types: bytes, bytearray, memoryview; empty feeds too) come
   from the data, draining :meth:`~SseParser.next_event` after every chunk (as the binding
   does) or only every few chunks;
3. byte by byte (short streams);
4. by a reference model written from the WHATWG rules and the parser's documented bounds:
   the stream decoded as UTF-8 first (U+FFFD for invalid sequences) and split on CRLF / LF /
   CR, field by field, an over-long line measured on the bytes.

Properties (any violation raises AssertionError):

- nothing escapes ``feed``, ``next_event`` or ``feed_eof``; ``feed`` after ``feed_eof`` raises
  ``LocalProtocolError`` only; the constructor refuses a limit <= 0 with ``ValueError``;
- all the feedings give the same records (``SseEvent`` / ``SseOversize``), the same final
  ``last_event_id``, ``retry_ms`` and ``comments``, all equal to the model's: the parser is
  exact at every chunk boundary; at the first chunk boundaries, what came out so far equals
  the model of the bytes fed so far (a line is complete when its line end arrived);
- an ``SseEvent``'s data is at most ``max_event_size`` bytes (as received), an
  ``SseOversize`` reports more than that (or an over-long ``event``/``id`` line); ``retry_ms``
  is None or within 0..:data:`MAX_RETRY_MS`;
- ``buffered`` after draining is at most ``2 * max_event_size + LINE_OVERHEAD + 1`` and 0
  after end of stream.

Run: ``python fuzz/fuzz_sse.py /tmp/fz/sse fuzz/corpus/sse -dict=fuzz/sse.dict``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import bug_matcher, escaped
from mcp_proto._errors import LocalProtocolError
from mcp_proto.wire._sse import LINE_OVERHEAD, MAX_RETRY_MS, SseEvent, SseOversize, SseParser

Record = SseEvent | SseOversize
Chunk = bytes | bytearray | memoryview

BOM = b"\xef\xbb\xbf"
#: Byte-by-byte feeding for streams up to this long.
BYTEWISE_MAX = 256
#: Chunk boundaries at which the output so far is compared with the model of the prefix.
PREFIX_CHECKS = 8

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)


@dataclass
class Outcome:
    records: list[Record] = field(default_factory=list)
    last_event_id: str = ""
    retry_ms: int | None = None
    comments: int = 0


def limit_for(data: bytes) -> int:
    b0 = data[0] if data else 0
    b1 = data[1] if len(data) > 1 else 0
    kind = b0 % 4
    if kind == 0:
        return 1 + b1 % 16
    if kind == 1:
        return 1 + b1 % 300
    if kind == 2:
        return LINE_OVERHEAD - 8 + b1 % 16
    return 200 + 16 * b1


def chunks_for(data: bytes, stream: bytes) -> list[Chunk]:
    """``stream`` cut at positions derived from ``data[2:10]`` (empty feeds included)."""
    control = data[2:10] or b"\x07"
    out: list[Chunk] = []
    pos = k = 0
    while pos < len(stream):
        c = control[k % len(control)]
        k += 1
        size = c % 13 if c < 200 else (c - 199) * 29
        if size == 0:
            out.append(b"")
            size = 1
        piece = stream[pos:pos + size]
        pos += size
        kind = (c >> 2) % 3
        out.append(piece if kind == 0 else bytearray(piece) if kind == 1 else memoryview(piece))
    return out


# -- the reference model ------------------------------------------------------------------

_EOL_BYTES = re.compile(rb"\r\n|\r|\n")
_EOL_TEXT = re.compile(r"\r\n|\r|\n")


def model(stream: bytes, limit: int) -> Outcome:
    """What the parser must produce for ``stream`` followed by EOF."""
    max_line = limit + LINE_OVERHEAD
    if stream.startswith(BOM):
        stream = stream[len(BOM):]
    byte_lines = _EOL_BYTES.split(stream)[:-1]  # the last piece is unfinished: discarded
    text_lines = _EOL_TEXT.split(stream.decode("utf-8", "replace"))[:-1]
    assert len(byte_lines) == len(text_lines), "model: decoding first moved a line end"
    out = Outcome()
    data: list[str] = []
    data_size = 0
    oversize = False
    oversize_line = 0
    kind = ""
    last_id = ""
    for raw, text in zip(byte_lines, text_lines, strict=True):
        if not raw:  # dispatch
            out.last_event_id = last_id
            if oversize:
                out.records.append(SseOversize(size=max(data_size - 1, oversize_line),
                                               event=kind or "message", id=last_id))
            elif data_size:
                out.records.append(SseEvent(event=kind or "message", data="\n".join(data),
                                            id=last_id))
            data, data_size, oversize, oversize_line, kind = [], 0, False, 0, ""
            continue
        if raw[0] == 0x3A:  # ':' a comment, whatever its length
            out.comments += 1
            continue
        if len(raw) > max_line:  # over-long: judged from its first bytes, never applied
            colon = raw.find(b":", 0, 6)
            name = raw[:colon] if colon >= 0 else b""
            if name == b"data":
                prefix = colon + 2 if raw[colon + 1] == 0x20 else colon + 1
                data_size += len(raw) - prefix + 1
                oversize, data = True, []
            elif name in (b"event", b"id"):
                oversize_line = max(oversize_line, len(raw))
                oversize, data = True, []
            continue
        colon_b = raw.find(b":")
        name_b = raw if colon_b < 0 else raw[:colon_b]
        if len(name_b) > 5:
            continue
        value_b = b"" if colon_b < 0 else raw[colon_b + 1:]
        if value_b.startswith(b" "):
            value_b = value_b[1:]
        colon_t = text.find(":")
        value_t = "" if colon_t < 0 else text[colon_t + 1:]
        if value_t.startswith(" "):
            value_t = value_t[1:]
        assert value_t == value_b.decode("utf-8", "replace"), "model: value decodes apart"
        if name_b == b"data":
            data_size += len(value_b) + 1
            if not oversize:
                if data_size - 1 > limit:
                    oversize, data = True, []
                else:
                    data.append(value_t)
        elif name_b == b"event":
            kind = value_t
        elif name_b == b"id":
            if "\x00" not in value_t:
                last_id = value_t
        elif name_b == b"retry" and value_b.isdigit():
            digits = value_b.lstrip(b"0") or b"0"
            if len(digits) <= len(str(MAX_RETRY_MS)) and int(digits) <= MAX_RETRY_MS:
                out.retry_ms = int(digits)
    return out


# -- feeding the parser -------------------------------------------------------------------


def _drain(parser: SseParser, limit: int, out: Outcome) -> None:
    while True:
        try:
            record = parser.next_event()
        except Exception as exc:
            escaped("next_event()", exc)
        if record is None:
            break
        if isinstance(record, SseEvent):
            size = len(record.data.encode("utf-8", "surrogatepass"))
            # U+FFFD replacements may make the text longer than the bytes received
            assert "\ufffd" in record.data or size <= limit, (
                f"an event of {size} bytes passed the limit {limit}")
        else:
            assert isinstance(record, SseOversize), f"next_event returned {record!r}"[:200]
            assert record.size > limit, f"{record!r} under the limit {limit}"[:200]
        out.records.append(record)
    out.last_event_id = parser.last_event_id
    out.retry_ms = parser.retry_ms
    out.comments = parser.comments
    assert out.retry_ms is None or 0 <= out.retry_ms <= MAX_RETRY_MS, out.retry_ms
    bound = 2 * limit + LINE_OVERHEAD + 1
    assert parser.buffered <= bound, f"buffered {parser.buffered} > {bound} after draining"


def feed(chunks: list[Chunk], limit: int, *, drain_every: int = 1,
         prefixes: bytes | None = None) -> Outcome:
    """Feed ``chunks`` (draining after every ``drain_every`` chunks), then EOF.  With
    ``prefixes`` (the stream), the first boundaries are compared with the model."""
    parser = SseParser(limit)
    out = Outcome()
    fed = 0
    checks = 0
    for i, chunk in enumerate(chunks):
        try:
            parser.feed(chunk)
        except Exception as exc:
            escaped("feed()", exc)
        fed += len(chunk)
        if (i + 1) % drain_every == 0:
            _drain(parser, limit, out)
            if prefixes is not None and checks < PREFIX_CHECKS:
                checks += 1
                want = model(prefixes[:fed], limit)
                _same(out, want, f"after {fed} bytes")
    _drain(parser, limit, out)
    parser.feed_eof()
    parser.feed_eof()  # a second call does nothing
    _drain(parser, limit, out)
    assert parser.buffered == 0, f"{parser.buffered} bytes buffered after end of stream"
    try:
        parser.feed(b"x")
    except LocalProtocolError:
        pass
    except Exception as exc:
        escaped("feed() after feed_eof()", exc)
    else:
        raise AssertionError("feed() after feed_eof() was accepted")
    return out


def _same(got: Outcome, want: Outcome, what: str) -> None:
    for i, (g, w) in enumerate(zip(got.records, want.records, strict=False)):
        assert g == w, f"{what}: record {i} {g!r} != {w!r}"[:400]
    assert len(got.records) == len(want.records), (
        f"{what}: {len(got.records)} records, expected {len(want.records)}")
    assert got.last_event_id == want.last_event_id, (
        f"{what}: last_event_id {got.last_event_id!r} != {want.last_event_id!r}"[:300])
    assert got.retry_ms == want.retry_ms, f"{what}: retry_ms {got.retry_ms} != {want.retry_ms}"
    assert got.comments == want.comments, f"{what}: comments {got.comments} != {want.comments}"


def check(data: bytes) -> None:
    limit = limit_for(data)
    stream = data[2:]
    want = model(stream, limit)
    _same(feed([stream], limit), want, "whole")
    chunks = chunks_for(data, stream)
    _same(feed(chunks, limit, prefixes=stream if len(stream) <= 4096 else None), want,
          "chunked")
    _same(feed(chunks, limit, drain_every=1 + (data[-1] if data else 0) % 5), want,
          "chunked, drained every few")
    if len(stream) <= BYTEWISE_MAX:
        _same(feed([stream[i:i + 1] for i in range(len(stream))], limit), want, "bytewise")
    for bad in (0, -1):
        try:
            SseParser(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"SseParser({bad}) was accepted")


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
