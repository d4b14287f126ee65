"""The config layer of ``mcp_proto.host``: every dialect's keys, detection, variables, problems.

References: host-notes section 3.1 (the keys of each host), 3.2 (the unified model and its
mapping rules), 2.1 (rpi) and 2.2 (ADK-Rust); DESIGN.md section 9 (a config is text in and
a HostConfig out, with every problem in one error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomllib

from mcp_proto.host._restart import RestartPolicy
from mcp_proto.host._spec import ConfigError, ConfigProblem, ServerSpec
from mcp_proto.host.config._dump import dump_config
from mcp_proto.host.config._expand import Expander, dotenv_entries, parse_dotenv, tokenize
from mcp_proto.host.config._parse import (
    MAX_DEPTH,
    MAX_SERVERS,
    detect_dialect,
    env_file_paths,
    parse_config,
)

CONFIGS = Path(__file__).parent / "host_configs"

#: The environment the fixture files are read with.
ENV = {
    "HOME": "/home/me", "GITHUB_TOKEN": "gh-token", "AIRTABLE_API_KEY": "at-key",
    "API_KEY": "api-key", "NOTES_TOKEN": "notes-token", "LINEAR_TOKEN": "lin-token",
    "TRACE_ID": "trace-1", "FIGMA_TOKEN": "figma-token", "PORT": "8000",
    "DB_CONNECTION_STRING": "postgres://db", "EXTERNAL_API_KEY": "ext-key", "SSE_KEY": "sse-key",
    "CONTEXT7_API_KEY": "c7-key", "FIGMA_OAUTH_TOKEN": "figma-oauth",
}


def read(relative: str) -> str:
    return (CONFIGS / relative).read_text("utf-8")


def problems_of(source: Any, **kwargs: Any) -> list[tuple[str | None, str | None, str]]:
    with pytest.raises(ConfigError) as info:
        parse_config(source, **kwargs)
    return [(p.server, p.field, p.message) for p in info.value.problems]


# -- each dialect's file, exactly (host-notes 3.1) ---------------------------------------------

def test_claude_desktop_values_are_literal() -> None:
    """Claude Desktop expands nothing (modelcontextprotocol/servers#1039); other root keys
    are kept in ``extra``."""
    c = parse_config(read("claude-desktop/claude_desktop_config.json"),
                     path="/Users/me/Library/Application Support/Claude/"
                          "claude_desktop_config.json", env=ENV)
    assert c.dialect == "claude-desktop"
    assert c.extra == {"globalShortcut": "Ctrl+Space"}
    assert c.servers == {
        "filesystem": ServerSpec(name="filesystem", command=(
            "npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop")),
        "github": ServerSpec(name="github", command=(
            "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server"),
            env={"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}),
    }


def test_claude_code_project_file() -> None:
    """``.mcp.json``: type stdio/http/sse, ``${VAR}`` and ``${VAR:-default}`` (host-notes 3.1);
    ``headersHelper`` is not modelled and stays in raw."""
    c = parse_config(read("claude-code/.mcp.json"), path="proj/.mcp.json", env=ENV)
    assert c.dialect == "claude-code"
    assert c.servers == {
        "airtable": ServerSpec(
            name="airtable", command=("npx", "-y", "airtable-mcp-server"),
            env={"AIRTABLE_API_KEY": "at-key"},
            templates={"env": {"AIRTABLE_API_KEY": "${AIRTABLE_API_KEY}"}}),
        "api": ServerSpec(
            name="api", transport="http", url="https://api.example.com/mcp",
            headers={"Authorization": "Bearer api-key"},
            templates={"url": "${API_BASE_URL:-https://api.example.com}/mcp",
                       "headers": {"Authorization": "Bearer ${API_KEY}"}}),
        "events": ServerSpec(name="events", transport="sse",
                             url="https://events.example.com/sse",
                             raw={"headersHelper": "/usr/local/bin/print-headers"}),
    }


def test_claude_code_user_file_loads_the_top_level_servers() -> None:
    """``~/.claude.json``: the top-level ``mcpServers`` are loaded; ``projects.*.mcpServers``
    stay in ``extra`` with a warning counting them."""
    c = parse_config(read("claude-code/.claude.json"), path="/home/me/.claude.json")
    assert c.servers == {"sentry": ServerSpec(name="sentry", transport="http",
                                              url="https://mcp.sentry.dev/mcp")}
    assert set(c.extra) == {"numStartups", "projects"}
    assert c.warnings == ("1 project-scoped servers under projects.*.mcpServers are kept but "
                          "not loaded (only the top-level mcpServers are)",)


def test_cursor_file_with_predefined_variables_and_env_file() -> None:
    """Cursor: ``${env:VAR}``, ``${userHome}``, ``${workspaceFolder}``,
    ``${workspaceFolderBasename}``, ``${/}``, ``envFile`` merged under ``env``."""
    ws = "/home/me/notes"
    c = parse_config(read("cursor/.cursor/mcp.json"), path=f"{ws}/.cursor/mcp.json", env=ENV,
                     env_files={f"{ws}/.env": read("cursor/.env")})
    assert c.dialect == "cursor"
    assert c.servers["notes"] == ServerSpec(
        name="notes", command=("/home/me/bin/notes-mcp", "--root", ws, "--name", "notes"),
        env={"NOTES_LEVEL": "debug", "NOTES_TOKEN": "notes-token"},
        templates={"command": ("${userHome}${/}bin${/}notes-mcp", "--root", "${workspaceFolder}",
                               "--name", "${workspaceFolderBasename}"),
                   "env": {"NOTES_TOKEN": "${env:NOTES_TOKEN}"},
                   "env_file": {"path": "${workspaceFolder}/.env", "keys": ("NOTES_LEVEL",)}})
    assert c.servers["linear"] == ServerSpec(
        name="linear", transport="http", url="https://mcp.linear.app/mcp",
        headers={"Authorization": "Bearer lin-token"},
        templates={"headers": {"Authorization": "Bearer ${env:LINEAR_TOKEN}"}})


def test_vscode_file_with_inputs_comments_and_env_file() -> None:
    """VS Code: ``servers`` + ``inputs``, ``${input:ID}``, JSONC, ``envFile``, ``cwd``; ``dev``
    stays in raw and ``inputs`` in extra."""
    ws = "/work/app"
    c = parse_config(read("vscode/.vscode/mcp.json"), path=f"{ws}/.vscode/mcp.json", env=ENV,
                     inputs={"perplexity-key": "pplx-1"},
                     env_files={f"{ws}/.env": read("vscode/.env")})
    assert c.dialect == "vscode"
    assert c.extra == {"inputs": [{"type": "promptString", "id": "perplexity-key",
                                   "description": "Perplexity API Key", "password": True}]}
    assert c.servers == {
        "perplexity": ServerSpec(
            name="perplexity", command=("npx", "-y", "server-perplexity-ask"),
            env={"PERPLEXITY_MODEL": "sonar", "PERPLEXITY_API_KEY": "pplx-1"}, cwd=ws,
            raw={"dev": {"watch": "src/**/*.ts"}},
            templates={"env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
                       "env_file": {"path": "${workspaceFolder}/.env",
                                    "keys": ("PERPLEXITY_MODEL",)},
                       "cwd": "${workspaceFolder}"}),
        "github": ServerSpec(name="github", transport="http",
                             url="https://api.githubcopilot.com/mcp/",
                             headers={"X-Trace": "trace-1"},
                             templates={"headers": {"X-Trace": "${env:TRACE_ID}"}}),
    }
    assert "comments and trailing commas are not written back" in c.warnings


def test_windsurf_file() -> None:
    """Windsurf: ``serverUrl``, ``disabled``, ``disabledTools``, ``${env:VAR}``."""
    c = parse_config(read("windsurf/.codeium/windsurf/mcp_config.json"),
                     path="/home/me/.codeium/windsurf/mcp_config.json", env=ENV)
    assert c.dialect == "windsurf"
    assert c.servers == {
        "github": ServerSpec(
            name="github", command=("npx", "-y", "@modelcontextprotocol/server-github"),
            env={"GITHUB_PERSONAL_ACCESS_TOKEN": "gh-token"}, exclude_tools=("delete_repository",),
            templates={"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}}),
        "figma": ServerSpec(name="figma", transport="http", url="https://mcp.figma.com/mcp",
                            headers={"X-Figma-Token": "figma-token"}, enabled=False,
                            templates={"headers": {"X-Figma-Token": "${env:FIGMA_TOKEN}"}}),
    }


def test_zed_settings_file() -> None:
    """Zed: ``context_servers`` with the custom shape, the legacy ``command`` object, a URL
    entry and an extension entry (kept whole in raw, disabled, with a warning)."""
    c = parse_config(read("zed/.config/zed/settings.json"),
                     path="/home/me/.config/zed/settings.json", env=ENV)
    assert c.dialect == "zed"
    assert c.extra == {"theme": "One Dark", "buffer_font_size": 15}
    assert c.servers == {
        "postgres": ServerSpec(name="postgres", command=(
            "npx", "-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/mydb"),
            env={"PGPASSWORD": "hunter2"}),
        "legacy-git": ServerSpec(name="legacy-git", command=("uvx", "mcp-server-git"),
                                 raw={"settings": {}}),
        "remote": ServerSpec(name="remote", transport="http", url="https://mcp.example.com/mcp",
                             headers={"Authorization": "Bearer abc"}, enabled=False),
        "mcp-server-context7": ServerSpec(
            name="mcp-server-context7", enabled=False,
            raw={"source": "extension", "enabled": True,
                 "settings": {"context7_api_key": ""}}),
    }
    assert "mcp-server-context7.source: is managed by a Zed extension: kept as written, not " \
           "started" in c.warnings


def test_gemini_settings_file() -> None:
    """Gemini CLI: ``$VAR``/``${VAR}``, ``httpUrl`` is Streamable HTTP but ``url`` is SSE,
    ``timeout`` in ms, ``trust``, include/exclude, ``description``; the global
    ``mcp.excluded`` disables a server."""
    c = parse_config(read("gemini/.gemini/settings.json"), path="/home/me/.gemini/settings.json",
                     env=ENV)
    assert c.dialect == "gemini"
    assert c.extra == {"theme": "GitHub", "mcp": {"excluded": ["experimental"]}}
    assert c.servers == {
        "pythonTools": ServerSpec(
            name="pythonTools", command=("python", "-m", "my_mcp_server", "--port", "8000"),
            env={"DATABASE_URL": "postgres://db", "API_KEY": "ext-key"},
            cwd="./mcp-servers/python", timeout=15.0, auto_approve=("*",),
            include_tools=("safe_tool", "file_reader"), exclude_tools=("dangerous_tool",),
            description="Python tools",
            templates={"command": ("python", "-m", "my_mcp_server", "--port", "$PORT"),
                       "env": {"DATABASE_URL": "$DB_CONNECTION_STRING",
                               "API_KEY": "${EXTERNAL_API_KEY}"}}),
        "httpServer": ServerSpec(name="httpServer", transport="http",
                                 url="http://localhost:3000/mcp", timeout=5.0),
        "sseServer": ServerSpec(name="sseServer", transport="sse",
                                url="http://localhost:8080/sse",
                                headers={"X-Api-Key": "sse-key"},
                                templates={"headers": {"X-Api-Key": "$SSE_KEY"}}),
        "experimental": ServerSpec(name="experimental", command=("exp-mcp",), enabled=False,
                                   raw={"oauth": {"enabled": True, "clientId": "cid"}}),
    }


def test_gemini_allowed_list_disables_the_others() -> None:
    c = parse_config({"mcp": {"allowed": ["a"]}, "mcpServers": {
        "a": {"command": "a"}, "b": {"command": "b"}}}, dialect="gemini")
    assert (c.servers["a"].enabled, c.servers["b"].enabled) == (True, False)


def test_codex_config_toml() -> None:
    """Codex: ``[mcp_servers.NAME]``, ``startup_timeout_sec``, ``tool_timeout_sec``, the legacy
    ``startup_timeout_ms``, enabled/disabled tools, ``env_vars``, ``bearer_token_env_var``,
    ``http_headers``, ``env_http_headers``, ``required``, ``enabled``; other root keys in
    extra (host-notes 3.1)."""
    source = tomllib.loads(read("codex/.codex/config.toml"))
    c = parse_config(source, path="/home/me/.codex/config.toml", env=ENV)
    assert c.dialect == "codex"
    assert c.extra == {"model": "gpt-5-codex", "approval_policy": "on-request"}
    assert c.servers == {
        "context7": ServerSpec(
            name="context7", command=("npx", "-y", "@upstash/context7-mcp"),
            env={"LOG_LEVEL": "info", "CONTEXT7_API_KEY": "c7-key"}, startup_timeout=20.0,
            timeout=45.5, include_tools=("resolve-library-id", "get-library-docs"),
            templates={"env_vars": ("CONTEXT7_API_KEY",)}),
        "figma": ServerSpec(
            name="figma", transport="http", url="https://mcp.figma.com/mcp",
            headers={"X-Figma-Region": "us-east-1", "X-Trace-Id": "trace-1",
                     "Authorization": "Bearer figma-oauth"},
            required=True, exclude_tools=("delete_file",),
            templates={"bearer_token_env_var": "FIGMA_OAUTH_TOKEN",
                       "env_http_headers": {"X-Trace-Id": "TRACE_ID"}}),
        "old": ServerSpec(name="old", command=("old-mcp",), enabled=False, startup_timeout=2.5,
                          raw={"default_tools_approval_mode": "prompt"}),
    }


def test_adk_kiro_file() -> None:
    """ADK-Rust / Kiro: ``disabled``, ``autoApprove``, ``restartPolicy`` in ms (host-notes
    2.2); ``lifecycle`` stays in raw."""
    c = parse_config(read("adk/.kiro/settings/mcp.json"), path="/p/.kiro/settings/mcp.json")
    assert c.dialect == "adk"
    assert c.servers == {
        "fetch": ServerSpec(
            name="fetch", command=("uvx", "mcp-server-fetch"), env={"FETCH_LOG": "warn"},
            auto_approve=("fetch",), raw={"lifecycle": "auto"},
            restart=RestartPolicy(initial_delay=0.5, max_delay=8.0, multiplier=1.5,
                                  max_attempts=4)),
        "aws-docs": ServerSpec(name="aws-docs", enabled=False, command=(
            "uvx", "awslabs.aws-documentation-mcp-server@latest")),
    }


def test_adk_restart_defaults_are_adk_rust_defaults() -> None:
    """Each restartPolicy field is defaulted (1000 ms, 30000 ms, 2.0, 10: host-notes 2.2)."""
    c = parse_config({"mcpServers": {"s": {"command": "x", "restartPolicy": {}}}}, dialect="adk")
    assert c.servers["s"].restart == RestartPolicy(initial_delay=1.0, max_delay=30.0,
                                                   multiplier=2.0, max_attempts=10)


def test_rpi_file() -> None:
    """rpi: ``enabled``, ``timeout`` in seconds, ``exposure`` (kept in raw, validated);
    ``type`` is not an rpi key (ignored by rpi's untagged serde): raw (host-notes 2.1)."""
    c = parse_config(read("rpi/mcp.json"), dialect="rpi")
    assert c.servers == {
        "local": ServerSpec(name="local", command=("node", "server.js"), cwd="servers",
                            timeout=30.0, raw={"type": "stdio", "exposure": "direct"}),
        "remote": ServerSpec(name="remote", transport="http", url="https://mcp.example.com/mcp",
                             headers={"X-Key": "k"}, enabled=False, timeout=120.0),
    }


def test_generic_file() -> None:
    """A plain ``mcpServers`` file (fastmcp style): ``transport``, a list command, a bare
    ``timeout`` (<= 600 s, else ms with a warning), Cline's ``alwaysAllow``, ``disabled``."""
    c = parse_config(read("generic/mcp.json"))
    assert c.dialect == "generic"
    assert c.servers == {
        "weather": ServerSpec(name="weather", command=("uv", "run", "weather.py"), timeout=30.0,
                              raw={"keep_alive": True}),
        "search": ServerSpec(name="search", transport="http",
                             url="https://search.example.com/mcp", timeout=45.0,
                             auto_approve=("search",), enabled=False),
    }
    assert c.warnings == ("search.timeout: more than 600: read as milliseconds",)


def test_zed_legacy_command_args_given_twice_is_a_problem() -> None:
    source = {"context_servers": {"s": {"command": {"path": "x", "args": ["a"]}, "args": ["b"]}}}
    assert problems_of(source) == [("s", "args", "repeats the arguments of 'command.args'")]


@pytest.mark.parametrize(("value", "expected"), [
    ("stdio", "stdio"), ("http", "http"), ("streamable-http", "http"),
    ("streamable_http", "http"), ("streamableHttp", "http"), ("sse", "sse"), ("SSE", "sse")])
def test_transport_type_values(value: str, expected: str) -> None:
    """host-notes 3.2: explicit type wins; the spellings of Streamable HTTP are one."""
    entry: dict[str, Any] = {"type": value}
    entry.update({"command": "x"} if expected == "stdio" else {"url": "https://a.example/"})
    c = parse_config({"mcpServers": {"s": entry}}, dialect="generic")
    assert c.servers["s"].transport == expected


def test_url_kinds_per_dialect() -> None:
    """Gemini ``url`` is SSE, ``httpUrl`` HTTP; every other URL key is HTTP."""
    url = "https://a.example/mcp"
    assert parse_config({"mcpServers": {"s": {"url": url}}}, dialect="gemini"
                        ).servers["s"].transport == "sse"
    for dialect in ("claude-code", "cursor", "generic", "rpi", "codex"):
        root = "mcp_servers" if dialect == "codex" else "mcpServers"
        c = parse_config({root: {"s": {"url": url}}}, dialect=dialect)
        assert c.servers["s"].transport == "http", dialect


def test_numbers_in_env_are_taken_as_text_with_a_warning() -> None:
    c = parse_config({"mcpServers": {"s": {"command": "x", "env": {"PORT": 8080}}}})
    assert c.servers["s"].env == {"PORT": "8080"}
    assert c.warnings == ("s.env.PORT: is a number: taken as its decimal text",)


# -- detection ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "dialect"), [
    ("/p/.vscode/mcp.json", "vscode"),
    ("/home/me/.config/Code/User/mcp.json", "vscode"),
    ("C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json", "vscode"),
    ("/p/.cursor/mcp.json", "cursor"),
    ("/home/me/.gemini/settings.json", "gemini"),
    ("/p/.codex/config.toml", "codex"),
    ("/home/me/Library/Application Support/Claude/claude_desktop_config.json",
     "claude-desktop"),
    ("C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json", "claude-desktop"),
    ("/home/me/.claude.json", "claude-code"),
    ("/p/.mcp.json", "claude-code"),
    ("/home/me/.codeium/windsurf/mcp_config.json", "windsurf"),
    ("/home/me/.config/zed/settings.json", "zed"),
    ("/p/.kiro/settings/mcp.json", "adk"),
])
def test_dialect_from_path(path: str, dialect: str) -> None:
    assert detect_dialect({"mcpServers": {}}, path=path) == dialect


@pytest.mark.parametrize(("root", "dialect"), [
    ({"servers": {}}, "vscode"),
    ({"context_servers": {}}, "zed"),
    ({"mcp_servers": {}}, "codex"),
    ({"mcpServers": {}}, "generic"),
    ({"mcpServers": {"s": {"serverUrl": "https://a.example"}}}, "windsurf"),
    ({"mcpServers": {"s": {"httpUrl": "https://a.example"}}}, "gemini"),
    ({"mcpServers": {"s": {"command": "x", "restartPolicy": {}}}}, "adk"),
    ({"mcpServers": {"s": {"command": "x", "exposure": "direct"}}}, "rpi"),
    ({"mcpServers": {"a": {"httpUrl": "https://a.example"},
                     "b": {"serverUrl": "https://b.example"}}}, "generic"),
])
def test_dialect_from_root_keys(root: dict[str, Any], dialect: str) -> None:
    """host-notes 3.2: root keys, and a generic guess refined by keys only one dialect has."""
    warnings: list[str] = []
    assert detect_dialect(root, path="/p/config.json", warnings=warnings) == dialect
    refined = dialect != "generic" and "mcpServers" in root
    assert bool(warnings) == (refined or len(root.get("mcpServers", {})) > 1)


def test_dialect_argument_wins_over_path_and_keys() -> None:
    c = parse_config('{"mcpServers": {"s": {"command": "x", "timeout": 5000}}}',
                     dialect="gemini", path="/p/.vscode/mcp.json")
    assert (c.dialect, c.servers["s"].timeout) == ("gemini", 5.0)


def test_a_path_dialect_with_the_wrong_root_key_is_a_problem() -> None:
    assert problems_of('{"mcpServers": {}}', path="/p/.vscode/mcp.json") == [
        (None, "mcpServers", "a vscode config keeps its servers under 'servers'")]


def test_unknown_dialect_is_a_config_error() -> None:
    assert problems_of("{}", dialect="toml") == [
        (None, None, "unknown dialect 'toml'; one of claude-desktop, claude-code, cursor, "
                     "vscode, windsurf, zed, gemini, codex, adk, rpi, generic")]


def test_comments_only_where_the_host_accepts_them() -> None:
    text = '{\n  // c\n  "mcpServers": {"s": {"command": "x",},},\n}'
    assert parse_config(text, dialect="gemini").servers["s"].command == ("x",)
    assert problems_of(text, dialect="claude-code") == [
        (None, None, "a claude-code config must be strict JSON (no comments, no trailing "
                     "commas): not valid JSON: Expecting property name enclosed in double "
                     "quotes (line 2, column 3)")]


def test_a_comment_marker_inside_a_string_is_text() -> None:
    text = '{"servers": {"s": {"type": "http", "url": "https://a.example/x//y"}}, // c\n}'
    assert parse_config(text).servers["s"].url == "https://a.example/x//y"


# -- variables (host-notes 3.2 "Variable expansion") -------------------------------------------

@pytest.mark.parametrize(("dialect", "text", "expected"), [
    ("claude-code", "${A}", "va"),
    ("claude-code", "${A:-d}", "va"),
    ("claude-code", "${UNSET:-d}", "d"),
    ("claude-code", "${EMPTY:-d}", "d"),
    ("claude-code", "${env:A}", "${env:A}"),
    ("claude-code", "$A", "$A"),
    ("generic", "x${A}y", "xvay"),
    ("cursor", "${env:A}", "va"),
    ("cursor", "${A}", "${A}"),
    ("cursor", "${userHome}${/}${workspaceFolderBasename}", "/home/u/proj"),
    ("cursor", "${pathSeparator}", "/"),
    ("vscode", "${input:tok}", "secret-input"),
    ("vscode", "${workspaceFolder}", "/w/proj"),
    ("vscode", "${file}", "${file}"),
    ("windsurf", "${env:A}", "va"),
    ("windsurf", "${userHome}", "${userHome}"),
    ("gemini", "$A-${A}", "va-va"),
    ("gemini", "${A:-d}", "${A:-d}"),
    ("claude-desktop", "${A}", "${A}"),
    ("zed", "${A}", "${A}"),
    ("adk", "${A}", "${A}"),
    ("rpi", "$A", "$A"),
])
def test_each_variable_form(dialect: str, text: str, expected: str) -> None:
    expander = Expander(dialect=dialect,  # type: ignore[arg-type]
                        env={"A": "va", "EMPTY": "", "HOME": "/home/u"},
                        inputs={"tok": "secret-input"}, workspace="/w/proj")
    problems: list[ConfigProblem] = []
    assert expander.expand(text, server="s", field="f", problems=problems)[0] == expected
    assert problems == []


def test_windows_home_gives_a_backslash_separator() -> None:
    expander = Expander(dialect="cursor", env={"USERPROFILE": "C:\\Users\\me"}, inputs={})
    assert expander.expand("${userHome}${/}x", server="s", field="f", problems=[])[0] == \
        "C:\\Users\\me\\x"


def test_expansion_is_single_pass() -> None:
    """A value produced by expansion is never scanned again (host-notes 3.2: unlike Claude
    Code's double expansion of headers)."""
    c = parse_config({"mcpServers": {"s": {"command": "x", "env": {"K": "${A}"}}}},
                     dialect="claude-code", env={"A": "${B}", "B": "expanded-twice"})
    assert c.servers["s"].env == {"K": "${B}"}


@pytest.mark.parametrize(("on_missing", "value"), [("keep", "${NOPE}/x"), ("empty", "/x")])
def test_on_missing_keep_and_empty(on_missing: str, value: str) -> None:
    c = parse_config({"mcpServers": {"s": {"command": "x", "args": ["${NOPE}/x"]}}},
                     dialect="claude-code", on_missing=on_missing)  # type: ignore[arg-type]
    assert c.servers["s"].command == ("x", value)
    assert c.servers["s"].templates == {"command": ("x", "${NOPE}/x")}


def test_on_missing_error_names_server_field_and_variable() -> None:
    source = {"servers": {"s": {"type": "stdio", "command": "${workspaceFolder}/x",
                                "env": {"K": "${env:NOPE}", "T": "${input:api-key}"}}}}
    assert problems_of(source, env={}) == [
        ("s", "command", "${workspaceFolder} needs a workspace"),
        ("s", "env.K", "variable NOPE is not set"),
        ("s", "env.T", "input 'api-key' was not given: set MCP_PROTO_INPUT_API_KEY, "
                       "pass inputs={'api-key': ...} (--input api-key=VALUE) or an "
                       "ask= callback"),
    ]


def test_bad_on_missing_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="on_missing"):
        parse_config("{}", on_missing="ignore")  # type: ignore[arg-type]


def test_tokenize_keeps_the_reference_text() -> None:
    parts = tokenize("a${B:-c}d", "claude-code")
    assert parts[0] == "a" and parts[2] == "d"
    var = parts[1]
    assert not isinstance(var, str)
    assert (var.kind, var.name, var.default, var.text) == ("env", "B", "c", "${B:-c}")


def test_parse_dotenv() -> None:
    text = ("# comment\n\nA=1\nexport B = two words \nC='single $x'\nD=\"l1\\nl2 \\\"q\\\"\"\n"
            "E=bare # trailing comment\nF=\nA=again\n")
    assert parse_dotenv(text) == {"A": "again", "B": "two words", "C": "single $x",
                                  "D": 'l1\nl2 "q"', "E": "bare", "F": ""}


def test_parse_dotenv_lists_every_bad_line_without_its_content() -> None:
    with pytest.raises(ConfigError) as info:
        parse_dotenv("OK=1\nnot a line SENTINEL\nX=\"unterminated SENTINEL\n1BAD=x\n")
    assert [p.message for p in info.value.problems] == [
        "line 2 is not KEY=VALUE", "line 3 is not KEY=VALUE", "line 4 is not KEY=VALUE"]
    assert "SENTINEL" not in str(info.value)
    assert dotenv_entries("OK=1\nbad")[0] == {"OK": "1"}


def test_env_file_problems() -> None:
    """An envFile not in env_files, and a bad line in one, are problems of that server."""
    source = {"servers": {
        "a": {"type": "stdio", "command": "x", "envFile": "/w/a.env"},
        "b": {"type": "stdio", "command": "x", "envFile": "/w/b.env"}}}
    assert problems_of(source, env_files={"/w/b.env": "A=1\n?\n"}) == [
        ("a", "envFile", "the file '/w/a.env' was not read (the binding passes its text in "
                         "env_files)"),
        ("b", "envFile", "line 2 is not KEY=VALUE"),
    ]


def test_env_file_paths_lists_the_expanded_paths() -> None:
    text = read("vscode/.vscode/mcp.json")
    assert env_file_paths(text, path="/w/app/.vscode/mcp.json") == ("/w/app/.env",)
    assert env_file_paths("not json") == ()
    assert env_file_paths('{"mcpServers": {}}') == ()


def test_codex_env_vars_bearer_and_env_headers() -> None:
    """host-notes 3.2 "Codex secrets": values come from ``env=``, names are remembered."""
    source = {"mcp_servers": {
        "s": {"command": "x", "env": {"A": "1"}, "env_vars": ["B"]},
        "r": {"url": "https://a.example/", "bearer_token_env_var": "TOK",
              "env_http_headers": {"X-K": "K"}}}}
    c = parse_config(source, env={"B": "b", "TOK": "t", "K": "k"})
    assert c.servers["s"].env == {"A": "1", "B": "b"}
    assert c.servers["r"].headers == {"X-K": "k", "Authorization": "Bearer t"}
    assert problems_of(source, env={}) == [
        ("s", "env_vars", "variable B is not set"),
        ("r", "env_http_headers.X-K", "variable K is not set"),
        ("r", "bearer_token_env_var", "variable TOK is not set"),
    ]
    kept = parse_config(source, env={}, on_missing="keep")
    assert (kept.servers["s"].env, kept.servers["r"].headers) == ({"A": "1"}, {})


# -- problems: every one collected, in one ConfigError -----------------------------------------

def test_every_problem_kind_in_one_error() -> None:
    """The issue's list: blank command, blank URL, both or neither, credentials in a URL,
    unknown type, bad timeout, missing variable or input, and the shape errors."""
    source = {"mcpServers": {
        "both": {"command": "x", "url": "https://a.example"},
        "neither": {"args": []},
        "blank-cmd": {"command": "  "},
        "blank-url": {"url": " "},
        "creds": {"url": "https://user:pw@a.example/mcp"},
        "scheme": {"url": "ftp://a.example/"},
        "no-host": {"url": "https:///mcp"},
        "bad-type": {"type": "ws", "url": "https://a.example"},
        "stdio-url": {"type": "stdio", "url": "https://a.example"},
        "http-cmd": {"type": "http", "command": "x"},
        "t-str": {"command": "x", "timeout": "10"},
        "t-neg": {"command": "x", "timeout": -1},
        "t-bool": {"command": "x", "timeout": True},
        "t-nan": {"command": "x", "timeout": float("nan")},
        "t-huge": {"command": "x", "timeout": 10**12},
        "missing": {"command": "x", "env": {"K": "${NOPE}"}},
        "args": {"command": "x", "args": "a b"},
        "arg-item": {"command": "x", "args": ["a", 3]},
        "cmd-type": {"command": 7},
        "env-val": {"command": "x", "env": {"K": True}},
        "env-type": {"command": "x", "env": ["K=V"]},
        "hdr-name": {"url": "https://a.example", "headers": {"Bad Name": "v"}},
        "hdr-crlf": {"url": "https://a.example", "headers": {"X": "a\r\nb"}},
        "flags": {"command": "x", "enabled": True, "disabled": True},
        "not-obj": [1],
        "": {"command": "x"},
    }}
    assert problems_of(source, dialect="generic") == [
        ("both", "command", "a command and a URL ('url') in one entry: keep one"),
        ("neither", None, "needs a command or a URL (url)"),
        ("blank-cmd", "command", "is blank"),
        ("blank-url", "url", "is blank"),
        ("creds", "url", "must not hold credentials (user:password@): send them in headers"),
        ("scheme", "url", "must be an http:// or https:// URL"),
        ("no-host", "url", "has no host"),
        ("bad-type", "type", "unknown transport type 'ws' (stdio, http, streamable-http or "
                             "sse)"),
        ("stdio-url", "type", "type stdio needs a command, not 'url'"),
        ("http-cmd", "type", "type http needs a URL, not a command"),
        ("t-str", "timeout", "must be a number of seconds, not a string"),
        ("t-neg", "timeout", "must be a positive, finite number of seconds"),
        ("t-bool", "timeout", "must be a number of seconds, not a boolean"),
        ("t-nan", "timeout", "must be a positive, finite number of seconds"),
        ("t-huge", "timeout", "is more than 86400 seconds: check the unit (seconds)"),
        ("missing", "env.K", "variable NOPE is not set"),
        ("args", "args", "must be a list of strings, not a string"),
        ("arg-item", "args[1]", "must be a string, not a number"),
        ("cmd-type", "command", "must be a string or a list of strings, not a number"),
        ("env-val", "env.K", "must be a string, not a boolean"),
        ("env-type", "env", "must be an object of strings, not a list"),
        ("hdr-name", "headers", "has a name that is not a valid header name"),
        ("hdr-crlf", "headers.X", "must not contain a line break"),
        ("flags", "disabled", "contradicts 'enabled'"),
        ("not-obj", None, "must be an object, not a list"),
        (None, "mcpServers", "a server name is blank"),
    ]


def test_dialect_specific_problems() -> None:
    assert problems_of({"mcpServers": {"s": {"url": "https://a.example"}}}, dialect="adk") == [
        ("s", None, "needs a command (a adk config has only stdio servers)")]
    assert problems_of({"mcpServers": {"s": {"command": "x", "exposure": "loud"}}},
                       dialect="rpi") == [
        ("s", "exposure", "must be one of codemode, deferred, direct, hidden")]
    assert problems_of({"mcpServers": {"s": {"command": "x", "restartPolicy": {
        "backoffMultiplier": 0.5, "maxRestartAttempts": 2.5}}}}, dialect="adk") == [
        ("s", "restartPolicy.maxRestartAttempts", "must be a whole number")]
    assert problems_of({"mcpServers": {"s": {"command": "x", "restartPolicy": {
        "backoffMultiplier": 0.5}}}}, dialect="adk") == [
        ("s", "restartPolicy", "multiplier must be >= 1, not 0.5")]
    assert problems_of({"mcpServers": {"s": {"command": "x", "timeout": 0}}},
                       dialect="gemini") == [
        ("s", "timeout", "must be a positive, finite number of milliseconds")]
    assert problems_of({"mcpServers": {"s": {"httpUrl": "https://a.example",
                                             "url": "https://b.example"}}},
                       dialect="gemini") == [
        ("s", "url", "a second URL beside 'httpUrl': keep one")]
    assert problems_of({"context_servers": {"s": {"source": "npm", "command": "x"}}}) == [
        ("s", "source", "must be 'custom' or 'extension', not 'npm'")]
    assert problems_of({"mcp_servers": {"s": {"command": "x", "env": {"A": "1"},
                                              "env_vars": ["A"]}}}) == [
        ("s", "env_vars", "A is also set in env: keep one")]


@pytest.mark.parametrize(("source", "expected"), [
    ('{"mcpServers": {', "not valid JSON: Expecting property name enclosed in double quotes "
                         "(line 1, column 17)"),
    ('[1, 2]', "the config must be an object, not a list"),
    ('{"a": NaN}', "NaN is not a JSON number"),
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
    ('{"mcpServers": []}', "must be an object, not a list"),
])
def test_file_level_problems(source: str | bytes, expected: str) -> None:
    assert [m for _, _, m in problems_of(source)] == [expected]


def test_limits() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(MAX_DEPTH + 1):
        node["x"] = {}
        node = node["x"]
    assert problems_of({"mcpServers": {}, "deep": deep}) == [
        (None, None, f"values are nested deeper than {MAX_DEPTH} levels")]
    many = {"mcpServers": {f"s{i}": {"command": "x"} for i in range(MAX_SERVERS + 1)}}
    assert problems_of(many) == [(None, "mcpServers", f"more than {MAX_SERVERS} servers")]
    with pytest.raises(TypeError):
        parse_config(42)  # type: ignore[arg-type]


def test_config_error_text_lists_every_problem() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"a": {}, "b": {"command": ""}}}, path="/p/x.json")
    assert str(info.value) == ("/p/x.json: 2 problems in the MCP config:\n"
                               "  - a: needs a command or a URL (url)\n"
                               "  - b.command: is blank")
    assert info.value.path == "/p/x.json"


# -- secrets never shown -----------------------------------------------------------------------

SENTINEL = "SENTINEL-s3cr3t-7f1c"


def _bad_configs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(source, parse kwargs) pairs, each with a problem and the sentinel in a secret place."""
    s = SENTINEL
    env = {"SECRET": s, "HOME": f"/home/{s}"}
    return [
        ({"mcpServers": {"a": {"command": "x", "env": {"K": s}, "timeout": "x"}}}, {}),
        ({"mcpServers": {"a": {"url": f"https://u:{s}@a.example/"}}}, {}),
        ({"mcpServers": {"a": {"url": f"https://{s}@a.example/"}}}, {}),
        ({"mcpServers": {"a": {"url": "https://u:${SECRET}@a.example/"}}},
         {"dialect": "claude-code", "env": env}),
        ({"mcpServers": {"a": {"url": f"ftp://a.example/?k={s}"}}}, {}),
        ({"mcpServers": {"a": {"url": "https://a.example", "headers": {"X": f"{s}\r\n"}}}}, {}),
        ({"mcpServers": {"a": {"url": "https://a.example", "headers": {"X": s},
                               "command": "x"}}}, {}),
        ({"mcpServers": {"a": {"command": "${SECRET}", "url": "https://a.example/${SECRET}"}}},
         {"dialect": "claude-code", "env": env}),
        ({"mcpServers": {"a": {"command": "x", "env": {"K": "${SECRET}", "M": "${MISSING}"}}}},
         {"dialect": "claude-code", "env": env}),
        ({"servers": {"a": {"type": "stdio", "command": "${input:key}", "args": [s, 1]}}},
         {"inputs": {"key": s}}),
        ({"servers": {"a": {"type": "stdio", "command": "x", "envFile": "/e"}}},
         {"env_files": {"/e": f"A={s}\nB {s}\n"}}),
        ({"mcp_servers": {"a": {"url": "https://a.example", "bearer_token_env_var": "SECRET",
                                "http_headers": {"Authorization": s}}}}, {"env": env}),
        ({"mcp_servers": {"a": {"command": "x", "env_vars": ["SECRET"],
                                "env": {"SECRET": s}}}}, {"env": env}),
        ({"mcpServers": {"a": {"command": "${userHome}", "args": 3}}},
         {"dialect": "cursor", "env": env}),
    ]


@pytest.mark.parametrize(("source", "kwargs"), _bad_configs())
def test_secrets_never_appear_in_problems(source: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Env values, header values, expanded variables, inputs, env-file contents and URL
    passwords never appear in a ConfigError (issue 10 part 1)."""
    with pytest.raises(ConfigError) as info:
        parse_config(source, **kwargs)
    assert SENTINEL not in str(info.value)
    assert all(SENTINEL not in str(p) and SENTINEL not in repr(p) for p in info.value.problems)


def test_secrets_never_appear_in_warnings_or_reprs() -> None:
    s = SENTINEL
    c = parse_config({"mcpServers": {
        "a": {"command": "x", "env": {"K": s, "E": "${SECRET}", "N": 5},
              "headers": {"H": s}},
        "b": {"type": "http", "url": "https://a.example/", "headers": {"X": "${SECRET}",
                                                                       "Y": s},
              "env": {"Z": s}},
    }}, dialect="claude-code", env={"SECRET": s})
    assert c.warnings  # stdio headers, remote env, a number
    assert all(s not in w for w in c.warnings)
    assert s not in repr(c) and s not in str(c)
    assert all(s not in repr(spec) for spec in c.servers.values())


# -- found in review -------------------------------------------------------------------------


def test_gemini_bare_dollar_that_is_not_set_stays_as_written() -> None:
    """Gemini CLI leaves an unresolved ``$NAME`` as it is; a literal ``$`` is common (a
    password, a jq filter), so it is no error, and no message names its "variable" (the tail
    of a secret).  Set, it expands; ``${NAME}`` unset is still an error."""
    text = json.dumps({"mcpServers": {"s": {
        "command": "srv", "args": ["--filter", ".items[] | $name"],
        "env": {"DB_PASSWORD": "hunter$S3cretTail", "HOME_DIR": "$HOME"}}}})
    config = parse_config(text, dialect="gemini", env={"HOME": "/home/u"})
    spec = config.servers["s"]
    assert spec.command == ("srv", "--filter", ".items[] | $name")
    assert spec.env == {"DB_PASSWORD": "hunter$S3cretTail", "HOME_DIR": "/home/u"}
    with pytest.raises(ConfigError) as info:
        parse_config(json.dumps({"mcpServers": {"s": {"command": "srv",
                                                       "env": {"K": "${MISSING}"}}}}),
                     dialect="gemini", env={})
    assert "MISSING" in str(info.value) and "S3cret" not in str(info.value)


def test_a_generic_url_ending_in_sse_is_the_sse_transport() -> None:
    """fastmcp's rule (host-notes 3.2), for plain mcpServers files only; an explicit type
    wins, and dialects with their own keys are not guessed at."""
    text = json.dumps({"mcpServers": {"old": {"url": "https://h.example/sse"},
                                      "new": {"url": "https://h.example/mcp"},
                                      "typed": {"url": "https://h.example/sse",
                                                "type": "http"}}})
    config = parse_config(text, dialect="generic")
    assert {n: s.transport for n, s in config.servers.items()} == {
        "old": "sse", "new": "http", "typed": "http"}
    assert any("SSE" in w for w in config.warnings)
    assert parse_config(text, dialect="claude-code").servers["old"].transport == "http"
    again = parse_config(dump_config(config), dialect="generic")
    assert again == config
