"""`HugeResult(size=64 MiB)` is streamed: the serving process never holds the answer twice (a memory bound)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest

from ._support import LIMIT_S, Served

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process's memory from /proc (Linux)"),
]

SIZE = 64 * 1024 * 1024


def _kib(pid: int, field: str) -> int:
    """A memory figure of process `pid` from /proc/PID/status, in KiB (VmRSS now, VmHWM its peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.mark.parametrize("framing", ["json", "sse"])
async def test_a_64_mib_result_grows_the_server_by_less_than_twice_its_size(
    serve: Callable[..., Served], tmp_path: Path, framing: str
) -> None:
    """The server's peak RSS grows by less than 2 x 64 MiB while it sends a 64 MiB HugeResult to a reader."""
    scenario = tmp_path / "huge.json"
    rule = {"fault": {"type": "HugeResult", "size": SIZE}, "tool": "big", "nth": 2}
    tools = [{"name": "big", "returns": "b"}]
    scenario.write_text(json.dumps({"name": "huge", "response_mode": framing, "tools": tools, "faults": [rule]}))
    served = serve("--scenario", str(scenario))
    pid = served.process.pid
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "rss", "version": "1"}}
    received = 0
    with anyio.fail_after(LIMIT_S * 4):
        async with httpx2.AsyncClient(timeout=LIMIT_S * 4) as client:
            opened = await client.post(
                served.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=headers
            )
            headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "big", "arguments": {}}}
            warm = await client.post(served.url, json=call, headers=headers)  # the first call warms the server up
            assert warm.status_code == 200
            before = _kib(pid, "VmRSS")
            async with client.stream("POST", served.url, json={**call, "id": 2}, headers=headers) as response:
                async for piece in response.aiter_raw():
                    received += len(piece)
            peak = _kib(pid, "VmHWM")
    print(f"RSS growth {framing}: {(peak - before) // 1024} MiB (before {before // 1024} MiB)")
    assert received > SIZE
    assert (peak - before) * 1024 < 2 * SIZE, f"the server grew by {(peak - before) // 1024} MiB for a 64 MiB result"
