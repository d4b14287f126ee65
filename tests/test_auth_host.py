"""Config files carry authorization: an HTTP entry's OAuth block (Gemini ``oauth``, Cursor
``auth``) and the host's store and redirect handler, against the scripted authorization
server.  What the authorization server saw is checked, not only what the host returned."""

from __future__ import annotations

import time
from typing import Any

from mcp_proto_io.threads import MemoryTokenStore, connect_config
from servers.auth_server import AuthServer, loopback_redirect_follow

from mcp_proto.host import OAuthSettings, ServerSpec, oauth_settings

WAIT = 20.0  # seconds a host gets to start its servers


def _wait_started(host: Any, name: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = host.servers()[name]
        if status.state in ("running", "failed", "backoff") or status.error:
            return status
        time.sleep(0.02)
    return host.servers()[name]


def test_gemini_oauth_block_scopes_and_host_redirect() -> None:
    with AuthServer() as srv:
        config = {"mcpServers": {"prot": {"httpUrl": srv.mcp_url,
                                          "oauth": {"enabled": True,
                                                    "scopes": ["mcp:read", "mcp:x"]}}}}
        store = MemoryTokenStore()
        with connect_config(config, dialect="gemini", auth_redirect=loopback_redirect_follow,
                            auth_store=store, restart=None, timeout=10) as host:
            names = [t.name for t in host.list_tools()]
            assert "prot__echo" in names
            result = host.call_tool("prot__echo", {"text": "hi"})
            assert result.text == "hi"
        authorize = srv.seen("as", "/authorize")
        assert len(authorize) == 1
        assert authorize[0].q("scope") is not None
        assert {"mcp:read", "mcp:x"} <= set(authorize[0].q("scope").split())
        assert store.keys() == [srv.mcp_url]
        assert srv.violations == []


def test_cursor_auth_block_preregistered_client() -> None:
    clients = {"cursor-client": {"client_secret": "cursor-secret",
                                 "token_endpoint_auth_method": "client_secret_basic"}}
    with AuthServer(registration=False, clients=clients,
                    token_auth_methods=["client_secret_basic"]) as srv:
        config = {"mcpServers": {"prot": {"url": srv.mcp_url,
                                          "auth": {"CLIENT_ID": "cursor-client",
                                                   "CLIENT_SECRET": "cursor-secret"}}}}
        with connect_config(config, dialect="cursor", auth_redirect=loopback_redirect_follow,
                            auth_store=MemoryTokenStore(), restart=None, timeout=10) as host:
            assert "prot__echo" in [t.name for t in host.list_tools()]
        assert srv.count("as", "/register") == 0
        token = srv.seen("as", "/token")
        assert token and token[0].authorization is not None
        assert token[0].authorization.startswith("Basic ")
        assert srv.violations == []


def test_without_a_redirect_handler_the_server_fails_typed_and_nothing_is_asked() -> None:
    with AuthServer() as srv:
        config = {"mcpServers": {"prot": {"httpUrl": srv.mcp_url}}}
        with connect_config(config, dialect="gemini", auth_store=MemoryTokenStore(),
                            restart=None, timeout=10) as host:
            status = _wait_started(host, "prot")
            assert status.state == "failed"
            assert status.error is not None and "AuthorizationRequired" in status.error
            assert "mcp-proto login" in status.error
        assert srv.count("as") == 0  # no discovery, no registration, no browser


def test_oauth_settings_of_each_dialect_shape() -> None:
    def spec(raw: dict[str, Any]) -> ServerSpec:
        return ServerSpec(name="s", transport="http", url="https://x.example/mcp", raw=raw)

    assert oauth_settings(spec({})) is None
    assert oauth_settings(spec({"auth": "oauth"})) == OAuthSettings()
    gemini = oauth_settings(spec({"oauth": {"enabled": False, "clientId": "a"}}))
    assert gemini is not None and gemini.enabled is False and gemini.client_id == "a"
    cursor = oauth_settings(spec({"auth": {"CLIENT_ID": "c", "CLIENT_SECRET": "s",
                                           "scopes": ["a", "b"]}}))
    assert cursor == OAuthSettings(client_id="c", client_secret="s", scope="a b")
    templated = oauth_settings(spec({"oauth": {"client_secret": "${SECRET}",
                                               "client_secret_env_var": "SECRET"}}))
    assert templated is not None and templated.client_secret is None
    assert templated.client_secret_env_var == "SECRET"
    assert "client_secret=" not in repr(cursor)
    assert oauth_settings(ServerSpec(name="s", command=("x",), raw={"oauth": {}})) is None
