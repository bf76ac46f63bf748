"""The resilience contract: properties P1-P9 of a client bridge, checked with Hypothesis through `TestMcpServer`.

Run it three ways:

- pytest: `test_my_bridge = resilience_suite(MyAdapter)` gives one test per property;
- Python: `run_contract(MyAdapter, max_examples=200)` returns a `PropertyResult` per property;
- shell: `mcp-testkit check mypackage.adapters:MyAdapter`.

Each property first runs its declared cases (every fault class and call kind it covers), then
Hypothesis' draws. A verdict is `passed`, `failed` (the bridge broke the property: the shortest
counterexample with the faults that fired, every request the bridge sent and the logs of the
example), `error` (the harness or the adapter raised: no verdict on the bridge) or
`not_applicable` (P8 and P9 need an adapter that declares approvals or a tool cache).
"""

from __future__ import annotations

from mcp_testkit.contract._harness import BridgeFacts, ContractError, ContractHarness, ContractViolation
from mcp_testkit.contract._machine import resilience_machine
from mcp_testkit.contract._properties import PROPERTIES, Property, expected_kinds
from mcp_testkit.contract._runner import PropertyResult, check_property, resilience_suite, run_contract

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
