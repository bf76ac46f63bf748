"""The handshake era over HTTP: ``initialize`` opens a session whose id every request carries, a broken SSE
stream is resumed with GET and ``Last-Event-ID``, and DELETE ends the session."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import httpx2
import mcp_types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.bridge._exchange import HttpExchange, content_type, rpc_error, transport_errors
from mcp_testkit.bridge._rpc import (
    CANCEL_REASON,
    CLIENT_INFO,
    MODERN_CODES,
    AuthRefused,
    BadReply,
    ConnectionLost,
    HttpFailure,
    SessionGone,
    dump,
    validated,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_testkit._wire.sse import SseDecoder

__all__ = ["DEFAULT_RETRY_MS", "MAX_FRUITLESS_RESUMES", "McpSession", "initialize_params", "initialized"]

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
DEFAULT_RETRY_MS = 1000
"""How long to wait before resuming a broken SSE stream whose server gave no `retry:`."""
MAX_FRUITLESS_RESUMES = 2
"""GETs in a row that bring no new event before a broken stream is given up."""

logger = logging.getLogger("mcp_testkit.bridge")


def initialize_params(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``initialize`` request's params: the newest handshake version, the capabilities (the input requests the
    bridge answers, if any), this bridge's info."""
    params = mcp_types.InitializeRequestParams(
        protocol_version=LATEST_HANDSHAKE_VERSION,
        capabilities=mcp_types.ClientCapabilities.model_validate(capabilities or {}),
        client_info=CLIENT_INFO,
    )
    return dump(params)


def initialized(raw: dict[str, Any]) -> mcp_types.InitializeResult:
    """The ``initialize`` answer, validated; ``BadReply`` for a version the bridge does not speak."""
    result = validated(mcp_types.InitializeResult, raw)
    if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise BadReply(f"answered unsupported protocol version {result.protocol_version!r}", sent=True)
    return result


class McpSession(HttpExchange):
    """A handshake-era session: initialize, list, call and DELETE, with its session id on every request."""

    era = HANDSHAKE

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
            raw = await self._request("initialize", initialize_params(self.capabilities))
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
            await self._client.delete(self._target, headers=self._headers())
        except (httpx2.HTTPError, AuthRefused):  # an OAuth flow that could not get a token is a refusal too
            pass
        finally:
            self.session_id = None

    async def _cancelled(self, request_id: int, method: str) -> None:
        """The handshake era's cancel: ``notifications/cancelled`` naming the request, on its session."""
        await self._notify("notifications/cancelled", {"requestId": request_id, "reason": CANCEL_REASON})

    async def _notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        body = dump(mcp_types.JSONRPCNotification(jsonrpc="2.0", method=method, params=params))
        with transport_errors():
            async with self._post(body, self._headers()) as response:
                if not 200 <= response.status_code < 300:
                    await self._refused(response, None)

    async def _refused(self, response: httpx2.Response, request_id: int | None) -> None:
        error = await rpc_error(response) if response.status_code == 400 else None
        if error is not None and error.code in MODERN_CODES:
            raise error  # a server of the stateless era refusing the handshake, naming what it speaks
        _check_status(response, has_session=self.session_id is not None)

    def _opened(self, method: str, response: httpx2.Response) -> None:
        if method == "initialize":
            self.session_id = response.headers.get(SESSION_HEADER)

    def _resumes(self, decoder: SseDecoder) -> bool:
        """A stream broken after an event with an id is resumed from that event."""
        return bool(decoder.last_event_id)

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
                async with self._client.stream("GET", self._target, headers=headers) as response:
                    kind = content_type(response)
                    if response.status_code != 200 or kind != "text/event-stream":
                        said = f"HTTP {response.status_code}" + (f" ({kind})" if kind else "")
                        raise ConnectionLost(f"{broken}, and answered the GET to resume it with {said}", sent=True)
                    answer = await self._answer_on_stream(response, request_id, decoder)
            except httpx2.TransportError as exc:
                logger.info("the GET resuming the SSE stream of %s failed (%s)", method, type(exc).__name__)
            if answer is not None:
                return answer
            fruitless = fruitless + 1 if decoder.last_event_id == after else 0
            if fruitless >= MAX_FRUITLESS_RESUMES:
                raise ConnectionLost(f"{broken}, and resuming it brought no more events", sent=True)


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
