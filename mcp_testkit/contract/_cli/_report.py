"""The verdicts of a `mcp-testkit check` run, and their JSON form: what `--json` writes and `--html` draws (the page
is `_matrix_html.py`'s), per bridge its spec and per `property@era` the status, counts and counterexample."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit.contract._cli._adapter_specs import label

if TYPE_CHECKING:
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["Verdicts", "report", "write_json"]

Verdicts = dict[str, dict[tuple[str, str], "PropertyResult"]]
"""Bridge label -> (property id, era) -> its result."""


def write_json(path: str, factories: Sequence[tuple[str, Any]], verdicts: Verdicts) -> None:
    """Every verdict as JSON: per bridge, its spec and per `property@era` the status, counts and counterexample;
    the file's folder is made."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        json.dump(report(factories, verdicts), file, indent=2, sort_keys=True)
        file.write("\n")


def report(factories: Sequence[tuple[str, Any]], verdicts: Verdicts) -> dict[str, Any]:
    """The verdicts as JSON data (what --json writes and --html draws); a failure keeps its example's requests."""
    specs = {label(factory, spec): spec for spec, factory in factories}
    return {
        bridge: {
            "spec": specs[bridge],
            "properties": {
                f"{pid}@{era}": {
                    "status": result.status,
                    "examples": result.examples,
                    "seconds": round(result.seconds, 2),
                    "counterexample": result.counterexample,
                    "notes": list(result.notes),
                    "coverage": dict(result.coverage),
                    "violations": dict(result.violations),
                    **({"held_as": result.held_as} if result.held_as else {}),
                    **({"journal": [record.to_json() for record in result.journal]} if result.journal else {}),
                }
                for (pid, era), result in results.items()
            },
        }
        for bridge, results in verdicts.items()
    }
