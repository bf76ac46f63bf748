"""The chaos proxy: the toolkit's faults in front of any real MCP server.

`ChaosProxy(upstream="http://...")` (or `upstream_command=[...]` for a stdio server) serves on 127.0.0.1,
forwards every request in both protocol eras, journals each one, and applies the same fault values as
`TestMcpServer`; `mcp-testkit proxy` does the same from the command line. `StdioGateway` is its link to a stdio
server (Streamable HTTP in front of one process per session), which recording uses too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit._lazy import lazy_names

if TYPE_CHECKING:
    from mcp_testkit.proxy._chaos import ChaosProxy
    from mcp_testkit.proxy._stdio import StdioGateway

__all__ = ["ChaosProxy", "StdioGateway"]

_HOMES = {"ChaosProxy": "mcp_testkit.proxy._chaos", "StdioGateway": "mcp_testkit.proxy._stdio"}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
