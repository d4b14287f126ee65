"""Era choice and the stateless era, measured (issue 3's targets).

    python benchmarks/bench_eras.py [--quick]

(a) Connecting to a handshake-era server that silently ignores unknown methods
    (``tests/servers/modern_scripted.py silent``): ours vs the official SDK's automatic mode,
    spawn to first result.  Target: ours < 1 s.
(b) Era detection cost: first vs second connection to a modern server
    (``fast_server.py --modern``) in one process: requests the server read before the first
    ``tools/call``.  Target: at most one extra round trip the first time, none the second.
(c) Sequential ``tools/call`` round trips, modern vs handshake era, same server and payload.
    Target: modern within 10% of the handshake era.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bindings")]

from mcp_proto_io._era import EraMemory  # noqa: E402
from mcp_proto_io.threads import connect_stdio  # noqa: E402

SILENT = [sys.executable, str(ROOT / "tests" / "servers" / "modern_scripted.py"), "silent"]
FAST = [sys.executable, str(ROOT / "benchmarks" / "servers" / "fast_server.py")]
ECHO = {"text": "hello world"}

SDK_CONNECT = textwrap.dedent("""
    import anyio, sys, time
    from mcp import Client, StdioServerParameters
    async def main():
        t0 = time.perf_counter()
        params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
        async with Client(params, mode="auto") as c:
            await c.call_tool("echo", {"text": "x"})
            print(time.perf_counter() - t0)
    anyio.run(main)
""")


def ours_connect(argv: list[str]) -> float:
    t0 = time.perf_counter()
    with connect_stdio(argv, era_memory=EraMemory()) as c:
        c.call_tool("echo", {"text": "x"})
        return time.perf_counter() - t0


def sdk_connect(argv: list[str]) -> str:
    try:
        out = subprocess.run([sys.executable, "-c", SDK_CONNECT, *argv], capture_output=True,
                             text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return "> 60 s"
    if out.returncode != 0:
        return "failed: " + (out.stderr.strip().splitlines() or ["?"])[-1][:80]
    return f"{float(out.stdout):.3f} s"


def round_trips(argv: list[str], n: int, repeats: int) -> tuple[str, float]:
    with connect_stdio(argv, era_memory=EraMemory()) as c:
        for _ in range(300):
            c.call_tool("echo", ECHO)
        rates = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                c.call_tool("echo", ECHO)
            rates.append(n / (time.perf_counter() - t0))
        return c.era, statistics.median(rates)


def requests_before_first_call(scenario: str) -> list[int]:
    """``server/discover`` requests the server read before the first tools/call, on the first
    and the second connection.  (The ``subscriptions/listen`` a modern session opens is not
    waited for, so it is not a round trip before the call.)  ``list-ttl`` answers discover with
    ttlMs 60000, ``default`` with ttlMs 0: then the second connection refreshes it in the
    background (S-02), which nothing waits for."""
    script = ROOT / "tests" / "servers" / "modern_scripted.py"
    memory = EraMemory()
    counts = []
    for _ in range(2):
        with connect_stdio([sys.executable, str(script), scenario], era_memory=memory) as c:
            seen = json.loads(c.call_tool("received").text)
            methods = [m.get("method") for m in seen if "id" in m]
            counts.append(methods[:methods.index("tools/call")].count("server/discover"))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeats = (1000, 3) if args.quick else (3000, 7)

    ours = min(ours_connect(SILENT) for _ in range(3))
    print("(a) connect to a silent handshake-era server, spawn to first result")
    print(f"    ours {ours:.3f} s (best of 3)   target < 1 s: {'PASS' if ours < 1 else 'FAIL'}")
    if not args.quick:
        print(f"    SDK mode='auto' {sdk_connect(SILENT)}")

    first, second = requests_before_first_call("list-ttl")
    _, refreshed = requests_before_first_call("default")
    print("(b) server/discover a modern server read before the first tools/call")
    print(f"    first connection {first} (the probe), second connection {second}   "
          f"target <= 1 and 0: {'PASS' if first <= 1 and second == 0 else 'FAIL'}")
    print(f"    (a server whose DiscoverResult has ttlMs 0: second connection {refreshed}, "
          "a background refresh nothing waits for)")

    legacy_era, legacy = round_trips(FAST, n, repeats)
    modern_era, modern = round_trips([*FAST, "--modern"], n, repeats)
    ratio = modern / legacy
    print("(c) sequential tools/call round trips, median of", repeats)
    print(f"    {legacy_era} {legacy:,.0f}/s, {modern_era} {modern:,.0f}/s, modern/legacy "
          f"{ratio:.2f}   target >= 0.90: {'PASS' if ratio >= 0.9 else 'FAIL (noisy: pin)'}")


if __name__ == "__main__":
    main()
