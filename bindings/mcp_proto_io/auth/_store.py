"""Where authorization records live between runs: the token stores.

A record is a JSON-able dict the core builds (client registration, tokens, metadata, per
issuer) and the store keeps it under a key, the MCP server's canonical URL.  The store never
looks inside a record, so nothing it says (``repr``, errors) can carry a token.

- :class:`MemoryTokenStore`: a dict behind a lock; records last as long as the process.
- :class:`FileTokenStore`: one 0600 file per key in a 0700 directory, written atomically,
  refused (like ssh refuses a key file) when anyone but the owner could read or replace it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from mcp_proto._auth_errors import AuthorizationError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the in-process lock still serializes writers
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LOCK_TIMEOUT",
    "MAX_RECORD_SIZE",
    "FileTokenStore",
    "MemoryTokenStore",
    "TokenStore",
    "TokenStoreError",
    "default_store_path",
]

#: 64 KiB per stored record (the JSON file, key included).  A record holds a registration, a
#: few tokens and the metadata documents (each at most 64 KiB on the wire, in practice a few
#: KiB); a larger file is not one we wrote, and is not parsed.
MAX_RECORD_SIZE = 64 * 1024

#: Seconds ``save``/``delete`` wait for another process's lock on the directory.  A save
#: takes milliseconds; a holder that long is stuck (or a hostile lock), and waiting forever
#: would hang the host's login with it.
LOCK_TIMEOUT = 10.0

#: Seconds between attempts to take that lock (``flock`` has no timeout of its own).
_LOCK_POLL = 0.02

#: Hex digits of sha256(key) in a record's file name: 128 bits, so two keys never share a file,
#: and the name says nothing about the server (nor carries characters a file system refuses).
_NAME_DIGITS = 32

#: The permission bits a record, the lock file and the directory must not have (group and
#: other): with any of them another user could read the tokens or swap the file.
_FOREIGN_BITS = 0o077

#: Permission checks and advisory locks are POSIX notions; on Windows the per-user profile
#: directory's ACL is what protects the files.
_POSIX = os.name == "posix"

_RECORD_SUFFIX = ".json"
_TEMP_PREFIX = ".tmp-"
_LOCK_NAME = ".lock"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


class TokenStore(Protocol):
    """What the authorization flow needs from a store.  ``key`` is the MCP server's canonical
    URL; ``record`` a JSON-able dict whose contents the core decides."""

    def load(self, key: str) -> dict[str, Any] | None:
        """The record saved under ``key``, or ``None`` if there is none (or none usable)."""
        ...

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Keep ``record`` under ``key``, replacing what was there."""
        ...

    def delete(self, key: str) -> bool:
        """Forget ``key``; whether there was a record."""
        ...

    def keys(self) -> list[str]:
        """The keys that have a record."""
        ...


class TokenStoreError(AuthorizationError):
    """The store cannot be used safely: its directory or a record file is readable or
    writable by other users, owned by another user, a symbolic link, not what it should be
    (a file where the directory should be), or cannot be read or written.  Nothing was read
    from or written to it; the message names the path.  Fix the permissions (``chmod 700``
    the directory, ``chmod 600`` the file) or choose another path; do not retry as is."""


def _encode(key: str, record: dict[str, Any]) -> bytes:
    """The file body for ``record`` under ``key``.  Raises ``TypeError``/``ValueError`` for a
    bad key or a record that is not JSON (a caller bug), :class:`TokenStoreError` when it is
    larger than :data:`MAX_RECORD_SIZE`."""
    if not isinstance(key, str) or not key:
        raise TypeError("a token store key is a non-empty string (the server's URL)")
    if not isinstance(record, dict):
        raise TypeError(f"a token store record is a dict, not {type(record).__name__}")
    data = json.dumps({"key": key, "record": record}, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_RECORD_SIZE:
        raise TokenStoreError(
            f"the record for {key} is {len(data)} bytes, more than the {MAX_RECORD_SIZE} a "
            "token store keeps")
    return data


def _decode(data: bytes, key: str | None) -> tuple[str, dict[str, Any]] | None:
    """(key, record) from a file body, or ``None`` when it is not one we wrote (corrupt,
    another shape, another key than ``key``)."""
    if len(data) > MAX_RECORD_SIZE:
        return None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    stored_key, record = doc.get("key"), doc.get("record")
    if not isinstance(stored_key, str) or not isinstance(record, dict):
        return None
    if key is not None and stored_key != key:
        return None
    return stored_key, record


class MemoryTokenStore:
    """Records in this process only (the default store): gone when the process ends.

    Thread-safe.  Records are kept as JSON text, so ``load`` returns a fresh copy and a
    caller changing a record it saved or loaded changes nothing in the store; a record that
    is not JSON or is larger than :data:`MAX_RECORD_SIZE` is refused as the file store
    refuses it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, bytes] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        """A copy of the record under ``key``, or ``None``.  Raises nothing."""
        with self._lock:
            data = self._records.get(key)
        decoded = None if data is None else _decode(data, key)
        return None if decoded is None else decoded[1]

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Keep a copy of ``record``.  Raises ``TypeError``/``ValueError`` for a record that
        is not JSON (a caller bug) and :class:`TokenStoreError` for one too large."""
        data = _encode(key, record)
        with self._lock:
            self._records[key] = data

    def delete(self, key: str) -> bool:
        """Forget ``key``; whether there was a record.  Raises nothing."""
        with self._lock:
            return self._records.pop(key, None) is not None

    def keys(self) -> list[str]:
        """The keys with a record, sorted.  Raises nothing."""
        with self._lock:
            return sorted(self._records)

    def __repr__(self) -> str:
        with self._lock:
            count = len(self._records)
        return f"<MemoryTokenStore: {count} record{'' if count == 1 else 's'}>"


def default_store_path() -> Path:
    """The directory :class:`FileTokenStore` uses by default: ``$XDG_CONFIG_HOME/mcp-proto/
    oauth`` (an absolute ``XDG_CONFIG_HOME`` only, as the XDG spec says), else
    ``~/.config/mcp-proto/oauth``; on Windows ``%APPDATA%\\mcp-proto\\oauth``.  Raises
    ``RuntimeError`` when the home directory cannot be determined."""
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        base = Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
        return base / "mcp-proto" / "oauth"
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "mcp-proto" / "oauth"


class FileTokenStore:
    """Records in files, one per key: ``<sha256(key) hex[:32]>.json`` holding
    ``{"key": key, "record": record}`` in the directory ``path`` (default
    :func:`default_store_path`).

    The directory is created 0700 (its parents with the usual permissions) on the first
    save.  On POSIX, every ``load``, ``save``, ``delete`` and ``keys`` first checks that the
    directory and the files it touches are owned by this user, have no group or other
    permission bit and are not symbolic links, and raises :class:`TokenStoreError` otherwise
    (as ssh refuses a readable key).  Files are created 0600 and written atomically (a
    temporary file in the same directory, fsync, rename, fsync of the directory), so a
    reader sees the old record or the new one, never half of one; ``save`` and ``delete``
    hold an advisory ``flock`` on ``.lock`` in the directory so two processes do not
    interleave (waiting at most :data:`LOCK_TIMEOUT` for it).  A file that is not valid JSON
    of that shape, or larger than :data:`MAX_RECORD_SIZE`, loads as ``None`` and is left in
    place.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._path = Path(path) if path is not None else default_store_path()
        self._thread_lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The directory holding the records."""
        return self._path

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self._path)!r})"

    # -- the protocol ---------------------------------------------------------------------------

    def load(self, key: str) -> dict[str, Any] | None:
        """The record under ``key``, or ``None`` when there is none, it is corrupt or too
        large.  Raises :class:`TokenStoreError` when the directory or the file is unsafe
        (see the class) or cannot be read."""
        if not self._check_dir(create=False):
            return None
        data = self._read(self._file_for(key))
        decoded = None if data is None else _decode(data, key)
        return None if decoded is None else decoded[1]

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Write ``record`` under ``key`` (atomically, 0600), creating the directory if
        needed.  Raises ``TypeError``/``ValueError`` for a record that is not JSON (a caller
        bug), :class:`TokenStoreError` for a record larger than :data:`MAX_RECORD_SIZE`, an
        unsafe directory or file, or a failed write (the old record, if any, is intact)."""
        data = _encode(key, record)
        self._check_dir(create=True)
        target = self._file_for(key)
        with self._locked():
            self._check_existing(target)
            self._write_atomically(target, data)

    def delete(self, key: str) -> bool:
        """Remove the record under ``key``; whether there was one.  Raises
        :class:`TokenStoreError` for an unsafe directory or a failed removal."""
        if not self._check_dir(create=False):
            return False
        target = self._file_for(key)
        with self._locked():
            try:
                os.unlink(target)
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise TokenStoreError(f"cannot remove {target}: {exc.strerror}") from None
            self._fsync_dir()
        return True

    def keys(self) -> list[str]:
        """The keys of the readable records, sorted (corrupt or oversized files are
        skipped).  Raises :class:`TokenStoreError` when the directory or a record file is
        unsafe or the directory cannot be listed."""
        if not self._check_dir(create=False):
            return []
        try:
            names = sorted(os.listdir(self._path))
        except OSError as exc:
            raise TokenStoreError(f"cannot list {self._path}: {exc.strerror}") from None
        found: list[str] = []
        for name in names:
            if not name.endswith(_RECORD_SUFFIX) or name.startswith("."):
                continue
            data = self._read(self._path / name)
            decoded = None if data is None else _decode(data, None)
            if decoded is not None and self._file_for(decoded[0]).name == name:
                found.append(decoded[0])
        return sorted(found)

    # -- files ----------------------------------------------------------------------------------

    def _file_for(self, key: str) -> Path:
        if not isinstance(key, str) or not key:
            raise TypeError("a token store key is a non-empty string (the server's URL)")
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:_NAME_DIGITS]
        return self._path / (digest + _RECORD_SUFFIX)

    def _check_dir(self, create: bool) -> bool:
        """Whether the directory exists (creating it 0700 when ``create``); raises
        :class:`TokenStoreError` when it is unsafe."""
        try:
            st = os.lstat(self._path)
        except FileNotFoundError:
            if not create:
                return False
            self._create_dir()
            st = os.lstat(self._path)
        except OSError as exc:
            raise TokenStoreError(f"cannot use {self._path}: {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise TokenStoreError(f"{self._path} is a symbolic link; refusing to use it")
        if not stat.S_ISDIR(st.st_mode):
            raise TokenStoreError(f"{self._path} is not a directory")
        self._check_owner_and_mode(self._path, st, "directory", "700")
        return True

    def _create_dir(self) -> None:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(self._path, 0o700)
            except FileExistsError:  # another process made it first: checked by the caller
                return
            if _POSIX:
                os.chmod(self._path, 0o700)  # whatever the umask took away or left
        except OSError as exc:
            raise TokenStoreError(f"cannot create {self._path}: {exc.strerror}") from None

    @staticmethod
    def _check_owner_and_mode(path: Path, st: os.stat_result, what: str, fix: str) -> None:
        if not _POSIX:
            return
        if st.st_uid != os.getuid():
            raise TokenStoreError(f"the {what} {path} is owned by another user; refusing to "
                                  "use it")
        if st.st_mode & _FOREIGN_BITS:
            raise TokenStoreError(
                f"the {what} {path} has permissions {stat.S_IMODE(st.st_mode):04o}, open to "
                f"other users; refusing to use it (chmod {fix} {path})")

    def _open_checked(self, path: Path, flags: int, what: str) -> int | None:
        """A descriptor of ``path`` opened without following a symbolic link, checked to be a
        regular file of ours with no foreign bits; ``None`` when it does not exist."""
        try:
            fd = os.open(path, flags | _O_NOFOLLOW | _O_BINARY, 0o600)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if os.path.islink(path):
                raise TokenStoreError(f"{path} is a symbolic link; refusing to use it") from None
            raise TokenStoreError(f"cannot open {path}: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise TokenStoreError(f"{path} is not a regular file")
            self._check_owner_and_mode(path, st, what, "600")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _read(self, path: Path) -> bytes | None:
        """The bytes of a record file, ``None`` if it does not exist or is too large."""
        fd = self._open_checked(path, os.O_RDONLY, "file")
        if fd is None:
            return None
        try:
            if os.fstat(fd).st_size > MAX_RECORD_SIZE:
                return None
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_RECORD_SIZE:  # the file may grow between fstat and read
                chunk = os.read(fd, MAX_RECORD_SIZE + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            return None if size > MAX_RECORD_SIZE else b"".join(chunks)
        except OSError as exc:
            raise TokenStoreError(f"cannot read {path}: {exc.strerror}") from None
        finally:
            os.close(fd)

    def _check_existing(self, path: Path) -> None:
        """Refuse to replace an unsafe file (a symlink, someone else's, group-readable): the
        user should see that something is wrong rather than have it silently fixed."""
        fd = self._open_checked(path, os.O_RDONLY, "file")
        if fd is not None:
            os.close(fd)

    def _write_atomically(self, target: Path, data: bytes) -> None:
        temp = self._path / f"{_TEMP_PREFIX}{secrets.token_hex(8)}{_RECORD_SUFFIX}"
        try:
            fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _O_NOFOLLOW | _O_BINARY,
                         0o600)
        except OSError as exc:
            raise TokenStoreError(f"cannot write in {self._path}: {exc.strerror}") from None
        try:
            try:
                if _POSIX:
                    os.fchmod(fd, 0o600)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise TokenStoreError(f"cannot write {target}: {exc.strerror}") from None
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self._fsync_dir()

    def _fsync_dir(self) -> None:
        """Make the rename or removal durable.  Best effort: some file systems refuse."""
        if not _POSIX:
            return
        try:
            fd = os.open(self._path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    @staticmethod
    def _flock(fd: int, lock_path: Path) -> None:
        assert fcntl is not None
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TokenStoreError(
                        f"{lock_path} stayed locked by another process for {LOCK_TIMEOUT:g} s"
                    ) from None
                time.sleep(_LOCK_POLL)
            except OSError as exc:
                raise TokenStoreError(f"cannot lock {lock_path}: {exc.strerror}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's threads one at a time, and other processes through ``flock`` on
        the directory's ``.lock`` file (created 0600, checked like a record)."""
        with self._thread_lock:
            if fcntl is None:
                yield
                return
            lock_path = self._path / _LOCK_NAME
            fd = self._open_checked(lock_path, os.O_RDWR | os.O_CREAT, "lock file")
            if fd is None:  # pragma: no cover - O_CREAT makes it
                raise TokenStoreError(f"cannot create {lock_path}")
            try:
                self._flock(fd, lock_path)
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
