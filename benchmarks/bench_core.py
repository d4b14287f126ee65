"""Core (no I/O) throughput: tools/call responses parsed per second.

Three paths over the *same pre-encoded bytes* (one ~400-byte tools/call response per id):

* ``json.loads``  - floor: bare stdlib decode of each line, nothing else.
* ``ours``        - ``mcp_proto.ClientSession.receive_data(line)`` + ``next_event()`` until
                    ``None``; every response answers a real pending ``call_tool`` (issued in
                    untimed batches before the timed feed).
* ``SDK``         - what mcp 2.3.0 does per stdout line and per tools/call result, minus its
                    async stream hops: ``mcp_types.jsonrpc_message_adapter.validate_json``
                    (stdio reader), ``mcp_types.methods.validate_server_result`` and the
                    session's ``CallToolResult | InputRequiredResult`` TypeAdapter.

Run: ``python benchmarks/bench_core.py [--quick] [-n N] [--repeats R] [--json PATH]``
"""

# Imports of the libraries under test are deliberately lazy (availability, import cost).
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

HANDSHAKE_VERSION = "2025-11-25"
BATCH = 1000
IN_FLIGHT = 64  # round trips: calls made together, as 64 callers on one client make them
CHUNK = 64 * 1024

STRUCTURED = {
    "city": "Lisbon",
    "observedAt": "2025-06-18T10:00:00Z",
    "temperatureC": 21.5,
    "conditions": "partly cloudy",
    "humidity": 0.64,
    "wind": {"speedKmh": 14, "direction": "NW"},
}
RESULT: dict[str, Any] = {
    "content": [{"type": "text", "text": json.dumps(STRUCTURED)}],
    "structuredContent": STRUCTURED,
    "isError": False,
}
RESULT_BYTES = json.dumps(RESULT, separators=(",", ":")).encode()


def response_line(request_id: Any) -> bytes:
    rid = json.dumps(request_id).encode()
    return b'{"jsonrpc":"2.0","id":' + rid + b',"result":' + RESULT_BYTES + b"}\n"


def _time_lines(fn: Callable[[bytes], object], lines: list[bytes]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    for line in lines:
        fn(line)
    return time.perf_counter() - t0


# -- json.loads ------------------------------------------------------------------------------


def bench_json(n: int, repeats: int) -> dict[str, Any]:
    lines = [response_line(i) for i in range(1, n + 1)]
    _time_lines(json.loads, lines[: min(n, 2000)])  # warm-up
    times = [_time_lines(json.loads, lines) for _ in range(repeats)]
    return {"rates": [n / t for t in times]}


# -- SDK -------------------------------------------------------------------------------------


def sdk_parser() -> Callable[[bytes], object]:
    import mcp_types
    from mcp_types.methods import validate_server_result
    from pydantic import TypeAdapter

    try:  # the adapter the SDK session uses for tools/call results
        from mcp.client.session import _CallToolResultAdapter as adapter
    except ImportError:  # pragma: no cover - layout changed; same union, built here
        adapter = TypeAdapter(mcp_types.CallToolResult | mcp_types.InputRequiredResult)
    validate_json = mcp_types.jsonrpc_message_adapter.validate_json
    response_type = mcp_types.JSONRPCResponse

    def parse(line: bytes) -> object:
        msg = validate_json(line, by_name=False)
        assert isinstance(msg, response_type)
        raw = msg.result
        validate_server_result("tools/call", HANDSHAKE_VERSION, raw)
        return adapter.validate_python(raw, by_name=False)

    return parse


def bench_sdk(n: int, repeats: int) -> dict[str, Any]:
    import mcp_types

    parse = sdk_parser()
    lines = [response_line(i) for i in range(1, n + 1)]
    assert isinstance(parse(lines[0]), mcp_types.CallToolResult)
    _time_lines(parse, lines[: min(n, 2000)])
    times = [_time_lines(parse, lines) for _ in range(repeats)]
    return {"rates": [n / t for t in times]}


# -- ours ------------------------------------------------------------------------------------


def _drain(session: Any) -> list[Any]:
    events = []
    while (ev := session.next_event()) is not None:
        events.append(ev)
    return events


def ready_session() -> Any:
    """A ClientSession that has completed the initialize handshake."""
    from mcp_proto import ClientSession, Implementation

    s = ClientSession(Implementation(name="bench", version="0"))
    s.initialize(now=0.0)
    sent = [json.loads(x) for x in s.data_to_send().splitlines() if x.strip()]
    init = next(m for m in sent if m.get("method") == "initialize")
    reply = {
        "jsonrpc": "2.0",
        "id": init["id"],
        "result": {
            "protocolVersion": init["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-server", "version": "0"},
        },
    }
    s.receive_data(json.dumps(reply).encode() + b"\n", now=0.0)
    events = _drain(s)
    if not any(type(e).__name__ == "Ready" for e in events):
        raise RuntimeError(f"handshake did not produce Ready: {events!r}")
    s.data_to_send()  # notifications/initialized
    return s


def _issue(session: Any, count: int) -> list[bytes]:
    handles = [session.call_tool("echo", {"text": "hi"}, now=0.0) for _ in range(count)]
    session.data_to_send()
    return [response_line(h.request_id) for h in handles]


def _feed_lines(session: Any, lines: list[bytes]) -> tuple[float, int]:
    receive, next_event = session.receive_data, session.next_event
    done = 0
    t0 = time.perf_counter()
    for line in lines:
        receive(line, now=0.0)
        while next_event() is not None:
            done += 1
    return time.perf_counter() - t0, done


def _feed_chunks(session: Any, lines: list[bytes]) -> tuple[float, int]:
    blob = b"".join(lines)
    chunks = [blob[i : i + CHUNK] for i in range(0, len(blob), CHUNK)]
    receive, next_event = session.receive_data, session.next_event
    done = 0
    t0 = time.perf_counter()
    for chunk in chunks:
        receive(chunk, now=0.0)
        while next_event() is not None:
            done += 1
    return time.perf_counter() - t0, done


def _ours_round(session: Any, n: int, feed: Callable[..., tuple[float, int]]) -> float:
    gc.collect()
    total, remaining = 0.0, n
    while remaining:
        k = min(BATCH, remaining)
        lines = _issue(session, k)  # untimed: create pending requests + encode responses
        dt, done = feed(session, lines)
        if done != k:
            raise RuntimeError(f"expected {k} events, got {done}")
        total += dt
        remaining -= k
    return total


def _round_trips(session: Any, n: int) -> float:
    """``n`` tools/call round trips in the core, 64 at a time as 64 callers in flight make
    them: the calls and their bytes out (timed), their answers built (untimed), then in as
    64 KiB chunks and the events drained (timed)."""
    gc.collect()
    total, remaining = 0.0, n
    call, send = session.call_tool, session.data_to_send
    while remaining:
        k = min(IN_FLIGHT, remaining)
        t0 = time.perf_counter()
        handles = [call("echo", {"text": "hi"}, now=0.0) for _ in range(k)]
        send()
        total += time.perf_counter() - t0
        dt, done = _feed_chunks(session, [response_line(h.request_id) for h in handles])
        if done != k:
            raise RuntimeError(f"expected {k} events, got {done}")
        total += dt
        remaining -= k
    return total


def bench_round_trips(n: int, repeats: int) -> dict[str, Any]:
    try:
        check_ours_event()
    except ImportError as exc:
        return {"error": C.not_importable(exc)}
    s = ready_session()
    _round_trips(s, min(n, 2000))  # warm-up
    return {"rates": [n / _round_trips(s, n) for _ in range(repeats)]}


def check_ours_event() -> None:
    from mcp_proto import CallToolResult, Completed

    s = ready_session()
    h = s.call_tool("echo", {"text": "hi"}, now=0.0)
    s.data_to_send()
    s.receive_data(response_line(h.request_id), now=0.0)
    ev = s.next_event()
    if not (isinstance(ev, Completed) and isinstance(ev.value, CallToolResult)):
        raise RuntimeError(f"unexpected event for tools/call response: {ev!r}")


def bench_ours(n: int, repeats: int, feed: Callable[..., tuple[float, int]]) -> dict[str, Any]:
    try:
        check_ours_event()
    except ImportError as exc:
        return {"error": C.not_importable(exc)}
    s = ready_session()
    _ours_round(s, min(n, 2000), feed)  # warm-up
    times = [_ours_round(s, n, feed) for _ in range(repeats)]
    return {"rates": [n / t for t in times]}


# -- driver ----------------------------------------------------------------------------------


def run_path(path: str, n: int, repeats: int) -> dict[str, Any]:
    """Child side: measure one path in this (fresh) process."""
    C.setup_path()
    if path == "json":
        return bench_json(n, repeats)
    if path == "sdk":
        try:
            return bench_sdk(n, repeats)
        except ImportError as exc:
            return {"error": f"mcp (SDK) not importable: {exc}"}
    if path == "ours_round_trip":
        return bench_round_trips(n, repeats)
    return bench_ours(n, repeats, _feed_lines if path == "ours" else _feed_chunks)


def collect(quick: bool = False, n: int | None = None, repeats: int | None = None) -> dict:
    """Each path runs in its own fresh interpreter: importing the SDK leaves ~80k GC-tracked
    objects behind, which makes every full collection in that process slower (measurably so
    for code that allocates in bursts), so sharing a process would tax whichever runs with it.
    """
    n = n or (5000 if quick else 50_000)
    repeats = repeats or (3 if quick else 7)
    out: dict[str, Any] = {"n": n, "repeats": repeats, "response_bytes": len(response_line(1))}
    for path in ("json", "sdk", "ours", "ours_chunked", "ours_round_trip"):
        argv = [sys.executable, str(Path(__file__).resolve()), "--child", path]
        out[path] = C.run_child([*argv, "-n", str(n), "--repeats", str(repeats)], timeout=900)
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def rows(out: dict[str, Any]) -> list[C.Row]:
    j, sdk = out["json"], out["sdk"]

    def st(res: dict[str, Any]) -> tuple[float | str | None, float | None]:
        return C.stat(res, res.get("rates"), higher=True)

    jb, jm = st(j)
    sb, sm = st(sdk)
    result = [C.Row("json.loads only (floor)", jb, None, "msg/s", jm)]
    for label, key in (("per-line feed", "ours"), ("64 KiB chunk feed", "ours_chunked")):
        ob, om = st(out[key])
        result.append(C.Row(f"tools/call parse, {label}", ob, sb, "msg/s", om, sm, "(info)"))
        # time per message relative to bare json.loads = json rate / path rate
        rel = C.Row(f"  time / json.loads time ({label})", None, None, "x", compare=False)
        rel.ours = C.div(jb, ob) if C.num(ob) else ob
        rel.sdk, rel.ours_med, rel.sdk_med = C.div(jb, sb), C.div(jm, om), C.div(jm, sm)
        result.append(rel)
    trip = out.get("ours_round_trip", {"error": "not measured"})
    ob, om = st(trip)
    per_call = C.Row("tools/call round trip (64 at a time)", ob, None, "calls/s", om,
                     target="(info)")
    result.append(per_call)
    us = C.Row("  per round trip", None, None, "us", compare=False, target="(info)")
    us.ours = C.div(1e6, ob) if C.num(ob) else ob
    us.ours_med = C.div(1e6, om)
    result.append(us)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("-n", type=int, default=None, help="responses per repeat")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    ap.add_argument(
        "--child", choices=("json", "sdk", "ours", "ours_chunked", "ours_round_trip"),
        help=argparse.SUPPRESS
    )
    args = ap.parse_args(argv)
    if args.child:
        C.emit(run_path(args.child, args.n, args.repeats))
        return 0
    out = collect(args.quick, args.n, args.repeats)
    title = (
        f"core: {out['n']} tools/call responses ({out['response_bytes']} B each), "
        f"best (median) of {out['repeats']}"
    )
    C.print_table(title, rows(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
