"""Connection faults: Drop, TruncateBody, EndStream and MalformedSse, on the wire and with the official SDK client."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import MCPError

from mcp_testkit import faults

from ._support import (
    FRAMINGS,
    LIMIT_S,
    Serve,
    Wire,
    call,
    json_bytes,
    sdk_client,
    socket_client,
    sse_bytes,
    tools,
    wire_bytes,
)

pytestmark = pytest.mark.anyio

CREATED = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "create ran"}]}}
"""The answer to `call("create")` when nothing interferes."""


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("after_execution", [False, True], ids=["before", "after-execution"])
async def test_drop_closes_the_connection_without_an_answer(serve: Serve, framing: str, after_execution: bool) -> None:
    """Drop closes the connection (httpx2.RemoteProtocolError); only Drop(after_execution=True) runs the handler."""
    server = tools(serve(response_mode=framing), "create")
    fault = faults.Drop(after_execution=after_execution)
    server.fail_next_call(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            with pytest.raises(httpx2.RemoteProtocolError, match="Server disconnected"):
                await wire.post(call("create"))
            after = await wire.post(call("create", request_id=2))
    assert after.status_code == 200
    dropped, normal = server.calls("create")
    assert (dropped.fault, dropped.status, dropped.error) == (fault, None, "connection dropped by a fault")
    assert dropped.response is None
    assert dropped.executed is after_execution
    assert (normal.fault, normal.executed) == (None, True)
    assert server.executions("create") == 1 + after_execution


async def test_drop_of_a_notification_closes_the_connection(serve: Serve) -> None:
    """A Drop aimed at a notification closes the connection instead of answering 202."""
    server = serve()
    server.inject(faults.Drop(), method="notifications/initialized")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            with pytest.raises(httpx2.RemoteProtocolError):
                await wire.initialize()
    record = server.journal.last
    assert (record.rpc_method, record.fault, record.status) == ("notifications/initialized", faults.Drop(), None)


async def test_truncate_body_sends_half_the_json_answer(serve: Serve) -> None:
    """TruncateBody (JSON framing) runs the call and sends the first half of its JSON answer, 200, a matching length."""
    server = tools(serve(response_mode="json"), "create")
    server.fail_next_call(faults.TruncateBody(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    whole = json_bytes(CREATED)
    assert (response.status_code, response.headers["content-type"]) == (200, "application/json")
    assert response.content == whole[: len(whole) // 2]
    assert response.headers["content-length"] == str(len(whole) // 2)
    record = server.calls("create")[0]
    assert (record.fault, record.executed) == (faults.TruncateBody(), True)
    assert server.executions("create") == 1


async def test_truncate_body_over_sse_cuts_the_event_in_half_and_ends_the_stream(serve: Serve) -> None:
    """TruncateBody (SSE framing) sends the first half of the response event, without its blank line, then ends."""
    server = tools(serve(response_mode="sse"), "create")
    server.fail_next_call(faults.TruncateBody(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    frame = sse_bytes(2, CREATED)[: -len(b"\n\n")]
    assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
    assert response.content == frame[: len(frame) // 2]
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_end_stream_ends_the_sse_stream_before_the_response(serve: Serve, framing: str) -> None:
    """EndStream answers 200 text/event-stream (in either framing), runs the call, and ends with no event at all."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(faults.EndStream(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
            after = await wire.post(call("create", request_id=1))
    assert (response.status_code, response.headers["content-type"], response.content) == (
        200,
        "text/event-stream",
        b"",
    )
    assert after.content == wire_bytes(framing, CREATED)
    record = server.calls("create")[0]
    assert (record.fault, record.executed, record.response) == (faults.EndStream(), True, None)
    assert server.executions("create") == 2


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_malformed_sse_sends_one_event_whose_data_is_not_json(serve: Serve, framing: str) -> None:
    """MalformedSse runs the call, sends one event whose data line is not JSON, and ends the stream."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(faults.MalformedSse(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    event_id = 1 if framing == "json" else 2
    assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
    assert response.content == b"event: message\nid: %d\ndata: {this is not json\n\n" % event_id
    assert (server.calls("create")[0].fault, server.executions("create")) == (faults.MalformedSse(), 1)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("after_execution", [False, True], ids=["before", "after-execution"])
async def test_sdk_client_loses_the_whole_connection_on_a_drop(
    serve: Serve, framing: str, after_execution: bool
) -> None:
    """On a Drop the SDK's call is cancelled and `async with Client` raises a group with RemoteProtocolError."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(faults.Drop(after_execution=after_execution), tool="create")
    with anyio.fail_after(LIMIT_S):
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the group is checked below
            async with sdk_client(server) as client:
                await client.call_tool("create", {})
    assert caught.group_contains(httpx2.RemoteProtocolError)
    assert [r.fault for r in server.calls("create")] == [faults.Drop(after_execution=after_execution)]
    assert server.calls("create")[0].executed is after_execution
    assert server.executions("create") == after_execution


@pytest.mark.parametrize(
    ("framing", "fault", "code", "message"),
    [
        ("json", faults.TruncateBody(), -32700, "Failed to parse JSON response"),
        ("sse", faults.TruncateBody(), -32000, "SSE stream ended without a response"),
        ("json", faults.EndStream(), -32000, "SSE stream ended without a response"),
        ("sse", faults.EndStream(), -32000, "SSE stream ended without a response"),
        ("json", faults.MalformedSse(), -32700, "Failed to parse SSE message"),
        ("sse", faults.MalformedSse(), -32700, "Failed to parse SSE message"),
    ],
    ids=["truncate-json", "truncate-sse", "end-stream-json", "end-stream-sse", "malformed-json", "malformed-sse"],
)
async def test_sdk_client_raises_mcp_error_for_a_broken_answer_and_keeps_the_session(
    serve: Serve, framing: str, fault: faults.Fault, code: int, message: str
) -> None:
    """A truncated, ended or malformed answer: the SDK raises MCPError for that call only and does not resend it."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
            again = await client.call_tool("create", {})
    assert caught.value.code == code
    assert caught.value.message.startswith(message)
    assert again.is_error is False
    assert [r.fault for r in server.calls("create")] == [fault, None]
    assert server.executions("create") == 2
