"""`record` bounds what the server sends as the chaos proxy does (it is that proxy): `max_upstream_head`,
`max_upstream_headers` and `max_upstream_body` from Python, `--max-upstream-head`, `--max-upstream-headers` and
`--max-upstream-body` on the command line. Over real sockets, in front of a `TestMcpServer` whose answer is big."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Cassette, record

from ._support import LIMIT_S
from .test_record import _start_record, _stop

pytestmark = pytest.mark.anyio
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}  # fmt: skip
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "big", "arguments": {}}}


def _big() -> TestMcpServer:
    server = TestMcpServer("big")
    server.tool("big", returns="b" * 3000)
    return server


async def _call(url: str) -> httpx2.Response:
    """Initialize a session at `url`, then call `big`; the call's answer."""
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
            opened = await http.post(url, json=INIT, headers=HEADERS)
            assert opened.status_code == 200, opened.text
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            return await http.post(url, json=CALL, headers={**HEADERS, **session})


async def test_record_bounds_the_upstreams_answer_as_the_proxy_does(tmp_path: Path) -> None:
    """`record(..., max_upstream_body=1024)`: an answer of 3 kB is refused naming the bound, the rest recorded."""
    out = tmp_path / "bounded.json"
    async with _big() as live, record(live.url, out=out, max_upstream_body=1024) as proxy_url:
        answered = await _call(proxy_url)
    assert "max_upstream_body" in answered.text, answered.text
    assert "b" * 1024 not in answered.text
    assert next(e.method for e in Cassette.load(out)) == "initialize"


async def test_record_command_takes_the_upstream_bounds(tmp_path: Path) -> None:
    """`mcp-testkit record --max-upstream-body 1024`: the same refusal, naming the option to raise it."""
    out = tmp_path / "bounded.json"
    async with _big() as live:
        args = ("--upstream", live.url, "--out", str(out), "--max-upstream-body", "1024", "--max-upstream-headers",
                "50", "--max-upstream-head", "8192")  # fmt: skip
        process, line = await anyio.to_thread.run_sync(lambda: _start_record(*args))
        try:
            answered = await _call(line.rsplit(" at ", 1)[1])
        finally:
            status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)
    assert status == 0, stderr
    assert "--max-upstream-body" in answered.text, answered.text
    assert "b" * 1024 not in answered.text
