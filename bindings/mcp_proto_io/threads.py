"""Blocking MCP client: the sans-IO core driven by threads.

::

    from mcp_proto_io.threads import connect_stdio

    with connect_stdio(["mcp-server-time"]) as client:
        tools = client.list_tools()
        result = client.call_tool("get_current_time", {"timezone": "Etc/UTC"})

Every method is thread-safe; calls from many threads are pipelined on one connection.  Each
connection runs three threads: the stdout reader (feeds the core), the service thread (writes
what the reader and timers produced, fires the core's deadlines) and the stderr reader (keeps
the last 8 KiB).  Callers write their own requests.  No protocol decision is made here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy
from ._memory import connectors as _connectors
from ._sync import Client, ClientBase, HttpClient, connect_http, connect_stdio

connect_memory, connect_replay = _connectors(Client, __name__)

if TYPE_CHECKING:
    from ._lazy import *  # noqa: F403 - the authorization classes, named once there
    from .host._threads import Host, connect_config
else:  # the same names, imported when first used (PEP 562): a client-only program needs neither
    __getattr__, __dir__ = _lazy.lazy_names(__name__, ".host._threads")

__all__ = ["Client", "Host", "HttpClient", "connect_config", "connect_http", "connect_memory",
           "connect_replay", "connect_stdio"]
__all__ += _lazy.__all__
__all__.sort()

_ClientBase = ClientBase  # either client: the CLI types its clients with it
