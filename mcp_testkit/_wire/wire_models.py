"""Client messages checked against the wire models `mcp-types` ships for each protocol revision.

`mcp_types.methods` (the `mcp` SDK's own types package, a dependency of the toolkit through `mcp`) maps each
`(method, revision)` a client may send to a pydantic model generated from that revision's JSON schema: requests,
notifications, and the results a client sends to a server's requests. A model is compiled once, when
`mcp_types` is imported (here on the first message judged, not at import time). What it refuses becomes a
`schema` violation: the JSON path of what is wrong, what pydantic says of it, and the nearest valid shape (the
object expected where the path points).

Revisions: `mcp_types` carries the models of 2025-11-25 and 2026-07-28. The older handshake revisions
(2024-11-05, 2025-03-26, 2025-06-18) are judged by the 2025-11-25 models, with each revision's own set of
methods (`elicitation/create` only from 2025-06-18, as `mcp_types` gates it); a revision `mcp_types` does not
know is judged as its era's newest. A method the revision does not define is judged by its JSON-RPC envelope
only (the tasks extension, a bridge's own methods, the other era's probe).
"""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Problem", "revision_for", "schema_problems", "warm"]

Problem = tuple[str, str]
"""(JSON path, one-line message) of one place a message breaks its model."""

_HANDSHAKE_LATEST = "2025-11-25"
_STATELESS_LATEST = "2026-07-28"
_MAX_PROBLEMS = 3
_MAX_SHAPE = 200


def revision_for(era: str | None, version: str | None) -> str:
    """The revision whose models judge a message of `era` that says (or negotiated) `version`."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    if era == "stateless":
        return version if version in MODERN_PROTOCOL_VERSIONS else _STATELESS_LATEST
    return version if version in HANDSHAKE_PROTOCOL_VERSIONS else _HANDSHAKE_LATEST


@functools.cache
def _maps() -> tuple[Mapping[tuple[str, str], Any], Mapping[tuple[str, str], Any], Mapping[tuple[str, str], Any]]:
    from mcp_types import methods

    return methods.CLIENT_REQUESTS, methods.CLIENT_NOTIFICATIONS, methods.CLIENT_RESULTS


def warm() -> None:
    """Import the models now (a second or so, once), so that no request's journal line waits for them later."""
    _maps()
    _envelopes()


@functools.cache
def _adapter(target: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(target)


@functools.cache
def _envelopes() -> dict[str, Any]:
    from mcp_types import jsonrpc

    return {"request": jsonrpc.JSONRPCRequest, "notification": jsonrpc.JSONRPCNotification}


def schema_problems(kind: str, method: str | None, revision: str, message: dict[str, Any]) -> list[Problem]:
    """Where `message` (a `kind`: request, notification or result, of `method`) breaks its revision's model.

    For a result, `message` is the result object itself and `method` the server request it answers.
    """
    from pydantic import ValidationError

    requests, notifications, results = _maps()
    table = {"request": requests, "notification": notifications, "result": results}[kind]
    model = table.get((method, revision)) if method is not None else None
    if model is None:
        model = _envelopes().get(kind)
        if model is None:
            return []
    try:
        _adapter(model).validate_python(message, by_name=False)
    except ValidationError as exc:
        return _problems(model, message, exc.errors(include_url=False))
    return []


def _problems(model: Any, message: Any, errors: list[Any]) -> list[Problem]:
    """Each place an error names, once (a union's arms each say why they failed: the first one speaks)."""
    found: dict[str, str] = {}
    for error in errors:
        loc = tuple(error.get("loc", ()))
        path, value, present = _path_of(message, loc, error.get("type") == "missing")
        if path in found:
            continue
        what = error.get("msg", "is not valid")
        got = f" (got {_short(value)})" if present else ""
        shape = _expected(model, loc)
        line = f"{what}{got}"
        if shape:
            line += f"; expected {shape}"
        found[path] = line
        if len(found) == _MAX_PROBLEMS:
            break
    return list(found.items())


def _path_of(message: Any, loc: tuple[Any, ...], missing: bool) -> tuple[str, Any, bool]:
    """The JSON path of a pydantic location in `message`, the value there, and whether it is there (not
    `missing`).

    A union's arms add the arm's name to a location; those parts are no key of the message and are left out.
    """
    path = "$"
    here: Any = message
    present = True
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if isinstance(here, dict) and isinstance(part, str) and part in here:
            path += _step(part)
            here = here[part]
        elif isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
            path += f"[{part}]"
            here = here[part]
        elif last and missing and isinstance(part, str):
            path += _step(part)  # a missing key: the path names it
            present = False
    return path, here, present


def _step(key: str) -> str:
    return f".{key}" if key.replace("_", "a").isalnum() else f"[{json.dumps(key)}]"


def _short(value: Any) -> str:
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


# -- the nearest valid shape ----------------------------------------------------------------------


def _expected(model: Any, loc: tuple[Any, ...]) -> str:
    """The shape expected where `loc` points: the object holding the failing key, as its model gives it."""
    holder = _model_at(model, loc[:-1]) if loc else model
    if holder is None:
        return ""
    if loc:
        field = _fields(holder).get(loc[-1])
        if field is not None:
            inner = _first_model(field)
            if inner is not None:
                holder = inner
    shape = _shape(holder)
    return shape if len(shape) <= _MAX_SHAPE else shape[: _MAX_SHAPE - 4] + " ...}"


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    here = model
    for part in loc:
        if isinstance(part, int):
            continue  # a list's item: the model stays the item's
        fields = _fields(here)
        if part in fields:
            nxt = _first_model(fields[part], prefer=None)
            if nxt is None:
                return here
            here = nxt
            continue
        arm = next((a for a in _arms(here) if getattr(a, "__name__", None) == part), None)
        if arm is not None:
            here = arm  # a union's arm, named by the location
    return here


def _fields(model: Any) -> dict[str, Any]:
    """A model's fields by the key they have on the wire (their alias), each with its annotation."""
    fields = getattr(model, "model_fields", None)
    if not isinstance(fields, dict):
        return {}
    return {(info.alias or name): info.annotation for name, info in fields.items()}


def _members(annotation: Any) -> list[Any]:
    """The types an annotation may be: a union's arms, an alias's value, Annotated's type."""
    value = getattr(annotation, "__value__", None)  # a TypeAliasType
    if value is not None:
        return _members(value)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [arm for member in typing.get_args(annotation) for arm in _members(member)]
    return [annotation]


def _arms(annotation: Any) -> list[Any]:
    """The types a value at an annotation's place, or an item of a list there, may be."""
    arms = []
    for member in _members(annotation):
        if typing.get_origin(member) in (list, tuple):
            args = typing.get_args(member)
            arms += _arms(args[0]) if args else []
        else:
            arms.append(member)
    return arms


def _first_model(annotation: Any, prefer: Any = None) -> Any:
    for arm in _arms(annotation):
        if isinstance(arm, type) and hasattr(arm, "model_fields"):
            return arm
    return prefer


def _shape(model: Any) -> str:
    fields = getattr(model, "model_fields", {})
    parts = []
    for name, info in fields.items():
        key = info.alias or name
        parts.append(f"{key}{'' if info.is_required() else '?'}: {_type_name(info.annotation)}")
    return "{" + ", ".join(parts) + "}"


_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _type_name(annotation: Any) -> str:
    names: list[str] = []
    for arm in _members(annotation):
        if arm is type(None):
            continue
        if typing.get_origin(arm) is Literal:
            name = " | ".join(json.dumps(value) for value in typing.get_args(arm))
        elif isinstance(arm, type) and hasattr(arm, "model_fields"):
            name = "object"
        else:
            name = _NAMES.get(typing.get_origin(arm) or arm, "any")
        if name not in names:
            names.append(name)
    return " | ".join(names) or "null"
