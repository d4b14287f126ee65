"""What OpenTelemetry costs per call (issue 26): the threads client with instrumentation off,
on with the API's no-op providers, and on with ``opentelemetry-sdk`` recording every span
and both histograms; beside the official SDK and a client with no library (the floor).

    python benchmarks/bench_telemetry.py [--quick] [--json PATH]

Sequential ``tools/call echo`` round trips against ``benchmarks/servers/fast_server.py``, all
in this one process, the clients' rounds alternated so the machine's drift falls on all of
them alike; each figure is the median of the rounds (calls/s, microseconds per call, and
this process's CPU time per call, all its threads counted: the steadier figure of what
instrumentation adds; the official SDK runs apart, on its own event loop, so it has no CPU
column).
"on (SDK)" uses a ``TracerProvider`` with a ``SimpleSpanProcessor`` whose exporter drops
the spans (so every span is made, ended and handed on: the instrumentation's own cost, not
an exporter's) and a ``MeterProvider`` with an in-memory reader.  Off, the client imports
nothing of ``opentelemetry`` (``tests/test_telemetry.py`` checks).  Numbers differ between
machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - each client is imported only when measured
from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

C.setup_path()

SERVER = C.DEFAULT_SERVER
ECHO = {"text": "hello world"}


def _sdk_providers() -> tuple[Any, Any]:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Drop(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(Drop()))
    return tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()])


def ours(kind: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """(one call, close) of the threads client: ``off``, ``noop`` or ``sdk``."""
    from mcp_proto_io.threads import connect_stdio

    kwargs: dict[str, Any] = {}
    if kind == "noop":
        kwargs["instrument"] = True
    elif kind == "sdk":
        tracer_provider, meter_provider = _sdk_providers()
        kwargs.update(tracer_provider=tracer_provider, meter_provider=meter_provider)
    client = connect_stdio([sys.executable, str(SERVER)], **kwargs)
    client.connect()
    return (lambda: client.call_tool("echo", ECHO)), client.close


def floor() -> tuple[Callable[[], None], Callable[[], None]]:
    """A pipe, the handshake and each call written and read by hand."""
    import json
    import subprocess

    proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    w, r = proc.stdin, proc.stdout
    assert w is not None and r is not None
    w.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}).encode() + b"\n")
    w.flush()
    r.readline()
    w.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    ids = iter(range(1, 1 << 62))

    def call() -> None:
        w.write(json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
                            "params": {"name": "echo", "arguments": ECHO}}).encode() + b"\n")
        w.flush()
        json.loads(r.readline())

    def close() -> None:
        w.close()
        proc.wait(timeout=10)

    return call, close


def official_sdk_round(n: int, rounds: int) -> list[float]:
    """The official SDK's sequential calls/s, one figure a round (its own event loop)."""
    from mcp import Client, StdioServerParameters

    async def main() -> list[float]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
        out = []
        async with Client(params, mode="legacy") as c:
            for _ in range(50):
                await c.call_tool("echo", ECHO)
            for _ in range(rounds):
                gc.collect()
                t0 = time.perf_counter()
                for _ in range(n):
                    await c.call_tool("echo", ECHO)
                out.append(n / (time.perf_counter() - t0))
        return out

    return asyncio.run(main())


def collect(quick: bool = False) -> dict[str, Any]:
    n, rounds = (200, 3) if quick else (2000, 7)
    clients = {"off": ours("off"), "noop": ours("noop"), "sdk": ours("sdk"), "floor": floor()}
    rates: dict[str, list[float]] = {k: [] for k in clients}
    cpu: dict[str, list[float]] = {k: [] for k in clients}  # this process's CPU s per call
    try:
        for call, _ in clients.values():
            for _ in range(100):
                call()
        for _ in range(rounds):
            for name, (call, _) in clients.items():
                gc.collect()
                c0, t0 = time.process_time(), time.perf_counter()
                for _ in range(n):
                    call()
                rates[name].append(n / (time.perf_counter() - t0))
                cpu[name].append((time.process_time() - c0) / n)
    finally:
        for _, close in clients.values():
            close()
    try:
        rates["official"] = official_sdk_round(n, rounds)
    except ImportError as exc:
        rates["official"] = []
        print(C.not_importable(exc))
    med = {k: statistics.median(v) if v else None for k, v in rates.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpu.items() if v}
    return {"n": n, "rounds": rounds, "rates": rates, "median": med, "cpu": cpu,
            "cpu_median": cpu_med}


def print_report(out: dict[str, Any]) -> None:
    med = out["median"]
    off = med["off"]
    print(f"\n== OpenTelemetry cost per call (sequential tools/call echo, {out['n']} calls x "
          f"{out['rounds']} rounds, medians) ==")
    cpu = out.get("cpu_median", {})
    print(f"{'client':34} {'calls/s':>10} {'us/call':>9} {'vs off':>8} {'vs SDK':>8} "
          f"{'floor/this':>10} {'CPU us/call':>12}")
    labels = {"off": "ours, instrumentation off", "noop": "ours, on (no-op providers)",
              "sdk": "ours, on (opentelemetry-sdk)", "official": "official SDK (mcp 2.3.0)",
              "floor": "no library (floor)"}
    for key in ("off", "noop", "sdk", "official", "floor"):
        rate = med.get(key)
        if rate is None:
            print(f"{labels[key]:34} {'-':>10}")
            continue
        vs_off = f"{off / rate:.2f}x" if off else "-"
        vs_sdk = f"{rate / med['official']:.2f}" if med.get("official") else "-"
        vs_floor = f"{rate / med['floor']:.2f}" if med.get("floor") else "-"
        cpu_text = f"{cpu[key] * 1e6:.1f}" if key in cpu else "-"
        print(f"{labels[key]:34} {rate:10,.0f} {1e6 / rate:9.1f} {vs_off:>8} {vs_sdk:>8} "
              f"{vs_floor:>10} {cpu_text:>12}")
    if cpu.get("off") and cpu.get("sdk") and cpu.get("noop"):
        print(f"\nCPU of this process per call (all its threads; the servers apart): recording "
              f"every span and histogram adds {(cpu['sdk'] - cpu['off']) * 1e6:.1f} us "
              f"({cpu['sdk'] / cpu['off']:.2f}x), the no-op providers "
              f"{(cpu['noop'] - cpu['off']) * 1e6:.1f} us ({cpu['noop'] / cpu['off']:.2f}x); "
              "wall time on a 2-CPU machine is noisier (the calls/s columns)")
    print(flush=True)


if __name__ == "__main__":
    sys.exit(C.quick_main(__doc__, collect, print_report))
