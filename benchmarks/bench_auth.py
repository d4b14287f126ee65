"""Client authorization (OAuth 2.1 for MCP): what an authorized call costs against an
unauthorized one on the same server, and how long a 401 takes to turn into a first result,
for mcp-proto and the official SDK (mcp 2.3.0) in the same run.

    python benchmarks/bench_auth.py [--quick] [--pin CPUS] [--json PATH]

The server is ``tests/servers/auth_server.py`` (the scripted authorization server and the
protected MCP server of the auth tests: stdlib ``http.server``, one thread and one TCP
connection per request) run in a process of its own, through a subclass that adds two things
and changes nothing else: a switch that lets requests *without* ``Authorization`` through
(everything else, including the check of a token that is sent, is the same code), and a
``/_bench/...`` endpoint that reports what the server saw. Four clients, each in a fresh child
process with a fresh server process:

* ``threads``: ``mcp_proto_io.threads.connect_http(url, auth=OAuth(...))``;
* ``asyncio``: ``mcp_proto_io.asyncio.connect_http`` under ``asyncio.run``;
* ``sdk``: ``Client(streamable_http_client(url, http_client=<httpx2 client with
  OAuthClientProvider>), mode="legacy")``;
* ``raw``: no library, ``http.client`` POSTing JSON-RPC by hand (the floor), and for the
  cold start the shortest sequence of requests the flow needs, by hand.

What is measured:

1. **The header**: sequential ``tools/call echo``. Each child authorizes one client (the
   server challenges), then opens the server to requests without a token and opens a client
   with no auth and an identical twin of it (the control). Repeats are interleaved client by
   client (the order rotates, so no client always goes first); the ratio
   authorized/unauthorized (and twin/unauthorized: the machine's noise) is taken per repeat
   and its median printed. While the token is fresh, the authorized run must
   not ask the authorization server anything: the server's log counts are printed.
2. **401 to first result**: a fresh client with an empty token store, and (ours) a fresh
   era memory, calls ``echo``; the time from the server's first 401 to the client holding
   the result (discovery, registration, the authorization redirect played by
   ``loopback_redirect_follow``, the token request, the replay and the call). Median of the
   cold starts after the first one of each process (the first, with its lazy imports, is
   shown apart), in rounds of fresh child processes taken client after client; ours/SDK is
   taken per round.
3. **mcp-proto's own cost**: the sans-IO ``mcp_proto.OAuthFlow`` driven from the challenge to
   ``Authorized`` with canned answers and no sockets (microseconds per full flow).

Numbers gate nothing: the exit status is 0 whatever they are.
"""

# ruff: noqa: PLC0415 - each child imports only the client it measures
from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import hashlib
import http.client
import importlib.util
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

AUTH_SERVER = C.REPO / "tests" / "servers" / "auth_server.py"
ECHO = {"text": "hello world"}
CALLS = ("auth", "plain", "twin")
CLIENTS = ("threads", "asyncio", "sdk", "raw")
#: The redirect URI the SDK registers (never connected to: the "browser" stops at the 302).
SDK_REDIRECT = "http://127.0.0.1:33418/callback"
T = 30.0


# -- the server ----------------------------------------------------------------------------


def _auth_module() -> Any:
    """``tests/servers/auth_server.py`` by path (``benchmarks/servers`` shadows ``servers``)."""
    name = "bench_auth_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, AUTH_SERVER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _bench_server_class() -> Any:
    mod = _auth_module()

    class BenchServer(mod.AuthServer):  # type: ignore[misc, name-defined]
        """The scripted servers, plus: ``open`` lets a POST /mcp *without* Authorization
        through (a request with one is checked as always), the time of every 401, and
        ``GET /_bench/open`` / ``GET /_bench/stats?since=T`` on the MCP listener."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.open = False
            self.challenged: list[float] = []
            self.anonymous = mod.Token("anonymous", "access", "as", "-", None, None)

        def _authenticate(self, seen: Any) -> Any:
            if self.open and not seen.authorization:
                return self.anonymous, None
            return super()._authenticate(seen)

        def _unauthorized(self, description: str | None, tok: Any = None) -> Any:
            self.challenged.append(time.monotonic())
            return super()._unauthorized(description, tok)

        def _route_mcp(self, seen: Any) -> Any:
            if seen.path == "/_bench/open":
                self.open = True
                return mod._json_reply(200, {"open": True})
            if seen.path == "/_bench/stats":
                return mod._json_reply(200, self._stats(float(seen.q("since") or 0.0)))
            return super()._route_mcp(seen)

        def _stats(self, since: float) -> dict[str, Any]:
            out = {"as": 0, "metadata": 0, "bearer_posts": 0, "plain_posts": 0, "requests": 0}
            with self._lock:
                log = [s for s in self.log if s.at >= since]
                challenged = [t for t in self.challenged if t >= since]
            for s in log:
                if s.path.startswith("/_bench/"):
                    continue
                out["requests"] += 1
                if s.server in ("as", "as2"):
                    out["as"] += 1
                elif s.path != "/mcp":
                    out["metadata"] += 1
                elif s.method == "POST":
                    out["bearer_posts" if s.authorization else "plain_posts"] += 1
            return {**out, "first_401": challenged[0] if challenged else None,
                    "violations": list(self.violations)}

    return BenchServer


def child_server(_args: argparse.Namespace) -> None:
    """Run the servers until stdin closes; print their URLs first, the violations last."""
    srv = _bench_server_class()().start()
    print(json.dumps({"mcp_url": srv.mcp_url, "origin": srv.mcp_origin}), flush=True)
    sys.stdin.read()
    violations = list(srv.violations)
    srv.stop()
    print(json.dumps({"violations": violations}), flush=True)


class ServerProcess:
    def __init__(self, pin: list[str]) -> None:
        me = [sys.executable, str(Path(__file__).resolve())]
        self.proc = subprocess.Popen([*me, "--child", "server", *pin], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=C.child_env())
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"auth server did not start: {line!r}")
        self.url = json.loads(line)["mcp_url"]

    def stop(self) -> list[str]:
        out, _ = self.proc.communicate(timeout=20)
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        return json.loads(lines[-1])["violations"] if lines else ["no answer from the server"]


def _origin(url: str) -> str:
    s = urllib.parse.urlsplit(url)
    return f"{s.scheme}://{s.netloc}"


def _bench(url: str, what: str, since: float = 0.0) -> dict[str, Any]:
    """GET ``/_bench/<what>`` on the MCP listener."""
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=T)
    try:
        conn.request("GET", f"/_bench/{what}?since={since!r}")
        resp = conn.getresponse()
        return dict(json.loads(resp.read()))
    finally:
        conn.close()


def _follow(url: str) -> str:
    return str(_auth_module().loopback_redirect_follow(url))


def _text(result: Any) -> str:
    return str(result.content[0].text)


# -- (1) the header: sequential calls, authorized vs unauthorized ----------------------------


def _orders(repeats: int) -> list[tuple[str, ...]]:
    """The order of the clients in each repeat: rotated, so none is always first."""
    return [CALLS[i % 3:] + CALLS[:i % 3] for i in range(repeats)]


def _interleave(calls: dict[str, Any], n: int, repeats: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in calls}
    for order in _orders(repeats):
        for key in order:
            call = calls[key]
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(n):
                call()
            out[key].append((time.perf_counter() - t0) / n)
    return out


def _warmup(n: int) -> int:
    """Calls each client makes before it is timed, so connections are open and first-call
    costs are paid (half a repeat, at least 30)."""
    return max(30, n // 2)


async def _ainterleave(url: str, clients: dict[str, Any], n: int, repeats: int
                       ) -> dict[str, Any]:
    """The same for clients whose ``call_tool`` is awaited; with the server's counts."""
    t0 = time.monotonic()
    out: dict[str, list[float]] = {k: [] for k in clients}
    for order in _orders(repeats):
        for key in order:
            c = clients[key]
            gc.collect()
            t1 = time.perf_counter()
            for _ in range(n):
                await c.call_tool("echo", ECHO)
            out[key].append((time.perf_counter() - t1) / n)
    return {"per_call": out, "seen": _seen(url, t0)}


def _seen(url: str, since: float) -> dict[str, int]:
    stats = _bench(url, "stats", since)
    return {k: stats[k] for k in ("as", "metadata", "bearer_posts", "plain_posts")}


def _checked(url: str, run: Any) -> dict[str, Any]:
    """Run the timed part between two server stat snapshots."""
    t0 = time.monotonic()
    per_call = run()
    return {"per_call": per_call, "seen": _seen(url, t0)}


def warm_threads(url: str, n: int, repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.threads import MemoryTokenStore, OAuth, connect_http
    auth = OAuth(client_name="bench", redirect=_follow, store=MemoryTokenStore())
    with connect_http(url, auth=auth, timeout=T) as authed:
        assert _text(authed.call_tool("echo", ECHO)) == ECHO["text"]  # the flow runs here
        _bench(url, "open")
        with connect_http(url, timeout=T) as plain, connect_http(url, timeout=T) as twin:
            clients = {"auth": authed, "plain": plain, "twin": twin}
            for c in clients.values():
                for _ in range(_warmup(n)):
                    c.call_tool("echo", ECHO)
            calls = {k: (lambda c=c: c.call_tool("echo", ECHO)) for k, c in clients.items()}
            return _checked(url, lambda: _interleave(calls, n, repeats))


def warm_asyncio(url: str, n: int, repeats: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io.asyncio import MemoryTokenStore, OAuth, connect_http

    async def redirect(auth_url: str) -> str:
        return _follow(auth_url)  # blocks the loop briefly, as the SDK's handler does

    async def main() -> dict[str, Any]:
        auth = OAuth(client_name="bench", redirect=redirect, store=MemoryTokenStore())
        async with connect_http(url, auth=auth, timeout=T) as authed:
            assert _text(await authed.call_tool("echo", ECHO)) == ECHO["text"]
            _bench(url, "open")
            async with connect_http(url, timeout=T) as plain, \
                    connect_http(url, timeout=T) as twin:
                return await _awarm_and_interleave(
                    url, {"auth": authed, "plain": plain, "twin": twin}, n, repeats)

    return asyncio.run(main())


async def _awarm_and_interleave(url: str, clients: dict[str, Any], n: int,
                                repeats: int) -> dict[str, Any]:
    """Warm every async client up, then time them interleaved repeat by repeat."""
    for c in clients.values():
        for _ in range(_warmup(n)):
            await c.call_tool("echo", ECHO)
    return await _ainterleave(url, clients, n, repeats)


class _SdkStore:
    """The SDK's ``TokenStorage`` protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def _sdk_client(url: str, oauth: bool) -> Any:
    """``Client`` over streamable HTTP, with an ``OAuthClientProvider`` when ``oauth``."""
    from contextlib import asynccontextmanager

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if not oauth:
        return Client(url, mode="legacy")
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    callback: dict[str, str] = {}

    async def redirect_handler(auth_url: str) -> None:
        callback["url"] = _follow(auth_url)  # the browser: GET, no redirect followed

    async def callback_handler() -> AuthorizationCodeResult:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(callback.pop("url")).query)
        return AuthorizationCodeResult(code=q["code"][0], state=(q.get("state") or [None])[0],
                                       iss=(q.get("iss") or [None])[0])

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=[SDK_REDIRECT], grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], token_endpoint_auth_method="none", client_name="bench"),
        storage=_SdkStore(), redirect_handler=redirect_handler,
        callback_handler=callback_handler)

    @asynccontextmanager
    async def transport() -> Any:
        async with create_mcp_http_client(auth=provider) as http, \
                streamable_http_client(url, http_client=http) as streams:
            yield streams

    return Client(transport(), mode="legacy")


def warm_sdk(url: str, n: int, repeats: int) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with _sdk_client(url, oauth=True) as authed:
            assert _text(await authed.call_tool("echo", ECHO)) == ECHO["text"]
            _bench(url, "open")
            async with _sdk_client(url, oauth=False) as plain, \
                    _sdk_client(url, oauth=False) as twin:
                return await _awarm_and_interleave(
                    url, {"auth": authed, "plain": plain, "twin": twin}, n, repeats)

    return asyncio.run(main())


class _RawClient:
    """JSON-RPC over ``http.client`` by hand (handshake era); it reconnects by itself when the
    server closes (this one closes after every answer)."""

    def __init__(self, url: str, token: str | None = None) -> None:
        split = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(split.netloc, timeout=T)
        self.path = split.path
        self.headers = {"Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self.next_id = 0

    def post(self, method: str, params: dict[str, Any] | None = None) -> tuple[int, Any, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.conn.request("POST", self.path, json.dumps(msg).encode(), self.headers)
        resp = self.conn.getresponse()
        body = resp.read()
        return resp.status, resp, json.loads(body) if body else None

    def initialize(self) -> Any:
        status, resp, _body = self.post("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}})
        if status != 200:
            return status, resp
        self.conn.request("POST", self.path,
                          b'{"jsonrpc":"2.0","method":"notifications/initialized"}', self.headers)
        self.conn.getresponse().read()
        return status, resp

    def echo(self) -> str:
        status, _, body = self.post("tools/call", {"name": "echo", "arguments": ECHO})
        assert status == 200, status
        return str(body["result"]["content"][0]["text"])

    def close(self) -> None:
        self.conn.close()


def _get_json(url: str, method: str = "GET", body: bytes | None = None,
              ctype: str | None = None) -> tuple[int, Any, Any]:
    split = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(split.netloc, timeout=T)
    try:
        headers = {"Accept": "application/json"}
        if ctype:
            headers["Content-Type"] = ctype
        conn.request(method, split.path + (f"?{split.query}" if split.query else ""), body,
                     headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, resp, json.loads(data) if data else None
    finally:
        conn.close()


def raw_authorize(url: str) -> tuple[_RawClient, str]:
    """The whole flow by hand, no checks beyond the essential: 401 -> resource metadata ->
    authorization server metadata -> registration -> authorize (the 302) -> token -> the
    handshake again with the token.  Returns the initialized client and its token."""
    client = _RawClient(url)
    status, resp = client.initialize()
    assert status == 401, status
    client.close()
    www = resp.getheader("WWW-Authenticate") or ""
    prm_url = re.search(r'resource_metadata="([^"]+)"', www).group(1)  # type: ignore[union-attr]
    _, _, prm = _get_json(prm_url)
    issuer = prm["authorization_servers"][0]
    split = urllib.parse.urlsplit(issuer)
    _, _, meta = _get_json(f"{split.scheme}://{split.netloc}/.well-known/"
                           f"oauth-authorization-server{split.path.rstrip('/')}")
    redirect_uri = "http://127.0.0.1:33419/callback"
    _, _, reg = _get_json(meta["registration_endpoint"], "POST", json.dumps({
        "client_name": "raw", "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"}).encode(), "application/json")
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(
        hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": reg["client_id"], "redirect_uri": redirect_uri,
        "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
        "resource": prm["resource"]})
    callback = _follow(f"{meta['authorization_endpoint']}?{query}")
    back = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query)
    assert back["state"] == [state]
    form = urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": back["code"][0],
        "redirect_uri": redirect_uri, "client_id": reg["client_id"],
        "code_verifier": verifier, "resource": prm["resource"]}).encode()
    status, _, tok = _get_json(meta["token_endpoint"], "POST", form,
                               "application/x-www-form-urlencoded")
    assert status == 200, tok
    client = _RawClient(url, tok["access_token"])
    status, _ = client.initialize()
    assert status == 200, status
    return client, tok["access_token"]


def warm_raw(url: str, n: int, repeats: int) -> dict[str, Any]:
    authed, _token = raw_authorize(url)
    _bench(url, "open")
    plain, twin = _RawClient(url), _RawClient(url)
    plain.initialize()
    twin.initialize()
    clients = {"auth": authed, "plain": plain, "twin": twin}
    for c in clients.values():
        for _ in range(_warmup(n)):
            c.echo()
    calls = {k: c.echo for k, c in clients.items()}
    try:
        return _checked(url, lambda: _interleave(calls, n, repeats))
    finally:
        for c in clients.values():
            c.close()


# -- (2) from the first 401 to the first result ----------------------------------------------


def cold_threads(url: str, k: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io._era import EraMemory
    from mcp_proto_io.threads import MemoryTokenStore, OAuth, connect_http

    holder: list[float] = []

    def one() -> None:
        auth = OAuth(client_name="bench", redirect=_follow, store=MemoryTokenStore())
        with connect_http(url, auth=auth, timeout=T, era_memory=EraMemory()) as c:
            assert _text(c.call_tool("echo", ECHO)) == ECHO["text"]
            holder.append(time.monotonic())

    return _cold_loop(url, k, one, holder)


def _cold_loop(url: str, k: int, one: Any, holder: list[float]) -> dict[str, Any]:
    """``k + 1`` cold starts (the first one of the process is kept apart); the end of each is
    what ``one`` appended to ``holder``: the result in hand, before the client closes."""
    times: list[float] = []
    seen: list[dict[str, Any]] = []
    for _ in range(k + 1):
        t0 = time.monotonic()
        one()
        stats = _bench(url, "stats", t0)
        assert stats["first_401"] is not None, "the server never challenged"
        times.append(holder.pop() - stats["first_401"])
        seen.append({key: stats[key] for key in ("requests", "as", "metadata",
                                                 "bearer_posts", "plain_posts")})
    return {"first": times[0], "cold": times[1:], "seen": seen[-1]}


def cold_asyncio(url: str, k: int) -> dict[str, Any]:
    C.setup_path()
    from mcp_proto_io._era import EraMemory
    from mcp_proto_io.asyncio import MemoryTokenStore, OAuth, connect_http

    async def redirect(auth_url: str) -> str:
        return _follow(auth_url)

    holder: list[float] = []

    async def one() -> None:
        auth = OAuth(client_name="bench", redirect=redirect, store=MemoryTokenStore())
        async with connect_http(url, auth=auth, timeout=T, era_memory=EraMemory()) as c:
            assert _text(await c.call_tool("echo", ECHO)) == ECHO["text"]
            holder.append(time.monotonic())

    loop = asyncio.new_event_loop()
    try:
        return _cold_loop(url, k, lambda: loop.run_until_complete(one()), holder)
    finally:
        loop.close()


def cold_sdk(url: str, k: int) -> dict[str, Any]:
    holder: list[float] = []

    async def one() -> None:
        async with _sdk_client(url, oauth=True) as c:
            assert _text(await c.call_tool("echo", ECHO)) == ECHO["text"]
            holder.append(time.monotonic())

    loop = asyncio.new_event_loop()
    try:
        return _cold_loop(url, k, lambda: loop.run_until_complete(one()), holder)
    finally:
        loop.close()


def cold_raw(url: str, k: int) -> dict[str, Any]:
    holder: list[float] = []

    def one() -> None:
        client, _ = raw_authorize(url)
        assert client.echo() == ECHO["text"]
        holder.append(time.monotonic())
        client.close()

    return _cold_loop(url, k, one, holder)


# -- (3) the sans-IO flow's own cost -----------------------------------------------------------


def child_flow(n: int, repeats: int) -> dict[str, Any]:
    """``OAuthFlow`` from a 401 to ``Authorized`` with canned answers (no sockets)."""
    C.setup_path()
    from mcp_proto import AuthConfig, OAuthFlow
    from mcp_proto.auth._events import Authorized, RedirectRequired

    mcp, issuer = "http://127.0.0.1:8000/mcp", "http://127.0.0.1:9000"
    prm_url = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
    www = [f'Bearer error="invalid_token", resource_metadata="{prm_url}"']

    def reply(status: int, doc: dict[str, Any]) -> bytes:
        body = json.dumps(doc).encode()
        return (f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body

    answers = {
        "protected resource metadata": reply(200, {
            "resource": mcp, "authorization_servers": [issuer],
            "bearer_methods_supported": ["header"]}),
        "authorization server metadata": reply(200, {
            "issuer": issuer, "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True}),
        "registration": reply(201, {
            "client_id": "client-1", "client_id_issued_at": 1_700_000_000,
            "token_endpoint_auth_method": "none", "client_name": "bench",
            "redirect_uris": ["http://127.0.0.1:33418/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"]}),
        "token": reply(200, {
            "access_token": "at-as1-1", "token_type": "Bearer", "expires_in": 3600,
            "refresh_token": "rt-as1-2"}),
    }
    iss = urllib.parse.quote(issuer, safe="")
    config = AuthConfig(client_name="bench", redirect_uri="http://127.0.0.1:33418/callback")
    now = 1000.0

    def serve(flow: Any) -> None:
        while exchanges := flow.exchanges_to_start():
            for ex in exchanges:
                flow.receive_exchange_data(ex.id, answers[ex.purpose], now=now)

    def one() -> None:
        flow = OAuthFlow(config, mcp, random_bytes=os.urandom, wall_offset=1.7e9,
                         mcp_zone="loopback")
        assert flow.on_challenge(401, www, None, flow.generation, now) == "authorize"
        serve(flow)
        redirect = None
        while (event := flow.next_event()) is not None:
            if isinstance(event, RedirectRequired):
                redirect = event
        assert redirect is not None, flow.error
        state = redirect.url.partition("state=")[2].partition("&")[0]
        flow.receive_callback(f"{redirect.redirect_uri}?code=code-1&state={state}&iss={iss}",
                              now=now)
        serve(flow)
        authorized = False
        while (event := flow.next_event()) is not None:
            authorized = authorized or isinstance(event, Authorized)
        assert authorized and flow.headers("POST", now), flow.error

    for _ in range(max(50, n // 10)):
        one()
    out: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            one()
        out.append((time.perf_counter() - t0) / n)
    return {"flow": out}


# -- children and the parent ---------------------------------------------------------------------

WARM = {"threads": warm_threads, "asyncio": warm_asyncio, "sdk": warm_sdk, "raw": warm_raw}
COLD = {"threads": cold_threads, "asyncio": cold_asyncio, "sdk": cold_sdk, "raw": cold_raw}


def child_main(args: argparse.Namespace) -> None:
    if args.child == "server":
        child_server(args)
        return
    if args.child == "flow":
        C.emit(child_flow(args.n, args.repeats))
        return
    kind, _, which = args.child.partition(":")
    try:
        if kind == "warm":
            res = WARM[which](args.url, args.n, args.repeats)
        else:
            res = COLD[which](args.url, args.k)
    except ImportError as exc:
        res = {"error": C.not_importable(exc) if which != "sdk" else f"mcp: {exc}"}
    C.emit(res)


def collect(*, quick: bool, pin: str | None = None) -> dict[str, Any]:
    n = 50 if quick else 100
    repeats = 3 if quick else 21
    rounds = 1 if quick else 5
    k = 3 if quick else 5
    flow_n, flow_repeats = (300, 3) if quick else (2000, 5)
    me = [sys.executable, str(Path(__file__).resolve())]
    pinned = ["--pin", pin] if pin else []

    def with_server(child: str, *extra: str) -> dict[str, Any]:
        srv = ServerProcess(pinned)
        try:
            res = C.run_child([*me, "--child", child, "--url", srv.url, *pinned, *extra], 600)
        finally:
            violations = srv.stop()
        res["violations"] = violations
        return res

    out: dict[str, Any] = {"n": n, "repeats": repeats, "rounds": rounds, "k": k, "pin": pin,
                           "warm": {}, "cold": {c: [] for c in CLIENTS}}
    for which in CLIENTS:
        out["warm"][which] = with_server(f"warm:{which}", "--n", str(n),
                                         "--repeats", str(repeats))
    for r in range(rounds):  # the order rotates from round to round
        for which in CLIENTS[r % 4:] + CLIENTS[:r % 4]:
            out["cold"][which].append(with_server(f"cold:{which}", "--k", str(k)))
    out["flow"] = C.run_child([*me, "--child", "flow", *pinned, "--n", str(flow_n),
                               "--repeats", str(flow_repeats)], 600)
    out["flow_n"] = flow_n
    return out


# -- the report ----------------------------------------------------------------------------------


def _ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:.2f} ms" if v >= 1e-3 else f"{v * 1e6:.0f} us"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _table(title: str, headers: tuple[str, ...], body: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
    print(f"\n== {title} ==")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for b in body:
        print("  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)).rstrip())


def _pairs(per_call: dict[str, list[float]], key: str) -> float:
    return statistics.median(a / b for a, b in zip(per_call[key], per_call["plain"], strict=True))


def _warm_med(out: dict[str, Any], which: str, key: str = "auth") -> float | None:
    res = out["warm"][which]
    return None if "error" in res else statistics.median(res["per_call"][key])


def _cold_rounds(out: dict[str, Any], which: str) -> list[float] | None:
    """The median cold start of each round (None if a round failed)."""
    rounds = out["cold"][which]
    if any("error" in r for r in rounds):
        return None
    return [statistics.median(r["cold"]) for r in rounds]


def _per_round(out: dict[str, Any], a: str, b: str) -> float | None:
    ra, rb = _cold_rounds(out, a), _cold_rounds(out, b)
    if not ra or not rb:
        return None
    return statistics.median(x / y for x, y in zip(ra, rb, strict=True))


def print_report(out: dict[str, Any]) -> None:
    names = {"threads": "mcp-proto threads", "asyncio": "mcp-proto asyncio",
             "sdk": "official SDK", "raw": "raw http.client (floor)"}
    body: list[tuple[str, ...]] = []
    errors: list[str] = []
    for which in CLIENTS:
        res = out["warm"][which]
        if "error" in res:
            body.append((names[which], "error", "-", "-", "-", "-", "-"))
            errors.append(f"{which}: {res['error']}")
            continue
        pc = res["per_call"]
        sdk_med = _warm_med(out, "sdk")
        raw_med = _warm_med(out, "raw")
        med = statistics.median(pc["auth"])
        body.append((names[which], _ms(statistics.median(pc["plain"])), _ms(med),
                     _x(_pairs(pc, "auth")), _x(_pairs(pc, "twin")),
                     _x(med / sdk_med) if sdk_med and which != "sdk" else "-",
                     _x(med / raw_med) if raw_med and which != "raw" else "-"))
    _table(f"auth (1): sequential tools/call echo, per call, median of {out['repeats']} "
           f"x {out['n']}; ratios: median over the interleaved repeats"
           + (f"; pinned to CPU {out['pin']}" if out.get("pin") else ""),
           ("client", "unauthorized", "authorized", "auth/unauth", "twin/unauth (noise)",
            "auth vs SDK", "auth vs floor"), body)
    for which in CLIENTS:
        res = out["warm"][which]
        if "error" in res:
            continue
        s = res["seen"]
        ok = "ok" if s["as"] == 0 and s["metadata"] == 0 else "NOT ZERO"
        print(f"  check {which}: while the token was fresh: {s['as']} requests to the "
              f"authorization server, {s['metadata']} metadata requests ({ok}); "
              f"{s['bearer_posts']} POSTs with a Bearer token, {s['plain_posts']} without; "
              f"server violations: {res['violations'] or 'none'}")

    body = []
    for which in CLIENTS:
        rounds = out["cold"][which]
        if any("error" in r for r in rounds):
            body.append((names[which], "error", "-", "-", "-", "-", "-"))
            errors += [f"cold {which}: {r['error']}" for r in rounds if "error" in r]
            continue
        cold = [t for r in rounds for t in r["cold"]]
        first = statistics.median(r["first"] for r in rounds)
        s = rounds[-1]["seen"]
        reqs = (f"{s['requests']} ({s['plain_posts']}+{s['bearer_posts']} MCP POSTs, "
                f"{s['metadata']} PRM, {s['as']} AS)")
        body.append((names[which], _ms(statistics.median(cold)), _ms(min(cold)), _ms(first),
                     reqs,
                     _x(_per_round(out, which, "sdk")) if which != "sdk" else "-",
                     _x(_per_round(out, which, "raw")) if which != "raw" else "-"))
    _table(f"auth (2): first 401 to first result, cold (empty store, fresh client): "
           f"median (best) of {out['rounds']} rounds x {out['k']}; vs SDK / floor: median "
           "over the rounds",
           ("client", "median", "best", "1st in process", "requests per start",
            "vs SDK", "vs floor"), body)
    for which in CLIENTS:
        viol = sorted({v for r in out["cold"][which] for v in r.get("violations", [])})
        if viol:
            print(f"  check {which}: server violations: {viol}")

    flow = out["flow"]
    print()
    if "error" in flow:
        print(f"auth (3): OAuthFlow: {flow['error']}")
    else:
        med = statistics.median(flow["flow"])
        best_flow = min(flow["flow"])
        ours_cold = _cold_rounds(out, "threads")
        share = f" = {med / statistics.median(ours_cold) * 100:.1f}% of the threads cold start" \
            if ours_cold else ""
        print(f"auth (3): mcp-proto's own code, OAuthFlow from the 401 to Authorized with "
              f"canned answers (no sockets; PRM, AS metadata, registration, callback, token): "
              f"{med * 1e6:.0f} us per flow (best {best_flow * 1e6:.0f} us, "
              f"n={out['flow_n']}){share}")
    for e in errors:
        print(f"  error: {e}")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--pin", metavar="CPUS", help="pin clients+servers to CPUs, e.g. 0")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=100, help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=21, help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, default=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        if args.pin:
            os.sched_setaffinity(0, {int(c) for c in args.pin.split(",")})
        child_main(args)
        return 0
    out = collect(quick=args.quick, pin=args.pin)
    print_report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
