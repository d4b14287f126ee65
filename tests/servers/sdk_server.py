"""An MCP server built with the official Python SDK (``mcp`` 2.3.0), for the test suite.

Run: ``python tests/servers/sdk_server.py`` (stdio, newline-delimited JSON-RPC; logs on
stderr; exit status 0 on stdin EOF, even with listen streams open). Uses ``MCPServer``
(decorators) plus two lowlevel registrations (``resources/subscribe``/``unsubscribe`` and
our own ``ListenHandler``) through ``server._lowlevel_server``, because ``MCPServer`` has no
public hook for spec methods. Every process serves exactly one era, chosen by the client's
first request (SDK ``serve_dual_era_loop``): a request carrying the 2026-07-28 ``_meta``
envelope (``protocolVersion`` + ``clientCapabilities``), other than ``initialize``, opens a
modern connection; anything else (``initialize``, or an un-enveloped request) a legacy one.
There is no way back: on a modern connection ``initialize`` gets -32022; on a legacy one an
enveloped request gets -32600. So a client that probed with ``server/discover`` and wants
the legacy era must start a new process.

Server info ``{"name": "sdk-server", "version": "1.0.0"}``. Capabilities in both eras:
``{"prompts": {"listChanged": true}, "resources": {"listChanged": true, "subscribe": true},
"tools": {"listChanged": true}}`` (no ``logging``/``completions``).

Tools (all return plain text content plus the SDK's automatic ``structuredContent:
{"result": <text>}`` and ``outputSchema``, because they are annotated ``-> str``; results carry
``"isError": false``; an unknown tool name is an ``isError: true`` RESULT with text
``"Unknown tool: <name>"``, not a JSON-RPC error, in both eras):

* ``echo {text}`` -> ``text``.
* ``ask_name {}`` -> asks a form ``{name: string}`` (message ``"What is your name?"``) via
  the SDK's ``Resolve``/``Elicit`` dependency injection; answers ``"hello <name>"``,
  ``"declined"`` or ``"cancelled"``. Without a form-elicitation client capability the call is
  a JSON-RPC error -32021 in BOTH eras (also on 2025-11-25, where that code does not exist):
  ``{"code":-32021,"message":"Client did not declare the form elicitation capability
  required by resolver '__main__:ask_for_name'","data":{"requiredCapabilities":
  {"elicitation":{"form":{}}}}}``.
* ``touch {uri}`` -> ``"touched"``; modern: publishes resource-updated on the subscription bus
  (delivered to every open ``subscriptions/listen`` whose ``resourceSubscriptions`` contains
  exactly ``uri``); legacy: sends ``notifications/resources/updated {uri}`` if ``uri`` was
  ``resources/subscribe``d (and not unsubscribed), else nothing.
* ``add_tool {name}`` -> registers tool ``name`` (no arguments, answers ``"I am <name>"``),
  answers ``"added <name>"``; modern: tools list_changed on listens with
  ``toolsListChanged``; legacy: ``{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}``
  (no ``params``), always (no opt-in in the legacy protocol).
* ``end_subscriptions {}`` -> ``"ended"``; modern only in effect: ends every open listen
  gracefully, i.e. each gets its final response
  ``{"id":<listen id>,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":<id>,
  "io.modelcontextprotocol/serverInfo":{...}},"resultType":"complete"}}`` (sent before the
  ``end_subscriptions`` response).

Resource ``demo://a`` (name ``a``, ``text/plain``, text ``"content of a"``; listed with
``"description": ""``). Prompt ``greet {name}`` -> one user text message
``"Please greet <name>."`` (description ``"Greet someone."``).

Modern era (2026-07-28)
-----------------------
* Every result has ``resultType`` and ``_meta["io.modelcontextprotocol/serverInfo"]``.
  ``tools/list``: ``"ttlMs": 60000, "cacheScope": "private"`` (``cache_hints``);
  ``server/discover``, ``prompts/list``, ``resources/list``, ``resources/read``:
  ``"ttlMs": 0, "cacheScope": "private"`` (SDK default). ``tools/call``/``prompts/get``: none.
* Missing envelope -> -32602 ``"params._meta must be an object carrying the required
  'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities'
  envelope keys"``; only ``clientCapabilities`` missing -> -32602 ``"params._meta is missing
  the required envelope key(s): io.modelcontextprotocol/clientCapabilities"``.
  Unknown version -> ``{"code":-32022,"message":"Unsupported protocol version","data":
  {"supported":["2026-07-28"],"requested":"2099-01-01"}}``; such a first request still makes
  the connection modern, and a later request with 2026-07-28 succeeds.
* ``ping``, ``resources/subscribe``, ``logging/setLevel`` -> -32601 ``"Method not found"``
  (``data`` = the method name).
* The SDK does not reject a request id that equals a listen still open (it answered
  ``tools/list`` with id ``"L"`` while listen ``"L"`` was open).
* MRTR: the ``inputRequests`` key is the resolver's ``module:qualname``, here
  ``"__main__:ask_for_name"`` (it would differ if this module were imported). ``requestState``
  is always present: ``"v1."`` + ~330 base64url chars, AES-GCM sealed with a per-process
  random key, valid 600 s, bound to method + tool name + arguments digest, NOT single-use
  (the same state was accepted three times). A retry without ``requestState`` is treated as
  a first round (asks again, new state; stderr says the answer was discarded). A tampered
  state -> ``{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":
  "invalid_request_state"}}``. The ``requestedSchema`` on the modern wire has no ``title``
  (the legacy one has ``"title":"NameForm"``).
* ``subscriptions/listen`` works on stdio. The ack echoes only the requested kinds that are
  true (``toolsListChanged: false`` is dropped; ``{}`` is acknowledged as ``{}``); every
  notification on it carries the subscriptionId. After the client's
  ``notifications/cancelled {requestId: <listen id>}`` the stream stops and NO response is
  ever sent for the listen. Closing stdin with a listen open: exit 0, no final response.

Transcript (``->`` client, ``<-`` server; ``M`` = ``{"io.modelcontextprotocol/protocolVersion":
"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},
"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}``, ``SI`` =
``{"io.modelcontextprotocol/serverInfo":{"name":"sdk-server","version":"1.0.0"}}``,
``S`` = the sealed requestState)::

    -> {"jsonrpc":"2.0","id":"d1","method":"server/discover","params":{"_meta":M}}
    <- {"jsonrpc":"2.0","id":"d1","result":{"cacheScope":"private","capabilities":{"prompts":
       {"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":
       {"listChanged":true}},"resultType":"complete","supportedVersions":["2026-07-28"],
       "ttlMs":0,"_meta":SI}}
    -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_name",
       "arguments":{},"_meta":M}}
    <- {"jsonrpc":"2.0","id":3,"result":{"inputRequests":{"__main__:ask_for_name":{"method":
       "elicitation/create","params":{"message":"What is your name?","mode":"form",
       "requestedSchema":{"properties":{"name":{"title":"Name","type":"string"}},"required":
       ["name"],"type":"object"}}}},"requestState":S,"resultType":"input_required",
       "_meta":SI}}
    -> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask_name",
       "arguments":{},"inputResponses":{"__main__:ask_for_name":{"action":"accept",
       "content":{"name":"Ada"}}},"requestState":S,"_meta":M}}
    <- {"jsonrpc":"2.0","id":4,"result":{"content":[{"text":"hello Ada","type":"text"}],
       "isError":false,"resultType":"complete","structuredContent":{"result":"hello Ada"},
       "_meta":SI}}
    (same S with {"action":"decline"} -> "declined"; {"action":"cancel"} -> "cancelled")
    -> {"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":
       {"toolsListChanged":true,"resourceSubscriptions":["demo://a"]},"_meta":M}}
    <- {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":
       {"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"toolsListChanged":
       true,"resourceSubscriptions":["demo://a"]}}}
    -> {"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"touch","arguments":
       {"uri":"demo://a"},"_meta":M}}
    <- {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":
       {"io.modelcontextprotocol/subscriptionId":"L1"},"uri":"demo://a"}}
    <- {"jsonrpc":"2.0","id":10,"result":{"content":[{"text":"touched","type":"text"}],
       "isError":false,"resultType":"complete","structuredContent":{"result":"touched"},
       "_meta":SI}}
    -> {"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add_tool",
       "arguments":{"name":"newt"},"_meta":M}}
    <- {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":
       {"io.modelcontextprotocol/subscriptionId":"L1"}}}
    <- {"jsonrpc":"2.0","id":12,"result":{...,"structuredContent":{"result":"added newt"},...}}
    -> {"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"end_subscriptions",
       "arguments":{},"_meta":M}}
    <- {"jsonrpc":"2.0","id":"L1","result":{"_meta":{"io.modelcontextprotocol/subscriptionId":
       "L1","io.modelcontextprotocol/serverInfo":{"name":"sdk-server","version":"1.0.0"}},
       "resultType":"complete"}}
    <- {"jsonrpc":"2.0","id":13,"result":{...,"structuredContent":{"result":"ended"},...}}

Legacy era (2024-11-05 ... 2025-11-25, via ``initialize``)
----------------------------------------------------------
* ``initialize`` echoes 2024-11-05 / 2025-03-26 / 2025-06-18 / 2025-11-25; anything else
  (including "2026-07-28") is answered with ``"protocolVersion":"2025-11-25"``. No
  ``instructions``. Requests before ``initialize`` (e.g. an un-enveloped ``tools/list``) ->
  -32602 ``"Invalid request parameters"``; an un-enveloped ``server/discover`` -> -32601.
* Results have no ``resultType``, ``ttlMs``, ``cacheScope`` or serverInfo ``_meta``.
  ``ping`` -> ``{}``. ``subscriptions/listen`` -> -32601. Enveloped ``server/discover`` ->
  -32600 ``"this connection serves the handshake protocol era; requests carrying the
  2026-07-28 envelope are not accepted on it"``.
* ``ask_name`` sends a server->client ``elicitation/create`` with integer ids counting from 1
  and waits for the reply::

    -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
       "capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}}
    <- {"jsonrpc":"2.0","id":1,"result":{"capabilities":{...as above...},"protocolVersion":
       "2025-11-25","serverInfo":{"name":"sdk-server","version":"1.0.0"}}}
    -> {"jsonrpc":"2.0","method":"notifications/initialized","params":{}}
    -> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_name","arguments":{}}}
    <- {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"form","message":
       "What is your name?","requestedSchema":{"properties":{"name":{"title":"Name","type":
       "string"}},"required":["name"],"title":"NameForm","type":"object"}}}
    -> {"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Ada"}}}
    <- {"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"hello Ada","type":"text"}],
       "isError":false,"structuredContent":{"result":"hello Ada"}}}
    -> {"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"demo://a"}}
    <- {"jsonrpc":"2.0","id":7,"result":{}}
    -> {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"touch","arguments":
       {"uri":"demo://a"}}}
    <- {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://a"}}
    <- {"jsonrpc":"2.0","id":8,"result":{"content":[{"text":"touched","type":"text"}],
       "isError":false,"structuredContent":{"result":"touched"}}}
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import anyio
from mcp.server import CacheHint, NotificationOptions
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp_types import (
    EmptyResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

_bus = InMemorySubscriptionBus()
_listen = ListenHandler(_bus)

server: MCPServer[Any] = MCPServer(
    "sdk-server",
    version="1.0.0",
    cache_hints={"tools/list": CacheHint(ttl_ms=60000, scope="private")},
    subscriptions=_bus,
)

# URIs subscribed with the legacy resources/subscribe (one process = one client).
_legacy_subscriptions: set[str] = set()


class NameForm(BaseModel):
    name: str


def ask_for_name() -> Elicit[NameForm]:
    """Resolver: its wire key is ``<module>:ask_for_name`` (``__main__:...`` as a script)."""
    return Elicit("What is your name?", NameForm)


def _modern(ctx: Context[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


@server.tool()
def echo(text: str) -> str:
    """Return text unchanged."""
    return text


@server.tool()
def ask_name(answer: Annotated[ElicitationResult[NameForm], Resolve(ask_for_name)]) -> str:
    """Ask the user for a name (MRTR on 2026-07-28, elicitation/create before)."""
    if isinstance(answer, AcceptedElicitation):
        return f"hello {answer.data.name}"
    if isinstance(answer, DeclinedElicitation):
        return "declined"
    return "cancelled"


@server.tool()
async def touch(uri: str, ctx: Context[Any, Any]) -> str:
    """Send notifications/resources/updated for uri to its subscribers."""
    if _modern(ctx):
        await ctx.notify_resource_updated(uri)
    elif uri in _legacy_subscriptions:
        await ctx.session.send_resource_updated(uri)
    return "touched"


@server.tool()
async def add_tool(name: str, ctx: Context[Any, Any]) -> str:
    """Register a tool called name (it answers "I am <name>") and announce list_changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"added at runtime: {name}")
    if _modern(ctx):
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return f"added {name}"


# What became of each sleep call: "started", then "slept", or "cancelled" when the SDK
# cancelled its handler (legacy: notifications/cancelled; 2026: the request's stream closed).
_sleeps: list[str] = []


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, recording that the call started and whether it ended or was cancelled."""
    _sleeps.append("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _sleeps.append("cancelled")
        raise
    _sleeps.append("slept")
    return "slept"


@server.tool()
def sleeps() -> list[str]:
    """The outcome of every sleep call so far."""
    return list(_sleeps)


@server.tool()
def end_subscriptions() -> str:
    """End every open subscriptions/listen stream gracefully (final result per stream)."""
    _listen.close()
    return "ended"


@server.resource("demo://a", name="a", mime_type="text/plain")
def demo_a() -> str:
    return "content of a"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Please greet {name}."


async def _subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
    _legacy_subscriptions.add(str(params.uri))
    return EmptyResult()


async def _unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
    _legacy_subscriptions.discard(str(params.uri))
    return EmptyResult()


# MCPServer has no public hook for spec methods; the SDK's own advice (MethodBinding
# docstring) is the lowlevel Server.add_request_handler.
_lowlevel = server._lowlevel_server
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, _subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _unsubscribe)
# Our own ListenHandler on the same bus, so end_subscriptions can close() it.
_lowlevel.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, _listen)


async def main() -> None:
    # MCPServer.run() would advertise listChanged=false / subscribe=false in the
    # handshake era; pass the notification options ourselves.
    options = _lowlevel.create_initialization_options(
        NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        await _lowlevel.run(read_stream, write_stream, options)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        # Streamable HTTP on 127.0.0.1:<port>/mcp, both eras, as the SDK serves them.
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        # The 2024-11-05 HTTP+SSE transport on 127.0.0.1:<port>/sse (deprecated, still served).
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        anyio.run(main)
