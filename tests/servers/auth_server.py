"""A scripted OAuth 2.1 authorization server and a protected MCP resource server, in process.

Standard library only.  It exists for the client-authorization tests: the official
conformance suite's mock AS covers the happy paths and its own scenarios; this one is scripted
(by constructor knobs) for misbehaviour the suite does not try, and it records every request
and everything a correct client must never do (:attr:`AuthServer.violations`).

    with AuthServer(required_scope="mcp:write") as srv:
        srv.mcp_url    # "http://127.0.0.1:P/mcp"  (the protected MCP server)
        srv.issuer     # "http://127.0.0.1:Q"      (the AS, another origin; + issuer_path)
        ...
        assert srv.violations == []

Three loopback listeners on ephemeral ports: ``"mcp"`` (MCP at ``/mcp`` plus its protected
resource metadata), ``"as"`` (the AS) and, with ``second_as`` or ``migrate_after_first_call``,
``"as2"`` (another AS with its own issuer and client registry).  Every request is appended to
:attr:`AuthServer.log` as a :class:`Seen` before it is answered.

Identifiers are recognisable: access tokens ``at-as1-<n>`` / ``at-as2-<n>``, refresh tokens
``rt-as1-<n>``, codes ``code-as1-<n>``, client ids ``client-<n>`` (one counter for both ASes,
so an id names one registration), secrets ``secret-<n>``.

String knobs that hold URLs (``prm_resource``, ``challenge_resource_metadata``,
``www_authenticate``, ``metadata_issuer``, ``authorization_servers`` entries, a ``str``
``metadata_body`` / ``prm_body``) may contain the placeholders ``{mcp_origin}``,
``{mcp_url}``, ``{prm_url}``, ``{issuer}``, ``{as_origin}``, ``{issuer2}``, ``{as2_origin}``,
replaced once the ports are known (plain replacement, so JSON braces are safe).

:func:`loopback_redirect_follow` plays the browser: GET the authorization URL without following
the redirect and return ``Location``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
LATEST_VERSION = "2025-11-25"
DEFAULT_PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
ROOT_PRM_PATH = "/.well-known/oauth-protected-resource"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
WRONG_ISS = "https://evil.example.com"
ENDPOINT_NAMES = frozenset({"prm", "metadata", "register", "token", "authorize"})
#: Largest request body read (bytes); larger ones get 413.
MAX_BODY = 8 * 1024 * 1024

ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


@dataclass(frozen=True)
class Seen:
    """One request as received (logged before it is answered)."""

    server: str  # "mcp" | "as" | "as2"
    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # lowercased names; repeated headers joined with ", "
    body: bytes
    form: dict[str, list[str]] | None  # for application/x-www-form-urlencoded bodies
    json: Any  # the parsed body for */json bodies (None if absent or unparsable)
    authorization: str | None
    at: float = 0.0  # time.monotonic() on arrival

    def q(self, name: str) -> str | None:
        """The first value of query parameter ``name``."""
        values = self.query.get(name)
        return values[0] if values else None

    def f(self, name: str) -> str | None:
        """The first value of form field ``name``."""
        values = (self.form or {}).get(name)
        return values[0] if values else None


@dataclass
class ASConfig:
    """How one authorization server behaves (AS2 copies AS1's, then applies ``as2``)."""

    issuer_path: str = ""
    metadata_issuer: str | None = None
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    token_auth_methods: list[str] = field(default_factory=lambda: ["none"])
    registration: bool = True
    cimd_supported: bool = False
    scopes_supported: list[str] | None = None
    grant_types: list[str] = field(
        default_factory=lambda: ["authorization_code", "refresh_token"])
    iss_supported: bool = True
    iss_mode: str = "correct"  # correct | wrong | normalized | omit
    metadata_body: bytes | str | None = None
    metadata_oversize: bool = False
    metadata_endless: bool | str = False  # True / "flood", or "trickle"
    redirect_from: frozenset[str] = frozenset()
    issue_refresh_tokens: bool = True
    rotate_refresh_tokens: bool = True
    token_delay: float = 0.0
    expires_in: int | None = 3600
    token_type: str = "Bearer"
    refuse_token_grant: bool | frozenset[str] = False
    authorize_error: str | None = None
    tricky_secrets: bool = False
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Client:
    client_id: str
    server: str  # "as" | "as2"
    method: str  # token_endpoint_auth_method
    secret: str | None
    redirect_uris: list[str] | None  # None: any
    grant_types: list[str]
    metadata: dict[str, Any]


@dataclass
class Code:
    code: str
    server: str
    client_id: str
    redirect_uri: str
    challenge: str
    method: str
    scope: str | None
    resource: str | None
    used: bool = False


@dataclass
class Token:
    value: str
    kind: str  # "access" | "refresh"
    server: str  # issuing AS: "as" | "as2"
    client_id: str
    scope: str | None
    resource: str | None
    uses: int = 0
    valid: bool = True
    rejected: bool = False  # answered 401 at the MCP server


@dataclass
class _Reply:
    status: int
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)
    stream: Callable[[BaseHTTPRequestHandler], None] | None = None


def _json_reply(status: int, obj: Any, headers: Iterable[tuple[str, str]] = ()) -> _Reply:
    return _Reply(status, json.dumps(obj).encode(), headers=list(headers))


def _oauth_error(status: int, error: str, description: str | None = None,
                 headers: Iterable[tuple[str, str]] = ()) -> _Reply:
    obj = {"error": error}
    if description:
        obj["error_description"] = description
    return _json_reply(status, obj, headers)


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier``."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _mentions(text: str, token: str) -> bool:
    """Whether ``token`` occurs in ``text`` as a whole (``at-as1-1`` is not in ``at-as1-12``)."""
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


def _scopes(scope: str | None) -> set[str]:
    return set((scope or "").split())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: AuthServer, tag: str) -> None:
        self.owner = owner
        self.tag = tag
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(target=self._run_request, args=(request, client_address),
                                  name=f"auth-server-{self.tag}-conn", daemon=True)
        with self.owner._lock:
            self.owner._conns[thread] = request
        thread.start()

    def _run_request(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self.owner._lock:
                self.owner._conns.pop(threading.current_thread(), None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # socket timeout for reads and writes
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        try:
            self.server.owner._serve(self)
        except OSError:  # the client went away, or a socket timeout
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _handle


class AuthServer:
    """Scripted AS + protected MCP server; see the module docstring and the knobs below.

    Resource-server knobs:
      ``dpop``: expect ``Authorization: DPoP <token>`` plus a ``DPoP`` header (presence only);
      challenges use the ``DPoP`` scheme with ``algs="ES256"``.
      ``challenge_scope``: ``scope="..."`` in the 401 challenge.
      ``challenge_resource_metadata``: True (the PRM URL), False (omitted) or a URL string.
      ``www_authenticate``: raw 401 ``WWW-Authenticate`` value; ``no_www_authenticate``: none.
      ``required_scope``: scopes (space-separated) a token needs, else 403 insufficient_scope;
      ``required_scope_for``: only for these JSON-RPC methods (None: every method).
      ``refuse_tokens_forever``: every token gets 401 invalid_token.
      ``expire_after_uses``: a token is good for N POSTs, then 401 (to drive refresh).
      ``migrate_after_first_call``: after the first successful authenticated tools/list or
      tools/call the PRM names AS2 and AS1's tokens get 401 "authorization server has changed".
      ``rs_delay``: seconds before answering each POST /mcp.
      ``prm_path`` / ``prm_at_root``: where the PRM is served (default path-based
      ``/.well-known/oauth-protected-resource/mcp``; root: ``/.well-known/oauth-protected-
      resource``); ``prm_resource``: its ``resource`` (default ``mcp_url``);
      ``prm_scopes_supported``; ``authorization_servers``: its list (``"as"``, ``"as2"`` or
      URLs; default the current AS); ``prm_body``: raw PRM body.
    Authorization-server knobs (fields of :class:`ASConfig`, applied to AS1 and AS2; ``as2``
    overrides any of them for AS2 only, e.g. ``as2={"iss_mode": "wrong"}``): see
    :class:`ASConfig`; ``clients`` pre-registers AS1 clients (``{id: {"client_secret": ...,
    "token_endpoint_auth_method": ..., "redirect_uris": [...] or absent for any}}``).
    """

    def __init__(
        self,
        *,
        # resource server
        dpop: bool = False,
        challenge_scope: str | None = None,
        challenge_resource_metadata: bool | str = True,
        www_authenticate: str | None = None,
        no_www_authenticate: bool = False,
        required_scope: str | None = None,
        required_scope_for: Collection[str] | None = None,
        refuse_tokens_forever: bool = False,
        expire_after_uses: int | None = None,
        migrate_after_first_call: bool = False,
        rs_delay: float = 0.0,
        prm_path: str | None = None,
        prm_at_root: bool = False,
        prm_resource: str | None = None,
        prm_scopes_supported: list[str] | None = None,
        authorization_servers: list[str] | None = None,
        prm_body: bytes | str | None = None,
        # authorization server(s)
        second_as: bool = False,
        issuer_path: str = "",
        metadata_issuer: str | None = None,
        pkce_methods: Collection[str] | None = ("S256",),
        token_auth_methods: Collection[str] = ("none",),
        registration: bool = True,
        cimd_supported: bool = False,
        scopes_supported: list[str] | None = None,
        grant_types: Collection[str] = ("authorization_code", "refresh_token"),
        iss_supported: bool = True,
        iss_mode: str = "correct",
        metadata_body: bytes | str | None = None,
        metadata_oversize: bool = False,
        metadata_endless: bool | str = False,
        redirect_from: Collection[str] = (),
        issue_refresh_tokens: bool = True,
        rotate_refresh_tokens: bool = True,
        token_delay: float = 0.0,
        expires_in: int | None = 3600,
        token_type: str = "Bearer",
        refuse_token_grant: bool | Collection[str] = False,
        authorize_error: str | None = None,
        tricky_secrets: bool = False,
        clients: Mapping[str, Mapping[str, Any]] | None = None,
        as2: Mapping[str, Any] | None = None,
    ) -> None:
        unknown = set(redirect_from) - ENDPOINT_NAMES
        if unknown:
            raise ValueError(f"redirect_from: unknown endpoints {sorted(unknown)}")
        if iss_mode not in ("correct", "wrong", "normalized", "omit"):
            raise ValueError(f"iss_mode: {iss_mode!r}")
        if metadata_endless not in (False, True, "flood", "trickle"):
            raise ValueError(f"metadata_endless: {metadata_endless!r}")
        self.dpop = dpop
        self.challenge_scope = challenge_scope
        self.challenge_resource_metadata = challenge_resource_metadata
        self.www_authenticate = www_authenticate
        self.no_www_authenticate = no_www_authenticate
        self.required_scope = required_scope
        self.required_scope_for = None if required_scope_for is None else set(required_scope_for)
        self.refuse_tokens_forever = refuse_tokens_forever
        self.expire_after_uses = expire_after_uses
        self.migrate_after_first_call = migrate_after_first_call
        self.rs_delay = rs_delay
        self.prm_path = prm_path or (ROOT_PRM_PATH if prm_at_root else DEFAULT_PRM_PATH)
        self.prm_resource_knob = prm_resource
        self.prm_scopes_supported = prm_scopes_supported
        self.authorization_servers_knob = authorization_servers
        self.prm_body = prm_body
        self.second_as = second_as or migrate_after_first_call
        refuse: bool | frozenset[str] = (
            refuse_token_grant if isinstance(refuse_token_grant, bool)
            else frozenset(refuse_token_grant))
        self.as_config = ASConfig(
            issuer_path=issuer_path.rstrip("/"),
            metadata_issuer=metadata_issuer,
            pkce_methods=None if pkce_methods is None else list(pkce_methods),
            token_auth_methods=list(token_auth_methods),
            registration=registration,
            cimd_supported=cimd_supported,
            scopes_supported=scopes_supported,
            grant_types=list(grant_types),
            iss_supported=iss_supported,
            iss_mode=iss_mode,
            metadata_body=metadata_body,
            metadata_oversize=metadata_oversize,
            metadata_endless=metadata_endless,
            redirect_from=frozenset(redirect_from),
            issue_refresh_tokens=issue_refresh_tokens,
            rotate_refresh_tokens=rotate_refresh_tokens,
            token_delay=token_delay,
            expires_in=expires_in,
            token_type=token_type,
            refuse_token_grant=refuse,
            authorize_error=authorize_error,
            tricky_secrets=tricky_secrets,
            clients={k: dict(v) for k, v in (clients or {}).items()},
        )
        overrides = dict(as2 or {})
        if "redirect_from" in overrides:
            overrides["redirect_from"] = frozenset(overrides["redirect_from"])
        if "issuer_path" in overrides:
            overrides["issuer_path"] = overrides["issuer_path"].rstrip("/")
        overrides.setdefault("clients", {})
        self.as2_config = dataclasses.replace(self.as_config, **overrides)

        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._servers: dict[str, _HTTPServer] = {}
        self._threads: list[threading.Thread] = []
        self._conns: dict[threading.Thread, socket.socket] = {}
        self._counter = 0
        self.log: list[Seen] = []
        self.violations: list[str] = []
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, Token] = {}
        self.migrated = False
        self.started = False
        self.mcp_origin = self.mcp_url = self.prm_url = ""
        self.as_origin = self.issuer = self.as2_origin = self.issuer2 = ""

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> AuthServer:
        if self.started:
            return self
        tags = ["mcp", "as"] + (["as2"] if self.second_as else [])
        for tag in tags:
            self._servers[tag] = _HTTPServer(self, tag)
        port = {tag: s.server_address[1] for tag, s in self._servers.items()}
        self.mcp_origin = f"http://127.0.0.1:{port['mcp']}"
        self.mcp_url = self.mcp_origin + "/mcp"
        self.prm_url = self.mcp_origin + self.prm_path
        self.as_origin = f"http://127.0.0.1:{port['as']}"
        self.issuer = self.as_origin + self.as_config.issuer_path
        if "as2" in port:
            self.as2_origin = f"http://127.0.0.1:{port['as2']}"
            self.issuer2 = self.as2_origin + self.as2_config.issuer_path
        for cid, spec in self.as_config.clients.items():
            self._preregister("as", cid, spec)
        for cid, spec in self.as2_config.clients.items():
            self._preregister("as2", cid, spec)
        for tag, srv in self._servers.items():
            thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                      name=f"auth-server-{tag}", daemon=True)
            thread.start()
            self._threads.append(thread)
        self.started = True
        return self

    def stop(self) -> None:
        if not self.started or self._stopping.is_set():
            return
        self._stopping.set()
        for srv in self._servers.values():
            srv.shutdown()
            srv.server_close()
        with self._lock:
            conns = dict(self._conns)
        for sock in conns.values():
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + 3.0
        for thread in [*self._threads, *conns]:
            thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> AuthServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- queries ---------------------------------------------------------------------------

    def count(self, server: str, path: str | None = None, method: str | None = None) -> int:
        with self._lock:
            return sum(1 for s in self.log if s.server == server
                       and (path is None or s.path == path)
                       and (method is None or s.method == method))

    def seen(self, server: str, path: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.log if s.server == server and s.path == path]

    def mcp_methods(self) -> list[str | None]:
        """JSON-RPC methods of every POST /mcp, in order (None for non-request bodies)."""
        with self._lock:
            return [s.json.get("method") if isinstance(s.json, dict) else None
                    for s in self.log if s.server == "mcp" and s.path == "/mcp"
                    and s.method == "POST"]

    @property
    def metadata_path(self) -> str:
        return AS_METADATA_PATH + self.as_config.issuer_path

    @property
    def metadata_url(self) -> str:
        return self.as_origin + self.metadata_path

    @property
    def metadata2_url(self) -> str:
        return self.as2_origin + AS_METADATA_PATH + self.as2_config.issuer_path

    @property
    def resource(self) -> str:
        """The PRM's ``resource`` (what ``resource`` parameters must equal)."""
        if self.prm_resource_knob is not None:
            return self._fill(self.prm_resource_knob)
        return self.mcp_url

    def current_as(self) -> str:
        return "as2" if self.migrated else "as"

    def invalidate_tokens(self) -> None:
        """Make every issued access and refresh token invalid."""
        with self._lock:
            for tok in self.tokens.values():
                tok.valid = False

    # -- helpers ---------------------------------------------------------------------------

    def _fill(self, text: str) -> str:
        for key, value in (("{mcp_origin}", self.mcp_origin), ("{mcp_url}", self.mcp_url),
                           ("{prm_url}", self.prm_url), ("{issuer2}", self.issuer2),
                           ("{issuer}", self.issuer), ("{as_origin}", self.as_origin),
                           ("{as2_origin}", self.as2_origin)):
            text = text.replace(key, value)
        return text

    def _next(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _violate(self, text: str) -> None:
        with self._lock:
            self.violations.append(text)

    def _cfg(self, server: str) -> ASConfig:
        return self.as2_config if server == "as2" else self.as_config

    def _issuer_of(self, server: str) -> str:
        return self.issuer2 if server == "as2" else self.issuer

    def _origin_of(self, server: str) -> str:
        return {"mcp": self.mcp_origin, "as": self.as_origin, "as2": self.as2_origin}[server]

    def _new_secret(self, server: str, n: int) -> str:
        if self._cfg(server).tricky_secrets:
            return f"s3:cr+t/=%&?{n} x"
        return f"secret-{n}"

    def _preregister(self, server: str, cid: str, spec: Mapping[str, Any]) -> None:
        method = spec.get("token_endpoint_auth_method",
                          "client_secret_basic" if spec.get("client_secret") else "none")
        self.clients[cid] = Client(
            client_id=cid, server=server, method=method, secret=spec.get("client_secret"),
            redirect_uris=spec.get("redirect_uris"),
            grant_types=list(spec.get("grant_types", self._cfg(server).grant_types)),
            metadata=dict(spec))

    # -- request plumbing ------------------------------------------------------------------

    def _read(self, handler: _Handler) -> bytes | None:
        if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                line = handler.rfile.readline(1024)
                try:
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    return None
                if size == 0:
                    while handler.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    return None
                chunks.append(handler.rfile.read(size))
                handler.rfile.readline(1024)
            return b"".join(chunks)
        try:
            length = int(handler.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if length < 0 or length > MAX_BODY:
            return None
        return handler.rfile.read(length) if length else b""

    def _serve(self, handler: _Handler) -> None:
        tag = handler.server.tag
        body = self._read(handler)
        split = urllib.parse.urlsplit(handler.path)
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        form = json_body = None
        if body and ctype == "application/x-www-form-urlencoded":
            form = urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        elif body and (ctype == "application/json" or ctype.endswith("+json")):
            with contextlib.suppress(ValueError):
                json_body = json.loads(body)
        seen = Seen(server=tag, method=handler.command, path=split.path,
                    query=urllib.parse.parse_qs(split.query, keep_blank_values=True),
                    headers=headers, body=body or b"", form=form, json=json_body,
                    authorization=headers.get("authorization"), at=time.monotonic())
        with self._lock:
            self.log.append(seen)
        if body is None:
            reply = _oauth_error(413, "invalid_request", "body too large or malformed")
        else:
            self._check_common(seen, split)
            reply = (self._route_mcp(seen) if tag == "mcp" else self._route_as(tag, seen))
        self._send(handler, reply)

    def _send(self, handler: _Handler, reply: _Reply) -> None:
        handler.close_connection = True
        handler.send_response(reply.status)
        if reply.content_type and (reply.body or reply.stream):
            handler.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers:
            handler.send_header(name, value)
        if reply.stream is not None:
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("Connection", "close")
            handler.end_headers()
            if handler.command != "HEAD":
                reply.stream(handler)
            return
        handler.send_header("Content-Length", str(len(reply.body)))
        handler.send_header("Connection", "close")
        handler.end_headers()
        if handler.command != "HEAD" and reply.body:
            handler.wfile.write(reply.body)
        handler.wfile.flush()

    def _check_common(self, seen: Seen, split: urllib.parse.SplitResult) -> None:
        where = f"{seen.server}: {seen.method} {seen.path}"
        with self._lock:
            known = [(t, info.kind) for t, info in self.tokens.items()]
        raw_url = urllib.parse.unquote_plus(split.path + "?" + split.query)
        for name in ("access_token", "refresh_token"):
            if name in seen.query:
                self._violate(f"{where}: {name} in the URL query")
        for tok, _ in known:
            if _mentions(raw_url, tok):
                self._violate(f"{where}: token {tok} in the URL")
        scheme = (seen.authorization or "").split(" ", 1)[0].lower()
        protected = seen.server == "mcp" and seen.path == "/mcp"
        if scheme in ("bearer", "dpop") and not protected:
            self._violate(f"{where}: {scheme} token sent (not to the MCP endpoint)")
        if seen.server == "mcp" and scheme == "basic":
            self._violate(f"{where}: Basic client credentials sent to the resource server")
        if seen.server != "mcp" and seen.body:
            text = seen.body.decode("utf-8", "replace")
            for tok, kind in known:
                if kind == "access" and _mentions(text, tok):
                    self._violate(f"{where}: access token {tok} in the request body")
        if seen.path == "/elsewhere" and (
                seen.authorization or any(k in (seen.form or {}) for k in (
                    "code", "code_verifier", "client_secret", "refresh_token"))):
            self._violate(f"{where}: credentials re-sent to a redirect target")

    def _redirect_away(self, server: str) -> _Reply:
        other = self.as_origin if server == "mcp" else self.mcp_origin
        return _Reply(302, b"", None, [("Location", other + "/elsewhere")])

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    # -- the resource server ---------------------------------------------------------------

    def _route_mcp(self, seen: Seen) -> _Reply:
        if seen.path == "/mcp":
            if seen.method != "POST":
                return _Reply(405, b"", None, [("Allow", "POST")])
            return self._mcp_post(seen)
        if seen.path == self.prm_path and seen.method in ("GET", "HEAD"):
            if "prm" in self.as_config.redirect_from:
                return self._redirect_away("mcp")
            return self._prm()
        return _oauth_error(404, "not_found")

    def _prm(self) -> _Reply:
        if self.prm_body is not None:
            body = self.prm_body
            return _Reply(200, self._fill(body).encode() if isinstance(body, str) else body)
        if self.migrated:
            servers = [self.issuer2]
        elif self.authorization_servers_knob is not None:
            servers = [self.issuer if s == "as" else self.issuer2 if s == "as2" else self._fill(s)
                       for s in self.authorization_servers_knob]
        else:
            servers = [self.issuer]
        doc: dict[str, Any] = {"resource": self.resource, "authorization_servers": servers,
                               "bearer_methods_supported": ["header"]}
        if self.prm_scopes_supported is not None:
            doc["scopes_supported"] = self.prm_scopes_supported
        return _json_reply(200, doc)

    def _challenge(self, error: str, description: str | None, scope: str | None,
                   status: int) -> list[tuple[str, str]]:
        if self.no_www_authenticate:
            return []
        if status == 401 and self.www_authenticate is not None:
            return [("WWW-Authenticate", self._fill(self.www_authenticate))]
        parts = [f'error="{error}"']
        rm = self.challenge_resource_metadata
        rm_url = self.prm_url if rm is True else self._fill(rm) if isinstance(rm, str) else None
        if status == 403:
            if scope:
                parts.append(f'scope="{scope}"')
            if rm_url:
                parts.append(f'resource_metadata="{rm_url}"')
        else:
            if description:
                parts.append(f'error_description="{description}"')
            if rm_url:
                parts.append(f'resource_metadata="{rm_url}"')
            if scope:
                parts.append(f'scope="{scope}"')
        if self.dpop:
            parts.append('algs="ES256"')
        scheme = "DPoP" if self.dpop else "Bearer"
        return [("WWW-Authenticate", f"{scheme} " + ", ".join(parts))]

    def _unauthorized(self, description: str | None, tok: Token | None = None) -> _Reply:
        if tok is not None:
            tok.rejected = True
        obj = {"error": "invalid_token", "error_description": description or "authorization "
               "required"}
        return _json_reply(401, obj, self._challenge("invalid_token", description,
                                                     self.challenge_scope, 401))

    def _authenticate(self, seen: Seen) -> tuple[Token | None, _Reply | None]:
        auth = seen.authorization or ""
        scheme, _, value = auth.partition(" ")
        value = value.strip()
        want = "dpop" if self.dpop else "bearer"
        if not value or scheme.lower() != want:
            return None, self._unauthorized(None)
        if self.dpop and "dpop" not in seen.headers:
            return None, self._unauthorized("DPoP proof missing")
        with self._lock:
            tok = self.tokens.get(value)
            if tok is None or tok.kind != "access":
                self._violate(f"mcp: unknown token {value!r} sent to the MCP server")
                return None, self._unauthorized("unknown token")
            if tok.rejected:
                self._violate(f"mcp: token {value} re-sent after it was rejected with 401")
            if self.refuse_tokens_forever:
                return None, self._unauthorized("token refused", tok)
            if not tok.valid:
                return None, self._unauthorized("token expired", tok)
            accepted = ({"as2"} if self.migrated else {"as", "as2"} if
                        self.second_as and not self.migrate_after_first_call else {"as"})
            if tok.server not in accepted:
                reason = ("authorization server has changed" if self.migrated
                          else "token from an unknown authorization server")
                return None, self._unauthorized(reason, tok)
            if self.expire_after_uses is not None and tok.uses >= self.expire_after_uses:
                tok.valid = False
                return None, self._unauthorized("token expired", tok)
            tok.uses += 1
            return tok, None

    def _mcp_post(self, seen: Seen) -> _Reply:
        self._wait(self.rs_delay)
        tok, denied = self._authenticate(seen)
        if denied is not None:
            return denied
        assert tok is not None
        msg = seen.json
        if not isinstance(msg, dict):
            return _json_reply(400, {"jsonrpc": "2.0", "id": None,
                                     "error": {"code": -32700, "message": "Parse error"}})
        method = msg.get("method")
        if self.required_scope and (self.required_scope_for is None
                                    or method in self.required_scope_for):
            missing = _scopes(self.required_scope) - _scopes(tok.scope)
            if missing:
                body = {"error": "insufficient_scope",
                        "error_description": f"missing scope {' '.join(sorted(missing))}"}
                return _json_reply(403, body, self._challenge(
                    "insufficient_scope", None, self.required_scope, 403))
        if "id" not in msg or method is None:
            return _Reply(202, b"", None)  # a notification, or a response to us
        rid = msg["id"]
        params = msg.get("params") or {}
        result: Any
        if method == "initialize":
            asked = params.get("protocolVersion")
            result = {"protocolVersion": asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION,
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "auth-scripted", "version": "1.0.0"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [ECHO_TOOL]}
        elif method == "tools/call":
            if params.get("name") != "echo":
                return _json_reply(200, {"jsonrpc": "2.0", "id": rid, "error": {
                    "code": -32602, "message": f"Unknown tool: {params.get('name')}"}})
            text = (params.get("arguments") or {}).get("text", "")
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            status = 400 if method == "server/discover" else 200
            return _json_reply(status, {"jsonrpc": "2.0", "id": rid, "error": {
                "code": -32601, "message": "Method not found"}})
        if (self.migrate_after_first_call and method in ("tools/list", "tools/call")):
            with self._lock:
                self.migrated = True
        return _json_reply(200, {"jsonrpc": "2.0", "id": rid, "result": result})

    # -- the authorization server(s) -------------------------------------------------------

    def _route_as(self, server: str, seen: Seen) -> _Reply:
        cfg = self._cfg(server)
        meta_path = AS_METADATA_PATH + cfg.issuer_path
        if seen.path == meta_path and seen.method in ("GET", "HEAD"):
            if "metadata" in cfg.redirect_from:
                return self._redirect_away(server)
            return self._metadata(server)
        if seen.path == "/authorize" and seen.method == "GET":
            if "authorize" in cfg.redirect_from:
                return self._redirect_away(server)
            return self._authorize(server, seen)
        if seen.path == "/token" and seen.method == "POST":
            if "token" in cfg.redirect_from:
                return self._redirect_away(server)
            self._wait(cfg.token_delay)
            return self._token(server, seen)
        if seen.path == "/register" and seen.method == "POST" and cfg.registration:
            if "register" in cfg.redirect_from:
                return self._redirect_away(server)
            return self._register(server, seen)
        return _oauth_error(404, "not_found")

    def _metadata_doc(self, server: str) -> dict[str, Any]:
        cfg = self._cfg(server)
        origin = self._origin_of(server)
        issuer = self._issuer_of(server)
        doc: dict[str, Any] = {
            "issuer": self._fill(cfg.metadata_issuer) if cfg.metadata_issuer else issuer,
            "authorization_endpoint": origin + "/authorize",
            "token_endpoint": origin + "/token",
        }
        if cfg.registration:
            doc["registration_endpoint"] = origin + "/register"
        doc["response_types_supported"] = ["code"]
        doc["grant_types_supported"] = list(cfg.grant_types)
        if cfg.pkce_methods is not None:
            doc["code_challenge_methods_supported"] = list(cfg.pkce_methods)
        doc["token_endpoint_auth_methods_supported"] = list(cfg.token_auth_methods)
        if cfg.scopes_supported is not None:
            doc["scopes_supported"] = list(cfg.scopes_supported)
        if cfg.cimd_supported:
            doc["client_id_metadata_document_supported"] = True
        if cfg.iss_supported:
            doc["authorization_response_iss_parameter_supported"] = True
        if self.dpop:
            doc["dpop_signing_alg_values_supported"] = ["ES256"]
        return doc

    def _metadata(self, server: str) -> _Reply:
        cfg = self._cfg(server)
        if cfg.metadata_body is not None:
            body = cfg.metadata_body
            return _Reply(200, self._fill(body).encode() if isinstance(body, str) else body)
        doc = self._metadata_doc(server)
        if cfg.metadata_endless:
            head = json.dumps(doc)[:-1].encode() + b', "padding": "'
            trickle = cfg.metadata_endless == "trickle"
            return _Reply(200, stream=lambda h: self._endless(h, head, trickle))
        if cfg.metadata_oversize:
            doc["padding"] = "x" * (1024 * 1024)
        return _json_reply(200, doc)

    def _endless(self, handler: BaseHTTPRequestHandler, head: bytes, trickle: bool) -> None:
        deadline = time.monotonic() + 30.0
        piece, interval = (b"x", 0.1) if trickle else (b"x" * 16384, 0.002)
        chunk = head
        while not self._stopping.is_set() and time.monotonic() < deadline:
            try:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            except OSError:
                return
            chunk = piece
            self._stopping.wait(interval)

    def _other_as_client(self, server: str, cid: str | None) -> bool:
        client = self.clients.get(cid or "")
        return client is not None and client.server != server

    def _check_resource(self, server: str, what: str, values: list[str] | None) -> None:
        if not values:
            self._violate(f"{server}: {what} without a resource parameter")
            return
        want = self.resource
        for value in values:
            if value != want:
                self._violate(f"{server}: {what} resource {value!r} != PRM resource {want!r}")

    def _lookup_client(self, server: str, cid: str | None, where: str) -> Client | None:
        cfg = self._cfg(server)
        if not cid:
            return None
        with self._lock:
            client = self.clients.get(cid)
        if client is not None and client.server != server:
            self._violate(f"{server}: {where} with client_id {cid} registered at {client.server}")
            return None
        if client is None and cfg.cimd_supported and cid.startswith("https://"):
            return Client(cid, server, "none", None, None, list(cfg.grant_types), {})
        return client

    def _authorize(self, server: str, seen: Seen) -> _Reply:
        cfg = self._cfg(server)
        q = seen.q
        for name in ("client_secret", "code_verifier"):
            if name in seen.query:
                self._violate(f"{server}: {name} in the authorization request URL")
        self._check_resource(server, "authorization request", seen.query.get("resource"))
        cid = q("client_id")
        redirect_uri = q("redirect_uri")
        client = self._lookup_client(server, cid, "authorization request")
        if client is None:
            return _oauth_error(400, "invalid_client", f"unknown client_id {cid!r}")
        if not redirect_uri or not urllib.parse.urlsplit(redirect_uri).scheme:
            return _oauth_error(400, "invalid_request", "redirect_uri missing or not absolute")
        if client.redirect_uris is not None and redirect_uri not in client.redirect_uris:
            self._violate(f"{server}: redirect_uri {redirect_uri!r} not registered for {cid}")
            return _oauth_error(400, "invalid_request", "redirect_uri not registered")
        state = q("state")
        iss = {"correct": self._issuer_of(server), "wrong": WRONG_ISS,
               "normalized": self._issuer_of(server) + "/", "omit": None}[cfg.iss_mode]

        def back(params: dict[str, str]) -> _Reply:
            if state is not None:
                params["state"] = state
            if iss is not None:
                params["iss"] = iss
            sep = "&" if urllib.parse.urlsplit(redirect_uri).query else "?"
            location = redirect_uri + sep + urllib.parse.urlencode(params)
            return _Reply(302, b"", None, [("Location", location)])

        error = None
        if q("response_type") != "code":
            error = "response_type must be code"
        elif not q("code_challenge"):
            self._violate(f"{server}: authorization request without code_challenge")
            error = "code_challenge required"
        elif q("code_challenge_method") != "S256":
            self._violate(f"{server}: code_challenge_method {q('code_challenge_method')!r}")
            error = "code_challenge_method must be S256"
        if error:
            return back({"error": "invalid_request", "error_description": error})
        if cfg.authorize_error:
            return back({"error": cfg.authorize_error})
        code = f"code-{'as2' if server == 'as2' else 'as1'}-{self._next()}"
        with self._lock:
            self.codes[code] = Code(code, server, client.client_id, redirect_uri,
                                    q("code_challenge") or "", "S256", q("scope"), q("resource"))
        return back({"code": code})

    def _client_auth(self, server: str, seen: Seen) -> tuple[Client | None, _Reply | None]:
        form = seen.form or {}
        basic_id = basic_secret = None
        auth = seen.authorization or ""
        if auth[:6].lower() == "basic ":
            try:
                raw = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8")
            except ValueError:
                return None, _oauth_error(401, "invalid_client", "malformed Basic credentials")
            if ":" not in raw:
                self._violate(f"{server}: Basic credentials without ':'")
                return None, _oauth_error(401, "invalid_client", "malformed Basic credentials")
            user, _, password = raw.partition(":")
            basic_id = urllib.parse.unquote_plus(user)
            basic_secret = urllib.parse.unquote_plus(password)
        form_id = (form.get("client_id") or [None])[0]
        form_secret = (form.get("client_secret") or [None])[0]
        if basic_id is not None and form_secret is not None:
            self._violate(f"{server}: token request uses both Basic and client_secret_post")
        if basic_id is not None and form_id is not None and form_id != basic_id:
            self._violate(f"{server}: form client_id {form_id} != Basic client id {basic_id}")
        cid = basic_id if basic_id is not None else form_id
        client = self._lookup_client(server, cid, "token request")
        if client is None:
            return None, _oauth_error(401, "invalid_client", f"unknown client {cid!r}")
        used = ("client_secret_basic" if basic_id is not None
                else "client_secret_post" if form_secret is not None else "none")
        if used != client.method:
            self._violate(f"{server}: client {cid} registered for {client.method} "
                          f"authenticated with {used}")
            return None, _oauth_error(401, "invalid_client", f"use {client.method}")
        secret = basic_secret if basic_id is not None else form_secret
        if client.method != "none" and secret != client.secret:
            self._violate(f"{server}: wrong client secret for {cid}")
            return None, _oauth_error(401, "invalid_client", "wrong client secret")
        return client, None

    def _token(self, server: str, seen: Seen) -> _Reply:
        cfg = self._cfg(server)
        if seen.form is None:
            self._violate(f"{server}: token request not application/x-www-form-urlencoded")
            return _oauth_error(400, "invalid_request", "form body required")
        grant = seen.f("grant_type")
        self._check_resource(server, f"token request ({grant})", seen.form.get("resource"))
        client, denied = self._client_auth(server, seen)
        if denied is not None:
            return denied
        assert client is not None
        if grant not in cfg.grant_types:
            return _oauth_error(400, "unsupported_grant_type", f"{grant!r} not supported")
        refuse = cfg.refuse_token_grant
        if refuse is True or (not isinstance(refuse, bool) and grant in refuse):
            return _oauth_error(400, "invalid_grant")
        with self._lock:
            if grant == "authorization_code":
                return self._grant_code(server, seen, client)
            if grant == "refresh_token":
                return self._grant_refresh(server, seen, client)
            if grant == "client_credentials":
                if client.method == "none":
                    return _oauth_error(401, "invalid_client", "confidential clients only")
                return self._issue(server, client.client_id, seen.f("scope"),
                                   seen.f("resource"), refresh=False)
        return _oauth_error(400, "unsupported_grant_type", f"{grant!r} not supported")

    def _grant_code(self, server: str, seen: Seen, client: Client) -> _Reply:
        code = self.codes.get(seen.f("code") or "")
        if code is None or code.server != server:
            self._violate(f"{server}: unknown authorization code {seen.f('code')!r}")
            return _oauth_error(400, "invalid_grant", "unknown code")
        if code.used:
            self._violate(f"{server}: authorization code {code.code} used twice")
            return _oauth_error(400, "invalid_grant", "code already used")
        code.used = True
        if code.client_id != client.client_id:
            self._violate(f"{server}: code {code.code} redeemed by another client")
            return _oauth_error(400, "invalid_grant", "code issued to another client")
        if seen.f("redirect_uri") != code.redirect_uri:
            self._violate(f"{server}: token redirect_uri {seen.f('redirect_uri')!r} != "
                          f"authorization redirect_uri {code.redirect_uri!r}")
            return _oauth_error(400, "invalid_grant", "redirect_uri mismatch")
        verifier = seen.f("code_verifier")
        if not verifier:
            self._violate(f"{server}: token request without code_verifier")
            return _oauth_error(400, "invalid_grant", "code_verifier required")
        if s256(verifier) != code.challenge:
            self._violate(f"{server}: PKCE mismatch (S256(code_verifier) != code_challenge)")
            return _oauth_error(400, "invalid_grant", "PKCE verification failed")
        return self._issue(server, client.client_id, code.scope, seen.f("resource"),
                           refresh=self._cfg(server).issue_refresh_tokens)

    def _grant_refresh(self, server: str, seen: Seen, client: Client) -> _Reply:
        value = seen.f("refresh_token") or ""
        old = self.tokens.get(value)
        if old is None or old.kind != "refresh" or old.server != server:
            self._violate(f"{server}: unknown refresh token {value!r}")
            return _oauth_error(400, "invalid_grant", "unknown refresh token")
        if old.client_id != client.client_id:
            self._violate(f"{server}: refresh token {value} presented by another client")
            return _oauth_error(400, "invalid_grant", "refresh token of another client")
        if not old.valid:
            self._violate(f"{server}: refresh token {value} reused after it was rotated")
            return _oauth_error(400, "invalid_grant", "refresh token no longer valid")
        scope = seen.f("scope") or old.scope
        extra = _scopes(scope) - _scopes(old.scope)
        if seen.f("scope") and extra:
            return _oauth_error(400, "invalid_scope", "scope wider than the original grant")
        rotate = self._cfg(server).rotate_refresh_tokens
        if rotate:
            old.valid = False
        reply = self._issue(server, client.client_id, scope, seen.f("resource"),
                            refresh=rotate, refresh_value=None if rotate else value)
        return reply

    def _issue(self, server: str, cid: str, scope: str | None, resource: str | None,
               refresh: bool, refresh_value: str | None = None) -> _Reply:
        cfg = self._cfg(server)
        tag = "as2" if server == "as2" else "as1"
        access = f"at-{tag}-{self._next()}"
        self.tokens[access] = Token(access, "access", server, cid, scope, resource)
        body: dict[str, Any] = {"access_token": access, "token_type": cfg.token_type}
        if cfg.expires_in is not None:
            body["expires_in"] = cfg.expires_in
        if refresh:
            rt = f"rt-{tag}-{self._next()}"
            self.tokens[rt] = Token(rt, "refresh", server, cid, scope, resource)
            body["refresh_token"] = rt
        elif refresh_value:
            body["refresh_token"] = refresh_value
        if scope:
            body["scope"] = scope
        return _json_reply(200, body, [("Cache-Control", "no-store"), ("Pragma", "no-cache")])

    def _register(self, server: str, seen: Seen) -> _Reply:
        cfg = self._cfg(server)
        meta = seen.json
        if not isinstance(meta, dict):
            return _oauth_error(400, "invalid_client_metadata", "a JSON object is required")
        grants = meta.get("grant_types") or ["authorization_code"]
        uris = meta.get("redirect_uris")
        if "authorization_code" in grants and not (
                isinstance(uris, list) and uris and all(isinstance(u, str) for u in uris)):
            return _oauth_error(400, "invalid_redirect_uri", "redirect_uris required")
        asked = meta.get("token_endpoint_auth_method")
        method = asked if asked in cfg.token_auth_methods else cfg.token_auth_methods[0]
        n = self._next()
        cid = f"client-{n}"
        answer = dict(meta)
        answer.update(client_id=cid, client_id_issued_at=int(time.time()),
                      token_endpoint_auth_method=method)
        secret = None
        if method != "none":
            secret = self._new_secret(server, n)
            answer.update(client_secret=secret, client_secret_expires_at=0)
        with self._lock:
            self.clients[cid] = Client(cid, server, method, secret,
                                       list(uris) if isinstance(uris, list) else None,
                                       list(grants), dict(meta))
        return _json_reply(201, answer)


def loopback_redirect_follow(authorization_url: str, timeout: float = 10.0) -> str:
    """Play the browser: GET ``authorization_url`` without following redirects; return the
    ``Location`` of the answer (the callback URL).  Raises ``RuntimeError`` without one."""
    split = urllib.parse.urlsplit(authorization_url)
    cls = http.client.HTTPSConnection if split.scheme == "https" else http.client.HTTPConnection
    conn = cls(split.netloc, timeout=timeout)
    try:
        target = (split.path or "/") + (f"?{split.query}" if split.query else "")
        conn.request("GET", target)
        resp = conn.getresponse()
        resp.read()
        location = resp.getheader("Location")
    finally:
        conn.close()
    if not location:
        raise RuntimeError(f"no Location in the {resp.status} answer to {authorization_url}")
    return urllib.parse.urljoin(authorization_url, location)
