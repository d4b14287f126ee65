"""What the ``mcp-proto`` command shows on stderr while it works: the progress bar, task status
lines, the "waiting for git (starting, 3.2 s)" line, and the library's log records (``-v``,
``--trace``, warnings).

On a terminal one transient line (the progress bar or the waiting line) sits at the bottom of
stderr (:class:`StatusLine`); every permanent line (a log record, a task's status) is written
above it.  When stderr is not a terminal nothing transient is drawn: progress only with
``--progress``, as plain lines (``progress 3/5 msg``).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TextIO

from mcp_proto import Progress, TaskStatus
from mcp_proto.host import ServerStatus

__all__ = [
    "BAR_WIDTH",
    "LOGGER",
    "MAX_STATUS_TEXT",
    "WAIT_REDRAW",
    "ProgressBar",
    "StatusLine",
    "TaskStatusLine",
    "WaitingLine",
    "isatty",
    "stderr_logging",
    "waiting_text",
]

#: Width of the progress bar drawn on a terminal.
BAR_WIDTH = 30
#: A transient line is cut to this many characters, so that it never wraps on an ordinary
#: terminal (a wrapped line cannot be erased with one carriage return).
MAX_STATUS_TEXT = 200
#: Seconds between redraws of the waiting line: often enough that its clock looks alive,
#: rarely enough to cost nothing.
WAIT_REDRAW = 0.25
#: The library's root logger: the command puts one stderr handler on it.
LOGGER = "mcp_proto_io"

_ERASE = "\r\x1b[2K"


def _stderr() -> TextIO:
    return sys.stderr  # the stderr of now, not of the import (tests swap it)


class StatusLine:
    """The one transient line at the bottom of a terminal's stderr, and the permanent lines
    written above it.  Thread-safe: log records come from the clients' reader threads."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = _stderr() if stream is None else stream
        self.tty = isatty(self.stream)
        self._lock = threading.Lock()
        self._text = ""

    def show(self, text: str) -> None:
        """Draw ``text`` as the transient line (a terminal only)."""
        if not self.tty:
            return
        with self._lock:
            self._text = text[:MAX_STATUS_TEXT]
            self._write(_ERASE + self._text)

    def clear(self) -> None:
        """Erase the transient line, if one is drawn."""
        with self._lock:
            if self._text:
                self._text = ""
                self._write(_ERASE)

    def line(self, text: str) -> None:
        """Write one permanent line, above the transient one (redrawn below it)."""
        with self._lock:
            prefix = _ERASE if self._text else ""
            self._write(prefix + text + "\n" + self._text)

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stderr
            self.stream.write(text)
            self.stream.flush()


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False for one without ``isatty`` or closed)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class ProgressBar:
    """Draws ``notifications/progress``: a bar on a terminal's stderr; with ``force`` (the
    ``--progress`` flag) plain lines ``progress 3/5 msg`` when stderr is not a terminal;
    nothing otherwise."""

    def __init__(self, status: StatusLine | None = None, force: bool = False) -> None:
        self.status = StatusLine() if status is None else status
        self.force = force

    def __call__(self, event: Progress) -> None:
        if self.status.tty:
            if event.total:
                frac = max(0.0, min(1.0, event.progress / event.total))
                filled = int(frac * BAR_WIDTH)
                bar = "#" * filled + "." * (BAR_WIDTH - filled)
                text = f"[{bar}] {event.progress:g}/{event.total:g}"
            else:
                text = f"[{event.progress:g}]"
            self.status.show(text + (f" {event.message}" if event.message else ""))
        elif self.force:
            total = f"/{event.total:g}" if event.total else ""
            message = f" {event.message}" if event.message else ""
            self.status.line(f"progress {event.progress:g}{total}{message}"[:MAX_STATUS_TEXT])

    def done(self) -> None:
        self.status.clear()


class TaskStatusLine:
    """Prints a task's status changes on stderr, one permanent line each (they matter after
    the run too: the task id is what ``resume`` takes)."""

    def __init__(self, status: StatusLine | None = None) -> None:
        self.status = StatusLine() if status is None else status
        #: How many status changes were shown: a call that ran as a task has at least its
        #: creation; none means the call ran plainly.
        self.seen = 0

    def __call__(self, event: TaskStatus) -> None:
        self.seen += 1
        task = event.task
        text = f"task {task.task_id}: {task.status}"
        if task.status_message:
            text += f" - {task.status_message}"
        self.status.line(text[:300])


def waiting_text(servers: Mapping[str, ServerStatus], now: float) -> str:
    """``waiting for git (starting, 3.2 s)``, for the servers now starting ("" for none):
    the time since each status's ``started_at`` (set for every starting server, on the
    host's monotonic clock, as ``now``)."""
    parts = []
    for name, status in servers.items():
        if status.state != "starting":
            continue
        started = status.started_at
        took = f", {max(0.0, now - started):.1f} s" if started is not None else ""
        parts.append(f"{name} (starting{took})")
    return f"waiting for {', '.join(parts)}" if parts else ""


class WaitingLine:
    """While a call or an open waits, redraws "waiting for NAME (starting, 3.2 s)" every
    :data:`WAIT_REDRAW` seconds from ``servers()`` (a Host's statuses, whose ``started_at``
    is on the monotonic clock), and erases it when done.  Nothing at all (no thread)
    when stderr is not a terminal.  Use it as a context manager around the wait."""

    def __init__(self, servers: Callable[[], Mapping[str, ServerStatus]],
                 status: StatusLine) -> None:
        self.servers = servers
        self.status = status
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def __enter__(self) -> WaitingLine:
        if self.status.tty:
            self._thread = threading.Thread(target=self._run, name="mcp-proto-cli-waiting",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._drawn:
            self.status.clear()

    def _run(self) -> None:
        while not self._stop.wait(WAIT_REDRAW):
            try:
                text = waiting_text(self.servers(), time.monotonic())
            except Exception:  # the host closed under us: nothing to draw
                continue
            if text:
                self.status.show(text)
                self._drawn = True
            elif self._drawn:
                self.status.clear()
                self._drawn = False


# -- the library's log records -----------------------------------------------------------------


#: A Host's state change with the error that caused it: ``running -> failed (Type: text)``.
_CHANGE = re.compile(r"^(?P<change>\S+ -> \S+) \((?P<type>\w+): (?P<error>.*)\)(?P<tail>;.*)?$")


class _Handler(logging.Handler):
    """Writes each record as one line through a :class:`StatusLine`: ``[server] message``;
    a warning or worse says its level; a wire record (``--trace``) its time.  A lifecycle
    line does not repeat the server's name (the prefix has it), and a state change does not
    repeat an error the server's line just said (``exited with code 7 ...``)."""

    def __init__(self, status: StatusLine) -> None:
        super().__init__(logging.DEBUG)
        self.status = status
        self._said: dict[str, str] = {}  # server -> its last lifecycle warning, as logged

    def _lifecycle(self, server: str, message: str, level: int) -> str:
        logged = message
        for prefix in (f"server {server!r}: ", f"server {server!r} "):
            if message.startswith(prefix):
                message = message[len(prefix):]
                break
        said = self._said.get(server)
        m = _CHANGE.match(message)
        if m is not None and said is not None and m["error"] == said:
            message = m["change"] + (m["tail"] or "")
        elif level >= logging.WARNING:
            self._said[server] = logged
        return message

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = " ".join(record.getMessage().splitlines())  # one line each
            server = getattr(record, "mcp_server", None)
            if server and record.name == f"{LOGGER}.lifecycle":
                message = self._lifecycle(str(server), message, record.levelno)
            head = f"[{server}] " if server else "mcp-proto: "
            if record.name == f"{LOGGER}.wire":
                clock = time.strftime("%H:%M:%S", time.localtime(record.created))
                head = f"[{clock}.{int(record.msecs):03d}] {head}"
            elif record.levelno >= logging.WARNING:
                head += f"{record.levelname.lower()}: "
            self.status.line(head + message)
        except Exception:  # logging never breaks the command
            self.handleError(record)


@contextlib.contextmanager
def stderr_logging(status: StatusLine, *, verbose: bool, trace: bool) -> Iterator[None]:
    """For the command's run: warnings of the library on stderr (one line each); with
    ``verbose`` each server's stderr lines, log messages and state changes; with ``trace``
    every JSON-RPC message.  Restores the loggers after."""
    root = logging.getLogger(LOGGER)
    # Without -v a server's failure is said once, by the command (not also by the lifecycle
    # logger); every other warning shows, one line each.
    levels: dict[str, int] = {LOGGER: logging.WARNING, f"{LOGGER}.lifecycle": logging.ERROR}
    if verbose:
        levels |= {f"{LOGGER}.stderr": logging.INFO, f"{LOGGER}.server_log": logging.DEBUG,
                   f"{LOGGER}.lifecycle": logging.INFO}
    if trace:
        levels[f"{LOGGER}.wire"] = logging.DEBUG
    saved = {name: logging.getLogger(name).level for name in levels}
    handler = _Handler(status)
    root.addHandler(handler)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
