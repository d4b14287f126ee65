"""Each part of the session alone, with a fake clock: the request table and outbox
(:class:`Wire`), era choice, MRTR input gathering, the listen stream, the response cache, the
task runner, the line reader, the server-request table and the host's operations.  The
session's own tests cover how they work together; these pin each part's contract, so a part
can change without the session.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import BadMessage, ClientSession, Closed, Implementation, Limits, LogMessage
from mcp_proto._auth_errors import AuthorizationDenied
from mcp_proto._errors import (
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestTimeout,
    RpcError,
    UnsupportedProtocolVersion,
    UnsupportedVersion,
)
from mcp_proto._events import (
    Completed,
    Failed,
    RequestHandle,
    ServerRequest,
    ServerRequestCancelled,
    SubscriptionEnded,
    TaskStatus,
)
from mcp_proto._tasks import DEFAULT_POLL_INTERVAL
from mcp_proto._types import Tool
from mcp_proto._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from mcp_proto.session._cache import MISS, ResponseCache
from mcp_proto.session._era import EraChoice
from mcp_proto.session._listen import Subscriptions
from mcp_proto.session._modern import PROTOCOL_VERSION_KEY, Discovered, parse_discover
from mcp_proto.session._mrtr import InputGathering
from mcp_proto.session._outbox import DEADLINE_SLACK, Answer, Pending, Wire
from mcp_proto.session._results import Operations
from mcp_proto.session._server_requests import ServerRequests
from mcp_proto.session._state import State
from mcp_proto.session._task_runner import TaskRunner
from mcp_proto.wire._inbound import END, LineReader, Unreadable
from mcp_proto.wire._jsonrpc import Request


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class Recorder(Answer):
    """An answer that writes down what happened to each request."""

    __slots__ = ("log",)

    def __init__(self) -> None:
        self.log: list[tuple[str, int, object]] = []

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.log.append(("result", p.rid, result))

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.log.append(("error", p.rid, error))

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.log.append(("abandon", p.rid, error))


def sent(wire: Wire) -> list[dict[str, Any]]:
    """Everything the wire queued since the last call, decoded."""
    return [json.loads(line) for line in wire.data_to_send().splitlines()]


def raw(result: dict[str, Any]) -> dict[str, Any]:
    return result


def send(wire: Wire, clock: FakeClock, method: str = "tools/list", *,
         timeout: float | None = None, idle: float | None = None,
         answer: Answer | None = None, params: dict[str, Any] | None = None) -> Pending:
    rid = wire.take_id()
    return wire.request(rid, RequestHandle(rid, method), method, params, clock.now, timeout,
                        raw, answer or Recorder(), idle_timeout=idle)


# -- Wire: ids, the table, deadlines, the outbox -----------------------------------------------

def test_wire_queues_a_request_and_enters_it_with_its_deadlines() -> None:
    clock = FakeClock()
    wire = Wire(Limits(request_timeout=30.0, idle_timeout=10.0))
    p = send(wire, clock, params={"cursor": "x"})
    assert p.rid == 1 and wire.take_id() == 2
    assert wire.pending == {1: p}
    assert (p.total_deadline, p.deadline) == (clock.now + 30.0, clock.now + 10.0)
    assert sent(wire) == [{"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                           "params": {"cursor": "x"}}]
    assert wire.data_to_send() == b""  # taken once


def test_an_explicit_total_longer_than_the_idle_default_is_not_cut_short() -> None:
    clock = FakeClock()
    wire = Wire(Limits(request_timeout=30.0, idle_timeout=10.0))
    p = send(wire, clock, timeout=120.0)
    assert p.deadline == p.total_deadline == clock.now + 120.0
    q = send(wire, clock, timeout=120.0, idle=5.0)
    assert q.deadline == clock.now + 5.0


def test_a_bad_request_is_refused_before_anything_is_queued() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    with pytest.raises(ValueError, match="positive"):
        send(wire, clock, timeout=0.0)
    with pytest.raises(LocalProtocolError, match="not JSON"):
        send(wire, clock, params={"x": object()})
    assert wire.pending == {} and wire.data_to_send() == b""


def test_modern_requests_carry_the_meta_and_progress_its_token() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    wire.meta = {PROTOCOL_VERSION_KEY: MODERN_VERSIONS[0]}
    rid = wire.take_id()
    wire.request(rid, RequestHandle(rid, "tools/call"), "tools/call",
                 {"name": "echo", "_meta": {"mine": 1}}, clock.now, None, raw, Recorder(),
                 progress=True, modern=True)
    (msg,) = sent(wire)
    assert msg["params"]["_meta"] == {"mine": 1, PROTOCOL_VERSION_KEY: MODERN_VERSIONS[0],
                                      "progressToken": rid}
    assert wire.pending[rid].params == {"name": "echo", "_meta": {"mine": 1}}  # as given


def test_expired_takes_out_what_is_due_in_deadline_order_and_names_which_deadline() -> None:
    clock = FakeClock()
    wire = Wire(Limits(request_timeout=30.0, idle_timeout=10.0))
    a = send(wire, clock, timeout=5.0, idle=5.0)  # due at +5, its total
    b = send(wire, clock)  # idle at +10
    c = send(wire, clock, timeout=60.0, idle=20.0)  # idle at +20
    assert list(wire.expired(clock.advance(4.9))) == []
    assert wire.soonest() == a.deadline
    due = list(wire.expired(clock.advance(5.2)))
    assert due == [a, b] and set(wire.pending) == {c.rid}
    assert a.timeout_error().kind == "total" and b.timeout_error().kind == "idle"
    assert wire.soonest() == c.deadline


def test_a_moved_deadline_leaves_no_live_stale_entry() -> None:
    clock = FakeClock()
    wire = Wire(Limits(idle_timeout=10.0))
    p = send(wire, clock, timeout=100.0, idle=10.0)
    wire.set_deadline(p, clock.now + 50.0)
    assert list(wire.expired(clock.advance(11.0))) == []  # the old +10 entry is stale
    assert wire.soonest() == p.deadline
    wire.set_deadline(p, math.inf)  # acknowledged: no deadline at all
    assert wire.soonest() is None
    assert list(wire.expired(clock.advance(1e6))) == [] and p.rid in wire.pending


def test_postpone_moves_deadlines_later_never_closer() -> None:
    clock = FakeClock()
    wire = Wire(Limits(idle_timeout=10.0))
    p = send(wire, clock, timeout=5.0, idle=5.0)
    q = send(wire, clock, timeout=100.0, idle=100.0)
    wire.postpone([p.rid, q.rid, 999], clock.now + 30.0)
    assert p.deadline == p.total_deadline == clock.now + 30.0
    assert q.deadline == clock.now + 100.0  # already later: untouched
    assert list(wire.expired(clock.advance(29.0))) == []
    assert list(wire.expired(clock.advance(1.0))) == [p]


def test_the_deadline_heap_stays_proportional_to_what_is_pending() -> None:
    clock = FakeClock()
    wire = Wire(Limits(idle_timeout=10.0))
    p = send(wire, clock, timeout=1e6, idle=10.0)
    for i in range(5000):  # progress resetting the idle deadline, over and over
        wire.set_deadline(p, clock.now + 10.0 + i * 1e-3)
    assert len(wire.timers) <= 2 * len(wire.pending) + DEADLINE_SLACK + 1
    assert wire.soonest() == p.deadline


def test_resend_keeps_the_handle_answer_and_total_deadline_under_a_new_id() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    answer = Recorder()
    p = send(wire, clock, timeout=30.0, answer=answer, params={"uri": "a"})
    sent(wire)
    wire.pop(p.rid)
    again = wire.resend(p, clock.advance(3.0))
    assert again.rid != p.rid and again.handle is p.handle and again.answer is answer
    assert again.total_deadline == p.total_deadline and again.retried
    assert sent(wire)[0]["params"] == {"uri": "a"}


def test_messages_to_send_keeps_wire_objects_from_the_first_call_on() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    send(wire, clock)
    first = wire.messages_to_send()
    assert [obj["id"] for obj, _body in first] == [1]
    wire.cancelled(1, "bored")
    ((obj, body),) = wire.messages_to_send()
    assert obj == json.loads(body) == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                       "params": {"requestId": 1, "reason": "bored"}}
    send(wire, clock)
    wire.discard_output()
    assert wire.messages_to_send() == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["send", "tick", "move", "answer"]),
                          st.floats(min_value=0.01, max_value=50.0)), max_size=60))
def test_wire_deadlines_against_a_model(steps: list[tuple[str, float]]) -> None:
    """Whatever is sent, moved, answered and waited for, ``expired`` yields exactly the live
    requests whose deadline passed, and ``soonest`` is the earliest live deadline."""
    clock = FakeClock()
    wire = Wire(Limits(request_timeout=60.0, idle_timeout=20.0))
    model: dict[int, float] = {}
    for op, x in steps:
        if op == "send":
            p = send(wire, clock, timeout=x * 2, idle=x)
            model[p.rid] = p.deadline
        elif op == "tick":
            now = clock.advance(x)
            due = {p.rid for p in wire.expired(now)}
            assert due == {rid for rid, d in model.items() if d <= now}
            for rid in due:
                del model[rid]
        elif op == "move" and model:
            rid = min(model)
            wire.set_deadline(wire.pending[rid], clock.now + x)
            model[rid] = clock.now + x
        elif op == "answer" and model:
            rid = max(model)
            assert wire.pop(rid) is not None
            del model[rid]
        assert wire.soonest() == (min(model.values()) if model else None)
    assert set(wire.pending) == set(model)


# -- era choice --------------------------------------------------------------------------------

@dataclass
class FakeOpener:
    """The session as era choice sees it, recording what it is told."""

    state: State = State.IDLE
    era: str | None = None
    protocol_version: str | None = None
    told: list[tuple[str, Any]] = field(default_factory=list)

    def _handshake_params(self, version: str) -> dict[str, Any]:
        return {"protocolVersion": version}

    def _modern_meta(self, version: str) -> dict[str, Any]:
        return {PROTOCOL_VERSION_KEY: version}

    def _opened_legacy(self, handle: RequestHandle[Any], version: str,
                       result: dict[str, Any], server_info: Implementation) -> None:
        self.era, self.protocol_version = "legacy", version
        self.told.append(("legacy", version))

    def _opened_modern(self, handle: RequestHandle[Any], version: str,
                       discovered: Discovered) -> None:
        self.era, self.protocol_version = "modern", version
        self.told.append(("modern", version))

    def _rediscovered(self, discovered: Discovered) -> None:
        self.told.append(("rediscovered", discovered.supported_versions))

    def _fail_opening(self, handle: RequestHandle[Any], error: MCPError) -> None:
        self.state = State.CLOSED
        self.told.append(("failed", error))

    def _era_lost(self, error: MCPError) -> None:
        self.state = State.CLOSED
        self.told.append(("lost", error))


ALL = MODERN_VERSIONS + HANDSHAKE_VERSIONS
SERVER_INFO = {"name": "s", "version": "1"}


def era_part(versions: tuple[str, ...] = ALL) -> tuple[EraChoice, FakeOpener, Wire]:
    wire = Wire(Limits(probe_fallback=0.5))
    opener = FakeOpener()
    return EraChoice(opener, wire, versions), opener, wire


def answer(wire: Wire, method: str, result: dict[str, Any], now: float) -> None:
    """The server answers the pending ``method`` request."""
    (p,) = [q for q in wire.pending.values() if q.method == method]
    wire.pop(p.rid)
    wire.now = now
    p.answer.on_result(p, result, now)


def fail(wire: Wire, method: str, error: MCPError) -> None:
    (p,) = [q for q in wire.pending.values() if q.method == method]
    wire.pop(p.rid)
    p.answer.on_error(p, error)


def test_probe_goes_unanswered_then_initialize_is_sent_beside_it() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    era.start(clock.now, None, "auto", None)
    assert opener.state is State.PROBING
    (probe,) = sent(wire)
    assert probe["method"] == "server/discover" and probe["params"]["_meta"] == {
        PROTOCOL_VERSION_KEY: MODERN_VERSIONS[0]}
    assert era.fallback_at == clock.now + 0.5
    era.due(clock.advance(0.4))
    assert sent(wire) == []
    era.due(clock.advance(0.1))
    (init,) = sent(wire)
    assert init["method"] == "initialize" and init["params"] == {
        "protocolVersion": HANDSHAKE_VERSIONS[0]}
    answer(wire, "initialize", {"protocolVersion": HANDSHAKE_VERSIONS[0],
                                "serverInfo": SERVER_INFO}, clock.now)
    assert opener.told == [("legacy", HANDSHAKE_VERSIONS[0])] and opener.state is State.READY
    assert wire.pending == {}  # the probe is forgotten: its late answer is dropped


def test_a_32022_probe_is_retried_once_in_a_mutual_version() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    era.start(clock.now, None, "auto", None)
    sent(wire)
    error = UnsupportedProtocolVersion(-32022, "no", {"supported": [MODERN_VERSIONS[-1]]})
    fail(wire, "server/discover", error)
    (retry,) = sent(wire)
    assert retry["params"]["_meta"][PROTOCOL_VERSION_KEY] == MODERN_VERSIONS[-1]
    fail(wire, "server/discover", error)  # again, and no handshake version is offered
    assert sent(wire) == [] and opener.told[-1][0] == "failed"
    assert isinstance(opener.told[-1][1], UnsupportedVersion)


def test_a_32022_naming_a_handshake_version_falls_back_to_initialize() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    era.start(clock.now, None, "auto", None)
    sent(wire)
    fail(wire, "server/discover", UnsupportedProtocolVersion(
        -32022, "no", {"supported": [HANDSHAKE_VERSIONS[0]]}))
    (init,) = sent(wire)
    assert init["method"] == "initialize" and opener.state is State.INITIALIZING
    assert era.fallback_at is None


def test_a_discover_result_makes_the_session_modern() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    era.start(clock.now, None, "auto", None)
    answer(wire, "server/discover", {"supportedVersions": [MODERN_VERSIONS[0]]}, clock.now)
    assert opener.told == [("modern", MODERN_VERSIONS[0])] and wire.modern
    assert era.fallback_at is None and opener.state is State.READY


def test_an_authorization_failure_says_nothing_of_the_era() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    era.start(clock.now, None, "auto", None)
    sent(wire)
    fail(wire, "server/discover", AuthorizationDenied("the user declined", "access_denied"))
    assert [kind for kind, _ in opener.told] == ["failed"] and sent(wire) == []
    assert era.fallback_at is None


def test_a_remembered_discovery_opens_at_once_and_a_stale_one_is_refreshed() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    remembered = parse_discover({"supportedVersions": [MODERN_VERSIONS[0]], "ttlMs": 1000},
                                clock.now - 10.0)  # expired 9 s ago
    era.start(clock.now, None, "auto", remembered)
    assert opener.told == [("modern", MODERN_VERSIONS[0])]
    (refresh,) = sent(wire)
    assert refresh["method"] == "server/discover"
    fail(wire, "server/discover", RpcError(-32601, "method not found"))
    assert era.assumption_failed and opener.told[-1][0] == "lost"


def test_a_refresh_refused_with_a_2026_error_keeps_the_era() -> None:
    clock = FakeClock()
    era, opener, wire = era_part()
    remembered = parse_discover({"supportedVersions": [MODERN_VERSIONS[0]], "ttlMs": 1},
                                clock.now - 1.0)
    era.start(clock.now, None, "auto", remembered)
    fail(wire, "server/discover", UnsupportedProtocolVersion(-32022, "later", {}))
    assert not era.assumption_failed and opener.state is State.READY


def test_the_transport_ending_during_the_probe_means_restart_in_the_handshake_era() -> None:
    clock = FakeClock()
    era, _opener, _wire = era_part()
    era.start(clock.now, None, "auto", None)
    era.ended(transport=True)
    assert era.probe_died
    era2, _o, _w = era_part()
    era2.start(clock.now, None, "modern", None)
    era2.ended(transport=True)
    assert not era2.probe_died  # modern only: nothing to restart for


def test_initialize_needs_a_handshake_version() -> None:
    era, _opener, _wire = era_part(MODERN_VERSIONS)
    with pytest.raises(LocalProtocolError, match="handshake-era"):
        era.initialize(0.0, None)
    with pytest.raises(ValueError, match="era must be"):
        era.start(0.0, None, "sideways", None)


# -- MRTR input gathering ---------------------------------------------------------------------

CAPS: dict[str, Any] = {"elicitation": {}, "roots": {}}


def gathering() -> tuple[InputGathering, ServerRequests, Wire]:
    wire = Wire(Limits(max_input_rounds=2))
    asks = ServerRequests(wire)
    return InputGathering(wire, asks), asks, wire


def events(wire: Wire) -> list[Any]:
    out = list(wire.events)
    wire.events.clear()
    return out


def input_required(keys: dict[str, str], state: str | None = "s1") -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required",
                              "inputRequests": {k: {"method": m} for k, m in keys.items()}}
    if state is not None:
        result["requestState"] = state
    return result


def test_each_input_is_asked_and_the_round_retried_with_all_answers() -> None:
    clock = FakeClock()
    part, asks, wire = gathering()
    p = send(wire, clock, "tools/call", params={"name": "book"})
    sent(wire)
    wire.pop(p.rid)
    part.on_input_required(p, input_required({"who": "elicitation/create",
                                               "where": "roots/list"}), clock.now, CAPS)
    asked = events(wire)
    assert [type(e) for e in asked] == [ServerRequest, ServerRequest]
    assert {e.method for e in asked} == {"elicitation/create", "roots/list"}
    first, second = asked
    assert part.answer(first.request_id, {"action": "accept"}, clock.now)
    assert sent(wire) == []  # one answer still missing
    part.answer(second.request_id, {"roots": []}, clock.advance(1.0))
    (retry,) = sent(wire)
    assert retry["params"]["requestState"] == "s1" and retry["params"]["name"] == "book"
    assert set(retry["params"]["inputResponses"]) == {"who", "where"}
    assert wire.pending[retry["id"]].rounds == 1 and not asks.open


def test_input_the_client_cannot_give_fails_the_call_at_once() -> None:
    clock = FakeClock()
    part, asks, wire = gathering()
    p = send(wire, clock, "tools/call")
    wire.pop(p.rid)
    part.on_input_required(p, input_required({"m": "sampling/createMessage"}), clock.now, CAPS)
    (failed,) = events(wire)
    assert isinstance(failed, Failed) and "cannot give" in str(failed.error)
    assert not asks.open and not part.gathers


def test_rounds_are_bounded() -> None:
    clock = FakeClock()
    part, _asks, wire = gathering()
    p = send(wire, clock, "tools/call")
    wire.pop(p.rid)
    p.rounds = 2
    part.on_input_required(p, input_required({"who": "elicitation/create"}), clock.now, CAPS)
    (failed,) = events(wire)
    assert "after 2 rounds" in str(failed.error)


def test_the_total_deadline_runs_while_the_host_answers() -> None:
    clock = FakeClock()
    part, asks, wire = gathering()
    p = send(wire, clock, "tools/call", timeout=10.0)
    wire.pop(p.rid)
    part.on_input_required(p, input_required({"who": "elicitation/create"}), clock.now, CAPS)
    events(wire)
    assert part.soonest() == p.total_deadline
    part.due(clock.advance(9.0))
    assert events(wire) == []
    part.due(clock.advance(1.0))
    withdrawn, failed = events(wire)
    assert isinstance(withdrawn, ServerRequestCancelled)
    assert isinstance(failed.error, RequestTimeout) and not asks.open and not part.gathers


def test_an_error_answer_fails_the_call_and_a_non_json_answer_keeps_the_question() -> None:
    clock = FakeClock()
    part, asks, wire = gathering()
    p = send(wire, clock, "tools/call")
    wire.pop(p.rid)
    part.on_input_required(p, input_required({"who": "elicitation/create"}), clock.now, CAPS)
    (ask,) = events(wire)
    with pytest.raises(LocalProtocolError, match="not JSON"):
        part.answer(ask.request_id, {"x": object()}, clock.now)
    assert ask.request_id in asks.open
    part.refused(ask.request_id, -1, "user said no", None)
    (failed,) = events(wire)
    assert isinstance(failed.error, RpcError) and failed.error.code == -1


# -- subscriptions and the listen stream -------------------------------------------------------

LISTS = {"tools": {"listChanged": True}, "resources": {"subscribe": True}}


def test_nothing_to_listen_for_opens_no_stream() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    subs = Subscriptions(wire)
    subs.open(clock.now, {})
    assert sent(wire) == [] and subs.listen_rid is None


def test_a_subscription_reopens_the_stream_and_completes_on_acknowledgement() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    subs = Subscriptions(wire)
    subs.open(clock.now, LISTS)
    (first,) = sent(wire)
    assert first["params"] == {"notifications": {"toolsListChanged": True}}
    ok: RequestHandle[None] = RequestHandle(wire.take_id(), "resources/subscribe")
    refused: RequestHandle[None] = RequestHandle(wire.take_id(), "resources/subscribe")
    subs.change(ok, "file:///a", True, clock.now, LISTS)
    subs.change(refused, "file:///b", True, clock.now, LISTS)
    out = sent(wire)
    assert [m.get("method") for m in out] == ["notifications/cancelled", "subscriptions/listen",
                                             "notifications/cancelled", "subscriptions/listen"]
    assert out[-1]["params"]["notifications"]["resourceSubscriptions"] == ["file:///a",
                                                                          "file:///b"]
    assert subs.is_stream(out[-1]["id"]) and not subs.is_stream(first["id"])
    subs.on_acknowledged({"notifications": {"resourceSubscriptions": ["file:///a"]}})
    done, failed = events(wire)
    assert isinstance(done, Completed) and done.handle == ok
    assert isinstance(failed, Failed) and failed.handle == refused
    assert subs.uris == {"file:///a"}
    assert subs.listen_rid is not None
    assert wire.pending[subs.listen_rid].deadline == math.inf  # lives until either side ends


def test_the_stream_ending_fails_its_waiters() -> None:
    clock = FakeClock()
    wire = Wire(Limits())
    subs = Subscriptions(wire)
    waiter: RequestHandle[None] = RequestHandle(wire.take_id(), "resources/subscribe")
    subs.change(waiter, "file:///a", True, clock.now, LISTS)
    rid = subs.listen_rid
    assert rid is not None
    subs.server_cancelled(rid)
    failed, ended = events(wire)
    assert isinstance(failed, Failed) and isinstance(ended, SubscriptionEnded)
    assert subs.listen_rid is None and rid not in wire.pending


def test_an_unacknowledged_stream_times_out_with_a_cancellation() -> None:
    clock = FakeClock()
    wire = Wire(Limits(idle_timeout=5.0))
    subs = Subscriptions(wire)
    subs.open(clock.now, LISTS)
    sent(wire)
    (p,) = wire.expired(clock.advance(5.0))
    p.answer.on_abandon(p, p.timeout_error(), "late")
    assert sent(wire)[0]["method"] == "notifications/cancelled"
    (ended,) = events(wire)
    assert isinstance(ended, SubscriptionEnded) and isinstance(ended.error, RequestTimeout)


# -- the response cache ------------------------------------------------------------------------

def test_the_cache_keeps_values_for_their_ttl_only() -> None:
    clock = FakeClock()
    cache = ResponseCache()
    cache.store(("resources/read", "a"), 10.0, "A", clock.now)
    cache.store(("tools/list", ""), 0.0, "never", clock.now)
    cache.store(("prompts/list", ""), math.inf, "unbounded", clock.now)
    cache.store(("resources/list", ""), 10.0, "no time", None)
    assert len(cache) == 1
    assert cache.get(("resources/read", "a"), clock.advance(9.9)) == "A"
    assert cache.get(("resources/read", "a"), clock.advance(0.1)) is MISS
    assert len(cache) == 0  # dropped when found expired


def test_a_list_change_drops_its_lists() -> None:
    clock = FakeClock()
    cache = ResponseCache()
    for method in ("resources/list", "resources/templates/list", "tools/list"):
        cache.store((method, ""), 60.0, method, clock.now)
    cache.store(("resources/read", "a"), 60.0, "A", clock.now)
    cache.invalidate("resources")
    assert cache.get(("resources/list", ""), clock.now) is MISS
    assert cache.get(("resources/templates/list", ""), clock.now) is MISS
    assert cache.get(("tools/list", ""), clock.now) == "tools/list"
    cache.drop(("resources/read", "a"))
    assert cache.get(("resources/read", "a"), clock.now, None) is None


# -- the task runner ---------------------------------------------------------------------------

@dataclass
class FakeTaskHost:
    state: State = State.READY
    era: str | None = "modern"
    protocol_version: str | None = MODERN_VERSIONS[0]
    capabilities: dict[str, Any] = field(default_factory=dict)
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    accept_tasks: bool = True
    tools: dict[str, Tool] = field(default_factory=dict)


def runner() -> tuple[TaskRunner, Wire, FakeTaskHost]:
    wire = Wire(Limits(request_timeout=60.0, idle_timeout=10.0))
    host = FakeTaskHost()
    return TaskRunner(host, wire, ServerRequests(wire)), wire, host


def created_call(runner_: TaskRunner, wire: Wire, clock: FakeClock,
                 status: str = "working") -> RequestHandle[Any]:
    p = send(wire, clock, "tools/call", params={"name": "slow"})
    p.task_mode = runner_.mode("slow", None)
    wire.pop(p.rid)
    sent(wire)
    task = {"resultType": "task", "taskId": "t1", "status": status}
    assert runner_.created(p, task, clock.now)
    return p.handle


def test_a_task_is_polled_at_its_interval_and_ends_the_call_with_its_outcome() -> None:
    clock = FakeClock()
    tasks, wire, _host = runner()
    handle = created_call(tasks, wire, clock)
    (status,) = events(wire)
    assert isinstance(status, TaskStatus) and status.task.status == "working"
    assert tasks.soonest() == clock.now + DEFAULT_POLL_INTERVAL
    tasks.due(clock.advance(DEFAULT_POLL_INTERVAL / 2))
    assert sent(wire) == []
    tasks.due(clock.advance(DEFAULT_POLL_INTERVAL / 2))
    (poll,) = sent(wire)
    assert poll["method"] == "tasks/get" and poll["params"] == {"taskId": "t1"}
    answer(wire, "tasks/get", {"taskId": "t1", "status": "completed",
                               "result": {"content": [], "isError": False}}, clock.now)
    status, done = events(wire)
    assert isinstance(done, Completed) and done.handle == handle
    assert done.value == {"content": [], "isError": False}  # parsed by the call's parse
    assert not tasks.runs and not tasks.run_ids and wire.pending == {}


def test_a_task_past_its_total_deadline_is_cancelled_on_the_server() -> None:
    clock = FakeClock()
    tasks, wire, _host = runner()
    created_call(tasks, wire, clock)
    events(wire)
    tasks.due(clock.advance(60.0))
    out = sent(wire)
    assert out[-1]["method"] == "tasks/cancel" and out[-1]["params"] == {"taskId": "t1"}
    (failed,) = [e for e in events(wire) if isinstance(e, Failed)]
    assert isinstance(failed.error, RequestTimeout) and not tasks.runs


def test_a_lost_poll_is_repeated_a_few_times_not_fatal() -> None:
    clock = FakeClock()
    tasks, wire, _host = runner()
    created_call(tasks, wire, clock)
    events(wire)
    tasks.due(clock.advance(DEFAULT_POLL_INTERVAL))
    sent(wire)
    wire.now = clock.now  # the session keeps it current at every entry
    fail(wire, "tasks/get", RemoteProtocolError("stream dropped"))
    assert events(wire) == [] and tasks.runs  # still running
    assert tasks.soonest() == clock.now + DEFAULT_POLL_INTERVAL


def test_a_status_notification_polls_at_once() -> None:
    clock = FakeClock()
    tasks, wire, _host = runner()
    created_call(tasks, wire, clock)
    assert tasks.nudged({"taskId": "t1"}, clock.advance(0.1))
    assert tasks.soonest() == clock.now
    assert not tasks.nudged({"taskId": "someone-else"}, clock.now)


def test_an_illegal_status_change_ends_the_call() -> None:
    clock = FakeClock()
    tasks, wire, _host = runner()
    created_call(tasks, wire, clock, status="completed")
    events(wire)
    tasks.due(clock.now)  # a creation already terminal: its outcome comes by poll
    sent(wire)
    answer(wire, "tasks/get", {"taskId": "t1", "status": "working"}, clock.now)
    (failed,) = events(wire)
    assert "does not allow" in str(failed.error)


def test_legacy_mode_follows_the_tool_and_the_server() -> None:
    tasks, _wire, host = runner()
    host.era, host.protocol_version = "legacy", "2025-11-25"
    assert tasks.mode("x", True) is None  # the server declared no tasks
    host.server_capabilities = {"tasks": {"requests": {"tools": {"call": {}}}}}
    assert tasks.support_unknown("x")
    with pytest.raises(LocalProtocolError, match="'tasks' capability"):
        host.server_capabilities = {}
        tasks.check("tasks/get")


# -- reading lines -----------------------------------------------------------------------------

def test_the_reader_yields_values_then_end() -> None:
    reader = LineReader(1024)
    reader.feed(b'{"a": 1}\n[1]\nnot json\n')
    assert reader.next() == {"a": 1}
    assert reader.next() == [1]
    bad = reader.next()
    assert isinstance(bad, Unreadable) and "not UTF-8 JSON" in str(bad.error)
    assert reader.next() is END
    reader.feed(b'"tail"')
    assert reader.next() is END
    reader.feed_eof()
    assert reader.next() == "tail"


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":7,"result":{"x":"' + b"y" * 200 + b'"}}\n',
    b'{"result":{"x":"' + b"y" * 200 + b'"},"id":7,"jsonrpc":"2.0"}\n',
])
def test_an_oversize_answer_names_the_request_it_answered(line: bytes) -> None:
    reader = LineReader(64)
    reader.feed(line)
    item = reader.next()
    assert isinstance(item, Unreadable) and item.request_id == 7
    assert isinstance(item.error, MessageTooLarge)


def test_an_oversize_server_request_names_no_request_of_ours() -> None:
    reader = LineReader(64)
    reader.feed(b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"p":"' + b"y" * 200 + b'"}}\n')
    item = reader.next()
    assert isinstance(item, Unreadable) and item.request_id is None


# -- the server's requests ---------------------------------------------------------------------

def test_server_requests_are_answered_refused_or_put_to_the_host() -> None:
    wire = Wire(Limits())
    asks = ServerRequests(wire)
    asks.on_request(Request(id=1, method="ping", params={}), CAPS)
    asks.on_request(Request(id=2, method="sampling/createMessage", params={}), CAPS)
    asks.on_request(Request(id=3, method="roots/list", params={}), CAPS)
    asks.on_request(Request(id=3, method="roots/list", params={}), CAPS)
    out = sent(wire)
    assert out[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert out[1]["error"]["code"] == -32601
    assert out[2]["error"]["code"] == -32602 and "already in use" in out[2]["error"]["message"]
    (asked,) = events(wire)
    assert asked.request_id == 3 and 3 in asks
    with pytest.raises(LocalProtocolError, match="not JSON"):
        asks.answer(3, {"jsonrpc": "2.0", "id": 3, "result": {"x": object()}})
    assert 3 in asks  # still open: answer again
    assert asks.answer(3, {"jsonrpc": "2.0", "id": 3, "result": {"roots": []}})
    assert not asks.answer(3, {"jsonrpc": "2.0", "id": 3, "result": {}})  # answered once


# -- the host's operations ---------------------------------------------------------------------

@dataclass
class FakeOperationHost:
    state: State = State.READY
    era: str | None = "legacy"
    protocol_version: str | None = HANDSHAKE_VERSIONS[0]
    capabilities: dict[str, Any] = field(default_factory=dict)
    server_capabilities: dict[str, Any] = field(default_factory=lambda: {"tools": {}})
    closed_error: MCPError | None = None
    check_mcp_headers: bool = False
    accept_tasks: bool = True

    @property
    def tools(self) -> dict[str, Tool]:
        return {}


def operations(host: FakeOperationHost | None = None) -> tuple[Operations, Wire,
                                                               FakeOperationHost]:
    host = host or FakeOperationHost()
    wire = Wire(Limits())
    asks = ServerRequests(wire)
    era = EraChoice(FakeOpener(), wire, ALL)
    ops = Operations(host, wire, era, ResponseCache(), InputGathering(wire, asks),
                     TaskRunner(host, wire, asks))
    return ops, wire, host


def test_an_operation_is_refused_before_ready_or_without_its_capability() -> None:
    ops, wire, host = operations()
    with pytest.raises(LocalProtocolError, match="'prompts' capability"):
        ops.request("prompts/get", {}, 0.0, None, raw, capability="prompts")
    host.state = State.INITIALIZING
    with pytest.raises(LocalProtocolError, match="wait for Ready"):
        ops.request("tools/call", {}, 0.0, None, raw)
    ops.request("ping", None, 0.0, None, raw)  # L-05: ping is allowed
    host.state = State.CLOSED
    host.closed_error = RemoteProtocolError("gone")
    with pytest.raises(Exception, match=r"closed \(gone\)"):
        ops.request("ping", None, 0.0, None, raw)
    assert [m["method"] for m in sent(wire)] == ["ping"]


def test_a_list_of_an_undeclared_capability_is_empty_without_asking() -> None:
    ops, wire, _host = operations()
    handle = ops.list_all("prompts/list", "prompts", lambda x: x, "prompts", 0.0, None)
    (done,) = events(wire)
    assert isinstance(done, Completed) and done.handle == handle and done.value == []
    assert sent(wire) == []


def test_pages_are_walked_and_a_forgotten_cursor_restarts_the_walk_once() -> None:
    clock = FakeClock()
    ops, wire, _host = operations()
    ops.list_all("tools/list", "tools", lambda x: x, "tools", clock.now, None)
    answer(wire, "tools/list", {"tools": [{"name": "a", "inputSchema": {}}],
                                "nextCursor": "c1"}, clock.now)
    (page2,) = sent(wire)[-1:]
    assert page2["params"] == {"cursor": "c1"}
    (p,) = wire.pending.values()
    wire.pop(p.rid)
    p.answer.on_error_response(p, RpcError(-32602, "unknown cursor"))
    (again,) = sent(wire)
    assert "params" not in again  # from the first page, once
    (q,) = wire.pending.values()
    wire.pop(q.rid)
    q.answer.on_error_response(q, RpcError(-32602, "still no"))
    (failed,) = events(wire)
    assert isinstance(failed, Failed) and failed.error.code == -32602


def test_a_modern_32022_is_retried_once_in_a_mutual_version() -> None:
    clock = FakeClock()
    ops, wire, host = operations(FakeOperationHost(era="modern",
                                                   protocol_version=MODERN_VERSIONS[0]))
    wire.modern = True
    ops.request("tools/call", {"name": "x"}, clock.now, None, raw)
    sent(wire)
    (p,) = wire.pending.values()
    wire.pop(p.rid)
    error = UnsupportedProtocolVersion(-32022, "no", {"supported": [MODERN_VERSIONS[-1]]})
    p.answer.on_error_response(p, error)
    (retry,) = sent(wire)
    assert retry["id"] != p.rid and host.protocol_version == MODERN_VERSIONS[-1]
    (q,) = wire.pending.values()
    wire.pop(q.rid)
    q.answer.on_error_response(q, error)  # the one retry is spent
    (failed,) = events(wire)
    assert failed.error is error and sent(wire) == []


def test_a_cancelled_operation_tells_the_server() -> None:
    clock = FakeClock()
    ops, wire, _host = operations()
    handle = ops.request("tools/call", {"name": "x"}, clock.now, None, raw)
    sent(wire)
    p = wire.pop(handle.id)
    assert p is not None and p.answer.hosted and p.answer.replayable
    p.answer.on_abandon(p, RequestTimeout("tools/call", 1.0, "idle"), "late")
    assert sent(wire) == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": handle.id, "reason": "late"}}]
    (failed,) = events(wire)
    assert isinstance(failed.error, RequestTimeout)


# -- what the restructuring fixed (found by its review) ----------------------------------------

def test_every_opening_records_the_time_for_the_transport() -> None:
    for opening in ("legacy", "initialize"):
        session = ClientSession(Implementation(name="t", version="1"))
        if opening == "legacy":
            session.start(now=42.0, era="legacy")
        else:
            session.initialize(now=42.0)
        assert session.latest_now == 42.0  # the HTTP layer's auth headers use it
    session = ClientSession(Implementation(name="t", version="1"))
    with pytest.raises(ValueError, match="era must be"):
        session.start(now=42.0, era="bogus")
    assert session.latest_now == 0.0 and session.state is State.IDLE  # nothing changed


def test_nothing_is_read_after_an_oversize_answer_closed_the_session() -> None:
    session = ClientSession(Implementation(name="t", version="1"),
                            limits=Limits(max_message_size=256))
    handle = session.initialize(now=0.0)
    session.data_to_send()
    huge = json.dumps({"jsonrpc": "2.0", "id": handle.id,
                       "result": {"pad": "x" * 1000}}).encode()
    log = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}'
    session.receive_data(huge + b"\n" + log + b"\n", now=1.0)
    kinds = []
    while (event := session.next_event()) is not None:
        kinds.append(type(event))
    assert kinds == [Failed, Closed] and LogMessage not in kinds and BadMessage not in kinds


def test_a_failed_opening_leaves_no_half_queued_message_over_http() -> None:
    session = ClientSession(Implementation(name="t", version="1"),
                            limits=Limits(probe_fallback=0.5))
    handle = session.start(now=0.0)
    assert [obj["method"] for obj, _ in session.messages_to_send()] == ["server/discover"]
    session.handle_timeout(0.5)  # the fallback queues initialize beside the probe
    session.fail_request(handle.id, AuthorizationDenied("the user declined"), now=0.6)
    assert session.state is State.CLOSED
    assert session.messages_to_send() == []  # the queued initialize is dropped, consistently
