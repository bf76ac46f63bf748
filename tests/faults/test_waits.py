"""Faults of waits and sizes over HTTP: NeverAnswer, Dribble, ProgressOnly and HugeResult, both eras, both framings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit._wire.eras import stateless_headers, stateless_params

from ._support import (
    ACCEPT,
    FRAMINGS,
    LIMIT_S,
    Serve,
    Wire,
    asgi_client,
    call,
    messages,
    sdk_client,
    socket_client,
    tools,
)

pytestmark = pytest.mark.anyio

ERAS = ("handshake", "stateless")
HOLD_S = 0.3
"""How long a test lets an answer that must not come fail to come (the fault holds it for good)."""


@asynccontextmanager
async def _client(server: TestMcpServer, via: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with socket_client(server) if via == "socket" else asgi_client(server) as client:
        yield client


async def _request(client: httpx2.AsyncClient, era: str, message: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The path and headers of `message` in `era` (a handshake session is opened first); the message is updated."""
    if era == "handshake":
        wire = Wire(client)
        await wire.initialize()
        return wire.path, wire.headers()
    params = stateless_params(message.get("params"), client_info={"name": "waits", "version": "1"})
    message["params"] = params
    return "/mcp", {"accept": ACCEPT, **stateless_headers(message["method"], params)}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("framing", FRAMINGS)
async def test_never_answer_sends_headers_and_no_body(serve: Serve, framing: str, era: str) -> None:
    """NeverAnswer sends 200 and the framing's headers, then no byte of a body; the handler does not run."""
    server = tools(serve(response_mode=framing), "slow")
    server.fail_next_call(faults.NeverAnswer(), tool="slow")
    body: list[bytes] = []
    async with socket_client(server) as client:
        message = call("slow")
        path, headers = await _request(client, era, message)
        with anyio.fail_after(LIMIT_S):
            async with client.stream("POST", path, json=message, headers=headers) as response:
                status, kind = response.status_code, response.headers["content-type"]
                with anyio.move_on_after(HOLD_S) as held:
                    async for piece in response.aiter_raw():
                        body.append(piece)
    assert held.cancelled_caught
    assert (status, kind.split(";")[0], b"".join(body)) == (200, _content_type(framing), b"")
    (record,) = server.calls("slow")
    assert (record.fault, record.executed) == (faults.NeverAnswer(), False)
    assert server.executions("slow") == 0


async def test_never_answer_in_process_holds_the_request_until_the_client_leaves(serve: Serve) -> None:
    """In-process the request never finishes; the client giving up ends it, and the next call is answered."""
    server = tools(serve(), "slow")
    server.fail_next_call(faults.NeverAnswer(), tool="slow")
    async with asgi_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        with anyio.move_on_after(HOLD_S) as held:
            await client.post(wire.path, json=call("slow"), headers=wire.headers())
        again = await wire.result(call("slow", request_id=2))
    assert held.cancelled_caught
    assert again == {"content": [{"type": "text", "text": "slow ran"}]}
    assert server.executions("slow") == 1


async def test_never_answer_on_initialize_opens_the_session_and_sends_no_body(serve: Serve) -> None:
    """NeverAnswer on initialize: the session opens (its id in the headers), the answer's body never comes."""
    server = tools(serve(), "slow")
    server.inject(faults.NeverAnswer(), method="initialize")
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "w", "version": "1"}}
    body: list[bytes] = []
    async with socket_client(server) as client:
        with anyio.fail_after(LIMIT_S):
            headers = {"accept": ACCEPT, "content-type": "application/json"}
            async with client.stream("POST", "/mcp", json=call("x") | {"method": "initialize", "params": params},
                                     headers=headers) as response:
                status, session = response.status_code, response.headers.get("mcp-session-id")
                with anyio.move_on_after(HOLD_S) as held:
                    async for piece in response.aiter_raw():
                        body.append(piece)
    assert held.cancelled_caught
    assert (status, b"".join(body)) == (200, b"")
    assert session
    (record,) = server.journal.requests("initialize")
    assert record.fault == faults.NeverAnswer()


@pytest.mark.parametrize("via", ["socket", "asgi"])
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("framing", FRAMINGS)
async def test_dribble_sends_the_whole_answer_in_small_writes(serve: Serve, via: str, framing: str, era: str) -> None:
    """Dribble's answer is the normal answer, byte for byte, sent in writes of a few bytes; the handler ran."""
    server = tools(serve(response_mode=framing), "read")
    server.fail_next_call(faults.Dribble(bytes_per_s=400), tool="read")
    pieces: list[bytes] = []
    async with _client(server, via) as client:
        message = call("read")
        path, headers = await _request(client, era, message)
        with anyio.fail_after(LIMIT_S):
            async with client.stream("POST", path, json=message, headers=headers) as response:
                async for piece in response.aiter_raw():
                    pieces.append(piece)
    (answer,) = [m for m in _messages(framing, b"".join(pieces)) if "id" in m]
    assert answer["result"]["content"] == [{"type": "text", "text": "read ran"}]
    if via == "socket":
        assert len(pieces) > 3  # it came in several writes (in-process the transport joins them)
    (record,) = server.calls("read")
    assert (record.fault, record.executed) == (faults.Dribble(bytes_per_s=400), True)


@pytest.mark.parametrize("era", ERAS)
async def test_progress_only_sends_progress_for_the_call_and_never_its_answer(serve: Serve, era: str) -> None:
    """ProgressOnly streams progress with the call's token, never a result; the handler does not run."""
    server = tools(serve(), "long")
    server.fail_next_call(faults.ProgressOnly(interval_s=0.01), tool="long")
    seen: list[dict[str, Any]] = []
    async with socket_client(server) as client:
        message = call("long")
        message["params"]["_meta"] = {"progressToken": "p-1"}
        path, headers = await _request(client, era, message)
        with anyio.fail_after(LIMIT_S):
            async with client.stream("POST", path, json=message, headers=headers) as response:
                kind = response.headers["content-type"]
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        seen.append(json.loads(line[6:]))
                    if len(seen) == 3:
                        break
    assert kind.startswith("text/event-stream")
    assert [m["method"] for m in seen] == ["notifications/progress"] * 3
    assert [m["params"]["progressToken"] for m in seen] == ["p-1"] * 3
    assert [m["params"]["progress"] for m in seen] == [1, 2, 3]
    assert server.executions("long") == 0


@pytest.mark.parametrize("via", ["socket", "asgi"])
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("framing", FRAMINGS)
async def test_huge_result_is_one_text_block_of_its_size(serve: Serve, via: str, framing: str, era: str) -> None:
    """HugeResult answers a text block of exactly `size` bytes, a JSON body with its length or one SSE event."""
    size = 3 * 1024 * 1024 + 7
    server = tools(serve(response_mode=framing), "big")
    server.fail_next_call(faults.HugeResult(size=size), tool="big")
    async with _client(server, via) as client:
        message = call("big")
        path, headers = await _request(client, era, message)
        with anyio.fail_after(LIMIT_S):
            response = await client.post(path, json=message, headers=headers)
            again = await client.post(path, json={**message, "id": 2}, headers=headers)
    if framing == "json":
        assert int(response.headers["content-length"]) == len(response.content)
    (answer,) = messages(response)
    assert answer["id"] == 1
    assert answer["result"]["content"] == [{"type": "text", "text": "x" * size}]
    assert messages(again)[-1]["result"]["content"] == [{"type": "text", "text": "big ran"}]
    assert server.executions("big") == 2
    assert f"{size} bytes" in (server.calls("big")[0].error or "")


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    "fault", [faults.NeverAnswer(), faults.ProgressOnly(interval_s=0.05), faults.Dribble(bytes_per_s=8)]
)
async def test_the_sdk_client_times_out_on_a_held_answer_and_goes_on(serve: Serve, framing: str, fault: Any) -> None:
    """The SDK client raises -32001 at read_timeout_seconds for an answer held back or dribbled (progress does not
    extend it), and its next call works (docs/faults.md, the SDK table)."""
    from mcp import MCPError

    server = tools(serve(response_mode=framing), "slow")
    server.fail_next_call(fault, tool="slow")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server, wait_s=0.3) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("slow", {})
            again = await client.call_tool("slow", {})
    assert raised.value.error.code == -32001
    assert again.content[0].text == "slow ran"  # type: ignore[union-attr]


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_the_sdk_client_takes_a_huge_json_result_and_refuses_a_huge_sse_event(serve: Serve, framing: str) -> None:
    """A 2 MiB result: the SDK client returns it whole as JSON, and refuses it as one SSE event (its 1 MiB limit)
    with -32000; either way the next call works."""
    from mcp import MCPError

    size = 2 * 1024 * 1024
    server = tools(serve(response_mode=framing), "big")
    server.fail_next_call(faults.HugeResult(size=size), tool="big")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            if framing == "json":
                result = await client.call_tool("big", {})
                assert len(result.content[0].text) == size  # type: ignore[union-attr]
            else:
                with pytest.raises(MCPError, match="exceeded the 1048576 byte limit") as raised:
                    await client.call_tool("big", {})
                assert raised.value.error.code == -32000
            again = await client.call_tool("big", {})
    assert again.content[0].text == "big ran"  # type: ignore[union-attr]


def test_the_new_faults_round_trip_through_json() -> None:
    """Each wait and size fault converts to JSON and back, and bad values are refused naming the field."""
    for fault in (
        faults.NeverAnswer(),
        faults.Dribble(bytes_per_s=10),
        faults.ProgressOnly(interval_s=0.2),
        faults.HugeResult(size=5),
        faults.StopReading(),
    ):
        assert faults.from_json(json.loads(json.dumps(fault.to_json()))) == fault
    with pytest.raises(ValueError, match="HugeResult size"):
        faults.HugeResult(size=64 * 1024 * 1024 + 1)
    with pytest.raises(ValueError, match="Dribble bytes_per_s"):
        faults.Dribble(bytes_per_s=0)
    with pytest.raises(ValueError, match="ProgressOnly interval_s"):
        faults.ProgressOnly(interval_s=0)
    assert faults.StopReading.stdio_only


def _content_type(framing: str) -> str:
    return "application/json" if framing == "json" else "text/event-stream"


def _messages(framing: str, body: bytes) -> list[dict[str, Any]]:
    if framing == "json":
        return [json.loads(body)]
    return [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]
