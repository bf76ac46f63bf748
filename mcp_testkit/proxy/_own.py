"""The proxy's own effects, for faults whose effect needs what the upstream keeps: its sessions and its pages.

`Sessions` remembers the upstream sessions the proxy saw open and those a fault lost (a lost one is answered 404
by the proxy from then on, never forwarded); the page effects reshape a `tools/list` page the upstream answered.
"""

from __future__ import annotations

import threading
from typing import Any

from mcp_testkit import faults

__all__ = ["SESSION_NOT_FOUND", "Pages", "Sessions", "reshape_page"]

SESSION_NOT_FOUND = "Session not found"
_BOUND = 4096
"""How many sessions and cursors the proxy remembers (the oldest forgotten first)."""


class Sessions:
    """The upstream sessions seen through the proxy, and those a fault lost (with the status they now get)."""

    def __init__(self) -> None:
        self.alive: dict[str, None] = {}
        self.lost: dict[str, int] = {}
        self.expiring: dict[str, int] = {}
        self._lock = threading.Lock()

    def opened(self, session_id: str) -> None:
        with self._lock:
            self.alive[session_id] = None
            while len(self.alive) > _BOUND:
                del self.alive[next(iter(self.alive))]

    def lose(self, session_id: str, status: int = 404) -> None:
        with self._lock:
            self.alive.pop(session_id, None)
            self.expiring.pop(session_id, None)
            self.lost[session_id] = status
            while len(self.lost) > _BOUND:
                del self.lost[next(iter(self.lost))]

    def lose_all(self, status: int) -> None:
        for session_id in list(self.alive):
            self.lose(session_id, status)

    def expire(self, session_id: str, after_requests: int) -> None:
        with self._lock:
            self.expiring[session_id] = after_requests

    def status_of(self, session_id: str | None) -> int | None:
        """The status a request on `session_id` gets from the proxy because a fault lost it, or None (forward it).

        Counts the request against a session an `ExpireSession` is running down.
        """
        if session_id is None:
            return None
        lost = self.lost.get(session_id)
        if lost is not None:
            return lost
        left = self.expiring.get(session_id)
        if left is None:
            return None
        if left <= 0:
            self.lose(session_id)
            return 404
        self.expiring[session_id] = left - 1
        return None

    def apply(self, fault: faults.Fault, session_id: str | None) -> int | None:
        """Apply a session fault to the request's session; the status to refuse the request with, or None."""
        if isinstance(fault, faults.Restart):
            self.lose_all(fault.unknown_session_status)
            if session_id is not None:
                self.lose(session_id, fault.unknown_session_status)
                return fault.unknown_session_status
            return None
        if session_id is None:
            return None  # initialize: the session it opens is lost as soon as it opens (see `opened_lost`)
        if isinstance(fault, faults.LoseSession):
            self.lose(session_id)
            return 404
        if isinstance(fault, faults.ExpireSession):
            self.expire(session_id, fault.after_requests)
        return None


class Pages:
    """Which page of a `tools/list` walk a cursor leads to, learnt from the upstream's answers."""

    def __init__(self) -> None:
        self._pages: dict[str, int] = {}
        self.empty: str | None = None
        """The cursor an `EmptyCursor` replaced by "": where a stateless walk sending "" back is led."""

    def page_of(self, params: Any) -> int | None:
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if cursor is None:
            return 1
        return self._pages.get(cursor) if isinstance(cursor, str) else None

    def learn(self, page: int | None, answer: Any) -> None:
        result = answer.get("result") if isinstance(answer, dict) else None
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if page is not None and isinstance(cursor, str) and cursor:
            self._pages[cursor] = page + 1
            while len(self._pages) > _BOUND:
                del self._pages[next(iter(self._pages))]


def reshape_page(fault: faults.Fault, answer: Any) -> Any:
    """The upstream's `tools/list` answer as `fault` reshapes it (a copy); unchanged when it is no page."""
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
        return answer
    result = dict(result)
    tools = list(result["tools"])
    if isinstance(fault, faults.DuplicateTool):
        named = [tool for tool in tools if isinstance(tool, dict) and tool.get("name") == fault.name]
        if fault.name is None or named:
            tools.extend((named or tools)[:1])
    elif isinstance(fault, faults.EmptyCursor):
        result["nextCursor"] = ""
    result["tools"] = tools
    return {**answer, "result": result}
