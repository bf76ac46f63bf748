"""Listings cut into pages (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`), and the
page a listing fault reshapes; what a cursor stands for is state (`server/_state/_cursors.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_testkit.faults import request_target
from mcp_testkit.server._state._cursors import decode_cursor

if TYPE_CHECKING:
    from mcp_testkit.server._state._cursors import Cursor

__all__ = ["LISTINGS", "LIST_CHANGED", "Page", "page_number", "page_of", "request_target"]

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
