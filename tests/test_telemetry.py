"""OpenTelemetry in the three runtimes against real servers (issue 26): spans, their names,
kinds, attributes and parents as the MCP semantic conventions give them
(open-telemetry/semantic-conventions-genai ``docs/gen-ai/mcp.md``), the two duration
histograms, the trace context reaching a server built on the official SDK (whose own
OpenTelemetry middleware parents its span on ours), an outer GenAI ``execute_tool`` span
reused, the Host's server names and state changes, the loggers an OpenTelemetry logging
handler reads, and nothing of ``opentelemetry`` imported when instrumentation is off.

Everything is exported to ``opentelemetry-sdk``'s in-memory exporters, one provider pair per
test (never the global ones).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, T, run
from conftest import REPO, demo_command, demo_env, free_port, scripted_command, serving
from mcp_proto_io.threads import connect_http, connect_stdio
from opentelemetry import propagate
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from servers.auth_server import AuthServer
from test_auth_bindings import async_redirect, oauth

from mcp_proto import DURATION_BUCKETS, RequestTimeout, RpcError, ServerExited

SDK_OTEL_SERVER = Path(__file__).parent / "servers" / "sdk_otel_server.py"

#: The attributes the conventions' CLIENT span table has, and this library's own
#: (``mcp_proto.*``, documented in docs/api.md).  Every attribute of every span must be one.
CLIENT_ATTRIBUTES = frozenset({
    "mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name",
    "jsonrpc.request.id", "mcp.resource.uri", "rpc.response.status_code",
    "gen_ai.operation.name", "jsonrpc.protocol.version", "mcp.protocol.version",
    "mcp.session.id", "network.protocol.name", "network.protocol.version",
    "network.transport", "server.address", "server.port", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result", "mcp_proto.server.name"})
SERVER_ATTRIBUTES = (CLIENT_ATTRIBUTES - {"server.address", "server.port"}) | {
    "client.address", "client.port"}


class Otel:
    """A tracer provider and a meter provider exporting to memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def histogram(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        points: list[Any] = []
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    if metric.name == name:
                        assert metric.unit == "s"
                        points += metric.data.data_points
        return points


@pytest.fixture
def otel() -> Iterator[Otel]:
    o = Otel()
    yield o
    o.tracer_provider.shutdown()
    o.meter_provider.shutdown()


def check_convention(span: ReadableSpan) -> None:
    """One span against the conventions' tables: kind, required and conditional attributes,
    the name, the status exactly when ``error.type`` is set."""
    attrs = dict(span.attributes or {})
    method = attrs["mcp.method.name"]
    allowed = CLIENT_ATTRIBUTES if span.kind == SpanKind.CLIENT else SERVER_ATTRIBUTES
    assert span.kind in (SpanKind.CLIENT, SpanKind.SERVER), span
    assert set(attrs) <= allowed, set(attrs) - allowed
    target = attrs.get("gen_ai.tool.name") or attrs.get("gen_ai.prompt.name")
    assert span.name == (f"{method} {target}" if target else method)
    assert (attrs.get("gen_ai.operation.name") == "execute_tool") == (method == "tools/call")
    if method == "tools/call":
        assert "gen_ai.tool.name" in attrs
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        assert "mcp.resource.uri" in attrs
    assert isinstance(attrs.get("jsonrpc.request.id", ""), str)
    assert (span.status.status_code == StatusCode.ERROR) == ("error.type" in attrs), span
    if "rpc.response.status_code" in attrs:
        assert attrs["error.type"] == attrs["rpc.response.status_code"]
    assert attrs["network.transport"] in ("pipe", "tcp")
    if attrs["network.transport"] == "tcp" and span.kind == SpanKind.CLIENT:
        assert attrs["server.address"] and isinstance(attrs["server.port"], int)


def spans_by_name(otel: Otel) -> dict[str, ReadableSpan]:
    return {s.name: s for s in otel.spans()}


# -- every method against server-everything ---------------------------------------------------

STATIC = "demo://resource/static/document/features.md"


async def every_method(b: Binding, c: Any) -> None:
    await c.list_tools()
    await c.call_tool("echo", {"message": "hi"})
    await c.list_resources()
    await c.list_resource_templates()
    await c.read_resource(STATIC)
    await c.list_prompts()
    await c.get_prompt("simple-prompt")
    with pytest.raises(RpcError):
        await c.get_prompt("args-prompt")  # missing its required argument: -32602
    await c.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "E")
    await c.set_logging_level("error")
    await c.subscribe(STATIC)
    await c.unsubscribe(STATIC)
    await c.ping()


EXPECTED = {"initialize", "tools/list", "tools/call echo", "resources/list",
            "resources/templates/list", "resources/read", "prompts/list",
            "prompts/get simple-prompt", "prompts/get args-prompt", "completion/complete",
            "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "ping"}


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_every_method_of_server_everything_is_a_conventional_span(
        binding: str, transport: str, request: pytest.FixtureRequest, otel: Otel) -> None:
    if transport == "stdio":
        target: Any = request.getfixturevalue("everything_command")
    else:
        target = request.getfixturevalue("everything_url")

    async def scenario(b: Binding) -> None:
        opener = b.connect_stdio if transport == "stdio" else b.connect_http
        async with opener(target, timeout=T, **otel.kwargs) as c:
            await every_method(b, c)

    run(binding, scenario)
    spans = otel.spans()
    names = {s.name for s in spans}
    assert names >= EXPECTED, EXPECTED - names
    for span in spans:
        check_convention(span)
        assert span.attributes["mcp.protocol.version"] == "2025-11-25"  # type: ignore[index]
    bad = otel.one("prompts/get args-prompt")
    assert bad.attributes["error.type"] == "-32602"  # type: ignore[index]
    assert bad.status.description  # the JSON-RPC message
    read = otel.one("resources/read")
    assert read.attributes["mcp.resource.uri"] == STATIC  # type: ignore[index]
    call = otel.one("tools/call echo")
    assert call.attributes["gen_ai.tool.name"] == "echo"  # type: ignore[index]
    if transport == "http":
        assert call.attributes["server.address"] == "127.0.0.1"  # type: ignore[index]
        assert len(call.attributes["mcp.session.id"]) == 32  # type: ignore[arg-type,index]
    else:
        assert call.attributes["network.transport"] == "pipe"  # type: ignore[index]
    # one root each: nothing of ours is parented on another of ours
    assert all(s.parent is None for s in spans)
    points = otel.histogram("mcp.client.operation.duration")
    methods = {p.attributes["mcp.method.name"] for p in points}
    assert {"tools/call", "prompts/get", "resources/read", "initialize"} <= methods
    assert all(list(p.explicit_bounds) == list(DURATION_BUCKETS) for p in points)
    assert not any("mcp.resource.uri" in p.attributes or "jsonrpc.request.id" in p.attributes
                   for p in points)  # low cardinality
    [session] = otel.histogram("mcp.client.session.duration")
    assert session.count == 1 and "error.type" not in session.attributes


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_sampling_request_is_a_server_span_inside_the_tool_call(
        binding: str, everything_command: list[str], otel: Otel) -> None:
    def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"},
                "model": "m", "stopReason": "endTurn"}

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T, on_sampling=sample,
                                   **otel.kwargs) as c:
            await c.call_tool("trigger-sampling-request", {"prompt": "p"})

    run(binding, scenario)
    call = otel.one("tools/call trigger-sampling-request")
    asked = otel.one("sampling/createMessage")
    check_convention(asked)
    assert asked.kind == SpanKind.SERVER
    assert asked.parent is not None and asked.parent.span_id == call.context.span_id
    assert asked.context.trace_id == call.context.trace_id
    assert otel.histogram("mcp.server.operation.duration")


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_a_timeout_and_a_cancellation(binding: str, everything_command: list[str],
                                      otel: Otel) -> None:
    """A call out of time is ``timeout``; a cancelled one ``cancelled`` (the threads
    binding cannot cancel a blocked caller: its abandoned call ends with the connection,
    ``connection_closed``); each with the cancellation sent as an event."""
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T, **otel.kwargs) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("trigger-long-running-operation",
                                  {"duration": 5, "steps": 5}, timeout=0.3)
            async with b.tasks() as tasks:
                job = tasks.spawn(c.call_tool, "trigger-long-running-operation",
                                  {"duration": 5, "steps": 5}, name="slow")
                await b.sleep(0.3)
                job.cancel()
            await c.ping()

    run(binding, scenario)
    slow = otel.named("tools/call trigger-long-running-operation")
    cancelled = "connection_closed" if binding == "threads" else "cancelled"
    assert sorted(s.attributes["error.type"] for s in slow) == sorted([  # type: ignore[index]
        cancelled, "timeout"])
    for span in slow:
        check_convention(span)
        if span.attributes["error.type"] != "connection_closed":  # type: ignore[index]
            assert "mcp_proto.cancel" in [e.name for e in span.events]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_server_that_dies_fails_its_call_as_server_exited(binding: str, otel: Otel) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command("die-mid-call"), timeout=T,
                                   **otel.kwargs) as c:
            with pytest.raises(ServerExited):
                await c.call_tool("echo", {"text": "x"})

    run(binding, scenario)
    [call] = [s for s in otel.spans() if s.name.startswith("tools/call")]
    assert call.attributes["error.type"] == "server_exited"  # type: ignore[index]
    [session] = otel.histogram("mcp.client.session.duration")
    assert session.attributes["error.type"] == "server_exited"


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_401_answered_by_authorization_is_an_event_of_the_one_span(
        binding: str, otel: Otel) -> None:
    """The protected server answers the opening 401; the client authorizes and sends the
    same message again: one opening span, ``mcp_proto.http.authorize`` its event, no error."""
    with AuthServer() as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(async_redirect(b)), timeout=T,
                                      **otel.kwargs) as c:
                await c.call_tool("echo", {"text": "hi"})

        run(binding, scenario)
    spans = otel.spans()
    [opening] = [s for s in spans if s.name in ("initialize", "server/discover")]
    assert [e.name for e in opening.events].count("mcp_proto.http.authorize") == 1
    assert "error.type" not in (opening.attributes or {})
    call = otel.one("tools/call echo")
    check_convention(call)
    assert "error.type" not in (call.attributes or {})
    assert call.attributes["network.transport"] == "tcp"  # type: ignore[index]


# -- the trace context reaches the server ------------------------------------------------------


def server_spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_an_official_sdk_server_parents_its_spans_on_ours(
        binding: str, era: str, sdk_server_command: list[str], tmp_path: Path,
        otel: Otel) -> None:
    """SEP-414: ``traceparent`` in ``params._meta``; the SDK's OpenTelemetry middleware
    (on by default in mcp 2.3) extracts it and makes its SERVER span our span's child."""
    out = tmp_path / "server-spans.jsonl"
    argv = [sys.executable, str(SDK_OTEL_SERVER)]

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(argv, env={"MCP_PROTO_OTEL_SPANS": str(out)}, timeout=T,
                                   protocol_version=era, **otel.kwargs) as c:
            await c.call_tool("echo", {"text": "hi"})
            await c.get_prompt("greet", {"name": "ann"})
            await c.read_resource("demo://a")

    run(binding, scenario)
    ours = {s.context.span_id: s for s in otel.spans()}
    theirs = [s for s in server_spans(out) if s["kind"] == "SERVER"]
    by_name = {s["name"]: s for s in theirs}
    opening = "initialize" if era == "2025-11-25" else "server/discover"
    for name in (opening, "tools/call echo", "prompts/get greet", "resources/read"):
        server = by_name[name]
        parent = ours[int(server["parent_span_id"], 16)]
        assert parent.kind == SpanKind.CLIENT
        assert f"{parent.context.trace_id:032x}" == server["trace_id"]
        assert parent.name == name  # the same operation on both sides
        assert parent.attributes["mcp.protocol.version"] == era  # type: ignore[index]
        check_convention(parent)


@pytest.mark.real_server
def test_context_reaches_an_sdk_server_over_http(tmp_path: Path, otel: Otel) -> None:
    out = tmp_path / "server-spans.jsonl"
    port = free_port()
    with serving([sys.executable, str(SDK_OTEL_SERVER), "--http", str(port)], port,
                 {"MCP_PROTO_OTEL_SPANS": str(out)}) as url, \
            connect_http(url, timeout=T, **otel.kwargs) as c:
        c.call_tool("echo", {"text": "hi"})
    call = otel.one("tools/call echo")
    [server] = [s for s in server_spans(out) if s["name"] == "tools/call echo"]
    assert int(server["parent_span_id"], 16) == call.context.span_id
    assert call.attributes["network.transport"] == "tcp"  # type: ignore[index]
    assert call.attributes["server.port"] == port  # type: ignore[index]


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_an_outer_execute_tool_span_gets_the_attributes_instead_of_a_second_span(
        binding: str, sdk_server_command: list[str], tmp_path: Path, otel: Otel) -> None:
    out = tmp_path / "server-spans.jsonl"
    argv = [sys.executable, str(SDK_OTEL_SERVER)]
    tracer = otel.tracer_provider.get_tracer("framework")

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(argv, env={"MCP_PROTO_OTEL_SPANS": str(out)}, timeout=T,
                                   **otel.kwargs) as c:
            await c.connect()
            with tracer.start_as_current_span("execute_tool echo", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo"}):
                await c.call_tool("echo", {"text": "hi"})
            with tracer.start_as_current_span("execute_tool other", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "other"}):
                await c.call_tool("echo", {"text": "again"})  # another tool: its own span

    run(binding, scenario)
    framework = otel.one("execute_tool echo")
    assert framework.attributes["mcp.method.name"] == "tools/call"  # type: ignore[index]
    assert framework.attributes["jsonrpc.request.id"]  # type: ignore[index]
    [own] = otel.named("tools/call echo")  # only the second call made one
    assert own.parent is not None
    assert own.parent.span_id == otel.one("execute_tool other").context.span_id
    [first, _] = [s for s in server_spans(out) if s["name"] == "tools/call echo"]
    assert int(first["parent_span_id"], 16) == framework.context.span_id


# -- content, the Host, logs, and nothing when off -------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_capture_content_is_opt_in_and_redacted(binding: str, otel: Otel) -> None:
    secret = "sk-test-0123456789"

    async def scenario(b: Binding) -> None:
        env = {**demo_env(), "DEMO_TOKEN": secret}
        async with b.connect_stdio(demo_command(), env=env, timeout=T, capture_content=True,
                                   **otel.kwargs) as c:
            await c.call_tool("add", {"a": 1, "b": 2})
            await c.call_tool("echo", {"text": f"token {secret}"})

    run(binding, scenario)
    add = otel.one("tools/call add")
    assert json.loads(add.attributes["gen_ai.tool.call.arguments"]) == {  # type: ignore[arg-type,index]
        "a": 1, "b": 2}
    assert "3" in add.attributes["gen_ai.tool.call.result"]  # type: ignore[operator,index]
    echo = otel.one("tools/call echo")
    for key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):
        assert secret not in echo.attributes[key]  # type: ignore[operator,index]


def test_capture_content_alone_is_refused() -> None:
    with pytest.raises(TypeError, match="capture_content"):
        connect_stdio(demo_command(), capture_content=True)
    with pytest.raises(TypeError, match="bool or an Instrumentation"):
        connect_stdio(demo_command(), instrument="yes")  # type: ignore[arg-type]


@pytest.mark.real_server
@pytest.mark.parametrize("binding", BINDINGS)
def test_the_host_names_each_server_and_records_its_states(
        binding: str, time_command: list[str], otel: Otel, tmp_path: Path) -> None:
    config = {"mcpServers": {
        "time": {"command": time_command[0], "args": time_command[1:]},
        "demo": {"command": demo_command()[0], "args": demo_command()[1:],
                 "env": demo_env()}}}

    async def scenario(b: Binding) -> None:
        async with b.connect_config(config, timeout=T, start="lazy", **otel.kwargs) as host:
            with otel.tracer_provider.get_tracer("app").start_as_current_span("turn"):
                await host.call_tool("time__get_current_time", {"timezone": "Etc/UTC"})
            await host.call_tool("demo__add", {"a": 1, "b": 2})

    run(binding, scenario)
    time_call = otel.one("tools/call get_current_time")
    assert time_call.attributes["mcp_proto.server.name"] == "time"  # type: ignore[index]
    assert otel.one("tools/call add").attributes["mcp_proto.server.name"] == "demo"  # type: ignore[index]
    states = [(e.attributes["mcp_proto.server.name"], e.attributes["mcp_proto.server.state"])
              for s in otel.spans() for e in s.events if e.name == "mcp_proto.server.state"]
    assert ("time", "starting") in states and ("time", "running") in states
    assert ("demo", "running") in states
    # the lazy start happened inside the app's span: on asyncio the start task inherits it;
    # trio's supervisor and the threads' start thread have none, so the change of state
    # gets a short INTERNAL span of its own
    holder = "turn" if binding == "asyncio" else "mcp_proto.server time"
    assert any(e.attributes["mcp_proto.server.name"] == "time"
               for s in otel.named(holder) for e in s.events)
    points = otel.histogram("mcp.client.operation.duration")
    assert {p.attributes.get("mcp_proto.server.name") for p in points} >= {"time", "demo"}


@pytest.mark.filterwarnings("ignore:`LoggingHandler` in `opentelemetry-sdk` is deprecated")
def test_server_logs_and_stderr_reach_an_opentelemetry_logging_handler(otel: Otel) -> None:
    """Section 4 of the issue: the documented loggers, each record with ``mcp_server``, as
    an OpenTelemetry logging handler sees them (its attributes)."""
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    handler = LoggingHandler(level=logging.DEBUG, logger_provider=provider)
    root = logging.getLogger("mcp_proto_io")
    root.addHandler(handler)
    old = root.level
    root.setLevel(logging.DEBUG)
    try:
        with connect_stdio(scripted_command("log-before-init"), timeout=T,
                           label="noisy") as c:
            c.call_tool("echo", {"text": "x"})
        with connect_stdio(scripted_command("die-mid-call"), timeout=T, label="dying") as c, \
                pytest.raises(ServerExited):
            c.call_tool("echo", {"text": "x"})
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
        provider.shutdown()
    records = [(r.log_record.body, dict(r.log_record.attributes or {}))
               for r in exporter.get_finished_logs()]
    logged = [a for body, a in records if body == "scripted: log before initialize"]
    assert logged and logged[0]["mcp_server"] == "noisy", records
    stderr = [a for body, a in records if body == "dying"]
    assert stderr and stderr[0]["mcp_server"] == "dying", records


def test_nothing_of_opentelemetry_is_imported_when_off() -> None:
    code = (
        "import sys\n"
        "from mcp_proto_io.threads import connect_stdio\n"
        f"with connect_stdio({demo_command()!r}) as c:\n"
        "    c.call_tool('add', {'a': 1, 'b': 2})\n"
        "bad = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not bad, bad\n"
        "assert 'mcp_proto._telemetry' not in sys.modules\n"
        "assert 'mcp_proto_io._otel' not in sys.modules\n"
        "print('clean')\n")
    env = {**os.environ, **demo_env()}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, cwd=REPO, check=False)
    assert done.returncode == 0 and "clean" in done.stdout, done.stderr[-2000:]


def test_without_opentelemetry_instrument_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"
        "from mcp_proto_io.threads import connect_stdio\n"
        "try:\n"
        "    connect_stdio(['x'], instrument=True)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n")
    env = {**os.environ, **demo_env()}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60, cwd=REPO, check=False)
    assert "pip install 'mcp-proto[otel]'" in done.stdout, (done.stdout, done.stderr)


def test_opentelemetry_failing_never_fails_a_call(otel: Otel,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A propagator that raises (a host's own, say): the call goes on, untraced where it
    failed, and the failure is logged on ``mcp_proto_io.telemetry``."""
    class Broken(TextMapPropagator):
        def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
            raise RuntimeError("broken extract")

        def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
            raise RuntimeError("broken inject")

        @property
        def fields(self) -> set[str]:
            return set()

    before = propagate.get_global_textmap()
    propagate.set_global_textmap(Broken())
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_proto_io.telemetry"), \
                connect_stdio(demo_command(), env=demo_env(), timeout=T, **otel.kwargs) as c:
            assert c.call_tool("add", {"a": 1, "b": 2}).text.strip() in ("3", "{\"sum\": 3}")
            c.list_tools()
    finally:
        propagate.set_global_textmap(before)
    assert any("OpenTelemetry failed" in r.getMessage() for r in caplog.records)
