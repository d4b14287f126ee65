"""A small TOML writer: what Codex's ``config.toml`` needs, and no more (the core has no TOML
library, and ``tomllib`` only reads).

Tables become ``[a.b]`` sections (scalars first, then sub-tables, so the output parses back
to the same mapping); tables inside arrays are inline tables.  Strings are basic strings
with TOML escapes; floats keep their ``repr`` (``inf``/``nan`` in TOML spelling); dates and
times their ISO form.  ``None`` and other types have no TOML form: ``ValueError``.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps_toml"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
#: TOML integers are 64-bit signed.
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1


def _string(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        ch = m[0]
        return _ESCAPES.get(ch) or f"\\u{ord(ch):04X}"
    return '"' + _NEEDS_ESCAPE.sub(one, text) + '"'


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise ValueError(f"a TOML key is a string, not {type(key).__name__}")
    return key if _BARE_KEY.match(key) else _string(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise ValueError("a TOML integer is 64-bit")
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
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
    ``ValueError`` for a value TOML cannot hold (``None``, a non-string key, a huge int)."""
    lines: list[str] = []
    _table(document, (), lines)
    return "\n".join(lines) + "\n" if lines else ""
