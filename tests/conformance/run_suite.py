#!/usr/bin/env python3
"""Run the official MCP conformance suite's client scenarios against a client command.

Every client scenario of each pinned suite version, authorization (``auth/*``) included, is
run in each protocol era ("wire") the scenario applies to, two at a time on a machine of two
CPUs or more (``--jobs``; the timing ones alone), and a table of the outcomes is printed::

    python tests/conformance/run_suite.py                      # default client command
    python tests/conformance/run_suite.py --command "python my_client.py"
    python tests/conformance/run_suite.py --scenario tools_call --suite 0.2.0-alpha.12 -v
    python tests/conformance/run_suite.py --scenario 'auth/*'   # the authorization scenarios
    python tests/conformance/run_suite.py --list               # the plan only, runs nothing

The suites and Node 22 are installed by ``.ci/conformance-install`` (run automatically when
missing, unless ``--no-install``).  See tests/conformance/README.md for the client contract.
Known failures that are the suite's fault are in ``BASELINE`` (today one:
``auth/2025-03-26-oauth-metadata-backcompat`` on 0.1.16, whose metadata names the wrong
issuer); they count as XFAIL only when they fail the expected way (``--no-baseline`` turns
that off), and as XPASS, a failure, once they pass.  ``--expect-fail`` adds more.
Exit status: 0 when every run passed (or failed as expected), 1 when any failed, 2 on a setup
error.  The last line is ``conformance: N passed, N failed, N skipped`` (XFAIL counts as
passed; a note says how many).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
INSTALL_SCRIPT = REPO / ".ci" / "conformance-install"
CONFORMANCE_DIR = REPO / ".ci" / "conformance"
DEFAULT_CLIENT = REPO / "tests" / "conformance" / "client.py"

SUITES = ("0.1.16", "0.2.0-alpha.12")
# Wires a scenario is run at when its suite forwards --spec-version to the client (0.2.x): each
# dated revision in this list that the scenario is tagged with.  Scenarios tagged with no date
# (extensions) run once at the suite's default wire.
WIRES = ("2025-11-25", "2026-07-28")
DEFAULT_TIMEOUT = 30.0  # seconds the harness gives the client (its --timeout)
#: Scenarios whose outcome depends on timing, run one at a time after the others, with nothing
#: beside them: sse-retry measures how long the client waits before it reconnects, and the
#: sep1034 mock drops its request unless the client's GET stream is open in time.
RUN_ALONE = ("sse-retry*", "elicitation-sep1034-client-defaults")
#: Scenarios run at once by default: each is a Node harness plus a Python client, mostly
#: start-up CPU, so one per CPU; more would only stretch each run towards its timeout.
MAX_DEFAULT_JOBS = 2
DEFAULT_JOBS = max(1, min(MAX_DEFAULT_JOBS, len(os.sched_getaffinity(0))
                          if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
#: The harnesses running now (a Ctrl-C kills their process groups: they run in sessions of
#: their own, which the terminal's SIGINT does not reach).
_RUNNING: set[subprocess.Popen[str]] = set()
_RUNNING_LOCK = threading.Lock()
HARNESS_GRACE = 15.0  # extra seconds before the runner kills a stuck harness

# Known failures of our client that are the suite's fault, expected unless --no-baseline:
# SCENARIO@SUITE[@WIRE] glob -> (text the failure's reason must contain, why).  A baseline run
# that fails for another reason stays a FAIL; one that passes is an XPASS (a failure: drop it).
BASELINE: dict[str, tuple[str, str]] = {
    "auth/2025-03-26-oauth-metadata-backcompat@0.1.16": (
        "IssuerMismatch",
        "0.1.16 serves metadata naming issuer <origin>/oauth at the origin's root well-known "
        "(RFC 8414 section 3.3 says refuse it; fixed in 0.2.x); the issuer check stays strict",
    ),
}

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LIST_LINE = re.compile(r"^\s+- (\S+)(?: \[([^\]]*)\])?\s*$")
_EXIT_CODE = re.compile(r"CLIENT EXITED WITH ERROR \(code (-?\d+)\)")
# A Python exception line inside a traceback (possibly indented by an exception group's "| ").
_EXC_LINE = re.compile(r"^[\s|]*((?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Group)\b.*)$")


@dataclass
class Run:
    suite: str
    scenario: str
    tags: list[str]
    wire: str | None  # passed as --spec-version; None = the harness's default for the scenario
    result: str = "NOT RUN"  # PASS, FAIL, SKIP, XFAIL, XPASS
    reason: str = ""
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    result_dir: str = ""

    @property
    def key(self) -> str:
        return f"{self.scenario}@{self.suite}@{self.wire or 'default'}"

    @property
    def wire_label(self) -> str:
        if self.wire:
            return self.wire
        return "default" if _forwards_wire(self.suite) else "-"


def _forwards_wire(suite: str) -> bool:
    """0.2.x sets MCP_CONFORMANCE_PROTOCOL_VERSION and picks the mock's era from --spec-version."""
    return not suite.startswith("0.1.")


def _entry(suite: str) -> Path:
    return (
        CONFORMANCE_DIR / f"v{suite}" / "node_modules" / "@modelcontextprotocol" / "conformance"
        / "dist" / "index.js"
    )


def _node() -> Path | None:
    marker = CONFORMANCE_DIR / "NODE"
    if not marker.is_file():
        return None
    node = Path(marker.read_text().strip())
    return node if node.is_file() else None


def ensure_installed(suites: list[str], allow_install: bool) -> Path:
    node = _node()
    if node is not None and all(_entry(s).is_file() for s in suites):
        return node
    if not allow_install:
        sys.exit(f"conformance suite not installed: run `bash {INSTALL_SCRIPT.relative_to(REPO)}`")
    print(f"installing the conformance suite: bash {INSTALL_SCRIPT.relative_to(REPO)}", flush=True)
    done = subprocess.run(["bash", str(INSTALL_SCRIPT)], cwd=REPO, check=False)
    node = _node()
    if done.returncode != 0 or node is None or not all(_entry(s).is_file() for s in suites):
        sys.exit(f"{INSTALL_SCRIPT.relative_to(REPO)} failed (exit {done.returncode})")
    return node


def list_client_scenarios(node: Path, suite: str) -> list[tuple[str, list[str]]]:
    """The suite's client scenarios as (name, applicability tags), from `conformance list`."""
    out = subprocess.run(
        [str(node), str(_entry(suite)), "list", "--client"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    if out.returncode != 0:
        sys.exit(f"`conformance list --client` ({suite}) failed: {out.stderr.strip()[-500:]}")
    found: list[tuple[str, list[str]]] = []
    for line in _ANSI.sub("", out.stdout).splitlines():
        m = _LIST_LINE.match(line)
        if m:
            tags = [t.strip() for t in (m.group(2) or "").split(",") if t.strip()]
            found.append((m.group(1), tags))
    if not found:
        sys.exit(f"`conformance list --client` ({suite}) listed no scenario:\n{out.stdout}")
    return found


def plan_runs(node: Path, suites: list[str], wires: list[str], patterns: list[str]) -> list[Run]:
    runs: list[Run] = []
    for suite in suites:
        for name, tags in list_client_scenarios(node, suite):
            if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
                continue
            dated = [t for t in tags if _DATE.match(t)]
            chosen: list[str | None] = [w for w in wires if w in dated]
            if not chosen or not _forwards_wire(suite):
                chosen = [None]
            for wire in chosen:
                runs.append(Run(suite, name, tags, wire))
    return runs


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _check_message(check: dict[str, object]) -> str:
    details = check.get("details")
    detail = details.get("message") if isinstance(details, dict) else None
    return str(check.get("errorMessage") or detail or check.get("description") or "")


def _client_error(stderr: str) -> str:
    """The most telling line of a failed client's stderr: its (innermost) exception, if any."""
    lines = stderr.splitlines()
    exc = [m.group(1) for m in map(_EXC_LINE.match, lines) if m]
    inner = [e for e in exc if not e.startswith(("ExceptionGroup", "BaseExceptionGroup"))]
    if inner or exc:
        return (inner or exc)[-1].strip()
    for raw in reversed(lines):
        line = raw.strip(" |+-\t")
        if line and not line.startswith("For further information"):
            return line
    return "(no stderr)"


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _read_results(result_root: Path) -> tuple[list[dict[str, object]], str]:
    """checks.json and the client's stderr.txt from the harness's --output-dir, if written."""
    checks: list[dict[str, object]] = []
    client_stderr = ""
    for path in sorted(result_root.rglob("checks.json")):
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(path.read_text())
            if isinstance(loaded, list):
                checks.extend(c for c in loaded if isinstance(c, dict))
        with contextlib.suppress(OSError):
            client_stderr = (path.parent / "stderr.txt").read_text(errors="replace")
    return checks, client_stderr


def execute(run: Run, node: Path, command: str, timeout: float, results: Path,
            verbose: bool) -> None:
    result_root = results / run.key.replace("/", "_").replace("@", "__")
    result_root.mkdir(parents=True, exist_ok=True)
    run.result_dir = str(result_root)
    argv = [
        str(node), str(_entry(run.suite)), "client",
        "--command", command,
        "--scenario", run.scenario,
        "--timeout", str(int(timeout * 1000)),
        "--output-dir", str(result_root),
    ]
    if run.wire:
        argv += ["--spec-version", run.wire]
    env = dict(os.environ, PYTHONUNBUFFERED="1", NO_COLOR="1")
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True,
    )
    with _RUNNING_LOCK:
        _RUNNING.add(proc)
    harness_timed_out = False
    try:
        try:
            output, _ = proc.communicate(timeout=timeout + HARNESS_GRACE)
        except subprocess.TimeoutExpired:
            harness_timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the harness and the client it started
            output, _ = proc.communicate()
    finally:
        # Whatever the harness left behind in its (our) process group, e.g. a client that
        # ignored the harness's SIGTERM, goes too (and all of it on a Ctrl-C).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    run.seconds = time.monotonic() - started
    output = _ANSI.sub("", output or "")
    (result_root / "harness.log").write_text(output)
    if verbose:
        print(output, flush=True)

    checks, client_stderr = _read_results(result_root)
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    for c in bad:
        run.details.append(f"{c.get('status')} {c.get('id')}: {_check_message(c)}")

    if harness_timed_out:
        run.result = "FAIL"
        run.reason = f"harness did not finish within {timeout + HARNESS_GRACE:.0f}s"
        return
    if proc.returncode == 0 and "SKIPPED: scenario" in output:
        run.result, run.reason = "SKIP", _short(_last_line(output.split("SKIPPED:", 1)[1]), 80)
        return
    if proc.returncode == 0 and "OVERALL: PASSED" in output:
        own = [c for c in checks if not str(c.get("id", "")).startswith("wire-schema-")]
        if checks and not any(c.get("status") == "SUCCESS" for c in own):
            # e.g. the sep-2640 (skills) scenarios: a client that never calls skills/list gets
            # only SKIPPED checks, which the harness counts as a pass.
            skipped = [c for c in own if c.get("status") == "SKIPPED"]
            why = skipped[0].get("errorMessage") if skipped else None
            run.result = "SKIP"
            run.reason = f"vacuous pass, no check succeeded: {why or 'no scenario check ran'}"
            return
        run.result = "PASS"
        return

    run.result = "FAIL"
    reasons: list[str] = []
    if "CLIENT TIMED OUT" in output:
        reasons.append(f"client timed out after {timeout:.0f}s")
    m = _EXIT_CODE.search(output)
    if m:
        reasons.append(f"client exit {m.group(1)}: {_client_error(client_stderr)}")
        run.details += [f"client stderr: {ln}" for ln in client_stderr.strip().splitlines()[-5:]]
    if bad:
        more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
        reasons.append(f"{bad[0].get('id')}: {_check_message(bad[0])}{more}")
    if not reasons:  # harness error: bad option, crash, unknown scenario...
        reasons.append(_last_line(output) or f"harness exit {proc.returncode}")
        run.details += [f"harness: {ln}" for ln in output.strip().splitlines()[-5:]]
    run.reason = "; ".join(reasons)


def _matches(run: Run, pattern: str) -> bool:
    return (fnmatch.fnmatchcase(run.key, pattern) or fnmatch.fnmatchcase(run.key, pattern + "@*")
            or fnmatch.fnmatchcase(run.key, pattern + "@*@*"))


def _expected(run: Run, patterns: list[str]) -> bool:
    return any(_matches(run, p) for p in patterns)


def apply_expectations(run: Run, expect_fail: list[str], baseline: bool) -> None:
    """PASS/FAIL to XPASS/XFAIL for --expect-fail patterns and the BASELINE."""
    known = next((v for k, v in BASELINE.items() if _matches(run, k)), None) if baseline else None
    if known is not None and not _expected(run, expect_fail):
        marker, why = known
        if run.result == "FAIL" and marker in run.reason + " ".join(run.details):
            run.result, run.reason = "XFAIL", f"baseline: {why}"
        elif run.result == "FAIL":
            run.reason = f"baseline expects a failure with {marker!r}, got: {run.reason}"
        elif run.result == "PASS":
            run.result, run.reason = "XPASS", "in BASELINE but passed: drop it from run_suite.py"
        return
    if _expected(run, expect_fail):
        if run.result == "FAIL":
            run.result = "XFAIL"
        elif run.result == "PASS":
            run.result, run.reason = "XPASS", "expected to fail but passed: drop --expect-fail"


def print_table(runs: list[Run], reason_width: int) -> None:
    headers = ("SCENARIO", "SUITE", "WIRE", "RESULT", "TIME", "REASON")
    rows = [
        (r.scenario, r.suite, r.wire_label, r.result, f"{r.seconds:.1f}s",
         _short(r.reason, reason_width))
        for r in runs
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    print(fmt.format(*headers))
    print(fmt.format(*("-" * w for w in widths)))
    for row in rows:
        print(fmt.format(*row).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--command", default=None,
        help="client command, a shell string run from the repo root; the harness appends the "
        "server URL as its last argument (default: this Python + tests/conformance/client.py)",
    )
    parser.add_argument("--suite", action="append", choices=SUITES,
                        help="suite version to run (repeatable; default: all)")
    parser.add_argument("--scenario", action="append", default=[],
                        help="run only scenarios matching this name or glob (repeatable)")
    parser.add_argument("--wire", action="append", choices=WIRES,
                        help="protocol era(s) for 0.2.x suites (repeatable; default: all)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds per scenario for the client (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--expect-fail", action="append", default=[], metavar="PATTERN",
                        help="known failure: SCENARIO[@SUITE[@WIRE]] glob (repeatable); it is "
                        "reported XFAIL, and XPASS (a failure) once it passes")
    parser.add_argument("--no-baseline", action="store_true",
                        help="do not expect the BASELINE failures (see the table in README.md)")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="where to keep checks.json/stdout/stderr per run (default: a new "
                        "temporary directory)")
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    parser.add_argument("--no-install", action="store_true",
                        help="fail instead of running .ci/conformance-install when missing")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS,
                        help="scenarios run at once (each harness serves on a port of its "
                        f"own; default {DEFAULT_JOBS}: this machine's CPUs, at most "
                        f"{MAX_DEFAULT_JOBS})")
    parser.add_argument("--reason-width", type=int, default=110)
    parser.add_argument("-v", "--verbose", action="store_true", help="print the harness output")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")

    suites = list(dict.fromkeys(args.suite or SUITES))  # a suite named twice runs once
    wires = list(dict.fromkeys(args.wire or WIRES))
    node = ensure_installed(suites, allow_install=not args.no_install)
    runs = plan_runs(node, suites, wires, args.scenario)
    if not runs:
        print("no scenario matched", file=sys.stderr)
        return 2
    if args.list:
        for r in runs:
            print(f"{r.scenario:<40} {r.suite:<16} {r.wire_label:<11} [{','.join(r.tags)}]")
        print(f"{len(runs)} runs")
        return 0

    if args.command is None:
        # `exec` so that the harness's SIGTERM on timeout reaches the client, not just the
        # `sh -c` wrapping it (dash forks here; the orphaned client would hold the pipes open).
        command = "exec " + shlex.join([sys.executable, str(DEFAULT_CLIENT)])
        if not DEFAULT_CLIENT.is_file():
            print(f"note: {DEFAULT_CLIENT.relative_to(REPO)} does not exist yet, so every "
                  "scenario will fail (pass --command to test another client)", flush=True)
    else:
        command = args.command
    results = args.results_dir or Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    results = results.resolve()
    results.mkdir(parents=True, exist_ok=True)

    print(f"client command: {command}")
    print(f"node: {node}; results: {results}", flush=True)
    started = time.monotonic()

    def one(run: Run) -> Run:
        execute(run, node, command, args.timeout, results, args.verbose)
        apply_expectations(run, args.expect_fail, baseline=not args.no_baseline)
        return run

    # Each run is a harness process serving on a port of its own (it listens on port 0) and
    # a result directory of its own, so runs go side by side, shown in plan order; those that
    # measure timing run afterwards, alone.
    # (-v prints each harness's output as it ends: one at a time, so that it reads whole.)
    shared: list[Run] = []
    alone: list[Run] = []
    for r in runs:
        timed = args.verbose or any(fnmatch.fnmatch(r.scenario, p) for p in RUN_ALONE)
        (alone if timed else shared).append(r)
    done = 0
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    try:
        for batch in (pool.map(one, shared), map(one, alone)):
            for run in batch:
                done += 1
                print(f"[{done}/{len(runs)}] {run.scenario} ({run.suite}, {run.wire_label}) "
                      f"... {run.result} ({run.seconds:.1f}s)", flush=True)
    except BaseException:  # Ctrl-C: no run waits for the ones still running
        pool.shutdown(wait=False, cancel_futures=True)
        with _RUNNING_LOCK:
            for proc in _RUNNING:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        raise
    pool.shutdown()

    print()
    print_table(runs, args.reason_width)
    failed_runs = [r for r in runs if r.result in ("FAIL", "XPASS")]
    if failed_runs:
        print("\nDetails of failures (full logs in each run's directory):")
        for r in failed_runs:
            print(f"- {r.key}: {r.reason}\n    dir: {r.result_dir}")
            for line in r.details[:12]:
                print(f"    {_short(line, 160)}")
    passed = sum(r.result in ("PASS", "XFAIL") for r in runs)
    skipped = sum(r.result == "SKIP" for r in runs)
    print(f"\n{len(runs)} runs in {time.monotonic() - started:.0f}s; results in {results}")
    xfailed = sum(r.result == "XFAIL" for r in runs)
    xfail_note = f" ({xfailed} of them expected failures)" if xfailed else ""
    print(f"conformance: {passed} passed, {len(failed_runs)} failed, {skipped} skipped"
          f"{xfail_note}")
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
