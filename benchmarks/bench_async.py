"""Async bindings over stdio: ours (``mcp_proto_io.asyncio`` / ``mcp_proto_io.trio``) vs the
official SDK (mcp 2.3.0, ``Client(StdioServerParameters(...), mode="legacy")``), per runtime.

Five clients, each in a fresh child process, talk to ``benchmarks/servers/fast_server.py``:

* ours on asyncio: ``mcp_proto_io.asyncio.connect_stdio`` under ``asyncio.run``
* the SDK on asyncio: ``Client`` under ``asyncio.run``
* ours on trio: ``mcp_proto_io.trio.connect_stdio`` under ``trio.run``
* the SDK on trio: ``Client`` under ``anyio.run(..., backend="trio")``
* the floor: a client with no library at all on asyncio (:class:`RawAsyncioClient`: one reader
  task, a dict of futures, ``json`` over the pipes; no timeouts, no validation)
* the official TypeScript SDK's client (``benchmarks/ts_sdk_client.cjs``: ``Client`` over
  ``StdioClientTransport``, the same calls), when node and the SDK are installed
  (``.ci/install`` puts SDK 1.32 in ``.ci/node`` as server-everything's dependency)

(a) tools/call ``echo`` round trips/s: sequential (target ours/SDK >= 3 on the same runtime),
    and 64 in flight: 64 tasks sharing one client (target ours/SDK >= 6)
(b) import time in a fresh interpreter, best of N (target ``mcp_proto_io.asyncio`` <= 0.2 s)
(c) 64 in flight against the floor: asyncio >= 0.8 of it, trio >= 0.6 (what a binding costs
    beyond the protocol and the pipes), and both ahead of the TypeScript SDK (ours/TS >= 1)

Run: ``python benchmarks/bench_async.py [--quick] [--server PATH] [--pin CPUS] [--json PATH]``
"""

# Imports of the libraries under test are deliberately lazy (availability, import cost).
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import bench_stdio as S  # shared helpers: SDK client, result text, pooling, import timing

ECHO_ARGS = {"text": "hello world"}
RUNTIMES = ("asyncio", "trio")
IMPLS = ("ours", "sdk")
FLOOR = "raw-asyncio"  # the no-library client (asyncio only: the floor of both runtimes)
TS = "ts-sdk"  # the official TypeScript SDK's client on node
TS_SCRIPT = Path(__file__).resolve().parent / "ts_sdk_client.cjs"
TS_MODULES = C.REPO / ".ci" / "node" / "node_modules"
TARGETS = {
    "seq": 3.0,  # ours/SDK calls/s >=, same runtime
    "conc": 6.0,  # ours/SDK calls/s >=, same runtime
    "import": 0.2,  # seconds <=, import mcp_proto_io.asyncio
}
#: 64 in flight, ours/floor calls/s >= (the floor is the no-library asyncio client).
FLOOR_TARGETS = {"asyncio": 0.8, "trio": 0.6}
#: 64 in flight, ours/TypeScript SDK calls/s >= (both runtimes: ahead of it).
TS_TARGET = 1.0
# What a program pays to import each client.  The SDK rows add the anyio backend module that
# ``anyio.run`` loads for the runtime (for trio this imports trio, as our trio binding does).
IMPORTS = {
    "ours-asyncio": "import mcp_proto_io.asyncio",
    "ours-trio": "import mcp_proto_io.trio",
    "sdk-asyncio": "from mcp import Client, StdioServerParameters; import anyio._backends._asyncio",
    "sdk-trio": "from mcp import Client, StdioServerParameters; import anyio._backends._trio",
}
S.IMPORTS.update(IMPORTS)  # S.import_times looks the code up there


# =========================================================================================
# child side: one client on one runtime
# =========================================================================================


#: What the no-library clients send to open a session (as an old server expects it).
RAW_INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {},
                  "clientInfo": {"name": "raw", "version": "0"}}
RAW_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class RawAsyncioClient:
    """The floor: an MCP client with no library at all on asyncio (one reader task, a dict of
    futures by id, ``json`` and the subprocess pipes; no timeouts, no validation).  What a
    binding costs is measured against this."""

    def __init__(self, argv: list[str]) -> None:
        self._argv = argv
        self._futures: dict[int, asyncio.Future[Any]] = {}
        self._next = 0

    async def __aenter__(self) -> RawAsyncioClient:
        self._proc = await asyncio.create_subprocess_exec(
            *self._argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self._request("initialize", RAW_INITIALIZE)
        self._write(RAW_INITIALIZED)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            await asyncio.wait_for(self._proc.wait(), 10.0)
        except asyncio.TimeoutError:
            self._proc.kill()
            await self._proc.wait()
        self._reader.cancel()

    def _write(self, msg: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(msg).encode() + b"\n")

    async def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        futures = self._futures
        try:
            while line := await stdout.readline():
                msg = json.loads(line)
                future = futures.pop(msg.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(msg.get("result"))
        finally:  # the server ended (or wrote garbage): no call waits forever
            for future in futures.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server's output ended"))
            futures.clear()

    def _request(self, method: str, params: dict[str, Any]) -> asyncio.Future[Any]:
        self._next += 1
        future = asyncio.get_running_loop().create_future()
        self._futures[self._next] = future
        self._write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return future

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self._request("tools/call",
                                                     {"name": name, "arguments": arguments})
        return result


async def _in_tasks(runtime: str, worker: Callable[[], Awaitable[None]], count: int) -> None:
    """Run ``count`` copies of ``worker`` as tasks of the runtime itself (no anyio)."""
    if runtime == "trio":
        import trio

        async with trio.open_nursery() as nursery:
            for _ in range(count):
                nursery.start_soon(worker)
    else:
        await asyncio.gather(*(worker() for _ in range(count)))


async def throughput(
    connect: Callable[[], Any],
    runtime: str,
    n_seq: int,
    n_conc: int,
    inflight: int,
    repeats: int,
) -> dict[str, Any]:
    """Connect times, then sequential and ``inflight``-task round trips on one client."""
    out: dict[str, Any] = {"connect": [], "seq": [], "conc": []}
    for _ in range(3):
        t0 = time.perf_counter()
        async with connect() as c:
            out["connect"].append(time.perf_counter() - t0)
            await c.call_tool("echo", ECHO_ARGS)
    async with connect() as c:
        assert S._text_of(await c.call_tool("echo", ECHO_ARGS)) == ECHO_ARGS["text"]
        per = n_conc // inflight

        async def calls(count: int) -> None:
            for _ in range(count):
                await c.call_tool("echo", ECHO_ARGS)

        async def worker() -> None:
            await calls(per)

        await calls(300)  # warm-up (the SDK's first call of a tool also sends tools/list)
        for key, n, run in (
            ("seq", n_seq, lambda: calls(n_seq)),
            ("conc", per * inflight, lambda: _in_tasks(runtime, worker, inflight)),
        ):
            if key == "conc":
                await run()  # one untimed round: the tasks' first calls
            for _ in range(repeats):
                gc.collect()
                t0 = time.perf_counter()
                await run()
                out[key].append(n / (time.perf_counter() - t0))
    return out


def _ours_connect(runtime: str, server: Path) -> Callable[[], Any]:
    if runtime == "trio":
        from mcp_proto_io.trio import connect_stdio
    else:
        from mcp_proto_io.asyncio import connect_stdio
    return lambda: connect_stdio([sys.executable, str(server)])


def child_main(key: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Run one client (``ours-asyncio``, ``sdk-trio``, ...) as ``cfg`` says; its result."""
    impl, rt = key.split("-")
    if cfg["pin"]:  # inherited by the server process the client spawns
        os.sched_setaffinity(0, {int(c) for c in cfg["pin"].split(",")})
    server = Path(cfg["spawn"])
    if impl == "sdk":
        connect = lambda: S._sdk_client(server)  # noqa: E731
    elif impl == "raw":
        connect = lambda: RawAsyncioClient([sys.executable, str(server)])  # noqa: E731
    else:
        try:
            connect = _ours_connect(rt, server)
        except (ImportError, AttributeError) as exc:  # not written yet, or half written
            return {"error": C.not_importable(exc)}
    args = (connect, rt, cfg["n_seq"], cfg["n_conc"], cfg["inflight"], cfg["repeats"])
    if rt == "asyncio":
        return asyncio.run(throughput(*args))
    if impl == "ours":
        import trio

        return trio.run(throughput, *args)
    import anyio

    return anyio.run(throughput, *args, backend="trio")


# =========================================================================================
# parent side
# =========================================================================================


def collect(
    quick: bool = False, pin: str | None = None, server: str | None = None, **counts: int
) -> dict[str, Any]:
    """Run the five clients (interleaved) and the imports; ``counts`` may override
    ``n_seq``, ``n_conc``, ``repeats``, ``rounds`` and ``import_runs``."""
    inflight = 64
    out: dict[str, Any] = {
        "server": str(C.server_path(server)),
        "n_seq": 300 if quick else 3000,
        "n_conc": inflight * (10 if quick else 100),
        "inflight": inflight,
        "repeats": 3 if quick else 2,
        "rounds": 1 if quick else 4,
        "import_runs": 3 if quick else 5,
        "pin": pin,
        **counts,
    }
    out["spawn"] = out["server"]  # what the clients start (the server, or its pinning script)
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as folder:
        if pin and "/" in pin:  # CLIENT/SERVER: each client on its CPUs, its server on others
            client_cpus, server_cpus = (C.cpu_list(part) for part in pin.split("/", 1))
            out["pin"], out["server_pin"] = client_cpus, server_cpus
            out["spawn"] = str(C.pinned_server(Path(out["server"]), server_cpus, Path(folder)))
        elif pin:
            out["pin"] = C.cpu_list(pin)
        _run_clients(out)
    del out["spawn"]  # (a pinning script lived in the folder just removed)
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def _run_clients(out: dict[str, Any]) -> None:
    """Every client's rounds, then the import times, into ``out``."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--config", json.dumps(out)]
    # Interleave the five clients round by round so slow drift hits all of them alike.
    runs: dict[str, list[dict]] = {f"{i}-{rt}": [] for rt in RUNTIMES for i in IMPLS}
    runs[FLOOR] = []
    ts_argv = _ts_argv(out)
    if ts_argv is not None:
        runs[TS] = []
    else:
        out[TS] = {"error": f"not measured: no node, or no TypeScript SDK in {TS_MODULES}"}
    keys = list(runs)
    for i in range(out["rounds"]):
        # Each round starts one client later, so no client always runs first (or right
        # after a given one) within the rounds whose ratios are paired.
        for key in keys[i % len(keys):] + keys[:i % len(keys)]:
            child = ts_argv if key == TS else [*argv, "--child", key]
            runs[key].append(C.run_child(child, 600))  # type: ignore[arg-type]
    out["round_medians"] = {
        key: [statistics.median(res["conc"]) for res in results]
        for key, results in runs.items()
        if results and all(res.get("conc") for res in results)
    }
    for key, results in runs.items():
        out[key] = S._pool(results)
        if key in (FLOOR, TS):
            continue
        res = S.import_times(key, out["import_runs"])
        if key.startswith("ours") and "error" in res:
            res["error"] = f"mcp_proto not importable: {res['error']}"
        out[f"{key}_import"] = res


def _ts_argv(cfg: dict[str, Any]) -> list[str] | None:
    """The command that runs the TypeScript SDK's client, or None when it cannot run here."""
    node_file = TS_MODULES.parent / "NODE"
    node = node_file.read_text().strip() if node_file.exists() else shutil.which("node")
    if not node or not (TS_MODULES / "@modelcontextprotocol" / "sdk" / "package.json").exists():
        return None
    settings = {k: cfg[k] for k in ("n_seq", "n_conc", "inflight", "repeats")}
    settings.update(python=sys.executable, server=cfg["spawn"])
    argv = [node, str(TS_SCRIPT), str(TS_MODULES), json.dumps(settings)]
    if cfg.get("pin"):  # pinned as the Python clients pin themselves (the server inherits it)
        cpus = sorted(int(c) for c in cfg["pin"].split(","))
        pin = (f"import os, sys; os.sched_setaffinity(0, {cpus}); "
               "os.execv(sys.argv[1], sys.argv[1:])")
        argv = [sys.executable, "-c", pin, *argv]
    return argv


def _paired(ours_rounds: list[float] | None, other_rounds: list[float] | None) -> float | None:
    """The median over rounds of ours/other, each round's medians (both ran in that round,
    one after the other, so what the machine did between rounds cancels out)."""
    if not ours_rounds or not other_rounds or len(ours_rounds) != len(other_rounds):
        return None
    return statistics.median(a / b for a, b in zip(ours_rounds, other_rounds, strict=True))


def _ratio_row(name: str, ours: dict, other: dict, limit: float, label: str,
               paired: float | None = None) -> C.Row:
    """64 in flight, ours against another client (the floor, the TypeScript SDK), judged on
    the median of the per-round ratios when there are several rounds."""
    (ours_c, ours_cm), (other_c, other_cm) = (
        C.stat(x, x.get("conc"), higher=True) for x in (ours, other)
    )
    row = C.Row(name, ours_c, other_c, "calls/s", ours_cm, other_cm, paired=paired)
    row.target = f"ours/{label} >= {limit:g}"
    row.ok = None if row.ratio_med is None else row.ratio_med >= limit
    row.ok_best = row.ok is False and (row.ratio or 0) >= limit
    return row


def _calls_row(name: str, ours: dict, sdk: dict, key: str) -> C.Row:
    """A calls/s row, judged on the ratio of the medians against TARGETS[key]."""
    cells = [C.stat(res, res.get(key), higher=True) for res in (ours, sdk)]
    row = C.Row(name, cells[0][0], cells[1][0], "calls/s", cells[0][1], cells[1][1])
    limit = TARGETS[key]
    row.target = f"ours/SDK >= {limit:g}"
    row.ok = None if row.ratio_med is None else row.ratio_med >= limit
    row.ok_best = row.ok is False and (row.ratio or 0) >= limit
    return row


def rows(out: dict) -> list[C.Row]:
    """Targets are judged on medians (import: on the best of N, as specified)."""
    r: list[C.Row] = []
    for rt in RUNTIMES:
        ours, sdk = out[f"ours-{rt}"], out[f"sdk-{rt}"]
        r.append(_calls_row(f"{rt}: sequential echo", ours, sdk, "seq"))
        r.append(_calls_row(f"{rt}: {out['inflight']}-in-flight echo", ours, sdk, "conc"))
        # Import: best of N only (no median), judged on the best as specified.
        best = [
            C.stat(x, x.get("times"), higher=False)[0]
            for x in (out[f"ours-{rt}_import"], out[f"sdk-{rt}_import"])
        ]
        imp = C.Row(f"{rt}: import (fresh process)", best[0], best[1], "s", target="(info)")
        if rt == "asyncio":
            limit = TARGETS["import"]
            imp.target = f"ours <= {limit:g} s"
            seconds = C.num(imp.ours)
            imp.ok = None if seconds is None else seconds <= limit
        r.append(imp)
        (ours_con, ours_med), (sdk_con, sdk_med) = (
            C.stat(x, x.get("connect"), higher=False) for x in (ours, sdk)
        )
        n = out["inflight"]
        rounds = out.get("round_medians", {})
        mine = rounds.get(f"ours-{rt}")
        if out.get(FLOOR) is not None:
            r.append(_ratio_row(f"{rt}: {n}-in-flight vs no-library floor", ours, out[FLOOR],
                                FLOOR_TARGETS[rt], "floor", _paired(mine, rounds.get(FLOOR))))
        if out.get(TS) is not None:
            r.append(_ratio_row(f"{rt}: {n}-in-flight vs TypeScript SDK", ours, out[TS],
                                TS_TARGET, "TS", _paired(mine, rounds.get(TS))))
        r.append(
            C.Row(
                f"{rt}: connect (spawn + initialize)",
                ours_con,
                sdk_con,
                "s",
                ours_med,
                sdk_med,
                "(info) SDK mode=legacy",
            )
        )
    return r


def print_report(out: dict) -> None:
    reps = out["repeats"] * out["rounds"]
    C.print_table(
        f"async bindings over stdio vs {Path(out['server']).name}: best (median) of {reps} "
        f"repeats of seq n={out['n_seq']} and {out['inflight']}-in-flight n={out['n_conc']}; "
        f"import best of {out['import_runs']}"
        + (f"; clients pinned to CPU {out['pin']}" if out.get("pin") else "")
        + (f", their servers to CPU {out['server_pin']}" if out.get("server_pin") else ""),
        rows(out),
    )
    print("  per-repeat calls/s")
    for key in [*(f"{i}-{rt}" for rt in RUNTIMES for i in IMPLS), FLOOR, TS]:
        res = out.get(key, {})
        if "error" in res:
            print(f"  {key:12s} error: {res['error']}")
        for metric in ("seq", "conc"):
            if res.get(metric):
                print(f"  {key:12s} {metric:4s} " + ", ".join(f"{x:,.0f}" for x in res[metric]))
    print("  import code timed:")
    for key, code in IMPORTS.items():
        print(f"  {key:12s} {code}")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (about 10 s)")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--pin", metavar="CPUS",
                    help="pin clients and servers to CPUs, e.g. 0 or 0,1; CLIENT/SERVER (0/1)\n"
                         "pins each client to CLIENT and its server to SERVER")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # internal: ours-asyncio, sdk-trio, ...
    ap.add_argument("--config", help=argparse.SUPPRESS)  # internal: collect()'s settings
    args = ap.parse_args(argv)
    if not args.child:
        out = collect(args.quick, args.pin, args.server)
        print_report(out)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2))
        return 0
    try:
        res = child_main(args.child, json.loads(args.config))
    except Exception as exc:
        C.emit({"error": f"{type(exc).__name__}: {exc}"})
        raise
    C.emit(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
