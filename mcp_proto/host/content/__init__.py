"""Tool results as provider content: what a model provider takes back after a tool call.

Owns :func:`~mcp_proto.host.to_provider_content` and :class:`~mcp_proto.host.ProviderContent`
(``_convert``: the targets, each provider's table of block converters, its media limits and
the message that answers the call, the default budget per target), result budgets
(``_budget``: :class:`~mcp_proto.host.Budget`, ``budget_result``, the
:class:`~mcp_proto.host.ResultStore` that pages a whole result back) and
``structuredContent`` as JSON (``_structured``: a value's JSON text at any depth, and
whether a text block already holds it).  Pure functions of their input.  May import the
shared records of :mod:`mcp_proto` (``_types``, ``_errors``, ``_notes``);
nothing else of the host layer.  Its public names are exported by :mod:`mcp_proto.host`.
"""

__all__: list[str] = []
