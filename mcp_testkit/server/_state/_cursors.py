"""A listing's opaque cursor: the page it stands for, where that page starts, and the string a client is handed.

State, not dispatch: the server keeps one (`ServerState.empty_cursor`, where the "" cursor an `EmptyCursor` page
handed out leads); cutting listings into pages is dispatch's (`server/_dispatch/_paging.py`).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

__all__ = ["Cursor", "decode_cursor", "encode_cursor"]

_PREFIX = "mcptk"


@dataclass(frozen=True)
class Cursor:
    """What a cursor of ours stands for: the page number, where it starts, and whether it is stuck."""

    page: int
    offset: int
    stuck: bool = False


def encode_cursor(cursor: Cursor) -> str:
    """An opaque cursor string."""
    text = f"{_PREFIX}:{cursor.page}:{cursor.offset}{':s' if cursor.stuck else ''}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(value: Any) -> Cursor | None:
    """The cursor a string of ours stands for, or None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        text = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    parts = text.split(":")
    if len(parts) not in (3, 4) or parts[0] != _PREFIX or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    if len(parts) == 4 and parts[3] != "s":
        return None
    return Cursor(int(parts[1]), int(parts[2]), len(parts) == 4)
