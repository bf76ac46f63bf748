"""What a fault does, for a front other than `TestMcpServer` that applies the same fault values: the chaos proxy.

A fault's effect is one handler per fault class (`server/_effects/`). A front matches a request against its own
fault plan, asks `effect_of(fault)` for the handler, and calls it at each phase on its own turn, an `HttpTurn`
(the proxy's `ProxyTurn`), so that one value means the same in front of a real server as on the fake.
"""

from __future__ import annotations

from mcp_testkit.server._effects import Effect, HttpTurn, Wire, effect_of, supports_stdio

__all__ = ["Effect", "HttpTurn", "Wire", "effect_of", "supports_stdio"]
