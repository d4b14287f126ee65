"""One scenario text for every binding: the runner and the per-binding adapter used by
``test_bindings_parity.py``.

A scenario is ``async def scenario(b)``; :func:`run` executes it once for one binding:

* ``"asyncio"``: ``mcp_proto_io.asyncio`` on a fresh asyncio event loop (debug mode, so a
  non-thread-safe call into the loop from another thread raises);
* ``"trio"``: ``mcp_proto_io.trio`` under ``trio.run``;
* ``"threads"``: ``mcp_proto_io.threads`` under ``trio.run``, every blocking method wrapped in
  ``trio.to_thread.run_sync`` (abandoned on cancellation, so the bound below still applies).

``b`` (a :class:`Binding`) offers ``connect_stdio`` / ``connect_http`` (async context
managers yielding a client whose methods are awaited), ``stdio_client`` (not connected yet),
and what a scenario needs of its runtime: ``sleep``, ``event``, ``tasks`` (a task group whose
jobs can be cancelled one by one), ``gather``, ``wait_until``.

Every run is bounded (:data:`BOUND` seconds, then the scenario is cancelled;
:data:`HARD_LIMIT` ends the process with a traceback dump if even cancellation hangs).
After each run, :func:`run` fails with :class:`LeakError` if anything outlived it:

* a task: asyncio -- any task but the runner's own still not done once the scenario returned
  (after :data:`SETTLE_TICKS` loop iterations), or an error the loop reported (an exception
  never retrieved, a task destroyed while pending); trio -- any task started during the run
  (a system task included) or named ``mcp-proto*``, found by walking the task tree from
  ``trio.lowlevel.current_root_task()``;
* a child process of the test process (polled for ``grace`` seconds, then killed);
* a thread named ``mcp-proto*`` or any non-daemon thread started during the run;
* an error only printed or warned during the run: a traceback on stderr (a background task
  that crashed), a thread that died of an exception, an unraisable exception, a
  ``ResourceWarning`` (unclosed pipe, socket, transport) or a ``RuntimeWarning`` (a coroutine
  never awaited).

The same checks are applied to deliberate leaks by the suite, so they cannot pass silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import functools
import gc
import importlib
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import trio
from conftest import LEAK_GRACE, children_of

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup
else:  # pragma: no cover - trio depends on the backport there
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found]

BINDINGS = ("threads", "asyncio", "trio")
ASYNC_BINDINGS = ("asyncio", "trio")

#: Default per-call deadline of the clients (seconds); node start-up can be slow on CI.
T = 20.0
#: Overall bound of one run (seconds): then the scenario is cancelled and the test fails.
BOUND = 90.0
#: Seconds a cancelled scenario gets to unwind before the run is declared hung.
CANCEL_GRACE = 15.0
#: If even that hangs, the whole process dies with a traceback dump after this many seconds.
HARD_LIMIT = BOUND + CANCEL_GRACE + 60.0
#: Event-loop iterations a finished scenario's leftovers get to end before they count as leaks.
SETTLE_TICKS = 20
#: Bound of the threads adapter's close on exit (it runs shielded from cancellation).
CLOSE_BOUND = 15.0

R = TypeVar("R")
Scenario = Callable[["Binding"], Awaitable[Any]]


class LeakError(AssertionError):
    """Something (task, process, thread) outlived the run."""


class ScenarioTimeout(AssertionError):
    """The scenario did not finish within its bound."""


# -- jobs: tasks a scenario can cancel one by one ----------------------------------------------


class Job:
    """A task started by :meth:`Binding.tasks`.  ``await job.wait()`` then read ``value``,
    ``error`` (an exception it raised) or ``cancelled`` (it ended by its own cancellation)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.value: Any = None
        self.error: BaseException | None = None
        self.cancelled = False
        self.retrieved = False

    def cancel(self) -> None:
        raise NotImplementedError

    @property
    def done(self) -> bool:
        raise NotImplementedError

    async def _wait(self) -> None:
        raise NotImplementedError

    async def wait(self) -> Job:
        await self._wait()
        self.retrieved = True
        return self

    async def result(self) -> Any:
        """The job's value; re-raises its error; fails if it was cancelled."""
        await self.wait()
        if self.error is not None:
            raise self.error
        assert not self.cancelled, f"job {self.name} was cancelled"
        return self.value


class _AsyncioJob(Job):
    def __init__(self, name: str, coro: Awaitable[Any]) -> None:
        super().__init__(name)
        self.task = asyncio.ensure_future(coro)
        self.task.set_name(f"test-{name}")
        self.task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            self.cancelled = True
        elif task.exception() is not None:
            self.error = task.exception()
        else:
            self.value = task.result()

    def cancel(self) -> None:
        self.task.cancel()

    @property
    def done(self) -> bool:
        return self.task.done()

    async def _wait(self) -> None:
        await asyncio.wait({self.task})


class _TrioJob(Job):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.scope = trio.CancelScope()
        self.finished = trio.Event()

    async def run(self, fn: Callable[[], Awaitable[Any]]) -> None:
        try:
            with self.scope:
                try:
                    self.value = await fn()
                except Exception as exc:
                    self.error = exc
            self.cancelled = self.scope.cancelled_caught
        finally:
            self.finished.set()

    def cancel(self) -> None:
        self.scope.cancel()

    @property
    def done(self) -> bool:
        return self.finished.is_set()

    async def _wait(self) -> None:
        await self.finished.wait()


def _unwrap(exc: BaseException) -> BaseException:
    """A group of one (trio's strict nurseries) -> its only exception, recursively."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class _Tasks:
    """``async with b.tasks() as tg``: ``tg.spawn(fn, *args, **kwargs)`` starts
    ``fn(*args, **kwargs)`` as a :class:`Job`.  On exit every job is waited for (cancelled if
    the body failed); an error no one retrieved is raised then."""

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime
        self.jobs: list[Job] = []
        self._nursery: trio.Nursery | None = None
        self._nursery_cm: Any = None

    async def __aenter__(self) -> _Tasks:
        if self.runtime == "trio":
            self._nursery_cm = trio.open_nursery()
            self._nursery = await self._nursery_cm.__aenter__()
        return self

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any, name: str | None = None,
              **kwargs: Any) -> Job:
        name = name or f"job-{len(self.jobs)}"
        call = functools.partial(fn, *args, **kwargs)
        job: Job
        if self.runtime == "trio":
            assert self._nursery is not None
            job = _TrioJob(name)
            self._nursery.start_soon(job.run, call, name=f"test-{name}")
        else:
            job = _AsyncioJob(name, call())
        self.jobs.append(job)
        return job

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self.runtime == "trio":
            if exc is not None:
                for job in self.jobs:
                    job.cancel()
            try:
                await self._nursery_cm.__aexit__(exc_type, exc, tb)
            except BaseExceptionGroup as group:
                raise _unwrap(group) from None
        else:
            pending = {j.task for j in self.jobs if isinstance(j, _AsyncioJob)}
            if exc is not None:
                for task in pending:
                    task.cancel()
            if pending:
                try:
                    await asyncio.wait(pending)
                except asyncio.CancelledError:
                    for task in pending:
                        task.cancel()
                    await asyncio.wait(pending, timeout=CANCEL_GRACE)
                    raise
        if exc is None:
            for job in self.jobs:
                if job.error is not None and not job.retrieved:
                    raise job.error


# -- the threads adapter ------------------------------------------------------------------------

#: The blocking methods of the threads client, awaited through a worker thread.
_BLOCKING = frozenset({
    "list_tools", "call_tool", "list_resources", "list_resource_templates", "read_resource",
    "list_prompts", "get_prompt", "complete", "subscribe", "unsubscribe", "set_logging_level",
    "ping", "send_request", "notify_roots_changed",
    "resume_task", "list_tasks", "get_task", "cancel_task",
    # the Host's
    "add_server", "update_server", "enable_server", "disable_server", "restart_server",
    "remove_server", "save_config", "stop_server", "tool_definitions", "call_meta_tool",
    "search_tools",
    # skills (client and Host)
    "list_skills", "get_skill", "read_skill", "read_skill_file", "read_skill_directory",
})


async def _to_thread(fn: Callable[[], R]) -> R:
    """Run a blocking callable on a worker thread; a cancellation abandons the thread."""
    return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)


class ThreadsClient:
    """The threads client seen through the async API: methods awaited on worker threads,
    properties read directly, ``close()`` as is (it blocks), ``aclose()`` shielded."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.raw, name)
        if name not in _BLOCKING:
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await _to_thread(functools.partial(attr, *args, **kwargs))

        return call

    async def connect(self) -> ThreadsClient:
        await _to_thread(self.raw.connect)
        return self

    def close(self) -> None:
        self.raw.close()

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_BOUND):
            await _to_thread(self.raw.close)

    async def __aenter__(self) -> ThreadsClient:
        try:
            return await self.connect()
        except BaseException:
            await self.aclose()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class ThreadsHost(ThreadsClient):
    """The threads Host seen through the async API (``open`` instead of ``connect``); its
    ``server(name)`` is wrapped like a client."""

    async def connect(self) -> ThreadsHost:
        await _to_thread(self.raw.open)
        return self

    def server(self, name: str) -> ThreadsClient:
        return ThreadsClient(self.raw.server(name))


# -- the binding handed to scenarios ------------------------------------------------------------


class Binding:
    """One binding plus its runtime, as seen by a scenario."""

    def __init__(self, name: str, *, load: bool = True) -> None:
        assert name in BINDINGS, name
        self.name = name
        self.is_async = name != "threads"
        self.runtime = "asyncio" if name == "asyncio" else "trio"
        # Import errors fail the test: once the lead's modules exist they must work.
        self.module: Any = importlib.import_module(f"mcp_proto_io.{name}") if load else None
        self.loop_thread = threading.current_thread()  # where the runtime runs

    def __repr__(self) -> str:
        return f"<Binding {self.name}>"

    # -- clients ----------------------------------------------------------------------------

    def _wrap(self, raw: Any) -> Any:
        return raw if self.is_async else ThreadsClient(raw)

    def stdio_client(self, command: list[str], **kwargs: Any) -> Any:
        """A stdio client, not connected yet (``await c.connect()``, ``await c.aclose()``);
        also usable as ``async with``."""
        kwargs.setdefault("timeout", T)
        return self._wrap(self.module.connect_stdio(command, **kwargs))

    def http_client(self, url: str, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", T)
        return self._wrap(self.module.connect_http(url, **kwargs))

    connect_stdio = stdio_client
    connect_http = http_client

    def connect_memory(self, server: Any, **kwargs: Any) -> Any:
        """A client of an in-memory server (``connect_memory``), not connected yet."""
        kwargs.setdefault("timeout", T)
        return self._wrap(self.module.connect_memory(server, **kwargs))

    def connect_replay(self, path: Any, **kwargs: Any) -> Any:
        """A client of a transcript played back (``connect_replay``), not connected yet."""
        kwargs.setdefault("timeout", T)
        return self._wrap(self.module.connect_replay(path, **kwargs))

    def connect_config(self, source: Any, **kwargs: Any) -> Any:
        """A Host (``async with``; ``await host.call_tool(...)`` in every binding)."""
        kwargs.setdefault("timeout", T)
        raw = self.module.connect_config(source, **kwargs)
        return raw if self.is_async else ThreadsHost(raw)

    def binding_threads(self) -> list[str]:
        """Threads of this binding alive now (``mcp-proto*``)."""
        return [t.name for t in threading.enumerate()
                if t.is_alive() and t.name.startswith("mcp-proto")]

    def check_no_threads(self) -> None:
        """The async bindings run no threads of their own."""
        if self.is_async:
            assert not self.binding_threads(), (
                f"the {self.name} binding runs threads: {self.binding_threads()}")

    # -- runtime ------------------------------------------------------------------------------

    async def sleep(self, seconds: float) -> None:
        if self.runtime == "trio":
            await trio.sleep(seconds)
        else:
            await asyncio.sleep(seconds)

    def event(self) -> Any:
        """An event of the runtime (``set()``, ``is_set()``, ``await wait()``)."""
        return trio.Event() if self.runtime == "trio" else asyncio.Event()

    def tasks(self) -> _Tasks:
        return _Tasks(self.runtime)

    async def gather(self, *fns: Callable[[], Awaitable[Any]]) -> list[Any]:
        """Run the callables concurrently; their values in order (the first error raised)."""
        async with self.tasks() as tg:
            jobs = [tg.spawn(fn) for fn in fns]
            return [await job.result() for job in jobs]

    async def wait_until(self, predicate: Callable[[], Any], timeout: float,
                         interval: float = 0.02) -> bool:
        """Poll ``predicate()`` (sync) until true or ``timeout`` seconds pass (bounded polling,
        not a synchronising sleep); returns its last truth value."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return bool(predicate())
            await self.sleep(interval)
        return True

    async def poll(self, probe: Callable[[], Awaitable[R]], accept: Callable[[R], bool],
                   timeout: float, interval: float = 0.05) -> R:
        """Await ``probe()`` until ``accept(value)`` or ``timeout`` seconds pass; returns the
        last value (the caller asserts on it)."""
        deadline = time.monotonic() + timeout
        while True:
            value = await probe()
            if accept(value) or time.monotonic() >= deadline:
                return value
            await self.sleep(interval)


# -- leak checks ----------------------------------------------------------------------------------


def _asyncio_suspects(exclude: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t not in exclude and not t.done()]


def _describe_asyncio(task: asyncio.Task[Any]) -> str:
    frames = task.get_stack(limit=1)
    where = f" at {frames[0].f_code.co_filename}:{frames[0].f_lineno}" if frames else ""
    return f"{task.get_name()}{where}"


async def asyncio_leftover_tasks(exclude: set[asyncio.Task[Any]] | None = None) -> list[str]:
    """Tasks (other than the caller and ``exclude``) not done after :data:`SETTLE_TICKS` loop
    iterations; empty if none."""
    skip: set[asyncio.Task[Any]] = set(exclude or ())
    current = asyncio.current_task()
    if current is not None:
        skip.add(current)
    for _ in range(SETTLE_TICKS):
        if not _asyncio_suspects(skip):
            return []
        await asyncio.sleep(0)
    return [_describe_asyncio(t) for t in _asyncio_suspects(skip)]


def trio_tasks() -> list[trio.lowlevel.Task]:
    """Every task of this trio run (system tasks included), walking the tree from the root."""
    out = []
    stack = [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        if task is None:
            continue
        out.append(task)
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return out


def _trio_suspects(baseline: set[trio.lowlevel.Task]) -> list[trio.lowlevel.Task]:
    mine: set[trio.lowlevel.Task] = set()
    task: trio.lowlevel.Task | None = trio.lowlevel.current_task()
    while task is not None:  # the caller and its ancestors
        mine.add(task)
        parent = task.parent_nursery
        task = parent.parent_task if parent is not None else None
    return [t for t in trio_tasks() if t not in mine
            and (t not in baseline or t.name.startswith("mcp-proto"))]


def _describe_trio(task: trio.lowlevel.Task) -> str:
    trio_dir = os.path.dirname(trio.__file__)
    frames = [(f, line) for f, line in task.iter_await_frames()
              if not f.f_code.co_filename.startswith(trio_dir)]
    where = f" at {frames[-1][0].f_code.co_filename}:{frames[-1][1]}" if frames else ""
    return f"{task.name}{where}"


async def trio_leftover_tasks(baseline: set[trio.lowlevel.Task]) -> list[str]:
    """Tasks started since ``baseline`` (or named ``mcp-proto*``) still there after
    :data:`SETTLE_TICKS` checkpoints; empty if none."""
    for _ in range(SETTLE_TICKS):
        if not _trio_suspects(baseline):
            return []
        await trio.sleep(0)
    return [_describe_trio(t) for t in _trio_suspects(baseline)]


def _suspect_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    main = threading.main_thread()
    return [t for t in threading.enumerate()
            if t is not main and t not in before and t.is_alive()
            and (not t.daemon or t.name.startswith("mcp-proto"))]


def process_and_thread_leaks(pre_children: set[int], before: set[threading.Thread],
                             grace: float) -> list[str]:
    """Children of this process not in ``pre_children`` and suspect threads not in ``before``,
    polled for ``grace`` seconds; leaked children are killed (after being reported)."""
    me = os.getpid()
    deadline = time.monotonic() + grace
    while True:
        children = [c for c in children_of(me) if c[0] not in pre_children]
        threads = _suspect_threads(before)
        if (not children and not threads) or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    problems = []
    if children:
        problems.append("child processes: " + ", ".join(
            f"{pid} ({comm}, state {state})" for pid, comm, state in children))
        for pid, _, _ in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
    if threads:
        problems.append("threads: " + ", ".join(
            f"{t.name} (daemon={t.daemon})" for t in threads))
    return problems


# -- the runner -----------------------------------------------------------------------------------


class _Outcome:
    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.leaks: list[str] = []


async def _asyncio_main(b: Binding, scenario: Scenario, bound: float, out: _Outcome) -> None:
    task = asyncio.ensure_future(scenario(b))
    task.set_name("test-scenario")
    done, _ = await asyncio.wait({task}, timeout=bound)
    if not done:
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE)
        out.error = ScenarioTimeout(
            f"[{b.name}] the scenario did not finish within {bound:g} s" + (
                "" if done else f" and did not unwind within {CANCEL_GRACE:g} s of its "
                "cancellation"))
    elif task.cancelled():
        out.error = AssertionError(f"[{b.name}] the scenario task was cancelled")
    elif task.exception() is not None:
        out.error = task.exception()
    else:
        out.value = task.result()
    left = await asyncio_leftover_tasks(exclude=set() if done else {task})
    if left:
        out.leaks.append("asyncio tasks still running: " + ", ".join(left))


def _run_asyncio(b: Binding, scenario: Scenario, bound: float, out: _Outcome) -> None:
    reported: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    loop.set_debug(True)  # a loop method called from another thread raises
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(_asyncio_main(b, scenario, bound, out))
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=CANCEL_GRACE))
            loop.run_until_complete(loop.shutdown_asyncgens())
            with contextlib.suppress(asyncio.TimeoutError):
                loop.run_until_complete(
                    asyncio.wait_for(loop.shutdown_default_executor(), CANCEL_GRACE))
        finally:
            asyncio.set_event_loop(None)
            loop.close()
    gc.collect()  # tasks whose errors nobody retrieved report it now
    if reported:
        out.leaks.append("errors reported to the asyncio loop: " + "; ".join(
            f"{c.get('message')} ({c.get('exception')!r}, {c.get('task') or c.get('future')})"
            for c in reported))


def _run_trio(b: Binding, scenario: Scenario, bound: float, out: _Outcome) -> None:
    async def main() -> None:
        baseline = set(trio_tasks())
        try:
            with trio.fail_after(bound):
                out.value = await scenario(b)
        except trio.TooSlowError:
            out.error = ScenarioTimeout(f"[{b.name}] the scenario did not finish within "
                                        f"{bound:g} s")
        except BaseExceptionGroup as group:
            out.error = _unwrap(group)
        except Exception as exc:
            out.error = exc
        left = await trio_leftover_tasks(baseline)
        if left:
            out.leaks.append("trio tasks still running: " + ", ".join(left))

    trio.run(main)


class _Tee:
    """sys.stderr during a run: what is written goes through, and is kept."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def _watching_errors(out: _Outcome) -> Iterator[None]:
    """Fail the run for what a binding only prints or warns: a traceback written to stderr (a
    background task that crashed, an exception swallowed), a thread that died of an exception,
    an unraisable exception,
    a ResourceWarning (an unclosed pipe, socket or transport) or a RuntimeWarning (a coroutine
    never awaited)."""
    tee = _Tee(sys.stderr)
    unraisable: list[str] = []
    previous_hook = sys.unraisablehook

    def hook(info: Any) -> None:
        unraisable.append(f"{info.exc_type.__name__}: {info.exc_value} in {info.object!r}")
        previous_hook(info)

    previous_excepthook = threading.excepthook

    def excepthook(info: Any) -> None:
        thread = info.thread.name if info.thread is not None else "?"
        unraisable.append(f"{info.exc_type.__name__}: {info.exc_value} in thread {thread}")
        previous_excepthook(info)

    sys.stderr = tee
    sys.unraisablehook = hook
    threading.excepthook = excepthook
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield
            finally:
                gc.collect()
    finally:
        sys.stderr = tee.stream
        sys.unraisablehook = previous_hook
        threading.excepthook = previous_excepthook
    bad = (ResourceWarning, RuntimeWarning)
    for w in caught:
        if not issubclass(w.category, bad):  # not ours to judge: shown as usual
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    problems = [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})"
                for w in caught if issubclass(w.category, bad)]
    printed = "".join(tee.parts)
    if "Traceback (most recent call last)" in printed:
        problems.append("a traceback was printed: " + printed[-1500:])
    problems += [f"uncaught {u}" for u in unraisable]
    if problems:
        out.leaks.append("errors only printed or warned: " + "; ".join(problems))


def run(binding: str, scenario: Scenario, *, bound: float = BOUND,
        grace: float = LEAK_GRACE, load: bool = True) -> Any:
    """Run ``scenario`` for ``binding`` (see the module docstring); returns its value.

    Raises the scenario's error (with the leaks as a note), :class:`ScenarioTimeout`, or
    :class:`LeakError`.  ``load=False`` runs on the binding's runtime without importing it
    (the leak checks' own tests)."""
    b = Binding(binding, load=load)
    pre_children = {pid for pid, _, _ in children_of(os.getpid())}
    before = set(threading.enumerate())
    out = _Outcome()
    faulthandler.dump_traceback_later(HARD_LIMIT, exit=True)
    try:
        with _watching_errors(out):
            if b.runtime == "asyncio":
                _run_asyncio(b, scenario, bound, out)
            else:
                _run_trio(b, scenario, bound, out)
    finally:
        faulthandler.cancel_dump_traceback_later()
        out.leaks += process_and_thread_leaks(pre_children, before, grace)
    if out.error is not None:
        if out.leaks and hasattr(out.error, "add_note"):
            out.error.add_note(f"[{binding}] also leaked: " + "; ".join(out.leaks))
        raise out.error
    if out.leaks:
        raise LeakError(f"[{binding}] leaked: " + "; ".join(out.leaks))
    return out.value
