"""A Streamable HTTP endpoint under asyncio or trio: the core's exchanges, started and aborted
as it says, at most :data:`MAX_HTTP_EXCHANGES` at once, and the authorization flow's work.

The runtime runs each exchange on a connection of its own (:meth:`HttpPump._start_exchange`),
feeding :meth:`HttpPump._on_http_data`; the flow's requests run in daemon threads, the user
step in a task.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from mcp_proto import AuthorizationError, MCPError, RedirectRequired, SaveRecord

from .._client import HttpOptions, user_step
from .._tuning import MAX_HTTP_EXCHANGES
from ..auth._deferred import (
    Running,
    deliver_callback,
    is_async_redirect,
    redirect_failure,
    run_auth_exchange,
    run_in_daemon_thread,
)
from ._pump import SETTLE_POLL, AsyncPump, Runtime, TaskHandle

if TYPE_CHECKING:
    from mcp_proto import AuthExchange, AuthResponse, AuthStatus
    from mcp_proto.http._streamable import HttpExchange

__all__ = ["SAVE_WAIT", "HttpPump"]

#: Seconds ``aclose()`` waits for the token records still being written: a client opened on
#: the same store right after must find them (else it authorizes again).  A file store's save
#: takes milliseconds but may wait ``LOCK_TIMEOUT`` (10 s) for another process's lock; past
#: this the write goes on in its own (non-daemon) thread and the close returns.
SAVE_WAIT = 12.0


class HttpPump(AsyncPump):
    """A Streamable HTTP endpoint: the core's exchanges, started and aborted as it says.  The
    runtime runs each exchange (:meth:`_start_exchange`), feeding :meth:`_on_http_data`."""

    def __init__(self, client: HttpOptions, rt: Runtime) -> None:
        super().__init__(client, rt)
        self.client: HttpOptions = client
        self.auth = client._auth_setup
        self.http = client._streamable_http(self.session, self.tracer)
        self.target = self.http.url
        self.queued: list[HttpExchange] = []  # over MAX_HTTP_EXCHANGES, waiting their turn
        self.running = 0
        self.redirect_task: TaskHandle | None = None  # the user step's handler
        self.saving: list[Running] = []  # records being written, off the loop

    def _deadline(self) -> float | None:
        return self.http.next_deadline()

    def _on_timer(self) -> None:
        self.http.handle_timeout(time.monotonic())
        self._after()

    def _flush(self) -> None:
        http = self.http
        # Starting first: that is what turns a cancellation or a timeout into aborts.
        starting = http.exchanges_to_start()
        aborted = http.exchanges_to_abort()
        if http.auth is not None:
            self._auth_work()
        if aborted:  # C-04: closing the stream is the cancellation
            if self.queued:
                gone = set(aborted)
                self.queued = [ex for ex in self.queued if ex.id not in gone]
            for ex_id in aborted:
                self._abort_exchange(ex_id)
        for ex in starting:
            if ex.aborted:
                continue  # over before it was sent
            if self.running < MAX_HTTP_EXCHANGES:
                self.running += 1
                self._start_exchange(ex)
            else:
                self.queued.append(ex)

    def _auth_work(self) -> None:
        """The authorization flow's requests and events: each exchange and the user step run
        as tasks (the blocking parts in a thread); records are saved at once."""
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        flow.exchanges_to_abort()  # each exchange ends by its own deadline
        for ax in flow.exchanges_to_start():
            self._start_auth(ax)
        while (event := flow.next_event()) is not None:
            if isinstance(event, SaveRecord):
                self._save(event)
            elif isinstance(event, RedirectRequired):
                stale = self.redirect_task
                if stale is not None:
                    stale.cancel()
                    setup.close()  # an earlier step's handler still waits: let it go
                self.redirect_task = self.spawn(
                    "mcp-proto-redirect", lambda ev=event: self._redirect(ev))  # type: ignore[misc]

    def _save(self, event: SaveRecord) -> None:
        """Save a record off the loop (the file store fsyncs, and may wait for another
        process's lock); the setup keeps the newest if two land out of order."""
        setup = self.auth
        assert setup is not None

        def done(_value: Any, error: BaseException | None) -> None:
            if error is not None:
                print(f"mcp-proto: tokens not saved: {error}", file=sys.stderr)

        if self.closing:  # at close the process may be about to exit: write it now
            try:
                setup.save(event.key, event.record, event.serial)
            except AuthorizationError as exc:
                done(None, exc)
            return
        # Not a daemon: an exiting process still finishes writing the tokens it was given.
        self.saving = [t for t in self.saving if t.is_alive()]
        self.saving.append(run_in_daemon_thread(
            lambda: setup.save(event.key, event.record, event.serial), done, daemon=False))

    async def _finish_guarded(self) -> None:
        await super()._finish_guarded()
        # Closed means saved: the tokens written before the close returns (bounded).
        end = time.monotonic() + SAVE_WAIT
        while any(t.is_alive() for t in self.saving) and time.monotonic() < end:
            await self.rt.sleep(SETTLE_POLL)

    def _start_auth(self, ax: AuthExchange) -> None:
        """Carry an auth exchange in a daemon thread; its answer comes back on this loop
        (:meth:`_auth_result`) even after a close, with no task to cancel in between: a
        refresh the authorization server already answered must still be saved."""
        setup = self.auth
        flow = self.http.auth
        assert setup is not None and flow is not None
        if setup.reload_for_refresh(flow):  # another process refreshed already
            self._after()
            return
        context = self.client._ssl_context
        token = self.rt.token()

        def done(value: Any, error: BaseException | None) -> None:
            result = value if error is None else f"the exchange failed: {error!r}"
            self.rt.run_soon_threadsafe(token, lambda: self._auth_result(ax, result))

        run_in_daemon_thread(lambda: run_auth_exchange(ax, flow.address_allowed, context),
                             done)

    def _auth_result(self, ax: AuthExchange, result: AuthResponse | str) -> None:
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        flow.receive_exchange_result(ax.id, result, now=time.monotonic())
        if self.closing:
            # Closed meanwhile: nothing waits for the tokens, but a refresh the authorization
            # server already rotated must still be saved (the old refresh token is dead).
            while (event := flow.next_event()) is not None:
                if isinstance(event, SaveRecord):
                    self._save(event)
            return
        try:
            self._after()
        except Exception as exc:  # a bug must fail the calls, not strand them
            self.crashed(exc)

    async def _redirect(self, event: RedirectRequired) -> None:
        flow = self.http.auth
        setup = self.auth
        assert flow is not None and setup is not None
        redirect, error = user_step(setup, can_await=True)
        url: str | None = None
        if redirect is not None:
            try:
                if is_async_redirect(redirect):
                    url = str(await redirect(event.url))
                else:
                    url = str(await self.rt.to_thread(lambda: redirect(event.url)))
            except Exception as exc:  # the host's handler: its failure fails the waiters
                error = redirect_failure(exc)
        if self.redirect_task is not None and self.rt.is_current(self.redirect_task):
            self.redirect_task = None
        if self.closing:
            return
        deliver_callback(flow, url, error, time.monotonic(), event.attempt)
        self._after()

    def _exchange_ended(self) -> None:
        """An exchange gave its slot back: the next one waiting (and not aborted) starts."""
        self.running -= 1
        while self.queued and not self.closing:
            ex = self.queued.pop(0)
            if not ex.aborted:
                self.running += 1
                self._start_exchange(ex)
                return

    def _on_http_data(self, ex: HttpExchange, data: bytes | bytearray) -> None:
        """Bytes of an exchange's answer (``b""``: the server closed the connection)."""
        self.http.receive_data(ex.id, data, now=time.monotonic())
        self._after()

    def _lost(self, ex: HttpExchange, error: MCPError) -> None:
        """An exchange's connection failed (could not connect, reset)."""
        self.http.exchange_failed(ex, error, now=time.monotonic())
        self._after()

    def _start_exchange(self, ex: HttpExchange) -> None:
        raise NotImplementedError

    def _abort_exchange(self, exchange_id: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if not self.closing:
            self.delete = self.http.close_exchange()  # L-11: end the session politely
            if self.auth is not None:
                self.auth.close()  # the loopback listener, if one waits
        super().close()

    def auth_status(self) -> AuthStatus | None:
        """What the authorization flow holds now (None without ``auth=``)."""
        flow = self.http.auth
        return None if flow is None else flow.status()

    def reauthorize(self, scope: str | None) -> None:
        """Forget the token and authorize again now (asking for ``scope`` too)."""
        flow = self.http.auth
        assert flow is not None  # the client has auth=
        flow.reauthorize(time.monotonic(), scope)
        self._after()
