"""scripts/matrix.py: how it names columns and how a run of some bridges updates the published matrix."""

from __future__ import annotations

import functools
import json
import runpy
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _script() -> Any:
    """scripts/matrix.py's names (run as a module named matrix, not as __main__)."""
    return types.SimpleNamespace(**runpy.run_path(str(ROOT / "scripts" / "matrix.py"), run_name="matrix"))


def _cell(spec: str) -> dict[str, Any]:
    return {"spec": spec, "properties": {"P1": {"status": "passed", "examples": 1, "seconds": 0.1}}}


def test_a_column_is_its_label_without_the_version() -> None:
    """The expected-verdict file keys on the bridge's name: versions go, a column's own words in parentheses stay."""
    column = _script().column
    assert column("fastmcp@4.2.3") == "fastmcp"
    assert column("@modelcontextprotocol/sdk@1.32.2") == "@modelcontextprotocol/sdk"
    assert column("smolagents@1.26.0 (mcpadapt 0.1.19)") == "smolagents"
    assert column("reference (mcp 2.3.0)") == "reference"
    assert column("sdk-client (auto) (mcp 2.3.0)") == "sdk-client (auto)"
    assert column("sdk-client (legacy) (mcp 2.3.0)") == "sdk-client (legacy)"


def test_a_run_of_some_bridges_replaces_their_columns_and_keeps_the_others(tmp_path: Path) -> None:
    """--only: the bridges run now replace all their old columns; every other column stays, in the order of BRIDGES."""
    matrix = _script()
    published = tmp_path / "matrix.json"
    published.write_text(
        json.dumps(
            {
                "fastmcp@4.2.3": _cell("mcp_testkit.adapters.fastmcp:FastMcpClientAdapter"),
                "langchain-mcp-adapters@0.3.2": _cell("--driver .lc/bin/python drivers/langchain/drive.py"),
                "openai-agents@0.24.0": _cell("mcp_testkit.adapters.openai_agents:ServerAdapter"),
                "reference (mcp 2.3.0)": _cell("mcp_testkit.adapters:ReferenceBridgeAdapter"),
            }
        )
    )
    fresh = {
        "openai-agents-retrying@0.25.0": _cell("mcp_testkit.adapters.openai_agents:RetryingServerAdapter"),
        "openai-agents@0.25.0": _cell("mcp_testkit.adapters.openai_agents:ServerAdapter"),
    }
    merged = matrix.merged(fresh, published)
    assert list(merged) == [
        "reference (mcp 2.3.0)",
        "fastmcp@4.2.3",
        "openai-agents@0.25.0",
        "openai-agents-retrying@0.25.0",
        "langchain-mcp-adapters@0.3.2",
    ]
    assert merged["openai-agents@0.25.0"] is fresh["openai-agents@0.25.0"]


def test_a_stateless_column_keeps_its_era_mark() -> None:
    """A column of the stateless era keeps its mark through the version's removal, so the expected file tells
    the two eras of one bridge apart."""
    matrix = _script()
    assert matrix.column("fastmcp@4.2.3 [2026-07-28]") == "fastmcp [2026-07-28]"
    assert matrix.column("sdk-client (auto) (mcp 2.3.0) [2026-07-28]") == "sdk-client (auto) [2026-07-28]"
    assert matrix._versioned("fastmcp [2026-07-28]", "@4.2.3") == "fastmcp@4.2.3 [2026-07-28]"
    assert (matrix.era_of("fastmcp@4.2.3 [2026-07-28]"), matrix.era_of("fastmcp@4.2.3")) == ("2026-07-28", "handshake")


def test_check_verdicts_split_into_a_column_per_era() -> None:
    """check's cells keyed P1@handshake and P1@stateless become a column per era, without the cells n/a in their
    era, and without a column in which the bridge fell back in every cell."""
    matrix = _script()

    def cell(status: str) -> dict[str, Any]:
        return {"status": status, "examples": 1, "seconds": 0.1}

    report = {
        "fastmcp": {
            "spec": "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter",
            "properties": {
                "P5@handshake": cell("failed"),
                "P5s@handshake": cell("not_applicable"),
                "P5@stateless": cell("not_applicable"),
                "P5s@stateless": cell("failed"),
            },
        },
        "sdk-client (legacy)": {
            "spec": "mcp_testkit.adapters:SdkClientAdapter.legacy",
            "properties": {"P1@handshake": cell("failed"), "P1@stateless": cell("fell_back")},
        },
    }
    columns = matrix.by_era(report)
    assert list(columns) == ["fastmcp", "fastmcp [2026-07-28]", "sdk-client (legacy)"]
    assert list(columns["fastmcp"]["properties"]) == ["P5"]
    assert list(columns["fastmcp [2026-07-28]"]["properties"]) == ["P5s"]


def test_a_run_of_some_properties_keeps_the_other_cells_of_its_columns(tmp_path: Path) -> None:
    """--property: a column run now takes the cells of the properties run, and keeps its published cells of the
    others; a cell of a property run now that is no longer in the fresh column (now n/a) is not kept."""
    matrix = _script()
    published = tmp_path / "matrix.json"

    def cells(**statuses: str) -> dict[str, Any]:
        return {pid: {"status": status, "examples": 1, "seconds": 0.1} for pid, status in statuses.items()}

    spec = "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter"
    published.write_text(json.dumps({"fastmcp@4.2.3": {"spec": spec, "properties": cells(P1="failed", P11="passed",
                                                                                           P13="failed")}}))
    fresh = {"fastmcp@4.2.3": {"spec": spec, "properties": cells(P11="failed")}}
    merged = matrix.merged(fresh, published, ("P11", "P13"))
    assert {pid: cell["status"] for pid, cell in merged["fastmcp@4.2.3"]["properties"].items()} == {
        "P1": "failed",
        "P11": "failed",
    }


def test_properties_are_listed_by_number() -> None:
    """The matrix lists P2 before P10 (a plain sort would not), and P5s after P5."""
    order = _script().property_order
    assert sorted(["P10", "P2", "P5s", "P5", "P1", "P14"], key=order) == ["P1", "P2", "P5", "P5s", "P10", "P14"]
