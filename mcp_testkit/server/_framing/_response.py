"""The fake's HTTP answer (`Response`): what `_wire.answer.Answer` frames, plus the fake's own, event ids and the
plan of a handshake-era stream (kept for replay, primed, broken), and the request's headers it answers.

Both eras answer through it (`_handshake.py`, `_stateless.py`), and the transport refuses through it before an
era is chosen (`_transport/_http.py`); written as bare ASGI because it sits on every request of every test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.answer import Answer
from mcp_testkit.journal import Record
from mcp_testkit.server._dispatch._messages import dumps
from mcp_testkit.server._framing._streams import StreamPlan, sse_frame
from mcp_testkit.server._state._events import StoredEvent

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive, Send
    from mcp_testkit._wire.headers import Headers
    from mcp_testkit.server._state import ServerState

__all__ = ["Response", "accepts", "header"]


_NO_BUFFERING = ((b"x-accel-buffering", b"no"),)
"""2026-07-28's SSE answers carry no event ids, and this header: so that no proxy holds the events back."""

header: Callable[[Headers, str], str | None] = dict.get
"""A request header by its lower-case name: `Headers` keeps names lower-case, so the transport and the eras,
which name headers in lower case, look them up directly (`Headers.get` lower-cases every name it is given)."""


def accepts(accept: str, wanted: str) -> bool:
    """Whether an Accept header's value lists `wanted` (or a wildcard that covers it)."""
    kind = wanted.split("/", 1)[0]
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in (wanted, "*/*", f"{kind}/*"):
            return True
    return False


class Response(Answer[Record]):
    """Sends one HTTP answer of the fake and writes what was sent into the record (`Answer` frames it)."""

    __slots__ = ("event_ids", "headers", "message", "parse_error", "plan")

    refusal_unran = True
    dumps = staticmethod(dumps)

    def __init__(self, send: Send, record: Record, headers: Headers, receive: Receive | None = None) -> None:
        Answer.__init__(self, send, record, receive)
        self.headers = headers
        """The request's headers (the record's): read with `header`, which skips the lower-casing of `Headers.get`."""
        self.event_ids = True
        """Whether SSE events carry an `id:` (the stateless era has no resumable streams, so none)."""
        self.message: Any = None
        """The decoded body; kept here rather than in the record, which keeps only the bytes."""
        self.parse_error: str | None = None
        self.plan: StreamPlan | None = None
        """For an SSE answer of the handshake era: events kept for resumption, priming, a scripted break."""

    async def start_sse(self) -> None:
        if self.streaming:
            return
        await self.open_sse(() if self.event_ids else _NO_BUFFERING)
        plan = self.plan
        if plan is not None:
            if plan.break_after == 0:
                await self._break(plan)
            if plan.prime:
                await self._emit(plan, plan.next_id(), b"", plan.retry_ms)

    def frame(self, state: ServerState, data: bytes) -> bytes:
        """One SSE `message` event carrying `data`, with an id where the era has them."""
        return sse_frame(state.event_ids() if self.event_ids else None, data)

    async def event(self, state: ServerState, message: Any, *, answer: bool = False) -> None:
        """Send one SSE event; `answer` marks the response to the request, which the record keeps."""
        data = dumps(message)
        if answer:
            self.record.keep_response(data)
        if self.plan is not None:
            await self._emit(self.plan, state.event_ids(), data, answer=answer)
            return
        await self.send({"type": "http.response.body", "body": self.frame(state, data), "more_body": True})

    async def last_event(self, state: ServerState, response: Any) -> None:
        """Send the answer as the SSE stream's last event and end the stream: one body message for both when
        no plan keeps or breaks the stream (the same bytes on the wire, one send fewer)."""
        if self.plan is not None:
            await self.start_sse()
            await self.event(state, response, answer=True)
            await self.end_sse()
            return
        await self.start_sse()
        data = dumps(response)
        self.record.keep_response(data)
        await self.send({"type": "http.response.body", "body": self.frame(state, data)})

    async def _emit(
        self, plan: StreamPlan, event_id: int, data: bytes, retry_ms: int | None = None, *, answer: bool = False
    ) -> None:
        """Keep the event for replay and send it, unless the stream's connection was broken already."""
        frame = sse_frame(event_id, data, retry_ms)
        plan.keep(StoredEvent(event_id, frame, data if answer else None))
        if plan.broken:
            return
        await self.send({"type": "http.response.body", "body": frame, "more_body": True})
        plan.sent += 1
        if plan.sent == plan.break_after:
            await self._break(plan)

    async def _break(self, plan: StreamPlan) -> None:
        """End the connection's response without ending the stream (a `BreakStream`), after a `retry:`."""
        plan.broken = True
        if plan.break_retry_ms is not None:
            retry = b"retry: %d\n\n" % plan.break_retry_ms
            await self.send({"type": "http.response.body", "body": retry, "more_body": True})
        await self.send({"type": "http.response.body", "body": b""})
        kept = "; its other events wait for a GET with Last-Event-ID" if plan.stream is not None else ""
        self.record.error = f"SSE stream broken by a fault after {plan.sent} event{'s' * (plan.sent != 1)}{kept}"

    async def end_sse(self) -> None:
        await self.start_sse()
        plan = self.plan
        if plan is not None:
            if plan.stream is not None:
                plan.stream.finish()
            if plan.broken:
                return
        await self.send({"type": "http.response.body", "body": b""})
