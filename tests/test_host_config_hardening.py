"""Config parsing and dumping under hostile input: found by fuzzing, each bug pinned here.

The contract: ``parse_config`` returns a :class:`HostConfig` or raises :class:`ConfigError`
(nothing else, whatever the text or mapping); ``dump_config`` of what parsed never raises,
its text is UTF-8 JSON or TOML, and it parses back to an equal config in the same dialect
unless a warning names what the dialect or its format cannot say.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import time
import types
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp_proto_io.__main__ import main

from mcp_proto.host._spec import DIALECTS, ConfigError, HostConfig, ServerSpec, redact_url
from mcp_proto.host.config._dump import dump_config, dump_config_with_warnings
from mcp_proto.host.config._expand import dotenv_entries
from mcp_proto.host.config._parse import (
    KEY_TABLES,
    MAX_LISTED_FAULTS,
    ROOT_KEYS,
    env_file_paths,
    parse_config,
)
from mcp_proto.host.config._toml import dumps_toml, scalar_problem

BIG = 10 ** 400  # beyond a float's range: float(BIG) raises OverflowError
URL_KEYS: dict[str, str] = {d: k for d in DIALECTS for k, kind in KEY_TABLES[d]
                            if kind == "url_http"}


def reparse(text: str, dialect: str, **kwargs: Any) -> HostConfig:
    """Parse dumped text the way the binding would (TOML for Codex)."""
    source: Any = tomllib.loads(text) if dialect == "codex" else text
    return parse_config(source, dialect=dialect, **kwargs)


def problems_of(source: Any, **kwargs: Any) -> list[tuple[str | None, str | None, str]]:
    with pytest.raises(ConfigError) as info:
        parse_config(source, **kwargs)
    return [(p.server, p.field, p.message) for p in info.value.problems]


def entry_source(dialect: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {ROOT_KEYS[dialect]: {"s": entry}}  # type: ignore[index]


# -- bug 1: a value used as a set member or key before its type was checked --------------------

def test_exposure_of_another_type_is_a_problem() -> None:
    """``exposure: []`` raised ``TypeError: unhashable type: 'list'``."""
    odd: list[Any] = [[], {}, [["x"]], None, 1, True]
    for value in odd:
        assert problems_of('{"mcpServers":{"a":{"command":"x","exposure":'
                           + json.dumps(value) + "}}}") == [
            ("a", "exposure", "must be one of codemode, deferred, direct, hidden")]


#: A value of every JSON shape, the unhashable ones first, and the numbers that overflow.
ODD_VALUES: list[Any] = [[], {}, [[]], [{}], {"a": []}, {"a": {}}, None, True, False, 0, -1,
                         1.5, BIG, -BIG, 2 ** 63, "", " ", "x", "${", "$"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_key_takes_every_kind_of_value(dialect: str) -> None:
    """No handler of any dialect's table trusts a value's type: every key, given every
    kind of JSON value, gives a config or a ConfigError (never TypeError, OverflowError)."""
    for key, _ in KEY_TABLES[dialect]:  # type: ignore[index]
        for value in ODD_VALUES:
            for base in ({"command": "x"}, {URL_KEYS.get(dialect, "url"): "https://h.example/"},
                         {}):
                entry = {**base, key: value}
                try:
                    parse_config(entry_source(dialect, entry), dialect=dialect)
                except ConfigError:
                    pass


# -- bug 2: numbers beyond a float ----------------------------------------------------------------

def test_huge_integer_in_env_or_headers_is_its_decimal_text() -> None:
    """``math.isfinite(10**400)`` raised OverflowError in ``_string_map``; an integer is
    finite, so it is taken as its decimal text like any other number."""
    text = '{"mcpServers":{"a":{"command":"x","env":{"K": 1' + "0" * 400 + "}}}}"
    c = parse_config(text)
    assert c.servers["a"].env == {"K": str(BIG)}
    assert c.warnings == ("a.env.K: is a number: taken as its decimal text",)
    r = parse_config({"mcpServers": {"r": {"url": "https://h.example/",
                                           "headers": {"X-N": -BIG}}}})
    assert r.servers["r"].headers == {"X-N": str(-BIG)}


def test_huge_numbers_are_problems_never_overflow_errors() -> None:
    assert problems_of(entry_source("rpi", {"command": "x", "timeout": BIG}), dialect="rpi") \
        == [("s", "timeout", "is more than 86400 seconds: check the unit (seconds)")]
    assert problems_of(entry_source("gemini", {"command": "x", "timeout": -BIG}),
                       dialect="gemini") == [
        ("s", "timeout", "must be a positive, finite number of milliseconds")]
    assert problems_of(entry_source("adk", {"command": "x", "restartPolicy": {
        "initialDelayMs": BIG, "maxDelayMs": 86_400_001, "backoffMultiplier": BIG}}),
        dialect="adk") == [
        ("s", "restartPolicy.initialDelayMs", "is more than 86400 seconds: check the unit "
                                              "(milliseconds)"),
        ("s", "restartPolicy.maxDelayMs", "is more than 86400 seconds: check the unit "
                                          "(milliseconds)"),
        ("s", "restartPolicy.backoffMultiplier", "must be a finite number")]
    # any whole number of attempts is fine: a huge one never gives up
    c = parse_config(entry_source("adk", {"command": "x", "restartPolicy": {
        "maxRestartAttempts": BIG}}), dialect="adk")
    restart = c.servers["s"].restart
    assert restart is not None and restart.max_attempts == BIG
    assert parse_config(dump_config(c), dialect="adk") == c


def test_a_mapping_with_infinities_and_nan() -> None:
    """A mapping passed in may hold what JSON text cannot (TOML's inf and nan)."""
    assert problems_of(entry_source("adk", {"command": "x", "restartPolicy": {
        "initialDelayMs": math.nan, "backoffMultiplier": math.inf}}), dialect="adk") == [
        ("s", "restartPolicy.initialDelayMs", "must be a finite number"),
        ("s", "restartPolicy.backoffMultiplier", "must be a finite number")]
    assert problems_of(entry_source("generic", {"command": "x", "env": {"K": math.nan}})) == [
        ("s", "env.K", "must be a string; this number has no decimal text to take")]


def test_an_integer_longer_than_python_reads_is_invalid_json() -> None:
    """``json.loads`` raises a plain ValueError (not JSONDecodeError) past 4300 digits."""
    text = '{"mcpServers": {}, "n": 1' + "0" * 5000 + "}"
    for dialect in (None, "vscode"):
        assert problems_of(text, dialect=dialect) == [
            (None, None, "not valid JSON: an integer has more digits than Python reads")]


# -- bug 3: what TOML cannot say is a warning, the rest is written ------------------------------

def test_toml_cannot_say_an_integer_beyond_64_bits() -> None:
    c = parse_config('{"mcpServers":{"a":{"command":"x","settings":9223372036854775808}}}',
                     dialect="cursor")
    text, warnings = dump_config_with_warnings(c, "codex")
    assert tomllib.loads(text) == {"mcp_servers": {"a": {"command": "x", "args": []}}}
    assert warnings == ("mcp_servers.a.settings: a TOML integer is 64-bit: not written",)
    assert dump_config(c, "codex") == text
    # the same in the root keys, lists and tables, and at the edges of the range
    same = parse_config({"mcp_servers": {}, "n": [2 ** 63 - 1, -(2 ** 63), -(2 ** 63) - 1],
                         "t": {"big": BIG}})
    text, warnings = dump_config_with_warnings(same)
    assert tomllib.loads(text) == {"mcp_servers": {}, "n": [2 ** 63 - 1, -(2 ** 63)],
                                   "t": {}}
    assert warnings == ("n[2]: a TOML integer is 64-bit: not written",
                        "t.big: a TOML integer is 64-bit: not written")


def test_config_convert_to_codex_warns_and_writes_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers":{"a":{"command":"x","settings":9223372036854775808}}}')
    out = io.StringIO()
    assert main(["config", "convert", str(path), "--to", "codex"], out=out) == 0
    assert tomllib.loads(out.getvalue()) == {"mcp_servers": {"a": {"command": "x",
                                                                   "args": []}}}
    assert "warning: mcp_servers.a.settings: a TOML integer is 64-bit: not written" \
        in capsys.readouterr().err
    target = tmp_path / "config.toml"
    assert main(["config", "convert", str(path), "--to", "codex", "-o", str(target)],
                out=io.StringIO()) == 0
    assert target.read_text() == out.getvalue()


def test_toml_writer_names_what_it_cannot_hold() -> None:
    import datetime  # noqa: PLC0415

    utc = datetime.timezone.utc
    for value, why in ((None, "TOML has no null"), (2 ** 63, "a TOML integer is 64-bit"),
                       ("a\ud800", "TOML text cannot hold a surrogate code point"),
                       (datetime.time(1, tzinfo=utc), "a TOML time of day has no UTC offset"),
                       ({1, 2}, "set has no TOML form")):
        assert scalar_problem(value) == why
        with pytest.raises(ValueError, match=why):
            dumps_toml({"k": value})
    with pytest.raises(ValueError, match="surrogate"):
        dumps_toml({"\udc80": 1})
    fine_values: list[Any] = ["x", 2 ** 63 - 1, 1.5, math.inf, True, datetime.time(1),
                              datetime.datetime(2026, 1, 2, tzinfo=utc), [], {}]
    for fine in fine_values:
        assert scalar_problem(fine) is None


# -- bug 4a: args beside a URL ---------------------------------------------------------------------

STRAY_ARGS: list[Any] = [["--x"], ["${MISSING}", "x\x00"], [1], 5, {"a": True}]


@pytest.mark.parametrize("dialect", sorted(URL_KEYS))
def test_a_url_server_ignores_args_and_keeps_them_as_written(dialect: str) -> None:
    """The args landed in ``command`` of an http spec and the dump dropped them; then the
    whole file was refused for them.  Other hosts ignore args beside a URL (no dialect
    has them, host-notes 3.1): ignored with a warning, kept in ``raw`` as written (even
    junk, a missing variable or a NUL: nothing uses them), written back to the same
    dialect and dropped with a warning on conversion."""
    key = URL_KEYS[dialect]
    for args in STRAY_ARGS:
        source = entry_source(dialect, {key: "https://h.example/", "args": args})
        c = parse_config(source, dialect=dialect)
        assert c.warnings == ("s.args: a URL server ignores args: kept as written",)
        spec = c.servers["s"]
        assert spec.transport != "stdio" and spec.command == () and spec.raw == {"args": args}
        text, warnings = dump_config_with_warnings(c, dialect)
        assert warnings == ()
        assert reparse(text, dialect) == c and reparse(text, dialect).servers == c.servers
        other = "cursor" if dialect != "cursor" else "vscode"
        text, warnings = dump_config_with_warnings(c, other)
        assert warnings == ("s.args: a URL server ignores args: not written to " + other,)
        assert "args" not in json.loads(text)["mcpServers" if other == "cursor"
                                              else "servers"]["s"]
    # an empty list says nothing: accepted, not kept, and the config round-trips
    c = parse_config(entry_source(dialect, {key: "https://h.example/", "args": []}),
                     dialect=dialect)
    assert c.servers["s"].command == () and c.servers["s"].raw == {} and not c.warnings
    assert reparse(dump_config(c), dialect) == c


def test_args_of_a_url_server_keep_every_other_problem() -> None:
    """Only what reading the ignored args found is dropped: the entry's other problems
    stay, and a command beside a URL is still one."""
    assert problems_of({"mcpServers": {"s": {"url": "https://h.example/", "args": [1],
                                             "env": {"K": []}}}}) == [
        ("s", "env.K", "must be a string, not a list")]
    assert [p[:2] for p in problems_of({"mcpServers": {"s": {
        "url": "https://h.example/", "command": "x", "args": ["a"]}}})] == [("s", "command")]


def test_a_url_spec_built_with_a_command_dumps_with_a_warning() -> None:
    spec = ServerSpec(name="r", transport="http", url="https://h.example/", command=("x",))
    for dialect in URL_KEYS:
        config = HostConfig(dialect=dialect, servers={"r": spec})  # type: ignore[arg-type]
        text, warnings = dump_config_with_warnings(config)
        assert warnings == ("r.command: a URL server runs no command: not written",)
        assert reparse(text, dialect).servers["r"].command == ()


def test_a_gemini_sse_url_ignores_args() -> None:
    c = parse_config({"mcpServers": {"s": {"url": "https://h.example/sse", "args": ["a"]}}},
                     dialect="gemini")
    assert c.servers["s"].transport == "sse" and c.servers["s"].raw == {"args": ["a"]}
    assert c.warnings == ("s.args: a URL server ignores args: kept as written",)
    assert parse_config(dump_config(c), dialect="gemini") == c


# -- bug 4b: milliseconds that read back exactly ---------------------------------------------------

@pytest.mark.parametrize("millis", [1e-7, 0.3, 1000.0005, 1e-300, 1e-320, 86_399_999.999])
def test_millisecond_values_round_trip_exactly(millis: float) -> None:
    """A Gemini ``timeout`` of 1e-7 ms was written as 0 (a whole number "to float
    precision", absolute 1e-6), which does not parse; 1000.0005 ms became 1000.  The dump
    now writes the number that reads back as exactly the same seconds."""
    g = parse_config({"mcpServers": {"s": {"command": "x", "timeout": millis}}},
                     dialect="gemini")
    assert parse_config(dump_config(g), dialect="gemini") == g
    a = parse_config({"mcpServers": {"s": {"command": "x", "restartPolicy": {
        "initialDelayMs": millis, "maxDelayMs": millis}}}}, dialect="adk")
    assert parse_config(dump_config(a), dialect="adk") == a


def test_a_timeout_that_is_zero_seconds_as_a_float_is_a_problem() -> None:
    """5e-324 ms is positive, but 0.0 seconds: it was accepted as a zero timeout, and its
    dump (0) did not parse."""
    assert problems_of({"mcpServers": {"s": {"command": "x", "timeout": 5e-324}}},
                       dialect="gemini") == [
        ("s", "timeout", "must be a positive, finite number of milliseconds")]


def test_whole_milliseconds_stay_whole_numbers() -> None:
    g = parse_config({"mcpServers": {"s": {"command": "x", "timeout": 1500}}},
                     dialect="gemini")
    assert '"timeout": 1500\n' in dump_config(g)
    spec = ServerSpec(name="s", command=("x",), timeout=0.1 + 0.2)  # 0.30000000000000004
    text = dump_config(HostConfig(dialect="gemini", servers={"s": spec}))
    assert parse_config(text, dialect="gemini").servers["s"] == spec


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-300, max_value=86_400_000))
def test_every_gemini_timeout_round_trips(millis: float) -> None:
    g = parse_config({"mcpServers": {"s": {"command": "x", "timeout": millis}}},
                     dialect="gemini")
    assert parse_config(dump_config(g), dialect="gemini") == g


# -- bug 4c: lone surrogates -----------------------------------------------------------------------

SURROGATE_WHY = "holds a lone surrogate (\\uD800-\\uDFFF): not Unicode text, so no " \
                "process, server or model can be given it"


def test_a_lone_surrogate_is_refused_where_it_is_used() -> None:
    """A ``"\\ud800"`` escape is valid JSON grammar but no Unicode: a field the host passes
    to a process, a server or a model cannot hold it, so it is a problem there, naming the
    place (the key shown escaped, so the message can be printed)."""
    text = ('{"mcpServers": {"a\\ud800": {"command": "x"}, "b": {"command": "x", "args": '
            '["ok", "\\udc00"], "env": {"\\ud800K": "v", "V": "\\ud83d"}, "cwd": "/\\udfff", '
            '"description": "\\ud800", "autoApprove": ["t", "\\ud800"], '
            '"note": {"deep": ["\\udfff"]}}, "c": {"url": "https://h/\\ud800", '
            '"headers": {"H": "\\ud800"}}}, "other": "\\ud800"}')
    name_why = "this key holds a lone surrogate (\\uD800-\\uDFFF): not Unicode text, so " \
               "no tool name or message can carry it"
    assert problems_of(text) == [
        ("a\\ud800", None, name_why),
        ("b", "args[1]", f"the value {SURROGATE_WHY}"),
        ("b", "env.\\ud800K", f"this key {SURROGATE_WHY}"),
        ("b", "env.V", f"the value {SURROGATE_WHY}"),
        ("b", "cwd", f"the value {SURROGATE_WHY}"),
        ("b", "description", f"the value {SURROGATE_WHY}"),
        ("b", "autoApprove[1]", f"the value {SURROGATE_WHY}"),
        ("c", "url", f"the value {SURROGATE_WHY}"),
        ("c", "headers.H", f"the value {SURROGATE_WHY}")]
    for dialect in DIALECTS:  # every dialect, JSON text or bytes or a mapping
        root = ROOT_KEYS[dialect]
        for source in ('{"' + root + '": {"s": {"command": "\\ud800"}}}',
                       ('{"' + root + '": {"s": {"command": "\\ud800"}}}').encode(),
                       {root: {"s": {"command": "\udc80"}}}):
            with pytest.raises(ConfigError) as info:
                parse_config(source, dialect=dialect)
            assert [(p.server, p.field) for p in info.value.problems] == [("s", "command")]
            str(info.value).encode("utf-8")  # the message itself is printable
    codex = {"mcp_servers": {"s": {"url": "https://h/", "env_vars": ["\ud800"],
                                   "bearer_token_env_var": "\ud800",
                                   "env_http_headers": {"X": "\ud800"}}}}
    assert [p[:2] for p in problems_of(codex)] == [
        ("s", "env_vars[0]"), ("s", "bearer_token_env_var"), ("s", "env_http_headers.X")]


#: ``~/.claude.json`` as Claude Code writes it: Node's JSON.stringify cut a pair in a
#: history line and wrote the half as an escape.
CLAUDE_JSON = ('{"mcpServers":{"a":{"command":"x"}},'
               '"projects":{"/p":{"history":[{"display":"trunc \\ud83d"}]}}}')


def test_a_lone_surrogate_where_nothing_uses_it_is_kept() -> None:
    """It refused the whole ``~/.claude.json`` (the scan walked every root key, though only
    ``mcpServers`` is read; at the release before, the file parsed).  A surrogate in a raw
    key or a root key the parser does not use is kept, and the JSON dump writes it as the
    same escape: valid UTF-8 that reads back equal."""
    c = parse_config(CLAUDE_JSON, path="/home/u/.claude.json")
    assert c.extra == {"projects": {"/p": {"history": [{"display": "trunc \ud83d"}]}}}
    text, warnings = dump_config_with_warnings(c)
    assert warnings == () and '"display": "trunc \\ud83d"' in text
    text.encode("utf-8")
    assert parse_config(text, path="/home/u/.claude.json") == c
    assert dump_config(parse_config(text, path="/home/u/.claude.json")) == text
    # raw keys and values of an entry, a Zed or VS Code settings file (JSONC) alike
    zed = parse_config('{"context_servers": {"s": {"command": "x", "\\udc80k": '
                       '["\\ud800"]}}, "theme": {"name": "\\ud83d"}, // c\n}', dialect="zed")
    assert zed.servers["s"].raw == {"\udc80k": ["\ud800"]}
    again = parse_config(dump_config(zed), dialect="zed")
    assert again == zed and again.servers == zed.servers
    # TOML cannot say it: left out, with a warning, the rest written
    text, warnings = dump_config_with_warnings(zed, "codex")
    assert "s.\\udc80k: the key: TOML text cannot hold a surrogate code point: not " \
           "written" in " ".join(warnings)
    tomllib.loads(text)


def test_a_config_with_a_kept_surrogate_is_saved_and_loaded(tmp_path: Path) -> None:
    """The bindings' ``save_config`` writes the dump as UTF-8: it always encodes now."""
    from mcp_proto_io.host._config_files import load_config, save_config  # noqa: PLC0415

    path = tmp_path / ".claude.json"
    path.write_text(CLAUDE_JSON, encoding="utf-8")
    c = load_config(path, env={})
    assert save_config(c) == ()
    assert load_config(path, env={}) == c
    assert save_config(c, tmp_path / "config.toml", "codex") == (
        "root keys of the claude-code config are not written to codex: projects",)


def test_warnings_show_a_kept_surrogate_escaped() -> None:
    """A raw key named in a warning (an unknown restartPolicy key, a legacy Zed command
    key) is shown escaped: warnings are printed to UTF-8 streams."""
    adk = parse_config({"mcpServers": {"s": {"command": "x", "restartPolicy": {
        "\ud800": 1}}}}, dialect="adk")
    assert adk.warnings == ("s.restartPolicy.\\ud800: is not a restartPolicy key: dropped",)
    zed = parse_config({"context_servers": {"s": {"command": {"path": "x", "\ud800": 1}}}})
    assert zed.warnings == ("s.command: unknown keys \\ud800 of the legacy command are "
                            "dropped",)


def test_env_file_paths_skip_a_path_with_a_surrogate() -> None:
    """Opening it would raise UnicodeEncodeError in the binding; parse_config names it."""
    source = {"servers": {"s": {"command": "x", "envFile": "/e\ud800"},
                          "t": {"command": "x", "envFile": "/ok"}}}
    assert env_file_paths(source, dialect="vscode") == ("/ok",)
    assert [p[:2] for p in problems_of(source, dialect="vscode",
                                       env_files={"/ok": ""})] == [("s", "envFile")]


def test_an_oauth_value_with_a_surrogate_is_not_used() -> None:
    from mcp_proto.host import oauth_settings  # noqa: PLC0415

    c = parse_config({"mcpServers": {"s": {"url": "https://h/", "oauth": {
        "clientId": "id\ud800", "scopes": ["a", "\udc00"], "issuer": "https://i/"}}}},
        dialect="gemini")
    settings_ = oauth_settings(c.servers["s"])
    assert settings_ is not None
    assert (settings_.client_id, settings_.scope, settings_.issuer) == (None, None, "https://i/")


def test_an_escaped_surrogate_pair_is_one_character_and_fine() -> None:
    c = parse_config('{"mcpServers": {"s": {"command": "x", "args": ["\\ud83d\\ude00"]}}}')
    assert c.servers["s"].command == ("x", "\U0001f600")
    for dialect in DIALECTS:
        text = dump_config(c, dialect)
        text.encode("utf-8")
        assert reparse(text, dialect).servers["s"].command == c.servers["s"].command


def test_many_foreign_values_are_counted_after_a_few() -> None:
    source = {"mcpServers": {}, "x": [{1}] * (MAX_LISTED_FAULTS + 5)}
    problems = problems_of(source)
    assert len(problems) == MAX_LISTED_FAULTS + 1
    assert problems[-1] == (None, None, "5 more keys or values are no config data")
    # surrogates are none of those
    assert parse_config({"mcpServers": {}, "x": ["\ud800"] * 50}).extra == {
        "x": ["\ud800"] * 50}


def test_a_config_built_in_code_with_surrogates_dumps_with_warnings() -> None:
    """A config built in code may hold them where ``parse_config`` refuses them: the dump
    is still valid UTF-8, with printable warnings.  JSON writes each as its escape (a
    warning names the field parse_config would refuse); TOML leaves such strings out; a
    pair as two code points (JSON would read its escapes back as one character) is left
    out of JSON."""
    c = HostConfig(dialect="generic", servers={"s\udc80": ServerSpec(
        name="s\udc80", command=("x", "\ud800"), raw={"note": "a\ud800", "\udfff": 1,
                                                      "pair": "\ud83d\ude00"})})
    text, warnings = dump_config_with_warnings(c)
    text.encode("utf-8")
    assert warnings == (
        "s\\udc80.name: holds a lone surrogate: written as its \\u escape, which parse_config "
        "refuses there",
        "s\\udc80.command: holds a lone surrogate: written as its \\u escape, which "
        "parse_config refuses there",
        "mcpServers.s\\udc80.pair: a surrogate pair as two code points reads back as one "
        "character: not written")
    assert json.loads(text)["mcpServers"]["s\udc80"] == {
        "command": "x", "args": ["\ud800"], "note": "a\ud800", "\udfff": 1}
    text, warnings = dump_config_with_warnings(c, "codex")
    text.encode("utf-8")
    assert len(warnings) == 1 and "s\\udc80" in warnings[0]


# -- other types a mapping may hold ----------------------------------------------------------------

def test_values_no_config_file_holds_are_problems() -> None:
    """A mapping passed in is JSON or TOML data: a set, bytes or an object (which made the
    dump raise TypeError) and a key that is no string are refused, each by place."""
    source = {"mcpServers": {"s": {"command": "x", "note": {1: {"a"}}, "b": b"x"}},
              "x": [object()]}
    assert problems_of(source) == [
        ("s", "note.1", "this key is not a string (int): config keys are strings"),
        ("s", "note.1", "the value is of type set, which no config file holds (JSON and TOML "
                        "values only)"),
        ("s", "b", "the value is of type bytes, which no config file holds (JSON and TOML "
                   "values only)"),
        (None, "x[0]", "the value is of type object, which no config file holds (JSON and "
                       "TOML values only)")]


def test_a_read_only_mapping_is_copied_as_a_dict() -> None:
    """``copy.deepcopy`` of a ``mappingproxy`` raised TypeError."""
    inner = types.MappingProxyType({"a": [1, (2, 3)]})
    c = parse_config(types.MappingProxyType({"mcpServers": {"s": {"command": "x", "m": inner}},
                                             "extra": inner}))
    assert c.servers["s"].raw == {"m": {"a": [1, (2, 3)]}}
    assert c.extra == {"extra": {"a": [1, (2, 3)]}}
    assert parse_config(dump_config(c)).servers["s"].raw == {"m": {"a": [1, [2, 3]]}}


# -- JSONC: one linear pass, and still strict about what is unterminated --------------------------

@pytest.mark.parametrize("text", ["/* " * 100_000, '\\"' * 50_000, '"\\' * 50_000])
def test_comment_stripping_is_linear(text: str) -> None:
    """An unterminated ``/*`` or string made the stripping regex rescan from every start
    (quadratic: 48 KB took 2 s, these a minute or more, a 16 MiB file days)."""
    started = time.monotonic()
    with pytest.raises(ConfigError):
        parse_config(text, dialect="vscode")
    assert time.monotonic() - started < 5


def test_dotenv_lines_and_query_redaction_are_linear() -> None:
    """Two more quadratic patterns: a dotenv value with a long run of blanks inside it
    (a lazy value before ``\\s*\\Z``), and ``redact_url`` of ``????...`` (a query name that
    could hold ``?``).  Both took seconds at 40-80 KB and hours at the size limits."""
    started = time.monotonic()
    assert dotenv_entries("A=x" + " " * 150_000 + "y") == ({"A": "x" + " " * 150_000 + "y"}, ())
    assert redact_url("?" * 150_000) == "?" * 150_000
    assert time.monotonic() - started < 5
    # the same answers as before
    assert dotenv_entries('  export  A = " q "  \nB=  x #c\nC=\n') == (
        {"A": " q ", "B": "x", "C": ""}, ())
    assert redact_url("https://u:p@h/x?a=1&b=2#f?c=3 ?a?b=1") == \
        "https://<redacted>@h/x?a=<redacted>&b=<redacted>#f?c=<redacted> ?a?b=<redacted>"


def test_unterminated_comments_and_strings_are_still_refused() -> None:
    for text in ('{"servers": {}} /* open', '{"servers": {}} /*/', '{"servers": {"a', ):
        with pytest.raises(ConfigError, match="not valid JSON"):
            parse_config(text, dialect="vscode")
    c = parse_config('{"servers": {/**/}, // c\n "x": "/* no */", /* a */ }', dialect="vscode")
    assert c.extra == {"x": "/* no */"}


# -- Codex env_vars: order and repeats -------------------------------------------------------------

def test_codex_env_vars_keep_their_order_and_repeats_are_read_once() -> None:
    """With ``on_missing="keep"`` an unset variable is in no env value, so the dump wrote
    it last and the templates changed order; a repeated name was a false problem."""
    source = {"mcp_servers": {"s": {"command": "x", "env_vars": ["UNSET", "A", "UNSET"]}}}
    c = parse_config(source, env={"A": "a"}, on_missing="keep")
    assert c.servers["s"].templates["env_vars"] == ("UNSET", "A")
    assert c.warnings == ("s.env_vars: names a variable more than once: forwarded once",
                          "s.env_vars: variable UNSET is not set: kept as written")
    assert tomllib.loads(dump_config(c))["mcp_servers"]["s"]["env_vars"] == ["UNSET", "A"]
    assert reparse(dump_config(c), "codex", env={"A": "a"}, on_missing="keep") == c


# -- raw keys the target reads: never carried unchecked, never dropped silently -----------------

#: Every (source, target, key): a key of the target's table that the source does not read
#: (so a source entry keeps it in ``raw``).
UNREAD_TARGET_KEYS = [(src, dst, key) for src in DIALECTS for dst in DIALECTS if src != dst
                      for key, _ in KEY_TABLES[dst] if key not in dict(KEY_TABLES[src])]


@pytest.mark.parametrize(("src", "dst", "key"), UNREAD_TARGET_KEYS,
                         ids=[f"{s}-{d}-{k}" for s, d, k in UNREAD_TARGET_KEYS])
def test_a_raw_key_the_target_reads_is_left_out_with_a_warning(src: str, dst: str,
                                                               key: str) -> None:
    """A raw key of the source that the target writes itself was dropped without a
    warning ("source" to Zed, "type" to Claude Code); one the target reads but does not
    write was written unchecked ("exposure": [] to rpi), so the text did not parse back.
    Now either is left out, with a warning naming server and key."""
    entry: dict[str, Any] = {"command": "x", key: {"junk": [1]}}
    config = parse_config(entry_source(src, entry), dialect=src)
    assert key in config.servers["s"].raw
    text, warnings = dump_config_with_warnings(config, dst)
    assert [w for w in warnings if w.startswith(f"s.{key}: ")], warnings
    written = (tomllib.loads(text) if dst == "codex" else json.loads(text))
    assert written[ROOT_KEYS[dst]]["s"].get(key) != {"junk": [1]}  # type: ignore[index]
    again = reparse(text, dst)  # no ConfigError: the junk was not carried
    assert key not in again.servers["s"].raw


def test_a_shadowed_raw_key_is_lost_there_and_back_and_said_so() -> None:
    """generic -> zed -> generic: Zed writes its own "source", so the raw one cannot be
    kept beside it; the warning says it is not written."""
    config = parse_config('{"mcpServers":{"a":{"command":"node","source":"marketplace"}}}')
    text, warnings = dump_config_with_warnings(config, "zed")
    assert warnings == ("a.source: not written: zed writes its own source",)
    back = parse_config(dump_config(parse_config(text, dialect="zed"), "generic"))
    assert back.servers["a"].raw == {}


def test_rpi_exposure_is_written_from_rpi_only() -> None:
    """rpi's exposure is kept in raw and checked by rpi: written back to rpi, carried as a
    raw key to a dialect that does not read it, and not taken back from one (generic never
    checked it)."""
    rpi = parse_config({"mcpServers": {"s": {"command": "x", "exposure": "hidden"}}},
                       dialect="rpi")
    text, warnings = dump_config_with_warnings(rpi)
    assert not warnings and reparse(text, "rpi") == rpi
    generic_text, warnings = dump_config_with_warnings(rpi, "generic")
    assert not warnings
    generic = reparse(generic_text, "generic")
    assert generic.servers["s"].raw == {"exposure": "hidden"}
    back, warnings = dump_config_with_warnings(generic, "rpi")
    assert warnings == ("s.exposure: rpi reads this key, generic did not (its value was "
                        "never checked): not written",)
    assert reparse(back, "rpi").servers["s"].raw == {}


def test_a_toml_date_written_to_json_is_a_warning() -> None:
    """Found by fuzz_config: a Codex raw date went to JSON as its ISO text without a
    warning, so codex -> claude-desktop -> codex gave a string where the date was."""
    import datetime  # noqa: PLC0415
    codex = parse_config({"mcp_servers": {"b": {"command": "x",
                                                "settings": datetime.date(2024, 1, 2)}}})
    text, warnings = dump_config_with_warnings(codex, "claude-desktop")
    assert json.loads(text)["mcpServers"]["b"]["settings"] == "2024-01-02"
    assert warnings == ("mcpServers.b.settings: JSON has no dates or times: written as ISO "
                        "text",)
    assert dump_config_with_warnings(codex)[1] == ()  # TOML holds it: no warning


# -- the property: parse gives a config or a ConfigError; what parses dumps and comes back ------

junk_scalars = (st.none() | st.booleans() | st.integers() | st.sampled_from([BIG, -BIG, 2 ** 63])
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
                | st.sampled_from(["\ud800", "$", "${", "}", "\x00", "\r\n", "//", "/*"]))
junk = st.recursive(junk_scalars, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
REFS = ["${A}", "${env:A}", "$A", "${A:-d}", "${input:tok}", "${userHome}",
        "${workspaceFolder}", "${/}", "${UNSET}", "$UNSET", "${input:nope}", "$", "${}"]
strings = st.lists(st.sampled_from(REFS) | st.text(max_size=4), min_size=1,
                   max_size=3).map("".join)
urls = st.tuples(st.sampled_from(["https://", "http://", "ftp://", "https://u@", ""]),
                 st.sampled_from(["h.example", "h.example:8080", "[::1]", "h:0", ""]),
                 st.sampled_from(["/", "/mcp", "/sse", "?k=${A}", ""])).map("".join)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,5}", fullmatch=True)
numbers = (st.integers(-5, 10 ** 9) | st.floats(min_value=-1, max_value=1e12)
           | st.sampled_from([1e-7, 0.5, 600, 601, 86_400, 86_400_001, 5e-324, BIG]))
string_maps = st.dictionaries(names, strings | numbers, max_size=3)
tool_lists = st.lists(names | st.just("*"), max_size=3)
#: A plausible value per kind of key (``KEY_TABLES``); any kind also gets junk.
KIND_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "type": st.sampled_from(["stdio", "http", "sse", "streamable-http", "ws"]),
    "command": strings, "command_or_list": strings | st.lists(strings, max_size=3),
    "zed_command": strings | st.fixed_dictionaries(
        {"path": strings}, optional={"args": st.lists(strings, max_size=2), "env": string_maps}),
    "zed_source": st.sampled_from(["custom", "extension"]),
    "args": st.lists(strings, max_size=3), "env": string_maps, "headers": string_maps,
    "env_file": st.sampled_from(["/e", "${workspaceFolder}/.env", "/missing"]),
    "cwd": strings, "url_http": urls, "url_sse": urls,
    "description": st.text(max_size=6),
    "exposure": st.sampled_from(["codemode", "deferred", "direct", "hidden"]),
    "restart": st.dictionaries(st.sampled_from(
        ["initialDelayMs", "maxDelayMs", "backoffMultiplier", "maxRestartAttempts", "x"]),
        numbers, max_size=4),
    "env_vars": st.lists(st.sampled_from(["A", "B", "UNSET"]), max_size=3),
    "bearer": st.sampled_from(["A", "UNSET"]),
    "env_headers": st.dictionaries(st.sampled_from(["X-A", "Authorization"]),
                                   st.sampled_from(["A", "UNSET"]), max_size=2),
}
for _kind in ("type_alias",):
    KIND_VALUES[_kind] = KIND_VALUES["type"]
for _kind in ("url_http_alias",):
    KIND_VALUES[_kind] = urls
for _kind in ("enabled", "enabled_alias", "disabled", "trust", "required"):
    KIND_VALUES[_kind] = st.booleans()
for _kind in ("timeout_s", "timeout_ms", "timeout_bare", "startup_s", "startup_ms_alias"):
    KIND_VALUES[_kind] = numbers
for _kind in ("include", "exclude", "approve", "approve_alias"):
    KIND_VALUES[_kind] = tool_lists
OTHER_KEYS = ["oauth", "settings", "note", "icon", "type", "transport", "auth", "dev"]


@st.composite
def entries(draw: st.DrawFn, dialect: str) -> dict[str, Any]:
    table = KEY_TABLES[dialect]  # type: ignore[index]
    entry: dict[str, Any] = {}
    for key, kind in draw(st.lists(st.sampled_from(table), unique=True, max_size=6)):
        entry[key] = draw(junk if draw(st.integers(0, 15)) == 0 else KIND_VALUES[kind])
    for key, value in draw(st.dictionaries(st.sampled_from(OTHER_KEYS), junk,
                                           max_size=2)).items():
        entry.setdefault(key, value)
    return entry


@st.composite
def sources(draw: st.DrawFn) -> tuple[str, Any]:
    """A dialect and a source in it: a mapping, or its JSON text."""
    dialect = draw(st.sampled_from(DIALECTS))
    root: dict[str, Any] = {ROOT_KEYS[dialect]: draw(st.dictionaries(
        names | st.text(max_size=3), entries(dialect), max_size=3))}
    if dialect == "gemini":
        root["mcp"] = draw(st.fixed_dictionaries({}, optional={
            "excluded": st.lists(names, max_size=2), "allowed": st.lists(names, max_size=2)}))
    if draw(st.integers(0, 4)) == 0:
        root["other"] = draw(junk)
    if draw(st.booleans()):
        return dialect, json.dumps(root, ensure_ascii=False)
    return dialect, root


KW: dict[str, Any] = {"env": {"A": "va", "B": "vb", "HOME": "/h"}, "inputs": {"tok": "t"},
                      "workspace": "/w", "env_files": {"/e": "E=1\n", "/w/.env": "F=2\n"}}


def _meaning(spec: ServerSpec) -> dict[str, Any]:
    """What a server does, whatever the dialect wrote it in (no templates, no raw keys)."""
    return {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
            if f.name not in ("templates", "raw", "timeout", "startup_timeout")}


def _close(a: float | None, b: float | None) -> bool:
    """Timeouts converted from seconds to milliseconds may move one unit in the last place."""
    return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-15))


def _fuzz_example(dialect: str, entry: dict[str, Any]) -> tuple[str, Any]:
    return dialect, json.dumps(entry_source(dialect, entry))


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sources(), st.sampled_from(["error", "keep", "empty"]))
@example(_fuzz_example("rpi", {"command": "x", "exposure": []}), "error")
@example(_fuzz_example("generic", {"command": "x", "env": {"K": BIG}}), "error")
@example(_fuzz_example("cursor", {"command": "x", "settings": 2 ** 63}), "error")
@example(_fuzz_example("cursor", {"url": "https://h/", "args": ["x"]}), "error")
@example(_fuzz_example("gemini", {"command": "x", "timeout": 1e-7}), "error")
@example(_fuzz_example("generic", {"command": "\ud800"}), "error")
@example(_fuzz_example("codex", {"command": "x", "env_vars": ["UNSET", "A", "UNSET"]}),
         "keep")
@example(("generic", {"mcpServers": {"s": {"command": "x",
                                           "m": types.MappingProxyType({"a": 1})}}}), "error")
@example(("generic", '{"mcpServers": {}, "n": 1' + "0" * 5000 + "}"), "error")
@example(("adk", {"mcpServers": {"s": {"command": "x",
                                       "restartPolicy": {"initialDelayMs": BIG}}}}), "error")
def test_parse_and_dump_never_raise_anything_else(source: tuple[str, Any],
                                                   on_missing: str) -> None:
    """parse: a HostConfig or a ConfigError (env_file_paths: a tuple, never raising).
    Dump, to every dialect: no exception, UTF-8 text; the same dialect without warnings
    parses back equal; another dialect without warnings parses back to servers that mean
    the same; with warnings, parsing back gives a HostConfig or a ConfigError (the
    warnings said what is lost)."""
    dialect, data = source
    paths = env_file_paths(data, dialect=dialect, env=KW["env"], inputs=KW["inputs"],
                           workspace=KW["workspace"])
    assert all(isinstance(p, str) for p in paths)
    try:
        c = parse_config(data, dialect=dialect, on_missing=on_missing,  # type: ignore[arg-type]
                         **KW)
    except ConfigError as exc:
        str(exc).encode("utf-8")
        return
    for target in DIALECTS:
        text, warnings = dump_config_with_warnings(c, target)
        text.encode("utf-8")
        for warning in warnings:
            warning.encode("utf-8")
        try:
            again = reparse(text, target, on_missing=on_missing, **KW)
        except ConfigError:
            assert warnings, (dialect, target, text)
            continue
        if warnings:
            continue
        if target == dialect:
            assert again == c
            assert again.servers == c.servers  # templates and raw keys included
        elif on_missing != "keep":
            # (under "keep" an unset variable stays as written, and that differs: a Codex
            # env_vars name forwards nothing, a ${VAR} template is its literal text)
            assert {n: _meaning(s) for n, s in again.servers.items()} \
                == {n: _meaning(s) for n, s in c.servers.items()}
            for name, spec in c.servers.items():
                assert _close(again.servers[name].timeout, spec.timeout)
                assert _close(again.servers[name].startup_timeout, spec.startup_timeout)


def test_dump_of_every_parsed_dialect_is_utf8(tmp_path: Path) -> None:
    """The text of each dialect can be saved (encoded as UTF-8) after a conversion of a
    config holding non-ASCII text everywhere."""
    c = parse_config({"mcpServers": {"é": {"command": "ü", "args": ["😀"], "env": {"K": "ß"},
                                           "note": "ñ"}}}, dialect="generic")
    for target in DIALECTS:
        (tmp_path / target).write_text(dump_config(c, target), encoding="utf-8")

