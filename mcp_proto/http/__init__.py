"""The HTTP transports: Streamable HTTP over h11, and the 2024-11-05 HTTP+SSE fallback.

Owns which HTTP requests a session's messages become and what the answers mean
(``_streamable``: :class:`~mcp_proto.http._streamable.StreamableHttp`), with the authorization
flow's headers and challenges.  May import the shared records, :mod:`mcp_proto.wire`,
:mod:`mcp_proto.session` and the flow's types from :mod:`mcp_proto.auth`; nothing imports it
but the bindings (``import mcp_proto`` does not load it: stdio clients never pay for it).
"""

__all__: list[str] = []
