"""The ASGI pieces the fake server and the recording proxy share: message types, body reading, disconnects.

Both sit on raw ASGI for byte-level control of what they send, and both must read a body only up to
a bound and stop serving a stream when its client goes away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import sniffio

__all__ = [
    "BODY_PREFIX",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "cancel_on_disconnect",
    "lifespan",
    "read_body",
    "run_until_disconnect",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

BODY_PREFIX = 1024
"""How much of a body that is too big is kept (for the journal): its first KiB."""


async def cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """Wait until the client goes away, then cancel `scope` (the task group serving it a stream)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def run_until_disconnect(
    receive: Receive, run: Callable[[], Awaitable[None]], ours: Callable[[], bool] = lambda: False
) -> bool:
    """Await `run()`, cancelled if the client goes away first; whether it was cancelled so.

    `ours()` true when the disconnect comes means the server closed the connection itself (a fault did):
    that cancels nothing.

    On asyncio (every server the package runs) the watch is a plain task, started only once `run` waits for
    something, and it cancels the serving task itself: an answer ready at once, as most are, is sent before
    the watch would start and pays neither for a task nor for a cancel scope (an anyio task group costs about
    60 µs a request, an anyio cancel scope several). Elsewhere (trio, in-process) a task group watches.
    """
    if sniffio.current_async_library() != "asyncio":
        return await _run_in_group(receive, run, ours)
    loop = asyncio.get_running_loop()
    serving = asyncio.current_task()
    assert serving is not None
    done = closed = False
    watcher: asyncio.Task[None] | None = None

    async def watch() -> None:
        nonlocal closed
        while (await receive())["type"] != "http.disconnect":
            pass
        if not done and not ours():  # a close after `run` ended, or by the server itself, cancels nothing
            closed = True
            serving.cancel()

    def start() -> None:
        nonlocal watcher
        if not done:
            watcher = loop.create_task(watch())

    handle = loop.call_soon(start)
    try:
        await run()
    except asyncio.CancelledError:
        if not closed:
            raise
    finally:
        done = True
        handle.cancel()
        if watcher is not None:
            watcher.cancel()
        if closed and hasattr(serving, "uncancel"):
            # Our cancel is taken back from the task's count (3.11+), so that an enclosing cancel scope
            # sees only its own; an anyio scope's cancel that came at the same time is delivered again.
            serving.uncancel()
    return closed


async def _run_in_group(receive: Receive, run: Callable[[], Awaitable[None]], ours: Callable[[], bool]) -> bool:
    done = closed = False

    async def watch(scope: anyio.CancelScope) -> None:
        nonlocal closed
        while (await receive())["type"] != "http.disconnect":
            pass
        if not done and not ours():
            closed = True
            scope.cancel()

    failed: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(watch, group.cancel_scope)
        try:
            await run()
        except Exception as exc:  # raised as it is, not in a group (a Drop in-process raises what httpx2 does)
            failed = exc
        done = True
        group.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return closed


async def read_body(receive: Receive, limit: int) -> tuple[bytes, int | None]:
    """The request body, read until it ends or passes `limit` bytes: (body, None), or (its first bytes, bytes read)."""
    message = await receive()
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return (body, None) if len(body) <= limit else (body[:BODY_PREFIX], len(body))
    chunks = [body]
    size = len(body)
    while message.get("more_body", False) and size <= limit:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        return b"".join(chunks)[:BODY_PREFIX], size
    return b"".join(chunks), None


def origin_of(scope: Scope) -> str:
    """`http://host:port` as a request reached the app (its Host header, else the server's socket)."""
    for name, value in scope.get("headers", ()):
        if name == b"host":
            return "http://" + bytes(value).decode("latin-1")
    host, port = scope.get("server") or ("127.0.0.1", 80)
    return f"http://{host}:{port}"


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer an ASGI lifespan scope: nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
