"""What every wire to an MCP server shares: JSON-RPC requests matched to their answers, what went wrong on the
wire, and the hooks by which an era's session tells the link what differs in its era."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import anyio
import mcp_types
from pydantic import BaseModel, ValidationError

from mcp_testkit._wire.eras import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION
from mcp_testkit.bridge._input import INPUT_CAPABILITIES, MAX_INPUT_ROUNDS, answer_round

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_testkit.bridge._input import AskInput
    from mcp_testkit.bridge._tool import BridgeTool

__all__ = [
    "CANCEL_TIMEOUT_S",
    "CLIENT_INFO",
    "LIST_CHANGED",
    "MODERN_CODES",
    "AnswerTooLarge",
    "AuthRefused",
    "BadReply",
    "ConnectionLost",
    "EraRefused",
    "HttpFailure",
    "RpcError",
    "RpcSession",
    "SessionGone",
    "WireError",
    "dump",
    "validated",
]

CLIENT_INFO = mcp_types.Implementation(name="mcp-testkit-bridge", version="0.1.0")
LIST_CHANGED = "notifications/tools/list_changed"
CANCEL_TIMEOUT_S = 1.0
"""How long telling the server that a request was abandoned may take (shielded from the caller's cancel)."""
CANCEL_REASON = "the caller abandoned the request (its deadline or cancel scope ended it)"

logger = logging.getLogger("mcp_testkit.bridge")

_M = TypeVar("_M", bound=BaseModel)


class WireError(Exception):
    """A request got no usable answer; ``sent`` says whether it may have reached the server."""

    def __init__(self, reason: str, *, sent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sent = sent


class ConnectionLost(WireError):
    """The connection failed or ended before the answer arrived."""


class BadReply(WireError):
    """The server answered, but not with a JSON-RPC response to the request."""


class AnswerTooLarge(BadReply):
    """The answer passed the bridge's bound on its size (``size`` when the server declared it, else None)."""

    def __init__(self, size: int | None, limit: int) -> None:
        over = f"{size} bytes" if size is not None else f"over {limit} bytes"
        super().__init__(f"answered with {over}, more than max_result_bytes={limit}", sent=True)
        self.size = size
        self.limit = limit


class HttpFailure(WireError):
    """The server answered with an HTTP status that is neither success, auth nor a lost session."""

    def __init__(self, status: int) -> None:
        super().__init__(f"answered HTTP {status}", sent=True)
        self.status = status


class AuthRefused(WireError):
    """The server refused the credentials with 401 or 403, before acting on the request; or (status None) an OAuth
    flow to get them failed, its reason said."""

    def __init__(self, status: int | None, reason: str | None = None) -> None:
        super().__init__(reason or f"refused the credentials (HTTP {status})", sent=True)
        self.status = status


class SessionGone(WireError):
    """The server no longer knows the session: 404 (it ran nothing) or 400 (older servers; unknown)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"no longer knows the session (HTTP {status})", sent=True)
        self.status = status


class EraRefused(WireError):
    """A stateless request refused as a server of the handshake era refuses one: the era assumption failed.

    A 400, 404 or 405 without a JSON-RPC error answering the request (a half-upgraded deployment, a
    server rolled back), or a -32022 offering only handshake-era versions.
    """


class RpcError(Exception):
    """The server answered the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"JSON-RPC error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data


MODERN_CODES = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})
"""JSON-RPC errors only a server of the stateless era sends: a probe answered with one is a modern server's."""


def dump(model: BaseModel) -> dict[str, Any]:
    """A model as the wire carries it: by alias, without unset fields."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def validated(model: type[_M], raw: object) -> _M:
    """Validate with ``mcp_types``; the pydantic error is dropped because it quotes the body."""
    try:
        return model.model_validate(raw)
    except ValidationError:
        raise BadReply(f"answered a malformed {model.__name__}", sent=True) from None


class RpcSession:
    """JSON-RPC requests to one server and their answers, matched by id: what every wire shares.

    A subclass sends a request and reads its answer (``_request``); this class builds the requests
    the bridge sends and picks the answer out of what the server says meanwhile. What differs between
    the eras, as the link and the listing see it, is asked of the session (the hooks below, which an
    era's module overrides): no caller tests which era it holds.
    """

    era: ClassVar[str]
    session_id: str | None = None
    """The server's id for this session (the handshake era over HTTP only)."""
    max_answer_bytes: int | None = None
    """The bound on one answer's size (the server's ``max_result_bytes``), set by the link; None: unbounded."""
    empty_cursor_is_a_cursor: ClassVar[bool] = False
    """Whether an empty ``nextCursor`` asks for one more page (2026-07-28) rather than breaking the listing."""
    ask_input: AskInput | None = None
    """Answers a tool's input requests (the pool's `input_handler`, bound to the server); None: none declared."""
    relists_on_header_mismatch: ClassVar[bool] = False
    """Whether a call refused with HeaderMismatch (-32020) is sent once more after listing the tools again: the
    era whose headers are derived from the listed schemas."""

    def __init__(self) -> None:
        self._next_id = 1
        self.list_changed = False
        self.listing_ttl_s: float | None = None
        """The shortest `ttlMs` of the pages of the last listing walked, in seconds (None: the server gave none)."""
        self.calling = ""
        """The tool of the call in flight (calls are serialized), whose input requests the handler is told of."""
        self._asked: list[dict[str, Any]] = []
        """Server-to-client requests seen on a call's stream, waiting to be answered."""

    @property
    def capabilities(self) -> dict[str, Any]:
        """What this client declares: the input requests it answers when it has a handler, else nothing."""
        return dict(INPUT_CAPABILITIES) if self.ask_input is not None else {}

    @property
    def usable(self) -> bool:
        """Whether requests can still be sent on this session (a stopped command server's cannot)."""
        return True

    def offered(self, server: str, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """The tools of a listing this era offers: all of them, unless the era leaves some out."""
        return listed

    def call_headers(
        self, server: str, tool: BridgeTool, schema: Mapping[str, Any], arguments: Mapping[str, Any]
    ) -> dict[str, str]:
        """The headers a call of ``tool`` carries besides the era's own: none, unless the era mirrors arguments."""
        return {}

    async def list_tools(self, cursor: str | None) -> mcp_types.ListToolsResult:
        """Read one page of ``tools/list``."""
        params = {} if cursor is None else {"cursor": cursor}
        page = validated(mcp_types.ListToolsResult, await self._request("tools/list", params))
        if cursor is None:
            self.listing_ttl_s = None  # a new walk
        if "ttl_ms" in page.model_fields_set:  # given by the server (2026-07-28), not the model's default
            ttl_s = max(page.ttl_ms, 0) / 1000
            self.listing_ttl_s = ttl_s if self.listing_ttl_s is None else min(self.listing_ttl_s, ttl_s)
        return page

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> mcp_types.CallToolResult:
        """Send one ``tools/call`` and return its validated result; ``headers`` go with it over HTTP (the
        ``Mcp-Param-*`` headers of the stateless era)."""
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        self.calling = name
        raw = await self._request("tools/call", params, headers)
        for _ in range(MAX_INPUT_ROUNDS):
            if raw.get("resultType") != "input_required":
                break
            # 2026-07-28: answer the round, and send the call again with the answers and the echoed state.
            retry = {**params, "inputResponses": await answer_round(self.ask_input, name, raw.get("inputRequests"))}
            if "requestState" in raw:
                retry["requestState"] = raw["requestState"]
            raw = await self._request("tools/call", retry, headers)
        else:
            raise BadReply(f"asked for input {MAX_INPUT_ROUNDS} rounds in a row for {name!r}", sent=True)
        return validated(mcp_types.CallToolResult, raw)

    async def close(self, credentials: Mapping[str, str] | None = None) -> None:
        """End what the session opened at the server, if anything."""

    async def _cancelled(self, request_id: int, method: str) -> None:
        """Tell the server the caller abandoned request ``request_id``, as the era says: here nothing (over the
        HTTP of 2026-07-28, closing the request's stream, which leaving the exchange does, is the cancel)."""

    async def _abandoned(self, request_id: int, method: str) -> None:
        """The caller's cancel scope or deadline (the bridge's timeout included) ended a request: tell the
        server, bounded and shielded; never for ``initialize``, which the spec does not let a client cancel."""
        if method == "initialize":
            return
        with anyio.move_on_after(CANCEL_TIMEOUT_S, shield=True):
            try:
                await self._cancelled(request_id, method)
            except (WireError, RpcError) as exc:
                logger.info("telling the server that %s (id %s) was abandoned failed (%s)", method, request_id, exc)

    def _new_request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The next request id, and the request with it."""
        request_id = self._next_id
        self._next_id += 1
        return request_id, dump(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one request (with ``headers`` besides those of the era, where the wire has headers) and return
        the result that answers it."""
        raise NotImplementedError

    def _answer_in(self, item: object, request_id: int) -> dict[str, Any] | None:
        """The result in ``item`` if it answers ``request_id``; notes ``list_changed``, skips the rest."""
        if not isinstance(item, dict):
            raise BadReply("sent a JSON-RPC message that is not an object", sent=True)
        if item.get("method") == LIST_CHANGED:
            self.list_changed = True
        if "method" in item and "id" in item:
            self._asked.append(item)  # a request of the server's own (an input request), answered by the era
            return None
        if "method" in item or item.get("id") != request_id:
            return None
        if "error" in item:
            error = validated(mcp_types.JSONRPCError, item).error
            raise RpcError(error.code, error.message, error.data)
        return validated(mcp_types.JSONRPCResponse, item).result
