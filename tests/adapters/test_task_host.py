"""`TaskHost`: calls run at once in the bridge's own task, and a connect its caller abandons leaves the caller's
cancel scopes as they were."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.adapters import SdkClientAdapter

LIMIT_S = 20.0

pytestmark = pytest.mark.anyio


async def test_calls_overlap_in_the_bridge() -> None:
    """Four calls made at once are in flight at the server together (P13 reaches the bridge, not a queue)."""
    in_flight = [0, 0]  # now, most
    release = anyio.Event()

    async def echo(arguments: dict[str, Any]) -> str:
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        if in_flight[0] == 4:
            release.set()
        await release.wait()
        in_flight[0] -= 1
        return f"answer {arguments['n']}"

    async with TestMcpServer() as server:
        server.tool("echo", read_only=True, returns=echo)
        adapter = SdkClientAdapter(timeout_s=5.0)
        outcomes: dict[int, Any] = {}
        with anyio.fail_after(LIMIT_S):
            assert (await adapter.connect(server.url, {})).kind == "ok"
            try:

                async def one(n: int) -> None:
                    outcomes[n] = await adapter.call("echo", {"n": n})

                async with anyio.create_task_group() as group:
                    for n in range(4):
                        group.start_soon(one, n)
            finally:
                await adapter.close()
    assert in_flight[1] == 4
    assert {n: (o.kind, f"answer {n}" in (o.text or "")) for n, o in outcomes.items()} == {
        n: ("ok", True) for n in range(4)
    }


async def test_an_abandoned_connect_leaves_the_callers_scopes_intact() -> None:
    """A connect whose initialize the server never answers, abandoned by the caller's deadline, ends the bridge's
    task and leaves the caller's cancel scopes intact: the caller goes on, closes, and connects again."""
    async with TestMcpServer() as server:
        server.tool("read", read_only=True, returns="r")
        server.inject(faults.NeverAnswer(), method="initialize", times=1)
        adapter = SdkClientAdapter.legacy(timeout_s=5.0)
        with anyio.fail_after(LIMIT_S):
            with anyio.move_on_after(0.5) as scope:
                await adapter.connect(server.url, {})
            assert scope.cancelled_caught
            await adapter.close()
            again = SdkClientAdapter.legacy(timeout_s=5.0)
            try:
                assert (await again.connect(server.url, {})).kind == "ok"
                assert (await again.call("read", {})).kind == "ok"
            finally:
                await again.close()
