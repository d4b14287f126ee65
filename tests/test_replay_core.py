"""Replay (mcp_proto.testing._replay): a real ClientSession driven against a ReplayServer's
bytes, no threads, a fake clock.  Transcripts are built by hand (TranscriptWriter) with ids,
tokens and stream ids the live client does not use, so every match below is a remapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_proto import (
    ClientSession,
    Completed,
    Event,
    Failed,
    Implementation,
    Limits,
    ListChanged,
    MCPError,
    Progress,
    Ready,
    RequestCancelled,
    ServerRequest,
)
from mcp_proto.testing._replay import (
    MAX_SHOWN_MESSAGE,
    SUBSCRIPTION_ID_KEY,
    ReplayDivergence,
    ReplayServer,
)
from mcp_proto.testing._transcript import Transcript, TranscriptWriter, read_transcript
from tests.fake_server import DEFAULT_SERVER_CAPS, SERVER_INFO, discover_result

INFO = Implementation(name="test-client", version="0.0.1")
VERSION = "2025-11-25"


def rpc(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def record(*items: tuple[Any, ...], start: float = 0.0) -> Transcript:
    """A transcript of ``items``: ``("send"|"recv", msg, t)``, ``("stderr", line, t)``,
    ``("exit", code, tail, t)``, ``("closed", t)``, ``("ready", era, version, t)``."""
    w = TranscriptWriter(transport="stdio", target="python server.py",
                         client={"name": "recorder", "version": "9"}, start=start)
    data = w.header()
    for kind, *args in items:
        if kind in ("send", "recv"):
            data += w.message(kind, *args)
        else:
            data += getattr(w, kind)(*args)
    return read_transcript(data)


def handshake(rid: int = 10, caps: dict[str, Any] | None = None,
              version: str = VERSION) -> list[tuple[Any, ...]]:
    return [
        ("send", rpc(id=rid, method="initialize", params={
            "protocolVersion": version, "capabilities": caps or {},
            "clientInfo": {"name": "recorder", "version": "9"}}), 0.1),
        ("recv", rpc(id=rid, result={"protocolVersion": version,
                                     "capabilities": DEFAULT_SERVER_CAPS,
                                     "serverInfo": SERVER_INFO}), 0.2),
        ("send", rpc(method="notifications/initialized"), 0.3),
        ("ready", "legacy", version, 0.3),
    ]


def tools_list(rid: int, t: float = 1.0) -> list[tuple[Any, ...]]:
    return [("send", rpc(id=rid, method="tools/list"), t),
            ("recv", rpc(id=rid, result={"tools": [
                {"name": "add", "inputSchema": {"type": "object"}}]}), t + 0.1)]


def call(rid: int, args: dict[str, Any]) -> dict[str, Any]:
    return rpc(id=rid, method="tools/call", params={
        "name": "add", "arguments": args, "_meta": {"progressToken": rid}})


def text_result(rid: int, text: str) -> dict[str, Any]:
    return rpc(id=rid, result={"content": [{"type": "text", "text": text}]})


class Run:
    """A session and a replay server, the bytes between them pumped by hand."""

    def __init__(self, transcript: Transcript, *, capabilities: dict[str, Any] | None = None,
                 **options: Any) -> None:
        self.server = ReplayServer(transcript, **options)
        self.session = ClientSession(INFO, capabilities=capabilities)
        self.now = 10.0
        self.stderr = b""
        self.to_server: list[dict[str, Any]] = []

    def pump(self) -> None:
        for _ in range(100):
            out = self.session.data_to_send()
            if out:
                self.to_server += [json.loads(line) for line in out.splitlines()]
                self.server.receive_data(out, self.now)
            back = self.server.data_to_send()
            self.stderr += self.server.stderr_to_send()
            if back:
                self.session.receive_data(back, now=self.now)
            if not out and not back:
                return
        raise AssertionError("the pump does not settle")

    def tick(self, now: float) -> None:
        self.now = now
        self.server.handle_timeout(now)
        self.pump()

    def events(self) -> list[Event]:
        out: list[Event] = []
        while (event := self.session.next_event()) is not None:
            out.append(event)
        return out

    def ready(self) -> Ready:
        self.session.initialize(now=self.now)
        self.pump()
        deadline = self.server.next_deadline()
        if deadline is not None:  # a faithful replay: the answer comes when it came
            assert self.session.next_event() is None
            self.tick(deadline)
        [ready] = self.events()
        assert isinstance(ready, Ready), ready
        return ready


def _value(event: Event) -> Any:
    assert isinstance(event, Completed), event
    return event.value


# -- a recorded session replays -------------------------------------------------------------


def test_handshake_list_and_call_replay_with_the_ids_remapped() -> None:
    transcript = record(
        *handshake(10), *tools_list(11),
        ("send", call(12, {"a": 1, "b": 2}), 2.0),
        ("recv", rpc(method="notifications/progress",
                     params={"progressToken": 12, "progress": 1, "total": 2}), 2.1),
        ("recv", text_result(12, "3"), 2.2),
        ("closed", 3.0),
    )
    run = Run(transcript)
    ready = run.ready()
    assert ready.server_info.name == SERVER_INFO["name"] and ready.protocol_version == VERSION
    listed = run.session.list_tools(now=run.now)
    run.pump()
    [done] = run.events()
    assert isinstance(done, Completed) and done.handle == listed
    assert [t.name for t in done.value] == ["add"]
    handle = run.session.call_tool("add", {"a": 1, "b": 2}, now=run.now)
    run.pump()
    progress, result = run.events()
    assert isinstance(progress, Progress) and progress.handle == handle
    assert (progress.progress, progress.total) == (1, 2)
    assert isinstance(result, Completed) and result.handle == handle
    assert result.value.content[0].text == "3"
    assert [m.get("id") for m in run.to_server] == [1, None, 2, 3]  # the live ids, not 10..12
    run.server.check_complete()
    assert run.server.unmatched == [] and run.server.divergence is None
    assert run.server.exit_code is None
    run.server.receive_eof(run.now)
    assert run.server.exit_code == 0


def test_writer_made_transcript_replays_through_read() -> None:
    """The same path a recorder takes: writer lines, read back, replayed."""
    run = Run(record(*handshake(500)))
    run.ready()
    run.server.check_complete()


def test_concurrent_requests_recorded_together_match_in_another_order() -> None:
    transcript = record(
        *handshake(10),
        ("send", call(20, {"x": "A"}), 2.0),
        ("send", call(21, {"x": "B"}), 2.0),
        ("recv", text_result(21, "B"), 2.5),
        ("recv", text_result(20, "A"), 2.6),
    )
    run = Run(transcript)
    run.ready()
    b = run.session.call_tool("add", {"x": "B"}, now=run.now)  # B first this time
    a = run.session.call_tool("add", {"x": "A"}, now=run.now)
    run.pump()
    done = {e.handle: e for e in run.events() if isinstance(e, Completed)}
    assert done[a].value.content[0].text == "A" and done[b].value.content[0].text == "B"
    run.server.check_complete()


def test_a_later_request_waits_for_the_response_before_it() -> None:
    """Only requests recorded together are interchangeable: one sent after a response was
    received in the recording may not overtake the request before it."""
    transcript = record(*handshake(10), ("send", call(20, {"x": "A"}), 2.0),
                        ("recv", text_result(20, "A"), 2.5),
                        ("send", call(21, {"x": "B"}), 3.0),
                        ("recv", text_result(21, "B"), 3.5))
    run = Run(transcript)
    run.ready()
    run.session.call_tool("add", {"x": "B"}, now=run.now)
    run.pump()
    error = run.server.divergence
    assert error is not None and error.expected == [call(20, {"x": "A"})]


def test_listen_stream_ids_are_remapped() -> None:
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    transcript = record(
        ("send", rpc(id=50, method="server/discover", params={"_meta": envelope}), 0.1),
        ("recv", rpc(id=50, result=discover_result()), 0.2),
        ("ready", "modern", "2026-07-28", 0.2),
        ("send", rpc(id=51, method="subscriptions/listen", params={
            "notifications": {"toolsListChanged": True, "promptsListChanged": True,
                              "resourcesListChanged": True}, "_meta": envelope}), 0.3),
        ("recv", rpc(method="notifications/subscriptions/acknowledged", params={
            "_meta": {SUBSCRIPTION_ID_KEY: 51},
            "notifications": {"toolsListChanged": True, "promptsListChanged": True,
                              "resourcesListChanged": True}}), 0.4),
        ("recv", rpc(method="notifications/tools/list_changed",
                     params={"_meta": {SUBSCRIPTION_ID_KEY: 51}}), 0.5),
    )
    run = Run(transcript)
    run.session.start(now=run.now)
    run.pump()
    events = run.events()
    assert isinstance(events[0], Ready) and events[0].era == "modern"
    assert ListChanged(kind="tools") in events
    listen = next(m for m in run.to_server if m.get("method") == "subscriptions/listen")
    assert listen["id"] != 51
    run.server.check_complete()


def test_a_client_cancellation_matches_with_its_live_request_id() -> None:
    transcript = record(
        *handshake(10), ("send", call(30, {"slow": True}), 2.0),
        ("send", rpc(method="notifications/cancelled",
                     params={"requestId": 30, "reason": "enough"}), 2.5))
    run = Run(transcript)
    run.ready()
    handle = run.session.call_tool("add", {"slow": True}, now=run.now)
    run.pump()
    run.session.cancel(handle, "enough")
    run.pump()
    [failed] = run.events()
    assert isinstance(failed, Failed) and isinstance(failed.error, RequestCancelled)
    run.server.check_complete()


# -- divergence -------------------------------------------------------------------------------


def test_a_changed_argument_diverges_showing_expected_and_actual() -> None:
    transcript = record(*handshake(10), ("send", call(12, {"a": 1}), 2.0),
                        ("recv", text_result(12, "1"), 2.1))
    run = Run(transcript)
    run.ready()
    run.session.call_tool("add", {"a": 2}, now=run.now)
    run.pump()  # never raises: the divergence is kept
    error = run.server.divergence
    assert isinstance(error, ReplayDivergence) and isinstance(error, MCPError)
    assert error.expected == [call(12, {"a": 1})]
    assert error.actual["params"]["arguments"] == {"a": 2}
    assert error.line == 6
    text = str(error)
    assert '"arguments":{"a":1}' in text and '"arguments":{"a":2}' in text
    assert text.index("expected") < text.index("actual")
    assert run.server.exit_code == 1 and text.encode() in run.stderr
    run.server.receive_data(b'{"jsonrpc":"2.0","method":"x"}\n', run.now)  # ignored now
    assert run.server.divergence is error and run.server.data_to_send() == b""
    with pytest.raises(ReplayDivergence) as info:
        run.server.check_complete()
    assert info.value is error


def test_a_missing_call_is_named_by_check_complete() -> None:
    transcript = record(*handshake(10), *tools_list(11),
                        ("send", call(12, {"a": 1}), 2.0), ("recv", text_result(12, "1"), 2.1))
    run = Run(transcript)
    run.ready()
    run.session.list_tools(now=run.now)
    run.pump()
    assert [e.line for e in run.server.unmatched] == [8]
    with pytest.raises(ReplayDivergence) as info:
        run.server.check_complete()
    error = info.value
    assert error.expected == [call(12, {"a": 1})] and error.actual == {} and error.line == 8
    assert "never sent" in str(error) and '"name":"add"' in str(error)
    assert "(nothing)" in str(error)


def test_an_extra_call_diverges() -> None:
    run = Run(record(*handshake(10), *tools_list(11)))
    run.ready()
    run.session.list_tools(now=run.now)
    run.pump()
    run.session.list_tools(now=run.now)
    run.pump()
    error = run.server.divergence
    assert error is not None and error.expected == [] and error.line is None
    assert error.actual["method"] == "tools/list"
    assert "expected: (nothing)" in str(error) and '"method":"tools/list"' in str(error)


def test_divergence_text_cuts_long_messages() -> None:
    big = {"a": "x" * 5000}
    run = Run(record(*handshake(10), ("send", call(12, big), 2.0)))
    run.ready()
    run.session.call_tool("add", {"a": "y" * 5000}, now=run.now)
    run.pump()
    error = run.server.divergence
    assert error is not None
    for row in str(error).splitlines()[1:]:
        assert len(row) < MAX_SHOWN_MESSAGE + 100
    assert error.expected[0]["params"]["arguments"] == big  # the attribute is whole


@pytest.mark.parametrize(("data", "actual_key"), [
    (b"not json\n", "unreadable"), (b"[1]\n", "unreadable"), (b"\xff\n", "unreadable"),
    (b"7\n", "unreadable"), (b'{"jsonrpc":"2.0","id":1,"method":"' + b"x" * 2000 + b'"}\n',
                             "oversize")])
def test_bad_client_bytes_diverge_without_raising(data: bytes, actual_key: str) -> None:
    server = ReplayServer(record(*handshake(10)), limits=Limits(max_message_size=1000))
    server.receive_data(data, 1.0)
    assert server.divergence is not None and actual_key in server.divergence.actual
    assert server.exit_code == 1 and server.stderr_to_send()


def test_the_relax_hook_accepts_what_the_rules_refuse() -> None:
    transcript = record(*handshake(10, version="2025-06-18"))
    strict = Run(transcript)
    strict.session.initialize(now=strict.now)
    strict.pump()
    assert strict.server.divergence is not None  # the live client asks for 2025-11-25

    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def relax(recorded: dict[str, Any], actual: dict[str, Any]) -> bool:
        seen.append((recorded, actual))
        return recorded.get("method") == actual.get("method") == "initialize"

    run = Run(transcript, relax=relax)
    assert run.ready().protocol_version == "2025-06-18"
    assert [r["method"] for r, _ in seen] == ["initialize"]  # asked only when refused
    run.server.check_complete()


def test_a_truncated_recording_refuses_what_came_after_the_cut() -> None:
    base = record(*handshake(10))
    lines = [json.dumps({"mcp_proto_transcript": 1, "transport": "stdio", "target": "s",
                         "client": {}})]
    for entry in base.entries:
        if entry.kind in ("send", "recv"):
            lines.append(json.dumps({"t": entry.t, "dir": entry.kind, "msg": entry.data}))
    lines.append(json.dumps({"t": 0.5, "truncated": {"bytes": 1234}}))
    run = Run(read_transcript("\n".join(lines) + "\n"))
    run.ready()
    run.session.list_tools(now=run.now)
    run.pump()
    error = run.server.divergence
    assert error is not None and "the recording was cut here" in str(error)


# -- timing -----------------------------------------------------------------------------------


def _timed() -> Transcript:
    return record(*handshake(10), ("send", rpc(id=11, method="tools/list"), 1.0),
                  ("recv", rpc(id=11, result={"tools": []}), 3.0))


def test_compressed_replay_emits_at_once() -> None:
    run = Run(_timed())
    run.ready()
    run.session.list_tools(now=run.now)
    run.pump()
    assert isinstance(run.events()[0], Completed)
    assert run.server.next_deadline() is None


@pytest.mark.parametrize(("speed", "delay"), [(1.0, 2.0), (2.0, 1.0), (0.5, 4.0)])
def test_faithful_replay_waits_as_recorded(speed: float, delay: float) -> None:
    run = Run(_timed(), speed=speed)
    run.ready()  # the handshake answer came 0.1 / speed after the initialize
    run.session.list_tools(now=run.now)
    run.pump()
    assert run.events() == []
    deadline = run.server.next_deadline()
    assert deadline is not None and deadline == pytest.approx(run.now + delay)
    run.tick(run.now + delay * 0.9)
    assert run.events() == []
    run.tick(deadline)
    [done] = run.events()
    assert isinstance(done, Completed) and done.value == []
    assert run.server.next_deadline() is None


def test_faithful_output_before_any_send_counts_from_the_first_clock() -> None:
    run = Run(record(("stderr", "starting", 0.5), *handshake(10)), speed=1.0)
    assert run.server.next_deadline() == 0.0  # released already: call handle_timeout now
    run.server.handle_timeout(100.0)
    assert run.server.next_deadline() == pytest.approx(100.5)
    assert run.server.stderr_to_send() == b""
    run.server.handle_timeout(100.5)
    assert run.server.stderr_to_send() == b"starting\n"


def test_speed_must_be_positive() -> None:
    for speed in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            ReplayServer(record(), speed=speed)


# -- stderr and exit --------------------------------------------------------------------------


def test_a_recorded_exit_sets_the_code_and_stderr() -> None:
    run = Run(record(*handshake(10), ("send", rpc(id=11, method="tools/list"), 1.0),
                     ("stderr", "Traceback: boom", 1.1), ("exit", 3, "Traceback: boom", 1.2)))
    run.ready()
    assert run.server.exit_code is None
    run.session.list_tools(now=run.now)
    run.pump()
    assert run.server.exit_code == 3
    assert run.stderr == b"Traceback: boom\n"  # the tail is not repeated
    run.server.receive_eof(run.now)
    assert run.server.exit_code == 3


def test_an_exit_tail_goes_to_stderr_when_no_line_was_recorded() -> None:
    server = ReplayServer(record(("exit", None, "fatal: no config", 0.2)))
    assert server.exit_code == 0 and server.stderr_to_send() == b"fatal: no config\n"


def test_what_follows_the_clients_close_waits_for_eof() -> None:
    run = Run(record(*handshake(10), ("closed", 1.0), ("stderr", "bye", 1.1),
                     ("exit", 2, "", 1.2)))
    run.ready()
    assert run.server.exit_code is None and run.stderr == b""
    run.server.receive_eof(run.now)
    assert run.server.exit_code == 2 and run.server.stderr_to_send() == b"bye\n"


def test_eof_without_a_recorded_exit_ends_with_zero() -> None:
    server = ReplayServer(record(*handshake(10)))
    server.receive_eof(1.0)
    assert server.exit_code == 0 and server.divergence is None


# -- server requests --------------------------------------------------------------------------


SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10}
ANSWER = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}


def test_a_server_request_and_the_clients_answer_match_by_id() -> None:
    """The answer arrives before a request recorded earlier than it: the answer to an
    emitted server request is always eligible."""
    transcript = record(
        *handshake(10, caps={"sampling": {}}),
        ("send", call(12, {"q": 1}), 2.0),
        ("recv", rpc(id="s-1", method="sampling/createMessage", params=SAMPLING), 2.1),
        ("send", rpc(id=13, method="tools/list"), 2.2),
        ("recv", rpc(id=13, result={"tools": []}), 2.3),
        ("send", rpc(id="s-1", result=ANSWER), 2.4),
        ("recv", text_result(12, "sampled"), 2.5),
    )
    run = Run(transcript, capabilities={"sampling": {}})
    run.ready()
    handle = run.session.call_tool("add", {"q": 1}, now=run.now)
    run.pump()
    [ask] = run.events()
    assert isinstance(ask, ServerRequest) and ask.request_id == "s-1"
    assert ask.method == "sampling/createMessage"
    run.session.respond(ask.request_id, ANSWER, now=run.now)  # before the tools/list
    run.pump()
    assert run.server.divergence is None
    run.session.list_tools(now=run.now)
    run.pump()
    done = {e.handle: e for e in run.events() if isinstance(e, Completed)}
    assert _value(done[handle]).content[0].text == "sampled"
    run.server.check_complete()


def test_a_different_answer_diverges() -> None:
    transcript = record(
        *handshake(10, caps={"sampling": {}}), ("send", call(12, {"q": 1}), 2.0),
        ("recv", rpc(id="s-1", method="sampling/createMessage", params=SAMPLING), 2.1),
        ("send", rpc(id="s-1", result=ANSWER), 2.4))
    run = Run(transcript, capabilities={"sampling": {}})
    run.ready()
    run.session.call_tool("add", {"q": 1}, now=run.now)
    run.pump()
    [ask] = run.events()
    run.session.respond(ask.request_id, {**ANSWER, "model": "other"}, now=run.now)  # type: ignore[union-attr]
    run.pump()
    error = run.server.divergence
    assert error is not None and error.expected == [rpc(id="s-1", result=ANSWER)]
