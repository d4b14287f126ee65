"""The client as a task receiver (2025-11-25, section 9.1): the server's sampling and
elicitation requests run as tasks in a :class:`TaskStore`, served by ``tasks/*``.

The part is driven against a real ``Wire`` and ``ServerRequests`` (what a session holds), with a
fake clock; every message it writes is checked against the 2025-11-25 schema when it is there,
and the task results against their own definitions.  A hypothesis state machine interleaves
server actions, host answers and time; a few tests run through a whole ``ClientSession``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from datetime import datetime
from typing import Any

import pytest
from fake_server import (
    CLIENT_INFO,
    JSONObj,
    Pair,
    assert_valid_client_message,
    parse_ndjson,
    schema_available,
    schema_errors,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcp_proto import (
    ClientSession,
    LocalProtocolError,
    ReceivedTask,
    ServerRequest,
    ServerRequestCancelled,
    TaskStore,
)
from mcp_proto._limits import Limits
from mcp_proto._tasks import RELATED_TASK_KEY, legal_transition
from mcp_proto.session._outbox import Wire
from mcp_proto.session._receiver import (
    DEFAULT_LIST_PAGE,
    DEFAULT_TTL,
    MAX_TTL,
    MAX_WAITING_RESULTS,
    MIN_TTL,
    TaskReceiver,
    receiver_capabilities,
)
from mcp_proto.session._server_requests import ServerRequests
from mcp_proto.wire._jsonrpc import Request

SAMPLING: JSONObj = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                     "maxTokens": 5}
ELICIT: JSONObj = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
ANSWER: JSONObj = {"role": "assistant", "content": {"type": "text", "text": "hello"},
                   "model": "m"}
WALL = 1_764_000_000.0  # 2025-11-24T16:00:00Z, minus the fake clock's start
START = 100.0
VALIDATE = schema_available()


def parse_stamp(text: str) -> float:
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text[:-1] + "+00:00").timestamp()


def check_schema(obj: object, definition: str) -> None:
    if VALIDATE:
        errors = schema_errors(obj, definition)
        assert not errors, f"not a {definition}: {obj!r}: {errors}"


class Rig:
    """A receiver with the parts a session gives it, a fake clock and a fake server."""

    def __init__(self, caps: JSONObj | None = None, store: TaskStore | None = None,
                 **store_kwargs: Any) -> None:
        counter = itertools.count(1)
        store_kwargs.setdefault("new_id", lambda: f"id{next(counter)}")
        store_kwargs.setdefault("wall_offset", WALL)
        self.store = TaskStore(**store_kwargs) if store is None else store
        self.caps = receiver_capabilities({"sampling": {}, "elicitation": {}}
                                          if caps is None else caps)
        self.now = START
        self.rids = itertools.count(1)
        self.new_session()

    def new_session(self) -> None:
        self.wire = Wire(Limits())
        self.asks = ServerRequests(self.wire)
        self.receiver = TaskReceiver(self.wire, self.asks, self.store)

    def request(self, method: str, params: JSONObj | None = None,
                rid: int | str | None = None) -> list[JSONObj]:
        """The server sends a request; what the client wrote back at once."""
        message = Request(next(self.rids) if rid is None else rid, method, params or {})
        self.wire.now = self.now
        if not self.receiver.on_request(message, self.caps, self.now):
            self.asks.on_request(message, self.caps)
        return self.sent()

    def sent(self) -> list[JSONObj]:
        messages = parse_ndjson(self.wire.data_to_send())
        for m in messages:
            if VALIDATE:
                assert_valid_client_message(m)
            if m.get("method") == "notifications/tasks/status":
                check_schema(m, "TaskStatusNotification")
        return messages

    def events(self) -> list[Any]:
        out = list(self.wire.events)
        self.wire.events.clear()
        return out

    def create(self, method: str = "sampling/createMessage", ttl: Any = None,
               rid: int | str | None = None) -> JSONObj:
        params = dict(SAMPLING if method == "sampling/createMessage" else ELICIT)
        params["task"] = {} if ttl is None else {"ttl": ttl}
        [answer] = self.request(method, params, rid)
        assert "result" in answer, answer
        check_schema(answer["result"], "CreateTaskResult")
        task: JSONObj = answer["result"]["task"]
        return task

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.wire.now = self.now
        self.receiver.handle_timeout(self.now)


def error_of(message: JSONObj) -> tuple[int, str]:
    assert "error" in message, message
    return message["error"]["code"], message["error"]["message"]


# -- capabilities and settings ------------------------------------------------------------------


def test_capabilities_name_the_requests_declared() -> None:
    both = receiver_capabilities({"sampling": {}, "elicitation": {"form": {}}})
    assert both["tasks"] == {"list": {}, "cancel": {}, "requests": {
        "sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}
    assert receiver_capabilities({"sampling": {}})["tasks"]["requests"] == {
        "sampling": {"createMessage": {}}}
    assert receiver_capabilities({"elicitation": {}})["tasks"]["requests"] == {
        "elicitation": {"create": {}}}
    assert receiver_capabilities({"roots": {}}) == {"roots": {}}
    check_schema(both, "ClientCapabilities")


def test_capabilities_merge_and_copy() -> None:
    given_caps: JSONObj = {"sampling": {}, "tasks": {"list": {"x": 1},
                                                     "requests": {"sampling": {"y": {}}}}}
    out = receiver_capabilities(given_caps)
    assert out["tasks"] == {"list": {"x": 1}, "cancel": {},
                            "requests": {"sampling": {"y": {}, "createMessage": {}}}}
    assert given_caps == {"sampling": {}, "tasks": {"list": {"x": 1},
                                                    "requests": {"sampling": {"y": {}}}}}


@pytest.mark.parametrize("kwargs", [
    {"max_tasks": 0}, {"max_tasks": 2.0}, {"max_ttl": 0.5}, {"max_ttl": math.nan},
    {"default_ttl": 0.0}, {"default_ttl": math.inf}, {"poll_interval": 0},
    {"poll_interval": math.inf}, {"wall_offset": math.nan},
])
def test_store_settings_out_of_range(kwargs: JSONObj) -> None:
    with pytest.raises(ValueError):
        TaskStore(**kwargs)


def test_attach_fills_only_what_is_missing() -> None:
    def mine() -> str:
        return "mine"

    store = TaskStore(new_id=mine)
    store.attach(new_id=lambda: "theirs", wall_offset=5.0)
    assert store.new_id is mine and store.wall_offset == 5.0
    store.attach(wall_offset=9.0)
    assert store.wall_offset == 5.0


def test_a_receiver_needs_ids() -> None:
    wire = Wire(Limits())
    with pytest.raises(ValueError, match="new_id"):
        TaskReceiver(wire, ServerRequests(wire), TaskStore())


# -- creating -----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["sampling/createMessage", "elicitation/create"])
def test_a_task_request_is_answered_at_once_and_put_to_the_host(method: str) -> None:
    rig = Rig()
    task = rig.create(method, ttl=5000)
    assert task["status"] == "working" and task["taskId"] == "id1"
    assert task["ttl"] == 5000 and task["pollInterval"] == 1000
    assert task["createdAt"] == task["lastUpdatedAt"]
    assert parse_stamp(task["createdAt"]) == pytest.approx(WALL + START, abs=1e-3)
    [event] = rig.events()
    assert event == ServerRequest(request_id="task:id1", method=method,
                                  params=SAMPLING if method.startswith("sampling") else ELICIT)
    assert rig.receiver.owns("task:id1") and "task:id1" in rig.asks
    stored = rig.store.get("id1")
    assert stored is not None and stored.status == "working" and stored.method == method
    assert stored.request_id == "task:id1" and not stored.terminal


@pytest.mark.parametrize(("asked", "settings_", "granted"), [
    (None, {}, DEFAULT_TTL * 1000),
    (10 ** 12, {}, MAX_TTL * 1000),
    (0, {}, MIN_TTL * 1000),
    (2500.4, {}, 2500),
    (None, {"default_ttl": None}, MAX_TTL * 1000),
    (None, {"default_ttl": None, "max_ttl": math.inf}, None),
    (10 ** 15, {"max_ttl": math.inf}, 10 ** 15),
])
def test_the_ttl_granted(asked: Any, settings_: JSONObj, granted: Any) -> None:
    rig = Rig(**settings_)
    assert rig.create(ttl=asked)["ttl"] == granted


@pytest.mark.parametrize("metadata", ["x", [], None, {"ttl": -1}, {"ttl": "5"},
                                      {"ttl": True}, {"ttl": 1e400}])
def test_a_malformed_task_param_is_refused(metadata: Any) -> None:
    rig = Rig()
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "task": metadata})
    assert error_of(answer)[0] == -32602
    assert rig.store.tasks() == [] and rig.events() == []


def test_refusals_come_first() -> None:
    rig = Rig()
    [answer] = rig.request("elicitation/create", {**ELICIT, "mode": "url", "task": {}})
    assert error_of(answer)[0] == -32602 and "F-03" in error_of(answer)[1]
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "tools": [], "task": {}})
    assert error_of(answer)[0] == -32602 and "F-02" in error_of(answer)[1]
    assert rig.store.tasks() == [] and rig.events() == []


def test_a_request_not_declared_for_tasks_is_a_plain_request() -> None:
    caps: JSONObj = {"sampling": {}, "elicitation": {},
                     "tasks": {"requests": {"sampling": {"createMessage": {}}}}}
    rig = Rig()
    rig.caps = caps  # as a host declared it by hand: no elicitation.create under tasks
    params = {**ELICIT, "task": {"ttl": 10}}
    assert rig.request("elicitation/create", params, rid=7) == []
    assert rig.events() == [ServerRequest(request_id=7, method="elicitation/create",
                                          params=params)]
    assert rig.store.tasks() == []


def test_plain_requests_and_ping_pass_through() -> None:
    rig = Rig()
    assert rig.request("sampling/createMessage", SAMPLING, rid="s") == []
    assert rig.events() == [ServerRequest(request_id="s", method="sampling/createMessage",
                                          params=SAMPLING)]
    [pong] = rig.request("ping", rid=3)
    assert pong == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_request_id_in_use_is_refused() -> None:
    rig = Rig()
    rig.request("sampling/createMessage", SAMPLING, rid="busy")
    rig.events()
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "task": {}}, rid="busy")
    assert error_of(answer)[0] == -32602
    rig.create()
    assert rig.request("tasks/result", {"taskId": "id1"}, rid=50) == []
    [answer] = rig.request("elicitation/create", {**ELICIT, "task": {}}, rid=50)
    assert error_of(answer)[0] == -32602
    [answer] = rig.request("tasks/result", {"taskId": "id1"}, rid=50)
    assert error_of(answer)[0] == -32602
    assert [t.task_id for t in rig.store.tasks()] == ["id1"]


def test_a_full_store_evicts_the_oldest_terminal_task_else_refuses() -> None:
    rig = Rig(max_tasks=2)
    rig.create()
    rig.create()
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "task": {}})
    assert error_of(answer) == (-32603, "too many tasks: the client runs at most 2 at once")
    rig.events()
    assert rig.receiver.complete("task:id2", ANSWER, rig.now)
    rig.sent()
    assert rig.create()["taskId"] == "id3"
    assert [t.task_id for t in rig.store.tasks()] == ["id1", "id3"]
    [answer] = rig.request("tasks/get", {"taskId": "id2"})
    assert error_of(answer)[0] == -32602


@pytest.mark.parametrize("made", ["", 5, "x" * 2000, "id1"])
def test_a_bad_or_reused_id_is_an_internal_error(made: Any) -> None:
    ids = iter(["id1", made])
    rig = Rig(new_id=lambda: next(ids))
    rig.create()
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "task": {}})
    assert error_of(answer)[0] == -32603
    assert len(rig.store) == 1


# -- the host's answers ---------------------------------------------------------------------


def test_completed_task_result_carries_related_task() -> None:
    rig = Rig()
    rig.create()
    rig.events()
    rig.advance(2.0)
    assert rig.receiver.complete("task:id1", {**ANSWER, "_meta": {"k": 1}}, rig.now)
    [note] = rig.sent()
    assert note["method"] == "notifications/tasks/status"
    assert note["params"]["status"] == "completed"
    assert parse_stamp(note["params"]["lastUpdatedAt"]) == pytest.approx(WALL + START + 2)
    assert not rig.receiver.owns("task:id1") and "task:id1" not in rig.asks
    [got] = rig.request("tasks/get", {"taskId": "id1"})
    check_schema(got["result"], "GetTaskResult")
    assert got["result"] == note["params"]
    [result] = rig.request("tasks/result", {"taskId": "id1"})
    assert result["result"] == {**ANSWER, "_meta": {"k": 1, RELATED_TASK_KEY: {"taskId": "id1"}}}
    stored = rig.store.get("id1")
    assert stored is not None and stored.result == {**ANSWER, "_meta": {"k": 1}}
    assert not rig.receiver.complete("task:id1", ANSWER, rig.now)
    assert not rig.receiver.fail("task:id1", -1, "no", None, rig.now)


def test_waiting_results_are_answered_once_at_the_end() -> None:
    rig = Rig()
    rig.create()
    assert rig.request("tasks/result", {"taskId": "id1"}, rid=10) == []
    assert rig.request("tasks/result", {"taskId": "id1"}, rid=11) == []
    assert rig.receiver.complete("task:id1", ANSWER, rig.now)
    note, first, second = rig.sent()
    assert note["method"] == "notifications/tasks/status"
    assert (first["id"], second["id"]) == (10, 11)
    assert first["result"] == second["result"] == {
        **ANSWER, "_meta": {RELATED_TASK_KEY: {"taskId": "id1"}}}
    rig.advance(DEFAULT_TTL + 1)
    assert rig.sent() == []


def test_a_failed_task_returns_the_hosts_error() -> None:
    rig = Rig()
    rig.create()
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    assert rig.receiver.fail("task:id1", -1, "User rejected", {"why": "no"}, rig.now)
    note, waited = rig.sent()
    assert note["params"]["status"] == "failed"
    assert note["params"]["statusMessage"] == "User rejected"
    error = {"code": -1, "message": "User rejected", "data": {"why": "no"}}
    assert waited == {"jsonrpc": "2.0", "id": "w", "error": error}
    [again] = rig.request("tasks/result", {"taskId": "id1"}, rid="x")
    assert again["error"] == error
    stored = rig.store.get("id1")
    assert stored is not None and stored.error == (-1, "User rejected")
    assert stored.error_data == {"why": "no"}


def test_an_answer_that_is_not_json_leaves_the_task_open() -> None:
    rig = Rig()
    rig.create()
    with pytest.raises(LocalProtocolError):
        rig.receiver.complete("task:id1", {"x": object()}, rig.now)
    with pytest.raises(LocalProtocolError):
        rig.receiver.fail("task:id1", -1, "no", {1, 2}, rig.now)
    assert rig.sent() == [] and rig.receiver.owns("task:id1")
    task = rig.store.get("id1")
    assert task is not None and task.status == "working"
    assert rig.receiver.complete("task:id1", ANSWER, rig.now)


def test_a_long_error_message_is_clipped_in_the_status_only() -> None:
    rig = Rig()
    rig.create()
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    rig.receiver.fail("task:id1", -32603, "e" * 1000, None, rig.now)
    note, waited = rig.sent()
    assert len(note["params"]["statusMessage"]) == 300
    assert waited["error"]["message"] == "e" * 1000


# -- the server's tasks/* ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tasks/get", "tasks/result", "tasks/cancel"])
@pytest.mark.parametrize("params", [{"taskId": "nope"}, {"taskId": 1}, {},
                                    {"taskId": "task:id1"}])
def test_unknown_tasks_are_invalid_params(method: str, params: JSONObj) -> None:
    rig = Rig()
    rig.create()
    [answer] = rig.request(method, {**params, "_meta": {RELATED_TASK_KEY: {"taskId": "id1"}}})
    assert error_of(answer)[0] == -32602


def test_cancel() -> None:
    rig = Rig()
    rig.create()
    rig.events()
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    note, waited, answer = rig.request("tasks/cancel", {"taskId": "id1"}, rid="c")
    assert note["params"]["status"] == "cancelled"
    assert waited == {"jsonrpc": "2.0", "id": "w",
                      "error": {"code": -32603, "message": "task cancelled"}}
    check_schema(answer["result"], "CancelTaskResult")
    assert answer["result"] == note["params"] and answer["id"] == "c"
    assert rig.events() == [ServerRequestCancelled(request_id="task:id1",
                                                   reason="task cancelled")]
    assert not rig.receiver.owns("task:id1")
    assert not rig.receiver.complete("task:id1", ANSWER, rig.now)
    [again] = rig.request("tasks/cancel", {"taskId": "id1"})
    assert error_of(again) == (-32602, "Cannot cancel task: already in terminal status "
                                       "'cancelled'")
    [result] = rig.request("tasks/result", {"taskId": "id1"})
    assert error_of(result) == (-32603, "task cancelled")


def test_cancel_of_a_completed_task_is_refused() -> None:
    rig = Rig()
    rig.create()
    rig.receiver.complete("task:id1", ANSWER, rig.now)
    rig.sent()
    [answer] = rig.request("tasks/cancel", {"taskId": "id1"})
    assert error_of(answer)[0] == -32602 and "'completed'" in error_of(answer)[1]
    task = rig.store.get("id1")
    assert task is not None and task.status == "completed"


def test_too_many_waiting_results() -> None:
    rig = Rig()
    rig.create()
    for rid in range(MAX_WAITING_RESULTS):
        assert rig.request("tasks/result", {"taskId": "id1"}, rid=rid) == []
    [answer] = rig.request("tasks/result", {"taskId": "id1"}, rid="more")
    assert error_of(answer)[0] == -32603


def test_a_cancelled_tasks_result_request_is_forgotten() -> None:
    rig = Rig()
    rig.create()
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    assert rig.receiver.server_cancelled("w") and not rig.receiver.server_cancelled("w")
    rig.receiver.complete("task:id1", ANSWER, rig.now)
    [note] = rig.sent()
    assert note["method"] == "notifications/tasks/status"


def walk_list(rig: Rig) -> list[str]:
    ids: list[str] = []
    params: JSONObj = {}
    while True:
        [page] = rig.request("tasks/list", params)
        check_schema(page["result"], "ListTasksResult")
        ids += [t["taskId"] for t in page["result"]["tasks"]]
        if "nextCursor" not in page["result"]:
            return ids
        assert len(page["result"]["tasks"]) == DEFAULT_LIST_PAGE
        params = {"cursor": page["result"]["nextCursor"]}


def test_list_pages_newest_last() -> None:
    rig = Rig(max_tasks=500)
    for _ in range(2 * DEFAULT_LIST_PAGE + 20):
        rig.create()
    assert walk_list(rig) == [f"id{n}" for n in range(1, 2 * DEFAULT_LIST_PAGE + 21)]
    [empty] = Rig().request("tasks/list")
    assert empty["result"] == {"tasks": []}


def test_a_cursor_outlives_purged_tasks() -> None:
    rig = Rig(max_tasks=500)
    for _ in range(DEFAULT_LIST_PAGE + 5):
        rig.create(ttl=1000)
    rig.advance(30)
    rig.create()  # the only one left after the first page's tasks expire
    [page] = rig.request("tasks/list", {})
    assert [t["taskId"] for t in page["result"]["tasks"]] == [f"id{DEFAULT_LIST_PAGE + 6}"]


@pytest.mark.parametrize("cursor", ["x", "-1", "999", 3, "", "\u0661", "1" * 40])
def test_a_bad_cursor_is_invalid_params(cursor: Any) -> None:
    rig = Rig()
    rig.create()
    [answer] = rig.request("tasks/list", {"cursor": cursor})
    assert error_of(answer)[0] == -32602


# -- time -------------------------------------------------------------------------------------


def test_ttl_purges_and_withdraws() -> None:
    rig = Rig()
    rig.create(ttl=5000)
    rig.events()
    assert rig.receiver.next_deadline() == START + 5
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    rig.advance(4.9)
    assert rig.sent() == [] and rig.store.get("id1") is not None
    rig.advance(0.1)
    [expired] = rig.sent()
    assert expired["id"] == "w" and error_of(expired)[0] == -32602
    assert rig.events() == [ServerRequestCancelled(request_id="task:id1",
                                                   reason="task expired")]
    assert rig.store.get("id1") is None and rig.receiver.next_deadline() is None
    assert not rig.receiver.complete("task:id1", ANSWER, rig.now)
    [answer] = rig.request("tasks/get", {"taskId": "id1"})
    assert error_of(answer)[0] == -32602


def test_a_lookup_after_the_ttl_needs_no_timer() -> None:
    rig = Rig()
    rig.create(ttl=2000)
    rig.now += 3  # no handle_timeout: the lookup purges first
    [answer] = rig.request("tasks/get", {"taskId": "id1"})
    assert error_of(answer)[0] == -32602


def test_timestamps_without_a_wall_offset_are_the_clock_itself() -> None:
    rig = Rig(wall_offset=None)
    assert rig.create()["createdAt"] == "1970-01-01T00:01:40.000Z"


# -- sessions ---------------------------------------------------------------------------------


def test_the_end_of_a_session_fails_its_work_and_keeps_the_record() -> None:
    rig = Rig()
    rig.create()
    rig.create()
    rig.receiver.complete("task:id2", ANSWER, rig.now)
    rig.request("tasks/result", {"taskId": "id1"}, rid="w")
    rig.sent()
    rig.events()
    rig.receiver.session_ended("EOF")
    assert rig.sent() == []
    assert rig.events() == [ServerRequestCancelled(request_id="task:id1",
                                                   reason="the connection closed: EOF")]
    first, second = rig.store.tasks()
    assert first.status == "failed" and first.error == (-32603, "the connection closed: EOF")
    assert second.status == "completed"
    assert not rig.receiver.owns("task:id1")
    assert not rig.receiver.on_request(Request(1, "tasks/get", {"taskId": "id1"}), rig.caps,
                                       rig.now)
    # The next connection's server sees none of them; their TTL still runs.
    rig.new_session()
    [answer] = rig.request("tasks/get", {"taskId": "id2"})
    assert error_of(answer)[0] == -32602
    [listed] = rig.request("tasks/list")
    assert listed["result"] == {"tasks": []}
    assert rig.receiver.next_deadline() == START + DEFAULT_TTL
    rig.advance(DEFAULT_TTL)
    assert rig.store.tasks() == [] and rig.sent() == []


class _Interrupting:
    """A stored entry whose ``task``, once read, lets the session add a task first: the
    session's thread changing the store while a host's thread lists it."""

    def __init__(self, entry: Any, meanwhile: Any) -> None:
        self._entry = entry
        self._meanwhile = meanwhile

    @property
    def task(self) -> ReceivedTask:
        meanwhile, self._meanwhile = self._meanwhile, None
        if meanwhile is not None:
            meanwhile()
        return self._entry.task  # type: ignore[no-any-return]


def test_tasks_lists_a_copy_while_the_session_adds_one() -> None:
    rig = Rig()
    rig.create()
    rig.create()
    entries = rig.store._entries
    entries["id1"] = _Interrupting(entries["id1"], rig.create)  # type: ignore[assignment]
    assert [t.task_id for t in rig.store.tasks()] == ["id1", "id2"]
    assert [t.task_id for t in rig.store.tasks()] == ["id1", "id2", "id3"]
    assert len(rig.store) == 3


def test_two_sessions_on_one_store_see_their_own_tasks() -> None:
    a = Rig()
    b = Rig(store=a.store)
    a.create()
    b.create()
    assert [t["taskId"] for t in a.request("tasks/list")[0]["result"]["tasks"]] == ["id1"]
    assert [t["taskId"] for t in b.request("tasks/list")[0]["result"]["tasks"]] == ["id2"]
    assert error_of(b.request("tasks/cancel", {"taskId": "id1"})[0])[0] == -32602
    assert not b.receiver.owns("task:id1")
    b.request("tasks/result", {"taskId": "id2"}, rid="w")
    a.advance(DEFAULT_TTL)  # a's timer purges b's task too: b's wire answers its waiter
    assert a.sent() == []
    [expired] = b.sent()
    assert expired["id"] == "w" and error_of(expired)[0] == -32602


# -- a state machine over server actions, host answers and time --------------------------------

ACTIVE = ("working", "input_required")


class ReceiverMachine(RuleBasedStateMachine):
    """Invariants: the store stays within ``max_tasks``; a task moves only along legal
    transitions (as the server sees it and as the store holds it); every ``tasks/result`` is
    answered exactly once (or dropped with its session); unknown ids are -32602; the host's
    open questions are exactly the unfinished tasks of the live session."""

    def __init__(self) -> None:
        super().__init__()
        self.rig = Rig(caps={"sampling": {}, "elicitation": {}}, max_tasks=4, default_ttl=8.0,
                       max_ttl=20.0)
        self.seen: dict[str, str] = {}  # task id -> last status the server was told
        self.stored: dict[str, str] = {}  # task id -> last status the store held
        self.mine: set[str] = set()  # this session's task ids (ever)
        self.waiting: dict[Any, str] = {}  # tasks/result id -> task id
        self.answers: Counter[Any] = Counter()
        self.dropped: set[Any] = set()
        self.questions: set[Any] = set()  # open ServerRequest ids
        self.expires: dict[str, float] = {}  # task id -> when its TTL runs out
        self.rid = 0

    def next_rid(self) -> str:
        self.rid += 1
        return f"r{self.rid}"

    def saw(self, task: JSONObj) -> None:
        task_id = task["taskId"]
        assert legal_transition(self.seen.get(task_id), task["status"]), (self.seen, task)
        self.seen[task_id] = task["status"]

    def absorb(self, messages: list[JSONObj]) -> dict[Any, JSONObj]:
        """Check what the client wrote; return the responses by id."""
        responses: dict[Any, JSONObj] = {}
        for m in messages:
            if m.get("method") == "notifications/tasks/status":
                self.saw(m["params"])
                continue
            rid = m["id"]
            self.answers[rid] += 1
            assert self.answers[rid] == 1, f"{rid} answered twice"
            assert rid not in self.dropped
            self.waiting.pop(rid, None)
            responses[rid] = m
        for event in self.rig.events():
            if isinstance(event, ServerRequest):
                assert event.request_id not in self.questions
                self.questions.add(event.request_id)
            else:
                assert isinstance(event, ServerRequestCancelled)
                self.questions.remove(event.request_id)
        return responses

    def ask(self, method: str, params: JSONObj) -> tuple[str, JSONObj | None]:
        rid = self.next_rid()
        return rid, self.absorb(self.rig.request(method, params, rid)).get(rid)

    def alive(self, task_id: str) -> ReceivedTask | None:
        """This session's task ``task_id`` if its TTL has not run out."""
        task = self.rig.store.get(task_id)
        if task is None or task_id not in self.mine or self.expires[task_id] <= self.rig.now:
            return None
        return task

    def pick(self, data: st.DataObject) -> str:
        known = sorted(self.seen)
        return data.draw(st.sampled_from([*known, "nope"]) if known else st.just("nope"))

    @rule(method=st.sampled_from(["sampling/createMessage", "elicitation/create"]),
          ttl=st.none() | st.integers(0, 30_000))
    def create(self, method: str, ttl: int | None) -> None:
        before = [t for t in self.rig.store.tasks() if self.expires[t.task_id] > self.rig.now]
        params = dict(SAMPLING if method.startswith("sampling") else ELICIT)
        params["task"] = {} if ttl is None else {"ttl": ttl}
        _rid, answer = self.ask(method, params)
        assert answer is not None
        if "error" in answer:
            assert answer["error"]["code"] == -32603
            assert len(before) == 4 and not any(t.terminal for t in before)
        else:
            task = answer["result"]["task"]
            assert task["status"] == "working" and task["taskId"] not in self.seen
            self.saw(task)
            self.mine.add(task["taskId"])
            self.expires[task["taskId"]] = self.rig.now + task["ttl"] / 1000

    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        task_id = self.pick(data)
        _rid, answer = self.ask("tasks/get", {"taskId": task_id})
        assert answer is not None
        if "error" in answer:
            assert answer["error"]["code"] == -32602
            assert task_id not in self.mine or self.rig.store.get(task_id) is None
        else:
            assert task_id in self.mine
            self.saw(answer["result"])

    @rule(data=st.data())
    def result(self, data: st.DataObject) -> None:
        task_id = self.pick(data)
        rid, answer = self.ask("tasks/result", {"taskId": task_id})
        task = self.rig.store.get(task_id) if task_id in self.mine else None
        if answer is None:
            assert task is not None and task.status in ACTIVE
            self.waiting[rid] = task_id
        elif task is None:
            assert answer["error"]["code"] == -32602
        elif not task.terminal:  # the waiting room for this task is full
            assert answer["error"]["code"] == -32603
            assert list(self.waiting.values()).count(task_id) == MAX_WAITING_RESULTS
        else:
            assert task.terminal
            if task.status == "completed":
                assert answer["result"]["_meta"][RELATED_TASK_KEY] == {"taskId": task_id}

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        task_id = self.pick(data)
        task = self.alive(task_id)
        _rid, answer = self.ask("tasks/cancel", {"taskId": task_id})
        assert answer is not None
        if task is None or task.terminal:
            assert answer["error"]["code"] == -32602
        else:
            assert answer["result"]["status"] == "cancelled"
            self.saw(answer["result"])

    @rule()
    def list_all(self) -> None:
        ids: list[str] = []
        params: JSONObj = {}
        while True:
            _rid, answer = self.ask("tasks/list", params)
            assert answer is not None
            for task in answer["result"]["tasks"]:
                self.saw(task)
                ids.append(task["taskId"])
            if "nextCursor" not in answer["result"]:
                break
            params = {"cursor": answer["result"]["nextCursor"]}
        stored = [t.task_id for t in self.rig.store.tasks() if t.task_id in self.mine]
        assert ids == stored

    @rule(data=st.data(), ok=st.booleans())
    def host_answers(self, data: st.DataObject, ok: bool) -> None:
        if not self.questions:
            return
        sid = data.draw(st.sampled_from(sorted(self.questions)))
        receiver = self.rig.receiver
        assert receiver.owns(sid)
        if ok:
            assert receiver.complete(sid, ANSWER, self.rig.now)
        else:
            assert receiver.fail(sid, -1, "User rejected", None, self.rig.now)
        self.questions.discard(sid)  # answered: closed without a withdrawal
        self.absorb(self.rig.sent())

    @rule(seconds=st.floats(0, 12))
    def time_passes(self, seconds: float) -> None:
        self.rig.advance(seconds)
        self.absorb(self.rig.sent())

    @rule()
    def reconnect(self) -> None:
        self.rig.receiver.session_ended("EOF")
        assert self.rig.sent() == []
        for event in self.rig.events():
            assert isinstance(event, ServerRequestCancelled)
            self.questions.remove(event.request_id)
        assert not self.questions
        self.dropped.update(self.waiting)
        self.waiting.clear()
        for task_id in self.mine:
            task = self.rig.store.get(task_id)
            assert task is None or task.terminal
        self.mine = set()
        self.rig.new_session()

    @invariant()
    def bounded_and_legal(self) -> None:
        store = self.rig.store
        assert len(store) <= store.max_tasks
        for task in store.tasks():
            assert legal_transition(self.stored.get(task.task_id), task.status)
            self.stored[task.task_id] = task.status
        open_work = {t.request_id for t in store.tasks()
                     if t.task_id in self.mine and not t.terminal}
        assert open_work == self.questions
        for rid, task_id in self.waiting.items():
            waited = store.get(task_id)
            assert waited is not None and not waited.terminal, rid

    def teardown(self) -> None:
        self.rig.advance(60.0)  # past every TTL: every waiting tasks/result is answered
        self.absorb(self.rig.sent())
        assert not self.waiting
        assert self.rig.store.tasks() == [] and not self.questions


ReceiverMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_receiver_state_machine = ReceiverMachine.TestCase


@given(st.dictionaries(st.text(max_size=8), st.none() | st.booleans() | st.integers()
                       | st.text(max_size=5) | st.lists(st.integers(), max_size=2),
                       max_size=4))
def test_any_task_metadata_is_answered_once(metadata: dict[str, Any]) -> None:
    rig = Rig()
    [answer] = rig.request("sampling/createMessage", {**SAMPLING, "task": metadata}, rid=1)
    assert answer["id"] == 1
    ttl = metadata.get("ttl")
    valid = ttl is None or (type(ttl) is int and ttl >= 0)
    assert ("result" in answer) is valid
    assert len(rig.store) == int(valid)


# -- through a ClientSession ------------------------------------------------------------------


def receiver_pair(**store_kwargs: Any) -> tuple[Pair, TaskStore]:
    counter = itertools.count(1)
    store = TaskStore(new_id=lambda: f"id{next(counter)}", wall_offset=WALL, **store_kwargs)
    pair = Pair()
    pair.session = ClientSession(CLIENT_INFO, capabilities={"sampling": {}},
                                 task_receiver=store)
    pair.handshake(version="2025-11-25")
    return pair, store


def test_session_declares_and_runs_a_task() -> None:
    pair, store = receiver_pair()
    [init] = [m for m in pair.log if m.get("method") == "initialize"]
    assert init["params"]["capabilities"]["tasks"] == {
        "list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}}
    pair.server_request(1, "sampling/createMessage", {**SAMPLING, "task": {"ttl": 60000}})
    [created] = pair.sent()
    assert created["id"] == 1 and created["result"]["task"]["status"] == "working"
    [event] = pair.events()
    assert isinstance(event, ServerRequest) and event.request_id == "task:id1"
    assert "task" not in event.params
    pair.server_request(2, "tasks/result", {"taskId": "id1"})
    assert pair.sent() == []
    assert pair.session.respond(event.request_id, ANSWER, now=pair.now)
    note, result = pair.sent()
    assert note["method"] == "notifications/tasks/status"
    assert result["id"] == 2
    assert result["result"] == {**ANSWER, "_meta": {RELATED_TASK_KEY: {"taskId": "id1"}}}
    assert isinstance(store.get("id1"), ReceivedTask)


def test_session_cancel_expiry_and_close() -> None:
    pair, store = receiver_pair(default_ttl=10.0)
    pair.server_request(1, "sampling/createMessage", {**SAMPLING, "task": {}})
    pair.server_request(2, "sampling/createMessage", {**SAMPLING, "task": {}})
    pair.server_request(3, "sampling/createMessage", {**SAMPLING, "task": {"ttl": 100000}})
    pair.sent()
    pair.events()
    pair.server_request(4, "tasks/cancel", {"taskId": "id1"})
    _note, cancelled = pair.sent()
    assert cancelled["result"]["status"] == "cancelled"
    assert pair.events() == [ServerRequestCancelled(request_id="task:id1",
                                                    reason="task cancelled")]
    assert not pair.session.respond("task:id1", ANSWER, now=pair.now)
    assert pair.session.respond_error("task:id3", -1, "User rejected")
    pair.sent()
    assert pair.session.next_deadline() == pytest.approx(pair.now + 10.0)
    pair.advance_to_deadline()
    assert pair.events() == [ServerRequestCancelled(request_id="task:id2",
                                                    reason="task expired")]
    assert [t.task_id for t in store.tasks()] == ["id3"]
    pair.session.close()
    tasks = store.tasks()
    assert [t.status for t in tasks] == ["failed"] and tasks[0].error == (-1, "User rejected")


def test_session_end_fails_unfinished_work() -> None:
    pair, store = receiver_pair()
    pair.server_request(1, "sampling/createMessage", {**SAMPLING, "task": {}})
    pair.sent()
    pair.events()
    pair.session.close()
    events = pair.events()
    assert any(isinstance(e, ServerRequestCancelled) and e.request_id == "task:id1"
               for e in events)
    task = store.get("id1")
    assert task is not None and task.status == "failed"
    assert task.status_message is not None and "connection closed" in task.status_message
    assert not pair.session.respond("task:id1", ANSWER)
