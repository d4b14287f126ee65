"""mcp-proto: a sans-IO Model Context Protocol client.

The core in this package does no I/O and reads no clock: feed it bytes and the time, and it
gives back events and bytes.  Runtime bindings live in :mod:`mcp_proto_io`.

The package owns the shared records (its top-level modules ``_types``, ``_events``,
``_errors``, ``_auth_errors``, ``_limits``, ``_versions``, ``_build``, ``_capabilities``,
``_redact``, ``_telemetry``, ``_tasks``, ``_skills``, ``_frontmatter``, ``_elicitation`` and
``_notes``, which every room may import and which import no room) and this
public face, which re-exports the rooms' public names.  The face may import every room but
:mod:`mcp_proto.http`: :mod:`mcp_proto.wire` and :mod:`mcp_proto.session` at import time,
:mod:`mcp_proto.auth` and :mod:`mcp_proto.host` on first use (PEP 562); it never imports
:mod:`mcp_proto_io`.
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
from ._elicitation import (
    URL_ELICITATION_REQUIRED,
    InvalidUrlElicitation,
    UrlElicitation,
    UrlElicitationRequired,
    parse_url_elicitation,
    url_elicitation_result,
)
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
    LOG_LEVELS,
    BadMessage,
    Closed,
    Completed,
    ElicitationComplete,
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
from ._frontmatter import FrontmatterError, parse_frontmatter
from ._limits import Limits
from ._redact import MIN_SECRET_LENGTH, REDACTED, Redactor, redact_url
from ._skills import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILLS_EXTENSION,
    AmbiguousSkill,
    InvalidSkillEntry,
    InvalidSkillPath,
    LoadedSkill,
    Skill,
    SkillContent,
    SkillDigestMismatch,
    SkillError,
    SkillFile,
    SkillFileError,
    SkillFileNotListed,
    SkillFrontmatterInvalid,
    SkillFrontmatterMismatch,
    SkillSizeMismatch,
    SkillTooLarge,
    SkillVerificationError,
    UnknownSkill,
    check_skill_md,
    check_skill_size,
    find_skill,
    parse_skill,
    resolve_skill_path,
    skill_body,
    skill_contents_bytes,
    skill_file,
    verify_skill_file,
)
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
from .session._receiver import ReceivedTask, TaskStore
from .session._session import ClientSession, SessionStats
from .session._state import State
from .wire._jsonrpc import RequestId
from .wire._ndjson import NdjsonFramer, Oversize

if TYPE_CHECKING:  # imported on first use: see _LAZY
    from ._telemetry import (
        CLIENT_OPERATION_DURATION,
        CLIENT_SESSION_DURATION,
        DURATION_BUCKETS,
        SERVER_OPERATION_DURATION,
        TRACE_CONTEXT_KEYS,
        Peer,
        SessionEnd,
        SpanEnd,
        SpanEvent,
        SpanSink,
        SpanStart,
        Telemetry,
        error_type,
        session_digest,
        span_name,
    )
    from .auth._config import AuthConfig, Tokens
    from .auth._events import AuthEvent, Authorized, AuthStatus, RedirectRequired, SaveRecord
    from .auth._exchange import AuthExchange, AuthResponse
    from .auth._flow import OAuthFlow
    from .auth._jwt import Signer
    from .auth._urls import address_zone

__version__ = "0.1.0"

#: Names imported when first used (PEP 562), each from the module that defines it.  The
#: OAuth machine (the flow, its steps, discovery, JOSE, URL checks) would be more than a third
#: of the core's import, and a client without authorization never runs it; its errors stay
#: eager (light, and raised without a flow too).  ``host`` is the subpackage, loaded by its
#: first use as an attribute.
_LAZY = {
    "AuthConfig": ".auth._config",
    "Tokens": ".auth._config",
    "AuthEvent": ".auth._events",
    "AuthStatus": ".auth._events",
    "Authorized": ".auth._events",
    "RedirectRequired": ".auth._events",
    "SaveRecord": ".auth._events",
    "AuthExchange": ".auth._exchange",
    "AuthResponse": ".auth._exchange",
    "OAuthFlow": ".auth._flow",
    "Signer": ".auth._jwt",
    "address_zone": ".auth._urls",
    "CLIENT_OPERATION_DURATION": "._telemetry",
    "CLIENT_SESSION_DURATION": "._telemetry",
    "DURATION_BUCKETS": "._telemetry",
    "SERVER_OPERATION_DURATION": "._telemetry",
    "TRACE_CONTEXT_KEYS": "._telemetry",
    "Peer": "._telemetry",
    "SessionEnd": "._telemetry",
    "SpanEnd": "._telemetry",
    "SpanEvent": "._telemetry",
    "SpanSink": "._telemetry",
    "SpanStart": "._telemetry",
    "Telemetry": "._telemetry",
    "error_type": "._telemetry",
    "session_digest": "._telemetry",
    "span_name": "._telemetry",
    "host": ".host",
}

__all__ = [
    "ALL_VERSIONS",
    "CLIENT_OPERATION_DURATION",
    "CLIENT_SESSION_DURATION",
    "DURATION_BUCKETS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LOG_LEVELS",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "MIN_SECRET_LENGTH",
    "MODERN_VERSIONS",
    "REDACTED",
    "RELATED_TASK_KEY",
    "SERVER_OPERATION_DURATION",
    "SKILLS_EXTENSION",
    "TASKS_EXTENSION",
    "TRACE_CONTEXT_KEYS",
    "URL_ELICITATION_REQUIRED",
    "AmbiguousSkill",
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
    "ElicitationComplete",
    "EmbeddedResource",
    "Event",
    "Failed",
    "FrontmatterError",
    "GetPromptResult",
    "HeaderMismatch",
    "ImageContent",
    "Implementation",
    "InsufficientScope",
    "InvalidSkillEntry",
    "InvalidSkillPath",
    "InvalidUrlElicitation",
    "IssuerMismatch",
    "Limits",
    "ListChanged",
    "LoadedSkill",
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
    "Peer",
    "PkceUnsupported",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "Ready",
    "ReceivedTask",
    "Redactor",
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
    "SessionEnd",
    "SessionExpired",
    "SessionStats",
    "Signer",
    "Skill",
    "SkillContent",
    "SkillDigestMismatch",
    "SkillError",
    "SkillFile",
    "SkillFileError",
    "SkillFileNotListed",
    "SkillFrontmatterInvalid",
    "SkillFrontmatterMismatch",
    "SkillSizeMismatch",
    "SkillTooLarge",
    "SkillVerificationError",
    "SpanEnd",
    "SpanEvent",
    "SpanSink",
    "SpanStart",
    "State",
    "SubscriptionEnded",
    "Task",
    "TaskCancelled",
    "TaskNotFound",
    "TaskStateError",
    "TaskStatus",
    "TaskStore",
    "Telemetry",
    "TextContent",
    "TextResourceContents",
    "TokenError",
    "Tokens",
    "Tool",
    "UnknownContent",
    "UnknownSkill",
    "UnsafeUrl",
    "UnsupportedProtocolVersion",
    "UnsupportedVersion",
    "UrlElicitation",
    "UrlElicitationRequired",
    "accepted_versions",
    "address_zone",
    "check_skill_md",
    "check_skill_size",
    "client_capabilities",
    "era_of",
    "error_type",
    "find_skill",
    "parse_frontmatter",
    "parse_skill",
    "parse_url_elicitation",
    "redact_url",
    "resolve_skill_path",
    "session_digest",
    "skill_body",
    "skill_contents_bytes",
    "skill_file",
    "span_name",
    "url_elicitation_result",
    "verify_skill_file",
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
