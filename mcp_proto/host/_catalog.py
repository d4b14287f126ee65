"""Resources and prompts across many servers, pure: what each server listed, the public
names of prompts, and which server a ``resources/read`` goes to.

Rules (issue 23 item 3):

- A resource keeps its own URI (URIs are already global names); a read goes to the server
  that listed the URI, else to the one server whose URI template matches it, else nowhere:
  :class:`UnknownResource` names the candidates when there are several (the caller passes
  ``server=``) and none when there are none.  Nothing is ever sent to a guess.
- A prompt gets a public name by the host's :class:`NamePolicy`, as a tool does, from the set
  of ``(server, prompt)`` pairs (never from order); a ``prompts/get`` is routed only through
  the reverse map.
- A server's listing replaces its last one; servers the host no longer has are left out of
  every answer (the binding passes the host's servers).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._skills import Skill
from .._types import Prompt, Resource, ResourceTemplate
from ._errors import UnknownPrompt, UnknownResource
from ._names import NamePolicy, ToolNames, assign_names, not_listed, owner_candidates
from ._skills import HostSkill, host_skills

__all__ = [
    "MAX_TEMPLATE_CACHE",
    "HostCatalog",
    "HostPrompt",
    "HostResource",
    "HostResourceTemplate",
    "template_pattern",
]

#: Compiled URI templates a catalog keeps; past it the cache starts over (a server lists a
#: few dozen templates; thousands mean churn, and compiling again is cheap).
MAX_TEMPLATE_CACHE = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class HostResource:
    """A resource as the host shows it: ``server`` listed it; ``definition`` is the
    server's own record."""

    server: str
    uri: str
    name: str
    definition: Resource


@dataclass(frozen=True, slots=True, kw_only=True)
class HostResourceTemplate:
    """A resource template as the host shows it (a read of a URI it matches goes to
    ``server`` when no server listed that URI)."""

    server: str
    uri_template: str
    name: str
    definition: ResourceTemplate


@dataclass(frozen=True, slots=True, kw_only=True)
class HostPrompt:
    """A prompt as the host shows it: ``name`` is the public name (what the host's
    ``get_prompt`` takes), ``prompt`` the server's own name for it."""

    name: str
    server: str
    prompt: str
    definition: Prompt


# RFC 6570 operators -> what one expression of that operator may expand to.  A simple
# ``{var}`` expansion percent-encodes reserved characters, so it never holds ``/ ? #``;
# ``{+var}`` and ``{#var}`` keep them.
_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")
_OPERATOR_PATTERN = {
    "": r"[^/?#]*",
    "+": r"[^#]*",
    "#": r"(?:#.*)?",
    ".": r"(?:\.[^/?#]*)*",
    "/": r"(?:/[^/?#]*)*",
    ";": r"(?:;[^/?#]*)*",
    "?": r"(?:\?[^#]*)?",
    "&": r"(?:&[^#]*)?",
}


def template_pattern(uri_template: str) -> re.Pattern[str]:
    """A regex matching every URI ``uri_template`` (RFC 6570, levels 1 to 4) can expand to:
    the literal parts exactly, each expression by what its operator may produce.  Lenient
    on purpose (a value's own syntax is the server's to check): used only to find the one
    server a read goes to."""
    out = []
    end = 0
    for m in _EXPRESSION.finditer(uri_template):
        out.append(re.escape(uri_template[end:m.start()]))
        out.append(_OPERATOR_PATTERN[m.group(1)])
        end = m.end()
    out.append(re.escape(uri_template[end:]))
    return re.compile("".join(out), re.DOTALL)


class HostCatalog:
    """The resources, templates and prompts each server listed last, and the routes.

    ``policy`` names prompts (the host's tool naming policy; its reserved names are the
    host's tools', so they do not apply to prompts)."""

    def __init__(self, policy: NamePolicy) -> None:
        self.policy = replace(policy, reserved=frozenset())
        self._resources: dict[str, tuple[Resource, ...]] = {}
        self._templates: dict[str, tuple[ResourceTemplate, ...]] = {}
        self._prompts: dict[str, tuple[Prompt, ...]] = {}
        self._skills: dict[str, tuple[Skill, ...]] = {}
        self._prompt_names: ToolNames | None = None  # None: prompts changed since named
        self._named_for: frozenset[str] = frozenset()  # the servers it named
        self._patterns: dict[str, re.Pattern[str]] = {}

    # -- listings ------------------------------------------------------------------------------

    def resources_listed(self, server: str, resources: Iterable[Resource]) -> None:
        self._resources[server] = tuple(resources)

    def templates_listed(self, server: str, templates: Iterable[ResourceTemplate]) -> None:
        self._templates[server] = tuple(templates)

    def prompts_listed(self, server: str, prompts: Iterable[Prompt]) -> None:
        self._prompts[server] = tuple(prompts)
        self._prompt_names = None

    def skills_listed(self, server: str, skills: Iterable[Skill]) -> None:
        self._skills[server] = tuple(skills)

    def forget(self, server: str) -> None:
        """Drop what ``server`` listed (it was removed, or its new run has not listed)."""
        self._resources.pop(server, None)
        self._templates.pop(server, None)
        self._skills.pop(server, None)
        if self._prompts.pop(server, None) is not None:
            self._prompt_names = None

    def known(self, kind: str, server: str) -> bool:
        """Whether ``server`` listed ``kind`` (``resources``, ``templates``, ``prompts``,
        ``skills``)."""
        return server in self._lists(kind)

    def _lists(self, kind: str) -> dict[str, Any]:
        lists: dict[str, dict[str, Any]] = {
            "resources": self._resources, "templates": self._templates,
            "prompts": self._prompts, "skills": self._skills}
        return lists[kind]

    def listed(self, kind: str, server: str, items: Iterable[Any]) -> None:
        """Keep ``server``'s listing of ``kind`` (replacing its last)."""
        if kind == "resources":
            self.resources_listed(server, items)
        elif kind == "templates":
            self.templates_listed(server, items)
        elif kind == "skills":
            self.skills_listed(server, items)
        else:
            self.prompts_listed(server, items)

    def resources_unasked(self, servers: Sequence[str]) -> list[str]:
        """The servers of ``servers`` whose resources or templates were never listed: a URI
        no listing has may be theirs (what :class:`UnknownResource` ``unavailable`` names)."""
        return [s for s in servers if s not in self._resources or s not in self._templates]

    # -- what the host shows -------------------------------------------------------------------

    def resources(self, servers: Sequence[str]) -> list[HostResource]:
        """The resources of ``servers`` (in that order, each in its listing's order)."""
        return [HostResource(server=s, uri=r.uri, name=r.name, definition=r)
                for s in servers for r in self._resources.get(s, ())]

    def templates(self, servers: Sequence[str]) -> list[HostResourceTemplate]:
        """The resource templates of ``servers`` (in that order)."""
        return [HostResourceTemplate(server=s, uri_template=t.uri_template, name=t.name,
                                     definition=t)
                for s in servers for t in self._templates.get(s, ())]

    def prompt_names(self, servers: Sequence[str]) -> ToolNames:
        """The public names of the prompts of ``servers`` (public -> ``(server, prompt)``)."""
        listed = frozenset(s for s in servers if s in self._prompts)
        names = self._prompt_names
        if names is None or self._named_for != listed:
            listing = {s: [p.name for p in self._prompts[s]] for s in listed}
            names = self._prompt_names = assign_names(listing, self.policy)
            self._named_for = listed
        return names

    def prompts(self, servers: Sequence[str]) -> list[HostPrompt]:
        """The prompts of ``servers`` under their public names, sorted by public name."""
        names = self.prompt_names(servers)
        out = []
        for public, (server, own) in names.items():
            definition = next(p for p in self._prompts[server] if p.name == own)
            out.append(HostPrompt(name=public, server=server, prompt=own,
                                  definition=definition))
        return out

    def skills(self, servers: Sequence[str]) -> list[HostSkill]:
        """The skills of ``servers`` under public names (``server`` + separator + the
        skill's name, or its path where one server lists two of that name), sorted: a
        skill is the pair (server, URI), never its name alone."""
        return host_skills({s: self._skills[s] for s in servers if s in self._skills},
                           self.policy.separator)

    def skill(self, public: str, servers: Sequence[str]) -> HostSkill | None:
        """The skill of ``servers`` whose public name is ``public``, or None."""
        return next((s for s in self.skills(servers) if s.name == public), None)

    # -- where a request goes ------------------------------------------------------------------

    def resource_server(self, uri: str, servers: Sequence[str]) -> str:
        """The one server of ``servers`` a read of ``uri`` goes to: the one that listed it,
        else the one whose template matches it.  Raises :class:`UnknownResource` (with the
        candidates when several have it)."""
        listed = [s for s in servers if any(r.uri == uri for r in self._resources.get(s, ()))]
        if len(listed) == 1:
            return listed[0]
        if listed:
            raise UnknownResource(uri, tuple(listed))
        matching = [s for s in servers
                    if any(self._pattern(t.uri_template).fullmatch(uri)
                           for t in self._templates.get(s, ()))]
        if len(matching) == 1:
            return matching[0]
        raise UnknownResource(uri, tuple(matching))

    def _pattern(self, uri_template: str) -> re.Pattern[str]:
        pattern = self._patterns.get(uri_template)
        if pattern is None:
            if len(self._patterns) >= MAX_TEMPLATE_CACHE:
                self._patterns.clear()
            pattern = self._patterns[uri_template] = template_pattern(uri_template)
        return pattern

    def prompt_route(self, public: str, servers: Sequence[str]) -> tuple[str, str]:
        """``(server, prompt)`` for a public prompt name.  Raises :class:`UnknownPrompt` with
        close matches (list the prompts of the servers that may have it first:
        :meth:`prompt_candidates`)."""
        names = self.prompt_names(servers)
        try:
            return names.resolve(public)
        except KeyError:
            raise UnknownPrompt(public, names.close_matches(public)) from None

    def prompt_candidates(self, public: str, servers: Sequence[str],
                          skip: Collection[str] = ()) -> list[str]:
        """The servers of ``servers`` (less ``skip``: those asked already) whose prompts are
        not listed yet and that may have the prompt ``public``: those whose prefix begins it
        first, then (when all of those are listed or skipped) the rest
        (:func:`owner_candidates`).  Empty: every server that could have it was listed."""
        first, rest = owner_candidates(public, servers, self.policy)
        unlisted = [s for s in first if s not in self._prompts and s not in skip]
        return unlisted or [s for s in rest if s not in self._prompts and s not in skip]

    def prompt_unasked(self, public: str, servers: Sequence[str]) -> tuple[str | None, list[str]]:
        """Who has not listed prompts and could have ``public``: ``(sole, unasked)`` as
        :func:`~mcp_proto.host._names.not_listed` (``sole``: the one server the name must
        be from; the error is then that it is unavailable)."""
        return not_listed(public, servers, self.policy, lambda s: s in self._prompts)

    def unknown_prompt(self, public: str, servers: Sequence[str],
                       unavailable: Mapping[str, str]) -> UnknownPrompt:
        """The :class:`UnknownPrompt` for ``public``: close matches, and ``unavailable``
        (server -> state) the servers not asked."""
        names = self.prompt_names(servers)
        return UnknownPrompt(public, names.close_matches(public), unavailable=unavailable)
