"""The trio Host: :class:`~mcp_proto_io.host._loop.AsyncHost` on the trio clients.

:mod:`mcp_proto_io.trio` imports this when its ``Host`` or ``connect_config`` is first
used (PEP 562), so a program that only opens clients does not load the host layer.
"""

from __future__ import annotations

from .._async._trio import RUNTIME, connect_http, connect_stdio
from ._common import host_connector
from ._loop import AsyncHost

__all__ = ["Host", "connect_config"]


class Host(AsyncHost):
    """Many MCP servers as one, on trio.  Create it with :func:`connect_config`; see
    :class:`mcp_proto_io.host._loop.AsyncHost` for the methods (all awaited)."""

    __module__ = "mcp_proto_io.trio"  # its public home (defined here to be imported late)
    _rt = RUNTIME
    _connect_stdio = staticmethod(connect_stdio)
    _connect_http = staticmethod(connect_http)


connect_config = host_connector(Host)
