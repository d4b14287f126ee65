"""Approvals: whether a tool call may be sent, decided before anything is sent (pure).

:meth:`ApprovalPolicy.decide` gives ``"allow"``, ``"ask"`` or ``"deny"`` and a reason for
one tool of one server.  It looks, in this order, and the first step that decides wins:

0. **The config's filters** (always, whatever the policy): a tool matched by
   ``spec.exclude_tools`` (Windsurf ``disabledTools``, Gemini ``excludeTools``, Codex
   ``disabled_tools``), or missing from ``spec.include_tools`` when that is set (Gemini
   ``includeTools``, Codex ``enabled_tools``), is denied.  The host never lists such a tool
   anyway; this step makes a rule unable to allow what the config disabled.
1. **The policy's rules** (:class:`ApprovalRule`), first match wins: case-sensitive
   ``fnmatch`` globs over the server's name and the tool's own name (as its server names
   it, not the public name).
2. **The config's approval keys** (unless ``use_config=False``), most specific first:

   ========================  =======================================  =====================
   dialect                   key (as written)                         read from
   ========================  =======================================  =====================
   Codex                     ``tools.<tool>.approval_mode``           ``spec.raw["tools"]``
   Kiro / ADK-Rust, generic  ``autoApprove`` (tool globs, ``*``)      ``spec.auto_approve``
   Cline / Roo (generic)     ``alwaysAllow``                          ``spec.auto_approve``
   Gemini                    ``trust: true`` (= ``("*",)``)           ``spec.auto_approve``
   Codex                     ``default_tools_approval_mode``          ``spec.raw``
   ========================  =======================================  =====================

   A matching auto-approve glob allows.  A Codex mode (``AppToolApproval`` in Codex's
   ``codex-rs/config/src/mcp_types.rs``; its meaning in ``requires_mcp_tool_approval_for_mode``
   of ``codex-rs/core/src/mcp_tool_call.rs``; the per-tool mode replaces the server's
   default, as in Codex's ``custom_mcp_tool_approval_mode``) maps by :data:`CODEX_MODES`:
   ``approve`` allows, ``prompt`` asks, ``writes`` allows a tool marked ``readOnlyHint: true``
   and asks for any other (the config chose to believe that server's read-only hint: the
   one place an annotation counts without ``trusted``), ``auto`` (Codex's default) decides
   nothing here: the next steps do.  A mode of another value asks (Codex would refuse the
   file; asking is the safe reading).  Claude Code keeps its approvals in its settings
   (``mcp__server__tool`` permission rules), not in the server entries: nothing to read.
3. **Tool annotations, only for a trusted server** (its name matches a ``trusted`` glob;
   spec SEC-01: annotations from other servers are untrusted and change nothing).  Each
   hint that is exactly ``true`` gives its decision: ``readOnlyHint`` -> ``read_only``,
   ``destructiveHint`` -> ``destructive``, ``openWorldHint`` -> ``open_world`` (None: that
   hint has no effect; ``open_world`` is None by default).  When several apply the strictest
   wins (deny over ask over allow): a tool that says it is read-only and destructive is
   treated as destructive, as Codex does.  An absent hint is not read as the spec's default
   (``destructiveHint`` and ``openWorldHint`` default to true): a tool without hints gets
   ``default``, so choose ``default`` for what an unannotated tool should get.
4. **The policy's** ``default``.

A decision of ``"ask"`` calls the host's ``ask`` callback with one :class:`ApprovalRequest`;
its answer is ``"allow"`` / ``"deny"`` (any case, blanks around ignored) or ``True`` /
``False``; anything else, an exception in the callback, or no callback at all denies, with
a reason (:meth:`ApprovalPolicy.answer`).  A denial is :class:`ToolDenied` on a direct call
and :func:`denied_result` (an ``isError`` result the model can read) on the provider and
meta-tool paths.  No policy (``approval=None``, :func:`as_policy`) allows everything, as
before approvals existed.

A binding carries a call through the policy in three steps, the same in every runtime::

    request = policy.check(spec, public, tool, arguments)   # raises ToolDenied
    if request is not None:                                 # "ask"
        try:
            value = policy.ask(request)                     # awaited if awaitable
        except Exception as exc:
            policy.settle_error(request, exc)               # raises ToolDenied
        policy.settle(request, value)                       # raises ToolDenied on a no
    # ... only now is the call sent

Reasons and messages name servers, tools and config keys, never an argument value.  Work per
decision: the rules are scanned once in order (each glob compiled when the policy is built;
at most :data:`MAX_RULES`); the config's glob lists compile once per distinct list (a small
bounded cache) and each is then one regex match.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NoReturn

from .._errors import MCPError
from .._types import CallToolResult, TextContent, Tool
from ._spec import ServerSpec

__all__ = [
    "ANSWERS",
    "CODEX_MODES",
    "DECISIONS",
    "MAX_CACHED_GLOB_LISTS",
    "MAX_RULES",
    "MAX_SHOWN_CHARS",
    "MAX_TRUSTED",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalRule",
    "AskCallback",
    "Decision",
    "ToolDenied",
    "as_policy",
    "denied_result",
]

Decision = Literal["allow", "ask", "deny"]
#: Every decision, from the most permissive to the strictest.
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
_STRICTNESS: dict[str, int] = {d: i for i, d in enumerate(DECISIONS)}

#: The answers an ``ask`` callback may give as a string (compared lower-cased, stripped).
ANSWERS: Mapping[str, bool] = MappingProxyType({"allow": True, "deny": False})

#: Rules one policy holds at most: ``decide`` scans them in order on every call, so the bound
#: keeps a call's cost small; a person writes a handful, and a list of thousands is generated
#: data that belongs in a callable (``ask``) or in the config's own keys.
MAX_RULES = 1_000

#: ``trusted`` globs one policy holds at most (they compile into one regex; the same reason).
MAX_TRUSTED = 1_000

#: Distinct config glob lists (``include_tools``, ``exclude_tools``, ``auto_approve``) kept
#: compiled: three lists for each of a host's servers (64 at most by default) with room for a
#: config read again; past it the oldest list is compiled again when next used.
MAX_CACHED_GLOB_LISTS = 256

#: Characters of a server's or tool's name shown in a reason or message: names come from
#: config files and servers, and a message stays readable however long they are.
MAX_SHOWN_CHARS = 100

#: A callable that answers one :class:`ApprovalRequest` (or returns an awaitable of the answer,
#: for the async bindings): ``"allow"`` / ``"deny"`` / ``True`` / ``False``.
AskCallback = Callable[["ApprovalRequest"], object]

#: Codex ``approval_mode`` / ``default_tools_approval_mode`` value -> its meaning: a decision,
#: ``"writes"`` (allow a tool marked read-only, ask for any other) or None (``auto``: no
#: decision from the config; annotations of a trusted server and the default decide).
CODEX_MODES: Mapping[str, Decision | Literal["writes"] | None] = MappingProxyType({
    "auto": None, "prompt": "ask", "writes": "writes", "approve": "allow",
})

#: Annotation key -> the policy field giving its decision (step 3).
_HINTS: tuple[tuple[str, str], ...] = (
    ("readOnlyHint", "read_only"), ("destructiveHint", "destructive"),
    ("openWorldHint", "open_world"),
)

#: Matches nothing (an empty glob list).
_NOTHING = re.compile(r"(?!)")

#: A short word a message may show as it is (an answer like ``'yes'``, a mode like ``'never'``).
_SHOWN_WORD = re.compile(r"[A-Za-z0-9_. -]{1,32}\Z")


def _shown(name: str) -> str:
    """``name`` quoted for a message, cut to :data:`MAX_SHOWN_CHARS`."""
    if len(name) <= MAX_SHOWN_CHARS:
        return repr(name)
    return repr(name[:MAX_SHOWN_CHARS]) + f"... ({len(name):,} characters)"


def _word(value: object) -> str:
    """A value a message may quote (a short word), else a description of its type."""
    if isinstance(value, str) and _SHOWN_WORD.match(value):
        return repr(value)
    return f"a value of type {type(value).__name__}"


def _check_decision(what: str, value: object, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, str) and value in DECISIONS:
        return
    allowed = ", ".join(map(repr, DECISIONS)) + (" or None" if optional else "")
    shown = repr(value) if isinstance(value, str) and len(value) <= 40 else _word(value)
    raise ValueError(f"{what} must be one of {allowed}, not {shown}")


def _glob(what: str, pattern: object) -> re.Pattern[str] | None:
    """One glob compiled (None: ``*``, which matches every name)."""
    if not isinstance(pattern, str):
        raise TypeError(f"{what} must be a glob string, not {type(pattern).__name__}")
    return None if pattern == "*" else re.compile(fnmatch.translate(pattern))


def _globs(what: str, patterns: object, limit: int) -> tuple[str, ...]:
    if isinstance(patterns, str):
        raise TypeError(f"{what} must be a sequence of globs, not one string")
    if not isinstance(patterns, Sequence | frozenset | set):
        raise TypeError(f"{what} must be a sequence of globs, not {type(patterns).__name__}")
    out = tuple(patterns)
    if len(out) > limit:
        raise ValueError(f"{what} has {len(out):,} globs; at most {limit:,}")
    for pattern in out:
        if not isinstance(pattern, str):
            raise TypeError(f"{what} globs must be strings, not {type(pattern).__name__}")
    return out


@functools.lru_cache(maxsize=MAX_CACHED_GLOB_LISTS)
def _glob_list(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """A config glob list as one regex (an empty list matches nothing)."""
    if not patterns:
        return _NOTHING
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _in(patterns: object, name: str) -> bool:
    """Whether ``name`` matches one of a spec's globs (entries that are no string, in a spec
    built by hand, are skipped: such a list cannot have been parsed from a file)."""
    if not isinstance(patterns, tuple | list):
        return False
    usable = tuple(p for p in patterns if isinstance(p, str))
    return _glob_list(usable).match(name) is not None


def _hint(tool: Tool, key: str) -> bool:
    """Whether the tool's annotation ``key`` is exactly ``true`` (a string ``"true"``, a
    number or anything else is no hint)."""
    annotations = tool.annotations
    return isinstance(annotations, dict) and annotations.get(key) is True


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """One rule of a policy: ``decision`` for the tools whose server's name matches
    ``server`` and whose own name (as the server names it) matches ``tool``.  Both are
    case-sensitive ``fnmatch`` globs (``*``, ``?``, ``[seq]``, ``[!seq]``) or exact names.

    ``ValueError`` for a decision other than ``"allow"``, ``"ask"``, ``"deny"`` (naming it);
    ``TypeError`` for a glob that is not a string.  The globs compile once, here."""

    decision: Decision
    server: str = "*"
    tool: str = "*"
    _server: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _tool: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_decision("an ApprovalRule's decision", self.decision)
        object.__setattr__(self, "_server", _glob("an ApprovalRule's server", self.server))
        object.__setattr__(self, "_tool", _glob("an ApprovalRule's tool", self.tool))

    def matches(self, server: str, tool: str) -> bool:
        """Whether the rule covers ``tool`` of ``server`` (the tool's own name)."""
        return ((self._server is None or self._server.match(server) is not None)
                and (self._tool is None or self._tool.match(tool) is not None))


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What the host's ``ask`` callback is given, once per call to approve: the ``server``'s
    name, the ``tool``'s own name and its ``public`` name (what the model called), the
    ``arguments`` it would be sent (a read-only copy; not in the ``repr``: it may hold
    secrets), the tool's ``annotations`` (a copy, None without) and whether they are to be
    believed (``trusted``: the server matches the policy's ``trusted`` globs; otherwise they
    are only what the server claims), and the ``reason`` the policy asks."""

    server: str
    tool: str
    public: str
    arguments: Mapping[str, Any] = field(repr=False)
    annotations: dict[str, Any] | None
    trusted: bool
    reason: str


class ToolDenied(MCPError, PermissionError):
    """The approval policy did not let the call through: nothing was sent.

    ``server`` and ``tool`` (its own name) say which tool, ``public`` the name the caller
    used, ``reason`` why (a rule, a config key, the answer of the ``ask`` callback ...).  The
    message names them and never an argument value.  On the provider and meta-tool paths
    the host gives the model :func:`denied_result` instead; a direct caller tells its user,
    or calls another tool.  (As a ``PermissionError`` it is an ``OSError`` too: catch it
    before any ``except OSError`` that means a broken connection.)"""

    def __init__(self, server: str, tool: str, public: str, reason: str) -> None:
        self.server = server
        self.tool = tool
        self.public = public
        self.reason = reason
        own = "" if public == tool else f" (tool {_shown(tool)})"
        super().__init__(f"call of {_shown(public)}{own} on server {_shown(server)} "
                         f"denied: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickles by its fields, not its message
        return (type(self), (self.server, self.tool, self.public, self.reason))


def denied_result(exc: ToolDenied) -> CallToolResult:
    """A denial as an ``isError`` tool result for the model: what was not done, why, and
    what to do instead (``raw`` is the same result as MCP JSON)."""
    text = (f"Tool call denied: {_shown(exc.public)} was not run and nothing was sent to its "
            f"server. Reason: {exc.reason}. Do not call it again unless the user asks you "
            "to; continue without it, or ask the user.")
    raw = {"content": [{"type": "text", "text": text}], "isError": True}
    return CallToolResult(content=(TextContent(text=text),), is_error=True, raw=raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalPolicy:
    """Which tool calls a host sends: see the module docstring for the order of the steps.

    ``rules`` (:class:`ApprovalRule`, first match wins, at most :data:`MAX_RULES`);
    ``default`` for a call no step decides; ``ask`` the callback for ``"ask"`` (None: an
    ``"ask"`` is a denial, nobody being there to answer); ``trusted`` globs of the servers
    whose annotations count; ``use_config`` whether the config's approval keys count;
    ``read_only`` / ``destructive`` / ``open_world`` the decision of each annotation of a
    trusted server (None: no effect).

    ``ValueError`` for a decision that is not ``"allow"``, ``"ask"`` or ``"deny"`` (naming
    it) or too many rules or globs; ``TypeError`` for a rule that is no
    :class:`ApprovalRule`, globs given as one string, a non-callable ``ask`` or a
    non-boolean ``use_config``.  Every glob compiles once, here."""

    rules: Sequence[ApprovalRule] = ()
    default: Decision = "allow"
    ask: AskCallback | None = None
    trusted: Sequence[str] = ()
    use_config: bool = True
    read_only: Decision | None = "allow"
    destructive: Decision | None = "ask"
    open_world: Decision | None = None
    _trusted: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.rules, ApprovalRule):
            raise TypeError("rules must be a sequence of ApprovalRule, not one rule")
        if not isinstance(self.rules, Sequence):
            raise TypeError(f"rules must be a sequence of ApprovalRule, not "
                            f"{type(self.rules).__name__}")
        rules = tuple(self.rules)
        if len(rules) > MAX_RULES:
            raise ValueError(f"{len(rules):,} rules; a policy holds at most {MAX_RULES:,}")
        for i, rule in enumerate(rules, 1):
            if not isinstance(rule, ApprovalRule):
                raise TypeError(f"rule {i} must be an ApprovalRule, not "
                                f"{type(rule).__name__}")
        object.__setattr__(self, "rules", rules)
        _check_decision("default", self.default)
        for _key, name in _HINTS:
            _check_decision(name, getattr(self, name), optional=True)
        if self.ask is not None and not callable(self.ask):
            raise TypeError(f"ask must be a callable or None, not {type(self.ask).__name__}")
        if not isinstance(self.use_config, bool):
            raise TypeError(f"use_config must be True or False, not "
                            f"{type(self.use_config).__name__}")
        trusted = _globs("trusted", self.trusted, MAX_TRUSTED)
        object.__setattr__(self, "trusted", trusted)
        object.__setattr__(self, "_trusted", _NOTHING if not trusted else re.compile(
            "|".join(fnmatch.translate(p) for p in trusted)))

    @classmethod
    def from_callable(cls, ask: AskCallback) -> ApprovalPolicy:
        """The ``ask`` step alone: every call the config does not approve (or disable) is
        asked (``default="ask"``); nothing else changes.  ``TypeError`` if not callable."""
        return cls(default="ask", ask=ask)

    def is_trusted(self, server: str) -> bool:
        """Whether the annotations of ``server``'s tools count (a ``trusted`` glob matches)."""
        return self._trusted.match(server) is not None

    # -- deciding -----------------------------------------------------------------------

    def decide(self, spec: ServerSpec, tool: Tool) -> tuple[Decision, str]:
        """The decision for ``tool`` (as its server listed it) of the server ``spec``, and
        why (a phrase naming the rule, config key, annotation or default that decided; no
        argument values).  Pure and total: every spec and tool gets a decision."""
        server, name = spec.name, tool.name
        if spec.exclude_tools and _in(spec.exclude_tools, name):
            return "deny", ("the config disables it (disabledTools / excludeTools / "
                            "disabled_tools)")
        if spec.include_tools is not None and not _in(spec.include_tools, name):
            return "deny", "the config does not include it (includeTools / enabled_tools)"
        for i, rule in enumerate(self.rules, 1):
            if rule.matches(server, name):
                return rule.decision, (f"rule {i} of the policy (server {_shown(rule.server)}"
                                       f", tool {_shown(rule.tool)}) says {rule.decision}")
        if self.use_config:
            found = _from_config(spec, tool)
            if found is not None:
                return found
        if self.is_trusted(server):
            found = self._from_annotations(tool)
            if found is not None:
                return found
        return self.default, f"the policy's default is {self.default}"

    def _from_annotations(self, tool: Tool) -> tuple[Decision, str] | None:
        best: tuple[Decision, str] | None = None
        for key, name in _HINTS:
            decision: Decision | None = getattr(self, name)
            if decision is None or not _hint(tool, key):
                continue
            if best is None or _STRICTNESS[decision] > _STRICTNESS[best[0]]:
                best = decision, (f"the trusted server marks it {key}, and the policy says "
                                  f"{decision} for that")
        return best

    # -- asking ---------------------------------------------------------------------------

    def request(self, spec: ServerSpec, public: str, tool: Tool,
                arguments: Mapping[str, Any] | None, *,
                reason: str | None = None) -> ApprovalRequest:
        """The :class:`ApprovalRequest` for a call of ``tool`` of ``spec`` under its
        ``public`` name with ``arguments`` (None: none).  ``reason`` None: the reason
        :meth:`decide` gives."""
        if reason is None:
            reason = self.decide(spec, tool)[1]
        annotations = tool.annotations
        return ApprovalRequest(
            server=spec.name, tool=tool.name, public=public,
            arguments=MappingProxyType(dict(arguments or {})),
            annotations=dict(annotations) if isinstance(annotations, dict) else None,
            trusted=self.is_trusted(spec.name), reason=reason)

    def answer(self, value: object) -> tuple[bool, str]:
        """What the ``ask`` callback's answer means: (allowed, why).  ``"allow"`` /
        ``"deny"`` in any case with blanks around, ``True`` / ``False``; anything else (1,
        ``"yes"``, None, ``"ask"`` ...) denies, the reason saying what was expected.  An
        awaitable denies too (an async callback where the host calls it synchronously); a
        coroutine is closed, so Python does not warn it was never awaited."""
        word = value.strip().lower() if isinstance(value, str) else None
        if value is True or value is False:
            allowed = value is True
        elif word is not None and word in ANSWERS:
            allowed = ANSWERS[word]
        elif hasattr(type(value), "__await__"):
            if isinstance(value, types.CoroutineType):
                value.close()
            return False, ("the approval callback returned an awaitable, which this host "
                           "does not await (give it a plain function)")
        else:
            return False, (f"the approval callback answered {_word(value)}, not 'allow', "
                           "'deny', True or False")
        return allowed, f"the approval callback answered {'allow' if allowed else 'deny'}"

    def check(self, spec: ServerSpec, public: str, tool: Tool,
              arguments: Mapping[str, Any] | None) -> ApprovalRequest | None:
        """The first step of carrying out a call: None when it is allowed (send it), the
        :class:`ApprovalRequest` to give :attr:`ask` when it must be asked (then
        :meth:`settle` its answer).  Raises :class:`ToolDenied` when it is denied, or must
        be asked and no ``ask`` callback is set."""
        decision, reason = self.decide(spec, tool)
        if decision == "allow":
            return None
        if decision == "deny":
            raise ToolDenied(spec.name, tool.name, public, reason)
        if self.ask is None:
            raise ToolDenied(spec.name, tool.name, public,
                             f"it needs approval ({reason}) and no approval callback is set")
        return self.request(spec, public, tool, arguments, reason=reason)

    def settle(self, request: ApprovalRequest, value: object) -> None:
        """The last step: returns when the callback's answer ``value`` allows the call;
        raises :class:`ToolDenied` (its reason: the answer, then why it was asked)
        otherwise."""
        allowed, why = self.answer(value)
        if not allowed:
            raise ToolDenied(request.server, request.tool, request.public,
                             f"{why}; asked because {request.reason}")

    def settle_error(self, request: ApprovalRequest, error: BaseException) -> NoReturn:
        """The callback raised ``error``: the call is denied (:class:`ToolDenied`, chained to
        ``error``; the reason names its type only, as its message may quote arguments)."""
        raise ToolDenied(request.server, request.tool, request.public,
                         f"the approval callback raised {type(error).__name__}; asked "
                         f"because {request.reason}") from error


def _from_config(spec: ServerSpec, tool: Tool) -> tuple[Decision, str] | None:
    """Step 2: the config's approval keys, most specific first (None: they say nothing)."""
    raw: Mapping[str, Any] = spec.raw if isinstance(spec.raw, Mapping) else {}
    tools = raw.get("tools")
    per_tool = tools.get(tool.name) if isinstance(tools, Mapping) else None
    if isinstance(per_tool, Mapping) and "approval_mode" in per_tool:
        return _codex(per_tool["approval_mode"], tool, "tools.<tool>.approval_mode")
    if spec.auto_approve and _in(spec.auto_approve, tool.name):
        return "allow", "the config auto-approves it (autoApprove / alwaysAllow / trust)"
    if "default_tools_approval_mode" in raw:
        return _codex(raw["default_tools_approval_mode"], tool, "default_tools_approval_mode")
    return None


def _codex(mode: object, tool: Tool, key: str) -> tuple[Decision, str] | None:
    """A Codex approval mode read from ``key`` (None: ``auto``, no decision here)."""
    if not isinstance(mode, str) or mode not in CODEX_MODES:
        return "ask", (f"the config's Codex {key} is {_word(mode)}, not one of "
                       f"{', '.join(CODEX_MODES)}: asked to be safe")
    meaning = CODEX_MODES[mode]
    if meaning is None:
        return None
    if meaning == "writes":
        if _hint(tool, "readOnlyHint"):
            return "allow", f"the config's Codex {key} is 'writes' and the tool is read-only"
        return "ask", (f"the config's Codex {key} is 'writes' and the tool is not marked "
                       "readOnlyHint")
    return meaning, f"the config's Codex {key} is {mode!r}"


def as_policy(value: ApprovalPolicy | AskCallback | None) -> ApprovalPolicy | None:
    """The policy for a host's ``approval=`` argument: None stays None (no policy: every
    call allowed, as before approvals), an :class:`ApprovalPolicy` itself, a callable the
    ``ask`` step alone (:meth:`ApprovalPolicy.from_callable`).  ``TypeError`` otherwise."""
    if value is None or isinstance(value, ApprovalPolicy):
        return value
    if callable(value):
        return ApprovalPolicy.from_callable(value)
    raise TypeError(f"approval must be an ApprovalPolicy, a callable or None, not "
                    f"{type(value).__name__}")
