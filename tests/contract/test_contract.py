"""Tests of `mcp_testkit.contract`: the reference bridge (with one session, or one per call) holds every property
in both eras, the SDK client's verdicts in auto and legacy mode are what they are, the pytest suite and the state
machine run as tests, a user adapter plugs in."""

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
    # (property, era): what its counterexample names (the fault, or the tell-tale outcome)
    ("P1", "handshake"): "DuplicateTool(page=1",
    ("P5", "handshake"): "LoseSession()",
    # The server's -32600 "Session not found" in a 400 reads as nothing ran; P6 wants a 400 at a write unknown.
    ("P6", "handshake"): "Restart(unknown_session_status=400)",
    ("P1", "stateless"): "DuplicateTool(page=1",
    ("P6", "stateless"): "HttpStatus(status=401",
    # The SDK raises the one MCPError(-32603) for a 401 as for a 500: its caller cannot tell a refusal.
    ("P4", "handshake"): "its caller cannot tell a 401 or 403 from a 500",
    ("P4", "stateless"): "its caller cannot tell a 401 or 403 from a 500",
}
SDK_HOLDS = [
    *((pid, era) for era in ("handshake", "stateless") for pid in ("P2", "P3", "P7")),
    ("P5s", "stateless"),
]
APPLICABLE = [(pid, era) for era in ("handshake", "stateless") for pid, prop in PROPERTIES.items() if era in prop.eras]

MACHINE = settings(max_examples=50, stateful_step_count=20, deadline=None, database=None)


# -- the reference bridge --------------------------------------------------------------------------


@pytest.mark.parametrize(("property_id", "era"), APPLICABLE, ids=[f"{p}-{e}" for p, e in APPLICABLE])
def test_reference_holds_every_property_in_process(property_id: str, era: str) -> None:
    """The reference bridge holds each property in each era it applies to over 200 in-process examples."""
    [result] = run_contract(ReferenceBridgeAdapter, max_examples=200, properties=[property_id], eras=[era])
    assert result.status == "passed", result.counterexample
    assert (result.property_id, result.era) == (property_id, era)
    assert result.declared >= 9
    assert result.examples >= result.declared
    assert result.notes == ()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_reference_holds_every_property_over_a_socket(era: str) -> None:
    """The reference bridge holds every property in each era over a real 127.0.0.1 socket (on the real clock:
    each era's run waits out its declared timeouts, so the eras are two tests, each well within the time limit);
    P5 and P5s are "not applicable" in the era of the other."""
    results = run_contract(ReferenceBridgeAdapter, max_examples=30, via="socket", eras=[era])
    assert [(r.property_id, r.era) for r in results] == [(pid, era) for pid in PROPERTIES]
    statuses = {r.property_id: r.status for r in results}
    other = {"handshake": {"P5s", "P18"}, "stateless": {"P5", "P19"}}[era]
    assert {pid for pid, status in statuses.items() if status == "not_applicable"} == other
    failed = {r.property_id: r.counterexample for r in results if r.status not in ("passed", "not_applicable")}
    assert not failed


def test_per_call_reference_holds_every_property_over_a_socket() -> None:
    """The per-call-session reference bridge holds P4, P5 and P5s over a real socket too, in both eras."""
    results = run_contract(
        PerCallReferenceAdapter, max_examples=20, properties=["P4", "P5", "P5s"], via="socket"
    )
    expected = ["passed", "passed", "not_applicable", "passed", "not_applicable", "passed"]
    assert [r.status for r in results] == expected, [r.counterexample for r in results]


test_reference_contract = resilience_suite(ReferenceBridgeAdapter, max_examples=50)


# -- the SDK client ---------------------------------------------------------------------------------


Verdicts = dict[tuple[str, str], PropertyResult]


@pytest.fixture(scope="module")
def sdk_verdicts() -> Verdicts:
    """The SDK client adapter's verdicts in auto mode, from one in-process run of every property in both eras."""
    return {(r.property_id, r.era): r for r in run_contract(SdkClientAdapter, max_examples=50)}


@pytest.mark.parametrize(("key", "names"), sorted(SDK_FAILS.items()), ids=[f"{p}-{e}" for p, e in sorted(SDK_FAILS)])
def test_sdk_client_fails_with_a_counterexample(sdk_verdicts: Verdicts, key: tuple[str, str], names: str) -> None:
    """In auto mode the SDK client fails P1, P4, P5 and P6 in the handshake era and P1, P4 and P6 in the stateless
    era, each with a counterexample naming the fault that broke it."""
    result = sdk_verdicts[key]
    assert result.status == "failed"
    assert result.counterexample is not None
    assert result.counterexample.startswith(f"{key[0]} counterexample (declared case ")
    assert names in result.counterexample
    assert "requests the bridge sent:" in result.counterexample


def test_sdk_client_counterexamples_say_what_broke(sdk_verdicts: Verdicts) -> None:
    """Each SDK counterexample states the broken guarantee in words, above the journal."""
    said = {key: sdk_verdicts[key].counterexample or "" for key in SDK_FAILS}
    assert "loaded a wrong tool set (missing [], extra ['a'])" in said["P1", "handshake"]
    assert "after the 404 (#6) the bridge did not start a new session" in said["P5", "handshake"]
    assert "at a write call surfaced as connection_error, not outcome_unknown" in said["P6", "handshake"]
    assert "at a read call surfaced as outcome_unknown, not auth_error" in said["P6", "stateless"]


def test_sdk_client_in_auto_mode_probes_then_speaks_the_era_of_the_server(sdk_verdicts: Verdicts) -> None:
    """In auto mode the SDK client probes with server/discover: the handshake-era server makes it fall back to
    initialize; the server of both eras keeps it in 2026-07-28, with no initialize."""
    handshake = sdk_verdicts["P5", "handshake"].counterexample or ""
    stateless = sdk_verdicts["P1", "stateless"].counterexample or ""
    assert handshake.index("server/discover -> 200 error -32601") < handshake.index("initialize -> 200")
    assert "POST stateless server/discover -> 200" in stateless
    assert "initialize" not in stateless


@pytest.mark.parametrize(("property_id", "era"), SDK_HOLDS, ids=[f"{p}-{e}" for p, e in SDK_HOLDS])
def test_sdk_client_holds(sdk_verdicts: Verdicts, property_id: str, era: str) -> None:
    """The SDK client holds P2 (writes at most once), P3 (with its retry budget of 0) and P7 (rendering) in both
    eras, and P5s: with retry=0 it re-issues nothing after a broken stream, as it declares."""
    assert sdk_verdicts[property_id, era].passed, sdk_verdicts[property_id, era].counterexample


def test_sdk_client_in_legacy_mode_falls_back_in_the_stateless_era() -> None:
    """In legacy mode the SDK client never speaks 2026-07-28: every stateless-era property says it fell back, with
    the handshake it spoke instead, and none holds there."""
    results = run_contract(SdkClientAdapter.legacy, max_examples=5, properties=["P2", "P5", "P5s"], eras=["stateless"])
    assert [(r.property_id, r.status, r.mark) for r in results] == [
        ("P2", "fell_back", "fell back"),
        ("P5", "not_applicable", "n/a"),
        ("P5s", "fell_back", "fell back"),
    ]
    assert not any(r.passed for r in results)
    text = results[0].counterexample or ""
    assert text.startswith("the bridge spoke the handshake era to a server of both eras")
    assert "initialize -> 200" in text
    assert "server/discover" not in text
    assert SdkClientAdapter.legacy().name == "sdk-client (legacy)"
    assert SdkClientAdapter().name == SdkClientAdapter.name == "sdk-client (auto)"


test_sdk_contract = resilience_suite(SdkClientAdapter, max_examples=50, expect_fail=["P1", "P4", "P5", "P6", "P13"])


# -- the state machine ------------------------------------------------------------------------------


TestReferenceMachine = resilience_machine(ReferenceBridgeAdapter).TestCase
TestReferenceMachine.settings = MACHINE
TestReferenceMachine.__doc__ = "Calls, faults, lost sessions, restarts and rotations keep the reference ledger sound."

TestSdkClientMachine = resilience_machine(SdkClientAdapter).TestCase
TestSdkClientMachine.settings = MACHINE
TestSdkClientMachine.__doc__ = "Calls, faults, lost sessions, restarts and rotations keep the SDK ledger sound."

TestStatelessReferenceMachine = resilience_machine(ReferenceBridgeAdapter, era="stateless").TestCase
TestStatelessReferenceMachine.settings = MACHINE
TestStatelessReferenceMachine.__doc__ = "Calls, 2026-07-28 faults and rotations keep the reference ledger sound."

TestStatelessSdkClientMachine = resilience_machine(SdkClientAdapter, era="stateless").TestCase
TestStatelessSdkClientMachine.settings = MACHINE
TestStatelessSdkClientMachine.__doc__ = "Calls, 2026-07-28 faults and rotations keep the auto-mode SDK ledger sound."


# -- running and reporting ---------------------------------------------------------------------------


def test_run_contract_reports_progress_in_order() -> None:
    """run_contract calls progress once per property, in the order asked, with the same results it returns."""
    seen: list[PropertyResult] = []
    results = run_contract(ReferenceBridgeAdapter, max_examples=5, properties=["P7", "P1"], progress=seen.append)
    assert [(r.property_id, r.era) for r in results] == [
        ("P7", "handshake"),
        ("P1", "handshake"),
        ("P7", "stateless"),
        ("P1", "stateless"),
    ]
    assert seen == results
    assert all(r.title == PROPERTIES[r.property_id].title for r in results)


def test_run_contract_refuses_unknown_properties() -> None:
    """run_contract names an unknown property and lists the known ones."""
    known = "P0, P1, P2, P3, P4, P5, P5s, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P18, P19"
    with pytest.raises(ValueError, match=rf"unknown properties \['P99'\]; known: {known}"):
        run_contract(ReferenceBridgeAdapter, properties=["P99"])


@pytest.mark.parametrize(
    ("eras", "message"),
    [("stateless", "not the string 'stateless'"), ([], r"not \(\)"), (["2026-07-28"], "one or both of")],
    ids=["a-string", "none", "a-version"],
)
def test_run_contract_refuses_bad_eras(eras: Any, message: str) -> None:
    """run_contract takes a list of era names and says what is wrong with anything else."""
    with pytest.raises(ValueError, match=message):
        run_contract(ReferenceBridgeAdapter, eras=eras)


def test_resilience_suite_refuses_unknown_expect_fail() -> None:
    """resilience_suite names an unknown property in expect_fail when it is built."""
    with pytest.raises(ValueError, match=r"expect_fail names unknown properties \['P99'\]"):
        resilience_suite(ReferenceBridgeAdapter, expect_fail=["P99"])


def test_harness_refuses_unknown_transport() -> None:
    """ContractHarness accepts only via='asgi' or via='socket'."""
    with pytest.raises(ValueError, match="via must be 'asgi' or 'socket'"):
        ContractHarness(ReferenceBridgeAdapter, via="stdio")


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
    """A hand-written adapter made by a plain function, declaring nothing but its retry and page limit, passes every
    property but those needing a capability (P8, P9, P14, P15 do not apply): P10-P13 are checked on their defaults
    (fail closed), and every adapter is closed."""
    _CountingAdapter.counts.update(connect=0, call=0, close=0)
    assert isinstance(make_counting_adapter(), BridgeAdapter)
    results = run_contract(make_counting_adapter, max_examples=20)
    not_held = {(r.property_id, r.era): r.status for r in results if not r.passed}
    assert not_held == {
        ("P5s", "handshake"): "not_applicable",
        ("P5", "stateless"): "not_applicable",
        ("P18", "handshake"): "not_applicable",
        ("P19", "stateless"): "not_applicable",
        **{
            (pid, era): "not_applicable"
            for pid in ("P8", "P9", "P14", "P15")
            for era in ("handshake", "stateless")
        },
    }, [r.counterexample for r in results if r.failed or r.error]
    counts = _CountingAdapter.counts
    assert counts["connect"] > 0
    assert counts["call"] > 0
    assert counts["close"] >= counts["connect"]
