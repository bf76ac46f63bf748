"""What each fault does: one handler per fault class, with a method for each phase where it acts.

A fault in `faults.py` is a passive value; its effect lives here and nowhere else. The transports
(HTTP in both eras, stdio) and the dispatcher ask the request's handler at each phase, and a
handler acts only in the phases it defines (the base class does nothing in every phase):

- before dispatch: `before` (HTTP), `before_line` (stdio), `opened` (after `initialize` made a session);
- dispatch and listing: `answer`, `before_page`, `shape_page`;
- after dispatch: `after`;
- framing and stream: `sse`, `breaks`, `send` (HTTP), `send_line` (stdio);
- connection, for a notification: `after_notification` (HTTP), `notification_line` (stdio).

Adding a fault is one value in `faults.py` plus one handler here, registered with `@handles`.
No request without a fault pays for any of this: `effect_of(None)` is None and the transports skip it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import anyio

from mcp_testkit import faults
from mcp_testkit._eras import HANDSHAKE, STATELESS
from mcp_testkit.server._paging import Cursor, Page
from mcp_testkit.server._protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    dumps,
    error_response,
    result_response,
)
from mcp_testkit.server._refusal import LEGACY_REFUSAL, Refusal, mismatch, missing_capability, unsupported
from mcp_testkit.server._sessions import SESSION_NOT_FOUND
from mcp_testkit.tools import text_result

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_testkit.journal import Record
    from mcp_testkit.server._protocol import Call
    from mcp_testkit.server._sessions import Session
    from mcp_testkit.server._state import ServerState

__all__ = ["HANDLERS", "Effect", "HttpTurn", "LineTurn", "effect_of", "handles", "supports_stdio"]

F = TypeVar("F", bound=faults.Fault)
_JSON = b"application/json"
_LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


class HttpTurn(Protocol):
    """What a fault may do to one HTTP exchange (`_http.Response` is one)."""

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
        content_type: bytes = _JSON,
    ) -> None: ...
    async def error(
        self, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None: ...
    async def refuse(self, refused: Refusal) -> None: ...
    async def start_sse(self) -> None: ...
    async def end_sse(self) -> None: ...
    async def chunk(self, data: bytes) -> None: ...
    def frame(self, state: ServerState, data: bytes) -> bytes: ...


class LineTurn(Protocol):
    """What a fault may do to one message over stdio (`_stdio.StdioServer` is one)."""

    def write_line(self, record: Record, data: bytes, note: str) -> None: ...
    def exit(self, record: Record, code: int) -> None: ...
    def crash(self, record: Record) -> None: ...


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


# -- answers ----------------------------------------------------------------------------------------


@handles(faults.ErrorResult)
class _ErrorResult(Effect[faults.ErrorResult]):
    stdio = True

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        if method == "tools/call":
            call.record.executed = False
        return result_response(request_id, text_result(self.fault.text, is_error=True))


@handles(faults.ProtocolError)
class _ProtocolError(Effect[faults.ProtocolError]):
    stdio = True

    def answer(self, request_id: Any, method: str, call: Call) -> Any:
        fault = self.fault
        return error_response(request_id, fault.code, fault.message, fault.data)


@handles(faults.Delay)
class _Delay(Effect[faults.Delay]):
    stdio = True

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await anyio.sleep(self.fault.seconds)
        return False

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        await anyio.sleep(self.fault.seconds)
        return False


@handles(faults.LateAnswer)
class _LateAnswer(Effect[faults.LateAnswer]):
    stdio = True

    async def after(self) -> None:
        await anyio.sleep(self.fault.seconds)


# -- HTTP -------------------------------------------------------------------------------------------


@handles(faults.HttpStatus)
class _HttpStatus(Effect[faults.HttpStatus]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        fault = self.fault
        body, content_type = fault.body_bytes()
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in fault.headers or ()]
        turn.record.response = fault.body if not isinstance(fault.body, bytes) else None
        await turn.raw(fault.status, body, content_type, headers)
        return True


@handles(faults.Accepted)
class _Accepted(Effect[faults.Accepted]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await turn.json(202, None)
        return True


@handles(faults.WrongContentType)
class _WrongContentType(Effect[faults.WrongContentType]):
    def sse(self, session: Session | None) -> bool | None:
        return False

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.json(status, response, content_type=self.fault.content_type.encode("latin-1"))
        return True


# -- connection and stream --------------------------------------------------------------------------


@handles(faults.Drop)
class _Drop(Effect[faults.Drop]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if self.fault.after_execution:
            return False
        await turn.drop()
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.drop()
        return True

    async def after_notification(self, turn: HttpTurn) -> bool:
        await turn.drop()
        return True


@handles(faults.TruncateBody)
class _TruncateBody(Effect[faults.TruncateBody]):
    stdio = True
    shapes_answer = True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        if not sse:
            body = dumps(response)
            await turn.raw(200, body[: len(body) // 2], _JSON)
            return True
        await turn.start_sse()
        frame = turn.frame(state, dumps(response))[:-2]
        await turn.chunk(frame[: len(frame) // 2])
        await turn.end_sse()
        return True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        turn.write_line(record, line[: len(line) // 2] + b"\n", "answered with half a line by a fault")
        return True


@handles(faults.EndStream)
class _EndStream(Effect[faults.EndStream]):
    shapes_answer = True

    def sse(self, session: Session | None) -> bool | None:
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.start_sse()
        await turn.end_sse()
        return True


@handles(faults.MalformedSse)
class _MalformedSse(Effect[faults.MalformedSse]):
    shapes_answer = True

    def sse(self, session: Session | None) -> bool | None:
        return True

    async def send(self, turn: HttpTurn, state: ServerState, status: int, response: Any, sse: bool) -> bool:
        await turn.start_sse()
        await turn.chunk(turn.frame(state, b"{this is not json"))
        await turn.end_sse()
        return True


@handles(faults.BreakStream)
class _BreakStream(Effect[faults.BreakStream]):
    def sse(self, session: Session | None) -> bool | None:
        return True

    def breaks(self) -> tuple[int, int | None] | None:
        return self.fault.after_events, self.fault.retry_ms


# -- stdio ------------------------------------------------------------------------------------------


@handles(faults.MalformedLine)
class _MalformedLine(Effect[faults.MalformedLine]):
    stdio = True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        turn.write_line(record, b"{this line is not JSON\n", "answered with a malformed line by a fault")
        return True


class _Ending(Effect[Any]):
    """`Exit` and `Crash`: the process ends instead of answering (after running the request, if so asked)."""

    stdio = True

    def _end(self, turn: LineTurn, record: Record) -> None:
        raise NotImplementedError

    async def before_line(self, turn: LineTurn, record: Record) -> bool:
        if self.fault.after_execution:
            return False
        self._end(turn, record)
        return True

    def send_line(self, turn: LineTurn, record: Record, response: Any, line: bytes) -> bool:
        self._end(turn, record)
        return True

    def notification_line(self, turn: LineTurn, record: Record) -> bool:
        self._end(turn, record)
        return True


@handles(faults.Exit)
class _Exit(_Ending):
    def _end(self, turn: LineTurn, record: Record) -> None:
        turn.exit(record, self.fault.code)


@handles(faults.Crash)
class _Crash(_Ending):
    def _end(self, turn: LineTurn, record: Record) -> None:
        turn.crash(record)


# -- sessions ---------------------------------------------------------------------------------------


async def _session_gone(turn: HttpTurn, status: int) -> None:
    await turn.error(status, INVALID_REQUEST, SESSION_NOT_FOUND)


@handles(faults.LoseSession)
class _LoseSession(Effect[faults.LoseSession]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if session is None:
            return False
        state.sessions.end(session.id)
        session.outbox.put(None)
        await _session_gone(turn, state.sessions.unknown_status)
        return True

    def opened(self, state: ServerState, session: Session) -> None:
        state.sessions.end(session.id)


@handles(faults.Restart)
class _Restart(Effect[faults.Restart]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        status = self.fault.unknown_session_status
        for lost in state.sessions.alive:
            lost.outbox.put(None)
        state.sessions.end_all()
        state.sessions.unknown_status = status
        if session is None:
            return False
        await _session_gone(turn, status)
        return True


@handles(faults.ExpireSession)
class _ExpireSession(Effect[faults.ExpireSession]):
    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        if session is not None:
            session.expires_after = session.requests + self.fault.after_requests
        return False


# -- listing ----------------------------------------------------------------------------------------


class _Listing(Effect[Any]):
    stdio = True


@handles(faults.InvalidCursor)
class _InvalidCursor(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        return error_response(request_id, INVALID_PARAMS, f"Invalid cursor: {sent!r}")


@handles(faults.PageError)
class _PageError(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        return error_response(request_id, self.fault.code, self.fault.message)


@handles(faults.SlowPage)
class _SlowPage(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        await anyio.sleep(self.fault.seconds)
        return None


@handles(faults.MalformedPage)
class _MalformedPage(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        return result_response(request_id, {"tools": "this page is deliberately malformed"})


def _announces(session: Session | None) -> bool | None:
    """No GET stream to carry list_changed: it rides on this page's own SSE stream, or it is lost."""
    return True if session is None or not session.outbox.streaming else None


@handles(faults.CatalogueChange)
class _CatalogueChange(_Listing):
    def sse(self, session: Session | None) -> bool | None:
        return _announces(session)

    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        # Announced on this page's own stream, where the walking client can see it; others hear it as usual.
        call.state.change_catalogue(self.fault.add, self.fault.remove, quiet=call.session)
        await call.notify(dict(_LIST_CHANGED))
        return None


@handles(faults.ListChanged)
class _ListChanged(_Listing):
    def sse(self, session: Session | None) -> bool | None:
        return _announces(session)

    async def shape_page(self, call: Call, page: Page) -> None:
        await call.notify(dict(_LIST_CHANGED))


@handles(faults.StuckCursor)
class _StuckCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        offset = page.next_offset if page.next_offset is not None else page.total
        page.following = Cursor(page.here.page + 1, offset, stuck=True)


@handles(faults.RepeatCursor)
class _RepeatCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        page.following = page.here


@handles(faults.EndlessPages)
class _EndlessPages(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        if page.following is None:
            page.following = Cursor(page.here.page + 1, page.total)


@handles(faults.DuplicateTool)
class _DuplicateTool(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        state, name = call.state, self.fault.name
        if name is not None and name in state.tools:
            page.tools.append(state.tools[name].definition)
            return
        definitions = state.definitions()
        if definitions:
            page.tools.append(definitions[0])


@handles(faults.EmptyCursor)
class _EmptyCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        page.next_cursor = ""
        if call.era == STATELESS:
            # In the stateless era "" is a legal cursor: remember where it leads.
            call.state.empty_cursor = page.following or Cursor(page.here.page + 1, page.total)


# -- eras -------------------------------------------------------------------------------------------


class _Refusing(Effect[Any]):
    """A fault answered with a refusal before the request runs."""

    def refusal(self, state: ServerState, record: Record) -> Refusal:
        raise NotImplementedError

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await turn.refuse(self.refusal(state, turn.record))
        return True


@handles(faults.DiscoverError)
class _DiscoverError(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        fault = self.fault
        return Refusal(fault.status, fault.code, fault.message, fault.data)

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        record = turn.record
        if record.era == HANDSHAKE and record.rpc_method != "server/discover":
            return False  # a handshake-era server has only the probe to refuse
        return await super().before(turn, state, session)


@handles(faults.HeaderMismatch)
class _HeaderMismatch(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return mismatch(f"{self.fault.header} header does not match the request body")


@handles(faults.UnsupportedVersion)
class _UnsupportedVersion(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        supported = self.fault.supported
        return unsupported(state, record.protocol_version, list(supported) if supported is not None else None)


@handles(faults.MissingCapability)
class _MissingCapability(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return missing_capability(self.fault.capabilities)


@handles(faults.EraDowngrade)
class _EraDowngrade(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return Refusal(400, INVALID_REQUEST, LEGACY_REFUSAL, request_id=False)
