"""The facts an adapter declares for P11-P13 (connect_timeout_s, progress_timeout_s, max_result_bytes,
concurrency) and what it says the contract cannot do (`cannot`): read, checked, and the defaults a property
uses without them (fail closed: an undeclared number is never a reason for n/a)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_testkit import faults
from mcp_testkit.contract import PROPERTIES
from mcp_testkit.contract._errors import ContractError
from mcp_testkit.contract._facts import DEFAULT_CONCURRENCY, DEFAULT_WAIT_S, BridgeFacts
from mcp_testkit.contract._properties.p11_bounded_waits import bound_s


class _Declared:
    """An adapter's declarations only: what `BridgeFacts.of` reads."""

    name = "declared"
    retry = 2
    page_limit = None
    timeout_s = 0.5

    def __init__(self, **declared: Any) -> None:
        for key, value in declared.items():
            setattr(self, key, value)


def test_the_facts_are_read_with_none_as_not_declared() -> None:
    """Declared facts are read as given; an adapter that declares none gets None for each wait and size, and the
    contract's default concurrency (it can overlap calls unless it says it cannot)."""
    facts = BridgeFacts.of(_Declared(connect_timeout_s=3, progress_timeout_s=4.5, max_result_bytes=10, concurrency=8))
    assert (facts.connect_timeout_s, facts.progress_timeout_s, facts.max_result_bytes, facts.concurrency) == (
        3.0,
        4.5,
        10,
        8,
    )
    bare = BridgeFacts.of(_Declared())
    assert (bare.connect_timeout_s, bare.progress_timeout_s, bare.max_result_bytes) == (None,) * 3
    assert bare.concurrency == DEFAULT_CONCURRENCY
    assert BridgeFacts.of(_Declared(cannot=("overlap_calls",))).concurrency is None


def test_undeclared_waits_fall_back_to_timeout_s_then_to_the_contracts_default() -> None:
    """connect_timeout_s falls back to the listing's 1 + retry attempts of timeout_s; with no timeout_s either, each
    request may wait DEFAULT_WAIT_S."""
    only_timeout = BridgeFacts.of(_Declared())
    assert (only_timeout.wait_s, only_timeout.connect_wait_s) == (0.5, 3 * 0.5)
    nothing = BridgeFacts.of(_Declared(timeout_s=None))
    assert (nothing.wait_s, nothing.connect_wait_s) == (DEFAULT_WAIT_S, 3 * DEFAULT_WAIT_S)
    assert bound_s(nothing, "call", faults.NeverAnswer(), "write") == DEFAULT_WAIT_S
    assert bound_s(nothing, "initialize", faults.NeverAnswer(), "read") == 3 * DEFAULT_WAIT_S


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"connect_timeout_s": 0}, "connect_timeout_s must be a positive number of seconds or None"),
        ({"progress_timeout_s": True}, "progress_timeout_s must be a positive number of seconds or None"),
        ({"max_result_bytes": 0}, "max_result_bytes must be an int >= 1 or None"),
        ({"concurrency": 1}, "concurrency must be an int >= 2 or None"),
        ({"cannot": "abandon_calls"}, "cannot must be a collection of names"),
        ({"cannot": ("abandon",)}, r"unknown names in cannot \['abandon'\]; known: abandon_calls, overlap_calls"),
    ],
)
def test_a_bad_declaration_is_an_error_of_the_adapter(declared: dict[str, Any], message: str) -> None:
    """A declaration of the wrong type or range is a ContractError naming the adapter and the attribute."""
    with pytest.raises(ContractError, match=rf"adapter 'declared': {message}"):
        BridgeFacts.of(_Declared(**declared))


def test_without_declarations_p10_to_p13_apply_and_only_cannot_takes_them_away() -> None:
    """An adapter that declares nothing but its retry and page limit gets P10-P13 (defaults, not n/a); one that says
    the contract cannot abandon or overlap its calls gets P10 and P13 as n/a, each naming that declaration."""
    bare = BridgeFacts.of(_Declared(timeout_s=None))
    needs = {pid: PROPERTIES[pid].needs for pid in ("P10", "P11", "P12", "P13")}
    assert {pid: need(bare) if need is not None else None for pid, need in needs.items()} == dict.fromkeys(needs)
    assert all(PROPERTIES[pid].requires is None for pid in needs)
    unable = BridgeFacts.of(_Declared(cannot=("abandon_calls", "overlap_calls")))
    reasons = {pid: need(unable) for pid, need in needs.items() if need is not None}
    assert reasons["P10"] is not None
    assert "abandon_calls" in reasons["P10"]
    assert reasons["P13"] is not None
    assert "overlap_calls" in reasons["P13"]
    assert reasons.get("P12") is None
    assert needs["P11"] is None


def test_p11_bounds_each_attempt_and_lets_declared_progress_extend_it() -> None:
    """A read may wait 1 + retry attempts, a write one; only ProgressOnly's wait stretches, to progress_timeout_s."""
    facts = BridgeFacts.of(_Declared(connect_timeout_s=2.0, progress_timeout_s=1.5))
    assert bound_s(facts, "call", faults.NeverAnswer(), "read") == 3 * 0.5
    assert bound_s(facts, "call", faults.NeverAnswer(), "write") == 0.5
    assert bound_s(facts, "call", faults.ProgressOnly(), "write") == 1.5
    assert bound_s(facts, "tools/list", faults.NeverAnswer(), "read") == 2.0
    without = BridgeFacts.of(_Declared(connect_timeout_s=2.0))
    assert bound_s(without, "call", faults.ProgressOnly(), "read") == 3 * 0.5
