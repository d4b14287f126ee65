"""Instructions per call, counted by valgrind: the noise-free view of ``bench_async.py``.

The 2-vCPU machine's speed drifts by up to 2x between rounds (the hypervisor's placement), so
a 5% change in a binding hides in wall-clock noise.  This script counts the instructions the
client process executes instead, which do not depend on the machine's mood: each client runs
under ``valgrind --tool=callgrind`` twice, once connecting and warming up only and once also
making ``--calls`` calls (64 tasks sharing one client, echo tool, the server of
``bench_async.py``, which valgrind does not follow), and the difference divided by the calls
is that client's cost per call.  Two runs of one client agree within about 0.3%.

Clients: ours on asyncio and trio, the no-library asyncio floor of ``bench_async.py``, and a
no-library trio client (one reader task, parked tasks by id).  The ratio column is
floor/client, comparable with the calls/s ratios of ``bench_async.py`` (higher is better).
Instructions are not time (a cache miss costs more than an add), so read this beside the
wall-clock benchmark, not instead of it.  Under valgrind the client runs about 50 times
slower than the server, so answers are always waiting when it reads: this measures the
batched, busy case of 64 calls in flight, not a sequential call's wait for its answer.
Skipped, with a note, when valgrind is missing.  About 3 minutes (``--quick``: ours and the
floor on asyncio, fewer calls, 40-60 s).

Run: ``python benchmarks/bench_instructions.py [--quick] [--calls N] [--json PATH]``
"""

# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

CLIENTS = ("ours-asyncio", "ours-trio", "raw-asyncio", "raw-trio")
QUICK_CLIENTS = ("ours-asyncio", "raw-asyncio")
FLOOR = {"asyncio": "raw-asyncio", "trio": "raw-trio"}
INFLIGHT = 64
WARM_CALLS = 20  # per task, in both runs: what the difference leaves out
#: How long one valgrind run may take (it runs the client about 50 times slower).
VALGRIND_TIMEOUT = 600
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


# -- child side ----------------------------------------------------------------------------


class RawTrioClient:
    """A trio client with no library at all: one reader task, tasks parked by request id,
    ``json`` over the pipes (no timeouts, no validation), as ``RawAsyncioClient`` is for
    asyncio."""

    def __init__(self, argv: list[str]) -> None:
        self._argv = argv
        self._parked: dict[int, Any] = {}
        self._next = 0

    async def __aenter__(self) -> RawTrioClient:
        import bench_async as A
        import trio

        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._proc.stdout is not None
        os.set_blocking(self._proc.stdout.fileno(), False)
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(self._read)
        await self._request("initialize", A.RAW_INITIALIZE)
        self._write(A.RAW_INITIALIZED)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._nursery.cancel_scope.cancel()
        await self._nursery_cm.__aexit__(None, None, None)
        self._proc.wait(10)

    def _write(self, msg: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self._proc.stdin.flush()

    async def _read(self) -> None:
        import outcome
        import trio

        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        rest = b""
        while True:  # read first, wait only when the pipe is empty (as ours does)
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
                continue
            if not data:
                return
            *lines, rest = (rest + data).split(b"\n")
            for line in lines:
                msg = json.loads(line)
                task = self._parked.pop(msg.get("id"), None)
                if task is not None:
                    trio.lowlevel.reschedule(task, outcome.Value(msg.get("result")))
            await trio.lowlevel.checkpoint()

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        import trio

        self._next += 1
        self._parked[self._next] = trio.lowlevel.current_task()
        self._write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.SUCCEEDED)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self._request("tools/call", {"name": name, "arguments": arguments})


def child_main(key: str, calls: int, server: Path) -> None:
    """Connect ``key``'s client, warm it up, then make ``calls`` calls from 64 tasks."""
    import bench_async as A

    impl, runtime = key.split("-")
    argv = [sys.executable, str(server)]
    if impl == "ours":
        connect = A._ours_connect(runtime, server)
    elif runtime == "trio":
        connect = lambda: RawTrioClient(argv)  # noqa: E731
    else:
        connect = lambda: A.RawAsyncioClient(argv)  # noqa: E731

    async def main() -> None:
        async with connect() as client:
            async def calling(count: int) -> None:
                for _ in range(count):
                    await client.call_tool("echo", A.ECHO_ARGS)

            await A._in_tasks(runtime, lambda: calling(WARM_CALLS), INFLIGHT)
            if calls:
                await A._in_tasks(runtime, lambda: calling(calls // INFLIGHT), INFLIGHT)

    if runtime == "trio":
        import trio

        trio.run(main)
    else:
        import asyncio

        asyncio.run(main())


# -- parent side ---------------------------------------------------------------------------


def _instructions(valgrind: str, key: str, calls: int, server: Path) -> int | str:
    """The instructions one child executed, or an error text (the child's own last line)."""
    with tempfile.NamedTemporaryFile(prefix="mcp-callgrind-", suffix=".log") as log:
        argv = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                f"--log-file={log.name}", sys.executable, str(Path(__file__).resolve()),
                "--child", key, "--calls", str(calls), "--server", str(server)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=C.child_env(),
                                  timeout=VALGRIND_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return f"timed out after {VALGRIND_TIMEOUT} s"
        found = _COLLECTED.search(Path(log.name).read_text(errors="replace"))
    if proc.returncode != 0 or found is None:
        tail = (proc.stderr.strip().splitlines() or ["<no output>"])[-1]
        return f"exited {proc.returncode}: {tail}"
    return int(found.group(1))


def collect(quick: bool, calls: int | None, server: str | None) -> dict[str, Any]:
    """Instructions per call of each client, two valgrind runs each (two at a time)."""
    valgrind = shutil.which("valgrind")
    clients = QUICK_CLIENTS if quick else CLIENTS
    calls = calls or (INFLIGHT * 50 if quick else INFLIGHT * 100)
    if calls < INFLIGHT:
        raise SystemExit(f"--calls: at least {INFLIGHT} (one call per task)")
    calls -= calls % INFLIGHT  # each task makes calls // 64: what is divided by is what ran
    out: dict[str, Any] = {"calls": calls, "clients": {}}
    if valgrind is None:
        out["error"] = "valgrind is not installed (apt install valgrind): nothing measured"
        return out
    path = C.server_path(server)
    jobs = [(key, n) for key in clients for n in (0, calls)]
    with ThreadPoolExecutor(max_workers=2) as pool:  # the machine's two CPUs
        counts = dict(zip(jobs, pool.map(lambda job: _instructions(valgrind, *job, path),
                                         jobs), strict=True))
    for key in clients:
        base, total = counts[(key, 0)], counts[(key, calls)]
        if isinstance(base, str) or isinstance(total, str):
            out["clients"][key] = {"error": base if isinstance(base, str) else total}
        else:
            out["clients"][key] = {"per_call": (total - base) / calls}
    return out


def print_report(out: dict[str, Any]) -> None:
    print(f"\n== instructions per call (valgrind callgrind), {out['calls']} calls from "
          f"{INFLIGHT} tasks after {INFLIGHT}x{WARM_CALLS} warm-up calls ==")
    if "error" in out:
        print(f"  {out['error']}\n", flush=True)
        return
    print(f"{'client':14s} {'instructions/call':>18s}  {'floor/client':>12s}")
    for key, res in out["clients"].items():
        if "error" in res:
            print(f"{key:14s} error: {res['error']}")
            continue
        floor = out["clients"].get(FLOOR[key.split("-")[1]], {}).get("per_call")
        ratio = f"{floor / res['per_call']:.3f}" if floor else "-"
        print(f"{key:14s} {res['per_call']:18,.0f}  {ratio:>12s}")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="ours and the floor on asyncio only")
    ap.add_argument("--calls", type=int, help=f"calls measured (default {INFLIGHT * 100})")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # internal: ours-asyncio, raw-trio, ...
    args = ap.parse_args(argv)
    if args.child:
        C.setup_path()
        child_main(args.child, args.calls or 0, Path(args.server))
        return 0
    out = collect(args.quick, args.calls, args.server)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
