"""One property's run against one adapter (`PropertyRun`): each example with its time limit, what the examples
covered (counted from what fired), the failure that ended the run and the declared cases that did not run as
planned; and `Stop`, which ends a Hypothesis run from inside it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit.contract._errors import ContractError, ContractViolation
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._hypothesis_events import tell_hypothesis
from mcp_testkit.contract._properties._fault_sets import fault_label
from mcp_testkit.contract._time_limit import time_limit

if TYPE_CHECKING:
    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._facts import BridgeFacts
    from mcp_testkit.contract._harness import ContractHarness
    from mcp_testkit.contract._properties import Property
    from mcp_testkit.journal import Record

__all__ = ["PropertyRun", "Stop", "show"]


class Stop(BaseException):
    """Ends a Hypothesis run from inside the test: an error of the harness or adapter, or a spent budget.

    A BaseException, so Hypothesis does not take it for a failure of the property and shrink it.
    """

    def __init__(self, reason: str, error: ContractError | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


def show(value: Any) -> str:
    """An input as a counterexample prints it: a rule as `fault on method tool=...`, long lists cut at 12."""
    if isinstance(value, faults.Rule):
        where = value.method + (f" tool={value.tool}" if value.tool else "")
        nth = f" nth={value.nth}" if value.nth != 1 else ""
        times = "" if value.times == 1 else f" times={value.times}"
        return f"{value.fault!r} on {where}{nth}{times}"
    if isinstance(value, list):
        if len(value) > 12:
            return "[" + ", ".join(show(v) for v in value[:12]) + f", ... {len(value) - 12} more]"
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return repr(value)


class PropertyRun:
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
        self.violations: Counter[str] = Counter()
        """The referee's rules the bridge's messages broke in the examples counted, by rule id: how many messages."""
        self.violation_shown: dict[str, str] = {}
        """The first violation of each rule, as the referee says it (`rule at path: message`)."""
        self.failure: str | None = None
        self.failure_journal: tuple[Record, ...] = ()
        """The requests of the example that failed last (the shrunk one, once Hypothesis is done)."""
        self.failing = False
        self.hang = False
        """Whether the failure found last was a hang."""
        self.failure_inputs: dict[str, Any] | None = None
        """The inputs of the example that failed last, and whether it ran on virtual time (then it is confirmed on
        the real clock before it is reported)."""
        self.failed_in_virtual_time = False
        self.failure_where: str | None = None
        """Which example failed last: "drawn", or "declared case 3 of 20" (what a kept failure says it replays)."""
        self.unsent_inputs: tuple[dict[str, Any], str] | None = None
        """The inputs and place of the first declared case whose faults waited for a request the bridge never sent."""
        self.unrun: list[tuple[str, bool, str]] = []
        """The declared cases that did not run as planned (no fault of theirs fired): where, whether not firing
        was the bridge's doing (it never sent the request the fault waited for), and the example's trace."""

    def header(self, inputs: Mapping[str, Any], where: str) -> str:
        args = "".join(f"    {name}={show(value)},\n" for name, value in inputs.items())
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
            raise Stop(
                "error",
                ContractError(
                    f"{self.header(inputs, where)}example_timeout_s={limit.seconds:g} s cuts the waits this example "
                    f"declares for a bridge with timeout_s={self.facts.timeout_s}, retry={self.facts.retry}: "
                    f"{', '.join(limit.waits)}, {limit.waits_s:g} s of waiting; give at least {limit.least_s:g} "
                    "s, or leave example_timeout_s unset (None) so that it follows the bridge. "
                    "Not a verdict on the bridge."
                ),
            )
        virtual = self.harness.loop.virtual and self.harness.clock == "virtual"
        try:
            self.harness.run(check, limit.seconds)
            virtual = virtual and self.harness.clock == "virtual"  # the run may have moved to the real clock
        except ContractViolation as violation:
            virtual = virtual and self.harness.clock == "virtual"
            if counted:
                self._count(inputs)
            self._tell(inputs, where)
            self.failure_inputs = dict(inputs)
            self.failure_where = where
            self.failed_in_virtual_time = virtual
            self.failing = True
            self.failure = f"{self.header(inputs, where)}\n{violation}"
            self.failure_journal = tuple(self.harness.server.journal)
            self.hang = isinstance(violation, BridgeHung)
            raise type(violation)(self.failure) from None
        except ContractError as error:
            raise Stop("error", error) from None
        if counted:
            self._count(inputs)
        self._tell(inputs, where)
        fired = self.harness.firing
        if where.startswith("declared") and not fired.ran:
            unsent = bool(fired.unsent) and len(fired.unsent) == len(fired.unfired)
            planned = ", ".join(show(rule) for rule in fired.unfired)
            why = (
                "the bridge never sent the request it waited for, so the case checked nothing"
                if unsent
                else "the bridge sent its request, but not as the case needs"
            )
            trace = self.harness.fail(f"no fault of this declared case fired ({planned}): {why}")
            if unsent and not any(earlier for _, earlier, _ in self.unrun):
                self.failure_journal = tuple(self.harness.server.journal)
                self.unsent_inputs = (dict(inputs), where)
            self.unrun.append((where, unsent, f"{self.header(inputs, where)}\n{trace}"))

    def held_on_the_real_clock(self) -> tuple[bool, float]:
        """Run the example that failed last once more, on the real clock; whether it held there, and the seconds it
        took. An error of the harness or the adapter there is raised as `Stop`."""
        inputs = self.failure_inputs or {}

        async def check(h: ContractHarness, adapter: BridgeAdapter) -> None:
            await self.prop.check(h, adapter, self.facts, inputs)

        limit = time_limit(inputs, self.facts, self.harness.example_timeout_s)
        started = time.perf_counter()
        with self.harness.fresh_loop("real"):
            try:
                self.harness.run(check, limit.seconds)
            except ContractViolation:
                return False, time.perf_counter() - started
            except ContractError as error:
                raise Stop("error", error) from None
        return True, time.perf_counter() - started

    def _labels(self, inputs: dict[str, Any]) -> list[str]:
        """The example's labels, but those of the faults that never fired."""
        labels = list(self.prop.labels(inputs))
        for rule in self.harness.firing.unfired:
            label = fault_label(rule.fault)
            if label in labels:
                labels.remove(label)
        return labels or ["no fault fired"]

    def _count(self, inputs: dict[str, Any]) -> None:
        """Count the example's labels in the coverage (a drawn example's are Hypothesis' events too), and the
        referee's violations in what the bridge sent (`docs/referee.md`): what the server saw, not a verdict."""
        self.coverage.update(self._labels(inputs))
        for broken in self.harness.server.journal.violations:
            self.violations[broken.rule] += 1
            self.violation_shown.setdefault(broken.rule, f"{broken.rule} at {broken.path}: {broken.message}")

    def _tell(self, inputs: dict[str, Any], where: str) -> None:
        """A drawn example (shrinking tries included) tells Hypothesis what it covered: `event()`, `note()`."""
        if where == "drawn":
            h = self.harness
            tell_hypothesis(self.prop.property_id, h.era, self._labels(inputs), h.firing, h.server.journal.records)

    def over_budget(self) -> bool:
        return time.perf_counter() > self.deadline
