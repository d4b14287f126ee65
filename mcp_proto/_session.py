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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from ._errors import (
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    UnsupportedVersion,
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
)
from ._jsonrpc import ErrorResponse, Notification, Request, RequestId, Response, decode, dumps
from ._limits import Limits
from ._ndjson import NdjsonFramer, Oversize
from ._operations import ListWalk
from ._state import Input, State, allowed_to_send, transition
from ._types import (
    Implementation,
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
from ._versions import BATCH_VERSIONS, HANDSHAKE_VERSIONS

__all__ = ["ClientSession", "SessionStats"]

# JSON-RPC error codes the client itself sends (section 4.2).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_LOG_LEVELS = frozenset(
    {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
)
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


class _Pending:
    """One request awaiting its response."""

    __slots__ = (
        "deadline",
        "handle",
        "idle_timeout",
        "last_progress",
        "method",
        "parse",
        "progress",
        "total_deadline",
        "total_timeout",
        "walk",
    )

    def __init__(self, handle: RequestHandle, method: str,
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


class ClientSession:
    """An MCP client session over a byte stream (stdio), handshake era.

    ``client_info`` is sent in ``initialize``.  ``capabilities`` is the wire object of the
    client's capabilities (for example ``{"sampling": {}, "elicitation": {"form": {}},
    "roots": {"listChanged": True}}``): only requests for declared capabilities reach the host
    as :class:`ServerRequest`; the rest are answered -32601 by the core.  ``versions`` are the
    protocol versions accepted, newest first; the first is offered.

    Raises ``ValueError`` for an empty or unknown version list.
    """

    def __init__(
        self,
        client_info: Implementation,
        *,
        capabilities: dict[str, Any] | None = None,
        versions: Sequence[str] = HANDSHAKE_VERSIONS,
        limits: Limits | None = None,
    ) -> None:
        versions = tuple(versions)
        if not versions:
            raise ValueError("versions must name at least one protocol version")
        unknown = [v for v in versions if v not in HANDSHAKE_VERSIONS]
        if unknown:
            raise ValueError(f"unknown protocol versions {unknown}; known: {HANDSHAKE_VERSIONS}")
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
        self._out: list[bytes] = []
        self._events: deque[Event] = deque()
        self._pending: dict[int, _Pending] = {}
        self._timers: list[tuple[float, int]] = []
        self._next_id = 1
        self._init_handle: RequestHandle | None = None
        self._server_requests: dict[RequestId, str] = {}
        self._batches = False

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

    def next_event(self) -> Event | None:
        """The next event, or ``None`` when there are none left."""
        events = self._events
        return events.popleft() if events else None

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` must next be called (same clock as ``now``), or None."""
        timers = self._timers
        pending = self._pending
        while timers:
            deadline, rid = timers[0]
            p = pending.get(rid)
            if p is not None and p.deadline == deadline:
                return deadline
            heapq.heappop(timers)
        return None

    def handle_timeout(self, now: float) -> None:
        """Fail every request whose deadline has passed with :class:`RequestTimeout`, and send
        the server ``notifications/cancelled`` for each (L-09), except for ``initialize``
        (C-02), whose timeout closes the session."""
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

    def initialize(self, *, now: float, timeout: float | None = None) -> RequestHandle:
        """Start the handshake (L-01): offer the newest accepted version.

        Ends with :class:`Ready` (then ``notifications/initialized`` is queued, L-04) or with
        :class:`Failed` followed by :class:`Closed`: :class:`UnsupportedVersion` for a version
        not accepted (V-03: the binding then shuts the server down), :class:`RpcError`,
        :class:`RemoteProtocolError` for a result without ``serverInfo``, or
        :class:`RequestTimeout`.  Raises :class:`LocalProtocolError` if called twice.
        """
        self.state = transition(self.state, Input.INITIALIZE)
        params = {
            "protocolVersion": self.versions[0],
            "capabilities": self.capabilities,
            "clientInfo": self.client_info.to_wire(),
        }
        handle = self._request("initialize", params, now, timeout, _raw, check=False)
        self._init_handle = handle
        return handle

    def list_tools(self, *, now: float, timeout: float | None = None) -> RequestHandle:
        """All tools, every page (S-01).  Completes with ``list[Tool]``; an empty list without
        asking when the server declared no ``tools`` capability."""
        return self._list("tools/list", "tools", parse_tool, "tools", now, timeout)

    def list_resources(self, *, now: float, timeout: float | None = None) -> RequestHandle:
        """All resources, every page.  Completes with ``list[Resource]``."""
        return self._list("resources/list", "resources", parse_resource, "resources", now,
                          timeout)

    def list_resource_templates(self, *, now: float,
                                timeout: float | None = None) -> RequestHandle:
        """All resource templates, every page.  Completes with ``list[ResourceTemplate]``."""
        return self._list("resources/templates/list", "resourceTemplates",
                          parse_resource_template, "resources", now, timeout)

    def list_prompts(self, *, now: float, timeout: float | None = None) -> RequestHandle:
        """All prompts, every page.  Completes with ``list[Prompt]``."""
        return self._list("prompts/list", "prompts", parse_prompt, "prompts", now, timeout)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, now: float,
                  timeout: float | None = None, idle_timeout: float | None = None,
                  progress: bool = True, meta: dict[str, Any] | None = None) -> RequestHandle:
        """Call a tool (T-02).  Completes with a ``CallToolResult`` (``is_error`` True is a
        normal result, T-03).  With ``progress`` a progress token is sent and
        :class:`Progress` events arrive; each one resets the idle deadline (L-09).
        ``timeout`` is the total deadline and ``idle_timeout`` the longest silence (defaults:
        ``Limits.request_timeout`` and ``Limits.idle_timeout``), in seconds.

        Raises :class:`LocalProtocolError` before the handshake or if the server declared no
        ``tools`` capability.
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if meta:
            params["_meta"] = dict(meta)
        return self._request("tools/call", params, now, timeout, parse_call_tool_result,
                             capability="tools", progress=progress, idle_timeout=idle_timeout)

    def read_resource(self, uri: str, *, now: float,
                      timeout: float | None = None) -> RequestHandle:
        """Read a resource (R-02).  Completes with ``ReadResourceResult``; an unknown resource
        fails with :class:`RpcError` (-32602, or -32002 from older servers)."""
        return self._request("resources/read", {"uri": uri}, now, timeout,
                             parse_read_resource_result, capability="resources")

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *, now: float,
                   timeout: float | None = None) -> RequestHandle:
        """Get a prompt (R-11).  Completes with ``GetPromptResult``."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return self._request("prompts/get", params, now, timeout, parse_get_prompt_result,
                             capability="prompts")

    def complete(self, ref: dict[str, Any], argument_name: str, argument_value: str, *,
                 context_arguments: dict[str, str] | None = None, now: float,
                 timeout: float | None = None) -> RequestHandle:
        """Argument completion (R-20).  ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``.  Completes with ``CompleteResult``."""
        params: dict[str, Any] = {"ref": ref,
                                  "argument": {"name": argument_name, "value": argument_value}}
        if context_arguments:
            params["context"] = {"arguments": context_arguments}
        capability = None if self.protocol_version == "2024-11-05" else "completions"
        return self._request("completion/complete", params, now, timeout,
                             parse_complete_result, capability=capability)

    def subscribe(self, uri: str, *, now: float, timeout: float | None = None) -> RequestHandle:
        """Subscribe to updates of a resource (R-03).  Completes with None; updates arrive as
        :class:`ResourceUpdated`.  Raises :class:`LocalProtocolError` if the server did not
        declare ``resources.subscribe``."""
        self._require_subscribe()
        return self._request("resources/subscribe", {"uri": uri}, now, timeout, _empty)

    def unsubscribe(self, uri: str, *, now: float,
                    timeout: float | None = None) -> RequestHandle:
        """Undo :meth:`subscribe`.  Completes with None."""
        self._require_subscribe()
        return self._request("resources/unsubscribe", {"uri": uri}, now, timeout, _empty)

    def set_logging_level(self, level: str, *, now: float,
                          timeout: float | None = None) -> RequestHandle:
        """``logging/setLevel`` (G-10).  Raises ``ValueError`` for a level not in RFC 5424."""
        if level not in _LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {sorted(_LOG_LEVELS)}")
        return self._request("logging/setLevel", {"level": level}, now, timeout, _empty,
                             capability="logging")

    def ping(self, *, now: float, timeout: float | None = None) -> RequestHandle:
        """``ping`` (G-01).  Completes with None.  Allowed during the handshake (L-05)."""
        return self._request("ping", None, now, timeout, _empty)

    def send_request(self, method: str, params: dict[str, Any] | None = None, *, now: float,
                     timeout: float | None = None, idle_timeout: float | None = None,
                     progress: bool = False) -> RequestHandle:
        """Any other request; completes with the raw result object (a dict)."""
        return self._request(method, params, now, timeout, _raw, progress=progress,
                             idle_timeout=idle_timeout)

    def notify_roots_list_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        if self.state is State.CLOSED:
            raise ConnectionClosed("cannot notify: the session is closed")
        if self.state is not State.READY:
            raise LocalProtocolError("notifications can only be sent once the session is ready")
        self._send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})

    def cancel(self, handle: RequestHandle, reason: str | None = None) -> bool:
        """Cancel a pending operation (C-01): it fails with :class:`RequestCancelled` and the
        server gets ``notifications/cancelled``; a late response is dropped (C-03).  Returns
        False if the operation already ended.  ``initialize`` cannot be cancelled (C-02):
        raises :class:`LocalProtocolError`."""
        if handle is self._init_handle:
            raise LocalProtocolError("initialize cannot be cancelled (MCP lifecycle rule); "
                                     "close the session instead")
        rid = handle.id
        p = self._pending.get(rid)
        if p is None or p.handle != handle:
            for rid, p in self._pending.items():  # noqa: B007 - rare path: a later page
                if p.handle == handle:
                    break
            else:
                return False
        del self._pending[rid]
        self._abandon(rid, p, RequestCancelled(handle.method, reason), reason=reason)
        return True

    def respond(self, request_id: RequestId, result: dict[str, Any]) -> bool:
        """Answer a :class:`ServerRequest`.  Returns False (and sends nothing) if the server
        withdrew the request or the session ended.  Raises :class:`LocalProtocolError` if
        ``result`` is not JSON (the request stays open: answer again, or with an error)."""
        return self._answer(request_id, {"jsonrpc": "2.0", "id": request_id, "result": result})

    def respond_error(self, request_id: RequestId, code: int, message: str,
                      data: Any = None) -> bool:
        """Answer a :class:`ServerRequest` with an error (for example -1 when the user refused a
        sampling request).  Returns False if there is nothing to answer; raises
        :class:`LocalProtocolError` if ``data`` is not JSON."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        return self._answer(request_id, {"jsonrpc": "2.0", "id": request_id, "error": error})

    def respond_with(self, request_id: RequestId, outcome: object) -> bool:
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
                return self.respond(request_id, outcome)
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
        return True

    # -- internals: sending -----------------------------------------------------------------

    def _send(self, obj: dict[str, Any]) -> None:
        out = self._out
        out.append(dumps(obj))
        out.append(b"\n")

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
                 idle_timeout: float | None = None) -> RequestHandle:
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
        rid = self._next_id
        self._next_id = rid + 1
        handle = RequestHandle(rid, method)
        self._send_request(rid, handle, method, params, now, timeout, parse, progress, walk,
                           idle_timeout=idle_timeout)
        return handle

    def _send_request(self, rid: int, handle: RequestHandle, method: str,
                      params: dict[str, Any] | None, now: float, timeout: float | None,
                      parse: Callable[[dict[str, Any]], Any], progress: bool,
                      walk: ListWalk | None, total_deadline: float | None = None,
                      idle_timeout: float | None = None) -> None:
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
        if progress:
            params = dict(params) if params else {}
            meta = params.get("_meta")
            params["_meta"] = {**meta, "progressToken": rid} if meta else {"progressToken": rid}
        if params is not None:
            msg["params"] = params
        try:
            data = dumps(msg)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"arguments of {method} are not JSON: {exc}") from None
        deadline = min(now + idle, total_deadline)
        self._pending[rid] = _Pending(handle, method, parse, walk, progress, idle, total,
                                      total_deadline, deadline)
        heapq.heappush(self._timers, (deadline, rid))
        out = self._out
        out.append(data)
        out.append(b"\n")

    def _list(self, method: str, key: str, parse: Callable[[object], Any], capability: str,
              now: float, timeout: float | None) -> RequestHandle:
        if self.state is State.READY and capability not in self.server_capabilities:
            rid = self._next_id
            self._next_id = rid + 1
            handle = RequestHandle(rid, method)
            self._events.append(Completed(handle=handle, value=[]))
            return handle
        limits = self.limits
        walk = ListWalk(method, key, parse, max_pages=limits.max_pages,
                        max_items=limits.max_list_items)
        return self._request(method, None, now, timeout, _raw, walk=walk)

    def _abandon(self, rid: int, p: _Pending, error: MCPError, reason: str | None) -> None:
        """A request ends on our side (timeout or cancel): tell the server, fail the handle."""
        if p.handle is self._init_handle:
            self._events.append(Failed(handle=p.handle, error=error))
            self._shutdown(error, Input.INIT_FAILED, failed_init=True)
            return
        params: dict[str, Any] = {"requestId": rid}
        if reason:
            params["reason"] = reason
        self._send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
        self._events.append(Failed(handle=p.handle, error=error))

    def _fail(self, p: _Pending, error: MCPError) -> None:
        """A popped request failed because of what the server sent.  A failed ``initialize``
        ends the session: there is nothing to talk to."""
        self._events.append(Failed(handle=p.handle, error=error))
        if p.handle is self._init_handle:
            self._shutdown(error, Input.INIT_FAILED, failed_init=True)

    def _shutdown(self, error: MCPError | None, how: Input, failed_init: bool = False) -> None:
        if self.state is State.CLOSED:
            return
        self.state = transition(self.state, how)
        self.closed_error = error
        fail_with = error if error is not None else ConnectionClosed("the client closed the "
                                                                     "session")
        events = self._events
        for p in self._pending.values():
            events.append(Failed(handle=p.handle, error=fail_with))
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
        if p.handle is self._init_handle:
            self._on_initialize_result(p, result)
            return
        walk = p.walk
        try:
            if walk is not None:
                cursor = walk.take_page(result)
                if cursor is not None:
                    self._next_page(p, walk, cursor, now)
                    return
                value: Any = walk.items
            else:
                value = p.parse(result)
        except RemoteProtocolError as exc:
            self._fail(p, exc)
            return
        self._events.append(Completed(handle=p.handle, value=value))

    def _next_page(self, p: _Pending, walk: ListWalk, cursor: str, now: float | None) -> None:
        if now is None:  # final line at EOF: the session is about to close anyway
            self._events.append(Failed(handle=p.handle, error=ConnectionClosed(
                f"{p.method}: the server closed its output mid-list")))
            return
        rid = self._next_id
        self._next_id = rid + 1
        self._send_request(rid, p.handle, p.method, {"cursor": cursor}, now, p.total_timeout,
                           p.parse, False, walk, total_deadline=p.total_deadline,
                           idle_timeout=p.idle_timeout)

    def _on_initialize_result(self, p: _Pending, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        error: MCPError | None = None
        server_info = None
        if version not in self.versions:
            error = UnsupportedVersion(self.versions, version)
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
        self.state = transition(self.state, Input.INIT_OK)
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._events.append(Ready(handle=p.handle, protocol_version=version,
                                  server_info=server_info,
                                  capabilities=self.server_capabilities,
                                  instructions=self.instructions))

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
        self._fail(p, RpcError(message.code, message.message, message.data, method=p.method))

    def _on_notification(self, message: Notification, now: float | None) -> None:
        method = message.method
        params = message.params
        if method == "notifications/progress":
            self._on_progress(params, now)
        elif method == "notifications/message":
            level = params.get("level")
            logger = params.get("logger")
            self._events.append(LogMessage(level=level if type(level) is str else "info",
                                           data=params.get("data"),
                                           logger=logger if type(logger) is str else None))
        elif method in _LIST_CHANGED:
            self._events.append(ListChanged(kind=_LIST_CHANGED[method]))
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is str:
                self._events.append(ResourceUpdated(uri=uri))
            else:
                self._bad(RemoteProtocolError("resources/updated without a string uri"))
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

    def _on_progress(self, params: dict[str, Any], now: float | None) -> None:
        token = params.get("progressToken")
        progress = params.get("progress")
        p = self._pending.get(token) if type(token) is int else None
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

    def _on_server_request(self, message: Request) -> None:
        method = message.method
        rid = message.id
        if method == "ping":
            self._send({"jsonrpc": "2.0", "id": rid, "result": {}})
            return
        caps = self.capabilities
        if method == "sampling/createMessage" and "sampling" in caps:
            sampling = caps["sampling"]
            if ("tools" in message.params or "toolChoice" in message.params) and not (
                    isinstance(sampling, dict) and "tools" in sampling):
                self._send_error(rid, INVALID_PARAMS, "sampling with tools was requested but "
                                 "the client did not declare sampling.tools (F-02)")
                return
        elif method == "elicitation/create" and "elicitation" in caps:
            mode = message.params.get("mode", "form")
            declared = caps["elicitation"]
            modes = {"form"} if not declared else set(declared) & {"form", "url"}
            if type(mode) is not str or mode not in modes:
                self._send_error(rid, INVALID_PARAMS, f"elicitation mode {mode!r} was not "
                                 "declared by the client (F-03)"[:300])
                return
        elif not (method == "roots/list" and "roots" in caps):
            self._send_error(rid, METHOD_NOT_FOUND, f"method not found: {method}")
            return
        if rid in self._server_requests:
            self._send_error(rid, INVALID_PARAMS, f"request id {rid!r} is already in use")
            return
        self._server_requests[rid] = method
        self._events.append(ServerRequest(request_id=rid, method=method,
                                          params=message.params))
