"""Between the Host and the model, written once (the source of ``_syncmodel``).

What a model loop asks of the Host every turn, over the Host's moves (:mod:`._async`) and its
resources and prompts (:mod:`._asynccatalog`): tool definitions per target computed once per
listing (deferred ones marked for the provider's own tool search, or replaced by the
meta-tools), tool search over every server's listing, each running server's instructions, a
tool call on the model's path (the host's approval and validation decided before anything
is sent, the result cut to a budget and kept whole for ``mcp_read_result``) and the
meta-tools.  Every decision is :mod:`mcp_proto.host`'s (``ApprovalPolicy``,
``ValidatorCache``, ``budget_result``, ``ToolIndex``, ``deferred_definitions``,
``format_instructions``); this module carries them out on every path a call can take.

Async source, like :mod:`._async` (same rules: every access to the host's state inside
``with self._guard:``, no await inside it); ``.ci/make_host.py`` writes the threads twin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp_proto import CallToolResult, MCPError, SkillFileError
from mcp_proto.host import (
    CONTENT_TARGETS,
    DEFAULT_INSTRUCTIONS_CHARS,
    DEFAULT_INSTRUCTIONS_TOTAL,
    DEFAULT_META_READ_LENGTH,
    MAX_SEARCH_LIMIT,
    META_TOOLS,
    TOOL_TARGETS,
    Budget,
    Budgeted,
    Deferred,
    HostConfig,
    HostTool,
    InvalidArguments,
    InvalidOutput,
    MetaRequest,
    MetaToolError,
    ProviderContent,
    ResultPage,
    ResultStore,
    SearchHit,
    ServerSpec,
    ToolDenied,
    ToolIndex,
    UnknownResult,
    budget_result,
    default_budget,
    deferred_definitions,
    deferred_key,
    format_instructions,
    meta_error,
    meta_result,
    page_result,
    parse_meta_call,
    prompt_result,
    resource_listing,
    resource_result,
    search_result,
    skill_file_text,
    skill_instructions,
    skill_listing,
    text_result,
    to_provider_content,
    tool_definition,
)

# -- the client side; for threads, .ci/make_host.py writes instead:
#    from .._handlers import ProgressCallback, StatusCallback
from .._handlers import ProgressCallback, StatusCallback
from ._asynccatalog import AsyncCatalogBase
from ._common import (
    HostOptions,
    meta_message,
    meta_public_name,
    meta_raw,
    meta_servers,
    meta_tools_listing,
    refused_result,
)

__all__ = ["AsyncModelBase"]

#: Definition lists kept per listing (target x deferred patterns, least recently used
#: dropped): a model loop asks for one or two; a host deferring other tools every turn must
#: not keep a copy of 10,000 definitions per turn.
MAX_DEFINITION_SETS = 16
#: Times a ``mcp_read_result`` page is halved to fit the budget whole.
MAX_PAGE_FITS = 8

#: The meta-tools :meth:`AsyncModelBase._run_context` runs.
_CONTEXT_KINDS = frozenset({"search", "read_result", "resources", "read_resource", "prompt",
                            "skills", "load_skill", "read_skill_file"})


class AsyncModelBase(AsyncCatalogBase):
    """The Host between its servers and a model (a subclass of the Host's moves and its
    catalog, on any runtime)."""

    def __init__(self, config: HostConfig, options: HostOptions,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(config, options, clock)
        self._results = options.result_store if options.result_store is not None \
            else ResultStore()  # whole results cut to a budget, for mcp_read_result
        self._index: ToolIndex | None = None  # the tool search's, of listing _index_of
        self._index_of = -1
        # tool_definitions' answers per (target, deferred), of the listing _deferred_of
        self._deferred: dict[tuple[str, object], list[dict[str, Any]]] = {}
        self._deferred_of = -1

    # -- tools for the model ----------------------------------------------------------------

    async def tool_definitions(self, target: str, *, timeout: float | None = None,
                               deferred: Deferred = None) -> list[dict[str, Any]]:
        """Every tool as a function tool of ``target`` (``openai``, ``openai-strict``,
        ``openai-responses[-strict]``, ``anthropic``, ``gemini``, ``gemini-openapi``) under
        its public name.  A tool whose schema the target cannot take is left out (see
        :func:`mcp_proto.host.tool_definitions` for the reasons); ``timeout`` and the
        servers left out as for :meth:`list_tools`.  The definitions are computed once per
        listing and target (a model loop asks every turn: the next call costs a shallow
        copy of each definition: add keys freely, but copy a nested value before changing
        it).

        ``deferred`` (True: all; glob patterns over the public names; None: none) marks
        tools for the provider's own deferred loading where it has one (Anthropic's
        ``defer_loading`` with its BM25 tool search tool, OpenAI Responses' with
        ``tool_search``); other targets get, in place of the deferred tools, the meta-tools
        ``mcp_search`` and ``mcp_call`` (run them with :meth:`call_meta_tool`).
        ``ValueError`` for an unknown target."""
        if target not in TOOL_TARGETS:
            raise ValueError(f"unknown target {target!r}: one of {', '.join(TOOL_TARGETS)}")
        key = (target, deferred_key(deferred))
        with self._guard:
            self._check_open()
            until = self._clock() + (self._core.timeout if timeout is None else timeout)
        await self._start_unlisted(until=until)
        await self._wait_listings(until=until)
        with self._guard:
            core = self._core
            if self._deferred_of != core.generation:
                self._deferred.clear()
                self._deferred_of = core.generation
            cached = self._deferred.pop(key, None)
            if cached is None:
                cached = core.definitions(target)
                if key[1] is not False:
                    cached = deferred_definitions(cached, target, deferred)
                while len(self._deferred) >= MAX_DEFINITION_SETS:
                    del self._deferred[next(iter(self._deferred))]  # the least recently used
            self._deferred[key] = cached
        # each definition a copy: a caller adding its own keys (Anthropic's cache_control)
        # changes its list, never the next turn's
        return [dict(d) for d in cached]

    async def search_tools(self, query: str, *, limit: int = 10,
                           timeout: float | None = None) -> list[SearchHit]:
        """The tools of every server ranked for ``query`` (BM25 over names, titles,
        descriptions and parameters: see :class:`~mcp_proto.host.ToolIndex`), best first,
        at most ``limit``.  Servers not started yet (lazy) are started and listed first
        (``timeout`` as for :meth:`list_tools`); servers stopped until used, in backoff or
        failed are searched in their last listing.  ``[]`` when nothing matches;
        ``ValueError`` for a ``limit`` out of range."""
        if isinstance(limit, bool) or not isinstance(limit, int) \
                or not 1 <= limit <= MAX_SEARCH_LIMIT:  # before any server is started
            raise ValueError(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}")
        with self._guard:
            self._check_open()
            until = self._clock() + (self._core.timeout if timeout is None else timeout)
        await self._start_unlisted(until=until)
        await self._wait_listings(until=until)
        return self._tool_index().search(query, limit=limit)

    def _tool_index(self) -> ToolIndex:
        """The search index of the current listing, built at most once per listing (outside
        the guard: 10,000 tools take a moment, and calls go on meanwhile)."""
        with self._guard:
            generation = self._core.generation
            if self._index is not None and self._index_of == generation:
                return self._index
            tools = self._core.all_tools()
            previous = self._index  # its entries for tools that did not change are reused
        index = ToolIndex(tools, previous=previous)
        with self._guard:
            if self._core.generation == generation:
                self._index, self._index_of = index, generation
        return index

    def instructions(self, *, max_chars: int = DEFAULT_INSTRUCTIONS_CHARS,
                     max_total: int = DEFAULT_INSTRUCTIONS_TOTAL) -> str:
        """Every running server's ``instructions`` as one text for a system prompt: each in
        a section labelled with its server (and fenced: a server's text cannot close its
        section), each cut to ``max_chars``, all to ``max_total`` (see
        :func:`~mcp_proto.host.format_instructions`).  Starts nothing: a server not running
        is left out (lazy: ask again after its first use).  ``""`` when none gave any."""
        with self._guard:
            self._check_open()
            given = [(name, run.client.instructions) for name, run in self._runs.items()
                     if run.client is not None and self._core.state(name) == "running"]
            order = {name: i for i, name in enumerate(self._core.names())}
        given.sort(key=lambda pair: order.get(pair[0], len(order)))
        return format_instructions(given, max_chars=max_chars, max_total=max_total)

    def read_result(self, handle: str, *, offset: int = 0,
                    length: int = DEFAULT_META_READ_LENGTH) -> ResultPage:
        """A page of a whole result that a budget cut (what ``mcp_read_result`` gives the
        model): ``length`` characters from ``offset`` of its text.  Raises
        :class:`~mcp_proto.host.UnknownResult` for a handle evicted or never given, and
        ``ValueError`` for a bad offset or length."""
        with self._guard:
            return self._results.read(handle, offset, length)

    async def call_tool(self, name: str, arguments: dict[str, Any] | str | None = None, *,
                        timeout: float | None = None,
                        on_progress: ProgressCallback | None = None,
                        provider: str | None = None, task: bool | None = None,
                        on_task_status: StatusCallback | None = None,
                        budget: Budget | str | None = None) -> CallToolResult:
        """Call the tool whose public name is ``name`` and wait for its result.

        ``provider`` (a target of :meth:`tool_definitions`) makes this the model's path:
        that target's argument fixes apply first (under ``openai-strict`` the ``null`` a
        model sends for a field that was optional is removed), and what the host's policy
        refuses comes back as an ``isError`` result the model can read (a denial, arguments
        that fail the tool's ``inputSchema``, output that fails its ``outputSchema`` when
        the validation says ``"result"``) instead of an exception.  ``budget`` (a
        :class:`~mcp_proto.host.Budget`, ``"default"`` for ``provider``'s default, None:
        the host's ``budget`` on the model's path, else none) cuts the result to that size,
        keeping its head and tail; the whole result is kept for ``mcp_read_result`` /
        :meth:`read_result` (the marker in the text names its handle).
        ``timeout`` (seconds, total) defaults to the server's, else the host's; the time an
        approval takes to be answered is not counted.  A server that is starting, or in
        backoff with its restart before the deadline, is waited for.  A name no listing has
        yet starts (lazy) or waits for only the servers that may own it
        (:meth:`HostCore.owners`), then the rest.  ``task`` and ``on_task_status`` are the
        client's (a call that may run as a task, and each of its statuses).
        Raises :class:`~mcp_proto.host.UnknownTool` (no such public name, even after listing
        tools again; nothing was sent), :class:`~mcp_proto.host.ServerUnavailable` (failed,
        disabled, or not back before the deadline, also when only such a server could own
        the name; nothing was sent), :class:`~mcp_proto.host.ToolDenied` and
        :class:`~mcp_proto.host.InvalidArguments` (nothing was sent; raised on the direct
        path only), :class:`~mcp_proto.host.InvalidOutput` (when the validation says
        ``"raise"``), and whatever the server's client raises
        (:class:`~mcp_proto.ServerExited`: the call is not replayed).
        A result with ``is_error`` is returned, not raised.
        """
        model = provider is not None
        chosen = self._budget_for(budget, provider, model)  # ValueError: nothing sent
        try:
            result = await self._call(name, arguments, timeout=timeout, on_progress=on_progress,
                                      fix=provider, task=task, on_task_status=on_task_status,
                                      model=model)
        except (ToolDenied, InvalidArguments) as exc:
            if not model:
                raise
            result = refused_result(exc)
        if chosen is None:
            return result
        return self._budgeted(result, chosen).result

    def _budget_for(self, budget: Budget | str | None, target: str | None,
                    model: bool) -> Budget | None:
        """The budget a call names: ``"default"`` is ``target``'s; None is the host's on
        the model's path, else none.  ``ValueError`` for another string."""
        if isinstance(budget, str):
            if budget != "default":
                raise ValueError(f"budget must be a Budget, \"default\" or None, not "
                                 f"{budget!r}")
            if target is None:
                raise ValueError("budget=\"default\" needs provider= (each target has its "
                                 "own default)")
            return default_budget(target)
        if budget is None and model:
            return self._options.budget
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget, \"default\" or None, not "
                            f"{type(budget).__name__}")
        return budget

    def _budgeted(self, result: CallToolResult, budget: Budget) -> Budgeted:
        """``result`` within ``budget``; when its text had to be cut, the whole of it is
        kept in the host's store under the handle its marker names (then budgeted again, to
        name it).  The budget is worked out outside the guard (its ``count_tokens`` is the
        host's code)."""
        budgeted = budget_result(result, budget)
        if not budgeted.omitted:
            return budgeted
        with self._guard:
            handle = self._results.put(result)
        return budgeted if handle is None else budget_result(result, budget, handle=handle)

    def _content(self, result: CallToolResult, provider: str, name: str,
                 budget: Budget | None, keep: bool = True) -> ProviderContent:
        """``result`` as ``provider``'s content within ``budget``, kept whole in the store
        when it was cut and ``keep`` (as :meth:`_budgeted`)."""
        if budget is None:
            return to_provider_content(result, provider, name=name)
        handle = None
        if keep and budget_result(result, budget).omitted:
            with self._guard:
                handle = self._results.put(result)
        return to_provider_content(result, provider, name=name, budget=budget, handle=handle)

    async def _check_call(self, spec: ServerSpec, tool: HostTool,
                          arguments: dict[str, Any] | None) -> bool:
        """The policy's checks of one call, before anything is sent: its arguments against
        the tool's ``inputSchema`` (:class:`~mcp_proto.host.InvalidArguments`), then the
        approval (:class:`~mcp_proto.host.ToolDenied`; an ``ask`` waits for the host's
        answer, outside the guard).  True when the host's ask callback was asked."""
        validators = self._validators
        validation = self._options.validation
        if validators is not None and validation is not None and validation.arguments:
            with self._guard:  # the cache is the host's state (compiled once per tool)
                validators.check_arguments(spec.name, tool.definition, arguments or {},
                                           name=tool.name)
        policy = self._options.approval
        if policy is None:
            return False
        request = policy.check(spec, tool.name, tool.definition, arguments)  # ToolDenied
        if request is None:
            return False
        ask = policy.ask
        assert ask is not None  # check() denies an ask without a callback
        try:
            answer = await self._answer(ask, request)
        except Exception as exc:  # a broken callback denies: nothing is sent
            policy.settle_error(request, exc)
        policy.settle(request, answer)
        return True

    async def _answer(self, ask: Callable[[Any], Any], request: Any) -> Any:
        """The ask callback's answer to ``request`` (awaited when it is a coroutine, on
        asyncio and trio); the runtime's subclass says how."""
        raise NotImplementedError

    def _check_output(self, server: str, tool: HostTool, result: CallToolResult
                      ) -> CallToolResult:
        """``result`` checked against the tool's ``outputSchema``: as it is when it passes;
        when it fails, :class:`~mcp_proto.host.InvalidOutput` (the validation's
        ``"raise"``) or an ``isError`` result naming what is wrong (``"result"``)."""
        validators = self._validators
        validation = self._options.validation
        if validators is None or validation is None or not validation.output:
            return result
        try:
            with self._guard:
                validators.check_output(server, tool.definition, result, name=tool.name)
        except InvalidOutput as exc:
            if validation.on_output_error == "raise":
                raise
            return refused_result(exc)
        return result

    # -- meta-tools ---------------------------------------------------------------------------

    def meta_tools(self, target: str, *, include: Sequence[str] | None = None
                   ) -> list[dict[str, Any]]:
        """The definitions of the meta-tools for ``target`` (all of :data:`META_TOOLS`, or
        those named in ``include``, in that order): ``mcp_list``, ``mcp_call`` and
        ``mcp_request`` reach every server (for a model that does not get every tool),
        ``mcp_search`` finds tools, ``mcp_read_result`` pages a result cut to a budget,
        ``mcp_list_resources``, ``mcp_read_resource`` and ``mcp_get_prompt`` reach the
        servers' resources and prompts.  Run them with :meth:`call_meta_tool`.
        ``KeyError`` for a name in ``include`` that is not a meta-tool; ``ValueError`` for
        an unknown target."""
        names = list(META_TOOLS) if include is None else list(include)
        return [tool_definition(META_TOOLS[name], target) for name in names]

    async def call_meta_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                             provider: str, budget: Budget | str | None = None
                             ) -> ProviderContent:
        """Run meta-tool ``name`` and return its outcome as ``provider``'s content.  A
        model's mistake (a bad argument, an unknown server, tool, resource or prompt), a
        call the policy refuses and a server's failure come back as an ``isError`` result
        the model can read.  ``budget`` as for :meth:`call_tool` (None: the host's); a result
        cut to it is kept whole for ``mcp_read_result``.  ``KeyError`` for a name that is
        not a meta-tool; ``ValueError`` for an unknown provider."""
        if provider not in CONTENT_TARGETS:  # before anything runs
            raise ValueError(f"unknown provider {provider!r}; expected one of "
                             f"{', '.join(CONTENT_TARGETS)}")
        chosen = self._budget_for(budget, provider, True)
        with self._guard:
            self._check_open()
            servers = self._core.names()
        request: MetaRequest | None = None
        try:
            request = parse_meta_call(name, arguments, servers)
            result = await self._run_meta(request, chosen)
        except MetaToolError as exc:
            result = meta_error(str(exc))
        except MCPError as exc:  # the server's failure: no stderr for the model
            server = getattr(exc, "server", None) if request is None or request.server is None \
                else request.server
            with self._guard:
                redactor = self._redactor(server) if isinstance(server, str) else None
            result = meta_error(meta_message(exc, redactor))
        # a page is what the model asked for: read within the budget, and keep no copy of it
        keep = request is None or request.kind != "read_result"
        return self._content(result, provider, name, chosen, keep)

    def _page(self, request: MetaRequest, budget: Budget | None) -> CallToolResult:
        """``mcp_read_result``'s page, as long as ``budget`` lets it be whole: a page cut in
        the middle would lose text the trailer's next offset skips.  Halved at most
        :data:`MAX_PAGE_FITS` times; past that the budget cuts the last try (its marker says
        what is left out)."""
        assert request.handle is not None
        length = request.length
        for _ in range(MAX_PAGE_FITS):
            try:
                page = self.read_result(request.handle, offset=request.offset, length=length)
            except (UnknownResult, ValueError) as exc:
                raise MetaToolError(str(exc)) from None
            result = page_result(page)
            if budget is None or length <= 1 or not budget_result(result, budget).omitted:
                return result
            length = max(1, length // 2)
        return result

    async def _run_meta(self, request: MetaRequest, budget: Budget | None) -> CallToolResult:
        server = request.server
        kind = request.kind
        if kind == "servers":
            with self._guard:
                return meta_servers(self._core, self._clock())
        if kind in _CONTEXT_KINDS:
            return await self._run_context(request, budget)
        assert server is not None
        if kind == "close":
            await self.stop_server(server)
            return meta_result({"server": server, "closed": True})
        if kind == "call":
            assert request.tool is not None
            await self._start_unlisted([server], request.timeout)  # lazy: its tools first
            with self._guard:
                public = meta_public_name(self._core, server, request.tool)
            # no argument fixes: the model wrote these for the tool's own schema; the
            # policy's refusals come back as results the model reads
            try:
                return await self._call(public, request.arguments, timeout=request.timeout,
                                        on_progress=None, fix=None, task=None,
                                        on_task_status=None, model=True)
            except (ToolDenied, InvalidArguments) as exc:
                return refused_result(exc)
        client = await self._in_use(server, request.timeout)
        if kind == "tools":
            fresh = await client.list_tools(timeout=request.timeout)
            with self._guard:
                return meta_tools_listing(self._core, server, fresh)
        assert request.method is not None
        raw = await client.send_request(request.method, request.arguments or None,
                                        timeout=request.timeout)
        with self._guard:
            return meta_raw(self._core, server, request.method, raw)

    # -- the meta-tools that reach search, results, resources and prompts ---------------------

    async def _run_context(self, request: MetaRequest, budget: Budget | None
                           ) -> CallToolResult:
        """The meta-tools that search tools, page results, and reach resources and
        prompts."""
        kind = request.kind
        if kind == "search":
            assert request.query is not None
            hits = await self.search_tools(request.query, limit=request.limit,
                                           timeout=request.timeout)
            return search_result(hits)
        if kind == "read_result":
            return self._page(request, budget)
        if kind == "resources":
            resources = await self.list_resources(timeout=request.timeout)
            templates = await self.list_resource_templates(timeout=request.timeout)
            if request.server is not None:
                resources = [r for r in resources if r.server == request.server]
                templates = [t for t in templates if t.server == request.server]
            return resource_listing(resources, templates)
        if kind == "read_resource":
            assert request.uri is not None
            return resource_result(await self.read_resource(
                request.uri, server=request.server, timeout=request.timeout))
        if kind == "prompt":
            assert request.tool is not None
            return prompt_result(await self.get_prompt(request.tool, request.arguments or None,
                                                       timeout=request.timeout))
        return await self._run_skill(request)

    async def _run_skill(self, request: MetaRequest) -> CallToolResult:
        """``mcp_list_skills``, ``mcp_load_skill`` and ``mcp_read_skill_file``: each skill
        read from its own server, verified, its origin named."""
        kind = request.kind
        if kind == "skills":
            skills = await self.list_skills(timeout=request.timeout)
            if request.server is not None:
                skills = [s for s in skills if s.server == request.server]
            return text_result(skill_listing(skills))
        assert request.skill is not None
        if kind == "load_skill":
            found, loaded = await self._load_skill(request.skill, request.timeout)
            return text_result(skill_instructions(found, loaded.text))
        assert kind == "read_skill_file" and request.path is not None
        content = await self.read_skill_file(request.skill, request.path,
                                             timeout=request.timeout)
        try:
            text = content.text
        except SkillFileError:
            raise MetaToolError(f"{request.path} is not a text file") from None
        return text_result(skill_file_text(request.skill, content, text))
