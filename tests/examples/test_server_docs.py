"""The mounting example of docs/server.md, kept as a test: as printed, and its app served on a real socket."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
import uvicorn
from mcp import Client

from ._support import DOCS, example

PAGE = DOCS / "server.md"
LIMIT_S = 30.0


def _example(name: str) -> str:
    """The code block that follows `<!-- example: NAME -->` on the page."""
    return example(PAGE, name)


@pytest.fixture
def anyio_backend() -> str:
    """uvicorn runs on asyncio."""
    return "asyncio"


@pytest.mark.anyio
async def test_the_mount_example_serves_on_a_socket() -> None:
    """The page's Starlette app, served by uvicorn on 127.0.0.1:0, takes calls of both eras at /tickets/mcp."""
    namespace: dict[str, Any] = {"__name__": "mount_example"}
    await anyio.to_thread.run_sync(exec, _example("mount"), namespace)  # the example runs its own event loop
    server, app = namespace["server"], namespace["app"]
    server.reset()
    server.tool("create_ticket", returns=lambda arguments: f"opened {arguments['title']}")
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()  # connections wait in the backlog until uvicorn accepts them
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    served = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(served.serve, [listening])
                try:
                    for mode in ("legacy", "auto"):
                        async with Client(f"{url}/tickets/mcp", mode=mode) as client:
                            result = await client.call_tool("create_ticket", {"title": "socket"})
                        assert result.content[0].text == "opened socket"  # type: ignore[union-attr]
                    async with httpx2.AsyncClient() as http:
                        assert (await http.get(f"{url}/")).text == "the app under test"
                finally:
                    served.should_exit = True
    finally:
        listening.close()
    calls = server.journal.calls("create_ticket")
    assert [(call.path, call.era) for call in calls] == [("/mcp", "handshake"), ("/mcp", "stateless")]
    server.check()
