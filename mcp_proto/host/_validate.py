"""Checked inputs and outputs: a tool call's arguments against its ``inputSchema`` before the
request, its ``structuredContent`` against its ``outputSchema`` after it (pure).

The pieces:

- :class:`Validation` says what the host checks (``arguments``, ``output``) and what an output
  mismatch becomes (``on_output_error``: ``"raise"`` an :class:`InvalidOutput`, or give the
  model an ``isError`` ``"result"``, :func:`invalid_result`).
- A :class:`Validator` turns a schema into a check (``compile(schema)`` -> ``check(value) ->
  issues``); :class:`JsonSchemaValidator` is the default, on the ``jsonschema`` library (the
  optional extra ``mcp-proto[validate]``; it is imported inside :meth:`~JsonSchemaValidator.
  compile`, never when this module loads).  Any object with that method can replace it.
- :class:`ValidatorCache` compiles once per (server, tool definition, which) and raises
  :class:`InvalidArguments` / :class:`InvalidOutput`, each issue a JSON pointer into the value
  and a short message (:class:`ValidationIssue`).

A check that cannot be made never blocks a call: a schema the validator cannot use (invalid,
too big, a ``$ref`` that resolves nowhere) is not checked, and :meth:`ValidatorCache.skipped`
says which and why; so does a keyword left out (a regular expression that could run for
ever) and a value too large to check.  The host logs them.

**The draft** is the schema's ``$schema`` (draft-07, 2019-09, draft-06, draft-04 when it says
so); without one (or one ``jsonschema`` does not know) 2020-12, as MCP 2025-11-25 says.
``format`` is an annotation only (not checked), as 2020-12 has it by default.  ``$ref`` resolves
inside the schema and the bundled meta-schemas only: the registry refuses every retrieval, so a
remote ``$ref`` is never fetched (the schema is then not checked, with the reason).

**Bounded work on hostile schemas and values** (:class:`JsonSchemaValidator`):

- before compiling, the schema's values (objects, arrays and scalars) are counted and its
  nesting measured without recursion: over :data:`DEFAULT_MAX_SCHEMA_NODES` or
  :data:`DEFAULT_MAX_SCHEMA_DEPTH`, it is not checked;
- each ``pattern`` and ``patternProperties`` regular expression is analysed (the heuristic
  of :mod:`._patterns`); one that may backtrack exponentially is left out, one that may
  backtrack polynomially is applied only to strings short enough to stay cheap;
- before checking, the value's size and nesting are measured (:data:`DEFAULT_MAX_INSTANCE_NODES`,
  :data:`DEFAULT_MAX_INSTANCE_DEPTH`), and the check itself is charged per keyword (an
  ``enum`` or a ``properties`` by its size, ``uniqueItems`` or ``additionalProperties`` by the
  value's): past :data:`DEFAULT_MAX_CHECK_STEPS` it stops (a ``$ref`` fan-out costs 2^n on a
  schema of n nodes);
- ``uniqueItems`` runs in linear time (``jsonschema``'s is quadratic on objects);
- at most :data:`MAX_ISSUES` issues are collected, each message cut to
  :data:`MAX_ISSUE_CHARS` (head and tail kept).

A property name a left-out (or length-limited) ``patternProperties`` expression cannot be
tested on is neither validated by its subschema nor counted as additional (nothing is reported
wrongly); a schema that also uses ``unevaluatedProperties`` is then not checked at all (that
keyword runs the expressions itself).

Pure: no clock, no lock.  The cache is not safe to mutate from two threads at once (the
binding guards it, as it guards the host's other state); a compiled check is: its per-call
state lives in a :class:`contextvars.ContextVar`.
"""

from __future__ import annotations

import importlib
import re
import reprlib
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Final, Literal, Protocol

from .._errors import MCPError
from .._types import CallToolResult, TextContent, Tool
from ._patterns import PatternVerdict, judge_pattern, schema_patterns, uses_keyword

__all__ = [
    "DEFAULT_MAX_CHECK_STEPS",
    "DEFAULT_MAX_INSTANCE_DEPTH",
    "DEFAULT_MAX_INSTANCE_NODES",
    "DEFAULT_MAX_SCHEMA_DEPTH",
    "DEFAULT_MAX_SCHEMA_NODES",
    "INSTALL_HINT",
    "MAX_CACHED_VALIDATORS",
    "MAX_ISSUES",
    "MAX_ISSUE_CHARS",
    "MAX_MESSAGE_ISSUES",
    "MAX_REASONS_PER_CHECK",
    "ON_OUTPUT_ERRORS",
    "WHICH",
    "Check",
    "CompiledSchema",
    "InvalidArguments",
    "InvalidOutput",
    "JsonSchemaValidator",
    "OnOutputError",
    "SkippedCheck",
    "UncheckedValue",
    "UnusableSchema",
    "Validation",
    "ValidationIssue",
    "Validator",
    "ValidatorCache",
    "ValidatorUnavailable",
    "Which",
    "as_validation",
    "invalid_result",
]

# -- limits ------------------------------------------------------------------------------------

#: Issues kept from one check: enough to fix a call in one go; a value with thousands of
#: errors is not fixed one by one, and the check stops there (the rest is never computed).
MAX_ISSUES = 20
#: Issues named in an exception's message (all :data:`MAX_ISSUES` go to the model's text).
MAX_MESSAGE_ISSUES = 3
#: Characters of one issue's message: ``jsonschema`` quotes the value ("'xxx…' is not of type
#: 'integer'"), and a 10 MiB string must not become a 10 MiB message; head and tail are kept.
MAX_ISSUE_CHARS = 200
#: Values (objects, arrays, scalars) a schema may have.  Real tool schemas have tens to a
#: few hundred; checking a 2020-12 schema against its meta-schema costs about 20 us per value
#: (0.2 s here), paid once per definition.
DEFAULT_MAX_SCHEMA_NODES = 10_000
#: Nesting of a schema's containers.  ``check_schema`` recurses about 5 frames per level: 64
#: levels stay far from Python's recursion limit whatever the caller's stack holds.
DEFAULT_MAX_SCHEMA_DEPTH = 64
#: Values a checked value may have: a larger one is not checked (``jsonschema`` spends about
#: 5 us per value and keyword: 20,000 values with a few keywords each cost about 0.3 s).
DEFAULT_MAX_INSTANCE_NODES = 20_000
#: Nesting of a checked value's containers: a recursive ``$ref`` follows the value down, about
#: 3 frames per level, so 64 levels stay far from the recursion limit.
DEFAULT_MAX_INSTANCE_DEPTH = 64
#: Keyword evaluations (weighted: by size, a ``$ref`` as 4) one check may cost: a real call
#: costs tens; a value at :data:`DEFAULT_MAX_INSTANCE_NODES` with four keywords per value
#: 80,000.  A ``$ref`` fan-out (2^n evaluations for n definitions) stops here, after about
#: half a second (a step costs 3 to 11 us).
DEFAULT_MAX_CHECK_STEPS = 100_000
#: Compiled checks kept (least recently used evicted): 64 servers of 30 tools, arguments and
#: output, fit.
MAX_CACHED_VALIDATORS = 4096
#: Reasons kept per compiled check (patterns left out, values not checked): a log line each.
MAX_REASONS_PER_CHECK = 8
#: What an output mismatch becomes.
ON_OUTPUT_ERRORS: tuple[str, ...] = ("raise", "result")
#: The two checks of a tool.
WHICH: tuple[str, ...] = ("arguments", "output")
#: How to get the default validator.
INSTALL_HINT = "pip install 'mcp-proto[validate]'"

OnOutputError = Literal["raise", "result"]
Which = Literal["arguments", "output"]

# -- records and errors ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationIssue:
    """One way a value does not match its schema: ``path`` a JSON pointer into the value
    (``""`` the value itself, ``"/max_count"``, ``"/items/3/name"``), ``message`` what is wrong
    (at most :data:`MAX_ISSUE_CHARS` characters: a long value quoted in it is cut)."""

    path: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedCheck:
    """What was not checked for one tool: ``which`` (``"arguments"`` or ``"output"``) of tool
    ``tool`` (its server's name for it) of ``server``, and ``reason`` (a sentence for a log)."""

    server: str
    tool: str
    which: str
    reason: str


class ValidatorUnavailable(MCPError, ImportError):
    """The default validator needs ``jsonschema``, which is not installed: ``pip install
    'mcp-proto[validate]'`` (or pass another :class:`Validator`, or turn validation off)."""

    def __init__(self, detail: str = "") -> None:
        why = f" ({detail})" if detail else ""
        super().__init__(f"validating tool schemas needs jsonschema{why}: {INSTALL_HINT}")


class UnusableSchema(MCPError, ValueError):
    """A schema the validator cannot check against (invalid, too big, too deep, a ``$ref``
    that resolves nowhere).  Raised by :meth:`Validator.compile` or by a compiled check;
    :class:`ValidatorCache` records ``reason`` and stops checking that tool's value (the call
    goes on)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"schema not checked: {reason}")


class UncheckedValue(MCPError, ValueError):
    """This one value could not be checked within the bounds (too large, too deep, too costly).
    Raised by a compiled check; :class:`ValidatorCache` records ``reason`` once and lets the
    call go on."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"value not checked: {reason}")


def _where(issue: ValidationIssue) -> str:
    return f"{issue.path}: {issue.message}" if issue.path else issue.message


def _summary(issues: Sequence[ValidationIssue]) -> str:
    shown = "; ".join(_where(i) for i in issues[:MAX_MESSAGE_ISSUES])
    more = len(issues) - MAX_MESSAGE_ISSUES
    if more > 0:
        shown += f" (and {'at least ' if len(issues) >= MAX_ISSUES else ''}{more} more)"
    return shown


class _InvalidValue(MCPError, ValueError):
    """A value that does not match its tool's schema: ``server``, ``tool`` (its server's name
    for it), ``name`` (the name shown: the public one when the host gave it), ``issues``."""

    #: What was checked, in the message ("arguments", "output").
    which = "value"

    def __init__(self, server: str, tool: str, issues: Sequence[ValidationIssue], *,
                 name: str | None = None) -> None:
        self.server = server
        self.tool = tool
        self.name = name or tool
        self.issues: tuple[ValidationIssue, ...] = tuple(issues)
        super().__init__(f"{self.which} of {self.name}: {_summary(self.issues)}")


class InvalidArguments(_InvalidValue):
    """The arguments do not match the tool's ``inputSchema``; nothing was sent.  The message
    names each field (``arguments of git_log: /max_count: 'ten' is not of type
    'integer'``); give the model :func:`invalid_result` so it can correct the call."""

    which = "arguments"


class InvalidOutput(_InvalidValue):
    """The result's ``structuredContent`` does not match the tool's ``outputSchema`` (or is
    missing though the tool declares one).  The tool ran; its result is not to be trusted as
    structured data.  Raise it, or give the model :func:`invalid_result`, as
    :attr:`Validation.on_output_error` says."""

    which = "output"


def invalid_result(exc: InvalidArguments | InvalidOutput) -> CallToolResult:
    """The error as an ``isError`` tool result the model can read (``raw`` in wire form)."""
    lines = "\n".join(f"- {_where(i)}" for i in exc.issues)
    if isinstance(exc, InvalidArguments):
        text = (f"Invalid arguments for {exc.name}; the call was not made:\n{lines}\n"
                "Correct the arguments to match the tool's input schema and call it again.")
    else:
        text = (f"{exc.name} returned structured content that does not match its output "
                f"schema, so its result was not used:\n{lines}")
    raw = {"content": [{"type": "text", "text": text}], "isError": True}
    return CallToolResult(content=(TextContent(text=text),), is_error=True, raw=raw)


# -- the validator protocol --------------------------------------------------------------------

Check = Callable[[object], Sequence[ValidationIssue]]


class Validator(Protocol):
    """Turns a JSON Schema into a check.

    ``compile(schema)`` returns a callable that takes a value and returns its issues (empty:
    valid); it may return a :class:`CompiledSchema` to also say what it leaves out.  It raises
    :class:`UnusableSchema` for a schema it cannot check against (recorded, not checked) and
    :class:`ValidatorUnavailable` when it cannot work at all (raised to the host).  The check
    may raise :class:`UnusableSchema` or :class:`UncheckedValue` (recorded, the call goes on).
    """

    def compile(self, schema: Mapping[str, Any]) -> Check: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledSchema:
    """A compiled check (call it with a value) and the parts of the schema it leaves out
    (``skipped``: one sentence each, for :meth:`ValidatorCache.skipped`)."""

    check: Check
    skipped: tuple[str, ...] = ()

    def __call__(self, value: object) -> Sequence[ValidationIssue]:
        return self.check(value)


# -- small helpers -----------------------------------------------------------------------------

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxlevel = 2


def _short(value: object) -> str:
    """A bounded ``repr`` (a few dozen characters whatever the value's size)."""
    return _REPR.repr(value)


def _clip(text: str, limit: int = MAX_ISSUE_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def _pointer(parts: Iterable[object]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _too_big(value: object, max_nodes: int, max_depth: int) -> str | None:
    """Why ``value`` is over the bounds (more values than ``max_nodes``, containers nested
    deeper than ``max_depth``), or None; looked at without recursion, stopping at the bound."""
    stack: list[tuple[object, int]] = [(value, 1)]
    count = 1
    while stack:
        item, depth = stack.pop()
        children: Collection[object]  # counted by len() before any is looked at
        if isinstance(item, dict):  # concrete types first: the ABC check costs more
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        elif isinstance(item, Mapping):
            children = item.values()
        else:
            continue
        if depth > max_depth:
            return f"it nests deeper than {max_depth} levels"
        count += len(children)
        if count > max_nodes:
            return f"it has more than {max_nodes:,} values"
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list, tuple, Mapping)))
    return None


# -- the per-call state of a compiled check ----------------------------------------------------


class _OutOfSteps(Exception):
    """The check's step budget is spent."""


class _Run:
    """One call's budget and the schema's verdicts (shared by every keyword of the call)."""

    __slots__ = ("left", "verdicts")

    def __init__(self, left: int, verdicts: dict[str, PatternVerdict]) -> None:
        self.left = left
        self.verdicts = verdicts


_RUN: ContextVar[_Run | None] = ContextVar("mcp_proto_validate_run", default=None)


def _matches(pattern: str, text: str) -> bool | None:
    """Whether ``text`` matches ``pattern`` (``re.search``, as JSON Schema has it); None when
    the verdict does not let the pattern run on it."""
    run = _RUN.get()
    verdicts = run.verdicts if run is not None else {}
    verdict = verdicts.get(pattern)
    if verdict is None:
        verdict = verdicts[pattern] = judge_pattern(pattern)
    if verdict.limit is not None and len(text) > verdict.limit:
        return None
    return re.search(pattern, text) is not None


def _freeze(value: Any) -> Any:
    """A hashable form equal exactly when the JSON values are equal (1 == 1.0, True != 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, Mapping):
        return frozenset((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v) for v in value))
    return value


#: How a keyword is charged to the step budget: by the size of its value in the schema, by
#: the size of the value checked, or both (``patternProperties`` tests each name on each
#: expression); any other keyword costs 1.
_BY_SCHEMA: Final = frozenset({"enum", "properties", "required", "dependentRequired",
                               "dependentSchemas", "dependencies", "allOf", "anyOf", "oneOf",
                               "prefixItems"})
_BY_VALUE: Final = frozenset({"uniqueItems", "additionalProperties", "propertyNames", "items",
                              "additionalItems", "contains", "unevaluatedItems",
                              "unevaluatedProperties"})
_BY_BOTH: Final = frozenset({"patternProperties"})
#: A reference costs a resolution and a new scope: about four plain keywords.
_REFERENCES: Final = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_REFERENCE_COST: Final = 4


def _size(value: object) -> int:
    # dict and list only: what json.loads makes, and what jsonschema takes for objects/arrays
    return len(value) if isinstance(value, (dict, list)) else 1


def _charge(keyword: str) -> Callable[[object, object], int] | int:
    """The keyword's cost: a constant, or a function of (its value, the value checked)."""
    if keyword in _BY_BOTH:
        return lambda v, instance: 1 + _size(v) * _size(instance)
    if keyword in _BY_SCHEMA:
        return lambda v, instance: 1 + _size(v)
    if keyword in _BY_VALUE:
        return lambda v, instance: 1 + _size(instance)
    return _REFERENCE_COST if keyword in _REFERENCES else 1


# -- the jsonschema validator ------------------------------------------------------------------

_KeywordFn = Callable[[Any, Any, Any, Any], Any]


def _keywords(error_cls: Any) -> dict[str, _KeywordFn]:
    """Our ``pattern``, ``patternProperties``, ``additionalProperties`` (regular expressions
    under the verdicts) and ``uniqueItems`` (linear), as ``jsonschema`` keyword functions."""

    def pattern(validator: Any, pat: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if (validator.is_type(instance, "string") and isinstance(pat, str)
                and _matches(pat, instance) is False):
            yield error_cls(f"{_short(instance)} does not match {_short(pat)}")

    def pattern_properties(validator: Any, pp: Any, instance: Any,
                           schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for pat, sub in pp.items():
            for key, value in instance.items():
                if _matches(pat, key):
                    yield from validator.descend(value, sub, path=key, schema_path=pat)

    def additional_properties(validator: Any, ap: Any, instance: Any,
                              schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        props = schema.get("properties", {})
        pats = schema.get("patternProperties")
        extras = [k for k in instance if k not in props
                  and not (pats and any(_matches(p, k) is not False for p in pats))]
        if validator.is_type(ap, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], ap, path=extra)
        elif ap is False and extras:
            names = ", ".join(_short(k) for k in extras[:5]) + (", …" if len(extras) > 5
                                                                 else "")
            verb = "was" if len(extras) == 1 else "were"
            yield error_cls(f"Additional properties are not allowed ({names} {verb} "
                            "unexpected)")

    def unique_items(validator: Any, ui: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not ui or not validator.is_type(instance, "array"):
            return
        seen: set[Any] = set()
        for index, item in enumerate(instance):
            frozen = _freeze(item)
            if frozen in seen:
                yield error_cls(f"has non-unique elements (item {index} repeats an "
                                "earlier one)")
                return
            seen.add(frozen)

    return {"pattern": pattern, "patternProperties": pattern_properties,
            "additionalProperties": additional_properties, "uniqueItems": unique_items}


def _counted(keyword: str, fn: _KeywordFn) -> _KeywordFn:
    """``fn`` charged to the call's step budget (most keywords cost a constant: no call)."""
    charge = _charge(keyword)
    if isinstance(charge, int):
        cost = charge

        def constant(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            run = _RUN.get()
            if run is not None:
                run.left -= cost
                if run.left < 0:
                    raise _OutOfSteps
            return fn(validator, value, instance, schema)

        return constant

    def sized(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        run = _RUN.get()
        if run is not None:
            run.left -= charge(value, instance)
            if run.left < 0:
                raise _OutOfSteps
        return fn(validator, value, instance, schema)

    return sized


def _jsonschema() -> tuple[ModuleType, ModuleType, ModuleType, ModuleType]:
    """``jsonschema.exceptions``, ``jsonschema.validators``, ``referencing`` and
    ``referencing.exceptions``, imported now (never when this module loads); raises
    :class:`ValidatorUnavailable` when they are not installed."""
    try:
        return (importlib.import_module("jsonschema.exceptions"),
                importlib.import_module("jsonschema.validators"),
                importlib.import_module("referencing"),
                importlib.import_module("referencing.exceptions"))
    except ImportError as exc:
        raise ValidatorUnavailable(str(exc)) from exc


class JsonSchemaValidator:
    """The default :class:`Validator`, on ``jsonschema`` (imported by :meth:`compile`), with
    the bounds of the module docstring (each a keyword here; ValueError below 1)."""

    def __init__(self, *, max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
                 max_schema_depth: int = DEFAULT_MAX_SCHEMA_DEPTH,
                 max_instance_nodes: int = DEFAULT_MAX_INSTANCE_NODES,
                 max_instance_depth: int = DEFAULT_MAX_INSTANCE_DEPTH,
                 max_steps: int = DEFAULT_MAX_CHECK_STEPS) -> None:
        limits = {"max_schema_nodes": max_schema_nodes, "max_schema_depth": max_schema_depth,
                  "max_instance_nodes": max_instance_nodes,
                  "max_instance_depth": max_instance_depth, "max_steps": max_steps}
        for key, value in limits.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{key} must be a positive integer, got {value!r}")
        self.max_schema_nodes = max_schema_nodes
        self.max_schema_depth = max_schema_depth
        self.max_instance_nodes = max_instance_nodes
        self.max_instance_depth = max_instance_depth
        self.max_steps = max_steps
        self._classes: dict[type, Any] = {}

    def _class_for(self, base: Any) -> Any:
        """``base`` (a draft's validator class) with our keywords, each one counted."""
        cls = self._classes.get(base)
        if cls is None:
            exceptions, validators, _, _ = _jsonschema()
            own = _keywords(exceptions.ValidationError)
            table = {k: _counted(k, own.get(k, fn)) for k, fn in base.VALIDATORS.items()}
            cls = self._classes[base] = validators.extend(base, validators=table)
        return cls

    def compile(self, schema: Mapping[str, Any]) -> CompiledSchema:
        """A check for ``schema`` (``jsonschema``'s draft chosen by its ``$schema``).

        Raises :class:`ValidatorUnavailable` without ``jsonschema``, :class:`UnusableSchema`
        for a schema not to be checked against (too big or deep, invalid for its draft, every
        way it could be checked left out)."""
        exceptions, validators, referencing, referencing_errors = _jsonschema()
        if not isinstance(schema, Mapping):
            raise UnusableSchema("the schema is not a JSON object")
        why = _too_big(schema, self.max_schema_nodes, self.max_schema_depth)
        if why:
            raise UnusableSchema(f"the schema is too large to check: {why}")
        verdicts: dict[str, PatternVerdict] = {}
        skipped: list[str] = []
        risky_names = False
        for where, pat, is_name in schema_patterns(schema):
            verdict = verdicts.get(pat) or judge_pattern(pat)
            verdicts[pat] = verdict
            if verdict.reason:
                kind = "patternProperties name" if is_name else "pattern"
                skipped.append(f"{kind} at {where} {verdict.reason}")
                risky_names = risky_names or is_name
        if risky_names and uses_keyword(schema, "unevaluatedProperties"):
            raise UnusableSchema("a patternProperties expression cannot always run and the "
                                 "schema uses unevaluatedProperties")
        try:
            base = validators.validator_for(schema, default=validators.Draft202012Validator)
            base.check_schema(schema, format_checker=None)
            # An empty registry: $ref resolves in the schema and the bundled meta-schemas; its
            # default retrieval refuses every other URI (nothing is ever fetched).
            validator = self._class_for(base)(schema, registry=referencing.Registry(),
                                              format_checker=None)
        except exceptions.SchemaError as exc:
            where = _pointer(exc.absolute_path)
            raise UnusableSchema(f"invalid for its draft at {where or '(root)'}: "
                                 f"{_clip(exc.message, 120)}") from None
        except RecursionError:
            raise UnusableSchema("the schema nests too deeply to check") from None
        except MemoryError:
            raise
        except Exception as exc:  # jsonschema on a schema it cannot take: not checked
            raise UnusableSchema(f"jsonschema cannot use the schema: {type(exc).__name__}: "
                                 f"{_clip(str(exc), 120)}") from None
        check = _JsonSchemaCheck(validator, verdicts, self, referencing_errors.Unresolvable)
        if len(skipped) > MAX_REASONS_PER_CHECK:
            rest = len(skipped) - MAX_REASONS_PER_CHECK + 1
            skipped = [*skipped[:MAX_REASONS_PER_CHECK - 1], f"and {rest} more patterns"]
        return CompiledSchema(check=check, skipped=tuple(skipped))


def _message(error: Any) -> str:
    """``jsonschema``'s message, except for an ``anyOf`` / ``oneOf`` whose every branch failed
    on its ``type`` alone: "5 is not of type 'string', 'null'" says more to a model than "5 is
    not valid under any of the given schemas"."""
    context = error.context
    branches = error.validator_value
    if (error.validator in ("anyOf", "oneOf") and context and isinstance(branches, list)
            and all(e.validator == "type" and not e.relative_path for e in context)
            and len({e.schema_path[0] for e in context if e.schema_path}) == len(branches)):
        names: list[str] = []
        for e in context:
            value = e.validator_value
            names.extend(value if isinstance(value, list) else [value])
        shown = ", ".join(repr(n) for n in dict.fromkeys(map(str, names)))
        return f"{_short(error.instance)} is not of type {shown}"
    return str(error.message)


class _JsonSchemaCheck:
    """One compiled schema: call it with a value."""

    __slots__ = ("bounds", "unresolvable", "validator", "verdicts")

    def __init__(self, validator: Any, verdicts: dict[str, PatternVerdict],
                 bounds: JsonSchemaValidator, unresolvable: type[Exception]) -> None:
        self.validator = validator
        self.verdicts = verdicts
        self.bounds = bounds
        self.unresolvable = unresolvable

    def __call__(self, value: object) -> Sequence[ValidationIssue]:
        """The value's issues (at most :data:`MAX_ISSUES`).  Raises :class:`UncheckedValue`
        when it is over the bounds, :class:`UnusableSchema` when the schema fails at run time
        (a ``$ref`` that resolves nowhere, a keyword value ``jsonschema`` cannot use)."""
        b = self.bounds
        why = _too_big(value, b.max_instance_nodes, b.max_instance_depth)
        if why:
            raise UncheckedValue(f"a value too large to check was let through: {why}")
        token = _RUN.set(_Run(b.max_steps, self.verdicts))
        issues: dict[ValidationIssue, None] = {}  # the same issue twice (an allOf ...) once
        try:
            for error in self.validator.iter_errors(value):
                issues[ValidationIssue(path=_pointer(error.absolute_path),
                                       message=_clip(_message(error)))] = None
                if len(issues) >= MAX_ISSUES:
                    break
        except _OutOfSteps:
            if issues:  # wrong already: say what was found
                return tuple(issues)
            raise UncheckedValue(f"a value was let through unchecked: checking it costs more "
                                 f"than {b.max_steps:,} steps") from None
        except RecursionError:
            raise UncheckedValue("a value was let through unchecked: it nests too deeply "
                                 "for the schema") from None
        except MemoryError:
            raise
        except Exception as exc:
            if isinstance(exc, self.unresolvable):
                raise UnusableSchema(f"a $ref does not resolve (nothing is fetched): "
                                     f"{_clip(str(exc), 120)}") from None
            raise UnusableSchema(f"jsonschema failed on the schema: {type(exc).__name__}: "
                                 f"{_clip(str(exc), 120)}") from None
        finally:
            _RUN.reset(token)
        return tuple(issues)


# -- the host's settings and the cache ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Validation:
    """What the host checks: ``arguments`` against ``inputSchema`` before each call (a
    mismatch raises :class:`InvalidArguments`, nothing sent), ``output`` (``structuredContent``
    against ``outputSchema``; a mismatch raises :class:`InvalidOutput` when
    ``on_output_error="raise"``, or becomes :func:`invalid_result` for ``"result"``), with
    ``validator`` (None: :class:`JsonSchemaValidator`).  ValueError for another
    ``on_output_error``, TypeError for a ``validator`` without ``compile``."""

    arguments: bool = True
    output: bool = True
    on_output_error: OnOutputError = "raise"
    validator: Validator | None = None

    def __post_init__(self) -> None:
        if self.on_output_error not in ON_OUTPUT_ERRORS:
            raise ValueError(f"on_output_error must be one of {', '.join(ON_OUTPUT_ERRORS)}, "
                             f"got {self.on_output_error!r}")
        if self.validator is not None and not callable(getattr(self.validator, "compile",
                                                               None)):
            raise TypeError("validator must have a compile(schema) method")

    def new_cache(self, max_entries: int = MAX_CACHED_VALIDATORS) -> ValidatorCache:
        """A :class:`ValidatorCache` with this validator (one per host)."""
        return ValidatorCache(self.validator, max_entries)


def as_validation(value: bool | Validation | None) -> Validation | None:
    """The host's ``validate=`` argument: True -> :class:`Validation` (), False/None -> None
    (nothing checked), a :class:`Validation` as it is; TypeError otherwise."""
    if isinstance(value, Validation):
        return value
    if value is True:
        return Validation()
    if value is False or value is None:
        return None
    raise TypeError(f"validate must be True, False or a Validation, got {type(value).__name__}")


@dataclass(slots=True)
class _Entry:
    definition: Tool  # kept so that its id is not reused while the entry lives
    check: Check | None
    reasons: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if reason not in self.reasons and len(self.reasons) < MAX_REASONS_PER_CHECK:
            self.reasons.append(reason)


class ValidatorCache:
    """Compiled checks, one per (server, tool definition, which), keyed on the definition
    object's identity (a new listing brings new objects, so a changed schema is compiled
    anew) and bounded (``max_entries``, least recently used evicted; ValueError below 1).

    Not thread-safe to mutate: the binding calls it under the host's guard."""

    def __init__(self, validator: Validator | None = None,
                 max_entries: int = MAX_CACHED_VALIDATORS) -> None:
        if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
            raise ValueError(f"max_entries must be a positive integer, got {max_entries!r}")
        self.validator: Validator = validator if validator is not None \
            else JsonSchemaValidator()
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str, int], _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self, server: str | None = None) -> None:
        """Forget every compiled check, or those of ``server`` (its listing changed or it
        restarted)."""
        if server is None:
            self._entries.clear()
            return
        for key in [k for k in self._entries if k[0] == server]:
            del self._entries[key]

    def skipped(self) -> tuple[SkippedCheck, ...]:
        """What the cached checks leave out, one record per reason, oldest check first."""
        return tuple(SkippedCheck(server=server, tool=entry.definition.name, which=which,
                                  reason=reason)
                     for (server, which, _), entry in self._entries.items()
                     for reason in entry.reasons)

    def _entry(self, server: str, tool: Tool, which: str, schema: Mapping[str, Any]) -> _Entry:
        key = (server, which, id(tool))
        entry = self._entries.get(key)
        if entry is not None and entry.definition is tool:
            self._entries.move_to_end(key)
            return entry
        try:
            check: Check | None = self.validator.compile(schema)
            reasons = list(check.skipped) if isinstance(check, CompiledSchema) else []
        except UnusableSchema as exc:
            check, reasons = None, [exc.reason]
        entry = _Entry(tool, check, reasons[:MAX_REASONS_PER_CHECK])
        self._entries[key] = entry
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return entry

    def _issues(self, entry: _Entry, value: object) -> tuple[ValidationIssue, ...]:
        if entry.check is None:
            return ()
        try:
            return tuple(entry.check(value))[:MAX_ISSUES]
        except UncheckedValue as exc:
            entry.note(exc.reason)
        except UnusableSchema as exc:
            entry.check = None
            entry.note(exc.reason)
        return ()

    def check_arguments(self, server: str, tool: Tool, arguments: Mapping[str, Any] | None,
                        *, name: str | None = None) -> None:
        """Check ``arguments`` (None: ``{}``) against ``tool.input_schema``.

        Raises :class:`InvalidArguments` (``name``: the tool's name in its message, e.g. the
        public one; default ``tool.name``): do not send the call, give the model
        :func:`invalid_result`.  :class:`ValidatorUnavailable` when the validator cannot work
        at all.  A schema or value that cannot be checked passes (see :meth:`skipped`)."""
        entry = self._entry(server, tool, "arguments", tool.input_schema)
        issues = self._issues(entry, {} if arguments is None else arguments)
        if issues:
            raise InvalidArguments(server, tool.name, issues, name=name)

    def check_output(self, server: str, tool: Tool, result: CallToolResult, *,
                     name: str | None = None) -> None:
        """Check ``result.structured_content`` against ``tool.output_schema``; nothing to do
        for a tool without one or an ``isError`` result.  A missing ``structuredContent`` is
        an issue (servers MUST send it when they declare an output schema).

        Raises :class:`InvalidOutput`: raise it to the host or give the model
        :func:`invalid_result`, as :attr:`Validation.on_output_error` says."""
        schema = tool.output_schema
        if schema is None or result.is_error:
            return
        if result.structured_content is None:
            missing = ValidationIssue(path="", message="structuredContent is missing, though "
                                      "the tool declares an outputSchema")
            raise InvalidOutput(server, tool.name, (missing,), name=name)
        entry = self._entry(server, tool, "output", schema)
        issues = self._issues(entry, result.structured_content)
        if issues:
            raise InvalidOutput(server, tool.name, issues, name=name)
