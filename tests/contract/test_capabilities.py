"""Optional adapter capabilities: P8 (approvals) and P9 (tool cache) apply only to an adapter that declares
them, are "not applicable" (never "holds") otherwise, and a declaration the adapter cannot keep is an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from mcp_testkit.adapters import (
    ApprovalAdapter,
    BridgeAdapter,
    Outcome,
    PerCallReferenceAdapter,
    ReferenceBridgeAdapter,
    SdkClientAdapter,
    ToolCacheAdapter,
)
from mcp_testkit.contract import PROPERTIES, resilience_suite, run_contract


class _Minimal:
    """A bridge adapter with the core interface only, which holds nothing in particular."""

    name: ClassVar[str] = "minimal"
    page_limit = None
    retry = 0

    def __init__(self, *, transport: Any = None) -> None:
        self.transport = transport

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return Outcome.ok()

    async def list_tools(self) -> list[str]:
        return []

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        return Outcome.ok()

    def set_headers(self, headers: Mapping[str, str]) -> None:
        return None

    async def close(self) -> None:
        return None


class _Unable(_Minimal):
    """The minimal adapter, saying the contract cannot abandon or overlap its calls (as a driver does)."""

    cannot: ClassVar[frozenset[str]] = frozenset({"abandon_calls", "overlap_calls"})


def test_p8_p9_p14_and_p15_need_their_capability() -> None:
    """P8 needs "approvals", P9 and P14 "tool_cache", P15 "oauth"; every other property needs no capability (P10
    applies to every adapter that does not declare it cannot abandon a call)."""
    assert {pid: prop.requires for pid, prop in PROPERTIES.items() if prop.requires} == {
        "P8": "approvals",
        "P9": "tool_cache",
        "P14": "tool_cache",
        "P15": "oauth",
    }


def test_the_shipped_adapters_declare_what_their_bridges_have() -> None:
    """The reference bridge has all three; with a pool per call it keeps no paused call; the SDK client's adapter
    declares none. None of them declares the contract cannot abandon or overlap its calls: P10 and P13 apply to
    each."""
    assert ReferenceBridgeAdapter.capabilities == {"approvals", "tool_cache", "oauth"}
    assert PerCallReferenceAdapter.capabilities == {"tool_cache", "oauth"}
    assert getattr(SdkClientAdapter, "capabilities", frozenset()) == frozenset()
    shipped = (ReferenceBridgeAdapter, PerCallReferenceAdapter, SdkClientAdapter)
    assert not any(getattr(adapter, "cannot", ()) for adapter in shipped)
    assert isinstance(ReferenceBridgeAdapter(), ApprovalAdapter)
    assert isinstance(ReferenceBridgeAdapter(), ToolCacheAdapter)
    assert isinstance(_Minimal(), BridgeAdapter)
    assert not isinstance(_Minimal(), ApprovalAdapter)


def test_a_property_needing_a_capability_the_adapter_lacks_is_not_applicable() -> None:
    """Without the capability, P8 and P9 run nothing and are "not_applicable" (n/a) in both eras, with a note
    saying why, which the coverage line repeats."""
    results = run_contract(_Unable, properties=["P8", "P9", "P10"])
    assert [(r.property_id, r.era, r.status, r.mark, r.examples) for r in results] == [
        ("P8", "handshake", "not_applicable", "n/a", 0),
        ("P9", "handshake", "not_applicable", "n/a", 0),
        ("P10", "handshake", "not_applicable", "n/a", 0),
        ("P8", "stateless", "not_applicable", "n/a", 0),
        ("P9", "stateless", "not_applicable", "n/a", 0),
        ("P10", "stateless", "not_applicable", "n/a", 0),
    ]
    assert not any(r.passed or r.failed or r.error or r.applies for r in results)
    assert results[0].notes == ("it needs the 'approvals' capability, which the adapter does not declare",)
    assert results[1].coverage_line() == (
        "no examples: it needs the 'tool_cache' capability, which the adapter does not declare"
    )
    assert results[2].notes == ('its adapter cannot abandon a call (it declares cannot "abandon_calls")',)


def test_p10_is_checked_on_an_adapter_that_declares_nothing() -> None:
    """Fail closed: without `cannot`, P10 is checked on the minimal adapter, never n/a: it lists no tools, so P0
    fails and P10 is blocked in both eras (no verdict, never held), where `_Unable` gets n/a."""
    results = run_contract(_Minimal, properties=["P10"], max_examples=2)
    assert [(r.era, r.status) for r in results] == [("handshake", "blocked"), ("stateless", "blocked")]
    assert not any(r.not_applicable or r.passed for r in results)


def test_not_applicable_has_one_meaning_for_an_era_and_a_capability() -> None:
    """P5 in the stateless era (no meaning there) and P8 for an adapter without approvals (no capability) are the
    same verdict, n/a, never held, each with its own reason; the era decides before the adapter is asked."""
    results = run_contract(_Minimal, properties=["P5", "P8"], eras=["stateless"])
    assert [(r.property_id, r.status, r.mark, r.passed, r.not_applicable) for r in results] == [
        ("P5", "not_applicable", "n/a", False, True),
        ("P8", "not_applicable", "n/a", False, True),
    ]
    assert [r.notes for r in results] == [
        ("it has no meaning in the stateless era",),
        ("it needs the 'approvals' capability, which the adapter does not declare",),
    ]


@pytest.mark.parametrize(
    ("declared", "says"),
    [
        (("approvals",), "it declares 'approvals' but has no require_approval, approve, decline"),
        (("tool_cache",), "it declares 'tool_cache' but has no use_tool_cache, advance_cache_clock"),
        (("teleport",), "unknown capabilities ['teleport']; known: approvals, tool_cache, oauth, cancellation"),
        ("approvals", "capabilities must be a collection of names"),
    ],
)
def test_a_capability_the_adapter_cannot_keep_is_an_error(declared: Any, says: str) -> None:
    """Declaring a capability without its methods, or one that does not exist, is an error of the adapter."""
    factory = type("Declares", (_Minimal,), {"capabilities": declared})
    [result] = run_contract(factory, properties=["P1"], eras=["handshake"])
    assert result.status == "error"
    assert says in (result.counterexample or "")


def test_a_tool_cache_without_a_ttl_is_an_error() -> None:
    """An adapter declaring 'tool_cache' must say its cache_ttl_s: P9 is an error, not a verdict, without it."""

    class NoTtl(ReferenceBridgeAdapter):
        cache_ttl_s = 0.0

    [result] = run_contract(NoTtl, properties=["P9"], eras=["handshake"])
    assert result.status == "error"
    assert "with 'tool_cache', cache_ttl_s must be a positive number, not 0.0" in (result.counterexample or "")


def test_resilience_suite_skips_what_does_not_apply_saying_why() -> None:
    """In pytest a property that does not apply is skipped with its reason, neither passed nor failed."""
    test = resilience_suite(SdkClientAdapter, max_examples=1)
    said = r"in the stateless era does not apply: it needs the 'approvals' capability, which the adapter does not"
    with pytest.raises(pytest.skip.Exception, match=said):
        test("P8", "stateless", None)
