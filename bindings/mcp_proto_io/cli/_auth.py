"""``mcp-proto login`` / ``logout`` / ``auth status``, and the stored tokens every ``--url``
command uses.

::

    mcp-proto login --url https://mcp.example.com/mcp     # browser, loopback callback, saved
    mcp-proto tools --url https://mcp.example.com/mcp     # uses (and refreshes) the tokens
    mcp-proto auth status                                 # issuer, scopes, expiry per server
    mcp-proto logout --url https://mcp.example.com/mcp

Tokens live in the file store (``--store DIR``, default under the user's config directory:
files 0600 in a 0700 directory).  Nothing here prints a token, a refresh token or a secret.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

from mcp_proto import Implementation
from mcp_proto.auth._urls import canonical_resource

from ..auth import OAuth
from ..auth._redirect import LoopbackRedirect, PasteRedirect
from ..auth._store import FileTokenStore, TokenStoreError
from ..threads import connect_http
from ._args import UsageError

__all__ = ["add_auth_commands", "run_auth_command", "stored_auth"]


def add_auth_commands(add: Any) -> None:
    """The ``login``, ``logout`` and ``auth`` subcommands (``add`` as
    :func:`._args.build_parser` gives)."""
    login = add("login")
    login.add_argument("--url", required=True, help="the MCP server's URL")
    login.add_argument("--scope", help="scopes to ask for beside what the server asks")
    login.add_argument("--client-id", help="a pre-registered client id")
    login.add_argument("--client-secret-env", metavar="VAR",
                       help="the environment variable holding its secret")
    login.add_argument("--issuer", help="the authorization server the client id belongs to")
    login.add_argument("--client-metadata-url", metavar="URL",
                       help="this client's metadata document (an https URL with a path)")
    login.add_argument("--callback-host", default="127.0.0.1",
                       choices=("127.0.0.1", "localhost", "::1"),
                       help="loopback host of the redirect URI (default 127.0.0.1)")
    login.add_argument("--callback-port", type=int, default=0,
                       help="port of the redirect URI (default: any free port)")
    login.add_argument("--no-browser", action="store_true",
                       help="print the URL instead of opening a browser")
    login.add_argument("--paste", action="store_true",
                       help="no listener: paste the URL the browser ends on (over SSH)")
    login.add_argument("--force", action="store_true",
                       help="forget the stored tokens first and authorize again")
    _common(login)
    logout = add("logout")
    logout.add_argument("--url", required=True, help="the MCP server's URL")
    logout.add_argument("--store", metavar="DIR", help="the token store directory")
    auth = add("auth")
    auth_sub = auth.add_subparsers(dest="auth_cmd", required=True, metavar="SUBCOMMAND")
    status = add("status", auth_sub, "auth status")
    status.add_argument("--url", help="only this server")
    status.add_argument("--store", metavar="DIR", help="the token store directory")
    status.add_argument("--json", action="store_true", help="print JSON")


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--store", metavar="DIR", help="the token store directory")
    sp.add_argument("--allow-http", action="store_true",
                    help="allow plain http to an authorization server that is not loopback")
    sp.add_argument("--timeout", type=float, default=300.0,
                    help="seconds for the whole login (default 300)")


def _store(args: argparse.Namespace) -> FileTokenStore:
    return FileTokenStore(args.store) if getattr(args, "store", None) else FileTokenStore()


def stored_auth(args: argparse.Namespace) -> OAuth | None:
    """The non-interactive authorization of a ``--url`` command: the stored tokens (refreshed
    when they expire); without any, a 401 says to run ``mcp-proto login``.  None when the
    command sends its own ``Authorization`` header or the store cannot be read safely (a
    warning says why)."""
    if any(h.split(":", 1)[0].strip().lower() == "authorization"
           for h in getattr(args, "header", [])):
        return None
    try:
        store = _store(args)
        store.keys()  # refuses an unsafe directory now, not in the middle of a call
    except TokenStoreError as exc:
        sys.stderr.write(f"mcp-proto: stored tokens not used: {exc}\n")
        return None
    return OAuth(client_name="mcp-proto", store=store, interactive=False,
                 allow_http=bool(getattr(args, "allow_http", False)))


def run_auth_command(args: argparse.Namespace, out: TextIO, client_info: Implementation) -> int:
    if args.cmd == "login":
        return _login(args, out, client_info)
    if args.cmd == "logout":
        store = _store(args)
        key = canonical_resource(args.url)
        if store.delete(key):
            out.write(f"logged out of {key}\n")
        else:
            out.write(f"no tokens were stored for {key}\n")
        return 0
    return _status(args, out)


def _login(args: argparse.Namespace, out: TextIO, client_info: Implementation) -> int:
    secret = None
    if args.client_secret_env:
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            raise UsageError(f"--client-secret-env: ${args.client_secret_env} is not set")
    if secret and not args.client_id:
        raise UsageError("--client-secret-env needs --client-id")
    store = _store(args)
    key = canonical_resource(args.url)
    if args.force:
        store.delete(key)
    redirect: Any
    if args.paste:
        redirect = PasteRedirect(redirect_uri=f"http://{_host(args.callback_host)}"
                                 f"{':' + str(args.callback_port) if args.callback_port else ''}"
                                 "/callback")
    else:
        redirect = LoopbackRedirect(host=args.callback_host, port=args.callback_port,
                                    open_browser=not args.no_browser, timeout=args.timeout,
                                    browser=_print_url if args.no_browser else None)
    auth = OAuth(client_name="mcp-proto", redirect=redirect, store=store,
                 client_id=args.client_id, client_secret=secret, issuer=args.issuer,
                 client_metadata_url=args.client_metadata_url, scope=args.scope,
                 allow_http=args.allow_http, authorization_timeout=args.timeout)
    sys.stderr.write(f"mcp-proto: connecting to {key} ...\n")
    try:
        with connect_http(args.url, auth=auth, timeout=args.timeout,
                          client_info=client_info) as client:
            client.connect()
            status = client.auth_status
            if status is not None and not status.authorized:
                # Not challenged yet (a stateless server's discovery, or a server that
                # protects only some methods): a request that needs authorization.
                client.list_tools()
                status = client.auth_status
    finally:
        if isinstance(redirect, LoopbackRedirect):
            redirect.close()
    if status is None or not status.authorized:
        out.write(f"{key} did not ask for authorization; nothing stored\n")
        return 0
    out.write(f"logged in to {key} via {status.issuer}"
              f" ({_scope_text(status.scope)}, {_expiry_text(status.expires_at)})\n")
    return 0


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _print_url(url: str) -> None:
    sys.stderr.write(f"open this URL in a browser to authorize:\n  {url}\n")
    sys.stderr.flush()


def _scope_text(scope: str | None) -> str:
    return f"scopes {scope}" if scope else "no scopes"


def _expiry_text(expires_at: float | None) -> str:
    if expires_at is None:
        return "no expiry given"
    left = expires_at - time.time()
    if left <= 0:
        return "expired"
    return f"expires in {left / 60:.0f} min" if left < 7200 else \
        f"expires in {left / 3600:.1f} h"


def _status(args: argparse.Namespace, out: TextIO) -> int:
    store = _store(args)
    keys = store.keys()
    if args.url:
        wanted = canonical_resource(args.url)
        keys = [k for k in keys if k == wanted]
    rows: list[dict[str, Any]] = []
    for key in sorted(keys):
        record = store.load(key) or {}
        issuer = record.get("issuer")
        sub = (record.get("issuers") or {}).get(issuer) if isinstance(issuer, str) else None
        tokens = sub.get("tokens") if isinstance(sub, dict) else None
        tokens = tokens if isinstance(tokens, dict) else {}
        expires = tokens.get("expires_at")
        rows.append({"url": key, "issuer": issuer,
                     "authorized": bool(tokens.get("access_token")),
                     "scope": tokens.get("scope"),
                     "expires_at": expires if isinstance(expires, (int, float)) else None,
                     "refreshable": bool(tokens.get("refresh_token"))})
    if args.json:
        out.write(json.dumps(rows, indent=2) + "\n")
        return 0
    if not rows:
        out.write("no stored authorization" + (f" for {args.url}" if args.url else "") + "\n")
        return 0
    for row in rows:
        state = "logged in" if row["authorized"] else "registered, no token"
        out.write(f"{row['url']}: {state} via {row['issuer']} ({_scope_text(row['scope'])}, "
                  f"{_expiry_text(row['expires_at'])}"
                  f"{', refreshable' if row['refreshable'] else ''})\n")
    return 0

