"""ClientSession in the 2026-07-28 stateless era, against the in-memory fake server.

Each test names the rule it checks (spec-checklist ids: V- section 2, M- section 3.3, S-
section 5.1, MR- section 7, SB- section 8; "2.3" is the dual-era probe table).  No sleeps:
the clock is the pair's fake one.  Every line the client writes is validated by the pair
against the 2026-07-28 schema (or 2025-11-25 for the handshake-era fallback) when the schema is
on disk.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from mcp_proto import (
    TASKS_EXTENSION,
    BadMessage,
    CallToolResult,
    Closed,
    Completed,
    ConnectionClosed,
    Failed,
    GetPromptResult,
    HeaderMismatch,
    Limits,
    ListChanged,
    LocalProtocolError,
    LogMessage,
    MissingClientCapability,
    Progress,
    ReadResourceResult,
    Ready,
    RemoteProtocolError,
    RequestCancelled,
    RequestHandle,
    RequestTimeout,
    ResourceUpdated,
    RpcError,
    ServerExited,
    ServerRequest,
    ServerRequestCancelled,
    State,
    SubscriptionEnded,
    Tool,
    UnsupportedProtocolVersion,
    UnsupportedVersion,
    client_capabilities,
)
from mcp_proto.session._modern import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SUBSCRIPTION_ID_KEY,
    Discovered,
)
from tests.conftest import in_ci
from tests.fake_server import (
    CLIENT_INFO,
    DEFAULT_SERVER_CAPS,
    MODERN_SCHEMA_VERSION,
    SERVER_INFO,
    JSONObj,
    Pair,
    assert_valid_client_message,
    discover_result,
    modern_pair,
    schema_available,
    schema_path,
)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TOOL = {"name": "t", "inputSchema": {"type": "object"}}
URI = "file:///project/config.json"
ELICIT_PARAMS = {"message": "name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}}}
ELICIT_ANSWER = {"action": "accept", "content": {"name": "octocat"}}
SAMPLING_PARAMS = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "maxTokens": 10}
SAMPLING_ANSWER = {"role": "assistant", "content": {"type": "text", "text": "hello"},
                   "model": "m"}
BOTH = client_capabilities(elicitation=True, sampling=True)


# -- helpers ---------------------------------------------------------------------------------


def need_modern_schema() -> None:
    """Skip without the 2026-07-28 schema locally; fail under CI, where it must be present."""
    if not schema_available(MODERN_SCHEMA_VERSION):
        message = "the 2026-07-28 schema.json (../shared/spec) or jsonschema is missing"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def example(definition: str, name: str | None = None) -> Any:
    """An official example from the 2026-07-28 spec (``examples/<definition>/``)."""
    path = schema_path(MODERN_SCHEMA_VERSION)
    folder = path.parent / "examples" / definition if path is not None else None
    if folder is None or not folder.is_dir():
        need_modern_schema()  # skips (or fails under CI)
        pytest.skip(f"no 2026-07-28 examples for {definition}")
    files = sorted(folder.glob("*.json")) if name is None else [folder / name]
    return json.loads(Path(files[0]).read_text("utf-8"))


def complete(result: JSONObj | None = None) -> JSONObj:
    return {"resultType": "complete", **(result or {})}


def text_result(text: str = "ok") -> JSONObj:
    return complete({"content": [{"type": "text", "text": text}]})


def legacy_init_result() -> JSONObj:
    return {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}


def meta_of(request: JSONObj) -> JSONObj:
    meta = request["params"]["_meta"]
    assert isinstance(meta, dict)
    return meta


def methods(messages: list[JSONObj]) -> list[str | None]:
    return [m.get("method") for m in messages]


def one(pair: Pair) -> Any:
    events = pair.events()
    assert len(events) == 1, events
    return events[0]


def probing_pair(**kwargs: Any) -> tuple[Pair, RequestHandle, JSONObj]:
    pair = Pair(**kwargs)
    handle = pair.session.start(now=pair.now)
    probe = pair.sent_one()
    assert probe["method"] == "server/discover"
    return pair, handle, probe


def fallen_back(pair: Pair) -> JSONObj:
    """The one ``initialize`` the client sent, checked against the handshake era."""
    init = pair.sent_one()
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == LEGACY
    return init


def finish_legacy(pair: Pair, handle: RequestHandle, init: JSONObj) -> Ready:
    pair.reply(init, legacy_init_result())
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    ready = one(pair)
    assert isinstance(ready, Ready)
    assert ready.era == "legacy" and ready.handle == handle
    assert pair.session.era == "legacy" and pair.session.state is State.READY
    return ready


def call(pair: Pair, name: str = "t", arguments: JSONObj | None = None,
         **kwargs: Any) -> tuple[RequestHandle, JSONObj]:
    handle = pair.session.call_tool(name, arguments, now=pair.now, **kwargs)
    request = pair.sent_one()
    assert request["method"] == "tools/call" and request["id"] == handle.id
    return handle, request


def tools_pair(**kwargs: Any) -> Pair:
    """Modern and Ready, tools without listChanged: no listen stream, nothing else on the
    wire."""
    pair = modern_pair(server_caps={"tools": {}}, **kwargs)
    assert pair.listen is None
    return pair


def gather(pair: Pair, result: JSONObj, **kwargs: Any
           ) -> tuple[RequestHandle, JSONObj, dict[str, ServerRequest]]:
    """tools/call answered with ``result`` (input_required): the ServerRequests by key."""
    handle, request = call(pair, "get_weather", {"location": "New York"}, **kwargs)
    pair.reply(request, result)
    events = pair.events()
    assert all(isinstance(e, ServerRequest) for e in events), events
    assert pair.sent() == []  # nothing until every input is answered
    by_method = {e.method: e for e in events}
    return handle, request, by_method


def input_required(requests: JSONObj | None = None, state: str | None = None) -> JSONObj:
    result: JSONObj = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


# -- 2.3: the probe --------------------------------------------------------------------------


def test_v12_discover_result_makes_a_modern_ready_session() -> None:
    result = example("DiscoverResult")
    pair, handle, probe = probing_pair()
    assert meta_of(probe)[PROTOCOL_VERSION_KEY] == MODERN
    pair.reply(probe, result)
    ready = one(pair)
    assert isinstance(ready, Ready)
    assert ready.era == "modern" and ready.protocol_version == MODERN
    assert ready.handle == handle
    assert ready.server_info.name == "ExampleServer"  # M-02: from the result's _meta
    assert ready.capabilities == result["capabilities"]
    assert ready.instructions == result["instructions"]
    s = pair.session
    assert s.state is State.READY and s.era == "modern" and s.protocol_version == MODERN
    assert s.discovered is not None and s.discovered.supported_versions == (MODERN,)
    pair.advance(10.0)  # well past probe_fallback: the handshake is never tried
    assert pair.sent() == [] and pair.events() == []
    assert "initialize" not in methods(pair.log)


def test_v11_probe_answered_32022_with_a_mutual_version_is_retried_once_with_a_new_id() -> None:
    pair, _handle, probe = probing_pair()
    pair.reply_error(probe, -32022, "Unsupported protocol version",
                     {"supported": [MODERN, LEGACY], "requested": MODERN})
    retry = pair.sent_one()
    assert retry["method"] == "server/discover" and retry["id"] != probe["id"]
    assert meta_of(retry)[PROTOCOL_VERSION_KEY] == MODERN
    assert pair.events() == []
    pair.advance(5.0)  # a recognised modern error: no fallback to initialize (2.3)
    assert pair.sent() == [] and pair.events() == []
    pair.reply(retry, discover_result(capabilities={}))
    ready = one(pair)
    assert isinstance(ready, Ready) and ready.era == "modern"
    assert "initialize" not in methods(pair.log)


def test_v11_second_32022_on_the_probe_is_not_retried_again() -> None:
    pair, handle, probe = probing_pair()
    data = {"supported": [MODERN], "requested": MODERN}
    pair.reply_error(probe, -32022, "Unsupported protocol version", data)
    retry = pair.sent_one()
    pair.reply_error(retry, -32022, "Unsupported protocol version", data)
    assert pair.sent() == []
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, UnsupportedVersion)
    assert isinstance(closed, Closed) and pair.session.state is State.CLOSED


def test_2_3_probe_32022_with_only_a_legacy_version_in_common_falls_back_to_initialize() -> None:
    pair, handle, probe = probing_pair()
    pair.reply_error(probe, -32022, "Unsupported protocol version",
                     {"supported": ["2099-01-01", LEGACY], "requested": MODERN})
    init = fallen_back(pair)
    assert pair.events() == []
    finish_legacy(pair, handle, init)


def test_2_3_probe_32022_with_nothing_in_common_fails_the_session() -> None:
    pair, handle, probe = probing_pair()
    pair.reply_error(probe, -32022, "Unsupported protocol version",
                     {"supported": ["2099-01-01"], "requested": MODERN})
    assert pair.sent() == []
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, UnsupportedVersion)
    assert isinstance(closed, Closed)


@pytest.mark.parametrize(("code", "data"), [
    (-32601, None),
    (-32602, {"supported": [LEGACY]}),  # a handshake-era "unsupported version" shape
    (-32600, None),
    (-32001, None),  # V-22: pre-GA HeaderMismatch
    (-32003, None),  # V-22: pre-GA MissingRequiredClientCapability
    (-32004, {"supported": [MODERN], "requested": MODERN}),  # V-22: pre-GA Unsupported...
])
def test_2_3_any_other_probe_error_falls_back_to_initialize(code: int, data: Any) -> None:
    pair, handle, probe = probing_pair()
    pair.reply_error(probe, code, "no", data)
    init = fallen_back(pair)  # exactly one, at once
    assert pair.events() == [] and pair.session.state is State.INITIALIZING
    pair.advance(5.0)  # the fallback timer is gone: no second initialize
    assert pair.sent() == []
    finish_legacy(pair, handle, init)


def test_2_3_invalid_discover_result_falls_back_to_initialize() -> None:
    pair, handle, probe = probing_pair()
    pair.reply(probe, {"resultType": "complete", "supportedVersions": "2026-07-28"})
    finish_legacy(pair, handle, fallen_back(pair))


def test_2_3_silent_probe_sends_initialize_after_probe_fallback_and_handshake_wins() -> None:
    pair, handle, probe = probing_pair(limits=Limits(probe_fallback=2.0))
    start = pair.now
    assert pair.session.next_deadline() == start + 2.0
    pair.advance(1.999)
    assert pair.sent() == [] and pair.session.state is State.PROBING
    pair.advance_to_deadline()
    init = fallen_back(pair)
    assert pair.session.state is State.PROBING  # both opening requests are in flight
    finish_legacy(pair, handle, init)
    dropped = pair.session.stats.responses_dropped
    pair.reply(probe, discover_result())  # the loser's late answer
    assert pair.session.stats.responses_dropped == dropped + 1
    assert pair.events() == [] and pair.sent() == []
    assert pair.session.era == "legacy"


def test_2_3_silent_probe_then_discover_answers_first_and_wins() -> None:
    pair, handle, probe = probing_pair()
    pair.advance_to_deadline()  # default probe_fallback
    init = fallen_back(pair)
    pair.reply(probe, discover_result(capabilities={"tools": {}}))
    ready = one(pair)
    assert isinstance(ready, Ready) and ready.era == "modern" and ready.handle == handle
    assert pair.sent() == []
    dropped = pair.session.stats.responses_dropped
    pair.reply(init, legacy_init_result())  # late: no notifications/initialized
    assert pair.session.stats.responses_dropped == dropped + 1
    assert pair.sent() == [] and pair.events() == []
    assert pair.session.era == "modern" and pair.session.pending_count == 0


#: An opening's timeout shorter than a modern server's start (say mcp-server-time's imports)
#: but longer than the probe fallback: the handshake is sent, and outlives the probe's own.
SLOW_OPEN = 0.6
SLOW_FALLBACK = 0.5


def _slow_start() -> tuple[Pair, RequestHandle, JSONObj, JSONObj]:
    """A probe, the fallback initialize at SLOW_FALLBACK, then the clock past the probe's own
    deadline (SLOW_OPEN) and short of the handshake's: a server still starting."""
    pair = Pair(limits=Limits(probe_fallback=SLOW_FALLBACK))
    start = pair.now
    handle = pair.session.start(now=start, timeout=SLOW_OPEN)
    probe = pair.sent_one()
    pair.advance(SLOW_FALLBACK)
    init = fallen_back(pair)
    # One deadline for both: the handshake's (the probe's is moved to it, not past it).
    assert pair.session.next_deadline() == start + SLOW_FALLBACK + SLOW_OPEN
    pair.advance(SLOW_OPEN - SLOW_FALLBACK + 0.05)  # past the probe's own deadline
    assert pair.events() == [] and pair.sent() == []
    assert pair.session.state is State.PROBING  # the era is still open
    return pair, handle, probe, init


@pytest.mark.parametrize("first", ["discover result", "initialize refused"])
def test_2_3_a_modern_server_slower_than_the_probe_timeout_still_wins(first: str) -> None:
    """The probe waits as long as the handshake sent after it: a modern server that was slow
    to start answers the probe it read first and the session is modern, whether its
    ``-32022`` refusal of the initialize comes before the discover result or not (an SDK
    server answers both; before, the probe timed out alone and the opening failed with that
    refusal, a misleading RpcError)."""
    pair, handle, probe, init = _slow_start()
    if first == "initialize refused":
        pair.reply_error(init, -32022, "connection is serving the 2026-07-28 protocol",
                         {"supported": [MODERN], "requested": LEGACY})
        assert pair.events() == [] and pair.sent() == []
    pair.reply(probe, discover_result(capabilities={"tools": {}}))
    ready = one(pair)
    assert isinstance(ready, Ready) and ready.era == "modern" and ready.handle == handle
    assert pair.session.pending_count == 0


def test_2_3_a_server_that_answers_neither_in_time_fails_with_the_timeout() -> None:
    """At the handshake's deadline (the probe's too) the opening fails with the timeout of
    the ``timeout`` given, and the session closes; nothing is left to fire."""
    pair, handle, _probe, _init = _slow_start()
    pair.advance_to_deadline()
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout), failed.error
    assert (failed.error.kind, failed.error.timeout) == ("total", SLOW_OPEN)
    assert isinstance(closed, Closed) and pair.session.state is State.CLOSED
    assert pair.session.next_deadline() is None


def test_2_3_a_handshake_refused_as_modern_then_a_silent_probe_fails_with_the_timeout() -> None:
    """The initialize refused with a -32022 naming a 2026-07-28 version says the server is
    modern: when its probe then goes unanswered the opening fails with the probe's timeout,
    not with that refusal (which says nothing of the time the server had)."""
    pair, handle, _probe, init = _slow_start()
    pair.reply_error(init, -32022, "connection is serving the 2026-07-28 protocol",
                     {"supported": [MODERN], "requested": LEGACY})
    assert pair.events() == []
    pair.advance_to_deadline()
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout) \
        and failed.error.method == "server/discover", failed.error
    assert isinstance(closed, Closed)


def test_2_3_a_handshake_refused_otherwise_keeps_its_own_error() -> None:
    """A -32022 that names no 2026-07-28 version (or any other refusal) is the handshake's
    own failure, and the opening ends with it when the probe goes unanswered."""
    pair, _handle, _probe, init = _slow_start()
    pair.reply_error(init, -32022, "Unsupported protocol version",
                     {"supported": ["2024-11-05"], "requested": LEGACY})
    pair.advance_to_deadline()
    failed, _closed = pair.events()
    assert isinstance(failed.error, RpcError) and failed.error.code == -32022, failed.error


def test_v11_the_retried_probe_keeps_the_opening_deadline() -> None:
    """A probe answered -32022 after the fallback is retried (V-11) within the opening's
    deadline, not a new ``timeout`` from the retry."""
    pair, _handle, probe, init = _slow_start()
    deadline = pair.session.next_deadline()
    pair.reply_error(init, -32022, "connection is serving the 2026-07-28 protocol",
                     {"supported": [MODERN], "requested": LEGACY})
    pair.reply_error(probe, -32022, "Unsupported protocol version",
                     {"supported": [MODERN], "requested": MODERN})
    retry = pair.sent_one()
    assert retry["method"] == "server/discover" and retry["id"] != probe["id"]
    assert pair.session.next_deadline() == deadline


def test_2_3_a_clock_that_comes_late_lets_the_due_probe_expire() -> None:
    """The first look at the clock long after both the fallback time and the probe's deadline
    sends the initialize and lets the probe expire (it is not given the handshake's time):
    its late answer is dropped and the handshake decides."""
    pair = Pair(limits=Limits(probe_fallback=SLOW_FALLBACK))
    handle = pair.session.start(now=pair.now, timeout=SLOW_OPEN)
    probe = pair.sent_one()
    pair.advance(5.0)
    init = fallen_back(pair)
    assert pair.session.state is State.INITIALIZING and pair.events() == []
    dropped = pair.session.stats.responses_dropped
    pair.reply(probe, discover_result())
    assert pair.session.stats.responses_dropped == dropped + 1 and pair.events() == []
    finish_legacy(pair, handle, init)


def test_2_3_probe_error_after_the_parallel_initialize_sends_no_second_one() -> None:
    pair, handle, probe = probing_pair()
    pair.advance_to_deadline()
    init = fallen_back(pair)
    pair.reply_error(probe, -32601, "Method not found")
    assert pair.sent() == [] and pair.events() == []
    finish_legacy(pair, handle, init)


@pytest.mark.parametrize("order", ["probe first", "initialize first", "sequential"])
def test_2_3_probe_and_handshake_both_failing_fails_and_closes(order: str) -> None:
    pair, handle, probe = probing_pair()
    if order == "sequential":
        pair.reply_error(probe, -32601, "Method not found")
        init = fallen_back(pair)
        pair.reply_error(init, -32603, "broken")
    else:
        pair.advance_to_deadline()
        init = fallen_back(pair)
        if order == "probe first":
            pair.reply_error(probe, -32601, "Method not found")
            assert pair.events() == []
            pair.reply_error(init, -32603, "broken")
        else:
            pair.reply_error(init, -32603, "broken")
            assert pair.events() == []
            pair.reply_error(probe, -32601, "Method not found")
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError)
    assert isinstance(closed, Closed)
    assert pair.session.state is State.CLOSED and pair.sent() == []


def test_v23_transport_ending_while_probing_reports_probe_killed_server() -> None:
    pair, handle, _probe = probing_pair()
    pair.session.receive_eof()
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ConnectionClosed) and isinstance(closed, Closed)
    assert pair.session.probe_killed_server is True


def test_v23_death_after_refusing_the_probe_is_a_probe_death() -> None:
    """V-23: a server that answers the probe with an error and then exits (before the
    handshake finished) died of the probe as much as one that exits silently."""
    pair, _handle, probe = probing_pair()
    pair.reply_error(probe, -32601, "Method not found")
    fallen_back(pair)
    pair.session.connection_lost(ServerExited(1))
    assert pair.session.probe_killed_server is True


def test_v23_death_after_ready_or_when_modern_only_is_not_a_probe_death() -> None:
    ready = modern_pair()
    ready.session.receive_eof()
    assert ready.session.probe_killed_server is False
    pinned = Pair()
    pinned.session.start(now=pinned.now, era="modern")  # nothing to restart it in
    pinned.sent()
    pinned.session.receive_eof()
    assert pinned.session.probe_killed_server is False


def test_2_3_era_legacy_sends_no_probe() -> None:
    pair = Pair()
    handle = pair.session.start(now=pair.now, era="legacy")
    init = fallen_back(pair)
    assert "server/discover" not in methods(pair.log)
    finish_legacy(pair, handle, init)


def test_2_3_only_legacy_versions_send_no_probe() -> None:
    pair = Pair(versions=(LEGACY,))
    handle = pair.session.start(now=pair.now)
    finish_legacy(pair, handle, fallen_back(pair))


def test_2_3_era_modern_sends_no_parallel_initialize() -> None:
    pair = Pair()
    pair.session.start(now=pair.now, era="modern")
    probe = pair.sent_one()
    assert probe["method"] == "server/discover"
    # The only deadline is the probe's own (idle_timeout), not probe_fallback.
    assert pair.session.next_deadline() == pair.now + Limits().idle_timeout
    pair.advance(Limits().probe_fallback * 4)
    assert pair.sent() == [] and pair.events() == []


def test_2_3_era_modern_never_falls_back_on_an_error() -> None:
    pair = Pair()
    handle = pair.session.start(now=pair.now, era="modern")
    probe = pair.sent_one()
    pair.reply_error(probe, -32601, "Method not found")
    assert "initialize" not in methods(pair.sent())
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(closed, Closed)


def test_2_3_modern_only_client_never_falls_back() -> None:
    pair, handle, probe = probing_pair(versions=(MODERN,))
    assert pair.session.next_deadline() == pair.now + Limits().idle_timeout  # no fallback timer
    pair.reply_error(probe, -32601, "Method not found")
    assert pair.sent() == []
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError) and failed.error.code == -32601
    assert isinstance(closed, Closed)


def test_v20_start_with_a_fresh_remembered_discovery_is_ready_with_nothing_sent() -> None:
    first = tools_pair()
    discovered = first.session.discovered
    assert discovered is not None
    discovered = dataclasses.replace(discovered, expires_at=first.now + 60)  # still fresh
    pair = Pair(now=first.now)
    handle = pair.session.start(now=pair.now, discovered=discovered)
    assert pair.session.data_to_send() == b""
    ready = one(pair)
    assert isinstance(ready, Ready) and ready.handle == handle
    assert ready.era == "modern" and ready.protocol_version == MODERN
    assert ready.server_info.name == SERVER_INFO["name"]
    _h, request = call(pair)  # and usable at once
    assert meta_of(request)[PROTOCOL_VERSION_KEY] == MODERN


def test_v20_remembered_discovery_with_list_changes_only_opens_the_listen() -> None:
    first = modern_pair()
    assert first.session.discovered is not None
    fresh = dataclasses.replace(first.session.discovered, expires_at=first.now + 60)
    pair = Pair(now=first.now)
    pair.session.start(now=pair.now, discovered=fresh)
    assert methods(pair.sent()) == ["subscriptions/listen"]
    assert isinstance(one(pair), Ready)


def test_s02_stale_remembered_discovery_is_refreshed_without_waiting() -> None:
    """S-02 + V-20: Ready at once from the remembered answer, a refresh in the background;
    its answer updates the capabilities and no second Ready is emitted."""
    first = tools_pair()
    assert first.session.discovered is not None  # ttlMs absent: stale at once
    pair = Pair(now=first.now)
    pair.session.start(now=pair.now, discovered=first.session.discovered)
    assert isinstance(one(pair), Ready)
    [refresh] = pair.sent()
    assert refresh["method"] == "server/discover"
    pair.reply(refresh, discover_result(capabilities={"tools": {}, "prompts": {}}))
    assert pair.events() == [] and pair.session.state is State.READY
    assert "prompts" in pair.session.server_capabilities


def test_v20_refresh_answered_as_a_legacy_server_ends_the_session() -> None:
    """V-20: "re-probe if the assumption fails": the session closes and says so."""
    first = tools_pair()
    assert first.session.discovered is not None
    pair = Pair(now=first.now)
    pair.session.start(now=pair.now, discovered=first.session.discovered)
    one(pair)
    [refresh] = pair.sent()
    handle, _request = call(pair)
    pair.reply_error(refresh, -32601, "Method not found")
    assert pair.session.era_assumption_failed is True
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(closed, Closed) and pair.session.state is State.CLOSED


def test_v20_remembered_discovery_without_a_mutual_version_probes() -> None:
    stale = Discovered(supported_versions=("2099-01-01",), capabilities={},
                       server_info=CLIENT_INFO)
    pair = Pair()
    pair.session.start(now=pair.now, discovered=stale)
    assert methods(pair.sent()) == ["server/discover"]
    assert pair.events() == []


# -- M-01 / V-10: _meta on every request ------------------------------------------------------


def _every_modern_request(pair: Pair) -> None:
    s = pair.session
    now = pair.now
    s.call_tool("t", {"a": 1}, now=now)
    s.call_tool("p", now=now, progress=False)
    s.list_tools(now=now)
    s.list_resources(now=now)
    s.list_resource_templates(now=now)
    s.list_prompts(now=now)
    s.read_resource(URI, now=now)
    s.get_prompt("p", {"x": "y"}, now=now)
    s.complete({"type": "ref/prompt", "name": "p"}, "x", "y", now=now)
    s.ping(now=now)
    s.subscribe(URI, now=now)
    s.send_request("tools/list", {"cursor": "c"}, now=now)
    s.cancel(s.call_tool("t", now=now))
    pair.sent()


@pytest.mark.parametrize("send_client_info", [True, False])
def test_m01_every_modern_request_carries_the_meta(send_client_info: bool) -> None:
    caps = client_capabilities(elicitation=True, roots=True)
    pair = modern_pair(capabilities=caps, send_client_info=send_client_info)
    _every_modern_request(pair)
    requests = pair.requests_sent()
    assert {"server/discover", "subscriptions/listen", "tools/call", "tools/list",
            "resources/list", "resources/templates/list", "prompts/list", "resources/read",
            "prompts/get", "completion/complete"} <= set(methods(requests))
    for request in requests:
        meta = meta_of(request)
        assert meta[PROTOCOL_VERSION_KEY] == MODERN, request
        # TX-01: the tasks extension is declared on every request (accept_tasks defaults on)
        assert meta[CAPABILITIES_KEY] == {**caps, "extensions": {TASKS_EXTENSION: {}}}, request
        if send_client_info:
            assert meta[CLIENT_INFO_KEY] == CLIENT_INFO.to_wire(), request
        else:
            assert CLIENT_INFO_KEY not in meta, request
        assert LOG_LEVEL_KEY not in meta  # opt-in only (G-11)


def test_m01_every_emitted_message_matches_the_2026_07_28_schema() -> None:
    need_modern_schema()
    pair = modern_pair(capabilities=BOTH, validate=False)
    _every_modern_request(pair)
    pair.advance(10_000.0)  # the rest time out: notifications/cancelled
    pair.sent()
    assert "notifications/cancelled" in methods(pair.log)
    for message in pair.log:
        assert_valid_client_message(message, MODERN_SCHEMA_VERSION)


def test_m01_schema_check_can_fail() -> None:
    need_modern_schema()
    with pytest.raises(AssertionError):  # no _meta: the 2026 RequestParams require it
        assert_valid_client_message({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {"name": "t"}}, MODERN_SCHEMA_VERSION)
    with pytest.raises(AssertionError):  # ping was removed in 2026-07-28
        assert_valid_client_message({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    MODERN_SCHEMA_VERSION)
    with pytest.raises(AssertionError):  # a modern session's messages are checked as such
        pair = tools_pair()
        pair.session._wire.out.append(b'{"jsonrpc":"2.0","id":99,"method":"tools/list"}\n')
        pair.sent()


def test_m01_progress_token_and_caller_meta_share_the_one_meta() -> None:
    pair = tools_pair()
    trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    handle, request = call(pair, meta={"traceparent": trace}, progress=True)
    meta = meta_of(request)
    assert meta["progressToken"] == request["id"]
    assert meta["traceparent"] == trace
    assert meta[PROTOCOL_VERSION_KEY] == MODERN and CAPABILITIES_KEY in meta
    # Progress and log messages belong to the request, not to a stream: no subscriptionId.
    pair.notify("notifications/progress", {"progressToken": request["id"], "progress": 1})
    pair.notify("notifications/message", {"level": "info", "data": "x"})
    progress, log = pair.events()
    assert isinstance(progress, Progress) and progress.handle == handle
    assert isinstance(log, LogMessage)
    assert pair.session.stats.notifications_dropped == 0


# -- M-07: resultType ------------------------------------------------------------------------


@pytest.mark.parametrize("result", [
    {"content": [{"type": "text", "text": "ok"}]},
    text_result(),
])
def test_m07_absent_or_complete_result_type_is_a_result(result: JSONObj) -> None:
    pair = tools_pair()
    handle, request = call(pair)
    pair.reply(request, result)
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    assert isinstance(done.value, CallToolResult)


@pytest.mark.parametrize("kind", ["task", "Complete", "", 7])
def test_m07_unknown_result_type_fails_the_request_only(kind: Any) -> None:
    pair = tools_pair()
    handle, request = call(pair)
    pair.reply(request, {"resultType": kind, "content": []})
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.sent() == []
    handle2, request2 = call(pair)  # the session still works
    pair.reply(request2, text_result())
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle2


def test_m07_input_required_outside_mrtr_methods_fails() -> None:
    pair = tools_pair(capabilities=BOTH)
    handle = pair.session.list_tools(now=pair.now)
    request = pair.sent_one()
    pair.reply(request, input_required({"k": {"method": "roots/list"}}, "s"))
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.sent() == []


# -- section 7: MRTR -------------------------------------------------------------------------


def test_mr01_input_requests_become_server_requests_and_the_retry_echoes_state() -> None:
    result = example("InputRequiredResult",
                     "input-required-result-with-elicitation-and-sampling-and-request-state.json")
    answers = example("InputResponses")
    pair = tools_pair(capabilities=BOTH)
    handle, first, by_method = gather(pair, result)
    elicit = by_method["elicitation/create"]
    sample = by_method["sampling/createMessage"]
    assert isinstance(elicit.request_id, str) and isinstance(sample.request_id, str)
    assert elicit.request_id != sample.request_id
    assert elicit.params == result["inputRequests"]["github_login"]["params"]
    assert sample.params == result["inputRequests"]["capital_of_france"]["params"]
    assert pair.session.respond(elicit.request_id, answers["github_login"]) is True
    assert pair.sent() == [] and pair.events() == []  # one input still open
    assert pair.session.respond(elicit.request_id, answers["github_login"]) is False
    assert pair.session.respond(sample.request_id, answers["capital_of_france"]) is True
    retry = pair.sent_one()
    assert retry["method"] == "tools/call" and retry["id"] != first["id"]
    params = retry["params"]
    assert params["name"] == first["params"]["name"]
    assert params["arguments"] == first["params"]["arguments"]
    assert params["inputResponses"] == answers  # keyed by the server's keys
    assert params["requestState"] == result["requestState"]
    assert meta_of(retry)[PROTOCOL_VERSION_KEY] == MODERN
    assert meta_of(retry)["progressToken"] == retry["id"]
    pair.reply(retry, text_result("sunny"))
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    assert done.value.content[0].text == "sunny"
    assert pair.session.stats.responses_dropped == 0


def test_mr01_request_state_is_echoed_byte_for_byte_and_never_invented() -> None:
    pair = tools_pair(capabilities=BOTH)
    weird = ' {"not": "json"} \u00e9\n==  '
    _h, _first, by_method = gather(pair, input_required(
        {"a": {"method": "elicitation/create", "params": ELICIT_PARAMS}}, weird))
    pair.session.respond(by_method["elicitation/create"].request_id, ELICIT_ANSWER)
    second = pair.sent_one()
    assert second["params"]["requestState"] == weird
    # The server asks again, this time without state: the next retry carries none, and only
    # this round's answers.
    pair.reply(second, input_required(
        {"b": {"method": "sampling/createMessage", "params": SAMPLING_PARAMS}}))
    [again] = pair.events()
    assert isinstance(again, ServerRequest) and again.method == "sampling/createMessage"
    pair.session.respond(again.request_id, SAMPLING_ANSWER)
    third = pair.sent_one()
    assert "requestState" not in third["params"]
    assert third["params"]["inputResponses"] == {"b": SAMPLING_ANSWER}
    assert len({second["id"], third["id"], _first["id"]}) == 3


@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "resources/read"])
def test_mrtr_request_state_only_is_retried_at_once(method: str) -> None:
    state = example("InputRequiredResult",
                    "input-required-result-with-request-state-only.json")["requestState"]
    pair = modern_pair(server_caps={"tools": {}, "prompts": {}, "resources": {}})
    s = pair.session
    if method == "tools/call":
        handle = s.call_tool("t", {"a": 1}, now=pair.now)
    elif method == "prompts/get":
        handle = s.get_prompt("p", {"x": "y"}, now=pair.now)
    else:
        handle = s.read_resource(URI, now=pair.now)
    first = pair.sent_one()
    pair.reply(first, input_required(state=state))
    assert pair.events() == []
    retry = pair.sent_one()
    assert retry["method"] == method and retry["id"] != first["id"]
    assert retry["params"]["requestState"] == state
    assert "inputResponses" not in retry["params"]
    same = {k: v for k, v in retry["params"].items() if k not in ("_meta", "requestState")}
    assert same == {k: v for k, v in first["params"].items() if k != "_meta"}
    final = {"tools/call": text_result(),
             "prompts/get": complete({"messages": []}),
             "resources/read": complete({"contents": [{"uri": URI, "text": "x"}]})}[method]
    pair.reply(retry, final)
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    assert isinstance(done.value, (CallToolResult, GetPromptResult, ReadResourceResult))


def test_mrtr_rounds_are_bounded_by_max_input_rounds() -> None:
    pair = tools_pair(limits=Limits(max_input_rounds=2))
    handle, request = call(pair)
    for _ in range(2):
        pair.reply(request, input_required(state="again"))
        request = pair.sent_one()
    pair.reply(request, input_required(state="again"))
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.sent() == []
    assert methods(pair.requests_sent()).count("tools/call") == 3


@pytest.mark.parametrize(("caps", "entry"), [
    ({}, {"method": "elicitation/create", "params": ELICIT_PARAMS}),
    ({"elicitation": {"form": {}}}, {"method": "roots/list"}),
    ({"elicitation": {"form": {}}},
     {"method": "elicitation/create", "params": {"mode": "url", "message": "m",
                                                 "url": "https://example.com"}}),
    ({"sampling": {}}, {"method": "sampling/createMessage",
                        "params": {**SAMPLING_PARAMS, "tools": []}}),
])
def test_mrtr_input_the_client_did_not_declare_fails_without_asking_the_host(
        caps: JSONObj, entry: JSONObj) -> None:
    pair = tools_pair(capabilities=caps)
    handle, request = call(pair)
    pair.reply(request, input_required(
        {"ok": {"method": "elicitation/create", "params": ELICIT_PARAMS}, "bad": entry}, "s")
        if "elicitation" in caps else input_required({"bad": entry}, "s"))
    failed = one(pair)  # no ServerRequest at all, not even for the declared input
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.sent() == []


@pytest.mark.parametrize("result", [
    {"resultType": "input_required"},
    {"resultType": "input_required", "requestState": 5},
    {"resultType": "input_required", "inputRequests": {"k": {"params": {}}}},
])
def test_mrtr_malformed_input_required_fails(result: JSONObj) -> None:
    pair = tools_pair(capabilities=BOTH)
    handle, request = call(pair)
    pair.reply(request, result)
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)
    assert pair.sent() == []


def _two_inputs(pair: Pair) -> tuple[RequestHandle, ServerRequest, ServerRequest]:
    handle, _request, by_method = gather(pair, input_required({
        "a": {"method": "elicitation/create", "params": ELICIT_PARAMS},
        "b": {"method": "sampling/createMessage", "params": SAMPLING_PARAMS}}, "s"))
    return handle, by_method["elicitation/create"], by_method["sampling/createMessage"]


def test_mrtr_an_error_answer_fails_the_operation_and_withdraws_the_other_inputs() -> None:
    pair = tools_pair(capabilities=BOTH)
    handle, elicit, sample = _two_inputs(pair)
    assert pair.session.respond_error(elicit.request_id, -1, "User rejected") is True
    events = pair.events()
    [failed] = [e for e in events if isinstance(e, Failed)]
    assert failed.handle == handle
    assert isinstance(failed.error, RpcError) and failed.error.code == -1
    withdrawn = {e.request_id for e in events if isinstance(e, ServerRequestCancelled)}
    assert sample.request_id in withdrawn
    assert pair.session.respond(sample.request_id, SAMPLING_ANSWER) is False
    assert pair.sent() == []  # MRTR has no error answer on the wire
    _h, request = call(pair)  # the session goes on
    assert "inputResponses" not in request["params"]


def test_mrtr_the_input_answered_with_an_error_is_not_reported_withdrawn() -> None:
    pair = tools_pair(capabilities=BOTH)
    _handle, elicit, sample = _two_inputs(pair)
    pair.session.respond_error(elicit.request_id, -1, "User rejected")
    withdrawn = [e.request_id for e in pair.events() if isinstance(e, ServerRequestCancelled)]
    assert withdrawn == [sample.request_id]


def test_mrtr_respond_with_an_rpc_error_fails_the_operation() -> None:
    pair = tools_pair(capabilities=BOTH)
    handle, elicit, _sample = _two_inputs(pair)
    assert pair.session.respond_with(elicit.request_id, RpcError(-1, "no", {"x": 1})) is True
    [failed] = [e for e in pair.events() if isinstance(e, Failed)]
    assert failed.handle == handle and isinstance(failed.error, RpcError)
    assert failed.error.data == {"x": 1}
    assert pair.sent() == []


def test_mrtr_cancel_while_gathering_fails_it_and_sends_nothing() -> None:
    pair = tools_pair(capabilities=BOTH)
    handle, elicit, sample = _two_inputs(pair)
    assert pair.session.respond(elicit.request_id, ELICIT_ANSWER) is True
    assert pair.session.cancel(handle, "user gave up") is True
    events = pair.events()
    withdrawn = [e.request_id for e in events if isinstance(e, ServerRequestCancelled)]
    assert withdrawn == [sample.request_id]  # the answered one is not withdrawn
    [failed] = [e for e in events if isinstance(e, Failed)]
    assert failed.handle == handle and isinstance(failed.error, RequestCancelled)
    assert pair.sent() == []  # nothing is in flight on the wire
    assert pair.session.respond(sample.request_id, SAMPLING_ANSWER) is False
    assert pair.session.cancel(handle) is False
    assert pair.sent() == [] and pair.events() == []


def test_mrtr_cancel_while_the_retry_is_in_flight_cancels_the_retry_id() -> None:
    pair = tools_pair()
    handle, request = call(pair)
    pair.reply(request, input_required(state="s"))
    retry = pair.sent_one()
    assert pair.session.cancel(handle) is True
    note = pair.sent_one()
    assert note["method"] == "notifications/cancelled"
    assert note["params"]["requestId"] == retry["id"]
    failed = one(pair)
    assert isinstance(failed, Failed) and isinstance(failed.error, RequestCancelled)
    pair.reply(retry, text_result())  # late: dropped
    assert pair.events() == []


def test_mrtr_connection_lost_while_gathering_fails_it() -> None:
    pair = tools_pair(capabilities=BOTH)
    handle, elicit, _sample = _two_inputs(pair)
    pair.session.connection_lost(ServerExited(3))
    failed, closed = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, ServerExited)
    assert isinstance(closed, Closed)
    assert pair.session.respond(elicit.request_id, ELICIT_ANSWER) is False
    assert pair.sent() == []


def test_mrtr_retry_has_fresh_meta() -> None:
    pair = tools_pair(capabilities=BOTH)
    _h, first, by_method = gather(pair, input_required(
        {"a": {"method": "elicitation/create", "params": ELICIT_PARAMS}}))
    assert LOG_LEVEL_KEY not in meta_of(first)
    pair.session.set_logging_level("debug", now=pair.now)
    assert isinstance(one(pair), Completed)
    pair.session.respond(by_method["elicitation/create"].request_id, ELICIT_ANSWER)
    retry = pair.sent_one()
    assert meta_of(retry)[LOG_LEVEL_KEY] == "debug"


def test_mr02_mrtr_retry_results_are_not_cached() -> None:
    pair = modern_pair(server_caps={"resources": {}})
    pair.session.read_resource(URI, now=pair.now)
    request = pair.sent_one()
    pair.reply(request, input_required(state="s"))
    retry = pair.sent_one()
    pair.reply(retry, complete({"contents": [{"uri": URI, "text": "x"}], "ttlMs": 60_000}))
    assert isinstance(one(pair), Completed)
    pair.session.read_resource(URI, now=pair.now)
    assert methods(pair.sent()) == ["resources/read"]  # asked again
    assert pair.events() == []


# -- 4.2: typed modern errors ----------------------------------------------------------------


@pytest.mark.parametrize(("code", "data", "kind"), [
    (-32020, {"header": "Mcp-Name"}, HeaderMismatch),
    (-32021, {"requiredCapabilities": {"elicitation": {}}}, MissingClientCapability),
    (-32022, {"supported": ["2099-01-01"], "requested": MODERN}, UnsupportedProtocolVersion),
    (-32004, {"supported": [MODERN], "requested": MODERN}, RpcError),  # V-22: pre-GA
])
def test_4_2_modern_error_codes_are_typed_and_carry_their_data(
        code: int, data: JSONObj, kind: type[RpcError]) -> None:
    pair = tools_pair()
    handle, request = call(pair)
    pair.reply_error(request, code, "error", data)
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert type(failed.error) is kind
    assert failed.error.code == code and failed.error.data == data
    assert failed.error.method == "tools/call"
    assert pair.sent() == []  # none of these is retried (no mutual version for -32022)
    if isinstance(failed.error, MissingClientCapability):
        assert failed.error.required_capabilities == {"elicitation": {}}
    if isinstance(failed.error, UnsupportedProtocolVersion):
        assert failed.error.supported == ["2099-01-01"]
        assert failed.error.requested == MODERN


def test_v11_32022_on_a_request_is_retried_once_then_surfaced() -> None:
    pair = tools_pair()
    data = {"supported": [MODERN], "requested": MODERN}
    handle, request = call(pair, "t", {"a": 1})
    pair.reply_error(request, -32022, "Unsupported protocol version", data)
    retry = pair.sent_one()
    assert retry["id"] != request["id"] and retry["method"] == "tools/call"
    assert retry["params"]["arguments"] == {"a": 1}
    assert meta_of(retry)[PROTOCOL_VERSION_KEY] == MODERN
    assert pair.events() == []
    pair.reply_error(retry, -32022, "Unsupported protocol version", data)
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, UnsupportedProtocolVersion)
    assert pair.sent() == []


def test_v11_32022_retry_can_succeed() -> None:
    pair = tools_pair()
    handle, request = call(pair)
    pair.reply_error(request, -32022, "Unsupported", {"supported": [MODERN]})
    retry = pair.sent_one()
    pair.reply(retry, text_result())
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle


# -- legacy-only operations in a modern session (G-01, G-11, F-01, M-04) ---------------------


def test_g01_ping_in_modern_sends_server_discover() -> None:
    pair = tools_pair()
    handle = pair.session.ping(now=pair.now)
    request = pair.sent_one()
    assert request["method"] == "server/discover" and request["id"] == handle.id
    assert set(request["params"]) == {"_meta"}
    pair.reply(request, discover_result())
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle and done.value is None


def test_g11_set_logging_level_in_modern_sends_nothing_and_rides_on_later_requests() -> None:
    pair = tools_pair()
    _h, before = call(pair)
    assert LOG_LEVEL_KEY not in meta_of(before)
    handle = pair.session.set_logging_level("warning", now=pair.now)
    assert pair.sent() == []
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    _h, after = call(pair)
    assert meta_of(after)[LOG_LEVEL_KEY] == "warning"
    pair.session.list_tools(now=pair.now)
    assert meta_of(pair.sent_one())[LOG_LEVEL_KEY] == "warning"
    with pytest.raises(ValueError):
        pair.session.set_logging_level("loud", now=pair.now)


def test_f01_roots_list_changed_in_modern_sends_nothing() -> None:
    pair = tools_pair(capabilities=client_capabilities(roots=True))
    pair.session.notify_roots_list_changed()
    assert pair.sent() == [] and pair.events() == []


@pytest.mark.parametrize(("method", "params"), [
    ("ping", None),
    ("roots/list", None),
    ("sampling/createMessage", SAMPLING_PARAMS),
    ("elicitation/create", ELICIT_PARAMS),
])
def test_m04_server_requests_in_modern_are_bad_messages_and_not_answered(
        method: str, params: JSONObj | None) -> None:
    caps = client_capabilities(sampling=True, elicitation=True, roots=True)
    pair = tools_pair(capabilities=caps)
    pair.server_request(7, method, params)
    bad = one(pair)
    assert isinstance(bad, BadMessage) and isinstance(bad.error, RemoteProtocolError)
    assert pair.session.stats.bad_messages == 1
    assert pair.sent() == []
    assert pair.session.respond(7, {}) is False
    assert pair.sent() == []


# -- S-02: caching ---------------------------------------------------------------------------


def _list_tools(pair: Pair, result: JSONObj) -> list[Tool]:
    handle = pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), result)
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    return done.value  # type: ignore[no-any-return]


def _cached_list(pair: Pair) -> list[Tool] | None:
    """The list if it came from the cache (nothing sent), else None (the request is left
    unanswered)."""
    handle = pair.session.list_tools(now=pair.now)
    if pair.sent():
        assert pair.events() == []
        return None
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    return done.value  # type: ignore[no-any-return]


def test_s02_tools_list_is_cached_for_its_ttl() -> None:
    pair = tools_pair()
    start = pair.now
    tools = _list_tools(pair, complete({"tools": [TOOL], "ttlMs": 5000}))
    pair.now = start + 4.999
    assert _cached_list(pair) == tools
    pair.now = start + 5.0  # fresh only while now < received + ttl
    assert _cached_list(pair) is None


@pytest.mark.parametrize("ttl", [None, 0, -5, "5000"])
def test_s02_no_positive_ttl_means_no_cache(ttl: Any) -> None:
    pair = tools_pair()
    result = complete({"tools": [TOOL]})
    if ttl is not None:
        result["ttlMs"] = ttl
    _list_tools(pair, result)
    assert _cached_list(pair) is None


def test_s02_a_paged_list_is_cached_for_its_shortest_page_ttl() -> None:
    pair = tools_pair()
    start = pair.now
    pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), complete({"tools": [TOOL], "nextCursor": "c1",
                                          "ttlMs": 1000}))
    pair.reply(pair.sent_one(), complete({"tools": [{**TOOL, "name": "u"}], "ttlMs": 60_000}))
    assert isinstance(one(pair), Completed)
    pair.now = start + 0.5
    cached = _cached_list(pair)
    assert cached is not None and [t.name for t in cached] == ["t", "u"]
    pair.now = start + 1.0
    assert _cached_list(pair) is None


def test_s02_tools_list_changed_on_our_stream_invalidates_the_cache() -> None:
    pair = modern_pair(server_caps={"tools": {"listChanged": True}})
    assert pair.listen is not None
    tools = _list_tools(pair, complete({"tools": [TOOL], "ttlMs": 60_000}))
    pair.stream_notify("someone-else", "notifications/tools/list_changed")
    assert pair.events() == [] and pair.session.stats.notifications_dropped == 1
    assert _cached_list(pair) == tools  # another stream's change is not ours
    pair.stream_notify(pair.listen["id"], "notifications/tools/list_changed")
    changed = one(pair)
    assert isinstance(changed, ListChanged) and changed.kind == "tools"
    assert _cached_list(pair) is None


def test_s02_resources_read_is_cached_per_uri_and_invalidated_by_updated() -> None:
    other = "file:///other.txt"
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    values = {}
    for uri in (URI, other):
        pair.session.read_resource(uri, now=pair.now)
        request = pair.sent_one()
        assert request["params"]["uri"] == uri
        pair.reply(request, complete({"contents": [{"uri": uri, "text": uri}],
                                      "ttlMs": 60_000}))
        done = one(pair)
        assert isinstance(done, Completed)
        values[uri] = done.value
    for uri in (URI, other):
        pair.session.read_resource(uri, now=pair.now)
        assert pair.sent() == []
        assert one(pair).value == values[uri]
    sub = pair.session.subscribe(URI, now=pair.now)
    listen = pair.sent_one()
    pair.ack(listen)
    assert one(pair) == Completed(handle=sub, value=None)
    pair.stream_notify(listen["id"], "notifications/resources/updated", {"uri": URI})
    assert one(pair) == ResourceUpdated(uri=URI)
    pair.session.read_resource(URI, now=pair.now)
    assert methods(pair.sent()) == ["resources/read"]
    pair.session.read_resource(other, now=pair.now)
    assert pair.sent() == []
    assert one(pair).value == values[other]


def test_s02_a_legacy_session_ignores_ttl() -> None:
    pair = Pair()
    pair.handshake()
    pair.session.list_tools(now=pair.now)
    pair.reply(pair.sent_one(), {"tools": [TOOL], "ttlMs": 60_000})
    assert isinstance(one(pair), Completed)
    assert _cached_list(pair) is None


# -- S-01 / S-02: an invalid cursor restarts the walk once -----------------------------------


def test_s02_invalid_cursor_mid_walk_restarts_the_walk() -> None:
    pair = tools_pair()
    handle = pair.session.list_tools(now=pair.now)
    first = pair.sent_one()
    assert "cursor" not in first["params"]
    pair.reply(first, complete({"tools": [TOOL], "nextCursor": "c1"}))
    second = pair.sent_one()
    assert second["params"]["cursor"] == "c1"
    pair.reply_error(second, -32602, "Invalid cursor")
    again = pair.sent_one()
    assert again["method"] == "tools/list" and "cursor" not in again["params"]
    assert pair.events() == []
    pair.reply(again, complete({"tools": [{**TOOL, "name": "fresh"}]}))
    done = one(pair)
    assert isinstance(done, Completed) and done.handle == handle
    assert [t.name for t in done.value] == ["fresh"]  # the stale first page is dropped


def test_s02_invalid_cursor_restarts_the_walk_only_once() -> None:
    pair = tools_pair()
    handle = pair.session.list_tools(now=pair.now)
    for _ in range(2):
        pair.reply(pair.sent_one(), complete({"tools": [TOOL], "nextCursor": "c1"}))
        pair.reply_error(pair.sent_one(), -32602, "Invalid cursor")
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError) and failed.error.code == -32602
    assert pair.sent() == []


def test_s02_invalid_params_on_the_first_page_is_not_retried() -> None:
    pair = tools_pair()
    handle = pair.session.list_tools(now=pair.now)
    pair.reply_error(pair.sent_one(), -32602, "bad")
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert pair.sent() == []


# -- section 8: subscriptions ----------------------------------------------------------------


@pytest.mark.parametrize(("caps", "wanted"), [
    (DEFAULT_SERVER_CAPS,
     {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}),
    ({"tools": {"listChanged": True}, "resources": {"subscribe": True}},
     {"toolsListChanged": True}),
    ({"prompts": {"listChanged": True}, "resources": {"listChanged": False}},
     {"promptsListChanged": True}),
    ({"tools": {}, "resources": {"subscribe": True, "listChanged": False}}, None),
    ({}, None),
])
def test_sb01_listen_is_opened_at_ready_only_for_declared_list_changes(
        caps: JSONObj, wanted: JSONObj | None) -> None:
    pair = modern_pair(server_caps=caps, ack=False)
    if wanted is None:
        assert pair.listen is None
        assert pair.session.next_deadline() is None and pair.session.pending_count == 0
    else:
        assert pair.listen is not None
        assert pair.listen["params"]["notifications"] == wanted
        assert pair.session.pending_count == 1


def test_sb02_listen_has_no_deadline_once_acknowledged() -> None:
    pair = modern_pair(ack=False)
    assert pair.listen is not None
    assert pair.session.next_deadline() == pair.now + Limits().idle_timeout
    pair.ack(pair.listen)
    assert pair.events() == []
    assert pair.session.next_deadline() is None
    pair.advance(1_000_000.0)
    assert pair.sent() == [] and pair.events() == []
    pair.stream_notify(pair.listen["id"], "notifications/prompts/list_changed")
    assert one(pair) == ListChanged(kind="prompts")


def test_sb03_notifications_of_other_subscriptions_are_dropped_even_before_our_ack() -> None:
    pair = modern_pair(ack=False)
    assert pair.listen is not None
    ours = pair.listen["id"]
    stats = pair.session.stats
    pair.stream_notify("listen-of-another-client", "notifications/tools/list_changed")
    pair.stream_notify(ours + 100, "notifications/resources/list_changed")
    pair.notify("notifications/tools/list_changed")  # no subscriptionId at all
    pair.notify("notifications/subscriptions/acknowledged",
                {"_meta": {SUBSCRIPTION_ID_KEY: "x"}, "notifications": {}})
    assert pair.events() == [] and stats.notifications_dropped == 4
    pair.ack(pair.listen)
    pair.stream_notify(ours, "notifications/tools/list_changed")
    assert one(pair) == ListChanged(kind="tools")
    assert stats.notifications_dropped == 4


def test_sb01_subscribe_reopens_the_listen_and_cancels_the_old_one() -> None:
    pair = modern_pair()
    assert pair.listen is not None
    old = pair.listen
    handle = pair.session.subscribe(URI, now=pair.now)
    cancel, listen = pair.sent()
    assert cancel == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": old["id"]}}
    assert listen["method"] == "subscriptions/listen" and listen["id"] != old["id"]
    assert listen["params"]["notifications"] == {
        **old["params"]["notifications"], "resourceSubscriptions": [URI]}
    assert pair.events() == []  # not subscribed until acknowledged
    pair.stream_notify(listen["id"], "notifications/resources/updated", {"uri": URI})
    assert one(pair) == ResourceUpdated(uri=URI)  # SB-03: ours even before the ack
    pair.ack(listen)
    assert one(pair) == Completed(handle=handle, value=None)
    dropped = pair.session.stats.notifications_dropped
    pair.stream_notify(old["id"], "notifications/resources/updated", {"uri": URI})
    assert pair.events() == []
    assert pair.session.stats.notifications_dropped == dropped + 1
    # A second subscription: one stream with both URIs.
    second = "file:///b"
    handle2 = pair.session.subscribe(second, now=pair.now)
    cancel2, listen2 = pair.sent()
    assert cancel2["params"]["requestId"] == listen["id"]
    assert listen2["params"]["notifications"]["resourceSubscriptions"] == sorted([URI, second])
    pair.ack(listen2)
    assert one(pair) == Completed(handle=handle2, value=None)
    # Unsubscribing re-listens without it.
    handle3 = pair.session.unsubscribe(URI, now=pair.now)
    cancel3, listen3 = pair.sent()
    assert cancel3["params"]["requestId"] == listen2["id"]
    assert listen3["params"]["notifications"]["resourceSubscriptions"] == [second]
    pair.ack(listen3)
    assert one(pair) == Completed(handle=handle3, value=None)


def test_sb02_an_acknowledgement_without_our_uri_fails_the_subscribe() -> None:
    pair = modern_pair()
    handle = pair.session.subscribe(URI, now=pair.now)
    _cancel, listen = pair.sent()
    narrower = {k: v for k, v in listen["params"]["notifications"].items()
                if k != "resourceSubscriptions"}
    pair.ack(listen, narrower)
    failed = one(pair)
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RemoteProtocolError)


def test_sb01_unsubscribing_the_last_uri_without_list_changes_ends_the_listen() -> None:
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    assert pair.listen is None
    sub = pair.session.subscribe(URI, now=pair.now)
    listen = pair.sent_one()
    assert listen["params"]["notifications"] == {"resourceSubscriptions": [URI]}
    pair.ack(listen)
    assert one(pair) == Completed(handle=sub, value=None)
    unsub = pair.session.unsubscribe(URI, now=pair.now)
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": listen["id"]}}]
    assert one(pair) == Completed(handle=unsub, value=None)
    assert pair.session.pending_count == 0


def test_sb01_subscribe_needs_resources_subscribe() -> None:
    pair = tools_pair()
    with pytest.raises(LocalProtocolError):
        pair.session.subscribe(URI, now=pair.now)
    assert pair.sent() == []


@pytest.mark.parametrize("how", ["cancelled", "result"])
def test_sb04_server_teardown_ends_the_listen(how: str) -> None:
    pair = modern_pair()
    assert pair.listen is not None
    listen = pair.listen
    if how == "cancelled":
        pair.notify("notifications/cancelled", {"requestId": listen["id"]})
    else:
        pair.reply(listen, complete({"_meta": {SUBSCRIPTION_ID_KEY: listen["id"]}}))
    assert pair.events() == [SubscriptionEnded(error=None)] and pair.sent() == []
    assert pair.session.pending_count == 0
    dropped = pair.session.stats.notifications_dropped
    pair.stream_notify(listen["id"], "notifications/tools/list_changed")
    assert pair.events() == []  # the stream is gone
    assert pair.session.stats.notifications_dropped == dropped + 1
    handle = pair.session.subscribe(URI, now=pair.now)
    [again] = pair.sent()  # no cancellation for a stream the server ended
    assert again["method"] == "subscriptions/listen"
    pair.ack(again)
    assert one(pair) == Completed(handle=handle, value=None)


@pytest.mark.parametrize("how", ["cancelled", "error"])
def test_sb04_teardown_before_the_ack_fails_the_subscribe(how: str) -> None:
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    handle = pair.session.subscribe(URI, now=pair.now)
    listen = pair.sent_one()
    if how == "cancelled":
        pair.notify("notifications/cancelled", {"requestId": listen["id"]})
    else:
        pair.reply_error(listen, -32602, "no such resource")
    failed, ended = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RpcError if how == "error" else RemoteProtocolError)
    assert isinstance(ended, SubscriptionEnded)
    assert pair.sent() == []


def test_sb04_cancelled_for_another_id_is_ignored() -> None:
    pair = modern_pair()
    assert pair.listen is not None
    pair.notify("notifications/cancelled", {"requestId": pair.listen["id"] + 1})
    assert pair.events() == [] and pair.session.pending_count == 1
    pair.stream_notify(pair.listen["id"], "notifications/tools/list_changed")
    assert one(pair) == ListChanged(kind="tools")


def test_sb02_listen_timing_out_unacknowledged_fails_the_subscribe() -> None:
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    handle = pair.session.subscribe(URI, now=pair.now)
    listen = pair.sent_one()
    pair.advance_to_deadline()
    assert pair.sent() == [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": listen["id"],
        "reason": "subscriptions/listen timed out after 60 s without a response or progress"}}]
    failed, ended = pair.events()
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(failed.error, RequestTimeout)
    assert isinstance(ended, SubscriptionEnded) and isinstance(ended.error, RequestTimeout)


def test_sb_connection_lost_fails_a_waiting_subscribe_but_not_the_listen() -> None:
    pair = modern_pair()
    handle = pair.session.subscribe(URI, now=pair.now)
    pair.sent()
    pair.session.connection_lost(ServerExited(0))
    failed, closed = pair.events()  # no Failed for the internal listen handle
    assert isinstance(failed, Failed) and failed.handle == handle
    assert isinstance(closed, Closed)


# -- review findings (second pass) -----------------------------------------------------------


@pytest.mark.parametrize("ttl", [10**400, -(10**400), 1e308])
def test_s02_huge_ttl_is_clamped_not_raised(ttl: Any) -> None:
    """A ttlMs beyond float range once raised OverflowError out of receive_data."""
    pair = tools_pair()
    handle = pair.session.list_tools(now=pair.now)
    request = pair.sent_one()
    pair.reply(request, complete({"tools": [], "ttlMs": ttl}))
    assert one(pair) == Completed(handle=handle, value=[])


def test_v11_32022_on_an_mrtr_retry_resends_its_answers_and_state() -> None:
    """V-11 + section 7: the -32022 retry of a retry carries the same inputResponses and
    requestState, or the server would ask the user again."""
    pair = tools_pair(capabilities=BOTH)
    _h, _first, by_method = gather(pair, input_required(
        {"a": {"method": "elicitation/create", "params": ELICIT_PARAMS}}, "S1"))
    pair.session.respond(by_method["elicitation/create"].request_id, ELICIT_ANSWER)
    retry = pair.sent_one()
    pair.reply_error(retry, -32022, "Unsupported protocol version",
                     {"supported": [MODERN], "requested": MODERN})
    again = pair.sent_one()
    assert again["id"] != retry["id"]
    assert again["params"]["inputResponses"] == {"a": ELICIT_ANSWER}
    assert again["params"]["requestState"] == "S1"


def test_l09_mrtr_total_deadline_runs_across_rounds_and_while_the_host_answers() -> None:
    """The call's total timeout is total: it runs while the host answers and is not restarted
    by a retry (as in the handshake era, where the call's timer runs during the server's
    elicitation)."""
    pair = tools_pair(capabilities=BOTH)
    handle, _first, by_method = gather(pair, input_required(
        {"a": {"method": "elicitation/create", "params": ELICIT_PARAMS}}), timeout=10.0)
    deadline = pair.session.next_deadline()
    assert deadline is not None and deadline <= pair.now + 10.0
    pair.advance(10.0)
    events = pair.events()
    assert any(isinstance(e, ServerRequestCancelled) for e in events)
    failed = [e for e in events if isinstance(e, Failed)]
    assert len(failed) == 1 and failed[0].handle == handle
    assert isinstance(failed[0].error, RequestTimeout) and failed[0].error.kind == "total"
    assert pair.session.respond(by_method["elicitation/create"].request_id,
                                ELICIT_ANSWER) is False


def test_sb_subscribe_on_a_closed_modern_session_raises() -> None:
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    pair.session.connection_lost(ServerExited(0))
    pair.events()
    with pytest.raises(ConnectionClosed):
        pair.session.subscribe(URI, now=pair.now)
    assert pair.sent() == []


def test_sb02_a_refused_subscription_is_not_asked_for_again() -> None:
    pair = modern_pair(server_caps={"resources": {"subscribe": True}})
    pair.session.subscribe(URI, now=pair.now)
    listen = pair.sent_one()
    pair.ack(listen, {})  # accepts nothing
    assert isinstance(one(pair), Failed)
    assert pair.session.subscriptions == frozenset()


def test_m04_a_server_request_asked_during_the_probe_is_withdrawn_when_modern_wins() -> None:
    pair, _handle, probe = probing_pair(capabilities={"roots": {}})
    pair.server_request("r1", "roots/list")
    [asked] = pair.events()
    assert isinstance(asked, ServerRequest)
    pair.reply(probe, discover_result())
    events = pair.events()
    assert ServerRequestCancelled(
        request_id="r1",
        reason="the server speaks 2026-07-28, where it cannot ask") in events
    assert pair.session.respond("r1", {"roots": []}) is False  # never a response
    assert all("result" not in m for m in pair.sent())
