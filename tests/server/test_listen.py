"""`subscriptions/listen` (2026-07-28) over a real socket: the acknowledgement first, the client's filter honoured
strictly, the subscription id on every notification, changes a test makes delivered, the journal's record of it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer

from ._support import ACCEPT, LIMIT_S, Stateless, Wire, messages, modern, sdk_transport, serving, wait_for

pytestmark = pytest.mark.anyio

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def _server() -> TestMcpServer:
    server = TestMcpServer("listening")
    server.tool("echo", returns="echo")
    server.resource("file:///watched.txt", text="one")
    server.resource("file:///other.txt", text="other")
    server.prompt("hello", messages=[{"role": "user", "content": "hi"}])
    return server


class Stream:
    """The messages of an open listen stream, read one at a time."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self) -> dict[str, Any]:
        """The next message on the stream (bounded in time)."""
        with anyio.fail_after(LIMIT_S):
            async for line in self._lines:
                if line.startswith("data: "):
                    return json.loads(line[6:])  # type: ignore[no-any-return]
        raise AssertionError("the listen stream ended")

    async def rest(self) -> list[dict[str, Any]]:
        """Every message until the server ends the stream."""
        found = []
        with anyio.fail_after(LIMIT_S):
            async for line in self._lines:
                if line.startswith("data: "):
                    found.append(json.loads(line[6:]))
        return found


@asynccontextmanager
async def listening(wire: Wire, notifications: dict[str, Any], request_id: Any = "listen-1") -> AsyncIterator[Stream]:
    """A listen stream opened with this filter, its acknowledgement not yet read."""
    message, mirrored = modern("subscriptions/listen", {"notifications": notifications}, request_id)
    headers = {"accept": ACCEPT, "content-type": "application/json", **mirrored}
    async with wire.client.stream("POST", wire.path, content=json.dumps(message), headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Stream(response)


async def _in_thread(action: Any) -> None:
    """Script a change from the test's own thread, as a test does while traffic flows."""
    await anyio.to_thread.run_sync(action)


async def test_the_acknowledgement_comes_first_and_names_what_the_server_honours() -> None:
    """The first message is notifications/subscriptions/acknowledged with the honoured filter and the subscription
    id (the request's id) in its _meta; unknown keys of the filter are left out of it."""
    server = _server()
    async with serving(server, "socket") as wire:
        requested = {"toolsListChanged": True, "promptsListChanged": False, "somethingElse": True}
        async with listening(wire, requested, request_id=7) as stream:
            ack = await stream.next()
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": {SUBSCRIPTION_ID: 7}},
    }


async def test_changes_reach_only_the_streams_that_asked_for_them_tagged_with_their_id() -> None:
    """A tool added reaches the tools stream and not the prompts stream; a prompt added reaches only the prompts
    stream; each notification carries its own stream's subscription id."""
    server = _server()
    async with serving(server, "socket") as wire:
        async with (
            listening(wire, {"toolsListChanged": True}, "tools") as tools,
            listening(wire, {"promptsListChanged": True}, "prompts") as prompts,
        ):
            await tools.next()
            await prompts.next()
            await _in_thread(lambda: server.tool("added", returns="ok"))
            await _in_thread(lambda: server.prompt("more", messages=[{"role": "user", "content": "x"}]))
            to_tools = await tools.next()
            to_prompts = await prompts.next()
            await _in_thread(lambda: server.remove_tool("added"))
            again = await tools.next()
    assert to_tools == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: "tools"}},
    }
    assert to_prompts["method"] == "notifications/prompts/list_changed"
    assert to_prompts["params"]["_meta"] == {SUBSCRIPTION_ID: "prompts"}
    assert again["method"] == "notifications/tools/list_changed"


async def test_resource_updates_reach_only_the_subscribed_uris() -> None:
    """update_resource of a subscribed URI sends notifications/resources/updated; another URI's update does not,
    and neither does a resources list change the stream did not ask for."""
    server = _server()
    async with serving(server, "socket") as wire:
        async with listening(wire, {"resourceSubscriptions": ["file:///watched.txt"]}) as stream:
            ack = await stream.next()
            await _in_thread(lambda: server.update_resource("file:///other.txt", text="changed"))
            await _in_thread(lambda: server.resource("file:///new.txt", text="new"))
            await _in_thread(lambda: server.update_resource("file:///watched.txt", text="two"))
            updated = await stream.next()
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["file:///watched.txt"]}
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"] == {"uri": "file:///watched.txt", "_meta": {SUBSCRIPTION_ID: "listen-1"}}


async def test_stopping_the_server_ends_the_stream_with_its_result_and_the_journal_keeps_what_was_sent() -> None:
    """The server's stop ends an open stream gracefully with the listen result (resultType, subscription id); the
    journal's record of the request holds every message sent on it, in order."""
    server = _server()
    async with serving(server, "socket") as wire:
        async with listening(wire, {"resourcesListChanged": True}) as stream:
            await stream.next()
            await _in_thread(lambda: server.remove_resource("file:///other.txt"))
            await stream.next()
            await _in_thread(server.stop)
            rest = await stream.rest()
    assert len(rest) == 1
    result = rest[0]
    assert (result["id"], result["result"]["resultType"]) == ("listen-1", "complete")
    assert result["result"]["_meta"][SUBSCRIPTION_ID] == "listen-1"
    (record,) = server.journal.requests("subscriptions/listen")
    assert (record.era, record.status) == ("stateless", 200)
    assert [message.get("method", "result") for message in record.response] == [
        "notifications/subscriptions/acknowledged",
        "notifications/resources/list_changed",
        "result",
    ]


async def test_reset_ends_open_streams_gracefully_and_new_ones_hear_the_fresh_state() -> None:
    """`reset()` ends an open listen stream with its result; a stream opened afterwards hears the fresh server's
    changes."""
    server = _server()
    async with serving(server, "socket") as wire:
        async with listening(wire, {"toolsListChanged": True}, "before") as before:
            await before.next()
            await _in_thread(server.reset)
            ended = await before.rest()
        async with listening(wire, {"toolsListChanged": True}, "after") as after:
            await after.next()
            await _in_thread(lambda: server.tool("fresh", returns="ok"))
            heard = await after.next()
    assert [message.get("id") for message in ended] == ["before"]
    assert heard["params"]["_meta"] == {SUBSCRIPTION_ID: "after"}


async def test_a_client_closing_its_stream_is_journaled_and_later_changes_go_nowhere() -> None:
    """A stream the client closes leaves the server's table of listeners; the record says the client closed it."""
    server = _server()
    async with serving(server, "socket") as wire:
        async with listening(wire, {"toolsListChanged": True}) as stream:
            await stream.next()
        await wait_for(server, lambda journal: any(r.error for r in journal.requests("subscriptions/listen")))
        await _in_thread(lambda: server.tool("later", returns="ok"))
        still = await Stateless(wire).result("tools/list")
    (record,) = server.journal.requests("subscriptions/listen")
    assert record.error == "the client closed its subscriptions/listen stream"
    assert [message["method"] for message in record.response] == ["notifications/subscriptions/acknowledged"]
    assert "later" in [tool["name"] for tool in still["tools"]]


@pytest.mark.parametrize(
    "notifications",
    [None, {"toolsListChanged": "yes"}, {"resourceSubscriptions": "file:///watched.txt"}],
    ids=["no filter", "not a boolean", "not a list"],
)
async def test_a_listen_request_without_a_valid_filter_is_invalid_params(via: str, notifications: Any) -> None:
    """A missing or mistyped `notifications` filter is 400 and -32602 naming the filter, journaled; the server
    keeps serving."""
    server = _server()
    params = {} if notifications is None else {"notifications": notifications}
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("subscriptions/listen", params)
        still = await Stateless(wire).result("tools/list", request_id=2)
    assert response.status_code == 400
    error = messages(response)[0]["error"]
    assert error["code"] == -32602
    assert "params.notifications" in error["message"]
    (record,) = server.journal.requests("subscriptions/listen")
    assert record.status == 400
    assert still["tools"]


async def test_discover_announces_change_notifications() -> None:
    """server/discover announces tools.listChanged, resources.subscribe/listChanged and prompts.listChanged."""
    server = _server()
    async with serving(server, "asgi") as wire:
        result = await Stateless(wire).result("server/discover")
    capabilities = result["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}


async def test_the_sdk_client_listens_and_receives_a_tool_change_and_a_resource_update() -> None:
    """The official SDK client's `listen()` over a real socket gets the acknowledged filter and typed events for a
    tool added and a subscribed resource updated."""
    from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

    server = _server()
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode="auto") as client:
                async with client.listen(
                    tools_list_changed=True, resource_subscriptions=["file:///watched.txt"]
                ) as subscription:
                    honoured = subscription.honored
                    await _in_thread(lambda: server.tool("added", returns="ok"))
                    first = await subscription.__anext__()
                    await _in_thread(lambda: server.update_resource("file:///watched.txt", text="two"))
                    second = await subscription.__anext__()
    assert honoured.tools_list_changed is True
    assert honoured.resource_subscriptions == ["file:///watched.txt"]
    assert first == ToolsListChanged()
    assert second == ResourceUpdated("file:///watched.txt")
    assert server.journal.requests("subscriptions/listen")[0].era == "stateless"
