"""Subscriptions survive a server restart (SB-04 "stdio restart => MUST re-listen"; H-11's
implementation note for the handshake era): the binding hands the old session's
``subscriptions`` to the new session's ``start``."""

from __future__ import annotations

import json
from typing import Any

from mcp_proto import ClientSession, Implementation, Ready

INFO = Implementation(name="t", version="1")


def sent(session: ClientSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.data_to_send().splitlines()]


def feed(session: ClientSession, *objs: dict[str, Any]) -> None:
    session.receive_data(b"".join(json.dumps(o).encode() + b"\n" for o in objs), now=1.0)


def test_legacy_session_renews_subscriptions_after_ready() -> None:
    old = ClientSession(INFO)
    old.initialize(now=0.0)
    [init] = sent(old)
    feed(old, {"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"resources": {"subscribe": True}},
        "serverInfo": {"name": "s", "version": "1"}}})
    sent(old)
    old.subscribe("file:///a", now=1.0)
    old.subscribe("file:///b", now=1.0)
    old.unsubscribe("file:///b", now=1.0)
    assert old.subscriptions == {"file:///a"}

    new = ClientSession(INFO)
    new.start(now=2.0, era="legacy", subscriptions=old.subscriptions)
    [init] = sent(new)
    feed(new, {"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"resources": {"subscribe": True}},
        "serverInfo": {"name": "s", "version": "1"}}})
    out = sent(new)
    assert [m["method"] for m in out] == ["notifications/initialized", "resources/subscribe"]
    assert out[1]["params"] == {"uri": "file:///a"}
    assert isinstance(new.next_event(), Ready)


def test_modern_session_listens_for_renewed_subscriptions() -> None:
    new = ClientSession(INFO)
    new.start(now=0.0, era="modern", subscriptions={"file:///a"})
    [probe] = sent(new)
    assert probe["method"] == "server/discover"
    feed(new, {"jsonrpc": "2.0", "id": probe["id"], "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"resources": {"subscribe": True}}}})
    [listen] = sent(new)
    assert listen["method"] == "subscriptions/listen"
    assert listen["params"]["notifications"] == {"resourceSubscriptions": ["file:///a"]}


def test_renewal_needs_the_subscribe_capability() -> None:
    new = ClientSession(INFO)
    new.start(now=0.0, era="legacy", subscriptions={"file:///a"})
    [init] = sent(new)
    feed(new, {"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"resources": {}},
        "serverInfo": {"name": "s", "version": "1"}}})
    assert [m["method"] for m in sent(new)] == ["notifications/initialized"]
    assert new.subscriptions == frozenset()
