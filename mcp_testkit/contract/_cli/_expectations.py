"""What `mcp-testkit check` expects of the bridges it runs: the failures each shipped bridge is known for, the
opening line that says so, and the closing line that holds the verdicts against them and says what the exit status
means."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.contract._cli._adapter_specs import DEFAULTS, REFERENCE, SDK_AUTO, SDK_LEGACY, SHIPPED

if TYPE_CHECKING:
    import argparse

    from mcp_testkit.contract._cli._report import Verdicts
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["KNOWN_FAILS", "closing_line", "opening_line", "unsettled"]

_FELL_BACK = "fell back"
KNOWN_FAILS: dict[str, dict[str, tuple[str, ...] | str]] = {
    REFERENCE: {HANDSHAKE: (), STATELESS: ()},
    # P13: a connection lost under one of several calls in flight ends the SDK's one session (docs/matrix.md).
    SDK_AUTO: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: ("P1", "P4", "P6", "P13")},
    SDK_LEGACY: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: _FELL_BACK},
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P7", "P13")},
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13")},
    "mcp_testkit.adapters.openai_agents:ServerAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P10")},
    "mcp_testkit.adapters.openai_agents:InvokeAdapter": {HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10")},
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter": {HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10")},
}
"""What each shipped bridge is expected to fail, era by era: the reference bridge nothing, the SDK client its
known gaps (in legacy mode it never speaks the stateless era, so there it falls back), the third-party bridges
what docs/matrix.md records (for the handshake era; their stateless era is not documented yet). Only
failures are listed: P8 and P9 are n/a, never failed, for every bridge here but the reference one (no
adapter of theirs declares approvals or a tool cache), and the closing line says so per bridge."""
_SDK_VERDICTS = 'docs/contract.md, "The SDK client\'s verdicts"'
_MATRIX_VERDICTS = "docs/matrix.md"
_ERA_WORDS = {HANDSHAKE: "the handshake era", STATELESS: "the stateless (2026-07-28) era"}
_HOLDS = "holds every property checked"


def opening_line(
    labels: dict[str, str], chosen: Sequence[str], eras: Sequence[str], args: argparse.Namespace, *, named: bool
) -> str:
    """The first line: what this run compares, and (for the default run) that the SDK client's failures are known."""
    properties = ", ".join(chosen) if len(chosen) <= 3 else f"{len(chosen)} properties ({chosen[0]}-{chosen[-1]})"
    where = "both eras (the handshake and 2026-07-28)" if len(eras) == 2 else _ERA_WORDS[eras[0]]
    text = (
        f"mcp-testkit check: {properties} against {', '.join(labels.values())}, in {where}, "
        f"{args.examples} example{'s' * (args.examples != 1)} per property"
    )
    if not named and any(spec in KNOWN_FAILS and spec != REFERENCE for spec in labels):
        text += (
            "; the reference bridge holds every one, and the SDK client's failures below are known and expected "
            f"({_SDK_VERDICTS})"
        )
    return text + "."


def unsettled(results: dict[tuple[str, str], PropertyResult]) -> bool:
    """Whether a bridge fails a property or hangs, or has no verdict in an era it was checked in (it fell back)."""
    return any(r.failed or r.hung or r.status == "fell_back" for r in results.values())


def closing_line(
    labels: dict[str, str],
    verdicts: Verdicts,
    chosen: Sequence[str],
    eras: Sequence[str],
    failed_named: Sequence[str],
    *,
    named: bool,
) -> str:
    """The closing line: which verdicts were expected, any that were not, and what the exit status means."""
    run = _RunVerdicts(verdicts, chosen, eras)
    if named:
        return _named_closing(run, failed_named)
    surprises: list[str] = []
    expected = [_as_documented(run, spec, label, surprises) for spec, label in labels.items()]
    text = "Expected: " + "; ".join(expected) + "."
    if surprises:
        text += f" UNEXPECTED: {'; '.join(surprises)}."
    return text + (
        " Exit status 0: no bridge was named, so this run only reports;"
        " name yours (module:factory) to get exit status 1 when it fails a property."
    )


class _RunVerdicts:
    """The verdicts of a run as the closing line reads them: per bridge and era, what failed, fell back or did not
    apply, among the properties checked."""

    def __init__(self, verdicts: Verdicts, chosen: Sequence[str], eras: Sequence[str]) -> None:
        self.verdicts = verdicts
        self.chosen = chosen
        self.eras = eras

    def column(self, label: str, era: str) -> dict[str, PropertyResult]:
        """One bridge's verdicts in one era, by property, for the properties checked."""
        results = self.verdicts[label]
        return {p: results[p, era] for p in self.chosen}

    def failures(self, label: str, era: str) -> list[str]:
        return [
            p + (" (hung)" if result.hung else "")
            for p, result in self.column(label, era).items()
            if result.failed or result.hung
        ]

    def fell_back(self, label: str, era: str) -> bool:
        return any(result.status == "fell_back" for result in self.column(label, era).values())

    def shortfalls(self, label: str, era: str) -> list[str]:
        if self.fell_back(label, era):
            return [f"{_FELL_BACK} in the {era} era"]
        return [f"{p} in the {era} era" for p in self.failures(label, era)]

    def held(self, label: str, era: str, properties: Sequence[str]) -> list[str]:
        column = self.column(label, era)
        return [p for p in properties if column[p].passed]

    def _not_applicable(self, label: str, era: str) -> list[str]:
        """The properties of `era` that do not apply to this bridge there (those of the other era left out)."""
        from mcp_testkit.contract._properties import PROPERTIES

        column = self.column(label, era)
        return [p for p, result in column.items() if result.not_applicable and era in PROPERTIES[p].eras]

    def inapplicable(self, label: str, to: str) -> str:
        """`P8, P9 do not apply to {to} (...)`: what this bridge gets no verdict on for want of a capability or a
        declared fact (P11, P13); "" when none. A property of another era (P5, P5s) is n/a for every bridge there,
        and goes unsaid."""
        parts = {era: self._not_applicable(label, era) for era in self.eras}
        skipped = list(dict.fromkeys(p for names in parts.values() for p in names))
        if not skipped:
            return ""
        if len({tuple(names) for names in parts.values()}) == 1:
            which = ", ".join(skipped)
        else:
            which = " and ".join(f"{', '.join(names)} in the {era} era" for era, names in parts.items() if names)
        verb = "does" if len(skipped) == 1 else "do"
        return f"{which} {verb} not apply to {to} (its adapter declares no capability or fact they need)"


def _named_closing(run: _RunVerdicts, failed_named: Sequence[str]) -> str:
    """The closing line of a run that named its bridges: exit status 1 naming what failed, else 0."""
    if failed_named:
        which = "; ".join(
            f"{label}: {', '.join(said for era in run.eras for said in run.shortfalls(label, era))}"
            for label in failed_named
        )
        if any(run.fell_back(label, era) for label in failed_named for era in run.eras):
            return (
                "Exit status 1: a bridge named on the command line fails a property, or fell back to the "
                f"handshake era where the stateless era was checked ({which}); check a bridge of the handshake "
                "era only with --era handshake."
            )
        return f"Exit status 1: a bridge named on the command line fails a property ({which})."
    skipped = "; ".join(text for label in run.verdicts if (text := run.inapplicable(label, label)))
    return "Exit status 0: every bridge named on the command line holds every property checked" + (
        f"; {skipped}." if skipped else "."
    )


def _as_documented(run: _RunVerdicts, spec: str, label: str, surprises: list[str]) -> str:
    """`SDK client fails P1, P4 in both eras, as documented (...)`: one shipped bridge's verdicts against what is
    known of it; what differs is added to `surprises`."""
    said = {era: _said_in(run, spec, label, era, surprises) for era in run.eras}
    documented = any(text != _HOLDS for text in said.values())
    where = _SDK_VERDICTS if spec in DEFAULTS else _MATRIX_VERDICTS
    as_documented = f", as documented ({where})" if documented else ""
    skipped = run.inapplicable(label, "it")
    return f"{label} {_in_eras(said, run.eras)}{as_documented}" + (f", and {skipped}" if skipped else "")


def _said_in(run: _RunVerdicts, spec: str, label: str, era: str, surprises: list[str]) -> str:
    """What is known of one bridge in one era (`fails P1, P4`, `holds every property checked`...); a verdict that
    differs is added to `surprises`."""
    known = KNOWN_FAILS.get(spec, {})
    if era not in known and spec in SHIPPED:
        return "is not documented"
    wanted = known.get(era, ())
    if wanted == _FELL_BACK:
        if not run.fell_back(label, era):
            surprises.append(f"{label} speaks the {era} era here (update {_SDK_VERDICTS})")
        return "falls back to the handshake"
    fails = [p for p in wanted if p in run.chosen]
    if run.fell_back(label, era):
        surprises.append(f"{label} fell back to the handshake era in the {era} era (a bug: please report it)")
    else:
        if wrong := [p for p in run.failures(label, era) if p not in fails]:
            surprises.append(
                f"{label} fails {', '.join(wrong)} in the {era} era, which it should hold (a bug: please report it)"
            )
        if held := run.held(label, era, fails):
            surprises.append(
                f"{label} holds {', '.join(held)} in the {era} era here (too few --examples to find the known failure)"
            )
    return f"fails {', '.join(fails)}" if fails else _HOLDS


def _in_eras(parts: dict[str, str], eras: Sequence[str]) -> str:
    """`P1, P5 in the handshake era and P1 in the stateless era`, or without the era when only one is checked."""
    if len(eras) == 1:
        return parts[eras[0]]
    if len(set(parts.values())) == 1:
        return f"{parts[eras[0]]} in both eras"
    return " and ".join(f"{text} in the {era} era" for era, text in parts.items())
