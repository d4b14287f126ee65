"""Fuzz harness for ``mcp_proto.wire._jsonrpc.decode`` / ``encode`` / ``dumps``.

``check(data)`` parses ``data`` as JSON (inputs that are not JSON are skipped) and decodes
the value, and each member if it is an array (as a 2025-03-26 batch is).  Properties:

- ``decode`` raises nothing but :class:`RemoteProtocolError`;
- what it returns has the documented shape (ids are str or int, never bool; params, result
  are objects; an error code is an int);
- ``encode`` of the message gives a ``{"jsonrpc": "2.0", ...}`` dict that decodes to an equal
  message; so does the line ``dumps`` makes of it, which never contains a newline
  (``dumps`` may raise ``ValueError`` for NaN, Infinity or lone surrogates, as documented).

Run: ``python fuzz/fuzz_jsonrpc.py -dict=fuzz/jsonrpc.dict -atheris_runs=100000``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_proto import RemoteProtocolError
from mcp_proto.wire._jsonrpc import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    Response,
    decode,
    dumps,
    encode,
)

MAX_BATCH_MEMBERS = 64


def _check_shape(msg: Message, obj: dict[str, object]) -> None:
    if isinstance(msg, Request | Notification):
        assert type(msg.method) is str and msg.method == obj["method"]
        assert type(msg.params) is dict
        if isinstance(msg, Request):
            assert type(msg.id) in (str, int), f"request id {msg.id!r}"
            assert msg.id == obj["id"]
        else:
            assert "id" not in obj
    elif isinstance(msg, Response):
        assert type(msg.id) in (str, int), f"response id {msg.id!r}"
        assert type(msg.result) is dict
        assert "error" not in obj and "method" not in obj
    else:
        assert isinstance(msg, ErrorResponse), f"decode returned {type(msg).__name__}"
        assert msg.id is None or type(msg.id) in (str, int), f"error id {msg.id!r}"
        assert type(msg.code) is int, f"error code {msg.code!r}"
        assert type(msg.message) is str
        assert "result" not in obj and "method" not in obj


def check_value(obj: object) -> None:
    """Decode one parsed JSON value and check the round trips."""
    try:
        msg = decode(obj)
    except RemoteProtocolError:
        return
    except Exception as exc:
        raise AssertionError(f"decode raised {type(exc).__name__}: {exc}"[:300]) from exc
    assert type(obj) is dict, f"decode accepted a {type(obj).__name__}"
    assert obj.get("jsonrpc") == "2.0"
    _check_shape(msg, obj)
    wire = encode(msg)
    assert type(wire) is dict and wire.get("jsonrpc") == "2.0", f"encode gave {wire!r}"[:300]
    try:
        again = decode(wire)
    except RemoteProtocolError as exc:
        raise AssertionError(f"encode({msg!r}) does not decode: {exc}"[:300]) from exc
    assert again == msg, f"{again!r} != {msg!r}"[:300]
    try:
        line = dumps(wire)
    except ValueError:  # NaN / Infinity / lone surrogate: documented, the session reports it
        return
    assert b"\n" not in line and b"\r" not in line, f"dumps wrote a line break: {line[:80]!r}"
    assert decode(json.loads(line)) == msg, f"{line[:120]!r} does not round-trip"


def check(data: bytes) -> None:
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return
    check_value(obj)
    if type(obj) is list:
        for item in obj[:MAX_BATCH_MEMBERS]:
            check_value(item)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check)
