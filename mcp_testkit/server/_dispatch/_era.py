"""What dispatch asks of a request's era: the methods it answers, how a handler asks its client for input, and the
wire facts where the eras differ.

Each era's module gives one (`server/_eras/_handshake.py`, `_stateless.py`) and the request's `Call` carries it, so
that dispatch, below the eras, tests no era itself: it asks the era in hand.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._cursors import Cursor
    from mcp_testkit.tools import AskInput

__all__ = ["Era", "Handler"]

Handler = Callable[[Any, dict[str, Any], Any], Awaitable[Any]]
"""A method: (request id, params, the request's `_protocol.Call`) -> its JSON-RPC response."""


@dataclass(frozen=True, slots=True, eq=False)
class Era:
    """One protocol era as dispatch sees it (each `Callable` takes the request's `_protocol.Call` first)."""

    name: str
    """'handshake' or 'stateless', as `ToolContext.era` and the journal name it."""
    methods: Mapping[str, Handler]
    """The methods the era answers, by name."""
    unknown_resource: int
    """The JSON-RPC code of a `resources/read` of a URI the server does not know."""
    logs_unasked: bool
    """Whether a tool's log messages go to a request whose client set no log level for it."""
    declared_in: str
    """Where a client declares its capabilities, as the refusal of an undeclared input request names it."""
    undeclared_code: int
    """The JSON-RPC code of a handler's input request for a capability its client did not declare."""
    capabilities: Callable[[Any], dict[str, Any]]
    """The capabilities the request's client declared (in its session's `initialize`, or in the request)."""
    begin_rounds: Callable[[Any, Any, str, str, Mapping[str, Any], Mapping[str, Any]], dict[str, Any] | None]
    """Take up what a request brings from earlier input rounds, before its handler runs: (call, request id, method,
    name, arguments, params) -> the JSON-RPC error when that is malformed, else None."""
    asker: Callable[[Any, str, str, Mapping[str, Any]], AskInput]
    """How a handler of the request asks its client for input: (call, name, method, arguments) -> the asker."""
    cursor: Callable[[ServerState, Any], Cursor | None]
    """What a listing request's cursor stands for; None for one the server never handed out."""
    hand_out_empty_cursor: Callable[[ServerState, Cursor], None]
    """Note where the "" cursor an `EmptyCursor` page hands out leads, in an era where "" is a cursor at all."""
