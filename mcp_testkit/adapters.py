"""Adapters: the smallest interface a bridge needs to be tested, and adapters for two real bridges.

A `BridgeAdapter` connects to one MCP server URL with some headers, lists tool names, calls a
tool and reports an `Outcome`, and closes. The contract suite (`mcp_testkit.contract`) drives any
adapter through `TestMcpServer`. An adapter class is its own factory: the suite calls
`Adapter(transport=...)`, with an `httpx2` transport for in-process runs or None for a real socket.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx2

__all__ = ["AdapterFactory", "BridgeAdapter", "Outcome", "OutcomeKind", "ReferenceBridgeAdapter", "SdkClientAdapter"]

OutcomeKind = Literal["ok", "tool_error", "auth_error", "outcome_unknown", "connection_error"]


@dataclass(frozen=True)
class Outcome:
    """What one connect or call came to, as the bridge reported it."""

    kind: OutcomeKind
    text: str | None = None
    error: BaseException | None = field(default=None, compare=False)

    @classmethod
    def ok(cls, text: str = "") -> Outcome:
        return cls("ok", text)

    @classmethod
    def tool_error(cls, error: BaseException) -> Outcome:
        return cls("tool_error", None, error)

    @classmethod
    def auth_error(cls, error: BaseException) -> Outcome:
        return cls("auth_error", None, error)

    @classmethod
    def outcome_unknown(cls, error: BaseException) -> Outcome:
        return cls("outcome_unknown", None, error)

    @classmethod
    def connection_error(cls, error: BaseException) -> Outcome:
        return cls("connection_error", None, error)

    def __str__(self) -> str:
        if self.kind == "ok":
            return f"ok({self.text!r})"
        return f"{self.kind}({type(self.error).__name__}: {self.error})"


@runtime_checkable
class BridgeAdapter(Protocol):
    """One bridge connected to one server, as the contract suite drives it."""

    name: ClassVar[str]
    """A short name for reports, e.g. 'reference'."""
    page_limit: int | None
    """The most `tools/list` pages the bridge reads before giving up; None: no limit."""
    retry: int
    """How many times the bridge may resend a read after a transient failure."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        """Connect and load the tool listing; an `Outcome` says whether that worked."""
        ...

    async def list_tools(self) -> list[str]:
        """The bare names of the tools loaded at connect, as many times as the bridge holds them."""
        ...

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        """Call a tool by its bare name."""
        ...

    def set_headers(self, headers: Mapping[str, str]) -> None:
        """New credentials, to be used from the bridge's next connect or request on (a rotation)."""
        ...

    async def close(self) -> None:
        """Disconnect; nothing may stay open."""
        ...


class AdapterFactory(Protocol):
    """Makes an adapter; `transport` routes its HTTP in-process when given."""

    def __call__(self, *, transport: httpx2.AsyncBaseTransport | None = None) -> BridgeAdapter: ...


class ReferenceBridgeAdapter:
    """The reference bridge (`mcp_testkit.bridge.ToolPool`) behind the adapter interface."""

    name: ClassVar[str] = "reference"
    server_name: ClassVar[str] = "srv"

    def __init__(
        self,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        retry: int = 2,
        timeout_s: float = 5.0,
        connect_timeout_s: float = 5.0,
        max_tool_pages: int = 100,
    ) -> None:
        self._transport = transport
        self.retry = retry
        self.page_limit: int | None = max_tool_pages
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._environ: dict[str, str] = {}
        self._variables: dict[str, str] = {}
        self._pool: Any = None

    def _config(self, url: str) -> Any:
        from mcp_testkit.bridge import Headers, ServerConfig

        return ServerConfig(
            name=self.server_name,
            url=url,
            auth=Headers(env=self._variables) if self._variables else None,
            timeout_s=self._timeout_s,
            retry=self.retry,
            connect_timeout_s=self._connect_timeout_s,
            connect_retries=0,
            max_tool_pages=self.page_limit or 100,
        )

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        from mcp_testkit.bridge import ToolPool

        self._variables = {name: f"MCP_TESTKIT_HEADER_{index}" for index, name in enumerate(headers)}
        self.set_headers(headers)
        # Uncached: every contract example scripts a new catalogue behind the same URL, and its listing is
        # what P1 checks; a cached one would be the previous example's.
        pool = ToolPool([self._config(url)], transport=self._transport, environ=self._environ, cache=False)
        try:
            await pool.__aenter__()
        except Exception as exc:
            return _reference_outcome(exc)
        self._pool = pool
        return Outcome.ok()

    async def list_tools(self) -> list[str]:
        return [tool.bare_name for tool in self._pool.tools()] if self._pool is not None else []

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        try:
            text = await self._pool.call(f"{self.server_name}.{tool}", dict(arguments))
        except Exception as exc:
            return _reference_outcome(exc)
        return Outcome.ok(text)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        for name, value in headers.items():
            variable = self._variables.setdefault(name, f"MCP_TESTKIT_HEADER_{len(self._variables)}")
            self._environ[variable] = value

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.__aexit__(None, None, None)


def _reference_outcome(error: Exception) -> Outcome:
    from mcp_testkit import bridge

    if isinstance(error, bridge.MCPToolError):
        return Outcome.tool_error(error)
    if isinstance(error, bridge.MCPAuthError):
        return Outcome.auth_error(error)
    if isinstance(error, bridge.MCPCallOutcomeUnknown):
        return Outcome.outcome_unknown(error)
    if isinstance(error, bridge.MCPBridgeError):
        return Outcome.connection_error(error)
    raise error


class SdkClientAdapter:
    """The official `mcp` SDK `Client` (legacy mode) as a bridge: it pages the listing and calls tools.

    It is the bridge many frameworks start from, and its verdicts are reported as they are: it does
    not start a new session after a 404, and it reports HTTP failures as one generic `MCPError`.
    The client lives in a task of its own, so that when its transport fails and cancels that task,
    the failure reaches the caller as a `connection_error` outcome rather than as a cancellation.
    """

    name: ClassVar[str] = "sdk-client"

    def __init__(
        self, *, transport: httpx2.AsyncBaseTransport | None = None, timeout_s: float = 5.0, page_limit: int = 100
    ) -> None:
        self._transport = transport
        self._timeout_s = timeout_s
        self.page_limit: int | None = page_limit
        self.retry = 0
        self._group: Any = None
        self._requests: Any = None
        self._http: Any = None
        self._tools: list[str] = []

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        import anyio

        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._requests, requests = anyio.create_memory_object_stream[Any](0)
        started = anyio.Event()
        box: dict[str, Outcome] = {}
        self._group.start_soon(self._serve, url, dict(headers), requests, started, box)
        await started.wait()
        return box.get("outcome") or Outcome.connection_error(RuntimeError("the SDK client task ended"))

    async def _serve(
        self, url: str, headers: dict[str, str], requests: Any, started: Any, box: dict[str, Outcome]
    ) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        try:
            async with requests, contextlib.AsyncExitStack() as stack:
                self._http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, transport=self._transport, timeout=self._timeout_s)
                )
                transport = streamable_http_client(url, http_client=self._http)
                client = Client(transport, mode="legacy", read_timeout_seconds=self._timeout_s)
                try:
                    await stack.enter_async_context(client)
                    self._tools = await _list_all(client, self.page_limit or 100)
                except Exception as exc:
                    box["outcome"] = _sdk_outcome(exc)
                    return
                box["outcome"] = Outcome.ok()
                started.set()
                async with requests:
                    async for tool, arguments, reply in requests:
                        async with reply:
                            await reply.send(await _call(client, tool, arguments))
        except Exception as exc:
            box.setdefault("outcome", Outcome.connection_error(exc))
        finally:
            started.set()

    async def list_tools(self) -> list[str]:
        return list(self._tools)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        import anyio

        if self._requests is None:
            return Outcome.connection_error(RuntimeError("not connected"))
        reply, answer = anyio.create_memory_object_stream[Outcome](1)
        try:
            await self._requests.send((tool, dict(arguments), reply))
            async with answer:
                return await answer.receive()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream) as exc:
            reply.close()
            answer.close()
            return Outcome.connection_error(RuntimeError(f"the SDK client task ended ({type(exc).__name__})"))

    def set_headers(self, headers: Mapping[str, str]) -> None:
        if self._http is not None:
            self._http.headers.update(dict(headers))

    async def close(self) -> None:
        group, self._group = self._group, None
        requests, self._requests = self._requests, None
        if requests is not None:
            await requests.aclose()
        if group is not None:
            with contextlib.suppress(Exception):
                await group.__aexit__(None, None, None)


async def _list_all(client: Any, page_limit: int) -> list[str]:
    names: list[str] = []
    cursor: str | None = None
    for _ in range(page_limit):
        page = await client.list_tools(cursor=cursor)
        names.extend(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return names
    raise RuntimeError(f"the listing did not end within {page_limit} pages")


async def _call(client: Any, tool: str, arguments: dict[str, Any]) -> Outcome:
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as exc:
        return _sdk_outcome(exc)
    text = json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)
    if result.is_error:
        return Outcome.tool_error(RuntimeError(text))
    return Outcome.ok(text)


def _sdk_outcome(error: BaseException) -> Outcome:
    """Sort what the SDK raised: a JSON-RPC error from the server is the tool's error; the SDK reports
    every HTTP failure (401 and 403 included) as one generic MCPError, which can only be a connection error."""
    from mcp.shared.exceptions import MCPError

    generic = str(error) == "Server returned an error response" or str(error).startswith("Session not found")
    if isinstance(error, MCPError) and not generic:
        return Outcome.tool_error(error)
    if isinstance(error, Exception):
        return Outcome.connection_error(error)
    raise error
