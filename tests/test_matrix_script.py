"""scripts/matrix.py: how it names columns and how a run of some bridges updates the published matrix."""

from __future__ import annotations

import functools
import json
import runpy
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUN_S = 180
"""A partial run of the toolkit's columns at 2 examples (about 5 s here) ends well within this, or fails."""


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


def test_a_run_of_some_properties_keeps_a_column_it_found_na(tmp_path: Path) -> None:
    """--only toolkit --property P14: P14 is n/a for the SDK client (no tool cache), so the run has no SDK client
    column at all; its published columns stay whole (they lost every cell before: ~5,000 lines of matrix.json)."""
    matrix = _script()
    published = tmp_path / "matrix.json"
    reference = "mcp_testkit.adapters:ReferenceBridgeAdapter"
    sdk = "mcp_testkit.adapters:SdkClientAdapter"
    published.write_text(
        json.dumps(
            {
                "reference (mcp 2.3.0)": {"spec": reference, "properties": {"P1": {"status": "passed"},
                                                                            "P14": {"status": "failed"}}},
                "sdk-client (auto) (mcp 2.3.0)": {"spec": sdk, "properties": {"P1": {"status": "failed"}}},
            }
        )
    )
    fresh = {"reference (mcp 2.3.0)": {"spec": reference, "properties": {"P14": {"status": "passed"}}}}
    merged = matrix.merged(fresh, published, ("P14",))
    assert merged == {
        "reference (mcp 2.3.0)": {"spec": reference, "properties": {"P1": {"status": "passed"},
                                                                    "P14": {"status": "passed"}}},
        "sdk-client (auto) (mcp 2.3.0)": {"spec": sdk, "properties": {"P1": {"status": "failed"}}},
    }
    assert matrix.changed_cells(json.loads(published.read_text()), merged) == [
        "replaced reference (mcp 2.3.0) P14: failed -> passed",
        "kept 2 published cells as they were",
    ]


def test_a_run_of_some_properties_keeps_a_column_of_another_version(tmp_path: Path) -> None:
    """A bridge run now at another version than the published one: the published column is that release's verdicts
    and stays whole beside the new one, which has only the cells run now."""
    matrix = _script()
    published = tmp_path / "matrix.json"
    spec = "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter"
    old = {"spec": spec, "properties": {"P1": {"status": "failed"}, "P11": {"status": "passed"}}}
    published.write_text(json.dumps({"fastmcp@4.2.3": old}))
    fresh = {"fastmcp@4.3.0": {"spec": spec, "properties": {"P11": {"status": "failed"}}}}
    assert matrix.merged(fresh, published, ("P11",)) == {"fastmcp@4.2.3": old, **fresh}


def test_a_partial_run_keeps_every_published_cell_it_did_not_run(tmp_path: Path) -> None:
    """The script itself, on copies of the published matrix: `--only toolkit --property P14` (2 examples, over the
    socket) replaces the reference bridge's two P14 cells and nothing else; docs/matrix.md keeps every column and its
    Changes section as published, and the output names the cells replaced."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("matrix.json", "matrix.md"):
        (docs / name).write_bytes((ROOT / "docs" / name).read_bytes())
    before = json.loads((docs / "matrix.json").read_text())
    command = [sys.executable, str(ROOT / "scripts" / "matrix.py"), "--only", "toolkit", "--property", "P14",
               "--examples", "2", "--cache", str(tmp_path / "cache"), "--docs", str(docs)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_S, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    after = json.loads((docs / "matrix.json").read_text())
    run = {(label, "P14") for label in before if label.startswith("reference (")}
    assert len(run) == 2
    assert set(after) == set(before)
    for label, column in before.items():
        for pid, cell in column["properties"].items():
            if (label, pid) not in run:
                assert after[label]["properties"][pid] == cell, (label, pid)
        assert set(after[label]["properties"]) == set(column["properties"]), label
    for label, pid in run:
        assert after[label]["properties"][pid]["status"] == "passed"
        assert after[label]["properties"][pid] != before[label]["properties"][pid]  # run now: 2 examples, not 100
        assert f"replaced {label} {pid}: {before[label]['properties'][pid]['status']} -> passed" in done.stdout
    page = (docs / "matrix.md").read_text()
    published_page = (ROOT / "docs" / "matrix.md").read_text()
    assert all(f"`{label}`" in page for label in before)
    assert page.split("## Changes")[1].split("## Run time")[0] == published_page.split("## Changes")[1].split(
        "## Run time"
    )[0]
    count = published_page.split(" examples per property")[0].rsplit(" ", 1)[1]
    assert f"at {count} examples per property" in page  # what most cells ran, not the 2 of this run


def test_the_published_matrix_shows_p0_first_and_blocked_cells_as_such(tmp_path: Path) -> None:
    """docs/matrix.md: P0's row comes first; a blocked cell reads `blocked` (never `holds` or `not run`) and gets
    no section of its own under the failures (its counterexample is P0's, shown under P0); the expected-verdict
    file's `blocked` matches a blocked cell."""
    matrix = _script()
    said = "P0 counterexample (declared case 1 of 23): connects(\n)\nthe bridge could not connect: KeyError"
    cells = {
        "P0": {"status": "failed", "examples": 1, "seconds": 0.1, "counterexample": said},
        "P1": {"status": "blocked", "examples": 0, "seconds": 0.0, "counterexample": said, "notes": ["blocked: P0"]},
        "P2": {"status": "blocked", "examples": 0, "seconds": 0.0, "counterexample": said, "notes": ["blocked: P0"]},
    }
    verdicts = {"smolagents@1.26.0": {"spec": "--driver drivers/smolagents/drive.py", "properties": cells}}
    page = tmp_path / "matrix.md"
    matrix.write_markdown(verdicts, 10, page)
    text = page.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| P")]
    assert rows == ["| P0 | **FAILS** |", "| P1 | blocked |", "| P2 | blocked |"]
    assert "### `smolagents@1.26.0`: P0 fails" in text
    assert "The bridge could not connect: KeyError. For an application: the bridge cannot connect" in text
    assert "P1 blocked" not in text
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"smolagents": {"P0": "failed", "P1": "blocked", "P2": "blocked"}}))
    assert matrix.compare(verdicts, expected) == []
    expected.write_text(json.dumps({"smolagents": {"P0": "failed", "P1": "not_run", "P2": "blocked"}}))
    assert matrix.compare(verdicts, expected) == ["smolagents@1.26.0 P1: blocked, expected not_run"]


def test_the_referee_row_sums_each_columns_violations_and_says_where_none_were_judged(tmp_path: Path) -> None:
    """The `referee` row adds up the violations of a column's cells (most first), says `none` for a column judged
    clean, and `not judged` for one whose cells were published before the contract reported violations."""
    matrix = _script()
    cell = {"status": "passed", "examples": 10, "seconds": 0.1, "counterexample": None}
    verdicts = {
        "broken": {"spec": "a:B", "properties": {
            "P1": {**cell, "violations": {"schema": 2, "version-header": 5}},
            "P2": {**cell, "violations": {"version-header": 7}},
        }},
        "clean": {"spec": "a:C", "properties": {"P1": {**cell, "violations": {}}, "P2": {**cell, "violations": {}}}},
        "published": {"spec": "a:D", "properties": {"P1": cell, "P2": cell}},
    }  # fmt: skip
    page = tmp_path / "matrix.md"
    matrix.write_markdown(verdicts, 10, page)
    rows = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| referee |")]
    assert rows == ["| referee | version-header 12, schema 2 | none | not judged |"]


def test_a_column_judged_in_some_cells_only_says_which_and_a_declared_pass_says_so(tmp_path: Path) -> None:
    """A column whose cells were partly run since the referee reported (a `--property` run) says which cells its
    `referee` word stands for; a pass resting on a declaration (P19, per-call sessions) reads as such."""
    matrix = _script()
    cell = {"status": "passed", "examples": 10, "seconds": 0.1, "counterexample": None}
    verdicts = {
        "partly": {"spec": "a:B", "properties": {
            "P1": cell,
            "P19": {**cell, "violations": {}, "held_as": "per-call sessions declared"},
        }},
    }  # fmt: skip
    page = tmp_path / "matrix.md"
    matrix.write_markdown(verdicts, 10, page)
    lines = page.read_text(encoding="utf-8").splitlines()
    assert "| referee | none, in P19 only |" in lines
    assert "| P19 | holds (per-call sessions declared) |" in lines
    assert "| P1 | holds |" in lines
