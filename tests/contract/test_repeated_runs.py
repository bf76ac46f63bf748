"""Running a property again and again on one harness costs the same each time: a run leaves nothing behind (a log
handler, a journal subscriber, a thread, a list that keeps growing) that makes the next run do more work. A user
running many property tests in one pytest process would pay for such a leak on every test after it."""

from __future__ import annotations

import gc
import logging
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import ContractHarness, PropertyResult, check_property

RUNS = 5
EXAMPLES = 16
TOLERANCE = 40
"""Function calls two runs may differ by. Repeated runs are derandomized and do the very same calls (0 apart when
measured); one journal subscriber or log handler left behind per run adds at least one call per request, which is
about 80 per run of P1 and 160 between runs two apart."""


def _grew(calls: list[int]) -> int:
    """How much every run after the third did beyond it. A leak makes each later run cost more than the one before,
    so the cheapest of them is still dearer than the third; one run made dearer by the machine (an event loop turn
    more while a socket was slow, another test's objects finalized) is not the cheapest and is not counted."""
    return min(calls[3:]) - calls[2]


def _counted(run: Callable[[], PropertyResult]) -> tuple[PropertyResult, int]:
    """The result of `run()` and how many Python and C functions it called."""
    calls = 0
    # Garbage left by earlier tests in this worker is collected now, not in the middle of a counted run, where its
    # finalizers would count as the run's calls.
    gc.collect()
    gc.disable()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        result = run()
    finally:
        sys.setprofile(None)
        gc.enable()
    return result, calls


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_repeated_runs_of_a_property_do_the_same_work(era: str) -> None:
    root_handlers = list(logging.getLogger().handlers)
    threads = set(threading.enumerate())
    calls: list[int] = []
    with ContractHarness(ReferenceBridgeAdapter, era=era) as harness:
        for _ in range(RUNS):
            result, count = _counted(lambda: check_property(harness, "P1", max_examples=EXAMPLES))
            assert result.passed, result.counterexample
            assert result.examples == EXAMPLES
            calls.append(count)
        assert logging.getLogger().handlers == root_handlers
    # The first runs warm caches (imports, Hypothesis' strategy cache); from the third on, each run is the same.
    assert _grew(calls) <= TOLERANCE, f"function calls per run grew: {calls}"
    assert not set(threading.enumerate()) - threads, "a run left a thread running"
