"""The examples of docs/resources.md that are not Python blocks, kept as tests so that the page never lies."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer
from mcp_testkit.scenario import load_scenario, validate

from ._support import DOCS, example

PAGE = DOCS / "resources.md"
LIMIT_S = 30.0


@pytest.fixture
def anyio_backend() -> str:
    """The examples run on asyncio."""
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_offerings_scenario_example(tmp_path: Path, mode: str) -> None:
    """The JSON scenario of resources, a template, a prompt and completions serves what it says, in both eras."""
    data = json.loads(example(PAGE, "offerings-scenario"))
    validate(data)
    path = tmp_path / "offerings.json"
    path.write_text(json.dumps(data))
    scenario = load_scenario(path)
    server = TestMcpServer(**scenario.options)
    scenario.apply(server)
    with anyio.fail_after(LIMIT_S):
        async with server, Client(server.url, mode=mode) as client:
            listed = await client.list_resources()
            logo = await client.read_resource("file:///logo.png")
            row = await client.read_resource("db://rows/7")
            got = await client.get_prompt("summarize", {"topic": "paging"})
            ids = await client.complete({"type": "ref/resource", "uri": "db://rows/{id}"}, {"name": "id", "value": "1"})
    assert [r.uri for r in listed.resources] == ["file:///notes.txt", "file:///logo.png"]
    assert logo.contents[0].blob == "iVBORw0KGgo="  # type: ignore[union-attr]
    assert row.contents[0].text == "row 7"  # type: ignore[union-attr]
    text, image, embedded = (message.content for message in got.messages)
    assert text == mcp_types.TextContent(type="text", text="Summarize paging, in a  tone")
    assert isinstance(image, mcp_types.ImageContent)
    assert isinstance(embedded, mcp_types.EmbeddedResource)
    assert embedded.resource.uri == "file:///paging.txt"
    assert ids.completion.values == ["1", "10"]
    server.journal.assert_prompted("summarize", arguments={"topic": "paging"}, times=1)
