"""What fired in one example, as the server reports it: the faults its journal records carry and the rules that
never fired, each told apart by whether the bridge ever sent the request the rule waited for. Coverage and
"the declared case ran" are counted from this, never from the drawn inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit.faults import AUTH_ENDPOINT_METHODS

if TYPE_CHECKING:
    from mcp_testkit import faults
    from mcp_testkit.server import TestMcpServer

__all__ = ["Firing", "firing"]

_ANY_METHOD = (None, "*")


@dataclass(frozen=True)
class Firing:
    """The faults that fired in an example, in order, and the rules placed in it that never fired."""

    fired: tuple[Any, ...] = ()
    unfired: tuple[faults.Rule, ...] = ()
    unsent: tuple[faults.Rule, ...] = ()
    """The unfired rules whose request (method and tool) the bridge never sent at all: not firing was its doing."""

    @property
    def ran(self) -> bool:
        """Whether the example ran as planned: it placed no fault, or at least one of its faults fired (a later
        fault may legitimately find the bridge already given up)."""
        return bool(self.fired) or not self.unfired


def firing(server: TestMcpServer) -> Firing:
    """What fired on `server` since its last reset."""
    records = server.journal.records
    fired = tuple(r.fault for r in records if r.fault is not None)
    # A protected server's authorization server logs its own requests, and the faults of its endpoints that hit them.
    fired += tuple(e.fired for e in server.journal.auth if e.fired is not None)
    unfired = tuple(
        rule for rule in server.pending_faults() if rule.times == 1 or not any(f == rule.fault for f in fired)
    )
    endpoints = {e.endpoint for e in server.journal.auth}
    unsent = tuple(
        rule
        for rule in unfired
        if not any(
            (rule.method in _ANY_METHOD or r.rpc_method == rule.method) and (rule.tool is None or r.tool == rule.tool)
            for r in records
        )
        and not any(AUTH_ENDPOINT_METHODS[endpoint] == rule.method for endpoint in endpoints)
    )
    return Firing(fired, unfired, unsent)
