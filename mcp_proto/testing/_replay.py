"""A server side played from a transcript: what a recorded server said, when the client says
what the recorded client said.

:class:`ReplayServer` speaks the ENDPOINT interface the bindings' in-memory driver pumps
(``receive_data`` / ``receive_eof`` / ``data_to_send`` / ``stderr_to_send`` /
``next_deadline`` / ``handle_timeout`` / ``exit_code``), so a test runs a real client
against a recording with no process and no network.  Its rules are a contract:

1. **Framing.**  Client messages arrive as NDJSON bytes, framed by
   :class:`~mcp_proto.wire._ndjson.NdjsonFramer` at ``limits.max_message_size`` (a longer
   line is a divergence), decoded as UTF-8 JSON (anything else is a divergence); a batch's
   members are matched one by one.
2. **Eligible.**  Each client message must match an eligible recorded ``send`` entry: the
   unmatched ones from the earliest unmatched up to (not past) the next ``recv`` entry that
   follows it in the recording, so requests the client sent together may arrive in any
   order.  The client's answer to a server request already emitted is always eligible.
3. **Matching.**  A request or notification: the same ``method``, both requests or both
   notifications, and equal params after *normalizing*: ``_meta`` dropped from the top of
   params, ``clientInfo`` dropped from ``initialize``'s, a missing params read as ``{}``;
   a ``notifications/cancelled``'s recorded ``requestId`` is first mapped to the live id.
   A response: the same id as recorded, and ``result`` (or ``error``) equal after dropping
   its top-level ``_meta``.  Values compare as Python's ``==`` does (no sorting of lists).
   ``relax(recorded, actual) -> bool`` may accept a pair these rules refuse; it is asked
   about each eligible entry in turn, after the rules refused them all (what it raises
   propagates: it is the test's code).
4. **Divergence.**  No eligible match: a :class:`ReplayDivergence` (expected messages and
   the actual one side by side) is kept in :attr:`ReplayServer.divergence`, its text goes to
   stderr, :attr:`~ReplayServer.exit_code` becomes 1 and later input is ignored.  Nothing is
   raised from :meth:`~ReplayServer.receive_data`; a test calls
   :meth:`~ReplayServer.check_complete` (which raises it, or names the first recorded message
   the client never sent).
5. **Ids.**  When a recorded request is matched, its recorded id maps to the live one, and
   its recorded ``_meta.progressToken`` to the live one (when both have one).  Emitted
   messages are copies with: a response's ``id`` mapped; ``params.progressToken`` of
   ``notifications/progress`` mapped; ``params.requestId`` of ``notifications/cancelled``
   mapped; ``_meta["io.modelcontextprotocol/subscriptionId"]`` in params or result mapped (a
   listen stream is named by its request's id).  Ids of server requests are kept as recorded
   (the client answers with them).
6. **Release.**  A recorded ``recv`` or ``stderr`` entry is released once every ``send``
   entry before it is matched, and every one after a ``closed`` entry also waits for
   :meth:`~ReplayServer.receive_eof` (the client's close is what the server answered).
   Released entries come out in recorded order.  ``speed=None`` ("compressed", the default)
   emits them at once; with a ``speed`` each is due at its release time plus
   ``(entry.t - t of the last send (or closed) entry before it) / speed`` (``1.0``: as
   recorded; ``2.0``: twice as fast): :meth:`~ReplayServer.next_deadline` says when, and
   :meth:`~ReplayServer.handle_timeout` emits what is due.  Release times count from the
   first clock the server sees; until then :meth:`~ReplayServer.next_deadline` answers
   ``0.0`` when something is released already (call ``handle_timeout(now)`` at once).
7. **Exit.**  An ``exit`` entry, once reached (after everything before it was emitted), sets
   :attr:`~ReplayServer.exit_code` (its recorded code; null is 0) and puts its
   ``stderr_tail`` on stderr if the transcript has no ``stderr`` entries; nothing is emitted
   or read after it.  :meth:`~ReplayServer.receive_eof` sets ``exit_code = 0`` unless it is
   set, or an ``exit`` entry is released and due later.
8. **The rest.**  ``http``, ``ready`` and ``closed`` entries are information.  Once a
   ``truncated`` entry is reached, any further client message is a divergence "the
   recording was cut here".

Pure: no I/O, no clock (``now`` is a parameter).
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._errors import ServerExited
from .._limits import Limits
from .._redact import REDACTED
from ..wire._json import dumps, loads
from ..wire._ndjson import NdjsonFramer, Oversize
from ._catalog import SUBSCRIPTION_ID_KEY, take
from ._transcript import Entry, Transcript

__all__ = ["MAX_SHOWN_MESSAGE", "MAX_SHOWN_EXPECTED", "SUBSCRIPTION_ID_KEY", "ReplayDivergence",
           "ReplayServer"]

#: Characters of each message a divergence shows: enough to see which call and which
#: argument differ, short enough that a 10 MiB result does not flood the test's output.
MAX_SHOWN_MESSAGE = 2000
#: Expected messages a divergence's text shows (all are in :attr:`ReplayDivergence.expected`).
MAX_SHOWN_EXPECTED = 5

Relax = Callable[[dict[str, Any], dict[str, Any]], bool]


def _shown(obj: Any) -> str:
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(obj)
    if len(text) > MAX_SHOWN_MESSAGE:
        text = text[:MAX_SHOWN_MESSAGE] + f"... ({len(text)} characters)"
    return text


class ReplayDivergence(ServerExited):
    """The client did not do what the recorded client did: it sent a message no eligible
    recorded one matches, or (from :meth:`ReplayServer.check_complete`) never sent one.
    A :class:`~mcp_proto.ServerExited` (exit code 1): the played-back server ends there,
    and every call in flight fails with this error.

    :attr:`expected` holds the recorded messages that were eligible (the missing one, for
    :meth:`~ReplayServer.check_complete`), :attr:`actual` what the client sent (``{}`` when
    it sent nothing; ``{"unreadable": ...}`` for a line that is not a JSON object,
    ``{"oversize": bytes}`` for one over the limit), :attr:`line` the transcript line of the
    first expected message (None: none was).  The text shows them as compact JSON, each cut
    at :data:`MAX_SHOWN_MESSAGE` characters.  Fix the test (or record it again), or accept
    the difference with ``relax``."""

    def __init__(self, summary: str, expected: list[dict[str, Any]], actual: dict[str, Any],
                 line: int | None) -> None:
        self.summary = summary
        self.expected = expected
        self.actual = actual
        self.line = line
        rows = [summary + (f" (transcript line {line})" if line is not None else "")]
        if not expected:
            rows.append("  expected: (nothing)")
        for i, msg in enumerate(expected[:MAX_SHOWN_EXPECTED]):
            rows.append(f"  {'expected' if i == 0 else '      or'}: {_shown(msg)}")
        if len(expected) > MAX_SHOWN_EXPECTED:
            rows.append(f"        (and {len(expected) - MAX_SHOWN_EXPECTED} more)")
        rows.append(f"  actual:   {_shown(actual) if actual else '(nothing)'}")
        text = "\n".join(rows)
        super().__init__(1, text, server="replay")
        self.args = (text,)


@dataclass(slots=True)
class _Send:
    """A recorded client message (a batch's member each)."""

    entry: Entry
    msg: Any
    pos: int
    """Index of its entry in the transcript."""
    end: int = 0
    """Index (in the sends) past the last one eligible with it: the next ``recv``'s."""
    matched: bool = False


@dataclass(slots=True)
class _Out:
    """A recorded ``recv``, ``stderr``, ``exit`` or ``truncated`` entry."""

    entry: Entry
    sends_before: int
    gated: bool
    """A ``closed`` entry comes before it: it waits for the client's EOF too."""
    since: float
    """``t`` of the last send (or closed) entry before it (0.0: none)."""
    due: float = 0.0


def _key(value: Any) -> tuple[str, Any] | None:
    """A dict key for an id or token (1 and "1" differ; a list cannot be one)."""
    if value is None or type(value) in (int, str, float, bool):
        return (type(value).__name__, value)
    return None


def _normalize(params: Any, method: Any) -> Any:
    if params is None:
        return {}
    if type(params) is not dict:
        return params
    out = {k: v for k, v in params.items() if k != "_meta"}
    if method == "initialize":
        out.pop("clientInfo", None)
    return out


def _same(recorded: Any, actual: Any) -> bool:
    """Whether ``actual`` is what was recorded, reading what the recording redacted as
    "anything": a ``<redacted>`` value (a credential-looking key's, a secret the client was
    given) matches any value, and one inside a string any text there (the recorded client
    sent a secret; the replaying one sends its own)."""
    if recorded == actual:
        return True
    if type(recorded) is str:
        if REDACTED not in recorded:
            return False
        if recorded == REDACTED:
            return True
        if type(actual) is not str:
            return False
        return _glob(recorded.split(REDACTED), actual)
    if type(recorded) is dict:
        return type(actual) is dict and recorded.keys() == actual.keys() and all(
            _same(v, actual[k]) for k, v in recorded.items())
    if type(recorded) is list:
        return type(actual) is list and len(recorded) == len(actual) and all(
            _same(r, a) for r, a in zip(recorded, actual, strict=True))
    return False


def _glob(parts: list[str], text: str) -> bool:
    """Whether ``text`` is ``parts`` joined by any texts (a ``*`` glob), in linear time: the
    first part starts it, the last ends it, the others come in order between."""
    first, last = parts[0], parts[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first) \
            or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for part in parts[1:-1]:
        found = text.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _strip_meta(value: Any) -> Any:
    if type(value) is dict and "_meta" in value:
        return {k: v for k, v in value.items() if k != "_meta"}
    return value


def _token(msg: dict[str, Any]) -> Any:
    params = msg.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return meta.get("progressToken") if type(meta) is dict else None


class ReplayServer:
    """The server side of ``transcript`` (see the module's rules).

    ``speed``: None (compressed: every released message at once) or a positive factor of
    the recorded pace.  ``relax``: see rule 3.  ``limits``: the framing bound of client
    messages.  Raises ``ValueError`` for a ``speed`` that is not a positive finite number;
    nothing else, for any client input (a divergence is recorded, not raised)."""

    __slots__ = ("_answers", "_asked", "_cut", "_emitted", "_eof", "_first", "_framer",
                 "_has_stderr", "_ids", "_out", "_outs", "_relax", "_sends", "_speed",
                 "_stamped", "_start", "_stderr", "_tokens", "_truncated", "divergence",
                 "exit_code", "transcript")

    def __init__(self, transcript: Transcript, *, speed: float | None = None,
                 relax: Relax | None = None, limits: Limits | None = None) -> None:
        if speed is not None and not (isinstance(speed, (int, float)) and math.isfinite(speed)
                                      and speed > 0):
            raise ValueError(f"speed must be None or a positive number, not {speed!r}")
        self.transcript = transcript
        self._speed = None if speed is None else float(speed)
        self._relax = relax
        self._framer = NdjsonFramer((limits or Limits()).max_message_size)
        self.divergence: ReplayDivergence | None = None
        """What ended the replay, if the client diverged from the recording."""
        self.exit_code: int | None = None
        """Set when the "process" ends: flush the output, then end it."""
        self._sends: list[_Send] = []
        self._outs: list[_Out] = []
        self._answers: dict[tuple[str, Any], list[int]] = {}
        self._has_stderr = False
        self._truncated = False
        since, gated = 0.0, False
        for pos, entry in enumerate(transcript.entries):
            kind = entry.kind
            if kind == "send":
                members = entry.data if type(entry.data) is list else [entry.data]
                for msg in members:
                    if type(msg) is dict and "method" not in msg and "id" in msg:
                        key = _key(msg["id"])
                        if key is not None:
                            self._answers.setdefault(key, []).append(len(self._sends))
                    self._sends.append(_Send(entry, msg, pos))
                since = entry.t
            elif kind == "closed":
                gated, since = True, entry.t
            elif kind in ("recv", "stderr", "exit", "truncated"):
                self._outs.append(_Out(entry, len(self._sends), gated, since))
                self._has_stderr = self._has_stderr or kind == "stderr"
                self._truncated = self._truncated or kind == "truncated"
        # the eligible window of each send: the sends before the next recv after it
        entries = transcript.entries
        next_recv = [len(entries)] * (len(entries) + 1)
        for pos in range(len(entries) - 1, -1, -1):
            next_recv[pos] = pos if entries[pos].kind == "recv" else next_recv[pos + 1]
        positions = [send.pos for send in self._sends]
        for send in self._sends:
            send.end = bisect_left(positions, next_recv[send.pos])
        self._first = 0  # the earliest unmatched send
        self._ids: dict[tuple[str, Any], Any] = {}
        self._tokens: dict[tuple[str, Any], Any] = {}
        self._asked: set[tuple[str, Any]] = set()
        self._stamped = 0  # outputs [_emitted, _stamped) are released, waiting to be due
        self._emitted = 0
        self._eof = False
        self._cut = False
        self._start: float | None = None
        self._out = bytearray()
        self._stderr = bytearray()
        if self._speed is None:
            self._pump(0.0)

    # -- the ENDPOINT interface -------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview, now: float) -> None:
        """Client bytes (NDJSON).  Never raises for what they hold."""
        if self.exit_code is not None:
            return
        self._see(now)
        self._framer.feed(data)
        self._read(now)

    def receive_eof(self, now: float) -> None:
        """The client closed its side (stdin): a final unterminated line is read, entries
        after a ``closed`` one are released, and the server ends (rule 7)."""
        if self.exit_code is not None:
            return
        self._see(now)
        self._framer.feed_eof()
        self._read(now)
        if self.exit_code is not None:
            return
        self._eof = True
        self._pump(now)
        waiting = any(o.entry.kind == "exit" for o in self._outs[self._emitted:self._stamped])
        if self.exit_code is None and not waiting:
            self.exit_code = 0

    def data_to_send(self) -> bytes:
        """NDJSON for the client (what was emitted since the last call)."""
        return take(self._out)

    def stderr_to_send(self) -> bytes:
        """The server's stderr since the last call (UTF-8 lines)."""
        return take(self._stderr)

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` has something to emit (None: nothing until the client
        sends; always None when compressed)."""
        if self._speed is None or self.exit_code is not None:
            return None
        if self._start is None:
            return 0.0 if self._outs and self._released(self._outs[0]) else None
        if self._emitted < self._stamped:
            return self._outs[self._emitted].due
        return None

    def handle_timeout(self, now: float) -> None:
        """Emit what is due at ``now``."""
        if self.exit_code is not None:
            return
        self._see(now)
        self._pump(now)

    # -- for the test -----------------------------------------------------------------------

    @property
    def unmatched(self) -> list[Entry]:
        """The recorded ``send`` entries (some member of them) the client never sent."""
        out: list[Entry] = []
        for send in self._sends:
            if not send.matched and (not out or out[-1] is not send.entry):
                out.append(send.entry)
        return out

    def check_complete(self) -> None:
        """Raises the :attr:`divergence` if there was one, else a :class:`ReplayDivergence`
        naming the first recorded client message never sent; returns if the client sent
        every one."""
        if self.divergence is not None:
            raise self.divergence
        for send in self._sends:
            if not send.matched:
                msg = send.msg if type(send.msg) is dict else {"value": send.msg}
                raise ReplayDivergence("the client never sent a recorded message", [msg], {},
                                       send.entry.line)

    # -- reading ----------------------------------------------------------------------------

    def _see(self, now: float) -> None:
        if self._start is None:
            self._start = now

    def _read(self, now: float) -> None:
        framer = self._framer
        while self.exit_code is None and (line := framer.next_line()) is not None:
            if isinstance(line, Oversize):
                self._diverge("the client sent a message over the size limit", [],
                              {"oversize": line.size})
                return
            try:
                value = loads(bytes(line).decode("utf-8"))
            except (ValueError, RecursionError) as exc:
                self._diverge("the client sent a line that is not UTF-8 JSON", [],
                              {"unreadable": f"{type(exc).__name__}: {exc}"[:300]})
                return
            members = value if type(value) is list and value else [value]
            for msg in members:
                if self.exit_code is not None:
                    return
                self._message(msg, now)

    def _message(self, msg: Any, now: float) -> None:
        if type(msg) is not dict:
            self._diverge("the client sent something that is not a JSON-RPC object", [],
                          {"unreadable": _shown(msg)[:300]})
            return
        if self._cut:
            self._diverge("the recording was cut here", [], msg)
            return
        candidates = self._eligible(msg)
        found = next((i for i in candidates if self._matches(self._sends[i].msg, msg)), None)
        if found is None and self._relax is not None:
            found = next((i for i in candidates if type(self._sends[i].msg) is dict
                          and self._relax(self._sends[i].msg, msg)), None)
        if found is None:
            expected = [m if type(m) is dict else {"value": m}
                        for m in (self._sends[i].msg for i in candidates)]
            line = self._sends[candidates[0]].entry.line if candidates else None
            cut = self._truncated and self._first >= len(self._sends)
            self._diverge("the recording was cut here" if cut else
                          "the client sent a message the recording does not have here",
                          expected, msg, line)
            return
        self._match(found, msg)
        self._pump(now)

    def _eligible(self, msg: dict[str, Any]) -> list[int]:
        sends = self._sends
        out: list[int] = []
        if self._first < len(sends):
            out = [i for i in range(self._first, sends[self._first].end)
                   if not sends[i].matched]
        if "method" not in msg and "id" in msg:
            key = _key(msg["id"])
            if key is not None and key in self._asked:
                out += [i for i in self._answers.get(key, ())
                        if not sends[i].matched and i not in out]
        return out

    def _matches(self, rec: Any, act: dict[str, Any]) -> bool:
        if type(rec) is not dict:
            return False
        if "method" in rec:
            method = rec["method"]
            if act.get("method") != method or ("id" in rec) != ("id" in act):
                return False
            recorded = _normalize(rec.get("params"), method)
            if method == "notifications/cancelled" and type(recorded) is dict \
                    and "requestId" in recorded:
                recorded = {**recorded, "requestId": self._live_id(recorded["requestId"])}
            return _same(recorded, _normalize(act.get("params"), method))
        if "method" in act or "id" not in rec or "id" not in act \
                or type(rec["id"]) is not type(act["id"]) or rec["id"] != act["id"]:
            return False
        for part in ("result", "error"):
            if (part in rec) != (part in act):
                return False
            if part in rec and not _same(_strip_meta(rec[part]), _strip_meta(act[part])):
                return False
        return True

    def _match(self, index: int, act: dict[str, Any]) -> None:
        send = self._sends[index]
        send.matched = True
        rec = send.msg
        if type(rec) is dict and "method" in rec and "id" in rec and "id" in act:
            key = _key(rec["id"])
            if key is not None:
                self._ids[key] = act["id"]
            recorded, live = _key(_token(rec)), _token(act)
            if recorded is not None and recorded[1] is not None and live is not None:
                self._tokens[recorded] = live
        sends = self._sends
        while self._first < len(sends) and sends[self._first].matched:
            self._first += 1

    def _diverge(self, summary: str, expected: list[dict[str, Any]], actual: dict[str, Any],
                 line: int | None = None) -> None:
        error = ReplayDivergence(summary, expected, actual, line)
        self.divergence = error
        self._stderr += (str(error) + "\n").encode("utf-8", "replace")
        self.exit_code = 1

    # -- emitting ---------------------------------------------------------------------------

    def _released(self, out: _Out) -> bool:
        return self._first >= out.sends_before and (self._eof or not out.gated)

    def _pump(self, now: float) -> None:
        outs = self._outs
        speed = self._speed
        while self._stamped < len(outs) and self._released(outs[self._stamped]):
            out = outs[self._stamped]
            if speed is not None:
                out.due = now + (out.entry.t - out.since) / speed
            self._stamped += 1
        while self.exit_code is None and self._emitted < self._stamped:
            out = outs[self._emitted]
            if speed is not None and out.due > now:
                return
            self._emitted += 1
            self._emit(out.entry)

    def _emit(self, entry: Entry) -> None:
        kind = entry.kind
        if kind == "recv":
            data = entry.data
            live = [self._live(m) for m in data] if type(data) is list else self._live(data)
            try:
                line = dumps(live)
            except ValueError:  # NaN as the server sent it: written back as it was read
                line = json.dumps(live, separators=(",", ":")).encode("ascii")
            except RecursionError:
                self._diverge("a recorded message is nested too deep to write back", [], {},
                              entry.line)
                return
            self._out += line + b"\n"
        elif kind == "stderr":
            self._stderr += (str(entry.data) + "\n").encode("utf-8", "replace")
        elif kind == "exit":
            code = entry.data.get("code")
            tail = str(entry.data.get("stderr_tail") or "")
            if tail and not self._has_stderr:
                self._stderr += (tail if tail.endswith("\n") else tail + "\n").encode(
                    "utf-8", "replace")
            self.exit_code = code if type(code) is int else 0
        elif kind == "truncated":
            self._cut = True

    def _live_id(self, value: Any) -> Any:
        key = _key(value)
        return self._ids.get(key, value) if key is not None else value

    def _live(self, msg: Any) -> Any:
        """A copy of the recorded server message ``msg`` with the live ids (rule 5)."""
        if type(msg) is not dict:
            return msg
        out = dict(msg)
        method = out.get("method")
        if "id" in out:
            if method is None:
                out["id"] = self._live_id(out["id"])
            else:
                key = _key(out["id"])
                if key is not None:
                    self._asked.add(key)
        params = out.get("params")
        if type(params) is dict:
            params = out["params"] = dict(params)
            if method == "notifications/progress" and "progressToken" in params:
                key = _key(params["progressToken"])
                if key is not None:
                    params["progressToken"] = self._tokens.get(key, params["progressToken"])
            if method == "notifications/cancelled" and "requestId" in params:
                params["requestId"] = self._live_id(params["requestId"])
            self._map_stream(params)
        result = out.get("result")
        if type(result) is dict:
            out["result"] = dict(result)
            self._map_stream(out["result"])
        return out

    def _map_stream(self, holder: dict[str, Any]) -> None:
        meta = holder.get("_meta")
        if type(meta) is dict and SUBSCRIPTION_ID_KEY in meta:
            holder["_meta"] = {**meta, SUBSCRIPTION_ID_KEY: self._live_id(
                meta[SUBSCRIPTION_ID_KEY])}
