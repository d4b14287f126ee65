"""The I/O bounds every binding shares (threads, asyncio, trio), each with its reason.  The
protocol's own bounds live in :mod:`mcp_proto._limits`."""

from __future__ import annotations

from mcp_proto import Implementation

__all__ = [
    "BIG_READ_SIZE",
    "CONNECT_TIMEOUT",
    "DEFAULT_CLIENT_INFO",
    "DELETE_TIMEOUT",
    "MAX_HTTP_EXCHANGES",
    "MAX_IDLE_CONNECTIONS",
    "PROCESS_POLL_INTERVAL",
    "READ_SIZE",
    "STDERR_SETTLE",
    "STDOUT_SETTLE",
]

#: Bytes asked of a pipe or socket per read.  Small, because os.read allocates the whole size
#: before it knows how much came; a read that fills it switches to :data:`BIG_READ_SIZE` (a
#: large message is streaming in) until a read brings less than :data:`READ_SIZE`.
READ_SIZE = 1 << 16
BIG_READ_SIZE = 1 << 20

#: How often a stdio connection checks that the server process still runs, in seconds.  Only
#: matters when the server died but a grandchild keeps its stdout open (no EOF arrives).
PROCESS_POLL_INTERVAL = 0.5

#: Seconds to wait for the stderr reader to collect a dying server's last words.
STDERR_SETTLE = 0.5

#: Longest time a stdio connection lets the stdout reader drain what a server wrote before it
#: exited, before it declares the server gone itself (only when no EOF comes).
STDOUT_SETTLE = 2.0

#: Exchanges one HTTP connection object runs at once (each needs its own TCP connection:
#: HTTP/1.1 has no pipelining here).  Beyond it, exchanges wait their turn.
MAX_HTTP_EXCHANGES = 64

#: Idle keep-alive connections kept per client for reuse: as many as exchanges may run at
#: once, so 64 calls in flight do not open and close connections every round.
MAX_IDLE_CONNECTIONS = MAX_HTTP_EXCHANGES

#: Seconds to open a TCP (and TLS) connection.
CONNECT_TIMEOUT = 10.0

#: Seconds given to the DELETE that ends a handshake-era session on close (best effort).
DELETE_TIMEOUT = 2.0

DEFAULT_CLIENT_INFO = Implementation(name="mcp-proto", version="0.1.0")
