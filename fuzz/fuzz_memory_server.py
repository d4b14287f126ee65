"""Fuzz harness for the in-memory server (``mcp_proto.testing._server.MemoryServer``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the rest is what the client wrote, fed in chunks cut
  where the data's last bytes say;
- **structured** (otherwise): client messages drawn from the data (every method the server
  knows and some it does not, with and without the 2026-07-28 envelope, good and bad
  params, ids of every type, cursors, cancellations, answers to server requests, batches,
  broken lines, lines over the limit), with driver actions between them (running or
  failing the handler calls, progress, logs, requests to the client, list changes, exit).

Properties (any violation raises AssertionError): nothing escapes ``receive_data``,
``receive_eof``, ``handle_timeout``, ``next_call``, ``finish``, ``call_progress`` or the
notify methods (``call_request`` and ``call_log`` only ``LocalProtocolError`` as
documented); :attr:`MemoryServer.internal_errors` stays 0; everything ``data_to_send()``
returns is compact UTF-8 NDJSON of JSON-RPC objects that :func:`decode` accepts; every
response answers an id the client used, at most once per request; the output stays under
``MAX_QUEUED_OUTPUT`` and the received log under ``MAX_RECEIVED``.

Run: ``python fuzz/fuzz_memory_server.py /tmp/fz/memory_server fuzz/corpus/memory_server``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from mcp_proto._errors import LocalProtocolError, RemoteProtocolError, RpcError
from mcp_proto._limits import Limits
from mcp_proto.testing._server import (
    MAX_QUEUED_OUTPUT,
    MAX_RECEIVED,
    MemoryServer,
)
from mcp_proto.wire._json import dumps
from mcp_proto.wire._jsonrpc import decode

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

#: The server's line limit here: small, so that oversize lines are cheap to make.
LIMIT = 2048
METHODS = ("initialize", "server/discover", "ping", "logging/setLevel", "tools/list",
           "tools/call", "resources/list", "resources/templates/list", "resources/read",
           "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
           "completion/complete", "subscriptions/listen", "tasks/get", "tasks/result",
           "tasks/list", "tasks/cancel", "tasks/update", "nope", "")
NOTES = ("notifications/initialized", "notifications/cancelled", "notifications/progress",
         "notifications/roots/list_changed", "notifications/x")
VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
            "2099-01-01", "")
NAMES = ("echo", "add", "fail", "rpc", "greet", "slow", "job", "nope", "")
URIS = ("memo://a", "memo://b", "memo://users/ada", "memo://users/", "memo://x/y", "")
ODD: tuple[Any, ...] = (None, True, 0, -1, 2**64, 1.5, "", "x", [], {}, [1], {"a": {}})
LEVELS = ("debug", "info", "warning", "error", "emergency", "loud")


def make_server(ch: Choices) -> MemoryServer:
    versions = ch.pick((None, ("2026-07-28",), ("2025-11-25", "2025-03-26"), ("2025-03-26",)))
    server = MemoryServer("fuzz", protocol_versions=versions, page_size=1 + ch.below(3),
                          limits=Limits(max_message_size=LIMIT))
    server.add_tool("echo", lambda text="": text)
    server.add_tool("add", lambda a=0, b=0: a + b, output_schema={"type": "object"})
    server.add_tool("fail", lambda: 1 / 0)
    server.add_tool("rpc", lambda: (_ for _ in ()).throw(RpcError(-32000, "no", {1})))
    server.add_tool("slow", lambda text="": text, task_support="optional")
    server.add_tool("job", lambda: (_ for _ in ()).throw(RpcError(-32000, "no")),
                    task_support="required")
    server.add_resource("memo://a", text="a")
    server.add_resource("memo://b", blob=b"\x00\x01")
    server.add_resource_template("memo://users/{name}", lambda name: name)
    server.add_prompt("greet", lambda who: f"hi {who}")
    return server


def draw_params(ch: Choices, method: str) -> Any:
    k = ch.below(8)
    if k == 0:
        return ch.pick(ODD)
    params: dict[str, Any] = {}
    if ch.below(3):
        meta: dict[str, Any] = {}
        if ch.below(4):
            meta["io.modelcontextprotocol/protocolVersion"] = ch.pick((*VERSIONS, 3))
        if ch.below(4):
            meta["io.modelcontextprotocol/clientCapabilities"] = ch.pick((
                {}, {"sampling": {}}, None, {"extensions": {"io.modelcontextprotocol/tasks": {}},
                                             "elicitation": {}}))
        if ch.chance(3):
            meta["io.modelcontextprotocol/logLevel"] = ch.pick(LEVELS)
        if ch.chance(2):
            meta["progressToken"] = ch.pick((1, "t", None, 1.5))
        params["_meta"] = meta if ch.below(6) else ch.pick(ODD)
    if method == "initialize":
        params.update(protocolVersion=ch.pick((*VERSIONS, None)),
                      capabilities=ch.pick(({}, {"sampling": {}, "roots": {}}, [])),
                      clientInfo={"name": "c", "version": "1"})
    elif method in ("tools/call", "prompts/get"):
        params["name"] = ch.pick((*NAMES, None, 1))
        params["arguments"] = ch.pick(({}, {"text": "x"}, {"who": "w"}, {"a": 1, "b": 2},
                                       [], {"who": 1}))
        if ch.chance(2):
            params["task"] = ch.pick(({}, {"ttl": 0}, {"ttl": 10**6}, {"ttl": -1}, [], None))
    elif method.startswith("tasks/"):
        params["taskId"] = ch.pick(("task-1", "task-2", "task-3", "", 1, None))
        if ch.chance(2):
            params["inputResponses"] = ch.pick(({"input-1": {"action": "accept"}}, [],
                                                {"input-2": 1}))
        if ch.chance(3):
            params["cursor"] = ch.pick(("", "dGFza3M6MQ==", 5))
    elif method.startswith("resources/") and "list" not in method:
        params["uri"] = ch.pick((*URIS, None))
    elif method.endswith("/list"):
        if ch.chance(2):
            params["cursor"] = ch.pick(("", "x", "dG9vbHM6MQ==", "dG9vbHM6LTE=", 5))
    elif method == "logging/setLevel":
        params["level"] = ch.pick(LEVELS)
    elif method == "subscriptions/listen":
        params["notifications"] = ch.pick(({"toolsListChanged": True},
                                           {"resourceSubscriptions": ["memo://a", 1]},
                                           {"taskIds": ["t"]}, []))
    elif method == "completion/complete":
        params.update(ref={"type": "ref/prompt", "name": "greet"},
                      argument={"name": "who", "value": ""})
    return params


def draw_message(ch: Choices, ids: list[Any], asked: list[Any]) -> Any:
    k = ch.below(10)
    if k <= 5:
        method = ch.pick(METHODS)
        rid = ch.pick((len(ids) + 1, len(ids) + 1, f"s{len(ids)}", None, 1.0, True,
                       ids[-1] if ids else 0))
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if ch.below(6):
            msg["params"] = draw_params(ch, method)
        ids.append(rid)
        return msg
    if k == 6:
        note: dict[str, Any] = {"jsonrpc": "2.0", "method": ch.pick(NOTES)}
        note["params"] = {"requestId": ch.pick(ids) if ids else 1} if ch.below(3) else \
            ch.pick(ODD)
        return note
    if k == 7:
        rid = ch.pick(asked) if asked and ch.below(3) else ch.pick((1, "x", None, []))
        if ch.below(2):
            return {"jsonrpc": "2.0", "id": rid, "result": ch.pick(({}, {"roots": []}, 1))}
        return {"jsonrpc": "2.0", "id": rid, "error": ch.pick(({"code": -1, "message": "no"},
                                                               {"code": "x"}, 1))}
    if k == 8:
        return [draw_message(ch, ids, asked) for _ in range(ch.below(3))]
    return ch.pick((*ODD, {"jsonrpc": "1.0", "id": 1}, {"jsonrpc": "2.0"}))


def draw_line(ch: Choices, ids: list[Any], asked: list[Any]) -> bytes:
    k = ch.below(12)
    if k == 0:
        return b"x" * (LIMIT + 1 + ch.below(300)) + b"\n"
    if k == 1:
        return ch.pick((b"not json\n", b"\xff\xfe\n", b"{\n", b"\r\n", b"\n", b"[]\n",
                        b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n'))
    try:
        line = dumps(draw_message(ch, ids, asked))
    except (ValueError, TypeError):
        line = b"{}"
    return line + b"\n"


def act(server: MemoryServer, ch: Choices, asked: list[Any], now: float) -> None:
    k = ch.below(9)
    try:
        if k <= 2:
            call = server.next_call()
            if call is None:
                return
            if ch.chance(3):
                server.call_progress(call.call_id, ch.pick((1, 0.5, 2, -1)), ch.pick((None, 4)))
            if ch.chance(3):
                try:
                    server.call_log(call.call_id, ch.pick(LEVELS[:-1]), {"x": 1})
                except ValueError:
                    raise AssertionError("call_log refused a known level") from None
            if ch.chance(3):
                try:
                    asked.append(server.call_request(
                        call.call_id, ch.pick(("sampling/createMessage", "roots/list", "ping",
                                               "elicitation/create", "tools/list")),
                        ch.pick(({}, {"_meta": 1}, {"x": {1}}))))
                except LocalProtocolError:
                    pass
            outcome = ch.pick((call.run(), "x", {"content": []}, ValueError("v"),
                               RpcError(-32000, "r"), {1, 2}, None, [1]))
            if not ch.chance(6):
                server.finish(call.call_id, outcome, now)
        elif k == 3:
            server.notify_tools_changed()
            server.notify_resource_updated(ch.pick(URIS))
        elif k == 4:
            server.log(ch.pick(LEVELS[:-1]), "m")
        elif k == 5:
            server.next_answer()
        elif k == 6 and ch.chance(8):
            server.exit(ch.below(3), "bye")
        else:
            server.handle_timeout(now)
    except (AssertionError, LocalProtocolError):
        raise
    except Exception as exc:
        escaped(f"driver action {k}", exc)


def check_output(data: bytes, answered: dict[Any, int]) -> None:
    if not data:
        return
    assert data.endswith(b"\n"), data[-80:]
    for line in data[:-1].split(b"\n"):
        assert line and b"\r" not in line, line[:100]
        obj = json.loads(line.decode("utf-8"))
        assert type(obj) is dict and obj.get("jsonrpc") == "2.0", line[:200]
        assert dumps(obj) == line, f"not compact: {line[:200]!r}"
        try:
            decode(obj)
        except RemoteProtocolError as exc:
            raise AssertionError(f"the server wrote an invalid message: {exc}") from exc
        if ("result" in obj or "error" in obj) and "id" in obj:
            key = (type(obj["id"]), obj["id"])
            answered[key] = answered.get(key, 0) + 1


def feed(server: MemoryServer, data: bytes, now: float) -> None:
    try:
        server.receive_data(data, now)
    except Exception as exc:
        escaped("receive_data", exc)


def check(data: bytes) -> None:
    ch = Choices(data[1:] if data and data[0] >= 0x80 else data[-4:])
    server = make_server(ch)
    answered: dict[Any, int] = {}
    now = 0.0
    asked: list[Any] = []
    if not data or data[0] < 0x80:
        body = data[1:]
        at = 0
        while at < len(body):
            step = 1 + ch.below(64) if ch.remaining() else len(body)
            feed(server, body[at:at + step], now)
            act(server, ch, asked, now)
            check_output(server.data_to_send(), answered)
            at += step
    else:
        ids: list[Any] = []
        while ch.remaining():
            chunk = b"".join(draw_line(ch, ids, asked) for _ in range(1 + ch.below(3)))
            cut = ch.below(len(chunk) + 1)
            feed(server, chunk[:cut], now)
            feed(server, chunk[cut:], now)
            now += ch.below(3)
            act(server, ch, asked, now)
            check_output(server.data_to_send(), answered)
    while (call := server.next_call()) is not None:
        server.finish(call.call_id, call.run(), now)
    try:
        server.receive_eof(now + 1)
    except Exception as exc:
        escaped("receive_eof", exc)
    check_output(server.data_to_send(), answered)
    server.stderr_to_send()
    assert server.exit_code is not None
    assert server.internal_errors == 0, "the server met a bug of its own (see its stderr)"
    assert len(server.received) <= MAX_RECEIVED
    assert len(server.data_to_send()) <= MAX_QUEUED_OUTPUT
    received_ids = [(type(m["id"]), m["id"]) for m in server.received
                    if isinstance(m, dict) and type(m.get("id")) in (int, str)]
    for key, times in answered.items():
        assert times <= received_ids.count(key), f"id {key[1]!r} answered {times} times"


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
