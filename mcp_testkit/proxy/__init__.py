"""The chaos proxy: the toolkit's faults in front of any real MCP server.

`ChaosProxy(upstream="http://...")` (or `upstream_command=[...]` for a stdio server) serves on 127.0.0.1,
forwards every request in both protocol eras, journals each one, and applies the same fault values as
`TestMcpServer`; `mcp-testkit proxy` does the same from the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.proxy._chaos import ChaosProxy

__all__ = ["ChaosProxy"]


def __getattr__(name: str) -> Any:
    # Imported on first use: the CLI registers `proxy` without loading the proxy and the server behind it.
    if name != "ChaosProxy":
        raise AttributeError(f"module 'mcp_testkit.proxy' has no attribute {name!r}")
    value = importlib.import_module("mcp_testkit.proxy._chaos").ChaosProxy
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
