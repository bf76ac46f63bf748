"""SSE: response framing, the GET stream and list_changed, cancellation, progress and log notifications."""

from __future__ import annotations

import threading
from contextlib import aclosing
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer, ToolContext

from ._support import LIMIT_S, events, messages, note, rpc, sdk_transport, serving, wait_for

pytestmark = pytest.mark.anyio


async def test_sse_responses_are_framed_as_message_events_with_unique_ids(via: str) -> None:
    """In SSE mode every answer is a text/event-stream of `event: message` with a fresh id and the JSON-RPC data."""
    server = TestMcpServer(response_mode="sse")
    server.tool("t", returns="ok")
    async with serving(server, via) as wire:
        first = await wire.initialize()
        second = await wire.post(rpc("tools/call", {"name": "t"}, 2))
        third = await wire.post(rpc("ping", request_id=3))
    ids = []
    for response in (first, second, third):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["mcp-session-id"] == wire.session_id
        [event] = events(response)
        assert set(event) == {"event", "id", "data"}
        assert event["event"] == "message"
        ids.append(event["id"])
    assert len(set(ids)) == 3
    assert messages(second)[0]["result"]["content"][0]["text"] == "ok"
    assert server.calls("t")[0].response == messages(second)[0]


async def test_response_mode_can_be_chosen_per_request(via: str) -> None:
    """A callable response_mode picks JSON or SSE for each request from its record."""
    server = TestMcpServer(response_mode=lambda record: "sse" if record.tool == "streamed" else "json")
    server.tool("streamed", returns="s")
    server.tool("plain", returns="p")
    async with serving(server, via) as wire:
        await wire.initialize()
        streamed = await wire.post(rpc("tools/call", {"name": "streamed"}))
        plain = await wire.post(rpc("tools/call", {"name": "plain"}))
    assert streamed.headers["content-type"] == "text/event-stream"
    assert plain.headers["content-type"] == "application/json"


async def _next_message(source: Any) -> Any:
    event = await source.__anext__()
    assert event.event == "message"
    return event.json()


async def test_get_stream_carries_list_changed_when_the_catalogue_changes() -> None:
    """With get_stream=True a session's GET stream gets notifications/tools/list_changed on every catalogue change."""
    server = TestMcpServer(get_stream=True)
    server.tool("first")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        with anyio.fail_after(LIMIT_S):
            async with wire.client.stream("GET", wire.path, headers=wire.headers(accept="text/event-stream")) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"] == "text/event-stream"
                async with aclosing(httpx2.EventSource(stream).__aiter__()) as source:
                    server.tool("second")
                    changed = await _next_message(source)
                    assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                    server.remove_tool("first")
                    assert (await _next_message(source))["method"] == "notifications/tools/list_changed"
                tools = (await wire.request("tools/list"))["result"]["tools"]
                assert [t["name"] for t in tools] == ["second"]
        record = server.journal.requests(http_method="GET")[0]
        assert (record.status, record.session_id) == (200, wire.session_id)


async def test_only_one_get_stream_per_session() -> None:
    """A second GET stream on a session that has one gets 409; without a session it is 400, unknown 404."""
    server = TestMcpServer(get_stream=True)
    async with serving(server, "socket") as wire:
        await wire.initialize()
        headers = wire.headers(accept="text/event-stream")
        with anyio.fail_after(LIMIT_S):
            async with wire.client.stream("GET", wire.path, headers=headers) as stream:
                assert stream.status_code == 200
                assert (await wire.send("GET", headers=headers)).status_code == 409
            missing = {k: v for k, v in headers.items() if k != "mcp-session-id"}
            assert (await wire.send("GET", headers=missing)).status_code == 400
            unknown = headers | {"mcp-session-id": "x"}
            assert (await wire.send("GET", headers=unknown)).status_code == 404
            # The server notices the closed stream when the client disconnects; then the session may open another.
            await wait_for(server, lambda j: not server.session().outbox.streaming)
            async with wire.client.stream("GET", wire.path, headers=headers) as again:
                assert again.status_code == 200


async def test_list_changed_rides_the_next_sse_response_without_a_get_stream() -> None:
    """With no GET stream open, a pending list_changed is sent on the session's next SSE response, first."""
    server = TestMcpServer(response_mode="sse")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        server.tool("added")
        carried = messages(await wire.post(rpc("ping", request_id=5)))
    assert carried == [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "id": 5, "result": {}},
    ]


def _blocking_tool(server: TestMcpServer) -> tuple[threading.Event, threading.Event]:
    """A tool whose handler waits until it is cancelled; events say it started and that it saw the cancel."""
    started, cancelled = threading.Event(), threading.Event()

    async def slow(arguments: dict[str, Any]) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "never"

    server.tool("slow", returns=slow)
    return started, cancelled


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_cancelled_stops_the_call_and_sends_no_response(via: str, response_mode: str) -> None:
    """notifications/cancelled cancels the running handler; the call's response carries no JSON-RPC message."""
    server = TestMcpServer(response_mode=response_mode)
    started, cancelled = _blocking_tool(server)
    async with serving(server, via) as wire:
        await wire.initialize()
        answers: list[httpx2.Response] = []

        async def call() -> None:
            answers.append(await wire.post(rpc("tools/call", {"name": "slow"}, request_id=7)))

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                assert await anyio.to_thread.run_sync(started.wait, LIMIT_S)
                ack = await wire.post(note("notifications/cancelled", {"requestId": 7, "reason": "user"}))
                assert ack.status_code == 202
        await wire.ping_ok()
    assert cancelled.is_set()
    assert answers[0].status_code == 200
    assert messages(answers[0]) == []
    record = server.calls("slow")[0]
    assert (record.executed, record.response) == (True, None)
    assert server.executions("slow") == 1


async def test_cancelling_an_sdk_call_cancels_the_handler() -> None:
    """When the SDK client's caller gives up on a call, the SDK sends notifications/cancelled and the handler stops."""
    server = TestMcpServer()
    started, cancelled = _blocking_tool(server)
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode="legacy") as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "slow", {})
                    assert await anyio.to_thread.run_sync(started.wait, LIMIT_S)
                    group.cancel_scope.cancel()
                await wait_for(server, lambda j: bool(j.requests("notifications/cancelled")))
        assert await anyio.to_thread.run_sync(cancelled.wait, LIMIT_S)
    assert server.journal.requests("notifications/cancelled")[0].params["requestId"] == server.calls("slow")[0].rpc_id


def _progressing_tool(server: TestMcpServer) -> None:
    async def work(arguments: dict[str, Any], context: ToolContext) -> str:
        await context.progress(1, 2, "half way")
        await context.progress(2, 2)
        return "done"

    server.tool("work", returns=work)


async def test_progress_travels_on_the_calls_sse_stream(via: str) -> None:
    """A handler's context.progress() sends notifications/progress with the call's token before the response."""
    server = TestMcpServer(response_mode="sse")
    _progressing_tool(server)
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.post(rpc("tools/call", {"name": "work", "_meta": {"progressToken": "p1"}}, 3))
    sent = messages(response)
    assert sent[:2] == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": 1, "total": 2, "message": "half way"},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p1", "progress": 2, "total": 2},
        },
    ]
    assert sent[2]["result"]["content"][0]["text"] == "done"
    assert len({event["id"] for event in events(response)}) == 3


async def test_no_progress_without_a_token(via: str) -> None:
    """Without _meta.progressToken, context.progress() sends nothing."""
    server = TestMcpServer(response_mode="sse")
    _progressing_tool(server)
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.post(rpc("tools/call", {"name": "work"}, 3))
    assert [m.get("id") for m in messages(response)] == [3]


async def test_progress_reaches_the_sdk_progress_callback(via: str) -> None:
    """The SDK client's progress_callback sees each progress report of the handler, in order."""
    server = TestMcpServer(response_mode="sse")
    _progressing_tool(server)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                result = await client.call_tool("work", {}, progress_callback=on_progress)
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert seen == [(1, 2, "half way"), (2, 2, None)]


async def test_progress_of_a_json_call_goes_to_the_get_stream() -> None:
    """In JSON mode, progress notifications travel on the session's GET stream."""
    server = TestMcpServer(get_stream=True)
    _progressing_tool(server)
    async with serving(server, "socket") as wire:
        await wire.initialize()
        with anyio.fail_after(LIMIT_S):
            async with wire.client.stream("GET", wire.path, headers=wire.headers(accept="text/event-stream")) as stream:
                async with aclosing(httpx2.EventSource(stream).__aiter__()) as source:
                    result = await wire.request("tools/call", {"name": "work", "_meta": {"progressToken": 9}})
                    assert result["result"]["content"][0]["text"] == "done"
                    first, second = await _next_message(source), await _next_message(source)
    assert [first["params"]["progress"], second["params"]["progress"]] == [1, 2]
    assert first["params"]["progressToken"] == 9


async def test_log_messages_respect_the_level_the_client_set(via: str) -> None:
    """context.log() sends notifications/message at or above the level set with logging/setLevel."""
    server = TestMcpServer(response_mode="sse")

    async def chatty(arguments: dict[str, Any], context: ToolContext) -> str:
        await context.log("debug", "noise")
        await context.log("error", {"disk": "full"}, logger="store")
        return "logged"

    server.tool("chatty", returns=chatty)
    async with serving(server, via) as wire:
        await wire.initialize()
        assert (await wire.request("logging/setLevel", {"level": "warning"}))["result"] == {}
        bad = await wire.request("logging/setLevel", {"level": "loud"}, request_id=2)
        response = await wire.post(rpc("tools/call", {"name": "chatty"}, 3))
    assert bad["error"]["code"] == -32602
    assert messages(response)[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "error", "data": {"disk": "full"}, "logger": "store"},
    }
    assert len(messages(response)) == 2
