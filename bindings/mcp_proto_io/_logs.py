"""What a client lets the host see: standard :mod:`logging` loggers, and its callbacks.

The loggers, silent by default (a :class:`logging.NullHandler` on ``mcp_proto_io``; configure
``logging`` to see them), each record carrying the server's name as ``record.mcp_server``
(the client's ``label``):

``mcp_proto_io.stderr``
    each line a stdio server writes to its stderr, at INFO.
``mcp_proto_io.server_log``
    each ``notifications/message`` a server sends, at its level mapped (debug: DEBUG;
    info, notice: INFO; warning: WARNING; error: ERROR; critical, alert, emergency:
    CRITICAL).  The message is the log's data (text as it is, anything else as JSON),
    prefixed with the server's logger name when it gave one.
``mcp_proto_io.lifecycle``
    a client connected (INFO), closed (INFO), its server exited (WARNING); the Host logs
    its servers' state changes here too.
``mcp_proto_io.wire``
    each JSON-RPC message, both ways, at DEBUG: ``send {json}`` / ``recv {json}``.  Only
    when the logger is enabled for DEBUG at connect (otherwise tracing costs nothing).

Everything shown is redacted first (:class:`mcp_proto.Redactor`: the env and header values
the client was given, and the values of credential-looking keys in messages).  The
client's ``on_stderr(line)`` and ``on_trace(direction, message)`` callbacks see the same
redacted lines and messages; an exception they raise is printed and otherwise ignored (it
never breaks the reader).  They run on the client's reader (a thread, or the event loop):
they must return quickly and must not call the client.  Showing never fails a connection
either: a message that cannot be shown (nested too deeply for ``json``, say) is logged as a
placeholder such as ``<message too deeply nested to show>``, and the bytes go on to the
session untouched.

Redaction comes before any cut: a line, a tail or an excerpt is redacted whole (or with a
margin of the longest secret past the cut) and cut afterwards, so a secret crossing the cut
is replaced whole, never shown in part.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_proto import LogMessage, NdjsonFramer, Oversize, Redactor

from ._handlers import StderrCallback, TraceCallback

if TYPE_CHECKING:
    from ._record import Recording

__all__ = [
    "LIFECYCLE",
    "PYTHON_LEVELS",
    "MAX_STDERR_LINE",
    "SERVER_LOG",
    "STDERR",
    "TOO_DEEP",
    "WIRE",
    "Observer",
    "StderrLines",
    "Tracer",
]

#: The loggers, by their documented names.
STDERR = logging.getLogger("mcp_proto_io.stderr")
SERVER_LOG = logging.getLogger("mcp_proto_io.server_log")
LIFECYCLE = logging.getLogger("mcp_proto_io.lifecycle")
WIRE = logging.getLogger("mcp_proto_io.wire")

# Silent unless the host configures logging: without a handler, Python's last resort
# would print every WARNING (a server's exit) on stderr.
logging.getLogger("mcp_proto_io").addHandler(logging.NullHandler())

#: Characters of one stderr line kept (the rest is cut): a server that writes a megabyte
#: without a newline must not make one log record (or one callback argument) that large.
MAX_STDERR_LINE = 4096

#: Bytes of an unfinished stderr line buffered before it is cut (4 bytes per character at
#: most in UTF-8): the rest, up to the next newline, is dropped.
_MAX_PARTIAL = MAX_STDERR_LINE * 4

#: MCP's log levels (:data:`mcp_proto.LOG_LEVELS`) -> ``logging`` levels.
PYTHON_LEVELS = {
    "debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO,
    "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL,
    "alert": logging.CRITICAL, "emergency": logging.CRITICAL,
}

#: Bytes of one traced message decoded (the framer's bound): larger ones are shown by size.
MAX_TRACED_MESSAGE = 16 * 1024 * 1024

#: Characters of what did not parse shown in a wire record: enough to recognise it.
MAX_EXCERPT = 200

#: What a wire record shows of a message that ``json`` cannot parse or write back, or the
#: redactor cannot copy, for its nesting: the message itself still reaches the session.
TOO_DEEP = "<message too deeply nested to show>"


def _safely(fn: Callable[..., object], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # a host callback must never break the reader
        traceback.print_exc()


def _unshown(exc: Exception) -> str:
    """The placeholder of a message that showing failed on (never the message)."""
    if isinstance(exc, RecursionError):
        return TOO_DEEP
    return f"<message not shown: {type(exc).__name__}>"


def _excerpt(redactor: Redactor, text: str, limit: int = MAX_EXCERPT) -> str:
    """The first ``limit`` characters of ``text``, redacted before the cut (a secret
    crossing it is replaced whole, then the replacement is cut)."""
    if len(text) <= limit:
        return redactor.text(text)
    return redactor.text(text[:limit + redactor.longest], 0, limit)[:limit]


class Observer:
    """What one client tells, and to whom: its ``label`` (``record.mcp_server``), its
    redactor, its callbacks.  One per client; every connection of it asks for its
    :meth:`stderr_lines` and :meth:`tracer`."""

    __slots__ = ("extra", "label", "on_stderr", "on_trace", "recording", "redactor")

    def __init__(self, label: str, redactor: Redactor, on_stderr: StderrCallback | None,
                 on_trace: TraceCallback | None) -> None:
        self.label = label
        self.redactor = redactor
        self.on_stderr = on_stderr
        self.on_trace = on_trace
        self.extra = {"mcp_server": label}
        self.recording: Recording | None = None  # record=PATH: every message, line, head

    def stderr_lines(self) -> StderrLines:
        """The line splitter of one server process's stderr."""
        return StderrLines(self)

    def tracer(self) -> Tracer | None:
        """The tracer of one connection, or None when nobody listens (no ``on_trace``, the
        wire logger not enabled for DEBUG): decided now, at connect, so that a connection
        not traced does no work per message."""
        if self.on_trace is None and self.recording is None \
                and not WIRE.isEnabledFor(logging.DEBUG):
            return None
        return Tracer(self)

    def stderr_line(self, line: str) -> None:
        """One line of the server's stderr (decoded, without its newline), redacted then cut
        to :data:`MAX_STDERR_LINE` characters.  Never raises."""
        try:
            line = _excerpt(self.redactor, line, MAX_STDERR_LINE)
            if self.recording is not None:
                self.recording.stderr(line)
            if self.on_stderr is not None:
                _safely(self.on_stderr, line)
            if STDERR.isEnabledFor(logging.INFO):
                STDERR.info("%s", line, extra=self.extra)
        except Exception:  # pragma: no cover - showing must never break the reader
            traceback.print_exc()

    def server_log(self, event: LogMessage) -> None:
        """A ``notifications/message`` the server sent (logged when enabled).  Never raises:
        data that cannot be written as JSON is logged as a placeholder."""
        try:
            level = PYTHON_LEVELS.get(event.level, logging.INFO)
            if not SERVER_LOG.isEnabledFor(level):
                return
            data = event.data
            try:
                text = data if isinstance(data, str) else json.dumps(
                    self.redactor.message(data), ensure_ascii=False, default=str)
                text = self.redactor.text(text)
            except Exception as exc:  # nested beyond json's reach, say
                text = _unshown(exc)
            if event.logger:
                text = f"{self.redactor.text(str(event.logger))}: {text}"
            SERVER_LOG.log(level, "%s", text, extra=self.extra)
        except Exception:  # pragma: no cover - showing must never break the reader
            traceback.print_exc()

    def lifecycle(self, level: int, text: str) -> None:
        """A lifecycle event of the client (connected, closed, exited).  Never raises."""
        try:
            if LIFECYCLE.isEnabledFor(level):
                LIFECYCLE.log(level, "%s", self.redactor.text(text), extra=self.extra)
        except Exception:  # pragma: no cover - logging must never fail a call
            traceback.print_exc()


class StderrLines:
    """Splits a server's stderr bytes into lines for :meth:`Observer.stderr_line`; an
    unfinished line is kept (bounded) until its newline or the end."""

    __slots__ = ("_dropping", "_max_partial", "_observer", "_partial")

    def __init__(self, observer: Observer) -> None:
        self._observer = observer
        self._partial = bytearray()
        self._dropping = False  # the current line was cut: drop up to its newline
        # An unfinished line is told once it holds the longest secret's bytes past what is
        # shown: a secret crossing the end of what was buffered starts after the cut.
        self._max_partial = _MAX_PARTIAL + observer.redactor.longest_bytes

    def wanted(self) -> bool:
        """Whether anyone listens (checked per chunk: the stderr logger may be turned on
        while the server runs)."""
        observer = self._observer
        return observer.on_stderr is not None or observer.recording is not None \
            or STDERR.isEnabledFor(logging.INFO)

    def feed(self, data: bytes) -> None:
        """Bytes the server wrote to stderr."""
        if not self._partial and not self._dropping and not self.wanted():
            return
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._dropping:
                self._dropping = False
            else:
                self._partial += data[start:end]
                self._line()
            start = end + 1
        if not self._dropping:
            self._partial += data[start:]
            if len(self._partial) > self._max_partial:
                self._line()  # the first MAX_STDERR_LINE characters now, the rest dropped
                self._dropping = True

    def feed_eof(self) -> None:
        """The stderr pipe ended: a last unfinished line is a line."""
        if self._partial:
            self._line()
        self._dropping = False

    def _line(self) -> None:
        raw, self._partial = self._partial, bytearray()
        text = raw.decode("utf-8", "replace").rstrip("\r")
        self._observer.stderr_line(text)


class Tracer:
    """The JSON-RPC messages of one connection, both ways, to ``on_trace`` and the wire
    logger (redacted).  A stdio connection feeds it the bytes (:meth:`sent`,
    :meth:`received`: decoded here, only when tracing), an HTTP one the messages
    (:meth:`message`)."""

    __slots__ = ("_framer", "_observer")

    def __init__(self, observer: Observer) -> None:
        self._observer = observer
        self._framer = NdjsonFramer(MAX_TRACED_MESSAGE)

    def sent(self, data: bytes) -> None:
        """NDJSON bytes written to the server (whole lines).  Never raises."""
        try:
            lines = data.split(b"\n")
        except Exception as exc:  # pragma: no cover - not bytes: a bug
            self._show("send", _unshown(exc))
            return
        for line in lines:
            if line.strip():
                self._line("send", line)

    def received(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes the server wrote (any chunking).  Never raises."""
        framer = self._framer
        try:
            framer.feed(data)
            while (line := framer.next_line()) is not None:
                if isinstance(line, Oversize):
                    self._show("recv", f"<a message of at least {line.size} bytes>")
                elif line.strip():
                    self._line("recv", line)
        except Exception as exc:  # pragma: no cover - the framer's bug
            self._framer = NdjsonFramer(MAX_TRACED_MESSAGE)  # start afresh
            self._show("recv", _unshown(exc))

    def message(self, direction: str, obj: object) -> None:
        """A JSON value sent or received over HTTP (a message, a batch, or what did not
        parse), or an answer's head (``"http"``: for a recording only).  Never raises."""
        if direction == "http":
            recording = self._observer.recording
            if recording is not None and isinstance(obj, dict):
                _safely(recording.http, obj)
            return
        if isinstance(obj, list):
            for item in obj:
                self.message(direction, item)
        elif isinstance(obj, dict):
            self._traced(direction, obj)
        else:
            try:
                text = _excerpt(self._observer.redactor, repr(obj))
            except Exception as exc:  # a repr that fails, or nests too deep
                text = _unshown(exc)
            self._show(direction, text)

    def _line(self, direction: str, line: bytes | bytearray) -> None:
        try:
            obj = json.loads(line)
        except RecursionError as exc:
            self._show(direction, _unshown(exc))
            return
        except Exception:  # not JSON (ValueError), or not text
            redactor = self._observer.redactor
            head = bytes(line[:(MAX_EXCERPT + redactor.longest) * 4])
            text = _excerpt(redactor, head.decode("utf-8", "replace"))
            self._show(direction, f"<not JSON: {text}>")
            return
        self.message(direction, obj)

    def _traced(self, direction: str, obj: dict[str, Any]) -> None:
        observer = self._observer
        try:
            shown = observer.redactor.message(obj)
        except Exception as exc:  # pragma: no cover - not a JSON value
            self._show(direction, _unshown(exc))
            return
        if observer.recording is not None:
            observer.recording.message(direction, shown)  # never raises: it logs and stops
        if observer.on_trace is not None:
            _safely(observer.on_trace, direction, shown)
        try:
            if WIRE.isEnabledFor(logging.DEBUG):
                text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"),
                                  default=str)
                WIRE.debug("%s %s", direction, text, extra=observer.extra)
        except Exception as exc:  # nested beyond json's reach, say
            self._show(direction, _unshown(exc))

    def _show(self, direction: str, text: str) -> None:
        try:
            if WIRE.isEnabledFor(logging.DEBUG):
                WIRE.debug("%s %s", direction, text, extra=self._observer.extra)
        except Exception:  # pragma: no cover - logging's own handlers catch their errors
            traceback.print_exc()
