"""`BreakStream` in front of a real server: the upstream's SSE answer cut after some events, the rest kept by the
proxy for a GET with `Last-Event-ID` (the events carry ids of the proxy's own, whatever the upstream sent)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from mcp_testkit.proxy._turn import dumps

if TYPE_CHECKING:
    from mcp_testkit import faults
    from mcp_testkit.proxy._turn import ProxyTurn

__all__ = ["BrokenStreams"]

_KEPT_STREAMS = 256
"""How many broken streams the proxy keeps for a resume (the oldest forgotten first)."""


class BrokenStreams:
    """The streams a `BreakStream` cut, each as its framed events, by the prefix of their ids."""

    def __init__(self) -> None:
        self._frames: OrderedDict[str, list[bytes]] = OrderedDict()
        self._lock = threading.Lock()

    async def cut(self, fault: faults.BreakStream, turn: ProxyTurn, events: list[Any], answer: Any) -> None:
        """Send `after_events` of `events` with ids, then end the connection; keep the rest for a resume."""
        record = turn.record
        prefix = f"mcp-testkit-proxy-{record.seq}-"
        head = prefix.encode()
        frames = [b"event: message\nid: %s%d\ndata: %s\n\n" % (head, n, dumps(m)) for n, m in enumerate(events)]
        record.keep_response(dumps(answer))
        await turn.start_sse()
        shown = frames[: fault.after_events]
        for one in shown:
            await turn.chunk(one)
        if fault.retry_s is not None:
            await turn.chunk(b"retry: %d\n\n" % round(fault.retry_s * 1000))
        await turn.end_body()
        if fault.after_events:  # with no event sent, the client has no id to resume from
            with self._lock:
                self._frames[prefix] = frames
                while len(self._frames) > _KEPT_STREAMS:
                    self._frames.popitem(last=False)
        count = len(shown)
        record.error = f"SSE stream broken by a fault after {count} event{'s' * (count != 1)}"

    async def resume(self, turn: ProxyTurn, last_event_id: str) -> bool:
        """Send the events after `last_event_id` of a stream cut here; False when it names none (forward the GET)."""
        prefix, _, number = last_event_id.rpartition("-")
        frames = self._frames.get(prefix + "-")
        if frames is None or not number.isdigit():
            return False
        turn.record.error = f"resumed a stream the proxy broke, after event {last_event_id}"
        await turn.start_sse()
        for one in frames[int(number) + 1 :]:
            await turn.chunk(one)
        await turn.end_sse()
        return True
