"""Host config files as text: every ``mcpServers`` dialect in, :class:`~mcp_proto.host.HostConfig`
out, and back.

Owns dialect detection and parsing (``_parse``, one entry at a time in ``_entry``), variable and
``.env`` expansion (``_expand``), writing back and converting (``_dump``, with the TOML writer
``_toml``) and where each host keeps its config (``_locations``: path arithmetic only).  Pure:
the bindings read and write the files.  May import the shared records and the host layer's
records (``mcp_proto.host._spec``, ``_restart``); its public names are exported by
:mod:`mcp_proto.host`.
"""

__all__: list[str] = []
