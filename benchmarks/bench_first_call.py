"""Time to the first tool result from a config of several servers, one of them fast and the
others slow to start (issue 23, item 1: start only what is needed).

    python benchmarks/bench_first_call.py [--quick] [--json PATH]

The config has ``fast`` (``benchmarks/servers/fast_server.py``) and :data:`SLOW_SERVERS`
servers that sleep :data:`SLOW_DELAY` seconds before they read stdin (a server that ``npx``
is still downloading, or one that never answers).  Each figure is the wall time from nothing
to the result of ``fast__echo`` (``echo`` on one server), each repeat in a fresh process
state (a new host or client, a new server process):

* **lazy Host**: ``connect_config(cfg, start="lazy")`` then ``call_tool("fast__echo")``:
  only ``fast`` starts.
* **eager Host**: ``connect_config(cfg)`` (every server starts; the open waits for them)
  then the call: what a config cost before.
* **our Client**: ``connect_stdio(fast)`` then ``call_tool("echo")``: the library's bound
  for one server.
* **official SDK**: ``mcp``'s ``stdio_client`` + ``ClientSession.initialize`` +
  ``call_tool`` on ``fast`` alone.
* **fastmcp MCPConfig**: fastmcp's ``Client({"mcpServers": ...})`` over the same config,
  entering its ``async with`` and calling ``fast_echo``.
* **no library** (the floor): a pipe, ``initialize``, ``notifications/initialized`` and one
  ``tools/call`` written by hand.
* **CLI**: ``mcp-proto --config F call fast__echo`` as a whole process, against the same
  command with the server after ``--`` (one server, no config).

Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - each child imports only the client it measures
from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

SERVER = C.DEFAULT_SERVER
ECHO = {"text": "hello world"}
#: Seconds each slow server sleeps before it reads stdin: longer than any start here takes,
#: so "waited for it" and "did not" are far apart.
SLOW_DELAY = 2.0
#: Slow servers beside the fast one (a config of five, like a user's desktop file).
SLOW_SERVERS = 4


def _argv(delay: float = 0.0) -> list[str]:
    return [sys.executable, str(SERVER)] + (["--startup-delay", str(delay)] if delay else [])


def config() -> dict[str, Any]:
    servers = {"fast": {"command": sys.executable, "args": _argv()[1:]}}
    for i in range(SLOW_SERVERS):
        servers[f"slow{i}"] = {"command": sys.executable, "args": _argv(SLOW_DELAY)[1:]}
    return {"mcpServers": servers}


# -- children ------------------------------------------------------------------------------


def child_host(repeats: int, start: str) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_config
    out: dict[str, list[float]] = {"t": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        with connect_config(config(), start=start) as host:  # type: ignore[call-arg]
            result = host.call_tool("fast__echo", ECHO)
            out["t"].append(time.perf_counter() - t0)
            assert not result.is_error
    return out


def child_client(repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_stdio
    out: dict[str, list[float]] = {"t": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        with connect_stdio(_argv()) as client:
            client.call_tool("echo", ECHO)
            out["t"].append(time.perf_counter() - t0)
    return out


def child_sdk(repeats: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"t": []}
        params = StdioServerParameters(command=sys.executable, args=_argv()[1:])
        for _ in range(repeats):
            t0 = time.perf_counter()
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("echo", ECHO)
                out["t"].append(time.perf_counter() - t0)
        return out

    return asyncio.run(main())


def child_fastmcp(repeats: int) -> dict[str, Any]:
    import logging
    logging.disable(logging.WARNING)
    from fastmcp import Client

    async def main() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"t": []}
        for _ in range(repeats):
            t0 = time.perf_counter()
            async with Client(config()) as client:
                await client.call_tool("fast_echo", ECHO)
                out["t"].append(time.perf_counter() - t0)
        return out

    return asyncio.run(main())


def child_raw(repeats: int) -> dict[str, Any]:
    out: dict[str, list[float]] = {"t": []}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": ECHO}}
    for _ in range(repeats):
        t0 = time.perf_counter()
        proc = subprocess.Popen(_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                         + json.dumps(call).encode() + b"\n")
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
        out["t"].append(time.perf_counter() - t0)
        proc.stdin.close()
        proc.wait(5)
    return out


def child_cli(repeats: int) -> dict[str, Any]:
    out: dict[str, list[float]] = {"config": [], "command": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "servers.json"
        path.write_text(json.dumps(config()))
        cli = [sys.executable, "-m", "mcp_proto_io"]
        args = ["--args", json.dumps(ECHO)]
        runs = {"config": [*cli, "--config", str(path), "call", "fast__echo", *args],
                "command": [*cli, "call", "echo", *args, "--", *_argv()]}
        for _ in range(repeats):
            for key, argv in runs.items():  # interleaved: the machine's drift hits both
                t0 = time.perf_counter()
                done = subprocess.run(argv, capture_output=True, env=C.child_env(),
                                      timeout=60, check=False)
                out[key].append(time.perf_counter() - t0)
                if done.returncode:
                    raise SystemExit(f"{key}: exit {done.returncode}: "
                                     f"{done.stderr.decode(errors='replace')[-300:]}")
    return out


CHILDREN = {
    "lazy": lambda a: child_host(a.repeats, "lazy"),
    "eager": lambda a: child_host(a.repeats, "eager"),
    "client": lambda a: child_client(a.repeats),
    "sdk": lambda a: child_sdk(a.repeats),
    "fastmcp": lambda a: child_fastmcp(a.repeats),
    "raw": lambda a: child_raw(a.repeats),
    "cli": lambda a: child_cli(a.repeats),
}


# -- parent --------------------------------------------------------------------------------------


def collect(*, quick: bool) -> dict[str, Any]:
    repeats = 1 if quick else 5
    me = [sys.executable, str(Path(__file__).resolve())]
    out: dict[str, Any] = {"repeats": repeats, "slow_delay": SLOW_DELAY,
                           "slow_servers": SLOW_SERVERS}
    for which in CHILDREN:
        out[which] = C.run_child([*me, "--child", which, "--repeats", str(repeats)], 600)
    return out


def _t(res: dict[str, Any], key: str = "t") -> tuple[Any, float | None]:
    return C.stat(res, res.get(key) or [], higher=False)


def print_report(out: dict[str, Any]) -> None:
    lazy, lazy_med = _t(out["lazy"])
    rows = []
    for label, key, target in (
            ("lazy Host vs official SDK (one server)", "sdk", "(compare)"),
            ("lazy Host vs no library (one server)", "raw", "(the floor)"),
            ("lazy Host vs our Client (one server)", "client", "about 1: the others "
             "never start"),
            ("lazy Host vs eager Host", "eager", f"far below 1 (eager waits {SLOW_DELAY} s)"),
            ("lazy Host vs fastmcp MCPConfig", "fastmcp", "(compare)")):
        other, other_med = _t(out[key])
        ok = None
        if key == "eager" and isinstance(lazy_med, float) and isinstance(other_med, float):
            ok = lazy_med < other_med / 2
        rows.append(C.Row(label, lazy, other, "s", ours_med=lazy_med, sdk_med=other_med,
                          target=target, ok=ok))
    cli = out["cli"]
    cfg, cfg_med = _t(cli, "config")
    cmd, cmd_med = _t(cli, "command")
    rows.append(C.Row("CLI: --config F call vs -- COMMAND", cfg, cmd, "s", ours_med=cfg_med,
                      sdk_med=cmd_med, target="about 1"))
    C.print_table(f"first call: fast__echo from a config of 1 fast + {out['slow_servers']} "
                  f"servers slow by {out['slow_delay']} s, best (median) of "
                  f"{out['repeats']}; 'SDK' column = the comparison named in the row", rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        C.emit(CHILDREN[args.child](args))
        return 0
    out = collect(quick=args.quick)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
