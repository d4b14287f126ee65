"""Spawning a stdio server and stopping its whole process tree (L-10), shared by the bindings.

The server starts in a new session (so in its own process group): on close the binding closes
its stdin, waits, sends SIGTERM to the group, waits, then SIGKILL to the group.  A grandchild
the server forked is in the same group and is stopped with it; one that started a session of
its own (``setsid``) has left the group on purpose and is out of reach.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING

from mcp_proto import Redactor
from mcp_proto._limits import STDERR_TAIL_BYTES

if TYPE_CHECKING:
    from ._logs import StderrLines

__all__ = [
    "EXIT_GRACE",
    "TERM_GRACE",
    "InputWitness",
    "StderrTail",
    "argv_of",
    "kill_process_tree",
    "spawn",
    "stop_process_tree",
    "stop_process_tree_async",
]

#: Seconds a server gets to exit by itself once its stdin is closed (the polite way, L-10).
#: Servers written with the SDKs exit at once on EOF; two seconds covers a slow interpreter.
EXIT_GRACE = 2.0

#: Seconds between SIGTERM and SIGKILL: time to flush and remove temporary files.
TERM_GRACE = 2.0

#: Capacity asked of the server's stdout pipe (Linux, F_SETPIPE_SZ).  The default 64 KiB makes
#: a 10 MiB result cost 160 context switches; 1 MiB (the unprivileged maximum) makes the large
#: result benchmark 1.7x faster and changes nothing for small messages.
PIPE_SIZE = 1 << 20
_F_SETPIPE_SZ = 1031

#: Seconds to wait for a SIGKILLed group to be gone (the kernel needs milliseconds).
KILL_WAIT = 5.0

_POLL = 0.01


def argv_of(command: str | Sequence[str]) -> list[str]:
    """The argv of a command: a sequence as it is, a string split like a POSIX shell would;
    an in-memory server's (:class:`~mcp_proto_io._memory.MemoryCommand`) its label and its
    identity (what the client's era is remembered by).

    Raises ``ValueError`` for an empty command.
    """
    label = getattr(command, "label", None)
    if isinstance(label, str) and hasattr(command, "start_memory"):
        return [label, f"#{getattr(command, 'key', id(command))}"]
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise ValueError("the server command is empty")
    return argv


class InputWitness:
    """A read end of a server's stdin pipe, kept by the client while the era is chosen, to
    tell whether the server read what it was sent before it exited (V-23: a server killed by
    the probe read it; one that crashed at start did not, and is not started again).

    While it is open, the server's exit does not break the pipe for the writer (writes fill
    the pipe instead of failing): close it as soon as the opening is over.  Thread-safe.
    """

    __slots__ = ("_fd", "_lock")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    def read_nothing(self, written: int) -> bool:
        """True when the server read none of the ``written`` bytes the client put into the
        pipe: they are all still there (or none was written).  False when it read some, the
        witness is closed, or the platform cannot say (the V-23 restart stays possible)."""
        if written == 0:
            return True
        with self._lock:
            if self._fd < 0:
                return False
            try:
                import fcntl  # noqa: PLC0415 - POSIX only
                import termios  # noqa: PLC0415

                raw = fcntl.ioctl(self._fd, termios.FIONREAD, b"\0\0\0\0")
            except (ImportError, OSError):  # pragma: no cover - a platform without FIONREAD
                return False
            return int.from_bytes(raw, sys.byteorder, signed=True) >= written

    def close(self) -> None:
        """Idempotent; any thread."""
        with self._lock:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


def spawn(command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
          cwd: str | os.PathLike[str] | None = None,
          ) -> tuple[subprocess.Popen[bytes], InputWitness | None]:
    """Start a stdio server with three pipes, in its own process group, and give an
    :class:`InputWitness` of its stdin (None on Windows); the caller closes the witness.

    ``env`` is merged over the current environment.  Raises ``OSError`` (for example
    ``FileNotFoundError``) when the program cannot be started: the caller reports the command.
    """
    start_memory = getattr(command, "start_memory", None)
    if start_memory is not None:  # connect_memory / connect_replay: a server in this process
        return start_memory(), None
    argv = argv_of(command)
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":  # pragma: no cover - POSIX is what CI runs
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    # The stdin pipe is made here, not by Popen, so that its read end can stay open in the
    # client as the witness (both ends are non-inheritable: no other child gets them).
    read_end, write_end = os.pipe() if sys.platform != "win32" else (-1, -1)
    try:
        proc: subprocess.Popen[bytes] = subprocess.Popen(  # type: ignore[call-overload]
            argv, stdin=read_end if read_end >= 0 else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=full_env, cwd=cwd, bufsize=0, **kwargs,
        )
    except BaseException:
        if read_end >= 0:
            os.close(read_end)
            os.close(write_end)
        raise
    witness: InputWitness | None = None
    if read_end >= 0:
        proc.stdin = open(write_end, "wb", buffering=0)  # noqa: SIM115 - the Popen owns it
        witness = InputWitness(read_end)
    if sys.platform.startswith("linux") and proc.stdout is not None:
        try:
            import fcntl  # noqa: PLC0415 - POSIX only

            fcntl.fcntl(proc.stdout.fileno(), _F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:  # over /proc/sys/fs/pipe-max-size: keep the default
            pass
    return proc, witness


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs.  Zombies do not count: an orphan's zombie
    waits for its new parent (PID 1) to reap it, which can be slow and is out of our hands."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):  # pragma: no cover - not Linux: trust killpg
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:  # pragma: no cover
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    if getattr(proc, "in_memory", False):  # a MemoryProcess: no group, it stops itself
        proc.send_signal(sig)
        return
    if sys.platform == "win32":  # pragma: no cover
        proc.kill()
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_gone(proc: subprocess.Popen[bytes], seconds: float) -> Generator[float, None, bool]:
    """Steps of a wait until the leader is reaped and no process is left in its group: yields
    the seconds to sleep before looking again; returns whether all is gone in time."""
    deadline = time.monotonic() + seconds
    while True:
        proc.poll()
        if proc.returncode is not None and (sys.platform == "win32" or proc.pid is None
                                            or not _group_alive(proc.pid)):
            return True
        if time.monotonic() >= deadline:
            return False
        yield _POLL


def _stop_steps(proc: subprocess.Popen[bytes], exit_grace: float,
                term_grace: float) -> Generator[float, None, None]:
    """The stop sequence as data (each binding sleeps its own way): wait for the exit, then
    SIGTERM the group, wait, SIGKILL the group, wait."""
    # A server that already exited needs no grace: only its leftovers remain.
    grace = 0.0 if proc.poll() is not None else exit_grace
    if not (yield from _wait_gone(proc, grace)):
        _signal_group(proc, signal.SIGTERM)
        if not (yield from _wait_gone(proc, term_grace)):
            kill_process_tree(proc)


def _close_stdin(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass


def stop_process_tree(proc: subprocess.Popen[bytes], *, exit_grace: float = EXIT_GRACE,
                      term_grace: float = TERM_GRACE, close_stdin: bool = True) -> int | None:
    """Stop a server and its process group: close stdin, wait, SIGTERM, wait, SIGKILL.

    Blocking; returns the leader's exit code.  Never raises for a process that is already gone.
    ``close_stdin=False`` when the caller closes stdin itself (under its write lock).
    """
    if close_stdin:
        _close_stdin(proc)
    for pause in _stop_steps(proc, exit_grace, term_grace):
        time.sleep(pause)
    return proc.returncode


async def stop_process_tree_async(proc: subprocess.Popen[bytes],
                                  sleep: Callable[[float], Awaitable[object]], *,
                                  exit_grace: float = EXIT_GRACE,
                                  term_grace: float = TERM_GRACE) -> int | None:
    """:func:`stop_process_tree` for the async bindings (``sleep`` is the runtime's), with
    stdin already closed.  Cancelled while waiting, it kills the group at once
    (:func:`kill_process_tree`) and lets the cancellation through: nothing is left running.
    """
    try:
        for pause in _stop_steps(proc, exit_grace, term_grace):
            await sleep(pause)
    except BaseException:
        kill_process_tree(proc)
        raise
    return proc.returncode


def kill_process_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the server's process group and reap the leader (blocks a few milliseconds: a
    killed process cannot linger; at most :data:`KILL_WAIT` seconds)."""
    _signal_group(proc, signal.SIGKILL)
    for pause in _wait_gone(proc, KILL_WAIT):
        time.sleep(pause)


class StderrTail:
    """Drains a server's stderr (X-03: an undrained pipe would block the server), keeps the
    last :data:`STDERR_TAIL_BYTES` bytes for error messages (redacted by ``redactor``), and
    hands the bytes to ``lines`` (the client's line splitter: its ``on_stderr`` and the
    stderr logger).

    The window kept reaches the longest secret's bytes further back than the tail shown, so
    that the tail is redacted before it is cut: a secret crossing the tail's start is
    replaced whole, never shown in part."""

    def __init__(self, lines: StderrLines | None = None,
                 redactor: Redactor | None = None,
                 limit: int = STDERR_TAIL_BYTES) -> None:
        self._limit = limit
        self._redactor = redactor or Redactor()
        self._keep = limit + self._redactor.longest_bytes
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._lines = lines
        self.total = 0

    def add(self, data: bytes) -> None:
        """Bytes read from the pipe (by its one reader)."""
        with self._lock:
            self.total += len(data)
            buf = self._buf
            buf += data[-self._keep:]
            if len(buf) > self._keep:
                del buf[: len(buf) - self._keep]
        if self._lines is not None:
            self._lines.feed(data)

    def end(self) -> None:
        """The pipe ended (its reader is done): a last unfinished line is told."""
        if self._lines is not None:
            self._lines.feed_eof()

    def text(self) -> str:
        """The last :data:`STDERR_TAIL_BYTES` bytes (about: the cut moves to the start of a
        character), decoded (invalid UTF-8 replaced) and redacted."""
        with self._lock:
            raw = bytes(self._buf)
            cut_before = self.total > len(raw)  # the window starts where bytes were dropped
        cut = max(0, len(raw) - self._limit)
        if cut or cut_before:
            while cut < len(raw) and raw[cut] & 0xC0 == 0x80:  # a UTF-8 continuation byte
                cut += 1
        head = raw[:cut].decode("utf-8", "replace")
        return self._redactor.text(head + raw[cut:].decode("utf-8", "replace"), len(head))
