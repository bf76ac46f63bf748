"""Recording replays (pytest's record modes): the calls a cassette lacks are sent on to the live server, and
what it answered is added to the cassette written when the test ends."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit.cassettes._answers import replay_events
from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._format import Cassette
from mcp_testkit.upstream import Exchange

if TYPE_CHECKING:
    from mcp_testkit.cassettes._redact import Redactor
    from mcp_testkit.tools import ToolContext
    from mcp_testkit.upstream import UpstreamSession

__all__ = ["Forwarding"]


class Forwarding:
    """Where a recording replay sends the calls its cassette lacks, and the cassette it writes when done."""

    def __init__(
        self,
        session: UpstreamSession,
        redactor: Redactor,
        out: Path,
        base: Cassette | None,
    ) -> None:
        self.session = session
        self.redactor = redactor
        self.out = out
        self.base = base
        self._opened = base is None

    def call_sync(
        self, tool: str, arguments: Mapping[str, Any], relay: Callable[[Any], None], progress_token: Any = None
    ) -> RecordedCall:
        if not self._opened:
            self.session.open()
            self._opened = True
        exchange = self.session.call_tool(tool, arguments, on_event=relay, progress_token=progress_token)
        return _recorded(exchange)

    async def call(self, tool: str, arguments: Mapping[str, Any], context: ToolContext) -> RecordedCall:
        """Send the call on to the live server, relaying its progress (when the client asked for progress,
        so does the forwarded call) and log messages to the client as they come."""
        import anyio.from_thread
        import anyio.to_thread

        def relay(event: Any) -> None:
            if isinstance(event, dict) and event.get("method") in ("notifications/message", "notifications/progress"):
                anyio.from_thread.run(replay_events, _event_call(event, self.session.era), context)

        token = context.progress_token
        token = token if isinstance(token, (str, int)) and not isinstance(token, bool) else None
        call = await anyio.to_thread.run_sync(lambda: self.call_sync(tool, arguments, relay, token))
        # Relayed live above; the recorded events are kept in the cassette, not sent twice.
        return dataclasses.replace(call, events=())

    def recorded(self) -> list[Exchange]:
        """What this recording adds to the cassette: everything when recording anew, the calls otherwise."""
        exchanges = self.session.link.tape.exchanges
        if self.base is None:
            return exchanges
        return [exchange for exchange in exchanges if exchange.method == "tools/call"]

    def save(self) -> Cassette | None:
        from mcp_testkit.cassettes._redact import save

        added = self.recorded()
        if self.base is not None and not added:
            return None
        upstream = {"transport": "http", "url": getattr(self.session.link, "url", "")}
        if self.session.link.transport == "stdio":
            upstream = {"transport": "stdio", "command": list(getattr(self.session.link, "command", []))}
        fresh = Cassette.from_tape(self.session.link.tape, upstream)
        if self.base is not None:
            last_seq = max((e.seq for e in self.base.exchanges), default=0)
            last_at = max((e.at_ms for e in self.base.exchanges), default=0.0)
            renumbered = [
                dataclasses.replace(e, seq=last_seq + i, at_ms=round(last_at + e.at_ms, 1))
                for i, e in enumerate(added, start=1)
            ]
            fresh = dataclasses.replace(
                self.base, exchanges=[*self.base.exchanges, *renumbered], recorded_at=fresh.recorded_at
            )
        return save(fresh, self.out, self.redactor)

    def close(self) -> None:
        self.session.close()


def _event_call(event: Mapping[str, Any], era: str) -> RecordedCall:
    """A live event as a recorded call of the upstream session's era, to be relayed as a replayed one is."""
    return RecordedCall(seq=0, tool="", arguments={}, result=None, error=None, era=era, events=(event,))


def _recorded(exchange: Exchange) -> RecordedCall:
    arguments = exchange.params.get("arguments")
    return RecordedCall(
        seq=exchange.seq,
        tool=str(exchange.params.get("name")),
        arguments=arguments if isinstance(arguments, dict) else {},
        result=exchange.result,
        error=exchange.rpc_error,
        era=exchange.era,
        events=tuple(exchange.events),
    )
