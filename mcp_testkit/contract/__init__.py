"""The resilience contract: properties P0-P14 and P5s of a client bridge, checked with Hypothesis through
`TestMcpServer`, in both protocol eras (the handshake, and the stateless era of 2026-07-28).

Run it three ways:

- pytest: `test_my_bridge = resilience_suite(MyAdapter)` gives one test per property and era;
- Python: `run_contract(MyAdapter, max_examples=200)` returns a `PropertyResult` per property and era;
- shell: `mcp-testkit check mypackage.adapters:MyAdapter`.

Each property first runs its declared cases (every fault class and call kind it covers), then
Hypothesis' draws. A verdict is `passed`, `failed` (the bridge broke the property: the shortest
counterexample with the faults that fired, every request the bridge sent and the logs of the
example), `hung` (the bridge did not finish an example in its time limit: its own status, not the
property failing), `blocked` (the bridge fails P0, connecting to a valid server, in the era: no
verdict, never a pass) or `error` (the harness or the adapter raised: no verdict on the bridge). Where a property
does not apply it is `not_applicable`, with the reason: it has no meaning in the era (P5 in the
stateless era, P5s in the handshake era), or it needs a capability the adapter does not declare (P8
approvals, P9 a tool cache). Where the bridge spoke the handshake era to the stateless era's server,
it is `fell_back`.
"""

from __future__ import annotations

from mcp_testkit.contract._harness import BridgeFacts, ContractError, ContractHarness, ContractViolation
from mcp_testkit.contract._machine import resilience_machine
from mcp_testkit.contract._properties import PROPERTIES, Property, expected_kinds
from mcp_testkit.contract._run import check_property, run_contract
from mcp_testkit.contract._suite import resilience_suite
from mcp_testkit.contract._verdict import PropertyResult

__all__ = [
    "PROPERTIES",
    "BridgeFacts",
    "ContractError",
    "ContractHarness",
    "ContractViolation",
    "Property",
    "PropertyResult",
    "check_property",
    "expected_kinds",
    "resilience_machine",
    "resilience_suite",
    "run_contract",
]
