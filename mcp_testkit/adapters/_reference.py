"""The reference bridge (`mcp_testkit.bridge.ToolPool`) behind the adapter interface, with one session
kept open, or with a session opened for every operation as many frameworks do."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from mcp_testkit.adapters._outcome import Capability, Outcome, SessionMode

if TYPE_CHECKING:
    import httpx2

    from mcp_testkit.bridge import Era

__all__ = ["PerCallReferenceAdapter", "ReferenceBridgeAdapter"]


class ReferenceBridgeAdapter:
    """The reference bridge: one `ToolPool` (one session, in the handshake era) from connect to close.

    `era` is its `ServerConfig(era=...)`: "auto" (probe, then the era the server speaks), "handshake" or
    "stateless"; the contract asks for the era it checks, as `eras` says it may.

    It has approval gates (P8), a tool cache (P9) and OAuth (P15: `use_oauth` gives its `ServerConfig`
    `auth=OAuth(...)` with the handlers, tokens in memory, a new client registered dynamically). The cache is off
    unless a property asks for it
    (`use_tool_cache`): every other example scripts a new catalogue behind the same URL.

    `timeout_s=0.5` bounds every call, including reading the largest answer it must accept: P12 sends one of
    `max_result_bytes` (1 MiB) less 8 KiB, as SSE too. Measured over a socket on 2 CPUs at load 13, 15 calls each:
    at most 0.21 s as SSE and 0.09 s as JSON, so 0.5 s is 2.4 times the slowest (before the SSE decoder stopped
    searching a long line again at each chunk, the same answer took up to 1.9 s, which was P12's timeout under
    load). Raising it would only lengthen every wait P10 and P11 time out on; a server that never answers still
    ends each call at 0.5 s.
    """

    name: ClassVar[str] = "reference"
    server_name: ClassVar[str] = "srv"
    sessions: SessionMode = "persistent"
    eras: ClassVar[tuple[str, ...]] = ("handshake", "stateless")
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"approvals", "tool_cache", "oauth"})
    cache_ttl_s: float = 300.0
    concurrency: int = 16
    """Calls in flight at once on one pool: each is a request of its own, its answer matched by id."""

    def __init__(
        self,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        retry: int = 2,
        timeout_s: float = 0.5,
        connect_timeout_s: float = 5.0,
        max_tool_pages: int = 100,
        max_result_bytes: int = 1024 * 1024,
        era: Era = "auto",
    ) -> None:
        self._transport = transport
        self.era: Era = era
        self.retry = retry
        self.page_limit: int | None = max_tool_pages
        self.timeout_s: float | None = timeout_s
        self.connect_timeout_s: float = connect_timeout_s
        self.max_result_bytes: int = max_result_bytes
        """The bridge's `max_result_bytes` (1 MiB here, 16 MiB by default): P12 sends results over it."""
        self._environ: dict[str, str] = {}
        self._variables: dict[str, str] = {}
        self._pool: Any = None
        self._url = ""
        self._gated: frozenset[str] = frozenset()
        self._cache = False
        self._cache_now = 0.0
        self._cache_settings: tuple[Any, ...] | None = None
        self._oauth: Any = None

    def _config(self, url: str) -> Any:
        from mcp_testkit.bridge import Headers, ServerConfig

        headers = Headers(env=self._variables) if self._variables else None
        return ServerConfig(
            name=self.server_name,
            url=url,
            auth=self._oauth or headers,
            timeout_s=self.timeout_s or 30.0,
            retry=self.retry,
            connect_timeout_s=self.connect_timeout_s,
            connect_retries=0,
            max_tool_pages=self.page_limit or 100,
            max_result_bytes=self.max_result_bytes,
            era=self.era,
            require_approval={"always": self._gated} if self._gated else "never",
        )

    async def _open(self) -> Any:
        """An open `ToolPool` on the URL given to connect, or the `Outcome` of its failure."""
        from mcp_testkit.bridge import ToolPool

        # Uncached unless asked: every contract example scripts a new catalogue behind the same URL, and its
        # listing is what P1 checks; a cached one would be the previous example's.
        pool = ToolPool(
            [self._config(self._url)], transport=self._transport, environ=self._environ, cache=self._cache
        )
        try:
            await pool.__aenter__()
        except Exception as exc:
            return _reference_outcome(exc)
        return pool

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        await self._close_pool()  # connected again (P9): what the previous connect opened ends first
        self._url = url
        self._variables = {name: f"MCP_TESTKIT_HEADER_{index}" for index, name in enumerate(headers)}
        self._environ = {}
        self.set_headers(headers)
        pool = await self._open()
        if isinstance(pool, Outcome):
            return pool
        self._pool = pool
        return Outcome.ok()

    async def list_tools(self) -> list[str]:
        return [tool.bare_name for tool in self._pool.tools()] if self._pool is not None else []

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        if self._pool is None:
            return Outcome.connection_error(RuntimeError("not connected"))
        return await _call(self._pool, f"{self.server_name}.{tool}", arguments)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        for name, value in headers.items():
            variable = self._variables.setdefault(name, f"MCP_TESTKIT_HEADER_{len(self._variables)}")
            self._environ[variable] = value

    def require_approval(self, tools: Collection[str]) -> None:
        self._gated = frozenset(tools)

    async def approve(self, token: str) -> Outcome:
        if self._pool is None:
            return Outcome.connection_error(RuntimeError("not connected"))
        try:
            text = await self._pool.approve(token)
        except KeyError as exc:  # a spent or unknown token
            return Outcome.tool_error(exc, text=str(exc.args[0]))
        except Exception as exc:
            return _reference_outcome(exc)
        return Outcome.ok(text)

    async def decline(self, token: str) -> Outcome:
        if self._pool is None:
            return Outcome.connection_error(RuntimeError("not connected"))
        try:
            await self._pool.decline(token)
        except KeyError as exc:
            return Outcome.tool_error(exc, text=str(exc.args[0]))
        return Outcome.ok()

    def use_oauth(
        self, redirect_handler: Callable[[str], Awaitable[None]], callback_handler: Callable[[], Awaitable[Any]]
    ) -> None:
        from mcp_testkit.bridge import OAuth

        self._oauth = OAuth(redirect_handler=redirect_handler, callback_handler=callback_handler)

    def use_tool_cache(self) -> None:
        """List through the process-level `ToolCache`, emptied, on this adapter's clock, until `close`."""
        from mcp_testkit.bridge import ToolCache

        if self._cache_settings is None:
            self._cache_settings = (ToolCache.ttl_s, ToolCache.max_entries, ToolCache.clock)
        self._cache = True
        ToolCache.clear()
        ToolCache.configure(ttl_s=self.cache_ttl_s, clock=lambda: self._cache_now)

    def advance_cache_clock(self, seconds: float) -> None:
        self._cache_now += seconds

    async def close(self) -> None:
        await self._close_pool()
        if self._cache_settings is not None:
            from mcp_testkit.bridge import ToolCache

            ttl_s, max_entries, clock = self._cache_settings
            self._cache_settings = None
            ToolCache.clear()  # its entries were listed on this adapter's clock
            ToolCache.configure(ttl_s=ttl_s, max_entries=max_entries, clock=clock)

    async def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.__aexit__(None, None, None)


class PerCallReferenceAdapter(ReferenceBridgeAdapter):
    """The reference bridge used the way many frameworks use a client: a new session for every operation.

    `connect` opens a pool (handshake and listing) and closes it; each `call` opens a pool, calls, and
    closes it. No session lives between operations, so the contract adapts its session cases to it.
    """

    name: ClassVar[str] = "reference-per-call"
    sessions: SessionMode = "per_call"
    # A paused call belongs to the pool it paused in, and this adapter closes every pool it opens.
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"tool_cache", "oauth"})

    def __init__(self, *, transport: httpx2.AsyncBaseTransport | None = None, **options: Any) -> None:
        super().__init__(transport=transport, **options)
        self._tools: list[str] = []
        self._connected = False

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        outcome = await super().connect(url, headers)
        if outcome.kind == "ok":
            self._tools = await super().list_tools()
            self._connected = True
            await self._close_pool()
        return outcome

    async def list_tools(self) -> list[str]:
        return list(self._tools)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        if not self._connected:
            return Outcome.connection_error(RuntimeError("not connected"))
        pool = await self._open()
        if isinstance(pool, Outcome):
            return pool
        try:
            return await _call(pool, f"{self.server_name}.{tool}", arguments)
        finally:
            await pool.__aexit__(None, None, None)

    async def close(self) -> None:
        self._connected = False
        await super().close()


async def _call(pool: Any, name: str, arguments: Mapping[str, Any]) -> Outcome:
    try:
        text = await pool.call(name, dict(arguments))
    except Exception as exc:
        return _reference_outcome(exc)
    return Outcome.ok(text)


def _reference_outcome(error: Exception) -> Outcome:
    from mcp_testkit import bridge

    if isinstance(error, bridge.ApprovalRequired):
        return Outcome.approval_required(error.token)
    if isinstance(error, bridge.MCPToolError):
        return Outcome.tool_error(error)
    if isinstance(error, bridge.MCPAuthError):
        return Outcome.auth_error(error)
    if isinstance(error, bridge.MCPCallOutcomeUnknown):
        return Outcome.outcome_unknown(error)
    if isinstance(error, bridge.MCPBridgeError):
        return Outcome.connection_error(error)
    raise error
