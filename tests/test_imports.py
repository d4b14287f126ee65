"""The core is sans-IO: no module of ``mcp_proto`` imports I/O, clocks or concurrency."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_proto_io.auth import _deferred as _auth_lazy
from mcp_proto_io.auth import _io as _auth_io
from mcp_proto_io.auth import _redirect as _auth_redirect

import mcp_proto

FORBIDDEN = frozenset({
    "_thread", "anyio", "asyncio", "multiprocessing", "select", "selectors", "socket",
    "subprocess", "threading", "time", "trio",
})
CORE_DIR = Path(mcp_proto.__file__).parent
MODULES = sorted(CORE_DIR.rglob("*.py"))  # the host/ subpackage too


def imported_modules(source: str) -> set[str]:
    """Top-level names of every module ``source`` imports, at any depth of the file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value.split(".")[0])
    return names


def test_the_scanner_sees_imports() -> None:
    source = "import os\nfrom time import monotonic\ndef f():\n    import socket.x\n"
    assert imported_modules(source) == {"os", "time", "socket"}


def test_modules_found() -> None:
    assert {p.name for p in MODULES} >= {"__init__.py", "_session.py", "_ndjson.py"}
    assert {p.relative_to(CORE_DIR).as_posix() for p in MODULES} >= {
        "host/__init__.py", "host/_state.py", "host/_names.py"}


def _core_id(p: Path) -> str:
    return p.relative_to(CORE_DIR).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_core_id)
def test_core_module_imports_no_io(path: Path) -> None:
    bad = imported_modules(path.read_text("utf-8")) & FORBIDDEN
    assert not bad, f"{path.name} imports {sorted(bad)}: the core must stay sans-IO"


@pytest.mark.parametrize("path", MODULES, ids=_core_id)
def test_core_does_not_import_the_bindings(path: Path) -> None:
    """``import mcp_proto`` runs only these modules (and the standard library), so none of them
    may import ``mcp_proto_io``."""
    depth = len(path.relative_to(CORE_DIR).parts)  # 1 in mcp_proto/, 2 in a room, 3 in a subroom
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level <= depth, f"{path.name} imports from outside the package"
    assert "mcp_proto_io" not in imported_modules(path.read_text("utf-8"))


BINDINGS_DIR = Path(__file__).resolve().parent.parent / "bindings" / "mcp_proto_io"
RUNTIME_FREE = {
    # module of the bindings -> runtimes it must not import (the shared async code is
    # runtime-neutral; each runtime face imports only its own runtime, so importing
    # mcp_proto_io.asyncio never pays for trio, and no binding pulls in anyio)
    "_async/__init__.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_clients.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_face.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_http.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_pump.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_stdio.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_async/_asyncio.py": {"trio", "anyio", "threading", "_thread"},
    "_async/_trio.py": {"asyncio", "anyio", "threading", "_thread"},
    "_client.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "asyncio.py": {"trio", "anyio", "threading", "_thread"},
    "trio.py": {"asyncio", "anyio", "threading", "_thread"},
    "host/_async.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "host/_asyncio.py": {"trio", "anyio", "threading", "_thread"},
    "host/_trio.py": {"asyncio", "anyio", "threading", "_thread"},
    "host/_loop.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "_lazy.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
    "auth/_deferred.py": {"asyncio", "trio", "anyio", "threading", "_thread"},
}


@pytest.mark.parametrize("name", sorted(RUNTIME_FREE))
def test_async_bindings_import_only_their_runtime(name: str) -> None:
    bad = imported_modules((BINDINGS_DIR / name).read_text("utf-8")) & RUNTIME_FREE[name]
    assert not bad, f"{name} imports {sorted(bad)}"


# -- what an import loads ---------------------------------------------------------------------
# The host layer, the OAuth machinery and the HTTP stack load when first used (PEP 562 in
# ``mcp_proto`` and the runtime modules, imports at the point of use in ``_http``), so a
# program that only opens stdio clients pays for none of them.  These tests run each import
# in a fresh interpreter (pass/fail, unlike benchmarks/bench_import.py's timings).

REPO = Path(__file__).resolve().parent.parent

#: Modules a client-only import must not load: (prefix, the light ones that may load).
DEFERRED = (
    ("mcp_proto.host", ()),
    # Only the errors (raised without a flow too), the table of procedure kinds and the event
    # records (the bindings test isinstance on them) load eagerly.
    # (The rooms' packages load with them: their __init__ imports nothing on its own.)
    ("mcp_proto.auth", ("mcp_proto.auth", "mcp_proto.auth._states", "mcp_proto.auth._events")),
    ("mcp_proto_io.auth", ("mcp_proto_io.auth", "mcp_proto_io.auth._deferred")),
    ("mcp_proto_io.host", ()),
    ("mcp_proto_io.cli", ()),
    ("h11", ()),
    # Streamable HTTP and its SSE parser come with the first HTTP client.
    ("mcp_proto.http._streamable", ()),
    ("mcp_proto.wire._sse", ()),
)
CLIENT_ONLY = (
    "import mcp_proto",
    "import mcp_proto_io.asyncio",
    "import mcp_proto_io.threads",
    "import mcp_proto_io.trio",
    "from mcp_proto_io.asyncio import Client, HttpClient, connect_http, connect_stdio",
    "from mcp_proto_io.threads import Client, HttpClient, connect_http, connect_stdio",
    "from mcp_proto_io.trio import Client, HttpClient, connect_http, connect_stdio",
)


def run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter that imports this checkout; its stdout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "bindings"),
                                         env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=str(REPO), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def loaded_after(statement: str) -> set[str]:
    return set(json.loads(run_fresh(f"import json, sys\n{statement}\n"
                                    "print(json.dumps(sorted(sys.modules)))")))


def deferred(modules: set[str]) -> list[str]:
    return sorted(m for m in modules for prefix, light in DEFERRED
                  if (m == prefix or m.startswith(prefix)) and m not in light)


@pytest.mark.parametrize("statement", CLIENT_ONLY)
def test_a_client_only_import_loads_no_host_auth_or_http(statement: str) -> None:
    modules = loaded_after(statement)
    assert not deferred(modules), f"{statement!r} loads {deferred(modules)}"


def test_the_scan_sees_a_deferred_module() -> None:
    modules = loaded_after("import mcp_proto_io.asyncio; mcp_proto_io.asyncio.OAuth")
    assert {"mcp_proto.auth._config", "mcp_proto_io.auth._config"} <= set(deferred(modules))
    assert "mcp_proto.host" not in modules


@pytest.mark.parametrize("runtime", ["asyncio", "threads", "trio"])
def test_every_public_name_loads_on_first_use(runtime: str) -> None:
    """Each name of ``__all__`` (the Host, ``connect_config``, the auth classes) resolves
    by attribute, by ``from ... import`` and by ``import *``, is listed by ``dir()``, and is
    stored once loaded; the Host keeps its public module."""
    out = run_fresh(f"""
import sys
import mcp_proto_io.{runtime} as m
assert set(m.__all__) <= set(dir(m)), set(m.__all__) - set(dir(m))
assert "mcp_proto.host" not in sys.modules
host = m.connect_config
assert "mcp_proto.host" in sys.modules and "connect_config" in vars(m)
from mcp_proto_io.{runtime} import Host, OAuth, PasteRedirect
from mcp_proto_io.auth import OAuth as same
assert OAuth is same and Host is m.Host
ns = {{}}
exec("from mcp_proto_io.{runtime} import *", ns)
assert set(m.__all__) <= set(ns), set(m.__all__) - set(ns)
try:
    m.no_such_name
except AttributeError as exc:
    assert "no_such_name" in str(exc)
else:
    raise AssertionError("no AttributeError")
print(Host.__module__)
""")
    expected = "mcp_proto_io.host._threads" if runtime == "threads" else f"mcp_proto_io.{runtime}"
    assert out.split() == [expected]


HOST_SCENARIO = {
    "threads": """
with m.connect_config(config) as host:
    echo = next(t.name for t in host.list_tools() if t.name.endswith("echo"))
    print(host.call_tool(echo, {"text": "hi"}).content[0].text)
""",
    "asyncio": """
import asyncio
async def main():
    async with m.connect_config(config) as host:
        echo = next(t.name for t in await host.list_tools() if t.name.endswith("echo"))
        print((await host.call_tool(echo, {"text": "hi"})).content[0].text)
asyncio.run(main())
""",
}
HOST_SCENARIO["trio"] = HOST_SCENARIO["asyncio"].replace("asyncio", "trio").replace(
    "trio.run(main())", "trio.run(main)")


@pytest.mark.parametrize("runtime", sorted(HOST_SCENARIO))
def test_the_lazily_loaded_host_works(runtime: str) -> None:
    """``connect_config`` reached through the lazy path opens a server and calls its tool."""
    command = [sys.executable, str(REPO / "tests" / "servers" / "host_server.py"), "--name", "one"]
    out = run_fresh(f"""
import mcp_proto_io.{runtime} as m
config = {{"mcpServers": {{"one": {{"command": {command[0]!r}, "args": {command[1:]!r}}}}}}}
{HOST_SCENARIO[runtime]}""")
    assert out.split() == ["one:hi"]


def test_every_lazy_core_name_is_its_defining_modules() -> None:
    """``mcp_proto``'s deferred names are the objects their modules define, are listed by
    ``dir()``, and load by attribute access (``mcp_proto.host`` too)."""
    out = run_fresh("""
import importlib, sys
import mcp_proto
lazy = mcp_proto._LAZY
assert set(mcp_proto.__all__) | set(lazy) <= set(dir(mcp_proto))
assert not [m for m in set(lazy.values()) if "mcp_proto" + m in sys.modules]
for name, module in lazy.items():
    value = getattr(mcp_proto, name)
    source = importlib.import_module(module, "mcp_proto")
    assert value is (source if name == "host" else getattr(source, name)), name
from mcp_proto import OAuthFlow, SaveRecord, host
print("ok")
""")
    assert out.split() == ["ok"]


@pytest.mark.parametrize("blocked", [("trio",), ("outcome",), ("trio", "outcome")])
def test_the_trio_binding_without_trio_says_what_to_install(blocked: tuple[str, ...]) -> None:
    out = run_fresh(f"""
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # unimportable, as when it is not installed
try:
    import mcp_proto_io.trio
except ImportError as exc:
    print(type(exc).__name__, exc.name)
    print(exc)
else:
    raise AssertionError("imported without trio")
import mcp_proto_io.asyncio  # the other runtimes are unaffected
""")
    first, message = out.splitlines()
    kind, name = first.split()
    assert kind == "ModuleNotFoundError" and name in blocked  # an ImportError, as before
    assert "pip install 'mcp-proto[trio]'" in message, message


def test_the_auth_forwarders_match_what_they_forward_to() -> None:
    """``_auth_lazy`` stands in for ``_auth_io`` and ``_auth_redirect`` in the clients' code:
    the same constant, the same parameters (so the two cannot drift apart)."""
    assert _auth_lazy.NO_REDIRECT == _auth_io.NO_REDIRECT
    # (``Running`` is the type the thread is named by, not a forwarder.)
    for name in set(_auth_lazy.__all__) - {"NO_REDIRECT", "Running"}:
        real = getattr(_auth_redirect if name == "is_async_redirect" else _auth_io, name)
        theirs = list(inspect.signature(real).parameters.values())  # a class: its __init__'s
        mine = list(inspect.signature(getattr(_auth_lazy, name)).parameters.values())
        assert [(p.name, p.kind, p.default, str(p.annotation)) for p in mine] == \
            [(p.name, p.kind, p.default, str(p.annotation)) for p in theirs], name
