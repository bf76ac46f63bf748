"""The proxy's own effects, for faults whose effect needs what the upstream keeps: its sessions and its pages.

`Sessions` remembers the upstream sessions the proxy saw open and those a fault lost (a lost one is answered 404
by the proxy from then on, never forwarded); the page effects reshape a `tools/list` page the upstream answered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcp_testkit import faults

if TYPE_CHECKING:
    from mcp_testkit.proxy._streams import BrokenStreams
    from mcp_testkit.proxy._turn import Held, ProxyTurn

__all__ = ["OWN", "SESSION_NOT_FOUND", "Forwarding", "OwnEffect", "Pages", "Sessions", "own_effect"]

SESSION_NOT_FOUND = "Session not found"
_LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
_BOUND = 4096
"""How many sessions and cursors the proxy remembers (the oldest forgotten first)."""


class Sessions:
    """The upstream sessions seen through the proxy, and those a fault lost (with the status they now get).

    A session lost here is still open upstream: it waits in `ending` until the proxy DELETEs it there.
    """

    def __init__(self) -> None:
        self.alive: dict[str, str | None] = {}
        """Each session open upstream, with the protocol version its `initialize` asked for."""
        self.lost: dict[str, int] = {}
        self.expiring: dict[str, int] = {}
        self.ending: dict[str, str | None] = {}
        """Sessions lost by a fault that the proxy has yet to DELETE upstream, with their versions."""
        self._lock = threading.Lock()

    def opened(self, session_id: str, version: str | None = None) -> None:
        with self._lock:
            self.alive[session_id] = version
            while len(self.alive) > _BOUND:
                del self.alive[next(iter(self.alive))]

    def ended(self, session_id: str) -> None:
        """The client ended the session itself (a DELETE the upstream accepted)."""
        with self._lock:
            self.alive.pop(session_id, None)
            self.expiring.pop(session_id, None)

    def lose(self, session_id: str, status: int = 404) -> None:
        with self._lock:
            if session_id not in self.lost:
                self.ending[session_id] = self.alive.get(session_id)
            self.alive.pop(session_id, None)
            self.expiring.pop(session_id, None)
            self.lost[session_id] = status
            while len(self.lost) > _BOUND:
                del self.lost[next(iter(self.lost))]

    def to_end(self) -> dict[str, str | None]:
        """The lost sessions to DELETE upstream now (each handed out once)."""
        with self._lock:
            ending, self.ending = self.ending, {}
        return ending

    def open_ones(self) -> dict[str, str | None]:
        """Every session still open upstream (when the proxy stops), each handed out once."""
        with self._lock:
            alive, self.alive = self.alive, {}
            ending, self.ending = self.ending, {}
        return {**ending, **alive}

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


class Pages:
    """Which page of a `tools/list` walk a cursor leads to, and the tools seen on its pages, learnt from the
    upstream's answers: the proxy knows only the part of the catalogue that passed through it."""

    def __init__(self) -> None:
        self._pages: dict[str, int] = {}
        self._tools: dict[str, Any] = {}
        self.first: Any = None
        """The catalogue's first tool, from the last first page the upstream answered (None before one did)."""
        self.empty: str | None = None
        """The cursor an `EmptyCursor` replaced by "": where a stateless walk sending "" back is led."""

    def page_of(self, params: Any) -> int | None:
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if cursor is None:
            return 1
        return self._pages.get(cursor) if isinstance(cursor, str) else None

    def tool(self, name: str) -> Any:
        """The definition of tool `name` as a page of the upstream's last listed it, or None if none did."""
        return self._tools.get(name)

    def learn(self, page: int | None, answer: Any) -> None:
        result = answer.get("result") if isinstance(answer, dict) else None
        if page is None or not isinstance(result, dict):
            return
        cursor = result.get("nextCursor")
        if isinstance(cursor, str) and cursor:
            self._pages[cursor] = page + 1
            while len(self._pages) > _BOUND:
                del self._pages[next(iter(self._pages))]
        tools = result.get("tools")
        if not isinstance(tools, list):
            return
        listed = [tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)]
        if page == 1:
            self.first = listed[0] if listed and listed[0] is tools[0] else None
        for tool in listed:
            self._tools.pop(tool["name"], None)
            self._tools[tool["name"]] = tool
        while len(self._tools) > _BOUND:
            del self._tools[next(iter(self._tools))]


class Forwarding(Protocol):
    """One request on its way through the proxy, as an effect of the proxy's own acts on it (`_endpoint.Forwarding`)."""

    turn: ProxyTurn
    sessions: Sessions
    pages: Pages
    broken: BrokenStreams

    async def through(self) -> None:
        """Forward the request; stream the answer back."""

    async def held(self) -> Held:
        """Forward the request; the whole answer, held back."""
        ...

    async def pass_on(self, held: Held) -> None:
        """Send a held answer on as the upstream sent it."""

    async def refuse(self, status: int) -> None:
        """Answer `status` with 'Session not found', forwarding nothing."""

    def unchanged(self) -> None:
        """The fault found nothing to change in the answer: the journal says no fault hit it, its rule stays due."""


class OwnEffect:
    """What a fault does in front of a real server when its effect needs the upstream's sessions or pages."""

    def __init__(self, fault: Any) -> None:
        self.fault = fault

    async def act(self, go: Forwarding) -> None:
        raise NotImplementedError


OWN: dict[type[faults.Fault], type[OwnEffect]] = {}
"""The proxy's own effect of each fault class that has one (the others are the server's, `server/_effects/`)."""


def _own(*kinds: type[faults.Fault]) -> Callable[[type[OwnEffect]], type[OwnEffect]]:
    def register(effect: type[OwnEffect]) -> type[OwnEffect]:
        OWN.update(dict.fromkeys(kinds, effect))
        return effect

    return register


def own_effect(fault: faults.Fault) -> OwnEffect | None:
    """The proxy's own effect of `fault`, or None when the server's effect applies."""
    effect = next((OWN[kind] for kind in type(fault).__mro__ if kind in OWN), None)
    return None if effect is None else effect(fault)


@_own(faults.LoseSession)
class _LoseSession(OwnEffect):
    async def act(self, go: Forwarding) -> None:
        session = go.turn.record.session_id
        if session is not None:
            go.sessions.lose(session)
            await go.refuse(404)
            return
        held = await go.held()  # initialize: the session it opens is lost as soon as it opens
        opened = held.header(b"mcp-session-id")
        if opened is not None:
            go.sessions.lose(opened)
        await go.pass_on(held)


@_own(faults.Restart)
class _Restart(OwnEffect):
    async def act(self, go: Forwarding) -> None:
        status = self.fault.unknown_session_status
        go.sessions.lose_all(status)
        session = go.turn.record.session_id
        if session is not None:
            go.sessions.lose(session, status)
            await go.refuse(status)
            return
        await go.through()


@_own(faults.ExpireSession)
class _ExpireSession(OwnEffect):
    async def act(self, go: Forwarding) -> None:
        session = go.turn.record.session_id
        if session is not None:
            go.sessions.expire(session, self.fault.after_requests)
        await go.through()


class _Answered(OwnEffect):
    """An effect on the upstream's answer (held back): an error or a missing answer passes on untouched, and the
    fault did not fire on it."""

    async def act(self, go: Forwarding) -> None:
        held = await go.held()
        answer, others = held.split(go.turn.record.rpc_id)
        go.turn.session_header = [(k, v) for k, v in held.headers if k == b"mcp-session-id"]
        if answer is None or held.status != 200:
            go.unchanged()
            await go.pass_on(held)
            return
        await self.shape(go, held, answer, others)

    async def shape(self, go: Forwarding, held: Held, answer: Any, others: list[Any]) -> None:
        raise NotImplementedError


@_own(faults.BreakStream)
class _BreakStream(_Answered):
    async def shape(self, go: Forwarding, held: Held, answer: Any, others: list[Any]) -> None:
        await go.broken.cut(self.fault, go.turn, [*others, answer], answer)


class _Page(_Answered):
    """A `tools/list` page reshaped: `reshaped` gives the page and the messages sent before it, or None when the
    fault finds nothing to change on this page (it passes on as the upstream sent it, and the fault did not fire)."""

    async def shape(self, go: Forwarding, held: Held, answer: Any, others: list[Any]) -> None:
        go.pages.learn(go.pages.page_of(go.turn.record.params), answer)
        result = answer.get("result") if isinstance(answer, dict) else None
        shaped = None
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            shaped = self.reshaped(go, dict(result), others)
        if shaped is None:
            go.unchanged()
            await go.pass_on(held)
            return
        page, before = shaped
        await go.turn.answer(200, before, {**answer, "result": page}, sse=held.sse or bool(before))

    def reshaped(self, go: Forwarding, result: dict[str, Any], others: list[Any]) -> tuple[Any, list[Any]] | None:
        raise NotImplementedError


@_own(faults.DuplicateTool)
class _DuplicateTool(_Page):
    """The tool it repeats is one a page of the upstream's listed through the proxy (`Pages`): one it has not seen
    yet (the named tool, or the first page's first) leaves the page as it was."""

    def reshaped(self, go: Forwarding, result: dict[str, Any], others: list[Any]) -> tuple[Any, list[Any]] | None:
        repeated = self.fault.repeated(go.pages.tool, go.pages.first)
        if repeated is None:
            return None
        return {**result, "tools": [*result["tools"], repeated]}, others


@_own(faults.EmptyCursor)
class _EmptyCursor(_Page):
    def reshaped(self, go: Forwarding, result: dict[str, Any], others: list[Any]) -> tuple[Any, list[Any]] | None:
        real = result.get("nextCursor")
        if real == "":
            return None  # the upstream's own page says "" already
        go.pages.empty = real if isinstance(real, str) and real else None
        return {**result, "nextCursor": ""}, others


@_own(faults.ListChanged)
class _ListChanged(_Page):
    def reshaped(self, go: Forwarding, result: dict[str, Any], others: list[Any]) -> tuple[Any, list[Any]] | None:
        return result, [dict(_LIST_CHANGED), *others]
