"""scripts/probe_matrix.py: the hand-written probes that check each verdict of the published matrix."""

from __future__ import annotations

import dataclasses
import functools
import runpy
import types
from pathlib import Path
from typing import Any

from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _script() -> Any:
    """scripts/probe_matrix.py's names (run as a module named probe_matrix, not as __main__)."""
    return types.SimpleNamespace(**runpy.run_path(str(ROOT / "scripts" / "probe_matrix.py"), run_name="probe_matrix"))


class _UnderDeclaredRetries(ReferenceBridgeAdapter):
    """An adapter bug: its bridge resends a read twice, and the adapter declares that it never does."""

    def __init__(self, **options: Any) -> None:
        super().__init__(retry=0, **options)

    def _config(self, url: str) -> Any:
        return dataclasses.replace(super()._config(url), retry=2)


def test_the_probes_agree_with_every_published_verdict_of_the_toolkit_columns() -> None:
    """Each probe of the reference bridge and of the SDK client confirms its cell of docs/matrix.json."""
    probes = _script()
    verdicts = probes._verdicts(ROOT / "docs" / "matrix.json", probes._matrix_script())
    columns = {ReferenceBridgeAdapter.name: ReferenceBridgeAdapter, SdkClientAdapter.name: SdkClientAdapter}
    missing = sorted(set(columns) - set(verdicts))
    assert not missing, f"docs/matrix.json has no column {missing}: regenerate it (python scripts/matrix.py)"
    rows = [row for name, factory in columns.items() for row in probes.probe_column(factory, name)]
    agreements = {
        (r["column"], r["property"]): probes._agreement(verdicts[r["column"]][r["property"]], r["holds"]) for r in rows
    }
    assert set(agreements.values()) == {"right"}, agreements
    assert len(agreements) == 28  # P0-P7, P10-P15 and P19 of the reference, P0-P7, P10-P13 and P19 of the SDK client
    # The probes judge both ways: the reference bridge holds every one, the SDK client breaks some.
    assert {r["holds"] for r in rows if r["column"] == ReferenceBridgeAdapter.name} == {True}
    assert False in {r["holds"] for r in rows if r["column"] == SdkClientAdapter.name}


def test_a_probe_finds_a_verdict_that_an_adapter_made_wrong() -> None:
    """An adapter declaring no retries for a bridge that resends reads: the P3 probe shows 2 runs, the verdict WRONG."""
    probes = _script()
    [row] = probes.probe_column(_UnderDeclaredRetries, "reference", properties=["P3"])
    assert row["holds"] is False
    assert "handler ran 2x" in row["saw"]
    assert probes._agreement("passed", row["holds"]) == "WRONG"
    assert probes.table([row], {"reference": {"P3": "passed"}})[-1].endswith("| FAILS | WRONG |")


def test_a_probe_of_one_case_holding_where_the_property_fails_agrees() -> None:
    """P10's own-timeout probe checks one case: holding where P10 FAILS (another case, the application abandoning the
    call, fails) is right, failing where P10 holds is WRONG; the probes of openai-agents and llama-index include it."""
    probes = _script()
    assert probes._agreement("failed", True, part=True) == "right (another case fails)"
    assert probes._agreement("passed", False, part=True) == "WRONG"
    assert probes._agreement("failed", True) == "WRONG"
    for column in ("openai-agents", "openai-agents-invoke", "openai-agents-retrying", "llama-index"):
        probe = probes.probes_for(column, "handshake")["P10 (own timeout)"]
        assert (probe.pid, probe.part) == ("P10", True)
        assert "own timeout" in probe.label
    row = {"column": "c", "property": "P10", "probe": "p", "saw": "s", "holds": True, "part": True}
    assert probes.table([row], {"c": {"P10": "failed"}})[-1].endswith("| holds | right (another case fails) |")
