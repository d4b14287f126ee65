"""Readiness checks on one file descriptor, shared by the bindings.

``select.select`` cannot take a descriptor numbered 1024 or more (FD_SETSIZE), which a host
holding many connections reaches; ``poll`` has no such limit.
"""

from __future__ import annotations

import select

__all__ = ["wait_fd"]

_EVENTS = {"read": select.POLLIN, "write": select.POLLOUT}


def wait_fd(fd: int, what: str, timeout: float) -> bool:
    """Whether ``fd`` is ready to ``what`` ("read" or "write") within ``timeout`` seconds.
    An error or hang-up counts as ready (the next read or write reports it).  Raises
    ``ValueError`` for a closed (negative) descriptor."""
    if fd < 0:
        raise ValueError("the descriptor is closed")
    poller = select.poll()
    poller.register(fd, _EVENTS[what])
    return bool(poller.poll(max(0, int(timeout * 1000))))
