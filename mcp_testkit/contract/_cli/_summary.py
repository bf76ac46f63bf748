"""The lines `mcp-testkit check` prints under its matrix: one per verdict nobody expected (with what the
counterexample found), one folded line for the expected ones, what does not apply to whom, and the verdict line
that says what the exit status means. Each line at most `WIDTH` characters."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mcp_testkit.contract._cli._expectations import Judgement, documented_in
from mcp_testkit.contract._cli._matrix_text import TRACEBACK

if TYPE_CHECKING:
    from mcp_testkit.contract._cli._report import Verdicts
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["WIDTH", "finding", "fit", "referee_lines", "summary_lines", "verdict_line"]

WIDTH = 200
_HEADER = re.compile(r"^P\w+ counterexample \(")
_OTHERS_PROMISE = re.compile(r"\bbreaks (P\d+s?)'s promise\b")


def fit(text: str, width: int = WIDTH) -> str:
    """`text`, cut to `width` characters with `...` when longer."""
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def finding(result: PropertyResult) -> str:
    """What a failure, hang or error found, in one line: the first line of its counterexample after the example's
    inputs (never a traceback), else its first note."""
    lines = [line.strip() for line in (result.counterexample or "").splitlines()]
    start = 0
    if lines and _HEADER.match(lines[0]):
        closing = next((i for i, line in enumerate(lines) if line.startswith(")")), 0)
        lines[closing] = lines[closing][1:].strip()
        start = closing
    for line in lines[start:]:
        if TRACEBACK.match(line):
            break
        if line:
            return line
    return result.notes[0] if result.notes else "(no counterexample)"


def _unexpected_line(label: str, result: PropertyResult) -> str:
    if result.status == "fell_back":
        return fit(
            f"{label} fell back to the handshake era in the {result.era} era: no verdict there (a bridge of the "
            "handshake era only is checked with --era handshake)"
        )
    if result.blocked:  # P0 not asked for: its declared cases ran first, and this stands for its failure
        return fit(
            f"{label}: P0 FAILS in the {result.era} era (its declared cases, run before {result.property_id}): "
            f"{finding(result)}"
        )
    what = "could not be checked" if result.error else result.mark
    return fit(f"{label}: {result.property_id} {what} in the {result.era} era: {finding(result)}")


def summary_lines(
    judgement: Judgement, labels: dict[str, str], verdicts: Verdicts, chosen: Sequence[str], eras: Sequence[str]
) -> list[str]:
    """The unexpected verdicts (a line each), the expected ones (one line), the notes, and what does not apply."""
    lines = [_unexpected_line(label, result) for label, result in judgement.unexpected]
    lines += _promise_lines(judgement)
    expected = _expected_line(judgement, labels)
    if expected:
        lines.append(expected)
    lines += [fit(f"Note: {note}.") for note in judgement.notes]
    lines += _blocked_lines(verdicts, eras)
    lines += referee_lines(verdicts)
    lines += _not_applicable_lines(verdicts, chosen, eras)
    return lines


def promise_of(result: PropertyResult) -> str:
    """The property whose promise a failure breaks: its own, or the one its finding names (a write run twice in a P6
    example breaks P2's)."""
    named = _OTHERS_PROMISE.search(finding(result))
    return named.group(1) if named else result.property_id


def _promise_lines(judgement: Judgement) -> list[str]:
    """`mybridge breaks 2 promises: P2 (in examples of P2, P6, P12), P4 (P4)`: each broken promise once per bridge,
    with the properties whose examples met it; said only where some failure broke another property's promise."""
    by_bridge: dict[str, dict[str, dict[str, None]]] = {}
    for label, result in judgement.unexpected:
        if result.failed:
            by_bridge.setdefault(label, {}).setdefault(promise_of(result), {})[result.property_id] = None
    lines = []
    for label, promises in by_bridge.items():
        if all(list(met) == [promise] for promise, met in promises.items()):
            continue
        count = f"{len(promises)} promise{'s' * (len(promises) != 1)}"
        said = ", ".join(f"{promise} (in examples of {', '.join(met)})" for promise, met in promises.items())
        lines.append(fit(f"{label} breaks {count}: {said}."))
    return lines


def _blocked_lines(verdicts: Verdicts, eras: Sequence[str]) -> list[str]:
    """`P1, P2, P3 are blocked for smolagents in the handshake era (...)`: what a bridge failing P0 was not checked
    on, a line per bridge and era."""
    from mcp_testkit.contract._verdict import CONNECTS

    lines = []
    for label, results in verdicts.items():
        for era in eras:
            blocked = [pid for (pid, at), result in results.items() if at == era and result.blocked]
            if not blocked:
                continue
            ids = ", ".join(blocked)
            were = "it was" if len(blocked) == 1 else "they were"
            lines.append(
                fit(
                    f"{ids} {'is' if len(blocked) == 1 else 'are'} blocked for {label} in the {era} era: it fails "
                    f"{CONNECTS}, so {were} not checked (no verdict, never held)."
                )
            )
    return lines


def referee_lines(verdicts: Verdicts) -> list[str]:
    """`mybridge's messages broke MCP's rules: version-header 12 (P1, P2), schema 3 (P6); first: ...`: what the
    referee found in each bridge's traffic over all its examples (docs/referee.md), a line per bridge that broke a
    rule. Beside the verdicts, never part of them."""
    lines = []
    for label, results in verdicts.items():
        counts: dict[str, int] = {}
        met: dict[str, dict[str, None]] = {}
        shown: dict[str, str] = {}
        for (pid, _era), result in results.items():
            for rule, count in result.violations.items():
                counts[rule] = counts.get(rule, 0) + count
                met.setdefault(rule, {})[pid] = None
                shown.setdefault(rule, result.violation_shown.get(rule, rule))
        if not counts:
            continue
        rules = sorted(counts, key=lambda rule: -counts[rule])
        said = ", ".join(f"{rule} {counts[rule]} (in {', '.join(met[rule])})" for rule in rules)
        lines.append(
            fit(f"{label}'s messages broke MCP's rules (docs/referee.md, no verdict): {said}; first: {shown[rules[0]]}")
        )
    return lines


def _expected_line(judgement: Judgement, labels: dict[str, str]) -> str:
    """`Expected, as documented (...): sdk-client (auto) 9 failures; ...`: the known failures, counted per bridge."""
    specs = {label: spec for spec, label in labels.items()}
    parts, where = [], []
    for label, results in judgement.expected.items():
        failures = sum(1 for result in results if result.status != "fell_back")
        fell_back = [result.era for result in results if result.status == "fell_back"]
        part = f"{label} {failures} failure{'s' * (failures != 1)}"
        if fell_back:
            part += f" and its fallback in the {' and '.join(fell_back)} era"
        if label in judgement.undocumented:
            part += f" (its {judgement.undocumented[label]} era not documented yet)"
        parts.append(part)
        where.append(documented_in(specs[label]))
    if not parts:
        return ""
    line = f"Expected, as documented ({'; '.join(dict.fromkeys(where))}): {'; '.join(parts)}."
    return line if len(line) <= WIDTH else "\n".join(fit(f"Expected: {part}.") for part in parts)


def _not_applicable_lines(verdicts: Verdicts, chosen: Sequence[str], eras: Sequence[str]) -> list[str]:
    """`P9, P14 do not apply to sdk-client (auto), sdk-client (legacy): it needs the 'tool_cache' capability, ...`:
    what each bridge gets no verdict on, one line per reason (the capability it lacks, or what its adapter says the
    contract cannot do); a property of another era (P5, P5s) goes unsaid."""
    from mcp_testkit.contract._properties import PROPERTIES

    by_reason: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
    for label, results in verdicts.items():
        for p in chosen:
            for era in eras:
                r = results.get((p, era))
                if era in PROPERTIES[p].eras and r is not None and r.not_applicable:
                    pids, bridges = by_reason.setdefault(r.notes[0] if r.notes else "no reason given", ({}, {}))
                    pids[p] = None
                    bridges[label] = None
    return [
        fit(
            f"{', '.join(pids)} {'does' if len(pids) == 1 else 'do'} not apply to {', '.join(bridges)}: {reason} "
            "(n/a, never held)."
        )
        for reason, (pids, bridges) in by_reason.items()
    ]


def verdict_line(judgement: Judgement, eras: Sequence[str], *, named: bool) -> str:
    """The last line: the exit status and what it means."""
    status = judgement.status
    if status == 3:
        return fit(
            f"Exit status 3: {', '.join(judgement.errored)}: a property could not be checked (ERROR above: the "
            "adapter, the harness or a limit given stopped it), which is no verdict on the bridge; --debug prints any "
            "traceback."
        )
    if judgement.failed_named:
        which = "; ".join(_shortfalls(label, judgement, eras) for label in judgement.failed_named)
        if any(r.status == "fell_back" for label, r in judgement.unexpected if label in judgement.failed_named):
            return fit(
                f"Exit status 1: a bridge named on the command line fails a property, or fell back ({which}); check a "
                "bridge of the handshake era only with --era handshake."
            )
        return fit(f"Exit status 1: a bridge named on the command line fails a property ({which}).")
    if status == 1:
        count = len(judgement.unexpected)
        differ = "verdicts above differ" if count != 1 else "verdict above differs"
        return (
            f"Exit status 1: {count} {differ} from what is documented of the shipped bridges (a bug: please report it)."
        )
    if named:
        return "Exit status 0: every bridge named on the command line holds every property checked."
    return "Exit status 0: every property holds or fails as documented; name your bridge (module:factory) to check it."


def _shortfalls(label: str, judgement: Judgement, eras: Sequence[str]) -> str:
    """`mybridge: P1, P5 in the handshake era; fell back in the stateless era`."""
    parts = []
    for era in eras:
        mine = [r for name, r in judgement.unexpected if name == label and r.era == era]
        if any(r.status == "fell_back" for r in mine):
            parts.append(f"fell back in the {era} era")
        elif ids := [_shortfall(r) for r in mine if r.failed or r.hung or r.blocked]:
            parts.append(f"{', '.join(ids)} in the {era} era")
    return f"{label}: {'; '.join(parts)}"


def _shortfall(result: PropertyResult) -> str:
    """`P1`, `P11 (hung)`, or `P0` for a property P0's failure blocks."""
    if result.blocked:
        return "P0"
    return result.property_id + (" (hung)" if result.hung else "")
