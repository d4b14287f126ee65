"""One server entry of a host config in, one :class:`ServerSpec` out (for ``_parse``).

The key table of each dialect (:data:`KEY_TABLES`) and the handler of each kind, the
per-entry limits, the transport rules and :func:`parse_entry`, which ``_parse`` calls once
per entry after reading the file.  The rules are written in ``_parse``'s docstring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .._restart import RestartPolicy
from .._spec import ConfigProblem, Dialect, ServerSpec, Transport
from ._expand import Expander, Var, dotenv_entries, literal_warnings

__all__ = [
    "BARE_TIMEOUT_SECONDS_MAX",
    "EXPANDED_KINDS",
    "KEY_TABLES",
    "MAX_TIMEOUT",
    "TYPE_VALUES",
    "Ctx",
    "parse_entry",
    "plain_copy",
    "type_name",
    "word",
]

#: A URL path a generic file means as SSE (fastmcp's inference): ``.../sse`` or ``.../sse/``.
_SSE_PATH = re.compile(r"/sse/?$")

#: One day, in seconds: longer than any sane handshake, call or restart delay.  A bigger
#: timeout or delay is almost always a unit mistake (milliseconds where seconds were meant)
#: or "forever", which a host must not wait (and a timer that far out overflows some clocks).
MAX_TIMEOUT = 86400.0

#: A generic bare ``timeout`` up to 600 is seconds (the largest value written in seconds by
#: a real dialect, Gemini's default being 600 000 ms), above it milliseconds (host-notes 3.2).
BARE_TIMEOUT_SECONDS_MAX = 600.0

#: ``type`` / ``transport`` values (lower case) -> transport.
TYPE_VALUES: dict[str, Transport] = {
    "stdio": "stdio", "http": "http", "streamable-http": "http", "streamable_http": "http",
    "streamablehttp": "http", "sse": "sse",
}

#: rpi ``exposure`` values (host-notes 2.1): parsed and kept, not acted on.
_EXPOSURES = frozenset({"codemode", "deferred", "direct", "hidden"})

#: The keys of an entry each dialect reads, in the order a dump writes them: key -> kind.
#: A kind names a parse handler (:data:`_HANDLERS`) and a writer in ``_dump``; ``*_alias``
#: kinds are read but never written (the dialect's main key is written instead).
#: The kinds of key whose values are expanded (their handlers read through the expander):
#: where a dialect's variables and ``${input:ID}`` work.
EXPANDED_KINDS = frozenset({"command", "command_or_list", "zed_command", "args", "env",
                            "env_file", "cwd", "url_http", "url_sse", "url_http_alias",
                            "headers"})

KEY_TABLES: dict[Dialect, tuple[tuple[str, str], ...]] = {
    "claude-desktop": (("command", "command"), ("args", "args"), ("env", "env")),
    "claude-code": (("type", "type"), ("command", "command"), ("args", "args"), ("env", "env"),
                    ("url", "url_http"), ("headers", "headers"), ("disabled", "disabled")),
    "cursor": (("type", "type"), ("command", "command"), ("args", "args"), ("env", "env"),
               ("envFile", "env_file"), ("url", "url_http"), ("headers", "headers")),
    "vscode": (("type", "type"), ("command", "command"), ("args", "args"), ("env", "env"),
               ("envFile", "env_file"), ("cwd", "cwd"), ("url", "url_http"),
               ("headers", "headers")),
    "windsurf": (("command", "command"), ("args", "args"), ("env", "env"), ("cwd", "cwd"),
                 ("serverUrl", "url_http"), ("url", "url_http_alias"), ("headers", "headers"),
                 ("disabled", "disabled"), ("disabledTools", "exclude")),
    "zed": (("source", "zed_source"), ("command", "zed_command"), ("args", "args"),
            ("env", "env"), ("url", "url_http"), ("headers", "headers"),
            ("enabled", "enabled")),
    "gemini": (("command", "command"), ("args", "args"), ("env", "env"), ("cwd", "cwd"),
               ("httpUrl", "url_http"), ("url", "url_sse"), ("headers", "headers"),
               ("timeout", "timeout_ms"), ("trust", "trust"), ("includeTools", "include"),
               ("excludeTools", "exclude"), ("description", "description")),
    "codex": (("command", "command"), ("args", "args"), ("env", "env"),
              ("env_vars", "env_vars"), ("cwd", "cwd"), ("url", "url_http"),
              ("bearer_token_env_var", "bearer"), ("http_headers", "headers"),
              ("env_http_headers", "env_headers"), ("enabled", "enabled"),
              ("required", "required"), ("startup_timeout_sec", "startup_s"),
              ("startup_timeout_ms", "startup_ms_alias"), ("tool_timeout_sec", "timeout_s"),
              ("enabled_tools", "include"), ("disabled_tools", "exclude")),
    "adk": (("command", "command"), ("args", "args"), ("env", "env"),
            ("disabled", "disabled"), ("autoApprove", "approve"),
            ("restartPolicy", "restart")),
    "rpi": (("command", "command"), ("args", "args"), ("env", "env"), ("cwd", "cwd"),
            ("url", "url_http"), ("headers", "headers"), ("enabled", "enabled"),
            ("timeout", "timeout_s"), ("exposure", "exposure")),
    "generic": (("type", "type"), ("transport", "type_alias"),
                ("command", "command_or_list"), ("args", "args"), ("env", "env"),
                ("cwd", "cwd"), ("url", "url_http"), ("headers", "headers"),
                ("disabled", "disabled"), ("enabled", "enabled_alias"),
                ("timeout", "timeout_bare"), ("description", "description"),
                ("autoApprove", "approve"), ("alwaysAllow", "approve_alias")),
}

#: A UTF-16 surrogate code point (``"\\ud83d"`` in JSON, a cut pair): not Unicode text, so
#: a field the host passes to a process, a server or a model cannot hold one.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Why (after "the value " or "this key ").
_SURROGATE_WHY = "holds a lone surrogate (\\uD800-\\uDFFF): not Unicode text, so no " \
                 "process, server or model can be given it"

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_ENV_NAME = re.compile(r"[^=\x00]+\Z")
_SHOWN_WORD = re.compile(r"[A-Za-z0-9_.-]{1,32}\Z")


def word(value: object) -> str:
    """A value safe to show in a message (a type name), else a description of its type."""
    if isinstance(value, str) and _SHOWN_WORD.match(value):
        return repr(value)
    return f"a value of type {type(value).__name__}"


def plain_copy(value: Any) -> Any:
    """A deep copy of config data, every mapping as a ``dict`` (a read-only mapping passed in
    cannot be deep-copied as itself) and lists and tuples as they are.  Only for data
    ``_parse`` checked: nested at most ``MAX_DEPTH`` and of JSON/TOML types."""
    if isinstance(value, Mapping):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain_copy(v) for v in value)
    return value  # a scalar: immutable


def type_name(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")


def _is_number(value: object) -> bool:
    """A JSON or TOML number (a boolean is none)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_float(value: int | float) -> float:
    """``value`` as a float; an integer too big for one is infinity (callers refuse it as
    out of range, never let ``OverflowError`` out)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _decimal(value: int | float) -> str | None:
    """The decimal text of a number, or None when it has none: NaN, infinity, or an integer
    longer than Python writes (``sys.get_int_max_str_digits``, only from a mapping)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        return str(value)
    except ValueError:
        return None


# -- one entry ------------------------------------------------------------------------------

@dataclass(slots=True)
class Ctx:
    """What every handler needs: the dialect, the expander and the lists it adds to."""

    dialect: Dialect
    expander: Expander
    env_files: Mapping[str, str]
    problems: list[ConfigProblem]
    warnings: list[str]
    #: What ``on_missing="keep"`` kept as written: the problem it would be, and its note
    #: (``HostConfig.kept``; the notes end ``HostConfig.warnings``).
    kept: list[tuple[ConfigProblem, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Text:
    value: str
    written: str
    had_var: bool


@dataclass(slots=True)
class _Entry:
    """The state of one entry while its keys are read (mutable, private)."""

    name: str
    ctx: Ctx
    type: Transport | None = None
    type_key: str | None = None
    command: _Text | None = None
    command_key: str | None = None
    command_extra: list[_Text] = field(default_factory=list)
    args: list[_Text] | None = None
    args_key: str | None = None
    #: The ``args`` value as written, where, and the span of ``ctx.problems`` reading it
    #: added: a URL server ignores its args (kept as written, their problems dropped).
    args_written: Any = None
    args_at: str | None = None
    args_span: tuple[int, int] = (0, 0)
    args_warn_span: tuple[int, int] = (0, 0)
    args_kept_span: tuple[int, int] = (0, 0)
    url: _Text | None = None
    url_key: str | None = None
    url_transport: Transport = "http"
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    env_file: _Text | None = None
    env_file_key: str = "envFile"
    env_vars: tuple[str, ...] = ()
    bearer: str | None = None
    env_headers: dict[str, str] = field(default_factory=dict)
    enabled: bool | None = None
    enabled_key: str | None = None
    extension: bool = False
    values: dict[str, Any] = field(default_factory=dict)
    templates: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    def problem(self, key: str | None, message: str) -> None:
        self.ctx.problems.append(ConfigProblem(self.name, key, message))

    def unicode(self, key: str, value: str, *, what: str = "the value") -> bool:
        """Whether the string ``value`` (a field the host uses) is Unicode text; a problem
        at ``key`` when it holds a lone surrogate."""
        if _SURROGATE.search(value):
            self.problem(key, f"{what} {_SURROGATE_WHY}")
            return False
        return True

    def warn(self, key: str | None, message: str) -> None:
        where = f"{self.name}.{key}" if key else self.name
        self.ctx.warnings.append(f"{where}: {message}")

    def keep(self, key: str, problem: str, note: str, *, input_id: str | None = None) -> None:
        """A value kept as written (``on_missing="keep"``): ``problem`` is what it would be
        otherwise, ``note`` what the warning adds (``: kept as written``)."""
        kept = ConfigProblem(self.name, key, problem, input=input_id)
        self.ctx.kept.append((kept, f"{kept}{note}"))

    def text(self, key: str, value: Any, *, what: str = "a string",
             secret: bool = False) -> _Text | None:
        """``value`` expanded, with a warning for each reference the dialect leaves literal
        and each variable kept as written (``on_missing="keep"``); None after a problem."""
        if not isinstance(value, str):
            self.problem(key, f"must be {what}, not {type_name(value)}")
            return None
        if not self.unicode(key, value):
            return None
        if "\x00" in value:
            self.problem(key, "must not contain a NUL character")
            return None
        kept: list[Var] = []
        expanded, had_var = self.ctx.expander.expand(
            value, server=self.name, field=key, problems=self.ctx.problems, kept=kept)
        for message in literal_warnings(value, self.ctx.dialect, secret=secret):
            self.warn(key, message)
        for var in kept:
            self.keep(key, f"{var.describe()} is not set", ": kept as written",
                      input_id=var.name if var.kind == "input" else None)
        return _Text(expanded, value, had_var)


Handler = Callable[[_Entry, str, Any], None]


def _h_type(e: _Entry, key: str, value: Any) -> None:
    transport = TYPE_VALUES.get(value.lower()) if isinstance(value, str) else None
    if transport is None:
        e.problem(key, f"unknown transport type {word(value)} "
                       "(stdio, http, streamable-http or sse)")
        return
    if e.type is not None and e.type != transport:
        e.problem(key, f"disagrees with {e.type_key!r}")
    e.type, e.type_key = transport, key


def _h_command(e: _Entry, key: str, value: Any, *, lists: bool = False) -> None:
    e.command_key = key
    if lists and isinstance(value, list):
        if not value:
            e.problem(key, "is an empty list")
            return
        texts = [e.text(f"{key}[{i}]", v) for i, v in enumerate(value)]
        if all(t is not None for t in texts):
            e.command = texts[0]
            e.command_extra = [t for t in texts[1:] if t is not None]
        return
    e.command = e.text(key, value, what="a string" + (" or a list of strings" if lists else ""))


def _h_command_or_list(e: _Entry, key: str, value: Any) -> None:
    _h_command(e, key, value, lists=True)


def _h_zed_command(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        _h_command(e, key, value)
        return
    # The legacy shape: "command": {"path": ..., "args": [...], "env": {...}}.
    e.command_key = f"{key}.path"
    if "path" not in value:
        e.problem(e.command_key, "is missing")
    else:
        e.command = e.text(e.command_key, value["path"])
    if "args" in value:
        _h_args(e, f"{key}.args", value["args"])
    if "env" in value:
        _h_env(e, f"{key}.env", value["env"])
    extra = sorted(str(k) for k in value if k not in ("path", "args", "env"))
    if extra:
        e.warn(key, f"unknown keys {', '.join(extra)} of the legacy command are dropped")


def _h_zed_source(e: _Entry, key: str, value: Any) -> None:
    if value == "extension":
        e.extension = True
    elif value != "custom":
        e.problem(key, f"must be 'custom' or 'extension', not {word(value)}")


def _h_args(e: _Entry, key: str, value: Any) -> None:
    if e.args is not None:
        e.problem(key, f"repeats the arguments of {e.args_key!r}")
        return
    start, warn_start, kept_start = len(e.ctx.problems), len(e.ctx.warnings), len(e.ctx.kept)
    e.args_written, e.args_at = value, key
    if not isinstance(value, list):
        e.problem(key, f"must be a list of strings, not {type_name(value)}")
    else:
        texts = [e.text(f"{key}[{i}]", v) for i, v in enumerate(value)]
        e.args = [t for t in texts if t is not None]
        e.args_key = key
    e.args_span = (start, len(e.ctx.problems))
    e.args_warn_span = (warn_start, len(e.ctx.warnings))
    e.args_kept_span = (kept_start, len(e.ctx.kept))


def _string_map(e: _Entry, key: str, value: Any, *, headers: bool) -> dict[str, _Text]:
    """A map of strings (env or headers), each value expanded; numbers become their text."""
    out: dict[str, _Text] = {}
    if not isinstance(value, Mapping):
        e.problem(key, f"must be an object of strings, not {type_name(value)}")
        return out
    for name, written in value.items():
        where = f"{key}.{name}"
        item = written
        valid = _HEADER_NAME if headers else _ENV_NAME
        if not isinstance(name, str) or not valid.match(name):
            e.problem(key, "has a name that is not a valid " + ("header name" if headers
                                                                 else "variable name"))
            continue
        if not e.unicode(where, name, what="this key"):
            continue
        if _is_number(item):
            decimal = _decimal(item)
            if decimal is None:
                e.problem(where, "must be a string; this number has no decimal text to take")
                continue
            e.warn(where, "is a number: taken as its decimal text")
            item = decimal
        text = e.text(where, item, secret=True)
        if text is None:
            continue
        if headers and ("\r" in text.value or "\n" in text.value):
            e.problem(where, "must not contain a line break")
            continue
        out[name] = text
    return out


def _merge_map(e: _Entry, target: dict[str, str], template_key: str,
               texts: dict[str, _Text]) -> None:
    for name, text in texts.items():
        target[name] = text.value
        if text.had_var:
            e.templates.setdefault(template_key, {})[name] = text.written


def _h_env(e: _Entry, key: str, value: Any) -> None:
    _merge_map(e, e.env, "env", _string_map(e, key, value, headers=False))


def _h_headers(e: _Entry, key: str, value: Any) -> None:
    _merge_map(e, e.headers, "headers", _string_map(e, key, value, headers=True))


def _h_env_file(e: _Entry, key: str, value: Any) -> None:
    e.env_file, e.env_file_key = e.text(key, value), key


def _h_cwd(e: _Entry, key: str, value: Any) -> None:
    text = e.text(key, value)
    if text is None:
        return
    if not text.value.strip():
        e.problem(key, "is blank")
        return
    e.values["cwd"] = text.value
    if text.had_var:
        e.templates["cwd"] = text.written


def _url(e: _Entry, key: str, value: Any, transport: Transport) -> None:
    if e.url_key is not None:
        e.problem(key, f"a second URL beside {e.url_key!r}: keep one")
        return
    e.url, e.url_key, e.url_transport = e.text(key, value), key, transport


def _h_url_http(e: _Entry, key: str, value: Any) -> None:
    _url(e, key, value, "http")


def _h_url_sse(e: _Entry, key: str, value: Any) -> None:
    _url(e, key, value, "sse")


def _h_url_http_alias(e: _Entry, key: str, value: Any) -> None:
    e.warn(key, f"{e.ctx.dialect} reads 'serverUrl'; taken as the server URL "
                "(written back as 'serverUrl')")
    _url(e, key, value, "http")


def _flag(e: _Entry, key: str, value: Any, enabled: bool) -> None:
    if not isinstance(value, bool):
        e.problem(key, f"must be true or false, not {type_name(value)}")
        return
    if e.enabled is not None and e.enabled != enabled:
        e.problem(key, f"contradicts {e.enabled_key!r}")
        return
    e.enabled, e.enabled_key = enabled, key


def _h_enabled(e: _Entry, key: str, value: Any) -> None:
    _flag(e, key, value, value is True)


def _h_disabled(e: _Entry, key: str, value: Any) -> None:
    _flag(e, key, value, value is not True)


def _seconds(e: _Entry, key: str, value: Any, unit: str) -> float | None:
    """A timeout in seconds from ``value`` in ``unit`` (``s``, ``ms`` or ``bare``)."""
    units = "seconds" if unit == "s" else "milliseconds" if unit == "ms" else "seconds"
    if not _is_number(value):
        e.problem(key, f"must be a number of {units}, not {type_name(value)}")
        return None
    number = _as_float(value)
    if math.isnan(number) or number <= 0:
        e.problem(key, f"must be a positive, finite number of {units}")
        return None
    if math.isinf(number):
        e.problem(key, f"is more than {MAX_TIMEOUT:g} seconds: check the unit ({units})")
        return None
    seconds = number / 1000 if unit == "ms" else number
    if unit == "bare" and number > BARE_TIMEOUT_SECONDS_MAX:
        seconds = number / 1000
        e.warn(key, f"more than {BARE_TIMEOUT_SECONDS_MAX:g}: read as milliseconds")
    if seconds == 0:  # 5e-324 ms is positive, but as seconds it is below every float
        e.problem(key, f"must be a positive, finite number of {units}")
        return None
    if seconds > MAX_TIMEOUT:
        e.problem(key, f"is more than {MAX_TIMEOUT:g} seconds: check the unit ({units})")
        return None
    return seconds


def _timeout(target: str, unit: str) -> Handler:
    def handler(e: _Entry, key: str, value: Any) -> None:
        seconds = _seconds(e, key, value, unit)
        if seconds is not None:
            if target in e.values:
                e.problem(key, f"a second {target.replace('_', ' ')}: keep one key")
            e.values[target] = seconds
    return handler


def _names(e: _Entry, key: str, value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        e.problem(key, f"must be a list of strings, not {type_name(value)}")
        return None
    fine = [e.unicode(f"{key}[{i}]", v) for i, v in enumerate(value)]
    return tuple(value) if all(fine) else None


def _tools(target: str) -> Handler:
    def handler(e: _Entry, key: str, value: Any) -> None:
        names = _names(e, key, value)
        if names is not None:
            previous = e.values.get(target) or ()
            e.values[target] = tuple(dict.fromkeys((*previous, *names)))
    return handler


def _h_trust(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, bool):
        e.problem(key, f"must be true or false, not {type_name(value)}")
    elif value:
        e.values["auto_approve"] = ("*",)


def _h_required(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, bool):
        e.problem(key, f"must be true or false, not {type_name(value)}")
    else:
        e.values["required"] = value


def _h_description(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, str):
        e.problem(key, f"must be a string, not {type_name(value)}")
    elif e.unicode(key, value):
        e.values["description"] = value


def _h_exposure(e: _Entry, key: str, value: Any) -> None:
    # The type first: a list or an object is no set member (``in`` would raise TypeError).
    if not isinstance(value, str) or value not in _EXPOSURES:
        e.problem(key, f"must be one of {', '.join(sorted(_EXPOSURES))}")
    else:
        e.raw[key] = value


#: ADK-Rust ``restartPolicy`` keys -> (RestartPolicy field, milliseconds?).
_RESTART_KEYS: dict[str, tuple[str, bool]] = {
    "initialDelayMs": ("initial_delay", True), "maxDelayMs": ("max_delay", True),
    "backoffMultiplier": ("multiplier", False), "maxRestartAttempts": ("max_attempts", False),
}


def _h_restart(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        e.problem(key, f"must be an object, not {type_name(value)}")
        return
    kwargs: dict[str, Any] = {}
    ok = True
    for sub, item in value.items():
        where = f"{key}.{sub}"
        if sub not in _RESTART_KEYS:
            e.warn(where, "is not a restartPolicy key: dropped")
            continue
        name, millis = _RESTART_KEYS[sub]
        if not _is_number(item) or math.isnan(number := _as_float(item)):
            e.problem(where, "must be a finite number" if _is_number(item)
                      else f"must be a number, not {type_name(item)}")
            ok = False
            continue
        if name == "max_attempts":
            if isinstance(item, float) and not item.is_integer():
                e.problem(where, "must be a whole number")
                ok = False
                continue
            # any integer: RestartPolicy refuses < 1; a huge one means "never give up"
            kwargs[name] = int(item)
            continue
        if not millis:  # the multiplier, a factor
            if not math.isfinite(number):
                e.problem(where, "must be a finite number")
                ok = False
                continue
            kwargs[name] = number
            continue
        seconds = number / 1000
        if not seconds <= MAX_TIMEOUT:
            e.problem(where, f"is more than {MAX_TIMEOUT:g} seconds: check the unit "
                             "(milliseconds)")
            ok = False
            continue
        kwargs[name] = seconds
    if not ok:
        return
    try:
        e.values["restart"] = RestartPolicy(**kwargs)
    except ValueError as exc:
        e.problem(key, str(exc))


def _h_env_vars(e: _Entry, key: str, value: Any) -> None:
    names = _names(e, key, value)
    if names is not None:
        unique = tuple(dict.fromkeys(names))
        if len(unique) < len(names):
            e.warn(key, "names a variable more than once: forwarded once")
        e.env_vars = unique


def _h_bearer(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        e.problem(key, "must be the name of an environment variable")
    elif e.unicode(key, value):
        e.bearer = value


def _h_env_headers(e: _Entry, key: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        e.problem(key, f"must be an object of header -> variable name, not {type_name(value)}")
        return
    for name, var in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            e.problem(key, "has a name that is not a valid header name")
        elif not isinstance(var, str) or not var.strip():
            e.problem(f"{key}.{name}", "must be the name of an environment variable")
        elif e.unicode(f"{key}.{name}", var):
            e.env_headers[name] = var


#: kind -> the handler that reads a key of that kind.
_HANDLERS: dict[str, Handler] = {
    "type": _h_type, "type_alias": _h_type,
    "command": _h_command, "command_or_list": _h_command_or_list,
    "zed_command": _h_zed_command, "zed_source": _h_zed_source,
    "args": _h_args, "env": _h_env, "headers": _h_headers, "env_file": _h_env_file,
    "cwd": _h_cwd,
    "url_http": _h_url_http, "url_sse": _h_url_sse, "url_http_alias": _h_url_http_alias,
    "enabled": _h_enabled, "enabled_alias": _h_enabled, "disabled": _h_disabled,
    "timeout_s": _timeout("timeout", "s"), "timeout_ms": _timeout("timeout", "ms"),
    "timeout_bare": _timeout("timeout", "bare"),
    "startup_s": _timeout("startup_timeout", "s"),
    "startup_ms_alias": _timeout("startup_timeout", "ms"),
    "include": _tools("include_tools"), "exclude": _tools("exclude_tools"),
    "approve": _tools("auto_approve"), "approve_alias": _tools("auto_approve"),
    "trust": _h_trust, "required": _h_required, "description": _h_description,
    "exposure": _h_exposure, "restart": _h_restart,
    "env_vars": _h_env_vars, "bearer": _h_bearer, "env_headers": _h_env_headers,
}

_TABLES: dict[Dialect, dict[str, str]] = {d: dict(t) for d, t in KEY_TABLES.items()}


def _url_problem(url: str) -> str | None:
    """What is wrong with a server URL, never quoting it (it may hold a secret)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        return "is not a valid URL"
    if parts.username is not None or parts.password is not None:
        return "must not hold credentials (user:password@): send them in headers"
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an http:// or https:// URL"
    if not parts.hostname:
        return "has no host"
    return None


def _transport(e: _Entry) -> Transport | None:
    """The entry's transport after its keys were read (None after a problem)."""
    table = _TABLES[e.ctx.dialect]
    has_command, has_url = e.command_key is not None, e.url_key is not None
    if has_command and has_url:
        e.problem(e.command_key, f"a command and a URL ({e.url_key!r}) in one entry: keep one")
        return None
    if e.type == "stdio" and has_url:
        e.problem(e.type_key, f"type stdio needs a command, not {e.url_key!r}")
        return None
    if e.type in ("http", "sse") and has_command:
        e.problem(e.type_key, f"type {e.type} needs a URL, not a command")
        return None
    if not has_command and not has_url:
        url_keys = [k for k, kind in table.items() if kind.startswith("url_")]
        if not url_keys:
            e.problem(None, f"needs a command (a {e.ctx.dialect} config has only stdio "
                            "servers)")
        else:
            e.problem(None, f"needs a command or a URL ({', '.join(url_keys)})")
        return None
    if has_command:
        if e.command is not None and not e.command.value.strip():
            e.problem(e.command_key, "is blank")
            return None
        return "stdio"
    if e.args_at is not None and not (isinstance(e.args_written, list)
                                      and not e.args_written):
        # No dialect has arguments beside a URL (host-notes 3.1) and other hosts ignore
        # them (a URL server runs no command): ignored here too, with a warning, and kept
        # as written so the same dialect writes them back (module docstring of _parse).
        # What reading them found wrong does not matter then.  An empty list says nothing.
        start, end = e.args_span
        del e.ctx.problems[start:end]
        start, end = e.args_warn_span  # what they would pass literally: nothing is passed
        del e.ctx.warnings[start:end]
        start, end = e.args_kept_span
        del e.ctx.kept[start:end]
        e.raw[e.args_at] = plain_copy(e.args_written)
        e.args = None
        e.warn(e.args_at, "a URL server ignores args: kept as written")
    if e.url is not None:
        if not e.url.value.strip():
            e.problem(e.url_key, "is blank")
            return None
        why = _url_problem(e.url.value.strip())
        if why:
            e.problem(e.url_key, why)
            return None
    if e.type is None and e.ctx.dialect == "generic" and e.url is not None \
            and _SSE_PATH.search(urlsplit(e.url.value).path):
        # fastmcp's rule for a plain mcpServers file (host-notes 3.2): a URL path ending in
        # /sse is the 2024-11-05 HTTP+SSE transport
        e.warn(e.url_key, "a URL path ending in /sse is taken as the SSE transport; give "
                          "\"type\": \"http\" if it is Streamable HTTP")
        return "sse"
    return e.type or e.url_transport


def _merge_env_file(e: _Entry) -> None:
    text = e.env_file
    if text is None:
        return
    key = e.env_file_key
    content = e.ctx.env_files.get(text.value)
    if content is None and e.ctx.expander.on_missing == "keep":
        e.keep(key, "the file was not read: its variables are not set", ", the key is kept")
        e.templates["env_file"] = {"path": text.written, "keys": ()}
        return
    if content is None:
        e.problem(key, f"the file {text.written!r} was not read "
                       "(the binding passes its text in env_files)")
        return
    values, bad = dotenv_entries(content)
    for message in bad:
        e.problem(key, message)
    supplied = tuple(k for k in values if k not in e.env)
    e.env = {**{k: values[k] for k in supplied}, **e.env}
    e.templates["env_file"] = {"path": text.written, "keys": supplied}


def _forward(e: _Entry) -> None:
    """Codex ``env_vars``, ``bearer_token_env_var`` and ``env_http_headers``: values from
    the caller's ``env``, remembered by name in ``templates``."""
    expander = e.ctx.expander
    if e.env_vars:
        e.templates["env_vars"] = e.env_vars
    for name in e.env_vars:
        if name in e.env:
            e.problem("env_vars", f"{name} is also set in env: keep one")
            continue
        value = expander.env.get(name)
        if value is None:
            _missing(e, "env_vars", name)
            if expander.on_missing == "empty":
                e.env[name] = ""
        else:
            e.env[name] = value
    wanted = dict(e.env_headers)
    if e.bearer is not None:
        e.templates["bearer_token_env_var"] = e.bearer
        if "authorization" in {h.lower() for h in (*e.headers, *wanted)}:
            e.problem("bearer_token_env_var", "an Authorization header is also set: keep one")
            return
    if e.env_headers:
        e.templates["env_http_headers"] = dict(e.env_headers)
    for header, name in wanted.items():
        if header in e.headers:
            e.problem("env_http_headers", f"{header} is also set in http_headers: keep one")
            continue
        value = expander.env.get(name)
        if value is None:
            _missing(e, f"env_http_headers.{header}", name)
            value = "" if expander.on_missing == "empty" else None
        if value is not None:
            e.headers[header] = value
    if e.bearer is not None:
        token = expander.env.get(e.bearer)
        if token is None:
            _missing(e, "bearer_token_env_var", e.bearer)
            token = "" if expander.on_missing == "empty" else None
        if token is not None:
            e.headers["Authorization"] = f"Bearer {token}"


def _missing(e: _Entry, key: str, name: str) -> None:
    if e.ctx.expander.on_missing == "error":
        e.problem(key, f"variable {name} is not set")
    elif e.ctx.expander.on_missing == "keep":
        e.keep(key, f"variable {name} is not set", ": kept as written")


def parse_entry(name: str, entry: Mapping[str, Any], ctx: Ctx) -> ServerSpec | None:
    """One server entry, or None when it has a problem (added to ``ctx.problems``)."""
    e = _Entry(name=name, ctx=ctx)
    before = len(ctx.problems)
    table = _TABLES[ctx.dialect]
    for key, value in entry.items():
        kind = table.get(key) if isinstance(key, str) else None
        if kind is None:
            e.raw[str(key)] = plain_copy(value)
        else:
            _HANDLERS[kind](e, key, value)
    if e.extension:
        # Started by a Zed extension, not by us: kept whole, written back unchanged.
        del ctx.problems[before:]
        e.warn("source", "is managed by a Zed extension: kept as written, not started")
        return ServerSpec(name=name, enabled=False, raw=plain_copy(dict(entry)))
    transport = _transport(e)
    _merge_env_file(e)
    _forward(e)
    if len(ctx.problems) > before or transport is None:
        return None
    argv = [t for t in (e.command, *e.command_extra, *(e.args or ())) if t is not None]
    if any(t.had_var for t in argv):
        e.templates["command"] = tuple(t.written for t in argv)
    if e.url is not None and e.url.had_var:
        e.templates["url"] = e.url.written
    if transport == "stdio" and e.headers:
        e.warn("headers", "only a URL server sends headers")
    if transport != "stdio" and (e.env or "cwd" in e.values or e.env_file is not None):
        e.warn(None, "env, cwd and envFile apply only to a server started from a command")
    if ctx.dialect == "cursor" and transport != "stdio" and e.env_file is not None:
        e.warn(e.env_file_key, "Cursor reads envFile only for stdio servers")
    return ServerSpec(
        name=name, transport=transport, command=tuple(t.value for t in argv), env=e.env,
        url=e.url.value.strip() if e.url is not None else None, headers=e.headers,
        enabled=True if e.enabled is None else e.enabled, raw=e.raw, templates=e.templates,
        **e.values)
