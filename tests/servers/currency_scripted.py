"""A scripted stdio MCP server (2025-11-25) for URL elicitation and the client as a task
receiver: the misbehaviour and the orderings real servers do not produce on demand.

Usage: ``python currency_scripted.py``.  Standard library only; NDJSON on stdin/stdout.
``initialize`` answers 2025-11-25 with ``tools``; ``tools/list`` lists the tools below; every
``tools/call`` runs in a thread of its own.  Server->client requests get ids ``srv-<n>``.

Tools
-----
``needs_url {count, order, always, key}``
    Until the call has been refused once for ``key`` (any string): answers -32042 with
    ``count`` URL elicitations (ids ``<key>-<i>``, URLs ``https://auth.example/<key>/<i>``),
    then, 0.1 s later, sends ``notifications/elicitation/complete`` for them in ``order``:
    ``"forward"``, ``"reverse"``, ``"none"`` (never), or ``"noisy"`` (an unknown id first,
    each id twice, reversed).  The next call for ``key`` answers text ``"done <key>"``.  With
    ``always`` true every call is refused (new ids each time: ``<key>-r<round>-<i>``).
``ask_task {method, ttl, script}``
    Sends a task-augmented ``sampling/createMessage`` (``method: "sampling"``) or
    ``elicitation/create`` (form mode) with ``task: {ttl}`` (omitted when ``ttl`` is null),
    then runs ``script``, a list of steps, each one request to the client about that task
    (or another): ``"get"``, ``"result"``, ``"list"``, ``"cancel"``, ``"get-unknown"``,
    ``"result-unknown"``, ``"cancel-unknown"``, ``"sleep:<s>"``, ``"get-until-done"`` (polls
    every 0.05 s, at most 200 times).  Answers text: the JSON list ``[create_answer,
    step answers...]`` (each the whole JSON-RPC response object), plus every
    ``notifications/tasks/status`` received so far under ``"statuses"``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

JSON = dict[str, Any]

TOOLS = [
    {"name": "needs_url", "inputSchema": {"type": "object"}},
    {"name": "ask_task", "inputSchema": {"type": "object"}},
]

_lock = threading.Lock()
_waiting: dict[str, threading.Event] = {}
_replies: dict[str, JSON] = {}
_statuses: list[JSON] = []
_refused: dict[str, int] = {}
_next = [0]


def send(message: JSON) -> None:
    data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
    with _lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def ask(method: str, params: JSON, timeout: float = 30.0) -> JSON:
    with _lock:
        _next[0] += 1
        rid = f"srv-{_next[0]}"
        event = _waiting[rid] = threading.Event()
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    if not event.wait(timeout):
        return {"timeout": rid}
    with _lock:
        return _replies.pop(rid)


def text(rid: Any, value: str) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": value}]}})


def needs_url(rid: Any, args: JSON) -> None:
    key = str(args.get("key", "k"))
    count = int(args.get("count", 1))
    with _lock:
        rounds = _refused.get(key, 0)
        _refused[key] = rounds + 1
    if rounds and not args.get("always"):
        text(rid, f"done {key}")
        return
    prefix = f"{key}-r{rounds}" if args.get("always") else key
    ids = [f"{prefix}-{i}" for i in range(count)]
    elicitations = [{"mode": "url", "elicitationId": e, "message": f"open {e}",
                     "url": f"https://auth.example/{key}/{i}"} for i, e in enumerate(ids)]
    send({"jsonrpc": "2.0", "id": rid, "error": {
        "code": -32042, "message": "This request requires authorization",
        "data": {"elicitations": elicitations}}})
    order = args.get("order", "forward")
    if order == "none":
        return
    time.sleep(0.1)
    todo = list(ids)
    if order == "reverse":
        todo.reverse()
    elif order == "noisy":
        todo = ["never-offered"] + [e for e in reversed(ids) for _ in (0, 1)]
    for elicitation_id in todo:
        send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
              "params": {"elicitationId": elicitation_id}})


def ask_task(rid: Any, args: JSON) -> None:
    method = args.get("method", "sampling")
    params: JSON
    if method == "sampling":
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                  "maxTokens": 10}
        wire_method = "sampling/createMessage"
    else:
        params = {"message": "Your name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}
        wire_method = "elicitation/create"
    ttl = args.get("ttl", 60000)
    params["task"] = {} if ttl is None else {"ttl": ttl}
    created = ask(wire_method, params)
    out: list[Any] = [created]
    task_id = (created.get("result") or {}).get("task", {}).get("taskId", "none")
    for step in args.get("script", []):
        if step.startswith("sleep:"):
            time.sleep(float(step[6:]))
            continue
        if step == "get-until-done":
            reply: JSON = {}
            for _ in range(200):
                reply = ask("tasks/get", {"taskId": task_id})
                if (reply.get("result") or {}).get("status") in ("completed", "failed",
                                                                "cancelled"):
                    break
                time.sleep(0.05)
            out.append(reply)
            continue
        name, _, unknown = step.partition("-")
        target = "no-such-task" if unknown == "unknown" else task_id
        if name == "list":
            out.append(ask("tasks/list", {}))
        else:
            out.append(ask(f"tasks/{name}", {"taskId": target}))
    with _lock:
        statuses = list(_statuses)
    text(rid, json.dumps({"answers": out, "statuses": statuses}))


def handle(message: JSON) -> None:
    method = message.get("method")
    rid = message.get("id")
    if method is None:  # a response to one of our requests
        with _lock:
            event = _waiting.pop(str(rid), None)
            if event is not None:
                _replies[str(rid)] = message
        if event is not None:
            event.set()
        return
    if rid is None:  # a notification
        if method == "notifications/tasks/status":
            with _lock:
                _statuses.append(message.get("params") or {})
        return
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "currency-scripted", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        params = message.get("params") or {}
        tool = {"needs_url": needs_url, "ask_task": ask_task}.get(params.get("name"))
        if tool is None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602,
                                                          "message": "unknown tool"}})
            return
        threading.Thread(target=tool, args=(rid, params.get("arguments") or {}),
                         daemon=True).start()
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


def main() -> None:
    for line in sys.stdin.buffer:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
