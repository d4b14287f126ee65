"""Runtime bindings of mcp-proto: the only place that does I/O.

Pick a runtime by import; the modules offer the same names::

    from mcp_proto_io.threads import connect_stdio

This package owns the three public faces (``threads``, ``asyncio``, ``trio``), the client code
they share (the rooms ``_async`` and ``_sync`` and the runtime-neutral modules beside them), and
the rooms ``host`` (the supervised Host), ``auth`` (authorization I/O) and ``cli`` (the
``mcp-proto`` command and its demo server).  It may import :mod:`mcp_proto` and the standard
library (trio only in ``trio`` and what it loads); the core never imports it.  Importing the
package itself loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
