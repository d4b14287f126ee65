"""pytest fixtures for MCP clients that need no server (the ``pytest`` extra; registered as the
``mcp_proto`` plugin by its ``pytest11`` entry point).

``mcp_memory(server, **options)`` connects a threads client to a
:class:`mcp_proto.testing.MemoryServer` in this process.  ``mcp_replay(name, command=...,
url=..., **options)`` connects one to the transcript ``<mcp_transcripts>/<name>.jsonl``
(default folder ``tests/transcripts`` under the rootdir: the ``mcp_transcripts`` ini option),
played back; run ``pytest --mcp-record`` to talk to the real server instead (``command`` or
``url``) and write the transcript anew.  Every client a fixture made is closed after the test;
a replayed test that did not make every recorded call fails then (``strict=False`` allows it)::

    def test_time(mcp_replay):
        client = mcp_replay("time", command=["mcp-server-time"])
        assert client.call_tool("get_current_time", {"timezone": "UTC"}).text
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["mcp_memory", "mcp_replay", "pytest_addoption"]

#: Where ``mcp_replay(name)`` finds ``name.jsonl`` (relative to the rootdir).
DEFAULT_FOLDER = "tests/transcripts"

#: ``connect_http`` options a replay (played over pipes, not HTTP) does not take.
_HTTP_ONLY = ("headers", "bearer_token", "auth", "ssl_context", "ca_file")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-proto")
    group.addoption("--mcp-record", action="store_true", default=False,
                    help="mcp_replay fixtures talk to the real servers and write their "
                         "transcripts anew, instead of replaying them")
    parser.addini("mcp_transcripts", "the folder of mcp_replay's transcripts (relative to "
                  "the rootdir)", default=DEFAULT_FOLDER)


@pytest.fixture
def mcp_memory() -> Iterator[Callable[..., Any]]:
    """``mcp_memory(server, **options)``: a connected threads client of an in-memory
    server (options as ``connect_stdio``'s); closed after the test."""
    from mcp_proto_io.threads import connect_memory  # noqa: PLC0415 - with the fixture only

    clients: list[Any] = []

    def connect(server: Any, **options: Any) -> Any:
        client = connect_memory(server, **options)
        clients.append(client)
        return client.connect()

    yield connect
    for client in clients:
        client.close()


@pytest.fixture
def mcp_replay(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``mcp_replay(name, *, command=None, url=None, speed=None, relax=None, strict=True,
    **options)``: a threads client of the transcript ``name``; under ``--mcp-record`` a
    client of the real server (``command`` for stdio, ``url`` for HTTP) that writes it."""
    from mcp_proto_io.threads import (  # noqa: PLC0415 - with the fixture only
        connect_http,
        connect_replay,
        connect_stdio,
    )

    config = request.config
    folder = Path(config.rootpath) / str(config.getini("mcp_transcripts"))
    recording = bool(config.getoption("mcp_record"))
    made: list[tuple[Any, bool]] = []

    def connect(name: str, *, command: Any = None, url: str | None = None,
                speed: float | None = None, relax: Any = None, strict: bool = True,
                **options: Any) -> Any:
        path = folder / f"{name}.jsonl"
        if recording:
            if (command is None) == (url is None):
                pytest.fail(f"--mcp-record: mcp_replay({name!r}) needs command= or url= "
                            "(the real server to record)")
            path.parent.mkdir(parents=True, exist_ok=True)
            client = connect_stdio(command, record=path, **options) if command is not None \
                else connect_http(str(url), record=path, **options)
        else:
            if not path.is_file():
                pytest.fail(f"no transcript {path}: record it with pytest --mcp-record")
            for http_only in _HTTP_ONLY:  # a recording of an HTTP server, played over pipes
                options.pop(http_only, None)
            client = connect_replay(path, speed=speed, relax=relax, **options)
        made.append((client, strict and not recording))
        return client

    yield connect
    missing: list[str] = []
    for client, strict in made:
        client.close()
        if not strict:
            continue
        served = getattr(getattr(client, "_command", None), "served", [])
        if not served:
            missing.append("the client never connected")
        for replay in served:
            if getattr(replay, "divergence", None) is not None:
                continue  # the test met (and saw) the divergence itself
            unmatched = getattr(replay, "unmatched", [])
            if unmatched:
                first = unmatched[0]
                missing.append(f"{len(unmatched)} recorded message(s) never sent, the first "
                               f"(line {first.line}): {first.data}"[:500])
    if missing:
        pytest.fail("the test did not make every recorded call: " + "; ".join(missing))
