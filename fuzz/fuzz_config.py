"""Fuzz harness for host config files: :func:`parse_config`, :func:`dump_config_with_warnings`,
:func:`env_file_paths` and :func:`detect_dialect` (``mcp_proto.host``).

``check(data)`` reads a config from the data two ways, chosen by its first byte:

- **raw** (``{``, ``/``, whitespace or a BOM first): the data is the file's text, parsed in the
  dialect its root key says and in one more dialect chosen from its last byte;
- **structured** (otherwise): the config is drawn from the data: root keys of every dialect
  (sometimes two, sometimes none), VS Code ``inputs``, Gemini ``mcp.allowed/excluded``,
  ``projects`` of ``~/.claude.json``; entries that start as a stdio or a URL server and then
  get keys of every dialect's table with values of the right kind (variables of every form,
  numbers in env and headers, huge numbers, timeouts around each unit's bounds, restart
  policies, Codex ``env_vars`` / bearer / env headers, Zed's legacy command, envFiles) or of
  no kind at all (nulls, lists, lone surrogates, NUL, 70 levels of nesting, dates), and keys
  no table has (kept in ``raw``).  It is given as a mapping (as the binding gives a parsed
  TOML file) or as JSON text (bytes or str, with comments and trailing commas sometimes), in
  a dialect forced or detected, with a ``path``, a workspace and ``on_missing`` drawn too.

Every config parsed is written to every dialect, and each text parsed back.

Properties (any violation raises AssertionError):

- ``parse_config`` raises only :class:`ConfigError` (with at least one problem);
  ``env_file_paths`` and ``detect_dialect`` never raise; ``dump_config_with_warnings`` never
  raises for a known dialect (what a target cannot say is a warning) and its text is UTF-8
  (for Codex, TOML that ``tomllib`` reads) that ``parse_config`` reads back, raising at most
  ConfigError;
- every parsed server passes :func:`check_spec` (a Zed extension entry aside): typed fields,
  an http(s) URL without credentials, headers without line breaks, timeouts in range;
- round trips: when the dump to the config's own dialect has no warning, parsing it back
  gives an equal config (servers with ``raw`` and ``templates``, ``extra``) and dumping that
  gives the same text; when a conversion A -> B and back B -> A both have no warning, the
  servers come back equal;
- no secret leaks: a marker put into env values, header values, URL user-info and query
  values never shows in a ConfigError message, a warning or the repr of the config; a second
  marker, the value of variables, inputs and env files (never written in the file), never
  shows in those nor in a dumped text (templates are written back, never expanded values).

Run: ``python fuzz/fuzz_config.py /tmp/fz/config fuzz/corpus/config -dict=fuzz/config.dict``.
"""

from __future__ import annotations

import datetime
import importlib
import json
import sys
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto.host import (
    DIALECTS,
    ConfigError,
    HostConfig,
    ServerSpec,
    check_spec,
    detect_dialect,
    dump_config_with_warnings,
    env_file_paths,
    parse_config,
)
from mcp_proto.host.config._expand import Var, tokenize
from mcp_proto.host.config._parse import KEY_TABLES
from mcp_proto.host.config._parse import ROOT_KEYS as ROOT_KEY

#: Written literally into env values, header values, URL user-info and query values: never
#: in a message, a warning or a repr.  (``+`` and ``!`` keep it out of the words messages may
#: quote, such as a type name.)
SECRET = "S3CRET+lit!m4rk"
#: The value of variables, inputs and env files, never written in the config itself: never
#: in a message, a warning, a repr nor a dumped text.
SECRET_VAR = "V4R+s3cret!m4rk"

#: A TOML reader for the Codex dumps: the standard library's (3.11+), else tomli (the ``toml``
#: extra on 3.10), else none (a Codex dump is then not parsed back).
try:
    tomllib: Any = importlib.import_module("tomllib")
except ImportError:  # pragma: no cover - Python 3.10
    try:
        tomllib = importlib.import_module("tomli")
    except ImportError:
        tomllib = None

ENV = {"TOKEN": SECRET_VAR, "A": "va", "B": "${C}", "C": "never", "HOME": "/home/u",
       "EMPTY": "", "PORT": "8080"}
INPUTS = {"tok": SECRET_VAR, "id": "input-id"}
ENV_FILES = {"/w/.env": f"FROM_FILE={SECRET_VAR}\nA=file\n", "/w/bad.env": "not a line\n",
             ".env": "X=1\n", "/home/u/.env": "export K='v'\n"}
PATHS = (None, None, "/w/.vscode/mcp.json", "/w/.cursor/mcp.json",
         "/home/u/.gemini/settings.json", "/home/u/.codex/config.toml", "/home/u/.claude.json",
         "/w/.mcp.json", "/home/u/.config/zed/settings.json",
         "/home/u/.codeium/windsurf/mcp_config.json", "/home/u/.kiro/settings/mcp.json",
         "/x/Claude/claude_desktop_config.json", "C:\\Users\\u\\.cursor\\mcp.json")
ROOT_KEYS = ("mcpServers", "mcpServers", "servers", "context_servers", "mcp_servers")

# Tag -> (exception type that escapes, text in its message) or AssertionError text.  Pinned
# by xfail tests in tests/test_fuzz_parsers.py.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

# -- drawing a config -------------------------------------------------------------------------

#: key -> the kinds it has in some dialect's table.
KINDS: dict[str, tuple[str, ...]] = {}
for _table in KEY_TABLES.values():
    for _key, _kind in _table:
        KINDS[_key] = tuple(dict.fromkeys((*KINDS.get(_key, ()), _kind)))
del _table, _key, _kind
ALL_KEYS = tuple(KINDS)
RAW_KEYS = ("settings", "oauth", "autoApprove", "lifecycle", "headersHelper", "dev", "auth",
            "x-extra", "bearer_token", "transport", "type")


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


WEIRD: tuple[Any, ...] = (None, True, 0, -1, 1.5, 10**400, "", "\ud800", "a\x00b", [], {},
                          [[]], {"a": {}}, "x" * 1000, 9223372036854775808, _deep(70))
# Each vocabulary: the values a dialect reads (first) and the odd ones; ``_pick`` takes from
# the first part seven times in eight, so most entries parse and reach the dump.
Vocabulary = tuple[tuple[Any, ...], tuple[Any, ...]]
CMDS: Vocabulary = (
    ("node", "npx", "${A}/bin/x", "$A", "${env:A}", "uvx", "${TOKEN}", "C:\\bin\\x.exe"),
    ("", "  ", "x\x00y", "${MISSING}", "\ud800"))
ARGS: Vocabulary = (
    ("-y", "pkg", "--token=${TOKEN}", "${env:TOKEN}", "$TOKEN", "${workspaceFolder}/x",
     "${A:-d}", "", "${userHome}", "${/}", "a b", "--k=${input:tok}"),
    ("\ud800", "${MISSING}", "${input:nope}", "x\x00"))
ENV_NAMES: Vocabulary = (("K", "TOKEN", "PATH", "X_1", "\u00e9"), ("A=B", ""))
HEADER_NAMES: Vocabulary = (("Authorization", "X-Key", "x-api-key"), ("Bad Name", ""))
VALUES: Vocabulary = (
    (SECRET, "plain", "${TOKEN}", "${env:TOKEN}", "$TOKEN", "Bearer ${TOKEN}",
     f"Bearer {SECRET}", "${TOKEN:-dflt}", "${input:tok}", 1, 1.5, "", "a\nb",
     f"k={SECRET}&x"),
    (10**400, -(10**400), 1e308, True, None, [], {"x": 1}, "${MISSING}", "\ud800",
     "${env:MISSING}", "a\x00b"))
URLS: Vocabulary = (
    ("https://h.example/mcp", f"https://h.example/mcp?api_key={SECRET}",
     "https://h.example/sse", "http://localhost:3000/mcp", "https://h.example/${env:TOKEN}",
     "https://h.example/${TOKEN}", "https://[::1]:8080/", "HTTPS://H.example/x/sse/",
     f"https://h.example/p?a=1&token={SECRET}#f"),
    (f"https://u:{SECRET}@h.example/", f"https://{SECRET}@h.example/", "ftp://h.example/",
     "", "https://", "  ", "https://h:99999/", "not a url", "https://h/\ud800"))


def _pick(ch: Choices, vocabulary: Vocabulary) -> Any:
    good, odd = vocabulary
    return ch.pick(good) if ch.below(8) else ch.pick(good + odd)


TIMEOUTS: tuple[Any, ...] = (5, 0.5, 600, 601, 60000, 86400, 86401, 1e9, 0, -1, 10**400, "5",
                             True, None, 1.5e-3, 1e-300)
KIND_VALUES: dict[str, tuple[Any, ...]] = {
    "type": ("stdio", "http", "sse", "streamable-http", "SSE", "bogus", 5),
    "args": ([], ["-y", "pkg"], ["${TOKEN}"], "x", [1]),
    "env_file": ("/w/.env", "${workspaceFolder}/.env", ".env", "/w/bad.env", "/nope", 5,
                 "${userHome}/.env"),
    "cwd": ("/w", "", "${workspaceFolder}", "~", 5, "${userHome}/p", "rel"),
    "enabled": (True, False, "true", 1, None),
    "include": (["a", "b*"], [], ["*"], "a", [1], ["a", "a"]),
    "description": ("d", "", 5, None, "\ud800"),
    "exposure": ("direct", "hidden", "deferred", "codemode", "x", [], {}),
    "restart": ({"initialDelayMs": 100, "maxDelayMs": 5000, "backoffMultiplier": 2,
                 "maxRestartAttempts": 3}, {"maxRestartAttempts": 3.5},
                {"initialDelayMs": 500, "maxDelayMs": 100}, {"x": 1},
                {"initialDelayMs": 10**400}, 5, {"backoffMultiplier": 0.5}),
    "env_vars": (["TOKEN", "A"], ["MISSING"], [], "TOKEN", [1], ["K"]),
    "bearer": ("TOKEN", "MISSING", "", 5, "A"),
    "env_headers": ({"X-Key": "TOKEN"}, {"Bad Name": "A"}, {"X": ""}, [], {"X-A": "MISSING"}),
    "zed_source": ("custom", "extension", "x"),
    "trust": (True, False, "yes"),
}
for _alias, _base in (("type_alias", "type"), ("disabled", "enabled"),
                      ("enabled_alias", "enabled"), ("required", "enabled"),
                      ("exclude", "include"), ("approve", "include"),
                      ("approve_alias", "include")):
    KIND_VALUES[_alias] = KIND_VALUES[_base]
del _alias, _base


def _string_map(ch: Choices, names: Vocabulary) -> dict[str, Any]:
    return {_pick(ch, names): _pick(ch, VALUES) for _ in range(ch.below(4))}


def draw_value(ch: Choices, kind: str) -> Any:
    if ch.chance(16):
        return ch.pick(WEIRD)
    if kind in ("command", "command_or_list", "zed_command"):
        k = ch.below(6)
        if k == 0 and kind != "command":
            return [_pick(ch, CMDS), *(_pick(ch, ARGS) for _ in range(ch.below(3)))]
        if k == 1 and kind == "zed_command":
            legacy: dict[str, Any] = {"path": _pick(ch, CMDS)}
            if ch.chance(2):
                legacy["args"] = [_pick(ch, ARGS) for _ in range(ch.below(3))]
            if ch.chance(2):
                legacy["env"] = _string_map(ch, ENV_NAMES)
            if ch.chance(4):
                legacy["extra"] = 1
            return legacy
        return _pick(ch, CMDS)
    if kind == "args":
        return [_pick(ch, ARGS) for _ in range(ch.below(4))] if ch.below(4) else \
            ch.pick(KIND_VALUES["args"])
    if kind == "env":
        return _string_map(ch, ENV_NAMES)
    if kind == "headers":
        return _string_map(ch, HEADER_NAMES)
    if kind.startswith("url_"):
        return _pick(ch, URLS)
    if kind.startswith(("timeout_", "startup_")):
        return ch.pick(TIMEOUTS)
    if kind in KIND_VALUES:
        return ch.pick(KIND_VALUES[kind])
    return ch.pick(WEIRD)


def draw_raw(ch: Choices, dates: bool) -> Any:
    options: tuple[Any, ...] = (9223372036854775808, {"a": [1, {"b": None}]}, None, 1.5, "s",
                                [None], {"nested": {"t": True}}, -(2**63) - 1)
    value = ch.pick(options)
    if dates and ch.chance(4):  # what tomllib gives for a TOML date (Codex files only)
        value = ch.pick((datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5),
                         datetime.time(1, 2)))
    return value


def draw_entry(ch: Choices, dates: bool, dialect: str | None) -> Any:
    """An entry: a stdio or a URL server, then more keys (mostly of ``dialect``'s table,
    when it is known)."""
    if ch.chance(16):
        return ch.pick(WEIRD)
    table = dict(KEY_TABLES[dialect]) if dialect in KEY_TABLES else {}
    url_keys = [k for k, kind in table.items() if kind.startswith("url_")] if table else \
        ["url", "url", "serverUrl", "httpUrl"]
    entry: dict[str, Any] = {}
    if ch.below(3) or not url_keys:
        entry["command"] = draw_value(ch, table.get("command", "command_or_list"))
        if ch.chance(2):
            entry["args"] = draw_value(ch, "args")
        if ch.chance(2):
            entry["env"] = draw_value(ch, "env")
    else:
        entry[ch.pick(url_keys)] = _pick(ch, URLS)
        if ch.chance(2):
            entry["http_headers" if dialect == "codex" else "headers"] = draw_value(
                ch, "headers")
    for _ in range(ch.below(4)):
        if ch.chance(5):
            entry[ch.pick(RAW_KEYS)] = draw_raw(ch, dates)
            continue
        key = ch.pick(tuple(table)) if table and ch.below(4) else ch.pick(ALL_KEYS)
        kind = table.get(key) or ch.pick(KINDS[key])
        if kind.startswith(("url_", "command", "zed_command")) and not ch.chance(4):
            continue  # a second command or URL: a problem, now and then only
        entry[key] = draw_value(ch, kind)
    return entry


def draw_servers(ch: Choices, dates: bool, dialect: str | None) -> Any:
    if ch.chance(16):
        return ch.pick(WEIRD)
    names = (("a", "b", "srv-1", "\u00e9", "a.b", "x" * 70, "github"), ("", " "))
    return {_pick(ch, names): draw_entry(ch, dates, dialect) for _ in range(1 + ch.below(3))}


def draw_config(ch: Choices, dates: bool, dialect: str | None) -> dict[str, Any]:
    """A config's root, mostly in ``dialect``'s shape when it is given; ``dates`` puts dates
    and times in (a parsed TOML file has them)."""
    root: dict[str, Any] = {}
    if not ch.chance(16):
        key = ROOT_KEY[dialect] if dialect in ROOT_KEY and ch.below(8) else ch.pick(ROOT_KEYS)
        root[key] = draw_servers(ch, dates, dialect)
    if ch.chance(6):
        root[ch.pick(ROOT_KEYS)] = draw_servers(ch, dates, dialect)
    for _ in range(ch.below(3)):
        k = ch.below(5)
        if k == 0:
            root["inputs"] = [{"id": "tok", "type": "promptString", "password": True}]
        elif k == 1:
            root["mcp"] = {"excluded": ["a"]} if ch.chance(2) else {"allowed": ["b", "a"]}
        elif k == 2:
            root["projects"] = {"/w": {"mcpServers": {"p": {"command": "x"}}}, "/v": 5}
        elif k == 3:
            root["theme"] = draw_raw(ch, dates)
        else:
            root["x" + str(ch.below(3))] = ch.pick(WEIRD)
    return root


# -- the properties ---------------------------------------------------------------------------


class Run:
    """One input: the parse options and which secret checks apply."""

    def __init__(self, *, path: str | None, workspace: str | None, on_missing: str,
                 literal_secrets: bool, variable_secrets: bool, repr_secrets: bool) -> None:
        self.path = path
        self.kwargs: dict[str, Any] = {"env": ENV, "inputs": INPUTS, "workspace": workspace,
                                       "env_files": ENV_FILES, "on_missing": on_missing}
        self.literal_secrets = literal_secrets  # SECRET only where secrets go
        self.variable_secrets = variable_secrets  # SECRET_VAR not written in the input
        self.repr_secrets = repr_secrets  # no SECRET_VAR reference in a field repr shows

    def no_secret(self, text: str, what: str, *, dumped: bool = False) -> None:
        if self.variable_secrets:
            assert SECRET_VAR not in text, f"{what} shows a variable's value: {text[:300]!r}"
        if self.literal_secrets and not dumped:
            assert SECRET not in text, f"{what} shows a secret value: {text[:300]!r}"

    def parse(self, source: Any, dialect: str | None, what: str,
              path: str | None = None) -> HostConfig | None:
        try:
            config = parse_config(source, dialect=dialect, path=path, **self.kwargs)
        except ConfigError as exc:
            assert exc.problems, f"{what}: a ConfigError without problems"
            self.no_secret(str(exc), f"{what}: the ConfigError")
            return None
        except Exception as exc:
            escaped(f"parse_config ({what})", exc)
        assert isinstance(config, HostConfig)
        self.check_config(config, what)
        return config

    def check_config(self, config: HostConfig, what: str) -> None:
        assert config.dialect in DIALECTS
        for warning in config.warnings:
            assert isinstance(warning, str)
            self.no_secret(warning, f"{what}: a warning")
        if self.repr_secrets:
            self.no_secret(repr(config), f"{what}: the config's repr")
        for name, spec in config.servers.items():
            assert isinstance(spec, ServerSpec) and spec.name == name
            if self.repr_secrets:
                self.no_secret(repr(spec), f"{what}: a spec's repr")
            extension = not spec.command and not spec.enabled and spec.transport == "stdio"
            if not extension:
                problems = check_spec(spec)
                assert not problems, f"{what}: parsed spec {name!r} fails check_spec: " + \
                    "; ".join(map(str, problems))[:300]
            assert all(type(v) is str for v in (*spec.env.values(), *spec.headers.values()))
            assert all("\r" not in v and "\n" not in v for v in spec.headers.values()), (
                "a header value with a line break")

    def dump(self, config: HostConfig, target: str, what: str) -> tuple[str, tuple[str, ...]]:
        try:
            text, warnings = dump_config_with_warnings(config, target)
        except Exception as exc:
            escaped(f"dump_config_with_warnings({config.dialect} -> {target}) ({what})", exc)
        assert isinstance(text, str)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise AssertionError(f"{config.dialect} -> {target}: the dump is not UTF-8: "
                                 f"{exc}"[:300]) from exc
        for warning in warnings:
            self.no_secret(warning, f"{config.dialect} -> {target}: a dump warning")
        self.no_secret(text, f"{config.dialect} -> {target}: the dumped text", dumped=True)
        return text, warnings

    def reparse(self, text: str, target: str, what: str) -> HostConfig | None:
        source: Any = text
        if target == "codex":
            try:
                source = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise AssertionError(f"{what}: the Codex dump is not TOML: {exc}") from exc
        return self.parse(source, target, what, path=self.path)


_COMPARED = [f.name for f in fields(ServerSpec)]


def _differences(a: HostConfig, b: HostConfig) -> str:
    """What differs between two configs (templates compared by what they refer to)."""
    out = []
    for name in sorted(set(a.servers) | set(b.servers)):
        if name not in a.servers or name not in b.servers:
            out.append(f"server {name!r} {'lost' if name in a.servers else 'added'}")
            continue
        x, y = a.servers[name], b.servers[name]
        changed = [f for f in _COMPARED if f != "templates" and getattr(x, f) != getattr(y, f)]
        if _meaning(x.templates, a.dialect) != _meaning(y.templates, b.dialect):
            changed.append("templates")
        if changed:
            out.append(f"server {name!r} fields {changed}")
    if a.extra != b.extra:
        out.append(f"extra keys {sorted(a.extra)} -> {sorted(b.extra)}")
    if a.dialect != b.dialect:
        out.append(f"dialect {a.dialect} -> {b.dialect}")
    return "; ".join(out)


def _meaning(value: Any, dialect: Any) -> Any:
    """A template as what it refers to: ``$A`` and ``${A}`` (Gemini) are the same reference,
    and a conversion there and back may change the one into the other."""
    if isinstance(value, str):
        return tuple((p.kind, p.name, p.default) if isinstance(p, Var) else p
                     for p in tokenize(value, dialect))
    if isinstance(value, Mapping):
        return {k: _meaning(v, dialect) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_meaning(v, dialect) for v in value)
    return value


def _same_servers(a: HostConfig, b: HostConfig) -> bool:
    if a.servers.keys() != b.servers.keys():
        return False
    for name, x in a.servers.items():
        y = b.servers[name]
        if replace(x, templates={}) != replace(y, templates={}) or \
                _meaning(x.templates, a.dialect) != _meaning(y.templates, b.dialect):
            return False
    return True


def check_config_round_trips(run: Run, config: HostConfig, other: str) -> None:
    own = config.dialect
    for target in DIALECTS:
        text, warnings = run.dump(config, target, "dump")
        if target == "codex" and tomllib is None:
            continue
        again = run.reparse(text, target, f"{own} -> {target} parsed back")
        assert again is not None or warnings, (
            f"{own} -> {target}: a dump without warnings does not parse back")
        if target == own and not warnings and again is not None:
            assert again == config and again.servers == config.servers, (
                f"{own} round trip changed the config: {_differences(config, again)}"[:400])
            text2, _ = run.dump(again, own, "second dump")
            assert text2 == text, f"{own}: dumping the parsed dump gives another text"
        if target == other and target != own and not warnings and again is not None \
                and not (own == "codex" and tomllib is None):
            back_text, back_warnings = run.dump(again, own, "conversion back")
            if not back_warnings:
                back = run.reparse(back_text, own, f"{own} -> {target} -> {own}")
                assert back is not None, f"{own} -> {target} -> {own} does not parse back"
                assert _same_servers(back, config), (
                    f"{own} -> {target} -> {own} changed the servers: "
                    f"{_differences(config, back)}"[:400])


def _other_checks(run: Run, source: Any, dialect: str | None) -> None:
    try:
        paths = env_file_paths(source, dialect=dialect, path=run.path, env=ENV,
                               inputs=INPUTS, workspace=run.kwargs["workspace"])
    except Exception as exc:
        escaped("env_file_paths", exc)
    assert type(paths) is tuple and all(type(p) is str for p in paths)
    if isinstance(source, Mapping):
        try:
            found = detect_dialect(source, path=run.path, warnings=[])
        except Exception as exc:
            escaped("detect_dialect", exc)
        assert found in DIALECTS


def check_source(run: Run, source: Any, dialects: list[str | None], other: str) -> None:
    for dialect in dict.fromkeys(dialects):
        _other_checks(run, source, dialect)
        config = run.parse(source, dialect, f"parse (dialect={dialect})", path=run.path)
        if config is not None:
            check_config_round_trips(run, config, other)


def check(data: bytes) -> None:
    if data[:1] in (b"{", b"/", b" ", b"\n", b"\t", b"\r", b"\xef"):
        last = data[-1]
        run = Run(path=PATHS[last % len(PATHS)], workspace="/w", on_missing="error",
                  literal_secrets=False, variable_secrets=SECRET_VAR.encode() not in data,
                  repr_secrets=False)
        check_source(run, data, [None, DIALECTS[last % len(DIALECTS)]],
                     DIALECTS[(last // 16) % len(DIALECTS)])
        return
    ch = Choices(data[1:])
    mapping = ch.below(3) == 0
    dialect = None if ch.chance(2) else ch.pick(DIALECTS)
    other = ch.pick(DIALECTS)
    root = draw_config(ch, mapping and dialect == "codex", dialect)
    run = Run(path=ch.pick(PATHS), workspace=ch.pick((None, "/w", "/w")),
              on_missing=ch.pick(("error", "error", "keep", "empty")),
              literal_secrets=True, variable_secrets=True, repr_secrets=True)
    source: Any = root
    if not mapping:
        try:
            text = json.dumps(root, ensure_ascii=ch.chance(2), indent=ch.pick((None, 2)))
        except (TypeError, ValueError):
            text = "{}"
        if ch.chance(6):  # JSONC: a comment and a trailing comma (vscode, zed, gemini only)
            text = "// c\n" + text[:-1] + ",}" if text.endswith("}") else text
        source = text.encode("utf-8", "surrogatepass") if ch.chance(2) else text
    check_source(run, source, [dialect], other)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
