"""Decoding JSON as MCP's wire has it: UTF-8 text, finite numbers, bounded nesting; anything else is a `JsonError`."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["JsonError", "loads"]


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
        return _DECODER.decode(text)
    except RecursionError:
        raise JsonError("the JSON is nested too deeply for this server to read") from None
    except ValueError as exc:  # JSONDecodeError, a constant or number refused above, an int of too many digits
        if "\x00" in text:  # JSON never holds a raw NUL: this is UTF-16 or UTF-32 without a byte order mark
            reason = "it holds NUL bytes: UTF-16 or UTF-32?"
            raise JsonError(f"the {what} is not UTF-8, as MCP messages must be ({reason})") from None
        raise JsonError(f"the {what} is not JSON ({exc})") from None

