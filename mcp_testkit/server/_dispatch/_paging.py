"""Listings cut into pages (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`), opaque
cursors, and the listing faults applied to a page."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp_testkit.faults._rules import request_target

__all__ = ["LISTINGS", "LIST_CHANGED", "Cursor", "Page", "decode_cursor", "encode_cursor", "page_of", "request_target"]

_PREFIX = "mcptk"

LISTINGS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
"""The methods that answer a listing in pages, and the key of the result that holds a page's entries."""
LIST_CHANGED = {
    "tools/list": "notifications/tools/list_changed",
    "resources/list": "notifications/resources/list_changed",
    "resources/templates/list": "notifications/resources/list_changed",
    "prompts/list": "notifications/prompts/list_changed",
}
"""The notification that tells a client a listing changed."""


@dataclass(frozen=True)
class Cursor:
    """What a cursor of ours stands for: the page number, where it starts, and whether it is stuck."""

    page: int
    offset: int
    stuck: bool = False


class Page:
    """A listing's page being answered, for a listing fault to reshape: `tools` holds its entries (tools, resources,
    templates or prompts, as `method` lists), `entries` the whole listing."""

    __slots__ = ("entries", "following", "here", "method", "next_cursor", "next_offset", "tools", "total")

    def __init__(
        self,
        tools: list[dict[str, Any]],
        here: Cursor,
        following: Cursor | None,
        next_offset: int | None,
        total: int,
        method: str = "tools/list",
        entries: Sequence[dict[str, Any]] = (),
    ) -> None:
        self.tools = tools
        self.method = method
        self.entries = entries
        self.here = here
        self.following = following
        self.next_offset = next_offset
        self.total = total
        self.next_cursor: str | None = None
        """A literal `nextCursor` that replaces the encoded `following`."""


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


def page_of(
    definitions: Sequence[dict[str, Any]], offset: int, page_size: int | None
) -> tuple[list[dict[str, Any]], int | None]:
    """The tools of the page starting at `offset`, and the offset of the next page (None on the last)."""
    if page_size is None:
        return list(definitions[offset:]), None
    end = offset + page_size
    return list(definitions[offset:end]), (end if end < len(definitions) else None)


def page_number(cursor_value: Any) -> int | None:
    """The page a listing request asks for: 1 without a cursor, None for a cursor not of ours."""
    if cursor_value is None:
        return 1
    cursor = decode_cursor(cursor_value)
    return None if cursor is None else cursor.page
