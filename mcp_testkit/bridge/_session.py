"""One Streamable-HTTP session with an MCP server: the wire, and what went wrong on it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import httpx2
import mcp_types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel, ValidationError

from mcp_testkit.bridge._sse import SseDecoder, SseEvent

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractAsyncContextManager

__all__ = [
    "AuthRefused",
    "BadReply",
    "ConnectionLost",
    "HttpFailure",
    "McpSession",
    "RpcError",
    "SessionGone",
    "WireError",
]

CLIENT_INFO = mcp_types.Implementation(name="mcp-testkit-bridge", version="0.1.0")
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
LIST_CHANGED = "notifications/tools/list_changed"
# How long to wait for a server to end an SSE stream once the answer has arrived.
DRAIN_TIMEOUT_S = 1.0

_M = TypeVar("_M", bound=BaseModel)


class WireError(Exception):
    """A request got no usable answer; ``sent`` says whether it may have reached the server."""

    def __init__(self, reason: str, *, sent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sent = sent


class ConnectionLost(WireError):
    """The connection failed or ended before the answer arrived."""


class BadReply(WireError):
    """The server answered, but not with a JSON-RPC response to the request."""


class HttpFailure(WireError):
    """The server answered with an HTTP status that is neither success, auth nor a lost session."""

    def __init__(self, status: int) -> None:
        super().__init__(f"answered HTTP {status}", sent=True)
        self.status = status


class AuthRefused(WireError):
    """The server refused the credentials with 401 or 403, before acting on the request."""

    def __init__(self, status: int) -> None:
        super().__init__(f"refused the credentials (HTTP {status})", sent=True)
        self.status = status


class SessionGone(WireError):
    """The server no longer knows the session: 404 (it ran nothing) or 400 (older servers; unknown)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"no longer knows the session (HTTP {status})", sent=True)
        self.status = status


class RpcError(Exception):
    """The server answered the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class McpSession:
    """A handshake-era session: initialize, list, call and DELETE over one ``httpx2.AsyncClient``."""

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        self._client = client
        self._url = url
        self._credentials = dict(credentials)
        self._next_id = 1
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.list_changed = False

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", **self._credentials}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def initialize(self) -> mcp_types.InitializeResult:
        """Run the handshake: ``initialize``, then ``notifications/initialized``."""
        params = mcp_types.InitializeRequestParams(
            protocol_version=LATEST_HANDSHAKE_VERSION,
            capabilities=mcp_types.ClientCapabilities(),
            client_info=CLIENT_INFO,
        )
        raw = await self._request("initialize", _dump(params))
        result = _validate(mcp_types.InitializeResult, raw)
        if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise BadReply(f"answered unsupported protocol version {result.protocol_version!r}", sent=True)
        self.protocol_version = result.protocol_version
        await self._notify("notifications/initialized")
        return result

    async def list_tools(self, cursor: str | None) -> mcp_types.ListToolsResult:
        """Read one page of ``tools/list``."""
        params = {} if cursor is None else {"cursor": cursor}
        return _validate(mcp_types.ListToolsResult, await self._request("tools/list", params))

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> mcp_types.CallToolResult:
        """Send one ``tools/call`` and return its validated result."""
        raw = await self._request("tools/call", {"name": name, "arguments": dict(arguments)})
        return _validate(mcp_types.CallToolResult, raw)

    async def close(self, credentials: Mapping[str, str] | None = None) -> None:
        """End the session with DELETE (with ``credentials`` if given); a refusal is not an error here."""
        if self.session_id is None:
            return
        if credentials is not None:
            self._credentials = dict(credentials)
        try:
            await self._client.delete(self._url, headers=self._headers())
        except httpx2.HTTPError:
            pass
        finally:
            self.session_id = None

    async def _notify(self, method: str) -> None:
        body = _dump(mcp_types.JSONRPCNotification(jsonrpc="2.0", method=method))
        with _transport_errors():
            async with self._post(body) as response:
                _check_status(response, has_session=self.session_id is not None)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = self._next_id
        self._next_id += 1
        body = _dump(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))
        with _transport_errors():
            async with self._post(body) as response:
                _check_status(response, has_session=self.session_id is not None)
                if response.status_code == 202:
                    raise BadReply("answered 202 Accepted to a request", sent=True)
                if method == "initialize":
                    self.session_id = response.headers.get(SESSION_HEADER)
                return await self._read_answer(response, request_id)

    def _post(self, body: dict[str, Any]) -> AbstractAsyncContextManager[httpx2.Response]:
        return self._client.stream("POST", self._url, json=body, headers=self._headers())

    async def _read_answer(self, response: httpx2.Response, request_id: int) -> dict[str, Any]:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type == "application/json":
            try:
                message = json.loads(await response.aread())
            except ValueError:
                raise BadReply("answered with a body that is not JSON", sent=True) from None
            messages = message if isinstance(message, list) else [message]
            for item in messages:
                answer = self._answer_in(item, request_id)
                if answer is not None:
                    return answer
            raise BadReply("answered without a response to the request", sent=True)
        if content_type == "text/event-stream":
            return await self._read_events(response, request_id)
        raise BadReply(f"answered with Content-Type {content_type or 'none'!r}", sent=True)

    async def _read_events(self, response: httpx2.Response, request_id: int) -> dict[str, Any]:
        """The answer in an SSE body, read on to the end of the stream for notifications sent after it."""
        decoder = SseDecoder()
        answer: dict[str, Any] | None = None
        async with aclosing(response.aiter_bytes()) as chunks:
            try:
                async for chunk in chunks:
                    for event in decoder.feed(chunk):
                        found = self._answer_in_event(event, request_id, strict=answer is None)
                        answer = found if answer is None else answer
                    if answer is not None:
                        break
            finally:
                # The server ends the stream after the answer; reading to that end lets httpx2's body
                # generators finish by themselves (trio reports ones collected half-way).
                with anyio.move_on_after(DRAIN_TIMEOUT_S, shield=True):
                    try:
                        async for chunk in chunks:
                            for event in decoder.feed(chunk):
                                self._answer_in_event(event, request_id, strict=False)
                    except httpx2.HTTPError:
                        pass
        if answer is None:
            raise ConnectionLost("ended the SSE stream before the answer", sent=True)
        return answer

    def _answer_in_event(self, event: SseEvent, request_id: int, *, strict: bool) -> dict[str, Any] | None:
        """The result carried by ``event``, if any; once the answer is in (not ``strict``), only notes."""
        if not event.data or event.event != "message":
            return None
        try:
            item = json.loads(event.data)
        except ValueError:
            if strict:
                raise BadReply("sent an SSE event whose data is not JSON", sent=True) from None
            return None
        try:
            return self._answer_in(item, request_id)
        except (BadReply, RpcError):
            if strict:
                raise
            return None

    def _answer_in(self, item: object, request_id: int) -> dict[str, Any] | None:
        """The result in ``item`` if it answers ``request_id``; notes ``list_changed``, skips the rest."""
        if not isinstance(item, dict):
            raise BadReply("sent a JSON-RPC message that is not an object", sent=True)
        if item.get("method") == LIST_CHANGED:
            self.list_changed = True
        if "method" in item or item.get("id") != request_id:
            return None
        if "error" in item:
            error = _validate(mcp_types.JSONRPCError, item).error
            raise RpcError(error.code, error.message)
        return _validate(mcp_types.JSONRPCResponse, item).result


def _check_status(response: httpx2.Response, *, has_session: bool) -> None:
    """Turn a non-success status into the ``WireError`` the call rules tell apart."""
    status = response.status_code
    if 200 <= status < 300:
        return
    if status in (401, 403):
        raise AuthRefused(status)
    if status in (400, 404) and has_session:
        raise SessionGone(status)
    raise HttpFailure(status)


def _validate(model: type[_M], raw: object) -> _M:
    """Validate with ``mcp_types``; the pydantic error is dropped because it quotes the body."""
    try:
        return model.model_validate(raw)
    except ValidationError:
        raise BadReply(f"answered a malformed {model.__name__}", sent=True) from None


@contextmanager
def _transport_errors() -> Iterator[None]:
    """Turn httpx2 failures into ``WireError``, telling a request that never left from one that did."""
    try:
        yield
    except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
        raise ConnectionLost(f"could not be reached ({type(exc).__name__})", sent=False) from None
    except (httpx2.SSEError, httpx2.DecodingError) as exc:
        raise BadReply(f"answered with an unreadable body ({type(exc).__name__})", sent=True) from None
    except httpx2.TransportError as exc:
        raise ConnectionLost(f"lost the connection ({type(exc).__name__})", sent=True) from None
