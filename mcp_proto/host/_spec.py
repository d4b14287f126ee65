"""What a host config says, once parsed: one :class:`ServerSpec` per server.

Values are expanded (``${VAR}`` and friends replaced); ``templates`` keeps each field as it
was written, so :func:`dump_config` writes the template back and never an expanded secret.
``raw`` keeps the keys no field models, so a file written back loses nothing of another
host's settings.  Environment values and header values are secrets: no ``repr``, message or
warning shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._errors import MCPError
from .._redact import redact_url
from ._restart import RestartPolicy

__all__ = [
    "DIALECTS",
    "check_spec",
    "forget_changed_templates",
    "redact_url",
    "TRANSPORTS",
    "ConfigError",
    "ConfigProblem",
    "Dialect",
    "HostConfig",
    "InputSpec",
    "ServerSpec",
    "Transport",
]

Transport = Literal["stdio", "http", "sse"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse")

Dialect = Literal["claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "zed",
                  "gemini", "codex", "adk", "rpi", "generic"]
#: Every dialect, each with its own keys (host-notes section 3).  ``generic`` is a plain
#: ``mcpServers`` file of no particular host (fastmcp, pydantic-ai, mcp-use ...); ``adk`` is
#: ADK-Rust / Kiro.
DIALECTS: tuple[Dialect, ...] = ("claude-desktop", "claude-code", "cursor", "vscode",
                                 "windsurf", "zed", "gemini", "codex", "adk", "rpi", "generic")

_REDACTED = "<redacted>"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """One server of a host config.

    ``transport`` is ``"stdio"`` (``command`` is the argv, ``env`` the extra environment,
    ``cwd`` the working directory) or ``"http"`` / ``"sse"`` (``url``, ``headers``).
    ``timeout`` is each call's deadline and ``startup_timeout`` the handshake's, in seconds
    (None: the host's default).  ``include_tools`` (None: all) and ``exclude_tools`` are glob
    patterns; exclude wins.  ``restart`` None means the host's policy.
    """

    name: str
    transport: Transport = "stdio"
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float | None = None
    startup_timeout: float | None = None
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    auto_approve: tuple[str, ...] = ()
    restart: RestartPolicy | None = None
    #: Codex ``required``: a host may refuse to run when this server fails to start.
    required: bool = False
    description: str | None = None
    #: Keys of the entry that no field models, kept as written.
    raw: dict[str, Any] = field(default_factory=dict)
    #: Field name -> the value as written, for each field that held a variable.
    templates: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # env and header values are secrets
        # command and url as written (a ``--token=${T}`` argument or ``?key=${KEY}`` shows
        # its template, never the value)
        parts = [f"name={self.name!r}", f"transport={self.transport!r}"]
        if self.command:
            command = self.templates.get("command", list(self.command))
            parts.append(f"command={command!r}")
        if self.url is not None:
            parts.append(f"url={redact_url(str(self.templates.get('url', self.url)))!r}")
        if self.env:
            parts.append("env={" + ", ".join(f"{k!r}: {_REDACTED!r}" for k in self.env) + "}")
        if self.headers:
            parts.append("headers={" + ", ".join(
                f"{k!r}: {_REDACTED!r}" for k in self.headers) + "}")
        if self.cwd is not None:
            parts.append(f"cwd={self.cwd!r}")
        if not self.enabled:
            parts.append("enabled=False")
        return "ServerSpec(" + ", ".join(parts) + ")"

    __str__ = __repr__

    def edited(self, **changes: Any) -> ServerSpec:
        """A copy with ``changes`` (field=value), forgetting the templates of the fields
        whose value changes, so writing the config back writes the new value, not the old
        template.  ``TypeError`` for an unknown field."""
        return forget_changed_templates(self, replace(self, **changes))


@dataclass(frozen=True, slots=True, kw_only=True)
class InputSpec:
    """One VS Code input (an entry of the root ``inputs`` list), which ``${input:ID}``
    refers to: ``id``, ``type`` (``promptString``, ``pickString`` or ``command``),
    ``description`` (what to ask), ``password`` (do not echo the answer), ``default``
    (None: none) and, for ``pickString``, its ``options``.  ``env_var`` is the environment
    variable that gives its value (``MCP_PROTO_INPUT_<ID>``).  Holds no value."""

    id: str
    type: str = "promptString"
    description: str | None = None
    password: bool = False
    default: str | None = None
    options: tuple[str, ...] = ()
    env_var: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class HostConfig:
    """A parsed config: ``servers`` by name in file order, the ``dialect`` it was read in,
    ``extra`` (root keys other than the servers, kept for writing back: VS Code ``inputs``,
    the rest of a Zed ``settings.json`` ...), ``warnings`` (what was accepted but deserves a
    look) and the ``path`` it came from, if any.  ``inputs`` are the VS Code inputs the
    file declares (read from ``extra["inputs"]``, which keeps them as written).  Two
    configs are equal when their servers, dialect and extra keys are."""

    servers: dict[str, ServerSpec] = field(default_factory=dict)
    dialect: Dialect = "generic"
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = field(default=(), compare=False)
    path: str | None = field(default=None, compare=False)
    inputs: tuple[InputSpec, ...] = field(default=(), compare=False)
    #: Under ``on_missing="keep"``: each variable, input or ``envFile`` kept as written, as
    #: the problem it would be otherwise (``ConfigProblem.input`` names a missing input).
    #: Their notes end :attr:`warnings` ("...: kept as written"); :attr:`other_warnings`
    #: are the rest (what ``config convert`` shows: keeping templates is what it is for).
    kept: tuple[ConfigProblem, ...] = field(default=(), compare=False)

    @property
    def other_warnings(self) -> tuple[str, ...]:
        """:attr:`warnings` without the notes of :attr:`kept` (which end it)."""
        return self.warnings[:len(self.warnings) - len(self.kept)]

    def __repr__(self) -> str:  # extra may hold other hosts' secrets: its keys only
        return (f"HostConfig(dialect={self.dialect!r}, servers={list(self.servers.values())!r}"
                f", extra_keys={sorted(self.extra)!r}, path={self.path!r})")

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong in a config: the ``server`` (None for the file itself), the ``field``
    (the key as written in the file, or None) and what is wrong.  Never holds a secret."""

    server: str | None
    field: str | None
    message: str
    #: The id of the VS Code input whose missing value this is (None for other problems):
    #: a front end words its own advice (the CLI: ``--input ID=VALUE``).
    input: str | None = None

    def __str__(self) -> str:
        where = ".".join(p for p in (self.server, self.field) if p)
        return f"{where}: {self.message}" if where else self.message


class ConfigError(MCPError, ValueError):
    """A config could not be used.  ``problems`` lists every problem found, not only the
    first, so a user fixes the file in one go.  Fix the file (or pass the missing variables
    or inputs) and parse again."""

    def __init__(self, problems: list[ConfigProblem] | tuple[ConfigProblem, ...],
                 path: str | None = None) -> None:
        self.problems = tuple(problems)
        self.path = path
        head = f"{path}: " if path else ""
        n = len(self.problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{head}{n} problem{'s' if n != 1 else ''} in the MCP config:\n{lines}")


def check_spec(spec: ServerSpec) -> list[ConfigProblem]:
    """What makes ``spec`` unusable by a host (a spec built in code, not parsed): an
    unknown transport, a stdio server without a command, a remote one without an http(s)
    URL or with credentials in it.  Empty when it is fine."""
    problems: list[ConfigProblem] = []
    name = spec.name

    def bad(where: str, message: str) -> None:
        problems.append(ConfigProblem(name, where, message))

    if not isinstance(name, str) or not name:
        bad("name", "must be a non-empty string")
    if spec.transport not in TRANSPORTS:
        bad("transport", f"must be one of {', '.join(TRANSPORTS)}, not {spec.transport!r}")
    elif spec.transport == "stdio":
        if not spec.command or not all(isinstance(a, str) for a in spec.command) \
                or not spec.command[0].strip():
            bad("command", "a stdio server needs a command (a non-blank argv)")
    else:
        url = spec.url or ""
        scheme = url.partition("://")[0].lower() if "://" in url else ""
        if scheme not in ("http", "https"):
            bad("url", f"a {spec.transport} server needs an http:// or https:// URL")
        elif "@" in url.partition("://")[2].partition("/")[0]:
            bad("url", "must not hold credentials (user:password@): send them in headers")
    for what, value in (("timeout", spec.timeout), ("startup_timeout", spec.startup_timeout)):
        if value is not None and not (isinstance(value, int | float)
                                      and not isinstance(value, bool) and 0 < value < 1e9):
            bad(what, "must be a positive number of seconds")
    return problems


def forget_changed_templates(old: ServerSpec, new: ServerSpec) -> ServerSpec:
    """``new`` without the templates it inherited from ``old`` for values that changed (a
    template describes the value it produced; for another value it would write the old one
    back)."""
    if not new.templates or new.templates is not old.templates:
        # The templates came with the new spec (parsed again, perhaps with another env):
        # they describe its values.  Only a copy (``dataclasses.replace``) shares them.
        return new
    t = dict(new.templates)
    if new.command != old.command:
        t.pop("command", None)
    for single in ("url", "cwd"):
        if getattr(new, single) != getattr(old, single):
            t.pop(single, None)
    for group in ("env", "headers"):
        written = t.get(group)
        if isinstance(written, dict):
            kept = {k: v for k, v in written.items()
                    if getattr(new, group).get(k) == getattr(old, group).get(k)}
            t[group] = kept
            if not kept:
                t.pop(group)
    names = t.get("env_vars")
    if isinstance(names, list | tuple):
        kept_names = [n for n in names if new.env.get(n) == old.env.get(n)]
        if kept_names:
            t["env_vars"] = type(names)(kept_names)
        else:
            t.pop("env_vars")
    if new.headers.get("Authorization") != old.headers.get("Authorization"):
        t.pop("bearer_token_env_var", None)
    env_headers = t.get("env_http_headers")
    if isinstance(env_headers, dict):
        kept_h = {h: v for h, v in env_headers.items()
                  if new.headers.get(h) == old.headers.get(h)}
        if kept_h:
            t["env_http_headers"] = kept_h
        else:
            t.pop("env_http_headers")
    env_file = t.get("env_file")
    if isinstance(env_file, dict) and any(new.env.get(k) != old.env.get(k)
                                          for k in env_file.get("keys") or ()):
        t.pop("env_file")
    return replace(new, templates=t) if t != new.templates else new
