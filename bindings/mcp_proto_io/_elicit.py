"""What a client keeps for URL-mode elicitations and received tasks, whatever runtime runs it.

:class:`CompletedElicitations` records the ``notifications/elicitation/complete`` the core
reported (:class:`ElicitationComplete`) and wakes a call waiting to retry after ``-32042``;
:func:`receiver_store` turns ``task_receiver=`` into the core's :class:`TaskStore`, given the
two things the core never takes itself: unguessable task ids and the wall clock.
Runtime-neutral: the waiting primitive (a ``threading.Event``, an ``asyncio.Event``, a
``trio.Event``: anything with ``set()``) comes from the runtime; a ``threading.Lock``, held
for a few dictionary operations and never across a wait, makes the record safe whichever
thread reports a completion (the threads binding's reader) and whichever waits.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from mcp_proto import TaskStore

__all__ = ["MAX_REMEMBERED_COMPLETIONS", "TASK_ID_BYTES", "CompletedElicitations",
           "receiver_store"]

#: Completions remembered for a call that has not started waiting yet (a completion can
#: arrive between the -32042 and the wait); older ones go first.
MAX_REMEMBERED_COMPLETIONS = 256

#: Random bytes in a received task's id: unguessable (the receiver paragraph of section 9.1).
TASK_ID_BYTES = 16


class CompletedElicitations:
    """The URL elicitations the server said are complete, and the calls waiting for some.
    Safe from any thread: each method holds the lock over both tables, so a completion
    reported while a call starts to watch either is seen by the watch or wakes it."""

    __slots__ = ("_done", "_lock", "_waiting")

    def __init__(self) -> None:
        self._done: OrderedDict[str, None] = OrderedDict()
        self._waiting: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def done(self, elicitation_id: str) -> None:
        """The server completed ``elicitation_id``: wake whoever waits for it."""
        with self._lock:
            done = self._done
            done[elicitation_id] = None
            if len(done) > MAX_REMEMBERED_COMPLETIONS:
                done.popitem(last=False)
            events = self._waiting.pop(elicitation_id, ())
        for event in events:
            event.set()

    def offered(self, elicitation_id: str) -> None:
        """A new ``-32042`` names ``elicitation_id``: a completion of it remembered from an
        earlier round is stale (the server asks again), so the next wait waits for a new
        one."""
        with self._lock:
            self._done.pop(elicitation_id, None)

    def is_done(self, elicitation_id: str) -> bool:
        with self._lock:
            return elicitation_id in self._done

    def watch(self, ids: Iterable[str], event: Any) -> None:
        """Set ``event`` when any of ``ids`` completes (or at once if one has)."""
        ids = list(ids)
        with self._lock:
            for elicitation_id in ids:
                self._waiting.setdefault(elicitation_id, []).append(event)
            now = any(elicitation_id in self._done for elicitation_id in ids)
        if now:
            event.set()

    def unwatch(self, ids: Iterable[str], event: Any) -> None:
        with self._lock:
            for elicitation_id in ids:
                waiting = self._waiting.get(elicitation_id)
                if waiting is not None and event in waiting:
                    waiting.remove(event)
                    if not waiting:
                        del self._waiting[elicitation_id]


def receiver_store(task_receiver: object) -> TaskStore | None:
    """The :class:`TaskStore` of ``task_receiver=``: None for False, a new store for True,
    the host's own store as given; either way given random ids and the wall clock where it
    has none.  Raises ``TypeError`` for anything else."""
    if task_receiver is False or task_receiver is None:
        return None
    if task_receiver is True:
        store = TaskStore()
    elif isinstance(task_receiver, TaskStore):
        store = task_receiver
    else:
        raise TypeError(f"task_receiver must be a bool or a TaskStore, not "
                        f"{type(task_receiver).__name__}")
    store.attach(new_id=lambda: secrets.token_urlsafe(TASK_ID_BYTES),
                 wall_offset=time.time() - time.monotonic())
    return store
