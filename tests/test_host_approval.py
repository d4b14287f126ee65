"""The approval policy of the host layer (``mcp_proto.host._approval``): each dialect's keys
as parsed from a real config text, rules, annotations of trusted servers only, the ``ask``
callback's answers, denials, and (Hypothesis) that a decision is total, deterministic and
follows the first matching rule."""

from __future__ import annotations

import fnmatch
import gc
import inspect
import json
import pickle
import warnings
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._errors import MCPError
from mcp_proto._types import Tool
from mcp_proto.host import ServerSpec, parse_config
from mcp_proto.host._approval import (
    CODEX_MODES,
    DECISIONS,
    MAX_RULES,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalRule,
    ToolDenied,
    as_policy,
    denied_result,
)

CONFIGS = Path(__file__).resolve().parent / "host_configs"
SECRET = "hunter2-SECRET-VALUE"


def tool(name: str, **annotations: object) -> Tool:
    return Tool(name=name, input_schema={"type": "object"},
                annotations=dict(annotations) if annotations else None)


def spec(name: str = "srv", **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=("srv-mcp",), **fields)


ASK = ApprovalPolicy(default="ask")


# -- each dialect's keys, parsed from a config text ----------------------------------------

def test_gemini_trust_approves_every_tool_and_exclude_tools_still_deny() -> None:
    text = json.dumps({"mcpServers": {
        "py": {"command": "python", "args": ["-m", "tools"], "trust": True,
               "excludeTools": ["dangerous_tool"]},
        "plain": {"command": "plain-mcp"},
        "narrow": {"command": "narrow-mcp", "includeTools": ["safe_*"]},
    }})
    servers = parse_config(text, dialect="gemini").servers
    assert ASK.decide(servers["py"], tool("anything"))[0] == "allow"
    decision, why = ASK.decide(servers["py"], tool("dangerous_tool"))
    assert decision == "deny" and "excludeTools" in why
    assert ASK.decide(servers["plain"], tool("anything")) == ("ask",
                                                             "the policy's default is ask")
    assert ASK.decide(servers["narrow"], tool("safe_read"))[0] == "ask"
    decision, why = ASK.decide(servers["narrow"], tool("other"))
    assert decision == "deny" and "includeTools" in why


def test_gemini_trust_false_approves_nothing() -> None:
    text = json.dumps({"mcpServers": {"py": {"command": "python", "trust": False}}})
    servers = parse_config(text, dialect="gemini").servers
    assert ASK.decide(servers["py"], tool("x"))[0] == "ask"


def test_kiro_adk_auto_approve_from_the_fixture_file() -> None:
    text = (CONFIGS / "adk/.kiro/settings/mcp.json").read_text("utf-8")
    config = parse_config(text, path="/home/me/.kiro/settings/mcp.json")
    assert config.dialect == "adk"
    fetch = config.servers["fetch"]
    decision, why = ASK.decide(fetch, tool("fetch"))
    assert decision == "allow" and "autoApprove" in why
    assert ASK.decide(fetch, tool("fetch_all"))[0] == "ask"  # exact name, not a prefix


def test_adk_auto_approve_globs() -> None:
    text = json.dumps({"mcpServers": {"fs": {"command": "fs-mcp",
                                             "autoApprove": ["read_*", "list"]}}})
    fs = parse_config(text, dialect="adk").servers["fs"]
    assert [ASK.decide(fs, tool(n))[0] for n in ("read_file", "list", "write_file", "Read_x")] \
        == ["allow", "allow", "ask", "ask"]  # case-sensitive


def test_cline_like_always_allow_in_a_generic_file() -> None:
    text = json.dumps({"mcpServers": {
        "search": {"url": "https://search.example.com/mcp", "type": "http",
                   "alwaysAllow": ["search"]},
    }})
    search = parse_config(text, dialect="generic").servers["search"]
    assert search.auto_approve == ("search",)
    assert ASK.decide(search, tool("search"))[0] == "allow"
    assert ASK.decide(search, tool("purge"))[0] == "ask"


def test_windsurf_disabled_tools_deny_even_against_an_allow_rule() -> None:
    text = (CONFIGS / "windsurf/.codeium/windsurf/mcp_config.json").read_text("utf-8")
    config = parse_config(text, dialect="windsurf",
                          env={"GITHUB_TOKEN": "t", "FIGMA_TOKEN": "f"})
    github = config.servers["github"]
    allow_all = ApprovalPolicy(rules=[ApprovalRule("allow")], default="ask")
    decision, why = allow_all.decide(github, tool("delete_repository"))
    assert decision == "deny" and "disabledTools" in why
    assert allow_all.decide(github, tool("create_issue"))[0] == "allow"


CODEX_TOML = """
[mcp_servers.gh]
command = "gh-mcp"
default_tools_approval_mode = "approve"
disabled_tools = ["nuke"]

[mcp_servers.gh.tools.delete_repo]
approval_mode = "prompt"

[mcp_servers.gh.tools.list_repos]
approval_mode = "auto"

[mcp_servers.careful]
command = "careful-mcp"
default_tools_approval_mode = "prompt"

[mcp_servers.careful.tools.status]
approval_mode = "approve"

[mcp_servers.writes]
command = "writes-mcp"
default_tools_approval_mode = "writes"

[mcp_servers.auto]
command = "auto-mcp"
default_tools_approval_mode = "auto"

[mcp_servers.odd]
command = "odd-mcp"
default_tools_approval_mode = "never"

[mcp_servers.narrow]
command = "narrow-mcp"
enabled_tools = ["read"]
"""


@pytest.fixture(scope="module")
def codex() -> dict[str, ServerSpec]:
    config = parse_config(tomllib.loads(CODEX_TOML), path="/home/me/.codex/config.toml")
    assert config.dialect == "codex"
    return config.servers


def test_codex_modes_as_parsed_into_raw(codex: dict[str, ServerSpec]) -> None:
    assert codex["gh"].raw == {"default_tools_approval_mode": "approve", "tools": {
        "delete_repo": {"approval_mode": "prompt"}, "list_repos": {"approval_mode": "auto"}}}


def test_codex_default_mode_and_per_tool_override(codex: dict[str, ServerSpec]) -> None:
    gh, careful = codex["gh"], codex["careful"]
    allow_nothing = ApprovalPolicy(default="deny")
    decision, why = allow_nothing.decide(gh, tool("create_issue"))
    assert decision == "allow" and "default_tools_approval_mode" in why
    decision, why = allow_nothing.decide(gh, tool("delete_repo"))
    assert decision == "ask" and "tools.<tool>.approval_mode" in why and "'prompt'" in why
    assert allow_nothing.decide(careful, tool("anything"))[0] == "ask"
    assert allow_nothing.decide(careful, tool("status"))[0] == "allow"
    # a per-tool "auto" replaces the server's default: nothing from the config
    assert allow_nothing.decide(gh, tool("list_repos")) == ("deny",
                                                           "the policy's default is deny")
    assert allow_nothing.decide(gh, tool("nuke"))[0] == "deny"
    assert allow_nothing.decide(codex["narrow"], tool("write"))[0] == "deny"


def test_codex_writes_mode_reads_the_read_only_hint(codex: dict[str, ServerSpec]) -> None:
    writes = codex["writes"]
    policy = ApprovalPolicy(default="deny")  # the server is not in trusted
    assert policy.decide(writes, tool("get", readOnlyHint=True))[0] == "allow"
    assert policy.decide(writes, tool("put"))[0] == "ask"
    assert policy.decide(writes, tool("put", readOnlyHint="true"))[0] == "ask"


def test_codex_auto_defers_and_an_unknown_mode_asks(codex: dict[str, ServerSpec]) -> None:
    policy = ApprovalPolicy(default="allow", trusted=["auto"], destructive="deny")
    assert policy.decide(codex["auto"], tool("x")) == ("allow", "the policy's default is allow")
    assert policy.decide(codex["auto"], tool("rm", destructiveHint=True))[0] == "deny"
    decision, why = policy.decide(codex["odd"], tool("x"))
    assert decision == "ask" and "'never'" in why and "auto, prompt, writes, approve" in why


def test_codex_modes_table_is_codexs_enum() -> None:
    # AppToolApproval (codex-rs/config/src/mcp_types.rs), serde snake_case
    assert set(CODEX_MODES) == {"auto", "prompt", "writes", "approve"}


def test_use_config_false_ignores_the_approval_keys_but_not_the_filters() -> None:
    s = spec(auto_approve=("*",), exclude_tools=("rm",),
             raw={"default_tools_approval_mode": "approve"})
    own = ApprovalPolicy(default="ask", use_config=False)
    assert own.decide(s, tool("ls"))[0] == "ask"
    assert own.decide(s, tool("rm"))[0] == "deny"


def test_an_empty_include_list_allows_nothing() -> None:
    assert ApprovalPolicy().decide(spec(include_tools=()), tool("x"))[0] == "deny"


def test_non_codex_tools_key_without_approval_mode_says_nothing() -> None:
    # fastmcp's MCPConfig has a ``tools`` transform table: no approval_mode, no effect
    s = spec(raw={"tools": {"x": {"name": "renamed"}}, "default_tools_approval_mode": 3})
    decision, why = ASK.decide(s, tool("y"))
    assert decision == "ask" and "a value of type int" in why
    assert ApprovalPolicy().decide(spec(raw={"tools": {"x": {"name": "n"}}}), tool("x")) \
        == ("allow", "the policy's default is allow")


# -- rules ----------------------------------------------------------------------------------

def test_rules_first_match_wins_with_globs() -> None:
    policy = ApprovalPolicy(rules=[
        ApprovalRule("allow", server="git", tool="git_status"),
        ApprovalRule("deny", server="git", tool="git_*"),
        ApprovalRule("ask", server="g?t"),
        ApprovalRule("allow", tool="[rl]ead*"),
    ], default="deny")
    git = spec("git")
    assert policy.decide(git, tool("git_status"))[0] == "allow"
    decision, why = policy.decide(git, tool("git_push"))
    assert decision == "deny" and why.startswith("rule 2 ")
    assert policy.decide(git, tool("log"))[0] == "ask"
    assert policy.decide(spec("gut"), tool("x"))[0] == "ask"
    assert policy.decide(spec("fs"), tool("read_file"))[0] == "allow"
    assert policy.decide(spec("fs"), tool("lead"))[0] == "allow"
    assert policy.decide(spec("fs"), tool("Read"))[0] == "deny"  # case-sensitive
    assert policy.decide(spec("GIT"), tool("git_push"))[0] == "deny"  # default, not rule 2


def test_rules_come_before_the_config() -> None:
    s = spec("fs", auto_approve=("*",))
    policy = ApprovalPolicy(rules=[ApprovalRule("ask", tool="write_*")])
    assert policy.decide(s, tool("write_file"))[0] == "ask"
    assert policy.decide(s, tool("read_file"))[0] == "allow"
    codex_prompt = spec("c", raw={"default_tools_approval_mode": "prompt"})
    allow = ApprovalPolicy(rules=[ApprovalRule("allow", server="c", tool="status")])
    assert allow.decide(codex_prompt, tool("status"))[0] == "allow"
    assert allow.decide(codex_prompt, tool("other"))[0] == "ask"


def test_rules_match_the_tools_own_name_not_the_public_one() -> None:
    policy = ApprovalPolicy(rules=[ApprovalRule("deny", tool="srv__*")])
    assert policy.decide(spec(), tool("push"))[0] == "allow"


# -- annotations: only for trusted servers --------------------------------------------------

def test_untrusted_read_only_hint_does_not_allow() -> None:
    policy = ApprovalPolicy(default="ask")
    t = tool("read", readOnlyHint=True)
    assert policy.decide(spec("evil"), t)[0] == "ask"
    trusted = ApprovalPolicy(default="ask", trusted=["fs*"])
    decision, why = trusted.decide(spec("fs-local"), t)
    assert decision == "allow" and "readOnlyHint" in why
    assert trusted.decide(spec("evil"), t)[0] == "ask"


def test_untrusted_destructive_hint_does_not_ask() -> None:
    policy = ApprovalPolicy(default="allow")
    assert policy.decide(spec(), tool("rm", destructiveHint=True))[0] == "allow"
    assert ApprovalPolicy(trusted=["*"]).decide(spec(), tool("rm", destructiveHint=True))[0] \
        == "ask"


def test_the_strictest_hint_wins_and_only_exact_true_counts() -> None:
    policy = ApprovalPolicy(default="ask", trusted=["*"], open_world="deny")
    assert policy.decide(spec(), tool("t", readOnlyHint=True, destructiveHint=True))[0] == "ask"
    assert policy.decide(spec(), tool("t", readOnlyHint=True, openWorldHint=True))[0] == "deny"
    assert policy.decide(spec(), tool("t", readOnlyHint="true"))[0] == "ask"
    assert policy.decide(spec(), tool("t", readOnlyHint=1))[0] == "ask"
    assert policy.decide(spec(), tool("t", readOnlyHint=False, destructiveHint=False,
                                      openWorldHint=False))[0] == "ask"
    weird = Tool(name="t", input_schema={}, annotations=["readOnlyHint"])  # type: ignore[arg-type]
    assert policy.decide(spec(), weird)[0] == "ask"


def test_open_world_none_has_no_effect_and_none_disables_a_hint() -> None:
    default = ApprovalPolicy(default="allow", trusted=["*"])
    assert default.open_world is None
    assert default.decide(spec(), tool("web", openWorldHint=True))[0] == "allow"
    no_read_only = ApprovalPolicy(default="ask", trusted=["*"], read_only=None)
    assert no_read_only.decide(spec(), tool("r", readOnlyHint=True))[0] == "ask"
    read_only_mode = ApprovalPolicy(default="deny", trusted=["*"])
    assert read_only_mode.decide(spec(), tool("r", readOnlyHint=True))[0] == "allow"
    assert read_only_mode.decide(spec(), tool("w"))[0] == "deny"


def test_the_config_comes_before_annotations() -> None:
    policy = ApprovalPolicy(default="ask", trusted=["*"], destructive="deny")
    assert policy.decide(spec(auto_approve=("rm",)), tool("rm", destructiveHint=True))[0] \
        == "allow"


# -- asking ---------------------------------------------------------------------------------

def test_a_plain_callable_is_the_ask_step_alone() -> None:
    def fn(request: ApprovalRequest) -> str:
        return "allow"

    policy = as_policy(fn)
    assert policy == ApprovalPolicy(default="ask", ask=fn)
    assert as_policy(policy) is policy
    assert as_policy(None) is None
    # the config's auto-approval skips asking
    assert policy.check(spec(auto_approve=("ls",)), "srv__ls", tool("ls"), {}) is None
    request = policy.check(spec(), "srv__rm", tool("rm"), {"path": SECRET})
    assert isinstance(request, ApprovalRequest)
    assert request.reason == "the policy's default is ask"


def test_as_policy_refuses_other_values() -> None:
    with pytest.raises(TypeError, match="ApprovalPolicy, a callable or None, not int"):
        as_policy(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "allowed"), [
    ("allow", True), ("ALLOW", True), (" Allow\n", True), ("deny", False), ("Deny", False),
    (True, True), (False, False),
])
def test_answers(value: object, allowed: bool) -> None:
    assert ASK.answer(value)[0] is allowed


@pytest.mark.parametrize("value", [
    1, 0, None, "yes", "no", "ask", "", "allowed", b"allow", ["allow"], {"allow": True}, 1.0,
    "allow deny",
])
def test_any_other_answer_denies_with_a_reason(value: object) -> None:
    allowed, why = ASK.answer(value)
    assert allowed is False
    assert "'allow', 'deny', True or False" in why


def test_an_unawaited_coroutine_answer_denies_and_is_closed() -> None:
    async def fn() -> str:
        return "allow"

    coroutine = fn()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allowed, why = ASK.answer(coroutine)
        del coroutine
        gc.collect()
    assert allowed is False and "awaitable" in why


def test_a_closed_coroutine_state() -> None:
    async def fn() -> bool:
        return True

    coroutine = fn()
    ASK.answer(coroutine)
    assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED


def test_settle_allows_or_raises_with_both_reasons() -> None:
    policy = ApprovalPolicy(default="ask", ask=lambda r: "deny")
    request = policy.check(spec(), "srv__rm", tool("rm"), {"path": SECRET})
    assert request is not None
    policy.settle(request, True)
    with pytest.raises(ToolDenied) as info:
        policy.settle(request, "deny")
    assert "answered deny" in info.value.reason
    assert "asked because the policy's default is ask" in info.value.reason
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    assert SECRET not in denied_result(info.value).content[0].text  # type: ignore[union-attr]
    with pytest.raises(ToolDenied, match="answered 'maybe'"):
        policy.settle(request, "maybe")


def test_a_callback_error_denies_naming_only_its_type() -> None:
    policy = ApprovalPolicy(default="ask", ask=lambda r: "allow")
    request = policy.check(spec(), "srv__rm", tool("rm"), {"path": SECRET})
    assert request is not None
    error = ValueError(f"cannot show {SECRET}")
    with pytest.raises(ToolDenied) as info:
        policy.settle_error(request, error)
    assert info.value.__cause__ is error
    assert "raised ValueError" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_ask_without_a_callback_denies() -> None:
    with pytest.raises(ToolDenied, match="no approval callback is set"):
        ASK.check(spec(), "srv__x", tool("x"), None)


def test_check_allows_and_denies() -> None:
    policy = ApprovalPolicy(rules=[ApprovalRule("deny", tool="rm")])
    assert policy.check(spec(), "srv__ls", tool("ls"), None) is None
    with pytest.raises(ToolDenied) as info:
        policy.check(spec(), "srv__rm", tool("rm"), {"path": SECRET})
    denied = info.value
    assert (denied.server, denied.tool, denied.public) == ("srv", "rm", "srv__rm")
    assert denied.reason.startswith("rule 1 ")


def test_the_request_carries_copies_and_hides_argument_values() -> None:
    arguments = {"path": SECRET}
    annotations = {"readOnlyHint": True, "title": "Remove"}
    t = Tool(name="rm", input_schema={}, annotations=annotations)
    policy = ApprovalPolicy(default="ask", ask=lambda r: True, trusted=["srv"])
    request = policy.request(spec(), "srv__rm", t, arguments)
    assert request.reason == policy.decide(spec(), t)[1]
    assert dict(request.arguments) == arguments
    with pytest.raises(TypeError):
        request.arguments["path"] = "x"  # type: ignore[index]
    arguments["path"] = "changed"
    assert request.arguments["path"] == SECRET
    assert request.annotations == annotations and request.annotations is not annotations
    assert request.trusted is True
    assert policy.request(spec("other"), "o", t, None).trusted is False
    assert policy.request(spec("other"), "o", t, None).arguments == {}
    assert SECRET not in repr(request) and SECRET not in str(request)
    assert policy.request(spec(), "p", tool("x"), None, reason="why").reason == "why"


# -- denials --------------------------------------------------------------------------------

def test_tool_denied_is_a_permission_error_without_argument_values() -> None:
    exc = ToolDenied("git", "push", "git__push", "rule 1 of the policy says deny")
    assert isinstance(exc, PermissionError) and isinstance(exc, MCPError)
    assert str(exc) == ("call of 'git__push' (tool 'push') on server 'git' denied: "
                        "rule 1 of the policy says deny")
    again = pickle.loads(pickle.dumps(exc))
    assert (again.server, again.tool, again.public, again.reason, str(again)) == (
        exc.server, exc.tool, exc.public, exc.reason, str(exc))
    same = ToolDenied("s", "t", "t", "why")
    assert str(same) == "call of 't' on server 's' denied: why"


def test_long_names_are_cut_in_messages() -> None:
    exc = ToolDenied("s", "x" * 5000, "x" * 5000, "why")
    assert len(str(exc)) < 500 and "5,000 characters" in str(exc)


def test_denied_result_is_an_error_the_model_can_read() -> None:
    exc = ToolDenied("git", "push", "git__push", "the approval callback answered deny")
    result = denied_result(exc)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "'git__push' was not run" in text and "nothing was sent" in text
    assert "the approval callback answered deny" in text
    assert result.raw == {"content": [{"type": "text", "text": text}], "isError": True}


# -- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["Allow", "maybe", "", "prompt"])
def test_bad_decision_strings_are_value_errors_naming_the_value(bad: str) -> None:
    with pytest.raises(ValueError, match=repr(bad)):
        ApprovalRule(bad)  # type: ignore[arg-type]
    for name in ("default", "read_only", "destructive", "open_world"):
        with pytest.raises(ValueError, match=f"{name} must be one of.*{bad!r}"):
            ApprovalPolicy(**{name: bad})  # type: ignore[arg-type]


def test_a_decision_of_another_type_names_the_type() -> None:
    with pytest.raises(ValueError, match="a value of type bool"):
        ApprovalRule(True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a value of type NoneType"):
        ApprovalPolicy(default=None)  # type: ignore[arg-type]


def test_policy_construction_errors() -> None:
    with pytest.raises(TypeError, match="not one rule"):
        ApprovalPolicy(rules=ApprovalRule("deny"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rule 2 must be an ApprovalRule, not tuple"):
        ApprovalPolicy(rules=[ApprovalRule("deny"), ("deny", "*", "*")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at most 1,000"):
        ApprovalPolicy(rules=[ApprovalRule("deny")] * (MAX_RULES + 1))
    with pytest.raises(TypeError, match="not one string"):
        ApprovalPolicy(trusted="fs")
    with pytest.raises(TypeError, match="globs must be strings"):
        ApprovalPolicy(trusted=[1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="ask must be a callable"):
        ApprovalPolicy(ask="allow")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="use_config"):
        ApprovalPolicy(use_config=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="glob string"):
        ApprovalRule("deny", server=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ApprovalPolicy.from_callable("allow")  # type: ignore[arg-type]


def test_globs_are_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = fnmatch.translate

    def counting(pattern: str) -> str:
        calls.append(pattern)
        return real(pattern)

    monkeypatch.setattr(fnmatch, "translate", counting)
    policy = ApprovalPolicy(rules=[ApprovalRule("deny", server="a*", tool="b?")],
                            trusted=["t*"])
    s = spec("zz-unique-server", auto_approve=("zz-unique-*",), exclude_tools=("zz-x",))
    policy.decide(s, tool("q"))
    built = len(calls)
    assert built >= 4
    for name in ("q", "zz-unique-1", "zz-x", "b1"):
        policy.decide(s, tool(name))
    assert len(calls) == built


def test_decisions_table() -> None:
    assert DECISIONS == ("allow", "ask", "deny")


# -- Hypothesis: total, deterministic, first match wins -----------------------------------

NAMES = st.text(alphabet="ab_", min_size=0, max_size=3)
GLOBS = st.one_of(NAMES, st.sampled_from(["*", "a*", "*b", "?", "[ab]*", "[!a]*", "a?b"]))
RULES = st.lists(st.builds(ApprovalRule, st.sampled_from(DECISIONS), GLOBS, GLOBS),
                 max_size=6)
HINT = st.sampled_from([True, False, None, "true", 1])
ANNOTATIONS = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "readOnlyHint": HINT, "destructiveHint": HINT, "openWorldHint": HINT}))
SPECS = st.builds(
    lambda name, approve, exclude, include, mode: spec(
        name or "s", auto_approve=tuple(approve), exclude_tools=tuple(exclude),
        include_tools=None if include is None else tuple(include),
        raw={} if mode is None else {"default_tools_approval_mode": mode}),
    NAMES, st.lists(GLOBS, max_size=2), st.lists(GLOBS, max_size=2),
    st.one_of(st.none(), st.lists(GLOBS, max_size=2)),
    st.one_of(st.none(), st.sampled_from([*CODEX_MODES, "never", 7])))
TOOLS = st.builds(lambda n, a: Tool(name=n, input_schema={}, annotations=a), NAMES, ANNOTATIONS)
OPTIONAL = st.one_of(st.none(), st.sampled_from(DECISIONS))
POLICIES = st.builds(
    lambda rules, default, trusted, use_config, ro, de, ow: ApprovalPolicy(
        rules=rules, default=default, trusted=trusted, use_config=use_config, read_only=ro,
        destructive=de, open_world=ow),
    RULES, st.sampled_from(DECISIONS), st.lists(GLOBS, max_size=2), st.booleans(),
    OPTIONAL, OPTIONAL, OPTIONAL)


@settings(max_examples=300, deadline=None)
@given(POLICIES, SPECS, TOOLS)
def test_decide_is_total_deterministic_and_first_match_wins(
        policy: ApprovalPolicy, s: ServerSpec, t: Tool) -> None:
    decision, why = policy.decide(s, t)
    assert decision in DECISIONS and isinstance(why, str) and why
    assert policy.decide(s, t) == (decision, why)
    rebuilt = ApprovalPolicy(rules=[ApprovalRule(r.decision, r.server, r.tool)
                                    for r in policy.rules],
                             default=policy.default, trusted=list(policy.trusted),
                             use_config=policy.use_config, read_only=policy.read_only,
                             destructive=policy.destructive, open_world=policy.open_world)
    assert rebuilt.decide(s, t) == (decision, why)

    filtered = any(fnmatch.fnmatchcase(t.name, p) for p in s.exclude_tools) or (
        s.include_tools is not None
        and not any(fnmatch.fnmatchcase(t.name, p) for p in s.include_tools))
    first = next((i for i, r in enumerate(policy.rules, 1)
                  if fnmatch.fnmatchcase(s.name, r.server)
                  and fnmatch.fnmatchcase(t.name, r.tool)), None)
    if filtered:
        assert decision == "deny" and "the config" in why
    elif first is not None:
        assert decision == policy.rules[first - 1].decision
        assert why.startswith(f"rule {first} ")
    else:  # no rule matched: the same as the policy without rules
        without = ApprovalPolicy(default=policy.default, trusted=list(policy.trusted),
                                 use_config=policy.use_config, read_only=policy.read_only,
                                 destructive=policy.destructive, open_world=policy.open_world)
        assert without.decide(s, t) == (decision, why)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DECISIONS), st.lists(GLOBS, max_size=2), SPECS, TOOLS)
def test_annotations_of_untrusted_servers_never_change_a_decision(
        default: str, trusted: list[str], s: ServerSpec, t: Tool) -> None:
    policy = ApprovalPolicy(default=default, trusted=trusted,  # type: ignore[arg-type]
                            open_world="deny")
    bare = Tool(name=t.name, input_schema={})
    mode = s.raw.get("default_tools_approval_mode")
    if policy.is_trusted(s.name) or mode == "writes":
        return  # annotations count there, by design
    assert policy.decide(s, t) == policy.decide(s, bare)


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans(), st.floats(),
                 st.binary(max_size=4)))
def test_only_allow_or_true_allows(value: object) -> None:
    allowed, why = ASK.answer(value)
    expected = value is True or (isinstance(value, str) and value.strip().lower() == "allow")
    assert allowed is expected and why
