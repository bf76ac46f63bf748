"""``ToolPool``: every configured server connected at once, its tools named ``server.tool`` and callable."""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from mcp_testkit.bridge._catalogue import BridgeTool, select_tools
from mcp_testkit.bridge._errors import MCPBridgeError, MCPConnectionError
from mcp_testkit.bridge._link import ServerLink

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import TracebackType

    import mcp_types
    from typing_extensions import Self

    from mcp_testkit.bridge._config import Kind, ServerConfig

__all__ = ["ToolDescription", "ToolPool", "describe_tools"]


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every pool: loading the CA bundle costs milliseconds, a pool may live for one call."""
    return ssl.create_default_context()


class _BorrowedTransport(httpx2.AsyncBaseTransport):
    """A transport the caller owns: the pool sends through it but leaves closing it to the caller."""

    def __init__(self, transport: httpx2.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        return None


class ToolPool:
    """Connects every server on entry (all or nothing), exposes their tools and calls them by the rules."""

    def __init__(
        self,
        configs: Iterable[ServerConfig],
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """`environ` replaces `os.environ` as the place credentials are read from (at every connect)."""
        self._configs = list(configs)
        self._environ = environ
        names = [config.name for config in self._configs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"server names must be unique, repeated: {', '.join(map(repr, repeated))}")
        self._transport = transport
        self._client: httpx2.AsyncClient | None = None
        self._links: dict[str, ServerLink] = {}
        self._tools: dict[str, BridgeTool] = {}

    async def __aenter__(self) -> Self:
        if self._client is not None:
            raise RuntimeError("ToolPool is already open")
        transport = _BorrowedTransport(self._transport) if self._transport is not None else None
        self._client = httpx2.AsyncClient(
            transport=transport, timeout=None, follow_redirects=False, verify=_tls_context()
        )
        self._links = {config.name: ServerLink(config, self._client, self._environ) for config in self._configs}
        try:
            listed = await self._start_all()
            self._tools = self._name_tools(listed)
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
        """Every loaded tool, or one server's, in configuration and listing order."""
        return [tool for tool in self._tools.values() if server is None or tool.server == server]

    def tool(self, name: str) -> BridgeTool:
        """The tool named ``server.tool``; ``KeyError`` if the pool has none by that name."""
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r} in the pool") from None

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call ``server.tool`` and return the text a model reads; raises an ``MCPBridgeError`` on failure."""
        if self._client is None:
            raise RuntimeError("ToolPool is not open; use 'async with pool:'")
        tool = self.tool(name)
        return await self._links[tool.server].call(tool, arguments or {})

    def session_id(self, server: str) -> str | None:
        """The id of the server's live session, or None between a lost session and the reconnect (or stateless)."""
        return self._links[server].session_id

    def era(self, server: str) -> str | None:
        """The era the server is spoken in: 'handshake' or 'stateless' (2026-07-28)."""
        return self._links[server].era

    async def _start_all(self) -> dict[str, list[mcp_types.Tool]]:
        listed: dict[str, list[mcp_types.Tool]] = {}
        failures: list[MCPBridgeError] = []

        async def start(link: ServerLink) -> None:
            try:
                listed[link.config.name] = await link.start()
            except MCPBridgeError as exc:
                failures.append(exc)
                group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            for link in self._links.values():
                group.start_soon(start, link)
        if failures:
            raise failures[0]
        return listed

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
        links, client = list(self._links.values()), self._client
        self._links, self._tools, self._client = {}, {}, None
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for link in links:
                    group.start_soon(link.aclose)
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
    if tool.classified_by == "override":
        return f"overrides say {tool.kind!r}"
    idempotent = ", idempotentHint: true" if tool.idempotent else ""
    if tool.classified_by == "hint":
        return f"readOnlyHint: {'true' if tool.kind == 'read' else 'false'}{idempotent}"
    return f"default: no readOnlyHint{idempotent}"


def describe_tools(pool: ToolPool) -> list[ToolDescription]:
    """Each tool of the pool with its read/write classification and why (hint, override or default)."""
    return [ToolDescription(tool.name, tool.kind, tool.resendable, _why(tool)) for tool in pool.tools()]
