"""The journal record of a request whose head the HTTP server refused before the app saw it (a head over its
bounds, or one its parser rejects): what of its request line was read, the status sent and why, with no headers
or body. (Not `_framing/_refusals.py`: a refusal the app sends, of a request it read.)"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mcp_testkit.journal import Headers, Record
from mcp_testkit.server._transport._http import admit

if TYPE_CHECKING:
    from mcp_testkit._wire.runner import Refused
    from mcp_testkit.server._state import ServerState

__all__ = ["journal_refused"]


def journal_refused(state: ServerState, refused: Refused) -> None:
    """Journal `refused` as a finished record: method and path as read ("?" when not), its status and error."""
    path = refused.target.split("?", 1)[0]
    record = Record(
        seq=0,
        at=time.time(),
        http_method=refused.method or "?",
        path=path or "?",
        headers=Headers([], state.hidden),
        body=b"",
        status=refused.status,
        error=refused.message,
    )
    journal = state.journal
    admit(journal, record)
    journal.writer.finish(record)
