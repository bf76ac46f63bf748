"""The registry of the properties P0-P15, P18, P19 and P5s (P16 and P17 are reserved for the auth lifecycle, not built
yet): one module each, holding the inputs it draws, the cases it declares (every fault class and call kind
it covers, run before any random draw), the eras and adapter capability it needs, the check of one example and the
words of its row in docs/contract.md.

Every property runs in both protocol eras but P5 and P19 (sessions: the handshake era only), P5s, which replaces
P5 in the stateless era (2026-07-28), and P18 (era negotiation: the stateless column, its adapters negotiating by
themselves). The faults of an era are the ones that mean something there: no session faults
in the stateless era, and its own refusals (-32020, -32021, -32022) instead. P8 and P9 are about the bridge's pool
(approval gates, the tool cache), not its sessions: they run in both eras, and only for bridges whose adapter
declares the capability they need, as P15 (a token refused mid-session) only for bridges with OAuth; P11, P12
and P13 (waits, large results, concurrent calls) only for bridges whose
adapter declares the facts they need (`Property.needs`). P0 (the bridge connects to a valid server of unusual tools)
comes first: where it fails, every other property of the era is `blocked`. A new property is a new module here,
imported below and named in `PROPERTIES`."""

from __future__ import annotations

from mcp_testkit.contract._properties._example_steps import place
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS, fault_label, late_answer, legal_in
from mcp_testkit.contract._properties._property import Property
from mcp_testkit.contract._properties.p0_connects import PROPERTY as P0
from mcp_testkit.contract._properties.p1_listing import PROPERTY as P1
from mcp_testkit.contract._properties.p2_write_once import PROPERTY as P2
from mcp_testkit.contract._properties.p3_read_retries import PROPERTY as P3
from mcp_testkit.contract._properties.p4_auth_refusals import PROPERTY as P4
from mcp_testkit.contract._properties.p5_new_session import PROPERTY as P5
from mcp_testkit.contract._properties.p5s_broken_stream import PROPERTY as P5S
from mcp_testkit.contract._properties.p6_fault_kinds import PROPERTY as P6
from mcp_testkit.contract._properties.p6_fault_kinds import expected_kinds
from mcp_testkit.contract._properties.p7_rendering import PROPERTY as P7
from mcp_testkit.contract._properties.p8_approvals import PROPERTY as P8
from mcp_testkit.contract._properties.p9_tool_cache import PROPERTY as P9
from mcp_testkit.contract._properties.p10_cancellation import PROPERTY as P10
from mcp_testkit.contract._properties.p11_bounded_waits import PROPERTY as P11
from mcp_testkit.contract._properties.p12_large_results import PROPERTY as P12
from mcp_testkit.contract._properties.p13_concurrent_calls import PROPERTY as P13
from mcp_testkit.contract._properties.p14_fresh_listings import PROPERTY as P14
from mcp_testkit.contract._properties.p15_refresh_once import PROPERTY as P15
from mcp_testkit.contract._properties.p18_era_negotiation import PROPERTY as P18
from mcp_testkit.contract._properties.p19_session_affinity import PROPERTY as P19

__all__ = ["CALL_KINDS", "PROPERTIES", "Property", "expected_kinds", "fault_label", "late_answer", "legal_in", "place"]

PROPERTIES: dict[str, Property] = {
    prop.property_id: prop
    for prop in (P0, P1, P2, P3, P4, P5, P5S, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P18, P19)
}
"""Every property by its id, in the order of the docs' table and of a run."""
