"""The record of one change the host layer made to what a server gave, for a log or a CLI:
a schema normalized for a provider, a result cut to a budget (shared by the host's subrooms,
which import only the shared records)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Note"]


@dataclass(frozen=True, slots=True)
class Note:
    """One change the host layer made.

    ``path`` is a JSON pointer into the *source* (the schema :func:`normalize_schema` was
    given, or the result a budget cut; ``""`` is the root), ``kind`` names the change (the
    schema's ``NOTE_KINDS``, the budget's ``BUDGET_NOTE_KINDS``), ``detail`` is a sentence
    for a log or a CLI.
    """

    path: str
    kind: str
    detail: str
