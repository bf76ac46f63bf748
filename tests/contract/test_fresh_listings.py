"""P14, fresh listings: the reference bridge holds it in both eras over a socket and in-process, and a bridge with
no tool cache (the SDK client) gets `n/a`, never "holds"."""

from __future__ import annotations

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import run_contract


@pytest.mark.parametrize("transport", ["asgi", "socket"])
def test_the_reference_bridge_holds_p14_in_both_eras(transport: str) -> None:
    """Its cache gives way to the current listing after list_changed and past ttlMs; approvals read the server."""
    results = run_contract(ReferenceBridgeAdapter, properties=["P14"], max_examples=40, via=transport)
    assert [(r.era, r.status) for r in results] == [("handshake", "passed"), ("stateless", "passed")], [
        r.counterexample for r in results
    ]
    assert all(r.examples >= 40 for r in results)


def test_a_bridge_without_a_tool_cache_is_not_applicable_for_p14() -> None:
    """The SDK client keeps no listing between connects: P14 does not apply to it, and says why."""
    results = run_contract(SdkClientAdapter, properties=["P14"])
    assert [(r.era, r.status) for r in results] == [("handshake", "not_applicable"), ("stateless", "not_applicable")]
    assert results[0].notes == ("it needs the 'tool_cache' capability, which the adapter does not declare",)
