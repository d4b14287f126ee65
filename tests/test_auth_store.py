"""The token stores: round trips, isolation, permissions (like ssh), atomic writes, bounds."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp_proto_io.auth._store import (
    MAX_RECORD_SIZE,
    FileTokenStore,
    MemoryTokenStore,
    TokenStore,
    TokenStoreError,
    default_store_path,
)

from mcp_proto._auth_errors import AuthorizationError

posix_only = pytest.mark.skipif(os.name != "posix", reason="permission checks are POSIX only")

KEY = "https://mcp.example.com/mcp"
OTHER = "https://other.example.com/mcp"
SECRET = "rt-very-secret-refresh-token"


def record(token: str = SECRET) -> dict[str, Any]:
    return {"version": 1, "resource": KEY,
            "issuers": {"https://as.example.com": {"tokens": {"access_token": "at-" + token,
                                                              "refresh_token": token}}}}


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "conf" / "oauth"


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, store_dir: Path) -> TokenStore:
    return MemoryTokenStore() if request.param == "memory" else FileTokenStore(store_dir)


# -- both stores ----------------------------------------------------------------------------------

def test_round_trip_and_isolation(store: TokenStore) -> None:
    assert store.load(KEY) is None
    assert store.keys() == []
    store.save(KEY, record("one"))
    store.save(OTHER, record("two"))
    assert store.load(KEY) == record("one")
    assert store.load(OTHER) == record("two")
    assert store.keys() == sorted([KEY, OTHER])
    store.save(KEY, record("three"))
    assert store.load(KEY) == record("three")
    assert store.load(OTHER) == record("two")
    assert store.delete(KEY) is True
    assert store.delete(KEY) is False
    assert store.load(KEY) is None
    assert store.keys() == [OTHER]


def test_no_aliasing(store: TokenStore) -> None:
    saved = record()
    store.save(KEY, saved)
    saved["issuers"].clear()
    loaded = store.load(KEY)
    assert loaded == record()
    assert loaded is not None
    loaded["version"] = 2
    assert store.load(KEY) == record()


def test_oversize_refused_on_save(store: TokenStore) -> None:
    with pytest.raises(TokenStoreError, match="more than") as info:
        store.save(KEY, {"blob": "x" * MAX_RECORD_SIZE})
    assert isinstance(info.value, AuthorizationError)
    assert store.load(KEY) is None


def test_not_json_refused(store: TokenStore) -> None:
    with pytest.raises(TypeError):
        store.save(KEY, {"x": object()})
    with pytest.raises(ValueError):
        store.save(KEY, {"x": float("nan")})
    assert store.keys() == []


def test_repr_has_no_secret(store: TokenStore) -> None:
    store.save(KEY, record())
    assert SECRET not in repr(store)


# -- the file store -------------------------------------------------------------------------------

def test_file_layout(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    files = sorted(p.name for p in store_dir.iterdir() if p.suffix == ".json")
    assert len(files) == 1
    name = files[0]
    assert len(name) == 32 + len(".json")
    assert json.loads((store_dir / name).read_text()) == {"key": KEY, "record": record()}
    assert not [p for p in store_dir.iterdir() if p.name.startswith(".tmp-")]
    assert repr(store) == f"FileTokenStore({str(store_dir)!r})"


@posix_only
def test_created_private(store_dir: Path) -> None:
    old = os.umask(0o022)
    try:
        FileTokenStore(store_dir).save(KEY, record())
    finally:
        os.umask(old)
    assert mode(store_dir) == 0o700
    for path in store_dir.iterdir():
        assert mode(path) == 0o600, path.name
    assert mode(store_dir.parent) & 0o700 == 0o700  # parents: the usual permissions


@posix_only
def test_refuses_a_group_readable_file(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    (path,) = [p for p in store_dir.iterdir() if p.suffix == ".json"]
    path.chmod(0o644)
    with pytest.raises(TokenStoreError, match="0644") as info:
        store.load(KEY)
    assert SECRET not in str(info.value)
    with pytest.raises(TokenStoreError):
        store.keys()
    with pytest.raises(TokenStoreError):
        store.save(KEY, record("new"))
    path.chmod(0o600)
    assert store.load(KEY) == record()


@posix_only
def test_refuses_an_open_directory(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    store_dir.chmod(0o755)
    for call in (lambda: store.load(KEY), lambda: store.save(KEY, record()),
                 store.keys, lambda: store.delete(KEY)):
        with pytest.raises(TokenStoreError, match="0755"):
            call()
    store_dir.chmod(0o700)
    assert store.load(KEY) == record()


@posix_only
def test_refuses_a_symlinked_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    FileTokenStore(real).save(KEY, record())
    link = tmp_path / "link"
    link.symlink_to(real)
    store = FileTokenStore(link)
    with pytest.raises(TokenStoreError, match="symbolic link"):
        store.load(KEY)
    with pytest.raises(TokenStoreError, match="symbolic link"):
        store.save(KEY, record())


@posix_only
def test_refuses_a_symlinked_file(store_dir: Path, tmp_path: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(OTHER, record())
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"key": KEY, "record": record("planted")}))
    elsewhere.chmod(0o600)
    store.save(KEY, record())
    (target,) = [p for p in store_dir.iterdir() if p.suffix == ".json"
                 and json.loads(p.read_text())["key"] == KEY]
    target.unlink()
    target.symlink_to(elsewhere)
    with pytest.raises(TokenStoreError, match="symbolic link"):
        store.load(KEY)
    with pytest.raises(TokenStoreError, match="symbolic link"):
        store.save(KEY, record("new"))
    assert json.loads(elsewhere.read_text())["record"] == record("planted")  # not written through


@posix_only
@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to chown")
def test_refuses_a_foreign_owner(store_dir: Path) -> None:  # pragma: no cover - root only
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    os.chown(store_dir, 12345, 12345)
    with pytest.raises(TokenStoreError, match="another user"):
        store.load(KEY)


def test_corrupt_file_loads_as_none_and_stays(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    store.save(OTHER, record())
    (path,) = [p for p in store_dir.iterdir() if p.suffix == ".json"
               and json.loads(p.read_text())["key"] == KEY]
    for body in (b"{not json", b"[1, 2]", b'{"key": "https://x", "record": {}}', b"\xff\xfe"):
        path.write_bytes(body)
        assert store.load(KEY) is None
        assert path.exists()
        assert store.keys() == [OTHER]
    store.save(KEY, record("fixed"))
    assert store.load(KEY) == record("fixed")


def test_oversize_file_loads_as_none(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    store.save(KEY, record())
    (path,) = [p for p in store_dir.iterdir() if p.suffix == ".json"]
    big = json.dumps({"key": KEY, "record": {"blob": "x" * MAX_RECORD_SIZE}})
    path.write_text(big)
    assert store.load(KEY) is None
    assert store.keys() == []
    assert path.stat().st_size == len(big)


def test_missing_directory_is_empty_and_not_created(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    assert store.load(KEY) is None
    assert store.keys() == []
    assert store.delete(KEY) is False
    assert not store_dir.exists()


def test_a_file_where_the_directory_should_be(store_dir: Path) -> None:
    store_dir.parent.mkdir(parents=True)
    store_dir.write_text("")
    with pytest.raises(TokenStoreError, match="not a directory"):
        FileTokenStore(store_dir).save(KEY, record())


def test_concurrent_saves_leave_a_valid_file(store_dir: Path) -> None:
    store = FileTokenStore(store_dir)
    errors: list[BaseException] = []
    rounds = 25

    def writer(name: str) -> None:
        try:
            for i in range(rounds):
                store.save(KEY, record(f"{name}-{i}" + "y" * 2000))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert not errors
    loaded = store.load(KEY)
    assert loaded is not None
    token = loaded["issuers"]["https://as.example.com"]["tokens"]["refresh_token"]
    assert token.endswith(f"-{rounds - 1}" + "y" * 2000)
    assert store.keys() == [KEY]
    assert not [p for p in store_dir.iterdir() if p.name.startswith(".tmp-")]


def test_second_instance_sees_the_first(store_dir: Path) -> None:
    FileTokenStore(store_dir).save(KEY, record())
    assert FileTokenStore(os.fspath(store_dir)).load(KEY) == record()


# -- the default path -----------------------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="POSIX layout")
def test_default_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_store_path() == tmp_path / "mcp-proto" / "oauth"
    assert FileTokenStore().path == tmp_path / "mcp-proto" / "oauth"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # ignored, as the XDG spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_store_path() == tmp_path / "home" / ".config" / "mcp-proto" / "oauth"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert default_store_path() == tmp_path / "home" / ".config" / "mcp-proto" / "oauth"
