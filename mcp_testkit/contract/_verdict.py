"""A property's verdict, `PropertyResult`: passed, failed (with the shortest counterexample), hung (the bridge did not
finish an example in its time limit) or error (with the traceback), in one protocol era; or no verdict there: blocked
(the bridge fails P0, connecting to a valid server, in that era), not applicable (P5 in the stateless era, P5s
in the handshake era, P8 and P9 for an adapter without the capability they need), or fell back (the bridge spoke the
handshake era to the stateless column's server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcp_testkit._wire.eras import ERAS, HANDSHAKE

if TYPE_CHECKING:
    from mcp_testkit.contract._properties import Property
    from mcp_testkit.journal import Record

__all__ = ["BLOCKING", "CONNECTS", "MARKS", "PropertyResult", "Status", "failure_status"]

CONNECTS = "P0"
"""The property every other one stands on: the bridge connects to a valid server and loads its catalogue."""
BLOCKING = ("failed",)
"""The statuses of P0 that block every other property of its era: the bridge broke P0's promise (it did not connect
and list). A hang of P0 blocks nothing: like every hang it says nothing of the promise, and each property reports its
own."""

Status = Literal["passed", "failed", "hung", "blocked", "error", "not_applicable", "fell_back"]
MARKS: dict[str, str] = {
    "passed": "holds",
    "failed": "FAILS",
    "hung": "HUNG",
    "blocked": "blocked",
    "error": "ERROR",
    "not_applicable": "n/a",
    "fell_back": "fell back",
}
"""Each status's mark, as `check`, the HTML matrix and docs/matrix.md show it."""
_STATUSES = tuple(MARKS)


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict for one bridge in one protocol era (`era`).

    `status` is "passed", "failed" (the bridge broke the property: `counterexample` is the shortest trace
    found), "hung" (the bridge did not finish an example in its time limit: `counterexample` says in which step,
    after how long, with the handler runs so far; the property's promise was not judged, unless it is about
    bounded waits, where a hang is "failed") or "error" (the harness or the adapter raised: `counterexample`
    holds what raised, with its traceback; nothing is known about the bridge). "blocked": the bridge fails P0,
    connecting to a valid server and listing its tools, in this era: the property was not checked, and is not
    held; `counterexample` is P0's, and the note says so. Two more say there is no verdict in this era, never
    that the property holds: "not_applicable" (the property does not apply to this bridge in this era, and its
    one note says why: it has no meaning in the era, as P5 in the stateless era and P5s in the handshake era, or
    it needs a capability the adapter does not declare, as P8 approvals and P9 a tool cache) and "fell_back" (in
    the stateless era, the bridge spoke the handshake era to a server of both eras; `counterexample` shows how).
    `examples` counts the examples run, declared cases included and shrinking excluded; `declared` how many of
    them were declared cases; `coverage` how many examples exercised each fault class and call kind; `notes` say
    what limited the run (a budget that ran out, fewer examples asked for than there are declared cases, why the
    property does not apply).
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
    inputs: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    """For "failed" and "hung": the inputs of the counterexample's example, what `replay_example` runs again."""
    found_as: str | None = field(default=None, repr=False, compare=False)
    """For "failed" and "hung": which example the counterexample is, "drawn" or "declared case 3 of 20"."""
    violations: Mapping[str, int] = field(default_factory=dict)
    """The referee's rules the bridge's messages broke in the examples (`docs/referee.md`), by rule id: how many
    messages broke each. What the server saw, beside the verdict and never part of it."""
    violation_shown: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The first violation of each rule in `violations`, as the referee says it (`rule at path: message`)."""
    held_as: str | None = None
    """For "passed": the adapter's declaration the pass rests on (P19: "per-call sessions declared"), which the
    mark shows; None for a pass of the examples alone."""

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
    def blocked(self) -> bool:
        """Whether the property was not checked because the bridge fails P0 in this era: never a pass."""
        return self.status == "blocked"

    @property
    def not_applicable(self) -> bool:
        """Whether the property does not apply to this bridge in this era (the note says why): never a pass."""
        return self.status == "not_applicable"

    @property
    def applies(self) -> bool:
        """Whether there is a verdict in this era: not "not_applicable", "fell_back" or "blocked"."""
        return self.status not in ("not_applicable", "fell_back", "blocked")

    @property
    def mark(self) -> str:
        """The verdict as `check` prints it: holds, FAILS, HUNG, blocked, ERROR, n/a or fell back; a pass that rests
        on a declaration says which (`holds (per-call sessions declared)`)."""
        if self.status == "passed" and self.held_as:
            return f"{MARKS['passed']} ({self.held_as})"
        return MARKS[self.status]

    def coverage_line(self) -> str:
        """`20 declared + 80 drawn; Drop() 12, EndStream 9, ...`: how often each class was exercised."""
        if self.status == "not_applicable":
            return f"no examples: {self.notes[0] if self.notes else 'it does not apply'}"
        if self.status == "blocked":
            return f"no examples: {self.notes[0] if self.notes else 'blocked'}"
        if self.status == "fell_back":
            return "no examples: the bridge spoke the handshake era to the stateless column's server"
        drawn = self.examples - self.declared
        counts = ", ".join(f"{label} {count}" for label, count in sorted(self.coverage.items()))
        return f"{self.declared} declared + {drawn} drawn; {counts or 'nothing'}"


def failure_status(prop: Property, hang: bool) -> Status:
    """A violation's status: "hung" for a hang, unless waiting without end is what the property is about."""
    return "hung" if hang and not prop.hang_fails else "failed"
