"""The threads binding over Streamable HTTP (section 10.2/10.3) against real servers on
loopback: server-everything (handshake era, via the fallback) and a server written with the
official Python SDK (both eras), plus local misbehaviour (redirects, refused connections)."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from conftest import free_port, run_threads, serving, wait_until
from mcp_proto_io.threads import connect_http

from mcp_proto import (
    ConnectionClosed,
    LocalProtocolError,
    Progress,
    RemoteProtocolError,
    RequestTimeout,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

T = 20.0  # every blocking call in this file is bounded by it


def test_everything_over_http_falls_back_to_the_handshake_era(everything_url: str) -> None:
    """2.3 on HTTP: the modern POST is refused, so Streamable HTTP 2025 (H-01..H-13)."""
    with connect_http(everything_url, timeout=T) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert client.server_info.name == "mcp-servers/everything"
        names = {t.name for t in client.list_tools()}
        assert {"echo", "get-sum", "trigger-long-running-operation"} <= names
        assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        progress: list[Progress] = []
        done = client.call_tool("trigger-long-running-operation",
                                {"duration": 0.3, "steps": 3}, on_progress=progress.append)
        assert "completed" in done.text.lower()
        assert [p.progress for p in progress] == [1, 2, 3]  # progress over the SSE answer
        assert client.list_resources() and client.list_prompts()


def test_everything_over_http_32_threads(everything_url: str) -> None:
    with connect_http(everything_url, timeout=T) as client:
        results = run_threads(
            lambda i: client.call_tool("echo", {"message": f"t{i}"}).text, 32, T)
    assert results == {i: f"Echo: t{i}" for i in range(32)}


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_sdk_server_over_http_in_both_eras(sdk_url: str, version: str | None) -> None:
    """The same calls in both eras; elicitation is MRTR (2026) or a server request on the
    POST's SSE stream answered by a new POST (2025, F-06)."""
    asked: list[dict[str, Any]] = []

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    with connect_http(sdk_url, timeout=T, protocol_version=version,
                      on_elicitation=on_elicitation) as client:
        expected = ("legacy", version) if version else ("modern", "2026-07-28")
        assert (client.era, client.protocol_version) == expected
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.call_tool("ask_name", {}).text == "hello Ada"
        assert len(asked) == 1 and "requestedSchema" in asked[0]
        assert client.read_resource("demo://a").contents[0].text == "content of a"  # type: ignore[union-attr]


def test_credentials_in_the_url_are_refused() -> None:
    with pytest.raises(LocalProtocolError, match="credentials"):
        connect_http("http://user:secret@127.0.0.1:1/mcp")


def test_refused_connection_is_a_clear_error() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(ConnectionClosed, match="cannot connect"), \
            connect_http(f"http://127.0.0.1:{port}/mcp", timeout=5):
        pass


class _Redirect(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(307)
        self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_redirects_are_not_followed() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    thread = threading.Thread(target=server.serve_forever, name="test-http", daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        with pytest.raises(RemoteProtocolError, match="redirect"), \
                connect_http(f"http://127.0.0.1:{port}/mcp", timeout=5,
                             protocol_version="2025-11-25"):
            pass
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_cli_accepts_a_url(sdk_url: str) -> None:
    """``mcp-proto tools --url`` and ``call --url``: the command works with HTTP servers."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.path.join(repo, "bindings")])}
    tools = subprocess.run([sys.executable, "-m", "mcp_proto_io", "tools", "--url", sdk_url],
                           capture_output=True, text=True, env=env, timeout=T, check=False)
    assert tools.returncode == 0, tools.stderr
    # a pipe gets the rows alone (issue 23: the heading is for a terminal)
    assert "ask_name" in tools.stdout and not tools.stdout.startswith("#")
    call = subprocess.run([sys.executable, "-m", "mcp_proto_io", "call", "echo", "--args",
                           '{"text": "via http"}', "--url", sdk_url],
                          capture_output=True, text=True, env=env, timeout=T, check=False)
    assert (call.returncode, call.stdout.strip()) == (0, "via http"), call.stderr


@pytest.fixture
def sdk_sse_url(sdk_server_command: list[str]) -> Iterator[str]:
    port = free_port()
    with serving([*sdk_server_command, "--sse", str(port)], port) as url:
        yield url.replace("/mcp", "/sse")


def test_sdk_server_over_the_2024_http_sse_transport(sdk_sse_url: str) -> None:
    """2.3's last rung: the modern POST and the Streamable initialize are refused, so the
    client opens the SSE stream, POSTs to the announced endpoint and reads answers there."""
    with connect_http(sdk_sse_url, timeout=T, on_elicitation=lambda p: {
            "action": "accept", "content": {"name": "Ada"}}) as client:
        assert client.era == "legacy"
        conn = client._conn
        assert conn is not None and conn.http.transport == "sse"
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.call_tool("ask_name", {}).text == "hello Ada"


class _Stalls(http.server.BaseHTTPRequestHandler):
    """A handshake-era server that never answers tools/call (it holds the stream open)."""

    protocol_version = "HTTP/1.1"

    def _send(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405)

    def do_DELETE(self) -> None:
        self._send(200)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(message.get("method"))
        if "id" not in message:
            self._send(202)
        elif message["method"] == "initialize":
            self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "stalls", "version": "1"}}}).encode())
        elif message["method"] == "tools/call":
            time.sleep(5)  # bounded: the client must have given up long before
        else:
            self._send(400)

    seen: ClassVar[list[Any]] = []

    def log_message(self, *args: object) -> None:
        pass


def test_l09_a_timed_out_http_call_returns_and_posts_the_cancellation() -> None:
    """C-05 + L-09: the call returns at its deadline (its stream is closed, the caller is
    not left reading it) and the server gets notifications/cancelled by POST."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalls)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="test-http", daemon=True)
    thread.start()
    _Stalls.seen = []
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
        with connect_http(url, timeout=5, protocol_version="2025-11-25") as client:
            t0 = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.call_tool("slow", timeout=0.5)
            assert time.monotonic() - t0 < 3.0
            assert wait_until(lambda: "notifications/cancelled" in _Stalls.seen, 3.0)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
