"""The scripted OAuth server (``tests/servers/auth_server.py``) checked by hand, with
``http.client``: what the client-authorization tests rely on it to do."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from servers.auth_server import AuthServer, loopback_redirect_follow, s256

VERIFIER = "v" * 50
REDIRECT = "http://127.0.0.1:1/callback"


def request(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None,
            form: dict[str, str] | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
    split = urllib.parse.urlsplit(url)
    hdrs = dict(headers or {})
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    elif body is not None:
        data = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(split.netloc, timeout=5)
    try:
        conn.request(method, split.path + (f"?{split.query}" if split.query else ""), data, hdrs)
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def rpc(srv: AuthServer, token: str | None, method: str, params: Any = None,
        rid: int | None = 1) -> tuple[int, http.client.HTTPMessage, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        msg["id"] = rid
    if params is not None:
        msg["params"] = params
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    status, hdrs, body = request("POST", srv.mcp_url, msg, headers)
    return status, hdrs, json.loads(body) if body else None


def register(srv: AuthServer, issuer_origin: str | None = None, **meta: Any) -> dict[str, Any]:
    meta.setdefault("redirect_uris", [REDIRECT])
    meta.setdefault("client_name", "selfcheck")
    status, _, body = request("POST", (issuer_origin or srv.as_origin) + "/register", meta)
    assert status == 201, body
    return dict(json.loads(body))


def authorize(srv: AuthServer, client_id: str, origin: str | None = None,
              **extra: str) -> dict[str, str]:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
              "code_challenge": s256(VERIFIER), "code_challenge_method": "S256",
              "state": "st-1", "resource": srv.resource, **extra}
    url = (origin or srv.as_origin) + "/authorize?" + urllib.parse.urlencode(params)
    location = loopback_redirect_follow(url)
    assert location.startswith(REDIRECT + "?")
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))


def token(srv: AuthServer, form: dict[str, str], origin: str | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    form = {"resource": srv.resource, **form}
    status, _, body = request("POST", (origin or srv.as_origin) + "/token", form=form,
                              headers=headers)
    return status, json.loads(body)


def login(srv: AuthServer, origin: str | None = None, **extra: str) -> dict[str, Any]:
    client = register(srv, origin)
    back = authorize(srv, client["client_id"], origin, **extra)
    status, tok = token(srv, {"grant_type": "authorization_code", "code": back["code"],
                              "redirect_uri": REDIRECT, "code_verifier": VERIFIER,
                              "client_id": client["client_id"]}, origin)
    assert status == 200, tok
    return tok


@pytest.fixture
def srv() -> Iterator[AuthServer]:
    with AuthServer() as server:
        yield server


def test_prm_metadata_and_log(srv: AuthServer) -> None:
    status, _, body = request("GET", srv.prm_url)
    assert status == 200
    assert json.loads(body) == {"resource": srv.mcp_url, "authorization_servers": [srv.issuer],
                                "bearer_methods_supported": ["header"]}
    assert request("GET", srv.mcp_origin + "/.well-known/oauth-protected-resource")[0] == 404
    status, _, body = request("GET", srv.issuer + "/.well-known/oauth-authorization-server")
    meta = json.loads(body)
    assert status == 200 and meta["issuer"] == srv.issuer
    assert meta["token_endpoint"] == srv.as_origin + "/token"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert request("GET", srv.mcp_url)[0] == 405
    assert request("DELETE", srv.mcp_url)[0] == 405
    assert srv.count("mcp") == 4 and srv.count("as", method="GET") == 1
    first = srv.seen("mcp", srv.prm_path)[0]
    assert first.method == "GET" and first.headers["host"] == srv.mcp_origin[7:]
    assert srv.violations == []


def test_knobbed_metadata_and_prm() -> None:
    with AuthServer(issuer_path="/tenant1", metadata_issuer="{issuer}/", pkce_methods=None,
                    prm_at_root=True, prm_resource="{mcp_origin}", iss_supported=False,
                    prm_scopes_supported=["a", "b"], registration=False) as srv:
        assert srv.issuer.endswith("/tenant1")
        root_prm = srv.mcp_origin + "/.well-known/oauth-protected-resource"
        prm = json.loads(request("GET", root_prm)[2])
        assert prm["resource"] == srv.mcp_origin and prm["scopes_supported"] == ["a", "b"]
        assert request("GET", srv.mcp_origin + "/.well-known/oauth-protected-resource/mcp")[0] \
            == 404
        meta = json.loads(request("GET", srv.metadata_url)[2])
        assert srv.metadata_url.endswith("/.well-known/oauth-authorization-server/tenant1")
        assert meta["issuer"] == srv.issuer + "/"
        assert "code_challenge_methods_supported" not in meta
        assert "registration_endpoint" not in meta
        assert "authorization_response_iss_parameter_supported" not in meta
        assert request("GET", srv.as_origin + "/.well-known/oauth-authorization-server")[0] == 404
        assert request("POST", srv.as_origin + "/register", {"redirect_uris": [REDIRECT]})[0] \
            == 404


def test_full_flow(srv: AuthServer) -> None:
    client = register(srv, grant_types=["authorization_code", "refresh_token"])
    assert client["client_id"].startswith("client-") and "client_secret" not in client
    assert client["token_endpoint_auth_method"] == "none"
    back = authorize(srv, client["client_id"], scope="mcp:basic")
    assert back["state"] == "st-1" and back["iss"] == srv.issuer
    assert back["code"].startswith("code-as1-")
    status, tok = token(srv, {"grant_type": "authorization_code", "code": back["code"],
                              "redirect_uri": REDIRECT, "code_verifier": VERIFIER,
                              "client_id": client["client_id"]})
    assert status == 200, tok
    assert tok["access_token"].startswith("at-as1-") and tok["token_type"] == "Bearer"
    assert tok["expires_in"] == 3600 and tok["scope"] == "mcp:basic"
    assert tok["refresh_token"].startswith("rt-as1-")
    at = tok["access_token"]
    status, hdrs, init = rpc(srv, at, "initialize", {"protocolVersion": "2025-06-18"})
    assert status == 200 and hdrs["Content-Type"] == "application/json"
    assert init["result"]["protocolVersion"] == "2025-06-18" and "Mcp-Session-Id" not in hdrs
    assert rpc(srv, at, "notifications/initialized", rid=None)[0] == 202
    assert rpc(srv, at, "tools/list")[2]["result"]["tools"][0]["name"] == "echo"
    res = rpc(srv, at, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})[2]
    assert res["result"] == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    assert rpc(srv, at, "ping")[2]["result"] == {}
    status, _, disc = rpc(srv, at, "server/discover")
    assert status == 400 and disc["error"]["code"] == -32601
    assert rpc(srv, at, "nope/nope")[2]["error"]["code"] == -32601
    assert srv.tokens[at].uses == 7
    assert srv.violations == []
    # the same code again, and a wrong verifier: both refused and recorded
    again = {"grant_type": "authorization_code", "code": back["code"], "redirect_uri": REDIRECT,
             "code_verifier": VERIFIER, "client_id": client["client_id"]}
    assert token(srv, again) == (400, {"error": "invalid_grant",
                                       "error_description": "code already used"})
    code2 = authorize(srv, client["client_id"])["code"]
    status, err = token(srv, {**again, "code": code2, "code_verifier": "w" * 50})
    assert status == 400 and err["error"] == "invalid_grant"
    assert any("PKCE mismatch" in v for v in srv.violations)
    assert any("used twice" in v for v in srv.violations)


def test_401_challenges_and_violations() -> None:
    with AuthServer(challenge_scope="mcp:basic") as srv:
        status, hdrs, body = rpc(srv, None, "initialize", {})
        assert status == 401 and body["error"] == "invalid_token"
        assert hdrs["WWW-Authenticate"] == (
            f'Bearer error="invalid_token", resource_metadata="{srv.mcp_origin}'
            '/.well-known/oauth-protected-resource/mcp", scope="mcp:basic"')
        assert srv.violations == []
        assert rpc(srv, "garbage", "initialize", {})[0] == 401
        assert srv.violations == ["mcp: unknown token 'garbage' sent to the MCP server"]
    with AuthServer(challenge_resource_metadata=False, token_auth_methods=["client_secret_basic"],
                    tricky_secrets=True) as srv:
        assert rpc(srv, None, "ping")[1]["WWW-Authenticate"] == 'Bearer error="invalid_token"'
        client = register(srv)
        assert client["token_endpoint_auth_method"] == "client_secret_basic"
        secret = client["client_secret"]
        code = authorize(srv, client["client_id"])["code"]
        pair = (urllib.parse.quote_plus(client["client_id"]) + ":"
                + urllib.parse.quote_plus(secret))
        basic = {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        status, tok = token(srv, {"grant_type": "authorization_code", "code": code,
                                  "redirect_uri": REDIRECT, "code_verifier": VERIFIER},
                            headers=basic)
        assert status == 200, tok
        # a token leaked to the AS (header and query) and a bearer to the metadata URL
        at = tok["access_token"]
        request("GET", srv.metadata_url + "?access_token=" + at,
                headers={"Authorization": "Bearer " + at})
        text = " | ".join(srv.violations)
        assert "access_token in the URL query" in text and f"token {at} in the URL" in text
        assert "bearer token sent" in text
    with AuthServer(no_www_authenticate=True) as srv:
        assert "WWW-Authenticate" not in rpc(srv, None, "ping")[1]
    with AuthServer(www_authenticate='Bearer realm="x", resource_metadata="{prm_url}"') as srv:
        assert rpc(srv, None, "ping")[1]["WWW-Authenticate"] == (
            f'Bearer realm="x", resource_metadata="{srv.prm_url}"')


def test_scope_expiry_and_missing_resource() -> None:
    with AuthServer(required_scope="mcp:write", required_scope_for={"tools/call"},
                    expire_after_uses=2) as srv:
        at = login(srv, scope="mcp:read")["access_token"]
        assert rpc(srv, at, "tools/list")[0] == 200
        status, hdrs, _ = rpc(srv, at, "tools/call", {"name": "echo", "arguments": {}})
        assert status == 403 and hdrs["WWW-Authenticate"] == (
            f'Bearer error="insufficient_scope", scope="mcp:write", '
            f'resource_metadata="{srv.prm_url}"')
        status, hdrs, _ = rpc(srv, at, "ping")
        assert status == 401 and 'error_description="token expired"' in hdrs["WWW-Authenticate"]
        assert srv.violations == []
        rpc(srv, at, "ping")
        assert srv.violations == [f"mcp: token {at} re-sent after it was rejected with 401"]
        srv.violations.clear()
        client = register(srv)
        params = {"response_type": "code", "client_id": client["client_id"],
                  "redirect_uri": REDIRECT, "code_challenge": s256(VERIFIER),
                  "code_challenge_method": "S256", "resource": srv.mcp_url + "/"}
        loopback_redirect_follow(srv.as_origin + "/authorize?" + urllib.parse.urlencode(params))
        assert srv.violations == [f"as: authorization request resource '{srv.mcp_url}/' != "
                                  f"PRM resource '{srv.mcp_url}'"]


def test_refresh_rotation(srv: AuthServer) -> None:
    tok = login(srv)
    cid = srv.tokens[tok["access_token"]].client_id
    rt1 = tok["refresh_token"]
    status, tok2 = token(srv, {"grant_type": "refresh_token", "refresh_token": rt1,
                               "client_id": cid})
    assert status == 200 and tok2["refresh_token"] != rt1
    assert not srv.tokens[rt1].valid and srv.tokens[tok2["refresh_token"]].valid
    status, err = token(srv, {"grant_type": "refresh_token", "refresh_token": rt1,
                              "client_id": cid})
    assert status == 400 and err["error"] == "invalid_grant"
    assert srv.violations == [f"as: refresh token {rt1} reused after it was rotated"]


def test_migration_and_cross_as_client() -> None:
    with AuthServer(migrate_after_first_call=True) as srv:
        at = login(srv)["access_token"]
        assert rpc(srv, at, "tools/list")[0] == 200
        status, hdrs, _ = rpc(srv, at, "tools/list")
        assert status == 401
        assert 'error_description="authorization server has changed"' in hdrs["WWW-Authenticate"]
        prm = json.loads(request("GET", srv.prm_url)[2])
        assert prm["authorization_servers"] == [srv.issuer2] and srv.issuer2 != srv.issuer
        meta = json.loads(request("GET", srv.metadata2_url)[2])
        assert meta["issuer"] == srv.issuer2
        at2 = login(srv, srv.as2_origin)["access_token"]
        assert at2.startswith("at-as2-") and rpc(srv, at2, "tools/list")[0] == 200
        assert srv.violations == []
        old_client = srv.tokens[at].client_id
        params = {"response_type": "code", "client_id": old_client, "redirect_uri": REDIRECT,
                  "code_challenge": s256(VERIFIER), "code_challenge_method": "S256",
                  "resource": srv.resource}
        status, _, _ = request("GET", srv.as2_origin + "/authorize?"
                               + urllib.parse.urlencode(params))
        assert status == 400
        assert srv.violations == [f"as2: authorization request with client_id {old_client} "
                                  "registered at as"]


def test_hostile_metadata_and_redirects() -> None:
    with AuthServer(metadata_oversize=True, redirect_from={"prm", "token"},
                    iss_mode="wrong") as srv:
        status, _, body = request("GET", srv.metadata_url)
        assert status == 200 and len(body) > 1024 * 1024 and json.loads(body)["issuer"]
        status, hdrs, _ = request("GET", srv.prm_url)
        assert status == 302 and hdrs["Location"] == srv.as_origin + "/elsewhere"
        status, hdrs, _ = request("POST", srv.as_origin + "/token", form={"a": "b"})
        assert status == 302 and hdrs["Location"] == srv.mcp_origin + "/elsewhere"
        client = register(srv)
        assert authorize(srv, client["client_id"])["iss"] == "https://evil.example.com"
    started = time.monotonic()
    with AuthServer(metadata_endless=True) as srv:
        with socket.create_connection(("127.0.0.1", int(srv.as_origin.rsplit(":", 1)[1])),
                                      timeout=5) as sock:
            sock.sendall(f"GET {srv.metadata_path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            got = b""
            while len(got) < 200_000:  # bounded: the server streams ~8 MB/s
                data = sock.recv(65536)
                assert data
                got += data
        assert b"Transfer-Encoding: chunked" in got and b'"padding": "' in got
        assert b"x" * 1000 in got
        # and one left open when the server stops: stop() still returns promptly
        sock2 = socket.create_connection(("127.0.0.1", int(srv.as_origin.rsplit(":", 1)[1])),
                                         timeout=5)
        sock2.sendall(f"GET {srv.metadata_path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        sock2.recv(100)
    sock2.close()
    assert time.monotonic() - started < 4


def test_authorize_error_and_client_credentials() -> None:
    with AuthServer(authorize_error="access_denied", iss_mode="omit",
                    grant_types=["authorization_code", "client_credentials"],
                    clients={"svc": {"client_secret": "pw",
                                     "token_endpoint_auth_method": "client_secret_post"}}) as srv:
        client = register(srv)
        assert authorize(srv, client["client_id"]) == {"error": "access_denied", "state": "st-1"}
        status, tok = token(srv, {"grant_type": "client_credentials", "client_id": "svc",
                                  "client_secret": "pw", "scope": "s1"})
        assert status == 200 and tok["scope"] == "s1" and "refresh_token" not in tok
        status, err = token(srv, {"grant_type": "client_credentials", "client_id": "svc",
                                  "client_secret": "bad"})
        assert status == 401 and err["error"] == "invalid_client"
        assert srv.violations == ["as: wrong client secret for svc"]
