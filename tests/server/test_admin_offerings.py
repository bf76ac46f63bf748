"""The admin API's routes for resources, templates, prompts and completions: the scenario keys' JSON, added,
replaced and removed while a client is connected, with the notifications the Python methods send."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import LIMIT_S, Wire, serving

pytestmark = pytest.mark.anyio

TOKEN = "admin-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}


def _server() -> TestMcpServer:
    server = TestMcpServer("admin", get_stream=True)
    server.asgi_app = AdminApp(server, TOKEN)  # type: ignore[assignment]
    return server


async def _admin(wire: Wire, method: str, endpoint: str, body: Any = None, **query: str) -> httpx2.Response:
    with anyio.fail_after(LIMIT_S):
        return await wire.client.request(
            method, f"{PREFIX}/{endpoint}", json=body, params=query or None, headers=BEARER
        )


async def test_each_route_scripts_what_a_client_then_reads() -> None:
    """POSTed resources (text, blob), a template, a prompt and completions are served at once over the socket."""
    async with serving(_server(), "socket") as wire:
        added = await _admin(wire, "POST", "resources", {"uri": "file:///a.txt", "text": "A"})
        await _admin(wire, "POST", "resources", {"uri": "file:///b.bin", "blob": "AAE="})
        await _admin(wire, "POST", "resource-templates", {"uriTemplate": "db://rows/{id}", "text": "row {id}"})
        message = {"role": "user", "content": "Hi {who}"}
        prompt = {"name": "greet", "arguments": [{"name": "who"}], "messages": [message]}
        await _admin(wire, "POST", "prompts", prompt)
        completion = await _admin(wire, "POST", "completions", {"prompt": "greet", "argument": "who", "values": ["al"]})
        await wire.initialize()
        blob = await wire.request("resources/read", {"uri": "file:///b.bin"})
        row = await wire.request("resources/read", {"uri": "db://rows/3"})
        got = await wire.request("prompts/get", {"name": "greet", "arguments": {"who": "Bo"}})
        ref = {"type": "ref/prompt", "name": "greet"}
        values = await wire.request("completion/complete", {"ref": ref, "argument": {"name": "who", "value": "a"}})
    assert added.status_code == 201
    assert added.json() == {"resource": {"uri": "file:///a.txt", "name": "a.txt", "size": 1}}
    assert completion.status_code == 201
    assert blob["result"]["contents"][0]["blob"] == "AAE="
    assert row["result"]["contents"][0]["text"] == "row 3"
    assert got["result"]["messages"][0]["content"] == {"type": "text", "text": "Hi Bo"}
    assert values["result"]["completion"]["values"] == ["al"]
    wire.server.journal.assert_read("db://rows/3", times=1)


async def test_a_posted_update_notifies_subscribers_and_a_removal_the_listing() -> None:
    """POSTing new content for a known URI sends notifications/resources/updated to its subscribers (200, not 201);
    DELETE sends list_changed; an unknown one is 404 naming those there are."""
    async with serving(_server(), "socket") as wire:
        await _admin(wire, "POST", "resources", {"uri": "file:///a.txt", "text": "A"})
        await _admin(wire, "POST", "resources", {"uri": "file:///kept.txt", "text": "K"})
        await wire.initialize()
        assert "result" in await wire.request("resources/subscribe", {"uri": "file:///a.txt"})
        with anyio.fail_after(LIMIT_S):
            headers = wire.headers(accept="text/event-stream")
            async with wire.client.stream("GET", wire.path, headers=headers) as stream:
                async with aclosing(httpx2.EventSource(stream).__aiter__()) as source:
                    replaced = await _admin(wire, "POST", "resources", {"uri": "file:///a.txt", "text": "B"})
                    updated = (await source.__anext__()).json()
                    removed = await _admin(wire, "DELETE", "resources", uri="file:///a.txt")
                    changed = (await source.__anext__()).json()
        unknown = await _admin(wire, "DELETE", "prompts", name="nope")
        read = await wire.request("resources/read", {"uri": "file:///a.txt"})
    assert replaced.status_code == 200
    assert updated == {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a.txt"}}
    assert removed.json() == {"removed": "file:///a.txt"}
    assert changed == {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
    assert unknown.status_code == 404
    assert "no prompt 'nope'; prompts: (none)" in unknown.json()["message"]
    assert read["error"]["code"] == -32002


@pytest.mark.parametrize(
    ("method", "endpoint", "body", "query", "message"),
    [
        ("POST", "resources", {"uri": "file:///a", "blob": "%%"}, {}, "resource: blob: not base64"),
        ("POST", "resources", ["not", "an", "object"], {}, "resource: (top level): "),
        (
            "POST",
            "prompts",
            {"name": "p", "messages": [{"role": "user", "content": "{x}"}]},
            {},
            "prompt: messages/0/content: {x} is no argument of prompt 'p'",
        ),
        (
            "POST",
            "completions",
            {"prompt": "p", "argument": "a", "values": []},
            {},
            "completion: prompt: the server offers no prompt 'p'",
        ),
        ("DELETE", "resources", None, {}, "name the resource or template to remove: ?uri="),
        ("DELETE", "resource-templates", None, {"uri": "db://{id}"}, "no resource or template 'db://{id}'"),
    ],
)
async def test_mistakes_are_a_4xx_naming_the_field(
    method: str, endpoint: str, body: Any, query: dict[str, str], message: str
) -> None:
    """A bad body or a missing or unknown name is a 400 or 404 naming it, and the server keeps serving."""
    async with serving(_server(), "asgi") as wire:
        response = await _admin(wire, method, endpoint, body, **query)
        health = await _admin(wire, "GET", "health")
    assert response.status_code in (400, 404)
    assert message in response.json()["message"]
    assert health.status_code == 200
