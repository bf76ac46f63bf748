"""`HostedBridgeAdapter`: the base of the adapters for third-party Python bridges.

A bridge built on the `mcp` SDK holds task groups; when its transport fails it cancels them, and a
call awaited from the contract's own task would see a cancellation instead of an error. So the
bridge lives in a task of its own, calls reach it through a stream, and an error reaches the caller
as an outcome. What the bridge raises is sorted by `SdkErrorClassifier`, from the error alone (nothing
watches its HTTP); its HTTP carries the headers of the moment, so that `set_headers` reaches a bridge
that took its headers once, when it was built.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Generator, Mapping
from typing import Any, ClassVar

import httpx2

from mcp_testkit.adapters._outcome import Capability, Outcome, SessionMode
from mcp_testkit.adapters._sdk import SdkErrorClassifier
from mcp_testkit.adapters._task import TaskHost

__all__ = ["CurrentHeaders", "HostedBridgeAdapter", "render_result"]


class CurrentHeaders(httpx2.Auth):
    """Sets the adapter's current headers on every request: a rotation reaches a bridge built once."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.headers = headers

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        for name, value in self.headers.items():
            request.headers[name] = value
        yield request


def render_result(result: Any) -> str:
    """An `mcp_types.CallToolResult` as canonical JSON (sorted keys), as the SDK adapter renders it."""
    return json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)


class HostedBridgeAdapter(TaskHost):
    """A bridge that lives in a task of its own; subclasses say how to open it and how to call a tool.

    `open(stack, url)` builds the bridge, enters what it holds into `stack` and returns the MCP names
    of the tools it loaded; `invoke(tool, arguments)` calls one tool the way the bridge's agent would
    and returns the outcome (its errors sorted with `self.classifier`). Build the bridge's HTTP client
    with `http_client()`. An exception from `open` is sorted by `connect_outcome`.
    """

    name: ClassVar[str] = "hosted"
    sessions: SessionMode = "persistent"
    # An application abandons a call to any of these bridges by cancelling the task awaiting it (a cancel scope, a
    # deadline); this host forwards that cancel to the bridge's own call (`TaskHost._answer`). What the bridge then
    # tells the server is P10's verdict (it applies to every adapter that does not declare `cannot`).
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    connect_timeout_s: float | None = None
    """How long a connect may wait in all (P11); each subclass declares its bridge's, from its source."""
    progress_timeout_s: float | None = None
    """None: progress does not extend a wait. mcp 2.3's dispatcher only hands a progress notification to the
    request's callback (`mcp/shared/jsonrpc_dispatcher.py`, `on_progress`); the read timeout runs on."""
    max_result_bytes: int | None = None
    """None: no limit on a result. mcp 2.3 bounds one SSE event (`DEFAULT_MAX_SSE_EVENT_SIZE`, 1 MiB, in
    `mcp/client/streamable_http.py`) but reads a JSON answer whole (`response.aread()`), so no size is refused
    whatever the framing: P12 checks that a large result ends within P11's bounds and leaves the bridge usable."""
    concurrency: int | None = None
    """How many calls may be in flight at once (P13); None: the contract's default, 2."""

    def __init__(self, *, transport: httpx2.AsyncBaseTransport | None = None, timeout_s: float | None = 1.0) -> None:
        self._transport = transport
        self.timeout_s = timeout_s
        """How long the bridge waits for an answer; None: 30 s, and the contract runs no late-answer cases."""
        self.wait_s = timeout_s if timeout_s is not None else 30.0
        self.page_limit: int | None = None
        self.retry = 0
        self.classifier = SdkErrorClassifier()
        self.headers: dict[str, str] = {}
        self.tools: list[str] = []

    def http_client(self, **options: Any) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` for the bridge, with the current headers (in-process: the contract's transport)."""
        options.pop("auth", None)
        options.pop("headers", None)
        # The HTTP timeouts these bridges use by default: the mcp SDK's (`MCP_DEFAULT_TIMEOUT` 30 s,
        # `MCP_DEFAULT_SSE_READ_TIMEOUT` 300 s, mcp/shared/_httpx_utils.py), which fastmcp keeps ("the HTTP read
        # timeout may only extend MCP's 300s default", fastmcp/client/transports/http.py), as do openai-agents and
        # llama-index (`sse_read_timeout` 300 s). The bridge's own per-request timeout (`wait_s`) ends a wait first;
        # an HTTP read timeout as short would end the SDK's whole session instead (its transport task fails).
        options.setdefault("timeout", httpx2.Timeout(30.0, read=max(300.0, self.wait_s)))
        return httpx2.AsyncClient(
            transport=self._transport, auth=CurrentHeaders(self.headers), **options
        )

    async def open(self, stack: contextlib.AsyncExitStack, url: str) -> list[str]:
        raise NotImplementedError

    async def invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        raise NotImplementedError

    async def _invoke(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        try:
            return await self.invoke(tool, arguments)
        except Exception as exc:
            return self.classifier.outcome(exc, at="call")

    def connect_outcome(self, error: BaseException) -> Outcome:
        """The outcome of a connect that raised `error`."""
        return self.classifier.outcome(error, at="connect")

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        self.headers.clear()
        self.headers.update(headers)
        return await self.start(functools.partial(self._serve, url))

    async def _serve(self, url: str, requests: Any, started: Any, box: dict[str, Outcome]) -> None:
        try:
            async with requests, contextlib.AsyncExitStack() as stack:
                try:
                    self.tools = await self.open(stack, url)
                except Exception as exc:
                    box["outcome"] = self.connect_outcome(exc)
                    return
                box["outcome"] = Outcome.ok()
                started.set()
                # Each call in a task of its own: concurrent calls overlap in the bridge (P13), and a call the
                # caller abandons is cancelled in the bridge as the application's cancel scope would (P10).
                await self._answer_concurrently(requests, self._invoke)
        except Exception as exc:
            box.setdefault("outcome", Outcome.connection_error(exc))
        finally:
            started.set()

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self.headers.update(headers)
