"""The proxy's link to a Streamable HTTP upstream: one pooled `httpx2.AsyncClient` for the proxy's life, every
request sent to the one configured URL, and an upstream that is down, slow or breaks off answered as the fault it is.

Written as an ASGI app (the request body already read and handed in by `receive`), so the fault layer in front of
it (`_endpoint.py`) treats it exactly as it treats the stdio gateway.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Mapping
from typing import Any

import anyio

from mcp_testkit._asgi import Receive, Scope, Send, cancel_on_disconnect, read_body

__all__ = ["NOT_FORWARDED", "NOT_RETURNED", "BrokenOff", "HttpForwarder", "gateway_error", "upstream_error"]

NOT_FORWARDED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "accept-encoding",
     "proxy-authorization", "proxy-connection", "forwarded", "x-forwarded-for", "x-forwarded-host"}
)  # fmt: skip
"""Hop-by-hop headers, those httpx2 sets itself, and those that would steer a proxy: the rest pass through."""
NOT_RETURNED = frozenset({"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"})
_MAX_BODY = 64 * 1024 * 1024


def upstream_error(request_id: Any, message: str) -> dict[str, Any]:
    """The JSON-RPC error a client gets for what went wrong upstream: -32603 (internal error), the proxy's words."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": message}}


async def gateway_error(send: Send, status: int, request_id: Any, message: str) -> None:
    """Answer 502 or 504 with a JSON-RPC error naming what the upstream did."""
    body = json.dumps(upstream_error(request_id, message), separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HttpForwarder:
    """ASGI app: each request sent on to `url` (never anywhere else) with `headers` added, its answer streamed back.

    Statuses, headers and SSE streams pass through as they come. The client is made on the serving loop at the
    first request and kept (pooled connections); `close()` closes it from any thread.
    """

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, timeout_s: float = 30.0) -> None:
        self.url = url
        self.headers = {name.lower(): value for name, value in (headers or {}).items()}
        self.timeout_s = timeout_s
        """How long the upstream may take to begin its answer (the status and headers) before the client gets 504."""
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _pooled(self) -> Any:
        if self._client is None:
            import httpx2

            from mcp_testkit._tls import tls_context

            limits = httpx2.Limits(max_connections=200, max_keepalive_connections=50)
            timeout = httpx2.Timeout(self.timeout_s, read=None)
            self._client = httpx2.AsyncClient(
                timeout=timeout, follow_redirects=False, verify=tls_context(), limits=limits
            )
            self._loop = asyncio.get_running_loop()
        return self._client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        import httpx2

        body, _ = await read_body(receive, _MAX_BODY) if scope["method"] == "POST" else (b"", None)
        request_id = scope.get("mcp_testkit.rpc_id")
        sent = {
            k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in scope.get("headers", [])
            if k.decode("latin-1").lower() not in NOT_FORWARDED
        }
        sent.update(self.headers)
        client = self._pooled()
        request = client.build_request(scope["method"], self.url, content=body or None, headers=sent)
        try:
            with anyio.fail_after(self.timeout_s):
                response = await client.send(request, stream=True)
        except TimeoutError:
            await gateway_error(
                send, 504, request_id, f"chaos proxy: upstream {self.url} did not answer within {self.timeout_s:g} s"
            )
            return
        except httpx2.HTTPError as exc:
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            await gateway_error(send, 502, request_id, f"chaos proxy: upstream {self.url} did not answer ({why})")
            return
        try:
            await self._relay(response, request_id, receive, send)
        finally:
            await response.aclose()

    async def _relay(self, response: Any, request_id: Any, receive: Receive, send: Send) -> None:
        import httpx2

        returned = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in response.headers.multi_items()
            if name.lower() not in NOT_RETURNED
        ]
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            try:
                raw = await response.aread()
            except httpx2.HTTPError as exc:
                why = f"chaos proxy: upstream {self.url} broke off its answer ({type(exc).__name__})"
                await gateway_error(send, 502, request_id, why)
                return
            if not _is_json_answer(response, raw):
                await gateway_error(
                    send, 502, request_id,
                    f"chaos proxy: upstream {self.url} answered HTTP {response.status_code} with a body that is not "
                    "JSON-RPC",
                )  # fmt: skip
                return
            head = [(b"content-length", str(len(raw)).encode()), *returned]
            await send({"type": "http.response.start", "status": response.status_code, "headers": head})
            await send({"type": "http.response.body", "body": raw})
            return
        await send({"type": "http.response.start", "status": response.status_code, "headers": returned})
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_on_disconnect, receive, group.cancel_scope)
            try:
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx2.HTTPError:
                # The upstream broke off its stream: so does the proxy, the same connection behaviour.
                group.cancel_scope.cancel()
                raise BrokenOff(self.url) from None
            await send({"type": "http.response.body", "body": b""})
            group.cancel_scope.cancel()

    def close(self) -> None:
        """Close the pooled client on the loop that made it (from any thread, before that loop stops)."""
        client, loop, self._client, self._loop = self._client, self._loop, None, None
        if client is None or loop is None or loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(client.aclose(), loop)
        try:
            future.result(5.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            future.cancel()


class BrokenOff(Exception):
    """The upstream broke off an SSE answer midway: the client's connection is broken off too."""

    def __init__(self, url: str) -> None:
        super().__init__(f"upstream {url} broke off its SSE answer")


def _is_json_answer(response: Any, raw: bytes) -> bool:
    """Whether a non-SSE answer is one a client can read: empty (202, DELETE), or JSON when it says it is JSON.

    A body of another type passes through on an error status (a real server's plain-text 500 is its fault to show);
    a 2xx body that claims JSON and is not, or is neither JSON nor empty, is garbage the client gets a 502 for.
    """
    if not raw:
        return True
    content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type == "application/json":
        try:
            json.loads(raw)
        except ValueError:
            return False
        return True
    return bool(response.status_code >= 400)
