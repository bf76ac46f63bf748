"""A hand-written Streamable HTTP client and the SDK client, pointed at a `TestMcpServer` for fault tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import httpx2
from mcp import Client

from mcp_testkit._wire.eras import stateless_headers, stateless_params

if TYPE_CHECKING:
    from mcp_testkit import TestMcpServer

Serve = Callable[..., "TestMcpServer"]
"""The `serve` fixture: `serve(response_mode=..., page_size=...)` gives a started, freshly reset server."""

# Generous: a limit only stops a broken test from hanging, it never decides a pass.
LIMIT_S = 10.0
# What the SDK client waits for one answer in the tests where it is meant to give up.
SDK_WAIT_S = 0.2
ACCEPT = "application/json, text/event-stream"
LATEST = "2025-11-25"
FRAMINGS = ("json", "sse")


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    """A JSON-RPC request."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(tool: str, arguments: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    """A `tools/call` request."""
    return rpc("tools/call", {"name": tool, "arguments": arguments or {}}, request_id)


def events(response: httpx2.Response) -> list[dict[str, str]]:
    """The SSE events of a finished response, each a dict of its fields."""
    found = []
    for block in response.text.split("\n\n"):
        if block.strip():
            pairs = (line.partition(": ") for line in block.splitlines())
            found.append({name: value for name, _, value in pairs})
    return found


def messages(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages of a response, framed as JSON or as SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(event["data"]) for event in events(response) if "data" in event]
    return [response.json()] if response.content else []


class Wire:
    """One session spoken by hand over httpx2: the headers a well-behaved client sends, nothing more."""

    def __init__(self, client: httpx2.AsyncClient, path: str = "/mcp") -> None:
        self.client = client
        self.path = path
        self.session_id: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = LATEST
        return headers

    async def post(self, message: Any) -> httpx2.Response:
        """POST one message on this session and return the whole response."""
        with anyio.fail_after(LIMIT_S):
            return await self.client.post(self.path, json=message, headers=self.headers())

    async def initialize(self) -> None:
        """Open a session and send `notifications/initialized`."""
        params = {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}
        response = await self.post(rpc("initialize", params, request_id=0))
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        assert (await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})).status_code == 202

    async def result(self, message: dict[str, Any]) -> Any:
        """POST a request that must succeed and return the `result` of its JSON-RPC response."""
        response = await self.post(message)
        assert response.status_code == 200, response.text
        answer = messages(response)[-1]
        assert "result" in answer, answer
        return answer["result"]


class Modern:
    """A 2026-07-28 client spoken by hand: each request carries `_meta` and the headers mirroring it, no session."""

    def __init__(self, client: httpx2.AsyncClient, path: str = "/mcp") -> None:
        self.client = client
        self.path = path

    async def post(self, method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> httpx2.Response:
        """POST one stateless request and return the whole response."""
        full = stateless_params(params, client_info={"name": "modern", "version": "1"})
        headers = {"accept": ACCEPT, **stateless_headers(method, full)}
        with anyio.fail_after(LIMIT_S):
            return await self.client.post(self.path, json=rpc(method, full, request_id), headers=headers)


def socket_client(server: TestMcpServer) -> httpx2.AsyncClient:
    """An httpx2 client for a started server."""
    return httpx2.AsyncClient(base_url=server.base_url)


def asgi_client(server: TestMcpServer) -> httpx2.AsyncClient:
    """An httpx2 client that calls the server's ASGI app in-process, as 127.0.0.1."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=server.asgi_app), base_url="http://127.0.0.1")


def sdk_client(server: TestMcpServer, *, wait_s: float | None = None, **options: Any) -> Client:
    """The official SDK client in legacy mode (initialize, no server/discover) for a started server."""
    return Client(server.url, mode="legacy", read_timeout_seconds=wait_s, **options)


def tools(server: TestMcpServer, *names: str) -> TestMcpServer:
    """Add tools that answer '<name> ran'."""
    for name in names:
        server.tool(name, returns=f"{name} ran")
    return server


async def until(predicate: Callable[[], bool]) -> None:
    """Yield to the event loop until `predicate()` holds, within LIMIT_S (a broken test fails, it never hangs)."""
    with anyio.fail_after(LIMIT_S):
        while not predicate():
            await anyio.lowlevel.checkpoint()


def json_bytes(message: Any) -> bytes:
    """A JSON-RPC message as the server writes it: compact JSON."""
    return json.dumps(message, separators=(",", ":")).encode()


def sse_bytes(event_id: int, message: Any) -> bytes:
    """One SSE event carrying a JSON-RPC message, as the server writes it."""
    return b"event: message\nid: %d\ndata: %s\n\n" % (event_id, json_bytes(message))


def wire_bytes(framing: str, message: Any, event_id: int = 2) -> bytes:
    """The body of an answer in this framing; over SSE the call after an initialize is event 2."""
    return json_bytes(message) if framing == "json" else sse_bytes(event_id, message)


def content_type(framing: str) -> str:
    return "application/json" if framing == "json" else "text/event-stream"


CATALOGUE = ("t1", "t2", "t3", "t4", "t5")
"""The listing tests' catalogue; with page_size=2 its pages are [t1 t2] [t3 t4] [t5]."""


async def walk(wire: Wire, max_pages: int = 8) -> list[dict[str, Any]]:
    """Follow `nextCursor` as a naive client does, sending back whatever cursor it got (even "").

    Returns one entry per page requested: the cursor sent, then the page's tool names and `nextCursor`,
    or its JSON-RPC error. Stops at the last page, an error, or after `max_pages` pages.
    """
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    for request_id in range(1, max_pages + 1):
        params = {} if cursor is None else {"cursor": cursor}
        response = await wire.post(rpc("tools/list", params, request_id))
        answer = messages(response)[-1]
        page: dict[str, Any] = {"sent": cursor}
        if "error" in answer:
            pages.append({**page, "error": answer["error"]})
            break
        result = answer["result"]
        tools = result["tools"]
        page["tools"] = [tool["name"] for tool in tools] if isinstance(tools, list) else tools
        page["next"] = result.get("nextCursor")
        pages.append(page)
        if page["next"] is None:
            break
        cursor = page["next"]
    return pages
