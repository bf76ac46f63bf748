"""P18 (the stateless era's column: a bridge that speaks 2026-07-28): the bridge negotiates its era as the server's
answer allows. Against a server of the handshake era, whatever it answers the probe (`server/discover` refused with
-32600 or -32601, a 404 or 405, a 400 without a JSON-RPC body, a -32022 offering only handshake versions), it falls
back to `initialize` and works; it falls back only where the answer allows it (a -32022 offering 2026-07-28 or only
versions it does not speak is no handshake server's); where no version overlaps it fails naming the server's; one
connection speaks one era, and a session opened with `initialize` never carries a 2026-07-28 request.

The bridge is made to negotiate by itself (`Property.own_era`): an adapter that can be told its era is not told. A
bridge that never speaks 2026-07-28 falls back on the healthy server already, and has no verdict in this column.
Judged from the journal: which era each request was, which session it named, and what the bridge told its caller."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS, STATELESS_VERSION
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]

UNKNOWN = "2099-01-01"
"""A protocol version no bridge speaks: the one version of a server whose versions overlap none of the bridge's."""
_MOST_REQUESTS = 12
"""The most requests a connect may send to a server it cannot speak to: a bound on a probe that loops."""

OLD = "old"
"""A server of the handshake era: stateless requests refused as such a server refuses them (400, -32600)."""
BOTH = "both"
"""A server of both eras whose probe is refused once with a -32022 offering 2026-07-28: no reason to fall back."""
NONE = "none"
"""A server whose one version is `UNKNOWN`: every stateless request -32022, every `initialize` -32602."""
CLOSED = "closed"
"""A handshake-era server behind something that closes the connection of every probe: no answer to go by."""

_PROBE_ANSWERS: dict[str, tuple[str, Any]] = {
    "-32600": (OLD, faults.DiscoverError()),
    "-32601": (OLD, faults.DiscoverError(400, -32601, "Method not found")),
    "404": (OLD, faults.DiscoverError(404, None)),
    "405": (OLD, faults.DiscoverError(405, None)),
    "400 without a body": (OLD, faults.DiscoverError(400, None)),
    "-32022 offering 2025-11-25": (OLD, faults.UnsupportedVersion(supported=("2025-11-25",))),
    "connection closed": (CLOSED, faults.Drop()),
    "-32022 offering 2026-07-28, once": (BOTH, faults.UnsupportedVersion(supported=(STATELESS_VERSION,))),
    f"-32022 offering {UNKNOWN}": (NONE, faults.UnsupportedVersion(supported=(UNKNOWN,))),
}
"""How the server answers `server/discover`, by name: the kind of server it is, and the fault that answers so."""


def _cases(facts: BridgeFacts) -> list[Inputs]:
    return [{"probe": probe, "calls": 1} for probe in _PROBE_ANSWERS]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {"probe": st.sampled_from(list(_PROBE_ANSWERS)), "calls": st.integers(1, 3)}


def _labels(inputs: Inputs) -> list[str]:
    return [f"probe answered {inputs['probe']}"]


def _script(server: Any, probe: str) -> str:
    """Make the server the kind the probe's answer says; the kind."""
    kind, fault = _PROBE_ANSWERS[probe]
    server.tool("read", description="a read", read_only=True, returns="ok")
    if kind == BOTH:
        server.inject(fault, method="server/discover", times=1)
        return kind
    server.inject(fault, method="server/discover", times=None)
    if kind in (OLD, CLOSED):
        server.inject(faults.EraDowngrade())  # every other stateless request refused as a handshake server does
    elif kind == NONE:
        server.inject(faults.UnsupportedVersion(supported=(UNKNOWN,)), method=None, era=STATELESS, times=None)
        refusal = faults.ProtocolError(
            -32602,
            f"Unsupported protocol version: this server speaks {UNKNOWN}",
            {"supported": [UNKNOWN]},
        )
        server.inject(refusal, method="initialize", times=None)
    return kind


def _told(outcome: Any) -> str:
    """Everything the caller is told by a failed outcome: its text, and its error's with the errors grouped in it (an
    `ExceptionGroup` of a task group) or chained to it, which an application reads without parsing the wire."""
    seen: list[str] = [str(outcome)]
    pending = [outcome.error] if outcome.error is not None else []
    while pending and len(seen) < 50:
        error = pending.pop()
        seen.append(f"{type(error).__name__}: {error}")
        pending += list(getattr(error, "exceptions", ()) or ())
        pending += [e for e in (error.__cause__, error.__context__) if e is not None]
    return "\n".join(seen)


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    kind = _script(server, inputs["probe"])
    connected = await adapter.connect(h.url, {})
    outcomes = [f"connect: {connected}"]
    if connected.kind == "ok":
        for _ in range(inputs["calls"]):
            outcomes.append(f"read: {await adapter.call('read', {})}")
    records = list(server.journal)
    facts_: dict[str, Any] = {"probe answered": inputs["probe"], "outcomes": "; ".join(outcomes)}
    initialized = {r.session_id for r in records if r.rpc_method == "initialize" and r.status == 200 and r.session_id}
    mixed = [r for r in records if r.era == STATELESS and r.headers.get("mcp-session-id") in initialized]
    if mixed:
        raise h.fail(
            f"#{mixed[0].seq} {mixed[0].rpc_method} was a 2026-07-28 request on a session the bridge opened with "
            "initialize: it mixed the eras in one session",
            **facts_,
        )
    fell_back = [r for r in records if r.rpc_method == "initialize"]
    if fell_back and kind in (BOTH, NONE):
        why = (
            f"the probe's -32022 offered {STATELESS_VERSION}, the version it asked for"
            if kind == BOTH
            else f"the probe's -32022 offered only {UNKNOWN}, no handshake-era version"
        )
        raise h.fail(f"the bridge fell back to initialize (#{fell_back[0].seq}) although {why}", **facts_)
    if kind == NONE:
        if connected.kind == "ok":
            raise h.fail(f"the bridge reported a connect to a server that speaks only {UNKNOWN}", **facts_)
        if UNKNOWN not in _told(connected):
            raise h.fail(
                f"no version overlaps, and the bridge's error does not name the server's ({UNKNOWN})", **facts_
            )
        if len(records) > _MOST_REQUESTS:
            raise h.fail(f"the bridge sent {len(records)} requests to a server it cannot speak to", **facts_)
        return
    if connected.kind != "ok":
        if kind == CLOSED:
            return  # no answer to go by: failing the connect is as right as falling back
        raise h.fail(
            "the bridge could not connect: the server speaks "
            + ("the handshake era, as its answer to the probe says" if kind == OLD else "2026-07-28 and answers it"),
            **facts_,
        )
    work = [r for r in records if r.rpc_method in ("tools/list", "tools/call") and r.error is None and r.status == 200]
    spoken = {str(r.era) for r in work}
    if len(spoken) > 1:
        raise h.fail("one connection listed and called in both eras", **facts_, eras=", ".join(sorted(spoken)))
    wanted = HANDSHAKE if kind in (OLD, CLOSED) else STATELESS
    if spoken != {wanted} or server.executions("read") != inputs["calls"]:
        raise h.fail(
            f"after the probe the bridge's listing and calls did not all run in the {wanted} era, once each",
            **facts_,
            spoken=", ".join(sorted(spoken)) or "nothing",
            runs=server.executions("read"),
        )


PROPERTY = Property(
    "P18",
    "The era is negotiated as the server's answer allows, and never mixed",
    "era_negotiation",
    "a handshake-era server answering the probe with -32600, -32601, 404, 405, a 400 without a body, a -32022 "
    "offering 2025-11-25, or closing the connection; a -32022 offering 2026-07-28 once; no version in common",
    _strategies,
    _cases,
    _labels,
    _check,
    eras=(STATELESS,),
    own_era=True,
    guarantee=(
        "A bridge that speaks 2026-07-28 falls back to `initialize` where the server's answer to `server/discover` "
        "says it is of the handshake era, and then works; it does not fall back where the answer offers 2026-07-28 "
        "or only versions it does not speak; where no version overlaps it fails naming the server's versions; one "
        "connection speaks one era, and no 2026-07-28 request goes to a session opened with `initialize`. Judged "
        "in the stateless column, with the bridge negotiating by itself."
    ),
    breaks="no fallback from a 404, 405 or -32601 probe; falling back on any error; mixing eras in a session",
)
