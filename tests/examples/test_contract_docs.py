"""docs/contract.md beyond running as printed (tests/examples/test_docs.py): the tables of what P6 expects in
each era, as the page prints them, are the ones the contract applies."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_testkit.contract import BridgeFacts, expected_kinds
from mcp_testkit.contract._properties._fault_sets import call_faults, fault_label

DOCS = Path(__file__).resolve().parents[2] / "docs"


_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z_ ]+ \| [a-z_ ]+) \|$", re.M)


def _tables() -> tuple[dict[str, str], dict[str, str]]:
    """The rows of the handshake era's P6 table and of the stateless era's, by fault label."""
    text = (DOCS / "contract.md").read_text()
    section = text.split("## What P6 expects")[1].split("\n## ")[0]
    handshake, stateless = section.split("### In the stateless era")
    return dict(_ROW.findall(handshake)), dict(_ROW.findall(stateless))


def _cells(row: str) -> tuple[set[str], set[str]]:
    read, write = (set(cell.strip().split(" or ")) for cell in row.split("|"))
    return read, write


def test_the_p6_table_is_the_one_the_contract_applies() -> None:
    """Each row of the P6 table in docs/contract.md gives the kinds expected_kinds gives, for each call fault class."""
    rows, _ = _tables()
    faults_ = call_faults(BridgeFacts(2, 100, 0.5, "persistent"), auth=True)
    assert sorted(rows) == sorted(fault_label(f) for f in faults_)
    for fault in faults_:
        read, write = _cells(rows[fault_label(fault)])
        assert read == set(expected_kinds("call", "read", fault)) == set(expected_kinds("call", "idempotent", fault))
        assert write == set(expected_kinds("call", "write", fault))


def test_the_stateless_p6_rows_are_the_ones_the_contract_applies() -> None:
    """In the stateless era every call fault class has the kinds of the stateless table's row when it has one, else
    of the handshake table's; the session faults are not among them."""
    handshake, stateless = _tables()
    faults_ = call_faults(BridgeFacts(2, 100, 0.5, "persistent", era="stateless"), auth=True)
    labels = [fault_label(f) for f in faults_]
    assert not {"LoseSession", "Restart(404)", "Restart(400)"} & set(labels)
    assert set(stateless) <= set(labels)
    for fault in faults_:
        read, write = _cells(stateless.get(fault_label(fault)) or handshake[fault_label(fault)])
        for kind in ("read", "idempotent"):
            assert read == set(expected_kinds("call", kind, fault, "stateless")), fault
        assert write == set(expected_kinds("call", "write", fault, "stateless")), fault
