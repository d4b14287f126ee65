"""The ``mcp-proto`` command and its demo server.

Owns the command line: ``_main`` (the entry point, one server given by ``-- COMMAND`` or
``--url``, exit codes), ``_args`` (the parser, the table of where each flag applies,
``--args``), ``_host`` (every command with ``--config FILE``, and ``config check|convert``),
``_show`` (tables and results), ``_watch`` (the progress bar, task status lines, the waiting
line, the library's log records on stderr), ``_auth`` (``login``, ``logout``, ``auth
status``) and the bundled demo server (:mod:`.demo_server`, run as ``python -m
mcp_proto_io.cli.demo_server``).  It is a user of the library like any other: it imports the
threads face, :mod:`mcp_proto_io.host` and :mod:`mcp_proto_io.auth`; nothing imports it but
``__main__`` and the ``mcp-proto`` script."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the ``mcp-proto`` command (see :mod:`._main`); its exit status.  Imported at the call,
    so that ``python -m mcp_proto_io.cli.demo_server`` (a module of this package) loads the
    standard library alone."""
    from ._main import main as run  # noqa: PLC0415 - the demo server must not pay for it

    return run(argv, out)
