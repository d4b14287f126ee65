"""The tasks of :class:`~._server.MemoryServer` (section 9): a ``tools/call`` run as a task.

A tool registered with ``task_support="optional"`` or ``"required"`` may run as a task; one
with ``"forbidden"`` (the default) never does.  The handler runs as any call does (a
:class:`~._catalog.HandlerCall` from ``next_call()``, its outcome to ``finish()``); only
the answer differs.  Both wire forms, as the client's task runner speaks them:

- 2025-11-25 (TK-01..06), declared as ``capabilities.tasks {list, cancel, requests.tools.call}``
  and each tool's ``execution.taskSupport``: a ``tools/call`` with ``task {ttl?}`` is answered
  at once ``{task}`` (``working``); ``task`` on a ``forbidden`` tool, or none on a
  ``required`` one, is -32601.  ``tasks/get`` gives the Task, ``tasks/result`` the call's
  result (with the ``related-task`` ``_meta``) or its JSON-RPC error, held until the task
  ends; ``tasks/list`` pages every task; ``tasks/cancel`` gives the task ``cancelled`` (a
  terminal one: -32602).  Each change of status is also sent as ``notifications/tasks/status``
  (a hint: the client polls).  A tool result with ``isError`` ends the task ``failed``.  A
  request to the client during a task carries the ``related-task`` ``_meta`` and makes the
  task ``input_required`` until it is answered.
- 2026-07-28, the ``io.modelcontextprotocol/tasks`` extension (TX-01..08), listed in
  ``server/discover``'s ``capabilities.extensions``: a ``tools/call`` of a tool with task
  support from a client that declared the extension in the request's capabilities is
  answered ``{resultType: "task", <task>}`` (the client has no way to ask for a plain run);
  without the extension an ``optional`` tool runs plainly and a ``required`` one is -32021.
  ``tasks/get`` gives the DetailedTask (``result`` when completed, ``error`` when failed,
  ``inputRequests`` when input is required), ``tasks/update`` delivers ``inputResponses``,
  ``tasks/cancel`` acknowledges (a terminal task stays as it is); ``tasks/result`` and
  ``tasks/list`` are -32601 there; any ``tasks/*`` from a client without the extension
  -32021.  A request to the client during a task (``call_request``) becomes one of the
  task's ``inputRequests`` (key ``input-<request id>``), its answer the ``tasks/update``
  response, delivered by ``next_answer()`` as any answer.

Either form: ids ``task-<n>``, unique for the connection; an unknown id (or one of the other
form) is -32602; times come from the ``now`` the server is given (ISO 8601 of it: a
monotonic clock dates tasks near 1970); ``pollInterval`` :data:`POLL_INTERVAL_MS`; ended
tasks are dropped once their TTL passed.  ``tasks/cancel`` marks the handler's call
cancelled (``is_cancelled``), and its outcome is then dropped.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Protocol

from .._errors import LocalProtocolError, RpcError
from .._tasks import RELATED_TASK_KEY, TASKS_EXTENSION, TERMINAL
from .._types import RequestId
from ..wire._json import dumps
from ._catalog import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_CAPABILITY,
    Envelope,
    list_page,
)

__all__ = [
    "DEFAULT_TTL_MS",
    "MAX_OPEN_INPUTS",
    "MAX_TASKS",
    "MAX_TTL_MS",
    "MAX_WAITING_RESULTS",
    "MISSING_CAPABILITY",
    "POLL_INTERVAL_MS",
    "TASK_METHODS",
    "TASK_SUPPORT",
    "ServerTask",
    "TaskHost",
    "TaskTable",
]

#: Tasks kept, running and ended.  The running ones are bounded by the calls in flight
#: already; the rest are ended tasks kept for ``tasks/get`` / ``tasks/result`` until their
#: TTL.  A test makes a few; a client making tasks in a loop must not grow the table: past it
#: the oldest ended task goes, and when every task still runs a new one is refused -32603.
MAX_TASKS = 512
#: ``tasks/result`` requests one task holds until it ends (a client asks once; one asking
#: again after each lost stream must not grow the list): more are refused -32603.
MAX_WAITING_RESULTS = 16
#: Open ``inputRequests`` of one 2026 task (each a handler waiting on the client): more
#: raise :class:`LocalProtocolError` in ``call_request``.
MAX_OPEN_INPUTS = 64
#: A task's lifetime when the client asks none (2026 clients cannot ask), and the longest
#: granted (a day), in ms; at least a second (a task gone before one poll is useless).
DEFAULT_TTL_MS = 60_000
MAX_TTL_MS = 86_400_000
MIN_TTL_MS = 1_000
#: The suggested poll interval, in ms: the client's own floor, so that a test is quick.
POLL_INTERVAL_MS = 50
#: -32021 (2026-07-28): the request needs a capability (here the extension) not declared.
MISSING_CAPABILITY = -32021
TASK_SUPPORT = ("forbidden", "optional", "required")
TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update")
_LATEST_WALL = 253_402_300_799.0  # 9999-12-31T23:59:59Z


def wall(now: float) -> str:
    """ISO 8601 UTC (ms) of ``now`` (clamped: never raises)."""
    at = min(now, _LATEST_WALL) if now >= 0 else 0.0  # (NaN too)
    text = datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def declared(envelope: Envelope) -> bool:
    """Whether a 2026 request's client capabilities declare the tasks extension (TX-01)."""
    extensions = envelope.capabilities.get("extensions")
    return type(extensions) is dict and TASKS_EXTENSION in extensions


def legacy_tasks(version: str | None) -> bool:
    """Whether a handshake-era version has tasks (2025-11-25 on)."""
    return version is not None and version >= "2025-11-25"


class TaskHost(Protocol):
    """What the table needs of its server."""

    page_size: int
    now: float
    protocol_version: str | None

    def _task_reply(self, rid: RequestId, answer: dict[str, Any] | RpcError) -> None:
        """Answer a held ``tasks/result`` (handshake era)."""

    def _task_note(self, task: dict[str, Any]) -> None:
        """``notifications/tasks/status`` (handshake era)."""

    def _task_cancel(self, call_id: int) -> None:
        """Mark the task's handler call cancelled."""

    def _task_input(self, rid: RequestId, answer: dict[str, Any] | RpcError) -> None:
        """The answer to a 2026 task's input request, for ``next_answer()``."""


class ServerTask:
    """One task: its state, and what its answers need."""

    __slots__ = ("asks", "call_id", "capabilities", "created", "error", "inputs", "modern",
                 "result", "status", "status_message", "task_id", "ttl_ms", "updated",
                 "waiting")

    def __init__(self, task_id: str, call_id: int, modern: bool, ttl_ms: int,
                 capabilities: dict[str, Any], now: float) -> None:
        self.task_id = task_id
        self.call_id = call_id
        self.modern = modern
        self.ttl_ms = ttl_ms
        self.capabilities = capabilities  # a 2026 client's, for its input requests
        self.created = self.updated = now
        self.status = "working"
        self.status_message: str | None = None
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.waiting: list[RequestId] = []  # held tasks/result requests (handshake era)
        self.asks: set[RequestId] = set()  # requests to the client unanswered (handshake era)
        self.inputs: dict[str, tuple[RequestId, str, dict[str, Any]]] = {}  # 2026: key ->

    def wire(self) -> dict[str, Any]:
        """The Task object of its era (TK-03 / TX-03)."""
        ttl, poll = ("ttlMs", "pollIntervalMs") if self.modern else ("ttl", "pollInterval")
        out: dict[str, Any] = {"taskId": self.task_id, "status": self.status,
                               "createdAt": wall(self.created),
                               "lastUpdatedAt": wall(self.updated), ttl: self.ttl_ms,
                               poll: POLL_INTERVAL_MS}
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        return out

    def detailed(self) -> dict[str, Any]:
        """The 2026 DetailedTask (TX-04)."""
        out = self.wire()
        if self.status == "input_required":
            out["inputRequests"] = {key: {"method": method, "params": params}
                                    for key, (_rid, method, params) in self.inputs.items()}
        elif self.status == "completed" and self.result is not None:
            out["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            out["error"] = self.error
        return out

    def outcome(self) -> dict[str, Any] | RpcError:
        """What ``tasks/result`` answers for this ended task (TK-04)."""
        if self.result is not None:
            meta = self.result.get("_meta")
            return {**self.result, "_meta": {**(meta if type(meta) is dict else {}),
                                             RELATED_TASK_KEY: {"taskId": self.task_id}}}
        if self.error is not None:
            return RpcError(self.error["code"], self.error["message"], self.error.get("data"))
        return RpcError(INTERNAL_ERROR, f"task {self.task_id} was cancelled")


class TaskTable:
    """Every task of one connection, in creation order."""

    def __init__(self, host: TaskHost) -> None:
        self._host = host
        self._tasks: dict[str, ServerTask] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, task_id: str) -> ServerTask | None:
        return self._tasks.get(task_id)

    # -- a tools/call ------------------------------------------------------------------------

    def plan(self, support: str, params: dict[str, Any], envelope: Envelope | None
             ) -> int | None:
        """The TTL (ms) of the task a ``tools/call`` of a tool with ``support`` becomes, or
        None when it runs plainly.  Raises :class:`RpcError` (-32601, -32021, -32602) for a
        call its tool's support refuses, -32603 when the table is full."""
        if envelope is not None:
            if support == "forbidden":
                return None
            if not declared(envelope):
                if support == "required":
                    raise RpcError(MISSING_CAPABILITY, f"this tool runs only as a task: declare "
                                   f"the {TASKS_EXTENSION} extension (TX-02)")
                return None
            asked: int | None = None
        else:
            if not legacy_tasks(self._host.protocol_version):
                return None  # no tasks before 2025-11-25: a task parameter is ignored
            task = params.get("task")
            if task is None:
                if support == "required":
                    raise RpcError(METHOD_NOT_FOUND, "this tool requires task-augmented "
                                   "execution: call it with task (TK-01)")
                return None
            if support == "forbidden":
                raise RpcError(METHOD_NOT_FOUND, "this tool does not support task-augmented "
                               "execution (TK-01)")
            if type(task) is not dict:
                raise RpcError(INVALID_PARAMS, "tools/call task must be an object")
            ttl = task.get("ttl")
            if ttl is not None and (type(ttl) is not int or ttl < 0):
                raise RpcError(INVALID_PARAMS, "task ttl must be a non-negative integer of ms")
            asked = ttl
        self._make_room()
        return DEFAULT_TTL_MS if asked is None else min(max(asked, MIN_TTL_MS), MAX_TTL_MS)

    def start(self, call_id: int, ttl_ms: int, envelope: Envelope | None
              ) -> tuple[str, dict[str, Any]]:
        """A new task for call ``call_id``: its id and the CreateTaskResult (TK-02, TX-02)."""
        task_id = f"task-{self._next}"
        self._next += 1
        task = ServerTask(task_id, call_id, envelope is not None, ttl_ms,
                          envelope.capabilities if envelope is not None else {},
                          self._host.now)
        self._tasks[task_id] = task
        if task.modern:
            return task_id, {"resultType": "task", **task.wire()}
        return task_id, {"task": task.wire()}

    def finished(self, task_id: str, answer: dict[str, Any] | RpcError, now: float) -> None:
        """The task's handler ended: ``answer`` is its ``CallToolResult`` or the JSON-RPC
        error it raised.  Nothing changes for a task already ended (cancelled)."""
        task = self._tasks.get(task_id)
        if task is None or task.status in TERMINAL:
            return
        if isinstance(answer, RpcError):
            task.error = {"code": answer.code, "message": answer.message}
            if answer.data is not None:
                task.error["data"] = answer.data
            task.status_message = answer.message[:300]
            self._set(task, "failed", now)
        else:
            task.result = answer
            failed = not task.modern and answer.get("isError") is True  # 11-25: failed
            self._set(task, "failed" if failed else "completed", now)

    # -- input during a task -----------------------------------------------------------------

    def ask(self, task_id: str, rid: RequestId, method: str, params: dict[str, Any] | None,
            now: float) -> bool:
        """A handler of a task asks the client: for a 2026 task the request becomes one of
        its input requests (True); for a handshake-era one it is sent, tagged (False; then
        :meth:`asking`).  Raises :class:`LocalProtocolError` (2026) when the client did not
        declare the capability the method needs, for ``ping``, params that are not JSON,
        past :data:`MAX_OPEN_INPUTS`, or a task that ended."""
        task = self._tasks.get(task_id)
        if task is None or not task.modern:
            return False
        needed = REQUEST_CAPABILITY.get(method)
        if needed is None:
            raise LocalProtocolError(f"{method} cannot be a task's input request")
        if needed not in task.capabilities:
            raise LocalProtocolError(f"{method} needs the client capability {needed!r}, which "
                                     "the client did not declare")
        if task.status in TERMINAL:
            raise LocalProtocolError(f"task {task_id} ended {task.status}")
        if len(task.inputs) >= MAX_OPEN_INPUTS:
            raise LocalProtocolError(f"{MAX_OPEN_INPUTS} input requests of task {task_id} are "
                                     "open already")
        try:
            dumps(params or {})
        except (ValueError, TypeError, RecursionError) as exc:
            raise LocalProtocolError(f"not JSON: {type(exc).__name__}: {exc}"[:300]) from exc
        task.inputs[f"input-{rid}"] = (rid, method, dict(params or {}))
        self._set(task, "input_required", now)
        return True

    def asking(self, task_id: str, rid: RequestId, now: float) -> None:
        """A handshake-era task's request ``rid`` went to the client: ``input_required``
        until it is answered."""
        task = self._tasks.get(task_id)
        if task is not None and task.status not in TERMINAL:
            task.asks.add(rid)
            self._set(task, "input_required", now)

    def answered(self, rid: RequestId, now: float) -> None:
        """The client answered a request of a handshake-era task."""
        for task in self._tasks.values():
            if rid in task.asks:
                task.asks.discard(rid)
                if not task.asks and task.status == "input_required":
                    self._set(task, "working", now)
                return

    # -- tasks/* ------------------------------------------------------------------------------

    def serve(self, method: str, rid: RequestId, params: dict[str, Any],
              envelope: Envelope | None) -> dict[str, Any] | None:
        """Answer a ``tasks/*`` request (None: held, answered later).  Raises
        :class:`RpcError`."""
        host = self._host
        if envelope is not None and not declared(envelope):
            raise RpcError(MISSING_CAPABILITY, f"{method} needs the {TASKS_EXTENSION} "
                           "extension declared (TX-08)")
        if envelope is None and not legacy_tasks(host.protocol_version):
            raise RpcError(METHOD_NOT_FOUND, f"{method} does not exist in "
                           f"{host.protocol_version}")
        self.purge(host.now)
        if method == "tasks/list":
            items = [t.wire() for t in self._tasks.values() if not t.modern]
            page, cursor = list_page(items, params.get("cursor"), host.page_size, "tasks")
            return {"tasks": page, **({"nextCursor": cursor} if cursor else {})}
        task_id = params.get("taskId")
        task = self._tasks.get(task_id) if type(task_id) is str else None
        if task is None or task.modern != (envelope is not None):
            raise RpcError(INVALID_PARAMS, f"task not found: {str(task_id)[:200]}")
        if method == "tasks/get":
            return task.detailed() if task.modern else task.wire()
        if method == "tasks/result":
            if task.status in TERMINAL:
                outcome = task.outcome()
                if isinstance(outcome, RpcError):
                    raise outcome
                return outcome
            if len(task.waiting) >= MAX_WAITING_RESULTS:
                raise RpcError(INTERNAL_ERROR, f"{MAX_WAITING_RESULTS} tasks/result requests "
                               f"wait for task {task.task_id} already")
            task.waiting.append(rid)
            return None
        if method == "tasks/cancel":
            return self._cancel(task)
        return self._update(task, params)

    def holds(self, rid: RequestId) -> bool:
        """Whether ``rid`` is a held ``tasks/result`` (a request in flight)."""
        return any(w == rid and type(w) is type(rid) for t in self._tasks.values()
                   for w in t.waiting)

    def forget(self, rid: RequestId) -> None:
        """The client cancelled a held ``tasks/result``: it is not answered (C-03)."""
        for task in self._tasks.values():
            task.waiting = [w for w in task.waiting if w != rid or type(w) is not type(rid)]

    def purge(self, now: float) -> None:
        """Drop the ended tasks whose TTL passed (running ones are kept)."""
        gone = [t.task_id for t in self._tasks.values()
                if t.status in TERMINAL and now >= t.created + t.ttl_ms / 1000.0]
        for task_id in gone:
            del self._tasks[task_id]

    # -- inside -------------------------------------------------------------------------------

    def _make_room(self) -> None:
        self.purge(self._host.now)
        if len(self._tasks) < MAX_TASKS:
            return
        for task in self._tasks.values():
            if task.status in TERMINAL:
                del self._tasks[task.task_id]
                return
        raise RpcError(INTERNAL_ERROR, f"{MAX_TASKS} tasks are running already; try again "
                       "later")

    def _cancel(self, task: ServerTask) -> dict[str, Any]:
        if task.status in TERMINAL:
            if task.modern:
                return {}  # TX-06: cooperative; a terminal task stays as it is
            raise RpcError(INVALID_PARAMS, f"task {task.task_id} is already {task.status}: a "
                           "terminal task cannot be cancelled (TK-05)")
        task.status_message = "cancelled by the client"
        self._set(task, "cancelled", self._host.now)
        self._host._task_cancel(task.call_id)
        return {} if task.modern else task.wire()

    def _update(self, task: ServerTask, params: dict[str, Any]) -> dict[str, Any]:
        responses = params.get("inputResponses")
        if type(responses) is not dict:
            raise RpcError(INVALID_PARAMS, "tasks/update needs an inputResponses object")
        for key, answer in responses.items():
            entry = task.inputs.get(key)
            if entry is None or type(answer) is not dict:
                continue  # unknown, answered already, or no result: ignored (TX-05)
            del task.inputs[key]
            self._host._task_input(entry[0], answer)
        if not task.inputs and task.status == "input_required":
            self._set(task, "working", self._host.now)
        return {}

    def _set(self, task: ServerTask, status: str, now: float) -> None:
        """A new status: told (handshake era), and an ended task's waiters answered."""
        changed = status != task.status
        task.status = status
        task.updated = max(task.updated, now)
        host = self._host
        if not task.modern and changed:
            host._task_note(task.wire())
        if status not in TERMINAL:
            return
        waiting, task.waiting = task.waiting, []
        for rid in waiting:
            host._task_reply(rid, task.outcome())
        inputs, task.inputs = task.inputs, {}
        for rid, method, _params in inputs.values():
            host._task_input(rid, RpcError(INTERNAL_ERROR, f"task {task.task_id} ended "
                                           f"{status}: {method} is not answered"))
        task.asks.clear()
