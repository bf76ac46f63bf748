"""P14 (for adapters declaring "tool_cache"): a bridge that caches its tool listing offers the current one once the
server said it changed (`notifications/tools/list_changed`) or its `ttlMs` has passed (2026-07-28), and checks an
approval against the listing the server gives now.

A change is told on a listing's own stream, or on the stream the bridge keeps for server messages where it opened
one: the session's GET stream in the handshake era (the server offers one in this property's examples), a
`subscriptions/listen` stream in 2026-07-28. A bridge never told is judged by the TTLs only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

_SERVER_TTLS = (0.0, 0.2, 0.5)
"""The server's `ttlMs` (2026-07-28), in fractions of the bridge's own cache TTL."""
_AGES = (0.1, 0.3, 0.6)
"""How far the cache's clock moves in one step, in fractions of the bridge's own cache TTL."""
_STEPS = ("connect", "change", "announce", "approve", "notify")
_NOTICE_S = 5.0
"""How long a bridge may take to offer the current tools once the server sent list_changed on its change stream:
a bound that only stops a check from waiting for ever, never a speed asked of the bridge."""
_OPENING_S = 1.0
"""How long a connected bridge is given to open its change stream (GET or listen) before a change; one opened later
(or never) makes the change a silent one for it, never a failure."""
_FIRST = ("a", "b")
"""The catalogue at the start of an example; each change adds a tool and drops the oldest, two tools on two pages."""


def _cases(facts: BridgeFacts) -> list[Inputs]:
    def case(server_ttl: float, *steps: Any) -> Inputs:
        return {"server_ttl": server_ttl, "steps": list(steps)}

    connect, change, announce = ("connect", 0.0), ("change", 0.0), ("announce", 0.0)
    advance = {age: ("advance", age) for age in _AGES}
    past = (advance[0.6], advance[0.6])  # past the bridge's own TTL: it lists again
    cases = [
        # list_changed on the listing's own stream: the pages read before it are stale.
        case(0.5, announce, connect, connect),
        case(0.5, connect, *past, announce, connect, connect),
        case(0.5, announce, connect, connect, change, *past, connect),
        # silent changes: a hit may serve the listing within the bridge's TTL, never past it
        case(0.5, connect, connect, change, connect),
        case(0.5, change, connect, advance[0.3], connect),
        case(0.5, connect, change, advance[0.6], connect, advance[0.6], connect),
        case(0.5, connect, *past, change, connect),
        case(0.5, connect, advance[0.3], connect, advance[0.6], change, connect, advance[0.3], connect),
    ]
    notify = ("notify", 0.0)
    cases += [
        # list_changed on the bridge's change stream (the handshake's GET stream, 2026-07-28's subscriptions/listen),
        # if it opened one: the tools it offers follow
        case(0.5, connect, notify, connect),
        case(0.5, connect, connect, notify, advance[0.3], connect, notify, notify, connect),
        case(0.5, connect, notify, notify, advance[0.6], connect),
    ]
    if _ERAS[facts.era].ttl_ms:
        cases += [
            case(0.0, connect, notify, connect),
            case(0.0, connect, connect, notify, connect),  # ttlMs 0: never served from the cache
            case(0.2, connect, change, advance[0.1], connect, advance[0.1], connect),  # past ttlMs, within its TTL
            case(0.5, connect, change, advance[0.3], connect, advance[0.3], connect),
        ]
    if "approvals" in facts.capabilities:
        cases.append(case(0.5, connect, ("approve", 0.0)))
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Approvals run as a declared case only: a gate names the tools listed at connect, which later steps change.
    kinds = [*_STEPS[:3], "notify"]
    step = st.tuples(st.sampled_from(kinds), st.just(0.0)) | st.tuples(st.just("advance"), st.sampled_from(_AGES))
    server_ttl = st.sampled_from(_SERVER_TTLS) if _ERAS[facts.era].ttl_ms else st.just(0.5)
    return {"server_ttl": server_ttl, "steps": st.lists(step, min_size=1, max_size=7)}


def _labels(inputs: Inputs) -> list[str]:
    names = {
        "announce": "list_changed",
        "change": "silent change",
        "approve": "approval after a removal",
        "notify": "list_changed on the change stream",
    }
    labels = {names.get(kind, kind) for kind, _ in inputs["steps"] if kind != "advance"}
    return sorted(labels | {f"ttlMs {inputs['server_ttl']:g} TTL"})


class _Catalogue:
    """The listings the server gave the bridge, on the cache's clock, and the server's TTL in seconds."""

    def __init__(self, h: ContractHarness, facts: BridgeFacts, server_ttl: float) -> None:
        self.h = h
        self.ttl = facts.cache_ttl_s or 0.0
        self.era_shape = _ERAS[facts.era]
        self.server_ttl = server_ttl * self.ttl if self.era_shape.ttl_ms else None
        self.changes = 0
        self.since = 0
        """The journal number of the last record before the latest connect: later listen streams are its own."""
        self.now = 0.0
        self.fresh: list[tuple[float, list[str]]] = []
        """The listings the bridge read and may still serve from its cache: when, and what they held."""
        for name in _FIRST:
            h.server.tool(name, returns="ok")

    def change(self, *, silently: bool) -> None:
        """Add a tool and drop the oldest: now, or announced on the stream of the next listing, which it interrupts."""
        self.changes += 1
        server = self.h.server
        new, gone = f"c{self.changes}", next(iter(server.tools))
        if silently:
            server.tool(new, returns="ok")
            server.remove_tool(gone)
        else:
            server.inject(faults.CatalogueChange(page=2, add=(new,), remove=(gone,)), times=1)

    def may_serve(self, offered: list[str]) -> bool:
        """Whether a cache hit may offer `offered`: a listing read within both TTLs, with no announced change since."""
        limit = self.ttl if self.server_ttl is None else min(self.ttl, self.server_ttl)
        return any(names == offered and self.now - at < limit for at, names in self.fresh)


async def _connect(h: ContractHarness, adapter: BridgeAdapter, catalogue: _Catalogue, index: int) -> bool:
    """Connect again and judge the tools offered; whether the bridge is connected now."""
    server = h.server
    mark = len(server.journal)
    fired = len(h.fired())
    outcome = await adapter.connect(h.url, {})
    listed = any(r.rpc_method == "tools/list" for r in server.journal.records[mark:])
    announced = len(h.fired()) > fired
    current = sorted(server.tools)
    if announced:
        catalogue.fresh.clear()  # the server said the listing changed: nothing read before may be served
    facts_: dict[str, Any] = {"connect": index, "outcome": outcome, "catalogue": current,
                              "clock": f"{catalogue.now:g} s (cache TTL {catalogue.ttl:g} s)"}
    if catalogue.server_ttl is not None:
        facts_["server ttlMs"] = f"{catalogue.server_ttl * 1000:g}"
    if outcome.kind != "ok":
        if announced:
            return False  # the listing was interrupted by list_changed: failing the connect offers nothing stale
        raise h.fail("the bridge could not connect to a healthy server", **facts_)
    offered = sorted(await adapter.list_tools())
    facts_["offered"] = offered
    if listed:
        if offered != current:
            why = "list_changed during its listing announced them stale" if announced else "it just read another"
            raise h.fail(f"the bridge offers tools the server no longer lists: {why}", **facts_)
        catalogue.fresh.append((catalogue.now, offered))
        return True
    if offered != current and not catalogue.may_serve(offered):
        if catalogue.server_ttl is not None and any(names == offered for _, names in catalogue.fresh):
            raise h.fail("a cache hit served a listing past the server's ttlMs", **facts_)
        raise h.fail("a cache hit served a listing the server announced as changed, or past its TTL", **facts_)
    return True


def _get_streams(server: Any, since: int) -> list[Any]:
    """The session GET streams opened since record `since` (without `Last-Event-ID`: not a resumption)."""
    return [
        record
        for record in server.journal.records
        if record.seq > since and record.http_method == "GET" and "last-event-id" not in record.headers
    ]


def _get_listening(server: Any, since: int) -> bool:
    """Whether a GET stream of a live session the server is streaming to is open."""
    streaming = {session.id for session in server.sessions.alive if session.outbox.streaming}
    return any(record.status == 200 and record.session_id in streaming for record in _get_streams(server, since))


def _has_session(server: Any, since: int) -> bool:
    """Whether the bridge opened a session since record `since`: a GET stream needs one, so a bridge that opened none
    since it connected (a cache hit) has none to open, and is not waited for."""
    return any(r.rpc_method == "initialize" and r.status == 200 for r in server.journal.records if r.seq > since)


def _listen_streams(server: Any, since: int) -> list[Any]:
    """The `subscriptions/listen` requests since record `since`."""
    return [record for record in server.journal.requests("subscriptions/listen") if record.seq > since]


def _listen_listening(server: Any, since: int) -> bool:
    """Whether an acknowledged listen stream that asked for tool changes is open (it has not ended)."""
    for record in _listen_streams(server, since):
        sent = record.response if isinstance(record.response, list) else []
        if record.error is None and sent and not any("id" in message for message in sent):
            honoured = (sent[0].get("params") or {}).get("notifications") or {}
            if honoured.get("toolsListChanged") is True:
                return True
    return False


@dataclass(frozen=True)
class _Era:
    """How a change of the tools reaches a bridge in one era: on which change stream, and whether the server's
    listings carry a `ttlMs` of their own."""

    stream: str
    """What the change stream is called, for a failure's message."""
    streams: Callable[[Any, int], list[Any]]
    """The journal's records of the change streams opened since record `since`: the current connection's (a closed
    connection's stream may look open until the server sees it end, and its notices reach nobody)."""
    listening: Callable[[Any, int], bool]
    """Whether a change stream of the current connection is open and told of tool changes."""
    may_stream: Callable[[Any, int], bool]
    """Whether the current connection could have a change stream at all."""
    ttl_ms: bool
    """Whether the server's listings carry `ttlMs` (2026-07-28)."""
    get_stream: bool
    """Whether the server offers a session GET stream (the next reset() ends it)."""


_ERAS = {
    HANDSHAKE: _Era("GET stream", _get_streams, _get_listening, _has_session, ttl_ms=False, get_stream=True),
    STATELESS: _Era(
        "subscriptions/listen stream",
        _listen_streams,
        _listen_listening,
        lambda server, since: True,
        ttl_ms=True,
        get_stream=False,
    ),
}


def _heard(server: Any, since: int, shape: _Era) -> int:
    """How many tools/list_changed the server sent on the current connection's change streams (the journal's record
    of a stream keeps what it carried; a listen stream carries them only when it asked for them)."""
    return sum(
        1
        for record in shape.streams(server, since)
        for message in (record.response if isinstance(record.response, list) else ())
        if isinstance(message, dict) and message.get("method") == "notifications/tools/list_changed"
    )


async def _notify(h: ContractHarness, adapter: BridgeAdapter, catalogue: _Catalogue, connected: bool) -> None:
    """Change the catalogue while the bridge is connected; when the server told the bridge on its change stream, the
    tools the bridge offers must become the current ones, and no listing read before may be served again.

    Judged over a socket only: the in-process transport (httpx2's ASGI transport) hands a response over whole, so no
    stream can reach a bridge there, and the change is a silent one. Only notices on the current connection's
    streams count as told (`_Era.streams`)."""
    import anyio

    server = h.server
    shape = catalogue.era_shape
    before = _heard(server, catalogue.since, shape)
    listening = False
    if connected and h.via == "socket" and shape.may_stream(server, catalogue.since):
        with anyio.move_on_after(_OPENING_S):  # a bridge opens its stream once connected, in a task of its own
            for _ in range(int(_OPENING_S * 1000)):
                if listening := shape.listening(server, catalogue.since):
                    break
                await anyio.sleep(0.01)
    catalogue.change(silently=True)
    if not listening:
        return  # nobody was told: a silent change
    current: list[str] = []
    offered: list[str] = []
    with anyio.move_on_after(_NOTICE_S):
        while True:
            # The catalogue as it is now: a pending CatalogueChange may fire on the listing the bridge reads for it.
            current = sorted(server.tools)
            offered = sorted(await adapter.list_tools())
            if offered == current and _heard(server, catalogue.since, shape) > before:
                break
            await anyio.sleep(0.01)
    if _heard(server, catalogue.since, shape) <= before:
        return  # the stream closed before it carried the change: nothing was announced to the bridge
    catalogue.fresh.clear()  # the server said the listing changed: nothing read before may be served
    if offered != current:
        raise h.fail(
            f"the server sent notifications/tools/list_changed on the bridge's {shape.stream}, and "
            f"{_NOTICE_S:g} s later the bridge still offers other tools than the server lists",
            catalogue=current,
            offered=offered,
        )
    catalogue.fresh.append((catalogue.now, offered))


async def _approve(h: ContractHarness, adapter: Any, catalogue: _Catalogue) -> None:
    """Pause a call of a listed tool, remove the tool at the server, approve: nothing may be sent."""
    server = h.server
    gated = list(server.tools)[-1]
    outcome = await adapter.call(gated, {})
    if outcome.kind != "approval_required":
        raise h.fail(f"a call of {gated!r}, gated for approval, was not paused", outcome=outcome)
    server.remove_tool(gated)
    mark = len(server.journal)
    approved = await adapter.approve(outcome.text)
    sent = [r for r in server.journal.records[mark:] if r.rpc_method == "tools/call" and r.tool == gated]
    if sent or approved.kind == "ok":
        raise h.fail(
            f"an approval was checked against a stale listing: {gated!r}, which the server no longer lists, was "
            "sent when approved",
            approved=approved,
            sent=", ".join(f"#{r.seq}" for r in sent) or "nothing",
        )


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    cached: Any = adapter
    cached.use_tool_cache()
    server.page_size = 1
    catalogue = _Catalogue(h, facts, inputs["server_ttl"])
    if catalogue.server_ttl is not None:
        server.cache_ttl_s = catalogue.server_ttl
    if catalogue.era_shape.get_stream:
        server.get_stream = True  # the stream a handshake-era bridge may hear changes on; the next reset() ends it
    steps = inputs["steps"]
    if any(kind == "approve" for kind, _ in steps):
        cached.require_approval(list(_FIRST))
    connects = 0
    connected = False
    for kind, value in steps:
        if kind == "advance":
            cached.advance_cache_clock(value * catalogue.ttl)
            catalogue.now += value * catalogue.ttl
        elif kind == "notify":
            await _notify(h, adapter, catalogue, connected)
        elif kind in ("change", "announce"):
            catalogue.change(silently=kind == "change")
        elif kind == "approve":
            if connects:
                await _approve(h, adapter, catalogue)
        else:
            connects += 1
            catalogue.since = server.journal.last.seq if len(server.journal) else 0
            connected = await _connect(h, adapter, catalogue, connects)


PROPERTY = Property(
    "P14",
    "A cached listing gives way to the current one: list_changed, ttlMs, approvals",
    "cached_listings_stay_fresh",
    "catalogue changes announced by `notifications/tools/list_changed` on a listing's stream or on the bridge's "
    "change stream (the handshake's GET stream, 2026-07-28's `subscriptions/listen`), and silent ones; the "
    "server's `ttlMs` (2026-07-28) shorter than the bridge's TTL, 0 included; approving a call of a tool removed "
    "since it was paused",
    _strategies,
    _cases,
    _labels,
    _check,
    requires="tool_cache",
    guarantee=(
        "A bridge that caches its tool listing offers the server's current tools once the server announced a "
        "change (`notifications/tools/list_changed`) or its listing's `ttlMs` (2026-07-28) has passed, and an "
        "approved call goes only to a tool the server lists now. Judged by the tools the bridge offers, not by "
        'whether a `tools/list` went out. Applies to adapters declaring `"tool_cache"`.'
    ),
    breaks="ignoring list_changed; caching past ttlMs; approving against the cached listing",
)
