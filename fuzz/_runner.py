"""The atheris entry point shared by the harnesses (imported only when run as a script)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

__all__ = ["fuzz_main"]


def fuzz_main(check: Callable[[bytes], None],
              known_bug: Callable[[BaseException], str | None] | None = None) -> None:
    """Fuzz ``check`` with atheris.  With ``MCP_PROTO_FUZZ_SKIP_KNOWN=1`` an AssertionError
    that ``known_bug`` recognises is not a crash, so the fuzzer keeps looking for others."""
    atheris = importlib.import_module("atheris")
    atheris.instrument_all()
    target = check
    if known_bug is not None and os.environ.get("MCP_PROTO_FUZZ_SKIP_KNOWN") == "1":
        def target(data: bytes) -> None:
            try:
                check(data)
            except AssertionError as exc:
                if known_bug(exc) is None:
                    raise
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()
