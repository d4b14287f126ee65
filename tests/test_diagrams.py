"""docs/diagrams.md is drawn from the transition tables (docs/make_diagrams.py): a change
to a table without the docs, or to the docs by hand, fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_proto import _state
from mcp_proto._auth_states import TRANSITIONS
from mcp_proto.host import _state as host_state

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
