#!/usr/bin/env python3
"""Draw docs/diagrams.md's state diagrams from the transition tables, and docs/design.md's map
of the rooms from the code.

    python docs/make_diagrams.py            # rewrite both (design.md between its markers only)
    python docs/make_diagrams.py --check    # exit 1 when either differs from the code

Each diagram is Mermaid (``stateDiagram-v2``; the restart schedule a table), made from the
table the code runs on, never drawn by hand: the session lifecycle (``session/_state.py``),
era choice (its probing part), task statuses (``_tasks.py``), the Host's server states
(``host/_state.py``) and restart schedule (``DEFAULT_RESTART``), and the authorization flow
(``auth/_states.py``).

The map of the rooms is read from the source with ``ast`` (nothing of it is imported): every
room (a package, or the top-level modules of ``mcp_proto`` and ``mcp_proto_io``), what it owns
(the first sentence of its ``__init__`` docstring; of each top-level module's), its modules,
and which rooms it imports, at import time, on first use or for the type checker only, as a
Mermaid ``flowchart`` and a table.  ``tests/test_layout.py`` holds the code to its rules with
the same reading (:func:`find_modules`, :func:`module_imports`, :func:`circles`), and
``tests/test_diagrams.py`` fails when the docs fall behind.
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_proto import _tasks  # noqa: E402
from mcp_proto.auth._states import TRANSITIONS as AUTH_TRANSITIONS  # noqa: E402
from mcp_proto.host import _state as host_state  # noqa: E402
from mcp_proto.host._restart import DEFAULT_RESTART  # noqa: E402
from mcp_proto.session import _state  # noqa: E402

TARGET = REPO / "docs" / "diagrams.md"


def _id(name: str) -> str:
    """A Mermaid state id for a state name (letters, digits and ``_`` only)."""
    return "".join(c if c.isalnum() else "_" for c in name)


def state_diagram(edges: Iterable[tuple[str, str, str]], *, initial: str,
                  final: Iterable[str] = ()) -> str:
    """``stateDiagram-v2`` text for ``(from, label, to)`` edges, in a stable order: edges
    sharing their ends are drawn once, their labels joined."""
    merged: dict[tuple[str, str], list[str]] = {}
    for source, label, target in edges:
        labels = merged.setdefault((source, target), [])
        if label not in labels:
            labels.append(label)
    lines = ["stateDiagram-v2", f"    [*] --> {_id(initial)}"]
    for (source, target), labels in sorted(merged.items()):
        lines.append(f"    {_id(source)} --> {_id(target)}: {', '.join(sorted(labels))}")
    lines += [f"    {_id(state)} --> [*]" for state in sorted(final)]
    return "\n".join(lines)


def lifecycle() -> str:
    table: Mapping[tuple[_state.State, _state.Input], _state.State] = _state._TRANSITIONS
    return state_diagram(((s.value, i.value, t.value) for (s, i), t in table.items()
                          if not (s is t is _state.State.CLOSED)),
                         initial=_state.State.IDLE.value, final=[_state.State.CLOSED.value])


def era_choice() -> str:
    """The part of the lifecycle that chooses the era: the probe and what ends it."""
    probing = _state.State.PROBING
    table = _state._TRANSITIONS
    edges = [(s.value, i.value, t.value) for (s, i), t in table.items()
             if probing in (s, t) and i not in (_state.Input.CLOSE,
                                               _state.Input.TRANSPORT_ENDED)]
    edges += [(_state.State.INITIALIZING.value, i.value, t.value)
              for (s, i), t in table.items()
              if s is _state.State.INITIALIZING and i is _state.Input.INIT_OK]
    return state_diagram(edges, initial=_state.State.IDLE.value)


def tasks() -> str:
    edges = [(old, "poll", new) for old, nexts in _tasks._NEXT.items() for new in nexts
             if old not in _tasks.TERMINAL and old != new]
    return state_diagram(edges, initial="working", final=_tasks.TERMINAL)


def host_servers() -> str:
    return state_diagram(((s, i, t) for (s, i), t in host_state.TRANSITIONS.items()
                          if s != t),
                         initial="stopped")


def restart_schedule() -> str:
    policy = DEFAULT_RESTART
    rows = ["| consecutive failure | next start after |", "|---|---|"]
    rows += [f"| {n} | {policy.delay(n):g} s |" for n in range(1, policy.max_attempts)]
    rows.append(f"| {policy.max_attempts} | given up (`failed`) |")
    rows.append("")
    rows.append(f"The count starts over after {policy.stable_after:g} s of uptime.")
    return "\n".join(rows)


def authorization() -> str:
    return state_diagram(((s, o, t) for (s, o), t in AUTH_TRANSITIONS.items()),
                         initial="idle", final=["done"])


SECTIONS = (
    ("Session lifecycle", "`mcp_proto/session/_state.py`", lifecycle, True),
    ("Era choice", "`mcp_proto/session/_state.py` (the probe)", era_choice, True),
    ("Task statuses", "`mcp_proto/_tasks.py`", tasks, True),
    ("Host: server states", "`mcp_proto/host/_state.py`", host_servers, True),
    ("Host: restart schedule", "`mcp_proto/host/_restart.py` (`DEFAULT_RESTART`)",
     restart_schedule, False),
    ("Authorization flow", "`mcp_proto/auth/_states.py`", authorization, True),
)


def render() -> str:
    out = ["# State diagrams", "",
           "Generated from the transition tables by `python docs/make_diagrams.py`; "
           "`tests/test_diagrams.py` fails when this file and the tables differ. Do not edit "
           "by hand.", ""]
    for title, source, draw, mermaid in SECTIONS:
        out += [f"## {title}", "", f"From {source}.", ""]
        body = draw()
        out += ["```mermaid", body, "```", ""] if mermaid else [body, ""]
    return "\n".join(out)


# -- the map of the rooms --------------------------------------------------------------------
# Read from the source with ``ast`` (nothing is imported): every module of the two packages,
# the room it sits in, and every import it makes, told apart by when it runs.

DESIGN = REPO / "docs" / "design.md"
BEGIN = "<!-- rooms:begin -->"
END = "<!-- rooms:end -->"

#: An import that runs when its module is imported.
AT_IMPORT = "import"
#: An import that runs on first use: inside a function, or a name in a PEP 562 table.
ON_USE = "lazy"
#: An import only the type checker follows (under ``if TYPE_CHECKING:``).
TYPES_ONLY = "types"
#: The kinds, strongest first: two modules' edge is the strongest of their imports.
KINDS = (AT_IMPORT, ON_USE, TYPES_ONLY)

#: Calls that make a module's strings of module names imports: ``import_module(".x")`` and
#: the runtime faces' ``lazy_names(__name__, ".host")`` load the module the string names.
LOADERS = frozenset({"import_module", "lazy_names"})

_MODULE_STRING = re.compile(r"\.*[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Root:
    """A top-level package: its name, its folder, and the room its top-level modules make."""

    package: str
    path: Path
    top: str


#: The packages the map covers.  The top-level modules of each (its ``__init__`` aside, which
#: is the package's face) form one room.
ROOTS = (
    Root("mcp_proto", REPO / "mcp_proto", "mcp_proto (records)"),
    Root("mcp_proto_io", REPO / "bindings" / "mcp_proto_io", "mcp_proto_io (top)"),
)


@dataclass(frozen=True)
class Module:
    """One source file: its dotted name, whether it is a package's ``__init__``, its room
    and its root package."""

    name: str
    path: Path
    package: bool
    room: str
    root: str


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (both module names), of kind ``kind``, on ``line``."""

    source: str
    target: str
    kind: str
    line: int


def find_modules(roots: Iterable[Root] = ROOTS) -> dict[str, Module]:
    """Every ``.py`` file under the roots, by dotted name, in name order."""
    found: dict[str, Module] = {}
    for root in roots:
        for path in sorted(root.path.rglob("*.py")):
            parts = [root.package, *path.relative_to(root.path).with_suffix("").parts]
            package = parts[-1] == "__init__"
            if package:
                parts.pop()
            name = ".".join(parts)
            parent = name if package else ".".join(parts[:-1])
            room = root.top if parent == root.package and not package else parent
            found[name] = Module(name, path, package, room, root.package)
    return dict(sorted(found.items()))


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _statements(tree: ast.AST, kind: str = AT_IMPORT) -> Iterator[tuple[ast.AST, str]]:
    """Every node under ``tree`` with the kind an import there would be."""
    for node in ast.iter_child_nodes(tree):
        yield from _visit(node, kind)


def _visit(node: ast.AST, kind: str) -> Iterator[tuple[ast.AST, str]]:
    """``node`` and every node under it, with the kind an import there would be: the body of
    ``if TYPE_CHECKING:`` (or the ``else`` of ``if not TYPE_CHECKING:``) is for types only, a
    function's body runs on first use."""
    if isinstance(node, ast.If):
        test, negated = node.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        if _is_type_checking(test):
            body, orelse = (kind, TYPES_ONLY) if negated else (TYPES_ONLY, kind)
            for child in node.body:
                yield from _visit(child, body)
            for child in node.orelse:
                yield from _visit(child, orelse)
            return
    yield node, kind
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        kind = TYPES_ONLY if kind == TYPES_ONLY else ON_USE
    yield from _statements(node, kind)


def _package_of(module: Module) -> str:
    return module.name if module.package else module.name.rpartition(".")[0]


def _absolute(module: Module, level: int, name: str | None) -> str | None:
    """The module a ``from`` import names (``level`` dots, then ``name``); None above the
    top package."""
    if not level:
        return name
    parts = _package_of(module).split(".")
    if level - 1 >= len(parts):
        return None
    parts = parts[:len(parts) - (level - 1)]
    return ".".join([*parts, *([name] if name else [])])


def _with_parents(target: str, source: str, known: Mapping[str, Module]) -> list[str]:
    """``target`` and each package it sits in (importing it runs their ``__init__``), our
    modules only; the packages ``source`` sits in are left out: they are already being
    imported when ``source`` runs."""
    parts = target.split(".")
    names = [".".join(parts[:n]) for n in range(1, len(parts))]
    out = [n for n in names if n in known and not source.startswith(n + ".")]
    if target in known:
        out.append(target)
    return [n for n in out if n != source]


def _targets(module: Module, node: ast.AST, loads: bool,
             known: Mapping[str, Module]) -> list[str]:
    """The modules ``node`` of ``module`` imports: an import statement's, or the module a
    string names in a module with a loader (:data:`LOADERS`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _absolute(module, node.level, node.module)
        if base is None:
            return []
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names]
    if (loads and isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _MODULE_STRING.fullmatch(node.value)):
        dots = len(node.value) - len(node.value.lstrip("."))
        name = _absolute(module, dots, node.value[dots:]) if dots else node.value
        return [name] if name is not None and name in known else []
    return []


def module_imports(known: Mapping[str, Module]) -> list[Edge]:
    """Every import between the ``known`` modules, sorted: ``import a.b``, ``from a import
    b`` (``b`` a module or a name of ``a``), relative ones, the packages each runs on the
    way, and the strings a loader (:data:`LOADERS`) imports, on first use."""
    edges: dict[tuple[str, str, str], int] = {}  # (source, target, kind) -> first line
    for module in known.values():
        tree = ast.parse(module.path.read_text("utf-8"), str(module.path))
        nodes = list(_statements(tree))
        loads = any(isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id in LOADERS)
            or (isinstance(node.func, ast.Attribute) and node.func.attr in LOADERS))
            for node, _ in nodes)
        for node, kind in nodes:
            if isinstance(node, ast.Constant) and kind == AT_IMPORT:
                kind = ON_USE  # noqa: PLW2901 - a string is imported when the loader runs
            line = getattr(node, "lineno", 0)
            for target in _targets(module, node, loads, known):
                for name in _with_parents(target, module.name, known):
                    key = module.name, name, kind
                    edges[key] = min(edges.get(key, line), line)
    return sorted((Edge(*key, line) for key, line in edges.items()),
                  key=lambda e: (e.source, e.target, KINDS.index(e.kind)))


def circles(edges: Iterable[Edge]) -> list[list[Edge]]:
    """One shortest circle through each knot of mutually importing modules (a strongly
    connected component of more than one module), every kind of import counted."""
    graph: dict[str, dict[str, Edge]] = {}
    for edge in edges:
        graph.setdefault(edge.source, {}).setdefault(edge.target, edge)
        graph.setdefault(edge.target, {})
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    knots: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            knot: list[str] = []
            while not knot or knot[-1] != node:
                knot.append(stack.pop())
            if len(knot) > 1:
                knots.append(sorted(knot))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    found = []
    for knot in sorted(knots):
        start, members = knot[0], set(knot)
        came: dict[str, Edge] = {}
        frontier = [start]
        while start not in came:  # breadth first, back to the start
            nxt_frontier = []
            for node in frontier:
                for nxt, edge in sorted(graph[node].items()):
                    if nxt in members and nxt not in came:
                        came[nxt] = edge
                        nxt_frontier.append(nxt)
            frontier = nxt_frontier
        path = [came[start]]
        while path[-1].source != start:
            path.append(came[path[-1].source])
        found.append(path[::-1])
    return found


def room_imports(known: Mapping[str, Module],
                 edges: Iterable[Edge]) -> dict[tuple[str, str], str]:
    """``(room, room it imports) -> kind``, the strongest kind of the modules' imports."""
    rooms: dict[tuple[str, str], str] = {}
    for edge in edges:
        pair = known[edge.source].room, known[edge.target].room
        if pair[0] != pair[1]:
            kind = rooms.get(pair, TYPES_ONLY)
            rooms[pair] = min(kind, edge.kind, key=KINDS.index)
    return dict(sorted(rooms.items()))


def _docstring(module: Module) -> str:
    tree = ast.parse(module.path.read_text("utf-8"), str(module.path))
    return ast.get_docstring(tree) or ""


def _markdown(text: str) -> str:
    """reST roles and literals as Markdown code, on one line, safe in a table cell."""
    text = re.sub(r":\w+:`(~?)([^`]+)`",
                  lambda m: f"`{m.group(2).rpartition('.')[2] if m.group(1) else m.group(2)}`",
                  text)
    text = text.replace("``", "`")
    return " ".join(text.split()).replace("|", "\\|")


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph (all of it, without a full stop)."""
    paragraph = text.strip().split("\n\n")[0]
    match = re.match(r"(.+?[.!?])(?:\s|$)", " ".join(paragraph.split()))
    return _markdown(match.group(1) if match else paragraph)


def _room_order(members: Mapping[str, list[Module]], roots: tuple[Root, ...],
                imports: Mapping[tuple[str, str], str]) -> list[str]:
    """The rooms from the bottom up: root by root, then by how many rooms each one reaches,
    then by name."""
    rank = {root.package: n for n, root in enumerate(roots)}
    reach: dict[str, int] = {}
    for room in members:
        seen = {room}
        todo = [room]
        while todo:
            here = todo.pop()
            for source, target in imports:
                if source == here and target not in seen:
                    seen.add(target)
                    todo.append(target)
        reach[room] = len(seen) - 1
    return sorted(members, key=lambda r: (rank[members[r][0].root], reach[r], r))


def _uses(room: str, imports: Mapping[tuple[str, str], str]) -> str:
    """The rooms ``room`` imports, kind by kind, for the table."""
    uses = []
    for kind in KINDS:
        targets = [f"`{t}`" for (s, t), k in imports.items() if s == room and k == kind]
        if targets:
            uses.append(("" if kind == AT_IMPORT else f"{kind}: ") + ", ".join(targets))
    return "; ".join(uses) or "no room"


def _short(module: Module) -> str:
    return f"`{module.name.rpartition('.')[2]}`"


#: The width of the map's prose, as the rest of design.md is written.
PROSE_WIDTH = 96

#: How the flowchart draws each kind of import.
ARROWS = {AT_IMPORT: "-->", ON_USE: "-. lazy .->", TYPES_ONLY: "-. types .->"}


def rooms_map(roots: Iterable[Root] = ROOTS) -> str:
    """The map of the rooms (Markdown with a Mermaid flowchart), as design.md holds it between
    its markers."""
    roots = tuple(roots)
    known = find_modules(roots)
    imports = room_imports(known, module_imports(known))
    members: dict[str, list[Module]] = {}
    for module in known.values():
        members.setdefault(module.room, []).append(module)
    order = _room_order(members, roots, imports)
    chart = ["flowchart TD"]
    for root in roots:
        chart.append(f'    subgraph {_id(root.package)}_rooms["{_shown(root.path)}/"]')
        chart += [f'        {_id(room)}["{room}"]' for room in order
                  if members[room][0].root == root.package]
        chart.append("    end")
    chart += [f"    {_id(s)} {ARROWS[kind]} {_id(t)}" for (s, t), kind in imports.items()]
    table = ["| room | owns | modules | imports |", "|---|---|---|---|"]
    for room in order:
        init = [m for m in members[room] if m.package]
        owns = first_sentence(_docstring(init[0])) if init else "the modules listed below"
        names = " ".join(_short(m) for m in members[room] if not m.package)
        table.append(f"| `{room}` | {owns} | {names or '(`__init__` only)'} | "
                     f"{_uses(room, imports)} |")
    out = ["## The map of the rooms", "", textwrap.fill(
        "Drawn from the code by `python docs/make_diagrams.py` (the imports read with `ast`); "
        "`tests/test_diagrams.py` fails when this block and the code differ, and "
        "`tests/test_layout.py` holds the rooms to their import rules. Do not edit between the "
        "markers.", PROSE_WIDTH), "", textwrap.fill(
        "A room is a package (its `__init__` docstring says what it owns) or the top-level "
        "modules of `mcp_proto` or `mcp_proto_io` (their `__init__`, the public face, is a "
        "room of its own). An arrow is an import: plain when it runs at import time, `lazy` on "
        "first use (inside a function, or a PEP 562 table of names), `types` for the type "
        "checker only (`if TYPE_CHECKING:`).", PROSE_WIDTH), "",
           "```mermaid", *chart, "```", "", *table]
    for root in roots:
        if root.top in members:
            out += ["", f"The top-level modules of `{root.package}` (`{root.top}`):", ""]
            out += [f"- {_short(m)}: {first_sentence(_docstring(m)) or '(no docstring)'}"
                    for m in members[root.top]]
    return "\n".join(out)


def _design_with_map(text: str, block: str) -> str:
    """design.md's text with ``block`` between its markers (put right after its title when
    the markers are missing)."""
    marked = f"{BEGIN}\n{block}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + marked + rest.split(END, 1)[1]
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{marked}\n{rest}"


def _shown(path: Path) -> str:
    """``path`` from the checkout's top, when it is in the checkout."""
    return (path.relative_to(REPO) if path.is_relative_to(REPO) else path).as_posix()


def main(argv: list[str]) -> int:
    """Rewrite docs/diagrams.md and the map in docs/design.md; with ``--check``, only say
    (exit 1) whether either differs from the code."""
    design = DESIGN.read_text("utf-8")
    wanted = ((TARGET, TARGET.read_text("utf-8") if TARGET.exists() else "", render()),
              (DESIGN, design, _design_with_map(design, rooms_map())))
    if "--check" in argv:
        stale = [path for path, current, text in wanted if current != text]
        for path in stale:
            print(f"{_shown(path)} differs from the code: run "
                  "python docs/make_diagrams.py", file=sys.stderr)
        return 1 if stale else 0
    for path, current, text in wanted:
        if current != text:
            path.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
