"""An in-memory scripted server and a fake clock driving a :class:`ClientSession`.

In the style of h11's ``ConnectionPair``: no process, no socket, no real clock.  A test plays
the server by hand::

    pair = Pair()
    ready = pair.handshake()                 # initialize / result / initialized
    h = pair.session.call_tool("echo", {}, now=pair.now)
    [req] = pair.sent()                      # what the client wrote, parsed
    pair.reply(req, {"content": []})
    [done] = pair.events()

Every line the client writes is checked as it is read: it must be ``\\n``-terminated compact
JSON on one line, a JSON-RPC object, and (when the schema is on disk) valid against the
definition for its method in the schema of its era: 2025-11-25 for the handshake era,
2026-07-28 for a modern session (see :func:`message_version`).  A modern session starts with
:meth:`Pair.discover` (``start()`` / ``server/discover`` / DiscoverResult) instead of
:meth:`Pair.handshake`.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from mcp_proto import ClientSession, Event, Implementation, Limits, Ready
from mcp_proto._versions import MODERN_VERSIONS
from mcp_proto.session._modern import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY
from mcp_proto.wire._jsonrpc import dumps

try:
    import jsonschema
except ImportError:  # pragma: no cover - jsonschema is in the tests extra
    jsonschema = None

#: Where the official schemas are looked for, first match wins: a copy vendored beside the
#: tests, ``$MCP_SPEC_DIR``, ``shared/`` beside the checkout (as CI lays it out).
SPEC_DIRS = tuple(Path(p) for p in (
    Path(__file__).parent / "spec",
    os.environ.get("MCP_SPEC_DIR", ""),
    Path(__file__).resolve().parent.parent.parent / "shared" / "spec",  # CI: ../shared
    "/work/shared/spec",
) if str(p))
SCHEMA_VERSION = "2025-11-25"
MODERN_SCHEMA_VERSION = "2026-07-28"

CLIENT_INFO = Implementation(name="test-client", version="0.0.1")
SERVER_INFO = {"name": "fake-server", "version": "1.0.0"}
DEFAULT_SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}

JSONObj = dict[str, Any]


# -- schema ---------------------------------------------------------------------------------


def schema_path(version: str = SCHEMA_VERSION) -> Path | None:
    for spec_dir in SPEC_DIRS:
        path = spec_dir / version / "schema.json"
        if path.is_file():
            return path
    return None


def schema_available(version: str = SCHEMA_VERSION) -> bool:
    return jsonschema is not None and schema_path(version) is not None


@cache
def _schema(version: str) -> JSONObj:
    path = schema_path(version)
    if path is None:
        raise FileNotFoundError(f"no schema.json for {version} in {SPEC_DIRS}")
    data: JSONObj = json.loads(path.read_text("utf-8"))
    return data


@cache
def _validator(version: str, definition: str) -> Any:
    assert jsonschema is not None, "pip install jsonschema"
    schema = _schema(version)
    defs = schema["$defs"]
    if definition not in defs:
        raise KeyError(f"{definition} is not defined in the {version} schema")
    root = {"$schema": schema["$schema"], "$defs": defs, "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(root)


@cache
def _method_definitions(version: str, union: str) -> dict[str, str]:
    """``method -> definition name`` for the members of a union such as ``ClientRequest``.
    A "union" of one (2026-07-28's ``ClientNotification`` is ``CancelledNotification`` itself)
    maps its own method."""
    defs = _schema(version)["$defs"]
    out: dict[str, str] = {}
    members = defs[union].get("anyOf") or [{"$ref": f"#/$defs/{union}"}]
    for member in members:
        name = member["$ref"].rsplit("/", 1)[1]
        method = defs[name]["properties"]["method"]["const"]
        out[method] = name
    return out


def schema_errors(obj: object, definition: str, version: str = SCHEMA_VERSION) -> list[str]:
    """Messages of every way ``obj`` fails the schema's ``definition`` (empty if valid)."""
    return [e.message for e in _validator(version, definition).iter_errors(obj)]


def definition_for(obj: JSONObj, version: str = SCHEMA_VERSION) -> str:
    """The most specific schema definition a client-emitted message must match."""
    if "method" in obj:
        union = "ClientRequest" if "id" in obj else "ClientNotification"
        table = _method_definitions(version, union)
        method = obj["method"]
        if method not in table:
            raise AssertionError(f"client sent {method!r}, which is not a {union} in {version}")
        return table[method]
    return "JSONRPCErrorResponse" if "error" in obj else "JSONRPCResultResponse"


def message_version(obj: JSONObj, era: str | None) -> str:
    """The schema a client-emitted message must match, ``era`` being the session's when it
    was read: a request carrying a modern ``_meta`` protocol version is modern whatever the
    era (the ``server/discover`` probe); the handshake's own messages are always 2025-11-25
    (the ``initialize`` sent in parallel with the probe); anything else follows the era."""
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get(PROTOCOL_VERSION_KEY) in MODERN_VERSIONS:
        return MODERN_SCHEMA_VERSION
    if obj.get("method") in ("initialize", "notifications/initialized"):
        return SCHEMA_VERSION
    return MODERN_SCHEMA_VERSION if era == "modern" else SCHEMA_VERSION


#: 2026 requests of the tasks extension, checked against its own schema (TX-04..TX-06).
TASKS_EXTENSION_SCHEMA = "tasks-extension"
TASKS_EXTENSION_REQUESTS = {"tasks/get": "GetTaskRequest", "tasks/update": "UpdateTaskRequest",
                            "tasks/cancel": "CancelTaskRequest"}


def assert_valid_client_message(obj: object, version: str = SCHEMA_VERSION) -> None:
    """``obj`` is a JSONRPCMessage and matches the definition of its method in ``version``
    (the tasks extension's requests in a 2026 session: the extension's schema)."""
    errors = schema_errors(obj, "JSONRPCMessage", version)
    assert not errors, f"not a JSONRPCMessage: {obj!r}: {errors}"
    assert isinstance(obj, dict)
    method = obj.get("method")
    if version == MODERN_SCHEMA_VERSION and method in TASKS_EXTENSION_REQUESTS:
        definition = TASKS_EXTENSION_REQUESTS[method]
        errors = schema_errors(obj, definition, TASKS_EXTENSION_SCHEMA)
        assert not errors, f"not a valid {definition}: {obj!r}: {errors}"
        return
    definition = definition_for(obj, version)
    errors = schema_errors(obj, definition, version)
    assert not errors, f"not a valid {definition}: {obj!r}: {errors}"


# -- wire checks ----------------------------------------------------------------------------


def parse_ndjson(data: bytes) -> list[JSONObj]:
    """Parse what the client wrote, asserting it is NDJSON of JSON-RPC 2.0 objects."""
    if not data:
        return []
    assert data.endswith(b"\n"), f"output does not end with a newline: {data[-80:]!r}"
    out: list[JSONObj] = []
    for line in data[:-1].split(b"\n"):
        assert line, "the client wrote an empty line"
        assert b"\r" not in line
        obj = json.loads(line.decode("utf-8"))
        assert type(obj) is dict, f"the client wrote a non-object: {obj!r}"
        assert obj.get("jsonrpc") == "2.0", obj
        assert dumps(obj) == line, f"not compact JSON: {line!r}"
        out.append(obj)
    return out


# -- the pair -------------------------------------------------------------------------------


class Pair:
    """A session, the fake server's view of it, and a fake clock."""

    def __init__(
        self,
        *,
        capabilities: JSONObj | None = None,
        versions: tuple[str, ...] | None = None,
        limits: Limits | None = None,
        now: float = 1000.0,
        validate: bool | None = None,
        send_client_info: bool = True,
    ) -> None:
        kwargs: dict[str, Any] = {"capabilities": capabilities, "limits": limits,
                                  "send_client_info": send_client_info}
        if versions is not None:
            kwargs["versions"] = versions
        self.session = ClientSession(CLIENT_INFO, **kwargs)
        self.now = now
        self.validate = schema_available() if validate is None else validate
        self.validate_modern = (schema_available(MODERN_SCHEMA_VERSION) if validate is None
                                else validate)
        self.log: list[JSONObj] = []
        """Everything the client ever sent, parsed, in order."""
        self.listen: JSONObj | None = None
        """The ``subscriptions/listen`` request :meth:`discover` saw the session open."""

    # client -> server

    def sent(self) -> list[JSONObj]:
        """What the client wrote since the last call, parsed and checked."""
        messages = parse_ndjson(self.session.data_to_send())
        era = self.session.era
        for m in messages:
            version = message_version(m, era)
            if self.validate_modern if version == MODERN_SCHEMA_VERSION else self.validate:
                assert_valid_client_message(m, version)
        self.log.extend(messages)
        return messages

    def sent_one(self) -> JSONObj:
        messages = self.sent()
        assert len(messages) == 1, messages
        return messages[0]

    def requests_sent(self) -> list[JSONObj]:
        return [m for m in self.log if "method" in m and "id" in m]

    # server -> client

    def feed(self, data: bytes) -> None:
        self.session.receive_data(data, now=self.now)

    def send(self, *messages: object) -> None:
        """Write each message (a JSON value) as one line."""
        self.feed(b"".join(dumps(m) + b"\n" for m in messages))

    def reply(self, request: JSONObj, result: JSONObj) -> None:
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def reply_error(self, request: JSONObj, code: int, message: str, data: Any = None) -> None:
        error: JSONObj = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def notify(self, method: str, params: JSONObj | None = None) -> None:
        msg: JSONObj = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def server_request(self, rid: int | str, method: str, params: JSONObj | None = None) -> None:
        msg: JSONObj = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def ack(self, listen: JSONObj, notifications: JSONObj | None = None) -> None:
        """``notifications/subscriptions/acknowledged`` for ``listen`` (SB-02): what it asked
        for unless ``notifications`` narrows it."""
        accepted = listen["params"]["notifications"] if notifications is None else notifications
        self.notify("notifications/subscriptions/acknowledged",
                    {"_meta": {SUBSCRIPTION_ID_KEY: listen["id"]},
                     "notifications": accepted})

    def stream_notify(self, sid: object, method: str, params: JSONObj | None = None) -> None:
        """A notification on the listen stream ``sid`` (SB-03)."""
        body: JSONObj = dict(params or {})
        body["_meta"] = {**body.get("_meta", {}), SUBSCRIPTION_ID_KEY: sid}
        self.notify(method, body)

    # clock

    def advance(self, seconds: float) -> None:
        """Move the fake clock and let the session handle its deadlines."""
        self.now += seconds
        self.session.handle_timeout(self.now)

    def advance_to_deadline(self) -> float:
        deadline = self.session.next_deadline()
        assert deadline is not None, "no deadline is pending"
        self.now = max(self.now, deadline)
        self.session.handle_timeout(self.now)
        return deadline

    # events

    def events(self) -> list[Event]:
        out: list[Event] = []
        while (event := self.session.next_event()) is not None:
            out.append(event)
        return out

    # scripts

    def handshake(
        self,
        *,
        version: str | None = None,
        capabilities: JSONObj | None = None,
        instructions: str | None = None,
    ) -> Ready:
        """Run initialize -> result -> initialized; return the Ready event."""
        self.session.initialize(now=self.now)
        init = self.sent_one()
        assert init["method"] == "initialize"
        result: JSONObj = {
            "protocolVersion": version or init["params"]["protocolVersion"],
            "capabilities": DEFAULT_SERVER_CAPS if capabilities is None else capabilities,
            "serverInfo": SERVER_INFO,
        }
        if instructions is not None:
            result["instructions"] = instructions
        self.reply(init, result)
        [note] = self.sent()
        assert note == {"jsonrpc": "2.0", "method": "notifications/initialized"}
        [ready] = self.events()
        assert isinstance(ready, Ready), ready
        return ready

    def discover(
        self,
        *,
        capabilities: JSONObj | None = None,
        instructions: str | None = None,
        supported: list[str] | None = None,
        ack: bool = True,
        era: str = "auto",
    ) -> Ready:
        """Run ``start()`` -> ``server/discover`` -> DiscoverResult; return the Ready event.
        If the session then opens ``subscriptions/listen`` (the server declared list changes)
        it is kept in :attr:`listen` and, with ``ack``, acknowledged in full."""
        self.session.start(now=self.now, era=era)
        probe = self.sent_one()
        assert probe["method"] == "server/discover", probe
        self.reply(probe, discover_result(capabilities=capabilities, instructions=instructions,
                                          supported=supported))
        [ready] = self.events()
        assert isinstance(ready, Ready) and ready.era == "modern", ready
        sent = self.sent()
        assert all(m.get("method") == "subscriptions/listen" for m in sent), sent
        assert len(sent) <= 1, sent
        self.listen = sent[0] if sent else None
        if ack and self.listen is not None:
            self.ack(self.listen)
            assert self.events() == []
        return ready


def discover_result(*, capabilities: JSONObj | None = None, instructions: str | None = None,
                    supported: list[str] | None = None) -> JSONObj:
    """A DiscoverResult (V-12) with serverInfo in its ``_meta`` (M-02)."""
    result: JSONObj = {
        "resultType": "complete",
        "supportedVersions": list(MODERN_VERSIONS) if supported is None else supported,
        "capabilities": DEFAULT_SERVER_CAPS if capabilities is None else capabilities,
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result


def ready_pair(*, version: str | None = None, server_caps: JSONObj | None = None,
               **pair_kwargs: Any) -> Pair:
    """A pair whose handshake is done (``pair_kwargs`` go to :class:`Pair`)."""
    pair = Pair(**pair_kwargs)
    pair.handshake(version=version, capabilities=server_caps)
    return pair


def modern_pair(*, server_caps: JSONObj | None = None, ack: bool = True,
                **pair_kwargs: Any) -> Pair:
    """A pair whose session is Ready in the 2026-07-28 era (``pair_kwargs`` go to
    :class:`Pair`); its listen stream, if any, is :attr:`Pair.listen`."""
    pair = Pair(**pair_kwargs)
    pair.discover(capabilities=server_caps, ack=ack)
    return pair
