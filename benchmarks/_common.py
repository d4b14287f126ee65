"""Shared helpers for the benchmark scripts (stdlib only)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BINDINGS = REPO / "bindings"
DEFAULT_SERVER = HERE / "servers" / "fast_server.py"
RESULT_MARKER = "BENCH_RESULT "


def setup_path() -> None:
    """Make the in-repo `mcp_proto` and `mcp_proto_io` importable without installing."""
    for p in (str(BINDINGS), str(REPO)):
        if p not in sys.path:
            sys.path.insert(0, p)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    extra = os.pathsep.join([str(REPO), str(BINDINGS)])
    env["PYTHONPATH"] = extra + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def server_path(arg: str | None) -> Path:
    path = Path(arg or os.environ.get("MCP_BENCH_SERVER") or DEFAULT_SERVER).resolve()
    if not path.exists():
        raise SystemExit(f"benchmark server not found: {path} (use --server or MCP_BENCH_SERVER)")
    return path


def cpu_list(text: str) -> str:
    """``text`` (``"0"``, ``"0,1"``) checked as a list of CPU numbers and written back the
    same way; raises SystemExit naming what is wrong, before any client runs."""
    try:
        cpus = sorted({int(part) for part in text.split(",")})
    except ValueError:
        cpus = []
    if not cpus or cpus[0] < 0:
        raise SystemExit(f"--pin: {text!r} is not a list of CPU numbers such as 0 or 0,1")
    missing = set(cpus) - os.sched_getaffinity(0)
    if missing:
        raise SystemExit(f"--pin: no CPU {sorted(missing)} here (this process may use "
                         f"{sorted(os.sched_getaffinity(0))})")
    return ",".join(map(str, cpus))


def pinned_server(server: Path, cpus: str, folder: Path) -> Path:
    """A server script in ``folder`` that moves itself to ``cpus`` (a :func:`cpu_list`) and
    then becomes ``server``: every client starts it as ``python SCRIPT``, so each one's
    server lands on those CPUs whatever the client inherits or passes on (the SDKs spawn
    with a reduced environment, so an environment variable would not reach it)."""
    wrapper = folder / f"pinned_{server.name}"
    wrapper.write_text(
        "import os, sys\n"
        f"os.sched_setaffinity(0, {sorted(int(c) for c in cpus.split(','))!r})\n"
        f"os.execv(sys.executable, [sys.executable, {str(server)!r}, *sys.argv[1:]])\n",
        encoding="utf-8",
    )
    return wrapper


def not_importable(exc: BaseException) -> str:
    return f"mcp_proto not importable: {type(exc).__name__}: {exc}"


def best(xs: Sequence[float], *, higher_is_better: bool) -> float:
    return max(xs) if higher_is_better else min(xs)


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def emit(result: dict[str, Any]) -> None:
    """Child side: print the result as one marked JSON line."""
    print(RESULT_MARKER + json.dumps(result), flush=True)


def run_child(argv: list[str], timeout: float) -> dict[str, Any]:
    """Run a child benchmark process and return its marked JSON result (or an error dict)."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=child_env(), check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    tail = (proc.stderr.strip().splitlines() or ["<no stderr>"])[-1]
    return {"error": f"child exited {proc.returncode}: {tail}"}


@dataclass
class Row:
    """One line of a results table.

    ``ours``/``sdk`` hold the best repeat (or a single measurement, or an error string);
    ``ours_med``/``sdk_med`` the median repeat when there were several. ``ratio`` is ours/SDK
    of the best values, ``ratio_med`` of the medians. ``target`` is a human-readable goal and
    ``ok`` whether it was met (None when it cannot be judged).
    """

    name: str
    ours: float | str | None
    sdk: float | str | None
    unit: str
    ours_med: float | None = None
    sdk_med: float | None = None
    target: str = ""
    ok: bool | None = None
    compare: bool = True  # False: ours/SDK is meaningless for this row
    ok_best: bool = False  # missed on the median but met on the best repeat
    paired: float | None = None  # the median of per-round ratios, when the rounds were paired

    @property
    def ratio(self) -> float | None:
        return div(self.ours, self.sdk) if self.compare else None

    @property
    def ratio_med(self) -> float | None:
        """ours/SDK of the medians; or, for clients measured in paired rounds, the median of
        the rounds' ratios (drift of the machine between rounds then cancels out)."""
        if not self.compare:
            return None
        return self.paired if self.paired is not None else div(self.ours_med, self.sdk_med)

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ratio": self.ratio, "ratio_med": self.ratio_med}


def div(a: Any, b: Any) -> float | None:
    a, b = num(a), num(b)
    return a / b if a is not None and b else None


def fmt_val(v: float | str | None, unit: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if unit in ("/s", "msg/s", "calls/s"):
        return f"{v:,.0f} {unit}"
    if unit == "s":
        return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
    if unit == "x":
        return f"{v:.2f}x"
    return f"{v:.3g} {unit}"


def print_table(title: str, rows: Sequence[Row]) -> None:
    """Print rows; a cell reads ``best (median)`` when the metric was repeated."""
    headers = ("metric", "ours", "SDK", "ours/SDK", "target", "ok")
    body = []
    notes: list[str] = []

    def cell(v: float | str | None, med: float | None, unit: str) -> str:
        text = fmt_val(v, unit)
        if isinstance(v, str) and len(text) > 30:
            if text not in notes:
                notes.append(text)
            return f"n/a [{notes.index(text) + 1}]"
        if med is not None and num(v) is not None:
            text += f" ({fmt_val(med, unit).split()[0]})"
        return text

    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.3g}"
        if r.ratio_med is not None:
            ratio += f" ({r.ratio_med:.3g})"
        ok = {True: "PASS", False: "FAIL", None: "-"}[r.ok]
        if r.ok is False and r.ok_best:
            ok = "FAIL (best: pass)"
        ours, sdk = cell(r.ours, r.ours_med, r.unit), cell(r.sdk, r.sdk_med, r.unit)
        body.append((r.name, ours, sdk, ratio, r.target, ok))
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
    print(f"\n== {title} ==")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for b in body:
        print("  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)).rstrip())
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    print(flush=True)


def stat(
    res: dict[str, Any], values: Any, *, higher: bool
) -> tuple[float | str | None, float | None]:
    """(best, median) of a list of repeats, or (error, None) when the run failed."""
    if "error" in res:
        return res["error"], None
    if not values:
        return None, None
    return best(values, higher_is_better=higher), median(values)


def num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def quick_main(doc: str | None, collect: Callable[..., dict[str, Any]],
               print_report: Callable[[dict[str, Any]], None],
               argv: list[str] | None = None) -> int:
    """The ``main`` of a benchmark that takes ``--quick`` and ``--json PATH`` only: collect,
    print the report, write the JSON if asked.  Returns 0 (numbers gate nothing)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    out = collect(quick=args.quick)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0
