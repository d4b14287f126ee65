"""Write a :class:`HostConfig` back as a file of its dialect, or of another one.

Rules:

- JSON with a 2-space indent and a trailing newline; TOML for Codex (:mod:`._toml`).
- Each entry is written with the target's keys (``_config.KEY_TABLES``, in table order),
  then its ``raw`` keys unchanged.  The root keys in ``extra`` are written back when the
  target is the config's own dialect; on conversion they are dropped with a warning (a Zed
  settings file or ``~/.claude.json`` is not another host's config).
- Fields that held a variable are written from ``templates``, never from their expanded
  value: the variable syntax is translated to the target's (``${VAR}`` <-> ``${env:VAR}``;
  Codex ``env_vars`` <-> ``"KEY": "${KEY}"``, ``bearer_token_env_var`` <->
  ``Authorization: Bearer ${VAR}``, ``env_http_headers`` <-> ``"H": "${VAR}"``).  A reference
  the target cannot say is written as its template text (literal there) with a warning.
- What the target cannot say is a warning naming server and field, never a value: SSE
  where the dialect has only Streamable HTTP (written as HTTP), a URL server in a stdio-only
  dialect (the server is left out), a field without a key (timeouts, filters ...), an
  ``envFile`` (its variables are left out: they are file contents), a ``raw`` key the
  target gives another meaning (dropped), a ``null`` in TOML (dropped).
- Milliseconds are written as whole numbers when the value is a whole number of them, so
  ``parse_config(dump_config(c)) == c`` holds exactly at millisecond granularity.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ._config import BARE_TIMEOUT_SECONDS_MAX, KEY_TABLES, ROOT_KEYS, gemini_enabled
from ._expand import Part, Var, render_var, tokenize
from ._restart import RestartPolicy
from ._spec import DIALECTS, Dialect, HostConfig, ServerSpec
from ._toml import dumps_toml

__all__ = ["dump_config", "dump_config_with_warnings"]

#: When a dialect with a ``type`` key writes it: always, for URL servers, or only for SSE
#: (Cursor tells HTTP from SSE by itself).
_TYPE_POLICY: dict[Dialect, str] = {"claude-code": "always", "vscode": "always",
                                    "generic": "remote", "cursor": "sse"}

#: Dialects that can say "this URL is SSE" (a ``type`` key or an SSE-only URL key).
_SAYS_SSE: frozenset[Dialect] = frozenset({"claude-code", "cursor", "vscode", "generic",
                                           "gemini"})

#: Keys a dialect gives a meaning mcp-proto does not model: a ``raw`` key of that name from
#: another dialect would be misread there, so a conversion drops it.
_FOREIGN_KEYS: dict[Dialect, frozenset[str]] = {
    "codex": frozenset({"oauth", "default_tools_approval_mode", "transport", "bearer_token",
                        "type"}),
    "gemini": frozenset({"oauth", "authProviderType", "type"}),
    "cursor": frozenset({"auth"}), "vscode": frozenset({"dev"}),
    "zed": frozenset({"settings"}), "claude-code": frozenset({"headersHelper"}),
    "adk": frozenset({"lifecycle", "taskConfig"}),
}

#: The ServerSpec fields each kind of key writes (for "the target cannot say X").
_KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "env": ("env",), "env_vars": ("env",), "cwd": ("cwd",), "headers": ("headers",),
    "bearer": ("headers",), "env_headers": ("headers",), "enabled": ("enabled",),
    "disabled": ("enabled",), "timeout_s": ("timeout",), "timeout_ms": ("timeout",),
    "timeout_bare": ("timeout",), "startup_s": ("startup_timeout",),
    "include": ("include_tools",), "exclude": ("exclude_tools",),
    "approve": ("auto_approve",), "trust": ("auto_approve",), "required": ("required",),
    "description": ("description",), "restart": ("restart",),
}
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ServerSpec)
                             if f.name in {"cwd", "enabled", "timeout", "startup_timeout",
                                           "include_tools", "required", "description",
                                           "restart"}}
_DEFAULTS.update({"env": {}, "headers": {}, "exclude_tools": (), "auto_approve": ()})

_ABSENT: Any = object()


def _said(dialect: Dialect) -> frozenset[str]:
    return frozenset(f for _, kind in KEY_TABLES[dialect] for f in _KIND_FIELDS.get(kind, ()))


_SAYS: dict[Dialect, frozenset[str]] = {d: _said(d) for d in DIALECTS}
_URL_DIALECTS: frozenset[Dialect] = frozenset(
    d for d in DIALECTS if any(kind.startswith("url_") for _, kind in KEY_TABLES[d]))
_ENV_FILE_DIALECTS: frozenset[Dialect] = frozenset(
    d for d in DIALECTS if any(kind == "env_file" for _, kind in KEY_TABLES[d]))


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _ms(seconds: float) -> int | float:
    """``seconds`` in milliseconds, a whole number when it is one (to float precision)."""
    millis = seconds * 1000
    whole = round(millis)
    return whole if abs(millis - whole) <= 1e-6 * max(1.0, abs(millis)) else millis


def _env_var(parts: tuple[Part, ...]) -> str | None:
    """The variable name when ``parts`` is exactly one environment variable, no default."""
    if len(parts) == 1 and isinstance(parts[0], Var) and parts[0].kind == "env" \
            and parts[0].default is None:
        return parts[0].name
    return None


def _var(name: str) -> Var:
    return Var(kind="env", name=name, text="${" + name + "}")


@dataclass(slots=True)
class _Out:
    """One entry being written: the spec's fields rendered in the target's syntax."""

    spec: ServerSpec
    src: Dialect
    dst: Dialect
    warnings: list[str]
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    cwd: str | None = None
    env_file: str | None = None
    env_vars: list[str] = field(default_factory=list)
    bearer: str | None = None
    env_headers: dict[str, str] = field(default_factory=dict)

    def warn(self, where: str | None, message: str) -> None:
        label = f"{self.spec.name}.{where}" if where else self.spec.name
        self.warnings.append(f"{label}: {message}")

    def literal(self, where: str, text: str) -> str:
        if any(isinstance(p, Var) for p in tokenize(text, self.dst)):
            self.warn(where, f"literal text that {self.dst} would read as a variable")
        return text

    def render(self, where: str, value: str | None, parts: tuple[Part, ...] | None) -> str:
        """``value``, or its template ``parts`` in the target's syntax."""
        if parts is None:
            return self.literal(where, value or "")
        if self.src == self.dst:  # the template exactly as written
            return "".join(p if isinstance(p, str) else p.text for p in parts)
        out: list[str] = []
        for part in parts:
            if isinstance(part, str):
                out.append(self.literal(where, part))
                continue
            text, note = render_var(part, self.dst)
            if note:
                self.warn(where, note)
            if text is None:
                self.warn(where, f"{self.dst} cannot say {part.describe()}: written as the "
                                 f"literal text {part.text}")
                text = part.text
            out.append(text)
        return "".join(out)


def _source_parts(spec: ServerSpec, src: Dialect) -> dict[tuple[str, str | int], tuple[Part, ...]]:
    """The template of each field that held a variable, as parts of the source syntax."""
    t = spec.templates
    parts: dict[tuple[str, str | int], tuple[Part, ...]] = {}
    command = t.get("command")
    if isinstance(command, (list, tuple)) and len(command) == len(spec.command):
        parts.update({("command", i): tokenize(str(w), src) for i, w in enumerate(command)})
    for group in ("env", "headers"):
        for key, written in (t.get(group) or {}).items():
            parts[(group, key)] = tokenize(str(written), src)
    for single in ("url", "cwd"):
        if isinstance(t.get(single), str):
            parts[(single, "")] = tokenize(t[single], src)
    env_file = t.get("env_file")
    if isinstance(env_file, Mapping) and isinstance(env_file.get("path"), str):
        parts[("env_file", "")] = tokenize(env_file["path"], src)
    for name in t.get("env_vars") or ():
        parts[("env", name)] = (_var(name),)
    if isinstance(t.get("bearer_token_env_var"), str):
        parts[("headers", "Authorization")] = ("Bearer ", _var(t["bearer_token_env_var"]))
    for header, name in (t.get("env_http_headers") or {}).items():
        parts[("headers", header)] = (_var(name),)
    return parts


def _render(out: _Out) -> None:
    spec, dst = out.spec, out.dst
    parts = _source_parts(spec, out.src)
    out.argv = [out.render(f"command[{i}]", v, parts.get(("command", i)))
                for i, v in enumerate(spec.command)]
    env_file = spec.templates.get("env_file")
    file_keys = set(env_file.get("keys") or ()) if isinstance(env_file, Mapping) else set()
    if ("env_file", "") in parts:
        if dst in _ENV_FILE_DIALECTS:
            out.env_file = out.render("envFile", None, parts[("env_file", "")])
        else:
            out.warn("envFile", f"{dst} has no envFile: it and the {len(file_keys)} "
                                "variables it supplied are not written")
    for group, values, target in (("env", spec.env, out.env),
                                  ("headers", spec.headers, out.headers)):
        names = [*values, *(k for g, k in parts if g == group and k not in values)]
        for name in names:
            if group == "env" and name in file_keys:
                continue
            p = parts.get((group, name))
            if dst == "codex" and p is not None and _codex_forward(out, group, str(name), p):
                continue
            target[str(name)] = out.render(f"{group}.{name}", values.get(str(name)), p)
    if spec.url is not None:
        out.url = out.render("url", spec.url, parts.get(("url", "")))
    if spec.cwd is not None:
        out.cwd = out.render("cwd", spec.cwd, parts.get(("cwd", "")))


def _codex_forward(out: _Out, group: str, name: str, parts: tuple[Part, ...]) -> bool:
    """Write a variable reference the Codex way; False when Codex has no key for it."""
    if group == "env":
        if _env_var(parts) == name:
            out.env_vars.append(name)
            return True
        return False
    var = _env_var(parts)
    if var is not None:
        out.env_headers[name] = var
        return True
    if name.lower() == "authorization" and out.bearer is None and len(parts) == 2 \
            and parts[0] == "Bearer " and _env_var(parts[1:]) is not None:
        out.bearer = _env_var(parts[1:])
        return True
    return False


# -- writers, one per kind of key -------------------------------------------------------------

def _w_type(out: _Out) -> Any:
    policy = _TYPE_POLICY.get(out.dst)
    transport = out.spec.transport
    if policy == "always" or (policy == "remote" and transport != "stdio") \
            or (policy == "sse" and transport == "sse"):
        return transport
    return _ABSENT


def _stdio(value: Callable[[_Out], Any]) -> Callable[[_Out], Any]:
    return lambda out: value(out) if out.spec.transport == "stdio" else _ABSENT


def _w_url_http(out: _Out) -> Any:
    spec = out.spec
    if spec.transport == "stdio" or out.url is None:
        return _ABSENT
    if spec.transport == "sse" and any(k == "url_sse" for _, k in KEY_TABLES[out.dst]):
        return _ABSENT
    return out.url


def _w_url_sse(out: _Out) -> Any:
    return out.url if out.spec.transport == "sse" and out.url is not None else _ABSENT


def _w_timeout_bare(out: _Out) -> Any:
    t = out.spec.timeout
    if t is None:
        return _ABSENT
    return _number(t) if t <= BARE_TIMEOUT_SECONDS_MAX else _ms(t)


def _w_trust(out: _Out) -> Any:
    approve = out.spec.auto_approve
    if approve == ("*",):
        return True
    if approve:
        out.warn("auto_approve", f"{out.dst} trusts a whole server or none: "
                                 "the tool list is not written")
    return _ABSENT


def _w_restart(out: _Out) -> Any:
    policy = out.spec.restart
    if policy is None:
        return _ABSENT
    if policy.stable_after != RestartPolicy().stable_after:
        out.warn("restart", f"{out.dst} has no key for stable_after: not written")
    return {"initialDelayMs": _ms(policy.initial_delay), "maxDelayMs": _ms(policy.max_delay),
            "backoffMultiplier": _number(policy.multiplier),
            "maxRestartAttempts": policy.max_attempts}


def _opt(value: Any) -> Any:
    return _ABSENT if value is None or value in ((), {}, []) else value


#: kind -> the value its key gets (``_ABSENT``: the key is not written).  ``*_alias`` kinds
#: have no writer: their dialect's main key is written instead.
_WRITERS: dict[str, Callable[[_Out], Any]] = {
    "type": _w_type,
    "command": _stdio(lambda o: o.argv[0] if o.argv else ""),
    "command_or_list": _stdio(lambda o: o.argv[0] if o.argv else ""),
    "zed_command": _stdio(lambda o: o.argv[0] if o.argv else ""),
    "zed_source": _stdio(lambda o: "custom"),
    "args": _stdio(lambda o: o.argv[1:]),
    "env": lambda o: _opt(o.env),
    "env_file": lambda o: _opt(o.env_file),
    "cwd": lambda o: _opt(o.cwd),
    "url_http": _w_url_http, "url_sse": _w_url_sse,
    "headers": lambda o: _opt(o.headers),
    "enabled": lambda o: _ABSENT if o.spec.enabled else False,
    "disabled": lambda o: _ABSENT if o.spec.enabled else True,
    "timeout_s": lambda o: _ABSENT if o.spec.timeout is None else _number(o.spec.timeout),
    "timeout_ms": lambda o: _ABSENT if o.spec.timeout is None else _ms(o.spec.timeout),
    "timeout_bare": _w_timeout_bare,
    "startup_s": lambda o: _ABSENT if o.spec.startup_timeout is None
    else _number(o.spec.startup_timeout),
    "include": lambda o: _ABSENT if o.spec.include_tools is None else list(o.spec.include_tools),
    "exclude": lambda o: _opt(list(o.spec.exclude_tools)),
    "approve": lambda o: _opt(list(o.spec.auto_approve)),
    "trust": _w_trust,
    "required": lambda o: True if o.spec.required else _ABSENT,
    "description": lambda o: _opt(o.spec.description),
    "exposure": lambda o: o.spec.raw.get("exposure", _ABSENT),
    "restart": _w_restart,
    "env_vars": lambda o: _opt(o.env_vars),
    "bearer": lambda o: _opt(o.bearer),
    "env_headers": lambda o: _opt(o.env_headers),
}


def _unsaid(out: _Out, extra: Mapping[str, Any], same: bool) -> None:
    spec, dst = out.spec, out.dst
    says = _SAYS[dst]
    for name, default in _DEFAULTS.items():
        if name in says or getattr(spec, name) == default:
            continue
        if name == "enabled" and dst == "gemini":
            if not (same and not gemini_enabled(extra, spec.name)):
                out.warn("enabled", "gemini has no per-server switch: add the server to "
                                    "mcp.excluded to disable it")
            continue
        out.warn(name, f"{dst} has no key for it: not written")
    if spec.transport == "sse" and dst not in _SAYS_SSE:
        out.warn("url", f"{dst} cannot say SSE: written as a Streamable HTTP URL")


def _entry(spec: ServerSpec, src: Dialect, dst: Dialect, extra: Mapping[str, Any],
           warnings: list[str]) -> dict[str, Any] | None:
    """The entry of ``spec`` in ``dst``'s keys, or None when ``dst`` cannot hold it."""
    out = _Out(spec=spec, src=src, dst=dst, warnings=warnings)
    if spec.raw.get("source") == "extension" and src == "zed":
        if dst == "zed":
            return dict(spec.raw)
        out.warn(None, "a Zed extension server: left out")
        return None
    if spec.transport != "stdio" and dst not in _URL_DIALECTS:
        out.warn(None, f"an {spec.transport} server, and {dst} has only stdio servers: left out")
        return None
    _render(out)
    entry: dict[str, Any] = {}
    for key, kind in KEY_TABLES[dst]:
        writer = _WRITERS.get(kind)
        value = writer(out) if writer is not None else _ABSENT
        if value is not _ABSENT:
            entry[key] = value
    _unsaid(out, extra, src == dst)
    table = dict(KEY_TABLES[dst])
    for key, value in spec.raw.items():
        if key in entry:
            continue
        if key in table or (src != dst and key in _FOREIGN_KEYS.get(dst, ())):
            out.warn(key, f"means something else in {dst}: not written")
            continue
        entry[key] = value
    return entry


def _plain(value: Any, where: str, toml: bool, warnings: list[str]) -> Any:
    """``value`` with only what the output format holds (tuples as lists; no ``None`` in
    TOML; dates as text and no NaN/infinity in JSON)."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            item = _plain(v, f"{where}.{k}".lstrip("."), toml, warnings)
            if item is not _ABSENT:
                out[str(k)] = item
        return out
    if isinstance(value, (list, tuple)):
        items = [_plain(v, f"{where}[{i}]", toml, warnings) for i, v in enumerate(value)]
        return [v for v in items if v is not _ABSENT]
    if value is None and toml:
        warnings.append(f"{where}: TOML has no null: not written")
        return _ABSENT
    if not toml and isinstance(value, float) and not math.isfinite(value):
        warnings.append(f"{where}: JSON has no NaN or infinity: not written")
        return _ABSENT
    if not toml and isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return value


def dump_config_with_warnings(config: HostConfig,
                              dialect: str | None = None) -> tuple[str, tuple[str, ...]]:
    """``config`` as the text of a ``dialect`` file (default: its own dialect) and the
    warnings about what that dialect cannot say (rules in the module docstring).  The
    warnings name servers, fields and variables, never a value: show them to the user.
    ``ValueError`` for an unknown dialect."""
    dst = config.dialect if dialect is None else dialect
    if dst not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; one of {', '.join(DIALECTS)}")
    target: Dialect = dst
    src = config.dialect
    warnings: list[str] = []
    servers: dict[str, Any] = {}
    for name, spec in config.servers.items():
        entry = _entry(spec, src, target, config.extra, warnings)
        if entry is not None:
            servers[name] = entry
    root: dict[str, Any] = {}
    if src == target:
        root.update(config.extra)
    elif config.extra:
        warnings.append(f"root keys of the {src} config are not written to {target}: "
                        f"{', '.join(config.extra)}")
    root[ROOT_KEYS[target]] = servers
    toml = target == "codex"
    plain = _plain(root, "", toml, warnings)
    if toml:
        return dumps_toml(plain), tuple(warnings)
    return json.dumps(plain, indent=2, ensure_ascii=False) + "\n", tuple(warnings)


def dump_config(config: HostConfig, dialect: str | None = None) -> str:
    """``config`` as the text of a ``dialect`` file (default: its own dialect); the
    warnings of :func:`dump_config_with_warnings` are dropped.  ``ValueError`` for an
    unknown dialect."""
    return dump_config_with_warnings(config, dialect)[0]
