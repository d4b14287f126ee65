"""OpenTelemetry for the clients and the Host: the core's decisions (:mod:`mcp_proto._telemetry`)
carried out with ``opentelemetry-api`` (the ``otel`` extra).

:class:`Instrumentation` is what ``instrument=`` takes (``True`` is one with the global tracer
and meter providers).  Nothing here imports ``opentelemetry`` until a client is made with
instrumentation on: a client without it never loads the package (a test checks).  Each
connection's session gets a :class:`mcp_proto.Telemetry` whose sink is an :class:`OtelSink`:
spans from the tracer (CLIENT for each operation, SERVER for each server request), their
events and status, the three duration histograms from the meter, and the trace context the
configured propagators inject (``traceparent``, ``tracestate``, ``baggage``: into the
request's ``params._meta``).  The Host's server state changes become span events
(:func:`server_event`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_proto import Peer, Redactor, SessionEnd, SpanEnd, SpanEvent, SpanStart, Telemetry

if TYPE_CHECKING:
    from mcp_proto.host import ServerEvent

__all__ = ["INSTRUMENTATION_NAME", "TELEMETRY", "Instrumentation", "OtelSink",
           "instrumentation_of", "server_event"]

#: Where a failure of OpenTelemetry itself is logged (WARNING, with its traceback): a
#: propagator, an SDK or an exporter that raises never fails a call.
TELEMETRY = logging.getLogger("mcp_proto_io.telemetry")

#: The instrumentation scope of every tracer and meter (with the package's version).
INSTRUMENTATION_NAME = "mcp_proto"

#: What ``pip`` installs for instrumentation, named in the error without it.
_EXTRA = "pip install 'mcp-proto[otel]'"


class Instrumentation:
    """What a client (or the Host, for all its servers) records with OpenTelemetry.

    ``tracer_provider`` and ``meter_provider`` default to the global ones (set by the
    application, or the no-op ones); ``capture_content`` adds each tool call's arguments
    and result (``gen_ai.tool.call.arguments`` / ``.result``: JSON, with the client's
    secrets and credential-looking keys redacted first; off by default, they may hold
    personal data); ``resource_target`` puts a resource's URI in its span's name (off: high
    cardinality); ``reuse_tool_spans`` (on) adds the MCP attributes to a GenAI
    ``execute_tool`` span already current (a framework's) instead of starting a second span
    inside it, as the convention asks.  ``attributes`` go on every span (the Host adds
    ``mcp_proto.server.name``).

    Raises ``ImportError`` naming the extra when ``opentelemetry-api`` is not installed."""

    __slots__ = ("_meters", "_tracer", "attributes", "capture_content", "meter_provider",
                 "resource_target", "reuse_tool_spans", "tracer_provider")

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None,
                 capture_content: bool = False, resource_target: bool = False,
                 reuse_tool_spans: bool = True,
                 attributes: Mapping[str, str | bool | int | float] | None = None) -> None:
        try:
            import opentelemetry.trace  # noqa: F401, PLC0415 - only with instrumentation on
        except ImportError as exc:
            raise ImportError(f"instrumentation needs opentelemetry-api: {_EXTRA}") from exc
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.capture_content = bool(capture_content)
        self.resource_target = bool(resource_target)
        self.reuse_tool_spans = bool(reuse_tool_spans)
        self.attributes = dict(attributes or {})
        self._tracer: Any = None
        self._meters: _Meters | None = None

    def __repr__(self) -> str:
        return (f"Instrumentation(capture_content={self.capture_content}, "
                f"resource_target={self.resource_target}, "
                f"reuse_tool_spans={self.reuse_tool_spans}, attributes={self.attributes!r})")

    def with_attributes(self, **attributes: str | bool | int | float) -> Instrumentation:
        """A copy with ``attributes`` added to every span (sharing the tracer and meters)."""
        other = Instrumentation.__new__(Instrumentation)
        for name in Instrumentation.__slots__:
            setattr(other, name, getattr(self, name))
        other.attributes = {**self.attributes, **attributes}
        return other

    def tracer(self) -> Any:
        """The tracer, made on first use."""
        if self._tracer is None:
            from opentelemetry import trace  # noqa: PLC0415 - only with instrumentation on

            self._tracer = trace.get_tracer(INSTRUMENTATION_NAME, _version(),
                                            tracer_provider=self.tracer_provider)
        return self._tracer

    def meters(self) -> _Meters:
        """The three histograms, made on first use."""
        if self._meters is None:
            self._meters = _Meters(self.meter_provider)
        return self._meters

    def telemetry(self, peer: Peer, redactor: Redactor | None = None) -> Telemetry:
        """The core's :class:`~mcp_proto.Telemetry` for one connection's session."""
        return Telemetry(OtelSink(self), peer=peer, capture_content=self.capture_content,
                         redactor=redactor, resource_target=self.resource_target,
                         extra=self.attributes)


def instrumentation_of(instrument: object, tracer_provider: Any = None,
                       meter_provider: Any = None,
                       capture_content: bool = False) -> Instrumentation | None:
    """What a client's ``instrument=`` (with ``tracer_provider=``, ``meter_provider=`` and
    ``capture_content=``) asks for: None when off (nothing imported); a provider given turns
    it on.  Raises ``TypeError`` for an ``instrument`` that is neither a bool nor an
    :class:`Instrumentation`, and ``ImportError`` without ``opentelemetry-api``."""
    if isinstance(instrument, Instrumentation):
        if tracer_provider is not None or meter_provider is not None or capture_content:
            raise TypeError("pass the providers and capture_content in the Instrumentation, "
                            "not beside it")
        return instrument
    if type(instrument) is not bool:
        raise TypeError(f"instrument must be a bool or an Instrumentation, not "
                        f"{type(instrument).__name__}")
    if not (instrument or tracer_provider is not None or meter_provider is not None):
        if capture_content:
            raise TypeError("capture_content=True needs instrument=True (or a provider)")
        return None
    return Instrumentation(tracer_provider=tracer_provider, meter_provider=meter_provider,
                           capture_content=capture_content)


class _Meters:
    """The histograms of the conventions, with their explicit bucket boundaries."""

    __slots__ = ("by_name",)

    def __init__(self, meter_provider: Any) -> None:
        from opentelemetry import metrics  # noqa: PLC0415 - only with instrumentation on

        from mcp_proto import (  # noqa: PLC0415 - the names are the core's
            CLIENT_OPERATION_DURATION,
            CLIENT_SESSION_DURATION,
            DURATION_BUCKETS,
            SERVER_OPERATION_DURATION,
        )

        meter = metrics.get_meter(INSTRUMENTATION_NAME, _version(),
                                  meter_provider=meter_provider)
        described = {
            CLIENT_OPERATION_DURATION: "The duration of the MCP request or notification as "
                                       "observed on the sender from the time it was sent "
                                       "until the response or ack is received.",
            SERVER_OPERATION_DURATION: "MCP request or notification duration as observed on "
                                       "the receiver from the time it was received until "
                                       "the result or ack is sent.",
            CLIENT_SESSION_DURATION: "The duration of the MCP session as observed on the MCP "
                                     "client.",
        }
        self.by_name: dict[str, Any] = {}
        for name, text in described.items():
            try:
                histogram = meter.create_histogram(
                    name, unit="s", description=text,
                    explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS))
            except TypeError:  # an API before the advisory parameter (< 1.23)
                histogram = meter.create_histogram(name, unit="s", description=text)
            self.by_name[name] = histogram


class OtelSink:
    """The :class:`mcp_proto.SpanSink` of one session: each decision as OpenTelemetry calls.
    Runs wherever the session runs (a caller's thread or task for a request's start, the
    reader for its end); the span of a request is started in the caller's context, so it
    is the child of whatever span the caller has current."""

    __slots__ = ("_context", "_inst", "_propagate", "_spans", "_status", "_trace")

    def __init__(self, instrumentation: Instrumentation) -> None:
        from opentelemetry import context, propagate, trace  # noqa: PLC0415 - instrumented only
        from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

        self._inst = instrumentation
        self._spans: dict[object, tuple[Any, bool]] = {}  # key -> (span, reused)
        self._context, self._propagate, self._trace = context, propagate, trace
        self._status: Any = functools.partial(Status, StatusCode.ERROR)

    # Each call is guarded: OpenTelemetry (an SDK, a propagator, an exporter the host
    # configured) failing must never fail a call, lose an event or stop the reader.

    def start(self, span: SpanStart) -> Mapping[str, str] | None:
        try:
            return self._start(span)
        except Exception:
            _failed("starting a span")
            held = self._spans.pop(span.key, None)
            if held is not None and not held[1]:
                with contextlib.suppress(Exception):
                    held[0].end()
            return None

    def event(self, event: SpanEvent) -> None:
        try:
            held = self._spans.get(event.key)
            if held is not None:
                held[0].add_event(event.name, event.attributes)
        except Exception:
            _failed("adding an event")

    def end(self, end: SpanEnd) -> None:
        try:
            self._end(end)
        except Exception:
            _failed("ending a span")

    def session_ended(self, end: SessionEnd) -> None:
        try:
            from mcp_proto import CLIENT_SESSION_DURATION  # noqa: PLC0415 - the core's name

            self._inst.meters().by_name[CLIENT_SESSION_DURATION].record(end.duration,
                                                                        end.attributes)
        except Exception:
            _failed("recording the session's duration")

    def _start(self, span: SpanStart) -> Mapping[str, str] | None:
        context, propagate, trace = self._context, self._propagate, self._trace
        inst = self._inst
        parent = None
        if span.kind == "server":
            if span.carrier:
                parent = propagate.extract(dict(span.carrier))
            else:
                held = None if span.parent is None else self._spans.get(span.parent)
                parent = context.Context() if held is None \
                    else trace.set_span_in_context(held[0])
        elif span.tool_span and inst.reuse_tool_spans:
            current = trace.get_current_span()
            if _is_tool_span(current, span.attributes.get("gen_ai.tool.name")):
                current.set_attributes(span.attributes)
                self._spans[span.key] = (current, True)
                return _inject(propagate, context.get_current())
        kind = trace.SpanKind.SERVER if span.kind == "server" else trace.SpanKind.CLIENT
        otel_span = inst.tracer().start_span(span.name, context=parent, kind=kind,
                                             attributes=span.attributes)
        self._spans[span.key] = (otel_span, False)
        if span.kind == "server":
            return None
        return _inject(propagate, trace.set_span_in_context(otel_span))

    def _end(self, end: SpanEnd) -> None:
        held = self._spans.pop(end.key, None)
        if held is not None:
            otel_span, reused = held
            if end.name is not None and not reused:
                otel_span.update_name(end.name)
            if end.attributes:
                otel_span.set_attributes(end.attributes)
            if end.error_type is not None:
                otel_span.set_status(self._status(end.description))
            if not reused:
                otel_span.end()
        self._inst.meters().by_name[end.metric].record(end.duration, end.metric_attributes)


def server_event(instrumentation: Instrumentation | None, event: ServerEvent) -> None:
    """The Host's server ``event`` (a start, an exit, a restart: any change of state) as an
    event ``mcp_proto.server.state`` of the current span when one is recording (the call
    that started the server, a framework's span), else of a short INTERNAL span of its own
    (``mcp_proto.server {name}``), so that no state change goes unrecorded."""
    if instrumentation is None:
        return
    try:
        _server_event(instrumentation, event)
    except Exception:
        _failed("recording a server's change of state")


def _server_event(instrumentation: Instrumentation, event: ServerEvent) -> None:
    from opentelemetry import context, trace  # noqa: PLC0415 - only with instrumentation on

    attrs: dict[str, str | float] = {"mcp_proto.server.name": event.server,
                                     "mcp_proto.server.state": event.state,
                                     "mcp_proto.server.previous_state": event.previous}
    if event.error:
        attrs["error.type"] = event.error.split(":", 1)[0][:100]
        attrs["mcp_proto.server.error"] = event.error[:500]
    current = trace.get_current_span()
    if current.is_recording():
        current.add_event("mcp_proto.server.state", attrs)
        return
    span = instrumentation.tracer().start_span(f"mcp_proto.server {event.server}",
                                               context=context.Context(),
                                               kind=trace.SpanKind.INTERNAL,
                                               attributes=instrumentation.attributes)
    span.add_event("mcp_proto.server.state", attrs)
    span.end()


def _failed(what: str) -> None:
    """OpenTelemetry raised: logged on :data:`TELEMETRY` (with the traceback), never
    raised; the call goes on."""
    with contextlib.suppress(Exception):
        TELEMETRY.warning("OpenTelemetry failed %s; the call goes on without it", what,
                          exc_info=True)


def _inject(propagate: Any, ctx: Any) -> dict[str, str]:
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    return carrier


def _is_tool_span(span: Any, tool: object) -> bool:
    """Whether ``span`` is a GenAI ``execute_tool`` span open for ``tool`` (the SDK's spans
    show their attributes; the API's no-op spans show none and are never taken)."""
    if not span.is_recording():
        return False
    attrs = getattr(span, "attributes", None)
    if not isinstance(attrs, Mapping) or attrs.get("gen_ai.operation.name") != "execute_tool":
        return False
    if "mcp.method.name" in attrs:  # already ours (one tool span, one MCP call)
        return False
    named = attrs.get("gen_ai.tool.name")
    return named is None or named == tool


def _version() -> str:
    from mcp_proto import __version__  # noqa: PLC0415

    return __version__
