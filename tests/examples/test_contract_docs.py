"""docs/contract.md beyond running as printed (tests/examples/test_docs.py): the table of what P6 expects,
as the page prints it, is the one the contract applies."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_testkit.contract import BridgeFacts, expected_kinds
from mcp_testkit.contract._properties import _call_faults, fault_label

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
