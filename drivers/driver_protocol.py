"""The driver protocol's loop for Python drivers (docs/driver.md): standard library only, Python 3.10+.

A driver module builds a `Bridge` (the four operations against the bridge it drives) and calls
`serve(bridge, hello)`. This loop writes the hello, reads one request per line from stdin, runs it
under the request's watchdog and writes one answer per line to stdout; a request that outlives its
watchdog is abandoned and answered `hung`. stdout carries the protocol only: everything else the
bridge prints is sent to stderr. Copy this file beside a driver of your own, or import it from here.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

PROTOCOL = "mcp-testkit-driver"
VERSION = 1
OUTCOME_KINDS = ("ok", "tool_error", "auth_error", "outcome_unknown", "connection_error")


class Bridge(Protocol):
    """What a driver implements: the bridge's operations, each returning what the protocol answers."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
        """Build the bridge and load its listing; an outcome (see `outcome`)."""
        ...

    async def list(self) -> list[str]:
        """The MCP names of the tools the bridge loaded (as many times as it holds them)."""
        ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Call a tool by its MCP name as an agent would; an outcome."""
        ...

    def set_headers(self, headers: Mapping[str, str]) -> None:
        """New credentials for the bridge's next connect or request."""
        ...

    async def close(self) -> None:
        """Disconnect; the next request, if any, is a connect."""
        ...


def outcome(kind: str, text: str | None = None, error: BaseException | None = None) -> dict[str, Any]:
    """An outcome answer's fields: `kind` (one of `OUTCOME_KINDS`), the `text` the model reads, the error."""
    if kind not in OUTCOME_KINDS:
        raise ValueError(f"outcome kind {kind!r} is not one of {OUTCOME_KINDS}")
    message = "" if error is None else describe(error)
    return {"kind": kind, "text": text, "message": message}


def describe(error: BaseException) -> str:
    """`Type: message` of an error, with the leaves of an exception group, bounded for the protocol."""
    leaves = list(_leaves(error))
    text = "; ".join(f"{type(leaf).__name__}: {leaf}" for leaf in leaves[:5])
    return text[:3900]


def _leaves(error: BaseException) -> Any:
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        for item in inner:
            yield from _leaves(item)
    else:
        yield error


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside `error`, exception groups unwrapped (a bridge on anyio raises them)."""
    return list(_leaves(error))


class WireWatch:
    """Sorts a bridge's errors by what crossed the wire, for a driver whose bridge runs on `httpx` or
    `httpx2`: pass the module, route the bridge's client through `transport()`, give it
    `auth(headers)` for credentials that can rotate, `begin()` before each operation and ask
    `kind(error, at)`.

    It applies the policy of mcp-testkit's `SdkErrorClassifier` (`mcp_testkit/adapters/_sdk.py`) and
    does not import it on purpose: a driver runs in the bridge's own environment, where mcp-testkit
    (which needs mcp 2.x) cannot be installed beside a bridge that needs mcp<2, so this file keeps to
    the standard library and the HTTP module it is given. A change to the policy is made in both.

    The watch only looks: a response body reaches the bridge as it streams, chunk by chunk, and its
    JSON-RPC errors are noted on the way. It never reads a body ahead of the bridge, which would
    change when the bridge sees an answer and where a broken body raises (in the bridge's own read,
    which it may handle, or in the transport, which it may not).
    """

    def __init__(self, httpx: Any) -> None:
        self.httpx = httpx
        self.statuses: list[int] = []
        self.codes: set[int] = set()
        self.methods: set[str] = set()

    def begin(self) -> None:
        self.statuses.clear()
        self.codes.clear()
        self.methods.clear()

    def kind(self, error: BaseException, at: str) -> str:
        """The outcome kind of `error`, raised during the operation since `begin()` ("connect" or "call")."""
        if any(status in (401, 403) for status in self.statuses):
            return "auth_error"
        if at != "call" or 404 in self.statuses or "tools/call" not in self.methods:
            return "connection_error"
        if any(_code(leaf) in self.codes for leaf in leaves(error)):
            return "tool_error"  # a JSON-RPC error the server sent in a 2xx answer
        return "outcome_unknown"

    def auth(self, headers: Mapping[str, str]) -> Any:
        """An `httpx.Auth` that sets `headers` (a dict the driver keeps changing) on every request."""

        class CurrentHeaders(self.httpx.Auth):  # type: ignore[name-defined,misc]
            def auth_flow(self, request: Any) -> Any:
                request.headers.update(headers)
                yield request

        return CurrentHeaders()

    def transport(self) -> Any:
        """A transport that notes the methods POSTed, the error statuses and the JSON-RPC error codes answered."""
        httpx, watch = self.httpx, self

        class Noting(httpx.AsyncByteStream):  # type: ignore[name-defined,misc]
            """A 2xx answer's body, passed on chunk by chunk; its JSON-RPC errors noted as they go by."""

            def __init__(self, stream: Any, sse: bool) -> None:
                self.stream = stream
                self.sse = sse

            async def __aiter__(self) -> Any:
                buffer = b""
                async for chunk in self.stream:
                    buffer += chunk
                    if self.sse:
                        *lines, buffer = buffer.split(b"\n")
                        for line in lines:
                            if line.startswith(b"data:"):
                                watch._note_json(line[5:], "error")
                    yield chunk
                if not self.sse:
                    watch._note_json(buffer, "error")

            async def aclose(self) -> None:
                await self.stream.aclose()

        class Watching(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                self.inner = httpx.AsyncHTTPTransport()

            async def handle_async_request(self, request: Any) -> Any:
                if request.method == "POST":
                    with contextlib.suppress(Exception):
                        watch._note_json(request.content, "method")
                response = await self.inner.handle_async_request(request)
                if request.method != "POST":
                    return response
                if response.status_code >= 400:
                    watch.statuses.append(response.status_code)
                    return response
                sse = response.headers.get("content-type", "").startswith("text/event-stream")
                return httpx.Response(
                    response.status_code,
                    headers=response.headers,
                    stream=Noting(response.stream, sse),
                    extensions=response.extensions,
                    request=request,
                )

            async def aclose(self) -> None:
                await self.inner.aclose()

        return Watching()

    def _note_json(self, data: bytes, what: str) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            return
        self._note(message, what)

    def _note(self, message: Any, what: str) -> None:
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if what == "method" and isinstance(item.get("method"), str):
                self.methods.add(item["method"])
            error = item.get("error")
            if what == "error" and isinstance(error, dict) and isinstance(error.get("code"), int):
                self.codes.add(error["code"])


def _code(error: BaseException) -> Any:
    inner = getattr(error, "error", None)
    return getattr(inner, "code", getattr(error, "code", None))


def serve(bridge: Bridge, hello: Mapping[str, Any]) -> None:
    """Speak the protocol on stdin/stdout until stdin ends; then close the bridge and return."""
    protocol_out = sys.stdout
    # The bridge, its libraries and its loggers write to stdout freely: only this loop may.
    sys.stdout = sys.stderr
    asyncio.run(_serve(bridge, dict(hello), protocol_out))


async def _serve(bridge: Bridge, hello: dict[str, Any], out: io.TextIOBase | Any) -> None:
    loop = asyncio.get_running_loop()
    requests: asyncio.Queue[bytes] = asyncio.Queue()
    threading.Thread(target=_read_stdin, args=(loop, requests), daemon=True).start()

    def answer(message: Mapping[str, Any]) -> None:
        out.write(json.dumps(message, separators=(",", ":")) + "\n")
        out.flush()

    answer({"protocol": PROTOCOL, "version": VERSION, **hello})
    while True:
        line = await requests.get()
        if not line:
            break
        try:
            request = json.loads(line)
            request_id = request["id"]
            op = request["op"]
        except (ValueError, KeyError, TypeError) as exc:
            print(f"driver: a request that is not JSON with id and op: {line[:200]!r} ({exc})", file=sys.stderr)
            return
        work = _operation(bridge, op, request)
        if work is None:
            answer({"id": request_id, "kind": "driver_error", "message": f"unknown op {op!r}"})
            continue
        answer({"id": request_id, **await _watched(work, request.get("watchdog_s"), op)})
    with contextlib.suppress(Exception):
        await asyncio.wait_for(bridge.close(), 10)


def _read_stdin(loop: asyncio.AbstractEventLoop, requests: asyncio.Queue[bytes]) -> None:
    for line in sys.stdin.buffer:
        loop.call_soon_threadsafe(requests.put_nowait, line)
    loop.call_soon_threadsafe(requests.put_nowait, b"")


def _operation(bridge: Bridge, op: str, request: Mapping[str, Any]) -> Callable[[], Awaitable[Any]] | None:
    if op == "connect":
        return lambda: bridge.connect(request["url"], request["headers"])
    if op == "list":

        async def listing() -> dict[str, Any]:
            return {"kind": "tools", "tools": list(await bridge.list())}

        return listing
    if op == "call":
        return lambda: bridge.call(request["name"], request["arguments"])
    if op == "set_headers":

        async def headers() -> dict[str, Any]:
            bridge.set_headers(request["headers"])
            return {"kind": "done"}

        return headers
    if op == "close":

        async def close() -> dict[str, Any]:
            await bridge.close()
            return {"kind": "done"}

        return close
    return None


async def _watched(work: Callable[[], Awaitable[Any]], watchdog_s: Any, op: str) -> dict[str, Any]:
    """Run `work` for at most `watchdog_s` seconds; `hung` if it did not finish, `driver_error` if it raised."""
    task = asyncio.ensure_future(work())
    limit = float(watchdog_s) if isinstance(watchdog_s, (int, float)) else None
    done, _ = await asyncio.wait({task}, timeout=limit)
    if not done:
        task.cancel()  # abandoned, not awaited: a bridge that ignores cancellation must not stall the driver
        return {"kind": "hung", "message": f"the bridge did not finish {op} within {limit:g} s"}
    try:
        result: dict[str, Any] = task.result()
    except Exception as exc:
        return {"kind": "driver_error", "message": f"the driver's {op} raised {describe(exc)}"}
    return result
