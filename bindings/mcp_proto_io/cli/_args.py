"""The ``mcp-proto`` command line: the parser, the table of where each flag applies, and the
arguments a tool call or a prompt takes (``--args JSON | @FILE | -``).

Every flag of the server commands is accepted by every server subcommand's parser (hidden from
the help where it does not apply) and before the subcommand (hidden there), then checked once
against :data:`FLAGS`: a flag given where it does not apply is a usage error naming the flag
and where it applies, never ignored.  The global options (:data:`GLOBAL_FLAGS`) are accepted
before and after the subcommand (shown in both helps).  An unknown flag gets "did you mean".

Usage errors raise :class:`UsageError` (the command exits 2 with its message).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from mcp_proto import HANDSHAKE_VERSIONS, MODERN_VERSIONS, Implementation, __version__
from mcp_proto.host import DIALECTS, TOOL_TARGETS

from ..host._config_files import LOCATION_NAMES

__all__ = [
    "CLIENT_INFO",
    "COMMANDS",
    "FLAGS",
    "GLOBAL_FLAGS",
    "MAX_ARGS_BYTES",
    "SERVER_COMMANDS",
    "FlagUse",
    "Mode",
    "UsageError",
    "build_parser",
    "check_flags",
    "json_object",
    "key_values",
    "load_args",
    "mode_of",
    "parse",
    "seconds",
    "url",
    "version_text",
]

#: Who the command says it is in each handshake (one name for every server it talks to).
CLIENT_INFO = Implementation(name="mcp-proto-cli", version=__version__)

Mode = Literal["command", "url", "config"]
MODES: tuple[Mode, ...] = ("command", "url", "config")

#: Where a mode comes from, as the user typed it (for the messages).
MODE_TEXT: dict[Mode, str] = {"command": "a command after `--`", "url": "--url",
                              "config": "--config"}

#: Bytes ``--args @FILE`` / ``--args -`` read at most: tool arguments are small JSON; a
#: bigger file is a mistake (a log, a binary), refused before it is parsed.
MAX_ARGS_BYTES = 16 * 1024 * 1024


class UsageError(Exception):
    """The command line is wrong (exit 2); the message says what to type instead."""


def seconds(text: str) -> float:
    """``--timeout``'s type: a finite number of seconds above 0 (argparse makes anything
    else a usage error: 0, -1, nan and inf would fail later, with a traceback)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"takes a number of seconds above 0, got {text!r}")
    return value


def url(text: str) -> str:
    """``--url``'s type: an http(s) URL; one without a scheme (``127.0.0.1:3000/mcp``) is a
    usage error suggesting ``http://`` (else it would fail as an unsupported URL later)."""
    scheme, sep, _ = text.partition("://")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r} has no scheme: did you mean "
                                         f"http://{text}?")
    if scheme.lower() not in ("http", "https"):
        raise argparse.ArgumentTypeError(f"{text!r}: the URL must be http:// or https://")
    return text


# -- the subcommands ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    """A subcommand's one-line help, its description and an example (its ``--help``)."""

    help: str
    description: str
    example: str


#: The subcommands that talk to a server given by ``-- COMMAND``, ``--url`` or ``--config``.
COMMANDS: dict[str, Command] = {
    "tools": Command(
        "list the tools",
        "List a server's tools (with --config: every server's, by public name).",
        "mcp-proto tools -- mcp-server-time\n"
        "  mcp-proto tools --url http://127.0.0.1:3001/mcp --json\n"
        "  mcp-proto --config servers.json tools --provider openai-strict --json"),
    "call": Command(
        "call a tool",
        "Call a tool and print its result (exit 1 if the result has isError).  With --config\n"
        "only the server that owns the tool is started.",
        "mcp-proto call get_current_time --args '{\"timezone\": \"UTC\"}' -- mcp-server-time\n"
        "  mcp-proto --config servers.json call time__get_current_time --args @args.json\n"
        "  echo '{\"a\": 1}' | mcp-proto call add --args - -- COMMAND"),
    "resources": Command(
        "list the resources",
        "List a server's resources (with --config: every server's, with a server column).",
        "mcp-proto resources -- npx -y @modelcontextprotocol/server-everything"),
    "templates": Command(
        "list the resource templates",
        "List a server's resource templates (with --config: every server's).",
        "mcp-proto --config servers.json templates --json"),
    "prompts": Command(
        "list the prompts",
        "List a server's prompts (with --config: every server's, by public name).",
        "mcp-proto --config servers.json prompts"),
    "read": Command(
        "read a resource",
        "Read one resource.  With --config it goes to the server that listed the URI, else\n"
        "to the one whose template matches (--server chooses one).",
        "mcp-proto read demo://readme -- python -m mcp_proto_io.cli.demo_server\n"
        "  mcp-proto --config servers.json read file:///notes.txt --server files"),
    "prompt": Command(
        "get a prompt",
        "Get one prompt with its arguments (a JSON object of strings) and print its messages.",
        "mcp-proto prompt greet --args '{\"name\": \"Ada\"}' -- COMMAND\n"
        "  mcp-proto --config servers.json prompt everything__simple_prompt"),
    "resume": Command(
        "wait for a task another run started",
        "Wait for a task a server runs (started by `call --task`) and print its result.",
        "mcp-proto resume 786512e2-9e0d-44bd-8f29-789f320fe840 --url http://127.0.0.1:8000/mcp"),
    "schema": Command(
        "one tool's input schema (as a provider takes it)",
        "Print one tool's input schema: its own, or with --provider as that provider takes\n"
        "it, with what was changed and why.",
        "mcp-proto --config servers.json schema git__git_status\n"
        "  mcp-proto schema get_current_time --provider openai-strict -- mcp-server-time"),
    "servers": Command(
        "the servers of --config",
        "List the servers of a config file (nothing starts).  With --check start each one and\n"
        "show its state, name and version, protocol version, era and tool count.",
        "mcp-proto --config claude-desktop servers\n"
        "  mcp-proto --config servers.json servers --check"),
}
SERVER_COMMANDS = frozenset(COMMANDS)

#: The other subcommands (their own parsers live in ``_host`` and ``_auth``).
OTHER_COMMANDS: dict[str, Command] = {
    "demo": Command(
        "run the bundled demo server and show a session",
        "Start the bundled demo server and walk through a session: handshake, tools across\n"
        "pages, calls, progress, an error result, resources.",
        "mcp-proto demo"),
    "config": Command(
        "check or convert a config file",
        "Check a config file (servers, what each expands to, warnings; values never shown) or\n"
        "write it in another dialect (templates kept: no secret needed).",
        "mcp-proto config check ~/.cursor/mcp.json\n"
        "  mcp-proto config convert claude_desktop_config.json --to vscode"),
    "login": Command(
        "authorize with an HTTP server and keep the tokens",
        "Authorize with an HTTP server (a browser, a loopback callback) and store the tokens\n"
        "every later --url command uses.",
        "mcp-proto login --url https://mcp.example.com/mcp"),
    "logout": Command(
        "forget the tokens kept for an HTTP server",
        "Forget the tokens stored for an HTTP server.",
        "mcp-proto logout --url https://mcp.example.com/mcp"),
    "auth": Command(
        "what authorization is stored",
        "Show what `login` stored: issuer, scopes and expiry per server (never a token).",
        "mcp-proto auth status"),
}

#: The commands that connect to something (``-v`` and ``--trace`` apply to them).
CONNECTING = SERVER_COMMANDS | {"demo", "login"}
#: The commands that read a config file (``--dialect``, ``--input``, ``--workspace``).
CONFIG_READERS = (SERVER_COMMANDS - {"resume"}) | {"config check", "config convert"}
_ONE_SERVER_ARGS = SERVER_COMMANDS - {"servers"}
#: What ``servers`` takes only with ``--check`` (without it nothing starts).
_NEED_CHECK = frozenset({"verbose", "trace", "timeout"})


# -- the flags ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FlagUse:
    """One flag: its option strings, the subcommands and modes it applies to, its default,
    its help (``helps`` gives a subcommand its own), and what ``add_argument`` takes beside."""

    names: tuple[str, ...]
    dest: str
    commands: frozenset[str]
    modes: frozenset[Mode]
    help: str
    default: Any = None
    helps: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> str:
        return self.names[-1] if self.names[-1].startswith("--") else self.names[0]

    def where(self) -> str:
        """Where it applies, in words: ``call, prompt with any server``."""
        commands = ", ".join(sorted(self.commands))
        if self.modes == frozenset(MODES):
            return commands
        return f"{commands}, with {' or '.join(MODE_TEXT[m] for m in MODES if m in self.modes)}"


_ANY = frozenset(MODES)

#: The flags of the server subcommands: every one is parsed by every server subcommand, then
#: checked here (:func:`check_flags`).
FLAGS: tuple[FlagUse, ...] = (
    FlagUse(("--json",), "json", SERVER_COMMANDS, _ANY, "print JSON instead of text",
            False, options={"action": "store_true"}),
    FlagUse(("--timeout",), "timeout", SERVER_COMMANDS, _ANY,
            "seconds per request; with --config also for the whole open (default 60)", 60.0,
            options={"type": seconds, "metavar": "S"}),
    FlagUse(("--url",), "url", _ONE_SERVER_ARGS, frozenset({"url"}),
            "a Streamable HTTP (or SSE) endpoint instead of a command",
            options={"type": url, "metavar": "URL"}),
    FlagUse(("--env",), "env", _ONE_SERVER_ARGS, frozenset({"command"}),
            "extra environment variable for the server (repeatable)", [],
            options={"action": "append", "metavar": "KEY=VALUE"}),
    FlagUse(("--cwd",), "cwd", _ONE_SERVER_ARGS, frozenset({"command"}),
            "working directory of the server", options={"metavar": "DIR"}),
    FlagUse(("--header",), "header", _ONE_SERVER_ARGS, frozenset({"url"}),
            "extra HTTP header (repeatable)", [],
            options={"action": "append", "metavar": "NAME:VALUE"}),
    FlagUse(("--store",), "store", _ONE_SERVER_ARGS, frozenset({"url"}),
            "the token store `mcp-proto login` wrote", options={"metavar": "DIR"}),
    FlagUse(("--allow-http",), "allow_http", _ONE_SERVER_ARGS, frozenset({"url"}),
            "allow plain http to a non-loopback authorization server", False,
            options={"action": "store_true"}),
    FlagUse(("--provider",), "provider", frozenset({"tools", "call", "schema"}), _ANY,
            "a model provider", helps={
                "tools": "print the tools as that provider's tool definitions (--json: the "
                         "definitions themselves)",
                "call": "apply that provider's argument fixes first (openai-strict: drop the "
                        "nulls sent for optional fields)",
                "schema": "normalize the schema for that provider and say what changed"},
            options={"choices": TOOL_TARGETS, "metavar": "PROVIDER"}),
    FlagUse(("--args",), "args", frozenset({"call", "prompt"}), _ANY,
            "arguments: a JSON object, @FILE (a JSON file) or - (read stdin)",
            options={"metavar": "JSON|@FILE|-"}),
    FlagUse(("--task",), "task", frozenset({"call"}), _ANY,
            "run it as a task where the tool allows (status lines on stderr)", False,
            options={"action": "store_true"}),
    FlagUse(("--progress",), "progress", frozenset({"call"}), _ANY,
            "show progress on stderr even when it is not a terminal (plain lines)", False,
            options={"action": "store_true"}),
    FlagUse(("--check",), "check", frozenset({"servers"}), frozenset({"config"}),
            "start each server, show what it is, stop it", False,
            options={"action": "store_true"}),
)

#: The global options: accepted before and after the subcommand.
GLOBAL_FLAGS: tuple[FlagUse, ...] = (
    FlagUse(("--config",), "config", SERVER_COMMANDS - {"resume"}, _ANY,
            "an mcpServers config file, or one of: " + ", ".join(LOCATION_NAMES),
            options={"metavar": "FILE"}),
    FlagUse(("--dialect",), "dialect", CONFIG_READERS, frozenset({"config"}),
            "the config's dialect (default: from the file name, then its keys)",
            options={"choices": DIALECTS, "metavar": "DIALECT"}),
    FlagUse(("--input",), "input", CONFIG_READERS, frozenset({"config"}),
            "a value for ${input:ID} (VS Code; repeatable; also MCP_PROTO_INPUT_<ID>, which "
            "the servers do not inherit)", [],
            options={"action": "append", "metavar": "ID=VALUE"}),
    FlagUse(("--workspace",), "workspace", CONFIG_READERS, frozenset({"config"}),
            "the project folder: standard names read its file first (.vscode/mcp.json, "
            ".mcp.json ...); ${workspaceFolder}", options={"metavar": "DIR"}),
    FlagUse(("--server",), "server", SERVER_COMMANDS - {"resume"}, frozenset({"config"}),
            "with --config: only this server (repeatable); read: the server to ask", [],
            options={"action": "append", "metavar": "NAME"}),
    FlagUse(("-v", "--verbose"), "verbose", CONNECTING, _ANY,
            "show each server's stderr and log messages on stderr, prefixed [name]", False,
            options={"action": "store_true"}),
    FlagUse(("--trace",), "trace", CONNECTING, _ANY,
            "print every JSON-RPC message both ways on stderr (credentials redacted)", False,
            options={"action": "store_true"}),
    FlagUse(("--record",), "record", SERVER_COMMANDS, _ANY,
            "write the session as a transcript (JSON lines, credentials redacted) to PATH, "
            "for connect_replay; with --config PATH is a folder: one NAME.jsonl a server",
            options={"metavar": "PATH"}),
)

#: The prefix of the dest a global option given after the subcommand is parsed into.
_LATE = "late_"
#: The prefix of the dest a server flag given before the subcommand is parsed into.
_EARLY = "early_"
#: The namespace attribute listing the server flags given before the subcommand (checked
#: against a subcommand that is not a server command).
_EARLY_GIVEN = "early_given"
#: How close an unknown flag must be to a known one for "did you mean" (difflib ratio).
FLAG_CUTOFF = 0.6
#: Commands whose help's usage ends with how the one server is given.
_COMMAND_TAIL = " [-- COMMAND ...]"


def version_text() -> str:
    """What ``--version`` prints."""
    return (f"mcp-proto {__version__}\n"
            f"protocol versions: {', '.join(MODERN_VERSIONS)} (stateless), "
            f"{', '.join(HANDSHAKE_VERSIONS)} (handshake)\n"
            f"python {platform.python_version()} ({platform.python_implementation()})\n")


class _ShowVersion(Exception):
    """``--version`` was given: print :func:`version_text` and exit 0."""


class _VersionAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        raise _ShowVersion


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every long option of ``parser`` and of the subcommands under it."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= _option_strings(child)
    return found


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose unknown subcommand or flag gets "did you mean"."""

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            known = sorted(_option_strings(self))
            hints = []
            for extra in extras:
                flag = extra.partition("=")[0]
                close = difflib.get_close_matches(flag, known, n=1, cutoff=FLAG_CUTOFF) \
                    if flag.startswith("-") else []
                if close:
                    who = f"{flag}: " if len(extras) > 1 else ""
                    hints.append(f"{who}did you mean {close[0]}?")
            hint = f" ({'; '.join(hints)})" if hints else ""
            self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if isinstance(action, argparse._SubParsersAction) and action.choices is not None \
                and value not in action.choices:
            choices = list(action.choices)
            close = difflib.get_close_matches(str(value), choices, n=3, cutoff=0.5)
            hint = f"; did you mean {' or '.join(close)}?" if close else \
                f" (one of: {', '.join(choices)})"
            raise argparse.ArgumentError(action, f"unknown command {value!r}{hint}")
        super()._check_value(action, value)


def _add(parser: argparse.ArgumentParser | Any, use: FlagUse, dest: str,
         help_text: str) -> None:
    parser.add_argument(*use.names, dest=dest, default=argparse.SUPPRESS, help=help_text,
                        **use.options)


def _add_globals(parser: argparse.ArgumentParser, late: bool, command: str | None) -> None:
    group = parser.add_argument_group("global options (before or after the command)")
    for use in GLOBAL_FLAGS:
        shown = command is None or command in use.commands
        _add(group, use, _LATE + use.dest if late else use.dest,
             use.help if shown else argparse.SUPPRESS)


def _sub(sub: Any, name: str, command: Command) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=command.help, description=command.description,
        epilog="example:\n  " + command.example,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser


def build_parser(add_others: Callable[[Any], None] | None = None) -> argparse.ArgumentParser:
    """The whole parser.  ``add_others(add)`` adds the config and auth subcommands through
    ``add(name)``, which returns a parser with the description, the example and the global
    options (``config`` and ``auth`` add their own actions under it)."""
    p = _Parser(
        prog="mcp-proto",
        description="Talk to MCP servers: one given by a command after `--` or --url, or the "
                    "servers of a config file (--config).",
        epilog="examples:\n  mcp-proto demo\n  mcp-proto tools -- mcp-server-time\n"
               "  mcp-proto --config claude-desktop servers --check\n"
               "  mcp-proto --config servers.json call time__get_current_time "
               "--args '{\"timezone\": \"UTC\"}'\n"
               "\nexit status: 0 success, 1 the server or the call failed, 2 usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_VersionAction, nargs=0,
                   help="the version, the protocol versions it speaks, the Python")
    _add_globals(p, late=False, command=None)
    for use in FLAGS:  # before the command too (`--timeout 5 --config F call X`): hidden
        _add(p, use, _EARLY + use.dest, argparse.SUPPRESS)
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    demo = _sub(sub, "demo", OTHER_COMMANDS["demo"])
    demo.add_argument("--timeout", type=seconds, default=60.0, help=argparse.SUPPRESS)
    _add_globals(demo, late=True, command="demo")
    for name, command in COMMANDS.items():
        sp = _sub(sub, name, command)
        _positionals(sp, name)
        for use in FLAGS:
            shown = use.helps.get(name, use.help) if name in use.commands \
                else argparse.SUPPRESS
            _add(sp, use, use.dest, shown)
        _add_globals(sp, late=True, command=name)
        if name in _ONE_SERVER_ARGS:  # how the server is given: `-- COMMAND` ends the line
            usage = sp.format_usage().removeprefix("usage: ").rstrip("\n")
            sp.usage = usage.replace("%", "%%") + _COMMAND_TAIL
    if add_others is not None:
        def add(name: str, under: Any = sub, command: str | None = None) -> Any:
            parser = _sub(under, name, OTHER_COMMANDS.get(name) or _LEAVES[command or name])
            if name not in ("config", "auth"):
                _add_globals(parser, late=True, command=command or name)
            return parser

        add_others(add)
    return p


#: The actions under ``config`` and ``auth``: their help, description and example.
_LEAVES: dict[str, Command] = {
    "config check": Command(
        "parse, expand and validate (values not shown)",
        "Parse a config file, expand its variables and show its servers (names of env\n"
        "variables and headers, never values) and every warning.",
        "mcp-proto config check claude_desktop_config.json\n"
        "  mcp-proto config check vscode --workspace ~/src/project"),
    "config convert": Command(
        "write the config in another dialect",
        "Write a config in another dialect; ${VAR} and ${input:ID} stay templates (no secret\n"
        "is needed, none is written).",
        "mcp-proto config convert .mcp.json --to vscode -o .vscode/mcp.json"),
    "auth status": Command(
        "issuer, scopes and expiry per server",
        "What `login` stored, per server: issuer, scopes, expiry (never a token).",
        "mcp-proto auth status --json"),
}


def _positionals(sp: argparse.ArgumentParser, name: str) -> None:
    if name == "call":
        sp.add_argument("tool", help="the tool's name (with --config: its public name)")
    elif name == "resume":
        sp.add_argument("task_id", nargs="?", help="the task id")
        sp.add_argument("--id", dest="task_id_option", metavar="TASK_ID",
                        help="the task id (for an id that starts with '-': --id=-abc)")
    elif name == "read":
        sp.add_argument("uri", help="the resource's URI")
    elif name == "prompt":
        sp.add_argument("name", help="the prompt's name (with --config: its public name)")
    elif name == "schema":
        sp.add_argument("name", help="the tool's name (with --config: its public name)")


# -- parsing and checking ----------------------------------------------------------------------


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | str:
    """``argv`` parsed, global options merged (given after the subcommand too: lists
    appended, a value given after wins).  ``version`` (a str) for ``--version``.  Raises
    SystemExit as argparse does for a bad command line and for ``--help``."""
    try:
        args = parser.parse_args(list(argv))
    except _ShowVersion:
        return "version"
    early_given = []
    for use in FLAGS:  # a server flag before the command: merged as a global option is
        early = _EARLY + use.dest
        if not hasattr(args, early):
            continue
        value = getattr(args, early)
        delattr(args, early)
        early_given.append(use)
        if not hasattr(args, use.dest):
            setattr(args, use.dest, value)
        elif isinstance(value, list):
            setattr(args, use.dest, [*value, *getattr(args, use.dest)])
        # else the value given after the command wins
    setattr(args, _EARLY_GIVEN, early_given)
    for use in GLOBAL_FLAGS:
        late = _LATE + use.dest
        if not hasattr(args, late):
            continue
        value = getattr(args, late)
        delattr(args, late)
        if isinstance(value, list) and isinstance(getattr(args, use.dest, None), list):
            value = [*getattr(args, use.dest), *value]
        setattr(args, use.dest, value)
    return args


def command_key(args: argparse.Namespace) -> str:
    """The subcommand as the table names it: ``tools``, ``config check``, ``auth status``."""
    cmd = str(args.cmd)
    if cmd == "config":
        return f"config {args.config_cmd}"
    if cmd == "auth":
        return f"auth {args.auth_cmd}"
    return cmd


def mode_of(args: argparse.Namespace, command: Sequence[str]) -> Mode | None:
    """How the server is given: ``config``, ``url`` or ``command``; None for a subcommand
    that takes none.  UsageError for none or more than one (for a server subcommand)."""
    key = command_key(args)
    if key in ("config check", "config convert"):
        return "config"
    if key not in SERVER_COMMANDS:
        if command:
            raise UsageError(f"`{key}` takes no command after `--`")
        return None
    given: list[Mode] = []
    if getattr(args, "config", None) is not None:
        given.append("config")
    if getattr(args, "url", None) is not None:
        given.append("url")
    if command:
        given.append("command")
    if len(given) > 1:
        raise UsageError("give one server: either --config FILE, --url URL or a command after "
                         f"`--` (got {' and '.join(MODE_TEXT[m] for m in given)})")
    if key == "servers" and given != ["config"]:
        raise UsageError("`servers` needs --config FILE (the servers of a config file)")
    if not given:
        raise UsageError(f"`{key}` needs a server: a command after `--` (e.g. `mcp-proto "
                         f"{key} -- mcp-server-time`), --url URL or --config FILE")
    return given[0]


def check_flags(args: argparse.Namespace, mode: Mode | None) -> None:
    """Refuse every flag given where it does not apply (:class:`UsageError` naming it and
    where it applies), then fill in the defaults of those not given."""
    key = command_key(args)
    table = [*GLOBAL_FLAGS, *FLAGS] if key in SERVER_COMMANDS else list(GLOBAL_FLAGS)
    early: list[FlagUse] = getattr(args, _EARLY_GIVEN, [])
    if hasattr(args, _EARLY_GIVEN):
        delattr(args, _EARLY_GIVEN)
    if key not in SERVER_COMMANDS:  # a server flag typed before another command
        for use in early:
            raise UsageError(f"{use.flag} applies to {use.where()}; not to `{key}`")
    for use in table:
        if not hasattr(args, use.dest):
            continue
        if key not in use.commands:
            raise UsageError(f"{use.flag} applies to {use.where()}; not to `{key}`")
        if mode is not None and mode not in use.modes:
            raise UsageError(f"{use.flag} applies to {use.where()}; not with "
                             f"{MODE_TEXT[mode]}")
    if key == "servers" and not getattr(args, "check", False):
        for use in table:  # without --check nothing starts: these would do nothing
            if use.dest in _NEED_CHECK and hasattr(args, use.dest):
                raise UsageError(f"{use.flag} with `servers` needs --check (without it "
                                 "nothing starts)")
    for use in table:
        if not hasattr(args, use.dest):
            default = use.default
            setattr(args, use.dest, list(default) if isinstance(default, list) else default)


# -- values ------------------------------------------------------------------------------------


def key_values(pairs: list[str], flag: str, form: str = "KEY=VALUE") -> dict[str, str]:
    """``KEY=VALUE`` options (``--env``, ``--input``) as a dict; :class:`UsageError` naming
    the option for a malformed one (the value is not echoed: it may be a secret)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} takes {form}, got {pair.partition('=')[0]!r}")
        out[key] = value
    return out


def json_object(text: str, what: str) -> dict[str, Any]:
    """``text`` as a JSON object; :class:`UsageError` naming ``what`` otherwise."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def load_args(text: str | None, stdin: TextIO | None = None) -> dict[str, Any] | None:
    """``--args``: JSON text, ``@FILE`` (a JSON file) or ``-`` (stdin).  :class:`UsageError`
    naming the file for one that cannot be read, is too big or is not a JSON object."""
    if text is None:
        return None
    if text == "-":
        stream = sys.stdin if stdin is None else stdin
        data = stream.read(MAX_ARGS_BYTES + 1)
        if len(data) > MAX_ARGS_BYTES:
            raise UsageError(f"--args -: stdin has more than {MAX_ARGS_BYTES} bytes")
        return json_object(data, "--args - (stdin)")
    if text.startswith("@"):
        path = os.path.expanduser(text[1:])
        try:
            with open(path, encoding="utf-8-sig") as f:
                data = f.read(MAX_ARGS_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"--args {text}: cannot read {path}: "
                             f"{exc.strerror or type(exc).__name__}") from None
        except UnicodeDecodeError:
            raise UsageError(f"--args {text}: {path} is not UTF-8 text") from None
        if len(data) > MAX_ARGS_BYTES:
            raise UsageError(f"--args {text}: {path} is larger than {MAX_ARGS_BYTES} bytes")
        return json_object(data, f"--args {text}")
    return json_object(text, "--args")
