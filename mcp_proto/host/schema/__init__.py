"""Tool input schemas in the shape each model provider accepts.

Owns :func:`~mcp_proto.host.normalize_schema` (``_normalize``), the targets, limits, public
types and shared walk (``_base``), two schemas as one (``_merge``: ``$ref`` siblings and
``allOf`` as their intersection), the minimal form (``_minimal``: ``openai``, ``anthropic``,
``gemini``) and the other provider targets (``_strict``, ``_gemini``).  Pure functions of
their input.  May import the shared records of :mod:`mcp_proto`; nothing else of the host
layer.  Its public names are exported by :mod:`mcp_proto.host`.
"""

__all__: list[str] = []
