"""The catalogue cut into pages of `tools/list`, with opaque cursors that decode to an offset."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

__all__ = ["decode_cursor", "encode_cursor", "page_of"]

_PREFIX = "mcptk:"


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page that starts at `offset`."""
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: Any) -> int | None:
    """The offset a cursor of ours stands for, or None when it is not one."""
    if not isinstance(cursor, str) or not cursor:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not text.startswith(_PREFIX) or not text[len(_PREFIX) :].isdigit():
        return None
    return int(text[len(_PREFIX) :])


def page_of(
    definitions: Sequence[dict[str, Any]], offset: int, page_size: int | None
) -> tuple[list[dict[str, Any]], int | None]:
    """The tools of the page starting at `offset`, and the offset of the next page (None on the last)."""
    if page_size is None:
        return list(definitions[offset:]), None
    end = offset + page_size
    return list(definitions[offset:end]), (end if end < len(definitions) else None)


def page_number(offset: int, page_size: int | None) -> int:
    """The 1-based number of the page that starts at `offset`."""
    return 1 if not page_size else offset // page_size + 1
