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
import os
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


def _proc_status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mark() -> tuple[str, int]:
    """Start an RSS high-water measurement.

    Linux: reset the peak (``/proc/self/clear_refs`` <- 5) and remember the current RSS, so
    earlier peaks (imports, warm-up) cannot hide the growth. Elsewhere: ``ru_maxrss`` delta,
    which reads 0 if an earlier peak was higher.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        now = _proc_status_kib("VmRSS")
        if now is not None:
            return "hwm", now * 1024
    except OSError:
        pass
    return "maxrss", _maxrss_bytes()


def rss_growth(mark: tuple[str, int]) -> int:
    kind, base = mark
    if kind == "hwm":
        return (_proc_status_kib("VmHWM") or 0) * 1024 - base
    return _maxrss_bytes() - base


def _maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


# =========================================================================================
# child side: ours (blocking threads binding)
# =========================================================================================


def _ours_connect(server: Path) -> Any:
    from mcp_proto_io.threads import connect_stdio

    return connect_stdio([sys.executable, str(server)])


def sequential_rates(client: Any, n_seq: int, repeats: int) -> list[float]:
    """Calls/s of ``repeats`` rounds of ``n_seq`` sequential echo calls on a blocking
    ``client``, after a checked first call and 300 warm-up ones (each round from a collected
    heap)."""
    assert _text_of(client.call_tool("echo", ECHO_ARGS)) == ECHO_ARGS["text"]
    for _ in range(300):
        client.call_tool("echo", ECHO_ARGS)
    rates = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(n_seq):
            client.call_tool("echo", ECHO_ARGS)
        rates.append(n_seq / (time.perf_counter() - t0))
    return rates


def ours_throughput(server: Path, n_seq: int, n_conc: int, inflight: int, repeats: int) -> dict:
    connect_times = []
    for _ in range(3):
        t0 = time.perf_counter()
        with _ours_connect(server) as c:
            connect_times.append(time.perf_counter() - t0)
            c.call_tool("echo", ECHO_ARGS)
    out: dict[str, Any] = {"connect": connect_times, "seq": [], "conc": []}
    with _ours_connect(server) as c:
        out["seq"] = sequential_rates(c, n_seq, repeats)
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
                lambda s=size: c.call_tool("blob", {"size": s}), _reps(size, repeats)
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


def core_throughput(server: Path, n_seq: int, repeats: int) -> dict:
    """mcp-proto's sans-IO core alone, sequentially, driven by the thinnest blocking loop
    (``bench_instructions.BareCoreClient``: no lock, no waiter, no deadline fired, no SIGINT
    held back): what no binding on this core can beat; beside ``raw``, the core's own share of
    the threads binding's distance from the floor."""
    from bench_instructions import BareCoreClient

    with BareCoreClient([sys.executable, str(server)]) as client:
        return {"seq": sequential_rates(client, n_seq, repeats)}


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
        mark = rss_mark()
        t0 = time.perf_counter()
        result = await c.call_tool("blob", {"size": size})
        out["first"] = time.perf_counter() - t0
        out["rss_delta"] = rss_growth(mark)
        out["rss_method"] = mark[0]
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
            await c.call_tool("blob", {"size": size})  # untimed warm-up, as in _time_blob
            times = []
            for _ in range(_reps(size, repeats)):
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
    mark = rss_mark()
    t0 = time.perf_counter()
    result = call(size)
    first = time.perf_counter() - t0
    rss_delta = rss_growth(mark)
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
    return {"first": first, "rss_delta": rss_delta, "rss_method": mark[0], "tracemalloc_peak": peak}


def _check_len(result: Any, size: int) -> None:
    if len(_text_of(result)) != size:
        raise RuntimeError(f"blob returned {len(_text_of(result))} chars, wanted {size}")


def _reps(size: int, repeats: int) -> int:
    """Small payloads are cheap and relatively noisier: repeat them more."""
    return repeats if size > 2 * MiB else max(10, 4 * repeats)


def _time_blob(fn: Any, repeats: int) -> list[float]:
    fn()  # untimed warm-up: the first call at a new size pays for growing the heap
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return times


def child_main(args: argparse.Namespace) -> None:
    if args.pin:  # inherited by the server process the client spawns
        os.sched_setaffinity(0, {int(c) for c in args.pin.split(",")})
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
        elif args.child == "core":
            res = core_throughput(server, args.n_seq, args.repeats)
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
    # Timed as an installed package is imported: from its cached bytecode.  An environment
    # that forbids writing bytecode (PYTHONDONTWRITEBYTECODE, common in containers) would
    # time the compiler instead, so the children may write it, and one untimed run does.
    env = C.child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    times = []
    for i in range(runs + 1):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(C.HERE),
            check=False,
        )
        if proc.returncode:
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            if impl == "ours":
                return {"error": f"mcp_proto not importable: {err}"}
            return {"error": err}
        if i:  # the first run wrote the bytecode
            times.append(float(proc.stdout.split()[-1]))
    return {"times": times}


def _pool(results: list[dict]) -> dict:
    """Merge the per-repeat lists of several child runs (first error wins)."""
    for res in results:
        if "error" in res:
            return res
    merged: dict[str, Any] = {}
    for res in results:
        for key, value in res.items():
            if isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            else:
                merged[key] = value
    return merged


def collect(
    quick: bool = False,
    server: str | None = None,
    n_seq: int | None = None,
    n_conc: int | None = None,
    repeats: int | None = None,
    pin: str | None = None,
) -> dict:
    srv = C.server_path(server)
    inflight = 64
    out: dict[str, Any] = {
        "server": str(srv),
        "n_seq": n_seq or (300 if quick else 3000),
        "n_conc": n_conc or (inflight * (20 if quick else 100)),
        "inflight": inflight,
        "repeats": repeats or (3 if quick else 4),
        "rounds": 1 if quick else 2,
        "blob_repeats": 2 if quick else 5,
        "sizes": [10 * MiB, 1 * MiB, 12 * MiB],
        "pin": pin,
    }
    timeout = 300 if quick else 1800
    base = [sys.executable, str(Path(__file__).resolve()), "--server", str(srv)]
    if pin:
        base += ["--pin", pin]

    def child(impl: str, task: str) -> dict:
        argv = [*base, "--child", impl, "--task", task]
        if task == "throughput":
            argv += ["--n-seq", str(out["n_seq"]), "--n-conc", str(out["n_conc"])]
            argv += ["--inflight", str(inflight), "--repeats", str(out["repeats"])]
        else:
            argv += ["--repeats", str(out["blob_repeats"])]
            argv += ["--sizes", ",".join(map(str, out["sizes"]))]
        return C.run_child(argv, timeout)

    # Interleave the clients round by round so slow drift on the machine hits both alike.
    runs: dict[str, list[dict]] = {"ours": [], "sdk": [], "raw": [], "core": []}
    for _ in range(out["rounds"]):
        for impl, results in runs.items():
            results.append(child(impl, "throughput"))
    for impl, results in runs.items():
        out[f"{impl}_throughput"] = _pool(results)
    for impl in ("ours", "sdk"):
        out[f"{impl}_blob"] = child(impl, "blob")
        out[f"{impl}_import"] = import_times(impl, 3 if quick else 5)
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def rows(out: dict) -> list[C.Row]:
    """Targets are judged on medians (import: on the best of N, as specified)."""
    ot, st = out["ours_throughput"], out["sdk_throughput"]
    ob, sb = out["ours_blob"], out["sdk_blob"]
    big, one, twelve = out["sizes"]
    r: list[C.Row] = []

    def row(name: str, o: dict, s: dict, get: Any, unit: str, *, higher: bool) -> C.Row:
        """A Row from per-repeat lists; `get(res)` picks the list out of a child result."""
        ours, ours_med = C.stat(o, None if "error" in o else get(o), higher=higher)
        sdk, sdk_med = C.stat(s, None if "error" in s else get(s), higher=higher)
        row = C.Row(name, ours, sdk, unit, ours_med, sdk_med)
        r.append(row)
        return row

    def target(
        row: C.Row, text: str, value: float | None, limit: float, *, ge: bool, best: Any = None
    ) -> None:
        """Judge `value` (a median); `best`, if given, only annotates a miss."""
        row.target = text
        row.ok = None if value is None else (value >= limit if ge else value <= limit)
        b = C.num(best)
        if row.ok is False and b is not None and (b >= limit if ge else b <= limit):
            row.ok_best = True

    x = row("sequential echo", ot, st, lambda d: d["seq"], "calls/s", higher=True)
    target(x, f"ours/SDK >= {TARGETS['seq']:g}", x.ratio_med, TARGETS["seq"], ge=True, best=x.ratio)
    x = row(
        f"{out['inflight']}-in-flight echo", ot, st, lambda d: d["conc"], "calls/s", higher=True
    )
    target(
        x, f"ours/SDK >= {TARGETS['conc']:g}", x.ratio_med, TARGETS["conc"], ge=True, best=x.ratio
    )

    x = row(
        f"{big // MiB} MiB blob call", ob, sb, lambda d: d["times"][str(big)], "s", higher=False
    )
    limit = TARGETS["blob_time"]
    target(x, f"ours/SDK <= 1/{1 / limit:g}", x.ratio_med, limit, ge=False, best=x.ratio)
    vals = [res.get("error") or res["first"] for res in (ob, sb)]
    r.append(C.Row("  first (cold) call, same size", vals[0], vals[1], "s", target="(info)"))
    for key, label in (("tracemalloc_peak", "tracemalloc peak"), ("rss_delta", "RSS hi-water")):
        vals = [res.get("error") or res[key] / big for res in (ob, sb)]
        x = C.Row(f"  {label} growth / payload", vals[0], vals[1], "x")
        r.append(x)
        limit = TARGETS["blob_mem"]
        target(x, f"ours <= {limit:g}x payload", C.num(vals[0]), limit, ge=False)
    lin = C.Row(f"t({twelve // MiB} MiB) / t({one // MiB} MiB)", None, None, "x")
    for side, res in (("ours", ob), ("sdk", sb)):
        if "error" in res:
            setattr(lin, side, res["error"])
            continue
        t1, t12 = res["times"][str(one)], res["times"][str(twelve)]
        setattr(lin, side, min(t12) / min(t1))
        setattr(lin, f"{side}_med", C.median(t12) / C.median(t1))
    r.append(lin)
    limit = TARGETS["linearity"]
    target(lin, f"ours <= {limit:g}x", lin.ours_med, limit, ge=False, best=lin.ours)
    for size in (one, twelve):
        x = row(
            f"  {size // MiB} MiB blob call",
            ob,
            sb,
            lambda d, s=size: d["times"][str(s)],
            "s",
            higher=False,
        )
        x.target = "(info)"

    x = row(
        "import client (fresh process)",
        out["ours_import"],
        out["sdk_import"],
        lambda d: d["times"],
        "s",
        higher=False,
    )
    target(x, f"ours <= {TARGETS['import']:g} s", C.num(x.ours), TARGETS["import"], ge=False)

    x = row("connect: spawn + initialize", ot, st, lambda d: d["connect"], "s", higher=False)
    x.target = "(info) SDK mode=legacy"
    ver = st.get("auto_version", "?")
    sdk, sdk_med = C.stat(st, st.get("connect_auto"), higher=False)
    name = f"  SDK mode='auto' (discover probe -> {ver})"
    r.append(C.Row(name, None, sdk, "s", None, sdk_med, "(info)"))
    return r


def print_report(out: dict) -> None:
    reps = out["repeats"] * out["rounds"]
    title = (
        f"stdio vs {Path(out['server']).name}: best (median) of {reps} repeats of seq "
        f"n={out['n_seq']} and {out['inflight']}-in-flight n={out['n_conc']}; "
        f"blob best (median) of {out['blob_repeats']}"
        + (f"; pinned to CPU {out['pin']}" if out.get("pin") else "")
    )
    C.print_table(title, rows(out))
    print(
        "  per-repeat calls/s (raw = bare stdlib pipe client, no MCP library: server-bound ceiling;"
        "\n  core = mcp-proto's sans-IO core driven by the thinnest blocking loop, no binding)"
    )
    for impl in ("ours", "sdk", "raw", "core"):
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
    floor = out["raw_throughput"].get("seq")
    for impl in ("ours", "core"):
        seq = out[f"{impl}_throughput"].get("seq")
        if floor and seq:
            print(f"  {impl:4s} seq / raw seq: {C.median(seq) / C.median(floor):.2f} (medians)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--n-seq", type=int, default=None, help="sequential calls per repeat")
    ap.add_argument("--n-conc", type=int, default=None, help="concurrent calls per repeat")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+server to CPUs, e.g. 0 or 0,1")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    # internal: child mode
    ap.add_argument("--child", choices=("ours", "sdk", "raw", "core"), help=argparse.SUPPRESS)
    ap.add_argument("--task", choices=("throughput", "blob"), help=argparse.SUPPRESS)
    ap.add_argument("--inflight", type=int, default=64, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=str(10 * MiB), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(args)
        return 0
    out = collect(args.quick, args.server, args.n_seq, args.n_conc, args.repeats, args.pin)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
