"""Cassettes of resources, templates, prompts and completion: recorded through the proxy from a live server,
replayed to the SDK client in both eras answer for answer, with the replay's capabilities saying so; a request
the recording never made is a loud error; a tools-only cassette replays as before."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client, MCPError

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Cassette, record

from ._support import LIMIT_S, dumped

pytestmark = pytest.mark.anyio


def _live() -> TestMcpServer:
    server = TestMcpServer("offering", page_size=2)
    server.tool("echo", returns="echoed")
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain", description="Notes")
    server.resource("file:///logo.png", blob=b"\x89PNG", mime_type="image/png")
    server.resource("file:///more.txt", text="more")
    server.resource_template("db://rows/{id}", reads=lambda params: f"row {params['id']}")
    server.prompt(
        "summarize",
        arguments=[{"name": "topic", "required": True}],
        messages=lambda arguments: [
            {"role": "user", "content": f"Summarize {arguments['topic']}"},
            {"role": "user", "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}},
        ],
    )
    server.complete(prompt="summarize", argument="topic", values=["mcp", "pytest", "mcp-testkit"])
    return server


@asynccontextmanager
async def _started(server: TestMcpServer) -> AsyncIterator[TestMcpServer]:
    with anyio.fail_after(LIMIT_S):
        await anyio.to_thread.run_sync(server.start)
    try:
        yield server
    finally:
        with anyio.fail_after(LIMIT_S):
            await anyio.to_thread.run_sync(server.stop)


async def _unknown_request(url: str, method: str) -> None:
    """A session that sends one request of a method the server does not know (answered -32601, recorded)."""
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    with anyio.fail_after(LIMIT_S):
        async with httpx2.AsyncClient(headers=headers) as http:
            opened = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}
            await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            answer = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": method}, headers=session)
    assert answer.json()["error"]["code"] == -32601


async def _walk(client: Client, method: Any) -> list[Any]:
    entries: list[Any] = []
    cursor = None
    while True:
        page = await method(cursor=cursor)
        entries.extend(dumped(entry) for entry in getattr(page, "resources", None) or getattr(
            page, "resource_templates", None) or getattr(page, "prompts", None) or [])  # fmt: skip
        cursor = page.next_cursor
        if not cursor:
            return entries


async def _offered(url: str, mode: str) -> dict[str, Any]:
    """Everything the SDK client gets of the offerings: listings walked, two reads, a templated read, a prompt,
    a completion, and the capabilities the server announced."""
    with anyio.fail_after(LIMIT_S):
        async with Client(url, mode=mode) as client:
            capabilities = client.server_capabilities
            return {
                "capabilities": sorted(
                    key for key in ("resources", "prompts", "completions") if getattr(capabilities, key, None)
                ),
                "tools": [dumped(tool) for tool in (await client.list_tools()).tools],
                "resources": await _walk(client, client.list_resources),
                "templates": await _walk(client, client.list_resource_templates),
                "prompts": await _walk(client, client.list_prompts),
                "notes": dumped(await client.read_resource("file:///notes.txt")),
                "logo": dumped(await client.read_resource("file:///logo.png")),
                "row": dumped(await client.read_resource("db://rows/7")),
                "prompt": dumped(await client.get_prompt("summarize", {"topic": "paging"})),
                "completion": dumped(
                    await client.complete({"type": "ref/prompt", "name": "summarize"}, {"name": "topic", "value": "mc"})
                ),
            }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_replay_answers_resources_prompts_and_completion_as_recorded(tmp_path: Path, mode: str) -> None:
    """Recorded through the proxy and replayed, every listing, read, prompt and completion is what the live
    server gave, in both eras, and the replay announces resources, prompts and completions."""
    out = tmp_path / "offerings.json"
    async with _started(_live()) as live:
        direct = await _offered(live.url, mode)
        async with record(live.url, out=out) as proxy:
            through = await _offered(proxy, mode)
    replay = TestMcpServer.from_cassette(out)
    async with replay:
        replayed = await _offered(replay.url, mode)
    replay.check()
    assert through == direct
    assert replayed == direct
    assert direct["capabilities"] == ["completions", "prompts", "resources"]
    assert not [note for note in replay.notes if "does not serve" in note]
    replay.journal.assert_read("db://rows/7", times=1)


async def test_a_request_never_recorded_is_an_error_that_fails_check(tmp_path: Path) -> None:
    """A read, prompt or completion the recording does not hold is -32603 naming the cassette, and check() fails."""
    out = tmp_path / "offerings.json"
    async with _started(_live()) as live:
        async with record(live.url, out=out) as proxy:
            await _offered(proxy, "legacy")
    replay = TestMcpServer.from_cassette(out)
    async with replay:
        with anyio.fail_after(LIMIT_S):
            async with Client(replay.url, mode="legacy") as client:
                with pytest.raises(MCPError, match="has no recorded resources/read"):
                    await client.read_resource("db://rows/8")
                with pytest.raises(MCPError, match="has no recorded prompts/get"):
                    await client.get_prompt("summarize", {"topic": "other"})
                replay.resource("file:///scripted.txt", text="scripted on the replay")
                scripted = await client.read_resource("file:///scripted.txt")
    assert scripted.contents[0].text == "scripted on the replay"  # type: ignore[union-attr]
    with pytest.raises(AssertionError, match="has no recorded"):
        replay.check()


async def test_a_tools_only_cassette_replays_as_before(tmp_path: Path) -> None:
    """A cassette without resources or prompts announces neither, and answers their methods -32601 as before."""
    out = tmp_path / "tools.json"
    tools_only = TestMcpServer("tools")
    tools_only.tool("echo", returns="echoed")
    async with _started(tools_only) as live:
        async with record(live.url, out=out) as proxy:
            with anyio.fail_after(LIMIT_S):
                async with Client(proxy, mode="legacy") as client:
                    await client.call_tool("echo", {})
    data = json.loads(out.read_text())
    assert {e["request"].get("method") for e in data["exchanges"] if isinstance(e.get("request"), dict)} >= {
        "initialize",
        "tools/call",
    }
    replay = TestMcpServer.from_cassette(Cassette.load(out))
    async with replay:
        with anyio.fail_after(LIMIT_S):
            async with Client(replay.url, mode="legacy") as client:
                capabilities = client.server_capabilities
                with pytest.raises(MCPError, match="Method not found"):
                    await client.list_resources()
                echoed = await client.call_tool("echo", {})
    assert capabilities is not None
    assert capabilities.resources is None
    assert capabilities.prompts is None
    assert dumped(echoed)["content"] == [{"type": "text", "text": "echoed"}]


async def test_serve_cassette_prints_what_the_replay_cannot_serve_one_line_each(tmp_path: Path) -> None:
    """`serve --cassette` prints, when it starts, one line per recorded method the replay cannot serve."""
    from standalone._support import start

    out = tmp_path / "offerings.json"
    async with _started(_live()) as live:
        async with record(live.url, out=out) as proxy:
            await _offered(proxy, "legacy")
    data = json.loads(out.read_text())
    exchanges = data["exchanges"]
    read = next(e for e in exchanges if (e.get("request") or {}).get("method") == "resources/read")
    for offset, method in enumerate(("tasks/list", "resources/subscribe", "tasks/list")):
        extra = json.loads(json.dumps(read))
        extra["seq"] = max(e["seq"] for e in exchanges) + 1 + offset
        extra["request"]["method"] = method
        exchanges.append(extra)
    out.write_text(json.dumps(data))
    served = await anyio.to_thread.run_sync(lambda: start(tmp_path, "--cassette", str(out)))
    await anyio.to_thread.run_sync(served.stop)
    lines = [line for line in served.stderr.splitlines() if line.startswith(f"mcp-testkit: replay of {out}: ")]
    assert any(line.endswith("a replay does not serve tasks/list (2 recorded): it answers -32601 (Method not found)")
               for line in lines), served.stderr  # fmt: skip
    assert any("resources/subscribe (1 recorded) with an empty result" in line for line in lines), served.stderr


async def test_verify_compares_listings_and_answers_and_names_what_it_did_not(tmp_path: Path) -> None:
    """verify compares resources, templates and prompts with the live ones, sends the recorded reads, prompts and
    completions again, marks a removed resource or a newly required argument breaking, and names the recorded
    methods it did not compare."""
    from mcp_testkit.cassettes import verify

    out = tmp_path / "offerings.json"
    live = _live()
    async with _started(live):
        async with record(live.url, out=out) as proxy:
            await _offered(proxy, "legacy")
            await _unknown_request(proxy, "tasks/list")
        clean = await anyio.to_thread.run_sync(lambda: verify(out, live.url))
        live.remove_resource("file:///more.txt")
        live.resource("file:///notes.txt", text="changed", mime_type="text/plain", description="Notes")
        live.prompt(
            "summarize",
            arguments=[{"name": "topic", "required": True}, {"name": "tone", "required": True}],
            messages=[{"role": "user", "content": "Summarize"}],
        )
        changed = await anyio.to_thread.run_sync(lambda: verify(out, live.url))
    assert clean.changes == []
    assert clean.offerings_compared == {"resource": 3, "resource template": 1, "prompt": 1}
    assert clean.requests_compared == 5
    assert clean.not_compared == ["tasks/list (1 recorded)"]
    assert clean.format().splitlines()[-2:] == [
        "1 tool compared, 0 read-only calls sent; 3 resources, 1 resource template, 1 prompt compared, 5 reads sent; "
        "not compared: tasks/list (1 recorded)",
        "no change",
    ]
    lines = [change.line().strip() for change in changed.changes]
    assert "! resource file:///more.txt: removed (breaking)" in lines
    assert "! prompt summarize: new required argument 'tone' (breaking)" in lines
    assert '~ resources/read {"uri": "file:///notes.txt"}: answer changed' in lines
    assert changed.exit_status == 1


async def test_a_prompt_asked_for_but_never_listed_replays_with_a_bare_definition(tmp_path: Path) -> None:
    """A recording that got a prompt and completed its argument without listing prompts replays both answers,
    lists the prompt bare, and says so in its notes."""
    out = tmp_path / "unlisted.json"
    async with _started(_live()) as live:
        async with record(live.url, out=out) as proxy:
            with anyio.fail_after(LIMIT_S):
                async with Client(proxy, mode="legacy") as client:
                    got = await client.get_prompt("summarize", {"topic": "x"})
                    completed = await client.complete(
                        {"type": "ref/prompt", "name": "summarize"}, {"name": "topic", "value": "py"}
                    )
    replay = TestMcpServer.from_cassette(out)
    async with replay:
        with anyio.fail_after(LIMIT_S):
            async with Client(replay.url, mode="legacy") as client:
                listed = await client.list_prompts()
                again = await client.get_prompt("summarize", {"topic": "x"})
                completed_again = await client.complete(
                    {"type": "ref/prompt", "name": "summarize"}, {"name": "topic", "value": "py"}
                )
    replay.check()
    assert [dumped(p) for p in listed.prompts] == [{"name": "summarize"}]
    assert dumped(again) == dumped(got)
    assert dumped(completed_again) == dumped(completed)
    assert dumped(completed)["completion"] == {"values": ["pytest"], "total": 1, "hasMore": False}
    assert "prompt 'summarize' was asked for but never listed: it is replayed with a bare definition" in replay.notes
