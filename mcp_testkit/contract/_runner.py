"""Running a property: its declared cases first, then Hypothesis' draws, within a time budget; and the
verdict, `PropertyResult`: passed, failed (with the shortest counterexample), hung (the bridge did not finish an
example in its time limit) or error (with the traceback), in one protocol era; or no verdict there: not run (the
bridge cannot connect to a healthy server, reported once per era), not applicable (P5 in the stateless era, P5s
in the handshake era, P8 and P9 for an adapter without the capability they need), or fell back (the bridge spoke the
handshake era to the stateless column's server)."""

from __future__ import annotations

import contextlib
import functools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcp_testkit import faults
from mcp_testkit._renamed import renamed_keywords
from mcp_testkit._wire.eras import ERAS, HANDSHAKE, named_eras
from mcp_testkit.contract._era_column import server_fits_era, unfit_server
from mcp_testkit.contract._errors import ContractError, ContractViolation, traceback_text
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._harness import ContractHarness
from mcp_testkit.contract._properties import PROPERTIES, Property
from mcp_testkit.contract._properties._fault_sets import fault_label
from mcp_testkit.contract._time_limit import time_limit

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory, BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts
    from mcp_testkit.journal import Record
    from mcp_testkit.server import TestMcpServer

__all__ = ["DEFAULT_BUDGET_S", "PropertyResult", "check_property", "run_contract"]

DEFAULT_BUDGET_S = 60.0

Status = Literal["passed", "failed", "hung", "not_run", "error", "not_applicable", "fell_back"]
_MARKS = {
    "passed": "holds",
    "failed": "FAILS",
    "hung": "HUNG",
    "not_run": "not run",
    "error": "ERROR",
    "not_applicable": "n/a",
    "fell_back": "fell back",
}
_STATUSES = tuple(_MARKS)


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict for one bridge in one protocol era (`era`).

    `status` is "passed", "failed" (the bridge broke the property: `counterexample` is the shortest
    trace found), "hung" (the bridge did not finish an example in its time limit: `counterexample`
    says in which step, after how long, with the handler runs so far; the property's promise was not
    judged, unless it is about bounded waits, where a hang is "failed") or "error" (the harness or the
    adapter raised: `counterexample` holds what raised, with its traceback; nothing is known about the
    bridge). "not_run": the bridge could not connect to a healthy server, which one property of the era
    reports as its failure; the others were not run, and their note names it. Two more say there is no
    verdict in this era, never that the property holds: "not_applicable" (the property does not apply to this bridge in
    this era, and its one note says why: it has no meaning in the era, as P5 in the stateless era and P5s
    in the handshake era, or it needs a capability the adapter does not declare, as P8 approvals and P9
    a tool cache) and "fell_back" (in the stateless era, the bridge spoke the handshake era to a server
    of both eras; `counterexample` shows how). `examples` counts the examples run, declared cases
    included and shrinking excluded; `declared` how many of them were declared cases; `coverage` how
    many examples exercised each fault class and call kind; `notes` say what limited the run (a budget
    that ran out, fewer examples asked for than there are declared cases, why the property does not apply).
    """

    property_id: str
    title: str
    status: Status
    counterexample: str | None = None
    examples: int = 0
    seconds: float = 0.0
    declared: int = 0
    coverage: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    era: str = HANDSHAKE
    journal: tuple[Record, ...] = field(default=(), repr=False, compare=False)
    """For "failed": the requests of the counterexample's example as the server journaled them (to draw it)."""

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"PropertyResult.status is one of {', '.join(_STATUSES)}, not {self.status!r}")
        if self.era not in ERAS:
            raise ValueError(f"PropertyResult.era is 'handshake' or 'stateless', not {self.era!r}")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def hung(self) -> bool:
        """Whether the bridge did not finish an example in its time limit: no verdict on what the property promises."""
        return self.status == "hung"

    @property
    def error(self) -> bool:
        return self.status == "error"

    @property
    def not_applicable(self) -> bool:
        """Whether the property does not apply to this bridge in this era (the note says why): never a pass."""
        return self.status == "not_applicable"

    @property
    def applies(self) -> bool:
        """Whether there is a verdict in this era: not "not_applicable", "fell_back" or "not_run"."""
        return self.status not in ("not_applicable", "fell_back", "not_run")

    @property
    def mark(self) -> str:
        """The verdict as `check` prints it: holds, FAILS, HUNG, not run, ERROR, n/a or fell back."""
        return _MARKS[self.status]

    def coverage_line(self) -> str:
        """`20 declared + 80 drawn; Drop() 12, EndStream 9, ...`: how often each class was exercised."""
        if self.status == "not_applicable":
            return f"no examples: {self.notes[0] if self.notes else 'it does not apply'}"
        if self.status == "not_run":
            return f"no examples: {self.notes[0] if self.notes else 'not run'}"
        if self.status == "fell_back":
            return "no examples: the bridge spoke the handshake era to the stateless column's server"
        drawn = self.examples - self.declared
        counts = ", ".join(f"{label} {count}" for label, count in sorted(self.coverage.items()))
        return f"{self.declared} declared + {drawn} drawn; {counts or 'nothing'}"


class _Stop(BaseException):
    """Ends a Hypothesis run from inside the test: an error of the harness or adapter, or a spent budget.

    A BaseException, so Hypothesis does not take it for a failure of the property and shrink it.
    """

    def __init__(self, reason: str, error: ContractError | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


def _show(value: Any) -> str:
    if isinstance(value, faults.Rule):
        where = value.method + (f" tool={value.tool}" if value.tool else "")
        nth = f" nth={value.nth}" if value.nth != 1 else ""
        times = "" if value.times == 1 else f" times={value.times}"
        return f"{value.fault!r} on {where}{nth}{times}"
    if isinstance(value, list):
        if len(value) > 12:
            return "[" + ", ".join(_show(v) for v in value[:12]) + f", ... {len(value) - 12} more]"
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return repr(value)


class _Run:
    """One property against one adapter: the examples, what they covered, the failure that ended it."""

    def __init__(
        self,
        harness: ContractHarness,
        prop: Property,
        facts: BridgeFacts,
        budget: float,
        on_example: Callable[[int, bool], None] | None = None,
    ) -> None:
        self.harness = harness
        self.on_example = on_example
        self.prop = prop
        self.facts = facts
        self.deadline = time.perf_counter() + budget
        self.budget = budget
        self.examples = 0
        self.coverage: Counter[str] = Counter()
        self.failure: str | None = None
        self.failure_journal: tuple[Record, ...] = ()
        """The requests of the example that failed last (the shrunk one, once Hypothesis is done)."""
        self.failing = False
        self.hang = False
        """Whether the failure found last was a hang."""
        self.unrun: list[tuple[str, bool, str]] = []
        """The declared cases that did not run as planned (no fault of theirs fired): where, whether not firing
        was the bridge's doing (it never sent the request the fault waited for), and the example's trace."""

    def header(self, inputs: Mapping[str, Any], where: str) -> str:
        args = "".join(f"    {name}={_show(value)},\n" for name, value in inputs.items())
        return f"{self.prop.property_id} counterexample ({where}): {self.prop.name}(\n{args})"

    def example(self, inputs: dict[str, Any], where: str) -> None:
        """Run one example; a violation propagates (with the inputs above its trace), an error stops the run.

        Its coverage is what the server reports fired (and Hypothesis' `event()` for a drawn one); a declared
        case none of whose faults fired is noted as not run."""
        counted = not self.failing
        if counted:
            self.examples += 1
        if self.on_example is not None:
            self.on_example(self.examples, not counted)

        async def check(h: ContractHarness, adapter: BridgeAdapter) -> None:
            await self.prop.check(h, adapter, self.facts, inputs)

        limit = time_limit(inputs, self.facts, self.harness.example_timeout_s)
        if limit.seconds < limit.least_s:
            raise _Stop(
                "error",
                ContractError(
                    f"{self.header(inputs, where)}example_timeout_s={limit.seconds:g} s cuts the waits this example "
                    f"declares for a bridge with timeout_s={self.facts.timeout_s}, retry={self.facts.retry}: "
                    f"{', '.join(limit.waits)}, {limit.waits_s:g} s of waiting; give at least {limit.least_s:g} "
                    "s, or leave example_timeout_s unset (None) so that it follows the bridge. "
                    "Not a verdict on the bridge."
                ),
            )
        try:
            self.harness.run(check, limit.seconds)
        except ContractViolation as violation:
            if counted:
                self._count(inputs, where)
            self.failing = True
            self.failure = f"{self.header(inputs, where)}\n{violation}"
            self.failure_journal = tuple(self.harness.server.journal)
            self.hang = isinstance(violation, BridgeHung)
            raise type(violation)(self.failure) from None
        except ContractError as error:
            raise _Stop("error", error) from None
        if counted:
            self._count(inputs, where)
        fired = self.harness.firing
        if where.startswith("declared") and not fired.ran:
            unsent = bool(fired.unsent) and len(fired.unsent) == len(fired.unfired)
            planned = ", ".join(_show(rule) for rule in fired.unfired)
            why = (
                "the bridge never sent the request it waited for, so the case checked nothing"
                if unsent
                else "the bridge sent its request, but not as the case needs"
            )
            trace = self.harness.fail(f"no fault of this declared case fired ({planned}): {why}")
            if unsent and not any(earlier for _, earlier, _ in self.unrun):
                self.failure_journal = tuple(self.harness.server.journal)
            self.unrun.append((where, unsent, f"{self.header(inputs, where)}\n{trace}"))

    def _count(self, inputs: dict[str, Any], where: str) -> None:
        """Count the example's labels, but those of the faults that never fired."""
        labels = list(self.prop.labels(inputs))
        for rule in self.harness.firing.unfired:
            label = fault_label(rule.fault)
            if label in labels:
                labels.remove(label)
        if not labels:
            labels = ["no fault fired"]
        self.coverage.update(labels)
        if where == "drawn":
            from hypothesis import event

            for label in labels:
                event(f"{self.prop.property_id} {label}")

    def over_budget(self) -> bool:
        return time.perf_counter() > self.deadline


@contextlib.contextmanager
def _context_free_draws() -> Iterator[None]:
    """Draws that do not depend on which modules are loaded.

    Hypothesis mixes constants found in the user's loaded modules into its draws, so a derandomized
    run drew other examples under pytest than from `python -c`. The contract's verdicts must not
    depend on what happens to be imported: while it runs, that pool of constants is empty.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the mechanism needs no fix
        yield
        return
    local = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    constants = getattr(providers, "Constants", None)
    if local is None or cache is None or constants is None:  # pragma: no cover
        yield
        return
    empty = constants()
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = local
        cache.cache.clear()


def _settings(max_examples: int, derandomize: bool) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        phases=[Phase.generate, Phase.target, Phase.shrink],
    )


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
    shrinking a failure (whose tries are not counted).
    """
    if property_id not in PROPERTIES:
        raise ValueError(f"unknown property {property_id!r}; known: {', '.join(PROPERTIES)}")
    if not isinstance(max_examples, int) or max_examples < 1:
        raise ValueError(f"max_examples must be an int >= 1, not {max_examples!r}")
    if budget_s is not None and (not isinstance(budget_s, (int, float)) or budget_s <= 0):
        raise ValueError(
            f"budget_s must be a positive number of seconds or None (it follows the bridge), not {budget_s!r}"
        )
    prop = PROPERTIES[property_id]
    started = time.perf_counter()
    notes: list[str] = []

    def result(status: Status, text: str | None = None, run: _Run | None = None, declared: int = 0) -> PropertyResult:
        return PropertyResult(
            property_id,
            prop.title,
            status,
            text,
            run.examples if run else 0,
            time.perf_counter() - started,
            declared,
            dict(run.coverage) if run else {},
            tuple(notes),
            harness.era,
            run.failure_journal if run and status == "failed" else (),
        )

    def not_applicable(reason: str) -> PropertyResult:
        notes.append(reason)
        return result("not_applicable")

    if harness.era not in prop.eras:
        return not_applicable(f"it has no meaning in the {harness.era} era")
    try:
        facts = harness.facts()
        if prop.requires is not None and prop.requires not in facts.capabilities:
            return not_applicable(f"it needs the {prop.requires!r} capability, which the adapter does not declare")
        missing = prop.needs(facts) if prop.needs is not None else None
        if missing is not None:
            return not_applicable(missing)
        cases = prop.cases(facts) if declared_cases else []
        spoken, how = harness.spoken_era()
        unconnected = harness.cannot_connect()
    except ContractError as error:
        return result("error", str(error))
    except Exception as error:
        return result("error", f"the contract harness raised {type(error).__name__}: {error}\n{traceback_text(error)}")
    if spoken != harness.era:
        return result("fell_back", how)
    if unconnected is not None:
        # One connect failure per era, not one per property: the first property checked reports it.
        if harness.connect_reported is None or harness.connect_reported == property_id:
            harness.connect_reported = property_id
            notes.append(f"cannot connect: the other properties of the {harness.era} era are not run")
            return result("failed", unconnected)
        reported = harness.connect_reported
        notes.append(f"not run: cannot connect (the bridge's connect failure is reported under {reported})")
        return result("not_run")
    # No budget given: the declared cases all run, and the default budget starts after them.
    run = _Run(harness, prop, facts, budget_s if budget_s is not None else float("inf"), on_example)
    if not declared_cases:
        notes.append("the declared cases were switched off (declared_cases=False): drawn examples only")
    with harness.fresh_loop():
        for number, case in enumerate(cases, 1):
            if run.over_budget():
                notes.append(f"the budget of {budget_s:g} s ran out after {number - 1} of {len(cases)} declared cases")
                return result(
                    "error",
                    "not every declared case ran, so the property cannot hold; raise the budget",
                    run,
                    number - 1,
                )
            try:
                run.example(case, f"declared case {number} of {len(cases)}")
            except ContractViolation as violation:
                return result(_failure_status(prop, run.hang), str(violation), run, number)
            except _Stop as stop:
                return result("error", str(stop.error), run, number)
        if run.unrun:
            return _unrun(run, result, len(cases))
        if len(cases) > max_examples:  # said only once every one of them ran
            notes.append(f"all {len(cases)} declared cases ran although max_examples is {max_examples}")
        if budget_s is None:
            run.deadline, run.budget = time.perf_counter() + DEFAULT_BUDGET_S, DEFAULT_BUDGET_S
        remaining = max_examples - len(cases)
        if remaining > 0:
            verdict = _draw(run, prop, facts, remaining, derandomize, notes)
            if verdict is not None:
                status, text = verdict
                return result(status, text, run, len(cases))
    return result("passed", None, run, len(cases))


def _failure_status(prop: Property, hang: bool) -> Status:
    """A violation's status: "hung" for a hang, unless waiting without end is what the property is about."""
    return "hung" if hang and not prop.hang_fails else "failed"


def _unrun(run: _Run, result: Callable[..., PropertyResult], declared: int) -> PropertyResult:
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


def _draw(
    run: _Run, prop: Property, facts: BridgeFacts, examples: int, derandomize: bool, notes: list[str]
) -> tuple[Status, str] | None:
    """Hypothesis' draws after the declared cases; None when the property held through them."""
    from hypothesis import given

    strategies = prop.strategies(facts)

    def body(**inputs: Any) -> None:
        if run.over_budget():
            raise _Stop("budget")
        run.example(inputs, "drawn")

    body.__name__ = body.__qualname__ = prop.name
    test = _settings(examples, derandomize)(given(**strategies)(body))
    try:
        with _context_free_draws():
            test()
    except _Stop as stop:
        if stop.error is not None and run.failure is not None:
            # The adapter raised while Hypothesis shrank a failure: the bridge did fail, on the case found so far.
            first = str(stop.error).splitlines()[0] if str(stop.error) else type(stop.error).__name__
            notes.append("shrinking stopped early: the adapter raised on a smaller case")
            return (
                _failure_status(prop, run.hang),
                f"{run.failure}\n(shrinking stopped: the adapter raised on a smaller case, so this is the shortest "
                f"counterexample found before: {first})",
            )
        if stop.error is not None:
            return "error", str(stop.error)
        if run.failure is None:
            notes.append(f"the budget of {run.budget:g} s ran out after {run.examples} examples")
            return None
        notes.append(f"shrinking stopped early: the budget of {run.budget:g} s ran out")
        return (
            _failure_status(prop, run.hang),
            f"{run.failure}\n(shrinking stopped when the budget of {run.budget:g} s ran out: "
            "a shorter counterexample may exist)",
        )
    except ContractViolation as violation:
        return _failure_status(prop, isinstance(violation, BridgeHung)), str(violation)
    except Exception as error:
        if run.failure is not None:
            # Hypothesis could not replay the failure (a bridge that is not deterministic): it still failed.
            notes.append(f"the failure did not reproduce on replay ({type(error).__name__})")
            return _failure_status(prop, run.hang), run.failure
        return "error", f"the contract harness raised {type(error).__name__}: {error}\n{traceback_text(error)}"
    return None


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
    """
    from mcp_testkit.server import TestMcpServer as _Fake

    if server is not None and not isinstance(server, _Fake):
        raise ValueError(
            f"run_contract(server={server!r}): the contract scripts its own tools on every example (a read, a write, "
            "a slow and a failing one, named by the contract) and counts their runs in the server's ledger; a live "
            f"server behind a chaos proxy has its own tools, not these, and its runs cannot be counted from outside. "
            "Run the contract on TestMcpServer, or on TestMcpServer.from_cassette(...) of a recording of that "
            "server (its catalogue, with the contract's tools beside it), and use the proxy for your own tests"
        )
    chosen = list(properties) if properties is not None else list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {', '.join(PROPERTIES)}")
    results = []
    if eras is None:
        eras = ERAS if server is None else [era for era in ERAS if server_fits_era(server, era)]
    for era in named_eras(eras):
        if server is not None and not server_fits_era(server, era):
            raise ValueError(unfit_server(server, era))
    for era in named_eras(eras):
        with ContractHarness(
            factory, via=via, example_timeout_s=example_timeout_s, era=era, server=server
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
                )
                results.append(result)
                if progress is not None:
                    progress(result)
    return results
