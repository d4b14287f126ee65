"""The bundled demo server (``python -m mcp_proto_io.cli.demo_server``) through the threads client:
every tool, pagination, resources, prompts, completion, logging and progress."""

from __future__ import annotations

import base64
import json
import threading
import time
from typing import Any

import pytest
from conftest import demo_command, demo_env, proc_state, run_threads
from mcp_proto_io.cli import demo_server as demo
from mcp_proto_io.threads import Client, connect_stdio

from mcp_proto import (
    LATEST_HANDSHAKE_VERSION,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    Implementation,
    LocalProtocolError,
    LogMessage,
    Progress,
    RequestTimeout,
    ResourceLink,
    RpcError,
    TextContent,
    TextResourceContents,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

T = 10.0


def demo_client(**kwargs: Any) -> Client:
    kwargs.setdefault("timeout", T)
    return connect_stdio(demo_command(), env=demo_env(), **kwargs)


def test_handshake() -> None:
    with demo_client() as client:
        assert client.server_info == Implementation(name="mcp-proto-demo", version="0.1.0")
        assert client.protocol_version == LATEST_HANDSHAKE_VERSION
        assert client.instructions == demo.INSTRUCTIONS
        assert set(client.capabilities) == {"tools", "resources", "prompts", "logging",
                                            "completions"}
        client.ping()
        pid = client.pid
    assert pid is not None and proc_state(pid) is None


def test_tools_list_follows_pages() -> None:
    with demo_client() as client:
        tools = client.list_tools()
    assert len(tools) > demo.TOOLS_PAGE_SIZE  # so at least two pages were followed
    assert [t.name for t in tools] == ["echo", "add", "slow_count", "fail", "weather"]
    add = tools[1]
    assert add.title == "Add two numbers" and add.display_name == "Add two numbers"
    assert add.output_schema == {"type": "object", "properties": {"sum": {"type": "number"}},
                                 "required": ["sum"]}
    assert tools[0].annotations == {"readOnlyHint": True, "openWorldHint": False}


def test_echo_add_fail() -> None:
    with demo_client() as client:
        echo = client.call_tool("echo", {"text": "héllo ✓"})
        assert (echo.text, echo.is_error, echo.structured_content) == ("héllo ✓", False, None)

        add = client.call_tool("add", {"a": 2, "b": 3.5})
        assert add.structured_content == {"sum": 5.5}
        assert json.loads(add.text) == {"sum": 5.5}

        bad_add = client.call_tool("add", {"a": "2", "b": 3})
        assert bad_add.is_error and "must be numbers" in bad_add.text

        fail = client.call_tool("fail")
        assert (fail.is_error, fail.text) == (True, "This tool always fails.")

        with pytest.raises(RpcError) as info:
            client.call_tool("no_such_tool")
        assert (info.value.code, info.value.message) == (-32602, "Unknown tool: no_such_tool")


def test_weather_content_blocks() -> None:
    with demo_client() as client:
        result = client.call_tool("weather", {"city": "Lyon"})
    assert [type(b) for b in result.content] == [TextContent, ImageContent, ResourceLink]
    text, image, link = result.content
    assert isinstance(text, TextContent) and text.text.startswith("Weather in Lyon: sunny")
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
    assert isinstance(link, ResourceLink)
    assert (link.uri, link.name, link.mime_type) == ("demo://readme", "readme", "text/markdown")


def test_pinned_older_protocol_version() -> None:
    with demo_client(protocol_version="2025-03-26") as client:
        assert client.protocol_version == "2025-03-26"
        result = client.call_tool("weather", {"city": "Lyon"})
    # resource_link does not exist before 2025-06-18: the demo embeds the resource instead.
    assert [type(b) for b in result.content] == [TextContent, ImageContent, EmbeddedResource]
    embedded = result.content[2]
    assert isinstance(embedded, EmbeddedResource)
    assert embedded.resource == TextResourceContents(uri="demo://readme", text=demo.README_TEXT,
                                                     mime_type="text/markdown")


def test_pinned_2024_11_05_still_completes() -> None:
    with demo_client(protocol_version="2024-11-05") as client:
        assert client.protocol_version == "2024-11-05"
        done = client.complete({"type": "ref/prompt", "name": "greet"}, "name", "gr")
        assert done.values == ("Grace",)


def test_slow_count_progress() -> None:
    seen: list[Progress] = []
    with demo_client() as client:
        result = client.call_tool("slow_count", {"steps": 4, "delay": 0.01},
                                  on_progress=seen.append)
    assert result.text == "counted to 4"
    assert [(p.progress, p.total, p.message) for p in seen] == [
        (i, 4, f"step {i}/4") for i in range(1, 5)]


def test_a_call_from_the_progress_callback_is_refused_not_deadlocked() -> None:
    """on_progress runs on the reader thread: a call from there would wait for the thread
    that must read its answer, so it raises LocalProtocolError at once; the outer call and
    the client go on."""
    refused: list[BaseException] = []

    def on_progress(_: Progress) -> None:
        try:
            client.call_tool("echo", {"text": "from the callback"})
        except LocalProtocolError as exc:
            refused.append(exc)

    with demo_client() as client:
        result = client.call_tool("slow_count", {"steps": 2, "delay": 0.01},
                                  on_progress=on_progress)
        assert result.text == "counted to 2"
        assert client.call_tool("echo", {"text": "after"}).text == "after"
    assert len(refused) == 2 and "another thread" in str(refused[0])


def test_progress_resets_idle_timeout() -> None:
    seen: list[Progress] = []
    with demo_client() as client:
        t0 = time.monotonic()
        result = client.call_tool("slow_count", {"steps": 6, "delay": 0.2}, idle_timeout=0.6,
                                  on_progress=seen.append)
        assert time.monotonic() - t0 > 0.6  # longer than the idle timeout in total
    assert result.text == "counted to 6" and len(seen) == 6


def test_idle_timeout_without_progress() -> None:
    with demo_client() as client:
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("slow_count", {"steps": 6, "delay": 0.2}, idle_timeout=0.5)
        assert info.value.kind == "idle"
        # The demo server honours notifications/cancelled; the session goes on.
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_total_timeout_despite_progress() -> None:
    seen: list[Progress] = []
    with demo_client() as client:
        t0 = time.monotonic()
        with pytest.raises(RequestTimeout) as info:
            client.call_tool("slow_count", {"steps": 50, "delay": 0.05}, timeout=0.6,
                             idle_timeout=0.5, on_progress=seen.append)
        assert time.monotonic() - t0 < 2.0
        assert (info.value.kind, info.value.timeout) == ("total", 0.6)
        assert seen  # progress flowed, and still did not extend the total deadline
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_slow_call_does_not_block_others() -> None:
    with demo_client() as client:
        slow: list[Any] = []
        thread = threading.Thread(target=lambda: slow.append(
            client.call_tool("slow_count", {"steps": 10, "delay": 0.1})))
        thread.start()
        t0 = time.monotonic()
        assert client.call_tool("echo", {"text": "quick"}).text == "quick"
        assert time.monotonic() - t0 < 0.5
        thread.join(T)
        assert not thread.is_alive()
    assert slow[0].text == "counted to 10"


def test_32_threads_pipelined() -> None:
    with demo_client() as client:
        sums = run_threads(
            lambda i: client.call_tool("add", {"a": i, "b": i * 100}).structured_content, 32, T)
    assert sums == {i: {"sum": i * 101} for i in range(32)}


def test_resources() -> None:
    with demo_client() as client:
        resources = client.list_resources()
        assert [(r.uri, r.name, r.mime_type) for r in resources] == [
            ("demo://readme", "readme", "text/markdown"),
            ("demo://logo.png", "logo.png", "image/png")]
        templates = client.list_resource_templates()
        assert [(t.uri_template, t.name) for t in templates] == [("demo://notes/{name}",
                                                                  "notes")]
        readme = client.read_resource("demo://readme").contents
        assert readme == (TextResourceContents(uri="demo://readme", text=demo.README_TEXT,
                                               mime_type="text/markdown"),)
        logo = client.read_resource("demo://logo.png").contents[0]
        assert isinstance(logo, BlobResourceContents) and logo.mime_type == "image/png"
        assert base64.b64decode(logo.blob).startswith(b"\x89PNG\r\n\x1a\n")
        note = client.read_resource("demo://notes/Ada").contents[0]
        assert isinstance(note, TextResourceContents) and note.text == "Notes about Ada."
        with pytest.raises(RpcError) as info:
            client.read_resource("demo://missing")
        assert (info.value.code, info.value.data) == (-32002, {"uri": "demo://missing"})
        client.subscribe("demo://readme")
        client.unsubscribe("demo://readme")


def test_prompts_and_completion() -> None:
    with demo_client() as client:
        prompts = client.list_prompts()
        assert [p.name for p in prompts] == ["greet"]
        (arg,) = prompts[0].arguments
        assert (arg.name, arg.required, arg.title) == ("name", True, "Name")

        greeting = client.get_prompt("greet", {"name": "Ada"})
        assert greeting.description == "Greet Ada"
        (message,) = greeting.messages
        assert message.role == "user"
        assert message.content == TextContent(text="Please greet Ada warmly, in one sentence.")
        with pytest.raises(RpcError) as info:
            client.get_prompt("greet")
        assert info.value.code == -32602
        with pytest.raises(RpcError):
            client.get_prompt("nope", {"name": "x"})

        done = client.complete({"type": "ref/prompt", "name": "greet"}, "name", "a")
        assert (done.values, done.total, done.has_more) == (("Ada", "Alan", "Alice"), 3, False)
        by_template = client.complete({"type": "ref/resource", "uri": "demo://notes/{name}"},
                                      "name", "e")
        assert by_template.values == ("Edsger", "Eve")
        assert client.complete({"type": "ref/prompt", "name": "greet"}, "name", "zz").values == ()
        with pytest.raises(RpcError) as info:
            client.complete({"type": "ref/prompt", "name": "nope"}, "name", "a")
        assert info.value.code == -32602


def test_logging_notifications() -> None:
    events: list[Any] = []
    with demo_client(on_notification=events.append) as client:
        client.call_tool("echo", {"text": "quiet"})
        assert not [e for e in events if isinstance(e, LogMessage)]  # no level set yet

        client.set_logging_level("info")
        client.call_tool("echo", {"text": "loud"})
        assert [e for e in events if isinstance(e, LogMessage)] == [
            LogMessage(level="info", data="tools/call echo", logger="demo")]

        client.set_logging_level("warning")
        client.call_tool("add", {"a": 1, "b": 2})
        assert len([e for e in events if isinstance(e, LogMessage)]) == 1

        with pytest.raises(ValueError):
            client.set_logging_level("verbose")
