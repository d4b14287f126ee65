"""ClientSession: the sans-IO MCP client (handshake era over a byte stream).

The session owns every protocol decision: the handshake and version check, request ids, the
pending table, timeouts and cancellation, answers to server pings and unknown requests,
pagination and progress.  It never reads a clock and never does I/O: the caller passes ``now``
(seconds on any monotonic clock) and moves the bytes.

The pump a binding runs (DESIGN section 4)::

    session.receive_data(chunk, now=clock())   # bytes from the server; b"" is not EOF
    write(session.data_to_send())              # flush after every receive and every call
    while (event := session.next_event()) is not None: ...
    deadline = session.next_deadline()         # call handle_timeout(now) once it passes
"""

from __future__ import annotations

import heapq
import json
import math
import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from ._auth_errors import AuthorizationError
from ._errors import (
    MODERN_ERROR_CODES,
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    UnsupportedProtocolVersion,
    UnsupportedVersion,
    modern_rpc_error,
)
from ._events import (
    BadMessage,
    Closed,
    Completed,
    Event,
    Failed,
    ListChanged,
    LogMessage,
    OtherNotification,
    Progress,
    Ready,
    RequestHandle,
    ResourceUpdated,
    ServerRequest,
    ServerRequestCancelled,
    SubscriptionEnded,
    TaskStatus,
)
from ._jsonrpc import ErrorResponse, Notification, Request, RequestId, Response, decode, dumps
from ._limits import Limits
from ._modern import (
    CACHEABLE,
    MRTR_METHODS,
    Discovered,
    Gather,
    mcp_header_params,
    parse_discover,
    parse_input_required,
    request_meta,
    subscription_id,
    ttl_seconds,
)
from ._ndjson import NdjsonFramer, Oversize
from ._operations import ListWalk
from ._state import Input, State, allowed_to_send, transition
from ._tasks import (
    MAX_POLL_FAILURES,
    TASKS_EXTENSION,
    Task,
    TaskCancelled,
    TaskNotFound,
    TaskStateError,
    legal_transition,
    parse_task,
    poll_delay,
)
from ._types import (
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
    parse_implementation,
    parse_prompt,
    parse_read_resource_result,
    parse_resource,
    parse_resource_template,
    parse_tool,
)
from ._versions import ALL_VERSIONS, BATCH_VERSIONS, HANDSHAKE_VERSIONS, MODERN_VERSIONS

__all__ = ["ClientSession", "SessionStats"]

# JSON-RPC error codes the client itself sends (section 4.2).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_LOG_LEVELS = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)
# Notifications that belong to a request rather than to a subscription (SB-03).
_REQUEST_SCOPED = frozenset({"notifications/progress", "notifications/message"})

#: Task status notifications (TK-04 / TX-07): used to poll at once, never relied on.
_TASK_STATUS_NOTIFICATIONS = frozenset({"notifications/tasks/status", "notifications/tasks"})

#: Stale task-timer entries tolerated before the heap is rebuilt (each live task has at most
#: two live entries): large enough that a rebuild is rare, small enough to bound memory.
TIMER_SLACK = 256
_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}
# Where an oversize *response* names its id: among its first keys, before ``result`` or
# ``error`` (most servers), or as its last key when ``result``/``error`` comes first (JavaScript
# servers).  Anchored at the ends and requiring a response's shape, so neither an "id" nested in
# the result nor a server request with a colliding id ever matches.  Our ids are integers.
_JSONRPC_KEY = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
_HEAD_ID = re.compile(rb'^\s*\{\s*' + _JSONRPC_KEY + rb'"id"\s*:\s*(-?\d{1,18})\s*,\s*'
                      + _JSONRPC_KEY + rb'"(?:result|error)"\s*:')
_RESPONSE_START = re.compile(rb'^\s*\{\s*' + _JSONRPC_KEY + rb'"(?:result|error)"\s*:')
_TAIL_ID = re.compile(
    rb'"id"\s*:\s*(-?\d{1,18})\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)


def _finite_number(value: object) -> TypeGuard[float]:
    """An int (not a bool) or a finite float: what progress values may be (P-02)."""
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _empty(result: dict[str, Any]) -> None:
    return None


def _raw(result: dict[str, Any]) -> dict[str, Any]:
    return result


@dataclass(slots=True)
class SessionStats:
    """Counters of what the session dropped.  Mutable: read it, don't share it across threads
    without the binding's lock."""

    responses_dropped: int = 0
    """Responses for an id that is unknown, finished, timed out or cancelled (never delivered
    to another request)."""
    progress_dropped: int = 0
    """Progress for an unknown token, or not above the last value."""
    bad_messages: int = 0
    """Lines that were not JSON, not JSON-RPC, or too large."""
    notifications_dropped: int = 0
    """2026-07-28 notifications for a subscription that is not this session's (SB-03)."""


class _Pending:
    """One request awaiting its response."""

    __slots__ = (
        "base_params",
        "deadline",
        "handle",
        "idle_timeout",
        "last_progress",
        "method",
        "params",
        "parse",
        "progress",
        "retried",
        "rid",
        "role",
        "rounds",
        "run",
        "task_mode",
        "total_deadline",
        "total_timeout",
        "walk",
    )

    def __init__(self, handle: RequestHandle[Any], method: str,
                 parse: Callable[[dict[str, Any]], Any], walk: ListWalk | None,
                 progress: bool, idle_timeout: float, total_timeout: float,
                 total_deadline: float, deadline: float) -> None:
        self.handle = handle
        self.method = method
        self.parse = parse
        self.walk = walk
        self.progress = progress
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.total_deadline = total_deadline
        self.deadline = deadline
        self.last_progress: float | None = None
        self.params: dict[str, Any] | None = None  # as sent, without _meta (for retries)
        self.base_params: dict[str, Any] | None = None  # as the caller gave them (MRTR)
        self.role: str | None = None  # "discover", "initialize", "listen" or None
        self.rounds = 0  # MRTR rounds so far (section 7)
        self.retried = False  # a -32022 / invalid-cursor retry was made (at most one)
        self.rid = 0  # its JSON-RPC id
        self.run: _TaskRun | None = None  # role "task": the task this request serves
        self.task_mode: str | None = None  # tools/call: "legacy" (sent with task) / "modern"


class _TaskRun:
    """A call that became a task (section 9): polled until terminal, then its outcome ends
    the call's handle.  The host sees only the handle (and :class:`TaskStatus` events)."""

    __slots__ = ("asked", "done", "fetching", "handle", "idle_timeout", "inputs",
                 "last_progress", "modern", "parse", "poll_at", "poll_failures", "polling",
                 "rids", "task", "task_id", "token", "total_deadline", "total_timeout")

    def __init__(self, handle: RequestHandle[Any], parse: Callable[[dict[str, Any]], Any],
                 modern: bool, total_deadline: float, total_timeout: float,
                 idle_timeout: float) -> None:
        self.handle = handle
        self.parse = parse
        self.modern = modern
        self.total_deadline = total_deadline
        self.total_timeout = total_timeout
        self.idle_timeout = idle_timeout
        self.task: Task | None = None  # as the last poll described it
        self.task_id: str | None = None
        self.token: int | None = None  # the call's progress token, live until terminal
        self.last_progress: float | None = None
        self.poll_at: float | None = None  # next tasks/get; None while one is in flight
        self.polling = False  # a tasks/get is in flight
        self.poll_failures = 0  # polls in a row lost to the transport or a timeout
        self.fetching = False  # 2025-11-25: tasks/result sent
        self.done = False
        self.rids: set[int] = set()  # its requests in flight
        self.asked: set[str] = set()  # 2026: inputRequests keys asked of the host, ever
        self.inputs: dict[str, str] = {}  # 2026: open questions, synthetic id -> key


class ClientSession:
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
    ) -> None:
        versions = tuple(versions)
        if not versions:
            raise ValueError("versions must name at least one protocol version")
        unknown = [v for v in versions if v not in ALL_VERSIONS]
        if unknown:
            raise ValueError(f"unknown protocol versions {unknown}; known: {ALL_VERSIONS}")
        self._modern_versions = tuple(v for v in versions if v in MODERN_VERSIONS)
        self._legacy_versions = tuple(v for v in versions if v in HANDSHAKE_VERSIONS)
        self.send_client_info = send_client_info
        self.client_info = client_info
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        self.versions = versions
        self.limits = limits or Limits()
        self.stats = SessionStats()
        self.state = State.IDLE
        self.protocol_version: str | None = None
        self.server_info: Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.closed_error: MCPError | None = None
        self._framer = NdjsonFramer(self.limits.max_message_size)
        self._out: list[bytes] = []  # encoded message, b"\n", encoded message, b"\n", ...
        self._objects: list[dict[str, Any]] | None = None  # the same messages, for HTTP
        self._events: deque[Event] = deque()
        self._pending: dict[int, _Pending] = {}
        self._timers: list[tuple[float, int]] = []
        self._next_id = 1
        self._init_handle: RequestHandle[Any] | None = None
        self._init_timeout: float | None = None
        self._init_error: MCPError | None = None
        self._resubscribe_at_ready: frozenset[str] = frozenset()
        self._era_mode = "auto"
        self._probe_died = False
        self._probe_sent = False
        self.era_assumption_failed = False
        """A session started from a remembered DiscoverResult found the server no longer
        speaks the stateless era (V-20): forget what was remembered; the next session probes."""
        self._server_requests: dict[RequestId, str] = {}
        self._batches = False
        self.tools: dict[str, Any] = {}
        """The tools of the last complete ``tools/list``, by name."""
        self.check_mcp_headers = False
        """Leave tools with an invalid ``x-mcp-header`` out of lists (T-06; set by the HTTP
        transport, where those annotations matter)."""
        self.era: str | None = None
        """``"modern"`` or ``"legacy"`` once Ready."""
        self.discovered: Discovered | None = None
        """The DiscoverResult of a modern session (a binding may reuse it, see :meth:`start`)."""
        self._now = 0.0  # the latest time a caller gave: a fallback for respond() only
        self._fallback_at: float | None = None  # when to also send initialize while probing
        self._meta: dict[str, Any] = {}  # the _meta of modern requests
        self._log_level: str | None = None
        self._gathers: dict[RequestId, Gather] = {}
        self._cache: dict[tuple[str, str], tuple[float, Any]] = {}
        self._listen_rid: int | None = None
        self._listen_asked: dict[str, Any] = {}
        self._listen_waiters: list[tuple[RequestHandle[Any], str | None]] = []
        self._subscriptions: set[str] = set()
        self._listen_accepted: dict[str, Any] = {}
        self.accept_tasks = accept_tasks
        """2026: declare the tasks extension, so the server may run tool calls as tasks."""
        self._runs: dict[int, _TaskRun] = {}  # by the call's handle id
        self._task_timers: list[tuple[float, int]] = []  # (poll or total deadline, handle id)
        self._run_ids: dict[str, _TaskRun] = {}  # by taskId
        self._task_tokens: dict[int, _TaskRun] = {}  # progress tokens of running tasks
        self._task_inputs: dict[RequestId, _TaskRun] = {}  # 2026 input asked of the host

    # -- pump -------------------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        """Bytes to write to the server's stdin now (possibly empty).  Call after every
        operation *and* after every :meth:`receive_data`: receiving can create output (a ping
        answer, an error for an unknown request)."""
        out = self._out
        if not out:
            return b""
        self._out = []
        return b"".join(out)

    def messages_to_send(self) -> list[tuple[dict[str, Any], bytes]]:
        """For a message-oriented transport (HTTP): each message to send, as its wire object
        (to derive headers from) and its encoded bytes (the body).  Use this *or*
        :meth:`data_to_send`, not both."""
        if self._objects is None:
            self._objects = []  # from now on, keep the objects too
            encoded = self._out[0::2]
            objects: list[dict[str, Any]] = [json.loads(b) for b in encoded]
        else:
            encoded = self._out[0::2]
            objects = self._objects
            self._objects = []
        self._out = []
        return list(zip(objects, encoded, strict=True))

    def receive_message(self, obj: object, *, now: float) -> None:
        """Take one parsed JSON value from a message-oriented transport (an HTTP body or an
        SSE event's data): a JSON-RPC object or a batch.  Never raises for what the server
        sent; like :meth:`receive_data`."""
        if self.state is State.CLOSED:
            return
        self._now = now
        if type(obj) is dict:
            self._on_object(obj, now)
        elif type(obj) is list:
            self._on_batch(obj, now)
        else:
            self._bad(RemoteProtocolError(f"server sent a JSON value that is not a message: "
                                          f"{obj!r}"[:200]))

    def fail_request(self, request_id: int, error: MCPError, *, now: float) -> bool:
        """The transport lost a request's answer (an HTTP error status with no JSON-RPC body,
        a dropped stream): it fails as if the server had answered with ``error``, with the
        same consequences (a failed probe falls back to ``initialize``, section 2.3).
        Returns False if the request was no longer pending."""
        p = self._pending.pop(request_id, None)
        if p is None:
            return False
        self._now = now
        self._fail(p, error)
        return True

    @property
    def latest_now(self) -> float:
        """The latest time any call gave the session (for transports deciding within the
        same step; the session itself never reads a clock)."""
        return self._now

    def reissue(self, request_id: int, *, now: float) -> bool:
        """X-22: the transport lost a request's answer for good (a 2026-07-28 stream dropped;
        it cannot be resumed): send it again, once, with a new id, under the same handle.
        Refused (False) for ``tools/call``, which may have had effects (never replayed), for a
        request already re-sent, and for one no longer pending."""
        p = self._pending.get(request_id)
        if p is None or p.retried or p.method == "tools/call" or p.role is not None:
            return False
        del self._pending[request_id]
        self._now = now
        self._resend(p, now)
        return True

    def _resend(self, p: _Pending, now: float) -> _Pending:
        """Send ``p`` again as it was sent, with a new id, under the same handle and total
        deadline; the copy counts as the one retry it may get."""
        again = self._send_request(self._take_id(), p.handle, p.method, p.params, now,
                                   p.total_timeout, p.parse, p.progress, p.walk,
                                   total_deadline=p.total_deadline,
                                   idle_timeout=p.idle_timeout)
        again.retried = True
        again.rounds = p.rounds
        again.base_params = p.base_params
        again.last_progress = p.last_progress
        again.task_mode = p.task_mode  # the retry may still be answered with a task
        return again

    def is_pending(self, request_id: int) -> bool:
        """Whether a request still awaits its answer (a transport decides whether to resume
        a dropped stream with it)."""
        return request_id in self._pending

    def postpone(self, request_ids: Iterable[int], until: float) -> None:
        """Keep these requests, and the era probe's fallback, waiting at least until
        ``until``: the transport holds them for a reason that is not the server's silence
        (authorization in progress, perhaps waiting on a person).  Their deadlines move, never
        closer; requests no longer pending are skipped."""
        if self._fallback_at is not None and self._fallback_at < until:
            self._fallback_at = until
        for rid in request_ids:
            p = self._pending.get(rid)
            if p is None or p.deadline >= until:
                continue
            p.deadline = until
            p.total_deadline = max(p.total_deadline, until)
            heapq.heappush(self._timers, (until, rid))

    def next_event(self) -> Event | None:
        """The next event, or ``None`` when there are none left."""
        events = self._events
        return events.popleft() if events else None

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` must next be called (same clock as ``now``), or None."""
        timers = self._timers
        pending = self._pending
        fallback = self._fallback_at
        if self._gathers:  # a call waiting for the host's answers keeps its total deadline
            soonest = min(g.deadline for g in self._gathers.values())
            fallback = soonest if fallback is None else min(fallback, soonest)
        if self._task_timers:  # tasks: the next poll, and each task's total deadline
            task_soonest = self._task_soonest()
            if task_soonest is not None:
                fallback = task_soonest if fallback is None else min(fallback, task_soonest)
        while timers:
            deadline, rid = timers[0]
            p = pending.get(rid)
            if p is not None and p.deadline == deadline:
                return deadline if fallback is None or deadline < fallback else fallback
            heapq.heappop(timers)
        return fallback

    def handle_timeout(self, now: float) -> None:
        """Fail every request whose deadline has passed with :class:`RequestTimeout`, and send
        the server ``notifications/cancelled`` for each (L-09), except for ``initialize``
        (C-02), whose timeout closes the session."""
        self._now = now
        if self._fallback_at is not None and self._fallback_at <= now:
            self._fallback_at = None
            if self.state is State.PROBING:
                # No answer to the probe yet: ask in the handshake era too, so a server that
                # silently ignores unknown methods is reached in well under a second.
                self._send_initialize(now, self._init_timeout)
        for gather in {id(g): g for g in self._gathers.values()}.values():
            if gather.deadline <= now:
                p = gather.pending
                self._gather_fail(gather, RequestTimeout(p.method, p.total_timeout, "total"))
        task_timers = self._task_timers
        while task_timers and task_timers[0][0] <= now:
            _at, hid = heapq.heappop(task_timers)
            run = self._runs.get(hid)
            if run is None:
                continue
            if run.total_deadline <= now:
                self._task_end(run, RequestTimeout(run.handle.method, run.total_timeout,
                                                   "total"), cancel=True)
            elif run.poll_at is not None and run.poll_at <= now:
                self._task_poll(run, now)
        timers = self._timers
        pending = self._pending
        while timers and timers[0][0] <= now:
            deadline, rid = heapq.heappop(timers)
            p = pending.get(rid)
            if p is None or p.deadline != deadline:
                continue
            del pending[rid]
            if deadline >= p.total_deadline:
                error = RequestTimeout(p.method, p.total_timeout, "total")
            else:
                error = RequestTimeout(p.method, p.idle_timeout, "idle")
            self._abandon(rid, p, error, reason=str(error))

    def receive_data(self, data: bytes | bytearray | memoryview, *, now: float) -> None:
        """Take bytes the server wrote.  Complete lines are processed at once; events and
        output are queued.  Never raises for anything the server sent: bad input becomes a
        :class:`BadMessage` event or fails the one request it answered."""
        if self.state is State.CLOSED:
            return
        self._now = now
        framer = self._framer
        framer.feed(data)
        self._drain_framer(now)

    def receive_eof(self, error: MCPError | None = None) -> None:
        """The server closed its stdout.  A final unterminated line is still processed, then
        every pending request fails with ``error`` (default :class:`ConnectionClosed`; a
        binding that knows the exit code passes :class:`ServerExited`)."""
        if self.state is State.CLOSED:
            return
        self._framer.feed_eof()
        self._drain_framer(None)
        self.connection_lost(error or ConnectionClosed("the server closed its output"))

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
        return len(self._pending)

    # -- operations -------------------------------------------------------------------------

    def initialize(self, *, now: float, timeout: float | None = None) -> RequestHandle[Ready]:
        """Start the handshake (L-01): offer the newest accepted version.

        Ends with :class:`Ready` (then ``notifications/initialized`` is queued, L-04) or with
        :class:`Failed` followed by :class:`Closed`: :class:`UnsupportedVersion` for a version
        not accepted (V-03: the binding then shuts the server down), :class:`RpcError`,
        :class:`RemoteProtocolError` for a result without ``serverInfo``, or
        :class:`RequestTimeout`.  Raises :class:`LocalProtocolError` if called twice.
        """
        if not self._legacy_versions:
            raise LocalProtocolError("initialize needs a handshake-era version; this session "
                                     f"accepts only {', '.join(self.versions)}")
        self.state = transition(self.state, Input.INITIALIZE)
        rid = self._next_id
        self._next_id = rid + 1
        self._init_handle = RequestHandle(rid, "initialize")
        self._init_timeout = timeout
        self._send_initialize(now, timeout, rid)
        return self._init_handle

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
        if era not in ("auto", "modern", "legacy"):
            raise ValueError(f"era must be 'auto', 'modern' or 'legacy', got {era!r}")
        self._resubscribe_at_ready = frozenset(subscriptions)
        self._era_mode = era
        if era == "legacy" or not self._modern_versions:
            return self.initialize(now=now, timeout=timeout)
        self._now = now
        self.state = transition(self.state, Input.PROBE)
        rid = self._next_id
        self._next_id = rid + 1
        handle = self._init_handle = RequestHandle(rid, "server/discover")
        self._init_timeout = timeout
        if discovered is not None:
            mutual = [v for v in self._modern_versions if v in discovered.supported_versions]
            if mutual:
                self._become_modern(handle, mutual[0], discovered)
                if now >= discovered.expires_at:
                    # S-02: stale.  Refresh it without making anyone wait; if the server no
                    # longer answers it as a modern server, the assumption failed (V-20).
                    refresh = self._send_request(self._take_id(), handle, "server/discover",
                                                 None, now, timeout, _raw, False, None)
                    refresh.role = "refresh"
                return handle
        self._send_discover(rid, handle, self._modern_versions[0], now, timeout)
        if era == "auto" and self._legacy_versions:
            self._fallback_at = now + self.limits.probe_fallback
        return handle

    @property
    def subscriptions(self) -> frozenset[str]:
        """The resources subscribed to: pass them to the next session's :meth:`start` after a
        restart, so updates keep coming (SB-04 / H-11: a new server knows none of them)."""
        return frozenset(self._subscriptions)

    @property
    def probe_killed_server(self) -> bool:
        """True when the transport ended while the ``server/discover`` probe was unanswered
        (an ``initialize`` sent alongside it included): restart the server in the handshake
        era (V-23)."""
        return self._probe_died

    def _send_initialize(self, now: float, timeout: float | None,
                         rid: int | None = None) -> None:
        assert self._init_handle is not None
        if rid is None:
            rid = self._next_id
            self._next_id = rid + 1
        params = {
            "protocolVersion": self._legacy_versions[0],
            "capabilities": self.capabilities,
            "clientInfo": self.client_info.to_wire(),
        }
        p = self._send_request(rid, self._init_handle, "initialize", params, now, timeout,
                               _raw, False, None)
        p.role = "initialize"

    def _send_discover(self, rid: int, handle: RequestHandle[Any], version: str, now: float,
                       timeout: float | None) -> _Pending:
        self._meta = self._modern_meta(version)
        p = self._send_request(rid, handle, "server/discover", None, now, timeout, _raw, False,
                               None, modern=True)
        p.role = "discover"
        self._probe_sent = True
        return p

    def _modern_meta(self, version: str) -> dict[str, Any]:
        info = self.client_info.to_wire() if self.send_client_info else None
        caps = self.capabilities
        if self.accept_tasks:  # TX-01: per-request declaration of the extension
            extensions = caps.get("extensions")
            caps = {**caps, "extensions": {**(extensions if isinstance(extensions, dict)
                                               else {}), TASKS_EXTENSION: {}}}
        return request_meta(version, caps, info, self._log_level)

    def list_tools(self, *, now: float, timeout: float | None = None) -> RequestHandle[list[Tool]]:
        """All tools, every page (S-01).  Completes with ``list[Tool]``; an empty list without
        asking when the server declared no ``tools`` capability."""
        return self._list("tools/list", "tools", parse_tool, "tools", now, timeout)

    def list_resources(self, *, now: float,
                       timeout: float | None = None) -> RequestHandle[list[Resource]]:
        """All resources, every page.  Completes with ``list[Resource]``."""
        return self._list("resources/list", "resources", parse_resource, "resources", now,
                          timeout)

    def list_resource_templates(self, *, now: float, timeout: float | None = None
                                ) -> RequestHandle[list[ResourceTemplate]]:
        """All resource templates, every page.  Completes with ``list[ResourceTemplate]``."""
        return self._list("resources/templates/list", "resourceTemplates",
                          parse_resource_template, "resources", now, timeout)

    def list_prompts(self, *, now: float,
                     timeout: float | None = None) -> RequestHandle[list[Prompt]]:
        """All prompts, every page.  Completes with ``list[Prompt]``."""
        return self._list("prompts/list", "prompts", parse_prompt, "prompts", now, timeout)

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
        mode = self._task_mode(name, task)
        if mode == "legacy":
            params["task"] = {} if task_ttl is None else {"ttl": max(0, int(task_ttl * 1000))}
        handle = self._request("tools/call", params, now, timeout, parse_call_tool_result,
                               capability="tools", progress=progress, idle_timeout=idle_timeout)
        self._pending[handle.id].task_mode = mode
        return handle

    def read_resource(self, uri: str, *, now: float,
                      timeout: float | None = None) -> RequestHandle[ReadResourceResult]:
        """Read a resource (R-02).  Completes with ``ReadResourceResult``; an unknown resource
        fails with :class:`RpcError` (-32602, or -32002 from older servers)."""
        cached = self._cached(("resources/read", uri), now)
        if cached is not None:
            return cached
        return self._request("resources/read", {"uri": uri}, now, timeout,
                             parse_read_resource_result, capability="resources")

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *, now: float,
                   timeout: float | None = None) -> RequestHandle[GetPromptResult]:
        """Get a prompt (R-11).  Completes with ``GetPromptResult``."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self._request("prompts/get", params, now, timeout, parse_get_prompt_result,
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
        return self._request("completion/complete", params, now, timeout,
                             parse_complete_result, capability=capability)

    def subscribe(self, uri: str, *, now: float,
                  timeout: float | None = None) -> RequestHandle[None]:
        """Subscribe to updates of a resource (R-03).  Completes with None; updates arrive as
        :class:`ResourceUpdated`.  Raises :class:`LocalProtocolError` if the server did not
        declare ``resources.subscribe``."""
        self._require_subscribe()
        if self.era == "modern":
            return self._resubscribe(uri, True, now, timeout)
        handle = self._request("resources/subscribe", {"uri": uri}, now, timeout, _empty)
        self._subscriptions.add(uri)
        return handle

    def unsubscribe(self, uri: str, *, now: float,
                    timeout: float | None = None) -> RequestHandle[None]:
        """Undo :meth:`subscribe`.  Completes with None."""
        self._require_subscribe()
        if self.era == "modern":
            return self._resubscribe(uri, False, now, timeout)
        self._subscriptions.discard(uri)
        return self._request("resources/unsubscribe", {"uri": uri}, now, timeout, _empty)

    def set_logging_level(self, level: str, *, now: float,
                          timeout: float | None = None) -> RequestHandle[None]:
        """``logging/setLevel`` (G-10).  Raises ``ValueError`` for a level not in RFC 5424."""
        if level not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {sorted(_LOG_LEVELS)}")
        if self.era == "modern":
            if self.state is State.CLOSED:
                raise ConnectionClosed("cannot set the log level: the session is closed")
            # 2026-07-28 has no logging/setLevel: the level rides on every request (G-11).
            self._log_level = level
            assert self.protocol_version is not None
            self._meta = self._modern_meta(self.protocol_version)
            return self._done_now(RequestHandle(self._take_id(), "logging/setLevel"), None)
        return self._request("logging/setLevel", {"level": level}, now, timeout, _empty,
                             capability="logging")

    def ping(self, *, now: float, timeout: float | None = None) -> RequestHandle[None]:
        """``ping`` (G-01).  Completes with None.  Allowed during the handshake (L-05)."""
        if self.era == "modern":  # no ping in 2026-07-28: server/discover is the cheap request
            return self._request("server/discover", None, now, timeout, _empty)
        return self._request("ping", None, now, timeout, _empty)

    def send_request(self, method: str, params: dict[str, Any] | None = None, *, now: float,
                     timeout: float | None = None, idle_timeout: float | None = None,
                     progress: bool = False) -> RequestHandle[dict[str, Any]]:
        """Any other request; completes with the raw result object (a dict)."""
        return self._request(method, params, now, timeout, _raw, progress=progress,
                             idle_timeout=idle_timeout)

    def notify_roots_list_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        if self.state is State.CLOSED:
            raise ConnectionClosed("cannot notify: the session is closed")
        if self.state is not State.READY:
            raise LocalProtocolError("notifications can only be sent once the session is ready")
        if self.era == "modern":
            return  # 2026-07-28: roots are asked for per request, nothing to announce
        self._send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})

    def cancel(self, handle: RequestHandle[Any], reason: str | None = None) -> bool:
        """Cancel a pending operation (C-01): it fails with :class:`RequestCancelled` and the
        server gets ``notifications/cancelled``; a late response is dropped (C-03).  Returns
        False if the operation already ended.  ``initialize`` cannot be cancelled (C-02):
        raises :class:`LocalProtocolError`."""
        if handle is self._init_handle:
            raise LocalProtocolError("initialize cannot be cancelled (MCP lifecycle rule); "
                                     "close the session instead")
        run = self._runs.get(handle.id)
        if run is not None and run.handle == handle:  # a task: tasks/cancel (TK-05)
            self._task_end(run, RequestCancelled(handle.method, reason), cancel=True)
            return True
        rid = handle.id
        p = self._pending.get(rid)
        if p is None or p.handle != handle:
            for rid, p in self._pending.items():  # noqa: B007 - rare path: a later page
                if p.handle == handle and p.role != "task":  # not an ended task's cancel
                    break
            else:
                for gather in set(self._gathers.values()):
                    if gather.handle == handle:  # waiting for the host: nothing on the wire
                        self._gather_fail(gather, RequestCancelled(handle.method, reason))
                        return True
                for i, (waiting, _uri) in enumerate(self._listen_waiters):
                    if waiting == handle:
                        # Only the wait ends: the listen already asks for the new set, which
                        # the next subscribe()/unsubscribe() corrects if the host wants.
                        del self._listen_waiters[i]
                        self._events.append(Failed(handle=handle,
                                                   error=RequestCancelled(handle.method, reason)))
                        return True
                return False
        del self._pending[rid]
        self._abandon(rid, p, RequestCancelled(handle.method, reason), reason=reason)
        return True

    def respond(self, request_id: RequestId, result: dict[str, Any], *,
                now: float | None = None) -> bool:
        """Answer a :class:`ServerRequest`.  Returns False (and sends nothing) if the server
        withdrew the request or the session ended.  Raises :class:`LocalProtocolError` if
        ``result`` is not JSON (the request stays open: answer again, or with an error)."""
        if request_id in self._gathers and self.state is not State.CLOSED:
            return self._gather_answer(request_id, result, now)
        if request_id in self._task_inputs and self.state is not State.CLOSED:
            return self._task_input_answer(request_id, result, now)
        return self._answer(request_id, {"jsonrpc": "2.0", "id": request_id, "result": result})

    def respond_error(self, request_id: RequestId, code: int, message: str,
                      data: Any = None) -> bool:
        """Answer a :class:`ServerRequest` with an error (for example -1 when the user refused a
        sampling request).  Returns False if there is nothing to answer; raises
        :class:`LocalProtocolError` if ``data`` is not JSON."""
        run = self._task_inputs.pop(request_id, None)
        if run is not None and self.state is not State.CLOSED:
            # A task's input has no error answer either: the task is cancelled, the call fails.
            self._server_requests.pop(request_id, None)
            run.inputs.pop(str(request_id), None)
            self._task_end(run, RpcError(code, message, data, method=f"input for task "
                                         f"{run.task.task_id if run.task else '?'}"), cancel=True)
            return True
        gather = self._gathers.get(request_id)
        if gather is not None and self.state is not State.CLOSED:
            # MRTR has no error answer: the operation that needed the input fails.
            method = self._server_requests.pop(request_id, "input")
            del self._gathers[request_id]  # answered: not withdrawn below
            self._gather_fail(gather, RpcError(code, message, data,
                                               method=f"{method} for {gather.handle.method}"))
            return True
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return self._answer(request_id, {"jsonrpc": "2.0", "id": request_id, "error": error})

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
        return self.respond_error(request_id, INTERNAL_ERROR, message[:500])

    def _answer(self, request_id: RequestId, obj: dict[str, Any]) -> bool:
        method = self._server_requests.get(request_id)
        if method is None or self.state is State.CLOSED:
            return False
        try:
            data = dumps(obj)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"the answer to {method} is not JSON: {exc}; the request "
                                     "is still open") from None
        del self._server_requests[request_id]
        self._out.append(data)
        self._out.append(b"\n")
        if self._objects is not None:
            self._objects.append(obj)
        return True

    # -- internals: sending -----------------------------------------------------------------

    def _send(self, obj: dict[str, Any]) -> None:
        out = self._out
        out.append(dumps(obj))
        out.append(b"\n")
        if self._objects is not None:
            self._objects.append(obj)

    def _send_error(self, request_id: RequestId, code: int, message: str,
                    data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _require_subscribe(self) -> None:
        resources = self.server_capabilities.get("resources")
        if self.state is State.READY and not (isinstance(resources, dict)
                                              and resources.get("subscribe")):
            raise LocalProtocolError("the server did not declare resources.subscribe")

    def _request(self, method: str, params: dict[str, Any] | None, now: float,
                 timeout: float | None, parse: Callable[[dict[str, Any]], Any], *,
                 capability: str | None = None, progress: bool = False,
                 walk: ListWalk | None = None, check: bool = True,
                 idle_timeout: float | None = None) -> RequestHandle[Any]:
        if check:
            state = self.state
            if not allowed_to_send(state, method):
                if state is State.CLOSED:
                    raise ConnectionClosed(f"cannot send {method}: the session is closed"
                                           + (f" ({self.closed_error})" if self.closed_error
                                              else ""))
                raise LocalProtocolError(f"cannot send {method} while the session is "
                                         f"{state.value}; wait for Ready")
            if method == "initialize":
                raise LocalProtocolError("initialize is sent by ClientSession.initialize(), once")
            if capability is not None and capability not in self.server_capabilities:
                raise LocalProtocolError(
                    f"the server did not declare the {capability!r} capability, so {method} "
                    "is not available (L-07)"
                )
        self._now = now
        rid = self._take_id()
        handle: RequestHandle[Any] = RequestHandle(rid, method)
        self._send_request(rid, handle, method, params, now, timeout, parse, progress, walk,
                           idle_timeout=idle_timeout)
        return handle

    def _send_request(self, rid: int, handle: RequestHandle[Any], method: str,
                      params: dict[str, Any] | None, now: float, timeout: float | None,
                      parse: Callable[[dict[str, Any]], Any], progress: bool,
                      walk: ListWalk | None, total_deadline: float | None = None,
                      idle_timeout: float | None = None, modern: bool = False) -> _Pending:
        limits = self.limits
        total = limits.request_timeout if timeout is None else timeout
        if idle_timeout is not None:
            idle = idle_timeout
        elif timeout is not None:
            # An explicit total longer than the default silence means "this may take long":
            # the idle deadline must not cut it short behind the caller's back.
            idle = max(limits.idle_timeout, total)
        else:
            idle = limits.idle_timeout
        if not (total > 0 and idle > 0):
            raise ValueError(f"timeouts must be positive, got {timeout!r} and {idle_timeout!r}")
        if total_deadline is None:
            total_deadline = now + total
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        wire = params
        if progress or modern or self.era == "modern":
            extra: dict[str, Any] = dict(self._meta) if (modern or self.era == "modern") else {}
            if progress:
                extra["progressToken"] = rid
            wire = dict(params) if params else {}
            meta = wire.get("_meta")
            wire["_meta"] = {**meta, **extra} if meta else extra
        if wire is not None:
            msg["params"] = wire
        try:
            data = dumps(msg)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"arguments of {method} are not JSON: {exc}") from None
        deadline = min(now + idle, total_deadline)
        p = self._pending[rid] = _Pending(handle, method, parse, walk, progress, idle, total,
                                          total_deadline, deadline)
        p.rid = rid
        p.params = params
        if deadline != math.inf:
            heapq.heappush(self._timers, (deadline, rid))
        out = self._out
        out.append(data)
        out.append(b"\n")
        if self._objects is not None:
            self._objects.append(msg)
        return p

    def _take_id(self) -> int:
        rid = self._next_id
        self._next_id = rid + 1
        return rid

    def _done_now(self, handle: RequestHandle[Any], value: Any) -> RequestHandle[Any]:
        """An operation that needs no request ends at once."""
        self._events.append(Completed(handle=handle, value=value))
        return handle

    def _cached(self, key: tuple[str, str], now: float) -> RequestHandle[Any] | None:
        """A fresh cached answer (S-02), completed at once, or None."""
        entry = self._cache.get(key)
        if entry is None or self.state is not State.READY:
            return None
        expires, value = entry
        if now >= expires:
            del self._cache[key]
            return None
        return self._done_now(RequestHandle(self._take_id(), key[0]), value)

    def _store(self, key: tuple[str, str], ttl: float, value: Any, now: float | None) -> None:
        if ttl > 0 and now is not None and ttl != math.inf:
            self._cache[key] = (now + ttl, value)

    def _list(self, method: str, key: str, parse: Callable[[object], Any], capability: str,
              now: float, timeout: float | None) -> RequestHandle[Any]:
        if self.state is State.READY and capability not in self.server_capabilities:
            return self._done_now(RequestHandle(self._take_id(), method), [])
        cached = self._cached((method, ""), now)
        if cached is not None:
            return cached
        limits = self.limits
        walk = ListWalk(method, key, parse, max_pages=limits.max_pages,
                        max_items=limits.max_list_items)
        return self._request(method, None, now, timeout, _raw, walk=walk)

    def _abandon(self, rid: int, p: _Pending, error: MCPError, reason: str | None) -> None:
        """A request ends on our side (timeout or cancel): tell the server, fail the handle."""
        if p.role == "refresh":
            self._refresh_failed(error)
            return
        if p.role == "task":  # TK-05: never notifications/cancelled for a task's requests
            self._on_task_failure(p, error)
            return
        if p.role is not None and p.role != "listen":
            self._opening_failed(p, error)  # no cancellation for the handshake (C-02)
            return
        params: dict[str, Any] = {"requestId": rid}
        if reason:
            params["reason"] = reason
        self._send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
        if p.role == "listen":
            self._listen_ended(p, error)  # its subscribers fail; the host never saw its handle
            return
        self._events.append(Failed(handle=p.handle, error=error))

    def _fail(self, p: _Pending, error: MCPError) -> None:
        """A popped request failed because of what the server sent.  A failed opening
        (``initialize`` / the probe) may end the session: there is nothing to talk to."""
        if p.role is not None:
            if p.role == "task":
                self._on_task_failure(p, error)
            elif p.role == "listen":
                self._listen_ended(p, error)
            elif p.role == "refresh":
                self._refresh_failed(error)
            else:
                self._opening_failed(p, error)
            return
        self._events.append(Failed(handle=p.handle, error=error))

    def _on_refresh(self, result: dict[str, Any]) -> None:
        try:
            discovered = parse_discover(result, self._now)
        except RemoteProtocolError as exc:
            self._refresh_failed(exc)
            return
        if self.protocol_version not in discovered.supported_versions:
            self._refresh_failed(UnsupportedVersion(self._modern_versions,
                                                    list(discovered.supported_versions)))
            return
        self.discovered = discovered
        self.server_capabilities = discovered.capabilities
        self.instructions = discovered.instructions

    def _refresh_failed(self, error: MCPError) -> None:
        if isinstance(error, RpcError) and error.code in MODERN_ERROR_CODES:
            return  # a recognised 2026 error: the server is still a modern one
        if isinstance(error, AuthorizationError):
            return  # authorization failed: the calls say so; nothing is known of the era
        self.era_assumption_failed = True
        self._shutdown(ConnectionClosed(
            f"the server no longer speaks {self.protocol_version} as remembered ({error}); "
            "the next connection probes it again"), Input.TRANSPORT_ENDED)

    def _opening_failed(self, p: _Pending, error: MCPError) -> None:
        """The probe or the handshake failed.  Section 2.3 decides what that means."""
        other = self._opening_pending(exclude=p)
        if isinstance(error, AuthorizationError):
            # Authorization failed (denied, refused, misconfigured): the same HTTP layer
            # answers both eras, so this says nothing about the era, and asking again in the
            # other one would only send the user back to the browser.
            self._fallback_at = None
            self._fail_opening(p, error)
            return
        if p.role == "discover":
            self._fallback_at = None
            if isinstance(error, RpcError) and error.code == -32022:
                supported = UnsupportedProtocolVersion(error.code, error.message,
                                                       error.data).supported
                mutual = [v for v in self._modern_versions if v in supported]
                if mutual and not p.retried:  # V-11: retry once with a new id
                    retry = self._send_discover(self._take_id(), p.handle, mutual[0],
                                                self._now, p.total_timeout)
                    retry.retried = True
                    return
                if not any(v in supported for v in self._legacy_versions):
                    self._fail_opening(p, UnsupportedVersion(self.versions, supported))
                    return
            if not self._legacy_versions or self._era_mode == "modern":
                self._fail_opening(p, error)
                return
            # Any other answer (or none) means a handshake-era server (V-22: pre-GA codes too).
            if other is None:
                if self._init_error is not None:  # the handshake already failed too
                    self._fail_opening(p, self._init_error)
                    return
                self._send_initialize(self._now, self._init_timeout)
            if self.state is State.PROBING:
                self.state = transition(self.state, Input.FALLBACK)
            return
        if other is not None:
            self._init_error = error  # the handshake failed, but the probe may still succeed
            return
        self._fail_opening(p, error)

    def _opening_pending(self, exclude: _Pending) -> _Pending | None:
        for q in self._pending.values():
            if q.role in ("discover", "initialize") and q is not exclude:
                return q
        return None

    def _fail_opening(self, p: _Pending, error: MCPError) -> None:
        self._events.append(Failed(handle=p.handle, error=error))
        self._shutdown(error, Input.INIT_FAILED, failed_init=True)

    def _shutdown(self, error: MCPError | None, how: Input, failed_init: bool = False) -> None:
        if self.state is State.CLOSED:
            return
        # V-23: a handshake-era server may exit on the probe; the binding restarts it.
        self._probe_died = (how is Input.TRANSPORT_ENDED and self._probe_sent
                            and self.era is None and bool(self._legacy_versions)
                            and self._era_mode != "modern")
        self.state = transition(self.state, how)
        self.closed_error = error
        fail_with = error if error is not None else ConnectionClosed("the client closed the "
                                                                     "session")
        events = self._events
        self._fallback_at = None
        failed: set[RequestHandle[Any]] = set()
        for p in self._pending.values():
            # Internal requests have no host handle; the probe and the handshake sent beside
            # it share one handle, which fails once.
            if p.role not in ("listen", "refresh", "task") and p.handle not in failed:
                failed.add(p.handle)
                events.append(Failed(handle=p.handle, error=fail_with))
        for gather in {id(g): g for g in self._gathers.values()}.values():
            events.append(Failed(handle=gather.handle, error=fail_with))
        for run in self._runs.values():
            run.done = True
            if run.handle not in failed:
                events.append(Failed(handle=run.handle, error=fail_with))
        self._runs.clear()
        self._task_timers.clear()
        self._run_ids.clear()
        self._task_tokens.clear()
        self._task_inputs.clear()
        for handle, _uri in self._listen_waiters:
            events.append(Failed(handle=handle, error=fail_with))
        self._listen_waiters.clear()
        self._gathers.clear()
        self._pending.clear()
        self._timers.clear()
        self._server_requests.clear()
        if failed_init:
            self._out.clear()
        events.append(Closed(error=error))

    # -- internals: receiving ---------------------------------------------------------------

    def _drain_framer(self, now: float | None) -> None:
        framer = self._framer
        loads = json.loads
        while True:
            line = framer.next_line()
            if line is None:
                return
            if type(line) is Oversize:
                self._on_oversize(line)
                continue
            try:
                # Decode ourselves and drop the bytes before parsing: a 10 MiB message then
                # peaks at two copies (text and result), not three.
                text = line.decode("utf-8")  # type: ignore[union-attr]
                del line
                obj = loads(text)
                del text
            except (ValueError, RecursionError) as exc:
                self._bad(RemoteProtocolError(f"server wrote a line that is not UTF-8 JSON: "
                                              f"{type(exc).__name__}: {exc}"[:300]))
                continue
            if type(obj) is dict:
                self._on_object(obj, now)
            elif type(obj) is list:
                self._on_batch(obj, now)
            else:
                self._bad(RemoteProtocolError(f"server wrote a JSON value that is not a "
                                              f"message: {obj!r}"[:200]))
            if self.state is State.CLOSED:
                return

    def _bad(self, error: MCPError) -> None:
        self.stats.bad_messages += 1
        self._events.append(BadMessage(error=error))

    def _on_oversize(self, record: Oversize) -> None:
        error = MessageTooLarge(record.size, self.limits.max_message_size)
        match = _HEAD_ID.match(record.head)
        if match is None and _RESPONSE_START.match(record.head):
            match = _TAIL_ID.search(record.tail)
        if match is not None:
            rid = int(match.group(1))
            p = self._pending.pop(rid, None)
            if p is not None:
                self.stats.bad_messages += 1
                self._fail(p, error)
                return
        self._bad(error)

    def _on_batch(self, items: list[Any], now: float | None) -> None:
        if not self._batches:
            self._bad(RemoteProtocolError(
                f"server sent a JSON-RPC batch, which protocol version "
                f"{self.protocol_version or self.versions[0]} does not allow (J-05)"))
            return
        if not items:
            self._bad(RemoteProtocolError("server sent an empty JSON-RPC batch"))
            return
        for obj in items:
            if type(obj) is dict:
                self._on_object(obj, now)
            else:
                self._bad(RemoteProtocolError(f"batch member is not an object: {obj!r}"[:200]))
            if self.state is State.CLOSED:
                return

    def _on_object(self, obj: dict[str, Any], now: float | None) -> None:
        # Fast path: a well-formed success response to one of our requests.
        if "method" not in obj:
            result = obj.get("result")
            if type(result) is dict and "error" not in obj and obj.get("jsonrpc") == "2.0":
                rid = obj.get("id")
                if type(rid) is int:
                    p = self._pending.pop(rid, None)
                    if p is None:
                        self.stats.responses_dropped += 1
                        return
                    self._on_result(rid, p, result, now)
                    return
        try:
            message = decode(obj)
        except RemoteProtocolError as exc:
            rid = obj.get("id")
            p = None
            if type(rid) is int and "method" not in obj:
                p = self._pending.pop(rid, None)
            if p is not None:
                # A malformed answer to a known request fails that request only.
                self.stats.bad_messages += 1
                self._fail(p, exc)
            else:
                self._bad(exc)
            return
        if type(message) is Response:
            # Only ids that were never ours get here (string ids, ...).
            self.stats.responses_dropped += 1
        elif type(message) is ErrorResponse:
            self._on_error(message)
        elif type(message) is Notification:
            self._on_notification(message, now)
        else:
            assert type(message) is Request
            self._on_server_request(message)

    def _on_result(self, rid: int, p: _Pending, result: dict[str, Any],
                   now: float | None) -> None:
        role = p.role
        if role is not None:
            if role == "task":
                self._on_task_answer(p, result, now)
            elif role == "initialize":
                self._on_initialize_result(p, result)
            elif role == "discover":
                self._on_discover_result(p, result)
            elif role == "refresh":
                self._on_refresh(result)
            else:
                self._listen_ended(p, None)
            return
        if p.task_mode is not None and self._task_created(p, result, now):
            return
        if self.era == "modern":
            kind = result.get("resultType")
            if kind is not None and kind != "complete":
                if kind == "input_required" and p.method in MRTR_METHODS:
                    self._on_input_required(p, result, now)
                else:  # M-07: an unknown value makes the response invalid
                    self._events.append(Failed(handle=p.handle, error=RemoteProtocolError(
                        f"{p.method} answered with resultType {kind!r}, which is not allowed "
                        "there (M-07)"[:300])))
                return
        walk = p.walk
        try:
            if walk is not None:
                cursor = walk.take_page(result)
                if cursor is not None:
                    self._next_page(p, walk, cursor, now)
                    return
                value: Any = walk.items
                if p.method == "tools/list":
                    value = self._checked_tools(value)
                if self.era == "modern":
                    self._store((p.method, ""), walk.ttl, value, now)
            else:
                value = p.parse(result)
                if self.era == "modern" and p.method in CACHEABLE and p.rounds == 0 \
                        and p.params is not None:
                    # MR-02: an answer after an MRTR round is never cached.
                    self._store((p.method, str(p.params.get("uri", ""))), ttl_seconds(result),
                                value, now)
        except RemoteProtocolError as exc:
            self._fail(p, exc)
            return
        self._events.append(Completed(handle=p.handle, value=value))

    def _checked_tools(self, tools: list[Any]) -> list[Any]:
        """Remember the tools (a transport mirrors their ``x-mcp-header`` arguments); with
        :attr:`check_mcp_headers`, leave out a tool whose annotation is invalid and say so
        (T-06: MUST drop, SHOULD log)."""
        kept = []
        for tool in tools:
            if self.check_mcp_headers:
                try:
                    mcp_header_params(tool.input_schema)
                except ValueError as exc:
                    self._bad(RemoteProtocolError(f"tool {tool.name!r} left out: {exc}"[:300]))
                    continue
            kept.append(tool)
        self.tools = {tool.name: tool for tool in kept}
        return kept

    def _next_page(self, p: _Pending, walk: ListWalk, cursor: str, now: float | None) -> None:
        if now is None:  # final line at EOF: the session is about to close anyway
            self._events.append(Failed(handle=p.handle, error=ConnectionClosed(
                f"{p.method}: the server closed its output mid-list")))
            return
        rid = self._next_id
        self._next_id = rid + 1
        page = self._send_request(rid, p.handle, p.method, {"cursor": cursor}, now,
                                  p.total_timeout, p.parse, False, walk,
                                  total_deadline=p.total_deadline, idle_timeout=p.idle_timeout)
        page.retried = p.retried  # the walk restarts at most once (S-02)

    def _on_initialize_result(self, p: _Pending, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        error: MCPError | None = None
        server_info = None
        if version not in self._legacy_versions:
            error = UnsupportedVersion(self._legacy_versions, version)
        else:
            try:
                if "serverInfo" not in result:
                    raise RemoteProtocolError("initialize result lacks serverInfo (L-03)")
                server_info = parse_implementation(result["serverInfo"])
            except RemoteProtocolError as exc:
                error = exc
        if error is not None or server_info is None:
            assert error is not None
            self._fail(p, error)
            return
        capabilities = result.get("capabilities")
        instructions = result.get("instructions")
        assert isinstance(version, str)
        self.protocol_version = version
        self.server_info = server_info
        self.server_capabilities = capabilities if type(capabilities) is dict else {}
        self.instructions = instructions if type(instructions) is str else None
        self._batches = version in BATCH_VERSIONS
        self.era = "legacy"
        self._end_opening()
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._events.append(Ready(handle=p.handle, protocol_version=version,
                                  server_info=server_info,
                                  capabilities=self.server_capabilities,
                                  instructions=self.instructions, era="legacy"))
        resources = self.server_capabilities.get("resources")
        if isinstance(resources, dict) and resources.get("subscribe"):
            for uri in sorted(self._resubscribe_at_ready):
                self._subscriptions.add(uri)
                self._request("resources/subscribe", {"uri": uri}, self._now, None, _empty)

    def _end_opening(self) -> None:
        """The era is decided: forget the other opening request (its answer will be dropped
        and counted) and become READY."""
        self._fallback_at = None
        for rid in [r for r, q in self._pending.items() if q.role in ("discover", "initialize")]:
            del self._pending[rid]
        self.state = transition(self.state, Input.INIT_OK)

    def _on_discover_result(self, p: _Pending, result: dict[str, Any]) -> None:
        try:
            discovered = parse_discover(result, self._now)
        except RemoteProtocolError as exc:
            self._opening_failed(p, exc)
            return
        mutual = [v for v in self._modern_versions if v in discovered.supported_versions]
        if not mutual:
            self._opening_failed(p, UnsupportedVersion(self._modern_versions,
                                                       list(discovered.supported_versions)))
            return
        self._become_modern(p.handle, mutual[0], discovered)

    def _become_modern(self, handle: RequestHandle[Any], version: str,
                       discovered: Discovered) -> None:
        self.era = "modern"
        self.protocol_version = version
        self.discovered = discovered
        self.server_info = discovered.server_info
        self.server_capabilities = discovered.capabilities
        self.instructions = discovered.instructions
        self._meta = self._modern_meta(version)
        self._end_opening()
        for rid in list(self._server_requests):
            # Asked during the probe by a server that then proved modern (M-04: the client
            # must not answer): withdraw it from the host.
            del self._server_requests[rid]
            self._events.append(ServerRequestCancelled(
                request_id=rid, reason="the server speaks 2026-07-28, where it cannot ask"))
        self._events.append(Ready(handle=handle, protocol_version=version,
                                  server_info=discovered.server_info,
                                  capabilities=discovered.capabilities,
                                  instructions=discovered.instructions, era="modern"))
        resources = self.server_capabilities.get("resources")
        if isinstance(resources, dict) and resources.get("subscribe"):
            self._subscriptions.update(self._resubscribe_at_ready)
        self._open_listen(self._now)

    def _on_error(self, message: ErrorResponse) -> None:
        rid = message.id
        p = self._pending.pop(rid, None) if type(rid) is int else None
        if p is None:
            if rid is None:
                # Not tied to any request (J-03, edge case 5): surface, don't crash.
                self._bad(RpcError(message.code, message.message, message.data))
            else:
                self.stats.responses_dropped += 1
            return
        code = message.code
        if self.era == "modern" or p.role == "discover":
            error = modern_rpc_error(code, message.message, message.data, method=p.method)
            if p.role is None and not p.retried and self._retry_modern(p, error):
                return
        else:
            error = RpcError(code, message.message, message.data, method=p.method)
        if p.walk is not None and p.walk.pages and code == INVALID_PARAMS and not p.retried:
            # S-02: a cursor the server no longer knows: drop the pages, walk again once.
            limits = self.limits
            walk = ListWalk(p.method, p.walk.key, p.walk.parse, max_pages=limits.max_pages,
                            max_items=limits.max_list_items)
            retry = self._send_request(self._take_id(), p.handle, p.method, None, self._now,
                                       p.total_timeout, p.parse, False, walk,
                                       total_deadline=p.total_deadline,
                                       idle_timeout=p.idle_timeout)
            retry.retried = True
            return
        self._fail(p, error)

    def _retry_modern(self, p: _Pending, error: RpcError) -> bool:
        """V-11: a -32022 is retried once, with a new id, in a version both sides speak."""
        if not isinstance(error, UnsupportedProtocolVersion):
            return False
        mutual = [v for v in self._modern_versions if v in error.supported]
        if not mutual:
            return False
        self.protocol_version = mutual[0]
        self._meta = self._modern_meta(mutual[0])
        self._resend(p, self._now)
        return True

    def _on_notification(self, message: Notification, now: float | None) -> None:
        method = message.method
        params = message.params
        if self.era == "modern" and method not in _REQUEST_SCOPED:
            # SB-03: everything else travels on our listen stream, named by its id; another
            # subscription's notification (or a stale one) is not ours.
            sid = subscription_id(params)
            if method == "notifications/cancelled":
                if params.get("requestId") == self._listen_rid and self._listen_rid is not None:
                    p = self._pending.pop(self._listen_rid)
                    self._listen_ended(p, None)  # SB-04: the server tore it down
                return
            if type(sid) is not int or sid != self._listen_rid:
                self.stats.notifications_dropped += 1
                return
            if method == "notifications/subscriptions/acknowledged":
                self._on_acknowledged(params)
                return
        if method == "notifications/progress":
            self._on_progress(params, now)
        elif method == "notifications/message":
            level = params.get("level")
            logger = params.get("logger")
            self._events.append(LogMessage(level=level if type(level) is str else "info",
                                           data=params.get("data"),
                                           logger=logger if type(logger) is str else None))
        elif method in _LIST_CHANGED:
            kind = _LIST_CHANGED[method]
            self._invalidate(kind)
            self._events.append(ListChanged(kind=kind))
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is str:
                self._cache.pop(("resources/read", uri), None)
                self._events.append(ResourceUpdated(uri=uri))
            else:
                self._bad(RemoteProtocolError("resources/updated without a string uri"))
        elif method in _TASK_STATUS_NOTIFICATIONS and self._task_nudged(params, now):
            pass
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            if (type(rid) is int or type(rid) is str) and \
                    self._server_requests.pop(rid, None) is not None:
                reason = params.get("reason")
                self._events.append(ServerRequestCancelled(
                    request_id=rid, reason=reason if type(reason) is str else None))
            # Otherwise an unknown or finished id: ignore (C-03).
        else:
            self._events.append(OtherNotification(method=method, params=params))

    def _invalidate(self, kind: str) -> None:
        """S-02: a list change drops the cached list (and its pages)."""
        methods = {"tools": ("tools/list",), "prompts": ("prompts/list",),
                   "resources": ("resources/list", "resources/templates/list")}[kind]
        for method in methods:
            self._cache.pop((method, ""), None)

    def _on_progress(self, params: dict[str, Any], now: float | None) -> None:
        token = params.get("progressToken")
        progress = params.get("progress")
        p = self._pending.get(token) if type(token) is int else None
        if p is None and type(token) is int and token in self._task_tokens:
            self._task_progress(self._task_tokens[token], params)  # TK: live until terminal
            return
        if p is None or not p.progress or not _finite_number(progress):
            self.stats.progress_dropped += 1
            return
        assert type(token) is int
        if now is not None:
            deadline = min(now + p.idle_timeout, p.total_deadline)
            if deadline != p.deadline:
                p.deadline = deadline
                heapq.heappush(self._timers, (deadline, token))
                self._compact_timers()
        last = p.last_progress
        if last is not None and progress <= last:
            self.stats.progress_dropped += 1
            return
        p.last_progress = progress
        total = params.get("total")
        if not _finite_number(total):
            total = None
        message = params.get("message")
        self._events.append(Progress(
            handle=p.handle, progress=progress, total=total,
            message=message if type(message) is str else None))

    def _compact_timers(self) -> None:
        # Progress pushes a new timer entry and leaves the old one stale; rebuild the heap
        # when stale entries dominate so memory stays proportional to pending requests.
        timers = self._timers
        if len(timers) > 2 * len(self._pending) + 64:
            pending = self._pending
            self._timers = [(d, r) for d, r in timers
                            if (p := pending.get(r)) is not None and p.deadline == d]
            heapq.heapify(self._timers)

    def _refusal(self, method: str, params: dict[str, Any]) -> tuple[int, str] | None:
        """Why the client cannot serve a server request (or an MRTR input request), as a
        JSON-RPC error, or None when the host's handler should see it."""
        caps = self.capabilities
        if method == "sampling/createMessage" and "sampling" in caps:
            sampling = caps["sampling"]
            if ("tools" in params or "toolChoice" in params) and not (
                    isinstance(sampling, dict) and "tools" in sampling):
                return (INVALID_PARAMS, "sampling with tools was requested but the client did "
                        "not declare sampling.tools (F-02)")
            return None
        if method == "elicitation/create" and "elicitation" in caps:
            mode = params.get("mode", "form")
            declared = caps["elicitation"]
            modes = {"form"} if not declared else set(declared) & {"form", "url"}
            if type(mode) is not str or mode not in modes:
                return (INVALID_PARAMS,
                        f"elicitation mode {mode!r} was not declared by the client (F-03)"[:300])
            return None
        if method == "roots/list" and "roots" in caps:
            return None
        return (METHOD_NOT_FOUND, f"method not found: {method}")

    def _on_server_request(self, message: Request) -> None:
        method = message.method
        rid = message.id
        if self.era == "modern":  # M-04: servers send no requests in 2026-07-28
            self._bad(RemoteProtocolError(f"server sent a {method} request, which protocol "
                                          f"version {self.protocol_version} does not allow "
                                          "(M-04); not answered"[:300]))
            return
        if method == "ping":
            self._send({"jsonrpc": "2.0", "id": rid, "result": {}})
            return
        refusal = self._refusal(method, message.params)
        if refusal is not None:
            self._send_error(rid, *refusal)
            return
        if rid in self._server_requests:
            self._send_error(rid, INVALID_PARAMS, f"request id {rid!r} is already in use")
            return
        self._server_requests[rid] = method
        self._events.append(ServerRequest(request_id=rid, method=method,
                                          params=message.params))

    # -- MRTR (section 7) ---------------------------------------------------------------------

    def _on_input_required(self, p: _Pending, result: dict[str, Any],
                           now: float | None) -> None:
        fail: MCPError | None = None
        try:
            requests, state = parse_input_required(result, p.method)
        except RemoteProtocolError as exc:
            fail = exc
        else:
            if p.rounds >= self.limits.max_input_rounds:
                fail = RemoteProtocolError(
                    f"{p.method} still asked for input after {p.rounds} rounds; gave up "
                    "(raise Limits.max_input_rounds to allow more)")
            for key, (method, params) in requests.items():
                refusal = self._refusal(method, params)
                if fail is None and refusal is not None:
                    fail = RemoteProtocolError(f"{p.method} needs {method} input ({key!r}) the "
                                               f"client cannot give: {refusal[1]}"[:300])
        if fail is not None:
            self._events.append(Failed(handle=p.handle, error=fail))
            return
        gather = Gather(p.handle, state, p)
        for key, (method, params) in requests.items():
            sid = f"input-{p.handle.id}-{p.rounds + 1}-{key}"
            gather.keys[sid] = key
            self._gathers[sid] = gather
            self._ask_host(sid, method, params)
        if not requests:  # load shedding: retry at once with the state (section 7)
            self._retry_input(p, gather, now if now is not None else self._now)

    def _ask_host(self, sid: str, method: str, params: dict[str, Any]) -> None:
        """Put an input request (MRTR round or 2026 task) to the host as a ServerRequest
        with a synthetic id; its answer comes back through :meth:`respond`."""
        self._server_requests[sid] = method
        self._events.append(ServerRequest(request_id=sid, method=method, params=params))

    def _retry_input(self, p: _Pending, gather: Gather, now: float) -> None:
        """RETRY: same method and params, a new id, fresh ``_meta``, this round's answers and
        the exact ``requestState`` (MR-01), never one that was not given."""
        base = p.base_params if p.base_params is not None else p.params
        params = dict(base) if base else {}
        if gather.keys:
            params["inputResponses"] = gather.responses
        if gather.request_state is not None:
            params["requestState"] = gather.request_state
        try:
            retry = self._send_request(self._take_id(), p.handle, p.method, params, now,
                                       p.total_timeout, p.parse, p.progress, None,
                                       total_deadline=p.total_deadline,
                                       idle_timeout=p.idle_timeout)
        except LocalProtocolError as exc:  # an answer that is not JSON
            self._events.append(Failed(handle=p.handle, error=exc))
            return
        retry.base_params = base
        retry.rounds = p.rounds + 1
        retry.last_progress = p.last_progress  # Progress never goes backwards for a handle
        retry.task_mode = p.task_mode  # a later round may be answered with a task

    def _gather_answer(self, sid: RequestId, result: dict[str, Any], now: float | None) -> bool:
        gather = self._gathers[sid]
        try:
            dumps(result)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"the answer to {self._server_requests.get(sid)} is not "
                                     f"JSON: {exc}; the request is still open") from None
        del self._gathers[sid]
        self._server_requests.pop(sid, None)
        gather.responses[gather.keys[str(sid)]] = result
        if gather.complete:
            self._retry_input(gather.pending, gather, self._now if now is None else now)
        return True

    def _gather_fail(self, gather: Gather, error: MCPError) -> None:
        """The operation ends while its input is gathered: withdraw the open questions."""
        for sid in gather.keys:
            if self._gathers.pop(sid, None) is not None:
                self._server_requests.pop(sid, None)
                self._events.append(ServerRequestCancelled(request_id=sid,
                                                           reason=str(error)[:200]))
        self._events.append(Failed(handle=gather.handle, error=error))

    # -- tasks (section 9) ---------------------------------------------------------------------

    def _task_mode(self, name: str, task: bool | None) -> str | None:
        """How a ``tools/call`` may become a task: ``"legacy"`` (sent with ``task``, TK-01),
        ``"modern"`` (the server may answer with one, TX-02) or None."""
        if self.era == "modern":
            return "modern" if self.accept_tasks and task is not False else None
        if self.protocol_version is None or self.protocol_version < "2025-11-25":
            return None
        if not self._server_tasks("requests", "tools", "call"):
            return None  # the server cannot run tool calls as tasks
        tool = self.tools.get(name)
        support = tool.task_support if tool is not None else "forbidden"
        if support == "required" or (support == "optional" and task):
            return "legacy"
        return None

    def task_support_unknown(self, name: str) -> bool:
        """Whether :meth:`call_tool` cannot yet tell if ``name`` must run as a task: the
        server runs tool calls as tasks (2025-11-25) but the tool's ``execution.taskSupport``
        is not known (no :meth:`list_tools` has listed it).  A binding lists the tools first,
        so a ``required`` tool is never called plainly (TK-01)."""
        if self.era != "legacy" or self.protocol_version is None \
                or self.protocol_version < "2025-11-25" or name in self.tools:
            return False
        return self._server_tasks("requests", "tools", "call")

    def _server_tasks(self, *path: str) -> bool:
        """Whether the server declared ``capabilities.tasks.<path>`` (2025-11-25, TK-01)."""
        node: object = self.server_capabilities.get("tasks")
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return isinstance(node, dict)

    def _task_created(self, p: _Pending, result: dict[str, Any], now: float | None) -> bool:
        """A ``tools/call`` answer: if it is a task, start polling it (True)."""
        if p.task_mode == "modern":
            if result.get("resultType") != "task":
                return False
            obj: object = result
        elif "task" in result and "content" not in result:  # TK-02: CreateTaskResult
            obj = result["task"]
        else:  # a server that ran it plainly after all: a plain result
            return False
        modern = p.task_mode == "modern"
        try:
            task = parse_task(obj, modern=modern, where=f"{p.method} task")
        except RemoteProtocolError as exc:
            self._events.append(Failed(handle=p.handle, error=exc))
            return True
        if task.task_id in self._run_ids:
            self._events.append(Failed(handle=p.handle, error=TaskStateError(
                f"the server reused the id {task.task_id!r} of a task still running"[:200])))
            return True
        run = _TaskRun(p.handle, p.parse, modern, p.total_deadline, p.total_timeout,
                       p.idle_timeout)
        if p.progress:
            run.token = p.handle.id
            run.last_progress = p.last_progress
            self._task_tokens[run.token] = run
        self._task_track(run)
        self._task_update(run, task, None, self._now if now is None else now)
        return True

    def _task_request(self, run: _TaskRun, method: str, params: dict[str, Any], now: float,
                      timeout: float | None = None) -> None:
        """One of the task's own requests (``tasks/get`` ...), under the call's handle."""
        remaining = run.total_deadline - now
        if timeout is None:
            timeout = min(run.idle_timeout, remaining)
        p = self._send_request(self._take_id(), run.handle, method, params, now,
                               max(timeout, 1e-3), _raw, False, None,
                               total_deadline=run.total_deadline,
                               idle_timeout=max(timeout, 1e-3))
        p.role = "task"
        p.run = run
        run.rids.add(p.rid)

    def _task_track(self, run: _TaskRun) -> None:
        self._runs[run.handle.id] = run
        heapq.heappush(self._task_timers, (run.total_deadline, run.handle.id))

    def _task_schedule(self, run: _TaskRun, at: float) -> None:
        run.poll_at = at
        heapq.heappush(self._task_timers, (at, run.handle.id))

    def _task_soonest(self) -> float | None:
        """The earliest live task deadline (stale heap entries are dropped here)."""
        timers = self._task_timers
        runs = self._runs
        while timers:
            at, hid = timers[0]
            run = runs.get(hid)
            if run is not None and at in (run.poll_at, run.total_deadline):
                return at
            heapq.heappop(timers)
        return None

    def _task_poll(self, run: _TaskRun, now: float) -> None:
        assert run.task_id is not None
        run.poll_at = None
        run.polling = True
        self._task_request(run, "tasks/get", {"taskId": run.task_id}, now)

    def _task_update(self, run: _TaskRun, task: Task, detail: dict[str, Any] | None,
                     now: float) -> None:
        """A poll (or the creation) says the task is now ``task``: check the transition,
        tell the host, and take the next step."""
        old = run.task
        if run.task_id is not None and task.task_id != run.task_id:
            self._task_end(run, TaskStateError(f"tasks/get answered for task {task.task_id!r}, "
                                               f"not {run.task_id!r}"[:200]), cancel=True)
            return
        if not legal_transition(None if old is None else old.status, task.status):
            self._task_end(run, TaskStateError(
                f"task {task.task_id!r} went from {old.status if old else None!r} to "
                f"{task.status!r}, which section 9 does not allow"[:300]), cancel=False)
            return
        run.task = task
        if run.task_id is None:
            run.task_id = task.task_id
            self._run_ids[task.task_id] = run
        if old is None or (old.status, old.status_message) != (task.status,
                                                               task.status_message):
            self._events.append(TaskStatus(handle=run.handle, task=task))
        status = task.status
        if run.modern:
            if status in ("completed", "failed"):
                if detail is None:  # a creation already terminal: its outcome comes by poll
                    self._task_schedule(run, now)
                else:
                    self._task_outcome(run, detail)
                return
            if status == "input_required" and detail is not None:
                self._task_inputs_asked(run, detail, now)
        elif status in ("completed", "failed", "input_required"):
            # TK-04: tasks/result gives the outcome (and, while input is required, carries
            # the server's requests on its stream): ask once.
            if not run.fetching:
                run.fetching = True
                self._task_request(run, "tasks/result", {"taskId": task.task_id}, now,
                                   timeout=run.total_deadline - now)
            if status != "input_required":
                return  # the outcome comes with tasks/result
        if status == "cancelled":
            self._task_end(run, TaskCancelled(task.task_id, task.status_message), cancel=False)
            return
        if not run.polling:  # (a cancel_task answer while a poll is out: that poll goes on)
            self._task_schedule(run, now + poll_delay(task))

    def _task_outcome(self, run: _TaskRun, detail: dict[str, Any]) -> None:
        """2026: a terminal ``tasks/get`` carries the outcome (TX-04): ``result`` when
        completed, ``error`` when failed."""
        task = run.task
        assert task is not None
        result = detail.get("result") if task.status == "completed" else None
        error = detail.get("error") if task.status == "failed" else None
        outcome: Any
        if type(result) is dict:
            try:
                outcome = run.parse(result)
            except RemoteProtocolError as exc:
                outcome = exc
        elif type(error) is dict and type(error.get("code")) is int \
                and type(error.get("message")) is str:
            outcome = modern_rpc_error(error["code"], error["message"], error.get("data"),
                                       method=f"task {task.task_id}")
        else:
            outcome = RemoteProtocolError(f"task {task.task_id!r} ended {task.status!r} "
                                          "without a valid result or error (TX-04)")
        self._task_finish(run)
        if isinstance(outcome, MCPError):
            self._events.append(Failed(handle=run.handle, error=outcome))
        else:
            self._events.append(Completed(handle=run.handle, value=outcome))

    def _on_task_answer(self, p: _Pending, result: dict[str, Any], now: float | None) -> None:
        run = p.run
        assert run is not None
        run.rids.discard(p.rid)
        if run.done:
            return  # tasks/cancel acknowledged, or an answer after the end: nothing to do
        at = self._now if now is None else now
        self._compact_timers()
        if p.method == "tasks/get":
            run.polling = False
            run.poll_failures = 0
            if run.modern and result.get("resultType", "complete") != "complete":
                self._task_end(run, RemoteProtocolError(
                    f"tasks/get answered with resultType {result.get('resultType')!r}"[:200]),
                    cancel=True)
                return
            try:
                task = parse_task(result, modern=run.modern, where="tasks/get")
            except RemoteProtocolError as exc:
                self._task_end(run, exc, cancel=not isinstance(exc, TaskStateError))
                return
            self._task_update(run, task, result, at)
        elif p.method == "tasks/result":
            self._task_finish(run)
            try:
                value = run.parse(result)
            except RemoteProtocolError as exc:
                self._events.append(Failed(handle=run.handle, error=exc))
                return
            self._events.append(Completed(handle=run.handle, value=value))

    def _on_task_failure(self, p: _Pending, error: MCPError) -> None:
        run = p.run
        assert run is not None
        run.rids.discard(p.rid)
        if run.done:
            return
        now = self._now
        lost = isinstance(error, (ConnectionClosed, RequestTimeout)) or (
            isinstance(error, RemoteProtocolError) and not isinstance(error, TaskStateError))
        if p.method == "tasks/get":
            run.polling = False
            if lost and run.poll_failures < MAX_POLL_FAILURES:
                # A poll is safe to repeat: a dropped stream or a silent server costs one
                # interval, not the task (it still runs on the server).
                run.poll_failures += 1
                self._task_schedule(run, now + poll_delay(run.task))
                return
        elif p.method == "tasks/result":
            if isinstance(error, ConnectionClosed):  # its stream dropped: poll, ask again
                run.fetching = False
                if not run.polling:
                    self._task_schedule(run, now + poll_delay(run.task))
                return
            self._task_finish(run)  # TK-04: the task's own JSON-RPC error
            self._events.append(Failed(handle=run.handle, error=error))
            return
        elif p.method == "tasks/update":
            # TX-05: updates are eventually consistent; a refused one is not the task's
            # outcome.  Its keys may be asked again if the task still wants them.
            sent = (p.params or {}).get("inputResponses")
            if isinstance(sent, dict):
                run.asked.difference_update(sent)
            return
        if isinstance(error, RpcError) and error.code == INVALID_PARAMS \
                and p.method == "tasks/get":
            task_id = run.task_id
            error = TaskNotFound(error.code, f"task {task_id!r} is gone (unknown or purged "
                                 f"after its TTL): {error.message}"[:300], error.data,
                                 method="tasks/get")
            self._task_end(run, error, cancel=False)
            return
        # A server the client could not reach has not failed the task: leave it running.
        self._task_end(run, error, cancel=not lost)

    def _task_end(self, run: _TaskRun, error: MCPError, *, cancel: bool) -> None:
        """End a task's call with ``error``; with ``cancel``, tell the server (``tasks/cancel``,
        TK-05 / TX-06) unless the task is already terminal."""
        task = run.task
        self._task_finish(run)
        if cancel and task is not None and not task.terminal \
                and self.state is State.READY and self._can_cancel_tasks():
            p = self._send_request(self._take_id(), run.handle, "tasks/cancel",
                                   {"taskId": task.task_id}, self._now, run.idle_timeout, _raw,
                                   False, None, idle_timeout=run.idle_timeout)
            p.role = "task"
            p.run = run  # done: its answer is dropped
        self._events.append(Failed(handle=run.handle, error=error))

    def _can_cancel_tasks(self) -> bool:
        if self.era == "modern":
            return True
        return self._server_tasks("cancel")

    def _task_finish(self, run: _TaskRun) -> None:
        """Forget a task's call (its outcome is being emitted): requests in flight are
        dropped without a cancellation, open questions withdrawn."""
        run.done = True
        run.poll_at = None
        self._runs.pop(run.handle.id, None)
        if len(self._task_timers) > 2 * len(self._runs) + TIMER_SLACK:  # ended tasks' entries
            runs = self._runs
            self._task_timers = [(at, hid) for at, hid in self._task_timers
                                 if (r := runs.get(hid)) is not None
                                 and at in (r.poll_at, r.total_deadline)]
            heapq.heapify(self._task_timers)
        if run.task_id is not None and self._run_ids.get(run.task_id) is run:
            del self._run_ids[run.task_id]
        if run.token is not None:
            self._task_tokens.pop(run.token, None)
        pending = self._pending
        for rid in run.rids:
            q = pending.get(rid)
            if q is not None and q.run is run:
                del pending[rid]
        run.rids.clear()
        for sid in run.inputs:
            self._task_inputs.pop(sid, None)
            if self._server_requests.pop(sid, None) is not None:
                self._events.append(ServerRequestCancelled(request_id=sid,
                                                           reason="the task ended"))
        run.inputs.clear()

    def _task_inputs_asked(self, run: _TaskRun, detail: dict[str, Any], now: float) -> None:
        """2026 ``input_required``: ask the host each new input (keys deduplicated across
        polls, TX-05); the answers go back with ``tasks/update``."""
        assert run.task is not None
        try:
            requests, _state = parse_input_required(
                {"inputRequests": detail.get("inputRequests"), "requestState": ""},
                f"task {run.task.task_id}")
        except RemoteProtocolError as exc:
            self._task_end(run, exc, cancel=True)
            return
        for key, (method, params) in requests.items():
            if key in run.asked:
                continue
            refusal = self._refusal(method, params)
            if refusal is not None:
                self._task_end(run, RemoteProtocolError(
                    f"task {run.task.task_id!r} needs {method} input ({key!r}) the client "
                    f"cannot give: {refusal[1]}"[:300]), cancel=True)
                return
            run.asked.add(key)
            sid = f"task-{run.handle.id}-{key}"
            run.inputs[sid] = key
            self._task_inputs[sid] = run
            self._ask_host(sid, method, params)

    def _task_input_answer(self, sid: RequestId, result: dict[str, Any],
                           now: float | None) -> bool:
        run = self._task_inputs[sid]
        try:
            dumps(result)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"the answer to {self._server_requests.get(sid)} is not "
                                     f"JSON: {exc}; the request is still open") from None
        del self._task_inputs[sid]
        self._server_requests.pop(sid, None)
        key = run.inputs.pop(str(sid))
        if run.task_id is not None:  # TX-05: partial sets are fine; no answer waits for another
            self._task_request(run, "tasks/update",
                               {"taskId": run.task_id, "inputResponses": {key: result}},
                               self._now if now is None else now)
        return True

    def _task_progress(self, run: _TaskRun, params: dict[str, Any]) -> None:
        progress = params.get("progress")
        last = run.last_progress
        if not _finite_number(progress) or (last is not None and progress <= last):
            self.stats.progress_dropped += 1
            return
        run.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        self._events.append(Progress(handle=run.handle, progress=progress,
                                     total=total if _finite_number(total) else None,
                                     message=message if type(message) is str else None))

    def _task_nudged(self, params: dict[str, Any], now: float | None) -> bool:
        """A status notification for a task we poll: poll now instead of at the interval (it
        is a hint: only polls change what the host sees)."""
        run = self._run_ids.get(params.get("taskId"))  # type: ignore[arg-type]
        if run is None:
            return False
        if run.poll_at is not None and now is not None and now < run.poll_at:
            self._task_schedule(run, now)
        return True

    def _task_operation(self, method: str, params: dict[str, Any], now: float,
                        timeout: float | None, parse: Callable[[dict[str, Any]], Any]
                        ) -> RequestHandle[Any]:
        self._check_tasks(method)
        return self._request(method, params, now, timeout, parse)

    def _check_tasks(self, method: str) -> None:
        if self.era == "legacy" and not self._server_tasks():
            raise LocalProtocolError(f"the server did not declare the 'tasks' capability, so "
                                     f"{method} is not available (TK-05)")
        if self.era == "modern" and not self.accept_tasks:
            raise LocalProtocolError(f"{method} needs the tasks extension: create the session "
                                     "with accept_tasks=True (TX-01)")

    def list_tasks(self, *, now: float, timeout: float | None = None) -> RequestHandle[list[Task]]:
        """Every task of the server (2025-11-25 ``tasks/list``, all pages; TK-05).  Completes
        with ``list[Task]``.  Raises :class:`LocalProtocolError` in 2026-07-28 (the extension
        has no list) or if the server did not declare ``tasks.list``."""
        if self.era == "modern":
            raise LocalProtocolError("the 2026 tasks extension has no tasks/list (TX-01)")
        if self.state is State.READY and not self._server_tasks("list"):
            raise LocalProtocolError("the server did not declare tasks.list (TK-05)")
        limits = self.limits
        walk = ListWalk("tasks/list", "tasks",
                        lambda item: parse_task(item, modern=False, where="tasks/list"),
                        max_pages=limits.max_pages, max_items=limits.max_list_items)
        return self._request("tasks/list", None, now, timeout, _raw, walk=walk)

    def get_task(self, task_id: str, *, now: float,
                 timeout: float | None = None) -> RequestHandle[Task]:
        """One ``tasks/get``: completes with the :class:`Task` as the server describes it
        now; -32602 (unknown or purged) fails with :class:`RpcError`."""
        modern = self.era == "modern"
        return self._task_operation("tasks/get", {"taskId": task_id}, now, timeout,
                                    lambda r: parse_task(r, modern=modern, where="tasks/get"))

    def cancel_task(self, task_id: str, *, now: float,
                    timeout: float | None = None) -> RequestHandle[Task | None]:
        """``tasks/cancel`` (TK-05 / TX-06).  Completes with the final :class:`Task`
        (2025-11-25) or None (2026: an acknowledgement; the task may still end otherwise).
        A call of this session polling that task goes on until the task is terminal.  A
        terminal or unknown task fails with :class:`RpcError` (-32602)."""
        modern = self.era == "modern"

        def parse(result: dict[str, Any]) -> Task | None:
            if modern:
                return None
            task = parse_task(result, modern=False, where="tasks/cancel")
            run = self._run_ids.get(task_id)
            if run is not None and not run.done:
                self._task_update(run, task, result, self._now)
            return task

        return self._task_operation("tasks/cancel", {"taskId": task_id}, now, timeout, parse)

    def resume_task(self, task_id: str, *, now: float,
                    timeout: float | None = None) -> RequestHandle[CallToolResult]:
        """Poll a tool call's task that another session created (TX-09: a task id kept
        across a restart) to its end, as if this session had made the call: completes with
        its ``CallToolResult`` (or fails with its error, :class:`TaskCancelled` or
        :class:`TaskNotFound`), with :class:`TaskStatus` events on the way.  Progress of the
        old request is not seen (its token belonged to the old session).  Raises
        :class:`LocalProtocolError` before Ready or without tasks support."""
        if self.state is not State.READY:
            raise LocalProtocolError("resume_task needs a ready session")
        self._check_tasks("tasks/get")
        if task_id in self._run_ids:
            raise LocalProtocolError(f"task {task_id!r} is already being polled")
        total = self.limits.request_timeout if timeout is None else timeout
        handle: RequestHandle[Any] = RequestHandle(self._take_id(), "tools/call")
        run = _TaskRun(handle, parse_call_tool_result, self.era == "modern", now + total,
                       total, self.limits.idle_timeout)
        run.task_id = task_id
        self._task_track(run)
        self._run_ids[task_id] = run
        self._now = now
        self._task_poll(run, now)
        return handle

    # -- subscriptions (section 8) ------------------------------------------------------------

    def _wanted_notifications(self) -> dict[str, Any]:
        wanted: dict[str, Any] = {}
        for kind, flag in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                           ("resources", "resourcesListChanged")):
            cap = self.server_capabilities.get(kind)
            if isinstance(cap, dict) and cap.get("listChanged"):
                wanted[flag] = True
        if self._subscriptions:
            wanted["resourceSubscriptions"] = sorted(self._subscriptions)
        return wanted

    def _open_listen(self, now: float) -> None:
        """(Re)open the one ``subscriptions/listen`` this session keeps (SB-01): list changes the
        server can announce, plus the resources subscribed to.  The old one is cancelled."""
        old = self._listen_rid
        if old is not None:
            self._listen_rid = None
            if self._pending.pop(old, None) is not None:
                self._send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": old}})
        wanted = self._wanted_notifications()
        if not wanted:
            for handle, _uri in self._listen_waiters:
                self._events.append(Completed(handle=handle, value=None))
            self._listen_waiters.clear()
            return
        rid = self._take_id()
        p = self._send_request(rid, RequestHandle(rid, "subscriptions/listen"),
                               "subscriptions/listen", {"notifications": wanted}, now, None,
                               _empty, False, None)
        p.role = "listen"
        self._listen_rid = rid
        self._listen_asked = wanted

    def _resubscribe(self, uri: str, add: bool, now: float,
                     timeout: float | None) -> RequestHandle[Any]:
        if self.state is State.CLOSED:
            raise ConnectionClosed("cannot (un)subscribe: the session is closed")
        handle: RequestHandle[Any] = RequestHandle(self._take_id(),
                               "resources/subscribe" if add else "resources/unsubscribe")
        if add:
            self._subscriptions.add(uri)
        else:
            self._subscriptions.discard(uri)
        self._listen_waiters.append((handle, uri if add else None))
        self._open_listen(now)
        return handle

    def _on_acknowledged(self, params: dict[str, Any]) -> None:
        """SB-02: the server says which of the asked notifications it will send."""
        p = self._pending.get(self._listen_rid) if self._listen_rid is not None else None
        if p is not None:
            p.deadline = math.inf  # acknowledged: the stream lives until either side ends it
        accepted = params.get("notifications")
        accepted = accepted if type(accepted) is dict else {}
        uris = accepted.get("resourceSubscriptions")
        uris = set(uris) if type(uris) is list and all(type(u) is str for u in uris) else set()
        for handle, uri in self._listen_waiters:
            if uri is not None and uri not in uris:
                self._subscriptions.discard(uri)  # refused: not asked for again
                self._events.append(Failed(handle=handle, error=RemoteProtocolError(
                    f"the server did not accept the subscription to {uri!r} (its "
                    f"acknowledgement: {accepted!r})"[:300])))
            else:
                self._events.append(Completed(handle=handle, value=None))
        self._listen_waiters.clear()
        self._listen_accepted = accepted

    def _listen_ended(self, p: _Pending, error: MCPError | None) -> None:
        """The server ended the listen (a result or an error), or it timed out unacknowledged."""
        rid = p.handle.id
        if rid != self._listen_rid:
            return
        self._listen_rid = None
        for handle, _uri in self._listen_waiters:
            self._events.append(Failed(handle=handle, error=error or RemoteProtocolError(
                "the server ended the subscription stream before acknowledging it")))
        self._listen_waiters.clear()
        self._events.append(SubscriptionEnded(error=error))
