"""``tests/servers/sdk_server.py`` (the official Python SDK) with OpenTelemetry on, for the
telemetry tests: the SDK's own server middleware (``mcp.server._otel``, on by default) makes a
SERVER span per request, parented on the ``traceparent`` in ``params._meta``; this wrapper
installs an ``opentelemetry-sdk`` tracer provider that writes each finished span as one JSON
line (name, kind, trace and span ids, parent span id, attributes) to the file named by
``MCP_PROTO_OTEL_SPANS``, flushed at once.  Same arguments as ``sdk_server.py``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JsonLines(SpanExporter):
    """Each span as one JSON line, appended and flushed (the test reads the file while the
    server runs, and after it is stopped)."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            ctx = span.get_span_context()
            parent = span.parent
            self._file.write(json.dumps({
                "name": span.name, "kind": span.kind.name,
                "trace_id": f"{ctx.trace_id:032x}" if ctx else None,
                "span_id": f"{ctx.span_id:016x}" if ctx else None,
                "parent_span_id": f"{parent.span_id:016x}" if parent else None,
                "attributes": dict(span.attributes or {}),
            }) + "\n")
        self._file.flush()
        return SpanExportResult.SUCCESS


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines(os.environ["MCP_PROTO_OTEL_SPANS"])))
    trace.set_tracer_provider(provider)
    server = Path(__file__).with_name("sdk_server.py")
    sys.argv = [str(server), *sys.argv[1:]]
    runpy.run_path(str(server), run_name="__main__")


if __name__ == "__main__":
    main()
