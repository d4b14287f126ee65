"""The wire formats: JSON, JSON-RPC 2.0, the bounded NDJSON framer and line reader, the SSE parser.

Owns how bytes become JSON values and messages and back, every read bounded.  Decides nothing
about what a message means: that is :mod:`mcp_proto.session`'s.  May import the shared records
(``mcp_proto._errors``, ``_limits``, ``_types`` ...) and nothing else of the package; the
session and the HTTP transport import it.  Its public names are exported by :mod:`mcp_proto`.
"""

__all__: list[str] = []
