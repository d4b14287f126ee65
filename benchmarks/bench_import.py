"""What a program pays to import the client, against ``import asyncio`` and the official SDK.

    python benchmarks/bench_import.py [--quick] [--rounds N] [--tree DIR] [--clock cpu|wall]
                                      [--json PATH]

Each measurement is one fresh interpreter that times its import statement alone (not the
interpreter's start-up): its CPU time (``time.process_time``, user and system: what the import
costs, steady when other programs load the machine) and its wall-clock time; the table and the
targets use the CPU time unless ``--clock wall``.  The cases:

* the floors: ``import asyncio`` (every async program pays it), ``import trio``;
* ours: ``import mcp_proto`` (the sans-IO core), ``from mcp_proto_io.asyncio import
  connect_stdio``, the same from ``threads`` and ``trio`` (a client-only program), and
  ``from mcp_proto_io.asyncio import connect_config`` (the Host, loaded on first use);
* the SDK (mcp 2.3.0): ``from mcp.client.session import ClientSession`` plus
  ``import mcp.client.stdio``.

Both libraries are imported from fresh copies of their sources in a temporary folder, never
from the checkout or site-packages (so nothing there is written or read):

* **cached**: the copy's bytecode is written by an untimed first run, then read, as an
  installed package's is;
* **uncached**: ``PYTHONDONTWRITEBYTECODE=1`` on a copy with no ``__pycache__``, so every run
  compiles the library's sources (a checkout under ``PYTHONDONTWRITEBYTECODE``, a container
  that installs without compiling).  The script checks that no bytecode appeared.

The standard library and the libraries' dependencies (h11, trio; pydantic, httpx, anyio...)
are read from their installed bytecode in both modes.  All cases run in interleaved rounds
(each round one case later), the cells read ``best (median)``, and each ratio is the median
of the per-round ratios, so what the machine did between rounds cancels out.  Targets (cached
only): ``import mcp_proto`` and a client-only import on asyncio or threads cost at most 2x
``import asyncio``.  ``import trio`` alone costs more than that, so the trio client is shown
(info) as what it adds beyond ``import trio``, in ``import asyncio`` units.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

#: case -> (whose, the code timed).  ``whose`` names the copy the case must import from.
CASES: dict[str, tuple[str, str]] = {
    "asyncio": ("floor", "import asyncio"),
    "trio": ("floor", "import trio"),
    "core": ("ours", "import mcp_proto"),
    "ours-asyncio": ("ours", "from mcp_proto_io.asyncio import connect_stdio"),
    "ours-threads": ("ours", "from mcp_proto_io.threads import connect_stdio"),
    "ours-trio": ("ours", "from mcp_proto_io.trio import connect_stdio"),
    "ours-host": ("ours", "from mcp_proto_io.asyncio import connect_config"),
    "sdk": ("sdk", "from mcp.client.session import ClientSession; import mcp.client.stdio"),
}
#: The module whose file says which copy a case imported.
ORIGIN = {"ours": "mcp_proto", "sdk": "mcp"}
MODES = ("cached", "uncached")
#: What each child records: wall-clock time, and the CPU time of its process (user and
#: system), which another program's load on the machine hardly changes.
CLOCKS = ("wall", "cpu")
#: Cases judged against ``import asyncio`` (cached): at most this many times its cost.
FLOOR_TARGET = 2.0
#: Seconds one import may take before the run counts as failed (an uncached SDK takes ~2 s).
CHILD_TIMEOUT = 120.0

_CHILD = """\
import sys, time
_before = len(sys.modules)
_c0 = time.process_time()
_t0 = time.perf_counter()
{code}
_t = time.perf_counter() - _t0
_c = time.process_time() - _c0
_n = len(sys.modules) - _before
import json
_origin = sys.modules[{origin!r}].__file__ if {origin!r} else None
print({marker!r} + json.dumps([_t, _c, _n, _origin]))
"""


def _copy_sources(tree: Path, dest: Path) -> None:
    """``dest``/mcp_proto, ``dest``/mcp_proto_io (from ``tree``, a checkout) and ``dest``/mcp
    (the installed SDK, when there is one), without any bytecode."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(tree / "mcp_proto", dest / "mcp_proto", ignore=skip)
    shutil.copytree(tree / "bindings" / "mcp_proto_io", dest / "mcp_proto_io", ignore=skip)
    spec = importlib.util.find_spec("mcp")  # found, not imported
    if spec is not None and spec.origin is not None:
        shutil.copytree(Path(spec.origin).parent, dest / "mcp", ignore=skip)


def _env(folder: Path, mode: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(folder)  # ahead of site-packages and the checkout's .pth entries
    env.pop("PYTHONPYCACHEPREFIX", None)
    if mode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(case: str, folder: Path, mode: str) -> tuple[list[float], int] | str:
    """One fresh interpreter timing ``case``: ([wall, CPU] seconds, modules loaded) or an
    error."""
    whose, code = CASES[case]
    origin = ORIGIN.get(whose, "")
    marker = "IMPORT_RESULT "
    child = _CHILD.format(code=code, origin=origin, marker=marker)
    try:
        proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                              env=_env(folder, mode), cwd=str(folder), timeout=CHILD_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        return f"timed out after {CHILD_TIMEOUT:.0f} s"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(marker)]
    if proc.returncode or not lines:
        tail = (proc.stderr.strip().splitlines() or ["<no stderr>"])[-1]
        return f"mcp_proto not importable: {tail}" if whose == "ours" else tail
    wall, cpu, modules, where = json.loads(lines[-1][len(marker):])
    if origin and not str(where).startswith(str(folder)):
        return f"{origin} came from {where}, not from the copy"
    return [float(wall), float(cpu)], int(modules)


def collect(quick: bool = False, rounds: int | None = None, tree: str | None = None,
            clock: str = "cpu") -> dict[str, Any]:
    """Every case in both modes, ``rounds`` interleaved rounds (quick: 3, else 15); the
    ratios and targets use ``clock`` (both are recorded)."""
    root = Path(tree).resolve() if tree else C.REPO
    out: dict[str, Any] = {"rounds": rounds or (3 if quick else 15), "tree": str(root),
                           "clock": clock, "python": sys.version.split()[0],
                           "cases": dict(CASES)}
    with tempfile.TemporaryDirectory(prefix="mcp-bench-import-") as tmp:
        folders = {mode: Path(tmp) / mode for mode in MODES}
        for folder in folders.values():
            _copy_sources(root, folder)
        keys = [(mode, case) for mode in MODES for case in CASES]
        times: dict[str, dict[str, list[list[float]]]] = {
            m: {c: [] for c in CASES} for m in MODES}
        errors: dict[str, dict[str, str]] = {m: {} for m in MODES}
        modules: dict[str, dict[str, int]] = {m: {} for m in MODES}
        for mode, case in keys:  # untimed: writes the cached copy's bytecode, warms the disk
            first = _run(case, folders[mode], mode)
            if isinstance(first, str):
                errors[mode][case] = first
        for i in range(out["rounds"]):
            for mode, case in keys[i % len(keys):] + keys[:i % len(keys)]:
                if case in errors[mode]:
                    continue
                res = _run(case, folders[mode], mode)
                if isinstance(res, str):
                    errors[mode][case] = res
                else:
                    times[mode][case].append(res[0])
                    modules[mode][case] = res[1]
        written = sorted(str(p.relative_to(folders["uncached"]))
                         for p in folders["uncached"].rglob("__pycache__"))
    if written:  # then those runs read bytecode: they measured nothing
        errors["uncached"] = dict.fromkeys(CASES, f"bytecode was written: {written[0]}")
    out.update(times=times, errors=errors, modules=modules)
    out["rows"] = [r.as_dict() for r in rows(out)]
    return out


def _series(out: dict[str, Any], mode: str, case: str) -> list[float] | None:
    """The case's times on the chosen clock, one per round (None: it failed)."""
    if case in out["errors"][mode] or not out["times"][mode][case]:
        return None
    i = CLOCKS.index(out["clock"])
    return [t[i] for t in out["times"][mode][case]]


def _per_round(out: dict[str, Any], mode: str, fn: Any, *cases: str) -> list[float] | None:
    """``fn(t_case1, t_case2, ...)`` for each round (each ran every case once)."""
    series = [_series(out, mode, c) for c in cases]
    if any(s is None for s in series):
        return None
    return [fn(*ts) for ts in zip(*series, strict=True)]  # type: ignore[misc]


def _ratio(a: float, b: float) -> float:
    return a / b


def _ratio_row(out: dict[str, Any], mode: str, name: str, ratios: list[float] | None,
               limit: float | None) -> C.Row:
    """Best and median of the per-round ratios; judged (cached only) on the median, and
    not judged (``ok`` None) when a case failed."""
    judged = limit is not None and mode == "cached"
    target = f"<= {limit:g}" if judged else "(info)"
    if ratios is None:
        return C.Row(name, "not measured", None, "x", target=target, compare=False)
    med = statistics.median(ratios)
    row = C.Row(name, min(ratios), None, "x", med, target=target, compare=False)
    if limit is not None and judged:
        row.ok = med <= limit
        row.ok_best = not row.ok and min(ratios) <= limit
    return row


def rows(out: dict[str, Any]) -> list[C.Row]:
    """Every ratio to the floor, best (median) of the rounds; the cached ones are judged."""
    r: list[C.Row] = []
    for mode in MODES:
        for case, label in (("core", "mcp_proto"), ("ours-asyncio", "asyncio client"),
                            ("ours-threads", "threads client"), ("ours-trio", "trio client"),
                            ("ours-host", "asyncio Host")):
            limit = FLOOR_TARGET if case in ("core", "ours-asyncio", "ours-threads") else None
            r.append(_ratio_row(out, mode, f"{mode} import: {label} / asyncio",
                                _per_round(out, mode, _ratio, case, "asyncio"), limit))
        r.append(_ratio_row(
            out, mode, f"{mode} import: (trio client - trio) / asyncio",
            _per_round(out, mode, lambda a, b, c: (a - b) / c, "ours-trio", "trio", "asyncio"),
            None))
    return r


def targets(out: dict[str, Any]) -> list[C.Row]:
    """The judged rows, for ``run_all.py``'s summary."""
    return [r for r in rows(out) if r.target and not r.target.startswith("(")]


def _cell(values: list[float] | None, error: str | None, unit: str) -> str:
    if values is None:
        return f"n/a: {error}"[:40] if error else "-"
    med, low = statistics.median(values), min(values)
    if unit == "s":
        return f"{low * 1000:.1f} ms ({med * 1000:.1f})"
    return f"{med:.2f}x"


def print_report(out: dict[str, Any]) -> None:
    headers = ["code", *(f"{mode} {col}" for mode in MODES
                         for col in ("", "x asyncio", "x SDK"))]
    body = []
    for case, (whose, code) in CASES.items():
        line = [("SDK: " if whose == "sdk" else "") + code]
        for mode in MODES:
            line.append(_cell(_series(out, mode, case), out["errors"][mode].get(case), "s"))
            for other in ("asyncio", "sdk"):
                ratios = None if other == case else _per_round(out, mode, _ratio, case, other)
                line.append("-" if ratios is None else _cell(ratios, None, "x"))
        body.append(line)
    headers = [h.strip() for h in headers]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
    print(f"\n== import in a fresh interpreter ({out['clock']} time): best (median) of "
          f"{out['rounds']} interleaved rounds; ratios: the median of the per-round ratios ==")
    for line in (headers, ["-" * w for w in widths], *body):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    print("  modules each import loads (cached): " + ", ".join(
        f"{case} {n}" for case, n in out["modules"]["cached"].items()))
    print(f"  sources: {out['tree']} (ours) and the installed SDK, copied; python "
          f"{out['python']}", flush=True)
    C.print_table(f"import: against the floor ({out['clock']} time), best (median) of the "
                  "per-round ratios", rows(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 15 (~15 s)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds of every case")
    ap.add_argument("--tree", metavar="DIR",
                    help="measure the checkout at DIR (its mcp_proto/ and bindings/) instead\n"
                         "of this one: an A/B of two trees")
    ap.add_argument("--clock", choices=CLOCKS, default="cpu",
                    help="the time the table and the targets use (default cpu: the import's\n"
                         "CPU time, steady on a busy machine; both are recorded)")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    args = ap.parse_args(argv)
    out = collect(args.quick, args.rounds, args.tree, args.clock)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
