"""The client as a task receiver (2025-11-25, section 9.1): the server's requests run as tasks.

A client declaring ``tasks.requests.sampling.createMessage`` (or ``elicitation.create``) lets
the server send those requests with ``task: {ttl?}``.  The client answers at once with a
``CreateTaskResult``, puts the work to the host as an ordinary :class:`ServerRequest` (id
``"task:" + taskId``), and serves ``tasks/get``, ``tasks/result``, ``tasks/list`` and
``tasks/cancel`` from a :class:`TaskStore` until the task's TTL runs out.  Rules:

- a task starts ``working``; the host's answer makes it ``completed``, its error ``failed``,
  ``tasks/cancel`` ``cancelled``, the end of the session ``failed`` (``input_required`` is never
  needed: the client asks the server nothing while it works).  Each change passes
  :func:`~mcp_proto._tasks.legal_transition` (a terminal task never changes) and is told to
  the server (``notifications/tasks/status``, the full task) while the session lives;
- ``tasks/result`` on an unfinished task waits and is answered at its end: exactly the host's
  result plus ``_meta[related-task]`` (TK-04), or exactly the host's JSON-RPC error (an error
  has no ``_meta``: the request's ``taskId`` names the task); a cancelled task has no
  underlying result: -32603 ``task cancelled``;
- an unknown, expired or other session's task is -32602, as are a bad cursor, a cancel of a
  terminal task and a request id in use;
- the store is bounded (``max_tasks``): when full, the oldest terminal task goes; when every
  task is unfinished a new one is refused (-32603);
- ``ttl`` after its creation a task is purged whatever its status (its host question
  withdrawn, a waiting ``tasks/result`` answered -32602).

Tasks are bound to the session that made them (the nearest thing to an authorization context
the core knows): another session's server cannot read, list or cancel them, even through a
store shared by successive connections.  No clock and no randomness here: times come as
``now``, ids from :attr:`TaskStore.new_id`.  Not thread-safe: a store shared across threads is
used under the binding's lock.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from .._tasks import MAX_TASK_ID_LENGTH, RELATED_TASK_KEY, TERMINAL, legal_transition
from ..wire._jsonrpc import Request, RequestId
from ._outbox import Wire
from ._server_requests import INTERNAL_ERROR, INVALID_PARAMS, ServerRequests, check_json, refusal

__all__ = ["DEFAULT_LIST_PAGE", "DEFAULT_MAX_TASKS", "DEFAULT_POLL", "DEFAULT_TTL", "MAX_TTL",
           "MAX_WAITING_RESULTS", "MIN_TTL", "SID_PREFIX", "TASK_REQUESTS", "ReceivedTask",
           "TaskReceiver", "TaskStore", "receiver_capabilities", "task_object"]

#: Tasks a store holds (terminal ones included, until evicted): each unfinished one holds a
#: host question (a model call, a user's form), so more than this at once is a server
#: flooding the client, and the store's memory stays bounded whatever the server asks.
DEFAULT_MAX_TASKS = 64

#: Seconds a task lives: ``DEFAULT_TTL`` when the server asks none (long enough for a user to
#: answer), at most ``MAX_TTL`` (the spec: "enforce maximum ttl durations"; a day keeps a result
#: readable across a long pause, not for ever), at least ``MIN_TTL`` (a task purged before the
#: server can poll it once is useless).
DEFAULT_TTL = 3600.0
MAX_TTL = 86400.0
MIN_TTL = 1.0

DEFAULT_POLL = 1.0  # seconds suggested between the server's polls (``pollInterval``)
DEFAULT_LIST_PAGE = 50  # tasks a tasks/list page (the spec: "SHOULD use ... pagination")

#: ``tasks/result`` requests one task keeps waiting: a server re-asking after each lost stream
#: must not grow the table without bound; past this many the new one is refused (-32603).
MAX_WAITING_RESULTS = 16

MAX_STATUS_MESSAGE = 300  # the longest statusMessage (a host's error, a session's end) sent
EXPIRY_SLACK = 64  # stale expiry-heap entries tolerated beyond twice the tasks, then rebuilt
MAX_CURSOR_LENGTH = 20  # a cursor is a decimal sequence number: never more than 20 digits
_LATEST_WALL = 253402300799.0  # 9999-12-31T23:59:59Z, the latest time datetime can write

SID_PREFIX = "task:"  # the made-up id of a task's host question: "task:" + taskId

#: The requests that may run as tasks, and their key path under ``tasks.requests``.
TASK_REQUESTS = {"sampling/createMessage": ("sampling", "createMessage"),
                 "elicitation/create": ("elicitation", "create")}

_TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
_CANCELLED = "cancelled by the server (tasks/cancel)"


def receiver_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``capabilities`` with ``tasks.list``, ``tasks.cancel`` and
    ``tasks.requests.sampling.createMessage`` if ``sampling`` is declared,
    ``...elicitation.create`` if ``elicitation`` is (merged into a ``tasks`` key there); with
    neither declared nothing can run as a task, and nothing is added."""
    out = dict(capabilities)
    wanted = [path for path in TASK_REQUESTS.values() if path[0] in capabilities]
    if wanted:
        tasks = _child(out, "tasks")
        tasks.setdefault("list", {})
        tasks.setdefault("cancel", {})
        requests = _child(tasks, "requests")
        for kind, method in wanted:
            _child(requests, kind).setdefault(method, {})
    return out


def _child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """A copy of ``parent[key]`` put in its place (a new object if it was none)."""
    old = parent.get(key)
    node: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
    parent[key] = node
    return node


def _declared(capabilities: dict[str, Any], path: tuple[str, str]) -> bool:
    node: object = capabilities.get("tasks")
    for key in ("requests", *path):
        node = node.get(key) if isinstance(node, dict) else None
    return isinstance(node, dict)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_STATUS_MESSAGE else text[:MAX_STATUS_MESSAGE - 3] + "..."


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedTask:
    """A task the client runs for the server, as it is now.  Times in seconds; the
    timestamps are ISO 8601 UTC as sent to the server."""

    task_id: str
    method: str
    """The request it runs: ``sampling/createMessage`` or ``elicitation/create``."""
    status: str
    """``working``, then ``completed``, ``failed`` or ``cancelled`` (never changes again)."""
    created_at: str
    last_updated_at: str
    ttl: float | None
    """Seconds it lives from its creation (None: unlimited)."""
    poll_interval: float
    status_message: str | None = None
    result: dict[str, Any] | None = None
    """The host's answer (``completed``)."""
    error: tuple[int, str] | None = None
    """The JSON-RPC error code and message (``failed``: the host's, or -32603 when the
    session ended first)."""
    error_data: Any = None
    """The host's error ``data``, if it gave one."""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def request_id(self) -> str:
        """The id its work was put to the host under (its :class:`ServerRequest`)."""
        return SID_PREFIX + self.task_id


def task_object(task: ReceivedTask) -> dict[str, Any]:
    """The 2025-11-25 wire ``Task`` of ``task`` (TK-03): times in whole milliseconds."""
    obj: dict[str, Any] = {
        "taskId": task.task_id, "status": task.status, "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": None if task.ttl is None else round(task.ttl * 1000),
        "pollInterval": round(task.poll_interval * 1000),
    }
    if task.status_message is not None:
        obj["statusMessage"] = task.status_message
    return obj


class _Entry:
    """A stored task and what only the store knows of it."""

    __slots__ = ("expires", "owner", "seq", "task", "waiting")

    def __init__(self, task: ReceivedTask, seq: int, expires: float,
                 owner: TaskReceiver) -> None:
        self.task = task
        self.seq = seq  # creation order, store-wide (the tasks/list cursor)
        self.expires = expires  # monotonic time of its purge (math.inf: never)
        self.owner: TaskReceiver | None = owner  # None once its session ended
        self.waiting: list[RequestId] = []  # tasks/result requests to answer at its end


class TaskStore:
    """The tasks a client runs for its servers: bounded, purged after each task's TTL.

    ``max_tasks`` bounds the store; ``default_ttl`` is the lifetime of a task whose server
    asked none (None: ``max_ttl``); ``max_ttl`` caps what a server asks (``math.inf``: no cap;
    a task then asked or defaulted to no TTL lives until evicted, sent as ``ttl: null``);
    ``poll_interval`` is suggested to the server.  ``new_id`` makes unguessable task ids and
    ``wall_offset`` turns the monotonic ``now`` into Unix time for the timestamps (None: 0);
    a binding gives both (:meth:`attach`).  Raises ``ValueError`` for settings out of range.
    One store may serve a client's successive sessions: the tasks of one that ended stay
    readable (:meth:`tasks`, :meth:`get`), their unfinished work ``failed``.

    One store per client: the store takes no lock (the core has no threads), so everything
    that changes it runs where the client's session runs, under the binding's lock of that
    connection (the session's timers :meth:`purge`; the server's requests add and end
    tasks).  Never share a store between clients.  From another thread (a host's UI) only
    the readers are safe: :meth:`tasks` copies the table in one step before it reads it,
    :meth:`get` and ``len`` are single lookups; what they return may be a moment old."""

    __slots__ = ("_entries", "_expiry", "_seq", "default_ttl", "max_tasks", "max_ttl",
                 "new_id", "poll_interval", "wall_offset")

    def __init__(self, *, max_tasks: int = DEFAULT_MAX_TASKS,
                 default_ttl: float | None = DEFAULT_TTL, max_ttl: float = MAX_TTL,
                 poll_interval: float = DEFAULT_POLL, new_id: Callable[[], str] | None = None,
                 wall_offset: float | None = None) -> None:
        if type(max_tasks) is not int or max_tasks < 1:
            raise ValueError(f"max_tasks must be a positive int, got {max_tasks!r}")
        if not max_ttl >= MIN_TTL:
            raise ValueError(f"max_ttl must be at least {MIN_TTL} s, got {max_ttl!r}")
        if default_ttl is not None and not (MIN_TTL <= default_ttl < math.inf):
            raise ValueError(f"default_ttl must be None or finite >= {MIN_TTL}: {default_ttl!r}")
        if not (0 < poll_interval < math.inf):
            raise ValueError(f"poll_interval must be positive and finite: {poll_interval!r}")
        if wall_offset is not None and not math.isfinite(wall_offset):
            raise ValueError(f"wall_offset must be finite, got {wall_offset!r}")
        self.max_tasks = max_tasks
        self.default_ttl = default_ttl
        self.max_ttl = max_ttl
        self.poll_interval = poll_interval
        self.new_id = new_id
        self.wall_offset = wall_offset
        self._entries: dict[str, _Entry] = {}  # by task id, in creation order
        self._expiry: list[tuple[float, str]] = []  # (purge time, task id); stale skipped
        self._seq = 0

    def attach(self, *, new_id: Callable[[], str] | None = None,
               wall_offset: float | None = None) -> None:
        """Fill what the store lacks (a binding's random ids and wall clock); what it was
        given already is kept."""
        if self.new_id is None:
            self.new_id = new_id
        if self.wall_offset is None:
            self.wall_offset = wall_offset

    def __len__(self) -> int:
        return len(self._entries)

    def tasks(self) -> list[ReceivedTask]:
        """Every stored task (any session's), oldest first.  A task past its TTL may still be
        here until the next :meth:`purge` (which each session's timer makes).  Safe while
        the session changes the store on another thread: the table is copied first (one
        step under the GIL), so its changes never break the iteration."""
        return [e.task for e in list(self._entries.values())]

    def get(self, task_id: str) -> ReceivedTask | None:
        """The task ``task_id`` as it is now, or None (unknown, purged or evicted)."""
        entry = self._entries.get(task_id)
        return None if entry is None else entry.task

    def purge(self, now: float) -> None:
        """Drop every task whose TTL has run out by ``now``: an unfinished one of a live
        session has its host question withdrawn and its waiting ``tasks/result`` answered
        -32602.  Sessions call it from their timers.  It changes the store and writes to
        the sessions' wires: call it only where the client's session runs (under the
        binding's lock of the connection), never from another thread; a host that only
        reads the store needs no purge (the timers make it)."""
        expiry = self._expiry
        entries = self._entries
        while expiry and expiry[0][0] <= now:
            at, task_id = heapq.heappop(expiry)
            entry = entries.get(task_id)
            if entry is not None and entry.expires == at:
                self._remove(entry)

    def next_expiry(self) -> float | None:
        """When the next task is purged (stale heap entries dropped here), or None."""
        expiry = self._expiry
        entries = self._entries
        while expiry:
            at, task_id = expiry[0]
            entry = entries.get(task_id)
            if entry is not None and entry.expires == at:
                return at
            heapq.heappop(expiry)
        return None

    # -- for the receivers ---------------------------------------------------------------------

    def _wall(self, now: float) -> str:
        """ISO 8601 UTC (ms) of the monotonic time ``now`` (clamped: never raises)."""
        at = now + (self.wall_offset or 0.0)
        at = min(at, _LATEST_WALL) if at >= 0 else 0.0  # (NaN too)
        text = datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z")

    def _ttl(self, asked: float | None) -> float | None:
        """The lifetime granted for ``asked`` seconds (None: not asked); None: unlimited."""
        want = self.default_ttl if asked is None else asked
        ttl = self.max_ttl if want is None else min(max(want, MIN_TTL), self.max_ttl)
        return None if ttl == math.inf else ttl

    def _make_room(self) -> bool:
        """Evict the oldest terminal task if the store is full; False if it stays full."""
        if len(self._entries) < self.max_tasks:
            return True
        for entry in self._entries.values():
            if entry.task.terminal:
                self._remove(entry)
                return True
        return False

    def _add(self, task: ReceivedTask, now: float, owner: TaskReceiver) -> _Entry:
        self._seq += 1
        expires = math.inf if task.ttl is None else now + task.ttl
        entry = self._entries[task.task_id] = _Entry(task, self._seq, expires, owner)
        if expires != math.inf:
            heapq.heappush(self._expiry, (expires, task.task_id))
            if len(self._expiry) > 2 * len(self._entries) + EXPIRY_SLACK:
                entries = self._entries
                self._expiry = [(at, tid) for at, tid in self._expiry
                                if (e := entries.get(tid)) is not None and e.expires == at]
                heapq.heapify(self._expiry)
        return entry

    def _remove(self, entry: _Entry) -> None:
        del self._entries[entry.task.task_id]
        if entry.owner is not None:
            entry.owner._removed(entry)


class TaskReceiver:
    """One session's part of a :class:`TaskStore`: its server's task requests, the host's
    answers to their work, and the ``tasks/result`` requests waiting for them.  ``asks`` is
    the session's table of host questions; the work of each task is put there as ``"task:" +
    taskId``.  Raises ``ValueError`` if the store has no ``new_id`` (give one, or let a binding
    :meth:`~TaskStore.attach` it): the core makes no random ids itself."""

    __slots__ = ("_asks", "_live", "_own", "_store", "_waiting", "_wire", "_work")

    def __init__(self, wire: Wire, asks: ServerRequests, store: TaskStore) -> None:
        if store.new_id is None:
            raise ValueError("the TaskStore has no new_id: pass TaskStore(new_id=...) (an "
                             "unguessable id, e.g. secrets.token_urlsafe) or attach() one")
        self._wire = wire
        self._asks = asks
        self._store = store
        self._own: dict[str, _Entry] = {}  # this session's tasks, by id, creation order
        self._work: dict[RequestId, _Entry] = {}  # unfinished tasks by their host question's id
        self._waiting: dict[RequestId, _Entry] = {}  # tasks/result request id -> its task
        self._live = True

    # -- the server's requests -----------------------------------------------------------------

    def on_request(self, message: Request, capabilities: dict[str, Any], now: float) -> bool:
        """A server request of the handshake era: True when it was handled here (``tasks/*``,
        a task-augmented request of a kind ``capabilities`` declares in ``tasks.requests``);
        False for anything else (the caller routes it on).  Never raises."""
        method = message.method
        if not self._live:
            return False
        if method in _TASK_METHODS:
            self._store.purge(now)
            if method == "tasks/list":
                self._list(message)
                return True
            entry = self._lookup(message)
            if entry is None:
                return True
            if method == "tasks/get":
                self._reply(message.id, task_object(entry.task))
            elif method == "tasks/result":
                self._result(message.id, entry)
            else:
                self._cancel(message.id, entry, now)
            return True
        path = TASK_REQUESTS.get(method)
        if path is None or "task" not in message.params or not _declared(capabilities, path):
            return False  # not a task request, or not one we declared: a plain request
        self._create(message, capabilities, now)
        return True

    def _reply(self, rid: RequestId, result: dict[str, Any]) -> None:  # a result response
        self._wire.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _in_use(self, rid: RequestId) -> bool:
        """Whether ``rid`` is a request of the server's still open (then it is refused)."""
        if rid in self._asks or rid in self._waiting:
            self._wire.send_error(rid, INVALID_PARAMS, f"request id {rid!r} is already in use"
                                  [:300])
            return True
        return False

    def _create(self, message: Request, capabilities: dict[str, Any], now: float) -> None:
        rid = message.id
        wire = self._wire
        params = {k: v for k, v in message.params.items() if k != "task"}
        refused = refusal(capabilities, message.method, params)
        if refused is not None:
            wire.send_error(rid, *refused)
            return
        metadata = message.params["task"]
        asked = metadata.get("ttl") if type(metadata) is dict else None
        if type(metadata) is not dict or not (asked is None or (
                (type(asked) is int or (type(asked) is float and math.isfinite(asked)))
                and asked >= 0)):
            wire.send_error(rid, INVALID_PARAMS, f"task must be an object with an optional "
                            f"ttl in ms, got {metadata!r}"[:300])
            return
        if self._in_use(rid):
            return
        store = self._store
        store.purge(now)
        if not store._make_room():
            wire.send_error(rid, INTERNAL_ERROR, f"too many tasks: the client runs at most "
                            f"{store.max_tasks} at once")
            return
        assert store.new_id is not None
        task_id = store.new_id()
        if type(task_id) is not str or not task_id or len(task_id) > MAX_TASK_ID_LENGTH \
                or task_id in store._entries or SID_PREFIX + task_id in self._asks:
            wire.send_error(rid, INTERNAL_ERROR, "the client could not make a unique task id")
            return
        stamp = store._wall(now)
        task = ReceivedTask(task_id=task_id, method=message.method, status="working",
                            created_at=stamp, last_updated_at=stamp,
                            ttl=store._ttl(None if asked is None else min(asked, 2**53) / 1000.0),
                            poll_interval=store.poll_interval)
        entry = store._add(task, now, self)
        self._own[task_id] = entry
        sid = task.request_id
        self._work[sid] = entry
        self._reply(rid, {"task": task_object(task)})
        self._asks.ask(sid, message.method, params)

    def _lookup(self, message: Request) -> _Entry | None:
        """This session's task named by ``taskId`` (the request's ``_meta`` is ignored), or
        None after answering -32602."""
        task_id = message.params.get("taskId")
        if type(task_id) is not str:
            self._wire.send_error(message.id, INVALID_PARAMS,
                                  f"{message.method}: taskId must be a string")
            return None
        entry = self._own.get(task_id)
        if entry is None:
            self._wire.send_error(message.id, INVALID_PARAMS,
                                  f"Failed to retrieve task: task {task_id!r} not found "
                                  "(unknown, or purged after its ttl)"[:300])
        return entry

    def _result(self, rid: RequestId, entry: _Entry) -> None:
        """``tasks/result``: the outcome now if the task is terminal, else at its end."""
        if entry.task.terminal:
            self._outcome(rid, entry.task)
            return
        if self._in_use(rid):
            return
        if len(entry.waiting) >= MAX_WAITING_RESULTS:
            self._wire.send_error(rid, INTERNAL_ERROR, f"too many tasks/result requests wait "
                                  f"for task {entry.task.task_id!r}"[:300])
        else:
            entry.waiting.append(rid)
            self._waiting[rid] = entry

    def _outcome(self, rid: RequestId, task: ReceivedTask) -> None:
        """Answer ``tasks/result`` ``rid`` for the terminal ``task`` (TK-04)."""
        if task.status == "completed" and task.result is not None:
            result = dict(task.result)
            meta = result.get("_meta")
            related = {"taskId": task.task_id}
            result["_meta"] = {**meta, RELATED_TASK_KEY: related} if isinstance(meta, dict) \
                else {RELATED_TASK_KEY: related}
            self._reply(rid, result)
        elif task.status == "failed" and task.error is not None:
            self._wire.send_error(rid, task.error[0], task.error[1], task.error_data)
        else:  # cancelled: there is no underlying result
            self._wire.send_error(rid, INTERNAL_ERROR, "task cancelled")

    def _list(self, message: Request) -> None:
        """``tasks/list``: this session's tasks, oldest first, a page at a time.  The cursor
        is the creation number of the last task sent (opaque to the server); tasks purged
        meanwhile simply are not listed."""
        cursor = message.params.get("cursor")
        after = 0
        if cursor is not None:
            if type(cursor) is not str or not cursor.isascii() or not cursor.isdigit() \
                    or len(cursor) > MAX_CURSOR_LENGTH or int(cursor) > self._store._seq:
                self._wire.send_error(message.id, INVALID_PARAMS,
                                      f"tasks/list: invalid cursor {cursor!r}"[:300])
                return
            after = int(cursor)
        page = [e for e in self._own.values() if e.seq > after][:DEFAULT_LIST_PAGE + 1]
        result: dict[str, Any] = {"tasks": [task_object(e.task)
                                            for e in page[:DEFAULT_LIST_PAGE]]}
        if len(page) > DEFAULT_LIST_PAGE:
            result["nextCursor"] = str(page[DEFAULT_LIST_PAGE - 1].seq)
        self._reply(message.id, result)

    def _cancel(self, rid: RequestId, entry: _Entry, now: float) -> None:
        """``tasks/cancel`` (TK-05): -32602 for a terminal task; else the task is cancelled,
        its host question withdrawn (the binding cancels the handler), and the final task
        is the answer."""
        task = entry.task
        if task.terminal:
            self._wire.send_error(rid, INVALID_PARAMS, f"Cannot cancel task: already in "
                                  f"terminal status {task.status!r}")
            return
        sid = task.request_id
        if self._work.pop(sid, None) is not None:
            self._asks.withdraw(sid, "task cancelled")
        self._end(entry, now, "cancelled", _CANCELLED)
        self._reply(rid, task_object(entry.task))

    def server_cancelled(self, request_id: RequestId) -> bool:
        """The server sent ``notifications/cancelled`` for ``request_id``: a waiting
        ``tasks/result`` is forgotten (not answered, C-03).  Returns whether it was one."""
        entry = self._waiting.pop(request_id, None)
        if entry is None:
            return False
        entry.waiting.remove(request_id)
        return True

    # -- the host's answers --------------------------------------------------------------------

    def owns(self, request_id: object) -> bool:
        """Whether ``request_id`` is the host question of one of this session's unfinished
        tasks (its answer goes to :meth:`complete` / :meth:`fail`)."""
        return request_id in self._work

    def complete(self, request_id: RequestId, result: dict[str, Any], now: float) -> bool:
        """The host answered task work ``request_id``: the task is ``completed`` and waiting
        ``tasks/result`` requests get ``result``.  False if it is no longer open (cancelled,
        expired, the session ended).  Raises :class:`LocalProtocolError` (and changes
        nothing) when ``result`` is not JSON: answer again, or with an error."""
        entry = self._answered(request_id, result)
        if entry is not None:
            self._end(entry, now, "completed", None, result=dict(result))
        return entry is not None

    def fail(self, request_id: RequestId, code: int, message: str, data: Any,
             now: float) -> bool:
        """The host answered task work ``request_id`` with an error: the task is ``failed``
        (``statusMessage`` the message) and waiting ``tasks/result`` requests get exactly
        that JSON-RPC error.  False if it is no longer open; raises
        :class:`LocalProtocolError` (changing nothing) when ``data`` is not JSON."""
        entry = self._answered(request_id, data)
        if entry is not None:
            self._end(entry, now, "failed", _clip(message), error=(code, message), data=data)
        return entry is not None

    def _answered(self, request_id: RequestId, payload: object) -> _Entry | None:
        """The open work ``request_id``, closed; None if it is not open.  Raises
        :class:`LocalProtocolError` (closing nothing) when ``payload`` is not JSON."""
        entry = self._work.get(request_id)
        if entry is not None:
            check_json(entry.task.method, payload)
            del self._work[request_id]
            self._asks.take(request_id)
        return entry

    def _end(self, entry: _Entry, now: float, status: str, message: str | None, *,
             result: dict[str, Any] | None = None, error: tuple[int, str] | None = None,
             data: Any = None) -> None:
        """Move ``entry`` to the terminal ``status``, tell the server, answer its waiters."""
        old = entry.task
        assert not old.terminal and legal_transition(old.status, status), (old.status, status)
        task = entry.task = replace(old, status=status, status_message=message,
                                    last_updated_at=self._store._wall(now), result=result,
                                    error=error, error_data=data)
        self._wire.send({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                         "params": task_object(task)})
        for rid in entry.waiting:
            del self._waiting[rid]
            self._outcome(rid, task)
        entry.waiting.clear()

    # -- time and the end --------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """When the next stored task is purged (any session's: the store is shared), or None."""
        return self._store.next_expiry() if self._live else None

    def handle_timeout(self, now: float) -> None:
        """Purge the tasks whose TTL has run out (:meth:`TaskStore.purge`)."""
        if self._live:
            self._store.purge(now)

    def _removed(self, entry: _Entry) -> None:
        """The store dropped ``entry``: after its TTL, its work is withdrawn and its waiters
        answered -32602 (an evicted task is terminal: it has neither)."""
        self._own.pop(entry.task.task_id, None)
        sid = entry.task.request_id
        if self._work.pop(sid, None) is not None:
            self._asks.withdraw(sid, "task expired")
        for rid in entry.waiting:
            del self._waiting[rid]
            self._wire.send_error(rid, INVALID_PARAMS, f"Failed to retrieve task: task "
                                  f"{entry.task.task_id!r} has expired"[:300])
        entry.waiting.clear()

    def session_ended(self, reason: str) -> None:
        """The session ended: each unfinished task is ``failed`` (the connection closed),
        its host question withdrawn, its waiting requests dropped (there is no wire to
        answer on); the tasks stay in the store for the host to read until their TTL."""
        if not self._live:
            return
        self._live = False
        message = _clip(f"the connection closed: {reason}")
        for entry in self._own.values():
            task = entry.task
            if not task.terminal:
                if self._work.pop(task.request_id, None) is not None:
                    self._asks.withdraw(task.request_id, message)
                entry.task = replace(task, status="failed", status_message=message,
                                     last_updated_at=self._store._wall(self._wire.now),
                                     error=(INTERNAL_ERROR, message))
            entry.waiting.clear()
            entry.owner = None
        self._own.clear()
        self._waiting.clear()  # (its work went with its unfinished tasks)
