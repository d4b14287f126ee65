"""Fuzz harness for :class:`mcp_proto.NdjsonFramer`.

``check(data)`` frames ``data`` three ways and compares them:

1. fed in chunks whose sizes (and types: bytes, bytearray, memoryview) come from the data,
   draining :meth:`next_line` after every chunk, as the session does;
2. fed whole, in one call;
3. a reference model: ``bytes.split(b"\\n")``, one trailing ``\\r`` dropped, empty lines
   skipped, lines over the limit reported as :class:`Oversize`.

Properties: nothing but ``ValueError`` at construction may escape; lines are never empty,
never contain ``\\n`` and never exceed the limit; ``buffered`` never exceeds the limit + 1
(the tolerated ``\\r``) + the chunk just fed, and is at most limit + 1 once drained; the
three framings agree exactly (an Oversize's size, its first and its last EDGE_BYTES bytes).

Run: ``python fuzz/fuzz_ndjson.py -atheris_runs=100000`` (libFuzzer flags pass through).
"""

from __future__ import annotations

import sys
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_proto import NdjsonFramer, Oversize
from mcp_proto.wire._ndjson import EDGE_BYTES

Framed = bytes | Oversize

# Tag -> text of the AssertionError :func:`check` raises for a known framer bug.
KNOWN_BUGS: dict[str, str] = {}


def known_bug(exc: BaseException) -> str | None:
    """The KNOWN_BUGS tag of an AssertionError raised by :func:`check`, or None."""
    for tag, text in KNOWN_BUGS.items():
        if isinstance(exc, AssertionError) and text in str(exc):
            return tag
    return None


def limit_for(data: bytes) -> int:
    """The max_message_size used for ``data``: small, around EDGE_BYTES, or larger."""
    b0 = data[0] if data else 0
    b1 = data[1] if len(data) > 1 else 0
    kind = b0 % 4
    if kind == 0:
        return 1 + b1 % 16
    if kind == 1:
        return 1 + b1 % 300
    if kind == 2:
        return EDGE_BYTES - 4 + b1 % 8
    return 200 + 4 * b1


def chunks_for(data: bytes) -> list[bytes | bytearray | memoryview]:
    """``data`` cut at positions derived from its first bytes (including empty chunks)."""
    control = data[2:10] or b"\x07"
    out: list[bytes | bytearray | memoryview] = []
    pos = 0
    k = 0
    while pos < len(data):
        c = control[k % len(control)]
        k += 1
        size = c % 17 if c < 200 else (c - 199) * 37
        if size == 0:  # an empty feed, then one byte (so that the loop always advances)
            out.append(b"")
            size = 1
        piece = data[pos:pos + size]
        pos += size
        kind = (c >> 2) % 3
        if kind == 0:
            out.append(piece)
        elif kind == 1:
            out.append(bytearray(piece))
        else:
            out.append(memoryview(piece))
    return out


def model(data: bytes, limit: int) -> list[Framed]:
    """What the framer must produce for ``data`` followed by EOF."""
    segments = data.split(b"\n")
    last = segments.pop()
    if last:
        segments.append(last)
    out: list[Framed] = []
    for seg in segments:
        line = seg[:-1] if seg.endswith(b"\r") else seg
        if len(line) > limit:
            out.append(Oversize(len(seg), seg[:EDGE_BYTES], seg[-EDGE_BYTES:]))
        elif line:
            out.append(line)
    return out


def _drain(framer: NdjsonFramer, limit: int, out: list[Framed]) -> None:
    while True:
        item = framer.next_line()
        if item is None:
            return
        if isinstance(item, Oversize):
            assert item.size > limit, f"Oversize of {item.size} bytes under the limit {limit}"
            assert len(item.head) <= EDGE_BYTES and len(item.tail) <= EDGE_BYTES
            out.append(item)
            continue
        assert type(item) is bytearray, f"next_line returned {type(item).__name__}"
        assert item, "empty line returned"
        assert b"\n" not in item, f"line contains a newline: {bytes(item[:80])!r}"
        assert len(item) <= limit, f"line of {len(item)} bytes over the limit {limit}"
        out.append(bytes(item))


def frame(chunks: list[bytes | bytearray | memoryview], limit: int) -> list[Framed]:
    """Feed ``chunks`` one by one (draining after each), then EOF; check the memory bound."""
    framer = NdjsonFramer(limit)
    out: list[Framed] = []
    for chunk in chunks:
        framer.feed(chunk)
        assert framer.buffered <= limit + 1 + len(chunk), (
            f"buffered {framer.buffered} > limit {limit} + 1 + chunk {len(chunk)}"
        )
        _drain(framer, limit, out)
        assert framer.buffered <= limit + 1, (
            f"buffered {framer.buffered} after draining, limit {limit}"
        )
    framer.feed_eof()
    _drain(framer, limit, out)
    assert framer.next_line() is None
    return out


def _same(got: list[Framed], want: list[Framed], limit: int, what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} items, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, Oversize):
            assert isinstance(g, Oversize), f"{what}[{i}]: {g!r} instead of {w!r}"[:300]
            assert g.size == w.size, f"{what}[{i}]: size {g.size} != {w.size}"
            assert g.tail == w.tail, f"{what}[{i}]: tail differs"
            assert g.head == w.head, f"{what}[{i}]: head {g.head[:60]!r} != {w.head[:60]!r}"
        else:
            assert g == w, f"{what}[{i}]: {g!r} != {w!r}"[:300]


def check(data: bytes) -> None:
    limit = limit_for(data)
    want = model(data, limit)
    _same(frame([data], limit), want, limit, "whole")
    _same(frame(chunks_for(data), limit), want, limit, "chunked")


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
