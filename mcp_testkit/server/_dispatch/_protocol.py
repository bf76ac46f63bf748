"""JSON-RPC dispatch: the methods of the tools both eras answer, and `dispatch`, which answers a request with a
method of its era.

Nothing here knows about HTTP: the transport hands in a decoded message and a `Call`, and gets
back the JSON-RPC response to frame (or `CANCELLED` when the client cancelled the request). Nothing here
tests the era either: the `Call` carries it (`_era.py`), with the era's methods and what differs between eras.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit.server._dispatch._input import InputNeeded, input_required
from mcp_testkit.server._dispatch._messages import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    error_response,
    handler_raised,
    result_response,
)
from mcp_testkit.server._dispatch._paging import Page, page_of
from mcp_testkit.server._state._cursors import Cursor, encode_cursor
from mcp_testkit.tools import (
    InputUnavailable,
    JsonRpcError,
    ToolContext,
    ToolError,
    result_of,
    start_answer,
    text_result,
)

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._dispatch._era import Era
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = [
    "CANCELLED",
    "DEFAULT_VERSION",
    "LOG_LEVELS",
    "Call",
    "Handler",
    "call_tool",
    "dispatch",
    "handle_notification",
    "list_tools",
]

DEFAULT_VERSION = "2025-03-26"
"""The version assumed when a request carries no MCP-Protocol-Version header (the spec's rule)."""


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class _Cancelled:
    def __repr__(self) -> str:
        return "CANCELLED"


CANCELLED: Any = _Cancelled()
"""Returned instead of a response when the client cancelled the request: nothing is sent."""

Notify = Callable[[dict[str, Any]], Awaitable[None]]
Handler = Callable[[Any, dict[str, Any], "Call"], Awaitable[Any]]


async def _discard(message: dict[str, Any]) -> None:
    return None


@dataclass(eq=False)
class Call:
    """What dispatch needs to know about the request besides its message."""

    state: ServerState
    record: Record
    session: Session | None
    protocol_version: str
    era: Era
    """The request's era: its methods, and what dispatch does differently in it."""
    notify: Notify = field(default=_discard)
    """Sends a server notification related to this request (on its SSE stream, if it has one)."""
    effect: Any = None
    """The effect of the fault a rule applies to this request, if any: a `server._effects.Effect` (not named
    here: that module names `Call` in turn)."""
    log_level: str | None = None
    """A stateless request's `io.modelcontextprotocol/logLevel`: without one, a tool's log messages are not sent."""
    to_client: Notify | None = None
    """Sends a server-to-client request on this request's own stream (handshake era: an input request)."""
    rounds: Any = None
    """A 2026-07-28 request's answers to earlier input requests (`_input.Rounds`), once it has or needs any."""


async def dispatch(message: dict[str, Any], call: Call) -> Any:
    """Answer one JSON-RPC request with a method of its era."""
    method = message["method"]
    handler = call.era.methods.get(method)
    request_id = message["id"]
    if handler is None:
        return error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
    params = message.get("params")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        return error_response(request_id, INVALID_PARAMS, f"params of {method} must be an object")
    effect = call.effect
    if effect is not None:
        replaced = effect.answer(request_id, method, call)
        if replaced is not None:
            return replaced
    return await handler(request_id, params, call)


async def list_tools(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    state = call.state
    effect = call.effect
    sent = params.get("cursor")
    here = Cursor(1, 0)
    if sent is not None:
        decoded = call.era.cursor(state, sent)
        if decoded is None or decoded.offset > len(state.definitions()):
            return error_response(request_id, INVALID_PARAMS, f"Invalid cursor: {sent!r}")
        here = decoded
    if effect is not None:
        replaced = await effect.before_page(call, request_id, sent)
        if replaced is not None:
            return replaced  # type: ignore[no-any-return]
    definitions = state.definitions()
    tools, next_offset = page_of(definitions, min(here.offset, len(definitions)), state.page_size)
    following = None if next_offset is None else Cursor(here.page + 1, next_offset)
    if here.stuck:
        following = here
    result: dict[str, Any] = {"tools": tools}
    if effect is not None:
        page = Page(tools, here, following, next_offset, len(definitions))
        await effect.shape_page(call, page)
        following = page.following
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
            return result_response(request_id, result)
    if following is not None:
        result["nextCursor"] = encode_cursor(following)
    return result_response(request_id, result)


async def call_tool(request_id: Any, params: dict[str, Any], call: Call) -> Any:
    state = call.state
    name = params.get("name")
    arguments = params.get("arguments")
    if not isinstance(name, str):
        return error_response(request_id, INVALID_PARAMS, "tools/call needs params.name (a string)")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        return error_response(request_id, INVALID_PARAMS, f"tools/call {name}: arguments must be an object")
    tool = state.tools.get(name)
    if tool is None:
        return error_response(request_id, INVALID_PARAMS, f"Unknown tool: {name}")
    problem = tool.validation_error(arguments)
    if problem is not None:
        call.record.executed = False
        # 2025-11-25 made input validation errors tool errors, so a model can read and correct them.
        if call.protocol_version >= "2025-11-25":
            return result_response(request_id, text_result(problem, is_error=True))
        return error_response(request_id, INVALID_PARAMS, problem)
    session = call.session
    era = call.era
    refused = era.begin_rounds(call, request_id, "tools/call", name, arguments, params)
    if refused is not None:
        call.record.executed = False
        return refused

    def context() -> ToolContext:
        """Made only for a handler that takes one."""
        meta = params.get("_meta")
        return ToolContext(
            tool=name,
            request_id=request_id,
            progress_token=meta.get("progressToken") if isinstance(meta, dict) else None,
            _notify=call.notify,
            log_level=session.log_level if session is not None else call.log_level,
            logs=era.logs_unasked or call.log_level is not None,
            era=era.name,
            client_capabilities=era.capabilities(call),
            session_id=session.id if session is not None else None,
            session_state=session.tool_state if session is not None else None,
            _ask=era.asker(call, name, "tools/call", arguments),
        )

    state.executions[name] += 1
    call.record.executed = True
    try:
        answer = start_answer(tool, arguments, context)
        if type(answer) not in _PLAIN_RESULTS and inspect.isawaitable(answer):
            # Only an answer that awaits can be cancelled; a cancel scope per call would cost every call.
            with anyio.CancelScope() as scope:
                if session is not None:
                    session.inflight[request_id] = scope
                try:
                    answer = await answer
                finally:
                    if session is not None:
                        session.inflight.pop(request_id, None)
            if scope.cancelled_caught:
                return CANCELLED
        result = result_of(answer)
    except InputUnavailable as exc:
        # The handler stopped at an input request the client could not answer: it did not run to its end.
        state.executions[name] -= 1
        call.record.executed = False
        return error_response(request_id, exc.code, exc.message, exc.data)
    except JsonRpcError as exc:
        return error_response(request_id, exc.code, exc.message, exc.data)
    except InputNeeded as needed:
        # The round ends asking for input: the handler re-runs on the retry, and only the round that completes counts.
        state.executions[name] -= 1
        call.record.executed = False
        return input_required(call, request_id, name, needed)
    except ToolError as exc:
        result = text_result(exc.text, is_error=True)
    except Exception as exc:
        state.errors.append(exc)
        result = text_result(f"tool {name!r} raised {handler_raised(exc)}", is_error=True)
    return result_response(request_id, result)


_PLAIN_RESULTS = frozenset({str, dict, list, type(None)})
"""What a tool's answer often is, and no awaitable ever is: `inspect.isawaitable` is not asked."""


def handle_notification(message: dict[str, Any], session: Session | None) -> str | None:
    """Act on a client notification: `initialized` marks the session, `cancelled` stops a call.

    Returns why it was ignored, for the journal, when it was invalid (the spec lets a receiver
    ignore an invalid cancellation); None otherwise.
    """
    method = message.get("method")
    if session is None:
        return None
    if method == "notifications/initialized":
        session.initialized = True
    elif method == "notifications/cancelled":
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return "ignored: notifications/cancelled needs params.requestId, a string or an integer"
        scope = session.inflight.get(request_id)
        if scope is not None:
            scope.cancel()
    return None
