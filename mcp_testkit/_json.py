"""Decoding JSON as MCP's wire has it: UTF-8 text, finite numbers, bounded nesting; anything else is a `JsonError`."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_DEPTH", "JsonError", "loads"]

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


def loads(data: bytes, what: str = "body") -> Any:
    """Decode one message; `JsonError` for bytes that are not UTF-8, not JSON, non-finite or nested too deeply."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
        raise JsonError(f"the {what} is not UTF-8, as MCP messages must be ({reason})") from None
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise JsonError(f"the JSON is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # JSONDecodeError, a constant or number refused above, an int of too many digits
        if "\x00" in text:  # JSON never holds a raw NUL: this is UTF-16 or UTF-32 without a byte order mark
            reason = "it holds NUL bytes: UTF-16 or UTF-32?"
            raise JsonError(f"the {what} is not UTF-8, as MCP messages must be ({reason})") from None
        raise JsonError(f"the {what} is not JSON ({exc})") from None
    # Counting brackets costs next to nothing; only a message with many of them is walked.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise JsonError(f"the JSON is nested too deeply (more than {MAX_DEPTH} levels)")
    return value


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

