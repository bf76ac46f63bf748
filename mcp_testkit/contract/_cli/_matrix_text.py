"""The guarantee matrix as `mcp-testkit check` prints it: a row per property and era, a column per bridge, and under
it the counterexample of every failure, hang or error."""

from __future__ import annotations

import itertools
import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcp_testkit.contract._cli._report import Verdicts
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["TRACEBACK", "counterexamples", "matrix"]

_TITLE_WIDTH = 56
_ERA_WIDTH = 11
TRACEBACK = re.compile(r"^\s*(\+ )?(Exception Group )?Traceback \(most recent call last\):")
"""The first line of a traceback in a counterexample (one of an exception group too)."""


def matrix(verdicts: Verdicts, chosen: Sequence[str], eras: Sequence[str], out: TextIO) -> None:
    """A row per property and era, a column per bridge; titles wrapped in their column, never cut."""
    from mcp_testkit.contract._properties import PROPERTIES

    labels = list(verdicts)
    widths = [max(len(label), 9) for label in labels]
    header = (
        "property".ljust(_TITLE_WIDTH + 2)
        + "era".ljust(_ERA_WIDTH)
        + "  ".join(label.ljust(width) for label, width in zip(labels, widths, strict=True))
    )
    print(header.rstrip(), file=out)
    print("-" * len(header.rstrip()), file=out)
    for property_id in chosen:
        title = textwrap.wrap(f"{property_id} {PROPERTIES[property_id].title}", _TITLE_WIDTH, subsequent_indent="    ")
        for first, era in itertools.zip_longest(title, eras, fillvalue=""):
            cells = [
                _mark(verdicts[label].get((property_id, era))).ljust(width)
                for label, width in zip(labels, widths, strict=True)
            ] if era else []  # fmt: skip
            print((first.ljust(_TITLE_WIDTH + 2) + era.ljust(_ERA_WIDTH) + "  ".join(cells)).rstrip(), file=out)


def _mark(result: PropertyResult | None) -> str:
    """A cell: the verdict's mark, or '-' where there is none (the run was cut before it)."""
    return result.mark if result is not None else "-"


def counterexamples(verdicts: Verdicts, out: TextIO, *, tracebacks: bool, notes: bool = False) -> None:
    """Each failure, hang and error with its counterexample (a traceback only with `tracebacks`), a fallback once
    per bridge and era; with `notes`, each verdict's notes too (what limited its run)."""
    for label, results in verdicts.items():
        shown_fallback: set[str] = set()
        shown_block: set[str] = set()
        for (property_id, era), result in results.items():
            said = [note for note in result.notes if not result.not_applicable] if notes else []
            if result.blocked and ("P0", era) not in results and era not in shown_block:
                shown_block.add(era)  # P0 not asked for: its counterexample, once, before what it blocks
                print(
                    f"\n{label} fails P0 in the {era} era (its declared cases, run first), blocking the rest:", file=out
                )
                for line in _shown(result.counterexample or "(no counterexample)", tracebacks=tracebacks):
                    print(f"    {line}", file=out)
            if result.passed or result.not_applicable or result.blocked:  # a blocked one: P0's counterexample
                if said:
                    print(f"\n{label}: {property_id} {result.mark} in the {era} era, with notes:", file=out)
                    for note in said:
                        print(f"    note: {note}", file=out)
                continue
            if result.status == "fell_back":
                if era in shown_fallback:
                    continue
                shown_fallback.add(era)
                print(f"\n{label} has no verdict in the {era} era (it fell back to the handshake era):", file=out)
            elif result.error:
                what = f"{property_id} ({result.title}) could not be checked in the {era} era (error)"
                print(f"\n{label}: {what}:", file=out)
            elif result.hung:
                print(f"\n{label} hung in an example of {property_id} ({result.title}) in the {era} era:", file=out)
            else:
                print(f"\n{label} fails {property_id} ({result.title}) in the {era} era:", file=out)
            for line in _shown(result.counterexample or "(no counterexample)", tracebacks=tracebacks):
                print(f"    {line}", file=out)
            for note in said:
                print(f"    note: {note}", file=out)


def _shown(text: str, *, tracebacks: bool) -> list[str]:
    """The lines of a counterexample; without `tracebacks`, a traceback in it is left out, and a line says so."""
    lines = text.splitlines()
    if tracebacks:
        return lines
    cut = next((i for i, line in enumerate(lines) if TRACEBACK.match(line)), None)
    return lines if cut is None else [*lines[:cut], "(its traceback: --debug prints it)"]
