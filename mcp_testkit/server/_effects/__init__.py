"""What each fault does: one handler per fault class, with a method for each phase where it acts.

A fault in `faults/` is a passive value; its effect lives here and nowhere else. The transports
(HTTP in both eras, stdio) and the dispatcher ask the request's handler at each phase, and a
handler acts only in the phases it defines (the base class does nothing in every phase):

- before dispatch: `before` (HTTP), `before_line` (stdio), `opened` (after `initialize` made a session);
- dispatch and listing: `answer`, `before_page`, `shape_page`;
- after dispatch: `after`;
- framing and stream: `sse`, `breaks`, `send` (HTTP), `stream_line` and `send_line` (stdio);
- bytes: `wrap_send`, the answer's ASGI `send` as the fault reshapes it (any writer of answers can apply it);
- connection, for a notification: `after_notification` (HTTP), `notification_line` (stdio).

Adding a fault is one value in `faults/` plus one handler in the module of its kind here
(`_answers`, `_auth`, `_bytes`, `_connection`, `_sessions`, `_listing`, `_eras`, `_waits`), registered with
`@handles`.
No request without a fault pays for any of this: `effect_of(None)` is None and the transports skip it.
"""

from __future__ import annotations

from mcp_testkit.server._effects import _answers, _auth, _bytes, _connection, _eras, _listing, _sessions, _waits
from mcp_testkit.server._effects._base import (
    HANDLERS,
    Effect,
    HttpTurn,
    LineTurn,
    Wire,
    effect_of,
    handles,
    supports_stdio,
)

__all__ = ["HANDLERS", "Effect", "HttpTurn", "LineTurn", "Wire", "effect_of", "handles", "supports_stdio"]

REGISTERED = (_answers, _auth, _bytes, _connection, _eras, _listing, _sessions, _waits)
"""The handler modules, imported for what they register."""
