"""Does an anyio pump cost more than 10% of round-trip throughput against a native asyncio pump?

Minimal stdio pumps around the same sans-IO core (``mcp_proto.ClientSession``), each making
sequential ``tools/call echo`` calls against ``benchmarks/servers/fast_server.py``:

* ``anyio``:   ``anyio.open_process``; a reader task awaits ``proc.stdout.receive()`` and feeds
  the session; a caller writes with ``await proc.stdin.send()`` and waits on an ``anyio.Event``.
* ``native``:  ``loop.subprocess_exec`` with a ``SubprocessProtocol`` whose
  ``pipe_data_received`` feeds the session and resolves futures; a caller writes straight to
  the stdin pipe transport.
* ``streams`` (diagnostic): asyncio's own streams, shaped like the anyio pump
  (``asyncio.create_subprocess_exec``, a reader task on ``StreamReader.read``, ``write`` +
  ``drain``, futures).  It separates what the reader-task design costs from what anyio adds.

All run on asyncio, use the same session calls, drain events the same way and leave out the same
things (deadline timers, server requests, stderr).  Each pump runs in a fresh child process;
rounds interleave the pumps.  Besides calls/s, the client's own CPU time per call is reported
(``time.process_time``; the server's is not in it): it is less sensitive to scheduling noise.

Run: ``python benchmarks/bench_pump.py [--quick] [--pin CPUS] [--json PATH]``
"""

# ruff: noqa: PLC0415 - anyio is imported only by the child that uses it

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

ECHO_ARGS = {"text": "hello world"}
PUMPS = ("anyio", "native", "streams")
LIMIT = 0.90  # anyio/native calls/s >= this: "costs no more than 10%"
WARMUP = 300
READ_SIZE = 1 << 16
Resolve = Callable[[int, Any, BaseException | None], None]


def _session() -> Any:
    from mcp_proto import ClientSession, Implementation

    info = Implementation(name="bench-pump", version="0")
    return ClientSession(info, capabilities={}, versions=["2025-11-25"])


def _drain(session: Any, resolve: Resolve) -> None:
    """Hand every finished operation to ``resolve(request_id, value, error)``."""
    from mcp_proto import Completed, Failed, Ready

    while (event := session.next_event()) is not None:
        if isinstance(event, Completed | Ready):
            resolve(event.handle.id, getattr(event, "value", event), None)
        elif isinstance(event, Failed):
            resolve(event.handle.id, None, event.error)


def _future_resolver(waiters: dict[int, asyncio.Future[Any]]) -> Resolve:
    def resolve(rid: int, value: Any, error: BaseException | None) -> None:
        fut = waiters.pop(rid)
        if error is None:
            fut.set_result(value)
        else:
            fut.set_exception(error)

    return resolve


async def _measure(call: Callable[[Callable[[], Any]], Any], session: Any, n: int, repeats: int):
    """Handshake, warm up, check one answer, then time ``repeats`` runs of ``n`` calls."""
    clock = time.monotonic
    await call(lambda: session.initialize(now=clock()))
    result = await call(lambda: session.call_tool("echo", ECHO_ARGS, now=clock()))
    assert result.content[0].text == ECHO_ARGS["text"], result
    for _ in range(WARMUP):
        await call(lambda: session.call_tool("echo", ECHO_ARGS, now=clock()))
    out: dict[str, list[float]] = {"rates": [], "cpu_us": []}
    for _ in range(repeats):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            await call(lambda: session.call_tool("echo", ECHO_ARGS, now=clock()))
        out["cpu_us"].append((time.process_time() - c0) / n * 1e6)
        out["rates"].append(n / (time.perf_counter() - t0))
    return out


async def anyio_pump(argv: list[str], n: int, repeats: int) -> dict:
    import anyio

    session = _session()
    waiters: dict[int, list[Any]] = {}  # request id -> [Event, value, error]

    def resolve(rid: int, value: Any, error: BaseException | None) -> None:
        slot = waiters.pop(rid)
        slot[1], slot[2] = value, error
        slot[0].set()

    async with await anyio.open_process(argv, stderr=None) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        async def reader() -> None:
            while True:
                try:
                    data = await stdout.receive(READ_SIZE)
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    session.receive_eof()
                    return
                session.receive_data(data, now=time.monotonic())
                out = session.data_to_send()  # notifications/initialized, ping answers
                if out:
                    await stdin.send(out)
                _drain(session, resolve)

        async def call(start: Callable[[], Any]) -> Any:
            slot = waiters[start().id] = [anyio.Event(), None, None]
            await stdin.send(session.data_to_send())
            await slot[0].wait()
            if slot[2] is not None:
                raise slot[2]
            return slot[1]

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            result = await _measure(call, session, n, repeats)
            await stdin.aclose()  # the server exits on EOF; so does the reader
    return result


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, session: Any, resolve: Resolve) -> None:
        self.session, self.resolve = session, resolve
        self.stdin: asyncio.WriteTransport | None = None
        self.exited: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.session.receive_data(data, now=time.monotonic())
        out = self.session.data_to_send()
        if out and self.stdin is not None:
            self.stdin.write(out)
        _drain(self.session, self.resolve)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.session.receive_eof()
            _drain(self.session, self.resolve)

    def process_exited(self) -> None:
        self.exited.set_result(None)


async def native_pump(argv: list[str], n: int, repeats: int) -> dict:
    loop = asyncio.get_running_loop()
    session = _session()
    waiters: dict[int, asyncio.Future[Any]] = {}
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": None}
    protocol = lambda: _Protocol(session, _future_resolver(waiters))  # noqa: E731
    transport, proto = await loop.subprocess_exec(protocol, *argv, **pipes)
    stdin = proto.stdin = transport.get_pipe_transport(0)  # type: ignore[assignment]

    async def call(start: Callable[[], Any]) -> Any:
        fut = waiters[start().id] = loop.create_future()
        stdin.write(session.data_to_send())
        return await fut

    try:
        return await _measure(call, session, n, repeats)
    finally:
        stdin.close()
        await proto.exited
        transport.close()


async def streams_pump(argv: list[str], n: int, repeats: int) -> dict:
    loop = asyncio.get_running_loop()
    session = _session()
    waiters: dict[int, asyncio.Future[Any]] = {}
    resolve = _future_resolver(waiters)
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def reader() -> None:
        while data := await stdout.read(READ_SIZE):
            session.receive_data(data, now=time.monotonic())
            out = session.data_to_send()
            if out:
                stdin.write(out)
            _drain(session, resolve)
        session.receive_eof()
        _drain(session, resolve)

    async def call(start: Callable[[], Any]) -> Any:
        fut = waiters[start().id] = loop.create_future()
        stdin.write(session.data_to_send())
        await stdin.drain()
        return await fut

    task = asyncio.create_task(reader())
    try:
        return await _measure(call, session, n, repeats)
    finally:
        stdin.close()
        await task
        await proc.wait()


# =========================================================================================
# parent side
# =========================================================================================


def collect(quick: bool = False, pin: str | None = None, **counts: int) -> dict[str, Any]:
    """Interleaved rounds of one child per pump; ``counts`` may set n, rounds, repeats."""
    out: dict[str, Any] = {"n": 3000, "rounds": 4, "repeats": 3, "pin": pin}
    out.update({"n": 1000, "rounds": 2} if quick else {}, **counts)
    argv = [sys.executable, str(Path(__file__).resolve()), "--config", json.dumps(out)]
    pooled: dict[str, list[dict]] = {pump: [] for pump in PUMPS}
    for _ in range(out["rounds"]):
        for pump, results in pooled.items():
            results.append(C.run_child([*argv, "--child", pump], 600))
    for pump, results in pooled.items():
        errors = [res for res in results if "error" in res]
        out[pump] = (
            errors[0]
            if errors
            else {key: [x for res in results for x in res[key]] for key in ("rates", "cpu_us")}
        )
    return out


def print_report(out: dict[str, Any]) -> None:
    pinned = f"; pinned to CPU {out['pin']}" if out.get("pin") else ""
    print(
        f"\n== stdio pumps around one ClientSession, sequential echo: n={out['n']}, "
        f"{out['rounds']} rounds x {out['repeats']} repeats, interleaved{pinned} =="
    )
    med: dict[str, float] = {}
    for pump in PUMPS:
        res = out[pump]
        if "error" in res:
            print(f"  {pump:7s} error: {res['error']}")
            continue
        rates, med[pump] = res["rates"], C.median(res["rates"])
        print(
            f"  {pump:7s} best {max(rates):>8,.0f}  median {med[pump]:>8,.0f} calls/s   "
            f"client CPU {C.median(res['cpu_us']):5.1f} us/call (median)   all calls/s: "
            + ", ".join(f"{x:,.0f}" for x in rates)
        )
    for pump in ("anyio", "streams"):
        if pump in med and "native" in med:
            ratio = med[pump] / med["native"]
            lost = f"{abs(1 - ratio) * 100:.1f}% {'less' if ratio < 1 else 'more'} throughput"
            verdict = ""
            if pump == "anyio":
                verdict = " costs at most 10%" if ratio >= LIMIT else " costs MORE than 10%"
            print(f"  {pump}/native (medians) {ratio:.3f}:{verdict} ({lost})")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (a few seconds)")
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+server to CPUs, e.g. 0 or 0,1")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    ap.add_argument("--child", choices=PUMPS, help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)  # internal: collect()'s settings
    args = ap.parse_args(argv)
    if not args.child:
        out = collect(args.quick, args.pin)
        print_report(out)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2))
        return 0
    cfg = json.loads(args.config)
    if cfg["pin"]:  # inherited by the server the child spawns
        os.sched_setaffinity(0, {int(c) for c in cfg["pin"].split(",")})
    params = ([sys.executable, str(C.DEFAULT_SERVER)], cfg["n"], cfg["repeats"])
    try:
        if args.child == "anyio":
            import anyio

            res = anyio.run(anyio_pump, *params)
        else:
            res = asyncio.run({"native": native_pump, "streams": streams_pump}[args.child](*params))
    except Exception as exc:  # the parent shows the message; the traceback goes to stderr
        traceback.print_exc()
        res = {"error": f"{type(exc).__name__}: {exc}"}
    C.emit(res)
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main())
