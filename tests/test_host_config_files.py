"""Config files on disk (the binding's ``_config_files``) and the standard locations.

References: host-notes 3.1 (where each host keeps its file), DESIGN.md section 3 (the core
reads no file; the bindings do all I/O) and section 9.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from mcp_proto_io.host import _config_files
from mcp_proto_io.host._config_files import load_config, resolve_location, save_config
from test_host_config import CONFIGS, ENV

from mcp_proto.host._spec import ConfigError, HostConfig, ServerSpec
from mcp_proto.host.config._locations import LOCATION_NAMES, standard_location
from mcp_proto.host.config._parse import detect_dialect, parse_config


def copy_fixture(tmp_path: Path, dialect: str) -> Path:
    target = tmp_path / dialect
    shutil.copytree(CONFIGS / dialect, target)
    return target


def test_load_reads_env_files_relative_to_the_config(tmp_path: Path) -> None:
    """VS Code ``envFile`` (``${workspaceFolder}`` is the folder holding ``.vscode``) and a
    plain relative ``envFile``, read from the config's folder."""
    root = copy_fixture(tmp_path, "vscode")
    c = load_config(root / ".vscode" / "mcp.json", env=ENV, inputs={"perplexity-key": "p"})
    assert c.dialect == "vscode"
    assert c.path == str(root / ".vscode" / "mcp.json")
    assert c.servers["perplexity"].env == {"PERPLEXITY_MODEL": "sonar",
                                           "PERPLEXITY_API_KEY": "p"}
    assert c.servers["perplexity"].cwd == str(root)
    (root / "cfg").mkdir()
    (root / "cfg" / "local.env").write_text("FROM_FILE=1\n")
    (root / "cfg" / "c.json").write_text(
        '{"mcpServers": {"s": {"command": "x", "envFile": "local.env"}}}')
    assert load_config(root / "cfg" / "c.json", dialect="cursor", env={}).servers["s"].env == \
        {"FROM_FILE": "1"}


def test_load_cursor_file_with_workspace(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "cursor")
    c = load_config(str(root / ".cursor" / "mcp.json"), env=ENV)
    notes = c.servers["notes"]
    assert notes.command[:3] == ("/home/me/bin/notes-mcp", "--root", str(root))
    assert notes.env == {"NOTES_LEVEL": "debug", "NOTES_TOKEN": "notes-token"}


def test_load_toml_with_tomllib(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "codex")
    c = load_config(root / ".codex" / "config.toml", env=ENV)
    assert c.dialect == "codex"
    assert c.servers["figma"].headers["Authorization"] == "Bearer figma-oauth"
    other = tmp_path / "servers.conf"
    other.write_text('[mcp_servers.s]\ncommand = "x"\n')
    assert load_config(other, dialect="codex", env={}).servers["s"].command == ("x",)


def test_load_accepts_text_mappings_and_configs() -> None:
    c = load_config('  {"mcpServers": {"s": {"command": "x"}}}', env={})
    assert c.servers == {"s": ServerSpec(name="s", command=("x",))}
    assert load_config({"mcpServers": {"s": {"command": "x"}}}, env={}) == c
    assert load_config(c) is c


def test_load_defaults_env_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_PROTO_TEST_VAR", "from-os")
    c = load_config('{"mcpServers": {"s": {"command": "${MCP_PROTO_TEST_VAR}"}}}',
                    dialect="claude-code")
    assert c.servers["s"].command == ("from-os",)


def test_unreadable_files_are_config_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as info:
        load_config(missing)
    assert [p.message for p in info.value.problems] == [
        f"cannot read {missing}: No such file or directory"]
    bad_toml = tmp_path / "c.toml"
    bad_toml.write_text("[mcp_servers\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad_toml)
    assert info.value.problems[0].message.startswith("not valid TOML: ")
    cfg = tmp_path / "c.json"
    cfg.write_text('{"mcpServers": {"s": {"command": "x", "envFile": "gone.env"}}}')
    with pytest.raises(ConfigError) as info:
        load_config(cfg, dialect="cursor", env={})
    assert [(p.field, p.message) for p in info.value.problems] == [
        ("envFile", f"cannot read {tmp_path / 'gone.env'}: No such file or directory")]


def test_bad_json_file_reports_line_and_column(tmp_path: Path) -> None:
    cfg = tmp_path / ".mcp.json"
    cfg.write_text('{\n  "mcpServers": {\n    "s": {"command": "x",}\n  }\n}\n')
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert str(info.value) == (
        f"{cfg}: 1 problem in the MCP config:\n"
        "  - a claude-code config must be strict JSON (no comments, no trailing commas): "
        "not valid JSON: Expecting property name enclosed in double quotes (line 3, column 26)")


# -- saving ------------------------------------------------------------------------------------

def test_save_round_trips_and_keeps_the_mode(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "claude-code")
    path = root / ".mcp.json"
    os.chmod(path, 0o640)
    c = load_config(path, env=ENV)
    assert save_config(c) == ()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert load_config(path, env=ENV) == c
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []


def test_save_converts_and_returns_warnings(tmp_path: Path) -> None:
    c = parse_config({"mcpServers": {"s": {"type": "sse", "url": "https://a.example/sse"}}},
                     dialect="claude-code")
    out = tmp_path / "settings.json"
    assert save_config(c, out, "zed") == (
        "s.url: zed cannot say SSE: written as a Streamable HTTP URL",)
    assert stat.S_IMODE(out.stat().st_mode) == _config_files.NEW_FILE_MODE
    assert load_config(out, dialect="zed", env={}).servers["s"].transport == "http"


def test_save_without_a_path_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no path"):
        save_config(HostConfig())


def test_a_failing_write_leaves_the_old_file(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Atomic save: the temporary file is flushed before the rename; a failure on the way
    leaves the old file as it was and no temporary behind."""
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {}}')
    config = parse_config({"mcpServers": {"s": {"command": "x"}}}, path=str(path))

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_config_files.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        save_config(config)
    assert path.read_text() == '{"mcpServers": {}}'
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mcp.json"]


def test_a_failing_rename_leaves_the_old_file(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[mcp_servers]\n")
    config = parse_config({"mcp_servers": {"s": {"command": "x"}}}, path=str(path))

    def broken_replace(src: str, dst: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_config_files.os, "replace", broken_replace)
    with pytest.raises(PermissionError):
        save_config(config)
    assert path.read_text() == "[mcp_servers]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


# -- locations (host-notes 3.1) ------------------------------------------------------------------

HOME = "/home/me"
MAC = "/Users/me"
WIN = "C:\\Users\\me"
WIN_ENV = {"APPDATA": "C:\\Users\\me\\AppData\\Roaming"}


@pytest.mark.parametrize(("name", "platform", "home", "env", "workspace", "expected"), [
    ("claude-desktop", "darwin", MAC, {}, None,
     "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"),
    ("claude-desktop", "win32", WIN, WIN_ENV, None,
     "C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json"),
    ("claude-desktop", "linux", HOME, {}, None,
     "/home/me/.config/Claude/claude_desktop_config.json"),
    ("claude-desktop", "linux", HOME, {"XDG_CONFIG_HOME": "/xdg"}, None,
     "/xdg/Claude/claude_desktop_config.json"),
    ("claude-code", "linux", HOME, {}, None, "/home/me/.claude.json"),
    ("claude-code", "linux", HOME, {}, "/p", "/p/.mcp.json"),
    ("cursor", "linux", HOME, {}, "/p", "/home/me/.cursor/mcp.json"),
    ("cursor", "win32", WIN, WIN_ENV, None, "C:\\Users\\me\\.cursor\\mcp.json"),
    ("vscode", "linux", HOME, {}, None, "/home/me/.config/Code/User/mcp.json"),
    ("vscode", "darwin", MAC, {}, None,
     "/Users/me/Library/Application Support/Code/User/mcp.json"),
    ("vscode", "win32", WIN, WIN_ENV, None,
     "C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json"),
    ("vscode", "linux", HOME, {}, "/p", "/p/.vscode/mcp.json"),
    ("windsurf", "linux", HOME, {}, None, "/home/me/.codeium/windsurf/mcp_config.json"),
    ("zed", "linux", HOME, {}, None, "/home/me/.config/zed/settings.json"),
    ("zed", "darwin", MAC, {}, None, "/Users/me/.config/zed/settings.json"),
    ("zed", "win32", WIN, WIN_ENV, None, "C:\\Users\\me\\AppData\\Roaming\\Zed\\settings.json"),
    ("gemini", "linux", HOME, {}, None, "/home/me/.gemini/settings.json"),
    ("codex", "linux", HOME, {}, None, "/home/me/.codex/config.toml"),
    ("codex", "linux", HOME, {"CODEX_HOME": "/opt/codex"}, None, "/opt/codex/config.toml"),
])
def test_standard_locations(name: str, platform: str, home: str, env: dict[str, str],
                            workspace: str | None, expected: str) -> None:
    assert standard_location(name, platform=platform, home=home, env=env,
                             workspace=workspace) == expected


def test_every_location_is_detected_as_its_dialect() -> None:
    """A file at a standard location is read in the right dialect without dialect=."""
    for name in LOCATION_NAMES:
        for platform, home, env in (("linux", HOME, {}), ("darwin", MAC, {}),
                                    ("win32", WIN, WIN_ENV)):
            for workspace in (None, "/p"):
                path = standard_location(name, platform=platform, home=home, env=env,
                                         workspace=workspace)
                root: dict[str, Any] = {"mcpServers": {}}
                assert detect_dialect(root, path=path) == name, path


def test_unknown_location_name() -> None:
    with pytest.raises(ValueError, match="unknown host 'atom'"):
        standard_location("atom", platform="linux", home=HOME, env={})


def test_resolve_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert resolve_location("codex") == str(tmp_path / "config.toml")
    project = tmp_path / ".vscode" / "mcp.json"
    project.parent.mkdir()
    project.write_text('{"servers": {}}')  # a project file counts only when it exists
    assert resolve_location("vscode", workspace=tmp_path) == str(project)
    assert resolve_location("./my.json") == "./my.json"
    assert resolve_location(Path("a") / "b.json") == os.path.join("a", "b.json")
