"""The host layer, pure: many MCP servers as one.

Config files in every ``mcpServers`` dialect (parse, expand, validate, write back, convert),
public tool names and filters, the restart schedule, :class:`HostCore` (every decision of a
multi-server host), and the model-facing side: schemas per provider
(:func:`normalize_schema`), tool definitions (:func:`tool_definition`), results as provider
content (:func:`to_provider_content`) and the meta-tools (:data:`META_TOOLS`).  Like the
rest of :mod:`mcp_proto` it does no I/O and reads no clock: the bindings' ``connect_config``
/ ``Host`` (:mod:`mcp_proto_io.threads`, ``.asyncio``, ``.trio``) read the files and run the
servers.

The room owns the host's records (``_spec``: the config as data, ``_restart``, ``_errors``),
names and filters (``_names``), :class:`HostCore` (``_state``), resources and prompts across
servers (``_catalog``), OAuth settings (``_auth``),
tool definitions (``_tools``) and the meta-tools (``_meta``); its subrooms own the config
dialects (:mod:`.config`), the provider schemas (:mod:`.schema`) and the provider content
(:mod:`.content`).  It may import the shared records of :mod:`mcp_proto` and its subrooms,
nothing else of the package (no session, transport or authorization machine); the subrooms
import the shared records and the host's records, never this face or ``_state``.
"""

from __future__ import annotations

from ._auth import OAuthSettings, oauth_settings
from ._catalog import HostCatalog, HostPrompt, HostResource, HostResourceTemplate
from ._errors import ServerUnavailable, UnknownPrompt, UnknownResource, UnknownTool
from ._meta import (
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
from .content._convert import CONTENT_TARGETS, ProviderContent, to_provider_content
from .schema._normalize import SCHEMA_TARGETS, Normalized, Note, SchemaError, normalize_schema

__all__ = [
    "CONTENT_TARGETS",
    "DEFAULT_MAX_SERVERS",
    "DEFAULT_RESTART",
    "DIALECTS",
    "INPUT_ENV_PREFIX",
    "LOCATION_NAMES",
    "MAX_META_TIMEOUT",
    "META_TOOLS",
    "MIN_META_TIMEOUT",
    "MIN_SEND_WINDOW",
    "PROJECT_FILES",
    "SCHEMA_TARGETS",
    "SERVER_STATES",
    "START_MODES",
    "TOOL_TARGETS",
    "TRANSITIONS",
    "TRANSPORTS",
    "ConfigError",
    "ConfigProblem",
    "Dialect",
    "HostCatalog",
    "HostConfig",
    "HostCore",
    "HostPrompt",
    "HostResource",
    "HostResourceTemplate",
    "HostTool",
    "InputSpec",
    "MetaRequest",
    "MetaToolError",
    "NamePolicy",
    "Normalized",
    "Note",
    "OAuthSettings",
    "ProviderContent",
    "RestartPolicy",
    "RestartSchedule",
    "Route",
    "SchemaError",
    "ServerEvent",
    "ServerSpec",
    "ServerState",
    "ServerStatus",
    "ServerUnavailable",
    "StartMode",
    "ToolFilter",
    "ToolNames",
    "Transport",
    "UnknownPrompt",
    "UnknownResource",
    "UnknownTool",
    "assign_names",
    "check_spec",
    "detect_dialect",
    "dump_config",
    "dump_config_with_warnings",
    "env_file_paths",
    "input_env_name",
    "literal_warnings",
    "location_candidates",
    "meta_error",
    "meta_result",
    "needed_inputs",
    "normalize_schema",
    "oauth_settings",
    "parse_config",
    "parse_dotenv",
    "parse_meta_call",
    "project_location",
    "redact_url",
    "standard_location",
    "to_provider_content",
    "tool_definition",
    "tool_definitions",
]
