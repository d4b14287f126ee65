"""ClientSession: the sans-IO MCP client, a coordinator of small parts.

The session owns every protocol decision and delegates each concern to a part that owns its
state: :class:`~._outbox.Wire` (request ids, the pending table and its deadlines, the outbox),
:class:`~._era.EraChoice` (probe, fallback, handshake, remembered discovery),
:class:`~._server_requests.ServerRequests` (questions put to the host),
:class:`~._mrtr.InputGathering` (MRTR rounds), :class:`~._listen.Subscriptions` (the listen
stream), :class:`~._cache.ResponseCache` and :class:`~._task_runner.TaskRunner`.  Each pending
request carries the :class:`~._outbox.Answer` its outcome goes to.  The session never reads a
clock and never does I/O: the caller passes ``now`` (seconds on any monotonic clock) and moves
the bytes.

The pump a binding runs (DESIGN section 4)::

    session.receive_data(chunk, now=clock())   # bytes from the server; b"" is not EOF
    write(session.data_to_send())              # flush after every receive and every call
    while (event := session.next_event()) is not None: ...
    deadline = session.next_deadline()         # call handle_timeout(now) once it passes
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._elicitation import ElicitationTracker
from .._errors import (
    ConnectionClosed,
    ConnectionLost,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestCancelled,
    RpcError,
)
from .._events import LOG_LEVELS, Closed, Event, Failed, Ready, RequestHandle
from .._limits import Limits
from .._tasks import TASKS_EXTENSION
from .._types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    Implementation,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
    parse_call_tool_result,
    parse_complete_result,
    parse_get_prompt_result,
    parse_prompt,
    parse_read_resource_result,
    parse_resource,
    parse_resource_template,
    parse_tool,
)
from .._versions import ALL_VERSIONS, BATCH_VERSIONS
from ..wire._jsonrpc import RequestId
from ._cache import ResponseCache
from ._era import EraChoice, check_mode
from ._inbox import Inbox
from ._listen import Subscriptions
from ._modern import Discovered, request_meta
from ._mrtr import InputGathering
from ._operations import no_result, raw_result
from ._outbox import SessionStats, Wire
from ._receiver import TaskReceiver, TaskStore, receiver_capabilities
from ._results import Operations, TaskOperations
from ._server_requests import INTERNAL_ERROR, MAX_HANDLER_MESSAGE, ServerRequests
from ._skill_ops import SkillOperations
from ._state import CLOSED, Input, State, transition
from ._task_runner import TaskRunner

if TYPE_CHECKING:
    from .._telemetry import Telemetry

__all__ = ["ClientSession", "SessionStats"]

_LOG_LEVELS = frozenset(LOG_LEVELS)




class ClientSession(SkillOperations, TaskOperations):
    """An MCP client session over a byte stream (stdio), in either era.

    ``client_info`` is sent with the handshake (legacy) or with every request (modern, unless
    ``send_client_info`` is False).  ``capabilities`` is the wire object of the client's
    capabilities (see :func:`client_capabilities`): only requests for declared capabilities
    reach the host as :class:`ServerRequest`; the core answers the rest.  ``versions`` are the
    protocol versions accepted, newest first, from both eras (:data:`ALL_VERSIONS` by default).

    Start with :meth:`start`, which picks the era (section 2.3), or :meth:`initialize` for the
    handshake era only.  Raises ``ValueError`` for an empty or unknown version list.

    ``accept_tasks`` (2026-07-28) declares the tasks extension on every request, so the
    server may answer a tool call with a task; the session then polls it and the call ends
    with the task's outcome as if it had been plain (section 9).

    ``task_receiver`` (2025-11-25): the client runs the server's task-augmented sampling and
    elicitation requests as tasks kept in this :class:`TaskStore` (declared in the
    capabilities as ``tasks.requests``), and answers the server's ``tasks/*`` about them; the
    host answers the work as any :class:`ServerRequest`.
    """

    def __init__(
        self,
        client_info: Implementation,
        *,
        capabilities: dict[str, Any] | None = None,
        versions: Sequence[str] = ALL_VERSIONS,
        limits: Limits | None = None,
        send_client_info: bool = True,
        accept_tasks: bool = True,
        task_receiver: TaskStore | None = None,
    ) -> None:
        versions = tuple(versions)
        if not versions:
            raise ValueError("versions must name at least one protocol version")
        unknown = [v for v in versions if v not in ALL_VERSIONS]
        if unknown:
            raise ValueError(f"unknown protocol versions {unknown}; known: {ALL_VERSIONS}")
        self.send_client_info = send_client_info
        self.client_info = client_info
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        if task_receiver is not None:
            self.capabilities = receiver_capabilities(self.capabilities)
        self._versions = versions
        self.state = State.IDLE
        self.protocol_version: str | None = None
        self.server_info: Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.closed_error: MCPError | None = None
        self.check_mcp_headers = False
        """Leave tools with an invalid ``x-mcp-header`` out of lists (T-06; set by the HTTP
        transport, where those annotations matter)."""
        self.era: str | None = None
        """``"modern"`` or ``"legacy"`` once Ready."""
        self.discovered: Discovered | None = None
        """The DiscoverResult of a modern session (a binding may reuse it, see :meth:`start`)."""
        self.accept_tasks = accept_tasks
        """2026: declare the tasks extension, so the server may run tool calls as tasks."""
        self._log_level: str | None = None
        # The parts, each owning its state; all send through the wire.
        wire = self._wire = Wire(limits or Limits())
        self._era = EraChoice(self, wire, versions)
        self._asks = ServerRequests(wire)
        self._inputs = InputGathering(wire, self._asks)
        self._subs = Subscriptions(wire)
        self._cache = ResponseCache()
        self._tasks = TaskRunner(self, wire, self._asks)
        self._op = Operations(self, wire, self._era, self._cache, self._inputs, self._tasks)
        self._receiver = None if task_receiver is None else \
            TaskReceiver(wire, self._asks, task_receiver)
        self._elicitations = ElicitationTracker()
        self._inbox = Inbox(self, wire, self._era, self._asks, self._subs, self._cache,
                            self._tasks, self._receiver, self._elicitations)

    # -- pump -------------------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        """Bytes to write to the server's stdin now (possibly empty).  Call after every
        operation *and* after every :meth:`receive_data`: receiving can create output (a ping
        answer, an error for an unknown request)."""
        return self._wire.data_to_send()

    def messages_to_send(self) -> list[tuple[dict[str, Any], bytes]]:
        """For a message-oriented transport (HTTP): each message to send, as its wire object
        (to derive headers from) and its encoded bytes (the body).  Use this *or*
        :meth:`data_to_send`, not both."""
        return self._wire.messages_to_send()

    def receive_message(self, obj: object, *, now: float) -> None:
        """Take one parsed JSON value from a message-oriented transport (an HTTP body or an
        SSE event's data): a JSON-RPC object or a batch.  Never raises for what the server
        sent; like :meth:`receive_data`."""
        if self.state is State.CLOSED:
            return
        self._wire.now = now
        if type(obj) is dict:
            self._inbox.on_object(obj, now)
        elif type(obj) is list:
            self._inbox.on_batch(obj, now)
        else:
            self._inbox.bad(RemoteProtocolError(f"server sent a JSON value that is not a "
                                                f"message: {obj!r}"[:200]))

    def fail_request(self, request_id: int, error: MCPError, *, now: float) -> bool:
        """The transport lost a request's answer (an HTTP error status with no JSON-RPC body,
        a dropped stream): it fails as if the server had answered with ``error``, with the
        same consequences (a failed probe falls back to ``initialize``, section 2.3).
        Returns False if the request was no longer pending."""
        p = self._wire.pop(request_id)
        if p is None:
            return False
        self._wire.now = now
        p.answer.on_error(p, error)
        return True

    @property
    def latest_now(self) -> float:
        """The latest time any call gave the session (for transports deciding within the
        same step; the session itself never reads a clock)."""
        return self._wire.now

    def reissue(self, request_id: int, *, now: float) -> bool:
        """X-22: the transport lost a request's answer for good (a 2026-07-28 stream dropped;
        it cannot be resumed): send it again, once, with a new id, under the same handle.
        Refused (False) for ``tools/call``, which may have had effects (never replayed), for a
        request already re-sent, and for one no longer pending."""
        wire = self._wire
        p = wire.pending.get(request_id)
        if p is None or p.retried or p.method == "tools/call" or not p.answer.replayable:
            return False
        del wire.pending[request_id]
        wire.now = now
        wire.resend(p, now)
        return True

    def is_pending(self, request_id: int) -> bool:
        """Whether a request still awaits its answer (a transport decides whether to resume
        a dropped stream with it)."""
        return request_id in self._wire.pending

    def postpone(self, request_ids: Iterable[int], until: float) -> None:
        """Keep these requests, and the era probe's fallback, waiting at least until
        ``until``: the transport holds them for a reason that is not the server's silence
        (authorization in progress, perhaps waiting on a person).  Their deadlines move, never
        closer; requests no longer pending are skipped."""
        self._era.postpone(until)
        self._wire.postpone(request_ids, until)

    def next_event(self) -> Event | None:
        """The next event, or ``None`` when there are none left."""
        wire = self._wire
        events = wire.events
        if not events:
            return None
        event = events.popleft()
        if wire.tap is not None:
            wire.tap.on_event(event, wire.now)
        return event

    def take_events(self) -> tuple[Event, ...]:
        """Every event queued, in order (``()`` when none): what :meth:`next_event` would give
        one by one until ``None``, in one call (a binding that takes them all under a lock
        and handles them after)."""
        wire = self._wire
        events = wire.events
        if not events:
            return ()
        taken = tuple(events)
        events.clear()
        if wire.tap is not None:
            for event in taken:
                wire.tap.on_event(event, wire.now)
        return taken

    def instrument(self, telemetry: Telemetry | None) -> None:
        """Let ``telemetry`` watch this session (OpenTelemetry by the MCP conventions: see
        :mod:`mcp_proto._telemetry`); None stops it.  Set before the first request: an
        operation already in flight gets no span."""
        self._wire.tap = telemetry

    @property
    def telemetry(self) -> Telemetry | None:
        """What watches this session for OpenTelemetry (:meth:`instrument`), or None."""
        return self._wire.tap

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` must next be called (same clock as ``now``), or None."""
        deadline = self._wire.soonest()
        other = self._era.fallback_at
        if other is not None and (deadline is None or other < deadline):
            deadline = other
        if self._inputs.gathers:
            other = self._inputs.soonest()
            if other is not None and (deadline is None or other < deadline):
                deadline = other
        if self._tasks.timers:
            other = self._tasks.soonest()
            if other is not None and (deadline is None or other < deadline):
                deadline = other
        if self._receiver is not None:
            other = self._receiver.next_deadline()
            if other is not None and (deadline is None or other < deadline):
                deadline = other
        return deadline

    def handle_timeout(self, now: float) -> None:
        """Fail every request whose deadline has passed with :class:`RequestTimeout`, and send
        the server ``notifications/cancelled`` for each (L-09), except for ``initialize``
        (C-02), whose timeout closes the session."""
        self._wire.now = now
        self._era.due(now)
        self._inputs.due(now)
        self._tasks.due(now)
        if self._receiver is not None:
            self._receiver.handle_timeout(now)
        for p in self._wire.expired(now):
            error = p.timeout_error()
            p.answer.on_abandon(p, error, str(error))

    def receive_data(self, data: bytes | bytearray | memoryview, *, now: float) -> None:
        """Take bytes the server wrote.  Complete lines are processed at once; events and
        output are queued.  Never raises for anything the server sent: bad input becomes a
        :class:`BadMessage` event or fails the one request it answered."""
        if self.state is CLOSED:
            return
        self._wire.now = now
        self._inbox.take(data, now)

    def receive_eof(self, error: MCPError | None = None, *, input_unread: bool = False) -> None:
        """The server closed its stdout.  A final unterminated line is still processed, then
        every pending request fails with ``error`` (default :class:`ConnectionClosed`; a
        binding that knows the exit code passes :class:`ServerExited`).

        ``input_unread``: the binding knows the server exited without reading what it was
        sent (the bytes are still in its stdin pipe).  Such a server crashed by itself, so
        :attr:`probe_killed_server` stays False: the exit is the answer (V-23 restarts only a
        server that read the probe)."""
        if self.state is State.CLOSED:
            return
        self._era.input_unread = input_unread
        self._inbox.reader.feed_eof()
        self._inbox.drain(None)
        self.connection_lost(error or ConnectionLost("the server closed its output"))

    def connection_lost(self, error: MCPError) -> None:
        """The transport ended (for example :class:`ServerExited`).  Every pending request
        fails with ``error`` and :class:`Closed` is emitted.  Idempotent."""
        self._shutdown(error, Input.TRANSPORT_ENDED)

    def close(self) -> None:
        """End the session from the host's side: pending requests fail with
        :class:`ConnectionClosed` and :class:`Closed` (error None) is emitted.  The binding then
        ends the transport.  Idempotent."""
        self._shutdown(None, Input.CLOSE)

    @property
    def pending_count(self) -> int:
        """Requests awaiting a response."""
        return len(self._wire.pending)

    @property
    def limits(self) -> Limits:
        """The bounds this session was created with (fixed for its life)."""
        return self._wire.limits

    @property
    def stats(self) -> SessionStats:
        """What the session dropped, counted (one object for the session's life)."""
        return self._wire.stats

    @property
    def versions(self) -> tuple[str, ...]:
        """The protocol versions accepted, newest first (fixed for the session's life)."""
        return self._versions

    # -- opening ----------------------------------------------------------------------------

    def initialize(self, *, now: float, timeout: float | None = None) -> RequestHandle[Ready]:
        """Start the handshake (L-01): offer the newest accepted version.

        Ends with :class:`Ready` (then ``notifications/initialized`` is queued, L-04) or with
        :class:`Failed` followed by :class:`Closed`: :class:`UnsupportedVersion` for a version
        not accepted (V-03: the binding then shuts the server down), :class:`RpcError`,
        :class:`RemoteProtocolError` for a result without ``serverInfo``, or
        :class:`RequestTimeout`.  Raises :class:`LocalProtocolError` if called twice.
        """
        self._wire.now = now
        return self._era.initialize(now, timeout)

    def start(self, *, now: float, timeout: float | None = None, era: str = "auto",
              discovered: Discovered | None = None,
              subscriptions: Iterable[str] = ()) -> RequestHandle[Ready]:
        """Open the session in whichever era the server speaks (section 2.3) and end with
        :class:`Ready` (its ``era`` says which) or :class:`Failed` + :class:`Closed`.

        ``era="auto"``: probe with ``server/discover``; a DiscoverResult means modern; a
        -32022 is retried once with a mutual version (V-11); any other answer, or none within
        ``Limits.probe_fallback`` seconds, means ``initialize`` is sent as well, and whichever
        succeeds first decides.  Pre-GA error codes count as "other" (V-22).  ``era="legacy"``
        only does the handshake, ``era="modern"`` only discovers.  ``discovered`` (a modern
        server's earlier :attr:`discovered`, remembered by the binding per server) makes the
        session Ready at once with no round trip.

        ``subscriptions`` (a previous session's :attr:`subscriptions`) are renewed once Ready.
        If the transport ends before the probe is answered, :attr:`probe_killed_server` is
        True: some handshake-era servers exit on any request before ``initialize`` (V-23);
        start a new process and call ``start(era="legacy")``.
        """
        check_mode(era)  # before anything changes
        self._subs.renew = frozenset(subscriptions)
        self._wire.now = now
        return self._era.start(now, timeout, era, discovered)

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools of the last complete ``tools/list``, by name."""
        return self._op.tools

    @property
    def subscriptions(self) -> frozenset[str]:
        """The resources subscribed to: pass them to the next session's :meth:`start` after a
        restart, so updates keep coming (SB-04 / H-11: a new server knows none of them)."""
        return frozenset(self._subs.uris)

    @property
    def probe_killed_server(self) -> bool:
        """True when the transport ended while the ``server/discover`` probe was unanswered
        (an ``initialize`` sent alongside it included) and the server may have read it:
        restart the server in the handshake era (V-23).  False when :meth:`receive_eof` was
        told the server read nothing."""
        return self._era.probe_died

    @property
    def era_assumption_failed(self) -> bool:
        """A session started from a remembered DiscoverResult found the server no longer
        speaks the stateless era (V-20): forget what was remembered; the next session probes."""
        return self._era.assumption_failed

    # What era choice asks of the session (the Opener protocol).

    def _handshake_params(self, version: str) -> dict[str, Any]:
        return {"protocolVersion": version, "capabilities": self.capabilities,
                "clientInfo": self.client_info.to_wire()}

    def _modern_meta(self, version: str) -> dict[str, Any]:
        info = self.client_info.to_wire() if self.send_client_info else None
        caps = self.capabilities
        if self.accept_tasks:  # TX-01: per-request declaration of the extension
            extensions = caps.get("extensions")
            caps = {**caps, "extensions": {**(extensions if isinstance(extensions, dict)
                                               else {}), TASKS_EXTENSION: {}}}
        return request_meta(version, caps, info, self._log_level)

    def _opened_legacy(self, handle: RequestHandle[Any], version: str,
                       result: dict[str, Any], server_info: Implementation) -> None:
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        self.protocol_version = version
        self.server_info = server_info
        self.server_capabilities = capabilities if type(capabilities) is dict else {}
        self.instructions = instructions if type(instructions) is str else None
        self._inbox.batches = version in BATCH_VERSIONS
        self.era = "legacy"
        wire = self._wire
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.events.append(Ready(handle=handle, protocol_version=version,
                                 server_info=server_info, capabilities=self.server_capabilities,
                                 instructions=self.instructions, era="legacy"))
        if self._can_subscribe():
            for uri in sorted(self._subs.renew):
                self._subs.uris.add(uri)
                self._op.request("resources/subscribe", {"uri": uri}, wire.now, None, no_result)

    def _opened_modern(self, handle: RequestHandle[Any], version: str,
                       discovered: Discovered) -> None:
        self.era = "modern"
        self.protocol_version = version
        self._rediscovered(discovered)
        self.server_info = discovered.server_info
        # Asked during the probe by a server that then proved modern (M-04: the client must
        # not answer): withdraw it from the host.
        self._asks.withdraw_all("the server speaks 2026-07-28, where it cannot ask")
        self._wire.events.append(Ready(handle=handle, protocol_version=version,
                                       server_info=discovered.server_info,
                                       capabilities=discovered.capabilities,
                                       instructions=discovered.instructions, era="modern"))
        if self._can_subscribe():
            self._subs.uris.update(self._subs.renew)
        self._subs.open(self._wire.now, self.server_capabilities)

    def _rediscovered(self, discovered: Discovered) -> None:
        self.discovered = discovered
        self.server_capabilities = discovered.capabilities
        self.instructions = discovered.instructions

    def _closed_error_for(self, what: str) -> ConnectionClosed:
        """The error for ``what`` on a closed session: plain when the host closed it, else
        :class:`ConnectionLost` with the reason."""
        if self.closed_error is None:
            return ConnectionClosed(f"{what}: the session is closed")
        return ConnectionLost(f"{what}: the session is closed ({self.closed_error})")

    def _fail_opening(self, handle: RequestHandle[Any], error: MCPError) -> None:
        self._wire.events.append(Failed(handle=handle, error=error))
        # The other opening (an initialize sent beside the probe) shares the handle: it has
        # its outcome now, and the shutdown must not give it a second one.
        self._shutdown(error, Input.INIT_FAILED, failed_init=True, failed=handle)

    def _era_lost(self, error: MCPError) -> None:
        self._shutdown(ConnectionLost(
            f"the server no longer speaks {self.protocol_version} as remembered ({error}); "
            "the next connection probes it again"), Input.TRANSPORT_ENDED)

    def _can_subscribe(self) -> bool:
        resources = self.server_capabilities.get("resources")
        return isinstance(resources, dict) and bool(resources.get("subscribe"))

    # -- operations -------------------------------------------------------------------------

    def list_tools(self, *, now: float, timeout: float | None = None) -> RequestHandle[list[Tool]]:
        """All tools, every page (S-01).  Completes with ``list[Tool]``; an empty list without
        asking when the server declared no ``tools`` capability."""
        return self._op.list_all("tools/list", "tools", parse_tool, "tools", now, timeout)

    def list_resources(self, *, now: float,
                       timeout: float | None = None) -> RequestHandle[list[Resource]]:
        """All resources, every page.  Completes with ``list[Resource]``."""
        return self._op.list_all("resources/list", "resources", parse_resource, "resources", now,
                          timeout)

    def list_resource_templates(self, *, now: float, timeout: float | None = None
                                ) -> RequestHandle[list[ResourceTemplate]]:
        """All resource templates, every page.  Completes with ``list[ResourceTemplate]``."""
        return self._op.list_all("resources/templates/list", "resourceTemplates",
                          parse_resource_template, "resources", now, timeout)

    def list_prompts(self, *, now: float,
                     timeout: float | None = None) -> RequestHandle[list[Prompt]]:
        """All prompts, every page.  Completes with ``list[Prompt]``."""
        return self._op.list_all("prompts/list", "prompts", parse_prompt, "prompts", now, timeout)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, now: float,
                  timeout: float | None = None, idle_timeout: float | None = None,
                  progress: bool = True, meta: dict[str, Any] | None = None,
                  task: bool | None = None,
                  task_ttl: float | None = None) -> RequestHandle[CallToolResult]:
        """Call a tool (T-02).  Completes with a ``CallToolResult`` (``is_error`` True is a
        normal result, T-03).  With ``progress`` a progress token is sent and
        :class:`Progress` events arrive; each one resets the idle deadline (L-09).
        ``timeout`` is the total deadline and ``idle_timeout`` the longest silence (defaults:
        ``Limits.request_timeout`` and ``Limits.idle_timeout``), in seconds.

        Tasks (section 9): in 2025-11-25 the call runs as a task when the server declared
        ``tasks.requests.tools.call`` and the tool's ``execution.taskSupport`` (known from
        the last :meth:`list_tools`) is ``required``, or ``optional`` and ``task`` is True
        (never when ``forbidden``); ``task_ttl`` (seconds) asks the server to keep it that
        long.  In 2026-07-28 the server decides (:attr:`accept_tasks`).  Either way the call
        still ends with the ``CallToolResult`` (or the task's error), after
        :class:`TaskStatus` events; the total deadline covers the whole task, and a timeout
        or :meth:`cancel` sends ``tasks/cancel``, not ``notifications/cancelled``.

        Raises :class:`LocalProtocolError` before the handshake or if the server declared no
        ``tools`` capability.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if meta:
            params["_meta"] = dict(meta)
        tasks = self._tasks
        # (tasks.mode, whose answer is None when no tool call of this server is a task)
        mode = None if tasks.caps_read is self.server_capabilities and not tasks.calls_as_tasks \
            and self.era != "modern" else tasks.mode(name, task)
        if mode == "legacy":
            params["task"] = {} if task_ttl is None else {"ttl": max(0, int(task_ttl * 1000))}
        handle = self._op.request("tools/call", params, now, timeout, parse_call_tool_result,
                               capability="tools", progress=progress, idle_timeout=idle_timeout)
        if mode is not None:
            self._wire.pending[handle.id].task_mode = mode
        return handle

    def read_resource(self, uri: str, *, now: float,
                      timeout: float | None = None) -> RequestHandle[ReadResourceResult]:
        """Read a resource (R-02).  Completes with ``ReadResourceResult``; an unknown resource
        fails with :class:`RpcError` (-32602, or -32002 from older servers)."""
        cached = self._op.cached(("resources/read", uri), now)
        if cached is not None:
            return cached
        return self._op.request("resources/read", {"uri": uri}, now, timeout,
                             parse_read_resource_result, capability="resources")

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *, now: float,
                   timeout: float | None = None) -> RequestHandle[GetPromptResult]:
        """Get a prompt (R-11).  Completes with ``GetPromptResult``."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self._op.request("prompts/get", params, now, timeout, parse_get_prompt_result,
                             capability="prompts")

    def complete(self, ref: dict[str, Any], argument_name: str, argument_value: str, *,
                 context_arguments: dict[str, str] | None = None, now: float,
                 timeout: float | None = None) -> RequestHandle[CompleteResult]:
        """Argument completion (R-20).  ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``.  Completes with ``CompleteResult``."""
        params: dict[str, Any] = {"ref": ref,
                                  "argument": {"name": argument_name, "value": argument_value}}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        capability = None if self.protocol_version == "2024-11-05" else "completions"
        return self._op.request("completion/complete", params, now, timeout,
                             parse_complete_result, capability=capability)

    def subscribe(self, uri: str, *, now: float,
                  timeout: float | None = None) -> RequestHandle[None]:
        """Subscribe to updates of a resource (R-03).  Completes with None; updates arrive as
        :class:`ResourceUpdated`.  Raises :class:`LocalProtocolError` if the server did not
        declare ``resources.subscribe``."""
        self._require_subscribe()
        if self.era == "modern":
            return self._resubscribe(uri, True, now, timeout)
        handle = self._op.request("resources/subscribe", {"uri": uri}, now, timeout, no_result)
        self._subs.uris.add(uri)
        return handle

    def unsubscribe(self, uri: str, *, now: float,
                    timeout: float | None = None) -> RequestHandle[None]:
        """Undo :meth:`subscribe`.  Completes with None."""
        self._require_subscribe()
        if self.era == "modern":
            return self._resubscribe(uri, False, now, timeout)
        self._subs.uris.discard(uri)
        return self._op.request("resources/unsubscribe", {"uri": uri}, now, timeout, no_result)

    def set_logging_level(self, level: str, *, now: float,
                          timeout: float | None = None) -> RequestHandle[None]:
        """``logging/setLevel`` (G-10).  Raises ``ValueError`` for a level not in RFC 5424."""
        if level not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {sorted(_LOG_LEVELS)}")
        if self.era == "modern":
            if self.state is State.CLOSED:
                raise self._closed_error_for("cannot set the log level")
            # 2026-07-28 has no logging/setLevel: the level rides on every request (G-11).
            self._log_level = level
            assert self.protocol_version is not None
            self._wire.meta = self._modern_meta(self.protocol_version)
            return self._op.done_now(RequestHandle(self._wire.take_id(), "logging/setLevel"), None)
        return self._op.request("logging/setLevel", {"level": level}, now, timeout, no_result,
                             capability="logging")

    def ping(self, *, now: float, timeout: float | None = None) -> RequestHandle[None]:
        """``ping`` (G-01).  Completes with None.  Allowed during the handshake (L-05)."""
        if self.era == "modern":  # no ping in 2026-07-28: server/discover is the cheap request
            return self._op.request("server/discover", None, now, timeout, no_result)
        return self._op.request("ping", None, now, timeout, no_result)

    def send_request(self, method: str, params: dict[str, Any] | None = None, *, now: float,
                     timeout: float | None = None, idle_timeout: float | None = None,
                     progress: bool = False) -> RequestHandle[dict[str, Any]]:
        """Any other request; completes with the raw result object (a dict)."""
        return self._op.request(method, params, now, timeout, raw_result, progress=progress,
                             idle_timeout=idle_timeout)

    def notify_roots_list_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        if self.state is State.CLOSED:
            raise self._closed_error_for("cannot notify")
        if self.state is not State.READY:
            raise LocalProtocolError("notifications can only be sent once the session is ready")
        if self.era == "modern":
            return  # 2026-07-28: roots are asked for per request, nothing to announce
        self._wire.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})

    def cancel(self, handle: RequestHandle[Any], reason: str | None = None) -> bool:
        """Cancel a pending operation (C-01): it fails with :class:`RequestCancelled` and the
        server gets ``notifications/cancelled``; a late response is dropped (C-03).  Returns
        False if the operation already ended.  ``initialize`` cannot be cancelled (C-02):
        raises :class:`LocalProtocolError`."""
        if handle is self._era.handle:
            raise LocalProtocolError("initialize cannot be cancelled (MCP lifecycle rule); "
                                     "close the session instead")
        if self._tasks.cancel(handle, reason):  # a task: tasks/cancel (TK-05)
            return True
        pending = self._wire.pending
        rid = handle.id
        p = pending.get(rid)
        if p is None or p.handle != handle:
            for rid, p in pending.items():  # noqa: B007 - rare path: a later page, a retry
                if p.handle == handle and p.answer.hosted:  # not an ended task's cancel
                    break
            else:  # waiting for the host's input, or for a listen's acknowledgement
                return self._inputs.cancel(handle, reason) or self._subs.cancel(handle, reason)
        del pending[rid]
        p.answer.on_abandon(p, RequestCancelled(handle.method, reason), reason)
        return True

    # -- answers to the server's requests -------------------------------------------------------

    def respond(self, request_id: RequestId, result: dict[str, Any], *,
                now: float | None = None) -> bool:
        """Answer a :class:`ServerRequest`.  Returns False (and sends nothing) if the server
        withdrew the request or the session ended.  Raises :class:`LocalProtocolError` if
        ``result`` is not JSON (the request stays open: answer again, or with an error)."""
        if self.state is State.CLOSED:
            return False
        if now is not None and now > self._wire.now:
            self._wire.now = now
        if request_id in self._inputs:
            return self._inputs.answer(request_id, result, now)
        if request_id in self._tasks.inputs:
            return self._tasks.input_answer(request_id, result, now)
        receiver = self._receiver
        if receiver is not None and receiver.owns(request_id):
            return receiver.complete(request_id, result, self._wire.now if now is None else now)
        sent = self._asks.answer(request_id, {"jsonrpc": "2.0", "id": request_id,
                                              "result": result})
        self._inbox.url_answered(request_id, result.get("action"))
        return sent

    def respond_error(self, request_id: RequestId, code: int, message: str,
                      data: Any = None) -> bool:
        """Answer a :class:`ServerRequest` with an error (for example -1 when the user refused a
        sampling request).  Returns False if there is nothing to answer; raises
        :class:`LocalProtocolError` if ``data`` is not JSON."""
        if self.state is State.CLOSED:
            return False
        if request_id in self._tasks.inputs:
            return self._tasks.input_refused(request_id, code, message, data)
        if request_id in self._inputs:
            return self._inputs.refused(request_id, code, message, data)
        receiver = self._receiver
        if receiver is not None and receiver.owns(request_id):
            return receiver.fail(request_id, code, message, data, self._wire.now)
        self._inbox.url_answered(request_id, "cancel")
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return self._asks.answer(request_id, {"jsonrpc": "2.0", "id": request_id,
                                              "error": error})

    def respond_with(self, request_id: RequestId, outcome: object, *,
                     now: float | None = None) -> bool:
        """Answer a :class:`ServerRequest` with whatever the host's handler produced: a result
        object is sent as the result; an :class:`RpcError` it raised keeps its code, message and
        data (for example -1, "User rejected"); any other exception, a result that is not an
        object, or one that is not JSON becomes -32603 naming the problem.  Never raises.
        Returns False if there is nothing to answer (withdrawn, or the session ended)."""
        if isinstance(outcome, RpcError):
            try:
                return self.respond_error(request_id, outcome.code, outcome.message,
                                          outcome.data)
            except LocalProtocolError:  # data is not JSON: keep the code, drop the data
                return self.respond_error(request_id, outcome.code, outcome.message)
        if isinstance(outcome, BaseException):
            message = f"client handler failed: {type(outcome).__name__}: {outcome}"
        elif not isinstance(outcome, dict):
            message = f"client handler returned {type(outcome).__name__}, not an object"
        else:
            try:
                return self.respond(request_id, outcome, now=now)
            except LocalProtocolError as exc:
                message = f"client handler returned no JSON: {exc}"
        return self.respond_error(request_id, INTERNAL_ERROR, message[:MAX_HANDLER_MESSAGE])

    # -- internals: sending -----------------------------------------------------------------

    def _require_subscribe(self) -> None:
        if self.state is State.READY and not self._can_subscribe():
            raise LocalProtocolError("the server did not declare resources.subscribe")

    def _resubscribe(self, uri: str, add: bool, now: float,
                     timeout: float | None) -> RequestHandle[Any]:
        if self.state is State.CLOSED:
            raise self._closed_error_for("cannot (un)subscribe")
        handle: RequestHandle[Any] = RequestHandle(
            self._wire.take_id(), "resources/subscribe" if add else "resources/unsubscribe")
        return self._subs.change(handle, uri, add, now, self.server_capabilities)

    def _shutdown(self, error: MCPError | None, how: Input, failed_init: bool = False,
                  failed: RequestHandle[Any] | None = None) -> None:
        """End the session: every hosted pending request fails with ``error`` once (except
        ``failed``, whose outcome was given already), then :class:`Closed`."""
        if self.state is State.CLOSED:
            return
        self._era.ended(how is Input.TRANSPORT_ENDED)
        self.state = transition(self.state, how)
        self.closed_error = error
        fail_with = error if error is not None else ConnectionClosed("the client closed the "
                                                                     "session")
        wire = self._wire
        events = wire.events
        done: set[RequestHandle[Any]] = set() if failed is None else {failed}
        for p in wire.pending.values():
            # Internal requests have no host handle; the probe and the handshake sent beside
            # it share one handle, which fails once.
            if p.answer.hosted and p.handle not in done:
                done.add(p.handle)
                events.append(Failed(handle=p.handle, error=fail_with))
        self._inputs.shutdown(fail_with)
        self._tasks.shutdown(fail_with, done)
        self._subs.shutdown(fail_with)
        if self._receiver is not None:
            self._receiver.session_ended(str(fail_with))
        wire.clear()
        self._asks.clear()
        if failed_init:
            wire.discard_output()
        events.append(Closed(error=error))
