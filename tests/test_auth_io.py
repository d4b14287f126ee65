"""The bindings' side of authorization that needs no server: the MCP server's address zone
comes from the addresses its connections used (never a second DNS answer), records are
saved newest-last whatever thread delivers them, and exchanges fail typed on names a
resolver refuses."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from mcp_proto_io.auth import OAuth
from mcp_proto_io.auth._io import AuthSetup, run_auth_exchange
from mcp_proto_io.threads import MemoryTokenStore

from mcp_proto.auth._exchange import AuthExchange
from mcp_proto.auth._urls import AuthUrl


def setup_for(url: str, store: Any = None) -> AuthSetup:
    return AuthSetup(OAuth(redirect=lambda u: u, store=store or MemoryTokenStore()), url)


def test_the_zone_is_the_strictest_of_the_addresses_used() -> None:
    setup = setup_for("https://mcp.example.test/mcp")
    flow = setup.new_flow()  # the flow decides; the setup tells it where the server is
    assert setup.quick_zone() == "public"  # a name, nothing observed: the strictest rule
    setup.observe_peer("10.0.0.5")
    assert setup.quick_zone() == "private"
    assert flow.address_allowed("10.0.0.6") and not flow.address_allowed("127.0.0.1")
    setup.observe_peer("127.0.0.1")  # a rebinding answer: never loosens the rule
    assert setup.quick_zone() == "private"
    setup.observe_peer("93.184.216.34")
    assert setup.quick_zone() == "public"
    assert not flow.address_allowed("10.0.0.6")
    setup.observe_peer("10.0.0.5")
    assert setup.quick_zone() == "public"


def test_a_literal_host_has_its_own_zone_before_any_connection() -> None:
    assert setup_for("http://127.0.0.1:8000/mcp").quick_zone() == "loopback"
    assert setup_for("http://localhost:8000/mcp").quick_zone() == "loopback"
    assert setup_for("https://10.1.2.3/mcp").quick_zone() == "private"


class CountingStore(MemoryTokenStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def save(self, key: str, record: dict[str, Any]) -> None:
        self.writes.append(record["n"])
        super().save(key, record)


def test_an_older_snapshot_arriving_late_is_not_saved() -> None:
    store = CountingStore()
    setup = setup_for("http://127.0.0.1:8000/mcp", store)
    setup.save("k", {"n": 2}, 2)
    setup.save("k", {"n": 1}, 1)  # delivered late by another thread
    assert store.load("k") == {"n": 2} and store.writes == [2]


def test_a_new_connections_flow_numbers_its_records_after_the_old_ones() -> None:
    # One counter for every flow of a client: a reconnect's records are never taken for
    # stale ones (an id() of a dead flow can come back; a counter cannot).
    store = CountingStore()
    setup = setup_for("http://127.0.0.1:8000/mcp", store)
    serials = []
    for _ in range(3):
        flow = setup.new_flow()
        flow.forget()
        event = flow.next_event()
        assert event is not None
        serials.append(event.serial)  # type: ignore[union-attr]
        setup.save(flow.key, {"n": event.serial}, event.serial)  # type: ignore[union-attr]
    assert serials == sorted(serials) and len(set(serials)) == 3
    assert store.writes == serials


def test_concurrent_saves_keep_the_newest() -> None:
    store = CountingStore()
    setup = setup_for("http://127.0.0.1:8000/mcp", store)
    threads = [threading.Thread(target=setup.save, args=("k", {"n": n}, n))
               for n in range(1, 41)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert store.load("k") == {"n": 40}
    assert store.writes == sorted(store.writes)  # never an older one after a newer one


@pytest.mark.parametrize("host", ["a..example.com", "x" * 64 + ".example.com"])
def test_a_name_the_resolver_refuses_fails_the_exchange_typed(host: str) -> None:
    # Built past the URL policy (which refuses these names) to check the binding's own net.
    url = AuthUrl("https", host, 443, "/token", "", f"https://{host}/token")
    ex = AuthExchange.build(1, "token", url, method="GET", deadline=1e18)
    result = run_auth_exchange(ex, lambda address: True, None)
    assert isinstance(result, str) and "cannot resolve" in result
