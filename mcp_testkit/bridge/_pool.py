"""``ToolPool``: every configured server connected at once, its tools named ``server.tool`` and callable."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from mcp_testkit._wire.tls import tls_context
from mcp_testkit.bridge._approval import PendingApprovals, named_in_approval, needs_approval
from mcp_testkit.bridge._cache import ToolCache, cache_key
from mcp_testkit.bridge._catalogue import select_tools
from mcp_testkit.bridge._config import read_credentials
from mcp_testkit.bridge._deferred import CALL_TOOL, SEARCH_TOOL, DeferredTools
from mcp_testkit.bridge._errors import MCPBridgeError, MCPConnectionError, MCPToolError
from mcp_testkit.bridge._guardrails import ResultGuardrail, check_guardrails, screen_result
from mcp_testkit.bridge._link import ServerLink
from mcp_testkit.bridge._listen import ListingWatch
from mcp_testkit.bridge._oauth import client_of
from mcp_testkit.bridge._tool import BridgeTool

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import TracebackType

    import mcp_types
    from typing_extensions import Self

    from mcp_testkit.bridge._cache import ToolCacheKey
    from mcp_testkit.bridge._config import Kind, ServerConfig
    from mcp_testkit.bridge._input import InputHandler

__all__ = ["ToolDescription", "ToolPool", "describe_tools"]

logger = logging.getLogger("mcp_testkit.bridge")


class _BorrowedTransport(httpx2.AsyncBaseTransport):
    """A transport the caller owns: the pool sends through it but leaves closing it to the caller."""

    def __init__(self, transport: httpx2.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        return None


def _unique(configs: Iterable[ServerConfig]) -> list[ServerConfig]:
    """The configurations, whose server names must be unique."""
    found = list(configs)
    names = [config.name for config in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"server names must be unique, repeated: {', '.join(map(repr, repeated))}")
    return found


def _checked(cache: object, input_handler: InputHandler | None) -> tuple[bool, InputHandler | None]:
    """`cache` and `input_handler` as `ToolPool` takes them, or a TypeError naming what it got."""
    if not isinstance(cache, bool):
        raise TypeError(f"cache takes True (the process-level ToolCache) or False, not {cache!r}")
    if input_handler is not None and not callable(input_handler):
        raise TypeError(f"input_handler takes an async function of an InputRequested, not {input_handler!r}")
    return cache, input_handler


class ToolPool:
    """Connects every server on entry (all or nothing), exposes their tools and calls them by the rules."""

    def __init__(
        self,
        configs: Iterable[ServerConfig],
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
        cache: bool = True,
        result_guardrails: Mapping[str, ResultGuardrail] | None = None,
        input_handler: InputHandler | None = None,
    ) -> None:
        """`environ` replaces `os.environ` as the place credentials are read from (at every connect).

        `cache=False` lists every server at entry instead of using the process-level `ToolCache`;
        `result_guardrails` check every result a server's tool gives before the caller is given it;
        `input_handler` answers the tools' input requests (elicitation, sampling, roots; docs/input.md).
        """
        self._configs = _unique(configs)
        self._environ = environ
        self._cache, self._input_handler = _checked(cache, input_handler)
        self._guardrails = check_guardrails(result_guardrails)
        self._transport = transport
        self._client: httpx2.AsyncClient | None = None
        self._links: dict[str, ServerLink] = {}
        self._tools: dict[str, BridgeTool] = {}
        self._deferred = DeferredTools(())
        self._approvals = PendingApprovals()
        self._listed: dict[str, list[mcp_types.Tool]] = {}
        self._watch = ListingWatch()

    async def __aenter__(self) -> Self:
        if self._client is not None:
            raise RuntimeError("ToolPool is already open")
        transport = _BorrowedTransport(self._transport) if self._transport is not None else None
        self._client = httpx2.AsyncClient(
            transport=transport, timeout=None, follow_redirects=False, verify=tls_context()
        )
        try:
            for config in self._configs:  # one by one: a link made before a failing one is closed with the pool
                client = client_of(config.auth, config.name, config.url, self._client, transport, self._environ)
                self._links[config.name] = ServerLink(config, client, self._environ, self._input_handler)
            listed = await self._start_all()
            self._load(listed)
            self._listed = listed
            if self._cache:
                # 2026-07-28: a listen stream per server tells of tool changes, which drop the cached listing.
                await self._watch.start(list(self._links.values()), self._environ, self._changed)
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._shutdown()

    def tools(self, server: str | None = None) -> list[BridgeTool]:
        """The tools offered: every loaded tool but a deferred server's, in configuration and listing order.

        With any deferred server, the shared pair ``search_mcp_tools`` and ``call_mcp_tool`` come last
        (they belong to no server, so ``tools(server)`` leaves them out).
        """
        offered = [tool for tool in self._tools.values() if server is None or tool.server == server]
        return offered + self._deferred.pool_tools() if server is None else offered

    def deferred_tools(self, server: str | None = None) -> list[BridgeTool]:
        """The tools of deferred servers, kept out of ``tools()`` and reached through ``call_mcp_tool``."""
        return self._deferred.tools(server)

    def tool(self, name: str) -> BridgeTool:
        """The offered tool named ``name``; ``KeyError`` if the pool offers none by that name."""
        found = self._tools.get(name)
        if found is not None:
            return found
        for pool_tool in self._deferred.pool_tools():
            if pool_tool.name == name:
                return pool_tool
        if any(tool.name == name for tool in self._deferred.tools()):
            raise KeyError(f"tool {name!r} is deferred: find it with {SEARCH_TOOL}, call it with {CALL_TOOL}")
        raise KeyError(f"no tool named {name!r} in the pool")

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call an offered tool and return the text a model reads; raises an ``MCPBridgeError`` on failure.

        A call its server's ``require_approval`` gates raises ``ApprovalRequired`` and sends nothing.
        """
        self._require_open()
        tool = self.tool(name)
        arguments = dict(arguments or {})
        if tool.name == SEARCH_TOOL:
            return self._deferred.search(arguments)
        if tool.name == CALL_TOOL:
            tool, arguments = self._deferred.resolve(arguments)
        config = self._links[tool.server].config
        if needs_approval(config.require_approval, tool.bare_name, arguments):
            raise self._approvals.pause(tool, arguments)
        return await self._run(tool, arguments)

    async def approve(self, token: str) -> str:
        """Run the paused call (once: the token is spent) and return what ``call`` would have.

        The call goes only to a tool its server lists now: the listing is read from the server, never from
        the cache (a person approved a call to the tool the server offered then; a cached listing may be minutes
        old), and kept in the cache; for a tool it no longer lists, ``MCPToolError`` and nothing is sent.
        """
        self._require_open()
        tool, arguments = self._approvals.take(token)
        link = self._links[tool.server]
        listed = await self._listing(link, refresh=True, from_cache=False)
        if all(offered.name != tool.bare_name for offered in listed):
            raise MCPToolError(tool.server, f"{tool.name} is no longer offered by its MCP server")
        return await self._run(tool, arguments)

    async def decline(self, token: str) -> None:
        """Drop the paused call without sending anything; the token is spent."""
        self._approvals.take(token)

    def session_id(self, server: str) -> str | None:
        """The id of the server's live session; None before the first call after a cache hit, after a loss,
        or in the stateless era (which has no sessions)."""
        return self._links[server].session_id

    def era(self, server: str) -> str | None:
        """The era the server is spoken in: 'handshake' or 'stateless' (2026-07-28)."""
        return self._links[server].era

    def _require_open(self) -> None:
        if self._client is None:
            raise RuntimeError("ToolPool is not open; use 'async with pool:'")

    async def _run(self, tool: BridgeTool, arguments: Mapping[str, Any]) -> str:
        client = self._client
        try:
            text = await self._links[tool.server].call(tool, arguments)
        except RuntimeError:
            if self._client is client:
                raise
            # Closed from another task while this call was in flight (httpx2: "the client has been closed").
            raise MCPConnectionError(
                tool.server, f"call to {tool.name!r} ended: the pool was closed while the call was in flight"
            ) from None
        return await screen_result(self._guardrails, tool, text)

    def _cache_key(self, config: ServerConfig) -> ToolCacheKey | None:
        if not self._cache:
            return None
        return cache_key(config, read_credentials(config, self._environ), self._transport)

    async def _listing(self, link: ServerLink, *, refresh: bool, from_cache: bool = True) -> list[mcp_types.Tool]:
        """The server's listing: from the cache when fresh (no connection) and ``from_cache``, else read and kept there.

        On ``refresh`` the link reads it on a new session; else it is the start-up walk.
        """
        key = self._cache_key(link.config)
        if key is not None and from_cache:
            cached = ToolCache.get(key)
            if cached is not None:
                logger.debug("server %r: tool listing taken from the cache", link.config.name)
                return cached
        listed = await (link.relist() if refresh else link.start())
        # Kept only under the credentials it was read with: the environment may have changed meanwhile.
        if key is not None and self._cache_key(link.config) == key:
            ToolCache.put(key, listed, link.listing_ttl_s)  # never longer than the server's ttlMs
        return listed

    async def _changed(self, link: ServerLink) -> None:
        """The server said its tool list changed (on its listen stream): drop the cached listing, read the current
        one and offer it; a listing that fails keeps the tools offered so far (logged), and the cache empty."""
        key = self._cache_key(link.config)
        if key is not None:
            ToolCache.forget(key)
        name = link.config.name
        try:
            listed = await self._listing(link, refresh=True, from_cache=False)
            self._load({**self._listed, name: listed})
        except Exception as exc:
            logger.warning("server %r: reading its tool list again after list_changed failed: %s", name, exc)
            return
        self._listed[name] = listed

    async def _start_all(self) -> dict[str, list[mcp_types.Tool]]:
        listed: dict[str, list[mcp_types.Tool]] = {}
        failures: list[MCPBridgeError] = []

        async def start(link: ServerLink) -> None:
            try:
                listed[link.config.name] = await self._listing(link, refresh=False)
            except MCPBridgeError as exc:
                failures.append(exc)
                group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            for link in self._links.values():
                group.start_soon(start, link)
        if failures:
            raise failures[0]
        return listed

    def _load(self, listed: dict[str, list[mcp_types.Tool]]) -> None:
        """Name and check every listed tool, then split the offered tools from the deferred ones."""
        for config in self._configs:
            missing = named_in_approval(config.require_approval) - {tool.name for tool in listed[config.name]}
            if missing:
                raise MCPConnectionError(
                    config.name,
                    f"require_approval names {', '.join(map(repr, sorted(missing)))}, which the server does not "
                    "list; correct the name or drop it from the list",
                )
        named = self._name_tools(listed)
        deferred = {config.name for config in self._configs if config.defer}
        self._tools = {name: tool for name, tool in named.items() if tool.server not in deferred}
        self._deferred = DeferredTools(tool for tool in named.values() if tool.server in deferred)

    def _name_tools(self, listed: dict[str, list[mcp_types.Tool]]) -> dict[str, BridgeTool]:
        tools: dict[str, BridgeTool] = {}
        for config in self._configs:
            for tool in select_tools(config, listed[config.name]):
                other = tools.get(tool.name)
                if other is not None:
                    raise MCPConnectionError(
                        config.name,
                        f"tool name {tool.name!r} is also the name of a tool of server {other.server!r}; "
                        "deny one of them or rename a server",
                    )
                tools[tool.name] = tool
        return tools

    async def _shutdown(self) -> None:
        await self._watch.stop()
        links, client = list(self._links.values()), self._client
        self._links, self._tools, self._client = {}, {}, None
        self._deferred = DeferredTools(())
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for link in links:
                    group.start_soon(link.aclose)
            for own in {link.client for link in links} - {client}:
                await own.aclose()
            if client is not None:
                await client.aclose()


@dataclass(frozen=True)
class ToolDescription:
    """A tool's classification and what decided it, as ``describe_tools`` reports it."""

    name: str
    kind: Kind
    resendable: bool
    why: str

    def __str__(self) -> str:
        resend = "may be resent" if self.resendable else "never resent"
        return f"{self.name}: {self.kind}, {resend} ({self.why})"


def _why(tool: BridgeTool) -> str:
    if tool.classified_by == "pool":
        if tool.name == SEARCH_TOOL:
            return "pool tool: searches the deferred tools, sends nothing"
        return "pool tool: each call follows the rules of the deferred tool it names"
    if tool.classified_by == "override":
        return f"overrides say {tool.kind!r}"
    idempotent = ", idempotentHint: true" if tool.idempotent else ""
    if tool.classified_by == "hint":
        return f"readOnlyHint: {'true' if tool.kind == 'read' else 'false'}{idempotent}"
    return f"default: no readOnlyHint{idempotent}"


def describe_tools(pool: ToolPool) -> list[ToolDescription]:
    """Each tool of the pool with its read/write classification and why (hint, override or default)."""
    return [ToolDescription(tool.name, tool.kind, tool.resendable, _why(tool)) for tool in pool.tools()]
