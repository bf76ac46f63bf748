"""MCP on an upstream link: the handshake (or `server/discover`), the whole paged listing, and calls."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from mcp_testkit._wire.eras import (
    HANDSHAKE,
    HANDSHAKE_VERSIONS,
    STATELESS,
    STATELESS_VERSION,
    STATELESS_VERSIONS,
    stateless_headers,
    stateless_params,
)
from mcp_testkit._wire.param_headers import param_headers
from mcp_testkit.upstream._exchange import Exchange
from mcp_testkit.upstream._link import OnEvent, Upstream, UpstreamError

__all__ = ["UPSTREAM_ERAS", "UpstreamSession"]

LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
UPSTREAM_ERAS = ("auto", HANDSHAKE, STATELESS)
"""How an `UpstreamSession` opens: 'auto' probes `server/discover` and speaks 2026-07-28 where offered, else the
handshake; 'handshake' or 'stateless' speak that era only."""
CLIENT_INFO = {"name": "mcp-testkit-cassettes", "version": "0.1.0"}


class UpstreamSession:
    """MCP on a link: open (the handshake, or `server/discover` in the stateless era), list, call.

    `era` 'auto' (as the SDK client and the reference bridge connect) sends `server/discover` first and
    speaks 2026-07-28 when the server offers it, else opens a handshake session; the probe is recorded
    with the rest, so a replay knows which eras the server spoke. Every method raises `UpstreamError`
    naming the upstream and what came back when the server does not answer as MCP says.
    """

    def __init__(
        self,
        link: Upstream,
        *,
        era: str = HANDSHAKE,
        protocol_version: str | None = None,
        client_info: Mapping[str, Any] | None = None,
    ) -> None:
        if era not in UPSTREAM_ERAS:
            raise ValueError(f"the upstream era must be one of {', '.join(UPSTREAM_ERAS)}, not {era!r}")
        self.link = link
        self.era = era
        """'handshake' or 'stateless' once opened ('auto' until then)."""
        self._version = protocol_version
        self.client_info = dict(client_info or CLIENT_INFO)
        self._ids = itertools.count(1)
        self.opened: dict[str, Any] | None = None
        """The result of `initialize` (or of `server/discover`)."""
        self._schemas: dict[str, Any] = {}
        """Each listed tool's `inputSchema`: the stateless era mirrors its marked arguments into headers."""

    @property
    def version(self) -> str:
        """The protocol version requests are sent with: the one given, else the newest of the era."""
        if self._version is not None:
            return self._version
        return STATELESS_VERSION if self.era == STATELESS else LATEST_HANDSHAKE

    def _fail(self, what: str, exchange: Exchange) -> UpstreamError:
        if exchange.error is not None:
            came = exchange.error
        elif exchange.rpc_error is not None:
            came = f"JSON-RPC error {exchange.rpc_error.get('code')}: {exchange.rpc_error.get('message')}"
        elif exchange.http is not None and exchange.http.status not in (200, 202):
            came = f"HTTP {exchange.http.status}"
        else:
            came = "no JSON-RPC answer"
        return UpstreamError(f"upstream {self.link.describe()}: {what} failed: {came}")

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        on_event: OnEvent | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Exchange:
        """Send a request with a fresh id; in the stateless era with `_meta` and the headers mirroring it
        (and `headers`, a call's `Mcp-Param-*`)."""
        body = dict(params or {})
        sent: dict[str, str] = {}
        if self.era == STATELESS:
            body = stateless_params(body, version=self.version, client_info=self.client_info)
            sent = {**stateless_headers(method, body, self.version), **(headers or {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if body:
            message["params"] = body
        return self.link.send(message, headers=sent, on_event=on_event)

    def open(self, initialize_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The handshake (`initialize`, then `notifications/initialized`) or, stateless, `server/discover`.

        In 'auto' a discover answered with a result offering a 2026-07-28 version opens the stateless
        era; any other answer (an error, a refusal, no such version) falls back to the handshake.
        """
        if self.era in (STATELESS, "auto"):
            asked, self.era = self.era, STATELESS
            exchange = self.request("server/discover")
            result = exchange.result
            offered = result.get("supportedVersions") if result is not None else None
            spoken = [v for v in STATELESS_VERSIONS if isinstance(offered, list) and v in offered]
            if result is not None and (spoken or asked == STATELESS):
                if self._version is None and spoken:
                    self._version = spoken[-1]
                self.opened = result
                return result
            if asked == STATELESS:
                raise self._fail("server/discover", exchange)
            self.era = HANDSHAKE
        params = dict(
            initialize_params or {"protocolVersion": self.version, "capabilities": {}, "clientInfo": self.client_info}
        )
        exchange = self.request("initialize", params)
        if exchange.result is None:
            raise self._fail("initialize", exchange)
        self.link.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.opened = exchange.result
        return exchange.result

    def list_tools(self, *, max_pages: int = 100) -> list[dict[str, Any]]:
        """Every tool of every page, following the server's cursors; UpstreamError on a broken walk."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, max_pages + 1):
            exchange = self.request("tools/list", {"cursor": cursor} if cursor is not None else None)
            result = exchange.result
            if result is None or not isinstance(result.get("tools"), list):
                raise self._fail(f"tools/list page {page}", exchange)
            page_tools = [tool for tool in result["tools"] if isinstance(tool, dict)]
            tools.extend(page_tools)
            self._schemas.update((tool["name"], tool.get("inputSchema")) for tool in page_tools if "name" in tool)
            cursor = result.get("nextCursor")
            # An empty-string cursor is a page like any other in the 2026-07-28 era; before it, the end.
            if cursor is None or not isinstance(cursor, str) or (cursor == "" and self.era != STATELESS):
                return tools
            if cursor in seen:
                raise UpstreamError(f"upstream {self.link.describe()}: tools/list repeated cursor {cursor!r}")
            seen.add(cursor)
        raise UpstreamError(f"upstream {self.link.describe()}: tools/list did not end within {max_pages} pages")

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        on_event: OnEvent | None = None,
        progress_token: str | int | None = None,
    ) -> Exchange:
        """`tools/call` (asking for progress with `progress_token`); the exchange holds the result or the
        JSON-RPC error (UpstreamError when neither came)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        exchange = self.request("tools/call", params, on_event=on_event, headers=self._param_headers(name, arguments))
        if exchange.result is None and exchange.rpc_error is None:
            raise self._fail(f"tools/call {name}", exchange)
        return exchange

    def _param_headers(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, str]:
        """The `Mcp-Param-*` headers a stateless call to `name` carries (its schema listed first if need be)."""
        if self.era != STATELESS:
            return {}
        if name not in self._schemas:
            self.list_tools()
        try:
            return param_headers(self._schemas.get(name), dict(arguments or {}))
        except ValueError as error:
            raise UpstreamError(f"upstream {self.link.describe()}: tools/call {name}: {error}") from error

    def close(self) -> None:
        self.link.close()
