"""The chaos proxy: the toolkit's faults in front of any real MCP server.

`ChaosProxy(upstream="http://...")` (or `upstream_command=[...]` for a stdio server) serves on 127.0.0.1,
forwards every request in both protocol eras, journals each one, and applies the same fault values as
`TestMcpServer`; `mcp-testkit proxy` does the same from the command line.
"""

from __future__ import annotations

from mcp_testkit.proxy._chaos import ChaosProxy

__all__ = ["ChaosProxy"]
