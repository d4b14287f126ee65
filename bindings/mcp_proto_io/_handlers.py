"""The host's answers to server requests, shared by every binding.

Which handler serves which ``ServerRequest`` method, and which capabilities the handlers
declare.  What goes on the wire (results, error codes) is the core's decision:
``ClientSession.respond_with`` and ``client_capabilities``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_proto import (
    Event,
    Progress,
    Root,
    ServerRequest,
    TaskStatus,
    UrlElicitation,
    client_capabilities,
    parse_url_elicitation,
    url_elicitation_result,
)

__all__ = ["Handler", "Handlers", "NotificationCallback", "ProgressCallback", "RootsSource",
           "StatusCallback", "StderrCallback", "TraceCallback", "UrlElicitationHandler"]

Handler = Callable[[dict[str, Any]], Any]
"""Takes the request's params; returns the result object (or an awaitable of it, in the async
bindings); raises ``RpcError`` to answer with a specific error."""
ProgressCallback = Callable[[Progress], Any]
StatusCallback = Callable[[TaskStatus], Any]
NotificationCallback = Callable[[Event], Any]
StderrCallback = Callable[[str], Any]
"""Takes one line of a stdio server's stderr (decoded, no newline, secrets redacted)."""
TraceCallback = Callable[[str, dict[str, Any]], Any]
"""Takes ``"send"`` or ``"recv"`` and a JSON-RPC message as sent or received (redacted)."""
RootsSource = Sequence[Root] | Callable[[], Sequence[Root] | Awaitable[Sequence[Root]]]
UrlElicitationHandler = Callable[[UrlElicitation], Any]
"""Takes a :class:`UrlElicitation` (the server's name, its message, the full URL, its origin
and host shown apart, the id); returns ``"accept"`` (the user consents to open the URL, out
of band: the library never opens it), ``"decline"`` or ``"cancel"`` (or an awaitable of one,
in the async bindings)."""


@dataclass(frozen=True, slots=True)
class Handlers:
    """What the host gave the client to answer the server with."""

    sampling: Handler | None = None
    elicitation: Handler | None = None
    roots: RootsSource | None = None
    url_elicitation: UrlElicitationHandler | None = None
    server: str = ""
    """The name a :class:`UrlElicitation` shows as the server's (the client's label)."""

    def capabilities(self) -> dict[str, Any]:
        """Declaring a handler declares its capability (each elicitation mode apart)."""
        return client_capabilities(sampling=self.sampling is not None,
                                   elicitation=self.elicitation is not None,
                                   roots=self.roots is not None,
                                   url_elicitation=self.url_elicitation is not None)

    def url(self, params: dict[str, Any]) -> UrlElicitation:
        """The URL elicitation ``params`` ask for, named by this client's server.  Raises
        :class:`InvalidUrlElicitation` (answered as an error)."""
        return parse_url_elicitation(params, require_id=False).with_server(self.server)

    def call(self, request: ServerRequest) -> Any:
        """Run the handler for ``request`` and return what it returns (raises what it raises).

        The core only passes on requests whose capability was declared, so a handler exists.
        """
        method = request.method
        if method == "sampling/createMessage" and self.sampling is not None:
            return self.sampling(request.params)
        if method == "elicitation/create":
            if request.params.get("mode") == "url" and self.url_elicitation is not None:
                action = self.url_elicitation(self.url(request.params))
                if inspect.isawaitable(action):
                    return _url_result_later(action)
                return url_elicitation_result(action)
            if self.elicitation is not None:
                return self.elicitation(request.params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots() if callable(self.roots) else self.roots
            if inspect.isawaitable(roots):  # an async roots function (async bindings)
                return _roots_result_later(roots)
            return _roots_result(roots)
        raise LookupError(f"no handler for {method}")  # unreachable: see the docstring


def _roots_result(roots: Sequence[Root]) -> dict[str, Any]:
    return {"roots": [r.to_wire() for r in roots]}


async def _roots_result_later(roots: Awaitable[Sequence[Root]]) -> dict[str, Any]:
    return _roots_result(await roots)


async def _url_result_later(action: Awaitable[Any]) -> dict[str, Any]:
    return url_elicitation_result(await action)
