"""TLS for Streamable HTTP, in every binding: certificates are verified by default, and a CA
file (or an ``ssl.SSLContext``) is how a host trusts a private one."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _bindings import BINDINGS, Binding, run
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcp_proto import ConnectionClosed

pytestmark = pytest.mark.usefixtures("no_leaks")


def self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcp-proto test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class _Mcp(BaseHTTPRequestHandler):
    """Just enough of a handshake-era Streamable HTTP server."""

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
        method, rid = message.get("method"), message.get("id")
        if rid is None:
            self._send(202)
        elif method == "initialize":
            self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "tls", "version": "1"}}}).encode())
        elif method == "tools/list":
            self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid,
                                        "result": {"tools": []}}).encode())
        else:
            self._send(400, b"")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tls_url(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    cert, key = self_signed(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Mcp)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, name="test-tls", daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/mcp", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_unknown_certificate_is_refused(binding: str, tls_url: tuple[str, Path]) -> None:
    url, _cert = tls_url

    async def scenario(b: Binding) -> None:
        with pytest.raises(ConnectionClosed, match="CERTIFICATE_VERIFY_FAILED"):
            async with b.connect_http(url, timeout=5, protocol_version="2025-11-25"):
                pass

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_ca_file_trusts_it(binding: str, tls_url: tuple[str, Path]) -> None:
    url, cert = tls_url

    async def scenario(b: Binding) -> None:
        async with b.connect_http(url, timeout=5, ca_file=cert) as client:
            assert client.server_info.name == "tls" and await client.list_tools() == []

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_ssl_context_trusts_it(binding: str, tls_url: tuple[str, Path]) -> None:
    url, cert = tls_url
    context = ssl.create_default_context(cafile=str(cert))

    async def scenario(b: Binding) -> None:
        async with b.connect_http(url, timeout=5, ssl_context=context) as client:
            assert client.server_info.name == "tls"

    run(binding, scenario)
