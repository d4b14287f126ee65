"""End-to-end stdio benchmarks: ours (``mcp_proto_io.threads``) vs the official SDK (mcp 2.3.0).

Both clients talk to the same handshake-era server (``benchmarks/servers/fast_server.py``),
each in a fresh child process so neither pollutes the other's heap, GC or RSS high-water mark.

(b) tools/call ``echo`` round trips/s: sequential, and 64 in flight
    (ours: 64 threads sharing one connection; SDK: 64 anyio tasks sharing one ``Client``)
(c) one ``blob`` result of 10 MiB: seconds, tracemalloc peak and RSS high-water growth;
    plus 1 MiB vs 12 MiB time (linearity)
(d) import time in a fresh interpreter (best of N)

Run: ``python benchmarks/bench_stdio.py [--quick] [--server PATH] [--json PATH]``
"""

# Imports of the libraries under test are deliberately lazy (availability, import cost).
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

MiB = 2**20
ECHO_ARGS = {"text": "hello world"}
IMPORTS = {
    "ours": "import mcp_proto_io.threads",
    "sdk": "from mcp import Client, StdioServerParameters",
}
TARGETS = {
    "seq": 4.0,  # ours/SDK calls/s >=
    "conc": 8.0,  # ours/SDK calls/s >=
    "blob_time": 1 / 8,  # ours/SDK seconds <=
    "blob_mem": 3.0,  # ours peak growth / payload <=
    "linearity": 15.0,  # ours t(12 MiB)/t(1 MiB) <=
    "import": 0.15,  # ours seconds <=
}


def _text_of(result: Any) -> str:
    content = result["content"] if isinstance(result, dict) else result.content
    block = content[0]
    return block["text"] if isinstance(block, dict) else block.text


def _maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


# =========================================================================================
# child side: ours (blocking threads binding)
# =========================================================================================


def _ours_connect(server: Path) -> Any:
    from mcp_proto_io.threads import connect_stdio

    return connect_stdio([sys.executable, str(server)])


def ours_throughput(server: Path, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    connect_times = []
    for _ in range(3):
        t0 = time.perf_counter()
        with _ours_connect(server) as c:
            connect_times.append(time.perf_counter() - t0)
            c.call_tool("echo", ECHO_ARGS)
    out: dict[str, Any] = {"connect": connect_times, "seq": [], "conc": []}
    with _ours_connect(server) as c:
        assert _text_of(c.call_tool("echo", ECHO_ARGS)) == ECHO_ARGS["text"]
        for _ in range(300):
            c.call_tool("echo", ECHO_ARGS)
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(n_seq):
                c.call_tool("echo", ECHO_ARGS)
            out["seq"].append(n_seq / (time.perf_counter() - t0))
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


def ours_blob(server: Path, sizes: list[int], repeats: int) -> dict:
    out: dict[str, Any] = {"times": {}, "first": None}
    with _ours_connect(server) as c:
        for _ in range(3):
            c.call_tool("blob", {"size": 1024})
        c.call_tool("echo", ECHO_ARGS)
        out.update(_measure_blob_memory(lambda size: c.call_tool("blob", {"size": size}), sizes[0]))
        for size in sizes:
            out["times"][str(size)] = _time_blob(
                lambda s=size: c.call_tool("blob", {"size": s}), repeats
            )
    return out


# =========================================================================================
# child side: bare stdlib client (the floor this server allows; no MCP library at all)
# =========================================================================================


def raw_throughput(server: Path, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    """Hand-rolled newline JSON over pipes: sequential, and `inflight` pipelined requests."""
    proc = subprocess.Popen(
        [sys.executable, str(server)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    w, r = proc.stdin, proc.stdout  # buffered; each request is one write + flush
    assert w is not None and r is not None
    rd = r.readline
    next_id = 0

    def send(method: str, params: dict) -> None:
        nonlocal next_id
        next_id += 1
        msg = {"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}
        w.write(json.dumps(msg).encode() + b"\n")
        w.flush()

    try:
        send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        json.loads(rd())
        w.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        call = {"name": "echo", "arguments": ECHO_ARGS}
        out: dict[str, Any] = {"seq": [], "conc": []}
        for rep in range(repeats + 1):
            t0 = time.perf_counter()
            for _ in range(n_seq):
                send("tools/call", call)
                json.loads(rd())
            if rep:
                out["seq"].append(n_seq / (time.perf_counter() - t0))
        for rep in range(repeats + 1):
            t0 = time.perf_counter()
            for _ in range(inflight):
                send("tools/call", call)
            for i in range(n_conc):
                json.loads(rd())
                if i < n_conc - inflight:
                    send("tools/call", call)
            if rep:
                out["conc"].append(n_conc / (time.perf_counter() - t0))
        return out
    finally:
        w.close()
        proc.wait(timeout=10)


# =========================================================================================
# child side: official SDK (mcp 2.3.0, anyio/asyncio)
# =========================================================================================


def _sdk_client(server: Path, mode: str = "legacy") -> Any:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(server)])
    return Client(params, mode=mode)


async def _sdk_connect_time(server: Path, mode: str) -> tuple[float, str]:
    client = _sdk_client(server, mode)
    t0 = time.perf_counter()
    async with client as c:
        dt = time.perf_counter() - t0
        await c.call_tool("echo", ECHO_ARGS)
        return dt, c.protocol_version


async def sdk_throughput(
    server: Path, n_seq: int, n_conc: int, inflight: int, repeats: int
) -> dict:
    import anyio

    out: dict[str, Any] = {"connect": [], "connect_auto": [], "seq": [], "conc": []}
    for _ in range(3):
        dt, _version = await _sdk_connect_time(server, "legacy")
        out["connect"].append(dt)
        dt, version = await _sdk_connect_time(server, "auto")
        out["connect_auto"].append(dt)
        out["auto_version"] = version
    async with _sdk_client(server) as c:
        assert _text_of(await c.call_tool("echo", ECHO_ARGS)) == ECHO_ARGS["text"]
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


async def sdk_blob(server: Path, sizes: list[int], repeats: int) -> dict:
    out: dict[str, Any] = {"times": {}}
    async with _sdk_client(server) as c:
        for _ in range(3):
            await c.call_tool("blob", {"size": 1024})
        await c.call_tool("echo", ECHO_ARGS)
        size = sizes[0]
        # Same steps as _measure_blob_memory / _time_blob, awaited inline (no thread hop).
        gc.collect()
        rss0 = _maxrss_bytes()
        t0 = time.perf_counter()
        result = await c.call_tool("blob", {"size": size})
        out["first"] = time.perf_counter() - t0
        out["rss_delta"] = _maxrss_bytes() - rss0
        _check_len(result, size)
        del result
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = await c.call_tool("blob", {"size": size})
        out["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        del result
        for size in sizes:
            times = []
            for _ in range(repeats):
                gc.collect()
                t0 = time.perf_counter()
                result = await c.call_tool("blob", {"size": size})
                times.append(time.perf_counter() - t0)
                del result
            out["times"][str(size)] = times
    return out


# =========================================================================================
# child side: shared measuring code
# =========================================================================================


def _measure_blob_memory(call: Any, size: int) -> dict:
    """First big call: RSS high-water growth; second: tracemalloc peak during the call."""
    gc.collect()
    rss0 = _maxrss_bytes()
    t0 = time.perf_counter()
    result = call(size)
    first = time.perf_counter() - t0
    rss_delta = _maxrss_bytes() - rss0
    _check_len(result, size)
    del result
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = call(size)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del result
    gc.collect()
    return {"first": first, "rss_delta": rss_delta, "tracemalloc_peak": peak}


def _check_len(result: Any, size: int) -> None:
    if len(_text_of(result)) != size:
        raise RuntimeError(f"blob returned {len(_text_of(result))} chars, wanted {size}")


def _time_blob(fn: Any, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return times


def child_main(args: argparse.Namespace) -> None:
    server = C.server_path(args.server)
    sizes = [int(s) for s in args.sizes.split(",")]
    try:
        if args.child == "ours":
            try:
                import mcp_proto_io.threads  # noqa: F401 - availability check
            except ImportError as exc:
                C.emit({"error": C.not_importable(exc)})
                return
            if args.task == "throughput":
                res = ours_throughput(server, args.n_seq, args.n_conc, args.inflight, args.repeats)
            else:
                res = ours_blob(server, sizes, args.repeats)
        elif args.child == "raw":
            res = raw_throughput(server, args.n_seq, args.n_conc, args.inflight, args.repeats)
        else:
            import anyio

            if args.task == "throughput":
                res = anyio.run(
                    sdk_throughput, server, args.n_seq, args.n_conc, args.inflight, args.repeats
                )
            else:
                res = anyio.run(sdk_blob, server, sizes, args.repeats)
    except Exception as exc:
        C.emit({"error": f"{type(exc).__name__}: {exc}"})
        raise
    C.emit(res)


# =========================================================================================
# parent side
# =========================================================================================


def import_times(impl: str, runs: int) -> dict:
    code = (
        "import time; t0 = time.perf_counter(); " + IMPORTS[impl] + "; "
        "print('T', time.perf_counter() - t0)"
    )
    times = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=C.child_env(),
            cwd=str(C.HERE),
            check=False,
        )
        if proc.returncode:
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            if impl == "ours":
                return {"error": f"mcp_proto not importable: {err}"}
            return {"error": err}
        times.append(float(proc.stdout.split()[-1]))
    return {"times": times}


def collect(
    quick: bool = False,
    server: str | None = None,
    n_seq: int | None = None,
    n_conc: int | None = None,
    repeats: int | None = None,
) -> dict:
    srv = C.server_path(server)
    n_seq = n_seq or (300 if quick else 3000)
    inflight = 64
    n_conc = n_conc or (inflight * (20 if quick else 100))
    repeats = repeats or (3 if quick else 5)
    blob_repeats = 2 if quick else 5
    sizes = [10 * MiB, 1 * MiB, 12 * MiB]
    timeout = 300 if quick else 1800
    out: dict[str, Any] = {
        "server": str(srv),
        "n_seq": n_seq,
        "n_conc": n_conc,
        "inflight": inflight,
        "repeats": repeats,
        "blob_repeats": blob_repeats,
        "sizes": sizes,
    }
    base = [sys.executable, str(Path(__file__).resolve()), "--server", str(srv)]
    for impl in ("ours", "sdk"):
        out[f"{impl}_throughput"] = C.run_child(
            [
                *base,
                "--child",
                impl,
                "--task",
                "throughput",
                "--n-seq",
                str(n_seq),
                "--n-conc",
                str(n_conc),
                "--inflight",
                str(inflight),
                "--repeats",
                str(repeats),
            ],
            timeout,
        )
        out[f"{impl}_blob"] = C.run_child(
            [
                *base,
                "--child",
                impl,
                "--task",
                "blob",
                "--repeats",
                str(blob_repeats),
                "--sizes",
                ",".join(map(str, sizes)),
            ],
            timeout,
        )
        out[f"{impl}_import"] = import_times(impl, 3 if quick else 5)
    out["raw_throughput"] = C.run_child(
        [
            *base,
            "--child",
            "raw",
            "--task",
            "throughput",
            "--n-seq",
            str(n_seq),
            "--n-conc",
            str(n_conc),
            "--inflight",
            str(inflight),
            "--repeats",
            str(repeats),
        ],
        timeout,
    )
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def _pick(res: dict, key: str, *, higher: bool) -> float | str | None:
    if "error" in res:
        return res["error"]
    xs = res.get(key)
    return C.best(xs, higher_is_better=higher) if xs else None


def _blob_pick(res: dict, size: int) -> float | str | None:
    if "error" in res:
        return res["error"]
    return min(res["times"][str(size)])


def rows(out: dict) -> list[C.Row]:
    ot, st = out["ours_throughput"], out["sdk_throughput"]
    ob, sb = out["ours_blob"], out["sdk_blob"]
    oi, si = out["ours_import"], out["sdk_import"]
    r: list[C.Row] = []

    def ratio(a: Any, b: Any) -> float | None:
        a, b = C.num(a), C.num(b)
        return a / b if a is not None and b else None

    def judge(value: float | None, limit: float, *, at_least: bool) -> bool | None:
        if value is None:
            return None
        return value >= limit if at_least else value <= limit

    o, s = _pick(ot, "seq", higher=True), _pick(st, "seq", higher=True)
    q = ratio(o, s)
    r.append(
        C.Row(
            "sequential echo",
            o,
            s,
            "calls/s",
            q,
            f"ours/SDK >= {TARGETS['seq']:g}",
            judge(q, TARGETS["seq"], at_least=True),
        )
    )
    o, s = _pick(ot, "conc", higher=True), _pick(st, "conc", higher=True)
    q = ratio(o, s)
    r.append(
        C.Row(
            f"{out['inflight']}-in-flight echo",
            o,
            s,
            "calls/s",
            q,
            f"ours/SDK >= {TARGETS['conc']:g}",
            judge(q, TARGETS["conc"], at_least=True),
        )
    )

    big, one, twelve = out["sizes"]
    o, s = _blob_pick(ob, big), _blob_pick(sb, big)
    q = ratio(o, s)
    r.append(
        C.Row(
            f"{big // MiB} MiB blob call",
            o,
            s,
            "s",
            q,
            f"ours/SDK <= 1/{1 / TARGETS['blob_time']:g}",
            judge(q, TARGETS["blob_time"], at_least=False),
        )
    )
    for key, label in (("tracemalloc_peak", "tracemalloc peak"), ("rss_delta", "RSS hi-water")):
        vals = [res.get("error") or res[key] / big for res in (ob, sb)]
        q = ratio(*vals)
        r.append(
            C.Row(
                f"  {label} growth / payload",
                vals[0],
                vals[1],
                "x",
                q,
                f"ours <= {TARGETS['blob_mem']:g}x payload",
                judge(C.num(vals[0]), TARGETS["blob_mem"], at_least=False),
            )
        )
    lin = []
    for res in (ob, sb):
        t1, t12 = _blob_pick(res, one), _blob_pick(res, twelve)
        lin.append(ratio(t12, t1) if C.num(t1) else t1)
    r.append(
        C.Row(
            f"t({twelve // MiB} MiB) / t({one // MiB} MiB)",
            lin[0],
            lin[1],
            "x",
            ratio(*lin),
            f"ours <= {TARGETS['linearity']:g}x",
            judge(C.num(lin[0]), TARGETS["linearity"], at_least=False),
        )
    )
    for size in (one, twelve):
        o, s = _blob_pick(ob, size), _blob_pick(sb, size)
        r.append(C.Row(f"  {size // MiB} MiB blob call", o, s, "s", ratio(o, s), "(info)"))

    o, s = _pick(oi, "times", higher=False), _pick(si, "times", higher=False)
    r.append(
        C.Row(
            "import client (fresh process)",
            o,
            s,
            "s",
            ratio(o, s),
            f"ours <= {TARGETS['import']:g} s",
            judge(C.num(o), TARGETS["import"], at_least=False),
        )
    )

    o, s = _pick(ot, "connect", higher=False), _pick(st, "connect", higher=False)
    r.append(C.Row("connect: spawn + initialize", o, s, "s", ratio(o, s), "(info) SDK legacy"))
    sa = _pick(st, "connect_auto", higher=False)
    ver = st.get("auto_version", "?")
    r.append(C.Row(f"  SDK mode='auto' (discover probe -> {ver})", None, sa, "s", None, "(info)"))
    return r


def print_report(out: dict) -> None:
    title = (
        f"stdio vs {Path(out['server']).name}: seq n={out['n_seq']}, "
        f"{out['inflight']}-in-flight n={out['n_conc']} (best of {out['repeats']}); "
        f"blob best of {out['blob_repeats']}"
    )
    C.print_table(title, rows(out))
    print(
        "  per-repeat calls/s (raw = bare stdlib pipe client, no MCP library: server-bound ceiling)"
    )
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--n-seq", type=int, default=None, help="sequential calls per repeat")
    ap.add_argument("--n-conc", type=int, default=None, help="concurrent calls per repeat")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    # internal: child mode
    ap.add_argument("--child", choices=("ours", "sdk", "raw"), help=argparse.SUPPRESS)
    ap.add_argument("--task", choices=("throughput", "blob"), help=argparse.SUPPRESS)
    ap.add_argument("--inflight", type=int, default=64, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=str(10 * MiB), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(args)
        return 0
    out = collect(args.quick, args.server, args.n_seq, args.n_conc, args.repeats)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
