"""Async MCP client on asyncio: the sans-IO core driven by the event loop's own callbacks.

::

    from mcp_proto_io.asyncio import connect_stdio

    async with connect_stdio(["mcp-server-time"]) as client:
        tools = await client.list_tools()
        result = await client.call_tool("get_current_time", {"timezone": "Etc/UTC"})

Same names and behaviour as :mod:`mcp_proto_io.threads`, with ``await``.  Calls from many
tasks are pipelined on one connection.  Bytes move through asyncio transports and protocols
(no reader task: a read is a callback that feeds the core and resolves the waiting futures),
and the core's deadlines are one ``loop.call_at`` timer.  This is the native pump the design
asks for when anyio costs more than 10% (``benchmarks/bench_pump.py`` measures it).  Handlers
and callbacks may be plain or ``async`` functions; plain ones run on the loop and must not
block.  Cancelling a task that awaits a call cancels the call on the server.  No protocol
decision is made here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy
from ._async._asyncio import Client, HttpClient, connect_http, connect_stdio
from ._memory import connectors as _connectors

connect_memory, connect_replay = _connectors(Client, __name__)

if TYPE_CHECKING:
    from ._lazy import *  # noqa: F403 - the authorization classes, named once there
    from .host._asyncio import Host, connect_config
else:  # the same names, imported when first used (PEP 562): a client-only program needs neither
    __getattr__, __dir__ = _lazy.lazy_names(__name__, ".host._asyncio")

__all__ = ["Client", "Host", "HttpClient", "connect_config", "connect_http", "connect_memory",
           "connect_replay", "connect_stdio"]
__all__ += _lazy.__all__
__all__.sort()

