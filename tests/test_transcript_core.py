"""Transcripts (mcp_proto.testing._transcript): the writer's lines read back as entries,
secrets redacted, the size bound, and every way a transcript is refused (with its line)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_proto import LocalProtocolError, MCPError, Redactor
from mcp_proto.testing._transcript import (
    MAX_TRANSCRIPT_ENTRIES,
    MAX_TRANSCRIPT_LINE,
    TRANSCRIPT_VERSION,
    Entry,
    Transcript,
    TranscriptError,
    TranscriptWriter,
    load_transcript,
    read_transcript,
)

CLIENT = {"name": "test-client", "version": "0.0.1"}
HEADER = {"mcp_proto_transcript": 1, "transport": "stdio", "target": "python server.py",
          "client": CLIENT}


def writer(**kwargs: Any) -> TranscriptWriter:
    options: dict[str, Any] = {"transport": "stdio", "target": "python server.py",
                               "client": CLIENT, "start": 100.0}
    options.update(kwargs)
    return TranscriptWriter(**options)


def lines(*objs: Any) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


# -- writing and reading back -------------------------------------------------------------


def test_round_trip_of_every_kind() -> None:
    w = writer()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    batch = [{"jsonrpc": "2.0", "id": 2, "result": {}}, {"jsonrpc": "2.0", "method": "x"}]
    data = b"".join([
        w.header(),
        w.message("send", init, 100.25),
        w.message("recv", batch, 100.5),
        w.http("POST", 200, {"Content-Type": "application/json"}, 100.5),
        w.http("GET", None, {}, 100.6),
        w.ready("legacy", "2025-11-25", 100.75),
        w.stderr("started", 101.0),
        w.closed(102.0),
        w.exit(None, "bye", 102.1234567),
    ])
    assert data.endswith(b"\n") and data.count(b"\n") == 9
    first = json.loads(data.split(b"\n")[0])
    assert first == HEADER and first["mcp_proto_transcript"] == TRANSCRIPT_VERSION
    assert w.written == len(data) and not w.truncated
    got = read_transcript(data)
    assert (got.transport, got.target, got.client) == ("stdio", "python server.py", CLIENT)
    assert [(e.kind, e.t, e.line) for e in got.entries] == [
        ("send", 0.25, 2), ("recv", 0.5, 3), ("http", 0.5, 4), ("http", 0.6, 5),
        ("ready", 0.75, 6), ("stderr", 1.0, 7), ("closed", 2.0, 8), ("exit", 2.123457, 9)]
    assert got.entries[0].data == init and got.entries[1].data == batch
    assert got.entries[2].data == {"method": "POST", "status": 200,
                                   "headers": {"content-type": "application/json"}}
    assert got.entries[5].data == "started" and got.entries[6].data is None
    assert (got.era, got.protocol_version) == ("legacy", "2025-11-25")
    assert got.exit == {"code": None, "stderr_tail": "bye"}
    assert read_transcript(data.decode()) == got
    assert load_transcript(data.splitlines(keepends=True)) == got


def test_lines_are_compact_utf8() -> None:
    w = writer()
    line = w.message("recv", {"jsonrpc": "2.0", "method": "m", "params": {"s": "é"}}, 100.0)
    assert line == ('{"t":0.0,"dir":"recv","msg":{"jsonrpc":"2.0","method":"m",'
                    '"params":{"s":"é"}}}\n').encode()


def test_a_transcript_without_ready_or_exit() -> None:
    got = read_transcript(writer(transport="http", target="https://h/mcp").header())
    assert got.entries == () and got.transport == "http"
    assert got.era is None and got.protocol_version is None and got.exit is None


def test_time_before_start_or_not_finite_counts_as_zero() -> None:
    w = writer()
    data = w.header() + w.closed(99.0) + w.closed(float("nan")) + w.closed(float("inf"))
    assert [e.t for e in read_transcript(data).entries] == [0.0, 0.0, 0.0]


def test_nan_from_a_server_reads_back() -> None:
    w = writer()
    data = w.header() + w.message("recv", {"jsonrpc": "2.0", "method": "n",
                                           "params": {"p": float("nan")}}, 100.0)
    [entry] = read_transcript(data).entries
    assert math.isnan(entry.data["params"]["p"])


def test_lone_surrogate_reads_back() -> None:
    w = writer()
    msg = {"jsonrpc": "2.0", "id": "\ud800", "result": {}}
    [entry] = read_transcript(w.header() + w.message("recv", msg, 100.0)).entries
    assert entry.data == msg


@pytest.mark.parametrize("call", [
    lambda w: w.message("both", {}, 1.0),
    lambda w: w.message("send", "text", 1.0),
    lambda w: w.message("send", {"x": {1, 2}}, 1.0),
    lambda w: w.http("PUT", 200, {}, 1.0),
    lambda w: w.http("POST", "200", {}, 1.0),
    lambda w: w.ready("future", "x", 1.0),
    lambda w: w.exit("1", "", 1.0),
])
def test_writer_refuses_what_the_format_cannot_hold(call: Any) -> None:
    with pytest.raises(LocalProtocolError):
        call(writer())


def test_writer_refuses_bad_settings() -> None:
    with pytest.raises(LocalProtocolError):
        writer(transport="ws")
    with pytest.raises(ValueError):
        writer(max_bytes=100)


# -- redaction --------------------------------------------------------------------------------


def test_messages_and_text_are_redacted() -> None:
    redactor = Redactor(["sk-secret-value"])
    w = writer(redactor=redactor)
    arguments = {"note": "key sk-secret-value here", "password": "hunter22"}
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "t", "arguments": arguments}}
    data = (w.header() + w.message("send", msg, 100.0) + w.stderr("using sk-secret-value", 100.0)
            + w.exit(1, "died: sk-secret-value", 100.0))
    assert b"sk-secret-value" not in data and b"hunter22" not in data
    send, stderr, exit_ = read_transcript(data).entries
    assert send.data["params"]["arguments"] == {"note": "key <redacted> here",
                                                "password": "<redacted>"}
    assert stderr.data == "using <redacted>"
    assert exit_.data == {"code": 1, "stderr_tail": "died: <redacted>"}
    assert msg["params"]["arguments"]["password"] == "hunter22"  # the caller's copy unchanged


def test_credential_headers_are_redacted_and_the_session_id_kept() -> None:
    w = writer(transport="http", target="https://h/mcp", redactor=Redactor(["tok-12345"]))
    data = w.header() + w.http("POST", 200, {
        "Authorization": "Bearer abc", "Cookie": "a=b", "Set-Cookie": "c=d",
        "Proxy-Authorization": "Basic x", "X-API-Key": "k", "X-Upstream-Token": "t",
        "Mcp-Session-Id": "sess-1", "X-Trace": "echo tok-12345",
        "Content-Type": "text/event-stream"}, 100.0)
    [entry] = read_transcript(data).entries
    headers = entry.data["headers"]
    for name in ("authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key",
                 "x-upstream-token"):
        assert headers[name] == "<redacted>", name
    assert headers["mcp-session-id"] == "sess-1"
    assert headers["x-trace"] == "echo <redacted>"
    assert headers["content-type"] == "text/event-stream"


# -- the size bound ---------------------------------------------------------------------------


def test_size_bound_writes_one_truncated_line_then_nothing() -> None:
    w = writer(max_bytes=2048)
    chunks = [w.header()]
    msg = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 300}}
    for i in range(20):
        chunks.append(w.message("recv", msg, 100.0 + i))
    data = b"".join(chunks)
    assert w.truncated and len(data) <= 2048 and w.written == len(data)
    assert chunks[-1] == b"" and w.closed(200.0) == b"" and w.stderr("x", 200.0) == b""
    got = read_transcript(data)
    *kept, cut = got.entries
    assert all(e.kind == "recv" for e in kept) and len(kept) >= 3
    assert cut.kind == "truncated"
    cut_at = data.rindex(b"\n", 0, len(data) - 1) + 1
    assert cut.data == {"bytes": cut_at}
    assert cut.t == kept[-1].t + 1


def test_a_line_over_the_line_limit_truncates() -> None:
    w = writer(max_bytes=64 * 1024 * 1024)
    data = w.header() + w.stderr("ok", 100.0)
    cut = w.message("recv", {"jsonrpc": "2.0", "method": "m",
                             "params": {"s": "y" * MAX_TRANSCRIPT_LINE}}, 101.0)
    assert w.truncated and len(cut) < 100
    *_, entry = read_transcript(data + cut).entries
    assert entry.kind == "truncated" and entry.data == {"bytes": len(data)}


# -- refusals, each with its line -------------------------------------------------------------


def _entry_line(**fields: Any) -> dict[str, Any]:
    return {"t": 0.5, **fields}


REFUSED: list[tuple[str, bytes, int, str]] = [
    ("empty", b"", 1, "empty"),
    ("blank only", b"\n\n", 1, "empty"),
    ("not json", b"{not json\n", 1, "not JSON"),
    ("not utf-8", b"\xff\xfe\n", 1, "not UTF-8"),
    ("not an object", b"[1, 2]\n", 1, "not a JSON object"),
    ("no version", lines({"transport": "stdio"}), 1, "no 'mcp_proto_transcript'"),
    ("newer version", lines({**HEADER, "mcp_proto_transcript": 2}), 1,
     "written by a newer mcp-proto"),
    ("version zero", lines({**HEADER, "mcp_proto_transcript": 0}), 1, "unknown format version"),
    ("version text", lines({**HEADER, "mcp_proto_transcript": "1"}), 1,
     "unknown format version"),
    ("version bool", lines({**HEADER, "mcp_proto_transcript": True}), 1,
     "unknown format version"),
    ("bad transport", lines({**HEADER, "transport": "ws"}), 1, "unknown transport"),
    ("target type", lines({**HEADER, "target": 1}), 1, "target must be str"),
    ("client type", lines({**HEADER, "client": "c"}), 1, "client must be dict"),
    ("no t", lines(HEADER, {"closed": True}), 2, "has no 't'"),
    ("t text", lines(HEADER, _entry_line(closed=True, t="1")), 2, "t must be int or float"),
    ("t bool", lines(HEADER, _entry_line(closed=True, t=True)), 2, "t must be"),
    ("t nan", lines(HEADER, _entry_line(closed=True, t=float("nan"))), 2, "finite"),
    ("unknown kind", lines(HEADER, _entry_line(frobnicate=1)), 2, "unknown kind"),
    ("two kinds", lines(HEADER, _entry_line(closed=True, stderr="x")), 2, "unknown kind"),
    ("bad dir", lines(HEADER, _entry_line(dir="up", msg={})), 2, "unknown direction"),
    ("msg type", lines(HEADER, _entry_line(dir="send", msg="x")), 2, "msg must be"),
    ("http type", lines(HEADER, _entry_line(http=[])), 2, "http must be dict"),
    ("http method", lines(HEADER, _entry_line(http={"method": "PUT", "status": 1,
                                                     "headers": {}})), 2, "HTTP method"),
    ("http status", lines(HEADER, _entry_line(http={"method": "GET", "status": "ok",
                                                     "headers": {}})), 2, "status must be"),
    ("http header", lines(HEADER, _entry_line(http={"method": "GET", "status": None,
                                                     "headers": {"a": 1}})), 2, "values"),
    ("http extra", lines(HEADER, _entry_line(http={"method": "GET", "status": None,
                                                    "headers": {}, "x": 1})), 2, "unknown"),
    ("ready era", lines(HEADER, _entry_line(ready={"era": "x", "protocol_version": "v"})), 2,
     "unknown era"),
    ("ready version", lines(HEADER, _entry_line(ready={"era": "modern",
                                                       "protocol_version": 1})), 2,
     "protocol_version must be str"),
    ("stderr type", lines(HEADER, _entry_line(stderr=["x"])), 2, "stderr must be str"),
    ("exit code", lines(HEADER, _entry_line(exit={"code": 1.5, "stderr_tail": ""})), 2,
     "code must be"),
    ("exit tail", lines(HEADER, _entry_line(exit={"code": 1})), 2, "no 'stderr_tail'"),
    ("closed false", lines(HEADER, _entry_line(closed=False)), 2, "closed must be true"),
    ("truncated bytes", lines(HEADER, _entry_line(truncated={"bytes": -1})), 2, "negative"),
    ("after truncated", lines(HEADER, _entry_line(truncated={"bytes": 5}),
                              _entry_line(closed=True)), 3, "after the truncated"),
    ("deep", b"[" * 100_000 + b"\n", 1, "not JSON"),
    ("later line", lines(HEADER, _entry_line(closed=True)) + b"\n" + b"oops\n", 4, "not JSON"),
]


@pytest.mark.parametrize(("data", "line", "text"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_refused_with_its_line(data: bytes, line: int, text: str) -> None:
    with pytest.raises(TranscriptError) as info:
        read_transcript(data)
    assert info.value.line == line
    assert text in str(info.value) and f"line {line}" in str(info.value)
    assert isinstance(info.value, MCPError)


def test_a_line_over_the_limit_is_refused() -> None:
    huge = b'{"t":0,"stderr":"' + b"x" * MAX_TRANSCRIPT_LINE + b'"}'
    with pytest.raises(TranscriptError) as info:
        load_transcript([lines(HEADER), huge])
    assert info.value.line == 2 and "over the limit" in str(info.value)
    with pytest.raises(TranscriptError) as info:
        load_transcript([lines(HEADER).decode(), huge.decode()])
    assert info.value.line == 2


def test_a_lone_surrogate_in_a_text_line_is_refused() -> None:
    with pytest.raises(TranscriptError, match="not UTF-8") as info:
        load_transcript(["\ud800"])
    assert info.value.line == 1


def test_too_many_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_proto.testing._transcript as module  # noqa: PLC0415

    assert MAX_TRANSCRIPT_ENTRIES == 1_000_000
    monkeypatch.setattr(module, "MAX_TRANSCRIPT_ENTRIES", 3)
    entry = lines(_entry_line(closed=True))
    assert len(read_transcript(lines(HEADER) + entry * 3).entries) == 3
    with pytest.raises(TranscriptError, match="more than 3 entries") as info:
        read_transcript(lines(HEADER) + entry * 4)
    assert info.value.line == 5


def test_extra_header_fields_are_ignored() -> None:
    got = read_transcript(lines({**HEADER, "note": "x"}))
    assert got == Transcript("stdio", "python server.py", CLIENT, ())


# -- any run of writer calls reads back as the same entries -----------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8)
_objects = st.dictionaries(st.text(max_size=5), _json, max_size=4)
_calls = st.one_of(
    st.tuples(st.just("message"), st.sampled_from(["send", "recv"]),
              _objects | st.lists(_objects, max_size=3)),
    st.tuples(st.just("http"), st.sampled_from(["POST", "GET", "DELETE"]),
              st.none() | st.integers(100, 599),
              st.dictionaries(st.sampled_from(["content-type", "mcp-session-id", "accept"]),
                              st.text(max_size=8), max_size=3)),
    st.tuples(st.just("ready"), st.sampled_from(["legacy", "modern"]), st.text(max_size=10)),
    st.tuples(st.just("stderr"), st.text(max_size=20)),
    st.tuples(st.just("exit"), st.none() | st.integers(-255, 255), st.text(max_size=20)),
    st.tuples(st.just("closed")),
)
_KINDS = {"http": "http", "ready": "ready", "stderr": "stderr", "exit": "exit",
          "closed": "closed"}


def _expected(call: tuple[Any, ...]) -> tuple[str, Any]:
    name, *args = call
    if name == "message":
        return args[0], args[1]
    if name == "http":
        return "http", {"method": args[0], "status": args[1], "headers": args[2]}
    if name == "ready":
        return "ready", {"era": args[0], "protocol_version": args[1]}
    if name == "stderr":
        return "stderr", args[0]
    if name == "exit":
        return "exit", {"code": args[0], "stderr_tail": args[1]}
    return "closed", None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_calls, st.floats(0, 1e6)), max_size=12),
       st.sampled_from([2048, 8192, 1 << 26]))
def test_any_writer_run_reads_back(calls: list[tuple[tuple[Any, ...], float]],
                                   max_bytes: int) -> None:
    w = writer(max_bytes=max_bytes)
    data = w.header()
    expected: list[tuple[str, float, Any]] = []
    for call, now in sorted(calls, key=lambda c: c[1]):
        name, *args = call
        chunk = getattr(w, name)(*args, 100.0 + now)
        data += chunk
        if chunk and not w.truncated:
            expected.append((*_expected(call)[:1], round(now, 6), _expected(call)[1]))
    assert len(data) == w.written <= max_bytes
    got = read_transcript(data)
    entries = list(got.entries)
    if w.truncated:
        cut = entries.pop()
        assert cut.kind == "truncated"
    assert [(e.kind, e.data) for e in entries] == [(kind, value) for kind, _, value in expected]
    assert all(abs(e.t - t) <= 1e-5 for e, (_, t, _) in zip(entries, expected, strict=True))
    assert all(isinstance(e, Entry) and e.line == i + 2 for i, e in enumerate(got.entries))


@pytest.mark.parametrize(("params", "offered"), [
    ({"protocolVersion": "2025-06-18"}, "2025-06-18"),
    ({"protocolVersion": 7}, None),
    ([1, 2], None),  # a file's params need not be an object: no version, not AttributeError
    ("x", None),
    (None, None),
])
def test_offered_version_reads_only_an_object_s_version(params: Any, offered: str | None) -> None:
    w = writer()
    send = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    got = read_transcript(w.header() + w.message("send", send, 100.0))
    assert got.offered_version == offered


def test_offered_version_is_none_when_the_client_probed_first() -> None:
    w = writer()
    probe = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
    init = {"jsonrpc": "2.0", "id": 2, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18"}}
    data = w.header() + w.message("send", probe, 100.0) + w.message("send", init, 100.1)
    assert read_transcript(data).offered_version is None


def test_a_file_s_http_headers_read_as_the_writer_shows_them() -> None:
    """A hand-written file's header names are lower-cased and its credentials redacted on
    reading, so reading what was read and written again gives the same (fuzz_transcript)."""
    w = writer(transport="http", target="https://h/mcp")
    entry = {"t": 0.1, "http": {"method": "POST", "status": 200, "headers": {
        "Mcp-Session-Id": "s1", "Authorization": "Bearer sk-secret", "X-Api-Key": "k9"}}}
    got = read_transcript(w.header() + lines(entry))
    headers = got.entries[0].data["headers"]
    assert headers == {"mcp-session-id": "s1", "authorization": "<redacted>",
                       "x-api-key": "<redacted>"}
    again = writer(transport="http", target="https://h/mcp")
    text = again.header() + again.http("POST", 200, headers, 100.1)
    assert read_transcript(text).entries[0].data["headers"] == headers
