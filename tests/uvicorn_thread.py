"""An ASGI app served by a uvicorn of its own on a loopback socket, in a thread: how the proxy's and the cassettes'
tests serve their SDK upstreams over Streamable HTTP."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serving_app(app: Any) -> Iterator[str]:
    """Serve `app` on 127.0.0.1:0 (lifespan on) until the block ends; yields its URL, ending in /mcp."""
    import asyncio

    import uvicorn

    started = threading.Event()

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # signals belong to the test runner

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            started.set()

    server = Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    thread = threading.Thread(target=asyncio.run, args=(server.serve(sockets=[sock]),), name="upstream", daemon=True)
    thread.start()
    try:
        if not started.wait(30):
            raise RuntimeError("the upstream server did not start within 30 s")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
