"""The model-facing conversions, beside a peer and a floor, in one run.

    python benchmarks/bench_tools.py [--quick] [--json PATH]

* **schemas**: ``normalize_schema`` over the corpus of real tool schemas in ``tests/schemas/``
  (server-everything, mcp-server-git, mcp-server-time, pydantic / SDK / fastmcp generated),
  per target, in microseconds per tool; beside it openai-agents' own strict converter
  (``ensure_strict_json_schema`` on a deep copy, what that SDK does per tool) on the same
  schemas, and ``copy.deepcopy`` alone (the floor: any converter that does not mutate its
  input pays at least a copy).
* **cached**: what ``Host.call_tool(..., provider=)`` pays per call for the target's argument
  fixes (a cached ``Normalized`` and ``fix_arguments``).
* **content**: ``to_provider_content`` of a 10 MiB text result for each target, beside
  ``json.dumps`` of the same result (the floor: a host sends the content as JSON anyway).

Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - openai-agents is imported only where it is measured
from __future__ import annotations

import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

CORPUS = C.REPO / "tests" / "schemas"
TARGETS = ("openai", "openai-strict", "anthropic", "gemini", "gemini-openapi")
BIG = 10 * 1024 * 1024


def corpus() -> list[dict[str, Any]]:
    schemas: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text())
        for value in data.values():
            schema = value.get("inputSchema", value) if isinstance(value, dict) else None
            if isinstance(schema, dict):
                schemas.append(schema)
    return schemas


def per_tool(fn: Any, schemas: list[dict[str, Any]], repeats: int, rounds: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for s in schemas:
                fn(s)
        out.append((time.perf_counter() - t0) / (rounds * len(schemas)))
    return out


def collect(*, quick: bool) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto._types import parse_call_tool_result
    from mcp_proto.host import normalize_schema, to_provider_content
    schemas = corpus()
    repeats, rounds = (3, 5) if quick else (7, 40)
    out: dict[str, Any] = {"tools": len(schemas), "repeats": repeats}
    for target in TARGETS:
        out[target] = per_tool(lambda s, t=target: normalize_schema(s, t), schemas,
                               repeats, rounds)
    out["deepcopy"] = per_tool(copy.deepcopy, schemas, repeats, rounds)
    try:
        from agents.strict_schema import ensure_strict_json_schema

        def agents_strict(s: dict[str, Any]) -> None:
            try:
                ensure_strict_json_schema(copy.deepcopy(s))
            except Exception:  # it refuses maps: the host then sends the tool non-strict
                pass

        out["openai-agents"] = per_tool(agents_strict, schemas, repeats, rounds)
    except ImportError as exc:
        out["openai-agents"] = f"openai-agents not importable: {exc}"
    # cached argument fixes, as call_tool(provider=) does them
    n = normalize_schema(schemas[0], "openai-strict")
    args = {"a": None, "b": "x"}
    t0 = time.perf_counter()
    count = 20_000 if quick else 200_000
    for _ in range(count):
        n.fix_arguments(args)
    out["fix_arguments_us"] = (time.perf_counter() - t0) / count * 1e6
    # a 10 MiB text result
    result = parse_call_tool_result({"content": [{"type": "text", "text": "x" * BIG}]})
    content: dict[str, list[float]] = {}
    for target in (*TARGETS, "openai-responses"):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            to_provider_content(result, target, name="t")
            times.append(time.perf_counter() - t0)
        content[target] = times
    dumps = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        json.dumps(result.raw)
        dumps.append(time.perf_counter() - t0)
    content["json.dumps"] = dumps
    out["content"] = content
    return out


def print_report(out: dict[str, Any]) -> None:
    rows = []
    us = 1e6
    floor = statistics.median(out["deepcopy"]) * us
    peer = out["openai-agents"]
    for target in TARGETS:
        med = statistics.median(out[target]) * us
        rows.append(C.Row(f"normalize_schema {target} vs deepcopy (floor)", med, floor,
                          "us", target="(compare)"))
    strict = statistics.median(out["openai-strict"]) * us
    if isinstance(peer, list):
        peer_med = statistics.median(peer) * us
        rows.append(C.Row("openai-strict vs openai-agents ensure_strict_json_schema", strict,
                          peer_med, "us", target="(compare)"))
    else:
        rows.append(C.Row("openai-strict vs openai-agents", strict, peer, "us",
                          target="(compare)"))
    C.print_table(f"tools: per tool schema over {out['tools']} real tool schemas, median of "
                  f"{out['repeats']}; 'SDK' column = the comparison named in the row", rows)
    print(f"call_tool(provider=) argument fixes (cached Normalized): "
          f"{out['fix_arguments_us']:.2f} us per call\n")
    content = out["content"]
    dumps = statistics.median(content["json.dumps"]) * 1e6
    crow = [C.Row(f"10 MiB text result: {t} vs json.dumps (floor)",
                  statistics.median(v) * 1e6, dumps, "us", target="(compare)")
            for t, v in content.items() if t != "json.dumps"]
    C.print_table("tools: to_provider_content of a 10 MiB text result, median (the text is "
                  "shared, not copied)", crow)


def main(argv: list[str] | None = None) -> int:
    return C.quick_main(__doc__, collect, print_report, argv)


if __name__ == "__main__":
    sys.exit(main())
