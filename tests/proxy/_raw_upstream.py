"""Upstreams for the proxy's tests that misbehave on purpose, written as raw HTTP/1.1 on asyncio in a thread of their
own: what no real server library does on request (close a kept-alive connection after reading a request, hold an
answer back until the test says), over a real socket on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

LIMIT_S = 60.0

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "RawUpstream"], Awaitable[None]]


class RawUpstream:
    """What the upstream saw: every JSON-RPC request it read (each counted as a run, for a write), in order."""

    def __init__(self) -> None:
        self.read: list[Any] = []
        self.lock = threading.Lock()

    def runs(self, method: str = "tools/call") -> int:
        with self.lock:
            return sum(1 for message in self.read if message.get("method") == method)

    def saw(self, message: Any) -> None:
        with self.lock:
            self.read.append(message)


async def read_request(reader: asyncio.StreamReader) -> Any:
    """One request's JSON body off the connection (None at its end)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return json.loads(body) if body else {}


def json_answer(message: Any) -> bytes:
    """A keep-alive JSON answer to `message`: a tool result."""
    body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": {"content": []}}).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def answers_once_then_closes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
    """The first request on a connection is answered (so the client keeps the connection for the next); the next is
    read, counted as run, and the connection closed without a byte of answer."""
    first = await read_request(reader)
    if first is None:
        return
    up.saw(first)
    writer.write(json_answer(first))
    await writer.drain()
    second = await read_request(reader)
    if second is not None:
        up.saw(second)


@contextlib.contextmanager
def serving(handler: Handler) -> Iterator[tuple[str, RawUpstream]]:
    """Serve `handler` per connection on 127.0.0.1:0 from a thread with its own loop; yields the URL and what it saw.
    Stopped (every connection closed, the thread joined) on the way out."""
    up = RawUpstream()
    ready: list[Any] = []
    started = threading.Event()
    loop = asyncio.new_event_loop()
    writers: set[asyncio.StreamWriter] = set()

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.add(writer)
        try:
            await handler(reader, writer, up)
        finally:
            writers.discard(writer)
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(connected, "127.0.0.1", 0)
        ready.append(server)
        started.set()
        async with server:
            await asyncio.Event().wait()  # until the loop is stopped

    def run() -> None:
        task = loop.create_task(main())
        try:
            loop.run_forever()
        finally:
            task.cancel()
            for writer in list(writers):
                writer.close()
            loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    thread = threading.Thread(target=run, name="raw-upstream", daemon=True)
    thread.start()
    try:
        assert started.wait(LIMIT_S), "the raw upstream did not start"
        port = ready[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/mcp", up
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(LIMIT_S)
