"""Test MCP client bridges against a real, scriptable MCP server that records every request."""

from __future__ import annotations

from mcp_testkit import faults
from mcp_testkit.journal import Headers, Journal, Record
from mcp_testkit.server import TestMcpServer
from mcp_testkit.tools import ScriptedTool, ToolContext, ToolError

__all__ = [
    "Headers",
    "Journal",
    "Record",
    "ScriptedTool",
    "TestMcpServer",
    "ToolContext",
    "ToolError",
    "faults",
]

__version__ = "0.1.0"
