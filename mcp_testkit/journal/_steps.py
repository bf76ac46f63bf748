"""What a sequence diagram of the journal says for each record, the same words in Mermaid and in HTML.

An arrow says what matters to find a bug by eye: a listing names the page it asks for (`first page`, or its
cursor, kept short) and its answer the number of items and whether a `next` page follows; a fault, a lost
answer, a cancel are named. The era is not on any arrow: a note names it (and the version) at the top and
wherever the era the requests speak changes, as a note marks where the session changes, so that both eras
are named alike and arrows stay short.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS, STATELESS_VERSIONS

if TYPE_CHECKING:
    from mcp_testkit.journal._record import Record

__all__ = ["Step", "cut", "steps"]

_LISTED = {
    "tools/list": ("tools", "tool"),
    "prompts/list": ("prompts", "prompt"),
    "resources/list": ("resources", "resource"),
    "resources/templates/list": ("resourceTemplates", "template"),
}
"""Each listing method: the key of its result's items, and what one item is called."""
_CURSOR_WHOLE = 16
"""Characters of a cursor shown whole; a longer one keeps its head and tail, where encoded offsets differ."""


@dataclass(frozen=True)
class Step:
    """What the diagram draws for one record: its request arrow, its answer arrow and the notes around them."""

    seq: int
    request: str
    answer: str | None
    """None: no answer reached the client (dropped, or the connection was cut)."""
    fault: str | None
    session: str | None
    """A new session id first seen on this record (drawn as a note before it), else None."""
    era: str | None
    """The era this record's request speaks, when it differs from the last one's (a note before it), else None."""
    notification: bool
    failed: bool


def cut(value: str, limit: int) -> str:
    """`value`, or its first `limit - 1` characters and an ellipsis."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _cursor(value: Any) -> str:
    """A cursor as an arrow names it: whole when short, else head…tail; `""` for the empty one."""
    if not isinstance(value, str):
        return json.dumps(value, default=repr)
    if not value:
        return '""'
    return value if len(value) <= _CURSOR_WHOLE else f"{value[:8]}…{value[-4:]}"


def _page_asked(record: Record) -> str:
    """For a listing: `first page`, or the cursor it sends."""
    params = record.params or {}
    return f"cursor={_cursor(params['cursor'])}" if params.get("cursor") is not None else "first page"


def _label_of(record: Record) -> str:
    what = record.rpc_method or ("batch" if isinstance(record.message, list) else record.http_method)
    if record.http_method == "GET":
        after = record.headers.get("last-event-id")
        what = "GET stream" + (f" after event {after}" if after is not None else "")
    elif record.http_method == "DELETE":
        what = "DELETE session"
    if record.tool:
        what += f" {record.tool}"
    if record.rpc_method == "notifications/cancelled":
        request_id = (record.params or {}).get("requestId")
        what = f"cancel request {request_id!r}" if request_id is not None else "cancel"
    elif record.rpc_method in _LISTED:
        what += f" {_page_asked(record)}"
    return f"#{record.seq} {what}"


def _listed(method: str, result: dict[str, Any]) -> str:
    """`, 2 tools, next`: how many items the page holds, and whether a next page follows."""
    key, noun = _LISTED[method]
    items = result.get(key)
    line = f", {len(items)} {noun}{'' if len(items) == 1 else 's'}" if isinstance(items, list) else ""
    following = result.get("nextCursor")
    if following == "":
        line += ', next=""'
    elif following is not None:
        line += ", next"
    return line


def _answer_of(record: Record) -> str | None:
    if record.status is None:
        return None
    answer = record.response
    line = str(record.status)
    result = answer.get("result") if isinstance(answer, dict) else None
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        line += f" error {answer['error'].get('code')}"
    elif isinstance(result, dict) and result.get("isError"):
        line += " isError"
    elif isinstance(result, dict) and (record.rpc_method in _LISTED):
        line += _listed(record.rpc_method, result)
    if record.error:
        line += f" ({record.error})"
    return line


def _spoken(record: Record) -> tuple[str, str | None] | None:
    """The era (and version) the request itself speaks, not the era that served it: a stateless client's
    `server/discover` probe answered by a handshake-only server still speaks 2026-07-28, and a handshake client's
    `initialize` refused by a stateless-only server speaks its own version. None: it names no version and has no
    session (a body that is not JSON, say); it stays under the note before it."""
    version = record.protocol_version
    if version is None and record.rpc_method == "initialize":
        asked = (record.params or {}).get("protocolVersion")
        version = asked if isinstance(asked, str) else None
    if version in STATELESS_VERSIONS:
        return STATELESS, version
    if version is not None or record.session_id or record.rpc_method == "initialize":
        return HANDSHAKE, version
    return None


def _era_note(era: str, version: str | None) -> str:
    return f"{era} era" + (f" ({version})" if version else "")


def steps(records: Iterable[Record]) -> Iterator[Step]:
    """A step per record, in order."""
    session: str | None = None
    era: str | None = None
    for record in records:
        fresh = record.session_id if record.session_id and record.session_id != session else None
        if record.session_id:
            session = record.session_id
        spoken = _spoken(record)
        new_era = None
        if spoken is not None and spoken[0] != era:
            era = spoken[0]
            new_era = _era_note(*spoken)
        answer = _answer_of(record)
        yield Step(
            seq=record.seq,
            request=_label_of(record),
            answer=answer,
            fault=None if record.fault is None else repr(record.fault),
            session=fresh,
            era=new_era,
            notification=isinstance(record.message, dict) and "id" not in record.message and "method" in record.message,
            failed=answer is None or (record.status or 0) >= 400 or record.error is not None,
        )
