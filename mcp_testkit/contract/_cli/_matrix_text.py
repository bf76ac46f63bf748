"""The guarantee matrix as `mcp-testkit check` prints it: a row per property and era, a column per bridge, and under
it the counterexample of every failure, hang or error."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcp_testkit.contract._cli._report import Verdicts
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["counterexamples", "matrix"]

_TITLE_WIDTH = 56
_ERA_WIDTH = 11


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


def counterexamples(verdicts: Verdicts, out: TextIO) -> None:
    """Under the matrix, each failure, hang and error with its counterexample; a fallback once per bridge and era."""
    for label, results in verdicts.items():
        shown_fallback: set[str] = set()
        for (property_id, era), result in results.items():
            if result.passed or result.not_applicable or result.status == "not_run":
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
            for line in (result.counterexample or "(no counterexample)").splitlines():
                print(f"    {line}", file=out)
