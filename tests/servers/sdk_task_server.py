"""Minimal MCP server with *tasks*, built on the official Python SDK `mcp` 2.3.0 (stdio).

Run: python sdk_task_server.py (stdio) or python sdk_task_server.py --http PORT

`mcp` 2.3.0 has NO task runtime (no TaskStore, no `execution`/taskSupport option on
`@server.tool`, tasks/* are "types-only" in mcp_types and absent from its method tables;
its core result sieve rejects a `{task:{...}}` tools/call result on 2025-11-25).
So this file builds a tiny task runtime on the SDK's public hooks:

* 2025-11-25 (handshake era): a `ServerMiddleware` (MCPServer(middleware=[...])) that
  - adds `capabilities.tasks` to the `initialize` result,
  - adds `execution.taskSupport` to `tools/list` entries,
  - short-circuits `tools/call` carrying `task` (returns CreateTaskResult; middleware
    results bypass the core sieve),
  plus `tasks/get|result|list|cancel` served as extension MethodBindings.
  Background progress: `notifications/tasks/status`; input: a server->client
  `elicitation/create` with `_meta["io.modelcontextprotocol/related-task"]`.
* 2026-07-28: an SDK `Extension` (identifier `io.modelcontextprotocol/tasks`) whose
  `intercept_tool_call` answers `resultType:"task"` when the request's clientCapabilities
  declare the extension, and MethodBindings `tasks/get` (DetailedTask), `tasks/update`,
  `tasks/cancel`.

Tools: `slow {steps=3, fail=false}` (taskSupport optional; 0.5 s per step; fail -> isError /
failed), `ask_color {}` (taskSupport required; needs user input inside the task),
`boom {}` (taskSupport optional; raises -> JSON-RPC error / failed task with `error`),
`echo {text}` (no tasks). Task ids are "t1", "t2", ...; ttl default 60000 ms, pollInterval 500 ms.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import itertools
import sys
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
TASK_SUPPORT = {"slow": "optional", "ask_color": "required", "boom": "optional"}
TERMINAL = {"completed", "failed", "cancelled"}


def log(*a: Any) -> None:
    print("[sdk-task-server]", *a, file=sys.stderr, flush=True)


def now() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


# ----------------------------------------------------------------------------- task store
class TaskRec:
    def __init__(self, tid: str, era: str, ttl: int | None, session: Any) -> None:
        self.tid, self.era, self.ttl, self.session = tid, era, ttl, session
        self.status = "working"
        self.status_message: str | None = None
        self.created = self.updated = now()
        self.poll = 500
        self.result: dict[str, Any] | None = None  # CallToolResult wire dict
        self.error: dict[str, Any] | None = None  # JSON-RPC error object
        self.input_requests: dict[str, Any] = {}  # modern: key -> InputRequest
        self.input_waiters: dict[str, asyncio.Future[Any]] = {}
        self.done = asyncio.Event()
        self.runner: asyncio.Task[None] | None = None

    def wire(self) -> dict[str, Any]:
        if self.era == "modern":
            d = {
                "taskId": self.tid,
                "status": self.status,
                "createdAt": self.created,
                "lastUpdatedAt": self.updated,
                "ttlMs": self.ttl,
                "pollIntervalMs": self.poll,
            }
        else:
            d = {
                "taskId": self.tid,
                "status": self.status,
                "createdAt": self.created,
                "lastUpdatedAt": self.updated,
                "ttl": self.ttl,
                "pollInterval": self.poll,
            }
        if self.status_message:
            d["statusMessage"] = self.status_message
        return d

    def detailed(self) -> dict[str, Any]:  # 2026 DetailedTask
        d = self.wire()
        if self.status == "input_required":
            d["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed":
            d["result"] = self.result
        elif self.status == "failed":
            d["error"] = self.error
        return d

    async def set_status(self, status: str, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status, self.updated = status, now()
        if message is not None:
            self.status_message = message
        if status in TERMINAL:
            self.done.set()
        if self.era == "legacy":  # optional notifications/tasks/status (full Task)
            await self.session._connection.notify("notifications/tasks/status", self.wire())

    async def request_input(self, key: str, elicit_params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client for input from inside the task; returns the ElicitResult dict."""
        await self.set_status("input_required", f"waiting for {key}")
        if self.era == "legacy":
            params = {**elicit_params, "_meta": {RELATED: {"taskId": self.tid}}}
            res = await self.session._connection.send_raw_request("elicitation/create", params)
        else:
            self.input_requests[key] = {"method": "elicitation/create", "params": elicit_params}
            fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.input_waiters[key] = fut
            res = await fut
            self.input_requests.pop(key, None)
        await self.set_status("working", f"got {key}")
        return res


TASKS: dict[str, TaskRec] = {}
_ids = itertools.count(1)  # task ids t1, t2, ...


def lookup(tid: str) -> TaskRec:
    rec = TASKS.get(tid)
    if rec is None:
        raise MCPError(code=-32602, message=f"Unknown task: {tid}")
    return rec


def text_result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


# ----------------------------------------------------------------------------- task bodies
async def body_slow(t: TaskRec, args: dict[str, Any]) -> dict[str, Any]:
    steps = int(args.get("steps", 3))
    for i in range(steps):
        await t.set_status("working", f"step {i + 1}/{steps}")
        await asyncio.sleep(0.5)
    if args.get("fail"):
        return text_result("slow failed on purpose", is_error=True)
    return text_result(f"done {steps} steps")


async def body_ask_color(t: TaskRec, args: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0.3)
    res = await t.request_input(
        "color",
        {
            "mode": "form",
            "message": "Favourite colour?",
            "requestedSchema": {
                "type": "object",
                "properties": {"color": {"type": "string"}},
                "required": ["color"],
            },
        },
    )
    await asyncio.sleep(0.3)
    if res.get("action") == "accept":
        return text_result(f"colour is {res.get('content', {}).get('color')}")
    return text_result(f"no colour ({res.get('action')})")


async def body_boom(t: TaskRec, args: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0.3)
    raise MCPError(code=-32603, message="boom exploded")


BODIES = {"slow": body_slow, "ask_color": body_ask_color, "boom": body_boom}


async def _run(t: TaskRec, name: str, args: dict[str, Any]) -> None:
    try:
        result = await BODIES[name](t, args)
        t.result = result
        # 2025-11-25 maps isError:true -> failed (tasks/result still returns the CallToolResult);
        # 2026 keeps a tool-level error as completed + result.isError.
        failed = t.era == "legacy" and result.get("isError")
        await t.set_status(
            "failed" if failed else "completed", "tool reported isError" if failed else "done"
        )
    except asyncio.CancelledError:
        pass
    except MCPError as e:
        t.error = {"code": e.error.code, "message": e.error.message}
        await t.set_status("failed", e.error.message)
    except Exception as e:
        t.error = {"code": -32603, "message": str(e)}
        await t.set_status("failed", str(e))


def start_task(era: str, name: str, args: dict[str, Any], ttl: int | None, session: Any) -> TaskRec:
    t = TaskRec(f"t{next(_ids)}", era, ttl, session)
    TASKS[t.tid] = t
    t.runner = asyncio.get_running_loop().create_task(_run(t, name, args))
    log("created", t.tid, era, name)
    return t


# ----------------------------------------------------------------------------- server + tools
class LegacyTasksMiddleware:
    """2025-11-25 task plumbing around the SDK (capabilities, tools/list, tools/call+task)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if ctx.method == "initialize":
            res = await call_next(ctx)
            res.setdefault("capabilities", {})["tasks"] = {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
            return res
        if modern:
            return await call_next(ctx)
        if ctx.method == "tools/list":
            res = await call_next(ctx)
            for tool in res.get("tools", []):
                if tool["name"] in TASK_SUPPORT:
                    tool["execution"] = {"taskSupport": TASK_SUPPORT[tool["name"]]}
            return res
        if ctx.method == "tools/call":
            p = dict(ctx.params or {})
            name, support = p.get("name"), TASK_SUPPORT.get(p.get("name"), "forbidden")
            if "task" in p:
                if support == "forbidden":
                    raise MCPError(
                        code=-32601,
                        message=f"Tool {name} does not support task-augmented execution",
                    )
                ttl = (p.get("task") or {}).get("ttl", 60000)
                t = start_task("legacy", name, p.get("arguments") or {}, ttl, ctx.session)
                return {"task": t.wire()}  # CreateTaskResult, bypasses the core sieve
            if support == "required":
                raise MCPError(
                    code=-32601, message=f"Tool {name} requires task-augmented execution"
                )
        return await call_next(ctx)


class TaskIdParams(RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(RequestParams):
    task_id: str = Field(alias="taskId")
    input_responses: dict[str, Any] = Field(alias="inputResponses")


class ListParams(RequestParams):
    cursor: str | None = None


def _gate(ctx: ServerRequestContext[Any, Any]) -> None:
    """2026: tasks/* from a client that did not declare the extension -> -32021."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        require_client_extension(ctx, EXT)


async def h_get(ctx: ServerRequestContext[Any, Any], p: TaskIdParams) -> dict[str, Any]:
    _gate(ctx)
    t = lookup(p.task_id)
    return t.detailed() if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else t.wire()


async def h_result(ctx: ServerRequestContext[Any, Any], p: TaskIdParams) -> dict[str, Any]:
    t = lookup(p.task_id)
    await t.done.wait()
    if t.status == "cancelled":
        raise MCPError(code=-32602, message=f"Task {t.tid} was cancelled")
    if t.error is not None:
        raise MCPError(code=t.error["code"], message=t.error["message"])
    return {**(t.result or {}), "_meta": {RELATED: {"taskId": t.tid}}}


async def h_list(ctx: ServerRequestContext[Any, Any], p: ListParams) -> dict[str, Any]:
    return {"tasks": [t.wire() for t in TASKS.values() if t.era == "legacy"]}


async def h_cancel(ctx: ServerRequestContext[Any, Any], p: TaskIdParams) -> dict[str, Any]:
    _gate(ctx)
    t = lookup(p.task_id)
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    if t.status in TERMINAL:
        if modern:
            return {}  # cooperative, ack only
        raise MCPError(code=-32602, message=f"Cannot cancel task in terminal status: {t.status}")
    if t.runner:
        t.runner.cancel()
    for fut in t.input_waiters.values():
        fut.cancel()
    await t.set_status("cancelled", "cancelled by client")
    return {} if modern else t.wire()


async def h_update(ctx: ServerRequestContext[Any, Any], p: UpdateParams) -> dict[str, Any]:
    _gate(ctx)
    t = lookup(p.task_id)
    for key, resp in p.input_responses.items():
        fut = t.input_waiters.get(key)
        if fut is not None and not fut.done():
            fut.set_result(resp)
        else:
            log("tasks/update: ignoring unknown/answered key", key)
    return {}


LEGACY = frozenset({"2025-11-25"})


class TasksExtension(Extension):
    identifier = EXT

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskIdParams, h_get),
            MethodBinding("tasks/cancel", TaskIdParams, h_cancel),
            MethodBinding(
                "tasks/update", UpdateParams, h_update, protocol_versions=MODERN_PROTOCOL_VERSIONS
            ),
            MethodBinding("tasks/result", TaskIdParams, h_result, protocol_versions=LEGACY),
            MethodBinding("tasks/list", ListParams, h_list, protocol_versions=LEGACY),
        ]

    async def intercept_tool_call(
        self, params: Any, ctx: ServerRequestContext[Any, Any], call_next: Any
    ) -> Any:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or params.name not in TASK_SUPPORT:
            return await call_next(ctx)
        caps = ctx.session.client_capabilities
        declared = bool(caps and caps.extensions and EXT in caps.extensions)
        if not declared:
            if TASK_SUPPORT[params.name] == "required":
                require_client_extension(ctx, EXT)  # -> -32021
            return await call_next(ctx)  # run synchronously
        t = start_task("modern", params.name, params.arguments or {}, 60000, ctx.session)
        return {"resultType": "task", **t.wire()}


server: MCPServer[Any] = MCPServer(
    "sdk-task-server",
    version="1.0.0",
    extensions=[TasksExtension()],
    middleware=[LegacyTasksMiddleware()],
)


@server.tool()
def echo(text: str) -> str:
    """Return text unchanged (no task support)."""
    return text


@server.tool()
async def slow(steps: int = 3, fail: bool = False) -> str:
    """Slow work (task optional). Synchronous path."""
    await anyio.sleep(0.5 * steps)
    if fail:
        raise ValueError("slow failed on purpose")
    return f"done {steps} steps"


@server.tool()
def ask_color() -> str:
    """Needs user input; only runs as a task (taskSupport required)."""
    raise ValueError("ask_color must run as a task")


@server.tool()
def boom() -> str:
    """Raises."""
    raise ValueError("boom exploded")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
