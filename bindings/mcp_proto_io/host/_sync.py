"""The threads Host's moves: GENERATED from ``_async.py`` by ``.ci/make_host.py``;
do not edit (a test fails when it is not current).

:class:`HostBase` is the base of :class:`mcp_proto_io.threads.Host`: the same moves as the
async Host's, blocking, with every access to the host's state under its ``RLock`` (see
:mod:`mcp_proto_io.host._async` for how the code is written to hold on threads too).
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
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
    Redactor,
)
from mcp_proto.host import (
    ConfigError,
    HostCatalog,
    HostConfig,
    HostCore,
    HostTool,
    SchemaError,
    ServerEvent,
    ServerSpec,
    ServerStatus,
    ServerUnavailable,
    UnknownTool,
    ValidatorCache,
    check_spec,
)

# -- the client side (the threads Host's, from _async.py's block) --
from .._handlers import ProgressCallback, StatusCallback
from .._memory import memory_command
from .._sync import ClientBase as _ClientBase
from ._blocking import BlockingRuntime, TaskHandle
from ._common import (
    REROUTE_PAUSE,
    TRIAL,
    HostOptions,
    Run,
    client_arguments,
    coerce_arguments,
    failure,
    log_event,
    log_refused_level,
    memory_server,
    spec_redactor,
)
from ._config_files import save_config as _save_config

__all__ = ["HostBase"]

#: Times a call's checks run again because its route changed while they ran (the server
#: replaced, or restarted with another listing, while an approval was asked): past it the
#: call gives up (nothing is sent) rather than ask a person without end.
MAX_RECHECKS = 3

_H = TypeVar("_H", bound="HostBase")
_Run = Run[_ClientBase]

_NOT_OPEN = "the host is not open: use it in a with block or call open() first"


class HostBase:
    """The Host's moves, on any runtime; a subclass gives the runtime (``_rt``, ``_guard``),
    the clients' constructors and the ways to close and to report changes."""

    _rt: BlockingRuntime
    _connect_stdio: Callable[..., _ClientBase]
    _connect_http: Callable[..., _ClientBase]
    #: A new guard of the host's state: a no-op context on an event loop, an RLock on threads.
    _new_guard: Callable[[], AbstractContextManager[Any]]

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._core = HostCore(config, names=options.names, restart=options.restart,
                              timeout=options.timeout, max_servers=options.max_servers,
                              start=options.start)
        self._catalog = HostCatalog(options.names)  # resources and prompts (_asynccatalog)
        self._options = options
        self._clock = clock
        self._guard = self._new_guard()
        self._runs: dict[str, _Run] = {}
        self._listing: set[str] = set()  # servers whose tools a task is listing now
        self._closing: list[_ClientBase] = []  # clients of ended runs, closed by the monitor
        self._trials: set[_ClientBase] = set()  # update_server's new runs, not swapped in
        self._tasks: set[TaskHandle] = set()  # the supervisor's and every start's, listing's
        self._changed: Any = None  # an event set (and replaced) at every change
        self._monitor: TaskHandle | None = None
        self._closed = False
        validation = options.validation
        self._validators = None if validation is None else ValidatorCache(validation.validator)

    # -- what each runtime gives ------------------------------------------------------------

    def _opened(self) -> None:
        """Called once as the host opens, in the opening task or thread (guard held)."""

    def _dispatch(self) -> None:
        """Give ``on_server_event`` the core's state changes, in order; never called with
        the guard held (the callback may call the host)."""
        raise NotImplementedError

    # -- plumbing ---------------------------------------------------------------------------

    def _drain(self) -> list[ServerEvent]:
        """The core's state changes since the last drain, each logged (guard held)."""
        events = self._core.drain_events()
        instrumentation = self._options.instrumentation
        for event in events:
            log_event(event, instrumentation)
        return events

    def _notify(self) -> None:
        """Wake everything waiting for a change: the supervisor, calls, settles (guard held)."""
        event, self._changed = self._changed, self._rt.event()
        if event is not None:
            event.set()

    def _spawn(self, name: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` in a task (or thread) of its own; a change when it ended (guard held)."""

        def run() -> None:
            try:
                fn()
            finally:
                with self._guard:
                    self._notify()
                self._dispatch()

        self._tasks.add(self._rt.spawn(name, run, self._ended))

    def _ended(self, task: TaskHandle) -> None:
        with self._guard:
            self._tasks.discard(task)

    def _shut(self) -> list[_ClientBase] | None:
        """Mark the host closed and take out the client of every run (None: it was closed
        already); the runtime's close stops them."""
        with self._guard:
            if self._closed:
                return None
            self._closed = True
            clients = [r.client for r in self._runs.values() if r.client is not None]
            clients += self._closing
            clients += self._trials
            self._runs.clear()
            self._trials.clear()
            self._closing = []
            if self._changed is not None:
                self._notify()
        return clients

    def _check_open(self) -> None:
        if self._closed:
            raise LocalProtocolError("the host is closed")
        if self._monitor is None:
            raise LocalProtocolError(_NOT_OPEN)

    # -- life ---------------------------------------------------------------------------------

    def open(self: _H) -> _H:
        """Start every enabled server, concurrently, and wait until each is running or has
        failed, at most the host's ``timeout`` in all (those still starting then go on
        starting; calls to them wait).  In lazy mode start nothing.  Returns self."""
        with self._guard:
            if self._closed:
                raise LocalProtocolError("the host is closed")
            if self._monitor is None:
                self._opened()
                self._changed = self._rt.event()
                self._monitor = self._rt.spawn("mcp-proto-host", self._supervise, self._ended)
                self._tasks.add(self._monitor)
                self._start_due()
            until = self._clock() + self._core.timeout
        self._settle(None, until)
        self._dispatch()
        return self

    # -- the supervisor -----------------------------------------------------------------------

    def _supervise(self) -> None:
        while True:
            try:
                with self._guard:
                    if self._closed:
                        return
                    self._start_due()
                    self._list_stale()
                    closing, self._closing = self._closing, []
                    for client in closing:  # each in its own task: never in the way
                        self._spawn("mcp-proto-host-stop", client.close)
                    deadline = self._core.next_deadline()
                    wait = None if deadline is None else max(0.0, deadline - self._clock())
                    changed = self._changed
                self._dispatch()
                self._rt.wait_event(changed, wait)
            except Exception:  # one bad turn must not end the supervision of every server
                traceback.print_exc()  # (cancellation is a BaseException: it still ends it)
                self._rt.sleep(REROUTE_PAUSE)

    def _start_due(self) -> None:
        """Start what the core says is due (guard held)."""
        if self._closed:
            return
        now = self._clock()
        for name in self._core.due(now):
            self._begin(name, now)

    def _begin(self, name: str, now: float) -> None:
        """Start a run of ``name`` (guard held): its client, then a task for the handshake.
        A spec its client refuses (a bad URL) ends the run at once, as a failed start."""
        if self._closed:
            return
        old = self._stop_run(name)
        if old is not None:
            self._closing.append(old)
        spec = self._core.spec(name)
        run: _Run = Run(name, self._core.begin_start(name, now))
        try:
            run.client = client = self._new_client(spec, run)
        except Exception as exc:
            error, tail = failure(exc, spec_redactor(spec))
            self._core.exited(name, run.incarnation, now, error, tail)
            self._notify()  # whoever waits for this start: it is over
            return
        self._runs[name] = run
        incarnation = run.incarnation
        self._spawn(f"mcp-proto-host-start-{name}",
                    lambda: self._start(name, incarnation, client, spec))

    def _new_client(self, spec: ServerSpec, run: _Run) -> _ClientBase:
        def on_notification(event: Event) -> Any:
            return self._on_event(run, event)

        kwargs = client_arguments(spec, self._options, on_notification)
        client: _ClientBase
        memory = memory_server(spec, self._options)
        if memory is not None:  # served in this process (connect_config(memory=...))
            kwargs.pop("env", None)
            kwargs.pop("cwd", None)
            client = type(self)._connect_stdio(memory_command(memory), **kwargs)
        elif spec.transport == "stdio":
            client = type(self)._connect_stdio(list(spec.command), **kwargs)
        else:
            assert spec.url is not None
            client = type(self)._connect_http(spec.url, **kwargs)
        client.single_run = True
        return client

    def _start(self, name: str, incarnation: int, client: _ClientBase,
               spec: ServerSpec) -> None:
        timeout = spec.startup_timeout
        try:
            client.connect()
            tools = client.list_tools(timeout=timeout)
            level = self._options.log_level
            if level is not None and "logging" in client.capabilities:
                try:  # before the server counts as running: its first call is logged too
                    client.set_logging_level(level, timeout=timeout)
                except MCPError as exc:  # refused: the server keeps its own level
                    log_refused_level(name, level, exc, spec_redactor(spec))
        except Exception as exc:
            error, tail = failure(exc, spec_redactor(spec))
            with self._guard:
                self._core.exited(name, incarnation, self._clock(), error, tail)
                self._retire(name, incarnation)
            return
        with self._guard:
            self._core.start_succeeded(name, incarnation, self._clock(), tools,
                                       server_info=client.server_info,
                                       protocol_version=client.protocol_version,
                                       era=client.era)

    def _stop_run(self, name: str) -> _ClientBase | None:
        """Take the current run's client out (guard held); the caller closes it."""
        run = self._runs.pop(name, None)
        return None if run is None else run.client

    def _retire(self, name: str, incarnation: int) -> None:
        """Hand the client of an ended run to the supervisor to close (guard held)."""
        run = self._runs.get(name)
        if run is not None and run.incarnation == incarnation:
            client = self._stop_run(name)
            if client is not None:
                self._closing.append(client)

    def _redactor(self, name: str) -> Redactor | None:
        """The secrets of ``name``'s spec (guard held; None once it was removed)."""
        try:
            return spec_redactor(self._core.spec(name))
        except LocalProtocolError:
            return None

    def _on_event(self, run: _Run, event: Event) -> Any:
        if isinstance(event, ListChanged) and event.kind == "tools":
            with self._guard:
                if run.incarnation == TRIAL:
                    run.changed = True
                else:
                    self._core.tools_changed(run.name, run.incarnation)
                self._notify()
        elif isinstance(event, Closed) and event.error is not None:
            with self._guard:
                error, tail = failure(event.error, self._redactor(run.name))
                if run.incarnation == TRIAL:
                    run.ended = event.error
                else:
                    self._core.exited(run.name, run.incarnation, self._clock(), error, tail)
                    self._retire(run.name, run.incarnation)
                self._notify()
        self._dispatch()
        callback = self._options.on_notification
        return None if callback is None else callback(run.name, event)

    def _list_stale(self, every: bool = False, timeout: float | None = None) -> None:
        """List the tools of servers that said they changed, or of every running one (an
        unknown name was called: a server may have a tool it did not announce); guard held."""
        if self._closed:
            return
        todo = self._core.running() if every else self._core.stale()
        for name, incarnation in todo:
            if name not in self._listing:
                self._listing.add(name)
                self._spawn(f"mcp-proto-host-list-{name}",
                            lambda n=name, i=incarnation:  # type: ignore[misc]
                            self._relist(n, i, timeout))

    def _relist(self, name: str, incarnation: int, timeout: float | None) -> None:
        try:
            with self._guard:
                run = self._runs.get(name)
                client = run.client if run is not None and run.incarnation == incarnation \
                    else None
            if client is None:
                return
            try:
                tools = client.list_tools(timeout=timeout)
            except Exception:  # keep the last listing (a dead server reports its exit)
                with self._guard:
                    self._core.listing_failed(name, incarnation)
                return
            with self._guard:
                self._core.tools_listed(name, incarnation, tools)
        finally:
            with self._guard:
                self._listing.discard(name)

    def _wait_listings(self, timeout: float | None = None, *,
                       until: float | None = None) -> None:
        """List what is stale and wait until no listing is under way, at most ``timeout``
        seconds (None: the host's timeout) or until ``until`` (the host's clock)."""
        with self._guard:
            self._check_open()
            self._list_stale()
            if until is None:
                until = self._clock() + (self._core.timeout if timeout is None else timeout)
        while True:
            with self._guard:
                wait = until - self._clock()
                if not self._listing or self._closed or wait <= 0:
                    return
                changed = self._changed
            self._rt.wait_event(changed, wait)

    def _starting(self, names: str | Sequence[str] | None) -> bool:
        """Whether ``names`` (one name; None: every server) has one starting (guard held)."""
        known = self._core.names()
        todo = [names] if isinstance(names, str) else known if names is None else names
        return any(n in known and self._core.state(n) == "starting" for n in todo)

    def _settle(self, names: str | Sequence[str] | None,
                until: float | None = None) -> None:
        """Wait until ``names`` (one name; None: every server) are no longer starting, at
        most until ``until`` (the host's clock; None: no bound but the starts' own)."""
        while True:
            with self._guard:
                if self._closed or not self._starting(names):
                    return
                wait = None if until is None else until - self._clock()
                if wait is not None and wait <= 0:
                    return
                changed = self._changed
            self._rt.wait_event(changed, wait)

    def _start_unlisted(self, names: Sequence[str] | None = None,
                        timeout: float | None = None, *,
                        until: float | None = None) -> None:
        """Start the lazy servers among ``names`` (None: all) that never listed, and wait
        while any of ``names`` is starting, at most ``timeout`` seconds (None: the host's)
        or until ``until`` (the host's clock)."""
        with self._guard:
            self._check_open()
            now = self._clock()
            for name in self._core.unlisted():
                if names is None or name in names:
                    self._begin(name, now)
            if until is None:
                until = now + (self._core.timeout if timeout is None else timeout)
        self._settle(names, until)
        self._dispatch()

    # -- tools --------------------------------------------------------------------------------

    def list_tools(self, *, timeout: float | None = None) -> list[HostTool]:
        """Every tool a model may call, by public name, sorted.  Starts the servers not
        started yet (lazy), waits for those starting, and lists first the tools of servers
        that said theirs changed; ``timeout`` (seconds; None: the host's) bounds those waits
        together.  A server still starting then is left out (its state is ``starting`` in
        :meth:`servers`; a later call lists it), as is one failed or disabled."""
        with self._guard:
            self._check_open()
            until = self._clock() + (self._core.timeout if timeout is None else timeout)
        self._start_unlisted(until=until)
        self._wait_listings(until=until)
        with self._guard:
            return self._core.tools()

    def _call(self, name: str, arguments: dict[str, Any] | str | None, *,
              timeout: float | None, on_progress: ProgressCallback | None,
              fix: str | None, task: bool | None, on_task_status: StatusCallback | None,
              model: bool) -> CallToolResult:
        """Route, check, wait and send (see :meth:`call_tool`); ``fix`` is the target whose
        argument fixes apply (None: the arguments go as given)."""
        arguments = coerce_arguments(arguments)  # nothing is sent for bad ones
        refreshed = False
        listed = False  # the listings were just waited for: route at once (one guard a turn)
        deadline: float | None = None
        core = self._core
        # The policy's checks (approval, validation) run when the call is first routed (its
        # tool known) and again whenever the route changed since (a restart with another
        # listing, the server replaced while an approval was asked): what is sent is always
        # what was checked.  The arguments are fixed for the target from what was given.
        policed = self._options.approval is not None or self._validators is not None
        checking = policed
        checked: HostTool | None = None
        checked_spec: ServerSpec | None = None
        rechecks = 0
        given = arguments
        while True:
            with self._guard:
                if self._closed or self._monitor is None:
                    self._check_open()
                relist = not listed and (bool(self._listing) or core.has_stale)
                listed = False
                owners = False
                if not relist:
                    now = self._clock()
                    try:
                        route = core.route(name, now=now, deadline=deadline, timeout=timeout)
                    except UnknownTool:
                        waited = self._start_owners(name, now, deadline, timeout)
                        owners = waited is not None
                        if waited is not None:
                            deadline = waited
                        else:
                            if refreshed:
                                raise core.unknown(name) from None
                            refreshed = True  # list every server's tools once: it may be new
                            self._list_stale(every=True, timeout=timeout)
                            continue
                    else:
                        deadline = route.deadline
                        if policed and not checking and not self._still_checked(
                                name, route.server, checked, checked_spec):
                            rechecks += 1
                            if rechecks > MAX_RECHECKS:
                                raise ServerUnavailable(
                                    route.server, core.state(route.server), None,
                                    "its tool kept changing while the call was checked; "
                                    "nothing was sent")
                            checking = True
                        if checking:
                            checked = core.tool(name)
                            checked_spec = core.spec(route.server)
                            if fix is not None:
                                arguments = self._fixed(name, fix, given)
                        else:
                            if route.start:  # closed until next used: this is the use
                                self._begin(route.server, now)
                            run = self._runs.get(route.server)
                            client = None if run is None else run.client
                            if fix is not None and not policed and route.wait_until is None:
                                arguments = self._fixed(name, fix, arguments)
                    changed = self._changed
            if relist:  # tools changed: list them first
                self._wait_listings(timeout)
                listed = True
                continue
            if owners:  # servers that may own the name are starting: route at each change
                assert deadline is not None
                self._rt.wait_event(changed, deadline - now)
                continue
            if checking:  # nothing is sent before these pass
                assert checked is not None and checked_spec is not None
                if self._check_call(checked_spec, checked, arguments):
                    deadline = None  # the time a person took to answer is not the call's
                checking = False
                continue
            if route.wait_until is not None or client is None or run is None \
                    or run.incarnation != route.incarnation:
                # starting, in backoff, or being replaced: woken by any change
                self._rt.wait_event(changed,
                                    max(REROUTE_PAUSE, (route.wait_until or now) - now))
                continue
            try:
                result = client.call_tool(route.tool, arguments,
                                          timeout=max(0.0, route.deadline - now),
                                          on_progress=on_progress, task=task,
                                          on_task_status=on_task_status)
            except NotSent:
                # The run ended between routing and sending (nothing reached the server):
                # route again, to the next run as the restart policy allows.
                with self._guard:
                    pending = self._runs.get(route.server) is run  # its end not handled yet
                    changed = self._changed
                if pending:
                    self._rt.wait_event(changed, REROUTE_PAUSE)
                continue
            if checked is not None and self._validators is not None:
                return self._check_output(route.server, checked, result)
            return result

    def _check_call(self, spec: ServerSpec, tool: HostTool,
                    arguments: dict[str, Any] | None) -> bool:
        """The checks of a call before it is sent (:mod:`._asyncmodel`'s); True when the
        host's ask callback was asked."""
        raise NotImplementedError

    def _still_checked(self, name: str, server: str, checked: HostTool | None,
                       spec: ServerSpec | None) -> bool:
        """Whether the call ``name``, routed to ``server`` now, is still the call that was
        checked: the same server and tool, under the same spec, with an equal definition
        (guard held)."""
        if checked is None or spec is None or checked.server != server:
            return False
        core = self._core
        if core.spec(server) is not spec:
            return False
        current = core.tool(name)
        return current.tool == checked.tool and (
            current.definition is checked.definition or current.definition == checked.definition)

    def _check_output(self, server: str, tool: HostTool, result: CallToolResult
                      ) -> CallToolResult:
        """The check of a call's result (:mod:`._asyncmodel`'s)."""
        raise NotImplementedError

    def _start_owners(self, name: str, now: float, deadline: float | None,
                      timeout: float | None) -> float | None:
        """Start the held servers that may own the tool ``name`` (guard held); the call's
        deadline to wait until, or None when no server without a listing could own it.
        Raises the core's error when the deadline passed while they were starting."""
        core = self._core
        owners = core.owners(name)
        if not owners:
            return None
        if deadline is None:
            deadline = now + max(core.call_timeout(n, timeout) for n in owners)
        if now >= deadline:
            raise core.unknown(name)
        for _ in range(len(core.names()) + 1):  # each turn starts one at least: bounded
            held = [owner for owner in owners if core.is_held(owner)]
            if not held:
                return deadline
            for owner in held:
                self._begin(owner, now)
            # a start that failed at once (a bad URL) is over: who may own it now?
            owners = core.owners(name)
            if not owners:
                return None
        return deadline

    def _fixed(self, name: str, provider: str, arguments: dict[str, Any] | None
               ) -> dict[str, Any] | None:
        try:
            return self._core.normalized(name, provider).fix_arguments(arguments)
        except SchemaError:  # no definition was given for it: nothing to undo
            return arguments

    def _in_use(self, name: str, timeout: float | None,
                until: float | None = None) -> _ClientBase:
        """The client of ``name``, started first if it was closed until next used, waited
        for at most ``timeout`` seconds (None: the host's) or until ``until``."""
        with self._guard:
            self._check_open()
            if self._core.is_held(name):
                self._begin(name, self._clock())
            if until is None:
                until = self._clock() + (self._core.timeout if timeout is None else timeout)
        self._settle(name, until)
        return self.server(name)

    def use_server(self, name: str, *, timeout: float | None = None) -> _ClientBase:
        """The client of ``name``'s current run, started first if it is stopped until used
        (lazy, or closed until next used), waiting while it starts (at most ``timeout``
        seconds; None: the host's).  Raises as :meth:`server`."""
        return self._in_use(name, timeout)

    # -- servers ------------------------------------------------------------------------------

    def servers(self) -> dict[str, ServerStatus]:
        """Every server's status (state, attempts, next start, error, stderr tail)."""
        with self._guard:
            return self._core.status(self._clock())

    def server(self, name: str) -> _ClientBase:
        """The client of ``name``'s current run (resources, prompts, tasks ...).  After a
        restart it is a new client: ask again.  Raises
        :class:`~mcp_proto.host.ServerUnavailable` when the server is not running and
        :class:`~mcp_proto.LocalProtocolError` for an unknown name."""
        with self._guard:
            self._check_open()
            state = self._core.state(name)
            run = self._runs.get(name)
            if state != "running" or run is None or run.client is None:
                status = self._core.status(self._clock())[name]
                error = status.error
                if self._core.is_held(name):
                    error = "not started until used: use_server starts it"
                raise ServerUnavailable(name, state, status.next_start_at, error)
            return run.client

    @property
    def config(self) -> HostConfig:
        """The config as it is now (with the servers added, updated or removed)."""
        with self._guard:
            return self._core.config

    def _change(self, name: str, change: Callable[[float], object], *, stop: bool,
                settle: bool) -> ServerStatus:
        """Apply ``change(now)`` to the core (first: a refused change stops nothing), stop
        the current run if ``stop``, start what is due, wait for ``name`` if ``settle``;
        its status after."""
        with self._guard:
            self._check_open()
            change(self._clock())
            old = self._stop_run(name) if stop else None
            self._start_due()
        return self._after_change(name, old, settle)

    def _after_change(self, name: str, old: _ClientBase | None,
                      settle: bool) -> ServerStatus:
        if old is not None:
            old.close()
        if settle:
            self._settle(name)
        self._dispatch()
        with self._guard:
            return self._core.status(self._clock())[name]

    def stop_server(self, name: str) -> ServerStatus:
        """Stop a server's run until a call needs it again (its tools stay listed; the next
        call to one starts it).  Frees its process or connection meanwhile.  A server
        stopped already (lazy and never started, or closed) stays so: its status is
        returned.  :class:`~mcp_proto.LocalProtocolError` for one starting, failed or
        disabled, and for an unknown name."""
        return self._change(name, lambda now: self._core.stop(name, now, hold=True),
                            stop=True, settle=False)

    def add_server(self, name: str, spec: ServerSpec) -> ServerStatus:
        """Add a server and start it (unless disabled); waits until it runs or failed and
        returns its status.  Raises :class:`~mcp_proto.host.ConfigError` for a name in use
        or a host at ``max_servers``."""
        spec = replace(spec, name=name)
        return self._change(name, lambda now: self._core.add(spec, now), stop=False,
                            settle=True)

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
        if not spec.enabled:
            return self._change(name, lambda now: self._core.replace(spec, now),
                                stop=True, settle=False)
        trial_run: _Run = Run(name)  # no incarnation until it takes the old run's place
        with self._guard:
            self._check_open()
            before = self._core.spec(name)  # LocalProtocolError for an unknown name
            trial = self._new_client(spec, trial_run)  # LocalProtocolError for a bad URL
            self._trials.add(trial)
        try:
            trial.connect()
            tools = trial.list_tools(timeout=spec.startup_timeout)
            with self._guard:
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
                self._core.start_succeeded(name, trial_run.incarnation, now, tools,
                                           server_info=trial.server_info,
                                           protocol_version=trial.protocol_version,
                                           era=trial.era)
                if trial_run.changed:
                    self._core.tools_changed(name, trial_run.incarnation)
                self._notify()
        except BaseException:
            with self._guard:
                self._trials.discard(trial)
            trial.close()
            raise
        return self._after_change(name, old, False)

    def enable_server(self, name: str) -> ServerStatus:
        """Enable a disabled server and start it; waits and returns its status."""
        return self._change(name, lambda now: self._core.enable(name, now), stop=False,
                            settle=True)

    def disable_server(self, name: str) -> ServerStatus:
        """Stop a server and keep it from starting (its tools are no longer listed)."""
        return self._change(name, lambda now: self._core.disable(name, now), stop=True,
                            settle=False)

    def restart_server(self, name: str) -> ServerStatus:
        """Stop a server's run (if any) and start it now with a fresh schedule (also a
        ``failed`` one); waits and returns its status.  Calls in flight fail."""
        return self._change(name, lambda now: self._core.stop(name, now), stop=True,
                            settle=True)

    def remove_server(self, name: str) -> ServerSpec:
        """Stop a server and forget it; returns its spec."""
        with self._guard:
            self._check_open()
            old = self._stop_run(name)
            spec = self._core.remove(name)
            self._catalog.forget(name)
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
