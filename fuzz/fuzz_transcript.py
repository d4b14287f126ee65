"""Fuzz harness for transcripts and their replay (``mcp_proto.testing``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the rest, up to its first NUL byte, is a transcript
  for :func:`read_transcript`; what follows the NUL is client bytes for a
  :class:`ReplayServer` of it (when it reads);
- **structured** (otherwise): a transcript written by :class:`TranscriptWriter` from the
  data (handshakes, requests with ids of every JSON type, progress, cancellations, server
  requests and their answers, listen stream ids, batches, stderr lines, exits, closes,
  a small size bound that truncates, secrets to redact), then a replay of it at a speed
  drawn from the data, fed client bytes: the recorded client messages (in order, or some
  swapped, changed, repeated), garbage, oversize lines, a batch, with clock advances,
  ``handle_timeout`` and ``receive_eof``.

Properties (any violation raises AssertionError):

- :func:`read_transcript` raises nothing but :class:`TranscriptError`; what it reads has
  line numbers that increase, known kinds, a ``truncated`` entry only last, and written back
  by a :class:`TranscriptWriter` reads back as the same entries;
- whatever a writer returns reads back, within its size bound, the secrets gone;
- a :class:`ReplayServer` fed any client bytes never raises; ``next_deadline`` is None or
  finite; a divergence ends it (``exit_code`` 1) and nothing comes out after the end;
- fed exactly the recorded client messages in order, it never diverges, and
  :meth:`~ReplayServer.check_complete` passes unless a recorded exit ended it first.

Run: ``python fuzz/fuzz_transcript.py /tmp/fz/transcript fuzz/corpus/transcript``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._limits import Limits
from mcp_proto._redact import Redactor
from mcp_proto.testing._replay import SUBSCRIPTION_ID_KEY, ReplayDivergence, ReplayServer
from mcp_proto.testing._transcript import (
    ENTRY_KINDS,
    Transcript,
    TranscriptError,
    TranscriptWriter,
    read_transcript,
)

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

#: Bytes of a raw input read (the reader's own bounds are megabytes; fuzzing wants speed).
MAX_RAW = 16_384
SECRET = "sk-fuzz-secret-1234"
METHODS = ("initialize", "notifications/initialized", "tools/list", "tools/call", "ping",
           "resources/read", "subscriptions/listen", "server/discover",
           "notifications/cancelled", "notifications/progress", "sampling/createMessage",
           "notifications/tools/list_changed", "notifications/subscriptions/acknowledged")
IDS: tuple[Any, ...] = (0, 1, 2, 7, -1, 2**53, "1", "s-1", "", "\u00e9", 1.5, None, True, [1])
VALUES: tuple[Any, ...] = (None, True, False, 0, -3, 10**20, 0.25, "", "x", "\u00e9\U0001F600",
                           SECRET, f"Bearer {SECRET}", [], {}, [1, "a"], {"k": "v"})


def draw_value(ch: Choices, depth: int = 0) -> Any:
    k = ch.below(8 if depth < 3 else 5)
    if k < 5:
        return ch.pick(VALUES)
    if k < 7:
        return {ch.pick(("a", "b", "password", "_meta", "name", "token")): draw_value(ch, depth + 1)
                for _ in range(ch.below(4))}
    return [draw_value(ch, depth + 1) for _ in range(ch.below(4))]


def draw_params(ch: Choices, method: str, rid: Any) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if method == "tools/call":
        params = {"name": ch.pick(("add", "echo", "")), "arguments": {"a": draw_value(ch)}}
    elif method == "initialize":
        params = {"protocolVersion": ch.pick(("2025-11-25", "2025-06-18")),
                  "capabilities": {}, "clientInfo": {"name": ch.pick(("a", "b")),
                                                     "version": "1"}}
    elif method == "notifications/progress":
        params = {"progressToken": ch.pick(IDS), "progress": ch.pick((0, 1, 0.5))}
    elif method == "notifications/cancelled":
        params = {"requestId": ch.pick(IDS)}
    elif ch.chance(2):
        params = {"x": draw_value(ch)}
    if ch.chance(3):
        meta: dict[str, Any] = {}
        if ch.chance(2):
            meta["progressToken"] = rid if ch.chance(2) else ch.pick(IDS)
        if ch.chance(3):
            meta[SUBSCRIPTION_ID_KEY] = ch.pick(IDS)
        params["_meta"] = meta
    return params


def draw_message(ch: Choices) -> dict[str, Any]:
    k = ch.below(3)
    rid = ch.pick(IDS)
    if k == 0:  # a request
        method = ch.pick(METHODS)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if ch.below(4):
            msg["params"] = draw_params(ch, method, rid)
        return msg
    if k == 1:  # a notification
        method = ch.pick(METHODS)
        return {"jsonrpc": "2.0", "method": method, "params": draw_params(ch, method, None)}
    if ch.chance(4):
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}
    result: dict[str, Any] = {"content": [{"type": "text", "text": ch.pick(VALUES)}]}
    if ch.chance(3):
        result["_meta"] = {SUBSCRIPTION_ID_KEY: ch.pick(IDS)}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def draw_transcript(ch: Choices) -> tuple[bytes, TranscriptWriter, list[Any]]:
    """Writer lines from the data, with the client messages written (in order)."""
    w = TranscriptWriter(transport=ch.pick(("stdio", "http")), target="python srv.py",
                         client={"name": "c", "version": "1"}, start=5.0,
                         redactor=Redactor([SECRET]) if ch.below(2) else None,
                         max_bytes=ch.pick((1 << 20, 1024, 1500, 4096)))
    data = w.header()
    sends: list[Any] = []
    now = 5.0
    for _ in range(ch.below(24)):
        now += ch.pick((0.0, 0.001, 0.1, 1.0, 2.5))
        k = ch.below(10)
        if k < 6:
            direction = ch.pick(("send", "recv"))
            msg: Any = draw_message(ch)
            if ch.chance(8):
                msg = [msg, draw_message(ch)]
            chunk = w.message(direction, msg, now)
            if chunk and not w.truncated and direction == "send":
                sends.append(json.loads(chunk)["msg"])  # as written: redacted
        elif k == 6:
            chunk = w.stderr(ch.pick(("", "line", f"key={SECRET}", "\u00e9")), now)
        elif k == 7:
            chunk = w.exit(ch.pick((None, 0, 1, 137, -9)), ch.pick(("", "tail", SECRET)), now)
        elif k == 8:
            chunk = w.closed(now)
        else:
            headers = {"Authorization": f"Bearer {SECRET}", "Mcp-Session-Id": "s",
                       "X-Other": SECRET}
            chunk = w.http(ch.pick(("POST", "GET", "DELETE")), ch.pick((None, 200, 404)),
                           headers, now)
        data += chunk
    return data, w, sends


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a) == json.dumps(b)


def check_read(text: bytes) -> Transcript | None:
    try:
        got = read_transcript(text)
    except TranscriptError as exc:
        assert exc.line >= 1, exc.line
        return None
    except Exception as exc:
        escaped("read_transcript", exc)
    lines = [e.line for e in got.entries]
    assert lines == sorted(set(lines)) and all(n >= 2 for n in lines), lines[:20]
    assert all(e.kind in ENTRY_KINDS and math.isfinite(e.t) for e in got.entries)
    cuts = [i for i, e in enumerate(got.entries) if e.kind == "truncated"]
    assert cuts in ([], [len(got.entries) - 1]), cuts
    check_write_back(got)
    return got


def check_write_back(got: Transcript) -> None:
    """A transcript read, written again entry by entry, reads back the same."""
    w = TranscriptWriter(transport=got.transport, target=got.target, client=got.client,
                         start=0.0)
    out = w.header()
    for e in got.entries:
        if e.kind in ("send", "recv"):
            out += w.message(e.kind, e.data, e.t)
        elif e.kind == "http":
            out += w.http(e.data["method"], e.data["status"], e.data["headers"], e.t)
        elif e.kind == "ready":
            out += w.ready(e.data["era"], e.data["protocol_version"], e.t)
        elif e.kind == "stderr":
            out += w.stderr(e.data, e.t)
        elif e.kind == "exit":
            out += w.exit(e.data["code"], e.data["stderr_tail"], e.t)
        elif e.kind == "closed":
            out += w.closed(e.t)
    again = read_transcript(out)
    kept = [e for e in got.entries if e.kind != "truncated"]
    assert (again.transport, again.target) == (got.transport, got.target)
    assert [(e.kind, e.line) for e in again.entries] == [(e.kind, i + 2)
                                                         for i, e in enumerate(kept)]
    assert all(_same(a.data, b.data) for a, b in zip(again.entries, kept, strict=True))


def _end_is_final(server: ReplayServer) -> None:
    """After the end nothing comes out, whatever arrives."""
    server.data_to_send()
    server.stderr_to_send()
    code = server.exit_code
    server.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', 1e9)
    server.handle_timeout(1e9)
    server.receive_eof(1e9)
    assert server.data_to_send() == b"" and server.stderr_to_send() == b""
    assert server.exit_code == code


def drive(server: ReplayServer, chunks: list[tuple[str, Any]]) -> None:
    """Feed the server; every step must not raise and must keep its invariants."""
    now = 0.0
    for kind, value in chunks:
        try:
            if kind == "data":
                server.receive_data(value, now)
            elif kind == "tick":
                now += value
                server.handle_timeout(now)
            elif kind == "deadline":
                deadline = server.next_deadline()
                if deadline is not None:
                    now = max(now, deadline)
                    server.handle_timeout(now)
            else:
                server.receive_eof(now)
            server.data_to_send()
            server.stderr_to_send()
            deadline = server.next_deadline()
        except Exception as exc:
            escaped(f"ReplayServer ({kind})", exc)
        assert deadline is None or math.isfinite(deadline), deadline
        if server.divergence is not None:
            assert server.exit_code == 1 and isinstance(server.divergence, ReplayDivergence)
        if server.exit_code is not None:
            _end_is_final(server)
            return


def _line(msg: Any) -> bytes:
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def check_faithful(transcript: Transcript, sends: list[Any], ch: Choices) -> None:
    """The recorded client messages, in order, as the recorded client sent them."""
    speed = ch.pick((None, None, 1.0, 3.0))
    server = ReplayServer(transcript, speed=speed)
    chunks: list[tuple[str, Any]] = []
    for msg in sends:
        chunks.append(("data", _line(msg)))
        if speed is not None and ch.chance(2):
            chunks.append(("deadline", None))
    drive(server, chunks)
    assert server.divergence is None, str(server.divergence)[:600]
    if server.exit_code is None:
        server.check_complete()


def check_structured(ch: Choices) -> None:
    data, w, sends = draw_transcript(ch)
    assert len(data) == w.written <= w._max, (len(data), w.written)
    assert SECRET.encode() not in data or w._redactor is None
    got = check_read(data)
    assert got is not None, f"a writer's transcript was refused: {data[:300]!r}"
    check_faithful(got, sends, ch)
    limits = Limits(max_message_size=ch.pick((1 << 20, 64, 300)))
    relax = None if ch.below(2) else (lambda rec, act: ch.chance(2))
    server = ReplayServer(got, speed=ch.pick((None, 1.0, 0.5)), limits=limits, relax=relax)
    chunks: list[tuple[str, Any]] = []
    for _ in range(ch.below(12)):
        k = ch.below(8)
        if k < 3 and sends:
            msg = ch.pick(sends)
            if ch.chance(3) and type(msg) is dict:
                msg = {**msg, "id": ch.pick(IDS)}
            line = _line(msg)
            cut = ch.below(len(line) + 1)
            chunks += [("data", line[:cut]), ("data", line[cut:])]
        elif k == 3:
            chunks.append(("data", ch.pick((b"garbage\n", b"[]\n", b"[1,{}]\n", b"\xff\n",
                                            b"x" * 400 + b"\n", b"\n\r\n", b"null\n",
                                            b'{"jsonrpc":"2.0","method":"' + b"m" * 300
                                            + b'"}\n'))))
        elif k == 4:
            chunks.append(("data", _line([draw_message(ch), draw_message(ch)])))
        elif k == 5:
            chunks.append(("tick", ch.pick((0.0, 0.1, 5.0, -1.0))))
        elif k == 6:
            chunks.append(("deadline", None))
        else:
            chunks.append(("data", ch.take(ch.below(40))))
    if ch.chance(2):
        chunks.append(("eof", None))
    drive(server, chunks)
    try:
        server.check_complete()
    except ReplayDivergence:
        pass
    except Exception as exc:
        escaped("check_complete", exc)
    assert all(e.kind == "send" for e in server.unmatched)


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        text, _, client = data[1:MAX_RAW].partition(b"\x00")
        got = check_read(text)
        if got is not None:
            server = ReplayServer(got)
            ch = Choices(client[::-1])
            chunks: list[tuple[str, Any]] = []
            while client:
                cut = 1 + ch.below(len(client))
                chunks.append(("data", client[:cut]))
                client = client[cut:]
            drive(server, [*chunks, ("eof", None)])
        return
    check_structured(Choices(data[1:]))


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
