"""Wire pieces of the 2026-07-28 stateless era: per-request ``_meta``, ``server/discover``,
``resultType``, multi round-trip requests (MRTR) and cache hints.

Pure functions and small records; the session decides when to use them.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any

from .._errors import RemoteProtocolError
from .._events import RequestHandle
from .._types import Implementation, parse_implementation

__all__ = [
    "CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "MRTR_METHODS",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "BASE64_SENTINEL",
    "Discovered",
    "Gather",
    "header_value",
    "mcp_header_params",
    "parse_discover",
    "parse_input_required",
    "request_meta",
    "subscription_id",
    "ttl_seconds",
]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

#: The only methods a server may answer with ``input_required`` (section 7).
MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

#: Methods whose results carry ``ttlMs`` / ``cacheScope`` (S-02).
CACHEABLE = frozenset({"tools/list", "prompts/list", "resources/list",
                       "resources/templates/list", "resources/read"})


def request_meta(version: str, capabilities: dict[str, Any], client_info: dict[str, Any] | None,
                 log_level: str | None) -> dict[str, Any]:
    """The ``_meta`` every modern request carries (M-01)."""
    meta: dict[str, Any] = {PROTOCOL_VERSION_KEY: version, CAPABILITIES_KEY: capabilities}
    if client_info is not None:
        meta[CLIENT_INFO_KEY] = client_info
    if log_level is not None:
        meta[LOG_LEVEL_KEY] = log_level
    return meta


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovered:
    """What ``server/discover`` said (V-12)."""

    supported_versions: tuple[str, ...]
    capabilities: dict[str, Any]
    server_info: Implementation
    instructions: str | None = None
    expires_at: float = 0.0
    """When this answer stops being fresh (S-02: received + ``ttlMs``, on the session's
    clock); a session started from a stale one refreshes it in the background."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_discover(result: dict[str, Any], now: float = 0.0) -> Discovered:
    """Validate a DiscoverResult.  Raises :class:`RemoteProtocolError` naming the problem."""
    versions = result.get("supportedVersions")
    if type(versions) is not list or not all(type(v) is str for v in versions):
        raise RemoteProtocolError(
            f"server/discover result lacks a list of supportedVersions: {versions!r}"[:200])
    capabilities = result.get("capabilities")
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if type(meta) is dict else None
    # serverInfo is a SHOULD (M-02) and display only: a server without it is still usable.
    server_info = (parse_implementation(info) if info is not None
                   else Implementation(name="(unnamed server)", version=""))
    instructions = result.get("instructions")
    return Discovered(supported_versions=tuple(versions),
                      capabilities=capabilities if type(capabilities) is dict else {},
                      server_info=server_info,
                      instructions=instructions if type(instructions) is str else None,
                      expires_at=now + ttl_seconds(result), raw=result)


def parse_input_required(result: dict[str, Any],
                         method: str) -> tuple[dict[str, tuple[str, dict[str, Any]]], str | None]:
    """The input requests and request state of an ``input_required`` result (section 7).

    Raises :class:`RemoteProtocolError` for a malformed one.
    """
    raw = result.get("inputRequests")
    state = result.get("requestState")
    if state is not None and type(state) is not str:
        raise RemoteProtocolError(f"{method}: requestState must be a string, got {state!r}"[:200])
    requests: dict[str, tuple[str, dict[str, Any]]] = {}
    if raw is not None:
        if type(raw) is not dict:
            raise RemoteProtocolError(f"{method}: inputRequests must be an object")
        for key, entry in raw.items():
            if type(entry) is not dict or type(entry.get("method")) is not str:
                raise RemoteProtocolError(
                    f"{method}: input request {key!r} lacks a method: {entry!r}"[:200])
            params = entry.get("params")
            if params is not None and type(params) is not dict:
                raise RemoteProtocolError(f"{method}: params of input request {key!r} must be "
                                          "an object")
            requests[key] = (entry["method"], params or {})
    if not requests and state is None:
        raise RemoteProtocolError(f"{method}: input_required result has neither inputRequests "
                                  "nor requestState")
    return requests, state


#: The longest cache lifetime honoured, in ms (a year): a server's "forever" is a year here.
MAX_TTL_MS = 365 * 24 * 3600 * 1000


def ttl_seconds(result: dict[str, Any]) -> float:
    """``ttlMs`` in seconds: absent or negative is 0, i.e. not cacheable (S-02)."""
    ttl = result.get("ttlMs")
    if type(ttl) is int:
        ttl = min(max(ttl, 0), MAX_TTL_MS)  # clamp first: a huge int does not fit a float
    elif type(ttl) is float and math.isfinite(ttl):
        ttl = min(max(ttl, 0.0), MAX_TTL_MS)
    else:
        return 0.0
    return ttl / 1000.0


def subscription_id(params: dict[str, Any]) -> object:
    meta = params.get("_meta")
    return meta.get(SUBSCRIPTION_ID_KEY) if type(meta) is dict else None


class Gather:
    """One MRTR round waiting for the host's answers (GATHERING in section 7's table)."""

    __slots__ = ("deadline", "handle", "keys", "pending", "request_state", "responses")

    def __init__(self, handle: RequestHandle[Any], request_state: str | None, pending: Any) -> None:
        self.handle = handle
        self.pending = pending
        """The answered request (the session's record), to retry from."""
        self.deadline: float = pending.total_deadline
        """The call's total deadline still runs while the host answers (as in the handshake
        era, where the pending call's timer runs during a server request)."""
        self.request_state = request_state
        self.keys: dict[str, str] = {}  # synthetic request id -> inputRequests key
        self.responses: dict[str, Any] = {}

    @property
    def complete(self) -> bool:
        return len(self.responses) == len(self.keys)


# -- x-mcp-header (T-06, X-21) --------------------------------------------------------------

_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
BASE64_SENTINEL = "=?base64?"


def _count_annotations(node: object) -> int:
    if isinstance(node, dict):
        own = 1 if "x-mcp-header" in node else 0
        return own + sum(_count_annotations(v) for v in node.values())
    if isinstance(node, list):
        return sum(_count_annotations(v) for v in node)
    return 0


def mcp_header_params(input_schema: dict[str, Any]) -> dict[tuple[str, ...], str]:
    """The arguments a tool mirrors into ``Mcp-Param-{Name}`` headers: argument path ->
    header name.  Raises ``ValueError`` naming the problem when an annotation is invalid
    (T-06): the tool must then be left out of the list."""
    found: dict[tuple[str, ...], str] = {}
    seen: set[str] = set()

    def walk(schema: dict[str, Any], path: tuple[str, ...]) -> None:
        props = schema.get("properties")
        if not isinstance(props, dict):
            return
        for name, sub in props.items():
            if not isinstance(sub, dict):
                continue
            if "x-mcp-header" in sub:
                header = sub["x-mcp-header"]
                if not isinstance(header, str) or not header:
                    raise ValueError(f"x-mcp-header of {name!r} must be a non-empty string")
                if not set(header) <= _TOKEN_CHARS:
                    raise ValueError(f"x-mcp-header {header!r} is not an HTTP token")
                if header.lower() in seen:
                    raise ValueError(f"x-mcp-header {header!r} is used twice")
                if sub.get("type") not in _HEADER_TYPES:
                    raise ValueError(f"x-mcp-header {header!r} is on a property of type "
                                     f"{sub.get('type')!r}; only string, integer, boolean")
                seen.add(header.lower())
                key = (*path, name)
                found[key] = header
            walk(sub, (*path, name))

    walk(input_schema, ())
    if _count_annotations(input_schema) != len(found):
        raise ValueError("an x-mcp-header is not reachable through properties alone "
                         "(items, oneOf, anyOf, allOf, not, if/then/else, $ref are not allowed)")
    return found


def header_value(value: object) -> str | None:
    """The ``Mcp-Param-*`` value of an argument (X-21), or None to omit the header."""
    if value is None:
        return None
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        if abs(value) > 2**53 - 1:
            return None
        return str(value)
    if isinstance(value, str):
        plain = (value.isascii() and value.isprintable() and value == value.strip()
                 and not value.startswith(BASE64_SENTINEL))
        if plain:
            return value
        return BASE64_SENTINEL + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="
    return None
