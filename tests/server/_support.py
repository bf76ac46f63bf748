"""Raw Streamable HTTP requests to a `TestMcpServer`, served over a socket or in-process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx2
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit._wire.eras import STATELESS_VERSION, stateless_headers, stateless_params

if TYPE_CHECKING:
    from mcp.client._transport import Transport

    from mcp_testkit import Journal, TestMcpServer

# Generous: a limit only stops a broken test from hanging, it never decides a pass.
LIMIT_S = 10.0
ACCEPT = "application/json, text/event-stream"
LATEST = "2025-11-25"
VIAS = ("socket", "asgi")


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> dict[str, Any]:
    """A JSON-RPC request."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC notification."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def events(response: httpx2.Response) -> list[dict[str, str]]:
    """The SSE events of a finished response, as dicts of their fields."""
    found = []
    for block in response.text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        found.append(fields)
    return found


def messages(response: httpx2.Response) -> list[Any]:
    """The JSON-RPC messages of a response, framed as JSON or as SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        # Events without data (a priming event, a `retry:` alone) carry no message.
        return [json.loads(event["data"]) for event in events(response) if event.get("data")]
    return [response.json()] if response.content else []


class Wire:
    """A client that speaks the wire by hand: one session, the headers a well-behaved client sends."""

    def __init__(self, client: httpx2.AsyncClient, server: TestMcpServer, path: str = "/mcp") -> None:
        self.client = client
        self.server = server
        self.path = path
        self.session_id: str | None = None
        self.version: str | None = None

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.version is not None:
            headers["mcp-protocol-version"] = self.version
        headers.update(extra)
        return headers

    async def post(
        self, message: Any = None, *, content: bytes | None = None, headers: dict[str, str] | None = None
    ) -> httpx2.Response:
        """POST a message (or raw bytes) with this session's headers, overridden by `headers`."""
        sent = self.headers()
        for name, value in (headers or {}).items():
            if value is None:
                sent.pop(name, None)
            else:
                sent[name] = value
        body = content if content is not None else json.dumps(message).encode()
        with anyio.fail_after(LIMIT_S):
            return await self.client.post(self.path, content=body, headers=sent)

    async def send(self, http_method: str, path: str | None = None, **options: Any) -> httpx2.Response:
        """Any other HTTP request to the endpoint (or `path`), bounded in time like every request here."""
        options.setdefault("headers", self.headers())
        with anyio.fail_after(LIMIT_S):
            return await self.client.request(http_method, path or self.path, **options)

    async def initialize(self, version: str = LATEST, *, initialized: bool = True) -> httpx2.Response:
        """Open a session at `version` and keep its id and the negotiated version for later requests."""
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}
        response = await self.post(rpc("initialize", params, request_id=0))
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.version = messages(response)[0]["result"]["protocolVersion"]
        if initialized:
            assert (await self.post(note("notifications/initialized"))).status_code == 202
        return response

    async def request(self, method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
        """Send a request on the session and return the JSON-RPC response (the last message)."""
        response = await self.post(rpc(method, params, request_id))
        assert response.status_code == 200, response.text
        return messages(response)[-1]  # type: ignore[no-any-return]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
        """`tools/call` and return its result (fails the test on a JSON-RPC error)."""
        response = await self.request("tools/call", {"name": tool, "arguments": arguments or {}}, request_id)
        assert "result" in response, response
        return response["result"]  # type: ignore[no-any-return]

    async def ping_ok(self) -> None:
        """The server still answers a ping on this session."""
        assert await self.request("ping", request_id=99) == {"jsonrpc": "2.0", "id": 99, "result": {}}


CLIENT_INFO = {"name": "wire", "version": "1"}


def modern(
    method: str, params: dict[str, Any] | None = None, request_id: int | str = 1, version: str = STATELESS_VERSION
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request and the headers that mirror it: `_meta` with version, info and capabilities."""
    full = stateless_params(params, version=version, client_info=CLIENT_INFO)
    return rpc(method, full, request_id), {k.lower(): v for k, v in stateless_headers(method, full, version).items()}


class Stateless:
    """A 2026-07-28 client spoken by hand: every request carries its `_meta` and mirroring headers, no session."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    async def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        request_id: int | str = 1,
        *,
        headers: dict[str, Any] | None = None,
        version: str = STATELESS_VERSION,
    ) -> httpx2.Response:
        """POST one stateless request; `headers` override the mirrored ones (None drops one)."""
        message, mirrored = modern(method, params, request_id, version)
        return await self.wire.post(message, headers={"accept": ACCEPT, **mirrored, **(headers or {})})

    async def result(self, method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> Any:
        """POST a stateless request that must succeed and return its `result`."""
        response = await self.post(method, params, request_id)
        assert response.status_code == 200, response.text
        answer = messages(response)[-1]
        assert answer.get("id") == request_id, answer
        assert "result" in answer, answer
        return answer["result"]


def asgi_client(server: TestMcpServer) -> httpx2.AsyncClient:
    """An httpx2 client that calls the server's ASGI app in-process, as 127.0.0.1."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=server.asgi_app), base_url="http://127.0.0.1")


@asynccontextmanager
async def serving(server: TestMcpServer, via: str) -> AsyncIterator[Wire]:
    """Serve `server` over a real socket (uvicorn thread) or in-process, and hand out a `Wire` to it."""
    if via == "asgi":
        async with asgi_client(server) as client:
            yield Wire(client, server)
        return
    with anyio.fail_after(LIMIT_S):
        await anyio.to_thread.run_sync(server.start)
    try:
        async with httpx2.AsyncClient(base_url=server.base_url) as client:
            yield Wire(client, server)
    finally:
        with anyio.fail_after(LIMIT_S):
            await anyio.to_thread.run_sync(server.stop)


def sdk_transport(server: TestMcpServer, via: str, client: httpx2.AsyncClient | None = None) -> Transport:
    """The SDK's Streamable HTTP transport to a started server, or to its ASGI app in-process."""
    if via == "asgi":
        return streamable_http_client("http://127.0.0.1/mcp", http_client=client or asgi_client(server))
    return streamable_http_client(server.url, http_client=client)


async def wait_for(server: TestMcpServer, predicate: Callable[[Journal], bool]) -> None:
    """Wait (off the event loop, so an in-process server keeps serving) until the journal satisfies `predicate`."""
    await anyio.to_thread.run_sync(lambda: server.journal.wait_for(predicate, timeout_s=LIMIT_S))
