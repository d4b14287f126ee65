"""Every bound and default of the core, each with the reason for its value.

A bound that a host may want to change is a field of :class:`Limits`; the module-level
constants are its defaults.  Nothing here reads the environment: configuration is explicit.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "DEFAULT_MAX_LIST_ITEMS",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_PROBE_FALLBACK",
    "DEFAULT_REQUEST_TIMEOUT",
    "MAX_MESSAGE_SIZE",
    "MAX_PENDING_EVENTS_WARNING",
    "STDERR_TAIL_BYTES",
    "Limits",
]

#: 16 MiB per message.  Large enough for a tool returning a big document or a few images as
#: base64, small enough that a runaway server cannot make the host buffer without bound.
MAX_MESSAGE_SIZE = 16 * 1024 * 1024

#: Seconds a request may go without any sign of life (its response or a progress
#: notification).  Progress resets it.  Finite by default: waiting forever on a silent server
#: is the most reported hang of peer SDKs.
DEFAULT_IDLE_TIMEOUT = 60.0

#: Seconds a request may take in total, progress or not.  Nothing extends it, so a server that
#: keeps sending progress forever cannot hold a caller forever either.
DEFAULT_REQUEST_TIMEOUT = 600.0

#: Pages one paginated list may take.  Real servers page a few times; a server that never
#: stops (a cursor cycle the repeated-cursor check cannot see) is cut off here.
DEFAULT_MAX_PAGES = 100

#: Items one paginated list may collect, across all its pages, to bound memory.
DEFAULT_MAX_LIST_ITEMS = 16384

#: Seconds to wait for an answer to the ``server/discover`` probe before also sending
#: ``initialize`` (section 2.3).  Handshake-era servers that silently ignore unknown methods
#: then connect in well under a second (a peer SDK waits 10 s there); a modern server that is
#: merely slow still wins, since it answers the probe it read first.
DEFAULT_PROBE_FALLBACK = 0.5

#: Rounds of ``input_required`` one request may go through (section 7: "SHOULD bound loops").
#: Real servers ask once or twice; a server that never stops asking is cut off here.
DEFAULT_MAX_INPUT_ROUNDS = 8

#: Bytes of the server's stderr the bindings keep, to explain a crash in `ServerExited`.
STDERR_TAIL_BYTES = 8 * 1024

#: The event queue is drained by the binding after every receive; if it ever holds this many
#: events the binding is not pumping, which is a binding bug worth surfacing in tests.
MAX_PENDING_EVENTS_WARNING = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The configurable bounds of one session.

    Raises ``ValueError`` from the constructor if a value is not positive.
    """

    max_message_size: int = MAX_MESSAGE_SIZE
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_pages: int = DEFAULT_MAX_PAGES
    max_list_items: int = DEFAULT_MAX_LIST_ITEMS
    probe_fallback: float = DEFAULT_PROBE_FALLBACK
    max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS

    def __post_init__(self) -> None:
        for name in ("max_message_size", "idle_timeout", "request_timeout", "max_pages",
                     "max_list_items", "probe_fallback", "max_input_rounds"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")
