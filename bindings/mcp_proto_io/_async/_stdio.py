"""A server process under asyncio or trio: spawning, exit detection and stopping.

The runtime attaches the pipes and moves their bytes; everything else about the process is
here, once.
"""

from __future__ import annotations

import contextlib
import time

from mcp_proto import ConnectionLost

from .._client import StdioOptions
from .._process import (
    StderrTail,
    argv_of,
    kill_process_tree,
    spawn,
    stop_process_tree_async,
)
from .._tuning import PROCESS_POLL_INTERVAL, STDERR_SETTLE, STDOUT_SETTLE
from ._pump import SETTLE_POLL, AsyncPump, Runtime

__all__ = ["EXIT_CODE_WAIT", "StdioPump"]

#: Seconds to wait for a server that closed its stdout to be reaped, for its exit code.
EXIT_CODE_WAIT = 1.0


class StdioPump(AsyncPump):
    """A server process: spawning, exit detection and stopping.  The runtime attaches the
    pipes (:meth:`open`), calls :meth:`_on_stdout` / :meth:`_on_stdout_eof` /
    :meth:`_on_stderr`, and writes with :meth:`_write`."""

    def __init__(self, client: StdioOptions, rt: Runtime) -> None:
        super().__init__(client, rt)
        self.stderr = StderrTail(client._observer.stderr_lines(), client._observer.redactor)
        self.stderr_done = False
        self.eof = False  # the end of the server was handled (EOF or exit without EOF)
        self.bytes_in = 0
        self.pipes_closed = False
        self.next_poll = time.monotonic() + PROCESS_POLL_INTERVAL
        try:
            self.proc, self.witness = spawn(client._command, env=client._env, cwd=client._cwd)
        except OSError as exc:
            raise ConnectionLost(
                f"cannot start the server {argv_of(client._command)[0]!r}: {exc}") from exc

    def _write(self, data: bytes) -> None:
        raise NotImplementedError

    def _written(self) -> int:
        """Bytes the server's stdin pipe took so far (for :class:`InputWitness`)."""
        raise NotImplementedError

    def _flush(self) -> None:
        data = self.session.data_to_send()
        if data:
            self._write(data)  # written first: the drained bytes are never lost
            if self.tracer is not None:
                self.tracer.sent(data)  # never raises

    def _deadline(self) -> float:
        deadline = self.session.next_deadline()
        poll = self.next_poll
        return poll if deadline is None or poll < deadline else deadline

    def _on_timer(self) -> None:
        now = time.monotonic()
        self.session.handle_timeout(now)
        if now >= self.next_poll:
            self.next_poll = now + PROCESS_POLL_INTERVAL
            if not self.eof and self.proc.poll() is not None:
                # The server is gone.  Let the reader take what it wrote first; if a
                # grandchild keeps the pipe open no EOF comes, so end the session from here.
                self.spawn("mcp-proto-exit", self._exited_without_eof)
        self._after()

    def _on_stdout(self, data: bytes) -> None:
        self.bytes_in += len(data)
        if self.tracer is not None:
            self.tracer.received(data)  # never raises: showing cannot fail the connection
        self.session.receive_data(data, now=time.monotonic())
        self._after()

    def _on_stdout_eof(self) -> None:
        if not self.eof and not self.closing:
            self.eof = True
            self.spawn("mcp-proto-exit", self._server_gone)

    def _on_stderr(self, data: bytes) -> None:
        self.stderr.add(data)

    def _on_stderr_eof(self) -> None:
        self.stderr.end()
        self.stderr_done = True

    async def _exited_without_eof(self) -> None:
        end = time.monotonic() + STDOUT_SETTLE
        while not self.eof and time.monotonic() < end:
            before = self.bytes_in
            await self.rt.sleep(0.1)
            if self.bytes_in == before:
                break
        if not self.eof:
            self.eof = True
            await self._server_gone()

    async def _server_gone(self) -> None:
        end = time.monotonic() + EXIT_CODE_WAIT
        while self.proc.poll() is None and time.monotonic() < end:
            await self.rt.sleep(SETTLE_POLL)
        end = time.monotonic() + STDERR_SETTLE
        while not self.stderr_done and time.monotonic() < end:
            await self.rt.sleep(SETTLE_POLL)
        if not self.closing:
            self.exit_error = self.client._exited(self.proc.returncode, self.stderr.text())
            unread = self.witness is not None and self.witness.read_nothing(self._written())
            self.session.receive_eof(self.exit_error, input_unread=unread)
            self._after()
            # Stop what is left of the group now, while its id cannot have been reused.
            self.close()

    async def _finish(self) -> None:
        await stop_process_tree_async(self.proc, self.rt.sleep)
        self._close_pipes()

    def _force_finish(self) -> None:
        kill_process_tree(self.proc)
        self._close_pipes()

    def abandon(self) -> None:
        kill_process_tree(self.proc)
        self.opening_over()
        self.pipes_closed = True
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                with contextlib.suppress(Exception):  # whatever the dead loop left
                    f.close()

    def _close_pipes(self) -> None:
        """Close the pipes (the server is gone, or killed).  Idempotent."""
        self.opening_over()
        if not self.pipes_closed:
            self.pipes_closed = True
            self._close_pipes_once()

    def opening_over(self) -> None:
        if self.witness is not None:
            self.witness.close()

    def _close_pipes_once(self) -> None:
        raise NotImplementedError
