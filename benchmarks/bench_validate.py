"""What checking a tool call costs: arguments against ``inputSchema`` and ``structuredContent``
against ``outputSchema``, per call, beside a floor and the official SDK's way.

    python benchmarks/bench_validate.py [--quick] [--json PATH]

* **ours**: ``ValidatorCache.check_arguments`` / ``check_output`` (mcp_proto.host._validate):
  the compiled check found by the tool definition's identity, the value's size bounded, each
  keyword charged to the step budget, issues collected.
* **floor**: no validation, one dict access on the value (what a host that checks nothing
  pays to touch the value at all).
* **SDK**: ``mcp`` 2.3.0 checks ``structuredContent`` in ``ClientSession.validate_tool_result``
  (a cached ``jsonschema`` validator, ``best_match(validator.iter_errors(value))``); that very
  method is timed, on an SDK ``CallToolResult``, driven without an event loop (it awaits
  nothing once the tool's schema is known).  The SDK does not check arguments: its row for
  arguments times the same ``jsonschema`` calls on the arguments (the equivalent call).
* **compile**: the first call of a tool (once per definition): ours (size walk, pattern
  analysis, ``check_schema``, the validator) vs the SDK's ``_output_schema_validator`` over
  the real input schemas of ``tests/schemas/``.

The schemas are real: mcp-server-git's ``git_log`` input and server-everything's
``get-structured-content`` output (a hand copy of its zod definition); a 200-row result of
the same shape stands for a larger structured answer.  Ours and the SDK run in paired rounds
(one after the other in each round, the ratio the median of the rounds' ratios), so that the
machine's drift cancels out.  Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - the SDK is imported only where it is measured
from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

CORPUS = C.REPO / "tests" / "schemas"
GIT = json.loads((CORPUS / "mcp_server_git.json").read_text())
WEATHER_OUTPUT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "temperature": {"type": "number", "description": "Temperature in celsius"},
        "conditions": {"type": "string", "description": "Weather conditions description"},
        "humidity": {"type": "number", "description": "Humidity percentage"},
    },
    "required": ["temperature", "conditions", "humidity"],
    "additionalProperties": False,
}
ROWS_OUTPUT = {
    "type": "object",
    "properties": {"rows": {"type": "array", "items": {
        k: v for k, v in WEATHER_OUTPUT.items() if k != "$schema"}}},
    "required": ["rows"],
}
ARGUMENTS = {"repo_path": "/src/project", "max_count": 10, "start_timestamp": "2 weeks ago"}
BAD_ARGUMENTS = {"repo_path": "/src/project", "max_count": "ten"}
WEATHER = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}
ROWS = {"rows": [dict(WEATHER, temperature=float(i)) for i in range(200)]}


def corpus() -> list[dict[str, Any]]:
    schemas: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.json")):
        for value in json.loads(path.read_text()).values():
            schema = value.get("inputSchema", value) if isinstance(value, dict) else None
            if isinstance(schema, dict):
                schemas.append(schema)
    return schemas


def per_call(fn: Callable[[], object], repeats: int, calls: int) -> list[float]:
    """Seconds per call of ``fn``, one value per repeat."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls)
    return out


def raising(fn: Callable[[], object], exc: type[BaseException]) -> Callable[[], object]:
    def call() -> object:
        try:
            return fn()
        except exc as e:
            return e
    return call


def collect(*, quick: bool) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto._types import Tool, parse_call_tool_result
    from mcp_proto.host._validate import InvalidArguments, JsonSchemaValidator, ValidatorCache

    repeats, calls = (5, 1_000) if quick else (9, 10_000)
    big_calls = max(calls // 50, 20)
    git_log = Tool(name="git_log", input_schema=GIT["git_log"])
    weather = Tool(name="get-structured-content", input_schema={"type": "object"},
                   output_schema=WEATHER_OUTPUT)
    rows = Tool(name="rows", input_schema={"type": "object"}, output_schema=ROWS_OUTPUT)
    weather_result = parse_call_tool_result({"content": [], "structuredContent": WEATHER})
    rows_result = parse_call_tool_result({"content": [], "structuredContent": ROWS})
    cache = ValidatorCache()
    ours: dict[str, tuple[Callable[[], object], int]] = {
        "arguments": (lambda: cache.check_arguments("git", git_log, ARGUMENTS), calls),
        "arguments, invalid": (raising(lambda: cache.check_arguments(
            "git", git_log, BAD_ARGUMENTS), InvalidArguments), calls),
        "output": (lambda: cache.check_output("ev", weather, weather_result), calls),
        "output, 200 rows": (lambda: cache.check_output("ev", rows, rows_result), big_calls),
    }
    floors = {"arguments": lambda: ARGUMENTS["repo_path"],
              "output": lambda: weather_result.structured_content["temperature"]}
    schemas = corpus()
    validator = JsonSchemaValidator()
    validator.compile({"type": "object"})  # the draft classes are built once per validator
    validator.compile({"$schema": "http://json-schema.org/draft-07/schema#"})
    compile_rounds = 1 if quick else 5
    peer, peer_compile = sdk(schemas)
    out: dict[str, Any] = {"repeats": repeats, "calls": calls, "tools": len(schemas),
                           "ours": {k: [] for k in ours}, "floor": {k: [] for k in floors},
                           "sdk": {k: [] for k in peer} if isinstance(peer, dict) else peer,
                           "compile_ours": [], "compile_sdk": []}
    for name, (fn, _) in ours.items():  # warm: compile, first calls
        fn()
        if isinstance(peer, dict):
            peer[name]()
    # paired rounds: ours and the SDK one after the other, so that drift cancels out
    for _ in range(repeats):
        for name, (fn, n) in ours.items():
            out["ours"][name] += per_call(fn, 1, n)
            if isinstance(peer, dict):
                out["sdk"][name] += per_call(peer[name], 1, n)
        for name, fn in floors.items():
            out["floor"][name] += per_call(fn, 1, calls)
        out["compile_ours"] += per_call(lambda: [validator.compile(s) for s in schemas],
                                        1, compile_rounds)
        if peer_compile is not None:
            out["compile_sdk"] += per_call(peer_compile, 1, compile_rounds)
    out["skipped"] = [s.reason for s in cache.skipped()]
    return out


def sdk(schemas: list[dict[str, Any]]) -> tuple[dict[str, Callable[[], object]] | str,
                                                Callable[[], object] | None]:
    """The SDK's own ``validate_tool_result`` (and the same jsonschema calls on arguments),
    per case, and its compile of every schema; an error text when it is not installed."""
    try:
        import mcp.types as mcp_types
        from jsonschema import exceptions as jsonschema_exceptions
        from jsonschema.validators import validator_for
        from mcp.client.session import ClientSession
        from referencing import Registry
    except ImportError as exc:
        return f"mcp (the SDK) not importable: {exc}", None
    session = ClientSession.__new__(ClientSession)  # only the validation state is used
    session._tool_output_schemas = {"get-structured-content": WEATHER_OUTPUT,
                                    "rows": ROWS_OUTPUT}
    session._tool_output_validators = {}

    def validate(name: str, result: Any) -> Callable[[], object]:
        def call() -> None:
            coro = session.validate_tool_result(name, result)
            try:
                coro.send(None)
            except StopIteration:
                return
            raise RuntimeError("validate_tool_result awaited something")
        return call

    weather = mcp_types.CallToolResult(content=[], structured_content=WEATHER)
    rows = mcp_types.CallToolResult(content=[], structured_content=ROWS)
    arguments_validator = validator_for(GIT["git_log"])(GIT["git_log"], registry=Registry())

    def arguments(value: Any) -> Callable[[], object]:
        def call() -> None:
            error = jsonschema_exceptions.best_match(arguments_validator.iter_errors(value))
            if error is not None:
                raise RuntimeError(f"Invalid arguments: {error}")
        return call

    def compile_all() -> None:
        for i, schema in enumerate(schemas):
            session._tool_output_validators.pop(str(i), None)
            session._output_schema_validator(str(i), schema)

    return {"arguments": arguments(ARGUMENTS),
            "arguments, invalid": raising(arguments(BAD_ARGUMENTS), RuntimeError),
            "output": validate("get-structured-content", weather),
            "output, 200 rows": validate("rows", rows)}, compile_all


def paired(ours: list[float], peer: list[float]) -> float | None:
    return statistics.median(a / b for a, b in zip(ours, peer, strict=True)) if peer else None


def print_report(out: dict[str, Any]) -> None:
    us = 1e6
    sdk = out["sdk"]
    rows = []
    for case, values in out["ours"].items():
        floor = out["floor"]["arguments" if case.startswith("arguments") else "output"]
        if isinstance(sdk, dict):
            rows.append(C.Row(f"{case}: ours vs SDK", min(values) * us, min(sdk[case]) * us,
                              "us", ours_med=statistics.median(values) * us,
                              sdk_med=statistics.median(sdk[case]) * us, target="(compare)",
                              paired=paired(values, sdk[case])))
        else:
            rows.append(C.Row(f"{case}: ours vs SDK", min(values) * us, sdk, "us",
                              target="(compare)"))
        rows.append(C.Row(f"{case}: ours vs floor (dict access)", min(values) * us,
                          min(floor) * us, "us", ours_med=statistics.median(values) * us,
                          sdk_med=statistics.median(floor) * us, target="(compare)"))
    per_tool = us / out["tools"]
    ours_c, sdk_c = out["compile_ours"], out["compile_sdk"]
    rows.append(C.Row(f"compile, per tool ({out['tools']} real schemas): ours vs SDK",
                      min(ours_c) * per_tool,
                      min(sdk_c) * per_tool if sdk_c else "SDK not importable", "us",
                      ours_med=statistics.median(ours_c) * per_tool,
                      sdk_med=statistics.median(sdk_c) * per_tool if sdk_c else None,
                      target="(compare)", paired=paired(ours_c, sdk_c)))
    C.print_table(f"validate: us per call, best (median) of {out['repeats']} paired rounds; "
                  "'SDK' column = the comparison named in the row", rows)
    if out["skipped"]:
        print("not checked:", "; ".join(out["skipped"]))


def main(argv: list[str] | None = None) -> int:
    return C.quick_main(__doc__, collect, print_report, argv)


if __name__ == "__main__":
    sys.exit(main())
