"""JSON-RPC 2.0 as MCP constrains it (J-01, J-03, J-04) and the wire encoding (X-01)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    is_valid_id,
)

BAD_IDS: list[Any] = [None, True, False, 1.0, 1.5, [], {}]


def test_decode_each_kind() -> None:
    assert decode({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == Request(1, "ping", {})
    assert decode({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"x": 1}}) == \
        Request("a", "m", {"x": 1})
    assert decode({"jsonrpc": "2.0", "method": "n", "params": None}) == Notification("n", {})
    assert decode({"jsonrpc": "2.0", "id": 7, "result": {"k": []}}) == Response(7, {"k": []})
    assert decode({"jsonrpc": "2.0", "id": "s", "error": {"code": -1, "message": "m",
                                                          "data": [1]}}) == \
        ErrorResponse("s", -1, "m", [1])


@pytest.mark.parametrize("obj", [
    [], "x", None, 1,
    {"id": 1, "method": "ping"},
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": 2.0, "id": 1, "method": "ping"},
    {"jsonrpc": "2.0"},
])
def test_j01_jsonrpc_object_with_version_required(obj: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode(obj)


@pytest.mark.parametrize("rid", BAD_IDS)
def test_j01_request_id_must_be_string_or_integer(rid: Any) -> None:
    with pytest.raises(RemoteProtocolError, match="id"):
        decode({"jsonrpc": "2.0", "id": rid, "method": "ping"})


@pytest.mark.parametrize("rid", BAD_IDS)
def test_j03_result_response_id_must_be_string_or_integer(rid: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode({"jsonrpc": "2.0", "id": rid, "result": {}})


@pytest.mark.parametrize("rid", [0, -3, 2**60, "", "abc"])
def test_j01_valid_ids(rid: Any) -> None:
    assert decode({"jsonrpc": "2.0", "id": rid, "method": "ping"}) == Request(rid, "ping", {})
    assert decode({"jsonrpc": "2.0", "id": rid, "result": {}}) == Response(rid, {})
    assert is_valid_id(rid)


@pytest.mark.parametrize("value", [None, True, 1.0, [], {}])
def test_is_valid_id_refuses(value: Any) -> None:
    assert not is_valid_id(value)


@pytest.mark.parametrize("obj", [
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
    {"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse error"}},
])
def test_j03_error_id_may_be_null_or_absent(obj: Any) -> None:
    assert decode(obj) == ErrorResponse(None, -32700, "parse error")


@pytest.mark.parametrize("rid", [True, 1.0, [], {}])
def test_j03_error_id_still_typed(rid: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": "m"}})


@pytest.mark.parametrize("obj", [
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
    {"jsonrpc": "2.0", "id": 1},
])
def test_j03_result_xor_error(obj: Any) -> None:
    with pytest.raises(RemoteProtocolError, match="exactly one"):
        decode(obj)


@pytest.mark.parametrize("result", [[], "x", 1, None, True])
def test_result_must_be_an_object(result: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode({"jsonrpc": "2.0", "id": 1, "result": result})


@pytest.mark.parametrize("error", [
    "boom", [], None, {"message": "no code"}, {"code": "1", "message": "m"},
    {"code": 1.5, "message": "m"}, {"code": True, "message": "m"},
])
def test_j03_error_object_shape(error: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode({"jsonrpc": "2.0", "id": 1, "error": error})


def test_j03_error_message_is_lenient() -> None:
    assert decode({"jsonrpc": "2.0", "id": 1, "error": {"code": 5}}) == ErrorResponse(1, 5, "")
    assert decode({"jsonrpc": "2.0", "id": 1, "error": {"code": 5, "message": 3}}) == \
        ErrorResponse(1, 5, "3")


@pytest.mark.parametrize("obj", [
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "method": "m", "params": [1, 2]},
    {"jsonrpc": "2.0", "id": 1, "method": "m", "params": "x"},
])
def test_method_and_params_types(obj: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        decode(obj)


def test_j04_notification_has_no_id() -> None:
    assert isinstance(decode({"jsonrpc": "2.0", "method": "notifications/x"}), Notification)
    wire = encode(Notification("notifications/x", {}))
    assert wire == {"jsonrpc": "2.0", "method": "notifications/x"}
    assert "id" not in encode(Notification("n", {"a": 1}))


def test_encode_each_kind() -> None:
    assert encode(Request(3, "ping", {})) == {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert encode(Request(3, "m", {"a": 1})) == \
        {"jsonrpc": "2.0", "id": 3, "method": "m", "params": {"a": 1}}
    assert encode(Response("x", {})) == {"jsonrpc": "2.0", "id": "x", "result": {}}
    assert encode(ErrorResponse(None, -32601, "nope")) == \
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "nope"}}
    assert encode(ErrorResponse(1, 2, "m", {"d": 1}))["error"]["data"] == {"d": 1}


def test_x01_dumps_is_compact_utf8() -> None:
    assert dumps({"a": [1, 2], "b": "é\n\u2028"}) == \
        '{"a":[1,2],"b":"é\\n\u2028"}'.encode()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1, 2}, object()])
def test_dumps_refuses_non_json(value: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        dumps({"v": value})


# -- hypothesis ---------------------------------------------------------------------------------

_scalars = (st.none() | st.booleans() | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False) | st.text())
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
ids = st.integers() | st.text()


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_x01_dumps_is_one_line_and_round_trips(value: Any) -> None:
    data = dumps(value)
    assert b"\n" not in data and b"\r" not in data
    assert json.loads(data) == value
    assert dumps(json.loads(data)) == data


_messages = st.one_of(
    st.builds(Request, ids, st.text(), json_objects),
    st.builds(Notification, st.text(), json_objects),
    st.builds(Response, ids, json_objects),
    st.builds(ErrorResponse, ids | st.none(), st.integers(), st.text(),
              json_values.filter(lambda v: v is not None)),
)


@settings(max_examples=200, deadline=None)
@given(message=_messages)
def test_encode_decode_round_trip(message: Message) -> None:
    wire = json.loads(dumps(encode(message)))
    assert decode(wire) == message
