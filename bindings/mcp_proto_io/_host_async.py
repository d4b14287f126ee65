"""The async Host (asyncio and trio): many servers as one, on the event loop.

The same moves as the threads Host (:mod:`._host_threads`), on tasks instead of threads:
every decision is :class:`mcp_proto.host.HostCore`'s.  One supervisor task owned by the host
(never by the caller's task group or cancel scope) sleeps until the core's next deadline or a
change, starts what is due (a task per start, so servers start concurrently), lists tools
again after ``tools/list_changed`` and closes the clients of ended runs.  Each run of a server
is one client used for that run only (``single_run``); a tool call is never replayed.
Everything runs on the loop's thread, so the core needs no lock; ``close()`` from another
thread is handed to the loop.
"""

from __future__ import annotations

import inspect
import os
import time
import traceback
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from mcp_proto import (
    CallToolResult,
    Closed,
    Event,
    ListChanged,
    LocalProtocolError,
    MCPError,
    NotSent,
)
from mcp_proto.host import (
    META_TOOLS,
    ConfigError,
    HostConfig,
    HostCore,
    HostTool,
    MetaRequest,
    MetaToolError,
    ProviderContent,
    SchemaError,
    ServerEvent,
    ServerSpec,
    ServerStatus,
    ServerUnavailable,
    UnknownTool,
    check_spec,
    meta_error,
    meta_result,
    parse_meta_call,
    to_provider_content,
    tool_definition,
)

from ._async_base import AsyncClientBase, Runtime, TaskHandle
from ._config_files import save_config as _save_config
from ._handlers import ProgressCallback
from ._host_common import (
    REROUTE_PAUSE,
    TRIAL,
    HostOptions,
    Run,
    client_arguments,
    coerce_arguments,
    failure,
    meta_message,
    meta_public_name,
    meta_raw,
    meta_servers,
    meta_tools_listing,
)

__all__ = ["AsyncHostBase"]

_H = TypeVar("_H", bound="AsyncHostBase")
_Run = Run[AsyncClientBase]


class AsyncHostBase:
    """Many MCP servers as one, from a config, on asyncio or trio.  Create it with
    ``connect_config`` and use it in ``async with``.

    Servers start concurrently when the block is entered; one that fails leaves the rest
    usable (see :meth:`servers`).  A server that exits fails the call in flight with
    :class:`~mcp_proto.ServerExited` and is started again by the restart policy; no call is
    ever replayed.  Cancelling a ``call_tool`` cancels it on its server.
    """

    _rt: Runtime
    _connect_stdio: Callable[..., AsyncClientBase]
    _connect_http: Callable[..., AsyncClientBase]

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._core = HostCore(config, names=options.names, restart=options.restart,
                              timeout=options.timeout, max_servers=options.max_servers)
        self._options = options
        self._clock = clock
        self._runs: dict[str, _Run] = {}
        self._listing: set[str] = set()
        self._closing: list[AsyncClientBase] = []
        self._trials: set[AsyncClientBase] = set()  # update_server's new runs, not swapped in
        self._tasks: set[TaskHandle] = set()
        self._changed: Any = None  # an event set (and replaced) at every change
        self._token: Any = None
        self._monitor: TaskHandle | None = None
        self._closed = False
        self._events: deque[ServerEvent] = deque()
        self._dispatching = False

    # -- plumbing ---------------------------------------------------------------------------

    def _notify(self) -> None:
        """Wake everything waiting for a change (the supervisor, calls, settles)."""
        event, self._changed = self._changed, self._rt.event()
        if event is not None:
            event.set()

    async def _wait_change(self, timeout: float | None) -> None:
        await self._rt.wait_event(self._changed, timeout)

    def _spawn(self, name: str, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        async def run() -> None:
            try:
                await fn()
            finally:
                self._notify()
                self._dispatch()

        self._tasks.add(self._rt.spawn(name, run, self._tasks.discard))

    def _dispatch(self) -> None:
        """Queue the state changes for ``on_server_event``, called in order in one task."""
        self._events.extend(self._core.drain_events())
        if self._options.on_server_event is None:
            self._events.clear()
            return
        if self._events and not self._dispatching:
            self._dispatching = True
            self._spawn("mcp-proto-host-events", self._run_events)

    async def _run_events(self) -> None:
        callback = self._options.on_server_event
        try:
            while self._events and callback is not None:
                event = self._events.popleft()
                try:
                    result = callback(event)
                    if inspect.isawaitable(result):
                        await result
                except Exception:  # a host callback must not kill the host
                    traceback.print_exc()
        finally:
            self._dispatching = False

    # -- life ---------------------------------------------------------------------------------

    async def open(self: _H) -> _H:
        """Start every enabled server, concurrently, and wait until each is running or has
        failed (each bounded by its startup timeout).  Returns self."""
        if self._closed:
            raise LocalProtocolError("the host is closed")
        if self._monitor is None:
            self._token = self._rt.token()
            self._changed = self._rt.event()
            self._monitor = self._rt.spawn("mcp-proto-host", self._supervise,
                                           self._tasks.discard)
            self._start_due()
        await self._settle(None)
        self._dispatch()
        return self

    def close(self) -> None:
        """Stop every server and the host's tasks without waiting (callable from any thread
        or a sync callback); ``await aclose()`` also waits for them.  Idempotent."""
        if self._closed:
            return
        token = self._token
        if token is not None and not self._rt.run_soon_threadsafe(token, self._close_now):
            self._close_now()  # the loop ended: the clients kill their servers directly
        elif token is None:
            self._close_now()

    def _close_now(self) -> None:
        if self._closed:
            return
        self._closed = True
        clients = [r.client for r in self._runs.values() if r.client is not None]
        clients += self._closing
        clients += self._trials
        self._runs.clear()
        self._trials.clear()
        self._closing = clients
        for client in clients:
            client.close()
        if self._changed is not None:
            self._notify()

    async def aclose(self) -> None:
        """Stop every server (concurrently) and wait until they and the host's tasks ended.
        Calls in flight fail with :class:`~mcp_proto.ConnectionClosed`."""
        self._close_now()
        clients, self._closing = self._closing, []
        for client in clients:
            await client.aclose()
        for task in list(self._tasks):
            if not self._rt.is_current(task):
                task.cancel()
        while any(not self._rt.is_current(t) for t in self._tasks):
            await self._rt.sleep(0.005)

    async def __aenter__(self: _H) -> _H:
        try:
            return await self.open()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise LocalProtocolError("the host is closed")
        if self._monitor is None:
            raise LocalProtocolError("the host is not open: use it in an async with block or "
                                     "await open() first")

    # -- the supervisor -----------------------------------------------------------------------

    async def _supervise(self) -> None:
        while not self._closed:
            try:
                self._start_due()
                self._list_stale()
                closing, self._closing = self._closing, []
                for client in closing:  # each in its own task: never in the way
                    self._spawn("mcp-proto-host-stop", client.aclose)
                self._dispatch()
                if self._closed:
                    return
                deadline = self._core.next_deadline()
                await self._wait_change(None if deadline is None
                                        else max(0.0, deadline - self._clock()))
            except Exception:  # one bad turn must not end the supervision of every server
                traceback.print_exc()  # (cancellation is a BaseException: it still ends it)
                await self._rt.sleep(REROUTE_PAUSE)

    def _start_due(self) -> None:
        now = self._clock()
        for name in self._core.due(now):
            self._begin(name, now)

    def _begin(self, name: str, now: float) -> None:
        """Start a run of ``name``: its client, then a task for the handshake.  A spec its
        client refuses (a bad URL) ends the run at once, as a failed start."""
        old = self._stop_run(name)
        if old is not None:
            self._closing.append(old)
        run: _Run = Run(name, self._core.begin_start(name, now))
        try:
            run.client = client = self._new_client(self._core.spec(name), run)
        except Exception as exc:
            error, tail = failure(exc)
            self._core.exited(name, run.incarnation, now, error, tail)
            return
        self._runs[name] = run
        incarnation = run.incarnation
        self._spawn(f"mcp-proto-host-start-{name}",
                    lambda: self._start(name, incarnation, client))

    def _new_client(self, spec: ServerSpec, run: _Run) -> AsyncClientBase:
        def on_notification(event: Event) -> Any:
            return self._on_event(run, event)

        kwargs = client_arguments(spec, self._options, on_notification)
        client: AsyncClientBase
        if spec.transport == "stdio":
            client = type(self)._connect_stdio(list(spec.command), **kwargs)
        else:
            assert spec.url is not None
            client = type(self)._connect_http(spec.url, **kwargs)
        client.single_run = True
        return client

    async def _start(self, name: str, incarnation: int, client: AsyncClientBase) -> None:
        spec = self._core.spec(name)
        try:
            await client.connect()
            tools = await client.list_tools(timeout=spec.startup_timeout)
        except Exception as exc:
            error, tail = failure(exc)
            self._core.exited(name, incarnation, self._clock(), error, tail)
            self._retire(name, incarnation)
            return
        self._core.start_succeeded(name, incarnation, self._clock(), tools)

    def _stop_run(self, name: str) -> AsyncClientBase | None:
        run = self._runs.pop(name, None)
        return None if run is None else run.client

    def _retire(self, name: str, incarnation: int) -> None:
        run = self._runs.get(name)
        if run is not None and run.incarnation == incarnation:
            client = self._stop_run(name)
            if client is not None:
                self._closing.append(client)
        self._notify()

    def _on_event(self, run: _Run, event: Event) -> Any:
        if isinstance(event, ListChanged) and event.kind == "tools":
            if run.incarnation == TRIAL:
                run.changed = True
            else:
                self._core.tools_changed(run.name, run.incarnation)
            self._notify()
        elif isinstance(event, Closed) and event.error is not None:
            if run.incarnation == TRIAL:
                run.ended = event.error
            else:
                error, tail = failure(event.error)
                self._core.exited(run.name, run.incarnation, self._clock(), error, tail)
                self._retire(run.name, run.incarnation)
        self._dispatch()
        callback = self._options.on_notification
        return None if callback is None else callback(run.name, event)

    def _list_stale(self, every: bool = False, timeout: float | None = None) -> None:
        todo = self._core.running() if every else self._core.stale()
        for name, incarnation in todo:
            if name not in self._listing:
                self._listing.add(name)
                self._spawn(f"mcp-proto-host-list-{name}",
                            lambda n=name, i=incarnation:  # type: ignore[misc]
                            self._relist(n, i, timeout))

    async def _relist(self, name: str, incarnation: int, timeout: float | None) -> None:
        try:
            run = self._runs.get(name)
            if run is None or run.incarnation != incarnation or run.client is None:
                return
            try:
                tools = await run.client.list_tools(timeout=timeout)
            except Exception:  # keep the last listing (a dead server reports its exit)
                self._core.listing_failed(name, incarnation)
                return
            self._core.tools_listed(name, incarnation, tools)
        finally:
            self._listing.discard(name)

    async def _wait_listings(self, timeout: float | None = None) -> None:
        self._check_open()
        self._list_stale()
        until = self._clock() + (self._core.timeout if timeout is None else timeout)
        while self._listing and not self._closed:
            wait = until - self._clock()
            if wait <= 0:
                break
            await self._wait_change(wait)

    async def _settle(self, name: str | None) -> None:
        while not self._closed:
            names = [name] if name is not None else self._core.names()
            if not any(n in self._core.names() and self._core.state(n) == "starting"
                       for n in names):
                return
            await self._wait_change(None)

    # -- tools --------------------------------------------------------------------------------

    async def list_tools(self) -> list[HostTool]:
        """Every tool a model may call, by public name, sorted.  Lists the tools of servers
        that said theirs changed first."""
        await self._wait_listings()
        return self._core.tools()

    async def tool_definitions(self, target: str) -> list[dict[str, Any]]:
        """Every tool as a function tool of ``target`` under its public name (see
        :meth:`mcp_proto_io.threads.Host.tool_definitions`)."""
        out = []
        for tool in await self.list_tools():
            try:
                normalized = self._core.normalized(tool.name, target)
                out.append(tool_definition(tool, target, normalized=normalized))
            except (SchemaError, UnknownTool):
                continue
        return out

    async def call_tool(self, name: str, arguments: dict[str, Any] | str | None = None, *,
                        timeout: float | None = None,
                        on_progress: ProgressCallback | None = None,
                        provider: str | None = None) -> CallToolResult:
        """Call the tool whose public name is ``name`` and wait for its result.

        ``provider`` (a target of :meth:`tool_definitions`) applies that target's argument
        fixes first (``openai-strict``: the ``null`` a model sends for a field that was
        optional is removed).  ``timeout`` (seconds, total) defaults to the server's, else
        the host's.  A server that is starting, or in backoff with its restart before the
        deadline, is waited for.
        Raises :class:`~mcp_proto.host.UnknownTool` (no such public name, even after listing
        tools again; nothing was sent), :class:`~mcp_proto.host.ServerUnavailable` (failed,
        disabled, or not back before the deadline; nothing was sent), and whatever the
        server's client raises (:class:`~mcp_proto.ServerExited`: the call is not replayed).
        A result with ``is_error`` is returned, not raised.
        """
        arguments = coerce_arguments(arguments)  # nothing is sent for bad ones
        refreshed = False
        deadline: float | None = None
        core = self._core
        while True:
            if self._closed or self._monitor is None:
                self._check_open()
            if self._listing or core.has_stale:
                await self._wait_listings(timeout)
            now = self._clock()
            try:
                route = core.route(name, now=now, deadline=deadline, timeout=timeout)
            except UnknownTool:
                if refreshed:
                    raise
                refreshed = True
                self._list_stale(every=True, timeout=timeout)
                await self._wait_listings(timeout)
                continue
            deadline = route.deadline
            if route.start:  # closed until next used: this is the use
                self._begin(route.server, now)
            run = self._runs.get(route.server)
            client = None if run is None else run.client
            if provider is not None and route.wait_until is None:
                try:
                    arguments = core.normalized(name, provider).fix_arguments(arguments)
                except SchemaError:  # no definition was given for it: nothing to undo
                    pass
            if route.wait_until is not None or client is None or run is None \
                    or run.incarnation != route.incarnation:
                # starting, in backoff, or being replaced: woken by any change
                await self._wait_change(max(REROUTE_PAUSE, (route.wait_until or now) - now))
                continue
            try:
                return await client.call_tool(route.tool, arguments,
                                              timeout=max(0.0, route.deadline - now),
                                              on_progress=on_progress)
            except NotSent:
                # The run ended between routing and sending (nothing reached the server):
                # route again, to the next run as the restart policy allows.
                if self._runs.get(route.server) is run:  # its end not handled yet
                    await self._wait_change(REROUTE_PAUSE)

    # -- meta-tools ---------------------------------------------------------------------------

    def meta_tools(self, target: str) -> list[dict[str, Any]]:
        """The definitions of ``mcp_list``, ``mcp_call`` and ``mcp_request`` for ``target``
        (see :meth:`mcp_proto_io.threads.Host.meta_tools`)."""
        return [tool_definition(tool, target) for tool in META_TOOLS.values()]

    async def call_meta_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                             provider: str) -> ProviderContent:
        """Run meta-tool ``name``; its outcome as ``provider``'s content (a model's mistake
        or a server's failure as an ``isError`` result).  ``KeyError`` for a name that is
        not a meta-tool; ``ValueError`` for an unknown provider."""
        self._check_open()
        try:
            request = parse_meta_call(name, arguments, self._core.names())
            result = await self._run_meta(request)
        except MetaToolError as exc:
            result = meta_error(str(exc))
        except MCPError as exc:  # the server's failure: no stderr for the model
            result = meta_error(meta_message(exc))
        return to_provider_content(result, provider, name=name)

    async def _run_meta(self, request: MetaRequest) -> CallToolResult:
        core, server = self._core, request.server
        if request.kind == "servers":
            return meta_servers(core, self._clock())
        assert server is not None
        if request.kind == "close":
            await self.stop_server(server)
            return meta_result({"server": server, "closed": True})
        if request.kind == "tools":
            fresh = await (await self._in_use(server)).list_tools(timeout=request.timeout)
            return meta_tools_listing(core, server, fresh)
        if request.kind == "call":
            assert request.tool is not None
            public = meta_public_name(core, server, request.tool)
            # no argument fixes: the model wrote these for the tool's own schema
            return await self.call_tool(public, request.arguments, timeout=request.timeout)
        assert request.method is not None
        client = await self._in_use(server)
        raw = await client.send_request(request.method, request.arguments or None,
                                        timeout=request.timeout)
        return meta_raw(core, server, request.method, raw)

    async def _in_use(self, name: str) -> AsyncClientBase:
        """The client of ``name``, started first if it was closed until next used."""
        self._check_open()
        if self._core.is_held(name):
            self._begin(name, self._clock())
            await self._settle(name)
        return self.server(name)

    # -- servers ------------------------------------------------------------------------------

    async def stop_server(self, name: str) -> ServerStatus:
        """Stop a server's run until a call needs it again (its tools stay listed; the next
        call to one starts it)."""
        self._check_open()
        self._core.stop(name, self._clock(), hold=True)  # first: a refusal stops nothing
        old = self._stop_run(name)
        return await self._after_change(name, old, False)

    def servers(self) -> dict[str, ServerStatus]:
        """Every server's status (state, attempts, next start, error, stderr tail)."""
        return self._core.status(self._clock())

    def server(self, name: str) -> AsyncClientBase:
        """The client of ``name``'s current run (resources, prompts, tasks ...).  After a
        restart it is a new client: ask again.  Raises
        :class:`~mcp_proto.host.ServerUnavailable` when the server is not running and
        :class:`~mcp_proto.LocalProtocolError` for an unknown name."""
        self._check_open()
        state = self._core.state(name)
        run = self._runs.get(name)
        if state != "running" or run is None or run.client is None:
            status = self._core.status(self._clock())[name]
            raise ServerUnavailable(name, state, status.next_start_at, status.error)
        return run.client

    @property
    def config(self) -> HostConfig:
        """The config as it is now (with the servers added, updated or removed)."""
        return self._core.config

    def _status(self, name: str) -> ServerStatus:
        return self._core.status(self._clock())[name]

    async def _after_change(self, name: str, old: AsyncClientBase | None,
                            settle: bool) -> ServerStatus:
        if old is not None:
            await old.aclose()
        self._start_due()
        if settle:
            await self._settle(name)
        self._dispatch()
        return self._status(name)

    async def add_server(self, name: str, spec: ServerSpec) -> ServerStatus:
        """Add a server and start it (unless disabled); waits until it runs or failed and
        returns its status.  Raises :class:`~mcp_proto.host.ConfigError` for a name in use
        or a host at ``max_servers``."""
        self._check_open()
        self._core.add(replace(spec, name=name), self._clock())
        return await self._after_change(name, None, True)

    async def update_server(self, name: str, spec: ServerSpec) -> ServerStatus:
        """Replace a server's spec.  The new spec is started beside the old run; only once it
        is ready does it take the old one's place (the old run is then stopped).  If it fails
        to start, the old spec and its run stay as they were and the start's error is
        raised.  A disabled spec just replaces the old one."""
        spec = replace(spec, name=name)
        problems = check_spec(spec)
        if problems:
            raise ConfigError(problems)
        self._check_open()
        before = self._core.spec(name)  # LocalProtocolError for an unknown name
        if not spec.enabled:
            old = self._stop_run(name)
            self._core.replace(spec, self._clock())
            return await self._after_change(name, old, False)
        trial_run: _Run = Run(name)  # no incarnation until it takes the old run's place
        trial = self._new_client(spec, trial_run)  # LocalProtocolError for a bad URL
        self._trials.add(trial)
        try:
            await trial.connect()
            tools = await trial.list_tools(timeout=spec.startup_timeout)
            if trial_run.ended is not None:  # it died between its answer and now
                raise trial_run.ended
            if self._closed or trial not in self._trials:
                raise LocalProtocolError("the host closed while the new spec started")
            if name not in self._core.names() or self._core.spec(name) is not before:
                raise LocalProtocolError(f"server {name!r} was removed, disabled or updated "
                                         "while the new spec started")
        except BaseException:
            self._trials.discard(trial)
            await trial.aclose()
            raise
        self._trials.discard(trial)
        old = self._stop_run(name)
        now = self._clock()
        self._core.replace(spec, now)
        trial_run.incarnation = self._core.begin_start(name, now)
        trial_run.client = trial
        self._runs[name] = trial_run
        self._core.start_succeeded(name, trial_run.incarnation, now, tools)
        if trial_run.changed:
            self._core.tools_changed(name, trial_run.incarnation)
        self._notify()
        return await self._after_change(name, old, False)

    async def enable_server(self, name: str) -> ServerStatus:
        """Enable a disabled server and start it; waits and returns its status."""
        self._check_open()
        self._core.enable(name, self._clock())
        return await self._after_change(name, None, True)

    async def disable_server(self, name: str) -> ServerStatus:
        """Stop a server and keep it from starting (its tools are no longer listed)."""
        self._check_open()
        self._core.disable(name, self._clock())
        old = self._stop_run(name)
        return await self._after_change(name, old, False)

    async def restart_server(self, name: str) -> ServerStatus:
        """Stop a server's run (if any) and start it now with a fresh schedule (also a
        ``failed`` one); waits and returns its status.  Calls in flight fail."""
        self._check_open()
        self._core.stop(name, self._clock())
        old = self._stop_run(name)
        return await self._after_change(name, old, True)

    async def remove_server(self, name: str) -> ServerSpec:
        """Stop a server and forget it; returns its spec."""
        self._check_open()
        old = self._stop_run(name)
        spec = self._core.remove(name)
        if old is not None:
            await old.aclose()
        self._dispatch()
        return spec

    async def save_config(self, path: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
        """Write the config as it is now, atomically, in the dialect it was read in, to
        ``path`` or the file it came from; returns the warnings.  Raises ``ValueError`` when
        there is no path, ``OSError`` when the file cannot be written (the old one stays)."""
        return _save_config(self.config, path)
