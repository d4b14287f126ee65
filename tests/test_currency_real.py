"""URL-mode elicitation and the client as a task receiver, against server-everything (issue 25).

server-everything registers its tools for these features only when the client declares
them: ``trigger-url-elicitation`` for ``elicitation.url`` (its request path sends a URL-mode
``elicitation/create``; its error path answers ``-32042`` and, on the retry, takes the
request path), ``trigger-sampling-request-async`` and ``trigger-elicitation-request-async``
for ``tasks.requests.*`` (it sends a task-augmented request, polls ``tasks/get`` each second
and fetches ``tasks/result``).  Every test runs in the three runtimes.
"""

from __future__ import annotations

from typing import Any

import pytest
from _bindings import BINDINGS, Binding, T, run

from mcp_proto import UrlElicitation, UrlElicitationRequired

URL = "https://example.com/consent?step=1"
URL_TOOL = "trigger-url-elicitation"
SAMPLING_TOOL = "trigger-sampling-request-async"
ELICITATION_TOOL = "trigger-elicitation-request-async"
#: server-everything polls the client's task every second; a few polls at most.
TASK_TIMEOUT = 40.0


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled by the host"},
            "model": "test-model", "stopReason": "endTurn"}


@pytest.mark.parametrize("binding", BINDINGS)
def test_f04_url_elicitation_reaches_the_handler_with_its_origin_apart(
        binding: str, everything_command: list[str]) -> None:
    """F-03/F-04: declaring a URL handler declares ``elicitation.url`` (the server lists its
    tool only then); the handler gets the server's name, the message, the full URL, its
    origin and host apart and the id; its "accept" is consent only (no content)."""
    seen: list[UrlElicitation] = []

    def on_url(elicitation: UrlElicitation) -> str:
        seen.append(elicitation)
        return "accept"

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T, label="everything",
                                   on_url_elicitation=on_url) as c:
            names = {t.name for t in await c.list_tools()}
            assert URL_TOOL in names
            result = await c.call_tool(URL_TOOL, {"url": URL, "message": "Sign in please",
                                                  "elicitationId": "e-1"})
            assert "User completed the URL elicitation" in result.text, result.text
            assert '"action": "accept"' in result.text and '"content"' not in result.text

    run(binding, scenario)
    [elicitation] = seen
    assert elicitation.server == "everything"
    assert (elicitation.url, elicitation.message) == (URL, "Sign in please")
    assert (elicitation.origin, elicitation.host) == ("https://example.com", "example.com")
    assert elicitation.elicitation_id == "e-1" and not elicitation.punycode


@pytest.mark.parametrize("binding", BINDINGS)
def test_f04_a_declined_url_elicitation_is_declined(binding: str,
                                                    everything_command: list[str]) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T,
                                   on_url_elicitation=lambda e: "decline") as c:
            await c.list_tools()
            result = await c.call_tool(URL_TOOL, {"url": URL})
            assert "declined" in result.text, result.text

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_f05_minus_32042_raises_after_the_handler_was_offered_each_then_a_retry_passes(
        binding: str, everything_command: list[str]) -> None:
    """F-05: ``-32042`` raises :class:`UrlElicitationRequired` listing the elicitations, each
    offered to the handler first (its answers in ``actions``); the caller's retry of the
    same call then goes through (server-everything takes the request path on the retry)."""
    offered: list[UrlElicitation] = []

    def on_url(elicitation: UrlElicitation) -> str:
        offered.append(elicitation)
        return "accept"

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T,
                                   on_url_elicitation=on_url) as c:
            await c.list_tools()
            arguments = {"url": URL, "errorPath": True}
            with pytest.raises(UrlElicitationRequired) as caught:
                await c.call_tool(URL_TOOL, arguments)
            error = caught.value
            assert error.code == -32042
            [needed] = error.elicitations
            assert needed.url == "https://modelcontextprotocol.io"
            assert error.actions == {needed.elicitation_id: "accept"}
            result = await c.call_tool(URL_TOOL, arguments)  # the host's retry
            assert "User completed the URL elicitation" in result.text, result.text

    run(binding, scenario)
    assert [e.url for e in offered] == ["https://modelcontextprotocol.io", URL]


@pytest.mark.parametrize("binding", BINDINGS)
def test_without_a_url_handler_url_mode_is_not_declared(binding: str,
                                                        everything_command: list[str]) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T,
                                   on_elicitation=lambda p: {"action": "decline"}) as c:
            names = {t.name for t in await c.list_tools()}
            assert URL_TOOL not in names and "trigger-elicitation-request" in names

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_tk_receiver_task_augmented_sampling_is_polled_and_fetched_by_the_server(
        binding: str, everything_command: list[str]) -> None:
    """The receiver paragraph of section 9.1: with ``task_receiver=True`` the client declares
    ``tasks.requests.sampling.createMessage``; server-everything's task-augmented sampling
    gets a CreateTaskResult, the host's handler runs as the task's work, the server polls
    ``tasks/get`` and fetches the result with ``tasks/result``."""
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T, on_sampling=sample,
                                   task_receiver=True) as c:
            names = {t.name for t in await c.list_tools()}
            assert SAMPLING_TOOL in names
            result = await c.call_tool(SAMPLING_TOOL, {"prompt": "hello"},
                                       timeout=TASK_TIMEOUT)
            assert "[COMPLETED]" in result.text and "sampled by the host" in result.text, \
                result.text
            assert "io.modelcontextprotocol/related-task" in result.text  # TK-04 on the result
            [task] = c.task_store.tasks()
            assert task.status == "completed" and task.method == "sampling/createMessage"

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_tk_receiver_task_augmented_elicitation_and_a_failing_handler(
        binding: str, everything_command: list[str]) -> None:
    """An elicitation run as a task completes with the host's answer; a sampling handler that
    raises makes its task ``failed`` with its message, which the server reports."""
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no model configured")

    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T,
                                   on_elicitation=lambda p: {"action": "decline"},
                                   on_sampling=broken, task_receiver=True) as c:
            names = {t.name for t in await c.list_tools()}
            assert ELICITATION_TOOL in names and SAMPLING_TOOL in names
            result = await c.call_tool(ELICITATION_TOOL, {}, timeout=TASK_TIMEOUT)
            assert "decline" in result.text, result.text
            failed = await c.call_tool(SAMPLING_TOOL, {"prompt": "x"}, timeout=TASK_TIMEOUT)
            assert "[FAILED]" in failed.text and "no model configured" in failed.text, \
                failed.text
            statuses = sorted(t.status for t in c.task_store.tasks())
            assert statuses == ["completed", "failed"]

    run(binding, scenario)


@pytest.mark.parametrize("binding", BINDINGS)
def test_without_task_receiver_the_server_asks_plainly(binding: str,
                                                       everything_command: list[str]) -> None:
    async def scenario(b: Binding) -> None:
        async with b.connect_stdio(everything_command, timeout=T, on_sampling=sample) as c:
            names = {t.name for t in await c.list_tools()}
            assert SAMPLING_TOOL not in names and "trigger-sampling-request" in names
            assert c.task_store is None

    run(binding, scenario)
