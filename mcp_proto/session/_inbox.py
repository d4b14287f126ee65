"""The receiving half of a session: each message the server sends, routed to its part.

:class:`Inbox` reads NDJSON (through :class:`~._inbound.LineReader`) or takes parsed messages
from a message-oriented transport, checks each is JSON-RPC, and routes it: a response to the
:class:`~._outbox.Answer` of the request it answers (a fast path for the common success), a
notification to the part it concerns (progress, the listen stream, the cache, a task), a server
request to :class:`~._server_requests.ServerRequests`.  Nothing the server sends makes it
raise: bad input becomes a :class:`BadMessage` event, or fails the one request it answered.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Protocol

from .._elicitation import (
    ElicitationTracker,
    InvalidUrlElicitation,
    UrlElicitationRequired,
    parse_url_elicitation,
    url_elicitation_error,
)
from .._errors import MCPError, RemoteProtocolError, RpcError, modern_rpc_error
from .._events import (
    ElicitationComplete,
    ListChanged,
    LogMessage,
    OtherNotification,
    Progress,
    ResourceUpdated,
)
from ..wire._inbound import END, LineReader, Unreadable
from ..wire._jsonrpc import ErrorResponse, Notification, Request, Response, decode
from ._cache import ResponseCache
from ._era import EraChoice
from ._listen import Subscriptions
from ._modern import subscription_id
from ._outbox import Wire
from ._receiver import TaskReceiver
from ._server_requests import INVALID_PARAMS, ServerRequests, refusal
from ._state import CLOSED, State
from ._task_runner import TaskRunner, finite_number

__all__ = ["Inbox", "InboxHost"]

# Notifications that belong to a request rather than to a subscription (SB-03).
_REQUEST_SCOPED = frozenset({"notifications/progress", "notifications/message"})

#: Task status notifications (TK-04 / TX-07): used to poll at once, never relied on.
_TASK_STATUS_NOTIFICATIONS = frozenset({"notifications/tasks/status", "notifications/tasks"})

#: URL-mode elicitation requests (2025-11-25) awaiting the host's answer, by request id, kept
#: to learn whether the user accepted (then the elicitation stays pending until the server
#: says it completed).  The server withdraws requests too; past this many the oldest go.
MAX_URL_ASKS = 256

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


class InboxHost(Protocol):
    """What routing reads of its session."""

    state: State
    era: str | None
    protocol_version: str | None
    capabilities: dict[str, Any]

    @property
    def versions(self) -> tuple[str, ...]:
        """The versions accepted, newest first (named when a batch is refused)."""


class Inbox:
    """Decode and route what the server sends.  ``batches`` is set once the negotiated
    version allows JSON-RPC batches (2025-03-26 only, J-05)."""

    __slots__ = ("_asks", "_cache", "_elicitations", "_era", "_owner", "_receiver", "_subs",
                 "_tasks", "_url_asks", "_wire", "batches", "reader")

    def __init__(self, owner: InboxHost, wire: Wire, era: EraChoice, asks: ServerRequests,
                 subs: Subscriptions, cache: ResponseCache, tasks: TaskRunner,
                 receiver: TaskReceiver | None = None,
                 elicitations: ElicitationTracker | None = None) -> None:
        self._owner = owner
        self._receiver = receiver
        self._elicitations = elicitations if elicitations is not None else ElicitationTracker()
        self._url_asks: OrderedDict[Any, str] = OrderedDict()
        self._wire = wire
        self._era = era
        self._asks = asks
        self._subs = subs
        self._cache = cache
        self._tasks = tasks
        self.reader = LineReader(wire.limits.max_message_size)
        self.batches = False

    # -- input ---------------------------------------------------------------------------------

    def take(self, data: bytes | bytearray | memoryview, now: float) -> None:
        """Route what ``data`` completes: one answer read on its own at once, without
        buffering; anything else through the reader."""
        reader = self.reader
        value = reader.whole(data)
        if value is END:
            reader.feed(data)
            self.drain(now)
        elif type(value) is dict:
            self.on_object(value, now)
        else:
            self.on_other(value, now)

    def drain(self, now: float | None) -> None:
        """Route every complete line the reader holds (``now`` None: the final line at EOF)."""
        reader = self.reader
        owner = self._owner
        for item in reader.items():
            if type(item) is dict:
                self.on_object(item, now)
            else:
                self.on_other(item, now)
            if owner.state is CLOSED:
                return

    def on_other(self, item: Any, now: float | None) -> None:
        """A line's value that is not an object: a batch, an :class:`Unreadable`, or a JSON
        value that is no message."""
        kind = type(item)
        if kind is list:
            self.on_batch(item, now)
        elif kind is Unreadable:
            self._on_unreadable(item)
        else:
            self.bad(RemoteProtocolError(f"server wrote a JSON value that is not a "
                                         f"message: {item!r}"[:200]))

    def bad(self, error: MCPError) -> None:
        """Count and report input that belongs to no request."""
        self._wire.bad(error)

    def _on_unreadable(self, item: Unreadable) -> None:
        if item.request_id is not None:
            p = self._wire.pop(item.request_id)
            if p is not None:  # an oversize answer fails its request only
                self._wire.stats.bad_messages += 1
                p.answer.on_error(p, item.error)
                return
        self.bad(item.error)

    def on_batch(self, items: list[Any], now: float | None) -> None:
        if not self.batches:
            owner = self._owner
            self.bad(RemoteProtocolError(
                f"server sent a JSON-RPC batch, which protocol version "
                f"{owner.protocol_version or owner.versions[0]} does not allow (J-05)"))
            return
        if not items:
            self.bad(RemoteProtocolError("server sent an empty JSON-RPC batch"))
            return
        for obj in items:
            if type(obj) is dict:
                self.on_object(obj, now)
            else:
                self.bad(RemoteProtocolError(f"batch member is not an object: {obj!r}"[:200]))
            if self._owner.state is CLOSED:
                return

    def on_object(self, obj: dict[str, Any], now: float | None) -> None:
        """One JSON object from the server."""
        wire = self._wire
        # Fast path: a well-formed success response to one of our requests.
        if "method" not in obj:
            result = obj.get("result")
            if type(result) is dict and "error" not in obj and obj.get("jsonrpc") == "2.0":
                rid = obj.get("id")
                if type(rid) is int:
                    p = wire.pending.pop(rid, None)
                    if p is None:
                        wire.stats.responses_dropped += 1
                        return
                    p.answer.on_result(p, result, now)
                    return
        try:
            message = decode(obj)
        except RemoteProtocolError as exc:
            rid = obj.get("id")
            p = None
            if type(rid) is int and "method" not in obj:
                p = wire.pop(rid)
            if p is not None:
                # A malformed answer to a known request fails that request only.
                wire.stats.bad_messages += 1
                p.answer.on_error(p, exc)
            else:
                self.bad(exc)
            return
        if type(message) is Response:
            # Only ids that were never ours get here (string ids, ...).
            wire.stats.responses_dropped += 1
        elif type(message) is ErrorResponse:
            self._on_error(message)
        elif type(message) is Notification:
            self._on_notification(message, now)
        else:
            assert type(message) is Request
            owner = self._owner
            if owner.era == "modern":  # M-04: servers send no requests in 2026-07-28
                self.bad(RemoteProtocolError(
                    f"server sent a {message.method} request, which protocol version "
                    f"{owner.protocol_version} does not allow (M-04); not answered"[:300]))
                return
            if wire.tap is not None:
                wire.tap.server_request(message.id, message.method, message.params,
                                        wire.now if now is None else now)
            capabilities = owner.capabilities
            if message.method == "elicitation/create" and message.params.get("mode") == "url" \
                    and not self._url_request(message, capabilities):
                return
            receiver = self._receiver
            if receiver is not None and receiver.on_request(message, capabilities,
                                                            wire.now if now is None else now):
                return
            self._asks.on_request(message, capabilities)

    def _url_request(self, message: Request, capabilities: dict[str, Any]) -> bool:
        """A URL-mode elicitation (2025-11-25): False when it was answered here (a mode not
        declared, an invalid URL or id: -32602 naming the problem, F-03); else its
        ``elicitationId`` is pending until the host declines or the server completes it."""
        params = message.params
        if refusal(capabilities, message.method, params) is not None:
            return True  # refused by ServerRequests, with its message
        try:
            elicitation = parse_url_elicitation(params, require_id=True)
        except InvalidUrlElicitation as exc:
            self._wire.send_error(message.id, INVALID_PARAMS, str(exc)[:300])
            return False
        if message.id in self._asks:
            return True  # a duplicate id: refused by ServerRequests
        assert elicitation.elicitation_id is not None
        self._elicitations.offered(elicitation.elicitation_id)
        asks = self._url_asks
        asks[message.id] = elicitation.elicitation_id
        if len(asks) > MAX_URL_ASKS:
            asks.popitem(last=False)
        return True

    def url_answered(self, request_id: Any, action: object) -> None:
        """The host answered request ``request_id``: if it was a URL-mode elicitation, its
        id stays pending only when the user accepted (F-05)."""
        elicitation_id = self._url_asks.pop(request_id, None)
        if elicitation_id is not None:
            self._elicitations.answered(elicitation_id,
                                        action if type(action) is str else "cancel")

    def _on_error(self, message: ErrorResponse) -> None:
        rid = message.id
        wire = self._wire
        p = wire.pop(rid) if type(rid) is int else None
        if p is None:
            if rid is None:
                # Not tied to any request (J-03, edge case 5): surface, don't crash.
                self.bad(RpcError(message.code, message.message, message.data))
            else:
                wire.stats.responses_dropped += 1
            return
        if self._owner.era == "modern" or self._era.is_probe(p):
            error = modern_rpc_error(message.code, message.message, message.data,
                                     method=p.method)
        else:  # -32042 (2025-11-25): the URL elicitations the call waits for
            error = url_elicitation_error(message.code, message.message, message.data,
                                          method=p.method)
            if type(error) is UrlElicitationRequired:
                for elicitation in error.elicitations:
                    if elicitation.elicitation_id is not None:
                        self._elicitations.offered(elicitation.elicitation_id)
        p.answer.on_error_response(p, error)

    # -- notifications ---------------------------------------------------------------------------

    def _on_notification(self, message: Notification, now: float | None) -> None:
        method = message.method
        params = message.params
        wire = self._wire
        events = wire.events
        if self._owner.era == "modern" and method not in _REQUEST_SCOPED:
            # SB-03: everything else travels on our listen stream, named by its id; another
            # subscription's notification (or a stale one) is not ours.
            if method == "notifications/cancelled":
                self._subs.server_cancelled(params.get("requestId"))
                return
            if not self._subs.is_stream(subscription_id(params)):
                wire.stats.notifications_dropped += 1
                return
            if method == "notifications/subscriptions/acknowledged":
                self._subs.on_acknowledged(params)
                return
        if method == "notifications/progress":
            self._on_progress(params, now)
        elif method == "notifications/message":
            level = params.get("level")
            logger = params.get("logger")
            events.append(LogMessage(level=level if type(level) is str else "info",
                                     data=params.get("data"),
                                     logger=logger if type(logger) is str else None))
        elif method in _LIST_CHANGED:
            kind = _LIST_CHANGED[method]
            self._cache.invalidate(kind)  # S-02: the cached list (and its pages) goes
            events.append(ListChanged(kind=kind))
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is str:
                self._cache.drop(("resources/read", uri))
                events.append(ResourceUpdated(uri=uri))
            else:
                self.bad(RemoteProtocolError("resources/updated without a string uri"))
        elif method in _TASK_STATUS_NOTIFICATIONS and self._tasks.nudged(params, now):
            pass
        elif method == "notifications/elicitation/complete":
            elicitation_id = params.get("elicitationId")
            if type(elicitation_id) is str and self._elicitations.completed(elicitation_id):
                events.append(ElicitationComplete(elicitation_id=elicitation_id))
            else:  # unknown or finished: ignored (F-05)
                wire.stats.notifications_dropped += 1
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            reason = params.get("reason")
            if type(rid) is int or type(rid) is str:
                receiver = self._receiver
                if receiver is not None and (receiver.owns(rid)
                                             or receiver.server_cancelled(rid)):
                    pass  # a task's work ends by tasks/cancel only (TK-05); a waiting
                    # tasks/result is forgotten
                else:
                    self._asks.withdraw(rid, reason if type(reason) is str else None)
            # Otherwise an unknown or finished id: ignore (C-03).
        else:
            events.append(OtherNotification(method=method, params=params))

    def _on_progress(self, params: dict[str, Any], now: float | None) -> None:
        token = params.get("progressToken")
        progress = params.get("progress")
        wire = self._wire
        p = wire.pending.get(token) if type(token) is int else None
        if p is None and type(token) is int and self._tasks.progress(token, params):
            return  # a task's call: its token is live until the task is terminal
        if p is None or not p.progress or not finite_number(progress):
            wire.stats.progress_dropped += 1
            return
        if now is not None:
            idle = now + p.idle_timeout  # (min() costs 0.1 us more)
            wire.set_deadline(p, idle if idle < p.total_deadline else p.total_deadline)
        last = p.last_progress
        if last is not None and progress <= last:
            wire.stats.progress_dropped += 1
            return
        p.last_progress = progress
        total = params.get("total")
        if not finite_number(total):
            total = None
        message = params.get("message")
        wire.events.append(Progress(handle=p.handle, progress=progress, total=total,
                                    message=message if type(message) is str else None))
