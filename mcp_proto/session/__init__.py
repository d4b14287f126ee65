"""The session: :class:`~mcp_proto.ClientSession` and the parts it coordinates.

Owns one connection's protocol: the lifecycle table (``_state``), the era choice (``_era``),
the request table and outbox (``_outbox``: ids, pending requests, deadlines), the inbox, the
host's operations and their results (``_operations``: the state of a list walk or of a call
that became a task, which a pending request carries; ``_results``), server requests,
multi-round-trip requests (``_mrtr``), subscriptions and the listen stream, the response
cache, the task runner and the stateless era's wire pieces (``_modern``).  May import the
shared records and :mod:`mcp_proto.wire`; never :mod:`mcp_proto.http`, :mod:`mcp_proto.auth`
or :mod:`mcp_proto.host`, which sit above it.  Its public names are exported by
:mod:`mcp_proto`.
"""

__all__: list[str] = []
