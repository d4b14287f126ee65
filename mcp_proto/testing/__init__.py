"""The test doubles' server side: the in-memory server, transcripts and their replay.

Owns what lets a test talk to "a server" without a process: :mod:`._server` (a small MCP
server in memory, both eras, whose handlers the driver runs; its registrations and method
tables in :mod:`._catalog`, its tasks in :mod:`._tasks`), :mod:`._transcript` (a recorded
session, written and read) and :mod:`._replay` (a server played back from a transcript).
Everything here is sans-IO like the rest of :mod:`mcp_proto`: bytes in, bytes out, time a
parameter.  It may import only the shared records (the top-level ``mcp_proto/_*.py`` modules)
and :mod:`mcp_proto.wire`; nothing of the session, the transports or the bindings.  The
bindings carry them: ``connect_memory(server)``, ``connect_replay(path)``, ``record=PATH``
and the pytest plugin (:mod:`mcp_proto_io.pytest_plugin`).
"""

from __future__ import annotations

from ._replay import ReplayDivergence, ReplayServer
from ._server import HandlerCall, MemoryServer
from ._transcript import (
    MAX_TRANSCRIPT_BYTES,
    TRANSCRIPT_VERSION,
    Entry,
    Transcript,
    TranscriptError,
    TranscriptWriter,
    load_transcript,
    read_transcript,
)

__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "TRANSCRIPT_VERSION",
    "Entry",
    "HandlerCall",
    "MemoryServer",
    "ReplayDivergence",
    "ReplayServer",
    "Transcript",
    "TranscriptError",
    "TranscriptWriter",
    "load_transcript",
    "read_transcript",
]
