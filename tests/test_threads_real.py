"""The blocking binding against servers nobody here wrote:
``@modelcontextprotocol/server-everything`` (TypeScript SDK, over stdio) and
``mcp-server-time`` (Python SDK).

The servers are located by ``conftest.py``; under ``CI=true`` a missing one fails the test.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from conftest import proc_state, run_threads, wait_until
from mcp_proto_io.threads import Client, connect_stdio

from mcp_proto import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    LogMessage,
    Progress,
    ResourceLink,
    ResourceUpdated,
    Root,
    RpcError,
    TextContent,
    TextResourceContents,
)

pytestmark = [pytest.mark.real_server, pytest.mark.usefixtures("no_leaks")]

T = 20.0  # per-call deadline, seconds (node start-up can be slow on a loaded CI machine)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CLIENT_TOOLS = {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"}
DYNAMIC_TEXT = "demo://resource/dynamic/text/{resourceId}"


def everything(command: list[str], **kwargs: Any) -> Client:
    kwargs.setdefault("timeout", T)
    return connect_stdio(command, **kwargs)


# -- server-everything ----------------------------------------------------------------------


def test_everything_handshake(everything_command: list[str]) -> None:
    with everything(everything_command) as client:
        assert client.server_info.name == "mcp-servers/everything"
        assert client.server_info.version
        assert client.protocol_version in HANDSHAKE_VERSIONS
        assert client.protocol_version == LATEST_HANDSHAKE_VERSION
        caps = client.capabilities
        for key in ("tools", "resources", "prompts", "logging", "completions"):
            assert key in caps, key
        assert caps["resources"].get("subscribe") is True
        assert isinstance(client.instructions, str) and client.instructions.strip()
        client.ping(timeout=T)


def test_everything_tools_and_client_capabilities(everything_command: list[str]) -> None:
    with everything(everything_command) as client:
        tools = {t.name: t for t in client.list_tools()}
    for name in ("echo", "get-sum", "get-structured-content", "get-tiny-image",
                 "trigger-long-running-operation", "toggle-subscriber-updates"):
        assert name in tools, name
    assert not CLIENT_TOOLS & tools.keys()  # offered only to clients declaring the capability
    echo = tools["echo"]
    assert echo.input_schema["type"] == "object"
    assert echo.input_schema["required"] == ["message"]
    assert all(t.input_schema.get("type") == "object" for t in tools.values())

    with everything(everything_command, on_sampling=lambda p: {}, on_elicitation=lambda p: {},
                    roots=[Root("file:///tmp")]) as client:
        names = {t.name for t in client.list_tools()}
    assert names >= CLIENT_TOOLS


def test_everything_call_tools(everything_command: list[str]) -> None:
    with everything(everything_command) as client:
        echo = client.call_tool("echo", {"message": "héllo ✓"})
        assert (echo.text, echo.is_error) == ("Echo: héllo ✓", False)

        total = client.call_tool("get-sum", {"a": 1.5, "b": 2.25})
        assert not total.is_error and "3.75" in total.text

        weather = client.call_tool("get-structured-content", {"location": "Chicago"})
        assert not weather.is_error
        assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}
        assert json.loads(weather.text) == weather.structured_content

        image = client.call_tool("get-tiny-image", {})
        assert [type(b) for b in image.content] == [TextContent, ImageContent, TextContent]
        block = image.content[1]
        assert isinstance(block, ImageContent)
        assert block.mime_type == "image/png"
        assert base64.b64decode(block.data).startswith(PNG_MAGIC)

        ref = client.call_tool("get-resource-reference", {"resourceType": "Text",
                                                          "resourceId": 3})
        embedded = [b for b in ref.content if isinstance(b, EmbeddedResource)]
        assert len(embedded) == 1
        assert isinstance(embedded[0].resource, TextResourceContents)
        assert embedded[0].resource.uri == "demo://resource/dynamic/text/3"

        links = client.call_tool("get-resource-links", {"count": 2})
        assert len([b for b in links.content if isinstance(b, ResourceLink)]) == 2

        # Unknown tools and bad arguments come back as tool errors from this SDK.
        unknown = client.call_tool("no-such-tool", {})
        assert unknown.is_error and "no-such-tool" in unknown.text
        invalid = client.call_tool("get-sum", {"a": "x"})
        assert invalid.is_error


def test_everything_resources(everything_command: list[str]) -> None:
    with everything(everything_command) as client:
        resources = client.list_resources()
        uris = [r.uri for r in resources]
        assert len(uris) == len(set(uris)) >= 1
        static = "demo://resource/static/document/features.md"
        assert static in uris
        read = client.read_resource(static)
        assert len(read.contents) == 1
        doc = read.contents[0]
        assert isinstance(doc, TextResourceContents) and doc.uri == static
        assert "Features" in doc.text

        templates = {t.uri_template for t in client.list_resource_templates()}
        assert DYNAMIC_TEXT in templates
        assert "demo://resource/dynamic/blob/{resourceId}" in templates
        text = client.read_resource("demo://resource/dynamic/text/7").contents[0]
        assert isinstance(text, TextResourceContents) and text.text.startswith("Resource 7")
        blob = client.read_resource("demo://resource/dynamic/blob/7").contents[0]
        assert isinstance(blob, BlobResourceContents)
        assert base64.b64decode(blob.blob).startswith(b"Resource 7")

        with pytest.raises(RpcError) as info:
            client.read_resource("demo://no/such/resource")
        assert info.value.code in (-32602, -32002)
        assert info.value.method == "resources/read"


def test_everything_prompts_and_completion(everything_command: list[str]) -> None:
    with everything(everything_command) as client:
        prompts = {p.name: p for p in client.list_prompts()}
        assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts.keys()
        args = prompts["args-prompt"].arguments
        assert [(a.name, a.required) for a in args] == [("city", True), ("state", False)]

        simple = client.get_prompt("simple-prompt")
        assert [m.role for m in simple.messages] == ["user"]
        assert isinstance(simple.messages[0].content, TextContent)

        with_args = client.get_prompt("args-prompt", {"city": "Paris"})
        content = with_args.messages[0].content
        assert isinstance(content, TextContent) and "Paris" in content.text

        with pytest.raises(RpcError) as info:
            client.get_prompt("args-prompt")  # missing the required city
        assert info.value.code == -32602

        assert "completions" in client.capabilities
        done = client.complete({"type": "ref/prompt", "name": "completable-prompt"},
                               "department", "Eng")
        assert "Engineering" in done.values
        assert all(v.startswith("Eng") for v in done.values)
        ids = client.complete({"type": "ref/resource", "uri": DYNAMIC_TEXT}, "resourceId", "1")
        assert ids.values and all(v.startswith("1") for v in ids.values)


def test_everything_long_running_progress(everything_command: list[str]) -> None:
    seen: list[Progress] = []
    with everything(everything_command) as client:
        t0 = time.monotonic()
        result = client.call_tool("trigger-long-running-operation",
                                  {"duration": 0.8, "steps": 4}, on_progress=seen.append)
        assert time.monotonic() - t0 < 10
    assert not result.is_error and "Long running operation completed" in result.text
    values = [p.progress for p in seen]
    assert values == sorted(set(values)) and len(values) == 4
    assert values[-1] == 4 and all(p.total == 4 for p in seen)


def test_everything_logging_and_subscribe(everything_command: list[str]) -> None:
    events: list[Any] = []
    uri = "demo://resource/dynamic/text/1"
    with everything(everything_command, on_notification=events.append) as client:
        client.set_logging_level("debug")
        client.subscribe(uri)
        logs = [e.data for e in events if isinstance(e, LogMessage)]
        assert any(str(d).startswith(f"Received Subscribe Resource request for URI: {uri}")
                   for d in logs), logs

        client.call_tool("toggle-subscriber-updates", {})
        assert wait_until(lambda: ResourceUpdated(uri=uri) in events, 5.0), events
        client.call_tool("toggle-subscriber-updates", {})

        client.set_logging_level("emergency")
        events.clear()
        client.unsubscribe(uri)  # its info log is now below the threshold
        assert not [e for e in events if isinstance(e, LogMessage)]
        client.set_logging_level("info")
        client.subscribe(uri)
        assert any(isinstance(e, LogMessage) and e.level == "info" for e in events)


def test_everything_client_features(everything_command: list[str]) -> None:
    sampled: list[dict[str, Any]] = []
    elicited: list[dict[str, Any]] = []

    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        sampled.append(params)
        return {"role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": "sampled-answer-42"}}

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        elicited.append(params)
        return {"action": "decline"}

    roots = [Root("file:///tmp/mcp-proto-root", "proto-root")]
    with everything(everything_command, on_sampling=on_sampling,
                    on_elicitation=on_elicitation, roots=roots) as client:
        listed = client.call_tool("get-roots-list", {})
        assert "proto-root" in listed.text and "file:///tmp/mcp-proto-root" in listed.text
        result = client.call_tool("trigger-sampling-request", {"prompt": "ping-prompt"})
        assert not result.is_error and "sampled-answer-42" in result.text
        assert "ping-prompt" in json.dumps(sampled[0]["messages"])
        elicit = client.call_tool("trigger-elicitation-request", {})
        assert len(elicited) == 1 and "requestedSchema" in elicited[0]
        assert "decline" in elicit.text.lower()


def test_everything_32_threads_pipelined(everything_command: list[str]) -> None:
    with everything(everything_command) as client:

        def work(i: int) -> tuple[str, str]:
            echo = client.call_tool("echo", {"message": f"thread-{i}"}).text
            return echo, client.call_tool("get-sum", {"a": i, "b": 1000}).text

        results = run_threads(work, 32, T)
    for i in range(32):
        echo, total = results[i]  # type: ignore[misc]
        assert echo == f"Echo: thread-{i}"
        assert str(i + 1000) in total


def test_everything_close_leaves_no_process(everything_command: list[str]) -> None:
    client = everything(everything_command)
    client.connect()
    pid = client.pid
    assert pid is not None and proc_state(pid) is not None
    t0 = time.monotonic()
    client.close()
    assert time.monotonic() - t0 < 6.0
    assert proc_state(pid) is None


# -- mcp-server-time ------------------------------------------------------------------------


def test_time_server(time_command: list[str]) -> None:
    with connect_stdio(time_command, timeout=T) as client:
        assert client.server_info.name == "mcp-time"
        # mcp-server-time 2026.10.19 speaks 2026-07-28: the probe finds it (section 2.3).
        assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
        tools = {t.name: t for t in client.list_tools()}
        assert {"get_current_time", "convert_time"} <= tools.keys()
        assert tools["get_current_time"].output_schema is not None
        assert tools["get_current_time"].input_schema["required"] == ["timezone"]

        before = datetime.now(timezone.utc)
        now = client.call_tool("get_current_time", {"timezone": "Etc/UTC"})
        assert not now.is_error
        data = now.structured_content
        assert set(data) >= {"timezone", "datetime", "day_of_week", "is_dst"}
        assert data["timezone"] == "Etc/UTC" and data["is_dst"] is False
        stamp = datetime.fromisoformat(data["datetime"])
        assert abs(stamp - before) < timedelta(minutes=2)
        assert data["day_of_week"] == stamp.strftime("%A")
        assert json.loads(now.text) == data

        converted = client.call_tool("convert_time", {
            "source_timezone": "Etc/UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
        assert converted.structured_content["time_difference"] == "+9.0h"
        assert converted.structured_content["target"]["datetime"].startswith(
            converted.structured_content["source"]["datetime"][:10])

        bad = client.call_tool("get_current_time", {"timezone": "Nowhere/Nothing"})
        assert bad.is_error and "Nowhere/Nothing" in bad.text
        pid = client.pid
    assert pid is not None and proc_state(pid) is None
