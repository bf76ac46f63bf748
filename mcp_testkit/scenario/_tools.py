"""A JSON scenario's tools: each built (and its definition checked) as `TestMcpServer.tool` builds one, its answers
static (`returns`, `answers`) or asking the client first (`asks`, `_asks.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit.scenario._document import ScenarioError, check_block, join, validate
from mcp_testkit.tools import ToolError

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer
    from mcp_testkit.tools import ScriptedTool

__all__ = ["add_tool", "built_tool"]


def add_tool(server: TestMcpServer, data: Any) -> dict[str, Any]:
    """Add (or replace) the tool a JSON tool object describes; returns its wire definition."""
    validate(data, "tool")
    tool = built_tool(data, "")
    server.add_tools([tool])  # as server.tool() does, with the tool built (and checked) once
    return tool.definition


def built_tool(data: Mapping[str, Any], where: str) -> ScriptedTool:
    """The tool a JSON tool object describes, checked now, so that a bad one is reported with the scenario's path."""
    arguments: dict[str, Any] = {
        "name": data["name"],
        "title": data.get("title"),
        "description": data.get("description"),
        "input_schema": data.get("inputSchema"),
        "output_schema": data.get("outputSchema"),
        "annotations": data.get("annotations"),
        "task": data.get("task"),
        "scopes": tuple(data.get("scopes", ())),
    }
    if "asks" in data:
        arguments["returns"] = _asking(data, where)
    elif "answers" in data:
        arguments["answers"] = [answer(a, join(where, f"answers/{i}")) for i, a in enumerate(data["answers"])]
    elif "returns" in data:
        arguments["returns"] = answer(data["returns"], join(where, "returns"))
    else:
        arguments["returns"] = {"content": []}
    from mcp_testkit.tools import ScriptedTool

    try:
        return ScriptedTool.build(**arguments)
    except ValueError as exc:
        raise ScenarioError(f"{where or '(tool)'}: {exc}") from None


def _asking(data: Mapping[str, Any], where: str) -> Any:
    """The handler of a tool that asks the client for input (`asks`), then answers `returns` with the answers."""
    from mcp_testkit.scenario._asks import AskError, asking_handler, check_asks

    if "answers" in data:
        raise ScenarioError(f"{join(where, 'answers')}: a tool with asks answers once, with returns (which may use "
                            "the answers, as {key.content.field}); give returns, not answers")  # fmt: skip
    returns = data.get("returns", {"content": []})
    try:
        check_asks(data["asks"], returns, where)
    except AskError as exc:
        raise ScenarioError(str(exc)) from None
    answer(returns, join(where, "returns"))  # checked now, with its placeholders as they stand
    return asking_handler(data["asks"], returns, lambda filled: answer(filled, join(where, "returns")))


def answer(data: Any, where: str) -> Any:
    """A JSON answer as the Python API takes it, its content blocks checked against the MCP types."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict) and "structured" in data:
        return dict(data["structured"])
    if isinstance(data, dict) and "error" in data:
        return ToolError(data["error"])
    blocks = data["content"] if isinstance(data, dict) else data
    at = join(where, "content") if isinstance(data, dict) else where
    for index, block in enumerate(blocks):
        check_block(block, join(at, str(index)))
    if isinstance(data, dict):
        import mcp_types

        return mcp_types.CallToolResult.model_validate(data)
    return list(data)
