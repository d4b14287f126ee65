"""The host layer, pure: many MCP servers as one.

Config files in every ``mcpServers`` dialect (parse, expand, validate, write back, convert),
public tool names and filters, the restart schedule, :class:`HostCore` (every decision of a
multi-server host), and the model-facing side: schemas per provider
(:func:`normalize_schema`), tool definitions (:func:`tool_definition`), results as provider
content (:func:`to_provider_content`) within a :class:`Budget`, the meta-tools
(:data:`META_TOOLS`), and the policy between the host and a model (:class:`ApprovalPolicy`,
:class:`Validation`, :class:`ToolIndex`, :func:`deferred_definitions`,
:func:`format_instructions`).  Like the
rest of :mod:`mcp_proto` it does no I/O and reads no clock: the bindings' ``connect_config``
/ ``Host`` (:mod:`mcp_proto_io.threads`, ``.asyncio``, ``.trio``) read the files and run the
servers.

The room owns the host's records (``_spec``: the config as data, ``_restart``, ``_errors``),
names and filters (``_names``), :class:`HostCore` (``_state``), resources and prompts across
servers (``_catalog``), OAuth settings (``_auth``),
tool definitions (``_tools``), the meta-tools (``_meta``), and what stands between the host
and a model: approvals (``_approval``), checked arguments and outputs (``_validate``), tool
search (``_search``), deferred definitions (``_deferred``) and the servers' instructions,
resources and prompts for a model (``_context``); its subrooms own the config
dialects (:mod:`.config`), the provider schemas (:mod:`.schema`) and the provider content
(:mod:`.content`).  It may import the shared records of :mod:`mcp_proto` and its subrooms,
nothing else of the package (no session, transport or authorization machine); the subrooms
import the shared records and the host's records, never this face or ``_state``.
"""

from __future__ import annotations

from ._approval import (
    DECISIONS,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalRule,
    AskCallback,
    Decision,
    ToolDenied,
    as_policy,
    denied_result,
)
from ._auth import OAuthSettings, oauth_settings
from ._catalog import HostCatalog, HostPrompt, HostResource, HostResourceTemplate
from ._context import (
    DEFAULT_INSTRUCTIONS_CHARS,
    DEFAULT_INSTRUCTIONS_TOTAL,
    format_instructions,
    page_result,
    prompt_result,
    resource_listing,
    resource_result,
    search_result,
)
from ._deferred import (
    ANTHROPIC_TOOL_SEARCH,
    DEFERRED_TARGETS,
    OPENAI_TOOL_SEARCH,
    Deferred,
    deferred_definitions,
    deferred_key,
)
from ._errors import ServerUnavailable, UnknownPrompt, UnknownResource, UnknownTool
from ._meta import (
    DEFAULT_META_LIMIT,
    DEFAULT_META_READ_LENGTH,
    MAX_META_LIMIT,
    MAX_META_READ_LENGTH,
    MAX_META_TIMEOUT,
    META_TOOLS,
    MIN_META_TIMEOUT,
    MetaRequest,
    MetaToolError,
    meta_error,
    meta_result,
    parse_meta_call,
)
from ._names import NamePolicy, ToolFilter, ToolNames, assign_names
from ._restart import DEFAULT_RESTART, RestartPolicy, RestartSchedule
from ._search import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchHit, ToolIndex
from ._spec import (
    DIALECTS,
    TRANSPORTS,
    ConfigError,
    ConfigProblem,
    Dialect,
    HostConfig,
    InputSpec,
    ServerSpec,
    Transport,
    check_spec,
    redact_url,
)
from ._state import (
    DEFAULT_MAX_SERVERS,
    MIN_SEND_WINDOW,
    SERVER_STATES,
    START_MODES,
    TRANSITIONS,
    HostCore,
    HostTool,
    Route,
    ServerEvent,
    ServerState,
    ServerStatus,
    StartMode,
)
from ._tools import TOOL_TARGETS, tool_definition, tool_definitions
from ._validate import (
    CompiledSchema,
    InvalidArguments,
    InvalidOutput,
    JsonSchemaValidator,
    SkippedCheck,
    Validation,
    ValidationIssue,
    Validator,
    ValidatorCache,
    ValidatorUnavailable,
    as_validation,
    invalid_result,
)
from .config._dump import dump_config, dump_config_with_warnings
from .config._expand import INPUT_ENV_PREFIX, input_env_name, literal_warnings, parse_dotenv
from .config._locations import (
    LOCATION_NAMES,
    PROJECT_FILES,
    location_candidates,
    project_location,
    standard_location,
)
from .config._parse import detect_dialect, env_file_paths, needed_inputs, parse_config
from .content._budget import (
    DEFAULT_MAX_STORED_CHARS,
    DEFAULT_MAX_STORED_RESULTS,
    MIN_BUDGET_CHARS,
    Budget,
    Budgeted,
    ResultPage,
    ResultStore,
    UnknownResult,
    budget_result,
)
from .content._convert import (
    CONTENT_TARGETS,
    DEFAULT_BUDGETS,
    ProviderContent,
    default_budget,
    to_provider_content,
)
from .schema._normalize import SCHEMA_TARGETS, Normalized, Note, SchemaError, normalize_schema

__all__ = [
    "ANTHROPIC_TOOL_SEARCH",
    "CONTENT_TARGETS",
    "DECISIONS",
    "DEFAULT_BUDGETS",
    "DEFAULT_INSTRUCTIONS_CHARS",
    "DEFAULT_INSTRUCTIONS_TOTAL",
    "DEFAULT_MAX_SERVERS",
    "DEFAULT_MAX_STORED_CHARS",
    "DEFAULT_MAX_STORED_RESULTS",
    "DEFAULT_META_LIMIT",
    "DEFAULT_META_READ_LENGTH",
    "DEFAULT_RESTART",
    "DEFAULT_SEARCH_LIMIT",
    "DEFERRED_TARGETS",
    "DIALECTS",
    "INPUT_ENV_PREFIX",
    "LOCATION_NAMES",
    "MAX_META_LIMIT",
    "MAX_META_READ_LENGTH",
    "MAX_META_TIMEOUT",
    "MAX_SEARCH_LIMIT",
    "META_TOOLS",
    "MIN_BUDGET_CHARS",
    "MIN_META_TIMEOUT",
    "MIN_SEND_WINDOW",
    "OPENAI_TOOL_SEARCH",
    "PROJECT_FILES",
    "SCHEMA_TARGETS",
    "SERVER_STATES",
    "START_MODES",
    "TOOL_TARGETS",
    "TRANSITIONS",
    "TRANSPORTS",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalRule",
    "AskCallback",
    "Budget",
    "Budgeted",
    "CompiledSchema",
    "ConfigError",
    "ConfigProblem",
    "Decision",
    "Deferred",
    "Dialect",
    "HostCatalog",
    "HostConfig",
    "HostCore",
    "HostPrompt",
    "HostResource",
    "HostResourceTemplate",
    "HostTool",
    "InputSpec",
    "InvalidArguments",
    "InvalidOutput",
    "JsonSchemaValidator",
    "MetaRequest",
    "MetaToolError",
    "NamePolicy",
    "Normalized",
    "Note",
    "OAuthSettings",
    "ProviderContent",
    "RestartPolicy",
    "RestartSchedule",
    "ResultPage",
    "ResultStore",
    "Route",
    "SchemaError",
    "SearchHit",
    "ServerEvent",
    "ServerSpec",
    "ServerState",
    "ServerStatus",
    "ServerUnavailable",
    "SkippedCheck",
    "StartMode",
    "ToolDenied",
    "ToolFilter",
    "ToolIndex",
    "ToolNames",
    "Transport",
    "UnknownPrompt",
    "UnknownResource",
    "UnknownResult",
    "UnknownTool",
    "Validation",
    "ValidationIssue",
    "Validator",
    "ValidatorCache",
    "ValidatorUnavailable",
    "as_policy",
    "as_validation",
    "assign_names",
    "budget_result",
    "check_spec",
    "default_budget",
    "deferred_definitions",
    "deferred_key",
    "denied_result",
    "detect_dialect",
    "dump_config",
    "dump_config_with_warnings",
    "env_file_paths",
    "format_instructions",
    "input_env_name",
    "invalid_result",
    "literal_warnings",
    "location_candidates",
    "meta_error",
    "meta_result",
    "needed_inputs",
    "normalize_schema",
    "oauth_settings",
    "page_result",
    "parse_config",
    "parse_dotenv",
    "parse_meta_call",
    "project_location",
    "prompt_result",
    "redact_url",
    "resource_listing",
    "resource_result",
    "search_result",
    "standard_location",
    "to_provider_content",
    "tool_definition",
    "tool_definitions",
]
