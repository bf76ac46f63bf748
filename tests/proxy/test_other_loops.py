"""The proxy served in-process on a loop other than asyncio (trio): its upstream link is then an httpx2 client, which
must carry the same headers both ways as the proxy's own HTTP/1.1 client does."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.proxy import ChaosProxy

from ._wire import ACCEPT, INIT

LIMIT_S = 60.0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_served_on_trio_the_proxy_forwards_through_httpx2(anyio_backend: str) -> None:
    upstream = TestMcpServer("upstream")
    upstream.tool("add", returns="add ran")
    await anyio.to_thread.run_sync(upstream.start)
    proxy = ChaosProxy(upstream.url, headers={"X-Upstream-Key": "k-1"})
    transport = httpx2.ASGITransport(app=proxy.asgi_app)
    try:
        with anyio.fail_after(LIMIT_S):
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                opened = await client.post("/mcp", json=INIT, headers=ACCEPT)
                assert opened.status_code == 200
                session = opened.headers["mcp-session-id"]  # the upstream's header, passed back
                headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {}}}
                answered = await client.post("/mcp", json=call, headers=headers)
                assert answered.status_code == 200
                assert answered.json()["result"]["content"] == [{"type": "text", "text": "add ran"}]
        seen = upstream.journal.calls("add")[0]
        assert seen.session_id == session
        assert seen.headers.get("x-upstream-key") == "k-1"  # the configured header reached the upstream
        assert proxy.journal.calls("add")[0].response["result"]["content"][0]["text"] == "add ran"
    finally:
        # The pooled client lives on this trio run: stop() from a worker thread closes it there (tests below).
        await anyio.to_thread.run_sync(proxy.stop)
        await anyio.to_thread.run_sync(upstream.stop)


def _connections_to(port: int) -> int:
    """Open TCP connections on this machine to 127.0.0.1:`port` (the upstream's), as the kernel lists them: the
    proxy's pooled ones, since nothing else here talks to that upstream."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    established = "01"
    return sum(1 for line in lines if line.split()[2].endswith(f":{port:04X}") and line.split()[3] == established)


async def _session_through(proxy: ChaosProxy) -> str:
    """A handshake session opened through the proxy served in-process on this loop; its id."""
    transport = httpx2.ASGITransport(app=proxy.asgi_app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        opened = await client.post("/mcp", json=INIT, headers=ACCEPT)
        assert opened.status_code == 200
        return opened.headers["mcp-session-id"]


@contextlib.asynccontextmanager
async def _session_on_trio() -> AsyncIterator[tuple[TestMcpServer, ChaosProxy, str]]:
    """An upstream, the proxy in front of it served in-process on this trio run, and a handshake session opened
    through it (the pool keeping its connection alive); both stopped on the way out, whatever the test did."""
    upstream = TestMcpServer("upstream")
    await anyio.to_thread.run_sync(upstream.start)
    proxy = ChaosProxy(upstream.url)
    try:
        with anyio.fail_after(LIMIT_S):
            session = await _session_through(proxy)
        assert _connections_to(upstream.port) >= 1  # the pool keeps its connection alive
        yield upstream, proxy, session
    finally:
        await anyio.to_thread.run_sync(proxy.stop)
        await anyio.to_thread.run_sync(upstream.stop)


def _last_request(upstream: TestMcpServer, session: str) -> str:
    return [r.http_method for r in upstream.journal.requests(session_id=session)][-1]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_stop_from_another_thread_closes_the_upstream_pool_on_trio(anyio_backend: str) -> None:
    """ChaosProxy.stop() from a worker thread, the proxy served in-process on trio: the session still open upstream
    is DELETEd and the pooled connection closed, on the trio run that made the pool (it used to be dropped unclosed,
    its connection left open until the garbage collector came by)."""
    async with _session_on_trio() as (upstream, proxy, session):
        with anyio.fail_after(LIMIT_S):
            await anyio.to_thread.run_sync(proxy.stop)
        assert _last_request(upstream, session) == "DELETE"
        assert _connections_to(upstream.port) == 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_stop_on_the_trio_thread_itself_closes_the_upstream_pool(anyio_backend: str) -> None:
    """ChaosProxy.stop() called synchronously on the trio run serving the proxy cannot wait on that run: it leaves
    the closing to a system task there, which DELETEs the open session and closes the pooled connection."""
    async with _session_on_trio() as (upstream, proxy, session):
        with anyio.fail_after(LIMIT_S):
            proxy.stop()  # returns at once: the system task runs once this task waits
            # The closing runs in a system task this test has no handle on, and the kernel's connection table sends
            # no event: look again until the connection is gone (bounded by fail_after).
            while _connections_to(upstream.port):  # noqa: ASYNC110
                await anyio.sleep(0.01)
        assert _last_request(upstream, session) == "DELETE"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["json", "sse"])
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_forwarded_answer_is_journaled_before_its_last_bytes_go_on(anyio_backend: str, mode: str) -> None:
    """When the client gets the last byte of a forwarded answer, the proxy's journal already says what it was (the
    call ran, its answer, the session opened): a test that reads the journal the moment it has its answer finds it
    settled, as with the fake. Seen here at the very ASGI message that carries the last bytes."""
    upstream = TestMcpServer("upstream", response_mode=mode)
    upstream.tool("add", returns="add ran")
    await anyio.to_thread.run_sync(upstream.start)
    proxy = ChaosProxy(upstream.url)
    at_last_byte: list[tuple[str | None, bool | None, bool]] = []

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        async def send_watching(message: Any) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                record = proxy.journal.records[-1]
                at_last_byte.append((record.rpc_method, record.executed, record.response is not None))
            await send(message)

        await proxy.asgi_app(scope, receive, send_watching)

    try:
        with anyio.fail_after(LIMIT_S):
            transport = httpx2.ASGITransport(app=watched)
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                opened = await client.post("/mcp", json=INIT, headers=ACCEPT)
                headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
                headers["mcp-protocol-version"] = "2025-06-18"
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {}}}
                assert (await client.post("/mcp", json=call, headers=headers)).status_code == 200
        assert at_last_byte == [("initialize", None, True), ("tools/call", True, True)]
    finally:
        await anyio.to_thread.run_sync(proxy.stop)
        await anyio.to_thread.run_sync(upstream.stop)
