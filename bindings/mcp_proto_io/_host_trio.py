"""The trio Host: :class:`~mcp_proto_io._host_async.AsyncHostBase` on the trio clients.

:mod:`mcp_proto_io.trio` imports this when its ``Host`` or ``connect_config`` is first
used (PEP 562), so a program that only opens clients does not load the host layer.
"""

from __future__ import annotations

from ._host_async import AsyncHostBase
from ._host_common import host_connector
from .trio import _RUNTIME, connect_http, connect_stdio

__all__ = ["Host", "connect_config"]


class Host(AsyncHostBase):
    """Many MCP servers as one, on trio.  Create it with :func:`connect_config`; see
    :class:`mcp_proto_io._host_async.AsyncHostBase` for the methods (all awaited)."""

    __module__ = "mcp_proto_io.trio"  # its public home (defined here to be imported late)
    _rt = _RUNTIME
    _connect_stdio = staticmethod(connect_stdio)
    _connect_http = staticmethod(connect_http)


connect_config = host_connector(Host)
