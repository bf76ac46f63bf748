"""Running the contract: `check_property` runs one property with a harness (its declared cases first, then
Hypothesis' draws, within a time budget) and returns its verdict; `run_contract` runs the properties asked for, era
by era, each on a harness of its own."""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mcp_testkit._renamed import renamed_keywords
from mcp_testkit._wire.eras import ERAS, named_eras
from mcp_testkit.contract._database import example_database
from mcp_testkit.contract._draws import draw
from mcp_testkit.contract._era_column import server_fits_era, unfit_server
from mcp_testkit.contract._errors import ContractError, ContractViolation, one_line, traceback_text
from mcp_testkit.contract._harness import ContractHarness
from mcp_testkit.contract._keep import failure_keeper
from mcp_testkit.contract._properties import PROPERTIES, Property
from mcp_testkit.contract._property_run import PropertyRun, Stop
from mcp_testkit.contract._verdict import BLOCKING, CONNECTS, PropertyResult, Status, failure_status

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.contract._facts import BridgeFacts
    from mcp_testkit.contract._properties._property import Inputs
    from mcp_testkit.server import TestMcpServer

__all__ = ["DEFAULT_BUDGET_S", "check_property", "run_contract"]

DEFAULT_BUDGET_S = 60.0


@renamed_keywords(budget="budget_s")
def check_property(
    harness: ContractHarness,
    property_id: str,
    *,
    max_examples: int = 100,
    derandomize: bool = True,
    budget_s: float | None = None,
    on_example: Callable[[int, bool], None] | None = None,
    declared_cases: bool = True,
    database: object = None,
) -> PropertyResult:
    """Check one property with `harness`; never raises for a failing bridge, returns its verdict.

    The property's declared cases run first and count toward `max_examples` (all of them run even
    when it is smaller, and the result says so); Hypothesis draws the rest. `budget_s` bounds the
    seconds the property may take: draws stop when it is spent, and so does shrinking, whose result
    then says it may not be the shortest; declared cases it cuts make the verdict an error saying how
    many ran. None (the default) follows the bridge: every declared case runs, each within its own
    time limit, however long the bridge's timeouts make them, and the draws and shrinking after them
    get `DEFAULT_BUDGET_S` (60 s). `declared_cases=False` leaves the declared cases out and draws all
    `max_examples`: to see what the draws alone find (a property cannot be said to hold that way, and the
    result's note says the declared cases did not run). `on_example(number, shrinking)` is called as each example
    starts (for a progress display): its number among those counted, and whether Hypothesis is
    shrinking a failure (whose tries are not counted). `database` is `run_contract`'s.
    Any property but P0 is "blocked" where the bridge fails
    P0 in the harness's era: P0's verdict found earlier on this harness, or that of its declared
    cases, run first when it was not checked yet.
    """
    _check_arguments(property_id, max_examples, budget_s)
    examples_db = example_database(database)
    prop = PROPERTIES[property_id]
    result = _Verdict(prop, harness.era)
    if harness.era not in prop.eras:
        return result.not_applicable(f"it has no meaning in the {harness.era} era")
    try:
        facts = harness.facts()
        missing = _missing(prop, facts)
        if missing is not None:
            return result.not_applicable(missing)
        cases = prop.cases(facts) if declared_cases else []
        result.held_as = prop.held_as(facts) if prop.held_as is not None else None
        spoken, how = harness.spoken_era()
    except ContractError as error:
        return result("error", str(error))
    except Exception as error:
        return result("error", f"the contract harness raised {one_line(error)}\n{traceback_text(error)}")
    if spoken != harness.era:
        return result("fell_back", how)
    if property_id != CONNECTS:
        connects = _connects(harness)
        if connects.status in BLOCKING:
            return _blocked(result, connects)
    # No budget given: the declared cases all run, and the default budget starts after them.
    run = PropertyRun(harness, prop, facts, budget_s if budget_s is not None else float("inf"), on_example)
    harness.property_id = property_id
    harness.own_era = prop.own_era
    if not declared_cases:
        result.notes.append("the declared cases were switched off (declared_cases=False): drawn examples only")
    try:
        with harness.fresh_loop():
            verdict = _examples(
                run,
                cases,
                result,
                max_examples=max_examples,
                budget_s=budget_s,
                derandomize=derandomize,
                db=examples_db,
            )
        if harness.real_clock_reason is not None:
            reason = harness.real_clock_reason
            note = f"ran on the real clock: the bridge keeps time outside the event loop's timers ({reason})"
            verdict = dataclasses.replace(verdict, notes=(*verdict.notes, note))
        verdict = _confirmed(run, verdict)  # its replay on the real clock makes its adapters as the examples did
    finally:
        harness.own_era = False  # the next property's adapters speak the era they are told again
    if property_id == CONNECTS:
        harness.connects = verdict
    return verdict


def _connects(harness: ContractHarness) -> PropertyResult:
    """P0's verdict in the harness's era: the one already found (P0 runs first in a run of the contract), else
    that of P0's declared cases, run now once for the era (each unusual tool shape alone, then all together)."""
    if harness.connects is None:
        checking = harness.property_id
        harness.connects = check_property(harness, CONNECTS, max_examples=1)
        harness.property_id = checking
    connects: PropertyResult = harness.connects
    return connects


def _blocked(result: _Verdict, connects: PropertyResult) -> PropertyResult:
    """The verdict of a property the bridge's P0 failure blocks: not checked, and not held; P0's counterexample."""
    result.notes.append(
        f"blocked: the bridge fails {CONNECTS} ({PROPERTIES[CONNECTS].title.lower()}) in the {connects.era} era, so "
        "this property was not checked; fix P0 first"
    )
    return result("blocked", connects.counterexample)


def _confirmed(run: PropertyRun, verdict: PropertyResult) -> PropertyResult:
    """A failure found in virtual time, replayed once on the real clock before it is reported: one that does not
    fail there is an `error` (it depends on virtual time), never a verdict against the bridge."""
    if verdict.status not in ("failed", "hung") or not run.failed_in_virtual_time or run.failure_inputs is None:
        return verdict
    try:
        held, seconds = run.held_on_the_real_clock()
    except Stop as stop:
        return dataclasses.replace(verdict, status="error", counterexample=f"{verdict.counterexample}\n{stop.error}")
    if not held:
        return verdict  # confirmed: the same failure on the real clock
    return dataclasses.replace(
        verdict,
        status="error",
        counterexample=(
            f"{verdict.counterexample}\n(this example failed in virtual time but held when run again on the real "
            f"clock ({seconds:.1f} s): the failure depends on virtual time, so it is no verdict on the bridge; "
            "run the contract with clock='real' to check it on the real clock only)"
        ),
        notes=(*verdict.notes, "depends on virtual time: the failure did not reproduce on the real clock"),
    )


def _check_arguments(property_id: str, max_examples: int, budget_s: float | None) -> None:
    if property_id not in PROPERTIES:
        raise ValueError(f"unknown property {property_id!r}; known: {', '.join(PROPERTIES)}")
    if not isinstance(max_examples, int) or max_examples < 1:
        raise ValueError(f"max_examples must be an int >= 1, not {max_examples!r}")
    if budget_s is not None and (not isinstance(budget_s, (int, float)) or budget_s <= 0):
        raise ValueError(
            f"budget_s must be a positive number of seconds or None (it follows the bridge), not {budget_s!r}"
        )


class _Verdict:
    """Makes the property's `PropertyResult`, with the notes gathered so far and the seconds since it started."""

    def __init__(self, prop: Property, era: str) -> None:
        self.prop = prop
        self.era = era
        self.started = time.perf_counter()
        self.notes: list[str] = []
        self.held_as: str | None = None
        """What a pass would rest on besides the examples (`Property.held_as`), once the facts are read."""

    def __call__(
        self, status: Status, text: str | None = None, run: PropertyRun | None = None, declared: int = 0
    ) -> PropertyResult:
        return PropertyResult(
            self.prop.property_id,
            self.prop.title,
            status,
            text,
            run.examples if run else 0,
            time.perf_counter() - self.started,
            declared,
            dict(run.coverage) if run else {},
            tuple(self.notes),
            self.era,
            run.failure_journal if run and status == "failed" else (),
            *_counterexample_of(run, status),
            violations=dict(run.violations) if run else {},
            violation_shown=dict(run.violation_shown) if run else {},
            held_as=self.held_as if status == "passed" else None,
        )

    def not_applicable(self, reason: str) -> PropertyResult:
        self.notes.append(reason)
        return self("not_applicable")


def _counterexample_of(run: PropertyRun | None, status: Status) -> tuple[Inputs | None, str | None]:
    """The inputs of a failed or hung verdict's example and which example it was (None, None for any other)."""
    if run is None or status not in ("failed", "hung"):
        return None, None
    if run.failure_inputs is not None:
        return run.failure_inputs, run.failure_where
    if run.unsent_inputs is not None:
        return run.unsent_inputs
    return None, None


def _missing(prop: Property, facts: BridgeFacts) -> str | None:
    """Why the property does not apply to this adapter (a capability or a fact it does not declare), or None."""
    if prop.requires is not None and prop.requires not in facts.capabilities:
        return f"it needs the {prop.requires!r} capability, which the adapter does not declare"
    return prop.needs(facts) if prop.needs is not None else None


def _examples(
    run: PropertyRun,
    cases: Sequence[Inputs],
    result: _Verdict,
    *,
    max_examples: int,
    budget_s: float | None,
    derandomize: bool,
    db: ExampleDatabase | None,
) -> PropertyResult:
    """The declared cases in order, then Hypothesis' draws for the rest of `max_examples`; the verdict."""
    for number, case in enumerate(cases, 1):
        if run.over_budget():
            ran = f"{number - 1} of {len(cases)} declared cases"
            result.notes.append(f"the budget of {budget_s:g} s ran out after {ran}")
            return result(
                "error", "not every declared case ran, so the property cannot hold; raise the budget", run, number - 1
            )
        try:
            run.example(case, f"declared case {number} of {len(cases)}")
        except ContractViolation as violation:
            return result(failure_status(run.prop, run.hang), str(violation), run, number)
        except Stop as stop:
            return result("error", str(stop.error), run, number)
    if run.unrun:
        return _unrun(run, result, len(cases))
    if len(cases) > max_examples:  # said only once every one of them ran
        result.notes.append(f"all {len(cases)} declared cases ran although max_examples is {max_examples}")
    if budget_s is None:
        run.deadline, run.budget = time.perf_counter() + DEFAULT_BUDGET_S, DEFAULT_BUDGET_S
    remaining = max_examples - len(cases)
    if remaining > 0:
        found = draw(run, remaining, derandomize, result.notes, db)
        if found is not None:
            status, text = found
            return result(status, text, run, len(cases))
    return result("passed", None, run, len(cases))


def _unrun(run: PropertyRun, result: _Verdict, declared: int) -> PropertyResult:
    """The verdict when declared cases did not run as planned: it cannot hold. Failed when not firing was the
    bridge's doing (it never sent the request a case's fault waited for), an error listing them otherwise."""
    listed = ", ".join(where for where, _, _ in run.unrun)
    for _where, unsent, trace in run.unrun:
        if unsent:
            return result(
                "failed",
                f"{trace}\n(the bridge never sent what this declared case's faults wait for, so the property cannot "
                f"be checked and does not hold; declared cases that did not run: {listed})",
                run,
                declared,
            )
    return result(
        "error",
        f"{len(run.unrun)} declared case(s) did not run: no fault of theirs fired ({listed}), so the property "
        f"cannot hold\n{run.unrun[0][2]}",
        run,
        declared,
    )


@renamed_keywords(example_timeout="example_timeout_s", budget="budget_s", transport="via")
def run_contract(
    factory: AdapterFactory,
    *,
    max_examples: int = 100,
    properties: Sequence[str] | None = None,
    eras: Sequence[str] | None = None,
    via: str = "asgi",
    derandomize: bool = True,
    example_timeout_s: float | None = None,
    budget_s: float | None = None,
    declared_cases: bool = True,
    progress: Callable[[PropertyResult], None] | None = None,
    server: TestMcpServer | None = None,
    on_example: Callable[[str, int, bool], None] | None = None,
    clock: str | None = None,
    database: object = None,
    keep_failures: str | os.PathLike[str] | None = None,
) -> list[PropertyResult]:
    """Check every property (or those named) against the bridge that `factory` makes, in each era of `eras`.

    The results come era by era, in the order of `eras`, each with every property asked for: one
    that has no meaning in an era is there as "not_applicable". `example_timeout_s` is how long one
    example may take before it is reported as a hang; None (the default) derives it per example from
    the adapter's `timeout_s` and `retry` and the waits its faults declare (10 s plus 1.5 times the
    waits); one given that is shorter than an example's declared waits (with the margin) is an `error`
    naming them, never a hang of the bridge; `budget_s` how long one property may take,
    shrinking included (None: every declared case, then 60 s of draws and shrinking; see
    `check_property`); `declared_cases=False` draws every example (what the draws alone find).
    `server` runs them on a server of yours, e.g.
    `TestMcpServer.from_cassette(...)`: each example resets it and adds its own tools beside the
    recorded catalogue. `eras` defaults to both; with `server`, to the eras it fits: the handshake
    era if it speaks only that one, the stateless era if it speaks 2026-07-28. Naming an era the
    server does not fit is a `ValueError` saying what to do. `progress(result)` is called as each
    property ends, `on_example(property_id, number, shrinking)` as each example starts (see `check_property`).
    `clock`: in-process (`via='asgi'`) the examples run on virtual time by default ('virtual': the event loop skips
    what nothing can happen in, so declared timeouts cost no wall time; a failure is confirmed on the real clock
    before it is reported), over a socket on the real clock; 'real' keeps the real clock in-process too.
    `database`: where the failing examples found are kept, for every run sharing it to try first: a folder,
    `"redis://host:port"` (`pip install 'hypothesis[redis]'`) or an `ExampleDatabase`; None keeps nothing.
    `keep_failures`: a folder to write each failed or hung verdict to, as a test file replaying it (`keep_failure`).
    """
    _check_server(server)
    chosen = list(properties) if properties is not None else list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {', '.join(PROPERTIES)}")
    examples_db = example_database(database)
    keep = failure_keeper(keep_failures, factory, via, clock, example_timeout_s, server)
    results = []
    if eras is None:
        eras = ERAS if server is None else [era for era in ERAS if server_fits_era(server, era)]
    for era in named_eras(eras):
        if server is not None and not server_fits_era(server, era):
            raise ValueError(unfit_server(server, era))
    for era in named_eras(eras):
        with ContractHarness(
            factory, via=via, example_timeout_s=example_timeout_s, era=era, server=server, clock=clock
        ) as harness:
            for property_id in chosen:
                ticks = None if on_example is None else functools.partial(on_example, property_id)
                result = check_property(
                    harness,
                    property_id,
                    max_examples=max_examples,
                    derandomize=derandomize,
                    budget_s=budget_s,
                    on_example=ticks,
                    declared_cases=declared_cases,
                    database=examples_db,
                )
                results.append(result)
                keep(result)
                if progress is not None:
                    progress(result)
    return results


def _check_server(server: object) -> None:
    """A server given to `run_contract` must be a `TestMcpServer` (the contract scripts and counts its tools)."""
    from mcp_testkit.server import TestMcpServer as _Fake

    if server is not None and not isinstance(server, _Fake):
        raise ValueError(
            f"run_contract(server={server!r}): the contract scripts its own tools on every example (a read, a write, "
            "a slow and a failing one, named by the contract) and counts their runs in the server's ledger; a live "
            f"server behind a chaos proxy has its own tools, not these, and its runs cannot be counted from outside. "
            "Run the contract on TestMcpServer, or on TestMcpServer.from_cassette(...) of a recording of that "
            "server (its catalogue, with the contract's tools beside it), and use the proxy for your own tests"
        )
