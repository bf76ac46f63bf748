"""The async halves of `mcp_client` and `mcp_http_client`, set up on whichever plugin runs the test: anyio,
or pytest-asyncio (with a copy of each fixture for every loop scope a test may run in)."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pytest

from mcp_testkit._plugin.options import OPTIONS
from mcp_testkit._plugin.served import served_of

if TYPE_CHECKING:
    import httpx2
    from mcp import Client

    from mcp_testkit.server import TestMcpServer

__all__ = [
    "ASYNCIO_FIXTURES",
    "async_fixture",
    "asyncio_fixtures",
    "http_client",
    "open_http_client",
    "open_mcp_client",
]

T = TypeVar("T")

ASYNCIO_FIXTURES = "mcp_testkit.pytest_plugin.asyncio_fixtures"
"""The name pytest-asyncio's copies of the async fixtures are registered under, as a plugin."""
_LoopScope = Literal["function", "class", "module", "package", "session"]
_LOOP_SCOPES: tuple[_LoopScope, ...] = ("function", "class", "module", "package", "session")
_IN_PROCESS_BASE_URL = "http://127.0.0.1"
_HTTP_TIMEOUT_S = 30.0


def async_fixture(request: pytest.FixtureRequest, name: str) -> Any:
    """Set up the async half of `name` on whichever plugin runs this test: anyio or pytest-asyncio."""
    if "anyio_backend" in request.fixturenames:
        return request.getfixturevalue(f"_{name}_anyio")
    options = request.config.stash[OPTIONS]
    marker = request.node.get_closest_marker("asyncio")
    if marker is not None and options.asyncio:
        scope = (
            marker.kwargs.get("loop_scope")
            or marker.kwargs.get("scope")
            or request.config.getini("asyncio_default_test_loop_scope")
            or "function"
        )
        return request.getfixturevalue(f"_{name}_asyncio_{scope}")
    pytest.fail(
        f"{name} is an async fixture: use it in an async test run by anyio (@pytest.mark.anyio) "
        "or pytest-asyncio (@pytest.mark.asyncio)",
        pytrace=False,
    )


def http_client(server: TestMcpServer, transport: str, headers: Mapping[str, str]) -> httpx2.AsyncClient:
    """An unopened `httpx2.AsyncClient` whose base URL is `server` (in-process through ASGI with 'asgi')."""
    import httpx2

    timeout = httpx2.Timeout(_HTTP_TIMEOUT_S)
    if transport == "asgi":
        return httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=server.asgi_app),
            base_url=_IN_PROCESS_BASE_URL,
            headers=dict(headers),
            timeout=timeout,
        )
    return httpx2.AsyncClient(base_url=server.base_url, headers=dict(headers), timeout=timeout)


@asynccontextmanager
async def open_http_client(request: pytest.FixtureRequest, server: TestMcpServer) -> AsyncIterator[httpx2.AsyncClient]:
    """An open `httpx2.AsyncClient` to `server`, sending no header of its own."""
    transport = request.config.stash[OPTIONS].transport
    async with http_client(server, transport, {}) as client:
        yield client


@asynccontextmanager
async def open_mcp_client(request: pytest.FixtureRequest, server: TestMcpServer) -> AsyncIterator[Client]:
    """The `mcp` SDK `Client` connected to `server`, sending the headers the test's marker requires."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    served = served_of(request.node, server)
    transport = request.config.stash[OPTIONS].transport
    async with http_client(server, transport, served.headers) as http:
        url = str(http.base_url).rstrip("/") + served.path
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


@asynccontextmanager
async def _in_own_task(context: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter and exit `context` in one asyncio task of its own.

    pytest-asyncio runs an async generator fixture's setup and teardown in two different tasks,
    and the SDK client holds anyio task groups, which must be left in the task that entered them.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    entered: asyncio.Future[T] = loop.create_future()
    release = asyncio.Event()

    async def host() -> None:
        try:
            async with context as value:
                entered.set_result(value)
                await release.wait()
        except BaseException as exc:
            if entered.done():
                raise
            entered.set_exception(exc)

    task = loop.create_task(host())
    try:
        yield await entered
    finally:
        release.set()
        await task


def asyncio_fixtures() -> types.ModuleType:
    """pytest-asyncio's copies of the async halves, one per loop scope a test may run in."""
    import pytest_asyncio

    openers: dict[str, Callable[[pytest.FixtureRequest, TestMcpServer], AbstractAsyncContextManager[Any]]] = {
        "mcp_client": open_mcp_client,
        "mcp_http_client": open_http_client,
    }
    module = types.ModuleType(ASYNCIO_FIXTURES)
    for base, opener in openers.items():
        for scope in _LOOP_SCOPES:
            name = f"_{base}_asyncio_{scope}"
            setattr(module, name, pytest_asyncio.fixture(_hosted(opener), loop_scope=scope, name=name))
    return module


def _hosted(
    opener: Callable[[pytest.FixtureRequest, TestMcpServer], AbstractAsyncContextManager[T]],
) -> Callable[[pytest.FixtureRequest, TestMcpServer], AsyncIterator[T]]:
    async def fixture(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> AsyncIterator[T]:
        async with _in_own_task(opener(request, mcp_server)) as value:
            yield value

    return fixture
