"""The stateless era of 2026-07-28 over HTTP: ``server/discover``, then requests that each carry their version in
``_meta`` and headers mirroring the body (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``); no session to open or end."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx2
import mcp_types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcp_testkit._wire.eras import (
    STATELESS,
    STATELESS_VERSION,
    STATELESS_VERSIONS,
    UNSUPPORTED_VERSION,
    stateless_headers,
    stateless_params,
)
from mcp_testkit._wire.param_headers import invalid_annotation, param_headers
from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge, json_message
from mcp_testkit.bridge._errors import MCPToolError
from mcp_testkit.bridge._exchange import HttpExchange, rpc_error
from mcp_testkit.bridge._rpc import (
    CLIENT_INFO,
    LIST_CHANGED,
    MODERN_CODES,
    AuthRefused,
    BadReply,
    EraRefused,
    HttpFailure,
    RpcError,
    dump,
    validated,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_testkit.bridge._tool import BridgeTool

__all__ = ["StatelessSession", "hear_tool_changes", "valid_header_marks"]

logger = logging.getLogger("mcp_testkit.bridge")

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


class StatelessSession(HttpExchange):
    """The stateless era: ``server/discover``, then each request with its version in ``_meta`` and mirrored headers.

    A -32022 that offers this version is renegotiated once by sending the request again with a new
    id; one that offers only handshake-era versions raises ``EraRefused``.
    """

    era = STATELESS
    empty_cursor_is_a_cursor = True
    relists_on_header_mismatch = True

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        super().__init__(client, url, credentials)
        self.protocol_version = STATELESS_VERSION

    def offered(self, server: str, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """A tool whose ``x-mcp-header`` marks break the spec's rules is left out (logged), as 2026-07-28 asks."""
        return valid_header_marks(server, listed)

    def call_headers(
        self, server: str, tool: BridgeTool, schema: Mapping[str, Any], arguments: Mapping[str, Any]
    ) -> dict[str, str]:
        """The call's ``Mcp-Param-*`` headers, derived from ``schema``; ``MCPToolError``, with nothing sent, for a
        tool or an argument no header can carry."""
        problem = invalid_annotation(schema)
        if problem is not None:
            # Listed in the handshake era (or from its cache), called in this one: left out now, as a listing would.
            raise MCPToolError(
                server,
                f"tool {tool.bare_name!r} cannot be called in the 2026-07-28 era, whose x-mcp-header rules its "
                f"inputSchema breaks ({problem}); nothing was sent",
            )
        try:
            return param_headers(schema, arguments)
        except ValueError as exc:
            raise MCPToolError(server, f"call to {tool.name!r} was not sent: {exc}") from None

    async def discover(self) -> mcp_types.DiscoverResult:
        """Probe with ``server/discover``; ``EraRefused`` when the answer is no modern server's."""
        try:
            # A result that is no DiscoverResult (an older server answering every method with `{}`) is no modern
            # server's answer either.
            result = validated(mcp_types.DiscoverResult, await self._request("server/discover", {}))
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
                client_info=dump(CLIENT_INFO),
                capabilities=self.capabilities,
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
        error = await rpc_error(response, request_id)
        if error is not None:
            raise error
        if status in (400, 404, 405):
            reason = f"answered HTTP {status} as a server of the handshake era does"
            raise EraRefused(reason, sent=status != 405)
        raise HttpFailure(status)


async def hear_tool_changes(
    client: httpx2.AsyncClient,
    url: str,
    credentials: Mapping[str, str],
    server: str,
    changed: Callable[[], Awaitable[None]],
) -> None:
    """Hold a listen stream for `toolsListChanged` and await `changed()` on each notification, until the stream
    ends or the caller cancels; a refusal or a broken stream is logged, never raised."""
    session = StatelessSession(client, url, credentials)  # its headers and ids; no discover: the era is known
    params = stateless_params(
        {"notifications": {"toolsListChanged": True}},
        version=session.protocol_version,
        client_info=dump(CLIENT_INFO),
        capabilities={},
    )
    _, body = session._new_request(LISTEN, params)
    headers = session._headers(LISTEN, params)  # the era's mirrored headers and the credentials
    decoder = SseDecoder()
    try:
        async with client.stream("POST", url, json=body, headers=headers) as response:
            if response.status_code != 200 or not response.headers.get("content-type", "").startswith(
                "text/event-stream"
            ):
                logger.info(
                    "server %r: %s answered HTTP %s without a stream; tool changes are not heard (the cache's "
                    "TTL still bounds a stale listing)",
                    server,
                    LISTEN,
                    response.status_code,
                )
                return
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    message = json_message(event.data)
                    if message is None:
                        continue
                    if message.get("method") == ACKNOWLEDGED:
                        honoured = (message.get("params") or {}).get("notifications") or {}
                        if honoured.get("toolsListChanged") is not True:
                            logger.info("server %r: its %s stream does not carry tool changes", server, LISTEN)
                            return
                    elif message.get("method") == LIST_CHANGED:
                        await changed()
                    elif "id" in message:
                        return  # the server ended the subscription
    except (httpx2.HTTPError, SseEventTooLarge) as exc:
        logger.info("server %r: its %s stream ended (%s); tool changes are no longer heard", server, LISTEN, exc)



def valid_header_marks(server: str, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
    """The listed tools whose ``x-mcp-header`` marks keep the spec's rules; each other one is left out with a
    warning naming it and why, so that one malformed definition costs only its own tool (2026-07-28, HTTP)."""
    kept: list[mcp_types.Tool] = []
    for tool in listed:
        problem = invalid_annotation(tool.input_schema)
        if problem is None:
            kept.append(tool)
        else:
            logger.warning(
                "server %r: tool %r left out of the tool list: its inputSchema breaks the x-mcp-header rules "
                "of 2026-07-28 (%s)",
                server,
                tool.name,
                problem,
            )
    return kept


def _supported(data: Any) -> list[str]:
    """The `supported` list of a -32022 error's data, or an empty list."""
    offered = data.get("supported") if isinstance(data, dict) else None
    return [version for version in offered if isinstance(version, str)] if isinstance(offered, list) else []
