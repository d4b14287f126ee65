"""The blocking Host: many servers as one, on threads.

Its moves are :class:`~mcp_proto_io.host._sync.HostBase`'s and its resources and prompts
:class:`~mcp_proto_io.host._synccatalog.CatalogBase`'s (generated from the Host written once,
:mod:`._async` and :mod:`._asynccatalog`): one supervisor thread sleeps until the core's next
deadline or a change, each start and each listing runs on its own short-lived thread, and every
access to the host's state is under one ``RLock``. What is the threads' own is here:
``close()`` stops the clients on threads of their own and joins the host's threads (each
bounded), ``with``, and ``on_server_event`` called by whichever thread drained the change, in
order.
"""

from __future__ import annotations

import inspect
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from mcp_proto.host import HostConfig

# -- the client side --
from .._sync import connect_http, connect_stdio
from ._blocking import RUNTIME
from ._common import HostOptions, host_connector
from ._syncmodel import ModelBase

__all__ = ["Host", "connect_config"]

#: Seconds ``close()`` waits for a start or listing thread that is still in a handshake (its
#: client was closed, so it ends at once; the bound only guards against a stuck callback).
THREAD_JOIN = 10.0


class Host(ModelBase):
    """Many MCP servers as one, from a config.  Create it with :func:`connect_config` and use
    it in a ``with`` block.  Thread-safe.

    Servers start concurrently when the block is entered (lazy: each at first use); one
    that fails leaves the rest usable (see :meth:`servers`).  A server that exits fails the
    call in flight with :class:`~mcp_proto.ServerExited` and is started again by the
    restart policy; no call is ever replayed.
    """

    _rt = RUNTIME
    _connect_stdio = staticmethod(connect_stdio)
    _connect_http = staticmethod(connect_http)
    _new_guard = staticmethod(threading.RLock)  # re-entrant: a callback may call the host

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(config, options, clock)
        # held while events are delivered (re-entrant: the callback may edit the host)
        self._dispatching = threading.RLock()
        self._delivering = threading.local()  # .depth: this thread is in the callback

    def _answer(self, ask: Callable[[Any], Any], request: Any) -> Any:
        answer = ask(request)
        if inspect.isawaitable(answer):  # an async callback cannot be awaited on threads
            close = getattr(answer, "close", None)
            if close is not None:
                close()  # no "never awaited" warning: it was refused, not forgotten
            raise TypeError("the threads Host takes a plain approval callback, not an async "
                            "one (use the asyncio or trio Host for that)")
        return answer

    def _dispatch(self) -> None:
        """Give the host's callback the state changes, in order (never with the host's lock
        held: the callback may call the host).  Whichever thread drains the events also
        delivers them, under the dispatch lock, so no later event overtakes an earlier one."""
        callback = self._options.on_server_event
        with self._dispatching:
            with self._guard:
                events = self._drain()
            if callback is None:
                return
            depth = getattr(self._delivering, "depth", 0)
            self._delivering.depth = depth + 1
            try:
                for event in events:
                    try:
                        callback(event)
                    except Exception:  # a host callback must not kill the supervisor
                        traceback.print_exc()
            finally:
                self._delivering.depth = depth

    def close(self) -> None:
        """Stop every server (concurrently) and the host's threads.  Calls in flight fail
        with :class:`~mcp_proto.ConnectionClosed`.  Idempotent; callable from any thread.
        From an ``on_server_event`` callback it starts the stops and returns at once: the
        host's threads wait to deliver their events until that callback returns, so joining
        them there could only time out."""
        clients = self._shut()
        if clients is None:
            return
        stoppers = [threading.Thread(target=c.close, name="mcp-proto-host-stop", daemon=True)
                    for c in clients]
        for t in stoppers:
            t.start()
        if getattr(self._delivering, "depth", 0):
            return
        for t in stoppers:
            t.join(THREAD_JOIN)
        me = threading.current_thread()
        with self._guard:  # the supervisor's too
            threads = [t for t in self._tasks if t is not me]
        for t in threads:
            t.join(THREAD_JOIN)

    def __enter__(self) -> Host:
        try:
            return self.open()
        except BaseException:  # Ctrl-C during a slow start, or a bug: stop what started
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()


connect_config = host_connector(Host)
