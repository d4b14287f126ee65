"""Tasks (issue 6): what running a tool call as a task costs in the core, no I/O.

* ``plain``: a ``tools/call`` and its CallToolResult answer, through ``ClientSession``
  (the same path as ``bench_core.py``): calls/s.
* ``task``: the same call answered with a task (2026 ``resultType: "task"``), one
  ``tasks/get`` poll answered ``working`` (a ``TaskStatus`` change), then a ``tasks/get``
  answered ``completed`` with the same result inline: calls/s, and the cost of one poll
  round trip in the core (encode the poll at its deadline, parse the answer).

The official SDK (mcp 2.3.0) has no client-side task support (task types only), so there is
no side-by-side column: the number to watch is the per-poll cost against a plain call, and
that the plain path did not slow down (compare ``plain`` with ``bench_core.py``'s ``ours``).

Run: ``python benchmarks/bench_tasks.py [--quick] [--json PATH]``
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

C.setup_path()

from mcp_proto import ClientSession, Completed, Implementation  # noqa: E402
from mcp_proto._tasks import TASKS_EXTENSION  # noqa: E402
from mcp_proto.session._modern import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY  # noqa: E402

MODERN = "2026-07-28"
RESULT: dict[str, Any] = {"resultType": "complete",
                          "content": [{"type": "text", "text": "built"}], "isError": False}
TASK_FIELDS = {"status": "working", "createdAt": "2026-11-29T10:00:00Z",
               "lastUpdatedAt": "2026-11-29T10:00:00Z", "ttlMs": 60000, "pollIntervalMs": 50}


def _line(rid: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result},
                      separators=(",", ":")).encode() + b"\n"


def _ready_session() -> tuple[ClientSession, float]:
    now = 1000.0
    session = ClientSession(Implementation(name="bench", version="1"))
    session.start(now=now, era="modern")
    probe = json.loads(session.data_to_send())
    assert probe["params"]["_meta"][PROTOCOL_VERSION_KEY] == MODERN
    session.receive_data(_line(probe["id"], {
        "resultType": "complete", "supportedVersions": [MODERN],
        "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION: {}}},
        "_meta": {SERVER_INFO_KEY: {"name": "bench", "version": "1"}}}), now=now)
    while session.next_event() is not None:
        pass
    return session, now


def _ids(session: ClientSession) -> list[Any]:
    return [json.loads(line)["id"] for line in session.data_to_send().splitlines() if line]


def run_plain(n: int) -> float:
    session, now = _ready_session()
    handles = [session.call_tool("build", now=now, progress=False) for _ in range(n)]
    lines = b"".join(_line(rid, RESULT) for rid in _ids(session))
    gc.collect()
    t0 = time.perf_counter()
    session.receive_data(lines, now=now)
    done = 0
    while (event := session.next_event()) is not None:
        done += type(event) is Completed
    dt = time.perf_counter() - t0
    assert done == len(handles)
    return n / dt


def run_task(n: int) -> float:
    """n task calls, each: created, one working poll, one completed poll."""
    session, now = _ready_session()
    for _ in range(n):
        session.call_tool("build", now=now, progress=False)
    created = b"".join(_line(rid, {"resultType": "task", "taskId": f"t{i}", **TASK_FIELDS})
                       for i, rid in enumerate(_ids(session)))
    gc.collect()
    clock = time.perf_counter
    t0 = clock()
    session.receive_data(created, now=now)
    spent = clock() - t0
    for status, extra in (("working", {"statusMessage": "half"}),
                          ("completed", {"result": RESULT})):
        now += 0.051  # every task's poll is due (50 ms, the floor)
        t0 = clock()
        session.handle_timeout(now)
        sent = session.data_to_send()
        spent += clock() - t0
        # The fake server's work (parse the polls, encode the answers) is not timed.
        polls = [json.loads(line) for line in sent.splitlines() if line]
        answers = b"".join(_line(p["id"], {"resultType": "complete",
                                           "taskId": p["params"]["taskId"],
                                           **TASK_FIELDS, "status": status, **extra})
                           for p in polls)
        t0 = clock()
        session.receive_data(answers, now=now)
        spent += clock() - t0
    t0 = clock()
    done = 0
    while (event := session.next_event()) is not None:
        done += type(event) is Completed
    dt = spent + clock() - t0
    assert done == n, done
    return n / dt


def collect(quick: bool = False) -> dict[str, Any]:
    n = 2000 if quick else 20000
    repeats = 3 if quick else 7
    plain = [run_plain(n) for _ in range(repeats)]
    task = [run_task(n) for _ in range(repeats)]
    return {"n": n, "repeats": repeats, "plain": plain, "task": task}


def print_report(data: dict[str, Any]) -> None:
    plain = C.best(data["plain"], higher_is_better=True)
    task = C.best(data["task"], higher_is_better=True)
    per_poll_us = (1 / task - 1 / plain) / 2 * 1e6  # two polls per task call
    rows = [
        C.Row("plain tools/call", plain, None, "/s", C.median(data["plain"]), compare=False),
        C.Row("task call (create + 2 polls)", task, None, "/s", C.median(data["task"]),
              compare=False),
        C.Row("plain / task", plain / task, None, "x", compare=False),
        C.Row("core cost of one poll round trip", per_poll_us, None, "us", compare=False),
    ]
    C.print_table(f"core: task calls, n={data['n']}, best of {data['repeats']}", rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", metavar="PATH", help="also write results as JSON")
    args = ap.parse_args(argv)
    data = collect(quick=args.quick)
    print_report(data)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
