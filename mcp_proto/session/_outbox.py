"""The request table and the outbox: ids, pending requests, their deadlines, bytes out.

:class:`Wire` is the part every other part of a session sends through.  It owns the next
request id, the table of requests awaiting an answer with the heap of their deadlines, the
queue of encoded messages (and, for a message-oriented transport, their wire objects) and the
queue of events.  It decides nothing about what an answer means: each :class:`Pending` carries
an :class:`Answer`, the object its result, its error or its end on our side is handed to.
"""

from __future__ import annotations

import heapq
import json
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from heapq import heappush
from typing import TYPE_CHECKING, Any, ClassVar

from .._errors import LocalProtocolError, MCPError, RequestTimeout, RpcError
from .._events import BadMessage, Event, RequestHandle
from .._limits import Limits
from ..wire._json import dumps, dumps_request

if TYPE_CHECKING:
    from .._telemetry import Telemetry
from ..wire._jsonrpc import RequestId
from ._operations import ListWalk, TaskRun

__all__ = ["DEADLINE_SLACK", "Answer", "Pending", "SessionStats", "Wire", "new_pending"]

#: Stale deadline entries tolerated beyond twice the live requests before the heap is rebuilt
#: (progress and postponement push a new entry and leave the old one): a rebuild is then rare,
#: and memory stays proportional to what is pending.
DEADLINE_SLACK = 64
_INF = math.inf  # a request with no deadline (a timeout of math.inf)


@dataclass(slots=True)
class SessionStats:
    """Counters of what the session dropped.  Mutable: read it, don't share it across threads
    without the binding's lock."""

    responses_dropped: int = 0
    """Responses for an id that is unknown, finished, timed out or cancelled (never delivered
    to another request)."""
    progress_dropped: int = 0
    """Progress for an unknown token, or not above the last value."""
    bad_messages: int = 0
    """Lines that were not JSON, not JSON-RPC, or too large."""
    notifications_dropped: int = 0
    """2026-07-28 notifications for a subscription that is not this session's (SB-03)."""


class Answer:
    """What to do with a pending request's answer.  One object per kind of request (the
    host's operations, the opening, a discovery refresh, the listen stream, a task's own
    requests); the part that sent the request implements it."""

    __slots__ = ()

    hosted: ClassVar[bool] = True
    """The request's handle is the host's: it fails once when the session ends, and
    :meth:`ClientSession.cancel` may end it with ``notifications/cancelled``."""
    replayable: ClassVar[bool] = False
    """X-22: a transport that lost the answer for good may send the request again."""
    own_span: ClassVar[bool] = False
    """Telemetry: an internal request no event ends (the listen stream, a discovery
    refresh): its answer ends its span."""

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        """The server answered ``p`` (already taken out of the table) with ``result``."""
        raise NotImplementedError

    def on_error(self, p: Pending, error: MCPError) -> None:
        """``p`` failed because of the server or the transport (an error response, a
        malformed or oversize answer, a lost stream)."""
        raise NotImplementedError

    def on_error_response(self, p: Pending, error: RpcError) -> None:
        """The server answered ``p`` with a JSON-RPC error; by default, as :meth:`on_error`
        (an answer that may retry, with a new version or a new walk, says so here)."""
        self.on_error(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        """``p`` ends on our side (its deadline passed, or it was cancelled)."""
        raise NotImplementedError


class _Tapped(Answer):
    """An internal request's answer (the listen stream, a discovery refresh) when it has a
    span of its own: no event ends such a request, so its answer ends the span, then does
    what it does."""

    __slots__ = ("inner", "tap", "wire")
    hosted = False
    own_span = True

    def __init__(self, inner: Answer, tap: Telemetry, wire: Wire) -> None:
        self.inner = inner
        self.tap = tap
        self.wire = wire  # its time: the latest a caller gave

    @property
    def replayable(self) -> bool:  # type: ignore[override]
        return self.inner.replayable

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.tap.internal_done(p.handle, None, p.rid, self.wire.now)
        self.inner.on_result(p, result, now)

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.tap.internal_done(p.handle, error, p.rid, self.wire.now)
        self.inner.on_error(p, error)

    def on_error_response(self, p: Pending, error: RpcError) -> None:
        self.tap.internal_done(p.handle, error, p.rid, self.wire.now)
        self.inner.on_error_response(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.tap.internal_done(p.handle, error, p.rid, self.wire.now)
        self.inner.on_abandon(p, error, reason)


class Pending:
    """One request awaiting its response; made by :func:`new_pending`."""

    __slots__ = (
        "answer",
        "base_params",
        "deadline",
        "handle",
        "idle_timeout",
        "last_progress",
        "method",
        "params",
        "parse",
        "progress",
        "retried",
        "rid",
        "rounds",
        "run",
        "task_mode",
        "total_deadline",
        "total_timeout",
        "walk",
    )
    rid: int  # its JSON-RPC id
    handle: RequestHandle[Any]
    method: str
    parse: Callable[[dict[str, Any]], Any]
    answer: Answer
    walk: ListWalk | None
    progress: bool
    idle_timeout: float
    total_timeout: float
    total_deadline: float
    deadline: float
    last_progress: float | None
    params: dict[str, Any] | None  # as sent, without _meta (for retries)
    base_params: dict[str, Any] | None  # as the caller gave them (MRTR)
    rounds: int  # MRTR rounds so far (section 7)
    retried: bool  # a -32022 / invalid-cursor retry was made (at most one)
    run: TaskRun | None  # a task's own request: the task it serves
    task_mode: str | None  # tools/call: "legacy" (sent with task) / "modern"

    def timeout_error(self) -> RequestTimeout:
        """The error of this request's deadline: the total one, or the idle one."""
        if self.deadline >= self.total_deadline:
            return RequestTimeout(self.method, self.total_timeout, "total")
        return RequestTimeout(self.method, self.idle_timeout, "idle")


def new_pending(rid: int, handle: RequestHandle[Any], method: str,
                parse: Callable[[dict[str, Any]], Any], answer: Answer, walk: ListWalk | None,
                progress: bool, idle_timeout: float, total_timeout: float,
                total_deadline: float, deadline: float,
                params: dict[str, Any] | None) -> Pending:
    """A pending request, not yet retried, in no MRTR round, no task's.  (A function, not
    ``Pending.__init__``: a class's own ``__init__`` costs about 0.15 us more a request.)"""
    p = Pending()
    p.rid = rid
    p.handle = handle
    p.method = method
    p.parse = parse
    p.answer = answer
    p.walk = walk
    p.progress = progress
    p.idle_timeout = idle_timeout
    p.total_timeout = total_timeout
    p.total_deadline = total_deadline
    p.deadline = deadline
    p.last_progress = None
    p.params = params
    p.base_params = None
    p.rounds = 0
    p.retried = False
    p.run = None
    p.task_mode = None
    return p


class Wire:
    """Request ids, the pending table and its deadlines, and the outgoing messages.

    ``meta`` is the ``_meta`` every request carries once ``modern`` is set (2026-07-28: each
    request names the version and the client's capabilities).  Nothing here reads a clock:
    each call that needs the time takes ``now``.
    """

    __slots__ = ("events", "limits", "meta", "modern", "next_id", "now", "objects", "out",
                 "pending", "stats", "tap", "timers")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.pending: dict[int, Pending] = {}
        self.timers: list[tuple[float, int]] = []  # (deadline, id); stale entries skipped
        self.next_id = 1
        self.out: list[bytes] = []  # encoded message, b"\n", encoded message, b"\n", ...
        self.objects: list[dict[str, Any]] | None = None  # the same messages, for HTTP
        self.events: deque[Event] = deque()
        self.stats = SessionStats()
        self.meta: dict[str, Any] = {}
        self.modern = False
        self.tap: Telemetry | None = None  # OpenTelemetry's view (ClientSession.instrument)
        self.now = 0.0
        """The latest time a caller gave: for steps taken without one (an answer at EOF, a
        host's reply given without ``now``)."""

    # -- ids and messages ------------------------------------------------------------------

    def take_id(self) -> int:
        """A request id never used before in this session."""
        rid = self.next_id
        self.next_id = rid + 1
        return rid

    def send(self, obj: dict[str, Any]) -> None:
        """Queue one message.  Raises ``TypeError``/``ValueError`` if it is not JSON."""
        out = self.out
        out.append(dumps(obj))
        out.append(b"\n")
        if self.objects is not None:
            self.objects.append(obj)
        tap = self.tap
        if tap is not None and "method" not in obj:  # a response to a server request
            tap.response_sent(obj, self.now)

    def send_error(self, request_id: RequestId, code: int, message: str,
                   data: Any = None) -> None:
        """Queue an error response to a server request."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def cancelled(self, rid: int, reason: str | None = None) -> None:
        """Queue ``notifications/cancelled`` for our request ``rid`` (C-01)."""
        params: dict[str, Any] = {"requestId": rid}
        if reason:
            params["reason"] = reason
        self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
        if self.tap is not None:
            self.tap.cancel_sent(rid, reason, self.now)

    def bad(self, error: MCPError) -> None:
        """Count and report something the server sent that belongs to no request."""
        self.stats.bad_messages += 1
        self.events.append(BadMessage(error=error))

    def data_to_send(self) -> bytes:
        """Everything queued, as one NDJSON byte string (possibly empty)."""
        out = self.out
        if not out:
            return b""
        self.out = []
        return b"".join(out)

    def messages_to_send(self) -> list[tuple[dict[str, Any], bytes]]:
        """Everything queued, as (wire object, encoded body) pairs; from the first call on,
        the wire objects are kept as messages are queued."""
        if self.objects is None:
            self.objects = []
            encoded = self.out[0::2]
            objects: list[dict[str, Any]] = [json.loads(b) for b in encoded]
        else:
            encoded = self.out[0::2]
            objects = self.objects
            self.objects = []
        self.out = []
        return list(zip(objects, encoded, strict=True))

    def discard_output(self) -> None:
        """Drop what is queued and not yet taken (a failed opening sends nothing more)."""
        self.out.clear()
        if self.objects:
            self.objects.clear()

    # -- requests ------------------------------------------------------------------------------

    def request(self, rid: int, handle: RequestHandle[Any], method: str,
                params: dict[str, Any] | None, now: float, timeout: float | None,
                parse: Callable[[dict[str, Any]], Any], answer: Answer, *,
                progress: bool = False, walk: ListWalk | None = None,
                total_deadline: float | None = None, idle_timeout: float | None = None,
                modern: bool = False) -> Pending:
        """Queue request ``rid`` and enter it in the table.  ``timeout`` is the total deadline
        (default ``Limits.request_timeout``), ``idle_timeout`` the longest silence (default
        ``Limits.idle_timeout``, or the total when one longer was given); ``total_deadline``
        keeps an earlier request's (a retry, a page).  ``modern`` adds :attr:`meta` before the
        era is decided (the probe).  Raises ``ValueError`` for a timeout that is not positive
        and :class:`LocalProtocolError` for params that are not JSON (nothing is queued)."""
        limits = self.limits
        total = limits.request_timeout if timeout is None else timeout
        idle = limits.idle_timeout
        if idle_timeout is not None:
            idle = idle_timeout
        elif timeout is not None and total > idle:
            # An explicit total longer than the default silence means "this may take long":
            # the idle deadline must not cut it short behind the caller's back.
            idle = total
        if not (total > 0 and idle > 0):
            raise ValueError(f"timeouts must be positive, got {timeout!r} and {idle_timeout!r}")
        if total_deadline is None:
            total_deadline = now + total
        wire = params
        modern = modern or self.modern
        tap = self.tap
        carrier = None
        if tap is not None:
            carrier = tap.request(rid, handle, method, params, now, hosted=answer.hosted)
            if answer.own_span and tap.internal_span(rid):
                answer = _Tapped(answer, tap, self)  # no event ends it: its answer does
        if progress or modern or carrier:
            extra: dict[str, Any] = dict(self.meta) if modern else {}
            if progress:
                extra["progressToken"] = rid
            if carrier:  # trace context, unprefixed (SEP-414); the caller's own keys win
                own = params.get("_meta") if params else None
                extra.update({k: v for k, v in carrier.items()
                              if type(own) is not dict or k not in own})
            wire = dict(params) if params else {}
            meta = wire.get("_meta")
            wire["_meta"] = {**meta, **extra} if meta else extra
        try:
            data = dumps_request(rid, method, wire)
        except (TypeError, ValueError, RecursionError) as exc:
            error = LocalProtocolError(f"arguments of {method} are not JSON: {exc}")
            if tap is not None:
                tap.unsent(rid, handle, error, now)
            raise error from None
        deadline = now + idle  # min(now + idle, total_deadline): min() costs 0.1 us more
        if total_deadline < deadline:  # noqa: PLR1730
            deadline = total_deadline
        p = self.pending[rid] = new_pending(rid, handle, method, parse, answer, walk, progress,
                                            idle, total, total_deadline, deadline, params)
        if deadline != _INF:
            heappush(self.timers, (deadline, rid))
        out = self.out
        out.append(data)
        out.append(b"\n")
        if self.objects is not None:
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if wire is not None:
                msg["params"] = wire
            self.objects.append(msg)
        return p

    def resend(self, p: Pending, now: float, params: dict[str, Any] | None = None) -> Pending:
        """Send ``p`` again (with ``params`` instead of its own, if given) under a new id, the
        same handle, answer and total deadline; the copy counts as the one retry it may get.
        Raises as :meth:`request`."""
        again = self.request(self.take_id(), p.handle, p.method,
                             p.params if params is None else params, now, p.total_timeout,
                             p.parse, p.answer, progress=p.progress, walk=p.walk,
                             total_deadline=p.total_deadline, idle_timeout=p.idle_timeout)
        again.retried = True
        again.rounds = p.rounds
        again.base_params = p.base_params
        again.last_progress = p.last_progress
        again.task_mode = p.task_mode  # the retry may still be answered with a task
        again.run = p.run
        return again

    def pop(self, rid: int) -> Pending | None:
        """Take request ``rid`` out of the table (its answer came, or it ends), or None."""
        return self.pending.pop(rid, None)

    def drop(self, predicate: Callable[[Pending], bool]) -> None:
        """Forget every pending request ``predicate`` picks, without a word to anyone: a late
        answer to one is dropped and counted."""
        pending = self.pending
        for rid in [rid for rid, p in pending.items() if predicate(p)]:
            del pending[rid]

    # -- deadlines -----------------------------------------------------------------------------

    def set_deadline(self, p: Pending, deadline: float) -> None:
        """Move ``p``'s deadline (progress resets the idle one; ``math.inf``: none)."""
        if deadline == p.deadline:
            return
        p.deadline = deadline
        if deadline != math.inf:
            heapq.heappush(self.timers, (deadline, p.rid))
            self.compact()

    def postpone(self, request_ids: Iterable[int], until: float) -> None:
        """Keep these requests waiting at least until ``until``: their deadlines move, never
        closer; ids no longer pending are skipped."""
        for rid in request_ids:
            p = self.pending.get(rid)
            if p is None or p.deadline >= until:
                continue
            p.deadline = until
            p.total_deadline = max(p.total_deadline, until)
            heapq.heappush(self.timers, (until, rid))

    def soonest(self) -> float | None:
        """The earliest live deadline (stale heap entries are dropped here), or None."""
        timers = self.timers
        pending = self.pending
        while timers:
            deadline, rid = timers[0]
            p = pending.get(rid)
            if p is not None and p.deadline == deadline:
                return deadline
            heapq.heappop(timers)
        return None

    def expired(self, now: float) -> Iterator[Pending]:
        """Take out and yield each request whose deadline is at or before ``now``; the caller
        ends each (``p.timeout_error()`` says with what).  Requests the caller sends while
        iterating are seen when their deadline has passed too."""
        pending = self.pending
        while (timers := self.timers) and timers[0][0] <= now:  # compact() may replace it
            deadline, rid = heapq.heappop(timers)
            p = pending.get(rid)
            if p is None or p.deadline != deadline:
                continue
            del pending[rid]
            yield p

    def compact(self) -> None:
        """Rebuild the deadline heap when stale entries dominate it."""
        timers = self.timers
        pending = self.pending
        if len(timers) > 2 * len(pending) + DEADLINE_SLACK:
            self.timers = [(d, r) for d, r in timers
                           if (p := pending.get(r)) is not None and p.deadline == d]
            heapq.heapify(self.timers)

    def clear(self) -> None:
        """Forget every pending request and deadline (the session ended)."""
        self.pending.clear()
        self.timers.clear()
