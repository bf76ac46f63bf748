"""What `mcp-testkit check` expects of the bridges it runs: the failures each shipped bridge is known for, the
opening lines that say what runs (and about how long), and the judgement of a run's verdicts against what is known:
what was expected, what was not, and the exit status that follows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.contract._cli._adapter_specs import DEFAULTS, REFERENCE, SDK_AUTO, SDK_LEGACY, SHIPPED

if TYPE_CHECKING:
    import argparse

    from mcp_testkit.contract._cli._report import Verdicts
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["KNOWN_FAILS", "SDK_VERDICTS", "Judgement", "documented_in", "judge", "opening_lines"]

FELL_BACK = "fell back"
KNOWN_FAILS: dict[str, dict[str, tuple[str, ...] | str]] = {
    REFERENCE: {HANDSHAKE: (), STATELESS: ()},
    # P13: a connection lost under one of several calls in flight ends the SDK's one session (docs/matrix.md).
    SDK_AUTO: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: ("P1", "P4", "P6", "P13")},
    SDK_LEGACY: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: FELL_BACK},
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P7", "P13")},
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13")},
    # P13: its agents call tools in parallel, and a connection lost under one of them fails the others unsent.
    "mcp_testkit.adapters.openai_agents:ServerAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P10", "P13")},
    "mcp_testkit.adapters.openai_agents:InvokeAdapter": {
        HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10", "P13")
    },
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter": {HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10")},
}
"""What each shipped bridge is expected to fail, era by era: the reference bridge nothing, the SDK client its
known gaps (in legacy mode it never speaks the stateless era, so there it falls back), the third-party bridges
what docs/matrix.md records (for the handshake era; their stateless era is not documented yet). Only
failures are listed: P8 and P9 are n/a, never failed, for every bridge here but the reference one (no
adapter of theirs declares approvals or a tool cache). Expectations hold for a shipped bridge checked without being
named (the default run, `--all-installed`); a bridge named on the command line is expected to hold everything."""
SDK_VERDICTS = 'docs/contract.md, "The SDK client\'s verdicts"'
_MATRIX_VERDICTS = "docs/matrix.md"
_ERA_WORDS = {HANDSHAKE: "the handshake era", STATELESS: "the stateless (2026-07-28) era"}
_SECONDS_PER_RUN = (1.0, 3.5)
"""About how long one bridge takes in one era in-process on virtual time, all properties: a second, and 3.5 more at
100 examples per property (README's `mcp-testkit check`: 6 such runs in 27 s on 2 cores; at 20 examples, 11 s)."""


def _spans(chosen: Sequence[str]) -> str:
    """The numbered ids of `chosen` as spans, `P0-P14, P19` (an id with a letter, P5s, goes with its number's)."""
    numbers = sorted({int(pid[1:].rstrip("s")) for pid in chosen})
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][-1] + 1:
            spans[-1].append(number)
        else:
            spans.append([number])
    return ", ".join(f"P{span[0]}" if len(span) == 1 else f"P{span[0]}-P{span[-1]}" for span in spans)


def opening_lines(
    labels: dict[str, str], chosen: Sequence[str], eras: Sequence[str], args: argparse.Namespace, *, named: bool
) -> list[str]:
    """The header: what this run compares and about how long it takes, and (for the default run) that the SDK
    client's failures are known."""
    properties = ", ".join(chosen) if len(chosen) <= 3 else f"{len(chosen)} properties ({_spans(chosen)})"
    where = "both eras (the handshake and 2026-07-28)" if len(eras) == 2 else _ERA_WORDS[eras[0]]
    how_long = _how_long(len(labels), chosen, eras, args)
    lines = [
        f"mcp-testkit check: {properties} against {', '.join(labels.values())}, in {where}, "
        f"{args.examples} example{'s' * (args.examples != 1)} per property; {how_long}."
    ]
    if not named and any(spec in KNOWN_FAILS and spec != REFERENCE for spec in labels):
        lines.append(
            "The reference bridge holds every property; the SDK client's failures are known and expected "
            f"({SDK_VERDICTS})."
        )
    return lines


def _how_long(bridges: int, chosen: Sequence[str], eras: Sequence[str], args: argparse.Namespace) -> str:
    """`about 30 s` in-process on virtual time (a rough guess from the counts); over a socket, for a driver or on
    the real clock every declared wait is waited out, which only the bridge's timeouts tell."""
    if args.transport == "socket" or args.drivers or args.clock == "real":
        return "over a socket or on the real clock every wait the bridges declare is waited out: minutes"
    from mcp_testkit.contract._properties import PROPERTIES

    fixed, per_hundred = _SECONDS_PER_RUN
    per_run = (fixed + per_hundred * min(args.examples, 100) / 100) * len(chosen) / len(PROPERTIES)
    seconds = bridges * len(eras) * per_run
    return f"about {max(5, round(seconds / 5) * 5)} s" if seconds >= 3 else "a few seconds"


@dataclass
class Judgement:
    """A run's verdicts held against what is known of its bridges: each unexpected one (a failure, hang or fallback
    of a bridge named or known to hold it, and every error), the expected ones folded, and the exit status."""

    unexpected: list[tuple[str, PropertyResult]] = field(default_factory=list)
    """(bridge, result) of each failure, hang, error or fallback nobody expected; a fallback once per bridge and era."""
    expected: dict[str, list[PropertyResult]] = field(default_factory=dict)
    """Per bridge, the failures (and fallbacks, once per era) that are known of it."""
    undocumented: dict[str, str] = field(default_factory=dict)
    """Per bridge, the eras of a shipped bridge whose verdicts are not documented yet (reported, not judged)."""
    notes: list[str] = field(default_factory=list)
    """What differs from the docs without failing: a known failure not found, a fallback that did not happen."""
    failed_named: list[str] = field(default_factory=list)

    @property
    def errored(self) -> list[str]:
        return list(dict.fromkeys(label for label, result in self.unexpected if result.error))

    @property
    def status(self) -> int:
        """3 when anything could not be checked (an adapter or the harness raised), 1 when a verdict nobody
        expected fails, hangs or falls back, else 0."""
        if self.errored:
            return 3
        return 1 if self.unexpected else 0


def judge(labels: dict[str, str], verdicts: Verdicts, eras: Sequence[str], named: Sequence[str]) -> Judgement:
    """Hold each bridge's verdicts against what is known of it: nothing for a bridge named on the command line
    (it should hold everything), KNOWN_FAILS for a shipped one checked by default or with `--all-installed`."""
    judgement = Judgement()
    for spec, label in labels.items():
        results = verdicts[label]
        known = {} if spec in named else KNOWN_FAILS.get(spec, {})
        for era in eras:
            column = [result for (_, at), result in results.items() if at == era]
            if spec not in named and spec in SHIPPED and era not in known:
                judgement.undocumented[label] = era
                _fold(judgement, label, column, wanted=None)
            else:
                _hold(judgement, label, era, column, known.get(era, ()))
        if spec in named and any(r.failed or r.hung or r.blocked or r.status == "fell_back" for r in results.values()):
            judgement.failed_named.append(label)
    return judgement


def _fold(judgement: Judgement, label: str, column: list[PropertyResult], wanted: Sequence[str] | None) -> None:
    """Add the failures of one era to the expected ones (all of them when `wanted` is None), the others to the
    unexpected. Blocked properties stand for P0's failure when P0 itself was not asked for: the first of them, once
    (with P0 in the run, its own failure says it)."""
    from mcp_testkit.contract._verdict import CONNECTS

    blocked = [r for r in column if r.blocked]
    if blocked and not any(r.property_id == CONNECTS for r in column):
        if wanted is None or CONNECTS in wanted:
            judgement.expected.setdefault(label, []).append(blocked[0])
        else:
            judgement.unexpected.append((label, blocked[0]))
    for result in column:
        if result.error:
            judgement.unexpected.append((label, result))
        elif result.failed or result.hung:
            if wanted is None or result.property_id in wanted:
                judgement.expected.setdefault(label, []).append(result)
            else:
                judgement.unexpected.append((label, result))


def _hold(
    judgement: Judgement, label: str, era: str, column: list[PropertyResult], wanted: tuple[str, ...] | str
) -> None:
    """Judge one bridge's verdicts in one era against the failures expected there (or its expected fallback)."""
    fell_back = [result for result in column if result.status == "fell_back"]
    if fell_back:
        if wanted == FELL_BACK:
            judgement.expected.setdefault(label, []).append(fell_back[0])
        else:
            judgement.unexpected.append((label, fell_back[0]))
        _fold(judgement, label, [r for r in column if r.status != "fell_back"], wanted=())
        return
    if wanted == FELL_BACK:
        judgement.notes.append(
            f"{label} speaks the {era} era here, where it is known to fall back (update {SDK_VERDICTS})"
        )
        wanted = ()
    _fold(judgement, label, column, wanted=wanted)
    held = [result.property_id for result in column if result.passed and result.property_id in wanted]
    if held:
        judgement.notes.append(
            f"{label} holds {', '.join(held)} in the {era} era here, which it is known to fail (too few --examples to "
            "find the known failure)"
        )


def documented_in(spec: str) -> str:
    """Where the verdicts of a shipped bridge are written down."""
    return SDK_VERDICTS if spec in DEFAULTS else _MATRIX_VERDICTS
