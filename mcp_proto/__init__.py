"""mcp-proto: a sans-IO Model Context Protocol client.

The core in this package does no I/O and reads no clock: feed it bytes and the time, and it
gives back events and bytes.  Runtime bindings live in :mod:`mcp_proto_io`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._auth_errors import (
    AuthorizationDenied,
    AuthorizationError,
    AuthorizationRejected,
    AuthorizationRequired,
    CallbackRejected,
    DiscoveryError,
    InsufficientScope,
    IssuerMismatch,
    PkceUnsupported,
    RegistrationError,
    ResourceMismatch,
    TokenError,
    UnsafeUrl,
)
from ._capabilities import client_capabilities
from ._errors import (
    ConnectionClosed,
    ConnectionLost,
    HeaderMismatch,
    LocalProtocolError,
    MCPError,
    MessageTooLarge,
    MissingClientCapability,
    NotSent,
    RemoteProtocolError,
    RequestCancelled,
    RequestTimeout,
    RpcError,
    ServerExited,
    SessionExpired,
    UnsupportedProtocolVersion,
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
    SubscriptionEnded,
    TaskStatus,
)
from ._jsonrpc import RequestId
from ._limits import Limits
from ._ndjson import NdjsonFramer, Oversize
from ._session import ClientSession, SessionStats
from ._state import State
from ._tasks import (
    RELATED_TASK_KEY,
    TASKS_EXTENSION,
    Task,
    TaskCancelled,
    TaskNotFound,
    TaskStateError,
)
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
from ._versions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSIONS,
    accepted_versions,
    era_of,
)

if TYPE_CHECKING:  # imported on first use: see _LAZY
    from ._auth_config import AuthConfig, Tokens
    from ._auth_events import AuthEvent, Authorized, AuthStatus, RedirectRequired, SaveRecord
    from ._auth_exchange import AuthExchange, AuthResponse
    from ._auth_flow import OAuthFlow
    from ._auth_jwt import Signer
    from ._auth_urls import address_zone

__version__ = "0.1.0"

#: Names imported when first used (PEP 562), each from the module that defines it.  The
#: OAuth machine (the flow, its steps, discovery, JOSE, URL checks) would be more than a third
#: of the core's import, and a client without authorization never runs it; its errors stay
#: eager (light, and raised without a flow too).  ``host`` is the subpackage, loaded by its
#: first use as an attribute.
_LAZY = {
    "AuthConfig": "._auth_config",
    "Tokens": "._auth_config",
    "AuthEvent": "._auth_events",
    "AuthStatus": "._auth_events",
    "Authorized": "._auth_events",
    "RedirectRequired": "._auth_events",
    "SaveRecord": "._auth_events",
    "AuthExchange": "._auth_exchange",
    "AuthResponse": "._auth_exchange",
    "OAuthFlow": "._auth_flow",
    "Signer": "._auth_jwt",
    "address_zone": "._auth_urls",
    "host": ".host",
}

__all__ = [
    "ALL_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "MODERN_VERSIONS",
    "RELATED_TASK_KEY",
    "TASKS_EXTENSION",
    "AudioContent",
    "AuthConfig",
    "AuthEvent",
    "AuthExchange",
    "AuthResponse",
    "AuthStatus",
    "AuthorizationDenied",
    "AuthorizationError",
    "AuthorizationRejected",
    "AuthorizationRequired",
    "Authorized",
    "BadMessage",
    "BlobResourceContents",
    "CallToolResult",
    "CallbackRejected",
    "ClientSession",
    "Closed",
    "CompleteResult",
    "Completed",
    "ConnectionClosed",
    "ConnectionLost",
    "ContentBlock",
    "DiscoveryError",
    "EmbeddedResource",
    "Event",
    "Failed",
    "GetPromptResult",
    "HeaderMismatch",
    "ImageContent",
    "Implementation",
    "InsufficientScope",
    "IssuerMismatch",
    "Limits",
    "ListChanged",
    "LocalProtocolError",
    "LogMessage",
    "MCPError",
    "MessageTooLarge",
    "MissingClientCapability",
    "NdjsonFramer",
    "NotSent",
    "OAuthFlow",
    "OtherNotification",
    "Oversize",
    "PkceUnsupported",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Ready",
    "RedirectRequired",
    "RegistrationError",
    "RemoteProtocolError",
    "RequestCancelled",
    "RequestHandle",
    "RequestId",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceMismatch",
    "ResourceTemplate",
    "ResourceUpdated",
    "Root",
    "RpcError",
    "SaveRecord",
    "ServerExited",
    "ServerRequest",
    "ServerRequestCancelled",
    "SessionExpired",
    "SessionStats",
    "Signer",
    "State",
    "SubscriptionEnded",
    "Task",
    "TaskCancelled",
    "TaskNotFound",
    "TaskStateError",
    "TaskStatus",
    "TextContent",
    "TextResourceContents",
    "TokenError",
    "Tokens",
    "Tool",
    "UnknownContent",
    "UnsafeUrl",
    "UnsupportedProtocolVersion",
    "UnsupportedVersion",
    "accepted_versions",
    "address_zone",
    "client_capabilities",
    "era_of",
    "__version__",
]

if not TYPE_CHECKING:  # (a __getattr__ mypy saw would make every unknown name an Any)

    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module  # noqa: PLC0415 - only on a first use

        loaded = import_module(module, __name__)
        value = loaded if name == "host" else getattr(loaded, name)
        globals()[name] = value  # the next lookup is an ordinary one
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_LAZY})
