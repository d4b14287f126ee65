"""The async clients, written once for asyncio and trio.

Owns the client bases (``_clients``: :class:`AsyncClientBase` and the stdio and HTTP ones),
what every async connection does (``_pump``: :class:`AsyncPump`, the :class:`Runtime` and
:class:`TaskHandle` protocols a runtime supplies), the server process and the Streamable HTTP
endpoint as both runtimes drive them (``_stdio``, ``_http``), the client API they share
(``_face``, the source the threads face is generated from), and the two runtimes (``_asyncio``,
``_trio``: each one's primitives, byte movers, ``Client``, ``HttpClient``, ``connect_*`` and
``RUNTIME``).  The runtimes are not imported here: ``import mcp_proto_io.asyncio`` never loads
trio.  May import the core, the shared runtime-neutral modules beside the faces (``_client``,
``_era``, ``_fds``, ``_handlers``, ``_process``, ``_tuning``) and ``auth._deferred``; never
``_sync``, the Host or the faces.  :mod:`mcp_proto_io.asyncio` and :mod:`mcp_proto_io.trio`
offer the clients; the async Host builds on them.
"""

from __future__ import annotations

from ._clients import AsyncClientBase, AsyncHttpClientBase, AsyncStdioClientBase
from ._http import HttpPump
from ._pump import AsyncPump, Runtime, TaskHandle, Waiter
from ._stdio import StdioPump

__all__ = [
    "AsyncClientBase",
    "AsyncHttpClientBase",
    "AsyncPump",
    "AsyncStdioClientBase",
    "HttpPump",
    "Runtime",
    "StdioPump",
    "TaskHandle",
    "Waiter",
]
