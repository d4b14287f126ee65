"""The async Host's life on an event loop (asyncio and trio): what :mod:`._async` (and its
resources and prompts, :mod:`._asynccatalog`) leaves to the runtime.

Everything runs on the loop's thread, so the guard is a no-op; ``close()`` from another
thread is handed to the loop.  The supervisor and the host's tasks belong to the host (never
to the caller's task group or cancel scope); ``on_server_event`` (a plain or an async
function) is called in order in one task of the host's, so a slow callback holds up no
server.  ``aclose()`` waits until every client and task of the host ended.
"""

from __future__ import annotations

import inspect
import time
import traceback
from collections import deque
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, TypeVar

from mcp_proto.host import HostConfig, ServerEvent

from ._asyncmodel import AsyncModelBase
from ._common import HostOptions

__all__ = ["AsyncHost"]

_H = TypeVar("_H", bound="AsyncHost")

#: Seconds between two looks at the host's tasks while ``aclose()`` waits for the cancelled
#: ones to end (each ends at its next await: a few loop iterations).
CLOSE_POLL = 0.005


class AsyncHost(AsyncModelBase):
    """Many MCP servers as one, from a config, on asyncio or trio.  Create it with
    ``connect_config`` and use it in ``async with``.

    Servers start concurrently when the block is entered (lazy: each at first use); one
    that fails leaves the rest usable (see :meth:`servers`).  A server that exits fails the
    call in flight with :class:`~mcp_proto.ServerExited` and is started again by the
    restart policy; no call is ever replayed.  Cancelling a ``call_tool`` cancels it on its
    server.
    """

    _new_guard = staticmethod(nullcontext)  # one thread: nothing to guard against

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(config, options, clock)
        self._token: Any = None  # the loop the host was opened on (for close())
        self._events: deque[ServerEvent] = deque()
        self._dispatching = False

    def _opened(self) -> None:
        self._token = self._rt.token()

    async def _answer(self, ask: Callable[[Any], Any], request: Any) -> Any:
        answer = ask(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    def _dispatch(self) -> None:
        """Queue the state changes for ``on_server_event``, called in order in one task."""
        self._events.extend(self._drain())
        if self._options.on_server_event is None:
            self._events.clear()
            return
        if self._events and not self._dispatching:
            self._dispatching = True
            self._spawn("mcp-proto-host-events", self._run_events)

    async def _run_events(self) -> None:
        callback = self._options.on_server_event
        try:
            while self._events and callback is not None:
                event = self._events.popleft()
                try:
                    result = callback(event)
                    if inspect.isawaitable(result):
                        await result
                except Exception:  # a host callback must not kill the host
                    traceback.print_exc()
        finally:
            self._dispatching = False

    def close(self) -> None:
        """Stop every server and the host's tasks without waiting (callable from any thread
        or a sync callback); ``await aclose()`` also waits for them.  Idempotent."""
        if self._closed:
            return
        token = self._token
        if token is None or not self._rt.run_soon_threadsafe(token, self._close_now):
            self._close_now()  # not opened, or the loop ended: the clients kill their servers

    def _close_now(self) -> None:
        clients = self._shut()
        if clients is None:
            return
        self._closing = clients  # aclose() waits for them
        for client in clients:
            client.close()

    async def aclose(self) -> None:
        """Stop every server (concurrently) and wait until they and the host's tasks ended.
        Calls in flight fail with :class:`~mcp_proto.ConnectionClosed`."""
        self._close_now()
        clients, self._closing = self._closing, []
        for client in clients:
            await client.aclose()
        for task in list(self._tasks):
            if not self._rt.is_current(task):
                task.cancel()
        while any(not self._rt.is_current(t) for t in self._tasks):
            await self._rt.sleep(CLOSE_POLL)

    async def __aenter__(self: _H) -> _H:
        try:
            return await self.open()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
