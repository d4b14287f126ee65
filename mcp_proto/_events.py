"""The events the core emits.  Frozen, slotted, keyword-only: safe to pass between threads.

Every operation returns a :class:`RequestHandle` at once and ends with exactly one
:class:`Completed` or :class:`Failed` for that handle (``initialize`` ends with :class:`Ready`
or :class:`Failed`).  Everything else the server says arrives as one of the other events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._build import builder
from ._errors import MCPError
from ._tasks import Task
from ._types import Implementation, RequestId

__all__ = [
    "LOG_LEVELS",
    "BadMessage",
    "Closed",
    "Completed",
    "Event",
    "ElicitationComplete",
    "Failed",
    "ListChanged",
    "LogMessage",
    "OtherNotification",
    "Progress",
    "Ready",
    "RequestHandle",
    "ResourceUpdated",
    "ServerRequest",
    "ServerRequestCancelled",
    "SubscriptionEnded",
    "TaskStatus",
    "make_completed",
    "make_handle",
]


_T_co = TypeVar("_T_co", covariant=True)


@dataclass(frozen=True, slots=True)
class RequestHandle(Generic[_T_co]):
    """Names one operation of a session.  ``id`` is the JSON-RPC id of its first request
    (a paginated list sends more requests under the same handle).  The type parameter is
    the type of the operation's value (``RequestHandle[list[Tool]]``): what its
    :class:`Completed` event carries, so a binding returns it without a cast."""

    id: int
    method: str

    @property
    def request_id(self) -> int:
        return self.id


@dataclass(frozen=True, slots=True, kw_only=True)
class Ready:
    """The session is usable: the handshake finished (``era == "legacy"``) or
    ``server/discover`` answered (``era == "modern"``)."""

    handle: RequestHandle[Any]
    protocol_version: str
    server_info: Implementation
    capabilities: dict[str, Any]
    instructions: str | None = None
    era: str = "legacy"


@dataclass(frozen=True, slots=True, kw_only=True)
class Completed:
    """An operation succeeded.  ``value``'s type depends on the operation (see its docs)."""

    handle: RequestHandle[Any]
    value: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Failed:
    """An operation failed; ``error`` says why and whose fault it was."""

    handle: RequestHandle[Any]
    error: MCPError


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """``notifications/progress`` for a pending operation (P-02).  Never goes backwards: a
    value not above the last one is dropped."""

    handle: RequestHandle[Any]
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerRequest:
    """The server asks the host something (sampling, elicitation, roots).

    Answer with ``session.respond(request_id, result)`` or ``session.respond_error(...)``.
    Only methods whose capability the client declared arrive here; the core answers the rest.
    """

    request_id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerRequestCancelled:
    """The server withdrew one of its requests (C-03): stop asking the user; no answer is sent."""

    request_id: RequestId
    reason: str | None = None


#: The log levels of ``logging/setLevel`` and ``notifications/message`` (RFC 5424 as MCP
#: names them), least severe first.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical",
                               "alert", "emergency")


@dataclass(frozen=True, slots=True, kw_only=True)
class LogMessage:
    """``notifications/message`` (G-10)."""

    level: str
    data: Any
    logger: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ListChanged:
    """The server's list of ``kind`` (``tools``, ``resources`` or ``prompts``) changed."""

    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceUpdated:
    uri: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionEnded:
    """2026-07-28: the server ended (or never acknowledged) the session's
    ``subscriptions/listen`` (SB-04).  List-change and resource-update notifications stop;
    ``subscribe()`` opens a new one.  ``error`` is None for a graceful end."""

    error: MCPError | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OtherNotification:
    """A notification the core has no typed event for; passed on as it came."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class BadMessage:
    """Something from the server was dropped: not JSON, not JSON-RPC, too large, or an error
    not tied to any request.  The session goes on."""

    error: MCPError


@dataclass(frozen=True, slots=True, kw_only=True)
class Closed:
    """The session ended.  ``error`` is None for a close the host asked for."""

    error: MCPError | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskStatus:
    """The call ``handle`` runs as a task, and the task is now ``task`` (section 9): emitted
    when the task is created and at every change of status or message a poll shows.  The
    call still ends with one :class:`Completed` or :class:`Failed`."""

    handle: RequestHandle[Any]
    task: Task


@dataclass(frozen=True, slots=True, kw_only=True)
class ElicitationComplete:
    """The server finished the out-of-band interaction of a URL-mode elicitation
    (``notifications/elicitation/complete``, 2025-11-25, F-05): the one the host accepted, or
    one a ``-32042`` error named.  Emitted once per id the session knows is pending; unknown
    or finished ids are ignored.  The call that got ``-32042`` may now be retried."""

    elicitation_id: str


Event = (
    Ready | Completed | Failed | Progress | ServerRequest | ServerRequestCancelled
    | LogMessage | ListChanged | ResourceUpdated | OtherNotification | BadMessage | Closed
    | SubscriptionEnded | TaskStatus | ElicitationComplete
)

# The records every call makes, built without ``object.__setattr__`` (see ``_build``).
make_handle = builder(RequestHandle)
"""``make_handle(id, method)``: a :class:`RequestHandle`."""
make_completed = builder(Completed)
"""``make_completed(handle, value)``: a :class:`Completed`."""
