"""The suite-wide referee check (tests/trusted_traffic.py) finds what a trusted client broke, and only that."""

from __future__ import annotations

import httpx2
import pytest
from trusted_traffic import trusted_violations, watch_servers

from mcp_testkit import TestMcpServer


def _initialize(client: httpx2.Client, url: str, name: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}},
    }
    answer = client.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
    return answer.headers["mcp-session-id"]


@pytest.mark.sends_invalid_mcp("it sends invalid MCP in the reference bridge's name, to see it found")
def test_a_violation_in_a_session_a_trusted_client_opened_is_found_and_a_raw_clients_is_not() -> None:
    """Each client calls a tool with arguments as a string, its session opened under its own clientInfo name: only
    the one opened as the reference bridge counts."""
    server = TestMcpServer()
    server.tool("echo", returns="ok")
    with server, httpx2.Client(timeout=10) as client:
        for name in ("mcp-testkit-bridge", "a raw client"):
            session = _initialize(client, server.url, name)
            headers = {
                "Accept": "application/json, text/event-stream",
                "Mcp-Session-Id": session,
                "MCP-Protocol-Version": "2025-11-25",
            }
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": "x"}}
            client.post(server.url, json=call, headers=headers)
    found = trusted_violations([server.journal])
    assert len(found) == 1
    assert found[0].startswith("the reference bridge ('mcp-testkit-bridge') broke ")
    assert "tools/call" in found[0]


@pytest.mark.sends_invalid_mcp("it sends invalid MCP in the reference bridge's name, to see it found")
def test_the_watch_finds_a_violation_in_a_journal_that_a_reset_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the suite's autouse check runs: a server made after the watch began, its violating session reset away
    (as the contract resets its server between examples), is still judged."""
    found_so_far = watch_servers(monkeypatch)
    server = TestMcpServer()
    server.tool("echo", returns="ok")
    with server, httpx2.Client(timeout=10) as client:
        session = _initialize(client, server.url, "mcp")
        headers = {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session}  # no version header
        client.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        server.reset()
    assert len(server.journal) == 0
    found = found_so_far()
    assert len(found) == 1
    assert found[0].startswith("the official Python SDK client ('mcp') broke version-header")


@pytest.mark.sends_invalid_mcp("it sends a cursor in the reference bridge's name across a reset, to see it let go")
def test_a_cursor_of_the_state_before_a_reset_is_not_held_against_its_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing page asked for with a cursor the server handed out before its reset breaks cursor-not-given on
    the fresh state through no fault of the client (the contract resets between examples): it is not judged there,
    while a schema violation after the reset still is."""
    found_so_far = watch_servers(monkeypatch)
    server = TestMcpServer(page_size=1)
    server.tool("a", returns="1")
    server.tool("b", returns="2")
    with server, httpx2.Client(timeout=10) as client:
        session = _initialize(client, server.url, "mcp-testkit-bridge")
        headers = {
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": "2025-11-25",
        }
        page = client.post(server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
        cursor = page.json()["result"]["nextCursor"]
        server.reset()
        server.tool("a", returns="1")
        server.tool("b", returns="2")
        session = _initialize(client, server.url, "mcp-testkit-bridge")
        headers["Mcp-Session-Id"] = session
        listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor}}
        client.post(server.url, json=listing, headers=headers)
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "a", "arguments": "x"}}
        client.post(server.url, json=call, headers=headers)
    assert [r.rule for r in server.journal.violations] == ["cursor-not-given", "schema"]
    found = found_so_far()
    assert len(found) == 1
    assert " broke schema " in found[0]
