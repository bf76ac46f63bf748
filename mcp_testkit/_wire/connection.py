"""The connection under one HTTP answer, as a fault at the level of bytes needs it: close it cleanly, or reset it.

Over a socket (uvicorn) a clean close is a FIN after the bytes written so far, a reset is an RST (`SO_LINGER` 0,
then abort). In-process (ASGI) there is no socket: the client's request fails the way httpx2's would.
"""

from __future__ import annotations

import socket
import struct
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import anyio.lowlevel

from mcp_testkit._wire.answer import Entry, EntryT

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Send

__all__ = ["SocketWire"]


EntryT_co = TypeVar("EntryT_co", bound=Entry, covariant=True)


class _Answer(Protocol[EntryT_co]):
    """What the wire needs of an HTTP answer (an `answer.Answer`: the fake's response, the proxy's turn)."""

    send: Send
    dropped: bool

    @property
    def record(self) -> EntryT_co: ...


class SocketWire(Generic[EntryT]):
    """The connection of one answer (`server._effects.Wire`), found through the ASGI server's own `send` of an
    `_answer.Answer`: the fake's `server._framing._response.Response`, or the chaos proxy's turn."""

    __slots__ = ("_out", "_transport", "record")

    def __init__(self, out: _Answer[EntryT]) -> None:
        self._out = out
        self.record: EntryT = out.record
        self._transport: Any = getattr(getattr(out.send, "__self__", None), "transport", None)

    async def close(self) -> None:
        """End the connection after what was written (FIN): the client reads those bytes, then the end."""
        self._out.dropped = True
        if self._transport is None:
            import httpx2

            raise httpx2.RemoteProtocolError("Server disconnected without sending a complete response.")
        self._transport.close()
        await _settle()

    async def reset(self) -> None:
        """Reset the connection (RST): what was not yet read is lost, and the client's read fails."""
        self._out.dropped = True
        if self._transport is None:
            import httpx2

            raise httpx2.ReadError("[Errno 104] Connection reset by peer")
        sock = self._transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._transport.abort()
        await _settle()


async def _settle() -> None:
    """Let the server see the connection gone before the app returns, so it answers nothing more (no 500)."""
    await anyio.lowlevel.checkpoint()
    await anyio.lowlevel.checkpoint()
