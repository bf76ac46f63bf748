"""The contract in both protocol eras: which server each era's column runs against, the era an adapter is asked
to speak, "not applicable" and "fell back" as verdicts of their own, the stateless era's own rules (an empty
cursor is a page, a fallback after a failed probe is allowed), and the harness refusing a fault of another era."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from mcp_testkit import faults
from mcp_testkit.adapters import BridgeAdapter, Outcome, ReferenceBridgeAdapter
from mcp_testkit.bridge._stateless import StatelessSession
from mcp_testkit.contract import (
    PROPERTIES,
    BridgeFacts,
    ContractError,
    ContractHarness,
    PropertyResult,
    check_property,
    expected_kinds,
    resilience_suite,
    run_contract,
)


class _HandshakeOnly(ReferenceBridgeAdapter):
    """A bridge of the handshake era only, that cannot be asked for another: like every client before 2026-07-28."""

    name: ClassVar[str] = "handshake-only"
    eras = None  # type: ignore[assignment]

    def __init__(self, *, transport: Any = None) -> None:
        super().__init__(transport=transport, era="handshake")


class _Auto(ReferenceBridgeAdapter):
    """The reference bridge left in auto mode: it probes, and falls back where the spec says it may."""

    name: ClassVar[str] = "auto"
    eras = None  # type: ignore[assignment]


def test_each_era_has_its_server() -> None:
    """The handshake column serves the handshake era only (a server from before 2026-07-28); the stateless column
    serves both eras, as the SDK's own server does."""
    with ContractHarness(ReferenceBridgeAdapter) as handshake:
        assert handshake.server.eras == ("handshake",)
    with ContractHarness(ReferenceBridgeAdapter, era="stateless") as stateless:
        assert stateless.server.eras == ("handshake", "stateless")
    with pytest.raises(ValueError, match="era must be 'handshake' or 'stateless' \\(2026-07-28\\), not 'modern'"):
        ContractHarness(ReferenceBridgeAdapter, era="modern")


class _Recording:
    """A factory that records the keyword arguments it is called with, making adapters that declare `eras`."""

    def __init__(self, eras: Any) -> None:
        self.eras = eras
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **options: Any) -> BridgeAdapter:
        self.calls.append({key: value for key, value in options.items() if key != "transport"})
        adapter = ReferenceBridgeAdapter(transport=options.get("transport"), era=options.get("era", "auto"))
        adapter.eras = self.eras  # type: ignore[misc]
        return adapter


@pytest.mark.parametrize(
    ("eras", "asked"),
    [(("handshake", "stateless"), {"era": "stateless"}), (("handshake",), {}), (None, {})],
    ids=["declares-both", "declares-the-other", "declares-none"],
)
def test_an_adapter_is_asked_for_the_era_only_when_it_declares_it(eras: Any, asked: dict[str, str]) -> None:
    """The factory gets era= only for an era its adapter's `eras` names; otherwise it is called as before."""
    factory = _Recording(eras)
    with ContractHarness(factory, era="stateless") as harness:  # type: ignore[arg-type]
        facts = harness.facts()
        harness.adapter()
    declared = tuple(eras) if eras else None
    capabilities = frozenset({"approvals", "tool_cache", "oauth"})
    assert facts == BridgeFacts(
        2, 100, 0.5, "persistent", declared, "stateless", capabilities, 300.0, 5.0, None, 1024 * 1024, 16
    )
    assert factory.calls[0] == {}  # the first adapter says whether the factory takes era=
    assert factory.calls[-1] == asked


def test_bad_declared_eras_are_an_error_of_the_adapter() -> None:
    """An adapter whose `eras` is not a tuple of era names is an error verdict naming it, not a failure."""
    [result] = run_contract(_Recording("stateless"), properties=["P7"], eras=["stateless"])  # type: ignore[arg-type]
    assert result.status == "error"
    assert "eras must be None or a tuple of 'handshake' and 'stateless', not 'stateless'" in (
        result.counterexample or ""
    )


def test_a_property_of_another_era_is_not_applicable_never_held() -> None:
    """P5 in the stateless era and P5s in the handshake era are "not_applicable" (n/a), with no examples and a
    coverage line that says why; neither is `passed`."""
    results = run_contract(ReferenceBridgeAdapter, properties=["P5", "P5s"], max_examples=5)
    marks = {(r.property_id, r.era): (r.status, r.mark, r.passed, r.applies) for r in results}
    assert marks == {
        ("P5", "handshake"): ("passed", "holds", True, True),
        ("P5s", "handshake"): ("not_applicable", "n/a", False, False),
        ("P5", "stateless"): ("not_applicable", "n/a", False, False),
        ("P5s", "stateless"): ("passed", "holds", True, True),
    }
    skipped = [r for r in results if r.status == "not_applicable"]
    assert [r.examples for r in skipped] == [0, 0]
    assert skipped[0].coverage_line() == "no examples: it has no meaning in the handshake era"
    assert PROPERTIES["P5"].eras == ("handshake",)
    assert PROPERTIES["P5s"].eras == ("stateless",)


def test_a_bridge_of_the_handshake_era_falls_back_in_the_stateless_era() -> None:
    """A bridge that only speaks the handshake era gets "fell back" for every stateless-era property (n/a for P5 and
    P19, which have no meaning there),
    with the handshake it spoke; it still holds every property in the handshake era."""
    results = run_contract(_HandshakeOnly, max_examples=10)
    handshake = {r.property_id: r.status for r in results if r.era == "handshake"}
    stateless = {r.property_id: r.status for r in results if r.era == "stateless"}
    assert set(handshake.values()) == {"passed", "not_applicable"}
    assert stateless == {pid: "not_applicable" if pid in ("P5", "P19") else "fell_back" for pid in PROPERTIES}
    [first] = [r for r in results if (r.property_id, r.era) == ("P1", "stateless")]
    assert "the bridge spoke the handshake era to a server of both eras" in (first.counterexample or "")
    assert "initialize -> 200" in (first.counterexample or "")
    assert first.coverage_line() == "no examples: the bridge spoke the handshake era to the stateless column's server"


def test_the_pytest_suite_fails_a_bridge_that_falls_back() -> None:
    """resilience_suite makes a fallback a failing test that says so (not a ContractViolation), never a pass."""
    test = resilience_suite(_HandshakeOnly, max_examples=5, eras=["stateless"])
    with pytest.raises(pytest.fail.Exception, match="has no verdict: the bridge fell back to the handshake era"):
        test("P7", "stateless", None)


def _params(test: Any) -> dict[str, list[Any]]:
    [parametrize] = [mark for mark in test.pytestmark if mark.name == "parametrize"]
    return {param.id: [mark.name for mark in param.marks] for param in parametrize.args[1]}


def test_the_pytest_suite_has_a_case_per_property_and_era_and_expects_failures_per_era() -> None:
    """resilience_suite makes a case per property and era it applies to; expect_fail takes "P1" (every era) or
    "P1@stateless" (one), and refuses unknown properties and eras."""
    test = resilience_suite(ReferenceBridgeAdapter, expect_fail=["P5", "P1@stateless"])
    cases = _params(test)
    assert list(cases) == [
        *(f"{pid}-handshake" for pid in PROPERTIES if pid not in ("P5s", "P18")),
        *(f"{pid}-stateless" for pid in PROPERTIES if pid not in ("P5", "P19")),
    ]
    assert {case for case, marks in cases.items() if marks == ["xfail"]} == {"P5-handshake", "P1-stateless"}
    assert list(_params(resilience_suite(ReferenceBridgeAdapter, eras=["stateless"]))) == [
        f"{pid}-stateless" for pid in PROPERTIES if pid not in ("P5", "P19")
    ]
    with pytest.raises(ValueError, match=r"expect_fail names unknown properties \['P99'\]"):
        resilience_suite(ReferenceBridgeAdapter, expect_fail=["P99@stateless"])
    with pytest.raises(ValueError, match="the era after @ is 'handshake' or 'stateless'"):
        resilience_suite(ReferenceBridgeAdapter, expect_fail=["P1@2026-07-28"])


def test_an_empty_cursor_is_a_page_in_the_stateless_era(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that refuses an empty nextCursor, right in the handshake era, fails P1 in the stateless era, where
    "" is a legal cursor: the listing failed although no fault fired."""
    monkeypatch.setattr(StatelessSession, "empty_cursor_is_a_cursor", False)  # the handshake era's refusal
    [result] = run_contract(ReferenceBridgeAdapter, properties=["P1"], eras=["stateless"])
    assert result.status == "failed"
    text = result.counterexample or ""
    legal = "(an empty-string cursor is a legal page in the stateless era)"
    assert f"the listing failed although no fault fired {legal}" in text
    assert "EmptyCursor(page=1)" in text
    assert expected_kinds("tools/list", "-", faults.EmptyCursor(1), "stateless") == {"ok"}
    # In the handshake era "" may be read either way: the end (a whole listing) or an invalid cursor (a failure).
    assert expected_kinds("tools/list", "-", faults.EmptyCursor(1)) == {"ok", "connection_error"}


def test_a_fallback_after_a_failed_probe_is_allowed_at_connect() -> None:
    """In the stateless era a bridge in auto mode that falls back to the handshake when its probe fails holds P6:
    the connect that then succeeds is the spec's way on, as the journal shows."""
    [result] = run_contract(_Auto, properties=["P6"], eras=["stateless"])
    assert result.status == "passed", result.counterexample
    assert result.coverage["at server/discover"] >= 6


def test_the_stateless_columns_rows_of_p6() -> None:
    """What P6 expects of the stateless era's own faults, and of a bare 404, which has no session meaning there."""
    assert expected_kinds("call", "write", faults.HeaderMismatch(), "stateless") == {"connection_error"}
    assert expected_kinds("call", "read", faults.UnsupportedVersion(), "stateless") == {"connection_error"}
    both = {"tool_error", "connection_error"}
    assert expected_kinds("call", "write", faults.MissingCapability(), "stateless") == both
    assert expected_kinds("call", "read", faults.EraDowngrade(), "stateless") == {
        "ok",
        "connection_error",
        "outcome_unknown",
    }
    assert expected_kinds("call", "write", faults.EraDowngrade(), "stateless") == {"outcome_unknown"}
    either = {"connection_error", "outcome_unknown"}
    assert expected_kinds("call", "write", faults.HttpStatus(404), "stateless") == either
    assert expected_kinds("call", "write", faults.HttpStatus(404)) == {"connection_error"}
    assert expected_kinds("server/discover", "-", faults.HttpStatus(401), "stateless") == {"auth_error"}


def test_a_fault_of_another_era_injected_by_the_harness_is_an_error() -> None:
    """A session fault on a stateless request is a bug of the contract, not of the bridge: the example raises
    ContractError naming the fault, never a verdict on the bridge."""

    async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
        h.server.tool("read", read_only=True, returns="ok")
        h.server.inject(faults.LoseSession(), method="tools/call")
        await h.connect(adapter)
        await adapter.call("read", {})

    with ContractHarness(ReferenceBridgeAdapter, era="stateless") as harness, pytest.raises(ContractError) as raised:
        harness.run(example)
    assert "the contract harness injected a fault of another era: LoseSession()" in str(raised.value)


class _Hiding(ReferenceBridgeAdapter):
    """Reports every failed call as a success: a bridge that hides a lost answer."""

    name: ClassVar[str] = "hiding"

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await super().call(tool, arguments)
        return Outcome.ok("r") if outcome.kind != "ok" else outcome


def test_p5s_wants_a_write_whose_stream_broke_reported_as_unknown() -> None:
    """A bridge that reports ok for a write whose stream broke (it cannot know whether it ran) fails P5s at the
    first write case, although it never re-issued it."""
    with ContractHarness(_Hiding, era="stateless") as harness:
        result: PropertyResult = check_property(harness, "P5s", max_examples=12)
    assert result.status == "failed"
    text = result.counterexample or ""
    assert text.startswith("P5s counterexample (declared case 9 of 12)")
    assert "a write whose stream broke surfaced as ok, not outcome_unknown" in text
    assert "sent: 1" in text
