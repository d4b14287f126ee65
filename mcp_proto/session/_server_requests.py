"""Requests from the server to the client, and the host's answers to them.

:class:`ServerRequests` owns the table of questions the host has been asked and not yet
answered: real server requests of the handshake era (``sampling/createMessage``,
``elicitation/create``, ``roots/list``), and the synthetic ones the session asks on behalf of an
MRTR round or a 2026-07-28 task (their ids are strings it makes up).  It answers ``ping`` and
refuses what the client did not declare (:func:`refusal`), so the host only ever sees requests
it can serve.
"""

from __future__ import annotations

from typing import Any

from .._errors import LocalProtocolError
from .._events import ServerRequest, ServerRequestCancelled
from ..wire._jsonrpc import Request, RequestId, dumps
from ._outbox import Wire

__all__ = ["INTERNAL_ERROR", "INVALID_PARAMS", "METHOD_NOT_FOUND", "ServerRequests", "refusal"]

# JSON-RPC error codes the client itself sends (section 4.2).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: The longest error message sent for a host handler's failure: enough to name it, not a dump.
MAX_HANDLER_MESSAGE = 500


def refusal(capabilities: dict[str, Any], method: str,
            params: dict[str, Any]) -> tuple[int, str] | None:
    """Why a client declaring ``capabilities`` cannot serve a server request (or an MRTR
    input request), as a JSON-RPC error code and message, or None when the host's handler
    should see it."""
    if method == "sampling/createMessage" and "sampling" in capabilities:
        sampling = capabilities["sampling"]
        if ("tools" in params or "toolChoice" in params) and not (
                isinstance(sampling, dict) and "tools" in sampling):
            return (INVALID_PARAMS, "sampling with tools was requested but the client did "
                    "not declare sampling.tools (F-02)")
        return None
    if method == "elicitation/create" and "elicitation" in capabilities:
        mode = params.get("mode", "form")
        declared = capabilities["elicitation"]
        modes = {"form"} if not declared else set(declared) & {"form", "url"}
        if type(mode) is not str or mode not in modes:
            return (INVALID_PARAMS,
                    f"elicitation mode {mode!r} was not declared by the client (F-03)"[:300])
        return None
    if method == "roots/list" and "roots" in capabilities:
        return None
    return (METHOD_NOT_FOUND, f"method not found: {method}")


def check_json(what: str | None, result: object) -> bytes:
    """``result`` encoded; raises :class:`LocalProtocolError` when a host's answer is not JSON
    (the question stays open: the host answers again, or with an error)."""
    try:
        return dumps(result)
    except (TypeError, ValueError, RecursionError) as exc:
        raise LocalProtocolError(f"the answer to {what} is not JSON: {exc}; the request is "
                                 "still open") from None


class ServerRequests:
    """The questions put to the host, by request id, with their method."""

    __slots__ = ("_wire", "open")

    def __init__(self, wire: Wire) -> None:
        self._wire = wire
        self.open: dict[RequestId, str] = {}

    def __contains__(self, request_id: object) -> bool:
        return request_id in self.open

    def on_request(self, message: Request, capabilities: dict[str, Any]) -> None:
        """A server request of the handshake era: answered here (``ping``, refusals, a
        duplicate id) or put to the host as a :class:`ServerRequest`."""
        method = message.method
        rid = message.id
        wire = self._wire
        if method == "ping":
            wire.send({"jsonrpc": "2.0", "id": rid, "result": {}})
            return
        refused = refusal(capabilities, method, message.params)
        if refused is not None:
            wire.send_error(rid, *refused)
            return
        if rid in self.open:
            wire.send_error(rid, INVALID_PARAMS, f"request id {rid!r} is already in use")
            return
        self.open[rid] = method
        wire.events.append(ServerRequest(request_id=rid, method=method, params=message.params))

    def ask(self, sid: str, method: str, params: dict[str, Any]) -> None:
        """Put an input request (MRTR round or 2026 task) to the host as a ServerRequest with
        the synthetic id ``sid``; its answer comes back through the session's ``respond``."""
        self.open[sid] = method
        self._wire.events.append(ServerRequest(request_id=sid, method=method, params=params))

    def answer(self, request_id: RequestId, obj: dict[str, Any]) -> bool:
        """Send the host's answer (a whole response object).  False if the question is no
        longer open; raises :class:`LocalProtocolError` (and sends nothing) for an answer
        that is not JSON."""
        method = self.open.get(request_id)
        if method is None:
            return False
        wire = self._wire
        data = check_json(method, obj)
        del self.open[request_id]
        wire.out.append(data)
        wire.out.append(b"\n")
        if wire.objects is not None:
            wire.objects.append(obj)
        if wire.tap is not None:
            wire.tap.response_sent(obj, wire.now)
        return True

    def take(self, request_id: RequestId) -> str | None:
        """Close a question without sending anything (its answer went elsewhere); its method,
        or None."""
        return self.open.pop(request_id, None)

    def withdraw(self, request_id: RequestId, reason: str | None) -> bool:
        """Close a question and tell the host (:class:`ServerRequestCancelled`)."""
        if self.open.pop(request_id, None) is None:
            return False
        self._wire.events.append(ServerRequestCancelled(request_id=request_id, reason=reason))
        return True

    def withdraw_all(self, reason: str) -> None:
        """Withdraw every open question (a server that proved modern cannot ask, M-04)."""
        for rid in list(self.open):
            self.withdraw(rid, reason)

    def clear(self) -> None:
        self.open.clear()
