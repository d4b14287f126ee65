"""End-to-end Streamable HTTP benchmarks: ours (``mcp_proto_io.threads.connect_http``) vs the
official SDK (mcp 2.3.0, ``Client(url)`` over httpx2).

Both clients talk to ``benchmarks/servers/fast_http_server.py`` (handshake era; HTTP/1.1
keep-alive on 127.0.0.1). Each client runs in a fresh child process that starts its own server,
so neither pollutes the other's heap, GC or RSS high-water mark.

(a) tools/call ``echo`` round trips/s: sequential (target ours/SDK >= 3), and 64 in flight
    (information; ours: 64 threads sharing one client; SDK: 64 anyio tasks sharing one Client)
(b) one ``blob`` result of 10 MiB, answered as one SSE event: seconds (target ours/SDK <= 1/5;
    beside the no-library floor, ``http.client`` and ``json``, which bounds what a client can do),
    tracemalloc peak and RSS high-water growth (target ours <= 3x payload)

Run: ``python benchmarks/bench_http.py [--quick] [--pin CPUS] [--json PATH]``
"""

# Imports of the libraries under test are deliberately lazy (availability, import cost).
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import bench_stdio as S  # shared child-side helpers (RSS marks, blob timing)

MiB = 2**20
SERVER = C.HERE / "servers" / "fast_http_server.py"
ECHO_ARGS = {"text": "hello world"}
TARGETS = {
    "seq": 3.0,  # ours/SDK calls/s >=
    "blob_time": 1 / 5,  # ours/SDK seconds <=
    "blob_mem": 3.0,  # ours peak growth / payload <=
}


@contextmanager
def http_server() -> Any:
    """Start the server on a free port; yield its URL; stop it."""
    proc = subprocess.Popen([sys.executable, str(SERVER), "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# =========================================================================================
# child side: ours (blocking threads binding)
# =========================================================================================


def ours_throughput(url: str, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    from mcp_proto_io.threads import connect_http

    connect_times = []
    for _ in range(3):
        t0 = time.perf_counter()
        with connect_http(url) as c:
            c.call_tool("echo", ECHO_ARGS)  # connecting is lazy: the first call includes it
            connect_times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {"connect": connect_times, "seq": [], "conc": []}
    with connect_http(url) as c:
        out["seq"] = S.sequential_rates(c, n_seq, repeats)
        per = n_conc // inflight
        errors: list[BaseException] = []

        def worker(barrier: threading.Barrier) -> None:
            barrier.wait()
            try:
                for _ in range(per):
                    c.call_tool("echo", ECHO_ARGS)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        for rep in range(repeats + 1):  # first round is warm-up
            gc.collect()
            barrier = threading.Barrier(inflight + 1)
            threads = [threading.Thread(target=worker, args=(barrier,)) for _ in range(inflight)]
            for t in threads:
                t.start()
            barrier.wait()
            t0 = time.perf_counter()
            for t in threads:
                t.join()
            dt = time.perf_counter() - t0
            if errors:
                raise errors[0]
            if rep:
                out["conc"].append(per * inflight / dt)
    return out


def ours_blob(url: str, size: int, repeats: int) -> dict:
    from mcp_proto_io.threads import connect_http

    out: dict[str, Any] = {}
    with connect_http(url) as c:
        for _ in range(3):
            c.call_tool("blob", {"size": 1024})
        c.call_tool("echo", ECHO_ARGS)
        out.update(S._measure_blob_memory(lambda n: c.call_tool("blob", {"size": n}), size))
        out["times"] = S._time_blob(lambda: c.call_tool("blob", {"size": size}), repeats)
    return out


# =========================================================================================
# child side: bare stdlib client (the ceiling this server allows; no MCP library at all)
# =========================================================================================


class _RawHttp:
    """The floor: an MCP client with no library at all (``http.client`` keep-alive POSTs,
    compact JSON in, ``json.loads`` out; an SSE answer read as its one ``data:`` line)."""

    HEADERS: ClassVar[dict[str, str]] = {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def __init__(self, url: str) -> None:
        host, _, rest = url.removeprefix("http://").partition("/")
        self.conn = http.client.HTTPConnection(host)
        self.path = "/" + rest
        self.next_id = 0
        self.post("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "0"}})
        self.conn.request("POST", self.path,
                          b'{"jsonrpc":"2.0","method":"notifications/initialized"}', self.HEADERS)
        self.conn.getresponse().read()

    def post(self, method: str, params: dict | None = None) -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.request("POST", self.path, json.dumps(msg).encode(), self.HEADERS)
        resp = self.conn.getresponse()
        body = resp.read()
        if (resp.getheader("content-type") or "").startswith("text/event-stream"):
            body = body[body.index(b"data:") + 5:].split(b"\n", 1)[0]
        return json.loads(body) if body else None


def raw_blob(url: str, size: int, repeats: int) -> dict:
    """The 10 MiB answer without a library: what the server, the socket and ``json`` cost."""
    raw = _RawHttp(url)

    def call() -> Any:
        result = raw.post("tools/call", {"name": "blob", "arguments": {"size": size}})
        assert len(result["result"]["content"][0]["text"]) == size
        return result

    out = {"times": S._time_blob(call, repeats)}
    raw.conn.close()
    return out


def raw_throughput(url: str, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    """``http.client`` keep-alive POSTs, one at a time, compact JSON in and ``json.loads`` out."""
    raw = _RawHttp(url)
    post = raw.post
    conn = raw.conn
    call = {"name": "echo", "arguments": ECHO_ARGS}
    out: dict[str, Any] = {"seq": []}
    for rep in range(repeats + 1):
        t0 = time.perf_counter()
        for _ in range(n_seq):
            post("tools/call", call)
        if rep:
            out["seq"].append(n_seq / (time.perf_counter() - t0))
    conn.close()
    return out


# =========================================================================================
# child side: official SDK (mcp 2.3.0, anyio/asyncio, httpx2)
# =========================================================================================


def _sdk_client(url: str, mode: str = "legacy", max_sse_event_size: Any = "default") -> Any:
    """``Client(url)`` as users write it; with ``max_sse_event_size`` the transport is built
    explicitly, since the default transport caps one SSE event at 1 MiB."""
    from mcp import Client

    if max_sse_event_size == "default":
        return Client(url, mode=mode)
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(url, max_sse_event_size=max_sse_event_size), mode=mode)


async def _sdk_connect_time(url: str, mode: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    async with _sdk_client(url, mode) as c:
        await c.call_tool("echo", ECHO_ARGS)
        return time.perf_counter() - t0, c.protocol_version


async def sdk_throughput(url: str, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    import anyio

    out: dict[str, Any] = {"connect": [], "connect_auto": [], "seq": [], "conc": []}
    for _ in range(3):
        dt, _version = await _sdk_connect_time(url, "legacy")
        out["connect"].append(dt)
        dt, version = await _sdk_connect_time(url, "auto")
        out["connect_auto"].append(dt)
        out["auto_version"] = version
    async with _sdk_client(url) as c:
        assert S._text_of(await c.call_tool("echo", ECHO_ARGS)) == ECHO_ARGS["text"]
        for _ in range(300):
            await c.call_tool("echo", ECHO_ARGS)
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(n_seq):
                await c.call_tool("echo", ECHO_ARGS)
            out["seq"].append(n_seq / (time.perf_counter() - t0))
        per = n_conc // inflight

        async def worker() -> None:
            for _ in range(per):
                await c.call_tool("echo", ECHO_ARGS)

        for rep in range(repeats + 1):  # first round is warm-up
            gc.collect()
            t0 = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for _ in range(inflight):
                    tg.start_soon(worker)
            dt = time.perf_counter() - t0
            if rep:
                out["conc"].append(per * inflight / dt)
    return out


async def sdk_blob(url: str, size: int, repeats: int) -> dict:
    out: dict[str, Any] = {}
    # What a user of the default Client(url) gets for this result.
    try:
        async with _sdk_client(url) as c:
            try:
                S._check_len(await c.call_tool("blob", {"size": size}), size)
                out["default_client"] = "ok"
            except Exception as exc:
                out["default_client"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # closing after the failure; keep the first message
        out.setdefault("default_client", f"{type(exc).__name__}: {exc}")
    gc.collect()
    async with _sdk_client(url, max_sse_event_size=None) as c:
        for _ in range(3):
            await c.call_tool("blob", {"size": 1024})
        await c.call_tool("echo", ECHO_ARGS)
        # Same steps as bench_stdio._measure_blob_memory / _time_blob, awaited inline.
        gc.collect()
        mark = S.rss_mark()
        t0 = time.perf_counter()
        result = await c.call_tool("blob", {"size": size})
        out["first"] = time.perf_counter() - t0
        out["rss_delta"] = S.rss_growth(mark)
        out["rss_method"] = mark[0]
        S._check_len(result, size)
        del result
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = await c.call_tool("blob", {"size": size})
        out["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        del result
        await c.call_tool("blob", {"size": size})  # untimed warm-up, as in _time_blob
        times = []
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            result = await c.call_tool("blob", {"size": size})
            times.append(time.perf_counter() - t0)
            del result
        out["times"] = times
    return out


def child_main(args: argparse.Namespace) -> None:
    if args.pin:  # inherited by the server process the child starts
        os.sched_setaffinity(0, {int(c) for c in args.pin.split(",")})
    try:
        if args.child == "ours":
            try:
                import mcp_proto_io.threads  # noqa: F401 - availability check
            except ImportError as exc:
                C.emit({"error": C.not_importable(exc)})
                return
        with http_server() as url:
            if args.child == "ours":
                if args.task == "throughput":
                    res = ours_throughput(url, args.n_seq, args.n_conc, args.inflight, args.repeats)
                else:
                    res = ours_blob(url, args.size, args.repeats)
            elif args.child == "raw":
                if args.task == "throughput":
                    res = raw_throughput(url, args.n_seq, args.n_conc, args.inflight,
                                         args.repeats)
                else:
                    res = raw_blob(url, args.size, args.repeats)
            else:
                import anyio

                if args.task == "throughput":
                    res = anyio.run(
                        sdk_throughput, url, args.n_seq, args.n_conc, args.inflight, args.repeats
                    )
                else:
                    res = anyio.run(sdk_blob, url, args.size, args.repeats)
    except Exception as exc:
        C.emit({"error": f"{type(exc).__name__}: {exc}"})
        raise
    C.emit(res)


# =========================================================================================
# parent side
# =========================================================================================


def collect(
    quick: bool = False,
    n_seq: int | None = None,
    n_conc: int | None = None,
    repeats: int | None = None,
    pin: str | None = None,
) -> dict:
    inflight = 64
    out: dict[str, Any] = {
        "server": str(SERVER),
        "n_seq": n_seq or (300 if quick else 2000),
        "n_conc": n_conc or (inflight * (10 if quick else 50)),
        "inflight": inflight,
        "repeats": repeats or (3 if quick else 4),
        "rounds": 1 if quick else 2,
        "blob_repeats": 3 if quick else 5,
        "size": 10 * MiB,
        "pin": pin,
    }
    timeout = 300 if quick else 1800
    base = [sys.executable, str(Path(__file__).resolve())]
    if pin:
        base += ["--pin", pin]

    def child(impl: str, task: str) -> dict:
        argv = [*base, "--child", impl, "--task", task]
        if task == "throughput":
            argv += ["--n-seq", str(out["n_seq"]), "--n-conc", str(out["n_conc"])]
            argv += ["--inflight", str(inflight), "--repeats", str(out["repeats"])]
        else:
            argv += ["--repeats", str(out["blob_repeats"]), "--size", str(out["size"])]
        return C.run_child(argv, timeout)

    # Interleave the clients round by round so slow drift on the machine hits all alike.
    for task in ("throughput", "blob"):
        runs: dict[str, list[dict]] = {"ours": [], "sdk": [], "raw": []}
        for _ in range(out["rounds"]):
            for impl, results in runs.items():
                results.append(child(impl, task))
        for impl, results in runs.items():
            out[f"{impl}_{task}"] = S._pool(results)
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def rows(out: dict) -> list[C.Row]:
    """Targets are judged on medians; a miss met by the best repeat is marked as such."""
    ot, st = out["ours_throughput"], out["sdk_throughput"]
    ob, sb = out["ours_blob"], out["sdk_blob"]
    size = out["size"]
    r: list[C.Row] = []

    def row(name: str, o: dict, s: dict, get: Any, unit: str, *, higher: bool) -> C.Row:
        ours, ours_med = C.stat(o, None if "error" in o else get(o), higher=higher)
        sdk, sdk_med = C.stat(s, None if "error" in s else get(s), higher=higher)
        x = C.Row(name, ours, sdk, unit, ours_med, sdk_med)
        r.append(x)
        return x

    def target(
        x: C.Row, text: str, value: float | None, limit: float, *, ge: bool, best: Any = None
    ) -> None:
        x.target = text
        x.ok = None if value is None else (value >= limit if ge else value <= limit)
        b = C.num(best)
        if x.ok is False and b is not None and (b >= limit if ge else b <= limit):
            x.ok_best = True

    x = row("sequential echo", ot, st, lambda d: d["seq"], "calls/s", higher=True)
    target(x, f"ours/SDK >= {TARGETS['seq']:g}", x.ratio_med, TARGETS["seq"], ge=True, best=x.ratio)
    x = row(
        f"{out['inflight']}-in-flight echo", ot, st, lambda d: d["conc"], "calls/s", higher=True
    )
    x.target = "(info)"

    x = row(f"{size // MiB} MiB blob call (SSE)", ob, sb, lambda d: d["times"], "s", higher=False)
    limit = TARGETS["blob_time"]
    target(x, f"ours/SDK <= 1/{1 / limit:g}", x.ratio_med, limit, ge=False, best=x.ratio)
    floor = out.get("raw_blob", {"error": "not measured"})
    x = row("  vs no-library floor (http.client)", ob, floor, lambda d: d["times"], "s",
            higher=False)
    x.target = "(info) ours/floor"
    vals = [res.get("error") or res["first"] for res in (ob, sb)]
    r.append(C.Row("  first (cold) call, same size", vals[0], vals[1], "s", target="(info)"))
    for key, label in (("tracemalloc_peak", "tracemalloc peak"), ("rss_delta", "RSS hi-water")):
        vals = [res.get("error") or res[key] / size for res in (ob, sb)]
        x = C.Row(f"  {label} growth / payload", vals[0], vals[1], "x")
        r.append(x)
        limit = TARGETS["blob_mem"]
        target(x, f"ours <= {limit:g}x payload", C.num(vals[0]), limit, ge=False)

    x = row("connect + first call", ot, st, lambda d: d["connect"], "s", higher=False)
    x.target = "(info) SDK mode=legacy"
    ver = st.get("auto_version", "?")
    sdk, sdk_med = C.stat(st, st.get("connect_auto"), higher=False)
    r.append(C.Row(f"  SDK mode='auto' (-> {ver})", None, sdk, "s", None, sdk_med, "(info)"))
    return r


def print_report(out: dict) -> None:
    reps = out["repeats"] * out["rounds"]
    title = (
        f"Streamable HTTP vs {Path(out['server']).name}: best (median) of {reps} repeats of "
        f"seq n={out['n_seq']} and {out['inflight']}-in-flight n={out['n_conc']}; "
        f"blob best (median) of {out['blob_repeats']}"
        + (f"; pinned to CPU {out['pin']}" if out.get("pin") else "")
    )
    C.print_table(title, rows(out))
    print("  per-repeat calls/s (raw = stdlib http.client keep-alive, no MCP library: ceiling)")
    for impl in ("ours", "sdk", "raw"):
        res = out[f"{impl}_throughput"]
        if "error" in res:
            print(f"  {impl:4s} error: {res['error']}")
        for key in ("seq", "conc"):
            if res.get(key):
                print(
                    f"  {impl:4s} {key:4s} best {C.best(res[key], higher_is_better=True):>9,.0f}"
                    f" median {C.median(res[key]):>9,.0f} calls/s  "
                    f"all: {', '.join(f'{x:,.0f}' for x in res[key])}"
                )
    default = out["sdk_blob"].get("default_client")
    if default and default != "ok":
        print(
            f"  SDK blob: default Client(url) fails on {out['size'] // MiB} MiB: {default}\n"
            "            (measured with streamable_http_client(url, max_sse_event_size=None))"
        )
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (< 30 s)")
    ap.add_argument("--n-seq", type=int, default=None, help="sequential calls per repeat")
    ap.add_argument("--n-conc", type=int, default=None, help="concurrent calls per repeat")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+server to CPUs, e.g. 0 or 0,1")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    # internal: child mode
    ap.add_argument("--child", choices=("ours", "sdk", "raw"), help=argparse.SUPPRESS)
    ap.add_argument("--task", choices=("throughput", "blob"), help=argparse.SUPPRESS)
    ap.add_argument("--inflight", type=int, default=64, help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, default=10 * MiB, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(args)
        return 0
    out = collect(args.quick, args.n_seq, args.n_conc, args.repeats, args.pin)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
