"""The faults the properties share: the call kinds, the faults a `tools/call` or a listing can meet in each
era, how the coverage line labels a fault, and the lookup of a fault's row in a table keyed by its class
(the properties classify faults by tables, never by a chain of `isinstance`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS

if TYPE_CHECKING:
    from mcp_testkit.contract._harness import BridgeFacts

__all__ = [
    "BYTE_CALL_CASES",
    "BYTE_FAULTS",
    "CALL_KINDS",
    "CUT_FAULTS",
    "LISTING_CASES",
    "by_class",
    "call_faults",
    "fault_label",
    "late_answer",
    "legal_in",
    "may_end_listing",
    "transient_faults",
]

Row = TypeVar("Row")

CALL_KINDS = ("read", "idempotent", "write")
"""How a tool is called: a read (`readOnlyHint`), an idempotent write (`idempotentHint`), a write (no hints)."""


def by_class(table: Mapping[type[faults.Fault], Row], fault: faults.Fault) -> Row | None:
    """The row of `table` for `fault`'s class, or for the nearest of its base classes that has one."""
    for cls in type(fault).__mro__:
        if cls in table:
            return table[cls]
    return None


def late_answer(timeout_s: float) -> faults.LateAnswer:
    """The answer of a call that ran, sent well after a client waiting `timeout_s` has given up."""
    return faults.LateAnswer(round(timeout_s * 2 + 0.5, 3))


_LABELS: dict[type[faults.Fault], Callable[[Any], str]] = {
    faults.Drop: lambda fault: "Drop(after_execution=True)" if fault.after_execution else "Drop()",
    faults.ResetPeer: lambda fault: "ResetPeer()" if fault.after_execution else "ResetPeer(after_execution=False)",
    faults.HttpStatus: lambda fault: f"HttpStatus({fault.status})",
    faults.Restart: lambda fault: f"Restart({fault.unknown_session_status})",
    faults.BreakStream: lambda fault: f"BreakStream({fault.after_events})",
    faults.CatalogueChange: lambda fault: "CatalogueChange(add)" if fault.add else "CatalogueChange(remove)",
}
"""The fault classes whose coverage label names a field, since each value of it is a case of its own."""


def fault_label(fault: faults.Fault) -> str:
    """The fault's class as the coverage line counts it: `Drop()`, `Drop(after_execution=True)`, `HttpStatus(503)`."""
    label = by_class(_LABELS, fault)
    return label(fault) if label is not None else type(fault).__name__


def legal_in(era: str, fault: faults.Fault) -> bool:
    """Whether `fault` is no fault at all in `era` (its class's `legal_in_eras`): an empty-string cursor is a legal
    page of 2026-07-28."""
    return era in fault.legal_in_eras


def may_end_listing(era: str, fault: faults.Fault) -> bool:
    """Whether a client may read the page `fault` hits as the listing's last in `era` (its class's
    `may_end_listing_in`): an empty-string cursor in the handshake era, whose spec does not say what "" is."""
    return era in fault.may_end_listing_in


_STATELESS_CALL_FAULTS: tuple[faults.Fault, ...] = (
    faults.HeaderMismatch(),
    faults.UnsupportedVersion(),
    faults.MissingCapability(),
    faults.EraDowngrade(),
)
"""The stateless era's own refusals of a call: a -32020 (the bridge's mirrored headers, as the server
reads them; a careful bridge lists again and resends once), a -32022 offering the server's versions
(renegotiated once), a -32021, and a half-upgraded deployment that refuses stateless requests as a
handshake-era server does."""
_ERA_CALL_FAULTS: dict[str, tuple[faults.Fault, ...]] = {HANDSHAKE: (), STATELESS: _STATELESS_CALL_FAULTS}
"""The faults of a call that only one era has, beside those of both that mean something there."""


def _of_era(era: str, chosen: list[faults.Fault]) -> list[faults.Fault]:
    """The faults of `chosen` that mean something in `era`: no session faults in the stateless era."""
    return [fault for fault in chosen if era in fault.eras]


def call_faults(facts: BridgeFacts, *, auth: bool) -> list[faults.Fault]:
    """One fault of every class a `tools/call` can meet in the era checked, simplest first."""
    chosen: list[faults.Fault] = [
        faults.ErrorResult("scripted tool error"),
        faults.ProtocolError(-32603, "scripted failure"),
        faults.Delay(0.001),
        faults.Drop(),
        faults.Drop(after_execution=True),
        faults.TruncateBody(),
        faults.EndStream(),
        faults.MalformedSse(),
        # The stream cut after the answer's event (a resumable one, handshake era only), or before any event.
        faults.BreakStream(),
        faults.BreakStream(after_events=0),
        faults.Accepted(),
        faults.WrongContentType("text/html"),
        faults.LoseSession(),
        faults.Restart(),
        faults.Restart(unknown_session_status=400),
        faults.HttpStatus(400),
        faults.HttpStatus(404),
        faults.HttpStatus(429),
        faults.HttpStatus(500),
        faults.HttpStatus(503),
    ]
    if auth:
        chosen += [faults.HttpStatus(401), faults.HttpStatus(403)]
    if facts.timeout_s is not None:
        chosen.append(late_answer(facts.timeout_s))
    return [*_of_era(facts.era, chosen), *_ERA_CALL_FAULTS[facts.era]]


BYTE_FAULTS: tuple[faults.Fault, ...] = (
    faults.Latency(0.01, jitter_s=0.005, seed=1),
    faults.Bandwidth(bytes_per_s=4000),
    faults.Slice(seed=1, gap_s=0.001),
    faults.SlowClose(delay_s=0.01),
)
"""The answer's bytes late, paced, sliced, or its connection closed late: every byte arrives, well within any
bridge's wait, so a careful bridge's outcome does not change (`ok`, the handler run once)."""

CUT_FAULTS: tuple[faults.Fault, ...] = (
    faults.ResetPeer(),
    faults.ResetPeer(after_execution=False),
    faults.LimitData(bytes=16),
)
"""The connection reset after the call ran (the client never hears) or before it ran, or closed mid-answer."""

BYTE_CALL_CASES: tuple[tuple[str, faults.Fault], ...] = (
    ("read", BYTE_FAULTS[0]),
    ("idempotent", BYTE_FAULTS[1]),
    ("write", BYTE_FAULTS[2]),
    ("read", BYTE_FAULTS[3]),
    ("write", CUT_FAULTS[0]),
    ("read", CUT_FAULTS[0]),
    ("write", CUT_FAULTS[2]),
)
"""The byte faults as P6 meets them, each on the call kinds where its row says something (one kind for those whose
row is `ok` whatever the kind), so that P6's declared cases leave room for draws at the default 100 examples."""


def transient_faults(facts: BridgeFacts) -> list[faults.Fault]:
    """What a resilient bridge resends a read after: lost connections (dropped, reset, cut mid-answer), lost
    sessions (in the handshake era), and timeouts."""
    chosen: list[faults.Fault] = [
        faults.Drop(),
        faults.Drop(after_execution=True),
        faults.ResetPeer(),
        faults.ResetPeer(after_execution=False),
        faults.LimitData(bytes=16),
        faults.EndStream(),
        faults.BreakStream(after_events=0),
        faults.LoseSession(),
        faults.Restart(),
        faults.Restart(unknown_session_status=400),
    ]
    chosen = _of_era(facts.era, chosen)
    if facts.timeout_s is not None:
        chosen.append(late_answer(facts.timeout_s))
    return chosen


LISTING_CASES: list[faults.Fault] = [
    faults.DuplicateTool(1),
    faults.DuplicateTool(2),
    faults.RepeatCursor(2),
    faults.StuckCursor(1),
    faults.EmptyCursor(1),
    faults.PageError(1),
    faults.PageError(2),
    faults.MalformedPage(2),
    faults.InvalidCursor(2),
    faults.EndlessPages(),
    # What a bridge may take in its stride: the catalogue it reads is still whole (`connect_may_succeed`).
    faults.SlowPage(2, seconds=0.01),
    faults.ListChanged(1),
    faults.CatalogueChange(2, add=("z",)),
    faults.CatalogueChange(2, remove=("a",)),
]
"""One fault of every listing fault class, met at connect (P1, P6), on a catalogue of `a`, `b` and `c`."""
