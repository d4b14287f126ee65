"""The host layer's errors about tools, resources, prompts and servers (config errors are in
``_spec``)."""

from __future__ import annotations

from collections.abc import Mapping

from .._errors import MCPError

__all__ = ["ServerUnavailable", "UnknownPrompt", "UnknownResource", "UnknownTool"]


def _not_asked(unavailable: Mapping[str, str]) -> str:
    """The end of an unknown name's message: ``"; not asked: 'hang' (starting), 'dying'
    (failed)"``, or nothing when every server that could have the name was asked."""
    if not unavailable:
        return ""
    return "; not asked: " + ", ".join(f"{server!r} ({state})"
                                       for server, state in unavailable.items())


class _UnknownName(MCPError, LookupError):
    """No tool or prompt has that public name (nothing was sent): the name, the public names
    that look like it (``close_matches``) and the servers not asked (``unavailable``)."""

    #: What has no such name, for the message ("tool", "prompt").
    kind = "name"

    def __init__(self, name: str, close_matches: tuple[str, ...] = (), *,
                 unavailable: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.close_matches = tuple(close_matches)
        self.unavailable: Mapping[str, str] = dict(unavailable or {})
        hint = f"; did you mean {', '.join(self.close_matches)}?" if self.close_matches else ""
        super().__init__(f"no {self.kind} is named {name!r}{hint}"
                         f"{_not_asked(self.unavailable)}")


class UnknownTool(_UnknownName):
    """No tool has that public name (nothing was sent).  ``close_matches`` lists the public
    names that look like it; check the name against :meth:`Host.list_tools`.

    ``unavailable`` (server -> state, config order) names the servers that could have the
    name but have not listed their tools (``starting``, ``failed``, ``backoff``,
    ``disabled`` ...): the name may be theirs; see ``Host.servers()`` for why, and try
    again once they run."""

    kind = "tool"


class UnknownPrompt(_UnknownName):
    """No prompt has that public name (nothing was sent).  ``close_matches`` lists the public
    names that look like it; check the name against :meth:`Host.list_prompts`.

    ``unavailable`` (server -> state) names the servers that could have the prompt but whose
    prompts were not listed (still starting, failed, in backoff, disabled, or running but
    not answering before the deadline), as for :class:`UnknownTool`."""

    kind = "prompt"


class UnknownResource(MCPError, LookupError):
    """No single server can be chosen for the resource ``uri`` (nothing was sent).

    ``servers`` empty: no server listed it and no server's template matches it (check it
    against :meth:`Host.list_resources` and :meth:`Host.list_resource_templates`).  Several
    ``servers``: each of them lists it (or has a template that matches it); pass
    ``server=`` to choose one.  ``unavailable`` (server -> state) names the servers whose
    resources were not listed (still starting, failed, in backoff, disabled, or running but
    not answering before the deadline): the URI may be theirs; see ``Host.servers()``.
    """

    def __init__(self, uri: str, servers: tuple[str, ...] = (), *,
                 unavailable: Mapping[str, str] | None = None) -> None:
        self.uri = uri
        self.servers = tuple(servers)
        self.unavailable: Mapping[str, str] = dict(unavailable or {})
        if self.servers:
            why = f"{', '.join(self.servers)} all have it; pass server= to choose one"
        else:
            why = "no server listed it and no server's template matches it"
        super().__init__(f"no one server for resource {uri!r}: {why}"
                         f"{_not_asked(self.unavailable)}")


class ServerUnavailable(MCPError):
    """The tool's server cannot take a call now (nothing was sent).

    ``state`` is the server's state (``backoff``, ``failed``, ``disabled``, ``stopped`` ...),
    ``retry_at`` when the host will start it again (the host's clock, seconds; None: not
    scheduled, restart it by hand with ``restart_server``) and ``error`` what ended it.
    """

    def __init__(self, server: str, state: str, retry_at: float | None = None,
                 error: str | None = None) -> None:
        self.server = server
        self.state = state
        self.retry_at = retry_at
        self.error = error
        when = f"; next start in the host's schedule at t={retry_at:.3f}" \
            if retry_at is not None else ""
        why = f" ({error})" if error else ""
        super().__init__(f"server {server!r} is {state}{why}{when}")
