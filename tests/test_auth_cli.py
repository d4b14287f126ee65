"""``mcp-proto login`` / ``logout`` / ``auth status``, and the stored tokens of ``--url``
commands, against the scripted authorization server (a real loopback listener and a stand-in
browser that follows the authorization server's redirect to it)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from servers.auth_server import AuthServer

REPO = Path(__file__).resolve().parent.parent
BROWSER = Path(__file__).resolve().parent / "servers" / "follow_browser.py"
TIMEOUT = 60


def cli(*argv: str, store: Path, browser: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "bindings")])
    if browser:
        env["BROWSER"] = f"{sys.executable} {BROWSER} %s &"
    else:
        env.pop("BROWSER", None)
    return subprocess.run([sys.executable, "-m", "mcp_proto_io", *argv, "--store", str(store)],
                          capture_output=True, text=True, env=env, timeout=TIMEOUT,
                          check=False)


def secrets_of(srv: AuthServer) -> list[str]:
    values = list(srv.tokens)
    values += [c.secret for c in srv.clients.values() if c.secret]
    values += list(srv.codes)
    return values


@pytest.fixture
def srv() -> AuthServer:
    with AuthServer() as server:
        yield server  # type: ignore[misc]


def test_login_then_tools_then_logout(srv: AuthServer, tmp_path: Path) -> None:
    store = tmp_path / "tokens"
    before = cli("tools", "--url", srv.mcp_url, store=store)
    assert before.returncode == 1
    assert "mcp-proto login --url" in before.stderr
    assert srv.count("as", "/authorize") == 0  # not interactive: no browser, no discovery

    # --no-browser prints the URL instead of opening it; nobody visits it here, so the login
    # ends when its timeout does, saying so, and nothing is stored.
    login = cli("login", "--url", srv.mcp_url, "--no-browser", "--timeout", "2", store=store,
                browser=True)
    assert login.returncode == 1
    assert f"{srv.issuer}/authorize?" in login.stderr
    assert "no authorization within 2 s" in login.stderr
    assert srv.count("as", "/token") == 0
    login = cli("login", "--url", srv.mcp_url, "--timeout", "30", store=store, browser=True)
    assert login.returncode == 0, login.stderr
    assert f"logged in to {srv.mcp_url} via {srv.issuer}" in login.stdout
    assert srv.count("as", "/authorize") >= 1 and srv.count("as", "/token") >= 1
    files = [p for p in store.iterdir() if p.suffix == ".json"]
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(store.stat().st_mode) == 0o700

    authorizations = srv.count("as", "/authorize")
    tools = cli("tools", "--url", srv.mcp_url, store=store)
    assert tools.returncode == 0, tools.stderr
    assert "echo" in tools.stdout
    assert srv.count("as", "/authorize") == authorizations  # the stored token was used

    status = cli("auth", "status", store=store)
    assert status.returncode == 0
    assert srv.mcp_url in status.stdout and "logged in" in status.stdout
    as_json = cli("auth", "status", "--json", store=store)
    rows = json.loads(as_json.stdout)
    assert rows[0]["issuer"] == srv.issuer and rows[0]["authorized"] is True

    for result in (login, tools, status, as_json):
        for secret in secrets_of(srv):
            assert secret not in result.stdout + result.stderr

    out = cli("logout", "--url", srv.mcp_url, store=store)
    assert out.returncode == 0 and "logged out" in out.stdout
    assert "no stored authorization" in cli("auth", "status", store=store).stdout
    again = cli("tools", "--url", srv.mcp_url, store=store)
    assert again.returncode == 1 and "login" in again.stderr
    assert srv.violations == []


def test_unsafe_store_is_not_used(srv: AuthServer, tmp_path: Path) -> None:
    store = tmp_path / "tokens"
    store.mkdir(mode=0o755)
    store.chmod(0o755)
    result = cli("tools", "--url", srv.mcp_url, store=store)
    assert result.returncode == 1
    assert "stored tokens not used" in result.stderr
