"""The Skills extension's requests (SEP-2640): what the session asks and how it reads answers.

``skills/list`` (every page; an invalid entry is left out and reported, never allowed to hide
the others), ``skills/get`` (one entry by the URI of its ``SKILL.md``; the answer must echo
it) and ``resources/directory/read`` (a directory's children, every page; only against a
server that declared ``directoryRead``).  The checks of the entries themselves and of the
files read later are the records' (:mod:`mcp_proto._skills`); the bindings compose them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import LocalProtocolError, MCPError, RemoteProtocolError
from .._events import RequestHandle
from .._skills import SKILLS_EXTENSION, Skill, parse_skill
from .._types import Resource, parse_resource
from ._outbox import Wire
from ._results import Operations
from ._state import State

__all__ = ["SkillOperations", "directory_readable", "get_skill_parser", "skill_entry_parser",
           "skills_settings"]


def skills_settings(server_capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """The server's settings of the Skills extension (an object), or None when it did not
    declare the extension (then the client issues no skills request)."""
    extensions = server_capabilities.get("extensions")
    if type(extensions) is not dict:
        return None
    settings = extensions.get(SKILLS_EXTENSION)
    if settings is None:
        return None
    return settings if type(settings) is dict else {}


def directory_readable(server_capabilities: dict[str, Any]) -> None:
    """Raises :class:`LocalProtocolError` unless the server declared ``directoryRead: true``
    (clients MUST NOT call ``resources/directory/read`` otherwise)."""
    settings = skills_settings(server_capabilities)
    if settings is None or settings.get("directoryRead") is not True:
        raise LocalProtocolError("the server did not declare the skills extension's "
                                 "directoryRead setting; resources/directory/read is not "
                                 "available")


def skill_entry_parser(report: Callable[[MCPError], None]) -> Callable[[object], Skill | None]:
    """``skills/list``'s item parser: a :class:`Skill`, or None for an invalid entry, which
    ``report`` gets (a host MUST NOT load it, and the other entries stay usable)."""

    def parse(item: object) -> Skill | None:
        try:
            return parse_skill(item, where="skills/list entry")
        except RemoteProtocolError as exc:
            report(exc)
            return None

    return parse


def get_skill_parser(uri: str) -> Callable[[dict[str, Any]], Skill]:
    """``skills/get``'s result parser for the skill at ``uri``: raises
    :class:`RemoteProtocolError` when ``skill`` is missing, invalid, or names another URI."""

    def parse(result: dict[str, Any]) -> Skill:
        skill = parse_skill(result.get("skill"), where="skills/get result")
        if skill.uri != uri:
            raise RemoteProtocolError(f"skills/get for {uri[:200]!r} answered with the skill "
                                      f"{skill.uri[:200]!r}")
        return skill

    return parse


class SkillOperations:
    """The Skills extension's operations of :class:`ClientSession` (which provides what this
    class declares)."""

    __slots__ = ()

    state: State
    server_capabilities: dict[str, Any]
    _op: Operations
    _wire: Wire

    def list_skills(self, *, now: float,
                    timeout: float | None = None) -> RequestHandle[list[Skill]]:
        """Every skill the server lists (``skills/list``, every page; SEP-2640).  Completes
        with ``list[Skill]``: an empty list without asking when the server did not declare
        the skills extension; an invalid entry is left out and reported as a
        :class:`BadMessage` (a host must not load it).  A listing may be partial: a skill not
        in it can still be had by URI (:meth:`get_skill`)."""
        if self.state is State.READY and skills_settings(self.server_capabilities) is None:
            return self._op.done_now(RequestHandle(self._wire.take_id(), "skills/list"), [])
        return self._op.list_all("skills/list", "skills", skill_entry_parser(self._wire.bad),
                                 "extensions", now, timeout, drops=True)

    def get_skill(self, uri: str, *, now: float,
                  timeout: float | None = None) -> RequestHandle[Skill]:
        """The entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``).  Fails
        with :class:`RpcError` -32602 for a URI the server serves no skill at, and
        :class:`RemoteProtocolError` for an invalid entry.  Raises
        :class:`LocalProtocolError` when the server did not declare the skills extension."""
        if self.state is State.READY and skills_settings(self.server_capabilities) is None:
            raise LocalProtocolError("the server did not declare the skills extension")
        return self._op.request("skills/get", {"uri": uri}, now, timeout, get_skill_parser(uri))

    def read_directory(self, uri: str, *, now: float,
                       timeout: float | None = None) -> RequestHandle[list[Resource]]:
        """The direct children of the directory resource ``uri`` (``resources/directory/
        read``, every page): files and subdirectories (``mimeType`` ``inode/directory``).
        Raises :class:`LocalProtocolError` unless the server declared the skills extension
        with ``directoryRead``; fails with :class:`RpcError` -32602 for a URI that is not a
        directory."""
        if self.state is State.READY:
            directory_readable(self.server_capabilities)
        return self._op.list_all("resources/directory/read", "resources", parse_resource,
                                 "extensions", now, timeout, params={"uri": uri})
