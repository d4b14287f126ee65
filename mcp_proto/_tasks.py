"""Tasks (section 9): a long tool call the server runs as a task, which the client polls.

Two wire forms exist and they are not compatible.  2025-11-25 (TK-01..TK-06): the client
asks with ``tools/call {..., task: {ttl}}`` where the server and the tool allow it, gets a
``CreateTaskResult {task}``, polls ``tasks/get`` and fetches the outcome with
``tasks/result``; times are ``ttl`` / ``pollInterval`` in ms.  The 2026 extension
``io.modelcontextprotocol/tasks`` (TX-01..TX-09): the client declares the extension per
request and the *server* decides; a ``tools/call`` answered with ``resultType: "task"`` carries
the task inline, and ``tasks/get`` returns the outcome itself (``result`` / ``error``) or the
``inputRequests`` the task waits for, answered with ``tasks/update``; times are ``ttlMs`` /
``pollIntervalMs``.

This module holds what both share, and no I/O: the :class:`Task` object parsed from either
form, the status transition table, and the polling interval's floor and ceiling.
``ClientSession`` drives the polls through its deadlines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ._errors import MCPError, RemoteProtocolError, RpcError

__all__ = [
    "RELATED_TASK_KEY",
    "STATUSES",
    "TASKS_EXTENSION",
    "TERMINAL",
    "Task",
    "TaskCancelled",
    "TaskNotFound",
    "TaskStateError",
    "legal_transition",
    "parse_task",
    "poll_delay",
]

#: The 2026 extension's id, declared in ``clientCapabilities.extensions`` (TX-01).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

#: ``_meta`` key tying a message to a task (TK-06).
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"

STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})

#: The transition table of section 9 (the same in both forms): which status may follow which.
#: A status may repeat (a poll that saw no change); a terminal status never changes.
_NEXT: dict[str, frozenset[str]] = {
    "working": STATUSES,
    "input_required": STATUSES,
    "completed": frozenset({"completed"}),
    "failed": frozenset({"failed"}),
    "cancelled": frozenset({"cancelled"}),
}

#: Seconds between polls when the server suggests none (TK-04 / TX-03 make it optional).
DEFAULT_POLL_INTERVAL = 1.0

#: The shortest wait between polls, whatever the server says (0 or a few ms would make the
#: client hammer it), and the longest (a hostile hour-long interval must not park a call).
MIN_POLL_INTERVAL = 0.05
MAX_POLL_INTERVAL = 30.0

#: Polls in a row that may be lost (a dropped HTTP stream, an HTTP 5xx, a silent server)
#: before the call gives up: a poll is safe to repeat, and one lost answer must not cost a
#: task that still runs, but a server that never answers must not be polled forever.
MAX_POLL_FAILURES = 3

#: Longest ``taskId`` accepted: ids are opaque but echoed in headers and logs.
MAX_TASK_ID_LENGTH = 1024


class TaskStateError(RemoteProtocolError):
    """The server moved a task in a way section 9 forbids (a terminal task changed status, an
    unknown status): that task's call fails with this; the session goes on."""


class TaskCancelled(MCPError):
    """The task ended ``cancelled`` (by the server, or after ``tasks/cancel``)."""

    def __init__(self, task_id: str, message: str | None = None) -> None:
        self.task_id = task_id
        super().__init__(f"task {task_id!r} was cancelled" + (f": {message}" if message else ""))


class TaskNotFound(RpcError):
    """The server no longer knows the task (-32602 on ``tasks/get``: unknown id, or purged
    after its TTL).  Its outcome cannot be fetched any more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """A task as the server last described it (either wire form).  Times in seconds."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: float | None = None
    """How long the server keeps the task after creation; None: unlimited or not said."""
    poll_interval: float | None = None
    """The server's suggested polling interval, as sent (before the client's clamp)."""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def _seconds(obj: dict[str, Any], key: str, where: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise RemoteProtocolError(f"{where}: {key} must be a non-negative number of ms, "
                                  f"got {value!r}"[:200])
    return float(min(value, 2**53)) / 1000.0


def parse_task(obj: object, *, modern: bool, where: str = "task") -> Task:
    """A :class:`Task` from its wire object (2025-11-25 ``Task``, or the 2026 task fields).

    Raises :class:`RemoteProtocolError` for a malformed one (no ``taskId``, an unknown
    status, a bad time); the caller fails the call it belongs to.
    """
    if type(obj) is not dict:
        raise RemoteProtocolError(f"{where}: a task must be an object, got {obj!r}"[:200])
    task_id = obj.get("taskId")
    if type(task_id) is not str or not task_id or len(task_id) > MAX_TASK_ID_LENGTH:
        raise RemoteProtocolError(f"{where}: taskId must be a non-empty string, got "
                                  f"{task_id!r}"[:200])
    status = obj.get("status")
    if status not in STATUSES:
        raise TaskStateError(f"{where}: task {task_id!r} has unknown status {status!r}"[:200])
    message = obj.get("statusMessage")
    created = obj.get("createdAt")
    updated = obj.get("lastUpdatedAt")
    ttl_key, poll_key = ("ttlMs", "pollIntervalMs") if modern else ("ttl", "pollInterval")
    return Task(task_id=task_id, status=status,
                status_message=message if type(message) is str else None,
                created_at=created if type(created) is str else None,
                last_updated_at=updated if type(updated) is str else None,
                ttl=_seconds(obj, ttl_key, where), poll_interval=_seconds(obj, poll_key, where))


def legal_transition(old: str | None, new: str) -> bool:
    """Whether a task may go from ``old`` (None: just created, any status) to ``new``."""
    return old is None or new in _NEXT[old]


def poll_delay(task: Task | None) -> float:
    """Seconds until the next poll: the server's interval within the floor and ceiling; the
    default when it gave none (a missing or zero interval is not an invitation to spin)."""
    interval = None if task is None else task.poll_interval
    if interval is None:
        return DEFAULT_POLL_INTERVAL
    return min(max(interval, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL)
