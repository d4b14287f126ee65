"""What the testing aids cost and save (issue 27): a call to an in-memory server and to a
replayed transcript beside the same call to a stdio server process, what recording adds to a
call, and the time to the first result (a process started, or none).

    python benchmarks/bench_testing.py [--quick] [--json PATH]

Sequential ``tools/call echo`` with the threads client, all in this process, rounds
alternated: ``connect_stdio`` to ``benchmarks/servers/fast_server.py`` (a process, the usual
way), the same with ``record=PATH`` (every message written and flushed), ``connect_memory``
to a :class:`mcp_proto.testing.MemoryServer` with the same ``echo``, and ``connect_replay`` of
a transcript of the same calls (recorded first).  Figures are the medians of the rounds:
calls/s and this process's CPU per call (all its threads; for the in-memory server and the
replay that includes the server's side, which a process would carry itself).  Numbers
differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - the clients are imported when measured
from __future__ import annotations

import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

C.setup_path()

SERVER = C.DEFAULT_SERVER
ECHO = {"text": "hello world"}


def memory_server() -> Any:
    from mcp_proto.testing import MemoryServer

    server = MemoryServer("bench", protocol_versions=["2025-11-25"])

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def first_result(connect: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    with connect() as client:
        client.call_tool("echo", ECHO)
    return time.perf_counter() - t0


def collect(quick: bool = False) -> dict[str, Any]:
    from mcp_proto_io.threads import connect_memory, connect_replay, connect_stdio

    n, rounds = (200, 3) if quick else (2000, 7)
    argv = [sys.executable, str(SERVER)]
    folder = Path(tempfile.mkdtemp(prefix="mcp-proto-bench-"))
    transcript = folder / "replay.jsonl"
    with connect_stdio(argv, record=transcript, protocol_version="2025-11-25") as c:
        for _ in range(n * (rounds + 1)):
            c.call_tool("echo", ECHO)
    replay = connect_replay(transcript)
    clients = {
        "stdio": connect_stdio(argv, protocol_version="2025-11-25"),
        "recorded": connect_stdio(argv, record=folder / "recorded.jsonl",
                                  protocol_version="2025-11-25"),
        "memory": connect_memory(memory_server()),
        "replay": replay,
    }
    rates: dict[str, list[float]] = {k: [] for k in clients}
    cpu: dict[str, list[float]] = {k: [] for k in clients}
    try:
        for client in clients.values():
            client.connect()
        for name, client in clients.items():
            if name != "replay":  # the replay holds exactly n x (rounds + 1) calls
                for _ in range(n):
                    client.call_tool("echo", ECHO)
        for _ in range(n):
            replay.call_tool("echo", ECHO)
        for _ in range(rounds):
            for name, client in clients.items():
                gc.collect()
                c0, t0 = time.process_time(), time.perf_counter()
                for _ in range(n):
                    client.call_tool("echo", ECHO)
                rates[name].append(n / (time.perf_counter() - t0))
                cpu[name].append((time.process_time() - c0) / n)
    finally:
        for client in clients.values():
            client.close()
    starts = {
        "stdio": [first_result(lambda: connect_stdio(argv)) for _ in range(3)],
        "memory": [first_result(lambda: connect_memory(memory_server())) for _ in range(3)],
    }
    return {"n": n, "rounds": rounds,
            "median": {k: statistics.median(v) for k, v in rates.items()},
            "cpu_median": {k: statistics.median(v) for k, v in cpu.items()},
            "first_result": {k: min(v) for k, v in starts.items()},
            "transcript_bytes": (folder / "recorded.jsonl").stat().st_size}


def print_report(out: dict[str, Any]) -> None:
    med, cpu = out["median"], out["cpu_median"]
    print(f"\n== Testing aids, sequential tools/call echo ({out['n']} calls x "
          f"{out['rounds']} rounds, medians) ==")
    print(f"{'client':40} {'calls/s':>10} {'vs stdio':>9} {'CPU us/call':>12}")
    labels = {"stdio": "connect_stdio (a server process)",
              "recorded": "connect_stdio, record=PATH",
              "memory": "connect_memory (in this process)",
              "replay": "connect_replay (a transcript)"}
    for key, label in labels.items():
        print(f"{label:40} {med[key]:10,.0f} {med[key] / med['stdio']:8.2f}x "
              f"{cpu[key] * 1e6:12.1f}")
    print(f"\nrecording adds {(cpu['recorded'] - cpu['stdio']) * 1e6:.1f} us of CPU a call "
          f"({cpu['recorded'] / cpu['stdio']:.2f}x); the transcript took "
          f"{out['transcript_bytes'] / (out['n'] * (out['rounds'] + 1)):.0f} bytes a call")
    first = out["first_result"]
    print(f"first result: a server process {first['stdio'] * 1e3:.1f} ms, in memory "
          f"{first['memory'] * 1e3:.1f} ms ({first['stdio'] / first['memory']:.1f}x sooner)")
    print(flush=True)


if __name__ == "__main__":
    sys.exit(C.quick_main(__doc__, collect, print_report))
