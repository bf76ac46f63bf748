"""The ASGI pieces the fake server and the recording proxy share: message types, body reading, disconnects.

Both sit on raw ASGI for byte-level control of what they send, and both must read a body only up to
a bound and stop serving a stream when its client goes away.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

__all__ = ["BODY_PREFIX", "Message", "Receive", "Scope", "Send", "cancel_on_disconnect", "lifespan", "read_body"]

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


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer an ASGI lifespan scope: nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
