"""A scripted stdio MCP server speaking the 2026-07-28 (modern, stateless) protocol.

Usage: ``python modern_scripted.py [SCENARIO]``; only the first argument is read, default
``default``; an unknown scenario exits with status 2. Standard library only. stdin/stdout
carry newline-delimited JSON-RPC 2.0 (one compact object per line); stderr carries
diagnostics (``[modern-scripted] ...``). Exit status 0 on stdin EOF (timers are dropped).
It produces misbehaviour real servers do not, for the client's tests.

Common behaviour (modern scenarios: all but ``rc-codes``, ``silent``, ``die-on-probe``)
------------------------------------------------------------------------------------
Below, ``SID`` stands for ``"io.modelcontextprotocol/subscriptionId"``.

* Every request but ``initialize`` must carry ``params._meta`` with
  ``"io.modelcontextprotocol/protocolVersion"`` and ``"io.modelcontextprotocol/clientCapabilities"``
  (an object); otherwise error -32602 ``"missing _meta"``. A protocolVersion other than
  ``"2026-07-28"`` gets -32022 ``"Unsupported protocol version"`` with ``data``
  ``{"supported": ["2026-07-28"], "requested": <the value>}``.
* A request whose id equals the id of a still-open listen gets -32600 ``"id reused"``.
* ``initialize`` -> -32601 ``"Method not found"``; unknown methods -> -32601 too.
* ``server/discover`` -> ``{"resultType": "complete", "supportedVersions": ["2026-07-28"],
  "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true,
  "listChanged": true}, "prompts": {}}, "_meta": {"io.modelcontextprotocol/serverInfo":
  {"name": "modern-scripted", "version": "1.0.0"}}, "ttlMs": 0}``.
* ``tools/list`` -> ``{"resultType": "complete", "tools": [echo, received, ask, touch,
  change_tools, hang], "ttlMs": 0}`` (no ``nextCursor``, no ``cacheScope``; see ``list-ttl``).
  ``resources/list`` -> ``{"resultType": "complete", "resources": [{"uri": "demo://a",
  "name": "a", "mimeType": "text/plain"}], "ttlMs": 0}``; ``resources/read {uri: "demo://a"}``
  -> ``{"resultType": "complete", "contents": [{"uri": "demo://a", "mimeType": "text/plain",
  "text": "content of a"}], "ttlMs": 0}`` (other uri: -32602 ``"Resource not found"``);
  ``prompts/list`` -> ``{"resultType": "complete", "prompts": [], "ttlMs": 0}``.
* ``tools/call`` results are ``{"resultType": "complete", "content": [{"type": "text",
  "text": ...}]}``. Unknown tool -> -32602 ``"Unknown tool: <name>"``.

  - ``echo {text}`` -> ``text``.
  - ``hang`` -> never answered (for cancellation tests: ``received`` shows what came after).
  - ``received`` -> ``json.dumps(messages)``: every message read so far (requests,
    notifications, anything that parsed as JSON), in arrival order, including this call.
  - ``ask`` (MRTR). A call without ``requestState`` and without ``inputResponses`` is a first
    round and returns ``{"resultType": "input_required", "inputRequests": {"q1": {"method":
    "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema":
    {"type": "object", "properties": {"name": {"type": "string"}}}}}}, "requestState":
    "opaque-state-1"}``. Any other call is a retry, checked in this order: its id equals the
    id of any earlier ``ask`` round -> -32600 ``"id reused"``; ``requestState`` is not exactly
    ``"opaque-state-1"`` -> -32602 ``"bad requestState"``; no ``inputResponses.q1`` -> the
    first-round result again; ``q1.action == "accept"`` -> text ``"hi <q1.content.name>"``;
    else text = the action (``"decline"`` / ``"cancel"``).
  - ``touch {uri}`` -> ``"touched"``, after sending ``notifications/resources/updated
    {"uri": uri, "_meta": {SID: <listen id>}}`` on every open listen whose accepted
    ``resourceSubscriptions`` contains ``uri`` (in listen-opening order).
  - ``change_tools`` -> ``"changed"``, after sending ``notifications/tools/list_changed
    {"_meta": {SID: <listen id>}}`` on every open listen that accepted ``toolsListChanged``.

* ``subscriptions/listen {notifications}``: first ``notifications/subscriptions/acknowledged
  {"notifications": <accepted>, "_meta": {SID: <listen id>}}`` where ``<accepted>`` keeps the
  requested keys among ``toolsListChanged``, ``promptsListChanged``, ``resourcesListChanged``
  whose value is ``true`` and ``resourceSubscriptions`` if it is a non-empty list of strings.
  No response while open. On the client's ``notifications/cancelled {requestId: <listen id>}``
  the listen closes and gets the response ``{"resultType": "complete", "_meta": {SID: <id>}}``.
  Cancels for other ids are only recorded.
* Notifications and client responses are recorded (responses also logged to stderr), never
  answered. Non-JSON -> -32700 ``"Parse error"`` with ``id: null``; a JSON array (batch) or
  non-object -> -32600 ``"Invalid Request"`` with ``id: null``.

Scenarios
---------
``default``
    As above.
``unsupported-first``
    The first ``server/discover`` gets -32022 ``"Unsupported protocol version"`` with data
    ``{"supported": ["2026-07-28"], "requested": <the protocolVersion sent, or null>}``, even
    if it asked for 2026-07-28; later ones succeed.
``unknown-result-type``
    ``echo`` returns ``"resultType": "weird"`` (otherwise the same result).
``mrtr-forever``
    ``ask`` never completes: round n (n = 1, 2, ...) returns ``{"resultType":
    "input_required", "inputRequests": {"q<n>": <the q1 request above>}, "requestState":
    "forever-<n>"}``; n counts every ``ask`` call, the state is not checked; ``id reused``
    still applies.
``mrtr-no-requests``
    ``ask`` first round returns ``{"resultType": "input_required", "requestState": "s1"}``
    (no ``inputRequests``); a call with ``requestState`` ``"s1"`` returns text ``"ok"``; any
    other ``requestState`` -> -32602 ``"bad requestState"``; ``id reused`` still applies.
``narrow-ack``
    Listens are acknowledged with ``{"toolsListChanged": true}`` only (``{}`` if that was not
    requested), and deliver only that.
``interleaved``
    On listen: first ``notifications/tools/list_changed {"_meta": {SID: "other-sub"}}``
    (must be ignored), then the ack, then 0.2 s later ``notifications/tools/list_changed
    {"_meta": {SID: <listen id>}}`` if the listen is still open.
``server-teardown``
    0.1 s after the ack, sends ``notifications/cancelled {"requestId": <listen id>, "reason":
    "server teardown"}`` and forgets the listen (no response is ever sent for it; a later
    client cancel for it is only recorded).
``list-ttl``
    ``tools/list`` has ``"ttlMs": 60000, "cacheScope": "private"``, and so does the
    ``server/discover`` result's ``ttlMs``.
``resource-updated``
    0.1 s after the ack of a listen that accepted ``resourceSubscriptions``, sends
    ``notifications/resources/updated {"uri": <u>, "_meta": {SID: <listen id>}}`` for each
    of its URIs, in order, if the listen is still open.

Legacy scenarios (really a 2025-11-25 handshake server; no ``_meta`` checks at all)
-------------------------------------------------------------------------------
``initialize`` -> ``{"protocolVersion": <the client's if one of 2024-11-05, 2025-03-26,
2025-06-18, 2025-11-25, else "2025-11-25">, "capabilities": {"tools": {"listChanged": true}},
"serverInfo": {"name": "modern-scripted", "version": "1.0.0"}}``. Requests are served before
``initialize`` too. ``ping`` -> ``{}``; ``tools/list`` -> ``{"tools": [echo, received]}``;
``echo``/``received`` as above but results have no ``resultType``; other tools -> -32602
``"Unknown tool: <name>"``; other methods -> -32601.

``rc-codes``
    ``server/discover`` -> -32004 ``"Unsupported protocol version"`` with data
    ``{"supported": ["2025-11-25"], "requested": <the protocolVersion sent, or null>}`` (the
    pre-GA code; a client must treat it as unrecognised and fall back to ``initialize``).
``silent``
    Never answers ``server/discover`` nor any unknown method (they are only recorded).
``die-on-probe``
    If the very first message is a ``server/discover`` request: writes ``probe: exiting`` to
    stderr and exits with status 1 without answering. Otherwise (e.g. a restarted process
    that first gets ``initialize``) a legacy server; a later ``server/discover`` -> -32601.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

JSONObject = dict[str, Any]
RequestId = str | int

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY = "2025-11-25"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO: JSONObject = {"name": "modern-scripted", "version": "1.0.0"}
ASK_STATE = "opaque-state-1"

MODERN_SCENARIOS = frozenset(
    {
        "default",
        "unsupported-first",
        "unknown-result-type",
        "mrtr-forever",
        "mrtr-no-requests",
        "narrow-ack",
        "interleaved",
        "server-teardown",
        "list-ttl",
        "resource-updated",
    }
)
LEGACY_SCENARIOS = frozenset({"rc-codes", "silent", "die-on-probe"})


def _tool(name: str, description: str, properties: JSONObject, required: list[str]) -> JSONObject:
    schema: JSONObject = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


STRING: JSONObject = {"type": "string"}
ECHO_TOOL = _tool("echo", "Echo the text back.", {"text": STRING}, ["text"])
RECEIVED_TOOL = _tool("received", "Every message received so far, as JSON.", {}, [])
ASK_TOOL = _tool("ask", "Ask the user for a name (MRTR).", {}, [])
TOUCH_TOOL = _tool("touch", "Send resources/updated for uri.", {"uri": STRING}, ["uri"])
CHANGE_TOOL = _tool("change_tools", "Send tools/list_changed.", {}, [])
HANG_TOOL = _tool("hang", "Never answers.", {}, [])
MODERN_TOOLS = [ECHO_TOOL, RECEIVED_TOOL, ASK_TOOL, TOUCH_TOOL, CHANGE_TOOL, HANG_TOOL]
LEGACY_TOOLS = [ECHO_TOOL, RECEIVED_TOOL]


def _elicit_request() -> JSONObject:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }


def _log(message: str) -> None:
    sys.stderr.write(f"[modern-scripted] {message}\n")
    sys.stderr.flush()


def _id_key(request_id: Any) -> str:
    """Distinguishes 1 from "1"."""
    return json.dumps(request_id)


class ProtocolError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Listen:
    def __init__(self, request_id: RequestId, accepted: JSONObject) -> None:
        self.request_id = request_id
        self.accepted = accepted

    def wants_tools(self) -> bool:
        return self.accepted.get("toolsListChanged") is True

    def uris(self) -> list[str]:
        uris = self.accepted.get("resourceSubscriptions")
        return list(uris) if isinstance(uris, list) else []


class Server:
    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.legacy = scenario in LEGACY_SCENARIOS
        self.lock = threading.RLock()
        self.received: list[Any] = []
        self.listens: dict[str, Listen] = {}
        self.ask_ids: set[str] = set()
        self.ask_rounds = 0
        self.discovers = 0

    # -- output -----------------------------------------------------------------------------

    def send(self, message: JSONObject) -> None:
        line = json.dumps(message, separators=(",", ":")) + "\n"
        with self.lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def notify(self, method: str, params: JSONObject) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def later(self, delay: float, action: Callable[[], None]) -> None:
        def run() -> None:
            with self.lock:
                action()

        timer = threading.Timer(delay, run)
        timer.daemon = True
        timer.start()

    # -- input ------------------------------------------------------------------------------

    def handle_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.send(_error_message(None, -32700, "Parse error"))
            return
        with self.lock:
            first = not self.received
            self.received.append(message)
            if not isinstance(message, dict):
                self.send(_error_message(None, -32600, "Invalid Request"))
                return
            self.dispatch(message, first)

    def dispatch(self, message: JSONObject, first: bool) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            if "id" in message:
                _log(f"unexpected response from the client: {json.dumps(message)}")
            else:
                self.send(_error_message(None, -32600, "Invalid Request"))
            return
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if "id" not in message:
            self.on_notification(method, params)
            return
        request_id = message["id"]
        if self.scenario == "die-on-probe" and first and method == "server/discover":
            _log("probe: exiting")
            with contextlib.suppress(OSError):
                sys.stdout.flush()
            os._exit(1)
        try:
            if self.legacy:
                result = self.legacy_request(method, params)
            else:
                result = self.modern_request(request_id, method, params)
        except ProtocolError as exc:
            self.send(_error_message(request_id, exc.code, exc.message, exc.data))
            return
        if result is not None:
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def on_notification(self, method: str, params: JSONObject) -> None:
        if method != "notifications/cancelled" or self.legacy:
            return
        request_id = params.get("requestId")
        listen = self.listens.pop(_id_key(request_id), None)
        if listen is None:
            return
        result = {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: listen.request_id}}
        self.send({"jsonrpc": "2.0", "id": listen.request_id, "result": result})

    # -- modern -----------------------------------------------------------------------------

    def modern_request(
        self, request_id: RequestId, method: str, params: JSONObject
    ) -> JSONObject | None:
        if method == "initialize":
            raise ProtocolError(-32601, "Method not found")
        meta = params.get("_meta")
        if (
            not isinstance(meta, dict)
            or PROTOCOL_VERSION_KEY not in meta
            or not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict)
        ):
            raise ProtocolError(-32602, "missing _meta")
        version = meta[PROTOCOL_VERSION_KEY]
        if version != MODERN_VERSION:
            raise _unsupported(-32022, [MODERN_VERSION], version)
        if _id_key(request_id) in self.listens:
            raise ProtocolError(-32600, "id reused")
        if method == "server/discover":
            self.discovers += 1
            if self.scenario == "unsupported-first" and self.discovers == 1:
                raise _unsupported(-32022, [MODERN_VERSION], version)
            return {
                "resultType": "complete",
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {
                    "tools": {"listChanged": True},
                    "resources": {"subscribe": True, "listChanged": True},
                    "prompts": {},
                },
                "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)},
                "ttlMs": 60000 if self.scenario == "list-ttl" else 0,
            }
        if method == "tools/list":
            result: JSONObject = {"resultType": "complete", "tools": MODERN_TOOLS, "ttlMs": 0}
            if self.scenario == "list-ttl":
                result["ttlMs"] = 60000
                result["cacheScope"] = "private"
            return result
        if method == "resources/list":
            resource = {"uri": "demo://a", "name": "a", "mimeType": "text/plain"}
            return {"resultType": "complete", "resources": [resource], "ttlMs": 0}
        if method == "resources/read":
            if params.get("uri") != "demo://a":
                raise ProtocolError(-32602, "Resource not found", {"uri": params.get("uri")})
            content = {"uri": "demo://a", "mimeType": "text/plain", "text": "content of a"}
            return {"resultType": "complete", "contents": [content], "ttlMs": 0}
        if method == "prompts/list":
            return {"resultType": "complete", "prompts": [], "ttlMs": 0}
        if method == "tools/call":
            return self.modern_call(request_id, params)
        if method == "subscriptions/listen":
            self.listen(request_id, params)
            return None
        raise ProtocolError(-32601, "Method not found")

    def modern_call(self, request_id: RequestId, params: JSONObject) -> JSONObject | None:
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        if name == "echo":
            result = _text(str(arguments.get("text", "")))
            if self.scenario == "unknown-result-type":
                result["resultType"] = "weird"
            return result
        if name == "received":
            return _text(json.dumps(self.received))
        if name == "hang":
            return None
        if name == "ask":
            return self.ask(request_id, params)
        if name == "touch":
            uri = arguments.get("uri")
            for listen in list(self.listens.values()):
                if uri in listen.uris():
                    meta = {SUBSCRIPTION_ID_KEY: listen.request_id}
                    self.notify("notifications/resources/updated", {"uri": uri, "_meta": meta})
            return _text("touched")
        if name == "change_tools":
            for listen in list(self.listens.values()):
                if listen.wants_tools():
                    meta = {SUBSCRIPTION_ID_KEY: listen.request_id}
                    self.notify("notifications/tools/list_changed", {"_meta": meta})
            return _text("changed")
        raise ProtocolError(-32602, f"Unknown tool: {name}")

    def ask(self, request_id: RequestId, params: JSONObject) -> JSONObject:
        key = _id_key(request_id)
        state = params.get("requestState")
        responses = params.get("inputResponses")
        is_retry = state is not None or responses is not None
        if is_retry and key in self.ask_ids:
            raise ProtocolError(-32600, "id reused")
        self.ask_ids.add(key)
        self.ask_rounds += 1
        if self.scenario == "mrtr-forever":
            return {
                "resultType": "input_required",
                "inputRequests": {f"q{self.ask_rounds}": _elicit_request()},
                "requestState": f"forever-{self.ask_rounds}",
            }
        if self.scenario == "mrtr-no-requests":
            if state is None:
                return {"resultType": "input_required", "requestState": "s1"}
            if state != "s1":
                raise ProtocolError(-32602, "bad requestState")
            return _text("ok")
        first_round: JSONObject = {
            "resultType": "input_required",
            "inputRequests": {"q1": _elicit_request()},
            "requestState": ASK_STATE,
        }
        if not is_retry:
            return first_round
        if state != ASK_STATE:
            raise ProtocolError(-32602, "bad requestState")
        answer = responses.get("q1") if isinstance(responses, dict) else None
        if not isinstance(answer, dict):
            return first_round
        action = answer.get("action")
        if action == "accept":
            content = answer.get("content")
            name = content.get("name") if isinstance(content, dict) else None
            return _text(f"hi {name}")
        return _text(str(action))

    def listen(self, request_id: RequestId, params: JSONObject) -> None:
        requested = params.get("notifications")
        if not isinstance(requested, dict):
            requested = {}
        accepted: JSONObject = {}
        if self.scenario == "narrow-ack":
            if requested.get("toolsListChanged") is True:
                accepted["toolsListChanged"] = True
        else:
            for flag in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
                if requested.get(flag) is True:
                    accepted[flag] = True
            uris = requested.get("resourceSubscriptions")
            if isinstance(uris, list) and uris and all(isinstance(u, str) for u in uris):
                accepted["resourceSubscriptions"] = list(uris)
        listen = Listen(request_id, accepted)
        key = _id_key(request_id)
        meta = {SUBSCRIPTION_ID_KEY: request_id}
        if self.scenario == "interleaved":
            other = {SUBSCRIPTION_ID_KEY: "other-sub"}
            self.notify("notifications/tools/list_changed", {"_meta": other})
        self.listens[key] = listen
        self.notify(
            "notifications/subscriptions/acknowledged", {"notifications": accepted, "_meta": meta}
        )

        def still_open() -> bool:
            return self.listens.get(key) is listen

        if self.scenario == "interleaved":

            def changed() -> None:
                if still_open():
                    self.notify("notifications/tools/list_changed", {"_meta": meta})

            self.later(0.2, changed)
        elif self.scenario == "server-teardown":

            def teardown() -> None:
                if still_open():
                    del self.listens[key]
                    cancel = {"requestId": request_id, "reason": "server teardown"}
                    self.notify("notifications/cancelled", cancel)

            self.later(0.1, teardown)
        elif self.scenario == "resource-updated" and listen.uris():

            def updated() -> None:
                for uri in listen.uris():
                    if still_open():
                        params = {"uri": uri, "_meta": meta}
                        self.notify("notifications/resources/updated", params)

            self.later(0.1, updated)

    # -- legacy -----------------------------------------------------------------------------

    def legacy_request(self, method: str, params: JSONObject) -> JSONObject | None:
        if method == "initialize":
            requested = params.get("protocolVersion")
            version = requested if requested in LEGACY_VERSIONS else LATEST_LEGACY
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": dict(SERVER_INFO),
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": LEGACY_TOOLS}
        if method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments")
            if not isinstance(arguments, dict):
                arguments = {}
            if name == "echo":
                return _text(str(arguments.get("text", "")), result_type=False)
            if name == "received":
                return _text(json.dumps(self.received), result_type=False)
            raise ProtocolError(-32602, f"Unknown tool: {name}")
        if self.scenario == "silent":
            return None
        if method == "server/discover" and self.scenario == "rc-codes":
            meta = params.get("_meta")
            version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
            raise _unsupported(-32004, [LATEST_LEGACY], version)
        raise ProtocolError(-32601, "Method not found")


def _unsupported(code: int, supported: list[str], requested: Any) -> ProtocolError:
    data = {"supported": supported, "requested": requested}
    return ProtocolError(code, "Unsupported protocol version", data)


def _text(text: str, *, result_type: bool = True) -> JSONObject:
    result: JSONObject = {"content": [{"type": "text", "text": text}]}
    if result_type:
        result = {"resultType": "complete", **result}
    return result


def _error_message(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> JSONObject:
    error: JSONObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def main() -> int:
    scenario = sys.argv[1] if len(sys.argv) > 1 else "default"
    if scenario not in MODERN_SCENARIOS | LEGACY_SCENARIOS:
        _log(f"unknown scenario {scenario!r}")
        return 2
    server = Server(scenario)
    for raw in sys.stdin.buffer:
        server.handle_line(raw.decode("utf-8", errors="replace"))
    return 0


if __name__ == "__main__":
    code = main()
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)  # do not wait for (or race with) pending timer threads
