"""docs/diagrams.md is drawn from the transition tables (docs/make_diagrams.py): a change
to a table without the docs, or to the docs by hand, fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_proto.auth._states import TRANSITIONS
from mcp_proto.host import _state as host_state
from mcp_proto.session import _state

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_diagrams", DOCS / "make_diagrams.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_diagrams", module)
    spec.loader.exec_module(module)
    return module


def test_docs_match_the_tables() -> None:
    maker = _maker()
    assert (DOCS / "diagrams.md").read_text("utf-8") == maker.render(), (
        "docs/diagrams.md differs from the tables: run python docs/make_diagrams.py")


def test_every_transition_of_each_table_is_drawn() -> None:
    maker = _maker()
    lifecycle = maker.lifecycle()
    for (source, event), target in _state._TRANSITIONS.items():
        if source is target is _state.State.CLOSED:
            continue
        line = [ln for ln in lifecycle.splitlines()
                if ln.strip().startswith(f"{maker._id(source.value)} --> "
                                         f"{maker._id(target.value)}:")]
        assert line and event.value in line[0], (source, event, target)
    auth = maker.authorization()
    for (source, outcome), target in TRANSITIONS.items():
        assert any(ln.strip().startswith(f"{maker._id(source)} --> {maker._id(target)}:")
                   and outcome in ln for ln in auth.splitlines()), (source, outcome)
    host = maker.host_servers()
    for (source, move), target in host_state.TRANSITIONS.items():
        if source != target:
            assert any(ln.strip().startswith(f"{source} --> {target}:") and move in ln
                       for ln in host.splitlines()), (source, move)


def test_a_changed_table_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    maker = _maker()
    changed = dict(TRANSITIONS)
    changed[("idle", "invented")] = "done"
    monkeypatch.setattr(maker, "AUTH_TRANSITIONS", changed)
    assert (DOCS / "diagrams.md").read_text("utf-8") != maker.render()


# -- the map of the rooms in docs/design.md ------------------------------------------------------


def _map_block(text: str) -> str:
    maker = _maker()
    assert text.count(maker.BEGIN) == 1 and text.count(maker.END) == 1, (
        "docs/design.md needs one rooms:begin and one rooms:end marker")
    return text.split(maker.BEGIN, 1)[1].split(maker.END, 1)[0].strip("\n")


def test_design_opens_with_the_map_of_the_rooms() -> None:
    maker = _maker()
    text = (DOCS / "design.md").read_text("utf-8")
    title, _, rest = text.partition("\n")
    assert title.startswith("# ") and rest.lstrip("\n").startswith(maker.BEGIN), (
        "the map comes first after design.md's title")
    assert _map_block(text) == maker.rooms_map(), (
        "docs/design.md's map of the rooms differs from the code: run "
        "python docs/make_diagrams.py")


def test_the_map_shows_every_room_module_and_import() -> None:
    maker = _maker()
    known = maker.find_modules()
    block = maker.rooms_map()
    for module in known.values():
        assert f"`{module.room}`" in block, module.room
        if not module.package:
            assert f"`{module.name.rpartition('.')[2]}`" in block, module.name
    imports = maker.room_imports(known, maker.module_imports(known))
    assert imports
    for (source, target), kind in imports.items():
        assert f"    {maker._id(source)} {maker.ARROWS[kind]} {maker._id(target)}" in block, (
            source, target, kind)
    assert maker.rooms_map() == block  # the same code, the same text


def test_the_map_tells_runtime_imports_from_type_only_ones(tmp_path: Path) -> None:
    maker = _maker()
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "mid").mkdir()
    (package / "__init__.py").write_text('"""The face."""\n', "utf-8")
    (package / "low" / "__init__.py").write_text('"""Owns the bottom."""\n', "utf-8")
    (package / "low" / "_x.py").write_text('"""X."""\n', "utf-8")
    (package / "mid" / "__init__.py").write_text('"""Owns the middle."""\n', "utf-8")
    (package / "mid" / "_y.py").write_text(
        '"""Y."""\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..low import _x\n'
        "def f():\n    from .. import _z\n", "utf-8")
    (package / "_z.py").write_text('"""Z: a record."""\n', "utf-8")
    block = maker.rooms_map([maker.Root("pkg", package, "pkg (top)")])
    assert "    pkg_mid -. types .-> pkg_low" in block
    assert "    pkg_mid -. lazy .-> pkg__top_" in block
    assert "| `pkg.mid` | Owns the middle. | `_y` | lazy: `pkg (top)`; types: `pkg.low` |" in block
    assert "- `_z`: Z: a record." in block


def test_check_fails_when_the_map_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    maker = _maker()
    design, diagrams = tmp_path / "design.md", tmp_path / "diagrams.md"
    diagrams.write_text(maker.render(), "utf-8")
    block = maker.rooms_map()
    monkeypatch.setattr(maker, "rooms_map", lambda: block)  # the code, once
    monkeypatch.setattr(maker, "TARGET", diagrams)
    monkeypatch.setattr(maker, "DESIGN", design)
    design.write_text("# Title\n\nThe rest, kept.\n", "utf-8")
    assert maker.main(["--check"]) == 1  # no markers yet
    assert "design.md differs" in capsys.readouterr().err
    assert maker.main([]) == 0  # writes the map right after the title
    written = design.read_text("utf-8")
    assert written.startswith(f"# Title\n\n{maker.BEGIN}\n## The map of the rooms\n")
    assert written.endswith(f"{maker.END}\n\nThe rest, kept.\n")
    assert maker.main(["--check"]) == 0
    design.write_text(written.replace("| room |", "| a room |"), "utf-8")
    assert maker.main(["--check"]) == 1  # an edit by hand inside the markers
    design.write_text(written + "\nMore prose by hand.\n", "utf-8")
    assert maker.main(["--check"]) == 0  # outside them, the lead writes
