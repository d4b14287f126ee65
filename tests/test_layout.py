"""The layout shows the architecture: rooms that name what they own, and the rules they keep.

The modules and their imports are read from the source by ``docs/make_diagrams.py`` (the same
reading draws the map of the rooms in docs/design.md), so what these tests hold the code to is
what the map shows.  Every import counts: at import time, inside a function, a PEP 562 table's
strings, under ``TYPE_CHECKING``, and the ``__init__`` of every package an import passes
through.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _load_maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_diagrams", DOCS / "make_diagrams.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_diagrams", module)
    spec.loader.exec_module(module)
    return module


MAKER = _load_maker()
MODULES = MAKER.find_modules()
EDGES = MAKER.module_imports(MODULES)

# -- no import circle ---------------------------------------------------------------------------


def _circle_text(circle: list[Any]) -> str:
    """``a (import, line 3) -> b (lazy, line 9) -> a``."""
    steps = [f"{e.source} ({e.kind}, line {e.line})" for e in circle]
    return " -> ".join([*steps, circle[0].source])


def test_the_scanner_finds_the_modules() -> None:
    assert {"mcp_proto", "mcp_proto.session._session", "mcp_proto.wire._ndjson",
            "mcp_proto_io", "mcp_proto_io.threads"} <= set(MODULES)
    assert MODULES["mcp_proto.session._session"].room == "mcp_proto.session"
    assert MODULES["mcp_proto._types"].room == "mcp_proto (records)"
    assert MODULES["mcp_proto"].room == "mcp_proto"
    assert MODULES["mcp_proto_io.threads"].room == "mcp_proto_io (top)"


def test_no_import_circle() -> None:
    found = MAKER.circles(EDGES)
    assert not found, "import circles:\n" + "\n".join(_circle_text(c) for c in found)


#: Small packages with a circle the scanner must see, one way of importing each, and the
#: kinds of import the circle it finds is made of.
PLANTED = {
    "in a function": ({
        "__init__.py": "",
        "a.py": "def f():\n    from . import b\n",
        "b.py": "from .a import f\n",
    }, {"lazy", "import"}),
    "under TYPE_CHECKING": ({
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
        "b.py": "import pkg.a\nclass B: ...\n",
    }, {"types", "import"}),
    "from a package import a submodule": ({
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "from pkg import a\n",
    }, {"import"}),
    "through a package's __init__": ({
        "__init__.py": "",
        "a.py": "from pkg.sub.c import x\n",
        "sub/__init__.py": "from .. import a\n",
        "sub/c.py": "x = 1\n",
    }, {"import"}),
    "a name of the package being imported": ({
        "__init__.py": "from .a import x\nNAME = 1\n",
        "a.py": "from . import NAME\nx = NAME\n",
    }, {"import"}),
    "a string a loader imports": ({
        "__init__.py": "",
        "a.py": "from importlib import import_module\n"
                "def load():\n    return import_module('.b', __package__)\n",
        "b.py": "from pkg.a import load\n",
    }, {"lazy", "import"}),
    "a PEP 562 table": ({
        "__init__.py": "from importlib import import_module\nfrom .b import y\n"
                       "_LAZY = {'A': '.a'}\n"
                       "def __getattr__(name):\n    return import_module(_LAZY[name], __name__)\n",
        "a.py": "A = 1\n",
        "b.py": "def f():\n    from .a import A\ny = 1\n",
    }, None),  # no circle: pkg -> a (lazy), pkg -> b -> a; nothing comes back
    "none, though packages import their children": ({
        "__init__.py": "from .a import x\n",
        "a.py": "from . import b\nfrom .b import y\nx = y\n",
        "b.py": "from pkg.sub import z\ny = 1\n",
        "sub/__init__.py": "from ._c import z\n",
        "sub/_c.py": "import pkg._d\nfrom .. import _d\nz = 1\n",
        "_d.py": "",
    }, None),
}


def _plant(tmp_path: Path, files: Mapping[str, str]) -> list[list[Any]]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    known = MAKER.find_modules([MAKER.Root("pkg", tmp_path / "pkg", "pkg (top)")])
    found: list[list[Any]] = MAKER.circles(MAKER.module_imports(known))
    return found


@pytest.mark.parametrize("way", sorted(PLANTED))
def test_the_scanner_sees_a_planted_circle(tmp_path: Path, way: str) -> None:
    files, kinds = PLANTED[way]
    found = _plant(tmp_path, files)
    if kinds is None:
        assert found == [], [_circle_text(c) for c in found]
    else:
        assert len(found) == 1, [_circle_text(c) for c in found]
        assert {e.kind for e in found[0]} == kinds, _circle_text(found[0])


def test_the_scanner_tells_the_kinds_apart(tmp_path: Path) -> None:
    _plant(tmp_path, PLANTED["a PEP 562 table"][0])
    known = MAKER.find_modules([MAKER.Root("pkg", tmp_path / "pkg", "pkg (top)")])
    edges = {(e.source, e.target): e.kind for e in MAKER.module_imports(known)}
    assert edges == {("pkg", "pkg.a"): "lazy", ("pkg", "pkg.b"): "import",
                     ("pkg.b", "pkg.a"): "lazy"}


# -- the rooms' import rules --------------------------------------------------------------------
# What each room may import (DESIGN.md section 3, and each room's __init__ docstring).  A room
# no rule covers, or a rule for a room that is gone, fails: the table and the code move together.

RECORDS = "mcp_proto (records)"
#: Every room of the core: its face, its records and its packages (not ``mcp_proto_io``).
CORE = frozenset({"mcp_proto", RECORDS, "mcp_proto.*"})
TOP = "mcp_proto_io (top)"
#: A room (or a pattern of rooms, ``*`` any text) -> the rooms (or patterns) it may import.
#: A room's own name wins over a pattern.
RULES: dict[str, frozenset[str]] = {
    # the shared records every room may import: they import no room
    RECORDS: frozenset(),
    "mcp_proto.wire": frozenset({RECORDS}),
    "mcp_proto.session": frozenset({RECORDS, "mcp_proto.wire"}),
    "mcp_proto.auth": frozenset({RECORDS}),
    "mcp_proto.http": frozenset({RECORDS, "mcp_proto.wire", "mcp_proto.session",
                                 "mcp_proto.auth"}),
    "mcp_proto.host": frozenset({RECORDS, "mcp_proto.host.*"}),
    # the test doubles' server side (in-memory server, transcripts, replay): over the wire
    "mcp_proto.testing": frozenset({RECORDS, "mcp_proto.wire"}),
    # the host layer's subrooms are pure functions of their input over the shared records ...
    "mcp_proto.host.*": frozenset({RECORDS}),
    # ... but the config dialects make the host layer's records (HostConfig, RestartPolicy)
    "mcp_proto.host.config": frozenset({RECORDS, "mcp_proto.host"}),
    # the public face re-exports the core, and only the core
    "mcp_proto": CORE,
    # the bindings may import all of the core; the core never imports them
    "mcp_proto_io": frozenset(),
    # the runtime faces and the client code they share (written once: _async for asyncio and
    # trio, _sync for threads), over the bindings' own authorization I/O
    TOP: frozenset({*CORE, "mcp_proto_io._async", "mcp_proto_io._sync",
                    "mcp_proto_io.auth", "mcp_proto_io.host",
                    "mcp_proto_io.cli"}),  # the cli: only from __main__ (below)
    "mcp_proto_io._async": frozenset({*CORE, TOP, "mcp_proto_io.auth"}),
    "mcp_proto_io._sync": frozenset({*CORE, TOP, "mcp_proto_io.auth"}),
    "mcp_proto_io.auth": CORE,
    "mcp_proto_io.host": frozenset({*CORE, TOP, "mcp_proto_io._async",
                                    "mcp_proto_io._sync", "mcp_proto_io.auth"}),
    "mcp_proto_io.cli": frozenset({*CORE, TOP, "mcp_proto_io.host", "mcp_proto_io.auth"}),
}


def _is_core(room: str) -> bool:
    return not room.startswith("mcp_proto_io")


def _rule(room: str) -> frozenset[str] | None:
    """What ``room`` may import: its own rule, else the longest pattern matching it."""
    if room in RULES:
        return RULES[room]
    patterns = sorted((p for p in RULES if "*" in p and fnmatch.fnmatchcase(room, p)),
                      key=len, reverse=True)
    return RULES[patterns[0]] if patterns else None


def _allowed(source: str, target: str) -> bool:
    rule = _rule(source) or frozenset()
    if _is_core(source) and not _is_core(target):
        return False  # whatever a pattern says: the core never imports the bindings
    return any(fnmatch.fnmatchcase(target, allowed) for allowed in rule)


def test_the_rules_see_what_they_forbid() -> None:
    assert not _allowed("mcp_proto.wire", "mcp_proto.session")
    assert not _allowed("mcp_proto.host.schema", "mcp_proto.host")
    assert not _allowed("mcp_proto", "mcp_proto_io")
    assert not _allowed(RECORDS, "mcp_proto.wire")
    assert _allowed("mcp_proto.host", "mcp_proto.host.schema")
    assert not _allowed("mcp_proto_io.auth", TOP)
    assert _allowed("mcp_proto_io.auth", RECORDS)
    assert _allowed("mcp_proto_io.cli", "mcp_proto.host.config")


def test_every_room_has_a_rule() -> None:
    rooms = {module.room for module in MODULES.values()}
    lawless = sorted(r for r in rooms if _rule(r) is None)
    assert not lawless, f"rooms without a rule: {lawless}"
    stale = {r for r in RULES if not any(fnmatch.fnmatchcase(room, r) for room in rooms)}
    assert not stale, f"rules for no room: {sorted(stale)}"


def test_rooms_import_only_what_their_rule_allows() -> None:
    broken = sorted(
        f"{e.source} imports {e.target} ({e.kind}, line {e.line}): "
        f"{MODULES[e.source].room} may not import {MODULES[e.target].room}"
        for e in EDGES
        if MODULES[e.source].room != MODULES[e.target].room
        and not _allowed(MODULES[e.source].room, MODULES[e.target].room))
    assert not broken, "\n".join(broken)


def test_only_the_main_shim_imports_the_cli() -> None:
    users = {e.source for e in EDGES if MODULES[e.target].room == "mcp_proto_io.cli"
             and MODULES[e.source].room != "mcp_proto_io.cli"}
    assert users <= {"mcp_proto_io.__main__"}, sorted(users)


# -- small modules, no casts, no families -------------------------------------------------------

#: The most lines a module may have: about what a reader holds in mind at once.  A module past it
#: holds more than one concern; split it by what each part owns (and give each a room's name).
MAX_MODULE_LINES = 850


def test_no_module_over_the_line_limit() -> None:
    long = sorted(
        (n, name) for name, module in MODULES.items()
        if (n := len(module.path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES)
    assert not long, f"modules over {MAX_MODULE_LINES} lines: " + ", ".join(
        f"{name} ({n})" for n, name in reversed(long))


def test_no_cast_in_the_bindings() -> None:
    """The bindings type their values instead of asserting them: no ``typing.cast``."""
    found = []
    for name, module in MODULES.items():
        if module.root != "mcp_proto_io":
            continue
        for node in ast.walk(ast.parse(module.path.read_text("utf-8"))):
            called = isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == "cast")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "cast"))
            imported = isinstance(node, ast.ImportFrom) and node.module == "typing" and any(
                alias.name == "cast" for alias in node.names)
            if called or imported:
                found.append(f"{name}:{getattr(node, 'lineno', 0)}")
    assert not found, "cast in the bindings: " + ", ".join(found)


#: Modules of one folder allowed to share a prefix, and why.
ALLOWED_FAMILIES: set[tuple[str, frozenset[str]]] = set()  # (folder, names): none today


def _prefix(filename: str) -> str:
    return filename.removesuffix(".py").lstrip("_").split("_")[0]


def test_no_family_of_modules_told_apart_by_a_prefix() -> None:
    """Two modules ``_auth_a.py`` and ``_auth_b.py`` side by side are a room without a name:
    give them a package.  (One ``_auth_errors.py`` alone is a module, not a family.)"""
    repo = DOCS.parent
    folders: dict[Path, list[str]] = {}
    for module in MODULES.values():
        if module.path.name != "__init__.py":
            folders.setdefault(module.path.parent, []).append(module.path.name)
    families = []
    for folder, names in sorted(folders.items()):
        groups: dict[str, set[str]] = {}
        for name in names:
            if name != "__main__.py":
                groups.setdefault(_prefix(name), set()).add(name)
        where = folder.relative_to(repo).as_posix()
        families += [f"{where}: {sorted(group)}" for group in groups.values()
                     if len(group) > 1 and (where, frozenset(group)) not in ALLOWED_FAMILIES]
    assert not families, "families told apart by a prefix:\n" + "\n".join(families)


# -- each room says what it owns and what it may import -----------------------------------------

OWNS = re.compile(r"\bowns\b", re.IGNORECASE)
#: A sentence on imports that states a rule ("May import ...", "imports nothing ...", "never
#: imports ...", "only ... imports it").
IMPORT_RULE = re.compile(r"\bimports?\b", re.IGNORECASE)
RULE_WORD = re.compile(r"\b(may|never|nothing|only|not|no)\b", re.IGNORECASE)


def _packages() -> list[Path]:
    folders = {module.path.parent for module in MODULES.values()}
    return sorted(folders)


@pytest.mark.parametrize("folder", _packages(),
                         ids=lambda p: p.relative_to(DOCS.parent).as_posix())
def test_every_package_says_what_it_owns_and_may_import(folder: Path) -> None:
    init = folder / "__init__.py"
    assert init.exists(), f"{folder} is a room without an __init__"
    doc = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
    assert doc, f"{init} has no docstring"
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(doc.split()))
    assert any(OWNS.search(s) for s in sentences), f"{init}: no sentence says what it owns"
    assert any(IMPORT_RULE.search(s) and RULE_WORD.search(s) for s in sentences), (
        f"{init}: no sentence says what it may import")
