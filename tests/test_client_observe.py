"""Seeing what a client does (issue 23 items 4 and 7): stderr lines, server log messages,
the JSON-RPC traffic, lifecycle records, errors that name the server, secrets redacted.

The client options ``label``, ``on_stderr`` and ``on_trace`` run in every binding (threads,
asyncio, trio: ``tests/_bindings.py``) against real servers (mcp-server-time,
server-everything over stdio and HTTP) and scripted ones (an exit with a secret in its
stderr, an HTTP endpoint answering 500 with an HTML page).  The redactor and the HTTP error
line are pure and tested directly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from _bindings import BINDINGS, Binding, run
from conftest import scripted_command
from mcp_proto_io import _logs
from mcp_proto_io._logs import MAX_STDERR_LINE, StderrLines
from mcp_proto_io.threads import connect_stdio

from mcp_proto import (
    MIN_SECRET_LENGTH,
    REDACTED,
    ConnectionClosed,
    MCPError,
    Redactor,
    ServerExited,
    redact_url,
)
from mcp_proto import host as mcp_host
from mcp_proto.http._status import MAX_ERROR_TEXT, HttpError

SECRET = "sk-live-0123456789abcdef"  # what a server's stderr must never show

# -- helpers ------------------------------------------------------------------------------------


class Records(logging.Handler):
    """Every record of the ``mcp_proto_io`` loggers while it is installed (thread-safe)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self.guard:
            self.records.append(record)

    def of(self, name: str) -> list[logging.LogRecord]:
        with self.guard:
            return [r for r in self.records if r.name == f"mcp_proto_io.{name}"]


@contextlib.contextmanager
def recording(level: int = logging.DEBUG) -> Iterator[Records]:
    """Enable the ``mcp_proto_io`` loggers at ``level`` and record what they log."""
    logger = logging.getLogger("mcp_proto_io")
    handler = Records()
    old = logger.level
    logger.setLevel(level)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


def dying_command() -> list[str]:
    """A server that writes its secret to stderr and exits with status 5 at once."""
    code = ("import os, sys; print('starting with token', os.environ['API_KEY'], file=sys.stderr);"
            " print('giving up', file=sys.stderr); sys.exit(5)")
    return [sys.executable, "-c", code]


class _Html500(BaseHTTPRequestHandler):
    """Answers every request with ``status`` and an HTML error page (or JSON)."""

    status = 500
    json_body: bytes | None = None

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.json_body is not None:
            body, kind = self.json_body, "application/json"
        else:
            body = (b"<!DOCTYPE html>\n<html><head><title>Oops</title></head>\n<body>\n"
                    b"<h1>Internal Server Error</h1>\n<p>The server fell over.</p>\n"
                    + b"<div>filler</div>\n" * 200 + b"</body></html>\n")
            kind = "text/html; charset=utf-8"
        self.send_response(self.status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def html_server(status: int = 500, json_body: bytes | None = None) -> Iterator[str]:
    """A loopback HTTP server answering ``status`` to everything; yields its base URL."""
    handler = type("Handler", (_Html500,), {"status": status, "json_body": json_body})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="test-html-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


# -- the redactor (pure) ------------------------------------------------------------------------


def test_redactor_replaces_every_occurrence_and_skips_short_values() -> None:
    """Issue 23 item 7: env and header values become ``<redacted>``; values shorter than
    MIN_SECRET_LENGTH (``1``, ``dev``) are left alone."""
    r = Redactor.of(env={"API_KEY": SECRET, "DEBUG": "1", "MODE": "dev"},
                    headers={"Authorization": "Bearer tok-abcdefgh"})
    text = f"key={SECRET} again {SECRET}; bearer tok-abcdefgh; mode dev 1"
    assert r.text(text) == (f"key={REDACTED} again {REDACTED}; bearer {REDACTED}; "
                            "mode dev 1")
    assert len("dev") < MIN_SECRET_LENGTH
    assert not Redactor(["abc"]) and Redactor(["abcd"])


def test_redactor_longest_secret_first() -> None:
    r = Redactor(["abcd", "abcdefgh"])
    assert r.text("abcdefgh abcd") == f"{REDACTED} {REDACTED}"


def test_redactor_message_credential_keys_and_values() -> None:
    """Issue 23 item 4 (``--trace``: credentials redacted): values of credential-looking
    keys go whatever they are; secret values go in every string; a schema's argument names
    and the protocol's ``progressToken`` / ``maxTokens`` stay."""
    r = Redactor([SECRET])
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "login", "arguments": {"Password": "hunter22", "apiKey": 12345,
                                       "user": f"ada ({SECRET})", "x-api-key": "k"},
        "_meta": {"progressToken": 7}, "headers": {"Authorization": "Bearer z",
                                                   "Cookie": "a=b"}}}
    out = r.message(msg)
    args = out["params"]["arguments"]
    assert args == {"Password": REDACTED, "apiKey": REDACTED, "user": f"ada ({REDACTED})",
                    "x-api-key": REDACTED}
    assert out["params"]["headers"] == {"Authorization": REDACTED, "Cookie": REDACTED}
    assert out["params"]["_meta"] == {"progressToken": 7}
    assert msg["params"]["arguments"]["Password"] == "hunter22"  # a copy, not in place
    schema = {"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
        "api_key": {"type": "string"}}}}], "maxTokens": 100}
    assert r.message(schema) == schema


def test_redact_url_query_values() -> None:
    """issue 23 item 7: a URL is shown without any query value (hosted servers take keys
    under any name: ``?key=``, ``?k=``) nor user-info; the names stay, to say what was sent.
    The host layer's ``redact_url`` is the same function."""
    assert mcp_host.redact_url is redact_url
    assert redact_url("https://h.example/mcp?api_key=abc&key=sekrit&x=1") == \
        f"https://h.example/mcp?api_key={REDACTED}&key={REDACTED}&x={REDACTED}"
    assert redact_url("http://u:p@h:8080/mcp") == f"http://{REDACTED}@h:8080/mcp"
    assert redact_url(f"http://h/{SECRET}/mcp", Redactor([SECRET])) == f"http://h/{REDACTED}/mcp"


# -- HTTP errors (pure) -------------------------------------------------------------------------


def test_http_error_is_one_line_without_html() -> None:
    """Issue 23 item 7: status, reason, URL, transport; never the HTML page."""
    page = b"<!DOCTYPE html><html><body><h1>Bad Gateway</h1>\n" + b"<p>x</p>\n" * 100
    error = HttpError(502, page, "initialize", reason="Bad Gateway",
                      url="http://h/mcp", transport="Streamable HTTP",
                      content_type="text/html")
    assert str(error) == "initialize: HTTP 502 Bad Gateway from http://h/mcp (Streamable HTTP)"
    plain = HttpError(503, b"upstream\nis down\n" + b"z" * 500, "tools/call", reason="Busy",
                      content_type="text/plain")
    text = str(plain)
    assert "\n" not in text and text.startswith("tools/call: HTTP 503 Busy: upstream is down")
    assert len(text) <= len("tools/call: HTTP 503 Busy: ") + MAX_ERROR_TEXT
    quota = HttpError(429, b'{"error": {"message": "quota exceeded"}}', "tools/call",
                      content_type="application/json")
    assert str(quota) == "tools/call: HTTP 429: quota exceeded"


# -- stderr lines (the splitter, pure) ----------------------------------------------------------


def test_stderr_lines_split_across_chunks_and_cut() -> None:
    got: list[str] = []
    observer = _logs.Observer("s", Redactor([SECRET]), got.append, None)
    lines = StderrLines(observer)
    lines.feed(b"first li")
    lines.feed(b"ne\r\nsecond " + SECRET.encode() + b"\nhalf")
    assert got == ["first line", f"second {REDACTED}"]
    lines.feed(b"x" * (MAX_STDERR_LINE * 5))  # one endless line: cut, the rest dropped
    lines.feed(b"yyy\nnext\n")
    assert got[2] == "half" + "x" * (MAX_STDERR_LINE - 4) and got[3:] == ["next"]
    lines.feed(b"\xff\xfeend")
    lines.feed_eof()
    assert got[-1] == "\ufffd\ufffdend"


def test_stderr_callback_errors_are_swallowed(capsys: pytest.CaptureFixture[str]) -> None:
    """A broken ``on_stderr`` never breaks the reader (the error is printed)."""
    def boom(line: str) -> None:
        raise RuntimeError("callback bug")

    lines = StderrLines(_logs.Observer("s", Redactor(), boom, None))
    lines.feed(b"one\ntwo\n")
    assert capsys.readouterr().err.count("RuntimeError: callback bug") == 2


# -- in every binding ---------------------------------------------------------------------------


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_stderr_lines_trace_and_label(binding: str, everything_command: list[str]) -> None:
    """Issue 23 item 4: ``on_stderr`` gets server-everything's stderr lines, ``on_trace`` every
    message both ways (the same the wire logger shows), records carry ``mcp_server``."""
    lines: list[str] = []
    traces: list[tuple[str, dict[str, Any]]] = []

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, label="everything",
                                   on_stderr=lines.append,
                                   on_trace=lambda d, m: traces.append((d, m))) as c:
            assert c.label == "everything"
            await c.call_tool("echo", {"message": "hi"})
            assert await b.wait_until(lambda: lines, 10)

    with recording() as log:
        run(binding, scenario)
    assert any("Starting" in line for line in lines), lines
    sent = [m for d, m in traces if d == "send"]
    got = [m for d, m in traces if d == "recv"]
    assert "initialize" in [m.get("method") for m in sent] or \
        "server/discover" in [m.get("method") for m in sent]
    call = next(m for m in sent if m.get("method") == "tools/call")
    answer = next(m for m in got if m.get("id") == call["id"])
    assert "hi" in json.dumps(answer["result"])
    wire = log.of("wire")
    assert len(wire) == len(traces)
    assert all(r.mcp_server == "everything" for r in wire)  # type: ignore[attr-defined]
    assert wire[0].getMessage().startswith(("send {", "recv {"))
    assert [r.getMessage() for r in log.of("stderr")] == lines
    lifecycle = [r.getMessage() for r in log.of("lifecycle")]
    assert lifecycle[0].startswith("connected to") and "closed" in lifecycle


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_server_log_messages_are_logged(binding: str, everything_command: list[str]) -> None:
    """Issue 23 item 4: a server's ``notifications/message`` goes to
    ``mcp_proto_io.server_log`` at its mapped level (server-everything's simulated logging
    sends one at once, at a random level)."""
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, label="ev") as c:
            await c.set_logging_level("debug")
            await c.call_tool("toggle-simulated-logging", {})
            assert await b.wait_until(lambda: log.of("server_log"), 15)
            await c.call_tool("toggle-simulated-logging", {})

    with recording() as log:
        run(binding, scenario)
    record = log.of("server_log")[0]
    assert record.mcp_server == "ev"  # type: ignore[attr-defined]
    level = record.getMessage().split("-")[0].split()[0].lower()  # "Debug-level message"
    expected = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
                "warning": logging.WARNING, "error": logging.ERROR,
                "critical": logging.CRITICAL, "alert": logging.CRITICAL,
                "emergency": logging.CRITICAL}
    assert record.levelno == expected[level]


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_exit_names_the_server_and_redacts_stderr(binding: str) -> None:
    """Issue 23 item 7: ``server 'dying' exited with code 5``; the env value passed to the
    server is ``<redacted>`` in the tail, the message, ``on_stderr`` and the log."""
    lines: list[str] = []

    async def scenario(b: Binding) -> None:
        with pytest.raises(ServerExited) as info:
            async with b.connect_stdio(dying_command(), env={"API_KEY": SECRET},
                                       label="dying", on_stderr=lines.append):
                pass
        error = info.value
        assert error.server == "dying" and error.exit_code == 5
        assert str(error).startswith("server 'dying' exited with code 5")
        assert SECRET not in str(error) and SECRET not in error.stderr_tail
        assert f"starting with token {REDACTED}" in error.stderr_tail

    with recording() as log:
        run(binding, scenario)
    assert lines == [f"starting with token {REDACTED}", "giving up"]
    for record in log.records:
        assert SECRET not in record.getMessage()
    exits = [r for r in log.of("lifecycle") if r.levelno == logging.WARNING]
    assert exits and "server 'dying' exited with code 5" in exits[0].getMessage()


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_default_label_is_the_program_name(binding: str) -> None:
    """Issue 23 item 7: without ``label`` the exit names the command's program."""
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(scripted_command("die-mid-call")) as c:
            with pytest.raises(ServerExited) as info:
                await c.call_tool("echo", {"text": "doomed"})
        name = c.label
        assert name == sys.executable.rsplit("/", 1)[-1]
        assert str(info.value).startswith(f"server {name!r} exited with code 3")

    run(binding, scenario)


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_http_500_html_is_one_line(binding: str) -> None:
    """Issue 23 item 7: an endpoint answering 500 with an HTML page fails the connection with
    one line (status, reason, the URL without its secret, the transport), no HTML."""
    async def scenario(b: Binding) -> None:
        with html_server(500) as base:
            url = f"{base}/mcp?api_key={SECRET}"
            with pytest.raises(MCPError) as info:
                async with b.connect_http(url, headers={"X-Team": "team-secret-value"},
                                          label="broken"):
                    pass
        text = str(info.value)
        assert "\n" not in text and "<" not in text.replace(REDACTED, ""), text
        assert "HTTP 500 Internal Server Error" in text and "Streamable HTTP" in text
        assert f"{base}/mcp?api_key={REDACTED}" in text and SECRET not in text

    run(binding, scenario)


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_http_404_names_both_transports(binding: str) -> None:
    """Issue 23 item 7: refused by Streamable HTTP and by HTTP+SSE too, the error says both
    were tried (404 with HTML: still one line)."""
    async def scenario(b: Binding) -> None:
        with html_server(404) as base, pytest.raises(MCPError) as info:
            async with b.connect_http(f"{base}/mcp"):
                pass
        text = str(info.value)
        assert "\n" not in text and "<html" not in text.lower(), text
        assert "HTTP 404 Not Found" in text
        assert "Streamable HTTP, then HTTP+SSE" in text

    run(binding, scenario)


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_http_trace_redacts_authorization(binding: str, everything_url: str) -> None:
    """Issue 23 item 4: ``on_trace`` over HTTP (server-everything) sees every message both
    ways; a bearer token sent in the Authorization header never appears in a trace or a
    wire record."""
    traces: list[tuple[str, dict[str, Any]]] = []
    token = "tok-" + SECRET

    async def scenario(b: Binding) -> None:
        async with b.connect_http(everything_url, bearer_token=token,
                                  on_trace=lambda d, m: traces.append((d, m))) as c:
            assert c.label.startswith("127.0.0.1:")
            await c.call_tool("echo", {"message": f"say {token}"})

    with recording() as log:
        run(binding, scenario)
    methods = [m.get("method") for d, m in traces if d == "send"]
    assert "tools/call" in methods
    assert any(d == "recv" and "result" in m for d, m in traces)
    shown = json.dumps([m for _, m in traces]) + "".join(r.getMessage() for r in log.records)
    assert token not in shown and REDACTED in shown
    assert len(log.of("wire")) >= len(traces)


# -- zero cost when off -------------------------------------------------------------------------


@pytest.mark.usefixtures("no_leaks")
def test_untraced_connection_has_no_tracer(time_command: list[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 4: with no ``on_trace`` and the wire logger off, the connection has no
    tracer (its pump checks one attribute per chunk) and nothing is decoded for tracing."""
    def never(*args: Any) -> None:
        raise AssertionError("traced while tracing is off")

    monkeypatch.setattr(_logs.Tracer, "received", never)
    monkeypatch.setattr(_logs.Tracer, "sent", never)
    logging.getLogger("mcp_proto_io.wire").setLevel(logging.INFO)
    try:
        with connect_stdio(time_command, timeout=20) as c:
            c.call_tool("get_current_time", {"timezone": "UTC"})
            conn = c._conn
            assert conn is not None and conn.tracer is None
    finally:
        logging.getLogger("mcp_proto_io.wire").setLevel(logging.NOTSET)


@pytest.mark.usefixtures("no_leaks")
def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="label"):
        connect_stdio(["true"], label="")
    with pytest.raises(TypeError, match="on_trace"):
        connect_stdio(["true"], on_trace="print")  # type: ignore[arg-type]


@pytest.mark.usefixtures("no_leaks")
def test_closed_client_logs_once_and_never_warns(time_command: list[str]) -> None:
    """Issue 23 item 4: closing is INFO ``closed``; the exit the close caused is no WARNING."""
    with recording() as log:
        c = connect_stdio(time_command, timeout=20, label="time").connect()
        c.close()
        c.close()
        with pytest.raises(ConnectionClosed):
            c.list_tools()
    lifecycle = log.of("lifecycle")
    assert [r.getMessage() for r in lifecycle].count("closed") == 1
    assert not [r for r in lifecycle if r.levelno >= logging.WARNING]


@pytest.mark.usefixtures("no_leaks")
def test_http_json_error_message_is_kept_and_redacted() -> None:
    """Issue 23 item 7: a short JSON error message from the body is appended (one line), with
    the header values the client sent replaced (the server echoed one)."""
    from mcp_proto_io.threads import connect_http  # noqa: PLC0415 - HTTP only here

    body = json.dumps({"error": {"message": f"key {SECRET} is over quota"}}).encode()
    with html_server(500, json_body=body) as base, pytest.raises(MCPError) as info:
        connect_http(f"{base}/mcp", headers={"X-Api-Key": SECRET}, timeout=20).connect()
    text = str(info.value)
    assert text.endswith(f": key {REDACTED} is over quota"), text
    assert "HTTP 500 Internal Server Error" in text and SECRET not in text


# -- review fixes: showing never breaks anything, redaction before any cut ---------------------

#: Nesting of the deep messages: more than a recursive walk survives (about 470 levels), less
#: than ``json`` parses (about a thousand).
DEPTH = 600

#: A stdio server (handshake era) whose log notification, result and answers to ``deep``
#: carry a DEPTH-deep value; ``echo`` answers ``ok`` (the client may send it a deep one).
DEEP_SERVER = f"""
import json, sys
deep = "bottom"
for i in range({DEPTH}):
    deep = [deep]
def send(m):
    sys.stdout.write(json.dumps(m, separators=(",", ":")) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    rid, method = m.get("id"), m.get("method")
    if rid is None:
        continue
    if method == "initialize":
        send({{"jsonrpc": "2.0", "id": rid, "result": {{
            "protocolVersion": m["params"]["protocolVersion"],
            "capabilities": {{"tools": {{}}, "logging": {{}}}},
            "serverInfo": {{"name": "deep", "version": "1"}}}}}})
    elif method == "tools/call" and m["params"]["name"] == "deep":
        send({{"jsonrpc": "2.0", "method": "notifications/message",
              "params": {{"level": "info", "data": deep}}}})
        send({{"jsonrpc": "2.0", "id": rid, "result": {{
            "content": [{{"type": "text", "text": "deep"}}], "_meta": {{"deep": deep}}}}}})
    elif method == "tools/call":
        send({{"jsonrpc": "2.0", "id": rid, "result": {{
            "content": [{{"type": "text", "text": "ok"}}]}}}})
    elif method == "tools/list":
        send({{"jsonrpc": "2.0", "id": rid, "result": {{"tools": []}}}})
    else:
        send({{"jsonrpc": "2.0", "id": rid, "result": {{}}}})
"""


def _deep(depth: int = DEPTH, leaf: Any = "bottom") -> Any:
    """``leaf`` in ``depth`` lists (two frames a level for a recursive walk with a list
    comprehension), every tenth an object."""
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 10 == 9 else [value]
    return value


def _bottom(value: Any) -> Any:
    for _ in range(10 * DEPTH):  # bounded descent
        if isinstance(value, list):
            value = value[0]
        elif isinstance(value, dict):
            value = value["k"]
        else:
            return value
    raise AssertionError("deeper than built")


@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("binding", BINDINGS)
def test_deep_messages_traced_both_ways_keep_the_connection(binding: str) -> None:
    """Review of issue 23 item 4: a message nested DEPTH levels (``json`` parses it, a
    recursive redactor did not) with tracing on both ways and every logger at DEBUG: no
    crashed reader, no lost batch; the call answers, later calls complete, and the traces
    hold the deep messages redacted."""
    traces: list[tuple[str, dict[str, Any]]] = []
    command = [sys.executable, "-c", DEEP_SERVER]

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(command, env={"DEEP_TOKEN": SECRET}, timeout=20,
                                   on_trace=lambda d, m: traces.append((d, m))) as c:
            await c.set_logging_level("debug")
            first = await c.call_tool("deep", {})
            sent = await c.call_tool("echo", {"v": _deep(leaf=SECRET)})
            later = await c.call_tool("echo", {})
            assert [r.content[0].text for r in (first, sent, later)] == ["deep", "ok", "ok"]
            assert await b.wait_until(lambda: log.of("server_log"), 10)

    with recording() as log:
        run(binding, scenario)
    echo = next(m for d, m in traces if d == "send" and m.get("method") == "tools/call"
                and m["params"]["name"] == "echo")
    assert _bottom(echo["params"]["arguments"]["v"]) == REDACTED
    answer = next(m for d, m in traces if d == "recv" and "_meta" in m.get("result", {}))
    assert _bottom(answer["result"]["_meta"]["deep"]) == "bottom"
    wire = [r.getMessage() for r in log.of("wire")]
    assert len(wire) == len(traces) and all(SECRET not in w for w in wire)
    assert "bottom" in log.of("server_log")[0].getMessage()


def test_tracer_never_raises_on_what_json_cannot_show() -> None:
    """Review of issue 23 item 4: a line nested beyond ``json``'s reach, a message ``json``
    cannot write back, a broken ``repr``: each is a placeholder in the wire log, never an
    exception into the reader or the writer."""
    traces: list[Any] = []
    tracer = _logs.Tracer(_logs.Observer("s", Redactor([SECRET]), None,
                                         lambda d, m: traces.append(m)))
    too_deep = b"[" * 100_000 + b"]" * 100_000
    with recording() as log:
        tracer.sent(too_deep + b"\n")
        tracer.received(too_deep + b"\n{}\n")
        tracer.message("recv", {"cyclic": _Unjsonable()})
        tracer.message("recv", _BadRepr())
    shown = [r.getMessage() for r in log.of("wire")]
    assert shown[:2] == [f"send {_logs.TOO_DEEP}", f"recv {_logs.TOO_DEEP}"]
    assert shown[2] == "recv {}" and traces[0] == {}
    assert shown[3] == "recv <message not shown: RuntimeError>"
    assert shown[4] == "recv <message not shown: RuntimeError>"


class _Unjsonable:
    def __str__(self) -> str:
        raise RuntimeError("no text either")


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_server_log_never_raises_on_deep_data() -> None:
    """Review of issue 23 item 4: a log notification's data ``json`` cannot write is logged
    as a placeholder."""
    from mcp_proto import LogMessage  # noqa: PLC0415

    observer = _logs.Observer("s", Redactor(), None, None)
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with recording() as log:
        observer.server_log(LogMessage(level="error", logger="lg", data=deep))
    [record] = log.of("server_log")
    assert record.getMessage() == f"lg: {_logs.TOO_DEEP}"


def test_redactor_is_iterative() -> None:
    """Review of issue 23 item 4: :meth:`Redactor.message` copies any depth (a recursive walk
    failed at about 470 levels), redacting at the bottom."""
    r = Redactor([SECRET])
    out = r.message(_deep(5000, leaf=f"x {SECRET}"))
    assert _bottom(out) == f"x {REDACTED}"


def test_redaction_comes_before_the_cut() -> None:
    """Review of issue 23 item 7: a secret crossing a cut (a stderr line's
    MAX_STDERR_LINE, a trace excerpt's 200 characters) is replaced whole, not shown in part."""
    got: list[str] = []
    observer = _logs.Observer("s", Redactor([SECRET]), got.append, None)
    observer.stderr_line("x" * (MAX_STDERR_LINE - 5) + SECRET + "tail")
    assert got == ["x" * (MAX_STDERR_LINE - 5) + REDACTED[:5]]
    assert SECRET[:5] not in got[0]
    # A line buffered up to its bound (4-byte characters) while the secret is on its way:
    # the bound leaves room for it, so it is redacted whole before the cut.
    lines = StderrLines(observer)
    wide = "\U0001f600" * (MAX_STDERR_LINE - 2)
    lines.feed(wide.encode() + SECRET[:10].encode())
    lines.feed(SECRET[10:].encode() + b"\n")
    assert got[1:] == [wide + REDACTED[:2]]
    with recording() as log:
        tracer = _logs.Tracer(observer)
        tracer.received(b"not json " + b"z" * 185 + SECRET.encode() + b"\n")
        tracer.message("recv", "q" * 195 + SECRET)
    shown = [r.getMessage() for r in log.of("wire")]
    assert len(shown) == 2 and all(SECRET[:4] not in s for s in shown), shown
    assert shown[0].endswith("z" * 185 + "<redac>")  # 200 characters, the last ones redacted


def test_stderr_tail_redacted_before_its_cut() -> None:
    """Review of issue 23 item 7: the tail window keeps the longest secret's bytes before its
    start, so a secret crossing the start of the STDERR_TAIL_BYTES shown is replaced whole
    (its end was shown)."""
    from mcp_proto_io._process import StderrTail  # noqa: PLC0415

    secret = "pem-line-" + "S" * 40 + "-END"
    tail = StderrTail(None, Redactor([secret]), limit=100)
    tail.add(b"a" * 500)
    tail.add(secret.encode() + b"b" * (100 - 10))  # the cut falls 10 bytes before its end
    text = tail.text()
    assert text == REDACTED + "b" * 90 and "-END" not in text
    plain = StderrTail(None, None, limit=8)
    plain.add("é1234567".encode())  # the cut moves to the start of a character
    assert plain.text() == "1234567"


def test_overlapping_and_multiline_secrets() -> None:
    """Review of issue 23 item 7: overlapping secrets go together (no ``abcd`` left), the
    lines of a multi-line value (a PEM key in env) are secrets of their own (stderr is shown
    line by line), and a cut inside a merged range shows none of it."""
    r = Redactor(["abcdefgh", "efghijkl"])
    assert r.text("abcdefghijkl") == REDACTED
    assert r.text("..abcdefghijkl..abcdefgh") == f"..{REDACTED}..{REDACTED}"
    assert r.text("..abcdefghijkl..", 0, 5) == f"..{REDACTED}"
    assert r.text("..abcdefghijkl..", 5) == f"{REDACTED}.."
    assert r.text("no secret", 3) == "secret"
    pem = ("-----BEGIN PRIVATE KEY-----\n  MIIEvQIBADANBgkqhkiG9w0BAQEFAASC  \n"
           "ok\n-----END PRIVATE KEY-----\n")
    r = Redactor.of(env={"KEY": pem})
    assert r.text("read MIIEvQIBADANBgkqhkiG9w0BAQEFAASC from env") == \
        f"read {REDACTED} from env"
    assert r.text("ok") == "ok"  # shorter than MIN_SECRET_LENGTH
    assert r.text(pem.strip()) == REDACTED


def test_message_keys_and_token_counts() -> None:
    """Review of issue 23 item 7: keys stay unless they hold a secret; keys that redaction
    makes equal stay distinct; usage counts (``input_tokens``, ``outputTokens``: numbers under
    a ``...tokens`` key) and booleans are not credentials, while a credential key's string,
    object or other number (a PIN) goes."""
    r = Redactor(["abcd1234", "1234wxyz"])
    out = r.message({"abcd1234": 1, "1234wxyz": 2, "plain": 3, REDACTED: 4})
    assert out == {f"{REDACTED}#2": 1, f"{REDACTED}#3": 2, "plain": 3, REDACTED: 4}
    usage = {"input_tokens": 12, "outputTokens": 7, "total_tokens": 19.0,
             "cache_tokens": None, "refresh_token": "rt-abc", "access_token": {"v": 1},
             "has_password": True, "pin_password": 1234, "tokens": "a,b"}
    assert r.message({"usage": usage}) == {"usage": {
        "input_tokens": 12, "outputTokens": 7, "total_tokens": 19.0, "cache_tokens": None,
        "refresh_token": REDACTED, "access_token": REDACTED, "has_password": True,
        "pin_password": REDACTED, "tokens": REDACTED}}


def test_every_mcp_log_level_has_a_python_level() -> None:
    """The server-log logger maps each MCP level (one table, ``mcp_proto.LOG_LEVELS``)."""
    from mcp_proto import LOG_LEVELS  # noqa: PLC0415 - the one table, next to its use

    assert set(_logs.PYTHON_LEVELS) == set(LOG_LEVELS)
