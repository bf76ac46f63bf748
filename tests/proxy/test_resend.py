"""The proxy sends each request upstream at most once, and its journal's `executed` says what the upstream did.

Against an upstream written here that reads a request on a kept-alive connection and closes it without answering,
a POST is a lost answer (a 502, `executed` unknown), never sent again: on asyncio (the proxy's own HTTP/1.1
client), in-process on trio (an httpx2 client), and through `record`, which is the proxy. A fault of bytes that cuts
the client off leaves the upstream's answer read, so the journal says the upstream ran the call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit.cassettes import Cassette, record
from mcp_testkit.proxy import ChaosProxy

from ._raw_upstream import RawUpstream, answers_once_then_closes, serving
from ._wire import ACCEPT

LIMIT_S = 60.0
WRITES = 20
HEADERS = {**ACCEPT, "mcp-protocol-version": "2025-06-18"}


def _call(request_id: int, tool: str = "write") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


def _check_lost(statuses: list[int], proxy: ChaosProxy, up: RawUpstream) -> None:
    """Each write ran upstream at most once; each answered one is executed, each lost one a 502 of unknown outcome."""
    assert up.runs() == WRITES  # sent once each: the upstream read every one, and no one twice
    lost = statuses.count(502)
    assert lost >= WRITES // 2 - 1  # every other one went on a connection the upstream then closed
    assert set(statuses) == {200, 502}
    calls = proxy.journal.calls("write")
    assert [(r.status, r.executed) for r in calls] == [(s, True if s == 200 else None) for s in statuses]
    assert all("did not answer" in r.response["error"]["message"] for r in calls if r.status == 502)


def test_a_write_the_upstream_read_and_dropped_is_never_sent_again() -> None:
    """20 tools/call through the proxy, the upstream closing each reused connection after reading the request: 20
    runs upstream (not 40), every lost one answered 502 with a -32603 error and journaled `executed` None."""
    with serving(answers_once_then_closes) as (url, up), ChaosProxy(url) as proxy:
        with httpx2.Client(timeout=LIMIT_S) as client:
            answers = [client.post(proxy.url, json=_call(n), headers=HEADERS) for n in range(1, WRITES + 1)]
        for n, answered in enumerate(answers, 1):
            if answered.status_code == 502:
                error = answered.json()
                assert (error["id"], error["error"]["code"]) == (n, -32603)
                assert f"upstream {url} did not answer" in error["error"]["message"]
        _check_lost([answered.status_code for answered in answers], proxy, up)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio_a_write_the_upstream_read_and_dropped_is_never_sent_again(anyio_backend: str) -> None:
    """The same upstream, the proxy served in-process on trio (its link an httpx2 client, whose pool takes another
    connection only before writing a byte): 20 runs upstream, the lost ones journaled `executed` None."""
    with serving(answers_once_then_closes) as (url, up):
        proxy = ChaosProxy(url)
        transport = httpx2.ASGITransport(app=proxy.asgi_app)
        try:
            with anyio.fail_after(LIMIT_S):
                async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                    statuses = [
                        (await client.post("/mcp", json=_call(n), headers=HEADERS)).status_code
                        for n in range(1, WRITES + 1)
                    ]
            _check_lost(statuses, proxy, up)
        finally:
            await anyio.to_thread.run_sync(proxy.stop)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_through_record_n_writes_run_n_times(anyio_backend: str, tmp_path: Path) -> None:
    """`record` is the proxy: 5 writes through it against the closing upstream run 5 times upstream, and the
    cassette keeps the 5 exchanges, the lost ones with their error."""
    out = tmp_path / "writes.json"
    with serving(answers_once_then_closes) as (url, up):
        async with record(url, out=out) as proxy, httpx2.AsyncClient(timeout=LIMIT_S) as client:
            with anyio.fail_after(LIMIT_S):
                for n in range(1, 6):
                    await client.post(proxy, json=_call(n), headers=HEADERS)
        assert up.runs() == 5
    calls = Cassette.load(out).requests("tools/call")
    assert len(calls) == 5
    assert sum(1 for exchange in calls if (exchange.error or "").startswith("the upstream did not answer")) >= 2
