"""docs/faults.md beyond its code blocks (those run in tests/examples/test_docs.py): each fault row's one-liner
adds its rule, and the SDK table names every fault, so that the page never lies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_testkit import TestMcpServer, faults

PAGE = Path(__file__).resolve().parents[2] / "docs" / "faults.md"
TEXT = PAGE.read_text()
ROW = re.compile(r"^\| `(\w+)\([^|]*\)` \| `(server\.[^`]+)` \|", re.M)
ROWS = ROW.findall(TEXT)
STDIO_ONLY = {faults.MalformedLine, faults.Exit, faults.Crash, faults.StopReading, faults.StdoutNoise}
HTTP_FAULTS = {
    name
    for name in faults.__all__
    if isinstance(cls := getattr(faults, name), type) and issubclass(cls, faults.Fault)
    if cls is not faults.Fault and cls not in STDIO_ONLY
}


@pytest.mark.parametrize(("name", "code"), ROWS, ids=[f"{name}:{code[7:30]}" for name, code in ROWS])
def test_each_row_example_adds_one_rule_of_its_fault(name: str, code: str) -> None:
    """The one-line example of a fault row runs against a server and adds exactly one rule with that fault."""
    server = TestMcpServer("docs", page_size=2)
    server.tool("create", returns="created")
    exec(code, {"server": server, "faults": faults})
    (rule,) = server.pending_faults()
    assert type(rule.fault).__name__ == name


def test_the_rows_cover_every_http_fault() -> None:
    """Every fault class that applies over HTTP has a row with a one-line example."""
    assert {name for name, _ in ROWS} == HTTP_FAULTS


def test_the_sdk_table_names_every_http_fault() -> None:
    """The table of what the SDK client does has a row for every fault class that applies over HTTP."""
    section = TEXT[TEXT.index("## What the official SDK client does") :]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, re.M)
    named = {name for cell in first_cells for name in re.findall(r"`(\w+)", cell)}
    assert HTTP_FAULTS <= named


def test_the_page_has_examples_to_run() -> None:
    """The extraction finds the page's fault rows, so the tests above cannot silently find none."""
    assert len(ROWS) >= len(HTTP_FAULTS)
