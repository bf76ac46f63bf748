"""`x-mcp-header`: the tool parameters a 2026-07-28 `tools/call` mirrors into `Mcp-Param-{name}` headers.

A tool's `inputSchema` may mark a parameter with `x-mcp-header`; a client then sends the parameter's
value in that header as well as in the body, and the server checks that the two agree. The server and
the reference bridge share here what a mark is, where its value sits in the arguments, how the value
is written (the same `=?base64?...?=` rule as `Mcp-Name`) and which marks make a tool definition
invalid; the server keeps only how it compares a header with the body.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from mcp_testkit._wire.eras import encode_header_value

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "ABSENT",
    "ANNOTATION",
    "MAX_SAFE_INTEGER",
    "PARAM_HEADER_PREFIX",
    "header_text",
    "invalid_annotation",
    "mirrored_params",
    "param_headers",
    "value_at",
]

ANNOTATION: Final = "x-mcp-header"
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
MAX_SAFE_INTEGER: Final = 2**53 - 1
"""The largest integer a header may carry: the spec keeps mirrored integers in JavaScript's safe range."""

ABSENT: Final[Any] = object()
"""What `value_at` finds where the arguments hold no value (or null): the header is omitted."""

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""RFC 9110's `token` (`1*tchar`): what an HTTP field name is made of."""
_PRIMITIVE = frozenset({"string", "integer", "boolean"})

# JSON Schema keywords whose value is a subschema, a list of subschemas, or a map of names to them:
# where a mark can hide off the chain of `properties` keys. Keywords holding instance data (`const`,
# `enum`, `default`, `examples`) are not entered, so a value there is never taken for a mark, and a
# `$ref` is not followed: what it points to sits under `$defs`, which is off the chain.
_ONE = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_LIST = frozenset({"allOf", "anyOf", "items", "oneOf", "prefixItems"})
_MAP = frozenset({"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties"})

def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, str, dict[str, Any]]]:
    """Every subschema of `schema`, in document order, with the chain of `properties` keys that leads to it
    from the root (None once any other keyword is crossed) and the first such keyword ('' on the chain).

    A stack, not recursion: a schema a server sends may nest deeper than Python recurses.
    """
    stack: list[tuple[tuple[str, ...] | None, str, Any]] = [((), "", schema)]
    while stack:
        path, via, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, via, node
        children: list[tuple[tuple[str, ...] | None, str, Any]] = []
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                children += [(None if path is None else (*path, name), via, sub) for name, sub in value.items()]
            elif key in _ONE and isinstance(value, dict):
                children.append((None, via or key, value))
            elif key in _LIST and isinstance(value, list):
                children += [(None, via or key, sub) for sub in value]
            elif key in _MAP and isinstance(value, dict):
                children += [(None, via or key, sub) for sub in value.values()]
        stack.extend(reversed(children))


def mirrored_params(schema: Any) -> list[tuple[tuple[str, ...], str]]:
    """The parameters a tool's `inputSchema` mirrors into `Mcp-Param-{name}` headers, with their paths: marks on
    properties reachable from the root through `properties` keys only, in document order."""
    return [
        (path, node[ANNOTATION])
        for path, _, node in _positions(schema)
        if path and isinstance(node.get(ANNOTATION), str) and node[ANNOTATION]
    ]


def _shown(value: Any) -> str:
    """A mark's value for a message: quoted when it is a short string, else only its type (a repr may be huge)."""
    return repr(value) if isinstance(value, str) and len(value) <= 80 else f"a {type(value).__name__}"


def _type_problem(node: dict[str, Any]) -> str | None:
    """Why a marked property's `type` cannot be mirrored, or None: string, integer or boolean (null allowed too)."""
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if not isinstance(types, list) or not types or not all(isinstance(t, str) for t in types):
        return "declares no type; only string, integer and boolean parameters may be mirrored"
    other = [t for t in types if t not in _PRIMITIVE and t != "null"]
    if other or set(types) == {"null"}:
        shown = ", ".join(map(repr, other or types))
        return f"is of type {shown}; only string, integer and boolean parameters may be mirrored"
    return None


def invalid_annotation(schema: Any) -> str | None:
    """Why a tool's `inputSchema` breaks the spec's rules for `x-mcp-header`, or None when every mark is valid.

    A mark must be a non-empty RFC 9110 token, unique case-insensitively, on a string, integer or
    boolean property that is reachable from the root through `properties` keys alone. A client of
    2026-07-28 over HTTP leaves a tool whose schema breaks them out of its tool list.
    """
    seen: dict[str, str] = {}
    for path, via, node in _positions(schema):
        if ANNOTATION not in node:
            continue
        name = node[ANNOTATION]
        if path is None:
            return f"{ANNOTATION} {_shown(name)} sits under {via!r}, not on a property reached through properties alone"
        if not path:
            return f"{ANNOTATION} {_shown(name)} sits on the root schema, not on a property"
        where = ".".join(path)
        if not isinstance(name, str):
            return f"property {where!r}: {ANNOTATION} must be a string, not {_shown(name)}"
        if not name:
            return f"property {where!r}: {ANNOTATION} is empty"
        if not _TOKEN.fullmatch(name):
            return f"property {where!r}: {ANNOTATION} {_shown(name)} is not an HTTP header-name token (RFC 9110)"
        problem = _type_problem(node)
        if problem is not None:
            return f"property {where!r} marked {ANNOTATION} {name!r} {problem}"
        other = seen.setdefault(name.lower(), where)
        if other != where:
            return (
                f"property {where!r}: {ANNOTATION} {name!r} repeats that of property {other!r} "
                "(header names are compared case-insensitively)"
            )
    return None


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The value at `path` in a call's arguments, or `ABSENT` where there is none or it is null."""
    for key in path:
        if not isinstance(arguments, dict) or key not in arguments:
            return ABSENT
        arguments = arguments[key]
    return ABSENT if arguments is None else arguments


def header_text(value: Any) -> str | None:
    """A mirrored value as its header carries it before encoding: a string as is, an integer in decimal, a
    boolean as true or false; None for anything else, or an integer outside JavaScript's safe range."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 42.0 in a body is the integer 42, as JSON reads it
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    return value if isinstance(value, str) else None


def param_headers(schema: Any, arguments: Any) -> dict[str, str]:
    """The `Mcp-Param-{name}` headers of a `tools/call` with `arguments` to a tool with this `inputSchema`.

    A parameter without a value (absent or null) sends no header; a value that is not plain visible
    ASCII, or is padded with whitespace, or looks like the sentinel, travels as `=?base64?...?=`.
    ValueError, naming the parameter, for a value no header can carry (an object, a list, a fraction,
    an integer beyond 2**53 - 1).
    """
    headers: dict[str, str] = {}
    for path, name in mirrored_params(schema):
        value = value_at(arguments, path)
        if value is ABSENT:
            continue
        text = header_text(value)
        header = PARAM_HEADER_PREFIX + name
        if text is None:
            shown = "an integer beyond that range" if isinstance(value, int) else f"a {type(value).__name__}"
            raise ValueError(
                f"arguments.{'.'.join(path)} is mirrored into the {header} header, so it must be a string, "
                f"a boolean or an integer within ±{MAX_SAFE_INTEGER}, not {shown}"
            )
        headers[header] = encode_header_value(text)
    return headers
