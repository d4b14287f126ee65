"""Shared test helpers: where the servers are, and a leak check for every test that uses it.

Real servers (installed by ``.ci/run``) are found by the locators below.  A missing one fails
the test when ``CI`` is true and skips it otherwise, with a message saying what to install.

The ``no_leaks`` fixture asserts that a test leaves no child process of the test process (a
server not stopped or not reaped) and no thread of the binding (``mcp-proto-*``) nor any other
non-daemon thread behind it.  It polls for up to :data:`LEAK_GRACE` seconds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
SCRIPTED_SERVER = TESTS / "servers" / "scripted_server.py"
MODERN_SCRIPTED_SERVER = TESTS / "servers" / "modern_scripted.py"
SDK_SERVER = TESTS / "servers" / "sdk_server.py"
EVERYTHING_SUBPATH = Path("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
EVERYTHING_CANDIDATES = (
    REPO / ".ci" / "node" / EVERYTHING_SUBPATH,
    Path("/tmp/npmprobe") / EVERYTHING_SUBPATH,
)

#: Seconds the leak check waits for children to be reaped and threads to end.
LEAK_GRACE = 5.0


# -- locating servers ------------------------------------------------------------------------


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing_server(message: str) -> None:
    """Fail (under CI) or skip (locally) a test whose real server is not installed."""
    if in_ci():
        pytest.fail(f"{message} (CI=true: real servers must be installed by .ci/run)",
                    pytrace=False)
    pytest.skip(message)


def find_everything_js() -> Path | None:
    """server-everything's entry point: ``$MCP_EVERYTHING_JS`` (authoritative when set), then
    ``<repo>/.ci/node/...``, then ``/tmp/npmprobe/...``."""
    env = os.environ.get("MCP_EVERYTHING_JS")
    if env:
        path = Path(env)
        return path if path.is_file() else None
    for path in EVERYTHING_CANDIDATES:
        if path.is_file():
            return path
    return None


def find_console_script(name: str) -> Path | None:
    """A console script: on ``PATH``, else next to ``sys.executable``."""
    found = shutil.which(name)
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / name
    return beside if beside.is_file() and os.access(beside, os.X_OK) else None


def find_time_server() -> Path | None:
    """The ``mcp-server-time`` console script: on ``PATH``, else next to ``sys.executable``."""
    return find_console_script("mcp-server-time")


@pytest.fixture
def everything_command() -> list[str]:
    """argv of ``@modelcontextprotocol/server-everything`` over stdio."""
    node = shutil.which("node")
    recorded = REPO / ".ci" / "node" / "NODE"  # .ci/install records the node it used
    if node is None and recorded.is_file():
        node = recorded.read_text().strip() or None
    if node is None:
        missing_server("node is not on PATH (needed for server-everything)")
    js = find_everything_js()
    if js is None:
        where = os.environ.get("MCP_EVERYTHING_JS") or ", ".join(
            str(p) for p in EVERYTHING_CANDIDATES)
        missing_server(f"@modelcontextprotocol/server-everything not found (looked at {where}; "
                       "set MCP_EVERYTHING_JS or npm-install it under .ci/node)")
    return [str(node), str(js), "stdio"]


@pytest.fixture
def time_command() -> list[str]:
    """argv of ``mcp-server-time``."""
    path = find_time_server()
    if path is None:
        missing_server("mcp-server-time not found on PATH nor next to sys.executable "
                       f"({sys.executable}); pip install mcp-server-time")
    return [str(path)]


@pytest.fixture
def git_command() -> list[str]:
    """argv of ``mcp-server-git`` (give it ``--repository``); needs ``git`` on PATH too."""
    path = find_console_script("mcp-server-git")
    if path is None:
        missing_server("mcp-server-git not found on PATH nor next to sys.executable "
                       f"({sys.executable}); pip install mcp-server-git==2026.10.19")
    if shutil.which("git") is None:
        missing_server("git is not on PATH (needed by mcp-server-git)")
    return [str(path)]


@pytest.fixture
def sdk_server_command() -> list[str]:
    """argv of ``tests/servers/sdk_server.py`` (the official Python SDK, both eras)."""
    if importlib.util.find_spec("mcp") is None:
        missing_server(f"the official MCP SDK is not importable by {sys.executable}; "
                       "pip install mcp==2.3.0")
    return [sys.executable, str(SDK_SERVER)]


@pytest.fixture
def fastmcp_task_command() -> list[str]:
    """argv of ``tests/servers/fastmcp_task_server.py`` (fastmcp + fastmcp-tasks: the 2026
    tasks extension), over stdio; add ``--http PORT`` for HTTP."""
    if importlib.util.find_spec("fastmcp_tasks") is None:
        missing_server(f"fastmcp-tasks is not importable by {sys.executable}; "
                       "pip install -e '.[tests]'")
    return [sys.executable, str(TESTS / "servers" / "fastmcp_task_server.py")]


@pytest.fixture
def sdk_task_command() -> list[str]:
    """argv of ``tests/servers/sdk_task_server.py`` (the official SDK plus a task layer on its
    public hooks, both eras), over stdio; add ``--http PORT`` for HTTP."""
    if importlib.util.find_spec("mcp") is None:
        missing_server(f"the official MCP SDK is not importable by {sys.executable}")
    return [sys.executable, str(TESTS / "servers" / "sdk_task_server.py")]


def modern_command(scenario: str = "default") -> list[str]:
    """argv of the scripted 2026-07-28 test server for one scenario."""
    return [sys.executable, str(MODERN_SCRIPTED_SERVER), scenario]


def scripted_command(scenario: str = "default") -> list[str]:
    """argv of the misbehaving test server for one scenario."""
    return [sys.executable, str(SCRIPTED_SERVER), scenario]


def demo_command() -> list[str]:
    return [sys.executable, "-m", "mcp_proto_io.cli.demo_server"]


def demo_env() -> dict[str, str]:
    """What the demo server needs to be importable as a module from a checkout."""
    return {"PYTHONPATH": str(REPO / "bindings") + os.pathsep + str(REPO)}


# -- /proc helpers ---------------------------------------------------------------------------


def proc_state(pid: int) -> str | None:
    """The state letter of a process (``R``, ``S``, ``Z``, ...), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return data.rsplit(")", 1)[1].split()[0]


def children_of(pid: int) -> list[tuple[int, str, str]]:
    """(pid, comm, state) of every process whose parent is ``pid`` (Linux only)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                data = f.read()
        except OSError:
            continue
        head, _, tail = data.rpartition(")")
        fields = tail.split()
        if len(fields) >= 2 and int(fields[1]) == pid:
            out.append((int(entry), head.partition("(")[2], fields[0]))
    return out


@pytest.fixture(autouse=True)
def fresh_era_memory() -> Iterator[None]:
    """Each test starts with no remembered eras, so what it sees does not depend on which
    tests ran before it in this process (V-20 memory is process-wide by design)."""
    from mcp_proto_io._era import DEFAULT_ERA_MEMORY  # noqa: PLC0415 - bindings on sys.path

    DEFAULT_ERA_MEMORY.clear()
    yield
    DEFAULT_ERA_MEMORY.clear()


def run_threads(work: Callable[[int], object], n: int, timeout: float) -> dict[int, object]:
    """Run ``work(i)`` for i in range(n) on n threads started together (a barrier), each joined
    within ``timeout``.  Returns each thread's value; re-raises the first exception; fails if a
    thread is still running."""
    barrier = threading.Barrier(n, timeout=timeout)
    results: dict[int, object] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), name=f"test-worker-{i}")
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker thread did not finish in time"
    if errors:
        raise errors[0]
    return results


def wait_until(predicate: object, timeout: float, interval: float = 0.02) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout`` seconds pass; returns its last
    truth value.  (Bounded polling, not a synchronising sleep.)"""
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return bool(predicate())
        time.sleep(interval)


# -- the leak check --------------------------------------------------------------------------


def _suspect_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    main = threading.main_thread()
    return [t for t in threading.enumerate()
            if t is not main and t not in before and t.is_alive()
            and (not t.daemon or t.name.startswith("mcp-proto"))]


def _kill_children(children: list[tuple[int, str, str]]) -> None:
    for pid, _, _ in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fail the test if a child process or a binding thread outlives it."""
    before = set(threading.enumerate())
    has_proc = os.path.isdir("/proc/self")
    me = os.getpid()
    pre_existing = {pid for pid, _, _ in children_of(me)} if has_proc else set()
    yield
    deadline = time.monotonic() + LEAK_GRACE
    while True:
        children = [c for c in children_of(me) if c[0] not in pre_existing] if has_proc else []
        threads = _suspect_threads(before)
        if (not children and not threads) or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    problems = []
    if children:
        problems.append("child processes still there: " + ", ".join(
            f"{pid} ({comm}, state {state})" for pid, comm, state in children))
        _kill_children(children)  # do not let one leak fail every later test
    if threads:
        problems.append("threads still running: " + ", ".join(
            f"{t.name} (daemon={t.daemon})" for t in threads))
    if problems:
        pytest.fail(f"leaked after {LEAK_GRACE:g} s: " + "; ".join(problems), pytrace=False)


# -- servers on loopback ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run an HTTP MCP server; yield its URL once it accepts connections; stop it."""
    proc = subprocess.Popen(argv, env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + SERVER_START
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    pytest.fail(f"{argv[0]} did not start listening on {port}: {err[-500:]}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()


#: Seconds a test's HTTP server gets to start listening.
SERVER_START = 20.0


@pytest.fixture
def everything_url(everything_command: list[str]) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free loopback port."""
    port = free_port()
    node, js, _ = everything_command
    with serving([node, js, "streamableHttp"], port, {"PORT": str(port)}) as url:
        yield url


@pytest.fixture
def sdk_url(sdk_server_command: list[str]) -> Iterator[str]:
    """The official SDK's test server over Streamable HTTP on a free loopback port."""
    port = free_port()
    with serving([*sdk_server_command, "--http", str(port)], port) as url:
        yield url


class Background:
    """Run one blocking call on a thread; ``outcome()`` joins it (bounded).  ``elapsed``:
    how long the call took; ``finished_at``: when it ended (``time.monotonic()``)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.elapsed = 0.0
        self.finished_at = 0.0

        def run() -> None:
            t0 = time.monotonic()
            try:
                self.value = fn()
            except BaseException as exc:
                self.error = exc
            self.finished_at = time.monotonic()
            self.elapsed = self.finished_at - t0

        self.thread = threading.Thread(target=run, name="test-background")
        self.thread.start()

    def outcome(self, timeout: float = 15.0) -> tuple[Any, BaseException | None]:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the background call did not return in time"
        return self.value, self.error
