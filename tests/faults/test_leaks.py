"""Nothing leaks: a dropped, truncated or cut-short answer leaves no connection, task, thread or socket behind."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults

from ._support import LIMIT_S, Wire, call, sdk_client, socket_client, tools, until

pytestmark = pytest.mark.anyio

BROKEN_ANSWERS = [
    (faults.Drop(), "json"),
    (faults.Drop(after_execution=True), "sse"),
    (faults.TruncateBody(), "json"),
    (faults.TruncateBody(), "sse"),
    (faults.EndStream(), "json"),
    (faults.MalformedSse(), "sse"),
]


def _uvicorn_state(server: TestMcpServer) -> Any:
    """uvicorn's shared state of the running server: its open connections and its request tasks."""
    assert server._runner is not None
    return server._runner._server.server_state


def _idle(server: TestMcpServer) -> bool:
    state = _uvicorn_state(server)
    return not state.connections and not state.tasks


async def _refuses_connections(port: int) -> bool:
    try:
        with anyio.fail_after(LIMIT_S):
            stream = await anyio.connect_tcp("127.0.0.1", port)
    except OSError:
        return True
    await stream.aclose()
    return False


async def _break_one_call(server: TestMcpServer, fault: faults.Fault) -> None:
    server.fail_next_call(fault, tool="create")
    async with socket_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        try:
            await wire.post(call("create"))
        except httpx2.RemoteProtocolError:
            assert isinstance(fault, faults.Drop)


@pytest.mark.parametrize(("fault", "framing"), BROKEN_ANSWERS, ids=[f"{f!r}-{m}" for f, m in BROKEN_ANSWERS])
async def test_a_broken_answer_leaves_no_connection_or_task_behind(fault: faults.Fault, framing: str) -> None:
    """After a broken answer the server holds no connection or task; stopped, it leaves no task and a shut port."""
    tasks_before = asyncio.all_tasks()
    server = tools(TestMcpServer("leaks", response_mode=framing), "create")
    with anyio.fail_after(LIMIT_S):
        async with server:
            port = server.port
            await _break_one_call(server, fault)
            await until(lambda: _idle(server))
            after = await _after_one_good_call(server)
            await until(lambda: _idle(server))
        assert await _refuses_connections(port)
    assert after == "create ran"
    assert server.calls("create")[0].fault == fault
    assert asyncio.all_tasks() - tasks_before == set()


async def _after_one_good_call(server: TestMcpServer) -> str:
    async with socket_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        result = await wire.result(call("create", request_id=2))
    return str(result["content"][0]["text"])


async def test_a_thread_server_stops_whole_after_a_drop() -> None:
    """Served from a thread: after a Drop and stop(), its thread has ended, its socket is closed, its port refuses."""
    server = tools(TestMcpServer("leaks-thread"), "create")
    with anyio.fail_after(LIMIT_S):
        await anyio.to_thread.run_sync(server.start)
        runner = server._runner
        assert runner is not None
        port = server.port
        (thread,) = [t for t in threading.enumerate() if t.name == "mcp-testkit-server-leaks-thread"]
        try:
            await _break_one_call(server, faults.Drop(after_execution=True))
            await until(lambda: _idle(server))
        finally:
            await anyio.to_thread.run_sync(server.stop)
        assert await _refuses_connections(port)
    assert not thread.is_alive()
    assert thread not in threading.enumerate()
    assert runner.socket.fileno() == -1
    assert server.executions("create") == 1


async def test_the_sdk_client_dropped_mid_call_leaves_the_server_idle() -> None:
    """After the SDK client's connection fails on a Drop, the server holds no connection or task of it."""
    server = tools(TestMcpServer("leaks-sdk"), "create")
    server.fail_next_call(faults.Drop(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(Exception) as caught:  # noqa: PT011 - the group is checked below
                async with sdk_client(server) as client:
                    await client.call_tool("create", {})
            await until(lambda: _idle(server))
    assert caught.group_contains(httpx2.RemoteProtocolError)
    assert server.executions("create") == 0
