"""`subscriptions/listen` (2026-07-28): the era's one stream of server notifications, opened by a request.

It replaces the handshake era's GET stream and `resources/subscribe`. A client POSTs `subscriptions/listen`
with the notifications it opts in to (`toolsListChanged`, `resourcesListChanged`, `promptsListChanged`,
`resourceSubscriptions`, and `taskIds` for the tasks extension's `notifications/tasks`, from a client that declares
the extension); the answer is an SSE stream whose first event acknowledges the subscription with the
types the server agreed to honour, followed by the notifications of those types only, each carrying the
request's id as `_meta["io.modelcontextprotocol/subscriptionId"]`. The stream lasts until the client closes it
(no answer then) or the server ends it (stop, `reset()`): then its last event is the request's result.

The server's table of open streams is its state (`Listeners`, `server/_state/_listeners.py`): the scripting API
publishes every change to it, from any thread. The journal's record of the request keeps, as its `response`, the
list of every message sent on the stream, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit._wire.asgi import Receive, cancel_on_disconnect
from mcp_testkit._wire.eras import SERVER_INFO_KEY
from mcp_testkit.server._dispatch._messages import INVALID_PARAMS, error_response
from mcp_testkit.server._dispatch._tasks import TASKS_EXTENSION, declared_by, missing_extension
from mcp_testkit.server._state._listeners import FILTER_KEYS, SUBSCRIPTION_ID_KEY, Listener

if TYPE_CHECKING:
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState

__all__ = ["ACKNOWLEDGED", "listen"]

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def _honoured(requested: Any) -> dict[str, Any] | str:
    """What the server agrees to send for a listen request's `notifications` filter, or why it is not one."""
    if not isinstance(requested, dict):
        return (
            "subscriptions/listen needs params.notifications, an object of opt-ins: toolsListChanged, "
            "resourcesListChanged, promptsListChanged (booleans), resourceSubscriptions (a list of URIs), taskIds "
            "(a list of task ids)"
        )
    honoured: dict[str, Any] = {}
    for key in FILTER_KEYS:
        value = requested.get(key)
        if value is not None and not isinstance(value, bool):
            return f"subscriptions/listen: params.notifications.{key} must be a boolean, not {value!r}"
        if value:
            honoured[key] = True
    uris = requested.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
            return "subscriptions/listen: params.notifications.resourceSubscriptions must be a list of URI strings"
        if uris:
            honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
    task_ids = requested.get("taskIds")
    if task_ids is not None:
        if not isinstance(task_ids, list) or not all(isinstance(task_id, str) for task_id in task_ids):
            return "subscriptions/listen: params.notifications.taskIds must be a list of task id strings"
        if task_ids:
            honoured["taskIds"] = list(dict.fromkeys(task_ids))
    return honoured


async def listen(state: ServerState, out: Response, receive: Receive | None, params: dict[str, Any]) -> None:
    """Serve one `subscriptions/listen` request over HTTP: acknowledge, then carry what it opted in to."""
    record = out.record
    request_id = record.rpc_id
    honoured = _honoured(params.get("notifications"))
    if isinstance(honoured, str):
        record.error = honoured
        await out.json(400, error_response(request_id, INVALID_PARAMS, f"Invalid params: {honoured}"))
        return
    if "taskIds" in honoured and not declared_by(record.client_capabilities):
        record.error = f"asked for task notifications without declaring the {TASKS_EXTENSION} extension"
        await out.json(400, missing_extension(request_id, "subscriptions/listen with notifications.taskIds"))
        return
    listener = Listener(request_id, honoured)
    sent: list[dict[str, Any]] = []
    record.response = sent

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        await out.event(state, message)

    state.listeners.open(listener)
    try:
        await out.start_sse()
        ack = {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"notifications": honoured}}
        await send(listener.tagged(ack))
        ended = False
        async with anyio.create_task_group() as group:
            if receive is not None:
                group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
            while True:
                await listener.outbox.wait()
                message = listener.outbox.queue.popleft()
                if message is None:
                    ended = True
                    break
                await send(message)
            group.cancel_scope.cancel()
        if ended:
            meta = {SUBSCRIPTION_ID_KEY: request_id, SERVER_INFO_KEY: state.server_info()}
            result = {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "_meta": meta}}
            await send(result)
        else:
            record.error = "the client closed its subscriptions/listen stream"
        await out.end_sse()
    finally:
        state.listeners.close(listener)
        record.response = sent
