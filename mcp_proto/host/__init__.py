"""The host layer, pure: many MCP servers as one.

Config files in every ``mcpServers`` dialect (parse, expand, validate, write back, convert),
public tool names and filters, the restart schedule, and :class:`HostCore`, which makes every
decision of a multi-server host.  Like the rest of :mod:`mcp_proto` it does no I/O and reads
no clock: the bindings' ``connect_config`` / ``Host`` (:mod:`mcp_proto_io.threads`,
``.asyncio``, ``.trio``) read the files and run the servers.
"""

from __future__ import annotations

from ._config import detect_dialect, env_file_paths, parse_config
from ._dump import dump_config, dump_config_with_warnings
from ._errors import ServerUnavailable, UnknownTool
from ._expand import parse_dotenv
from ._locations import LOCATION_NAMES, standard_location
from ._names import NamePolicy, ToolFilter, ToolNames, assign_names
from ._restart import DEFAULT_RESTART, RestartPolicy, RestartSchedule
from ._spec import (
    DIALECTS,
    TRANSPORTS,
    ConfigError,
    ConfigProblem,
    Dialect,
    HostConfig,
    ServerSpec,
    Transport,
    check_spec,
    redact_url,
)
from ._state import (
    DEFAULT_MAX_SERVERS,
    MIN_SEND_WINDOW,
    SERVER_STATES,
    TRANSITIONS,
    HostCore,
    HostTool,
    Route,
    ServerEvent,
    ServerState,
    ServerStatus,
)

__all__ = [
    "DEFAULT_MAX_SERVERS",
    "DEFAULT_RESTART",
    "MIN_SEND_WINDOW",
    "DIALECTS",
    "LOCATION_NAMES",
    "SERVER_STATES",
    "TRANSITIONS",
    "TRANSPORTS",
    "ConfigError",
    "ConfigProblem",
    "Dialect",
    "HostConfig",
    "HostCore",
    "HostTool",
    "NamePolicy",
    "RestartPolicy",
    "RestartSchedule",
    "Route",
    "ServerEvent",
    "ServerSpec",
    "ServerState",
    "ServerStatus",
    "ServerUnavailable",
    "Transport",
    "ToolFilter",
    "ToolNames",
    "UnknownTool",
    "assign_names",
    "check_spec",
    "detect_dialect",
    "dump_config",
    "dump_config_with_warnings",
    "env_file_paths",
    "parse_config",
    "parse_dotenv",
    "redact_url",
    "standard_location",
]
