"""The error hierarchy.  Every error says what was wrong and whose fault it was.

- :class:`LocalProtocolError`: the caller (the host or a binding) misused the API.
- :class:`RemoteProtocolError`: the server broke the protocol.
- :class:`RpcError`: the server answered a request with a JSON-RPC error.
- :class:`RequestTimeout`, :class:`RequestCancelled`: the request ended on our side.
- :class:`ConnectionClosed`: the caller closed the client.  Its subclasses say why else it
  ended: :class:`ConnectionLost` (the transport failed or never came up),
  :class:`ServerExited` (the process ended), :class:`SessionExpired` (HTTP 404): a request in
  flight may have run on the server and is never replayed; :class:`NotSent`: the run ended
  before the request was written (nothing reached the server: safe to send again).
- :class:`UnsupportedVersion`: no protocol version both sides speak.

A result with ``isError: true`` is *not* an exception: it is a normal ``CallToolResult``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConnectionClosed",
    "ConnectionLost",
    "HeaderMismatch",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "modern_rpc_error",
    "MODERN_ERROR_CODES",
    "LocalProtocolError",
    "MCPError",
    "MessageTooLarge",
    "NotSent",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestTimeout",
    "RpcError",
    "ServerExited",
    "SessionExpired",
    "UnsupportedVersion",
]


class MCPError(Exception):
    """Base class of every error mcp-proto raises or reports."""


class LocalProtocolError(MCPError):
    """The caller used the API wrongly (for example a call before the handshake).

    This is a bug in the calling code; fix the call rather than retrying it.
    """


class RemoteProtocolError(MCPError):
    """The server sent something the protocol does not allow.

    When it concerns one request, only that request fails; the session stays usable unless the
    framing itself broke.
    """


class MessageTooLarge(RemoteProtocolError):
    """A message from the server exceeded the size limit; its bytes were discarded."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"server sent a message of at least {size} bytes, over the limit of {limit} bytes; "
            "it was discarded (raise Limits.max_message_size if the server is trusted)"
        )


class RpcError(MCPError):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str = "") -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f" to {method}" if method else ""
        super().__init__(f"server answered{where} with error {code}: {message}")


class HeaderMismatch(RpcError):
    """-32020 (2026-07-28): HTTP headers and body disagreed.  Refresh ``tools/list`` and retry."""


class MissingClientCapability(RpcError):
    """-32021 (2026-07-28, M-03): the request needs a client capability that was not declared.
    ``required_capabilities`` is what the server asked for."""

    @property
    def required_capabilities(self) -> Any:
        data = self.data
        return data.get("requiredCapabilities") if isinstance(data, dict) else None


class UnsupportedProtocolVersion(RpcError):
    """-32022 (2026-07-28, V-11): the server does not speak the requested version.
    ``supported`` lists the versions it does (the client already retried once if one fit)."""

    @property
    def supported(self) -> list[str]:
        data = self.data
        value = data.get("supported") if isinstance(data, dict) else None
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    @property
    def requested(self) -> Any:
        return self.data.get("requested") if isinstance(self.data, dict) else None


_MODERN_CODES: dict[int, type[RpcError]] = {
    -32020: HeaderMismatch,
    -32021: MissingClientCapability,
    -32022: UnsupportedProtocolVersion,
}

#: The error codes 2026-07-28 defines (section 4.2): proof that a server speaks that era.
MODERN_ERROR_CODES = frozenset(_MODERN_CODES)


def modern_rpc_error(code: int, message: str, data: Any = None, *,
                     method: str = "") -> RpcError:
    """The typed error for a 2026-07-28 error answer.  Pre-GA codes (-32001/-32003/-32004 of
    the release candidate) are not recognised (V-22): they stay plain :class:`RpcError`."""
    return _MODERN_CODES.get(code, RpcError)(code, message, data, method=method)


class RequestTimeout(MCPError):
    """A request got no answer in time; a cancellation was sent to the server.

    ``kind`` is ``"idle"`` (no response nor progress for ``timeout`` seconds) or ``"total"``.
    """

    def __init__(self, method: str, timeout: float, kind: str) -> None:
        self.method = method
        self.timeout = timeout
        self.kind = kind
        what = "without a response or progress" if kind == "idle" else "in total"
        super().__init__(f"{method} timed out after {timeout:g} s {what}")


class RequestCancelled(MCPError):
    """The request was cancelled by the caller (see ``ClientSession.cancel``)."""

    def __init__(self, method: str, reason: str | None = None) -> None:
        self.method = method
        self.reason = reason
        super().__init__(f"{method} was cancelled" + (f": {reason}" if reason else ""))


class ConnectionClosed(MCPError):
    """The connection ended; every pending request fails with this.  The plain class means
    the caller closed the client (or the session); every other end is a subclass.

    A binding may open a new connection on the next call; a tool call is never replayed.
    """


class ConnectionLost(ConnectionClosed):
    """The transport failed: the server's command could not start, an HTTP connection could
    not be made or broke, a stream ended before its answer.  A request in flight may have run
    on the server; it is never replayed.  The next call connects again."""


class NotSent(ConnectionClosed):
    """Nothing of the request was sent: the client's only run was over before it (a Host's
    server client, once its server exited or the Host stopped it).  Safe to send again; the
    Host routes such a call to the server's next run itself.  ``reason`` is the error the run
    ended with (None: it was closed)."""

    def __init__(self, message: str, reason: MCPError | None = None) -> None:
        self.reason = reason
        super().__init__(message if reason is None else f"{message}: {reason}")


class ServerExited(ConnectionLost):
    """The server process ended.  Carries its exit code, the last bytes of its stderr (the
    client's secret values already replaced: :class:`~mcp_proto.Redactor`) and the name of
    the server (``server``: the client's ``label``, None when unknown), which the message
    gives: ``server 'time' exited with code 1``."""

    def __init__(self, exit_code: int | None, stderr_tail: str = "", *,
                 server: str | None = None) -> None:
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.server = server
        msg = f"server {server!r} exited with code {exit_code}" if server \
            else f"server exited with code {exit_code}"
        if stderr_tail:
            last = stderr_tail.strip().splitlines()[-3:]
            msg += "; last stderr lines: " + " | ".join(last)
        super().__init__(msg)


class SessionExpired(ConnectionLost):
    """The server forgot the session (HTTP 404).  The call was not replayed; retry it if safe."""


class UnsupportedVersion(MCPError):
    """The server chose a protocol version this client does not speak.

    The session is closed; the server should be upgraded or the client configured with that
    version.
    """

    def __init__(self, offered: tuple[str, ...], received: object) -> None:
        self.offered = offered
        self.received = received
        super().__init__(
            f"server answered with protocol version {received!r}; this client speaks "
            + ", ".join(offered)
        )
