"""One client face: the threads client's operations are generated from the async ones.

``bindings/mcp_proto_io/_sync/_face.py`` is written by ``.ci/make_face.py`` from
``_async/_face.py``; these tests fail when it is stale, when the two faces differ in a name, a
parameter, a default or a docstring (beyond the generator's word changes), or when a blocking
method is still a coroutine.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from mcp_proto_io import asyncio, threads, trio
from mcp_proto_io._async import _face as _face_async
from mcp_proto_io._sync import _face as _face_sync

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "make_face.py"


def load_script(script: Path) -> ModuleType:
    """A generator of .ci/ as a module (tests/test_host_generated.py uses it too)."""
    spec = importlib.util.spec_from_file_location(script.stem, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_current(script: Path) -> None:
    """``script --check`` passes: the file it generates is what it would write."""
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def _generator() -> ModuleType:
    return load_script(SCRIPT)


def _public(cls: type) -> dict[str, object]:
    return {name: member for name, member in vars(cls).items() if not name.startswith("_")}


def test_the_generated_face_is_current() -> None:
    check_current(SCRIPT)


def test_a_changed_source_makes_the_check_fail(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _generator()
    source = tmp_path / "_face_async.py"
    source.write_text(gen.SOURCE.read_text(encoding="utf-8").replace(
        '"""A round trip to the server."""', '"""A round trip, changed."""'), encoding="utf-8")
    target = tmp_path / "_face_sync.py"
    target.write_text(gen.TARGET.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(gen, "SOURCE", source)
    monkeypatch.setattr(gen, "TARGET", target)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    assert "A round trip, changed." in target.read_text(encoding="utf-8")


def test_both_faces_offer_the_same_operations_with_the_same_signatures() -> None:
    sync, asynchronous = _public(_face_sync.ClientFace), _public(_face_async.AsyncClientFace)
    assert set(sync) == set(asynchronous) and "call_tool" in sync
    for name, member in asynchronous.items():
        twin = sync[name]
        if isinstance(member, property):
            assert isinstance(twin, property), name
            continue
        assert inspect.iscoroutinefunction(member), name
        assert not inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(member), name
        doc, twin_doc = inspect.getdoc(member) or "", inspect.getdoc(twin) or ""
        assert twin_doc.replace("wait for", "await").replace("Wait for", "Await") == doc, name


@pytest.mark.parametrize("client", [threads.Client, threads.HttpClient, asyncio.Client,
                                    asyncio.HttpClient, trio.Client, trio.HttpClient])
def test_every_client_takes_its_operations_from_the_face(client: type) -> None:
    face = _face_sync.ClientFace if client.__module__.endswith("threads") \
        else _face_async.AsyncClientFace
    assert issubclass(client, face)
    for name in _public(face):
        # Defined once: no client class writes an operation of its own again.
        owners = [cls for cls in client.__mro__ if name in vars(cls)]
        assert owners == [face], (client.__name__, name, owners)


class _Unasync(ast.NodeTransformer):
    """The async face's tree as its blocking twin must read: coroutines become functions,
    awaits their operands, the class its sync name, and docstrings are left out of the
    comparison (the generator changes a few of their words; the test above checks them)."""

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.FunctionDef:
        self.generic_visit(node)
        fields = {name: getattr(node, name) for name in node._fields}
        return ast.copy_location(ast.FunctionDef(**fields), node)

    def visit_Await(self, node: ast.Await) -> ast.expr:
        return self.visit(node.value)  # type: ignore[no-any-return]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        self.generic_visit(node)
        node.name = node.name.replace("AsyncClientFace", "ClientFace")
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, str) and "AsyncClientFace" in node.value:
            return ast.Constant(node.value.replace("AsyncClientFace", "ClientFace"))
        return node


def _without_docstrings(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            body[0] = ast.Pass()  # type: ignore[index]
    return ast.dump(tree, annotate_fields=False)


def test_the_generated_code_is_the_async_code_without_async() -> None:
    gen = _generator()
    source = ast.parse(gen.SOURCE.read_text(encoding="utf-8"))
    target = ast.parse(gen.TARGET.read_text(encoding="utf-8"))
    assert _without_docstrings(_Unasync().visit(source)) == _without_docstrings(target)
