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
    return {"kind": kind, "text": bounded(text), "message": message}


MAX_TEXT = 512 * 1024
"""The most of a result's text an outcome carries: the protocol's lines are bounded (4 MiB, and a character may
take 6 bytes in JSON), a result is not."""


def bounded(text: str | None) -> str | None:
    """`text`, or for a text over MAX_TEXT characters its start and how long it was (a large result, P12)."""
    if text is None or len(text) <= MAX_TEXT:
        return text
    return f"{text[:MAX_TEXT]}... (cut: {len(text)} characters in all)"


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


HTTP_STAND_IN = "Server returned an error response"
"""What mcp 2.3's Streamable HTTP client raises (code -32603) for every HTTP status >= 400 but 404."""

_REFUSALS = frozenset({-32020, -32021, -32022})
"""The stateless era's refusals of a request before it runs."""
_LOST = frozenset({-32000, -32001, -32700, 408})
"""The codes of the SDK's own errors for an answer it lost or could not read: a closed connection (-32000), a
timeout (-32001 in mcp 2.x; mcp 1.x raises 408, `httpx.codes.REQUEST_TIMEOUT`), a parse failure (-32700)."""
_SESSION_GONE = frozenset({-32600, 32600})
"""A refused request (-32600, as an unknown session is answered) or mcp 1.x's "Session terminated" after a 404
(which it raises with the code 32600, sign and all)."""


def error_kind(error: BaseException, at: str) -> str:
    """The outcome kind of `error`, which the bridge raised at a "connect" or a "call", read from the error alone:
    its type, its code, its message and its attributes, the errors of a group and their causes; what a bridge's
    caller receives, nothing more (no watch on the wire: issue 21 item 11).

    It applies the policy of mcp-testkit's `SdkErrorClassifier` (`mcp_testkit/adapters/_sdk.py`) and does not
    import it on purpose: a driver runs in the bridge's own environment, where mcp-testkit (which needs mcp 2.x)
    cannot be installed beside a bridge that needs mcp<2, so this file keeps to the standard library.

    - an HTTP status error the bridge lets through (mcp 1.x raises `httpx.HTTPStatusError`, which carries its
      `response`): 401 or 403 `auth_error`, 404 `connection_error`, another at a call `outcome_unknown`;
    - an MCP error (`.error.code` in mcp 1.x, `.code` in 2.x): the stateless era's refusals and a refused or
      terminated session are `connection_error`; the SDK's words for a lost answer (a closed connection, a
      timeout, a parse failure, mcp 2.3's one error for every HTTP status) are `outcome_unknown` at a call; any
      other is the server's answer to the call, `tool_error`;
    - anything else: as a lost answer (`outcome_unknown` at a call; at a connect, `connection_error`).
    """
    lost = "outcome_unknown" if at == "call" else "connection_error"
    chain = _chain(error)
    for item in chain:
        status = getattr(getattr(item, "response", None), "status_code", None)
        if isinstance(status, int) and status >= 400:
            if status in (401, 403):
                return "auth_error"
            return "connection_error" if status == 404 else lost
    for item in chain:
        code = _code(item)
        if not isinstance(code, int) or isinstance(code, bool):
            continue
        message = str(getattr(getattr(item, "error", None), "message", None) or getattr(item, "message", "") or item)
        if code in _REFUSALS or code in _SESSION_GONE:
            return "connection_error"
        if code in _LOST or HTTP_STAND_IN in message:
            return lost
        return "connection_error" if at == "connect" else "tool_error"
    return lost


def _chain(error: BaseException) -> list[BaseException]:
    """`error`, the errors of its groups and every cause or context of each, once each, outermost first."""
    seen: set[int] = set()
    found: list[BaseException] = []
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        found.append(current)
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, (list, tuple)):
            pending.extend(item for item in inner if isinstance(item, BaseException))
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return found


def _code(error: BaseException) -> Any:
    inner = getattr(error, "error", None)
    return getattr(inner, "code", getattr(error, "code", None))


def current_headers(httpx: Any, headers: Mapping[str, str]) -> Any:
    """An `httpx.Auth` (of the `httpx` or `httpx2` module given) that sets `headers`, a dict the driver keeps
    changing, on every request: the application's credentials reach a bridge built once (a rotation). It sets
    headers only; it reads nothing that comes back."""

    class CurrentHeaders(httpx.Auth):  # type: ignore[name-defined,misc]
        def auth_flow(self, request: Any) -> Any:
            request.headers.update(headers)
            yield request

    return CurrentHeaders()


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
