"""The proxy served in-process on a loop other than asyncio (trio): its upstream link is then an httpx2 client, which
must carry the same headers both ways as the proxy's own HTTP/1.1 client does."""

from __future__ import annotations

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
        # On trio the pooled client lives on this loop: it is closed here (ChaosProxy.stop() reaches asyncio's only).
        await proxy.asgi_app.link.aclose()
        await anyio.to_thread.run_sync(proxy.stop)
        await anyio.to_thread.run_sync(upstream.stop)
