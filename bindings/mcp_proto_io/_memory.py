"""A server in this process, for tests: the in-memory server and the replay of a transcript,
each reached through three OS pipes exactly as a stdio server is (the same framing, the same
limits, the same reader, exit and stop paths), without a process or a socket.

:class:`MemoryCommand` is what ``connect_memory(server)`` and ``connect_replay(path)`` give the
stdio client as its command; :func:`mcp_proto_io._process.spawn` asks it for a
:class:`MemoryProcess` instead of starting a program.  The process stand-in serves a sans-IO
endpoint (:class:`mcp_proto.testing.MemoryServer`, :class:`mcp_proto.testing.ReplayServer`) on
a thread of its own: it reads the client's bytes from its stdin pipe, feeds them and the time to
the endpoint, fires its deadlines, writes what it says to its stdout and stderr pipes, and ends
("exits") when the endpoint sets ``exit_code`` or its stdin ends.  The in-memory server's
handlers (plain or ``async`` functions) run on worker threads, one per call, each given a
:class:`Context` when it takes a ``ctx`` argument.  Runtime-neutral: the client may be the
threads, asyncio or trio one.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["MAX_HANDLER_THREADS", "Context", "MemoryCommand", "MemoryProcess", "connectors",
           "memory_command", "replay_command"]

_C = TypeVar("_C")

#: Numbers the in-memory commands (``id()`` is reused once one is collected).
_COMMANDS = itertools.count(1)

#: Handler calls running at once on one in-memory server (each on its own thread): a test
#: that starts more waits for one to end; a bound, not a pool size anyone needs to tune.
MAX_HANDLER_THREADS = 64

#: Bytes read from the client's pipe at a time.
_READ_SIZE = 1 << 16

#: Seconds a handler's request to the client (sampling, elicitation, roots) waits by default.
REQUEST_TIMEOUT = 30.0


class MemoryCommand:
    """The "command" of an in-memory stdio client: ``factory`` makes the endpoint each
    connection serves (a fresh one when the client connects again); ``label`` names it in
    logs and errors."""

    __slots__ = ("factory", "key", "label", "last", "served")

    def __init__(self, factory: Callable[[], Any], label: str) -> None:
        self.factory = factory
        self.label = label
        self.key = next(_COMMANDS)  # what its era is remembered by: never reused
        self.last: Any = None  # the endpoint of the latest connection
        self.served: list[Any] = []  # every connection's endpoint, in order

    def __repr__(self) -> str:
        return f"MemoryCommand({self.label!r})"

    def start_memory(self) -> MemoryProcess:
        """A new connection's server: its endpoint, served on a thread over three pipes."""
        self.last = self.factory()
        self.served.append(self.last)
        return MemoryProcess(self.last, self.label)

    def failure(self) -> BaseException | None:
        """Why the latest connection's server ended, when it is not an ordinary exit: a
        replay that diverged from its transcript (its :class:`ReplayDivergence`)."""
        return getattr(self.last, "divergence", None)


def memory_command(server: Any) -> MemoryCommand:
    """The command of ``connect_memory(server)``: the first connection is served by
    ``server`` itself, each later one (a client that connects again) by a fresh session of
    it (:meth:`~mcp_proto.testing.MemoryServer.connection`); a bare endpoint serves every
    connection.  Raises ``TypeError`` for anything else."""
    connection = getattr(server, "connection", None)
    if callable(connection):
        def factory() -> Any:
            # The server itself the first time it is served (its state inspectable), a
            # fresh session of it after: a reconnection, another client, a Host restart.
            if getattr(server, "_mcp_proto_served", False):
                return connection()
            server._mcp_proto_served = True
            return server

        info = getattr(server, "server_info", None) or {}
        return MemoryCommand(factory, f"memory:{info.get('name', 'server')}")
    if all(hasattr(server, n) for n in ("receive_data", "data_to_send", "next_deadline")):
        return MemoryCommand(lambda: server, f"memory:{type(server).__name__}")
    raise TypeError(f"connect_memory needs a MemoryServer (or an endpoint), not "
                    f"{type(server).__name__}")


def replay_command(path: str | os.PathLike[str], *, speed: float | None = None,
                   relax: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
                   ) -> tuple[MemoryCommand, str | None]:
    """The command of ``connect_replay(path)`` and the protocol version to pin (the
    recorded one: the client then opens the session as it did).  Raises ``OSError`` for a
    file that cannot be read and :class:`mcp_proto.testing.TranscriptError` for one that is
    not a transcript."""
    from mcp_proto.testing import ReplayServer, read_transcript  # noqa: PLC0415

    with open(path, "rb") as f:
        transcript = read_transcript(f.read())
    name = os.path.basename(os.fspath(path))
    runs = transcript.runs()

    def factory() -> Any:
        # Each connection plays the next run of the recording; past the last, the last
        # again (its first message then shows what the client did that nobody did).
        return ReplayServer(runs.pop(0) if len(runs) > 1 else runs[0], speed=speed,
                            relax=relax)

    return MemoryCommand(factory, f"replay:{name}"), transcript.offered_version


class Context:
    """What an in-memory server's handler may do while it runs: report progress, log,
    ask the client (sampling, elicitation, roots) and see whether the client cancelled.
    Each method is thread-safe and returns at once, except :meth:`request`, which waits for
    the client's answer."""

    __slots__ = ("_call", "_proc")

    def __init__(self, proc: MemoryProcess, call: Any) -> None:
        self._proc = proc
        self._call = call

    @property
    def cancelled(self) -> bool:
        """Whether the client sent ``notifications/cancelled`` for this call, or the server
        is over (the client closed, the server exited): a long handler stops then."""
        if self._proc.returncode is not None:
            return True
        return bool(self._proc.locked(lambda e: e.is_cancelled(self._call.call_id)))

    def progress(self, progress: float, total: float | None = None,
                 message: str | None = None) -> None:
        """``notifications/progress`` for this call (when the client asked for it)."""
        self._proc.locked(lambda e: e.call_progress(self._call.call_id, progress, total,
                                                    message))

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """``notifications/message`` at ``level`` (when the client's level lets it through)."""
        self._proc.locked(lambda e: e.call_log(self._call.call_id, level, data))

    def request(self, method: str, params: dict[str, Any],
                timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Ask the client (``sampling/createMessage``, ``elicitation/create``,
        ``roots/list``) and wait for its answer.  Raises :class:`mcp_proto.RpcError` for an
        error answer, ``TimeoutError`` after ``timeout`` seconds, and
        :class:`mcp_proto.LocalProtocolError` when the client did not declare the
        capability (or the era has no server requests)."""
        return self._proc.ask(self._call.call_id, method, params, timeout)

    def sample(self, params: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        return self.request("sampling/createMessage", params, timeout)

    def elicit(self, params: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        return self.request("elicitation/create", params, timeout)


class MemoryProcess:
    """Stands in for a server's ``subprocess.Popen`` (``stdin``, ``stdout``, ``stderr``,
    ``poll``, ``wait``, ``returncode``, ``send_signal``): ``endpoint`` served on a thread.
    :mod:`mcp_proto_io._process` stops it through :meth:`send_signal` (``in_memory``: there
    is no process group)."""

    in_memory = True
    pid: int | None = None

    def __init__(self, endpoint: Any, label: str) -> None:
        self.endpoint = endpoint
        self.label = label
        self.returncode: int | None = None
        r_in, w_in = os.pipe()
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)  # a full pipe: a wake-up is pending already
        self._wake_lock = threading.Lock()  # the wake pipe is written only while open
        self._wake_open = True
        self.stdin = open(w_in, "wb", buffering=0)  # noqa: SIM115 - the client owns them
        self.stdout = open(r_out, "rb", buffering=0)  # noqa: SIM115
        self.stderr = open(r_err, "rb", buffering=0)  # noqa: SIM115
        self._fds = {"in": r_in, "out": w_out, "err": w_err}
        # Re-entrant: a handler run on this thread may tell the client something through
        # the server (server.notify_tools_changed(), server.exit()), which takes it again.
        self._lock = threading.RLock()
        self._answered = threading.Condition(self._lock)
        self._answers: dict[Any, Any] = {}
        # Handlers that take ctx (or are async) run on daemon threads, at most the bound at
        # once: a handler stuck for ever must not hold the interpreter's exit.
        self._slots = threading.BoundedSemaphore(MAX_HANDLER_THREADS)
        self._stop_code: int | None = None
        self._done = threading.Event()
        attach = getattr(endpoint, "attach", None)
        if attach is not None:  # what a test tells the server from its own thread
            attach(self._lock, self._wake)
        self._thread = threading.Thread(target=self._serve, name=f"mcp-proto-memory-{label}",
                                        daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"<MemoryProcess {self.label!r} returncode={self.returncode}>"

    # -- what Popen offers -----------------------------------------------------------------

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.label, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """SIGTERM or SIGKILL: the server ends now (exit code ``-sig``, as a process's)."""
        if self._stop_code is None:
            self._stop_code = -int(sig)
        self._wake()

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    # -- for the handlers --------------------------------------------------------------------

    def locked(self, fn: Callable[[Any], Any]) -> Any:
        """``fn(endpoint)`` under the endpoint's lock, then the output is written."""
        with self._lock:
            result = fn(self.endpoint)
        self._wake()
        return result

    def ask(self, call_id: int, method: str, params: dict[str, Any],
            timeout: float) -> dict[str, Any]:
        with self._lock:
            rid = self.endpoint.call_request(call_id, method, params)
        self._wake()
        deadline = time.monotonic() + timeout
        with self._answered:
            while rid not in self._answers:
                if self.returncode is not None:
                    raise ConnectionError(f"{method}: the connection ended before an answer")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{method}: no answer from the client in {timeout} s")
                self._answered.wait(left)
            answer = self._answers.pop(rid)
        if isinstance(answer, BaseException):
            raise answer
        return dict(answer)

    # -- the server's thread -----------------------------------------------------------------

    def _wake(self) -> None:
        with self._wake_lock:  # never a write to a closed (and maybe reused) descriptor
            if self._wake_open:
                try:
                    os.write(self._wake_w, b"x")
                except OSError:  # full: a wake-up is pending anyway
                    pass

    def _serve(self) -> None:
        code = 0
        try:
            code = self._loop()
        except Exception as exc:  # the endpoint's own bug: the "process" crashes, loudly
            code = 70
            self._write_err(f"mcp-proto in-memory server crashed: {exc!r}\n".encode())
        finally:
            self._end(code)

    def _loop(self) -> int:
        fds = self._fds
        # A selector, not select(): a suite that opened many files has descriptors past
        # FD_SETSIZE (1024), which select() cannot watch.
        with selectors.DefaultSelector() as selector:
            selector.register(fds["in"], selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            return self._serve_loop(selector, fds)

    def _serve_loop(self, selector: selectors.BaseSelector, fds: dict[str, int]) -> int:
        eof = eof_seen = False
        while True:
            if self._stop_code is not None:
                return self._stop_code
            with self._lock:
                self._run_calls()
                self._collect_answers()
                out, err = self.endpoint.data_to_send(), self.endpoint.stderr_to_send()
                exit_code = self.endpoint.exit_code
                deadline = self.endpoint.next_deadline()
            if err:
                self._write_err(err)
            if out and not self._write_out(out):
                return 0  # the client closed its end: nobody to answer
            if exit_code is not None:
                return int(exit_code)
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if eof and not eof_seen:
                selector.unregister(fds["in"])
                eof_seen = True
            ready = {key.fd for key, _ in selector.select(wait)}
            now = time.monotonic()
            if self._wake_r in ready:
                os.read(self._wake_r, 4096)
            if not eof and fds["in"] in ready:
                data = os.read(fds["in"], _READ_SIZE)
                with self._lock:
                    if data:
                        self.endpoint.receive_data(data, now)
                    else:
                        eof = True
                        self.endpoint.receive_eof(now)
            if deadline is not None and now >= deadline:
                with self._lock:
                    self.endpoint.handle_timeout(now)

    def _run_calls(self) -> None:
        """Start a worker for each handler call the endpoint has (under the lock)."""
        next_call = getattr(self.endpoint, "next_call", None)
        if next_call is None:
            return
        while (call := next_call()) is not None:
            if _inline(call.fn):  # plain, no ctx: here, now (a hand-off costs more)
                self._finish(call, _outcome(call.fn, dict(call.arguments)))
            else:
                threading.Thread(target=self._run, args=(call,), daemon=True,
                                 name=f"mcp-proto-memory-{self.label}-call").start()

    def _run(self, call: Any) -> None:
        """One handler call on a pool thread (it takes ``ctx``, or is ``async``)."""
        kwargs = dict(call.arguments)
        if _takes_ctx(call.fn):
            kwargs["ctx"] = Context(self, call)
        with self._slots:
            outcome = _outcome(call.fn, kwargs)
        with self._lock:
            self._finish(call, outcome)
        self._wake()

    def _finish(self, call: Any, outcome: Any) -> None:
        """The call's outcome to the endpoint (under the lock)."""
        if self.returncode is None:
            self.endpoint.finish(call.call_id, outcome, time.monotonic())

    def _collect_answers(self) -> None:
        next_answer = getattr(self.endpoint, "next_answer", None)
        if next_answer is None:
            return
        got = False
        while (answer := next_answer()) is not None:
            rid, value = answer
            self._answers[rid] = value
            got = True
        if got:
            self._answered.notify_all()

    def _write_out(self, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._fds["out"], view)
            except (BrokenPipeError, OSError):
                return False
            view = view[n:]
        return True

    def _write_err(self, data: bytes) -> None:
        try:
            os.write(self._fds["err"], data)
        except OSError:
            pass

    def _end(self, code: int) -> None:
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        with self._wake_lock:
            os.close(self._wake_r)
        with self._lock:
            self.returncode = code
            self._answered.notify_all()
        self._done.set()
        with self._wake_lock:
            self._wake_open = False
            os.close(self._wake_w)


def _outcome(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """What ``fn(**kwargs)`` gives: its value (an async one's awaited, on a loop of its
    own), or the exception it raised: the call's result either way."""
    try:
        outcome: Any = fn(**kwargs)
        if inspect.isawaitable(outcome):
            import asyncio  # noqa: PLC0415 - only for async handlers

            outcome = asyncio.run(_awaited(outcome))
    except BaseException as exc:  # the handler's failure is the call's result
        outcome = exc
    return outcome


@functools.lru_cache(maxsize=1024)
def _takes_ctx(fn: Callable[..., Any]) -> bool:
    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


@functools.lru_cache(maxsize=1024)
def _inline(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` runs on the server's own thread: a plain function that takes no
    ``ctx`` (it cannot wait on the client; one that blocks delays the calls after it,
    as a single-threaded server would).  Others run on the pool."""
    return not _takes_ctx(fn) and not inspect.iscoroutinefunction(fn)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def connectors(cls: Callable[..., _C], module: str) -> tuple[Callable[..., _C],
                                                             Callable[..., _C]]:
    """``connect_memory`` and ``connect_replay`` of a runtime module whose stdio client class
    is ``cls`` (same options as ``connect_stdio``, but ``env`` and ``cwd``)."""

    def connect_memory(server: Any, **options: Any) -> _C:
        """A client of ``server`` (a :class:`mcp_proto.testing.MemoryServer`) in this
        process: no program started, no socket; its messages go through three OS pipes with
        the framing and limits of a stdio server.  Same options as ``connect_stdio`` (but
        ``env``, ``cwd``); its handlers run on worker threads.  Raises ``TypeError`` for
        something that is not a server."""
        return cls(memory_command(server), **options)

    def connect_replay(path: str | os.PathLike[str], *, speed: float | None = None,
                       relax: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
                       **options: Any) -> _C:
        """A client of the server side of the transcript at ``path`` (``record=PATH`` wrote
        it): each request is matched against the recording (method and params, ``_meta``
        and volatile fields ignored: :mod:`mcp_proto.testing`'s rules; ``relax(recorded,
        actual)`` may accept more) and answered as it was, ids remapped; ``speed`` None
        answers at once, 1.0 at the recorded pace.  A divergence fails every call at once
        with :class:`mcp_proto.testing.ReplayDivergence` (expected and actual side by
        side); a recorded exit is replayed as :class:`mcp_proto.ServerExited`.  A recording
        that opened with ``initialize`` pins the version it offered (unless
        ``protocol_version`` is given), so the replay opens the same way."""
        command, version = replay_command(path, speed=speed, relax=relax)
        if version is not None:
            options.setdefault("protocol_version", version)
        return cls(command, **options)

    for fn in (connect_memory, connect_replay):
        fn.__module__ = module
    return connect_memory, connect_replay
