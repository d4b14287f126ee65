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

from mcp_proto import Event, Progress, Root, ServerRequest, TaskStatus, client_capabilities

__all__ = ["Handler", "Handlers", "NotificationCallback", "ProgressCallback", "RootsSource",
           "StatusCallback", "StderrCallback", "TraceCallback"]

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


@dataclass(frozen=True, slots=True)
class Handlers:
    """What the host gave the client to answer the server with."""

    sampling: Handler | None = None
    elicitation: Handler | None = None
    roots: RootsSource | None = None

    def capabilities(self) -> dict[str, Any]:
        """Declaring a handler declares its capability."""
        return client_capabilities(sampling=self.sampling is not None,
                                   elicitation=self.elicitation is not None,
                                   roots=self.roots is not None)

    def call(self, request: ServerRequest) -> Any:
        """Run the handler for ``request`` and return what it returns (raises what it raises).

        The core only passes on requests whose capability was declared, so a handler exists.
        """
        method = request.method
        if method == "sampling/createMessage" and self.sampling is not None:
            return self.sampling(request.params)
        if method == "elicitation/create" and self.elicitation is not None:
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
