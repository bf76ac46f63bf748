"""The official `mcp` SDK client as a bridge, and `SdkErrorClassifier`, which sorts what that client
raises into outcome kinds from what crossed the wire rather than from error messages."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Literal

import httpx2

from mcp_testkit._eras import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION
from mcp_testkit.adapters._outcome import Capability, Outcome, SessionMode
from mcp_testkit.adapters._task import TaskHost

__all__ = ["SdkClientAdapter", "SdkErrorClassifier"]


class SdkErrorClassifier:
    """Classifies the `mcp` SDK's errors by what the server really sent, not by message strings.

    The SDK turns HTTP failures into `MCPError`s whose codes a server may also send (a 500 becomes
    -32603, like a server's own internal error), so the code alone cannot tell "the tool said no"
    from "the call may have run". Route the client's HTTP through `classifier.transport(...)`, call
    `begin()` before each operation, and `outcome(error, at=...)` sorts what it raised:

    - a 401 or 403 answer during the operation: `auth_error`;
    - a 404 answer (the server no longer knew the session, so ran nothing): `connection_error`;
    - at a call, no `tools/call` request sent at all (the client failed before it): `connection_error`;
    - a -32020, -32021 or -32022 answer (the stateless era's refusals, before anything ran):
      `connection_error`;
    - an `MCPError` whose code the server sent as a JSON-RPC error answering a request, in a 2xx
      answer or, as the stateless era sends them, in a 4xx one: `tool_error`;
    - anything else (a timeout, a dropped or truncated answer, a 5xx): at a call the request was
      sent, so `outcome_unknown`; at connect, `connection_error`.
    """

    def __init__(self) -> None:
        self._statuses: list[int] = []
        self._codes: set[int] = set()
        self._methods: set[str] = set()
        self._refusals: set[int] = set()

    def transport(self, inner: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncBaseTransport:
        """A transport that forwards to `inner` (a fresh `httpx2.AsyncHTTPTransport` if None) and watches."""
        return _Watching(self, inner if inner is not None else httpx2.AsyncHTTPTransport())

    def begin(self) -> None:
        """Forget what was seen: call it before each connect or call."""
        self._statuses.clear()
        self._codes.clear()
        self._methods.clear()
        self._refusals.clear()

    def outcome(self, error: BaseException, *, at: Literal["connect", "call"]) -> Outcome:
        """The outcome `error`, raised by the SDK during the operation since `begin()`, stands for."""
        from mcp.shared.exceptions import MCPError

        if any(status in (401, 403) for status in self._statuses):
            return Outcome.auth_error(error)
        if 404 in self._statuses or (isinstance(error, MCPError) and error.code in self._refusals):
            return Outcome.connection_error(error)
        if at == "call" and "tools/call" not in self._methods:
            return Outcome.connection_error(error)
        if at == "call" and isinstance(error, MCPError) and error.code in self._codes:
            return Outcome.tool_error(error, text=f"{error.code}: {error.message}")
        return Outcome.outcome_unknown(error) if at == "call" else Outcome.connection_error(error)

    def _sent(self, body: bytes) -> None:
        try:
            message = json.loads(body)
        except ValueError:
            return
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                self._methods.add(item["method"])

    def _saw(self, status: int) -> None:
        if status >= 400:
            self._statuses.append(status)

    def _saw_message(self, data: bytes, *, answers_only: bool = False) -> None:
        """Note the JSON-RPC errors in `data`; with `answers_only` (an error status), only those answering a
        request (a non-null id) and the stateless era's refusals: the rest is the transport refusing."""
        try:
            message = json.loads(data)
        except ValueError:
            return
        for item in message if isinstance(message, list) else [message]:
            error = item.get("error") if isinstance(item, dict) else None
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                continue
            code = error["code"]
            if code in _REFUSALS:
                self._refusals.add(code)
            elif not answers_only or item.get("id") is not None:
                self._codes.add(code)


_REFUSALS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})
"""The stateless era's refusals of a request before it runs: -32020, -32021, -32022."""


class _Watching(httpx2.AsyncBaseTransport):
    """Forwards every request and notes, for POSTs, the status and any JSON-RPC error in a 2xx body."""

    def __init__(self, classifier: SdkErrorClassifier, inner: httpx2.AsyncBaseTransport) -> None:
        self._classifier = classifier
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            with contextlib.suppress(httpx2.RequestNotRead):
                self._classifier._sent(request.content)
        response = await self._inner.handle_async_request(request)
        if request.method != "POST":
            return response
        self._classifier._saw(response.status_code)
        # An error status is the transport refusing, unless its JSON-RPC error answers the request (as the
        # stateless era answers a -32602 with 400) or is one of that era's refusals.
        refused = not 200 <= response.status_code < 300
        sse = response.headers.get("content-type", "").startswith("text/event-stream")
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_Body(response.stream, self._classifier, sse, answers_only=refused),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Body(httpx2.AsyncByteStream):
    """A response body passed through unchanged, its JSON-RPC errors noted before the SDK reads them."""

    def __init__(self, stream: Any, classifier: SdkErrorClassifier, sse: bool, *, answers_only: bool = False) -> None:
        self._stream = stream
        self._classifier = classifier
        self._sse = sse
        self._answers_only = answers_only
        self._buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._buffer += chunk
            if self._sse:
                *lines, self._buffer = self._buffer.split(b"\n")
                for line in lines:
                    if line.startswith(b"data:"):
                        self._classifier._saw_message(line[5:].strip(), answers_only=self._answers_only)
            else:
                self._classifier._saw_message(self._buffer, answers_only=self._answers_only)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


Mode = Literal["auto", "legacy"]


class SdkClientAdapter(TaskHost):
    """The official `mcp` SDK `Client` as a bridge: it pages the listing and calls tools.

    `mode` is the client's: "auto" (its default: it probes with `server/discover`, speaks 2026-07-28
    where the server does and falls back to `initialize` where it does not) or "legacy" (the
    `initialize` handshake only); `SdkClientAdapter.legacy` is a factory of the second. It is the
    bridge many frameworks start from, and its verdicts are reported as they are. Its errors are
    sorted by `SdkErrorClassifier`. The client lives in a task of its own, so that when its transport
    fails and cancels that task, the failure reaches the caller as an outcome rather than as a
    cancellation: a call in flight then may have run (`outcome_unknown`).
    """

    name: ClassVar[str] = "sdk-client (auto)"
    sessions: SessionMode = "persistent"
    # mcp 2.3's request options document `cancel_on_abandon` (default True): "abandoning this request (timeout or
    # caller cancellation) sends notifications/cancelled" (mcp/shared/dispatcher.py). This host forwards a
    # caller's cancel to the client's task (`TaskHost._answer`), so the contract can abandon a call (P10).
    capabilities: ClassVar[frozenset[Capability]] = frozenset({"cancellation"})
    task_name = "SDK client"  # errors say "the SDK client task ended"

    def __init__(
        self,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        timeout_s: float | None = 1.0,
        mode: Mode = "auto",
    ) -> None:
        if mode not in ("auto", "legacy"):
            raise ValueError(f"SdkClientAdapter mode must be 'auto' or 'legacy', not {mode!r}")
        self.mode = mode
        self.name = f"sdk-client ({mode})"  # type: ignore[misc]  # one class, a column per mode
        self._transport = transport
        self.timeout_s = timeout_s
        """How long the client waits for an answer; None: 30 s, and the contract runs no late-answer cases."""
        self._wait_s = timeout_s if timeout_s is not None else 30.0
        self.page_limit: int | None = None
        self.retry = 0
        self._classifier = SdkErrorClassifier()
        self._http: Any = None
        self._tools: list[str] = []

    @classmethod
    def legacy(cls, *, transport: httpx2.AsyncBaseTransport | None = None, **options: Any) -> SdkClientAdapter:
        """The SDK client in legacy mode (`initialize` only): `mcp_testkit.adapters:SdkClientAdapter.legacy`."""
        return cls(transport=transport, mode="legacy", **options)

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return await self._start(functools.partial(self._serve, url, dict(headers)))

    async def _serve(
        self, url: str, headers: dict[str, str], requests: Any, started: Any, box: dict[str, Outcome]
    ) -> None:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        classifier = self._classifier
        try:
            async with requests, contextlib.AsyncExitStack() as stack:
                self._http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=headers, transport=classifier.transport(self._transport), timeout=self._wait_s
                    )
                )
                transport = streamable_http_client(url, http_client=self._http)
                client = Client(transport, mode=self.mode, read_timeout_seconds=self._wait_s)
                classifier.begin()
                try:
                    await stack.enter_async_context(client)
                    self._tools = await _list_all(client)
                except Exception as exc:
                    box["outcome"] = classifier.outcome(exc, at="connect")
                    return
                box["outcome"] = Outcome.ok()
                started.set()
                async with requests:
                    async for tool, arguments, reply in requests:
                        await self._answer(reply, functools.partial(_call, client, classifier, tool, arguments))
        except Exception as exc:
            box.setdefault("outcome", Outcome.connection_error(exc))
        finally:
            started.set()

    def set_headers(self, headers: Mapping[str, str]) -> None:
        if self._http is not None:
            self._http.headers.update(dict(headers))


async def _list_all(client: Any) -> list[str]:
    """Every page, as the SDK offers them: it has no page limit, so neither has this walk.

    A `nextCursor` that is present means more pages, even an empty one (a legal cursor of 2026-07-28).
    """
    names: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names.extend(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


async def _call(client: Any, classifier: SdkErrorClassifier, tool: str, arguments: dict[str, Any]) -> Outcome:
    classifier.begin()
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as exc:
        return classifier.outcome(exc, at="call")
    text = json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)
    if result.is_error:
        return Outcome.tool_error(RuntimeError("the tool answered isError"), text=text)
    return Outcome.ok(text)
