"""Skills (SEP-2640, the ``io.modelcontextprotocol/skills`` extension): the records and the
checks a host makes before a server's skill reaches a model.  No I/O.

A server lists skills (``skills/list``, ``skills/get``); each entry names its ``SKILL.md``
by URI, carries the frontmatter verbatim and a complete manifest of its files with
``sha256`` digests and sizes, or ``"dynamic"``.  Files are read with ``resources/read``.

- :func:`parse_skill`: one entry as a :class:`Skill`, or :class:`InvalidSkillEntry` naming
  what is wrong (an entry a host MUST NOT load).  A skill over the spec's per-skill limits
  (:data:`MAX_SKILL_FILES`, :data:`MAX_SKILL_BYTES`) still parses, so a listing shows it;
  :attr:`Skill.too_large` says why, and :func:`check_skill_size` refuses to load it.
- :func:`skill_file` / :func:`resolve_skill_path`: a relative path (or a URI) within a
  skill, never outside its root; while acting on a skill only listed files are read
  (:class:`SkillFileNotListed`).
- :func:`skill_contents_bytes`, :func:`verify_skill_file`: the raw bytes a read returned,
  checked against the entry's size, then its digest.
- :func:`check_skill_md`: the fetched ``SKILL.md``'s frontmatter compared field by field
  with the entry's; :func:`skill_body`: what follows it.
- :func:`find_skill`: a skill by URI, skill path or name; names are labels, not identifiers,
  so a name two skills share is :class:`AmbiguousSkill`, never a silent pick.

Every :class:`SkillVerificationError` means the content MUST NOT be used; the host refreshes
the entry (``skills/get``), which revokes any approval bound to the old manifest
(:attr:`Skill.manifest`).  A digest match is consistency, not trust: skill content stays
untrusted server text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ._errors import LocalProtocolError, MCPError, RemoteProtocolError
from ._frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter
from ._types import BlobResourceContents, ReadResourceResult

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "MAX_SKILL_URI",
    "SKILLS_EXTENSION",
    "SKILL_MD",
    "AmbiguousSkill",
    "InvalidSkillEntry",
    "InvalidSkillPath",
    "LoadedSkill",
    "Skill",
    "SkillContent",
    "SkillDigestMismatch",
    "SkillError",
    "SkillFile",
    "SkillFileError",
    "SkillFileNotListed",
    "SkillFrontmatterInvalid",
    "SkillFrontmatterMismatch",
    "SkillSizeMismatch",
    "SkillTooLarge",
    "SkillVerificationError",
    "UnknownSkill",
    "check_skill_md",
    "check_skill_size",
    "find_skill",
    "parse_skill",
    "resolve_skill_path",
    "skill_body",
    "skill_contents_bytes",
    "skill_file",
    "verify_skill_file",
]

#: The extension's id, in ``capabilities.extensions``.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
#: The file every skill has at its root; a skill's URI is its URI.
SKILL_MD = "SKILL.md"
#: The spec's per-skill limits ("Limits"): every host must accept up to 512 files and
#: 16 MiB in all; a bigger skill is not guaranteed to load anywhere.
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
#: Longest URI accepted in an entry (the common URL limit of browsers and proxies): URIs are
#: shown to users and models, and keyed on.
MAX_SKILL_URI = 8192
#: Characters of server text an error message quotes: enough to recognise, not to flood.
_CLIP = 200
#: Characters of a frontmatter value a mismatch message quotes.
_CLIP_VALUE = 80

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: Characters no URI holds (RFC 3986 has no spaces nor controls): refused, so a listing
#: line or a log line cannot be forged through one.
_BAD_URI_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f]")
#: A separator in disguise: a server that percent-decodes a segment (or reads ``\\`` as a
#: separator, as Windows paths do) would see two segments where the check saw one.
_HIDDEN_SEPARATOR = re.compile(r"\\|%2f|%5c", re.IGNORECASE)
#: Times a segment is percent-decoded to look for a dot segment or a separator (``%252e``
#: is ``%2e`` to a server that decodes twice): more would be a server decoding in a loop.
_DECODINGS = 3


def _clip(value: object, limit: int = _CLIP) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past Python's digit limit, a deep nest
        return f"<{type(value).__name__} too long to show>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- errors -----------------------------------------------------------------------------------


class SkillError(MCPError):
    """Base of the skill errors the host raises (not the server's malformed entries:
    those are :class:`InvalidSkillEntry`)."""


class InvalidSkillEntry(RemoteProtocolError):
    """A ``Skill`` entry the spec makes invalid (a bad URI, frontmatter or manifest): a host
    MUST NOT load it.  One bad entry concerns that skill only."""


class SkillVerificationError(SkillError):
    """Content that is not what the entry describes (tampered, corrupted or stale): it MUST
    NOT be used.  Refresh the entry with ``skills/get`` and start again from it.  ``uri``:
    the file concerned."""

    def __init__(self, uri: str, message: str) -> None:
        self.uri = uri
        super().__init__(message)


class SkillSizeMismatch(SkillVerificationError):
    """A file's length differs from its entry's ``size``."""

    def __init__(self, uri: str, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(uri, f"{_clip(uri)} is {actual} bytes, its skill entry says "
                              f"{expected}: not used (refresh the skill)")


class SkillDigestMismatch(SkillVerificationError):
    """A file's SHA-256 differs from its entry's ``digest``."""

    def __init__(self, uri: str, expected: str, actual: str) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(uri, f"{_clip(uri)} has digest {actual}, its skill entry says "
                              f"{_clip(expected)}: not used (refresh the skill)")


class SkillFrontmatterMismatch(SkillVerificationError):
    """The fetched ``SKILL.md``'s frontmatter differs from the entry's.  ``field``: the
    dotted path of the first difference (``"metadata.version"``); ``expected`` /
    ``actual``: the entry's and the file's value there (None when absent: the message
    says so)."""

    def __init__(self, uri: str, field: str, expected: Any, actual: Any, *,
                 absent: str | None = None) -> None:
        self.field = field
        self.expected = expected
        self.actual = actual
        if absent == "file":
            what = f"the entry has {_clip(expected, _CLIP_VALUE)}, the file has none"
        elif absent == "entry":
            what = f"the file has {_clip(actual, _CLIP_VALUE)}, the entry has none"
        else:
            what = (f"the entry has {_clip(expected, _CLIP_VALUE)}, the file "
                    f"{_clip(actual, _CLIP_VALUE)}")
        super().__init__(uri, f"frontmatter field {field[:_CLIP]!r} of {_clip(uri)} differs "
                              f"from its skill entry ({what}): not loaded")


class SkillFrontmatterInvalid(SkillVerificationError):
    """The fetched ``SKILL.md`` has no frontmatter this host can read (see
    :func:`~mcp_proto._frontmatter.parse_frontmatter`), so it cannot be checked against the
    entry: not loaded.  The :class:`FrontmatterError` is the ``__cause__``."""


class SkillFileNotListed(SkillVerificationError):
    """A read of a file the held entry does not list: while acting on a skill that is a
    verification failure (the skill changed).  ``skill_uri``: the skill's ``SKILL.md``."""

    def __init__(self, uri: str, skill_uri: str) -> None:
        self.skill_uri = skill_uri
        super().__init__(uri, f"{_clip(uri)} is not a file of skill {_clip(skill_uri)} as "
                              "listed (refresh the skill to see files added since)")


class SkillTooLarge(SkillError):
    """A skill over the per-skill limits (files or bytes); the host declines to load it and
    tells the user ``reason``."""

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(f"skill {_clip(uri)} is not loaded: {reason}")


class UnknownSkill(SkillError, LookupError):
    """No skill has that URI, path or name.  ``name``: what was asked for."""

    def __init__(self, name: str, message: str | None = None) -> None:
        self.name = name
        super().__init__(message or f"no skill is named {_clip(name)}")


class AmbiguousSkill(SkillError, LookupError):
    """A name several skills share (names are labels, not identifiers): ask again by URI or
    skill path.  ``uris``: the candidates, sorted."""

    def __init__(self, name: str, uris: Sequence[str]) -> None:
        self.name = name
        self.uris = tuple(uris)
        shown = ", ".join(_clip(u, 100) for u in self.uris[:8])
        more = f" and {len(self.uris) - 8} more" if len(self.uris) > 8 else ""
        super().__init__(f"{len(self.uris)} skills are named {_clip(name)}: {shown}{more}; "
                         "name one by its URI or skill path")


class SkillFileError(SkillError):
    """A ``resources/read`` result with no usable content for the file asked (none for its
    URI, several, text that is not Unicode, a blob that is not base64).  ``uri``."""

    def __init__(self, uri: str, reason: str) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(f"reading {_clip(uri)}: {reason}")


class InvalidSkillPath(SkillError, ValueError):
    """A path that cannot name a file of the skill: empty, absolute, escaping its root with
    ``..``, with a segment a server could decode into another path (``%2e%2e``, ``%2F``,
    ``%5C``, a backslash), or a URI of another scheme or outside the skill.  A caller's (or
    a model's) mistake: nothing is read."""


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillFile:
    """One file of a skill's manifest."""

    uri: str
    path: str
    """Relative to the skill's root (``SKILL.md``, ``references/FORMS.md``)."""
    digest: str
    """``sha256:`` and 64 lowercase hex digits, as listed."""
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A skill as its entry describes it.  Its identity across servers is the pair (the
    host's label of the server, :attr:`uri`): never key anything on the URI alone."""

    uri: str
    """The URI of its ``SKILL.md``."""
    name: str
    description: str
    frontmatter: dict[str, Any]
    """Verbatim, as the entry carries it (``name`` and ``description`` included)."""
    files: tuple[SkillFile, ...] | None
    """The complete manifest, in the server's order; None exactly when :attr:`dynamic`."""
    dynamic: bool
    """The server publishes no digests (``"resources": "dynamic"``): no integrity, nothing
    to bind an approval to."""

    @property
    def root(self) -> str:
        """The skill's directory: its URI without ``/SKILL.md``."""
        return self.uri[:-len(SKILL_MD) - 1]

    @property
    def skill_path(self) -> str:
        """The root without its scheme (``acme/billing/refunds``)."""
        return _without_scheme(self.root)

    @property
    def total_size(self) -> int:
        """The sum of the listed sizes (0 for a dynamic skill)."""
        return sum(f.size for f in self.files) if self.files is not None else 0

    @property
    def main(self) -> SkillFile | None:
        """The manifest's entry of ``SKILL.md`` itself (None for a dynamic skill)."""
        if self.files is None:
            return None
        return next(f for f in self.files if f.uri == self.uri)

    @property
    def too_large(self) -> str | None:
        """Why the skill is over the spec's per-skill limits, or None."""
        if self.files is None:
            return None
        if len(self.files) > MAX_SKILL_FILES:
            return (f"it has {len(self.files)} files, more than the {MAX_SKILL_FILES} a host "
                    "must accept")
        if self.total_size > MAX_SKILL_BYTES:
            return (f"its files total {self.total_size} bytes, more than the "
                    f"{MAX_SKILL_BYTES} a host must accept")
        return None

    @property
    def manifest(self) -> frozenset[tuple[str, str]] | None:
        """Every ``(uri, digest)`` of the manifest: what a persisted approval binds to (a
        different set revokes it).  None for a dynamic skill, which cannot be bound."""
        if self.files is None:
            return None
        return frozenset((f.uri, f.digest) for f in self.files)


def _without_scheme(uri: str) -> str:
    m = _SCHEME.match(uri)
    rest = uri[m.end():] if m else uri
    return rest[2:] if rest.startswith("//") else rest


def _check_uri(value: object, where: str, what: str) -> str:
    if type(value) is not str:
        raise InvalidSkillEntry(f"{where}: {what} must be a string, got {_clip(value)}")
    if len(value) > MAX_SKILL_URI:
        raise InvalidSkillEntry(f"{where}: {what} is longer than {MAX_SKILL_URI} characters")
    if _BAD_URI_CHAR.search(value):
        raise InvalidSkillEntry(f"{where}: {what} {_clip(value)} holds a space or a control "
                                "character")
    if not _SCHEME.match(value):
        raise InvalidSkillEntry(f"{where}: {what} {_clip(value)} has no scheme")
    return value


def _disguised_segment(segment: str) -> bool:
    """A segment a server could read as something else than one plain name: it holds a
    backslash or an encoded separator (``%2F``, ``%5C``, any case), or it percent-decodes
    (once, or again: ``%252e``) to ``.``, ``..``, a backslash or a separator."""
    for _ in range(_DECODINGS):
        if _HIDDEN_SEPARATOR.search(segment) or "/" in segment:
            return True
        if "%" not in segment:
            return False
        decoded = unquote(segment)
        if decoded in ("", ".", ".."):
            return True
        if decoded == segment:
            return False
        segment = decoded
    return "%" in segment or _HIDDEN_SEPARATOR.search(segment) is not None


def _bad_segments(path: str, *, leading_slash: bool = False) -> bool:
    """A path with ``.`` / ``..`` or empty segments, also once percent-decoded (with
    ``leading_slash``, a leading empty one, ``file:///``'s, aside), or a segment hiding a
    separator (a backslash, ``%2F``, ``%5C``: :func:`_disguised_segment`)."""
    parts = path.split("/")
    if leading_slash and len(parts) > 1 and parts[0] == "":
        parts = parts[1:]
    return any(p in ("", ".", "..") or _disguised_segment(p) for p in parts)


def parse_skill(obj: object, *, where: str = "skill") -> Skill:
    """A :class:`Skill` from its wire entry (an item of ``skills/list``, or ``skills/get``'s
    ``skill``).

    Raises :class:`InvalidSkillEntry` naming the problem: a ``uri`` that is no string, does
    not end in ``/SKILL.md`` or has ``.``/``..`` segments (percent-encoded too) or a segment
    hiding a separator (a backslash, ``%2F``, ``%5C``); ``frontmatter`` not an object, or
    its ``name`` / ``description`` not non-empty strings; a last path segment other than the
    name; ``resources`` missing or neither a list nor ``"dynamic"``; a file without a string
    ``uri``, with a ``digest`` that is not ``sha256:`` and 64 lowercase hex digits or a
    ``size`` that is not a non-negative integer; a file outside the skill's directory; a
    file listed twice; no entry for ``SKILL.md``.  The caller leaves that skill out (the
    others of a listing stay usable)."""
    if type(obj) is not dict:
        raise InvalidSkillEntry(f"{where}: a skill entry must be an object, got {_clip(obj)}")
    uri = _check_uri(obj.get("uri"), where, "uri")
    where = f"{where} {_clip(uri, 120)}"
    if not uri.endswith("/" + SKILL_MD):
        raise InvalidSkillEntry(f"{where}: uri must end with /{SKILL_MD}")
    root = uri[:-len(SKILL_MD) - 1]
    path = _without_scheme(root)
    if not path or _bad_segments(path, leading_slash=True):
        raise InvalidSkillEntry(f"{where}: the skill path {_clip(path)} is empty or has "
                                "empty, '.' or '..' segments")
    front = obj.get("frontmatter")
    if type(front) is not dict:
        raise InvalidSkillEntry(f"{where}: frontmatter must be an object, got {_clip(front)}")
    name, description = front.get("name"), front.get("description")
    for key, value in (("name", name), ("description", description)):
        if type(value) is not str or not value.strip():
            raise InvalidSkillEntry(f"{where}: frontmatter.{key} must be a non-empty "
                                    f"string, got {_clip(value)}")
    assert isinstance(name, str) and isinstance(description, str)
    if path.rsplit("/", 1)[-1] != name:
        raise InvalidSkillEntry(f"{where}: the last segment of the skill path must be the "
                                f"skill's name {_clip(name)}")
    resources = obj.get("resources")
    if resources == "dynamic":
        return Skill(uri=uri, name=name, description=description, frontmatter=front,
                     files=None, dynamic=True)
    if type(resources) is not list:
        raise InvalidSkillEntry(f"{where}: resources must be a list of files or "
                                f"\"dynamic\", got {_clip(resources)}")
    files: list[SkillFile] = []
    seen: set[str] = set()
    for i, item in enumerate(resources):
        files.append(_parse_file(item, uri, root, f"{where} resources[{i}]"))
        if files[-1].uri in seen:
            raise InvalidSkillEntry(f"{where}: {_clip(files[-1].uri)} is listed twice")
        seen.add(files[-1].uri)
    if uri not in seen:
        raise InvalidSkillEntry(f"{where}: resources has no entry for {SKILL_MD} itself")
    return Skill(uri=uri, name=name, description=description, frontmatter=front,
                 files=tuple(files), dynamic=False)


def _parse_file(item: object, uri: str, root: str, where: str) -> SkillFile:
    if type(item) is not dict:
        raise InvalidSkillEntry(f"{where}: a file must be an object, got {_clip(item)}")
    file_uri = _check_uri(item.get("uri"), where, "uri")
    digest, size = item.get("digest"), item.get("size")
    if type(digest) is not str or not _DIGEST.match(digest):
        raise InvalidSkillEntry(f"{where}: digest must be 'sha256:' and 64 lowercase hex "
                                f"digits, got {_clip(digest)}")
    if type(size) is not int or size < 0:
        raise InvalidSkillEntry(f"{where}: size must be a non-negative integer, got "
                                f"{_clip(size)}")
    if file_uri == uri:
        rel = SKILL_MD
    elif file_uri.startswith(root + "/") and not _bad_segments(file_uri[len(root) + 1:]):
        rel = file_uri[len(root) + 1:]
    else:
        raise InvalidSkillEntry(f"{where}: {_clip(file_uri)} is not within the skill's "
                                f"directory {_clip(root)}")
    return SkillFile(uri=file_uri, path=rel, digest=digest, size=size)


# -- paths ------------------------------------------------------------------------------------


def resolve_skill_path(skill: Skill, path_or_uri: str) -> str:
    """The URI a relative path (``references/GUIDE.md``, resolved against the skill's root
    as a file system path would be) or a URI names, checked to be the skill's ``SKILL.md``
    or within its root.  No listing is consulted (for a dynamic skill this is all there
    is).  Raises :class:`InvalidSkillPath` for an empty or absolute path, one that leaves
    the root, one with a segment a server could decode into another path (a
    percent-encoded ``.`` or ``..``, ``%2F`` or ``%5C`` in any case, a backslash), or a URI
    outside the skill (another scheme included)."""
    if type(path_or_uri) is not str or not path_or_uri:
        raise InvalidSkillPath(f"a file path must be a non-empty string, got "
                               f"{_clip(path_or_uri)}")
    if _SCHEME.match(path_or_uri):
        uri = path_or_uri
        if uri == skill.uri:
            return uri
        rel = uri[len(skill.root) + 1:] if uri.startswith(skill.root + "/") else None
        if rel is None or _bad_segments(rel) or _BAD_URI_CHAR.search(rel):
            raise InvalidSkillPath(f"{_clip(uri)} is not within skill {_clip(skill.uri)}")
        return uri
    if path_or_uri.startswith("/"):
        raise InvalidSkillPath(f"{_clip(path_or_uri)} is absolute; give a path relative "
                               "to the skill's root")
    if _BAD_URI_CHAR.search(path_or_uri):
        raise InvalidSkillPath(f"{_clip(path_or_uri)} holds a space or a control character")
    if any(_disguised_segment(p) for p in path_or_uri.split("/")):
        raise InvalidSkillPath(f"{_clip(path_or_uri)} has a percent-encoded '.' or '..' "
                               "segment, a backslash or an encoded separator")
    norm = posixpath.normpath(path_or_uri)
    if norm in (".", "..") or norm.startswith("../") or norm.startswith("/"):
        raise InvalidSkillPath(f"{_clip(path_or_uri)} is not within the skill's root")
    return skill.root + "/" + norm


def skill_file(skill: Skill, path_or_uri: str) -> SkillFile:
    """The listed file a path or URI names (see :func:`resolve_skill_path`).  Raises
    :class:`InvalidSkillPath` as that does, and :class:`SkillFileNotListed` for a file the
    manifest does not list (while acting on the skill: a verification failure).  A dynamic
    skill lists nothing: :class:`LocalProtocolError` (call :func:`resolve_skill_path`, read
    unverified, and bound what is read with :func:`check_skill_size`)."""
    if skill.files is None:
        raise LocalProtocolError(f"skill {_clip(skill.uri)} is dynamic: it lists no files "
                                 "(use resolve_skill_path)")
    uri = resolve_skill_path(skill, path_or_uri)
    for f in skill.files:
        if f.uri == uri:
            return f
    raise SkillFileNotListed(uri, skill.uri)


def find_skill(skills: Sequence[Skill], name_or_uri: str) -> Skill:
    """The skill of ``skills`` (one server's) whose URI, root, skill path (``prefix/name``)
    or else name is ``name_or_uri``.  Raises :class:`AmbiguousSkill` when several match the
    same way (the caller asks again by URI), :class:`UnknownSkill` when none does."""
    keys: tuple[Callable[[Skill], str], ...] = (
        lambda s: s.uri, lambda s: s.root, lambda s: s.skill_path, lambda s: s.name)
    for key in keys:
        found = {s.uri: s for s in skills if key(s) == name_or_uri}
        if len(found) == 1:
            return next(iter(found.values()))
        if found:
            raise AmbiguousSkill(name_or_uri, sorted(found))
    raise UnknownSkill(name_or_uri)


# -- content ----------------------------------------------------------------------------------


def _max_base64(size: int) -> int:
    """The longest base64 text of ``size`` bytes: padded, plus slack for a stray newline
    pair a lenient encoder may leave (which strict decoding then refuses anyway)."""
    return -(-size // 3) * 4 + 4


def skill_contents_bytes(result: ReadResourceResult, uri: str, *,
                         expected_size: int | None = None) -> bytes:
    """The raw bytes of ``result``'s content for ``uri``: a text's UTF-8, a blob's base64
    decoded.  Raises :class:`SkillFileError` when no content has that URI, several do, or it
    cannot be decoded; the caller treats the file as unreadable (nothing is used).  With
    ``expected_size`` (the listed size), a blob longer than that many bytes can encode is
    refused before it is decoded (no memory spent on a file that is not the listed one)."""
    found = [c for c in result.contents if c.uri == uri]
    if not found:
        others = ", ".join(_clip(c.uri, 80) for c in result.contents[:3]) or "none"
        raise SkillFileError(uri, f"the result has no content for it (it has: {others})")
    if len(found) > 1:
        raise SkillFileError(uri, f"the result has {len(found)} contents for it")
    content = found[0]
    if isinstance(content, BlobResourceContents):
        if expected_size is not None and len(content.blob) > _max_base64(expected_size):
            raise SkillFileError(uri, f"its blob has {len(content.blob)} base64 characters, "
                                      f"more than a file of {expected_size} bytes (as "
                                      "listed) needs: not decoded (refresh the skill)")
        try:
            return base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError):
            raise SkillFileError(uri, "its blob is not valid base64") from None
    try:
        return content.text.encode("utf-8")
    except UnicodeEncodeError:
        raise SkillFileError(uri, "its text is not valid Unicode") from None


def verify_skill_file(skill: Skill, file: SkillFile, data: bytes) -> None:
    """Check ``data`` (a read of ``file``) against the entry: its length, then its
    SHA-256.  Raises :class:`SkillFileNotListed` when ``file`` is not in ``skill``'s
    manifest, :class:`SkillSizeMismatch`, :class:`SkillDigestMismatch`: the data MUST NOT be
    used (refresh the skill).  :class:`LocalProtocolError` for a dynamic skill (there is
    nothing to verify against)."""
    if skill.files is None:
        raise LocalProtocolError(f"skill {_clip(skill.uri)} is dynamic: its files cannot be "
                                 "verified")
    if file not in skill.files:
        raise SkillFileNotListed(file.uri, skill.uri)
    if len(data) != file.size:
        raise SkillSizeMismatch(file.uri, file.size, len(data))
    actual = "sha256:" + hashlib.sha256(data).hexdigest()
    if actual != file.digest:
        raise SkillDigestMismatch(file.uri, file.digest, actual)


def check_skill_size(skill: Skill, retrieved: int = 0) -> None:
    """Refuse to load a skill over the limits: a listed one by its manifest
    (:attr:`Skill.too_large`), a dynamic one once ``retrieved`` (the bytes read of it so
    far) passes :data:`MAX_SKILL_BYTES`.  Raises :class:`SkillTooLarge`; tell the user its
    ``reason``."""
    reason = skill.too_large
    if reason is None and skill.dynamic and retrieved > MAX_SKILL_BYTES:
        reason = (f"{retrieved} bytes of it were read, more than the {MAX_SKILL_BYTES} a "
                  "host must accept")
    if reason is not None:
        raise SkillTooLarge(skill.uri, reason)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: a bool is no number, an int and a float of one value are one number
    (JSON has one kind), NaN is itself."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        if type(a) is float and type(b) is float and math.isnan(a) and math.isnan(b):
            return True  # (never math.isnan of an int: one past a float's range overflows)
        return bool(a == b)
    return type(a) is type(b) and (type(a) not in (list, dict) and a == b)


def _first_difference(entry: Any, file: Any, path: str
                      ) -> tuple[str, Any, Any, str | None] | None:
    if type(entry) is dict and type(file) is dict:
        for key in entry:
            sub = f"{path}.{key}" if path else str(key)
            if key not in file:
                return sub, entry[key], None, "file"
            found = _first_difference(entry[key], file[key], sub)
            if found:
                return found
        for key in file:
            if key not in entry:
                return (f"{path}.{key}" if path else str(key)), None, file[key], "entry"
        return None
    if type(entry) is list and type(file) is list:
        if len(entry) != len(file):
            return path, entry, file, None
        for i, (x, y) in enumerate(zip(entry, file, strict=True)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if _same(entry, file) else (path, entry, file, None)


def check_skill_md(skill: Skill, text: str) -> dict[str, Any]:
    """Parse the frontmatter of a fetched ``SKILL.md`` and compare it, field by field and
    both ways, with the entry's; returns it.  Raises :class:`SkillFrontmatterInvalid` when
    it cannot be parsed and :class:`SkillFrontmatterMismatch` (the first difference) when it
    differs: the skill MUST NOT be loaded.  Call it after :func:`verify_skill_file` (or on
    a dynamic skill's unverified text)."""
    try:
        parsed = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise SkillFrontmatterInvalid(skill.uri, f"the frontmatter of {_clip(skill.uri)} "
                                                 f"cannot be read: {exc}: not loaded") from exc
    found = _first_difference(skill.frontmatter, parsed, "")
    if found is not None:
        field, expected, actual, absent = found
        raise SkillFrontmatterMismatch(skill.uri, field or "(all)", expected, actual,
                                       absent=absent)
    return parsed


def skill_body(text: str) -> str:
    """A ``SKILL.md`` after its frontmatter block (what the model reads).  Raises
    :class:`~mcp_proto._frontmatter.FrontmatterError` when the text has no frontmatter
    block (check it with :func:`check_skill_md` first)."""
    return split_frontmatter(text)[1]


# -- what a read gives the host ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillContent:
    """One file of a skill as read: checked against the entry's size and digest when
    :attr:`verified` (always, except for a dynamic skill, which publishes no digests)."""

    skill: Skill
    uri: str
    path: str
    """Relative to the skill's root."""
    data: bytes
    verified: bool

    @property
    def text(self) -> str:
        """The data as UTF-8 text.  Raises :class:`SkillFileError` for a file that is not."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillFileError(self.uri, "it is not UTF-8 text") from None

    @classmethod
    def read(cls, skill: Skill, path_or_uri: str, data: bytes) -> SkillContent:
        """``data``, read for ``path_or_uri`` of ``skill``, checked: a listed file against its
        entry (:func:`verify_skill_file`), a dynamic skill's against the per-skill size
        limit.  Raises what those raise; nothing unverified is returned for a listed skill."""
        if skill.dynamic:
            uri = resolve_skill_path(skill, path_or_uri)
            check_skill_size(skill, len(data))
            path = SKILL_MD if uri == skill.uri else uri[len(skill.root) + 1:]
            return cls(skill=skill, uri=uri, path=path, data=data, verified=False)
        file = skill_file(skill, path_or_uri)
        verify_skill_file(skill, file, data)
        return cls(skill=skill, uri=file.uri, path=file.path, data=data, verified=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedSkill:
    """A loaded skill: its ``SKILL.md`` read, checked (size, digest, frontmatter field by
    field) and split.  The entry it was loaded from stays the authority for which files may
    be read while the host acts on it (the held entry)."""

    skill: Skill
    text: str
    """The whole ``SKILL.md``."""
    frontmatter: dict[str, Any]
    body: str
    """The instructions after the frontmatter block."""
    verified: bool

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def uri(self) -> str:
        return self.skill.uri

    @classmethod
    def of(cls, content: SkillContent) -> LoadedSkill:
        """The skill whose ``SKILL.md`` is ``content``.  Raises :class:`SkillFileError`
        (not UTF-8), :class:`SkillFrontmatterInvalid` and :class:`SkillFrontmatterMismatch`:
        the skill MUST NOT be loaded."""
        text = content.text
        frontmatter = check_skill_md(content.skill, text)
        return cls(skill=content.skill, text=text, frontmatter=frontmatter,
                   body=skill_body(text), verified=content.verified)
