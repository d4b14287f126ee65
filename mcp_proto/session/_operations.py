"""Multi-step procedures the session runs under one handle, and the state each one keeps.

Pagination (S-01): a list operation follows ``nextCursor`` to the end, refuses a cursor the
server already gave (a cycle would never end), and stops at the page and item limits
(:class:`ListWalk`).  A call that became a task (section 9): :class:`TaskRun` is its state,
which :class:`~mcp_proto.session._task_runner.TaskRunner` drives.  A pending request carries
either (``Pending.walk``, ``Pending.run``), so they sit below the request table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import RemoteProtocolError
from .._events import RequestHandle
from .._tasks import Task
from ._modern import ttl_seconds

__all__ = ["ListWalk", "TaskRun", "no_result", "raw_result"]


def raw_result(result: dict[str, Any]) -> dict[str, Any]:
    """The parse of an operation whose value is the result object itself."""
    return result


def no_result(result: dict[str, Any]) -> None:
    """The parse of an operation that completes with None (subscribe, ping, ...)."""
    return None


class ListWalk:
    """State of one paginated list (``tools/list``, ``resources/list``, ...).

    Call :meth:`take_page` with each page's result; it returns the cursor of the next page to
    ask for, or ``None`` when the list is complete (then :attr:`items` holds everything).
    """

    __slots__ = ("drops", "items", "key", "max_items", "max_pages", "method", "pages", "params",
                 "parse", "seen", "ttl")

    def __init__(self, method: str, key: str, parse: Callable[[object], Any], *,
                 max_pages: int, max_items: int, drops: bool = False,
                 params: dict[str, Any] | None = None) -> None:
        self.method = method
        self.params = params
        """What every page's request carries beside the cursor (a directory's ``uri``)."""
        self.key = key
        self.parse = parse
        self.drops = drops
        """``parse`` returns None for an item to leave out (it reported why itself)."""
        self.max_pages = max_pages
        self.max_items = max_items
        self.items: list[Any] = []
        self.seen: set[str] = set()
        self.pages = 0
        self.ttl = float("inf")
        """Seconds the whole list may be cached: the shortest ``ttlMs`` of its pages (S-02)."""

    def take_page(self, result: dict[str, Any]) -> str | None:
        """Add one page.  Raises :class:`RemoteProtocolError` for a malformed page, a repeated
        cursor, or a list past the page or item limits."""
        self.pages += 1
        self.ttl = min(self.ttl, ttl_seconds(result))
        raw_items = result.get(self.key)
        if type(raw_items) is not list:
            raise RemoteProtocolError(
                f"{self.method} result must have an array {self.key!r}, got {raw_items!r}"[:200]
            )
        if len(self.items) + len(raw_items) > self.max_items:
            raise RemoteProtocolError(
                f"{self.method} returned more than {self.max_items} items "
                "(raise Limits.max_list_items to accept more)"
            )
        parse = self.parse
        if self.drops:
            self.items.extend([x for x in map(parse, raw_items) if x is not None])
        else:
            self.items.extend([parse(item) for item in raw_items])
        cursor = result.get("nextCursor")
        if cursor is None:
            return None
        if type(cursor) is not str:
            raise RemoteProtocolError(f"{self.method} nextCursor must be a string, got {cursor!r}")
        if cursor in self.seen:
            raise RemoteProtocolError(
                f"{self.method} repeated the cursor {cursor[:80]!r}: the list would never end"
            )
        if self.pages >= self.max_pages:
            raise RemoteProtocolError(
                f"{self.method} did not end after {self.max_pages} pages "
                "(raise Limits.max_pages to accept more)"
            )
        self.seen.add(cursor)
        return cursor

    def again(self) -> ListWalk:
        """A fresh walk of the same list (S-02: the server forgot a cursor)."""
        return ListWalk(self.method, self.key, self.parse, max_pages=self.max_pages,
                        max_items=self.max_items, drops=self.drops, params=self.params)

    @property
    def cache_key(self) -> tuple[str, str]:
        """The list's key in the response cache: its method, and the uri it lists if any."""
        return self.method, str((self.params or {}).get("uri", ""))


class TaskRun:
    """A call that became a task: polled until terminal, then its outcome ends the call's
    handle."""

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
