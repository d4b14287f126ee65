"""The threads Host's resources and prompts: GENERATED from
``_asynccatalog.py`` by ``.ci/make_host.py``; do not edit (a test fails when it is not
current).

:class:`CatalogBase` is between :class:`mcp_proto_io.host._sync.HostBase` and
:class:`mcp_proto_io.threads.Host`: the async Host's resources and prompts, blocking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from mcp_proto import (
    GetPromptResult,
    LoadedSkill,
    ReadResourceResult,
    RequestTimeout,
    SkillContent,
    UnknownSkill,
)
from mcp_proto.host import (
    HostPrompt,
    HostResource,
    HostResourceTemplate,
    HostSkill,
    ServerUnavailable,
    UnknownPrompt,
    UnknownResource,
)

# -- the client side (the threads Host's, from _async.py's block) --
from .._sync import ClientBase as _ClientBase
from ._common import LIFECYCLE, failure
from ._sync import HostBase

__all__ = ["CatalogBase"]

#: What each listing asks a server, and the capability it needs (skills: the extension,
#: which a server without it answers with no skills and no request).
_CAPABILITY = {"resources": "resources", "templates": "resources", "prompts": "prompts",
               "skills": "extensions"}


class CatalogBase(HostBase):
    """The Host's resources and prompts (a subclass of the Host's moves, on any runtime)."""

    def _until(self, timeout: float | None) -> float:
        """The deadline of a call of ``timeout`` seconds (None: the host's), from now."""
        with self._guard:
            self._check_open()
            return self._clock() + (self._core.timeout if timeout is None else timeout)

    def _left(self, until: float, method: str, timeout: float | None) -> float:
        """Seconds left before ``until``; :class:`~mcp_proto.RequestTimeout` (nothing sent)
        when none are."""
        with self._guard:
            left = until - self._clock()
            if left <= 0:
                raise RequestTimeout(method, self._core.timeout if timeout is None
                                     else timeout, "total")
            return left

    def _fetch(self, kind: str, client: _ClientBase, timeout: float) -> Any:
        if kind == "resources":
            return client.list_resources(timeout=timeout)
        if kind == "templates":
            return client.list_resource_templates(timeout=timeout)
        if kind == "skills":
            return client.list_skills(timeout=timeout)
        return client.list_prompts(timeout=timeout)

    def _fetch_one(self, kind: str, name: str, client: _ClientBase, until: float,
                   answered: set[tuple[str, str]],
                   pending: set[tuple[str, str]]) -> None:
        try:
            value = self._fetch(kind, client, max(0.0, until - self._clock()))
        except Exception as exc:  # skipped, and said: the other servers still answer
            with self._guard:
                error = failure(exc, self._redactor(name))[0]
                if not isinstance(exc, RequestTimeout) and not self._catalog.known(kind, name):
                    self._catalog.listed(kind, name, ())  # it answered: it has none to give
            LIFECYCLE.warning("server %r: listing %s failed: %s", name, kind, error,
                              extra={"mcp_server": name})
        else:
            with self._guard:
                self._catalog.listed(kind, name, value)
                answered.add((kind, name))
        finally:
            with self._guard:
                pending.discard((kind, name))

    def _list_each(self, kinds: Sequence[str], names: Sequence[str] | None,
                   until: float, done: Callable[[], bool] | None = None
                   ) -> dict[str, list[str]]:
        """List each of ``kinds`` (``resources``, ``templates``, ``prompts``) on every server
        among ``names`` (None: all) that declares the capability, each as soon as it is
        running (so one still starting never holds back the others), until ``until`` (the
        host's clock) or, sooner, until ``done()`` (guard held) is true.  Starts the servers
        stopped until used (lazy, or closed until next used) first.  Each answer is kept in
        the catalog as it comes; a running server without the capability is kept as having
        none.  Returns, by kind, the servers that answered in this call (config order)."""
        with self._guard:
            self._check_open()
            now = self._clock()
            for name in self._core.held():
                if names is None or name in names:
                    self._begin(name, now)
        self._dispatch()
        answered: set[tuple[str, str]] = set()
        pending: set[tuple[str, str]] = set()
        asked: set[str] = set()
        while True:
            with self._guard:
                order = self._core.names()
                now = self._clock()
                todo = [n for n in order if (names is None or n in names) and n not in asked]
                for name in todo if now < until and not self._closed else ():
                    client = self._listable(name)
                    if client is None:  # starting (asked once it runs), or down
                        continue
                    asked.add(name)
                    for kind in kinds:
                        if _CAPABILITY[kind] not in client.capabilities:
                            self._catalog.listed(kind, name, ())  # this run has none
                            continue
                        pending.add((kind, name))
                        self._spawn(f"mcp-proto-host-{kind}-{name}", functools.partial(
                            self._fetch_one, kind, name, client, until, answered, pending))
                starting = any(n not in asked and self._core.state(n) == "starting"
                               for n in todo)
                if self._closed or now >= until or not (pending or starting) \
                        or (done is not None and done()):
                    return {kind: [n for n in order if (kind, n) in answered]
                            for kind in kinds}
                changed = self._changed
            self._rt.wait_event(changed, until - now)

    def _listable(self, name: str) -> _ClientBase | None:
        """The client of ``name`` when it is running (guard held)."""
        run = self._runs.get(name)
        if run is None or self._core.state(name) != "running":
            return None
        return run.client

    def _states(self, names: Sequence[str]) -> dict[str, str]:
        """Each of ``names``'s state (guard held)."""
        return {name: str(self._core.state(name)) for name in names}

    # -- resources ----------------------------------------------------------------------------

    def list_resources(self, *, timeout: float | None = None) -> list[HostResource]:
        """Every resource of every server that has resources, in config order (a resource
        keeps its own URI).  Starts the servers not started yet (lazy, or closed until next
        used) and lists each as soon as it runs.  ``timeout`` (seconds; None: the host's)
        bounds the wait for servers still starting and the listings: a server still
        starting then, or whose listing failed (logged) or did not answer in time, is left
        out; :meth:`servers` shows which and why."""
        answered = self._list_each(("resources",), None, self._until(timeout))
        with self._guard:
            return self._catalog.resources(answered["resources"])

    def list_resource_templates(self, *, timeout: float | None = None
                                ) -> list[HostResourceTemplate]:
        """Every resource template of every server that has resources, in config order;
        ``timeout`` and the servers left out as for :meth:`list_resources`."""
        answered = self._list_each(("templates",), None, self._until(timeout))
        with self._guard:
            return self._catalog.templates(answered["templates"])

    def read_resource(self, uri: str, *, server: str | None = None,
                      timeout: float | None = None) -> ReadResourceResult:
        """Read ``uri`` on the server that listed it, else on the one server whose template
        matches it (resources and templates are listed first, together, if no listing has
        it: each server as soon as it runs, until one has it), or on ``server`` when given
        (started first if lazy).  ``timeout`` bounds it all (None: the host's).  Raises
        :class:`~mcp_proto.host.UnknownResource` when no one server has it (its
        ``servers`` then names the candidates: pass ``server=``; its ``unavailable`` the
        servers that were not listed, with their states: still starting, failed ...),
        :class:`~mcp_proto.host.ServerUnavailable` for a server that is not running,
        :class:`~mcp_proto.RequestTimeout` when the time ran out before the read was sent,
        and what the server's client raises (:class:`~mcp_proto.RpcError` for a URI it
        does not know)."""
        until = self._until(timeout)
        listed = False
        while server is None:
            with self._guard:
                self._check_open()
                servers = self._core.names()
                try:
                    server = self._catalog.resource_server(uri, servers)
                except UnknownResource as exc:
                    if exc.servers:
                        raise
                    if listed or self._clock() >= until:
                        unasked = self._catalog.resources_unasked(servers)
                        raise UnknownResource(uri, unavailable=self._states(unasked)) from None
            if server is None:
                self._list_each(("resources", "templates"), None, until,
                                functools.partial(self._resolves, uri))
                listed = True
        client = self._in_use(server, timeout, until)
        return client.read_resource(
            uri, timeout=self._left(until, "resources/read", timeout))

    def _resolves(self, uri: str) -> bool:
        """Whether a read of ``uri`` has its one server now (guard held)."""
        try:
            self._catalog.resource_server(uri, self._core.names())
        except UnknownResource:
            return False
        return True

    # -- prompts ------------------------------------------------------------------------------

    def list_prompts(self, *, timeout: float | None = None) -> list[HostPrompt]:
        """Every prompt of every server that has prompts, under public names by the host's
        naming policy (as tools), sorted by public name.  Starts the servers not started yet
        (lazy, or closed until next used) and lists each as soon as it runs; ``timeout``
        and the servers left out as for :meth:`list_resources`."""
        answered = self._list_each(("prompts",), None, self._until(timeout))
        with self._guard:
            return [p for p in self._catalog.prompts(self._core.names())
                    if p.server in answered["prompts"]]

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   timeout: float | None = None) -> GetPromptResult:
        """The prompt whose public name is ``name``, with ``arguments`` filled in.  A name
        no listing has lists the prompts of the servers that may own it first (starting
        them if lazy; each as soon as it runs, until one has it), then the rest, then every
        server's again once; ``timeout`` bounds it all (None: the host's).  Raises
        :class:`~mcp_proto.host.UnknownPrompt` (with close matches, and in ``unavailable``
        the servers that could have it but were not listed, with their states; nothing
        was sent), :class:`~mcp_proto.host.ServerUnavailable` (the one server that could
        own it by the naming policy has not listed its prompts: failed, disabled, still
        starting, or not answering at the deadline; nothing was sent),
        :class:`~mcp_proto.RequestTimeout` (no time left to send it), and what the server's
        client raises."""
        until = self._until(timeout)
        refreshed = False
        tried: set[str] = set()  # listed in this call (answered or not): never twice
        while True:
            with self._guard:
                self._check_open()
                servers = self._core.names()
                try:
                    server, own = self._catalog.prompt_route(name, servers)
                    break
                except UnknownPrompt:
                    pass
                todo = self._catalog.prompt_candidates(name, servers, tried)
                if not todo and not refreshed:  # every candidate listed: list all again
                    refreshed = True
                    todo = [s for s in servers if s not in tried]
                if not todo or self._clock() >= until:
                    raise self._prompt_error(name, servers)
            tried.update(todo)
            self._list_each(("prompts",), todo, until,
                            functools.partial(self._prompt_routes, name))
        client = self._in_use(server, timeout, until)
        return client.get_prompt(own, arguments,
                                 timeout=self._left(until, "prompts/get", timeout))

    def _prompt_routes(self, name: str) -> bool:
        """Whether the prompt ``name`` has its server now (guard held)."""
        try:
            self._catalog.prompt_route(name, self._core.names())
        except UnknownPrompt:
            return False
        return True

    def _prompt_error(self, name: str, servers: Sequence[str]
                      ) -> ServerUnavailable | UnknownPrompt:
        """The error for a prompt no listing has (guard held): :class:`ServerUnavailable`
        for the one server that could own it and has not listed its prompts, else
        :class:`UnknownPrompt` naming the servers not asked."""
        sole, unasked = self._catalog.prompt_unasked(name, servers)
        if sole is None:
            return self._catalog.unknown_prompt(name, servers, self._states(unasked))
        status = self._core.status(self._clock())[sole]
        reason: str | None
        if status.state == "starting":
            reason = "still starting at the call's deadline; nothing was sent"
        elif status.state == "running":
            reason = "its prompts were not listed before the call's deadline; nothing was sent"
        else:
            reason = status.error
        return ServerUnavailable(sole, status.state, status.next_start_at, reason)

    # -- skills (SEP-2640) --------------------------------------------------------------------

    def list_skills(self, *, timeout: float | None = None) -> list[HostSkill]:
        """Every skill of every server that declares the skills extension, under public names
        (the server's name, the naming policy's separator, the skill's name; where one server
        lists two skills of one name, each by its path), sorted.  Nothing is read: a skill's
        files are read when it is loaded (:meth:`read_skill`).  Starts and lists as
        :meth:`list_resources`; ``timeout`` and the servers left out as there."""
        answered = self._list_each(("skills",), None, self._until(timeout))
        with self._guard:
            return self._catalog.skills(answered["skills"])

    def _skill(self, name: str, until: float) -> HostSkill:
        """The listed skill whose public name is ``name`` (every server listed first when no
        listing has it); :class:`~mcp_proto.UnknownSkill` when none has."""
        for attempt in range(2):
            with self._guard:
                self._check_open()
                found = self._catalog.skill(name, self._core.names())
            if found is not None:
                return found
            if attempt == 0:
                self._list_each(("skills",), None, until)
        raise UnknownSkill(name, f"no server lists a skill named {name[:200]!r}")

    def read_skill(self, name: str, *, timeout: float | None = None) -> LoadedSkill:
        """Load the skill whose public name is ``name`` from the server that listed it (and
        no other): its ``SKILL.md`` read now, its size, digest and frontmatter checked
        against the entry.  Raises :class:`~mcp_proto.UnknownSkill`, the
        :class:`~mcp_proto.SkillVerificationError` subclasses and
        :class:`~mcp_proto.SkillTooLarge` of the client's :meth:`read_skill`, and what the
        server's client raises."""
        return (self._load_skill(name, timeout))[1]

    def _load_skill(self, name: str, timeout: float | None
                    ) -> tuple[HostSkill, LoadedSkill]:
        until = self._until(timeout)
        skill = self._skill(name, until)
        client = self._in_use(skill.server, timeout, until)
        return skill, client.read_skill(
            skill.skill, timeout=self._left(until, "resources/read", timeout))

    def read_skill_file(self, name: str, path: str, *,
                        timeout: float | None = None) -> SkillContent:
        """One file of the skill ``name`` (``path`` relative to its root, or its URI), read
        from the skill's own server only if its entry lists the file, checked against the
        entry's size and digest.  Raises as the client's :meth:`read_skill_file`."""
        until = self._until(timeout)
        skill = self._skill(name, until)
        client = self._in_use(skill.server, timeout, until)
        return client.read_skill_file(skill.skill, path,
                                      timeout=self._left(until, "resources/read",
                                                         timeout))
