"""Test MCP client bridges against a real, scriptable MCP server that records every request.

Names are imported on first use, so that `import mcp_testkit` (done by the pytest plugin and the
Hypothesis hook in every run) costs nothing until a test actually uses the toolkit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit._lazy import lazy_names

if TYPE_CHECKING:
    from mcp_testkit import cassettes, faults, strategies
    from mcp_testkit._version import __version__ as __version__
    from mcp_testkit.adapters import (
        BridgeAdapter,
        DriverAdapter,
        Outcome,
        PerCallReferenceAdapter,
        ReferenceBridgeAdapter,
        SdkClientAdapter,
        SdkErrorClassifier,
    )
    from mcp_testkit.auth import AuthServer
    from mcp_testkit.contract import PropertyResult, resilience_machine, resilience_suite, run_contract
    from mcp_testkit.faults import Fault, Rule
    from mcp_testkit.journal import Headers, Journal, Record, Violation
    from mcp_testkit.proxy import ChaosProxy
    from mcp_testkit.resources import ScriptedPrompt, ScriptedResource, ScriptedTemplate
    from mcp_testkit.server import TestMcpServer
    from mcp_testkit.tools import ScriptedTool, ToolContext, ToolError

__all__ = [
    "AuthServer",
    "BridgeAdapter",
    "ChaosProxy",
    "DriverAdapter",
    "Fault",
    "Headers",
    "Journal",
    "Outcome",
    "PerCallReferenceAdapter",
    "PropertyResult",
    "Record",
    "ReferenceBridgeAdapter",
    "Rule",
    "ScriptedPrompt",
    "ScriptedResource",
    "ScriptedTemplate",
    "ScriptedTool",
    "SdkClientAdapter",
    "SdkErrorClassifier",
    "TestMcpServer",
    "ToolContext",
    "ToolError",
    "Violation",
    "cassettes",
    "faults",
    "resilience_machine",
    "resilience_suite",
    "run_contract",
    "strategies",
]

_HOMES = {
    "__version__": "mcp_testkit._version",
    "AuthServer": "mcp_testkit.auth",
    "BridgeAdapter": "mcp_testkit.adapters",
    "DriverAdapter": "mcp_testkit.adapters",
    "Outcome": "mcp_testkit.adapters",
    "PerCallReferenceAdapter": "mcp_testkit.adapters",
    "PropertyResult": "mcp_testkit.contract",
    "ReferenceBridgeAdapter": "mcp_testkit.adapters",
    "SdkClientAdapter": "mcp_testkit.adapters",
    "SdkErrorClassifier": "mcp_testkit.adapters",
    "resilience_machine": "mcp_testkit.contract",
    "resilience_suite": "mcp_testkit.contract",
    "run_contract": "mcp_testkit.contract",
    "Headers": "mcp_testkit.journal",
    "Journal": "mcp_testkit.journal",
    "Record": "mcp_testkit.journal",
    "Violation": "mcp_testkit.journal",
    "ChaosProxy": "mcp_testkit.proxy",
    "ScriptedPrompt": "mcp_testkit.resources",
    "ScriptedResource": "mcp_testkit.resources",
    "ScriptedTemplate": "mcp_testkit.resources",
    "ScriptedTool": "mcp_testkit.tools",
    "TestMcpServer": "mcp_testkit.server",
    "ToolContext": "mcp_testkit.tools",
    "ToolError": "mcp_testkit.tools",
    "cassettes": "mcp_testkit.cassettes",
    "faults": "mcp_testkit.faults",
    "Fault": "mcp_testkit.faults",
    "Rule": "mcp_testkit.faults",
    "strategies": "mcp_testkit.strategies",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
