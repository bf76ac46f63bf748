"""Resumable SSE streams of the handshake era (transports "Resumability and Redelivery", SEP-1699 polling):
priming events with `retry:`, `BreakStream`, and replay on a GET with `Last-Event-ID`."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client, MCPError

from mcp_testkit import TestMcpServer, ToolContext, faults

from ._support import LIMIT_S, events, messages, rpc, sdk_transport, serving

pytestmark = pytest.mark.anyio


def _call(tool: str, request_id: int = 1) -> dict[str, Any]:
    return rpc("tools/call", {"name": tool, "arguments": {}}, request_id)


async def test_resumable_stream_opens_with_a_priming_event_carrying_retry(via: str) -> None:
    """resumable=True: a 2025-11-25 POST stream starts with an event of an id, `retry:` and empty data."""
    server = TestMcpServer(response_mode="sse", resumable=True, retry_s=0.25)
    server.tool("t", returns="ok")
    async with serving(server, via) as wire:
        await wire.initialize("2025-11-25")
        response = await wire.post(_call("t"))
    priming, answer = events(response)
    assert set(priming) == {"id", "retry", "data"}
    assert priming["retry"] == "250"
    assert response.text.startswith(f"id: {priming['id']}\nretry: 250\ndata: \n\n")
    assert int(answer["id"]) > int(priming["id"])
    assert messages(response)[-1]["result"]["content"][0]["text"] == "ok"


async def test_resumable_stream_of_an_older_version_has_no_priming_event(via: str) -> None:
    """A client of 2025-06-18 may not expect an event without data: its streams open with the answer itself."""
    server = TestMcpServer(response_mode="sse", resumable=True, retry_s=0.25)
    server.tool("t", returns="ok")
    async with serving(server, via) as wire:
        await wire.initialize("2025-06-18")
        response = await wire.post(_call("t"))
    [answer] = events(response)
    assert answer["event"] == "message"


async def test_break_stream_keeps_the_answer_for_a_get_with_last_event_id(via: str) -> None:
    """BreakStream(after_events=1): the priming event and `retry:`, then the response ends; the call ran, and a
    GET with the priming event's id replays the answer, with the id it was given, and ends."""
    server = TestMcpServer(response_mode="sse", resumable=True)
    server.tool("create", returns="created")
    server.inject(faults.BreakStream(after_events=1, retry_s=0.1))
    async with serving(server, via) as wire:
        await wire.initialize()
        broken = await wire.post(_call("create", 7))
        [priming, retry] = events(broken)
        assert priming["data"] == ""
        assert retry == {"retry": "100"}
        assert server.executions("create") == 1
        resumed = await wire.send("GET", headers={**wire.headers(), "last-event-id": priming["id"]})
    assert resumed.status_code == 200
    assert resumed.headers["content-type"] == "text/event-stream"
    [answer] = events(resumed)
    assert int(answer["id"]) > int(priming["id"])
    assert messages(resumed) == [
        {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "created"}]}}
    ]
    post, get = server.journal.records[-2:]
    assert post.error is not None
    assert post.error.startswith("SSE stream broken by a fault after 1 event")
    assert post.executed is True
    assert (get.http_method, get.status, get.response) == ("GET", 200, messages(resumed)[0])


async def test_break_stream_without_priming_resumes_from_a_notification(via: str) -> None:
    """On a server that is not resumable, BreakStream keeps its own stream: a call's first notification has an
    id, and a GET naming it replays the rest (the answer); the server needs no GET stream for that."""
    server = TestMcpServer(response_mode="sse")

    async def chatty(arguments: dict[str, Any], context: ToolContext) -> str:
        await context.log("info", "starting")
        return "done"

    server.tool("chatty", returns=chatty)
    server.inject(faults.BreakStream(after_events=1))
    async with serving(server, via) as wire:
        await wire.initialize()
        broken = await wire.post(_call("chatty"))
        [log] = events(broken)
        assert messages(broken)[0]["method"] == "notifications/message"
        resumed = await wire.send("GET", headers={**wire.headers(), "last-event-id": log["id"]})
    assert messages(resumed)[0]["result"]["content"][0]["text"] == "done"


async def test_break_stream_after_no_event_leaves_nothing_to_resume(via: str) -> None:
    """BreakStream(after_events=0) sends no event at all: the call runs, and no id can name its stream."""
    server = TestMcpServer(response_mode="json")
    server.tool("create", returns="created")
    server.inject(faults.BreakStream(after_events=0))
    async with serving(server, via) as wire:
        await wire.initialize()
        broken = await wire.post(_call("create"))
    assert broken.status_code == 200
    assert broken.headers["content-type"] == "text/event-stream"
    assert broken.content == b""
    assert server.executions("create") == 1


@pytest.mark.parametrize("last_event_id", ["999999", "not-a-number", ""])
async def test_last_event_id_of_no_kept_event_is_refused_with_400(via: str, last_event_id: str) -> None:
    """A Last-Event-ID that names no event of the session's resumable streams: 400, a JSON-RPC error that says so."""
    server = TestMcpServer(resumable=True)
    async with serving(server, via) as wire:
        await wire.initialize()
        refused = await wire.send("GET", headers={**wire.headers(), "last-event-id": last_event_id})
        await wire.ping_ok()
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == -32600
    assert "names no event of a resumable stream of this session" in error["message"]
    assert server.journal.records[-2].status == 400


async def test_last_event_id_of_another_session_is_not_replayed(via: str) -> None:
    """Events are replayed only to the session whose stream they belong to."""
    server = TestMcpServer(response_mode="sse", resumable=True)
    server.tool("t", returns="ok")
    async with serving(server, via) as wire:
        await wire.initialize()
        [priming, _] = events(await wire.post(_call("t")))
        await wire.initialize()  # a second session
        refused = await wire.send("GET", headers={**wire.headers(), "last-event-id": priming["id"]})
    assert refused.status_code == 400


async def test_resumed_get_follows_a_stream_whose_answer_is_not_there_yet() -> None:
    """A GET that resumes a stream whose call still runs waits for the answer, sends it, then ends."""
    server = TestMcpServer(response_mode="sse", resumable=True)
    release = threading.Event()

    async def slow(arguments: dict[str, Any]) -> str:
        await anyio.to_thread.run_sync(release.wait, LIMIT_S)
        return "finally"

    server.tool("slow", returns=slow)
    server.inject(faults.BreakStream(after_events=1))
    async with serving(server, "socket") as wire:
        await wire.initialize()
        broken = await wire.post(_call("slow", 5))  # its response ends at the break: the call still runs
        [priming] = events(broken)
        headers = {**wire.headers(), "last-event-id": priming["id"]}
        with anyio.fail_after(LIMIT_S):
            async with wire.client.stream("GET", wire.path, headers=headers) as resumed:
                assert resumed.status_code == 200
                assert server.calls("slow")[0].response is None, "the call is still running"
                release.set()
                body = (await resumed.aread()).decode()
    assert '"text":"finally"' in body
    assert '"id":5' in body


async def test_sdk_client_resumes_a_broken_stream_with_last_event_id(via: str) -> None:
    """The official SDK client, its call's stream broken after the priming event, resumes with GET and
    Last-Event-ID and gets the answer; the tool ran once."""
    server = TestMcpServer(response_mode="sse", resumable=True, retry_s=0)
    server.tool("create", returns="created")
    server.inject(faults.BreakStream(after_events=1, retry_s=0))
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                result = await client.call_tool("create", {})
    assert result.content[0].text == "created"  # type: ignore[union-attr]
    assert server.executions("create") == 1
    resumed = [r for r in server.journal if r.http_method == "GET" and "last-event-id" in r.headers]
    assert len(resumed) == 1
    assert resumed[0].status == 200


async def test_sdk_client_cannot_resume_a_stream_broken_before_any_event(via: str) -> None:
    """BreakStream(after_events=0) leaves the SDK client no event id: the call fails, after the tool ran."""
    server = TestMcpServer(response_mode="sse", resumable=True)
    server.tool("create", returns="created")
    server.inject(faults.BreakStream(after_events=0))
    async with serving(server, via):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, via), mode="legacy") as client:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("create", {})
    assert raised.value.code == -32000
    assert server.executions("create") == 1
    assert not [r for r in server.journal if r.http_method == "GET" and "last-event-id" in r.headers]


def test_break_stream_is_a_fault_of_the_handshake_era_only() -> None:
    """The stateless era has no event ids: BreakStream is refused for it when injected."""
    server = TestMcpServer()
    with pytest.raises(ValueError, match="BreakStream"):
        server.inject(faults.BreakStream(), era="stateless")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"after_events": -1}, "after_events must be an int >= 0"),
        ({"after_events": True}, "after_events must be an int >= 0"),
        ({"retry_s": -5}, "retry_s must be a number of seconds >= 0"),
    ],
)
def test_break_stream_refuses_values_it_cannot_mean(options: dict[str, Any], message: str) -> None:
    """BreakStream's fields are checked when it is built."""
    with pytest.raises(ValueError, match=message):
        faults.BreakStream(**options)


@pytest.mark.parametrize(
    ("options", "message"), [({"retry_s": -1}, "retry_s must be"), ({"resumable": 1}, "resumable")]
)
def test_server_refuses_resumption_settings_it_cannot_mean(options: dict[str, Any], message: str) -> None:
    """TestMcpServer(resumable=..., retry_s=...) are checked when it is built."""
    with pytest.raises(ValueError, match=message):
        TestMcpServer(**options)
