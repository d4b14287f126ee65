#!/usr/bin/env python3
"""Draw the state diagrams of docs/diagrams.md from the transition tables themselves.

    python docs/make_diagrams.py            # rewrite docs/diagrams.md
    python docs/make_diagrams.py --check    # exit 1 when the file and the tables differ

Each diagram is Mermaid (``stateDiagram-v2``; the restart schedule a table), made from the
table the code runs on, never drawn by hand: the session lifecycle (``_state.py``), era
choice (its probing part), task statuses (``_tasks.py``), the Host's server states
(``host/_state.py``) and restart schedule (``DEFAULT_RESTART``), and the authorization flow
(``_auth_states.py``).  ``tests/test_diagrams.py`` fails when the docs fall behind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_proto import _state, _tasks  # noqa: E402
from mcp_proto._auth_states import TRANSITIONS as AUTH_TRANSITIONS  # noqa: E402
from mcp_proto.host import _state as host_state  # noqa: E402
from mcp_proto.host._restart import DEFAULT_RESTART  # noqa: E402

TARGET = REPO / "docs" / "diagrams.md"


def _id(name: str) -> str:
    """A Mermaid state id for a state name (letters, digits and ``_`` only)."""
    return "".join(c if c.isalnum() else "_" for c in name)


def state_diagram(edges: Iterable[tuple[str, str, str]], *, initial: str,
                  final: Iterable[str] = ()) -> str:
    """``stateDiagram-v2`` text for ``(from, label, to)`` edges, in a stable order: edges
    sharing their ends are drawn once, their labels joined."""
    merged: dict[tuple[str, str], list[str]] = {}
    for source, label, target in edges:
        labels = merged.setdefault((source, target), [])
        if label not in labels:
            labels.append(label)
    lines = ["stateDiagram-v2", f"    [*] --> {_id(initial)}"]
    for (source, target), labels in sorted(merged.items()):
        lines.append(f"    {_id(source)} --> {_id(target)}: {', '.join(sorted(labels))}")
    lines += [f"    {_id(state)} --> [*]" for state in sorted(final)]
    return "\n".join(lines)


def lifecycle() -> str:
    table: Mapping[tuple[_state.State, _state.Input], _state.State] = _state._TRANSITIONS
    return state_diagram(((s.value, i.value, t.value) for (s, i), t in table.items()
                          if not (s is t is _state.State.CLOSED)),
                         initial=_state.State.IDLE.value, final=[_state.State.CLOSED.value])


def era_choice() -> str:
    """The part of the lifecycle that chooses the era: the probe and what ends it."""
    probing = _state.State.PROBING
    table = _state._TRANSITIONS
    edges = [(s.value, i.value, t.value) for (s, i), t in table.items()
             if probing in (s, t) and i not in (_state.Input.CLOSE,
                                               _state.Input.TRANSPORT_ENDED)]
    edges += [(_state.State.INITIALIZING.value, i.value, t.value)
              for (s, i), t in table.items()
              if s is _state.State.INITIALIZING and i is _state.Input.INIT_OK]
    return state_diagram(edges, initial=_state.State.IDLE.value)


def tasks() -> str:
    edges = [(old, "poll", new) for old, nexts in _tasks._NEXT.items() for new in nexts
             if old not in _tasks.TERMINAL and old != new]
    return state_diagram(edges, initial="working", final=_tasks.TERMINAL)


def host_servers() -> str:
    return state_diagram(((s, i, t) for (s, i), t in host_state.TRANSITIONS.items()
                          if s != t),
                         initial="stopped")


def restart_schedule() -> str:
    policy = DEFAULT_RESTART
    rows = ["| consecutive failure | next start after |", "|---|---|"]
    rows += [f"| {n} | {policy.delay(n):g} s |" for n in range(1, policy.max_attempts)]
    rows.append(f"| {policy.max_attempts} | given up (`failed`) |")
    rows.append("")
    rows.append(f"The count starts over after {policy.stable_after:g} s of uptime.")
    return "\n".join(rows)


def authorization() -> str:
    return state_diagram(((s, o, t) for (s, o), t in AUTH_TRANSITIONS.items()),
                         initial="idle", final=["done"])


SECTIONS = (
    ("Session lifecycle", "`mcp_proto/_state.py`", lifecycle, True),
    ("Era choice", "`mcp_proto/_state.py` (the probe)", era_choice, True),
    ("Task statuses", "`mcp_proto/_tasks.py`", tasks, True),
    ("Host: server states", "`mcp_proto/host/_state.py`", host_servers, True),
    ("Host: restart schedule", "`mcp_proto/host/_restart.py` (`DEFAULT_RESTART`)",
     restart_schedule, False),
    ("Authorization flow", "`mcp_proto/_auth_states.py`", authorization, True),
)


def render() -> str:
    out = ["# State diagrams", "",
           "Generated from the transition tables by `python docs/make_diagrams.py`; "
           "`tests/test_diagrams.py` fails when this file and the tables differ. Do not edit "
           "by hand.", ""]
    for title, source, draw, mermaid in SECTIONS:
        out += [f"## {title}", "", f"From {source}.", ""]
        body = draw()
        out += ["```mermaid", body, "```", ""] if mermaid else [body, ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text("utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(REPO)} differs from the tables: run "
                  "python docs/make_diagrams.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
