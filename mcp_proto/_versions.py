"""The protocol versions mcp-proto speaks, newest first."""

from __future__ import annotations

__all__ = ["BATCH_VERSIONS", "HANDSHAKE_VERSIONS", "LATEST_HANDSHAKE_VERSION", "accepted_versions"]

#: The handshake era (initialize / initialized), newest first.  The first is offered (V-01).
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]

#: JSON-RPC batches exist only in 2025-03-26 (J-05).
BATCH_VERSIONS = frozenset({"2025-03-26"})


def accepted_versions(pin: str | None = None) -> tuple[str, ...]:
    """The versions a client accepts: all of :data:`HANDSHAKE_VERSIONS`, or only ``pin``.

    Raises ``ValueError`` naming the known versions when ``pin`` is not one of them.
    """
    if pin is None:
        return HANDSHAKE_VERSIONS
    if pin not in HANDSHAKE_VERSIONS:
        raise ValueError(f"unknown protocol version {pin!r}; known: "
                         + ", ".join(HANDSHAKE_VERSIONS))
    return (pin,)
