"""`BridgeHung`: the bridge did not finish an example within its time limit. A violation for Hypothesis (so a hang
found by a draw is shrunk as any failure is), but its own status in the verdict ("hung"), never the failure of
the property whose example hung, unless that property is about bounded waits (`Property.hang_fails`)."""

from __future__ import annotations

from mcp_testkit.contract._errors import ContractViolation

__all__ = ["BridgeHung"]


class BridgeHung(ContractViolation):
    """The bridge did not finish an example within its time limit; the message is the example's trace."""
