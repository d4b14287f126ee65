"""The minimal form of :func:`~._normalize.normalize_schema` (``openai``, ``anthropic``,
``gemini``; ``openai-strict`` falls back to it): the root made an object, the rest copied.

For ``anthropic``, whose Messages API refuses them in ``input_schema``, a root ``allOf`` is
merged into the root and a root ``anyOf``/``oneOf`` hoisted: its alternatives' properties
become optional properties of the root, and the alternatives are said in the description."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _base as _schema_base  # _prepare_root: looked up there at call time
from ._base import (
    _ADJACENT_GROUPS,
    _ANNOTATIONS,
    MAX_DESCRIBED_CHARS,
    _canonical,
    _Ctx,
    _is_map,
    _json_equal,
    _Path,
    _with_description,
)
from ._merge import _deref_entry, _unite

__all__ = [
    "_minimal",
]


def _minimal(schema: Mapping[str, Any], ctx: _Ctx) -> dict[str, Any]:
    """The openai / gemini form: the root made an object, the rest copied.

    Raises :class:`SchemaError` when the root's type excludes objects, or (anthropic) when
    folding the root's combinators makes the output more than ``budget`` nodes."""
    root = _schema_base._prepare_root(schema, ctx)
    out: dict[str, Any] = ctx.copy(root, ())
    if ctx.target == "anthropic":
        # the Messages API refuses these in input_schema: their parameters are moved to the
        # root (the server still validates the arguments against the source)
        if "allOf" in out:
            _merge_root_all_of(out, ctx)
        for key in ("anyOf", "oneOf"):
            if key in out:
                _hoist_alternatives(out, key, ctx)
        ctx.check_output(out)  # the copy paid for each container; folding may add some
    else:
        # a copy of the input, whose nesting _check_input bounded (the root's type list, if
        # any, became a string): it nests no deeper, so the final bound needs no walk
        ctx.fits(out)
    return out


#: Root ``anyOf``/``oneOf`` alternatives said in the description (anthropic); the rest are
#: counted ("…"): the description is for the model.
_MAX_ALTERNATIVES_DESCRIBED = 20


def _merge_root_all_of(out: dict[str, Any], ctx: _Ctx) -> None:
    """A root ``allOf`` merged into the root: properties united (a property in several places
    gets one flat ``allOf`` of its distinct schemas, the intersection), required names
    united, other keywords added when the root lacks them; what cannot be merged is removed
    with a note."""
    entries = out.pop("allOf")
    if not isinstance(entries, list):
        ctx.note(("allOf",), "removed", "top-level allOf removed (not a list)")
        return
    # a property in several places gets ONE allOf of its distinct schemas (flat: the output
    # nests no deeper than the input however many entries repeat it)
    conjuncts: dict[str, list[Any]] = {}
    known: dict[str, set[str | None]] = {}
    for i, raw in enumerate(entries):
        epath: _Path = ("allOf", str(i))
        entry = _deref_entry(raw, ctx, epath)
        if not _is_map(entry):
            ctx.note(epath, "removed", "allOf entry that is not a schema removed")
            continue
        for key, value in entry.items():
            kpath = (*epath, key)
            if key == "properties" and _is_map(value) \
                    and isinstance(out.setdefault("properties", {}), dict):
                props = out["properties"]
                for name, sub in value.items():
                    text = _canonical(sub)
                    if name not in props:
                        props[name] = ctx.copy(sub, (*kpath, str(name)))
                        known[name] = {text}
                        continue
                    have = known.setdefault(name, {_canonical(props[name])})
                    if (text is not None and text in have) or (
                            text is None and _json_equal(props[name], sub)):
                        continue
                    if name not in conjuncts:
                        conjuncts[name] = [props[name]]
                        props[name] = {"allOf": conjuncts[name]}
                    conjuncts[name].append(ctx.copy(sub, (*kpath, str(name))))
                    have.add(text)
            elif key == "required" and isinstance(value, list) \
                    and isinstance(out.get("required", []), list):
                out["required"] = _unite(out.get("required", []), value)
            elif key == "type" and (value == "object"
                                    or (isinstance(value, list) and "object" in value)):
                continue
            elif key in ("anyOf", "oneOf") and key not in out:
                out[key] = ctx.copy(value, kpath)  # hoisted below, like the root's own
            elif key in _ANNOTATIONS and key in out:
                continue  # the root's own annotation wins
            elif key not in out and key not in ("allOf", "type", "$defs", "definitions") \
                    and key not in _ADJACENT_GROUPS[0]:
                # (additionalProperties & co. in an entry speak of that entry's properties
                # only: at the root they would speak of all of them, so they are not moved)
                out[key] = ctx.copy(value, kpath)
            elif key not in out or not _json_equal(out[key], value):
                ctx.note(kpath, "removed", f"{key} in a top-level allOf entry removed (it "
                         "cannot be merged into the root; the server still validates it)")
    ctx.note(("allOf",), "merged", "top-level allOf merged into the root (the Messages API "
             "refuses it in input_schema)")


def _hoist_alternatives(out: dict[str, Any], key: str, ctx: _Ctx) -> None:
    """A root ``anyOf``/``oneOf``: every alternative's properties become optional properties
    of the root (one that differs between alternatives takes their ``anyOf``), names required
    by every alternative are required, and the alternatives are said in the description."""
    alts = out.pop(key)
    upath: _Path = (key,)
    if not isinstance(alts, list) or not alts or not isinstance(out.get("properties", {}),
                                                                  dict):
        ctx.note(upath, "removed", f"top-level {key} removed (the Messages API refuses it)")
        return
    props: dict[str, Any] = out.setdefault("properties", {})
    collected: dict[str, list[Any]] = {}
    required_sets: list[set[str]] = []
    texts: list[str] = []
    for i, raw in enumerate(alts):
        apath = (*upath, str(i))
        alt = _deref_entry(raw, ctx, apath)
        if not _is_map(alt):
            required_sets.append(set())
            texts.append("any arguments")
            continue
        aprops = alt.get("properties")
        names = [str(n) for n in aprops] if _is_map(aprops) else []
        if _is_map(aprops):
            for name, sub in aprops.items():
                collected.setdefault(str(name), []).append(sub)
        req = alt.get("required")
        wanted = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
        required_sets.append(set(wanted))
        text = ", ".join(names)
        if wanted:
            text += f" (required: {', '.join(wanted)})" if text else \
                f"required: {', '.join(wanted)}"
        text = text or "any arguments"
        texts.append(text if len(text) <= MAX_DESCRIBED_CHARS
                     else text[:MAX_DESCRIBED_CHARS - 1] + "…")
    for name, subs in collected.items():
        if name in props:
            continue  # the root's own schema for it applies to every alternative
        unique: list[Any] = []
        texts_seen: set[str] = set()
        for sub in subs:
            canon = _canonical(sub)
            if canon is None:
                if not any(_json_equal(sub, u) for u in unique):
                    unique.append(sub)
            elif canon not in texts_seen:
                texts_seen.add(canon)
                unique.append(sub)
        copies = [ctx.copy(u, upath) for u in unique]
        props[name] = copies[0] if len(copies) == 1 else {"anyOf": copies}
    common = set.intersection(*required_sets)
    if common:
        order = [n for n in dict.fromkeys(r for s in required_sets for r in sorted(s))
                 if n in common]
        have = out.get("required")
        out["required"] = _unite(have if isinstance(have, list) else [], order)
    shown = texts[:_MAX_ALTERNATIVES_DESCRIBED]
    more = " | …" if len(texts) > _MAX_ALTERNATIVES_DESCRIBED else ""
    _with_description(out, [f"give the arguments of one of these alternatives: "
                            f"{' | '.join(shown)}{more}"])
    ctx.note(upath, "moved-to-description", f"top-level {key} (refused by the Messages API): "
             "its properties moved to the root as optional, the alternatives said in the "
             "description")
