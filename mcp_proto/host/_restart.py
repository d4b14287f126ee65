"""When to start a server again after it exits: a pure schedule driven by ``now``.

Rules (host-notes section 2.2 and 8 #6, improved):

- The n-th consecutive failure waits ``min(initial_delay * multiplier ** (n - 1), max_delay)``:
  1, 2, 4 ... 30 s with the defaults.
- A failure is any exit: a start that never became ready, or a server that died later.
- At the ``max_attempts``-th consecutive failure the schedule gives up (``exited`` returns
  None): the server stays ``failed`` until someone restarts it by hand (:meth:`reset`).
- The counter resets only after ``stable_after`` seconds of uptime since the server became
  ready.  A successful handshake alone resets nothing, so a server that dies three calls
  after every start ends ``failed`` instead of restarting forever (ADK-Rust resets on every
  handshake, which is the crash loop this avoids).

The schedule never reads a clock: every method takes ``now`` (any monotonic seconds).  Every
time it decides on is a moment computed once by addition (the next start: ``exit +
delay``; stability: ``ready + stable_after``) and compared with the readings it is given,
never a difference of two readings: float addition rounds monotonically, so a reading the
caller makes as ``ready + d`` with ``d >= stable_after`` is never before ``ready +
stable_after``, while ``(ready + d) - ready`` may come out below ``d`` (``64.1 - 4.1`` is
``59.99999999999999``: a run of exactly ``stable_after`` seconds would count as a crash).  A
reading equal to the moment counts as reaching it: a clock that cannot tell a run a
fraction of its last digit shorter from it says it is that long.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_RESTART", "RestartPolicy", "RestartSchedule"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RestartPolicy:
    """How a host restarts a server that exits.

    ``initial_delay`` seconds before the first restart, times ``multiplier`` for each
    consecutive failure, at most ``max_delay``; ``max_attempts`` consecutive failures and the
    server is given up; ``stable_after`` seconds of uptime make the next exit count as the
    first again.  ``ValueError`` for a value out of range.
    """

    initial_delay: float = 1.0
    multiplier: float = 2.0
    max_delay: float = 30.0
    max_attempts: int = 10
    stable_after: float = 60.0

    def __post_init__(self) -> None:
        if not self.initial_delay >= 0:
            raise ValueError(f"initial_delay must be >= 0, not {self.initial_delay!r}")
        if not self.multiplier >= 1:
            raise ValueError(f"multiplier must be >= 1, not {self.multiplier!r}")
        if not self.max_delay >= self.initial_delay:
            raise ValueError(f"max_delay ({self.max_delay!r}) must be >= initial_delay "
                             f"({self.initial_delay!r})")
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) \
                or self.max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, not {self.max_attempts!r}")
        if not self.stable_after >= 0:
            raise ValueError(f"stable_after must be >= 0, not {self.stable_after!r}")

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th consecutive failure (1-based)."""
        if failures < 1:
            return 0.0
        # Capped exponent: multiplier ** n overflows a float long before n reaches 1e6.
        exponent = min(failures - 1, 1024)
        try:
            delay = self.initial_delay * self.multiplier ** exponent
        except OverflowError:
            return self.max_delay
        return min(delay, self.max_delay)


#: The policy a host uses unless told otherwise.
DEFAULT_RESTART = RestartPolicy()


class RestartSchedule:
    """The restart bookkeeping of one server.

    Call :meth:`started` when a start begins, :meth:`ready` when its handshake finished and
    :meth:`exited` when it ends (or fails to start); ``exited`` says when to start it again,
    or None to give up.  :meth:`reset` after a restart by hand.
    """

    __slots__ = ("_stable_at", "_started_at", "attempts", "next_start_at", "policy")

    def __init__(self, policy: RestartPolicy) -> None:
        self.policy = policy
        #: Consecutive failures so far (0 after a stable run or a reset).
        self.attempts = 0
        #: When the next start is due (None: not scheduled).
        self.next_start_at: float | None = None
        self._started_at: float | None = None
        #: When the current run becomes stable (``ready + stable_after``; None: not ready).
        self._stable_at: float | None = None

    def started(self, now: float) -> None:
        """A start begins (the process is spawned, the handshake sent)."""
        self._started_at = now
        self._stable_at = None
        self.next_start_at = None

    def ready(self, now: float) -> None:
        """The handshake finished: uptime counts from here."""
        self._stable_at = now + self.policy.stable_after

    def stable(self, now: float) -> bool:
        """True when the server has been ready for ``stable_after`` seconds: ``now`` is at or
        past ``ready + stable_after`` (a moment, not a difference: see the module)."""
        return self._stable_at is not None and now >= self._stable_at

    def settle(self, now: float) -> None:
        """Reset the counter if the server has been up long enough (for status displays)."""
        if self.stable(now):
            self.attempts = 0

    def exited(self, now: float) -> float | None:
        """The server ended (or failed to start): when to start it again, or None (give up:
        the ``max_attempts``-th consecutive failure)."""
        if self.stable(now):
            self.attempts = 0
        self._started_at = None
        self._stable_at = None
        self.attempts += 1
        if self.attempts >= self.policy.max_attempts:
            self.next_start_at = None
            return None
        self.next_start_at = now + self.policy.delay(self.attempts)
        return self.next_start_at

    def may_start(self, now: float) -> bool:
        """True when a scheduled start is due."""
        return self.next_start_at is not None and now >= self.next_start_at

    def reset(self) -> None:
        """Forget the failures (a restart by hand, a new spec)."""
        self.attempts = 0
        self.next_start_at = None
        self._started_at = None
        self._stable_at = None

    def __repr__(self) -> str:
        return (f"RestartSchedule(attempts={self.attempts}, "
                f"next_start_at={self.next_start_at!r})")
