"""The supervised Host of every runtime: many servers as one, from a config, written once.

Owns the Host's moves, written once as async code (``_async``, its resources and prompts
across servers, ``_asynccatalog``, and its side that faces a model, ``_asyncmodel``: tool
definitions per target, search, approvals, validation, budgets, instructions, meta-tools) and
generated blocking for threads (``_sync``, ``_synccatalog`` and ``_syncmodel``, by
``.ci/make_host.py``; a test checks they are current), over a small
runtime: the async clients' ``Runtime`` or threads' (``_blocking``).  What differs by runtime
is by hand and small: ``_loop`` (asyncio and trio: close from any thread, ``async with``),
``_asyncio`` and ``_trio`` (their clients), ``_threads`` (joins, ``with``).  Also owns what
every Host shares (``_common``: a spec's client arguments, the meta-tools' text, options)
and the config files on disk (``_config_files``, the only code that reads or writes them).
Every decision is :class:`mcp_proto.host.HostCore`'s.  May import the core, the runtime
faces' clients and :mod:`mcp_proto_io.auth`; the faces import it on first use of ``Host`` or
``connect_config`` (PEP 562), so a program that only opens clients never loads it.
"""

__all__: list[str] = []
