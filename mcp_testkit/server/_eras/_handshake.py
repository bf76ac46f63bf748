"""The handshake era (protocol 2024-11-05 to 2025-11-25): `initialize`, sessions, batches, GET streams,
resumption and DELETE, over the shared HTTP transport.

It mirrors `_stateless.py`: `McpApp` routes a request here when it does not belong to the stateless
era, and this module checks it against its session, applies its fault, and has `_run.answer` run and
frame it. SSE streams of this era carry event ids, and, on a resumable server, are kept for replay.
The era's own methods (`initialize`, `ping`, `logging/setLevel`) and what dispatch does differently in it are
its `ERA`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit._wire.asgi import cancel_on_disconnect
from mcp_testkit._wire.eras import HANDSHAKE, HANDSHAKE_VERSIONS
from mcp_testkit.server._dispatch._input import answer_arrived, requests_asker
from mcp_testkit.server._dispatch._messages import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    error_response,
    kind_of,
    result_response,
)
from mcp_testkit.server._dispatch._offerings import OFFERING_METHODS, SESSION_METHODS
from mcp_testkit.server._dispatch._paging import LISTINGS, page_number, request_target
from mcp_testkit.server._dispatch._protocol import (
    CANCELLED,
    DEFAULT_VERSION,
    LOG_LEVELS,
    Call,
    Handler,
    call_tool,
    dispatch,
    handle_notification,
    list_tools,
)
from mcp_testkit.server._eras._referee import version_checked
from mcp_testkit.server._eras._run import answer, faulted, sse_chosen
from mcp_testkit.server._eras._served import ServedEra
from mcp_testkit.server._framing._response import accepts, header
from mcp_testkit.server._framing._streams import StreamPlan
from mcp_testkit.server._state._cursors import decode_cursor
from mcp_testkit.server._state._events import EventLog
from mcp_testkit.server._state._sessions import SESSION_NOT_FOUND

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive
    from mcp_testkit.journal import Record
    from mcp_testkit.server._effects import Effect
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._cursors import Cursor
    from mcp_testkit.server._state._sessions import Session

__all__ = ["ERA", "LATEST_VERSION", "METHODS", "delete", "get", "negotiate", "post"]

LATEST_VERSION = HANDSHAKE_VERSIONS[-1]


async def _session(state: ServerState, out: Response) -> Session | None:
    """The request's live session; answers 400 (no id) or 404 (unknown id) and returns None."""
    session_id = out.record.session_id
    if session_id is None:
        await out.error(400, INVALID_REQUEST, "Bad Request: Missing Mcp-Session-Id header; send initialize first")
        return None
    session = state.sessions.get(session_id)
    if session is not None and session.expires_after is not None and session.requests >= session.expires_after:
        state.sessions.end(session.id)
        session.outbox.put(None)
        session = None
    if session is None:
        await out.error(state.sessions.unknown_status, INVALID_REQUEST, SESSION_NOT_FOUND)
        return None
    out.session_header = [(b"mcp-session-id", session_id.encode())]
    return session


async def post(state: ServerState, out: Response, receive: Receive | None = None) -> None:
    """A POST of the handshake era: the probe refused, `initialize`, a batch, or a message in a session."""
    record = out.record
    record.era = HANDSHAKE
    message = out.message
    kind = None if isinstance(message, list) else kind_of(message)
    version = header(out.headers, "mcp-protocol-version")
    if record.rpc_method == "server/discover" and kind == "request":
        await _discover_refused(state, out)
        return
    if version is not None and version not in HANDSHAKE_VERSIONS:
        await out.error(
            400,
            INVALID_REQUEST,
            f"Bad Request: unsupported MCP-Protocol-Version {version!r}; supported: {', '.join(HANDSHAKE_VERSIONS)}",
        )
        return
    if isinstance(message, list):
        await _post_batch(state, message, version, out)
        return
    if kind is None:
        await out.error(400, INVALID_REQUEST, "Invalid Request: the body is not a JSON-RPC 2.0 message")
        return
    if record.rpc_method == "initialize" and kind == "request":
        await _initialize(state, message, out)
        return
    session = await _session(state, out)
    if session is None:
        return
    session.requests += 1
    record.protocol_version = version or session.protocol_version or DEFAULT_VERSION
    if version != session.protocol_version:
        version_checked(record, version, session)
    effect = None
    if state.plan:
        params = message.get("params")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        page = page_number(cursor) if record.rpc_method in LISTINGS else None
        target = request_target(record.rpc_method, params, record.tool)
        fault = state.plan.take(record.rpc_method, target, page, session.id)
        if fault is not None:
            effect, answered = await faulted(state, out, fault, session, request=kind == "request")
            if answered:
                return
    if kind != "request":
        if kind == "response":  # the client's answer to a tool's input request
            record.error = answer_arrived(session, message, record)
        else:
            record.error = handle_notification(message, session)
        if effect is None or not await effect.after_notification(out):
            await out.json(202, None)
        return
    await _answer(state, message, session, out, effect)


async def _answer(
    state: ServerState,
    message: dict[str, Any],
    session: Session | None,
    out: Response,
    effect: Effect[Any] | None,
    settle: Any = None,
) -> None:
    record = out.record
    call = Call(state, record, session, record.protocol_version or DEFAULT_VERSION, ERA, effect=effect)
    if session is not None:
        call.notify = session.outbox.put_async  # an SSE answer carries them on its own stream instead
    await answer(state, message, out, call, effect, open_stream=_open_stream, settle=settle)


async def _open_stream(state: ServerState, out: Response, call: Call, effect: Effect[Any] | None) -> None:
    """Before a request answered as SSE runs: plan the stream (resumable, primed, broken) and send what waits."""
    session = call.session
    out.plan = _stream_plan(state, out.record, session, effect)
    if out.plan is not None and (out.plan.prime or out.plan.break_after == 0):
        await out.start_sse()  # before the request runs: a client can resume from the start
    if session is not None and session.outbox.queue and not session.outbox.streaming:
        await out.start_sse()
        await _drain_outbox(state, session, out)


async def _post_batch(state: ServerState, batch: list[Any], version: str | None, out: Response) -> None:
    record = out.record
    if not batch or any(kind_of(m) is None for m in batch):
        await out.error(400, INVALID_REQUEST, "Invalid Request: a batch must be a non-empty list of JSON-RPC messages")
        return
    if any(m.get("method") == "initialize" for m in batch):
        await out.error(400, INVALID_REQUEST, "Invalid Request: initialize must not be part of a batch")
        return
    session = await _session(state, out)
    if session is None:
        return
    session.requests += 1
    negotiated = version or session.protocol_version
    record.protocol_version = negotiated
    if negotiated != "2025-03-26":
        await out.error(
            400,
            INVALID_REQUEST,
            f"Invalid Request: batches are only allowed under 2025-03-26, not {negotiated}",
        )
        return
    responses = []
    for message in batch:
        if kind_of(message) != "request":
            handle_notification(message, session)
            continue
        call = Call(state, record, session, negotiated, ERA)
        response = await dispatch(message, call)
        if response is not CANCELLED:
            responses.append(response)
    if not responses:
        await out.json(202, None)
    elif sse_chosen(state, record, None, session):
        await out.start_sse()
        record.response = responses
        for response in responses:
            await out.event(state, response)
        await out.end_sse()
    else:
        await out.json(200, responses)


async def _initialize(state: ServerState, message: dict[str, Any], out: Response) -> None:
    record = out.record
    fault = state.plan.take("initialize", None, None, None) if state.plan else None
    effect = None
    if fault is not None:
        effect, answered = await faulted(state, out, fault, None, request=False)
        if answered:
            return

    def open_session(response: Any) -> int:
        result = response.get("result") if isinstance(response, dict) else None
        if result is None:
            return 200
        client_info = (record.params or {}).get("clientInfo")
        session = state.sessions.open(result["protocolVersion"], client_info if isinstance(client_info, dict) else None)
        session.client_capabilities = record.client_capabilities or {}
        record.session_id = session.id
        record.protocol_version = session.protocol_version
        out.session_header = [(b"mcp-session-id", session.id.encode())]
        if effect is not None:
            effect.opened(state, session)
        return 200

    await _answer(state, message, None, out, effect, open_session)


async def _discover_refused(state: ServerState, out: Response) -> None:
    """A server of the handshake era only refuses the 2026-07-28 probe, sending clients to initialize."""
    record = out.record
    record.protocol_version = record.headers.get("mcp-protocol-version")
    fault = state.plan.take("server/discover", None, None, None) if state.plan else None
    if fault is not None:
        _, answered = await faulted(state, out, fault, None, request=False)
        if answered:
            return
    reason = "Method not found: server/discover (this server speaks the handshake era only: send initialize)"
    await out.json(200, error_response(record.rpc_id, METHOD_NOT_FOUND, reason))


def _stream_plan(
    state: ServerState, record: Record, session: Session | None, effect: Effect[Any] | None
) -> StreamPlan | None:
    """What happens to a POST's SSE stream: kept for replay when the server is resumable or a `BreakStream`
    breaks it (in a session: `initialize` has none yet), primed when resumable from 2025-11-25."""
    breaks = effect.breaks() if effect is not None else None
    if not state.resumable and breaks is None:
        return None
    plan = StreamPlan(state.event_ids, retry_ms=state.retry_ms)
    if session is not None:
        if session.events is None:
            session.events = EventLog()
        plan.log = session.events
        plan.stream = session.events.open(record.seq)
        # Clients before 2025-11-25 may not expect an event with empty data, as the SDK's server reasons too.
        plan.prime = state.resumable and (record.protocol_version or DEFAULT_VERSION) >= "2025-11-25"
    if breaks is not None:
        plan.break_after, plan.break_retry_ms = breaks
    return plan


async def _drain_outbox(state: ServerState, session: Session, out: Response) -> None:
    """Send queued server notifications on this response when no GET stream carries them."""
    outbox = session.outbox
    while outbox.queue and not outbox.streaming:
        message = outbox.queue.popleft()
        if message is not None:
            await out.event(state, message)


async def get(state: ServerState, receive: Receive, out: Response, hint: str) -> None:
    """A GET: the session's stream of server messages, or with `Last-Event-ID` a resumed POST stream."""
    out.record.era = HANDSHAKE
    if not accepts(out.record.headers.get("accept", ""), "text/event-stream"):
        await out.error(406, INVALID_REQUEST, "Not Acceptable: a GET stream needs Accept: text/event-stream")
        return
    last_event_id = out.record.headers.get("last-event-id")
    if last_event_id is not None:
        await _resume(state, receive, out, last_event_id)
        return
    if not state.get_stream:
        await out.error(
            405,
            INVALID_REQUEST,
            f"this server offers no GET stream ({hint} opens one)",
            [(b"allow", b"POST, DELETE" if state.allow_delete else b"POST")],
        )
        return
    session = await _session(state, out)
    if session is None:
        return
    out.record.protocol_version = out.record.headers.get("mcp-protocol-version") or session.protocol_version
    outbox = session.outbox
    if outbox.streaming:
        await out.error(409, INVALID_REQUEST, "Conflict: this session already has a GET stream open")
        return
    outbox.streaming = True
    sent: list[dict[str, Any]] = []
    out.record.response = sent  # the journal's record keeps every message the stream carried, in order
    try:
        await out.start_sse()
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
            while True:
                await outbox.wait()
                message = outbox.queue.popleft()
                if message is None:
                    break
                sent.append(message)
                await out.event(state, message)
            group.cancel_scope.cancel()
        await out.end_sse()
    finally:
        outbox.streaming = False
        out.record.response = sent


async def _resume(state: ServerState, receive: Receive, out: Response, last_event_id: str) -> None:
    """A GET with `Last-Event-ID`: replay what its stream sent after that event, then follow it to its end."""
    session = await _session(state, out)
    if session is None:
        return
    record = out.record
    record.protocol_version = record.headers.get("mcp-protocol-version") or session.protocol_version
    found = session.events.find(last_event_id) if session.events is not None else None
    if found is None:
        await out.error(
            400,
            INVALID_REQUEST,
            f"Bad Request: Last-Event-ID {last_event_id[:64]!r} names no event of a resumable stream of this "
            "session, so there is nothing to replay (TestMcpServer(resumable=True) keeps the events of POST "
            "streams, and a BreakStream fault those of the stream it breaks)",
        )
        return
    stream, cursor = found
    await out.start_sse()
    async with anyio.create_task_group() as group:
        group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
        while True:
            for event in stream.after(cursor):
                await out.chunk(event.frame)
                cursor = event.event_id
                if event.answer is not None:
                    record.keep_response(event.answer)
            if stream.done:
                break
            await stream.changed()
        group.cancel_scope.cancel()
    await out.end_sse()


async def delete(state: ServerState, out: Response) -> None:
    """A DELETE: the client ends its session."""
    out.record.era = HANDSHAKE
    if not state.allow_delete:
        allow = [(b"allow", b"GET, POST")]
        await out.error(405, INVALID_REQUEST, "this server does not let clients end sessions", allow)
        return
    session = await _session(state, out)
    if session is None:
        return
    state.sessions.end(session.id)
    session.outbox.put(None)
    await out.json(200, None)


# -- the era's own methods, and what dispatch does differently in it --------------------------------------


def negotiate(requested: Any) -> str:
    """The version to answer `initialize` with: the requested one if spoken, else the latest."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_VERSION


async def _answer_initialize(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    """Open the handshake: the version negotiated, and the server's capabilities and info (a replay's recorded ones)."""
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


METHODS: dict[str, Handler] = {
    "initialize": _answer_initialize,
    "ping": _ping,
    "tools/list": list_tools,
    "tools/call": call_tool,
    "logging/setLevel": _set_level,
    **OFFERING_METHODS,
    **SESSION_METHODS,
}
"""The methods of the handshake era."""


def _session_capabilities(call: Call) -> dict[str, Any]:
    """What the client declared in its session's `initialize` (none without a session)."""
    session = call.session
    return session.client_capabilities if session is not None else {}


def _no_rounds(
    call: Call, request_id: Any, method: str, name: str, arguments: Mapping[str, Any], params: Mapping[str, Any]
) -> None:
    """The era has no input rounds: a handler asks its client on the call's stream instead."""
    return None


def _cursor(state: ServerState, sent: Any) -> Cursor | None:
    return decode_cursor(sent)


def _no_empty_cursor(state: ServerState, leads_to: Cursor) -> None:
    """In this era "" is no cursor: a client that sends it back is answered that it is invalid."""
    return None


ERA = ServedEra(
    name=HANDSHAKE,
    methods=METHODS,
    unknown_resource=RESOURCE_NOT_FOUND,
    logs_unasked=True,
    declared_in="initialize",
    undeclared_code=INVALID_REQUEST,
    capabilities=_session_capabilities,
    begin_rounds=_no_rounds,
    asker=requests_asker,
    cursor=_cursor,
    hand_out_empty_cursor=_no_empty_cursor,
    post=post,
    get=get,
    delete=delete,
)
"""The handshake era, as the transport routes to it and dispatch asks it."""
