"""The reference client bridge: a pool of MCP servers whose tools survive their failures by stated rules."""

from __future__ import annotations

from mcp_testkit.bridge._approval import ApprovalRequired
from mcp_testkit.bridge._cache import ToolCache, ToolCacheKey
from mcp_testkit.bridge._config import BearerToken, Era, Headers, Kind, ServerConfig
from mcp_testkit.bridge._errors import (
    MCPAuthError,
    MCPBridgeError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPInputRequired,
    MCPResultTooLarge,
    MCPResultWithheld,
    MCPToolError,
)
from mcp_testkit.bridge._input import InputHandler, InputRequested
from mcp_testkit.bridge._oauth import OAuth
from mcp_testkit.bridge._pool import ToolDescription, ToolPool, describe_tools
from mcp_testkit.bridge._render import render_result
from mcp_testkit.bridge._tool import BridgeTool

__all__ = [
    "ApprovalRequired",
    "BearerToken",
    "BridgeTool",
    "Era",
    "Headers",
    "InputHandler",
    "InputRequested",
    "Kind",
    "MCPAuthError",
    "MCPBridgeError",
    "MCPCallOutcomeUnknown",
    "MCPConnectionError",
    "MCPInputRequired",
    "MCPResultTooLarge",
    "MCPResultWithheld",
    "MCPToolError",
    "OAuth",
    "ServerConfig",
    "ToolCache",
    "ToolCacheKey",
    "ToolDescription",
    "ToolPool",
    "describe_tools",
    "render_result",
]
