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
