"""One Host: the threads Host's moves are generated from the async ones.

``bindings/mcp_proto_io/host/_sync.py`` is written by ``.ci/make_host.py`` from
``host/_async.py``; these tests fail when it is stale, when a changed source or a moved
import block goes unnoticed, when the two Hosts differ in a name, a parameter, a default or
a docstring, or when a blocking method is still a coroutine.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest
from mcp_proto_io.host import (
    _async,
    _asynccatalog,
    _asyncmodel,
    _loop,
    _sync,
    _synccatalog,
    _syncmodel,
    _threads,
)
from test_face import _public, _without_docstrings, check_current, load_script
from test_face import _Unasync as _FaceUnasync

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / ".ci" / "make_host.py"


def _generator() -> ModuleType:
    return load_script(SCRIPT)


def test_the_generated_host_is_current() -> None:
    check_current(SCRIPT)


def test_a_changed_source_makes_the_check_fail(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _generator()
    source = tmp_path / "_async.py"
    source.write_text(gen.SOURCE.read_text(encoding="utf-8").replace(
        '"""Stop a server and forget it; returns its spec."""',
        '"""Stop a server and forget it, changed."""'), encoding="utf-8")
    target = tmp_path / "_sync.py"
    target.write_text(gen.TARGET.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(gen, "SOURCE", source)
    monkeypatch.setattr(gen, "TARGET", target)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    assert "Stop a server and forget it, changed." in target.read_text(encoding="utf-8")


def test_the_client_imports_are_one_block_of_the_source(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """The source's client-side block holds both Hosts' imports (the threads ones in a
    comment): retargeting the async ones changes nothing else; a source without the block
    makes the generator say so instead of writing a threads Host on the async clients."""
    gen = _generator()
    text = gen.SOURCE.read_text(encoding="utf-8")
    retargeted = text.replace("from .._async import", "from .._moved import")
    assert retargeted != text  # the async clients' import line is there to retarget
    assert gen.unasync(retargeted) \
        == gen.TARGET.read_text(encoding="utf-8")
    source = tmp_path / "_async.py"
    source.write_text(text.replace(gen.CLIENT_SIDE, "# the client side"), encoding="utf-8")
    monkeypatch.setattr(gen, "SOURCE", source)
    monkeypatch.setattr(gen, "TARGET", tmp_path / "_sync.py")
    assert gen.main([]) == 1
    assert "client-side import block" in capsys.readouterr().err
    assert not (tmp_path / "_sync.py").exists()


@pytest.mark.parametrize(("sync_cls", "async_cls", "method"), [
    (_sync.HostBase, _async.AsyncHostBase, "list_tools"),
    (_synccatalog.CatalogBase, _asynccatalog.AsyncCatalogBase, "read_resource"),
    (_syncmodel.ModelBase, _asyncmodel.AsyncModelBase, "call_tool")])
def test_both_hosts_offer_the_same_methods_with_the_same_signatures(
        sync_cls: type, async_cls: type, method: str) -> None:
    sync, asynchronous = _public(sync_cls), _public(async_cls)
    assert set(sync) == set(asynchronous) and method in sync
    for name, member in asynchronous.items():
        twin = sync[name]
        if isinstance(member, property):
            assert isinstance(twin, property), name
            continue
        assert inspect.iscoroutinefunction(twin) is False, name
        expected = str(inspect.signature(member)).replace("AsyncClientBase", "_ClientBase")
        assert str(inspect.signature(twin)) == expected, name
        assert inspect.getdoc(twin) == inspect.getdoc(member), name


@pytest.mark.parametrize(("host", "base"), [
    (_threads.Host, _sync.HostBase), (_loop.AsyncHost, _async.AsyncHostBase),
    (_threads.Host, _synccatalog.CatalogBase), (_loop.AsyncHost, _asynccatalog.AsyncCatalogBase),
    (_threads.Host, _syncmodel.ModelBase), (_loop.AsyncHost, _asyncmodel.AsyncModelBase)])
def test_every_host_takes_its_moves_from_the_one_source(host: type, base: type) -> None:
    assert issubclass(host, base)
    for name in _public(base):
        # Defined once: no runtime's Host writes a move of its own again.
        owners = [cls for cls in host.__mro__ if name in vars(cls)]
        assert owners == [base], (host.__name__, name, owners)


class _Unasync(_FaceUnasync):
    """The async Host's tree as its blocking twin must read: coroutines become functions,
    awaits their operands, the async client and runtime the threads binding's, and the
    imports and docstrings are left out of the comparison (the generator swaps the client
    imports; the test above checks the docstrings)."""

    NAMES: ClassVar[dict[str, str]] = {
        "AsyncHostBase": "HostBase", "AsyncCatalogBase": "CatalogBase",
        "AsyncModelBase": "ModelBase",
        "AsyncClientBase": "_ClientBase",
        "Runtime": "BlockingRuntime", "aclose": "close"}

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        self.generic_visit(node)
        node.name = self.NAMES.get(node.name, node.name)
        return node

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.NAMES.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        self.generic_visit(node)
        node.attr = self.NAMES.get(node.attr, node.attr)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)  # Coroutine[Any, Any, None] -> None
        if isinstance(node.value, ast.Name) and node.value.id == "Coroutine":
            return ast.Constant(None)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, str):
            text = node.value.replace("an async with block or await open()",
                                      "a with block or call open()")
            for old, new in self.NAMES.items():
                if old[0].isupper():
                    text = text.replace(old, new)
            return ast.Constant(text)
        return node


def _comparable(tree: ast.Module) -> str:
    tree.body = [node for node in tree.body
                 if not isinstance(node, ast.Import | ast.ImportFrom)]
    return _without_docstrings(tree)


def _pair(gen: Any, pair: str) -> tuple[Path, Path]:
    """The async source and generated target of ``pair``."""
    return {"host": (gen.SOURCE, gen.TARGET), "catalog": (gen.CATALOG_SOURCE, gen.CATALOG_TARGET),
            "model": (gen.MODEL_SOURCE, gen.MODEL_TARGET)}[pair]


@pytest.mark.parametrize("pair", ["host", "catalog", "model"])
def test_the_generated_code_is_the_async_code_without_async(pair: str) -> None:
    gen = _generator()
    source_path, target_path = _pair(gen, pair)
    source = ast.parse(source_path.read_text(encoding="utf-8"))
    target = ast.parse(target_path.read_text(encoding="utf-8"))
    assert _comparable(_Unasync().visit(source)) == _comparable(target)


@pytest.mark.parametrize(("pair", "least"), [("host", 20), ("catalog", 5), ("model", 5)])
def test_the_async_source_holds_no_await_under_the_guard(pair: str, least: int) -> None:
    """What makes the one source right on threads: no ``with self._guard:`` block awaits
    (a thread would hold the host's lock through a blocking call)."""
    gen = _generator()
    path = _pair(gen, pair)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guards = [node for node in ast.walk(tree) if isinstance(node, ast.With)
              and any(ast.unparse(item.context_expr) == "self._guard" for item in node.items)]
    assert len(guards) > least
    for block in guards:
        awaits = [n for n in ast.walk(block) if isinstance(n, ast.Await | ast.AsyncWith)]
        assert not awaits, f"line {block.lineno}: an await under the guard"
