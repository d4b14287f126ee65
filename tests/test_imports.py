"""The core is sans-IO: no module of ``mcp_proto`` imports I/O, clocks or concurrency."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_proto

FORBIDDEN = frozenset({
    "_thread", "anyio", "asyncio", "multiprocessing", "select", "selectors", "socket",
    "subprocess", "threading", "time", "trio",
})
CORE_DIR = Path(mcp_proto.__file__).parent
MODULES = sorted(CORE_DIR.rglob("*.py"))  # the host/ subpackage too


def imported_modules(source: str) -> set[str]:
    """Top-level names of every module ``source`` imports, at any depth of the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value.split(".")[0])
    return names


def test_the_scanner_sees_imports() -> None:
    source = "import os\nfrom time import monotonic\ndef f():\n    import socket.x\n"
    assert imported_modules(source) == {"os", "time", "socket"}


def test_modules_found() -> None:
    assert {p.name for p in MODULES} >= {"__init__.py", "_session.py", "_ndjson.py"}
    assert {p.relative_to(CORE_DIR).as_posix() for p in MODULES} >= {
        "host/__init__.py", "host/_state.py", "host/_names.py"}


def _core_id(p: Path) -> str:
    return p.relative_to(CORE_DIR).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_core_id)
def test_core_module_imports_no_io(path: Path) -> None:
    bad = imported_modules(path.read_text("utf-8")) & FORBIDDEN
    assert not bad, f"{path.name} imports {sorted(bad)}: the core must stay sans-IO"


@pytest.mark.parametrize("path", MODULES, ids=_core_id)
def test_core_does_not_import_the_bindings(path: Path) -> None:
    """``import mcp_proto`` runs only these modules (and the standard library), so none of them
    may import ``mcp_proto_io``."""
    depth = len(path.relative_to(CORE_DIR).parts)  # 1 in mcp_proto/, 2 in mcp_proto/host/
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level <= depth, f"{path.name} imports from outside the package"
    assert "mcp_proto_io" not in imported_modules(path.read_text("utf-8"))


BINDINGS_DIR = Path(__file__).resolve().parent.parent / "bindings" / "mcp_proto_io"
RUNTIME_FREE = {
    # module of the bindings -> runtimes it must not import (the shared async code is
    # runtime-neutral; each runtime face imports only its own runtime, so importing
    # mcp_proto_io.asyncio never pays for trio, and no binding pulls in anyio)
    "_async_base.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "asyncio.py": {"trio", "anyio", "threading", "_thread"},
    "trio.py": {"asyncio", "anyio", "threading", "_thread"},
    "_host_async.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
}


@pytest.mark.parametrize("name", sorted(RUNTIME_FREE))
def test_async_bindings_import_only_their_runtime(name: str) -> None:
    bad = imported_modules((BINDINGS_DIR / name).read_text("utf-8")) & RUNTIME_FREE[name]
    assert not bad, f"{name} imports {sorted(bad)}"
