"""Tests of `mcp_testkit.contract`: the reference bridge (with one session, or one per call) holds P1-P7, the SDK
client's verdicts are what they are, the pytest suite and the state machine run as tests, a user adapter plugs in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import settings

from mcp_testkit.adapters import (
    BridgeAdapter,
    Outcome,
    PerCallReferenceAdapter,
    ReferenceBridgeAdapter,
    SdkClientAdapter,
)
from mcp_testkit.contract import (
    PROPERTIES,
    ContractHarness,
    PropertyResult,
    check_property,
    resilience_machine,
    resilience_suite,
    run_contract,
)

SDK_FAILS = {
    # property: what its counterexample names (the fault, or the tell-tale outcome)
    "P1": "DuplicateTool(page=1",
    "P5": "LoseSession()",
    "P6": "DuplicateTool(page=1",
}
SDK_HOLDS = ("P2", "P3", "P4", "P7")

MACHINE = settings(max_examples=50, stateful_step_count=20, deadline=None, database=None)


# -- the reference bridge --------------------------------------------------------------------------


@pytest.mark.parametrize("property_id", list(PROPERTIES))
def test_reference_holds_every_property_in_process(property_id: str) -> None:
    """The reference bridge holds each property over 200 in-process examples, declared cases included."""
    [result] = run_contract(ReferenceBridgeAdapter, max_examples=200, properties=[property_id])
    assert result.status == "passed", result.counterexample
    assert result.property_id == property_id
    assert result.declared >= 9
    assert result.examples >= result.declared
    assert result.notes == ()


def test_reference_holds_every_property_over_a_socket() -> None:
    """The reference bridge holds every property over a real 127.0.0.1 socket."""
    results = run_contract(ReferenceBridgeAdapter, max_examples=30, transport="socket")
    assert [r.property_id for r in results] == list(PROPERTIES)
    failed = {r.property_id: r.counterexample for r in results if not r.passed}
    assert not failed


def test_per_call_reference_holds_every_property_over_a_socket() -> None:
    """The per-call-session reference bridge holds P4 and P5 over a real socket too."""
    results = run_contract(PerCallReferenceAdapter, max_examples=20, properties=["P4", "P5"], transport="socket")
    assert [r.status for r in results] == ["passed", "passed"], [r.counterexample for r in results]


test_reference_contract = resilience_suite(ReferenceBridgeAdapter, max_examples=50)


# -- the SDK client ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_verdicts() -> dict[str, PropertyResult]:
    """The SDK client adapter's verdicts, from one in-process run of every property."""
    return {r.property_id: r for r in run_contract(SdkClientAdapter, max_examples=50)}


@pytest.mark.parametrize(("property_id", "names"), sorted(SDK_FAILS.items()))
def test_sdk_client_fails_with_a_counterexample(
    sdk_verdicts: dict[str, PropertyResult], property_id: str, names: str
) -> None:
    """The SDK client fails P1, P5 and P6, each with a counterexample naming the fault that broke it."""
    result = sdk_verdicts[property_id]
    assert result.status == "failed"
    assert result.counterexample is not None
    assert result.counterexample.startswith(f"{property_id} counterexample (declared case ")
    assert names in result.counterexample
    assert "requests the bridge sent:" in result.counterexample


def test_sdk_client_counterexamples_say_what_broke(sdk_verdicts: dict[str, PropertyResult]) -> None:
    """Each SDK counterexample states the broken guarantee in words, above the journal."""
    said = {pid: sdk_verdicts[pid].counterexample or "" for pid in SDK_FAILS}
    assert "loaded a wrong tool set (missing [], extra ['a'])" in said["P1"]
    assert "after the 404 (#5) the bridge did not start a new session" in said["P5"]
    assert "at connect (tools/list) surfaced as ok, not connection_error" in said["P6"]


@pytest.mark.parametrize("property_id", SDK_HOLDS)
def test_sdk_client_holds(sdk_verdicts: dict[str, PropertyResult], property_id: str) -> None:
    """The SDK client holds P2 (writes at most once), P3 (with its retry budget of 0), P4 and P7 (rendering)."""
    assert sdk_verdicts[property_id].passed, sdk_verdicts[property_id].counterexample


test_sdk_contract = resilience_suite(SdkClientAdapter, max_examples=50, expect_fail=sorted(SDK_FAILS))


# -- the state machine ------------------------------------------------------------------------------


TestReferenceMachine = resilience_machine(ReferenceBridgeAdapter).TestCase
TestReferenceMachine.settings = MACHINE
TestReferenceMachine.__doc__ = "Calls, faults, lost sessions, restarts and rotations keep the reference ledger sound."

TestSdkClientMachine = resilience_machine(SdkClientAdapter).TestCase
TestSdkClientMachine.settings = MACHINE
TestSdkClientMachine.__doc__ = "Calls, faults, lost sessions, restarts and rotations keep the SDK ledger sound."


# -- running and reporting ---------------------------------------------------------------------------


def test_run_contract_reports_progress_in_order() -> None:
    """run_contract calls progress once per property, in the order asked, with the same results it returns."""
    seen: list[PropertyResult] = []
    results = run_contract(ReferenceBridgeAdapter, max_examples=5, properties=["P7", "P1"], progress=seen.append)
    assert [r.property_id for r in results] == ["P7", "P1"]
    assert seen == results
    assert all(r.title == PROPERTIES[r.property_id].title for r in results)


def test_run_contract_refuses_unknown_properties() -> None:
    """run_contract names an unknown property and lists the known ones."""
    with pytest.raises(ValueError, match=r"unknown properties \['P10'\]; known: P1, P2"):
        run_contract(ReferenceBridgeAdapter, properties=["P10"])


def test_resilience_suite_refuses_unknown_expect_fail() -> None:
    """resilience_suite names an unknown property in expect_fail when it is built."""
    with pytest.raises(ValueError, match=r"expect_fail names unknown properties \['P0'\]"):
        resilience_suite(ReferenceBridgeAdapter, expect_fail=["P0"])


def test_harness_refuses_unknown_transport() -> None:
    """ContractHarness accepts only 'asgi' or 'socket'."""
    with pytest.raises(ValueError, match="transport must be 'asgi' or 'socket'"):
        ContractHarness(ReferenceBridgeAdapter, transport="stdio")


def test_check_property_returns_a_verdict_for_a_failing_bridge() -> None:
    """check_property returns a failed verdict with its counterexample instead of raising."""
    with ContractHarness(SdkClientAdapter) as harness:
        result = check_property(harness, "P5", max_examples=10)
    assert result.status == "failed"
    assert result.counterexample is not None
    assert "LoseSession()" in result.counterexample


# -- a user-written adapter -------------------------------------------------------------------------


class _CountingAdapter:
    """A user's adapter: it wraps the reference bridge and counts what the suite asks of it."""

    name = "counting"
    counts: dict[str, int] = {"connect": 0, "call": 0, "close": 0}  # noqa: RUF012 (shared by every instance, on purpose)

    def __init__(self, bridge: BridgeAdapter) -> None:
        self.bridge = bridge
        self.page_limit = bridge.page_limit
        self.retry = bridge.retry

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        self.counts["connect"] += 1
        return await self.bridge.connect(url, headers)

    async def list_tools(self) -> list[str]:
        return await self.bridge.list_tools()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        self.counts["call"] += 1
        return await self.bridge.call(tool, arguments)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self.bridge.set_headers(headers)

    async def close(self) -> None:
        self.counts["close"] += 1
        await self.bridge.close()


def make_counting_adapter(*, transport: Any = None) -> _CountingAdapter:
    """A factory function, not a class: the contract takes any callable that makes an adapter."""
    return _CountingAdapter(ReferenceBridgeAdapter(transport=transport, retry=1))


def test_user_written_adapter_runs_the_contract() -> None:
    """A hand-written adapter made by a plain function passes every property it declares what is needed for (it
    declares no capability, so P8 and P9 do not apply), and every adapter is closed."""
    _CountingAdapter.counts.update(connect=0, call=0, close=0)
    assert isinstance(make_counting_adapter(), BridgeAdapter)
    results = run_contract(make_counting_adapter, max_examples=20)
    assert {r.property_id: r.status for r in results if not r.passed} == {
        "P8": "not_applicable",
        "P9": "not_applicable",
    }, [r.counterexample for r in results if r.failed or r.error]
    counts = _CountingAdapter.counts
    assert counts["connect"] > 0
    assert counts["call"] > 0
    assert counts["close"] >= counts["connect"]
