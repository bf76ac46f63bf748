"""The chaos proxy: the toolkit's faults in front of any real MCP server.

`ChaosProxy(upstream="http://...")` (or `upstream_command=[...]` for a stdio server) serves on 127.0.0.1,
forwards every request in both protocol eras, journals each one, and applies the same fault values as
`TestMcpServer`; `mcp-testkit proxy` does the same from the command line. `StdioGateway` is its link to a stdio
server (Streamable HTTP in front of one process per session), which recording uses too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.proxy._chaos import ChaosProxy
    from mcp_testkit.proxy._stdio import StdioGateway

__all__ = ["ChaosProxy", "StdioGateway"]

_HOMES = {"ChaosProxy": "mcp_testkit.proxy._chaos", "StdioGateway": "mcp_testkit.proxy._stdio"}


def __getattr__(name: str) -> Any:
    # Imported on first use: the CLI registers `proxy` without loading the proxy and the server behind it.
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcp_testkit.proxy' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
