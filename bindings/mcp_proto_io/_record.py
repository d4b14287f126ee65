"""``record=PATH``: a client's session written as a transcript (:mod:`mcp_proto.testing`'s
format, version 1), for :func:`connect_replay` and the pytest plugin to play back.

Recording sits where the bytes already pass: the connection's tracer (each JSON-RPC message,
both ways, redacted as a trace is), the stderr line splitter, the HTTP exchange heads, and the
client's lifecycle (ready, the server's exit, the client's close).  Each line is written and
flushed as it comes (an unbuffered file: a crash keeps everything before it), from whichever
thread or task produced it, under a lock.  The transcript is bounded
(:data:`mcp_proto.testing.MAX_TRANSCRIPT_BYTES` by default): past it one ``truncated`` line
is written and nothing more.  Writing never fails the connection: an error is logged once on
``mcp_proto_io.lifecycle`` and the recording stops.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_proto import Implementation, Redactor

if TYPE_CHECKING:
    from mcp_proto.testing import TranscriptWriter

__all__ = ["Recording"]

_LIFECYCLE = logging.getLogger("mcp_proto_io.lifecycle")


class Recording:
    """One client's transcript file (created, or emptied, when the client is made)."""

    __slots__ = ("_file", "_lock", "_redactor", "_sent", "_writer", "path")

    def __init__(self, path: str | os.PathLike[str], *, transport: str, target: str,
                 client_info: Implementation, redactor: Redactor,
                 max_bytes: int | None = None) -> None:
        from mcp_proto.testing import TranscriptWriter  # noqa: PLC0415 - recording clients only

        self.path = os.fspath(path)
        self._lock = threading.Lock()
        kwargs: dict[str, Any] = {} if max_bytes is None else {"max_bytes": max_bytes}
        self._writer = TranscriptWriter(
            transport=transport, target=redactor.text(target),
            client={"name": client_info.name, "version": client_info.version},
            start=time.monotonic(), **kwargs)  # what it is given is redacted already
        self._redactor = redactor
        self._sent: set[object] = set()  # ids of requests sent and not answered yet
        self._file: Any = open(self.path, "wb", buffering=0)  # noqa: SIM115 - closed in close()
        self._put(lambda w: w.header())

    def __repr__(self) -> str:
        return f"Recording({self.path!r})"

    def message(self, direction: str, obj: object) -> None:
        """A JSON-RPC message (already redacted) sent or received.  A request sent again
        under its own id before any answer (HTTP: after a 401 was answered by
        authorization) is the same message: recorded once, as the client's session sent it."""
        with self._lock:
            if isinstance(obj, dict) and "id" in obj:
                rid = _id_key(obj.get("id"))
                if direction == "send" and "method" in obj:
                    if rid in self._sent:
                        return
                    self._sent.add(rid)
                elif direction == "recv" and "method" not in obj:
                    self._sent.discard(rid)
            self._write(self._writer.message(direction, obj, time.monotonic()))

    def http(self, head: Mapping[str, Any]) -> None:
        """An HTTP answer's head: the exchange's method, the status and the headers."""
        text = self._redactor.text
        headers = {_text(k).lower(): text(_text(v)) for k, v in head.get("headers", ())}
        self._put(lambda w: w.http(str(head.get("method")), head.get("status"), headers,
                                   time.monotonic()))

    def stderr(self, line: str) -> None:
        self._put(lambda w: w.stderr(line, time.monotonic()))

    def ready(self, era: str, protocol_version: str) -> None:
        self._put(lambda w: w.ready(era, protocol_version, time.monotonic()))

    def exit(self, code: int | None, stderr_tail: str) -> None:
        """The server ended: its connection's requests are over (the next connection's
        session numbers its requests afresh)."""
        with self._lock:
            self._sent.clear()
        self._put(lambda w: w.exit(code, stderr_tail, time.monotonic()))

    def close(self) -> None:
        """The client closed: the last line, and the file is closed.  Idempotent."""
        self._put(lambda w: w.closed(time.monotonic()))
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _put(self, line: Callable[[TranscriptWriter], bytes]) -> None:
        """The line ``line`` makes, made and written under the lock (the writer counts
        the bytes and cuts the transcript: one thread at a time)."""
        with self._lock:
            self._write(line(self._writer))

    def _write(self, data: bytes) -> None:
        if not data or self._file is None:
            return
        try:
            self._file.write(data)
        except (OSError, ValueError) as exc:  # a full disk, a closed file: stop here
            self._file = None
            _LIFECYCLE.warning("recording to %s stopped: %s", self.path, exc)


def _id_key(value: object) -> object:
    """A JSON-RPC id as a set member (1 and "1" apart; anything else by its text)."""
    return (type(value).__name__, value if isinstance(value, int | str) else repr(value))


def _text(value: object) -> str:
    return value.decode("latin-1") if isinstance(value, bytes | bytearray) else str(value)
