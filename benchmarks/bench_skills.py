"""Loading a skill (SEP-2640): what the checks a host must make before it uses a skill file
cost, beside the floor of each, in one run.

    python benchmarks/bench_skills.py [--quick] [--json PATH]

* **verify**: ``SkillContent.read`` of one listed file (the entry's size, then SHA-256 over
  the bytes, the file found by its path in the manifest) at 4 KiB, 1 MiB and 16 MiB (the
  extension's per-skill limit); **floor**: ``hashlib.sha256(data).hexdigest()`` and a
  comparison, nothing else.
* **frontmatter**: ``check_skill_md`` of a ``SKILL.md`` (a frontmatter of the size the Agent
  Skills format allows: name, description, license, compatibility, metadata with nested
  keys and lists, allowed-tools), which parses the YAML subset and compares it field by field
  with the entry; beside PyYAML's ``safe_load`` of the same block (with its C loader when it
  has one), the parser most Python hosts would reach for, which checks nothing.
* **listing**: ``parse_skill`` of 1,000 entries of 8 files each (what ``skills/list`` parses
  and checks per entry), beside ``json.loads`` of the same listing (the floor: the bytes must
  be decoded anyway).

Numbers differ between machines; the ratios of one run hold.
"""

# ruff: noqa: PLC0415 - PyYAML is imported only where it is measured
from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C

from mcp_proto import SkillContent, check_skill_md, parse_skill

FRONTMATTER = """---
name: pdf-processing
description: >-
  Extract text and tables from PDF files, fill PDF forms, and merge documents. Use when
  working with PDF files or when the user mentions PDFs, forms, or document extraction.
license: Apache-2.0
compatibility: Requires python3 and the pypdf package
allowed-tools: Bash(python3:*) Read Write
metadata:
  author: example-org
  version: "2.1.0"
  tags: [pdf, forms, extraction, documents]
  maintainers:
    - name: Ada
      email: ada@example.org
    - name: Lin
      email: lin@example.org
  support:
    url: https://example.org/support
    hours: "09:00-17:00"
---
"""
BODY = "# PDF processing\n\n" + "Step by step instructions for the model.\n" * 40


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _entry(name: str, files: dict[str, bytes]) -> dict[str, Any]:
    uri = f"skill://{name}/SKILL.md"
    return {"uri": uri, "frontmatter": {"name": name, "description": "d"},
            "resources": [{"uri": f"skill://{name}/{path}", "digest": _digest(data),
                           "size": len(data)} for path, data in files.items()]}


def _best(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def collect(*, quick: bool = False) -> dict[str, Any]:
    repeat = 3 if quick else 15
    out: dict[str, Any] = {"verify": {}, "frontmatter": {}, "listing": {}}
    for size in (4096, 1 << 20, 16 << 20):
        if quick and size > 1 << 20:
            continue
        data = b"x" * size
        skill = parse_skill(_entry("big", {"SKILL.md": b"-", "references/DATA.md": data}))
        want = _digest(data)
        ours = _best(lambda s=skill, d=data: SkillContent.read(s, "references/DATA.md", d),
                     repeat)
        floor = _best(lambda d=data, w=want: _digest(d) == w, repeat)
        out["verify"][str(size)] = {"ours_s": ours, "floor_s": floor}
    text = FRONTMATTER + BODY
    fm = __import__("yaml").safe_load(FRONTMATTER.strip().strip("-"))
    skill = parse_skill({"uri": "skill://pdf-processing/SKILL.md", "frontmatter": fm,
                         "resources": [{"uri": "skill://pdf-processing/SKILL.md",
                                        "digest": _digest(text.encode()),
                                        "size": len(text.encode())}]})
    loops = 50 if quick else 500
    ours = _best(lambda: [check_skill_md(skill, text) for _ in range(loops)], repeat) / loops
    out["frontmatter"]["ours_s"] = ours
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a test dependency
        out["frontmatter"]["pyyaml_s"] = None
    else:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        block = FRONTMATTER.split("---\n")[1]
        peer = _best(lambda: [yaml.load(block, Loader=loader) for _ in range(loops)],
                     repeat) / loops
        out["frontmatter"]["pyyaml_s"] = peer
        out["frontmatter"]["pyyaml_loader"] = loader.__name__
    count = 100 if quick else 1000
    listing = json.dumps({"skills": [
        _entry(f"skill-{i}", {"SKILL.md": b"a", **{f"ref/{j}.md": b"b" * j for j in range(7)}})
        for i in range(count)]})
    ours = _best(lambda: [parse_skill(e) for e in json.loads(listing)["skills"]], repeat)
    floor = _best(lambda: json.loads(listing), repeat)
    out["listing"] = {"entries": count, "ours_s": ours, "floor_s": floor}
    out["python"] = sys.version.split()[0]
    return out


def print_report(out: dict[str, Any]) -> None:
    print("verify one listed file (size, SHA-256), best run:")
    for size, row in out["verify"].items():
        print(f"  {int(size):>10,} bytes  ours {row['ours_s'] * 1e3:8.3f} ms   floor "
              f"{row['floor_s'] * 1e3:8.3f} ms   floor/ours {row['floor_s'] / row['ours_s']:.2f}")
    fm = out["frontmatter"]
    line = f"SKILL.md frontmatter parse + field-by-field check: {fm['ours_s'] * 1e6:.1f} us"
    if fm.get("pyyaml_s"):
        line += (f"; PyYAML {fm['pyyaml_loader']} parse only {fm['pyyaml_s'] * 1e6:.1f} us "
                 f"(pyyaml/ours {fm['pyyaml_s'] / fm['ours_s']:.2f})")
    print(line)
    ls = out["listing"]
    print(f"skills/list entries parsed and checked: {ls['entries']} in {ls['ours_s'] * 1e3:.2f} "
          f"ms; json.loads alone {ls['floor_s'] * 1e3:.2f} ms (floor/ours "
          f"{ls['floor_s'] / ls['ours_s']:.2f})")


def main(argv: list[str] | None = None) -> int:
    return C.quick_main(__doc__, collect, print_report, argv)


if __name__ == "__main__":
    sys.exit(main())
