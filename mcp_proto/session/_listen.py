"""Subscriptions, and the one listen stream of a 2026-07-28 session (section 8).

:class:`Subscriptions` owns the resources subscribed to (both eras: a restarted server is told
them again, SB-04 / H-11) and, in the stateless era, the ``subscriptions/listen`` request that
carries every notification: what it asked for, what the server acknowledged (SB-02), and the
``subscribe()`` / ``unsubscribe()`` calls waiting for that acknowledgement.  Changing the set
reopens the stream (SB-01: one per session).
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import MCPError, RemoteProtocolError, RequestCancelled
from .._events import Completed, Failed, RequestHandle, SubscriptionEnded
from ._operations import no_result
from ._outbox import Answer, Pending, Wire

__all__ = ["Subscriptions"]

#: The list-change notifications a server may announce, by capability, as listen asks them.
_LIST_FLAGS = (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
               ("resources", "resourcesListChanged"))



class _Listen(Answer):
    """The listen stream's request: the host never sees its handle."""

    __slots__ = ("subs",)
    own_span = True
    hosted = False

    def __init__(self, subs: Subscriptions) -> None:
        self.subs = subs

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.subs.ended(p, None)

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.subs.ended(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.subs.wire.cancelled(p.rid, reason)
        self.subs.ended(p, error)  # its subscribers fail; the host never saw its handle


class Subscriptions:
    """The resources subscribed to, and the listen stream that delivers their updates."""

    __slots__ = ("_answer", "accepted", "asked", "listen_rid", "renew", "uris", "waiters",
                 "wire")

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.uris: set[str] = set()
        self.renew: frozenset[str] = frozenset()  # a previous session's, renewed once Ready
        self.listen_rid: int | None = None
        self.asked: dict[str, Any] = {}  # what the open listen asked for
        self.accepted: dict[str, Any] = {}  # what the server acknowledged (SB-02)
        self.waiters: list[tuple[RequestHandle[Any], str | None]] = []  # (handle, uri added)
        self._answer = _Listen(self)

    def wanted(self, server_capabilities: dict[str, Any]) -> dict[str, Any]:
        """What a listen asks for now: each list change the server can announce, and the
        resources subscribed to."""
        wanted: dict[str, Any] = {}
        for kind, flag in _LIST_FLAGS:
            cap = server_capabilities.get(kind)
            if isinstance(cap, dict) and cap.get("listChanged"):
                wanted[flag] = True
        if self.uris:
            wanted["resourceSubscriptions"] = sorted(self.uris)
        return wanted

    def open(self, now: float, server_capabilities: dict[str, Any]) -> None:
        """(Re)open the one ``subscriptions/listen`` this session keeps (SB-01); the old one
        is cancelled.  With nothing to ask for, no stream is open and waiters complete."""
        wire = self.wire
        old = self.listen_rid
        if old is not None:
            self.listen_rid = None
            if wire.pop(old) is not None:
                wire.cancelled(old)
                if wire.tap is not None:  # superseded: its span ends (no answer will)
                    wire.tap.forget(old, wire.now)
        wanted = self.wanted(server_capabilities)
        if not wanted:
            for handle, _uri in self.waiters:
                wire.events.append(Completed(handle=handle, value=None))
            self.waiters.clear()
            return
        rid = wire.take_id()
        wire.request(rid, RequestHandle(rid, "subscriptions/listen"), "subscriptions/listen",
                     {"notifications": wanted}, now, None, no_result, self._answer)
        self.listen_rid = rid
        self.asked = wanted

    def change(self, handle: RequestHandle[Any], uri: str, add: bool, now: float,
               server_capabilities: dict[str, Any]) -> RequestHandle[Any]:
        """Stateless era: add or drop ``uri`` and reopen the stream; ``handle`` completes when
        the server acknowledges (or fails if it refused the subscription)."""
        if add:
            self.uris.add(uri)
        else:
            self.uris.discard(uri)
        self.waiters.append((handle, uri if add else None))
        self.open(now, server_capabilities)
        return handle

    def is_stream(self, subscription: object) -> bool:
        """Whether a notification's subscription id names the open listen (SB-03)."""
        return type(subscription) is int and subscription == self.listen_rid

    def server_cancelled(self, request_id: object) -> None:
        """The server cancelled a request of ours: if it is the listen, it tore it down."""
        rid = self.listen_rid
        if rid is not None and request_id == rid:
            p = self.wire.pop(rid)
            if p is not None:
                if self.wire.tap is not None:
                    self.wire.tap.forget(rid, self.wire.now)
                self.ended(p, None)  # SB-04

    def on_acknowledged(self, params: dict[str, Any]) -> None:
        """SB-02: the server says which of the asked notifications it will send."""
        wire = self.wire
        p = wire.pending.get(self.listen_rid) if self.listen_rid is not None else None
        if p is not None:
            wire.set_deadline(p, math.inf)  # the stream lives until either side ends it
        accepted = params.get("notifications")
        accepted = accepted if type(accepted) is dict else {}
        uris = accepted.get("resourceSubscriptions")
        uris = set(uris) if type(uris) is list and all(type(u) is str for u in uris) else set()
        events = wire.events
        for handle, uri in self.waiters:
            if uri is not None and uri not in uris:
                self.uris.discard(uri)  # refused: not asked for again
                events.append(Failed(handle=handle, error=RemoteProtocolError(
                    f"the server did not accept the subscription to {uri!r} (its "
                    f"acknowledgement: {accepted!r})"[:300])))
            else:
                events.append(Completed(handle=handle, value=None))
        self.waiters.clear()
        self.accepted = accepted

    def ended(self, p: Pending, error: MCPError | None) -> None:
        """The server ended the listen (a result or an error), or it timed out unacknowledged."""
        if p.rid != self.listen_rid:
            return
        self.listen_rid = None
        events = self.wire.events
        for handle, _uri in self.waiters:
            events.append(Failed(handle=handle, error=error or RemoteProtocolError(
                "the server ended the subscription stream before acknowledging it")))
        self.waiters.clear()
        events.append(SubscriptionEnded(error=error))

    def cancel(self, handle: RequestHandle[Any], reason: str | None) -> bool:
        """End a ``subscribe()`` / ``unsubscribe()`` wait.  Only the wait ends: the listen
        already asks for the new set, which the next change corrects if the host wants."""
        for i, (waiting, _uri) in enumerate(self.waiters):
            if waiting == handle:
                del self.waiters[i]
                self.wire.events.append(Failed(handle=handle,
                                               error=RequestCancelled(handle.method, reason)))
                return True
        return False

    def shutdown(self, error: MCPError) -> None:
        """The session ended: every wait fails with ``error``."""
        events = self.wire.events
        for handle, _uri in self.waiters:
            events.append(Failed(handle=handle, error=error))
        self.waiters.clear()
