"""The response cache of the stateless era (S-02): lists and reads the server said may be
reused for a while (``ttlMs``), dropped when the server announces a change."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MISS", "ResponseCache"]

#: Which cached methods a ``notifications/<kind>/list_changed`` invalidates.
_LISTS_OF = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}

MISS: Any = object()
"""What :meth:`ResponseCache.get` returns when there is no fresh value."""


class ResponseCache:
    """Values by ``(method, key)`` (the key is a resource's URI, or ``""`` for a list), each
    with the time it expires.  Time is passed in; an expired entry is dropped when asked for.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], tuple[float, Any]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[str, str], now: float, default: Any = MISS) -> Any:
        """The fresh value for ``key``, or ``default`` (:data:`MISS` unless given)."""
        entry = self._entries.get(key)
        if entry is None:
            return default
        expires, value = entry
        if now >= expires:
            del self._entries[key]
            return default
        return value

    def store(self, key: tuple[str, str], ttl: float, value: Any, now: float | None) -> None:
        """Keep ``value`` for ``ttl`` seconds from ``now``.  Nothing is kept without a time,
        for a ttl that is not positive, or for one that is infinite (no bound on staleness)."""
        if ttl > 0 and now is not None and ttl != math.inf:
            self._entries[key] = (now + ttl, value)

    def invalidate(self, kind: str) -> None:
        """A ``list_changed`` for ``kind`` (``tools``, ``prompts``, ``resources``)."""
        for method in _LISTS_OF[kind]:
            self._entries.pop((method, ""), None)

    def drop(self, key: tuple[str, str]) -> None:
        """Forget one entry (``resources/updated`` for a URI)."""
        self._entries.pop(key, None)
