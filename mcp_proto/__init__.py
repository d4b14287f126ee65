"""mcp-proto: a sans-IO Model Context Protocol client.

The core in this package does no I/O and reads no clock: feed it bytes and the time, and it
gives back events and bytes.  Runtime bindings live in :mod:`mcp_proto_io`.
"""

from __future__ import annotations

from ._capabilities import client_capabilities
from ._errors import (
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    ServerExited,
    SessionExpired,
    UnsupportedVersion,
)
from ._events import (
    BadMessage,
    Closed,
    Completed,
    Event,
    Failed,
    ListChanged,
    LogMessage,
    OtherNotification,
    Progress,
    Ready,
    RequestHandle,
    ResourceUpdated,
    ServerRequest,
    ServerRequestCancelled,
)
from ._jsonrpc import RequestId
from ._limits import Limits
from ._ndjson import NdjsonFramer, Oversize
from ._session import ClientSession, SessionStats
from ._state import State
from ._types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    CompleteResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    Implementation,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    Root,
    TextContent,
    TextResourceContents,
    Tool,
    UnknownContent,
)
from ._versions import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, accepted_versions

__version__ = "0.1.0"

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "AudioContent",
    "BadMessage",
    "BlobResourceContents",
    "CallToolResult",
    "ClientSession",
    "Closed",
    "CompleteResult",
    "Completed",
    "ConnectionClosed",
    "ContentBlock",
    "EmbeddedResource",
    "Event",
    "Failed",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "Limits",
    "ListChanged",
    "LocalProtocolError",
    "LogMessage",
    "MCPError",
    "MessageTooLarge",
    "NdjsonFramer",
    "OtherNotification",
    "Oversize",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Ready",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestHandle",
    "RequestId",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ResourceUpdated",
    "Root",
    "RpcError",
    "ServerExited",
    "ServerRequest",
    "ServerRequestCancelled",
    "SessionExpired",
    "SessionStats",
    "State",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "UnknownContent",
    "UnsupportedVersion",
    "accepted_versions",
    "client_capabilities",
    "__version__",
]
