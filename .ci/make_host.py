"""Generate the threads Host's base from the Host written once (the unasync step).

    python .ci/make_host.py           # write host/_sync.py and host/_synccatalog.py
    python .ci/make_host.py --check   # exit 1 if they are not what this would write

The Host's logic is written once, as async code, in ``host/_async.py``: ``async def``
becomes ``def``, each ``await`` goes, the async client (``AsyncClientBase``, ``aclose``) and
runtime (``Runtime``) become the threads binding's, the client-side imports become the
threads ones that the source's block names in a comment, and the continuation lines of a
statement that got shorter move left with it.  Nothing else differs, so the two Hosts cannot
drift apart.  The Host's resources and prompts (``host/_asynccatalog.py``, a subclass of
the Host's moves) become ``host/_synccatalog.py`` the same way, and the model-facing side
(``host/_asyncmodel.py``, over the catalog) ``host/_syncmodel.py``.  What is runtime-specific
stays by hand: ``host/_loop.py`` (asyncio and trio) and ``host/_threads.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
HOST = HERE.parent / "bindings" / "mcp_proto_io" / "host"
SOURCE = HOST / "_async.py"
TARGET = HOST / "_sync.py"
CATALOG_SOURCE = HOST / "_asynccatalog.py"
CATALOG_TARGET = HOST / "_synccatalog.py"
MODEL_SOURCE = HOST / "_asyncmodel.py"
MODEL_TARGET = HOST / "_syncmodel.py"

HEADER = '''"""The threads Host's moves: GENERATED from ``_async.py`` by ``.ci/make_host.py``;
do not edit (a test fails when it is not current).

:class:`HostBase` is the base of :class:`mcp_proto_io.threads.Host`: the same moves as the
async Host's, blocking, with every access to the host's state under its ``RLock`` (see
:mod:`mcp_proto_io.host._async` for how the code is written to hold on threads too).
"""
'''

CATALOG_HEADER = '''"""The threads Host's resources and prompts: GENERATED from
``_asynccatalog.py`` by ``.ci/make_host.py``; do not edit (a test fails when it is not
current).

:class:`CatalogBase` is between :class:`mcp_proto_io.host._sync.HostBase` and
:class:`mcp_proto_io.threads.Host`: the async Host's resources and prompts, blocking.
"""
'''

MODEL_HEADER = '''"""The threads Host between its servers and a model: GENERATED from
``_asyncmodel.py`` by ``.ci/make_host.py``; do not edit (a test fails when it is not
current).

:class:`ModelBase` is between :class:`mcp_proto_io.host._synccatalog.CatalogBase` and
:class:`mcp_proto_io.threads.Host`: the async Host's model-facing side, blocking.
"""
'''

#: The first line of the source's client-side import block.  The comment lines under it are
#: the threads Host's imports (``#`` and four spaces, then the import); the import lines
#: after them are the async Host's.  Both are in the one block of ``_async.py``: retargeting
#: the clients' imports changes that block only.
CLIENT_SIDE = "# -- the client side; for threads, .ci/make_host.py writes instead:"
GENERATED_SIDE = "# -- the client side (the threads Host's, from _async.py's block) --"
#: Other whole lines that change (of ``_async.py``, of ``_asynccatalog.py``).
LINES = (
    ("from collections.abc import Callable, Coroutine, Sequence\n",
     "from collections.abc import Callable, Sequence\n"),
)
CATALOG_LINES = (  # the base's import moves below ._common's, where isort puts it
    ("from ._async import AsyncHostBase\nfrom ._common import LIFECYCLE, failure\n",
     "from ._common import LIFECYCLE, failure\nfrom ._sync import HostBase\n"),
)
MODEL_LINES = (  # the base's import moves below ._common's (MODEL_BASE_IMPORT)
    ("from ._asynccatalog import AsyncCatalogBase\n", ""),
)
#: Where the model layer's base is imported in the generated module (after ._common's block,
#: where isort puts it).
MODEL_BASE_IMPORT = "from ._synccatalog import CatalogBase\n"

#: Replacements in code (outside comments and docstrings), in order.
CODE_WORDS = (
    (re.compile(r"\bAsyncHostBase\b"), "HostBase"),
    (re.compile(r"\bAsyncCatalogBase\b"), "CatalogBase"),
    (re.compile(r"\bAsyncModelBase\b"), "ModelBase"),
    (re.compile(r"\bAsyncClientBase\b"), "_ClientBase"),
    (re.compile(r"\bRuntime\b"), "BlockingRuntime"),
    (re.compile(r"Coroutine\[Any, Any, None\]"), "None"),
    (re.compile(r"\.aclose\b"), ".close"),
    (re.compile(r"in an async with block or await open\(\)"), "in a with block or call open()"),
)
_ASYNC = re.compile(r"\basync (def|with|for) ")
_AWAIT = re.compile(r"\bawait ")


def _face_generator() -> ModuleType:
    """``.ci/make_face.py`` (not a package), for its line helpers."""
    spec = importlib.util.spec_from_file_location("make_face", HERE / "make_face.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_FACE = _face_generator()


class StaleSource(Exception):
    """What the generator swaps is no longer in the source as it expects."""


def _swap(text: str, old: str, new: str, source: str = SOURCE.name) -> str:
    if text.count(old) != 1:
        raise StaleSource(f"{source} no longer holds exactly one {old.strip()!r}: "
                          f"update .ci/make_host.py with it")
    return text.replace(old, new)


def _client_side(lines: list[str], source: str = SOURCE.name) -> list[str]:
    """``lines`` with the client-side import block made the threads Host's."""
    starts = [i for i, line in enumerate(lines) if line == CLIENT_SIDE]
    if len(starts) != 1:
        raise StaleSource(f"{source} has no client-side import block (its first line: "
                          f"{CLIENT_SIDE!r})")
    start = starts[0]
    end = start + 1
    sync: list[str] = []
    while end < len(lines) and lines[end].startswith("#    "):
        sync.append(lines[end][len("#    "):])
        end += 1
    asynchronous = end
    while end < len(lines) and lines[end].startswith("from ..") \
            and not lines[end].startswith("from ._"):
        end += 1
    if not sync or end == asynchronous:
        raise StaleSource(f"{source}'s client-side import block must hold the threads "
                          "imports (commented) and then the async ones")
    return [*lines[:start], GENERATED_SIDE, *sync, *lines[end:]]


def _open_column(line: str) -> int | None:
    """The column of the innermost bracket a code line leaves open (None: it closes all)."""
    blanked = _FACE._STRING.sub(lambda m: "x" * len(m.group()), _FACE._code_and_comment(line)[0])
    stack: list[int] = []
    for column, char in enumerate(blanked):
        if char in "([{":
            stack.append(column)
        elif char in ")]}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def unasync(source: str, *, lines: tuple[tuple[str, str], ...] = LINES,
            header: str = HEADER, name: str = SOURCE.name) -> str:
    """The blocking twin of the async Host's source (by default ``_async.py``'s; the
    catalog's with its ``lines``, ``header`` and ``name``)."""
    body = source.split('"""', 2)[2].lstrip("\n")  # drop the source's module docstring
    for old, new in lines:
        body = _swap(body, old, new, name)
    out: list[str] = []
    shift = 0  # how far the continuation lines of the current statement move left
    depth = 0
    in_doc = False  # inside a triple-quoted string: text, never code
    for raw in _client_side(body.splitlines(), name):
        if in_doc or raw.lstrip().startswith('"""'):  # docstrings stay as they are
            if raw.count('"""') % 2 == 1:
                in_doc = not in_doc
            out.append(raw)
            continue
        line = raw
        if depth > 0 and shift and line.strip():
            indent = len(line) - len(line.lstrip(" "))
            line = line[min(shift, max(indent - 4, 0)):]
        code, comment = _FACE._code_and_comment(line)
        for pattern, word in CODE_WORDS:
            code = pattern.sub(word, code)
        code = _AWAIT.sub("", _ASYNC.sub(r"\1 ", code))
        new = code + comment
        if depth == 0:
            # Only lines aligned with an opening bracket move (as far as that bracket did);
            # a hanging indent stays.
            hanging = code.rstrip().endswith(("(", "[", "{"))
            before, after = _open_column(line), _open_column(code)
            shift = 0 if hanging or before is None or after is None \
                else max(before - after, 0)
            depth = max(_FACE._depth(code), 0)
        else:
            depth = max(depth + _FACE._depth(code), 0)
        out.append(new)
    return header + "\n" + "\n".join(out) + "\n"


def unasync_catalog(source: str) -> str:
    """The blocking twin of the catalog's source."""
    return unasync(source, lines=CATALOG_LINES, header=CATALOG_HEADER,
                   name=CATALOG_SOURCE.name)


def unasync_model(source: str) -> str:
    """The blocking twin of the model layer's source (its base imported after ._common's
    block, where isort puts it)."""
    text = unasync(source, lines=MODEL_LINES, header=MODEL_HEADER, name=MODEL_SOURCE.name)
    anchor = "\n)\n\n__all__"
    if text.count(anchor) != 1:
        raise StaleSource(f"{MODEL_SOURCE.name}: the ._common import block must come last "
                          "before __all__")
    return text.replace(anchor, "\n)\n" + MODEL_BASE_IMPORT + "\n__all__")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only check that it is current")
    args = ap.parse_args(argv)
    try:
        text = unasync(SOURCE.read_text(encoding="utf-8"))
        catalog = unasync_catalog(CATALOG_SOURCE.read_text(encoding="utf-8"))
        model = unasync_model(MODEL_SOURCE.read_text(encoding="utf-8"))
    except StaleSource as exc:
        print(exc, file=sys.stderr)
        return 1
    status = _FACE.write_or_check(TARGET, text, args.check, "make_host.py")
    status = _FACE.write_or_check(CATALOG_TARGET, catalog, args.check, "make_host.py") \
        or status
    return _FACE.write_or_check(MODEL_TARGET, model, args.check, "make_host.py") or status


if __name__ == "__main__":
    sys.exit(main())
