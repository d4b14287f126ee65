"""The client API of the threads binding: GENERATED from ``_async/_face.py`` by
``.ci/make_face.py``; do not edit (a test fails when it is not current).

:class:`ClientFace` is the face of :class:`mcp_proto_io.threads.Client` and ``HttpClient``: the
same operations and docstrings as the async clients', blocking.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mcp_proto import (
    CallToolResult,
    ClientSession,
    CompleteResult,
    GetPromptResult,
    Implementation,
    LoadedSkill,
    Prompt,
    ReadResourceResult,
    Ready,
    Resource,
    ResourceTemplate,
    Skill,
    SkillContent,
    Task,
    Tool,
    UnknownSkill,
    UrlElicitation,
    UrlElicitationRequired,
    check_skill_size,
    find_skill,
    resolve_skill_path,
    skill_contents_bytes,
    skill_file,
)

from .._client import Operation
from .._handlers import ProgressCallback, StatusCallback

__all__ = ["MAX_URL_ELICITATION_ROUNDS", "ClientFace", "LiveConnection"]

_V = TypeVar("_V")  # the value type of an operation (its handle says it)

#: Times one call is sent again after ``-32042`` (``retry_url_elicitation=True``): a server
#: that keeps asking for new URLs must not keep the call, and the user, in a loop.
MAX_URL_ELICITATION_ROUNDS = 3


class LiveConnection(Protocol):
    """What the face needs of a connection: its session, whether it ended, and a way to send a
    notification."""

    @property
    def session(self) -> ClientSession: ...

    @property
    def closed(self) -> bool: ...

    def notify(self, send: Callable[[ClientSession], None]) -> None: ...


class ClientFace:
    """The operations of an MCP client, over whatever connection the class below provides."""

    # -- what the class below provides -------------------------------------------------------

    _conn: LiveConnection | None  # the connection of the last call (None: none yet)

    @property
    def _info(self) -> Ready:
        """What the handshake (or the discovery) said."""
        raise NotImplementedError

    def _live(self) -> LiveConnection:
        """The live connection (connecting, or reconnecting after a death, as needed)."""
        raise NotImplementedError

    def _run(self, timeout: float | None, op: Operation[_V],
             on_progress: ProgressCallback | None = None,
             on_status: StatusCallback | None = None) -> _V:
        """Start ``op(session, now, total)`` on the live connection and return its value."""
        raise NotImplementedError

    def _offer_url(self, elicitation: UrlElicitation) -> str | None:
        """The host's answer to a URL elicitation a ``-32042`` named (None: no handler)."""
        raise NotImplementedError

    def _elicitations_done(self, ids: list[str], timeout: float) -> bool:
        """Wait until the server completed every one of ``ids``; False after ``timeout``."""
        raise NotImplementedError

    _retry_url_elicitation: bool
    _timeout: float

    # -- what the handshake said -------------------------------------------------------------

    @property
    def server_info(self) -> Implementation:
        return self._info.server_info

    @property
    def protocol_version(self) -> str:
        return self._info.protocol_version

    @property
    def era(self) -> str:
        """``"modern"`` (2026-07-28, stateless) or ``"legacy"`` (handshake era)."""
        return self._info.era

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities."""
        return self._info.capabilities

    @property
    def instructions(self) -> str | None:
        return self._info.instructions

    # -- operations ----------------------------------------------------------------------------

    def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """Every tool of the server, all pages followed.  Raises the errors of any call."""
        return self._run(timeout, lambda s, now, t: s.list_tools(now=now, timeout=t))

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                  timeout: float | None = None, idle_timeout: float | None = None,
                  on_progress: ProgressCallback | None = None,
                  task: bool | None = None, task_ttl: float | None = None,
                  on_task_status: StatusCallback | None = None) -> CallToolResult:
        """Call a tool and wait for its result.

        A result with ``is_error`` True is returned, not raised: it is the tool's answer.
        Raises (all :class:`MCPError`; a call is never replayed, the caller decides):

        - :class:`RpcError`: the server refused the call (unknown tool, bad arguments).
        - :class:`RequestTimeout`: ``timeout`` seconds in total, or ``idle_timeout`` without
          a response or progress; the server is told to cancel.  The tool may have run.
        - :class:`ServerExited` (HTTP: :class:`SessionExpired`): the server ended (forgot
          the session) while the call was in flight.  It may have run on the server.
        - :class:`ConnectionClosed`: this client was closed, by its caller, before or during
          the call; nothing else raises the plain class.
        - :class:`NotSent`: a Host's server client only: its run ended before the request
          was written, so nothing was sent (the Host routes its own calls again).
        - :class:`RemoteProtocolError` (:class:`MessageTooLarge` among them): the answer to
          this call broke the protocol or was over the size limit; only this call fails.
        - :class:`TaskCancelled` or the task's error: a call that ran as a task.
        - :class:`UrlElicitationRequired` (-32042, 2025-11-25): the server needs the user to
          open URLs first.  Each is offered to ``on_url_elicitation`` first, in order, until
          the user answers one other than ``"accept"`` (the answers in ``actions``); with
          ``retry_url_elicitation=True`` the call is sent again once the user accepted all
          and the server said each is complete (at most
          :data:`MAX_URL_ELICITATION_ROUNDS` times); otherwise the caller retries.
        - When this call starts the server (the first call, or the next one after an exit):
          what :meth:`connect` raises; over HTTP also :class:`AuthorizationError` subclasses.
        - :class:`LocalProtocolError`: a misuse (a call from a callback that would deadlock,
          a client of another event loop, arguments that are not a JSON object).

        ``on_progress`` gets each :class:`Progress` (threads: on whichever thread reads the
        answers, over stdio any waiting caller's or the reader thread's; asyncio and trio: a
        function, or an async function awaited in arrival order).  In an async
        client, cancelling the awaiting task cancels the call on the server too.

        A call may run as a task (section 9): in 2025-11-25 when the tool requires it, or
        allows it and ``task`` is True (``task_ttl`` seconds of retention asked); in
        2026-07-28 when the server decides.  It still returns the tool's result, polling the
        task meanwhile; ``on_task_status`` gets each :class:`TaskStatus` (its ``task.task_id``
        can be kept to :meth:`resume_task` after a restart).  The task's failure raises its
        error, a cancelled task :class:`TaskCancelled`; a timeout (and, in an async client,
        cancelling the awaiting task) sends ``tasks/cancel``.
        """
        conn = self._conn  # the fast path: a live connection that knows the tool
        if (conn is None or conn.closed or conn.session.task_support_unknown(name)) \
                and self._live().session.task_support_unknown(name):
            self.list_tools(timeout=timeout)  # TK-01: learn whether it must be a task
        rounds = 0
        while True:
            try:
                return self._run(
                    timeout,
                    lambda s, now, t: s.call_tool(name, arguments, now=now, timeout=t,
                                                  idle_timeout=idle_timeout,
                                                  progress=on_progress is not None,
                                                  task=task, task_ttl=task_ttl),
                    on_progress, on_task_status)
            except UrlElicitationRequired as exc:
                rounds += 1
                if not self._url_required(exc, rounds, timeout):
                    raise

    def _url_required(self, exc: UrlElicitationRequired, rounds: int,
                      timeout: float | None) -> bool:
        """A call got ``-32042``: offer each URL elicitation it names to the host's handler,
        in order (their answers go in ``exc.actions``), until one is not accepted: the call
        cannot go on then, and the user is asked nothing more.  True when the call is to be
        sent again: the client retries (``retry_url_elicitation``), the user accepted every
        one, the server said each is complete within ``timeout``, and the rounds are not used
        up."""
        if not exc.elicitations:
            return False
        for elicitation in exc.elicitations:
            action = self._offer_url(elicitation)
            if action is None:
                return False
            if elicitation.elicitation_id is not None:
                exc.actions[elicitation.elicitation_id] = action
            if action != "accept":
                return False
        if not (self._retry_url_elicitation
                and rounds <= MAX_URL_ELICITATION_ROUNDS):
            return False
        ids = [e.elicitation_id for e in exc.elicitations if e.elicitation_id is not None]
        return self._elicitations_done(ids, self._timeout if timeout is None else timeout)

    def resume_task(self, task_id: str, *, timeout: float | None = None,
                    on_task_status: StatusCallback | None = None) -> CallToolResult:
        """Wait for a tool call's task another client started (its id kept across a restart):
        polls it to the end and returns the tool's result.  Raises as :meth:`call_tool`,
        :class:`TaskNotFound` when the server no longer knows it, and
        :class:`LocalProtocolError` if the server has no tasks."""
        return self._run(
            timeout, lambda s, now, t: s.resume_task(task_id, now=now, timeout=t),
            None, on_task_status)

    def list_tasks(self, *, timeout: float | None = None) -> list[Task]:
        """The server's tasks (2025-11-25 ``tasks/list``, every page)."""
        return self._run(timeout, lambda s, now, t: s.list_tasks(now=now, timeout=t))

    def get_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """A task as the server describes it now (one ``tasks/get``)."""
        return self._run(
            timeout, lambda s, now, t: s.get_task(task_id, now=now, timeout=t))

    def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task | None:
        """Ask the server to cancel a task: the final task (2025-11-25) or None (2026, an
        acknowledgement).  :class:`RpcError` for a terminal or unknown task."""
        return self._run(
            timeout, lambda s, now, t: s.cancel_task(task_id, now=now, timeout=t))

    def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        """Every resource of the server, all pages followed."""
        return self._run(timeout,
                         lambda s, now, t: s.list_resources(now=now, timeout=t))

    def list_resource_templates(self, *, timeout: float | None = None
                                ) -> list[ResourceTemplate]:
        """Every resource template of the server, all pages followed."""
        return self._run(
            timeout, lambda s, now, t: s.list_resource_templates(now=now, timeout=t))

    def read_resource(self, uri: str, *,
                      timeout: float | None = None) -> ReadResourceResult:
        """Read a resource.  Raises :class:`RpcError` for an unknown one."""
        return self._run(
            timeout, lambda s, now, t: s.read_resource(uri, now=now, timeout=t))

    def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        """Every prompt of the server, all pages followed."""
        return self._run(timeout, lambda s, now, t: s.list_prompts(now=now, timeout=t))

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                   timeout: float | None = None) -> GetPromptResult:
        """A prompt, with ``arguments`` filled in."""
        return self._run(
            timeout, lambda s, now, t: s.get_prompt(name, arguments, now=now, timeout=t))

    def list_skills(self, *, timeout: float | None = None) -> list[Skill]:
        """Every skill the server lists (SEP-2640 ``skills/list``, all pages): name,
        description, frontmatter and files (size and digest) as listed; nothing is read.
        ``[]`` when the server did not declare the skills extension.  An invalid entry is left
        out (a :class:`BadMessage` reports it); a listing may be partial (:meth:`get_skill`)."""
        return self._run(timeout, lambda s, now, t: s.list_skills(now=now, timeout=t))

    def get_skill(self, uri: str, *, timeout: float | None = None) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``), listed or
        not.  Raises :class:`RpcError` (-32602) when the server serves no skill there,
        :class:`LocalProtocolError` without the extension."""
        return self._run(timeout,
                         lambda s, now, t: s.get_skill(uri, now=now, timeout=t))

    def read_skill(self, skill: Skill | str, *,
                   timeout: float | None = None) -> LoadedSkill:
        """Load a skill: read its ``SKILL.md`` (only now: never at listing), check its size
        and digest against the entry, parse its frontmatter and check it field by field.

        ``skill`` is an entry, or a name or URI looked up in :meth:`list_skills` (a URI not
        listed is confirmed with :meth:`get_skill`).  Raises :class:`UnknownSkill`,
        :class:`AmbiguousSkill` (a name several listed skills share: pass the URI),
        :class:`SkillTooLarge` (over the extension's limits), a
        :class:`SkillVerificationError` (:class:`SkillSizeMismatch`,
        :class:`SkillDigestMismatch`, :class:`SkillFrontmatterMismatch` naming the field):
        the content is not used; refresh the entry (:meth:`get_skill`) to recover from a
        stale one."""
        entry = self._skill_entry(skill, timeout)
        return LoadedSkill.of(self.read_skill_file(entry, entry.uri, timeout=timeout))

    def read_skill_file(self, skill: Skill | LoadedSkill, path: str, *,
                        timeout: float | None = None) -> SkillContent:
        """Read one file of a skill: ``path`` relative to its root (``references/FORMS.md``)
        or its URI, only if the entry lists it, checked against the entry's size and digest
        before anything is returned (a dynamic skill's, which has no digests, within the
        extension's size limit).  Nothing is read of a skill over the extension's limits.
        Raises :class:`SkillTooLarge` (over the limits), :class:`SkillFileNotListed`
        (unlisted: a verification failure), :class:`InvalidSkillPath` (outside the skill),
        :class:`SkillSizeMismatch`, :class:`SkillDigestMismatch`, :class:`SkillFileError`
        (no content for the URI, or a blob longer than the listed size) and the errors of
        :meth:`read_resource`."""
        entry = skill.skill if isinstance(skill, LoadedSkill) else skill
        check_skill_size(entry)
        if entry.dynamic:
            uri, size = resolve_skill_path(entry, path), None
        else:
            listed = skill_file(entry, path)
            uri, size = listed.uri, listed.size
        result = self.read_resource(uri, timeout=timeout)
        return SkillContent.read(entry, uri,
                                 skill_contents_bytes(result, uri, expected_size=size))

    def read_skill_directory(self, uri: str, *,
                             timeout: float | None = None) -> list[Resource]:
        """The children of a directory resource (``resources/directory/read``, all pages):
        a live view that may differ from a skill's entry, which stays authoritative for what
        may be read.  Raises :class:`LocalProtocolError` unless the server declared
        ``directoryRead``."""
        return self._run(timeout,
                         lambda s, now, t: s.read_directory(uri, now=now, timeout=t))

    def _skill_entry(self, skill: Skill | str, timeout: float | None) -> Skill:
        if isinstance(skill, Skill):
            return skill
        listed = self.list_skills(timeout=timeout)
        try:
            return find_skill(listed, skill)
        except UnknownSkill:
            if "://" not in skill:
                raise
        return self.get_skill(skill, timeout=timeout)  # a URI the listing left out

    def complete(self, ref: dict[str, Any], argument_name: str, argument_value: str, *,
                 context_arguments: dict[str, str] | None = None,
                 timeout: float | None = None) -> CompleteResult:
        """Completions for an argument of a prompt or a resource template (``ref``)."""
        return self._run(
            timeout, lambda s, now, t: s.complete(ref, argument_name, argument_value,
                                                  context_arguments=context_arguments,
                                                  now=now, timeout=t))

    def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Updates of a resource arrive as :class:`ResourceUpdated` notifications."""
        self._run(timeout, lambda s, now, t: s.subscribe(uri, now=now, timeout=t))

    def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Undo :meth:`subscribe`."""
        self._run(timeout, lambda s, now, t: s.unsubscribe(uri, now=now, timeout=t))

    def set_logging_level(self, level: str, *, timeout: float | None = None) -> None:
        """The least severe log level the server should send (RFC 5424 names)."""
        self._run(timeout,
                  lambda s, now, t: s.set_logging_level(level, now=now, timeout=t))

    def ping(self, *, timeout: float | None = None) -> None:
        """A round trip to the server."""
        self._run(timeout, lambda s, now, t: s.ping(now=now, timeout=t))

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None) -> dict[str, Any]:
        """Any request the typed methods do not cover; returns the raw result object."""
        return self._run(
            timeout, lambda s, now, t: s.send_request(method, params, now=now, timeout=t))

    def notify_roots_changed(self) -> None:
        """Tell the server the roots changed; it will ask for them again."""
        self._live().notify(lambda session: session.notify_roots_list_changed())
