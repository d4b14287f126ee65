"""Write a :class:`HostConfig` back as a file of its dialect, or of another one.

Rules:

- JSON with a 2-space indent and a trailing newline; TOML for Codex (:mod:`._toml`).
- Each entry is written with the target's keys (``_parse.KEY_TABLES``, in table order),
  then its ``raw`` keys unchanged, except a ``raw`` key the target reads itself: the source
  kept it unread, so its value was never checked and the target would read it as its own
  (a Zed ``source``, a ``type``, an rpi ``exposure``).  Such a key is not written, with a
  warning naming server and key (``not written: zed writes its own source`` when the target
  writes that key itself, else ``zed reads this key, generic did not ...``); it cannot be
  kept beside the target's own key, so a conversion there and back loses it, and says so.
  rpi's ``exposure`` (kept in ``raw``, checked by rpi) is written only from an rpi config.
- The root keys in ``extra`` are written back when the target is the config's own dialect;
  on conversion they are dropped with a warning (a Zed settings file or ``~/.claude.json``
  is not another host's config).
- Fields that held a variable are written from ``templates``, never from their expanded
  value: the variable syntax is translated to the target's (``${VAR}`` <-> ``${env:VAR}``;
  Codex ``env_vars`` <-> ``"KEY": "${KEY}"``, ``bearer_token_env_var`` <->
  ``Authorization: Bearer ${VAR}``, ``env_http_headers`` <-> ``"H": "${VAR}"``).  A reference
  the target cannot say is written as its template text (literal there) with a warning.
- What the target cannot say is a warning naming server and field, never a value: SSE
  where the dialect has only Streamable HTTP (written as HTTP), a URL server in a stdio-only
  dialect (the server is left out), a field without a key (timeouts, filters ...), an
  ``envFile`` (its variables are left out: they are file contents), a ``raw`` key the
  target reads or gives another meaning (dropped), a value the output format cannot hold
  (dropped, the rest is written): in TOML a ``null``, an integer beyond 64 bits, a time
  of day with a UTC offset or a string or key holding a surrogate code point; in JSON NaN,
  infinity, an integer too long for Python to write or a string holding a surrogate pair as
  two code points (JSON would read its escapes back as one character); in both a value of a
  type neither format has.  A TOML date or time (from Codex) is written to JSON as its ISO
  text, with a warning: it reads back as a string.
- A lone surrogate code point (``parse_config`` keeps one in ``raw`` and ``extra``: a
  ``~/.claude.json`` history may hold a cut pair) is written to JSON as its ``\\uXXXX``
  escape, which reads back as the same string, so the text is always valid UTF-8.  In a
  field ``parse_config`` refuses it in (a name, the command, env, headers, url, cwd: only a
  config built in code has one there) it is written so too, with a warning.
- A URL server's ``args`` (ignored, kept in ``raw`` by ``parse_config``) are written back to
  the config's own dialect and dropped, with a warning, on conversion.
- Milliseconds are written as the number that reads back as exactly the same seconds (a
  whole number when the value is a whole number of them), so
  ``parse_config(dump_config(c)) == c`` holds exactly for every timeout and delay a
  millisecond dialect parsed.  A value converted from a seconds dialect may have no such
  number (about 2% of fractions that are no whole number of milliseconds): the nearest is
  written, one unit in the last place away.
- Warnings never hold a surrogate code point (escaped as ``\\udXXX``), so they can be
  printed to any UTF-8 stream.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .._restart import RestartPolicy
from .._spec import DIALECTS, Dialect, HostConfig, ServerSpec
from ._expand import Part, Var, render_var, tokenize
from ._parse import BARE_TIMEOUT_SECONDS_MAX, KEY_TABLES, ROOT_KEYS, gemini_enabled
from ._toml import dumps_toml, scalar_problem

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

#: Kinds whose value the spec keeps in ``raw`` (no ServerSpec field models it) -> the dialect
#: whose parse checked it: written from ``raw`` only when that dialect is the source; the
#: same key kept unread by another dialect is not carried (module docstring).
_RAW_KINDS: dict[str, Dialect] = {"exposure": "rpi"}

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

#: A UTF-16 surrogate code point: a Python string may hold one, UTF-8 text cannot; JSON
#: says it as an escape.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A high surrogate followed by a low one: as two escapes, JSON reads them as one character.
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_DATES = (datetime.datetime, datetime.date, datetime.time)


def _said(dialect: Dialect) -> frozenset[str]:
    return frozenset(f for _, kind in KEY_TABLES[dialect] for f in _KIND_FIELDS.get(kind, ()))


_SAYS: dict[Dialect, frozenset[str]] = {d: _said(d) for d in DIALECTS}
_URL_DIALECTS: frozenset[Dialect] = frozenset(
    d for d in DIALECTS if any(kind.startswith("url_") for _, kind in KEY_TABLES[d]))
_ENV_FILE_DIALECTS: frozenset[Dialect] = frozenset(
    d for d in DIALECTS if any(kind == "env_file" for _, kind in KEY_TABLES[d]))


def _number(value: float) -> int | float:
    if isinstance(value, int):
        return value
    return int(value) if value.is_integer() else value


#: Floats tried on each side of ``seconds * 1000`` for one that reads back exactly: the
#: product is within one unit in the last place of such a number whenever one exists.
_MS_NEIGHBOURS = 2


def _ms(seconds: float) -> int | float:
    """``seconds`` in milliseconds: the number ``m`` for which ``m / 1000`` (what the parser
    computes) is ``seconds`` again, a whole number when one is; else the nearest float."""
    millis = seconds * 1000
    if not math.isfinite(millis):
        return millis
    whole = round(millis)
    if float(whole) / 1000 == seconds:
        return whole
    for direction in (math.inf, -math.inf):
        candidate = millis
        for _ in range(_MS_NEIGHBOURS + 1):
            if candidate / 1000 == seconds:
                return candidate
            candidate = math.nextafter(candidate, direction)
    return millis


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
    if out.env_vars:
        # the order as written (a variable left unset under on_missing="keep" is in no env
        # value, so the loop above meets it last); names from other dialects follow
        written = {n: i for i, n in enumerate(spec.templates.get("env_vars") or ())}
        out.env_vars.sort(key=lambda n: written.get(n, len(written)))
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


def _w_exposure(out: _Out) -> Any:
    """rpi's ``exposure``, kept in ``raw``: written only from an rpi config, which checked it
    (another dialect's ``exposure`` is an unread key: :func:`_entry` warns and drops it)."""
    if out.src != _RAW_KINDS["exposure"]:
        return _ABSENT
    return out.spec.raw.get("exposure", _ABSENT)


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
    "exposure": _w_exposure,
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
    if spec.transport != "stdio" and spec.command:  # only a spec built in code has both
        out.warn("command", "a URL server runs no command: not written")


def _used_surrogates(out: _Out) -> None:
    """A warning per field ``parse_config`` refuses a lone surrogate in that holds one (only
    a spec built in code can): JSON writes its escape, which does not parse back there.  (A
    TOML target leaves the string out, with its own warning.)"""
    if out.dst == "codex":
        return
    spec = out.spec
    used: dict[str, list[object]] = {
        "name": [spec.name], "command": list(spec.command),
        "env": [*spec.env, *spec.env.values()], "headers": [*spec.headers, *spec.headers.values()],
        "url": [spec.url], "cwd": [spec.cwd]}
    for where, texts in used.items():
        if any(isinstance(t, str) and _SURROGATE.search(t) for t in texts):
            out.warn(where, "holds a lone surrogate: written as its \\u escape, which "
                            "parse_config refuses there")


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
    _used_surrogates(out)
    table = dict(KEY_TABLES[dst])
    for key, value in spec.raw.items():
        read_as = table.get(key)
        if read_as is not None and _RAW_KINDS.get(read_as) == src:
            continue  # its writer wrote it from raw (rpi's exposure, checked by rpi)
        if read_as == "args" and spec.transport != "stdio" and key in dict(KEY_TABLES[src]):
            # a URL server's args, which its dialect's parse ignored and kept as written
            if src == dst and key not in entry:
                entry[key] = value
            else:
                out.warn(key, f"a URL server ignores args: not written to {dst}")
            continue
        if read_as is not None:
            # a key the source kept unread, and the target reads: never carried blindly
            if key in entry:
                out.warn(key, f"not written: {dst} writes its own {key}")
            else:
                out.warn(key, f"{dst} reads this key, {src} did not (its value was never "
                              "checked): not written")
            continue
        if src != dst and key in _FOREIGN_KEYS.get(dst, ()):
            out.warn(key, f"means something else in {dst}: not written")
            continue
        entry[key] = value
    return entry


def _json_problem(value: object) -> str | None:
    """Why the scalar ``value`` has no JSON form, or None (dates have one: their ISO text)."""
    if value is None or isinstance(value, (bool, *_DATES)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "JSON has no NaN or infinity"
    if isinstance(value, int):
        try:
            str(value)  # Python's limit on digits (sys.get_int_max_str_digits)
        except ValueError:
            return "the integer has too many digits to write"
        return None
    if isinstance(value, str):
        # a lone surrogate is written as its escape (_escape_surrogates); a pair of them
        # would read back as the one character they encode, another string
        return "a surrogate pair as two code points reads back as one character" \
            if _SURROGATE_PAIR.search(value) else None
    return f"{type(value).__name__} has no JSON form"


def _escape_surrogates(text: str) -> str:
    """JSON text with each surrogate code point written as its ``\\uXXXX`` escape: valid
    JSON that reads back as the same string, and UTF-8 text (a surrogate only ever stands
    inside a string, and ``json.dumps`` escapes every backslash before it)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _plain(value: Any, where: str, toml: bool, warnings: list[str]) -> Any:
    """``value`` with only what the output format holds (tuples as lists, dates as text in
    JSON), each value or key it cannot hold left out with a warning (module docstring)."""
    problem_of = scalar_problem if toml else _json_problem
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            key = str(k)
            here = f"{where}.{key}" if where else key
            problem = problem_of(key)
            if problem:
                warnings.append(f"{here}: the key: {problem}: not written")
                continue
            item = _plain(v, here, toml, warnings)
            if item is not _ABSENT:
                out[key] = item
        return out
    if isinstance(value, (list, tuple)):
        items = [_plain(v, f"{where}[{i}]", toml, warnings) for i, v in enumerate(value)]
        return [v for v in items if v is not _ABSENT]
    problem = problem_of(value)
    if problem:
        warnings.append(f"{where}: {problem}: not written")
        return _ABSENT
    if not toml and isinstance(value, _DATES):
        # JSON has no dates: the text reads back as a string, so converting back to TOML
        # would not give the date again
        warnings.append(f"{where}: JSON has no dates or times: written as ISO text")
        return value.isoformat()
    return value


def _printable(warning: str) -> str:
    """``warning`` with each surrogate code point (from a name built in code) escaped."""
    return warning.encode("utf-8", "backslashreplace").decode("utf-8")


def dump_config_with_warnings(config: HostConfig,
                              dialect: str | None = None) -> tuple[str, tuple[str, ...]]:
    """``config`` as the text of a ``dialect`` file (default: its own dialect) and the
    warnings about what that dialect cannot say (rules in the module docstring).  The
    warnings name servers, fields and variables, never a value: show them to the user.
    What the dialect or its format cannot hold is always a warning and the rest is written,
    so the text is valid UTF-8 JSON or TOML for any config ``parse_config`` returned.
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
    shown = tuple(_printable(w) for w in warnings)
    if toml:
        return dumps_toml(plain), shown
    return _escape_surrogates(json.dumps(plain, indent=2, ensure_ascii=False)) + "\n", shown


def dump_config(config: HostConfig, dialect: str | None = None) -> str:
    """``config`` as the text of a ``dialect`` file (default: its own dialect); the
    warnings of :func:`dump_config_with_warnings` are dropped.  ``ValueError`` for an
    unknown dialect."""
    return dump_config_with_warnings(config, dialect)[0]
