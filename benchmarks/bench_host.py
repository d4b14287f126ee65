"""The Host (many servers as one) against one server's Client, and against fastmcp's
multi-server ``Client(MCPConfig)``, in one run.

    python benchmarks/bench_host.py [--quick] [--pin CPUS] [--json PATH]

What is measured, each client in a fresh child process:

* **call overhead** (sequential ``tools/call echo``, best and median of the repeats, same
  server ``benchmarks/servers/fast_server.py``): the threads Host's ``call_tool("fast__echo")``
  against the same server's threads ``Client.call_tool("echo")`` directly (target: the Host
  costs at most 5%), interleaved repeat by repeat in one process, so the ratio is taken per
  pair of repeats (its median is what the target judges: robust to the machine's drift); the
  asyncio Host against the asyncio Client likewise; fastmcp 4.1's
  ``Client({"mcpServers": ...})`` (two servers, so its names are prefixed as ours are)
  calling ``fast_echo``; and a hand-rolled pipe client with no library
  at all (the floor: ``bench_stdio.raw_throughput``).
* **concurrent start**: ten servers that each take ``--startup-delay`` seconds to start,
  opened by the Host (all at once) against ten Clients connected one by one, and fastmcp's
  multi-server client entering its ``async with`` over the same ten.
* **control**: a second client identical to the first, interleaved the same way: its ratio
  to the first is what "no difference" measures as on this machine in this run.
* **the Host's own cost**: the same calls with the server's client stubbed out, so the
  difference is the Host's routing alone (microseconds per call, and that as a share of
  the measured round trip: what the end-to-end ratio means once the machine's noise is
  taken out).
* **names**: ``assign_names`` over 64 servers x 200 tools, every name colliding (``never``)
  and none (``always``).

Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - each child imports only the client it measures
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

SERVER = C.DEFAULT_SERVER
ECHO = {"text": "hello world"}
#: Seconds each server of the start benchmark sleeps before it reads stdin.
STARTUP_DELAY = 0.3
SERVERS_AT_ONCE = 10


def _spec(name: str, delay: float = 0.0) -> dict[str, Any]:
    args = [str(SERVER)] + (["--startup-delay", str(delay)] if delay else [])
    return {"command": sys.executable, "args": args}


def _mcp_servers(n: int, delay: float = 0.0) -> dict[str, Any]:
    names = ["fast"] + [f"fast{i}" for i in range(1, n)]
    return {"mcpServers": {name: _spec(name, delay) for name in names}}


# -- children ------------------------------------------------------------------------------


def child_threads(n: int, repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_config, connect_stdio
    out: dict[str, list[float]] = {"client": [], "host": [], "control": []}
    with connect_stdio([sys.executable, str(SERVER)]) as client, \
            connect_stdio([sys.executable, str(SERVER)]) as twin, \
            connect_config(_mcp_servers(2)) as host:
        for _ in range(300):  # warm-up
            client.call_tool("echo", ECHO)
            twin.call_tool("echo", ECHO)
            host.call_tool("fast__echo", ECHO)
        for _ in range(repeats):
            for key, call in (("client", lambda: client.call_tool("echo", ECHO)),
                              ("host", lambda: host.call_tool("fast__echo", ECHO)),
                              ("control", lambda: twin.call_tool("echo", ECHO))):
                t0 = time.perf_counter()
                for _ in range(n):
                    call()
                out[key].append(n / (time.perf_counter() - t0))
    return out


def child_asyncio(n: int, repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.asyncio import connect_config, connect_stdio

    async def main() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"client": [], "host": [], "control": []}
        async with connect_stdio([sys.executable, str(SERVER)]) as client, \
                connect_stdio([sys.executable, str(SERVER)]) as twin, \
                connect_config(_mcp_servers(2)) as host:
            for _ in range(300):
                await client.call_tool("echo", ECHO)
                await twin.call_tool("echo", ECHO)
                await host.call_tool("fast__echo", ECHO)
            for _ in range(repeats):
                for key in ("client", "host", "control"):
                    t0 = time.perf_counter()
                    if key == "host":
                        for _ in range(n):
                            await host.call_tool("fast__echo", ECHO)
                    else:
                        one = client if key == "client" else twin
                        for _ in range(n):
                            await one.call_tool("echo", ECHO)
                    out[key].append(n / (time.perf_counter() - t0))
        return out

    return asyncio.run(main())


def child_overhead(repeats: int) -> dict[str, Any]:
    """What the Host itself adds per call: its routing, with the server's client stubbed
    out (so no wire, no server: the difference is the Host's own code)."""
    C.setup_path()
    from mcp_proto_io.asyncio import connect_config as async_config
    from mcp_proto_io.threads import connect_config
    n = 50_000
    out: dict[str, list[float]] = {"threads": [], "asyncio": []}
    with connect_config(_mcp_servers(2)) as host:
        client = host.server("fast")
        client.call_tool = lambda *a, **k: None  # type: ignore[method-assign]
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                host.call_tool("fast__echo", ECHO)
            hosted = time.perf_counter() - t0
            t0 = time.perf_counter()
            for _ in range(n):
                client.call_tool("echo", ECHO, timeout=60.0)
            out["threads"].append((hosted - (time.perf_counter() - t0)) / n)

    async def main() -> None:
        async with async_config(_mcp_servers(2)) as host:
            client = host.server("fast")

            async def stub(*args: Any, **kwargs: Any) -> None:
                return None

            client.call_tool = stub  # type: ignore[method-assign]
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(n):
                    await host.call_tool("fast__echo", ECHO)
                hosted = time.perf_counter() - t0
                t0 = time.perf_counter()
                for _ in range(n):
                    await client.call_tool("echo", ECHO, timeout=60.0)
                out["asyncio"].append((hosted - (time.perf_counter() - t0)) / n)

    asyncio.run(main())
    return out


def child_fastmcp(n: int, repeats: int) -> dict[str, Any]:
    import logging
    logging.disable(logging.WARNING)
    from fastmcp import Client

    async def main() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"fastmcp": []}
        async with Client(_mcp_servers(2)) as client:
            for _ in range(100):
                await client.call_tool("fast_echo", ECHO)
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(n):
                    await client.call_tool("fast_echo", ECHO)
                out["fastmcp"].append(n / (time.perf_counter() - t0))
        return out

    return asyncio.run(main())


def child_raw(n: int, repeats: int) -> dict[str, Any]:
    import bench_stdio
    res = bench_stdio.raw_throughput(SERVER, n, 64, 64, repeats)
    return {"raw": res["seq"]}


def child_start(repeats: int, delay: float) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_config, connect_stdio
    cfg = _mcp_servers(SERVERS_AT_ONCE, delay)
    out: dict[str, list[float]] = {"host": [], "one_by_one": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        with connect_config(cfg) as host:
            out["host"].append(time.perf_counter() - t0)
            assert all(s.state == "running" for s in host.servers().values())
        clients = [connect_stdio([spec["command"], *spec["args"]])
                   for spec in cfg["mcpServers"].values()]
        t0 = time.perf_counter()
        try:
            for c in clients:
                c.connect()
                c.list_tools()
            out["one_by_one"].append(time.perf_counter() - t0)
        finally:
            for c in clients:
                c.close()
    return out


def child_fastmcp_start(repeats: int, delay: float) -> dict[str, Any]:
    import logging
    logging.disable(logging.WARNING)
    from fastmcp import Client
    cfg = _mcp_servers(SERVERS_AT_ONCE, delay)

    async def main() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"fastmcp": []}
        for _ in range(repeats):
            t0 = time.perf_counter()
            async with Client(cfg) as client:
                await client.list_tools()
                out["fastmcp"].append(time.perf_counter() - t0)
        return out

    return asyncio.run(main())


def child_names(repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto.host import NamePolicy, assign_names
    disjoint = {f"server{i}": [f"s{i}_tool_{j}" for j in range(200)] for i in range(64)}
    same = {f"server{i}": [f"tool_{j}" for j in range(200)] for i in range(64)}
    out: dict[str, list[float]] = {"always": [], "never_all_colliding": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        assign_names(disjoint, NamePolicy(mode="always"))
        out["always"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assign_names(same, NamePolicy(mode="never"))
        out["never_all_colliding"].append(time.perf_counter() - t0)
    return out


CHILDREN = {
    "threads": lambda a: child_threads(a.n, a.repeats),
    "asyncio": lambda a: child_asyncio(a.n, a.repeats),
    "fastmcp": lambda a: child_fastmcp(a.n, a.repeats),
    "raw": lambda a: child_raw(a.n, a.repeats),
    "start": lambda a: child_start(a.repeats, a.delay),
    "fastmcp_start": lambda a: child_fastmcp_start(a.repeats, a.delay),
    "names": lambda a: child_names(a.repeats),
    "overhead": lambda a: child_overhead(a.repeats),
}


# -- parent --------------------------------------------------------------------------------------


def collect(*, quick: bool, pin: str | None = None) -> dict[str, Any]:
    n = 300 if quick else 3000
    repeats = 3 if quick else 8
    start_repeats = 1 if quick else 3
    me = [sys.executable, str(Path(__file__).resolve())]

    pinned = ["--pin", pin] if pin else []

    def child(which: str, *extra: str, timeout: float = 600) -> dict[str, Any]:
        return C.run_child([*me, "--child", which, *pinned, *extra], timeout)

    common = ["--n", str(n), "--repeats", str(repeats)]
    out: dict[str, Any] = {"n": n, "repeats": repeats, "delay": STARTUP_DELAY, "pin": pin}
    for which in ("threads", "asyncio", "fastmcp", "raw"):
        out[which] = child(which, *common)
    start = ["--repeats", str(start_repeats), "--delay", str(STARTUP_DELAY)]
    out["start"] = child("start", *start)
    out["fastmcp_start"] = child("fastmcp_start", *start)
    out["names"] = child("names", "--repeats", str(repeats))
    out["overhead"] = child("overhead", "--repeats", str(min(repeats, 5)))
    return out


def _best_med(res: dict[str, Any], key: str, *, higher: bool) -> tuple[Any, float | None]:
    if "error" in res:
        return res["error"], None
    values = res.get(key) or []
    return C.stat(res, values, higher=higher)


def _pair_ratio(res: dict[str, Any], key: str = "host") -> float | None:
    """The median of ``key``/client over the interleaved repeats (``control``: a second,
    identical client: how far apart two equal things measure on this machine)."""
    if "error" in res or not res.get(key):
        return None
    return statistics.median(h / c for h, c in zip(res[key], res["client"], strict=True))


def _own_share(out: dict[str, Any], label: str) -> float | None:
    """The Host's own code per call (client stubbed) over the Client's round trip."""
    over, res = out["overhead"], out[label]
    client_med = C.num(_best_med(res, "client", higher=True)[1])
    if "error" in over or not over.get(label) or not client_med:
        return None
    return float(statistics.median(over[label]) * client_med)


def print_report(out: dict[str, Any]) -> None:
    th, aio, fm, raw = out["threads"], out["asyncio"], out["fastmcp"], out["raw"]
    rows = []
    for label, res in (("threads", th), ("asyncio", aio)):
        host, host_med = _best_med(res, "host", higher=True)
        client, client_med = _best_med(res, "client", higher=True)
        pairs = _pair_ratio(res)
        share = _own_share(out, label)
        # Judged on the Host's own code as a share of the round trip: the end-to-end ratio of
        # two ~100 us round trips moves by more than 5% between two identical clients here
        # (the control), so it cannot judge a 5% bound by itself.
        rows.append(C.Row(f"{label} Host vs its Client", host, client, "calls/s",
                          ours_med=host_med, sdk_med=client_med,
                          target="Host's own code <= 5% of a call",
                          ok=None if share is None else share <= 0.05))
        if pairs is not None:
            res["pair_ratio_median"] = pairs
    fm_best, fm_med = _best_med(fm, "fastmcp", higher=True)
    host_best, host_med = _best_med(aio, "host", higher=True)
    rows.append(C.Row("asyncio Host vs fastmcp MCPConfig", host_best, fm_best, "calls/s",
                      ours_med=host_med, sdk_med=fm_med, target="(compare)"))
    raw_best, raw_med = _best_med(raw, "raw", higher=True)
    th_best, th_med = _best_med(th, "host", higher=True)
    rows.append(C.Row("threads Host vs no library (raw pipes)", th_best, raw_best, "calls/s",
                      ours_med=th_med, sdk_med=raw_med, target="(the floor)"))
    C.print_table(f"host: sequential tools/call echo, n={out['n']}, best (median) of "
                  f"{out['repeats']}; 'SDK' column = the comparison named in the row"
                  + (f"; pinned to CPU {out['pin']}" if out.get("pin") else ""), rows)
    over = out["overhead"]
    for label in ("threads", "asyncio"):
        if "pair_ratio_median" in out[label]:
            control = _pair_ratio(out[label], "control")
            line = (f"{label}: Host/Client, median of the paired repeats: "
                    f"{out[label]['pair_ratio_median']:.3f} (an identical second client: "
                    f"{control:.3f})")
            share = _own_share(out, label)
            if share is not None:
                cost = statistics.median(over[label])
                line += (f"; the Host's own code: {cost * 1e6:.2f} us per call (client "
                         f"stubbed) = {share * 100:.1f}% of a round trip")
            print(line)

    st, fs = out["start"], out["fastmcp_start"]
    srows = []
    host_t, host_tm = _best_med(st, "host", higher=False)
    seq_t, seq_tm = _best_med(st, "one_by_one", higher=False)
    fm_t, fm_tm = _best_med(fs, "fastmcp", higher=False)
    concurrent_ok = None
    if isinstance(host_tm, float) and isinstance(seq_tm, float):
        concurrent_ok = host_tm < seq_tm / 3
    srows.append(C.Row(f"{SERVERS_AT_ONCE} servers: Host vs one by one", host_t, seq_t, "s",
                       ours_med=host_tm, sdk_med=seq_tm,
                       target="about the slowest one, not the sum", ok=concurrent_ok))
    srows.append(C.Row(f"{SERVERS_AT_ONCE} servers: Host vs fastmcp MCPConfig", host_t, fm_t,
                       "s", ours_med=host_tm, sdk_med=fm_tm, target="(compare)"))
    C.print_table(f"host: start {SERVERS_AT_ONCE} servers of {out['delay']} s start-up each "
                  "(time to all tools listed)", srows)

    nm = out["names"]
    if "error" in nm:
        print(f"names: {nm['error']}")
    else:
        print("assign_names, 64 servers x 200 tools: "
              f"always {statistics.median(nm['always']) * 1000:.1f} ms, "
              f"never with every name colliding "
              f"{statistics.median(nm['never_all_colliding']) * 1000:.1f} ms (medians)\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+servers to CPUs, e.g. 0")
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=3000, help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=8, help=argparse.SUPPRESS)
    ap.add_argument("--delay", type=float, default=STARTUP_DELAY, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        if args.pin:  # inherited by the servers the child starts
            os.sched_setaffinity(0, {int(c) for c in args.pin.split(",")})
        C.emit(CHILDREN[args.child](args))
        return 0
    out = collect(quick=args.quick, pin=args.pin)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
