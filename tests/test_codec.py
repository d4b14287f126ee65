"""The session's JSON codec (``_json``) and record builders (``_build``): the same bytes,
values and objects as ``json`` and the dataclasses' own constructors, for any input."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import CallToolResult, Completed, Failed, RequestHandle, TextContent
from mcp_proto._build import builder
from mcp_proto._errors import RpcError
from mcp_proto._events import make_completed, make_handle
from mcp_proto._types import parse_call_tool_result
from mcp_proto.wire import _json
from mcp_proto.wire._inbound import END, LineReader, Unreadable
from mcp_proto.wire._json import MAX_CACHED_HEADS, dumps, dumps_request, loads

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "%", "%d", "%s%%", "é", "\u2028", "\x00", '"\\'])
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


def _reference(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(obj=_json_values)
def test_dumps_is_json_dumps(obj: Any) -> None:
    assert dumps(obj) == _reference(obj)
    assert loads(dumps(obj).decode()) == json.loads(_reference(obj))


@settings(max_examples=300, deadline=None)
@given(rid=st.integers(0, 2**63), method=_text,
       params=st.none() | st.dictionaries(_text, _json_values, max_size=4))
def test_dumps_request_is_the_envelope_encoded(rid: int, method: str,
                                               params: dict[str, Any] | None) -> None:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    assert dumps_request(rid, method, params) == _reference(msg)


@settings(max_examples=300, deadline=None)
@given(rid=st.integers(0, 2**63), name=_text, arguments=_json_values,
       extra=st.none() | st.dictionaries(_text, _json_values, max_size=2),
       swapped=st.booleans())
def test_a_tool_call_is_the_envelope_encoded(rid: int, name: str, arguments: Any,
                                             extra: dict[str, Any] | None,
                                             swapped: bool) -> None:
    """tools/call keeps a head per tool name: the same bytes as json, whatever the name, the
    arguments, the order of the keys or keys beside them."""
    params: dict[str, Any] = {"arguments": arguments, "name": name} if swapped \
        else {"name": name, "arguments": arguments}
    if extra:
        params.update(extra)
    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    assert dumps_request(rid, "tools/call", params) == _reference(msg)
    assert dumps_request(rid + 1, "tools/call", params) == _reference({**msg, "id": rid + 1})


def test_tool_call_heads_are_bounded() -> None:
    for i in range(MAX_CACHED_HEADS + 10):
        sent = json.loads(dumps_request(i, "tools/call", {"name": f"t{i}", "arguments": {}}))
        assert sent["params"] == {"name": f"t{i}", "arguments": {}}
    assert len(_json._call_heads) <= MAX_CACHED_HEADS


def test_dumps_request_heads_are_bounded() -> None:
    for i in range(MAX_CACHED_HEADS + 10):
        assert json.loads(dumps_request(i, f"custom/{i}", None))["method"] == f"custom/{i}"
    assert len(_json._heads) <= MAX_CACHED_HEADS


def test_lone_surrogates_are_escaped_as_json_does() -> None:
    obj = {"id": "\ud800", "x": ["\udfff"]}
    assert dumps(obj) == json.dumps(obj, separators=(",", ":")).encode("ascii")
    out = dumps_request(7, "m", {"v": "\ud800"})
    assert json.loads(out) == {"jsonrpc": "2.0", "id": 7, "method": "m",
                               "params": {"v": "\ud800"}}


@pytest.mark.parametrize("bad, error", [
    ({"x": math.nan}, ValueError),
    ({"x": math.inf}, ValueError),
    ({"x": {1, 2}}, TypeError),
    ({"x": object()}, TypeError),
    ({(1, 2): "tuple key"}, TypeError),
])
def test_values_json_cannot_carry_are_refused(bad: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        dumps(bad)
    with pytest.raises(error):
        dumps_request(1, "m", bad)


def test_a_cycle_is_refused_and_the_encoder_still_works() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    shared = [1]
    for _ in range(3):
        with pytest.raises(ValueError, match="Circular reference"):
            dumps(cycle)
        with pytest.raises(ValueError, match="Circular reference"):
            dumps_request(1, "m", {"a": cycle})
        # A container seen twice is no cycle (a reused encoder forgot the failed call).
        assert dumps({"a": shared, "b": shared}) == b'{"a":[1],"b":[1]}'


def test_a_cycle_is_found_before_the_stack_runs_out() -> None:
    """With a high recursion limit, a cycle must still be a ValueError, not a crash."""
    code = ("import sys; sys.setrecursionlimit(1_000_000)\n"
            "from mcp_proto.wire._json import dumps\n"
            "c = {}; c['a'] = c\n"
            "try:\n    dumps(c)\nexcept ValueError as e:\n    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0 and "Circular reference" in out.stdout, out


def test_an_encoder_that_failed_is_not_used_again() -> None:
    """A failed call may leave its encoder's table of containers half full: the same
    container, fixed, must encode (a reused encoder would call it a cycle)."""
    for _ in range(3):
        value: dict[str, Any] = {"a": {1, 2}}
        with pytest.raises(TypeError):
            dumps(value)
        value["a"] = 1
        assert dumps(value) == b'{"a":1}'


class _Yielding(dict):  # type: ignore[type-arg]
    """A mapping whose items() lets other threads run in the middle of its encoding."""

    def items(self) -> Any:
        time.sleep(0)
        return super().items()


def test_threads_encoding_the_same_value_at_once_get_their_own_encoders() -> None:
    """Threads switch in the middle of an encoding (the C encoder calls items() of a dict
    subclass): a shared encoder would see the other thread's container as a cycle."""
    value = _Yielding(a=_Yielding(b=[1, 2]), c="d")
    expected = _reference(dict(value))
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda _: dumps(value), range(400))) == {expected}


@settings(max_examples=300, deadline=None)
@given(obj=_json_values, pad=st.sampled_from(["", " ", "\t", " \r"]))
def test_loads_is_json_loads(obj: Any, pad: str) -> None:
    text = pad + json.dumps(obj) + pad
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize("text", [
    "", "{", '{"a":1} x', '{"a":1}{"b":2}', "[1,]", "{'a':1}", "\ufeff{}", '{"a":tru}',
])
def test_loads_fails_as_json_loads_does(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text)
    assert str(ours.value) == str(reference.value)


def _read(text: str, how: str) -> Any:
    """``text`` as one line through the reader: ``next`` (which calls :func:`loads`), or the
    two paths that inline it, ``whole`` (one answer read alone) and ``items`` (a read's
    lines); an :class:`Unreadable` as its type and message, to compare."""
    reader = LineReader(1 << 20)
    data = text.encode("utf-8", "surrogatepass") + b"\n"
    if how == "whole":
        value = reader.whole(data)
        assert value is not END
    else:
        reader.feed(data)
        values = [reader.next()] if how == "next" else list(reader.items())
        assert len(values) == 1
        value = values[0]
    if type(value) is Unreadable:
        return ("unreadable", type(value.error), str(value.error))
    return ("value", value)


@settings(max_examples=200, deadline=None)
@given(obj=_json_values, pad=st.sampled_from(["", " ", "\t"]))
def test_the_reader_decodes_a_line_as_loads_does(obj: Any, pad: str) -> None:
    """The reader's inlined decoding (``whole``, ``items``) gives what ``next`` does."""
    text = pad + json.dumps(obj) + pad
    reference = _read(text, "next")
    assert reference == ("value", json.loads(text))
    assert _read(text, "whole") == reference
    assert _read(text, "items") == reference


@pytest.mark.parametrize("text", [
    "{", '{"a":1} x', '{"a":1}{"b":2}', "[1,]", "{'a':1}", "\ufeff{}", '{"a":tru}', "5", '"s"',
    "NaN", "01", "1 2", '"\udc80"', "[" * 100_000,
])
def test_the_reader_refuses_a_line_as_loads_does(text: str) -> None:
    """Not one JSON value, a scalar, a byte-order mark, nesting past the interpreter's limit,
    bytes that are not UTF-8: ``whole`` and ``items`` say what ``next`` says."""
    reference = _read(text, "next")
    assert _read(text, "whole") == reference
    assert _read(text, "items") == reference


_blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "other"]),
     "text": st.none() | st.integers() | _text},
    optional={"annotations": st.none() | st.dictionaries(_text, _json_values, max_size=2),
              "_meta": st.none() | st.dictionaries(_text, _json_values, max_size=2),
              "extra": _json_values},
) | _json_values


def _outcome(result: dict[str, Any]) -> Any:
    try:
        return parse_call_tool_result(result).content
    except Exception as exc:  # the error's type and text are compared
        return (type(exc), str(exc))


@settings(max_examples=300, deadline=None)
@given(block=_blocks)
def test_a_one_block_result_is_parsed_as_the_first_of_two(block: Any) -> None:
    """A result of one block (parsed without a list) holds what the general loop makes of the
    same block, first of two; or fails with the same error."""
    one = _outcome({"content": [block]})
    two = _outcome({"content": [block, block]})
    if type(one) is tuple and type(two) is tuple and two and not isinstance(two[0], type):
        assert one == two[:1]
    else:
        assert one == two


@settings(max_examples=100, deadline=None)
@given(rid=st.integers(0, 2**63), name=_text, surrogate=st.sampled_from(["\ud800", "\udfff"]))
def test_a_name_with_a_lone_surrogate_is_escaped_as_json_does(rid: int, name: str,
                                                             surrogate: str) -> None:
    """A method or tool name that cannot be UTF-8: the whole message escaped, as json's
    ASCII form (its head may be kept; what is sent never changes)."""
    for method, params in ((name + surrogate, None),
                           ("tools/call", {"name": name + surrogate, "arguments": {}})):
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        expected = json.dumps(msg, separators=(",", ":")).encode("ascii")
        assert dumps_request(rid, method, params) == expected
        assert dumps_request(rid, method, params) == expected  # (the kept head)


@pytest.mark.parametrize("rid", [True, None, "7", 1.5])
def test_an_id_that_is_not_an_int_is_encoded_as_json_does(rid: Any) -> None:
    """The session's ids are ints; anything else is still encoded as json would, never
    pasted in (``True`` is ``true``, a string is quoted)."""
    params = {"name": "echo", "arguments": {}}
    expected = _reference({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    assert dumps_request(rid, "tools/call", params) == expected


def test_loads_keeps_json_constants_and_big_numbers() -> None:
    value = loads('{"n":NaN,"big":123456789012345678901234567890,"f":1e400}')
    assert math.isnan(value["n"]) and value["big"] == 123456789012345678901234567890
    assert value["f"] == math.inf


# -- builders ----------------------------------------------------------------------------------


def _fields_of(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


@settings(max_examples=100, deadline=None)
@given(rid=st.integers(), method=_text, value=_json_values,
       text=_text, meta=st.none() | st.dictionaries(_text, _json_values, max_size=2))
def test_builders_make_what_the_constructors_make(rid: int, method: str, value: Any,
                                                  text: str, meta: dict[str, Any] | None
                                                  ) -> None:
    handle = make_handle(rid, method)
    assert handle == RequestHandle(rid, method) and hash(handle) == hash(RequestHandle(rid,
                                                                                       method))
    assert make_completed(handle, value) == Completed(handle=handle, value=value)
    error = RpcError(-32000, text)
    assert builder(Failed)(handle, error) == Failed(handle=handle, error=error)
    block = builder(TextContent)(text, None, meta, "text")
    assert block == TextContent(text=text, meta=meta)
    raw = {"content": [{"type": "text", "text": text}]}
    result = builder(CallToolResult)((block,), value, False, meta, raw)
    assert result == CallToolResult(content=(block,), structured_content=value, meta=meta,
                                    raw=raw)
    assert repr(result) == repr(CallToolResult(content=(block,), structured_content=value,
                                               meta=meta, raw=raw))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.is_error = True  # type: ignore[misc]


def test_a_builder_takes_every_field_in_order() -> None:
    build = builder(CallToolResult)
    assert build.__code__.co_varnames[:build.__code__.co_argcount] == tuple(
        _fields_of(CallToolResult))


def test_a_builder_runs_no_constructor_a_base_brings() -> None:
    class Base:  # a slotted base whose constructors a build must not run (nor trip over)
        __slots__ = ()

        def __new__(cls, *args: object) -> Base:
            raise AssertionError("the builder called the base's __new__")

        def __init__(self, *args: object) -> None:
            raise AssertionError("the builder called the base's __init__")

    @dataclasses.dataclass(frozen=True, slots=True)
    class Child(Base):
        a: int
        b: str

    built = builder(Child)(1, "x")
    assert type(built) is Child and (built.a, built.b) == (1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.a = 2  # type: ignore[misc]


def test_builders_refuse_what_they_cannot_build() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Plain):  # its frozen base has a __setattr__ of its own
        b: int

    @dataclasses.dataclass(frozen=True)
    class Referable:  # CPython will not swap the class of one whose slots add __weakref__
        __slots__ = ("__weakref__", "a")
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Shadowing:
        o: int

    with pytest.raises(TypeError, match="layout"):
        builder(Referable)
    with pytest.raises(TypeError, match="shadow"):
        builder(Shadowing)
    with pytest.raises(TypeError, match="slotted"):
        builder(Plain)
    with pytest.raises(TypeError, match="__post_init__"):
        builder(Checked)
    with pytest.raises(TypeError, match="__setattr__"):
        builder(Derived)
