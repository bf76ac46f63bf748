"""Shared scaffolding for the bridge tests: backends, a scripted catalogue and an in-flight counter."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from mcp_testkit.bridge import ServerConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp_testkit import TestMcpServer

# Generous: a limit only stops a broken test from hanging, it never decides a pass.
LIMIT_S = 20.0


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every bridge test on asyncio and on trio."""
    return str(request.param)


def script_tools(server: TestMcpServer) -> TestMcpServer:
    """A read, a write and an idempotent write, the three kinds the call rules tell apart."""
    server.tool("search", description="Search things.", read_only=True, returns="found")
    server.tool("create", description="Create a thing.", returns="created")
    server.tool("upsert", description="Put a thing.", idempotent=True, returns="upserted")
    return server


def config_for(server: TestMcpServer, name: str = "t", **options: Any) -> ServerConfig:
    """A config for ``server`` that retries the handshake without waiting, unless told otherwise."""
    options.setdefault("connect_backoff_s", 0.0)
    return ServerConfig(name=name, url=server.url, **options)


ERAS = ("handshake", "stateless")
CONNECT = {"handshake": "initialize", "stateless": "server/discover"}
"""The request that opens a connection in each era."""
OPENING = {"handshake": ["initialize", "notifications/initialized"], "stateless": ["server/discover"]}
"""The requests of a connection before its first tools/list, in each era."""


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """The protocol era the bridge speaks to a server that offers both (its config names it)."""
    return str(request.param)


class _TrackedStream(httpx2.AsyncByteStream):
    """A response body that reports when it is closed, ending its exchange."""

    def __init__(self, stream: httpx2.AsyncByteStream, done: Any) -> None:
        self._stream = stream
        self._done = done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._stream.__aiter__()
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            if isinstance(chunks, AsyncGenerator):
                await chunks.aclose()

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            self._done()


def is_change_stream(http_method: str, headers: Any) -> bool:
    """Whether a request opens the pool's change stream, which a cached pool keeps open beside its other requests at
    no fixed place: `subscriptions/listen` (2026-07-28), or a GET without `Last-Event-ID` (the handshake era)."""
    if http_method == "GET":
        return "last-event-id" not in {name.lower() for name in headers}
    return headers.get("mcp-method") == "subscriptions/listen"


class CountingTransport(httpx2.AsyncBaseTransport):
    """A real-socket transport that counts the HTTP exchanges in flight at once, and the peak; the pool's change
    stream (2026-07-28's `subscriptions/listen`, the handshake's GET stream), open all along beside the calls, is not
    counted."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self.in_flight = 0
        self.peak = 0

    def _end(self) -> None:
        self.in_flight -= 1

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if is_change_stream(request.method, request.headers):
            return await self._inner.handle_async_request(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException:
            self._end()
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_TrackedStream(response.stream, self._end),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
