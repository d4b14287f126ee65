"""Async MCP client on trio: the sans-IO core driven by a few system tasks.

::

    from mcp_proto_io.trio import connect_stdio

    async with connect_stdio(["mcp-server-time"]) as client:
        tools = await client.list_tools()
        result = await client.call_tool("get_current_time", {"timezone": "Etc/UTC"})

Same names and behaviour as :mod:`mcp_proto_io.threads`, with ``await``.  A stdio connection
runs a stdout reader, a stderr reader, a stdin writer (only used when the pipe is full:
callers write their own requests) and a timer for the core's deadlines; an HTTP exchange runs
in a task of its own.  They are system tasks owned by the connection, not by the caller's
nursery, so a client holds no cancel scope across ``async with``: it may be closed from any
task, in any order, or from another thread (``client.close()``).  Cancelling a scope around a
call cancels the call on the server.  Handlers may be plain or ``async`` functions; plain ones
run on the loop and must not block.  No protocol decision is made here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy
from ._async._trio import Client, HttpClient, connect_http, connect_stdio
from ._memory import connectors as _connectors

connect_memory, connect_replay = _connectors(Client, __name__)

if TYPE_CHECKING:
    from ._lazy import *  # noqa: F403 - the authorization classes, named once there
    from .host._trio import Host, connect_config
else:  # the same names, imported when first used (PEP 562): a client-only program needs neither
    __getattr__, __dir__ = _lazy.lazy_names(__name__, ".host._trio")

__all__ = ["Client", "Host", "HttpClient", "connect_config", "connect_http", "connect_memory",
           "connect_replay", "connect_stdio"]
__all__ += _lazy.__all__
__all__.sort()

