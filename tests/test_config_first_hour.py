"""Config files that behave predictably (issue 23 item 6): the dialect table in docs/api.md
is the code's, a ``${...}`` a dialect leaves literal is warned about, ``config convert``
needs no secret, standard names read the project file first, VS Code inputs come from the
caller, the environment or an ``ask`` callback."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_proto_io.host._config_files import load_config, resolve_location, standard_locations

from mcp_proto.host import (
    DIALECTS,
    ConfigError,
    InputSpec,
    dump_config,
    dump_config_with_warnings,
    input_env_name,
    location_candidates,
    needed_inputs,
    parse_config,
)
from mcp_proto.host.config._entry import KEY_TABLES
from mcp_proto.host.config._expand import FORMS
from mcp_proto.host.config._parse import ROOT_KEYS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_dialects", DOCS / "make_dialects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_dialects", module)
    spec.loader.exec_module(module)
    return module


# -- the table in docs/api.md ------------------------------------------------------------------

def test_the_dialect_table_in_api_md_is_the_codes() -> None:
    """issue 23 item 6: docs/api.md has a table per dialect, generated from the parser's
    tables; a change to them without the docs (or to the docs by hand) fails here."""
    maker = _maker()
    current = (DOCS / "api.md").read_text("utf-8")
    assert maker.with_section(current) == current, \
        "docs/api.md's config dialects are stale: run python docs/make_dialects.py"
    assert maker.main(["--check"]) == 0


def test_the_table_words_every_key_and_form_the_code_has() -> None:
    """issue 23 item 6: every key each dialect reads and every variable form is in it."""
    maker = _maker()
    section = maker.render_section()
    kinds = {kind for table in KEY_TABLES.values() for _, kind in table}
    assert kinds <= set(maker.KIND_TEXT)
    assert {f for forms in FORMS.values() for f in forms} <= set(maker.FORM_TEXT)
    for dialect in DIALECTS:
        row = next(line for line in section.splitlines()
                   if line.startswith(f"| `{dialect}` | `") or
                   line.startswith(f"| `{dialect}` | `{KEY_TABLES[dialect][0][0]}`"))
        for key, _ in KEY_TABLES[dialect]:
            assert f"`{key}`" in row, (dialect, key)
        assert f"`{ROOT_KEYS[dialect]}`" in section


# -- literal ${...} ---------------------------------------------------------------------------

def _source(dialect: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {ROOT_KEYS[dialect]: {"s": entry}}  # type: ignore[index]


_SAFE = st.text(alphabet="abcXYZ019-_./: ", max_size=8)
_NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True)
#: Values carry a mark no warning has, so "no warning shows the value" is a real check.
_VALUES = st.text(alphabet="abcdefghijklmnop0123456789", max_size=12).map(lambda v: "§" + v)


@settings(max_examples=150, deadline=None)
@given(dialect=st.sampled_from(DIALECTS), name=_NAMES, value=_VALUES, before=_SAFE,
       after=_SAFE, in_env=st.booleans())
def test_a_brace_variable_is_expanded_or_warned_never_both_never_neither(
        dialect: str, name: str, value: str, before: str, after: str, in_env: bool) -> None:
    """issue 23 item 6: `config check` warns for a ``${...}`` a dialect leaves literal; a
    ``${X}`` is either expanded or named in exactly one warning, in every dialect, in an
    argument and in an env value (where no value is ever shown)."""
    text = before + "${" + name + "}" + after
    field = {"env": {"K": text}} if in_env else {"args": [text]}
    c = parse_config(_source(dialect, {"command": "run", **field}), dialect=dialect,
                     env={name: value})
    spec = c.servers["s"]
    got = spec.env["K"] if in_env else spec.command[1]
    named = [w for w in c.warnings if f"'{name}'" in w]
    expanded = got == before + value + after
    literal = got == text
    assert expanded != literal
    if expanded:
        assert named == []
    else:
        assert len(named) == 1
        assert "passed literally" in named[0]
        assert named[0].startswith("s.env.K: " if in_env else "s.args[0]: ")
    assert not any(value in w for w in c.warnings)


def test_claude_desktop_passes_everything_key_literally_and_says_so(tmp_path: Path) -> None:
    """issue 23: ``claude_desktop_config.json`` passed ``${EVERYTHING_KEY}`` literally and
    the same file as ``servers.json`` expanded it, with no word; now the desktop file says
    so (naming server, field and variable, never the value)."""
    body = {"mcpServers": {"everything": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
        "env": {"EVERYTHING_KEY": "${EVERYTHING_KEY}"}}}}
    desktop = tmp_path / "claude_desktop_config.json"
    desktop.write_text(json.dumps(body))
    plain = tmp_path / "servers.json"
    plain.write_text(json.dumps(body))
    env = {"EVERYTHING_KEY": "s3cret-value"}

    c = load_config(desktop, env=env)
    assert c.dialect == "claude-desktop"
    assert c.servers["everything"].env == {"EVERYTHING_KEY": "${EVERYTHING_KEY}"}
    assert c.warnings == (
        "everything.env.EVERYTHING_KEY: claude-desktop does not expand ${...}: "
        "'EVERYTHING_KEY' is passed literally; in claude-code/gemini/generic it would expand",)

    g = load_config(plain, env=env)
    assert g.dialect == "generic"
    assert g.servers["everything"].env == {"EVERYTHING_KEY": "s3cret-value"}
    assert g.warnings == ()
    assert not any("s3cret" in w for w in (*c.warnings, *g.warnings))


def test_other_forms_a_dialect_leaves_literal_are_warned_with_its_own_syntax() -> None:
    """issue 23 item 6: ``${FOO}`` in Cursor (which says ``${env:FOO}``), ``${input:id}``
    outside VS Code, a whole-value ``$VAR`` (named only outside env/headers values), and a
    ``${...}`` no dialect expands."""
    cursor = parse_config(_source("cursor", {"command": "run", "args": ["${FOO}"]}),
                          dialect="cursor", env={"FOO": "x"})
    assert cursor.warnings == (
        "s.args[0]: cursor does not expand ${...}: 'FOO' is passed literally; in "
        "claude-code/gemini/generic it would expand (cursor writes it ${env:FOO})",)
    code = parse_config(_source("claude-code", {
        "command": "run", "args": ["${input:tok}", "$HOME", "echo $HOME", "${not a var}"],
        "env": {"P": "$PASSWORD", "Q": "pa$word"}}), dialect="claude-code")
    assert code.warnings == (
        "s.args[0]: claude-code does not expand ${input:...}: input 'tok' is passed "
        "literally; in vscode it would expand",
        "s.args[1]: claude-code does not expand $NAME: 'HOME' is passed literally; in gemini "
        "it would expand (claude-code writes it ${HOME})",
        "s.args[3]: no dialect expands the ${...}: it is passed literally",
        "s.env.P: claude-code does not expand $NAME: the value is passed literally; in "
        "gemini it would expand",
    )
    assert not any("PASSWORD" in w or "word" in w for w in code.warnings)


# -- convert without secrets ------------------------------------------------------------------

_CODE_FILE = {"mcpServers": {
    "api": {"type": "http", "url": "https://${API_HOST:-api.example.com}/mcp?key=${API_KEY}",
            "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Set": "${SET_ONE}"}},
    "local": {"type": "stdio", "command": "${TOOLS}/bin/server",
              "args": ["--token=${API_TOKEN}", "--plain"],
              "env": {"KEY": "${API_KEY}", "BOTH": "${SET_ONE}-${UNSET_TOO}"}},
}}
_SECRET = "hunter2-do-not-write"


def test_convert_round_trip_keeps_templates_byte_for_byte_without_their_values(
        tmp_path: Path) -> None:
    """issue 23 item 6: `config convert` keeps templates without needing their values: with
    ``on_missing="keep"`` a file whose variables are unset loads (a warning per variable),
    writes back byte for byte, and converts with the templates translated; a variable that
    is set never reaches the output."""
    path = tmp_path / ".mcp.json"
    text = json.dumps(_CODE_FILE, indent=2) + "\n"
    path.write_text(text)
    env = {"SET_ONE": _SECRET}

    with pytest.raises(ConfigError):
        load_config(path, env=env)  # the default still needs every value
    c = load_config(path, env=env, on_missing="keep")
    assert c.servers["local"].env["BOTH"] == _SECRET + "-${UNSET_TOO}"  # what it would run
    assert "local.env.BOTH: variable UNSET_TOO is not set: kept as written" in c.warnings
    assert not any(_SECRET in w for w in c.warnings)

    assert dump_config(c) == text
    for dialect in ("vscode", "cursor", "generic", "gemini", "windsurf", "codex",
                    "claude-desktop"):
        out, warnings = dump_config_with_warnings(c, dialect)
        assert _SECRET not in out, dialect
        assert not any(_SECRET in w for w in warnings)
    vscode = dump_config(c, "vscode")
    assert "${env:API_KEY}" in vscode and "${env:SET_ONE}-${env:UNSET_TOO}" in vscode


def test_convert_keeps_inputs_and_env_files_it_cannot_read(tmp_path: Path) -> None:
    """issue 23 item 6: a VS Code file whose inputs nobody gave and whose envFile is
    missing still converts: nothing is asked (``ask`` is not called under "keep"), the
    envFile key and the ``${input:...}`` are written back as written."""
    folder = tmp_path / ".vscode"
    folder.mkdir()
    path = folder / "mcp.json"
    body = {"inputs": [{"type": "promptString", "id": "tok", "description": "Token",
                        "password": True}],
            "servers": {"s": {"type": "stdio", "command": "run", "args": ["x"],
                              "env": {"T": "${input:tok}"}, "envFile": "missing.env"}}}
    text = json.dumps(body, indent=2) + "\n"
    path.write_text(text)

    def ask(spec: InputSpec) -> str | None:
        raise AssertionError("asked under on_missing='keep'")

    c = load_config(path, env={}, on_missing="keep", ask=ask)
    assert dump_config(c) == text
    assert "s.envFile: the file was not read: its variables are not set, the key is kept" \
        in c.warnings
    assert "s.env.T: input 'tok' is not set: kept as written" in c.warnings


# -- standard names: project file first -------------------------------------------------------

@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in ("XDG_CONFIG_HOME", "APPDATA", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.mark.skipif(sys.platform.startswith("win") or sys.platform == "darwin",
                    reason="user paths below are the Linux ones")
@pytest.mark.parametrize(("name", "project", "user"), [
    ("vscode", ".vscode/mcp.json", ".config/Code/User/mcp.json"),
    ("claude-code", ".mcp.json", ".claude.json"),
    ("cursor", ".cursor/mcp.json", ".cursor/mcp.json"),
    ("gemini", ".gemini/settings.json", ".gemini/settings.json"),
])
def test_a_standard_name_reads_the_project_file_first(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        name: str, project: str, user: str) -> None:
    """issue 23 item 6: `--config vscode` inside a project read the user's file, not
    ``.vscode/mcp.json``; now the project file of the current directory (or the
    workspace) comes first, then the user's."""
    proj = tmp_path / "proj"
    proj.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(proj)
    assert resolve_location(name) == str(home / user)  # no project file yet
    target = proj / project
    target.parent.mkdir(parents=True, exist_ok=True)
    root = "servers" if name == "vscode" else "mcpServers"
    target.write_text(json.dumps({root: {}}))
    assert resolve_location(name) == str(target)
    assert resolve_location(name, cwd=proj) == str(target)
    assert resolve_location(name, cwd=other) == str(home / user)
    assert resolve_location(name, workspace=proj, cwd=other) == str(target)
    places = standard_locations(name, workspace=proj)
    assert (places[0], places[-1]) == (str(target), str(home / user))
    assert load_config(resolve_location(name), env={}).path == str(target)
    # from a subdirectory: the nearest parent that has it (as VS Code opened at the root)
    deep = proj / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert resolve_location(name) == str(target)
    assert resolve_location(name, workspace=deep / "..") == str(target)


def test_project_files_that_do_not_count(home: Path, tmp_path: Path) -> None:
    """issue 23 item 6: a ``.gemini/settings.json`` without servers is Gemini's settings,
    not an MCP config (the user's file is read); Codex reads a project file only when the
    user trusts the project, and Windsurf / Claude Desktop have none: their user file."""
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text('{"theme": "dark"}')
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("[mcp_servers.x]\ncommand = 'x'\n")
    assert resolve_location("gemini", workspace=tmp_path) == str(home / ".gemini" / "settings.json")
    assert resolve_location("codex", workspace=tmp_path) == str(home / ".codex" / "config.toml")
    assert len(standard_locations("windsurf", workspace=tmp_path)) == 1
    assert len(standard_locations("claude-desktop", workspace=tmp_path)) == 1
    assert resolve_location("./mine.json", workspace=tmp_path) == "./mine.json"


def test_location_candidates_are_pure_path_arithmetic() -> None:
    """issue 23 item 6: the core computes the candidates for any platform."""
    assert location_candidates("vscode", platform="win32", home="C:\\Users\\u",
                               env={"APPDATA": "C:\\Users\\u\\AppData\\Roaming"},
                               workspace="D:\\proj") == (
        "D:\\proj\\.vscode\\mcp.json", "D:\\.vscode\\mcp.json",
        "C:\\Users\\u\\AppData\\Roaming\\Code\\User\\mcp.json")
    assert location_candidates("claude-code", platform="linux", home="/h", env={},
                               workspace="/p") == ("/p/.mcp.json", "/.mcp.json",
                                                   "/h/.claude.json")
    # walked up from a subdirectory, stopping at the home directory (its files are the
    # user's) or at the root
    assert location_candidates("vscode", platform="linux", home="/h", env={},
                               workspace="/h/src/proj") == (
        "/h/src/proj/.vscode/mcp.json", "/h/src/.vscode/mcp.json",
        "/h/.config/Code/User/mcp.json")
    assert location_candidates("vscode", platform="win32", home="C:\\Users\\u",
                               env={"APPDATA": "C:\\A"}, workspace="D:\\p\\q") == (
        "D:\\p\\q\\.vscode\\mcp.json", "D:\\p\\.vscode\\mcp.json",
        "D:\\.vscode\\mcp.json", "C:\\A\\Code\\User\\mcp.json")
    assert location_candidates("zed", platform="linux", home="/h", env={},
                               workspace="/p") == ("/h/.config/zed/settings.json",)
    assert location_candidates("cursor", platform="linux", home="/h", env={}) == (
        "/h/.cursor/mcp.json",)


# -- VS Code inputs ---------------------------------------------------------------------------

_VSCODE = {
    "inputs": [
        {"type": "promptString", "id": "api-key", "description": "The API key",
         "password": True},
        {"type": "promptString", "id": "region", "description": "Region", "default": "eu"},
    ],
    "servers": {"s": {"type": "stdio", "command": "run", "args": ["--region=${input:region}"],
                      "env": {"KEY": "${input:api-key}", "AGAIN": "${input:api-key}"}}},
}


@pytest.fixture
def vscode_file(tmp_path: Path) -> Path:
    folder = tmp_path / ".vscode"
    folder.mkdir()
    path = folder / "mcp.json"
    path.write_text(json.dumps(_VSCODE))
    return path


class Asker:
    def __init__(self, answers: dict[str, str | None]) -> None:
        self.answers = answers
        self.asked: list[InputSpec] = []

    def __call__(self, spec: InputSpec) -> str | None:
        self.asked.append(spec)
        return self.answers.get(spec.id)


def test_inputs_are_declared_and_their_env_names_are_derived(vscode_file: Path) -> None:
    """issue 23 item 6: the parser exposes the promptString inputs (no value) and the
    environment variable of each (``MCP_PROTO_INPUT_<ID>``)."""
    assert input_env_name("api-key") == "MCP_PROTO_INPUT_API_KEY"
    assert input_env_name("my.token 2") == "MCP_PROTO_INPUT_MY_TOKEN_2"
    needed = needed_inputs(vscode_file.read_bytes(), path=str(vscode_file))
    assert [i.id for i in needed] == ["region", "api-key"]  # file order, once each
    c = load_config(vscode_file, env={}, inputs={"api-key": "§key"})
    assert c.inputs == (
        InputSpec(id="api-key", description="The API key", password=True,
                  env_var="MCP_PROTO_INPUT_API_KEY"),
        InputSpec(id="region", description="Region", default="eu",
                  env_var="MCP_PROTO_INPUT_REGION"))
    assert c.servers["s"].command == ("run", "--region=eu")  # the declared default
    assert "§key" not in repr(c.inputs) and "§key" not in repr(c)


def test_input_precedence_explicit_then_env_then_ask(vscode_file: Path) -> None:
    """issue 23 item 6: values come from ``inputs=`` first, then ``MCP_PROTO_INPUT_<ID>``,
    then ``ask`` (called once per input still missing, with its declaration), so no
    secret needs the command line."""
    env = {"MCP_PROTO_INPUT_API_KEY": "from-env", "MCP_PROTO_INPUT_REGION": "us"}
    asker = Asker({"api-key": "from-ask", "region": "ap"})
    c = load_config(vscode_file, env=env, inputs={"api-key": "explicit"}, ask=asker)
    assert c.servers["s"].env == {"KEY": "explicit", "AGAIN": "explicit"}
    assert c.servers["s"].command[1] == "--region=us"
    assert asker.asked == []

    c = load_config(vscode_file, env=env, ask=asker)
    assert c.servers["s"].env["KEY"] == "from-env"
    assert asker.asked == []

    c = load_config(vscode_file, env={}, ask=asker)
    assert c.servers["s"].env == {"KEY": "from-ask", "AGAIN": "from-ask"}
    assert c.servers["s"].command[1] == "--region=ap"
    assert [(s.id, s.password) for s in asker.asked] == [("region", False), ("api-key", True)]

    declined = Asker({"api-key": "k"})  # None for region: its default applies
    c = load_config(vscode_file, env={}, ask=declined)
    assert c.servers["s"].command[1] == "--region=eu"
    # the dump writes the templates back, never an answer
    assert "from-ask" not in dump_config(load_config(vscode_file, env={}, ask=asker))


def test_a_missing_input_without_ask_names_the_input_and_its_env_var(vscode_file: Path) -> None:
    """issue 23 item 6: a missing input with no ``ask`` is a ConfigError naming the input
    id and the environment variable to set."""
    with pytest.raises(ConfigError) as caught:
        load_config(vscode_file, env={})
    problems = [p for p in caught.value.problems if p.field in ("env.KEY", "env.AGAIN")]
    assert len(problems) == 2
    for p in problems:
        assert p.server == "s"
        assert "input 'api-key'" in p.message
        assert "MCP_PROTO_INPUT_API_KEY" in p.message
    assert "region" not in str(caught.value)  # it has a default

    declined = Asker({})
    with pytest.raises(ConfigError, match="MCP_PROTO_INPUT_API_KEY"):
        load_config(vscode_file, env={}, ask=declined)
    assert [s.id for s in declined.asked] == ["region", "api-key"]


def test_bad_input_declarations_are_warnings_naming_their_index() -> None:
    """issue 23 item 6: an input without an id, of an unknown type or repeated is left
    out with a warning; the ``inputs`` key is still written back as it was."""
    source = {"inputs": [{"type": "promptString"}, {"id": "a", "type": "weird"},
                         {"id": "b"}, {"id": "b"}, {"id": "c", "type": "command",
                                                    "command": "x"}],
              "servers": {}}
    c = parse_config(source, dialect="vscode")
    assert [i.id for i in c.inputs] == ["b", "c"]
    assert c.warnings[:3] == (
        "inputs[0]: has no id: ignored",
        "inputs[1]: unknown type (promptString, pickString or command): ignored",
        "inputs[3]: repeats the id 'b': ignored")
    assert "MCP_PROTO_INPUT_C" in c.warnings[3]
    assert json.loads(dump_config(c))["inputs"] == source["inputs"]


@pytest.mark.parametrize("runtime", ["threads", "asyncio", "trio"])
def test_connect_config_asks_for_inputs_nothing_else_gave(vscode_file: Path,
                                                          runtime: str) -> None:
    """issue 23 item 6: ``connect_config(..., ask=)`` in every runtime reaches the same
    precedence (explicit, environment, ask) without starting anything: the Host's config
    holds the answer where the template was, and the dump writes the template back."""
    face = importlib.import_module(f"mcp_proto_io.{runtime}")
    asker = Asker({"api-key": "§answer"})
    host = face.connect_config(str(vscode_file), env={"MCP_PROTO_INPUT_REGION": "us"},
                               ask=asker)
    spec = host.config.servers["s"]
    assert spec.env == {"KEY": "§answer", "AGAIN": "§answer"}
    assert spec.command[1] == "--region=us"
    assert [s.id for s in asker.asked] == ["api-key"]
    assert "§answer" not in dump_config(host.config)
