"""What the harnesses share: the atheris entry point (:func:`fuzz_main`, which alone imports
atheris), :class:`Choices` (decisions read from the data, for the harnesses that build
structured input from bytes), :func:`escaped` (an unexpected exception as the AssertionError
a check raises) and :func:`bug_matcher` (the ``known_bug`` function of a KNOWN_BUGS table).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

__all__ = ["Choices", "bug_matcher", "escaped", "fuzz_main"]

T = TypeVar("T")

#: The package whose code the fuzzer gets coverage from.
PACKAGE = Path(__file__).resolve().parent.parent / "mcp_proto"


def _instrument(atheris: Any) -> None:
    """Coverage instrumentation: by default only the functions of :data:`PACKAGE` (starting
    takes a second instead of ~20 for everything imported); ``MCP_PROTO_FUZZ_INSTRUMENT=all``
    instruments everything loaded (the standard library's pure-Python parts too)."""
    if os.environ.get("MCP_PROTO_FUZZ_INSTRUMENT") == "all":
        atheris.instrument_all()
        return
    root = str(PACKAGE) + os.sep
    funcs = [obj for obj in gc.get_objects() if isinstance(obj, types.FunctionType)
             and obj.__code__.co_filename.startswith(root)]
    for func in funcs:
        try:
            atheris.instrument_func(func)
        except Exception as exc:  # as atheris.instrument_all does: say so, go on
            sys.stderr.write(f"WARNING: not instrumented: {func.__qualname__}: {exc}\n")
    sys.stderr.write(f"INFO: instrumented {len(funcs)} functions of {PACKAGE.name}\n")


def fuzz_main(check: Callable[[bytes], None],
              known_bug: Callable[[BaseException], str | None] | None = None) -> None:
    """Fuzz ``check`` with atheris.  With ``MCP_PROTO_FUZZ_SKIP_KNOWN=1`` an AssertionError
    that ``known_bug`` recognises is not a crash, so the fuzzer keeps looking for others."""
    atheris = importlib.import_module("atheris")
    _instrument(atheris)
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


class Choices:
    """Decisions read from the data, first byte first; once it is used up every decision is
    0 (the first option, an empty container), so a shorter input is a smaller structure."""

    __slots__ = ("_data", "_i")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._i = 0

    def byte(self) -> int:
        i = self._i
        if i >= len(self._data):
            return 0
        self._i = i + 1
        return self._data[i]

    def below(self, n: int) -> int:
        """A number in ``range(n)`` (two bytes when ``n`` is over 256)."""
        if n <= 1:
            return 0
        return (self.byte() << 8 | self.byte()) % n if n > 256 else self.byte() % n

    def chance(self, one_in: int) -> bool:
        """True one time in ``one_in`` (for uniform data); False once the data is used up."""
        return self.remaining() > 0 and self.below(one_in) == one_in - 1

    def pick(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes of the data (fewer at its end)."""
        out = self._data[self._i:self._i + n]
        self._i += len(out)
        return out

    def remaining(self) -> int:
        return max(0, len(self._data) - self._i)


def escaped(what: str, exc: BaseException) -> NoReturn:
    """Raise the AssertionError for ``exc`` escaping ``what`` (the cause is kept, so a
    KNOWN_BUGS entry can match its type)."""
    raise AssertionError(f"{what} raised {type(exc).__name__}: {exc}"[:400]) from exc


def bug_matcher(table: Mapping[str, tuple[type[BaseException], str]]
                ) -> Callable[[BaseException], str | None]:
    """The ``known_bug`` of a harness: the tag of the first entry whose exception type
    matches the AssertionError's cause (or the AssertionError itself, for a property that
    failed without an exception) and whose text is in the cause's message or in the
    AssertionError's (which names the function that raised)."""
    def known_bug(exc: BaseException) -> str | None:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        for tag, (kind, text) in table.items():
            if isinstance(cause, kind) and (text in str(cause) or text in str(exc)):
                return tag
        return None
    return known_bug
