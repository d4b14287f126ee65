"""MemoryServer (mcp_proto/testing/_server.py) against the real ClientSession, in both eras.

No thread, no process, a fake clock: the session's bytes go into ``server.receive_data`` and
the server's into ``session.receive_data`` until neither has anything to say.  Every line
the server writes is checked: compact NDJSON, JSON-RPC, and (when the schema is on disk) a
``JSONRPCMessage`` of its era's schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_proto import (
    BadMessage,
    ClientSession,
    Completed,
    Event,
    Failed,
    Implementation,
    Limits,
    ListChanged,
    LocalProtocolError,
    LogMessage,
    Progress,
    Ready,
    RpcError,
    ServerRequest,
)
from mcp_proto._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from mcp_proto.session import _modern
from mcp_proto.testing import _catalog
from mcp_proto.testing._server import HandlerCall, MemoryServer
from mcp_proto.wire._jsonrpc import dumps
from tests.fake_server import (
    MODERN_SCHEMA_VERSION,
    SCHEMA_VERSION,
    parse_ndjson,
    schema_available,
    schema_errors,
)

ERAS = ["legacy", "modern"]
JSONObj = dict[str, Any]


class Link:
    """A ClientSession wired to a MemoryServer by bytes, with a fake clock."""

    def __init__(self, server: MemoryServer, *, capabilities: JSONObj | None = None,
                 versions: tuple[str, ...] | None = None) -> None:
        kwargs: dict[str, Any] = {"capabilities": capabilities}
        if versions is not None:
            kwargs["versions"] = versions
        self.server = server
        self.session = ClientSession(Implementation(name="test-client", version="0.1"),
                                     **kwargs)
        self.now = 1000.0
        self.sent: list[JSONObj] = []
        """Everything the server wrote, parsed."""

    def pump(self) -> list[Event]:
        """Move bytes until both sides are quiet; the session's events."""
        for _ in range(100):
            data = self.session.data_to_send()
            if data:
                self.server.receive_data(data, self.now)
            out = self.server.data_to_send()
            if out:
                self.sent.extend(check_output(out, self.session.era))
                self.session.receive_data(out, now=self.now)
            if not data and not out:
                break
        events: list[Event] = []
        while (event := self.session.next_event()) is not None:
            events.append(event)
        return events

    def open(self, era: str) -> Ready:
        self.session.start(now=self.now, era="auto" if era == "modern" else "legacy")
        events = self.pump()
        ready = [e for e in events if isinstance(e, Ready)]
        assert len(ready) == 1, events
        assert ready[0].era == era
        return ready[0]

    def complete(self, handle: Any) -> Any:
        events = self.pump()
        done = [e for e in events if isinstance(e, (Completed, Failed))
                and e.handle == handle]
        assert len(done) == 1, events
        return done[0]

    def run_calls(self) -> None:
        """Run every handler call the server has, then pump."""
        while (call := self.server.next_call()) is not None:
            self.server.finish(call.call_id, call.run(), self.now)
        self.pump()


def check_output(data: bytes, era: str | None) -> list[JSONObj]:
    messages = parse_ndjson(data)
    version = MODERN_SCHEMA_VERSION if era == "modern" else SCHEMA_VERSION
    if schema_available(version):
        for m in messages:
            errors = schema_errors(m, "JSONRPCMessage", version)
            assert not errors, (m, errors)
    return messages


def demo_server(**kwargs: Any) -> MemoryServer:
    server = MemoryServer("demo", version="2.0.0", instructions="be nice", **kwargs)

    @server.tool(description="Add two numbers")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool(output_schema={"type": "object"})
    def stats() -> dict[str, int]:
        return {"n": 3}

    @server.tool
    def blocks() -> JSONObj:
        return {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}

    @server.tool
    def broken() -> None:
        raise ValueError("no luck")

    @server.tool
    def refuse() -> None:
        raise RpcError(-32099, "refused", {"why": "test"})

    server.add_resource("memo://readme", text="hello", mime_type="text/plain")
    server.add_resource("memo://logo.png", blob=b"\x89PNG", mime_type="image/png")
    server.add_resource_template("memo://users/{name}", lambda name: f"user {name}",
                                 name="user", mime_type="text/plain")
    server.add_prompt("greet", lambda who: f"Hello {who}", description="Greets")
    server.add_prompt("chat", lambda: ["hi", {"role": "assistant",
                                              "content": {"type": "text", "text": "yo"}}])
    return server


def ready_link(era: str, **kwargs: Any) -> Link:
    server_kwargs = kwargs.pop("server", {})
    link = Link(demo_server(**server_kwargs), **kwargs)
    link.open(era)
    return link


def raw(server: MemoryServer, *messages: object, now: float = 0.0) -> list[JSONObj]:
    server.receive_data(b"".join(dumps(m) + b"\n" for m in messages), now)
    return parse_ndjson(server.data_to_send())


def envelope(version: str = MODERN_VERSIONS[0]) -> JSONObj:
    return {_modern.PROTOCOL_VERSION_KEY: version, _modern.CAPABILITIES_KEY: {}}


# -- handshake / discover -----------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_opening(era: str) -> None:
    link = Link(demo_server())
    ready = link.open(era)
    assert ready.server_info.name == "demo" and ready.server_info.version == "2.0.0"
    assert ready.instructions == "be nice"
    assert ready.capabilities["tools"] == {"listChanged": True}
    assert link.server.era == era
    if era == "legacy":
        assert ready.protocol_version == HANDSHAKE_VERSIONS[0]
        assert link.server.protocol_version == HANDSHAKE_VERSIONS[0]
        assert link.server.initialized
    else:
        assert ready.protocol_version == MODERN_VERSIONS[0]
        [discover] = [m for m in link.sent if "supportedVersions" in m.get("result", {})]
        assert discover["result"]["resultType"] == "complete"
        assert discover["result"]["_meta"][_modern.SERVER_INFO_KEY]["name"] == "demo"
        acks = [m for m in link.sent
                if m.get("method") == "notifications/subscriptions/acknowledged"]
        assert len(acks) == 1  # the session's listen, acknowledged (SB-02)
        assert acks[0]["params"]["notifications"]["toolsListChanged"] is True
    assert link.server.internal_errors == 0


def test_version_negotiation_answers_the_servers_newest() -> None:
    link = Link(demo_server(protocol_versions=("2025-06-18", "2025-03-26")))
    ready = link.open("legacy")
    assert ready.protocol_version == "2025-06-18"


def test_the_clients_older_version_is_echoed() -> None:
    link = Link(demo_server(), versions=("2025-03-26",))
    assert link.open("legacy").protocol_version == "2025-03-26"


def test_a_handshake_only_server_sends_the_probe_to_initialize() -> None:
    link = Link(demo_server(protocol_versions=HANDSHAKE_VERSIONS))
    link.session.start(now=link.now)
    events = link.pump()
    [ready] = [e for e in events if isinstance(e, Ready)]
    assert ready.era == "legacy"
    [probe_answer] = [m for m in link.sent if m.get("id") == 1]
    assert probe_answer["error"]["code"] == -32601


def test_a_modern_only_server_knows_no_initialize() -> None:
    server = demo_server(protocol_versions=MODERN_VERSIONS)
    [answer] = raw(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "c", "version": "1"}}})
    assert answer["error"]["code"] == -32601


def test_modern_envelope_is_checked() -> None:
    server = demo_server()
    no_meta, bad_version, fine = raw(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
         "params": {"_meta": envelope("2099-01-01")}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": envelope()}})
    assert no_meta["error"]["code"] == -32602
    assert bad_version["error"]["code"] == -32022
    assert bad_version["error"]["data"] == {"supported": list(MODERN_VERSIONS),
                                            "requested": "2099-01-01"}
    assert fine["result"]["resultType"] == "complete"
    assert [t["name"] for t in fine["result"]["tools"]][:2] == ["add", "echo"]


def test_handshake_only_methods_are_unknown_in_2026() -> None:
    server = demo_server()
    [ping] = raw(server, {"jsonrpc": "2.0", "id": 1, "method": "ping",
                          "params": {"_meta": envelope()}})
    assert ping["error"]["code"] == -32601


def test_meta_keys_agree_with_the_session() -> None:
    for key in ("PROTOCOL_VERSION_KEY", "CAPABILITIES_KEY", "LOG_LEVEL_KEY", "SERVER_INFO_KEY",
                "SUBSCRIPTION_ID_KEY"):
        assert getattr(_catalog, key) == getattr(_modern, key), key


def test_requests_before_initialize_on_a_handshake_only_server() -> None:
    server = demo_server(protocol_versions=HANDSHAKE_VERSIONS)
    early, ping = raw(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                      {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert early["error"]["code"] == -32600
    assert ping["result"] == {}


# -- tools --------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_tools_list_pages(era: str) -> None:
    link = ready_link(era, server={"page_size": 2})
    done = link.complete(link.session.list_tools(now=link.now))
    assert isinstance(done, Completed), done
    assert [t.name for t in done.value] == ["add", "echo", "stats", "blocks", "broken",
                                            "refuse"]
    lists = [m for m in link.server.received if m.get("method") == "tools/list"]
    assert len(lists) == 3
    assert "cursor" not in lists[0].get("params", {})
    assert all(isinstance(m["params"]["cursor"], str) for m in lists[1:])
    add = done.value[0]
    assert add.description == "Add two numbers"
    assert add.input_schema["required"] == ["a", "b"]
    assert add.input_schema["properties"]["a"] == {"type": "integer"}
    assert done.value[1].description == "Say it back."


def test_a_cursor_the_server_did_not_give_is_refused() -> None:
    link = ready_link("legacy")
    done = link.complete(link.session.send_request("tools/list", {"cursor": "nope"},
                                                   now=link.now))
    assert isinstance(done, Failed) and isinstance(done.error, RpcError)
    assert done.error.code == -32602


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("tool", "args", "expect"), [
    ("add", {"a": 2, "b": 3}, {"text": "5"}),
    ("echo", {"text": "hi"}, {"text": "hi"}),
    ("stats", {}, {"text": '{"n":3}', "structured": {"n": 3}}),
    ("blocks", {}, {"text": "a", "blocks": 2}),
    ("broken", {}, {"text": "ValueError: no luck", "is_error": True}),
])
def test_a_call_through_next_call_and_finish(era: str, tool: str, args: JSONObj,
                                             expect: JSONObj) -> None:
    link = ready_link(era)
    handle = link.session.call_tool(tool, args, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert isinstance(call, HandlerCall)
    assert (call.kind, call.name, call.arguments) == ("tool", tool, args)
    assert link.server.next_call() is None
    link.server.finish(call.call_id, call.run(), link.now)
    done = link.complete(handle)
    assert isinstance(done, Completed), done
    result = done.value
    assert result.content[0].text == expect["text"]
    assert result.is_error is expect.get("is_error", False)
    assert result.structured_content == expect.get("structured")
    assert len(result.content) == expect.get("blocks", 1)
    with pytest.raises(LocalProtocolError):
        link.server.finish(call.call_id, "again", link.now)


@pytest.mark.parametrize("era", ERAS)
def test_an_rpc_error_raised_is_the_answer(era: str) -> None:
    link = ready_link(era)
    handle = link.session.call_tool("refuse", {}, now=link.now)
    link.pump()
    link.run_calls()
    [answer] = [m for m in link.sent if "error" in m and m.get("id") == handle.id]
    assert answer["error"] == {"code": -32099, "message": "refused", "data": {"why": "test"}}


@pytest.mark.parametrize("era", ERAS)
def test_unknown_tool_and_bad_arguments(era: str) -> None:
    link = ready_link(era)
    unknown = link.complete(link.session.call_tool("nope", {}, now=link.now))
    assert isinstance(unknown, Failed) and unknown.error.code == -32602  # type: ignore[attr-defined]
    bad = link.complete(link.session.send_request("tools/call", {"name": "add",
                                                                 "arguments": [1]},
                                                  now=link.now))
    assert isinstance(bad, Failed) and bad.error.code == -32602  # type: ignore[attr-defined]


@pytest.mark.parametrize("era", ERAS)
def test_progress_reaches_the_client(era: str) -> None:
    link = ready_link(era)
    handle = link.session.call_tool("add", {"a": 1, "b": 1}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None and call.progress_token is not None
    assert link.server.call_progress(call.call_id, 1, 4, "a quarter")
    assert link.server.call_progress(call.call_id, 2)
    events = link.pump()
    assert events == [Progress(handle=handle, progress=1, total=4, message="a quarter"),
                      Progress(handle=handle, progress=2)]
    link.server.finish(call.call_id, 2, link.now)
    assert isinstance(link.complete(handle), Completed)


def test_no_progress_without_a_token() -> None:
    link = ready_link("legacy")
    link.session.call_tool("add", {"a": 1, "b": 1}, now=link.now, progress=False)
    link.pump()
    call = link.server.next_call()
    assert call is not None and call.progress_token is None
    assert link.server.call_progress(call.call_id, 1) is False


# -- server requests ----------------------------------------------------------------------------


def test_a_sampling_round_trip_in_the_handshake_era() -> None:
    link = ready_link("legacy", capabilities={"sampling": {}})
    handle = link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    params = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
              "maxTokens": 10}
    rid = link.server.call_request(call.call_id, "sampling/createMessage", params)
    [asked] = link.pump()
    assert isinstance(asked, ServerRequest) and asked.method == "sampling/createMessage"
    assert asked.request_id == rid and asked.params == params
    assert link.server.next_answer() is None
    answer = {"role": "assistant", "content": {"type": "text", "text": "hello"},
              "model": "m"}
    link.session.respond(asked.request_id, answer)
    link.pump()
    assert link.server.next_answer() == (rid, answer)
    assert link.server.next_answer() is None
    link.server.finish(call.call_id, "done", link.now)
    assert isinstance(link.complete(handle), Completed)


def test_a_refused_server_request_is_an_rpc_error() -> None:
    link = ready_link("legacy", capabilities={"roots": {}})
    link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    rid = link.server.call_request(call.call_id, "roots/list")
    [asked] = link.pump()
    assert isinstance(asked, ServerRequest)
    link.session.respond_error(asked.request_id, -1, "no")
    link.pump()
    answer = link.server.next_answer()
    assert answer is not None and answer[0] == rid
    assert isinstance(answer[1], RpcError) and answer[1].code == -1


@pytest.mark.parametrize("era", ERAS)
def test_server_requests_need_the_capability_and_the_handshake_era(era: str) -> None:
    link = ready_link(era)
    link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    with pytest.raises(LocalProtocolError, match="sampling" if era == "legacy" else "M-04"):
        link.server.call_request(call.call_id, "sampling/createMessage", {})
    with pytest.raises(LocalProtocolError, match="not a request"):
        link.server.call_request(call.call_id, "tools/list")


# -- logging ------------------------------------------------------------------------------------


def test_logging_set_level_is_honoured() -> None:
    link = ready_link("legacy")
    assert link.server.log("debug", "all goes before setLevel")
    assert isinstance(link.pump()[0], LogMessage)
    link.complete(link.session.set_logging_level("warning", now=link.now))
    assert link.server.log_level == "warning"
    assert link.server.log("info", "quiet") is False
    assert link.server.log("error", {"k": 1}, logger="db")
    assert link.pump() == [LogMessage(level="error", data={"k": 1}, logger="db")]
    with pytest.raises(ValueError):
        link.server.log("loud", "x")


def test_call_log_in_2026_follows_the_requests_level() -> None:
    link = ready_link("modern")
    link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    assert link.server.call_log(call.call_id, "error", "x") is False  # no level asked (G-11)
    assert link.server.log("error", "nowhere to go") is False
    link.complete(link.session.set_logging_level("warning", now=link.now))
    link.session.call_tool("echo", {"text": "y"}, now=link.now)
    link.pump()
    second = link.server.next_call()
    assert second is not None
    assert link.server.call_log(second.call_id, "info", "low") is False
    assert link.server.call_log(second.call_id, "warning", "high")
    assert link.pump() == [LogMessage(level="warning", data="high")]


# -- list changes -------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_list_changed_reaches_the_client(era: str) -> None:
    link = ready_link(era)
    link.server.add_tool("late", lambda: "x")
    assert link.server.notify_tools_changed() == 1
    assert link.server.notify_prompts_changed() == 1
    assert link.server.notify_resources_changed() == 1
    assert link.pump() == [ListChanged(kind="tools"), ListChanged(kind="prompts"),
                           ListChanged(kind="resources")]
    note = next(m for m in link.sent if m.get("method") == "notifications/tools/list_changed")
    if era == "modern":  # on the listen stream (SB-03)
        assert note["params"]["_meta"][_modern.SUBSCRIPTION_ID_KEY] == \
            link.session._subs.listen_rid
    else:
        assert "_meta" not in note.get("params", {})
    done = link.complete(link.session.list_tools(now=link.now))
    assert "late" in [t.name for t in done.value]


def test_a_cancelled_listen_gets_nothing() -> None:
    server = demo_server()
    [ack] = raw(server, {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
                         "params": {"_meta": envelope(),
                                    "notifications": {"toolsListChanged": True,
                                                      "taskIds": ["t"]}}})
    assert ack["params"] == {"_meta": {_modern.SUBSCRIPTION_ID_KEY: 7},
                             "notifications": {"toolsListChanged": True}}
    assert server.notify_tools_changed() == 1
    assert server.notify_prompts_changed() == 0  # not asked for
    server.data_to_send()
    assert raw(server, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7}}) == []
    assert server.notify_tools_changed() == 0


@pytest.mark.parametrize("era", ERAS)
def test_resource_updates_for_subscribers(era: str) -> None:
    link = ready_link(era)
    done = link.complete(link.session.subscribe("memo://readme", now=link.now))
    assert isinstance(done, Completed), done
    assert link.server.notify_resource_updated("memo://readme") == 1
    assert link.server.notify_resource_updated("memo://other") == 0
    assert [type(e).__name__ for e in link.pump()] == ["ResourceUpdated"]


# -- resources and prompts ------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_static_resources(era: str) -> None:
    link = ready_link(era)
    listed = link.complete(link.session.list_resources(now=link.now))
    assert [(r.uri, r.name, r.mime_type) for r in listed.value] == [
        ("memo://readme", "readme", "text/plain"), ("memo://logo.png", "logo.png", "image/png")]
    text = link.complete(link.session.read_resource("memo://readme", now=link.now))
    assert text.value.contents[0].text == "hello"
    blob = link.complete(link.session.read_resource("memo://logo.png", now=link.now))
    assert blob.value.contents[0].blob == "iVBORw=="
    missing = link.complete(link.session.read_resource("memo://gone", now=link.now))
    assert isinstance(missing, Failed)
    assert missing.error.code == (-32602 if era == "modern" else -32002)  # type: ignore[attr-defined]


@pytest.mark.parametrize("era", ERAS)
def test_resource_templates(era: str) -> None:
    link = ready_link(era)
    listed = link.complete(link.session.list_resource_templates(now=link.now))
    assert [t.uri_template for t in listed.value] == ["memo://users/{name}"]
    handle = link.session.read_resource("memo://users/ada%20l", now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    assert (call.kind, call.name, call.arguments) == ("resource", "memo://users/ada%20l",
                                                      {"name": "ada l"})
    link.server.finish(call.call_id, call.run(), link.now)
    done = link.complete(handle)
    content = done.value.contents[0]
    assert (content.uri, content.text, content.mime_type) == ("memo://users/ada%20l",
                                                              "user ada l", "text/plain")


@pytest.mark.parametrize("era", ERAS)
def test_prompts(era: str) -> None:
    link = ready_link(era)
    listed = link.complete(link.session.list_prompts(now=link.now))
    assert [(p.name, p.description) for p in listed.value] == [("greet", "Greets"),
                                                               ("chat", None)]
    assert listed.value[0].arguments[0].name == "who"
    handle = link.session.get_prompt("greet", {"who": "Ada"}, now=link.now)
    link.pump()
    link.run_calls()
    [m] = [m for m in link.sent if m.get("id") == handle.id]
    assert m["result"]["messages"] == [{"role": "user",
                                        "content": {"type": "text", "text": "Hello Ada"}}]
    assert m["result"]["description"] == "Greets"
    chat = link.session.get_prompt("chat", now=link.now)
    link.pump()
    link.run_calls()
    [m] = [m for m in link.sent if m.get("id") == chat.id]
    assert [x["role"] for x in m["result"]["messages"]] == ["user", "assistant"]
    missing = link.complete(link.session.get_prompt("greet", {}, now=link.now))
    assert isinstance(missing, Failed) and missing.error.code == -32602  # type: ignore[attr-defined]


@pytest.mark.parametrize("era", ERAS)
def test_completion_is_empty(era: str) -> None:
    link = ready_link(era)
    done = link.complete(link.session.complete({"type": "ref/prompt", "name": "greet"}, "who",
                                               "A", now=link.now))
    assert isinstance(done, Completed) and list(done.value.values) == []


# -- cancellation, errors, the endpoint ------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_cancellation_marks_the_call(era: str) -> None:
    link = ready_link(era)
    handle = link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None and not link.server.is_cancelled(call.call_id)
    assert link.session.cancel(handle, "changed my mind")
    link.pump()
    assert link.server.is_cancelled(call.call_id)
    before = len(link.sent)
    link.server.finish(call.call_id, "late", link.now)
    link.pump()
    assert len(link.sent) == before  # no answer after a cancel (C-03)
    assert not link.server.is_cancelled(call.call_id)


@pytest.mark.parametrize("era", ERAS)
def test_unknown_method(era: str) -> None:
    link = ready_link(era)
    done = link.complete(link.session.send_request("nope/nothing", {}, now=link.now))
    assert isinstance(done, Failed) and done.error.code == -32601  # type: ignore[attr-defined]


def test_an_oversize_line_is_answered_and_dropped() -> None:
    link = Link(demo_server(limits=Limits(max_message_size=1024)))
    link.open("legacy")
    handle = link.session.call_tool("echo", {"text": "x" * 2000}, now=link.now)
    events = link.pump()
    assert any(isinstance(e, BadMessage) for e in events), events
    [answer] = [m for m in link.sent if "id" not in m and "error" in m]
    assert answer["error"]["code"] == -32600 and "over the limit" in answer["error"]["message"]
    assert link.server.next_call() is None
    assert link.session.cancel(handle)
    done = link.complete(link.session.list_tools(now=link.now))
    assert isinstance(done, Completed)  # the server goes on


def test_bad_lines_are_answered() -> None:
    server = demo_server()
    server.receive_data(b"not json\n{\"jsonrpc\":\"1.0\",\"id\":4}\n[1,2]\n\n", 0.0)
    parse_error, invalid, batch = parse_ndjson(server.data_to_send())
    assert parse_error["error"]["code"] == -32700 and "id" not in parse_error
    assert invalid["error"]["code"] == -32600 and invalid["id"] == 4
    assert batch["error"]["code"] == -32600
    assert server.internal_errors == 0


def test_batches_in_2025_03_26() -> None:
    link = Link(demo_server(), versions=("2025-03-26",))
    link.open("legacy")
    server = link.server
    server.receive_data(dumps([{"jsonrpc": "2.0", "id": 50, "method": "ping"},
                               {"jsonrpc": "2.0", "id": 51, "method": "tools/list"}]) + b"\n",
                        link.now)
    first, second = parse_ndjson(server.data_to_send())
    assert (first["id"], second["id"]) == (50, 51)


def test_a_request_id_in_flight_is_refused() -> None:
    link = ready_link("legacy")
    link.session.call_tool("echo", {"text": "x"}, now=link.now)
    link.pump()
    call = link.server.next_call()
    assert call is not None
    [answer] = raw(link.server, {"jsonrpc": "2.0", "id": call.request_id, "method": "ping"})
    assert answer["error"]["code"] == -32600


def test_the_endpoint_interface() -> None:
    server = demo_server()
    assert server.next_deadline() is None
    server.handle_timeout(5.0)
    assert server.exit_code is None
    server.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', 6.0)  # no newline yet
    assert server.data_to_send() == b""
    server.receive_eof(7.0)
    assert json.loads(server.data_to_send())["result"] == {}
    assert server.exit_code == 0
    assert [m["method"] for m in server.received] == ["ping"]


def test_exit_ends_the_process() -> None:
    server = demo_server()
    server.log("info", "never: no client yet")
    server.exit(3, "boom")
    assert server.exit_code == 3
    assert server.stderr_to_send() == b"boom\n"
    server.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', 1.0)
    assert server.data_to_send() == b""
    server.receive_eof(2.0)
    assert server.exit_code == 3


def test_bad_registrations() -> None:
    server = MemoryServer("x")
    with pytest.raises(ValueError):
        server.add_resource("memo://a")
    with pytest.raises(ValueError):
        server.add_resource_template("memo://{a,b}", lambda a, b: "")
    with pytest.raises(ValueError):
        MemoryServer("x", protocol_versions=("1999-01-01",))
    with pytest.raises(ValueError):
        MemoryServer("x", page_size=0)
