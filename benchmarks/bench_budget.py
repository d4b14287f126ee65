"""Result budgets: a huge tool result cut to a model's budget, beside the floor and the SDK.

    python benchmarks/bench_budget.py [--quick] [--json PATH]

Each case is a ``tools/call`` result built (untimed) as the session hands it to the host, then
fitted to Anthropic's default budget (25,000 tokens under the estimate: 100,000 characters)
with a store handle in the marker.  Measured per case, time (best and median of the repeats)
and peak memory (``tracemalloc``, a separate run: tracing slows the code down):

* **ours**: ``to_provider_content(result, "anthropic", budget=default_budget("anthropic"),
  handle="r1")``: ``budget_result`` (the document's lengths, the cut, the marker, the notes)
  and the conversion of what is kept; beside it ``ResultStore.put`` (what keeping the whole
  result for ``mcp_read_result`` costs) and one ``ResultStore.read`` page from the middle.
* **floor**: what no library can beat: for text, a hand-written ``text[:h] + marker +
  text[-t:]`` of the one block; for ``structuredContent``, ``json.dumps`` of the value (any
  cut of it needs its text) and the same slice.
* **SDK**: the official ``mcp`` package (2.3.0) has no client-side budget at all: a host
  using it passes the whole result to the model (or writes this layer itself).  Its
  ``CallToolResult.model_validate`` of the same result (just receiving it, not cutting
  anything) is shown as the reference cost of getting the result at all.

Cases: a 10 MiB and a 100 MiB text result; a large ``structuredContent`` (rows of records: 10
MiB of JSON, 1 MiB with ``--quick``) alone, and with a text block holding the same JSON (as
FastMCP sends it; finding that duplicate parses the text, which is most of that row's time).
Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - the SDK is imported only where it is measured
from __future__ import annotations

import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

MiB = 1024 * 1024
TARGET = "anthropic"


def text_result(size: int) -> dict[str, Any]:
    line = "2026-12-02T18:36:19Z INFO worker-3 processed batch 1234 in 12.5 ms ok\n"
    return {"content": [{"type": "text", "text": (line * (size // len(line) + 1))[:size]}]}


def rows(size: int) -> dict[str, Any]:
    row = {"id": 0, "name": "item 0", "tags": ["alpha", "beta"], "score": 0.5, "ok": True}
    n = size // len(json.dumps(row))
    return {"rows": [{**row, "id": i, "name": f"item {i}", "score": i / 7} for i in range(n)]}


def structured_result(size: int, *, with_text: bool) -> dict[str, Any]:
    value = rows(size)
    content = [{"type": "text", "text": json.dumps(value)}] if with_text else []
    return {"content": content, "structuredContent": value}


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def peak(fn: Callable[[], Any]) -> float:
    """Peak memory traced while ``fn`` runs (MiB), what it allocates beyond its input."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / MiB
    finally:
        tracemalloc.stop()


def floor_fn(wire: dict[str, Any], keep: int) -> Callable[[], str]:
    value = wire.get("structuredContent")
    text = wire["content"][0]["text"] if value is None else None
    head, tail = keep // 2, keep - keep // 2

    def floor() -> str:
        whole = text if text is not None else json.dumps(value, ensure_ascii=False)
        marker = (f"[... {len(whole) - keep:,} characters omitted; read more with "
                  f"mcp_read_result handle=r1 offset={head}]")
        return whole[:head] + marker + whole[len(whole) - tail:]
    return floor


def measure(name: str, wire: dict[str, Any], repeats: int) -> dict[str, Any]:
    from mcp_proto._types import parse_call_tool_result
    from mcp_proto.host.content._budget import ResultStore
    from mcp_proto.host.content._convert import default_budget, to_provider_content

    result = parse_call_tool_result(wire)
    budget = default_budget(TARGET)

    def ours() -> Any:
        return to_provider_content(result, TARGET, budget=budget, handle="r1")

    pc = ours()
    seen = "".join(b["text"] for b in pc.content if b["type"] == "text")
    def put() -> ResultStore:
        store = ResultStore()
        store.put(result)
        return store

    store = put()
    total = store.read("r1", 0, 1).total

    def page() -> None:
        store.read("r1", total // 2, 20_000)

    floor = floor_fn(wire, len(seen) - 200)
    out: dict[str, Any] = {
        "name": name, "chars": total, "kept_chars": len(seen), "notes": list(pc.notes),
        "ours": timed(ours, repeats), "ours_peak_mib": peak(ours),
        "put": timed(put, repeats), "put_peak_mib": peak(put),
        "page": timed(page, repeats),
        "floor": timed(floor, repeats), "floor_peak_mib": peak(floor),
    }
    try:
        from mcp.types import CallToolResult as SdkResult
    except ImportError as exc:
        out["sdk"] = f"mcp not importable: {exc}"
        return out

    def sdk() -> Any:
        return SdkResult.model_validate(wire)

    out["sdk"] = timed(sdk, repeats)
    out["sdk_peak_mib"] = peak(sdk)
    return out


def collect(*, quick: bool) -> dict[str, Any]:
    C.setup_path()
    repeats = 3 if quick else 7
    structured = MiB if quick else 10 * MiB
    cases = [
        ("10 MiB text", text_result(10 * MiB)),
        ("100 MiB text", text_result(100 * MiB)),
        (f"{structured // MiB} MiB structuredContent", structured_result(structured,
                                                                         with_text=False)),
        (f"{structured // MiB} MiB structuredContent + its text",
         structured_result(structured, with_text=True)),
    ]
    out: dict[str, Any] = {"repeats": repeats, "target": TARGET, "cases": []}
    for name, wire in cases:
        out["cases"].append(measure(name, wire, repeats))
        del wire
    return out


def print_report(out: dict[str, Any]) -> None:
    ms = 1000.0
    for case in out["cases"]:
        med = statistics.median
        ours = med(case["ours"]) * ms
        floor = med(case["floor"]) * ms
        sdk = case["sdk"]
        rows = [
            C.Row("budget_result + to_provider_content vs floor slice", ours, floor, "ms",
                  target="(compare)"),
            C.Row("  peak memory vs floor", case["ours_peak_mib"], case["floor_peak_mib"],
                  "MiB", target="(compare)"),
        ]
        if isinstance(sdk, list):
            rows += [
                C.Row("budget_result + to_provider_content vs SDK model_validate (no budget)",
                      ours, med(sdk) * ms, "ms", target="(compare)"),
                C.Row("  peak memory vs SDK model_validate", case["ours_peak_mib"],
                      case["sdk_peak_mib"], "MiB", target="(compare)"),
            ]
        else:
            rows.append(C.Row("SDK", ours, sdk, "ms", target="(compare)"))
        rows += [
            C.Row("ResultStore.put (kept for mcp_read_result) vs floor", med(case["put"]) * ms,
                  floor, "ms", target="(compare)"),
            C.Row("  peak memory vs floor", case["put_peak_mib"], case["floor_peak_mib"],
                  "MiB", target="(compare)"),
            C.Row("ResultStore.read, one 20,000-character page from the middle",
                  med(case["page"]) * ms, None, "ms", compare=False),
        ]
        C.print_table(f"budget: {case['name']} ({case['chars']:,} characters) to {out['target']}"
                      f"'s default budget, {case['kept_chars']:,} kept; median of "
                      f"{out['repeats']}; 'SDK' column = the comparison named in the row", rows)
    print("The SDK has no client-side result budget: its column is what receiving the result "
          "costs, not cutting it.\n")


def main(argv: list[str] | None = None) -> int:
    return C.quick_main(__doc__, collect, print_report, argv)


if __name__ == "__main__":
    sys.exit(main())
