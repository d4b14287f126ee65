"""The threads Host's runtime: the few primitives the Host written once (:mod:`._async`, made
blocking in ``_sync``) asks of ``self._rt``, on threads.

A task is a daemon thread; an event is a :class:`threading.Event`.  Nothing here knows the
Host.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable

__all__ = ["RUNTIME", "BlockingRuntime", "TaskHandle"]

TaskHandle = threading.Thread
"""A task of the threads Host: its thread (``close()`` joins it)."""


class BlockingRuntime:
    """Threads' primitives for the Host (the blocking twin of the async ``Runtime``)."""

    @staticmethod
    def spawn(name: str, fn: Callable[[], None],
              done: Callable[[threading.Thread], None]) -> threading.Thread:
        """Start ``fn()`` in a daemon thread; ``done(thread)`` when it ended (whatever way:
        an exception is printed, never raised)."""

        def run() -> None:
            try:
                fn()
            except Exception:  # a thread of the host must never fail silently
                traceback.print_exc()
            finally:
                done(thread)

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        return thread

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(seconds)

    @staticmethod
    def event() -> threading.Event:
        """A new one-shot event (``set()``, ``wait()``)."""
        return threading.Event()

    @staticmethod
    def wait_event(event: threading.Event, timeout: float | None) -> None:
        """Wait until ``event`` is set or ``timeout`` seconds passed (None: no bound)."""
        event.wait(None if timeout is None else max(0.0, timeout))


RUNTIME = BlockingRuntime()
