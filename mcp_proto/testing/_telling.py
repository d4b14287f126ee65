"""What a test tells the client through its in-memory server: the list-changed and
resource-updated notifications, log messages and the server's exit (the :class:`Telling`
mixin of :class:`~mcp_proto.testing.MemoryServer`).  Served from another thread
(``connect_memory``), each holds the driver's lock and wakes it, so it goes out at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ._catalog import level_rank

__all__ = ["Telling"]

_T = TypeVar("_T")


class Telling:
    """The telling half of the server; the server provides the ``_``-methods."""

    _guard: Any
    _wake: Callable[[], None]
    log_level: str | None
    _era: str | None

    def _list_changed(self, kind: str) -> int:
        raise NotImplementedError

    def _resource_updated(self, uri: str) -> int:
        raise NotImplementedError

    def _log(self, level: str, data: Any, logger: str | None) -> bool:
        raise NotImplementedError

    def _exit(self, code: int, stderr: str) -> None:
        raise NotImplementedError

    def attach(self, guard: Any, wake: Callable[[], None]) -> None:
        """A driver serving this server from another thread (``connect_memory``): what a
        test tells the client (the notifications, :meth:`log`, :meth:`exit`) then holds
        ``guard`` (a re-entrant lock the driver holds around every call it makes) and
        calls ``wake`` after, so it goes out at once."""
        self._guard, self._wake = guard, wake

    def _told(self, tell: Callable[[], _T]) -> _T:
        guard = self._guard
        if guard is None:
            return tell()
        with guard:
            result = tell()
        self._wake()
        return result

    def notify_tools_changed(self) -> int:
        """``notifications/tools/list_changed``; returns how many were sent."""
        return self._told(lambda: self._list_changed("tools"))

    def notify_resources_changed(self) -> int:
        return self._told(lambda: self._list_changed("resources"))

    def notify_prompts_changed(self) -> int:
        return self._told(lambda: self._list_changed("prompts"))

    def notify_resource_updated(self, uri: str) -> int:
        """``notifications/resources/updated`` to the clients subscribed to ``uri``."""
        return self._told(lambda: self._resource_updated(uri))

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """``notifications/message`` to a handshake-era client, if ``level`` is at least
        :attr:`log_level`.  Returns whether it was sent.  Raises ``ValueError`` for an unknown
        level, :class:`LocalProtocolError` for ``data`` that is not JSON."""
        if level_rank(level) < level_rank(self.log_level or "debug") or self._era != "legacy":
            return False
        return self._told(lambda: self._log(level, data, logger))

    def exit(self, code: int = 0, stderr: str = "") -> None:
        """The "process" ends: output already queued is still delivered, input is ignored."""
        self._told(lambda: self._exit(code, stderr))

