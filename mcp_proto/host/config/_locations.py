"""Where each host keeps its MCP config: pure path arithmetic on what the caller passes.

``platform`` is a ``sys.platform``-like string (``linux``, ``darwin``, ``win32`` ...), ``home``
the user's home directory and ``env`` the environment (``APPDATA``, ``XDG_CONFIG_HOME``,
``CODEX_HOME``): nothing is read here, so every platform's answer is testable anywhere.

Paths (host-notes 3.1):

- ``claude-desktop``: macOS ``~/Library/Application Support/Claude/claude_desktop_config.json``,
  Windows ``%APPDATA%\\Claude\\claude_desktop_config.json``, else
  ``$XDG_CONFIG_HOME/Claude/...`` (default ``~/.config``).
- ``claude-code``: the project's ``.mcp.json`` when a ``workspace`` is given, else
  ``~/.claude.json`` (its top-level ``mcpServers``; ``projects.<path>.mcpServers`` are kept
  as written but not loaded, see ``_config``).
- ``cursor`` ``~/.cursor/mcp.json``; ``windsurf`` ``~/.codeium/windsurf/mcp_config.json``;
  ``gemini`` ``~/.gemini/settings.json``: the user files (a workspace does not change them).
- ``vscode``: ``<workspace>/.vscode/mcp.json``, else the user ``mcp.json`` of ``Code/User``
  in the platform's config folder.
- ``zed``: ``~/.config/zed/settings.json`` (``$XDG_CONFIG_HOME`` honoured; macOS uses the same
  folder), Windows ``%APPDATA%\\Zed\\settings.json``.
- ``codex``: ``$CODEX_HOME/config.toml``, else ``~/.codex/config.toml``.

Project files (:data:`PROJECT_FILES`, :func:`location_candidates`): a standard name looks in
the project folder first (the current directory, or a workspace), then at the user's file,
as the hosts do: Claude Code ``.mcp.json``, VS Code ``.vscode/mcp.json``, Cursor
``.cursor/mcp.json``, Gemini CLI ``.gemini/settings.json`` (a settings file: used only when
it holds ``mcpServers``, :data:`PROJECT_SERVERS_KEY`).  Not looked for: Codex's
``.codex/config.toml`` (Codex reads it only for a project the user marked trusted, which
this layer does not judge: pass its path), Zed's ``.zed/settings.json`` (whether Zed reads
``context_servers`` there is unverified: pass its path), and Claude Desktop and Windsurf,
which have no project file.  The folder is looked at, then each parent up to (not
including) the user's home directory, else up to the filesystem root, as ``git`` finds its
repository: run in ``project/src``, ``--config vscode`` finds ``project/.vscode/mcp.json``
(:func:`project_folders`).
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

__all__ = ["LOCATION_NAMES", "MAX_PROJECT_DEPTH", "PROJECT_FILES", "PROJECT_SERVERS_KEY",
           "location_candidates", "project_folders", "project_location", "standard_location"]

#: Folders :func:`project_folders` walks up at most: deeper than any real source tree, and a
#: bound for a path that never reaches its root (a malformed one).
MAX_PROJECT_DEPTH = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class _Where:
    """One platform's folders, derived from home and env."""

    paths: ModuleType
    home: str
    env: Mapping[str, str]
    platform: str
    workspace: str | None

    def join(self, *parts: str) -> str:
        return str(self.paths.join(*parts))

    @property
    def windows(self) -> bool:
        return self.platform.startswith("win")

    @property
    def mac(self) -> bool:
        return self.platform == "darwin"

    @property
    def appdata(self) -> str:
        return self.env.get("APPDATA") or self.join(self.home, "AppData", "Roaming")

    @property
    def xdg_config(self) -> str:
        return self.env.get("XDG_CONFIG_HOME") or self.join(self.home, ".config")

    def app_config(self, folder: str) -> str:
        """The per-user config folder of an Electron app named ``folder``."""
        if self.windows:
            return self.join(self.appdata, folder)
        if self.mac:
            return self.join(self.home, "Library", "Application Support", folder)
        return self.join(self.xdg_config, folder)


def _claude_desktop(w: _Where) -> str:
    return w.join(w.app_config("Claude"), "claude_desktop_config.json")


def _claude_code(w: _Where) -> str:
    return w.join(w.workspace, ".mcp.json") if w.workspace else w.join(w.home, ".claude.json")


def _vscode(w: _Where) -> str:
    if w.workspace:
        return w.join(w.workspace, ".vscode", "mcp.json")
    return w.join(w.app_config("Code"), "User", "mcp.json")


def _zed(w: _Where) -> str:
    if w.windows:
        return w.join(w.appdata, "Zed", "settings.json")
    return w.join(w.xdg_config, "zed", "settings.json")


def _codex(w: _Where) -> str:
    base = w.env.get("CODEX_HOME") or w.join(w.home, ".codex")
    return w.join(base, "config.toml")


_LOCATIONS: dict[str, Callable[[_Where], str]] = {
    "claude-desktop": _claude_desktop,
    "claude-code": _claude_code,
    "cursor": lambda w: w.join(w.home, ".cursor", "mcp.json"),
    "vscode": _vscode,
    "windsurf": lambda w: w.join(w.home, ".codeium", "windsurf", "mcp_config.json"),
    "zed": _zed,
    "gemini": lambda w: w.join(w.home, ".gemini", "settings.json"),
    "codex": _codex,
}

#: The names :func:`standard_location` knows (``--config NAME`` in the CLI).
LOCATION_NAMES: tuple[str, ...] = tuple(_LOCATIONS)


def standard_location(name: str, *, platform: str, home: str, env: Mapping[str, str],
                      workspace: str | None = None) -> str:
    """The standard config path of host ``name`` (one of :data:`LOCATION_NAMES`) on
    ``platform``, for the user whose home is ``home``; ``workspace`` selects the project
    file of ``claude-code`` and ``vscode``.  Windows paths use ``\\``.  The file may not
    exist.  ``ValueError`` for an unknown name."""
    try:
        locate = _LOCATIONS[name]
    except KeyError:
        raise ValueError(f"unknown host {name!r}; one of {', '.join(LOCATION_NAMES)}") from None
    paths = ntpath if platform.startswith("win") else posixpath
    return locate(_Where(paths=paths, home=home, env=env, platform=platform,
                         workspace=workspace))


#: Each host's project file, relative to the project folder (module docstring).
PROJECT_FILES: dict[str, tuple[str, ...]] = {
    "claude-code": (".mcp.json",),
    "vscode": (".vscode", "mcp.json"),
    "cursor": (".cursor", "mcp.json"),
    "gemini": (".gemini", "settings.json"),
}

#: Hosts whose project file is a settings file of other things too: it counts only when it
#: holds this servers key (a ``.gemini/settings.json`` with only a theme is no MCP config).
PROJECT_SERVERS_KEY: dict[str, str] = {"gemini": "mcpServers"}


def project_location(name: str, workspace: str, *, platform: str) -> str | None:
    """The project file of host ``name`` in the folder ``workspace``, or None when the host
    has none (or it is not looked for: module docstring)."""
    parts = PROJECT_FILES.get(name)
    if parts is None:
        return None
    paths = ntpath if platform.startswith("win") else posixpath
    return str(paths.join(workspace, *parts))


def project_folders(workspace: str, *, platform: str, home: str) -> tuple[str, ...]:
    """``workspace`` and each of its parents, nearest first, up to (not including) ``home``
    when the workspace is inside it, else up to the filesystem root.  ``home`` itself is
    never a project folder: the user's files live there."""
    paths = ntpath if platform.startswith("win") else posixpath
    folder = paths.normpath(workspace)
    stop = paths.normcase(paths.normpath(home)) if home else None
    folders: list[str] = []
    for _ in range(MAX_PROJECT_DEPTH):
        if stop is not None and paths.normcase(folder) == stop:
            break
        folders.append(folder)
        parent = paths.dirname(folder)
        if parent == folder:  # the root
            break
        folder = parent
    return tuple(folders)


def location_candidates(name: str, *, platform: str, home: str, env: Mapping[str, str],
                        workspace: str | None = None) -> tuple[str, ...]:
    """Where host ``name`` keeps its config, in the order to look: the project file of
    ``workspace`` and of each parent folder (:func:`project_folders`; when a workspace is
    given and the host has a project file), then the user's file.  The binding takes the
    first that exists (the last when none does).  ``ValueError`` for an unknown name."""
    user = standard_location(name, platform=platform, home=home, env=env)
    projects: list[str] = []
    if workspace and name in PROJECT_FILES:
        for folder in project_folders(workspace, platform=platform, home=home):
            project = project_location(name, folder, platform=platform)
            if project is not None and project != user and project not in projects:
                projects.append(project)
    return (*projects, user)
