"""The blocking Host: many servers as one, on threads.

Every decision (states, restart times, names, where a call goes) is
:class:`mcp_proto.host.HostCore`'s; this module moves time and clients.  One supervisor
thread sleeps until the core's next deadline or a change, starts what is due (each start on
its own short-lived thread, so ten servers start in the time of the slowest), lists tools
again after ``tools/list_changed`` and closes the clients of ended runs.  Each run of a server
is one :class:`~mcp_proto_io.threads.Client` used for that run only (``single_run``): it never
restarts a server behind the host's schedule, and a tool call is never replayed.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import Any

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
    host_connector,
    meta_message,
    meta_public_name,
    meta_raw,
    meta_servers,
    meta_tools_listing,
)
from .threads import _ClientBase, connect_http, connect_stdio

__all__ = ["Host", "connect_config"]

_Run = Run[_ClientBase]

#: Seconds ``close()`` waits for a start or listing thread that is still in a handshake (its
#: client was closed, so it ends at once; the bound only guards against a stuck callback).
THREAD_JOIN = 10.0


class Host:
    """Many MCP servers as one, from a config.  Create it with :func:`connect_config` and use
    it in a ``with`` block.  Thread-safe.

    Servers start concurrently when the block is entered; one that fails leaves the rest
    usable (see :meth:`servers`).  A server that exits fails the call in flight with
    :class:`~mcp_proto.ServerExited` and is started again by the restart policy; no call is
    ever replayed.
    """

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._core = HostCore(config, names=options.names, restart=options.restart,
                              timeout=options.timeout, max_servers=options.max_servers)
        self._options = options
        self._clock = clock
        # ``with self._lock`` on the hot path (a C-level RLock); ``self._cond`` waits on it
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        # held while events are delivered (re-entrant: the callback may edit the host)
        self._dispatching = threading.RLock()
        self._runs: dict[str, _Run] = {}
        self._listing: set[str] = set()  # servers whose tools a thread is listing now
        self._closing: list[_ClientBase] = []  # clients of ended runs, closed by the monitor
        self._trials: set[_ClientBase] = set()  # update_server's new runs, not swapped in yet
        self._threads: set[threading.Thread] = set()
        self._monitor: threading.Thread | None = None
        self._closed = False

    # -- life -----------------------------------------------------------------------------

    def open(self) -> Host:
        """Start every enabled server, concurrently, and wait until each is running or has
        failed (each bounded by its startup timeout).  Returns self."""
        with self._cond:
            if self._closed:
                raise LocalProtocolError("the host is closed")
            if self._monitor is None:
                self._monitor = threading.Thread(target=self._supervise, daemon=True,
                                                 name="mcp-proto-host")
                self._monitor.start()
                self._start_due()
            self._settle(None)
        self._dispatch()
        return self

    def close(self) -> None:
        """Stop every server (concurrently) and the host's threads.  Calls in flight fail
        with :class:`~mcp_proto.ConnectionClosed`.  Idempotent; callable from any thread."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            clients = [r.client for r in self._runs.values() if r.client is not None]
            clients += self._closing
            clients += self._trials
            self._closing = []
            self._trials.clear()
            self._runs.clear()
            self._cond.notify_all()
        stoppers = [threading.Thread(target=c.close, name="mcp-proto-host-stop", daemon=True)
                    for c in clients]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join(THREAD_JOIN)
        me = threading.current_thread()
        monitor = self._monitor
        if monitor is not None and monitor is not me:
            monitor.join(THREAD_JOIN)
        with self._cond:
            threads = [t for t in self._threads if t is not me]
        for t in threads:
            t.join(THREAD_JOIN)

    def __enter__(self) -> Host:
        try:
            return self.open()
        except BaseException:  # Ctrl-C during a slow start, or a bug: stop what started
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the supervisor ---------------------------------------------------------------------

    def _supervise(self) -> None:
        while True:
            try:
                with self._cond:
                    if self._closed:
                        return
                    self._start_due()
                    self._list_stale()
                    for client in self._closing:  # each on its own thread: never in the way
                        self._spawn("mcp-proto-host-stop", client.close)
                    self._closing = []
                    deadline = self._core.next_deadline()
                    wait = None if deadline is None else max(0.0, deadline - self._clock())
                    self._cond.wait(wait)
                self._dispatch()
            except Exception:  # one bad turn must not end the supervision of every server
                traceback.print_exc()
                with self._cond:
                    self._cond.wait(REROUTE_PAUSE)

    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        def run() -> None:
            try:
                target()
            except Exception:
                traceback.print_exc()
            finally:
                with self._cond:
                    self._threads.discard(threading.current_thread())
                    self._cond.notify_all()
                self._dispatch()

        t = threading.Thread(target=run, name=name, daemon=True)
        self._threads.add(t)
        t.start()

    def _start_due(self) -> None:
        """Start what the core says is due (with the lock held)."""
        now = self._clock()
        for name in self._core.due(now):
            self._begin(name, now)

    def _begin(self, name: str, now: float) -> None:
        """Start a run of ``name`` (lock held): its client, then a thread for the handshake.
        A spec its client refuses (a bad URL) ends the run at once, as a failed start."""
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

    def _new_client(self, spec: ServerSpec, run: _Run) -> _ClientBase:
        def on_notification(event: Event) -> None:
            self._on_event(run, event)

        kwargs = client_arguments(spec, self._options, on_notification)
        client: _ClientBase
        if spec.transport == "stdio":
            client = connect_stdio(list(spec.command), **kwargs)
        else:
            assert spec.url is not None
            client = connect_http(spec.url, **kwargs)
        client.single_run = True
        return client

    def _start(self, name: str, incarnation: int, client: _ClientBase) -> None:
        spec = self._core.spec(name)
        try:
            client.connect()
            tools = client.list_tools(timeout=spec.startup_timeout)
        except Exception as exc:
            error, tail = failure(exc)
            with self._cond:
                self._core.exited(name, incarnation, self._clock(), error, tail)
                self._retire(name, incarnation)
                self._cond.notify_all()
            return
        with self._cond:
            self._core.start_succeeded(name, incarnation, self._clock(), tools)
            self._cond.notify_all()

    def _retire(self, name: str, incarnation: int) -> None:
        """Hand the client of an ended run to the supervisor to close (lock held)."""
        run = self._runs.get(name)
        if run is not None and run.incarnation == incarnation:
            client = self._stop_run(name)
            if client is not None:
                self._closing.append(client)

    def _on_event(self, run: _Run, event: Event) -> None:
        if isinstance(event, ListChanged) and event.kind == "tools":
            with self._cond:
                if run.incarnation == TRIAL:
                    run.changed = True
                else:
                    self._core.tools_changed(run.name, run.incarnation)
                self._cond.notify_all()
        elif isinstance(event, Closed) and event.error is not None:
            error, tail = failure(event.error)
            with self._cond:
                if run.incarnation == TRIAL:
                    run.ended = event.error
                else:
                    self._core.exited(run.name, run.incarnation, self._clock(), error, tail)
                    self._retire(run.name, run.incarnation)
                self._cond.notify_all()
        callback = self._options.on_notification
        if callback is not None:
            callback(run.name, event)
        self._dispatch()

    def _list_stale(self) -> None:
        """List the tools of servers that said they changed (lock held)."""
        for name, incarnation in self._core.stale():
            if name not in self._listing:
                self._listing.add(name)
                self._spawn(f"mcp-proto-host-list-{name}",
                            lambda n=name, i=incarnation: self._relist(n, i))  # type: ignore[misc]

    def _relist(self, name: str, incarnation: int, timeout: float | None = None) -> None:
        try:
            with self._cond:
                run = self._runs.get(name)
                client = run.client if run is not None and run.incarnation == incarnation \
                    else None
            if client is None:
                return
            try:
                tools = client.list_tools(timeout=timeout)
            except Exception:
                with self._cond:  # keep the last listing (a dead server reports its exit)
                    self._core.listing_failed(name, incarnation)
                return
            with self._cond:
                self._core.tools_listed(name, incarnation, tools)
        finally:
            with self._cond:
                self._listing.discard(name)
                self._cond.notify_all()

    def _dispatch(self) -> None:
        """Give the host's callback the state changes, in order (never with the host's lock
        held: the callback may call the host).  Whichever thread drains the events also
        delivers them, under the dispatch lock, so no later event overtakes an earlier one."""
        callback = self._options.on_server_event
        with self._dispatching:
            with self._lock:
                events = self._core.drain_events()
            if callback is None:
                return
            for event in events:
                try:
                    callback(event)
                except Exception:  # a host callback must not kill the supervisor
                    traceback.print_exc()

    def _settle(self, name: str | None, until: float | None = None) -> None:
        """Wait (lock held) until ``name`` (or every server) is no longer starting."""
        while not self._closed:
            names = [name] if name is not None else self._core.names()
            if not any(n in self._core.names() and self._core.state(n) == "starting"
                       for n in names):
                return
            wait = None if until is None else until - self._clock()
            if wait is not None and wait <= 0:
                return
            self._cond.wait(wait)

    def _check_open(self) -> None:
        if self._closed:
            raise LocalProtocolError("the host is closed")
        if self._monitor is None:
            raise LocalProtocolError("the host is not open: use it in a with block or call "
                                     "open() first")

    # -- tools --------------------------------------------------------------------------------

    def list_tools(self) -> list[HostTool]:
        """Every tool a model may call, by public name, sorted.  Lists the tools of servers
        that said theirs changed first."""
        with self._cond:
            self._check_open()
            self._list_stale()
            self._wait_listed(None)
            return self._core.tools()

    def _wait_listed(self, timeout: float | None) -> None:
        """Wait (lock held) until no listing is under way, at most ``timeout`` seconds."""
        until = self._clock() + (self._core.timeout if timeout is None else timeout)
        while self._listing and not self._closed:
            wait = until - self._clock()
            if wait <= 0:
                return
            self._cond.wait(wait)

    def _refresh_all(self, timeout: float | None) -> None:
        """List every running server's tools again and wait (lock held): an unknown name
        was called, and a server may have a tool it did not announce."""
        for name, incarnation in self._core.running():
            if name not in self._listing:
                self._listing.add(name)
                self._spawn(f"mcp-proto-host-list-{name}",
                            lambda n=name, i=incarnation:  # type: ignore[misc]
                            self._relist(n, i, timeout))
        self._wait_listed(timeout)

    def tool_definitions(self, target: str) -> list[dict[str, Any]]:
        """Every tool as a function tool of ``target`` (``openai``, ``openai-strict``,
        ``openai-responses[-strict]``, ``anthropic``, ``gemini``, ``gemini-openapi``) under
        its public name.  A tool whose schema the target cannot take is left out (see
        :func:`mcp_proto.host.tool_definitions` for the reasons).  ``ValueError`` for an
        unknown target."""
        out = []
        for tool in self.list_tools():
            try:
                with self._lock:
                    normalized = self._core.normalized(tool.name, target)
                out.append(tool_definition(tool, target, normalized=normalized))
            except (SchemaError, UnknownTool):
                continue
        return out

    def call_tool(self, name: str, arguments: dict[str, Any] | str | None = None, *,
                  timeout: float | None = None, on_progress: ProgressCallback | None = None,
                  provider: str | None = None) -> CallToolResult:
        """Call the tool whose public name is ``name`` and wait for its result.

        ``provider`` (a target of :meth:`tool_definitions`) applies that target's argument
        fixes first: under ``openai-strict`` the ``null`` a model sends for a field that was
        optional is removed.  ``timeout`` (seconds, total) defaults to the server's, else the
        host's.  A server that is starting, or in backoff with its restart before the
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
            with self._lock:
                if self._closed or self._monitor is None:
                    self._check_open()
                if self._listing or core.has_stale:  # tools changed: list them first
                    self._list_stale()
                    self._wait_listed(timeout)
                now = self._clock()
                try:
                    route = core.route(name, now=now, deadline=deadline, timeout=timeout)
                except UnknownTool:
                    if refreshed:
                        raise
                    refreshed = True
                    self._refresh_all(timeout)  # once: the server may have a new tool
                    continue
                deadline = route.deadline
                if route.start:  # closed until next used: this is the use
                    self._begin(route.server, now)
                run = self._runs.get(route.server)
                client = None if run is None else run.client
                if provider is not None and route.wait_until is None:
                    arguments = self._fixed(name, provider, arguments)
                if route.wait_until is not None or client is None \
                        or run is None or run.incarnation != route.incarnation:
                    # starting, in backoff, or being replaced: woken by any change
                    self._cond.wait(max(REROUTE_PAUSE, (route.wait_until or now) - now))
                    continue
            try:
                return client.call_tool(route.tool, arguments,
                                        timeout=max(0.0, route.deadline - now),
                                        on_progress=on_progress)
            except NotSent:
                # The run ended between routing and sending (nothing reached the server):
                # route again, to the next run as the restart policy allows.
                with self._cond:
                    if self._runs.get(route.server) is run:  # its end not handled yet
                        self._cond.wait(REROUTE_PAUSE)

    def _fixed(self, name: str, provider: str, arguments: dict[str, Any] | None
               ) -> dict[str, Any] | None:
        try:
            return self._core.normalized(name, provider).fix_arguments(arguments)
        except SchemaError:  # no definition was given for it: nothing to undo
            return arguments

    # -- meta-tools ----------------------------------------------------------------------------

    def meta_tools(self, target: str) -> list[dict[str, Any]]:
        """The definitions of ``mcp_list``, ``mcp_call`` and ``mcp_request`` for ``target``:
        three fixed tools that reach every server (for a model that does not get every
        tool).  Run them with :meth:`call_meta_tool`."""
        return [tool_definition(tool, target) for tool in META_TOOLS.values()]

    def call_meta_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                       provider: str) -> ProviderContent:
        """Run meta-tool ``name`` and return its outcome as ``provider``'s content.  A
        model's mistake (a bad argument, an unknown server or tool) and a server's failure
        come back as an ``isError`` result the model can read.  ``KeyError`` for a name
        that is not a meta-tool; ``ValueError`` for an unknown provider."""
        with self._lock:
            self._check_open()
            servers = self._core.names()
        try:
            request = parse_meta_call(name, arguments, servers)
            result = self._run_meta(request)
        except MetaToolError as exc:
            result = meta_error(str(exc))
        except MCPError as exc:  # the server's failure: no stderr for the model
            result = meta_error(meta_message(exc))
        return to_provider_content(result, provider, name=name)

    def _run_meta(self, request: MetaRequest) -> CallToolResult:
        server = request.server
        if request.kind == "servers":
            with self._lock:
                return meta_servers(self._core, self._clock())
        assert server is not None
        if request.kind == "close":
            self.stop_server(server)
            return meta_result({"server": server, "closed": True})
        if request.kind == "tools":
            fresh = self._in_use(server, request.timeout).list_tools(timeout=request.timeout)
            with self._lock:
                return meta_tools_listing(self._core, server, fresh)
        if request.kind == "call":
            assert request.tool is not None
            with self._lock:
                public = meta_public_name(self._core, server, request.tool)
            # no argument fixes: the model wrote these for the tool's own schema
            return self.call_tool(public, request.arguments, timeout=request.timeout)
        assert request.method is not None
        raw = self._in_use(server, request.timeout).send_request(
            request.method, request.arguments or None, timeout=request.timeout)
        with self._lock:
            return meta_raw(self._core, server, request.method, raw)

    def _in_use(self, name: str, timeout: float | None) -> _ClientBase:
        """The client of ``name``, started first if it was closed until next used."""
        with self._lock:
            self._check_open()
            if self._core.is_held(name):
                self._begin(name, self._clock())
            until = self._clock() + (self._core.timeout if timeout is None else timeout)
            self._settle(name, until)
        return self.server(name)

    # -- servers -------------------------------------------------------------------------------

    def stop_server(self, name: str) -> ServerStatus:
        """Stop a server's run until a call needs it again (its tools stay listed; the next
        call to one starts it).  Frees its process or connection meanwhile."""
        return self._stop_and(name, lambda now: self._core.stop(name, now, hold=True),
                              start=False)

    def servers(self) -> dict[str, ServerStatus]:
        """Every server's status (state, attempts, next start, error, stderr tail)."""
        with self._cond:
            return self._core.status(self._clock())

    def server(self, name: str) -> _ClientBase:
        """The client of ``name``'s current run (resources, prompts, tasks ...).  After a
        restart it is a new client: ask again.  Raises
        :class:`~mcp_proto.host.ServerUnavailable` when the server is not running and
        :class:`~mcp_proto.LocalProtocolError` for an unknown name."""
        with self._cond:
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
        with self._cond:
            return self._core.config

    def _stop_run(self, name: str) -> _ClientBase | None:
        """Take the current run's client out (lock held); the caller closes it."""
        run = self._runs.pop(name, None)
        return None if run is None else run.client

    def _status(self, name: str) -> ServerStatus:
        return self._core.status(self._clock())[name]

    def add_server(self, name: str, spec: ServerSpec) -> ServerStatus:
        """Add a server and start it (unless disabled); waits until it runs or failed and
        returns its status.  Raises :class:`~mcp_proto.host.ConfigError` for a name in use
        or a host at ``max_servers``."""
        with self._cond:
            self._check_open()
            self._core.add(replace(spec, name=name), self._clock())
            self._start_due()
            self._settle(name)
            status = self._status(name)
        self._dispatch()
        return status

    def update_server(self, name: str, spec: ServerSpec) -> ServerStatus:
        """Replace a server's spec.  The new spec is started beside the old run; only once it
        is ready does it take the old one's place (the old run is then stopped).  If it fails
        to start, the old spec and its run stay as they were and the start's error is raised
        (:class:`~mcp_proto.ServerExited`, :class:`~mcp_proto.ConnectionClosed`,
        :class:`~mcp_proto.RequestTimeout` ...); :class:`~mcp_proto.host.ConfigError` for an
        unusable spec.  A disabled spec just replaces the old one."""
        spec = replace(spec, name=name)
        problems = check_spec(spec)
        if problems:
            raise ConfigError(problems)
        with self._cond:
            self._check_open()
            before = self._core.spec(name)  # LocalProtocolError for an unknown name
            if not spec.enabled:
                old = self._stop_run(name)
                self._core.replace(spec, self._clock())
                status = self._status(name)
        if not spec.enabled:
            if old is not None:
                old.close()
            self._dispatch()
            return status
        trial_run: _Run = Run(name)  # no incarnation until it takes the old run's place
        with self._cond:
            trial = self._new_client(spec, trial_run)  # LocalProtocolError for a bad URL
            self._trials.add(trial)
        try:
            trial.connect()
            tools = trial.list_tools(timeout=spec.startup_timeout)
            with self._cond:
                if trial_run.ended is not None:  # it died between its answer and now
                    raise trial_run.ended
                if self._closed or trial not in self._trials:
                    raise LocalProtocolError("the host closed while the new spec started")
                if name not in self._core.names() or self._core.spec(name) is not before:
                    raise LocalProtocolError(f"server {name!r} was removed, disabled or "
                                             "updated while the new spec started")
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
                self._cond.notify_all()
                status = self._status(name)
        except BaseException:
            with self._cond:
                self._trials.discard(trial)
            trial.close()
            raise
        if old is not None:
            old.close()
        self._dispatch()
        return status

    def _stop_and(self, name: str, change: Callable[[float], None],
                  start: bool) -> ServerStatus:
        with self._cond:
            self._check_open()
            change(self._clock())  # first: a refused change (LocalProtocolError) stops nothing
            old = self._stop_run(name)
            if start:
                self._start_due()
        if old is not None:
            old.close()
        with self._cond:
            if start:
                self._settle(name)
            status = self._status(name)
        self._dispatch()
        return status

    def enable_server(self, name: str) -> ServerStatus:
        """Enable a disabled server and start it; waits and returns its status."""
        with self._cond:
            self._check_open()
            self._core.enable(name, self._clock())
            self._start_due()
            self._settle(name)
            status = self._status(name)
        self._dispatch()
        return status

    def disable_server(self, name: str) -> ServerStatus:
        """Stop a server and keep it from starting (its tools are no longer listed)."""
        return self._stop_and(name, lambda now: self._core.disable(name, now), start=False)

    def restart_server(self, name: str) -> ServerStatus:
        """Stop a server's run (if any) and start it now with a fresh schedule (also a
        ``failed`` one); waits and returns its status.  Calls in flight fail."""
        return self._stop_and(name, lambda now: self._core.stop(name, now), start=True)

    def remove_server(self, name: str) -> ServerSpec:
        """Stop a server and forget it; returns its spec."""
        with self._cond:
            self._check_open()
            old = self._stop_run(name)
            spec = self._core.remove(name)
            self._runs.pop(name, None)
        if old is not None:
            old.close()
        self._dispatch()
        return spec

    def save_config(self, path: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
        """Write the config as it is now, atomically (a temporary file, then a rename), in
        the dialect it was read in, to ``path`` or the file it came from.  Returns the
        warnings (what the dialect cannot say).  Raises ``ValueError`` when there is no path
        and ``OSError`` when the file cannot be written (the old file is then intact)."""
        return _save_config(self.config, path)


connect_config = host_connector(Host)
