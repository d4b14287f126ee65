"""Host config files on disk: the only code that reads or writes them.

The core (:mod:`mcp_proto.host`) parses text and mappings and never opens a file; this module
reads the config (JSON, or TOML through ``tomllib`` / ``tomli``), the ``envFile`` files it
names, finds the standard locations on this machine, and saves atomically.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp_proto.host._spec import ConfigError, ConfigProblem, HostConfig, InputSpec
from mcp_proto.host.config._dump import dump_config_with_warnings
from mcp_proto.host.config._expand import MAX_DOTENV_BYTES, OnMissing
from mcp_proto.host.config._inputs import resolve_inputs
from mcp_proto.host.config._locations import (
    LOCATION_NAMES,
    PROJECT_SERVERS_KEY,
    location_candidates,
)
from mcp_proto.host.config._parse import (
    MAX_CONFIG_BYTES,
    env_file_paths,
    needed_inputs,
    parse_config,
)

__all__ = ["LOCATION_NAMES", "NEW_FILE_MODE", "AskInput", "find_config", "load_config",
           "resolve_location", "save_config", "standard_locations"]

#: Mode of a config file that did not exist before: it may hold secrets (env values,
#: headers), so only its owner reads it.  An existing file keeps its own mode.
NEW_FILE_MODE = 0o600

#: ``ask(spec)``: the value of a VS Code input nothing else gave, or None to leave it
#: missing (its ``default`` then applies, else the load fails naming it).
AskInput = Callable[[InputSpec], str | None]


def _read(path: Path, limit: int) -> bytes:
    """The bytes of ``path``; ConfigError (one problem naming the path) when unreadable or
    larger than ``limit``."""
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError([ConfigProblem(None, None, f"cannot read {path}: {reason}")],
                          str(path)) from None
    if len(data) > limit:
        raise ConfigError([ConfigProblem(None, None, f"{path} is larger than {limit} bytes")],
                          str(path))
    return data


def _toml(data: bytes, path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]  # noqa: PLC0415
        except ImportError:
            raise ConfigError([ConfigProblem(
                None, None, "reading a TOML config on Python 3.10 needs tomli: "
                            "pip install 'mcp-proto[toml]'")], str(path)) from None
    try:
        loaded: dict[str, Any] = tomllib.loads(data.decode("utf-8-sig"))
        return loaded
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text (byte {exc.start})"
    except tomllib.TOMLDecodeError as exc:
        message = f"not valid TOML: {exc}"
    raise ConfigError([ConfigProblem(None, None, message)], str(path))


def _env_files(paths: tuple[str, ...], base: Path, *, strict: bool = True) -> dict[str, str]:
    """Each ``envFile`` path -> its text, relative paths against ``base``.  ConfigError
    listing every file that cannot be read (``strict``), else those are left out."""
    texts: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    for name in paths:
        target = Path(name).expanduser()
        if not target.is_absolute():
            target = base / target
        try:
            texts[name] = _read(target, MAX_DOTENV_BYTES).decode("utf-8-sig")
        except ConfigError as exc:
            problems.extend(ConfigProblem(None, "envFile", p.message) for p in exc.problems)
        except UnicodeDecodeError:
            problems.append(ConfigProblem(None, "envFile", f"{target} is not UTF-8 text"))
    if problems and strict:
        raise ConfigError(problems)
    return texts


def load_config(source: str | os.PathLike[str] | bytes | Mapping[str, Any] | HostConfig, *,
                dialect: str | None = None, env: Mapping[str, str] | None = None,
                inputs: Mapping[str, str] | None = None,
                workspace: str | os.PathLike[str] | None = None,
                on_missing: OnMissing = "error", ask: AskInput | None = None) -> HostConfig:
    """A :class:`HostConfig` from a file path, JSON text (a ``str`` starting with ``{``), a
    mapping, or a HostConfig (returned as is).  ``HostConfig.path`` is the file's absolute
    path (so ``${workspaceFolder}`` of a ``.vscode/mcp.json`` is the absolute project folder).

    A ``.toml`` file, or any file with ``dialect="codex"``, is read as TOML.  Each ``envFile``
    the config names is read, relative to the config's folder (else ``workspace``, else the
    current directory).  ``env`` defaults to ``os.environ``.

    VS Code ``${input:ID}`` values come from ``inputs`` first, then the environment
    (``MCP_PROTO_INPUT_<ID>``: :attr:`InputSpec.env_var`), then ``ask(spec)``, called once per
    input still missing, in file order (the CLI prompts on a terminal, without echo when
    ``spec.password``); an answer of None leaves the input's ``default``, else it is missing.
    A value is never stored in the returned config's ``inputs`` (only the declarations).

    ``on_missing="keep"`` (what ``config convert`` wants: the dump writes the templates
    back) keeps each unset variable and missing input as written, with a warning, does not
    call ``ask``, and reads no ``envFile`` it cannot (a warning instead): nothing is needed
    to load and write the file again.

    Raises :class:`ConfigError` for an unreadable file (one problem naming the path), an
    unreadable ``envFile`` (one problem per file) or a bad config (every problem); fix the
    file or pass what is missing (``inputs=``, ``env=``) and load again.
    """
    if isinstance(source, HostConfig):
        return source
    environ: Mapping[str, str] = os.environ if env is None else env
    ws = os.fspath(workspace) if workspace is not None else None
    path: Path | None = None
    parsed: str | bytes | Mapping[str, Any]
    if isinstance(source, (Mapping, bytes)) \
            or (isinstance(source, str) and source.lstrip().startswith("{")):
        parsed = source
    else:
        path = Path(os.path.abspath(os.fspath(source)))
        data = _read(path, MAX_CONFIG_BYTES)
        parsed = _toml(data, path) if path.suffix.lower() == ".toml" or dialect == "codex" \
            else data
    where = str(path) if path is not None else None
    base = path.parent if path is not None else Path(ws or ".")
    keep = on_missing == "keep"
    values, missing = resolve_inputs(needed_inputs(parsed, dialect=dialect, path=where),
                                     explicit=inputs, env=environ)
    if ask is not None and not keep:
        for spec in missing:
            answer = ask(spec)
            if answer is not None:
                values[spec.id] = answer
    names = env_file_paths(parsed, dialect=dialect, path=where, env=environ, inputs=values,
                           workspace=ws)
    texts = _env_files(names, base, strict=not keep) if names else {}
    return parse_config(parsed, dialect=dialect, path=where, env=environ, inputs=values,
                        workspace=ws, env_files=texts, on_missing=on_missing)


def standard_locations(name: str, *, workspace: str | os.PathLike[str] | None = None,
                       cwd: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """Where host ``name`` keeps its config on this machine, in the order
    :func:`resolve_location` looks: the project file of ``workspace`` (default ``cwd``,
    default the current directory) and of each parent folder up to the user's home (or the
    root), then the user's file.  ``ValueError`` for an unknown name."""
    folder = workspace if workspace is not None else cwd if cwd is not None else os.getcwd()
    return location_candidates(name, platform=sys.platform, home=str(Path.home()),
                               env=os.environ, workspace=os.path.abspath(os.fspath(folder)))


def _usable(name: str, candidate: str) -> bool:
    path = Path(candidate)
    if not path.is_file():
        return False
    key = PROJECT_SERVERS_KEY.get(name)
    if key is None:
        return True
    try:
        with path.open("rb") as f:  # as much as a load would read
            return f'"{key}"'.encode() in f.read(MAX_CONFIG_BYTES)
    except OSError:
        return True  # let the load say why it cannot be read


def resolve_location(source: str | os.PathLike[str], *,
                     workspace: str | os.PathLike[str] | None = None,
                     cwd: str | os.PathLike[str] | None = None) -> str:
    """The config file ``source`` means: for a host's standard name (``claude-desktop``,
    ``claude-code``, ``cursor``, ``vscode``, ``windsurf``, ``zed``, ``gemini``, ``codex``)
    the project file of ``workspace`` (default ``cwd``, default the current directory:
    ``.mcp.json``, ``.vscode/mcp.json``, ``.cursor/mcp.json``, ``.gemini/settings.json``
    when it holds ``mcpServers``) when it exists, else that of the nearest parent folder
    that has one (up to the user's home directory, else the root), else the user's file
    (which may not exist either: loading it then names its path; :func:`standard_locations`
    lists every place looked at).  Any other ``source`` is returned as it is."""
    text = os.fspath(source)
    if text not in LOCATION_NAMES:
        return text
    candidates = standard_locations(text, workspace=workspace, cwd=cwd)
    for candidate in candidates[:-1]:
        if _usable(text, candidate):
            return candidate
    return candidates[-1]


def find_config(source: str | os.PathLike[str], *,
                workspace: str | os.PathLike[str] | None = None,
                cwd: str | os.PathLike[str] | None = None) -> str:
    """As :func:`resolve_location`, but for a standard name whose files are all missing
    raises :class:`ConfigError` listing every place looked at (a path given as is is
    returned as is: loading it names it when it is missing)."""
    found = resolve_location(source, workspace=workspace, cwd=cwd)
    text = os.fspath(source)
    if text not in LOCATION_NAMES or Path(found).is_file():
        return found
    places = standard_locations(text, workspace=workspace, cwd=cwd)
    raise ConfigError([ConfigProblem(None, None, f"no {text} config found; looked at: "
                                                 + ", ".join(places))])


def save_config(config: HostConfig, path: str | os.PathLike[str] | None = None,
                dialect: str | None = None) -> tuple[str, ...]:
    """Write ``config`` (as ``dialect``, default its own) to ``path`` (default
    ``config.path``) atomically: a temporary file in the same folder, flushed to disk, then
    renamed over the target, so a reader sees the old file or the new one, never half of
    one.  An existing file keeps its mode; a new one gets :data:`NEW_FILE_MODE`.  Returns
    the warnings of the conversion (what the dialect cannot say).

    ``ValueError`` when there is no path at all or the dialect is unknown; ``OSError`` when
    the folder cannot be written (the old file is then untouched).
    """
    target = path if path is not None else config.path
    if target is None:
        raise ValueError("the config has no path: pass path=")
    target_path = Path(os.fspath(target))
    text, warnings = dump_config_with_warnings(config, dialect)
    try:
        mode = target_path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    folder = target_path.parent
    fd, temp = tempfile.mkstemp(prefix=f".{target_path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target_path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _sync_folder(folder)
    return warnings


def _sync_folder(folder: Path) -> None:
    """Flush the rename to disk where the platform allows (POSIX); best effort."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
