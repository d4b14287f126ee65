"""Public names a runtime module imports when they are first used (PEP 562).

Each runtime module (``threads``, ``asyncio``, ``trio``) offers the Host and the
authorization classes beside its clients.  Those two would cost more to import than the
clients themselves (the host layer and its config parsers; the OAuth machinery), and a
program that only opens clients uses neither, so the module names them in a table and gets its
``__getattr__`` and ``__dir__`` from :func:`lazy_names`.  For the type checker it imports
them under ``TYPE_CHECKING`` and keeps the ``__getattr__`` out of its sight (mypy would take
every unknown name of a module with one as an ``Any``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["AUTH_NAMES", "lazy_names"]

#: The authorization classes every runtime module offers, from ``.auth``.
AUTH_NAMES = ("ClientCredentials", "EnterpriseManaged", "FileTokenStore", "HeadlessRedirect",
              "JwtBearer", "LoopbackRedirect", "MemoryTokenStore", "OAuth", "PasteRedirect")


def lazy_names(module: str, host: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module`` (being imported): ``Host`` and
    ``connect_config`` from ``host``, the :data:`AUTH_NAMES` from ``.auth`` (both relative to
    ``module``'s package).  The first lookup of a name imports it and stores the value in
    ``module``, so later ones are ordinary."""
    names: Mapping[str, str] = {"Host": host, "connect_config": host,
                                **dict.fromkeys(AUTH_NAMES, ".auth")}
    namespace = sys.modules[module].__dict__

    def __getattr__(name: str) -> Any:
        source = names.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        from importlib import import_module  # noqa: PLC0415 - only on a first use

        value = getattr(import_module(source, namespace["__package__"]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
