"""Runtime bindings of mcp-proto: the only place that does I/O.

Pick a runtime by import; the modules offer the same names::

    from mcp_proto_io.threads import connect_stdio
"""

from __future__ import annotations

__all__: list[str] = []
