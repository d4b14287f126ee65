"""JSON-RPC 2.0 messages as MCP constrains them: decode, validate, encode.

Rules (spec-checklist section 4.1): ``jsonrpc`` is ``"2.0"`` (J-01); ids are strings or
integers, never null, bool or float (J-01); a response has ``result`` xor ``error`` (J-03); an
error response may lack an id or carry ``null`` when the server could not read the request
(J-03); notifications have no id (J-04).  Batches (J-05) are JSON arrays; whether they are
allowed depends on the protocol version, which is the session's decision, not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._errors import RemoteProtocolError
from .._types import RequestId  # a record every room names; defined with the types
from ._json import dumps

__all__ = [
    "ErrorResponse",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "dumps",
    "encode",
    "is_valid_id",
]



@dataclass(frozen=True, slots=True)
class Request:
    """A request (from the server, in the handshake era: ping, sampling, elicitation, roots)."""

    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """An error answer.  ``id`` is None when the server could not tell which request it was."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None


Message = Request | Notification | Response | ErrorResponse


def is_valid_id(value: object) -> bool:
    """True for a JSON-RPC id MCP allows: a string or an integer (not a bool)."""
    t = type(value)
    return t is str or t is int


def _describe(obj: object) -> str:
    text = repr(obj)
    return text if len(text) <= 120 else text[:117] + "..."


def decode(obj: object) -> Message:
    """Validate one parsed JSON value as a JSON-RPC message and return it typed.

    Raises :class:`RemoteProtocolError` naming what was wrong.  The caller decides whether that
    is fatal (it never is for one message: the session reports it and goes on).
    """
    if type(obj) is not dict:
        raise RemoteProtocolError(f"JSON-RPC message must be an object, got {_describe(obj)}")
    if obj.get("jsonrpc") != "2.0":
        raise RemoteProtocolError(f'JSON-RPC message lacks "jsonrpc": "2.0": {_describe(obj)}')
    method = obj.get("method")
    if method is not None:
        if type(method) is not str:
            raise RemoteProtocolError(f"JSON-RPC method must be a string: {_describe(obj)}")
        params = obj.get("params")
        if params is None:
            params = {}
        elif type(params) is not dict:
            raise RemoteProtocolError(f"params of {method} must be an object: {_describe(obj)}")
        if "id" in obj:
            rid = obj["id"]
            if not is_valid_id(rid):
                raise RemoteProtocolError(
                    f"request id must be a string or an integer, got {rid!r} in {method}"
                )
            return Request(rid, method, params)
        return Notification(method, params)
    if "id" not in obj and "error" not in obj:
        raise RemoteProtocolError(f"JSON-RPC message is neither request nor response: "
                                  f"{_describe(obj)}")
    rid = obj.get("id")
    has_result = "result" in obj
    has_error = "error" in obj
    if has_result == has_error:
        raise RemoteProtocolError(
            f"JSON-RPC response must have exactly one of result and error: {_describe(obj)}"
        )
    if has_result:
        if not is_valid_id(rid):
            raise RemoteProtocolError(f"response id must be a string or an integer, got {rid!r}")
        result = obj["result"]
        if type(result) is not dict:
            raise RemoteProtocolError(f"result of response {rid!r} must be an object, "
                                      f"got {_describe(result)}")
        return Response(rid, result)  # type: ignore[arg-type]  # checked above
    if rid is not None and not is_valid_id(rid):
        raise RemoteProtocolError(f"error response id must be a string, an integer or null, "
                                  f"got {rid!r}")
    err = obj["error"]
    if type(err) is not dict:
        raise RemoteProtocolError(f"error of response {rid!r} must be an object: {_describe(err)}")
    code = err.get("code")
    message = err.get("message")
    if type(code) is not int:
        raise RemoteProtocolError(f"error code must be an integer, got {code!r}")
    if type(message) is not str:
        message = "" if message is None else str(message)
    return ErrorResponse(rid, code, message, err.get("data"))


def encode(message: Message) -> dict[str, Any]:
    """The wire object of a message (for tests and for callers building messages by hand)."""
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params:
            out["params"] = message.params
        return out
    if isinstance(message, Notification):
        out = {"jsonrpc": "2.0", "method": message.method}
        if message.params:
            out["params"] = message.params
        return out
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    error: dict[str, Any] = {"code": message.code, "message": message.message}
    if message.data is not None:
        error["data"] = message.data
    return {"jsonrpc": "2.0", "id": message.id, "error": error}
