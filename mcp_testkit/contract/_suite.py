"""`resilience_suite`: the contract as pytest tests, one per property and era, each verdict turned into what pytest
reports: a pass, a failure, an expected failure (`expect_fail`), or a skip where there is no verdict."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcp_testkit._renamed import renamed_keywords
from mcp_testkit._wire.eras import ERAS, named_eras
from mcp_testkit.contract._database import example_database
from mcp_testkit.contract._errors import ContractError, ContractViolation
from mcp_testkit.contract._harness import ContractHarness
from mcp_testkit.contract._hypothesis_events import statistics_for
from mcp_testkit.contract._keep import failure_keeper
from mcp_testkit.contract._properties import PROPERTIES
from mcp_testkit.contract._run import check_property
from mcp_testkit.contract._verdict import CONNECTS

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["resilience_suite"]


@renamed_keywords(example_timeout="example_timeout_s", budget="budget_s", transport="via")
def resilience_suite(
    factory: AdapterFactory,
    *,
    max_examples: int = 100,
    eras: Sequence[str] = ERAS,
    via: str = "asgi",
    expect_fail: Sequence[str] = (),
    example_timeout_s: float | None = None,
    budget_s: float | None = None,
    clock: str | None = None,
    database: object = None,
    keep_failures: str | os.PathLike[str] | None = None,
) -> Callable[..., None]:
    """A pytest test, one case per property and era it applies to: `test_my_bridge = resilience_suite(MyAdapter)`.

    The cases are named `P1-handshake`, `P1-stateless`, ..., `P5-handshake`, `P5s-stateless`.
    Properties named in `expect_fail`, as "P1" (in every era) or "P1@stateless" (in one), are marked
    `xfail(strict=True)` for a `ContractViolation`: the suite then documents which guarantees a bridge
    does not give, and tells you when it starts to. A bridge that falls back to the handshake era in
    the stateless era fails there with `pytest.fail` saying it fell back, expected to fail or not: a
    fallback is never an xfail (check such a bridge with `eras=("handshake",)`). A property that needs
    a capability the adapter does not declare (P8, P9) is skipped, with the reason: it is not held
    either. A hang fails its test with `pytest.fail` (never an xfail: it says nothing of the property's
    promise). Where the bridge fails P0 (it cannot connect to a valid server) in an era, every other test of
    the era is blocked: it fails with `pytest.fail` naming P0, or, when P0 is in `expect_fail` for that era,
    is an xfail (the blocked properties are then known not to be checked; an xfail, like every expected
    failure, is never a pass). An error of the harness or the adapter fails the test as a
    `ContractError`, expected or not. `clock` is `run_contract`'s: virtual time in-process by default.
    `database` is `run_contract`'s too: a folder or `"redis://host:port"` that every run sharing it replays the
    failures found before from. Each test's draws tell Hypothesis what they covered (`event()`: the fault classes
    that fired, the era, the listing's requests), which `pytest --hypothesis-show-statistics` prints per test.
    The test takes pytest's `request` (for those statistics); called directly, pass None.
    `keep_failures` a folder where each failed or hung test writes a pytest file replaying its counterexample
    (`keep_failure`), named in its failure; the factory must be importable by name (or a driver's).
    """
    import pytest

    examples_db = example_database(database)

    chosen = named_eras(eras)
    keep = failure_keeper(keep_failures, factory, via, clock, example_timeout_s)
    expected = _expected_failures(expect_fail, chosen)

    def marks(pid: str, era: str) -> list[Any]:
        if (pid, era) not in expected:
            return []
        return [pytest.mark.xfail(reason=f"{pid} is not held in the {era} era", strict=True, raises=ContractViolation)]

    cases = [
        pytest.param(pid, era, id=f"{pid}-{era}", marks=marks(pid, era))
        for era in chosen
        for pid, prop in PROPERTIES.items()
        if era in prop.eras
    ]

    connects: dict[str, PropertyResult] = {}
    """Per era, P0's verdict (the bridge connects to a valid server), found by the first test of the era: every
    other test of the era is blocked where it fails."""

    @pytest.mark.parametrize(("property_id", "era"), cases)
    def test_resilience(property_id: str, era: str, request: pytest.FixtureRequest | None) -> None:
        harness = ContractHarness(factory, via=via, example_timeout_s=example_timeout_s, era=era, clock=clock)
        harness.connects = connects.get(era)
        with harness, statistics_for(request.node if request is not None else None):
            result = check_property(
                harness, property_id, max_examples=max_examples, budget_s=budget_s, database=examples_db
            )
        if harness.connects is not None:
            connects[era] = harness.connects
        # An expected failure is the bridge's documented state, not a finding to keep.
        kept = keep(result) if (property_id, era) not in expected else None
        where = f"{property_id} ({result.title}) in the {era} era" + (f" (kept as {kept})" * bool(kept))
        if result.blocked:
            _as_blocked(result, where, expected=(CONNECTS, era) in expected)
        _as_pytest_outcome(result, where)

    test_resilience.__doc__ = (
        f"The resilience contract holds for the bridge {getattr(factory, 'name', '')!r} in each era checked."
    )
    return test_resilience


def _expected_failures(expect_fail: Sequence[str], eras: Sequence[str]) -> set[tuple[str, str]]:
    """The (property, era) pairs `expect_fail` names: "P1" in every era checked, "P1@stateless" in one."""
    expected = set()
    for entry in expect_fail:
        property_id, _, era = entry.partition("@")
        if property_id not in PROPERTIES:
            raise ValueError(f"expect_fail names unknown properties [{property_id!r}]; known: {', '.join(PROPERTIES)}")
        if era and era not in ERAS:
            raise ValueError(f"expect_fail entry {entry!r}: the era after @ is 'handshake' or 'stateless'")
        expected |= {(property_id, one) for one in ([era] if era else eras)}
    return expected


def _as_blocked(result: PropertyResult, where: str, *, expected: bool) -> None:
    """A property P0's failure blocks: an xfail when P0 is expected to fail in its era (what it blocks is then known
    not to be checked), else a failure naming P0. Never a pass, and never a skip, which would read as neutral."""
    import pytest

    said = f"{where} is {result.notes[0]}"
    if expected:
        pytest.xfail(said)
    pytest.fail(f"{said}:\n{result.counterexample}", pytrace=False)


def _as_pytest_outcome(result: PropertyResult, where: str) -> None:
    """The verdict as pytest reports it: nothing for a pass, a skip where there is no verdict, a `ContractViolation`
    for a failure (which `expect_fail` may expect), `pytest.fail` for a hang or a fallback (which it never covers),
    a `ContractError` for an error."""
    import pytest

    if result.not_applicable:
        # Not a pass: the bridge lacks what the property is about, and pytest says so in its report.
        pytest.skip(f"{where} does not apply: {result.notes[0]}")
    if result.hung:
        # Its own failure, never a ContractViolation: expect_fail does not cover a hang, which says nothing
        # about what the property promises.
        pytest.fail(f"{where}: the bridge hung:\n{result.counterexample}", pytrace=False)
    if result.error:
        raise ContractError(f"{where} could not be checked:\n{result.counterexample}")
    if result.failed:
        raise ContractViolation(f"{where} failed:\n{result.counterexample}")
    if result.status == "fell_back":
        # Its own failure, never a ContractViolation: expect_fail's xfail must not take a fallback for the
        # property failing (pytest fails an xfail(raises=...) test that raises anything else).
        pytest.fail(
            f"{where} has no verdict: the bridge fell back to the handshake era (check a bridge of the "
            f"handshake era only with eras=('handshake',)):\n{result.counterexample}",
            pytrace=False,
        )
