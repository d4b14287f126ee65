"""Variable expansion in host config values, and ``.env`` files: pure functions of their input.

Each dialect has its own forms (host-notes section 3.1), listed in :data:`FORMS`:

- ``brace``: ``${VAR}`` reads ``env`` (Claude Code, generic, Gemini CLI);
- ``default``: ``${VAR:-default}``, the default when VAR is unset *or empty*, as in the shell
  (Claude Code, generic);
- ``env``: ``${env:VAR}`` (Cursor, VS Code, Windsurf);
- ``input``: ``${input:ID}`` reads ``inputs`` (VS Code);
- ``predefined``: ``${userHome}``, ``${workspaceFolder}``, ``${workspaceFolderBasename}``,
  ``${pathSeparator}`` and ``${/}`` (Cursor, VS Code);
- ``bare``: ``$VAR`` (Gemini CLI only).

Claude Desktop, Zed, Codex, ADK-Rust and rpi have no expansion: their values are literal.

Rules:

- One pass: the text a variable produces is never scanned again, so a value holding
  ``${OTHER}`` stays literal (Claude Code expands headers twice; we do not).
- A ``${...}`` that is no form of the dialect is literal text (``${FOO}`` in a Cursor file).
  Nested defaults (``${A:-${B}}``) are not a form: ``${B}`` is expanded, the rest is literal.
- A missing variable is a :class:`ConfigProblem` naming server, field and variable
  (``on_missing="error"``), or keeps its template text (``"keep"``), or becomes ``""``
  (``"empty"``).  Home is ``env["HOME"]``, else ``env["USERPROFILE"]``: this module reads no
  environment, the caller passes it.
- A reference the dialect does not expand, where another would, is literal text and a
  warning (:func:`literal_warnings`); a bare ``$NAME`` only when it is the whole value.
- No message or problem ever holds a value: only variable names and input ids.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .._spec import DIALECTS, ConfigError, ConfigProblem, Dialect

__all__ = [
    "FORMS",
    "INPUT_ENV_PREFIX",
    "MAX_DOTENV_BYTES",
    "ON_MISSING",
    "PREDEFINED",
    "Expander",
    "OnMissing",
    "Part",
    "Var",
    "dotenv_entries",
    "expanding_dialects",
    "input_env_name",
    "literal_warnings",
    "parse_dotenv",
    "render_var",
    "tokenize",
]

OnMissing = Literal["error", "keep", "empty"]
ON_MISSING: tuple[OnMissing, ...] = ("error", "keep", "empty")

_NO_FORMS: frozenset[str] = frozenset()
#: The variable forms each dialect expands (see the module docstring).
FORMS: dict[Dialect, frozenset[str]] = {
    "claude-desktop": _NO_FORMS,
    "claude-code": frozenset({"brace", "default"}),
    "cursor": frozenset({"env", "predefined"}),
    "vscode": frozenset({"env", "input", "predefined"}),
    "windsurf": frozenset({"env"}),
    "zed": _NO_FORMS,
    "gemini": frozenset({"brace", "bare"}),
    "codex": _NO_FORMS,
    "adk": _NO_FORMS,
    "rpi": _NO_FORMS,
    "generic": frozenset({"brace", "default"}),
}

_EDITOR_PREDEFINED = frozenset({"userHome", "workspaceFolder", "workspaceFolderBasename",
                                "pathSeparator", "/"})
#: The predefined variables of the dialects with the ``predefined`` form.  Others of VS Code
#: (``${file}``, ``${cwd}`` ...) describe an editor state a config file has no use for: literal.
PREDEFINED: dict[Dialect, frozenset[str]] = {
    "cursor": _EDITOR_PREDEFINED,
    "vscode": _EDITOR_PREDEFINED,
}

#: 1 MiB per ``.env`` file: they hold a few dozen variables; a bigger one is not a dotenv file.
MAX_DOTENV_BYTES = 1024 * 1024

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN = re.compile(r"\$\{(?P<body>[^{}]*)\}|\$(?P<bare>" + _IDENT + r")")
_NAME = re.compile(_IDENT + r"\Z")
_DEFAULT = re.compile(r"(?P<name>" + _IDENT + r"):-(?P<default>.*)\Z", re.DOTALL)
_INPUT_ID = re.compile(r"[^\s{}:]+\Z")
_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]|\\\\")

VarKind = Literal["env", "input", "predefined"]

#: Prefix of the environment variable that gives a VS Code ``${input:ID}`` its value
#: (:func:`input_env_name`): a secret need not go on a command line.
INPUT_ENV_PREFIX = "MCP_PROTO_INPUT_"
_NOT_ENV_CHAR = re.compile(r"[^A-Z0-9]")


def input_env_name(ident: str) -> str:
    """The environment variable giving input ``ident`` its value: ``MCP_PROTO_INPUT_`` and
    the id upper-cased, each character outside ``A-Z0-9`` replaced by ``_``
    (``api-key`` -> ``MCP_PROTO_INPUT_API_KEY``)."""
    return INPUT_ENV_PREFIX + _NOT_ENV_CHAR.sub("_", ident.upper())


@dataclass(frozen=True, slots=True, kw_only=True)
class Var:
    """One variable reference: ``kind`` ``env`` (``name`` of an environment variable, with its
    ``default`` text or None), ``input`` (``name`` is the input id) or ``predefined``;
    ``text`` is the reference as written."""

    kind: VarKind
    name: str
    default: str | None = None
    text: str

    def describe(self) -> str:
        """What it refers to, for messages: ``variable NAME``, ``input 'ID'``, ``${userHome}``."""
        if self.kind == "env":
            return f"variable {self.name}"
        if self.kind == "input":
            return f"input {self.name!r}"
        return "${" + self.name + "}"


Part = str | Var


def _classify(body: str, forms: frozenset[str], predefined: frozenset[str]) -> Var | None:
    text = "${" + body + "}"
    if body.startswith("env:"):
        name = body[4:]
        return Var(kind="env", name=name, text=text) \
            if "env" in forms and _NAME.match(name) else None
    if body.startswith("input:"):
        ident = body[6:]
        return Var(kind="input", name=ident, text=text) \
            if "input" in forms and _INPUT_ID.match(ident) else None
    if "predefined" in forms and body in predefined:
        return Var(kind="predefined", name=body, text=text)
    if "default" in forms:
        m = _DEFAULT.match(body)
        if m:
            return Var(kind="env", name=m["name"], default=m["default"], text=text)
    if "brace" in forms and _NAME.match(body):
        return Var(kind="env", name=body, text=text)
    return None


def tokenize(text: str, dialect: Dialect) -> tuple[Part, ...]:
    """Split ``text`` into literal strings and the :class:`Var` references ``dialect`` expands.
    A text without references gives ``(text,)`` (or ``()`` when empty)."""
    forms = FORMS[dialect]
    if not forms or "$" not in text:
        return (text,) if text else ()
    predefined = PREDEFINED.get(dialect, _NO_FORMS)
    parts: list[Part] = []
    last = 0
    for m in _TOKEN.finditer(text):
        if m["bare"] is not None:
            var = Var(kind="env", name=m["bare"], text=m[0]) if "bare" in forms else None
        else:
            var = _classify(m["body"], forms, predefined)
        if var is None:
            continue
        if m.start() > last:
            parts.append(text[last:m.start()])
        parts.append(var)
        last = m.end()
    if last < len(text):
        parts.append(text[last:])
    return tuple(parts)


def render_var(var: Var, dialect: Dialect) -> tuple[str | None, str | None]:
    """``var`` written in ``dialect``'s syntax: ``(text, note)``.  ``text`` is None when the
    dialect has no equivalent; ``note`` says what was lost (a default the dialect cannot say)."""
    forms = FORMS[dialect]
    if var.kind == "input":
        return ("${input:" + var.name + "}" if "input" in forms else None), None
    if var.kind == "predefined":
        ok = var.name in PREDEFINED.get(dialect, _NO_FORMS)
        return ("${" + var.name + "}" if ok else None), None
    if var.default is not None and "default" in forms:
        return "${" + var.name + ":-" + var.default + "}", None
    note = f"the default of {var.describe()} is dropped" if var.default is not None else None
    if "env" in forms:
        return "${env:" + var.name + "}", note
    if "brace" in forms:
        return "${" + var.name + "}", note
    return None, None


@dataclass(frozen=True, slots=True, kw_only=True)
class Expander:
    """Expands the values of one config: ``dialect`` selects the forms, ``env`` and
    ``inputs`` give the values, ``workspace`` the folder of ``${workspaceFolder}``."""

    dialect: Dialect
    env: Mapping[str, str]
    inputs: Mapping[str, str]
    workspace: str | None = None
    on_missing: OnMissing = "error"

    @property
    def home(self) -> str | None:
        """The user's home directory: ``env["HOME"]``, else ``env["USERPROFILE"]``."""
        return self.env.get("HOME") or self.env.get("USERPROFILE") or None

    def _windows(self) -> bool:
        sample = self.workspace or self.home or ""
        return bool(_WINDOWS_PATH.match(sample))

    def _predefined(self, name: str) -> str | None:
        if name in ("pathSeparator", "/"):
            return "\\" if self._windows() else "/"
        if name == "userHome":
            return self.home
        if self.workspace is None:
            return None
        if name == "workspaceFolder":
            return self.workspace
        paths = ntpath if self._windows() else posixpath
        return paths.basename(self.workspace.rstrip("/\\")) or None

    def lookup(self, var: Var) -> str | None:
        """The value of ``var``, or None when it is missing."""
        if var.kind == "input":
            return self.inputs.get(var.name)
        if var.kind == "predefined":
            return self._predefined(var.name)
        value = self.env.get(var.name)
        if var.default is not None and not value:
            return var.default
        return value

    def missing_message(self, var: Var) -> str:
        """Why ``var`` has no value, and what the caller does about it (never a value)."""
        if var.kind == "input":
            return (f"input {var.name!r} was not given: set {input_env_name(var.name)}, "
                    f"pass inputs={{{var.name!r}: ...}} (--input {var.name}=VALUE) or "
                    "an ask= callback")
        if var.kind == "predefined":
            need = "HOME (or USERPROFILE) in env" if var.name == "userHome" else "a workspace"
            return f"{var.text} needs {need}"
        return f"variable {var.name} is not set"

    def expand(self, text: str, *, server: str | None, field: str,
               problems: list[ConfigProblem],
               kept: list[Var] | None = None) -> tuple[str, bool]:
        """``text`` with its variables replaced, in one pass, and whether it held any.  A
        missing variable appends a problem to ``problems`` (``on_missing="error"``; the text
        keeps the reference) or keeps the reference (appended to ``kept``) / becomes
        empty."""
        parts = tokenize(text, self.dialect)
        if all(isinstance(p, str) for p in parts):
            return text, False
        out: list[str] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = self.lookup(part)
            if value is None and not part.text.startswith("${"):
                # Gemini's bare $NAME: unresolved, it stays as written (as Gemini CLI does).
                # A literal "$" is common (a jq filter, a password), so it is neither an
                # error nor named in one: the "name" may be the tail of a secret.
                out.append(part.text)
                continue
            if value is None:
                if self.on_missing == "error":
                    problems.append(ConfigProblem(
                        server, field, self.missing_message(part),
                        input=part.name if part.kind == "input" else None))
                elif self.on_missing == "keep" and kept is not None:
                    kept.append(part)
                value = "" if self.on_missing == "empty" else part.text
            out.append(value)
        return "".join(out), True


# -- references a dialect leaves literal -----------------------------------------------------

def expanding_dialects(text: str) -> tuple[Dialect, ...]:
    """The dialects that expand the reference ``text`` (one ``${...}`` or ``$NAME``)."""
    return tuple(d for d in DIALECTS
                 if any(isinstance(p, Var) and p.text == text for p in tokenize(text, d)))


def _form(var: Var) -> str:
    """The form of ``var`` for a message, without its value or default text."""
    if not var.text.startswith("${"):
        return "$NAME"
    if var.kind == "input":
        return "${input:...}"
    if var.kind == "predefined":
        return var.text
    if var.text.startswith("${env:"):
        return "${env:...}"
    return "${...:-...}" if var.default is not None else "${...}"


def literal_warnings(text: str, dialect: Dialect, *, secret: bool = False) -> list[str]:
    """A message for each variable reference in ``text`` that ``dialect`` leaves literal,
    where another dialect would expand it (``claude-desktop does not expand ${...}:
    'EVERYTHING_KEY' is passed literally; in claude-code/gemini/generic it would expand``),
    or that no dialect expands.  A ``${...}`` is always looked at; a bare ``$NAME`` only
    when it is the whole value (``$`` inside a value is common: a shell line, a jq filter,
    a password) and then, in a ``secret`` field (env and header values), not named.
    Messages name variable names and input ids, never a value or a default."""
    if "$" not in text:
        return []
    found: list[str] = []
    expanded = {p.text for p in tokenize(text, dialect) if isinstance(p, Var)}
    for m in _TOKEN.finditer(text):
        if m[0] in expanded or (m["bare"] is not None and m[0] != text):
            continue
        others = expanding_dialects(m[0])
        if not others:
            body = m["body"] or ""
            named = f" {m[0]}" if _NAME.match(body) else ""
            found.append(f"no dialect expands the ${{...}}{named}: it is passed literally")
            continue
        (var,) = (p for p in tokenize(m[0], others[0]) if isinstance(p, Var))
        what = "the value" if secret and var.text == text and m["bare"] is not None \
            else f"{var.name!r}" if var.kind != "input" else f"input {var.name!r}"
        said, _ = render_var(var, dialect)
        hint = f" ({dialect} writes it {said})" \
            if said is not None and said != var.text and what != "the value" else ""
        found.append(f"{dialect} does not expand {_form(var)}: {what} is passed literally; "
                     f"in {'/'.join(others)} it would expand{hint}")
    return found


# -- .env files -------------------------------------------------------------------------------

#: One stripped line.  The value is greedy: a lazy value before ``\s*\Z`` rescans every run
#: of blanks inside it, quadratic in its length (a 1 MiB line would take hours).
_DOTENV_LINE = re.compile(r"(?:export\s+)?(?P<key>" + _IDENT + r")\s*=\s*(?P<value>.*)\Z")
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def _unquote(value: str) -> str | None:
    """The value of one line's right-hand side, or None when it is malformed."""
    if not value:
        return ""
    quote = value[0]
    if quote not in "'\"":
        # Unquoted: an inline comment starts at " #".
        cut = value.find(" #")
        return (value[:cut] if cut >= 0 else value).rstrip()
    end = 1
    out: list[str] = []
    while end < len(value):
        ch = value[end]
        if ch == quote:
            rest = value[end + 1:].strip()
            return "".join(out) if not rest or rest.startswith("#") else None
        if ch == "\\" and quote == '"' and end + 1 < len(value):
            nxt = value[end + 1]
            out.append(_DOUBLE_ESCAPES.get(nxt, "\\" + nxt))
            end += 2
            continue
        out.append(ch)
        end += 1
    return None  # unterminated quote


def dotenv_entries(text: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The ``KEY=VALUE`` pairs of a ``.env`` text and a message for each bad line (naming the
    line number only, never its text).  Blank lines and ``#`` comments are skipped; ``export``
    is allowed; values may be single-quoted (literal), double-quoted (``\\n``, ``\\t``, ``\\"``,
    ``\\\\`` escapes) or bare (an inline comment starts at `` #``).  Values are not expanded.
    A later line wins over an earlier one with the same key."""
    values: dict[str, str] = {}
    bad: list[str] = []
    if len(text) > MAX_DOTENV_BYTES:
        return values, (f"the file is larger than {MAX_DOTENV_BYTES} bytes",)
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _DOTENV_LINE.match(stripped)
        value = _unquote(m["value"]) if m else None
        if m is None or value is None:
            bad.append(f"line {number} is not KEY=VALUE")
            continue
        values[m["key"]] = value
    return values, tuple(bad)


def parse_dotenv(text: str) -> dict[str, str]:
    """The variables of a ``.env`` text (rules in :func:`dotenv_entries`).

    Raises :class:`ConfigError` listing every bad line (by number, never its content); fix
    the file and parse again.
    """
    values, bad = dotenv_entries(text)
    if bad:
        raise ConfigError([ConfigProblem(None, None, message) for message in bad])
    return values
