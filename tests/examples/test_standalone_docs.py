"""The examples of docs/standalone.md, kept as tests so that the page never lies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer
from mcp_testkit.journal import Headers, Record
from mcp_testkit.scenario import load_scenario, validate

from ._support import DOCS, example

PAGE = DOCS / "standalone.md"
LIMIT_S = 30.0


def _example(name: str) -> str:
    """The code block that follows `<!-- example: NAME -->` on the page."""
    return example(PAGE, name)


@pytest.fixture
def anyio_backend() -> str:
    """The examples run on asyncio."""
    return "asyncio"


@pytest.mark.anyio
async def test_json_scenario_example(tmp_path: Path) -> None:
    """The JSON scenario is valid against the shipped schema and serves what it says."""
    data = json.loads(_example("json-scenario"))
    validate(data)
    path = tmp_path / "tickets.json"
    path.write_text(json.dumps(data))
    scenario = load_scenario(path)
    server = TestMcpServer(**scenario.options)
    scenario.apply(server)
    http = httpx2.AsyncClient(headers={"X-Api-Key": "test-key"})
    with anyio.fail_after(LIMIT_S):
        async with server, http, Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
            first = await client.list_tools()
            with pytest.raises(MCPError):
                await client.list_tools(cursor=first.next_cursor)  # PageError on page 2
            found = await client.call_tool("search_tickets", {"q": "printer"})
            opened = await client.call_tool("create_ticket", {})
            refused = await client.call_tool("search_tickets", {})
    assert [t.name for t in first.tools] == ["search_tickets", "create_ticket"]
    assert found.structured_content == {"matches": ["printer on fire"]}
    assert opened.content == [mcp_types.TextContent(type="text", text="opened #1")]
    assert refused.is_error  # the input schema requires q
    assert [rule.fault.to_json()["type"] for rule in server.pending_faults()] == ["Drop"]


@pytest.mark.anyio
async def test_python_scenario_example(tmp_path: Path) -> None:
    """The Python scenario's options, handler, ToolError and nth-call fault behave as the page says."""
    path = tmp_path / "calc.py"
    path.write_text(_example("python-scenario"))
    scenario = load_scenario(path)
    server = TestMcpServer(**scenario.options)
    scenario.apply(server)
    assert server.name == "calculator"
    with anyio.fail_after(LIMIT_S):
        async with server, Client(server.url, mode="legacy") as client:
            half = await client.call_tool("divide", {"a": 1, "b": 2})
            by_zero = await client.call_tool("divide", {"a": 1, "b": 0})
            with pytest.raises(MCPError, match="overloaded"):
                await client.call_tool("divide", {"a": 1, "b": 1})
    assert half.content[0].text == "0.5"  # type: ignore[union-attr]
    assert by_zero.is_error
    assert by_zero.content[0].text == "division by zero"  # type: ignore[union-attr]


def test_journal_line_example_has_the_fields_of_a_record() -> None:
    """The journal line shown has exactly the keys `Record.to_json()` writes."""
    shown = json.loads(_example("journal-line"))
    record = Record(seq=1, at=0.0, http_method="POST", path="/mcp", headers=Headers({}), body=b"")
    assert list(shown) == list(record.to_json())


def test_stdio_transcript_example() -> None:
    """Feeding the transcript's `>` lines to `serve --stdio --preset demo` answers exactly its `<` lines."""
    lines = _example("stdio-transcript").splitlines()
    sent = "".join(line[2:] + "\n" for line in lines if line.startswith("> "))
    expected = [line[2:] for line in lines if line.startswith("< ")]
    ran = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "serve", "--stdio", "--preset", "demo"],
        input=sent,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == expected
