"""The protocol versions mcp-proto speaks, newest first, and the era each belongs to."""

from __future__ import annotations

__all__ = [
    "ALL_VERSIONS",
    "BATCH_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "MODERN_VERSIONS",
    "accepted_versions",
    "era_of",
]

#: The stateless era (no initialize; ``_meta`` on every request), newest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

#: The handshake era (initialize / initialized), newest first.  The first is offered (V-01).
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

#: Everything, newest first: what a client accepts unless pinned.
ALL_VERSIONS: tuple[str, ...] = MODERN_VERSIONS + HANDSHAKE_VERSIONS

LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]

#: JSON-RPC batches exist only in 2025-03-26 (J-05).
BATCH_VERSIONS = frozenset({"2025-03-26"})


def era_of(version: str) -> str:
    """``"modern"`` or ``"legacy"``.  Raises ``ValueError`` for an unknown version."""
    if version in MODERN_VERSIONS:
        return "modern"
    if version in HANDSHAKE_VERSIONS:
        return "legacy"
    raise ValueError(f"unknown protocol version {version!r}; known: {', '.join(ALL_VERSIONS)}")


def accepted_versions(pin: str | None = None) -> tuple[str, ...]:
    """The versions a client accepts: all of :data:`ALL_VERSIONS`, or only ``pin``.

    Raises ``ValueError`` naming the known versions when ``pin`` is not one of them.
    """
    if pin is None:
        return ALL_VERSIONS
    era_of(pin)
    return (pin,)
