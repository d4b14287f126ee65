"""What each server spoke last time, remembered per server for the life of the process (V-20).

A later connection to the same server skips the probe: a modern server's DiscoverResult is
reused (no round trip at all), a handshake-era server goes straight to ``initialize``.  The
key is everything that starts the same server: the command, its working directory and the
extra environment (stdio), or the origin (HTTP).  ``ClientSession.start`` decides what a
remembered answer means; this module only stores it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Mapping, Sequence

from mcp_proto import ClientSession, ConnectionClosed, Ready
from mcp_proto.session._modern import Discovered

__all__ = ["DEFAULT_ERA_MEMORY", "EraMemory", "ProbeKilledServer", "stdio_key"]

#: Servers remembered at most; the oldest is forgotten first (a gateway may start thousands of
#: distinct commands over its life, and each entry holds a DiscoverResult).
MAX_REMEMBERED = 1024


def stdio_key(argv: Sequence[str], cwd: str | os.PathLike[str] | None,
              env: Mapping[str, str] | None) -> Hashable:
    return (tuple(argv), None if cwd is None else os.fspath(cwd),
            None if env is None else tuple(sorted(env.items())))


class ProbeKilledServer(ConnectionClosed):
    """The server exited on the era probe (V-23): start it again in the handshake era."""


class EraMemory:
    """A bounded, thread-safe map from a server's key to ``(era, discovered)``."""

    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[str, Discovered | None]] = {}

    def recall(self, key: Hashable) -> tuple[str, Discovered | None]:
        """``("auto", None)`` for a server not seen yet."""
        with self._lock:
            return self._entries.get(key, ("auto", None))

    def remember(self, key: Hashable, era: str, discovered: Discovered | None) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (era, discovered)
            while len(self._entries) > self._limit:
                del self._entries[next(iter(self._entries))]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def plan(self, key: Hashable, pinned_era: str | None,
             previous: ClientSession | None) -> tuple[str, Discovered | None, frozenset[str]]:
        """How to open the next connection to a server, after ``previous`` (None for the
        first): the era to start in, the remembered DiscoverResult and the subscriptions to
        renew on the new server (every binding asks this before ``ClientSession.start``)."""
        subscriptions: frozenset[str] = frozenset()
        if previous is not None:
            subscriptions = previous.subscriptions  # renewed on the new server
            if previous.era_assumption_failed:
                self.forget(key)  # V-20: probe it again
        remembered, discovered = self.recall(key)
        # A remembered modern server starts from its DiscoverResult, but may still fall
        # back if it changed (V-20: re-probe if the assumption fails).
        era = pinned_era or ("legacy" if remembered == "legacy" else "auto")
        return era, discovered, subscriptions

    def opened(self, key: Hashable, pinned_era: str | None, ready: Ready,
               session: ClientSession) -> None:
        """Remember what a connection that became ready speaks."""
        if pinned_era is None or ready.era == "modern":
            # A pinned handshake says what this client chose, not what the server speaks;
            # a DiscoverResult proves the stateless era either way.
            self.remember(key, ready.era, session.discovered)

    def forget(self, key: Hashable) -> None:
        """Re-probe next time (for example after the server was upgraded)."""
        with self._lock:
            self._entries.pop(key, None)


DEFAULT_ERA_MEMORY = EraMemory()
