"""Decoding JSON as MCP's wire has it: UTF-8 text, finite numbers, bounded nesting; anything else is a `JsonError`.
And `dumps`, the strict encoder of what the toolkit writes for others to read (the journal's exports, the admin API).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["MAX_DEPTH", "NON_FINITE", "JsonError", "dumps", "loads", "unfit", "where_refused"]

MAX_DEPTH = 128
"""The deepest nesting of arrays and objects a message may have. Far beyond any real message, and
far below Python's recursion limit, so that a journal record can be exported and read back by
any JSON reader (json.loads of a message nested 900 deep fails in a deeper stack)."""


class JsonError(ValueError):
    """Bytes that are not one JSON text of the wire; the message says why, in words a client can act on."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is out of range for a double")
    return value


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
_scan: Any = _DECODER.scan_once  # type: ignore[attr-defined]  # set by __init__, untyped in typeshed


def loads(data: bytes, what: str = "body", *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode one message; `JsonError` for bytes that are not UTF-8, not JSON, non-finite or nested deeper than
    `max_depth` (a file holding messages allows a few levels more, for its envelope)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
        raise JsonError(f"the {what} is not UTF-8, as MCP messages must be ({reason})") from None
    try:
        value, end = _scan(text, 0)  # JSONDecoder.decode without its Python layers: a body with nothing around it
    except (StopIteration, ValueError, RecursionError):
        end = -1  # whitespace first, or not JSON: decode() below says which, as it always has
    if end != len(text):
        value = _decode_slowly(text, what, max_depth)
    # Counting brackets costs next to nothing; only a message with many of them is walked.
    if data.count(b"[") + data.count(b"{") > max_depth and _deeper_than(value, max_depth):
        raise JsonError(f"the JSON is nested too deeply (more than {max_depth} levels)")
    return value


def _decode_slowly(text: str, what: str, max_depth: int) -> Any:
    """`text` decoded by the full decoder, which allows whitespace around the value, or the `JsonError` why not."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise JsonError(f"the JSON is nested too deeply (more than {max_depth} levels)") from None
    except ValueError as exc:  # JSONDecodeError, a constant or number refused above, an int of too many digits
        if "\x00" in text:  # JSON never holds a raw NUL: this is UTF-16 or UTF-32 without a byte order mark
            reason = "it holds NUL bytes: UTF-16 or UTF-32?"
            raise JsonError(f"the {what} is not UTF-8, as MCP messages must be ({reason})") from None
        raise JsonError(f"the {what} is not JSON ({exc})") from None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels deep (an iterative walk: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
"""The strings `dumps` writes for the floats RFC 8259 has no number for."""


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)` that is always strict JSON: a float that is NaN or infinite is written as the
    string "NaN", "Infinity" or "-Infinity" (`NON_FINITE`), never as the bare token that strict readers refuse."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float values" not in str(exc):
            raise  # a circular reference, say: not a number's doing
    return json.dumps(_finite_copy(value), allow_nan=False, **options)


def _name_of(number: float) -> str:
    return "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"


def _finite_copy(value: Any) -> Any:
    """`value` with every non-finite float (in dicts, lists and tuples) replaced by its name: an iterative walk."""
    if isinstance(value, float):
        return value if math.isfinite(value) else _name_of(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    top: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            if isinstance(item, float) and not math.isfinite(item):
                item = _name_of(item)
            elif isinstance(item, (dict, list, tuple)):
                copied: Any = {} if isinstance(item, dict) else []
                stack.append((item, copied))
                item = copied
            if isinstance(target, dict):
                target[key] = item
            else:
                target.append(item)
    return top


def unfit(value: Any, max_depth: int = MAX_DEPTH) -> str:
    """Why a value built in Python is not what `loads` gives: the path to the first array or object nested deeper
    than `max_depth`, or to a float that is NaN or infinite, and the problem; "" when there is none.

    For values that did not come through `loads` (a dict handed to `Cassette.from_json`): an iterative walk, no
    recursion, so a value nested 100,000 deep is an answer rather than a RecursionError.
    """
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]  # (item, its depth, its path as (key, parent) links)
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            name = "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
            return f"{_linked(path)}: {name} is not JSON (RFC 8259 has no NaN or Infinity)"
        if isinstance(item, dict):
            children: Any = item.items()
        elif isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            continue
        if depth > max_depth:
            return f"{_linked(path)}: nested too deeply (more than {max_depth} levels)"
        stack.extend((child, depth + 1, (key, path)) for key, child in children)
    return ""


def _linked(path: Any) -> str:
    keys: list[list[Any]] = []
    while path is not None:
        key, path = path
        keys.append(["", key])
    return _shown(keys[::-1]) or "(top level)"


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def where_refused(text: str, max_depth: int = MAX_DEPTH) -> str:
    """The path (`exchanges/0/request/params`) to where `loads` refuses `text`: the first value nested deeper than
    `max_depth`, or holding NaN, Infinity or a number out of range; "" when none is found.

    For error messages about files only: a token scan without recursion, linear in the text.
    """
    stack: list[list[Any]] = []  # per open array or object: its bracket, then the index or key being read
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("{", "["):
            if len(stack) >= max_depth:
                return _shown(stack)
            stack.append([token, 0 if token == "[" else None])
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif token == ",":
            if stack:
                stack[-1][1] = stack[-1][1] + 1 if stack[-1][0] == "[" else None
        elif token == ":":
            continue
        elif token.startswith('"'):
            if stack and stack[-1][0] == "{" and stack[-1][1] is None:
                stack[-1][1] = _string(token)
        elif _refused_number(token):
            return _shown(stack)
    return ""


def _string(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1]


def _refused_number(token: str) -> bool:
    if token in ("NaN", "Infinity", "-Infinity"):
        return True
    try:
        return math.isinf(float(token))
    except ValueError:
        return False


def _shown(stack: list[list[Any]], limit: int = 8) -> str:
    from mcp_testkit._wire.terminal import printable

    parts = [printable(str(slot)) for _, slot in stack if slot is not None]
    if len(parts) > limit:
        parts = [*parts[:limit], f"... ({len(parts) - limit} levels more)"]
    return "/".join(parts)
