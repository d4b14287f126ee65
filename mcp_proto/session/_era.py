"""Era choice: which protocol era a server speaks, decided once per session (section 2.3).

:class:`EraChoice` owns the opening: the ``server/discover`` probe, the ``initialize`` sent
when the probe fails or goes unanswered for ``Limits.probe_fallback`` seconds, the one retry
of a -32022 with a mutual version (V-11), a remembered DiscoverResult that opens a session
with no round trip (and its refresh when stale, V-20), and whether the probe killed a
handshake-era server (V-23).  The session's lifecycle moves through the table in
:mod:`._state` (IDLE -> PROBING -> INITIALIZING -> READY); the session learns the outcome
through the :class:`Opener` calls.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._auth_errors import AuthorizationError
from .._errors import (
    MODERN_ERROR_CODES,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RpcError,
    UnsupportedProtocolVersion,
    UnsupportedVersion,
)
from .._events import RequestHandle
from .._types import Implementation, parse_implementation
from .._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from ._modern import Discovered, parse_discover
from ._operations import raw_result
from ._outbox import Answer, Pending, Wire
from ._state import Input, State, transition

__all__ = ["ERA_MODES", "EraChoice", "Opener", "check_mode"]

ERA_MODES = ("auto", "modern", "legacy")
"""``start(era=...)``: probe and fall back, discover only, or handshake only."""


def check_mode(mode: str) -> None:
    """Raise ``ValueError`` for an ``era`` that is not one of :data:`ERA_MODES`."""
    if mode not in ERA_MODES:
        raise ValueError(f"era must be 'auto', 'modern' or 'legacy', got {mode!r}")



class Opener(Protocol):
    """What era choice needs of its session: the lifecycle state, what the handshake and the
    modern requests carry, and where the outcome goes."""

    state: State
    era: str | None
    protocol_version: str | None

    def _handshake_params(self, version: str) -> dict[str, Any]:
        """The ``initialize`` params offering ``version``."""

    def _modern_meta(self, version: str) -> dict[str, Any]:
        """The ``_meta`` of every 2026-07-28 request in ``version``."""

    def _opened_legacy(self, handle: RequestHandle[Any], version: str,
                       result: dict[str, Any], server_info: Implementation) -> None:
        """The handshake succeeded (the state is READY already)."""

    def _opened_modern(self, handle: RequestHandle[Any], version: str,
                       discovered: Discovered) -> None:
        """The server speaks ``version`` of the stateless era (the state is READY already)."""

    def _rediscovered(self, discovered: Discovered) -> None:
        """A refreshed DiscoverResult that still names the session's version."""

    def _fail_opening(self, handle: RequestHandle[Any], error: MCPError) -> None:
        """The opening failed for good: fail ``handle`` and close the session."""

    def _era_lost(self, error: MCPError) -> None:
        """A remembered era turned out wrong (V-20): close the session."""


class _Handshake(Answer):
    """``initialize``: the handshake era's opening."""

    __slots__ = ("era",)

    def __init__(self, era: EraChoice) -> None:
        self.era = era

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.era.on_initialize_result(p, result)

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.era.opening_failed(p, error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.era.opening_failed(p, error)  # no cancellation for the handshake (C-02)


class _Probe(_Handshake):
    """``server/discover`` sent to find out the era (or to open a modern-only session)."""

    __slots__ = ()

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.era.on_discover_result(p, result)


class _Refresh(Answer):
    """``server/discover`` refreshing a stale remembered DiscoverResult; nobody waits on it."""

    __slots__ = ("era",)
    hosted = False
    own_span = True

    def __init__(self, era: EraChoice) -> None:
        self.era = era

    def on_result(self, p: Pending, result: dict[str, Any], now: float | None) -> None:
        self.era.on_refresh(result)

    def on_error(self, p: Pending, error: MCPError) -> None:
        self.era.refresh_failed(error)

    def on_abandon(self, p: Pending, error: MCPError, reason: str | None) -> None:
        self.era.refresh_failed(error)


def _supported_of(error: MCPError) -> list[str] | None:
    """The versions a -32022 (UnsupportedProtocolVersion) names, or None for another error."""
    if not (isinstance(error, RpcError) and error.code == -32022):
        return None
    return UnsupportedProtocolVersion(error.code, error.message, error.data).supported


class EraChoice:
    """The opening of one session: probe, fallback, handshake, remembered discovery.

    ``versions`` are the protocol versions accepted, newest first, from both eras (checked by
    the session).  Each method that sends takes ``now``; the others use ``wire.now``.
    """

    __slots__ = ("_handshake", "_init_error", "_owner", "_probe", "_refresh", "_timeout",
                 "_wire", "assumption_failed", "fallback_at", "handle", "input_unread",
                 "legacy_versions", "mode", "modern_versions", "probe_died", "probe_sent",
                 "versions")

    def __init__(self, owner: Opener, wire: Wire, versions: tuple[str, ...]) -> None:
        self._owner = owner
        self._wire = wire
        self.versions = versions
        self.modern_versions = tuple(v for v in versions if v in MODERN_VERSIONS)
        self.legacy_versions = tuple(v for v in versions if v in HANDSHAKE_VERSIONS)
        self.mode = "auto"
        self.handle: RequestHandle[Any] | None = None  # the opening's, shared by both eras
        self._timeout: float | None = None
        self._init_error: MCPError | None = None  # the handshake failed while probing
        self.fallback_at: float | None = None  # when to also send initialize while probing
        self.probe_sent = False
        self.probe_died = False
        self.input_unread = False  # the binding saw the server exit without reading its input
        self.assumption_failed = False
        self._handshake = _Handshake(self)
        self._probe = _Probe(self)
        self._refresh = _Refresh(self)

    # -- opening -----------------------------------------------------------------------------

    def initialize(self, now: float, timeout: float | None) -> RequestHandle[Any]:
        """Send ``initialize`` offering the newest handshake-era version.  Raises
        :class:`LocalProtocolError` when none is accepted, or when the session is past IDLE."""
        if not self.legacy_versions:
            raise LocalProtocolError("initialize needs a handshake-era version; this session "
                                     f"accepts only {', '.join(self.versions)}")
        owner = self._owner
        owner.state = transition(owner.state, Input.INITIALIZE)
        rid = self._wire.take_id()
        self.handle = RequestHandle(rid, "initialize")
        self._timeout = timeout
        self.send_initialize(now, rid)
        return self.handle

    def start(self, now: float, timeout: float | None, mode: str,
              discovered: Discovered | None) -> RequestHandle[Any]:
        """Open in whichever era ``mode`` allows (see :meth:`ClientSession.start`).  Raises
        ``ValueError`` for an unknown mode, :class:`LocalProtocolError` past IDLE."""
        check_mode(mode)
        self.mode = mode
        if mode == "legacy" or not self.modern_versions:
            return self.initialize(now, timeout)
        owner = self._owner
        wire = self._wire
        owner.state = transition(owner.state, Input.PROBE)
        rid = wire.take_id()
        handle = self.handle = RequestHandle(rid, "server/discover")
        self._timeout = timeout
        if discovered is not None:
            mutual = [v for v in self.modern_versions if v in discovered.supported_versions]
            if mutual:
                self.become_modern(handle, mutual[0], discovered)
                if now >= discovered.expires_at:
                    # S-02: stale.  Refresh it without making anyone wait; if the server no
                    # longer answers it as a modern server, the assumption failed (V-20).
                    refresh = wire.take_id()  # its own handle: nobody waits on it
                    wire.request(refresh, RequestHandle(refresh, "server/discover"),
                                 "server/discover", None, now, timeout, raw_result,
                                 self._refresh)
                return handle
        self.send_discover(rid, handle, self.modern_versions[0], now, timeout)
        if mode == "auto" and self.legacy_versions:
            self.fallback_at = now + wire.limits.probe_fallback
        return handle

    def send_initialize(self, now: float, rid: int | None = None) -> Pending:
        assert self.handle is not None
        wire = self._wire
        params = self._owner._handshake_params(self.legacy_versions[0])
        return wire.request(wire.take_id() if rid is None else rid, self.handle, "initialize",
                            params, now, self._timeout, raw_result, self._handshake)

    def send_discover(self, rid: int, handle: RequestHandle[Any], version: str, now: float,
                      timeout: float | None, *, total_deadline: float | None = None) -> Pending:
        """Send the probe; ``total_deadline``: the one it retries (V-11) keeps its own."""
        wire = self._wire
        wire.meta = self._owner._modern_meta(version)
        p = wire.request(rid, handle, "server/discover", None, now, timeout, raw_result,
                         self._probe, modern=True, total_deadline=total_deadline)
        self.probe_sent = True
        return p

    def is_opening(self, p: Pending) -> bool:
        """Whether ``p`` is the probe or the handshake."""
        return type(p.answer) in (_Handshake, _Probe)

    def is_probe(self, p: Pending) -> bool:
        """Whether ``p`` is the probe (its errors are read as 2026-07-28 ones)."""
        return type(p.answer) is _Probe

    # -- time ----------------------------------------------------------------------------------

    def due(self, now: float) -> None:
        """The probe's fallback time passed with no answer: ask in the handshake era too, so
        a server that silently ignores unknown methods is reached in well under a second."""
        if self.fallback_at is not None and self.fallback_at <= now:
            self.fallback_at = None
            if self._owner.state is State.PROBING:
                handshake = self.send_initialize(now)
                # One opening, two requests: the probe waits as long as the handshake sent
                # after it.  A modern server slow to start (past the probe's own deadline)
                # still answers the probe it read first, and refuses the initialize with a
                # -32022 that says nothing of the time the opening had.  (A probe already
                # due, when the clock comes late, is left to expire.)
                self._wire.postpone([q.rid for q in self._wire.pending.values()
                                     if self.is_probe(q) and q.deadline > now],
                                    handshake.deadline)

    def postpone(self, until: float) -> None:
        """The transport holds the probe (authorization): the fallback waits too."""
        if self.fallback_at is not None and self.fallback_at < until:
            self.fallback_at = until

    # -- outcomes ------------------------------------------------------------------------------

    def on_initialize_result(self, p: Pending, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        error: MCPError | None = None
        server_info = None
        if version not in self.legacy_versions:
            error = UnsupportedVersion(self.legacy_versions, version)
        else:
            try:
                if "serverInfo" not in result:
                    raise RemoteProtocolError("initialize result lacks serverInfo (L-03)")
                server_info = parse_implementation(result["serverInfo"])
            except RemoteProtocolError as exc:
                error = exc
        if error is not None or server_info is None:
            assert error is not None
            self.opening_failed(p, error)
            return
        assert isinstance(version, str)
        self._end_opening()
        self._owner._opened_legacy(p.handle, version, result, server_info)

    def on_discover_result(self, p: Pending, result: dict[str, Any]) -> None:
        try:
            discovered = parse_discover(result, self._wire.now)
        except RemoteProtocolError as exc:
            self.opening_failed(p, exc)
            return
        mutual = [v for v in self.modern_versions if v in discovered.supported_versions]
        if not mutual:
            self.opening_failed(p, UnsupportedVersion(self.modern_versions,
                                                      list(discovered.supported_versions)))
            return
        self.become_modern(p.handle, mutual[0], discovered)

    def become_modern(self, handle: RequestHandle[Any], version: str,
                      discovered: Discovered) -> None:
        wire = self._wire
        wire.modern = True
        wire.meta = self._owner._modern_meta(version)
        self._end_opening()
        self._owner._opened_modern(handle, version, discovered)

    def _end_opening(self) -> None:
        """The era is decided: forget the other opening request (its answer will be dropped
        and counted) and become READY."""
        self.fallback_at = None
        self._wire.drop(self.is_opening)
        owner = self._owner
        owner.state = transition(owner.state, Input.INIT_OK)

    def opening_failed(self, p: Pending, error: MCPError) -> None:
        """The probe or the handshake failed.  Section 2.3 decides what that means."""
        other = self._other_opening(p)
        if isinstance(error, AuthorizationError):
            # Authorization failed (denied, refused, misconfigured): the same HTTP layer
            # answers both eras, so this says nothing about the era, and asking again in the
            # other one would only send the user back to the browser.
            self.fallback_at = None
            self._owner._fail_opening(p.handle, error)
            return
        if type(p.answer) is not _Probe:  # the handshake failed
            if other is not None:
                self._init_error = error  # the probe may still succeed
                return
            self._owner._fail_opening(p.handle, error)
            return
        self.fallback_at = None
        wire = self._wire
        supported = _supported_of(error)
        if supported is not None:
            mutual = [v for v in self.modern_versions if v in supported]
            if mutual and not p.retried:  # V-11: retry once with a new id
                retry = self.send_discover(wire.take_id(), p.handle, mutual[0], wire.now,
                                           p.total_timeout, total_deadline=p.total_deadline)
                retry.retried = True
                return
            if not any(v in supported for v in self.legacy_versions):
                self._owner._fail_opening(p.handle, UnsupportedVersion(self.versions,
                                                                       supported))
                return
        if not self.legacy_versions or self.mode == "modern":
            self._owner._fail_opening(p.handle, error)
            return
        # Any other answer (or none) means a handshake-era server (V-22: pre-GA codes too).
        if other is None:
            if self._init_error is not None:  # the handshake already failed too
                # Refused as a 2026-07-28 server refuses it (-32022 naming a version this
                # client speaks), the handshake says the server is modern: the probe's own
                # failure (its timeout, say) is what the caller must hear.
                refused_as_modern = self._refused_as_modern(self._init_error)
                self._owner._fail_opening(p.handle,
                                          error if refused_as_modern else self._init_error)
                return
            self.send_initialize(wire.now)
        owner = self._owner
        if owner.state is State.PROBING:
            owner.state = transition(owner.state, Input.FALLBACK)

    def _refused_as_modern(self, error: MCPError) -> bool:
        """Whether ``error`` is a -32022 naming a 2026-07-28 version this client speaks."""
        supported = _supported_of(error)
        return supported is not None and any(v in supported for v in self.modern_versions)

    def _other_opening(self, exclude: Pending) -> Pending | None:
        for q in self._wire.pending.values():
            if q is not exclude and self.is_opening(q):
                return q
        return None

    def retry_version(self, p: Pending, error: RpcError) -> str | None:
        """V-11, for any modern request: a -32022 names versions the server speaks; the
        newest mutual one, which every later request uses, or None (no retry)."""
        if not isinstance(error, UnsupportedProtocolVersion):
            return None
        mutual = [v for v in self.modern_versions if v in error.supported]
        if not mutual:
            return None
        self._wire.meta = self._owner._modern_meta(mutual[0])
        return mutual[0]

    # -- a remembered era ----------------------------------------------------------------------

    def on_refresh(self, result: dict[str, Any]) -> None:
        try:
            discovered = parse_discover(result, self._wire.now)
        except RemoteProtocolError as exc:
            self.refresh_failed(exc)
            return
        if self._owner.protocol_version not in discovered.supported_versions:
            self.refresh_failed(UnsupportedVersion(self.modern_versions,
                                                   list(discovered.supported_versions)))
            return
        self._owner._rediscovered(discovered)

    def refresh_failed(self, error: MCPError) -> None:
        if isinstance(error, RpcError) and error.code in MODERN_ERROR_CODES:
            return  # a recognised 2026 error: the server is still a modern one
        if isinstance(error, AuthorizationError):
            return  # authorization failed: the calls say so; nothing is known of the era
        self.assumption_failed = True
        self._owner._era_lost(error)

    def ended(self, transport: bool) -> None:
        """The session ends (the transport's end when ``transport``): V-23, a handshake-era
        server may have exited on the probe, and the binding restarts it.  A server that
        exited without reading the probe (``input_unread``) was not killed by it: its exit is
        the answer, and it is not started again."""
        self.fallback_at = None
        self.probe_died = (transport and self.probe_sent and self._owner.era is None
                           and not self.input_unread
                           and bool(self.legacy_versions) and self.mode != "modern")
