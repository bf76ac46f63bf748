"""Answer faults: ErrorResult, ProtocolError, Delay and LateAnswer, on the wire and with the official SDK client."""

from __future__ import annotations

import threading

import anyio
import anyio.to_thread
import mcp_types
import pytest
from mcp import MCPError

from mcp_testkit import faults

from ._support import FRAMINGS, LIMIT_S, SDK_WAIT_S, Serve, Wire, call, content_type, sdk_client, socket_client, tools
from ._support import wire_bytes as body

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_error_result_is_an_is_error_result_and_the_handler_does_not_run(serve: Serve, framing: str) -> None:
    """ErrorResult answers 200 with an isError result carrying its text; the handler does not run."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(faults.ErrorResult("disk full"), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
            again = await wire.result(call("create", request_id=2))
    expected = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "disk full"}], "isError": True},
    }
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type(framing)
    assert response.content == body(framing, expected)
    assert again == {"content": [{"type": "text", "text": "create ran"}]}
    faulted, normal = server.calls("create")
    assert (faulted.fault, faulted.executed, normal.fault, normal.executed) == (
        faults.ErrorResult("disk full"),
        False,
        None,
        True,
    )
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_protocol_error_is_a_json_rpc_error_with_code_message_and_data(serve: Serve, framing: str) -> None:
    """ProtocolError answers a JSON-RPC error with its code, message and data; the handler does not run."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(faults.ProtocolError(-32000, "backend down", {"retry": False}), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create", request_id=7))
    expected = {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32000, "message": "backend down", "data": {"retry": False}},
    }
    assert response.status_code == 200
    assert response.content == body(framing, expected)
    record = server.calls("create")[0]
    assert (record.fault, record.executed, record.response) == (
        faults.ProtocolError(-32000, "backend down", {"retry": False}),
        False,
        expected,
    )
    assert server.executions("create") == 0


async def test_protocol_error_without_data_sends_no_data_field(serve: Serve) -> None:
    """ProtocolError() defaults to -32603 'Internal error' and leaves `data` out of the error object."""
    server = tools(serve(response_mode="json"), "create", "other")
    server.fail_next_call(faults.ProtocolError(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}


@pytest.mark.parametrize("fault", [faults.Delay(0.05), faults.LateAnswer(0.05)], ids=["delay", "late-answer"])
@pytest.mark.parametrize("framing", FRAMINGS)
async def test_delay_and_late_answer_then_answer_normally(serve: Serve, framing: str, fault: faults.Fault) -> None:
    """Delay (before the request runs) and LateAnswer (after it ran) wait, then answer; the record has the fault."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    assert response.content == body(
        framing, {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "create ran"}]}}
    )
    record = server.calls("create")[0]
    assert (record.fault, record.executed, record.status) == (fault, True, 200)
    assert server.executions("create") == 1


async def test_late_answer_has_run_the_call_while_the_client_still_waits(serve: Serve) -> None:
    """Under LateAnswer the handler runs before the answer is sent: a client that gives up saw a call run."""
    ran = threading.Event()
    server = serve()
    server.tool("create", returns=lambda arguments: ran.set() or "create ran")
    server.fail_next_call(faults.LateAnswer(LIMIT_S * 10), tool="create")
    answered = anyio.Event()
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()

            async def send() -> None:
                await wire.post(call("create"))
                answered.set()

            async with anyio.create_task_group() as group:
                group.start_soon(send)
                assert await anyio.to_thread.run_sync(ran.wait, LIMIT_S)
                group.cancel_scope.cancel()
    assert not answered.is_set()
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_sdk_client_returns_error_result_as_is_error(serve: Serve, framing: str) -> None:
    """The SDK client returns an ErrorResult as a CallToolResult with is_error=True; the next call works."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(faults.ErrorResult("disk full"), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            failed = await client.call_tool("create", {})
            again = await client.call_tool("create", {})
    assert failed.is_error is True
    assert failed.content == [mcp_types.TextContent(type="text", text="disk full")]
    assert (again.is_error, again.content[0].text) == (False, "create ran")  # type: ignore[union-attr]
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_sdk_client_raises_mcp_error_for_protocol_error(serve: Serve, framing: str) -> None:
    """The SDK client raises MCPError with the fault's code, message and data; the session stays usable."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(faults.ProtocolError(-32000, "backend down", {"retry": False}), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
            again = await client.call_tool("create", {})
    assert (caught.value.code, caught.value.message, caught.value.data) == (-32000, "backend down", {"retry": False})
    assert again.is_error is False
    assert server.executions("create") == 1


async def test_sdk_client_waits_out_a_short_delay(serve: Serve) -> None:
    """A Delay shorter than the SDK waits: the SDK returns the normal result."""
    server = tools(serve(), "create", "other")
    server.fail_next_call(faults.Delay(0.05), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server, wait_s=LIMIT_S) as client:
            result = await client.call_tool("create", {})
    assert (result.is_error, result.content[0].text) == (False, "create ran")  # type: ignore[union-attr]
    assert server.calls("create")[0].fault == faults.Delay(0.05)


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_sdk_client_times_out_on_a_long_delay_and_the_call_still_runs(serve: Serve, framing: str) -> None:
    """A Delay past read_timeout_seconds: the SDK raises MCPError -32001 and cancels, yet the handler still runs."""
    server = tools(serve(response_mode=framing), "create", "other")
    server.fail_next_call(faults.Delay(SDK_WAIT_S * 3), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server, wait_s=SDK_WAIT_S) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
            again = await client.call_tool("other", {})
        await anyio.to_thread.run_sync(lambda: server.journal.wait_for(lambda j: server.executions("create") == 1))
    assert caught.value.code == -32001
    assert "timed out" in caught.value.message
    assert again.is_error is False
    assert server.journal.requests("notifications/cancelled")[0].params["requestId"] == (  # type: ignore[index]
        server.calls("create")[0].rpc_id
    )
    assert server.calls("create")[0].fault == faults.Delay(SDK_WAIT_S * 3)
    assert server.executions("create") == 1


async def test_sdk_client_times_out_on_a_late_answer_of_a_call_that_ran(serve: Serve) -> None:
    """A LateAnswer past read_timeout_seconds: the SDK raises MCPError -32001; the handler had already run."""
    server = tools(serve(), "create", "other")
    server.fail_next_call(faults.LateAnswer(SDK_WAIT_S * 3), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server, wait_s=SDK_WAIT_S) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
    assert caught.value.code == -32001
    assert server.calls("create")[0].fault == faults.LateAnswer(SDK_WAIT_S * 3)
    assert server.executions("create") == 1
