"""Faults on what a server offers besides tools: the listing faults on every listing, and the per-request faults
on `resources/read` and `prompts/get`, matched by the URI or prompt they name; over a real socket, the SDK client
and the wire by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcp_testkit import TestMcpServer, faults

from ._support import LIMIT_S, Wire, sdk_transport, serving

pytestmark = pytest.mark.anyio

LISTINGS = [
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
    ("prompts/list", "prompts"),
]


def _offering(page_size: int | None = 2) -> TestMcpServer:
    server = TestMcpServer(page_size=page_size)
    for index in range(5):
        server.resource(f"file:///r{index}", text=f"r{index}")
        server.resource_template(f"db://t{index}/{{id}}", reads=lambda params: params["id"])
        server.prompt(f"p{index}", messages=[{"role": "user", "content": f"prompt {index}"}])
    return server


async def _page(wire: Wire, method: str, cursor: str | None = None) -> dict[str, Any]:
    return await wire.request(method, {} if cursor is None else {"cursor": cursor})


def _names(result: dict[str, Any], key: str) -> list[str]:
    return [entry.get("uri") or entry.get("uriTemplate") or entry["name"] for entry in result[key]]


@pytest.mark.parametrize(("method", "key"), LISTINGS)
async def test_listing_faults_hit_every_listing_at_its_page(method: str, key: str) -> None:
    """PageError, RepeatCursor, DuplicateTool and MalformedPage reshape the page of that listing they name."""
    server = _offering()
    async with serving(server, "socket") as wire:
        await wire.initialize()
        server.inject(faults.PageError(page=2, message="listing broke"), method=method)
        first = (await _page(wire, method))["result"]
        refused = await _page(wire, method, first["nextCursor"])
        server.inject(faults.RepeatCursor(page=2), method=method)
        second = (await _page(wire, method, first["nextCursor"]))["result"]
        server.inject(faults.DuplicateTool(page=1), method=method)
        doubled = (await _page(wire, method))["result"]
        server.inject(faults.MalformedPage(), method=method)
        malformed = (await _page(wire, method))["result"]
        untouched = (await _page(wire, "tools/list"))["result"]
    assert refused["error"] == {"code": -32603, "message": "listing broke"}
    assert second["nextCursor"] == first["nextCursor"]  # the cursor that fetched it
    assert _names(doubled, key) == [*_names(first, key), _names(first, key)[0]]
    assert malformed == {key: "this page is deliberately malformed"}
    assert untouched == {"tools": []}
    assert server.pending_faults() == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_meets_a_page_error_and_a_read_error(mode: str) -> None:
    """In both eras the SDK client's second resources page and a scripted read of one URI fail as scripted, the
    other URI reads as before, and the journal holds each request."""
    server = _offering()
    server.inject(faults.PageError(page=2), method="resources/list")
    server.inject(faults.ProtocolError(code=-32002, message="gone"), method="resources/read", tool="file:///r1")
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode=mode) as client:
                first = await client.list_resources()
                with pytest.raises(MCPError, match="Internal error while listing tools"):
                    await client.list_resources(cursor=first.next_cursor)
                read = await client.read_resource("file:///r0")
                with pytest.raises(MCPError, match="gone"):
                    await client.read_resource("file:///r1")
                again = await client.read_resource("file:///r1")
    assert read.contents[0].text == "r0"  # type: ignore[union-attr]
    assert again.contents[0].text == "r1"  # type: ignore[union-attr]
    server.journal.assert_read("file:///r1", times=2)
    assert [r.fault is not None for r in server.journal.requests("resources/read")] == [False, True, False]


async def test_an_error_result_on_a_prompt_is_a_json_rpc_error_and_a_delay_waits() -> None:
    """ErrorResult on prompts/get (which has no isError) answers -32603 with its text, for the prompt named only."""
    server = _offering()
    server.inject(faults.ErrorResult(text="no prompt today"), method="prompts/get", tool="p1")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        other = await wire.request("prompts/get", {"name": "p0"})
        hit = await wire.request("prompts/get", {"name": "p1"})
    assert other["result"]["messages"][0]["content"]["text"] == "prompt 0"
    assert hit["error"] == {"code": -32603, "message": "no prompt today"}


async def test_a_rule_for_a_tool_on_any_method_still_hits_only_that_tools_calls() -> None:
    """A rule naming a tool on any method (the old spelling) does not hit a prompt or resource of that name."""
    server = _offering()
    server.tool("p0", returns="called")
    server.inject(faults.ProtocolError(message="hit"), method=None, tool="p0")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        prompt = await wire.request("prompts/get", {"name": "p0"})
        call = await wire.request("tools/call", {"name": "p0", "arguments": {}})
    assert "result" in prompt
    assert call["error"]["message"] == "hit"


def test_misplaced_rules_are_refused_naming_what_they_hit() -> None:
    """A catalogue change hits only tools/list, a listing fault only a listing, a name only a request naming one."""
    server = TestMcpServer()
    with pytest.raises(ValueError, match="it hits tools/list, not resources/list"):
        server.inject(faults.CatalogueChange(add=("x",)), method="resources/list")
    with pytest.raises(ValueError, match=r"it hits tools/list or resources/list or .*, not resources/read"):
        server.inject(faults.PageError(), method="resources/read")
    with pytest.raises(ValueError, match="matches only requests that name something"):
        server.inject(faults.ProtocolError(), method="prompts/list", tool="p")


async def test_over_stdio_a_json_scenario_scripts_offerings_and_their_faults(tmp_path: Path) -> None:
    """`serve --stdio` with a JSON scenario: its resources and prompt are served to the SDK stdio client, and its
    rules hit the second prompts/list page and the read of the URI they name."""
    scenario = tmp_path / "offerings.json"
    scenario.write_text(
        json.dumps(
            {
                "page_size": 1,
                "resources": [{"uri": "file:///a", "text": "A"}, {"uri": "file:///b", "text": "B"}],
                "prompts": [
                    {"name": "one", "messages": [{"role": "user", "content": "1"}]},
                    {"name": "two", "messages": [{"role": "user", "content": "2"}]},
                ],
                "faults": [
                    {"fault": {"type": "PageError", "page": 2, "message": "no page 2"}, "method": "prompts/list"},
                    {
                        "fault": {"type": "ErrorResult", "text": "b refused"},
                        "method": "resources/read",
                        "tool": "file:///b",
                    },
                ],
            }
        )
    )
    args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario)]
    with anyio.fail_after(LIMIT_S * 3):
        async with Client(StdioServerParameters(command=sys.executable, args=args), mode="legacy") as client:
            first = await client.list_prompts()
            with pytest.raises(MCPError, match="no page 2"):
                await client.list_prompts(cursor=first.next_cursor)
            a = await client.read_resource("file:///a")
            with pytest.raises(MCPError, match="b refused"):
                await client.read_resource("file:///b")
    assert [p.name for p in first.prompts] == ["one"]
    assert a.contents[0].text == "A"  # type: ignore[union-attr]
