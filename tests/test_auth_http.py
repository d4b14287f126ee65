"""StreamableHttp with ``auth=OAuthFlow``, sans-IO: a 401/403 parks the request instead of failing
it, the flow runs (its exchanges answered by the fake world of test_auth_flow), and the same
JSON-RPC message goes again with the token; held requests, failures, retry limits, deadlines."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from test_auth_flow import (
    AS,
    CHALLENGE,
    MCP,
    T0,
    WALL,
    World,
    drain,
    make_flow,
    record_for,
    redirect_of,
    response,
    standard_world,
)
from test_http_core import Server, result

from mcp_proto import ClientSession, Completed, Failed, Implementation, Ready
from mcp_proto._auth_errors import (
    AuthorizationDenied,
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    DiscoveryError,
    InsufficientScope,
)
from mcp_proto._limits import DEFAULT_IDLE_TIMEOUT
from mcp_proto.auth._config import AuthConfig
from mcp_proto.auth._flow import REFRESH_SKEW, OAuthFlow, RedirectRequired
from mcp_proto.http._streamable import AUTH_RETRY_LIMITS, HttpExchange, StreamableHttp

INFO = Implementation(name="t", version="1")
NOW = T0
DISCOVER = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}}
UNAUTHORIZED = [("WWW-Authenticate", CHALLENGE)]


def session_events(http: StreamableHttp) -> list[Any]:
    out = []
    while (e := http.session.next_event()) is not None:
        out.append(e)
    return out


def run_flow(flow: OAuthFlow, world: World, now: float = NOW) -> None:
    """What a binding does: carry the flow's exchanges, and the user approves."""
    world.serve(flow, now)
    for event in drain(flow):
        if isinstance(event, RedirectRequired):
            flow.receive_callback(world.approve(event), now=now)
            world.serve(flow, now)
    drain(flow)


def refuse(http: StreamableHttp, ex: HttpExchange, status: int = 401,
           www: str = CHALLENGE) -> None:
    http.receive_data(ex.id, Server(ex).answer(status, b"", headers=[
        ("WWW-Authenticate", www)]), now=NOW)


def ok(http: StreamableHttp, ex: HttpExchange, res: dict[str, Any]) -> None:
    srv = Server(ex)
    http.receive_data(ex.id, srv.answer(200, result(srv.body["id"], res)), now=NOW)


def auth_of(ex: HttpExchange) -> str | None:
    return Server(ex).headers.get("authorization")


def protected(world: World | None = None, flow: OAuthFlow | None = None, era: str = "auto"
              ) -> tuple[StreamableHttp, OAuthFlow, World, HttpExchange]:
    world = world or standard_world()
    flow = flow or make_flow()
    http = StreamableHttp(ClientSession(INFO), MCP, auth=flow)
    http.session.start(now=NOW, era=era)
    [probe] = http.exchanges_to_start()
    return http, flow, world, probe


def modern_ready(world: World | None = None) -> tuple[StreamableHttp, OAuthFlow, World]:
    """A modern session that got its token by answering the probe's 401."""
    http, flow, world, probe = protected(world)
    refuse(http, probe)
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    ok(http, replay, DISCOVER)
    [ready] = session_events(http)
    assert isinstance(ready, Ready) and ready.era == "modern"
    return http, flow, world


# -- the probe ---------------------------------------------------------------------------------


def test_401_on_the_probe_parks_it_and_replays_the_same_message_with_the_token() -> None:
    http, flow, world, probe = protected()
    srv = Server(probe)
    assert srv.body["method"] == "server/discover" and "authorization" not in srv.headers
    first_body = probe.payload
    refuse(http, probe)
    assert session_events(http) == []  # not failed
    assert flow.busy and http.exchanges_to_start() == []  # held while the flow runs
    run_flow(flow, world)
    assert flow.error is None and not flow.busy
    [replay] = http.exchanges_to_start()
    again = Server(replay)
    assert replay.payload == first_body and again.body["id"] == srv.body["id"]
    assert again.body == srv.body
    assert again.headers["authorization"] == f"Bearer {world.access_tokens[-1]}"
    assert again.headers["mcp-method"] == "server/discover"
    ok(http, replay, DISCOVER)
    [ready] = session_events(http)
    assert isinstance(ready, Ready) and ready.era == "modern"
    # later requests carry the token too
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    assert auth_of(ex) == f"Bearer {world.access_tokens[-1]}"


def test_the_flows_own_requests_never_carry_the_mcp_token() -> None:
    _http, flow, world = modern_ready()
    for req in world.log:
        assert "authorization" not in req.headers or req.headers["authorization"].startswith(
            "Basic ")
        for token in world.access_tokens:
            assert token.encode() not in req.exchange.data
    assert flow.headers("POST", NOW)  # only the MCP requests get it


def test_a_protected_legacy_server_gets_initialize_replayed() -> None:
    http, flow, world, probe = protected(era="legacy")
    srv = Server(probe)
    assert srv.body["method"] == "initialize"
    refuse(http, probe)
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    assert Server(replay).body == srv.body and auth_of(replay)
    ok(http, replay, {"protocolVersion": "2025-11-25", "capabilities": {},
                      "serverInfo": {"name": "s", "version": "1"}})
    [ready] = session_events(http)
    assert isinstance(ready, Ready) and ready.era == "legacy"


def test_the_deadline_is_postponed_while_the_user_step_is_outstanding() -> None:
    world = standard_world()
    flow = make_flow(AuthConfig(authorization_timeout=300.0))
    http, flow, world, probe = protected(world, flow)
    original = http.session.next_deadline()
    assert original is not None and original <= NOW + DEFAULT_IDLE_TIMEOUT
    refuse(http, probe)
    world.serve(flow, NOW)
    redirect = redirect_of(drain(flow))
    assert redirect.deadline == NOW + 300.0
    assert http.exchanges_to_start() == []  # postpones the parked probe
    deadline = http.session.next_deadline()
    assert deadline is not None and deadline > NOW + 300.0 > original
    http.handle_timeout(NOW + DEFAULT_IDLE_TIMEOUT + 30)  # past the original deadline
    assert session_events(http) == [] and flow.busy
    assert http.exchanges_to_start() == []  # not even the initialize fallback
    later = NOW + DEFAULT_IDLE_TIMEOUT + 40
    flow.receive_callback(world.approve(redirect), now=later)
    world.serve(flow, later)
    [replay] = http.exchanges_to_start()
    assert Server(replay).body["method"] == "server/discover"
    ok(http, replay, DISCOVER)
    [ready] = session_events(http)
    assert isinstance(ready, Ready) and ready.era == "modern"


def test_a_user_step_that_times_out_fails_the_parked_probe() -> None:
    flow = make_flow(AuthConfig(authorization_timeout=30.0))
    http, flow, world, probe = protected(flow=flow, era="modern")
    refuse(http, probe)
    world.serve(flow, NOW)
    drain(flow)
    http.exchanges_to_start()
    assert http.next_deadline() == NOW + 30.0
    http.handle_timeout(NOW + 30.0)
    assert isinstance(flow.error, AuthorizationError)
    assert http.exchanges_to_start() == []
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and failed[0].error is flow.error


# -- held requests ------------------------------------------------------------------------------


def test_requests_issued_while_the_flow_is_busy_are_held_and_released_after() -> None:
    world = standard_world()
    world.issue_refresh = False
    http, flow, world = modern_ready(world)
    old = world.access_tokens[-1]
    http.session.call_tool("echo", {"text": "a"}, now=NOW)
    [call] = http.exchanges_to_start()
    call_body = Server(call).body
    refuse(http, call)  # the token was revoked
    assert flow.busy
    http.session.list_tools(now=NOW)
    http.session.call_tool("echo", {"text": "b"}, now=NOW)
    assert http.exchanges_to_start() == []  # held, not sent without a token
    run_flow(flow, world)
    released = http.exchanges_to_start()
    bodies = [Server(ex).body for ex in released]
    assert call_body in bodies and len(released) == 3
    assert {b["method"] for b in bodies} == {"tools/call", "tools/list"}
    new = world.access_tokens[-1]
    assert new != old
    assert all(auth_of(ex) == f"Bearer {new}" for ex in released)


def test_a_flow_failure_fails_every_held_request_with_its_error() -> None:
    world = standard_world()
    world.issue_refresh = False
    http, flow, world = modern_ready(world)
    world.routes.clear()
    world.routes["http://127.0.0.1:8000/.well-known/custom-prm"] = (
        lambda _r: response(503, {"error": "down"}))
    http.session.call_tool("echo", {"text": "a"}, now=NOW)
    [call] = http.exchanges_to_start()
    refuse(http, call)
    http.session.list_tools(now=NOW)
    assert http.exchanges_to_start() == []
    run_flow(flow, world)
    assert isinstance(flow.error, DiscoveryError)
    assert http.exchanges_to_start() == []
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert len(failed) == 2 and all(f.error is flow.error for f in failed)


def test_requests_held_during_a_proactive_refresh() -> None:
    http, flow, world = modern_ready()
    assert flow.tokens is not None and flow.tokens.expires_at is not None
    soon = flow.tokens.expires_at - WALL - REFRESH_SKEW
    http.session.list_tools(now=soon)
    assert http.exchanges_to_start() == []  # the token is refreshed first
    assert flow.busy and flow.kind == "refresh"
    run_flow(flow, world, soon)
    [ex] = http.exchanges_to_start()
    assert Server(ex).body["method"] == "tools/list"
    assert auth_of(ex) == f"Bearer {world.access_tokens[-1]}"
    assert [r.form["grant_type"] for r in world.log if r.url.endswith("/token")] == [
        "authorization_code", "refresh_token"]


def test_401_with_a_refresh_token_refreshes_and_replays() -> None:
    http, flow, world = modern_ready()
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    body = Server(ex).body
    refuse(http, ex)
    assert flow.kind == "refresh"
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    assert Server(replay).body == body
    ok(http, replay, {"resultType": "complete", "tools": []})
    [done] = session_events(http)
    assert isinstance(done, Completed) and done.value == []


def test_403_insufficient_scope_steps_up_and_replays() -> None:
    http, flow, world = modern_ready()
    http.session.call_tool("admin", {}, now=NOW)
    [ex] = http.exchanges_to_start()
    refuse(http, ex, 403, 'Bearer error="insufficient_scope", scope="admin"')
    assert flow.kind == "step_up"
    world.serve(flow, NOW)
    redirect = redirect_of(drain(flow))
    assert "admin" in redirect.url
    flow.receive_callback(world.approve(redirect), now=NOW)
    world.serve(flow, NOW)
    [replay] = http.exchanges_to_start()
    assert Server(replay).body["params"]["name"] == "admin"


def test_403_that_is_not_about_scope_is_an_ordinary_error() -> None:
    http, flow, _world = modern_ready()
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    refuse(http, ex, 403, 'Bearer error="invalid_token"')
    assert not flow.busy
    [failed] = session_events(http)
    assert isinstance(failed, Failed) and not isinstance(failed.error, AuthorizationError)


def test_step_ups_are_bounded_per_request() -> None:
    world = standard_world()
    world.token_extra = {"expires_in": 3600, "scope": "read"}
    http, flow, world = modern_ready(world)
    http.session.call_tool("admin", {}, now=NOW)
    [ex] = http.exchanges_to_start()
    www = 'Bearer error="insufficient_scope", scope="admin"'
    errors: list[Any] = []
    for _ in range(AUTH_RETRY_LIMITS["step_up"] + 1):
        refuse(http, ex, 403, www)
        errors += [e for e in session_events(http) if isinstance(e, Failed)]
        if errors:
            break
        run_flow(flow, world)
        [ex] = http.exchanges_to_start()
    assert len(errors) == 1 and isinstance(errors[0].error, InsufficientScope)


# -- retry limits -------------------------------------------------------------------------------


def test_a_401_on_a_replay_is_authorization_rejected() -> None:
    world = standard_world()
    world.issue_refresh = False
    http, flow, world, probe = protected(world, era="modern")
    refuse(http, probe)
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    assert AUTH_RETRY_LIMITS["authorize"] == 1
    refuse(http, replay)  # the token it was just given is refused too
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and isinstance(failed[0].error, AuthorizationRejected)


def test_a_401_on_a_replay_starts_no_new_authorization() -> None:
    world = standard_world()
    world.issue_refresh = False
    http, flow, world, probe = protected(world, era="modern")
    refuse(http, probe)
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    refuse(http, replay)
    assert any(isinstance(e, Failed) for e in session_events(http))
    assert not flow.busy and flow.exchanges_to_start() == []


def test_a_refreshed_token_refused_again_reauthorizes_the_request() -> None:
    http, flow, world = modern_ready()
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    refuse(http, ex)  # -> refresh
    run_flow(flow, world)
    [ex] = http.exchanges_to_start()
    refuse(http, ex)  # the refreshed token is refused: authorize from scratch
    assert session_events(http) == []
    run_flow(flow, world)
    [ex] = http.exchanges_to_start()
    ok(http, ex, {"resultType": "complete", "tools": []})
    assert isinstance(session_events(http)[0], Completed)


def test_without_auth_a_401_is_authorization_required() -> None:
    http = StreamableHttp(ClientSession(INFO), MCP)
    http.session.start(now=NOW, era="modern")
    [probe] = http.exchanges_to_start()
    refuse(http, probe)
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and isinstance(failed[0].error, AuthorizationRequired)
    assert http.exchanges_to_start() == []


def test_without_auth_a_401_on_a_call_fails_only_that_call() -> None:
    http = StreamableHttp(ClientSession(INFO), MCP, bearer_token="static")
    http.session.start(now=NOW, era="modern")
    [probe] = http.exchanges_to_start()
    assert auth_of(probe) == "Bearer static"
    ok(http, probe, DISCOVER)
    session_events(http)
    http.session.list_tools(now=NOW)
    [ex] = http.exchanges_to_start()
    refuse(http, ex)
    [failed] = session_events(http)
    assert isinstance(failed, Failed) and isinstance(failed.error, AuthorizationRequired)


def test_non_interactive_flow_fails_the_request_at_once() -> None:
    flow = make_flow(AuthConfig(interactive=False))
    http, flow, _world, probe = protected(flow=flow, era="modern")
    refuse(http, probe)
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and isinstance(failed[0].error, AuthorizationRequired)
    assert not flow.busy and flow.exchanges_to_start() == []


def test_non_interactive_flow_in_auto_era_ends_with_authorization_required() -> None:
    flow = make_flow(AuthConfig(interactive=False))
    http, flow, _world, probe = protected(flow=flow)
    refuse(http, probe)
    for ex in http.exchanges_to_start():  # the handshake fallback meets the same 401
        refuse(http, ex)
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and all(isinstance(f.error, AuthorizationRequired) for f in failed)
    assert not flow.busy and flow.exchanges_to_start() == []
    assert http.session.state.name == "CLOSED"


def test_a_denied_authorization_is_not_asked_again_by_the_era_fallback() -> None:
    http, flow, world, probe = protected()  # era auto
    refuse(http, probe)
    world.serve(flow, NOW)
    redirect = redirect_of(drain(flow))
    state = parse_qs(urlsplit(redirect.url).query)["state"][0]
    flow.receive_callback(redirect.redirect_uri + "?" + urlencode(
        {"error": "access_denied", "state": state}), now=NOW)
    assert isinstance(flow.error, AuthorizationDenied)
    for _ in range(3):
        for ex in http.exchanges_to_start():
            refuse(http, ex)
        world.serve(flow, NOW)
    assert not any(isinstance(e, RedirectRequired) for e in drain(flow))
    failed = [e for e in session_events(http) if isinstance(e, Failed)]
    assert failed and isinstance(failed[0].error, AuthorizationDenied)


def test_a_stored_token_is_sent_on_the_first_request() -> None:
    flow = make_flow(record=record_for(AS, client_id="c"))
    http, flow, _world, probe = protected(flow=flow)
    assert auth_of(probe) == "Bearer AT-old"
    ok(http, probe, DISCOVER)
    assert isinstance(session_events(http)[0], Ready)


def test_a_token_that_is_not_header_safe_does_not_break_the_transport() -> None:
    world = standard_world()
    world.routes[f"{AS}/token"] = lambda _r: response(200, {"access_token": "caf\u00e9",
                                                            "token_type": "Bearer"})
    http, flow, world, probe = protected(world)
    refuse(http, probe)
    run_flow(flow, world)
    http.exchanges_to_start()  # must not raise
    assert flow.tokens is None


def test_parked_body_is_byte_identical() -> None:
    http, flow, world, probe = protected()
    sent = probe.payload
    refuse(http, probe)
    run_flow(flow, world)
    [replay] = http.exchanges_to_start()
    assert replay.payload == sent
    assert json.loads(sent)["method"] == "server/discover"
