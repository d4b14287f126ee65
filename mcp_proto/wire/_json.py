"""JSON in and out of the session, at the cost of the C codec alone.

``json.dumps``/``json.loads`` wrap the C encoder and scanner in Python layers that cost about
as much as the work itself on a small message (a new encoder object per call, a regular
expression over the whitespace at both ends).  The session encodes and decodes every message
it exchanges, so these functions call the C codec directly and fall back to the ``json``
module for whatever it handles differently: a message that is not plain (whitespace around
it, a byte-order mark, an error to explain) or an interpreter without the C accelerator.  The
bytes and values are those of ``json`` either way (tests compare them).
"""

from __future__ import annotations

import json
from json import decoder as _decoder
from json import encoder as _encoder
from typing import Any

__all__ = ["dumps", "dumps_request", "loads", "scan_once"]

_SEPARATORS = (",", ":")
#: The longest method name whose encoded request head is kept: the methods a client sends
#: are a short fixed list, so this only bounds a host that invents names.
MAX_CACHED_METHOD = 64
#: How many request heads are kept (the spec's methods plus room; more are built each time).
MAX_CACHED_HEADS = 128


#: Encoders kept for reuse, per flavour.  Each one is in use by one call at a time (taken
#: from its pool and put back after), so threads never share one mid-call; the pool holds
#: at most this many (one per thread encoding at the same moment is all it ever needs).
MAX_POOLED_ENCODERS = 8


def _unencodable(obj: object) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class _Encoders:
    """The C encoder, compact and without NaN, made once and reused (``json.dumps`` makes one
    per call).  It keeps ``json``'s check for cycles, which needs a table of the containers
    being encoded: so each encoder serves one call at a time, and one that raised (its table
    may keep entries) is dropped.  Falls back to ``json.JSONEncoder`` where the interpreter
    has no C accelerator."""

    __slots__ = ("_c_make", "_python", "_strings", "pool")

    def __init__(self, ensure_ascii: bool) -> None:
        self._python = json.JSONEncoder(separators=_SEPARATORS, ensure_ascii=ensure_ascii,
                                        allow_nan=False).encode
        self._strings = _encoder.encode_basestring_ascii if ensure_ascii \
            else _encoder.encode_basestring
        self._c_make: Any = getattr(_encoder, "c_make_encoder", None)
        self.pool: list[Any] = []
        if self._c_make is not None:
            try:
                self.pool.append(self.new())
            except TypeError:  # pragma: no cover - a signature this module does not know
                self._c_make = None

    def new(self) -> Any:
        """An encoder: ``encode(obj, 0)`` gives the text's chunks.  The C one, with a table
        of its own (the markers of ``json``'s cycle check); else ``json``'s."""
        if self._c_make is None:  # pragma: no cover - CPython always has the C encoder
            python = self._python
            return lambda obj, _level: (python(obj),)
        item, key = _SEPARATORS
        return self._c_make({}, _unencodable, self._strings, None, key, item, False, False,
                            False)

    def text(self, obj: Any) -> str:
        """``obj`` as compact JSON text; raises as ``json.dumps``."""
        pool = self.pool
        try:
            encode = pool.pop()
        except IndexError:
            encode = self.new()
        text = "".join(encode(obj, 0))  # on an exception this encoder is not put back
        if len(pool) < MAX_POOLED_ENCODERS:
            pool.append(encode)
        return text


_UTF8 = _Encoders(ensure_ascii=False)
_UTF8_POOL = _UTF8.pool
_ASCII = _Encoders(ensure_ascii=True)
_text = _UTF8.text


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON without newlines (X-01: a message must fit on one line), the bytes
    ``json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`` gives.

    Raises ``ValueError``/``TypeError`` for values JSON cannot carry (NaN, sets, a cycle, ...)
    and ``RecursionError`` for nesting deeper than the interpreter's limit: a
    :class:`LocalProtocolError` is raised by the session, which knows which call it was.
    """
    try:
        return _text(obj).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (for example an id the server sent as "\ud800") cannot be UTF-8:
        # escape it as JSON, which gives the server back exactly what it sent.
        return _ASCII.text(obj).encode("ascii")


_heads: dict[str, str] = {}  # by method: the envelope after the id
_call_heads: dict[str, str] = {}  # tools/call, by tool name: after the id, up to the arguments


def dumps_request(rid: int, method: str, params: dict[str, Any] | None) -> bytes:
    """The bytes of ``{"jsonrpc":"2.0","id":rid,"method":method,"params":params}`` (no
    ``params`` when None), as :func:`dumps` gives them, without encoding the envelope each
    time (nor, for a ``tools/call`` of just ``name`` then ``arguments``, the tool's name).
    Raises as :func:`dumps`."""
    # (The id goes in by an f-string: about a thousand instructions fewer than a "%d" format.)
    if type(rid) is not int:  # not ours to send (an f-string would write True, or a bare str)
        return dumps(_envelope(rid, method, params))
    if method == "tools/call" and params is not None and len(params) == 2 \
            and type(name := params.get("name")) is str and "arguments" in params \
            and next(iter(params)) == "name":
        head = _call_heads.get(name)
        if head is None:
            head = _head("tools/call") + ',"params":{"name":' + _text(name) + ',"arguments":'
            if len(name) <= MAX_CACHED_METHOD and len(_call_heads) < MAX_CACHED_HEADS:
                _call_heads[name] = head
        # _text(params["arguments"]), inlined (every tool call): a pooled C encoder
        pool = _UTF8_POOL
        try:
            encode = pool.pop()
        except IndexError:
            encode = _UTF8.new()
        arguments = "".join(encode(params["arguments"], 0))  # raised: the encoder is dropped
        if len(pool) < MAX_POOLED_ENCODERS:
            pool.append(encode)
        text = f'{{"jsonrpc":"2.0","id":{rid}{head}{arguments}}}}}'
    else:
        if type(method) is not str:  # not ours to send, but encoded as json would
            return dumps(_envelope(rid, method, params))
        head = _heads.get(method) or _head(method)
        if params is None:
            text = f'{{"jsonrpc":"2.0","id":{rid}{head}}}'
        else:
            text = f'{{"jsonrpc":"2.0","id":{rid}{head},"params":{_text(params)}}}'
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: dumps escapes the whole message
        return dumps(_envelope(rid, method, params))


def _head(method: str) -> str:
    """``,"method":method``, the envelope after the id (kept for short names)."""
    head = _heads.get(method)
    if head is None:
        head = ',"method":' + _text(method)
        if len(method) <= MAX_CACHED_METHOD and len(_heads) < MAX_CACHED_HEADS:
            _heads[method] = head
    return head


def _envelope(rid: int, method: Any, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


#: ``scan_once(text, 0)`` gives ``(value, end)`` for the JSON value at the start of ``text``
#: (the C scanner's own call, for a reader's loop to inline :func:`loads`); it raises
#: ``StopIteration`` where no value starts, and ``ValueError`` / ``RecursionError`` as
#: ``json.loads`` does.  A value that ends before ``len(text)`` goes to :func:`loads`.
scan_once: Any = _decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]  # (__init__)
_OPENERS = frozenset("{[")


def loads(text: str) -> Any:
    """The JSON value of ``text``, as ``json.loads`` gives it.  Raises ``ValueError`` (a
    ``json.JSONDecodeError``, with ``json``'s message) or ``RecursionError``."""
    if text and text[0] in _OPENERS:
        try:
            value, end = scan_once(text, 0)
        except StopIteration:  # not JSON: let json say where and why
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)  # whitespace around it, a scalar, or an error to explain
