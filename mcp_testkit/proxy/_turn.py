"""One HTTP exchange as the proxy answers it: the turn a fault's effect acts on (the server's `HttpTurn`), and the
upstream's answer held back when a fault needs to see it before the client does.

Every byte the client gets goes through `ProxyTurn.send`: the one place a wrapper of the ASGI `send` (byte-level
faults) applies, whether the answer is the upstream's passed through (`pass_on`) or one a fault made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.answer import JSON, SSE, Answer
from mcp_testkit._wire.connection import SocketWire
from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge
from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.journal import Record
from mcp_testkit.proxy._forward import UPSTREAM_KEY

if TYPE_CHECKING:
    from mcp_testkit.server.effects import Effect

__all__ = ["NOTE_KEY", "Held", "ProxyTurn", "dumps", "frame"]

NOTE_KEY = "mcp_testkit.note"
"""The key of an answer's last body message holding what the upstream's link saw go wrong besides the answer (a
stdio server's process that exited, lines on its stdout that are not JSON-RPC): the endpoint journals it as the
record's `error`. ASGI servers ignore keys they do not know."""


def dumps(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def frame(data: bytes) -> bytes:
    """One SSE `message` event carrying `data` (the proxy's own events carry no id)."""
    return b"event: message\ndata: %s\n\n" % data


def decode(data: bytes) -> Any:
    try:
        return strict_loads(data, "answer") if data else None
    except JsonError:
        return None


@dataclass(eq=False)
class Held:
    """The upstream's whole answer to one request, held back for a fault: status, headers, and its messages."""

    status: int = 0
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    ended: bool = False
    upstream: str | None = None
    """What became of the request upstream when the forwarder answered itself (`_forward.UPSTREAM_KEY`), else None."""

    async def send(self, message: Any) -> None:
        self.upstream = message.get(UPSTREAM_KEY, self.upstream)
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            self.chunks.append(message.get("body", b""))
            self.ended = not message.get("more_body", False)

    @property
    def sse(self) -> bool:
        return any(k == b"content-type" and v.startswith(SSE) for k, v in self.headers)

    def header(self, name: bytes) -> str | None:
        return next((v.decode("latin-1") for k, v in self.headers if k == name), None)

    def messages(self) -> list[Any]:
        """Every JSON-RPC message of the answer, in order (one for a JSON body)."""
        body = b"".join(self.chunks)
        if not self.sse:
            decoded = decode(body)
            return [] if decoded is None else [decoded]
        try:
            events = SseDecoder().feed(body)
        except SseEventTooLarge:
            return []
        return [m for m in (decode(e.data.encode()) for e in events if e.data) if m is not None]

    def split(self, request_id: Any) -> tuple[Any, list[Any]]:
        """The answer to `request_id`, and the other messages sent before it."""
        answer, others = None, []
        for message in self.messages():
            answers = isinstance(message, dict) and "method" not in message and message.get("id") == request_id
            if answer is None and answers:
                answer = message
            else:
                others.append(message)
        return answer, others


class ProxyTurn(Answer[Record]):
    """What a fault may do to one exchange of the proxy (`server.effects.HttpTurn`), and the journal's record of it;
    `Answer` frames what the proxy says itself, `pass_on` sends what the upstream said."""

    __slots__ = ()

    dumps = staticmethod(dumps)

    async def pass_on(self, message: Any) -> None:
        """Send one ASGI message of the upstream's answer on to the client, noting its status."""
        if message["type"] == "http.response.start":
            self.started = True
            self.record.status = message["status"]
        await self.send(message)

    def shape(self, effect: Effect[Any]) -> None:
        """Let a fault of the answer's bytes (`Effect.wrap_send`) shape every write of this turn, as the fake's do."""
        self.send = effect.wrap_send(self.send, SocketWire(self))

    def frame(self, state: Any, data: bytes) -> bytes:
        return frame(data)

    async def answer(self, status: int, messages: list[Any], answer: Any, *, sse: bool) -> None:
        """Send `answer` (after `messages`, as SSE) the way an upstream would have."""
        if answer is not None:
            self.record.keep_response(dumps(answer))
        if not sse:
            await self.raw(status, b"" if answer is None else dumps(answer), JSON)
            return
        await self.start_sse()
        for message in [*messages, answer]:
            if message is not None:
                await self.chunk(frame(dumps(message)))
        await self.end_sse()
