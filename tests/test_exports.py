"""The public surface of ``mcp_proto``: ``__all__`` is real, sorted, and events are frozen."""

from __future__ import annotations

import dataclasses
import importlib
import typing

import pytest

import mcp_proto
from mcp_proto import Event


def test_every_exported_name_exists() -> None:
    missing = [name for name in mcp_proto.__all__ if not hasattr(mcp_proto, name)]
    assert not missing


def test_dir_lists_every_exported_name() -> None:
    """Names loaded on first use (PEP 562) are listed before they are (tests/test_imports.py
    checks in a fresh interpreter that they are not loaded by the import itself)."""
    assert set(mcp_proto.__all__) <= set(dir(mcp_proto))


@pytest.mark.parametrize("runtime", ["asyncio", "threads", "trio"])
def test_every_runtime_module_exports_what_it_lists(runtime: str) -> None:
    module = importlib.import_module(f"mcp_proto_io.{runtime}")
    assert not [name for name in module.__all__ if not hasattr(module, name)]
    assert set(module.__all__) <= set(dir(module))


def test_all_is_sorted_and_unique() -> None:
    names = mcp_proto.__all__
    assert len(set(names)) == len(names)
    # As written: constants (UPPER_CASE) first, then classes, then dunders, each sorted.
    def key(name: str) -> tuple[int, str]:
        group = 2 if name.startswith("__") else 0 if name.isupper() else 1
        return (group, name)
    assert list(names) == sorted(names, key=key)


EVENT_CLASSES = typing.get_args(Event)


def test_event_union_is_exported() -> None:
    assert len(EVENT_CLASSES) >= 12
    for cls in [*EVENT_CLASSES, mcp_proto.RequestHandle]:
        assert cls.__name__ in mcp_proto.__all__


@pytest.mark.parametrize("cls", [*EVENT_CLASSES, mcp_proto.RequestHandle],
                         ids=lambda c: c.__name__)
def test_events_are_frozen_slotted_dataclasses(cls: type) -> None:
    assert dataclasses.is_dataclass(cls)
    assert "__slots__" in cls.__dict__
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    fields = dataclasses.fields(cls)
    if cls is not mcp_proto.RequestHandle:
        assert all(f.kw_only for f in fields), f"{cls.__name__} is not keyword-only"
    values = {f.name: None for f in fields}
    instance = cls(**values)
    assert not hasattr(instance, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(instance, fields[0].name if fields else "x", 1)
