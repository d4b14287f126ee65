"""Instructions per call, counted by valgrind: the noise-free view of ``bench_async.py`` and
``bench_stdio.py``.

The 2-vCPU machine's speed drifts by up to 2x between rounds (the hypervisor's placement), so
a 5% change in a binding hides in wall-clock noise.  This script counts the instructions the
client process executes instead (all its threads), which do not depend on the machine's mood:
each client runs under ``valgrind --tool=callgrind`` twice, once connecting and making the
warm-up calls only and once making ``--calls`` calls more, against the echo tool of
``bench_async.py``'s server (which valgrind does not follow).  The difference divided by the
calls is that client's cost per call.  Both runs make the warm-up calls (``WARM_CALLS`` per
task, so 1280 in either mode) and start the same tasks or threads, each of which makes its
warm-up calls and then, in the second run, its share of the measured ones: imports, the
connection, first-call caches and thread or task starts cancel out.  Two runs of one client
agree within about 0.3% (asyncio, trio) to 1% (threads: the GIL's hand-offs follow the clock).

Clients, named IMPL-RUNTIME-MODE; MODE ``seq`` is one caller making every call in a loop,
``64`` is 64 callers (tasks, or threads) sharing one client, each calling in a loop, making
the same calls in all:

* ``ours-threads-*``: ``mcp_proto_io.threads.connect_stdio`` (``-64``: 64 threads)
* ``ours-asyncio-*``, ``ours-trio-*``: ``mcp_proto_io.asyncio`` / ``mcp_proto_io.trio``
* ``sdk-asyncio-*``: the official SDK's ``Client`` (``mode="legacy"``) under ``asyncio.run``
* ``core-threads-seq``: the sans-IO core alone, driven by the thinnest blocking loop
  (:class:`BareCoreClient`): what no binding on this core can undercut, which splits
  ``ours-threads-seq``'s distance from its floor into the core's share and the binding's
* ``raw-threads-seq``: the blocking floor, no library at all (:class:`RawBlockingClient`: one
  ``os.write`` of a JSON line, a buffered ``readline``, ``json.loads``), as ``bench_stdio.py``'s
  raw client
* ``raw-threads-64``: the threaded floor (:class:`RawThreadsClient`: one reader thread, a dict
  of one-shot locks by id, callers writing under a write lock), as ``raw_threads_ceiling.py``
* ``raw-asyncio-*``: the asyncio floor of ``bench_async.py`` (``RawAsyncioClient``)
* ``raw-trio-64``: a no-library trio client (:class:`RawTrioClient`: one reader task, parked
  tasks by id)

The ratio column is floor/client, the floor being the raw client of the same runtime and mode
(``ours-threads-seq`` against ``raw-threads-seq``, ``ours-trio-64`` against ``raw-trio-64``,
the SDK against ``raw-asyncio-*``), comparable with the calls/s ratios of the wall-clock
benchmarks (higher is better).  The second ratio column is against the asyncio floor of the
same mode (``raw-asyncio-seq`` / ``raw-asyncio-64``), for the threads and trio rows: what the
issue quotes trio against.  Instructions are not time (a cache miss costs more than an add, a
thread switch costs the kernel's work, which valgrind does not count), so read this beside
the wall-clock benchmarks, not instead of them.  Under valgrind the client runs about 50
times slower than the server, so in the 64 mode answers are always waiting when it reads:
that is the batched, busy case; the ``seq`` mode is a sequential call's wait for its answer.
An error row (the child's last line) when a client cannot run (say, no ``mcp`` package);
skipped, with a note, when valgrind is missing.  Two valgrind processes at a time (the
machine's two CPUs): about 15 minutes for all 13 clients (the SDK's rows are half of it);
``--quick``: ours and the floor on threads (sequential) and asyncio (64), fewer calls, about
80 s.

Run: ``python benchmarks/bench_instructions.py [--quick] [--clients A,B] [--calls N]
[--json PATH]``
"""

# ruff: noqa: PLC0415

from __future__ import annotations

import _thread
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

CLIENTS = ("ours-threads-seq", "raw-threads-seq", "ours-threads-64", "raw-threads-64",
           "ours-asyncio-64", "raw-asyncio-64", "ours-trio-64", "raw-trio-64",
           "sdk-asyncio-64", "ours-asyncio-seq", "raw-asyncio-seq", "sdk-asyncio-seq",
           "core-threads-seq")
QUICK_CLIENTS = ("ours-threads-seq", "raw-threads-seq", "ours-asyncio-64", "raw-asyncio-64")
INFLIGHT = 64
WARM_CALLS = 20  # per task of the 64 mode, in both runs: what the difference leaves out
QUICK_WARM_CALLS = 8
CALLS = INFLIGHT * 100  # measured calls, in either mode
QUICK_CALLS = INFLIGHT * 10
#: How long one valgrind run may take (it runs the client about 50 times slower).
VALGRIND_TIMEOUT = 900
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


# -- child side: the no-library clients ----------------------------------------------------


class RawBlockingClient:
    """The sequential floor on threads: no library at all, one call at a time on the calling
    thread (one ``os.write`` of a JSON line, a buffered ``readline``, ``json.loads``; no
    reader thread, no timeouts, no validation), as ``bench_stdio.py``'s raw client."""

    def __init__(self, argv: list[str]) -> None:
        self._argv = argv
        self._next = 0

    def __enter__(self) -> RawBlockingClient:
        import bench_async as A

        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._wfd = self._proc.stdin.fileno()
        self._readline = self._proc.stdout.readline
        self._request("initialize", A.RAW_INITIALIZE)
        self._write(A.RAW_INITIALIZED)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(10)

    def _write(self, msg: dict[str, Any]) -> None:
        os.write(self._wfd, json.dumps(msg).encode() + b"\n")  # one line: one whole write

    def _request(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        self._write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        line = self._readline()
        if not line:
            raise ConnectionError("the server's output ended")
        return json.loads(line).get("result")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self._request("tools/call", {"name": name, "arguments": arguments})


class BareCoreClient:
    """The core's own cost, sequentially: mcp-proto's sans-IO ``ClientSession`` driven by the
    thinnest blocking loop (``os.write`` of what it sends, ``os.read`` of the answer fed
    back, the next event taken), with none of a binding's work: no lock, no waiter, no
    deadline fired, no SIGINT held back, no reader thread.  No binding on this core costs
    less: ``ours-threads-seq`` against this row is what the threads binding adds, this row
    against ``raw-threads-seq`` what the core costs beyond the floor."""

    def __init__(self, argv: list[str]) -> None:
        self._argv = argv

    def __enter__(self) -> BareCoreClient:
        from mcp_proto import ClientSession, Closed, Completed, Failed, Implementation, Ready

        self._done = Completed
        self._ends = (Failed, Closed)
        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      bufsize=0)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._wfd, self._rfd = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        self._session = session = ClientSession(Implementation(name="bare", version="0"))
        session.initialize(now=time.monotonic())
        if self._exchange(Ready) is None:
            raise ConnectionError("the server ended before the handshake did")
        os.write(self._wfd, session.data_to_send())  # notifications/initialized
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(10)

    def _exchange(self, wanted: type) -> Any:
        """Send what the session has, feed it the server's output until an event of type
        ``wanted`` comes (others are dropped, but a failure or the end raises: the loop
        would wait forever); that event, or None at EOF.  The session's next deadline is
        asked once, as any binding must (to know when to fire it)."""
        session, monotonic = self._session, time.monotonic
        os.write(self._wfd, session.data_to_send())
        while data := os.read(self._rfd, 1 << 16):
            session.receive_data(data, now=monotonic())
            while (event := session.next_event()) is not None:
                if type(event) is wanted:
                    session.next_deadline()
                    return event
                if isinstance(event, self._ends):
                    raise ConnectionError(f"the call ended with {event!r}")
        return None

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        self._session.call_tool(name, arguments, now=time.monotonic(), progress=False)
        event = self._exchange(self._done)
        if event is None:
            raise ConnectionError("the server's output ended")
        return event.value


class RawThreadsClient:
    """The threaded floor: no library at all, as ``raw_threads_ceiling.py`` (one reader
    thread, a dict of one-shot locks by request id, callers writing their request under a
    write lock with ``os.write``; no timeouts, no validation)."""

    def __init__(self, argv: list[str]) -> None:
        self._argv = argv
        self._waiters: dict[int, _thread.LockType] = {}
        self._results: dict[int, Any] = {}
        self._lock = threading.Lock()  # the id counter and the waiters
        self._wlock = threading.Lock()  # whole lines on the pipe
        self._next = 0

    def __enter__(self) -> RawThreadsClient:
        import bench_async as A

        self._proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      bufsize=0)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._wfd, self._rfd = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._request("initialize", A.RAW_INITIALIZE)
        self._write(A.RAW_INITIALIZED)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(10)
        self._reader.join(10)

    def _write(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg).encode() + b"\n"
        with self._wlock:
            os.write(self._wfd, data)

    def _read(self) -> None:
        waiters, results, lock = self._waiters, self._results, self._lock
        buf = b""
        while data := os.read(self._rfd, 1 << 16):
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                rid = msg.get("id")
                with lock:
                    waiter = waiters.pop(rid, None)
                if waiter is not None:
                    results[rid] = msg.get("result")
                    waiter.release()
        with lock:  # the server ended: no call waits forever (it finds no result)
            for waiter in waiters.values():
                waiter.release()
            waiters.clear()

    def _request(self, method: str, params: dict[str, Any]) -> Any:
        waiter = _thread.allocate_lock()
        waiter.acquire()
        with self._lock:
            self._next += 1
            rid = self._next
            self._waiters[rid] = waiter
        self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        waiter.acquire()
        try:
            return self._results.pop(rid)
        except KeyError:
            raise ConnectionError("the server's output ended") from None

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self._request("tools/call", {"name": name, "arguments": arguments})


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


# -- child side: running one client --------------------------------------------------------


def child_main(key: str, warm: int, calls: int, server: Path) -> None:
    """Connect ``key``'s client and make ``warm`` + ``calls`` calls: in one loop (``seq``), or
    from 64 callers sharing the client, each making its share of both."""
    impl, runtime, mode = key.split("-")
    callers = INFLIGHT if mode == "64" else 1
    each = (warm + calls) // callers
    argv = [sys.executable, str(server)]
    if runtime == "threads":
        _run_threads(_threads_connect(impl, mode, argv), callers, each)
    else:
        _run_async(_async_connect(impl, runtime, argv), runtime, callers, each)


def _threads_connect(impl: str, mode: str, argv: list[str]) -> Callable[[], Any]:
    if impl == "ours":
        from mcp_proto_io.threads import connect_stdio

        return lambda: connect_stdio(argv)
    if impl == "core":
        return lambda: BareCoreClient(argv)
    return lambda: RawBlockingClient(argv) if mode == "seq" else RawThreadsClient(argv)


def _run_threads(connect: Callable[[], Any], callers: int, each: int) -> None:
    import bench_async as A

    errors: list[BaseException] = []
    with connect() as client:
        def calling() -> None:
            try:
                for _ in range(each):
                    client.call_tool("echo", A.ECHO_ARGS)
            except BaseException as exc:  # raised below, on the main thread
                errors.append(exc)

        if callers == 1:
            calling()
        else:
            threads = [threading.Thread(target=calling) for _ in range(callers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    if errors:
        raise errors[0]


def _async_connect(impl: str, runtime: str, argv: list[str]) -> Callable[[], Any]:
    import bench_async as A

    if impl == "ours":
        return A._ours_connect(runtime, Path(argv[1]))
    if impl == "sdk":
        import bench_stdio as S

        return lambda: S._sdk_client(Path(argv[1]))
    if runtime == "trio":
        return lambda: RawTrioClient(argv)
    return lambda: A.RawAsyncioClient(argv)


def _run_async(connect: Callable[[], Any], runtime: str, callers: int, each: int) -> None:
    import bench_async as A

    async def main() -> None:
        async with connect() as client:
            async def calling() -> None:
                for _ in range(each):
                    await client.call_tool("echo", A.ECHO_ARGS)

            await A._in_tasks(runtime, calling, callers)

    if runtime == "trio":
        import trio

        trio.run(main)
    else:
        import asyncio

        asyncio.run(main())


# -- parent side ---------------------------------------------------------------------------


def _instructions(valgrind: str, key: str, warm: int, calls: int, server: Path,
                  env: dict[str, str]) -> int | str:
    """The instructions one child executed, or an error text (the child's own last line)."""
    with tempfile.NamedTemporaryFile(prefix="mcp-callgrind-", suffix=".log") as log:
        argv = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                f"--log-file={log.name}", *_child_argv(key, warm, calls, server)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env,
                                  timeout=VALGRIND_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return f"timed out after {VALGRIND_TIMEOUT} s"
        found = _COLLECTED.search(Path(log.name).read_text(errors="replace"))
    if proc.returncode != 0 or found is None:
        tail = (proc.stderr.strip().splitlines() or ["<no output>"])[-1]
        return f"exited {proc.returncode}: {tail}"
    return int(found.group(1))


def _child_argv(key: str, warm: int, calls: int, server: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", key, "--warm", str(warm),
            "--calls", str(calls), "--server", str(server)]


def _child_env() -> dict[str, str]:
    """The children's environment: compiled modules cached in a folder of their own (outside
    the repository), so a run does not spend most of its time compiling the library's
    sources again (``PYTHONDONTWRITEBYTECODE`` would make every run do so under valgrind)."""
    env = C.child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "mcp-bench-pycache")
    return env


def _prime(keys: tuple[str, ...], server: Path, env: dict[str, str]) -> None:
    """Run each client once without valgrind (one call per caller), so the cache holds every
    module it imports before its two measured runs: else only the first of them would compile
    them.  A client that fails here fails under valgrind too, where its error is reported."""
    for key in keys:
        try:
            subprocess.run(_child_argv(key, INFLIGHT, 0, server), capture_output=True, env=env,
                           timeout=120, check=False)
        except subprocess.TimeoutExpired:
            pass


def _sources_mtime() -> float:
    """The newest modification time of the library's sources (``mcp_proto``, ``bindings``)."""
    files = [*(C.REPO / "mcp_proto").rglob("*.py"), *C.BINDINGS.rglob("*.py")]
    return max((f.stat().st_mtime for f in files if f.exists()), default=0.0)


def floors(key: str) -> tuple[str, str | None]:
    """``key``'s floor (the raw client of its runtime and mode) and, when that is not the
    asyncio one, the asyncio floor of its mode."""
    _impl, runtime, mode = key.split("-")
    asyncio_floor = f"raw-asyncio-{mode}"
    return f"raw-{runtime}-{mode}", None if runtime == "asyncio" else asyncio_floor


def _job_order(job: tuple[str, int]) -> bool:
    """The SDK's runs first (the longest), so neither CPU idles at the end while the other
    finishes one; a client's two runs stay side by side (a stable sort), so a source file
    edited meanwhile is less likely to fall between them."""
    return not job[0].startswith("sdk")


def collect(clients: tuple[str, ...], calls: int, warm: int,
            server: str | None) -> dict[str, Any]:
    """Instructions per call of each client, two valgrind runs each (two at a time)."""
    valgrind = shutil.which("valgrind")
    if calls < INFLIGHT:
        raise SystemExit(f"--calls: at least {INFLIGHT} (one call per task)")
    calls -= calls % INFLIGHT  # each task makes calls // 64: what is divided by is what ran
    out: dict[str, Any] = {"calls": calls, "warm_calls": warm, "clients": {}}
    if valgrind is None:
        out["error"] = "valgrind is not installed (apt install valgrind): nothing measured"
        return out
    path, env = C.server_path(server), _child_env()
    jobs = sorted(((key, n) for key in clients for n in (calls, 0)), key=_job_order)
    t0 = time.perf_counter()
    _prime(clients, path, env)
    edited = _sources_mtime()
    with ThreadPoolExecutor(max_workers=2) as pool:  # the machine's two CPUs
        counts = dict(zip(jobs, pool.map(
            lambda job: _instructions(valgrind, job[0], warm, job[1], path, env), jobs),
            strict=True))
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if _sources_mtime() > edited:
        out["warning"] = ("the library's sources changed during the runs: a client whose two "
                          "runs straddle the edit is off (it compiled, or ran, other code)")
    for key in clients:
        base, total = counts[(key, 0)], counts[(key, calls)]
        if isinstance(base, str) or isinstance(total, str):
            out["clients"][key] = {"error": base if isinstance(base, str) else total}
        else:
            out["clients"][key] = {"per_call": (total - base) / calls, "base": base,
                                   "total": total}
    _add_ratios(out["clients"])
    return out


def _add_ratios(results: dict[str, dict[str, Any]]) -> None:
    """Each measured client's floor/client ratios (None when its floor was not measured)."""
    for key, res in results.items():
        if "per_call" not in res:
            continue
        for field, floor in zip(("floor", "asyncio_floor"), floors(key), strict=True):
            if floor is None:
                continue
            per_call = results.get(floor, {}).get("per_call")
            res[field] = floor
            res[f"{field}_ratio"] = per_call / res["per_call"] if per_call else None


def print_report(out: dict[str, Any]) -> None:
    print(f"\n== instructions per call (valgrind callgrind): {out['calls']} calls after "
          f"{out['warm_calls']} warm-up calls, from one caller (seq) or {INFLIGHT} (64) ==")
    if "error" in out:
        print(f"  {out['error']}\n", flush=True)
        return
    print(f"{'client':17s} {'instructions/call':>18s}  {'floor/client':>12s}  "
          f"{'asyncio-floor/client':>20s}")
    for key, res in out["clients"].items():
        if "error" in res:
            print(f"{key:17s} error: {res['error']}")
            continue
        ratio, asyncio_ratio = (_ratio_text(res, f) for f in ("floor", "asyncio_floor"))
        print(f"{key:17s} {res['per_call']:18,.0f}  {ratio:>12s}  {asyncio_ratio:>20s}")
    print("floor: the raw client of the same runtime and mode; asyncio floor: raw-asyncio of "
          "the same mode")
    if "warning" in out:
        print(f"warning: {out['warning']}")
    print(f"({out['seconds']:.0f} s, two valgrind runs at a time)\n", flush=True)


def _ratio_text(res: dict[str, Any], field: str) -> str:
    if field not in res:
        return ""  # an asyncio row: its floor is the asyncio floor
    ratio = res.get(f"{field}_ratio")
    return "-" if ratio is None else f"{ratio:.3f}"


def _client_list(text: str) -> tuple[str, ...]:
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in keys if k not in CLIENTS]
    if unknown or not keys:
        raise SystemExit(f"--clients: unknown {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(CLIENTS)}")
    return keys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help=f"{', '.join(QUICK_CLIENTS)}; {QUICK_CALLS} calls after "
                         f"{QUICK_WARM_CALLS * INFLIGHT} warm-up ones")
    ap.add_argument("--clients", metavar="A,B", help=f"clients to run, of: {', '.join(CLIENTS)}")
    ap.add_argument("--calls", type=int, help=f"calls measured (default {CALLS})")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # internal: ours-asyncio-64, ...
    ap.add_argument("--warm", type=int, default=0, help=argparse.SUPPRESS)  # internal
    args = ap.parse_args(argv)
    if args.child:
        C.setup_path()
        child_main(args.child, args.warm, args.calls or 0, Path(args.server))
        return 0
    clients = _client_list(args.clients) if args.clients else (
        QUICK_CLIENTS if args.quick else CLIENTS)
    calls = args.calls or (QUICK_CALLS if args.quick else CALLS)
    warm = (QUICK_WARM_CALLS if args.quick else WARM_CALLS) * INFLIGHT
    out = collect(clients, calls, warm, args.server)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
