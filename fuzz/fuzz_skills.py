"""Fuzz harness for skill entries and their checks (``mcp_proto._skills``,
``mcp_proto.host._skills``).

``check(data)`` reads ``data`` two ways, chosen by its first byte:

- **raw** (a first byte below 0x80): the rest as JSON: one entry, or a ``skills/list``
  result (``{"skills": [...]}``) whose entries are parsed one by one;
- **structured** (otherwise): entries built from the data: URIs under several schemes and
  prefixes (``.`` / ``..`` / empty segments, spaces, a wrong last segment), frontmatter,
  manifests (bad digests and sizes, files outside the root, duplicates, no ``SKILL.md``,
  ``"dynamic"``), with file contents whose digests are real; then paths asked of them
  (``..``, absolute, other schemes, URIs) and contents read back, intact or changed.

Properties (any violation raises AssertionError):

- :func:`parse_skill` raises nothing but :class:`InvalidSkillEntry`; a parsed skill keeps
  its invariants (URI ends ``/SKILL.md``, its last path segment is the name, every file is
  ``SKILL.md`` or under the root with no ``.``/``..``/empty segment, no file twice,
  ``main`` listed, ``files`` None exactly when dynamic, ``too_large`` exactly when over a
  limit);
- :func:`resolve_skill_path` raises only :class:`InvalidSkillPath` and never leaves the
  root; :func:`skill_file` returns a listed file or raises :class:`InvalidSkillPath` /
  :class:`SkillFileNotListed` (:class:`LocalProtocolError` for a dynamic skill);
- a listed file's own bytes verify; changed bytes fail with the size or digest error; a
  ``SKILL.md`` written from the entry's frontmatter passes :func:`check_skill_md`, one with
  a field changed fails with :class:`SkillFrontmatterMismatch` naming that field;
- :func:`host_skills` names are unique, sorted, and the same for the skills in any order;
  :func:`find_skill` finds each skill by its URI.

Run: ``python fuzz/fuzz_skills.py /tmp/fz/skills fuzz/corpus/skills``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz._runner import Choices, bug_matcher, escaped
from fuzz.fuzz_frontmatter import dump, same
from mcp_proto._errors import LocalProtocolError
from mcp_proto._skills import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    InvalidSkillEntry,
    InvalidSkillPath,
    Skill,
    SkillDigestMismatch,
    SkillFileNotListed,
    SkillFrontmatterInvalid,
    SkillFrontmatterMismatch,
    SkillSizeMismatch,
    check_skill_md,
    find_skill,
    parse_skill,
    resolve_skill_path,
    skill_file,
    verify_skill_file,
)
from mcp_proto.host._skills import host_skills

# Tag -> (exception type that escapes, text in its message) or AssertionError text.
KNOWN_BUGS: dict[str, tuple[type[BaseException], str]] = {}
known_bug = bug_matcher(KNOWN_BUGS)

#: Bytes of a raw input read, and most entries of one checked (bounded work per input).
MAX_RAW = 65_536
MAX_ENTRIES = 16

SCHEMES = ("skill://", "github://", "file:///", "x+y.z-1:", "", "skill:", "SKILL://", "1x://")
SEGMENTS = ("acme", "billing", "refunds", "pdf", "git-workflow", ".", "..", "", "a b", "%2e",
            "\u00e9", "SKILL.md", "a\x00", "~")
FILES = ("SKILL.md", "references/FORMS.md", "scripts/x.py", "templates", "a/../b", "./c",
         "d//e", "..", "", "f g", "\u00e9.md", "templates/regional/eu.md")
GOOD_FILES = tuple(f for f in FILES if f and all(p not in ("", ".", "..") and " " not in p
                                                 for p in f.split("/")))
PATHS = ("", ".", "..", "/", "/etc/passwd", "../x", "a/../../b", "./SKILL.md", "SKILL.md",
         "references/FORMS.md", "references//FORMS.md", "references/./FORMS.md",
         "references/../SKILL.md", "x y", "other://a/SKILL.md", "templates/", "%2e%2e/x",
         "C:\\x", "\\..\\x", "\x00")
CONTENTS = (b"", b"---\nname: x\n---\n", b"hello\n", b"\xff\xfe", b"x" * 100)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def draw_entry(ch: Choices) -> tuple[dict[str, Any], dict[str, bytes]]:
    """An entry and the contents of its files (by URI), right or wrong as drawn."""
    odd = ch.chance(4)  # most entries are valid but for what the draws below break
    scheme = ch.pick(SCHEMES) if odd else ch.pick(SCHEMES[:4])
    prefix = [ch.pick(SEGMENTS) if odd else ch.pick(SEGMENTS[:5]) for _ in range(ch.below(3))]
    name = ch.pick(("refunds", "pdf", "git-workflow", "a", "SKILL.md", ".." if odd else "b"))
    last = ch.pick(SEGMENTS) if odd and ch.chance(4) else name
    root = scheme + "/".join([*prefix, last])
    uri = root + "/SKILL.md" if not ch.chance(16) else root + ch.pick(("/skill.md", "", "/"))
    contents: dict[str, bytes] = {}
    files: list[Any] = []
    paths = ["SKILL.md"] if not ch.chance(10) else []
    paths += [ch.pick(FILES) if odd else ch.pick(GOOD_FILES) for _ in range(ch.below(5))]
    for path in paths:
        file_uri = uri if path == "SKILL.md" and ch.below(4) else (
            root + "/" + path if not ch.chance(12) else ch.pick(SCHEMES) + path)
        data = ch.pick(CONTENTS)
        contents[file_uri] = data
        item: Any = {"uri": file_uri, "digest": _digest(data), "size": len(data)}
        k = ch.below(24)
        if k == 0:
            item["digest"] = ch.pick(("sha256:" + "A" * 64, "md5:x", "", None, 5))
        elif k == 1:
            item["size"] = ch.pick((-1, 1.5, True, "3", None, MAX_SKILL_BYTES + 1))
        elif k == 2:
            item = ch.pick((None, [], "x", {"digest": item["digest"]}))
        files.append(item)
    front: Any = {"name": name, "description": ch.pick(("does it", "", " ", None, "x" * 300))
                  if ch.chance(8) else "does it"}
    for _ in range(ch.below(3)):
        front[ch.pick(("license", "metadata", "allowed-tools", "x", "name" if odd else "y"))
              ] = ch.pick(
            ("Apache-2.0", {"version": "2.1.0"}, ["Bash"], 1, None, True, 1.5, "2.1.0"))
    if ch.chance(16):
        front = ch.pick((None, [], "name: x"))
    entry: dict[str, Any] = {"uri": uri if not ch.chance(32) else ch.pick((None, 7, [])),
                             "frontmatter": front}
    k = ch.below(12)
    if k == 0:
        entry["resources"] = "dynamic"
    elif k == 1:
        entry["resources"] = ch.pick((None, "Dynamic", {}, 0))
    elif k != 2:
        entry["resources"] = files + (files[-1:] if ch.chance(16) else [])
    return entry, contents


def _segments_ok(rest: str) -> bool:
    return all(p not in ("", ".", "..") for p in rest.split("/"))


def check_skill(skill: Skill, obj: dict[str, Any]) -> None:
    assert skill.uri == obj["uri"] and skill.uri.endswith("/SKILL.md")
    assert skill.skill_path and skill.skill_path.rsplit("/", 1)[-1] == skill.name
    assert skill.root + "/SKILL.md" == skill.uri and skill.name.strip()
    assert skill.frontmatter is obj["frontmatter"] and skill.description.strip()
    if skill.files is None:
        assert skill.dynamic and obj["resources"] == "dynamic" and skill.main is None
        assert skill.too_large is None and skill.manifest is None
        return
    assert not skill.dynamic and len({f.uri for f in skill.files}) == len(skill.files)
    for f in skill.files:
        if f.uri == skill.uri:
            assert f.path == "SKILL.md"
        else:
            assert f.uri == skill.root + "/" + f.path and _segments_ok(f.path), f
        assert f.size >= 0 and type(f.size) is int and len(f.digest) == 71
    assert skill.main is not None and skill.main.uri == skill.uri
    over = len(skill.files) > MAX_SKILL_FILES or skill.total_size > MAX_SKILL_BYTES
    assert (skill.too_large is not None) == over


def _parse(obj: Any) -> Skill | None:
    try:
        return parse_skill(obj, where="fuzz")
    except InvalidSkillEntry as exc:
        assert str(exc).startswith("fuzz") and len(str(exc)) < 1000, str(exc)[:300]
        return None
    except Exception as exc:
        escaped("parse_skill", exc)


def check_paths(skill: Skill, asked: list[str]) -> None:
    listed = {f.uri for f in skill.files or ()}
    for path in asked:
        try:
            uri = resolve_skill_path(skill, path)
        except InvalidSkillPath:
            uri = None
        except Exception as exc:
            escaped(f"resolve_skill_path({path!r})", exc)
        if uri is not None:
            assert uri == skill.uri or (uri.startswith(skill.root + "/")
                                        and _segments_ok(uri[len(skill.root) + 1:])), uri
        try:
            found = skill_file(skill, path)
        except InvalidSkillPath:
            assert uri is None, f"{path!r} resolved but skill_file refused it"
            continue
        except SkillFileNotListed as exc:
            assert uri is not None and uri not in listed and exc.uri == uri
            continue
        except LocalProtocolError:
            assert skill.dynamic
            continue
        except Exception as exc:
            escaped(f"skill_file({path!r})", exc)
        assert found.uri == uri and uri in listed


def check_contents(skill: Skill, contents: dict[str, bytes], ch: Choices) -> None:
    for f in skill.files or ():
        data = contents.get(f.uri)
        if data is None or _digest(data) != f.digest or len(data) != f.size:
            continue
        verify_skill_file(skill, f, data)
        changed = data + b"!" if ch.chance(2) or not data else bytes([data[0] ^ 1]) + data[1:]
        try:
            verify_skill_file(skill, f, changed)
        except (SkillSizeMismatch, SkillDigestMismatch) as exc:
            assert isinstance(exc, SkillSizeMismatch) == (len(changed) != f.size)
        else:
            raise AssertionError(f"changed bytes of {f.uri!r} verified")
    text = dump(skill.frontmatter, ch)
    try:
        parsed = check_skill_md(skill, text)
    except SkillFrontmatterInvalid:
        return  # a frontmatter value the YAML subset cannot hold as written
    except SkillFrontmatterMismatch as exc:
        raise AssertionError(f"the entry's own frontmatter differs at {exc.field}") from exc
    assert same(parsed, skill.frontmatter), "check_skill_md returned another frontmatter"
    wrong = dict(skill.frontmatter)
    wrong["description"] = skill.description + " (changed)"
    try:
        check_skill_md(skill, dump(wrong, ch))
    except SkillFrontmatterMismatch as exc:
        assert exc.field == "description", exc.field
    except SkillFrontmatterInvalid:
        pass
    else:
        raise AssertionError("a changed description passed")


def check_many(skills: list[Skill], ch: Choices) -> None:
    try:
        named = host_skills({"s": skills, "t__s": skills[:1]})
    except Exception as exc:
        escaped("host_skills", exc)
    names = [h.name for h in named]
    assert names == sorted(names) and len(set(names)) == len(names), names
    again = host_skills({"t__s": skills[:1], "s": list(reversed(skills))})
    assert again == named, "host_skills depends on the listing order"
    for skill in skills:
        assert find_skill(skills, skill.uri).uri == skill.uri


def check_entries(objs: list[Any], contents: dict[str, bytes], ch: Choices) -> None:
    skills: list[Skill] = []
    for obj in objs[:MAX_ENTRIES]:
        skill = _parse(obj)
        if skill is None:
            continue
        check_skill(skill, obj)
        asked = [ch.pick(PATHS) for _ in range(3)] + [f.path for f in skill.files or ()][:4]
        asked += [skill.root + "/" + ch.pick(PATHS), skill.uri]
        check_paths(skill, asked)
        check_contents(skill, contents, ch)
        skills.append(skill)
    check_many(skills, ch)


def check(data: bytes) -> None:
    if not data or data[0] < 0x80:
        try:
            value = json.loads(data[1:MAX_RAW])
        except (ValueError, RecursionError):
            return
        listed = value["skills"] if type(value) is dict and type(value.get("skills")) is list \
            else [value]
        check_entries(listed, {}, Choices(data[::-1]))
        return
    ch = Choices(data[1:])
    objs: list[Any] = []
    contents: dict[str, bytes] = {}
    for _ in range(1 + ch.below(4)):
        obj, files = draw_entry(ch)
        objs.append(obj)
        contents.update(files)
    check_entries(objs, contents, ch)


if __name__ == "__main__":
    from fuzz._runner import fuzz_main

    fuzz_main(check, known_bug)
