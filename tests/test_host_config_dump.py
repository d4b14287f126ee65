"""Writing configs back: round trips in every dialect, conversions and their warnings, TOML.

The property of issue 10 part 1: ``parse_config(dump_config(c), dialect=c.dialect, env=E,
inputs=I) == c``; and A -> B -> A keeps the servers where B can say everything
(host-notes 3.2: one model for every dialect).
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st
from test_host_config import ENV, SENTINEL, read

from mcp_proto.host._restart import RestartPolicy
from mcp_proto.host._spec import DIALECTS, Dialect, HostConfig, ServerSpec
from mcp_proto.host.config._dump import dump_config, dump_config_with_warnings
from mcp_proto.host.config._parse import parse_config
from mcp_proto.host.config._toml import dumps_toml

CONFIGS = Path(__file__).parent / "host_configs"
INPUTS = {"perplexity-key": "pplx-1", "tok": "input-value"}


def reparse(text: str, dialect: str, **kwargs: Any) -> HostConfig:
    """Parse dumped text the way the binding would (TOML for Codex)."""
    source: Any = tomllib.loads(text) if dialect == "codex" else text
    return parse_config(source, dialect=dialect, **kwargs)


# -- the fixture files round-trip ---------------------------------------------------------------

FIXTURES: list[tuple[str, dict[str, Any]]] = [
    ("claude-desktop/claude_desktop_config.json", {}),
    ("claude-code/.mcp.json", {}),
    ("claude-code/.claude.json", {}),
    ("cursor/.cursor/mcp.json", {"workspace": "/w", "env_files": {"/w/.env": "A=1\n"}}),
    ("vscode/.vscode/mcp.json", {"workspace": "/w", "env_files": {"/w/.env": "A=1\n"}}),
    ("windsurf/.codeium/windsurf/mcp_config.json", {}),
    ("zed/.config/zed/settings.json", {}),
    ("gemini/.gemini/settings.json", {}),
    ("codex/.codex/config.toml", {}),
    ("adk/.kiro/settings/mcp.json", {}),
    ("rpi/mcp.json", {"dialect": "rpi"}),
    ("generic/mcp.json", {}),
]


@pytest.mark.parametrize(("relative", "kwargs"), FIXTURES, ids=[f for f, _ in FIXTURES])
def test_every_fixture_round_trips(relative: str, kwargs: dict[str, Any]) -> None:
    text = read(relative)
    source: Any = tomllib.loads(text) if relative.endswith(".toml") else text
    c = parse_config(source, path=str(CONFIGS / relative), env=ENV, inputs=INPUTS, **kwargs)
    kwargs.pop("dialect", None)
    out, warnings = dump_config_with_warnings(c)
    assert warnings == ()
    again = reparse(out, c.dialect, env=ENV, inputs=INPUTS, **kwargs)
    assert again == c
    assert again.servers == c.servers  # raw and templates included
    assert dump_config(again) == out


def test_dump_writes_templates_never_expanded_values() -> None:
    """Issue 10 part 1: the original ``${VAR}`` / ``${input:ID}`` text, never a secret; in
    every target dialect, converted or not."""
    s = SENTINEL
    env = {"SECRET": s, "HOME": "/home/u"}
    sources: list[tuple[str, dict[str, Any]]] = [
        ("claude-code", {"mcpServers": {
            "a": {"command": "run", "args": ["--key=${SECRET}"], "env": {"K": "${SECRET}"}},
            "b": {"type": "http", "url": "https://a.example/${SECRET}",
                  "headers": {"Authorization": "Bearer ${SECRET}", "X": "${SECRET}"}}}}),
        ("vscode", {"servers": {"a": {"type": "stdio", "command": "run",
                                      "env": {"K": "${input:tok}", "L": "${env:SECRET}"}}}}),
        ("gemini", {"mcpServers": {"a": {"command": "run", "env": {"K": "$SECRET"}}}}),
        ("codex", {"mcp_servers": {
            "a": {"command": "run", "env_vars": ["SECRET"]},
            "b": {"url": "https://a.example/", "bearer_token_env_var": "SECRET",
                  "env_http_headers": {"X": "SECRET"}}}}),
        ("cursor", {"mcpServers": {"a": {"command": "run", "envFile": "/e"}}}),
    ]
    for dialect, source in sources:
        c = parse_config(source, dialect=dialect, env=env, inputs={"tok": s},
                         env_files={"/e": f"FILE_SECRET={s}\n"})
        assert any(s in repr(spec.env) + repr(spec.headers) for spec in c.servers.values())
        for target in DIALECTS:
            text, warnings = dump_config_with_warnings(c, target)
            assert s not in text, (dialect, target)
            assert all(s not in w for w in warnings), (dialect, target)


# -- hypothesis: generated specs in each dialect ------------------------------------------------

#: What each dialect can say, beyond a command with args and env (every dialect).
CAN: dict[str, set[str]] = {
    "claude-desktop": set(),
    "claude-code": {"http", "sse", "headers", "disabled"},
    "cursor": {"http", "sse", "headers"},
    "vscode": {"http", "sse", "headers", "cwd"},
    "windsurf": {"http", "headers", "cwd", "disabled", "exclude"},
    "zed": {"http", "headers", "disabled"},
    "gemini": {"http", "sse", "headers", "cwd", "timeout", "include", "exclude", "trust",
               "description"},
    "codex": {"http", "headers", "cwd", "disabled", "timeout", "startup", "include",
              "exclude", "required"},
    "adk": {"disabled", "approve", "restart"},
    "rpi": {"http", "headers", "cwd", "disabled", "timeout"},
    "generic": {"http", "sse", "headers", "cwd", "disabled", "timeout", "approve",
                "description"},
}

texts = st.text(st.characters(codec="utf-8", exclude_characters="$\x00"), max_size=12)
words = st.from_regex(r"[a-z][a-z0-9_.-]{0,8}", fullmatch=True)
env_names = st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True)
header_names = st.from_regex(r"X-[A-Za-z0-9-]{1,8}", fullmatch=True)
header_values = st.text(st.characters(codec="utf-8", exclude_characters="$\x00\r\n"),
                        max_size=12)
#: Whole milliseconds: every dialect's unit converts them exactly.
seconds = st.integers(1, 86_400_000).map(lambda ms: ms / 1000)


@st.composite
def specs(draw: st.DrawFn, dialect: str, name: str) -> ServerSpec:
    can = CAN[dialect]
    kw: dict[str, Any] = {"name": name}
    transport = draw(st.sampled_from(["stdio", *sorted(can & {"http", "sse"})]))
    kw["transport"] = transport
    if transport == "stdio":
        kw["command"] = (draw(words), *draw(st.lists(texts, max_size=3)))
        kw["env"] = draw(st.dictionaries(env_names, texts, max_size=3))
        if "cwd" in can:
            kw["cwd"] = draw(st.none() | words)
    else:
        kw["url"] = "https://" + draw(words) + ".example/" + draw(words)
        if "headers" in can:
            kw["headers"] = draw(st.dictionaries(header_names, header_values, max_size=3))
    if "disabled" in can:
        kw["enabled"] = draw(st.booleans())
    if "timeout" in can:
        kw["timeout"] = draw(st.none() | seconds)
    if "startup" in can:
        kw["startup_timeout"] = draw(st.none() | seconds)
    if "include" in can:
        kw["include_tools"] = draw(st.none() | st.lists(words, max_size=3, unique=True)
                                   .map(tuple))
    if "exclude" in can:
        kw["exclude_tools"] = tuple(draw(st.lists(words, max_size=3, unique=True)))
    if "approve" in can:
        kw["auto_approve"] = tuple(draw(st.lists(words, max_size=3, unique=True)))
    if "trust" in can:
        kw["auto_approve"] = draw(st.sampled_from([(), ("*",)]))
    if "required" in can:
        kw["required"] = draw(st.booleans())
    if "description" in can:
        kw["description"] = draw(st.none() | texts)
    if "restart" in can and draw(st.booleans()):
        initial = draw(st.integers(0, 5000))
        kw["restart"] = RestartPolicy(
            initial_delay=initial / 1000, max_delay=draw(st.integers(initial, 60000)) / 1000,
            multiplier=draw(st.sampled_from([1.0, 1.5, 2.0, 3.0])),
            max_attempts=draw(st.integers(1, 20)))
    return ServerSpec(**kw)


@st.composite
def configs(draw: st.DrawFn, dialect: str) -> HostConfig:
    names = draw(st.lists(words, min_size=1, max_size=3, unique=True))
    return HostConfig(dialect=dialect,  # type: ignore[arg-type]
                      servers={n: draw(specs(dialect, n)) for n in names})


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_generated_specs_round_trip(dialect: str, data: st.DataObject) -> None:
    """``parse_config(dump_config(c), dialect=c.dialect) == c`` for specs holding only what
    the dialect can say; and nothing to warn about."""
    c = data.draw(configs(dialect))
    text, warnings = dump_config_with_warnings(c)
    assert warnings == ()
    assert reparse(text, dialect) == c


#: Variable references per dialect, and the env / inputs / workspace they are read with.
REFS: dict[str, list[str]] = {
    "claude-code": ["${A}", "${B:-dflt}", "${UNSET:-d}", "${env:A}"],
    "generic": ["${A}", "${B:-dflt}"],
    "cursor": ["${env:A}", "${env:B}", "${userHome}", "${workspaceFolder}",
               "${workspaceFolderBasename}", "${/}", "${A}"],
    "vscode": ["${env:A}", "${input:tok}", "${workspaceFolder}", "${pathSeparator}"],
    "windsurf": ["${env:A}", "${env:B}"],
    "gemini": ["$A", "${B}", "${A}"],
}
VAR_ENV = {"A": "va", "B": "${C}", "C": "never", "HOME": "/home/u"}
PIECES = ["-", "/x", ".y", ":z-", "-lit"]


@st.composite
def templated_sources(draw: st.DrawFn, dialect: str) -> dict[str, Any]:
    value = st.lists(st.sampled_from(REFS[dialect]) | st.sampled_from(PIECES), min_size=1,
                     max_size=4).map("".join)
    stdio: dict[str, Any] = {"command": draw(value), "args": draw(st.lists(value, max_size=3)),
                             "env": draw(st.dictionaries(env_names, value, max_size=3))}
    http: dict[str, Any] = {"headers": draw(st.dictionaries(header_names, value, max_size=2))}
    url = "https://h.example/p" + draw(value)
    if dialect in ("claude-code", "vscode", "generic"):
        stdio["type"], http["type"] = "stdio", "http"
    http["serverUrl" if dialect == "windsurf" else "httpUrl" if dialect == "gemini"
         else "url"] = url
    root = "servers" if dialect == "vscode" else "mcpServers"
    return {root: {"s": stdio, "h": http}}


@pytest.mark.parametrize("dialect", sorted(REFS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_templates_round_trip(dialect: str, data: st.DataObject) -> None:
    """Values written with variables come back as the same templates, and the same values
    (single pass: ``B`` is ``${C}`` and stays so)."""
    source = data.draw(templated_sources(dialect))
    kw: dict[str, Any] = {"env": VAR_ENV, "inputs": INPUTS, "workspace": "/w/proj"}
    c = parse_config(source, dialect=dialect, **kw)
    text, warnings = dump_config_with_warnings(c)
    assert warnings == ()
    assert reparse(text, dialect, **kw) == c


@st.composite
def codex_sources(draw: st.DrawFn) -> dict[str, Any]:
    names = st.lists(st.sampled_from(["A", "B", "C"]), max_size=3, unique=True)
    stdio = {"command": "run", "env_vars": draw(names),
             "env": {"LIT": draw(texts)}}
    http: dict[str, Any] = {"url": "https://h.example/"}
    if draw(st.booleans()):
        http["bearer_token_env_var"] = draw(st.sampled_from(["A", "B"]))
    http["env_http_headers"] = {h: v for h, v in zip(("X-A", "X-B"), draw(names), strict=False)}
    return {"mcp_servers": {"s": stdio, "h": http}}


@settings(max_examples=25, deadline=None)
@given(source=codex_sources())
def test_codex_env_var_keys_round_trip(source: dict[str, Any]) -> None:
    c = parse_config(source, env=VAR_ENV)
    text, warnings = dump_config_with_warnings(c)
    assert warnings == ()
    assert reparse(text, "codex", env=VAR_ENV) == c


COMMON = list(DIALECTS)
URL_DIALECTS = [d for d in DIALECTS if d not in ("claude-desktop", "adk")]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), a=st.sampled_from(COMMON), b=st.sampled_from(COMMON))
def test_conversion_there_and_back(data: st.DataObject, a: Dialect, b: Dialect) -> None:
    """A -> B -> A keeps the servers where B can say everything: a command with args and
    env everywhere; a URL with headers where both have URL servers."""
    remote = a in URL_DIALECTS and b in URL_DIALECTS
    spec = ServerSpec(name="s", command=(data.draw(words), *data.draw(st.lists(texts,
                                                                               max_size=2))),
                      env=data.draw(st.dictionaries(env_names, texts, max_size=2)))
    servers = {"s": spec}
    if remote:
        servers["r"] = ServerSpec(name="r", transport="http",
                                  url="https://" + data.draw(words) + ".example/",
                                  headers=data.draw(st.dictionaries(header_names, header_values,
                                                                    max_size=2)))
    c = HostConfig(servers=servers, dialect=a)
    text_b, warnings = dump_config_with_warnings(c, b)
    assert warnings == ()
    in_b = reparse(text_b, b)
    back = reparse(dump_config(in_b, a), a)
    assert back.servers == c.servers


# -- conversions and their warnings --------------------------------------------------------------

def test_variable_syntax_is_translated_both_ways() -> None:
    """``${VAR}`` <-> ``${env:VAR}``; Codex ``env_vars`` / bearer / env headers <-> ``${VAR}``."""
    source = {"mcpServers": {
        "s": {"command": "run", "args": ["${A}"], "env": {"TOKEN": "${TOKEN}", "K": "x${A}"}},
        "r": {"type": "http", "url": "https://a.example/",
              "headers": {"Authorization": "Bearer ${TOKEN}", "X-Id": "${A}"}}}}
    env = {"A": "a", "TOKEN": "t"}
    c = parse_config(source, dialect="claude-code", env=env)
    cursor = json.loads(dump_config(c, "cursor"))["mcpServers"]
    assert cursor["s"]["env"] == {"TOKEN": "${env:TOKEN}", "K": "x${env:A}"}
    assert cursor["r"]["headers"] == {"Authorization": "Bearer ${env:TOKEN}", "X-Id": "${env:A}"}
    back = parse_config(dump_config(parse_config(json.dumps({"mcpServers": cursor}),
                                                 dialect="cursor", env=env), "claude-code"),
                        dialect="claude-code", env=env)
    assert back.servers == c.servers
    text, warnings = dump_config_with_warnings(c, "codex")
    codex = tomllib.loads(text)["mcp_servers"]
    assert codex["s"] == {"command": "run", "args": ["${A}"], "env": {"K": "x${A}"},
                          "env_vars": ["TOKEN"]}
    assert codex["r"] == {"url": "https://a.example/", "bearer_token_env_var": "TOKEN",
                          "env_http_headers": {"X-Id": "A"}}
    assert warnings == (
        "s.command[1]: codex cannot say variable A: written as the literal text ${A}",
        "s.env.K: codex cannot say variable A: written as the literal text ${A}")
    from_codex = parse_config(codex_source(text), env=env)
    assert dump_config(from_codex, "claude-code").count("${TOKEN}") == 2


def codex_source(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def test_conversion_warnings() -> None:
    """What the target cannot say is a warning naming server and field (issue 10 part 1)."""
    c = parse_config({"servers": {
        "sse": {"type": "sse", "url": "https://a.example/sse"},
        "inp": {"type": "stdio", "command": "x", "env": {"K": "${input:key}"},
                "envFile": "/e", "cwd": "/w"},
    }, "inputs": []}, inputs={"key": "v"}, env_files={"/e": "A=1\n"})
    _, warnings = dump_config_with_warnings(c, "zed")
    assert warnings == (
        "sse.url: zed cannot say SSE: written as a Streamable HTTP URL",
        "inp.envFile: zed has no envFile: it and the 1 variables it supplied are not written",
        "inp.env.K: zed cannot say input 'key': written as the literal text ${input:key}",
        "inp.cwd: zed has no key for it: not written",
        "root keys of the vscode config are not written to zed: inputs",
    )
    g = parse_config({"mcpServers": {"s": {"command": "x", "timeout": 9000,
                                           "includeTools": ["a"], "trust": True}}},
                     dialect="gemini")
    _, warnings = dump_config_with_warnings(g, "cursor")
    assert warnings == ("s.timeout: cursor has no key for it: not written",
                        "s.include_tools: cursor has no key for it: not written",
                        "s.auto_approve: cursor has no key for it: not written")
    adk = parse_config({"mcpServers": {"a": {"command": "x", "autoApprove": ["t"]}}},
                       dialect="adk")
    assert dump_config_with_warnings(adk, "gemini")[1] == (
        "a.auto_approve: gemini trusts a whole server or none: the tool list is not written",)
    r = HostConfig(dialect="claude-code", servers={"r": ServerSpec(
        name="r", transport="http", url="https://a.example/", enabled=False)})
    text, warnings = dump_config_with_warnings(r, "adk")
    assert json.loads(text) == {"mcpServers": {}}
    assert warnings == ("r: an http server, and adk has only stdio servers: left out",)
    off = HostConfig(dialect="claude-code", servers={"s": ServerSpec(name="s", command=("x",),
                                                                    enabled=False)})
    assert dump_config_with_warnings(off, "gemini")[1] == (
        "s.enabled: gemini has no per-server switch: add the server to mcp.excluded to "
        "disable it",)


def test_defaults_the_target_cannot_say_are_dropped_with_a_warning() -> None:
    c = parse_config({"mcpServers": {"s": {"command": "x", "args": ["${A:-d}"]}}},
                     dialect="claude-code")
    assert dump_config_with_warnings(c, "cursor") == (
        '{\n  "mcpServers": {\n    "s": {\n      "command": "x",\n      "args": [\n'
        '        "${env:A}"\n      ]\n    }\n  }\n}\n',
        ("s.command[1]: the default of variable A is dropped",))


def test_raw_keys_kept_and_foreign_ones_dropped() -> None:
    """Unknown keys round-trip; a key the target gives another meaning is dropped on
    conversion (Gemini's ``oauth`` is not Codex's)."""
    g = parse_config({"mcpServers": {"s": {"httpUrl": "https://a.example/",
                                           "oauth": {"enabled": True}, "icon": "i.png"}}},
                     dialect="gemini")
    text, warnings = dump_config_with_warnings(g, "codex")
    assert tomllib.loads(text)["mcp_servers"]["s"] == {"url": "https://a.example/",
                                                       "icon": "i.png"}
    assert warnings == ("s.oauth: means something else in codex: not written",)
    assert json.loads(dump_config(g))["mcpServers"]["s"]["oauth"] == {"enabled": True}


def test_zed_extension_entries_are_written_back_unchanged() -> None:
    c = parse_config(read("zed/.config/zed/settings.json"), dialect="zed")
    out = json.loads(dump_config(c))
    assert out["context_servers"]["mcp-server-context7"] == {
        "source": "extension", "enabled": True, "settings": {"context7_api_key": ""}}
    assert out["theme"] == "One Dark"
    _, warnings = dump_config_with_warnings(c, "cursor")
    assert "mcp-server-context7: a Zed extension server: left out" in warnings


def test_timeouts_units_on_dump() -> None:
    """Gemini ms, Codex s, generic bare: seconds up to 600, else ms (host-notes 3.2)."""
    def entry(dialect: str, timeout: float) -> Any:
        c = HostConfig(dialect=dialect, servers={"s": ServerSpec(  # type: ignore[arg-type]
            name="s", command=("x",), timeout=timeout)})
        text = dump_config(c)
        doc = tomllib.loads(text) if dialect == "codex" else json.loads(text)
        return doc["mcp_servers" if dialect == "codex" else "mcpServers"]["s"]
    assert entry("gemini", 1.5)["timeout"] == 1500
    assert entry("codex", 60.0)["tool_timeout_sec"] == 60
    assert entry("generic", 600.0)["timeout"] == 600
    assert entry("generic", 900.0)["timeout"] == 900000
    assert entry("rpi", 2.25)["timeout"] == 2.25


def test_dump_rejects_an_unknown_dialect() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        dump_config(HostConfig(), "toml")


def test_json_output_shape() -> None:
    text = dump_config(HostConfig(dialect="cursor", servers={
        "s": ServerSpec(name="s", command=("é",))}))
    assert text == '{\n  "mcpServers": {\n    "s": {\n      "command": "é",\n' \
                   '      "args": []\n    }\n  }\n}\n'


def test_codex_extra_with_dates_and_nulls_converts() -> None:
    """TOML dates become ISO text in JSON; JSON nulls are dropped from TOML with a warning."""
    codex = parse_config({"when": datetime.date(2026, 1, 2), "mcp_servers": {}})
    assert json.loads(dump_config(codex, "generic")) == {"mcpServers": {}}
    same = HostConfig(dialect="codex", extra={"when": datetime.date(2026, 1, 2)})
    assert dump_config(same) == "when = 2026-01-02\n\n[mcp_servers]\n"
    j = parse_config({"mcpServers": {"s": {"command": "x", "note": None}}}, dialect="generic")
    text, warnings = dump_config_with_warnings(j, "codex")
    assert tomllib.loads(text) == {"mcp_servers": {"s": {"command": "x", "args": []}}}
    assert warnings == ("mcp_servers.s.note: TOML has no null: not written",)


# -- the TOML writer -----------------------------------------------------------------------------

toml_keys = st.text(max_size=8)
toml_scalars = (st.text() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1)
                | st.floats(allow_nan=False) | st.dates()
                | st.datetimes(timezones=st.just(datetime.timezone.utc)))
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(toml_keys, inner, max_size=3),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(toml_keys, toml_values, max_size=5))
def test_toml_writer_round_trips_through_tomllib(document: dict[str, Any]) -> None:
    assert tomllib.loads(dumps_toml(document)) == document


def test_toml_writer_escapes_and_specials() -> None:
    doc = {"a b": 'q"\\\n\t\x01\x7f', "inf": math.inf, "neg": -math.inf, "t": {"u": {}},
           "arr": [{"x": 1}, [2, "s"]]}
    text = dumps_toml(doc)
    assert text == ('"a b" = "q\\"\\\\\\n\\t\\u0001\\u007F"\ninf = inf\nneg = -inf\n'
                    'arr = [{x = 1}, [2, "s"]]\n\n[t.u]\n')
    assert tomllib.loads(text) == doc
    assert math.isnan(tomllib.loads(dumps_toml({"n": math.nan}))["n"])
    for bad in ({"n": None}, {"i": 2 ** 64}, {1: "x"}, {"o": object()}):
        with pytest.raises(ValueError):
            dumps_toml(bad)  # type: ignore[arg-type]
    assert dumps_toml({}) == ""
