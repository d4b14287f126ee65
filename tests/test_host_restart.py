"""The restart schedule, pure (host-notes 2.2 and 8 #6): delays, giving up, and the counter
that only sustained uptime resets."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_proto.host import RestartPolicy, RestartSchedule


def test_delays_double_up_to_the_cap_and_the_tenth_failure_gives_up() -> None:
    schedule = RestartSchedule(RestartPolicy())
    now = 0.0
    delays = []
    while True:
        schedule.started(now)
        retry = schedule.exited(now + 0.5)
        if retry is None:
            break
        delays.append(retry - (now + 0.5))
        now = retry
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30, 30]
    assert schedule.attempts == 10
    assert schedule.next_start_at is None


def test_a_server_that_dies_soon_after_every_start_ends_failed() -> None:
    """ADK-Rust resets the backoff on every handshake, so a server that dies three calls
    after each start restarts forever; here the handshakes reset nothing."""
    schedule = RestartSchedule(RestartPolicy(max_attempts=5))
    now = 0.0
    starts = 0
    while True:
        schedule.started(now)
        schedule.ready(now + 0.1)  # the handshake succeeds every time
        starts += 1
        retry = schedule.exited(now + 2.0)  # ... and it dies two seconds later
        if retry is None:
            break
        now = retry
        assert starts < 100
    assert starts == 5


def test_uptime_past_stable_after_resets_the_counter() -> None:
    schedule = RestartSchedule(RestartPolicy(stable_after=60.0))
    schedule.started(0.0)
    assert schedule.exited(1.0) == 2.0
    schedule.started(2.0)
    assert schedule.exited(3.0) == 5.0  # second failure: 2 s
    schedule.started(5.0)
    schedule.ready(5.5)
    assert not schedule.stable(65.4)
    schedule.settle(65.4)
    assert schedule.attempts == 2
    assert schedule.stable(65.5)
    schedule.settle(65.5)
    assert schedule.attempts == 0
    assert schedule.exited(70.0) == 71.0  # first failure again: 1 s


@pytest.mark.parametrize("ready_at", [4.1, 6.6, 100.2, 16_375.1])
def test_a_run_of_exactly_stable_after_seconds_is_stable_whatever_the_clock_reads(
        ready_at: float) -> None:
    """Regression: ``(ready + 60) - ready`` rounds below 60 at these readings (``64.1 - 4.1``
    is ``59.99999999999999``), and a difference of readings counted a run of exactly
    ``stable_after`` seconds as a crash: with ``max_attempts=2`` the second run gave up."""
    assert (ready_at + 60.0) - ready_at < 60.0  # the rounding the schedule must not trip on
    schedule = RestartSchedule(RestartPolicy(max_attempts=2, stable_after=60.0))
    schedule.started(0.0)
    assert schedule.exited(1.0) == 2.0
    schedule.started(ready_at)
    schedule.ready(ready_at)
    before = math.nextafter(ready_at + 60.0, 0.0)  # one step of the clock short of it
    assert not schedule.stable(before)
    assert schedule.stable(ready_at + 60.0)
    assert schedule.exited(ready_at + 60.0) is not None  # stable: the first failure again
    assert schedule.attempts == 1


def test_uptime_without_a_handshake_is_not_stability() -> None:
    schedule = RestartSchedule(RestartPolicy(stable_after=10.0))
    schedule.started(0.0)
    schedule.exited(100.0)  # never ready: a start that hung for 100 s is no stable run
    assert schedule.attempts == 1


def test_reset_and_may_start() -> None:
    schedule = RestartSchedule(RestartPolicy(initial_delay=2.0))
    schedule.started(0.0)
    assert schedule.exited(1.0) == 3.0
    assert not schedule.may_start(2.9)
    assert schedule.may_start(3.0)
    schedule.reset()
    assert schedule.attempts == 0 and schedule.next_start_at is None
    assert not schedule.may_start(100.0)
    assert "attempts=0" in repr(schedule)


@pytest.mark.parametrize("kwargs", [
    {"initial_delay": -1}, {"multiplier": 0.5}, {"max_delay": 0.5},
    {"max_attempts": 0}, {"max_attempts": True}, {"max_attempts": 2.5},
    {"stable_after": -0.1}, {"initial_delay": float("nan")},
])
def test_bad_policies_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RestartPolicy(**kwargs)  # type: ignore[arg-type]


def test_huge_attempt_counts_do_not_overflow() -> None:
    policy = RestartPolicy(multiplier=10.0, max_delay=30.0)
    assert policy.delay(10**6) == 30.0
    assert policy.delay(0) == 0.0


@settings(max_examples=200, deadline=None)
@given(initial=st.floats(0, 100), multiplier=st.floats(1, 10), extra=st.floats(0, 1000),
       failures=st.integers(1, 2000))
def test_delays_never_shrink_and_never_pass_the_cap(initial: float, multiplier: float,
                                                    extra: float, failures: int) -> None:
    policy = RestartPolicy(initial_delay=initial, multiplier=multiplier,
                           max_delay=initial + extra)
    a, b = policy.delay(failures), policy.delay(failures + 1)
    assert initial <= a <= b <= policy.max_delay or a == b == policy.max_delay


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 200), st.booleans()), min_size=1, max_size=40),
       st.integers(1, 12))
@example(runs=[(3.1, False), (60.0, True)], max_attempts=2)  # ready at 4.1: 64.1 - 4.1 < 60
@example(runs=[(5.6, False), (60.0, True), (60.0, True), (1.0, True)], max_attempts=2)
def test_any_run_history_gives_up_only_after_max_consecutive_short_runs(
        runs: list[tuple[float, bool]], max_attempts: int) -> None:
    """Whatever the uptimes: the schedule gives up exactly when ``max_attempts`` runs in a
    row ended without ``stable_after`` seconds of ready uptime."""
    policy = RestartPolicy(max_attempts=max_attempts, stable_after=60.0)
    schedule = RestartSchedule(policy)
    now = 0.0
    consecutive = 0
    for uptime, became_ready in runs:
        schedule.started(now)
        if became_ready:
            schedule.ready(now)
        # (the host sees the reading now + uptime: one equal to the stable moment is one the
        # clock cannot tell from it, so it counts as stable; shorter runs never do)
        stable = became_ready and (uptime >= 60.0 or now + uptime == now + 60.0)
        consecutive = 1 if stable else consecutive + 1
        retry = schedule.exited(now + uptime)
        assert schedule.attempts == consecutive
        if consecutive >= max_attempts:
            assert retry is None
            return
        assert retry is not None and retry >= now + uptime
        now = retry
