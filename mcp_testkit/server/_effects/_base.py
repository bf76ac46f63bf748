"""The phases of a fault's effect (`Effect`), the registry of handlers, and what a transport offers them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from mcp_testkit import faults

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_testkit._wire.asgi import Send
    from mcp_testkit.journal import Record
    from mcp_testkit.server._dispatch._paging import Page
    from mcp_testkit.server._dispatch._protocol import Call
    from mcp_testkit.server._framing._refusals import Refusal
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["HANDLERS", "JSON", "Effect", "HttpTurn", "LineTurn", "Wire", "effect_of", "handles", "supports_stdio"]

F = TypeVar("F", bound=faults.Fault)
JSON = b"application/json"


class HttpTurn(Protocol):
    """What a fault may do to one HTTP exchange (an `_answer.Answer`: the fake's `Response`, the proxy's turn)."""

    record: Record

    async def drop(self) -> None: ...
    async def raw(
        self, status: int, body: bytes, content_type: bytes | None, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None: ...
    async def json(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[bytes, bytes]] | None = None,
        content_type: bytes = JSON,
    ) -> None: ...
    async def error(
        self, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None: ...
    async def refuse(self, refused: Refusal) -> None: ...
    async def start_sse(self) -> None: ...
    async def end_sse(self) -> None: ...
    async def chunk(self, data: bytes) -> None: ...
    async def start_body(self, status: int, content_type: bytes, length: int | None) -> None: ...
    async def end_body(self) -> None: ...
    async def until_gone(self) -> None: ...
    def frame(self, state: ServerState, data: bytes) -> bytes: ...


class LineTurn(Protocol):
    """What a fault may do to one message over stdio (`_stdio.StdioServer` is one)."""

    def write_line(self, record: Record, data: bytes, note: str) -> None: ...
    async def notify(self, message: Any) -> None: ...
    def stop_reading(self, record: Record) -> None: ...
    def exit(self, record: Record, code: int) -> None: ...
    def crash(self, record: Record) -> None: ...


class Wire(Protocol):
    """The connection under one HTTP answer, as a fault at the level of bytes needs it (`_wire.SocketWire` is one).

    Whatever writes answers (the fake's transport, a proxy) gives one to `Effect.wrap_send`.
    """

    record: Record

    async def close(self) -> None: ...
    async def reset(self) -> None: ...


class Effect(Generic[F]):
    """What a fault does, phase by phase; in every phase the base does nothing."""

    __slots__ = ("fault",)

    stdio: ClassVar[bool] = False
    """Whether the fault means something over stdio (`mcp-testkit serve --stdio` refuses the others)."""
    shapes_answer: ClassVar[bool] = False
    """Whether it shapes the answer's bytes, so a stateless error keeps the framing the fault chose."""

    def __init__(self, fault: F) -> None:
        self.fault = fault

    # -- before dispatch --------------------------------------------------------------------------

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        """Act before an HTTP request runs; True when that answered it."""
        return False

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        """Act before a stdio request runs; True when that ended it."""
        return False

    def opened(self, state: ServerState, session: Session) -> None:
        """Act on the session `initialize` just opened."""

    # -- dispatch ---------------------------------------------------------------------------------

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        """The response that replaces running the method, or None to run it."""
        return None

    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        """The response that replaces a `tools/list` page, or None to build it."""
        return None

    async def shape_page(self, call: Call, page: Page) -> None:
        """Reshape a `tools/list` page before it is answered."""

    # -- after dispatch ---------------------------------------------------------------------------

    async def after(self) -> None:
        """Act once the request ran, before its answer is sent."""

    # -- framing and stream -----------------------------------------------------------------------

    def sse(self, session: Session | None) -> bool | None:
        """True: answer as SSE, False: as JSON, None: as the server's response mode says."""
        return None

    def breaks(self) -> tuple[int, int | None] | None:
        """(events, retry ms) after which the answer's SSE stream breaks, or None."""
        return None

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        """Send the answer in the fault's own way; True when it did."""
        return False

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        """Write the stdio answer (`line`) in the fault's own way; True when it did."""
        return False

    async def stream_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        """Write the stdio answer over time (in pieces, with waits), before `send_line`; True when it did."""
        return False

    def wrap_send(self, send: Send, wire: Wire) -> Send:
        """The answer's writer (its ASGI `send`) as the fault reshapes its bytes; `send` itself by default.

        Given before anything is sent, so it sees the response's head and every body write.
        """
        return send

    # -- connection -------------------------------------------------------------------------------

    async def after_notification(self, turn: HttpTurn) -> bool:
        """Act on a notification the server took (HTTP); True when that answered it."""
        return False

    def notification_line(self, turn: LineTurn, record: Record) -> bool:
        """Act on a notification over stdio; True when that ended it."""
        return False


HANDLERS: dict[type[faults.Fault], type[Effect[Any]]] = {}
"""The handler of each fault class."""


def handles(*kinds: type[faults.Fault]) -> Callable[[type[Effect[F]]], type[Effect[F]]]:
    """Register a handler class as the effect of the fault classes `kinds`."""

    def register(handler: type[Effect[F]]) -> type[Effect[F]]:
        for kind in kinds:
            HANDLERS[kind] = handler
        return handler

    return register


def _handler(kind: type[faults.Fault]) -> type[Effect[Any]]:
    for base in kind.__mro__:
        handler = HANDLERS.get(base)
        if handler is not None:
            return handler
    return Effect


def effect_of(fault: faults.Fault | None) -> Effect[Any] | None:
    """The effect of the fault a rule applies to a request; None when no fault hit it."""
    if fault is None:
        return None
    handler = HANDLERS.get(type(fault)) or _handler(type(fault))
    return handler(fault)


def supports_stdio(fault: faults.Fault) -> bool:
    """Whether `fault` means something over stdio."""
    return _handler(type(fault)).stdio
