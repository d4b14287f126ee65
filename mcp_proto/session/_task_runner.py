"""The task runner (section 9): a tool call that became a task, polled to its end.

:class:`TaskRunner` owns every :class:`TaskRun` of a session: its own requests (``tasks/get``,
``tasks/result``, ``tasks/update``, ``tasks/cancel``), the heap of poll times and total
deadlines, the progress tokens that stay live until the task is terminal, and the 2026-07-28
inputs asked of the host.  Both forms are run here: 2025-11-25 (the call is sent with
``task``, the outcome comes from ``tasks/result``, TK-01..05) and the 2026-07-28 extension
(the server may answer any call with a task; a terminal ``tasks/get`` carries the outcome,
TX-01..09).  The host sees only the call's handle and :class:`TaskStatus` events.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any, Protocol, TypeGuard

from .._errors import (
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    modern_rpc_error,
)
from .._events import Completed, Failed, Progress, RequestHandle, TaskStatus
from .._tasks import (
    MAX_POLL_FAILURES,
    Task,
    TaskCancelled,
    TaskNotFound,
    TaskStateError,
    legal_transition,
    parse_task,
    poll_delay,
)
from .._types import Tool
from ..wire._jsonrpc import RequestId
from ._modern import parse_input_required
from ._operations import TaskRun, raw_result
from ._outbox import Answer, Pending, Wire
from ._server_requests import INVALID_PARAMS, ServerRequests, check_json, refusal
from ._state import State

__all__ = ["TIMER_SLACK", "TaskHost", "TaskRunner", "finite_number"]

#: Stale task-timer entries tolerated before the heap is rebuilt (each live task has at most
#: two live entries): large enough that a rebuild is rare, small enough to bound memory.
TIMER_SLACK = 256


def finite_number(value: object) -> TypeGuard[float]:
    """An int (not a bool) or a finite float: what progress values may be (P-02)."""
    return type(value) is int or (type(value) is float and math.isfinite(value))



class TaskHost(Protocol):
    """What the runner reads of its session."""

    state: State
    era: str | None
    protocol_version: str | None
    capabilities: dict[str, Any]
    server_capabilities: dict[str, Any]
    accept_tasks: bool

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools of the last complete ``tools/list`` (their ``taskSupport``)."""


class _TaskAnswer(Answer):
    """A task's own request: never ``notifications/cancelled`` (TK-05), never the host's."""

    __slots__ = ("runner",)
    hosted = False

    def __init__(self, runner: TaskRunner) -> None:
        self.runner = runner

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.runner.on_answer(p, result, now)

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.runner.on_failure(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.runner.on_failure(p, error)


class TaskRunner:
    """Every task a session polls, by the call's handle id, task id and progress token."""

    __slots__ = ("_answer", "_asks", "_owner", "_wire", "calls_as_tasks", "caps_read", "inputs",
                 "run_ids", "runs", "timers", "tokens")

    def __init__(self, owner: TaskHost, wire: Wire, asks: ServerRequests) -> None:
        self._owner = owner
        self._wire = wire
        self._asks = asks
        self._answer = _TaskAnswer(self)
        self.runs: dict[int, TaskRun] = {}  # by the call's handle id
        self.timers: list[tuple[float, int]] = []  # (poll or total deadline, handle id)
        self.run_ids: dict[str, TaskRun] = {}  # by taskId
        self.tokens: dict[int, TaskRun] = {}  # progress tokens of running tasks
        self.inputs: dict[RequestId, TaskRun] = {}  # 2026 input asked of the host
        # Whether the server runs tool calls as tasks (calls_as_tasks), for the capabilities
        # object it was read from (caps_read; asked on every call: worth not walking the
        # dicts each time).
        self.caps_read: dict[str, Any] | None = None
        self.calls_as_tasks = False

    # -- what the server offers ----------------------------------------------------------------

    def server_tasks(self, *path: str) -> bool:
        """Whether the server declared ``capabilities.tasks.<path>`` (2025-11-25, TK-01)."""
        node: object = self._owner.server_capabilities.get("tasks")
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return isinstance(node, dict)

    def _tool_calls_as_tasks(self) -> bool:
        """``tasks.requests.tools.call`` declared (2025-11-25), read once per capabilities."""
        caps = self._owner.server_capabilities
        if caps is not self.caps_read:
            self.caps_read = caps
            self.calls_as_tasks = self.server_tasks("requests", "tools", "call")
        return self.calls_as_tasks

    def mode(self, name: str, task: bool | None) -> str | None:
        """How a ``tools/call`` may become a task: ``"legacy"`` (sent with ``task``, TK-01),
        ``"modern"`` (the server may answer with one, TX-02) or None."""
        owner = self._owner
        if owner.era == "modern":
            return "modern" if owner.accept_tasks and task is not False else None
        if owner.protocol_version is None or owner.protocol_version < "2025-11-25":
            return None
        if not (self.calls_as_tasks if owner.server_capabilities is self.caps_read
                else self._tool_calls_as_tasks()):
            return None  # the server cannot run tool calls as tasks
        tool = owner.tools.get(name)
        support = tool.task_support if tool is not None else "forbidden"
        if support == "required" or (support == "optional" and task):
            return "legacy"
        return None

    def support_unknown(self, name: str) -> bool:
        """See :meth:`ClientSession.task_support_unknown`."""
        owner = self._owner
        if owner.era != "legacy" or owner.protocol_version is None \
                or owner.protocol_version < "2025-11-25" \
                or not (self.calls_as_tasks if owner.server_capabilities is self.caps_read
                        else self._tool_calls_as_tasks()):
            return False
        return name not in owner.tools

    def check(self, method: str) -> None:
        """Raise :class:`LocalProtocolError` when ``method`` (a task operation) is not
        available from this server."""
        era = self._owner.era
        if era == "legacy" and not self.server_tasks():
            raise LocalProtocolError(f"the server did not declare the 'tasks' capability, so "
                                     f"{method} is not available (TK-05)")
        if era == "modern" and not self._owner.accept_tasks:
            raise LocalProtocolError(f"{method} needs the tasks extension: create the session "
                                     "with accept_tasks=True (TX-01)")

    def _can_cancel(self) -> bool:
        return self._owner.era == "modern" or self.server_tasks("cancel")

    # -- starting --------------------------------------------------------------------------------

    def created(self, p: Pending, result: dict[str, Any], now: float | None) -> bool:
        """A ``tools/call`` answer (``p`` has a task mode): if it is a task, start polling it
        and return True; a plain result returns False."""
        if p.task_mode == "modern":
            if result.get("resultType") != "task":
                return False
            obj: object = result
        elif "task" in result and "content" not in result:  # TK-02: CreateTaskResult
            obj = result["task"]
        else:  # a server that ran it plainly after all: a plain result
            return False
        events = self._wire.events
        modern = p.task_mode == "modern"
        try:
            task = parse_task(obj, modern=modern, where=f"{p.method} task")
        except RemoteProtocolError as exc:
            events.append(Failed(handle=p.handle, error=exc))
            return True
        if task.task_id in self.run_ids:
            events.append(Failed(handle=p.handle, error=TaskStateError(
                f"the server reused the id {task.task_id!r} of a task still running"[:200])))
            return True
        run = TaskRun(p.handle, p.parse, modern, p.total_deadline, p.total_timeout,
                      p.idle_timeout)
        if p.progress:
            run.token = p.handle.id
            run.last_progress = p.last_progress
            self.tokens[run.token] = run
        self._track(run)
        self._update(run, task, None, self._wire.now if now is None else now)
        return True

    def resume(self, handle: RequestHandle[Any], task_id: str, parse: Callable[..., Any],
               now: float, total: float) -> None:
        """Poll task ``task_id`` (another session's) to its end under ``handle``.  Raises
        :class:`LocalProtocolError` if it is polled already."""
        if task_id in self.run_ids:
            raise LocalProtocolError(f"task {task_id!r} is already being polled")
        run = TaskRun(handle, parse, self._owner.era == "modern", now + total, total,
                      self._wire.limits.idle_timeout)
        run.task_id = task_id
        self._track(run)
        self.run_ids[task_id] = run
        self._poll(run, now)

    def _request(self, run: TaskRun, method: str, params: dict[str, Any], now: float,
                 timeout: float | None = None) -> None:
        """One of the task's own requests (``tasks/get`` ...), under the call's handle."""
        wire = self._wire
        remaining = run.total_deadline - now
        if timeout is None:
            timeout = min(run.idle_timeout, remaining)
        p = wire.request(wire.take_id(), run.handle, method, params, now, max(timeout, 1e-3),
                         raw_result, self._answer, total_deadline=run.total_deadline,
                         idle_timeout=max(timeout, 1e-3))
        p.run = run
        run.rids.add(p.rid)

    # -- time ----------------------------------------------------------------------------------

    def _track(self, run: TaskRun) -> None:
        self.runs[run.handle.id] = run
        heapq.heappush(self.timers, (run.total_deadline, run.handle.id))

    def _schedule(self, run: TaskRun, at: float) -> None:
        run.poll_at = at
        heapq.heappush(self.timers, (at, run.handle.id))

    def soonest(self) -> float | None:
        """The earliest live task deadline (stale heap entries are dropped here)."""
        timers = self.timers
        runs = self.runs
        while timers:
            at, hid = timers[0]
            run = runs.get(hid)
            if run is not None and at in (run.poll_at, run.total_deadline):
                return at
            heapq.heappop(timers)
        return None

    def due(self, now: float) -> None:
        """Poll each task whose time came; end each whose total deadline passed."""
        while (timers := self.timers) and timers[0][0] <= now:  # _finish() may replace it
            _at, hid = heapq.heappop(timers)
            run = self.runs.get(hid)
            if run is None:
                continue
            if run.total_deadline <= now:
                self.end(run, RequestTimeout(run.handle.method, run.total_timeout, "total"),
                         cancel=True)
            elif run.poll_at is not None and run.poll_at <= now:
                self._poll(run, now)

    def _poll(self, run: TaskRun, now: float) -> None:
        assert run.task_id is not None
        run.poll_at = None
        run.polling = True
        self._request(run, "tasks/get", {"taskId": run.task_id}, now)

    def nudged(self, params: dict[str, Any], now: float | None) -> bool:
        """A status notification for a task we poll: poll now instead of at the interval (it
        is a hint: only polls change what the host sees).  False if the task is not ours."""
        run = self.run_ids.get(params.get("taskId"))  # type: ignore[arg-type]
        if run is None:
            return False
        if run.poll_at is not None and now is not None and now < run.poll_at:
            self._schedule(run, now)
        return True

    # -- what the server says ------------------------------------------------------------------

    def _update(self, run: TaskRun, task: Task, detail: dict[str, Any] | None,
                now: float) -> None:
        """A poll (or the creation) says the task is now ``task``: check the transition,
        tell the host, and take the next step."""
        old = run.task
        if run.task_id is not None and task.task_id != run.task_id:
            self.end(run, TaskStateError(f"tasks/get answered for task {task.task_id!r}, "
                                         f"not {run.task_id!r}"[:200]), cancel=True)
            return
        if not legal_transition(None if old is None else old.status, task.status):
            self.end(run, TaskStateError(
                f"task {task.task_id!r} went from {old.status if old else None!r} to "
                f"{task.status!r}, which section 9 does not allow"[:300]), cancel=False)
            return
        run.task = task
        if run.task_id is None:
            run.task_id = task.task_id
            self.run_ids[task.task_id] = run
        if old is None or (old.status, old.status_message) != (task.status,
                                                               task.status_message):
            self._wire.events.append(TaskStatus(handle=run.handle, task=task))
        status = task.status
        if run.modern:
            if status in ("completed", "failed"):
                if detail is None:  # a creation already terminal: its outcome comes by poll
                    self._schedule(run, now)
                else:
                    self._outcome(run, detail)
                return
            if status == "input_required" and detail is not None:
                self._inputs_asked(run, detail, now)
        elif status in ("completed", "failed", "input_required"):
            # TK-04: tasks/result gives the outcome (and, while input is required, carries
            # the server's requests on its stream): ask once.
            if not run.fetching:
                run.fetching = True
                self._request(run, "tasks/result", {"taskId": task.task_id}, now,
                              timeout=run.total_deadline - now)
            if status != "input_required":
                return  # the outcome comes with tasks/result
        if status == "cancelled":
            self.end(run, TaskCancelled(task.task_id, task.status_message), cancel=False)
            return
        if not run.polling:  # (a cancel_task answer while a poll is out: that poll goes on)
            self._schedule(run, now + poll_delay(task))

    def cancelled(self, task_id: str, task: Task, result: dict[str, Any]) -> None:
        """A ``cancel_task`` answer (2025-11-25) describes a task this session polls."""
        run = self.run_ids.get(task_id)
        if run is not None and not run.done:
            self._update(run, task, result, self._wire.now)

    def _outcome(self, run: TaskRun, detail: dict[str, Any]) -> None:
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
        self._finish(run)
        if isinstance(outcome, MCPError):
            self._wire.events.append(Failed(handle=run.handle, error=outcome))
        else:
            self._wire.events.append(Completed(handle=run.handle, value=outcome))

    def on_answer(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        run = p.run
        assert run is not None
        run.rids.discard(p.rid)
        if run.done:
            return  # tasks/cancel acknowledged, or an answer after the end: nothing to do
        wire = self._wire
        at = wire.now if now is None else now
        wire.compact()
        if p.method == "tasks/get":
            run.polling = False
            run.poll_failures = 0
            if run.modern and result.get("resultType", "complete") != "complete":
                self.end(run, RemoteProtocolError(
                    f"tasks/get answered with resultType {result.get('resultType')!r}"[:200]),
                    cancel=True)
                return
            try:
                task = parse_task(result, modern=run.modern, where="tasks/get")
            except RemoteProtocolError as exc:
                self.end(run, exc, cancel=not isinstance(exc, TaskStateError))
                return
            self._update(run, task, result, at)
        elif p.method == "tasks/result":
            self._finish(run)
            try:
                value = run.parse(result)
            except RemoteProtocolError as exc:
                wire.events.append(Failed(handle=run.handle, error=exc))
                return
            wire.events.append(Completed(handle=run.handle, value=value))

    def on_failure(self, p: Pending, error: MCPError) -> None:
        run = p.run
        assert run is not None
        run.rids.discard(p.rid)
        if run.done:
            return
        now = self._wire.now
        lost = isinstance(error, (ConnectionClosed, RequestTimeout)) or (
            isinstance(error, RemoteProtocolError) and not isinstance(error, TaskStateError))
        if p.method == "tasks/get":
            run.polling = False
            if lost and run.poll_failures < MAX_POLL_FAILURES:
                # A poll is safe to repeat: a dropped stream or a silent server costs one
                # interval, not the task (it still runs on the server).
                run.poll_failures += 1
                self._schedule(run, now + poll_delay(run.task))
                return
        elif p.method == "tasks/result":
            if isinstance(error, ConnectionClosed):  # its stream dropped: poll, ask again
                run.fetching = False
                if not run.polling:
                    self._schedule(run, now + poll_delay(run.task))
                return
            self._finish(run)  # TK-04: the task's own JSON-RPC error
            self._wire.events.append(Failed(handle=run.handle, error=error))
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
            self.end(run, error, cancel=False)
            return
        # A server the client could not reach has not failed the task: leave it running.
        self.end(run, error, cancel=not lost)

    def progress(self, token: int, params: dict[str, Any]) -> bool:
        """Progress for a running task's call (its token lives until the task is terminal):
        True if the token was a task's."""
        run = self.tokens.get(token)
        if run is None:
            return False
        progress = params.get("progress")
        last = run.last_progress
        if not finite_number(progress) or (last is not None and progress <= last):
            self._wire.stats.progress_dropped += 1
            return True
        run.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        self._wire.events.append(Progress(handle=run.handle, progress=progress,
                                          total=total if finite_number(total) else None,
                                          message=message if type(message) is str else None))
        return True

    # -- ending ----------------------------------------------------------------------------------

    def cancel(self, handle: RequestHandle[Any], reason: str | None) -> bool:
        """The host cancels a call that became a task: ``tasks/cancel`` (TK-05).  False if
        ``handle`` is not a task's."""
        run = self.runs.get(handle.id)
        if run is None or run.handle != handle:
            return False
        self.end(run, RequestCancelled(handle.method, reason), cancel=True)
        return True

    def end(self, run: TaskRun, error: MCPError, *, cancel: bool) -> None:
        """End a task's call with ``error``; with ``cancel``, tell the server (``tasks/cancel``,
        TK-05 / TX-06) unless the task is already terminal."""
        task = run.task
        self._finish(run)
        wire = self._wire
        if cancel and task is not None and not task.terminal \
                and self._owner.state is State.READY and self._can_cancel():
            p = wire.request(wire.take_id(), run.handle, "tasks/cancel",
                             {"taskId": task.task_id}, wire.now, run.idle_timeout, raw_result,
                             self._answer, idle_timeout=run.idle_timeout)
            p.run = run  # done: its answer is dropped
        wire.events.append(Failed(handle=run.handle, error=error))

    def _finish(self, run: TaskRun) -> None:
        """Forget a task's call (its outcome is being emitted): requests in flight are
        dropped without a cancellation, open questions withdrawn."""
        run.done = True
        run.poll_at = None
        self.runs.pop(run.handle.id, None)
        if len(self.timers) > 2 * len(self.runs) + TIMER_SLACK:  # ended tasks' entries
            runs = self.runs
            self.timers = [(at, hid) for at, hid in self.timers
                           if (r := runs.get(hid)) is not None
                           and at in (r.poll_at, r.total_deadline)]
            heapq.heapify(self.timers)
        if run.task_id is not None and self.run_ids.get(run.task_id) is run:
            del self.run_ids[run.task_id]
        if run.token is not None:
            self.tokens.pop(run.token, None)
        pending = self._wire.pending
        for rid in run.rids:
            q = pending.get(rid)
            if q is not None and q.run is run:
                del pending[rid]
        run.rids.clear()
        for sid in run.inputs:
            self.inputs.pop(sid, None)
            self._asks.withdraw(sid, "the task ended")
        run.inputs.clear()

    def shutdown(self, error: MCPError, failed: set[RequestHandle[Any]]) -> None:
        """The session ended: each call not among ``failed`` already fails with ``error``."""
        events = self._wire.events
        for run in self.runs.values():
            run.done = True
            if run.handle not in failed:
                events.append(Failed(handle=run.handle, error=error))
        self.runs.clear()
        self.timers.clear()
        self.run_ids.clear()
        self.tokens.clear()
        self.inputs.clear()

    # -- 2026: input for a task ------------------------------------------------------------------

    def _inputs_asked(self, run: TaskRun, detail: dict[str, Any], now: float) -> None:
        """2026 ``input_required``: ask the host each new input (keys deduplicated across
        polls, TX-05); the answers go back with ``tasks/update``."""
        assert run.task is not None
        try:
            requests, _state = parse_input_required(
                {"inputRequests": detail.get("inputRequests"), "requestState": ""},
                f"task {run.task.task_id}")
        except RemoteProtocolError as exc:
            self.end(run, exc, cancel=True)
            return
        for key, (method, params) in requests.items():
            if key in run.asked:
                continue
            refused = refusal(self._owner.capabilities, method, params)
            if refused is not None:
                self.end(run, RemoteProtocolError(
                    f"task {run.task.task_id!r} needs {method} input ({key!r}) the client "
                    f"cannot give: {refused[1]}"[:300]), cancel=True)
                return
            run.asked.add(key)
            sid = f"task-{run.handle.id}-{key}"
            run.inputs[sid] = key
            self.inputs[sid] = run
            self._asks.ask(sid, method, params)

    def input_answer(self, sid: RequestId, result: dict[str, Any], now: float | None) -> bool:
        """The host answered a task's input: ``tasks/update`` (TX-05: partial sets are fine,
        no answer waits for another).  Raises :class:`LocalProtocolError` for an answer that
        is not JSON (the question stays open)."""
        run = self.inputs[sid]
        check_json(self._asks.open.get(sid), result)
        del self.inputs[sid]
        self._asks.take(sid)
        key = run.inputs.pop(str(sid))
        if run.task_id is not None:
            self._request(run, "tasks/update",
                          {"taskId": run.task_id, "inputResponses": {key: result}},
                          self._wire.now if now is None else now)
        return True

    def input_refused(self, sid: RequestId, code: int, message: str, data: Any) -> bool:
        """The host answered a task's input with an error: a task's input has no error
        answer either, so the task is cancelled and the call fails."""
        run = self.inputs.pop(sid)
        self._asks.take(sid)
        run.inputs.pop(str(sid), None)
        self.end(run, RpcError(code, message, data, method=f"input for task "
                               f"{run.task.task_id if run.task else '?'}"), cancel=True)
        return True
