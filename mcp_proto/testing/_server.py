"""MemoryServer: a small MCP server in memory, both eras, for tests that start no process.

A test registers tools, resources, resource templates and prompts, then drives the server
through the ENDPOINT interface the bindings' in-memory driver uses (the same as
:class:`~._replay.ReplayServer`'s)::

    receive_data(data, now)   # NDJSON from the client; never raises for bad client input
    receive_eof(now)          # the client closed stdin: the "process" ends (exit_code 0)
    data_to_send()            # NDJSON for the client
    stderr_to_send()
    next_deadline() / handle_timeout(now)   # no timers: None / nothing
    exit_code                 # set: flush the output, then the "process" ends

The server never calls a handler itself.  ``tools/call``, a read of a resource template and
``prompts/get`` each become a :class:`HandlerCall` from :meth:`MemoryServer.next_call`; the
driver runs it (:meth:`HandlerCall.run`) and hands the outcome to
:meth:`~MemoryServer.finish`, and meanwhile may send progress (:meth:`~MemoryServer.call_progress`),
log (:meth:`~MemoryServer.call_log`) and, in the handshake era, ask the client
(:meth:`~MemoryServer.call_request`, the answer from :meth:`~MemoryServer.next_answer`).

Rules:

- Era, per request: ``initialize`` is the handshake (the client's version if this server
  speaks it, else its newest handshake version, V-02); a request carrying the 2026-07-28
  ``_meta`` protocol version, or any request before ``initialize`` when the server speaks
  2026-07-28 (``ping`` aside), is served in the stateless era: the envelope is checked
  (-32602 without it, -32022 for a version not spoken), every result carries
  ``resultType: "complete"`` and ``_meta`` serverInfo (M-02, M-07); everything else is
  served in the handshake era (-32600 before ``initialize`` on a handshake-only server).
  A server without 2026-07-28 answers ``server/discover`` -32601, as old servers do.
- List changes: in the handshake era as plain notifications once initialized; in the
  stateless era on every ``subscriptions/listen`` stream that asked for them (each
  acknowledged at once with what it asked for that the server has, SB-02), ended by the
  client's ``notifications/cancelled`` for its id.
- Logging: ``logging/setLevel`` (handshake era) sets :attr:`MemoryServer.log_level`; before
  it every message is sent.  In the stateless era a message goes only to a call whose
  request asked for a level (G-11); :meth:`MemoryServer.log` reaches handshake-era clients
  only.
- Cancellation: ``notifications/cancelled`` marks the call cancelled
  (:meth:`MemoryServer.is_cancelled`); its outcome is then not sent (C-03).
- Errors: unknown method -32601, bad params -32602, a line that is not JSON -32700, not a
  JSON-RPC message -32600, a line over ``limits.max_message_size`` -32600 (id null, the line
  dropped), a request id already in flight -32600.  Batches only in 2025-03-26 (each member
  answered on its own line), else -32600.
- Tasks: a tool registered with ``task_support`` runs as a task in both forms (2025-11-25
  ``tasks/*``, the 2026 ``io.modelcontextprotocol/tasks`` extension), declared only when a
  tool has them; see :mod:`._tasks`.  MRTR is not supported.
- Bounded: see the ``MAX_*`` constants.  Output the client does not read past
  :data:`MAX_QUEUED_OUTPUT` ends the "process" (exit code 1, the reason on stderr).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from .._errors import LocalProtocolError, RemoteProtocolError, RpcError
from .._limits import MAX_MESSAGE_SIZE, Limits
from .._tasks import RELATED_TASK_KEY, TASKS_EXTENSION
from .._types import RequestId
from .._versions import ALL_VERSIONS, BATCH_VERSIONS, HANDSHAKE_VERSIONS, MODERN_VERSIONS
from ..wire._json import dumps, loads
from ..wire._jsonrpc import ErrorResponse, Notification, Request, Response, decode
from ..wire._ndjson import NdjsonFramer, Oversize
from ._catalog import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_ONLY,
    LIST_FLAGS,
    METHOD_NOT_FOUND,
    MODERN_ONLY,
    PARSE_ERROR,
    PROTOCOL_VERSION_KEY,
    REQUEST_CAPABILITY,
    SERVER_CAPABILITIES,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
    Catalogue,
    Envelope,
    HandlerCall,
    PromptEntry,
    ResourceEntry,
    Running,
    TemplateEntry,
    ToolEntry,
    accept_listen,
    check_envelope,
    level_rank,
    list_page,
    listed,
    not_found,
    progress_token,
    prompt_result,
    resource_result,
    take,
    tool_result,
)
from ._tasks import TASK_METHODS, TaskTable, legacy_tasks
from ._telling import Telling

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_CALLS_IN_FLIGHT",
    "MAX_LISTENS",
    "MAX_MESSAGE_SIZE",
    "MAX_QUEUED_OUTPUT",
    "MAX_RECEIVED",
    "MAX_SERVER_REQUESTS",
    "MAX_STDERR",
    "MAX_SUBSCRIPTIONS",
    "HandlerCall",
    "MemoryServer",
]

#: Items per page of every list (``page_size`` changes it): real servers page by tens or
#: hundreds, and a test of paging sets it small.
DEFAULT_PAGE_SIZE = 100
#: Calls (tools, templates, prompts) waiting for their outcome at once; more are answered
#: -32603.  A test runs a few; a client flooding the server must not grow it without bound.
MAX_CALLS_IN_FLIGHT = 256
#: Bytes of output the client has not taken yet.  Past it the client is not reading (a real
#: server would block on its pipe): the "process" ends with exit code 1 rather than grow.
MAX_QUEUED_OUTPUT = 64 * 1024 * 1024
#: Bytes of stderr kept until taken (older text is dropped): the bindings keep a tail anyway.
MAX_STDERR = 64 * 1024
#: Client messages kept in :attr:`MemoryServer.received` (the oldest go first): enough for
#: any test's assertions, bounded for a long fuzz run.
MAX_RECEIVED = 10_000
#: Open ``subscriptions/listen`` streams (a client keeps one, SB-01); more are refused -32603.
MAX_LISTENS = 16
#: Requests to the client awaiting an answer (a test asks a few); more raise
#: :class:`LocalProtocolError` in :meth:`MemoryServer.call_request`.
MAX_SERVER_REQUESTS = 64
#: Resources subscribed to (``resources/subscribe`` or a listen's ``resourceSubscriptions``);
#: more are refused -32602 / left out of the acknowledgement.
MAX_SUBSCRIPTIONS = 1024

class MemoryServer(Catalogue, Telling):
    """An MCP server in memory (see the module's rules).  ``protocol_versions``: what it
    speaks, newest first, from both eras (default: every version the client side knows).
    Raises ``ValueError`` for an empty or unknown version list or a page size below 1."""

    def __init__(self, name: str, version: str = "1.0.0", *, instructions: str | None = None,
                 protocol_versions: Sequence[str] | None = None,
                 page_size: int = DEFAULT_PAGE_SIZE, limits: Limits | None = None) -> None:
        versions = tuple(ALL_VERSIONS if protocol_versions is None else protocol_versions)
        unknown = [v for v in versions if v not in ALL_VERSIONS]
        if not versions or unknown:
            raise ValueError(f"protocol_versions must name known versions ({ALL_VERSIONS}), "
                             f"got {versions!r}")
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size!r}")
        self.server_info: dict[str, Any] = {"name": name, "version": version}
        self.instructions = instructions
        self.page_size = page_size
        self._modern = tuple(v for v in versions if v in MODERN_VERSIONS)
        self._legacy = tuple(v for v in versions if v in HANDSHAKE_VERSIONS)
        self.limits = limits or Limits()
        self._framer = NdjsonFramer(self.limits.max_message_size)
        self.exit_code: int | None = None
        self.protocol_version: str | None = None
        """The handshake's version once ``initialize`` was answered."""
        self.client_capabilities: dict[str, Any] = {}
        """What the handshake-era client declared."""
        self.client_info: Any = None
        self.initialized = False
        """``notifications/initialized`` arrived."""
        self.log_level: str | None = None
        """The handshake era's ``logging/setLevel`` (None: every message is sent)."""
        self.internal_errors = 0
        """Requests that met a bug of this server (answered -32603); a test asserts 0."""
        self.now = 0.0
        self._guard: Any = None  # a driver's lock (attach): what a test tells holds it
        self._wake: Callable[[], None] = _nothing
        self._era: str | None = None
        self._tools: dict[str, ToolEntry] = {}
        self._resources: dict[str, ResourceEntry] = {}
        self._templates: list[TemplateEntry] = []
        self._prompts: dict[str, PromptEntry] = {}
        self._out = bytearray()
        self._err = bytearray()
        self._received: deque[Any] = deque(maxlen=MAX_RECEIVED)
        self._next_call = 1
        self._queue: deque[int] = deque()
        self._running: dict[int, Running] = {}
        self._listens: dict[RequestId, dict[str, Any]] = {}
        self._subscribed: set[str] = set()  # resources/subscribe (handshake era)
        self._next_request = 1
        self._asked: dict[RequestId, str] = {}  # our request id -> method
        self._answers: deque[tuple[RequestId, dict[str, Any] | RpcError]] = deque()
        self._tasks = TaskTable(self)

    # -- what a test tells the client ---------------------------------------------------------

    def _resource_updated(self, uri: str) -> int:
        sent = 0
        if uri in self._subscribed and self._era == "legacy":
            sent += self._notify("notifications/resources/updated", {"uri": uri})
        for rid, accepted in list(self._listens.items()):
            if uri in accepted.get("resourceSubscriptions", ()):
                sent += self._notify("notifications/resources/updated",
                                     {"uri": uri, "_meta": {SUBSCRIPTION_ID_KEY: rid}})
        return sent

    def _exit(self, code: int, stderr: str) -> None:
        if stderr:
            self._stderr(stderr if stderr.endswith("\n") else stderr + "\n")
        if self.exit_code is None:
            self.exit_code = code

    def connection(self) -> MemoryServer:
        """This server for another connection (a client that connects again after an exit):
        the same tools, resources and prompts (shared: a later registration shows in both),
        a fresh protocol state.  ``connect_memory`` serves the server itself first."""
        other = MemoryServer(self.server_info["name"], self.server_info["version"],
                             instructions=self.instructions,
                             protocol_versions=(*self._modern, *self._legacy),
                             page_size=self.page_size, limits=self.limits)
        other._tools, other._resources = self._tools, self._resources
        other._templates, other._prompts = self._templates, self._prompts
        return other

    # -- the ENDPOINT interface --------------------------------------------------------------

    def receive_data(self, data: bytes, now: float) -> None:
        """Take bytes the client wrote.  Never raises for bad input: it is answered."""
        if self.exit_code is not None:
            return
        self.now = now
        self._framer.feed(data)
        self._drain()

    def receive_eof(self, now: float) -> None:
        """The client closed stdin: a last unterminated line is read, then the server exits
        (code 0 unless it already ended)."""
        if self.exit_code is None:
            self.now = now
            self._framer.feed_eof()
            self._drain()
        if self.exit_code is None:
            self.exit_code = 0

    def data_to_send(self) -> bytes:
        return take(self._out)

    def stderr_to_send(self) -> bytes:
        return take(self._err)

    def next_deadline(self) -> float | None:
        return None  # nothing here waits on time

    def handle_timeout(self, now: float) -> None:
        self.now = max(self.now, now)

    @property
    def received(self) -> list[Any]:
        """The client's messages, parsed, in order (the last :data:`MAX_RECEIVED`)."""
        return list(self._received)

    @property
    def era(self) -> str | None:
        """``"legacy"`` once ``initialize`` was answered, ``"modern"`` once a 2026-07-28
        request was, else None."""
        return self._era

    # -- the driver's side of a call ---------------------------------------------------------

    def next_call(self) -> HandlerCall | None:
        """The next handler to run, or None."""
        while self._queue:
            running = self._running.get(self._queue.popleft())
            if running is not None:
                return running.call
        return None

    def _get(self, call_id: int) -> Running:
        running = self._running.get(call_id)
        if running is None:
            raise LocalProtocolError(f"no call {call_id} is in flight (finished, or never "
                                     "made: take calls from next_call())")
        return running

    def is_cancelled(self, call_id: int) -> bool:
        """Whether the client cancelled the call (False once it is finished)."""
        running = self._running.get(call_id)
        return running is not None and running.cancelled

    def finish(self, call_id: int, outcome: object, now: float) -> None:
        """Answer a call with its handler's outcome (a return value or an exception; see the
        result rules of :func:`~._catalog.tool_result`).  Nothing is sent for a
        cancelled call.  Raises :class:`LocalProtocolError` for a call not in flight."""
        running = self._get(call_id)
        del self._running[call_id]
        self.now = now
        if running.cancelled or self.exit_code is not None:
            return
        call = running.call
        answer: dict[str, Any] | RpcError
        try:
            if call.kind == "tool":
                answer = tool_result(outcome, running.output_schema)
            elif call.kind == "resource":
                answer = resource_result(call.name, outcome, running.what)
            else:
                answer = prompt_result(call.name, outcome, running.what)
        except RpcError as exc:
            answer = exc
        if running.task_id is not None:
            self._tasks.finished(running.task_id, answer, now)
        elif isinstance(answer, RpcError):
            self._error(call.request_id, answer.code, answer.message, answer.data)
        else:
            self._result(call.request_id, answer, running.modern)

    def call_progress(self, call_id: int, progress: float, total: float | None = None,
                      message: str | None = None) -> bool:
        """``notifications/progress`` for a running call, if its request asked for progress
        (returns whether it was sent).  Raises :class:`LocalProtocolError` for a call not in
        flight."""
        running = self._get(call_id)
        token = running.call.progress_token
        if token is None or running.cancelled:
            return False
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self._notify("notifications/progress", params) > 0

    def call_log(self, call_id: int, level: str, data: Any, logger: str | None = None) -> bool:
        """``notifications/message`` during a call: in the handshake era as :meth:`log`; in
        the stateless era only when the call's request asked for ``level`` or lower (G-11).
        Returns whether it was sent.  Raises :class:`LocalProtocolError` for a call not in
        flight or ``data`` that is not JSON, ``ValueError`` for an unknown level."""
        running = self._get(call_id)
        floor = running.log_level if running.modern else (self.log_level or "debug")
        if floor is None or level_rank(level) < level_rank(floor) or running.cancelled:
            return False
        return self._log(level, data, logger)

    def call_request(self, call_id: int, method: str,
                     params: dict[str, Any] | None = None) -> RequestId:
        """Ask the client during a call (``sampling/createMessage``, ``elicitation/create``,
        ``roots/list``); returns the request's id, whose answer comes from
        :meth:`next_answer`.  During a task the request is tagged with it (2025-11-25) or
        becomes its input request (2026, see :mod:`._tasks`).  Raises
        :class:`LocalProtocolError` in the stateless era outside a task (no server
        requests, M-04), when the client did not declare the capability the method needs,
        for another method, for params that are not JSON, or past
        :data:`MAX_SERVER_REQUESTS` unanswered."""
        running = self._get(call_id)
        if method not in REQUEST_CAPABILITY:
            raise LocalProtocolError(f"{method!r} is not a request a server may send "
                                     f"(one of {sorted(REQUEST_CAPABILITY)})")
        task_id = running.task_id
        if task_id is not None and self._tasks.ask(task_id, self._next_request, method,
                                                   params, self.now):
            self._next_request += 1  # 2026: an input request of the task, answered by update
            return self._next_request - 1
        if running.modern:
            raise LocalProtocolError(f"{method} cannot be sent in 2026-07-28: servers send no "
                                     "requests there (M-04; MRTR is not supported)")
        needed = REQUEST_CAPABILITY[method]
        if needed is not None and needed not in self.client_capabilities:
            raise LocalProtocolError(f"{method} needs the client capability {needed!r}, which "
                                     "the client did not declare")
        if len(self._asked) >= MAX_SERVER_REQUESTS:
            raise LocalProtocolError(f"{MAX_SERVER_REQUESTS} requests to the client are "
                                     "unanswered already")
        rid = self._next_request
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if task_id is not None:  # TK-06: tagged with its task
            meta = (params or {}).get("_meta")
            params = {**(params or {}), "_meta": {**(meta if type(meta) is dict else {}),
                                                  RELATED_TASK_KEY: {"taskId": task_id}}}
        if params is not None:
            message["params"] = params
        self._send(message)
        self._next_request += 1
        self._asked[rid] = method
        if task_id is not None:
            self._tasks.asking(task_id, rid, self.now)
        return rid

    def next_answer(self) -> tuple[RequestId, dict[str, Any] | RpcError] | None:
        """The client's next answer to a :meth:`call_request`: ``(request id, result)`` or
        ``(request id, RpcError)``; None when none is waiting."""
        return self._answers.popleft() if self._answers else None

    # -- output ------------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        """Queue one line.  Raises :class:`LocalProtocolError` if it is not JSON."""
        try:
            line = dumps(message) + b"\n"
        except (ValueError, TypeError, RecursionError) as exc:
            raise LocalProtocolError(f"not JSON: {type(exc).__name__}: {exc}"[:300]) from exc
        if self.exit_code is not None:
            return
        self._out += line
        if len(self._out) > MAX_QUEUED_OUTPUT:
            self.exit(1, f"MemoryServer: the client left more than {MAX_QUEUED_OUTPUT} bytes "
                         "unread; the server ends")

    def _stderr(self, text: str) -> None:
        self._err += text.encode("utf-8", "replace")
        if len(self._err) > MAX_STDERR:
            del self._err[:len(self._err) - MAX_STDERR]

    def _notify(self, method: str, params: dict[str, Any]) -> int:
        if self.exit_code is not None:
            return 0
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        return 1

    def _log(self, level: str, data: Any, logger: str | None) -> bool:
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return self._notify("notifications/message", params) > 0

    def _list_changed(self, kind: str) -> int:
        method = f"notifications/{kind}/list_changed"
        sent = 0
        if self._era == "legacy" or self.initialized:
            sent += self._notify(method, {})
        flag = LIST_FLAGS[kind]
        for rid, accepted in list(self._listens.items()):
            if accepted.get(flag):
                sent += self._notify(method, {"_meta": {SUBSCRIPTION_ID_KEY: rid}})
        return sent

    def _result(self, rid: RequestId, result: dict[str, Any], modern: bool) -> None:
        if modern:
            meta = result.get("_meta")
            result = {**result, "resultType": result.get("resultType", "complete"),
                      "_meta": {**(meta if isinstance(meta, dict) else {}),
                                SERVER_INFO_KEY: self.server_info}}
        self._send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _error(self, rid: RequestId | None, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        # An unreadable request's error has no id (the 2025-11-25 and 2026 schemas, J-03).
        head: dict[str, Any] = {"jsonrpc": "2.0"} if rid is None else {"jsonrpc": "2.0",
                                                                         "id": rid}
        try:
            self._send({**head, "error": error})
        except LocalProtocolError:  # data that is not JSON (an RpcError a handler raised)
            self._send({**head, "error": {"code": code, "message": message}})

    # -- input -------------------------------------------------------------------------------

    def _drain(self) -> None:
        framer = self._framer
        while self.exit_code is None and (lines := framer.lines()):
            for line in lines:
                if self.exit_code is not None:
                    return
                if type(line) is Oversize:
                    self._error(None, INVALID_REQUEST,
                                f"message of {line.size} bytes over the limit of "
                                f"{self.limits.max_message_size}; dropped")
                    continue
                try:
                    value = loads(bytes(line).decode("utf-8"))  # type: ignore[arg-type]
                except (ValueError, RecursionError) as exc:
                    self._error(None, PARSE_ERROR, f"not UTF-8 JSON: {exc}"[:300])
                    continue
                if type(value) is list:
                    self._batch(value)
                else:
                    self._message(value)

    def _batch(self, members: list[Any]) -> None:
        if self.protocol_version not in BATCH_VERSIONS or not members:
            self._error(None, INVALID_REQUEST, "JSON-RPC batches are allowed in 2025-03-26 "
                        "only" if members else "empty batch")
            return
        for member in members:
            self._message(member)

    def _message(self, value: Any) -> None:
        if type(value) is dict:
            self._received.append(value)
        try:
            message = decode(value)
        except RemoteProtocolError as exc:
            rid = value.get("id") if type(value) is dict else None
            ok = type(rid) is str or type(rid) is int
            self._error(rid if ok else None, INVALID_REQUEST,
                        str(exc).replace("JSON-RPC message", "message"))
            return
        try:
            if type(message) is Request:
                self._request(message)
            elif type(message) is Notification:
                self._notification(message)
            elif type(message) is Response:
                self._answer(message.id, message.result)
            else:
                assert type(message) is ErrorResponse
                method = self._asked.get(message.id, "") if message.id is not None else ""
                self._answer(message.id, RpcError(message.code, message.message, message.data,
                                                  method=method))
        except Exception as exc:  # a bug of this server: answered, counted, never raised
            self.internal_errors += 1
            self._stderr(f"MemoryServer: internal error: {type(exc).__name__}: {exc}\n")
            if type(message) is Request:
                self._error(message.id, INTERNAL_ERROR,
                            f"internal error: {type(exc).__name__}: {exc}"[:300])

    def _answer(self, rid: RequestId | None, answer: dict[str, Any] | RpcError) -> None:
        if rid is not None and self._asked.pop(rid, None) is not None:
            self._answers.append((rid, answer))
            self._tasks.answered(rid, self.now)
        # else: an answer to nothing we asked: ignored

    def _notification(self, message: Notification) -> None:
        method, params = message.method, message.params
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            if type(rid) is not str and type(rid) is not int:
                return  # not a request id: ignored (C-03)
            if self._listens.pop(rid, None) is not None:  # SB-04: the client ended a listen
                return
            self._tasks.forget(rid)  # a held tasks/result
            for running in self._running.values():
                if running.call.request_id == rid and type(rid) is type(running.call.request_id) \
                        and running.task_id is None:  # a task's call ends by tasks/cancel
                    running.cancelled = True
        # anything else (progress, roots/list_changed, unknown): nothing to answer (J-04)

    def _request(self, message: Request) -> None:
        rid, method, params = message.id, message.method, message.params
        if self._in_flight(rid):
            self._error(rid, INVALID_REQUEST, f"request id {rid!r} is still in flight")
            return
        envelope: Envelope | None = None
        meta = params.get("_meta")
        version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
        modern = bool(self._modern) and method != "initialize" and (
            version is not None or method in MODERN_ONLY
            or (self._era != "legacy" and method != "ping"))
        handler = _METHODS.get(method)
        try:
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}"[:300])
            if modern:
                envelope = check_envelope(params, self._modern)
                if method in LEGACY_ONLY:
                    raise RpcError(METHOD_NOT_FOUND, f"{method} does not exist in "
                                   f"{envelope.version}")
            elif method in MODERN_ONLY or (method == "initialize" and not self._legacy):
                raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            elif self._era != "legacy" and method not in ("initialize", "ping"):
                raise RpcError(INVALID_REQUEST, "the server is not initialized: send "
                               "initialize first")
            result = handler(self, rid, params, envelope)
        except RpcError as exc:
            self._error(rid, exc.code, exc.message, exc.data)
            return
        if envelope is not None:
            self._era = self._era or "modern"
        if result is not None:
            self._result(rid, result, envelope is not None)

    def _in_flight(self, rid: RequestId) -> bool:
        if rid in self._listens or self._tasks.holds(rid):
            return True
        return any(r.call.request_id == rid and type(r.call.request_id) is type(rid)
                   and r.task_id is None for r in self._running.values())

    # -- what the method table asks of the server ---------------------------------------------

    def _start_call(self, kind: str, name: str, fn: Callable[..., Any],
                    arguments: dict[str, Any], rid: RequestId, params: dict[str, Any],
                    envelope: Envelope | None, output_schema: dict[str, Any] | None = None,
                    what: str | None = None) -> int:
        if len(self._running) >= MAX_CALLS_IN_FLIGHT:
            raise RpcError(INTERNAL_ERROR, f"{MAX_CALLS_IN_FLIGHT} calls are in flight "
                           "already; try again later")
        call_id = self._next_call
        self._next_call += 1
        call = HandlerCall(call_id, kind, name, fn, arguments, rid, progress_token(params))
        self._running[call_id] = Running(call, envelope is not None,
                                          envelope.log_level if envelope else None,
                                          output_schema, what)
        self._queue.append(call_id)
        return call_id

    def _task_reply(self, rid: RequestId, answer: dict[str, Any] | RpcError) -> None:
        if isinstance(answer, RpcError):
            self._error(rid, answer.code, answer.message, answer.data)
        else:
            self._result(rid, answer, False)

    def _task_note(self, task: dict[str, Any]) -> None:
        self._notify("notifications/tasks/status", task)

    def _task_cancel(self, call_id: int) -> None:
        running = self._running.get(call_id)
        if running is not None:
            running.cancelled = True

    def _task_input(self, rid: RequestId, answer: dict[str, Any] | RpcError) -> None:
        self._answers.append((rid, answer))

    def _page(self, items: list[dict[str, Any]], params: dict[str, Any],
              kind: str) -> tuple[list[dict[str, Any]], str | None]:
        return list_page(items, params.get("cursor"), self.page_size, kind)

    def capabilities(self, era: str | None = None) -> dict[str, Any]:
        """What this server declares in ``era`` (``"legacy"``, ``"modern"``; None: the
        same in both): tasks only when a tool has task support (2025-11-25 on)."""
        caps = {k: dict(v) for k, v in SERVER_CAPABILITIES.items()}
        if any(t.task_support != "forbidden" for t in self._tools.values()):
            if era == "modern":
                caps["extensions"] = {TASKS_EXTENSION: {}}
            elif era == "legacy" and legacy_tasks(self.protocol_version):
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    # -- the methods: each returns the result, or None when the answer comes later --------

    def _initialize(self, rid: RequestId, params: dict[str, Any],
                    envelope: Envelope | None) -> dict[str, Any]:
        if self._era == "legacy":
            raise RpcError(INVALID_REQUEST, "initialize was already answered")
        asked = params.get("protocolVersion")
        if type(asked) is not str:
            raise RpcError(INVALID_PARAMS, "initialize needs a string protocolVersion")
        capabilities = params.get("capabilities")
        version = asked if asked in self._legacy else self._legacy[0]  # V-02
        self.protocol_version = version
        self.client_capabilities = capabilities if type(capabilities) is dict else {}
        self.client_info = params.get("clientInfo")
        self._era = "legacy"
        result: dict[str, Any] = {"protocolVersion": version,
                                  "capabilities": self.capabilities("legacy"),
                                  "serverInfo": self.server_info}
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _discover(self, rid: RequestId, params: dict[str, Any],
                  envelope: Envelope | None) -> dict[str, Any]:
        result: dict[str, Any] = {"supportedVersions": list(self._modern),
                                  "capabilities": self.capabilities("modern")}
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _ping(self, rid: RequestId, params: dict[str, Any],
              envelope: Envelope | None) -> dict[str, Any]:
        return {}

    def _set_level(self, rid: RequestId, params: dict[str, Any],
                   envelope: Envelope | None) -> dict[str, Any]:
        level = params.get("level")
        try:
            level_rank(level)  # type: ignore[arg-type]  # checked there
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, str(exc)) from None
        self.log_level = level
        return {}

    def _list_tools(self, rid: RequestId, params: dict[str, Any],
                    envelope: Envelope | None) -> dict[str, Any]:
        tasks = envelope is None and legacy_tasks(self.protocol_version)
        items, cursor = self._page([t.wire(tasks) for t in self._tools.values()], params,
                                   "tools")
        return listed("tools", items, cursor)

    def _list_resources(self, rid: RequestId, params: dict[str, Any],
                        envelope: Envelope | None) -> dict[str, Any]:
        items, cursor = self._page([r.wire() for r in self._resources.values()], params,
                                   "resources")
        return listed("resources", items, cursor)

    def _list_templates(self, rid: RequestId, params: dict[str, Any],
                        envelope: Envelope | None) -> dict[str, Any]:
        items, cursor = self._page([t.wire() for t in self._templates], params, "templates")
        return listed("resourceTemplates", items, cursor)

    def _list_prompts(self, rid: RequestId, params: dict[str, Any],
                      envelope: Envelope | None) -> dict[str, Any]:
        items, cursor = self._page([p.wire() for p in self._prompts.values()], params,
                                   "prompts")
        return listed("prompts", items, cursor)

    def _call_tool(self, rid: RequestId, params: dict[str, Any],
                   envelope: Envelope | None) -> dict[str, Any] | None:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, "tools/call needs a string name")
        if type(arguments) is not dict:
            raise RpcError(INVALID_PARAMS, "tools/call arguments must be an object")
        tool = self._tools.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name}"[:300])  # T-03
        ttl = self._tasks.plan(tool.task_support, params, envelope)
        call_id = self._start_call("tool", name, tool.fn, arguments, rid, params, envelope,
                                   tool.output_schema)
        if ttl is None:
            return None
        task_id, created = self._tasks.start(call_id, ttl, envelope)
        self._running[call_id].task_id = task_id
        return created  # TK-02 / TX-02: at once; the handler's outcome goes to the task

    def _read(self, rid: RequestId, params: dict[str, Any],
              envelope: Envelope | None) -> dict[str, Any] | None:
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "resources/read needs a string uri")
        static = self._resources.get(uri)
        if static is not None:
            return {"contents": [static.contents()]}
        for template in self._templates:
            variables = template.match(uri)
            if variables is not None:
                self._start_call("resource", uri, template.fn, variables, rid, params,
                                 envelope, what=template.mime_type)
                return None
        raise not_found(uri, envelope is not None)

    def _subscribe(self, rid: RequestId, params: dict[str, Any],
                   envelope: Envelope | None) -> dict[str, Any]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "resources/subscribe needs a string uri")
        if len(self._subscribed) >= MAX_SUBSCRIPTIONS and uri not in self._subscribed:
            raise RpcError(INVALID_PARAMS, f"{MAX_SUBSCRIPTIONS} resources are subscribed to "
                           "already")
        self._subscribed.add(uri)
        return {}

    def _unsubscribe(self, rid: RequestId, params: dict[str, Any],
                     envelope: Envelope | None) -> dict[str, Any]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, "resources/unsubscribe needs a string uri")
        self._subscribed.discard(uri)
        return {}

    def _get_prompt(self, rid: RequestId, params: dict[str, Any],
                    envelope: Envelope | None) -> None:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, "prompts/get needs a string name")
        if type(arguments) is not dict or not all(type(v) is str for v in arguments.values()):
            raise RpcError(INVALID_PARAMS, "prompts/get arguments must map names to strings")
        prompt = self._prompts.get(name)
        if prompt is None:
            raise RpcError(INVALID_PARAMS, f"unknown prompt: {name}"[:300])
        missing = [a["name"] for a in prompt.arguments
                   if a.get("required") and a["name"] not in arguments]
        if missing:
            raise RpcError(INVALID_PARAMS, f"prompt {name} needs the arguments {missing}"[:300])
        self._start_call("prompt", name, prompt.fn, arguments, rid, params, envelope,
                         what=prompt.description)

    def _complete(self, rid: RequestId, params: dict[str, Any],
                  envelope: Envelope | None) -> dict[str, Any]:
        if type(params.get("ref")) is not dict or type(params.get("argument")) is not dict:
            raise RpcError(INVALID_PARAMS, "completion/complete needs ref and argument objects")
        return {"completion": {"values": [], "total": 0, "hasMore": False}}

    def _listen(self, rid: RequestId, params: dict[str, Any],
                envelope: Envelope | None) -> None:
        asked = params.get("notifications")
        if type(asked) is not dict:
            raise RpcError(INVALID_PARAMS, "subscriptions/listen needs a notifications object")
        if len(self._listens) >= MAX_LISTENS:
            raise RpcError(INTERNAL_ERROR, f"{MAX_LISTENS} listen streams are open already")
        accepted = accept_listen(asked, MAX_SUBSCRIPTIONS)
        self._listens[rid] = accepted
        self._era = self._era or "modern"
        self._notify("notifications/subscriptions/acknowledged",
                     {"_meta": {SUBSCRIPTION_ID_KEY: rid}, "notifications": accepted})  # SB-02


def _nothing() -> None:
    """No driver to wake."""


_Method = Callable[[MemoryServer, RequestId, dict[str, Any], Envelope | None],
                   "dict[str, Any] | None"]
_METHODS: dict[str, _Method] = {
    "initialize": MemoryServer._initialize,
    "server/discover": MemoryServer._discover,
    "ping": MemoryServer._ping,
    "logging/setLevel": MemoryServer._set_level,
    "tools/list": MemoryServer._list_tools,
    "tools/call": MemoryServer._call_tool,
    "resources/list": MemoryServer._list_resources,
    "resources/templates/list": MemoryServer._list_templates,
    "resources/read": MemoryServer._read,
    "resources/subscribe": MemoryServer._subscribe,
    "resources/unsubscribe": MemoryServer._unsubscribe,
    "prompts/list": MemoryServer._list_prompts,
    "prompts/get": MemoryServer._get_prompt,
    "completion/complete": MemoryServer._complete,
    "subscriptions/listen": MemoryServer._listen,
}


def _task_method(method: str) -> _Method:
    def serve(server: MemoryServer, rid: RequestId, params: dict[str, Any],
              envelope: Envelope | None) -> dict[str, Any] | None:
        return server._tasks.serve(method, rid, params, envelope)
    return serve


_METHODS.update({method: _task_method(method) for method in TASK_METHODS})
