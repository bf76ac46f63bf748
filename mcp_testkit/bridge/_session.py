"""The wire to one MCP server over Streamable HTTP, in either era, and what went wrong on it.

`McpSession` speaks the handshake era (`initialize`, a session id, DELETE at the end);
`StatelessSession` the stateless era of 2026-07-28 (`server/discover`, then requests that each
carry their version in `_meta` and the headers mirroring the body). Both read answers alike.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import anyio
import anyio.lowlevel
import httpx2
import mcp_types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel, ValidationError

from mcp_testkit._eras import (
    HANDSHAKE,
    HEADER_MISMATCH,
    MISSING_CAPABILITY,
    STATELESS,
    STATELESS_VERSION,
    STATELESS_VERSIONS,
    UNSUPPORTED_VERSION,
    stateless_headers,
    stateless_params,
)
from mcp_testkit._sse import SseDecoder, SseEvent, SseEventTooLarge

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractAsyncContextManager

__all__ = [
    "MODERN_CODES",
    "AuthRefused",
    "BadReply",
    "ConnectionLost",
    "EraRefused",
    "HttpFailure",
    "McpSession",
    "RpcError",
    "RpcSession",
    "SessionGone",
    "StatelessSession",
    "WireError",
    "initialize_params",
    "initialized",
]

CLIENT_INFO = mcp_types.Implementation(name="mcp-testkit-bridge", version="0.1.0")
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
LIST_CHANGED = "notifications/tools/list_changed"
# How long to wait for a server to end an SSE stream once the answer has arrived.
DRAIN_TIMEOUT_S = 1.0
DEFAULT_RETRY_MS = 1000
"""How long to wait before resuming a broken SSE stream whose server gave no `retry:`."""
MAX_FRUITLESS_RESUMES = 2
"""GETs in a row that bring no new event before a broken stream is given up."""

logger = logging.getLogger("mcp_testkit.bridge")

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


class EraRefused(WireError):
    """A stateless request refused as a server of the handshake era refuses one: the era assumption failed.

    A 400, 404 or 405 without a JSON-RPC error answering the request (a half-upgraded deployment, a
    server rolled back), or a -32022 offering only handshake-era versions.
    """


class RpcError(Exception):
    """The server answered the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data


MODERN_CODES = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})
"""JSON-RPC errors only a server of the stateless era sends: a probe answered with one is a modern server's."""


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class RpcSession:
    """JSON-RPC requests to one server and their answers, matched by id: what every wire shares.

    A subclass sends a request and reads its answer (``_request``); this class builds the requests
    the bridge sends and picks the answer out of what the server says meanwhile.
    """

    era: ClassVar[str]
    resumable: ClassVar[bool] = False
    """Whether an SSE stream that breaks before the answer is resumed (the handshake era's event ids)."""

    def __init__(self) -> None:
        self._next_id = 1
        self.list_changed = False

    @property
    def usable(self) -> bool:
        """Whether requests can still be sent on this session (a stopped command server's cannot)."""
        return True

    async def list_tools(self, cursor: str | None) -> mcp_types.ListToolsResult:
        """Read one page of ``tools/list``."""
        params = {} if cursor is None else {"cursor": cursor}
        return _validate(mcp_types.ListToolsResult, await self._request("tools/list", params))

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> mcp_types.CallToolResult:
        """Send one ``tools/call`` and return its validated result; ``headers`` go with it over HTTP (the
        ``Mcp-Param-*`` headers of the stateless era)."""
        raw = await self._request("tools/call", {"name": name, "arguments": dict(arguments)}, headers)
        return _validate(mcp_types.CallToolResult, raw)

    async def close(self, credentials: Mapping[str, str] | None = None) -> None:
        """End what the session opened at the server, if anything."""

    def _new_request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The next request id, and the request with it."""
        request_id = self._next_id
        self._next_id += 1
        return request_id, _dump(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one request (with ``headers`` besides those of the era, where the wire has headers) and return
        the result that answers it."""
        raise NotImplementedError

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


def initialize_params() -> dict[str, Any]:
    """The ``initialize`` request's params: the newest handshake version, no capabilities, this bridge's info."""
    params = mcp_types.InitializeRequestParams(
        protocol_version=LATEST_HANDSHAKE_VERSION,
        capabilities=mcp_types.ClientCapabilities(),
        client_info=CLIENT_INFO,
    )
    return _dump(params)


def initialized(raw: dict[str, Any]) -> mcp_types.InitializeResult:
    """The ``initialize`` answer, validated; ``BadReply`` for a version the bridge does not speak."""
    result = _validate(mcp_types.InitializeResult, raw)
    if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise BadReply(f"answered unsupported protocol version {result.protocol_version!r}", sent=True)
    return result


class _Exchange(RpcSession):
    """Posts JSON-RPC requests over one ``httpx2.AsyncClient`` and reads their answers, JSON or SSE."""

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        super().__init__()
        self._client = client
        self._url = url
        self._credentials = dict(credentials)

    def _headers(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        return {"Accept": "application/json, text/event-stream", **self._credentials}

    async def _refused(self, response: httpx2.Response, request_id: int | None) -> None:
        """Raise the ``WireError`` (or ``RpcError``) a non-success status stands for."""
        raise NotImplementedError

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        request_id, body = self._new_request(method, params)
        with _transport_errors():
            async with self._post(body, {**self._headers(method, params), **(headers or {})}) as response:
                if not 200 <= response.status_code < 300:
                    await self._refused(response, request_id)
                if response.status_code == 202:
                    raise BadReply("answered 202 Accepted to a request", sent=True)
                self._opened(method, response)
                return await self._read_answer(response, request_id, method)

    def _opened(self, method: str, response: httpx2.Response) -> None:
        """Keep what the era takes from a successful answer's headers."""

    def _post(self, body: dict[str, Any], headers: dict[str, str]) -> AbstractAsyncContextManager[httpx2.Response]:
        return self._client.stream("POST", self._url, json=body, headers=headers)

    async def _read_answer(self, response: httpx2.Response, request_id: int, method: str) -> dict[str, Any]:
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
            return await self._read_events(response, request_id, method)
        raise BadReply(f"answered with Content-Type {content_type or 'none'!r}", sent=True)

    async def _read_events(self, response: httpx2.Response, request_id: int, method: str) -> dict[str, Any]:
        """The answer in an SSE body; a stream that ends or breaks before it is resumed where the era allows."""
        decoder = SseDecoder()
        answer = await self._answer_on_stream(response, request_id, decoder)
        if answer is not None:
            return answer
        if self.resumable and decoder.last_event_id:
            return await self._resume(request_id, method, decoder)
        raise ConnectionLost("ended the SSE stream before the answer", sent=True)

    async def _resume(self, request_id: int, method: str, decoder: SseDecoder) -> dict[str, Any]:
        """Resume a stream broken before the answer: wait its `retry:`, then GET with `Last-Event-ID`, again
        while each GET brings new events; ``ConnectionLost`` (sent) when it cannot be resumed."""
        fruitless = 0
        while True:
            after = decoder.last_event_id
            delay_ms = DEFAULT_RETRY_MS if decoder.retry_ms is None else decoder.retry_ms
            logger.info(
                "the SSE stream of %s ended after event %r without its answer; resuming it with GET and "
                "Last-Event-ID in %d ms (%s)",
                method,
                after,
                delay_ms,
                "no retry: given" if decoder.retry_ms is None else "the server's retry:",
            )
            await anyio.sleep(delay_ms / 1000)
            decoder = decoder.resumed()
            broken = f"ended the SSE stream of {method} after event {after!r} without the answer"
            headers = {**self._headers(method, {}), "Last-Event-ID": after}
            answer = None
            try:
                async with self._client.stream("GET", self._url, headers=headers) as response:
                    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                    if response.status_code != 200 or content_type != "text/event-stream":
                        said = f"HTTP {response.status_code}" + (f" ({content_type})" if content_type else "")
                        raise ConnectionLost(f"{broken}, and answered the GET to resume it with {said}", sent=True)
                    answer = await self._answer_on_stream(response, request_id, decoder)
            except httpx2.TransportError as exc:
                logger.info("the GET resuming the SSE stream of %s failed (%s)", method, type(exc).__name__)
            if answer is not None:
                return answer
            fruitless = fruitless + 1 if decoder.last_event_id == after else 0
            if fruitless >= MAX_FRUITLESS_RESUMES:
                raise ConnectionLost(f"{broken}, and resuming it brought no more events", sent=True)

    async def _answer_on_stream(
        self, response: httpx2.Response, request_id: int, decoder: SseDecoder
    ) -> dict[str, Any] | None:
        """The answer in an SSE body, read on to the end of the stream for notifications sent after it;
        None when the stream ended, or its connection broke after an event id, before the answer."""
        answer: dict[str, Any] | None = None
        async with aclosing(response.aiter_bytes()) as chunks:
            try:
                async for chunk in chunks:
                    for event in decoder.feed(chunk):
                        found = self._answer_in_event(event, request_id, strict=answer is None)
                        answer = found if answer is None else answer
                    if answer is not None:
                        break
            except (httpx2.ReadError, httpx2.RemoteProtocolError):
                if not (self.resumable and decoder.last_event_id):
                    raise
            except SseEventTooLarge as exc:
                raise BadReply(f"answered with {exc}", sent=True) from None
            finally:
                # The server ends the stream after the answer; reading to that end lets httpx2's body
                # generators finish by themselves (trio reports ones collected half-way).
                with anyio.move_on_after(DRAIN_TIMEOUT_S, shield=True):
                    try:
                        async for chunk in chunks:
                            for event in decoder.feed(chunk):
                                self._answer_in_event(event, request_id, strict=False)
                    except (httpx2.HTTPError, SseEventTooLarge):
                        pass
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


class McpSession(_Exchange):
    """A handshake-era session: initialize, list, call and DELETE, with its session id on every request."""

    era = HANDSHAKE
    resumable = True

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        super().__init__(client, url, credentials)
        self.session_id: str | None = None
        self.protocol_version: str | None = None

    def _headers(self, method: str | None = None, params: dict[str, Any] | None = None) -> dict[str, str]:
        headers = super()._headers(method or "", params or {})
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def initialize(self) -> mcp_types.InitializeResult:
        """Run the handshake: ``initialize``, then ``notifications/initialized``."""
        # Shielded up to the caller's deadline: a cancel that lands after the server opened the session
        # but before its id was read would leave a session nobody can end.
        with anyio.CancelScope(shield=True, deadline=anyio.current_effective_deadline()) as scope:
            raw = await self._request("initialize", initialize_params())
        if scope.cancelled_caught:
            await anyio.lowlevel.checkpoint()  # the caller's own deadline has passed: its timeout fires here
            raise TimeoutError
        result = initialized(raw)
        self.protocol_version = result.protocol_version
        await self._notify("notifications/initialized")
        return result

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
            async with self._post(body, self._headers()) as response:
                if not 200 <= response.status_code < 300:
                    await self._refused(response, None)

    async def _refused(self, response: httpx2.Response, request_id: int | None) -> None:
        error = await _rpc_error(response) if response.status_code == 400 else None
        if error is not None and error.code in MODERN_CODES:
            raise error  # a server of the stateless era refusing the handshake, naming what it speaks
        _check_status(response, has_session=self.session_id is not None)

    def _opened(self, method: str, response: httpx2.Response) -> None:
        if method == "initialize":
            self.session_id = response.headers.get(SESSION_HEADER)


class StatelessSession(_Exchange):
    """The stateless era: ``server/discover``, then each request with its version in ``_meta`` and mirrored headers.

    A -32022 that offers this version is renegotiated once by sending the request again with a new
    id; one that offers only handshake-era versions raises ``EraRefused``.
    """

    era = STATELESS

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        super().__init__(client, url, credentials)
        self.protocol_version = STATELESS_VERSION

    async def discover(self) -> mcp_types.DiscoverResult:
        """Probe with ``server/discover``; ``EraRefused`` when the answer is no modern server's."""
        try:
            # A result that is no DiscoverResult (an older server answering every method with `{}`) is no modern
            # server's answer either.
            result = _validate(mcp_types.DiscoverResult, await self._request("server/discover", {}))
        except RpcError as exc:
            if exc.code in MODERN_CODES:
                raise
            raise EraRefused(f"answered server/discover with JSON-RPC error {exc.code}", sent=True) from None
        except (BadReply, HttpFailure) as exc:
            if isinstance(exc, HttpFailure) and (exc.status >= 500 or exc.status in (408, 429)):
                raise
            raise EraRefused(f"{exc.reason} to server/discover", sent=True) from None
        if self.protocol_version not in result.supported_versions:
            offered = ", ".join(result.supported_versions) or "none"
            raise EraRefused(f"offers no stateless version this bridge speaks (it offers {offered})", sent=True)
        return result

    def _headers(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        return {**super()._headers(method, params), **stateless_headers(method, params, self.protocol_version)}

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        for attempt in (1, 2):
            full = stateless_params(
                params,
                version=self.protocol_version,
                client_info=_dump(CLIENT_INFO),
                capabilities={},
            )
            try:
                return await super()._request(method, full, headers)
            except RpcError as exc:
                if exc.code != UNSUPPORTED_VERSION:
                    raise
                offered = _supported(exc.data)
                mutual = [version for version in STATELESS_VERSIONS if version in offered]
                if mutual and attempt == 1:
                    self.protocol_version = mutual[-1]  # renegotiated: sent again, once, with a new id
                    continue
                if not mutual and any(version in HANDSHAKE_PROTOCOL_VERSIONS for version in offered):
                    raise EraRefused(
                        f"refused {method} with -32022, offering only {', '.join(offered)}", sent=False
                    ) from None
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _refused(self, response: httpx2.Response, request_id: int | None) -> None:
        """A JSON-RPC error answering the request is its answer; anything else at 400, 404, 405 an era refusal."""
        status = response.status_code
        if status in (401, 403):
            raise AuthRefused(status)
        error = await _rpc_error(response, request_id)
        if error is not None:
            raise error
        if status in (400, 404, 405):
            reason = f"answered HTTP {status} as a server of the handshake era does"
            raise EraRefused(reason, sent=status != 405)
        raise HttpFailure(status)


async def _rpc_error(response: httpx2.Response, request_id: int | None = None) -> RpcError | None:
    """The JSON-RPC error a refusal carries, if it answers the request or has a modern code."""
    if response.headers.get("content-type", "").partition(";")[0].strip().lower() != "application/json":
        return None
    try:
        error = mcp_types.JSONRPCError.model_validate(json.loads(await response.aread()))
    except (ValueError, ValidationError):
        return None
    if (request_id is not None and error.id == request_id) or error.error.code in MODERN_CODES:
        return RpcError(error.error.code, error.error.message, error.error.data)
    return None


def _supported(data: Any) -> list[str]:
    """The `supported` list of a -32022 error's data, or an empty list."""
    offered = data.get("supported") if isinstance(data, dict) else None
    return [version for version in offered if isinstance(version, str)] if isinstance(offered, list) else []


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
