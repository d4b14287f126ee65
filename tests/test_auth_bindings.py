"""End-to-end client authorization in every binding (threads, asyncio, trio), against the
scripted authorization server + protected MCP server of ``tests/servers/auth_server.py``.

Each scenario is written once (``async def scenario(b)``) and run by ``_bindings.run`` for
each binding, which bounds it in time and fails it if a task or a binding thread outlives it.
What is asserted is what the *servers* saw (``srv.log``, ``srv.count``, ``srv.violations``):
which requests went where, how many of each kind, and that no token, code or secret went where
it must not -- not only what the client returned.

Tests marked ``xfail(strict=True, reason="library bug: ...")`` show a library bug described
in /tmp/auth-bindings-report.md; they turn into failures once the bug is fixed.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import trio
from _bindings import BINDINGS, Binding, run
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from mcp_proto_io.auth import (
    ClientCredentials,
    FileTokenStore,
    MemoryTokenStore,
    OAuth,
    TokenStoreError,
)
from servers.auth_server import AuthServer, Seen, loopback_redirect_follow

from mcp_proto import (
    AuthorizationDenied,
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    CallbackRejected,
    DiscoveryError,
    InsufficientScope,
    IssuerMismatch,
    PkceUnsupported,
    RegistrationError,
    ResourceMismatch,
    TokenError,
)
from mcp_proto.auth._flow import MAX_AUTHORIZATIONS_PER_WINDOW, MAX_STEP_UPS_PER_SCOPE

pytestmark = pytest.mark.usefixtures("no_leaks")

#: Per-call deadline of the clients (seconds): everything here is on loopback.
T = 10.0
#: The flow's per-exchange timeout where a server may stall (seconds).
EXCHANGE_TIMEOUT = 3.0
REPORT = "see /tmp/auth-bindings-report.md"


def bug(text: str) -> Any:
    return pytest.mark.xfail(strict=True, reason=f"library bug: {text} ({REPORT})")


def cases(first: list[Any], rest: list[Any]) -> list[Any]:
    """``first`` in every binding, ``rest`` (variants decided by the core alone, the bindings
    only carrying the bytes) in the threads binding, to keep the file fast."""
    out = []
    for b in BINDINGS:
        for case in first + (rest if b == "threads" else []):
            out.append(pytest.param(b, *case.values, id=f"{b}-{case.id}", marks=case.marks))
    return out


# -- helpers ---------------------------------------------------------------------------------------


def oauth(redirect: Callable[[str], Any] = loopback_redirect_follow, **kwargs: Any) -> OAuth:
    kwargs.setdefault("store", MemoryTokenStore())
    kwargs.setdefault("exchange_timeout", EXCHANGE_TIMEOUT)
    return OAuth(client_name="t", redirect=redirect, **kwargs)


async def echo(c: Any, text: str = "hi") -> str:
    result = await c.call_tool("echo", {"text": text})
    return str(result.content[0].text)


async def attempt(c: Any, text: str = "hi") -> str | BaseException:
    """One call: its text, or the exception it raised (the client stays usable)."""
    try:
        return await echo(c, text)
    except Exception as exc:
        return exc


async def failing_calls(b: Binding, url: str, auth: Any, n: int = 1) -> list[BaseException]:
    """``n`` calls on one client that must all fail; their errors.  The client is closed."""
    c = b.connect_http(url, auth=auth, timeout=T)
    errors: list[BaseException] = []
    try:
        for _ in range(n):
            outcome = await attempt(c)
            assert isinstance(outcome, BaseException), f"the call succeeded: {outcome!r}"
            errors.append(outcome)
    finally:
        await c.aclose()
    return errors


def raw(c: Any) -> Any:
    """The client object itself (the threads adapter wraps it)."""
    return getattr(c, "raw", c)


def auth_requests(srv: AuthServer) -> list[tuple[str, str, str]]:
    """(server, method, path) of every request that is not to the MCP endpoint itself."""
    return [(s.server, s.method, s.path) for s in srv.log
            if not (s.server == "mcp" and s.path == "/mcp")]


def as_requests(srv: AuthServer) -> list[Seen]:
    return [s for s in srv.log if s.server in ("as", "as2")]


def mcp_posts(srv: AuthServer) -> list[Seen]:
    return [s for s in srv.log if s.server == "mcp" and s.path == "/mcp" and s.method == "POST"]


def grants(srv: AuthServer, server: str = "as") -> list[str | None]:
    return [s.f("grant_type") for s in srv.seen(server, "/token")]


def authorizations(srv: AuthServer) -> int:
    return srv.count("as", "/authorize") + srv.count("as2", "/authorize")


def secrets_of(srv: AuthServer, *extra: str) -> list[str]:
    """Every token, refresh token, code and client secret the servers issued or know."""
    out = list(srv.tokens) + list(srv.codes)
    out += [c.secret for c in srv.clients.values() if c.secret]
    return out + [e for e in extra if e]


def mentions(text: str, secret: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", text) is not None


def assert_no_secrets(secrets: Iterable[str], *objects: Any) -> None:
    secrets = list(secrets)
    assert secrets, "nothing to look for"
    for obj in objects:
        texts = [repr(obj)]
        if isinstance(obj, BaseException):
            texts.append(str(obj))
            texts += [str(a) for a in obj.args]
            texts += [repr(getattr(obj, "__cause__", None)), repr(obj.__context__)]
        for text in texts:
            for secret in secrets:
                assert not mentions(text, secret), (
                    f"{secret!r} leaks in {type(obj).__name__}: {text[:300]}")


async def in_thread(b: Binding, fn: Callable[[], Any]) -> Any:
    if b.runtime == "trio":
        return await trio.to_thread.run_sync(fn)
    return await asyncio.get_running_loop().run_in_executor(None, fn)


def async_redirect(b: Binding) -> Callable[[str], Any]:
    """An ``async`` redirect handler for the async bindings (a plain one for threads)."""
    if not b.is_async:
        return loopback_redirect_follow

    async def follow(url: str) -> str:
        await b.sleep(0)
        return str(await in_thread(b, lambda: loopback_redirect_follow(url)))

    return follow


def tamper_state(url: str) -> str:
    """Play the browser, then forge the callback's ``state``."""
    callback = loopback_redirect_follow(url)
    forged, n = re.subn(r"([?&])state=[^&]*", r"\1state=forged", callback)
    assert n == 1, callback
    return forged


def drop_state(url: str) -> str:
    callback = loopback_redirect_follow(url)
    return re.sub(r"([?&])state=[^&]*&?", r"\1", callback).rstrip("&?")


def jwt_parts(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    def b64(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    head, body, sig = token.split(".")
    return (json.loads(b64(head)), json.loads(b64(body)), f"{head}.{body}".encode(),
            b64(sig))


# -- the happy path --------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_happy_path_sequence_and_file_store(binding: str, tmp_path: Path) -> None:
    store_dir = tmp_path / "tokens"
    with AuthServer() as srv:
        async def scenario(b: Binding) -> None:
            auth = oauth(async_redirect(b), store=FileTokenStore(store_dir))
            async with b.connect_http(srv.mcp_url, auth=auth, timeout=T) as c:
                assert await echo(c, "one") == "one"
                first = auth_requests(srv)
                assert first == [
                    ("mcp", "GET", "/.well-known/oauth-protected-resource/mcp"),
                    ("as", "GET", "/.well-known/oauth-authorization-server"),
                    ("as", "POST", "/register"),
                    ("as", "GET", "/authorize"),
                    ("as", "POST", "/token"),
                ]
                assert await echo(c, "two") == "two"
                await c.list_tools()
                assert auth_requests(srv) == first  # the token is reused, nothing else asked
            # a new client on the same store: no authorization server nor metadata request
            async with b.connect_http(srv.mcp_url, auth=oauth(
                    store=FileTokenStore(store_dir)), timeout=T) as c2:
                assert await echo(c2, "three") == "three"
            assert auth_requests(srv) == first

        run(binding, scenario)
        assert srv.violations == []
        [token] = srv.seen("as", "/token")
        assert token.f("grant_type") == "authorization_code" and token.f("code")
        [access] = [t for t, info in srv.tokens.items() if info.kind == "access"]
        posts = mcp_posts(srv)
        assert posts[0].authorization is None  # nothing to send before the challenge
        assert {s.authorization for s in posts[1:]} == {f"Bearer {access}"}
        assert all(s.authorization is None for s in srv.log
                   if not (s.server == "mcp" and s.path == "/mcp"))
    assert stat.S_IMODE(os.stat(store_dir).st_mode) == 0o700
    records = [p for p in store_dir.iterdir() if p.suffix == ".json"]
    assert len(records) == 1
    for path in store_dir.iterdir():
        assert stat.S_IMODE(os.lstat(path).st_mode) & 0o077 == 0, path
    assert stat.S_IMODE(os.stat(records[0]).st_mode) == 0o600
    assert access in records[0].read_text()  # the token really is what the store keeps


class SlowStore(MemoryTokenStore):
    """A store whose save takes a while (a file store fsyncing on a busy disk, or waiting for
    another process's lock)."""

    def save(self, key: str, record: dict[str, Any]) -> None:
        time.sleep(0.4)
        super().save(key, record)


@pytest.mark.parametrize("binding", BINDINGS)
def test_closed_means_saved_a_client_opened_right_after_finds_the_tokens(
        binding: str) -> None:
    # Found by CI: the async bindings wrote the tokens in a thread nothing waited for, so a
    # second client opened right after the first one closed authorized all over again.
    store = SlowStore()
    with AuthServer() as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(async_redirect(b), store=store),
                                      timeout=T) as c:
                assert await echo(c, "one") == "one"
            first = auth_requests(srv)
            assert [p for _, _, p in first].count("/token") == 1
            record = store.load(store.keys()[0])
            assert record is not None
            assert record["issuers"][record["issuer"]]["tokens"]["access_token"] in srv.tokens
            async with b.connect_http(srv.mcp_url, auth=oauth(async_redirect(b), store=store),
                                      timeout=T) as c2:
                assert await echo(c2, "two") == "two"
            assert auth_requests(srv) == first  # the stored token served: nothing asked again

        run(binding, scenario)
        assert srv.violations == []


# -- discovery refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_prm_for_another_resource_is_refused_before_any_as_request(binding: str) -> None:
    with AuthServer(prm_resource="{mcp_origin}/other") as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, ResourceMismatch), repr(error)

        run(binding, scenario)
        assert srv.count("as") == 0
        assert srv.count("mcp", srv.prm_path) >= 1
        assert srv.violations == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_issuer_with_a_trailing_slash_is_a_mismatch(binding: str) -> None:
    with AuthServer(metadata_issuer="{issuer}/") as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, IssuerMismatch), repr(error)

        run(binding, scenario)
        assert {s.path for s in as_requests(srv)} == {srv.metadata_path}
        assert srv.count("as", "/register") == srv.count("as", "/authorize") == 0
        assert srv.count("as", "/token") == 0
        assert srv.violations == []


@pytest.mark.parametrize(("binding", "methods"), [
    *[pytest.param(b, None, id=f"{b}-absent") for b in BINDINGS],
    pytest.param("threads", ["plain"], id="threads-plain"),
])
def test_no_s256_pkce_is_refused(binding: str, methods: list[str] | None) -> None:
    with AuthServer(pkce_methods=methods) as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, PkceUnsupported), repr(error)

        run(binding, scenario)
        assert srv.count("as", "/authorize") == srv.count("as", "/token") == 0
        assert srv.count("as", "/register") == 0
        assert srv.violations == []


@pytest.mark.parametrize("how", ["oversize", "endless"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_huge_metadata_body_is_cut_off(binding: str, how: str) -> None:
    knob = {"metadata_oversize": True} if how == "oversize" else {"metadata_endless": True}
    with AuthServer(**knob) as srv, AuthServer() as other:
        async def scenario(b: Binding) -> None:
            started = time.monotonic()
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            elapsed = time.monotonic() - started
            assert isinstance(error, DiscoveryError), repr(error)
            assert "65536" in str(error) or "over" in str(error), str(error)
            # the body cap stopped it, not the exchange timeout (two procedures at most)
            assert elapsed < EXCHANGE_TIMEOUT, elapsed
            # the other servers are still fine, from the same runtime
            async with b.connect_http(other.mcp_url, auth=oauth(), timeout=T) as c:
                assert await echo(c) == "hi"

        run(binding, scenario)
        assert srv.count("as", "/register") == srv.count("as", "/token") == 0
        assert srv.violations == other.violations == []


# -- redirects -------------------------------------------------------------------------------------


REDIRECT_CASES = [
    pytest.param("prm", AuthorizationError, id="prm"),
    pytest.param("metadata", DiscoveryError, id="metadata"),
    pytest.param("register", RegistrationError, id="register"),
    pytest.param("token", TokenError, id="token"),
]


@pytest.mark.parametrize(("endpoint", "expected"), REDIRECT_CASES)
@pytest.mark.parametrize("binding", BINDINGS)
def test_redirects_are_never_followed(binding: str, endpoint: str,
                                      expected: type[Exception]) -> None:
    with AuthServer(redirect_from={endpoint}) as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, AuthorizationError), repr(error)
            assert isinstance(error, expected), repr(error)

        run(binding, scenario)
        assert not [s for s in srv.log if s.path == "/elsewhere"]
        if endpoint == "prm":  # the redirect pointed at the AS: nothing went there
            assert srv.count("as") == 0
        if endpoint in ("prm", "metadata", "register"):
            assert srv.count("as", "/authorize") == srv.count("as", "/token") == 0
        assert srv.violations == []


# -- refused tokens: bounded -----------------------------------------------------------------------


@pytest.mark.parametrize("refresh", [
    pytest.param(True, id="with-refresh-tokens"),
    pytest.param(False, id="no-refresh-tokens"),
])
@pytest.mark.parametrize("binding", BINDINGS)
def test_refused_token_fails_fast_and_bounds_the_browser(binding: str, refresh: bool) -> None:
    with AuthServer(refuse_tokens_forever=True, issue_refresh_tokens=refresh) as srv:
        async def scenario(b: Binding) -> None:
            c = b.connect_http(srv.mcp_url, auth=oauth(), timeout=T)
            try:
                started = time.monotonic()
                counts = []
                for _ in range(3):
                    error = await attempt(c)
                    assert isinstance(error, AuthorizationRejected), repr(error)
                    await b.sleep(0.1)  # anything still running on its own shows up
                    counts.append(authorizations(srv))
                assert time.monotonic() - started < 3 * T
            finally:
                await c.aclose()
            assert counts[0] <= 1, counts  # one browser for the first call
            steps = [counts[0]] + [y - x for x, y in itertools.pairwise(counts)]
            assert max(steps) <= 1, counts  # at most one per call
            assert counts[-1] <= MAX_AUTHORIZATIONS_PER_WINDOW, counts

        run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_refused_token_refreshes_at_most_once_per_call(binding: str) -> None:
    with AuthServer(refuse_tokens_forever=True) as srv:
        async def scenario(b: Binding) -> None:
            errors = await failing_calls(b, srv.mcp_url, oauth(), n=3)
            assert all(isinstance(e, AuthorizationRejected) for e in errors), errors

        run(binding, scenario)
        assert grants(srv).count("refresh_token") <= 3, grants(srv)


@pytest.mark.parametrize("binding", BINDINGS)
def test_refused_token_is_never_sent_again(binding: str) -> None:
    with AuthServer(refuse_tokens_forever=True, issue_refresh_tokens=False) as srv:
        async def scenario(b: Binding) -> None:
            await failing_calls(b, srv.mcp_url, oauth(), n=2)

        run(binding, scenario)
        assert not [v for v in srv.violations if "re-sent after it was rejected" in v]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_failed_authorization_runs_once_per_call(binding: str) -> None:
    with AuthServer(iss_mode="wrong") as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, CallbackRejected), repr(error)

        run(binding, scenario)
        assert srv.count("mcp", srv.prm_path) == 1
        assert srv.count("as", "/authorize") == 1


# -- concurrency -----------------------------------------------------------------------------------


N_CONCURRENT = 20


async def concurrently(b: Binding, c: Any, n: int = N_CONCURRENT) -> list[str]:
    return await b.gather(*[(lambda i=i: echo(c, f"m{i}")) for i in range(n)])


@pytest.mark.parametrize("binding", BINDINGS)
def test_twenty_concurrent_401s_share_one_authorization(binding: str) -> None:
    with AuthServer(token_delay=0.3) as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(), timeout=T) as c:
                texts = await concurrently(b, c)
            assert texts == [f"m{i}" for i in range(N_CONCURRENT)]

        run(binding, scenario)
        assert srv.count("mcp", srv.prm_path) == 1
        assert srv.count("as", "/register") == 1
        assert srv.count("as", "/authorize") == 1
        assert srv.count("as", "/token") == 1
        assert srv.violations == []
        calls = [s for s in mcp_posts(srv) if (s.json or {}).get("method") == "tools/call"]
        assert len({s.json["id"] for s in calls}) == N_CONCURRENT


@pytest.mark.parametrize("binding", BINDINGS)
def test_concurrent_calls_on_an_expired_token_share_one_refresh(binding: str) -> None:
    uses = 30  # what a token is good for: more than the burst needs after the refresh
    with AuthServer(expire_after_uses=uses, rotate_refresh_tokens=True, token_delay=0.3) as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(), timeout=T) as c:
                [first] = [t for t in srv.tokens.values() if t.kind == "access"]
                for _ in range(uses):  # wear the token out, bounded
                    if first.uses >= uses:
                        break
                    await echo(c)
                assert first.uses == uses
                texts = await concurrently(b, c)
            assert texts == [f"m{i}" for i in range(N_CONCURRENT)]

        run(binding, scenario)
        assert grants(srv) == ["authorization_code", "refresh_token"]
        assert srv.count("as", "/authorize") == 1
        [old, new] = [t for t, info in srv.tokens.items() if info.kind == "access"]
        # Requests in flight together all carry the worn-out token; the server flags those
        # that arrive after its first 401 as "re-sent", which the client could not know
        # yet.  What the client must not do: send one request twice with the refused token.
        assert [v for v in srv.violations
                if not v.startswith(f"mcp: token {old} re-sent after it was rejected")] == []
        by_id: dict[Any, list[str | None]] = {}
        for s in mcp_posts(srv):
            if isinstance(s.json, dict) and s.json.get("method") == "tools/call":
                by_id.setdefault(s.json["id"], []).append(s.authorization)
        burst = [ids for ids in by_id.values() if f"Bearer {new}" in ids]
        assert len(burst) == N_CONCURRENT
        for sent in burst:
            assert sent.count(f"Bearer {old}") <= 1 and sent[-1] == f"Bearer {new}", sent


@pytest.mark.parametrize("binding", BINDINGS)
def test_token_is_refreshed_before_it_expires(binding: str) -> None:
    # A two-second token is refreshed once half its life is gone (a short-lived token is not
    # refreshed the moment it arrives: that would loop)
    with AuthServer(expires_in=2) as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(), timeout=T) as c:
                assert await echo(c, "one") == "one"
                await b.sleep(1.3)
                before = len(srv.log)
                assert await echo(c, "two") == "two"
                later = srv.log[before:]
            assert [(s.server, s.path, s.f("grant_type")) for s in later] == [
                ("as", "/token", "refresh_token"), ("mcp", "/mcp", None)]
            [old, new] = [t for t, info in srv.tokens.items() if info.kind == "access"]
            assert later[-1].authorization == f"Bearer {new}"
            assert not srv.tokens[old].rejected  # no 401 was needed

        run(binding, scenario)
        assert grants(srv) == ["authorization_code", "refresh_token"]
        assert srv.violations == []


# -- authorization server migration ----------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_authorization_server_migration(binding: str) -> None:
    with AuthServer(migrate_after_first_call=True) as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(), timeout=T) as c:
                assert await echo(c, "one") == "one"
                assert await echo(c, "two") == "two"

        run(binding, scenario)
        assert srv.violations == []  # AS1's client_id / tokens never reach AS2
        assert srv.count("as2", "/register") == 1
        assert srv.count("as2", "/token") == 1
        as1_ids = {cid for cid, cl in srv.clients.items() if cl.server == "as"}
        assert not [s for s in srv.log if s.server == "as2" and (
            s.q("client_id") in as1_ids or s.f("client_id") in as1_ids)]


# -- the callback ----------------------------------------------------------------------------------


CALLBACK_CASES = cases([
    pytest.param({}, tamper_state, id="forged-state"),
    pytest.param({"iss_mode": "wrong"}, loopback_redirect_follow, id="iss-wrong"),
], [
    pytest.param({}, drop_state, id="missing-state"),
    pytest.param({"iss_mode": "normalized"}, loopback_redirect_follow, id="iss-normalized"),
    pytest.param({"iss_mode": "omit"}, loopback_redirect_follow, id="iss-omitted"),
])


@pytest.mark.parametrize(("binding", "knobs", "redirect"), CALLBACK_CASES)
def test_bad_callback_is_rejected_and_no_token_requested(
        binding: str, knobs: dict[str, Any], redirect: Callable[[str], str]) -> None:
    with AuthServer(**knobs) as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth(redirect))
            assert isinstance(error, CallbackRejected), repr(error)
            assert_no_secrets(secrets_of(srv), error)

        run(binding, scenario)
        assert srv.count("as", "/authorize") >= 1
        assert srv.count("as", "/token") == 0
        assert srv.violations == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_access_denied_is_authorization_denied(binding: str) -> None:
    with AuthServer(authorize_error="access_denied") as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, AuthorizationDenied), repr(error)
            assert "access_denied" in str(error)

        run(binding, scenario)
        assert srv.count("as", "/token") == 0
        assert srv.violations == []


# -- step-up ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_step_up_asks_for_the_union_of_scopes(binding: str) -> None:
    with AuthServer(challenge_scope="mcp:read", required_scope="mcp:write") as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(), timeout=T) as c:
                assert await echo(c) == "hi"

        run(binding, scenario)
        scopes = [s.q("scope") for s in srv.seen("as", "/authorize")]
        assert scopes == ["mcp:read", "mcp:read mcp:write"]
        assert grants(srv) == ["authorization_code", "authorization_code"]
        assert srv.count("as", "/register") == 1  # the registration is reused
        assert srv.count("mcp", srv.prm_path) == 1
        assert srv.violations == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_unsatisfiable_scope_fails_after_bounded_step_ups(binding: str) -> None:
    # The RS wants offline_access, which the client never asks for from an AS that does not
    # list it: the 403 can never be satisfied.
    with AuthServer(required_scope="offline_access") as srv:
        async def scenario(b: Binding) -> None:
            started = time.monotonic()
            [error] = await failing_calls(b, srv.mcp_url, oauth())
            assert isinstance(error, InsufficientScope), repr(error)
            assert time.monotonic() - started < T

        run(binding, scenario)
        assert 1 < srv.count("as", "/authorize") <= min(1 + MAX_STEP_UPS_PER_SCOPE,
                                                        MAX_AUTHORIZATIONS_PER_WINDOW)
        assert srv.violations == []


# -- machine credentials ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_client_credentials_with_a_secret(binding: str, method: str) -> None:
    secret = "s3:cr+t/=%&? x"  # characters that need encoding either way
    with AuthServer(token_auth_methods=[method], grant_types=["client_credentials"],
                    clients={"m2m": {"client_secret": secret,
                                     "token_endpoint_auth_method": method}}) as srv:
        async def scenario(b: Binding) -> None:
            auth = ClientCredentials("m2m", client_secret=secret, issuer=srv.issuer,
                                     method=method)
            async with b.connect_http(srv.mcp_url, auth=auth, timeout=T) as c:
                assert await echo(c) == "hi"
                assert_no_secrets(secrets_of(srv, secret), auth, raw(c), auth.token_store())

        run(binding, scenario)
        assert srv.violations == []
        [token] = srv.seen("as", "/token")
        assert token.f("grant_type") == "client_credentials"
        assert token.f("resource") == srv.mcp_url
        if method == "client_secret_basic":
            assert (token.authorization or "").startswith("Basic ")
            assert token.f("client_secret") is None
        else:
            assert token.authorization is None
            assert (token.f("client_id"), token.f("client_secret")) == ("m2m", secret)
        assert srv.count("as", "/register") == srv.count("as", "/authorize") == 0


@pytest.mark.parametrize("binding", BINDINGS)
def test_private_key_jwt_assertion(binding: str) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    # The scripted AS does not verify JWTs (it sees "none" and refuses): check what was sent.
    with AuthServer(token_auth_methods=["private_key_jwt"], grant_types=["client_credentials"],
                    clients={"jwt-client": {"token_endpoint_auth_method":
                                            "private_key_jwt"}}) as srv:
        async def scenario(b: Binding) -> None:
            auth = ClientCredentials("jwt-client", private_key=pem, issuer=srv.issuer)
            error = (await failing_calls(b, srv.mcp_url, auth))[0]
            assert isinstance(error, TokenError), repr(error)
            assert_no_secrets([s.f("client_assertion") or "" for s in
                               srv.seen("as", "/token")], error, auth)

        run(binding, scenario)
        sent = srv.seen("as", "/token")
        assert sent
        jtis = []
        for s in sent:
            assert s.authorization is None and s.f("client_secret") is None
            assert s.f("grant_type") == "client_credentials"
            assert s.f("client_id") == "jwt-client"
            assert s.f("client_assertion_type") == (
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            head, claims, signed, sig = jwt_parts(s.f("client_assertion") or "")
            assert head["alg"] == "ES256"
            assert claims["iss"] == claims["sub"] == "jwt-client"
            assert claims["aud"] == srv.issuer
            assert 0 < claims["exp"] - claims["iat"] <= 300
            assert abs(claims["iat"] - time.time()) < 60
            jtis.append(claims["jti"])
            der = encode_dss_signature(int.from_bytes(sig[:32], "big"),
                                       int.from_bytes(sig[32:], "big"))
            key.public_key().verify(der, signed, ec.ECDSA(hashes.SHA256()))
        assert len(set(jtis)) == len(jtis)  # a fresh jti each time
        assert [v for v in srv.violations if "authenticated with none" not in v] == []


@pytest.mark.parametrize("kind", ["client-credentials", "oauth-preregistered"])
@pytest.mark.parametrize("binding", BINDINGS)
def test_credentials_for_another_issuer_are_not_sent(binding: str, kind: str) -> None:
    secret = "pre-secret-1"
    with AuthServer(token_auth_methods=["client_secret_basic"],
                    clients={"pre": {"client_secret": secret}}) as srv:
        async def scenario(b: Binding) -> None:
            elsewhere = "https://as.example.com"
            auth: Any = (ClientCredentials("pre", client_secret=secret, issuer=elsewhere)
                         if kind == "client-credentials" else
                         oauth(client_id="pre", client_secret=secret, issuer=elsewhere))
            [error] = await failing_calls(b, srv.mcp_url, auth)
            assert isinstance(error, IssuerMismatch), repr(error)
            assert_no_secrets([secret], error, auth)

        run(binding, scenario)
        assert srv.count("as", "/token") == 0
        assert srv.count("as", "/authorize") == srv.count("as", "/register") == 0
        assert not [s for s in srv.log if mentions(s.body.decode(errors="replace"), secret)
                    or (s.authorization or "").lower().startswith("basic")]
        assert srv.violations == []


# -- no auth configured ----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_401_without_auth_is_authorization_required(binding: str) -> None:
    with AuthServer() as srv:
        async def scenario(b: Binding) -> None:
            [error] = await failing_calls(b, srv.mcp_url, None)
            assert isinstance(error, AuthorizationRequired), repr(error)
            assert error.status == 401

        run(binding, scenario)
        assert auth_requests(srv) == []  # no discovery without auth
        assert all(s.authorization is None for s in srv.log)
        assert srv.violations == []


# -- secrets never leak ----------------------------------------------------------------------------


LEAK_CASES = cases([
    pytest.param({"refuse_tokens_forever": True}, {}, id="refused-token"),
    pytest.param({"iss_mode": "wrong", "token_auth_methods": ["client_secret_post"],
                  "tricky_secrets": True}, {}, id="callback-rejected"),
], [
    pytest.param({"refuse_token_grant": True, "token_auth_methods": ["client_secret_basic"]},
                 {}, id="token-refused"),
    pytest.param({"required_scope": "offline_access"}, {}, id="insufficient-scope"),
    pytest.param({"clients": {"pre": {"client_secret": "pre-secret-9"}},
                  "token_auth_methods": ["client_secret_basic"], "refuse_tokens_forever": True},
                 {"client_id": "pre", "client_secret": "pre-secret-9"}, id="preregistered"),
])


@pytest.mark.parametrize(("binding", "knobs", "auth_kwargs"), LEAK_CASES)
def test_errors_and_reprs_carry_no_secrets(binding: str, knobs: dict[str, Any],
                                           auth_kwargs: dict[str, Any]) -> None:
    with AuthServer(**knobs) as srv:
        async def scenario(b: Binding) -> None:
            store = MemoryTokenStore()
            auth = oauth(store=store, **auth_kwargs)
            c = b.connect_http(srv.mcp_url, auth=auth, timeout=T)
            try:
                error = await attempt(c)
                assert isinstance(error, AuthorizationError), repr(error)
                objects: list[Any] = [error, auth, store, raw(c)]
                status = getattr(raw(c), "auth_status", None)
                if callable(status):
                    objects.append(status())
                secrets = secrets_of(srv, auth_kwargs.get("client_secret", ""))
                secrets += [s.q("code") or "" for s in srv.log if s.q("code")]
                assert_no_secrets([s for s in secrets if s], *objects)
            finally:
                await c.aclose()

        run(binding, scenario)


# -- the store -------------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_store_file_readable_by_others_is_refused(binding: str, tmp_path: Path) -> None:
    store_dir = tmp_path / "tokens"
    with AuthServer() as srv:
        async def scenario(b: Binding) -> None:
            async with b.connect_http(srv.mcp_url, auth=oauth(
                    store=FileTokenStore(store_dir)), timeout=T) as c:
                assert await echo(c) == "hi"
            [record] = [p for p in store_dir.iterdir()
                        if p.suffix == ".json" and not p.name.startswith(".tmp-")]
            os.chmod(record, 0o644)
            before = len(srv.log)
            [error] = await failing_calls(b, srv.mcp_url, oauth(store=FileTokenStore(store_dir)))
            assert isinstance(error, TokenStoreError), repr(error)
            assert len(srv.log) == before  # refused before any request
            assert_no_secrets(secrets_of(srv), error)

        run(binding, scenario)
        assert srv.violations == []


@pytest.mark.parametrize("binding", BINDINGS)
def test_refresh_answer_arriving_after_close_is_still_saved(binding: str) -> None:
    # The AS rotates the refresh token as soon as it processes the refresh: an answer the
    # client drops because it closed meanwhile leaves a dead refresh token in the store.
    with AuthServer(expires_in=2, rotate_refresh_tokens=True) as srv:
        store = MemoryTokenStore()

        async def scenario(b: Binding) -> None:
            c = b.connect_http(srv.mcp_url, auth=oauth(store=store), timeout=T)
            try:
                assert await echo(c, "one") == "one"
                await b.sleep(1.2)  # now within REFRESH_SKEW of expiry
                srv.as_config.token_delay = 0.3  # the refresh is slow to answer
                async with b.tasks() as tg:
                    job = tg.spawn(attempt, c, "two")
                    assert await b.wait_until(lambda: srv.count("as", "/token") == 2, T)
                    await c.aclose()  # closed while the refresh is in flight
                    await job.wait()
            finally:
                await c.aclose()
            await b.sleep(0.5)  # the AS has answered by now
            srv.as_config.token_delay = 0.0
            async with b.connect_http(srv.mcp_url, auth=oauth(store=store), timeout=T) as c2:
                assert await echo(c2, "three") == "three"

        run(binding, scenario)
        assert [v for v in srv.violations if "reused after it was rotated" in v] == []
        assert srv.count("as", "/authorize") == 1  # no new login needed
