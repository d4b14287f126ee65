"""VS Code ``inputs``: what a ``.vscode/mcp.json`` asks the user for, pure.

A VS Code file declares ``"inputs": [{"type": "promptString", "id": "api-key",
"description": "API key", "password": true}]`` and its servers say ``${input:api-key}``.
VS Code asks the user once and keeps the answer in its secret storage; mcp-proto takes the
value from the caller (``inputs={id: value}``), else from the environment
(``MCP_PROTO_INPUT_<ID>``, :func:`input_env_name`), else from an ``ask`` callback of the
binding's loader (a terminal prompt in the CLI), else from the input's ``default``.  This
module reads the declarations (:func:`parse_inputs`) and does the pure part of that choice
(:func:`resolve_inputs`); which ids a file uses is ``_parse.needed_inputs``.

No message names a value: only input ids, indexes and key names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._spec import InputSpec
from ._expand import INPUT_ENV_PREFIX, input_env_name

__all__ = ["INPUT_ENV_PREFIX", "INPUT_TYPES", "MAX_INPUTS", "InputSpec", "input_env_name",
           "parse_inputs", "resolve_inputs"]

#: The input types of VS Code's ``inputs`` (tasks and launch configs share them).
INPUT_TYPES: frozenset[str] = frozenset({"promptString", "pickString", "command"})

#: Inputs one file may declare: a real one has a handful (one per secret); the bound keeps a
#: generated file from making a prompt loop without end.
MAX_INPUTS = 256


def _text(item: Mapping[str, Any], key: str, where: str, warnings: list[str]) -> str | None:
    value = item.get(key)
    if value is None or isinstance(value, str):
        return value
    warnings.append(f"{where}.{key}: must be a string: ignored")
    return None


def parse_inputs(value: Any, warnings: list[str]) -> tuple[InputSpec, ...]:
    """The inputs of a VS Code root ``inputs`` value (a list of objects), in file order.
    An entry without a string ``id``, of an unknown ``type``, or repeating an id is left
    out with a warning naming its index (``inputs[2]``); a field of the wrong type is
    ignored with a warning.  Never raises: the ``inputs`` key is also kept as written in
    ``HostConfig.extra``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        warnings.append("inputs: must be a list of objects: ignored")
        return ()
    specs: dict[str, InputSpec] = {}
    for index, item in enumerate(value[:MAX_INPUTS]):
        where = f"inputs[{index}]"
        if not isinstance(item, Mapping):
            warnings.append(f"{where}: must be an object: ignored")
            continue
        ident = item.get("id")
        if not isinstance(ident, str) or not ident.strip():
            warnings.append(f"{where}: has no id: ignored")
            continue
        kind = item.get("type", "promptString")
        if kind not in INPUT_TYPES:
            warnings.append(f"{where}: unknown type (promptString, pickString or command): "
                            "ignored")
            continue
        if ident in specs:
            warnings.append(f"{where}: repeats the id {ident!r}: ignored")
            continue
        password = item.get("password", False)
        if not isinstance(password, bool):
            warnings.append(f"{where}.password: must be true or false: ignored")
            password = False
        raw_options = item.get("options", [])
        options = tuple(o if isinstance(o, str) else str(o.get("value", ""))
                        for o in raw_options if isinstance(o, (str, Mapping))) \
            if isinstance(raw_options, list) else ()
        if kind == "command":
            warnings.append(f"{where}: input {ident!r} runs a VS Code command, which "
                            f"mcp-proto cannot: give it in {input_env_name(ident)} or inputs=")
        specs[ident] = InputSpec(
            id=ident, type=kind, description=_text(item, "description", where, warnings),
            password=password, default=_text(item, "default", where, warnings),
            options=options, env_var=input_env_name(ident))
    if len(value) > MAX_INPUTS:
        warnings.append(f"inputs: more than {MAX_INPUTS} entries: the rest are ignored")
    return tuple(specs.values())


def resolve_inputs(needed: tuple[InputSpec, ...], *, explicit: Mapping[str, str] | None,
                   env: Mapping[str, str]) -> tuple[dict[str, str], tuple[InputSpec, ...]]:
    """The values of ``needed`` from ``explicit`` (first) and ``env``
    (``MCP_PROTO_INPUT_<ID>``), and the inputs still without a value, in order: the binding
    asks for those, and a declared ``default`` fills the rest when the config is parsed.
    The explicit mapping is returned whole (an id the file does not use is harmless)."""
    values = dict(explicit or {})
    missing: list[InputSpec] = []
    for spec in needed:
        if spec.id in values:
            continue
        from_env = env.get(spec.env_var or input_env_name(spec.id))
        if from_env is not None:
            values[spec.id] = from_env
        else:
            missing.append(spec)
    return values, tuple(missing)
