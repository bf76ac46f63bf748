"""The facts an adapter declares for P11-P13 (connect_timeout_s, progress_timeout_s, max_result_bytes,
concurrency): read, checked, and what a property does without them."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_testkit import faults
from mcp_testkit.contract import PROPERTIES
from mcp_testkit.contract._errors import ContractError
from mcp_testkit.contract._facts import BridgeFacts
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
    """Declared facts are read as given; an adapter that declares none gets None for each."""
    facts = BridgeFacts.of(_Declared(connect_timeout_s=3, progress_timeout_s=4.5, max_result_bytes=10, concurrency=8))
    assert (facts.connect_timeout_s, facts.progress_timeout_s, facts.max_result_bytes, facts.concurrency) == (
        3.0,
        4.5,
        10,
        8,
    )
    bare = BridgeFacts.of(_Declared())
    assert (bare.connect_timeout_s, bare.progress_timeout_s, bare.max_result_bytes, bare.concurrency) == (None,) * 4


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"connect_timeout_s": 0}, "connect_timeout_s must be a positive number of seconds or None"),
        ({"progress_timeout_s": True}, "progress_timeout_s must be a positive number of seconds or None"),
        ({"max_result_bytes": 0}, "max_result_bytes must be an int >= 1 or None"),
        ({"concurrency": 1}, "concurrency must be an int >= 2 or None"),
    ],
)
def test_a_bad_declaration_is_an_error_of_the_adapter(declared: dict[str, Any], message: str) -> None:
    """A declaration of the wrong type or range is a ContractError naming the adapter and the attribute."""
    with pytest.raises(ContractError, match=rf"adapter 'declared': {message}"):
        BridgeFacts.of(_Declared(**declared))


def test_without_their_facts_p11_and_p13_do_not_apply_saying_what_is_missing() -> None:
    """P11 needs both timeouts, P13 a concurrency, P12 a size limit or a timeout; each names what is missing."""
    bare = BridgeFacts.of(_Declared(timeout_s=None))
    reasons = {pid: PROPERTIES[pid].needs(bare) for pid in ("P11", "P12", "P13")}  # type: ignore[misc]
    assert reasons == {
        "P11": "it needs the adapter to declare `timeout_s` and `connect_timeout_s` (the bridge's waits)",
        "P12": "it needs the adapter to declare `max_result_bytes` (the bridge's limit) or `timeout_s` (P11's bound)",
        "P13": "it needs the adapter to declare `concurrency` (how many calls may be in flight at once)",
    }


def test_p11_bounds_each_attempt_and_lets_declared_progress_extend_it() -> None:
    """A read may wait 1 + retry attempts, a write one; only ProgressOnly's wait stretches, to progress_timeout_s."""
    facts = BridgeFacts.of(_Declared(connect_timeout_s=2.0, progress_timeout_s=1.5))
    assert bound_s(facts, "call", faults.NeverAnswer(), "read") == 3 * 0.5
    assert bound_s(facts, "call", faults.NeverAnswer(), "write") == 0.5
    assert bound_s(facts, "call", faults.ProgressOnly(), "write") == 1.5
    assert bound_s(facts, "tools/list", faults.NeverAnswer(), "read") == 2.0
    without = BridgeFacts.of(_Declared(connect_timeout_s=2.0))
    assert bound_s(without, "call", faults.ProgressOnly(), "read") == 3 * 0.5
