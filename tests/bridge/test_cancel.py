"""Cancellation (P10): a call the application abandons, or the bridge's own timeout ends, is cancelled at the
server the way its era says, never `initialize`; a late answer after the cancel is dropped and the next call works."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import anyio
import httpx2
import pytest
from cancellable import slow_server

from mcp_testkit import Record, TestMcpServer, faults
from mcp_testkit.bridge import MCPConnectionError, ToolPool

from .conftest import LIMIT_S, config_for

pytestmark = pytest.mark.anyio


def _server() -> tuple[TestMcpServer, threading.Event]:
    """A 'slow' read that waits until cancelled (setting an event once it runs) and a quick 'search'."""
    return slow_server(LIMIT_S)


def _pool(server: TestMcpServer, via: str, **options: Any) -> ToolPool:
    transport = httpx2.ASGITransport(app=server.asgi_app) if via == "asgi" else None
    url = "http://127.0.0.1/mcp" if via == "asgi" else None
    config = config_for(server, **options)
    if url is not None:
        config = dataclasses.replace(config, url=url)
    return ToolPool([config], transport=transport, cache=False)


def _how_cancelled(server: TestMcpServer, era: str) -> None:
    """The slow call was cancelled as `era` says, and nothing else was."""
    [call] = server.journal.assert_cancelled("slow")
    notes = server.journal.requests("notifications/cancelled")
    if era == "handshake":
        assert [note.cancels for note in notes] == [call.rpc_id]
        assert notes[0].session_id == call.session_id
    else:
        assert notes == []  # 2026-07-28 over HTTP: the closed stream is the cancel
        assert call.cancelled_by_client
    assert server.journal.cancelled() == [call]


@pytest.mark.parametrize("via", ["socket", "asgi"])
async def test_a_call_the_application_abandons_is_cancelled_as_its_era_says(era: str, via: str) -> None:
    """The application's cancel scope ends a call: the server is told (handshake: notifications/cancelled with
    the call's id on its session; 2026-07-28: the stream closed), and the next call works."""
    server, running = _server()
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with _pool(server, via, era=era) as pool:
                async with anyio.create_task_group() as group:
                    group.start_soon(pool.call, "t.slow", {})
                    assert await anyio.to_thread.run_sync(running.wait, LIMIT_S)
                    group.cancel_scope.cancel()
                assert await pool.call("t.search", {}) == "found"
            await anyio.to_thread.run_sync(
                lambda: server.journal.wait_for(lambda j: bool(j.cancelled("slow")), LIMIT_S)
            )
    _how_cancelled(server, era)


async def test_the_bridge_s_own_timeout_cancels_the_call(era: str) -> None:
    """A call that passes `timeout_s` is cancelled at the server before the bridge reports the timeout."""
    server, _running = _server()
    with anyio.fail_after(LIMIT_S):
        async with server, _pool(server, "socket", era=era, timeout_s=0.5, retry=0) as pool:
            with pytest.raises(MCPConnectionError, match=r"did not answer within 0\.5s"):
                await pool.call("t.slow", {})
            assert await pool.call("t.search", {}) == "found"
            await anyio.to_thread.run_sync(
                lambda: server.journal.wait_for(lambda j: bool(j.cancelled("slow")), LIMIT_S)
            )
    _how_cancelled(server, era)


def _done(record: Record) -> bool:
    """The server answered the request late (handshake), or stopped it at the closed stream (2026-07-28)."""
    return record.response is not None or record.cancelled_by_client


async def test_a_late_answer_after_the_cancel_is_dropped(era: str) -> None:
    """The server answers the abandoned call late anyway: the answer goes nowhere, the next calls get their own."""
    server = TestMcpServer()
    server.tool("search", read_only=True, answers=["first", "second", "third"])
    server.fail_next_call(faults.LateAnswer(seconds=0.5), tool="search")
    with anyio.fail_after(LIMIT_S):
        async with server, _pool(server, "socket", era=era) as pool:
            with anyio.move_on_after(0.2):
                await pool.call("t.search", {"q": "first"})
            assert await pool.call("t.search", {"q": "second"}) == "second"
            await anyio.to_thread.run_sync(
                lambda: server.journal.wait_for(lambda j: _done(j.calls("search")[0]), LIMIT_S)
            )
            assert await pool.call("t.search", {"q": "third"}) == "third"
    [first] = server.journal.assert_cancelled("search")
    assert first.arguments == {"q": "first"}
    assert server.executions("search") == 3


async def test_initialize_is_never_cancelled() -> None:
    """A connect abandoned while `initialize` waits sends no notifications/cancelled (the spec forbids it)."""
    server, _running = _server()
    server.inject(faults.Delay(seconds=1.0), method="initialize", times=1)
    with anyio.fail_after(LIMIT_S):
        async with server:
            with anyio.move_on_after(0.3):
                async with _pool(server, "socket", era="handshake", connect_retries=0):
                    pytest.fail("the connect should not have finished")
            async with _pool(server, "socket", era="handshake") as pool:
                assert await pool.call("t.search", {}) == "found"
    assert server.journal.requests("notifications/cancelled") == []
    assert server.journal.cancellations() == []
