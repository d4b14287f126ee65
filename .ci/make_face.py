"""Generate the threads client's face from the async one (the unasync step).

    python .ci/make_face.py           # write bindings/mcp_proto_io/_sync/_face.py
    python .ci/make_face.py --check   # exit 1 if it is not what this would write

The client API is written once, in ``_async/_face.py``: ``async def`` becomes ``def``, each
``await`` goes, the class is renamed, a few docstring words change (``await`` -> ``wait for``),
and the continuation lines of a statement that got shorter move left with it.  Nothing else
differs, so the two faces cannot drift apart.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bindings" / "mcp_proto_io"
SOURCE = PACKAGE / "_async" / "_face.py"
TARGET = PACKAGE / "_sync" / "_face.py"

HEADER = '''"""The client API of the threads binding: GENERATED from ``_async/_face.py`` by
``.ci/make_face.py``; do not edit (a test fails when it is not current).

:class:`ClientFace` is the face of :class:`mcp_proto_io.threads.Client` and ``HttpClient``: the
same operations and docstrings as the async clients', blocking.
"""
'''

#: Replacements in code (outside strings and comments).
CODE_WORDS = (("AsyncClientFace", "ClientFace"),)
#: Replacements in the docstrings, in order.
WORDS = (
    ("AsyncClientFace", "ClientFace"),
    ("and await its result", "and wait for its result"),
    ("Await a tool call's task", "Wait for a tool call's task"),
)
_ASYNC = re.compile(r"\basync def ")
_AWAIT = re.compile(r"\bawait ")
_LIVE = re.compile(r"\(self\._live\(\)\)")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')  # a one-line string literal


def _depth(code: str) -> int:
    """The change of bracket depth over the code of a line (its strings are not brackets)."""
    code = _STRING.sub('""', code)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _code_and_comment(line: str) -> tuple[str, str]:
    """A code line split before its comment (a ``#`` inside a string is not one)."""
    blanked = _STRING.sub(lambda m: "x" * len(m.group()), line)
    cut = blanked.find("#")
    return (line, "") if cut < 0 else (line[:cut], line[cut:])


def unasync(source: str) -> str:
    """The blocking twin of the async face's source."""
    body = source.split('"""', 2)[2].lstrip("\n")  # drop the source's module docstring
    out: list[str] = []
    shift = 0  # how far the continuation lines of the current statement move left
    depth = 0
    in_doc = False  # inside a triple-quoted string: text, never code
    for raw in body.splitlines():
        if in_doc or raw.lstrip().startswith('"""'):
            line = raw
            for old, word in WORDS:  # words change in the docstrings only
                line = line.replace(old, word)
            if raw.count('"""') % 2 == 1:
                in_doc = not in_doc
            out.append(line)
            continue
        line = raw
        if depth > 0 and shift and line.strip():
            indent = len(line) - len(line.lstrip(" "))
            line = line[min(shift, max(indent - 4, 0)):]
        code, comment = _code_and_comment(line)
        for old, word in CODE_WORDS:
            code = code.replace(old, word)
        code = _LIVE.sub("self._live()", _AWAIT.sub("", _ASYNC.sub("def ", code)))
        new = code + comment
        if depth == 0:
            # Only lines aligned with an opening bracket move; a hanging indent stays.
            hanging = code.rstrip().endswith(("(", "[", "{"))
            shift = 0 if hanging else max(len(line) - len(new), 0)
            depth = max(_depth(code), 0)
        else:
            depth = max(depth + _depth(code), 0)
        out.append(new)
    return HEADER + "\n" + "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check that it is current")
    args = ap.parse_args(argv)
    return write_or_check(TARGET, unasync(SOURCE.read_text(encoding="utf-8")), args.check,
                          "make_face.py")


def write_or_check(target: Path, text: str, check: bool, script: str) -> int:
    """Write ``text`` to ``target``, or (``check``) say whether it is there already: the exit
    status (1: stale, named on stderr with the ``.ci/`` ``script`` that rewrites it)."""
    if check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is not current: run python .ci/{script}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
