"""The host layer's errors about tools and servers (config errors are in ``_spec``)."""

from __future__ import annotations

from .._errors import MCPError

__all__ = ["ServerUnavailable", "UnknownTool"]


class UnknownTool(MCPError, LookupError):
    """No tool has that public name (nothing was sent).  ``close_matches`` lists the public
    names that look like it; check the name against :meth:`Host.list_tools`."""

    def __init__(self, name: str, close_matches: tuple[str, ...] = ()) -> None:
        self.name = name
        self.close_matches = tuple(close_matches)
        hint = f"; did you mean {', '.join(self.close_matches)}?" if self.close_matches else ""
        super().__init__(f"no tool is named {name!r}{hint}")


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
