"""The names every runtime face offers beside its clients, imported when first used (PEP 562).

Each runtime module (``threads``, ``asyncio``, ``trio``) offers the Host, the authorization
classes and :class:`~mcp_proto_io._otel.Instrumentation` beside its clients.  The first two
would cost more to import than the clients themselves (the host layer and its config
parsers; the OAuth machinery), and a program that only opens clients uses neither, so the
face gets its ``__getattr__`` and ``__dir__`` from :func:`lazy_names`.  The authorization
classes and ``Instrumentation`` are named here, once: this module's ``__all__`` is them.  A
face adds it to its own ``__all__`` and names them for the type checker with ``from ._lazy
import *`` under ``TYPE_CHECKING``, keeping its ``__getattr__`` out of the checker's sight
(mypy would take every unknown name of a module with one as an ``Any``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._otel import Instrumentation
    from .auth import (
        ClientCredentials,
        EnterpriseManaged,
        FileTokenStore,
        HeadlessRedirect,
        JwtBearer,
        LoopbackRedirect,
        MemoryTokenStore,
        OAuth,
        PasteRedirect,
    )

#: The authorization classes every runtime face offers, from ``.auth``.
AUTH_NAMES = ["ClientCredentials", "EnterpriseManaged", "FileTokenStore", "HeadlessRedirect",
              "JwtBearer", "LoopbackRedirect", "MemoryTokenStore", "OAuth", "PasteRedirect"]

#: Every lazy name of a face and where it comes from: the authorization classes, and
#: :class:`Instrumentation` (``instrument=``; its module imports no OpenTelemetry itself).
_SOURCES = {**dict.fromkeys(AUTH_NAMES, ".auth"), "Instrumentation": "._otel"}

__all__ = ["ClientCredentials", "EnterpriseManaged", "FileTokenStore", "HeadlessRedirect",
           "Instrumentation", "JwtBearer", "LoopbackRedirect", "MemoryTokenStore", "OAuth",
           "PasteRedirect"]
assert sorted(_SOURCES) == __all__  # one list of names, checked at import


def lazy_names(module: str, host: str | None) -> tuple[Callable[[str], Any],
                                                       Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module`` (being imported): ``Host`` and
    ``connect_config`` from ``host`` (none when None), the authorization classes and
    ``Instrumentation`` (this module's ``__all__``: from ``.auth`` and ``._otel``, relative
    to ``module``'s package).  The first
    lookup of a name imports it and stores the value in ``module``, so later ones are
    ordinary; an unknown name raises ``AttributeError``."""
    names: Mapping[str, str] = {**({} if host is None else {"Host": host, "connect_config": host}),
                                **_SOURCES}
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


if not TYPE_CHECKING:  # the names of __all__ are this module's too, loaded on first use
    __getattr__, __dir__ = lazy_names(__name__, None)
