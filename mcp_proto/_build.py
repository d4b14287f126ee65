"""Positional builders for the frozen records made on every message.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (frozen
forbids the normal way), which makes a five-field result cost about as much to build as its
JSON costs to parse.  :func:`builder` writes, once per class, a function that takes every
field in order and builds the record as an instance of a *twin*: a plain class with the same
bases and the same slots, whose fields are set the normal (fast) way; the finished object is
then given its real class (``__class__`` assignment, which CPython allows between classes of
the same layout).  The result is the same object ``__init__`` makes (a test compares them),
at about a third of the cost.  The classes keep their keyword constructors for everybody
else; only the per-message paths use builders.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["builder"]

_T = TypeVar("_T")
#: The generated function's own names, which a field of the same name would shadow.
_RESERVED = frozenset({"o", "_new", "_twin", "_cls"})


def builder(cls: type[_T]) -> Callable[..., _T]:
    """A function ``build(field1, field2, ...)`` that makes a ``cls`` from every field's value
    in declaration order, without defaults or checks.  ``cls`` must be a frozen dataclass with
    slots, no ``__post_init__``, no base with a ``__setattr__`` of its own, no field named as
    the builder's own variables, and a layout CPython lets an object change class between
    (not ``weakref_slot=True``): ``TypeError`` otherwise, when the builder is made."""
    if not (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__ that a builder would skip")
    names = [f.name for f in dataclasses.fields(cls)]
    if _RESERVED.intersection(names):
        raise TypeError(f"{cls.__name__} has a field named {sorted(_RESERVED & set(names))} "
                        "that the builder's own names would shadow")
    # The twin: the same bases and slots (so the same memory layout), none of the frozen
    # class's own methods, so its slots take plain assignments.
    # (``__orig_bases__``: a generic record's ``Generic[T]``, which plain ``Generic`` is not.)
    slots = cls.__dict__["__slots__"]
    # (Its own ``__orig_bases__`` only: a subclass inherits its generic base's.)
    twin = types.new_class(f"_{cls.__name__}Twin",
                           cls.__dict__.get("__orig_bases__", cls.__bases__),
                           exec_body=lambda ns: ns.update(__slots__=slots,
                                                          __module__=cls.__module__))
    if twin.__setattr__ is not object.__setattr__:  # type: ignore[comparison-overlap]
        raise TypeError(f"{cls.__name__} inherits a __setattr__ (a frozen base?) that a "
                        "builder cannot use")
    scope: dict[str, Any] = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    # ``_twin()`` when no base adds a constructor: a call of the class costs about 60 ns less
    # than ``object.__new__(_twin)``, a call through a wrapper that parses its arguments.
    inherited = {name for klass in twin.__mro__[:-1] for name in vars(klass)}
    plain = not inherited & {"__new__", "__init__"}
    made = "    o = _twin()" if plain else "    o = _new(_twin)"
    lines = [f"def build({', '.join(names)}):", made]
    lines.extend(f"    o.{name} = {name}" for name in names)
    lines += ["    o.__class__ = _cls", "    return o"]
    exec("\n".join(lines), scope)  # code made here from the field names alone
    build: Callable[..., _T] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    build(*[None] * len(names))  # a layout CPython refuses to swap raises TypeError here, once
    return build
