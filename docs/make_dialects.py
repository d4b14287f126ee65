#!/usr/bin/env python3
"""Write docs/api.md's "Config dialects" tables from the parser's own tables.

    python docs/make_dialects.py            # rewrite the part between the markers
    python docs/make_dialects.py --check    # exit 1 when it differs from the code

Between ``<!-- dialects:begin -->`` and ``<!-- dialects:end -->`` of docs/api.md: for each
dialect, its files (``_locations``: project file, user file), the key holding its servers
(``ROOT_KEYS``), whether comments are allowed (``JSONC_DIALECTS``), the variable forms it
expands (``_expand.FORMS``, ``PREDEFINED``) and the keys it reads (``KEY_TABLES``), each with
what it means.  Nothing here is written by hand but the wording of each form and key kind
(:data:`FORM_TEXT`, :data:`KIND_TEXT`); a kind or form the code has and this file does not
word fails the generation, so the table stays true.  ``tests/test_config_first_hour.py``
runs the check.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_proto.host._spec import DIALECTS  # noqa: E402
from mcp_proto.host.config._entry import EXPANDED_KINDS, KEY_TABLES  # noqa: E402
from mcp_proto.host.config._expand import FORMS, PREDEFINED  # noqa: E402
from mcp_proto.host.config._locations import (  # noqa: E402
    LOCATION_NAMES,
    PROJECT_FILES,
    PROJECT_SERVERS_KEY,
    standard_location,
)
from mcp_proto.host.config._parse import JSONC_DIALECTS, ROOT_KEYS  # noqa: E402

TARGET = REPO / "docs" / "api.md"
BEGIN = "<!-- dialects:begin -->"
END = "<!-- dialects:end -->"

#: How each variable form reads, in the order shown.
FORM_TEXT: dict[str, str] = {
    "brace": "`${VAR}` (environment)",
    "default": "`${VAR:-default}` (default when unset or empty)",
    "env": "`${env:VAR}` (environment)",
    "input": "`${input:ID}` (inputs, `MCP_PROTO_INPUT_<ID>`, ask)",
    "predefined": "predefined {names}",
    "bare": "`$VAR` (environment; unset stays as written)",
}

#: What each kind of key means (``_entry.KEY_TABLES``).
KIND_TEXT: dict[str, str] = {
    "type": "transport (`stdio`, `http`, `sse`)",
    "type_alias": "transport (as `type`)",
    "command": "command",
    "command_or_list": "command (a string or an argv list)",
    "zed_command": "command (or the legacy `{path, args, env}`)",
    "zed_source": "`custom` (`extension`: kept, not started)",
    "args": "arguments",
    "env": "environment",
    "env_file": "`.env` file, under `env`",
    "cwd": "working directory",
    "url_http": "URL, Streamable HTTP",
    "url_http_alias": "URL (as the main URL key)",
    "url_sse": "URL, SSE",
    "headers": "HTTP headers",
    "enabled": "`false` disables",
    "enabled_alias": "`false` disables",
    "disabled": "`true` disables",
    "timeout_s": "call timeout, seconds",
    "timeout_ms": "call timeout, milliseconds",
    "timeout_bare": "call timeout (≤ 600: seconds, else ms)",
    "startup_s": "startup timeout, seconds",
    "startup_ms_alias": "startup timeout, milliseconds (legacy)",
    "include": "tools offered (globs)",
    "exclude": "tools hidden (globs; wins)",
    "approve": "tools approved without asking",
    "approve_alias": "tools approved (as `autoApprove`)",
    "trust": "`true`: every tool approved",
    "required": "a failed start is fatal",
    "description": "description",
    "exposure": "rpi exposure (kept)",
    "restart": "restart policy",
    "env_vars": "names forwarded from the environment",
    "bearer": "env var holding a bearer token",
    "env_headers": "header -> env var holding its value",
}


def _files(dialect: str) -> str:
    if dialect not in LOCATION_NAMES:
        return "—"
    shown: list[str] = []
    project = PROJECT_FILES.get(dialect)
    if project:
        note = f" (with `{PROJECT_SERVERS_KEY[dialect]}`)" if dialect in PROJECT_SERVERS_KEY \
            else ""
        shown.append(f"project `{'/'.join(project)}`{note}")
    linux = standard_location(dialect, platform="linux", home="~", env={})
    mac = standard_location(dialect, platform="darwin", home="~", env={})
    win = standard_location(dialect, platform="win32", home="~",
                            env={"APPDATA": "%APPDATA%"})
    user = f"user `{linux}`"
    if mac != linux:
        user += f", macOS `{mac}`"
    user += f", Windows `{win}`"
    shown.append(user)
    return "; ".join(shown)


def _forms(dialect: str) -> str:
    forms = FORMS[dialect]  # type: ignore[index]
    unknown = forms - set(FORM_TEXT)
    if unknown:
        raise SystemExit(f"make_dialects.py: word the forms {sorted(unknown)} in FORM_TEXT")
    if not forms:
        return "none: every value is literal"
    names = ", ".join(f"`${{{n}}}`" for n in sorted(PREDEFINED.get(dialect, ())))  # type: ignore[call-overload]
    return "; ".join(FORM_TEXT[f].replace("{names}", names) for f in FORM_TEXT if f in forms)


def _keys(dialect: str) -> str:
    parts: list[str] = []
    for key, kind in KEY_TABLES[dialect]:  # type: ignore[index]
        if kind not in KIND_TEXT:
            raise SystemExit(f"make_dialects.py: word the key kind {kind!r} in KIND_TEXT")
        mark = "\\*" if kind in EXPANDED_KINDS and FORMS[dialect] else ""  # type: ignore[index]
        parts.append(f"`{key}`{mark} {KIND_TEXT[kind]}")
    return "; ".join(parts)


def render_section() -> str:
    """The text between the markers (without them), ending in a newline."""
    lines = [
        "",
        "Generated from the parser's tables by `python docs/make_dialects.py` (do not edit by "
        "hand). A dialect comes from `dialect=`, else the file name, else the root key. "
        "Variables expand in the keys marked \\*; any other `${...}` (or a whole-value "
        "`$VAR`) is passed literally, and `mcp-proto config check` warns about each "
        "(`HostConfig.warnings`) when another dialect would have expanded it. An unset "
        "variable is a `ConfigError` naming server, field and variable (`on_missing=\"keep\"` "
        "keeps it as written, with a warning: what `config convert` does, so it needs no "
        "secret). A standard name (`--config vscode`) reads the project file of the current "
        "directory (or `--workspace DIR`), or of the nearest parent folder below your home "
        "that has one, else the user file. Every key "
        "not listed is kept as written and written back.",
        "",
        "| dialect | files | servers under | comments | variables |",
        "|---|---|---|---|---|",
    ]
    for d in DIALECTS:
        comments = "allowed (JSONC)" if d in JSONC_DIALECTS else "no (strict JSON)"
        if d == "codex":
            comments = "TOML"
        lines.append(f"| `{d}` | {_files(d)} | `{ROOT_KEYS[d]}` | {comments} | {_forms(d)} |")
    lines += ["", "| dialect | keys of a server entry |", "|---|---|"]
    lines += [f"| `{d}` | {_keys(d)} |" for d in DIALECTS]
    lines.append("")
    return "\n".join(lines) + "\n"


def with_section(text: str) -> str:
    """``text`` (docs/api.md) with the part between the markers rewritten."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"make_dialects.py: {BEGIN} ... {END} not found in docs/api.md")
    return text[:start + len(BEGIN)] + "\n" + render_section() + text[end:]


def main(argv: list[str]) -> int:
    """Rewrite the section; with ``--check``, only say (exit 1) whether it is stale."""
    current = TARGET.read_text("utf-8")
    wanted = with_section(current)
    if "--check" in argv:
        if current != wanted:
            print("docs/api.md's config dialects differ from the code: run "
                  "python docs/make_dialects.py", file=sys.stderr)
            return 1
        return 0
    if current != wanted:
        TARGET.write_text(wanted, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
