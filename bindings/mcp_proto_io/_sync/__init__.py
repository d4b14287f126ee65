"""The threads binding's client: the sans-IO core driven by threads.

Owns the blocking clients (``_clients``: :class:`ClientBase`, :class:`Client`,
:class:`HttpClient` and their ``connect_*``), what every threads connection does (``_pump``),
the stdio and Streamable HTTP connections (``_stdio``, ``_http``) and the blocking face of the
client API (``_face``, generated from ``_async/_face.py`` by ``.ci/make_face.py``).  May import
the core, the shared runtime-neutral modules beside the faces (``_client``, ``_era``, ``_fds``,
``_handlers``, ``_process``, ``_tuning``) and ``auth._deferred``; never ``_async``, the Host
or the faces.  :mod:`mcp_proto_io.threads` offers these clients; the threads Host builds on
them.
"""

from __future__ import annotations

from ._clients import Client, ClientBase, HttpClient, connect_http, connect_stdio

__all__ = ["Client", "ClientBase", "HttpClient", "connect_http", "connect_stdio"]
