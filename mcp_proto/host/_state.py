"""The host's decisions, pure: which server is in which state, when each starts again, which
tools are public under which names, and where a call goes.

Start modes: ``eager`` starts every enabled server at once (:meth:`HostCore.due`); ``lazy``
starts none: each is ``stopped`` until first used (held, as after a close until next used),
and :meth:`HostCore.owners` says which servers a call to a name no listing has must start
or wait for (the servers that can own the name first, then the rest), so a call never waits
for a server that cannot have its tool.

A binding owns one client per server and feeds this object what happened (a start began,
finished, failed; a server exited; its tools changed or were listed) with the time; it asks
what to do (which servers to start now, when to wake up next, where a call goes) and drains
:class:`ServerEvent` s for the host's callback.  Nothing here does I/O or reads a clock.

Server states, and every legal move (the table is all of it; a move not in it is a bug in
the caller and raises :class:`LocalProtocolError`)::

    stopped  --start-->  starting  --ready-->  running
    starting --exited--> backoff   (the schedule gave a time)   --start--> starting
    running  --exited--> backoff
    starting/running --gave_up--> failed (the schedule gave up, no restart policy, or a
                                         start from scratch failed: nothing to retry)
    failed   --start-->  starting  (a restart by hand)
    any but disabled --disable--> disabled  --enable--> stopped
    any      --stop-->   stopped   (closed, or a spec replaced)

An *incarnation* number counts the starts of each server: a report about an older one (the
exit of a process the host already replaced) is ignored, so a late exit can never mark a new
process dead.

Thousands of tools: every listing is kept as a dict (tool name -> definition) beside the list,
the public names map straight to their definitions, and what a model loop asks for on every
turn (:meth:`HostCore.tools`, :meth:`~HostCore.all_tools`, :meth:`~HostCore.definitions`) is
computed once per :attr:`~HostCore.generation` (a number bumped at every change of a listing,
of the names or of a server's state) and kept until the next.  A normalized schema is kept
per server, tool and target for as long as the tool is listed with an equal input schema
(a ``list_changed`` that changes one tool normalizes one tool again), so the cache is bounded
by the listing itself (at most one entry per listed tool and target); :mod:`._listing` keeps
both (:class:`~._listing.Listing` per generation, :func:`~._listing.normalized_schema` per
server).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

from .._errors import LocalProtocolError, MCPError
from .._types import Implementation, Tool
from ._errors import ServerUnavailable, UnknownTool
from ._listing import HostTool, Listing, SchemaCache, normalized_schema
from ._names import (
    NamePolicy,
    ToolFilter,
    ToolNames,
    assign_names,
    not_listed,
    owner_candidates,
)
from ._restart import DEFAULT_RESTART, RestartPolicy, RestartSchedule
from ._spec import (
    ConfigError,
    ConfigProblem,
    HostConfig,
    ServerSpec,
    check_spec,
    forget_changed_templates,
)
from ._tools import TOOL_TARGETS, tool_definition
from .schema._normalize import Normalized, SchemaError

__all__ = [
    "DEFAULT_MAX_SERVERS",
    "MIN_SEND_WINDOW",
    "SERVER_STATES",
    "START_MODES",
    "TRANSITIONS",
    "HostCore",
    "HostTool",
    "Route",
    "ServerEvent",
    "ServerState",
    "ServerStatus",
    "StartMode",
]

ServerState = Literal["starting", "running", "backoff", "failed", "disabled", "stopped"]
SERVER_STATES: tuple[ServerState, ...] = ("starting", "running", "backoff", "failed",
                                          "disabled", "stopped")
StartMode = Literal["eager", "lazy"]
#: ``eager``: every enabled server starts when the host opens; ``lazy``: each at first use.
START_MODES: tuple[StartMode, ...] = ("eager", "lazy")
_Input = Literal["start", "ready", "exited", "gave_up", "disable", "enable", "stop"]

#: Servers one host runs at most (rpi-mcp-adapter's bound): each is a process or a pool of
#: sockets and a few threads or tasks; a config with hundreds is a mistake, not a workload.
DEFAULT_MAX_SERVERS = 64

#: Seconds a call that waited for its server must still have to be sent: less, and the tool
#: would run (with its side effects) for a caller that times out before the answer.
MIN_SEND_WINDOW = 0.05

#: Characters of stderr kept in a status (the client keeps the last 8 KiB; a status is shown
#: to people, and a screenful is what they read).
STATUS_STDERR_CHARS = 4096


def _table() -> dict[tuple[ServerState, _Input], ServerState]:
    t: dict[tuple[ServerState, _Input], ServerState] = {
        ("stopped", "start"): "starting",
        ("backoff", "start"): "starting",
        ("failed", "start"): "starting",
        ("starting", "ready"): "running",
        ("starting", "exited"): "backoff",
        ("running", "exited"): "backoff",
        ("starting", "gave_up"): "failed",
        ("running", "gave_up"): "failed",
        ("disabled", "enable"): "stopped",
    }
    for state in SERVER_STATES:
        t[(state, "stop")] = "disabled" if state == "disabled" else "stopped"
        if state != "disabled":
            t[(state, "disable")] = "disabled"
    return t


#: ``(state, input) -> next state``; a missing pair is an illegal move.
TRANSITIONS: Mapping[tuple[ServerState, _Input], ServerState] = _table()


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerStatus:
    """One server as the host sees it now.  ``attempts`` counts consecutive failures;
    ``next_start_at`` is when the host starts it again (the host's clock; None: not
    scheduled); ``error`` and ``stderr_tail`` say what ended its last run.  While a run
    is ``starting`` or ``running``, ``started_at`` is when it began (the host's clock: how
    long a start has taken so far); while it is ``running``, ``server_info``,
    ``protocol_version`` and ``era`` (``"legacy"`` / ``"modern"``) are what its handshake
    said.  None otherwise."""

    state: ServerState
    transport: str
    attempts: int = 0
    next_start_at: float | None = None
    error: str | None = None
    stderr_tail: str = ""
    tools: int = 0
    incarnation: int = 0
    started_at: float | None = None
    server_info: Implementation | None = None
    protocol_version: str | None = None
    era: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerEvent:
    """A server changed state (for the host's ``on_server_event``)."""

    server: str
    state: ServerState
    previous: ServerState
    at: float
    error: str | None = None
    next_start_at: float | None = None
    attempts: int = 0


class Route(NamedTuple):
    """Where a call goes: ``tool`` on ``server``, run number ``incarnation``, before
    ``deadline``.  When ``wait_until`` is set the server is not ready yet but will be
    (starting, or in backoff with its next start before the deadline): wait until then, or
    until the host reports a change, and route again.  (A named tuple: one is made per call,
    and it is the cheapest immutable record Python has.)"""

    server: str
    tool: str
    incarnation: int
    deadline: float
    wait_until: float | None = None
    #: The server was closed until next used (``hold``): the binding starts it now.
    start: bool = False


@dataclass(slots=True)
class _Server:
    spec: ServerSpec
    schedule: RestartSchedule | None
    state: ServerState = "stopped"
    incarnation: int = 0
    error: str | None = None
    stderr_tail: str = ""
    tools: list[Tool] | None = None  # None: never listed in this incarnation
    #: The listed tools the filter allows, as listed (a name listed twice is there twice).
    allowed: list[Tool] = field(default_factory=list)
    #: Tool name -> its first allowed definition: what a public name routes to.
    by_name: dict[str, Tool] = field(default_factory=dict)
    #: ``(tool, target)`` -> the normalized schema, kept across listings while the tool's
    #: input schema stays equal (pruned to the listed tools at each listing).
    schemas: SchemaCache = field(default_factory=dict)
    stale: bool = False  # tools/list_changed seen: list again
    #: The server became ready since it was last started from scratch (initially, or by
    #: hand): only then is a failed start a crash the schedule retries.  A start from scratch
    #: that fails is a broken spec (a missing executable, a bad token): ``failed`` at once.
    proven: bool = False
    filter: ToolFilter = field(default_factory=ToolFilter)
    #: Stopped until next used (a meta-tool's close, or lazy): not started by :meth:`due`.
    held: bool = False
    started_at: float | None = None  # the current run's start
    server_info: Implementation | None = None  # what its handshake said
    protocol_version: str | None = None
    era: str | None = None


class HostCore:
    """Every decision of a multi-server host, driven by the binding.

    ``restart`` None means a server that exits is not started again automatically (it is
    ``failed`` until :meth:`begin_start` by hand).  ``timeout`` is a call's default deadline
    in seconds, ``max_servers`` the bound on servers (a config or an :meth:`add` over it is a
    :class:`ConfigError`).  ``start`` is the start mode (``eager``: :meth:`due` starts every
    enabled server; ``lazy``: none until used, see :meth:`owners`); ``ValueError`` for
    another.
    """

    def __init__(self, config: HostConfig, *, names: NamePolicy | None = None,
                 restart: RestartPolicy | None = DEFAULT_RESTART, timeout: float = 60.0,
                 max_servers: int = DEFAULT_MAX_SERVERS, start: StartMode = "eager") -> None:
        if start not in START_MODES:
            raise ValueError(f"start must be one of {', '.join(START_MODES)}, not {start!r}")
        problems = [p for spec in config.servers.values() for p in check_spec(spec)]
        if problems:  # a HostConfig built in code rather than parsed
            raise ConfigError(problems, config.path)
        if len(config.servers) > max_servers:
            raise ConfigError([ConfigProblem(
                None, None, f"{len(config.servers)} servers, over the host's limit of "
                f"{max_servers} (raise max_servers if that many are meant)")], config.path)
        self.config = config
        self.policy = names or NamePolicy()
        self.restart = restart
        self.timeout = timeout
        self.max_servers = max_servers
        self._servers: dict[str, _Server] = {}
        self._events: list[ServerEvent] = []
        self._stale: set[str] = set()  # running servers whose tools changed (O(1) check)
        # Incarnations come from one counter that never goes back, so a server removed and
        # added again under the same name never reuses a number a late report could match.
        self._next_incarnation = 0
        self._names = assign_names({}, self.policy)
        # public name -> (server record, server, tool, definition): one lookup per call
        self._routes: dict[str, tuple[_Server, str, str, Tool]] = {}
        self._named: dict[str, dict[str, Tool]] = {}  # the listings the names were made of
        self._generation = 0
        # What is kept for one generation (dropped by _bump, made again when next asked for)
        self._listing: Listing[_Server] | None = None
        self.start = start
        for spec in config.servers.values():
            self._servers[spec.name] = server = self._record(spec)
            server.held = start == "lazy" and spec.enabled

    # -- bookkeeping -----------------------------------------------------------------------

    def _record(self, spec: ServerSpec) -> _Server:
        policy = spec.restart if spec.restart is not None else self.restart
        server = _Server(spec=spec, schedule=None if policy is None else RestartSchedule(policy),
                         filter=ToolFilter(spec.include_tools, spec.exclude_tools))
        if not spec.enabled:
            server.state = "disabled"
        return server

    def _get(self, name: str) -> _Server:
        try:
            return self._servers[name]
        except KeyError:
            raise LocalProtocolError(f"no server is named {name!r}") from None

    def _move(self, name: str, server: _Server, move: _Input, now: float) -> None:
        previous = server.state
        try:
            state = TRANSITIONS[(previous, move)]
        except KeyError:
            raise LocalProtocolError(
                f"server {name!r}: cannot {move} while {previous}") from None
        server.state = state
        if state not in ("running", "starting") and server.stale:
            server.stale = False
            self._stale.discard(name)
        if state != previous:
            self._bump()  # which tools are callable follows the state
            schedule = server.schedule
            self._events.append(ServerEvent(
                server=name, state=state, previous=previous, at=now, error=server.error,
                next_start_at=None if schedule is None else schedule.next_start_at,
                attempts=0 if schedule is None else schedule.attempts))

    def _bump(self) -> None:
        """A listing, the names or a state changed: what was kept for the last generation
        goes (the normalized schemas stay: they are kept per tool, see :meth:`_list`)."""
        self._generation += 1
        self._listing = None

    def _kept(self) -> Listing[_Server]:
        """This generation's :class:`Listing` (made of the routes and states as they are)."""
        listing = self._listing
        if listing is None:
            listing = self._listing = Listing(self._routes, self._callable, tool_definition,
                                              TOOL_TARGETS)
        return listing

    def _rename(self) -> None:
        named = {name: s.by_name for name, s in self._servers.items()
                 if s.tools is not None and (s.state not in ("disabled", "stopped")
                                             or s.held)}
        self._bump()
        previous = self._named
        if len(named) == len(previous) and all(previous.get(name) is by_name
                                               for name, by_name in named.items()):
            return  # the very same listings (an exit keeps them): the same names and routes
        self._named = named  # held, so no listing's dict is freed and another takes its place
        listing = {name: by_name.keys() for name, by_name in named.items()}
        self._names = names = assign_names(listing, self.policy)
        routes: dict[str, tuple[_Server, str, str, Tool]] = {}
        for public in names:  # sorted: tools() and all_tools() keep this order
            server_name, tool_name = names.resolve(public)
            server = self._servers[server_name]
            routes[public] = (server, server_name, tool_name, server.by_name[tool_name])
        self._routes = routes

    @staticmethod
    def _list(server: _Server, tools: Iterable[Tool] | None) -> None:
        """Keep a server's listing (None: it has none), with the allowed tools by name; the
        normalized schemas of tools no longer listed go (the others are checked against
        their new schema when next asked for)."""
        if tools is None:
            server.tools = None
            server.allowed = []
            server.by_name = {}
            server.schemas = {}
            return
        server.tools = listed = list(tools)
        allows = server.filter.allows
        server.allowed = allowed = [t for t in listed if allows(t.name)]
        by_name: dict[str, Tool] = {}
        for t in allowed:
            by_name.setdefault(t.name, t)  # a name listed twice: the first definition
        server.by_name = by_name
        server.schemas = {key: hit for key, hit in server.schemas.items() if key[0] in by_name}

    @staticmethod
    def _callable(server: _Server) -> bool:
        """Its listed tools are offered to a model: running, in backoff or starting (calls
        wait for the restart), or closed until next used."""
        return server.state in ("running", "backoff", "starting") or server.held

    def _new_incarnation(self, server: _Server) -> int:
        self._next_incarnation += 1
        server.incarnation = self._next_incarnation
        return server.incarnation

    def _current(self, name: str, incarnation: int) -> _Server | None:
        server = self._servers.get(name)
        if server is None or server.incarnation != incarnation:
            return None  # a report about a run the host already replaced or removed
        return server

    def drain_events(self) -> list[ServerEvent]:
        """The state changes since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    # -- what the binding reports ------------------------------------------------------------

    def begin_start(self, name: str, now: float) -> int:
        """A start of ``name`` begins now (initial, scheduled or by hand): returns its
        incarnation number, to pass back with every report about this run.  Raises
        :class:`LocalProtocolError` for a disabled or already starting/running server."""
        server = self._get(name)
        if server.state != "backoff":
            server.proven = False
        self._move(name, server, "start", now)
        server.held = False
        self._new_incarnation(server)
        server.error = None
        server.stderr_tail = ""
        server.stale = False
        server.started_at = now
        server.server_info = server.protocol_version = server.era = None
        # the last listing stays (calls to it wait for the restart) until the new one
        if server.schedule is not None:
            server.schedule.started(now)
        return server.incarnation

    def start_succeeded(self, name: str, incarnation: int, now: float,
                        tools: Iterable[Tool], *, server_info: Implementation | None = None,
                        protocol_version: str | None = None, era: str | None = None) -> None:
        """The handshake finished (it said ``server_info``, ``protocol_version`` and
        ``era``) and the tools were listed."""
        server = self._current(name, incarnation)
        if server is None or server.state != "starting":
            return
        self._list(server, tools)
        server.server_info = server_info
        server.protocol_version = protocol_version
        server.era = era
        server.proven = True
        if server.schedule is not None:
            server.schedule.ready(now)
        self._move(name, server, "ready", now)
        if server.stale:  # list_changed arrived during the start: list again
            self._stale.add(name)
        self._rename()

    def exited(self, name: str, incarnation: int, now: float, error: str,
               stderr_tail: str = "") -> None:
        """Run ``incarnation`` of ``name`` ended: it failed to start, or died later.  The
        schedule says when it starts again (:meth:`due`), or it is ``failed``: also a first
        start that fails (nothing to retry: the spec or the machine is wrong)."""
        server = self._current(name, incarnation)
        if server is None or server.state not in ("starting", "running"):
            return
        server.error = error
        server.stderr_tail = stderr_tail[-STATUS_STDERR_CHARS:]
        retry = None
        if server.schedule is not None:
            retry = server.schedule.exited(now)
            if not server.proven:
                retry = None
                server.schedule.next_start_at = None
        self._move(name, server, "gave_up" if retry is None else "exited", now)
        self._rename()

    def tools_changed(self, name: str, incarnation: int) -> None:
        """The server said ``notifications/tools/list_changed``: list its tools again."""
        server = self._current(name, incarnation)
        if server is not None and server.state in ("starting", "running"):
            server.stale = True  # while starting: listed again once it is running
            if server.state == "running":
                self._stale.add(name)

    def listing_failed(self, name: str, incarnation: int) -> None:
        """Listing the tools again failed (an error or a timeout; a dead server reports
        itself as exited): keep the last listing and stop asking until the next change."""
        server = self._current(name, incarnation)
        if server is not None:
            server.stale = False
            self._stale.discard(name)

    def tools_listed(self, name: str, incarnation: int, tools: Iterable[Tool]) -> None:
        """A fresh listing of a running server's tools."""
        server = self._current(name, incarnation)
        if server is None or server.state != "running":
            return
        self._list(server, tools)
        server.stale = False
        self._stale.discard(name)
        self._rename()

    # -- what the binding asks -----------------------------------------------------------------

    def due(self, now: float) -> list[str]:
        """Servers to start now: enabled ones never started (``stopped``) and those in
        backoff whose time has come, in config order."""
        out = []
        for name, s in self._servers.items():
            never_started = s.state == "stopped" and s.spec.enabled and not s.held
            scheduled = s.state == "backoff" and s.schedule is not None \
                and s.schedule.may_start(now)
            if never_started or scheduled:
                out.append(name)
        return out

    def next_deadline(self) -> float | None:
        """When the next scheduled start is due (None: nothing scheduled)."""
        times = [s.schedule.next_start_at for s in self._servers.values()
                 if s.state == "backoff" and s.schedule is not None
                 and s.schedule.next_start_at is not None]
        return min(times) if times else None

    def stale(self) -> list[tuple[str, int]]:
        """Running servers whose tools must be listed again, with their incarnation."""
        return [(n, self._servers[n].incarnation) for n in self._stale]

    @property
    def has_stale(self) -> bool:
        """True when :meth:`stale` is not empty (checked on every call: O(1))."""
        return bool(self._stale)

    def running(self) -> list[tuple[str, int]]:
        """Running servers with their incarnation (to list their tools again)."""
        return [(n, s.incarnation) for n, s in self._servers.items() if s.state == "running"]

    def state(self, name: str) -> ServerState:
        return self._get(name).state

    def incarnation(self, name: str) -> int:
        return self._get(name).incarnation

    def spec(self, name: str) -> ServerSpec:
        return self._get(name).spec

    def names(self) -> list[str]:
        return list(self._servers)

    def tool_names(self) -> ToolNames:
        return self._names

    @property
    def generation(self) -> int:
        """A number that grows at every change of what :meth:`tools`, :meth:`all_tools`,
        :meth:`definitions` or the names say (a listing, a rename, a server's state): equal
        numbers mean equal answers, so a caller may key its own caches (a search index) on
        it."""
        return self._generation

    def tools(self) -> list[HostTool]:
        """The tools a model may call, sorted by public name: those of running servers (and
        of servers in backoff or starting, whose calls wait for the restart, and of servers
        closed until next used), filtered by each server's include/exclude patterns.
        Computed once per :attr:`generation`; each call returns a new list (of shared,
        immutable records)."""
        return list(self._kept().tools())

    def all_tools(self) -> list[HostTool]:
        """Every tool that has a listing, sorted by public name, filtered like :meth:`tools`:
        those of :meth:`tools` and those of servers that cannot take a call now but keep
        their last listing (failed): what a search ranks.  Computed once per
        :attr:`generation`; each call returns a new list."""
        return list(self._kept().all_tools())

    def tool(self, public: str) -> HostTool:
        """The tool of :meth:`tools` named ``public`` (one lookup).  Raises
        :class:`UnknownTool` (with close matches) for a name :meth:`tools` does not have:
        list the tools again once, or tell the model."""
        entry = self._routes.get(public)
        if entry is None or not self._callable(entry[0]):
            raise UnknownTool(public, self._names.close_matches(public))
        _, server_name, tool_name, definition = entry
        return HostTool(name=public, server=server_name, tool=tool_name, definition=definition)

    def definitions(self, target: str) -> list[dict[str, Any]]:
        """Every tool of :meth:`tools` as a function tool of ``target`` (see
        :func:`~mcp_proto.host._tools.tool_definition`), in the same order, leaving out those
        whose schema the target refuses (:meth:`refused` says which and why).  Computed once
        per :attr:`generation` and target, from the normalized schemas kept per tool; each
        call returns a new list of the same definitions, which are shared: copy one before
        changing it (``{**d, "cache_control": ...}``; the schema inside is shared with the
        targets that send the same one, ``openai`` and ``openai-responses``).  ``ValueError``
        for an unknown target."""
        return list(self._kept().defined(target)[0])

    def refused(self, target: str) -> list[tuple[str, SchemaError]]:
        """``(public name, error)`` for each tool of :meth:`tools` whose schema ``target``
        cannot take (left out of :meth:`definitions`: log them, or offer those tools under
        another target).  ``ValueError`` for an unknown target."""
        return list(self._kept().defined(target)[1])

    def call_timeout(self, server: str, timeout: float | None = None) -> float:
        """A call's total seconds: ``timeout`` if given, else the server's, else the host's."""
        if timeout is not None:
            return timeout
        spec_timeout = self._get(server).spec.timeout
        return spec_timeout if spec_timeout is not None else self.timeout

    def route(self, public: str, *, now: float, deadline: float | None = None,
              timeout: float | None = None) -> Route:
        """Where the call ``public`` goes.  Its ``deadline`` is fixed at the first route
        (``now`` + :meth:`call_timeout`) and passed back on each later one.

        Raises :class:`UnknownTool` (with close matches) for a name no server's listing has
        (the binding lists tools again once, then gives up), and :class:`ServerUnavailable`
        for a server that cannot take the call before the deadline (failed, disabled,
        stopped, in backoff past the deadline, or still starting at it).  Nothing is sent
        in either case."""
        try:
            server, server_name, tool_name, _ = self._routes[public]
        except KeyError:
            raise UnknownTool(public, self._names.close_matches(public)) from None
        again = deadline is not None
        if deadline is None:
            if timeout is None:
                timeout = server.spec.timeout
                if timeout is None:
                    timeout = self.timeout
            deadline = now + timeout
        state = server.state
        if state == "running":  # the hot path: one lookup and a tuple
            if again and deadline - now < MIN_SEND_WINDOW:
                # it waited for the server and has no time left: sending now would start
                # the tool (side effects) for a caller about to give up on it
                raise ServerUnavailable(server_name, "running", None,
                                        "it became ready too close to the call's deadline "
                                        "to send it; nothing was sent")
            return Route(server_name, tool_name, server.incarnation, deadline)
        schedule = server.schedule
        retry_at = schedule.next_start_at if schedule is not None and state == "backoff" \
            else None
        if state == "stopped" and server.held and server.spec.enabled and now < deadline:
            return Route(server_name, tool_name, server.incarnation, deadline, deadline, True)
        if state == "starting" and now < deadline:
            wait_until = deadline
        elif state == "backoff" and retry_at is not None and now < deadline \
                and retry_at <= deadline:
            wait_until = max(retry_at, now)
        else:
            raise ServerUnavailable(server_name, state, retry_at, server.error)
        return Route(server_name, tool_name, server.incarnation, deadline, wait_until)

    def normalized(self, public: str, target: str) -> Normalized:
        """The input schema of the tool named ``public`` (any server with a listing, as
        :meth:`route` knows it) normalized for ``target``: converted once while the tool is
        listed with an equal schema (one lookup after that).  Raises :class:`UnknownTool`,
        ``ValueError`` for an unknown target and :class:`SchemaError` when the target cannot
        take the schema (leave the tool out for that target)."""
        try:
            server, _, tool_name, definition = self._routes[public]
        except KeyError:
            raise UnknownTool(public, self._names.close_matches(public)) from None
        return normalized_schema(server.schemas, tool_name, definition, target)

    def _unlisted(self, server: _Server) -> bool:
        """Has no listing yet but will have one: lazy (held, never started) or starting."""
        return server.tools is None and (server.state == "starting" or (
            server.state == "stopped" and server.held and server.spec.enabled))

    def _down(self, server: _Server) -> bool:
        """Cannot run now and never listed: its tools are unknown until it is back."""
        return server.tools is None and server.state in ("disabled", "failed")

    def owners(self, public: str) -> list[str]:
        """The servers a call to ``public`` (a name no listing has) must start or wait for
        before it can be routed: of the servers without a listing yet (lazy ones never
        started, and those starting), the ones that may own the name first
        (:func:`~mcp_proto.host._names.owner_candidates`), and only once all of those are
        listed, the rest (under ``always`` only when no server's prefix begins the name: the
        rest cannot own a prefixed name, and a misspelt one then gets close matches from
        every server).  Empty: nothing to wait for (every server that could own it listed,
        or one that may own it is disabled or failed): raise :meth:`unknown`.  Start those
        :meth:`is_held` says are held; wait for a change and route again."""
        first, rest = owner_candidates(public, self._servers, self.policy)
        records = [self._servers[n] for n in first]
        unlisted = [n for n, s in zip(first, records, strict=True) if self._unlisted(s)]
        if unlisted:
            return unlisted
        if any(self._down(s) for s in records) or (first and self.policy.mode == "always"):
            return []
        return [n for n in rest if self._unlisted(self._servers[n])]

    def unlisted(self) -> list[str]:
        """Held servers that have never listed their tools (lazy ones never started): what a
        listing of the whole host starts first."""
        return [n for n, s in self._servers.items()
                if s.tools is None and s.state == "stopped" and s.held and s.spec.enabled]

    def held(self) -> list[str]:
        """Servers stopped until used (lazy ones never started, and those closed until next
        used, whose tools stay listed): what a listing of resources or prompts starts (those
        are asked of a run, never kept across one)."""
        return [n for n, s in self._servers.items()
                if s.state == "stopped" and s.held and s.spec.enabled]

    def unknown(self, public: str) -> MCPError:
        """The error for a call to ``public`` that cannot be routed (nothing was sent): a
        :class:`ServerUnavailable` when the one server that could own it by the naming
        policy has not listed its tools (disabled, failed, in backoff, or still starting at
        the call's deadline), else :class:`UnknownTool` with close matches and, in its
        ``unavailable``, every server that could have it and has not listed (with its
        state): the caller sees why in :meth:`status`."""
        sole, unasked = not_listed(public, self._servers, self.policy,
                                   lambda name: self._servers[name].tools is not None)
        if sole is not None:
            server = self._servers[sole]
            schedule = server.schedule
            retry_at = schedule.next_start_at \
                if schedule is not None and server.state == "backoff" else None
            error = server.error
            if server.state in ("starting", "stopped"):
                error = "still starting at the call's deadline; nothing was sent"
            return ServerUnavailable(sole, server.state, retry_at, error)
        return UnknownTool(public, self._names.close_matches(public),
                           unavailable={n: self._servers[n].state for n in unasked})

    def is_held(self, name: str) -> bool:
        """True when the server is stopped until a call needs it."""
        server = self._get(name)
        return server.held and server.state == "stopped"

    def allows(self, server: str, tool: str) -> bool:
        """True when ``server``'s include/exclude patterns let ``tool`` through."""
        return self._get(server).filter.allows(tool)

    def server_tools(self, name: str) -> list[Tool]:
        """A server's listed tools that its filter allows (its own names)."""
        return list(self._get(name).allowed)

    def status(self, now: float) -> dict[str, ServerStatus]:
        """Every server's status, in config order."""
        out = {}
        for name, s in self._servers.items():
            schedule = s.schedule
            up = s.state == "running"
            if schedule is not None and up:
                schedule.settle(now)
            out[name] = ServerStatus(
                state=s.state, transport=s.spec.transport,
                attempts=0 if schedule is None else schedule.attempts,
                next_start_at=schedule.next_start_at
                if schedule is not None and s.state == "backoff" else None,
                error=s.error, stderr_tail=s.stderr_tail,
                tools=len(s.allowed),
                incarnation=s.incarnation,
                # what the status says of the current run: only while it is up
                started_at=s.started_at if up or s.state == "starting" else None,
                server_info=s.server_info if up else None,
                protocol_version=s.protocol_version if up else None,
                era=s.era if up else None)
        return out

    # -- editing the set of servers --------------------------------------------------------------

    def add(self, spec: ServerSpec, now: float) -> None:
        """A new server (``stopped``, or ``disabled``); :meth:`due` then starts it.  Raises
        :class:`ConfigError` for a name in use or a host at ``max_servers``."""
        problems = check_spec(spec)
        if problems:
            raise ConfigError(problems)
        if spec.name in self._servers:
            raise ConfigError([ConfigProblem(spec.name, None, "a server of that name exists "
                                             "(use update_server to change it)")])
        if len(self._servers) >= self.max_servers:
            raise ConfigError([ConfigProblem(spec.name, None, f"the host runs at most "
                                             f"{self.max_servers} servers")])
        self._servers[spec.name] = self._record(spec)
        self._sync_config()
        if not spec.enabled:
            self._events.append(ServerEvent(server=spec.name, state="disabled",
                                            previous="stopped", at=now))

    def replace(self, spec: ServerSpec, now: float) -> ServerSpec:
        """Put ``spec`` in place of the server's spec: the server is ``stopped`` (the binding
        stops the old run first) with a fresh schedule; returns the old spec for a roll
        back.  Templates ``spec`` shares with the old spec are forgotten for the values it
        changed.  Raises :class:`ConfigError` for an unusable spec (:func:`check_spec`)."""
        server = self._get(spec.name)
        old = server.spec
        problems = check_spec(spec)
        if problems:
            raise ConfigError(problems)
        spec = forget_changed_templates(old, spec)
        if server.state != "stopped":
            self._move(spec.name, server, "stop", now)
        new = self._record(spec)
        self._new_incarnation(new)  # reports about the old run stay stale
        self._servers[spec.name] = new
        self._sync_config()
        self._rename()
        return old

    def stop(self, name: str, now: float, *, hold: bool = False) -> None:
        """The binding stopped the server's run (host closing, a restart by hand).  With
        ``hold`` the server stays stopped until a call needs it (:meth:`route` then says to
        start it), and its tools stay listed meanwhile: only a running server can be held
        (:class:`LocalProtocolError` otherwise: a failed one waits for a restart by hand, a
        disabled one for enable, a starting one has nothing listed yet), or a stopped one:
        then nothing changes but that it stays stopped until used (a lazy server never
        started, or one closed already: a no-op)."""
        server = self._get(name)
        if hold and server.state == "stopped":
            server.held = True
            return
        if hold and server.state != "running":
            raise LocalProtocolError(f"server {name!r} is {server.state}: only a running "
                                     "server can be closed until next used")
        self._move(name, server, "stop", now)
        self._new_incarnation(server)  # whatever the old run reports now is stale
        if server.schedule is not None:
            server.schedule.reset()
        server.held = hold
        if not hold:
            self._list(server, None)
        self._rename()

    def enable(self, name: str, now: float) -> None:
        """A disabled server may start again (:meth:`due` starts it).  No-op when enabled."""
        server = self._get(name)
        if server.state == "disabled":
            self._move(name, server, "enable", now)
            if server.schedule is not None:
                server.schedule.reset()
        if not server.spec.enabled:
            self._set_spec(name, server, enabled=True)

    def disable(self, name: str, now: float) -> None:
        """The server must not run (the binding stops its run)."""
        server = self._get(name)
        server.held = False
        if server.state != "disabled":
            self._move(name, server, "disable", now)
            self._new_incarnation(server)
            self._list(server, None)
        if server.spec.enabled:
            self._set_spec(name, server, enabled=False)
        self._rename()

    def remove(self, name: str) -> ServerSpec:
        """Forget the server (the binding stops its run first); returns its spec."""
        server = self._servers.pop(name, None)
        if server is None:
            raise LocalProtocolError(f"no server is named {name!r}")
        self._stale.discard(name)
        self._sync_config()
        self._rename()
        return server.spec

    def _set_spec(self, name: str, server: _Server, **changes: object) -> None:
        server.spec = replace(server.spec, **changes)  # type: ignore[arg-type]
        self._sync_config()

    def _sync_config(self) -> None:
        self.config = replace(self.config,
                              servers={n: s.spec for n, s in self._servers.items()})
