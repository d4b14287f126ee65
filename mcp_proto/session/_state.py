"""The session lifecycle as a transition table, and nothing else (style of h11's _state.py).

Rules:

- A session starts IDLE.  ``initialize`` moves it to INITIALIZING; a valid initialize result
  to READY; an invalid one, an error answer, a timeout or an unsupported version to CLOSED.
- ``start`` in auto or modern mode moves it to PROBING (``server/discover`` in flight, V-12):
  a DiscoverResult, or an initialize result sent meanwhile, moves it to READY; an answer that
  means "legacy server" (FALLBACK) to INITIALIZING; failure of both to CLOSED.
- The transport ending or the host closing moves any state to CLOSED.  CLOSED never changes.
- A missing (state, input) pair is a misuse by the caller: :class:`LocalProtocolError`.
- Requests the client may send per state: in INITIALIZING only ``ping`` (L-05); in READY any;
  elsewhere none.
"""

from __future__ import annotations

import enum

from .._errors import LocalProtocolError

__all__ = ["CLOSED", "READY", "Input", "State", "allowed_to_send", "transition"]


class State(enum.Enum):
    IDLE = "idle"
    PROBING = "probing"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


#: The states the per-message paths compare with, as plain names: on Python 3.11 ``State.READY``
#: goes through ``EnumType.__getattr__``'s hook (about 90 ns, the price of a small dict
#: lookup ten times over), a module global costs a cached load.
READY = State.READY
CLOSED = State.CLOSED


class Input(enum.Enum):
    INITIALIZE = "initialize"
    PROBE = "probe"
    FALLBACK = "fall back to initialize"
    INIT_OK = "init_ok"
    INIT_FAILED = "init_failed"
    TRANSPORT_ENDED = "transport_ended"
    CLOSE = "close"


_TRANSITIONS: dict[tuple[State, Input], State] = {
    (State.IDLE, Input.INITIALIZE): State.INITIALIZING,
    (State.IDLE, Input.TRANSPORT_ENDED): State.CLOSED,
    (State.IDLE, Input.CLOSE): State.CLOSED,
    (State.IDLE, Input.PROBE): State.PROBING,
    (State.PROBING, Input.FALLBACK): State.INITIALIZING,
    (State.PROBING, Input.INIT_OK): State.READY,
    (State.PROBING, Input.INIT_FAILED): State.CLOSED,
    (State.PROBING, Input.TRANSPORT_ENDED): State.CLOSED,
    (State.PROBING, Input.CLOSE): State.CLOSED,
    (State.INITIALIZING, Input.INIT_OK): State.READY,
    (State.INITIALIZING, Input.INIT_FAILED): State.CLOSED,
    (State.INITIALIZING, Input.TRANSPORT_ENDED): State.CLOSED,
    (State.INITIALIZING, Input.CLOSE): State.CLOSED,
    (State.READY, Input.TRANSPORT_ENDED): State.CLOSED,
    (State.READY, Input.CLOSE): State.CLOSED,
    (State.CLOSED, Input.TRANSPORT_ENDED): State.CLOSED,
    (State.CLOSED, Input.CLOSE): State.CLOSED,
}


def transition(state: State, event: Input) -> State:
    """The next state.  Raises :class:`LocalProtocolError` for a pair the table lacks."""
    try:
        return _TRANSITIONS[(state, event)]
    except KeyError:
        raise LocalProtocolError(
            f"cannot {event.value.replace('_', ' ')} while the session is {state.value}"
        ) from None


def allowed_to_send(state: State, method: str) -> bool:
    """Whether the client may send a request for ``method`` in ``state`` (L-05)."""
    return state is State.READY or (state is State.INITIALIZING and method == "ping")
