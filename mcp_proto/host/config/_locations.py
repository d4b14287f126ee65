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
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

__all__ = ["LOCATION_NAMES", "standard_location"]


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
