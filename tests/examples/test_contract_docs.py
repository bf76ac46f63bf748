"""The code examples of docs/contract.md and docs/strategies.md, each block run on its own, as written; and
the table of what P6 expects, as the page prints it, is the one the contract applies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_testkit.contract import BridgeFacts, expected_kinds
from mcp_testkit.contract._properties import _call_faults, fault_label

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("contract.md", "strategies.md")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
CASES = [(page, number) for page in PAGES for number in range(1, len(BLOCK.findall((DOCS / page).read_text())) + 1)]


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text())


def test_every_page_has_examples() -> None:
    """Each page keeps runnable examples, so the extraction below cannot silently find none."""
    assert all(len(_blocks(page)) >= 3 for page in PAGES)


@pytest.mark.parametrize(("page", "number"), CASES)
def test_docs_example_runs(page: str, number: int) -> None:
    """Each example runs in a fresh namespace, as printed, and its assertions hold."""
    namespace: dict[str, object] = {"__name__": f"docs_{page.removesuffix('.md')}_{number}"}
    exec(compile(_blocks(page)[number - 1], f"{DOCS / page}#{number}", "exec"), namespace)


def test_the_p6_table_is_the_one_the_contract_applies() -> None:
    """Each row of the P6 table in docs/contract.md gives the kinds expected_kinds gives, for each call fault class."""
    text = (DOCS / "contract.md").read_text()
    rows = dict(re.findall(r"^\| `([^`]+)` \| ([a-z_ ]+ \| [a-z_ ]+) \|$", text, re.M))
    faults_ = _call_faults(BridgeFacts(2, 100, 0.5, "persistent"), auth=True)
    assert sorted(rows) == sorted(fault_label(f) for f in faults_)
    for fault in faults_:
        read, write = (set(cell.strip().split(" or ")) for cell in rows[fault_label(fault)].split("|"))
        assert read == set(expected_kinds("call", "read", fault)) == set(expected_kinds("call", "idempotent", fault))
        assert write == set(expected_kinds("call", "write", fault))
