"""A scripted stdio MCP server whose tool ``job`` runs as a task (section 9), in either era.

Usage: ``python task_scripted.py --era legacy|modern SCENARIO``.  Standard library only;
stdin/stdout carry newline-delimited JSON-RPC 2.0, stderr diagnostics.  Exit status 0 on
stdin EOF, 2 for bad arguments (an unknown scenario, or one its era does not have).

Eras
----
``legacy`` (2025-11-25): ``initialize`` answers ``2025-11-25`` with capabilities ``{"tools": {},
"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}``; ``server/discover``
and unknown methods get -32601.  ``tools/call job`` must carry ``task`` (else -32601, TK-01)
and gets ``{"task": <Task>}``; ``tasks/get`` -> the Task; ``tasks/result`` -> the
CallToolResult with ``_meta["io.modelcontextprotocol/related-task"]`` (answered once the task
is terminal: held until a later message finds it so); ``tasks/list`` -> every task;
``tasks/cancel`` -> the task, now ``cancelled`` (a terminal one: -32602).

``modern`` (2026-07-28): ``server/discover`` lists ``capabilities.extensions
["io.modelcontextprotocol/tasks"]``; ``initialize`` gets -32601.  ``tools/call job`` from a
client that did not declare the extension in ``_meta`` clientCapabilities gets -32021;
otherwise ``{"resultType": "task", <task fields>}``.  ``tasks/get`` -> ``{"resultType":
"complete", <task fields>}`` plus ``result`` (completed) or ``inputRequests``
(input_required); ``tasks/update`` (recorded) and ``tasks/cancel`` -> ``{"resultType":
"complete"}`` (cancel: the task becomes ``cancelled`` unless terminal).

Both: task ids are ``task-<n>``; times ``ttl``/``pollInterval`` (legacy) or
``ttlMs``/``pollIntervalMs`` (modern), ttl 60000, poll interval 50 ms unless the scenario says
otherwise.  An unknown task id gets -32602 ``"Task not found: <id>"``.  A completed task's
result is one text block, the JSON of ``{"taskId", "polls", "updates"}`` (``polls``: the
``tasks/get`` calls for it; ``updates``: the ``inputResponses`` of its ``tasks/update``
calls, in order).  Tools ``echo {text}`` and ``received`` (JSON of every message read so far,
this call included) are plain.  ``job`` tasks are ``working`` until the scenario says:

Scenarios
---------
``default``        completed at the 2nd poll.
``purged``         working at polls 1-2; the 3rd poll finds it forgotten (-32602), and so
                   does every later request about it.
``cancel-terminal`` (legacy) as ``default``; a later ``tasks/cancel`` gets -32602.
``completed-after-cancel`` (modern) working until cancelled; ``tasks/cancel`` is acknowledged
                   but the task stays ``working`` and ends ``completed`` 2 polls later.
``no-poll-interval`` / ``zero-poll-interval``  no poll interval / an interval of 0; the task
                   is completed once 1.5 s old.
``repeat-keys``    (modern) ``input_required`` asking ``q1`` (an elicitation) at every poll
                   until a ``tasks/update`` answers ``q1`` and 2 more polls passed (the
                   server is eventually consistent), then the same for ``q2``, then completed.
``contradicting-notifications`` (legacy) completed at the 3rd poll.  After the 1st poll's
                   answer it sends ``notifications/tasks/status`` saying ``completed``; after
                   the answer saying completed, and before the ``tasks/result`` answer, ones
                   saying ``cancelled``.
``illegal-transition`` (modern) ``job {variant: "no-result"}``: the 1st poll says completed
                   without a result, later ones working; ``job {variant: "seed-completed"}``:
                   created ``completed``, every poll says working.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

JSONObject = dict[str, Any]
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
TERMINAL = ("completed", "failed", "cancelled")
SCENARIOS = {
    "default": ("legacy", "modern"),
    "purged": ("legacy", "modern"),
    "cancel-terminal": ("legacy",),
    "completed-after-cancel": ("modern",),
    "no-poll-interval": ("legacy", "modern"),
    "zero-poll-interval": ("legacy", "modern"),
    "repeat-keys": ("modern",),
    "contradicting-notifications": ("legacy",),
    "illegal-transition": ("modern",),
}
KEYS = ("q1", "q2")
LIFETIME = 1.5  # seconds, for the poll-interval scenarios
SCHEMA: JSONObject = {"type": "object"}
SERVER_INFO: JSONObject = {"name": "task-scripted", "version": "1.0.0"}
LEGACY_CAPS: JSONObject = {"tools": {}, "tasks": {"list": {}, "cancel": {},
                                                  "requests": {"tools": {"call": {}}}}}
MODERN_CAPS: JSONObject = {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}


class Fault(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Task:
    def __init__(self, task_id: str, variant: str) -> None:
        self.id = task_id
        self.variant = variant
        self.born = time.monotonic()
        self.status = "completed" if variant == "seed-completed" else "working"
        self.polls = 0
        self.cancelled_at: int | None = None  # polls seen when tasks/cancel came
        self.answered_at: dict[str, int] = {}  # input key -> polls seen when answered
        self.updates: list[Any] = []
        self.waiting: list[Any] = []  # ids of tasks/result requests held

    def result(self) -> JSONObject:
        text = json.dumps({"taskId": self.id, "polls": self.polls, "updates": self.updates})
        return {"content": [{"type": "text", "text": text}], "isError": False}


class Server:
    def __init__(self, era: str, scenario: str) -> None:
        self.modern = era == "modern"
        self.scenario = scenario
        self.received: list[Any] = []
        self.tasks: dict[str, Task] = {}

    def send(self, message: JSONObject) -> None:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def answer(self, request_id: Any, result: JSONObject) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def notify_status(self, task: Task, status: str) -> None:
        params = {**self.fields(task), "status": status}
        self.send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": params})

    # -- task state ---------------------------------------------------------------------------

    def fields(self, task: Task) -> JSONObject:
        ttl, poll = ("ttlMs", "pollIntervalMs") if self.modern else ("ttl", "pollInterval")
        obj: JSONObject = {"taskId": task.id, "status": task.status,
                           "createdAt": "2026-11-29T10:00:00Z",
                           "lastUpdatedAt": "2026-11-29T10:00:01Z", ttl: 60000}
        if self.scenario != "no-poll-interval":
            obj[poll] = 0 if self.scenario == "zero-poll-interval" else 50
        return obj

    def find(self, params: JSONObject) -> Task:
        task_id = params.get("taskId")
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise Fault(-32602, f"Task not found: {task_id}")
        return task

    def asked_key(self, task: Task) -> str | None:
        """repeat-keys: the key still asked at this poll (None: all answered and settled)."""
        for key in KEYS:
            at = task.answered_at.get(key)
            if at is None or task.polls <= at + 2:
                return key
        return None

    def advance(self, task: Task) -> None:
        """A poll: the task's status after it."""
        task.polls += 1
        n, s = task.polls, self.scenario
        if task.status in TERMINAL and task.variant not in ("no-result", "seed-completed"):
            return
        if s == "purged":
            if n >= 3:
                del self.tasks[task.id]
                raise Fault(-32602, f"Task not found: {task.id}")
        elif task.variant == "no-result":
            task.status = "completed" if n == 1 else "working"
        elif task.variant == "seed-completed":
            task.status = "working"
        elif s == "completed-after-cancel":
            done = task.cancelled_at is not None and n >= task.cancelled_at + 2
            task.status = "completed" if done else "working"
        elif s in ("no-poll-interval", "zero-poll-interval"):
            done = time.monotonic() - task.born >= LIFETIME
            task.status = "completed" if done else "working"
        elif s == "repeat-keys":
            task.status = "input_required" if self.asked_key(task) else "completed"
        elif s == "contradicting-notifications":
            task.status = "completed" if n >= 3 else "working"
        else:
            task.status = "completed" if n >= 2 else "working"

    def flush_results(self) -> None:
        """Answer the held ``tasks/result`` requests of tasks now terminal (legacy)."""
        for task in self.tasks.values():
            if task.status in TERMINAL and task.waiting:
                waiting, task.waiting = task.waiting, []
                for request_id in waiting:
                    self.send_result(request_id, task)

    def send_result(self, request_id: Any, task: Task) -> None:
        if self.scenario == "contradicting-notifications":
            self.notify_status(task, "cancelled")
        if task.status == "completed":
            meta = {RELATED_TASK_KEY: {"taskId": task.id}}
            self.answer(request_id, {**task.result(), "_meta": meta})
        else:
            error = {"code": -32603, "message": f"task {task.status}"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    # -- requests -----------------------------------------------------------------------------

    def handle(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.send({"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32700, "message": "Parse error"}})
            return
        self.received.append(message)
        if isinstance(message, dict) and isinstance(message.get("method"), str) \
                and "id" in message:
            params = message.get("params")
            request_id = message["id"]
            try:
                result = self.request(request_id, message["method"],
                                      params if isinstance(params, dict) else {})
            except Fault as exc:
                error = {"code": exc.code, "message": exc.message}
                self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
                result = None
            if result is not None:
                self.answer(request_id, result)
                self.after(message["method"], params if isinstance(params, dict) else {})
        self.flush_results()

    def after(self, method: str, params: JSONObject) -> None:
        """contradicting-notifications: the lies sent after a poll's answer."""
        if self.scenario != "contradicting-notifications" or method != "tasks/get":
            return
        task = self.find(params)
        if task.polls == 1:
            self.notify_status(task, "completed")
        elif task.status == "completed":
            self.notify_status(task, "cancelled")

    def request(self, request_id: Any, method: str, params: JSONObject) -> JSONObject | None:
        if method == "initialize" and not self.modern:
            return {"protocolVersion": LEGACY_VERSION, "capabilities": LEGACY_CAPS,
                    "serverInfo": SERVER_INFO}
        if method == "server/discover" and self.modern:
            return self.complete({"supportedVersions": [MODERN_VERSION],
                                  "capabilities": MODERN_CAPS,
                                  "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}})
        if method == "ping":
            return {}
        if method == "tools/list":
            job = {"name": "job", "inputSchema": SCHEMA}
            if not self.modern:
                job["execution"] = {"taskSupport": "required"}
            tools = [job, {"name": "echo", "inputSchema": SCHEMA},
                     {"name": "received", "inputSchema": SCHEMA}]
            return self.complete({"tools": tools})
        if method == "tools/call":
            return self.call(params)
        if method == "tasks/get":
            task = self.find(params)
            self.advance(task)
            return self.detail(task)
        if method == "tasks/cancel":
            return self.cancel(self.find(params))
        if method == "tasks/list" and not self.modern:
            return {"tasks": [self.fields(t) for t in self.tasks.values()]}
        if method == "tasks/result" and not self.modern:
            self.find(params).waiting.append(request_id)
            return None
        if method == "tasks/update" and self.modern:
            task = self.find(params)
            responses = params.get("inputResponses")
            task.updates.append(responses)
            for key in responses if isinstance(responses, dict) else ():
                task.answered_at.setdefault(key, task.polls)
            return self.complete({})
        raise Fault(-32601, "Method not found")

    def complete(self, result: JSONObject) -> JSONObject:
        return {"resultType": "complete", **result} if self.modern else result

    def call(self, params: JSONObject) -> JSONObject:
        name = params.get("name")
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        if name == "echo":
            return self.complete({"content": [{"type": "text",
                                               "text": str(arguments.get("text"))}]})
        if name == "received":
            return self.complete({"content": [{"type": "text",
                                               "text": json.dumps(self.received)}]})
        if name != "job":
            raise Fault(-32602, f"Unknown tool: {name}")
        if self.modern:
            meta = params.get("_meta")
            caps = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
            extensions = caps.get("extensions") if isinstance(caps, dict) else None
            if not (isinstance(extensions, dict) and TASKS_EXTENSION in extensions):
                raise Fault(-32021, "job needs the tasks extension")
        elif not isinstance(params.get("task"), dict):
            raise Fault(-32601, "job must run as a task (taskSupport: required)")
        task = Task(f"task-{len(self.received)}", str(arguments.get("variant", "")))
        self.tasks[task.id] = task
        if self.modern:
            return {"resultType": "task", **self.fields(task)}
        return {"task": self.fields(task)}

    def detail(self, task: Task) -> JSONObject:
        obj = self.fields(task)
        if not self.modern:
            return obj
        if task.status == "completed" and task.variant != "no-result":
            obj["result"] = task.result()
        key = self.asked_key(task) if task.status == "input_required" else None
        if key is not None:
            obj["inputRequests"] = {key: {"method": "elicitation/create", "params": {
                "mode": "form", "message": f"Answer {key}?",
                "requestedSchema": {"type": "object",
                                    "properties": {"answer": {"type": "string"}}}}}}
        return {"resultType": "complete", **obj}

    def cancel(self, task: Task) -> JSONObject:
        if self.modern:
            if self.scenario == "completed-after-cancel":
                if task.cancelled_at is None:
                    task.cancelled_at = task.polls
            elif task.status not in TERMINAL:
                task.status = "cancelled"
            return {"resultType": "complete"}
        if task.status in TERMINAL:
            raise Fault(-32602, f"Cannot cancel task in terminal status: {task.status}")
        task.status = "cancelled"
        return self.fields(task)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "--era" or argv[2] not in SCENARIOS \
            or argv[1] not in SCENARIOS[argv[2]]:
        sys.stderr.write(f"[task-scripted] usage: --era legacy|modern SCENARIO, got {argv}\n")
        return 2
    server = Server(argv[1], argv[2])
    for raw in sys.stdin.buffer:
        if raw.strip():
            server.handle(raw.decode("utf-8", errors="replace"))
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
