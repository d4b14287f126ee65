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
2025-11-25 schema's definition for its method.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from mcp_proto import ClientSession, Event, Implementation, Limits, Ready
from mcp_proto._jsonrpc import dumps

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
    """``method -> definition name`` for the members of a union such as ``ClientRequest``."""
    defs = _schema(version)["$defs"]
    out: dict[str, str] = {}
    for member in defs[union]["anyOf"]:
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


def assert_valid_client_message(obj: object, version: str = SCHEMA_VERSION) -> None:
    """``obj`` is a JSONRPCMessage and matches the definition of its method in ``version``."""
    errors = schema_errors(obj, "JSONRPCMessage", version)
    assert not errors, f"not a JSONRPCMessage: {obj!r}: {errors}"
    assert isinstance(obj, dict)
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
    ) -> None:
        kwargs: dict[str, Any] = {"capabilities": capabilities, "limits": limits}
        if versions is not None:
            kwargs["versions"] = versions
        self.session = ClientSession(CLIENT_INFO, **kwargs)
        self.now = now
        self.validate = schema_available() if validate is None else validate
        self.log: list[JSONObj] = []
        """Everything the client ever sent, parsed, in order."""

    # client -> server

    def sent(self) -> list[JSONObj]:
        """What the client wrote since the last call, parsed and checked."""
        messages = parse_ndjson(self.session.data_to_send())
        if self.validate:
            for m in messages:
                assert_valid_client_message(m)
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


def ready_pair(*, version: str | None = None, server_caps: JSONObj | None = None,
               **pair_kwargs: Any) -> Pair:
    """A pair whose handshake is done (``pair_kwargs`` go to :class:`Pair`)."""
    pair = Pair(**pair_kwargs)
    pair.handshake(version=version, capabilities=server_caps)
    return pair
