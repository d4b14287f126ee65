"""Run every benchmark (ours vs the official SDK) and print one summary.

    python benchmarks/run_all.py            # full run (a few minutes; stdio, HTTP, async, import)
    python benchmarks/run_all.py --quick    # CI smoke run (well under a minute)

``--strict`` exits 1 when a target is missed (or cannot be judged because our library is not
importable); without it the exit status is 0 whatever the numbers, since a shared CI runner
is too noisy to gate on by default.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C
import bench_async
import bench_core
import bench_http
import bench_import
import bench_stdio


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--server", help="server script (default benchmarks/servers/fast_server.py)")
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+servers to CPUs, e.g. 0")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any target is not met")
    ap.add_argument("--json", metavar="PATH", help="also write all results as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    core = bench_core.collect(quick=args.quick)
    C.print_table(
        f"core: tools/call responses ({core['response_bytes']} B), n={core['n']}, "
        f"best (median) of {core['repeats']}",
        bench_core.rows(core),
    )
    stdio = bench_stdio.collect(quick=args.quick, server=args.server, pin=args.pin)
    bench_stdio.print_report(stdio)
    http = bench_http.collect(quick=args.quick, pin=args.pin)
    bench_http.print_report(http)
    aio = bench_async.collect(quick=args.quick, pin=args.pin, server=args.server)
    bench_async.print_report(aio)
    imports = bench_import.collect(quick=args.quick)
    bench_import.print_report(imports)

    targets = (
        [r for r in bench_stdio.rows(stdio) if r.target and not r.target.startswith("(")]
        + [
            C.Row(**{**r.__dict__, "name": "http: " + r.name.strip()})
            for r in bench_http.rows(http)
            if r.target and not r.target.startswith("(")
        ]
        + [r for r in bench_async.rows(aio) if r.target and not r.target.startswith("(")]
        + bench_import.targets(imports)
    )
    C.print_table("summary: targets", targets)
    passed = sum(r.ok is True for r in targets)
    failed = sum(r.ok is False for r in targets)
    unknown = sum(r.ok is None for r in targets)
    mode = "quick" if args.quick else "full"
    print(
        f"{passed} met, {failed} missed, {unknown} not judged "
        f"({mode} run, {time.perf_counter() - t0:.1f} s, python {sys.version.split()[0]})"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"core": core, "stdio": stdio, "http": http, "async": aio,
                        "import": imports}, indent=2)
        )
    return 1 if args.strict and (failed or unknown) else 0


if __name__ == "__main__":
    sys.exit(main())
