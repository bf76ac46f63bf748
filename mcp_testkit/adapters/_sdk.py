"""The official `mcp` SDK client as a bridge, and `SdkErrorClassifier`, which sorts what that client
raises into outcome kinds from the error its caller receives, and from nothing else."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import httpx2

from mcp_testkit._wire.eras import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION
from mcp_testkit.adapters._outcome import Outcome, SessionMode
from mcp_testkit.adapters._task import TaskHost

__all__ = ["HTTP_STAND_IN", "SAME_FOR_EVERY_STATUS", "SdkClientAdapter", "SdkErrorClassifier"]

_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_METHOD_NOT_FOUND = -32601
_INTERNAL_ERROR = -32603

HTTP_STAND_IN = "Server returned an error response"
"""What mcp 2.3's Streamable HTTP client raises (code -32603) for every HTTP status >= 400 but 404 that carries
no JSON-RPC error: 401, 403, 429 and 500 alike."""

SAME_FOR_EVERY_STATUS = (
    "the bridge raises this one error (-32603 'Server returned an error response') for every HTTP status >= 400 "
    "but 404: its caller cannot tell a 401 or 403 from a 500"
)

_REFUSALS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})
"""The stateless era's refusals of a request before it runs: -32020, -32021, -32022."""

_LOST_ANSWER = {
    _CONNECTION_CLOSED: ("Connection closed", "SSE stream "),
    _INVALID_REQUEST: ("Unexpected content type", "server answered a request with 202", "Redirect to "),
}
"""The SDK's own words, by code, for a request that was sent and whose answer it lost or could not read (mcp 2.3):
the server may have run it. A server's own error with that code and other words is the server's answer."""

class SdkErrorClassifier:
    """Sorts what an `mcp` SDK client raised into an outcome kind from the error alone: its type, its code, its
    message and its causes, which is all the application that holds the client receives.

    Nothing is read from the wire. Where the SDK gives two different failures the same error, so does the
    outcome: mcp 2.3 raises `MCPError(-32603, "Server returned an error response")` for every HTTP status
    >= 400 but 404, so a 401 or 403 is not an `auth_error` here but, like a 500, an `outcome_unknown` at a call
    and a `connection_error` at connect, and the outcome's `note` says the bridge could not tell them apart.

    - an `MCPError` of the stateless era's refusals (-32020, -32021, -32022): `connection_error`;
    - a -32600 (the server's refusal of an invalid request, as an unknown session is answered, and the SDK's
      "Session terminated" for a 404), or the SDK's "Not Found" (a 404 before a session): `connection_error`,
      nothing ran;
    - the SDK's words for a lost or unreadable answer (a closed connection or stream, a timeout, a parse
      failure, an HTTP error status): at a call `outcome_unknown` (it may have run), at connect `connection_error`;
    - any other `MCPError`: the server's JSON-RPC error answering the request, `tool_error`;
    - anything else (no `MCPError` in the error, its causes or a group of one): as a lost answer.
    """

    def outcome(self, error: BaseException, *, at: Literal["connect", "call"]) -> Outcome:
        """The outcome `error`, raised by the SDK client (or a bridge over it) at a connect or a call, stands for."""
        mcp_error = _mcp_error(error)
        lost = Outcome.outcome_unknown if at == "call" else Outcome.connection_error
        if mcp_error is None:
            return lost(error)
        code, message = mcp_error.code, str(mcp_error.message)
        if code in _REFUSALS or (code == _INVALID_REQUEST and not message.startswith(_LOST_ANSWER[code])):
            return Outcome.connection_error(error)
        if code == _METHOD_NOT_FOUND and message == "Not Found":
            return Outcome.connection_error(error)
        if code == _INTERNAL_ERROR and message == HTTP_STAND_IN:
            return dataclasses.replace(lost(error), note=SAME_FOR_EVERY_STATUS)
        if code in (_REQUEST_TIMEOUT, _PARSE_ERROR) or message.startswith(_LOST_ANSWER.get(code, ())):
            return lost(error)
        if at == "connect":
            return Outcome.connection_error(error)
        return Outcome.tool_error(error, text=f"{code}: {message}")


def _mcp_error(error: BaseException) -> Any:
    """The `MCPError` the caller received: `error` itself, the one error of a group, or a cause it names."""
    from mcp.shared.exceptions import MCPError

    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MCPError):
            return current
        members = getattr(current, "exceptions", None)  # an exception group (BaseExceptionGroup from 3.11)
        if isinstance(members, tuple) and len(members) == 1 and isinstance(members[0], BaseException):
            current = members[0]
            continue
        current = current.__cause__ or current.__context__
    return None


Mode = Literal["auto", "legacy"]


class SdkClientAdapter(TaskHost):
    """The official `mcp` SDK `Client` as a bridge: it pages the listing and calls tools.

    `mode` is the client's: "auto" (its default: it probes with `server/discover`, speaks 2026-07-28
    where the server does and falls back to `initialize` where it does not) or "legacy" (the
    `initialize` handshake only); `SdkClientAdapter.legacy` is a factory of the second. It is the
    bridge many frameworks start from, and its verdicts are reported as they are. Its errors are
    sorted by `SdkErrorClassifier`, from what the client raises only (its HTTP is not watched). The
    client lives in a task of its own, so that when its transport
    fails and cancels that task, the failure reaches the caller as an outcome rather than as a
    cancellation: a call in flight then may have run (`outcome_unknown`).
    """

    name: ClassVar[str] = "sdk-client (auto)"
    sessions: SessionMode = "persistent"
    # mcp 2.3's request options document `cancel_on_abandon` (default True): "abandoning this request (timeout or
    # caller cancellation) sends notifications/cancelled" (mcp/shared/dispatcher.py). This host forwards a
    # caller's cancel to the client's task (`TaskHost._answer`), so the contract can abandon a call (P10).
    task_name = "SDK client"  # errors say "the SDK client task ended"
    concurrency = 16
    """The client's session matches each answer to its request by id (`JSONRPCDispatcher._pending`,
    mcp/shared/jsonrpc_dispatcher.py) and takes no lock: no limit, the contract's most, 16."""
    progress_timeout_s = None
    """Progress does not extend a wait: the dispatcher hands a progress notification to the request's `on_progress`
    callback only, and `read_timeout_seconds` runs on."""
    max_result_bytes = None
    """No limit on a result: one SSE event is bounded (`DEFAULT_MAX_SSE_EVENT_SIZE`, 1 MiB, in
    mcp/client/streamable_http.py) but a JSON answer is read whole (`response.aread()`); no size is refused in
    every framing, so none is declared, and P12 checks that a large result ends within P11's bounds."""

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
        # Every request of a connect waits at most `read_timeout_seconds`: in auto mode `server/discover` and, on a
        # fallback, `initialize`; in legacy mode `initialize`; then one `tools/list` per page (one in P11's connects).
        self.connect_timeout_s = (3 if mode == "auto" else 2) * self._wait_s
        self.page_limit: int | None = None
        self.retry = 0
        self._classifier = SdkErrorClassifier()
        self._http: Any = None
        self.tools: list[str] = []

    @classmethod
    def legacy(cls, *, transport: httpx2.AsyncBaseTransport | None = None, **options: Any) -> SdkClientAdapter:
        """The SDK client in legacy mode (`initialize` only): `mcp_testkit.adapters:SdkClientAdapter.legacy`."""
        return cls(transport=transport, mode="legacy", **options)

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return await self.start(functools.partial(self._serve, url, dict(headers)))

    async def _serve(
        self, url: str, headers: dict[str, str], requests: Any, started: Any, box: dict[str, Outcome]
    ) -> None:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        classifier = self._classifier
        try:
            async with requests, contextlib.AsyncExitStack() as stack:
                self._http = await stack.enter_async_context(
                    # The SDK's own HTTP timeouts (`create_mcp_http_client`: 30 s, reads 300 s): the client's
                    # `read_timeout_seconds` ends a wait first, as in an application that keeps them.
                    httpx2.AsyncClient(
                        headers=headers,
                        transport=self._transport,
                        timeout=httpx2.Timeout(30.0, read=max(300.0, self._wait_s)),
                    )
                )
                transport = streamable_http_client(url, http_client=self._http)
                client = Client(transport, mode=self.mode, read_timeout_seconds=self._wait_s)
                try:
                    await stack.enter_async_context(client)
                    self.tools = await _list_all(client)
                except Exception as exc:
                    box["outcome"] = classifier.outcome(exc, at="connect")
                    return
                box["outcome"] = Outcome.ok()
                started.set()
                await self._answer_concurrently(requests, functools.partial(_call, client, classifier))
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
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as exc:
        return classifier.outcome(exc, at="call")
    text = json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), sort_keys=True)
    if result.is_error:
        return Outcome.tool_error(RuntimeError("the tool answered isError"), text=text)
    return Outcome.ok(text)
