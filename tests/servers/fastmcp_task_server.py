"""A FastMCP server with task tools: a real implementation of the 2026 tasks extension
(``fastmcp-tasks``, SEP-2663) for the task tests.  The official Python SDK has no task
runtime, so this is the third-party peer for ``io.modelcontextprotocol/tasks``.

Run: ``python fastmcp_task_server.py`` (stdio) or ``python fastmcp_task_server.py --http PORT``
(Streamable HTTP at ``/mcp``).  Tasks live in memory (``memory://``: no Redis).

Tools (task support as declared to FastMCP):
  ``slow(steps, delay)``  optional; reports its step as the task's status message
  ``ask()``               always a task; needs an elicitation (input_required, tasks/update)
  ``fail()``              always a task; raises a ToolError (ends ``completed`` + isError)
  ``proto_fail()``        always a task; raises an MCPError (ends ``failed`` with the error)
  ``must_task(x)``        required; returns ``x * 2``
  ``echo(text)``          no task support
"""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta

# Before fastmcp is imported: an in-process task queue, and no banner on stderr.
os.environ.setdefault("FASTMCP_DOCKET_URL", "memory://")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

#: Poll interval the quick tools suggest (the library's default is seconds).
POLL = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))
ALWAYS = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))

server = FastMCP("fastmcp-task-server")
server.add_extension(TasksExtension(url="memory://"))


@server.tool(task=POLL)
async def slow(ctx: Context, steps: int = 3, delay: float = 0.2) -> str:
    """Sleep ``steps`` times, reporting each step."""
    for i in range(steps):
        await ctx.report_progress(i, steps, f"step {i + 1}/{steps}")
        await asyncio.sleep(delay)
    return f"slept {steps} steps"


@server.tool(task=ALWAYS)
async def ask(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Ask the user for a name, then greet them."""
    responses = ctx.input_responses
    if not responses or "name" not in responses:
        return mcp_types.InputRequiredResult(
            input_requests={"name": mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestFormParams(
                    message="Name?",
                    requested_schema={"type": "object",
                                      "properties": {"name": {"type": "string"}},
                                      "required": ["name"]}))},
            request_state="round-1")
    answer = responses["name"]
    if getattr(answer, "action", None) == "accept":
        return f"hi {answer.content['name']}"  # type: ignore[union-attr,index]
    return f"action={getattr(answer, 'action', answer)}"


@server.tool(task=ALWAYS)
async def fail() -> str:
    """Fails as a tool (a result with isError)."""
    raise ToolError("deliberate tool failure")


@server.tool(task=ALWAYS)
async def proto_fail() -> str:
    """Fails at the protocol level (the task ends ``failed``)."""
    raise MCPError(code=-32603, message="protocol-level failure", data={"why": "test"})


@server.tool(task=TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100)))
async def must_task(x: int) -> int:
    """Runs only as a task."""
    await asyncio.sleep(0.2)
    return x * 2


@server.tool
def echo(text: str) -> str:
    """No task support."""
    return text


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]),
                   show_banner=False)
    else:
        server.run(transport="stdio", show_banner=False)
