"""The shared SSE decoder (mcp_testkit/_sse.py): events as the spec dispatches them, and a bound on one event,
so that a client pointed at any server cannot be made to hold an event without end."""

from __future__ import annotations

import anyio
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit._wire import sse as _sse
from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge
from mcp_testkit.bridge import MCPCallOutcomeUnknown, ServerConfig, ToolPool

LIMIT_S = 20.0


def test_events_split_across_chunks_are_dispatched_whole() -> None:
    """An event whose lines arrive in pieces is dispatched once, with its data lines joined and its id kept."""
    decoder = SseDecoder()
    assert decoder.feed(b"id: 7\r\nevent: message\r\ndata: {\"a\"") == []
    assert decoder.feed(b": 1}\r\ndata: x\r") == []
    [event] = decoder.feed(b"\n\r\n")
    assert (event.event, event.data, decoder.last_event_id) == ("message", '{"a": 1}\nx', "7")


def test_an_event_without_end_is_refused_at_the_bound() -> None:
    """Data that never ends its line, or data lines that never end their event, raise once past the bound."""
    endless_line = SseDecoder(max_event_chars=1000)
    endless_line.feed(b"data: " + b"x" * 900)
    with pytest.raises(SseEventTooLarge, match="max_event_chars"):
        endless_line.feed(b"x" * 200)
    endless_event = SseDecoder(max_event_chars=1000)
    for _ in range(19):
        endless_event.feed(b"data: " + b"y" * 50 + b"\n")
    with pytest.raises(SseEventTooLarge):
        endless_event.feed(b"data: " + b"y" * 50 + b"\n")


def test_the_bound_is_per_event() -> None:
    """Many events each under the bound pass, whatever their total; a resumed decoder keeps the bound."""
    decoder = SseDecoder(max_event_chars=100)
    events = [event for _ in range(50) for event in decoder.feed(b"data: " + b"z" * 80 + b"\n\n")]
    assert len(events) == 50
    assert decoder.resumed().max_event_chars == 100


@pytest.mark.anyio
async def test_the_bridge_reports_an_event_over_the_bound_and_does_not_resend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over a socket, a write whose SSE answer passes the bound is outcome-unknown, naming the bound, and ran once."""
    monkeypatch.setattr(_sse, "MAX_EVENT_CHARS", 64 * 1024)
    server = TestMcpServer(response_mode="sse")
    server.tool("dump", description="Returns a lot.", returns="x" * 200_000)
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([ServerConfig(name="t", url=server.url)], cache=False) as pool:
            with pytest.raises(MCPCallOutcomeUnknown, match="max_event_chars"):
                await pool.call("t.dump")
            monkeypatch.setattr(_sse, "MAX_EVENT_CHARS", 1024 * 1024)
            assert await pool.call("t.dump") == "x" * 200_000  # the session survives the refused event
    assert server.executions("dump") == 2
