"""Hundreds to thousands of tools: what the Host costs per model turn, beside the floor and the
official SDK's ``ClientSessionGroup``, in one run.

    python benchmarks/bench_host_tools.py [--quick] [--json PATH]

One server of 10,000 tools (``benchmarks/servers/many_tools_server.py``: 3 to 8 parameters
each, of the kinds real servers use), each measurement in a fresh child process:

* **core** (``HostCore``, pure, no I/O): the listing taken in (``start_succeeded``: the dict
  of each name, the public names, the routes); the first ``tools()`` and the first
  ``definitions(target)`` per target (every schema normalized, each target on a fresh
  ``HostCore``: nothing converted before), then the cached ones (per call); the
  ``openai-responses[-strict]`` definitions after the ``openai[-strict]`` ones (the same
  schemas: converted once, shared); ``tool(name)``, ``route(name)`` and a cached
  ``normalized(name, target)`` per call;
  the turn after a ``list_changed`` (a new listing with one tool changed and one added: the
  rename, then ``tools()`` and ``definitions()`` again, where only the changed tools are
  normalized again); a mistyped name's close matches; ``assign_names`` at 10,000 names in
  each mode, also with every name colliding.
* **floor**: what no library costs: a list comprehension over the listing (the public name and
  the tool; a Chat Completions dict per tool with the schema as it came, not normalized), a
  list copy (a cached answer) and a dict lookup (a route).
* **host**: the threads ``Host`` (``connect_config`` on the stub server): opening it (start,
  handshake, listing), ``host.list_tools()`` and ``host.tool_definitions("openai")``, first
  and repeated, and one ``call_tool``.
* **sdk**: ``mcp`` 2.3.0's ``ClientSessionGroup.connect_to_server`` on the same server, its
  ``group.tools`` (a dict it keeps), and a Chat Completions list written by hand from it per
  turn (the SDK converts nothing: that is what its user writes).
* **open64**: a threads Host of 64 servers (``benchmarks/servers/fast_server.py``) opening, as
  ``bench_host.py`` starts them (issue 24: 1.4 s on the 2-CPU machine it was measured on).

``--quick`` measures the targets openai and anthropic once each (every target otherwise, and
three repeats).  Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - each child imports only what it measures
from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

SERVERS = C.HERE / "servers"
MANY = SERVERS / "many_tools_server.py"
TOOLS = 10_000
ALL_TARGETS = ("openai", "openai-strict", "openai-responses", "openai-responses-strict",
               "anthropic", "gemini", "gemini-openapi")
QUICK_TARGETS = ("openai", "anthropic")
#: Targets whose schemas are another's (the Responses API takes the Chat Completions subset).
SHARED = {"openai-responses": "openai", "openai-responses-strict": "openai-strict"}
#: Servers of the opening benchmark: the host's limit (DEFAULT_MAX_SERVERS).
OPEN_SERVERS = 64
#: Calls a cached answer is timed over (per call: the mean of that many).
CACHED_CALLS = 50
#: Calls an answer that may not be cached (the binding's, the SDK user's) is timed over:
#: ``--quick`` takes the first of these, a full run the second.
SLOW_CALLS = (3, 10)


def _wire(count: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(SERVERS))
    made: list[dict[str, Any]] = importlib.import_module("many_tools_server").make_tools(count)
    return made


def _settled() -> None:
    """Keep the collector out of the next measurement: what exists now (the listing, the
    parsed tools, the host) is collected and frozen out of later collections, so a full
    collection due to earlier work does not land in the one timed next (it is there in a
    real host too, but as a spike in one random call, not as the cost of one)."""
    gc.collect()
    gc.freeze()


def _per_call(fn: Callable[[], object], calls: int = CACHED_CALLS) -> float:
    _settled()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def _once(fn: Callable[[], object]) -> float:
    _settled()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -- children ------------------------------------------------------------------------------


def child_core(count: int, targets: list[str], repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto._types import parse_tool
    from mcp_proto.host import HostConfig, HostCore, NamePolicy, ServerSpec, assign_names

    wire = _wire(count)
    tools = [parse_tool(t) for t in wire]
    changed = [dict(t) for t in wire] + [{**wire[0], "name": "brand_new_tool"}]
    changed[1] = {**wire[1], "description": "A changed description."}
    changed[2] = {**wire[2], "inputSchema": {"type": "object", "properties": {
        "only": {"type": "string"}}}}
    out: dict[str, Any] = {"tools": count, "targets": targets}

    def add(key: str, value: float) -> None:
        out.setdefault(key, []).append(value)

    def listed() -> HostCore:
        fresh = HostCore(HostConfig(servers={"big": ServerSpec(name="big", command=("x",))}))
        fresh.start_succeeded("big", fresh.begin_start("big", 0.0), 0.0, tools)
        fresh.tools()
        return fresh

    def one_round() -> None:
        core = HostCore(HostConfig(servers={"big": ServerSpec(name="big", command=("x",))}))
        run = core.begin_start("big", 0.0)
        add("listing", _once(lambda: core.start_succeeded("big", run, 0.0, tools)))
        add("tools_first", _once(core.tools))
        add("tools_cached", _per_call(core.tools))
        names = [t.name for t in core.tools()]
        add("tool_per_call", _once(lambda: [core.tool(n) for n in names]) / len(names))
        add("route_per_call", _once(lambda: [core.route(n, now=1.0) for n in names])
            / len(names))
        for target in targets:
            fresh = listed()  # nothing converted yet, for any target
            add(f"definitions_first:{target}", _once(partial(fresh.definitions, target)))
            add(f"definitions_cached:{target}", _per_call(partial(fresh.definitions, target)))
            del fresh
        for target, same in SHARED.items():  # the same schemas: converted once for both
            if target in targets:
                core.definitions(same)
                add(f"definitions_shared:{target}", _once(partial(core.definitions, target)))
        add("normalized_per_call", _once(lambda: [core.normalized(n, targets[0])
                                                  for n in names]) / len(names))
        relisted = [parse_tool(t) for t in changed]

        def relist() -> None:
            core.tools_changed("big", run)
            core.tools_listed("big", run, relisted)
        add("relist", _once(relist))
        add("relist_tools", _once(core.tools))
        add("relist_definitions", _once(lambda: core.definitions(targets[0])))
        names_now = core.tool_names()
        add("close_matches_first",
            _once(lambda: names_now.close_matches("big__githb_get_issu")))
        add("close_matches", _per_call(lambda: names_now.close_matches("big__get_isue_12"), 10))
        # the floor: a comprehension over the listing, a list copy, a dict lookup
        add("floor_tools", _once(lambda: [(f"big__{t.name}", t) for t in tools]))
        add("floor_definitions", _once(lambda: [
            {"type": "function", "function": {"name": f"big__{t.name}",
                                              "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]))
        kept = core.tools()
        add("floor_cached", _per_call(lambda: list(kept)))
        table = {n: ("big", n) for n in names}
        add("floor_route", _once(lambda: [table[n] for n in names]) / len(names))

    for _ in range(repeats):
        one_round()
    listing = {"big": [t.name for t in tools]}
    colliding = {f"s{i}": [t.name for t in tools[:count // 10]] for i in range(10)}
    for mode in ("always", "collisions", "never"):
        policy = NamePolicy(mode=mode)
        for _ in range(repeats):
            add(f"names:{mode}", _once(partial(assign_names, listing, policy)))
            add(f"names_colliding:{mode}", _once(partial(assign_names, colliding, policy)))
    return out


def _many_config(count: int) -> dict[str, Any]:
    return {"mcpServers": {"big": {"command": sys.executable,
                                   "args": [str(MANY), "--tools", str(count)]}}}


def child_host(count: int, repeats: int, slow: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_config

    out: dict[str, Any] = {}

    def add(key: str, value: float) -> None:
        out.setdefault(key, []).append(value)

    def one_round() -> None:
        _settled()
        t0 = time.perf_counter()
        with connect_config(_many_config(count), timeout=120.0) as host:
            add("open", time.perf_counter() - t0)
            add("list_tools_first", _once(host.list_tools))
            add("list_tools_repeated", _per_call(host.list_tools, 10))
            add("definitions_first", _once(lambda: host.tool_definitions("openai")))
            add("definitions_repeated",
                _per_call(lambda: host.tool_definitions("openai"), slow))
            name = host.list_tools()[count // 2].name
            host.call_tool(name, {})
            add("call_tool", _per_call(lambda: host.call_tool(name, {}), 100))
            out["listed"] = len(host.list_tools())

    for _ in range(repeats):
        one_round()
    return out


def child_sdk(count: int, repeats: int, slow: int) -> dict[str, Any]:
    import logging
    logging.disable(logging.WARNING)
    from mcp.client.session_group import ClientSessionGroup
    from mcp.client.stdio import StdioServerParameters

    config = _many_config(count)["mcpServers"]["big"]
    params = StdioServerParameters(command=config["command"], args=config["args"])
    out: dict[str, Any] = {}

    def add(key: str, value: float) -> None:
        out.setdefault(key, []).append(value)

    def by_hand(tools: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": name, "description": t.description,
                                                  "parameters": t.input_schema}}
                for name, t in tools.items()]

    async def main() -> None:
        for _ in range(repeats):
            _settled()
            t0 = time.perf_counter()
            async with ClientSessionGroup() as group:
                await group.connect_to_server(params)
                add("open", time.perf_counter() - t0)
                add("tools_repeated", _per_call(lambda: list(group.tools.values())))
                add("definitions_by_hand", _per_call(lambda: by_hand(group.tools), slow))
                name = next(iter(group.tools))
                await group.call_tool(name, {})
                t0 = time.perf_counter()
                for _ in range(100):
                    await group.call_tool(name, {})
                add("call_tool", (time.perf_counter() - t0) / 100)
                out["listed"] = len(group.tools)

    asyncio.run(main())
    return out


def child_open64(repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import connect_config

    server = str(C.DEFAULT_SERVER)
    config = {"mcpServers": {f"fast{i}": {"command": sys.executable, "args": [server]}
                             for i in range(OPEN_SERVERS)}}
    out: dict[str, list[float]] = {"open": []}
    for _ in range(repeats):
        _settled()
        t0 = time.perf_counter()
        with connect_config(config, timeout=120.0) as host:
            out["open"].append(time.perf_counter() - t0)
            assert all(s.state == "running" for s in host.servers().values())
    return out


CHILDREN: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "core": lambda a: child_core(a.tools, a.targets.split(","), a.repeats),
    "host": lambda a: child_host(a.tools, a.repeats, a.calls),
    "sdk": lambda a: child_sdk(a.tools, a.repeats, a.calls),
    "open64": lambda a: child_open64(a.repeats),
}


# -- parent --------------------------------------------------------------------------------


def collect(*, quick: bool, tools: int = TOOLS) -> dict[str, Any]:
    targets = QUICK_TARGETS if quick else ALL_TARGETS
    repeats = 1 if quick else 3
    me = [sys.executable, str(Path(__file__).resolve())]

    def child(which: str, *extra: str) -> dict[str, Any]:
        return C.run_child([*me, "--child", which, "--tools", str(tools), "--repeats",
                            str(repeats), "--calls", str(SLOW_CALLS[not quick]), *extra], 900)

    return {"quick": quick, "tools": tools, "repeats": repeats, "targets": list(targets),
            "core": child("core", "--targets", ",".join(targets)),
            "host": child("host"), "sdk": child("sdk"), "open64": child("open64")}


def _get(res: dict[str, Any], key: str) -> tuple[float | str | None, float | None]:
    if "error" in res:
        return res["error"], None
    return C.stat(res, res.get(key) or [], higher=False)


def _row(name: str, ours: tuple[float | str | None, float | None],
         other: tuple[float | str | None, float | None] | None, unit: str = "s", *,
         target: str = "", limit: float | None = None) -> C.Row:
    """A row of seconds (``unit`` "s") or microseconds (``unit`` "us": the values are
    seconds, shown in us); ``limit`` judges the median (best when only one)."""
    scale = 1e6 if unit == "us" else 1.0

    def scaled(v: float | str | None) -> float | str | None:
        return v * scale if isinstance(v, float) else v

    best, med = ours
    ok = None
    value = C.num(med if med is not None else best)
    if limit is not None and value is not None:
        ok = value <= limit
    other_best, other_med = other if other is not None else (None, None)
    return C.Row(name, scaled(best), scaled(other_best), unit, ours_med=C.num(scaled(med)),
                 sdk_med=C.num(scaled(other_med)), target=target, ok=ok,
                 compare=other is not None)


def print_report(out: dict[str, Any]) -> None:
    core, host, sdk, open64 = out["core"], out["host"], out["sdk"], out["open64"]
    n = out["tools"]
    rows = [
        _row("listing taken in (start_succeeded)", _get(core, "listing"),
             _get(core, "floor_tools"), target="(floor: one comprehension)"),
        _row("tools() first", _get(core, "tools_first"), _get(core, "floor_tools"),
             target="< 1 s", limit=1.0),
        _row("tools() cached, per call", _get(core, "tools_cached"),
             _get(core, "floor_cached"), "us", target="a few ms", limit=0.005),
        _row("tool(name), per call", _get(core, "tool_per_call"), _get(core, "floor_route"),
             "us", target="(floor: a dict lookup)"),
        _row("route(name), per call", _get(core, "route_per_call"), _get(core, "floor_route"),
             "us", target="(floor: a dict lookup)"),
        _row("normalized(name), cached, per call", _get(core, "normalized_per_call"),
             _get(core, "floor_route"), "us", target="(floor: a dict lookup)"),
    ]
    for target in out["targets"]:
        rows.append(_row(f"definitions({target}) first", _get(core, f"definitions_first:{target}"),
                         _get(core, "floor_definitions"), target="< 1 s", limit=1.0))
        rows.append(_row(f"definitions({target}) cached, per call",
                         _get(core, f"definitions_cached:{target}"), _get(core, "floor_cached"),
                         "us", target="a few ms", limit=0.005))
        if target in SHARED:
            rows.append(_row(f"definitions({target}) after {SHARED[target]} (shared)",
                             _get(core, f"definitions_shared:{target}"),
                             _get(core, "floor_definitions"), target="< 1 s", limit=1.0))
    rows += [
        _row("list_changed: the new listing taken in", _get(core, "relist"),
             _get(core, "floor_tools")),
        _row("list_changed: tools() next", _get(core, "relist_tools"),
             _get(core, "floor_tools")),
        _row(f"list_changed: definitions({out['targets'][0]}) next (2 tools converted)",
             _get(core, "relist_definitions"), _get(core, "floor_definitions"),
             target="< 1 s", limit=1.0),
        _row("close matches, first mistyped name", _get(core, "close_matches_first"), None),
        _row("close matches, later", _get(core, "close_matches"), None, target="a few ms",
             limit=0.01),
    ]
    C.print_table(f"HostCore, one server of {n:,} tools; 'SDK' column = the floor (a plain "
                  "comprehension over the listing, a list copy, a dict lookup)", rows)

    names = []
    for mode in ("always", "collisions", "never"):
        names.append(_row(f"assign_names {mode}, {n:,} names", _get(core, f"names:{mode}"),
                          None, target="linear", limit=0.5))
        names.append(_row(f"assign_names {mode}, 10 servers x {n // 10:,} same names",
                          _get(core, f"names_colliding:{mode}"), None, target="linear",
                          limit=0.5))
    C.print_table("public names", names)

    hrows = [
        _row("open (start, handshake, listing)", _get(host, "open"), _get(sdk, "open"),
             target="(compare)"),
        _row("host.list_tools() first", _get(host, "list_tools_first"), None),
        _row("host.list_tools() repeated vs group.tools", _get(host, "list_tools_repeated"),
             _get(sdk, "tools_repeated"), "us", target="a few ms", limit=0.005),
        _row("host.tool_definitions(openai) first", _get(host, "definitions_first"), None,
             target="< 1 s", limit=1.0),
        _row("host.tool_definitions(openai) repeated vs by hand",
             _get(host, "definitions_repeated"), _get(sdk, "definitions_by_hand"),
             target="a few ms", limit=0.005),
        _row("call_tool, per call", _get(host, "call_tool"), _get(sdk, "call_tool"), "us",
             target="(compare)"),
        _row(f"a host of {OPEN_SERVERS} servers opening", _get(open64, "open"), None,
             target="<= 2 s (1.4 s in issue 24)", limit=2.0),
    ]
    listed = host.get("listed"), sdk.get("listed")
    C.print_table(f"threads Host on a stub server of {n:,} tools; 'SDK' column = mcp 2.3.0 "
                  f"ClientSessionGroup (tools listed: Host {listed[0]}, SDK {listed[1]})", hrows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run (~15 s)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--tools", type=int, default=TOOLS, help=argparse.SUPPRESS)
    ap.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    ap.add_argument("--targets", default=",".join(ALL_TARGETS), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3, help=argparse.SUPPRESS)
    ap.add_argument("--calls", type=int, default=SLOW_CALLS[1], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        C.emit(CHILDREN[args.child](args))
        return 0
    t0 = time.perf_counter()
    out = collect(quick=args.quick, tools=args.tools)
    print_report(out)
    print(f"({time.perf_counter() - t0:.1f} s in all)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
