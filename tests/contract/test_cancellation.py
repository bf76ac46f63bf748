"""P10, cancellation: the reference bridge holds it in both eras over a socket and in-process, and the probe that
pins one real verdict: the `mcp` SDK `Client` (2.3.0) cancels a call its application's cancel scope ends."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from cancellable import slow_server
from mcp import Client

from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import run_contract

LIMIT_S = 20.0


@pytest.mark.parametrize("transport", ["asgi", "socket"])
def test_the_reference_bridge_holds_p10_in_both_eras(transport: str) -> None:
    """The reference bridge tells the server of every abandoned call as its era says, over either transport."""
    results = run_contract(ReferenceBridgeAdapter, properties=["P10"], max_examples=12, via=transport)
    assert [(r.era, r.status) for r in results] == [("handshake", "passed"), ("stateless", "passed")], [
        r.counterexample for r in results
    ]
    assert all(r.examples >= 12 for r in results)


@pytest.mark.parametrize(("factory", "era"), [(SdkClientAdapter.legacy, "handshake"), (SdkClientAdapter, "stateless")])
def test_the_sdk_client_adapter_holds_p10(factory: Any, era: str) -> None:
    """The SDK client, hosted in a task of its own, is abandoned through its host and cancels the call itself."""
    [result] = run_contract(factory, properties=["P10"], eras=[era], max_examples=12)
    assert result.status == "passed", result.counterexample


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "stateless")])
async def test_probe_the_sdk_client_cancels_a_call_its_cancel_scope_ends(mode: str, era: str) -> None:
    """Probe, mcp 2.3.0: the application's cancel scope ends `Client.call_tool`; the client sends
    notifications/cancelled with that call's id on its session (handshake), or closes the call's stream (2026-07-28)."""
    server, running = slow_server(LIMIT_S, quick="quick", returns="done")
    with anyio.fail_after(LIMIT_S):
        async with server, Client(server.url, mode=mode) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "slow", {})
                assert await anyio.to_thread.run_sync(running.wait, LIMIT_S)
                group.cancel_scope.cancel()
            assert (await client.call_tool("quick", {})).content[0].text == "done"  # type: ignore[union-attr]
            await anyio.to_thread.run_sync(
                lambda: server.journal.wait_for(lambda j: bool(j.cancelled("slow")), LIMIT_S)
            )
    [call] = server.journal.assert_cancelled("slow")
    assert call.era == era
    notes = server.journal.requests("notifications/cancelled")
    if era == "handshake":
        assert [(note.cancels, note.session_id) for note in notes] == [(call.rpc_id, call.session_id)]
    else:
        assert notes == []
        assert call.cancelled_by_client
