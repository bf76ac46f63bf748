"""The resilience contract: properties P0-P15, P18, P19 and P5s of a client bridge, checked with Hypothesis through
`TestMcpServer`, in both protocol eras (the handshake, and the stateless era of 2026-07-28).

Run it three ways:

- pytest: `test_my_bridge = resilience_suite(MyAdapter)` gives one test per property and era;
- Python: `run_contract(MyAdapter, max_examples=200)` returns a `PropertyResult` per property and era;
- shell: `mcp-testkit check mypackage.adapters:MyAdapter`.

A failure can be kept as a test file (`keep_failure`, `--keep-failures DIR`, `keep_failures=`) that replays its one
example through `replay_example`.

Each property first runs its declared cases (every fault class and call kind it covers), then
Hypothesis' draws. A verdict is `passed`, `failed` (the bridge broke the property: the shortest
counterexample with the faults that fired, every request the bridge sent and the logs of the
example), `hung` (the bridge did not finish an example in its time limit: its own status, not the
property failing), `blocked` (the bridge fails P0, connecting to a valid server, in the era: no
verdict, never a pass) or `error` (the harness or the adapter raised: no verdict on the bridge). Where a property
does not apply it is `not_applicable`, with the reason: it has no meaning in the era (P5 in the
stateless era, P5s in the handshake era), it needs a capability the adapter does not declare (P8
approvals, P9 a tool cache), or the adapter declares the contract `cannot` do what it takes (abandon a call for
P10, overlap calls for P13). A wait or a count the adapter does not declare has a default (`DEFAULT_WAIT_S` a
request, `DEFAULT_CONCURRENCY` calls at once), never a reason for n/a. Where the bridge spoke the handshake era
to the stateless era's server, it is `fell_back`.
"""

from __future__ import annotations

from mcp_testkit.contract._facts import DEFAULT_CONCURRENCY, DEFAULT_WAIT_S
from mcp_testkit.contract._harness import BridgeFacts, ContractError, ContractHarness, ContractViolation
from mcp_testkit.contract._keep import keep_failure
from mcp_testkit.contract._machine import resilience_machine
from mcp_testkit.contract._properties import PROPERTIES, Property, expected_kinds
from mcp_testkit.contract._replay import replay_example
from mcp_testkit.contract._run import check_property, run_contract
from mcp_testkit.contract._suite import resilience_suite
from mcp_testkit.contract._verdict import PropertyResult

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_WAIT_S",
    "PROPERTIES",
    "BridgeFacts",
    "ContractError",
    "ContractHarness",
    "ContractViolation",
    "Property",
    "PropertyResult",
    "check_property",
    "expected_kinds",
    "keep_failure",
    "replay_example",
    "resilience_machine",
    "resilience_suite",
    "run_contract",
]
