"""Host config files in, :class:`HostConfig` out: every dialect of host-notes section 3, pure.

``parse_config`` takes JSON text or an already-parsed mapping (the binding reads files and
parses TOML) and returns one :class:`ServerSpec` per server, or raises ONE
:class:`ConfigError` listing every problem of the file.

This module loads the text, detects the dialect and reads the whole file; each entry is
read by ``_entry`` (:data:`KEY_TABLES`, :data:`TYPE_VALUES` and the timeout limits
live there and are re-exported here).

Rules (host-notes 3.1 and 3.2; where the notes were silent the choice is written here):

- **Dialect**: ``dialect=``, else the path (:data:`PATH_RULES`), else the root key
  (``servers`` vscode, ``context_servers`` zed, ``mcp_servers`` codex, ``mcpServers``
  generic).  A generic guess is refined when the entries use keys of exactly one dialect
  (:data:`REFINING_KEYS`: ``serverUrl`` windsurf, ``httpUrl`` gemini, ``restartPolicy`` adk,
  ``exposure`` rpi ...), with a warning saying so.
- **Keys**: each dialect reads the keys of its table in :data:`KEY_TABLES` (key -> kind);
  every other key of an entry goes to ``raw`` unchanged, every other root key to
  ``HostConfig.extra``.  ``~/.claude.json`` servers under ``projects.<path>.mcpServers``
  stay in ``extra`` (a warning counts them): only the top-level ``mcpServers`` are loaded.
- **Transport**: an explicit ``type``/``transport`` wins; else a command is stdio; Gemini
  ``url`` is SSE and ``httpUrl`` Streamable HTTP; every other URL key is Streamable HTTP.
  Both a command and a URL, neither, a blank one, a URL with ``user:password@`` or a scheme
  other than http(s) are problems.  ``args`` beside a URL are ignored, as other hosts
  ignore them (a URL server runs no command), with a warning: they are kept as written in
  ``raw``, written back to the same dialect and dropped, with a warning, on conversion (an
  empty list says nothing and is not kept).
- **Data**: the source holds JSON or TOML data only, checked before any entry is read.  A
  key that is no string or a value of another type (a set, bytes ...: only from a mapping)
  is a problem naming where it is (at most :data:`MAX_LISTED_FAULTS` listed, then a
  count); nesting deeper than :data:`MAX_DEPTH` is one problem; an integer longer than
  Python reads (``sys.get_int_max_str_digits``) is invalid JSON.
- **Lone surrogates** (``"\\ud83d"`` in JSON: Node's ``JSON.stringify`` writes a cut pair
  that way) are refused only where the parser reads text and uses it: a server name, the
  command, args, ``env`` names and values, header values, url, cwd, envFile, a
  description, tool names and Codex's variable names (a problem naming the place: no
  process, header or model can be given one).  Anywhere else (``raw`` keys, the root keys
  in ``extra``: ``projects`` of ``~/.claude.json``, the rest of a settings file) the value
  is kept as it is: the JSON dump writes it back as the same ``\\uXXXX`` escape (TOML
  cannot say one: the Codex dump leaves it out with a warning).  Warnings and problems
  show a surrogate as its escape, so they can be printed.
- **Values**: ``command`` is a string (a list of strings in the generic dialect), ``args`` a
  list of strings; ``env``/``headers`` values are strings, numbers are accepted as their
  decimal text with a warning (integers of any size), anything else is a problem.  Timeouts
  become seconds (rpi and Codex ``*_sec`` seconds, Gemini ``timeout`` and Codex's legacy
  ``startup_timeout_ms`` milliseconds; a generic bare ``timeout`` is seconds up to
  :data:`BARE_TIMEOUT_SECONDS_MAX`, milliseconds above, with a warning); a timeout or an
  ADK restart delay must be positive (a delay: at least 0) and at most
  :data:`MAX_TIMEOUT` seconds, however large the number (an integer beyond a float's range
  is out of range, never an ``OverflowError``).
- **Variables** are expanded in the command, args, env, cwd, url, headers and envFile values
  (:mod:`._expand`); ``templates`` keeps each such field as written: ``command`` the whole
  argv, ``env``/``headers`` the entries that held a variable, ``url``/``cwd`` the string.
  Codex keeps its ``*_env_var`` keys there too: ``env_vars`` (names), ``bearer_token_env_var``
  and ``env_http_headers``.  ``envFile`` (Cursor stdio, VS Code) is looked up in
  ``env_files`` by its expanded path and merged under ``env``; ``templates["env_file"]`` is
  ``{"path": <as written>, "keys": (<names it supplied>)}``.  A reference the dialect
  leaves literal (``${X}`` in Claude Desktop or Cursor ...) is a warning naming server,
  field and variable (``_expand.literal_warnings``); under ``on_missing="keep"`` so is each
  variable kept unset, and an ``envFile`` not passed in ``env_files`` is kept unread.
- **Inputs** (VS Code): the root ``inputs`` are read into ``HostConfig.inputs``
  (``_inputs``; kept as written in ``extra``); a declared ``default`` is the value of an
  input not given; :func:`needed_inputs` says which ones a file uses.
- **Zed**: ``"source": "custom"`` entries and the legacy ``"command": {"path", "args",
  "env"}`` shape are read alike (written back in the custom shape); ``"source":
  "extension"`` entries are kept whole in ``raw`` with ``enabled=False`` and a warning (an
  extension starts them, not us), so they are written back unchanged.
- **Gemini**: a server in the root ``mcp.excluded`` list, or missing from ``mcp.allowed``,
  is ``enabled=False``.  ``trust: true`` is ``auto_approve=("*",)``.
- **Comments**: VS Code, Zed and Gemini files may hold ``//`` and ``/* */`` comments and
  trailing commas (JSONC); other dialects must be strict JSON.
- No message holds a value: only key names, variable names, input ids and type names.
"""

from __future__ import annotations

import datetime
import json
import posixpath
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from .._spec import (
    DIALECTS,
    ConfigError,
    ConfigProblem,
    Dialect,
    HostConfig,
    InputSpec,
    ServerSpec,
)
from ._entry import (
    BARE_TIMEOUT_SECONDS_MAX,
    EXPANDED_KINDS,
    KEY_TABLES,
    MAX_TIMEOUT,
    TYPE_VALUES,
    Ctx,
    parse_entry,
    plain_copy,
    type_name,
    word,
)
from ._expand import ON_MISSING, Expander, OnMissing, Var, input_env_name, tokenize
from ._inputs import parse_inputs

__all__ = [
    "BARE_TIMEOUT_SECONDS_MAX",
    "JSONC_DIALECTS",
    "KEY_TABLES",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_LISTED_FAULTS",
    "MAX_SERVERS",
    "MAX_TIMEOUT",
    "PATH_RULES",
    "REFINING_KEYS",
    "ROOT_KEYS",
    "TYPE_VALUES",
    "detect_dialect",
    "env_file_paths",
    "gemini_enabled",
    "needed_inputs",
    "parse_config",
]

#: 16 MiB of config text, the core's message bound: real configs are a few KiB; a bigger
#: input is a mistake (a log or a dump given as the config), refused before parsing.
MAX_CONFIG_BYTES = 16 * 1024 * 1024

#: Servers one file may name.  A host runs each as a process or a connection; rpi caps its
#: registry at 64, so 1024 is far beyond any real file and still bounds the work.
MAX_SERVERS = 1024

#: Nesting of values (a mapping passed in bypasses the JSON decoder's own limit): real
#: configs nest fewer than 10 levels; the bound keeps every recursive walk of ``raw`` and
#: ``extra`` (copying, dumping, comparing) far from Python's recursion limit.
MAX_DEPTH = 64

#: The key holding the servers, per dialect.
ROOT_KEYS: dict[Dialect, str] = {d: "mcpServers" for d in DIALECTS}
ROOT_KEYS.update({"vscode": "servers", "zed": "context_servers", "codex": "mcp_servers"})

#: Root key -> dialect, for a source with neither ``dialect=`` nor a known path.  Checked in
#: this order; ``mcpServers`` is the most specific, ``servers`` the most generic word.
_ROOT_DETECT: tuple[tuple[str, Dialect], ...] = (
    ("mcpServers", "generic"), ("context_servers", "zed"), ("mcp_servers", "codex"),
    ("servers", "vscode"))

#: Path endings (lower case, ``/`` separated) -> dialect.  The first match wins.
PATH_RULES: tuple[tuple[tuple[str, ...], Dialect], ...] = (
    ((".vscode", "mcp.json"), "vscode"),
    (("code", "user", "mcp.json"), "vscode"),
    (("code - insiders", "user", "mcp.json"), "vscode"),
    (("vscodium", "user", "mcp.json"), "vscode"),
    ((".cursor", "mcp.json"), "cursor"),
    ((".gemini", "settings.json"), "gemini"),
    (("gemini-cli", "settings.json"), "gemini"),
    ((".codex", "config.toml"), "codex"),
    (("claude_desktop_config.json",), "claude-desktop"),
    ((".claude.json",), "claude-code"),
    ((".mcp.json",), "claude-code"),
    (("windsurf", "mcp_config.json"), "windsurf"),
    ((".kiro", "settings", "mcp.json"), "adk"),
    (("zed", "settings.json"), "zed"),
    ((".zed", "settings.json"), "zed"),
)

#: Entry keys only one dialect has: they refine a generic guess.
REFINING_KEYS: dict[str, Dialect] = {
    "serverUrl": "windsurf", "disabledTools": "windsurf",
    "httpUrl": "gemini", "includeTools": "gemini", "excludeTools": "gemini", "trust": "gemini",
    "restartPolicy": "adk", "exposure": "rpi",
}

#: Dialects whose hosts accept comments and trailing commas in their JSON files.
JSONC_DIALECTS: frozenset[Dialect] = frozenset({"vscode", "zed", "gemini"})

#: Every alternative matches wherever it starts (a string without its closing quote ends at
#: the line, a comment without ``*/`` at the text), so one pass is linear: a pattern that
#: could fail after a long scan (``/* /* /*`` ...) would rescan from every start.  What is
#: unterminated is kept as written, so the strict decoder still refuses it.
_JSONC_COMMENTS = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)', re.DOTALL)
_JSONC_COMMAS = re.compile(r'"(?:[^"\\\n]|\\.)*"?|,(?=\s*[}\]])')

#: A UTF-16 surrogate code point (``"\\ud800"`` in JSON): a Python string holds it, Unicode
#: text does not, so a process argument, a header or a model's tool list cannot carry it.
_SURROGATE = re.compile("[\ud800-\udfff]")

#: Why a server name holds no surrogate (the entry's fields: ``_entry``).
_SURROGATE_NAME = "this key holds a lone surrogate (\\uD800-\\uDFFF): not Unicode text, " \
                  "so no tool name or message can carry it"

#: The scalars of config data: JSON's and TOML's (a ``datetime`` is a ``date``).  A mapping
#: passed in that holds anything else (a set, bytes, an object) is refused: no file can say
#: it, so it could be neither written back nor converted.
_DATA_SCALARS = (str, bool, int, float, datetime.date, datetime.time)

#: Problems of that kind (a foreign type, a key that is no string) listed for one source;
#: the rest are counted.  A hand-written config has one or two; hundreds mean a blob or a bug in the
#: caller, and a short list is enough to say so.
MAX_LISTED_FAULTS = 20


# -- loading --------------------------------------------------------------------------------

class _NonFinite(ValueError):
    pass


def _reject_constant(name: str) -> float:
    raise _NonFinite(name)


def _blank_comment(m: re.Match[str]) -> str:
    text = m[0]
    unterminated = text.startswith("/*") and (len(text) < 4 or not text.endswith("*/"))
    if text.startswith('"') or unterminated:
        return text  # a string, or an unterminated comment (left for the decoder to refuse)
    return re.sub(r"[^\n]", " ", text)


def _strip_jsonc(text: str) -> str:
    """``text`` without comments and trailing commas, every other character where it was
    (so line and column of a later error stay right)."""
    text = _JSONC_COMMENTS.sub(_blank_comment, text)
    return _JSONC_COMMAS.sub(lambda m: m[0] if m[0].startswith('"') else " ", text)


def _digits_problem(exc: ValueError) -> str | None:
    """The problem when ``json.loads`` refused an integer longer than Python converts
    (``sys.get_int_max_str_digits``), a plain ValueError; None for any other error."""
    if "integer string conversion" in str(exc):
        return "not valid JSON: an integer has more digits than Python reads"
    return None


def _decode(text: str, problems: list[ConfigProblem]) -> tuple[Any, str | None]:
    """The JSON value of ``text``; when it needed the JSONC allowance (comments, trailing
    commas), also the strict decoder's complaint."""
    def loads(t: str) -> Any:
        return json.loads(t, parse_constant=_reject_constant)

    try:
        return loads(text), None
    except _NonFinite as exc:
        problems.append(ConfigProblem(None, None, f"{exc} is not a JSON number"))
        return None, None
    except json.JSONDecodeError as exc:
        first = f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        problems.append(ConfigProblem(None, None, "values are nested too deeply"))
        return None, None
    except ValueError as exc:  # an integer of too many digits: not a JSONDecodeError
        problems.append(ConfigProblem(None, None, _digits_problem(exc) or "not valid JSON"))
        return None, None
    try:
        return loads(_strip_jsonc(text)), first
    except ValueError as exc:
        problems.append(ConfigProblem(None, None, _digits_problem(exc) or first))
        return None, None
    except RecursionError:
        problems.append(ConfigProblem(None, None, first))
        return None, None


def _value_fault(value: object) -> str | None:
    """What makes one scalar no config data (None when it is fine): a type neither JSON nor
    TOML has.  (A lone surrogate is config data: only the fields an entry uses refuse it.)"""
    if value is None or isinstance(value, _DATA_SCALARS):
        return None
    return f"is of type {type(value).__name__}, which no config file holds (JSON and " \
           "TOML values only)"


def _scan(value: Any) -> tuple[bool, bool]:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH`, and whether a key or value
    in it is no config data (:func:`_value_fault`; a key must be a string).  Iterative: a
    mapping passed in may nest without bound (or refer to itself)."""
    fault = False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True, fault
        if isinstance(item, Mapping):
            for k, v in item.items():
                if not isinstance(k, str):
                    fault = True
                stack.append((v, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
        elif _value_fault(item) is not None:
            fault = True
    return False, fault


def _dotted(path: tuple[object, ...]) -> str | None:
    """A location as ``key.key[index]``, each surrogate escaped (``\\ud800``)."""
    where = ""
    for part in path:
        if isinstance(part, int):  # a list index (keys are strings here)
            where += f"[{part}]"
        else:
            shown = str(part).encode("utf-8", "backslashreplace").decode("utf-8")
            where = f"{where}.{shown}" if where else shown
    return where or None


def _fault_problems(root: Mapping[str, Any]) -> list[ConfigProblem]:
    """One problem per key or value that is no config data (the first
    :data:`MAX_LISTED_FAULTS`, then a count), each naming where it is: the server and the
    field path inside it for an entry, else the path from the root.  A value is never
    shown (it may be a secret); a key is, escaped."""
    found: list[tuple[tuple[object, ...], str]] = []
    stack: list[tuple[Any, tuple[object, ...]]] = [(root, ())]
    while stack:  # depth already checked by _scan
        item, path = stack.pop()
        if isinstance(item, Mapping):
            children: list[tuple[Any, tuple[object, ...]]] = []
            for k, v in item.items():
                here = (*path, k if isinstance(k, str) else repr(k))
                if not isinstance(k, str):
                    found.append((here, f"this key is not a string ({type(k).__name__}): "
                                        "config keys are strings"))
                children.append((v, here))
            stack.extend(reversed(children))  # popped in file order
        elif isinstance(item, (list, tuple)):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(item))))
        else:
            fault = _value_fault(item)
            if fault is not None:
                found.append((path, f"the value {fault}"))
    problems: list[ConfigProblem] = []
    servers_keys = {key for key, _ in _ROOT_DETECT}
    for path, message in found[:MAX_LISTED_FAULTS]:
        server: str | None = None
        rest = path
        if len(path) >= 2 and path[0] in servers_keys:
            server, rest = _dotted(path[1:2]), path[2:]
        problems.append(ConfigProblem(server, _dotted(rest), message))
    if len(found) > MAX_LISTED_FAULTS:
        problems.append(ConfigProblem(None, None, f"{len(found) - MAX_LISTED_FAULTS} more "
                                                  "keys or values are no config data"))
    return problems


def _load(source: str | bytes | Mapping[str, Any],
          problems: list[ConfigProblem]) -> tuple[Mapping[str, Any] | None, str | None]:
    """The root mapping of ``source`` (None after a problem) and, when it was JSONC, the
    strict decoder's complaint."""
    jsonc: str | None = None
    if isinstance(source, (bytes, bytearray)):
        if len(source) > MAX_CONFIG_BYTES:
            problems.append(ConfigProblem(None, None,
                                          f"the config is larger than {MAX_CONFIG_BYTES} bytes"))
            return None, None
        try:
            source = bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            problems.append(ConfigProblem(None, None, f"not UTF-8 text (byte {exc.start})"))
            return None, None
    if isinstance(source, str):
        if len(source) > MAX_CONFIG_BYTES:
            problems.append(ConfigProblem(
                None, None, f"the config is larger than {MAX_CONFIG_BYTES} characters"))
            return None, None
        root, jsonc = _decode(source.lstrip("\ufeff"), problems)
        if problems:
            return None, None
    elif isinstance(source, Mapping):
        root = source
    else:
        raise TypeError(f"a config is JSON text or a mapping, not {type(source).__name__}")
    if not isinstance(root, Mapping):
        problems.append(ConfigProblem(None, None,
                                      f"the config must be an object, not {type_name(root)}"))
        return None, None
    too_deep, fault = _scan(root)
    if too_deep:
        problems.append(ConfigProblem(None, None,
                                      f"values are nested deeper than {MAX_DEPTH} levels"))
        return None, None
    if fault:
        problems.extend(_fault_problems(root))
        return None, None
    return root, jsonc


# -- dialect --------------------------------------------------------------------------------

def _path_dialect(path: str) -> Dialect | None:
    parts = PurePosixPath(path.replace("\\", "/").lower()).parts
    for suffix, dialect in PATH_RULES:
        if parts[-len(suffix):] == suffix:
            return dialect
    return None


def detect_dialect(root: Mapping[str, Any], *, path: str | None = None,
                   warnings: list[str] | None = None) -> Dialect:
    """The dialect of a parsed config: from ``path`` (:data:`PATH_RULES`), else its root keys,
    refined by the entry keys (:data:`REFINING_KEYS`).  ``warnings`` receives why a guess was
    made, when one was.  Never raises: a root of no known shape is ``generic``."""
    notes = warnings if warnings is not None else []
    found = _path_dialect(path) if path else None
    if found is not None:
        return found
    present = [(key, d) for key, d in _ROOT_DETECT if key in root]
    if not present:
        return "generic"
    if len(present) > 1:
        notes.append(f"the config has several server keys ({', '.join(k for k, _ in present)}): "
                     f"read {present[0][0]!r}; pass dialect= to choose")
    key, dialect = present[0]
    if dialect != "generic" or not isinstance(root[key], Mapping):
        return dialect
    hints: dict[Dialect, str] = {}
    for entry in root[key].values():
        if isinstance(entry, Mapping):
            for k in entry:
                if isinstance(k, str) and k in REFINING_KEYS:
                    hints.setdefault(REFINING_KEYS[k], k)
    if len(hints) == 1:
        ((refined, why),) = hints.items()
        notes.append(f"read as a {refined} config (it uses {why!r}); pass dialect= to be sure")
        return refined
    if len(hints) > 1:
        notes.append("the entries use keys of several dialects "
                     f"({', '.join(sorted(hints.values()))}): read as generic")
    return "generic"

# -- the whole file -------------------------------------------------------------------------

def _infer_workspace(path: str | None) -> str | None:
    """The project folder of a ``.vscode/mcp.json`` or ``.cursor/mcp.json`` path."""
    if not path:
        return None
    norm = path.replace("\\", "/")
    head, file_name = posixpath.split(norm)
    folder, dot_dir = posixpath.split(head)
    if file_name.lower() == "mcp.json" and dot_dir.lower() in (".vscode", ".cursor") and folder:
        return path[:len(folder)]
    return None


def gemini_enabled(extra: Mapping[str, Any], name: str) -> bool:
    """False when Gemini's root ``mcp.excluded`` names the server, or ``mcp.allowed`` lists
    servers and not this one."""
    mcp = extra.get("mcp")
    if not isinstance(mcp, Mapping):
        return True
    excluded, allowed = mcp.get("excluded"), mcp.get("allowed")
    if isinstance(excluded, list) and name in excluded:
        return False
    return not (isinstance(allowed, list) and name not in allowed)


def _check_root(root: Mapping[str, Any], dialect: Dialect, problems: list[ConfigProblem],
                warnings: list[str]) -> Mapping[str, Any] | None:
    """The servers mapping of ``root`` (None when absent or after a problem)."""
    key = ROOT_KEYS[dialect]
    if key not in root:
        others = [k for k, _ in _ROOT_DETECT if k in root and k != key]
        if others:
            problems.append(ConfigProblem(
                None, others[0], f"a {dialect} config keeps its servers under {key!r}"))
        elif dialect not in ("zed", "gemini"):
            warnings.append(f"the config has no {key!r}: no servers")
        return None
    servers = root[key]
    if not isinstance(servers, Mapping):
        problems.append(ConfigProblem(None, key, f"must be an object, not {type_name(servers)}"))
        return None
    if len(servers) > MAX_SERVERS:
        problems.append(ConfigProblem(None, key, f"more than {MAX_SERVERS} servers"))
        return None
    return servers


def parse_config(source: str | bytes | Mapping[str, Any], *, dialect: str | None = None,
                 path: str | None = None, env: Mapping[str, str] | None = None,
                 inputs: Mapping[str, str] | None = None, workspace: str | None = None,
                 env_files: Mapping[str, str] | None = None,
                 on_missing: OnMissing = "error") -> HostConfig:
    """Parse one host config (rules in the module docstring).

    ``source`` is JSON text (``str`` or UTF-8 ``bytes``) or an already-parsed mapping (TOML:
    the binding parses it).  ``dialect`` forces the dialect; ``path`` (never opened) helps
    detect it and becomes ``HostConfig.path``.  ``env`` gives the variables (None: none; the
    core never reads ``os.environ``), ``inputs`` the VS Code ``${input:ID}`` values,
    ``workspace`` the ``${workspaceFolder}`` (default: the folder holding ``.vscode`` or
    ``.cursor`` in ``path``), ``env_files`` each ``envFile`` path (after expansion) -> its text
    (see :func:`env_file_paths`).

    Raises :class:`ConfigError` listing every problem (fix the file, or pass the missing
    variables, inputs or env files, and parse again); ``ValueError`` for an unknown
    ``on_missing``; ``TypeError`` for a ``source`` of another type.
    """
    if on_missing not in ON_MISSING:
        raise ValueError(f"on_missing must be one of {', '.join(ON_MISSING)}, "
                         f"not {on_missing!r}")
    problems: list[ConfigProblem] = []
    warnings: list[str] = []
    if dialect is not None and dialect not in DIALECTS:
        raise ConfigError([ConfigProblem(None, None, f"unknown dialect {word(dialect)}; "
                                                     f"one of {', '.join(DIALECTS)}")], path)
    root, jsonc = _load(source, problems)
    if root is None:
        raise ConfigError(problems, path)
    resolved: Dialect = dialect if dialect is not None else detect_dialect(
        root, path=path, warnings=warnings)
    if jsonc:
        if resolved not in JSONC_DIALECTS:
            problems.append(ConfigProblem(None, None, f"a {resolved} config must be strict "
                                                      f"JSON (no comments, no trailing commas): "
                                                      f"{jsonc}"))
            raise ConfigError(problems, path)
        warnings.append("comments and trailing commas are not written back")
    servers_key = ROOT_KEYS[resolved]
    extra = {str(k): plain_copy(v) for k, v in root.items() if k != servers_key}
    servers = _check_root(root, resolved, problems, warnings)
    declared = parse_inputs(extra.get("inputs"), warnings) if resolved == "vscode" else ()
    given = {**{i.id: i.default for i in declared if i.default is not None}, **(inputs or {})}
    ctx = Ctx(dialect=resolved, problems=problems, warnings=warnings,
               env_files=env_files or {},
               expander=Expander(dialect=resolved, env=env or {}, inputs=given,
                                 workspace=workspace or _infer_workspace(path),
                                 on_missing=on_missing))
    specs: dict[str, ServerSpec] = {}
    for name, entry in (servers or {}).items():
        if not isinstance(name, str) or not name.strip():
            problems.append(ConfigProblem(None, servers_key, "a server name is blank"))
            continue
        if _SURROGATE.search(name):
            problems.append(ConfigProblem(name, None, _SURROGATE_NAME))
            continue
        if not isinstance(entry, Mapping):
            problems.append(ConfigProblem(name, None,
                                          f"must be an object, not {type_name(entry)}"))
            continue
        spec = parse_entry(name, entry, ctx)
        if spec is not None:
            if resolved == "gemini" and spec.enabled and not gemini_enabled(extra, name):
                spec = _replace_enabled(spec)
            specs[name] = spec
    if resolved == "claude-code":
        _note_projects(extra, warnings)
    if problems:
        raise ConfigError([_printable_problem(p) for p in problems], path)
    kept = [(_printable_problem(p), _printable(note)) for p, note in ctx.kept]
    return HostConfig(servers=specs, dialect=resolved, extra=extra,
                      warnings=tuple(_printable(w) for w in warnings) + tuple(n for _, n in kept),
                      path=path, inputs=declared, kept=tuple(p for p, _ in kept))


def _printable(text: str) -> str:
    """``text`` with each surrogate code point (a raw key named in a warning) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") \
        if _SURROGATE.search(text) else text


def _printable_problem(problem: ConfigProblem) -> ConfigProblem:
    server, where = problem.server, problem.field
    return ConfigProblem(None if server is None else _printable(server),
                         None if where is None else _printable(where),
                         _printable(problem.message), problem.input)


def _replace_enabled(spec: ServerSpec) -> ServerSpec:
    from dataclasses import replace  # noqa: PLC0415
    return replace(spec, enabled=False)


def _note_projects(extra: Mapping[str, Any], warnings: list[str]) -> None:
    projects = extra.get("projects")
    if not isinstance(projects, Mapping):
        return
    count = sum(len(p["mcpServers"]) for p in projects.values()
                if isinstance(p, Mapping) and isinstance(p.get("mcpServers"), Mapping))
    if count:
        warnings.append(f"{count} project-scoped servers under projects.*.mcpServers are kept "
                        "but not loaded (only the top-level mcpServers are)")


def _servers_of(source: str | bytes | Mapping[str, Any], dialect: str | None,
                path: str | None) -> tuple[Dialect, Mapping[str, Any], Mapping[str, Any]] | None:
    """``(dialect, root, servers)`` of a config read without reporting problems (what the
    binding looks at before parsing); None when it cannot be read, the dialect is unknown,
    or the servers key holds no object: :func:`parse_config` then says why."""
    try:
        root, _ = _load(source, [])
    except TypeError:
        return None
    if root is None or (dialect is not None and dialect not in DIALECTS):
        return None
    resolved: Dialect = dialect if dialect is not None else detect_dialect(root, path=path)
    servers = root.get(ROOT_KEYS[resolved])
    return (resolved, root, servers) if isinstance(servers, Mapping) else None


def env_file_paths(source: str | bytes | Mapping[str, Any], *, dialect: str | None = None,
                   path: str | None = None, env: Mapping[str, str] | None = None,
                   inputs: Mapping[str, str] | None = None,
                   workspace: str | None = None) -> tuple[str, ...]:
    """The ``envFile`` paths a config names, expanded as :func:`parse_config` expands them,
    in file order and without repeats: what the binding reads before parsing (relative
    paths are relative to the config's folder).  Never raises for a bad config: it returns
    what it can read, and :func:`parse_config` reports the problems."""
    read = _servers_of(source, dialect, path)
    if read is None:
        return ()
    resolved, _, servers = read
    keys = [k for k, kind in KEY_TABLES[resolved] if kind == "env_file"]
    if not keys:
        return ()
    expander = Expander(dialect=resolved, env=env or {}, inputs=inputs or {},
                        workspace=workspace or _infer_workspace(path), on_missing="keep")
    found: dict[str, None] = {}
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            continue
        for key in keys:
            value = entry.get(key)
            if isinstance(value, str) and not _SURROGATE.search(value):  # else a problem
                text, _ = expander.expand(value, server=str(name), field=key, problems=[])
                found[text] = None
    return tuple(found)


def _strings(value: Any) -> list[str]:
    """Every string in ``value`` (nesting already bounded by ``_load``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def needed_inputs(source: str | bytes | Mapping[str, Any], *, dialect: str | None = None,
                  path: str | None = None) -> tuple[InputSpec, ...]:
    """The inputs a config's servers refer to (``${input:ID}`` in a value it expands), in
    file order without repeats: each as declared in the root ``inputs``, or a bare
    :class:`InputSpec` for an id the file does not declare.  Empty for a dialect without
    inputs (only ``vscode`` has them).  What the binding gathers before parsing (explicit,
    environment, ask).  Never raises for a bad config: :func:`parse_config` reports it."""
    read = _servers_of(source, dialect, path)
    if read is None or read[0] != "vscode":
        return ()
    resolved, root, servers = read
    declared = {i.id: i for i in parse_inputs(root.get("inputs"), [])}
    kinds = dict(KEY_TABLES[resolved])
    found: dict[str, InputSpec] = {}
    for entry in servers.values():
        if not isinstance(entry, Mapping):
            continue
        for key, value in entry.items():
            if kinds.get(key) not in EXPANDED_KINDS:
                continue
            for text in _strings(value):
                for part in tokenize(text, resolved):
                    if isinstance(part, Var) and part.kind == "input" \
                            and part.name not in found:
                        found[part.name] = declared.get(part.name) or InputSpec(
                            id=part.name, env_var=input_env_name(part.name))
    return tuple(found.values())
