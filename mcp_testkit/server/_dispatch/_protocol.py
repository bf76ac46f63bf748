"""JSON-RPC dispatch: one function per MCP method, and protocol version negotiation.

Nothing here knows about HTTP: the transport hands in a decoded message and a `Call`, and gets
back the JSON-RPC response to frame (or `CANCELLED` when the client cancelled the request).
"""

from __future__ import annotations

import inspect
import json
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit._wire.eras import HANDSHAKE, HANDSHAKE_VERSIONS, STATELESS
from mcp_testkit.server._dispatch._input import InputNeeded, asker, begin_rounds, capabilities_of, input_required
from mcp_testkit.server._dispatch._messages import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    error_response,
    result_response,
)
from mcp_testkit.server._dispatch._offerings import OFFERING_METHODS, SESSION_METHODS
from mcp_testkit.server._dispatch._paging import Page, page_of
from mcp_testkit.server._state._cursors import Cursor, decode_cursor, encode_cursor
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
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = [
    "CANCELLED",
    "HANDSHAKE_METHODS",
    "HANDSHAKE_VERSIONS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_VERSION",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Call",
    "Handler",
    "call_tool",
    "dispatch",
    "dumps",
    "error_response",
    "handle_notification",
    "list_tools",
    "negotiate",
    "result_response",
]

LATEST_VERSION = HANDSHAKE_VERSIONS[-1]
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
    notify: Notify = field(default=_discard)
    """Sends a server notification related to this request (on its SSE stream, if it has one)."""
    effect: Any = None
    """The effect of the fault a rule applies to this request, if any: a `server._effects.Effect` (not named
    here: that module names `Call` in turn)."""
    era: str = HANDSHAKE
    methods: dict[str, Handler] | None = None
    """The methods of the request's era (None: the handshake era's)."""
    log_level: str | None = None
    """A stateless request's `io.modelcontextprotocol/logLevel`: without one, a tool's log messages are not sent."""
    to_client: Notify | None = None
    """Sends a server-to-client request on this request's own stream (handshake era: an input request)."""
    rounds: Any = None
    """A 2026-07-28 request's answers to earlier input requests (`server._input.Rounds`), once it has or needs any."""


def negotiate(requested: Any) -> str:
    """The version to answer `initialize` with: the requested one if spoken, else the latest."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_VERSION


_ENCODER = json.JSONEncoder(separators=(",", ":"))
# The C encoder `_ENCODER.encode` builds afresh on every call, built once (without the circular-reference
# check's shared state, which one encoder could not keep across threads): a third of a small answer's cost.
_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Any = None
if _make_c_encoder is not None:
    _C_ENCODER = _make_c_encoder(
        None, _ENCODER.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    _PROBE = {"a": [1, 2.5, None, True, "\u00e9"], "b": {}}
    if "".join(_C_ENCODER(_PROBE, 0)) != _ENCODER.encode(_PROBE):  # another Python's private signature
        _C_ENCODER = None


def dumps(payload: Any) -> bytes:
    """A JSON-RPC message as compact JSON bytes."""
    if _C_ENCODER is not None:
        try:
            return "".join(_C_ENCODER(payload, 0)).encode()
        except RecursionError:
            pass  # too deep, or circular: the checking encoder says which, as it always has
    return _ENCODER.encode(payload).encode()


async def dispatch(message: dict[str, Any], call: Call) -> Any:
    """Answer one JSON-RPC request with a method of its era."""
    method = message["method"]
    handler = (HANDSHAKE_METHODS if call.methods is None else call.methods).get(method)
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


async def _initialize(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        return error_response(request_id, INVALID_PARAMS, "initialize needs params.protocolVersion (a string)")
    state = call.state
    answer = state.initialize_result or {
        "capabilities": {"tools": {"listChanged": True}, "logging": {}, **state.offerings.capabilities()},
        "serverInfo": {"name": state.name, "version": state.version},
    }
    return result_response(request_id, {"protocolVersion": negotiate(requested), **answer})


async def _ping(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    return result_response(request_id, {})


async def _set_level(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        return error_response(
            request_id, INVALID_PARAMS, f"logging/setLevel: level must be one of {', '.join(LOG_LEVELS)}"
        )
    if call.session is not None:
        call.session.log_level = level
    return result_response(request_id, {})


async def list_tools(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    state = call.state
    effect = call.effect
    sent = params.get("cursor")
    here = Cursor(1, 0)
    if sent is not None:
        # In the stateless era "" is a legal cursor: the one an EmptyCursor page handed out.
        decoded = state.empty_cursor if sent == "" and call.era == STATELESS else decode_cursor(sent)
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
    if call.era == STATELESS:
        refused = begin_rounds(call, request_id, "tools/call", name, arguments, params)
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
            logs=call.era == HANDSHAKE or call.log_level is not None,
            era=call.era,
            client_capabilities=capabilities_of(call),
            _ask=asker(call, name, "tools/call", arguments),
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
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        result = text_result(f"tool {name!r} raised {detail}", is_error=True)
    return result_response(request_id, result)


_PLAIN_RESULTS = frozenset({str, dict, list, type(None)})
"""What a tool's answer often is, and no awaitable ever is: `inspect.isawaitable` is not asked."""

HANDSHAKE_METHODS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": list_tools,
    "tools/call": call_tool,
    "logging/setLevel": _set_level,
    **OFFERING_METHODS,
    **SESSION_METHODS,
}


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
