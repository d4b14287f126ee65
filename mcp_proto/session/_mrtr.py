"""Multi-round-trip requests (2026-07-28, section 7): gathering the host's input.

A request answered with ``resultType: "input_required"`` is not done: :class:`InputGathering`
puts each of its ``inputRequests`` to the host (as :class:`ServerRequest` events with made-up
ids), collects the answers, and sends the request again with ``inputResponses`` and the exact
``requestState`` (MR-01), up to ``Limits.max_input_rounds`` rounds.  While the host answers,
the call's total deadline still runs.
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
)
from .._events import Failed, RequestHandle
from ..wire._jsonrpc import RequestId
from ._modern import Gather, parse_input_required
from ._outbox import Pending, Wire
from ._server_requests import ServerRequests, check_json, refusal

__all__ = ["InputGathering"]


class InputGathering:
    """The MRTR rounds waiting for the host, by the synthetic id of each open question."""

    __slots__ = ("_asks", "_wire", "gathers")

    def __init__(self, wire: Wire, asks: ServerRequests) -> None:
        self._wire = wire
        self._asks = asks
        self.gathers: dict[RequestId, Gather] = {}

    def __contains__(self, request_id: object) -> bool:
        return request_id in self.gathers

    def _rounds(self) -> list[Gather]:
        return list({id(g): g for g in self.gathers.values()}.values())

    def on_input_required(self, p: Pending, result: dict[str, Any], now: float | None,
                          capabilities: dict[str, Any]) -> None:
        """``p`` (taken out of the table) was answered ``input_required``: ask the host each
        input, or fail the call when it cannot be given (or after too many rounds)."""
        wire = self._wire
        fail: MCPError | None = None
        try:
            requests, state = parse_input_required(result, p.method)
        except RemoteProtocolError as exc:
            fail = exc
        else:
            if p.rounds >= wire.limits.max_input_rounds:
                fail = RemoteProtocolError(
                    f"{p.method} still asked for input after {p.rounds} rounds; gave up "
                    "(raise Limits.max_input_rounds to allow more)")
            for key, (method, params) in requests.items():
                refused = refusal(capabilities, method, params)
                if fail is None and refused is not None:
                    fail = RemoteProtocolError(f"{p.method} needs {method} input ({key!r}) the "
                                               f"client cannot give: {refused[1]}"[:300])
        if fail is not None:
            wire.events.append(Failed(handle=p.handle, error=fail))
            return
        gather = Gather(p.handle, state, p)
        for key, (method, params) in requests.items():
            sid = f"input-{p.handle.id}-{p.rounds + 1}-{key}"
            gather.keys[sid] = key
            self.gathers[sid] = gather
            self._asks.ask(sid, method, params)
        if not requests:  # load shedding: retry at once with the state (section 7)
            self._retry(p, gather, wire.now if now is None else now)

    def _retry(self, p: Pending, gather: Gather, now: float) -> None:
        """RETRY: same method and params, a new id, fresh ``_meta``, this round's answers and
        the exact ``requestState`` (MR-01), never one that was not given."""
        wire = self._wire
        base = p.base_params if p.base_params is not None else p.params
        params = dict(base) if base else {}
        if gather.keys:
            params["inputResponses"] = gather.responses
        if gather.request_state is not None:
            params["requestState"] = gather.request_state
        try:
            retry = wire.request(wire.take_id(), p.handle, p.method, params, now,
                                 p.total_timeout, p.parse, p.answer, progress=p.progress,
                                 total_deadline=p.total_deadline, idle_timeout=p.idle_timeout)
        except LocalProtocolError as exc:  # an answer that is not JSON
            wire.events.append(Failed(handle=p.handle, error=exc))
            return
        retry.base_params = base
        retry.rounds = p.rounds + 1
        retry.last_progress = p.last_progress  # Progress never goes backwards for a handle
        retry.task_mode = p.task_mode  # a later round may be answered with a task

    def answer(self, sid: RequestId, result: dict[str, Any], now: float | None) -> bool:
        """The host answered question ``sid``; the round is retried once all are answered.
        Raises :class:`LocalProtocolError` for an answer that is not JSON (still open)."""
        gather = self.gathers[sid]
        check_json(self._asks.open.get(sid), result)
        del self.gathers[sid]
        self._asks.take(sid)
        gather.responses[gather.keys[str(sid)]] = result
        if gather.complete:
            self._retry(gather.pending, gather, self._wire.now if now is None else now)
        return True

    def refused(self, sid: RequestId, code: int, message: str, data: Any) -> bool:
        """The host answered question ``sid`` with an error: MRTR has no error answer, so the
        operation that needed the input fails."""
        gather = self.gathers.pop(sid)  # answered: not withdrawn below
        method = self._asks.take(sid) or "input"
        self.fail(gather, RpcError(code, message, data,
                                   method=f"{method} for {gather.handle.method}"))
        return True

    def fail(self, gather: Gather, error: MCPError) -> None:
        """The operation ends while its input is gathered: withdraw the open questions."""
        for sid in gather.keys:
            if self.gathers.pop(sid, None) is not None:
                self._asks.withdraw(sid, str(error)[:200])
        self._wire.events.append(Failed(handle=gather.handle, error=error))

    def soonest(self) -> float | None:
        """The earliest total deadline of a call waiting for the host, or None."""
        if not self.gathers:
            return None
        return min(g.deadline for g in self.gathers.values())

    def due(self, now: float) -> None:
        """Fail each call whose total deadline passed while the host was answering."""
        for gather in self._rounds():
            if gather.deadline <= now:
                p = gather.pending
                self.fail(gather, RequestTimeout(p.method, p.total_timeout, "total"))

    def cancel(self, handle: RequestHandle[Any], reason: str | None) -> bool:
        """Cancel a call waiting for the host: nothing is on the wire."""
        for gather in self._rounds():
            if gather.handle == handle:
                self.fail(gather, RequestCancelled(handle.method, reason))
                return True
        return False

    def shutdown(self, error: MCPError) -> None:
        """The session ended: each waiting call fails with ``error``."""
        events = self._wire.events
        for gather in self._rounds():
            events.append(Failed(handle=gather.handle, error=error))
        self.gathers.clear()
