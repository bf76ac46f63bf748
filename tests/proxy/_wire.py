"""Raw JSON-RPC over HTTP for the proxy's tests: what a client sends, without a client library's retries."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from mcp_testkit._wire.sse import SseDecoder

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def messages(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages of an answer, JSON or SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(event.data) for event in SseDecoder().feed(response.content) if event.data]
    return [response.json()] if response.content else []


def open_session(client: httpx2.Client, url: str) -> str:
    """Initialize a handshake session through `url`; its id."""
    response = client.post(url, json=INIT, headers=ACCEPT)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    client.post(url, json=note, headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
    return session


def request(
    client: httpx2.Client, url: str, session: str | None, method: str, params: Any = None, request_id: int = 1
) -> httpx2.Response:
    headers = {**ACCEPT, "mcp-protocol-version": "2025-06-18"}
    if session is not None:
        headers["mcp-session-id"] = session
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return client.post(url, json=message, headers=headers)


def answer(response: httpx2.Response, request_id: int = 1) -> Any:
    """The JSON-RPC answer to `request_id` in a response."""
    return next(m for m in messages(response) if m.get("id") == request_id and "method" not in m)
