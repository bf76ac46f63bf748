"""Mutation check: three deliberately broken variants of the reference bridge, each caught by the contract.

A property suite that cannot fail proves nothing. Each mutant breaks one documented rule; the suite
must catch it with a shrunk counterexample of a few steps that names the fault that exposed it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.bridge import _catalogue, _link
from mcp_testkit.bridge._session import RpcError, WireError
from mcp_testkit.contract import run_contract


async def _partial_listing(session: Any, config: Any) -> list[Any]:
    """The classic naive pager: follows cursors, and on any trouble keeps the tools read so far."""
    tools: list[Any] = []
    cursor = None
    for _ in range(config.max_tool_pages):
        try:
            page = await session.list_tools(cursor)
        except (WireError, RpcError):
            return tools
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    return tools


class _NeverRaised(Exception):
    """Stands in for the bridge's auth refusal, so a 401 falls through to the resend rules."""


def _requests_in(counterexample: str) -> int:
    return len(re.findall(r"^\s+#\d+ ", counterexample, re.M))


def _check(property_id: str) -> tuple[bool, str]:
    (result,) = run_contract(ReferenceBridgeAdapter, max_examples=300, properties=[property_id])
    return result.passed, result.counterexample or ""


def test_mutant_loading_a_partial_listing_fails_p1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that keeps the pages it read when the listing breaks is caught by P1 in a few steps."""
    monkeypatch.setattr(_link, "read_catalogue", _partial_listing)
    passed, counterexample = _check("P1")
    assert not passed
    assert "loaded a wrong tool set" in counterexample
    assert re.search(
        r"PageError|MalformedPage|InvalidCursor|EmptyCursor|RepeatCursor|StuckCursor|Duplicate", counterexample
    )
    assert _requests_in(counterexample) <= 8, counterexample


def test_mutant_resending_a_write_after_a_drop_fails_p2(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that treats every tool as safe to resend runs a write twice; P2 catches it in a few steps."""
    monkeypatch.setattr(_catalogue.BridgeTool, "resendable", property(lambda self: True))
    passed, counterexample = _check("P2")
    assert not passed
    assert "a write ran 2 times for one call" in counterexample
    assert "after_execution=True" in counterexample or "TruncateBody" in counterexample or "EndStream" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_retrying_a_401_fails_p4(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that resends a call the server refused with 401 is caught by P4 in a few steps."""
    monkeypatch.setattr(_link, "AuthRefused", _NeverRaised)
    passed, counterexample = _check("P4")
    assert not passed
    assert "status=401" in counterexample
    assert "did not surface as an auth error" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_unbroken_reference_bridge_passes_the_same_checks() -> None:
    """The same three properties hold for the reference bridge as shipped: the mutants' failures are theirs."""
    results = run_contract(ReferenceBridgeAdapter, max_examples=300, properties=["P1", "P2", "P4"])
    assert [(r.property_id, r.passed) for r in results] == [("P1", True), ("P2", True), ("P4", True)]
