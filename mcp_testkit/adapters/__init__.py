"""Adapters: the smallest interface a bridge needs to be tested, and adapters for real bridges.

Adapters for third-party bridges live in modules of their own, imported only when used (each an
optional extra): `mcp_testkit.adapters.fastmcp`, `.pydantic_ai`, `.openai_agents`, `.llama_index`.
A bridge in another process, virtualenv or language runs behind `DriverAdapter` (docs/driver.md). A bridge
that holds task groups (the `mcp` SDK's `Client` and the bridges built on it) is hosted in a task of its own
with `TaskHost`.

A `BridgeAdapter` connects to one MCP server URL with some headers, lists tool names, calls a
tool and reports an `Outcome`, and closes. The contract suite (`mcp_testkit.contract`) drives any
adapter through `TestMcpServer`. An adapter class is its own factory: the suite calls
`Adapter(transport=...)`, with an `httpx2` transport for in-process runs or None for a real socket.
Mapping the bridge's exceptions to outcomes is the adapter's job: an exception that escapes an
adapter method is reported as an error of the adapter, never as the bridge breaking a property.
"""

from __future__ import annotations

from mcp_testkit.adapters._driver import DriverAdapter, DriverError, DriverFactory
from mcp_testkit.adapters._outcome import (
    CAPABILITIES,
    INABILITIES,
    AdapterFactory,
    ApprovalAdapter,
    BridgeAdapter,
    Capability,
    Inability,
    OAuthAdapter,
    Outcome,
    OutcomeKind,
    SessionMode,
    ToolCacheAdapter,
)
from mcp_testkit.adapters._reference import PerCallReferenceAdapter, ReferenceBridgeAdapter
from mcp_testkit.adapters._sdk import SdkClientAdapter, SdkErrorClassifier
from mcp_testkit.adapters._task import TaskHost

__all__ = [
    "CAPABILITIES",
    "INABILITIES",
    "AdapterFactory",
    "ApprovalAdapter",
    "BridgeAdapter",
    "Capability",
    "DriverAdapter",
    "DriverError",
    "DriverFactory",
    "Inability",
    "OAuthAdapter",
    "Outcome",
    "OutcomeKind",
    "PerCallReferenceAdapter",
    "ReferenceBridgeAdapter",
    "SdkClientAdapter",
    "SdkErrorClassifier",
    "SessionMode",
    "TaskHost",
    "ToolCacheAdapter",
]
