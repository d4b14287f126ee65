"""The blocking binding's waiting path under races, each scenario repeated.

A scripted stdio server (written below, run as a real child process) makes the race windows:
an answer that lands just as its call times out, a server request that arrives while the only
caller waits, a ``close()`` from another thread, a server that dies half-way through a line,
answers given out of order to many threads.  Each scenario runs 20 to 40 times so that an
ordering bug shows; every blocking call has a timeout and every loop a fixed count, and the
``no_leaks`` fixture checks that no server process or binding thread survives a test.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Background, children_of, proc_state, run_threads
from mcp_proto_io._sync import _stdio
from mcp_proto_io.threads import Client, connect_stdio

from mcp_proto import (
    ConnectionClosed,
    ConnectionLost,
    LocalProtocolError,
    RequestTimeout,
    Root,
    ServerExited,
)

pytestmark = pytest.mark.usefixtures("no_leaks")

T = 10.0  # default per-call deadline of these tests, seconds
BUDGET = 25.0  # longest a whole test may take, seconds (a slow machine still fits)

#: A handshake-era NDJSON stdio server; every tool runs on its own (daemon) thread.
#:
#: - ``echo {text}`` answers ``text`` at once; ``delay_echo {text, delay}`` after ``delay`` s.
#: - ``ask {kind, text, delay}`` waits ``delay`` s, sends ``roots/list``,
#:   ``sampling/createMessage`` or ``elicitation/create`` (``kind``) about ``text``, and
#:   answers with what the client's reply says (an ``isError`` result for an error reply).
#: - ``hold {text}`` writes ``holding <text>`` to stderr and never answers.
#: - ``die_half {mode}`` writes the first half of its answer's line (no newline) and
#:   ``dying half-way`` to stderr, in the order ``mode`` says, then exits with status 7.
#: - ``gather {text}`` is held until four are pending or 10 ms passed, and the held calls
#:   are answered in reverse order of arrival; ``stats`` answers the sizes of those batches.
#: - ``cancelled`` answers the ``text`` of every call the client cancelled, in order;
#:   ``seen`` the name of every tool this process was asked to call, in order.
#:
#: - ``progress {text, count, pause}`` sends ``count`` progress notifications (to the call's
#:   progress token) at once, then answers ``text`` ``pause`` s later (default 0).
#: - ``later {text, delay}`` answers ``text`` at once, and ``delay`` s later logs ``text``
#:   (a ``notifications/message`` that comes while no call waits).
#:
#: ``server/discover`` gets -32601 (the client falls back to initialize); stdin EOF exits 0.
SERVER = r'''
import json, os, sys, threading, time

out_lock = threading.Lock()
state_lock = threading.Lock()
texts = {}        # request id -> the call's text
cancelled = []    # texts of the calls the client cancelled
seen = []         # names of the tools called
replies = {}      # id of a server request -> [event, reply]
counter = [0]
held = []         # (request id, text) of the gather calls waiting
held_cond = threading.Condition(state_lock)
batches = []


def write(data):
    with out_lock:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]


def encode(message):
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def send(message):
    write(encode(message))


def log(text):
    os.write(2, (text + "\n").encode())


def text_result(request_id, text, is_error=False):
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}


TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in (
    "echo", "delay_echo", "ask", "hold", "die_half", "gather", "stats", "cancelled",
    "seen", "progress", "progress_whole", "later")]


def ask_client(kind, text):
    with state_lock:
        counter[0] += 1
        request_id = f"{kind}-{counter[0]}"
        slot = replies[request_id] = [threading.Event(), None]
    if kind == "roots":
        request = {"method": "roots/list"}
    elif kind == "sampling":
        request = {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": 10}}
    else:
        request = {"method": "elicitation/create", "params": {
            "message": text, "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}},
                "required": ["name"]}}}
    send({"jsonrpc": "2.0", "id": request_id, **request})
    if not slot[0].wait(30):
        return None, "no reply"
    reply = slot[1]
    if "error" in reply:
        return None, "error reply: " + json.dumps(reply["error"])
    result = reply["result"]
    if kind == "roots":
        return " ".join(r["uri"] for r in result["roots"]), None
    if kind == "sampling":
        return result["content"]["text"], None
    return result["action"] + ":" + result["content"]["name"], None


def die_half(request_id, mode):
    line = encode(text_result(request_id, "never whole"))
    half = line[: len(line) // 2]
    if mode == "late":  # a long call first: the client's reader thread naps meanwhile
        time.sleep(0.6)
    if mode == "stderr-first":
        log("dying half-way")
        write(half)
    else:
        write(half)
        if mode == "pause":
            time.sleep(0.02)
        log("dying half-way")
    os._exit(7)


def gatherer():
    with held_cond:
        while True:
            while not held:
                held_cond.wait()
            first = time.monotonic()
            while len(held) < 4 and time.monotonic() - first < 0.01:
                held_cond.wait(0.01 - (time.monotonic() - first))
            batch = held[:]
            held.clear()
            batches.append(len(batch))
            write(b"".join(encode(text_result(i, t)) for i, t in reversed(batch)))


def call(request_id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        send(text_result(request_id, args["text"]))
    elif name == "delay_echo":
        time.sleep(args["delay"])
        send(text_result(request_id, args["text"]))
    elif name == "ask":
        time.sleep(args["delay"])
        text, error = ask_client(args["kind"], args["text"])
        send(text_result(request_id, error or text, is_error=error is not None))
    elif name == "hold":
        log("holding " + args["text"])
    elif name == "progress":
        token = (params.get("_meta") or {}).get("progressToken")
        write(b"".join(encode({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": i + 1}})
                       for i in range(args["count"])))  # one write: read together
        time.sleep(args.get("pause", 0))
        send(text_result(request_id, args["text"]))
    elif name == "progress_whole":  # the progress and the answer in one write
        token = (params.get("_meta") or {}).get("progressToken")
        write(encode({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": 1}})
              + encode(text_result(request_id, args["text"])))
    elif name == "later":
        send(text_result(request_id, args["text"]))
        time.sleep(args["delay"])
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": args["text"]}})
    elif name == "die_half":
        die_half(request_id, args["mode"])
    elif name == "gather":
        with held_cond:
            held.append((request_id, args["text"]))
            held_cond.notify()
    elif name == "stats":
        with state_lock:
            send(text_result(request_id, json.dumps(batches)))
    elif name == "cancelled":
        with state_lock:
            send(text_result(request_id, json.dumps(cancelled)))
    elif name == "seen":
        with state_lock:
            send(text_result(request_id, json.dumps(seen)))
    else:
        send({"jsonrpc": "2.0", "id": request_id,
              "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def main():
    threading.Thread(target=gatherer, daemon=True).start()
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            os._exit(0)
        message = json.loads(line)
        method = message.get("method")
        if method is None:  # a reply to one of our requests
            with state_lock:
                slot = replies.pop(message.get("id"), None)
            if slot is not None:
                slot[1] = message
                slot[0].set()
        elif "id" not in message:
            if method == "notifications/cancelled":
                with state_lock:
                    cancelled.append(texts.get(message["params"]["requestId"]))
        elif method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "race-server", "version": "1.0.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": TOOLS}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif method == "tools/call":
            params = message.get("params") or {}
            with state_lock:
                texts[message["id"]] = (params.get("arguments") or {}).get("text")
                seen.append(params.get("name"))
            threading.Thread(target=call, args=(message["id"], params), daemon=True).start()
        else:
            send({"jsonrpc": "2.0", "id": message["id"],
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})


main()
'''


@pytest.fixture
def race_server(tmp_path: Path) -> list[str]:
    """argv of the scripted race server."""
    script = tmp_path / "race_server.py"
    script.write_text(SERVER, encoding="utf-8")
    return [sys.executable, str(script)]


def client_for(command: list[str], **kwargs: Any) -> Client:
    kwargs.setdefault("timeout", T)
    return connect_stdio(command, **kwargs)


def within_budget(start: float, rep: int) -> None:
    assert time.monotonic() - start < BUDGET, f"over the time budget at repetition {rep}"


def new_threads(before: set[threading.Thread]) -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t not in before and t.is_alive())


def no_new_threads(before: set[threading.Thread], timeout: float = 5.0) -> list[str]:
    """Wait (bounded) for every thread started since ``before`` to end; the ones left."""
    deadline = time.monotonic() + timeout
    for t in list(threading.enumerate()):
        if t not in before and t is not threading.current_thread():
            t.join(max(0.0, deadline - time.monotonic()))
    return new_threads(before)


# -- 1. a timeout racing its answer ------------------------------------------------------------

RACE_TIMEOUT = 0.15
#: The server's delay minus the call's timeout, seconds: 28 steps of 0.1 ms from -2.2 ms to
#: +0.5 ms, where the answer and the deadline meet on loopback pipes (measured: both outcomes
#: occur there), and two either side 20 and 30 ms away, where the outcome is certain.
OFFSETS = [-0.03, -0.02] + [(k - 22) * 0.0001 for k in range(28)] + [0.02, 0.03]


def test_timeout_racing_the_answer(race_server: list[str]) -> None:
    """L-09 / C-01 / C-03: an answer landing just as its call's total deadline passes.  The
    call returns its result or raises RequestTimeout (nothing else, never late); a timeout
    tells the server to cancel, an answered call does not; the late answer is dropped, and
    the next call (sent while the late answer may still be in flight) gets its own."""
    start = time.monotonic()
    timed_out: list[str] = []
    answered: list[str] = []
    with client_for(race_server) as client:
        for rep, offset in enumerate(OFFSETS):
            within_budget(start, rep)
            tag = f"race-{rep}"
            t0 = time.monotonic()
            try:
                result = client.call_tool(
                    "delay_echo", {"text": tag, "delay": RACE_TIMEOUT + offset},
                    timeout=RACE_TIMEOUT)
            except RequestTimeout as exc:
                assert (exc.method, exc.kind, exc.timeout) == (
                    "tools/call", "total", RACE_TIMEOUT), rep
                timed_out.append(tag)
            else:
                assert (result.text, result.is_error) == (tag, False), rep
                answered.append(tag)
            elapsed = time.monotonic() - t0
            assert elapsed < RACE_TIMEOUT + 2.0, f"repetition {rep} took {elapsed:.3f} s"
            after = client.call_tool("delay_echo", {"text": f"next-{rep}", "delay": 0})
            assert (after.text, after.is_error) == (f"next-{rep}", False), rep
        cancelled = json.loads(client.call_tool("cancelled").text)
    # Every timed-out call was cancelled, once, and no answered one was.
    assert cancelled == timed_out, (answered, timed_out)
    # Both outcomes are real: far from the race (20 ms or more either side), some early
    # answers were returned and some late ones timed out.
    early = {f"race-{rep}" for rep, offset in enumerate(OFFSETS) if offset <= -0.02}
    late = {f"race-{rep}" for rep, offset in enumerate(OFFSETS) if offset >= 0.02}
    assert early & set(answered), (answered, timed_out)
    assert late & set(timed_out), (answered, timed_out)


# -- 2. a server request while the only caller waits -----------------------------------------

ASK_REPS = 20


@pytest.mark.parametrize("kind", ["roots", "sampling", "elicitation"])
def test_server_request_while_the_only_caller_waits(race_server: list[str], kind: str) -> None:
    """F-06: the server asks the client (roots/list, sampling/createMessage,
    elicitation/create) while handling tools/call and answers the call only with the reply.
    The only caller is blocked waiting; the reader must serve the request meanwhile.  The
    server's delay before asking varies from 0 to 6 ms, so the request arrives before, while
    and after the caller settles into its wait."""
    current = [""]
    handled: list[str] = []

    def roots() -> list[Root]:
        handled.append(current[0])
        return [Root(f"file:///tmp/{current[0]}")]

    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        text = params["messages"][0]["content"]["text"]
        handled.append(text)
        return {"role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": f"sampled {text}"}}

    def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        handled.append(params["message"])
        return {"action": "accept", "content": {"name": f"name-{params['message']}"}}

    handlers: dict[str, dict[str, Any]] = {
        "roots": {"roots": roots}, "sampling": {"on_sampling": on_sampling},
        "elicitation": {"on_elicitation": on_elicitation}}
    handler = handlers[kind]
    expected = {"roots": "file:///tmp/{}", "sampling": "sampled {}",
                "elicitation": "accept:name-{}"}[kind]
    start = time.monotonic()
    with client_for(race_server, **handler) as client:
        for rep in range(ASK_REPS):
            within_budget(start, rep)
            tag = f"{kind}-{rep}"
            current[0] = tag
            result = client.call_tool(
                "ask", {"kind": kind, "text": tag, "delay": (rep % 4) * 0.002})
            assert (result.text, result.is_error) == (expected.format(tag), False), rep
    assert handled == [f"{kind}-{rep}" for rep in range(ASK_REPS)]


# -- 3. close() while a caller waits -------------------------------------------------------------

CLOSE_REPS = 12


def child_pids() -> set[int]:
    return {pid for pid, _, _ in children_of(os.getpid())}


@pytest.mark.parametrize("when", ["server-has-it", "at-once", "while-connecting"])
def test_close_from_another_thread_while_a_caller_waits(race_server: list[str],
                                                        when: str) -> None:
    """L-10: ``close()`` from another thread while a caller waits on a call the server never
    answers.  ``server-has-it`` closes as soon as the server reports (on stderr) that it read
    the call; ``at-once`` right after the caller's thread starts, so the call may be being
    built, written or waited on; ``while-connecting`` likewise, but the call is the first one
    and starts the server itself (close may land during the handshake).  The caller gets
    plain ConnectionClosed (the caller closed the client: call_tool's documented error)
    within 5 s, every server process is stopped and reaped, and no thread is left."""
    start = time.monotonic()
    for rep in range(CLOSE_REPS):
        within_budget(start, rep)
        before = set(threading.enumerate())
        children = child_pids()
        tag = f"close-{rep}"
        read = threading.Event()

        def on_stderr(line: str, tag: str = tag, read: threading.Event = read) -> None:
            if line.strip() == f"holding {tag}":
                read.set()

        client = client_for(race_server, on_stderr=on_stderr)
        try:
            if when != "while-connecting":
                client.connect()
                assert client.pid is not None
            pending = Background(functools.partial(client.call_tool, "hold", {"text": tag}))
            if when == "server-has-it":
                assert read.wait(T), f"the server never read the call ({rep})"
        finally:
            t0 = time.monotonic()
            client.close()
        closed_in = time.monotonic() - t0
        _, error = pending.outcome()
        assert type(error) is ConnectionClosed, (rep, repr(error))
        woke = pending.finished_at - t0
        assert woke < 5.0, f"the caller woke {woke:.3f} s after close ({rep})"
        assert closed_in < 5.0, f"close() took {closed_in:.3f} s ({rep})"
        left = child_pids() - children
        assert left == set(), f"server processes left after close ({rep}): {left}"
        threads = no_new_threads(before)
        assert threads == [], f"threads left after close ({rep}): {threads}"
        with pytest.raises(ConnectionClosed):
            client.call_tool("echo", {"text": "after close"})


# -- 4. the server dies half-way through a line --------------------------------------------------

DIE_REPS = 12


@pytest.mark.parametrize("mode", ["stderr-first", "half-first", "pause"])
def test_server_dies_mid_line_then_restarts(race_server: list[str], mode: str) -> None:
    """M-06 / X-03: the server writes half of its answer's line and exits (status 7), its last
    stderr line written before or after the half line.  The waiting call raises
    ServerExited with the exit code and the stderr tail, never a result parsed from half a
    line; the next call starts a new server (the failed call is not replayed) and works."""
    start = time.monotonic()
    with client_for(race_server) as client:
        for rep in range(DIE_REPS):
            within_budget(start, rep)
            pid = client.pid
            assert pid is not None
            with pytest.raises(ServerExited) as info:
                client.call_tool("die_half", {"mode": mode})
            assert info.value.exit_code == 7, rep
            assert info.value.stderr_tail.rstrip("\n").endswith("dying half-way"), (
                rep, info.value.stderr_tail)
            assert proc_state(pid) is None, f"server {pid} not reaped ({rep})"
            result = client.call_tool("echo", {"text": f"again-{rep}"})
            assert (result.text, result.is_error) == (f"again-{rep}", False), rep
            assert client.pid not in (None, pid), rep
        # The failed calls were not replayed: this server saw only the last echo.
        assert json.loads(client.call_tool("seen").text) == ["echo", "seen"]


def _wake_ups(native_id: int | None) -> int:
    """How often the thread ``native_id`` of this process has slept and woken (Linux)."""
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


#: A call long enough for the reader thread to nap (it naps once it saw the same caller hold
#: the role at two looks READER_GRACE apart; the race server's "late" death comes as late).
LONG_CALL = 0.62
#: The reader's nap in the tests that need one: far longer than the call, so an unwoken
#: reader would still nap long after it, wherever its naps fell.
TEST_NAP = 5.0
#: How soon the reader must be up after the caller let go (it is woken, not left to nap).
WOKEN_WITHIN = 0.5


def test_a_server_dying_in_a_long_call_is_told_at_once(race_server: list[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller that reads EOF in a long call (the reader thread napping meanwhile) wakes
    the reader, which ends the session: ServerExited comes at once, not after the nap nor
    the service thread's next look at the process (both made long here)."""
    monkeypatch.setattr(_stdio, "READER_NAP", TEST_NAP)
    monkeypatch.setattr(_stdio, "PROCESS_POLL_INTERVAL", TEST_NAP)
    with client_for(race_server) as client:
        client.call_tool("echo", {"text": "warm"})
        t0 = time.monotonic()
        with pytest.raises(ServerExited) as info:
            client.call_tool("die_half", {"mode": "late"})
        took = time.monotonic() - t0
        assert info.value.exit_code == 7
        assert took < LONG_CALL + WOKEN_WITHIN, took


# -- 5. many threads, answers out of order -----------------------------------------------------

THREADS = 8
CALLS = 20
ROUNDS = 3


def gather_round(client: Client, round_: int) -> None:
    """THREADS threads x CALLS ``gather`` calls at once: each gets its own answers, in order."""
    def work(i: int) -> list[str]:
        return [client.call_tool("gather", {"text": f"r{round_}-t{i}-{k}"}).text
                for k in range(CALLS)]

    results = run_threads(work, THREADS, timeout=T * 2)
    for i in range(THREADS):
        assert results[i] == [f"r{round_}-t{i}-{k}" for k in range(CALLS)], i


def test_many_threads_answers_out_of_order(race_server: list[str]) -> None:
    """J-03: 8 threads x 20 calls at once (three rounds), the server holding calls and
    answering each batch in reverse order of arrival: every call gets its own answer."""
    with client_for(race_server) as client:
        for round_ in range(ROUNDS):
            gather_round(client, round_)
        batches = json.loads(client.call_tool("stats").text)
    assert sum(batches) == ROUNDS * THREADS * CALLS
    # The premise: answers did come out of order (batches of more than one call).
    assert max(batches) > 1, batches


# -- 6. who reads: the caller waiting alone, the reader thread otherwise ---------------------

LEAD_REPS = 20


def test_a_caller_waiting_alone_reads_its_own_answer(race_server: list[str]) -> None:
    """Leader/follower: a call's progress callbacks run on the thread that reads, and a caller
    that waits while nobody else reads is that thread (no hand-off to the reader thread),
    from the main thread and from another one alike."""
    with client_for(race_server) as client:

        def calls(tag: str) -> list[set[int]]:
            seen: list[set[int]] = []
            for rep in range(LEAD_REPS):
                idents: set[int] = set()
                result = client.call_tool(
                    "progress", {"text": f"{tag}-{rep}", "count": 3},
                    on_progress=lambda _e, idents=idents: idents.add(threading.get_ident()))
                assert (result.text, result.is_error) == (f"{tag}-{rep}", False)
                seen.append(idents)
            return seen

        me = threading.get_ident()
        assert calls("here") == [{me}] * LEAD_REPS
        other = run_threads(lambda _i: (threading.get_ident(), calls("there")), 1, timeout=T)
        ident, seen = other[0]
        assert seen == [{ident}] * LEAD_REPS


def test_the_role_given_up_with_the_answer_is_free_again(race_server: list[str]) -> None:
    """A lone caller whose read brought its own answer and nothing else gives the role up in that
    read's lock round (``_release_role`` does not run on its thread, but for a call slow
    enough for the reader to nap; the role is free when it returns); a read that also brings
    a callback keeps the role while the callback runs (on the caller's thread, a call from
    it refused); and however two threads calling back to back interleave, a read that left
    calls waiting left someone reading or the hand-off flagged, every call gets its own
    answer and the role is free afterwards."""
    me = threading.get_ident()
    with client_for(race_server) as client:
        client.call_tool("echo", {"text": "warm"})
        conn = client._conn
        assert conn is not None
        released: list[int] = []
        release, take = conn._release_role, conn._take
        stranded: list[str] = []

        def counted_release() -> None:
            released.append(threading.get_ident())
            release()

        def checked_take(data: bytes, leader: Any = None) -> float | None:
            deadline = take(data, leader)
            with conn.lock:
                if conn.waiters and not (conn.reading or conn.handoff or conn.closed):
                    stranded.append(f"{len(conn.waiters)} calls wait and nobody reads")
            return deadline

        conn._release_role = counted_release  # type: ignore[method-assign]
        conn._take = checked_take  # type: ignore[method-assign]
        for rep in range(LEAD_REPS):
            assert client.call_tool("echo", {"text": f"plain-{rep}"}).text == f"plain-{rep}"
            assert (conn.reading, conn.callback_ident) == (False, None), rep
        # (A call slow enough for the reader thread to nap, 20 ms under a loaded machine,
        # gives the role up the usual way, which wakes it: a few may.)
        assert released.count(me) <= LEAD_REPS // 4, released

        seen: list[tuple[bool, bool, str]] = []

        def on_progress(_event: object) -> None:
            try:
                client.call_tool("echo", {"text": "nested"})
                nested = "allowed"
            except LocalProtocolError:
                nested = "refused"
            seen.append((conn.reading, conn.callback_ident == threading.get_ident(), nested))

        for rep in range(LEAD_REPS):
            result = client.call_tool("progress_whole", {"text": f"both-{rep}"},
                                      on_progress=on_progress)
            assert result.text == f"both-{rep}"
        assert seen == [(True, True, "refused")] * LEAD_REPS

        def work(i: int) -> list[str]:
            return [client.call_tool("echo", {"text": f"t{i}-{k}"}).text
                    for k in range(CALLS * 5)]

        for rep in range(ROUNDS):
            results = run_threads(work, 2, timeout=T)
            assert results == {i: [f"t{i}-{k}" for k in range(CALLS * 5)] for i in range(2)}
            assert client.call_tool("echo", {"text": f"alone-{rep}"}).text == f"alone-{rep}"
            assert (conn.reading, conn.callback_ident) == (False, None)
        assert stranded == []


def test_the_reader_hands_answers_on_both_ways(race_server: list[str]) -> None:
    """While one caller reads, another thread's answer is handed on to it (the reader need not
    be the one it answers); when the reading caller has its answer first, the reader thread
    takes over for the call still waiting."""
    start = time.monotonic()
    with client_for(race_server) as client:
        for rep in range(10):
            within_budget(start, rep)
            finished: dict[str, float] = {}

            def work(i: int, rep: int = rep, finished: dict[str, float] = finished) -> str:
                time.sleep(0.02 * i)  # 0 leads, 1 follows
                delay = (0.25, 0.05) if rep % 2 else (0.05, 0.25)
                text = client.call_tool("delay_echo",
                                        {"text": f"{rep}-{i}", "delay": delay[i]}).text
                finished[text] = time.monotonic()
                return text

            t0 = time.monotonic()
            assert run_threads(work, 2, timeout=T) == {0: f"{rep}-0", 1: f"{rep}-1"}
            # Each got its answer when it came, not when the other's did.
            early, late = (f"{rep}-1", f"{rep}-0") if rep % 2 else (f"{rep}-0", f"{rep}-1")
            assert finished[early] - t0 < 0.2, (rep, finished[early] - t0)
            assert finished[late] >= finished[early]


def test_what_comes_while_nobody_calls_is_read(race_server: list[str]) -> None:
    """A notification that arrives after the last call returned (no caller reads) is read by
    the reader thread and delivered."""
    got: list[str] = []
    arrived = threading.Event()

    def on_notification(event: Any) -> None:
        data = getattr(event, "data", None)
        if isinstance(data, str):
            got.append(data)
            arrived.set()

    with client_for(race_server, on_notification=on_notification) as client:
        for rep in range(5):
            arrived.clear()
            assert client.call_tool("later", {"text": f"late-{rep}", "delay": 0.05}).text \
                == f"late-{rep}"
            assert arrived.wait(5.0), rep
    assert got == [f"late-{rep}" for rep in range(5)]


def test_a_long_call_wakes_its_threads_rarely(race_server: list[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """While a call waits long, neither the caller reading for its answer nor the reader
    thread wakes more than a few times (the caller looks at its call every LEAD_POLL, the
    reader naps till the caller lets go: at the old 50 and 20 ms, about 12 and 31 wake-ups in
    this call); the caller that lets go wakes the napping reader at once, which then reads what
    comes while nobody calls."""
    monkeypatch.setattr(_stdio, "READER_NAP", TEST_NAP)
    got: list[str] = []
    arrived = threading.Event()

    def on_notification(event: Any) -> None:
        if isinstance(getattr(event, "data", None), str):
            got.append(event.data)
            arrived.set()

    with client_for(race_server, on_notification=on_notification) as client:
        client.call_tool("echo", {"text": "warm"})
        conn = client._conn
        assert conn is not None
        reader = conn.threads[0]
        caller = threading.current_thread()
        for rep in range(2):
            before = (_wake_ups(caller.native_id), _wake_ups(reader.native_id))
            text = f"long-{rep}"
            assert client.call_tool("delay_echo", {"text": text, "delay": LONG_CALL}).text \
                == text
            let_go = time.monotonic()
            caller_wakes = _wake_ups(caller.native_id) - before[0]
            reader_wakes = _wake_ups(reader.native_id) - before[1]
            assert caller_wakes <= 8 and reader_wakes <= 12, (rep, caller_wakes, reader_wakes)
            while conn.rd.napping and time.monotonic() - let_go < TEST_NAP:
                time.sleep(0.005)
            assert time.monotonic() - let_go < WOKEN_WITHIN, "the napping reader was not woken"
            arrived.clear()
            assert client.call_tool("later", {"text": f"late-{rep}", "delay": 0.05}).text \
                == f"late-{rep}"
            assert arrived.wait(5.0), rep
    assert got == ["late-0", "late-1"]


def run_script(path: Path, text: str, server: list[str], timeout: float) -> Any:
    """Run ``text`` as a script of its own (its main thread, its signal handlers) against the
    server; what its last line of output says, as JSON."""
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(path), *server], capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: Run as the main thread of its own interpreter (signal handlers are per process): a
#: KeyboardInterrupt while the main thread reads, in its wait and in the session's work.
INTERRUPT_SCRIPT = r'''
import _thread, json, signal, sys, threading, time
from mcp_proto_io.threads import connect_stdio

out = {}
with connect_stdio(sys.argv[1:], timeout=10.0) as client:
    # 1. In the wait: the call is interrupted, and cancelled on the server.
    threading.Timer(0.2, _thread.interrupt_main).start()
    t0 = time.monotonic()
    try:
        client.call_tool("hold", {"text": "held"})
        out["wait"] = "returned"
    except KeyboardInterrupt:
        out["wait"] = round(time.monotonic() - t0, 2)
    out["handler_after_wait"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # 2. In the session's work (a progress callback): held back until that work is done.
    def interrupted(args, first=None):
        steps = []
        def on_progress(event):
            steps.append("in")
            if len(steps) == 1:
                if first is not None:
                    first()
                _thread.interrupt_main()
                sum(range(100000))  # the interpreter looks for signals many times in here
            steps.append("out")
        try:
            client.call_tool("progress", args, on_progress=on_progress)
            return "returned", steps
        except KeyboardInterrupt:
            return "interrupted", steps
    out["work"], out["steps"] = interrupted({"text": "p", "count": 2, "pause": 0.5})
    out["handler_after_work"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    out["next"] = client.call_tool("echo", {"text": "still here"}).text
    # 3. The same while another thread's call waits beside it (it must not clear the hold).
    other = {}
    def beside():
        other["text"] = client.call_tool("delay_echo", {"text": "beside", "delay": 0.3}).text
    def start_beside():
        other["thread"] = threading.Thread(target=beside)
        other["thread"].start()
        time.sleep(0.1)  # it is in its wait now
    out["beside"], out["steps3"] = interrupted({"text": "q", "count": 1, "pause": 0.5},
                                               start_beside)
    other.pop("thread").join(10)
    out["other"] = other
    # 4. Held in the session's work, it runs before the next poll, not when the answer
    # (3 s later) or the poll's bound (made 5 s here) ends that poll.
    from mcp_proto_io._sync import _stdio
    _stdio.LEAD_POLL = 5.0
    when = []
    def interrupt_once(event):
        if not when:
            when.append(time.monotonic())
            _thread.interrupt_main()
    try:
        client.call_tool("progress", {"text": "r", "count": 1, "pause": 3.0},
                         on_progress=interrupt_once)
        out["before_poll"] = "returned"
    except KeyboardInterrupt:
        out["before_poll"] = round(time.monotonic() - when[0], 2)
    out["cancelled"] = json.loads(client.call_tool("cancelled").text)
print(json.dumps(out))
'''


def test_keyboard_interrupt_while_the_main_thread_reads(race_server: list[str],
                                                        tmp_path: Path) -> None:
    """Ctrl-C while the main thread reads its own answer: in the wait it interrupts the call
    (cancelled on the server), in the session's work (a callback) it is held back until that
    work is done, never losing what was read; the SIGINT handler is the caller's again after,
    and the connection goes on."""
    out = run_script(tmp_path / "interrupt.py", INTERRUPT_SCRIPT, race_server, 60)
    assert isinstance(out["wait"], float) and out["wait"] < 2.0, out
    assert out["handler_after_wait"] and out["handler_after_work"], out
    # The callback ran to its end, and the one for the notification read with it too; the
    # interrupt came after them (not inside), and cancelled the call (answered 0.5 s later).
    assert out["work"] == "interrupted" and out["steps"] == ["in", "out", "in", "out"], out
    assert out["next"] == "still here"
    # With another thread's call waiting beside it: the same, and that call is unharmed.
    assert out["beside"] == "interrupted" and out["steps3"] == ["in", "out"], out
    assert out["other"] == {"text": "beside"}, out
    # Held in the work, it ran as the work ended: long before the answer came (3 s).
    assert isinstance(out["before_poll"], float) and out["before_poll"] < 1.5, out
    assert out["cancelled"] == ["held", "p", "q", "r"], out


def test_close_from_a_callback_of_the_reading_caller(race_server: list[str]) -> None:
    """``close()`` from a progress callback, which runs on the caller that reads: the call
    fails with ConnectionClosed at once (the close does not wait for the reader it runs on),
    and nothing is left running (the ``no_leaks`` fixture)."""
    for rep in range(5):
        client = client_for(race_server)
        t0 = time.monotonic()
        with pytest.raises(ConnectionClosed):
            client.call_tool("progress", {"text": f"c-{rep}", "count": 1, "pause": 5.0},
                             on_progress=lambda _e, client=client: client.close())
        assert time.monotonic() - t0 < 3.0, rep
        client.close()


#: Ctrl-C at random moments of a stream of calls from the main thread (every 0-3 ms, 2 s):
#: whatever it interrupts, the role and the SIGINT handler are never left behind.
STORM_SCRIPT = r'''
import _thread, json, random, signal, sys, threading, time
from mcp_proto_io.threads import connect_stdio

out = {"calls": 0, "hits": 0, "stray": 0, "handler": []}
stop = threading.Event()
def storm():
    rnd = random.Random(7)
    while not stop.is_set():
        time.sleep(rnd.uniform(0, 0.003))
        _thread.interrupt_main()

with connect_stdio(sys.argv[1:], timeout=10.0) as client:
    client.call_tool("echo", {"text": "warm"})
    thread = threading.Thread(target=storm, daemon=True)
    thread.start()
    end = time.monotonic() + 2.0
    while True:
        try:  # (a KeyboardInterrupt may land anywhere in this loop, handlers included)
            while time.monotonic() < end:
                try:
                    client.call_tool("echo", {"text": "x"})
                    out["calls"] += 1
                except KeyboardInterrupt:
                    out["hits"] += 1
                    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
                        out["handler"].append(repr(signal.getsignal(signal.SIGINT)))
            stop.set()
            thread.join()
            time.sleep(0.05)  # the last interrupt, if one is still due
            break
        except KeyboardInterrupt:
            out["stray"] += 1
    conn = client._connection()
    out["role_left"] = conn.callback_ident == threading.get_ident()
    out["after"] = client.call_tool("echo", {"text": "after"}, timeout=5.0).text
    out["final_handler"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
print(json.dumps(out))
'''


def test_interrupts_at_random_moments_leave_nothing_behind(race_server: list[str],
                                                           tmp_path: Path) -> None:
    """Ctrl-C storms a stream of calls from the main thread: every interrupt surfaces as a
    KeyboardInterrupt, the caller's SIGINT handler is back after each, the read role is
    never left held by the interrupted caller, and the connection still works after."""
    out = run_script(tmp_path / "storm.py", STORM_SCRIPT, race_server, 60)
    assert out["hits"] > 20 and out["calls"] > 20, out  # the premise: both happened, often
    assert out["handler"] == [] and out["final_handler"], out
    assert not out["role_left"] and out["after"] == "after", out


#: A SIGTERM handler that closes the client, the signal coming at a random point of a
#: stream of calls from the main thread (often inside the session's work, under its lock).
TERM_SCRIPT = r'''
import json, os, random, signal, sys, threading, time
from mcp_proto import ConnectionClosed
from mcp_proto_io.threads import connect_stdio

rnd = random.Random(11)
out = []
for rep in range(8):
    client = connect_stdio(sys.argv[1:], timeout=10.0)
    signal.signal(signal.SIGTERM, lambda _s, _f, client=client: client.close())
    threading.Timer(0.05 + rnd.uniform(0, 0.1), os.kill, (os.getpid(), signal.SIGTERM)).start()
    t0 = time.monotonic()
    calls = 0
    try:
        while time.monotonic() - t0 < 5.0:
            client.call_tool("echo", {"text": "x"})
            calls += 1
        out.append("not closed")
    except ConnectionClosed:
        out.append(round(time.monotonic() - t0, 2))
    client.close()
# While the handshake runs (the server starts 0.5 s late): the opening is aborted.
client = connect_stdio(["sh", "-c", 'sleep 0.5; exec "$0" "$@"', *sys.argv[1:]], timeout=10.0)
signal.signal(signal.SIGTERM, lambda _s, _f: client.close())
threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
t0 = time.monotonic()
try:
    client.connect()
    out.append("connected")
except ConnectionClosed:
    out.append(round(time.monotonic() - t0, 2))
client.close()
print(json.dumps(out))
'''


def test_close_from_a_signal_handler_while_the_main_thread_reads(race_server: list[str],
                                                                 tmp_path: Path) -> None:
    """``close()`` from a SIGTERM handler, which runs on the main thread wherever it is (in
    the session's work too, under the connection's lock): the stream of calls ends with
    ConnectionClosed at once, eight times out of eight; during the handshake (under the
    client's own lock) the opening is aborted; nothing hangs."""
    out = run_script(tmp_path / "term.py", TERM_SCRIPT, race_server, 90)
    assert len(out) == 9 and all(isinstance(x, float) and x < 2.0 for x in out), out


def test_a_bug_while_a_caller_reads_fails_every_call(race_server: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside the session's work on a reading caller is a bug: that call and
    the one waiting beside it fail with ConnectionLost (not a stray exception, not a hang),
    and the next call starts a new connection."""
    with client_for(race_server) as client:
        client.call_tool("echo", {"text": "warm"})
        session_type = type(client._connection().session)
        real = session_type.receive_data
        armed = [True]

        def receive_data(self: Any, data: bytes, *, now: float) -> None:
            if armed[0] and b"boom" in data:
                armed[0] = False
                raise RuntimeError("a bug")
            real(self, data, now=now)

        monkeypatch.setattr(session_type, "receive_data", receive_data)

        def work(i: int) -> str:
            if i:
                time.sleep(0.05)  # 0 reads; 1 waits for the late echo
                return client.call_tool("delay_echo", {"text": "late", "delay": 1.0}).text
            return client.call_tool("delay_echo", {"text": "boom", "delay": 0.2}).text

        results: dict[int, Any] = {}

        def guarded(i: int) -> None:
            try:
                results[i] = work(i)
            except ConnectionLost as exc:
                results[i] = exc

        run_threads(guarded, 2, timeout=T)
        assert all(isinstance(r, ConnectionLost) and "internal error" in str(r)
                   for r in results.values()), results
        assert client.call_tool("echo", {"text": "again"}).text == "again"


# -- 7. the write side: requests larger than the pipe, and the waiter's lock used again -------

BIG_TEXT = 1 << 20  # characters of a request argument: 16 times the pipe's 64 KiB
BIG_CALLS = 4


class _Dribbling:
    """``os`` for the binding, but each write takes at most 4 KiB and waits for room instead
    of refusing (a pipe that takes a large request in many small pieces, never full): the
    caller's own write loop then finishes a request, which a real pipe leaves to timing."""

    PIECE = 4096

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def write(fd: int, data: Any) -> int:
        import select  # noqa: PLC0415

        for _ in range(500):  # bounded: 500 waits of at most 10 ms
            try:
                return os.write(fd, data[:_Dribbling.PIECE])
            except BlockingIOError:
                select.select([], [fd], [], 0.01)
        raise BlockingIOError("the server read nothing for 5 s")


@pytest.mark.parametrize("pipe", ["real", "dribbling"])
def test_requests_larger_than_the_pipe_are_written_whole(race_server: list[str], pipe: str,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A request the pipe cannot take at once (1 MiB, the server reading as it comes) is
    written by the caller as far as the pipe takes it and finished by the service thread (or,
    ``dribbling``, by the caller's own loop), whole and once, from one caller (who takes its
    own output as it starts the call) and from four at a time (who queue behind each other's
    writes): every answer is its own text, and a small call after them still gets its
    answer."""
    if pipe == "dribbling":
        monkeypatch.setattr(_stdio, "os", _Dribbling())
    start = time.monotonic()
    with client_for(race_server, timeout=T / 2) as client:  # a wrong write fails in seconds
        for rep in range(BIG_CALLS):
            within_budget(start, rep)
            text = f"{rep}:" + "x" * BIG_TEXT
            assert client.call_tool("echo", {"text": text}).text == text, rep

        def work(i: int) -> list[bool]:
            return [client.call_tool("echo", {"text": (t := f"{i}-{k}:" + "y" * BIG_TEXT)}
                                     ).text == t for k in range(BIG_CALLS)]

        assert run_threads(work, 4, timeout=T * 2) == {i: [True] * BIG_CALLS for i in range(4)}
        assert client.call_tool("echo", {"text": "small"}).text == "small"


def test_a_finished_calls_lock_serves_the_next(race_server: list[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The waiter of a call whose caller took its outcome gives its (held) lock to the next
    call's waiter: sequential calls make no lock of their own after the first, and the locks
    passed on between threads in bursts of eight still wake each caller with its own answer
    (a lock released twice, or shared by two waiters, would give one caller another's)."""
    from mcp_proto_io._sync import _pump  # noqa: PLC0415

    made = [0]
    real = _pump._thread.allocate_lock

    def counted() -> Any:
        made[0] += 1
        return real()

    with client_for(race_server, timeout=T / 2) as client:  # a waiter woken wrongly: seconds
        client.call_tool("echo", {"text": "warm"})
        monkeypatch.setattr(_pump, "_thread", type("T", (), {
            "allocate_lock": staticmethod(counted), "get_ident": _pump._thread.get_ident,
            "LockType": _pump._thread.LockType}))
        for k in range(CALLS):
            assert client.call_tool("echo", {"text": f"seq-{k}"}).text == f"seq-{k}"
        assert made[0] == 0  # the warm-up call's lock served all of them
        start = time.monotonic()
        for round_ in range(ROUNDS):
            within_budget(start, round_)
            gather_round(client, round_)
            assert client.call_tool("echo", {"text": f"after-{round_}"}).text \
                == f"after-{round_}"
        # Eight callers at a time need eight locks, but passed on they need far fewer than
        # one a call.
        assert made[0] < ROUNDS * THREADS * CALLS // 2, made[0]
