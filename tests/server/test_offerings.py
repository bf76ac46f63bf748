"""Resources, resource templates, prompts and completion: scripted on the server, read by the SDK client in both
eras over a real socket and in-process, wrong requests answered with the era's error, and asserted in the journal."""

from __future__ import annotations

import base64
import json
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters

from mcp_testkit import TestMcpServer

from ._support import LIMIT_S, Stateless, messages, sdk_transport, serving

pytestmark = pytest.mark.anyio


def _scripted() -> TestMcpServer:
    server = TestMcpServer()
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain")
    server.resource("file:///logo.png", blob=b"\x89PNG\r\n", mime_type="image/png")
    server.resource_template("db://rows/{id}", reads=lambda params: f"row {params['id']}")
    server.prompt(
        "summarize",
        arguments=[{"name": "topic", "required": True}],
        messages=lambda arguments: [{"role": "user", "content": f"Summarize {arguments['topic']}"}],
    )
    server.complete(prompt="summarize", argument="topic", values=["mcp", "pytest", "mcp-testkit"])
    return server


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_lists_reads_gets_and_completes_in_both_eras(via: str, mode: str) -> None:
    """The SDK client lists and reads resources (text, blob, templated), gets a prompt and completes an argument."""
    server = _scripted()
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode=mode) as client:
                listed = await client.list_resources()
                text = await client.read_resource("file:///notes.txt")
                blob = await client.read_resource("file:///logo.png")
                row = await client.read_resource("db://rows/7")
                templates = await client.list_resource_templates()
                prompts = await client.list_prompts()
                got = await client.get_prompt("summarize", {"topic": "paging"})
                completed = await client.complete(
                    {"type": "ref/prompt", "name": "summarize"}, {"name": "topic", "value": "mc"}
                )
    assert [(r.uri, r.mime_type) for r in listed.resources] == [
        ("file:///notes.txt", "text/plain"),
        ("file:///logo.png", "image/png"),
    ]
    assert text.contents[0].text == "hello"  # type: ignore[union-attr]
    assert base64.b64decode(blob.contents[0].blob) == b"\x89PNG\r\n"  # type: ignore[union-attr]
    assert row.contents[0].text == "row 7"  # type: ignore[union-attr]
    assert [t.uri_template for t in templates.resource_templates] == ["db://rows/{id}"]
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts.prompts] == [("summarize", ["topic"])]
    assert got.messages[0].content.text == "Summarize paging"  # type: ignore[union-attr]
    assert completed.completion.values == ["mcp", "mcp-testkit"]
    era = "handshake" if mode == "legacy" else "stateless"
    assert {r.era for r in server.journal.requests("resources/read")} == {era}
    assert len(server.journal.assert_read("db://rows/7", times=1)) == 1
    server.journal.assert_prompted("summarize", arguments={"topic": "paging"}, times=1)


async def test_capabilities_name_resources_and_prompts_only_when_scripted(via: str) -> None:
    """A tools-only server announces tools and logging as before; scripting a resource adds `resources`."""
    server = TestMcpServer()
    async with serving(server, via) as wire:
        bare = messages(await wire.initialize())[0]["result"]["capabilities"]
        server.resource("file:///a", text="a")
        server.prompt("p", messages=[{"role": "user", "content": "hi"}])
        full = messages(await wire.initialize())[0]["result"]["capabilities"]
    assert set(bare) == {"tools", "logging"}
    assert full["resources"] == {"subscribe": True, "listChanged": True}
    assert full["prompts"] == {"listChanged": True}


async def test_wrong_requests_get_the_eras_error_are_journaled_and_the_server_keeps_serving(via: str) -> None:
    """An unknown URI (-32002 in the handshake era, -32602 in 2026-07-28), a missing required prompt argument and an
    unknown prompt are clear JSON-RPC errors, each journaled, and the next request is answered."""
    server = _scripted()
    async with serving(server, via) as wire:
        await wire.initialize()
        unknown = await wire.request("resources/read", {"uri": "file:///nope"})
        missing = await wire.request("prompts/get", {"name": "summarize", "arguments": {}})
        nothing = await wire.request("prompts/get", {"name": "nope"})
        stateless = await Stateless(wire).post("resources/read", {"uri": "file:///nope"})
        still = await wire.request("resources/read", {"uri": "file:///notes.txt"})
    assert unknown["error"]["code"] == -32002
    assert unknown["error"]["data"] == {"uri": "file:///nope"}
    assert missing["error"]["code"] == -32602
    assert "missing required argument(s) topic" in missing["error"]["message"]
    assert (nothing["error"]["code"], nothing["error"]["message"]) == (-32602, "Unknown prompt: nope")
    assert stateless.status_code == 400
    assert messages(stateless)[0]["error"]["code"] == -32602
    assert still["result"]["contents"][0]["text"] == "hello"
    reads = server.journal.requests("resources/read")
    assert [r.status for r in reads] == [200, 400, 200]
    assert [r.era for r in reads] == ["handshake", "stateless", "handshake"]


async def test_a_template_reader_that_raises_is_an_internal_error_kept_for_check(via: str) -> None:
    """A `reads` function that raises answers -32603 naming it, and `server.check()` reports the exception."""
    server = TestMcpServer()

    def broken(params: dict[str, str]) -> str:
        raise RuntimeError("no such row")

    server.resource_template("db://rows/{id}", reads=broken)
    async with serving(server, via) as wire:
        await wire.initialize()
        answer = await wire.request("resources/read", {"uri": "db://rows/1"})
    assert answer["error"]["code"] == -32603
    assert "RuntimeError: no such row" in answer["error"]["message"]
    with pytest.raises(AssertionError, match="no such row"):
        server.check()


async def test_listings_page_in_the_servers_page_size() -> None:
    """`resources/list` and `prompts/list` page like `tools/list`, behind opaque cursors; a bad cursor is -32602."""
    server = TestMcpServer(page_size=2)
    for number in range(5):
        server.resource(f"file:///{number}.txt", text=str(number))
    async with serving(server, "socket") as wire:
        await wire.initialize()
        seen: list[str] = []
        cursor: Any = None
        for _ in range(5):
            params = {} if cursor is None else {"cursor": cursor}
            result = (await wire.request("resources/list", params))["result"]
            seen.extend(r["uri"] for r in result["resources"])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        bad = await wire.request("resources/list", {"cursor": "not-ours"})
    assert seen == [f"file:///{n}.txt" for n in range(5)]
    assert bad["error"]["code"] == -32602


async def test_subscribers_hear_of_an_update_and_sessions_of_listing_changes() -> None:
    """A session subscribed to a URI gets notifications/resources/updated on its GET stream when a test updates it;
    adding a prompt sends notifications/prompts/list_changed; after unsubscribing no update comes."""
    async with serving(TestMcpServer(get_stream=True), "socket") as wire:
        live = wire.server
        live.resource("file:///notes.txt", text="hello")
        await wire.initialize()
        assert "result" in await wire.request("resources/subscribe", {"uri": "file:///notes.txt"})
        with anyio.fail_after(LIMIT_S):
            headers = wire.headers(accept="text/event-stream")
            async with wire.client.stream("GET", wire.path, headers=headers) as stream:
                async with aclosing(httpx2.EventSource(stream).__aiter__()) as source:
                    live.update_resource("file:///notes.txt", text="changed")
                    updated = (await source.__anext__()).json()
                    live.prompt("fresh", messages=[{"role": "user", "content": "hi"}])
                    changed = (await source.__anext__()).json()
        read = await wire.request("resources/read", {"uri": "file:///notes.txt"})
    assert updated == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "file:///notes.txt"},
    }
    assert changed == {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
    assert read["result"]["contents"][0]["text"] == "changed"


def test_scripting_mistakes_are_clear_errors() -> None:
    """Both text and blob, a template without a parameter, an unknown resource to update or remove: each names it."""
    server = TestMcpServer()
    with pytest.raises(ValueError, match="exactly one of text= or blob="):
        server.resource("file:///x", text="a", blob=b"a")
    with pytest.raises(ValueError, match=r"has no \{parameter\}"):
        server.resource_template("db://rows", reads=lambda params: "")
    with pytest.raises(KeyError, match="no resource 'file:///x'"):
        server.update_resource("file:///x", text="b")
    with pytest.raises(KeyError, match="no prompt 'p'"):
        server.remove_prompt("p")
    with pytest.raises(ValueError, match="exactly one of prompt= or resource_template="):
        server.complete(argument="a", values=[])


async def test_journal_assertions_say_what_came_instead(via: str) -> None:
    """assert_read and assert_prompted fail naming what was asked for and listing the requests that did come."""
    server = _scripted()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.request("resources/read", {"uri": "file:///notes.txt"})
    with pytest.raises(AssertionError, match=r"resources/read of 'file:///logo.png' at least once, it came 0 times"):
        server.journal.assert_read("file:///logo.png")
    with pytest.raises(AssertionError, match=r"file:///notes.txt"):
        server.journal.assert_read("file:///notes.txt", times=2)
    with pytest.raises(AssertionError, match="the server received no prompts/get at all"):
        server.journal.assert_prompted("summarize")


SCENARIO = '''
def scenario(server):
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain")
    server.resource_template("db://rows/{id}", reads=lambda params: "row " + params["id"])
    server.prompt("summarize", arguments=[{"name": "topic", "required": True}],
                  messages=lambda arguments: [{"role": "user", "content": "Summarize " + arguments["topic"]}])
'''


async def test_stdio_serves_resources_and_prompts(tmp_path: Path) -> None:
    """`serve --stdio` with a Python scenario: the SDK stdio client lists and reads resources and gets a prompt;
    the journal file has each request."""
    scenario = tmp_path / "offerings.py"
    scenario.write_text(SCENARIO)
    journal = tmp_path / "journal.jsonl"
    args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario), "--journal", str(journal)]
    with anyio.fail_after(LIMIT_S * 3):
        async with Client(StdioServerParameters(command=sys.executable, args=args), mode="legacy") as client:
            listed = await client.list_resources()
            row = await client.read_resource("db://rows/3")
            got = await client.get_prompt("summarize", {"topic": "stdio"})
    assert [r.uri for r in listed.resources] == ["file:///notes.txt"]
    assert row.contents[0].text == "row 3"  # type: ignore[union-attr]
    assert got.messages[0].content.text == "Summarize stdio"  # type: ignore[union-attr]
    methods = [json.loads(line)["rpc_method"] for line in journal.read_text().splitlines()]
    assert methods[2:] == ["resources/list", "resources/read", "prompts/get"]
