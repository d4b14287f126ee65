"""HostCore, pure, with a fake clock: the server state table, stale reports, routing, and a
hypothesis state machine that drives it with any sequence of reports a binding can make."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mcp_proto import LocalProtocolError, Tool
from mcp_proto.host import (
    SERVER_STATES,
    TRANSITIONS,
    ConfigError,
    HostConfig,
    HostCore,
    NamePolicy,
    RestartPolicy,
    ServerSpec,
    ServerUnavailable,
    UnknownTool,
    check_spec,
    dump_config,
    parse_config,
    redact_url,
)

PORTABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,62}$")
POLICY = RestartPolicy(initial_delay=1.0, multiplier=2.0, max_delay=8.0, max_attempts=3,
                       stable_after=10.0)


def tools(*names: str) -> list[Tool]:
    return [Tool(name=n, input_schema={"type": "object"}) for n in names]


def spec(name: str, **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=("srv", name), **fields)


def core(*specs: ServerSpec, **kwargs: Any) -> HostCore:
    kwargs.setdefault("restart", POLICY)
    return HostCore(HostConfig(servers={s.name: s for s in specs}), **kwargs)


def run(c: HostCore, name: str, now: float, *names: str) -> int:
    incarnation = c.begin_start(name, now)
    c.start_succeeded(name, incarnation, now, tools(*names))
    return incarnation


# -- the table ------------------------------------------------------------------------------


def test_every_state_has_a_way_out_and_illegal_moves_raise() -> None:
    for state in SERVER_STATES:
        assert any(s == state for s, _ in TRANSITIONS), state
        assert (state, "stop") in TRANSITIONS
    assert ("running", "start") not in TRANSITIONS
    assert ("disabled", "start") not in TRANSITIONS
    c = core(spec("a"))
    run(c, "a", 0.0, "t")
    with pytest.raises(LocalProtocolError, match="cannot start while running"):
        c.begin_start("a", 1.0)
    with pytest.raises(LocalProtocolError, match="no server is named"):
        c.begin_start("nope", 1.0)


def test_first_start_failure_is_failed_but_a_crash_after_ready_backs_off() -> None:
    c = core(spec("a"), spec("b"))
    assert c.due(0.0) == ["a", "b"]
    ia = c.begin_start("a", 0.0)
    ib = c.begin_start("b", 0.0)
    c.exited("a", ia, 0.5, "ConnectionClosed: no such file", "")
    assert c.state("a") == "failed"  # nothing to retry: the spec is wrong
    c.start_succeeded("b", ib, 0.5, tools("t"))
    c.exited("b", ib, 3.0, "ServerExited: code 1", "boom\n")
    assert c.state("b") == "backoff"
    assert c.next_deadline() == 4.0
    assert c.due(3.9) == [] and c.due(4.0) == ["b"]
    status = c.status(3.5)["b"]
    assert (status.attempts, status.next_start_at, status.stderr_tail) == (1, 4.0, "boom\n")
    # a scheduled restart that fails to start counts as the next failure, not as "failed"
    ib = c.begin_start("b", 4.0)
    c.exited("b", ib, 4.1, "ServerExited: code 1", "")
    assert c.state("b") == "backoff" and c.next_deadline() == 4.1 + 2.0
    ib = c.begin_start("b", 6.1)
    c.exited("b", ib, 6.2, "ServerExited: code 1", "")
    assert c.state("b") == "failed" and c.next_deadline() is None
    events = [(e.server, e.previous, e.state) for e in c.drain_events()]
    assert events[:3] == [("a", "stopped", "starting"), ("b", "stopped", "starting"),
                          ("a", "starting", "failed")]
    assert events[-1] == ("b", "starting", "failed")
    assert c.drain_events() == []


def test_reports_about_an_old_run_are_ignored() -> None:
    c = core(spec("a"))
    old = run(c, "a", 0.0, "t")
    c.stop("a", 1.0)
    new = run(c, "a", 1.0, "t", "u")
    assert new != old
    c.exited("a", old, 2.0, "late exit of the old process")
    c.tools_listed("a", old, tools())
    c.tools_changed("a", old)
    assert c.state("a") == "running"
    assert [t.name for t in c.tools()] == ["a__t", "a__u"]
    assert c.stale() == []


def test_no_restart_policy_means_failed_on_exit() -> None:
    c = core(spec("a"), restart=None)
    i = run(c, "a", 0.0, "t")
    c.exited("a", i, 1.0, "gone")
    assert c.state("a") == "failed" and c.next_deadline() is None


def test_per_server_policy_overrides_the_hosts() -> None:
    c = core(spec("a", restart=RestartPolicy(initial_delay=5.0)))
    i = run(c, "a", 0.0, "t")
    c.exited("a", i, 1.0, "gone")
    assert c.next_deadline() == 6.0


# -- routing -----------------------------------------------------------------------------------


def test_route_running_backoff_and_failed() -> None:
    c = core(spec("a", timeout=5.0), spec("b"), timeout=30.0)
    ia = run(c, "a", 0.0, "echo")
    run(c, "b", 0.0, "echo")
    r = c.route("a__echo", now=1.0)
    assert (r.server, r.tool, r.wait_until, r.deadline) == ("a", "echo", None, 6.0)
    assert c.route("b__echo", now=1.0).deadline == 31.0
    assert c.route("b__echo", now=1.0, timeout=2.0).deadline == 3.0
    c.exited("a", ia, 2.0, "ServerExited: code 9")  # backoff until 3.0
    r = c.route("a__echo", now=2.5)
    assert r.wait_until == 3.0 and r.deadline == 7.5
    with pytest.raises(ServerUnavailable) as info:
        c.route("a__echo", now=2.5, timeout=0.1)
    assert (info.value.state, info.value.retry_at) == ("backoff", 3.0)
    assert "code 9" in str(info.value)
    # starting: wait until the deadline (the binding is woken by the change)
    ia = c.begin_start("a", 3.0)
    assert c.route("a__echo", now=3.0, deadline=4.0).wait_until == 4.0
    with pytest.raises(ServerUnavailable, match="starting"):
        c.route("a__echo", now=4.0, deadline=4.0)
    c.disable("a", 4.0)
    with pytest.raises(UnknownTool):
        c.route("a__echo", now=4.0)


def test_unknown_names_list_close_matches_and_filters_hide_tools() -> None:
    c = core(spec("git", exclude_tools=("git_reset*",)), spec("time", include_tools=("get_*",)))
    run(c, "git", 0.0, "git_status", "git_reset", "git_reset_hard", "git_log")
    run(c, "time", 0.0, "get_current_time", "convert_time")
    assert [t.name for t in c.tools()] == ["git__git_log", "git__git_status",
                                          "time__get_current_time"]
    with pytest.raises(UnknownTool) as info:
        c.route("git__git_stat", now=1.0)
    assert "git__git_status" in info.value.close_matches
    with pytest.raises(UnknownTool):
        c.route("git__git_reset", now=1.0)
    assert c.status(1.0)["git"].tools == 2


def test_add_replace_enable_disable_remove_and_the_config_follows() -> None:
    c = core(spec("a"), max_servers=2)
    run(c, "a", 0.0, "t")
    c.add(spec("b", enabled=False), 1.0)
    assert c.state("b") == "disabled" and c.due(1.0) == []
    with pytest.raises(ConfigError, match="exists"):
        c.add(spec("a"), 1.0)
    with pytest.raises(ConfigError, match="at most 2"):
        c.add(spec("c"), 1.0)
    c.enable("b", 2.0)
    assert c.config.servers["b"].enabled and c.due(2.0) == ["b"]
    old = c.replace(spec("a", timeout=3.0), 3.0)
    assert old.timeout is None and c.state("a") == "stopped"
    assert c.config.servers["a"].timeout == 3.0
    assert [t.name for t in c.tools()] == []  # the old run's tools are gone with it
    c.disable("a", 4.0)
    assert not c.config.servers["a"].enabled
    assert c.remove("a").name == "a"
    assert list(c.config.servers) == ["b"]
    with pytest.raises(LocalProtocolError):
        c.remove("a")


def test_too_many_servers_in_a_config() -> None:
    with pytest.raises(ConfigError, match="over the host's limit of 2"):
        core(spec("a"), spec("b"), spec("c"), max_servers=2)


# -- any sequence of reports ---------------------------------------------------------------------


NAMES = ("a", "b", "c.d")
#: Every (from, to) pair the table allows, plus a server added disabled.
_MOVES = {(s, t) for (s, _), t in TRANSITIONS.items()} | {("stopped", "disabled")}


class HostMachine(RuleBasedStateMachine):
    """Drives HostCore the way a binding may: starts when due (or by hand), successes,
    failures, exits, list changes, edits, with the clock moving forward; checks the
    invariants after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.core = core(*(spec(n) for n in NAMES), names=NamePolicy())
        self.incarnations: dict[str, int] = {}

    @rule(dt=st.floats(0, 20))
    def tick(self, dt: float) -> None:
        self.now += dt

    @rule()
    def start_due(self) -> None:
        for name in self.core.due(self.now):
            self.incarnations[name] = self.core.begin_start(name, self.now)

    @rule(name=st.sampled_from(NAMES), tool_names=st.lists(
        st.sampled_from(["echo", "x__y", "read.file", "echo"]), max_size=4))
    def succeed(self, name: str, tool_names: list[str]) -> None:
        if name in self.incarnations:
            self.core.start_succeeded(name, self.incarnations[name], self.now,
                                      tools(*tool_names))

    @rule(name=st.sampled_from(NAMES), stale=st.booleans())
    def exit(self, name: str, stale: bool) -> None:
        if name in self.incarnations:
            incarnation = self.incarnations[name] - (1 if stale else 0)
            self.core.exited(name, incarnation, self.now, "gone", "tail")

    @rule(name=st.sampled_from(NAMES))
    def list_changed(self, name: str) -> None:
        if name in self.incarnations:
            self.core.tools_changed(name, self.incarnations[name])
            self.core.tools_listed(name, self.incarnations[name], tools("echo", "new"))

    @rule(name=st.sampled_from(NAMES))
    def disable(self, name: str) -> None:
        self.core.disable(name, self.now)

    @rule(name=st.sampled_from(NAMES))
    def enable(self, name: str) -> None:
        self.core.enable(name, self.now)

    @rule(name=st.sampled_from(NAMES))
    def restart_by_hand(self, name: str) -> None:
        if self.core.state(name) != "disabled":
            self.core.stop(name, self.now)
            self.incarnations[name] = self.core.begin_start(name, self.now)

    @rule(public=st.sampled_from(["a__echo", "b__new", "c_d__echo", "nope"]),
          timeout=st.floats(0, 30))
    def route(self, public: str, timeout: float) -> None:
        try:
            r = self.core.route(public, now=self.now, timeout=timeout)
        except (UnknownTool, ServerUnavailable):
            return
        state = self.core.state(r.server)
        assert state in ("running", "starting", "backoff")
        assert (r.wait_until is None) == (state == "running")
        if r.wait_until is not None:
            assert self.now <= r.wait_until <= r.deadline

    @invariant()
    def consistent(self) -> None:
        c = self.core
        status = c.status(self.now)
        deadline = c.next_deadline()
        backoff = [s.next_start_at for s in status.values() if s.state == "backoff"]
        assert deadline == (min(backoff) if backoff else None)  # type: ignore[type-var]
        for s in status.values():
            assert s.state in SERVER_STATES
            assert s.attempts <= POLICY.max_attempts
            assert (s.next_start_at is not None) == (s.state == "backoff")
        public = [t.name for t in c.tools()]
        assert len(public) == len(set(public))
        for t in c.tools():
            assert PORTABLE.match(t.name)
            assert status[t.server].state in ("running", "backoff", "starting")
            assert c.tool_names().resolve(t.name) == (t.server, t.tool)
        for event in c.drain_events():
            assert event.previous != event.state  # only real moves are reported
            assert (event.previous, event.state) in _MOVES


TestHostMachine = HostMachine.TestCase
TestHostMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


# -- found in review ----------------------------------------------------------------------------


def test_incarnations_never_repeat_across_remove_and_add() -> None:
    c = core(spec("s"))
    first = c.begin_start("s", 0.0)
    c.remove("s")
    c.add(spec("s"), 1.0)
    second = c.begin_start("s", 1.0)
    assert second != first
    c.exited("s", first, 2.0, "the removed run's late exit")
    assert c.state("s") == "starting"


def test_the_last_listing_stays_while_a_server_restarts() -> None:
    c = core(spec("s"))
    i = run(c, "s", 0.0, "echo")
    c.exited("s", i, 1.0, "gone")
    assert c.state("s") == "backoff" and [t.name for t in c.tools()] == ["s__echo"]
    c.begin_start("s", 2.0)
    assert c.state("s") == "starting" and [t.name for t in c.tools()] == ["s__echo"]


def test_list_changed_while_starting_is_listed_once_running() -> None:
    c = core(spec("s"))
    i = c.begin_start("s", 0.0)
    c.tools_changed("s", i)
    assert c.stale() == [] and not c.has_stale
    c.start_succeeded("s", i, 0.1, tools("a"))
    assert c.stale() == [("s", i)] and c.has_stale
    c.listing_failed("s", i)
    assert c.stale() == [] and [t.name for t in c.tools()] == ["s__a"]


def test_a_call_that_waited_is_not_sent_at_its_deadline() -> None:
    c = core(spec("s"))
    i = c.begin_start("s", 0.0)
    c.start_succeeded("s", i, 0.0, tools("a"))
    assert c.route("s__a", now=0.0, timeout=1.0).wait_until is None
    with pytest.raises(ServerUnavailable, match="too close to the call's deadline"):
        c.route("s__a", now=0.98, deadline=1.0)  # it waited: 20 ms left is too little
    assert c.route("s__a", now=0.9, deadline=1.0).deadline == 1.0


def test_specs_built_in_code_are_checked() -> None:
    problems = check_spec(ServerSpec(name="x", transport="http", url="ftp://h/x"))
    assert [p.field for p in problems] == ["url"]
    assert check_spec(ServerSpec(name="x", transport="sse", url="https://u:p@h/")) != []
    assert check_spec(ServerSpec(name="x", command=(" ",))) != []
    assert check_spec(ServerSpec(name="x", command=("a",), timeout=-1)) != []
    assert check_spec(ServerSpec(name="x", command=("a",), timeout=5)) == []
    with pytest.raises(ConfigError, match="needs a command"):
        core(ServerSpec(name="x"))
    c = core(spec("s"))
    with pytest.raises(ConfigError):
        c.replace(ServerSpec(name="s", transport="http"), 0.0)


def test_an_edited_spec_forgets_the_templates_of_what_changed() -> None:
    text = ('{"mcpServers": {"s": {"command": "old-server", "args": ["--token", "${T}"], '
            '"env": {"K": "${T}", "KEEP": "${U}"}}}}')
    config = parse_config(text, dialect="claude-code", env={"T": "tv", "U": "uv"})
    old = config.servers["s"]
    new = old.edited(command=("new-server",), env={"K": "literal", "KEEP": "uv"})
    dumped = json.loads(dump_config(HostConfig(servers={"s": new}, dialect="claude-code")))
    assert dumped["mcpServers"]["s"]["command"] == "new-server"
    assert dumped["mcpServers"]["s"]["env"] == {"K": "literal", "KEEP": "${U}"}
    # the core does the same for a dataclasses.replace copy given to replace()
    c = HostCore(config, restart=POLICY)
    c.replace(dataclasses.replace(old, env={"K": "x", "KEEP": "uv"}), 0.0)
    assert c.config.servers["s"].templates["env"] == {"KEEP": "${U}"}
    assert c.config.servers["s"].templates["command"] == old.templates["command"]


def test_urls_are_redacted_in_reprs_and_messages() -> None:
    s = ServerSpec(name="w", transport="http", url="https://h/mcp?api_key=LITERAL9&x=1")
    assert "LITERAL9" not in repr(s) and "api_key=<redacted>" in repr(s)
    assert redact_url("see http://user:pw@h/p?a=1#f") == "see http://<redacted>@h/p?a=<redacted>#f"
