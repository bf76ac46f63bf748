"""Virtual time for in-process examples (issue 35): the event loop skips what nothing can happen in, a bridge whose
clock is not the loop's is found out and run on the real clock, and a failure is confirmed on the real clock before
it is reported."""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.to_thread
import pytest

from mcp_testkit import ReferenceBridgeAdapter, run_contract
from mcp_testkit.adapters import BridgeAdapter, Outcome
from mcp_testkit.contract import ContractHarness
from mcp_testkit.contract._virtual_time import REAL_WAIT_LIMIT_S, SkippingEventLoop


def test_an_example_waiting_on_a_timer_skips_the_wait() -> None:
    """A 30-second sleep in an in-process example moves the loop's clock by 30 s and skips them: the loop's time
    says they passed, and `skipped_s` counts what was not waited."""
    seen: dict[str, float] = {}

    async def example(h: Any, adapter: BridgeAdapter) -> None:
        seen["before"] = anyio.current_time()
        await anyio.sleep(30)
        seen["after"] = anyio.current_time()

    with ContractHarness(ReferenceBridgeAdapter) as harness:
        assert harness.clock == "virtual"
        harness.run(example, timeout_s=60)
        clock = harness.loop.clock
        assert clock is not None
        assert seen["after"] - seen["before"] >= 30
        assert clock.skipped_s >= 29
        assert clock.clock_dependence() is None


def test_over_a_socket_the_clock_is_the_real_one() -> None:
    """`via="socket"` runs on the real clock (the server keeps its own, in its thread); asking for virtual time
    there is refused, naming why."""
    assert ContractHarness(ReferenceBridgeAdapter, via="socket").clock == "real"
    assert ContractHarness(ReferenceBridgeAdapter, clock="real").clock == "real"
    with pytest.raises(ValueError, match="over a socket the server keeps the real clock"):
        ContractHarness(ReferenceBridgeAdapter, via="socket", clock="virtual")


def test_a_thread_at_work_holds_the_loop_back() -> None:
    """While a thread runs code (here `time.sleep`), the loop does not skip past it: it waits on the real clock and
    says, once the wait passed its limit, that the example depends on threads."""
    loop = SkippingEventLoop()
    try:
        loop.watch()

        async def main() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(anyio.sleep, 30)  # a timer the loop could skip to...
                await anyio.to_thread.run_sync(time.sleep, REAL_WAIT_LIMIT_S + 0.2)  # ...but a thread is at work
                group.cancel_scope.cancel()

        loop.run_until_complete(main())
        assert loop.skips == 0, "the loop skipped to its timer while the thread still worked"
        assert loop.real_waits_s > REAL_WAIT_LIMIT_S
        reason = loop.clock_dependence()
        assert reason is not None
        assert "threads" in reason
    finally:
        loop.close()


class _SleepsInAThread(ReferenceBridgeAdapter):
    """The reference bridge, pausing before its first call in a thread (`time.sleep`), as a bridge with a blocking
    client library does (once: the rest of the run need not wait it again)."""

    slept = False

    async def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        if not _SleepsInAThread.slept:
            _SleepsInAThread.slept = True
            await anyio.to_thread.run_sync(time.sleep, REAL_WAIT_LIMIT_S + 0.1)
        return await super().call(tool, arguments)


def test_a_bridge_sleeping_in_a_thread_is_found_out_and_run_on_the_real_clock() -> None:
    """A bridge that waits in a thread gets its verdict on the real clock, and the result says why."""
    _SleepsInAThread.slept = False
    [result] = run_contract(_SleepsInAThread, eras=["handshake"], properties=["P7"], max_examples=2)
    assert result.status == "passed", result.counterexample
    assert any("ran on the real clock" in note and "threads" in note for note in result.notes), result.notes


class _TrustsItsOwnClock(ReferenceBridgeAdapter):
    """A bridge that paces itself by `time.monotonic()`: it waits 1 s on the loop, and renders a result wrong
    unless the real clock agrees that the second passed. On virtual time the wait passes in no real time, so the
    two clocks disagree by the second; on the real clock they agree, however slow the machine."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        real, loop = time.monotonic(), anyio.current_time()
        await anyio.sleep(1)
        outcome = await super().call(tool, arguments)
        behind = (anyio.current_time() - loop) - (time.monotonic() - real)
        if behind > 0.5 and outcome.kind == "ok":
            return Outcome.ok("rendered too soon")
        return outcome


def test_a_failure_found_only_in_virtual_time_is_an_error_not_a_verdict() -> None:
    """A counterexample that does not fail again on the real clock is reported as an `error` saying it depends on
    virtual time, never as a failure of the bridge."""
    [result] = run_contract(
        _TrustsItsOwnClock, eras=["handshake"], properties=["P7"], max_examples=3, declared_cases=False
    )
    assert result.status == "error", (result.status, result.counterexample)
    assert "depends on virtual time" in (result.counterexample or "")
    assert any("did not reproduce on the real clock" in note for note in result.notes)


def test_on_the_real_clock_the_same_bridge_is_judged_as_it_behaves_there() -> None:
    """With `clock="real"` each wait takes its second on the real clock, the bridge renders right, and its drawn
    examples hold: the error above was virtual time's, as it said."""
    [result] = run_contract(
        _TrustsItsOwnClock, eras=["handshake"], properties=["P7"], max_examples=2, declared_cases=False, clock="real"
    )
    assert result.status == "passed", result.counterexample
