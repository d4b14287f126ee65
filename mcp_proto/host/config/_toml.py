"""A small TOML writer: what Codex's ``config.toml`` needs, and no more (the core has no TOML
library, and ``tomllib`` only reads).

Tables become ``[a.b]`` sections (scalars first, then sub-tables, so the output parses back
to the same mapping); tables inside arrays are inline tables.  Strings are basic strings
with TOML escapes; floats keep their ``repr`` (``inf``/``nan`` in TOML spelling); dates and
times their ISO form.  What has no TOML form is a ``ValueError`` naming why
(:func:`scalar_problem` says it before writing, so a caller can leave the value out):
``None``, an integer beyond 64 bits, a string holding a surrogate code point (TOML strings
are Unicode scalar values; not even an escape can say one), a time of day with a UTC
offset (TOML's local time has none), a key that is no string, any other type.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps_toml", "scalar_problem"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
#: TOML integers are 64-bit signed.
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1
#: A UTF-16 surrogate code point: Python strings may hold one, Unicode text (and TOML) may not.
_SURROGATE = re.compile("[\ud800-\udfff]")
_DATES = (datetime.datetime, datetime.date, datetime.time)


def scalar_problem(value: object) -> str | None:
    """Why the scalar ``value`` has no TOML form (the end of a sentence: "TOML has no
    null"), or None when it has one.  Lists and tables are not scalars: None."""
    if value is None:
        return "TOML has no null"
    if isinstance(value, (bool, float)):
        return None
    if isinstance(value, int):
        return None if _INT_MIN <= value <= _INT_MAX else "a TOML integer is 64-bit"
    if isinstance(value, str):
        return "TOML text cannot hold a surrogate code point" if _SURROGATE.search(value) \
            else None
    if isinstance(value, datetime.time) and value.utcoffset() is not None:
        return "a TOML time of day has no UTC offset"
    if isinstance(value, (*_DATES, list, tuple, Mapping)):
        return None
    return f"{type(value).__name__} has no TOML form"


def _string(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        ch = m[0]
        return _ESCAPES.get(ch) or f"\\u{ord(ch):04X}"
    return '"' + _NEEDS_ESCAPE.sub(one, text) + '"'


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise ValueError(f"a TOML key is a string, not {type(key).__name__}")
    problem = scalar_problem(key)
    if problem:
        raise ValueError(problem)
    return key if _BARE_KEY.match(key) else _string(key)


def _value(value: Any) -> str:
    problem = scalar_problem(value)
    if problem:
        raise ValueError(problem)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, _DATES):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"{type(value).__name__} has no TOML form")


def _table(table: Mapping[str, Any], path: tuple[str, ...], lines: list[str]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, Mapping)]
    if path and (scalars or not tables):
        if lines:
            lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    lines.extend(f"{_key(k)} = {_value(v)}" for k, v in scalars)
    for k, v in tables:
        _table(v, (*path, k), lines)


def dumps_toml(document: Mapping[str, Any]) -> str:
    """``document`` as TOML text (a trailing newline; ``""`` for an empty document).
    ``ValueError`` for a value or key TOML cannot hold (see :func:`scalar_problem`; a
    caller that wants the rest written leaves those out first, as ``dump_config`` does)."""
    lines: list[str] = []
    _table(document, (), lines)
    return "\n".join(lines) + "\n" if lines else ""
