"""The user step: the loopback listener, the paste prompt and the headless fetch.

Every client here runs on a thread of the test with socket timeouts, and is joined with a
timeout; every wait of the code under test is bounded by its own ``timeout``."""

from __future__ import annotations

import datetime
import functools
import http.client
import io
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp_proto_io.auth._redirect import (
    CALLBACK_CONNECTION_TIMEOUT,
    DEFAULT_REDIRECT_URI,
    MAX_AUTHORIZATION_URL,
    MAX_CALLBACK_REQUEST,
    MAX_CALLBACK_URL,
    HeadlessRedirect,
    LoopbackRedirect,
    PasteRedirect,
    check_authorization_url,
    is_async_redirect,
    redirect_uri_of,
)

from mcp_proto._auth_errors import AuthorizationError, UnsafeUrl

AUTH_URL = "https://as.example.com/authorize?client_id=c&state=SECRETSTATE&code_challenge=x"
CLIENT_TIMEOUT = 5.0  # seconds for every socket operation of the test's own clients
JOIN_TIMEOUT = 10.0

BAD_URLS = [
    "javascript:alert(1)",
    "JavaScript://as.example.com/%0aalert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "ftp://as.example.com/authorize",
    "http://as.example.com/authorize?state=SECRETSTATE",
    "https://user:pw@as.example.com/authorize",
    "https:///authorize",
    "https://as.example.com/authorize?x=a b",
    "https://as.example.com/\x00",
    "https://as.example.com/" + "a" * MAX_AUTHORIZATION_URL,
    "-https://as.example.com/",
]


# -- helpers --------------------------------------------------------------------------------------

class Client(threading.Thread):
    """Runs ``script`` on a thread, keeping what it returns or raises."""

    def __init__(self, script: Callable[[], object]) -> None:
        super().__init__(name="test-callback-client", daemon=True)
        self.script = script
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.script()
        except BaseException as exc:  # pragma: no cover - reported by finish()
            self.error = exc

    def finish(self) -> object:
        self.join(JOIN_TIMEOUT)
        assert not self.is_alive(), "the test client did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def port_of(uri: str) -> int:
    match = re.fullmatch(r"http://(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/callback", uri)
    assert match, uri
    return int(match.group(1))


def raw(port: int, data: bytes, host: str = "127.0.0.1") -> bytes:
    """Send ``data`` on a fresh connection and read the answer until the server closes."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(CLIENT_TIMEOUT)
        sock.connect((host, port))
        sock.sendall(data)
        chunks = []
        for _ in range(1000):  # bounded: the answers are a few hundred bytes
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def get(port: int, target: str, host_header: str | None = None, method: str = "GET",
        connect: str = "127.0.0.1") -> bytes:
    host_line = f"Host: {host_header if host_header is not None else f'{connect}:{port}'}\r\n"
    return raw(port, f"{method} {target} HTTP/1.1\r\n{host_line}Connection: close\r\n\r\n"
               .encode(), host=connect)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


class Browser:
    """A "browser" for :class:`LoopbackRedirect`: given the URL, it runs the test's script
    against the listener on a :class:`Client` thread."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.clients: list[Client] = []
        self.script: Callable[[], object] | None = None

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        if self.script is not None:
            client = Client(self.script)
            self.clients.append(client)
            client.start()


def drive(redirect: LoopbackRedirect, browser: Browser, url: str,
          script: Callable[[int], object]) -> tuple[str, object]:
    """Call ``redirect(url)``; when it opens ``browser``, run ``script(port)`` on a thread.
    The callback URL and what the script returned."""
    port = port_of(redirect.prepare())
    browser.script = functools.partial(script, port)
    browser.clients.clear()
    try:
        callback = redirect(url)
    finally:
        results = [client.finish() for client in browser.clients]
    assert browser.opened[-1] == url
    assert len(results) == 1
    return callback, results[0]


# -- URL checks and helpers -----------------------------------------------------------------------

@pytest.mark.parametrize("url", BAD_URLS, ids=range(len(BAD_URLS)))
def test_unsafe_authorization_urls(url: str) -> None:
    with pytest.raises(UnsafeUrl) as info:
        check_authorization_url(url)
    assert "SECRETSTATE" not in str(info.value)


@pytest.mark.parametrize("url", [
    AUTH_URL, "http://127.0.0.1:8080/authorize?x=1", "http://localhost/authorize",
    "http://[::1]:9/a", "HTTPS://AS.example.com/a"])
def test_safe_authorization_urls(url: str) -> None:
    check_authorization_url(url)


def test_is_async_redirect() -> None:
    async def coro(url: str) -> str:
        return url

    class AsyncCallable:
        async def __call__(self, url: str) -> str:
            return url

    def plain(url: str) -> str:
        return url

    assert is_async_redirect(coro)
    assert is_async_redirect(functools.partial(coro))
    assert is_async_redirect(AsyncCallable())
    assert not is_async_redirect(plain)
    assert not is_async_redirect(LoopbackRedirect())
    assert not is_async_redirect(PasteRedirect())
    assert not is_async_redirect(HeadlessRedirect())


def test_redirect_uri_of() -> None:
    def plain(url: str) -> str:
        return url

    class WithAttribute:
        redirect_uri = "http://127.0.0.1:9999/cb"

        def __call__(self, url: str) -> str:
            return url

    class WithPrepare(WithAttribute):
        def prepare(self) -> str:
            return "http://127.0.0.1:1234/prepared"

    class Broken:
        redirect_uri = 42

    assert redirect_uri_of(plain) == DEFAULT_REDIRECT_URI
    assert redirect_uri_of(WithAttribute()) == "http://127.0.0.1:9999/cb"
    assert redirect_uri_of(WithPrepare()) == "http://127.0.0.1:1234/prepared"
    assert redirect_uri_of(PasteRedirect("http://localhost/x")) == "http://localhost/x"
    assert redirect_uri_of(HeadlessRedirect()) == DEFAULT_REDIRECT_URI
    with pytest.raises(TypeError):
        redirect_uri_of(Broken())


# -- LoopbackRedirect -----------------------------------------------------------------------------

def test_prepare_binds_an_ephemeral_port_once() -> None:
    with LoopbackRedirect(open_browser=False) as redirect:
        uri = redirect.prepare()
        port = port_of(uri)
        assert port > 0
        assert redirect.prepare() == uri
        assert redirect_uri_of(redirect) == uri
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT):
            pass  # it listens
        assert "listening" in repr(redirect)
    assert "closed" in repr(redirect)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT).close()


@pytest.mark.parametrize("kwargs", [
    {"host": "0.0.0.0"}, {"host": "example.com"}, {"host": "127.0.0.2"}, {"host": ""},
    {"port": -1}, {"port": 70000}, {"path": "callback"}, {"path": "/cb?x=1"},
    {"path": "/cb#f"}, {"timeout": 0}, {"timeout": float("inf")}])
def test_bad_configuration(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LoopbackRedirect(**kwargs)  # type: ignore[arg-type]


def test_the_callback_after_ignored_requests() -> None:
    answers: dict[str, bytes] = {}

    def script(port: int) -> None:
        answers["other path"] = get(port, "/other?code=1")
        answers["prefix"] = get(port, "/callbackx?code=1")
        answers["post"] = get(port, "/callback?code=1", method="POST")
        answers["wrong host"] = get(port, "/callback?code=1", host_header="evil.example")
        answers["wrong port"] = get(port, "/callback?code=1", host_header="127.0.0.1:1")
        answers["no host"] = raw(port, b"GET /callback?code=1 HTTP/1.1\r\n\r\n")
        answers["two hosts"] = raw(port, f"GET /callback HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                         f"Host: 127.0.0.1:{port}\r\n\r\n".encode())
        answers["garbage"] = raw(port, b"\x16\x03\x01\x00\xff\r\n\r\n")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT)
        conn.request("GET", "/callback?code=THECODE&state=S&iss=https%3A%2F%2Fas")
        response = conn.getresponse()
        answers["callback"] = response.read()
        answers["headers"] = str(response.getheaders()).encode()
        assert response.status == 200
        conn.close()

    browser = Browser()
    with LoopbackRedirect(browser=browser) as redirect:
        port = port_of(redirect.prepare())
        callback, _ = drive(redirect, browser, AUTH_URL, script)
    assert callback == f"http://127.0.0.1:{port}/callback?code=THECODE&state=S&iss=https%3A%2F%2Fas"
    for name in ("other path", "prefix", "post", "wrong host", "wrong port", "no host",
                 "two hosts", "garbage"):
        assert status_of(answers[name]) == 404, name
    page = answers["callback"]
    assert b"You can close this window" in page
    assert b"THECODE" not in page and b"code=" not in page and b"iss" not in page
    assert "no-store" in answers["headers"].decode()


def test_oversized_and_truncated_requests_are_ignored() -> None:
    answers: dict[str, bytes] = {}

    def script(port: int) -> bytes:
        big = b"GET /callback?code=" + b"a" * MAX_CALLBACK_REQUEST + b" HTTP/1.1\r\n\r\n"
        answers["big"] = raw(port, big)
        header = f"GET /callback HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX: ".encode()
        answers["big header"] = raw(port, header + b"b" * MAX_CALLBACK_REQUEST + b"\r\n\r\n")
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as sock:
            sock.sendall(b"GET /callback?code=half")  # and hangs up
        return get(port, "/callback?code=ok")

    browser = Browser()
    with LoopbackRedirect(browser=browser) as redirect:
        callback, last = drive(redirect, browser, AUTH_URL, script)
    assert callback.endswith("/callback?code=ok")
    assert status_of(answers["big"]) == 431
    assert status_of(answers["big header"]) == 431
    assert isinstance(last, bytes) and status_of(last) == 200


def test_an_idle_connection_does_not_delay_the_callback() -> None:
    idle: list[socket.socket] = []

    def script(port: int) -> float:
        for _ in range(3):  # a browser's speculative preconnects send nothing
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT))
        started = time.monotonic()
        assert status_of(get(port, "/callback?code=1")) == 200
        return time.monotonic() - started

    try:
        browser = Browser()
        with LoopbackRedirect(browser=browser) as redirect:
            _, elapsed = drive(redirect, browser, AUTH_URL, script)
    finally:
        for sock in idle:
            sock.close()
    assert isinstance(elapsed, float) and elapsed < CALLBACK_CONNECTION_TIMEOUT / 2


def test_timeout() -> None:
    opened: list[str] = []
    redirect = LoopbackRedirect(timeout=0.5, browser=opened.append)
    started = time.monotonic()
    with pytest.raises(AuthorizationError, match=r"no callback within 0\.5 s") as info:
        redirect(AUTH_URL)
    elapsed = time.monotonic() - started
    assert 0.4 <= elapsed < 3.0
    assert opened == [AUTH_URL]
    assert "SECRETSTATE" not in str(info.value)
    assert "closed" in repr(redirect)


def test_a_timeout_while_a_client_dribbles() -> None:
    def script(port: int) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as sock:
            for _ in range(20):  # a slow client never makes the total wait longer
                try:
                    sock.sendall(b"G")
                except OSError:
                    return
                time.sleep(0.05)

    browser = Browser()
    redirect = LoopbackRedirect(timeout=0.5, browser=browser)
    started = time.monotonic()
    with pytest.raises(AuthorizationError, match="no callback"):
        drive(redirect, browser, AUTH_URL, script)
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("url", BAD_URLS[:6], ids=range(6))
def test_unsafe_urls_are_not_opened(url: str) -> None:
    opened: list[str] = []
    redirect = LoopbackRedirect(browser=opened.append, timeout=0.2)
    with pytest.raises(UnsafeUrl):
        redirect(url)
    assert opened == []
    assert "closed" in repr(redirect)


def test_the_browser_callable_gets_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append("webbrowser " + url))
    with LoopbackRedirect(timeout=0.2, browser=opened.append) as redirect, \
            pytest.raises(AuthorizationError):
        redirect(AUTH_URL)
    assert opened == [AUTH_URL]
    with LoopbackRedirect(timeout=0.2) as redirect, pytest.raises(AuthorizationError):
        redirect(AUTH_URL)
    assert opened == [AUTH_URL, "webbrowser " + AUTH_URL]
    with LoopbackRedirect(timeout=0.2, open_browser=False) as redirect, \
            pytest.raises(AuthorizationError):
        redirect(AUTH_URL)
    assert len(opened) == 2


def test_listens_again_on_the_same_port_and_closes_after_use() -> None:
    browser = Browser()
    redirect = LoopbackRedirect(browser=browser)
    uri = redirect.prepare()
    port = port_of(uri)
    first, _ = drive(redirect, browser, AUTH_URL, lambda p: get(p, "/callback?code=1"))
    assert first == uri + "?code=1"
    with pytest.raises(OSError):  # closed after the callback
        socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT).close()
    second, _ = drive(redirect, browser, AUTH_URL, lambda p: get(p, "/callback?code=2"))
    assert second == uri + "?code=2"
    assert redirect.prepare() == uri
    redirect.close()


def test_localhost_names_localhost_and_binds_127() -> None:
    answers: list[bytes] = []

    def script(port: int) -> None:
        answers.append(get(port, "/callback?code=1", host_header=f"127.0.0.1:{port}"))
        answers.append(get(port, "/callback?code=2", host_header=f"LOCALHOST:{port}"))

    browser = Browser()
    with LoopbackRedirect(host="localhost", browser=browser) as redirect:
        uri = redirect.prepare()
        assert uri.startswith("http://localhost:")
        callback, _ = drive(redirect, browser, AUTH_URL, script)
    assert [status_of(a) for a in answers] == [404, 200]
    assert callback == uri + "?code=2"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback")
def test_ipv6_loopback() -> None:
    def script(port: int) -> bytes:
        return get(port, "/callback?code=6", host_header=f"[::1]:{port}", connect="::1")

    browser = Browser()
    with LoopbackRedirect(host="::1", browser=browser) as redirect:
        uri = redirect.prepare()
        assert uri.startswith("http://[::1]:")
        callback, answer = drive(redirect, browser, AUTH_URL, script)
    assert callback == uri + "?code=6"
    assert isinstance(answer, bytes) and status_of(answer) == 200


def test_a_port_in_use() -> None:
    with LoopbackRedirect() as first:
        port = port_of(first.prepare())
        with pytest.raises(AuthorizationError, match="cannot listen"):
            LoopbackRedirect(port=port).prepare()


# -- PasteRedirect --------------------------------------------------------------------------------

def test_paste() -> None:
    prompts: list[str] = []
    out = io.StringIO()

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        return "  http://127.0.0.1/callback?code=abc&state=s \n"

    redirect = PasteRedirect(input=fake_input, output=out)
    assert redirect(AUTH_URL) == "http://127.0.0.1/callback?code=abc&state=s"
    assert len(prompts) == 1
    assert AUTH_URL in out.getvalue()
    assert DEFAULT_REDIRECT_URI in out.getvalue()
    assert redirect.redirect_uri == DEFAULT_REDIRECT_URI


def test_paste_defaults_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    redirect = PasteRedirect("http://localhost:1/cb", input=lambda prompt: "http://x/cb?code=1")
    assert redirect(AUTH_URL) == "http://x/cb?code=1"
    captured = capsys.readouterr()
    assert AUTH_URL in captured.err and captured.out == ""


def test_paste_refusals() -> None:
    def eof(prompt: str) -> str:
        raise EOFError

    asked: list[str] = []
    out = io.StringIO()
    with pytest.raises(UnsafeUrl):
        PasteRedirect(input=asked.append, output=out)("javascript:alert(1)")  # type: ignore[arg-type]
    assert asked == [] and out.getvalue() == ""
    with pytest.raises(AuthorizationError, match="end of input"):
        PasteRedirect(input=eof, output=out)(AUTH_URL)
    with pytest.raises(AuthorizationError, match="no callback URL"):
        PasteRedirect(input=lambda p: "   ", output=out)(AUTH_URL)
    with pytest.raises(AuthorizationError, match="more than") as info:
        PasteRedirect(input=lambda p: "http://x/?code=SECRET" + "a" * MAX_CALLBACK_URL,
                      output=out)(AUTH_URL)
    assert "SECRET" not in str(info.value)


# -- HeadlessRedirect -----------------------------------------------------------------------------

class _Authorize(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str]  # set per server

    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        route = self.path.partition("?")[0]
        self.send_response({"/relative": 302, "/absolute": 303, "/ok": 200, "/none": 302,
                            "/two": 302, "/error": 500}.get(route, 404))
        if route == "/relative":
            self.send_header("Location", "/callback?code=CODE1&state=S")
        elif route == "/absolute":
            self.send_header("Location", "http://127.0.0.1:1/callback?code=CODE2")
        elif route == "/two":
            self.send_header("Location", "/a")
            self.send_header("Location", "/b")
        body = b"x" * (256 * 1024)  # never read by the client
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


def _serve(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="test-authorize", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(JOIN_TIMEOUT)


@pytest.fixture
def authorize_server() -> Iterator[ThreadingHTTPServer]:
    yield from _serve(ThreadingHTTPServer(("127.0.0.1", 0), _Authorize))


def test_headless_follows_nothing_and_returns_location(
        authorize_server: ThreadingHTTPServer) -> None:
    base = f"http://127.0.0.1:{authorize_server.server_address[1]}"
    redirect = HeadlessRedirect()
    assert redirect(f"{base}/relative?state=S&x=1") == f"{base}/callback?code=CODE1&state=S"
    assert redirect(f"{base}/absolute?q=1") == "http://127.0.0.1:1/callback?code=CODE2"
    assert authorize_server.seen == ["/relative?state=S&x=1", "/absolute?q=1"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("route", "message"), [
    ("/ok", "answered 200, not a redirect"), ("/error", "answered 500"),
    ("/none", "0 Location headers"), ("/two", "2 Location headers")])
def test_headless_refusals(authorize_server: ThreadingHTTPServer, route: str,
                           message: str) -> None:
    base = f"http://127.0.0.1:{authorize_server.server_address[1]}"
    with pytest.raises(AuthorizationError, match=message) as info:
        HeadlessRedirect()(f"{base}{route}?state=SECRETSTATE")
    assert "SECRETSTATE" not in str(info.value)


def test_headless_unreachable_and_unsafe() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(AuthorizationError, match="cannot fetch") as info:
            HeadlessRedirect()(f"http://127.0.0.1:{port}/authorize?state=SECRETSTATE")
    assert "SECRETSTATE" not in str(info.value)
    for url in BAD_URLS[:6]:
        with pytest.raises(UnsafeUrl):
            HeadlessRedirect()(url)


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcp-proto test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_headless_verifies_certificates(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Authorize)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    for running in _serve(server):
        url = f"https://127.0.0.1:{running.server_address[1]}/relative?state=SECRETSTATE"
        with pytest.raises(AuthorizationError, match="SSLCertVerificationError") as info:
            HeadlessRedirect()(url)
        assert "SECRETSTATE" not in str(info.value)
