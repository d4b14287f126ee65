"""A deliberately misbehaving stdio MCP server (handshake era) for the test suite.

Usage: ``python scripted_server.py [SCENARIO]``. Only the first argument is read; without it
the scenario is ``default``. Standard library only; stdin/stdout carry newline-delimited
JSON-RPC 2.0, one compact object per line; stderr is for diagnostics.

Common behaviour (every scenario unless it says otherwise)
----------------------------------------------------------
* ``initialize``: answers the client's ``protocolVersion`` if it is one of 2024-11-05,
  2025-03-26, 2025-06-18, 2025-11-25, else 2025-11-25; ``capabilities`` is ``{"tools": {}}``;
  ``serverInfo`` is ``{"name": "scripted-server", "version": "1.0.0"}``; ``instructions`` is
  ``"scenario: <name>"``. Requests are not refused before ``initialize``.
* ``ping`` -> ``{}``. Unknown methods (``server/discover`` too) -> -32601. Non-JSON input ->
  -32700 with ``id: null``. Notifications are recorded and otherwise ignored; in particular
  ``notifications/cancelled`` does NOT stop a running tool (its response is still sent).
* ``tools/list`` -> tools ``echo``, ``sleep``, ``received`` (plus ``huge`` in ``huge-line`` and
  ``flood_done`` in ``stderr-flood``), no ``nextCursor``.
* ``tools/call`` runs in its own thread; stdout writes are serialised by a lock.

  - ``echo {text}`` -> text content ``text`` (missing/non-string -> ``isError`` result).
  - ``sleep {seconds}`` -> sleeps ``seconds`` (number, default 1), then text ``"slept"``.
  - ``received`` -> text ``json.dumps(messages)``: every message read from the client so far,
    in arrival order, including this very call. Never affected by the scenario.
  - ``notify_flood {n}`` (not listed) -> ``n`` ``notifications/message`` written at once, then
    text ``"sent <n>"`` (for back-pressure tests).
  - any other name -> JSON-RPC error -32602 ``"Unknown tool: <name>"``.

* Server->client requests get ids ``<prefix>-<n>`` counting from 1 per prefix (``srv``,
  ``s``, ``e``, ``r``, ``u``), so the first is ``srv-1``, ``s-1``, ... The server waits up to 30 s
  for the reply. Responses to unknown ids are logged to stderr and ignored.
* A JSON array from the client (2025-03-26 batch) is handled inline, element by element, and
  the responses are written back as one JSON array.
* Exit status 0 on stdin EOF.

Scenarios (they change what a ``tools/call`` of any tool but ``received`` does)
-----------------------------------------------------------------------------
``default``
    As above.
``ping-mid-call``
    Sends ``{"id": "srv-<n>", "method": "ping"}``, waits for the reply, then answers text
    ``"pong-ok"`` if the reply was ``result: {}``, else error -32603 ``"bad ping reply: <json>"``.
``garbage-line``
    Before each answer writes the line ``this is not json`` and then an empty line.
``huge-line``
    ``huge`` is answered with one line of more than 17 MiB (a valid response whose text is
    17 MiB of ``x``); other tools answer normally.
``die-mid-call``
    Writes ``dying`` to stderr and exits with status 3 without answering.
``stderr-flood``
    At start-up a thread writes 10 MiB to stderr (160 chunks of 64 KiB, lines of 1023 ``e``)
    and then the line ``LAST-STDERR-LINE``; the server serves normally meanwhile. Tool
    ``flood_done`` answers text ``"flood-done"`` once everything has been written to stderr
    (so it hangs if the client does not drain stderr).
``grandchild``
    At start-up spawns ``python -c "import time; time.sleep(600)"`` (same process group,
    inheriting stdin, stdout and stderr) and writes its pid (decimal, newline) to the file named
    by ``$SCRIPTED_GRANDCHILD_PIDFILE`` (atomically, before reading stdin). Serves normally;
    does not reap or kill the grandchild.
``ignore-term``
    Ignores SIGTERM and, on stdin EOF, keeps sleeping instead of exiting (needs SIGKILL).
``sampling``
    Sends ``sampling/createMessage`` (id ``s-<n>``, one user text message: argument ``prompt``
    or ``"Say hello"``, ``maxTokens`` 100) and answers with the text of the sampled content
    (text blocks joined; other content as JSON).
``elicitation``
    Sends ``elicitation/create`` (id ``e-<n>``, form with a required string ``name``) and
    answers text ``json.dumps(result, sort_keys=True)``.
``roots``
    Sends ``roots/list`` (id ``r-<n>``) and answers text ``json.dumps(result, sort_keys=True)``.
    For these three, an error reply gives an ``isError`` result whose text is the error message;
    no reply within 30 s gives error -32603.
``progress``
    With ``_meta.progressToken``: three ``notifications/progress`` (progress 1, 2, 3, total 3,
    message ``step <i>``), then the result text ``"progress-done"``, then one late progress
    notification (progress 4, total 4, message ``late``). Without a token: just the result.
``log-before-init``
    On ``initialize`` sends ``notifications/message`` (level info, logger ``scripted``, data
    ``"log before initialize"``) and a ``ping`` (id ``srv-1``) and answers ``initialize`` only
    after the ping reply (error -32603 if the reply was not ``result: {}``).
``bad-version``
    ``initialize`` answers ``protocolVersion: "1999-01-01"``.
``no-server-info``
    ``initialize`` result has no ``serverInfo``.
``unknown-response``
    Each call is answered twice: the normal response, then a second response for the same id
    with text ``"duplicate-response"``, then a response for id 999999 (never requested) with
    text ``"unknown-id-response"``.
``batch``
    ``initialize`` always answers 2025-03-26. Each call's response is written as the JSON array
    ``[notifications/message (level info, data "batched"), response]``.
``unknown-server-request``
    Sends ``{"id": "u-<n>", "method": "x/unknown", "params": {}}``, answers text
    ``str(error.code)`` of the client's error reply (expected ``"-32601"``), or ``"no-error"``.
``infinite-pages``
    ``tools/list`` always returns ``nextCursor: "same"`` (tools echo, sleep, received).
``server-cancel``
    Sends ``elicitation/create`` (id ``e-<n>``), immediately ``notifications/cancelled``
    ``{requestId: "e-<n>", reason: "server changed its mind"}``, then answers text
    ``"cancelled e-<n>"`` without waiting. A later reply for ``e-<n>`` is only recorded.
``exit-on-probe``
    Any request other than ``initialize``/``ping`` arriving before ``initialize`` (e.g.
    ``server/discover``): writes ``unexpected <method> before initialize`` to stderr and exits
    with status 1 without answering (like some legacy servers, see V-23).
``slow-exit-on-probe``
    The same, but exits 0.7 s after reading the probe: the ``initialize`` the client sends
    beside it after 0.5 s is still unread in the pipe when it exits.
``null-id-error``
    Before each answer writes an error with ``id: null`` and one without ``id`` (both -32700).
``stray-notifications``
    Before each answer sends notifications the client did not ask for:
    ``notifications/tools/list_changed``, ``notifications/resources/updated``
    (``demo://never-subscribed``), ``notifications/progress`` (token ``no-such-token``),
    ``notifications/elicitation/complete`` (``no-such-elicitation``), ``notifications/cancelled``
    (``never-sent``) and ``x/custom``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

JSONObject = dict[str, Any]
RequestId = str | int

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
CLIENT_REPLY_TIMEOUT = 30.0
HUGE_TEXT_BYTES = 17 * 1024 * 1024
FLOOD_CHUNK = (b"e" * 1023 + b"\n") * 64  # 64 KiB
FLOOD_CHUNKS = 160  # 10 MiB

SCENARIOS = frozenset(
    {
        "default",
        "ping-mid-call",
        "garbage-line",
        "huge-line",
        "die-mid-call",
        "stderr-flood",
        "grandchild",
        "ignore-term",
        "sampling",
        "elicitation",
        "roots",
        "progress",
        "log-before-init",
        "bad-version",
        "no-server-info",
        "unknown-response",
        "batch",
        "unknown-server-request",
        "infinite-pages",
        "server-cancel",
        "exit-on-probe",
        "slow-exit-on-probe",
        "null-id-error",
        "stray-notifications",
    }
)


def _tool(name: str, description: str, properties: JSONObject, required: list[str]) -> JSONObject:
    schema: JSONObject = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


ECHO_TOOL = _tool("echo", "Echo the text back.", {"text": {"type": "string"}}, ["text"])
SLEEP_TOOL = _tool("sleep", "Sleep, then answer.", {"seconds": {"type": "number"}}, [])
RECEIVED_TOOL = _tool("received", "Every message received so far, as JSON.", {}, [])
HUGE_TOOL = _tool("huge", "Answer with a 17 MiB line.", {}, [])
FLOOD_DONE_TOOL = _tool("flood_done", "Answer once the stderr flood is written.", {}, [])


def _log(message: str) -> None:
    _write_fd(2, f"[scripted-server] {message}\n".encode())


def _write_fd(fd: int, data: bytes) -> None:
    """Write everything to a raw fd (no Python buffer: safe at shutdown with daemon threads)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _text_result(text: str, is_error: bool = False) -> JSONObject:
    result: JSONObject = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _result(request_id: RequestId, result: JSONObject) -> JSONObject:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: RequestId | None, code: int, message: str) -> JSONObject:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _notification(method: str, params: JSONObject) -> JSONObject:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _encode(message: object) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


class _Waiter:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.response: JSONObject | None = None


class ScriptedServer:
    """One stdio session, behaving as the chosen scenario dictates."""

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self._write_lock = threading.RLock()
        self._state_lock = threading.Lock()
        self._received: list[Any] = []
        self._waiters: dict[RequestId, _Waiter] = {}
        self._counters: dict[str, int] = {}
        self._initialize_seen = False
        self.flood_done = threading.Event()

    # -- output -------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        with self._write_lock, contextlib.suppress(OSError):  # the client went away
            _write_fd(1, data)

    def send(self, message: object) -> None:
        self.send_raw(_encode(message))

    # -- server -> client requests -------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        with self._state_lock:
            count = self._counters.get(prefix, 0) + 1
            self._counters[prefix] = count
        return f"{prefix}-{count}"

    def start_request(self, prefix: str, method: str, params: JSONObject | None) -> str:
        """Send a request to the client; its reply can be collected with wait_reply."""
        request_id = self._next_id(prefix)
        with self._state_lock:
            self._waiters[request_id] = _Waiter()
        message: JSONObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def wait_reply(self, request_id: str) -> JSONObject | None:
        with self._state_lock:
            waiter = self._waiters[request_id]
        waiter.event.wait(CLIENT_REPLY_TIMEOUT)
        return waiter.response

    def ask_client(self, prefix: str, method: str, params: JSONObject | None) -> JSONObject | None:
        return self.wait_reply(self.start_request(prefix, method, params))

    def _route_response(self, message: JSONObject) -> None:
        request_id = message.get("id")
        with self._state_lock:
            waiter = self._waiters.get(request_id) if isinstance(request_id, (str, int)) else None
        if waiter is None or waiter.event.is_set():
            _log(f"ignoring response for unknown id {request_id!r}")
            return
        waiter.response = message
        waiter.event.set()

    # -- input ---------------------------------------------------------------------------------

    def received_snapshot(self) -> list[Any]:
        with self._state_lock:
            return list(self._received)

    def handle_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            self.send(_error(None, -32700, "Parse error"))
            return
        with self._state_lock:
            self._received.append(message)
        if isinstance(message, list):
            responses = [r for item in message if (r := self.handle_message(item, True))]
            if responses:
                self.send(responses)
            return
        response = self.handle_message(message, False)
        if response is not None:
            self.send(response)

    def handle_message(self, message: object, inline: bool) -> JSONObject | None:
        """Handle one message; return a response to write now, if any."""
        if not isinstance(message, dict):
            return _error(None, -32600, "Invalid request")
        method = message.get("method")
        if not isinstance(method, str):
            if "id" in message and ("result" in message or "error" in message):
                self._route_response(message)
                return None
            return _error(None, -32600, "Invalid request")
        if "id" not in message:
            return None  # notification: recorded, otherwise ignored
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return _error(None, -32600, "Invalid request id")
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(request_id, -32602, "params must be an object")
        probing = self.scenario in ("exit-on-probe", "slow-exit-on-probe") \
            and not self._initialize_seen
        if probing and method not in ("initialize", "ping"):
            _log(f"unexpected {method} before initialize")
            if self.scenario == "slow-exit-on-probe":
                time.sleep(0.7)
            os._exit(1)
        if method == "initialize":
            self._initialize_seen = True
            if self.scenario == "log-before-init" and not inline:
                threading.Thread(
                    target=self._initialize_after_ping, args=(request_id, params), daemon=True
                ).start()
                return None
            return _result(request_id, self._initialize_result(params))
        if method == "ping":
            return _result(request_id, {})
        if method == "tools/list":
            return _result(request_id, self._tools_list())
        if method == "tools/call":
            if inline:
                return self.normal_call(request_id, params)
            threading.Thread(
                target=self._call_thread, args=(request_id, params), daemon=True
            ).start()
            return None
        return _error(request_id, -32601, f"Method not found: {method}")

    # -- lifecycle -----------------------------------------------------------------------------

    def _initialize_result(self, params: JSONObject) -> JSONObject:
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        if self.scenario == "bad-version":
            version = "1999-01-01"
        elif self.scenario == "batch":
            version = "2025-03-26"
        result: JSONObject = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted-server", "version": "1.0.0"},
            "instructions": f"scenario: {self.scenario}",
        }
        if self.scenario == "no-server-info":
            del result["serverInfo"]
        return result

    def _initialize_after_ping(self, request_id: RequestId, params: JSONObject) -> None:
        self.send(
            _notification(
                "notifications/message",
                {"level": "info", "logger": "scripted", "data": "log before initialize"},
            )
        )
        reply = self.ask_client("srv", "ping", None)
        if reply is not None and reply.get("result") == {}:
            self.send(_result(request_id, self._initialize_result(params)))
        else:
            self.send(_error(request_id, -32603, f"bad ping reply: {json.dumps(reply)}"))

    def _tools_list(self) -> JSONObject:
        tools = [ECHO_TOOL, SLEEP_TOOL, RECEIVED_TOOL]
        if self.scenario == "huge-line":
            tools.append(HUGE_TOOL)
        elif self.scenario == "stderr-flood":
            tools.append(FLOOD_DONE_TOOL)
        result: JSONObject = {"tools": tools}
        if self.scenario == "infinite-pages":
            result["nextCursor"] = "same"
        return result

    # -- tools ---------------------------------------------------------------------------------

    def normal_call(self, request_id: RequestId, params: JSONObject) -> JSONObject:
        """The scenario-independent answer to a tools/call."""
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return _error(request_id, -32602, "arguments must be an object")
        if name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                return _result(request_id, _text_result("'text' must be a string", True))
            return _result(request_id, _text_result(text))
        if name == "sleep":
            seconds = arguments.get("seconds", 1)
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
                return _result(request_id, _text_result("'seconds' must be >= 0", True))
            time.sleep(seconds)
            return _result(request_id, _text_result("slept"))
        if name == "received":
            return _result(request_id, _text_result(json.dumps(self.received_snapshot())))
        if name == "notify_flood":  # n log notifications at once, then the answer
            count = arguments.get("n", 1000)
            if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 10**6:
                return _result(request_id, _text_result("'n' must be 0..1000000", True))
            note = _encode(_notification("notifications/message",
                                         {"level": "info", "data": "flood"}))
            self.send_raw(note * count)
            return _result(request_id, _text_result(f"sent {count}"))
        if name == "flood_done" and self.scenario == "stderr-flood":
            self.flood_done.wait()
            return _result(request_id, _text_result("flood-done"))
        return _error(request_id, -32602, f"Unknown tool: {name}")

    def _call_thread(self, request_id: RequestId, params: JSONObject) -> None:
        try:
            self._scenario_call(request_id, params)
        except Exception as exc:
            _log(f"tools/call failed: {exc!r}")
            self.send(_error(request_id, -32603, f"internal error: {exc!r}"))

    def _scenario_call(self, request_id: RequestId, params: JSONObject) -> None:
        scenario = self.scenario
        name = params.get("name")
        if name == "received" or scenario in _PLAIN_CALL_SCENARIOS:
            self.send(self.normal_call(request_id, params))
        elif scenario == "ping-mid-call":
            reply = self.ask_client("srv", "ping", None)
            if reply is not None and reply.get("result") == {}:
                self.send(_result(request_id, _text_result("pong-ok")))
            else:
                self.send(_error(request_id, -32603, f"bad ping reply: {json.dumps(reply)}"))
        elif scenario == "garbage-line":
            response = self.normal_call(request_id, params)
            with self._write_lock:
                self.send_raw(b"this is not json\n\n")
                self.send(response)
        elif scenario == "huge-line":
            if name == "huge":
                head = _encode({"jsonrpc": "2.0", "id": request_id, "result": {"content": []}})
                prefix = head[: -len(b"[]}}\n")] + b'[{"type":"text","text":"'
                self.send_raw(prefix + b"x" * HUGE_TEXT_BYTES + b'"}]}}\n')
            else:
                self.send(self.normal_call(request_id, params))
        elif scenario == "die-mid-call":
            _write_fd(2, b"dying\n")
            os._exit(3)
        elif scenario in ("sampling", "elicitation", "roots"):
            self.send(self._client_feature_call(request_id, params))
        elif scenario == "progress":
            self._progress_call(request_id, params)
        elif scenario == "unknown-response":
            response = self.normal_call(request_id, params)
            with self._write_lock:
                self.send(response)
                self.send(_result(request_id, _text_result("duplicate-response")))
                self.send(_result(999999, _text_result("unknown-id-response")))
        elif scenario == "batch":
            response = self.normal_call(request_id, params)
            log = _notification(
                "notifications/message", {"level": "info", "logger": "scripted", "data": "batched"}
            )
            self.send([log, response])
        elif scenario == "unknown-server-request":
            reply = self.ask_client("u", "x/unknown", {})
            error = reply.get("error") if reply is not None else None
            text = str(error.get("code")) if isinstance(error, dict) else "no-error"
            self.send(_result(request_id, _text_result(text)))
        elif scenario == "server-cancel":
            elicitation_id = self.start_request("e", "elicitation/create", _ELICITATION_PARAMS)
            cancel = {"requestId": elicitation_id, "reason": "server changed its mind"}
            self.send(_notification("notifications/cancelled", cancel))
            self.send(_result(request_id, _text_result(f"cancelled {elicitation_id}")))
        elif scenario == "null-id-error":
            response = self.normal_call(request_id, params)
            with self._write_lock:
                self.send(_error(None, -32700, "Parse error"))
                self.send({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})
                self.send(response)
        elif scenario == "stray-notifications":
            response = self.normal_call(request_id, params)
            with self._write_lock:
                for method, note_params in _STRAY_NOTIFICATIONS:
                    self.send(_notification(method, note_params))
                self.send(response)
        else:  # pragma: no cover - every scenario is listed above
            self.send(self.normal_call(request_id, params))

    def _client_feature_call(self, request_id: RequestId, params: JSONObject) -> JSONObject:
        if self.scenario == "sampling":
            arguments = params.get("arguments")
            prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
            sampling_params: JSONObject = {
                "messages": [
                    {
                        "role": "user",
                        "content": {
                            "type": "text",
                            "text": prompt if isinstance(prompt, str) else "Say hello",
                        },
                    }
                ],
                "maxTokens": 100,
            }
            reply = self.ask_client("s", "sampling/createMessage", sampling_params)
        elif self.scenario == "elicitation":
            reply = self.ask_client("e", "elicitation/create", _ELICITATION_PARAMS)
        else:
            reply = self.ask_client("r", "roots/list", None)
        if reply is None:
            return _error(request_id, -32603, "no reply from the client")
        error = reply.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            return _result(request_id, _text_result(str(message), True))
        result = reply.get("result")
        if self.scenario != "sampling":
            return _result(request_id, _text_result(json.dumps(result, sort_keys=True)))
        content = result.get("content") if isinstance(result, dict) else None
        blocks = content if isinstance(content, list) else [content]
        if all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
            text = "".join(str(b.get("text")) for b in blocks if isinstance(b, dict))
        else:
            text = json.dumps(content, sort_keys=True)
        return _result(request_id, _text_result(text))

    def _progress_call(self, request_id: RequestId, params: JSONObject) -> None:
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is None:
            self.send(_result(request_id, _text_result("progress-done")))
            return
        with self._write_lock:
            for step in (1, 2, 3):
                progress = {"progressToken": token, "progress": step, "total": 3}
                progress["message"] = f"step {step}"
                self.send(_notification("notifications/progress", progress))
            self.send(_result(request_id, _text_result("progress-done")))
            late = {"progressToken": token, "progress": 4, "total": 4, "message": "late"}
            self.send(_notification("notifications/progress", late))


_PLAIN_CALL_SCENARIOS = frozenset(
    {
        "default",
        "stderr-flood",
        "grandchild",
        "ignore-term",
        "log-before-init",
        "bad-version",
        "no-server-info",
        "infinite-pages",
        "exit-on-probe",
        "slow-exit-on-probe",
    }
)

_ELICITATION_PARAMS: JSONObject = {
    "message": "What is your name?",
    "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"],
    },
}

_STRAY_NOTIFICATIONS: list[tuple[str, JSONObject]] = [
    ("notifications/tools/list_changed", {}),
    ("notifications/resources/updated", {"uri": "demo://never-subscribed"}),
    ("notifications/progress", {"progressToken": "no-such-token", "progress": 1}),
    ("notifications/elicitation/complete", {"elicitationId": "no-such-elicitation"}),
    ("notifications/cancelled", {"requestId": "never-sent"}),
    ("x/custom", {"hello": "world"}),
]


def _flood_stderr(done: threading.Event) -> None:
    try:
        for _ in range(FLOOD_CHUNKS):
            _write_fd(2, FLOOD_CHUNK)
        _write_fd(2, b"LAST-STDERR-LINE\n")
    except OSError:
        pass
    finally:
        done.set()


def _spawn_grandchild() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile = os.environ.get("SCRIPTED_GRANDCHILD_PIDFILE")
    if not pidfile:
        _log(f"grandchild pid {child.pid} (SCRIPTED_GRANDCHILD_PIDFILE not set)")
        return
    directory = os.path.dirname(os.path.abspath(pidfile))
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=".pidfile-")
    with os.fdopen(fd, "w") as handle:
        handle.write(f"{child.pid}\n")
    os.replace(tmp_path, pidfile)


def main() -> None:
    """Run the scenario named by the first command-line argument."""
    scenario = sys.argv[1] if len(sys.argv) > 1 else "default"
    if scenario not in SCENARIOS:
        _log(f"unknown scenario {scenario!r}; known: {', '.join(sorted(SCENARIOS))}")
        sys.exit(2)
    server = ScriptedServer(scenario)
    if scenario == "stderr-flood":
        threading.Thread(target=_flood_stderr, args=(server.flood_done,), daemon=True).start()
    elif scenario == "grandchild":
        _spawn_grandchild()
    elif scenario == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in iter(sys.stdin.buffer.readline, b""):
        server.handle_line(line)
    if scenario == "ignore-term":
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
