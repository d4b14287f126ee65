"""The host's operations: sent, and what their answers become.

:class:`Operations` checks that an operation may be sent now (the lifecycle, the server's
capabilities), serves it from the cache when it can, and is the :class:`~._outbox.Answer` of
every request the host makes (a list, a tool call, a read ...).  A result may start a task
(section 9), ask for input (MRTR, section 7), be one page of a list (S-01), or be the value:
parsed, cached when the server allows it (S-02), and delivered as :class:`Completed`.  An
error response may be retried once: a -32022 in a version both sides speak (V-11), a cursor
the server forgot (S-02).  The part owns the tools of the last complete ``tools/list``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .._errors import (
    ConnectionClosed,
    ConnectionLost,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RpcError,
)
from .._events import Failed, RequestHandle, make_completed, make_handle
from .._tasks import Task, parse_task
from .._types import CallToolResult, Tool, parse_call_tool_result
from ._cache import MISS, ResponseCache
from ._era import EraChoice
from ._modern import CACHEABLE, MRTR_METHODS, mcp_header_params, ttl_seconds
from ._mrtr import InputGathering
from ._operations import ListWalk, raw_result
from ._outbox import Answer, Pending, Wire
from ._server_requests import INVALID_PARAMS
from ._state import CLOSED, READY, State, allowed_to_send
from ._task_runner import TaskRunner

__all__ = ["OperationHost", "Operations", "TaskOperations"]



class OperationHost(Protocol):
    """What the operations read (and, on a version retry, set) of their session."""

    state: State
    era: str | None
    protocol_version: str | None
    capabilities: dict[str, Any]
    server_capabilities: dict[str, Any]
    closed_error: MCPError | None
    check_mcp_headers: bool


class Operations(Answer):
    """The host's operations: the value (or the error) ends the handle the host holds."""

    __slots__ = ("_cache", "_era", "_inputs", "_owner", "_tasks", "_wire", "tools")
    replayable = True

    def __init__(self, owner: OperationHost, wire: Wire, era: EraChoice, cache: ResponseCache,
                 inputs: InputGathering, tasks: TaskRunner) -> None:
        self._owner = owner
        self._wire = wire
        self._era = era
        self._cache = cache
        self._inputs = inputs
        self._tasks = tasks
        self.tools: dict[str, Tool] = {}
        """The tools of the last complete ``tools/list``, by name."""

    # -- sending ------------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None, now: float,
                timeout: float | None, parse: Callable[[dict[str, Any]], Any], *,
                capability: str | None = None, progress: bool = False,
                walk: ListWalk | None = None, idle_timeout: float | None = None
                ) -> RequestHandle[Any]:
        """Send one of the host's operations; its handle ends with ``parse(result)``.  Raises
        :class:`ConnectionClosed` once the session is closed, :class:`LocalProtocolError`
        before Ready (``ping`` aside, L-05) or when the server did not declare
        ``capability`` (L-07); as :meth:`Wire.request` for bad params or timeouts."""
        owner = self._owner
        state = owner.state
        if state is not READY and not allowed_to_send(state, method):
            if state is CLOSED:
                if owner.closed_error is None:  # closed by the host
                    raise ConnectionClosed(f"cannot send {method}: the session is closed")
                raise ConnectionLost(f"cannot send {method}: the session is closed "
                                     f"({owner.closed_error})")
            raise LocalProtocolError(f"cannot send {method} while the session is "
                                     f"{state.value}; wait for Ready")
        if method == "initialize":
            raise LocalProtocolError("initialize is sent by ClientSession.initialize(), once")
        if capability is not None and capability not in owner.server_capabilities:
            raise LocalProtocolError(
                f"the server did not declare the {capability!r} capability, so {method} "
                "is not available (L-07)"
            )
        wire = self._wire
        wire.now = now
        rid = wire.next_id  # wire.take_id(), inlined (every request)
        wire.next_id = rid + 1
        handle: RequestHandle[Any] = make_handle(rid, method)
        wire.request(rid, handle, method, params, now, timeout, parse, self,
                     progress=progress, walk=walk, idle_timeout=idle_timeout)
        return handle

    def done_now(self, handle: RequestHandle[Any], value: Any) -> RequestHandle[Any]:
        """An operation that needs no request ends at once."""
        self._wire.events.append(make_completed(handle, value))
        return handle

    def cached(self, key: tuple[str, str], now: float) -> RequestHandle[Any] | None:
        """A fresh cached answer (S-02), completed at once, or None."""
        if self._owner.state is not State.READY:
            return None
        value = self._cache.get(key, now)
        if value is MISS:
            return None
        return self.done_now(RequestHandle(self._wire.take_id(), key[0]), value)

    def list_all(self, method: str, key: str, parse: Callable[[object], Any],
                 capability: str, now: float, timeout: float | None, *,
                 drops: bool = False, params: dict[str, Any] | None = None
                 ) -> RequestHandle[Any]:
        """Every page of a list (S-01), from the cache when fresh; ``[]`` at once when the
        server declared no ``capability``.  ``drops``: ``parse`` returns None for an item to
        leave out; ``params``: what each page's request carries beside the cursor
        (:class:`ListWalk`)."""
        owner = self._owner
        if owner.state is State.READY and capability not in owner.server_capabilities:
            return self.done_now(RequestHandle(self._wire.take_id(), method), [])
        limits = self._wire.limits
        walk = ListWalk(method, key, parse, max_pages=limits.max_pages,
                        max_items=limits.max_list_items, drops=drops, params=params)
        cached = self.cached(walk.cache_key, now)
        if cached is not None:
            return cached
        return self.request(method, params, now, timeout, raw_result, walk=walk)

    # -- answers ------------------------------------------------------------------------------

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        if p.task_mode is not None and self._tasks.created(p, result, now):
            return
        owner = self._owner
        modern = owner.era == "modern"
        events = self._wire.events
        if modern:
            kind = result.get("resultType")
            if kind is not None and kind != "complete":
                if kind == "input_required" and p.method in MRTR_METHODS:
                    self._inputs.on_input_required(p, result, now, owner.capabilities)
                else:  # M-07: an unknown value makes the response invalid
                    events.append(Failed(handle=p.handle, error=RemoteProtocolError(
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
                if modern:
                    self._cache.store(walk.cache_key, walk.ttl, value, now)
            else:
                value = p.parse(result)
                if modern and p.method in CACHEABLE and p.rounds == 0 and p.params is not None:
                    # MR-02: an answer after an MRTR round is never cached.
                    self._cache.store((p.method, str(p.params.get("uri", ""))),
                                      ttl_seconds(result), value, now)
        except RemoteProtocolError as exc:
            events.append(Failed(handle=p.handle, error=exc))
            return
        events.append(make_completed(p.handle, value))

    def on_error(self, p: Pending, error: MCPError) -> None:
        self._wire.events.append(Failed(handle=p.handle, error=error))

    def on_error_response(self, p: Pending, error: RpcError) -> None:
        wire = self._wire
        if not p.retried:
            version = self._era.retry_version(p, error) if self._owner.era == "modern" else None
            if version is not None:  # V-11: once, with a new id, in a mutual version
                self._owner.protocol_version = version
                wire.resend(p, wire.now)
                return
            if p.walk is not None and p.walk.pages and error.code == INVALID_PARAMS:
                # S-02: a cursor the server no longer knows: drop the pages, walk again once.
                walk = p.walk.again()
                retry = wire.request(wire.take_id(), p.handle, p.method, walk.params, wire.now,
                                     p.total_timeout, p.parse, self, walk=walk,
                                     total_deadline=p.total_deadline,
                                     idle_timeout=p.idle_timeout)
                retry.retried = True
                return
        self.on_error(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        wire = self._wire
        wire.cancelled(p.rid, reason)
        wire.events.append(Failed(handle=p.handle, error=error))

    def _checked_tools(self, tools: list[Any]) -> list[Any]:
        """Remember the tools (a transport mirrors their ``x-mcp-header`` arguments); with
        ``check_mcp_headers``, leave out a tool whose annotation is invalid and say so
        (T-06: MUST drop, SHOULD log)."""
        kept = []
        wire = self._wire
        for tool in tools:
            if self._owner.check_mcp_headers:
                try:
                    mcp_header_params(tool.input_schema)
                except ValueError as exc:
                    wire.bad(RemoteProtocolError(f"tool {tool.name!r} left out: {exc}"[:300]))
                    continue
            kept.append(tool)
        self.tools = {tool.name: tool for tool in kept}
        return kept

    def _next_page(self, p: Pending, walk: ListWalk, cursor: str, now: float | None) -> None:
        if now is None:  # final line at EOF: the session is about to close anyway
            self._wire.events.append(Failed(handle=p.handle, error=ConnectionLost(
                f"{p.method}: the server closed its output mid-list")))
            return
        wire = self._wire
        params = {"cursor": cursor} if walk.params is None else {**walk.params, "cursor": cursor}
        page = wire.request(wire.take_id(), p.handle, p.method, params, now,
                            p.total_timeout, p.parse, self, walk=walk,
                            total_deadline=p.total_deadline, idle_timeout=p.idle_timeout)
        page.retried = p.retried  # the walk restarts at most once (S-02)


class TaskOperations:
    """The tasks operations of :class:`ClientSession` (section 9; which provides what this
    class declares): whether a tool call must be a task, the server's tasks listed, one got or
    cancelled, a task another session created polled to its end.  The running of tasks is
    :class:`~._task_runner.TaskRunner`'s."""

    __slots__ = ()

    state: State
    era: str | None
    server_capabilities: dict[str, Any]
    _op: Operations
    _wire: Wire
    _tasks: TaskRunner

    def task_support_unknown(self, name: str) -> bool:
        """Whether :meth:`call_tool` cannot yet tell if ``name`` must run as a task: the
        server runs tool calls as tasks (2025-11-25) but the tool's ``execution.taskSupport``
        is not known (no :meth:`list_tools` has listed it).  A binding lists the tools first,
        so a ``required`` tool is never called plainly (TK-01)."""
        tasks = self._tasks  # (asked before every call: no call of a server without tasks)
        return (tasks.caps_read is not self.server_capabilities or tasks.calls_as_tasks) \
            and tasks.support_unknown(name)

    def list_tasks(self, *, now: float, timeout: float | None = None) -> RequestHandle[list[Task]]:
        """Every task of the server (2025-11-25 ``tasks/list``, all pages; TK-05).  Completes
        with ``list[Task]``.  Raises :class:`LocalProtocolError` in 2026-07-28 (the extension
        has no list) or if the server did not declare ``tasks.list``."""
        if self.era == "modern":
            raise LocalProtocolError("the 2026 tasks extension has no tasks/list (TX-01)")
        if self.state is State.READY and not self._tasks.server_tasks("list"):
            raise LocalProtocolError("the server did not declare tasks.list (TK-05)")
        limits = self._wire.limits
        walk = ListWalk("tasks/list", "tasks",
                        lambda item: parse_task(item, modern=False, where="tasks/list"),
                        max_pages=limits.max_pages, max_items=limits.max_list_items)
        return self._op.request("tasks/list", None, now, timeout, raw_result, walk=walk)

    def get_task(self, task_id: str, *, now: float,
                 timeout: float | None = None) -> RequestHandle[Task]:
        """One ``tasks/get``: completes with the :class:`Task` as the server describes it
        now; -32602 (unknown or purged) fails with :class:`RpcError`."""
        modern = self.era == "modern"
        self._tasks.check("tasks/get")
        return self._op.request("tasks/get", {"taskId": task_id}, now, timeout,
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
            self._tasks.cancelled(task_id, task, result)
            return task

        self._tasks.check("tasks/cancel")
        return self._op.request("tasks/cancel", {"taskId": task_id}, now, timeout, parse)

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
        self._tasks.check("tasks/get")
        if task_id in self._tasks.run_ids:
            raise LocalProtocolError(f"task {task_id!r} is already being polled")
        total = self._wire.limits.request_timeout if timeout is None else timeout
        handle: RequestHandle[Any] = RequestHandle(self._wire.take_id(), "tools/call")
        self._wire.now = now
        self._tasks.resume(handle, task_id, parse_call_tool_result, now, total)
        return handle
