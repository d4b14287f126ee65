"""``python -m mcp_proto_io``: the ``mcp-proto`` command (:mod:`mcp_proto_io.cli`)."""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
