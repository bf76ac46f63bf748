"""Faults by chance through the proxy: `inject(..., probability=, seed=)` as on `TestMcpServer`, so that a soak run
in front of a real server hits the same requests again with the same seed."""

from __future__ import annotations

import httpx2

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy

from ._wire import open_session, request

LIMIT_S = 60.0
CALL = {"name": "add", "arguments": {}}


def _soak(seed: int) -> list[int]:
    """The numbers of the calls (1 to 40) that a 0.25-probability ErrorResult hit, through a new proxy."""
    upstream = TestMcpServer("upstream")
    upstream.tool("add", returns="add ran")
    with upstream, ChaosProxy(upstream.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        rule = proxy.inject(faults.ErrorResult("soaked"), method="tools/call", probability=0.25, seed=seed)
        assert rule.seed == seed
        session = open_session(client, proxy.url)
        hit = []
        for n in range(1, 41):
            result = request(client, proxy.url, session, "tools/call", CALL, n).json()["result"]
            if result.get("isError"):
                hit.append(n)
        assert len(upstream.journal.requests("tools/call")) == 40 - len(hit)  # a hit call never reached it
        return hit


def test_a_seeded_chance_hits_the_same_calls_again() -> None:
    first, again, other = _soak(7), _soak(7), _soak(8)
    assert first == again
    assert 0 < len(first) < 40
    assert other != first
