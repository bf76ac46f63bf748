"""Answer faults: ErrorResult, ProtocolError, Delay, LateAnswer, and the HTTP ones (HttpStatus, Accepted,
WrongContentType), on the wire and with the official SDK client."""

from __future__ import annotations

import json
import threading

import anyio
import anyio.to_thread
import mcp_types
import pytest
from mcp import MCPError

from mcp_testkit import faults

from ._support import (
    FRAMINGS,
    LIMIT_S,
    SDK_WAIT_S,
    Serve,
    Wire,
    call,
    content_type,
    json_bytes,
    sdk_client,
    socket_client,
    tools,
)
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


# -- HTTP answers -----------------------------------------------------------------------------------

BUSY = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "busy"}}


@pytest.mark.parametrize(
    ("fault", "content", "sent_type"),
    [
        (faults.HttpStatus(500), b"", None),
        (faults.HttpStatus(429, "slow down", {"Retry-After": "7"}), b"slow down", "text/plain; charset=utf-8"),
        (faults.HttpStatus(503, {"error": "busy"}), json.dumps({"error": "busy"}).encode(), "application/json"),
        (faults.HttpStatus(502, b"<html>bad gateway</html>"), b"<html>bad gateway</html>", None),
        (
            faults.HttpStatus(401, None, {"WWW-Authenticate": 'Bearer error="invalid_token"'}),
            b"",
            None,
        ),
    ],
    ids=["500-empty", "429-text-retry-after", "503-json", "502-bytes", "401-challenge"],
)
async def test_http_status_sends_exactly_its_status_body_and_headers(
    serve: Serve, fault: faults.HttpStatus, content: bytes, sent_type: str | None
) -> None:
    """HttpStatus answers with its status, its body (none, text, JSON or raw bytes) and its extra headers."""
    server = tools(serve(response_mode="json"), "create")
    server.fail_next_call(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
            after = await wire.result(call("create", request_id=2))
    assert response.status_code == fault.status
    assert response.content == content
    assert response.headers["content-length"] == str(len(content))
    assert response.headers.get("content-type") == sent_type
    for name, value in fault.headers or ():
        assert response.headers[name] == value
    assert response.headers["mcp-session-id"] == wire.session_id
    assert after["content"][0]["text"] == "create ran"
    record = server.calls("create")[0]
    assert (record.status, record.fault, record.executed) == (fault.status, fault, False)
    assert server.executions("create") == 1


async def test_http_status_hits_any_method_when_none_is_named(serve: Serve) -> None:
    """HttpStatus defaults to any request: injected with method=None it hits the next ping."""
    server = tools(serve(response_mode="json"), "create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            server.inject(faults.HttpStatus(503), method=None)
            response = await wire.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert response.status_code == 503
    assert server.journal.last.rpc_method == "ping"
    assert server.journal.last.fault == faults.HttpStatus(503)


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_accepted_answers_a_request_with_202_and_no_body(serve: Serve, framing: str) -> None:
    """Accepted answers a request 202 with an empty body, as if it were a notification; nothing runs."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(faults.Accepted(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    assert (response.status_code, response.content, response.headers.get("content-type")) == (202, b"", None)
    record = server.calls("create")[0]
    assert (record.status, record.fault, record.executed) == (202, faults.Accepted(), False)
    assert server.executions("create") == 0


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_wrong_content_type_runs_the_call_and_labels_the_json_answer(serve: Serve, framing: str) -> None:
    """WrongContentType runs the call and sends its JSON answer (never SSE) labelled with the wrong type."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(faults.WrongContentType("text/html"), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            response = await wire.post(call("create"))
    expected = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "create ran"}]}}
    assert (response.status_code, response.headers["content-type"]) == (200, "text/html")
    assert response.content == json_bytes(expected)
    assert server.calls("create")[0].executed is True
    assert server.executions("create") == 1


GENERIC = "the SDK's generic message"
"""Stands for the one message the SDK gives every bare HTTP failure (its wording, which this test does not pin)."""
SDK_STATUSES: list[tuple[faults.HttpStatus, int, str]] = [
    (faults.HttpStatus(400), -32603, GENERIC),
    (faults.HttpStatus(401, None, {"WWW-Authenticate": "Bearer"}), -32603, GENERIC),
    (faults.HttpStatus(403), -32603, GENERIC),
    (faults.HttpStatus(404), -32600, "the SDK's own"),
    (faults.HttpStatus(405), -32603, GENERIC),
    (faults.HttpStatus(429, "slow down", {"Retry-After": "1"}), -32603, GENERIC),
    (faults.HttpStatus(500), -32603, GENERIC),
    (faults.HttpStatus(503, "down for maintenance"), -32603, GENERIC),
    (faults.HttpStatus(503, BUSY), -32000, "busy"),
]


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_sdk_client_turns_http_statuses_into_mcp_errors(serve: Serve, framing: str) -> None:
    """The SDK raises one generic MCPError -32603 for a bare status, -32600 for 404, a JSON-RPC body's own error."""
    server = tools(serve(response_mode=framing), "create")
    seen = []
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            for fault, _, _ in SDK_STATUSES:
                server.fail_next_call(fault, tool="create")
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("create", {})
                seen.append((fault, caught.value.code, caught.value.message))
            again = await client.call_tool("create", {})
    generic = {message for (_, _, message), (_, _, said) in zip(seen, SDK_STATUSES, strict=True) if said == GENERIC}
    assert len(generic) == 1  # one message for every status, so a caller cannot tell them apart
    assert [(fault, code) for fault, code, _ in seen] == [(fault, code) for fault, code, _ in SDK_STATUSES]
    assert seen[-1][2] == "busy"  # a JSON-RPC body's own message comes through
    assert again.is_error is False
    assert len(server.journal.requests("initialize")) == 1
    assert [(r.fault, r.status) for r in server.calls("create")] == [
        *((fault, fault.status) for fault, _, _ in SDK_STATUSES),
        (None, 200),
    ]
    assert server.executions("create") == 1


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    ("fault", "code", "message", "ran"),
    [
        (faults.Accepted(), -32600, "server answered a request with 202 Accepted", 0),
        (faults.WrongContentType("text/html"), -32600, "Unexpected content type: text/html", 1),
    ],
    ids=["accepted", "wrong-content-type"],
)
async def test_sdk_client_refuses_202_and_a_wrong_content_type(
    serve: Serve, framing: str, fault: faults.Fault, code: int, message: str, ran: int
) -> None:
    """The SDK raises MCPError -32600 for a 202 to a request and for an unexpected Content-Type (the call ran)."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(fault, tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
    assert (caught.value.code, caught.value.message) == (code, message)
    assert server.executions("create") == ran
