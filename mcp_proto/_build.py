"""Positional builders for the frozen records made on every message.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (frozen
forbids the normal way), which makes a five-field result cost about as much to build as its
JSON costs to parse.  :func:`builder` writes, once per class, a function that takes every
field in order and sets the slots directly: the same object, equal to the one ``__init__``
makes (a test compares them), at half the cost.  The classes keep their keyword constructors
for everybody else; only the per-message paths use builders.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["builder"]

_T = TypeVar("_T")


def builder(cls: type[_T]) -> Callable[..., _T]:
    """A function ``build(field1, field2, ...)`` that makes a ``cls`` from every field's value
    in declaration order, without defaults or checks.  ``cls`` must be a frozen dataclass with
    slots and no ``__post_init__`` (``TypeError`` otherwise)."""
    if not (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__ that a builder would skip")
    names = [f.name for f in dataclasses.fields(cls)]
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def build({', '.join(names)}):", "    o = _new(_cls)"]
    for i, name in enumerate(names):
        scope[f"_set{i}"] = getattr(cls, name).__set__  # the slot's own descriptor
        lines.append(f"    _set{i}(o, {name})")
    lines.append("    return o")
    exec("\n".join(lines), scope)  # code made here from the field names alone
    build: Callable[..., _T] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    return build
