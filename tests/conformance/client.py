"""The client that the official MCP conformance suite runs (see README.md next to this file).

The harness runs ``<command> <server-url>``, with the scenario in ``MCP_CONFORMANCE_SCENARIO``.
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (0.2.x suites only) pins the protocol version, and
``MCP_CONFORMANCE_CONTEXT`` holds scenario data as JSON (http-custom-headers and the
credentials of some ``auth/*`` scenarios).  Each scenario is one function below.  Everything
on the wire (lifecycle, headers, ``_meta``, resumption, multi-round tool calls, the whole
authorization flow) is the library's job: this client only does what a host would do.

Every ``auth/*`` scenario is one host: pick the ``auth=`` object from the scenario's name and
context (:func:`auth_for`), then list the tools, call ``test-tool`` and close.  The suite's
authorization servers approve at once, so :class:`HeadlessRedirect` plays the browser.
Exit 0 when the scenario's work is done; otherwise one line on stderr and exit 1 (the
scenarios that test a refusal allow that exit).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bindings")]

from mcp_proto_io.threads import (  # noqa: E402
    ClientCredentials,
    EnterpriseManaged,
    HeadlessRedirect,
    HttpClient,
    JwtBearer,
    MemoryTokenStore,
    OAuth,
    connect_http,
)

from mcp_proto import AuthorizationError, SkillVerificationError  # noqa: E402

TIMEOUT = 20.0  # seconds per request; the harness gives the whole client 30 s


# -- host behaviour shared by scenarios --------------------------------------------------------


def example_value(schema: dict[str, Any]) -> Any:
    """A plausible argument for a JSON Schema property: its default, else one of its type."""
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [],
            "object": {}}.get(str(kind), "x")


def example_arguments(input_schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for every required property of a tool's input schema."""
    props = input_schema.get("properties") or {}
    required = input_schema.get("required") or []
    return {name: example_value(props.get(name) or {}) for name in required}


def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Elicitation handler: accept, filling each property from its ``default`` (SEP-1034);
    a required property without one gets a value of its type."""
    schema = params.get("requestedSchema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    content = {name: example_value(prop) for name, prop in props.items()
               if "default" in prop or name in required}
    return {"action": "accept", "content": content}


def sample(params: dict[str, Any]) -> dict[str, Any]:
    """Sampling handler: a fixed assistant message."""
    return {"role": "assistant", "content": {"type": "text", "text": "ok"},
            "model": "conformance-client", "stopReason": "endTurn"}


def context() -> dict[str, Any]:
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def call_listed_tools(client: HttpClient) -> None:
    """List the tools, then call each one with example arguments."""
    for tool in client.list_tools():
        client.call_tool(tool.name, example_arguments(tool.input_schema))


class ScenarioFailed(Exception):
    pass


# -- the scenarios -----------------------------------------------------------------------------


def initialize(client: HttpClient) -> None:
    client.list_tools()


def tools_call(client: HttpClient) -> None:
    names = [t.name for t in client.list_tools()]
    if "add_numbers" not in names:
        raise ScenarioFailed(f"add_numbers not listed: {names}")
    result = client.call_tool("add_numbers", {"a": 5, "b": 3})
    if result.is_error:
        raise ScenarioFailed(f"add_numbers failed: {result.text}")


def elicitation_defaults(client: HttpClient) -> None:
    client.list_tools()
    result = client.call_tool("test_client_elicitation_defaults", {})
    if result.is_error:
        raise ScenarioFailed(f"test_client_elicitation_defaults failed: {result.text}")


def sse_retry(client: HttpClient) -> None:
    client.list_tools()
    client.call_tool("test_reconnection", {})  # the library resumes the dropped stream


def request_metadata(client: HttpClient) -> None:
    call_listed_tools(client)


def request_state(client: HttpClient) -> None:
    names = {t.name for t in client.list_tools()}
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                 "test_mrtr_no_result_type"):
        if name not in names:
            raise ScenarioFailed(f"{name} not listed")
        client.call_tool(name, {})  # input_required rounds go through accept_with_defaults


def standard_headers(client: HttpClient) -> None:
    call_listed_tools(client)
    for resource in client.list_resources():
        client.read_resource(resource.uri)
    for prompt in client.list_prompts():
        client.get_prompt(prompt.name, {})


def custom_headers(client: HttpClient) -> None:
    client.list_tools()  # learns the x-mcp-header annotations
    for call in context().get("toolCalls", []):
        client.call_tool(call["name"], call.get("arguments") or {})


def invalid_tool_headers(client: HttpClient) -> None:
    call_listed_tools(client)  # the library must have dropped the invalid tools


def json_schema_ref_no_deref(client: HttpClient) -> None:
    client.list_tools()


def json_schema_preservation(client: HttpClient) -> None:
    tools = {t.name: t for t in client.list_tools()}
    focal = tools.get("json_schema_2020_12_tool")
    if focal is None or "json_schema_echo" not in tools:
        raise ScenarioFailed(f"expected tools not listed: {sorted(tools)}")
    client.call_tool("json_schema_echo", {"schema": focal.input_schema})


# Skills extension (SEP-2640), through the library's skills API: listing reads nothing; loading
# a skill reads its SKILL.md, checks its size, digest and frontmatter against the entry, and only
# then reads the files the entry lists (each checked too).


def skills_no_prefetch(client: HttpClient) -> None:
    client.list_skills()  # listing alone must not read any skill file


def skills_verify(client: HttpClient) -> None:
    for skill in client.list_skills():
        try:
            loaded = client.read_skill(skill)
            for file in skill.files or ():
                if file.uri != skill.uri:
                    client.read_skill_file(loaded, file.path)
        except SkillVerificationError as exc:  # the tampered skill is refused: the point
            print(f"skill refused: {type(exc).__name__}: {exc}", file=sys.stderr)


# Authorization (auth/*).  The host's choices: its name, a client ID metadata document URL (the
# suite's constant, which its authorization servers never fetch), tokens in memory only.

CLIENT_NAME = "mcp-proto conformance client"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def auth_for(scenario: str, ctx: dict[str, Any]) -> Any:
    """The ``auth=`` object for an ``auth/*`` scenario, from the credentials its context
    carries (keys first: the enterprise scenario was renamed between suite versions)."""
    if "private_key_pem" in ctx:  # client-credentials-jwt
        return ClientCredentials(ctx["client_id"], private_key=ctx["private_key_pem"])
    if "idp_token_endpoint" in ctx:  # cross-app-access-complete-flow / enterprise-managed-...
        return EnterpriseManaged(
            ctx["client_id"], ctx.get("client_secret"),
            idp_token_endpoint=ctx["idp_token_endpoint"], id_token=ctx["idp_id_token"],
            idp_client_id=ctx.get("idp_client_id"))
    if "valid_jwt" in ctx:  # wif-jwt-bearer
        return JwtBearer(assertion=ctx["valid_jwt"], client_id=ctx.get("client_id"))
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(ctx["client_id"], client_secret=ctx["client_secret"])
    if "client_id" in ctx and "client_secret" in ctx:  # pre-registration
        return OAuth(client_name=CLIENT_NAME, redirect=HeadlessRedirect(),
                     store=MemoryTokenStore(), client_id=ctx["client_id"],
                     client_secret=ctx["client_secret"])
    return OAuth(client_name=CLIENT_NAME, redirect=HeadlessRedirect(), store=MemoryTokenStore(),
                 client_metadata_url=CLIENT_METADATA_URL,
                 dpop=scenario.startswith("auth/dpop"))


def authorized_tool_call(client: HttpClient) -> None:
    """What the suite's reference client does once authorized: list, call, close."""
    names = [t.name for t in client.list_tools()]
    if "test-tool" not in names:
        raise ScenarioFailed(f"test-tool not listed: {names}")
    client.call_tool("test-tool", {})


def run_auth(scenario: str, url: str) -> int:
    try:
        auth = auth_for(scenario, context())
        with connect_http(
            url, auth=auth, timeout=TIMEOUT,
            protocol_version=os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None,
        ) as client:
            authorized_tool_call(client)
    except Exception as exc:  # an AuthorizationError is the point of several scenarios
        kind = "refused" if isinstance(exc, AuthorizationError) else "failed"
        print(f"{scenario}: {kind}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


SCENARIOS: dict[str, Callable[[HttpClient], None]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "sep-2640-client-no-prefetch": skills_no_prefetch,
    "sep-2640-client-verify-digest": skills_verify,
    "sep-2640-client-verify-size": skills_verify,
    "sep-2640-client-verify-frontmatter": skills_verify,
}


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario.startswith("auth/") and len(argv) >= 2:
        return run_auth(scenario, argv[-1])
    run = SCENARIOS.get(scenario)
    if run is None or len(argv) < 2:
        print(f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(SCENARIOS)}|auth/...> client.py URL "
              f"(got scenario {scenario!r})", file=sys.stderr)
        return 2
    client = connect_http(
        argv[-1],
        timeout=TIMEOUT,
        protocol_version=os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None,
        on_elicitation=accept_with_defaults,
        on_sampling=sample,
        roots=[],
    )
    try:
        run(client)
    except Exception as exc:
        print(f"{scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
