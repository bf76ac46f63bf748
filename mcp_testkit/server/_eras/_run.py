"""What both eras do with a request they take: meet its fault (`faulted`), choose JSON or SSE (`sse_chosen`), and
run it through dispatch and frame its answer, the fault's effect applied afterwards (`answer`).

Shared by `_handshake.py` and `_stateless.py`, each of which gives what differs: the stream opened before the
request runs, and how the response is settled (its HTTP status).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.connection import SocketWire
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.server._dispatch._messages import INTERNAL_ERROR, error_response
from mcp_testkit.server._dispatch._protocol import CANCELLED, Call, dispatch
from mcp_testkit.server._effects import effect_of
from mcp_testkit.server._eras._referee import arrived, left

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._effects import Effect
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["answer", "faulted", "sse_chosen"]


async def faulted(
    state: ServerState, out: Response, fault: faults.Fault, session: Session | None, *, request: bool = True
) -> tuple[Effect[Any] | None, bool]:
    """The effect of the fault that hit this request, after its before-dispatch phase; True when that answered it.

    A fault of another era than the request's is answered as misplaced, loudly, to the client and in `check()`.
    """
    record = out.record
    record.fault = fault
    if request and record.rpc_method == "tools/call":
        # The ledger's answer for a faulted call: False unless the handler runs (dispatch says True).
        record.executed = False
    era = record.era or HANDSHAKE
    if era not in fault.eras:
        reason = faults.misplaced(fault, era)
        state.errors.append(faults.MisplacedFault(reason))
        record.error = reason
        await out.json(500, error_response(record.rpc_id, INTERNAL_ERROR, f"mcp-testkit: {reason}"))
        return None, True
    effect = effect_of(fault)
    assert effect is not None
    out.send = effect.wrap_send(out.send, SocketWire(out))
    return effect, await effect.before(out, state, session)


def _mode(state: ServerState, record: Record) -> str:
    mode = state.response_mode
    return mode(record) if callable(mode) else mode  # type: ignore[no-any-return]


def sse_chosen(state: ServerState, record: Record, effect: Effect[Any] | None, session: Session | None) -> bool:
    """Whether the answer goes as SSE: as the fault wants, else as the server's response mode says."""
    if effect is not None:
        chosen = effect.sse(session)
        if chosen is not None:
            return chosen
    return _mode(state, record) == "sse"


_ASKING = frozenset({"tools/call", "prompts/get"})
"""The requests whose handlers may ask the client for input (`server/_dispatch/_input.py`)."""


async def _to_client(state: ServerState, out: Response, message: dict[str, Any]) -> None:
    """Send a server-to-client request on the request's own stream, switching its answer to SSE if it was JSON."""
    await out.start_sse()
    await out.event(state, message)


async def answer(
    state: ServerState,
    message: dict[str, Any],
    out: Response,
    call: Call,
    effect: Effect[Any] | None,
    *,
    open_stream: Callable[[ServerState, Response, Call, Effect[Any] | None], Awaitable[None]] | None = None,
    settle: Callable[[Any], int] | None = None,
) -> None:
    """Run a request and frame its answer (JSON or SSE), applying what its fault does afterwards.

    The era gives `open_stream`, run before the request when the answer goes as SSE, and `settle`, which
    finishes the response as the era wants and gives its HTTP status (200 without one).
    """
    sse = sse_chosen(state, out.record, effect, call.session)
    if sse:

        async def notify(notification: dict[str, Any]) -> None:
            await out.start_sse()
            await out.event(state, notification)

        call.notify = notify
        if open_stream is not None:
            await open_stream(state, out, call, effect)
    if call.session is not None and out.record.rpc_method in _ASKING:
        call.to_client = functools.partial(_to_client, state, out)
    record = out.record
    response: Any = arrived(state, message, record, call.session)  # a refusal, under referee="refuse"
    try:
        if response is None:
            response = await dispatch(message, call)
    finally:
        left(state, record, call.session, response)
    sse = sse or out.streaming  # a tool that asked the client for input switched a JSON answer to SSE
    if effect is not None:
        await effect.after()
    status = 200 if settle is None else settle(response)
    if status != 200 and sse and not out.streaming and not (effect is not None and effect.shapes_answer):
        sse = False  # an error before any event: JSON with its status, so a 404 or 400 reaches the client
    if response is CANCELLED:
        # Nothing may be sent for a cancelled request; an SSE stream that ends empty says just that.
        await out.end_sse()
    elif effect is not None and await effect.send(out, state, status, response, sse):
        return
    elif sse:
        await out.last_event(state, response)
    else:
        await out.json(status, response)
